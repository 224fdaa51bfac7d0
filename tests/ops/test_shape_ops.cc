// Shape and view ops through the C API: values against index arithmetic
// written here, views sharing data and version counter with their base,
// reshape's copy fallback, strided views into elementwise ops and sums,
// empty tensors, and every error status with its message.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "api_util.h"

namespace {

using namespace apitest;

class ShapeOps : public ApiTest {};

// ---- values ----------------------------------------------------------------

TEST_F(ShapeOps, ReshapeFlattenValues) {
  ag_tensor* x = iota({2, 3, 4});
  ag_tensor* y = nullptr;
  const Shape s{4, -1};
  ASSERT_AG(ag_op_reshape(&y, x, s.data(), 2));
  own(y);
  EXPECT_EQ(shape(y), (Shape{4, 6}));
  EXPECT_EQ(values(y), values(x));
  ag_tensor* f = nullptr;
  ASSERT_AG(ag_op_flatten(&f, x, 1, 2));
  own(f);
  EXPECT_EQ(shape(f), (Shape{2, 12}));
  ag_tensor* s0 = nullptr;
  ag_tensor* scalar = own([&] { ag_tensor* t = nullptr; ag_tensor_scalar(&t, ctx_, AG_F64, 5.0); return t; }());
  ASSERT_AG(ag_op_flatten(&s0, scalar, 0, -1));
  own(s0);
  EXPECT_EQ(shape(s0), (Shape{1}));
  EXPECT_EQ(values(s0), (std::vector<double>{5.0}));
}

TEST_F(ShapeOps, TransposePermuteValues) {
  ag_tensor* x = iota({2, 3, 4});
  const int64_t p[3] = {2, 0, 1};
  ag_tensor *y = nullptr, *t = nullptr;
  ASSERT_AG(ag_op_permute(&y, x, p, 3));
  ASSERT_AG(ag_op_transpose(&t, x, 0, -1));
  own(y);
  own(t);
  EXPECT_EQ(shape(y), (Shape{4, 2, 3}));
  EXPECT_EQ(shape(t), (Shape{4, 3, 2}));
  const std::vector<double> vy = values(y), vt = values(t);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 4; ++k) {
        const double want = static_cast<double>(i * 12 + j * 4 + k);
        EXPECT_EQ(vy[static_cast<size_t>(k * 6 + i * 3 + j)], want);
        EXPECT_EQ(vt[static_cast<size_t>(k * 6 + j * 2 + i)], want);
      }
}

// Copies of permuted views, which kernels::copy walks in tiles when a row of
// the result reads a column of the source: whole and partial tiles, 3-D and
// 4-D, f64 and f32, casting on the way and flipped, on 1 and 2 threads,
// against index arithmetic.
TEST_F(ShapeOps, PermutedCopiesMatchIndexArithmetic) {
  struct Case {
    Shape shape;
    std::vector<int64_t> perm;
  };
  const std::vector<Case> cases = {{{130, 70}, {1, 0}},        {{37, 1000}, {1, 0}},       {{3, 50, 70}, {2, 1, 0}},
                                   {{5, 64, 33}, {0, 2, 1}},   {{8, 17, 19, 23}, {3, 1, 0, 2}},
                                   {{300, 2}, {1, 0}},         {{129, 65, 3}, {1, 2, 0}}};
  for (int32_t threads : {1, 2}) {
    ag_context* c = make_ctx(threads);
    for (const Case& k : cases) {
      const int n = static_cast<int>(k.shape.size());
      std::vector<double> v(static_cast<size_t>(numel(k.shape)));
      for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);
      ag_tensor* x64 = f64(k.shape, v, c);
      Shape xs(static_cast<size_t>(n));  // x's row-major strides
      for (int d = n - 1, st = 1; d >= 0; st *= static_cast<int>(k.shape[static_cast<size_t>(d)]), --d) xs[static_cast<size_t>(d)] = st;
      for (bool flip : {false, true}) {
        for (ag_dtype from : {AG_F64, AG_F32}) {
          for (ag_dtype to : {AG_F64, AG_F32}) {
            ag_tensor* x = x64;
            if (from == AG_F32) {
              ASSERT_AG(ag_op_cast(&x, x64, AG_F32));
              own(x);
            }
            if (flip) {
              const int64_t d0 = 0;
              ag_tensor* f = nullptr;
              ASSERT_AG(ag_op_flip(&f, x, &d0, 1));
              x = own(f);
            }
            ag_tensor *p = nullptr, *y = nullptr;
            ASSERT_AG(ag_op_permute(&p, x, k.perm.data(), n));
            own(p);
            if (to == from) {
              ASSERT_AG(ag_op_clone(&y, p));
            } else {
              ASSERT_AG(ag_op_cast(&y, p, to));
            }
            own(y);
            const std::vector<double> got = read(y);
            Shape ys(static_cast<size_t>(n)), idx(static_cast<size_t>(n), 0);
            for (int d = 0; d < n; ++d) ys[static_cast<size_t>(d)] = k.shape[static_cast<size_t>(k.perm[static_cast<size_t>(d)])];
            size_t bad = 0;
            for (size_t i = 0; i < got.size(); ++i) {
              int64_t want = 0;
              for (int d = 0; d < n; ++d) {
                const size_t src_dim = static_cast<size_t>(k.perm[static_cast<size_t>(d)]);
                int64_t at = idx[static_cast<size_t>(d)];
                if (flip && src_dim == 0) at = k.shape[0] - 1 - at;
                want += at * xs[src_dim];
              }
              bad += got[i] != static_cast<double>(want);
              for (int d = n - 1; d >= 0 && ++idx[static_cast<size_t>(d)] == ys[static_cast<size_t>(d)]; --d) idx[static_cast<size_t>(d)] = 0;
            }
            EXPECT_EQ(bad, 0u) << "shape " << k.shape.size() << "-D of " << got.size() << " flip " << flip << " from "
                               << from << " to " << to << " threads " << threads;
          }
        }
      }
    }
  }
}

