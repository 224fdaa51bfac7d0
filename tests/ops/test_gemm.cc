// The GEMM kernel (src/kernels/gemm.cc) on every compiled SIMD target the CPU
// supports, against a naive triple loop in long double: odd and prime sizes
// (edge tiles), the small and the packed paths, row-major, column-major and
// strided operands read in place, single rows and columns (the dot-product
// path), products summed over k in two parts, alpha/beta, k = 0, the relu
// epilogue; and the same bits whether the tasks run on 1 or 2 threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "core/context.h"
#include "kernel_test_support.h"
#include "kernels/gemm.h"

namespace ag::kernels {
namespace {

using namespace ag::kernels::testing;

class GemmOnTarget : public OnTargetTest {
 protected:
  void SetUp() override {
    OnTargetTest::SetUp();
    ASSERT_EQ(gemm_target(), GetParam()) << "dispatch did not reach the target";
  }
};

INSTANTIATE_TEST_SUITE_P(Kernels, GemmOnTarget, ::testing::ValuesIn(targets_to_cover()), target_name);

// How an operand is laid out in its buffer.
enum class Layout { RowMajor, ColMajor, Strided };

template <class T>
struct Matrix {
  Matrix(int64_t rows_, int64_t cols_, Layout layout, std::mt19937_64& rng) : rows(rows_), cols(cols_) {
    switch (layout) {
      case Layout::RowMajor: rs = cols, cs = 1; break;
      case Layout::ColMajor: rs = 1, cs = rows; break;
      case Layout::Strided: rs = 3 * cols + 1, cs = 2; break;  // every other element, padded rows
    }
    const int64_t span = rows == 0 || cols == 0 ? 1 : (rows - 1) * rs + (cols - 1) * cs + 1;
    data.resize(static_cast<size_t>(span));
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (T& x : data) x = static_cast<T>(u(rng));
  }
  T at(int64_t i, int64_t j) const { return data[static_cast<size_t>(i * rs + j * cs)]; }
  int64_t rows, cols, rs = 1, cs = 1;
  std::vector<T> data;
};

// Runs every task of the product, in order (one thread), then the finishing
// pass of a product split over k.
void run_all(const GemmArgs& product) {
  GemmArgs g = product;
  std::vector<char> partial(gemm_partial_bytes(g));
  if (!partial.empty()) g.partial = partial.data();
  for (int64_t t = 0; t < gemm_tasks(g); ++t) gemm_task(g, t);
  for (int64_t t = 0; t < gemm_finish_tasks(g); ++t) gemm_finish(g, t);
}

template <class T>
void check_product(int64_t m, int64_t n, int64_t k, Layout la, Layout lb, double alpha, double beta,
                   std::mt19937_64& rng) {
  const Matrix<T> a(m, k, la, rng), b(k, n, lb, rng);
  const int64_t ldc = n + 3;  // C rows padded: the padding must stay untouched
  std::vector<T> c(static_cast<size_t>(m * ldc + 1));
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (T& x : c) x = static_cast<T>(u(rng));
  const std::vector<T> c0 = c;
  GemmArgs g{dtype_of<T>(), m,   n,    k, alpha, reinterpret_cast<const char*>(a.data.data()), a.rs, a.cs,
             reinterpret_cast<const char*>(b.data.data()), b.rs, b.cs, beta, reinterpret_cast<char*>(c.data()), ldc};
  run_all(g);
  const double eps = sizeof(T) == 4 ? 1e-6 : 1e-15;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < ldc; ++j) {
      const size_t at = static_cast<size_t>(i * ldc + j);
      if (j >= n) {
        ASSERT_EQ(c[at], c0[at]) << "padding written at " << i << "," << j;
        continue;
      }
      long double ref = 0, mag = 0;
      for (int64_t p = 0; p < k; ++p) {
        ref += static_cast<long double>(a.at(i, p)) * b.at(p, j);
        mag += std::fabs(static_cast<long double>(a.at(i, p)) * b.at(p, j));
      }
      ref = alpha * ref + (beta == 0 ? 0.0L : beta * static_cast<long double>(c0[at]));
      mag = std::fabs(alpha) * mag + std::fabs(beta * static_cast<long double>(c0[at]));
      ASSERT_NEAR(static_cast<double>(c[at]), static_cast<double>(ref), eps * (4 * k + 8) * (1 + static_cast<double>(mag)))
          << "m=" << m << " n=" << n << " k=" << k << " at " << i << "," << j << " layouts " << int(la) << int(lb)
          << " alpha=" << alpha << " beta=" << beta;
    }
  }
}

