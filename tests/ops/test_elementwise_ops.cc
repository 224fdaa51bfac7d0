// The elementwise ops through the C API: forward values against scalar
// references (attributes, broadcasting, stride-0 views), empty and 0-dim
// tensors, gradient conventions at kinks, bitwise equality across thread
// counts, and bad input (status and message, out-parameter untouched).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "api_util.h"

namespace {

using namespace apitest;

bool close(double got, double want, double rel) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::fabs(got - want) <= rel * std::fabs(want) + 1e-300;
}

// ---------------------------------------------------------------- forward values

using Unary = std::function<ag_status(ag_tensor**, const ag_tensor*)>;
struct UnaryRef {
  const char* name;
  Unary op;
  std::function<double(double)> ref;
};

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }
double softplus(double x, double b, double t) { return b * x > t ? x : std::log1p(std::exp(b * x)) / b; }

std::vector<UnaryRef> unary_refs() {
  const double nan = std::nan("");
  return {
      {"abs", ag_op_abs, [](double x) { return std::fabs(x); }},
      {"sign", ag_op_sign, [](double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : x; }},
      {"expm1", ag_op_expm1, [](double x) { return std::expm1(x); }},
      {"log1p", ag_op_log1p, [](double x) { return std::log1p(x); }},
      {"log2", ag_op_log2, [](double x) { return std::log2(x); }},
      {"sqrt", ag_op_sqrt, [](double x) { return std::sqrt(x); }},
      {"rsqrt", ag_op_rsqrt, [](double x) { return 1 / std::sqrt(x); }},
      {"square", ag_op_square, [](double x) { return x * x; }},
      {"reciprocal", ag_op_reciprocal, [](double x) { return 1 / x; }},
      {"sin", ag_op_sin, [](double x) { return std::sin(x); }},
      {"cos", ag_op_cos, [](double x) { return std::cos(x); }},
      {"tan", ag_op_tan, [](double x) { return std::tan(x); }},
      {"asin", ag_op_asin, [](double x) { return std::asin(x); }},
      {"acos", ag_op_acos, [](double x) { return std::acos(x); }},
      {"atan", ag_op_atan, [](double x) { return std::atan(x); }},
      {"sinh", ag_op_sinh, [](double x) { return std::sinh(x); }},
      {"cosh", ag_op_cosh, [](double x) { return std::cosh(x); }},
      {"erf", ag_op_erf, [](double x) { return std::erf(x); }},
      {"sigmoid", ag_op_sigmoid, sigmoid},
      {"relu", ag_op_relu, [](double x) { return x > 0 ? x : 0.0; }},
      {"leaky_relu", [](ag_tensor** o, const ag_tensor* x) { return ag_op_leaky_relu(o, x, 0.01); },
       [](double x) { return x > 0 ? x : 0.01 * x; }},
      {"elu", [](ag_tensor** o, const ag_tensor* x) { return ag_op_elu(o, x, 0.7); },
       [](double x) { return x > 0 ? x : 0.7 * std::expm1(x); }},
      {"selu", ag_op_selu,
       [](double x) { return 1.0507009873554804934 * (x > 0 ? x : 1.6732632423543772848 * std::expm1(x)); }},
      {"silu", ag_op_silu, [](double x) { return x * sigmoid(x); }},
      {"softplus", [](ag_tensor** o, const ag_tensor* x) { return ag_op_softplus(o, x, 2.0, 3.0); },
       [](double x) { return softplus(x, 2, 3); }},
      {"mish", ag_op_mish, [](double x) { return x * std::tanh(softplus(x, 1, 20)); }},
      {"hardtanh", [](ag_tensor** o, const ag_tensor* x) { return ag_op_hardtanh(o, x, -0.5, 1.0); },
       [](double x) { return x < -0.5 ? -0.5 : x > 1 ? 1.0 : x; }},
      {"clamp", [](ag_tensor** o, const ag_tensor* x) { return ag_op_clamp(o, x, -1.0, 0.5); },
       [](double x) { return x < -1 ? -1.0 : x > 0.5 ? 0.5 : x; }},
      {"clamp(min only)", [nan](ag_tensor** o, const ag_tensor* x) { return ag_op_clamp(o, x, 0.25, nan); },
       [](double x) { return x < 0.25 ? 0.25 : x; }},
      {"clamp(max only)", [nan](ag_tensor** o, const ag_tensor* x) { return ag_op_clamp(o, x, nan, 0.25); },
       [](double x) { return x > 0.25 ? 0.25 : x; }},
      {"gelu", ag_op_gelu, [](double x) { return x * std::erfc(-x / std::sqrt(2.0)) / 2; }},
      {"gelu_tanh", ag_op_gelu_tanh,
       [](double x) {  // x / 2 (1 + tanh u) = x sigmoid(2u), without the cancellation of 1 + tanh u
         const long double u = std::sqrt(2 / 3.14159265358979323846264338327950288L) * (x + 0.044715L * x * x * x);
         return static_cast<double>(x / (1 + std::exp(-2 * u)));
       }},
      {"floor", ag_op_floor, [](double x) { return std::floor(x); }},
      {"ceil", ag_op_ceil, [](double x) { return std::ceil(x); }},
      {"round", ag_op_round, [](double x) { return std::nearbyint(x); }},
      {"trunc", ag_op_trunc, [](double x) { return std::trunc(x); }},
  };
}

