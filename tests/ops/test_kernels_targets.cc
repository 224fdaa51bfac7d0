// Forward correctness of the SIMD kernels (src/kernels) on every Highway
// target they were compiled for that this CPU supports: each target is forced
// with hwy::SetSupportedTargetsForTest, the public kernel entry points
// re-dispatch, and the test checks that they really landed on that target.
// References are std:: functions in double (f32) or long double (f64). Rows
// end at a PROT_NONE page, so a tail load or store past the end faults.
// This file covers the original kinds (neg, exp, log, tanh, pow_scalar and
// the arithmetic); the math and activation kinds, comparisons, where and lerp
// are in test_kernels_math_targets.cc.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernel_test_support.h"
#include "kernels/philox.h"
#include "kernels/random.h"

namespace ag::kernels {
namespace {

using namespace ag::kernels::testing;

TEST(KernelTargets, EverySupportedTargetIsCovered) {
  const int64_t compiled = compiled_targets();
  hwy::SetSupportedTargetsForTest(0);
  const int64_t supported = hwy::SupportedTargets();
  const std::vector<int64_t> cover = targets_to_cover();
  std::printf("[ kernels ] compiled targets:  %s\n", target_list(compiled).c_str());
  std::printf("[ kernels ] CPU supports:      %s\n", target_list(supported).c_str());
  std::printf("[ kernels ] not compiled (run SCALAR or a better target instead): %s\n",
              target_list(supported & ~compiled).c_str());
  ASSERT_FALSE(cover.empty());
  std::string covered;
  for (int64_t t : cover) {
    ForceTarget force(t);
    EXPECT_EQ(elementwise_target(), t) << "unary/binary skipped " << hwy::TargetName(t);
    EXPECT_EQ(reduce_target(), t) << "sum_to skipped " << hwy::TargetName(t);
    if (elementwise_target() == t && reduce_target() == t) {
      covered += covered.empty() ? "" : " ";
      covered += hwy::TargetName(t);
    }
  }
  std::printf("[ kernels ] covered targets:   %s\n", covered.c_str());
  // The best target the CPU has must be among those compiled (AVX3_DL needs
  // -DHWY_WANT_AVX3_DL in the library's cpp_args).
  const int64_t best = supported & -supported;
  EXPECT_TRUE((compiled & best) != 0) << "best CPU target " << hwy::TargetName(best)
                                      << " is not compiled";
  // With no mock, dispatch goes to the best compiled target.
  EXPECT_EQ(elementwise_target(), cover.front());
  EXPECT_EQ(reduce_target(), cover.front());
}

// Where ag answers Highway's dispatch queries itself (kernels/
// cpu_targets.cc), its answers must be libhwy's, with and without the
// overrides. libhwy is loaded privately: its functions, not ag's.
TEST(KernelTargets, DetectionMatchesLibhwy) {
  void* hwy = dlopen("libhwy.so.1", RTLD_NOW | RTLD_LOCAL);
  if (hwy == nullptr) GTEST_SKIP() << "libhwy.so.1 is not installed: nothing to compare with";
  using Query = int64_t (*)();
  using Set = void (*)(int64_t);
  const auto their_supported = reinterpret_cast<Query>(dlsym(hwy, "_ZN3hwy16SupportedTargetsEv"));
  const auto their_mock = reinterpret_cast<Set>(dlsym(hwy, "_ZN3hwy26SetSupportedTargetsForTestEl"));
  const auto their_disable = reinterpret_cast<Set>(dlsym(hwy, "_ZN3hwy14DisableTargetsEl"));
  ASSERT_TRUE(their_supported && their_mock && their_disable) << dlerror();
  if (reinterpret_cast<void*>(their_supported) == reinterpret_cast<void*>(&hwy::SupportedTargets)) {
    dlclose(hwy);
    GTEST_SKIP() << "this build links libhwy for dispatch (src/meson.build): nothing to compare";
  }
  hwy::SetSupportedTargetsForTest(0);
  their_mock(0);
  EXPECT_EQ(hwy::SupportedTargets(), their_supported())
      << "ag: " << target_list(hwy::SupportedTargets()) << "; libhwy: " << target_list(their_supported());
  for (const int64_t mock : {int64_t{HWY_SSE4}, int64_t{HWY_AVX2 | HWY_SSE4}, int64_t{HWY_SCALAR}}) {
    hwy::SetSupportedTargetsForTest(mock);
    their_mock(mock);
    EXPECT_EQ(hwy::SupportedTargets(), their_supported()) << "mock " << target_list(mock);
  }
  hwy::SetSupportedTargetsForTest(0);
  their_mock(0);
  const int64_t all = hwy::SupportedTargets();
  // (Not SCALAR alone: each keeps the baseline of its own compile enabled,
  // SCALAR for ag's translation units, EMU128 for libhwy's.)
  for (const int64_t off : {all & -all, all & ~int64_t{HWY_SCALAR}, all}) {
    hwy::DisableTargets(off);
    their_disable(off);
    EXPECT_EQ(hwy::SupportedTargets(), their_supported()) << "disabled " << target_list(off);
  }
  hwy::DisableTargets(0);
  their_disable(0);
  EXPECT_EQ(hwy::SupportedTargets(), all);
  EXPECT_EQ(elementwise_target(), targets_to_cover().front());
  dlclose(hwy);
}

class OnTarget : public OnTargetTest {
 protected:
  void SetUp() override {
    OnTargetTest::SetUp();
    ASSERT_EQ(elementwise_target(), GetParam()) << "dispatch did not reach the target";
    ASSERT_EQ(reduce_target(), GetParam()) << "dispatch did not reach the target";
  }
};

INSTANTIATE_TEST_SUITE_P(Kernels, OnTarget, ::testing::ValuesIn(targets_to_cover()), target_name);

template <class T>
T ref_unary(UnaryKind k, T x, T p) {
  const Ref<T> v = x;
  switch (k) {
    case UnaryKind::Neg: return static_cast<T>(-v);
    case UnaryKind::Exp: return static_cast<T>(std::exp(v));
    case UnaryKind::Log: return static_cast<T>(std::log(v));
    case UnaryKind::Tanh: return static_cast<T>(std::tanh(v));
    case UnaryKind::PowScalar: return static_cast<T>(std::pow(v, static_cast<Ref<T>>(p)));
    default: break;  // the math kinds: test_kernels_math_targets.cc
  }
  return x;
}

const char* unary_name(UnaryKind k) {
  switch (k) {
    case UnaryKind::Neg: return "neg";
    case UnaryKind::Exp: return "exp";
    case UnaryKind::Log: return "log";
    case UnaryKind::Tanh: return "tanh";
    case UnaryKind::PowScalar: return "pow";
    default: break;  // the math kinds: test_kernels_math_targets.cc
  }
  return "?";
}

// Sample inputs for the accuracy sweep of one op: random bit patterns
// (all binades, subnormals, specials), dense uniform samples over the range
// where the result is neither 0, 1 nor inf, and the edge values.
template <class T>
std::vector<T> accuracy_inputs(UnaryKind k, size_t per_source) {
  std::mt19937_64 rng(1234 + static_cast<int>(k));
  const bool f32 = sizeof(T) == 4;
  T lo = -10, hi = 10;
  switch (k) {
    case UnaryKind::Exp: lo = f32 ? T(-104) : T(-746); hi = f32 ? T(89) : T(710); break;
    case UnaryKind::Log: lo = T(0); hi = T(4); break;
    case UnaryKind::Tanh: lo = f32 ? T(-10) : T(-20); hi = -lo; break;
    default: break;
  }
  std::uniform_real_distribution<double> uni(static_cast<double>(lo), static_cast<double>(hi));
  std::uniform_real_distribution<double> near(-1.0, 1.0);
  std::vector<T> v = edge_values<T>();
  for (size_t i = 0; i < per_source; ++i) {
    v.push_back(bits_to<T>(rng));
    v.push_back(static_cast<T>(uni(rng)));
    // Around the places where the approximations switch or lose digits:
    // |x| < 1, tanh near its cut-off, log near 1.
    const double t = near(rng);
    switch (k) {
      case UnaryKind::Log: v.push_back(static_cast<T>(1.0 + t / 16)); break;
      case UnaryKind::Tanh: v.push_back(static_cast<T>(t * std::ldexp(1.0, -static_cast<int>(rng() % 30)))); break;
      default: v.push_back(static_cast<T>(t)); break;
    }
  }
  return v;
}

// Allowed error in ulp, as documented in src/kernels/simd-inl.h.
double ulp_bound(UnaryKind k) {
  switch (k) {
    case UnaryKind::Neg: return 0;
    case UnaryKind::Exp: return 2;
    case UnaryKind::Log: return 2;
    case UnaryKind::Tanh: return 4;
    case UnaryKind::PowScalar: return 1;
    default: break;  // the math kinds: test_kernels_math_targets.cc
  }
  return 0;
}

// ---------------------------------------------------------------- unary

template <class T>
void check_unary_accuracy(const char* target) {
  for (UnaryKind k : {UnaryKind::Neg, UnaryKind::Exp, UnaryKind::Log, UnaryKind::Tanh}) {
    const std::vector<T> x = accuracy_inputs<T>(k, 100000);
    const std::vector<T> y = run_unary<T>(k, x);
    double worst = 0;
    size_t worst_i = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double e = ulp_diff(y[i], ref_unary<T>(k, x[i], T(0)));
      if (e > worst) worst = e, worst_i = i;
    }
    std::printf("[ kernels ] %-8s %s %-4s max error %g ulp (at x = %.17g)\n", target,
                sizeof(T) == 4 ? "f32" : "f64", unary_name(k), worst,
                static_cast<double>(x[worst_i]));
    EXPECT_LE(worst, ulp_bound(k)) << unary_name(k) << " x = " << x[worst_i] << " got " << y[worst_i]
                                   << " want " << ref_unary<T>(k, x[worst_i], T(0));
  }
}

TEST_P(OnTarget, UnaryAccuracyF32) { check_unary_accuracy<float>(target()); }
TEST_P(OnTarget, UnaryAccuracyF64) { check_unary_accuracy<double>(target()); }

// Sizes 1..67 and 1003: every tail length of every target, rows ending at a
// guard page; edge values land in tails too. pow runs a fast path (2, 0.5)
// and the std::pow path (1.7).
template <class T>
void check_unary_sizes() {
  std::vector<size_t> sizes;
  for (size_t n = 1; n <= 67; ++n) sizes.push_back(n);
  sizes.push_back(1003);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> uni(-3.0, 3.0);
  const std::vector<std::pair<UnaryKind, T>> ops = {
      {UnaryKind::Neg, T(0)},         {UnaryKind::Exp, T(0)},         {UnaryKind::Log, T(0)},
      {UnaryKind::Tanh, T(0)},        {UnaryKind::PowScalar, T(2)},   {UnaryKind::PowScalar, T(0.5)},
      {UnaryKind::PowScalar, T(1.7)},
  };
  for (const auto& [k, p] : ops) {
    for (size_t n : sizes) {
      std::vector<T> x(n);
      const std::vector<T> edges = edge_values<T>();
      for (size_t i = 0; i < n; ++i) x[i] = static_cast<T>(uni(rng));
      // Edges at the end of the row (the tail) and spread over it.
      for (size_t j = 0; j < edges.size() && j < n; ++j) x[(n - 1 - j * 3 % n) % n] = edges[j];
      const std::vector<T> y = run_unary<T>(k, x, p);
      for (size_t i = 0; i < n; ++i) {
        ASSERT_LE(ulp_diff(y[i], ref_unary<T>(k, x[i], p)), ulp_bound(k))
            << unary_name(k) << " p = " << p << " n = " << n << " i = " << i << " x = " << x[i]
            << " got " << y[i];
      }
    }
  }
  // Empty rows write nothing.
  for (UnaryKind k : {UnaryKind::Neg, UnaryKind::Exp}) EXPECT_TRUE(run_unary<T>(k, {}).empty());
}

TEST_P(OnTarget, UnarySizesAndTailsF32) { check_unary_sizes<float>(); }
TEST_P(OnTarget, UnarySizesAndTailsF64) { check_unary_sizes<double>(); }

// The IEEE edges the kernels promise (Highway 1.0.3 contrib math gets several
// of them wrong; simd-inl.h fixes them). Exact expectations, sign of zero
// included, except subnormal results (within the op's ulp bound).
template <class T>
void check_unary_edges() {
  using L = std::numeric_limits<T>;
  const T inf = L::infinity(), nan = L::quiet_NaN();
  const bool f32 = sizeof(T) == 4;
  struct Case {
    UnaryKind k;
    T x;
    T want;
  };
  const std::vector<Case> cases = {
      {UnaryKind::Exp, nan, nan},
      {UnaryKind::Exp, -nan, nan},
      {UnaryKind::Exp, -inf, T(0)},
      {UnaryKind::Exp, inf, inf},
      {UnaryKind::Exp, L::max(), inf},
      {UnaryKind::Exp, f32 ? T(88.8) : T(709.9), inf},
      {UnaryKind::Exp, f32 ? T(1e10) : T(1e300), inf},
      {UnaryKind::Exp, f32 ? T(-104.5) : T(-745.5), T(0)},
      {UnaryKind::Exp, f32 ? T(-200) : T(-2000), T(0)},
      {UnaryKind::Exp, L::lowest(), T(0)},
      {UnaryKind::Exp, T(0), T(1)},
      {UnaryKind::Exp, -T(0), T(1)},
      {UnaryKind::Log, T(0), -inf},
      {UnaryKind::Log, -T(0), -inf},
      {UnaryKind::Log, T(-1), nan},
      {UnaryKind::Log, -L::denorm_min(), nan},
      {UnaryKind::Log, -inf, nan},
      {UnaryKind::Log, inf, inf},
      {UnaryKind::Log, nan, nan},
      {UnaryKind::Log, T(1), T(0)},
      {UnaryKind::Tanh, inf, T(1)},
      {UnaryKind::Tanh, -inf, T(-1)},
      {UnaryKind::Tanh, nan, nan},
      {UnaryKind::Tanh, T(0), T(0)},
      {UnaryKind::Tanh, -T(0), -T(0)},
      {UnaryKind::Tanh, T(30), T(1)},
      {UnaryKind::Tanh, T(-30), T(-1)},
      {UnaryKind::Neg, T(0), -T(0)},
      {UnaryKind::Neg, -inf, inf},
  };
  for (const Case& c : cases) {
    // Alone (a tail) and inside a full vector.
    for (size_t n : {size_t{1}, size_t{64}}) {
      const std::vector<T> y = run_unary<T>(c.k, std::vector<T>(n, c.x));
      for (size_t i = 0; i < n; ++i) {
        ASSERT_TRUE(same_bits(y[i], c.want))
            << unary_name(c.k) << "(" << c.x << ") = " << y[i] << ", want " << c.want << " (n = " << n
            << ")";
      }
    }
  }
  // Results below the smallest normal: subnormal, rounded once, down to 0.
  for (int i = 0; i <= 400; ++i) {
    const T x = f32 ? static_cast<T>(-87.0 - i * 0.05) : static_cast<T>(-707.0 - i * 0.1);
    const T y = run_unary<T>(UnaryKind::Exp, {x})[0];
    ASSERT_LE(ulp_diff(y, ref_unary<T>(UnaryKind::Exp, x, T(0))), ulp_bound(UnaryKind::Exp))
        << "exp(" << x << ") = " << y;
    ASSERT_FALSE(std::signbit(y) || std::isnan(y));
  }
}

TEST_P(OnTarget, UnaryEdgesF32) { check_unary_edges<float>(); }
TEST_P(OnTarget, UnaryEdgesF64) { check_unary_edges<double>(); }

// Strided and broadcast inputs give the same bits as the contiguous path
// (Note [Kernel SIMD contract]).
template <class T>
void check_unary_strided() {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> uni(0.01, 5.0);
  for (UnaryKind k : {UnaryKind::Neg, UnaryKind::Exp, UnaryKind::Log, UnaryKind::Tanh}) {
    for (int64_t n : {1, 7, 33, 300, 1003}) {
      // Stride 2, and stride 0 (one value broadcast to n).
      std::vector<T> src(2 * static_cast<size_t>(n));
      for (T& v : src) v = static_cast<T>(uni(rng));
      for (int64_t stride : {2, 0, -1}) {
        const T* first = stride == -1 ? src.data() + n - 1 : src.data();
        std::vector<T> gathered(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) gathered[i] = first[i * stride];
        const std::vector<T> want = run_unary<T>(k, gathered);
        std::vector<T> out(static_cast<size_t>(n));
        const Dims shape = {n}, strides = {stride};
        unary(k, dtype_of<T>(), shape, View{reinterpret_cast<const char*>(first), &strides},
              reinterpret_cast<char*>(out.data()), 0.0);
        for (int64_t i = 0; i < n; ++i) {
          ASSERT_TRUE(same_bits(out[i], want[i]))
              << unary_name(k) << " stride " << stride << " n " << n << " i " << i;
        }
      }
      // 2-D transposed view: shape (r, c) read with strides (1, r).
      const int64_t r = 3, c = n;
      std::vector<T> m(static_cast<size_t>(r * c));
      for (T& v : m) v = static_cast<T>(uni(rng));
      std::vector<T> gathered(m.size());
      for (int64_t i = 0; i < r; ++i) {
        for (int64_t j = 0; j < c; ++j) gathered[i * c + j] = m[j * r + i];
      }
      const std::vector<T> want = run_unary<T>(k, gathered);
      std::vector<T> out(m.size());
      const Dims shape = {r, c}, strides = {1, r};
      unary(k, dtype_of<T>(), shape, View{reinterpret_cast<const char*>(m.data()), &strides},
            reinterpret_cast<char*>(out.data()), 0.0);
      for (size_t i = 0; i < out.size(); ++i) {
        ASSERT_TRUE(same_bits(out[i], want[i])) << unary_name(k) << " transposed i " << i;
      }
    }
  }
}

TEST_P(OnTarget, UnaryStridedF32) { check_unary_strided<float>(); }
TEST_P(OnTarget, UnaryStridedF64) { check_unary_strided<double>(); }

// pow: the fast paths (0, 1, 2, -1, 0.5) are correctly rounded and match
// std::pow's special values; other exponents are std::pow itself.
template <class T>
void check_pow() {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> uni(-8.0, 8.0);
  std::vector<T> x = edge_values<T>();
  for (T v : {T(-4), T(4), T(0.25), T(1e-30), T(1e30)}) x.push_back(v);
  for (int i = 0; i < 20000; ++i) x.push_back(static_cast<T>(uni(rng)));
  for (int i = 0; i < 20000; ++i) x.push_back(std::fabs(bits_to<T>(rng)));
  for (T p : {T(0), T(1), T(2), T(-1), T(0.5), T(3), T(-2.5), T(1.7), T(0.25)}) {
    for (size_t n : {x.size(), size_t{5}, size_t{19}}) {
      const std::vector<T> in(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(n));
      const std::vector<T> y = run_unary<T>(UnaryKind::PowScalar, in, p);
      for (size_t i = 0; i < n; ++i) {
        const T want = ref_unary<T>(UnaryKind::PowScalar, in[i], p);
        ASSERT_LE(ulp_diff(y[i], want), ulp_bound(UnaryKind::PowScalar))
            << "pow(" << in[i] << ", " << p << ") = " << y[i] << ", want " << want;
        // Specials (zeros, infinities, NaN, results 0 or inf): the exact
        // std::pow result, sign of zero included. Signaling NaNs are out of
        // the contract (glibc's pow(sNaN, 0) is NaN, the kernel's 1).
        if (is_signaling_nan(in[i])) continue;
        if (!std::isfinite(in[i]) || in[i] == 0 || !std::isfinite(want) || want == 0) {
          const T exact = std::pow(in[i], p);
          ASSERT_TRUE(same_bits(y[i], exact))
              << "pow(" << in[i] << ", " << p << ") = " << y[i] << ", std::pow " << exact;
        }
      }
    }
  }
}

TEST_P(OnTarget, PowScalarF32) { check_pow<float>(); }
TEST_P(OnTarget, PowScalarF64) { check_pow<double>(); }

// ---------------------------------------------------------------- binary

template <class T>
T ref_binary(BinaryKind k, T a, T b) {
  switch (k) {
    case BinaryKind::Add: return a + b;
    case BinaryKind::Sub: return a - b;
    case BinaryKind::Mul: return a * b;
    case BinaryKind::Div: return a / b;
    case BinaryKind::TanhBackward: return a * (T(1) - b * b);
    default: break;  // the math kinds: test_kernels_math_targets.cc
  }
  return a;
}

const char* binary_name(BinaryKind k) {
  switch (k) {
    case BinaryKind::Add: return "add";
    case BinaryKind::Sub: return "sub";
    case BinaryKind::Mul: return "mul";
    case BinaryKind::Div: return "div";
    case BinaryKind::TanhBackward: return "tanh_backward";
    default: break;  // the math kinds: test_kernels_math_targets.cc
  }
  return "?";
}

// out = a op b over `shape`, inputs given with their strides; compares with
// the scalar op on the elements the strides select, bit for bit.
template <class T>
void check_binary_case(BinaryKind k, const Dims& shape, const T* a, const Dims& sa, const T* b,
                       const Dims& sb, const char* label) {
  const int64_t n = numel_of(shape);
  Guarded<T> out(static_cast<size_t>(n));
  binary(k, dtype_of<T>(), shape, View{reinterpret_cast<const char*>(a), &sa},
         View{reinterpret_cast<const char*>(b), &sb}, out.bytes());
  std::vector<int64_t> idx(static_cast<size_t>(shape.size()), 0);
  for (int64_t flat = 0; flat < n; ++flat) {
    int64_t oa = 0, ob = 0;
    for (int d = 0; d < shape.size(); ++d) oa += idx[d] * sa[d], ob += idx[d] * sb[d];
    const T want = ref_binary(k, a[oa], b[ob]);
    ASSERT_TRUE(same_bits(out[static_cast<size_t>(flat)], want))
        << binary_name(k) << " " << label << " at " << flat << ": " << a[oa] << ", " << b[ob]
        << " -> " << out[static_cast<size_t>(flat)] << ", want " << want;
    for (int d = shape.size() - 1; d >= 0; --d) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

template <class T>
void check_binary() {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> uni(-4.0, 4.0);
  std::vector<size_t> sizes;
  for (size_t n = 1; n <= 67; ++n) sizes.push_back(n);
  sizes.push_back(1003);
  const std::vector<T> edges = edge_values<T>();
  for (BinaryKind k : {BinaryKind::Add, BinaryKind::Sub, BinaryKind::Mul, BinaryKind::Div, BinaryKind::TanhBackward}) {
    for (size_t n : sizes) {
      Guarded<T> a(n), b(n);
      for (size_t i = 0; i < n; ++i) {
        a[i] = static_cast<T>(uni(rng));
        b[i] = i % 5 == 0 ? bits_to<T>(rng) : static_cast<T>(uni(rng));
      }
      // Edge pairs (0/0, inf-inf, NaN, -0) in the tail.
      for (size_t j = 0; j < n && j < edges.size(); ++j) {
        a[n - 1 - j] = edges[j];
        b[n - 1 - j] = edges[(j * 7) % edges.size()];
      }
      const Dims shape = dims1(n), one = {1}, zero = {0};
      check_binary_case<T>(k, shape, a.data(), one, b.data(), one, "contiguous");
      check_binary_case<T>(k, shape, a.data(), one, b.data() + n - 1, zero, "b broadcast");
      check_binary_case<T>(k, shape, a.data() + n - 1, zero, b.data(), one, "a broadcast");
      check_binary_case<T>(k, shape, a.data(), zero, b.data(), zero, "both broadcast");
      if (n >= 2) {
        const Dims half = dims1(n / 2), two = {2};
        check_binary_case<T>(k, half, a.data(), two, b.data(), one, "a stride 2");
        check_binary_case<T>(k, half, a.data(), one, b.data() + 1, two, "b stride 2");
      }
      // 2-D broadcasts: (r, 1) op (1, c), and (r, c) op (c).
      const int64_t r = 3, c = static_cast<int64_t>(n);
      std::vector<T> col(static_cast<size_t>(r)), mat(static_cast<size_t>(r * c));
      for (T& v : col) v = static_cast<T>(uni(rng));
      for (T& v : mat) v = static_cast<T>(uni(rng));
      const Dims shape2 = {r, c};
      check_binary_case<T>(k, shape2, col.data(), Dims{1, 0}, b.data(), Dims{0, 1}, "col x row");
      check_binary_case<T>(k, shape2, mat.data(), Dims{c, 1}, b.data(), Dims{0, 1}, "mat x row");
      check_binary_case<T>(k, shape2, b.data(), Dims{0, 1}, mat.data(), Dims{1, r}, "row x mat^T");
    }
  }
}

TEST_P(OnTarget, BinaryF32) { check_binary<float>(); }
TEST_P(OnTarget, BinaryF64) { check_binary<double>(); }

// A one-element call (0-dim, or all dims of size 1) takes its own scalar
// path: it must give the bits that the same pair gets inside a row of 17
// (vector body and tail), for every pair of edge and random values.
template <class T>
void check_binary_one_matches_rows() {
  std::mt19937_64 rng(5);
  std::vector<T> values = edge_values<T>();
  for (int i = 0; i < 16; ++i) values.push_back(bits_to<T>(rng));
  constexpr size_t kRow = 17;
  const Dims row = dims1(kRow), unit = {1}, scalar_shape{}, ones = {1, 1}, ones_strides = {1, 1};
  for (BinaryKind k : {BinaryKind::Add, BinaryKind::Sub, BinaryKind::Mul, BinaryKind::Div, BinaryKind::TanhBackward}) {
    for (T x : values) {
      for (size_t start = 0; start < values.size(); start += kRow) {
        Guarded<T> a(kRow), b(kRow), out(kRow);
        for (size_t i = 0; i < kRow; ++i) {
          a[i] = x;
          b[i] = values[(start + i) % values.size()];
        }
        binary(k, dtype_of<T>(), row, View{a.bytes(), &unit}, View{b.bytes(), &unit}, out.bytes());
        for (size_t i = 0; i < kRow; ++i) {
          T one[2] = {T(0), T(7)}, one2[2] = {T(0), T(7)};  // [1]: nothing writes past the element
          const char* pa = reinterpret_cast<const char*>(&a[i]);
          const char* pb = reinterpret_cast<const char*>(&b[i]);
          binary(k, dtype_of<T>(), scalar_shape, View{pa, &scalar_shape}, View{pb, &scalar_shape},
                 reinterpret_cast<char*>(one));
          binary(k, dtype_of<T>(), ones, View{pa, &ones_strides}, View{pb, &ones_strides}, reinterpret_cast<char*>(one2));
          ASSERT_TRUE(same_bits(one[0], out[i]) && same_bits(one2[0], out[i]))
              << binary_name(k) << "(" << a[i] << ", " << b[i] << "): one element " << one[0] << " / " << one2[0]
              << ", in a row " << out[i];
          ASSERT_TRUE(same_bits(one[0], ref_binary(k, a[i], b[i])));
          ASSERT_TRUE(one[1] == T(7) && one2[1] == T(7));
        }
      }
    }
  }
}

TEST_P(OnTarget, BinaryOneElementMatchesRowsF32) { check_binary_one_matches_rows<float>(); }
TEST_P(OnTarget, BinaryOneElementMatchesRowsF64) { check_binary_one_matches_rows<double>(); }

// ---------------------------------------------------------------- sum

template <class T>
T run_sum(const T* x, const Dims& shape, const Dims& strides) {
  Dims out_shape = shape;
  for (int i = 0; i < out_shape.size(); ++i) out_shape[i] = 1;
  T out{};
  sum_to(dtype_of<T>(), shape, View{reinterpret_cast<const char*>(x), &strides}, out_shape,
         reinterpret_cast<char*>(&out));
  return out;
}

// |sum - exact| bound for a double-accumulated sum rounded to T.
template <class T>
bool sum_close(T got, long double exact, long double abs_sum, size_t n) {
  const T rounded = static_cast<T>(exact);
  if (sizeof(T) == 4) return ulp_diff(got, rounded) <= 1;
  // Note [Summation order]: at most about kBlock/4 + log2(n) roundings per
  // element path; use 300 + log2(n) as a loose but meaningful bound.
  const long double eps = std::numeric_limits<double>::epsilon();
  const long double bound = (300 + std::log2(static_cast<long double>(n) + 1)) * eps * abs_sum;
  return std::fabs(static_cast<long double>(got) - exact) <= bound + std::numeric_limits<T>::denorm_min();
}

template <class T>
void check_sum() {
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  std::vector<size_t> sizes;
  for (size_t n = 0; n <= 67; ++n) sizes.push_back(n);
  for (size_t n : {1003, 1024, 1025, 4096 + 3, 100000, (1 << 20) + 7}) sizes.push_back(n);
  for (size_t n : sizes) {
    Guarded<T> x(n == 0 ? 1 : n);
    long double exact = 0, abs_sum = 0;
    for (size_t i = 0; i < n; ++i) {
      // Mixed magnitudes make the order matter.
      x[i] = static_cast<T>(uni(rng) * std::ldexp(1.0, static_cast<int>(rng() % 20)));
      exact += x[i];
      abs_sum += std::fabs(static_cast<long double>(x[i]));
    }
    const T got = run_sum(x.data(), dims1(n), Dims{1});
    ASSERT_TRUE(sum_close(got, exact, abs_sum, n)) << "n = " << n << " got " << got << " exact " << static_cast<double>(exact);
    // Same data, strided: the same summation order, the same bits.
    if (n > 0 && n <= 100000) {
      std::vector<T> spread(3 * n, T(777));
      for (size_t i = 0; i < n; ++i) spread[3 * i] = x[i];
      ASSERT_TRUE(same_bits(run_sum(spread.data(), dims1(n), Dims{3}), got)) << "stride 3, n = " << n;
    }
    // Deterministic: the same call gives the same bits.
    ASSERT_TRUE(same_bits(run_sum(x.data(), dims1(n), Dims{1}), got));
    // sum_contiguous (what the sum op calls for contiguous data) gives
    // sum_to's bits, also read as a matrix.
    ASSERT_TRUE(same_bits(static_cast<T>(sum_contiguous(dtype_of<T>(), x.bytes(), static_cast<int64_t>(n))), got))
        << "sum_contiguous, n = " << n;
    if (n % 3 == 0 && n > 0) {
      const int64_t rows = 3, cols = static_cast<int64_t>(n / 3);
      ASSERT_TRUE(same_bits(run_sum(x.data(), Dims{rows, cols}, Dims{cols, 1}), got)) << "as 3 x " << cols;
    }
  }
  // Broadcast input (stride 0): n copies of one value.
  const T v = T(0.1);
  for (int64_t n : {1, 5, 64, 1000, 5000}) {
    const T got = run_sum(&v, Dims{n}, Dims{0});
    ASSERT_TRUE(sum_close(got, static_cast<long double>(v) * n, static_cast<long double>(v) * n,
                          static_cast<size_t>(n)))
        << "broadcast n = " << n << " got " << got;
  }
  // IEEE: NaN and infinities propagate.
  using L = std::numeric_limits<T>;
  for (size_t n : {size_t{3}, size_t{40}, size_t{3000}}) {
    std::vector<T> x(n, T(1));
    x[n - 1] = L::quiet_NaN();
    EXPECT_TRUE(std::isnan(run_sum(x.data(), dims1(n), Dims{1})));
    x[n - 1] = L::infinity();
    EXPECT_EQ(run_sum(x.data(), dims1(n), Dims{1}), L::infinity());
    x[0] = -L::infinity();
    EXPECT_TRUE(std::isnan(run_sum(x.data(), dims1(n), Dims{1})));
  }
}

TEST_P(OnTarget, SumF32) { check_sum<float>(); }
TEST_P(OnTarget, SumF64) { check_sum<double>(); }

// Partial reductions: rows (accumulator stride 0, contiguous and strided
// rows), columns (acc[i] += x[i] rows), and reductions of a transposed view.
template <class T>
void check_sum_axes() {
  std::mt19937_64 rng(21);
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  for (int64_t r : {1, 2, 5}) {
    for (int64_t c : {1, 3, 17, 67, 1003}) {
      std::vector<T> m(static_cast<size_t>(r * c));
      for (T& v : m) v = static_cast<T>(uni(rng));
      const Dims shape = {r, c};
      for (bool transposed : {false, true}) {
        // Logical (r, c) matrix; stored row-major, or column-major (strides (1, r)).
        const Dims strides = transposed ? Dims{1, r} : Dims{c, 1};
        auto at = [&](int64_t i, int64_t j) { return m[static_cast<size_t>(i * strides[0] + j * strides[1])]; };
        // Sum over columns -> (r, 1).
        std::vector<T> rows(static_cast<size_t>(r));
        sum_to(dtype_of<T>(), shape, View{reinterpret_cast<const char*>(m.data()), &strides}, Dims{r, 1},
               reinterpret_cast<char*>(rows.data()));
        for (int64_t i = 0; i < r; ++i) {
          long double exact = 0, abs_sum = 0;
          for (int64_t j = 0; j < c; ++j) exact += at(i, j), abs_sum += std::fabs(static_cast<long double>(at(i, j)));
          ASSERT_TRUE(sum_close(rows[i], exact, abs_sum, static_cast<size_t>(c)))
              << "rows r " << r << " c " << c << " transposed " << transposed;
        }
        // Sum over rows -> (1, c).
        std::vector<T> cols(static_cast<size_t>(c));
        sum_to(dtype_of<T>(), shape, View{reinterpret_cast<const char*>(m.data()), &strides}, Dims{1, c},
               reinterpret_cast<char*>(cols.data()));
        for (int64_t j = 0; j < c; ++j) {
          long double exact = 0, abs_sum = 0;
          for (int64_t i = 0; i < r; ++i) exact += at(i, j), abs_sum += std::fabs(static_cast<long double>(at(i, j)));
          ASSERT_TRUE(sum_close(cols[j], exact, abs_sum, static_cast<size_t>(r)))
              << "cols r " << r << " c " << c << " transposed " << transposed;
        }
      }
    }
  }
}

TEST_P(OnTarget, SumAxesF32) { check_sum_axes<float>(); }
TEST_P(OnTarget, SumAxesF64) { check_sum_axes<double>(); }

// ---------------------------------------------------------------- softmax

// Reference softmax / log_softmax of one (n, stride) column in Ref<T>. The
// shift x - max is rounded to T as the kernels do: its rounding error is
// amplified by exp for far-apart inputs (conditioning, not kernel error).
template <class T>
std::vector<Ref<T>> ref_softmax(const T* x, int64_t n, int64_t stride, bool log) {
  Ref<T> m = -std::numeric_limits<Ref<T>>::infinity();
  for (int64_t k = 0; k < n; ++k) m = std::max<Ref<T>>(m, x[k * stride]);
  Ref<T> s = 0;
  auto shift = [&](int64_t k) { return static_cast<Ref<T>>(static_cast<T>(x[k * stride] - static_cast<T>(m))); };
  for (int64_t k = 0; k < n; ++k) s += std::exp(shift(k));
  std::vector<Ref<T>> y(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    const Ref<T> z = shift(k);
    y[static_cast<size_t>(k)] = log ? z - std::log(s) : std::exp(z) / s;
  }
  return y;
}

// Relative error bound for sums of n terms in T (vector lanes, then lanes).
template <class T>
double softmax_tol(int64_t n) {
  return (16.0 + static_cast<double>(n) / 4.0) * std::numeric_limits<T>::epsilon();
}

template <class T>
void check_softmax_values() {
  std::mt19937_64 rng(31);
  const double range = sizeof(T) == 4 ? 30.0 : 300.0;
  std::uniform_real_distribution<double> uni(-range, range);
  for (bool log : {false, true}) {
    for (int64_t inner : {1, 3, 16, 21}) {
      for (int64_t outer : {1, 2}) {
        std::vector<int64_t> sizes;
        for (int64_t n = 1; n <= 35; ++n) sizes.push_back(n);
        for (int64_t n : {64, 100, 1027}) sizes.push_back(n);
        for (int64_t n : sizes) {
          const size_t total = static_cast<size_t>(outer * n * inner);
          Guarded<T> x(total), y(total);
          for (size_t i = 0; i < total; ++i) x[i] = static_cast<T>(uni(rng));
          softmax(dtype_of<T>(), log, x.bytes(), y.bytes(), outer, n, inner);
          for (int64_t o = 0; o < outer; ++o) {
            for (int64_t j = 0; j < inner; ++j) {
              const int64_t base = o * n * inner + j;
              const auto want = ref_softmax(x.data() + base, n, inner, log);
              for (int64_t k = 0; k < n; ++k) {
                const double w = static_cast<double>(want[static_cast<size_t>(k)]);
                const double got = y[static_cast<size_t>(base + k * inner)];
                const double scale = log ? std::max(1.0, std::fabs(w)) : w;
                ASSERT_LE(std::fabs(got - w), softmax_tol<T>(n) * scale + std::numeric_limits<T>::denorm_min())
                    << (log ? "log_softmax" : "softmax") << " n " << n << " inner " << inner << " k " << k;
              }
            }
          }
        }
      }
    }
  }
}

TEST_P(OnTarget, SoftmaxF32) {
  ASSERT_EQ(softmax_target(), GetParam());
  check_softmax_values<float>();
}
TEST_P(OnTarget, SoftmaxF64) {
  ASSERT_EQ(softmax_target(), GetParam());
  check_softmax_values<double>();
}

// -inf entries get exactly 0 (log: -inf); an all -inf row, a +inf or a NaN
// makes the row NaN; huge inputs do not overflow.
template <class T>
void check_softmax_edges() {
  using L = std::numeric_limits<T>;
  const T inf = L::infinity();
  for (int64_t inner : {1, 2, 19}) {
    for (int64_t n : {3, 17, 40}) {
      for (bool log : {false, true}) {
        auto run = [&](std::vector<T> row) {  // the same row in every inner column
          std::vector<T> x(static_cast<size_t>(n * inner)), y(x.size());
          for (int64_t k = 0; k < n; ++k)
            for (int64_t j = 0; j < inner; ++j) x[static_cast<size_t>(k * inner + j)] = row[static_cast<size_t>(k)];
          softmax(dtype_of<T>(), log, reinterpret_cast<const char*>(x.data()), reinterpret_cast<char*>(y.data()), 1,
                  n, inner);
          std::vector<T> col(static_cast<size_t>(n));
          for (int64_t k = 0; k < n; ++k) {
            col[static_cast<size_t>(k)] = y[static_cast<size_t>(k * inner + inner - 1)];
            EXPECT_TRUE(same_bits(y[static_cast<size_t>(k * inner)], col[static_cast<size_t>(k)]));
          }
          return col;
        };
        std::vector<T> row(static_cast<size_t>(n), T(1));
        row[0] = -inf;
        row[static_cast<size_t>(n - 1)] = -inf;
        auto y = run(row);
        EXPECT_EQ(y[0], log ? -inf : T(0)) << "n " << n << " inner " << inner;
        EXPECT_EQ(y[static_cast<size_t>(n - 1)], log ? -inf : T(0));
        const double p = 1.0 / static_cast<double>(n - 2);
        EXPECT_NEAR(y[1], log ? std::log(p) : p, 1e-6);
        for (T bad : {-inf, inf, L::quiet_NaN()}) {
          std::vector<T> r2(static_cast<size_t>(n), bad == -inf ? -inf : T(0.5));
          r2[1] = bad;
          for (T v : run(r2)) EXPECT_TRUE(std::isnan(v)) << "n " << n << " inner " << inner << " bad " << bad;
        }
        std::vector<T> big(static_cast<size_t>(n), L::max() / 4);
        big[0] = L::max() / 2;
        for (T v : run(big)) EXPECT_TRUE(std::isfinite(v));
      }
    }
  }
}

TEST_P(OnTarget, SoftmaxEdgesF32) { check_softmax_edges<float>(); }
TEST_P(OnTarget, SoftmaxEdgesF64) { check_softmax_edges<double>(); }

template <class T>
void check_softmax_backward() {
  std::mt19937_64 rng(41);
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  for (bool log : {false, true}) {
    for (int64_t inner : {1, 4, 16, 23}) {
      for (int64_t n : {1, 2, 7, 16, 33, 100}) {
        const int64_t outer = 2;
        const size_t total = static_cast<size_t>(outer * n * inner);
        Guarded<T> g(total), y(total), out(total);
        for (size_t i = 0; i < total; ++i) g[i] = static_cast<T>(uni(rng)), y[i] = static_cast<T>(uni(rng));
        softmax_backward(dtype_of<T>(), log, g.bytes(), y.bytes(), out.bytes(), outer, n, inner);
        for (int64_t o = 0; o < outer; ++o) {
          for (int64_t j = 0; j < inner; ++j) {
            Ref<T> s = 0, mag = 0;
            for (int64_t k = 0; k < n; ++k) {
              const size_t p = static_cast<size_t>(o * n * inner + k * inner + j);
              s += log ? static_cast<Ref<T>>(g[p]) : static_cast<Ref<T>>(g[p]) * y[p];
              mag += std::fabs(static_cast<Ref<T>>(g[p]));
            }
            for (int64_t k = 0; k < n; ++k) {
              const size_t p = static_cast<size_t>(o * n * inner + k * inner + j);
              const Ref<T> want = log ? g[p] - std::exp(static_cast<Ref<T>>(y[p])) * s : y[p] * (g[p] - s);
              ASSERT_LE(std::fabs(static_cast<double>(out[p] - want)), softmax_tol<T>(n) * (1.0 + 3.0 * mag))
                  << (log ? "log_softmax" : "softmax") << "_backward n " << n << " inner " << inner;
            }
          }
        }
      }
    }
  }
}

TEST_P(OnTarget, SoftmaxBackwardF32) {
  ASSERT_EQ(softmax_target(), GetParam());
  check_softmax_backward<float>();
}
TEST_P(OnTarget, SoftmaxBackwardF64) {
  ASSERT_EQ(softmax_target(), GetParam());
  check_softmax_backward<double>();
}

// ---------------------------------------------------------------- reduce_dim

// Max/min with indices and prod along the middle dim, both layouts, odd
// sizes (tails), ties (the first index wins), NaN (wins, first NaN) and
// infinities, against a scalar reference.
template <class T>
void check_reduce_dim() {
  using L = std::numeric_limits<T>;
  std::mt19937_64 rng(51);
  std::uniform_int_distribution<int> small(-6, 6);  // few distinct values: many ties
  for (int64_t inner : {1, 3, 17, 40}) {
    for (int64_t n : {1, 2, 5, 15, 16, 17, 33, 100}) {
      const int64_t outer = 3;
      const size_t total = static_cast<size_t>(outer * n * inner);
      for (int variant = 0; variant < 5; ++variant) {
        Guarded<T> x(total);
        for (size_t i = 0; i < total; ++i) x[i] = static_cast<T>(small(rng)) * T(0.5);
        if (variant == 1) x[total / 2] = L::quiet_NaN(), x[total - 1] = L::quiet_NaN();
        if (variant == 2) x[0] = L::infinity(), x[total - 1] = -L::infinity();
        if (variant >= 3)  // all -inf, all +inf: no finite identity may leak into the result
          for (size_t i = 0; i < total; ++i) x[i] = variant == 3 ? -L::infinity() : L::infinity();
        for (DimReduceKind k : {DimReduceKind::Max, DimReduceKind::Min, DimReduceKind::Prod}) {
          Guarded<T> out(static_cast<size_t>(outer * inner));
          std::vector<int64_t> idx(static_cast<size_t>(outer * inner), -1);
          reduce_dim(k, dtype_of<T>(), x.bytes(), outer, n, inner, out.bytes(),
                     k == DimReduceKind::Prod ? nullptr : idx.data());
          for (int64_t o = 0; o < outer; ++o) {
            for (int64_t j = 0; j < inner; ++j) {
              const size_t r = static_cast<size_t>(o * inner + j);
              auto at = [&](int64_t kk) { return x[static_cast<size_t>((o * n + kk) * inner + j)]; };
              if (k == DimReduceKind::Prod) {
                long double p = 1;
                for (int64_t kk = 0; kk < n; ++kk) p *= at(kk);
                const T want = static_cast<T>(p);
                ASSERT_TRUE(same_bits(out[r], want) || std::fabs(static_cast<double>(out[r] - want)) <=
                                                           1e-12 * std::fabs(static_cast<double>(want)))
                    << "prod n " << n << " inner " << inner << " got " << out[r] << " want " << want;
                continue;
              }
              T best = at(0);
              int64_t bi = 0;
              for (int64_t kk = 1; kk < n && !std::isnan(best); ++kk) {
                const T v = at(kk);
                if (std::isnan(v) || (k == DimReduceKind::Max ? v > best : v < best)) best = v, bi = kk;
              }
              ASSERT_TRUE(same_bits(out[r], best)) << (k == DimReduceKind::Max ? "max" : "min") << " n " << n
                                                   << " inner " << inner << " variant " << variant << " got "
                                                   << out[r] << " want " << best;
              ASSERT_EQ(idx[r], bi) << "index n " << n << " inner " << inner << " variant " << variant;
            }
          }
        }
      }
    }
  }
}

TEST_P(OnTarget, ReduceDimF32) {
  ASSERT_EQ(reduce_dim_target(), GetParam());
  check_reduce_dim<float>();
}
TEST_P(OnTarget, ReduceDimF64) {
  ASSERT_EQ(reduce_dim_target(), GetParam());
  check_reduce_dim<double>();
}

// ------------------------------------------------------------ Philox words

// The vector generator gives the scalar generator's words for every run
// length (vector tails), counters carrying into the high word and wrapping
// at 2^64, and writes nothing past the run (the buffer ends at a guard page).
TEST_P(OnTarget, PhiloxWordsMatchScalar) {
  ASSERT_EQ(random_target(), GetParam()) << "dispatch did not reach the target";
  const uint64_t seeds[] = {0, 0xDEADBEEFCAFEF00Dull};
  const uint64_t starts[] = {0, 0xFFFFFFFDull, ~uint64_t{0} - 2};
  for (uint64_t seed : seeds) {
    for (uint64_t start : starts) {
      for (int64_t nb : {1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 33, 64, 100}) {
        Guarded<uint32_t> out(static_cast<size_t>(4 * nb));
        philox_words(seed, start, nb, out.data());
        for (int64_t b = 0; b < nb; ++b) {
          const PhiloxWords want = philox_block(seed, start + static_cast<uint64_t>(b));
          for (int j = 0; j < 4; ++j) {
            ASSERT_EQ(out[static_cast<size_t>(4 * b + j)], want[j])
                << target() << " seed " << seed << " block " << start + b << " word " << j << " of " << nb;
          }
        }
      }
      philox_words(seed, start, 0, nullptr);  // an empty run touches nothing
    }
  }
}

// Box-Muller against std:: math in double: every run length (tails), the
// ends of the uniforms' range (u1 = 0 gives r = 0; the largest u1 gives the
// largest r) and the quarter turns of the angle.
TEST_P(OnTarget, BoxMullerMatchesScalar) {
  ASSERT_EQ(random_target(), GetParam()) << "dispatch did not reach the target";
  const double below_one = 1.0 - 0x1p-53;
  std::vector<double> u1 = {0.0, below_one, 0.5, 1e-300, 0x1p-24, 1.0 - 0x1p-24, 0.25, 0.999};
  std::vector<double> u2 = {0.0, 0.25, 0.5, 0.75, below_one, 1e-17, 0.125, 0.6};
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> uni(0.0, 1.0);
  for (int i = 0; i < 60; ++i) u1.push_back(uni(rng)), u2.push_back(uni(rng));
  for (size_t n : {size_t{0}, size_t{1}, size_t{2}, size_t{3}, size_t{7}, size_t{8}, size_t{9}, size_t{17}, u1.size()}) {
    Guarded<double> z0(n), z1(n);
    box_muller(u1.data(), u2.data(), static_cast<int64_t>(n), z0.data(), z1.data());
    for (size_t i = 0; i < n; ++i) {
      const double r = std::sqrt(-2.0 * std::log(1.0 - u1[i])), t = 6.283185307179586476925286766559 * u2[i];
      EXPECT_NEAR(z0[i], r * std::cos(t), 1e-14 * (1.0 + r)) << target() << " u1 " << u1[i] << " u2 " << u2[i];
      EXPECT_NEAR(z1[i], r * std::sin(t), 1e-14 * (1.0 + r)) << target() << " u1 " << u1[i] << " u2 " << u2[i];
      ASSERT_TRUE(std::isfinite(z0[i]) && std::isfinite(z1[i])) << target();
    }
    if (n > 0) {
      EXPECT_EQ(z0[0], 0.0) << target();  // u1 = 0: r = 0 exactly
    }
  }
}

}  // namespace
}  // namespace ag::kernels
