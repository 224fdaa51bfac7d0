// Callbacks written in C++ that misbehave in ways a C test cannot show: a
// hook or a custom function that throws ends the call with AG_ERR_CALLBACK,
// nothing escapes the C boundary, and destroy still runs once. Also
// retain_grad surviving an in-place op.
#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>
#include <string>

#include "ag/ag.h"

namespace {

struct Counter {
  int destroyed = 0;
};

void count_destroy(void* p) { ++static_cast<Counter*>(p)->destroyed; }

ag_status throwing_hook(void*, const ag_tensor*, ag_tensor**) { throw std::runtime_error("boom"); }

ag_status throwing_forward(void*, ag_function_ctx*, const ag_tensor* const*, int32_t, ag_tensor**, int32_t) {
  throw 42;
}

ag_status unused_backward(void*, ag_function_ctx*, const ag_tensor* const*, int32_t, ag_tensor**, int32_t) {
  return AG_OK;
}

struct Graph {
  ag_context* ctx = nullptr;
  ag_tensor *x = nullptr, *y = nullptr, *l = nullptr;
  Graph() {
    ag_context_create(&ctx, nullptr);
    const int64_t n = 3;
    const double v[3] = {1, 2, 3};
    ag_tensor_create(&x, ctx, AG_F64, &n, 1, v);
    ag_tensor_requires_grad(x, 1);
    ag_op_tanh(&y, x);
    ag_op_sum(&l, y);
  }
  ~Graph() {
    ag_tensor_release(l);
    ag_tensor_release(y);
    ag_tensor_release(x);
    ag_context_release(ctx);
  }
};

TEST(Callbacks, ThrowingHookBecomesCallbackError) {
  Counter c;
  {
    Graph g;
    ASSERT_EQ(ag_tensor_register_hook(nullptr, g.y, throwing_hook, &c, count_destroy), AG_OK);
    EXPECT_EQ(ag_backward(g.l, nullptr, nullptr), AG_ERR_CALLBACK);
    EXPECT_NE(std::string(ag_last_error_message()).find("tensor hook threw an exception"), std::string::npos)
        << ag_last_error_message();
    EXPECT_EQ(c.destroyed, 0);
  }
  EXPECT_EQ(c.destroyed, 1);
}

TEST(Callbacks, ThrowingForwardBecomesCallbackError) {
  Counter c;
  Graph g;
  ag_function_def d = AG_FUNCTION_DEF_INIT;
  d.name = "ThrowsBackward";
  d.forward = throwing_forward;
  d.backward = unused_backward;
  d.user_data = &c;
  d.destroy = count_destroy;
  ag_tensor* out = nullptr;
  const ag_tensor* in[1] = {g.x};
  EXPECT_EQ(ag_function_apply(&out, 1, in, 1, &d), AG_ERR_CALLBACK);
  EXPECT_NE(std::string(ag_last_error_message()).find("ThrowsBackward forward threw"), std::string::npos)
      << ag_last_error_message();
  EXPECT_EQ(out, nullptr);
  EXPECT_EQ(c.destroyed, 1);
}

// retain_grad survives an in-place op: the gradient kept is the one flowing
// into the tensor's new history.
TEST(Callbacks, RetainGradFollowsInPlaceRebase) {
  Graph g;
  ag_tensor* t = nullptr;
  ag_tensor* two = nullptr;
  ag_tensor* l2 = nullptr;
  ASSERT_EQ(ag_op_clone(&t, g.x), AG_OK);
  ASSERT_EQ(ag_tensor_retain_grad(t), AG_OK);
  ASSERT_EQ(ag_tensor_scalar(&two, g.ctx, AG_F64, 2.0), AG_OK);
  ASSERT_EQ(ag_op_mul_(t, two), AG_OK);
  EXPECT_EQ(ag_tensor_retains_grad(t), 1);
  ASSERT_EQ(ag_op_sum(&l2, t), AG_OK);
  ASSERT_EQ(ag_backward(l2, nullptr, nullptr), AG_OK);
  ag_tensor* gt = nullptr;
  ASSERT_EQ(ag_tensor_grad(&gt, t), AG_OK);
  ASSERT_NE(gt, nullptr);
  double v[3];
  ASSERT_EQ(ag_tensor_copy_data(gt, v, sizeof v), AG_OK);
  for (double e : v) EXPECT_EQ(e, 1.0);  // d sum(t)/dt
  ag_tensor* gx = nullptr;
  ASSERT_EQ(ag_tensor_grad(&gx, g.x), AG_OK);
  ASSERT_EQ(ag_tensor_copy_data(gx, v, sizeof v), AG_OK);
  for (double e : v) EXPECT_EQ(e, 2.0);
  ag_tensor_release(gx);
  ag_tensor_release(gt);
  ag_tensor_release(l2);
  ag_tensor_release(two);
  ag_tensor_release(t);
}

}  // namespace
