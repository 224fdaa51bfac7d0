// Per-thread free lists for the small objects every op creates (tensors,
// storage, nodes, autograd metadata), in 64-byte size classes. Recording an
// op then costs no malloc in steady state. An empty list is refilled with a
// batch of blocks made back to back, so the objects of a graph lie in memory
// in the order they were made. A block freed on another thread joins that
// thread's list; each list is capped (8 MiB), the rest goes back to the
// system allocator. The list operations are inline: every op allocates and
// frees several objects.
#pragma once

#include <cstddef>

namespace ag {

// Returns the calling thread's free blocks to the system allocator.
void pool_trim() noexcept;

#if defined(__SANITIZE_ADDRESS__) || defined(AG_NO_POOLS)
// Plain new/delete (pool.cc), so that a use after free is reported.
void* pool_alloc(size_t bytes);
void pool_free(void* p, size_t bytes) noexcept;
#else
namespace pool_detail {

constexpr size_t kGranule = 64;
constexpr size_t kClasses = 16;  // blocks up to 1 KiB
// Bytes kept per class and thread: enough for the objects of a graph of tens
// of thousands of nodes, so building and freeing one never reaches malloc.
// The lists only hold what the thread once had live; pool_trim frees them.
constexpr size_t kMaxCachedBytes = size_t{8} << 20;
// Bytes of blocks a class takes from the system allocator at once (pool.cc).
constexpr size_t kBatchBytes = size_t{32} << 10;

struct FreeBlock {
  FreeBlock* next;
};

// Plain data (no constructor or destructor), defined here with a constant
// initializer: every access is a direct thread-local load, with no check
// for a thread-local initialization function (which an extern declaration
// needs). pool.cc empties the lists at thread exit and then sets `gone`,
// after which frees go straight to the system allocator (its counts stay
// 0, which sends every free the slow way).
struct ThreadPools {
  FreeBlock* head[kClasses];
  size_t count[kClasses];
  bool gone;
};
inline thread_local ThreadPools tl_pools{};

constexpr size_t class_of(size_t bytes) { return (bytes + kGranule - 1) / kGranule - 1; }
constexpr size_t cap_of(size_t c) { return kMaxCachedBytes / ((c + 1) * kGranule); }

void* alloc_slow(size_t bytes);
void free_slow(void* p, size_t bytes) noexcept;

}  // namespace pool_detail

inline void* pool_alloc(size_t bytes) {
  using namespace pool_detail;
  const size_t c = class_of(bytes);
  ThreadPools& p = tl_pools;
  if (c < kClasses) {
    if (FreeBlock* b = p.head[c]) {
      p.head[c] = b->next;
      --p.count[c];
      return b;
    }
  }
  return alloc_slow(bytes);
}

inline void pool_free(void* ptr, size_t bytes) noexcept {
  using namespace pool_detail;
  const size_t c = class_of(bytes);
  ThreadPools& p = tl_pools;
  // count 0 goes the slow way: the first block of a thread registers the
  // exit cleanup there, and after the exit cleanup every count is 0. One
  // unsigned compare tests 0 < count < cap.
  if (c < kClasses && p.count[c] - 1 < cap_of(c) - 1) {
    FreeBlock* b = static_cast<FreeBlock*>(ptr);
    b->next = p.head[c];
    p.head[c] = b;
    ++p.count[c];
    return;
  }
  free_slow(ptr, bytes);
}
#endif

// Base for classes whose objects come from the pools.
struct PoolAllocated {
  static void* operator new(size_t bytes) { return pool_alloc(bytes); }
  static void operator delete(void* p, size_t bytes) noexcept { pool_free(p, bytes); }
};

}  // namespace ag
