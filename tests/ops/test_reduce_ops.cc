// Reductions over dims through the C API: values against a scalar reference
// for dim sets and keepdim, non-contiguous inputs, 0-dim and zero-size dims
// as in NumPy, and every error.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "api_util.h"

namespace {

using namespace apitest;

using DimsOp = ag_status (*)(ag_tensor**, const ag_tensor*, const int64_t*, int32_t, int32_t);

// Sum (or mean) over `dims` of a row-major tensor, in long double; also the
// result shape for keepdim.
std::vector<double> ref_reduce(const std::vector<double>& x, const Shape& shape, const Shape& dims, bool mean,
                               Shape& keep) {
  const size_t nd = shape.size();
  std::vector<bool> red(nd, dims.empty());
  for (int64_t d : dims) red[static_cast<size_t>(d < 0 ? d + static_cast<int64_t>(nd) : d)] = true;
  keep = shape;
  int64_t count = 1;
  for (size_t i = 0; i < nd; ++i) {
    if (red[i]) keep[i] = 1, count *= shape[i];
  }
  std::vector<long double> acc(static_cast<size_t>(numel(keep)), 0.0L);
  std::vector<int64_t> idx(nd, 0);
  for (size_t flat = 0; flat < x.size(); ++flat) {
    int64_t o = 0;
    for (size_t i = 0; i < nd; ++i) o = o * keep[i] + (red[i] ? 0 : idx[i]);
    acc[static_cast<size_t>(o)] += x[flat];
    for (size_t i = nd; i-- > 0;) {
      if (++idx[i] < shape[i]) break;
      idx[i] = 0;
    }
  }
  std::vector<double> out(acc.size());
  for (size_t i = 0; i < acc.size(); ++i) out[i] = static_cast<double>(mean ? acc[i] / count : acc[i]);
  return out;
}

// The keepdim=0 shape: the dims not reduced.
Shape drop(const Shape& shape, const Shape& dims) {
  Shape out;
  for (size_t i = 0; i < shape.size(); ++i) {
    bool reduced = dims.empty();
    for (int64_t d : dims) reduced = reduced || (d < 0 ? d + static_cast<int64_t>(shape.size()) : d) == static_cast<int64_t>(i);
    if (!reduced) out.push_back(shape[i]);
  }
  return out;
}

TEST(ReduceDims, SumAndMeanValues) {
  Ctx ctx;
  const std::vector<std::pair<Shape, Shape>> rows = {
      {{2, 3}, {0}}, {{2, 3}, {1}}, {{2, 3}, {-1}}, {{2, 3}, {}}, {{2, 3, 4}, {0, 2}}, {{2, 3, 4}, {2, 0}},
      {{4, 1, 5}, {1}}, {{3, 4, 5, 6}, {1, 3}}, {{3, 4, 5, 6}, {0, 1, 2, 3}}, {{1000}, {0}},
      // sums over rows: column blocks in registers and a tail of columns,
      // in one call and (past the parallel grain) in blocks of columns
      {{37, 101}, {0}}, {{300, 70}, {0}}, {{2000, 133}, {0}}, {{6, 7, 40}, {0, 1}}};
  for (ag_dtype dt : {AG_F32, AG_F64}) {
    for (const auto& [s, dims] : rows) {
      std::vector<double> v = sample(numel(s), -2.0, 2.0, 17);
      if (dt == AG_F32) for (double& e : v) e = static_cast<float>(e);
      T x = make(ctx.get(), dt, s, v);
      for (bool mean : {false, true}) {
        Shape keep;
        const std::vector<double> want = ref_reduce(v, s, dims, mean, keep);
        for (int32_t keepdim : {0, 1}) {
          T y;
          ASSERT_AG((mean ? ag_op_mean_dims : ag_op_sum_dims)(y.out(), x, dims.data(),
                                                              static_cast<int32_t>(dims.size()), keepdim));
          EXPECT_EQ(shape_of(y), keepdim ? keep : drop(s, dims));
          const std::vector<double> got = read(y);
          ASSERT_EQ(got.size(), want.size());
          // f64: rows are summed one after the other (error up to count ulps)
          const double count = static_cast<double>(numel(s)) / static_cast<double>(std::max<int64_t>(1, numel(keep)));
          const double tol = dt == AG_F32 ? 1e-6 : std::max(1e-14, 2.3e-16 * count);
          for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol * (1 + std::fabs(want[i])));
        }
      }
    }
  }
}

