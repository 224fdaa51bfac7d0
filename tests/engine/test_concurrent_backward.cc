// Several threads run backward at once on their own graphs over shared
// leaves, through the C API: every contribution reaches the shared
// gradients exactly once. The contributions are small integers in f64, so
// the expected sums are exact whatever the arrival order. CI runs this test
// under ThreadSanitizer too (contexts with num_threads = 1: Debian's TBB is
// not instrumented).
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "ag/ag.h"

namespace {

constexpr int kThreads = 4;
constexpr int kIterations = 1000;
constexpr int64_t kSize = 64;

#define ASSERT_AG(call) ASSERT_EQ((call), AG_OK) << ag_last_error_message()

// loss = sum(w * c) + sum(b * c * c), with c = thread + 1: dw = c, db = c^2.
void worker(ag_context* ctx, ag_tensor* w, ag_tensor* b, int thread) {
  const double c = thread + 1;
  ag_tensor* cst = nullptr;
  ASSERT_AG(ag_tensor_full(&cst, ctx, AG_F64, &kSize, 1, c));
  for (int it = 0; it < kIterations; ++it) {
    ag_scope* scope = nullptr;
    ASSERT_AG(ag_scope_begin(&scope));
    ag_tensor *wc = nullptr, *bc = nullptr, *bcc = nullptr, *s1 = nullptr, *s2 = nullptr, *loss = nullptr;
    ASSERT_AG(ag_op_mul(&wc, w, cst));
    ASSERT_AG(ag_op_mul(&bc, b, cst));
    ASSERT_AG(ag_op_mul(&bcc, bc, cst));
    ASSERT_AG(ag_op_sum(&s1, wc));
    ASSERT_AG(ag_op_sum(&s2, bcc));
    ASSERT_AG(ag_op_add(&loss, s1, s2));
    ASSERT_AG(ag_backward(loss, nullptr, nullptr));
    if (it % 100 == 0) {  // read the shared gradient while others accumulate
      ag_tensor* g = nullptr;
      ASSERT_AG(ag_tensor_grad(&g, w));
      ASSERT_NE(g, nullptr);
      EXPECT_EQ(ag_tensor_numel(g), kSize);
    }
    ASSERT_AG(ag_scope_end(scope));
  }
  ag_tensor_release(cst);
}

TEST(ConcurrentBackward, SharedLeavesReceiveEveryContribution) {
  ag_context_options o = AG_CONTEXT_OPTIONS_INIT;
  o.num_threads = 1;
  ag_context* ctx = nullptr;
  ASSERT_AG(ag_context_create(&ctx, &o));
  ag_tensor *w = nullptr, *b = nullptr;
  ASSERT_AG(ag_tensor_full(&w, ctx, AG_F64, &kSize, 1, 0.5));
  ASSERT_AG(ag_tensor_full(&b, ctx, AG_F64, &kSize, 1, -1.5));
  ASSERT_AG(ag_tensor_requires_grad(w, 1));
  ASSERT_AG(ag_tensor_requires_grad(b, 1));

  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, ctx, w, b, t);
  for (std::thread& t : threads) t.join();

  double want_w = 0.0, want_b = 0.0;
  for (int t = 0; t < kThreads; ++t) {
    want_w += static_cast<double>(kIterations) * (t + 1);
    want_b += static_cast<double>(kIterations) * (t + 1) * (t + 1);
  }
  for (auto [leaf, want] : {std::pair{w, want_w}, std::pair{b, want_b}}) {
    ag_tensor* g = nullptr;
    ASSERT_AG(ag_tensor_grad(&g, leaf));
    ASSERT_NE(g, nullptr);
    std::vector<double> v(kSize);
    ASSERT_AG(ag_tensor_copy_data(g, v.data(), v.size() * sizeof(double)));
    for (double e : v) EXPECT_EQ(e, want);
    ag_tensor_release(g);
  }
  ag_tensor_release(w);
  ag_tensor_release(b);
  ag_context_release(ctx);
}

}  // namespace