TEST_F(ShapeOps, SliceSelectNarrowValues) {
  ag_tensor* x = iota({5, 7});
  struct S {
    int64_t dim, start, end, step;
    std::vector<int64_t> rows, cols;  // the kept indices
  };
  const std::vector<S> cases = {
      {0, 1, 4, 1, {1, 2, 3}, {0, 1, 2, 3, 4, 5, 6}},
      {1, 0, INT64_MAX, 3, {0, 1, 2, 3, 4}, {0, 3, 6}},
      {-1, -3, -1, 1, {0, 1, 2, 3, 4}, {4, 5}},
      {0, -100, 100, 2, {0, 2, 4}, {0, 1, 2, 3, 4, 5, 6}},
      {1, 5, 2, 1, {0, 1, 2, 3, 4}, {}},
      {1, 6, 100, 4, {0, 1, 2, 3, 4}, {6}},
      {1, 2, 5, INT64_MAX, {0, 1, 2, 3, 4}, {2}},  // start + step overflows int64
      {0, 4, INT64_MAX, INT64_MAX, {4}, {0, 1, 2, 3, 4, 5, 6}},
  };
  for (const S& s : cases) {
    ag_tensor* y = nullptr;
    ASSERT_AG(ag_op_slice(&y, x, s.dim, s.start, s.end, s.step));
    own(y);
    EXPECT_EQ(shape(y), (Shape{static_cast<int64_t>(s.rows.size()), static_cast<int64_t>(s.cols.size())}));
    std::vector<double> want;
    for (int64_t r : s.rows)
      for (int64_t c : s.cols) want.push_back(static_cast<double>(r * 7 + c));
    EXPECT_EQ(values(y), want) << "slice dim " << s.dim << " start " << s.start;
  }
  ag_tensor *sel = nullptr, *nar = nullptr;
  ASSERT_AG(ag_op_select(&sel, x, 1, -2));
  ASSERT_AG(ag_op_narrow(&nar, x, 0, -2, 2));
  own(sel);
  own(nar);
  EXPECT_EQ(shape(sel), (Shape{5}));
  EXPECT_EQ(values(sel), (std::vector<double>{5, 12, 19, 26, 33}));
  EXPECT_EQ(shape(nar), (Shape{2, 7}));
  EXPECT_EQ(values(nar)[0], 21.0);
}

// A step past the end of the dim: one element, whose gradient lands in place.
TEST_F(ShapeOps, SliceWithAHugeStepHasAGradient) {
  ag_tensor* x = iota({5, 7});
  ASSERT_AG(ag_tensor_requires_grad(x, 1));
  ag_tensor *y = nullptr, *s = nullptr, *g = nullptr;
  ASSERT_AG(ag_op_slice(&y, x, 1, 3, INT64_MAX, INT64_MAX));
  own(y);
  EXPECT_EQ(shape(y), (Shape{5, 1}));
  ASSERT_AG(ag_op_sum(&s, y));
  own(s);
  ASSERT_AG(ag_backward(s, nullptr, nullptr));
  ASSERT_AG(ag_tensor_grad(&g, x));
  own(g);
  std::vector<double> want(35, 0.0);
  for (int r = 0; r < 5; ++r) want[r * 7 + 3] = 1.0;
  EXPECT_EQ(values(g), want);
}

TEST_F(ShapeOps, SqueezeUnsqueeze) {
  ag_tensor* x = iota({2, 1, 3, 1});
  ag_tensor *a = nullptr, *b = nullptr, *c = nullptr, *u = nullptr;
  const int64_t d1[1] = {-1}, d0[1] = {0};
  ASSERT_AG(ag_op_squeeze(&a, x, nullptr, 0));
  ASSERT_AG(ag_op_squeeze(&b, x, d1, 1));
  ASSERT_AG(ag_op_squeeze(&c, x, d0, 1));  // size 2: kept
  ASSERT_AG(ag_op_unsqueeze(&u, x, -1));
  own(a), own(b), own(c), own(u);
  EXPECT_EQ(shape(a), (Shape{2, 3}));
  EXPECT_EQ(shape(b), (Shape{2, 1, 3}));
  EXPECT_EQ(shape(c), (Shape{2, 1, 3, 1}));
  EXPECT_EQ(shape(u), (Shape{2, 1, 3, 1, 1}));
  EXPECT_EQ(values(u), values(x));
}