TEST(ReduceDims, NonContiguousAndZeroDim) {
  Ctx ctx;
  T x = make(ctx.get(), AG_F64, {3, 1}, {1.0, 2.0, 4.0});
  const int64_t to[2] = {3, 5}, d1[1] = {1}, d0[1] = {0};
  T e, y, z;
  ASSERT_AG(ag_op_expand(e.out(), x, to, 2));
  ASSERT_AG(ag_op_sum_dims(y.out(), e, d1, 1, 0));
  EXPECT_EQ(read(y), (std::vector<double>{5.0, 10.0, 20.0}));
  ASSERT_AG(ag_op_mean_dims(z.out(), e, d0, 1, 1));
  EXPECT_EQ(shape_of(z), (Shape{1, 5}));
  for (double v : read(z)) EXPECT_DOUBLE_EQ(v, 7.0 / 3.0);
  T s = make(ctx.get(), AG_F64, {}, {2.5});
  const int64_t dm1[1] = {-1};
  for (int32_t keep : {0, 1}) {
    ASSERT_AG(ag_op_sum_dims(y.out(), s, dm1, 1, keep));
    EXPECT_EQ(ag_tensor_ndim(y), 0);
    EXPECT_EQ(read(y)[0], 2.5);
    ASSERT_AG(ag_op_mean_dims(y.out(), s, nullptr, 0, keep));
    EXPECT_EQ(read(y)[0], 2.5);
  }
}

// NumPy: the sum over a zero-size dim is 0, the mean NaN; the other dims stay.
TEST(ReduceDims, ZeroSizeDims) {
  Ctx ctx;
  T x = make(ctx.get(), AG_F32, {0, 3}, {});
  const int64_t d0[1] = {0}, d1[1] = {1};
  T y;
  ASSERT_AG(ag_op_sum_dims(y.out(), x, d0, 1, 0));
  EXPECT_EQ(shape_of(y), (Shape{3}));
  EXPECT_EQ(read(y), (std::vector<double>{0.0, 0.0, 0.0}));
  ASSERT_AG(ag_op_mean_dims(y.out(), x, d0, 1, 1));
  EXPECT_EQ(shape_of(y), (Shape{1, 3}));
  for (double v : read(y)) EXPECT_TRUE(std::isnan(v));
  ASSERT_AG(ag_op_sum_dims(y.out(), x, d1, 1, 0));
  EXPECT_EQ(shape_of(y), (Shape{0}));
  ASSERT_AG(ag_op_mean_dims(y.out(), x, nullptr, 0, 0));
  EXPECT_EQ(ag_tensor_ndim(y), 0);
  EXPECT_TRUE(std::isnan(read(y)[0]));
}

TEST(ReduceDims, Errors) {
  Ctx ctx;
  T x = make(ctx.get(), AG_F64, {2, 3}, sample(6, -1, 1, 2));
  T idx = make(ctx.get(), AG_I64, {2}, {0, 1});
  ag_tensor* const sentinel = reinterpret_cast<ag_tensor*>(0x1);
  ag_tensor* out = sentinel;
  const int64_t bad[1] = {2}, rep[2] = {1, -1}, ok[1] = {0};
  EXPECT_AG_ERROR(ag_op_sum_dims(&out, x, bad, 1, 0), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_sum_dims] dim 2 is out of range for a tensor of 2 dims (expected -2..1)");
  EXPECT_AG_ERROR(ag_op_mean_dims(&out, x, rep, 2, 1), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_mean_dims] dim -1 appears more than once in dims");
  EXPECT_AG_ERROR(ag_op_sum_dims(&out, x, nullptr, 1, 0), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_sum_dims] dims is NULL but ndims is 1");
  EXPECT_AG_ERROR(ag_op_sum_dims(&out, x, ok, -1, 0), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_sum_dims] ndims -1 is outside 0..16");
  EXPECT_AG_ERROR(ag_op_mean_dims(&out, idx, ok, 1, 0), AG_ERR_DTYPE,
                  "[ag_op_mean_dims] expects a floating tensor (f32 or f64), got i64");
  EXPECT_AG_ERROR(ag_op_sum_dims(&out, nullptr, ok, 1, 0), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_sum_dims] input x is NULL (missing: did an earlier call fail?)");
  EXPECT_AG_ERROR(ag_op_sum_dims(nullptr, x, ok, 1, 0), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_sum_dims] the output pointer is NULL");
  EXPECT_EQ(out, sentinel);
}

