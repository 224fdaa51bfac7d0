// Forward values of convolution and pooling through the C API against
// direct loops written from PyTorch's definitions (f32 and f64): conv as a
// sum over each window, unfold/fold element by element, pooling windows with
// PyTorch's output size and divisor rules, max pooling ties and NaN. Also
// empty batches, strided inputs, 1 vs 2 threads, and bad input: status,
// precise message, out-parameter untouched.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "api_util.h"

namespace {

using namespace apitest;
using P = std::array<int64_t, 2>;

// Values rounded to f32 where the test runs in f32, so references see the same inputs.
Host as_dtype(Host h, ag_dtype dt) {
  if (dt == AG_F32) {
    for (double& x : h.v) x = static_cast<float>(x);
  }
  return h;
}

void expect_close(const Host& got, const Host& want, ag_dtype dt, const std::string& what) {
  ASSERT_EQ(got.shape, want.shape) << what;
  const double tol = dt == AG_F64 ? 1e-12 : 2e-5;
  for (size_t i = 0; i < want.v.size(); ++i) {
    if (std::isnan(want.v[i])) {
      EXPECT_TRUE(std::isnan(got.v[i])) << what << " element " << i;
      continue;
    }
    ASSERT_NEAR(got.v[i], want.v[i], tol * (1 + std::fabs(want.v[i]))) << what << " element " << i;
  }
}

int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d) { return (in + 2 * p - d * (k - 1) - 1) / s + 1; }

// ---- references ----

// y[n, o, a, b] = bias[o] + sum_{c, i, j} w[o, c, i, j] x[n, g*Cg + c, a*s - p + i*d, b*s - p + j*d].
Host ref_conv2d(const Host& x, const Host& w, const Host* bias, P s, P p, P d, int64_t groups) {
  const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  const int64_t OC = w.shape[0], Cg = w.shape[1], kh = w.shape[2], kw = w.shape[3], OCg = OC / groups;
  const int64_t OH = out_size(H, kh, s[0], p[0], d[0]), OW = out_size(W, kw, s[1], p[1], d[1]);
  Host y{{N, OC, OH, OW}, {}};
  y.v.assign(static_cast<size_t>(numel(y.shape)), 0.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < OC; ++o)
      for (int64_t a = 0; a < OH; ++a)
        for (int64_t b = 0; b < OW; ++b) {
          long double acc = bias ? bias->at(o) : 0.0;
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t i = 0; i < kh; ++i)
              for (int64_t j = 0; j < kw; ++j) {
                const int64_t h = a * s[0] - p[0] + i * d[0], v = b * s[1] - p[1] + j * d[1];
                if (h < 0 || h >= H || v < 0 || v >= W) continue;
                const int64_t ci = o / OCg * Cg + c;
                acc += static_cast<long double>(w.at(((o * Cg + c) * kh + i) * kw + j)) *
                       x.at(((n * C + ci) * H + h) * W + v);
              }
          y.v[static_cast<size_t>(((n * OC + o) * OH + a) * OW + b)] = static_cast<double>(acc);
        }
  return y;
}

Host ref_unfold(const Host& x, P k, P d, P p, P s) {
  const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  const int64_t OH = out_size(H, k[0], s[0], p[0], d[0]), OW = out_size(W, k[1], s[1], p[1], d[1]);
  Host y{{N, C * k[0] * k[1], OH * OW}, {}};
  y.v.assign(static_cast<size_t>(numel(y.shape)), 0.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < k[0]; ++i)
        for (int64_t j = 0; j < k[1]; ++j)
          for (int64_t a = 0; a < OH; ++a)
            for (int64_t b = 0; b < OW; ++b) {
              const int64_t h = a * s[0] - p[0] + i * d[0], v = b * s[1] - p[1] + j * d[1];
              const int64_t row = (c * k[0] + i) * k[1] + j;
              if (h >= 0 && h < H && v >= 0 && v < W) {
                y.v[static_cast<size_t>((n * y.shape[1] + row) * OH * OW + a * OW + b)] = x.at(((n * C + c) * H + h) * W + v);
              }
            }
  return y;
}

Host ref_fold(const Host& cols, P out, P k, P d, P p, P s) {
  const int64_t N = cols.shape[0], C = cols.shape[1] / (k[0] * k[1]), H = out[0], W = out[1];
  const int64_t OH = out_size(H, k[0], s[0], p[0], d[0]), OW = out_size(W, k[1], s[1], p[1], d[1]);
  Host y{{N, C, H, W}, {}};
  y.v.assign(static_cast<size_t>(numel(y.shape)), 0.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < k[0]; ++i)
        for (int64_t j = 0; j < k[1]; ++j)
          for (int64_t a = 0; a < OH; ++a)
            for (int64_t b = 0; b < OW; ++b) {
              const int64_t h = a * s[0] - p[0] + i * d[0], v = b * s[1] - p[1] + j * d[1];
              const int64_t row = (c * k[0] + i) * k[1] + j;
              if (h >= 0 && h < H && v >= 0 && v < W) {
                y.v[static_cast<size_t>(((n * C + c) * H + h) * W + v)] +=
                    cols.at((n * cols.shape[1] + row) * OH * OW + a * OW + b);
              }
            }
  return y;
}