TEST_F(ShapeOps, SplitChunk) {
  ag_tensor* x = iota({5, 2});
  ag_tensor* outs[4] = {};
  int32_t n = -1;
  ASSERT_AG(ag_op_chunk(nullptr, 0, &n, x, 4, 0));
  EXPECT_EQ(n, 3);  // 2, 2, 1
  ASSERT_AG(ag_op_chunk(outs, 4, &n, x, 4, 0));
  ASSERT_EQ(n, 3);
  EXPECT_EQ(shape(outs[0]), (Shape{2, 2}));
  EXPECT_EQ(shape(outs[2]), (Shape{1, 2}));
  EXPECT_EQ(values(outs[2]), (std::vector<double>{8, 9}));
  for (int i = 0; i < n; ++i) own(outs[i]);
  const int64_t sizes[3] = {0, 3, 2};
  ag_tensor* parts[3] = {};
  ASSERT_AG(ag_op_split(parts, 3, x, sizes, 3, 0));
  for (ag_tensor* p : parts) own(p);
  EXPECT_EQ(shape(parts[0]), (Shape{0, 2}));
  EXPECT_EQ(values(parts[1]), (std::vector<double>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(values(parts[2]), (std::vector<double>{6, 7, 8, 9}));
  // An empty dim gives one empty piece.
  ag_tensor* e = iota({0, 3});
  ag_tensor* one[1] = {};
  ASSERT_AG(ag_op_chunk(one, 1, &n, e, 3, 0));
  own(one[0]);
  EXPECT_EQ(n, 1);
  EXPECT_EQ(shape(one[0]), (Shape{0, 3}));
}

TEST_F(ShapeOps, SliceBackwardValues) {
  ag_tensor* g = iota({2, 2});
  const int64_t in[2] = {2, 5};
  ag_tensor* y = nullptr;
  ASSERT_AG(ag_op_slice_backward(&y, g, in, 2, 1, 1, INT64_MAX, 3));
  own(y);
  EXPECT_EQ(values(y), (std::vector<double>{0, 0, 0, 0, 1, 0, 2, 0, 0, 3}));
}

// ---- views share storage and version ----------------------------------------

TEST_F(ShapeOps, ViewsShareDataAndVersion) {
  ag_tensor* x = iota({4, 6});
  const int64_t s[2] = {6, 4}, p[2] = {1, 0};
  ag_tensor* v[8] = {};
  ASSERT_AG(ag_op_reshape(&v[0], x, s, 2));
  ASSERT_AG(ag_op_transpose(&v[1], x, 0, 1));
  ASSERT_AG(ag_op_slice(&v[2], x, 1, 1, 6, 2));
  ASSERT_AG(ag_op_select(&v[3], x, 0, 2));
  ASSERT_AG(ag_op_narrow(&v[4], x, 1, 2, 3));
  ASSERT_AG(ag_op_unsqueeze(&v[5], x, 0));
  ASSERT_AG(ag_op_permute(&v[6], x, p, 2));
  ASSERT_AG(ag_op_flatten(&v[7], x, 0, 1));
  for (ag_tensor* t : v) own(t);
  const int64_t before = ag_tensor_version(x);
  // Write through the select view (row 2), read everywhere.
  const double row[6] = {-1, -2, -3, -4, -5, -6};
  ASSERT_AG(ag_tensor_copy_from(v[3], row, sizeof row));
  EXPECT_GT(ag_tensor_version(x), before);
  for (ag_tensor* t : v) EXPECT_EQ(ag_tensor_version(t), ag_tensor_version(x));
  const std::vector<double> vx = values(x);
  EXPECT_EQ(vx[12], -1.0);
  EXPECT_EQ(vx[17], -6.0);
  EXPECT_EQ(values(v[1])[1 * 4 + 2], -2.0);  // transpose (1, 2) = x (2, 1)
  EXPECT_EQ(values(v[2])[2 * 3 + 1], -4.0);  // slice cols 1,3,5: (2, 1) = x (2, 3)
  EXPECT_EQ(values(v[4])[2 * 3 + 0], -3.0);  // narrow cols 2..4: (2, 0) = x (2, 2)
  // Write through the base, read through a strided view.
  std::vector<double> all(24, 7.0);
  ASSERT_AG(ag_tensor_copy_from(x, all.data(), all.size() * sizeof(double)));
  EXPECT_EQ(values(v[2]), std::vector<double>(12, 7.0));
}

TEST_F(ShapeOps, ReshapeCopiesOnlyWhenStridesCannot) {
  ag_tensor* x = iota({3, 4});
  ag_tensor *t = nullptr, *flat = nullptr, *ok = nullptr;
  const int64_t minus1[1] = {-1}, s[3] = {4, 1, 3};
  ASSERT_AG(ag_op_transpose(&t, x, 0, 1));
  own(t);
  ASSERT_AG(ag_op_reshape(&flat, t, minus1, 1));  // (4,3) transposed: not viewable flat
  ASSERT_AG(ag_op_reshape(&ok, t, s, 3));         // inserting a 1 is a view
  own(flat), own(ok);
  std::vector<double> want;
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 3; ++i) want.push_back(i * 4 + j);
  EXPECT_EQ(values(flat), want);
  std::vector<double> zeros(12, 0.0);
  ASSERT_AG(ag_tensor_copy_from(x, zeros.data(), zeros.size() * sizeof(double)));
  EXPECT_EQ(values(flat), want);                     // a copy: unchanged
  EXPECT_EQ(values(ok), std::vector<double>(12, 0.0));  // a view: sees the write
  EXPECT_EQ(ag_tensor_version(ok), ag_tensor_version(x));
}

// ---- strided views into elementwise ops and sums ------------------------------

TEST_F(ShapeOps, StridedInputsIntoKernels) {
  ag_tensor* x = iota({4, 6});
  ag_tensor *t = nullptr, *s = nullptr, *e = nullptr, *m = nullptr, *a = nullptr, *sum = nullptr;
  ASSERT_AG(ag_op_transpose(&t, x, 0, 1));   // (6,4), strides (1,6)
  ASSERT_AG(ag_op_slice(&s, x, 1, 0, 6, 2)); // (4,3), strides (6,2)
  own(t), own(s);
  ag_tensor* st = nullptr;
  ASSERT_AG(ag_op_transpose(&st, s, 0, 1));  // (3,4)
  own(st);
  ag_tensor* b = iota({3, 4});
  ASSERT_AG(ag_op_exp(&e, st));
  ASSERT_AG(ag_op_mul(&m, st, b));
  ASSERT_AG(ag_op_add(&a, t, t));
  ASSERT_AG(ag_op_sum(&sum, s));
  own(e), own(m), own(a), own(sum);
  const std::vector<double> ve = values(e), vm = values(m), va = values(a);
  double total = 0.0;
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 4; ++j) {
      const double xv = static_cast<double>(j * 6 + 2 * i);  // st(i,j) = x(j, 2i)
      EXPECT_NEAR(ve[static_cast<size_t>(i * 4 + j)], std::exp(xv), 1e-12 * std::exp(xv));
      EXPECT_EQ(vm[static_cast<size_t>(i * 4 + j)], xv * static_cast<double>(i * 4 + j));
      total += xv;
    }
  for (int64_t i = 0; i < 6; ++i)
    for (int64_t j = 0; j < 4; ++j) EXPECT_EQ(va[static_cast<size_t>(i * 4 + j)], 2.0 * static_cast<double>(j * 6 + i));
  double got = 0.0;
  ASSERT_AG(ag_tensor_item(sum, &got));
  EXPECT_EQ(got, total);
}

