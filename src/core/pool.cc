#include "core/pool.h"

#include <algorithm>
#include <new>

namespace ag {

#if defined(__SANITIZE_ADDRESS__) || defined(AG_NO_POOLS)
// Under AddressSanitizer every object gets its own allocation, so that a use
// after free is reported instead of hidden by reuse.
void* pool_alloc(size_t bytes) { return ::operator new(bytes); }
void pool_free(void* ptr, size_t) noexcept { ::operator delete(ptr); }
void pool_trim() noexcept {}
#else
namespace pool_detail {

namespace {

void release_all(ThreadPools& p) noexcept {
  for (size_t c = 0; c < kClasses; ++c) {
    while (p.head[c]) {
      FreeBlock* b = p.head[c];
      p.head[c] = b->next;
      ::operator delete(b);
    }
    p.count[c] = 0;
  }
}

// Empties the thread's lists at thread (or process) exit; constructed on the
// thread's first free into a list.
struct ThreadPoolsGuard {
  ~ThreadPoolsGuard() {
    tl_pools.gone = true;
    release_all(tl_pools);
  }
};
thread_local ThreadPoolsGuard tl_pools_guard;

}  // namespace

void* alloc_slow(size_t bytes) {
  // Whole blocks, so that a block can serve any request of its class.
  const size_t c = class_of(bytes);
  if (c >= kClasses) return ::operator new(bytes);
  const size_t size = (c + 1) * kGranule;
  ThreadPools& p = tl_pools;
  if (p.gone) return ::operator new(size);
  // A batch of blocks allocated back to back, which the system allocator
  // places at one stride from each other, handed out in address order: the
  // objects of a graph then lie in memory in the order they were made, and
  // the backward walk over them is a stream the hardware prefetches, not a
  // cache miss per node. Freed blocks return to the list in the reverse
  // order of a graph's teardown, so the order survives reuse.
  const size_t room = p.count[c] < cap_of(c) ? cap_of(c) - p.count[c] : 0;  // for the blocks kept
  const size_t n = std::min(kBatchBytes / size, room + 1);
  void* first = ::operator new(size);  // may throw: nothing else taken yet
  // The others in a chain in the order they came, put before the list's head.
  FreeBlock* chain = nullptr;
  FreeBlock** tail = &chain;
  size_t kept = 0;
  for (; kept + 1 < n; ++kept) {
    auto* b = static_cast<FreeBlock*>(::operator new(size, std::nothrow));
    if (!b) break;
    *tail = b;
    tail = &b->next;
  }
  if (kept > 0) {
    (void)&tl_pools_guard;  // constructs the guard on this thread
    *tail = p.head[c];
    p.head[c] = chain;
    p.count[c] += kept;
  }
  return first;
}

void free_slow(void* ptr, size_t bytes) noexcept {
  const size_t c = class_of(bytes);
  ThreadPools& p = tl_pools;
  if (c >= kClasses || p.gone || p.count[c] >= cap_of(c)) {
    ::operator delete(ptr);
    return;
  }
  (void)&tl_pools_guard;  // constructs the guard on this thread
  FreeBlock* b = static_cast<FreeBlock*>(ptr);
  b->next = p.head[c];
  p.head[c] = b;
  ++p.count[c];
}

}  // namespace pool_detail

void pool_trim() noexcept {
  pool_detail::ThreadPools& p = pool_detail::tl_pools;
  if (!p.gone) pool_detail::release_all(p);
}
#endif

}  // namespace ag