// PyTorch's pooling output size (floor or ceil mode).
int64_t pool_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
  const int64_t num = in + 2 * p - d * (k - 1) - 1 + (ceil_mode ? s - 1 : 0);
  int64_t out = num / s + 1;
  if (ceil_mode && (out - 1) * s >= in + p) --out;
  return out;
}

// Max pooling; `indices` gets the flat h*W + w positions.
Host ref_max_pool(const Host& x, P k, P s, P p, P d, bool ceil_mode, Host* indices) {
  const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  const int64_t OH = pool_size(H, k[0], s[0], p[0], d[0], ceil_mode), OW = pool_size(W, k[1], s[1], p[1], d[1], ceil_mode);
  Host y{{N, C, OH, OW}, {}};
  *indices = Host{y.shape, {}};
  for (int64_t pl = 0; pl < N * C; ++pl)
    for (int64_t a = 0; a < OH; ++a)
      for (int64_t b = 0; b < OW; ++b) {
        double best = -std::numeric_limits<double>::infinity();
        int64_t arg = -1;
        for (int64_t i = 0; i < k[0]; ++i)
          for (int64_t j = 0; j < k[1]; ++j) {
            const int64_t h = a * s[0] - p[0] + i * d[0], v = b * s[1] - p[1] + j * d[1];
            if (h < 0 || h >= H || v < 0 || v >= W) continue;
            const double e = x.at((pl * H + h) * W + v);
            if (arg < 0) arg = h * W + v;  // all -inf: the first element
            if (e > best || std::isnan(e)) best = e, arg = h * W + v;
          }
        y.v.push_back(best);
        indices->v.push_back(static_cast<double>(arg));
      }
  return y;
}

Host ref_avg_pool(const Host& x, P k, P s, P p, bool ceil_mode, bool include_pad, int64_t divisor) {
  const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  const int64_t OH = pool_size(H, k[0], s[0], p[0], 1, ceil_mode), OW = pool_size(W, k[1], s[1], p[1], 1, ceil_mode);
  Host y{{N, C, OH, OW}, {}};
  for (int64_t pl = 0; pl < N * C; ++pl)
    for (int64_t a = 0; a < OH; ++a)
      for (int64_t b = 0; b < OW; ++b) {
        int64_t h0 = a * s[0] - p[0], w0 = b * s[1] - p[1];
        int64_t h1 = std::min(h0 + k[0], H + p[0]), w1 = std::min(w0 + k[1], W + p[1]);
        const int64_t padded = (h1 - h0) * (w1 - w0);
        h0 = std::max<int64_t>(h0, 0), w0 = std::max<int64_t>(w0, 0), h1 = std::min(h1, H), w1 = std::min(w1, W);
        double sum = 0;
        for (int64_t h = h0; h < h1; ++h)
          for (int64_t v = w0; v < w1; ++v) sum += x.at((pl * H + h) * W + v);
        const int64_t count = divisor ? divisor : include_pad ? padded : (h1 - h0) * (w1 - w0);
        y.v.push_back(sum / static_cast<double>(count));
      }
  return y;
}

Host ref_adaptive(const Host& x, P out) {
  const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  Host y{{N, C, out[0], out[1]}, {}};
  for (int64_t pl = 0; pl < N * C; ++pl)
    for (int64_t a = 0; a < out[0]; ++a)
      for (int64_t b = 0; b < out[1]; ++b) {
        const int64_t h0 = a * H / out[0], h1 = ((a + 1) * H + out[0] - 1) / out[0];
        const int64_t w0 = b * W / out[1], w1 = ((b + 1) * W + out[1] - 1) / out[1];
        double sum = 0;
        for (int64_t h = h0; h < h1; ++h)
          for (int64_t v = w0; v < w1; ++v) sum += x.at((pl * H + h) * W + v);
        y.v.push_back(sum / static_cast<double>((h1 - h0) * (w1 - w0)));
      }
  return y;
}

// ---- forward values ----

struct ConvCase {
  Shape x, w;
  bool bias;
  P s, p, d;
  int64_t groups;
};

TEST(Conv2d, MatchesDirectConvolution) {
  const std::vector<ConvCase> cases = {
      {{2, 3, 7, 6}, {4, 3, 3, 3}, true, {1, 1}, {0, 0}, {1, 1}, 1},
      {{1, 2, 9, 8}, {5, 2, 3, 2}, true, {2, 3}, {1, 2}, {1, 1}, 1},
      {{2, 4, 10, 9}, {6, 2, 3, 3}, true, {1, 1}, {2, 1}, {2, 3}, 2},
      {{1, 6, 5, 5}, {6, 1, 2, 2}, false, {1, 1}, {1, 1}, {1, 1}, 6},  // depthwise
      {{3, 1, 4, 4}, {2, 1, 4, 4}, true, {1, 1}, {0, 0}, {1, 1}, 1},   // kernel = input
      {{2, 3, 33, 35}, {8, 3, 5, 5}, true, {1, 1}, {2, 2}, {1, 1}, 1},  // parallel unfold
  };
  std::mt19937_64 rng(3);
  for (const ConvCase& c : cases) {
    for (ag_dtype dt : {AG_F32, AG_F64}) {
      Ctx ctx(0);
      const Host x = as_dtype(random_host(c.x, rng), dt), w = as_dtype(random_host(c.w, rng), dt);
      const Host b = as_dtype(random_host({c.w[0]}, rng), dt);
      ag_tensor *tx = new_tensor(ctx.get(), dt, x), *tw = new_tensor(ctx.get(), dt, w),
                *tb = new_tensor(ctx.get(), dt, b), *y = nullptr;
      ASSERT_AG(ag_op_conv2d(&y, tx, tw, c.bias ? tb : nullptr, c.s.data(), c.p.data(), c.d.data(), c.groups));
      expect_close(host_of(y), ref_conv2d(x, w, c.bias ? &b : nullptr, c.s, c.p, c.d, c.groups), dt, "conv2d");
      for (ag_tensor* t : {tx, tw, tb, y}) ag_tensor_release(t);
    }
  }
}

