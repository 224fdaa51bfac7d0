// Reductions over dims through the C API: values against a scalar reference
// for dim sets and keepdim, non-contiguous inputs, 0-dim and zero-size dims
// as in NumPy, and every error.
#include <cmath>

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
      {{4, 1, 5}, {1}}, {{3, 4, 5, 6}, {1, 3}}, {{3, 4, 5, 6}, {0, 1, 2, 3}}, {{1000}, {0}}};
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
          const double tol = dt == AG_F32 ? 1e-6 : 1e-14;
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
                  "[ag_op_sum_dims] tensor x is NULL");
  EXPECT_AG_ERROR(ag_op_sum_dims(nullptr, x, ok, 1, 0), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_sum_dims] the output pointer is NULL");
  EXPECT_EQ(out, sentinel);
}

}  // namespace