// The elements of each reduced slice, in row-major order, one list per
// output element (outputs in row-major order of the keepdim shape).
std::vector<std::vector<double>> slices(const std::vector<double>& x, const Shape& shape, const Shape& dims) {
  Shape keep;
  ref_reduce(x, shape, dims, false, keep);
  std::vector<std::vector<double>> out(static_cast<size_t>(numel(keep)));
  const size_t nd = shape.size();
  std::vector<int64_t> idx(nd, 0);
  for (size_t flat = 0; flat < x.size(); ++flat) {
    int64_t o = 0;
    for (size_t i = 0; i < nd; ++i) o = o * keep[i] + (keep[i] == 1 ? 0 : idx[i]);
    out[static_cast<size_t>(o)].push_back(x[flat]);
    for (size_t i = nd; i-- > 0;) {
      if (++idx[i] < shape[i]) break;
      idx[i] = 0;
    }
  }
  return out;
}

using SliceFn = std::function<double(const std::vector<double>&)>;

void check_against(DimsOp fn, const SliceFn& ref, const std::string& what, double tol) {
  Ctx ctx;
  const std::vector<std::pair<Shape, Shape>> rows = {{{2, 3}, {0}},       {{2, 3}, {1}},         {{2, 3}, {}},
                                                     {{2, 3, 4}, {0, 2}}, {{3, 4, 5}, {-1}},     {{7}, {0}},
                                                     {{2, 1, 3}, {1}},    {{4, 5, 6}, {1, 0, 2}}};
  for (const auto& [s, dims] : rows) {
    const std::vector<double> v = sample(numel(s), -2.0, 2.0, 29);
    T x = make(ctx.get(), AG_F64, s, v);
    T y;
    ASSERT_AG(fn(y.out(), x, dims.data(), static_cast<int32_t>(dims.size()), 1));
    const std::vector<double> got = read(y);
    const auto sl = slices(v, s, dims);
    ASSERT_EQ(got.size(), sl.size()) << what;
    for (size_t i = 0; i < got.size(); ++i) {
      const double want = ref(sl[i]);
      if (!std::isfinite(want)) {  // a divisor of 0: inf or NaN on both sides
        EXPECT_TRUE(std::isnan(want) ? std::isnan(got[i]) : got[i] == want) << what << " " << i;
        continue;
      }
      EXPECT_NEAR(got[i], want, tol * (1 + std::fabs(want))) << what << " " << i;
    }
  }
}

