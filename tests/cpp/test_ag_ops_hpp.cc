// Tests of the op wrappers of ag/ag_ops.hpp with their own signatures: each
// result equals the C function's result for the same arguments (the wrapper
// passes them through correctly, defaults included), multi-output ops,
// in-place members, Scope, and errors carrying the C message.
#include "ag/ag.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace {

// The result of a C op, asserted to succeed.
template <typename F, typename... Args> ag::Tensor c_op(F f, Args... args) {
  ag_tensor *out = nullptr;
  const ag_status st = f(&out, args...);
  EXPECT_EQ(st, AG_OK) << ag_last_error_message();
  return ag::Tensor::adopt(out);
}

// The elements as doubles, whatever the (f32, f64, i64) dtype.
std::vector<double> values(const ag::Tensor &t) {
  std::vector<double> v;
  if (t.dtype() == AG_F32) {
    for (float x : t.to_vector<float>()) v.push_back(x);
  } else if (t.dtype() == AG_F64) {
    v = t.to_vector<double>();
  } else {
    for (int64_t x : t.to_vector<int64_t>()) v.push_back(static_cast<double>(x));
  }
  return v;
}

void expect_same(const ag::Tensor &got, const ag::Tensor &want) {
  ASSERT_TRUE(got);
  ASSERT_TRUE(want);
  EXPECT_EQ(got.dtype(), want.dtype());
  EXPECT_EQ(got.shape(), want.shape());
  const std::vector<double> g = values(got), w = values(want);
  ASSERT_EQ(g.size(), w.size());
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(w[i])) {
      EXPECT_TRUE(std::isnan(g[i])) << "at " << i;
    } else {
      EXPECT_EQ(g[i], w[i]) << "at " << i;
    }
  }
}

// Runs f, expecting an ag::Error with this status and the C message, after
// the name of the C++ wrapper ("ag::matmul: [ag_op_matmul] ...").
template <typename F> void expect_error(F f, ag_status status, const std::string &message) {
  try {
    f();
    ADD_FAILURE() << "no exception, expected: " << message;
  } catch (const ag::Error &e) {
    EXPECT_EQ(e.status(), status);
    const std::string what = e.what();
    const std::string::size_type sep = what.find(": ");
    ASSERT_NE(sep, std::string::npos) << what;
    EXPECT_EQ(what.compare(0, 4, "ag::"), 0) << what;
    EXPECT_EQ(what.substr(sep + 2), message);
  }
}

// The status and message of a failing C call.
template <typename F, typename... Args> std::string c_error(ag_status want, F f, Args... args) {
  ag_tensor *out = nullptr;
  EXPECT_EQ(f(&out, args...), want);
  EXPECT_EQ(out, nullptr);
  return ag_last_error_message();
}

ag::Tensor seq(const ag::Context &ctx, const std::vector<int64_t> &shape, double scale = 0.25) {
  return ag::reshape(ag::arange(ctx, 0, static_cast<double>(ag::detail::numel_of(shape)), 1, AG_F64) * scale - 1.0,
                     shape);
}

TEST(AgOpsHpp, LinalgMatchesTheCApi) {
  ag::Context ctx(1);
  ag::Tensor a = seq(ctx, {2, 3}), b = seq(ctx, {3, 4}, 0.5), bias = seq(ctx, {4});
  expect_same(ag::matmul(a, b), c_op(ag_op_matmul, a.get(), b.get()));
  ag::Tensor w = ag::transpose(b, 0, 1);  // (4, 3): a non-contiguous weight
  expect_same(ag::linear(a, w), c_op(ag_op_linear, a.get(), w.get(), static_cast<ag_tensor *>(nullptr)));
  expect_same(ag::linear(a, w, bias), c_op(ag_op_linear, a.get(), w.get(), bias.get()));
  ag::Tensor ba = seq(ctx, {2, 2, 3}), bb = seq(ctx, {2, 3, 2});
  expect_same(ag::bmm(ba, bb), c_op(ag_op_bmm, ba.get(), bb.get()));
  ag::Tensor u = seq(ctx, {3}), v = seq(ctx, {3}, 2.0);
  expect_same(ag::outer(u, v), c_op(ag_op_outer, u.get(), v.get()));
  expect_same(ag::dot(u, v), c_op(ag_op_dot, u.get(), v.get()));
  expect_error([&] { ag::matmul(a, a); }, AG_ERR_SHAPE, c_error(AG_ERR_SHAPE, ag_op_matmul, a.get(), a.get()));
}

