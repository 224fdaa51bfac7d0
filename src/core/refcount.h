// Intrusive reference counting for tensors, storage, nodes and contexts.
//
// Destruction is deferred through a per-thread list: dropping the last
// reference to the head of a long chain (tensor -> node -> saved tensor ->
// node ...) frees it iteratively, never recursively, so a graph of any depth
// is freed without growing the stack.
//
// Counts change without atomic read-modify-writes while one thread only
// has changed them. An atomic increment or decrement (a locked instruction)
// costs as much as the arithmetic of a small op, and every op changes
// several counts (its input's node, the node of the tensor it replaces, a
// saved tensor); in a scalar chain they took about 10 % of the time. So the
// first thread of the process to change a count (the owner) changes counts
// with a plain load and store, marked busy meanwhile. The first change by
// another thread ends that for good (refcount.cc, share_counts): it makes
// every thread pass a memory barrier (membarrier(2)), waits until the
// owner is not busy, and from then on every change of every thread is
// atomic. Where the system refuses the barrier, counts are atomic from the
// start.
#pragma once

#include <atomic>
#include <cstdint>
#include <utility>

#include "core/pool.h"

namespace ag {

namespace refcount_detail {

enum CountMode : int {
  kUnclaimed,  // no count changed yet
  kOwned,      // only the owner has changed counts: plain loads and stores
  kSharing,    // another thread is ending kOwned (share_counts)
  kShared,     // every change atomic
};
// Apart: the owner writes `busy` at every change, every thread reads `mode`.
struct alignas(64) ModeLine {
  std::atomic<int> mode{kUnclaimed};
};
struct alignas(64) BusyLine {
  std::atomic<bool> busy{false};
};
extern ModeLine g_mode;
extern BusyLine g_owner;
inline thread_local bool tl_owner = false;

// The current mode, for tests.
inline CountMode count_mode() noexcept { return static_cast<CountMode>(g_mode.mode.load(std::memory_order_acquire)); }

}  // namespace refcount_detail

class RefCounted : public PoolAllocated {
 public:
  RefCounted() = default;
  RefCounted(const RefCounted&) = delete;
  RefCounted& operator=(const RefCounted&) = delete;

  void retain() const noexcept { add_refs(this, 1); }
  // n references at once (a count kept elsewhere until now).
  void retain_n(int32_t n) const noexcept { add_refs(this, n); }
  void release() const noexcept {
    // The only owner frees without changing the count: nobody else can
    // take a reference then, unless a weak pointer (try_retain) exists.
    if (sole_owner()) {
      destroy(this);
      return;
    }
    if ((drop_ref(this) & kCountMask) == 1) destroy(this);
  }
  // Call, holding a reference, before storing a weak pointer to the object
  // (one that is turned into a reference with try_retain).
  void mark_weakly_referenced() const noexcept {
    settle_for_atomic();
    refs_.fetch_or(kWeakBit, std::memory_order_relaxed);
  }
  // True if the caller holds the only reference and no weak pointer exists:
  // then no other thread can reach the object. One compare: the weak bit
  // makes the word differ from 1.
  bool sole_owner() const noexcept { return refs_.load(std::memory_order_acquire) == 1; }
  // Adds a reference unless the count already reached zero (for weak
  // pointers; see mark_weakly_referenced).
  bool try_retain() const noexcept {
    settle_for_atomic();
    int32_t n = refs_.load(std::memory_order_relaxed);
    while ((n & kCountMask) > 0) {
      if (refs_.compare_exchange_weak(n, n + 1, std::memory_order_acq_rel)) return true;
    }
    return false;
  }
  int32_t use_count() const noexcept { return refs_.load(std::memory_order_acquire) & kCountMask; }

 protected:
  virtual ~RefCounted() = default;
  // For an object that shares one pool block with another (a new tensor and
  // its storage, core/tensor_impl.cc): set by its maker, and then the last
  // release calls dispose_in_place instead of delete.
  void set_in_shared_block() noexcept { in_shared_block_ = true; }
  bool in_shared_block() const noexcept { return in_shared_block_; }
  // Destroys the object and frees its memory, or leaves the block to the
  // object it shares it with.
  virtual void dispose_in_place() const noexcept {}
  // For an object kept whole after its last reference went, to be used
  // again (a spare tensor, core/tensor_impl.cc): one reference, as new.
  void revive_count() const noexcept {
    refs_.store(1, std::memory_order_relaxed);
    next_to_free_ = nullptr;
  }
  bool weakly_referenced() const noexcept { return (refs_.load(std::memory_order_relaxed) & kWeakBit) != 0; }

 private:
  // The changes of the count, plain or atomic (see the top of this file);
  // out of line, as small as the atomic instruction they replace at every
  // Ref's destruction. drop_ref returns the count before.
  static void add_refs(const RefCounted* obj, int32_t n) noexcept;
  static int32_t drop_ref(const RefCounted* obj) noexcept;
  // Before an atomic change that has no plain form (a weak pointer's): the
  // owner's atomic changes need nothing (no other thread changes counts
  // while they are owned); another thread's must share the counts first.
  static void settle_for_atomic() noexcept;
  static void destroy(const RefCounted* obj) noexcept;
  static void free_now(const RefCounted* obj) noexcept;
  // The reference count, and in kWeakBit whether a weak pointer exists (set
  // by holders of a reference, also several at once: hooks registered on
  // one node from two threads; never cleared).
  static constexpr int32_t kWeakBit = int32_t{1} << 30;
  static constexpr int32_t kCountMask = kWeakBit - 1;
  mutable std::atomic<int32_t> refs_{1};
  bool in_shared_block_ = false;  // in the padding after refs_
  // The next object in the thread's list of objects waiting to be freed.
  mutable const RefCounted* next_to_free_ = nullptr;
};

// Owning pointer to a RefCounted object.
template <class T>
class Ref {
 public:
  Ref() = default;
  Ref(std::nullptr_t) {}
  // Adopts a reference the caller already holds (e.g. from `new`).
  static Ref adopt(T* p) {
    Ref r;
    r.p_ = p;
    return r;
  }
  // Takes a new reference to p.
  static Ref share(T* p) {
    if (p) p->retain();
    return adopt(p);
  }
  Ref(const Ref& o) : p_(o.p_) {
    if (p_) p_->retain();
  }
  Ref(Ref&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  template <class U>
  Ref(Ref<U>&& o) noexcept : p_(o.detach()) {}
  template <class U>
  Ref(const Ref<U>& o) : p_(o.get()) {
    if (p_) p_->retain();
  }
  ~Ref() {
    if (p_) p_->release();
  }
  Ref& operator=(Ref o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }

  T* get() const { return p_; }
  T* operator->() const { return p_; }
  T& operator*() const { return *p_; }
  explicit operator bool() const { return p_ != nullptr; }
  // Gives up ownership without releasing.
  T* detach() {
    T* p = p_;
    p_ = nullptr;
    return p;
  }
  void reset() { *this = Ref(); }

 private:
  T* p_ = nullptr;
};

template <class T, class... Args>
Ref<T> make_ref(Args&&... args) {
  return Ref<T>::adopt(new T(std::forward<Args>(args)...));
}

}  // namespace ag