template <class T>
void check_sizes() {
  std::mt19937_64 rng(17);
  const int64_t sizes[] = {1, 2, 3, 5, 7, 8, 13, 16, 17, 31, 47, 49, 64, 70};
  for (int64_t m : sizes) {
    for (int64_t n : {1, 7, 17, 48, 49, 70}) {
      for (int64_t k : {1, 13, 70}) check_product<T>(m, n, k, Layout::RowMajor, Layout::RowMajor, 1.0, 0.0, rng);
    }
  }
  // Past the small path and over several KC blocks, tasks and edge tiles.
  check_product<T>(131, 97, 300, Layout::RowMajor, Layout::RowMajor, 1.0, 0.0, rng);
  check_product<T>(257, 1031, 67, Layout::RowMajor, Layout::RowMajor, 1.0, 0.0, rng);
  // Single columns and rows large enough to be split into tasks.
  check_product<T>(700, 1, 1500, Layout::RowMajor, Layout::RowMajor, 1.0, 0.0, rng);
  check_product<T>(1, 700, 1500, Layout::RowMajor, Layout::ColMajor, 1.0, 0.0, rng);
}

template <class T>
void check_layouts() {
  std::mt19937_64 rng(23);
  const Layout all[] = {Layout::RowMajor, Layout::ColMajor, Layout::Strided};
  for (Layout la : all) {
    for (Layout lb : all) {
      check_product<T>(5, 3, 7, la, lb, 1.0, 0.0, rng);     // small path
      check_product<T>(67, 53, 139, la, lb, 1.0, 0.0, rng);  // packed path
      check_product<T>(67, 80, 139, la, lb, 1.0, 0.0, rng);  // a last panel of B of 2 vectors (AVX-512)
      // One short block of k, a last panel that ends inside a vector.
      check_product<T>(67, 53, 10, la, lb, 1.0, 0.0, rng);
      check_product<T>(67, 80, 64, la, lb, 1.0, 0.0, rng);
      check_product<T>(37, 1, 1001, la, lb, 1.0, 0.0, rng);  // one column: dot products
      check_product<T>(1, 301, 203, la, lb, 1.0, 0.0, rng);  // one row
      // Narrow (column-major A: vectors down C's columns), over KC blocks
      // and partial runs of rows, in column blocks of every width (7 = 4 + 3,
      // 11 = 6 + 5).
      for (int64_t n : {2, 3, 7, 10, 11, 12, 13}) check_product<T>(70, n, 300, la, lb, 1.0, 0.0, rng);
      check_product<T>(33, 10, 64, la, lb, 1.0, 0.0, rng);
      check_product<T>(256, 10, 64, la, lb, 1.0, 0.0, rng);
      // Dot (row-major A, column-major B: vectors along k; other B on a
      // copy of B^T from k = 128): an odd row count (the last of a pair
      // alone), k with a partial vector and a partial block of the copy.
      check_product<T>(33, 10, 67, la, lb, 1.0, 0.0, rng);
      check_product<T>(64, 10, 256, la, lb, 1.0, 0.0, rng);
      check_product<T>(33, 10, 131, la, lb, 1.0, 0.0, rng);
      // Few rows, many columns: the transposes of the narrow and dot
      // products (C written through its column stride), partial runs.
      for (int64_t m : {2, 7, 10}) check_product<T>(m, 70, 300, la, lb, 1.0, 0.0, rng);
      check_product<T>(10, 256, 64, la, lb, 1.0, 0.0, rng);
      // A small batch times a large B: with row-major B, summed over k in
      // two parts (a cut past the half for f64, at 320 of 700).
      check_product<T>(40, 200, 700, la, lb, 1.0, 0.0, rng);
      // Deep blocks (at least 256 rows, k past one deep block): rows in two
      // blocks and a partial one, a partial last block of k, A packed
      // unless it is row-major.
      check_product<T>(300, 20, 1100, la, lb, 1.0, 0.0, rng);
    }
  }
}