TEST(AgOpsHpp, ConvAndPoolingPassTheirWindowArguments) {
  ag::Context ctx(1);
  ctx.manual_seed(7);
  ag::Tensor x = ag::randn(ctx, {2, 4, 6, 5}, AG_F64);
  ag::Tensor w = ag::randn(ctx, {6, 2, 3, 3}, AG_F64), bias = ag::randn(ctx, {6}, AG_F64);
  const int64_t stride[2] = {2, 2}, padding[2] = {1, 0}, dilation[2] = {1, 2};
  expect_same(ag::conv2d(x, w, bias, {2}, {1, 0}, {1, 2}, 2),
              c_op(ag_op_conv2d, x.get(), w.get(), bias.get(), stride, padding, dilation, int64_t{2}));
  const int64_t *none = nullptr;
  ag::Tensor w1 = ag::randn(ctx, {3, 4, 3, 3}, AG_F64);
  expect_same(ag::conv2d(x, w1), c_op(ag_op_conv2d, x.get(), w1.get(), static_cast<ag_tensor *>(nullptr), none,
                                      none, none, int64_t{1}));
  ag::Tensor x1 = ag::randn(ctx, {2, 4, 9}, AG_F64), k1 = ag::randn(ctx, {2, 4, 3}, AG_F64);
  expect_same(ag::conv1d(x1, k1, ag::Tensor(), 2, 1),
              c_op(ag_op_conv1d, x1.get(), k1.get(), static_cast<ag_tensor *>(nullptr), int64_t{2}, int64_t{1},
                   int64_t{1}, int64_t{1}));

  const int64_t k2[2] = {2, 2}, k3[2] = {3, 2}, k23_[2] = {2, 3};
  expect_same(ag::max_pool2d(x, {2}), c_op(ag_op_max_pool2d, x.get(), k2, none, none, none, int32_t{0}));
  ag::ValuesIndices mp = ag::max_pool2d_with_indices(x, {3, 2}, {}, {1}, {}, true);
  ag_tensor *values = nullptr, *indices = nullptr;
  const int64_t p1[2] = {1, 1};
  ASSERT_EQ(ag_op_max_pool2d_with_indices(&values, &indices, x.get(), k3, none, p1, none, 1), AG_OK);
  expect_same(mp.values, ag::Tensor::adopt(values));
  expect_same(mp.indices, ag::Tensor::adopt(indices));
  EXPECT_EQ(mp.indices.dtype(), AG_I64);
  const int64_t k33[2] = {3, 3};
  expect_same(ag::avg_pool2d(x, {3}, {2}, {1}, false, false),
              c_op(ag_op_avg_pool2d, x.get(), k33, k2, p1, int32_t{0}, int32_t{0}, int64_t{0}));
  expect_same(ag::avg_pool2d(x, {2, 3}), c_op(ag_op_avg_pool2d, x.get(), k23_, none, none, int32_t{0}, int32_t{1},
                                              int64_t{0}));
  const int64_t out_hw[2] = {3, 2};
  expect_same(ag::adaptive_avg_pool2d(x, {3, 2}), c_op(ag_op_adaptive_avg_pool2d, x.get(), out_hw));
  ag::Tensor cols = ag::unfold(x, {2, 3}, {}, {1});
  const int64_t k23[2] = {2, 3};
  expect_same(cols, c_op(ag_op_unfold, x.get(), k23, none, p1, none));
  const int64_t hw[2] = {6, 5};
  expect_same(ag::fold(cols, {6, 5}, {2, 3}, {}, {1}), c_op(ag_op_fold, cols.get(), hw, k23, none, p1, none));

  expect_error([&] { ag::conv2d(x, w, bias, {1, 1, 1}); }, AG_ERR_INVALID_ARGUMENT,
               "stride has 3 values (expected 1 or 2)");
  expect_error([&] { ag::max_pool2d(x, {}); }, AG_ERR_INVALID_ARGUMENT,
               c_error(AG_ERR_INVALID_ARGUMENT, ag_op_max_pool2d, x.get(), none, none, none, none, int32_t{0}));
}

