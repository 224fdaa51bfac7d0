// Creation ops through the C API: arange, linspace and eye against loops
// written here, empty results, bitwise the same at 1 and 2 threads, and
// every error status with its message.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "api_util.h"

namespace {

using namespace apitest;

class Creation : public ApiTest {};

// PyTorch's length: ceil((end - start) / step); element i = start + i * step in double.
template <class T>
std::vector<T> arange_ref(double start, double end, double step) {
  std::vector<T> v;
  const int64_t n = static_cast<int64_t>(std::ceil((end - start) / step));
  for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<T>(start + static_cast<double>(i) * step));
  return v;
}

TEST_F(Creation, ArangeValues) {
  const double cases[][3] = {{0, 5, 1}, {0, 5, 2}, {1, 2.5, 0.5}, {3, -1, -0.5}, {-2, 2, 0.3}, {0, 1, 0.1}, {0.5, 0.6, 1}};
  for (const auto& c : cases) {
    ag_tensor* y = nullptr;
    ASSERT_AG(ag_op_arange(&y, ctx_, AG_F64, c[0], c[1], c[2]));
    own(y);
    EXPECT_EQ(data_of<double>(y), arange_ref<double>(c[0], c[1], c[2])) << c[0] << " " << c[1] << " " << c[2];
    ASSERT_AG(ag_op_arange(&y, ctx_, AG_F32, c[0], c[1], c[2]));
    own(y);
    EXPECT_EQ(data_of<float>(y), arange_ref<float>(c[0], c[1], c[2]));
    EXPECT_EQ(ag_tensor_dtype(y), AG_F32);
    EXPECT_EQ(ag_tensor_get_requires_grad(y), 0);
  }
  ag_tensor* y = nullptr;
  ASSERT_AG(ag_op_arange(&y, ctx_, AG_F64, 0, 1, 0.1));
  own(y);
  EXPECT_EQ(shape(y), Shape{10});
}

TEST_F(Creation, ArangeI64) {
  ag_tensor* y = nullptr;
  ASSERT_AG(ag_op_arange(&y, ctx_, AG_I64, 1, 10, 3));
  own(y);
  EXPECT_EQ(data_of<int64_t>(y), (std::vector<int64_t>{1, 4, 7}));
  ASSERT_AG(ag_op_arange(&y, ctx_, AG_I64, 5, -6, -5));
  own(y);
  EXPECT_EQ(data_of<int64_t>(y), (std::vector<int64_t>{5, 0, -5}));
  ASSERT_AG(ag_op_arange(&y, ctx_, AG_I64, 0, 2.5, 1));  // a fractional end counts as for floats
  own(y);
  EXPECT_EQ(data_of<int64_t>(y), (std::vector<int64_t>{0, 1, 2}));
}

TEST_F(Creation, ArangeEmpty) {
  ag_tensor* y = nullptr;
  ASSERT_AG(ag_op_arange(&y, ctx_, AG_F32, 2, 2, 1));
  own(y);
  EXPECT_EQ(shape(y), Shape{0});
  ASSERT_AG(ag_op_arange(&y, ctx_, AG_I64, 2, 2, -3));
  own(y);
  EXPECT_EQ(shape(y), Shape{0});
}

TEST_F(Creation, LargeRangesSameAtOneAndTwoThreads) {
  ag_context* c1 = make_ctx(1);
  ag_context* c2 = make_ctx(2);
  const int64_t n = 300001;  // several parallel chunks and a short last one
  ag_tensor *a1 = nullptr, *a2 = nullptr, *l1 = nullptr, *l2 = nullptr;
  ASSERT_AG(ag_op_arange(&a1, c1, AG_F32, -1, -1 + 1e-3 * static_cast<double>(n), 1e-3));
  ASSERT_AG(ag_op_arange(&a2, c2, AG_F32, -1, -1 + 1e-3 * static_cast<double>(n), 1e-3));
  ASSERT_AG(ag_op_linspace(&l1, c1, AG_F64, -3, 7, n));
  ASSERT_AG(ag_op_linspace(&l2, c2, AG_F64, -3, 7, n));
  own(a1), own(a2), own(l1), own(l2);
  EXPECT_EQ(data_of<float>(a1), data_of<float>(a2));
  EXPECT_EQ(data_of<double>(l1), data_of<double>(l2));
  const auto a = data_of<float>(a1);
  ASSERT_EQ(static_cast<int64_t>(a.size()), n);
  for (int64_t i = 0; i < n; i += 997) EXPECT_EQ(a[i], static_cast<float>(-1 + static_cast<double>(i) * 1e-3));
  const auto l = data_of<double>(l1);
  EXPECT_EQ(l.front(), -3.0);
  EXPECT_EQ(l.back(), 7.0);
}

