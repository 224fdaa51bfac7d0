// Tests of ag.hpp, the header-only C++ wrapper over the C ABI: RAII handles,
// tensors, autograd, the no-grad guard, operators, named ops, exceptions.
#include "ag/ag.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace {

// Every op of ops.def has its wrapper: an op of a generic family with its
// family's signature, a CUSTOM op at least by name (its own signature, maybe
// overloaded: a using-declaration accepts an overload set where &ag::name
// would not). A new op without a wrapper fails to compile here: a family op
// gets its line in ag/ag_ops.hpp from src/ops/gen_op_lists.py; a CUSTOM op
// needs a function ag::<name> in the section of its header there (and a test
// of it in test_ag_ops_hpp.cc).
#define AG_HPP_SIGNATURE_UNARY ag::Tensor (*)(const ag::Tensor &)
#define AG_HPP_SIGNATURE_UNARY_SCALAR ag::Tensor (*)(const ag::Tensor &, double)
#define AG_HPP_SIGNATURE_BINARY ag::Tensor (*)(const ag::Tensor &, const ag::Tensor &)
#define AG_HPP_SIGNATURE_SHAPE ag::Tensor (*)(const ag::Tensor &, const std::vector<int64_t> &)
#define AG_HPP_SIGNATURE_DTYPE ag::Tensor (*)(const ag::Tensor &, ag_dtype)
#define AG_HPP_SIGNATURE_UNARY_SCALAR2 ag::Tensor (*)(const ag::Tensor &, double, double)
#define AG_HPP_SIGNATURE_DIM ag::Tensor (*)(const ag::Tensor &, int64_t)
#define AG_HPP_SIGNATURE_DIMS ag::Tensor (*)(const ag::Tensor &, const std::vector<int64_t> &, bool)
#define AG_HPP_CHECK_UNARY(name) sizeof(static_cast<AG_HPP_SIGNATURE_UNARY>(&ag::name)),
#define AG_HPP_CHECK_UNARY_SCALAR(name) sizeof(static_cast<AG_HPP_SIGNATURE_UNARY_SCALAR>(&ag::name)),
#define AG_HPP_CHECK_BINARY(name) sizeof(static_cast<AG_HPP_SIGNATURE_BINARY>(&ag::name)),
#define AG_HPP_CHECK_SHAPE(name) sizeof(static_cast<AG_HPP_SIGNATURE_SHAPE>(&ag::name)),
#define AG_HPP_CHECK_DTYPE(name) sizeof(static_cast<AG_HPP_SIGNATURE_DTYPE>(&ag::name)),
#define AG_HPP_CHECK_UNARY_SCALAR2(name) sizeof(static_cast<AG_HPP_SIGNATURE_UNARY_SCALAR2>(&ag::name)),
#define AG_HPP_CHECK_DIM(name) sizeof(static_cast<AG_HPP_SIGNATURE_DIM>(&ag::name)),
#define AG_HPP_CHECK_DIMS(name) sizeof(static_cast<AG_HPP_SIGNATURE_DIMS>(&ag::name)),
#define AG_HPP_CHECK_CUSTOM(name) \
  [] {                            \
    using ag::name;               \
    return sizeof(int);           \
  }(),