// Gradients through a strided view land in the right places of the base.
TEST_F(ShapeOps, GradientThroughSliceOfTranspose) {
  ag_tensor* x = iota({3, 4});
  ASSERT_AG(ag_tensor_requires_grad(x, 1));
  ag_tensor *t = nullptr, *s = nullptr, *y = nullptr, *g = nullptr;
  ASSERT_AG(ag_op_transpose(&t, x, 0, 1));      // (4,3)
  ASSERT_AG(ag_op_slice(&s, t, 0, 1, 4, 2));    // rows 1,3 of t = cols 1,3 of x
  ASSERT_AG(ag_op_mul(&y, s, s));
  own(t), own(s), own(y);
  ag_tensor* sum = nullptr;
  ASSERT_AG(ag_op_sum(&sum, y));
  own(sum);
  ASSERT_AG(ag_backward(sum, nullptr, nullptr));
  ASSERT_AG(ag_tensor_grad(&g, x));
  own(g);
  std::vector<double> want(12, 0.0);
  for (int i = 0; i < 3; ++i)
    for (int j : {1, 3}) want[static_cast<size_t>(i * 4 + j)] = 2.0 * (i * 4 + j);
  EXPECT_EQ(values(g), want);
}

// ---- empty tensors ------------------------------------------------------------

TEST_F(ShapeOps, EmptyTensors) {
  ag_tensor* x = iota({0, 3});
  ag_tensor *r = nullptr, *t = nullptr, *s = nullptr, *f = nullptr;
  const int64_t s1[2] = {-1, 3}, s2[3] = {3, 0, 5};
  ASSERT_AG(ag_op_reshape(&r, x, s1, 2));
  own(r);
  EXPECT_EQ(shape(r), (Shape{0, 3}));
  ASSERT_AG(ag_op_transpose(&t, x, 0, 1));
  own(t);
  EXPECT_EQ(shape(t), (Shape{3, 0}));
  ASSERT_AG(ag_op_slice(&s, x, 1, 1, 3, 1));
  own(s);
  EXPECT_EQ(shape(s), (Shape{0, 2}));
  ASSERT_AG(ag_op_flatten(&f, x, 0, 1));
  own(f);
  EXPECT_EQ(shape(f), (Shape{0}));
  ag_tensor* z = nullptr;
  ASSERT_AG(ag_op_reshape(&z, x, s2, 3));  // any shape with a 0 holds 0 elements
  own(z);
  EXPECT_EQ(shape(z), (Shape{3, 0, 5}));
  z = nullptr;
  const int64_t s3[2] = {-1, 0};
  EXPECT_AG_ERROR_CONTAINS(ag_op_reshape(&z, x, s3, 2), AG_ERR_SHAPE, "shape (-1,0) is invalid");
  EXPECT_EQ(z, nullptr);
}

// ---- errors ---------------------------------------------------------------------

