// softmax, log_softmax and their fused gradients through the C API: values
// against a scalar reference along every dim, non-contiguous inputs, 0-dim
// and empty tensors, the threaded path, and every error.
#include <cmath>
#include <limits>

#include "api_util.h"

namespace {

using namespace apitest;

// Reference along dim d of a row-major tensor of `shape`, in long double.
std::vector<double> ref_softmax(const std::vector<double>& x, const Shape& shape, int d, bool log) {
  int64_t outer = 1, inner = 1;
  const int64_t n = shape.empty() ? 1 : shape[static_cast<size_t>(d)];
  for (int i = 0; i < d; ++i) outer *= shape[static_cast<size_t>(i)];
  for (size_t i = static_cast<size_t>(d) + 1; i < shape.size(); ++i) inner *= shape[i];
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < inner; ++j) {
      auto at = [&](int64_t k) { return static_cast<size_t>((o * n + k) * inner + j); };
      long double m = -INFINITY, s = 0;
      for (int64_t k = 0; k < n; ++k) m = std::max<long double>(m, x[at(k)]);
      for (int64_t k = 0; k < n; ++k) s += std::exp(x[at(k)] - m);
      for (int64_t k = 0; k < n; ++k) {
        y[at(k)] = static_cast<double>(log ? x[at(k)] - m - std::log(s) : std::exp(x[at(k)] - m) / s);
      }
    }
  }
  return y;
}

using Op = ag_status (*)(ag_tensor**, const ag_tensor*, int64_t);

TEST(Softmax, ValuesAlongEveryDim) {
  Ctx ctx;
  const std::vector<Shape> shapes = {{7}, {2, 3}, {3, 1, 4}, {2, 3, 4, 5}, {1, 33}};
  for (ag_dtype dt : {AG_F32, AG_F64}) {
    const double tol = dt == AG_F32 ? 2e-6 : 1e-14;
    for (const Shape& s : shapes) {
      const std::vector<double> v = sample(numel(s), -8.0, 8.0, 3);
      // f32 inputs: the reference sees the same rounded values.
      std::vector<double> vr = v;
      if (dt == AG_F32) for (double& e : vr) e = static_cast<float>(e);
      T x = make(ctx.get(), dt, s, v);
      const int nd = static_cast<int>(s.size());
      for (int64_t dim = -nd; dim < nd; ++dim) {
        const int d = static_cast<int>(dim < 0 ? dim + nd : dim);
        for (bool log : {false, true}) {
          T y;
          ASSERT_AG((log ? ag_op_log_softmax : ag_op_softmax)(y.out(), x, dim));
          EXPECT_EQ(shape_of(y), s);
          EXPECT_EQ(ag_tensor_dtype(y), dt);
          expect_close(read(y), ref_softmax(vr, s, d, log), tol,
                       std::string(log ? "log_softmax" : "softmax") + " dim " + std::to_string(dim));
        }
      }
    }
  }
}

TEST(Softmax, NonContiguousInput) {
  Ctx ctx;
  // (3, 1) expanded to (3, 4): every row constant along dim 1.
  T x = make(ctx.get(), AG_F64, {3, 1}, {0.5, -1.0, 2.0});
  const int64_t to[2] = {3, 4};
  T e;
  ASSERT_AG(ag_op_expand(e.out(), x, to, 2));
  T y1, y0;
  ASSERT_AG(ag_op_softmax(y1.out(), e, 1));
  for (double v : read(y1)) EXPECT_DOUBLE_EQ(v, 0.25);
  ASSERT_AG(ag_op_log_softmax(y0.out(), e, 0));
  const std::vector<double> col = {0.5, -1.0, 2.0};
  const std::vector<double> want = ref_softmax(col, {3}, 0, true);
  const std::vector<double> got = read(y0);
  for (size_t i = 0; i < 3; ++i)
    for (size_t j = 0; j < 4; ++j) EXPECT_NEAR(got[i * 4 + j], want[i], 1e-15);
}

