// Losses through the C API: values against scalar references (class and
// probability targets, ignore_index, label smoothing, every reduction),
// empty batches, gradients of a typical classifier batch, and every error.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>

#include "api_util.h"

namespace {

using namespace apitest;

// PyTorch's cross entropy with class targets over (N, C, inner) logits, per item.
std::vector<double> ref_ce_items(const std::vector<double>& x, int64_t n, int64_t c, int64_t inner,
                                 const std::vector<double>& t, int64_t ignore, double eps, bool logits) {
  std::vector<double> out(static_cast<size_t>(n * inner));
  for (int64_t o = 0; o < n; ++o) {
    for (int64_t j = 0; j < inner; ++j) {
      auto at = [&](int64_t k) { return x[static_cast<size_t>((o * c + k) * inner + j)]; };
      long double m = -INFINITY, s = 0;
      for (int64_t k = 0; k < c; ++k) m = std::max<long double>(m, at(k));
      for (int64_t k = 0; k < c; ++k) s += std::exp(at(k) - m);
      auto logp = [&](int64_t k) { return logits ? at(k) - m - std::log(s) : static_cast<long double>(at(k)); };
      const int64_t tk = static_cast<int64_t>(t[static_cast<size_t>(o * inner + j)]);
      long double loss = 0;
      if (tk != ignore) {
        long double smooth = 0;
        for (int64_t k = 0; k < c; ++k) smooth -= logp(k);
        loss = -(1 - eps) * logp(tk) + eps / c * smooth;
      }
      out[static_cast<size_t>(o * inner + j)] = static_cast<double>(loss);
    }
  }
  return out;
}

double reduce(const std::vector<double>& items, int32_t red, double count) {
  long double s = 0;
  for (double v : items) s += v;
  return static_cast<double>(red == AG_REDUCTION_SUM ? s : s / count);
}

void expect_near_all(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol * (1 + std::fabs(want[i]))) << i;
}

TEST(CrossEntropy, ClassTargets) {
  Ctx ctx;
  struct Row {
    Shape in;
    Shape tshape;
    std::vector<double> t;
  };
  const std::vector<Row> rows = {{{4, 5}, {4}, {0, 3, 4, 1}},
                                 {{4, 5}, {4}, {2, -100, 0, 4}},
                                 {{2, 3, 4}, {2, 4}, {0, 2, 1, 1, 2, -100, 0, 0}},
                                 {{64, 10}, {64}, {}}};
  for (ag_dtype dt : {AG_F32, AG_F64}) {
    const double tol = dt == AG_F32 ? 2e-6 : 1e-13;
    for (Row row : rows) {
      if (row.t.empty())
        for (int i = 0; i < 64; ++i) row.t.push_back((i * 7) % 10);
      const int64_t n = row.in[0], c = row.in[1], inner = numel(row.in) / n / c;
      std::vector<double> v = sample(numel(row.in), -4.0, 4.0, 8);
      if (dt == AG_F32) for (double& e : v) e = static_cast<float>(e);
      T x = make(ctx.get(), dt, row.in, v), t = make(ctx.get(), AG_I64, row.tshape, row.t);
      double count = 0;
      for (double e : row.t) count += e != -100;
      for (double eps : {0.0, 0.1}) {
        for (bool logits : {true, false}) {
          const std::vector<double> items = ref_ce_items(v, n, c, inner, row.t, -100, logits ? eps : 0.0, logits);
          for (int32_t red : {AG_REDUCTION_NONE, AG_REDUCTION_MEAN, AG_REDUCTION_SUM}) {
            T y;
            if (logits) {
              ASSERT_AG(ag_op_cross_entropy(y.out(), x, t, red, -100, eps));
            } else {
              ASSERT_AG(ag_op_nll_loss(y.out(), x, t, red, -100));
            }
            if (red == AG_REDUCTION_NONE) {
              EXPECT_EQ(shape_of(y), row.tshape);
              expect_near_all(read(y), items, tol);
            } else {
              EXPECT_EQ(ag_tensor_ndim(y), 0);
              EXPECT_NEAR(read(y)[0], reduce(items, red, count), tol * (1 + std::fabs(reduce(items, red, count))));
            }
          }
        }
      }
    }
  }
}

