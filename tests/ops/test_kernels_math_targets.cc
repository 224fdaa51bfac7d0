// Forward correctness of the math and activation kernels (unary_math-inl.h,
// erf-inl.h, binary_math-inl.h) and of compare / where / lerp (select.cc) on
// every compiled Highway target the CPU supports, against scalar references
// in long double: accuracy sweeps with stated ulp bounds, every tail length,
// IEEE special values, strided and broadcast inputs.
#include <cstdio>
#include <functional>

#include "kernel_test_support.h"

namespace ag::kernels {
namespace {

using namespace ag::kernels::testing;
using LD = long double;

class MathOnTarget : public OnTargetTest {
 protected:
  void SetUp() override {
    OnTargetTest::SetUp();
    ASSERT_EQ(elementwise_target(), GetParam()) << "dispatch did not reach the target";
    ASSERT_EQ(select_target(), GetParam()) << "dispatch did not reach the target";
  }
};

INSTANTIATE_TEST_SUITE_P(Kernels, MathOnTarget, ::testing::ValuesIn(targets_to_cover()), target_name);

// ---------------------------------------------------------------- unary

LD sigmoid_ref(LD x) { return 1 / (1 + std::exp(-x)); }
LD softplus_ref(LD x, LD beta, LD threshold) {
  return x * beta > threshold ? x : std::log1p(std::exp(beta * x)) / beta;
}

// One unary kind: its reference, the attributes it runs with, the ulp bounds
// (f32, f64) over the accuracy range [lo, hi] (plus the edge values), and
// whether random bit patterns (all binades) are inside that range.
struct UnaryCase {
  UnaryKind k;
  const char* name;
  double a1, a2;
  std::function<LD(LD)> ref;
  double ulp32, ulp64;
  double lo, hi;
};

const double kInf = std::numeric_limits<double>::infinity();

// Bounds: the measured maxima of the sweeps below on AVX3_DL, AVX3, AVX2,
// SSE4 and SCALAR (see the printed figures). The f64 bound of the correctly
// rounded ops (sqrt, square, reciprocal) is 1 because the long double
// reference rounds twice. gelu_tanh: the rounding of its argument
// 2u = 2 sqrt(2/pi) (x + 0.044715 x^3), amplified by |2u| in the lower tail,
// dominates (as in any evaluation of the formula in the lane type); swept
// above -3. silu and mish are swept above -80: below about
// -87 (f32) / -708 (f64) their results are subnormal and keep fewer digits.
// erfc is swept below 9, where its f32 results are still normal. gelu's
// f32 bound is its maximum over every f32 input from -12 up (8 on AVX2, 7 on
// AVX-512), which the sweep's samples do not reach.
const std::vector<UnaryCase>& unary_cases() {
  static const std::vector<UnaryCase> cases = {
      {UnaryKind::Abs, "abs", 0, 0, [](LD x) { return std::fabs(x); }, 0, 0, -kInf, kInf},
      {UnaryKind::Sign, "sign", 0, 0, [](LD x) { return x > 0 ? LD(1) : x < 0 ? LD(-1) : x; }, 0, 0, -kInf, kInf},
      {UnaryKind::Expm1, "expm1", 0, 0, [](LD x) { return std::expm1(x); }, 3, 4, -kInf, kInf},
      {UnaryKind::Log1p, "log1p", 0, 0, [](LD x) { return std::log1p(x); }, 2, 2, -kInf, kInf},
      {UnaryKind::Log2, "log2", 0, 0, [](LD x) { return std::log2(x); }, 2, 2, -kInf, kInf},
      {UnaryKind::Sqrt, "sqrt", 0, 0, [](LD x) { return std::sqrt(x); }, 0, 1, -kInf, kInf},
      {UnaryKind::Rsqrt, "rsqrt", 0, 0, [](LD x) { return 1 / std::sqrt(x); }, 1, 1, -kInf, kInf},
      {UnaryKind::Square, "square", 0, 0, [](LD x) { return x * x; }, 0, 1, -kInf, kInf},
      {UnaryKind::Reciprocal, "reciprocal", 0, 0, [](LD x) { return 1 / x; }, 0, 1, -kInf, kInf},
      {UnaryKind::Sin, "sin", 0, 0, [](LD x) { return std::sin(x); }, 2, 2, -1e4, 1e4},
      {UnaryKind::Cos, "cos", 0, 0, [](LD x) { return std::cos(x); }, 2, 3, -1e4, 1e4},
      {UnaryKind::Tan, "tan", 0, 0, [](LD x) { return std::tan(x); }, 4, 4, -1e4, 1e4},
      {UnaryKind::Asin, "asin", 0, 0, [](LD x) { return std::asin(x); }, 2, 2, -kInf, kInf},
      {UnaryKind::Acos, "acos", 0, 0, [](LD x) { return std::acos(x); }, 2, 2, -kInf, kInf},
      {UnaryKind::Atan, "atan", 0, 0, [](LD x) { return std::atan(x); }, 2, 2, -kInf, kInf},
      {UnaryKind::Sinh, "sinh", 0, 0, [](LD x) { return std::sinh(x); }, 3, 3, -kInf, kInf},
      {UnaryKind::Cosh, "cosh", 0, 0, [](LD x) { return std::cosh(x); }, 3, 3, -kInf, kInf},
      {UnaryKind::Erf, "erf", 0, 0, [](LD x) { return std::erf(x); }, 2, 2, -kInf, kInf},
      {UnaryKind::Erfc, "erfc", 0, 0, [](LD x) { return std::erfc(x); }, 4, 5, -kInf, 9},
      {UnaryKind::Sigmoid, "sigmoid", 0, 0, sigmoid_ref, 3, 3, -kInf, kInf},
      {UnaryKind::Relu, "relu", 0, 0, [](LD x) { return x > 0 || x != x ? x : LD(0); }, 0, 0, -kInf, kInf},
      {UnaryKind::LeakyRelu, "leaky_relu", 0.125, 0, [](LD x) { return x > 0 ? x : x * LD(0.125); }, 0, 0, -kInf, kInf},
      {UnaryKind::Elu, "elu", 1.5, 0, [](LD x) { return x > 0 ? x : LD(1.5) * std::expm1(x); }, 2, 2, -kInf, kInf},
      {UnaryKind::Selu, "selu", 0, 0,
       [](LD x) {
         const LD alpha = 1.6732632423543772848170429916717L, scale = 1.0507009873554804934193349852946L;
         return scale * (x > 0 ? x : alpha * std::expm1(x));
       },
       3, 3, -kInf, kInf},
      {UnaryKind::Silu, "silu", 0, 0, [](LD x) { return x * sigmoid_ref(x); }, 3, 3, -80, kInf},
      {UnaryKind::Softplus, "softplus", 2, 10, [](LD x) { return softplus_ref(x, 2, 10); }, 3, 3, -kInf, kInf},
      {UnaryKind::Mish, "mish", 0, 0, [](LD x) { return x * std::tanh(softplus_ref(x, 1, 20)); }, 4, 4, -80, kInf},
      {UnaryKind::Clamp, "clamp", -0.5, 2, [](LD x) { return x < LD(-0.5) ? LD(-0.5) : x > 2 ? LD(2) : x; }, 0, 0, -kInf, kInf},
      {UnaryKind::Gelu, "gelu", 0, 0,
       [](LD x) { return x * std::erfc(-x * 0.70710678118654752440084436210485L) / 2; }, 8, 6, -12, kInf},
      {UnaryKind::GeluTanh, "gelu_tanh", 0, 0,
       [](LD x) {
         const LD k = 0.79788456080286535587989211986876L;
         return x / 2 * (1 + std::tanh(k * (x + LD(0.044715) * x * x * x)));
       },
       14, 14, -3, kInf},
      {UnaryKind::Floor, "floor", 0, 0, [](LD x) { return std::floor(x); }, 0, 0, -kInf, kInf},
      {UnaryKind::Ceil, "ceil", 0, 0, [](LD x) { return std::ceil(x); }, 0, 0, -kInf, kInf},
      {UnaryKind::Round, "round", 0, 0, [](LD x) { return std::nearbyint(x); }, 0, 0, -kInf, kInf},
      {UnaryKind::Trunc, "trunc", 0, 0, [](LD x) { return std::trunc(x); }, 0, 0, -kInf, kInf},
      {UnaryKind::InsideOpen, "inside_open", -1, 2, [](LD x) { return x > -1 && x < 2 ? LD(1) : LD(0); }, 0, 0, -kInf, kInf},
      {UnaryKind::InsideClosed, "inside_closed", -1, 2, [](LD x) { return x >= -1 && x <= 2 ? LD(1) : LD(0); }, 0, 0, -kInf, kInf},
  };
  return cases;
}

template <class T>
T ref_of(const UnaryCase& c, T x) {
  return static_cast<T>(c.ref(static_cast<LD>(x)));
}

template <class T>
double bound_of(const UnaryCase& c) {
  return sizeof(T) == 4 ? c.ulp32 : c.ulp64;
}

// Inputs of the sweep: edge values, random bit patterns, uniform samples over
// [-4, 4] and over the range where results are not saturated, values near
// 0 in all binades; all within [c.lo, c.hi] (NaN kept).
template <class T>
std::vector<T> sweep_inputs(const UnaryCase& c, size_t per_source) {
  std::mt19937_64 rng(77 + static_cast<int>(c.k));
  const double wide = sizeof(T) == 4 ? 90.0 : 720.0;
  std::uniform_real_distribution<double> small(-4.0, 4.0), big(-wide, wide), unit(-1.0, 1.0);
  std::vector<T> v = edge_values<T>();
  for (size_t i = 0; i < per_source; ++i) {
    v.push_back(bits_to<T>(rng));
    v.push_back(static_cast<T>(small(rng)));
    v.push_back(static_cast<T>(big(rng)));
    v.push_back(static_cast<T>(unit(rng) * std::ldexp(1.0, -static_cast<int>(rng() % 40))));
    v.push_back(static_cast<T>(std::round(small(rng) * 4) / 8));  // halfway cases of round
  }
  std::vector<T> in;
  for (T x : v) {
    if (std::isnan(x) || (x >= c.lo && x <= c.hi)) in.push_back(x);
  }
  return in;
}

template <class T>
void check_unary_accuracy(const char* target) {
  for (const UnaryCase& c : unary_cases()) {
    const std::vector<T> x = sweep_inputs<T>(c, 20000);
    const std::vector<T> y = run_unary<T>(c.k, x, static_cast<T>(c.a1), static_cast<T>(c.a2));
    double worst = 0;
    size_t at = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double e = ulp_diff(y[i], ref_of(c, x[i]));
      if (e > worst) worst = e, at = i;
    }
    std::printf("[ kernels ] %-8s %s %-13s max error %g ulp (at x = %.17g)\n", target, sizeof(T) == 4 ? "f32" : "f64",
                c.name, worst, static_cast<double>(x[at]));
    EXPECT_LE(worst, bound_of<T>(c)) << c.name << " x = " << x[at] << " got " << y[at] << " want " << ref_of(c, x[at]);
  }
}

// unary_one (one element, the small-graph path) gives the bits of the
// whole-shape kernel for every kind, input and target.
template <class T>
void check_unary_one_bits() {
  for (const UnaryCase& c : unary_cases()) {
    std::vector<T> x = sweep_inputs<T>(c, 2000);
    for (T e : edge_values<T>()) {
      if (std::isnan(e) || (e >= c.lo && e <= c.hi)) x.push_back(e);
    }
    const std::vector<T> y = run_unary<T>(c.k, x, static_cast<T>(c.a1), static_cast<T>(c.a2));
    for (size_t i = 0; i < x.size(); ++i) {
      T one = T(0);
      unary_one(c.k, dtype_of<T>(), reinterpret_cast<const char*>(&x[i]), reinterpret_cast<char*>(&one),
                static_cast<double>(static_cast<T>(c.a1)), static_cast<double>(static_cast<T>(c.a2)));
      ASSERT_TRUE(same_bits(one, y[i])) << c.name << " x = " << x[i] << " one " << one << " rows " << y[i];
    }
  }
}

TEST_P(MathOnTarget, UnaryOneMatchesRowsF32) { check_unary_one_bits<float>(); }
TEST_P(MathOnTarget, UnaryOneMatchesRowsF64) { check_unary_one_bits<double>(); }

TEST_P(MathOnTarget, UnaryAccuracyF32) { check_unary_accuracy<float>(target()); }
TEST_P(MathOnTarget, UnaryAccuracyF64) { check_unary_accuracy<double>(target()); }

// Every tail length (1..67) and a long row ending at a guard page, with edge
// values in the tail.
template <class T>
void check_unary_sizes() {
  std::mt19937_64 rng(8);
  std::uniform_real_distribution<double> uni(-3.0, 3.0);
  const std::vector<T> edges = edge_values<T>();
  for (const UnaryCase& c : unary_cases()) {
    for (size_t n : {size_t{1}, size_t{2}, size_t{3}, size_t{5}, size_t{7}, size_t{8}, size_t{9}, size_t{15},
                     size_t{16}, size_t{17}, size_t{31}, size_t{33}, size_t{63}, size_t{67}, size_t{1003}}) {
      std::vector<T> x(n);
      for (T& v : x) v = static_cast<T>(uni(rng));
      for (size_t j = 0; j < edges.size() && j < n; ++j) x[n - 1 - j] = edges[j];
      std::vector<T> in;
      for (T v : x) in.push_back(std::isnan(v) || (v >= c.lo && v <= c.hi) ? v : T(0.25));
      const std::vector<T> y = run_unary<T>(c.k, in, static_cast<T>(c.a1), static_cast<T>(c.a2));
      for (size_t i = 0; i < n; ++i) {
        ASSERT_LE(ulp_diff(y[i], ref_of(c, in[i])), bound_of<T>(c)) << c.name << " n = " << n << " x = " << in[i];
      }
    }
    EXPECT_TRUE(run_unary<T>(c.k, {}).empty());
  }
}

TEST_P(MathOnTarget, UnarySizesAndTailsF32) { check_unary_sizes<float>(); }
TEST_P(MathOnTarget, UnarySizesAndTailsF64) { check_unary_sizes<double>(); }

// Special values, exactly (sign of zero included).
template <class T>
void check_unary_edges() {
  using L = std::numeric_limits<T>;
  const T inf = L::infinity(), nan = L::quiet_NaN(), z = T(0);
  struct Edge {
    UnaryKind k;
    T x, want;
    double a1 = 0, a2 = 0;
  };
  const T pi2 = static_cast<T>(1.5707963267948966192313216916398L);
  const std::vector<Edge> edges = {
      {UnaryKind::Abs, -z, z},          {UnaryKind::Abs, -inf, inf},      {UnaryKind::Abs, nan, nan},
      {UnaryKind::Sign, -z, -z},        {UnaryKind::Sign, z, z},          {UnaryKind::Sign, nan, nan},
      {UnaryKind::Sign, -inf, T(-1)},   {UnaryKind::Sign, L::denorm_min(), T(1)},
      {UnaryKind::Expm1, -z, -z},       {UnaryKind::Expm1, -inf, T(-1)},  {UnaryKind::Expm1, inf, inf},
      {UnaryKind::Expm1, nan, nan},     {UnaryKind::Expm1, L::max(), inf}, {UnaryKind::Expm1, L::lowest(), T(-1)},
      {UnaryKind::Log1p, T(-1), -inf},  {UnaryKind::Log1p, T(-2), nan},   {UnaryKind::Log1p, -z, -z},
      {UnaryKind::Log1p, inf, inf},     {UnaryKind::Log1p, -inf, nan},    {UnaryKind::Log1p, nan, nan},
      {UnaryKind::Log2, z, -inf},       {UnaryKind::Log2, -z, -inf},      {UnaryKind::Log2, T(-1), nan},
      {UnaryKind::Log2, inf, inf},      {UnaryKind::Log2, nan, nan},      {UnaryKind::Log2, T(8), T(3)},
      {UnaryKind::Log2, T(1), z},       {UnaryKind::Sqrt, -z, -z},        {UnaryKind::Sqrt, T(-1), nan},
      {UnaryKind::Rsqrt, z, inf},       {UnaryKind::Rsqrt, -z, -inf},     {UnaryKind::Rsqrt, inf, z},
      {UnaryKind::Reciprocal, -z, -inf}, {UnaryKind::Sin, -z, -z},        {UnaryKind::Sin, inf, nan},
      {UnaryKind::Sin, -inf, nan},      {UnaryKind::Sin, nan, nan},       {UnaryKind::Cos, z, T(1)},
      {UnaryKind::Cos, inf, nan},       {UnaryKind::Tan, -z, -z},         {UnaryKind::Tan, -inf, nan},
      {UnaryKind::Asin, -z, -z},        {UnaryKind::Asin, T(1.5), nan},   {UnaryKind::Asin, nan, nan},
      {UnaryKind::Acos, T(-1.5), nan},  {UnaryKind::Acos, T(1), z},       {UnaryKind::Acos, inf, nan},
      {UnaryKind::Atan, -z, -z},        {UnaryKind::Atan, inf, pi2},      {UnaryKind::Atan, -inf, -pi2},
      {UnaryKind::Atan, nan, nan},      {UnaryKind::Sinh, -z, -z},        {UnaryKind::Sinh, inf, inf},
      {UnaryKind::Sinh, -inf, -inf},    {UnaryKind::Sinh, L::lowest(), -inf}, {UnaryKind::Sinh, nan, nan},
      {UnaryKind::Cosh, z, T(1)},       {UnaryKind::Cosh, -inf, inf},     {UnaryKind::Cosh, L::max(), inf},
      {UnaryKind::Cosh, nan, nan},      {UnaryKind::Erf, -z, -z},         {UnaryKind::Erf, inf, T(1)},
      {UnaryKind::Erf, -inf, T(-1)},    {UnaryKind::Erf, nan, nan},       {UnaryKind::Erf, T(7), T(1)},
      {UnaryKind::Sigmoid, inf, T(1)},  {UnaryKind::Sigmoid, -inf, z},    {UnaryKind::Sigmoid, nan, nan},
      {UnaryKind::Sigmoid, z, T(0.5)},  {UnaryKind::Relu, -z, z},         {UnaryKind::Relu, nan, nan},
      {UnaryKind::Relu, -inf, z},       {UnaryKind::Relu, inf, inf},      {UnaryKind::LeakyRelu, -inf, -inf, 0.5},
      {UnaryKind::LeakyRelu, nan, nan, 0.5}, {UnaryKind::Elu, -inf, T(-2), 2.0}, {UnaryKind::Elu, nan, nan, 2.0},
      {UnaryKind::Silu, inf, inf},      {UnaryKind::Silu, nan, nan},      {UnaryKind::Softplus, inf, inf, 1, 20},
      {UnaryKind::Softplus, -inf, z, 1, 20}, {UnaryKind::Softplus, nan, nan, 1, 20},
      {UnaryKind::Mish, inf, inf},      {UnaryKind::Mish, nan, nan},      {UnaryKind::Mish, -z, -z},
      {UnaryKind::Clamp, nan, nan, -1, 1}, {UnaryKind::Clamp, T(5), T(1), -1, 1},
      {UnaryKind::Clamp, T(5), T(5), -1, std::nan("")}, {UnaryKind::Clamp, T(-5), T(-5), std::nan(""), 1},
      {UnaryKind::Clamp, T(0), T(-2), 3, -2}, {UnaryKind::Clamp, -inf, T(-1), -1, 1},
      {UnaryKind::Gelu, inf, inf},      {UnaryKind::Gelu, nan, nan},      {UnaryKind::Gelu, -z, -z},
      {UnaryKind::Gelu, T(-40), -z},    {UnaryKind::GeluTanh, inf, inf},  {UnaryKind::GeluTanh, nan, nan},
      {UnaryKind::Floor, T(-0.5), T(-1)}, {UnaryKind::Floor, -z, -z},     {UnaryKind::Floor, -inf, -inf},
      {UnaryKind::Floor, nan, nan},     {UnaryKind::Ceil, T(-0.5), -z},   {UnaryKind::Ceil, T(0.25), T(1)},
      {UnaryKind::Round, T(0.5), z},    {UnaryKind::Round, T(1.5), T(2)}, {UnaryKind::Round, T(2.5), T(2)},
      {UnaryKind::Round, T(-2.5), T(-2)}, {UnaryKind::Round, T(-0.4), -z}, {UnaryKind::Round, inf, inf},
      {UnaryKind::Round, L::max(), L::max()}, {UnaryKind::Trunc, T(-1.75), T(-1)}, {UnaryKind::Trunc, T(-0.5), -z},
      {UnaryKind::Trunc, nan, nan},     {UnaryKind::InsideOpen, nan, z, -1, 1}, {UnaryKind::InsideClosed, T(1), T(1), -1, 1},
      {UnaryKind::InsideOpen, T(1), z, -1, 1},
  };
  for (const Edge& e : edges) {
    for (size_t n : {size_t{1}, size_t{64}}) {  // alone (a tail) and in full vectors
      const std::vector<T> y = run_unary<T>(e.k, std::vector<T>(n, e.x), static_cast<T>(e.a1), static_cast<T>(e.a2));
      for (size_t i = 0; i < n; ++i) {
        ASSERT_TRUE(same_bits(y[i], e.want)) << "kind " << static_cast<int>(e.k) << " (" << e.x << ") = " << y[i]
                                            << ", want " << e.want << " (n = " << n << ")";
      }
    }
  }
}

TEST_P(MathOnTarget, UnaryEdgesF32) { check_unary_edges<float>(); }
TEST_P(MathOnTarget, UnaryEdgesF64) { check_unary_edges<double>(); }

// A strided or transposed input gives the bits of the contiguous path.
template <class T>
void check_unary_strided() {
  std::mt19937_64 rng(12);
  std::uniform_real_distribution<double> uni(-3.0, 3.0);
  for (const UnaryCase& c : unary_cases()) {
    const int64_t r = 3, cols = 37;
    std::vector<T> m(static_cast<size_t>(r * cols));
    for (T& v : m) v = static_cast<T>(uni(rng));
    std::vector<T> gathered(m.size());
    for (int64_t i = 0; i < r; ++i) {
      for (int64_t j = 0; j < cols; ++j) gathered[i * cols + j] = m[j * r + i];
    }
    const std::vector<T> want = run_unary<T>(c.k, gathered, static_cast<T>(c.a1), static_cast<T>(c.a2));
    std::vector<T> out(m.size());
    const Dims shape = {r, cols}, strides = {1, r};
    unary(c.k, dtype_of<T>(), shape, View{reinterpret_cast<const char*>(m.data()), &strides},
          reinterpret_cast<char*>(out.data()), c.a1, c.a2);
    for (size_t i = 0; i < out.size(); ++i) ASSERT_TRUE(same_bits(out[i], want[i])) << c.name << " i " << i;
  }
}

TEST_P(MathOnTarget, UnaryStridedF32) { check_unary_strided<float>(); }
TEST_P(MathOnTarget, UnaryStridedF64) { check_unary_strided<double>(); }

// ---------------------------------------------------------------- binary

struct BinaryCase {
  BinaryKind k;
  const char* name;
  std::function<LD(LD, LD)> ref;
  double ulp;  // both dtypes; 0 = exact
};

const std::vector<BinaryCase>& binary_cases() {
  static const std::vector<BinaryCase> cases = {
      {BinaryKind::Maximum, "maximum", [](LD a, LD b) { return a != a || b != b ? a + b : std::max(a, b); }, 0},
      {BinaryKind::Minimum, "minimum", [](LD a, LD b) { return a != a || b != b ? a + b : std::min(a, b); }, 0},
      {BinaryKind::Atan2, "atan2", [](LD a, LD b) { return std::atan2(a, b); }, 3},
      {BinaryKind::Pow, "pow", [](LD a, LD b) { return std::pow(a, b); }, 1},
      {BinaryKind::Fmod, "fmod", [](LD a, LD b) { return std::fmod(a, b); }, 0},
      {BinaryKind::Remainder, "remainder",
       [](LD a, LD b) {
         LD r = std::fmod(a, b);
         if (r != 0 && ((r < 0) != (b < 0))) r += b;
         return r;
       },
       0},
      {BinaryKind::GreaterShare, "greater_share", [](LD a, LD b) { return a < b ? LD(0) : a == b ? LD(0.5) : LD(1); }, 0},  // NaN: 1, as PyTorch
  };
  return cases;
}

// out = op(a, b) over `shape` read through strides; each element within the
// case's ulp bound of the reference (remainder's reference rounds once more
// in T, so it is computed in T).
template <class T>
void check_binary_case(const BinaryCase& c, const Dims& shape, const T* a, const Dims& sa, const T* b, const Dims& sb,
                       const char* label) {
  const int64_t n = numel_of(shape);
  Guarded<T> out(static_cast<size_t>(n));
  binary(c.k, dtype_of<T>(), shape, View{reinterpret_cast<const char*>(a), &sa}, View{reinterpret_cast<const char*>(b), &sb},
         out.bytes());
  std::vector<int64_t> idx(static_cast<size_t>(shape.size()), 0);
  for (int64_t flat = 0; flat < n; ++flat) {
    int64_t oa = 0, ob = 0;
    for (int d = 0; d < shape.size(); ++d) oa += idx[d] * sa[d], ob += idx[d] * sb[d];
    T want = static_cast<T>(c.ref(a[oa], b[ob]));
    if (c.k == BinaryKind::Remainder) {
      T r = std::fmod(a[oa], b[ob]);
      want = r != 0 && ((r < 0) != (b[ob] < 0)) ? r + b[ob] : r;
    }
    const T got = out[static_cast<size_t>(flat)];
    ASSERT_LE(ulp_diff(got, want), c.ulp) << c.name << " " << label << " at " << flat << ": " << a[oa] << ", " << b[ob]
                                          << " -> " << got << ", want " << want;
    for (int d = shape.size() - 1; d >= 0; --d) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

template <class T>
void check_binary() {
  std::mt19937_64 rng(4);
  std::uniform_real_distribution<double> uni(-4.0, 4.0);
  const std::vector<T> edges = edge_values<T>();
  for (const BinaryCase& c : binary_cases()) {
    for (size_t n : {size_t{1}, size_t{3}, size_t{7}, size_t{16}, size_t{17}, size_t{33}, size_t{67}, size_t{1003}}) {
      Guarded<T> a(n), b(n);
      for (size_t i = 0; i < n; ++i) {
        a[i] = static_cast<T>(uni(rng));
        b[i] = i % 5 == 0 ? a[i] : static_cast<T>(uni(rng));  // ties for maximum and minimum
      }
      for (size_t j = 0; j < n && j < edges.size(); ++j) {
        a[n - 1 - j] = edges[j];
        b[n - 1 - j] = edges[(j * 7 + 3) % edges.size()];
      }
      const Dims shape = dims1(n), one = {1}, zero = {0};
      check_binary_case<T>(c, shape, a.data(), one, b.data(), one, "contiguous");
      check_binary_case<T>(c, shape, a.data(), one, b.data() + n - 1, zero, "b broadcast");
      check_binary_case<T>(c, shape, a.data() + n - 1, zero, b.data(), one, "a broadcast");
      if (n >= 2) check_binary_case<T>(c, dims1(n / 2), a.data(), Dims{2}, b.data(), one, "a stride 2");
      const int64_t r = 3, cols = static_cast<int64_t>(n);
      std::vector<T> mat(static_cast<size_t>(r * cols));
      for (T& v : mat) v = static_cast<T>(uni(rng));
      check_binary_case<T>(c, Dims{r, cols}, b.data(), Dims{0, 1}, mat.data(), Dims{1, r}, "row x mat^T");
    }
  }
}

TEST_P(MathOnTarget, BinaryF32) { check_binary<float>(); }
TEST_P(MathOnTarget, BinaryF64) { check_binary<double>(); }

// atan2's special values (C99 Annex F), exactly.
template <class T>
void check_atan2_edges() {
  using L = std::numeric_limits<T>;
  const T inf = L::infinity(), nan = L::quiet_NaN(), z = T(0);
  const std::vector<T> vals = {z, -z, inf, -inf, nan, T(1), T(-1), L::denorm_min(), L::max()};
  for (T y : vals) {
    for (T x : vals) {
      const T want = std::atan2(y, x);
      const Dims shape = {1}, one = {1};
      T out = 0;
      binary(BinaryKind::Atan2, dtype_of<T>(), shape, View{reinterpret_cast<const char*>(&y), &one},
             View{reinterpret_cast<const char*>(&x), &one}, reinterpret_cast<char*>(&out));
      const bool special = !std::isfinite(x) || !std::isfinite(y) || x == 0 || y == 0;
      if (special) {
        EXPECT_TRUE(same_bits(out, want)) << "atan2(" << y << ", " << x << ") = " << out << ", want " << want;
      } else {
        EXPECT_LE(ulp_diff(out, want), 3) << "atan2(" << y << ", " << x << ")";
      }
    }
  }
}

// pow's special values (C99 Annex F) for every pair of special operands,
// exactly as std::pow; other pairs within 1 ulp.
template <class T>
void check_pow_edges() {
  using L = std::numeric_limits<T>;
  const T inf = L::infinity(), nan = L::quiet_NaN(), z = T(0);
  const std::vector<T> vals = {z,    -z,   inf,  -inf, nan,      T(1),     T(-1),          T(2),     T(-2),
                               T(3), T(-3), T(0.5), T(-0.5), T(2.5), T(-2.5), L::denorm_min(), L::max(), L::lowest(),
                               T(1e-3), T(100), T(-7)};
  for (T x : vals) {
    for (T y : vals) {
      const T want = std::pow(x, y);
      const Dims shape = {1}, one = {1};
      T out = 0;
      binary(BinaryKind::Pow, dtype_of<T>(), shape, View{reinterpret_cast<const char*>(&x), &one},
             View{reinterpret_cast<const char*>(&y), &one}, reinterpret_cast<char*>(&out));
      const bool special = !std::isfinite(x) || !std::isfinite(y) || x == 0 || y == 0 || !std::isfinite(want) ||
                           want == 0 || x == 1;
      if (special) {
        EXPECT_TRUE(same_bits(out, want)) << "pow(" << x << ", " << y << ") = " << out << ", want " << want;
      } else {
        EXPECT_LE(ulp_diff(out, static_cast<T>(std::pow(static_cast<LD>(x), static_cast<LD>(y)))), 1)
            << "pow(" << x << ", " << y << ") = " << out;
      }
    }
  }
}

TEST_P(MathOnTarget, PowEdgesF32) { check_pow_edges<float>(); }
TEST_P(MathOnTarget, PowEdgesF64) { check_pow_edges<double>(); }

TEST_P(MathOnTarget, Atan2EdgesF32) { check_atan2_edges<float>(); }
TEST_P(MathOnTarget, Atan2EdgesF64) { check_atan2_edges<double>(); }

// sigmoid_backward: exactly the scalar formula (g y) (1 - y).
template <class T>
void check_sigmoid_backward() {
  std::mt19937_64 rng(6);
  std::uniform_real_distribution<double> uni(-2.0, 2.0);
  for (size_t n : {size_t{1}, size_t{9}, size_t{31}, size_t{130}}) {
    Guarded<T> g(n), y(n), out(n);
    for (size_t i = 0; i < n; ++i) g[i] = static_cast<T>(uni(rng)), y[i] = static_cast<T>(uni(rng));
    const Dims shape = dims1(n), one = {1};
    binary(BinaryKind::SigmoidBackward, dtype_of<T>(), shape, View{g.bytes(), &one}, View{y.bytes(), &one}, out.bytes());
    for (size_t i = 0; i < n; ++i) ASSERT_TRUE(same_bits(out[i], (g[i] * y[i]) * (T(1) - y[i])));
  }
}

TEST_P(MathOnTarget, SigmoidBackwardF32) { check_sigmoid_backward<float>(); }
TEST_P(MathOnTarget, SigmoidBackwardF64) { check_sigmoid_backward<double>(); }

// The fused activation gradients g * f'(x). f' = p + q has terms of both
// signs (gelu' crosses 0 near x = -0.75), so the error is bounded relative
// to |g| (|p| + |q|): within 8 ulp of that magnitude (gelu_tanh_backward
// above x = -3, as gelu_tanh). Limits at +-inf are 1 and 0; NaN stays NaN.
template <class T>
void check_fused_activation_gradients() {
  struct Fused {
    BinaryKind k;
    const char* name;
    // (p, q) with f' = p + q.
    std::function<std::pair<LD, LD>(LD)> terms;
    double lo;
  };
  const LD k = 0.79788456080286535587989211986876L, c = 0.044715L;
  const std::vector<Fused> cases = {
      {BinaryKind::GeluBackward, "gelu_backward",
       [](LD x) {
         const LD pdf = std::exp(-x * x / 2) * 0.39894228040143267793994605993438L;
         return std::make_pair(std::erfc(-x * 0.70710678118654752440084436210485L) / 2, x * pdf);
       },
       -12},
      {BinaryKind::GeluTanhBackward, "gelu_tanh_backward",
       [k, c](LD x) {
         const LD s = sigmoid_ref(2 * k * (x + c * x * x * x));
         return std::make_pair(s, x * s * (1 - s) * 2 * k * (1 + 3 * c * x * x));
       },
       -3},
      {BinaryKind::MishBackward, "mish_backward",
       [](LD x) {
         const LD t = std::tanh(softplus_ref(x, 1, 20));
         return std::make_pair(t, x * sigmoid_ref(x) * (1 - t * t));
       },
       -12},
      {BinaryKind::SiluBackward, "silu_backward",
       [](LD x) {
         const LD s = sigmoid_ref(x);
         return std::make_pair(s, s * x * (1 - s));
       },
       -12},
  };
  std::mt19937_64 rng(15);
  std::uniform_real_distribution<double> uni(-12.0, 12.0), unit(-2.0, 2.0);
  const T eps = std::numeric_limits<T>::epsilon();
  for (const Fused& f : cases) {
    for (size_t n : {size_t{1}, size_t{7}, size_t{16}, size_t{33}, size_t{4001}}) {
      Guarded<T> g(n), x(n), out(n);
      for (size_t i = 0; i < n; ++i) g[i] = static_cast<T>(unit(rng)), x[i] = static_cast<T>(std::max(f.lo, uni(rng)));
      const Dims shape = dims1(n), one = {1};
      binary(f.k, dtype_of<T>(), shape, View{g.bytes(), &one}, View{x.bytes(), &one}, out.bytes());
      for (size_t i = 0; i < n; ++i) {
        const auto [p, q] = f.terms(x[i]);
        const LD want = g[i] * (p + q), scale = std::fabs(g[i]) * (std::fabs(p) + std::fabs(q));
        ASSERT_LE(std::fabs(out[i] - want), 8 * eps * scale + std::numeric_limits<T>::denorm_min())
            << f.name << "(" << g[i] << ", " << x[i] << ") = " << out[i] << ", want " << static_cast<double>(want);
      }
    }
    const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
    for (const auto& [xv, want] : std::vector<std::pair<T, T>>{{inf, T(1)}, {-inf, T(0)}, {nan, nan}}) {
      const T gv = T(1);
      T o = 0;
      const Dims shape = {1}, one = {1};
      binary(f.k, dtype_of<T>(), shape, View{reinterpret_cast<const char*>(&gv), &one},
             View{reinterpret_cast<const char*>(&xv), &one}, reinterpret_cast<char*>(&o));
      EXPECT_TRUE(same_bits(o, want) || (want == 0 && o == 0)) << f.name << "(1, " << xv << ") = " << o;
    }
  }
}

TEST_P(MathOnTarget, FusedActivationGradientsF32) { check_fused_activation_gradients<float>(); }
TEST_P(MathOnTarget, FusedActivationGradientsF64) { check_fused_activation_gradients<double>(); }

// ---------------------------------------------------------------- compare, where, lerp

// Visits the flat output index and the element offsets of each operand.
template <int N, class F>
void walk(const Dims& shape, const Dims* const (&strides)[N], F f) {
  const int64_t n = numel_of(shape);
  std::vector<int64_t> idx(static_cast<size_t>(shape.size()), 0);
  for (int64_t flat = 0; flat < n; ++flat) {
    int64_t off[N] = {};
    for (int k = 0; k < N; ++k)
      for (int d = 0; d < shape.size(); ++d) off[k] += idx[d] * (*strides[k])[d];
    f(flat, off);
    for (int d = shape.size() - 1; d >= 0; --d) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

template <class T>
void check_select() {
  std::mt19937_64 rng(10);
  std::uniform_real_distribution<double> uni(-2.0, 2.0);
  const std::vector<T> edges = edge_values<T>();
  for (size_t n : {size_t{1}, size_t{5}, size_t{16}, size_t{17}, size_t{67}, size_t{300}, size_t{1003}}) {
    Guarded<T> a(n), b(n), w(n);
    Guarded<uint8_t> cond(n);
    for (size_t i = 0; i < n; ++i) {
      a[i] = static_cast<T>(uni(rng));
      b[i] = i % 4 == 0 ? a[i] : static_cast<T>(uni(rng));
      w[i] = static_cast<T>(uni(rng));
      cond[i] = static_cast<uint8_t>(rng() % 2);
    }
    for (size_t j = 0; j < n && j < edges.size(); ++j) a[n - 1 - j] = edges[j], b[n - 1 - j] = edges[(j * 5) % edges.size()];
    const int64_t cols = static_cast<int64_t>(n);
    const Dims one = {1}, zero = {0};
    // (shape, a, b, w/cond strides) layouts: contiguous, b broadcast, a stride 2 over half.
    struct Layout {
      Dims shape, sa, sb, sc;
      const char* label;
    };
    const std::vector<Layout> layouts = {
        {dims1(n), one, one, one, "contiguous"},
        {dims1(n), one, zero, one, "b broadcast"},
        {dims1((n + 1) / 2), Dims{2}, one, zero, "a strided, w broadcast"},
        {Dims{2, cols / 2 + 1}, Dims{0, 1}, Dims{n > 1 ? 1 : 0, 0}, Dims{0, 1}, "row x column"},
    };
    for (const Layout& l : layouts) {
      const Dims out_strides = contiguous_strides(l.shape);
      const int64_t m = numel_of(l.shape);
      const Dims* s3[3] = {&out_strides, &l.sa, &l.sb};
      for (CompareKind k : {CompareKind::Eq, CompareKind::Ne, CompareKind::Lt, CompareKind::Le, CompareKind::Gt,
                            CompareKind::Ge}) {
        Guarded<uint8_t> out(static_cast<size_t>(m));
        compare(k, dtype_of<T>(), l.shape, View{a.bytes(), &l.sa}, View{b.bytes(), &l.sb}, out.data());
        walk<3>(l.shape, s3, [&](int64_t i, const int64_t* off) {
          const T x = a[off[1]], y = b[off[2]];
          const bool want = k == CompareKind::Eq   ? x == y
                            : k == CompareKind::Ne ? x != y
                            : k == CompareKind::Lt ? x < y
                            : k == CompareKind::Le ? x <= y
                            : k == CompareKind::Gt ? x > y
                                                   : x >= y;
          ASSERT_EQ(out[i], want ? 1 : 0) << "compare " << static_cast<int>(k) << " " << l.label << " " << x << ", " << y;
        });
      }
      const Dims* s4[4] = {&out_strides, &l.sc, &l.sa, &l.sb};
      Guarded<T> sel(static_cast<size_t>(m));
      where(dtype_of<T>(), l.shape, View{reinterpret_cast<const char*>(cond.data()), &l.sc}, View{a.bytes(), &l.sa},
            View{b.bytes(), &l.sb}, sel.bytes());
      walk<4>(l.shape, s4, [&](int64_t i, const int64_t* off) {
        ASSERT_TRUE(same_bits(sel[i], cond[off[1]] ? a[off[2]] : b[off[3]])) << "where " << l.label << " at " << i;
      });
      const Dims* l4[4] = {&out_strides, &l.sa, &l.sb, &l.sc};
      Guarded<T> lo(static_cast<size_t>(m));
      lerp(dtype_of<T>(), l.shape, View{a.bytes(), &l.sa}, View{b.bytes(), &l.sb}, View{w.bytes(), &l.sc}, lo.bytes());
      walk<4>(l.shape, l4, [&](int64_t i, const int64_t* off) {
        const T x = a[off[1]], y = b[off[2]], t = w[off[3]];
        const T want = std::fabs(t) < T(0.5) ? x + t * (y - x) : y - (y - x) * (T(1) - t);
        ASSERT_TRUE(same_bits(lo[i], want)) << "lerp " << l.label << " at " << i << ": " << x << ", " << y << ", " << t;
      });
    }
  }
  // lerp's end points are exact.
  const T a0 = T(0.1), b0 = T(3.7), w1 = T(1), w0 = T(0);
  T out = 0;
  const Dims shape = {1}, one = {1};
  auto view = [&](const T& v) { return View{reinterpret_cast<const char*>(&v), &one}; };
  lerp(dtype_of<T>(), shape, view(a0), view(b0), view(w1), reinterpret_cast<char*>(&out));
  EXPECT_EQ(out, b0);
  lerp(dtype_of<T>(), shape, view(a0), view(b0), view(w0), reinterpret_cast<char*>(&out));
  EXPECT_EQ(out, a0);
}

TEST_P(MathOnTarget, CompareWhereLerpF32) { check_select<float>(); }
TEST_P(MathOnTarget, CompareWhereLerpF64) { check_select<double>(); }

// ---------------------------------------------------------------- flat rows

// unary_flat and binary_flat (the small-tensor paths of the ops) give the
// bits of unary() and binary() over a shape for every kind and layout they
// take; binary_flat refuses exactly the kinds without vector rows.
template <class T>
void check_flat_paths() {
  for (const UnaryCase& c : unary_cases()) {
    for (size_t n : {size_t{1}, size_t{5}, size_t{16}, size_t{17}, size_t{67}}) {
      const std::vector<T> x = sweep_inputs<T>(c, n);
      const std::vector<T> want = run_unary<T>(c.k, x, static_cast<T>(c.a1), static_cast<T>(c.a2));
      Guarded<T> in(x.size(), x), out(x.size());
      unary_flat(c.k, dtype_of<T>(), in.bytes(), out.bytes(), x.size(), static_cast<double>(static_cast<T>(c.a1)),
                 static_cast<double>(static_cast<T>(c.a2)));
      for (size_t i = 0; i < x.size(); ++i) {
        ASSERT_TRUE(same_bits(out[i], want[i])) << c.name << " n = " << x.size() << " x = " << x[i];
      }
    }
  }
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> uni(-3.0, 3.0);
  struct Kind {
    BinaryKind k;
    const char* name;
    bool vector;
  };
  const std::vector<Kind> kinds = {
#define AG_BINARY_KERNEL(kind, functor) {BinaryKind::kind, #kind, true},
#define AG_BINARY_KERNEL_SCALAR(kind, functor) {BinaryKind::kind, #kind, false},
#define AG_BINARY_KERNEL_BY_HAND(kind) {BinaryKind::kind, #kind, false},
#include "kernels/kernels.def"
  };
  for (const Kind& kind : kinds) {
    for (size_t n : {size_t{1}, size_t{3}, size_t{16}, size_t{17}, size_t{67}}) {
      Guarded<T> a(n), b(n);
      for (size_t i = 0; i < n; ++i) a[i] = static_cast<T>(uni(rng)), b[i] = static_cast<T>(uni(rng));
      const Dims shape = dims1(n), one = {1}, zero = {0};
      // (a one element, b one element): contiguous, b broadcast, a broadcast.
      for (const auto& [a_one, b_one] : {std::pair{false, false}, std::pair{false, true}, std::pair{true, false}}) {
        Guarded<T> want(n), got(n);
        binary(kind.k, dtype_of<T>(), shape, View{a.bytes(), a_one ? &zero : &one}, View{b.bytes(), b_one ? &zero : &one},
               want.bytes());
        const bool took = binary_flat(kind.k, dtype_of<T>(), a.bytes(), a_one, b.bytes(), b_one, got.bytes(), n);
        ASSERT_EQ(took, kind.vector) << kind.name;
        if (!took) continue;
        for (size_t i = 0; i < n; ++i) {
          ASSERT_TRUE(same_bits(got[i], want[i])) << kind.name << " n = " << n << " a_one " << a_one << " b_one "
                                                  << b_one << " at " << i;
        }
      }
    }
  }
}

TEST_P(MathOnTarget, FlatPathsMatchShapePathsF32) { check_flat_paths<float>(); }
TEST_P(MathOnTarget, FlatPathsMatchShapePathsF64) { check_flat_paths<double>(); }

}  // namespace
}  // namespace ag::kernels
