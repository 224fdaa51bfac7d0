// The row-normalization kernels (norm_rows: layer_norm and rms_norm, and
// norm_backward_rows and norm_weight_grad_rows, their gradients with respect
// to x and weight) on every
// Highway target it was compiled for that this CPU supports, against a scalar
// reference in long double: odd sizes and tails (rows end at a PROT_NONE
// page, so an access past the end faults), with and without weight and bias,
// a large common offset (f32 precision), NaN and infinities.
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernel_test_support.h"

namespace ag::kernels {
namespace {

using namespace ag::kernels::testing;

class NormOnTarget : public OnTargetTest {
 protected:
  void SetUp() override {
    OnTargetTest::SetUp();
    ASSERT_EQ(norm_target(), GetParam()) << "norm_rows did not dispatch to " << target();
  }
};

INSTANTIATE_TEST_SUITE_P(Kernels, NormOnTarget, ::testing::ValuesIn(targets_to_cover()), target_name);

// The reference for one row: statistics in long double, two passes.
template <class T>
void ref_row(const T* x, const T* w, const T* b, size_t n, double eps, bool center, long double* y, long double* mean,
             long double* rstd) {
  long double m = 0, v = 0;
  if (center) {
    for (size_t i = 0; i < n; ++i) m += x[i];
    m /= n;
  }
  for (size_t i = 0; i < n; ++i) v += (x[i] - m) * (x[i] - m);
  v /= n;
  const long double r = 1.0L / std::sqrt(v + eps);
  for (size_t i = 0; i < n; ++i) y[i] = (x[i] - m) * r * (w ? w[i] : 1) + (b ? b[i] : 0);
  *mean = m;
  *rstd = r;
}

// Runs norm_rows over `rows` rows of n guarded elements of x (filled by
// fill(i)) and checks y, mean and rstd against the reference within tol
// (relative to max(1, |value|)).
template <class T, class F>
void check_rows(size_t rows, size_t n, bool center, bool affine, double eps, double tol, F fill) {
  Guarded<T> x(rows * n), y(rows * n), w(n), b(n), mean(rows), rstd(rows);
  for (size_t i = 0; i < rows * n; ++i) x[i] = static_cast<T>(fill(i));
  for (size_t i = 0; i < n; ++i) {
    w[i] = static_cast<T>(0.5 + 0.01 * static_cast<double>(i % 7));
    b[i] = static_cast<T>(-0.25 + 0.03 * static_cast<double>(i % 5));
  }
  norm_rows(dtype_of<T>(), center, x.bytes(), affine ? w.bytes() : nullptr, affine ? b.bytes() : nullptr, y.bytes(),
            center ? mean.bytes() : nullptr, rstd.bytes(), static_cast<int64_t>(rows), static_cast<int64_t>(n), eps);
  std::vector<long double> want(n);
  for (size_t r = 0; r < rows; ++r) {
    long double m = 0, rs = 0;
    ref_row<T>(&x[r * n], affine ? &w[0] : nullptr, affine ? &b[0] : nullptr, n, eps, center, want.data(), &m, &rs);
    const std::string where = "n " + std::to_string(n) + " row " + std::to_string(r) + " center " +
                              std::to_string(center) + " affine " + std::to_string(affine);
    for (size_t i = 0; i < n; ++i) {
      const double wv = static_cast<double>(want[i]);
      ASSERT_NEAR(y[r * n + i], wv, tol * std::max(1.0, std::fabs(wv))) << where << " element " << i;
    }
    if (center) {
      ASSERT_NEAR(mean[r], static_cast<double>(m), tol * std::max(1.0, std::fabs(static_cast<double>(m)))) << where;
    }
    ASSERT_NEAR(rstd[r], static_cast<double>(rs), tol * std::max(1.0, static_cast<double>(rs))) << where;
  }
}

template <class T>
void check_sizes() {
  const double tol = sizeof(T) == 4 ? 1e-5 : 1e-13;
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> uni(-2.0, 3.0);
  std::vector<double> vals(1 << 14);
  for (double& v : vals) v = uni(rng);
  for (size_t n : {1, 2, 3, 7, 8, 15, 16, 17, 31, 32, 33, 63, 100, 768, 1001}) {
    for (bool center : {true, false}) {
      for (bool affine : {false, true}) {
        check_rows<T>(3, n, center, affine, 1e-5, tol, [&](size_t i) { return vals[i % vals.size()]; });
      }
    }
  }
}

TEST_P(NormOnTarget, SizesAndTailsF32) { check_sizes<float>(); }
TEST_P(NormOnTarget, SizesAndTailsF64) { check_sizes<double>(); }

// norm_backward_rows against the formula in long double, with the forward's
// statistics and without them (recomputed: the same bits).
template <class T>
void check_backward_sizes() {
  const double tol = sizeof(T) == 4 ? 2e-5 : 1e-12;
  std::mt19937_64 rng(4);
  std::uniform_real_distribution<double> uni(-2.0, 3.0);
  const size_t rows = 3;
  for (size_t n : {1, 2, 3, 7, 8, 15, 16, 17, 31, 33, 100, 768, 1001}) {
    for (bool center : {true, false}) {
      for (bool affine : {false, true}) {
        Guarded<T> x(rows * n), g(rows * n), w(n), y(rows * n), mean(rows), rstd(rows), out(rows * n), out2(rows * n);
        for (size_t i = 0; i < rows * n; ++i) x[i] = static_cast<T>(uni(rng)), g[i] = static_cast<T>(uni(rng));
        for (size_t i = 0; i < n; ++i) w[i] = static_cast<T>(0.5 + 0.01 * static_cast<double>(i % 7));
        const char* wp = affine ? w.bytes() : nullptr;
        norm_rows(dtype_of<T>(), center, x.bytes(), wp, nullptr, y.bytes(), mean.bytes(), rstd.bytes(),
                  static_cast<int64_t>(rows), static_cast<int64_t>(n), 1e-5);
        norm_backward_rows(dtype_of<T>(), center, g.bytes(), x.bytes(), wp, mean.bytes(), rstd.bytes(), out.bytes(),
                           static_cast<int64_t>(rows), static_cast<int64_t>(n), 1e-5);
        norm_backward_rows(dtype_of<T>(), center, g.bytes(), x.bytes(), wp, nullptr, nullptr, out2.bytes(),
                           static_cast<int64_t>(rows), static_cast<int64_t>(n), 1e-5);
        for (size_t r = 0; r < rows; ++r) {
          long double m = 0, v = 0, a = 0, c = 0;
          if (center) {
            for (size_t i = 0; i < n; ++i) m += x[r * n + i];
            m /= n;
          }
          for (size_t i = 0; i < n; ++i) v += (x[r * n + i] - m) * (x[r * n + i] - m);
          const long double rs = 1.0L / std::sqrt(v / n + 1e-5L);
          auto gx = [&](size_t i) { return static_cast<long double>(g[r * n + i]) * (affine ? w[i] : T(1)); };
          auto xh = [&](size_t i) { return (x[r * n + i] - m) * rs; };
          for (size_t i = 0; i < n; ++i) a += gx(i), c += gx(i) * xh(i);
          a = center ? a / n : 0;
          c /= n;
          for (size_t i = 0; i < n; ++i) {
            const double want = static_cast<double>(rs * (gx(i) - a - xh(i) * c));
            ASSERT_NEAR(out[r * n + i], want, tol * std::max(1.0, std::fabs(want)))
                << "n " << n << " center " << center << " affine " << affine << " element " << i;
            ASSERT_EQ(out[r * n + i], out2[r * n + i]) << "recomputed statistics differ, n " << n;
          }
        }
      }
    }
  }
}

// norm_weight_grad_rows accumulates sum over rows of g * xhat into acc.
template <class T>
void check_weight_grad_sizes() {
  const double tol = sizeof(T) == 4 ? 2e-5 : 1e-12;
  std::mt19937_64 rng(6);
  std::uniform_real_distribution<double> uni(-2.0, 3.0);
  const size_t rows = 5;
  for (size_t n : {1, 3, 8, 17, 33, 100, 1001}) {
    for (bool center : {true, false}) {
      Guarded<T> x(rows * n), g(rows * n), acc(n), acc2(n);
      for (size_t i = 0; i < rows * n; ++i) x[i] = static_cast<T>(uni(rng)), g[i] = static_cast<T>(uni(rng));
      for (size_t i = 0; i < n; ++i) acc[i] = T(1), acc2[i] = T(1);  // accumulates onto what is there
      norm_weight_grad_rows(dtype_of<T>(), center, g.bytes(), x.bytes(), nullptr, nullptr, acc.bytes(),
                            static_cast<int64_t>(rows), static_cast<int64_t>(n), 1e-5);
      std::vector<long double> want(n, 1.0L);
      for (size_t r = 0; r < rows; ++r) {
        long double m = 0, v = 0;
        if (center) {
          for (size_t i = 0; i < n; ++i) m += x[r * n + i];
          m /= n;
        }
        for (size_t i = 0; i < n; ++i) v += (x[r * n + i] - m) * (x[r * n + i] - m);
        const long double rs = 1.0L / std::sqrt(v / n + 1e-5L);
        for (size_t i = 0; i < n; ++i) want[i] += g[r * n + i] * (x[r * n + i] - m) * rs;
      }
      for (size_t i = 0; i < n; ++i) {
        const double wv = static_cast<double>(want[i]);
        ASSERT_NEAR(acc[i], wv, tol * std::max(1.0, std::fabs(wv))) << "n " << n << " center " << center << " i " << i;
      }
    }
  }
}

TEST_P(NormOnTarget, WeightGradSizesAndTailsF32) { check_weight_grad_sizes<float>(); }
TEST_P(NormOnTarget, WeightGradSizesAndTailsF64) { check_weight_grad_sizes<double>(); }

TEST_P(NormOnTarget, BackwardSizesAndTailsF32) { check_backward_sizes<float>(); }
TEST_P(NormOnTarget, BackwardSizesAndTailsF64) { check_backward_sizes<double>(); }

// A large common offset: the corrected two passes keep f32 accurate where
// E[x^2] - E[x]^2 would cancel to noise (and an uncorrected f32 mean is off
// by several ulp). What remains is the mean's rounding to f32: half an ulp
// of 1e4 (5e-4) times rstd (~1.7).
TEST_P(NormOnTarget, LargeOffsetF32) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  std::vector<double> vals(4096);
  for (double& v : vals) v = 1e4 + uni(rng);
  check_rows<float>(2, 1024, true, false, 1e-5, 1e-3, [&](size_t i) { return vals[i]; });
}

template <class T>
void check_edges() {
  using L = std::numeric_limits<T>;
  for (size_t n : {size_t{5}, size_t{40}}) {
    for (bool center : {true, false}) {
      for (T bad : {L::quiet_NaN(), L::infinity()}) {
        Guarded<T> x(2 * n), y(2 * n), mean(2), rstd(2);
        for (size_t i = 0; i < 2 * n; ++i) x[i] = static_cast<T>(0.1 * static_cast<double>(i % 9));
        x[n - 1] = bad;  // the last element of row 0 (in the tail)
        norm_rows(dtype_of<T>(), center, x.bytes(), nullptr, nullptr, y.bytes(), mean.bytes(), rstd.bytes(), 2,
                  static_cast<int64_t>(n), 1e-5);
        // rms_norm of a row with an infinity: var = inf, rstd = 0, so finite
        // elements give 0 and the infinity NaN (as x * rsqrt(mean(x^2)) does).
        const bool zeros = !center && std::isinf(bad);
        for (size_t i = 0; i + 1 < n; ++i) {
          if (zeros) {
            EXPECT_EQ(y[i], T(0)) << "n " << n << " element " << i;
          } else {
            EXPECT_TRUE(std::isnan(y[i])) << "n " << n << " element " << i;
          }
        }
        EXPECT_TRUE(std::isnan(y[n - 1])) << "n " << n;
        for (size_t i = n; i < 2 * n; ++i) EXPECT_TRUE(std::isfinite(y[i])) << "row 1 element " << i;
      }
    }
    // A constant row: zeros (PyTorch too); with eps = 0, 0 * inf = NaN.
    Guarded<T> x(n), y(n), mean(1), rstd(1);
    for (size_t i = 0; i < n; ++i) x[i] = T(2.5);
    norm_rows(dtype_of<T>(), true, x.bytes(), nullptr, nullptr, y.bytes(), mean.bytes(), rstd.bytes(), 1,
              static_cast<int64_t>(n), 1e-5);
    for (size_t i = 0; i < n; ++i) EXPECT_EQ(y[i], T(0));
    norm_rows(dtype_of<T>(), true, x.bytes(), nullptr, nullptr, y.bytes(), mean.bytes(), rstd.bytes(), 1,
              static_cast<int64_t>(n), 0.0);
    EXPECT_EQ(rstd[0], L::infinity());
    for (size_t i = 0; i < n; ++i) EXPECT_TRUE(std::isnan(y[i]));
  }
}

TEST_P(NormOnTarget, EdgesF32) { check_edges<float>(); }
TEST_P(NormOnTarget, EdgesF64) { check_edges<double>(); }

}  // namespace
}  // namespace ag::kernels