TEST(ReduceDims, ProdLogsumexpVarStdNormValues) {
  check_against(&ag_op_prod_dims, [](const std::vector<double>& v) {
    long double p = 1;
    for (double e : v) p *= e;
    return static_cast<double>(p);
  }, "prod", 1e-14);
  check_against(&ag_op_logsumexp_dims, [](const std::vector<double>& v) {
    long double s = 0;
    for (double e : v) s += std::exp(static_cast<long double>(e));
    return static_cast<double>(std::log(s));
  }, "logsumexp", 1e-14);
  for (double corr : {0.0, 1.0, 2.5}) {
    auto var = [corr](const std::vector<double>& v) {
      long double m = 0, s = 0;
      for (double e : v) m += e;
      m /= v.size();
      for (double e : v) s += (e - m) * (e - m);
      return static_cast<double>(s / std::max(0.0L, v.size() - static_cast<long double>(corr)));
    };
    // A capture-free adapter per correction value keeps DimsOp a plain function pointer.
    if (corr == 0.0) {
      check_against([](ag_tensor** o, const ag_tensor* x, const int64_t* d, int32_t n, int32_t k) {
        return ag_op_var_dims(o, x, d, n, k, 0.0);
      }, var, "var 0", 1e-13);
      check_against([](ag_tensor** o, const ag_tensor* x, const int64_t* d, int32_t n, int32_t k) {
        return ag_op_std_dims(o, x, d, n, k, 0.0);
      }, [var](const std::vector<double>& v) { return std::sqrt(var(v)); }, "std 0", 1e-13);
    } else if (corr == 1.0) {
      check_against([](ag_tensor** o, const ag_tensor* x, const int64_t* d, int32_t n, int32_t k) {
        return ag_op_var_dims(o, x, d, n, k, 1.0);
      }, var, "var 1", 1e-13);
    } else {
      check_against([](ag_tensor** o, const ag_tensor* x, const int64_t* d, int32_t n, int32_t k) {
        return ag_op_var_dims(o, x, d, n, k, 2.5);
      }, var, "var 2.5", 1e-13);
    }
  }
  auto pnorm = [](double p) {
    return [p](const std::vector<double>& v) {
      if (p == INFINITY || p == -INFINITY) {
        double m = std::fabs(v[0]);
        for (double e : v) m = p > 0 ? std::max(m, std::fabs(e)) : std::min(m, std::fabs(e));
        return m;
      }
      long double s = 0;
      for (double e : v) s += p == 0 ? (e != 0) : std::pow(std::fabs(static_cast<long double>(e)), p);
      return static_cast<double>(p == 0 ? s : std::pow(s, 1.0L / p));
    };
  };
  check_against([](ag_tensor** o, const ag_tensor* x, const int64_t* d, int32_t n, int32_t k) {
    return ag_op_norm_dims(o, x, d, n, k, 2.0);
  }, pnorm(2.0), "norm 2", 1e-14);
  check_against([](ag_tensor** o, const ag_tensor* x, const int64_t* d, int32_t n, int32_t k) {
    return ag_op_norm_dims(o, x, d, n, k, 1.0);
  }, pnorm(1.0), "norm 1", 1e-14);
  check_against([](ag_tensor** o, const ag_tensor* x, const int64_t* d, int32_t n, int32_t k) {
    return ag_op_norm_dims(o, x, d, n, k, INFINITY);
  }, pnorm(INFINITY), "norm inf", 0.0);
  check_against([](ag_tensor** o, const ag_tensor* x, const int64_t* d, int32_t n, int32_t k) {
    return ag_op_norm_dims(o, x, d, n, k, -INFINITY);
  }, pnorm(-INFINITY), "norm -inf", 0.0);
  check_against([](ag_tensor** o, const ag_tensor* x, const int64_t* d, int32_t n, int32_t k) {
    return ag_op_norm_dims(o, x, d, n, k, 0.0);
  }, pnorm(0.0), "norm 0", 0.0);
  check_against([](ag_tensor** o, const ag_tensor* x, const int64_t* d, int32_t n, int32_t k) {
    return ag_op_norm_dims(o, x, d, n, k, 3.0);
  }, pnorm(3.0), "norm 3", 1e-14);
}

// Gradient of sum(op(x)) with respect to x.
std::vector<double> grad_of(ag_context* ctx, const Shape& s, const std::vector<double>& v,
                            const std::function<ag_status(ag_tensor**, ag_tensor*)>& op) {
  T x = make(ctx, AG_F64, s, v);
  ag_tensor_requires_grad(x, 1);
  T y, total, g;
  EXPECT_EQ(op(y.out(), x), AG_OK) << ag_last_error_message();
  EXPECT_EQ(ag_op_sum(total.out(), y), AG_OK);
  EXPECT_EQ(ag_backward(total, nullptr, nullptr), AG_OK) << ag_last_error_message();
  EXPECT_EQ(ag_tensor_grad(g.out(), x), AG_OK);
  return g.get() ? read(g) : std::vector<double>();
}

