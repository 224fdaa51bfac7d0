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

// Several threads walk one retained graph at once with ag_grad: every pass
// needs the same nodes, so all but one keep their bookkeeping beside the
// nodes instead of in them. loss = sum(tanh(w * c) * d): exact expectations
// are avoided, each thread compares with the gradient of a pass that ran alone.
TEST(ConcurrentBackward, PassesShareOneRetainedGraph) {
  ag_context_options o = AG_CONTEXT_OPTIONS_INIT;
  o.num_threads = 1;
  ag_context* ctx = nullptr;
  ASSERT_AG(ag_context_create(&ctx, &o));
  ag_tensor *w = nullptr, *c = nullptr, *d = nullptr, *wc = nullptr, *t = nullptr, *td = nullptr, *loss = nullptr;
  ASSERT_AG(ag_tensor_full(&w, ctx, AG_F64, &kSize, 1, 0.25));
  ASSERT_AG(ag_tensor_full(&c, ctx, AG_F64, &kSize, 1, 1.5));
  ASSERT_AG(ag_tensor_full(&d, ctx, AG_F64, &kSize, 1, -2.0));
  ASSERT_AG(ag_tensor_requires_grad(w, 1));
  ASSERT_AG(ag_op_mul(&wc, w, c));
  ASSERT_AG(ag_op_tanh(&t, wc));
  ASSERT_AG(ag_op_mul(&td, t, d));
  ASSERT_AG(ag_op_sum(&loss, td));
  ag_grad_options go = AG_GRAD_OPTIONS_INIT;
  go.retain_graph = 1;
  const ag_tensor* outputs[1] = {loss};
  const ag_tensor* inputs[1] = {w};
  ag_tensor* alone = nullptr;
  ASSERT_AG(ag_grad(&alone, outputs, nullptr, 1, inputs, 1, &go));
  std::vector<double> want(kSize);
  ASSERT_AG(ag_tensor_copy_data(alone, want.data(), want.size() * sizeof(double)));
  ag_tensor_release(alone);
  ASSERT_NE(want[0], 0.0);

  std::vector<std::thread> threads;
  for (int k = 0; k < kThreads; ++k) {
    threads.emplace_back([&] {
      std::vector<double> got(kSize);
      for (int it = 0; it < kIterations; ++it) {
        ag_tensor* g = nullptr;
        ASSERT_AG(ag_grad(&g, outputs, nullptr, 1, inputs, 1, &go));
        ASSERT_AG(ag_tensor_copy_data(g, got.data(), got.size() * sizeof(double)));
        ag_tensor_release(g);
        ASSERT_EQ(got, want);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (ag_tensor* x : {w, c, d, wc, t, td, loss}) ag_tensor_release(x);
  ag_context_release(ctx);
}

// A hook that runs a second pass over the same graph while the first one is
// inside it, on the same thread: both passes must see all of their nodes.
struct NestedPass {
  const ag_tensor* loss;
  const ag_tensor* w;
  ag_tensor* inner = nullptr;  // the inner pass's gradient of loss wrt w
  bool started = false;        // the inner pass runs the hook too
};

ag_status run_nested_pass(void* user_data, const ag_tensor*, ag_tensor** replacement) {
  NestedPass* p = static_cast<NestedPass*>(user_data);
  *replacement = nullptr;
  if (p->started) return AG_OK;
  p->started = true;
  ag_grad_options go = AG_GRAD_OPTIONS_INIT;
  go.retain_graph = 1;
  const ag_tensor* outputs[1] = {p->loss};
  const ag_tensor* inputs[1] = {p->w};
  return ag_grad(&p->inner, outputs, nullptr, 1, inputs, 1, &go);
}

TEST(ConcurrentBackward, NestedPassFromAHook) {
  ag_context* ctx = nullptr;
  ASSERT_AG(ag_context_create(&ctx, nullptr));
  ag_tensor *w = nullptr, *y = nullptr, *z = nullptr, *loss = nullptr;
  ASSERT_AG(ag_tensor_full(&w, ctx, AG_F64, &kSize, 1, 3.0));
  ASSERT_AG(ag_tensor_requires_grad(w, 1));
  ASSERT_AG(ag_op_mul(&y, w, w));  // dy/dw = 2w = 6
  ASSERT_AG(ag_op_exp(&z, y));     // unused by loss: keeps a side branch
  ASSERT_AG(ag_op_sum(&loss, y));
  NestedPass pass{loss, w};
  ag_hook* hook = nullptr;
  ASSERT_AG(ag_tensor_register_hook(&hook, y, run_nested_pass, &pass, nullptr));
  ag_backward_options bo = AG_BACKWARD_OPTIONS_INIT;
  bo.retain_graph = 1;
  ASSERT_AG(ag_backward(loss, nullptr, &bo));
  ASSERT_NE(pass.inner, nullptr);
  ag_tensor* outer = nullptr;
  ASSERT_AG(ag_tensor_grad(&outer, w));
  for (ag_tensor* g : {outer, pass.inner}) {
    std::vector<double> v(kSize);
    ASSERT_AG(ag_tensor_copy_data(g, v.data(), v.size() * sizeof(double)));
    for (double e : v) EXPECT_EQ(e, 6.0);
    ag_tensor_release(g);
  }
  ag_hook_release(hook);
  for (ag_tensor* x : {w, y, z, loss}) ag_tensor_release(x);
  ag_context_release(ctx);
}

}  // namespace