TEST(CrossEntropy, ProbabilityTargetsAndOneDim) {
  Ctx ctx;
  const std::vector<double> v = sample(12, -3.0, 3.0, 4), q = sample(12, 0.0, 1.0, 5);
  T x = make(ctx.get(), AG_F64, {3, 4}, v), t = make(ctx.get(), AG_F64, {3, 4}, q);
  for (double eps : {0.0, 0.3}) {
    std::vector<double> items(3);
    for (int i = 0; i < 3; ++i) {
      long double m = -INFINITY, s = 0, l = 0;
      for (int k = 0; k < 4; ++k) m = std::max<long double>(m, v[static_cast<size_t>(i * 4 + k)]);
      for (int k = 0; k < 4; ++k) s += std::exp(v[static_cast<size_t>(i * 4 + k)] - m);
      for (int k = 0; k < 4; ++k) {
        const size_t p = static_cast<size_t>(i * 4 + k);
        l -= (q[p] * (1 - eps) + eps / 4) * (v[p] - m - std::log(s));
      }
      items[static_cast<size_t>(i)] = static_cast<double>(l);
    }
    T none, mean;
    ASSERT_AG(ag_op_cross_entropy(none.out(), x, t, AG_REDUCTION_NONE, -100, eps));
    expect_near_all(read(none), items, 1e-14);
    ASSERT_AG(ag_op_cross_entropy(mean.out(), x, t, AG_REDUCTION_MEAN, -100, eps));
    EXPECT_NEAR(read(mean)[0], reduce(items, AG_REDUCTION_MEAN, 3), 1e-14);
  }
  // (C) logits with a 0-dim class target.
  T x1 = make(ctx.get(), AG_F64, {4}, {1.0, 2.0, 3.0, 4.0}), t1 = make(ctx.get(), AG_I64, {}, {2});
  T y;
  ASSERT_AG(ag_op_cross_entropy(y.out(), x1, t1, AG_REDUCTION_NONE, -100, 0.0));
  EXPECT_EQ(ag_tensor_ndim(y), 0);
  const double lse = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0) + std::exp(4.0));
  EXPECT_NEAR(read(y)[0], lse - 3.0, 1e-14);
}

// Empty batches and all-ignored targets: NaN mean (0/0), zero sum, empty none.
TEST(CrossEntropy, EmptyAndAllIgnored) {
  Ctx ctx;
  T x = make(ctx.get(), AG_F32, {0, 5}, {}), t = make(ctx.get(), AG_I64, {0}, {});
  T y;
  ASSERT_AG(ag_op_cross_entropy(y.out(), x, t, AG_REDUCTION_MEAN, -100, 0.0));
  EXPECT_TRUE(std::isnan(read(y)[0]));
  ASSERT_AG(ag_op_cross_entropy(y.out(), x, t, AG_REDUCTION_SUM, -100, 0.0));
  EXPECT_EQ(read(y)[0], 0.0);
  ASSERT_AG(ag_op_nll_loss(y.out(), x, t, AG_REDUCTION_NONE, -100));
  EXPECT_EQ(shape_of(y), (Shape{0}));
  T x2 = make(ctx.get(), AG_F64, {2, 3}, sample(6, -1, 1, 3)), t2 = make(ctx.get(), AG_I64, {2}, {-100, -100});
  ag_tensor_requires_grad(x2, 1);
  ASSERT_AG(ag_op_nll_loss(y.out(), x2, t2, AG_REDUCTION_MEAN, -100));
  EXPECT_TRUE(std::isnan(read(y)[0]));
  ASSERT_AG(ag_op_cross_entropy(y.out(), x2, t2, AG_REDUCTION_SUM, -100, 0.0));
  EXPECT_EQ(read(y)[0], 0.0);
  ASSERT_AG(ag_backward(y, nullptr, nullptr));
  T g;
  ASSERT_AG(ag_tensor_grad(g.out(), x2));
  for (double e : read(g)) EXPECT_EQ(e, 0.0);
}

// d mean CE / d logits = (softmax - onehot) / N for a classifier batch.
TEST(CrossEntropy, GradientOfBatch) {
  Ctx ctx;
  const int64_t n = 64, c = 10;
  const std::vector<double> v = sample(n * c, -3.0, 3.0, 21);
  std::vector<double> tv;
  for (int64_t i = 0; i < n; ++i) tv.push_back(static_cast<double>((i * 3) % c));
  T x = make(ctx.get(), AG_F64, {n, c}, v), t = make(ctx.get(), AG_I64, {n}, tv);
  ag_tensor_requires_grad(x, 1);
  T y, g;
  ASSERT_AG(ag_op_cross_entropy(y.out(), x, t, AG_REDUCTION_MEAN, -100, 0.0));
  ASSERT_AG(ag_backward(y, nullptr, nullptr));
  ASSERT_AG(ag_tensor_grad(g.out(), x));
  const std::vector<double> got = read(g);
  for (int64_t i = 0; i < n; ++i) {
    double s = 0;
    for (int64_t k = 0; k < c; ++k) s += std::exp(v[static_cast<size_t>(i * c + k)]);
    for (int64_t k = 0; k < c; ++k) {
      const double want = (std::exp(v[static_cast<size_t>(i * c + k)]) / s - (k == tv[static_cast<size_t>(i)])) / n;
      EXPECT_NEAR(got[static_cast<size_t>(i * c + k)], want, 1e-15);
    }
  }
}