const std::vector<double> kSamples = {-3.7, -2.5, -1.5, -0.9, -0.5, -0.25, 0.0, 0.1, 0.5, 0.75, 1.5, 2.5, 4.2, 25.0};

TEST(ElementwiseOps, UnaryForwardMatchesReference) {
  Ctx ctx(0);
  for (ag_dtype dt : {AG_F64, AG_F32}) {
    const double rel = dt == AG_F64 ? 1e-14 : 2e-6;
    for (const UnaryRef& u : unary_refs()) {
      std::vector<double> x = kSamples;
      if (dt == AG_F32) {
        for (double& v : x) v = static_cast<float>(v);
      }
      T in(make(ctx.get(), dt, {2, 7}, x)), y;
      ASSERT_AG(u.op(y.out(), in.get()));
      EXPECT_EQ(shape_of(y.get()), (Shape{2, 7})) << u.name;
      EXPECT_EQ(ag_tensor_dtype(y.get()), dt);
      const std::vector<double> got = read(y.get());
      for (size_t i = 0; i < x.size(); ++i) {
        const double want = dt == AG_F32 ? static_cast<float>(u.ref(x[i])) : u.ref(x[i]);
        EXPECT_TRUE(close(got[i], want, rel)) << u.name << "(" << x[i] << ") = " << got[i] << ", want " << want;
      }
    }
  }
}

using Binary = ag_status (*)(ag_tensor**, const ag_tensor*, const ag_tensor*);
struct BinaryRef {
  const char* name;
  Binary op;
  std::function<double(double, double)> ref;
};

std::vector<BinaryRef> binary_refs() {
  return {
      {"pow", ag_op_pow, [](double a, double b) { return std::pow(a, b); }},
      {"maximum", ag_op_maximum, [](double a, double b) { return std::max(a, b); }},
      {"minimum", ag_op_minimum, [](double a, double b) { return std::min(a, b); }},
      {"atan2", ag_op_atan2, [](double a, double b) { return std::atan2(a, b); }},
      {"fmod", ag_op_fmod, [](double a, double b) { return std::fmod(a, b); }},
      {"remainder", ag_op_remainder, [](double a, double b) { return a - std::floor(a / b) * b; }},
      {"sigmoid_backward", ag_op_sigmoid_backward, [](double g, double y) { return g * y * (1 - y); }},
      {"silu_backward", ag_op_silu_backward,
       [](double g, double x) { return g * sigmoid(x) * (1 + x * (1 - sigmoid(x))); }},
      {"mish_backward", ag_op_mish_backward,
       [](double g, double x) {
         const double t = std::tanh(softplus(x, 1, 20));
         return g * (t + x * sigmoid(x) * (1 - t * t));
       }},
      {"gelu_backward", ag_op_gelu_backward,
       [](double g, double x) {
         return g * (std::erfc(-x / std::sqrt(2.0)) / 2 + x * std::exp(-x * x / 2) / std::sqrt(2 * M_PI));
       }},
      {"eq", ag_op_eq, [](double a, double b) { return a == b ? 1.0 : 0.0; }},
      {"ne", ag_op_ne, [](double a, double b) { return a != b ? 1.0 : 0.0; }},
      {"lt", ag_op_lt, [](double a, double b) { return a < b ? 1.0 : 0.0; }},
      {"le", ag_op_le, [](double a, double b) { return a <= b ? 1.0 : 0.0; }},
      {"gt", ag_op_gt, [](double a, double b) { return a > b ? 1.0 : 0.0; }},
      {"ge", ag_op_ge, [](double a, double b) { return a >= b ? 1.0 : 0.0; }},
  };
}