TEST(Conv2d, DefaultsUnbatchedAndStridedInput) {
  Ctx ctx(0);
  std::mt19937_64 rng(4);
  const Host x = random_host({2, 5, 6}, rng), w = random_host({3, 2, 2, 3}, rng);
  ag_tensor *tx = new_tensor(ctx.get(), AG_F64, x), *tw = new_tensor(ctx.get(), AG_F64, w), *y = nullptr;
  ASSERT_AG(ag_op_conv2d(&y, tx, tw, nullptr, nullptr, nullptr, nullptr, 1));
  Host want = ref_conv2d(Host{{1, 2, 5, 6}, x.v}, w, nullptr, {1, 1}, {0, 0}, {1, 1}, 1);
  want.shape.erase(want.shape.begin());
  expect_close(host_of(y), want, AG_F64, "unbatched conv2d");
  ag_tensor_release(y);
  // A transposed (non-contiguous) input: x^T over (H, W).
  ag_tensor* xt = nullptr;
  ASSERT_AG(ag_op_transpose(&xt, tx, 1, 2));
  ASSERT_AG(ag_op_conv2d(&y, xt, tw, nullptr, nullptr, nullptr, nullptr, 1));
  Host xtr{{1, 2, 6, 5}, {}};
  for (int64_t c = 0; c < 2; ++c)
    for (int64_t h = 0; h < 6; ++h)
      for (int64_t v = 0; v < 5; ++v) xtr.v.push_back(x.at((c * 5 + v) * 6 + h));
  want = ref_conv2d(xtr, w, nullptr, {1, 1}, {0, 0}, {1, 1}, 1);
  want.shape.erase(want.shape.begin());
  expect_close(host_of(y), want, AG_F64, "conv2d of a transposed input");
  for (ag_tensor* t : {tx, tw, xt, y}) ag_tensor_release(t);
}

TEST(Conv1d, MatchesDirectConvolution) {
  std::mt19937_64 rng(5);
  struct C1 {
    Shape x, w;
    int64_t s, p, d, g;
  };
  for (const C1& c : std::vector<C1>{{{2, 3, 11}, {4, 3, 3}, 1, 0, 1, 1}, {{1, 4, 12}, {2, 2, 3}, 2, 2, 2, 2},
                                    {{3, 9}, {2, 3, 4}, 3, 1, 1, 1}}) {
    for (ag_dtype dt : {AG_F32, AG_F64}) {
      Ctx ctx(0);
      const Host x = as_dtype(random_host(c.x, rng), dt), w = as_dtype(random_host(c.w, rng), dt);
      const Host b = as_dtype(random_host({c.w[0]}, rng), dt);
      ag_tensor *tx = new_tensor(ctx.get(), dt, x), *tw = new_tensor(ctx.get(), dt, w),
                *tb = new_tensor(ctx.get(), dt, b), *y = nullptr;
      ASSERT_AG(ag_op_conv1d(&y, tx, tw, tb, c.s, c.p, c.d, c.g));
      const bool batched = c.x.size() == 3;
      const Host x4{{batched ? c.x[0] : 1, c.x[batched ? 1 : 0], 1, c.x.back()}, x.v};
      Host want = ref_conv2d(x4, Host{{c.w[0], c.w[1], 1, c.w[2]}, w.v}, &b, {1, c.s}, {0, c.p}, {1, c.d}, c.g);
      want.shape.erase(want.shape.begin() + 2);
      if (!batched) want.shape.erase(want.shape.begin());
      expect_close(host_of(y), want, dt, "conv1d");
      for (ag_tensor* t : {tx, tw, tb, y}) ag_tensor_release(t);
    }
  }
}

TEST(UnfoldFold, MatchReferences) {
  std::mt19937_64 rng(6);
  struct U {
    Shape x;
    P k, d, p, s;
  };
  for (const U& c : std::vector<U>{{{2, 3, 5, 6}, {2, 3}, {1, 1}, {0, 0}, {1, 1}},
                                   {{1, 2, 9, 7}, {3, 2}, {2, 1}, {1, 2}, {2, 3}},
                                   {{1, 1, 3, 3}, {3, 3}, {1, 1}, {1, 1}, {1, 1}}}) {
    for (ag_dtype dt : {AG_F32, AG_F64}) {
      Ctx ctx(0);
      const Host x = as_dtype(random_host(c.x, rng), dt);
      ag_tensor *tx = new_tensor(ctx.get(), dt, x), *cols = nullptr, *back = nullptr;
      ASSERT_AG(ag_op_unfold(&cols, tx, c.k.data(), c.d.data(), c.p.data(), c.s.data()));
      expect_close(host_of(cols), ref_unfold(x, c.k, c.d, c.p, c.s), dt, "unfold");
      // fold of random blocks.
      const Host blocks = as_dtype(random_host(host_of(cols).shape, rng), dt);
      ag_tensor* tb = new_tensor(ctx.get(), dt, blocks);
      const P out{c.x[2], c.x[3]};
      ASSERT_AG(ag_op_fold(&back, tb, out.data(), c.k.data(), c.d.data(), c.p.data(), c.s.data()));
      expect_close(host_of(back), ref_fold(blocks, out, c.k, c.d, c.p, c.s), dt, "fold");
      for (ag_tensor* t : {tx, cols, back, tb}) ag_tensor_release(t);
    }
  }
}

