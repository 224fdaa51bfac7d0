// layer_norm, rms_norm, their fused gradients, batch_norm and group_norm
// through the C API: values against a
// scalar reference in long double (f64 and f32, with and without weight and
// bias, one and two normalized dims, non-contiguous inputs), empty tensors,
// the threaded path, batch_norm's running statistics against PyTorch's
// update formula, and every error.
#include <cmath>

#include "api_util.h"

namespace {

using namespace apitest;

// Normalizes each row of n consecutive elements: (x - mean) * rstd * w + b,
// biased variance; mean 0 and var = mean(x^2) without center. w, b: n values
// or empty.
std::vector<double> ref_rows(const std::vector<double>& x, size_t n, const std::vector<double>& w,
                             const std::vector<double>& b, double eps, bool center) {
  std::vector<double> y(x.size());
  for (size_t r = 0; r * n < x.size(); ++r) {
    const double* row = x.data() + r * n;
    long double m = 0, v = 0;
    if (center) {
      for (size_t i = 0; i < n; ++i) m += row[i];
      m /= n;
    }
    for (size_t i = 0; i < n; ++i) v += (row[i] - m) * (row[i] - m);
    v /= n;
    const long double rstd = 1.0L / std::sqrt(v + eps);
    for (size_t i = 0; i < n; ++i) {
      y[r * n + i] = static_cast<double>((row[i] - m) * rstd * (w.empty() ? 1 : w[i]) + (b.empty() ? 0 : b[i]));
    }
  }
  return y;
}

std::vector<double> as_f32(std::vector<double> v) {
  for (double& e : v) e = static_cast<float>(e);
  return v;
}

struct RowCase {
  Shape x, ns;
};
const RowCase kRowCases[] = {{{2, 3, 5}, {5}}, {{2, 3, 5}, {3, 5}}, {{7}, {7}}, {{4, 33}, {33}}, {{2, 1}, {1}}};

TEST(LayerNorm, ValuesAgainstReference) {
  Ctx ctx;
  for (ag_dtype dt : {AG_F64, AG_F32}) {
    const double tol = dt == AG_F64 ? 1e-12 : 3e-6;
    for (const RowCase& c : kRowCases) {
      const size_t n = static_cast<size_t>(numel(c.ns));
      std::vector<double> xv = sample(numel(c.x), -2.0, 3.0, 1), wv = sample(numel(c.ns), 0.5, 1.5, 2),
                          bv = sample(numel(c.ns), -1.0, 1.0, 3);
      if (dt == AG_F32) xv = as_f32(xv), wv = as_f32(wv), bv = as_f32(bv);
      T x = make(ctx.get(), dt, c.x, xv), w = make(ctx.get(), dt, c.ns, wv), b = make(ctx.get(), dt, c.ns, bv);
      const int32_t nd = static_cast<int32_t>(c.ns.size());
      for (int affine = 0; affine < 4; ++affine) {
        const bool hw = affine & 1, hb = affine & 2;
        for (double eps : {1e-5, 0.5}) {
          T y, r;
          ASSERT_AG(ag_op_layer_norm(y.out(), x, c.ns.data(), nd, hw ? w.get() : nullptr, hb ? b.get() : nullptr, eps));
          EXPECT_EQ(shape_of(y), c.x);
          const std::string what = "layer_norm dtype " + std::to_string(dt) + " nd " + std::to_string(nd) + " affine " +
                                   std::to_string(affine);
          expect_close(read(y),
                       ref_rows(xv, n, hw ? wv : std::vector<double>{}, hb ? bv : std::vector<double>{}, eps, true),
                       tol, what);
          if (!hb) {
            ASSERT_AG(ag_op_rms_norm(r.out(), x, c.ns.data(), nd, hw ? w.get() : nullptr, eps));
            expect_close(read(r), ref_rows(xv, n, hw ? wv : std::vector<double>{}, {}, eps, false), tol, "rms_" + what);
          }
        }
      }
    }
  }
}

// A transposed input is normalized as its logical (row-major) values.
TEST(LayerNorm, NonContiguousInput) {
  Ctx ctx;
  const std::vector<double> v = sample(12, -1.0, 1.0, 4);
  T x = make(ctx.get(), AG_F64, {3, 4}, v), xt, y, r;
  ASSERT_AG(ag_op_transpose(xt.out(), x, 0, 1));
  std::vector<double> logical(12);
  for (size_t i = 0; i < 4; ++i)
    for (size_t j = 0; j < 3; ++j) logical[i * 3 + j] = v[j * 4 + i];
  const int64_t ns[1] = {3};
  ASSERT_AG(ag_op_layer_norm(y.out(), xt, ns, 1, nullptr, nullptr, 1e-5));
  ASSERT_AG(ag_op_rms_norm(r.out(), xt, ns, 1, nullptr, 1e-5));
  expect_close(read(y), ref_rows(logical, 3, {}, {}, 1e-5, true), 1e-12, "layer_norm");
  expect_close(read(r), ref_rows(logical, 3, {}, {}, 1e-5, false), 1e-12, "rms_norm");
}

// The fused gradients against central differences (in long double) of the
// reference forward: dx_i = sum_j g_j dy_j/dx_i.
TEST(NormBackward, ValuesAgainstDifferences) {
  Ctx ctx;
  const Shape xs = {3, 2, 5};
  for (const Shape& ns : {Shape{5}, Shape{2, 5}}) {
    const size_t n = static_cast<size_t>(numel(ns));
    const std::vector<double> xv = sample(30, -2.0, 2.0, 21), gv = sample(30, -1.0, 1.0, 22),
                              wv = sample(numel(ns), 0.5, 1.5, 23);
    T x = make(ctx.get(), AG_F64, xs, xv), g = make(ctx.get(), AG_F64, xs, gv), w = make(ctx.get(), AG_F64, ns, wv);
    for (bool center : {true, false}) {
      for (bool affine : {false, true}) {
        T dx;
        const auto fn = center ? &ag_op_layer_norm_backward : &ag_op_rms_norm_backward;
        ASSERT_AG(fn(dx.out(), g, x, ns.data(), static_cast<int32_t>(ns.size()), affine ? w.get() : nullptr, 1e-3));
        const std::vector<double> got = read(dx);
        const std::vector<double> wref = affine ? wv : std::vector<double>{};
        for (size_t i = 0; i < xv.size(); ++i) {
          const double h = 1e-6;
          std::vector<double> xp = xv, xm = xv;
          xp[i] += h;
          xm[i] -= h;
          const std::vector<double> yp = ref_rows(xp, n, wref, {}, 1e-3, center),
                                    ym = ref_rows(xm, n, wref, {}, 1e-3, center);
          long double want = 0;
          for (size_t j = 0; j < xv.size(); ++j) want += gv[j] * (static_cast<long double>(yp[j]) - ym[j]) / (2 * h);
          EXPECT_NEAR(got[i], static_cast<double>(want), 1e-7)
              << "center " << center << " affine " << affine << " element " << i;
        }
      }
    }
  }
}

// layer_norm's gradient through backward (saved statistics) is the fused
// op's (recomputed statistics), bit for bit; weight and bias gradients are
// sum(g * xhat) and sum(g).
TEST(NormBackward, MatchesBackwardOfForward) {
  Ctx ctx;
  const Shape xs = {4, 37}, ns = {37};
  const std::vector<double> xv = as_f32(sample(148, -2.0, 2.0, 31)), gv = as_f32(sample(148, -1.0, 1.0, 32)),
                            wv = as_f32(sample(37, 0.5, 1.5, 33));
  T x = make(ctx.get(), AG_F32, xs, xv), g = make(ctx.get(), AG_F32, xs, gv), w = make(ctx.get(), AG_F32, ns, wv),
    b = make(ctx.get(), AG_F32, ns, wv);
  for (ag_tensor* t : {x.get(), w.get(), b.get()}) ag_tensor_requires_grad(t, 1);
  T y, gx, gw, gb, fused;
  ASSERT_AG(ag_op_layer_norm(y.out(), x, ns.data(), 1, w, b, 1e-5));
  ASSERT_AG(ag_backward(y, g, nullptr));
  ASSERT_AG(ag_tensor_grad(gx.out(), x));
  ASSERT_AG(ag_tensor_grad(gw.out(), w));
  ASSERT_AG(ag_tensor_grad(gb.out(), b));
  ASSERT_AG(ag_op_layer_norm_backward(fused.out(), g, x, ns.data(), 1, w, 1e-5));
  EXPECT_TRUE(read(gx) == read(fused));
  T fused_w;
  ASSERT_AG(ag_op_layer_norm_weight_grad(fused_w.out(), g, x, ns.data(), 1, 1e-5));
  EXPECT_TRUE(read(gw) == read(fused_w));
  const std::vector<double> xhat = ref_rows(xv, 37, {}, {}, 1e-5, true);
  std::vector<double> want_w(37, 0.0), want_b(37, 0.0);
  for (size_t i = 0; i < 148; ++i) want_w[i % 37] += gv[i] * xhat[i], want_b[i % 37] += gv[i];
  expect_close(read(gw), want_w, 1e-5, "weight grad");
  expect_close(read(gb), want_b, 1e-5, "bias grad");
  // rms_norm's weight gradient: sum of g * x / sqrt(mean(x^2) + eps).
  T rw;
  ASSERT_AG(ag_op_rms_norm_weight_grad(rw.out(), g, x, ns.data(), 1, 1e-5));
  const std::vector<double> xr = ref_rows(xv, 37, {}, {}, 1e-5, false);
  std::fill(want_w.begin(), want_w.end(), 0.0);
  for (size_t i = 0; i < 148; ++i) want_w[i % 37] += gv[i] * xr[i];
  expect_close(read(rw), want_w, 1e-5, "rms weight grad");
}

// Zero-size dims give empty results of x's shape (leading or normalized),
// and gradients of the right (empty or zero) shape.
TEST(LayerNorm, EmptyTensors) {
  Ctx ctx;
  const std::vector<std::pair<Shape, Shape>> cases = {{{0, 4}, {4}}, {{2, 0}, {0}}, {{0, 2, 3}, {2, 3}}};
  for (const auto& [xs, ns] : cases) {
    T x = make(ctx.get(), AG_F32, xs, {}), w = make(ctx.get(), AG_F32, ns, std::vector<double>(numel(ns), 1.0));
    ag_tensor_requires_grad(x, 1);
    ag_tensor_requires_grad(w, 1);
    T y, r, s, gx, gw;
    ASSERT_AG(ag_op_layer_norm(y.out(), x, ns.data(), static_cast<int32_t>(ns.size()), w, nullptr, 1e-5));
    ASSERT_AG(ag_op_rms_norm(r.out(), x, ns.data(), static_cast<int32_t>(ns.size()), w, 1e-5));
    EXPECT_EQ(shape_of(y), xs);
    EXPECT_EQ(shape_of(r), xs);
    ASSERT_AG(ag_op_sum(s.out(), y));
    ASSERT_AG(ag_backward(s, nullptr, nullptr));
    ASSERT_AG(ag_tensor_grad(gx.out(), x));
    ASSERT_AG(ag_tensor_grad(gw.out(), w));
    EXPECT_EQ(shape_of(gx), xs);
    EXPECT_EQ(shape_of(gw), ns);
    for (double g : read(gw)) EXPECT_EQ(g, 0.0);
  }
}

// Large inputs run in parallel row blocks: the same bits with 1 and 2
// threads, forward and gradients.
TEST(LayerNorm, ThreadCountDoesNotChangeBits) {
  const Shape s = {300, 700};
  const Shape ns = {700};
  const std::vector<double> v = sample(numel(s), -3.0, 3.0, 5), wv = sample(700, 0.5, 1.5, 6);
  std::vector<std::vector<double>> results;
  for (int32_t threads : {1, 2}) {
    Ctx ctx(threads);
    T x = make(ctx.get(), AG_F32, s, v), w = make(ctx.get(), AG_F32, ns, wv), b = make(ctx.get(), AG_F32, ns, wv);
    T g = make(ctx.get(), AG_F32, s, sample(numel(s), -1.0, 1.0, 7));
    for (ag_tensor* t : {x.get(), w.get(), b.get()}) ag_tensor_requires_grad(t, 1);
    T y, r;
    ASSERT_AG(ag_op_layer_norm(y.out(), x, ns.data(), 1, w, b, 1e-5));
    ASSERT_AG(ag_backward(y, g, nullptr));
    ASSERT_AG(ag_op_rms_norm(r.out(), x, ns.data(), 1, w, 1e-5));
    std::vector<double> all = read(y);
    for (const ag_tensor* t : {r.get()}) {
      const std::vector<double> e = read(t);
      all.insert(all.end(), e.begin(), e.end());
    }
    for (ag_tensor* t : {x.get(), w.get(), b.get()}) {
      T gt;
      ASSERT_AG(ag_tensor_grad(gt.out(), t));
      const std::vector<double> e = read(gt);
      all.insert(all.end(), e.begin(), e.end());
    }
    results.push_back(all);
  }
  EXPECT_TRUE(results[0] == results[1]);
  const std::vector<double> want = ref_rows(as_f32(v), 700, as_f32(wv), as_f32(wv), 1e-5, true);
  for (size_t i = 0; i < want.size(); i += 97)
    EXPECT_NEAR(results[0][i], want[i], 1e-5 * std::max(1.0, std::fabs(want[i])));
}

// batch_norm reference: per channel c of x (N, C, L), with statistics mean
// and var (biased) of the channel.
std::vector<double> ref_batch_norm(const std::vector<double>& x, int64_t N, int64_t C, int64_t L,
                                   const std::vector<double>& mean, const std::vector<double>& var,
                                   const std::vector<double>& w, const std::vector<double>& b, double eps) {
  std::vector<double> y(x.size());
  for (int64_t i = 0; i < N; ++i)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t l = 0; l < L; ++l) {
        const size_t k = static_cast<size_t>((i * C + c) * L + l);
        y[k] = (x[k] - mean[c]) / std::sqrt(var[c] + eps) * w[c] + b[c];
      }
  return y;
}

