// Context: owns the task arena and the memory of its tensors. Everything that
// would otherwise be process-global lives here.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

#include "core/allocator.h"
#include "core/handle.h"
#include "core/refcount.h"

namespace ag {

constexpr uint32_t kContextTag = 0xA6C0E7A1u;

class Context : public RefCounted, public HandleState<kContextTag> {
 public:
  // num_threads 0 means one per hardware thread.
  explicit Context(int num_threads);
  ~Context() override;

  int num_threads() const { return num_threads_; }

  // Runs fn(begin, end) over [0, n) cut into chunks of `chunk` elements, in
  // parallel in the arena when the context has more than one thread and
  // there is more than one chunk, else inline. The chunks never depend on the
  // thread count, so results do not either.
  template <class F>
  void parallel_chunks(int64_t n, int64_t chunk, F&& fn) {
    if (num_threads_ == 1 || n <= chunk) {
      for (int64_t b = 0; b < n; b += chunk) fn(b, b + chunk < n ? b + chunk : n);
      return;
    }
    parallel_impl(n, chunk, [](void* p, int64_t b, int64_t e) { (*static_cast<F*>(p))(b, e); }, &fn);
  }

  // Memory for tensor storage. Throws std::bad_alloc.
  void* allocate(size_t nbytes) { return allocator_.allocate(nbytes); }
  void deallocate(void* p, size_t nbytes) noexcept { allocator_.deallocate(p, nbytes); }
  CachingAllocator& allocator() { return allocator_; }

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
  void parallel_impl(int64_t n, int64_t chunk, void (*fn)(void*, int64_t, int64_t), void* arg);

  int num_threads_;
  uint32_t fp_mode_;  // the creating thread's FTZ/DAZ bits, for arena tasks
  std::unique_ptr<Arena> arena_;
  CachingAllocator allocator_;
  mutable std::mutex rng_mutex_;
  RngState rng_{kDefaultSeed, 0};
  std::atomic<bool> anomaly_mode_{false};
};

}  // namespace ag