TEST(Softmax, ZeroDimAndEmpty) {
  Ctx ctx;
  T s = make(ctx.get(), AG_F64, {}, {3.5});
  for (int64_t dim : {0, -1}) {
    T y, ly;
    ASSERT_AG(ag_op_softmax(y.out(), s, dim));
    EXPECT_EQ(ag_tensor_ndim(y), 0);
    EXPECT_EQ(read(y)[0], 1.0);
    ASSERT_AG(ag_op_log_softmax(ly.out(), s, dim));
    EXPECT_EQ(read(ly)[0], 0.0);
  }
  for (const Shape& sh : {Shape{0, 3}, Shape{2, 0}, Shape{0}}) {
    T x = make(ctx.get(), AG_F32, sh, {});
    for (int64_t dim = 0; dim < static_cast<int64_t>(sh.size()); ++dim) {
      T y;
      ASSERT_AG(ag_op_softmax(y.out(), x, dim));
      EXPECT_EQ(shape_of(y), sh);
      ASSERT_AG(ag_op_log_softmax_backward(y.out(), x, x, dim));
      EXPECT_EQ(shape_of(y), sh);
    }
  }
}

TEST(Softmax, InfinitiesAndNaN) {
  Ctx ctx;
  const double inf = std::numeric_limits<double>::infinity();
  T x = make(ctx.get(), AG_F64, {3, 3}, {-inf, 0.0, 0.0, -inf, -inf, -inf, 1e308, 1.0, -1e308});
  T y, ly;
  ASSERT_AG(ag_op_softmax(y.out(), x, 1));
  ASSERT_AG(ag_op_log_softmax(ly.out(), x, 1));
  const std::vector<double> p = read(y), lp = read(ly);
  EXPECT_EQ(p[0], 0.0);
  EXPECT_EQ(p[1], 0.5);
  EXPECT_EQ(lp[0], -inf);
  EXPECT_NEAR(lp[1], std::log(0.5), 1e-15);
  for (int i = 3; i < 6; ++i) EXPECT_TRUE(std::isnan(p[i]) && std::isnan(lp[i]));  // all -inf row
  EXPECT_EQ(p[6], 1.0);  // no overflow
  EXPECT_EQ(p[7], 0.0);
  EXPECT_EQ(lp[6], 0.0);
}

// Large tensors run in parallel row blocks: the same bits with 1 and 2 threads.
TEST(Softmax, ThreadCountDoesNotChangeBits) {
  const Shape s = {700, 130};
  const std::vector<double> v = sample(numel(s), -5.0, 5.0, 11);
  std::vector<std::vector<double>> results;
  for (int32_t threads : {1, 2}) {
    Ctx ctx(threads);
    T x = make(ctx.get(), AG_F32, s, v);
    T g = make(ctx.get(), AG_F32, s, sample(numel(s), -1.0, 1.0, 12));
    std::vector<double> all;
    for (int64_t dim : {0, 1}) {
      T y, ly, gb, lgb;
      ASSERT_AG(ag_op_softmax(y.out(), x, dim));
      ASSERT_AG(ag_op_log_softmax(ly.out(), x, dim));
      ASSERT_AG(ag_op_softmax_backward(gb.out(), g, y, dim));
      ASSERT_AG(ag_op_log_softmax_backward(lgb.out(), g, ly, dim));
      for (const T* t : {&y, &ly, &gb, &lgb}) {
        const std::vector<double> r = read(*t);
        all.insert(all.end(), r.begin(), r.end());
      }
    }
    results.push_back(all);
  }
  ASSERT_EQ(results[0].size(), results[1].size());
  EXPECT_TRUE(results[0] == results[1]);
  // And the values are right (spot check of the last block against the reference).
  std::vector<double> vr = v;
  for (double& e : vr) e = static_cast<float>(e);
  const std::vector<double> want = ref_softmax(vr, s, 1, false);
  const size_t y_dim1 = 4 * want.size();  // softmax along dim 1 follows the four dim-0 results
  for (size_t i = want.size() - 300; i < want.size(); ++i) {
    EXPECT_NEAR(results[0][y_dim1 + i], want[i], 2e-6 * want[i] + 1e-9);
  }
}