TEST(AgOpsHpp, SoftmaxAndLossesUseTheCDefaults) {
  ag::Context ctx(1);
  ag::Tensor logits = seq(ctx, {4, 3});
  ag::Tensor target = ag::tensor<int64_t>(ctx, {2, 0, -100, 1}, {4});
  expect_same(ag::cross_entropy(logits, target),
              c_op(ag_op_cross_entropy, logits.get(), target.get(), int32_t{AG_REDUCTION_MEAN},
                   int64_t{AG_IGNORE_INDEX_DEFAULT}, 0.0));
  expect_same(ag::cross_entropy(logits, target, AG_REDUCTION_NONE, AG_IGNORE_INDEX_DEFAULT, 0.1),
              c_op(ag_op_cross_entropy, logits.get(), target.get(), int32_t{AG_REDUCTION_NONE},
                   int64_t{AG_IGNORE_INDEX_DEFAULT}, 0.1));
  ag::Tensor logp = ag::log_softmax(logits, 1);
  expect_same(ag::nll_loss(logp, target, AG_REDUCTION_SUM),
              c_op(ag_op_nll_loss, logp.get(), target.get(), int32_t{AG_REDUCTION_SUM}, int64_t{-100}));
  ag::Tensor y = ag::softmax(logits, -1), g = seq(ctx, {4, 3}, 0.1);
  expect_same(ag::softmax_backward(g, y, -1), c_op(ag_op_softmax_backward, g.get(), y.get(), int64_t{-1}));
  expect_same(ag::log_softmax_backward(g, logp, 1),
              c_op(ag_op_log_softmax_backward, g.get(), logp.get(), int64_t{1}));

  ag::Tensor t = seq(ctx, {4, 3}, 0.3);
  const int32_t mean = AG_REDUCTION_MEAN;
  expect_same(ag::mse_loss(logits, t), c_op(ag_op_mse_loss, logits.get(), t.get(), mean));
  expect_same(ag::l1_loss(logits, t), c_op(ag_op_l1_loss, logits.get(), t.get(), mean));
  expect_same(ag::smooth_l1_loss(logits, t), c_op(ag_op_smooth_l1_loss, logits.get(), t.get(), mean, 1.0));
  expect_same(ag::huber_loss(logits, t, mean, 0.5), c_op(ag_op_huber_loss, logits.get(), t.get(), mean, 0.5));
  ag::Tensor p = ag::sigmoid(logits), q = ag::sigmoid(t), pw = seq(ctx, {3}, 1.0) + 2.0;
  expect_same(ag::binary_cross_entropy(p, q), c_op(ag_op_binary_cross_entropy, p.get(), q.get(), mean));
  expect_same(ag::binary_cross_entropy_with_logits(logits, q),
              c_op(ag_op_binary_cross_entropy_with_logits, logits.get(), q.get(), static_cast<ag_tensor *>(nullptr),
                   mean));
  expect_same(ag::binary_cross_entropy_with_logits(logits, q, pw),
              c_op(ag_op_binary_cross_entropy_with_logits, logits.get(), q.get(), pw.get(), mean));

  // The gradient through the wrapper is the C gradient.
  ag::Tensor x = ag::clone(logits);
  x.set_requires_grad();
  ag::cross_entropy(x, target).backward();
  ag::Tensor x2 = ag::clone(logits);
  x2.set_requires_grad();
  ag::Tensor loss = c_op(ag_op_cross_entropy, x2.get(), target.get(), mean, int64_t{-100}, 0.0);
  ASSERT_EQ(ag_backward(loss.get(), nullptr, nullptr), AG_OK);
  expect_same(x.grad(), x2.grad());

  ag::Tensor bad = ag::tensor<int64_t>(ctx, {2, 0, 3, 1}, {4});
  expect_error([&] { ag::cross_entropy(logits, bad); }, AG_ERR_INVALID_ARGUMENT,
               c_error(AG_ERR_INVALID_ARGUMENT, ag_op_cross_entropy, logits.get(), bad.get(), mean, int64_t{-100},
                       0.0));
}