// PyTorch's rule: with one zero in a slice, the zero gets the product of the
// others and the rest 0; with two zeros, all 0.
TEST(ReduceDims, ProdGradientWithZeros) {
  Ctx ctx;
  const std::vector<double> v = {2.0, 0.0, 3.0, /**/ 0.0, 0.0, 5.0, /**/ 1.5, -2.0, 4.0};
  const int64_t d1[1] = {1};
  const std::vector<double> g = grad_of(ctx.get(), {3, 3}, v, [&](ag_tensor** o, ag_tensor* x) {
    return ag_op_prod_dims(o, x, d1, 1, 0);
  });
  const std::vector<double> want = {0.0, 6.0, 0.0, /**/ 0.0, 0.0, 0.0, /**/ -8.0, 6.0, -3.0};
  EXPECT_EQ(g, want);
  T x = make(ctx.get(), AG_F64, {0, 3}, {});
  T y;
  const int64_t d0[1] = {0};
  ASSERT_AG(ag_op_prod_dims(y.out(), x, d0, 1, 0));
  EXPECT_EQ(read(y), (std::vector<double>{1.0, 1.0, 1.0}));
}

TEST(ReduceDims, NormGradientsAtKinks) {
  Ctx ctx;
  const std::vector<double> v = {0.0, 0.0, 0.0, /**/ 3.0, -3.0, 1.0};
  const int64_t d1[1] = {1};
  // p = 2: 0 where the norm is 0, x / norm elsewhere.
  std::vector<double> g = grad_of(ctx.get(), {2, 3}, v, [&](ag_tensor** o, ag_tensor* x) {
    return ag_op_norm_dims(o, x, d1, 1, 0, 2.0);
  });
  const double n = std::sqrt(19.0);
  std::vector<double> want = {0, 0, 0, 3 / n, -3 / n, 1 / n};
  for (size_t i = 0; i < 6; ++i) EXPECT_NEAR(g[i], want[i], 1e-15);
  // p = inf: shared evenly among the ties (|3| = |-3|), with the sign.
  g = grad_of(ctx.get(), {2, 3}, v, [&](ag_tensor** o, ag_tensor* x) { return ag_op_norm_dims(o, x, d1, 1, 0, INFINITY); });
  want = {0, 0, 0, 0.5, -0.5, 0};
  EXPECT_EQ(g, want);
  // p = 1: sign, 0 at 0.
  g = grad_of(ctx.get(), {2, 3}, v, [&](ag_tensor** o, ag_tensor* x) { return ag_op_norm_dims(o, x, d1, 1, 0, 1.0); });
  want = {0, 0, 0, 1, -1, 1};
  EXPECT_EQ(g, want);
}

TEST(ReduceDims, LogsumexpInfinitiesAndEmpty) {
  Ctx ctx;
  const double inf = std::numeric_limits<double>::infinity();
  T x = make(ctx.get(), AG_F64, {3, 2}, {-inf, -inf, inf, 1.0, 1000.0, 1000.0});
  const int64_t d1[1] = {1};
  T y;
  ASSERT_AG(ag_op_logsumexp_dims(y.out(), x, d1, 1, 0));
  const std::vector<double> got = read(y);
  EXPECT_EQ(got[0], -inf);
  EXPECT_EQ(got[1], inf);
  EXPECT_NEAR(got[2], 1000.0 + std::log(2.0), 1e-12);
  T e = make(ctx.get(), AG_F32, {2, 0}, {});
  ASSERT_AG(ag_op_logsumexp_dims(y.out(), e, d1, 1, 1));
  EXPECT_EQ(shape_of(y), (Shape{2, 1}));
  EXPECT_EQ(read(y), (std::vector<double>{-inf, -inf}));
}

