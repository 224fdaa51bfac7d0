// The per-thread small-object pools (core/pool.h): an empty list is refilled
// with a batch of blocks taken from the system allocator one after the other
// and handed out in that order, so that the objects of a graph lie in memory
// in the order they were made; a batch never grows a list past its cap, a
// refused allocation only shortens it, and freed blocks come back first.
//
// This executable replaces the global operator new to see the blocks the
// pool takes from the system allocator. Each test runs on a thread of its
// own, whose lists start empty.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <set>
#include <thread>
#include <vector>

#include "core/pool.h"

namespace {

// What the replaced operator new records, for the thread that sets `tracked`.
thread_local bool tracked = false;
thread_local std::vector<void*>* taken = nullptr;
// nothrow allocations refused from this many on (counted per tracked thread).
thread_local long refuse_nothrow_after = -1;
thread_local long nothrow_calls = 0;

void* take(size_t n, bool nothrow) {
  if (tracked && nothrow && refuse_nothrow_after >= 0 && nothrow_calls++ >= refuse_nothrow_after) return nullptr;
  void* p = std::malloc(n ? n : 1);
  if (!p) {
    if (nothrow) return nullptr;
    throw std::bad_alloc();
  }
  if (tracked && taken) {
    tracked = false;  // the vector's own growth is not recorded
    taken->push_back(p);
    tracked = true;
  }
  return p;
}

// Runs fn on a fresh thread (empty pools) with recording on; fn clears the
// log after its own allocations (vectors it reserves).
template <class F>
void on_fresh_thread(F fn) {
  std::thread t([&] {
    std::vector<void*> log;
    log.reserve(4096);
    taken = &log;
    tracked = true;
    fn(log);
    tracked = false;
    taken = nullptr;
    ag::pool_trim();
  });
  t.join();
}

#if defined(__SANITIZE_ADDRESS__) || defined(AG_NO_POOLS)
TEST(Pool, PlainNewAndDelete) {
  GTEST_SKIP() << "pools are plain new/delete in this build (use after free is then reported)";
}
#else
using ag::pool_detail::kBatchBytes;
using ag::pool_detail::kGranule;

TEST(Pool, BatchIsHandedOutInTheOrderTheSystemAllocatorGaveIt) {
  for (size_t size : {size_t{64}, size_t{256}, size_t{384}, size_t{1024}}) {
    on_fresh_thread([&](std::vector<void*>& log) {
      const size_t batch = kBatchBytes / size;
      std::vector<void*> got;
      got.reserve(batch + 1);
      log.clear();  // only the pool's allocations from here on
      for (size_t i = 0; i < batch; ++i) got.push_back(ag::pool_alloc(size));
      ASSERT_EQ(log.size(), batch) << "size " << size;  // one batch, taken at the first call
      EXPECT_EQ(got, log) << "size " << size;
      // The next allocation takes the next batch.
      void* next = ag::pool_alloc(size);
      ASSERT_EQ(log.size(), 2 * batch);
      EXPECT_EQ(next, log[batch]);
      got.push_back(next);
      for (void* p : got) ag::pool_free(p, size);
    });
  }
}

TEST(Pool, BlocksOfABatchAreDistinctAndUsable) {
  on_fresh_thread([](std::vector<void*>&) {
    const size_t size = 200;  // rounded up to its class, 256
    std::vector<unsigned char*> blocks;
    for (size_t i = 0; i < 3 * kBatchBytes / 256; ++i) {
      auto* p = static_cast<unsigned char*>(ag::pool_alloc(size));
      for (size_t k = 0; k < size; ++k) p[k] = static_cast<unsigned char>(i + k);
      blocks.push_back(p);
    }
    EXPECT_EQ(std::set<unsigned char*>(blocks.begin(), blocks.end()).size(), blocks.size());
    for (size_t i = 0; i < blocks.size(); ++i) {
      for (size_t k = 0; k < size; ++k) ASSERT_EQ(blocks[i][k], static_cast<unsigned char>(i + k)) << i << " " << k;
    }
    for (unsigned char* p : blocks) ag::pool_free(p, size);
  });
}

TEST(Pool, RefusedAllocationShortensTheBatch) {
  on_fresh_thread([](std::vector<void*>& log) {
    const size_t size = 512;
    refuse_nothrow_after = 3;  // the first block and three more
    nothrow_calls = 0;
    std::vector<void*> got;
    got.reserve(8);
    log.clear();
    for (int i = 0; i < 4; ++i) got.push_back(ag::pool_alloc(size));
    EXPECT_EQ(log.size(), 4u);
    EXPECT_EQ(got, log);
    refuse_nothrow_after = -1;
    got.push_back(ag::pool_alloc(size));  // the list is empty: a new batch
    EXPECT_EQ(log.size(), 4 + kBatchBytes / size);
    EXPECT_EQ(got.back(), log[4]);
    for (void* p : got) ag::pool_free(p, size);
  });
}

TEST(Pool, FreedBlockIsReusedFirst) {
  on_fresh_thread([](std::vector<void*>& log) {
    void* a = ag::pool_alloc(128);
    void* b = ag::pool_alloc(128);
    ag::pool_free(a, 128);
    EXPECT_EQ(ag::pool_alloc(128), a);
    EXPECT_EQ(log.size(), kBatchBytes / 128);  // all from the first batch
    ag::pool_free(a, 128);
    ag::pool_free(b, 128);
  });
}

TEST(Pool, LargeBlocksBypassTheLists) {
  on_fresh_thread([](std::vector<void*>& log) {
    const size_t big = 16 * kGranule + 1;  // above the largest class
    void* p = ag::pool_alloc(big);
    EXPECT_EQ(log.size(), 1u);
    ag::pool_free(p, big);
    void* q = ag::pool_alloc(big);
    EXPECT_EQ(log.size(), 2u);  // not cached: taken again
    ag::pool_free(q, big);
  });
}
#endif

}  // namespace

void* operator new(size_t n) { return take(n, false); }
void* operator new[](size_t n) { return take(n, false); }
void* operator new(size_t n, const std::nothrow_t&) noexcept { return take(n, true); }
void* operator new[](size_t n, const std::nothrow_t&) noexcept { return take(n, true); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