TEST(AgOpsHpp, ReductionsGiveValuesAndIndices) {
  ag::Context ctx(1);
  ag::Tensor x = ag::tensor<double>(ctx, {3, -1, 7, 7, 0, -4}, {2, 3});
  ag::ValuesIndices mx = ag::max_dim(x, 1);
  EXPECT_EQ(mx.values.to_vector<double>(), (std::vector<double>{7, 7}));
  EXPECT_EQ(mx.indices.to_vector<int64_t>(), (std::vector<int64_t>{2, 0}));
  ag::ValuesIndices mn = ag::min_dim(x, 0, true);
  EXPECT_EQ(mn.values.shape(), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(mn.values.to_vector<double>(), (std::vector<double>{3, -1, -4}));
  EXPECT_EQ(mn.indices.to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 1}));
  expect_same(ag::argmax(x, 1), c_op(ag_op_argmax, x.get(), int64_t{1}, int32_t{0}));
  expect_same(ag::argmin(x, -1, true), c_op(ag_op_argmin, x.get(), int64_t{-1}, int32_t{1}));

  // var with the default correction 1 over dim 1: rows (3,-1,7) and (7,0,-4).
  std::vector<double> var = ag::var_dims(x, {1}).to_vector<double>();
  EXPECT_DOUBLE_EQ(var[0], (0.0 + 16.0 + 16.0) / 2.0);  // mean 3
  EXPECT_DOUBLE_EQ(var[1], (36.0 + 1.0 + 25.0) / 2.0);  // mean 1
  const int64_t dim1[1] = {1};
  expect_same(ag::std_dims(x, {1}, true, 0.0), c_op(ag_op_std_dims, x.get(), dim1, 1, 1, 0.0));
  EXPECT_DOUBLE_EQ(ag::norm_dims(x, {}).item(), std::sqrt(9.0 + 1 + 49 + 49 + 0 + 16));
  const int64_t dim0[1] = {0};
  expect_same(ag::norm_dims(x, {0}, false, 1.0), c_op(ag_op_norm_dims, x.get(), dim0, 1, 0, 1.0));

  // The gradient of values goes to the index.
  ag::Tensor xg = ag::clone(x);
  xg.set_requires_grad();
  ag::sum(ag::max_dim(xg, 1).values).backward();
  EXPECT_EQ(xg.grad().to_vector<double>(), (std::vector<double>{0, 0, 1, 1, 0, 0}));

  expect_error([&] { ag::max_dim(x, 2); }, AG_ERR_INVALID_ARGUMENT,
               [&] {
                 ag_tensor *v = nullptr, *i = nullptr;
                 EXPECT_EQ(ag_op_max_dim(&v, &i, x.get(), 2, 0), AG_ERR_INVALID_ARGUMENT);
                 return std::string(ag_last_error_message());
               }());
}

TEST(AgOpsHpp, SplitAndChunkReturnEveryPiece) {
  ag::Context ctx(1);
  ag::Tensor x = seq(ctx, {5, 2});
  std::vector<ag::Tensor> parts = ag::split(x, {1, 0, 4});
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].shape(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(parts[1].shape(), (std::vector<int64_t>{0, 2}));
  expect_same(parts[2], ag::slice(x, 0, 1));
  expect_same(ag::concat(parts), x);

  std::vector<ag::Tensor> chunks = ag::chunk(x, 4);  // 5 in 4: sizes 2, 2, 1
  ASSERT_EQ(chunks.size(), 3u);
  EXPECT_EQ(chunks[2].shape(), (std::vector<int64_t>{1, 2}));
  expect_same(chunks[1], ag::narrow(x, 0, 2, 2));
  std::vector<ag::Tensor> cols = ag::chunk(x, 2, -1);
  ASSERT_EQ(cols.size(), 2u);
  expect_same(ag::stack({ag::squeeze(cols[0]), ag::squeeze(cols[1], {1})}, 1), x);
  ASSERT_EQ(ag::chunk(ag::zeros(ctx, {0, 3}), 3).size(), 1u);  // an empty dim gives one empty piece

  // The pieces are views: a write through x is seen by them.
  const int64_t version = parts[2].version();
  x.copy_from(std::vector<double>(10, 1.0));
  EXPECT_GT(parts[2].version(), version);
  EXPECT_EQ(chunks[2].to_vector<double>(), (std::vector<double>{1, 1}));

  const int64_t sizes[2] = {2, 2};
  ag_tensor *outs[2] = {nullptr, nullptr};
  EXPECT_EQ(ag_op_split(outs, 2, x.get(), sizes, 2, 0), AG_ERR_SHAPE);
  expect_error([&] { ag::split(x, {2, 2}); }, AG_ERR_SHAPE, ag_last_error_message());
  expect_error([&] { ag::chunk(x, 0); }, AG_ERR_INVALID_ARGUMENT,
               [&] {
                 int32_t n = 0;
                 EXPECT_EQ(ag_op_chunk(nullptr, 0, &n, x.get(), 0, 0), AG_ERR_INVALID_ARGUMENT);
                 return std::string(ag_last_error_message());
               }());
  expect_error([&] { ag::concat({}); }, AG_ERR_INVALID_ARGUMENT,
               c_error(AG_ERR_INVALID_ARGUMENT, ag_op_concat, static_cast<const ag_tensor *const *>(nullptr), 0,
                       int64_t{0}));
}

