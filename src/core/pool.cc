#include "core/pool.h"

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

thread_local ThreadPools tl_pools;

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
  return ::operator new(c < kClasses ? (c + 1) * kGranule : bytes);
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