TEST_F(ShapeOps, Errors) {
  ag_tensor* x = iota({2, 3});
  ag_tensor* y = nullptr;
  const int64_t bad_shape[2] = {4, 2}, two_infer[2] = {-1, -1}, perm_dup[2] = {0, 0}, perm_short[1] = {0};
  EXPECT_AG_ERROR_CONTAINS(ag_op_reshape(&y, x, bad_shape, 2), AG_ERR_SHAPE,
                           "[ag_op_reshape] shape (4,2) is invalid for an input of 6 elements");
  EXPECT_AG_ERROR_CONTAINS(ag_op_reshape(&y, x, two_infer, 2), AG_ERR_INVALID_ARGUMENT, "only one size may be -1");
  EXPECT_AG_ERROR_CONTAINS(ag_op_reshape(&y, nullptr, bad_shape, 2), AG_ERR_INVALID_ARGUMENT,
                           "[ag_op_reshape] input x is NULL (missing: did an earlier call fail?)");
  EXPECT_AG_ERROR_CONTAINS(ag_op_flatten(&y, x, 1, 0), AG_ERR_INVALID_ARGUMENT,
                           "[ag_op_flatten] start_dim 1 comes after end_dim 0");
  EXPECT_AG_ERROR_CONTAINS(ag_op_flatten(&y, x, 2, 2), AG_ERR_INVALID_ARGUMENT,
                           "[ag_op_flatten] start_dim 2 is out of range for a tensor of 2 dims (expected -2..1)");
  EXPECT_AG_ERROR_CONTAINS(ag_op_transpose(&y, x, 0, -3), AG_ERR_INVALID_ARGUMENT,
                           "[ag_op_transpose] dim1 -3 is out of range");
  EXPECT_AG_ERROR_CONTAINS(ag_op_unsqueeze(&y, x, 3), AG_ERR_INVALID_ARGUMENT,
                           "[ag_op_unsqueeze] dim 3 is out of range for a tensor of 3 dims");
  EXPECT_AG_ERROR_CONTAINS(ag_op_permute(&y, x, perm_dup, 2), AG_ERR_INVALID_ARGUMENT,
                           "[ag_op_permute] dim 0 appears more than once");
  EXPECT_AG_ERROR_CONTAINS(ag_op_permute(&y, x, perm_short, 1), AG_ERR_INVALID_ARGUMENT,
                           "dims has 1 entries but the tensor has 2 dims");
  EXPECT_AG_ERROR_CONTAINS(ag_op_permute(&y, x, nullptr, 2), AG_ERR_INVALID_ARGUMENT,
                           "[ag_op_permute] dims is NULL but ndims is 2");
  EXPECT_AG_ERROR_CONTAINS(ag_op_squeeze(&y, x, perm_dup, 2), AG_ERR_INVALID_ARGUMENT,
                           "[ag_op_squeeze] dim 0 appears more than once");
  EXPECT_AG_ERROR_CONTAINS(ag_op_slice(&y, x, 0, 0, 2, 0), AG_ERR_INVALID_ARGUMENT,
                           "[ag_op_slice] step 0 must be positive");
  EXPECT_AG_ERROR_CONTAINS(ag_op_slice(&y, x, 2, 0, 2, 1), AG_ERR_INVALID_ARGUMENT,
                           "[ag_op_slice] dim 2 is out of range");
  EXPECT_AG_ERROR_CONTAINS(ag_op_select(&y, x, 1, 3), AG_ERR_INVALID_ARGUMENT,
                           "[ag_op_select] index 3 is out of range for dim 1 of size 3");
  EXPECT_AG_ERROR_CONTAINS(ag_op_select(&y, x, 0, -3), AG_ERR_INVALID_ARGUMENT,
                           "index -3 is out of range for dim 0 of size 2");
  EXPECT_AG_ERROR_CONTAINS(ag_op_narrow(&y, x, 1, 2, 2), AG_ERR_INVALID_ARGUMENT,
                           "[ag_op_narrow] length 2 from start 2 exceeds dim 1 of size 3");
  EXPECT_AG_ERROR_CONTAINS(ag_op_narrow(&y, x, 1, -4, 1), AG_ERR_INVALID_ARGUMENT,
                           "[ag_op_narrow] start -4 is out of range for dim 1 of size 3");
  EXPECT_AG_ERROR_CONTAINS(ag_op_transpose(nullptr, x, 0, 1), AG_ERR_INVALID_ARGUMENT,
                           "[ag_op_transpose] the output pointer is NULL");
  EXPECT_EQ(y, nullptr);

  ag_tensor* g = iota({2, 2});
  const int64_t in[2] = {2, 5};
  EXPECT_AG_ERROR_CONTAINS(ag_op_slice_backward(&y, g, in, 2, 1, 0, 5, 1), AG_ERR_SHAPE,
                           "[ag_op_slice_backward] grad has shape (2,2) but the slice of (2,5) has shape (2,5)");

  ag_tensor* outs[2] = {nullptr, nullptr};
  const int64_t sizes[2] = {1, 1}, sizes3[3] = {1, 1, 1}, neg[2] = {4, -1};
  int32_t n = 0;
  EXPECT_AG_ERROR_CONTAINS(ag_op_split(outs, 2, x, sizes, 2, 1), AG_ERR_SHAPE,
                           "[ag_op_split] sizes add up to 2 but dim 1 has size 3");
  EXPECT_AG_ERROR_CONTAINS(ag_op_split(outs, 2, x, neg, 2, 1), AG_ERR_INVALID_ARGUMENT,
                           "[ag_op_split] size -1 at position 1 is negative");
  EXPECT_AG_ERROR_CONTAINS(ag_op_split(outs, 2, x, sizes3, 3, 1), AG_ERR_BUFFER_TOO_SMALL,
                           "[ag_op_split] capacity 2 is less than the 3 outputs");
  EXPECT_AG_ERROR_CONTAINS(ag_op_chunk(outs, 2, &n, x, 3, 1), AG_ERR_BUFFER_TOO_SMALL,
                           "[ag_op_chunk] capacity 2 is less than the 3 outputs");
  EXPECT_AG_ERROR_CONTAINS(ag_op_chunk(outs, 2, &n, x, 0, 1), AG_ERR_INVALID_ARGUMENT,
                           "[ag_op_chunk] chunks 0 must be positive");
  EXPECT_AG_ERROR_CONTAINS(ag_op_chunk(outs, 2, nullptr, x, 2, 1), AG_ERR_INVALID_ARGUMENT,
                           "[ag_op_chunk] n_out is NULL");
  EXPECT_EQ(outs[0], nullptr);
  EXPECT_EQ(n, 0);
}

// ---- ops that copy: concat, stack, flip, repeat, pad ----------------------------

TEST_F(ShapeOps, ConcatStackValues) {
  ag_tensor *a = iota({2, 3}), *b = iota({2, 1}), *e = iota({2, 0});
  const ag_tensor* xs[3] = {a, e, b};
  ag_tensor *y = nullptr, *st = nullptr;
  ASSERT_AG(ag_op_concat(&y, xs, 3, -1));
  own(y);
  EXPECT_EQ(shape(y), (Shape{2, 4}));
  EXPECT_EQ(values(y), (std::vector<double>{0, 1, 2, 0, 3, 4, 5, 1}));
  const ag_tensor* same[2] = {a, a};
  ASSERT_AG(ag_op_stack(&st, same, 2, 1));
  own(st);
  EXPECT_EQ(shape(st), (Shape{2, 2, 3}));
  EXPECT_EQ(values(st), (std::vector<double>{0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}));
  // A transposed input is read through its strides.
  ag_tensor* t = nullptr;
  ASSERT_AG(ag_op_transpose(&t, a, 0, 1));  // (3,2)
  own(t);
  ag_tensor* c = nullptr;
  const ag_tensor* xt[2] = {t, t};
  ASSERT_AG(ag_op_concat(&c, xt, 2, 0));
  own(c);
  EXPECT_EQ(values(c), (std::vector<double>{0, 3, 1, 4, 2, 5, 0, 3, 1, 4, 2, 5}));
}

