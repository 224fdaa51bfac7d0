// Ops on a temporary first input (ops.h: add, sub, mul, div, tanh_backward
// taking Tensor&&) write their result into its buffer when nobody else can
// see it, and only then; backward formulas rely on it to pass one gradient
// buffer down a chain. The results are the bits of the out-of-place op.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "ag/ag.h"
#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "core/context.h"
#include "core/error.h"
#include "ops/ops.h"

namespace ag {
namespace {

struct Reuse : ::testing::Test {
  Ref<Context> ctx = make_ref<Context>(1);
  // 0.5, 0.75, 1.0, ... (no graph)
  Tensor ramp(const Dims& shape, double start = 0.5, DType dt = DType::F64) {
    Tensor t = ops::full(ctx.get(), dt, shape, 0.0);
    for (int64_t i = 0; i < t->numel(); ++i) {
      if (dt == DType::F64) t->data_as<double>()[i] = start + 0.25 * static_cast<double>(i);
      else t->data_as<float>()[i] = static_cast<float>(start + 0.25 * static_cast<double>(i));
    }
    return t;
  }
  static bool same_bits(const Tensor& a, const Tensor& b) {
    return a->shape() == b->shape() && a->dtype() == b->dtype() && std::memcmp(a->data(), b->data(), a->nbytes()) == 0;
  }
};

using BinaryOp = Tensor (*)(const Tensor&, const Tensor&);
using TemporaryOp = Tensor (*)(Tensor&&, const Tensor&);
struct OpPair {
  BinaryOp plain;
  TemporaryOp temporary;
};
const OpPair kOps[] = {{&ops::add, &ops::add}, {&ops::sub, &ops::sub}, {&ops::mul, &ops::mul},
                       {&ops::div, &ops::div}, {&ops::tanh_backward, &ops::tanh_backward}};

TEST_F(Reuse, PrivateTemporaryTakesTheResult) {
  for (const OpPair& op : kOps) {
    for (DType dt : {DType::F32, DType::F64}) {
      for (const Dims& shape : {Dims{}, Dims{7}, Dims{2, 3}}) {
        Tensor b = ramp(shape, 1.25, dt);
        Tensor expected = op.plain(ramp(shape, 0.5, dt), b);
        Tensor a = ramp(shape, 0.5, dt);
        const TensorImpl* buffer = a.get();
        Tensor y = op.temporary(std::move(a), b);
        EXPECT_EQ(y.get(), buffer);
        EXPECT_TRUE(same_bits(y, expected));
      }
    }
  }
}

TEST_F(Reuse, SecondInputMayBroadcast) {
  Tensor row = ramp({3}, 2.0);
  Tensor a = ramp({2, 3});
  const TensorImpl* buffer = a.get();
  Tensor expected = ops::mul(ramp({2, 3}), row);
  Tensor y = ops::mul(std::move(a), row);
  EXPECT_EQ(y.get(), buffer);
  EXPECT_TRUE(same_bits(y, expected));
  // The other way round the result is larger than the temporary: a new tensor.
  Tensor small = ramp({3});
  const TensorImpl* small_buffer = small.get();
  Tensor z = ops::mul(std::move(small), ramp({2, 3}));
  EXPECT_NE(z.get(), small_buffer);
  EXPECT_EQ(z->shape(), (Dims{2, 3}));
}

TEST_F(Reuse, SharedTemporaryIsLeftAlone) {
  Tensor b = ramp({4}, 1.5);
  Tensor expected = ops::mul(ramp({4}), b);
  {
    Tensor a = ramp({4});
    Tensor other = a;  // a second reference
    Tensor y = ops::mul(std::move(a), b);
    EXPECT_NE(y.get(), other.get());
    EXPECT_TRUE(same_bits(other, ramp({4})));
    EXPECT_TRUE(same_bits(y, expected));
  }
  {
    Tensor a = ramp({4});
    Tensor view = make_view(*a, a->shape(), a->strides(), 0);  // shares the storage
    Tensor y = ops::mul(std::move(a), b);
    EXPECT_NE(y->storage(), view->storage());
    EXPECT_TRUE(same_bits(view, ramp({4})));
  }
  {
    Tensor a = ramp({4});
    Tensor t = make_view(*a, Dims{2, 2}, Dims{1, 2}, 0);  // transposed: not the result's layout
    a.reset();
    const TensorImpl* buffer = t.get();
    Tensor y = ops::mul(std::move(t), ramp({2, 2}));
    EXPECT_NE(y.get(), buffer);
  }
}

TEST_F(Reuse, GraphsAreRecordedAsBefore) {
  Tensor x = ramp({3});
  ensure_meta(*x).requires_grad = true;
  {
    // A temporary that is part of a graph keeps its value: the node may save it.
    Tensor t = ops::mul(x, x);
    const TensorImpl* buffer = t.get();
    Tensor y = ops::mul(std::move(t), ramp({3}));
    EXPECT_NE(y.get(), buffer);
    ASSERT_NE(grad_fn_of(*y), nullptr);
    EXPECT_STREQ(grad_fn_of(*y)->name(), "MulBackward");
  }
  {
    // A plain temporary with an input that requires grad: the op records.
    Tensor t = ramp({3});
    const TensorImpl* buffer = t.get();
    Tensor y = ops::add(std::move(t), x);
    EXPECT_NE(y.get(), buffer);
    ASSERT_NE(grad_fn_of(*y), nullptr);
    EXPECT_STREQ(grad_fn_of(*y)->name(), "AddBackward");
  }
}

TEST_F(Reuse, TemporaryWithAHistoryIsLeftAlone) {
  Tensor x = ramp({3});
  ensure_meta(*x).requires_grad = true;
  Tensor t = ops::mul(x, x);  // has a grad_fn, and nobody else holds it
  GradModeGuard off(false);
  const TensorImpl* buffer = t.get();
  Tensor y = ops::mul(std::move(t), ramp({3}));
  EXPECT_NE(y.get(), buffer);
  EXPECT_EQ(grad_fn_of(*y), nullptr);  // a result without grad mode has no history
}

TEST_F(Reuse, ErrorsAreTheOpsOwn) {
  Tensor a = ramp({3}, 0.5, DType::F32);
  try {
    ops::mul(std::move(a), ramp({3}));
    FAIL() << "mixed dtypes were accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), AG_ERR_DTYPE);
  }
  Tensor b = ramp({3});
  EXPECT_THROW(ops::add(std::move(b), ramp({4})), Error);
}

// Through the C API: a chain whose backward passes one buffer from node to
// node must still show hooks and retained gradients the values they expect.
struct Chain {
  ag_context* ctx = nullptr;
  ag_tensor *x = nullptr, *c = nullptr, *y = nullptr, *z = nullptr, *w = nullptr;
  Chain() {
    ag_context_create(&ctx, nullptr);
    const int64_t n = 3;
    const double xv[3] = {1, 2, 3}, cv[3] = {2, 3, 4};
    ag_tensor_create(&x, ctx, AG_F64, &n, 1, xv);
    ag_tensor_create(&c, ctx, AG_F64, &n, 1, cv);
    ag_tensor_requires_grad(x, 1);
    ag_op_mul(&y, x, c);  // y = x c
    ag_op_tanh(&z, y);    // z = tanh(y)
    ag_op_mul(&w, z, c);  // w = z c
  }
  ~Chain() {
    for (ag_tensor* t : {w, z, y, c, x}) ag_tensor_release(t);
    ag_context_release(ctx);
  }
  static std::vector<double> values(const ag_tensor* t) {
    std::vector<double> v(3);
    EXPECT_EQ(ag_tensor_copy_data(t, v.data(), sizeof(double) * 3), AG_OK);
    return v;
  }
};

struct Seen {
  std::vector<double> received, produced;
};

ag_status record_post(void* user_data, ag_tensor** grads, int32_t, const ag_tensor* const* other, int32_t) {
  Seen* s = static_cast<Seen*>(user_data);
  s->produced = Chain::values(grads[0]);
  s->received = Chain::values(other[0]);
  return AG_OK;
}

TEST(ReuseInBackward, PostHookSeesWhatTheNodeReceived) {
  Chain g;
  Seen seen;
  // On tanh's node: it receives dw/dz = c and produces c (1 - z^2).
  ASSERT_EQ(ag_tensor_register_node_post_hook(nullptr, g.z, record_post, &seen, nullptr), AG_OK);
  const double seed_v[3] = {1, 1, 1};
  const int64_t n = 3;
  ag_tensor* seed;
  ag_tensor_create(&seed, g.ctx, AG_F64, &n, 1, seed_v);
  ASSERT_EQ(ag_backward(g.w, seed, nullptr), AG_OK);
  ag_tensor_release(seed);
  const std::vector<double> c = Chain::values(g.c), z = Chain::values(g.z);
  ASSERT_EQ(seen.received.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(seen.received[i], c[i]);
    EXPECT_DOUBLE_EQ(seen.produced[i], c[i] * (1 - z[i] * z[i]));
  }
}

TEST(ReuseInBackward, RetainedGradientIsNotOverwritten) {
  Chain g;
  ASSERT_EQ(ag_tensor_retain_grad(g.z), AG_OK);
  ag_tensor* loss;
  ag_op_sum(&loss, g.w);
  ASSERT_EQ(ag_backward(loss, nullptr, nullptr), AG_OK);
  ag_tensor *gz, *gx;
  ASSERT_EQ(ag_tensor_grad(&gz, g.z), AG_OK);
  ASSERT_EQ(ag_tensor_grad(&gx, g.x), AG_OK);
  const std::vector<double> c = Chain::values(g.c), z = Chain::values(g.z), vz = Chain::values(gz),
                            vx = Chain::values(gx);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(vz[i], c[i]);
    EXPECT_DOUBLE_EQ(vx[i], c[i] * (1 - z[i] * z[i]) * c[i]);
  }
  for (ag_tensor* t : {gx, gz, loss}) ag_tensor_release(t);
}

}  // namespace
}  // namespace ag