// PyTorch's symmetric linspace, in T's arithmetic.
template <class T>
std::vector<T> linspace_ref(double start, double end, int64_t steps) {
  std::vector<T> v;
  if (steps == 1) v.push_back(static_cast<T>(start));
  if (steps < 2) return v;
  const T s = static_cast<T>(start), e = static_cast<T>(end);
  const T step = (e - s) / static_cast<T>(steps - 1);
  for (int64_t i = 0; i < steps; ++i) {
    v.push_back(i < steps / 2 ? s + step * static_cast<T>(i) : e - step * static_cast<T>(steps - i - 1));
  }
  return v;
}

TEST_F(Creation, LinspaceValues) {
  const double cases[][3] = {{0, 1, 11}, {-1, 1, 7}, {2, -3, 4}, {0.1, 0.7, 2}, {5, 5, 3}, {2, 9, 1}, {2, 9, 0}};
  for (const auto& c : cases) {
    const int64_t steps = static_cast<int64_t>(c[2]);
    ag_tensor* y = nullptr;
    ASSERT_AG(ag_op_linspace(&y, ctx_, AG_F64, c[0], c[1], steps));
    own(y);
    EXPECT_EQ(shape(y), Shape{steps});
    EXPECT_EQ(data_of<double>(y), linspace_ref<double>(c[0], c[1], steps));
    ASSERT_AG(ag_op_linspace(&y, ctx_, AG_F32, c[0], c[1], steps));
    own(y);
    EXPECT_EQ(data_of<float>(y), linspace_ref<float>(c[0], c[1], steps));
  }
  // Both end points exact, and the points evenly spaced.
  ag_tensor* y = nullptr;
  ASSERT_AG(ag_op_linspace(&y, ctx_, AG_F32, 0.1, 0.7, 13));
  own(y);
  const auto v = data_of<float>(y);
  EXPECT_EQ(v.front(), 0.1f);
  EXPECT_EQ(v.back(), 0.7f);
  for (size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(v[i], 0.1 + 0.05 * static_cast<double>(i), 1e-6);
}

TEST_F(Creation, Eye) {
  ag_tensor* y = nullptr;
  ASSERT_AG(ag_op_eye(&y, ctx_, AG_F64, 3, -1));
  own(y);
  EXPECT_EQ(shape(y), (Shape{3, 3}));
  EXPECT_EQ(data_of<double>(y), (std::vector<double>{1, 0, 0, 0, 1, 0, 0, 0, 1}));
  ASSERT_AG(ag_op_eye(&y, ctx_, AG_F32, 2, 4));
  own(y);
  EXPECT_EQ(data_of<float>(y), (std::vector<float>{1, 0, 0, 0, 0, 1, 0, 0}));
  ASSERT_AG(ag_op_eye(&y, ctx_, AG_I64, 3, 1));
  own(y);
  EXPECT_EQ(data_of<int64_t>(y), (std::vector<int64_t>{1, 0, 0}));
  ASSERT_AG(ag_op_eye(&y, ctx_, AG_BOOL, 2, 2));
  own(y);
  EXPECT_EQ(data_of<uint8_t>(y), (std::vector<uint8_t>{1, 0, 0, 1}));
  ASSERT_AG(ag_op_eye(&y, ctx_, AG_F32, 0, 3));
  own(y);
  EXPECT_EQ(shape(y), (Shape{0, 3}));
  ASSERT_AG(ag_op_eye(&y, ctx_, AG_F32, 2, 0));
  own(y);
  EXPECT_EQ(shape(y), (Shape{2, 0}));
}

TEST_F(Creation, Errors) {
  ag_tensor* y = reinterpret_cast<ag_tensor*>(&y);  // must stay untouched
  ag_tensor* const sentinel = y;
  EXPECT_AG_ERROR(ag_op_arange(&y, ctx_, AG_F32, 0, 5, 0), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_arange] step must be nonzero");
  EXPECT_AG_ERROR(ag_op_arange(&y, ctx_, AG_F32, 5, 0, 1), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_arange] end 0 is below start 5 but step 1 is positive");
  EXPECT_AG_ERROR(ag_op_arange(&y, ctx_, AG_F64, 0, 1, -0.5), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_arange] end 1 is above start 0 but step -0.5 is negative");
  EXPECT_AG_ERROR(ag_op_arange(&y, ctx_, AG_F64, 0, INFINITY, 1), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_arange] end inf is not finite");
  EXPECT_AG_ERROR(ag_op_arange(&y, ctx_, AG_F64, NAN, 1, 1), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_arange] start nan is not finite");
  EXPECT_AG_ERROR(ag_op_arange(&y, ctx_, AG_BOOL, 0, 2, 1), AG_ERR_DTYPE,
                  "[ag_op_arange] dtype must be f32, f64 or i64, got bool");
  EXPECT_AG_ERROR(ag_op_arange(&y, ctx_, AG_I64, 0, 2, 0.5), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_arange] step 0.5 is not an integer (dtype i64)");
  EXPECT_AG_ERROR(ag_op_arange(&y, ctx_, AG_I64, 0.5, 2, 1), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_arange] start 0.5 is not an integer (dtype i64)");
  EXPECT_AG_ERROR(ag_op_arange(&y, ctx_, AG_I64, 0, 1e30, 1e29), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_arange] start and end must lie within +-9.2e18 for i64, got 1e+30");
  EXPECT_AG_ERROR(ag_op_arange(&y, ctx_, AG_F32, 0, 1e300, 1e-3), AG_ERR_OUT_OF_MEMORY,
                  "[ag_op_arange] the result would have 1e+303 elements");
  EXPECT_AG_ERROR(ag_op_arange(&y, ctx_, static_cast<ag_dtype>(9), 0, 2, 1), AG_ERR_DTYPE,
                  "[ag_op_arange] dtype 9 is not one of AG_F32, AG_F64, AG_I64, AG_BOOL");
  EXPECT_AG_ERROR(ag_op_arange(&y, nullptr, AG_F32, 0, 2, 1), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_arange] context is NULL (missing: did an earlier call fail?)");
  EXPECT_AG_ERROR(ag_op_arange(nullptr, ctx_, AG_F32, 0, 2, 1), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_arange] the output pointer is NULL");
  EXPECT_AG_ERROR(ag_op_linspace(&y, ctx_, AG_F32, 0, 1, -1), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_linspace] steps -1 is negative");
  EXPECT_AG_ERROR(ag_op_linspace(&y, ctx_, AG_I64, 0, 1, 3), AG_ERR_DTYPE,
                  "[ag_op_linspace] dtype must be f32 or f64, got i64");
  EXPECT_AG_ERROR(ag_op_linspace(&y, nullptr, AG_F32, 0, 1, 3), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_linspace] context is NULL (missing: did an earlier call fail?)");
  EXPECT_AG_ERROR(ag_op_eye(&y, ctx_, AG_F32, -1, 2), AG_ERR_INVALID_ARGUMENT, "[ag_op_eye] n -1 is negative");
  EXPECT_AG_ERROR(ag_op_eye(&y, ctx_, AG_F32, 2, -2), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_eye] m -2 is negative (-1 means m = n)");
  EXPECT_AG_ERROR(ag_op_eye(&y, ctx_, static_cast<ag_dtype>(0), 2, 2), AG_ERR_DTYPE,
                  "[ag_op_eye] dtype 0 is not one of AG_F32, AG_F64, AG_I64, AG_BOOL");
  EXPECT_EQ(y, sentinel);
}

// i64 arange whose i * step passes INT64_MAX although every value fits, and a
// step the kernel cannot cast to int64.
TEST_F(Creation, ArangeI64LargeSteps) {
  ag_tensor* y = nullptr;
  ASSERT_AG(ag_op_arange(&y, ctx_, AG_I64, -9e18, 9e18, 1e18));
  own(y);
  const std::vector<int64_t> v = ivalues(y);
  ASSERT_EQ(v.size(), 18u);
  EXPECT_EQ(v.front(), -9000000000000000000);
  EXPECT_EQ(v.back(), 8000000000000000000);
  ag_tensor* sentinel = reinterpret_cast<ag_tensor*>(0x1);
  y = sentinel;
  expect_error_untouched(ag_op_arange(&y, ctx_, AG_I64, 0, 1, 1e300), y, sentinel, AG_ERR_INVALID_ARGUMENT,
                         "[ag_op_arange] step must lie within +-9.2e18 for i64, got 1e+300");
}

}  // namespace
