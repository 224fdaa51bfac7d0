// Indexing ops through the C API: values against loops written here,
// strided inputs, accumulation of repeated indices (bitwise the same at 1
// and 2 threads), gradients of embedding, empty tensors, and every error
// status with its message.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "api_util.h"

namespace {

using namespace apitest;

class IndexOps : public ApiTest {};

TEST_F(IndexOps, IndexSelectValues) {
  ag_tensor* x = iota({3, 4});
  ag_tensor* idx = i64({5}, {3, 0, 0, 2, 1});
  ag_tensor *y = nullptr, *t = nullptr, *yt = nullptr;
  ASSERT_AG(ag_op_index_select(&y, x, -1, idx));
  own(y);
  EXPECT_EQ(shape(y), (Shape{3, 5}));
  std::vector<double> want;
  const int64_t cols[5] = {3, 0, 0, 2, 1};
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t c : cols) want.push_back(static_cast<double>(i * 4 + c));
  EXPECT_EQ(values(y), want);
  // A transposed x: (4,3), rows picked by idx.
  ASSERT_AG(ag_op_transpose(&t, x, 0, 1));
  own(t);
  ASSERT_AG(ag_op_index_select(&yt, t, 0, idx));
  own(yt);
  want.clear();
  for (int64_t r : cols)
    for (int64_t j = 0; j < 3; ++j) want.push_back(static_cast<double>(j * 4 + r));
  EXPECT_EQ(values(yt), want);
}