TEST(MaxPool2d, MatchesReferenceWithIndices) {
  std::mt19937_64 rng(7);
  struct M {
    Shape x;
    P k, s, p, d;
    bool ceil;
  };
  for (const M& c : std::vector<M>{{{2, 3, 6, 7}, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false},
                                   {{1, 2, 7, 7}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, true},
                                   {{1, 2, 8, 9}, {3, 2}, {1, 2}, {1, 1}, {2, 3}, false},
                                   {{2, 1, 5, 5}, {2, 2}, {2, 2}, {1, 1}, {1, 1}, true}}) {
    for (ag_dtype dt : {AG_F32, AG_F64}) {
      Ctx ctx(0);
      const Host x = as_dtype(random_host(c.x, rng), dt);
      ag_tensor *tx = new_tensor(ctx.get(), dt, x), *y = nullptr, *idx = nullptr;
      ASSERT_AG(ag_op_max_pool2d_with_indices(&y, &idx, tx, c.k.data(), c.s.data(), c.p.data(), c.d.data(), c.ceil));
      Host want_idx;
      expect_close(host_of(y), ref_max_pool(x, c.k, c.s, c.p, c.d, c.ceil, &want_idx), dt, "max_pool2d");
      EXPECT_EQ(ag_tensor_dtype(idx), AG_I64);
      EXPECT_EQ(host_of(idx).v, want_idx.v);
      for (ag_tensor* t : {tx, y, idx}) ag_tensor_release(t);
    }
  }
}

TEST(MaxPool2d, TiesNaNAndInfinity) {
  Ctx ctx(0);
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  // Plane 2x4, windows 2x2 stride 2: [1 1 | nan 5 ; 1 0 | 2 nan] and a window of -inf.
  const Host x{{1, 2, 2, 4}, {1, 1, nan, 5, 1, 0, 2, nan, -inf, -inf, 3, 3, -inf, -inf, 3, 4}};
  for (ag_dtype dt : {AG_F32, AG_F64}) {
    ag_tensor *tx = new_tensor(ctx.get(), dt, x), *y = nullptr, *idx = nullptr;
    const P k{2, 2};
    ASSERT_AG(ag_op_max_pool2d_with_indices(&y, &idx, tx, k.data(), nullptr, nullptr, nullptr, 0));
    const Host got = host_of(y);
    EXPECT_EQ(got.v[0], 1.0);
    EXPECT_TRUE(std::isnan(got.v[1]));
    EXPECT_EQ(got.v[2], -inf);
    EXPECT_EQ(got.v[3], 4.0);
    // First maximum wins; the last NaN; all -inf: the window's first element.
    EXPECT_EQ(host_of(idx).v, (std::vector<double>{0, 7, 0, 7}));
    for (ag_tensor* t : {tx, y, idx}) ag_tensor_release(t);
  }
}

TEST(AvgPool2d, MatchesReference) {
  std::mt19937_64 rng(8);
  struct A {
    Shape x;
    P k, s, p;
    bool ceil, include;
    int64_t div;
  };
  for (const A& c : std::vector<A>{{{2, 3, 6, 7}, {2, 2}, {2, 2}, {0, 0}, false, true, 0},
                                   {{1, 2, 7, 6}, {3, 3}, {2, 2}, {1, 1}, false, true, 0},
                                   {{1, 2, 7, 6}, {3, 3}, {2, 2}, {1, 1}, false, false, 0},
                                   {{1, 2, 6, 8}, {3, 2}, {2, 3}, {1, 1}, true, true, 0},
                                   {{1, 2, 6, 8}, {3, 2}, {2, 3}, {1, 0}, true, false, 0},
                                   {{2, 1, 5, 5}, {2, 2}, {1, 1}, {1, 1}, false, true, 3}}) {
    for (ag_dtype dt : {AG_F32, AG_F64}) {
      Ctx ctx(0);
      const Host x = as_dtype(random_host(c.x, rng), dt);
      ag_tensor *tx = new_tensor(ctx.get(), dt, x), *y = nullptr;
      ASSERT_AG(ag_op_avg_pool2d(&y, tx, c.k.data(), c.s.data(), c.p.data(), c.ceil, c.include, c.div));
      expect_close(host_of(y), ref_avg_pool(x, c.k, c.s, c.p, c.ceil, c.include, c.div), dt, "avg_pool2d");
      for (ag_tensor* t : {tx, y}) ag_tensor_release(t);
    }
  }
}