TEST(SoftmaxBackward, Values) {
  Ctx ctx;
  const Shape s = {2, 3, 4};
  const std::vector<double> g = sample(24, -1.0, 1.0, 5), y = sample(24, -2.0, 1.0, 6);
  T tg = make(ctx.get(), AG_F64, s, g), ty = make(ctx.get(), AG_F64, s, y);
  for (int64_t dim : {0, 1, 2, -1}) {
    const int d = static_cast<int>(dim < 0 ? dim + 3 : dim);
    const int64_t outer = d == 0 ? 1 : (d == 1 ? 2 : 6), n = s[static_cast<size_t>(d)], inner = 24 / outer / n;
    std::vector<double> want(24), lwant(24);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < inner; ++j) {
        auto at = [&](int64_t k) { return static_cast<size_t>((o * n + k) * inner + j); };
        double gy = 0, gs = 0;
        for (int64_t k = 0; k < n; ++k) gy += g[at(k)] * y[at(k)], gs += g[at(k)];
        for (int64_t k = 0; k < n; ++k) {
          want[at(k)] = y[at(k)] * (g[at(k)] - gy);
          lwant[at(k)] = g[at(k)] - std::exp(y[at(k)]) * gs;
        }
      }
    }
    T out, lout;
    ASSERT_AG(ag_op_softmax_backward(out.out(), tg, ty, dim));
    ASSERT_AG(ag_op_log_softmax_backward(lout.out(), tg, ty, dim));
    expect_close(read(out), want, 1e-14, "softmax_backward");
    expect_close(read(lout), lwant, 1e-14, "log_softmax_backward");
  }
}

TEST(Softmax, Errors) {
  Ctx ctx;
  T x = make(ctx.get(), AG_F32, {2, 3}, sample(6, -1, 1, 1));
  T x64 = make(ctx.get(), AG_F64, {2, 3}, sample(6, -1, 1, 1));
  T x23b = make(ctx.get(), AG_F32, {3, 2}, sample(6, -1, 1, 1));
  T idx = make(ctx.get(), AG_I64, {2}, {0, 1});
  T s = make(ctx.get(), AG_F32, {}, {1.0});
  ag_tensor* const sentinel = reinterpret_cast<ag_tensor*>(0x1);
  ag_tensor* out = sentinel;
  EXPECT_AG_ERROR(ag_op_softmax(&out, x, 2), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_softmax] dim 2 is out of range for a tensor of 2 dims (expected -2..1)");
  EXPECT_AG_ERROR(ag_op_log_softmax(&out, x, -3), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_log_softmax] dim -3 is out of range for a tensor of 2 dims (expected -2..1)");
  EXPECT_AG_ERROR(ag_op_softmax(&out, s, 1), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_softmax] dim 1 is out of range for a tensor of 0 dims (expected -1..0)");
  EXPECT_AG_ERROR(ag_op_softmax(&out, idx, 0), AG_ERR_DTYPE,
                  "[ag_op_softmax] expects a floating tensor (f32 or f64), got i64");
  EXPECT_AG_ERROR(ag_op_softmax(&out, nullptr, 0), AG_ERR_INVALID_ARGUMENT, "[ag_op_softmax] input x is NULL (missing: did an earlier call fail?)");
  EXPECT_AG_ERROR(ag_op_log_softmax(nullptr, x, 0), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_log_softmax] the output pointer is NULL");
  EXPECT_AG_ERROR(ag_op_softmax_backward(&out, x, x23b, 1), AG_ERR_SHAPE,
                  "[ag_op_softmax_backward] grad of shape (2,3) and output of shape (3,2) differ");
  EXPECT_AG_ERROR(ag_op_log_softmax_backward(&out, x, x64, 1), AG_ERR_DTYPE,
                  "[ag_op_log_softmax_backward] dtypes f32 and f64 differ (no implicit promotion; convert with "
                  "ag_op_cast)");
  EXPECT_AG_ERROR(ag_op_log_softmax_backward(&out, x, x, 5), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_log_softmax_backward] dim 5 is out of range for a tensor of 2 dims (expected -2..1)");
  EXPECT_AG_ERROR(ag_op_softmax_backward(&out, x, nullptr, 0), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_softmax_backward] input y is NULL (missing: did an earlier call fail?)");
  EXPECT_EQ(out, sentinel);
}