template <class T>
void check_alpha_beta() {
  std::mt19937_64 rng(29);
  for (double alpha : {1.0, -0.5, 2.0, 0.0}) {
    for (double beta : {0.0, 1.0, 0.25, -1.0}) {
      check_product<T>(3, 5, 4, Layout::RowMajor, Layout::RowMajor, alpha, beta, rng);
      check_product<T>(41, 59, 301, Layout::RowMajor, Layout::ColMajor, alpha, beta, rng);
      check_product<T>(41, 59, 12, Layout::RowMajor, Layout::RowMajor, alpha, beta, rng);
      check_product<T>(9, 1, 517, Layout::RowMajor, Layout::RowMajor, alpha, beta, rng);
      check_product<T>(45, 7, 301, Layout::ColMajor, Layout::RowMajor, alpha, beta, rng);
      check_product<T>(45, 7, 301, Layout::RowMajor, Layout::RowMajor, alpha, beta, rng);
      check_product<T>(45, 7, 301, Layout::RowMajor, Layout::ColMajor, alpha, beta, rng);
      check_product<T>(7, 45, 301, Layout::ColMajor, Layout::RowMajor, alpha, beta, rng);
      check_product<T>(7, 45, 301, Layout::RowMajor, Layout::ColMajor, alpha, beta, rng);
      check_product<T>(32, 128, 512, Layout::RowMajor, Layout::RowMajor, alpha, beta, rng);  // k in two parts
    }
  }
}

TEST_P(GemmOnTarget, SizesF32) { check_sizes<float>(); }
TEST_P(GemmOnTarget, SizesF64) { check_sizes<double>(); }
TEST_P(GemmOnTarget, LayoutsF32) { check_layouts<float>(); }
TEST_P(GemmOnTarget, LayoutsF64) { check_layouts<double>(); }
TEST_P(GemmOnTarget, AlphaBetaF32) { check_alpha_beta<float>(); }
TEST_P(GemmOnTarget, AlphaBetaF64) { check_alpha_beta<double>(); }

// k = 0: C = beta * C (zeros for beta = 0, even over NaN); alpha is not applied.
TEST_P(GemmOnTarget, EmptyInnerDim) {
  for (int64_t m : {1, 40, 200}) {
    for (double beta : {0.0, 2.0}) {
      std::vector<float> c(static_cast<size_t>(m * 9), std::nanf(""));
      if (beta != 0.0) std::fill(c.begin(), c.end(), 1.5f);
      const float dummy = 0;
      GemmArgs g{DType::F32, m, 9, 0, 3.0, reinterpret_cast<const char*>(&dummy), 0, 1,
                 reinterpret_cast<const char*>(&dummy), 9, 1, beta, reinterpret_cast<char*>(c.data()), 9};
      run_all(g);
      for (float x : c) ASSERT_EQ(x, beta == 0.0 ? 0.0f : 3.0f);
    }
  }
}

// The relu epilogue gives the bits of the product followed by relu (x > 0 ?
// x : +0, NaN stays NaN), on the small, dot, packed and multi-KC-block
// paths, with beta = 1 (a bias in C, as linear uses it), the narrow and
// dot ones, and a product in two parts over k (relu after the second).
template <class T>
void check_relu_epilogue() {
  std::mt19937_64 rng(53);
  struct Sizes {
    int64_t m, n, k;
  };
  for (const Sizes& z : {Sizes{5, 3, 7}, Sizes{37, 1, 301}, Sizes{67, 53, 139}, Sizes{64, 10, 784}, Sizes{10, 64, 784}, Sizes{70, 90, 600},
                        Sizes{32, 128, 512}, Sizes{67, 53, 10}}) {
    for (int pair = 0; pair < 3; ++pair) {
      // For 10 columns: column-major A takes the narrow path, row-major A
      // the dot path (with row-major B, on a copy of B^T).
      const Layout la = pair == 1 ? Layout::ColMajor : Layout::RowMajor;
      const Layout lb = pair == 0 ? Layout::RowMajor : Layout::ColMajor;
      const Matrix<T> a(z.m, z.k, la, rng), b(z.k, z.n, lb, rng);
      std::vector<T> bias(static_cast<size_t>(z.m * z.n));
      std::uniform_real_distribution<double> u(-1.0, 1.0);
      for (T& x : bias) x = static_cast<T>(u(rng));
      bias[0] = std::numeric_limits<T>::quiet_NaN();
      std::vector<T> plain = bias, fused = bias;
      GemmArgs g{dtype_of<T>(), z.m, z.n, z.k, 1.0, reinterpret_cast<const char*>(a.data.data()), a.rs, a.cs,
                 reinterpret_cast<const char*>(b.data.data()), b.rs, b.cs, 1.0, reinterpret_cast<char*>(plain.data()), z.n};
      run_all(g);
      g.c = reinterpret_cast<char*>(fused.data());
      g.relu = true;
      run_all(g);
      int64_t zeros = 0;
      for (size_t i = 0; i < plain.size(); ++i) {
        const T want = plain[i] > T(0) || std::isnan(plain[i]) ? plain[i] : T(0);
        zeros += want == T(0);
        ASSERT_EQ(0, std::memcmp(&want, &fused[i], sizeof(T))) << z.m << "x" << z.n << "x" << z.k << " at " << i;
      }
      EXPECT_GT(zeros, 0);
      ASSERT_TRUE(std::isnan(fused[0]));
    }
  }
}