TEST(AdaptiveAvgPool2d, MatchesReference) {
  std::mt19937_64 rng(9);
  for (const auto& [s, o] : std::vector<std::pair<Shape, P>>{
           {{2, 3, 7, 5}, {3, 2}}, {{1, 2, 4, 4}, {1, 1}}, {{1, 1, 3, 2}, {5, 4}}, {{1, 2, 10, 9}, {4, 9}}}) {
    for (ag_dtype dt : {AG_F32, AG_F64}) {
      Ctx ctx(0);
      const Host x = as_dtype(random_host(s, rng), dt);
      ag_tensor *tx = new_tensor(ctx.get(), dt, x), *y = nullptr;
      ASSERT_AG(ag_op_adaptive_avg_pool2d(&y, tx, o.data()));
      expect_close(host_of(y), ref_adaptive(x, o), dt, "adaptive_avg_pool2d");
      for (ag_tensor* t : {tx, y}) ag_tensor_release(t);
    }
  }
}

// Transposed (H, W) views are read in place: results equal the references
// on the transposed values.
TEST(ConvPool, TransposedInputsMatchReferences) {
  std::mt19937_64 rng(12);
  const Host x = random_host({2, 3, 6, 7}, rng);
  Host xt{{2, 3, 7, 6}, {}};
  for (int64_t pl = 0; pl < 6; ++pl)
    for (int64_t h = 0; h < 7; ++h)
      for (int64_t v = 0; v < 6; ++v) xt.v.push_back(x.at((pl * 6 + v) * 7 + h));
  const P k{3, 2}, s{2, 1}, p{1, 1}, d{1, 1}, o{3, 4};
  for (ag_dtype dt : {AG_F32, AG_F64}) {
    Ctx ctx(0);
    const Host want_in = as_dtype(xt, dt);
    ag_tensor *tx = new_tensor(ctx.get(), dt, as_dtype(x, dt)), *view = nullptr, *y = nullptr, *idx = nullptr;
    ASSERT_AG(ag_op_transpose(&view, tx, 2, 3));
    ASSERT_AG(ag_op_unfold(&y, view, k.data(), d.data(), p.data(), s.data()));
    expect_close(host_of(y), ref_unfold(want_in, k, d, p, s), dt, "unfold");
    ag_tensor_release(y);
    ASSERT_AG(ag_op_max_pool2d_with_indices(&y, &idx, view, k.data(), s.data(), p.data(), d.data(), 1));
    Host want_idx;
    expect_close(host_of(y), ref_max_pool(want_in, k, s, p, d, true, &want_idx), dt, "max_pool2d");
    EXPECT_EQ(host_of(idx).v, want_idx.v);
    ag_tensor_release(y);
    ASSERT_AG(ag_op_avg_pool2d(&y, view, k.data(), s.data(), p.data(), 1, 0, 0));
    expect_close(host_of(y), ref_avg_pool(want_in, k, s, p, true, false, 0), dt, "avg_pool2d");
    ag_tensor_release(y);
    ASSERT_AG(ag_op_adaptive_avg_pool2d(&y, view, o.data()));
    expect_close(host_of(y), ref_adaptive(want_in, o), dt, "adaptive_avg_pool2d");
    for (ag_tensor* t : {tx, view, y, idx}) ag_tensor_release(t);
  }
}

// ---- empty batches and thread counts ----

TEST(ConvPool, EmptyBatchGivesEmptyResults) {
  Ctx ctx(0);
  ag_tensor *x = nullptr, *w = nullptr, *y = nullptr;
  const Shape xs{0, 2, 5, 5}, ws{3, 2, 3, 3};
  ASSERT_AG(ag_tensor_zeros(&x, ctx.get(), AG_F32, xs.data(), 4));
  ASSERT_AG(ag_tensor_zeros(&w, ctx.get(), AG_F32, ws.data(), 4));
  const P k{2, 2}, one{1, 1}, o{2, 3};
  auto expect_shape = [&](ag_status st, const Shape& want, const char* what) {
    ASSERT_EQ(st, AG_OK) << what << ": " << ag_last_error_message();
    EXPECT_EQ(host_of(y).shape, want) << what;
    ag_tensor_release(y);
    y = nullptr;
  };
  expect_shape(ag_op_conv2d(&y, x, w, nullptr, nullptr, one.data(), nullptr, 1), Shape({0, 3, 5, 5}), "conv2d");
  expect_shape(ag_op_unfold(&y, x, k.data(), nullptr, nullptr, nullptr), Shape({0, 8, 16}), "unfold");
  expect_shape(ag_op_max_pool2d(&y, x, k.data(), nullptr, nullptr, nullptr, 0), Shape({0, 2, 2, 2}), "max_pool2d");
  expect_shape(ag_op_avg_pool2d(&y, x, k.data(), nullptr, nullptr, 1, 1, 0), Shape({0, 2, 3, 3}), "avg_pool2d");
  expect_shape(ag_op_adaptive_avg_pool2d(&y, x, o.data()), Shape({0, 2, 2, 3}), "adaptive_avg_pool2d");
  for (ag_tensor* t : {x, w}) ag_tensor_release(t);
}