TEST(SelectDim, MaxMinValuesIndicesAndGradient) {
  Ctx ctx;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Ties (first index wins), a NaN (wins, for max and min).
  T x = make(ctx.get(), AG_F64, {3, 4}, {1, 5, 5, 2, /**/ -1, -7, 3, -7, /**/ 0, nan, 9, nan});
  T v, i;
  ASSERT_AG(ag_op_max_dim(v.out(), i.out(), x, 1, 0));
  EXPECT_EQ(shape_of(v), (Shape{3}));
  std::vector<double> got = read(v);
  EXPECT_EQ(got[0], 5);
  EXPECT_EQ(got[1], 3);
  EXPECT_TRUE(std::isnan(got[2]));
  EXPECT_EQ(read(i), (std::vector<double>{1, 2, 1}));
  ASSERT_AG(ag_op_min_dim(v.out(), i.out(), x, -1, 1));
  EXPECT_EQ(shape_of(i), (Shape{3, 1}));
  EXPECT_EQ(ag_tensor_dtype(i), AG_I64);
  EXPECT_EQ(read(i), (std::vector<double>{0, 1, 1}));
  T a;
  ASSERT_AG(ag_op_argmax(a.out(), x, 0, 0));
  EXPECT_EQ(read(a), (std::vector<double>{0, 2, 2, 2}));
  ASSERT_AG(ag_op_argmin(a.out(), x, 0, 1));
  EXPECT_EQ(shape_of(a), (Shape{1, 4}));
  EXPECT_EQ(read(a), (std::vector<double>{1, 2, 1, 2}));
  // Strided dim (inner > 1), larger than one vector, against a scalar scan.
  const Shape s = {3, 37, 19};
  const std::vector<double> r = sample(numel(s), -1, 1, 9);
  T big = make(ctx.get(), AG_F32, s, r);
  ASSERT_AG(ag_op_max_dim(v.out(), i.out(), big, 1, 0));
  const std::vector<double> bv = read(v), bi = read(i);
  for (int64_t o = 0; o < 3; ++o) {
    for (int64_t j = 0; j < 19; ++j) {
      int64_t best = 0;
      for (int64_t k = 1; k < 37; ++k)
        if (static_cast<float>(r[static_cast<size_t>((o * 37 + k) * 19 + j)]) >
            static_cast<float>(r[static_cast<size_t>((o * 37 + best) * 19 + j)]))
          best = k;
      EXPECT_EQ(bi[static_cast<size_t>(o * 19 + j)], best);
      EXPECT_EQ(bv[static_cast<size_t>(o * 19 + j)], static_cast<float>(r[static_cast<size_t>((o * 37 + best) * 19 + j)]));
    }
  }
  // The gradient goes to the returned index only (ties: the first).
  const std::vector<double> g = grad_of(ctx.get(), {2, 3}, {4, 4, 1, 0, 2, 2}, [](ag_tensor** o, ag_tensor* t) {
    return ag_op_max_dim(o, nullptr, t, 1, 0);
  });
  EXPECT_EQ(g, (std::vector<double>{1, 0, 0, 0, 1, 0}));
  // 0-dim input: the element itself and index 0.
  T z = make(ctx.get(), AG_F64, {}, {2.5});
  ASSERT_AG(ag_op_max_dim(v.out(), i.out(), z, -1, 0));
  EXPECT_EQ(read(v), (std::vector<double>{2.5}));
  EXPECT_EQ(read(i), (std::vector<double>{0}));
  // Zero-size dims other than the reduced one give empty results.
  T e = make(ctx.get(), AG_F64, {0, 3}, {});
  ASSERT_AG(ag_op_max_dim(v.out(), i.out(), e, 1, 0));
  EXPECT_EQ(shape_of(v), (Shape{0}));
}

