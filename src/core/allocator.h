// The memory of a context's tensors. Small blocks come from the per-thread
// pools; large ones from size-class caches kept per context, so a loop that
// allocates the same large tensors every iteration stops paying for mmap and
// page faults after the first one. trim() hands the cache back to the system.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace ag {

struct MemoryStats {
  int64_t bytes_in_use = 0;       // held by live tensors (rounded to size classes)
  int64_t peak_bytes_in_use = 0;  // highest bytes_in_use since creation or reset_peak
  int64_t bytes_cached = 0;       // freed blocks kept for reuse
  int64_t allocations = 0;        // calls that needed memory
  int64_t cache_hits = 0;         // of those, served from the cache
};

// The host's allocator (ag_context_options.alloc/free/user/destroy). When
// set, every block comes from it and nothing is cached or pooled.
struct HostAllocator {
  void* (*alloc)(uint64_t size, uint64_t align, void* user) = nullptr;
  void (*free)(void* ptr, uint64_t size, void* user) = nullptr;
  void* user = nullptr;
  void (*destroy)(void* user) = nullptr;
};

class CachingAllocator {
 public:
  CachingAllocator() = default;
  // Before the first allocation only.
  void set_host(const HostAllocator& h) { host_ = h; }
  bool has_host() const { return host_.alloc != nullptr; }
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // The thread whose calls count with plain loads and stores (the context's
  // creator, which makes most of its tensors): an atomic read-modify-write
  // costs as much as the rest of a small tensor's allocation. Others count
  // atomically; stats() adds both. Before the first allocation only.
  void set_owner_thread(uint64_t thread_id) { owner_thread_ = thread_id; }

  // Memory for at least `bytes`: 64-byte aligned above kPooledLimit, 16-byte
  // aligned below. `thread_id` is the caller's (Context::this_thread_id).
  // Throws std::bad_alloc.
  void* allocate(size_t bytes, uint64_t thread_id);
  void deallocate(void* p, size_t bytes, uint64_t thread_id) noexcept;
  // Counts `bytes` of data that a tensor keeps in its own pool block
  // (core/tensor_impl.cc) as allocate and deallocate would count them.
  void note_block_data(size_t bytes, uint64_t thread_id) {
    count_allocation(thread_id);
    note_in_use(static_cast<int64_t>(bytes), thread_id);
  }
  void note_block_data_freed(size_t bytes, uint64_t thread_id) noexcept {
    note_in_use(-static_cast<int64_t>(bytes), thread_id);
  }

  MemoryStats stats() const;
  void reset_peak();
  // Frees every cached block.
  void trim();

 private:
  static constexpr size_t kPooledLimit = 1024;  // up to this, the per-thread pools
  static size_t class_of(size_t bytes);
  static size_t class_bytes(size_t cls);
  int64_t in_use() const;
  void count_allocation(uint64_t thread_id);
  // Counts delta bytes more (an allocation) or fewer (a free) in use.
  void note_in_use(int64_t delta, uint64_t thread_id);

  HostAllocator host_;
  mutable std::mutex mu_;
  std::vector<std::vector<void*>> cache_;  // by size class; guarded by mu_
  uint64_t owner_thread_ = 0;
  // Bytes in use and allocations, each the sum of the owner thread's part
  // (written by that thread only, with plain loads and stores) and the
  // other threads' (atomic). A part may go negative (a block freed by
  // another thread than the one that made it).
  std::atomic<int64_t> owner_in_use_{0}, shared_in_use_{0};
  std::atomic<int64_t> owner_allocations_{0}, shared_allocations_{0};
  std::atomic<int64_t> peak_{0};
  std::atomic<int64_t> cached_{0};
  std::atomic<int64_t> hits_{0};
};

}  // namespace ag