TEST_F(ShapeOps, FlipValues) {
  ag_tensor* x = iota({2, 3, 4});
  const int64_t dims[2] = {0, -1};
  ag_tensor* y = nullptr;
  ASSERT_AG(ag_op_flip(&y, x, dims, 2));
  own(y);
  const std::vector<double> v = values(y);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 4; ++k)
        EXPECT_EQ(v[static_cast<size_t>(i * 12 + j * 4 + k)], static_cast<double>((1 - i) * 12 + j * 4 + (3 - k)));
  EXPECT_EQ(ag_tensor_version(y), 0);  // a copy, not a view
}

TEST_F(ShapeOps, RepeatValues) {
  ag_tensor* x = iota({2, 3});
  const int64_t r[3] = {2, 1, 2};
  ag_tensor* y = nullptr;
  ASSERT_AG(ag_op_repeat(&y, x, r, 3));
  own(y);
  EXPECT_EQ(shape(y), (Shape{2, 2, 6}));
  const std::vector<double> v = values(y);
  for (int64_t a = 0; a < 2; ++a)
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 6; ++j) EXPECT_EQ(v[static_cast<size_t>(a * 12 + i * 6 + j)], static_cast<double>(i * 3 + j % 3));
  const int64_t zero[2] = {0, 2};
  ag_tensor* z = nullptr;
  ASSERT_AG(ag_op_repeat(&z, x, zero, 2));
  own(z);
  EXPECT_EQ(shape(z), (Shape{0, 6}));
}

TEST_F(ShapeOps, PadValues) {
  ag_tensor* x = iota({3, 4});
  // Constant: last dim (1, 2), first dim (-1, 1): crop one row before, add one after.
  const int64_t pc[4] = {1, 2, -1, 1};
  ag_tensor* y = nullptr;
  ASSERT_AG(ag_op_pad(&y, x, pc, 4, AG_PAD_CONSTANT, -7.5));
  own(y);
  EXPECT_EQ(shape(y), (Shape{3, 7}));
  std::vector<double> want;
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 7; ++j) {
      const int64_t si = i + 1, sj = j - 1;
      want.push_back(si < 3 && sj >= 0 && sj < 4 ? static_cast<double>(si * 4 + sj) : -7.5);
    }
  EXPECT_EQ(values(y), want);
  // Reflect: last dim (3, 2), first dim (2, 1).
  const int64_t pr[4] = {3, 2, 2, 1};
  ag_tensor* r = nullptr;
  ASSERT_AG(ag_op_pad(&r, x, pr, 4, AG_PAD_REFLECT, 0.0));
  own(r);
  EXPECT_EQ(shape(r), (Shape{6, 9}));
  auto reflect = [](int64_t i, int64_t n) { return i < 0 ? -i : i >= n ? 2 * (n - 1) - i : i; };
  want.clear();
  for (int64_t i = -2; i < 4; ++i)
    for (int64_t j = -3; j < 6; ++j) want.push_back(static_cast<double>(reflect(i, 3) * 4 + reflect(j, 4)));
  EXPECT_EQ(values(r), want);
  // Empty input, constant padding of the non-empty dim.
  ag_tensor* e = iota({0, 2});
  const int64_t p1[2] = {1, 1};
  ag_tensor* pe = nullptr;
  ASSERT_AG(ag_op_pad(&pe, e, p1, 2, AG_PAD_CONSTANT, 1.0));
  own(pe);
  EXPECT_EQ(shape(pe), (Shape{0, 4}));
}