// Not a timed test: prints the cost of the MLP workload's loss step.
TEST(CrossEntropy, ReportsBatchCost) {
  Ctx ctx;
  T x = make(ctx.get(), AG_F32, {64, 10}, sample(640, -3.0, 3.0, 2));
  std::vector<double> tv;
  for (int i = 0; i < 64; ++i) tv.push_back(i % 10);
  T t = make(ctx.get(), AG_I64, {64}, tv);
  ag_tensor_requires_grad(x, 1);
  std::vector<double> us;
  for (int rep = 0; rep < 7; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 200; ++i) {
      T y;
      ASSERT_AG(ag_op_cross_entropy(y.out(), x, t, AG_REDUCTION_MEAN, -100, 0.0));
      ASSERT_AG(ag_backward(y, nullptr, nullptr));
    }
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / 200);
  }
  std::sort(us.begin(), us.end());
  std::printf("[ loss ] cross_entropy (64,10) f32 forward + backward: median %.2f us\n", us[us.size() / 2]);
}

TEST(MseLoss, Values) {
  Ctx ctx;
  const std::vector<double> a = sample(6, -2, 2, 1), b = sample(3, -2, 2, 2);
  T ta = make(ctx.get(), AG_F64, {2, 3}, a), tb = make(ctx.get(), AG_F64, {3}, b);
  std::vector<double> items(6);
  for (size_t i = 0; i < 6; ++i) items[i] = (a[i] - b[i % 3]) * (a[i] - b[i % 3]);
  T y;
  ASSERT_AG(ag_op_mse_loss(y.out(), ta, tb, AG_REDUCTION_NONE));
  EXPECT_EQ(shape_of(y), (Shape{2, 3}));
  expect_near_all(read(y), items, 1e-15);
  ASSERT_AG(ag_op_mse_loss(y.out(), ta, tb, AG_REDUCTION_MEAN));
  EXPECT_NEAR(read(y)[0], reduce(items, AG_REDUCTION_MEAN, 6), 1e-15);
  ASSERT_AG(ag_op_mse_loss(y.out(), ta, tb, AG_REDUCTION_SUM));
  EXPECT_NEAR(read(y)[0], reduce(items, AG_REDUCTION_SUM, 6), 1e-14);
  T e = make(ctx.get(), AG_F64, {0}, {});
  ASSERT_AG(ag_op_mse_loss(y.out(), e, e, AG_REDUCTION_MEAN));
  EXPECT_TRUE(std::isnan(read(y)[0]));
}

// Gradient of the sum of a loss with respect to its input, through ag_backward.
std::vector<double> input_grad(ag_tensor* x, ag_tensor* loss) {
  EXPECT_EQ(ag_backward(loss, nullptr, nullptr), AG_OK) << ag_last_error_message();
  T g;
  EXPECT_EQ(ag_tensor_grad(g.out(), x), AG_OK);
  std::vector<double> v = read(g);
  ag_tensor_set_grad(x, nullptr);
  return v;
}

