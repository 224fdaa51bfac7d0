#include "core/allocator.h"

#include <algorithm>
#include <new>

#include "core/pool.h"

namespace ag {

namespace {
constexpr std::align_val_t kAlignment{64};
}

// Four classes per power of two (1, 1.25, 1.5, 1.75 x 2^k): at most 25 %
// rounding waste, and large powers of two fit exactly.
size_t CachingAllocator::class_of(size_t bytes) {
  size_t k = 63 - static_cast<size_t>(__builtin_clzll(bytes));  // 2^k <= bytes
  if (k < 2) return 0;
  const size_t base = size_t{1} << k;
  const size_t quarter = base >> 2;
  size_t sub = (bytes - base + quarter - 1) / quarter;  // 0..4
  if (sub == 4) {
    ++k;
    sub = 0;
  }
  return k * 4 + sub;
}

size_t CachingAllocator::class_bytes(size_t cls) {
  const size_t k = cls / 4, sub = cls % 4;
  const size_t base = size_t{1} << k;
  return base + sub * (base >> 2);
}

CachingAllocator::~CachingAllocator() {
  trim();
  if (host_.destroy) host_.destroy(host_.user);
}

void CachingAllocator::count_allocation(uint64_t thread_id) {
  if (thread_id == owner_thread_) {
    owner_allocations_.store(owner_allocations_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  } else {
    shared_allocations_.fetch_add(1, std::memory_order_relaxed);
  }
}

void CachingAllocator::note_in_use(int64_t delta, uint64_t thread_id) {
  int64_t now;
  if (thread_id == owner_thread_) {
    const int64_t mine = owner_in_use_.load(std::memory_order_relaxed) + delta;
    owner_in_use_.store(mine, std::memory_order_relaxed);
    now = mine + shared_in_use_.load(std::memory_order_relaxed);
  } else {
    now = shared_in_use_.fetch_add(delta, std::memory_order_relaxed) + delta +
          owner_in_use_.load(std::memory_order_relaxed);
  }
  if (delta <= 0) return;
  // The peak as the counting thread sees the total (exact on one thread).
  int64_t peak = peak_.load(std::memory_order_relaxed);
  while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

void* CachingAllocator::allocate(size_t bytes, uint64_t thread_id) {
  count_allocation(thread_id);
  if (host_.alloc) {
    void* p = host_.alloc(bytes, bytes <= kPooledLimit ? 16 : 64, host_.user);
    if (p == nullptr) throw std::bad_alloc();
    note_in_use(static_cast<int64_t>(bytes), thread_id);
    return p;
  }
  if (bytes <= kPooledLimit) {
    void* p = pool_alloc(bytes);
    note_in_use(static_cast<int64_t>(bytes), thread_id);
    return p;
  }
  const size_t cls = class_of(bytes);
  const size_t rounded = class_bytes(cls);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (cls < cache_.size() && !cache_[cls].empty()) {
      void* p = cache_[cls].back();
      cache_[cls].pop_back();
      cached_.fetch_sub(static_cast<int64_t>(rounded), std::memory_order_relaxed);
      hits_.fetch_add(1, std::memory_order_relaxed);
      note_in_use(static_cast<int64_t>(rounded), thread_id);
      return p;
    }
  }
  void* p = ::operator new(rounded, kAlignment);
  note_in_use(static_cast<int64_t>(rounded), thread_id);
  return p;
}

void CachingAllocator::deallocate(void* p, size_t bytes, uint64_t thread_id) noexcept {
  if (host_.alloc) {
    note_in_use(-static_cast<int64_t>(bytes), thread_id);
    host_.free(p, bytes, host_.user);
    return;
  }
  if (bytes <= kPooledLimit) {
    note_in_use(-static_cast<int64_t>(bytes), thread_id);
    pool_free(p, bytes);
    return;
  }
  const size_t cls = class_of(bytes);
  const size_t rounded = class_bytes(cls);
  note_in_use(-static_cast<int64_t>(rounded), thread_id);
  try {
    std::lock_guard<std::mutex> lock(mu_);
    if (cache_.size() <= cls) cache_.resize(cls + 1);
    cache_[cls].push_back(p);
    cached_.fetch_add(static_cast<int64_t>(rounded), std::memory_order_relaxed);
  } catch (...) {
    ::operator delete(p, kAlignment);  // no room to cache it: free it
  }
}

MemoryStats CachingAllocator::stats() const {
  MemoryStats s;
  s.bytes_in_use = in_use();
  s.peak_bytes_in_use = std::max(peak_.load(std::memory_order_relaxed), s.bytes_in_use);
  s.bytes_cached = cached_.load(std::memory_order_relaxed);
  s.allocations =
      owner_allocations_.load(std::memory_order_relaxed) + shared_allocations_.load(std::memory_order_relaxed);
  s.cache_hits = hits_.load(std::memory_order_relaxed);
  return s;
}

int64_t CachingAllocator::in_use() const {
  return owner_in_use_.load(std::memory_order_relaxed) + shared_in_use_.load(std::memory_order_relaxed);
}

void CachingAllocator::reset_peak() { peak_.store(in_use(), std::memory_order_relaxed); }

void CachingAllocator::trim() {
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t cls = 0; cls < cache_.size(); ++cls) {
    for (void* p : cache_[cls]) {
      ::operator delete(p, kAlignment);
      cached_.fetch_sub(static_cast<int64_t>(class_bytes(cls)), std::memory_order_relaxed);
    }
    cache_[cls].clear();
  }
}

}  // namespace ag
