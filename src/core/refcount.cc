#include "core/refcount.h"

#include <pthread.h>

#include "core/process_barrier.h"
#include "core/spin_lock.h"

namespace ag {

namespace refcount_detail {

ModeLine g_mode;
BusyLine g_owner;

namespace {

// A fork's child has one thread, the forking one. Unless that is the owner
// of owned counts, nobody counts plainly there any more, a sharing thread
// does not exist to finish sharing, and an owner stopped while busy never
// finishes (the count it was changing keeps the parent's value).
void after_fork_in_child() noexcept {
  const int mode = g_mode.mode.load(std::memory_order_relaxed);
  if (mode == kSharing || (mode == kOwned && !tl_owner)) g_mode.mode.store(kShared, std::memory_order_relaxed);
  g_owner.busy.store(false, std::memory_order_relaxed);
}

// Ends kOwned: after the barrier the owner either has seen kSharing (its
// next change is atomic) or is seen busy here, and it finishes that one
// change at once; its plain stores are visible once it is seen not busy.
void share_counts() noexcept {
  int mode = kOwned;
  if (g_mode.mode.compare_exchange_strong(mode, kSharing, std::memory_order_seq_cst)) {
    process_barrier();
    spin_until([] { return !g_owner.busy.load(std::memory_order_acquire); });
    g_mode.mode.store(kShared, std::memory_order_release);
    return;
  }
  // Another thread is sharing: wait for it.
  spin_until([] { return g_mode.mode.load(std::memory_order_acquire) == kShared; });
}

inline bool plain_begin() noexcept;

// For a thread that is not the owner while counts are not yet shared: makes
// it the owner (true: the caller changes the count plainly, then calls
// plain_end) or shares the counts (false: atomic from now on).
[[gnu::noinline]] bool settle_counts() noexcept {
  int mode = g_mode.mode.load(std::memory_order_acquire);
  if (mode == kUnclaimed) {
    // The first change of a count in the process: its thread becomes the
    // owner, if the barrier that ends ownership is available.
    static const bool registered = [] {
      if (!register_process_barrier()) return false;
      pthread_atfork(nullptr, nullptr, after_fork_in_child);
      return true;
    }();
    const int want = registered ? kOwned : kShared;
    if (g_mode.mode.compare_exchange_strong(mode, want, std::memory_order_acq_rel)) {
      if (want == kShared) return false;
      tl_owner = true;
      return plain_begin();  // (another thread may be sharing already)
    }
    // Another thread claimed it (mode now tells which state).
  }
  if (mode == kShared) return false;
  share_counts();
  return false;
}

// True when the caller may change a count with a plain load and store (it
// is the owner and counts are owned); it then calls plain_end() right after.
inline bool plain_begin() noexcept {
  if (tl_owner) {
    g_owner.busy.store(true, std::memory_order_relaxed);
    // The barrier of share_counts orders this store before the load below
    // for the thread that shares: it sees busy, or this load sees kSharing.
    std::atomic_signal_fence(std::memory_order_seq_cst);
    if (g_mode.mode.load(std::memory_order_relaxed) == kOwned) return true;
    g_owner.busy.store(false, std::memory_order_release);
    tl_owner = false;  // for good: the mode never returns to kOwned
    return false;
  }
  if (g_mode.mode.load(std::memory_order_acquire) != kShared) [[unlikely]] return settle_counts();
  return false;
}
inline void plain_end() noexcept { g_owner.busy.store(false, std::memory_order_release); }

}  // namespace

}  // namespace refcount_detail

void RefCounted::add_refs(const RefCounted* obj, int32_t n) noexcept {
  if (refcount_detail::plain_begin()) {
    obj->refs_.store(obj->refs_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    refcount_detail::plain_end();
    return;
  }
  obj->refs_.fetch_add(n, std::memory_order_relaxed);
}

int32_t RefCounted::drop_ref(const RefCounted* obj) noexcept {
  if (refcount_detail::plain_begin()) {
    // A release store (a plain one on x86): a thread that later finds itself
    // the only holder (sole_owner) and frees the object sees everything
    // done before this.
    const int32_t before = obj->refs_.load(std::memory_order_relaxed);
    obj->refs_.store(before - 1, std::memory_order_release);
    refcount_detail::plain_end();
    return before;
  }
  return obj->refs_.fetch_sub(1, std::memory_order_acq_rel);
}

void RefCounted::settle_for_atomic() noexcept {
  if (refcount_detail::plain_begin()) refcount_detail::plain_end();
}

namespace {
// Plain thread-locals (no destructors), so that releases that happen while
// the thread or process exits still work. The objects waiting to be freed
// are linked through their own next_to_free_ field: deferring costs no
// allocation.
thread_local bool tl_draining = false;
thread_local const RefCounted* tl_pending = nullptr;
}  // namespace

void RefCounted::free_now(const RefCounted* obj) noexcept {
  if (obj->in_shared_block_) {
    obj->dispose_in_place();
  } else {
    delete obj;
  }
}

void RefCounted::destroy(const RefCounted* obj) noexcept {
  if (tl_draining) {
    obj->next_to_free_ = tl_pending;
    tl_pending = obj;
    return;
  }
  tl_draining = true;
  free_now(obj);
  while (const RefCounted* next = tl_pending) {
    tl_pending = next->next_to_free_;
    free_now(next);
  }
  tl_draining = false;
}

}  // namespace ag
