// Anomaly checks on gradients that are views (transposed, broadcast with
// stride 0), and node tags and saved bytes, on the C++ internals.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "autograd/node.h"
#include "autograd/tag_scope.h"
#include "core/context.h"
#include "core/error.h"
#include "engine/anomaly.h"
#include "ops/ops.h"

namespace ag {
namespace {

struct Anomaly : ::testing::Test {
  Ref<Context> ctx = make_ref<Context>(1);
  Tensor leaf(const Dims& shape, double v) {
    Tensor t = ops::full(ctx.get(), DType::F64, shape, v);
    ensure_meta(*t).requires_grad = true;
    return t;
  }
  static Node* fn(const Tensor& t) { return grad_fn_of(*t); }
  // The message check_finite_gradients throws for `out`, or "" when it passes.
  static std::string message(const Node& n, const TensorList& out) {
    try {
      check_finite_gradients(n, out);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), AG_ERR_GRAPH);
      return e.message();
    }
    return "";
  }
};

TEST_F(Anomaly, TransposedGradientIsScannedInItsOwnOrder) {
  Tensor x = leaf({2, 3}, 1.0);
  Tensor y = ops::exp(x);
  // (3, 2) view of a (2, 3) buffer whose element [1][0] (flat 3) is inf:
  // in the view's order that is element 1.
  Tensor base = ops::full(ctx.get(), DType::F64, {2, 3}, 0.5);
  base->data_as<double>()[3] = std::numeric_limits<double>::infinity();
  Tensor g = ops::transpose(base, 0, 1);
  ASSERT_FALSE(g->is_contiguous());
  TensorList out;
  out.push_back(g);
  EXPECT_EQ(message(*fn(y), out),
            "anomaly: ExpBackward produced inf in its gradient for input 0 (element 1 of shape (3,2), going to "
            "the leaf of shape (2,3)); backward stopped there");
}

TEST_F(Anomaly, BroadcastGradientAndFiniteOnes) {
  Tensor x = leaf({4}, 1.0);
  Tensor y = ops::exp(x);
  TensorList out;
  out.push_back(ops::expand(ops::full(ctx.get(), DType::F64, {1}, 2.0), {4}));
  EXPECT_EQ(message(*fn(y), out), "");
  out[0] = ops::expand(ops::full(ctx.get(), DType::F64, {1}, -std::numeric_limits<double>::infinity()), {4});
  ASSERT_EQ(out[0]->strides()[0], 0);
  EXPECT_NE(message(*fn(y), out).find("produced -inf in its gradient for input 0 (element 0 of shape (4)"),
            std::string::npos);
  // Null entries and non-floating gradients are skipped.
  out[0] = Tensor();
  EXPECT_EQ(message(*fn(y), out), "");
}

TEST_F(Anomaly, NodesRecordTheScopeOpenAtCreation) {
  Tensor x = leaf({2}, 1.0);
  Tensor a = ops::exp(x);
  push_tag_scope("outer");
  push_tag_scope("inner");
  Tensor b = ops::exp(a);
  pop_tag_scope();
  Tensor c = ops::exp(b);
  pop_tag_scope();
  Tensor d = ops::exp(c);
  EXPECT_EQ(fn(a)->tag(), nullptr);
  EXPECT_STREQ(fn(b)->tag(), "outer/inner");
  EXPECT_STREQ(fn(c)->tag(), "outer");
  EXPECT_EQ(fn(d)->tag(), nullptr);
  EXPECT_EQ(tag_scope_depth(), 0u);
  // The leaf's AccumulateGrad, created inside a scope, has no tag.
  Tensor z = leaf({2}, 1.0);
  push_tag_scope("s");
  Tensor e = ops::exp(z);
  pop_tag_scope();
  EXPECT_EQ(fn(e)->next_edge(0).fn->tag(), nullptr);
  EXPECT_STREQ(fn(e)->tag(), "s");
}

TEST_F(Anomaly, SavedBytesCountElementsOfViews) {
  Tensor x = leaf({4, 5}, 1.0);
  Tensor row = ops::select(x, 0, 1);  // a (5) view of a 20-element storage
  Tensor y = ops::mul(row, row);      // saves both operands
  EXPECT_EQ(fn(y)->saved_bytes(), 2 * 5 * sizeof(double));
  EXPECT_EQ(fn(row)->saved_bytes(), 0u);
}

}  // namespace
}  // namespace ag
