// Per-thread free lists for the small objects every op creates (tensors,
// storage, nodes, autograd metadata), in 64-byte size classes. Recording an
// op then costs no malloc in steady state. A block freed on another thread
// joins that thread's list; each list is capped (8 MiB), the rest goes back to the
// system allocator.
#pragma once

#include <cstddef>

namespace ag {

void* pool_alloc(size_t bytes);
void pool_free(void* p, size_t bytes) noexcept;
// Returns the calling thread's free blocks to the system allocator.
void pool_trim() noexcept;

// Base for classes whose objects come from the pools.
struct PoolAllocated {
  static void* operator new(size_t bytes) { return pool_alloc(bytes); }
  static void operator delete(void* p, size_t bytes) noexcept { pool_free(p, bytes); }
};

}  // namespace ag