// conv2d forward and backward give the same bits with 1 and 2 threads.
TEST(Conv2d, SameBitsOnOneAndTwoThreads) {
  std::mt19937_64 rng(10);
  const Host x = random_host({4, 3, 40, 40}, rng), w = random_host({8, 3, 3, 3}, rng), b = random_host({8}, rng);
  std::vector<Host> results;
  for (int32_t threads : {1, 2}) {
    Ctx ctx(threads);
    ag_tensor *tx = new_tensor(ctx.get(), AG_F32, x), *tw = new_tensor(ctx.get(), AG_F32, w),
              *tb = new_tensor(ctx.get(), AG_F32, b);
    ag_tensor_requires_grad(tx, 1);
    ag_tensor_requires_grad(tw, 1);
    ag_tensor *y = nullptr, *pooled = nullptr, *loss = nullptr, *gx = nullptr, *gw = nullptr;
    const P one{1, 1}, k{2, 2};
    ASSERT_AG(ag_op_conv2d(&y, tx, tw, tb, nullptr, one.data(), nullptr, 1));
    ASSERT_AG(ag_op_max_pool2d(&pooled, y, k.data(), nullptr, nullptr, nullptr, 0));
    ASSERT_AG(ag_op_sum(&loss, pooled));
    ASSERT_AG(ag_backward(loss, nullptr, nullptr));
    ASSERT_AG(ag_tensor_grad(&gx, tx));
    ASSERT_AG(ag_tensor_grad(&gw, tw));
    for (ag_tensor* t : {y, gx, gw}) results.push_back(host_of(t));
    for (ag_tensor* t : {tx, tw, tb, y, pooled, loss, gx, gw}) ag_tensor_release(t);
  }
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_EQ(results[i].v.size(), results[i + 3].v.size());
    EXPECT_EQ(0, std::memcmp(results[i].v.data(), results[i + 3].v.data(), results[i].v.size() * sizeof(double)))
        << "result " << i;
  }
}

// ---- bad input: status, message, *out untouched ----

class ConvErrors : public ApiTest {
 protected:
  ag_tensor* zeros(const Shape& s, ag_dtype dt = AG_F32) {
    ag_tensor* t = nullptr;
    ag_tensor_zeros(&t, ctx_, dt, s.data(), static_cast<int32_t>(s.size()));
    return own(t);
  }
  void expect_error(ag_status st, ag_status want, const std::string& message) {
    expect_error_untouched(st, out_, sentinel_, want, message);
  }
  ag_tensor* const sentinel_ = reinterpret_cast<ag_tensor*>(0x1);
  ag_tensor* out_ = sentinel_;
};

TEST_F(ConvErrors, Conv2d) {
  ag_tensor *x = zeros({2, 4, 5, 5}), *w = zeros({6, 3, 3, 3}), *w2 = zeros({6, 2, 3, 3}), *b = zeros({5});
  const P zero{0, 1}, big{3, 3}, neg{-1, 0};
  expect_error(ag_op_conv2d(&out_, x, w, nullptr, nullptr, nullptr, nullptr, 1), AG_ERR_SHAPE,
               "[ag_op_conv2d] input of shape (2,4,5,5) has 4 channels but weight of shape (6,3,3,3) with groups 1 "
               "expects 3");
  expect_error(ag_op_conv2d(&out_, x, w2, nullptr, nullptr, nullptr, nullptr, 4), AG_ERR_SHAPE,
               "[ag_op_conv2d] out_channels 6 (weight dim 0) is not divisible by groups 4");
  expect_error(ag_op_conv2d(&out_, x, w2, nullptr, nullptr, nullptr, nullptr, 0), AG_ERR_INVALID_ARGUMENT,
               "[ag_op_conv2d] groups must be positive, got 0");
  expect_error(ag_op_conv2d(&out_, x, w2, b, nullptr, nullptr, nullptr, 2), AG_ERR_SHAPE,
               "[ag_op_conv2d] bias shape (5) does not fit weight shape (6,2,3,3): expected (6)");
  expect_error(ag_op_conv2d(&out_, x, w2, nullptr, zero.data(), nullptr, nullptr, 2), AG_ERR_INVALID_ARGUMENT,
               "[ag_op_conv2d] stride must be positive, got (0, 1)");
  expect_error(ag_op_conv2d(&out_, x, w2, nullptr, nullptr, neg.data(), nullptr, 2), AG_ERR_INVALID_ARGUMENT,
               "[ag_op_conv2d] padding must be non-negative, got (-1, 0)");
  expect_error(ag_op_conv2d(&out_, x, w2, nullptr, nullptr, nullptr, big.data(), 2), AG_ERR_SHAPE,
               "[ag_op_conv2d] the padded input (5, 5) (input (5, 5), padding (0, 0)) is smaller than the dilated "
               "kernel (7, 7) (kernel_size (3, 3), dilation (3, 3))");
  expect_error(ag_op_conv2d(&out_, zeros({4, 5, 5, 1, 1}), w2, nullptr, nullptr, nullptr, nullptr, 2), AG_ERR_SHAPE,
               "[ag_op_conv2d] input must be 3-D (C, H, W) or 4-D (N, C, H, W), got shape (4,5,5,1,1)");
  expect_error(ag_op_conv2d(&out_, x, zeros({6, 2, 3}), nullptr, nullptr, nullptr, nullptr, 2), AG_ERR_SHAPE,
               "[ag_op_conv2d] weight must be 4-D (out_channels, in_channels/groups, kH, kW), got shape (6,2,3)");
  EXPECT_EQ(ag_op_conv2d(&out_, x, zeros({6, 2, 3, 3}, AG_F64), nullptr, nullptr, nullptr, nullptr, 2), AG_ERR_DTYPE);
  EXPECT_EQ(out_, sentinel_);
  expect_error(ag_op_conv2d(&out_, zeros({2, 4, 5, 5}, AG_I64), zeros({6, 2, 3, 3}, AG_I64), nullptr, nullptr,
                            nullptr, nullptr, 2),
               AG_ERR_DTYPE, "[ag_op_conv2d] expects a floating tensor (f32 or f64), got i64");
  expect_error(ag_op_conv2d(&out_, nullptr, w2, nullptr, nullptr, nullptr, nullptr, 2), AG_ERR_INVALID_ARGUMENT,
               "[ag_op_conv2d] input x is NULL (missing: did an earlier call fail?)");
  EXPECT_EQ(ag_op_conv2d(nullptr, x, w2, nullptr, nullptr, nullptr, nullptr, 2), AG_ERR_INVALID_ARGUMENT);
}

