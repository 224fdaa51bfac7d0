// The random generator and the random ops: Philox4x32-10 against the
// published known answers, values against a reference written here from the
// Philox words, statistics over 1e6 samples, seeding and state replay,
// bitwise the same at 1 and 2 threads, dropout's scaling and gradient, empty
// tensors, and every error status with its message.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "api_util.h"
#include "kernels/philox.h"

namespace {

using namespace apitest;

using ag::kernels::philox4x32_10;
using ag::kernels::PhiloxWords;

// Known-answer vectors of philox4x32 with 10 rounds, from the file
// tests/kat_vectors of the Random123 distribution (D. E. Shaw Research):
// counter (4 words), key (2 words), expected output (4 words).
TEST(Philox, KnownAnswers) {
  struct Kat {
    PhiloxWords ctr;
    uint32_t key[2];
    PhiloxWords want;
  };
  const Kat kats[] = {
      {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
       {0xffffffff, 0xffffffff},
       {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
       {0xa4093822, 0x299f31d0},
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (const Kat& k : kats) EXPECT_EQ(philox4x32_10(k.ctr, k.key[0], k.key[1]), k.want);
}

class Random : public ApiTest {
 protected:
  ag_tensor* rand(ag_context* c, ag_dtype dt, const Shape& s) {
    ag_tensor* t = nullptr;
    EXPECT_EQ(ag_op_rand(&t, c, dt, s.data(), static_cast<int32_t>(s.size())), AG_OK) << ag_last_error_message();
    return own(t);
  }
  ag_tensor* randn(ag_context* c, ag_dtype dt, const Shape& s) {
    ag_tensor* t = nullptr;
    EXPECT_EQ(ag_op_randn(&t, c, dt, s.data(), static_cast<int32_t>(s.size())), AG_OK) << ag_last_error_message();
    return own(t);
  }
  static uint64_t offset(ag_context* c) {
    uint64_t seed = 0, off = 0;
    EXPECT_EQ(ag_context_rng_state(c, &seed, &off), AG_OK);
    return off;
  }
};

// The reference: the words of block b under seed s, as the generator's
// documentation lays them out (counter = (b low, b high, 0, 0), key = seed).
PhiloxWords block(uint64_t seed, uint64_t b) {
  return philox4x32_10({static_cast<uint32_t>(b), static_cast<uint32_t>(b >> 32), 0, 0}, static_cast<uint32_t>(seed),
                       static_cast<uint32_t>(seed >> 32));
}
float ref_uniform_f32(uint64_t seed, uint64_t off, int64_t e) {
  return static_cast<float>(block(seed, off + e / 4)[e % 4] >> 8) / 16777216.0f;
}
double ref_uniform_f64(uint64_t seed, uint64_t off, int64_t e, int half = -1) {
  const PhiloxWords w = block(seed, off + e / 2);
  const int j = half >= 0 ? half : static_cast<int>(e % 2);
  const uint64_t bits = (uint64_t{w[2 * j]} << 32) | w[2 * j + 1];
  return static_cast<double>(bits >> 11) / 9007199254740992.0;
}

TEST_F(Random, DefaultStateAndSeeding) {
  uint64_t seed = 0, off = 1;
  ASSERT_AG(ag_context_rng_state(ctx_, &seed, &off));
  EXPECT_EQ(seed, AG_RNG_DEFAULT_SEED);
  EXPECT_EQ(off, 0u);
  rand(ctx_, AG_F32, {10});  // 3 blocks of 4 words
  EXPECT_EQ(offset(ctx_), 3u);
  rand(ctx_, AG_F64, {5});  // 3 blocks of 2 values
  EXPECT_EQ(offset(ctx_), 6u);
  ASSERT_AG(ag_context_manual_seed(ctx_, 1234));
  ASSERT_AG(ag_context_seed(ctx_, &seed));
  EXPECT_EQ(seed, 1234u);
  EXPECT_EQ(offset(ctx_), 0u);
  ag_tensor* p = f64({5}, {0.5, 0.5, 0.5, 0.5, 0.5});
  ag_tensor* b = nullptr;
  ASSERT_AG(ag_op_bernoulli(&b, p));  // one word per draw: 2 blocks
  own(b);
  EXPECT_EQ(offset(ctx_), 2u);
  ag_tensor* r = nullptr;
  const int64_t s3[1] = {3};
  ASSERT_AG(ag_op_randint(&r, ctx_, s3, 1, 0, 10));  // two words per value: 2 blocks
  own(r);
  EXPECT_EQ(offset(ctx_), 4u);
}

TEST_F(Random, ValuesMatchTheReference) {
  ASSERT_AG(ag_context_set_rng_state(ctx_, 77, 5));
  const auto u32 = data_of<float>(rand(ctx_, AG_F32, {3, 3}));
  for (int64_t e = 0; e < 9; ++e) EXPECT_EQ(u32[e], ref_uniform_f32(77, 5, e)) << e;
  const uint64_t off = offset(ctx_);
  EXPECT_EQ(off, 8u);
  const auto u64 = data_of<double>(rand(ctx_, AG_F64, {5}));
  for (int64_t e = 0; e < 5; ++e) EXPECT_EQ(u64[e], ref_uniform_f64(77, off, e)) << e;
  // Box-Muller on (u1, u2) of one f64 block.
  ASSERT_AG(ag_context_set_rng_state(ctx_, 77, 40));
  const auto z = data_of<double>(randn(ctx_, AG_F64, {4}));
  for (int64_t e = 0; e < 4; ++e) {
    const double u1 = ref_uniform_f64(77, 40, (e / 2) * 2, 0), u2 = ref_uniform_f64(77, 40, (e / 2) * 2, 1);
    const double r = std::sqrt(-2.0 * std::log(1.0 - u1)), t = 2.0 * M_PI * u2;
    EXPECT_NEAR(z[e], e % 2 == 0 ? r * std::cos(t) : r * std::sin(t), 1e-12) << e;
  }
  // Bernoulli: one whole word per draw.
  ASSERT_AG(ag_context_set_rng_state(ctx_, 9, 0));
  ag_tensor* b = nullptr;
  const int64_t s[1] = {6};
  ASSERT_AG(ag_op_bernoulli_scalar(&b, ctx_, AG_F64, s, 1, 0.4));
  own(b);
  const auto bv = data_of<double>(b);
  for (int64_t e = 0; e < 6; ++e) {
    EXPECT_EQ(bv[e], block(9, e / 4)[e % 4] / 4294967296.0 < 0.4 ? 1.0 : 0.0) << e;
  }
}

// Element e depends on block offset + e / 4 only: a later window of a long
// draw equals a short draw that starts at that block.
TEST_F(Random, ElementsDependOnlyOnTheirCounter) {
  ASSERT_AG(ag_context_set_rng_state(ctx_, 5, 100));
  const auto whole = data_of<float>(rand(ctx_, AG_F32, {12}));
  ASSERT_AG(ag_context_set_rng_state(ctx_, 5, 102));
  const auto tail = data_of<float>(rand(ctx_, AG_F32, {4}));
  EXPECT_EQ(std::vector<float>(whole.begin() + 8, whole.end()), tail);
}

TEST_F(Random, SameSeedSameBitsOtherSeedOtherBits) {
  ag_context* a = make_ctx(1);
  ag_context* b = make_ctx(1);
  ASSERT_AG(ag_context_manual_seed(a, 7));
  ASSERT_AG(ag_context_manual_seed(b, 7));
  EXPECT_EQ(data_of<double>(randn(a, AG_F64, {100})), data_of<double>(randn(b, AG_F64, {100})));
  EXPECT_EQ(data_of<float>(rand(a, AG_F32, {100})), data_of<float>(rand(b, AG_F32, {100})));
  ASSERT_AG(ag_context_manual_seed(b, 8));
  ASSERT_AG(ag_context_manual_seed(a, 7));
  const auto x = data_of<float>(rand(a, AG_F32, {100}));
  const auto y = data_of<float>(rand(b, AG_F32, {100}));
  int same = 0;
  for (size_t i = 0; i < x.size(); ++i) same += x[i] == y[i];
  EXPECT_LT(same, 3);
  // Consecutive draws differ too.
  EXPECT_NE(data_of<float>(rand(a, AG_F32, {100})), x);
}

TEST_F(Random, StateSaveAndRestoreReplays) {
  rand(ctx_, AG_F32, {7});
  uint64_t seed = 0, off = 0;
  ASSERT_AG(ag_context_rng_state(ctx_, &seed, &off));
  const auto a = data_of<double>(randn(ctx_, AG_F64, {33}));
  const auto a2 = data_of<float>(rand(ctx_, AG_F32, {5}));
  ASSERT_AG(ag_context_set_rng_state(ctx_, seed, off));
  EXPECT_EQ(data_of<double>(randn(ctx_, AG_F64, {33})), a);
  EXPECT_EQ(data_of<float>(rand(ctx_, AG_F32, {5})), a2);
}

TEST_F(Random, BitwiseSameAtOneAndTwoThreads) {
  ag_context* c1 = make_ctx(1);
  ag_context* c2 = make_ctx(2);
  const Shape big = {3, 100001};  // several parallel chunks, a short last one
  for (ag_context* c : {c1, c2}) ASSERT_AG(ag_context_manual_seed(c, 99));
  EXPECT_EQ(data_of<float>(rand(c1, AG_F32, big)), data_of<float>(rand(c2, AG_F32, big)));
  EXPECT_EQ(data_of<double>(randn(c1, AG_F64, big)), data_of<double>(randn(c2, AG_F64, big)));
  EXPECT_EQ(data_of<float>(randn(c1, AG_F32, big)), data_of<float>(randn(c2, AG_F32, big)));
  ag_tensor *r1 = nullptr, *r2 = nullptr, *d1 = nullptr, *d2 = nullptr;
  ASSERT_AG(ag_op_randint(&r1, c1, big.data(), 2, -5, 1000));
  ASSERT_AG(ag_op_randint(&r2, c2, big.data(), 2, -5, 1000));
  own(r1), own(r2);
  EXPECT_EQ(data_of<int64_t>(r1), data_of<int64_t>(r2));
  ag_tensor* x1 = nullptr;
  ag_tensor* x2 = nullptr;
  ASSERT_AG(ag_tensor_ones(&x1, c1, AG_F32, big.data(), 2));
  ASSERT_AG(ag_tensor_ones(&x2, c2, AG_F32, big.data(), 2));
  own(x1), own(x2);
  ASSERT_AG(ag_op_dropout(&d1, x1, 0.2, 1));
  ASSERT_AG(ag_op_dropout(&d2, x2, 0.2, 1));
  own(d1), own(d2);
  EXPECT_EQ(data_of<float>(d1), data_of<float>(d2));
  ag_tensor *b1 = nullptr, *b2 = nullptr;
  ASSERT_AG(ag_op_bernoulli(&b1, rand(c1, AG_F64, big)));
  ASSERT_AG(ag_op_bernoulli(&b2, rand(c2, AG_F64, big)));
  own(b1), own(b2);
  EXPECT_EQ(data_of<double>(b1), data_of<double>(b2));
  EXPECT_EQ(offset(c1), offset(c2));
}

struct Moments {
  double mean = 0, var = 0, lo = INFINITY, hi = -INFINITY;
};
template <class T>
Moments moments(const std::vector<T>& v) {
  Moments m;
  for (T x : v) m.mean += x, m.lo = std::min<double>(m.lo, x), m.hi = std::max<double>(m.hi, x);
  m.mean /= static_cast<double>(v.size());
  for (T x : v) m.var += (x - m.mean) * (x - m.mean);
  m.var /= static_cast<double>(v.size() - 1);
  return m;
}

// Means and variances within about 5 standard errors over 1e6 samples.
TEST_F(Random, Statistics) {
  const Shape n = {1000000};
  const Moments u = moments(data_of<float>(rand(ctx_, AG_F32, n)));
  EXPECT_NEAR(u.mean, 0.5, 5 * std::sqrt(1.0 / 12 / 1e6));
  EXPECT_NEAR(u.var, 1.0 / 12, 5 * std::sqrt(1.0 / 180 / 1e6));
  EXPECT_GE(u.lo, 0.0);
  EXPECT_LT(u.hi, 1.0);
  const Moments z = moments(data_of<double>(randn(ctx_, AG_F64, n)));
  EXPECT_NEAR(z.mean, 0.0, 5e-3);
  EXPECT_NEAR(z.var, 1.0, 5 * std::sqrt(2.0 / 1e6));
  const Moments z32 = moments(data_of<float>(randn(ctx_, AG_F32, n)));
  EXPECT_NEAR(z32.mean, 0.0, 5e-3);
  EXPECT_NEAR(z32.var, 1.0, 5 * std::sqrt(2.0 / 1e6));
  EXPECT_LT(std::max(-z32.lo, z32.hi), 5.8);

  ag_tensor* t = nullptr;
  ASSERT_AG(ag_op_uniform(&t, ctx_, AG_F64, n.data(), 1, -2, 3));
  const Moments w = moments(data_of<double>(own(t)));
  EXPECT_NEAR(w.mean, 0.5, 5 * 5 * std::sqrt(1.0 / 12 / 1e6));
  EXPECT_GE(w.lo, -2.0);
  EXPECT_LT(w.hi, 3.0);
  ASSERT_AG(ag_op_normal(&t, ctx_, AG_F32, n.data(), 1, 1.5, 2));
  const Moments g = moments(data_of<float>(own(t)));
  EXPECT_NEAR(g.mean, 1.5, 5 * 2e-3);
  EXPECT_NEAR(g.var, 4.0, 5 * 4 * std::sqrt(2.0 / 1e6));
  ASSERT_AG(ag_op_bernoulli_scalar(&t, ctx_, AG_F64, n.data(), 1, 0.3));
  const Moments b = moments(data_of<double>(own(t)));
  EXPECT_NEAR(b.mean, 0.3, 5 * std::sqrt(0.21 / 1e6));
  ASSERT_AG(ag_op_randint(&t, ctx_, n.data(), 1, -3, 7));
  const auto ri = data_of<int64_t>(own(t));
  std::vector<int64_t> counts(10, 0);
  for (int64_t v : ri) {
    ASSERT_GE(v, -3);
    ASSERT_LT(v, 7);
    ++counts[static_cast<size_t>(v + 3)];
  }
  for (int64_t c : counts) EXPECT_NEAR(static_cast<double>(c) / 1e6, 0.1, 5 * std::sqrt(0.09 / 1e6));
}

TEST_F(Random, BernoulliOfATensor) {
  // p of 0 and 1 are certain; other rows converge to their p; p may be a view.
  const int64_t cols = 200000;
  std::vector<double> p(4 * cols);
  const double rows[4] = {0.0, 1.0, 0.25, 0.9};
  for (int r = 0; r < 4; ++r)
    for (int64_t c = 0; c < cols; ++c) p[r * cols + c] = rows[r];
  ag_tensor* pt = f64({4, cols}, p);
  ag_tensor* ptt = nullptr;
  ASSERT_AG(ag_op_transpose(&ptt, pt, 0, 1));  // (cols, 4), strided
  own(ptt);
  ag_tensor* y = nullptr;
  ASSERT_AG(ag_op_bernoulli(&y, ptt));
  own(y);
  EXPECT_EQ(shape(y), (Shape{cols, 4}));
  EXPECT_EQ(ag_tensor_dtype(y), AG_F64);
  const auto v = data_of<double>(y);
  double sums[4] = {};
  for (int64_t c = 0; c < cols; ++c)
    for (int r = 0; r < 4; ++r) {
      ASSERT_TRUE(v[c * 4 + r] == 0.0 || v[c * 4 + r] == 1.0);
      sums[r] += v[c * 4 + r];
    }
  EXPECT_EQ(sums[0], 0.0);
  EXPECT_EQ(sums[1], static_cast<double>(cols));
  EXPECT_NEAR(sums[2] / cols, 0.25, 5 * std::sqrt(0.25 * 0.75 / cols));
  EXPECT_NEAR(sums[3] / cols, 0.9, 5 * std::sqrt(0.9 * 0.1 / cols));
}

TEST_F(Random, NormalIsFiniteAndUniformStaysBelowHigh) {
  const auto z = data_of<float>(randn(ctx_, AG_F32, {1 << 20}));
  for (float v : z) ASSERT_TRUE(std::isfinite(v));
  ag_tensor* t = nullptr;
  const int64_t n[1] = {1 << 16};
  // A range so narrow in f32 that low + (high - low) u rounds to high often.
  ASSERT_AG(ag_op_uniform(&t, ctx_, AG_F32, n, 1, 1.0, 1.0000001));
  for (float v : data_of<float>(own(t))) ASSERT_TRUE(v >= 1.0f && v < 1.0000001f) << v;
  ASSERT_AG(ag_op_uniform(&t, ctx_, AG_F64, n, 1, 2.5, 2.5));
  for (double v : data_of<double>(own(t))) ASSERT_EQ(v, 2.5);
}

TEST_F(Random, EmptyAndZeroDim) {
  const uint64_t before = offset(ctx_);
  ag_tensor* t = rand(ctx_, AG_F32, {0, 3});
  EXPECT_EQ(shape(t), (Shape{0, 3}));
  ag_tensor* p = f64({0}, {});
  ag_tensor* b = nullptr;
  ASSERT_AG(ag_op_bernoulli(&b, p));
  own(b);
  EXPECT_EQ(shape(b), Shape{0});
  ag_tensor* d = nullptr;
  ASSERT_AG(ag_op_dropout(&d, p, 0.5, 1));
  own(d);
  EXPECT_EQ(shape(d), Shape{0});
  EXPECT_EQ(offset(ctx_), before);
  ag_tensor* s = randn(ctx_, AG_F64, {});
  EXPECT_EQ(ag_tensor_ndim(s), 0);
  EXPECT_EQ(offset(ctx_), before + 1);
}

TEST_F(Random, DropoutScalesAndItsGradientIsTheMask) {
  const int64_t n = 100000;
  std::vector<double> xv(n);
  for (int64_t i = 0; i < n; ++i) xv[i] = 1.0 + static_cast<double>(i % 7);
  ag_tensor* x = f64({n}, xv);
  ASSERT_AG(ag_tensor_requires_grad(x, 1));
  ag_tensor* y = nullptr;
  ASSERT_AG(ag_op_dropout(&y, x, 0.25, 1));
  own(y);
  const auto yv = data_of<double>(y);
  int64_t kept = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (yv[i] != 0.0) {
      ++kept;
      EXPECT_DOUBLE_EQ(yv[i], xv[i] / 0.75);
    }
  }
  EXPECT_NEAR(static_cast<double>(kept) / n, 0.75, 5 * std::sqrt(0.75 * 0.25 / n));
  ag_tensor* s = nullptr;
  ASSERT_AG(ag_op_sum(&s, y));
  own(s);
  ASSERT_AG(ag_backward(s, nullptr, nullptr));
  ag_tensor* g = nullptr;
  ASSERT_AG(ag_tensor_grad(&g, x));
  own(g);
  const auto gv = data_of<double>(g);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(gv[i], yv[i] == 0.0 ? 0.0 : 1.0 / 0.75) << i;
}

TEST_F(Random, DropoutPassThroughAndAllDropped) {
  ag_tensor* x = f64({2, 2}, {1, -2, 3, NAN});
  const uint64_t before = offset(ctx_);
  for (const auto& [p, training] : {std::pair<double, int32_t>{0.5, 0}, {0.0, 1}}) {
    ag_tensor* y = nullptr;
    ASSERT_AG(ag_op_dropout(&y, x, p, training));
    own(y);
    const auto v = data_of<double>(y);
    EXPECT_EQ(v[0], 1.0);
    EXPECT_TRUE(std::isnan(v[3]));
  }
  EXPECT_EQ(offset(ctx_), before);  // nothing drawn
  ag_tensor* y = nullptr;
  ASSERT_AG(ag_op_dropout(&y, x, 1.0, 1));
  own(y);
  EXPECT_EQ(offset(ctx_), before);
  const auto v = data_of<double>(y);
  EXPECT_EQ(v[0], 0.0);
  EXPECT_EQ(v[2], 0.0);
  EXPECT_TRUE(std::isnan(v[3]));  // NaN * 0, as PyTorch
}

TEST_F(Random, DropoutMaskSameForF32AndF64) {
  ag_tensor *a = nullptr, *b = nullptr, *ya = nullptr, *yb = nullptr;
  const int64_t s[1] = {1001};
  ASSERT_AG(ag_tensor_ones(&a, ctx_, AG_F32, s, 1));
  ASSERT_AG(ag_tensor_ones(&b, ctx_, AG_F64, s, 1));
  own(a), own(b);
  ASSERT_AG(ag_context_manual_seed(ctx_, 3));
  ASSERT_AG(ag_op_dropout(&ya, a, 0.6, 1));
  ASSERT_AG(ag_context_manual_seed(ctx_, 3));
  ASSERT_AG(ag_op_dropout(&yb, b, 0.6, 1));
  own(ya), own(yb);
  const auto va = data_of<float>(ya);
  const auto vb = data_of<double>(yb);
  for (size_t i = 0; i < va.size(); ++i) ASSERT_EQ(va[i] == 0.0f, vb[i] == 0.0) << i;
}

// Random ops racing on one context draw disjoint blocks.
TEST_F(Random, ConcurrentDrawsAreDisjoint) {
  ag_context* c = make_ctx(2);
  ASSERT_AG(ag_context_manual_seed(c, 1));
  std::vector<std::vector<float>> got(2);
  auto work = [&](int k) {
    for (int i = 0; i < 200; ++i) {
      ag_tensor* t = nullptr;
      const int64_t s[1] = {4};  // one block each
      if (ag_op_rand(&t, c, AG_F32, s, 1) != AG_OK) return;
      std::vector<float> v(4);
      ag_tensor_copy_data(t, v.data(), sizeof(float) * 4);
      got[k].insert(got[k].end(), v.begin(), v.end());
      ag_tensor_release(t);
    }
  };
  std::thread t0(work, 0), t1(work, 1);
  t0.join();
  t1.join();
  EXPECT_EQ(offset(c), 400u);
  std::set<float> all(got[0].begin(), got[0].end());
  all.insert(got[1].begin(), got[1].end());
  EXPECT_GT(all.size(), 1590u);  // 1600 draws of 2^24 values: few repeats by chance
  // Every block of 0..399 was drawn exactly once.
  std::set<uint64_t> blocks;
  for (const auto& g : got)
    for (size_t i = 0; i < g.size(); i += 4) {
      for (uint64_t b = 0; b < 400; ++b) {
        if (ref_uniform_f32(1, b, 0) == g[i] && ref_uniform_f32(1, b, 1) == g[i + 1]) blocks.insert(b);
      }
    }
  EXPECT_EQ(blocks.size(), 400u);
}

TEST_F(Random, Errors) {
  ag_tensor* y = reinterpret_cast<ag_tensor*>(&y);  // must stay untouched
  ag_tensor* const sentinel = y;
  const int64_t s[2] = {2, 3};
  const int64_t neg[1] = {-2};
  const uint64_t before = offset(ctx_);
  EXPECT_AG_ERROR(ag_op_rand(&y, ctx_, AG_I64, s, 2), AG_ERR_DTYPE, "[ag_op_rand] dtype must be f32 or f64, got i64");
  EXPECT_AG_ERROR(ag_op_randn(&y, ctx_, AG_BOOL, s, 2), AG_ERR_DTYPE,
                  "[ag_op_randn] dtype must be f32 or f64, got bool");
  EXPECT_AG_ERROR(ag_op_rand(&y, ctx_, static_cast<ag_dtype>(7), s, 2), AG_ERR_DTYPE,
                  "[ag_op_rand] dtype 7 is not one of AG_F32, AG_F64, AG_I64, AG_BOOL");
  EXPECT_AG_ERROR(ag_op_rand(&y, ctx_, AG_F32, neg, 1), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_rand] size -2 of dim 0 is negative");
  EXPECT_AG_ERROR(ag_op_rand(&y, ctx_, AG_F32, nullptr, 1), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_rand] shape is NULL but ndim is 1");
  EXPECT_AG_ERROR(ag_op_randn(&y, ctx_, AG_F32, s, 17), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_randn] ndim 17 is outside 0..16");
  EXPECT_AG_ERROR(ag_op_rand(&y, nullptr, AG_F32, s, 2), AG_ERR_INVALID_ARGUMENT, "[ag_op_rand] context is NULL (missing: did an earlier call fail?)");
  EXPECT_AG_ERROR(ag_op_rand(nullptr, ctx_, AG_F32, s, 2), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_rand] the output pointer is NULL");
  EXPECT_AG_ERROR(ag_op_uniform(&y, ctx_, AG_F32, s, 2, 2, 1), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_uniform] low 2 is above high 1");
  EXPECT_AG_ERROR(ag_op_uniform(&y, ctx_, AG_F32, s, 2, 0, INFINITY), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_uniform] high inf is not finite");
  EXPECT_AG_ERROR(ag_op_uniform(&y, ctx_, AG_F64, s, 2, -1e308, 1e308), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_uniform] high - low overflows (low -1e+308, high 1e+308)");
  EXPECT_AG_ERROR(ag_op_normal(&y, ctx_, AG_F64, s, 2, 0, -1), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_normal] std -1 is negative");
  EXPECT_AG_ERROR(ag_op_normal(&y, ctx_, AG_F64, s, 2, NAN, 1), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_normal] mean nan is not finite");
  EXPECT_AG_ERROR(ag_op_bernoulli_scalar(&y, ctx_, AG_F64, s, 2, 1.5), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_bernoulli_scalar] p 1.5 is outside [0, 1]");
  EXPECT_AG_ERROR(ag_op_randint(&y, ctx_, s, 2, 5, 5), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_randint] low 5 is not below high 5");
  ag_tensor* p = f64({3}, {0.5, -0.25, 2});
  EXPECT_AG_ERROR(ag_op_bernoulli(&y, p), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_bernoulli] probability -0.25 at flat index 1 is outside [0, 1]");
  ag_tensor* pn = f64({2}, {0.5, NAN});
  EXPECT_AG_ERROR(ag_op_bernoulli(&y, pn), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_bernoulli] probability nan at flat index 1 is outside [0, 1]");
  ag_tensor* idx = nullptr;
  ASSERT_AG(ag_tensor_zeros(&idx, ctx_, AG_I64, s, 2));
  own(idx);
  EXPECT_AG_ERROR(ag_op_bernoulli(&y, idx), AG_ERR_DTYPE,
                  "[ag_op_bernoulli] expects a floating tensor (f32 or f64), got i64");
  EXPECT_AG_ERROR(ag_op_bernoulli(&y, nullptr), AG_ERR_INVALID_ARGUMENT, "[ag_op_bernoulli] input p is NULL (missing: did an earlier call fail?)");
  EXPECT_AG_ERROR(ag_op_dropout(&y, p, 1.5, 1), AG_ERR_INVALID_ARGUMENT, "[ag_op_dropout] p 1.5 is outside [0, 1]");
  EXPECT_AG_ERROR(ag_op_dropout(&y, p, -0.1, 0), AG_ERR_INVALID_ARGUMENT, "[ag_op_dropout] p -0.1 is outside [0, 1]");
  EXPECT_AG_ERROR(ag_op_dropout(&y, idx, 0.5, 1), AG_ERR_DTYPE,
                  "[ag_op_dropout] expects a floating tensor (f32 or f64), got i64");
  EXPECT_AG_ERROR(ag_op_dropout(&y, nullptr, 0.5, 1), AG_ERR_INVALID_ARGUMENT, "[ag_op_dropout] input x is NULL (missing: did an earlier call fail?)");
  EXPECT_EQ(y, sentinel);
  EXPECT_EQ(offset(ctx_), before);  // failed calls draw nothing

  uint64_t seed = 0;
  EXPECT_AG_ERROR(ag_context_manual_seed(nullptr, 1), AG_ERR_INVALID_ARGUMENT,
                  "[ag_context_manual_seed] context is NULL (missing: did an earlier call fail?)");
  EXPECT_AG_ERROR(ag_context_seed(ctx_, nullptr), AG_ERR_INVALID_ARGUMENT, "[ag_context_seed] seed is NULL");
  EXPECT_AG_ERROR(ag_context_seed(nullptr, &seed), AG_ERR_INVALID_ARGUMENT, "[ag_context_seed] context is NULL (missing: did an earlier call fail?)");
  EXPECT_AG_ERROR(ag_context_rng_state(ctx_, &seed, nullptr), AG_ERR_INVALID_ARGUMENT,
                  "[ag_context_rng_state] offset is NULL");
  EXPECT_AG_ERROR(ag_context_set_rng_state(nullptr, 1, 2), AG_ERR_INVALID_ARGUMENT,
                  "[ag_context_set_rng_state] context is NULL (missing: did an earlier call fail?)");
  EXPECT_EQ(seed, 0u);
}

}  // namespace