// (2, 3) op (3): broadcasting, and the same through a stride-0 expand view of b.
TEST(ElementwiseOps, BinaryForwardBroadcastsAndReadsViews) {
  Ctx ctx(0);
  const std::vector<double> a = {-2.5, -1.0, 0.5, 1.5, 2.0, 3.25}, b = {1.5, -1.0, 0.75};
  for (ag_dtype dt : {AG_F64, AG_F32}) {
    for (const BinaryRef& op : binary_refs()) {
      const bool positive_base = std::string(op.name) == "pow";
      std::vector<double> av = a;
      if (positive_base) {
        for (double& v : av) v = std::fabs(v);
      }
      T ta(make(ctx.get(), dt, {2, 3}, av)), tb(make(ctx.get(), dt, {3}, b)), y, view, y2;
      ASSERT_AG(op.op(y.out(), ta.get(), tb.get()));
      ASSERT_EQ(shape_of(y.get()), (Shape{2, 3})) << op.name;
      const bool cmp = std::string(op.name).size() == 2;
      EXPECT_EQ(ag_tensor_dtype(y.get()), cmp ? AG_BOOL : dt) << op.name;
      const Shape full = {2, 3};
      ASSERT_AG(ag_op_expand(view.out(), tb.get(), full.data(), 2));
      ASSERT_AG(op.op(y2.out(), ta.get(), view.get()));
      const std::vector<double> got = read(y.get()), got2 = read(y2.get());
      for (size_t i = 0; i < 6; ++i) {
        double x = av[i], z = b[i % 3];
        if (dt == AG_F32) x = static_cast<float>(x), z = static_cast<float>(z);
        const double want = dt == AG_F32 ? static_cast<float>(op.ref(x, z)) : op.ref(x, z);
        EXPECT_TRUE(close(got[i], want, dt == AG_F64 ? 1e-14 : 2e-6))
            << op.name << "(" << x << ", " << z << ") = " << got[i];
        EXPECT_EQ(got2[i], got[i]) << op.name << " through the expanded view";
      }
    }
  }
}

TEST(ElementwiseOps, WhereAndLerpBroadcastThreeWays) {
  Ctx ctx(0);
  for (ag_dtype dt : {AG_F64, AG_F32}) {
    T cond(make(ctx.get(), AG_BOOL, {2, 1}, {1, 0})), a(make(ctx.get(), dt, {3}, {1, 2, 3})),
        b(make(ctx.get(), dt, {}, {-1})), y;
    ASSERT_AG(ag_op_where(y.out(), cond.get(), a.get(), b.get()));
    EXPECT_EQ(shape_of(y.get()), (Shape{2, 3}));
    EXPECT_EQ(read(y.get()), (std::vector<double>{1, 2, 3, -1, -1, -1}));
    T w(make(ctx.get(), dt, {2, 1}, {0.25, 1.0})), l;
    ASSERT_AG(ag_op_lerp(l.out(), a.get(), b.get(), w.get()));
    EXPECT_EQ(shape_of(l.get()), (Shape{2, 3}));
    const std::vector<double> got = read(l.get());
    for (size_t i = 0; i < 6; ++i) {
      const double av = 1.0 + static_cast<double>(i % 3), wv = i < 3 ? 0.25 : 1.0;
      EXPECT_DOUBLE_EQ(got[i], av + wv * (-1 - av)) << i;
    }
  }
}

// ---------------------------------------------------------------- empty and 0-dim

