// A context outlives its tensors whichever threads create and release them
// and its handle: the thread that created it counts its tensors' references
// without atomic read-modify-writes until its last handle goes (Context::
// retain_storage_ref), and these tests move that moment and the releases
// across threads. Its memory statistics are counted the same way (the
// creator's part apart from the other threads'), and balance too. Through the C API, so that CI runs them under
// ThreadSanitizer as well; AddressSanitizer's leak check reports a context
// that is never freed, and use after free one that goes too early.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "ag/ag.h"

namespace {

ag_context* make_context() {
  ag_context_options o = AG_CONTEXT_OPTIONS_INIT;
  o.num_threads = 1;
  ag_context* ctx = nullptr;
  EXPECT_EQ(ag_context_create(&ctx, &o), AG_OK);
  return ctx;
}

double item(const ag_tensor* t) {
  double v = 0.0;
  EXPECT_EQ(ag_tensor_item(t, &v), AG_OK) << ag_last_error_message();
  return v;
}

// x + one as a new tensor (a new storage of x's context).
ag_tensor* plus(ag_tensor* x, ag_tensor* one) {
  ag_tensor* y = nullptr;
  EXPECT_EQ(ag_op_add(&y, x, one), AG_OK) << ag_last_error_message();
  return y;
}

ag_tensor* scalar(ag_context* ctx, double v) {
  ag_tensor* t = nullptr;
  EXPECT_EQ(ag_tensor_scalar(&t, ctx, AG_F64, v), AG_OK) << ag_last_error_message();
  return t;
}

TEST(ContextThreads, TensorsReleasedOnAnotherThread) {
  ag_context* ctx = make_context();
  std::vector<ag_tensor*> ts(1000);
  for (size_t i = 0; i < ts.size(); ++i) ts[i] = scalar(ctx, static_cast<double>(i));
  std::thread other([&] {
    for (size_t i = 0; i + 2 < ts.size(); ++i) ag_tensor_release(ts[i]);
  });
  other.join();
  ag_context_release(ctx);
  // The last tensors keep the context: ops on them still work, and it can
  // be handed out again and released once more.
  ag_tensor* y = plus(ts[998], ts[999]);
  EXPECT_EQ(item(y), 1997.0);
  ag_context* again = nullptr;
  ASSERT_EQ(ag_tensor_context(&again, y), AG_OK) << ag_last_error_message();
  ag_tensor* z = scalar(again, 3.0);
  ag_context_release(again);
  ag_tensor* w = plus(y, z);
  EXPECT_EQ(item(w), 2000.0);
  ag_tensor_release(w);
  ag_tensor_release(z);
  ag_tensor_release(y);
  ag_tensor_release(ts[998]);
  ag_tensor_release(ts[999]);
}

TEST(ContextThreads, HandleReleasedOnAnotherThreadWhileTheCreatorWorks) {
  for (int round = 0; round < 20; ++round) {
    ag_context* ctx = make_context();
    ag_tensor* x = scalar(ctx, 0.0);
    ag_tensor* one = scalar(ctx, 1.0);
    std::atomic<bool> go{false};
    std::thread other([&] {
      while (!go.load()) std::this_thread::yield();
      ag_context_release(ctx);  // the last handle, while this thread's creator keeps making tensors
    });
    // Make and drop tensors before, during and after the release.
    for (int i = 0; i < 3000; ++i) {
      if (i == 100) go.store(true);
      ag_tensor* y = plus(x, one);
      ag_tensor_release(x);
      x = y;
    }
    other.join();
    EXPECT_EQ(item(x), 3000.0);
    ag_tensor_release(x);
    ag_tensor_release(one);
  }
}

TEST(ContextThreads, CreatorExitsBeforeAnyRelease) {
  ag_context* ctx = nullptr;
  std::vector<ag_tensor*> ts(64);
  std::thread creator([&] {
    ctx = make_context();
    for (size_t i = 0; i < ts.size(); ++i) ts[i] = scalar(ctx, 2.0);
  });
  creator.join();
  ASSERT_NE(ctx, nullptr);
  ag_tensor* y = plus(ts[0], ts[1]);
  EXPECT_EQ(item(y), 4.0);
  ag_context_release(ctx);
  ag_tensor_release(y);
  for (ag_tensor* t : ts) ag_tensor_release(t);
}

TEST(ContextThreads, ManyThreadsMakeAndDropTensorsAcrossTheRelease) {
  ag_context* ctx = make_context();
  ag_tensor* seed = scalar(ctx, 0.0);
  ag_tensor* one = scalar(ctx, 1.0);
  std::vector<std::thread> threads;
  std::atomic<int> started{0};
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&] {
      ag_tensor* x = ag_tensor_retain(seed);
      started.fetch_add(1);
      for (int i = 0; i < 2000; ++i) {
        ag_tensor* y = plus(x, one);
        ag_tensor_release(x);
        x = y;
      }
      EXPECT_EQ(item(x), 2000.0);
      ag_tensor_release(x);
    });
  }
  while (started.load() < 3) std::this_thread::yield();
  ag_context_release(ctx);
  ag_tensor_release(seed);
  for (std::thread& t : threads) t.join();
  ag_tensor_release(one);
}

// Tensor data (256 bytes, from the pools; 64 KiB, from the cache) made on
// one thread and freed on another, in both directions and by several
// threads at once: the bytes in use return to where they started, the
// allocations add up, and the peak covers what was live.
TEST(ContextThreads, MemoryStatsBalanceAcrossThreads) {
  ag_context* ctx = make_context();
  ag_memory_stats before = AG_MEMORY_STATS_INIT, during = AG_MEMORY_STATS_INIT, after = AG_MEMORY_STATS_INIT;
  ASSERT_EQ(ag_context_memory_stats(ctx, &before), AG_OK);
  const int64_t sizes[2] = {32, 8192};  // f64 elements
  std::vector<ag_tensor*> mine;
  for (int i = 0; i < 200; ++i) {
    ag_tensor* t = nullptr;
    ASSERT_EQ(ag_tensor_zeros(&t, ctx, AG_F64, &sizes[i % 2], 1), AG_OK) << ag_last_error_message();
    mine.push_back(t);
  }
  ASSERT_EQ(ag_context_memory_stats(ctx, &during), AG_OK);
  EXPECT_EQ(during.bytes_in_use - before.bytes_in_use, 100 * (256 + 65536));
  EXPECT_GE(during.peak_bytes_in_use, during.bytes_in_use);
  std::vector<std::vector<ag_tensor*>> theirs(3);
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      for (size_t i = static_cast<size_t>(t); i < mine.size(); i += 3) ag_tensor_release(mine[i]);
      for (int i = 0; i < 300; ++i) {
        ag_tensor* x = nullptr;
        ASSERT_EQ(ag_tensor_zeros(&x, ctx, AG_F64, &sizes[i % 2], 1), AG_OK) << ag_last_error_message();
        theirs[static_cast<size_t>(t)].push_back(x);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (auto& list : theirs) {
    for (ag_tensor* x : list) ag_tensor_release(x);  // on the creator, made elsewhere
  }
  ASSERT_EQ(ag_context_memory_stats(ctx, &after), AG_OK);
  EXPECT_EQ(after.bytes_in_use, before.bytes_in_use);
  EXPECT_EQ(after.allocations - before.allocations, 200 + 3 * 300);
  EXPECT_GE(after.peak_bytes_in_use, during.bytes_in_use);
  ag_context_release(ctx);
}

}  // namespace