TEST_F(ConvErrors, Conv1d) {
  ag_tensor *x = zeros({2, 4, 5}), *w = zeros({6, 2, 3});
  expect_error(ag_op_conv1d(&out_, x, w, nullptr, 1, 0, 1, 1), AG_ERR_SHAPE,
               "[ag_op_conv1d] input of shape (2,4,5) has 4 channels but weight of shape (6,2,3) with groups 1 "
               "expects 2");
  expect_error(ag_op_conv1d(&out_, x, w, nullptr, 1, 0, 3, 2), AG_ERR_SHAPE,
               "[ag_op_conv1d] the padded input length 5 (length 5, padding 0) is smaller than the dilated kernel 7 "
               "(kernel size 3, dilation 3)");
  expect_error(ag_op_conv1d(&out_, x, w, nullptr, 0, 0, 1, 2), AG_ERR_INVALID_ARGUMENT,
               "[ag_op_conv1d] stride must be positive, got 0");
  expect_error(ag_op_conv1d(&out_, zeros({2, 4, 5, 5}), w, nullptr, 1, 0, 1, 2), AG_ERR_SHAPE,
               "[ag_op_conv1d] input must be 2-D (C, L) or 3-D (N, C, L), got shape (2,4,5,5)");
}

// Window arguments whose sizes overflow int64 are refused, not computed.
TEST_F(ConvErrors, WindowSizesThatOverflow) {
  constexpr int64_t kMax = INT64_MAX;
  ag_tensor *x = zeros({1, 2, 4, 4}), *w = zeros({2, 3, 3, 3}), *x1 = zeros({1, 2, 5}), *w1 = zeros({2, 3, 3});
  const P huge{kMax, 1}, k{2, 2}, ones{1, 1};
  expect_error(ag_op_conv_transpose1d(&out_, x1, w1, nullptr, kMax, 0, 0, 1, 1), AG_ERR_INVALID_ARGUMENT,
               "[ag_op_conv_transpose1d] the output size overflows int64 (4 * 9223372036854775807 + 3)");
  expect_error(ag_op_conv_transpose2d(&out_, x, w, nullptr, nullptr, nullptr, nullptr, 1, huge.data()),
               AG_ERR_INVALID_ARGUMENT,
               "[ag_op_conv_transpose2d] the dilated kernel size overflows int64 (9223372036854775807 * 2 + 1)");
  expect_error(ag_op_conv_transpose2d(&out_, x, w, nullptr, nullptr, huge.data(), nullptr, 1, nullptr),
               AG_ERR_INVALID_ARGUMENT,
               "[ag_op_conv_transpose2d] the output size overflows int64 (-2 * 9223372036854775807 + 6)");
  expect_error(ag_op_conv2d(&out_, x, zeros({2, 2, 3, 3}), nullptr, nullptr, huge.data(), nullptr, 1),
               AG_ERR_INVALID_ARGUMENT,
               "[ag_op_conv2d] the padded input height overflows int64 (2 * 9223372036854775807 + 4)");
  expect_error(ag_op_conv1d(&out_, x1, zeros({2, 2, 3}), nullptr, 1, 0, kMax, 1), AG_ERR_INVALID_ARGUMENT,
               "[ag_op_conv1d] the dilated kernel size overflows int64 (9223372036854775807 * 2 + 1)");
  expect_error(ag_op_unfold(&out_, x, k.data(), huge.data(), nullptr, nullptr), AG_ERR_INVALID_ARGUMENT,
               "[ag_op_unfold] the dilated kernel height overflows int64 (9223372036854775807 * 1 + 1)");
  expect_error(ag_op_max_pool2d(&out_, x, k.data(), nullptr, nullptr, huge.data(), 0), AG_ERR_INVALID_ARGUMENT,
               "[ag_op_max_pool2d] the dilated kernel height overflows int64 (9223372036854775807 * 1 + 1)");
  expect_error(ag_op_max_pool2d(&out_, x, k.data(), huge.data(), nullptr, ones.data(), 1), AG_ERR_INVALID_ARGUMENT,
               "[ag_op_max_pool2d] the window count overflows int64 (1 * 2 + 9223372036854775806)");
}

