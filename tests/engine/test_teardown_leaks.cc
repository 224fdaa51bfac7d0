// "Leak-free after releasing everything": graphs built and differentiated
// (also to second order) on a multi-thread context, where arena workers run
// backward nodes and kernel chunks, then every handle and the context
// released. The ASan build (CI runs it with detect_leaks=1) fails this
// executable at exit if any object or pool block is left unreachable; the
// test itself checks, in every build, that the workers had nodes to run and
// that no tensor memory is still in use once the handles are gone.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ag/ag.h"
#include "engine/engine.h"

namespace {

// Elements per tensor: enough that one backward node (gradient in and out)
// is worth an arena task (engine.cc, kParallelNodeElements) and that
// elementwise kernels split into chunks.
constexpr int64_t kRows = 256, kCols = 512;

ag_tensor* filled(ag_context* ctx, double phase, bool grad) {
  std::vector<float> v(static_cast<size_t>(kRows * kCols));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(0.05 * std::sin(phase + 0.37 * static_cast<double>(i)));
  const int64_t shape[2] = {kRows, kCols};
  ag_tensor* t = nullptr;
  EXPECT_EQ(ag_tensor_create(&t, ctx, AG_F32, shape, 2, v.data()), AG_OK);
  if (t && grad) {
    EXPECT_EQ(ag_tensor_requires_grad(t, 1), AG_OK);
  }
  return t;
}

// Four independent branches from x, each weighted by its own parameter, plus
// the gradients (first and, with create_graph, second order) read back.
void run_graphs(ag_context* ctx, int create_graph) {
  ag_tensor* x = filled(ctx, 0.1, true);
  std::vector<ag_tensor*> w;
  for (int k = 0; k < 4; ++k) w.push_back(filled(ctx, 1.0 + k, true));
  ag_tensor* total = nullptr;
  for (int k = 0; k < 4; ++k) {
    ag_tensor *p = nullptr, *t = nullptr, *s = nullptr;
    ASSERT_EQ(ag_op_mul(&p, x, w[static_cast<size_t>(k)]), AG_OK);
    ASSERT_EQ(ag_op_tanh(&t, p), AG_OK);
    ASSERT_EQ(ag_op_sum(&s, t), AG_OK);
    if (total) {
      ag_tensor* next = nullptr;
      ASSERT_EQ(ag_op_add(&next, total, s), AG_OK);
      ag_tensor_release(total);
      ag_tensor_release(s);
      total = next;
    } else {
      total = s;
    }
    ag_tensor_release(p);
    ag_tensor_release(t);
  }
  ag_backward_options bo;
  ag_backward_options_init(&bo);
  bo.create_graph = create_graph;
  ASSERT_EQ(ag_backward(total, nullptr, &bo), AG_OK);
  ag_tensor* gx = nullptr;
  ASSERT_EQ(ag_tensor_grad(&gx, x), AG_OK);
  ASSERT_NE(gx, nullptr);
  if (create_graph) {
    // Second order through the recorded gradient: x.grad keeps a graph that
    // ends in the leaves' accumulators, which must not own their leaves.
    ag_tensor* s = nullptr;
    ASSERT_EQ(ag_op_sum(&s, gx), AG_OK);
    ag_tensor* g2[1] = {nullptr};
    const ag_tensor* outs[1] = {s};
    const ag_tensor* ins[1] = {w[0]};
    ag_grad_options go;
    ag_grad_options_init(&go);
    ASSERT_EQ(ag_grad(g2, outs, nullptr, 1, ins, 1, &go), AG_OK);
    ag_tensor_release(g2[0]);
    ag_tensor_release(s);
  }
  ag_tensor_release(gx);
  if (create_graph) {
    // A parameter whose requires_grad is turned off after use, passed as the
    // seed of a create_graph pass through a graph that reaches it: it must
    // not end up owning itself through its gradient (lsan_pool_leak.bin).
    ag_tensor *p = nullptr, *y = nullptr;
    ASSERT_EQ(ag_op_mul(&p, x, w[3]), AG_OK);
    ASSERT_EQ(ag_op_tanh(&y, p), AG_OK);
    ASSERT_EQ(ag_tensor_requires_grad(w[3], 0), AG_OK);
    ASSERT_EQ(ag_backward(y, w[3], &bo), AG_OK);
    ag_tensor_release(y);
    ag_tensor_release(p);
  }
  ag_tensor_release(total);
  ag_tensor_release(x);
  for (ag_tensor* t : w) ag_tensor_release(t);
}

TEST(TeardownLeaks, MultiThreadContextReleasesEverything) {
  const uint64_t before = ag::nodes_run_as_tasks();
  for (int round = 0; round < 3; ++round) {
    ag_context_options o;
    ag_context_options_init(&o);
    o.num_threads = 2;
    ag_context* ctx = nullptr;
    ASSERT_EQ(ag_context_create(&ctx, &o), AG_OK);
    run_graphs(ctx, 0);
    run_graphs(ctx, 1);
    // Every tensor was released: a tensor kept alive by a reference cycle
    // would still hold its (large, counted) memory, in any build.
    ag_memory_stats stats;
    ag_memory_stats_init(&stats);
    ASSERT_EQ(ag_context_memory_stats(ctx, &stats), AG_OK);
    EXPECT_EQ(stats.bytes_in_use, 0) << "round " << round;
    ag_context_release(ctx);
  }
  // The backward passes without create_graph handed nodes to the arena.
  EXPECT_GT(ag::nodes_run_as_tasks(), before);
}

}  // namespace