// A huge order costs no time (n! stops at its overflow, where a loop to n
// ran for hours): inf times a zeta factor that underflows to 0 at x = 2,
// NaN as PyTorch's formula, and overflows at x = 1/2; a moderate order
// keeps its value.
TEST(ElementwiseOps, PolygammaOfHugeOrderReturnsAtOnce) {
  Ctx ctx(0);
  T x(make(ctx.get(), AG_F64, {2}, {2.0, 0.5}));
  T huge, three;
  ASSERT_AG(ag_op_polygamma(huge.out(), int64_t{1} << 50, x.get()));
  const std::vector<double> h = data_of<double>(huge.get());
  EXPECT_TRUE(std::isnan(h[0])) << h[0];
  EXPECT_EQ(h[1], -std::numeric_limits<double>::infinity());  // even order: -n! zeta(n + 1, 1/2), zeta overflows too
  ASSERT_AG(ag_op_polygamma(three.out(), 3, x.get()));
  // polygamma(3, 2) = 6 (zeta(4) - 1) = pi^4 / 15 - 6.
  EXPECT_NEAR(data_of<double>(three.get())[0], std::pow(M_PI, 4) / 15 - 6, 1e-12);
}

TEST(ElementwiseOps, EmptyAndZeroDim) {
  Ctx ctx(0);
  T e(make(ctx.get(), AG_F32, {0, 3}, {})), row(make(ctx.get(), AG_F32, {3}, {1, 2, 3})),
      s(make(ctx.get(), AG_F32, {}, {0.5})), ebool(make(ctx.get(), AG_BOOL, {0, 1}, {}));
  for (const UnaryRef& u : unary_refs()) {
    T y, z;
    ASSERT_AG(u.op(y.out(), e.get()));
    EXPECT_EQ(shape_of(y.get()), (Shape{0, 3})) << u.name;
    ASSERT_AG(u.op(z.out(), s.get()));
    EXPECT_EQ(ag_tensor_ndim(z.get()), 0) << u.name;
  }
  for (const BinaryRef& op : binary_refs()) {
    T y, z;
    ASSERT_AG(op.op(y.out(), e.get(), row.get()));
    EXPECT_EQ(shape_of(y.get()), (Shape{0, 3})) << op.name;
    ASSERT_AG(op.op(z.out(), s.get(), s.get()));
    EXPECT_EQ(ag_tensor_ndim(z.get()), 0) << op.name;
  }
  T w, l;
  ASSERT_AG(ag_op_where(w.out(), ebool.get(), row.get(), s.get()));
  EXPECT_EQ(shape_of(w.get()), (Shape{0, 3}));
  ASSERT_AG(ag_op_lerp(l.out(), e.get(), row.get(), s.get()));
  EXPECT_EQ(shape_of(l.get()), (Shape{0, 3}));
  // An empty result still records, and backward gives empty gradients.
  ASSERT_AG(ag_tensor_requires_grad(e.get(), 1));
  T y, sum;
  ASSERT_AG(ag_op_gelu(y.out(), e.get()));
  ASSERT_AG(ag_op_sum(sum.out(), y.get()));
  ASSERT_AG(ag_backward(sum.get(), nullptr, nullptr));
  T g;
  ASSERT_AG(ag_tensor_grad(g.out(), e.get()));
  ASSERT_NE(g.get(), nullptr);
  EXPECT_EQ(shape_of(g.get()), (Shape{0, 3}));
}

// ---------------------------------------------------------------- gradients at special points

// d sum(f(x)) / dx at the given points, f64.
std::vector<double> grad_of(const Unary& f, const std::vector<double>& x) {
  Ctx ctx(0);
  T in(make(ctx.get(), AG_F64, {static_cast<int64_t>(x.size())}, x)), y, s, g;
  ag_tensor_requires_grad(in.get(), 1);
  EXPECT_EQ(f(y.out(), in.get()), AG_OK) << ag_last_error_message();
  EXPECT_EQ(ag_op_sum(s.out(), y.get()), AG_OK);
  EXPECT_EQ(ag_backward(s.get(), nullptr, nullptr), AG_OK) << ag_last_error_message();
  EXPECT_EQ(ag_tensor_grad(g.out(), in.get()), AG_OK);
  return g.get() ? read(g.get()) : std::vector<double>();
}