// cumsum and cumprod against running sums/products, with zeros in cumprod's
// gradient: dx_k = sum over i >= k of prod over j <= i, j != k of x_j.
TEST(Cumulative, ValuesAndCumprodGradientWithZeros) {
  Ctx ctx;
  const Shape s = {2, 3, 4};
  const std::vector<double> v = sample(24, -2, 2, 41);
  T x = make(ctx.get(), AG_F64, s, v);
  for (int64_t dim : {0, 1, 2, -1}) {
    const int d = static_cast<int>(dim < 0 ? dim + 3 : dim);
    T cs, cp;
    ASSERT_AG(ag_op_cumsum(cs.out(), x, dim));
    ASSERT_AG(ag_op_cumprod(cp.out(), x, dim));
    const std::vector<double> a = read(cs), b = read(cp);
    const int64_t stride = d == 2 ? 1 : (d == 1 ? 4 : 12);
    for (size_t flat = 0; flat < 24; ++flat) {
      const int64_t k = (static_cast<int64_t>(flat) / stride) % s[static_cast<size_t>(d)];
      long double sum = 0, prod = 1;
      for (int64_t j = 0; j <= k; ++j) {
        const double e = v[flat - static_cast<size_t>((k - j) * stride)];
        sum += e, prod *= e;
      }
      EXPECT_NEAR(a[flat], static_cast<double>(sum), 1e-14);
      EXPECT_NEAR(b[flat], static_cast<double>(prod), 1e-14);
    }
  }
  for (const std::vector<double>& row : {std::vector<double>{2, 0, 3, 0.5, -1}, std::vector<double>{0, 0, 3, 2, 1},
                                         std::vector<double>{1.5, 2, -1, 0, 0}, std::vector<double>{1.5, 2, -1, 3, 2}}) {
    const std::vector<double> g = grad_of(ctx.get(), {5}, row, [](ag_tensor** o, ag_tensor* t) {
      return ag_op_cumprod(o, t, 0);
    });
    for (size_t k = 0; k < 5; ++k) {
      double want = 0;
      for (size_t i = k; i < 5; ++i) {
        double p = 1;
        for (size_t j = 0; j <= i; ++j)
          if (j != k) p *= row[j];
        want += p;
      }
      EXPECT_NEAR(g[k], want, 1e-14) << "k " << k;
    }
  }
  const std::vector<double> g = grad_of(ctx.get(), {4}, {1, 2, 3, 4}, [](ag_tensor** o, ag_tensor* t) {
    return ag_op_cumsum(o, t, 0);
  });
  EXPECT_EQ(g, (std::vector<double>{4, 3, 2, 1}));
  T e = make(ctx.get(), AG_F64, {2, 0}, {}), y;
  ASSERT_AG(ag_op_cumprod(y.out(), e, 1));
  EXPECT_EQ(shape_of(y), (Shape{2, 0}));
}

// Large inputs run in parallel row blocks: the same bits with 1 and 2 threads.
TEST(SelectDim, ThreadCountDoesNotChangeBits) {
  const Shape s = {300, 400};
  const std::vector<double> v = sample(numel(s), -1, 1, 77);
  std::vector<std::vector<double>> runs;
  for (int32_t threads : {1, 2}) {
    Ctx ctx(threads);
    T x = make(ctx.get(), AG_F32, s, v);
    std::vector<double> all;
    for (int64_t dim : {0, 1}) {
      T mv, mi, p, c;
      const int64_t dd[1] = {dim};
      ASSERT_AG(ag_op_max_dim(mv.out(), mi.out(), x, dim, 0));
      ASSERT_AG(ag_op_prod_dims(p.out(), x, dd, 1, 0));
      ASSERT_AG(ag_op_cumsum(c.out(), x, dim));
      T sm;
      const int64_t d1[1] = {1};
      ASSERT_AG(ag_op_sum_dims(sm.out(), x, d1, 1, 0));
      for (const T* t : {&mv, &mi, &p, &c, &sm}) {
        const std::vector<double> r = read(*t);
        all.insert(all.end(), r.begin(), r.end());
      }
    }
    runs.push_back(all);
  }
  EXPECT_TRUE(runs[0] == runs[1]);
  // And the parallel sum_dims is the sum (last block of the last run: dim 1 of (300, 400)).
  const std::vector<double>& last = runs[1];
  for (int64_t i = 0; i < 300; ++i) {
    long double want = 0;
    for (int64_t j = 0; j < 400; ++j) want += static_cast<float>(v[static_cast<size_t>(i * 400 + j)]);
    EXPECT_NEAR(last[last.size() - 300 + static_cast<size_t>(i)], static_cast<double>(want), 1e-4);
  }
}