TEST(AgOpsHpp, ShapeOpsMatchTheCApi) {
  ag::Context ctx(1);
  ag::Tensor x = seq(ctx, {2, 1, 3});
  const int64_t perm[3] = {2, 0, 1}, flipd[2] = {0, 2}, reps[4] = {2, 1, 2, 1}, pads[4] = {1, 2, 0, 1};
  expect_same(ag::flatten(x), c_op(ag_op_flatten, x.get(), int64_t{0}, int64_t{-1}));
  expect_same(ag::flatten(x, 1), c_op(ag_op_flatten, x.get(), int64_t{1}, int64_t{-1}));
  expect_same(ag::squeeze(x), c_op(ag_op_squeeze, x.get(), static_cast<const int64_t *>(nullptr), 0));
  expect_same(ag::unsqueeze(x, -1), c_op(ag_op_unsqueeze, x.get(), int64_t{-1}));
  expect_same(ag::permute(x, {2, 0, 1}), c_op(ag_op_permute, x.get(), perm, 3));
  expect_same(ag::slice(x, 2, -2), c_op(ag_op_slice, x.get(), int64_t{2}, int64_t{-2}, INT64_MAX, int64_t{1}));
  expect_same(ag::select(x, 0, -1), c_op(ag_op_select, x.get(), int64_t{0}, int64_t{-1}));
  expect_same(ag::flip(x, {0, 2}), c_op(ag_op_flip, x.get(), flipd, 2));
  expect_same(ag::repeat(x, {2, 1, 2, 1}), c_op(ag_op_repeat, x.get(), reps, 4));
  expect_same(ag::pad(x, {1, 2, 0, 1}), c_op(ag_op_pad, x.get(), pads, 4, int32_t{AG_PAD_CONSTANT}, 0.0));
  expect_same(ag::pad(x, {1, 2, 0, 1}, AG_PAD_CONSTANT, 5.0),
              c_op(ag_op_pad, x.get(), pads, 4, int32_t{AG_PAD_CONSTANT}, 5.0));
  ag::Tensor g = seq(ctx, {2, 1, 1});
  const int64_t in_shape[3] = {2, 1, 3};
  expect_same(ag::slice_backward(g, {2, 1, 3}, 2, 1, 2, 1),
              c_op(ag_op_slice_backward, g.get(), in_shape, 3, int64_t{2}, int64_t{1}, int64_t{2}, int64_t{1}));
  expect_error([&] { ag::transpose(x, 0, 3); }, AG_ERR_INVALID_ARGUMENT,
               c_error(AG_ERR_INVALID_ARGUMENT, ag_op_transpose, x.get(), int64_t{0}, int64_t{3}));
}

TEST(AgOpsHpp, IndexOpsMatchTheCApi) {
  ag::Context ctx(1);
  ag::Tensor x = seq(ctx, {4, 3});
  ag::Tensor idx = ag::tensor<int64_t>(ctx, {3, 0, 3}, {3});
  expect_same(ag::index_select(x, 0, idx), c_op(ag_op_index_select, x.get(), int64_t{0}, idx.get()));
  ag::Tensor src = seq(ctx, {3, 3}, 2.0);
  expect_same(ag::index_add(x, 0, idx, src), c_op(ag_op_index_add, x.get(), int64_t{0}, idx.get(), src.get()));
  ag::Tensor gidx = ag::tensor<int64_t>(ctx, {2, 0, 1, 1}, {2, 2});
  expect_same(ag::gather(x, 1, gidx), c_op(ag_op_gather, x.get(), int64_t{1}, gidx.get()));
  ag::Tensor gsrc = seq(ctx, {2, 2}, 3.0);
  expect_same(ag::scatter_add(x, 1, gidx, gsrc),
              c_op(ag_op_scatter_add, x.get(), int64_t{1}, gidx.get(), gsrc.get()));
  ag::Tensor mask = ag::gt(x, ag::scalar(ctx, 0.0, AG_F64));
  expect_same(ag::masked_fill(x, mask, -9.0), c_op(ag_op_masked_fill, x.get(), mask.get(), -9.0));
  expect_same(ag::where(mask, x, -x), ag::abs(x));
  expect_same(ag::lerp(x, -x, 0.5), c_op(ag_op_lerp, x.get(), (-x).get(), ag::scalar(ctx, 0.5, AG_F64).get()));
  ag::Tensor words = ag::tensor<int64_t>(ctx, {1, 1, 3, 0}, {2, 2});
  expect_same(ag::embedding(x, words), c_op(ag_op_embedding, x.get(), words.get()));
  expect_same(ag::one_hot(words), c_op(ag_op_one_hot, words.get(), int64_t{-1}));
  EXPECT_EQ(ag::one_hot(words, 6).shape(), (std::vector<int64_t>{2, 2, 6}));

  ag::Tensor bags = ag::tensor<int64_t>(ctx, {0, 2}, {2});
  ag::Tensor flat = ag::reshape(words, {-1});
  expect_same(ag::embedding_bag(x, flat, bags), c_op(ag_op_embedding_bag, x.get(), flat.get(), bags.get(),
                                                     int32_t{AG_EMBEDDING_BAG_MEAN}, static_cast<ag_tensor *>(nullptr),
                                                     int32_t{0}, int64_t{-1}));
  ag::Tensor lp = ag::log_softmax(seq(ctx, {3, 1, 4}), -1), tg = ag::tensor<int64_t>(ctx, {1, 2}, {1, 2});
  ag::Tensor il = ag::tensor<int64_t>(ctx, {3}, {1}), tl = ag::tensor<int64_t>(ctx, {2}, {1});
  expect_same(ag::ctc_loss(lp, tg, il, tl), c_op(ag_op_ctc_loss, lp.get(), tg.get(), il.get(), tl.get(), int64_t{0},
                                                 int32_t{AG_REDUCTION_MEAN}, int32_t{0}));

  ag::Tensor far = ag::tensor<int64_t>(ctx, {7}, {1});
  expect_error([&] { ag::index_select(x, 0, far); }, AG_ERR_INVALID_ARGUMENT,
               c_error(AG_ERR_INVALID_ARGUMENT, ag_op_index_select, x.get(), int64_t{0}, far.get()));
  expect_error([&] { ag::index_select(x, 0, ag::Tensor()); }, AG_ERR_INVALID_ARGUMENT,
               c_error(AG_ERR_INVALID_ARGUMENT, ag_op_index_select, x.get(), int64_t{0},
                       static_cast<ag_tensor *>(nullptr)));
}