TEST(BatchNorm, TrainingUsesBatchStatsAndUpdatesRunningStats) {
  Ctx ctx;
  const int64_t N = 4, C = 3, L = 5;
  const std::vector<double> xv = sample(N * C * L, -2.0, 2.0, 8), wv = sample(C, 0.5, 1.5, 9),
                            bv = sample(C, -1.0, 1.0, 10), rm0 = {0.1, -0.2, 0.3}, rv0 = {1.0, 2.0, 0.5};
  T x = make(ctx.get(), AG_F64, {N, C, L}, xv), w = make(ctx.get(), AG_F64, {C}, wv),
    b = make(ctx.get(), AG_F64, {C}, bv);
  T rm = make(ctx.get(), AG_F64, {C}, rm0), rv = make(ctx.get(), AG_F64, {C}, rv0);
  ag_tensor_requires_grad(x, 1);
  const int64_t v_mean = ag_tensor_version(rm), v_var = ag_tensor_version(rv);
  T y;
  const double momentum = 0.1, eps = 1e-5;
  ASSERT_AG(ag_op_batch_norm(y.out(), x, rm, rv, w, b, 1, momentum, eps));
  std::vector<double> mean(C, 0.0), var(C, 0.0);
  const double m = static_cast<double>(N * L);
  for (int64_t i = 0; i < N; ++i)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t l = 0; l < L; ++l) mean[c] += xv[static_cast<size_t>((i * C + c) * L + l)] / m;
  for (int64_t i = 0; i < N; ++i)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t l = 0; l < L; ++l) {
        const double d = xv[static_cast<size_t>((i * C + c) * L + l)] - mean[c];
        var[c] += d * d / m;
      }
  expect_close(read(y), ref_batch_norm(xv, N, C, L, mean, var, wv, bv, eps), 1e-12, "batch_norm training");
  // PyTorch's update: biased stats normalize, the unbiased variance is tracked.
  std::vector<double> want_rm(C), want_rv(C);
  for (int64_t c = 0; c < C; ++c) {
    want_rm[c] = (1 - momentum) * rm0[c] + momentum * mean[c];
    want_rv[c] = (1 - momentum) * rv0[c] + momentum * var[c] * m / (m - 1);
  }
  expect_close(read(rm), want_rm, 1e-13, "running_mean");
  expect_close(read(rv), want_rv, 1e-13, "running_var");
  EXPECT_GT(ag_tensor_version(rm), v_mean);
  EXPECT_GT(ag_tensor_version(rv), v_var);
  // The update recorded no graph; the output did.
  EXPECT_EQ(ag_tensor_get_requires_grad(rm), 0);
  EXPECT_EQ(ag_tensor_get_requires_grad(rv), 0);
  EXPECT_EQ(ag_tensor_get_requires_grad(y), 1);
  // Gradients through the batch statistics: a shift of x changes nothing, so
  // the gradient of sum(y) w.r.t. x is 0 in every channel.
  T s, gx;
  ASSERT_AG(ag_op_sum(s.out(), y));
  ASSERT_AG(ag_backward(s, nullptr, nullptr));
  ASSERT_AG(ag_tensor_grad(gx.out(), x));
  for (double g : read(gx)) EXPECT_NEAR(g, 0.0, 1e-12);
}