// Empty inputs whose other sizes multiply past INT64_MAX: an empty result,
// no loop over the rows.
TEST(Softmax, EmptyWithHugeSizes) {
  Ctx ctx;
  const int64_t b = int64_t{1} << 32;
  for (const Shape& sh : {Shape{b, b, 0}, Shape{INT64_MAX, 0}, Shape{0, b, b}}) {
    T x;
    ASSERT_AG(ag_tensor_zeros(x.out(), ctx.get(), AG_F64, sh.data(), static_cast<int32_t>(sh.size())));
    for (int64_t dim = 0; dim < static_cast<int64_t>(sh.size()); ++dim) {
      T y, i;
      ASSERT_AG(ag_op_softmax(y.out(), x, dim));
      EXPECT_EQ(shape_of(y), sh);
      ASSERT_AG(ag_op_log_softmax_backward(y.out(), x, x, dim));
      ASSERT_AG(ag_op_cumsum(y.out(), x, dim));
      ASSERT_AG(ag_op_logcumsumexp(y.out(), x, dim));
      EXPECT_EQ(shape_of(y), sh);
      // Strided loops over the empty result (sorting's gather, the running extremes).
      ASSERT_AG(ag_op_sort(y.out(), i.out(), x, dim, 0, 1));
      EXPECT_EQ(shape_of(i), sh);
      ASSERT_AG(ag_op_cummin(y.out(), i.out(), x, dim));
      EXPECT_EQ(shape_of(y), sh);
    }
    T total;
    ASSERT_AG(ag_op_sum_dims(total.out(), x, nullptr, 0, 0));  // all dims: a 0-dim zero
    EXPECT_EQ(shape_of(total), Shape{});
  }
}

// Selecting along a dim of an empty tensor whose other sizes are huge
// (kthvalue, median) and the causal mask of attention with no keys for
// many queries: no loop over the rows.
TEST(Softmax, SelectionAndAttentionOfEmptyWithHugeSizes) {
  Ctx ctx;
  const int64_t b = int64_t{1} << 40;
  const Shape sh{b, b, 0};
  T x;
  ASSERT_AG(ag_tensor_zeros(x.out(), ctx.get(), AG_F64, sh.data(), 3));
  T v, i;
  ASSERT_AG(ag_op_kthvalue(v.out(), i.out(), x, 1, 1, 0));
  EXPECT_EQ(shape_of(v), (Shape{b, 0}));
  EXPECT_EQ(shape_of(i), (Shape{b, 0}));
  ASSERT_AG(ag_op_median_dim(v.out(), i.out(), x, 0, 1));
  EXPECT_EQ(shape_of(v), (Shape{1, b, 0}));
  const Shape qs{b, 0}, ks{0, 0};
  T q, k, y;
  ASSERT_AG(ag_tensor_zeros(q.out(), ctx.get(), AG_F64, qs.data(), 2));
  ASSERT_AG(ag_tensor_zeros(k.out(), ctx.get(), AG_F64, ks.data(), 2));
  ASSERT_AG(ag_op_scaled_dot_product_attention(y.out(), q, k, k, nullptr, 0.0, 1, 0.0));
  EXPECT_EQ(shape_of(y), qs);
}

}  // namespace