// The other families: by name (their wrappers may add defaults or overloads).
#define AG_HPP_CHECK_DIMS_SCALAR AG_HPP_CHECK_CUSTOM
#define AG_HPP_CHECK_DIMLIST AG_HPP_CHECK_CUSTOM
#define AG_HPP_CHECK_INT2 AG_HPP_CHECK_CUSTOM
#define AG_HPP_CHECK_INT AG_HPP_CHECK_CUSTOM
#define AG_HPP_CHECK_ADDMM AG_HPP_CHECK_CUSTOM
#define AG_HPP_CHECK_DIM_KEEPDIM AG_HPP_CHECK_CUSTOM
#define AG_HPP_CHECK_VALUES_INDICES AG_HPP_CHECK_CUSTOM
#define AG_HPP_CHECK_STAT_MEAN AG_HPP_CHECK_CUSTOM
#define AG_HPP_CHECK_SCAN_INDICES AG_HPP_CHECK_CUSTOM
#define AG_HPP_CHECK_BINARY_SCALAR AG_HPP_CHECK_CUSTOM
#define AG_HPP_CHECK_QUANTILE AG_HPP_CHECK_CUSTOM
#define AG_HPP_CHECK_TENSORS_DIM AG_HPP_CHECK_CUSTOM
#define AG_HPP_CHECK_INDEX AG_HPP_CHECK_CUSTOM
#define AG_HPP_CHECK_INDEX_SRC AG_HPP_CHECK_CUSTOM
#define AG_HPP_CHECK_GRAD_Y_DIM AG_HPP_CHECK_CUSTOM
#define AG_HPP_CHECK_LOSS AG_HPP_CHECK_CUSTOM
#define AG_HPP_CHECK_RANDOM AG_HPP_CHECK_CUSTOM
#define AG_HPP_CHECK_RANDOM2 AG_HPP_CHECK_CUSTOM
#define AG_HPP_CHECK_NORM_BACKWARD AG_HPP_CHECK_CUSTOM
#define AG_HPP_CHECK_NORM_WEIGHT_GRAD AG_HPP_CHECK_CUSTOM
#define AG_OP(name, family, ...) AG_HPP_CHECK_##family(name)
const size_t kWrappers[] = {
#include "ops/ops.def"
};

TEST(AgHpp, EveryOpHasAWrapper) {
  // The library's op list and ops.def have the same length, so the
  // compile-time check above covered the library's ops.
  // (Counted through iterators, not sizeof: clang drops an array only named in sizeof, and warns.)
  EXPECT_EQ(std::end(kWrappers) - std::begin(kWrappers), static_cast<std::ptrdiff_t>(ag_op_count()));
}