TEST(RobustLosses, ValuesAndKinks) {
  Ctx ctx;
  // Differences -2, -1, -0.5, 0, 0.5, 1, 2 (target 0): kinks at 0, +-beta, +-delta.
  const std::vector<double> d = {-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0};
  for (ag_dtype dt : {AG_F32, AG_F64}) {
    T x = make(ctx.get(), dt, {7}, d), t = make(ctx.get(), dt, {7}, std::vector<double>(7, 0.0));
    ag_tensor_requires_grad(x, 1);
    for (double beta : {1.0, 0.0, 0.5}) {
      std::vector<double> want, dwant;
      for (double v : d) {
        const double a = std::fabs(v);
        want.push_back(a < beta ? 0.5 * v * v / beta : a - 0.5 * beta);
        dwant.push_back(a < beta ? v / beta : (v > 0) - (v < 0));
      }
      T y;
      ASSERT_AG(ag_op_smooth_l1_loss(y.out(), x, t, AG_REDUCTION_NONE, beta));
      expect_near_all(read(y), want, 1e-7);
      ASSERT_AG(ag_op_smooth_l1_loss(y.out(), x, t, AG_REDUCTION_SUM, beta));
      expect_near_all(input_grad(x, y), dwant, 1e-7);
    }
    for (double delta : {1.0, 0.5, 3.0}) {
      std::vector<double> want, dwant;
      for (double v : d) {
        const double a = std::fabs(v);
        want.push_back(a < delta ? 0.5 * v * v : delta * (a - 0.5 * delta));
        dwant.push_back(a < delta ? v : delta * ((v > 0) - (v < 0)));
      }
      T y;
      ASSERT_AG(ag_op_huber_loss(y.out(), x, t, AG_REDUCTION_NONE, delta));
      expect_near_all(read(y), want, 1e-7);
      ASSERT_AG(ag_op_huber_loss(y.out(), x, t, AG_REDUCTION_SUM, delta));
      expect_near_all(input_grad(x, y), dwant, 1e-7);
    }
    std::vector<double> want, dwant;
    for (double v : d) want.push_back(std::fabs(v)), dwant.push_back((v > 0) - (v < 0));  // 0 at the kink
    T y;
    ASSERT_AG(ag_op_l1_loss(y.out(), x, t, AG_REDUCTION_NONE));
    expect_near_all(read(y), want, 0.0);
    ASSERT_AG(ag_op_l1_loss(y.out(), x, t, AG_REDUCTION_MEAN));
    EXPECT_NEAR(read(y)[0], 7.0 / 7.0, 1e-7);
    ASSERT_AG(ag_op_l1_loss(y.out(), x, t, AG_REDUCTION_SUM));
    expect_near_all(input_grad(x, y), dwant, 0.0);
  }
}

TEST(BinaryCrossEntropy, Values) {
  Ctx ctx;
  const std::vector<double> p = {0.0, 1e-50, 0.2, 0.5, 0.9, 1.0}, t = {0.0, 1.0, 0.3, 1.0, 0.0, 1.0};
  T tp = make(ctx.get(), AG_F64, {6}, p), tt = make(ctx.get(), AG_F64, {6}, t);
  std::vector<double> want;
  for (size_t i = 0; i < p.size(); ++i) {
    const double lp = std::max(std::log(p[i]), -100.0), lq = std::max(std::log(1 - p[i]), -100.0);
    want.push_back(-(t[i] * lp + (1 - t[i]) * lq));
  }
  T y;
  ASSERT_AG(ag_op_binary_cross_entropy(y.out(), tp, tt, AG_REDUCTION_NONE));
  expect_near_all(read(y), want, 1e-14);
  ASSERT_AG(ag_op_binary_cross_entropy(y.out(), tp, tt, AG_REDUCTION_MEAN));
  EXPECT_NEAR(read(y)[0], reduce(want, AG_REDUCTION_MEAN, 6), 1e-14);

  // With logits, against the plain formula where it is accurate, and huge
  // logits stay finite.
  const std::vector<double> x = {-30.0, -3.0, -0.5, 0.0, 0.7, 4.0, 30.0}, tl = {1.0, 0.0, 0.4, 1.0, 0.2, 1.0, 0.0};
  const std::vector<double> pw = {2.5};
  T tx = make(ctx.get(), AG_F64, {7}, x), ttl = make(ctx.get(), AG_F64, {7}, tl), tpw = make(ctx.get(), AG_F64, {1}, pw);
  std::vector<double> w1, w2;
  for (size_t i = 0; i < x.size(); ++i) {
    const double log_sig = -std::log1p(std::exp(-x[i])), log_one_minus = -std::log1p(std::exp(x[i]));
    w1.push_back(-(tl[i] * log_sig + (1 - tl[i]) * log_one_minus));
    w2.push_back(-(pw[0] * tl[i] * log_sig + (1 - tl[i]) * log_one_minus));
  }
  ASSERT_AG(ag_op_binary_cross_entropy_with_logits(y.out(), tx, ttl, nullptr, AG_REDUCTION_NONE));
  expect_near_all(read(y), w1, 1e-13);
  ASSERT_AG(ag_op_binary_cross_entropy_with_logits(y.out(), tx, ttl, tpw, AG_REDUCTION_NONE));
  expect_near_all(read(y), w2, 1e-13);
  ASSERT_AG(ag_op_binary_cross_entropy_with_logits(y.out(), tx, ttl, tpw, AG_REDUCTION_SUM));
  EXPECT_NEAR(read(y)[0], reduce(w2, AG_REDUCTION_SUM, 7), 1e-12);
  T big = make(ctx.get(), AG_F32, {2}, {-1e6, 1e6}), bt = make(ctx.get(), AG_F32, {2}, {1.0, 0.0});
  ASSERT_AG(ag_op_binary_cross_entropy_with_logits(y.out(), big, bt, nullptr, AG_REDUCTION_NONE));
  EXPECT_EQ(read(y), (std::vector<double>{1e6, 1e6}));
}