TEST(AgOpsHpp, CreationAndRandomFollowTheSeed) {
  ag::Context ctx(1);
  EXPECT_EQ(ag::arange(ctx, 0, 5).to_vector<float>(), (std::vector<float>{0, 1, 2, 3, 4}));
  EXPECT_EQ(ag::arange(ctx, 5, 0, -2, AG_I64).to_vector<int64_t>(), (std::vector<int64_t>{5, 3, 1}));
  EXPECT_EQ(ag::linspace(ctx, 0, 1, 5, AG_F64).to_vector<double>(), (std::vector<double>{0, 0.25, 0.5, 0.75, 1}));
  EXPECT_EQ(ag::eye(ctx, 2).to_vector<float>(), (std::vector<float>{1, 0, 0, 1}));
  EXPECT_EQ(ag::eye(ctx, 2, 3, AG_F64).shape(), (std::vector<int64_t>{2, 3}));

  ctx.manual_seed(1234);
  EXPECT_EQ(ctx.seed(), 1234u);
  ag::Tensor r = ag::rand(ctx, {3, 5});
  ag::Tensor n = ag::randn(ctx, {7}, AG_F64);
  ag::Tensor u = ag::uniform(ctx, {4}, -2, 3);
  ag::Tensor nm = ag::normal(ctx, {4}, 1, 0.5, AG_F64);
  ag::Tensor bs = ag::bernoulli_scalar(ctx, {6}, 0.3);
  ag::Tensor ri = ag::randint(ctx, {9}, -3, 4);
  ag::Tensor b = ag::bernoulli(ag::full(ctx, {5}, 0.5));
  ag::Tensor d = ag::dropout(ag::ones(ctx, {8}), 0.25);

  ASSERT_EQ(ag_context_manual_seed(ctx.get(), 1234), AG_OK);
  const int64_t s35[2] = {3, 5}, s7[1] = {7}, s4[1] = {4}, s6[1] = {6}, s9[1] = {9};
  expect_same(r, c_op(ag_op_rand, ctx.get(), AG_F32, s35, 2));
  expect_same(n, c_op(ag_op_randn, ctx.get(), AG_F64, s7, 1));
  expect_same(u, c_op(ag_op_uniform, ctx.get(), AG_F32, s4, 1, -2.0, 3.0));
  expect_same(nm, c_op(ag_op_normal, ctx.get(), AG_F64, s4, 1, 1.0, 0.5));
  expect_same(bs, c_op(ag_op_bernoulli_scalar, ctx.get(), AG_F32, s6, 1, 0.3));
  expect_same(ri, c_op(ag_op_randint, ctx.get(), s9, 1, int64_t{-3}, int64_t{4}));
  expect_same(b, c_op(ag_op_bernoulli, ag::full(ctx, {5}, 0.5).get()));
  expect_same(d, c_op(ag_op_dropout, ag::ones(ctx, {8}).get(), 0.25, int32_t{1}));
  for (double v : values(ri)) {
    EXPECT_GE(v, -3);
    EXPECT_LT(v, 4);
  }
  // The state read back replays the draws.
  const std::pair<uint64_t, uint64_t> state = ctx.rng_state();
  ag::Tensor first = ag::randn(ctx, {5}, AG_F64);
  ctx.set_rng_state(state);
  expect_same(ag::randn(ctx, {5}, AG_F64), first);
  EXPECT_EQ(ctx.rng_state().first, 1234u);

  ag::Tensor x = ag::ones(ctx, {3});
  EXPECT_EQ(ag::dropout(x, 0.5, false).get(), x.get());  // eval mode: x itself
  expect_error([&] { ag::rand(ctx, {2}, AG_I64); }, AG_ERR_DTYPE,
               c_error(AG_ERR_DTYPE, ag_op_rand, ctx.get(), AG_I64, s4, 1));
}

