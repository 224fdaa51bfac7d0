#include "core/pool.h"

#include <new>

namespace ag {

namespace {

constexpr size_t kGranule = 64;
constexpr size_t kClasses = 16;       // blocks up to 1 KiB
// Bytes kept per class and thread: enough for the objects of a graph of tens
// of thousands of nodes, so building and freeing one never reaches malloc.
// The lists only hold what the thread once had live; pool_trim frees them.
constexpr size_t kMaxCachedBytes = size_t{8} << 20;

struct FreeBlock {
  FreeBlock* next;
};

// Set once the thread's pools are gone (thread or process exit): later
// frees go straight to the system allocator.
thread_local bool tl_pools_gone = false;

// Plain data (no constructor or destructor), so that every access is a
// direct thread-local load without an initialization check; the guard below
// empties the lists at thread exit.
struct ThreadPools {
  FreeBlock* head[kClasses];
  size_t count[kClasses];
  void release() noexcept {
    for (size_t c = 0; c < kClasses; ++c) {
      while (head[c]) {
        FreeBlock* b = head[c];
        head[c] = b->next;
        ::operator delete(b);
      }
      count[c] = 0;
    }
  }
};

thread_local ThreadPools tl_pools;

struct ThreadPoolsGuard {
  ~ThreadPoolsGuard() {
    tl_pools_gone = true;
    tl_pools.release();
  }
};
thread_local ThreadPoolsGuard tl_pools_guard;

inline size_t class_of(size_t bytes) { return (bytes + kGranule - 1) / kGranule - 1; }

struct ClassCaps {
  size_t blocks[kClasses];
  constexpr ClassCaps() : blocks() {
    for (size_t c = 0; c < kClasses; ++c) blocks[c] = kMaxCachedBytes / ((c + 1) * kGranule);
  }
};
constexpr ClassCaps kCaps;

}  // namespace

#if defined(__SANITIZE_ADDRESS__) || defined(AG_NO_POOLS)
// Under AddressSanitizer every object gets its own allocation, so that a use
// after free is reported instead of hidden by reuse.
void* pool_alloc(size_t bytes) { return ::operator new(bytes); }
void pool_free(void* ptr, size_t) noexcept { ::operator delete(ptr); }
void pool_trim() noexcept {}
#else
void* pool_alloc(size_t bytes) {
  const size_t c = class_of(bytes);
  if (c >= kClasses || tl_pools_gone) return ::operator new((c + 1) * kGranule);
  ThreadPools& p = tl_pools;
  if (FreeBlock* b = p.head[c]) {
    p.head[c] = b->next;
    --p.count[c];
    return b;
  }
  return ::operator new((c + 1) * kGranule);
}

void pool_free(void* ptr, size_t bytes) noexcept {
  const size_t c = class_of(bytes);
  if (c >= kClasses || tl_pools_gone) {
    ::operator delete(ptr);
    return;
  }
  ThreadPools& p = tl_pools;
  if (p.count[c] >= kCaps.blocks[c]) {
    ::operator delete(ptr);
    return;
  }
  if (p.count[c] == 0) (void)&tl_pools_guard;  // constructs the guard on this thread
  FreeBlock* b = static_cast<FreeBlock*>(ptr);
  b->next = p.head[c];
  p.head[c] = b;
  ++p.count[c];
}

void pool_trim() noexcept {
  if (!tl_pools_gone) tl_pools.release();
}
#endif

}  // namespace ag