TEST_F(ShapeOps, CopyOpErrors) {
  ag_tensor *a = iota({2, 3}), *b = iota({3, 3}), *v = iota({3});
  ag_tensor* f = own([&] { ag_tensor* t = nullptr; ag_tensor_zeros(&t, ctx_, AG_F32, Shape{2, 3}.data(), 2); return t; }());
  ag_tensor* s0 = own([&] { ag_tensor* t = nullptr; ag_tensor_scalar(&t, ctx_, AG_F64, 1.0); return t; }());
  ag_tensor* y = nullptr;
  const ag_tensor* ab[2] = {a, b};
  const ag_tensor* af[2] = {a, f};
  const ag_tensor* av[2] = {a, v};
  const ag_tensor* an[2] = {a, nullptr};
  const ag_tensor* ss[2] = {s0, s0};
  EXPECT_AG_ERROR_CONTAINS(
      ag_op_concat(&y, ab, 2, 1), AG_ERR_SHAPE,
      "[ag_op_concat] xs[1] has shape (3,3) but xs[0] has (2,3): sizes must match except in dim 1");
  EXPECT_AG_ERROR_CONTAINS(ag_op_concat(&y, av, 2, 0), AG_ERR_SHAPE,
                           "[ag_op_concat] xs[1] has shape (3) but xs[0] has (2,3)");
  EXPECT_AG_ERROR_CONTAINS(ag_op_concat(&y, af, 2, 0), AG_ERR_DTYPE,
                           "[ag_op_concat] xs[1] has dtype f32 but xs[0] has f64");
  EXPECT_AG_ERROR_CONTAINS(ag_op_concat(&y, an, 2, 0), AG_ERR_INVALID_ARGUMENT, "[ag_op_concat] input xs[1] is NULL (missing: did an earlier call fail?)");
  EXPECT_AG_ERROR_CONTAINS(ag_op_concat(&y, ab, 0, 0), AG_ERR_INVALID_ARGUMENT,
                           "[ag_op_concat] expects at least one tensor, got n = 0");
  EXPECT_AG_ERROR_CONTAINS(ag_op_concat(&y, ss, 2, 0), AG_ERR_SHAPE, "[ag_op_concat] xs[0] is 0-dim");
  EXPECT_AG_ERROR_CONTAINS(ag_op_concat(&y, ab, 2, 2), AG_ERR_INVALID_ARGUMENT, "[ag_op_concat] dim 2 is out of range");
  EXPECT_AG_ERROR_CONTAINS(ag_op_stack(&y, ab, 2, 0), AG_ERR_SHAPE,
                           "[ag_op_stack] xs[1] has shape (3,3) but xs[0] has (2,3)");
  EXPECT_AG_ERROR_CONTAINS(ag_op_stack(&y, ab, 2, 3), AG_ERR_INVALID_ARGUMENT,
                           "[ag_op_stack] dim 3 is out of range for a tensor of 3 dims");
  const int64_t dup[2] = {1, -1}, r1[1] = {2}, rneg[2] = {1, -2};
  EXPECT_AG_ERROR_CONTAINS(ag_op_flip(&y, a, dup, 2), AG_ERR_INVALID_ARGUMENT,
                           "[ag_op_flip] dim 1 appears more than once");
  EXPECT_AG_ERROR_CONTAINS(ag_op_repeat(&y, a, r1, 1), AG_ERR_INVALID_ARGUMENT,
                           "[ag_op_repeat] repeats has 1 entries but the tensor has 2 dims");
  EXPECT_AG_ERROR_CONTAINS(ag_op_repeat(&y, a, rneg, 2), AG_ERR_INVALID_ARGUMENT,
                           "[ag_op_repeat] repeat -2 of dim 1 is negative");
  const int64_t odd[3] = {1, 1, 1}, big[2] = {3, 0}, crop[2] = {-2, -2}, six[6] = {0, 0, 0, 0, 0, 0}, negr[2] = {-1, 0};
  EXPECT_AG_ERROR_CONTAINS(ag_op_pad(&y, a, odd, 3, AG_PAD_CONSTANT, 0), AG_ERR_INVALID_ARGUMENT,
                           "[ag_op_pad] pads has an odd count 3");
  EXPECT_AG_ERROR_CONTAINS(ag_op_pad(&y, a, six, 6, AG_PAD_CONSTANT, 0), AG_ERR_INVALID_ARGUMENT,
                           "[ag_op_pad] pads has 6 entries (3 dims) but the tensor has 2 dims");
  EXPECT_AG_ERROR_CONTAINS(ag_op_pad(&y, a, big, 2, 7, 0), AG_ERR_INVALID_ARGUMENT,
                           "[ag_op_pad] mode 7 is not AG_PAD_CONSTANT (0) or AG_PAD_REFLECT (1)");
  EXPECT_AG_ERROR_CONTAINS(ag_op_pad(&y, a, big, 2, AG_PAD_REFLECT, 0), AG_ERR_SHAPE,
                           "[ag_op_pad] reflect padding 3 of dim 1 must be less than its size 3");
  EXPECT_AG_ERROR_CONTAINS(ag_op_pad(&y, a, negr, 2, AG_PAD_REFLECT, 0), AG_ERR_INVALID_ARGUMENT,
                           "[ag_op_pad] reflect padding -1 of dim 1 is negative");
  EXPECT_AG_ERROR_CONTAINS(ag_op_pad(&y, a, crop, 2, AG_PAD_CONSTANT, 0), AG_ERR_SHAPE,
                           "[ag_op_pad] padding (-2,-2) makes dim 1 of size 3 negative (-1)");
  EXPECT_AG_ERROR_CONTAINS(ag_op_pad(&y, a, nullptr, 2, AG_PAD_CONSTANT, 0), AG_ERR_INVALID_ARGUMENT,
                           "[ag_op_pad] pads is NULL but npads is 2");
  EXPECT_EQ(y, nullptr);
}

// repeat_interleave with a tensor of repeats on an empty x with a huge dim
// (no loop over it), and totals that overflow.
TEST_F(ShapeOps, RepeatInterleaveTensorHugeDims) {
  const Shape huge{0, INT64_MAX};
  ag_tensor* x = nullptr;
  ASSERT_AG(ag_tensor_zeros(&x, ctx_, AG_F64, huge.data(), 2));
  own(x);
  ag_tensor* y = nullptr;
  ASSERT_AG(ag_op_repeat_interleave_tensor(&y, x, i64({1}, {0}), 1));
  own(y);
  EXPECT_EQ(shape(y), (Shape{0, 0}));
  ag_tensor* sentinel = reinterpret_cast<ag_tensor*>(0x1);
  y = sentinel;
  expect_error_untouched(ag_op_repeat_interleave_tensor(&y, x, i64({1}, {1}), 1), y, sentinel, AG_ERR_OUT_OF_MEMORY,
                         "[ag_op_repeat_interleave_tensor] the result is too large");
  expect_error_untouched(ag_op_repeat_interleave_tensor(&y, iota({2}), i64({2}, {1, INT64_MAX}), 0), y, sentinel,
                         AG_ERR_OUT_OF_MEMORY, "[ag_op_repeat_interleave_tensor] the result is too large");
}

