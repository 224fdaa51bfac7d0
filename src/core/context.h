// Context: owns the task arena and the memory of its tensors. Everything that
// would otherwise be process-global lives here.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>

#include "core/allocator.h"
#include "core/handle.h"
#include "core/parallel.h"
#include "core/refcount.h"

namespace ag {

constexpr uint32_t kContextTag = 0xA6C0E7A1u;

class Context : public RefCounted, public HandleState<kContextTag> {
 public:
  // num_threads 0 means one per hardware thread; `host`: the host's
  // allocator for tensor data, if its alloc is set; `tasks`: the host's task
  // system, if set (then num_threads is its worker count and there is no
  // arena).
  explicit Context(int num_threads, const HostAllocator& host = HostAllocator(), const HostTasks& tasks = HostTasks());
  ~Context() override;

  int num_threads() const { return num_threads_; }
  // Threads that can really run chunks at once: num_threads capped to the
  // machine's hardware threads (the arena's size), or the host's workers.
  int concurrency() const { return concurrency_; }

  // ag's one parallel loop. Runs fn(begin, end) over [0, n) cut into
  // chunks of `chunk` elements, in parallel when the context has more than
  // one thread and there is more than one chunk, else inline on the calling
  // thread without touching the arena. The chunks never depend on the thread
  // count, so results do not either. Exceptions of fn reach the caller (the
  // one of the lowest chunk when several fail).
  template <class F>
  void parallel_chunks(int64_t n, int64_t chunk, F&& fn) {
    if (concurrency_ == 1 || n <= chunk) {
      for (int64_t b = 0; b < n; b += chunk) fn(b, b + chunk < n ? b + chunk : n);
      return;
    }
    parallel_impl(n, chunk, [](void* p, int64_t b, int64_t e) { (*static_cast<F*>(p))(b, e); }, &fn);
  }
  // The same over n elements of work class w, in equal chunks of at most
  // its grain (even_chunk, core/parallel.h): inline up to one grain.
  template <class F>
  void parallel_for(int64_t n, Work w, F&& fn) {
    parallel_chunks(n, even_chunk(n, w, concurrency_), std::forward<F>(fn));
  }
  // Keeps the workers of the arena awake (spinning, ready for the next
  // loop) until the matching release, e.g. for a backward pass; they sleep
  // again a moment after the last release. Nothing with a host's tasks.
  void hold_workers() noexcept;
  void release_workers() noexcept;
  class WorkersHeld {
   public:
    explicit WorkersHeld(Context* c) : c_(c) {
      if (c_) c_->hold_workers();
    }
    ~WorkersHeld() {
      if (c_) c_->release_workers();
    }
    WorkersHeld(const WorkersHeld&) = delete;
    WorkersHeld& operator=(const WorkersHeld&) = delete;

   private:
    Context* c_;
  };
  // Loops that went parallel (more than one chunk on a context of more than
  // one thread) since the context was created; for tests.
  uint64_t parallel_dispatches() const { return dispatches_.load(std::memory_order_relaxed); }

  // The references that tensor storage holds on its context: one per
  // storage, taken and dropped once per op. While the thread that created
  // the context (its owner) holds a handle to it, the owner's references are
  // counted with plain loads and stores, since an atomic read-modify-write
  // costs as much as a whole small op; other threads count atomically. The
  // release of the last handle folds the owner's count into the reference
  // count (end_owner_counting). retain_storage_ref returns whether the
  // reference is on the owner's side; pass it back to release_storage_ref,
  // on any thread. Both never fail.
  bool retain_storage_ref() noexcept {
    if (owner_ != 0 && owner_ == this_thread_id() && owner_update(+1)) return true;
    retain_shared();
    return false;
  }
  void release_storage_ref(bool owner_side) noexcept {
    if (owner_side && owner_ == this_thread_id() && owner_update(-1)) return;
    release_shared(owner_side);
  }
  // From ag_context_create, before the handle is handed out: the calling
  // thread becomes the owner. Does nothing where the system offers no
  // process-wide memory barrier (end_owner_counting needs it).
  void begin_owner_counting() noexcept;
  // From the release of the last handle, before its reference is dropped:
  // the owner's count joins the reference count, and every thread counts
  // atomically from then on.
  void end_owner_counting() noexcept;