TEST(BatchNorm, EvalUsesRunningStats) {
  Ctx ctx;
  const int64_t N = 2, C = 3, L = 4;
  const std::vector<double> xv = as_f32(sample(N * C * L, -2.0, 2.0, 11)), rm0 = {0.25, -0.5, 0.125},
                            rv0 = {1.5, 0.75, 2.0};
  T x = make(ctx.get(), AG_F32, {N, C, 2, 2}, xv);
  T rm = make(ctx.get(), AG_F32, {C}, rm0), rv = make(ctx.get(), AG_F32, {C}, rv0);
  const int64_t v_mean = ag_tensor_version(rm);
  T y;
  ASSERT_AG(ag_op_batch_norm(y.out(), x, rm, rv, nullptr, nullptr, 0, 0.1, 1e-3));
  EXPECT_EQ(shape_of(y), (Shape{N, C, 2, 2}));
  expect_close(read(y), ref_batch_norm(xv, N, C, L, rm0, rv0, {1, 1, 1}, {0, 0, 0}, 1e-3), 2e-6, "batch_norm eval");
  EXPECT_EQ(ag_tensor_version(rm), v_mean);
  expect_close(read(rm), rm0, 0.0, "running_mean unchanged");
}

// An empty batch gives an empty result and leaves the running stats alone.
TEST(BatchNorm, EmptyBatch) {
  Ctx ctx;
  T x = make(ctx.get(), AG_F64, {0, 3, 2}, {});
  T rm = make(ctx.get(), AG_F64, {3}, {1, 2, 3}), rv = make(ctx.get(), AG_F64, {3}, {4, 5, 6});
  T w = make(ctx.get(), AG_F64, {3}, {1, 1, 1});
  const int64_t v = ag_tensor_version(rm);
  T y;
  ASSERT_AG(ag_op_batch_norm(y.out(), x, rm, rv, w, nullptr, 1, 0.1, 1e-5));
  EXPECT_EQ(shape_of(y), (Shape{0, 3, 2}));
  EXPECT_EQ(ag_tensor_version(rm), v);
  EXPECT_EQ(read(rm), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(read(rv), (std::vector<double>{4, 5, 6}));
}

// group_norm: each (sample, group) of C / G channels times the trailing size
// is one row of the reference, then the per-channel affine.
TEST(GroupNorm, ValuesAgainstReference) {
  Ctx ctx;
  for (ag_dtype dt : {AG_F64, AG_F32}) {
    const double tol = dt == AG_F64 ? 1e-12 : 3e-6;
    const std::vector<std::pair<Shape, int64_t>> cases = {
        {{2, 6, 5}, 3}, {{3, 4}, 2}, {{2, 4, 2, 3}, 1}, {{1, 3, 7}, 3}};
    for (const auto& [xs, groups] : cases) {
      const int64_t C = xs[1], L = numel(xs) / (xs[0] * C);
      std::vector<double> xv = sample(numel(xs), -2.0, 3.0, 41), wv = sample(C, 0.5, 1.5, 42),
                          bv = sample(C, -1, 1, 43);
      if (dt == AG_F32) xv = as_f32(xv), wv = as_f32(wv), bv = as_f32(bv);
      T x = make(ctx.get(), dt, xs, xv), w = make(ctx.get(), dt, {C}, wv), b = make(ctx.get(), dt, {C}, bv);
      T y;
      ASSERT_AG(ag_op_group_norm(y.out(), x, groups, w, b, 1e-5));
      EXPECT_EQ(shape_of(y), xs);
      std::vector<double> want = ref_rows(xv, static_cast<size_t>(C / groups * L), {}, {}, 1e-5, true);
      for (size_t i = 0; i < want.size(); ++i) {
        const size_t c = (i / static_cast<size_t>(L)) % static_cast<size_t>(C);
        want[i] = want[i] * wv[c] + bv[c];
      }
      expect_close(read(y), want, tol, "group_norm groups " + std::to_string(groups));
    }
  }
  // Empty: no samples, or no trailing elements.
  for (const Shape& xs : {Shape{0, 4, 3}, Shape{2, 4, 0}}) {
    T x = make(ctx.get(), AG_F32, xs, {}), y;
    ASSERT_AG(ag_op_group_norm(y.out(), x, 2, nullptr, nullptr, 1e-5));
    EXPECT_EQ(shape_of(y), xs);
  }
  // No channels: any num_groups divides 0, and N * num_groups may pass INT64_MAX.
  T none = make(ctx.get(), AG_F32, {2, 0, 3}, {}), y;
  ASSERT_AG(ag_op_group_norm(y.out(), none, 2, nullptr, nullptr, 1e-5));
  EXPECT_EQ(shape_of(y), (Shape{2, 0, 3}));
  EXPECT_EQ(ag_op_group_norm(y.out(), none, INT64_MAX, nullptr, nullptr, 1e-5), AG_ERR_SHAPE);
}

TEST(Norm, Errors) {
  Ctx ctx;
  T x = make(ctx.get(), AG_F32, {2, 3}, sample(6, -1, 1, 1));
  T x64 = make(ctx.get(), AG_F64, {2, 3}, sample(6, -1, 1, 1));
  T w3 = make(ctx.get(), AG_F32, {3}, {1, 1, 1}), w2 = make(ctx.get(), AG_F32, {2}, {1, 1});
  T w64 = make(ctx.get(), AG_F64, {3}, {1, 1, 1});
  T idx = make(ctx.get(), AG_I64, {2, 3}, {0, 1, 2, 0, 1, 2});
  T v1 = make(ctx.get(), AG_F32, {3}, {1, 2, 3}), one = make(ctx.get(), AG_F32, {1, 3}, {1, 2, 3});
  const int64_t ns3[1] = {3}, ns4[1] = {4}, ns23[2] = {2, 3}, ns32[2] = {3, 2};
  ag_tensor* const sentinel = reinterpret_cast<ag_tensor*>(0x1);
  ag_tensor* out = sentinel;
  EXPECT_AG_ERROR(ag_op_layer_norm(&out, x, ns4, 1, nullptr, nullptr, 1e-5), AG_ERR_SHAPE,
                  "[ag_op_layer_norm] normalized_shape (4) does not match the last 1 dim of input shape (2,3)");
  EXPECT_AG_ERROR(ag_op_layer_norm(&out, x, ns32, 2, nullptr, nullptr, 1e-5), AG_ERR_SHAPE,
                  "[ag_op_layer_norm] normalized_shape (3,2) does not match the last 2 dims of input shape (2,3)");
  EXPECT_AG_ERROR(ag_op_layer_norm(&out, v1, ns23, 2, nullptr, nullptr, 1e-5), AG_ERR_SHAPE,
                  "[ag_op_layer_norm] normalized_shape (2,3) does not match the last 2 dims of input shape (3)");
  EXPECT_AG_ERROR(ag_op_layer_norm(&out, x, ns3, 0, nullptr, nullptr, 1e-5), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_layer_norm] normalized_shape must have at least 1 dim, got ()");
  EXPECT_AG_ERROR(ag_op_layer_norm(&out, x, ns3, 17, nullptr, nullptr, 1e-5), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_layer_norm] n 17 is outside 0..16");
  EXPECT_AG_ERROR(ag_op_layer_norm(&out, x, nullptr, 1, nullptr, nullptr, 1e-5), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_layer_norm] normalized_shape is NULL but n is 1");
  EXPECT_AG_ERROR(ag_op_layer_norm(&out, x, ns3, 1, w2, nullptr, 1e-5), AG_ERR_SHAPE,
                  "[ag_op_layer_norm] weight shape (2) does not match normalized_shape (3)");
  EXPECT_AG_ERROR(ag_op_layer_norm(&out, x, ns3, 1, w3, w2, 1e-5), AG_ERR_SHAPE,
                  "[ag_op_layer_norm] bias shape (2) does not match normalized_shape (3)");
  EXPECT_AG_ERROR(ag_op_layer_norm(&out, x, ns3, 1, w64, nullptr, 1e-5), AG_ERR_DTYPE,
                  "[ag_op_layer_norm] dtypes f32 and f64 differ (no implicit promotion; convert with ag_op_cast)");
  EXPECT_AG_ERROR(ag_op_layer_norm(&out, idx, ns3, 1, nullptr, nullptr, 1e-5), AG_ERR_DTYPE,
                  "[ag_op_layer_norm] expects a floating tensor (f32 or f64), got i64");
  EXPECT_AG_ERROR(ag_op_layer_norm(&out, nullptr, ns3, 1, nullptr, nullptr, 1e-5), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_layer_norm] input x is NULL (missing: did an earlier call fail?)");
  EXPECT_AG_ERROR(ag_op_layer_norm(nullptr, x, ns3, 1, nullptr, nullptr, 1e-5), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_layer_norm] the output pointer is NULL");
  EXPECT_AG_ERROR(ag_op_rms_norm(&out, x, ns4, 1, nullptr, 1e-5), AG_ERR_SHAPE,
                  "[ag_op_rms_norm] normalized_shape (4) does not match the last 1 dim of input shape (2,3)");
  EXPECT_AG_ERROR(ag_op_rms_norm(&out, x64, ns3, 1, w3, 1e-5), AG_ERR_DTYPE,
                  "[ag_op_rms_norm] dtypes f64 and f32 differ (no implicit promotion; convert with ag_op_cast)");
  EXPECT_AG_ERROR(ag_op_rms_norm(&out, x, ns3, 1, w2, 1e-5), AG_ERR_SHAPE,
                  "[ag_op_rms_norm] weight shape (2) does not match normalized_shape (3)");
  T xt = make(ctx.get(), AG_F32, {3, 2}, sample(6, -1, 1, 1));
  EXPECT_AG_ERROR(ag_op_layer_norm_backward(&out, xt, x, ns3, 1, nullptr, 1e-5), AG_ERR_SHAPE,
                  "[ag_op_layer_norm_backward] grad of shape (3,2) and input of shape (2,3) differ");
  EXPECT_AG_ERROR(ag_op_rms_norm_backward(&out, x64, x, ns3, 1, nullptr, 1e-5), AG_ERR_DTYPE,
                  "[ag_op_rms_norm_backward] dtypes f64 and f32 differ (no implicit promotion; convert with "
                  "ag_op_cast)");
  EXPECT_AG_ERROR(ag_op_rms_norm_backward(&out, x, x, ns4, 1, nullptr, 1e-5), AG_ERR_SHAPE,
                  "[ag_op_rms_norm_backward] normalized_shape (4) does not match the last 1 dim of input shape (2,3)");
  EXPECT_AG_ERROR(ag_op_layer_norm_weight_grad(&out, xt, x, ns3, 1, 1e-5), AG_ERR_SHAPE,
                  "[ag_op_layer_norm_weight_grad] grad of shape (3,2) and input of shape (2,3) differ");
  EXPECT_AG_ERROR(ag_op_rms_norm_weight_grad(&out, x, x, ns32, 2, 1e-5), AG_ERR_SHAPE,
                  "[ag_op_rms_norm_weight_grad] normalized_shape (3,2) does not match the last 2 dims of input shape "
                  "(2,3)");
  EXPECT_AG_ERROR(ag_op_layer_norm_backward(&out, nullptr, x, ns3, 1, nullptr, 1e-5), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_layer_norm_backward] input grad is NULL (missing: did an earlier call fail?)");
  // batch_norm: x is (N, C, ...), per-channel tensors are (C).
  EXPECT_AG_ERROR(ag_op_batch_norm(&out, v1, nullptr, nullptr, nullptr, nullptr, 1, 0.1, 1e-5), AG_ERR_SHAPE,
                  "[ag_op_batch_norm] input must have at least 2 dims (N, C, ...), got shape (3)");
  EXPECT_AG_ERROR(ag_op_batch_norm(&out, x, w2, w3, nullptr, nullptr, 1, 0.1, 1e-5), AG_ERR_SHAPE,
                  "[ag_op_batch_norm] running_mean shape (2) does not match the 3 channels (dim 1) of input shape "
                  "(2,3): expected (3)");
  EXPECT_AG_ERROR(ag_op_batch_norm(&out, x, nullptr, nullptr, w3, x, 1, 0.1, 1e-5), AG_ERR_SHAPE,
                  "[ag_op_batch_norm] bias shape (2,3) does not match the 3 channels (dim 1) of input shape "
                  "(2,3): expected (3)");
  EXPECT_AG_ERROR(ag_op_batch_norm(&out, x, w3, nullptr, nullptr, nullptr, 0, 0.1, 1e-5), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_batch_norm] evaluation mode (training = 0) needs running_mean and running_var");
  EXPECT_AG_ERROR(ag_op_batch_norm(&out, one, nullptr, nullptr, nullptr, nullptr, 1, 0.1, 1e-5),
                  AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_batch_norm] training needs more than 1 value per channel, got input shape (1,3)");
  EXPECT_AG_ERROR(ag_op_batch_norm(&out, x, w64, nullptr, nullptr, nullptr, 1, 0.1, 1e-5), AG_ERR_DTYPE,
                  "[ag_op_batch_norm] dtypes f32 and f64 differ (no implicit promotion; convert with ag_op_cast)");
  EXPECT_AG_ERROR(ag_op_batch_norm(&out, nullptr, nullptr, nullptr, nullptr, nullptr, 1, 0.1, 1e-5),
                  AG_ERR_INVALID_ARGUMENT, "[ag_op_batch_norm] input x is NULL (missing: did an earlier call fail?)");
  T x43 = make(ctx.get(), AG_F32, {2, 3, 2}, sample(12, -1, 1, 1));
  EXPECT_AG_ERROR(ag_op_group_norm(&out, x43, 2, nullptr, nullptr, 1e-5), AG_ERR_SHAPE,
                  "[ag_op_group_norm] the 3 channels (dim 1) of input shape (2,3,2) are not divisible by num_groups 2");
  EXPECT_AG_ERROR(ag_op_group_norm(&out, x43, 0, nullptr, nullptr, 1e-5), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_group_norm] num_groups must be positive, got 0");
  EXPECT_AG_ERROR(ag_op_group_norm(&out, x43, 3, w2, nullptr, 1e-5), AG_ERR_SHAPE,
                  "[ag_op_group_norm] weight shape (2) does not match the 3 channels (dim 1) of input shape (2,3,2): "
                  "expected (3)");
  EXPECT_AG_ERROR(ag_op_group_norm(&out, v1, 1, nullptr, nullptr, 1e-5), AG_ERR_SHAPE,
                  "[ag_op_group_norm] input must have at least 2 dims (N, C, ...), got shape (3)");
  EXPECT_AG_ERROR(ag_op_group_norm(&out, x43, 3, w64, nullptr, 1e-5), AG_ERR_DTYPE,
                  "[ag_op_group_norm] dtypes f32 and f64 differ (no implicit promotion; convert with ag_op_cast)");
  EXPECT_EQ(out, sentinel);
  // A failed batch_norm leaves the running statistics untouched.
  T rm = make(ctx.get(), AG_F32, {3}, {1, 2, 3});
  const int64_t v = ag_tensor_version(rm);
  EXPECT_EQ(ag_op_batch_norm(&out, x, rm, w2, nullptr, nullptr, 1, 0.1, 1e-5), AG_ERR_SHAPE);
  EXPECT_EQ(ag_tensor_version(rm), v);
  EXPECT_EQ(read(rm), (std::vector<double>{1, 2, 3}));
}

}  // namespace