TEST_F(IndexOps, GatherScatterAddValues) {
  ag_tensor* x = iota({3, 4});
  ag_tensor* idx = i64({2, 3}, {2, 0, 1, 0, 0, 2});
  ag_tensor *g = nullptr, *s = nullptr;
  ASSERT_AG(ag_op_gather(&g, x, 0, idx));
  own(g);
  EXPECT_EQ(shape(g), (Shape{2, 3}));
  const int64_t iv[6] = {2, 0, 1, 0, 0, 2};
  std::vector<double> want;
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j) want.push_back(static_cast<double>(iv[i * 3 + j] * 4 + j));
  EXPECT_EQ(values(g), want);
  // scatter_add with src (2,4) larger than index: only src[:, :3] is used.
  ag_tensor* src = f64({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  ASSERT_AG(ag_op_scatter_add(&s, x, 0, idx, src));
  own(s);
  want = values(x);
  const double sv[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j) want[static_cast<size_t>(iv[i * 3 + j] * 4 + j)] += sv[i * 4 + j];
  EXPECT_EQ(values(s), want);
}

TEST_F(IndexOps, IndexAddAccumulatesRepeats) {
  ag_tensor* x = f64({3, 2}, {0, 0, 0, 0, 0, 0});
  ag_tensor* idx = i64({4}, {1, 1, 0, 1});
  ag_tensor* src = f64({4, 2}, {1, 10, 2, 20, 3, 30, 4, 40});
  ag_tensor* y = nullptr;
  ASSERT_AG(ag_op_index_add(&y, x, 0, idx, src));
  own(y);
  EXPECT_EQ(values(y), (std::vector<double>{3, 30, 7, 70, 0, 0}));
}

// Many repeated targets, values of very different magnitudes: the sum
// depends on the order, which must not depend on the thread count.
TEST_F(IndexOps, ScatterAddBitwiseAcrossThreads) {
  const int64_t n = 300000;
  std::vector<double> sv(static_cast<size_t>(n));
  std::vector<int64_t> iv(static_cast<size_t>(n));
  uint64_t r = 12345;
  for (int64_t i = 0; i < n; ++i) {
    r = r * 6364136223846793005ULL + 1442695040888963407ULL;
    sv[static_cast<size_t>(i)] = static_cast<double>(r >> 11) * ((i % 7) ? 1e-8 : 1e8) / 9007199254740992.0;
    iv[static_cast<size_t>(i)] = static_cast<int64_t>((r >> 33) % 5);
  }
  std::vector<std::vector<double>> results;
  for (int32_t threads : {1, 2}) {
    ag_context* c = make_ctx(threads);
    ag_tensor* x = f64({5}, {0, 0, 0, 0, 0}, c);
    ag_tensor* idx = i64({n}, iv, c);
    ag_tensor* src = f64({n}, sv, c);
    ag_tensor *y = nullptr, *e = nullptr;
    ASSERT_AG(ag_op_scatter_add(&y, x, 0, idx, src));
    own(y);
    results.push_back(values(y));
    // embedding's gradient accumulates the same way.
    ag_tensor* w = f64({5, 1}, {1, 2, 3, 4, 5}, c);
    ASSERT_AG(ag_tensor_requires_grad(w, 1));
    ASSERT_AG(ag_op_embedding(&e, w, idx));
    own(e);
    ag_tensor* seed = f64({n, 1}, sv, c);
    ASSERT_AG(ag_backward(e, seed, nullptr));
    ag_tensor* gw = nullptr;
    ASSERT_AG(ag_tensor_grad(&gw, w));
    own(gw);
    results.push_back(values(gw));
  }
  EXPECT_EQ(0, std::memcmp(results[0].data(), results[2].data(), 5 * sizeof(double)));
  EXPECT_EQ(0, std::memcmp(results[1].data(), results[3].data(), 5 * sizeof(double)));
  // The fixed order is index order: a plain loop gives the same bits.
  std::vector<double> want(5, 0.0);
  for (int64_t i = 0; i < n; ++i) want[static_cast<size_t>(iv[static_cast<size_t>(i)])] += sv[static_cast<size_t>(i)];
  EXPECT_EQ(results[0], want);
  EXPECT_EQ(results[1], want);
}

// Above the parallel threshold the outputs are cut into row chunks: values
// against plain loops, at 1 and 2 threads.
TEST_F(IndexOps, LargeInputsInRowChunks) {
  const int64_t R = 300, C = 401;
  std::vector<double> xv(static_cast<size_t>(R * C));
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<double>(i) * 0.5;
  std::vector<int64_t> rows(static_cast<size_t>(R)), cols(static_cast<size_t>(R * C));
  std::vector<uint8_t> mv(static_cast<size_t>(C));
  for (int64_t i = 0; i < R; ++i) rows[static_cast<size_t>(i)] = (i * 7 + 3) % R;
  for (int64_t i = 0; i < R * C; ++i) cols[static_cast<size_t>(i)] = (i * 13 + 5) % C;
  for (int64_t j = 0; j < C; ++j) mv[static_cast<size_t>(j)] = j % 3 == 0;
  for (int32_t threads : {1, 2}) {
    ag_context* c = make_ctx(threads);
    ag_tensor* x = f64({R, C}, xv, c);
    ag_tensor *t = nullptr, *sel0 = nullptr, *sel1 = nullptr, *gat = nullptr, *mf = nullptr;
    ASSERT_AG(ag_op_transpose(&t, x, 0, 1));  // (C, R), strided
    own(t);
    ASSERT_AG(ag_op_index_select(&sel0, x, 0, i64({R}, rows, c)));
    ASSERT_AG(ag_op_index_select(&sel1, t, 1, i64({R}, rows, c)));
    ASSERT_AG(ag_op_gather(&gat, x, 1, i64({R, C}, cols, c)));
    ag_tensor* m = nullptr;
    const Shape ms{C};
    ASSERT_AG(ag_tensor_create(&m, c, AG_BOOL, ms.data(), 1, mv.data()));
    own(m);
    ASSERT_AG(ag_op_masked_fill(&mf, x, m, -1.0));
    own(sel0), own(sel1), own(gat), own(mf);
    const std::vector<double> v0 = values(sel0), v1 = values(sel1), vg = values(gat), vm = values(mf);
    for (int64_t i = 0; i < R; ++i) {
      for (int64_t j = 0; j < C; ++j) {
        const size_t p = static_cast<size_t>(i * C + j);
        ASSERT_EQ(v0[p], xv[static_cast<size_t>(rows[static_cast<size_t>(i)] * C + j)]) << threads;
        ASSERT_EQ(vg[p], xv[static_cast<size_t>(i * C + cols[p])]) << threads;
        ASSERT_EQ(vm[p], mv[static_cast<size_t>(j)] ? -1.0 : xv[p]) << threads;
        // sel1 (C, R): t[j, rows[i]] = x[rows[i], j]
        ASSERT_EQ(v1[static_cast<size_t>(j * R + i)], xv[static_cast<size_t>(rows[static_cast<size_t>(i)] * C + j)]);
      }
    }
  }
}

TEST_F(IndexOps, MaskedFillValues) {
  ag_tensor* x = iota({2, 3});
  ag_tensor* m = mask({3}, {1, 0, 1});
  ag_tensor* y = nullptr;
  ASSERT_AG(ag_op_masked_fill(&y, x, m, -2.5));
  own(y);
  EXPECT_EQ(values(y), (std::vector<double>{-2.5, 1, -2.5, -2.5, 4, -2.5}));
  ag_tensor* m2 = mask({2, 1, 3}, {0, 0, 0, 1, 1, 1});
  ag_tensor* xb = iota({3});
  ag_tensor* z = nullptr;
  ASSERT_AG(ag_op_masked_fill(&z, xb, m2, 9.0));
  own(z);
  EXPECT_EQ(shape(z), (Shape{2, 1, 3}));
  EXPECT_EQ(values(z), (std::vector<double>{0, 1, 2, 9, 9, 9}));
}

TEST_F(IndexOps, EmbeddingValuesAndGradient) {
  ag_tensor* w = iota({4, 3});
  ASSERT_AG(ag_tensor_requires_grad(w, 1));
  ag_tensor* idx = i64({2, 2}, {3, 1, 3, 3});
  ag_tensor *y = nullptr, *sum = nullptr, *g = nullptr;
  ASSERT_AG(ag_op_embedding(&y, w, idx));
  own(y);
  EXPECT_EQ(shape(y), (Shape{2, 2, 3}));
  EXPECT_EQ(values(y), (std::vector<double>{9, 10, 11, 3, 4, 5, 9, 10, 11, 9, 10, 11}));
  ASSERT_AG(ag_op_sum(&sum, y));
  own(sum);
  ASSERT_AG(ag_backward(sum, nullptr, nullptr));
  ASSERT_AG(ag_tensor_grad(&g, w));
  own(g);
  EXPECT_EQ(values(g), (std::vector<double>{0, 0, 0, 1, 1, 1, 0, 0, 0, 3, 3, 3}));
}

TEST_F(IndexOps, OneHotValues) {
  ag_tensor* idx = i64({2, 2}, {0, 2, 1, 2});
  ag_tensor *y = nullptr, *z = nullptr;
  ASSERT_AG(ag_op_one_hot(&y, idx, -1));
  own(y);
  EXPECT_EQ(ag_tensor_dtype(y), AG_I64);
  EXPECT_EQ(shape(y), (Shape{2, 2, 3}));
  EXPECT_EQ(ivalues(y), (std::vector<int64_t>{1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1}));
  ASSERT_AG(ag_op_one_hot(&z, idx, 4));
  own(z);
  EXPECT_EQ(shape(z), (Shape{2, 2, 4}));
}

TEST_F(IndexOps, EmptyTensors) {
  ag_tensor* x = iota({3, 2});
  ag_tensor* none = i64({0}, {});
  ag_tensor *a = nullptr, *b = nullptr, *c = nullptr, *d = nullptr;
  ASSERT_AG(ag_op_index_select(&a, x, 0, none));
  own(a);
  EXPECT_EQ(shape(a), (Shape{0, 2}));
  ASSERT_AG(ag_op_embedding(&b, x, none));
  own(b);
  EXPECT_EQ(shape(b), (Shape{0, 2}));
  ASSERT_AG(ag_op_one_hot(&c, none, 3));
  own(c);
  EXPECT_EQ(shape(c), (Shape{0, 3}));
  ag_tensor* idx0 = i64({0, 2}, {});
  ASSERT_AG(ag_op_gather(&d, x, 0, idx0));
  own(d);
  EXPECT_EQ(shape(d), (Shape{0, 2}));
}

TEST_F(IndexOps, Errors) {
  ag_tensor* x = iota({3, 4});
  ag_tensor* y = nullptr;
  ag_tensor* bad = i64({2}, {1, 5});
  ag_tensor* neg = i64({2}, {-1, 0});
  ag_tensor* idx2 = i64({2, 2}, {0, 1, 3, 1});
  ag_tensor* fidx = f64({2}, {0, 1});
  EXPECT_AG_ERROR_CONTAINS(
      ag_op_index_select(&y, x, 1, bad), AG_ERR_INVALID_ARGUMENT,
      "[ag_op_index_select] index 5 at position (1) is out of range for dim 1 of size 4 (valid: 0..3)");
  EXPECT_AG_ERROR_CONTAINS(ag_op_index_select(&y, x, 0, neg), AG_ERR_INVALID_ARGUMENT,
                           "[ag_op_index_select] index -1 at position (0)");
  EXPECT_AG_ERROR_CONTAINS(ag_op_index_select(&y, x, 0, idx2), AG_ERR_SHAPE,
                           "[ag_op_index_select] index must be 1-D, got shape (2,2)");
  EXPECT_AG_ERROR_CONTAINS(ag_op_index_select(&y, x, 0, fidx), AG_ERR_DTYPE,
                           "[ag_op_index_select] index must be i64, got f64");
  EXPECT_AG_ERROR_CONTAINS(ag_op_index_select(&y, x, 2, bad), AG_ERR_INVALID_ARGUMENT,
                           "[ag_op_index_select] dim 2 is out of range");
  EXPECT_AG_ERROR_CONTAINS(ag_op_index_select(&y, x, 0, nullptr), AG_ERR_INVALID_ARGUMENT,
                           "[ag_op_index_select] input index is NULL (missing: did an earlier call fail?)");
  EXPECT_AG_ERROR_CONTAINS(
      ag_op_gather(&y, x, 0, idx2), AG_ERR_INVALID_ARGUMENT,
      "[ag_op_gather] index 3 at position (1,0) is out of range for dim 0 of size 3 (valid: 0..2)");
  ag_tensor* wide = i64({1, 5}, {0, 0, 0, 0, 0});
  EXPECT_AG_ERROR_CONTAINS(ag_op_gather(&y, x, 0, wide), AG_ERR_SHAPE,
                           "[ag_op_gather] index of shape (1,5) does not fit x of shape (3,4)");
  ag_tensor* src = f64({1, 2}, {1, 2});
  ag_tensor* i12 = i64({1, 3}, {0, 0, 0});
  EXPECT_AG_ERROR_CONTAINS(ag_op_scatter_add(&y, x, 0, i12, src), AG_ERR_SHAPE,
                           "[ag_op_scatter_add] index of shape (1,3) does not fit src of shape (1,2)");
  ag_tensor* isrc = i64({1, 3}, {1, 1, 1});
  EXPECT_AG_ERROR_CONTAINS(ag_op_scatter_add(&y, x, 0, i12, isrc), AG_ERR_DTYPE,
                           "[ag_op_scatter_add] src has dtype i64 but x has f64");
  ag_tensor* src3 = f64({2, 3}, {1, 2, 3, 4, 5, 6});
  ag_tensor* i2 = i64({2}, {0, 1});
  EXPECT_AG_ERROR_CONTAINS(ag_op_index_add(&y, x, 0, i2, src3), AG_ERR_SHAPE,
                           "[ag_op_index_add] src has shape (2,3) but x (3,4) and index (2) need (2,4)");
  ag_tensor* fm = f64({4}, {0, 1, 0, 1});
  ag_tensor* m5 = mask({5}, {0, 1, 0, 1, 0});
  EXPECT_AG_ERROR_CONTAINS(ag_op_masked_fill(&y, x, fm, 0), AG_ERR_DTYPE,
                           "[ag_op_masked_fill] mask must be bool, got f64");
  EXPECT_AG_ERROR_CONTAINS(ag_op_masked_fill(&y, x, m5, 0), AG_ERR_SHAPE,
                           "[ag_op_masked_fill] cannot broadcast shapes (3,4) and (5)");
  EXPECT_AG_ERROR_CONTAINS(
      ag_op_embedding(&y, x, bad), AG_ERR_INVALID_ARGUMENT,
      "[ag_op_embedding] index 5 at position (1) is out of range for weight's 3 rows (valid: 0..2)");
  ag_tensor* v = iota({3});
  EXPECT_AG_ERROR_CONTAINS(ag_op_embedding(&y, v, i2), AG_ERR_SHAPE,
                           "[ag_op_embedding] weight must be 2-D (V, D), got shape (3)");
  EXPECT_AG_ERROR_CONTAINS(ag_op_one_hot(&y, neg, 3), AG_ERR_INVALID_ARGUMENT,
                           "[ag_op_one_hot] index -1 at position (0) is negative");
  EXPECT_AG_ERROR_CONTAINS(ag_op_one_hot(&y, bad, 3), AG_ERR_INVALID_ARGUMENT,
                           "[ag_op_one_hot] index 5 at position (1) is out of range for 3 classes (valid: 0..2)");
  EXPECT_AG_ERROR_CONTAINS(ag_op_one_hot(&y, i64({0}, {}), -1), AG_ERR_INVALID_ARGUMENT,
                           "[ag_op_one_hot] cannot infer num_classes from an empty tensor");
  EXPECT_AG_ERROR_CONTAINS(ag_op_one_hot(&y, x, 3), AG_ERR_DTYPE, "[ag_op_one_hot] indices must be i64, got f64");
  ag_context* other = make_ctx(1);
  ag_tensor* oi = i64({1}, {0}, other);
  EXPECT_AG_ERROR_CONTAINS(ag_op_index_select(&y, x, 0, oi), AG_ERR_CONTEXT,
                           "[ag_op_index_select] index belongs to another context");
  EXPECT_EQ(y, nullptr);
}

// num_classes inferred from the index INT64_MAX would be INT64_MAX + 1.
TEST_F(IndexOps, OneHotInferredClassesOverflow) {
  ag_tensor* sentinel = reinterpret_cast<ag_tensor*>(0x1);
  ag_tensor* y = sentinel;
  expect_error_untouched(ag_op_one_hot(&y, i64({1}, {INT64_MAX}), -1), y, sentinel, AG_ERR_OUT_OF_MEMORY,
                         "[ag_op_one_hot] the result is too large");
}

// index_put on an x whose indexed sizes multiply past int64 (x is empty),
// and an indexed shape of more than AG_MAX_DIMS dims: refused before the
// linear indices or the shape are computed.
TEST_F(IndexOps, IndexPutSizesAndDimsAtTheLimits) {
  constexpr int64_t kTera = int64_t{1} << 40;
  const Shape huge{kTera, kTera, 0};
  ag_tensor* x = nullptr;
  ASSERT_AG(ag_tensor_zeros(&x, ctx_, AG_F64, huge.data(), 3));
  own(x);
  ag_tensor* value = f64({}, {1.0});
  const ag_tensor* both[2] = {i64({1}, {1}), i64({1}, {1})};
  ag_tensor* sentinel = reinterpret_cast<ag_tensor*>(0x1);
  ag_tensor* y = sentinel;
  expect_error_untouched(
      ag_op_index_put(&y, x, both, 2, value, 0), y, sentinel, AG_ERR_INVALID_ARGUMENT,
      "[ag_op_index_put] the indexed dims' size overflows int64 (1099511627776 * 1099511627776 + 0)");
  const Shape ones(16, 1);
  ag_tensor *x16 = nullptr, *i16 = nullptr;
  ASSERT_AG(ag_tensor_zeros(&x16, ctx_, AG_F64, ones.data(), 16));
  ASSERT_AG(ag_tensor_zeros(&i16, ctx_, AG_I64, ones.data(), 16));
  own(x16);
  own(i16);
  const ag_tensor* one[1] = {i16};
  expect_error_untouched(ag_op_index_put(&y, x16, one, 1, value, 0), y, sentinel, AG_ERR_UNSUPPORTED,
                         "[ag_op_index_put] the indexed result would have more than 16 dims");
}

// embedding_bag with 2-D indices: rows of no indices are not listed one by
// one (any number of empty bags is instant), and include_last_offset needs a
// row to read as the end.
TEST_F(IndexOps, EmbeddingBagRowsOfNoIndices) {
  constexpr int64_t kTera = int64_t{1} << 40;
  const Shape many{kTera, 0}, none{0, 3}, narrow_w{5, 0};
  ag_tensor *idx = nullptr, *idx0 = nullptr, *w0 = nullptr;
  ASSERT_AG(ag_tensor_zeros(&idx, ctx_, AG_I64, many.data(), 2));
  ASSERT_AG(ag_tensor_zeros(&idx0, ctx_, AG_I64, none.data(), 2));
  ASSERT_AG(ag_tensor_zeros(&w0, ctx_, AG_F64, narrow_w.data(), 2));
  own(idx);
  own(idx0);
  own(w0);
  for (int32_t mode : {AG_EMBEDDING_BAG_SUM, AG_EMBEDDING_BAG_MEAN, AG_EMBEDDING_BAG_MAX}) {
    ag_tensor* y = nullptr;
    ASSERT_AG(ag_op_embedding_bag(&y, w0, idx, nullptr, mode, nullptr, 0, -1));
    own(y);
    EXPECT_EQ(shape(y), (Shape{kTera, 0}));
  }
  ag_tensor* w = iota({5, 2});
  ag_tensor *y = nullptr, *idx3 = nullptr;
  const Shape three{3, 0};
  ASSERT_AG(ag_tensor_zeros(&idx3, ctx_, AG_I64, three.data(), 2));
  own(idx3);
  ASSERT_AG(ag_op_embedding_bag(&y, w, idx3, nullptr, AG_EMBEDDING_BAG_MEAN, nullptr, 0, -1));
  own(y);
  EXPECT_EQ(values(y), std::vector<double>(6, 0.0));
  ASSERT_AG(ag_op_embedding_bag(&y, w, i64({3, 1}, {4, 1, 4}), nullptr, AG_EMBEDDING_BAG_MEAN, nullptr, 1, -1));
  own(y);
  EXPECT_EQ(values(y), (std::vector<double>{8, 9, 2, 3}));
  ag_tensor* sentinel = reinterpret_cast<ag_tensor*>(0x1);
  y = sentinel;
  expect_error_untouched(ag_op_embedding_bag(&y, w, idx0, nullptr, AG_EMBEDDING_BAG_SUM, nullptr, 1, -1), y, sentinel,
                         AG_ERR_SHAPE,
                         "[ag_op_embedding_bag] indices must have at least one row with include_last_offset (its start "
                         "is the end of the last bag)");
}

}  // namespace