TEST(SelectDim, Errors) {
  Ctx ctx;
  T x = make(ctx.get(), AG_F64, {2, 3}, sample(6, -1, 1, 2));
  T e = make(ctx.get(), AG_F64, {0, 3}, {});
  T idx = make(ctx.get(), AG_I64, {2}, {0, 1});
  ag_tensor* const sentinel = reinterpret_cast<ag_tensor*>(0x1);
  ag_tensor *out = sentinel, *out2 = sentinel;
  EXPECT_AG_ERROR(ag_op_max_dim(&out, &out2, x, 2, 0), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_max_dim] dim 2 is out of range for a tensor of 2 dims (expected -2..1)");
  EXPECT_AG_ERROR(ag_op_min_dim(nullptr, nullptr, x, 0, 0), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_min_dim] values and indices are both NULL");
  EXPECT_AG_ERROR(ag_op_max_dim(&out, &out2, e, 0, 0), AG_ERR_SHAPE,
                  "[ag_op_max_dim] cannot take the max over dim 0 of size 0 (shape (0,3))");
  EXPECT_AG_ERROR(ag_op_argmin(&out, e, -2, 0), AG_ERR_SHAPE,
                  "[ag_op_argmin] cannot take the min over dim 0 of size 0 (shape (0,3))");
  EXPECT_AG_ERROR(ag_op_argmax(&out, idx, 0, 0), AG_ERR_DTYPE,
                  "[ag_op_argmax] expects a floating tensor (f32 or f64), got i64");
  EXPECT_AG_ERROR(ag_op_argmax(nullptr, x, 0, 0), AG_ERR_INVALID_ARGUMENT, "[ag_op_argmax] the output pointer is NULL");
  EXPECT_AG_ERROR(ag_op_cumsum(&out, x, -3), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_cumsum] dim -3 is out of range for a tensor of 2 dims (expected -2..1)");
  EXPECT_AG_ERROR(ag_op_cumprod(&out, idx, 0), AG_ERR_DTYPE,
                  "[ag_op_cumprod] expects a floating tensor (f32 or f64), got i64");
  const int64_t d0[1] = {0}, rep[2] = {0, 0};
  EXPECT_AG_ERROR(ag_op_norm_dims(&out, x, d0, 1, 0, NAN), AG_ERR_INVALID_ARGUMENT, "[ag_op_norm_dims] p is NaN");
  EXPECT_AG_ERROR(ag_op_norm_dims(&out, e, d0, 1, 0, INFINITY), AG_ERR_SHAPE,
                  "[ag_op_norm_dims] cannot take the max over dim 0 of size 0 (shape (0,3))");
  EXPECT_AG_ERROR(ag_op_var_dims(&out, x, d0, 1, 0, NAN), AG_ERR_INVALID_ARGUMENT, "[ag_op_var_dims] correction is NaN");
  EXPECT_AG_ERROR(ag_op_std_dims(&out, x, rep, 2, 0, 1.0), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_std_dims] dim 0 appears more than once in dims");
  EXPECT_AG_ERROR(ag_op_prod_dims(&out, idx, d0, 1, 0), AG_ERR_DTYPE,
                  "[ag_op_prod_dims] expects a floating tensor (f32 or f64), got i64");
  EXPECT_AG_ERROR(ag_op_logsumexp_dims(&out, x, d0, 17, 0), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_logsumexp_dims] ndims 17 is outside 0..16");
  EXPECT_EQ(out, sentinel);
  EXPECT_EQ(out2, sentinel);
  // var over one element with correction 1: 0 / 0.
  T one = make(ctx.get(), AG_F64, {1}, {3.0}), y;
  ASSERT_AG(ag_op_var_dims(y.out(), one, nullptr, 0, 0, 1.0));
  EXPECT_TRUE(std::isnan(read(y)[0]));
}

// Reducing an empty x over its empty dim keeps sizes whose product passes
// INT64_MAX: the result is too large, an error rather than an overflow.
TEST(ReduceDims, EmptyWithHugeKeptSizes) {
  Ctx ctx;
  const int64_t b = int64_t{1} << 32;
  const Shape sh{b, b, 0};
  T x;
  ASSERT_AG(ag_tensor_zeros(x.out(), ctx.get(), AG_F64, sh.data(), 3));
  const int64_t dim = 2;
  ag_tensor* sentinel = reinterpret_cast<ag_tensor*>(0x1);
  ag_tensor* y = sentinel;
  expect_error_untouched(ag_op_sum_dims(&y, x, &dim, 1, 1), y, sentinel, AG_ERR_OUT_OF_MEMORY,
                         "[ag_op_sum_dims] shape (4294967296,4294967296,1) has too many bytes");
  expect_error_untouched(ag_op_prod_dims(&y, x, &dim, 1, 0), y, sentinel, AG_ERR_OUT_OF_MEMORY,
                         "[ag_op_prod_dims] shape (4294967296,4294967296,1) has too many bytes");
}

}  // namespace