// Resampling factors whose sizes overflow int64 are refused, not computed.
TEST_F(ConvErrors, ResampleSizesThatOverflow) {
  constexpr int64_t kBig = int64_t{1} << 32;
  expect_error(ag_op_pixel_shuffle(&out_, zeros({1, 4, 2, 2}), kBig), AG_ERR_INVALID_ARGUMENT,
               "[ag_op_pixel_shuffle] upscale_factor^2 overflows int64 (4294967296 * 4294967296 + 0)");
  // An empty input may have any height: its output height must still fit.
  expect_error(ag_op_pixel_shuffle(&out_, zeros({0, 1, INT64_MAX / 2, 2}), 4), AG_ERR_SHAPE,
               "[ag_op_pixel_shuffle] channels 1 are not divisible by upscale_factor^2 = 16");
  expect_error(ag_op_pixel_shuffle(&out_, zeros({0, 16, INT64_MAX / 2, 2}), 4), AG_ERR_INVALID_ARGUMENT,
               "[ag_op_pixel_shuffle] the output height overflows int64 (4611686018427387903 * 4 + 0)");
  expect_error(ag_op_pixel_unshuffle(&out_, zeros({1, kBig, 0, 0}), kBig), AG_ERR_INVALID_ARGUMENT,
               "[ag_op_pixel_unshuffle] the output channels overflows int64 (4294967296 * 4294967296 + 0)");
  const int64_t size1[1] = {4};
  expect_error(ag_op_interpolate(&out_, zeros({1, 1, 4}), nullptr, 0, 1e300, AG_INTERP_NEAREST, 0),
               AG_ERR_INVALID_ARGUMENT, "[ag_op_interpolate] dim 2 of size 4 scaled by 1e+300 overflows int64");
  ASSERT_EQ(ag_op_interpolate(&out_, zeros({1, 1, 4}), size1, 1, 0.0, AG_INTERP_NEAREST, 0), AG_OK);
  ag_tensor_release(out_);
  out_ = sentinel_;
}

TEST_F(ConvErrors, UnfoldFold) {
  ag_tensor* x = zeros({1, 2, 4, 4});
  const P k{2, 2}, out{4, 4}, bad_out{5, 4};
  expect_error(ag_op_unfold(&out_, x, nullptr, nullptr, nullptr, nullptr), AG_ERR_INVALID_ARGUMENT,
               "[ag_op_unfold] kernel_size is NULL");
  expect_error(ag_op_unfold(&out_, zeros({1, 0, 4, 4}), k.data(), nullptr, nullptr, nullptr), AG_ERR_SHAPE,
               "[ag_op_unfold] input of shape (1,0,4,4) has a zero-size dim other than the batch dim");
  expect_error(ag_op_fold(&out_, zeros({1, 7, 9}), out.data(), k.data(), nullptr, nullptr, nullptr), AG_ERR_SHAPE,
               "[ag_op_fold] input of shape (1,7,9): its channel dim 7 is not divisible by kh*kw = 4 (kernel_size "
               "(2, 2))");
  expect_error(ag_op_fold(&out_, zeros({1, 8, 9}), bad_out.data(), k.data(), nullptr, nullptr, nullptr), AG_ERR_SHAPE,
               "[ag_op_fold] input of shape (1,8,9) has 9 blocks but output_size (5, 4) has 4 x 3 = 12 window "
               "positions");
}

TEST_F(ConvErrors, Pooling) {
  ag_tensor* x = zeros({1, 2, 4, 4});
  const P k{2, 2}, pad{2, 0}, k5{5, 5}, neg{-1, 2};
  expect_error(ag_op_max_pool2d(&out_, x, k.data(), nullptr, pad.data(), nullptr, 0), AG_ERR_INVALID_ARGUMENT,
               "[ag_op_max_pool2d] padding (2, 0) must be at most half of the dilated kernel (2, 2)");
  expect_error(ag_op_avg_pool2d(&out_, x, k.data(), nullptr, pad.data(), 0, 1, 0), AG_ERR_INVALID_ARGUMENT,
               "[ag_op_avg_pool2d] padding (2, 0) must be at most half of the kernel (2, 2)");
  expect_error(ag_op_max_pool2d(&out_, x, k5.data(), nullptr, nullptr, nullptr, 0), AG_ERR_SHAPE,
               "[ag_op_max_pool2d] input of shape (1,2,4,4) gives an output size (0, 0) (kernel_size (5, 5), stride "
               "(5, 5), padding (0, 0), dilation (1, 1)): too small");
  ag_tensor* idx = sentinel_;
  expect_error(ag_op_max_pool2d_with_indices(&out_, &idx, x, nullptr, nullptr, nullptr, nullptr, 0),
               AG_ERR_INVALID_ARGUMENT, "[ag_op_max_pool2d_with_indices] kernel_size is NULL");
  EXPECT_EQ(idx, sentinel_);
  expect_error(ag_op_max_pool2d_with_indices(&out_, nullptr, x, k.data(), nullptr, nullptr, nullptr, 0),
               AG_ERR_INVALID_ARGUMENT, "[ag_op_max_pool2d_with_indices] the indices output pointer is NULL");
  expect_error(ag_op_adaptive_avg_pool2d(&out_, x, neg.data()), AG_ERR_INVALID_ARGUMENT,
               "[ag_op_adaptive_avg_pool2d] output_size must be non-negative, got (-1, 2)");
  expect_error(ag_op_adaptive_avg_pool2d(&out_, zeros({4, 4}), k.data()), AG_ERR_SHAPE,
               "[ag_op_adaptive_avg_pool2d] input must be 3-D (C, H, W) or 4-D (N, C, H, W), got shape (4,4)");
  expect_error(ag_op_avg_pool2d(&out_, x, k.data(), nullptr, nullptr, 0, 1, -2), AG_ERR_INVALID_ARGUMENT,
               "[ag_op_avg_pool2d] divisor_override must be positive (or 0: none), got -2");
}

}  // namespace