// relu's gradient, fused (first order) and recorded (create_graph), and
// linear_act(relu)'s: g where the output is > 0 or NaN (PyTorch's
// threshold_backward), else +0 even for an inf or NaN g.
TEST(ElementwiseOps, ReluGradientMasksNonFiniteUpstream) {
  const double inf = INFINITY, nan = NAN;
  // linear_act sees finite inputs (a product with inf or NaN spreads them).
  const std::vector<double> x_relu = {-1, 0, 2, nan, -inf, inf}, x_linear = {-1, 0, 2, 1, -4, 3};
  const std::vector<double> up = {inf, nan, 3, 5, 7, -2}, want = {0, 0, 3, 5, 0, -2};
  for (ag_dtype dt : {AG_F32, AG_F64}) {
    for (int create_graph : {0, 1}) {
      for (int linear : {0, 1}) {
        Ctx ctx(0);
        T in(make(ctx.get(), dt, {1, 6}, linear ? x_linear : x_relu)), g(make(ctx.get(), dt, {1, 6}, up)), y, gx;
        ag_tensor_requires_grad(in.get(), 1);
        std::vector<double> id(36, 0.0);
        for (int i = 0; i < 6; ++i) id[i * 7] = 1.0;
        T eye(make(ctx.get(), dt, {6, 6}, id));
        if (linear) {  // in @ I^T: the same numbers through linear_act
          ASSERT_EQ(ag_op_linear_act(y.out(), in.get(), eye.get(), nullptr, AG_ACTIVATION_RELU), AG_OK);
        } else {
          ASSERT_EQ(ag_op_relu(y.out(), in.get()), AG_OK);
        }
        ag_backward_options o = AG_BACKWARD_OPTIONS_INIT;
        o.create_graph = create_graph;
        ASSERT_EQ(ag_backward(y.get(), g.get(), &o), AG_OK) << ag_last_error_message();
        ASSERT_EQ(ag_tensor_grad(gx.out(), in.get()), AG_OK);
        const std::vector<double> got = read(gx.get());
        ASSERT_EQ(got.size(), want.size());
        for (size_t i = 0; i < want.size(); ++i) {
          EXPECT_EQ(got[i], want[i]) << "dt " << dt << " create_graph " << create_graph << " linear " << linear
                                     << " i " << i;
          if (want[i] == 0) {
            EXPECT_FALSE(std::signbit(got[i])) << "i " << i;  // +0, not -0
          }
        }
      }
    }
  }
}

TEST(ElementwiseOps, SubgradientsAtKinksFollowPyTorch) {
  EXPECT_EQ(grad_of(ag_op_relu, {-1, 0, 2}), (std::vector<double>{0, 0, 1}));
  EXPECT_EQ(grad_of(ag_op_abs, {-1, 0, 2}), (std::vector<double>{-1, 0, 1}));
  EXPECT_EQ(grad_of([](ag_tensor** o, const ag_tensor* x) { return ag_op_leaky_relu(o, x, 0.2); }, {-1, 0, 2}),
            (std::vector<double>{0.2, 0.2, 1}));
  EXPECT_EQ(grad_of([](ag_tensor** o, const ag_tensor* x) { return ag_op_elu(o, x, 0.5); }, {0}),
            (std::vector<double>{0.5}));
  EXPECT_EQ(grad_of([](ag_tensor** o, const ag_tensor* x) { return ag_op_hardtanh(o, x, -1, 1); }, {-1, 0, 1, 2}),
            (std::vector<double>{0, 1, 0, 0}));
  EXPECT_EQ(grad_of([](ag_tensor** o, const ag_tensor* x) { return ag_op_clamp(o, x, -1, 1); }, {-1, 0, 1, 2}),
            (std::vector<double>{1, 1, 1, 0}));
  for (Unary f : {Unary(ag_op_floor), Unary(ag_op_ceil), Unary(ag_op_round), Unary(ag_op_trunc), Unary(ag_op_sign)}) {
    EXPECT_EQ(grad_of(f, {-1.5, 0.5, 2}), (std::vector<double>{0, 0, 0}));
  }
  // Softplus above its threshold is the identity.
  EXPECT_EQ(grad_of([](ag_tensor** o, const ag_tensor* x) { return ag_op_softplus(o, x, 1, 20); }, {30}),
            (std::vector<double>{1}));
}

