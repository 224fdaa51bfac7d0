// In-place ops on strided (non-contiguous) tensors, which the C API cannot
// create yet: the values land where the strides say, and nothing else moves.
#include <gtest/gtest.h>

#include <cmath>

#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "core/context.h"
#include "ops/inplace.h"
#include "ops/ops.h"

namespace ag {
namespace {

// write() fails with AG_ERR_UNSUPPORTED: self shares its storage.
template <class F>
void expect_refused_as_shared(F&& write) {
  try {
    write();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), AG_ERR_UNSUPPORTED);
    EXPECT_NE(e.message().find("shares its storage"), std::string::npos) << e.message();
  }
}

// base (2,3) = 0..5; view = its transpose (3,2) with strides (1,3).
struct Strided : ::testing::Test {
  Ref<Context> ctx = make_ref<Context>(1);
  Tensor base = ops::full(ctx.get(), DType::F64, Dims{2, 3}, 0.0);
  Tensor view;
  void SetUp() override {
    for (int i = 0; i < 6; ++i) base->data_as<double>()[i] = i - 2.5;
    view = make_view(*base, Dims{3, 2}, Dims{1, 3}, 0);
  }
  double at(int i, int j) const { return base->data_as<double>()[j * 3 + i]; }  // view[i][j]
};

TEST_F(Strided, AddBroadcastRowIntoTransposedView) {
  Tensor row = ops::full(ctx.get(), DType::F64, Dims{2}, 0.0);
  row->data_as<double>()[0] = 10;
  row->data_as<double>()[1] = 20;
  const uint64_t v0 = base->storage()->version();
  ops::add_(view, row);
  EXPECT_EQ(base->storage()->version(), v0 + 1);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 2; ++j) EXPECT_EQ(at(i, j), (j * 3 + i) - 2.5 + (j == 0 ? 10 : 20)) << i << "," << j;
  }
}

TEST_F(Strided, ClampFillAndMulInPlace) {
  ops::clamp_(view, -1.0, 1.0);
  for (int k = 0; k < 6; ++k) {
    const double x = k - 2.5;
    EXPECT_EQ(base->data_as<double>()[k], x < -1 ? -1 : x > 1 ? 1 : x);
  }
  ops::mul_(view, ops::scalar_like(view, -2.0));
  for (int k = 0; k < 6; ++k) {
    const double x = k - 2.5;
    EXPECT_EQ(base->data_as<double>()[k], -2 * (x < -1 ? -1 : x > 1 ? 1 : x));
  }
  ops::fill_(view, 3.0);
  for (int k = 0; k < 6; ++k) EXPECT_EQ(base->data_as<double>()[k], 3.0);
}

// Recording into a view of a tensor is refused (the base's history would not see it).
TEST_F(Strided, RecordingIntoAViewIsRefused) {
  Tensor x = ops::full(ctx.get(), DType::F64, Dims{3, 2}, 1.0);
  ensure_meta(*x).requires_grad = true;
  expect_refused_as_shared([&] { ops::add_(view, x); });
  EXPECT_EQ(base->data_as<double>()[0], -2.5);  // unchanged
}

// A leaf that no longer requires grad takes a recorded in-place write as
// before it was ever saved: the one view of its data that its AccumulateGrad
// keeps for the ops that save it is no other user of its storage, unless a
// graph still holds that view.
TEST(InPlace, LeafSavedBeforeTakesARecordedWriteOnceTheGraphIsGone) {
  Ref<Context> ctx = make_ref<Context>(1);
  Tensor x = ops::full(ctx.get(), DType::F64, Dims{3}, 2.0);
  Tensor w = ops::full(ctx.get(), DType::F64, Dims{3}, 3.0);
  ensure_meta(*x).requires_grad = true;
  ensure_meta(*w).requires_grad = true;
  Tensor y = ops::mul(x, x);  // saves x: the shared view
  ensure_meta(*x).requires_grad = false;
  expect_refused_as_shared([&] { ops::mul_(x, w); });  // y's graph holds x's data
  y.reset();
  ops::mul_(x, w);  // recorded: w requires grad
  EXPECT_EQ(x->data_as<double>()[0], 6.0);
  EXPECT_NE(x->grad_fn(), nullptr);
}

}  // namespace
}  // namespace ag