// Class targets of an empty input whose other sizes are huge: the weights
// are not walked row by row.
TEST(CrossEntropy, EmptyWithHugeSizes) {
  Ctx ctx;
  const int64_t b = int64_t{1} << 40;
  const Shape in{b, 5, 0}, tg{b, 0};
  T x, t, y;
  ASSERT_AG(ag_tensor_zeros(x.out(), ctx.get(), AG_F64, in.data(), 3));
  ASSERT_AG(ag_tensor_zeros(t.out(), ctx.get(), AG_I64, tg.data(), 2));
  ASSERT_AG(ag_op_cross_entropy(y.out(), x, t, AG_REDUCTION_NONE, -100, 0.0));
  EXPECT_EQ(shape_of(y), tg);
  ASSERT_AG(ag_op_nll_loss(y.out(), x, t, AG_REDUCTION_SUM, -100));
  EXPECT_EQ(read(y), std::vector<double>{0.0});
}

TEST(Losses, Errors) {
  Ctx ctx;
  T x = make(ctx.get(), AG_F32, {2, 3}, sample(6, -1, 1, 1));
  T x64 = make(ctx.get(), AG_F64, {2, 3}, sample(6, -1, 1, 1));
  T s = make(ctx.get(), AG_F32, {}, {1.0});
  T t = make(ctx.get(), AG_I64, {2}, {0, 2});
  T tbad = make(ctx.get(), AG_I64, {2}, {0, 3});
  T t3 = make(ctx.get(), AG_I64, {3}, {0, 1, 2});
  T p32 = make(ctx.get(), AG_F32, {2, 4}, sample(8, 0, 1, 1));
  ag_tensor* const sentinel = reinterpret_cast<ag_tensor*>(0x1);
  ag_tensor* out = sentinel;
  EXPECT_AG_ERROR(ag_op_cross_entropy(&out, x, tbad, AG_REDUCTION_MEAN, -100, 0.0), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_cross_entropy] target 3 at index 1 is outside 0..2 (3 classes) and is not ignore_index -100");
  EXPECT_AG_ERROR(ag_op_nll_loss(&out, x, t3, AG_REDUCTION_MEAN, -100), AG_ERR_SHAPE,
                  "[ag_op_nll_loss] class targets of shape (3) do not fit input of shape (2,3): expected (2)");
  EXPECT_AG_ERROR(ag_op_cross_entropy(&out, x, t, 3, -100, 0.0), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_cross_entropy] reduction 3 is not one of AG_REDUCTION_NONE (0), AG_REDUCTION_MEAN (1), "
                  "AG_REDUCTION_SUM (2)");
  EXPECT_AG_ERROR(ag_op_cross_entropy(&out, x, t, AG_REDUCTION_MEAN, -100, 1.5), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_cross_entropy] label_smoothing 1.5 is outside [0, 1]");
  EXPECT_AG_ERROR(ag_op_cross_entropy(&out, x, x64, AG_REDUCTION_MEAN, -100, 0.0), AG_ERR_DTYPE,
                  "[ag_op_cross_entropy] dtypes f32 and f64 differ (no implicit promotion; convert with ag_op_cast)");
  EXPECT_AG_ERROR(ag_op_cross_entropy(&out, x, p32, AG_REDUCTION_MEAN, -100, 0.0), AG_ERR_SHAPE,
                  "[ag_op_cross_entropy] probability targets of shape (2,4) must have the input's shape (2,3)");
  EXPECT_AG_ERROR(ag_op_cross_entropy(&out, s, t, AG_REDUCTION_MEAN, -100, 0.0), AG_ERR_SHAPE,
                  "[ag_op_cross_entropy] input must have a class dim, got a 0-dim tensor");
  EXPECT_AG_ERROR(ag_op_cross_entropy(&out, t, t, AG_REDUCTION_MEAN, -100, 0.0), AG_ERR_DTYPE,
                  "[ag_op_cross_entropy] expects a floating tensor (f32 or f64), got i64");
  EXPECT_AG_ERROR(ag_op_nll_loss(&out, x, x, AG_REDUCTION_SUM, -100), AG_ERR_DTYPE,
                  "[ag_op_nll_loss] target must be i64 class indices, got f32");
  EXPECT_AG_ERROR(ag_op_nll_loss(&out, nullptr, t, AG_REDUCTION_SUM, -100), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_nll_loss] input input is NULL (missing: did an earlier call fail?)");
  EXPECT_AG_ERROR(ag_op_mse_loss(&out, x, nullptr, AG_REDUCTION_SUM), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_mse_loss] input target is NULL (missing: did an earlier call fail?)");
  EXPECT_AG_ERROR(ag_op_mse_loss(&out, x, x64, AG_REDUCTION_SUM), AG_ERR_DTYPE,
                  "[ag_op_mse_loss] dtypes f32 and f64 differ (no implicit promotion; convert with ag_op_cast)");
  EXPECT_AG_ERROR(ag_op_mse_loss(&out, x, p32, AG_REDUCTION_SUM), AG_ERR_SHAPE,
                  "[ag_op_mse_loss] cannot broadcast shapes (2,3) and (2,4)");
  EXPECT_AG_ERROR(ag_op_mse_loss(nullptr, x, x, -1), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_mse_loss] the output pointer is NULL");
  T p = make(ctx.get(), AG_F32, {3}, {0.5, 1.5, 0.2}), pt = make(ctx.get(), AG_F32, {3}, {0, 1, 0});
  EXPECT_AG_ERROR(ag_op_binary_cross_entropy(&out, p, pt, AG_REDUCTION_MEAN), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_binary_cross_entropy] input 1.5 at index 1 is outside [0, 1]");
  EXPECT_AG_ERROR(ag_op_binary_cross_entropy(&out, x, p32, AG_REDUCTION_MEAN), AG_ERR_SHAPE,
                  "[ag_op_binary_cross_entropy] target of shape (2,4) must have the input's shape (2,3)");
  EXPECT_AG_ERROR(ag_op_binary_cross_entropy_with_logits(&out, x, x, p32, AG_REDUCTION_MEAN), AG_ERR_SHAPE,
                  "[ag_op_binary_cross_entropy_with_logits] pos_weight of shape (2,4) does not broadcast to the "
                  "input's shape (2,3)");
  EXPECT_AG_ERROR(ag_op_binary_cross_entropy_with_logits(&out, x, x, x64, AG_REDUCTION_MEAN), AG_ERR_DTYPE,
                  "[ag_op_binary_cross_entropy_with_logits] dtypes f32 and f64 differ (no implicit promotion; "
                  "convert with ag_op_cast)");
  EXPECT_AG_ERROR(ag_op_binary_cross_entropy_with_logits(&out, x, nullptr, nullptr, AG_REDUCTION_MEAN),
                  AG_ERR_INVALID_ARGUMENT, "[ag_op_binary_cross_entropy_with_logits] input target is NULL (missing: did an earlier call fail?)");
  EXPECT_AG_ERROR(ag_op_smooth_l1_loss(&out, x, x, AG_REDUCTION_MEAN, -1.0), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_smooth_l1_loss] beta -1 must be finite and >= 0");
  EXPECT_AG_ERROR(ag_op_huber_loss(&out, x, x, AG_REDUCTION_MEAN, 0.0), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_huber_loss] delta 0 must be finite and > 0");
  EXPECT_AG_ERROR(ag_op_l1_loss(&out, x, x, 9), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_l1_loss] reduction 9 is not one of AG_REDUCTION_NONE (0), AG_REDUCTION_MEAN (1), "
                  "AG_REDUCTION_SUM (2)");
  EXPECT_AG_ERROR(ag_op_l1_loss(&out, t, t, AG_REDUCTION_MEAN), AG_ERR_DTYPE,
                  "[ag_op_l1_loss] expects a floating tensor (f32 or f64), got i64");
  EXPECT_EQ(out, sentinel);
  Ctx other;
  T t_other = make(other.get(), AG_I64, {2}, {0, 1});
  EXPECT_AG_ERROR(ag_op_cross_entropy(&out, x, t_other, AG_REDUCTION_MEAN, -100, 0.0), AG_ERR_CONTEXT,
                  "[ag_op_cross_entropy] the tensors belong to different contexts");
}

}  // namespace