TEST(ElementwiseOps, MaximumMinimumSplitTiesAndPowAtZero) {
  Ctx ctx(0);
  for (Binary op : {ag_op_maximum, ag_op_minimum}) {
    T a(make(ctx.get(), AG_F64, {3}, {1, 2, 3})), b(make(ctx.get(), AG_F64, {3}, {3, 2, 1})), y, s;
    ag_tensor_requires_grad(a.get(), 1);
    ag_tensor_requires_grad(b.get(), 1);
    ASSERT_AG(op(y.out(), a.get(), b.get()));
    ASSERT_AG(ag_op_sum(s.out(), y.get()));
    ASSERT_AG(ag_backward(s.get(), nullptr, nullptr));
    T ga, gb;
    ASSERT_AG(ag_tensor_grad(ga.out(), a.get()));
    ASSERT_AG(ag_tensor_grad(gb.out(), b.get()));
    const bool is_max = op == ag_op_maximum;
    EXPECT_EQ(read(ga.get()), (is_max ? std::vector<double>{0, 0.5, 1} : std::vector<double>{1, 0.5, 0}));
    EXPECT_EQ(read(gb.get()), (is_max ? std::vector<double>{1, 0.5, 0} : std::vector<double>{0, 0.5, 1}));
  }
  // pow at a = 0: d/db is 0 where b >= 0 (no 0 * -inf), d/da is 0 where b = 0.
  T a(make(ctx.get(), AG_F64, {3}, {0, 0, 2})), b(make(ctx.get(), AG_F64, {3}, {2, 0, 3})), y, s;
  ag_tensor_requires_grad(a.get(), 1);
  ag_tensor_requires_grad(b.get(), 1);
  ASSERT_AG(ag_op_pow(y.out(), a.get(), b.get()));
  ASSERT_AG(ag_op_sum(s.out(), y.get()));
  ASSERT_AG(ag_backward(s.get(), nullptr, nullptr));
  T ga, gb;
  ASSERT_AG(ag_tensor_grad(ga.out(), a.get()));
  ASSERT_AG(ag_tensor_grad(gb.out(), b.get()));
  EXPECT_EQ(read(ga.get()), (std::vector<double>{0, 0, 12}));
  const std::vector<double> db = read(gb.get());
  EXPECT_EQ(db[0], 0.0);
  EXPECT_EQ(db[1], 0.0);
  EXPECT_DOUBLE_EQ(db[2], 8 * std::log(2.0));
}

// Inputs that are stride-0 views (expand): the gradient is summed back into
// the viewed tensor.
TEST(ElementwiseOps, GradientsThroughBroadcastViews) {
  Ctx ctx(0);
  const std::vector<double> xv = {-1.25, 0.5, 2.0};
  T x(make(ctx.get(), AG_F64, {3}, xv)), b(make(ctx.get(), AG_F64, {2, 3}, {0.1, 0.6, 1.9, -2, 0.4, 3}));
  T view, y, m, s;
  ag_tensor_requires_grad(x.get(), 1);
  const Shape full = {2, 3};
  ASSERT_AG(ag_op_expand(view.out(), x.get(), full.data(), 2));
  ASSERT_AG(ag_op_silu(y.out(), view.get()));
  ASSERT_AG(ag_op_maximum(m.out(), y.get(), b.get()));
  ASSERT_AG(ag_op_sum(s.out(), m.get()));
  ASSERT_AG(ag_backward(s.get(), nullptr, nullptr));
  T g;
  ASSERT_AG(ag_tensor_grad(g.out(), x.get()));
  const std::vector<double> got = read(g.get()), bv = read(b.get());
  for (size_t j = 0; j < 3; ++j) {
    const double sg = sigmoid(xv[j]), silu = xv[j] * sg, d = sg * (1 + xv[j] * (1 - sg));
    double want = 0;
    for (size_t i = 0; i < 2; ++i) want += silu > bv[i * 3 + j] ? d : 0.0;
    EXPECT_NEAR(got[j], want, 1e-14) << j;
  }
}