TEST(AgHpp, ContextAndTensorBasics) {
  ag::Context ctx(1);
  EXPECT_EQ(ctx.num_threads(), 1);
  ag::Tensor x = ag::tensor<float>(ctx, {1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(x.dtype(), AG_F32);
  EXPECT_EQ(x.ndim(), 2);
  EXPECT_EQ(x.numel(), 6);
  EXPECT_EQ(x.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(x.context().get(), ctx.get());

  ag::Tensor s = ag::tensor<double>(ctx, {2.5}, {});
  EXPECT_EQ(s.ndim(), 0);
  EXPECT_DOUBLE_EQ(s.item(), 2.5);
  EXPECT_EQ(ag::zeros(ctx, {2}, AG_F64).to_vector<double>(), (std::vector<double>{0, 0}));
  EXPECT_EQ(ag::ones(ctx, {2}).to_vector<float>(), (std::vector<float>{1, 1}));
  EXPECT_EQ(ag::full(ctx, {3}, 7, AG_I64).to_vector<int64_t>(), (std::vector<int64_t>{7, 7, 7}));

  int64_t v = x.version();
  x.copy_from(std::vector<float>{6, 5, 4, 3, 2, 1});
  EXPECT_GT(x.version(), v);
  EXPECT_EQ(x.to_vector<float>()[0], 6.0f);
}

TEST(AgHpp, HandlesAreRefcounted) {
  ag::Context ctx(1);
  ag::Tensor a = ag::scalar(ctx, 1.0);
  ag::Tensor b = a;  // retain
  EXPECT_EQ(a.get(), b.get());
  ag::Tensor c = std::move(b);
  EXPECT_FALSE(b);
  EXPECT_EQ(c.get(), a.get());
  c = ag::Tensor();  // release
  EXPECT_TRUE(a);
  ag_tensor *raw = a.release_handle();
  EXPECT_FALSE(a);
  ag::Tensor back = ag::Tensor::adopt(raw);
  EXPECT_DOUBLE_EQ(back.item(), 1.0);
  // The context lives on in its tensors after the last Context goes.
  ag::Tensor kept;
  {
    ag::Context scoped(1);
    kept = ag::scalar(scoped, 4.0);
  }
  EXPECT_DOUBLE_EQ((kept * kept).item(), 16.0);
}

TEST(AgHpp, OperatorsMatchTheNamedOps) {
  ag::Context ctx(1);
  ag::Tensor a = ag::tensor<double>(ctx, {1, 2, 3}, {3});
  ag::Tensor b = ag::tensor<double>(ctx, {4, 5, 6}, {3});
  EXPECT_EQ((a + b).to_vector<double>(), (std::vector<double>{5, 7, 9}));
  EXPECT_EQ((a - b).to_vector<double>(), (std::vector<double>{-3, -3, -3}));
  EXPECT_EQ((a * b).to_vector<double>(), (std::vector<double>{4, 10, 18}));
  EXPECT_EQ((b / a).to_vector<double>(), (std::vector<double>{4, 2.5, 2}));
  EXPECT_EQ((-a).to_vector<double>(), (std::vector<double>{-1, -2, -3}));
  EXPECT_EQ((2.0 * a + 1.0).to_vector<double>(), (std::vector<double>{3, 5, 7}));
  EXPECT_EQ((1.0 - a / 2.0).to_vector<double>(), (std::vector<double>{0.5, 0, -0.5}));
  EXPECT_EQ((6.0 / a - b * 1.0).to_vector<double>(), (std::vector<double>{2, -2, -4}));

  EXPECT_DOUBLE_EQ(ag::sum(a).item(), 6.0);
  EXPECT_DOUBLE_EQ(ag::mean(a).item(), 2.0);
  EXPECT_DOUBLE_EQ(ag::exp(ag::log(a)).to_vector<double>()[2], 3.0);
  EXPECT_DOUBLE_EQ(ag::tanh(a).to_vector<double>()[0], std::tanh(1.0));
  EXPECT_EQ(ag::pow(a, 2).to_vector<double>(), (std::vector<double>{1, 4, 9}));
  EXPECT_EQ(ag::expand(a, {2, 3}).shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(ag::sum_to_size(ag::expand(a, {2, 3}), {3}).to_vector<double>(), (std::vector<double>{2, 4, 6}));
  EXPECT_EQ(ag::cast(a, AG_F32).dtype(), AG_F32);
  EXPECT_EQ(ag::clone(a).to_vector<double>(), a.to_vector<double>());
  EXPECT_DOUBLE_EQ(ag::tanh_backward(a, ag::zeros(ctx, {3}, AG_F64)).to_vector<double>()[1], 2.0);
}

TEST(AgHpp, BackwardGivesGradients) {
  ag::Context ctx(1);
  ag::Tensor x = ag::tensor<float>(ctx, {1, 2, 3}, {3});
  x.set_requires_grad();
  EXPECT_TRUE(x.requires_grad());
  EXPECT_TRUE(x.is_leaf());
  EXPECT_FALSE(x.grad());  // none yet
  ag::Tensor y = ag::sum(x * x + 2.0 * x);
  EXPECT_FALSE(y.is_leaf());
  EXPECT_NE(y.grad_fn_name(), nullptr);
  y.backward();
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{4, 6, 8}));  // 2x + 2

  x.set_grad(ag::Tensor());
  EXPECT_FALSE(x.grad());
  ag::Tensor z = x * x;
  z.backward(ag::ones(ctx, {3}), /*retain_graph=*/true);
  z.backward(ag::ones(ctx, {3}));
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{4, 8, 12}));  // 2 * 2x
  EXPECT_FALSE(x.detach().requires_grad());
}

TEST(AgHpp, NoGradGuardRestoresTheMode) {
  ag::Context ctx(1);
  ag::Tensor x = ag::scalar(ctx, 2.0);
  x.set_requires_grad();
  {
    ag::NoGradGuard guard;
    EXPECT_EQ(ag_grad_mode_enabled(), 0);
    EXPECT_FALSE((x * x).requires_grad());
    {
      ag::NoGradGuard nested;
    }
    EXPECT_EQ(ag_grad_mode_enabled(), 0);  // the inner guard restores "off"
  }
  EXPECT_EQ(ag_grad_mode_enabled(), 1);
  EXPECT_TRUE((x * x).requires_grad());
}