TEST_P(GemmOnTarget, ReluEpilogueF32) { check_relu_epilogue<float>(); }
TEST_P(GemmOnTarget, ReluEpilogueF64) { check_relu_epilogue<double>(); }

// beta = 0 never reads C: NaN in C does not leak into the result.
TEST_P(GemmOnTarget, BetaZeroIgnoresC) {
  for (int64_t s : {4, 100}) {
    std::vector<double> a(static_cast<size_t>(s * s), 1.0), c(static_cast<size_t>(s * s), std::nan(""));
    GemmArgs g{DType::F64, s, s, s, 1.0, reinterpret_cast<const char*>(a.data()), s, 1,
               reinterpret_cast<const char*>(a.data()), s, 1, 0.0, reinterpret_cast<char*>(c.data()), s};
    run_all(g);
    for (double x : c) ASSERT_EQ(x, static_cast<double>(s));
  }
}

// The tasks are a fixed partition: running them on 2 threads of a context's
// arena, in any order, gives the bits of 1 thread.
TEST(Gemm, SameBitsOnOneAndTwoThreads) {
  std::mt19937_64 rng(31);
  struct Sizes {
    int64_t m, n, k;
  };
  for (const Sizes& z : {Sizes{97, 94, 102}, Sizes{300, 297, 305}, Sizes{515, 512, 520}, Sizes{3000, 1, 2000},
                         Sizes{1, 3000, 2000}}) {
    const Matrix<float> a(z.m, z.k, Layout::RowMajor, rng), b(z.k, z.n, Layout::ColMajor, rng);
    std::vector<float> c1(static_cast<size_t>(z.m * z.n)), c2(c1.size());
    GemmArgs g{DType::F32, z.m, z.n, z.k, 1.0, reinterpret_cast<const char*>(a.data.data()), a.rs, a.cs,
               reinterpret_cast<const char*>(b.data.data()), b.rs, b.cs, 0.0, reinterpret_cast<char*>(c1.data()), z.n};
    Context one(1), two(2);
    one.parallel_chunks(gemm_tasks(g), 1, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) gemm_task(g, t);
    });
    g.c = reinterpret_cast<char*>(c2.data());
    const int64_t tasks = gemm_tasks(g);
    two.parallel_chunks(tasks, 1, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) gemm_task(g, tasks - 1 - t);  // reversed order, too
    });
    if (z.m * z.n * z.k > 1000000) {
      EXPECT_GT(tasks, 1);
    }
    ASSERT_EQ(0, std::memcmp(c1.data(), c2.data(), c1.size() * sizeof(float))) << z.m << "x" << z.n << "x" << z.k;
  }
}

// The elements of C each task writes (found by running it alone), and the
// share of C the busiest of t threads computes under the parallel loop's
// schedule: thread p runs its lane of tasks [p c / t, (p + 1) c / t) first,
// then the next lanes' next tasks, the thread free first moving next.
double busiest_share(const GemmArgs& g, int64_t t) {
  const int64_t count = gemm_tasks(g);
  std::vector<float> c(static_cast<size_t>(g.m * g.n)), partial(c.size());
  std::vector<double> written(static_cast<size_t>(count));
  auto set = [](const std::vector<float>& v) { return std::count_if(v.begin(), v.end(), [](float x) { return !std::isnan(x); }); };
  for (int64_t task = 0; task < count; ++task) {
    std::fill(c.begin(), c.end(), std::nanf(""));
    std::fill(partial.begin(), partial.end(), std::nanf(""));
    GemmArgs gt = g;
    gt.c = reinterpret_cast<char*>(c.data());
    gt.partial = reinterpret_cast<char*>(partial.data());
    gemm_task(gt, task);
    written[static_cast<size_t>(task)] = static_cast<double>(set(c) + set(partial));
  }
  std::vector<int64_t> next(static_cast<size_t>(t)), end(static_cast<size_t>(t));
  for (int64_t p = 0; p < t; ++p) {
    next[static_cast<size_t>(p)] = p * count / t;
    end[static_cast<size_t>(p)] = (p + 1) * count / t;
  }
  std::vector<double> load(static_cast<size_t>(t), 0.0);
  for (int64_t left = count; left > 0; --left) {
    const size_t p = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    for (int64_t i = 0; i < t; ++i) {
      const size_t lane = (p + static_cast<size_t>(i)) % static_cast<size_t>(t);
      if (next[lane] < end[lane]) {
        load[p] += written[static_cast<size_t>(next[lane]++)];
        break;
      }
    }
  }
  const double total = std::accumulate(written.begin(), written.end(), 0.0);  // m n, or 2 m n over two parts of k
  return *std::max_element(load.begin(), load.end()) / total;
}