TEST(AgOpsHpp, NormalizationMatchesTheCApi) {
  ag::Context ctx(1);
  ag::Tensor x = seq(ctx, {2, 4, 3}, 0.37);
  ag::Tensor w = seq(ctx, {3}, 0.5) + 2.0, bias = seq(ctx, {3}, 0.1);
  const int64_t ns[1] = {3};
  expect_same(ag::layer_norm(x, {3}), c_op(ag_op_layer_norm, x.get(), ns, 1, static_cast<ag_tensor *>(nullptr),
                                           static_cast<ag_tensor *>(nullptr), 1e-5));
  expect_same(ag::layer_norm(x, {3}, w, bias, 0.1), c_op(ag_op_layer_norm, x.get(), ns, 1, w.get(), bias.get(), 0.1));
  expect_same(ag::rms_norm(x, {3}, w),
              c_op(ag_op_rms_norm, x.get(), ns, 1, w.get(), 2.220446049250313e-16));  // f64 machine epsilon
  expect_same(ag::rms_norm(x, {3}, ag::Tensor(), 0.5),
              c_op(ag_op_rms_norm, x.get(), ns, 1, static_cast<ag_tensor *>(nullptr), 0.5));
  ag::Tensor g = seq(ctx, {2, 4, 3}, 0.11);
  expect_same(ag::layer_norm_backward(g, x, {3}, w, 1e-5),
              c_op(ag_op_layer_norm_backward, g.get(), x.get(), ns, 1, w.get(), 1e-5));
  expect_same(ag::rms_norm_backward(g, x, {3}, ag::Tensor(), 1e-5),
              c_op(ag_op_rms_norm_backward, g.get(), x.get(), ns, 1, static_cast<ag_tensor *>(nullptr), 1e-5));
  expect_same(ag::layer_norm_weight_grad(g, x, {3}, 1e-5),
              c_op(ag_op_layer_norm_weight_grad, g.get(), x.get(), ns, 1, 1e-5));
  expect_same(ag::rms_norm_weight_grad(g, x, {3}, 1e-5),
              c_op(ag_op_rms_norm_weight_grad, g.get(), x.get(), ns, 1, 1e-5));
  ag::Tensor cw = seq(ctx, {4}, 0.5), cb = seq(ctx, {4});
  expect_same(ag::group_norm(x, 2, cw, cb), c_op(ag_op_group_norm, x.get(), int64_t{2}, cw.get(), cb.get(), 1e-5));

  // batch_norm in training updates the running statistics like the C call does.
  ag::Tensor rm = ag::zeros(ctx, {4}, AG_F64), rv = ag::ones(ctx, {4}, AG_F64);
  ag::Tensor rm2 = ag::zeros(ctx, {4}, AG_F64), rv2 = ag::ones(ctx, {4}, AG_F64);
  expect_same(ag::batch_norm(x, rm, rv, cw, cb, true),
              c_op(ag_op_batch_norm, x.get(), rm2.get(), rv2.get(), cw.get(), cb.get(), 1, 0.1, 1e-5));
  expect_same(rm, rm2);
  expect_same(rv, rv2);
  EXPECT_NE(rm.to_vector<double>(), std::vector<double>(4, 0.0));
  expect_same(ag::batch_norm(x, rm, rv),
              c_op(ag_op_batch_norm, x.get(), rm2.get(), rv2.get(), static_cast<ag_tensor *>(nullptr),
                   static_cast<ag_tensor *>(nullptr), 0, 0.1, 1e-5));
  expect_error([&] { ag::group_norm(x, 3); }, AG_ERR_SHAPE,
               c_error(AG_ERR_SHAPE, ag_op_group_norm, x.get(), int64_t{3}, static_cast<ag_tensor *>(nullptr),
                       static_cast<ag_tensor *>(nullptr), 1e-5));
}