TEST(ElementwiseOps, ComparisonsRecordNothing) {
  Ctx ctx(0);
  T a(make(ctx.get(), AG_F32, {2}, {1, 2})), b(make(ctx.get(), AG_F32, {2}, {2, 2})), y;
  ag_tensor_requires_grad(a.get(), 1);
  ASSERT_AG(ag_op_le(y.out(), a.get(), b.get()));
  EXPECT_EQ(ag_tensor_get_requires_grad(y.get()), 0);
  EXPECT_EQ(ag_tensor_grad_fn_name(y.get()), nullptr);
  EXPECT_EQ(read(y.get()), (std::vector<double>{1, 1}));
}

// ---------------------------------------------------------------- threads

// Large contiguous inputs run in parallel chunks; the bits do not depend on
// the thread count.
TEST(ElementwiseOps, SameBitsForOneAndTwoThreads) {
  const int64_t n = 200003;
  std::vector<double> x(static_cast<size_t>(n)), z(x.size()), c(x.size());
  for (int64_t i = 0; i < n; ++i) {
    x[i] = std::sin(0.001 * static_cast<double>(i)) * 4;
    z[i] = std::cos(0.0007 * static_cast<double>(i)) * 3;
    c[i] = i % 3 == 0;
  }
  auto run = [&](int32_t threads) {
    Ctx ctx(threads);
    std::vector<std::vector<double>> outs;
    T a(make(ctx.get(), AG_F32, {n}, x)), b(make(ctx.get(), AG_F32, {n}, z)), cond(make(ctx.get(), AG_BOOL, {n}, c));
    for (const UnaryRef& u : unary_refs()) {
      T y;
      EXPECT_EQ(u.op(y.out(), a.get()), AG_OK);
      outs.push_back(read(y.get()));
    }
    for (const BinaryRef& op : binary_refs()) {
      T y;
      EXPECT_EQ(op.op(y.out(), a.get(), b.get()), AG_OK);
      outs.push_back(read(y.get()));
    }
    T w, l;
    EXPECT_EQ(ag_op_where(w.out(), cond.get(), a.get(), b.get()), AG_OK);
    EXPECT_EQ(ag_op_lerp(l.out(), a.get(), b.get(), a.get()), AG_OK);
    outs.push_back(read(w.get()));
    outs.push_back(read(l.get()));
    return outs;
  };
  const auto one = run(1), two = run(2);
  ASSERT_EQ(one.size(), two.size());
  for (size_t k = 0; k < one.size(); ++k) {
    ASSERT_EQ(std::memcmp(one[k].data(), two[k].data(), one[k].size() * sizeof(double)), 0) << "output " << k;
  }
}

// ---------------------------------------------------------------- bad input

// Runs call (which must fail) with *out preset to a sentinel, and checks the
// status, the untouched out-parameter and the message.
template <class F>
void expect_error(F call, ag_status status, const std::string& message) {
  ag_tensor* sentinel = reinterpret_cast<ag_tensor*>(static_cast<uintptr_t>(0x1234));
  ag_tensor* out = sentinel;
  const ag_status got = call(&out);
  expect_error_untouched(got, out, sentinel, status, message);
}