// roll and diff along an empty tensor's dim near INT64_MAX, and diff by an n
// far past the dim's size: no arithmetic past int64, no loop of n steps.
TEST_F(ShapeOps, RollAndDiffOfHugeDims) {
  const Shape huge{0, INT64_MAX};
  ag_tensor* x = nullptr;
  ASSERT_AG(ag_tensor_zeros(&x, ctx_, AG_F64, huge.data(), 2));
  own(x);
  const int64_t shift[1] = {5}, dim[1] = {1};
  ag_tensor* y = nullptr;
  ASSERT_AG(ag_op_roll(&y, x, shift, 1, dim, 1));
  own(y);
  EXPECT_EQ(shape(y), huge);
  ASSERT_AG(ag_op_diff(&y, x, INT64_MAX - 1, 1, nullptr, nullptr));
  own(y);
  EXPECT_EQ(shape(y), (Shape{0, 1}));
  ASSERT_AG(ag_op_diff(&y, x, INT64_MAX, 1, nullptr, nullptr));
  own(y);
  EXPECT_EQ(shape(y), (Shape{0, 0}));
  ASSERT_AG(ag_op_diff(&y, iota({2, 3}), int64_t{1} << 40, 1, nullptr, nullptr));
  own(y);
  EXPECT_EQ(shape(y), (Shape{2, 0}));
  ASSERT_AG(ag_op_diff(&y, iota({2, 3}), 1, 1, nullptr, nullptr));
  own(y);
  EXPECT_EQ(values(y), (std::vector<double>{1, 1, 1, 1}));
}

// diff subtracts, which takes floating tensors only: an i64 x is refused
// whatever n is, also where the result would be empty or a copy.
TEST_F(ShapeOps, DiffOfIntegersIsRefused) {
  ag_tensor* sentinel = i64({1}, {7});
  for (const int64_t n : {int64_t{0}, int64_t{1}, int64_t{5}}) {
    ag_tensor* y = sentinel;
    expect_error_untouched(ag_op_diff(&y, i64({3}, {1, 4, 9}), n, 0, nullptr, nullptr), y, sentinel, AG_ERR_DTYPE,
                           "[ag_op_diff] expects a floating tensor (f32 or f64), got i64");
  }
}

// A pad of INT64_MIN (kept to a size >= 0 by the other side's pad) has no
// negation for the crop and the gradient: refused.
TEST_F(ShapeOps, PadOfInt64Min) {
  const int64_t pads[2] = {INT64_MIN, INT64_MAX};
  ag_tensor* sentinel = reinterpret_cast<ag_tensor*>(0x1);
  ag_tensor* y = sentinel;
  expect_error_untouched(ag_op_pad(&y, iota({5}), pads, 2, AG_PAD_CONSTANT, 0.0), y, sentinel,
                         AG_ERR_INVALID_ARGUMENT,
                         "[ag_op_pad] padding -9223372036854775808 of dim 0 has no negation in int64");
  const int64_t far[2] = {-INT64_MAX, INT64_MAX};  // all of x cropped, then padded
  y = nullptr;
  ASSERT_AG(ag_op_pad(&y, iota({5}), far, 2, AG_PAD_CONSTANT, 7.0));
  own(y);
  EXPECT_EQ(values(y), std::vector<double>(5, 7.0));
}

// repeat_interleave with a tensor of repeats: the index is filled after its
// allocation (per element and with one count for all).
TEST_F(ShapeOps, RepeatInterleaveTensorValues) {
  ag_tensor* y = nullptr;
  ASSERT_AG(ag_op_repeat_interleave_tensor(&y, iota({3}), i64({3}, {2, 0, 1}), 0));
  own(y);
  EXPECT_EQ(values(y), (std::vector<double>{0, 0, 2}));
  ASSERT_AG(ag_op_repeat_interleave_tensor(&y, iota({3}), i64({}, {2}), 0));
  own(y);
  EXPECT_EQ(values(y), (std::vector<double>{0, 0, 1, 1, 2, 2}));
  ag_tensor* sentinel = reinterpret_cast<ag_tensor*>(0x1);
  y = sentinel;
  expect_error_untouched(ag_op_repeat_interleave_tensor(&y, iota({3}), i64({}, {-1}), 0), y, sentinel,
                         AG_ERR_INVALID_ARGUMENT, "[ag_op_repeat_interleave_tensor] repeats[0] = -1 is negative");
  expect_error_untouched(ag_op_repeat_interleave_tensor(&y, iota({3}), i64({3}, {1, -2, 1}), 0), y, sentinel,
                         AG_ERR_INVALID_ARGUMENT, "[ag_op_repeat_interleave_tensor] repeats[1] = -2 is negative");
}

// Chunking or unbinding an empty tensor's dim near INT64_MAX: pieces counted
// without overflow, and no view made before the caller's room is checked.
TEST_F(ShapeOps, ChunkAndUnbindOfAHugeEmptyDim) {
  const Shape huge{INT64_MAX, 0};
  ag_tensor* x = nullptr;
  ASSERT_AG(ag_tensor_zeros(&x, ctx_, AG_F64, huge.data(), 2));
  own(x);
  int32_t n = 0;
  ASSERT_AG(ag_op_chunk(nullptr, 0, &n, x, 3, 0));
  EXPECT_EQ(n, 3);
  ag_tensor* outs[3] = {nullptr, nullptr, nullptr};
  ASSERT_AG(ag_op_chunk(outs, 3, &n, x, 3, 0));
  const int64_t piece = INT64_MAX / 3 + 1;  // ceil(INT64_MAX / 3)
  for (int i = 0; i < 3; ++i) {
    own(outs[i]);
    EXPECT_EQ(shape(outs[i]), (Shape{i < 2 ? piece : INT64_MAX - 2 * piece, 0}));
  }
  EXPECT_AG_ERROR_CONTAINS(ag_op_unbind(outs, 3, x, 0), AG_ERR_BUFFER_TOO_SMALL,
                           "[ag_op_unbind] capacity 3 is less than the 9223372036854775807 outputs");
}

}  // namespace