// The grid made for T threads (GemmArgs::threads) changes neither the bits
// nor the coverage of C, and the busiest thread's share of a large product
// shrinks as T grows and stays within 0.52 at 2 threads (the MLP's
// products of a batch of 64 among them: 256 columns split 128 + 128; tiles
// in whole panels of 48 gave one thread 144, 0.5625).
TEST(Gemm, GridForEachThreadCountSameBits) {
  std::mt19937_64 rng(47);
  struct Sizes {
    int64_t m, n, k;
  };
  for (const Sizes& z : {Sizes{512, 512, 512}, Sizes{300, 297, 305}, Sizes{64, 1000, 784}, Sizes{1000, 64, 300},
                         Sizes{64, 256, 784}, Sizes{256, 784, 64}, Sizes{64, 256, 256}, Sizes{256, 256, 64}}) {
    const Matrix<float> a(z.m, z.k, Layout::RowMajor, rng), b(z.k, z.n, Layout::RowMajor, rng);
    std::vector<float> c1(static_cast<size_t>(z.m * z.n));
    GemmArgs g{DType::F32, z.m, z.n, z.k, 1.0, reinterpret_cast<const char*>(a.data.data()), a.rs, a.cs,
               reinterpret_cast<const char*>(b.data.data()), b.rs, b.cs, 0.0, reinterpret_cast<char*>(c1.data()), z.n};
    run_all(g);
    double last_share = 1.0;
    for (int64_t t = 2; t <= 16; ++t) {
      std::vector<float> ct(c1.size(), std::nanf(""));
      GemmArgs gt = g;
      gt.threads = t;
      gt.c = reinterpret_cast<char*>(ct.data());
      run_all(gt);
      ASSERT_EQ(0, std::memcmp(c1.data(), ct.data(), c1.size() * sizeof(float)))
          << z.m << "x" << z.n << "x" << z.k << " for " << t << " threads";
      const double share = busiest_share(gt, t);
      EXPECT_LE(share, last_share + 0.02) << z.m << "x" << z.n << "x" << z.k << " for " << t << " threads";
      if (t == 2) {
        EXPECT_LE(share, 0.52) << z.m << "x" << z.n << "x" << z.k;
      }
      last_share = std::min(last_share, share);
    }
  }
}

// A weight gradient's product (k, the batch, at most half of m and n) is cut into
// one band of whole rows per thread: the tasks the parallel loop deals to
// lane p write rows [p m / t, (p + 1) m / t) within two panels of 8, the
// part of C an elementwise loop over it deals to the same lane next. A
// forward product (B the largest operand) is not: on 2 threads each takes
// half of B (its rows, as B is row-major: SmallBatchTimesWeightSplitsK).
TEST(Gemm, WeightGradientInRowBandsPerThread) {
  std::mt19937_64 rng(53);
  struct Sizes {
    int64_t m, n, k;
    bool bands;
  };
  for (const Sizes& z : {Sizes{256, 784, 64, true}, Sizes{784, 256, 64, true}, Sizes{256, 256, 64, true},
                         Sizes{64, 256, 784, false}, Sizes{64, 256, 256, false}}) {
    const Matrix<float> a(z.m, z.k, Layout::RowMajor, rng), b(z.k, z.n, Layout::RowMajor, rng);
    for (int64_t t : {2, 3, 4}) {
      std::vector<float> c(static_cast<size_t>(z.m * z.n), std::nanf("")), partial(c.size());
      GemmArgs g{DType::F32, z.m, z.n, z.k, 1.0, reinterpret_cast<const char*>(a.data.data()), a.rs, a.cs,
                 reinterpret_cast<const char*>(b.data.data()), b.rs, b.cs, 0.0, reinterpret_cast<char*>(c.data()), z.n};
      g.threads = t;
      g.partial = reinterpret_cast<char*>(partial.data());
      const int64_t count = gemm_tasks(g);
      for (int64_t task = 0; task < count / t; ++task) gemm_task(g, task);  // lane 0's run
      int64_t full_rows = 0, touched_rows = 0;
      for (int64_t i = 0; i < z.m; ++i) {
        const auto row = c.begin() + i * z.n;
        const int64_t written = std::count_if(row, row + z.n, [](float v) { return !std::isnan(v); });
        full_rows += written == z.n;
        touched_rows += written > 0;
      }
      const std::string what = std::to_string(z.m) + "x" + std::to_string(z.n) + "x" + std::to_string(z.k) +
                               " on " + std::to_string(t) + " threads";
      if (z.bands) {
        EXPECT_EQ(full_rows, touched_rows) << what;
        EXPECT_NEAR(static_cast<double>(full_rows), static_cast<double>(z.m) / static_cast<double>(t), 16.0) << what;
        for (int64_t i = 0; i < full_rows * z.n; ++i) ASSERT_FALSE(std::isnan(c[static_cast<size_t>(i)])) << what;
      } else if (t == 2) {
        EXPECT_EQ(touched_rows, z.m) << what;
      }
    }
  }
}