  // Memory for tensor storage. Throws std::bad_alloc.
  void* allocate(size_t nbytes) { return allocator_.allocate(nbytes, this_thread_id()); }
  void deallocate(void* p, size_t nbytes) noexcept { allocator_.deallocate(p, nbytes, this_thread_id()); }
  CachingAllocator& allocator() { return allocator_; }
  // Data kept in a tensor's own block (Storage::make_in_block), counted.
  void note_block_data(size_t nbytes) { allocator_.note_block_data(nbytes, this_thread_id()); }
  void note_block_data_freed(size_t nbytes) noexcept { allocator_.note_block_data_freed(nbytes, this_thread_id()); }
  // Whether tensor data comes from the host's allocator (then none is inline).
  bool host_allocator() const { return allocator_.has_host(); }

  // The random generator's state: the Philox seed and the next free counter
  // block. Random ops reserve their blocks with reserve_random, which returns
  // the state they start from; concurrent reservations get disjoint blocks,
  // in arrival order. The lock keeps seed and offset consistent with each
  // other when a state is set meanwhile.
  struct RngState {
    uint64_t seed;
    uint64_t offset;
  };
  static constexpr uint64_t kDefaultSeed = 0x9E3779B97F4A7C15u;  // = AG_RNG_DEFAULT_SEED
  RngState rng_state() const {
    std::lock_guard<std::mutex> lock(rng_mutex_);
    return rng_;
  }
  void set_rng_state(RngState s) {
    std::lock_guard<std::mutex> lock(rng_mutex_);
    rng_ = s;
  }
  RngState reserve_random(uint64_t blocks) {
    std::lock_guard<std::mutex> lock(rng_mutex_);
    const RngState s = rng_;
    rng_.offset += blocks;
    return s;
  }
  // Anomaly mode: backward checks every gradient a node produces for NaN/Inf.
  bool anomaly_mode() const { return anomaly_mode_.load(std::memory_order_relaxed); }
  void set_anomaly_mode(bool on) { anomaly_mode_.store(on, std::memory_order_relaxed); }

 private:
  struct Arena;
  struct ArenaDeleter {
    void operator()(Arena* a) const noexcept;
  };
  static int default_threads();
  static std::unique_ptr<Arena, ArenaDeleter> make_arena(int threads);
  void parallel_impl(int64_t n, int64_t chunk, void (*fn)(void*, int64_t, int64_t), void* arg);

  enum : int { kShared, kOwnerCounting, kMerging };
  // Never 0; unique for the life of the process.
  static uint64_t this_thread_id() noexcept {
    thread_local uint64_t id = 0;
    if (id == 0) id = next_thread_id();
    return id;
  }
  static uint64_t next_thread_id() noexcept;
  // The owner's side of a storage reference, false (nothing done) once the
  // owner's counting has ended. The flag `owner_busy_` and the process-wide
  // barrier in end_owner_counting order this against the fold without an
  // atomic read-modify-write here: either the fold waits for the update to
  // finish or the update sees that counting ended.
  bool owner_update(int64_t delta) noexcept {
    owner_busy_.store(true, std::memory_order_relaxed);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    const bool counting = mode_.load(std::memory_order_relaxed) == kOwnerCounting;
    if (counting) owned_.store(owned_.load(std::memory_order_relaxed) + delta, std::memory_order_relaxed);
    owner_busy_.store(false, std::memory_order_release);
    return counting;
  }
  void retain_shared() noexcept;
  void release_shared(bool owner_side) noexcept;
  void wait_while_merging() const noexcept;

  int num_threads_;
  int concurrency_;
  uint32_t fp_mode_;  // the creating thread's FTZ/DAZ bits, for arena tasks
  HostTasks tasks_;
  std::unique_ptr<Arena, ArenaDeleter> arena_;  // none with the host's tasks
  CachingAllocator allocator_;
  mutable std::mutex rng_mutex_;
  RngState rng_{kDefaultSeed, 0};
  std::atomic<bool> anomaly_mode_{false};
  std::atomic<uint64_t> dispatches_{0};

  // Owner-side counting (see retain_storage_ref), last and after a gap: the
  // owner writes it on every op, other threads the reference count in the
  // object's first bytes. (No alignas: pool blocks are 16-byte aligned.)
  [[maybe_unused]] char gap_[64];
  uint64_t owner_ = 0;  // set before the context is shared, never changed
  std::atomic<int> mode_{kShared};
  std::atomic<bool> owner_busy_{false};
  std::atomic<int64_t> owned_{0};  // the owner's references (written by the owner only)
  // Owner-side references dropped by other threads, times 2; bit 0 set by
  // the fold, after which they count against the reference count instead.
  std::atomic<uint64_t> foreign_{0};
};

}  // namespace ag