TEST(AgHpp, TagScopeNestsAndCloses) {
  ag::Context ctx(1);
  ag::Tensor x = ag::scalar(ctx, 2.0);
  x.set_requires_grad();
  ag::Tensor y;
  {
    ag::TagScope outer("loss");
    ag::TagScope inner("scale");
    EXPECT_STREQ(ag_tag_scope_current(), "loss/scale");
    y = x * x;
  }
  EXPECT_EQ(ag_tag_scope_current(), nullptr);
  const ag_node *n = nullptr;
  ASSERT_EQ(ag_tensor_grad_fn(&n, y.get()), AG_OK);
  EXPECT_STREQ(ag_node_tag(n), "loss/scale");
  EXPECT_THROW(ag::TagScope bad(""), ag::Error);
  EXPECT_EQ(ag_tag_scope_current(), nullptr);  // a failed push opened nothing
}

TEST(AgHpp, FailuresThrowTheStatusAndMessage) {
  ag::Context ctx(1);
  ag::Tensor a = ag::zeros(ctx, {2, 3});
  ag::Tensor b = ag::zeros(ctx, {4});
  try {
    ag::Tensor c = a * b;
    FAIL() << "no exception";
  } catch (const ag::Error &e) {
    EXPECT_EQ(e.status(), AG_ERR_SHAPE);
    // The C++ function first, then the C function and its reason.
    EXPECT_STREQ(e.what(), "ag::mul: [ag_op_mul] cannot broadcast shapes (2,3) and (4)");
  }
  ag::Tensor d = ag::zeros(ctx, {2}, AG_F64);
  EXPECT_THROW(ag::Tensor e = a + d, ag::Error);
  EXPECT_THROW(a.to_vector<double>(), ag::Error);
  EXPECT_THROW(a.copy_from(std::vector<double>(6)), ag::Error);
  EXPECT_THROW(ag::tensor<float>(ctx, {1, 2, 3}, {2}), ag::Error);
  EXPECT_THROW(ag::Tensor().item(), ag::Error);
  try {
    a.backward();
    FAIL() << "no exception";
  } catch (const ag::Error &e) {
    EXPECT_EQ(e.status(), AG_ERR_GRAPH);
  }
}

TEST(AgHpp, HooksRunCppCallables) {
  ag::Context ctx(1);
  ag::Tensor x = ag::tensor<double>(ctx, {1, 2}, {2});
  x.set_requires_grad();
  std::shared_ptr<int> calls = std::make_shared<int>(0);
  ag::Tensor y = x * x;
  ag::Hook doubling = y.register_hook([calls](const ag::Tensor &g) {
    ++*calls;
    return g * 2.0;
  });
  ag::Hook watching = x.register_hook([calls](const ag::Tensor &) {
    ++*calls;
    return ag::Tensor();  // keep the gradient
  });
  EXPECT_EQ(calls.use_count(), 3);
  ag::sum(y).backward(ag::Tensor(), /*retain_graph=*/true);
  EXPECT_EQ(*calls, 2);
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{4, 8}));  // 2 * 2x

  doubling.remove();
  EXPECT_FALSE(doubling);
  EXPECT_EQ(calls.use_count(), 2);  // the removed hook's callable was destroyed
  x.set_grad(ag::Tensor());
  ag::sum(y).backward(ag::Tensor(), true);
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{2, 4}));

  // An exception in the callable stops the pass with its message.
  ag::Hook failing = y.register_hook([](const ag::Tensor &g) -> ag::Tensor {
    if (g.numel() > 0) throw std::runtime_error("gradient refused");
    return g;
  });
  try {
    ag::sum(y).backward();
    FAIL() << "no exception";
  } catch (const ag::Error &e) {
    EXPECT_EQ(e.status(), AG_ERR_CALLBACK);
    EXPECT_NE(std::string(e.what()).find("gradient refused"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ag::zeros(ctx, {2}).register_hook([](const ag::Tensor &g) { return g; }), ag::Error);
}

TEST(AgHpp, HeadersMatchTheLibrary) { EXPECT_TRUE(ag::library_compatible()); }

}  // namespace