TEST(AgOpsHpp, InPlaceMembersUnderNoGrad) {
  ag::Context ctx(1);
  ag::Tensor w = ag::tensor<float>(ctx, {1, 2, 3}, {3});
  w.set_requires_grad();
  ag::Tensor g = ag::tensor<float>(ctx, {10, 10, 10}, {3});
  const int64_t v0 = w.version();
  expect_error([&] { w.sub_(g); }, AG_ERR_GRAPH, [&] {
    EXPECT_EQ(ag_op_sub_(w.get(), g.get()), AG_ERR_GRAPH);
    return std::string(ag_last_error_message());
  }());
  EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{1, 2, 3}));  // unchanged on failure
  {
    ag::NoGradGuard no_grad;
    w.sub_(g * 0.1).mul_(ag::scalar(ctx, 2.0)).add_(ag::scalar(ctx, 1.0)).div_(ag::scalar(ctx, 2.0));
  }
  EXPECT_GT(w.version(), v0);
  EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{0.5f, 1.5f, 2.5f}));
  EXPECT_TRUE(w.requires_grad());
  EXPECT_TRUE(w.is_leaf());

  ag::Tensor t = ag::tensor<double>(ctx, {-2, 0.5, 9}, {3});
  EXPECT_EQ(t.clamp_(-1, 1).to_vector<double>(), (std::vector<double>{-1, 0.5, 1}));
  EXPECT_EQ(t.fill_(4).to_vector<double>(), (std::vector<double>{4, 4, 4}));
  EXPECT_EQ(t.copy_(ag::scalar(ctx, 3.0, AG_F64)).to_vector<double>(), (std::vector<double>{3, 3, 3}));
  EXPECT_EQ(t.zero_().to_vector<double>(), (std::vector<double>{0, 0, 0}));
  // PyTorch's alpha: t += 2 * {1, 2, 4}, then t -= 0.5 * {1, 2, 4}
  ag::Tensor o = ag::tensor<double>(ctx, {1, 2, 4}, {3});
  EXPECT_EQ(t.add_(o, 2.0).sub_(o, 0.5).to_vector<double>(), (std::vector<double>{1.5, 3, 6}));
  expect_error([&] { t.sub_(g, 0.5); }, AG_ERR_DTYPE, [&] {
    EXPECT_EQ(ag_op_add_scaled_(t.get(), g.get(), -0.5), AG_ERR_DTYPE);
    return std::string(ag_last_error_message());
  }());

  // Recorded in place on a non-leaf: the gradient flows as for the out-of-place op.
  ag::Tensor x = ag::tensor<double>(ctx, {1, 2}, {2});
  x.set_requires_grad();
  ag::Tensor y = x * 1.0;
  y.mul_(x);
  ag::sum(y).backward();
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{2, 4}));
}

TEST(AgOpsHpp, ScopeReleasesWhatItDoesNotKeep) {
  ag::Context ctx(1);
  ag::Tensor x = ag::tensor<double>(ctx, {1, 2}, {2});
  ag::Tensor kept;
  ag_tensor *raw = nullptr;
  const int64_t before = ctx.memory_stats().bytes_in_use;
  {
    ag::Scope scope;
    EXPECT_EQ(ag::Scope::depth(), 1);
    ag::Tensor y = ag::exp(x) + 1.0;
    kept = scope.keep(y);
    ASSERT_EQ(ag_op_neg(&raw, x.get()), AG_OK);  // a C handle left to the scope
  }
  EXPECT_EQ(ag::Scope::depth(), 0);
  EXPECT_DOUBLE_EQ(kept.to_vector<double>()[0], std::exp(1.0) + 1.0);
  kept = ag::Tensor();
  EXPECT_EQ(ctx.memory_stats().bytes_in_use, before);  // the scope released raw and no more than it held

  {
    ag::Scope outer;
    ag::Scope inner;
    expect_error([&] { outer.end(); }, AG_ERR_INVALID_ARGUMENT,
                 "[ag_scope_end] scope is not the innermost: 1 scope is open inside it; end those first");
    inner.end();
    EXPECT_EQ(ag::Scope::depth(), 1);
  }
  EXPECT_EQ(ag::Scope::depth(), 0);
}

}  // namespace