// A batch of 64 times a weight stored [in, out] (row-major B, k >= 4 m) is
// summed over k in two parts, cut at the multiple of the packed depth (128
// floats) nearest k / 2: on 2 threads lane 0's tasks read only B's rows
// below the cut and write C, lane 1's only the rest and write the partial
// sum (NaN in the other rows of B reaches nothing they write): the halves
// of the weight that an elementwise update deals to each thread. The same
// shape with column-major B is split by columns instead.
TEST(Gemm, SmallBatchTimesWeightSplitsKByRowsOfB) {
  std::mt19937_64 rng(59);
  struct Sizes {
    int64_t m, n, k, cut;
  };
  for (const Sizes& z : {Sizes{64, 256, 784, 384}, Sizes{64, 256, 256, 128}, Sizes{64, 1000, 784, 384}}) {
    const Matrix<float> a(z.m, z.k, Layout::RowMajor, rng);
    const std::string what = std::to_string(z.m) + "x" + std::to_string(z.n) + "x" + std::to_string(z.k);
    {
      const Matrix<float> bc(z.k, z.n, Layout::ColMajor, rng);
      GemmArgs g{DType::F32, z.m, z.n, z.k, 1.0, reinterpret_cast<const char*>(a.data.data()), a.rs, a.cs,
                 reinterpret_cast<const char*>(bc.data.data()), bc.rs, bc.cs, 0.0, nullptr, z.n};
      EXPECT_EQ(gemm_partial_bytes(g), 0u) << what;
      EXPECT_EQ(gemm_finish_tasks(g), 0) << what;
    }
    for (int lane = 0; lane < 2; ++lane) {
      Matrix<float> b(z.k, z.n, Layout::RowMajor, rng);
      const int64_t nan_from = lane == 0 ? z.cut : 0, nan_to = lane == 0 ? z.k : z.cut;
      for (int64_t p = nan_from; p < nan_to; ++p) {
        std::fill_n(b.data.begin() + p * z.n, z.n, std::nanf(""));
      }
      std::vector<float> c(static_cast<size_t>(z.m * z.n), std::nanf("")), partial(c.size(), std::nanf(""));
      GemmArgs g{DType::F32, z.m, z.n, z.k, 1.0, reinterpret_cast<const char*>(a.data.data()), a.rs, a.cs,
                 reinterpret_cast<const char*>(b.data.data()), b.rs, b.cs, 0.0, reinterpret_cast<char*>(c.data()), z.n};
      g.threads = 2;
      g.partial = reinterpret_cast<char*>(partial.data());
      ASSERT_EQ(gemm_partial_bytes(g), c.size() * sizeof(float)) << what;
      const int64_t count = gemm_tasks(g);
      for (int64_t t = lane * count / 2; t < (lane + 1) * count / 2; ++t) gemm_task(g, t);
      const std::vector<float>& mine = lane == 0 ? c : partial;
      const std::vector<float>& other = lane == 0 ? partial : c;
      for (size_t i = 0; i < mine.size(); ++i) {
        ASSERT_FALSE(std::isnan(mine[i])) << what << " lane " << lane << " at " << i;
        ASSERT_TRUE(std::isnan(other[i])) << what << " lane " << lane << " at " << i;
      }
    }
  }
}

}  // namespace
}  // namespace ag::kernels