TEST(ElementwiseOps, BadInputNamesTheFunctionAndTheFacts) {
  Ctx ctx(0);
  T f32(make(ctx.get(), AG_F32, {2, 3}, {1, 2, 3, 4, 5, 6})), f64(make(ctx.get(), AG_F64, {3}, {1, 2, 3})),
      i64(make(ctx.get(), AG_I64, {3}, {1, 2, 3})), other(make(ctx.get(), AG_F32, {4}, {1, 2, 3, 4})),
      mask(make(ctx.get(), AG_BOOL, {3}, {1, 0, 1})), row(make(ctx.get(), AG_F32, {3}, {1, 2, 3}));
  EXPECT_EQ(ag_op_sqrt(nullptr, f32.get()), AG_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(ag_last_error_message(), "[ag_op_sqrt] the output pointer is NULL");
  expect_error([&](ag_tensor** o) { return ag_op_relu(o, nullptr); }, AG_ERR_INVALID_ARGUMENT,
               "[ag_op_relu] input x is NULL (missing: did an earlier call fail?)");
  expect_error([&](ag_tensor** o) { return ag_op_sin(o, i64.get()); }, AG_ERR_DTYPE,
               "[ag_op_sin] expects a floating tensor (f32 or f64), got i64");
  expect_error([&](ag_tensor** o) { return ag_op_clamp(o, mask.get(), 0, 1); }, AG_ERR_DTYPE,
               "[ag_op_clamp] expects a floating tensor (f32 or f64), got bool");
  expect_error([&](ag_tensor** o) { return ag_op_maximum(o, row.get(), f64.get()); }, AG_ERR_DTYPE,
               "[ag_op_maximum] dtypes f32 and f64 differ (no implicit promotion; convert with ag_op_cast)");
  expect_error([&](ag_tensor** o) { return ag_op_atan2(o, f32.get(), other.get()); }, AG_ERR_SHAPE,
               "[ag_op_atan2] cannot broadcast shapes (2,3) and (4)");
  expect_error([&](ag_tensor** o) { return ag_op_lt(o, f32.get(), other.get()); }, AG_ERR_SHAPE,
               "[ag_op_lt] cannot broadcast shapes (2,3) and (4)");
  expect_error([&](ag_tensor** o) { return ag_op_eq(o, i64.get(), i64.get()); }, AG_ERR_DTYPE,
               "[ag_op_eq] expects a floating tensor (f32 or f64), got i64");
  expect_error([&](ag_tensor** o) { return ag_op_pow(o, nullptr, row.get()); }, AG_ERR_INVALID_ARGUMENT,
               "[ag_op_pow] input a is NULL (missing: did an earlier call fail?)");
  expect_error([&](ag_tensor** o) { return ag_op_where(o, row.get(), f32.get(), row.get()); }, AG_ERR_DTYPE,
               "[ag_op_where] cond must be a bool tensor, got f32");
  expect_error([&](ag_tensor** o) { return ag_op_where(o, mask.get(), other.get(), row.get()); }, AG_ERR_SHAPE,
               "[ag_op_where] cannot broadcast shapes (3) and (4)");
  expect_error([&](ag_tensor** o) { return ag_op_where(o, nullptr, row.get(), row.get()); }, AG_ERR_INVALID_ARGUMENT,
               "[ag_op_where] input cond is NULL (missing: did an earlier call fail?)");
  expect_error([&](ag_tensor** o) { return ag_op_lerp(o, row.get(), row.get(), f64.get()); }, AG_ERR_DTYPE,
               "[ag_op_lerp] dtypes f32 and f64 differ (no implicit promotion; convert with ag_op_cast)");
  expect_error([&](ag_tensor** o) { return ag_op_lerp(o, row.get(), row.get(), nullptr); }, AG_ERR_INVALID_ARGUMENT,
               "[ag_op_lerp] input weight is NULL (missing: did an earlier call fail?)");
  expect_error([&](ag_tensor** o) { return ag_op_lerp(o, f32.get(), row.get(), other.get()); }, AG_ERR_SHAPE,
               "[ag_op_lerp] cannot broadcast shapes (2,3) and (4)");
  expect_error([&](ag_tensor** o) { return ag_op_hardtanh(o, row.get(), 1, -1); }, AG_ERR_INVALID_ARGUMENT,
               "[ag_op_hardtanh] min_val 1 must not exceed max_val -1 (nor be NaN)");
  expect_error([&](ag_tensor** o) { return ag_op_softplus(o, row.get(), 0, 20); }, AG_ERR_INVALID_ARGUMENT,
               "[ag_op_softplus] beta must be nonzero and threshold a number, got beta 0 and threshold 20");
  Ctx other_ctx(0);
  T foreign(make(other_ctx.get(), AG_F32, {3}, {1, 2, 3}));
  expect_error([&](ag_tensor** o) { return ag_op_minimum(o, row.get(), foreign.get()); }, AG_ERR_CONTEXT,
               "[ag_op_minimum] the tensors belong to different contexts");
  expect_error([&](ag_tensor** o) { return ag_op_where(o, mask.get(), foreign.get(), foreign.get()); }, AG_ERR_CONTEXT,
               "[ag_op_where] the tensors belong to different contexts");
}

}  // namespace
