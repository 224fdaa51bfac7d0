// Forward values of the linear algebra ops through the C API against a
// straightforward scalar reference (NumPy matmul rules written out by hand),
// empty dims, strided (expanded) operands, 1 vs 2 threads, and bad input:
// status, precise message, out-parameter untouched.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "api_util.h"

namespace {

using namespace apitest;

// NumPy matmul, element by element.
Host ref_matmul(Host a, Host b) {
  const bool a1 = a.shape.size() == 1, b1 = b.shape.size() == 1;
  if (a1) a.shape.insert(a.shape.begin(), 1);
  if (b1) b.shape.push_back(1);
  const size_t na = a.shape.size(), nb = b.shape.size();
  const int64_t m = a.shape[na - 2], k = a.shape[na - 1], n = b.shape[nb - 1];
  const Shape ba(a.shape.begin(), a.shape.end() - 2), bb(b.shape.begin(), b.shape.end() - 2);
  const size_t nd = std::max(ba.size(), bb.size());
  Shape batch(nd);
  for (size_t i = 0; i < nd; ++i) {
    const int64_t x = i + ba.size() >= nd ? ba[i + ba.size() - nd] : 1;
    const int64_t y = i + bb.size() >= nd ? bb[i + bb.size() - nd] : 1;
    batch[i] = x == 1 ? y : x;
  }
  Host out;
  out.shape = batch;
  out.v.assign(static_cast<size_t>(numel(batch) * m * n), 0.0);
  // Index of a batch position into an operand's batch (broadcast dims read 0).
  auto flat = [&](const Shape& own, const Shape& idx) {
    int64_t f = 0;
    for (size_t i = 0; i < own.size(); ++i) {
      const int64_t d = own[i];
      f = f * d + (d == 1 ? 0 : idx[i + nd - own.size()]);
    }
    return f;
  };
  Shape idx(nd, 0);
  for (int64_t t = 0; t < numel(batch); ++t) {
    const int64_t ia = flat(ba, idx), ib = flat(bb, idx);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        long double s = 0;
        for (int64_t p = 0; p < k; ++p) {
          s += static_cast<long double>(a.v[static_cast<size_t>((ia * m + i) * k + p)]) *
               b.v[static_cast<size_t>((ib * k + p) * n + j)];
        }
        out.v[static_cast<size_t>((t * m + i) * n + j)] = static_cast<double>(s);
      }
    }
    for (size_t d = nd; d-- > 0;) {
      if (++idx[d] < batch[d]) break;
      idx[d] = 0;
    }
  }
  if (!a1) out.shape.push_back(m);
  if (!b1) out.shape.push_back(n);
  return out;
}

void expect_close(const Host& got, const Host& want, ag_dtype dt, int64_t k, const std::string& what) {
  ASSERT_EQ(got.shape, want.shape) << what;
  const double tol = (dt == AG_F64 ? 1e-14 : 1e-6) * static_cast<double>(k + 4);
  for (size_t i = 0; i < want.v.size(); ++i) ASSERT_NEAR(got.v[i], want.v[i], tol) << what << " element " << i;
}

std::string str(const Shape& s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + std::to_string(s[i]);
  return r + ")";
}

using Binary = ag_status (*)(ag_tensor**, const ag_tensor*, const ag_tensor*);

void check_binary(Binary fn, const Shape& sa, const Shape& sb) {
  std::mt19937_64 rng(numel(sa) * 31 + numel(sb));
  for (ag_dtype dt : {AG_F32, AG_F64}) {
    Ctx ctx(0);
    const Host a = random_host(sa, rng), b = random_host(sb, rng);
    ag_tensor *ta = new_tensor(ctx.get(), dt, a), *tb = new_tensor(ctx.get(), dt, b), *y = nullptr;
    ASSERT_AG(fn(&y, ta, tb));
    const int64_t k = sa.empty() ? 0 : sa.back();
    Host want;
    if (fn == ag_op_outer) {
      want = ref_matmul(Host{{sa[0], 1}, a.v}, Host{{1, sb[0]}, b.v});
    } else {
      want = ref_matmul(a, b);
    }
    expect_close(host_of(y), want, dt, k, str(sa) + " x " + str(sb));
    EXPECT_EQ(ag_tensor_dtype(y), dt);
    ag_tensor_release(y);
    ag_tensor_release(ta);
    ag_tensor_release(tb);
  }
}

TEST(Matmul, MatchesReference) {
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{3, 4}, {4, 5}},       {{4}, {4, 5}},           {{3, 4}, {4}},         {{7}, {7}},
      {{2, 3, 4}, {4, 5}},    {{3, 4}, {2, 4, 5}},     {{2, 1, 3, 4}, {3, 4, 2}}, {{5}, {2, 5, 3}},
      {{2, 3, 5}, {5}},       {{1, 1}, {1, 1}},        {{67, 131}, {131, 59}},    {{3, 70, 33}, {3, 33, 49}},
      {{200, 300}, {300, 90}}, {{4, 50, 64}, {64, 30}},
      {{64, 784}, {784, 256}}};  // a batch times a weight [in, out]: k summed in two parts
  for (const auto& [sa, sb] : shapes) check_binary(ag_op_matmul, sa, sb);
}

TEST(Bmm, MatchesReference) {
  for (const auto& [sa, sb] : std::vector<std::pair<Shape, Shape>>{
           {{2, 3, 4}, {2, 4, 5}}, {{1, 1, 1}, {1, 1, 1}}, {{5, 17, 40}, {5, 40, 23}},
           // k in two parts per product; the partial sums of all 17 take
           // 2.2 MB in f32 (the thread's kept buffer), 4.5 MB in f64 (one
           // of their own, past kernels::kKeptPartialBytes)
           {{17, 64, 256}, {17, 256, 512}}}) {
    check_binary(ag_op_bmm, sa, sb);
  }
}

TEST(Dot, MatchesReference) {
  for (int64_t n : {1, 5, 17, 1000}) check_binary(ag_op_dot, {n}, {n});
}

TEST(Outer, MatchesReference) {
  for (const auto& [n, m] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {3, 4}, {70, 130}}) {
    check_binary(ag_op_outer, {n}, {m});
  }
}

TEST(Linear, MatchesReference) {
  std::mt19937_64 rng(3);
  const std::vector<std::pair<Shape, Shape>> shapes = {{{3, 4}, {5, 4}}, {{2, 3, 4}, {5, 4}}, {{4}, {5, 4}},
                                                       {{100, 64}, {70, 64}}};
  for (ag_dtype dt : {AG_F32, AG_F64}) {
    for (const auto& [sx, sw] : shapes) {
      for (bool with_bias : {true, false}) {
        Ctx ctx(0);
        const Host x = random_host(sx, rng), w = random_host(sw, rng), b = random_host({sw[0]}, rng);
        Host wt{{sw[1], sw[0]}, std::vector<double>(w.v.size())};
        for (int64_t o = 0; o < sw[0]; ++o) {
          for (int64_t i = 0; i < sw[1]; ++i) wt.v[static_cast<size_t>(i * sw[0] + o)] = w.v[static_cast<size_t>(o * sw[1] + i)];
        }
        Host want = ref_matmul(x, wt);
        if (with_bias) {
          for (size_t i = 0; i < want.v.size(); ++i) want.v[i] += b.v[i % b.v.size()];
        }
        ag_tensor *tx = new_tensor(ctx.get(), dt, x), *tw = new_tensor(ctx.get(), dt, w),
                  *tb = new_tensor(ctx.get(), dt, b), *y = nullptr;
        ASSERT_AG(ag_op_linear(&y, tx, tw, with_bias ? tb : nullptr));
        expect_close(host_of(y), want, dt, sx.back() + 1, "linear " + str(sx) + " " + str(sw));
        for (ag_tensor* t : {y, tx, tw, tb}) ag_tensor_release(t);
      }
    }
  }
}

// A stride-0 operand (expanded along k and along the batch) is read in place.
TEST(Matmul, ExpandedOperands) {
  std::mt19937_64 rng(5);
  Ctx ctx(0);
  const Host a = random_host({40, 1}, rng), b = random_host({1, 50, 30}, rng);
  ag_tensor *ta = new_tensor(ctx.get(), AG_F64, a), *tb = new_tensor(ctx.get(), AG_F64, b), *ea = nullptr,
            *eb = nullptr, *y = nullptr;
  const int64_t sa[] = {40, 50}, sb[] = {3, 50, 30};
  ASSERT_AG(ag_op_expand(&ea, ta, sa, 2));
  ASSERT_AG(ag_op_expand(&eb, tb, sb, 3));
  ASSERT_AG(ag_op_matmul(&y, ea, eb));
  Host full_a{{40, 50}, {}}, full_b{{3, 50, 30}, {}};
  for (int64_t i = 0; i < 40; ++i) full_a.v.insert(full_a.v.end(), 50, a.v[static_cast<size_t>(i)]);
  for (int r = 0; r < 3; ++r) full_b.v.insert(full_b.v.end(), b.v.begin(), b.v.end());
  expect_close(host_of(y), ref_matmul(full_a, full_b), AG_F64, 50, "expanded");
  for (ag_tensor* t : {y, ta, tb, ea, eb}) ag_tensor_release(t);
}

// NumPy: k = 0 gives zeros, an empty outer or batch dim an empty result.
TEST(Matmul, EmptyDims) {
  Ctx ctx(0);
  struct Case {
    Shape a, b, out;
  };
  for (const Case& c : std::vector<Case>{{{3, 0}, {0, 4}, {3, 4}},
                                         {{0, 3}, {3, 4}, {0, 4}},
                                         {{3, 4}, {4, 0}, {3, 0}},
                                         {{0, 2, 3}, {3, 4}, {0, 2, 4}},
                                         {{0}, {0}, {}},
                                         {{2, 300, 0}, {2, 0, 100}, {2, 300, 100}}}) {
    ag_tensor *a = nullptr, *b = nullptr, *y = nullptr;
    ASSERT_AG(ag_tensor_zeros(&a, ctx.get(), AG_F32, c.a.data(), static_cast<int32_t>(c.a.size())));
    ASSERT_AG(ag_tensor_zeros(&b, ctx.get(), AG_F32, c.b.data(), static_cast<int32_t>(c.b.size())));
    ASSERT_AG(ag_op_matmul(&y, a, b));
    const Host h = host_of(y);
    EXPECT_EQ(h.shape, c.out) << str(c.a) << " x " << str(c.b);
    for (double v : h.v) ASSERT_EQ(v, 0.0);
    for (ag_tensor* t : {y, a, b}) ag_tensor_release(t);
  }
  ag_tensor *a = nullptr, *b = nullptr, *y = nullptr;
  const Shape s{0};
  ASSERT_AG(ag_tensor_zeros(&a, ctx.get(), AG_F64, s.data(), 1));
  ASSERT_AG(ag_tensor_zeros(&b, ctx.get(), AG_F64, s.data(), 1));
  ASSERT_AG(ag_op_dot(&y, a, b));
  double v = -1;
  ASSERT_AG(ag_tensor_item(y, &v));
  EXPECT_EQ(v, 0.0);
  for (ag_tensor* t : {y, a, b}) ag_tensor_release(t);
}

// Same bits with 1 and 2 threads, for sizes that split into many tasks.
TEST(Matmul, SameBitsOnOneAndTwoThreads) {
  std::mt19937_64 rng(11);
  for (const auto& [sa, sb] : std::vector<std::pair<Shape, Shape>>{{{515, 300}, {300, 257}}, {{6, 64, 80}, {6, 80, 96}},
                                                                     {{64, 784}, {784, 256}}}) {
    const Host a = random_host(sa, rng), b = random_host(sb, rng);
    std::vector<Host> results;
    for (int32_t threads : {1, 2}) {
      Ctx ctx(threads);
      ASSERT_EQ(ag_context_num_threads(ctx.get()), threads);
      ag_tensor *ta = new_tensor(ctx.get(), AG_F32, a), *tb = new_tensor(ctx.get(), AG_F32, b), *y = nullptr;
      ASSERT_AG(ag_op_matmul(&y, ta, tb));
      results.push_back(host_of(y));
      for (ag_tensor* t : {y, ta, tb}) ag_tensor_release(t);
    }
    ASSERT_EQ(results[0].v.size(), results[1].v.size());
    EXPECT_EQ(0, std::memcmp(results[0].v.data(), results[1].v.data(), results[0].v.size() * sizeof(double)));
  }
}

// ---- bad input: status, message, *out untouched ----

struct Bad {
  const char* fn;
  Shape a, b;
  const char* message;
};

TEST(LinalgErrors, Shapes) {
  Ctx ctx(0);
  const std::vector<Bad> cases = {
      {"matmul", {2, 3}, {4, 5}, "[ag_op_matmul] cannot multiply shapes (2,3) and (4,5): inner dims 3 and 4 differ"},
      {"matmul", {3}, {4}, "[ag_op_matmul] cannot multiply shapes (3) and (4): inner dims 3 and 4 differ"},
      {"matmul", {}, {4}, "[ag_op_matmul] cannot multiply shapes () and (4): both need at least 1 dim"},
      {"matmul", {2, 3, 4}, {3, 4, 5},
       "[ag_op_matmul] cannot multiply shapes (2,3,4) and (3,4,5): batch dims (2) and (3) do not broadcast"},
      {"bmm", {3, 4}, {2, 4, 5}, "[ag_op_bmm] cannot multiply shapes (3,4) and (2,4,5): both must be 3-D"},
      {"bmm", {2, 3, 4}, {3, 4, 5}, "[ag_op_bmm] cannot multiply shapes (2,3,4) and (3,4,5): batch sizes 2 and 3 differ"},
      {"bmm", {2, 3, 4}, {2, 5, 5}, "[ag_op_bmm] cannot multiply shapes (2,3,4) and (2,5,5): inner dims 4 and 5 differ"},
      {"dot", {3}, {4}, "[ag_op_dot] cannot multiply shapes (3) and (4): sizes 3 and 4 differ"},
      {"dot", {3, 1}, {3}, "[ag_op_dot] cannot multiply shapes (3,1) and (3): both must be 1-D"},
      {"outer", {3}, {}, "[ag_op_outer] cannot multiply shapes (3) and (): both must be 1-D"},
  };
  for (const Bad& c : cases) {
    ag_tensor *a = nullptr, *b = nullptr;
    ASSERT_AG(ag_tensor_zeros(&a, ctx.get(), AG_F32, c.a.data(), static_cast<int32_t>(c.a.size())));
    ASSERT_AG(ag_tensor_zeros(&b, ctx.get(), AG_F32, c.b.data(), static_cast<int32_t>(c.b.size())));
    ag_tensor* sentinel = reinterpret_cast<ag_tensor*>(0x1);
    ag_tensor* out = sentinel;
    const std::string fn = c.fn;
    const Binary f = fn == "matmul" ? ag_op_matmul : fn == "bmm" ? ag_op_bmm : fn == "dot" ? ag_op_dot : ag_op_outer;
    expect_error_untouched(f(&out, a, b), out, sentinel, AG_ERR_SHAPE, c.message);
    ag_tensor_release(a);
    ag_tensor_release(b);
  }
}

TEST(LinalgErrors, Linear) {
  Ctx ctx(0);
  auto zeros = [&](const Shape& s, ag_dtype dt = AG_F32) {
    ag_tensor* t = nullptr;
    ag_tensor_zeros(&t, ctx.get(), dt, s.data(), static_cast<int32_t>(s.size()));
    return t;
  };
  ag_tensor *x = zeros({2, 3}), *w = zeros({4, 3}), *w1 = zeros({3}), *wbad = zeros({4, 5}), *b = zeros({4}),
            *bbad = zeros({3}), *x0 = zeros({}), *w64 = zeros({4, 3}, AG_F64);
  ag_tensor* sentinel = reinterpret_cast<ag_tensor*>(0x1);
  ag_tensor* out = sentinel;
  expect_error_untouched(ag_op_linear(&out, x, w1, b), out, sentinel, AG_ERR_SHAPE,
                         "[ag_op_linear] weight must be 2-D (out_features, in_features), got shape (3)");
  expect_error_untouched(
      ag_op_linear(&out, x, wbad, b), out, sentinel, AG_ERR_SHAPE,
      "[ag_op_linear] input shape (2,3) does not fit weight shape (4,5): in_features 3 and 5 differ");
  expect_error_untouched(ag_op_linear(&out, x, w, bbad), out, sentinel, AG_ERR_SHAPE,
                         "[ag_op_linear] bias shape (3) does not fit weight shape (4,3): expected (4)");
  expect_error_untouched(ag_op_linear(&out, x0, w, b), out, sentinel, AG_ERR_SHAPE,
                         "[ag_op_linear] input must have at least 1 dim, got shape ()");
  EXPECT_EQ(ag_op_linear(&out, x, w64, nullptr), AG_ERR_DTYPE);
  EXPECT_EQ(out, sentinel);
  expect_error_untouched(ag_op_linear(&out, x, nullptr, b), out, sentinel, AG_ERR_INVALID_ARGUMENT,
                         "[ag_op_linear] input weight is NULL (missing: did an earlier call fail?)");
  EXPECT_EQ(ag_op_linear(nullptr, x, w, b), AG_ERR_INVALID_ARGUMENT);
  for (ag_tensor* t : {x, w, w1, wbad, b, bbad, x0, w64}) ag_tensor_release(t);
}

// Offsets and empty shapes at the edges of int64: refused or instant, never
// overflowing arithmetic or a loop over an empty dim's partner.
TEST(LinalgErrors, EdgesOfInt64) {
  Ctx ctx(0);
  const Shape v{3}, empty{int64_t{1} << 40, 0};
  ag_tensor *x = nullptr, *e = nullptr, *out = nullptr;
  ASSERT_AG(ag_tensor_zeros(&x, ctx.get(), AG_F32, v.data(), 1));
  ASSERT_AG(ag_tensor_zeros(&e, ctx.get(), AG_F32, empty.data(), 2));
  ag_tensor* sentinel = reinterpret_cast<ag_tensor*>(0x1);
  out = sentinel;
  expect_error_untouched(ag_op_diag_embed(&out, x, INT64_MIN, -2, -1), out, sentinel, AG_ERR_INVALID_ARGUMENT,
                         "[ag_op_diag_embed] offset -9223372036854775808 has no magnitude in int64");
  expect_error_untouched(ag_op_diag_embed(&out, x, INT64_MAX, -2, -1), out, sentinel, AG_ERR_INVALID_ARGUMENT,
                         "[ag_op_diag_embed] the embedded size overflows int64 (1 * 3 + 9223372036854775807)");
  expect_error_untouched(ag_op_diag(&out, x, INT64_MAX - 3), out, sentinel, AG_ERR_OUT_OF_MEMORY,
                         "[ag_op_diag] shape (9223372036854775807,9223372036854775807) has too many bytes");
  for (auto f : {ag_op_tril, ag_op_triu}) {
    ASSERT_AG(f(&out, e, 0));
    EXPECT_EQ(ag_tensor_numel(out), 0);
    ag_tensor_release(out);
  }
  ag_tensor_release(x);
  ag_tensor_release(e);
}

// Empty inputs whose other sizes are huge: decompositions and products
// return empty results at once (no m * n that overflows, no division by
// it), and sizes a result cannot have are refused with the facts.
TEST(LinalgErrors, EmptyInputsWithHugeSizes) {
  Ctx ctx(0);
  constexpr int64_t kBig = int64_t{1} << 32, kTera = int64_t{1} << 40;
  auto zeros = [&](const Shape& s) {
    T t;
    EXPECT_EQ(ag_tensor_zeros(t.out(), ctx.get(), AG_F64, s.data(), static_cast<int32_t>(s.size())), AG_OK);
    return t;
  };
  const T sq = zeros({0, kBig, kBig}), rhs = zeros({0, kBig, 1});
  T y;
  ASSERT_AG(ag_op_inv(y.out(), sq));
  EXPECT_EQ(shape_of(y), (Shape{0, kBig, kBig}));
  ASSERT_AG(ag_op_cholesky(y.out(), sq, 0));
  EXPECT_EQ(shape_of(y), (Shape{0, kBig, kBig}));
  ASSERT_AG(ag_op_det(y.out(), sq));
  EXPECT_EQ(shape_of(y), (Shape{0}));
  ASSERT_AG(ag_op_cond(y.out(), sq, 1.0));
  EXPECT_EQ(shape_of(y), (Shape{0}));
  ASSERT_AG(ag_op_lstsq(y.out(), sq, rhs));
  EXPECT_EQ(shape_of(y), (Shape{0, kBig, 1}));
  // Contracted and kept sizes whose products overflow: both operands empty.
  const T a = zeros({0, kTera, kTera}), b = zeros({kTera, kTera, 0});
  const int64_t da[2] = {1, 2}, db[2] = {0, 1};
  ASSERT_AG(ag_op_tensordot(y.out(), a, b, da, 2, db, 2));
  EXPECT_EQ(shape_of(y), (Shape{0, 0}));

  ag_tensor* sentinel = reinterpret_cast<ag_tensor*>(0x1);
  ag_tensor *u = sentinel, *s = sentinel, *vh = sentinel, *out = sentinel;
  const T tall = zeros({0, INT64_MAX, 1}), huge_sq = zeros({0, INT64_MAX, INT64_MAX});
  EXPECT_AG_ERROR(ag_op_svd(&u, &s, &vh, tall, 0), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_svd] the packed rows (m + 1 + n) overflows int64 (1 * 9223372036854775807 + 1)");
  EXPECT_AG_ERROR(ag_op_qr(&u, &s, tall, AG_QR_REDUCED), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_qr] the packed columns (m + n) overflows int64 (1 * 9223372036854775807 + 1)");
  EXPECT_AG_ERROR(ag_op_eigh(&u, &s, huge_sq, 0), AG_ERR_INVALID_ARGUMENT,
                  "[ag_op_eigh] the packed rows (n + 1) overflows int64 (1 * 9223372036854775807 + 1)");
  EXPECT_TRUE(u == sentinel && s == sentinel && vh == sentinel);
  expect_error_untouched(ag_op_kron(&out, zeros({kTera, 0}), zeros({kTera, 0})), out, sentinel,
                         AG_ERR_INVALID_ARGUMENT,
                         "[ag_op_kron] a size of the result overflows int64 (1099511627776 * 1099511627776 + 0)");
  expect_error_untouched(ag_op_pdist(&out, zeros({2 * kBig, 0}), 2.0), out, sentinel, AG_ERR_INVALID_ARGUMENT,
                         "[ag_op_pdist] the number of pairs overflows int64 (4294967296 * 8589934591 + 0)");
}

// Results and intermediates of more than AG_MAX_DIMS dims are refused
// before any list of dims is built past that room.
TEST(LinalgErrors, TooManyDims) {
  Ctx ctx(0);
  const Shape ones(16, 1);
  T a, b;
  ASSERT_AG(ag_tensor_zeros(a.out(), ctx.get(), AG_F64, ones.data(), 16));
  ASSERT_AG(ag_tensor_zeros(b.out(), ctx.get(), AG_F64, ones.data(), 16));
  ag_tensor* sentinel = reinterpret_cast<ag_tensor*>(0x1);
  ag_tensor* out = sentinel;
  expect_error_untouched(ag_op_tensordot(&out, a, b, nullptr, 0, nullptr, 0), out, sentinel, AG_ERR_SHAPE,
                         "[ag_op_tensordot] the result would have more than 16 dims");
  const ag_tensor* ops[2] = {a, b};
  expect_error_untouched(ag_op_einsum(&out, "abcdefghijklmnop,ABCDEFGHIJKLMNOP", ops, 2), out, sentinel, AG_ERR_SHAPE,
                         "[ag_op_einsum] the product of two operands would have 32 dims, more than 16");
  expect_error_untouched(ag_op_diag_embed(&out, a, 0, -2, -1), out, sentinel, AG_ERR_UNSUPPORTED,
                         "[ag_op_diag_embed] x has the maximum of 16 dims (one more is needed)");
}

TEST(LinalgErrors, DtypesAndHandles) {
  Ctx ctx(0);
  const Shape s{2, 2};
  ag_tensor *a = nullptr, *b64 = nullptr, *i64 = nullptr;
  ASSERT_AG(ag_tensor_zeros(&a, ctx.get(), AG_F32, s.data(), 2));
  ASSERT_AG(ag_tensor_zeros(&b64, ctx.get(), AG_F64, s.data(), 2));
  ASSERT_AG(ag_tensor_zeros(&i64, ctx.get(), AG_I64, s.data(), 2));
  ag_tensor* sentinel = reinterpret_cast<ag_tensor*>(0x1);
  ag_tensor* out = sentinel;
  expect_error_untouched(ag_op_matmul(&out, a, b64), out, sentinel, AG_ERR_DTYPE,
                         "[ag_op_matmul] dtypes f32 and f64 differ (no implicit promotion; convert with ag_op_cast)");
  EXPECT_EQ(ag_op_bmm(&out, i64, i64), AG_ERR_DTYPE);
  EXPECT_EQ(std::string(ag_last_error_message()), "[ag_op_bmm] expects a floating tensor (f32 or f64), got i64");
  expect_error_untouched(ag_op_dot(&out, nullptr, a), out, sentinel, AG_ERR_INVALID_ARGUMENT,
                         "[ag_op_dot] input a is NULL (missing: did an earlier call fail?)");
  expect_error_untouched(ag_op_outer(&out, a, nullptr), out, sentinel, AG_ERR_INVALID_ARGUMENT,
                         "[ag_op_outer] input b is NULL (missing: did an earlier call fail?)");
  EXPECT_EQ(ag_op_matmul(nullptr, a, a), AG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(ag_last_error_message()), "[ag_op_matmul] the output pointer is NULL");
  Ctx other(0);
  ag_tensor* c = nullptr;
  ASSERT_AG(ag_tensor_zeros(&c, other.get(), AG_F32, s.data(), 2));
  EXPECT_EQ(ag_op_matmul(&out, a, c), AG_ERR_CONTEXT);
  EXPECT_EQ(out, sentinel);
  for (ag_tensor* t : {a, b64, i64, c}) ag_tensor_release(t);
}

}  // namespace

// lstsq of a rank-deficient A (second column twice the first): an error
// naming the batch element, tall and wide alike, nothing written.
TEST(LinalgErrors, LstsqRankDeficient) {
  Ctx ctx(0);
  const double tall[] = {1, 2, 2, 4, 3, 6};  // (3, 2)
  const double rhs[] = {1, 2, 3};
  const int64_t ts[] = {3, 2}, bs[] = {3}, bw[] = {2};
  ag_tensor *a = nullptr, *w = nullptr, *b = nullptr, *bb = nullptr;
  ASSERT_AG(ag_tensor_create(&a, ctx.get(), AG_F64, ts, 2, tall));
  ASSERT_AG(ag_op_transpose(&w, a, 0, 1));
  ASSERT_AG(ag_tensor_create(&b, ctx.get(), AG_F64, bs, 1, rhs));
  ASSERT_AG(ag_tensor_create(&bb, ctx.get(), AG_F64, bw, 1, rhs));
  ag_tensor* sentinel = reinterpret_cast<ag_tensor*>(0x1);
  ag_tensor* out = sentinel;
  EXPECT_EQ(ag_op_lstsq(&out, a, b), AG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(out, sentinel);
  EXPECT_NE(std::string(ag_last_error_message()).find("batch element 0 of A is rank-deficient"), std::string::npos)
      << ag_last_error_message();
  EXPECT_EQ(ag_op_lstsq(&out, w, bb), AG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(out, sentinel);
  ag_tensor_release(a);
  ag_tensor_release(w);
  ag_tensor_release(b);
  ag_tensor_release(bb);
}

// cond of singular matrices as torch.linalg.cond: inf for 'fro', 1, -1, inf
// and -inf (an exactly zero LU pivot; the zero matrix too, not 0 * inf),
// per batch element, the regular one as alone; 'nuc' from the singular
// values, sum(S) sum(1 / S): inf for diag(1, 0), nan for zeros; and the
// gradient reaches only the regular element.
TEST(LinalgValues, CondOfSingularMatricesAsPyTorch) {
  Ctx ctx(0);
  // Batch: [[1, 2], [2, 4]] (rank 1), [[2, 1], [1, 3]], zeros.
  const std::vector<double> v = {1, 2, 2, 4, 2, 1, 1, 3, 0, 0, 0, 0};
  ag_tensor* a = new_tensor(ctx.get(), AG_F64, Shape{3, 2, 2}, v);
  ASSERT_AG(ag_tensor_requires_grad(a, 1));
  // The regular matrix's conds by hand: A = [[2, 1], [1, 3]], A^-1 =
  // [[3, -1], [-1, 2]] / 5.
  const double fro = std::sqrt(15.0) * std::sqrt(15.0) / 5, one = 4.0 * 4.0 / 5, mone = 3.0 * 3.0 / 5;
  struct Want {
    double p, regular;
  };
  for (const Want& w : {Want{AG_NORM_FRO, fro}, Want{1.0, one}, Want{-1.0, mone}, Want{HUGE_VAL, one},
                        Want{-HUGE_VAL, mone}}) {
    ag_tensor* c = nullptr;
    ASSERT_AG(ag_op_cond(&c, a, w.p));
    const std::vector<double> got = read(c);
    ASSERT_EQ(got.size(), 3u);
    EXPECT_TRUE(std::isinf(got[0]) && got[0] > 0) << "p " << w.p << ": " << got[0];
    EXPECT_NEAR(got[1], w.regular, 1e-12) << "p " << w.p;
    EXPECT_TRUE(std::isinf(got[2]) && got[2] > 0) << "p " << w.p << ": " << got[2];
    if (w.p == AG_NORM_FRO) {
      ag_tensor *s = nullptr, *g = nullptr;
      ag_tensor* only = nullptr;
      ASSERT_AG(ag_op_select(&only, c, 0, 1));
      ASSERT_AG(ag_op_sum(&s, only));
      ASSERT_AG(ag_backward(s, nullptr, nullptr));
      ASSERT_AG(ag_tensor_grad(&g, a));
      const std::vector<double> ga = read(g);
      for (int i : {0, 1, 2, 3, 8, 9, 10, 11}) EXPECT_EQ(ga[static_cast<size_t>(i)], 0.0) << i;
      double mag = 0;
      for (int i = 4; i < 8; ++i) mag += std::fabs(ga[static_cast<size_t>(i)]);
      EXPECT_GT(mag, 0.0);
      for (ag_tensor* t : {s, g, only}) ag_tensor_release(t);
    }
    ag_tensor_release(c);
  }
  // 'nuc': sum(S) sum(1/S) of diag(1, 0) is inf, of zeros nan; of the
  // regular one (eigenvalues (5 +- sqrt 5) / 2: S = those) 5 exactly in
  // exact arithmetic.
  ag_tensor* b = new_tensor(ctx.get(), AG_F64, Shape{3, 2, 2}, {1, 0, 0, 0, 2, 1, 1, 3, 0, 0, 0, 0});
  ag_tensor* c = nullptr;
  ASSERT_AG(ag_op_cond(&c, b, AG_NORM_NUC));
  const std::vector<double> got = read(c);
  EXPECT_TRUE(std::isinf(got[0]) && got[0] > 0) << got[0];
  EXPECT_NEAR(got[1], 5.0, 1e-12);
  EXPECT_TRUE(std::isnan(got[2])) << got[2];
  for (ag_tensor* t : {a, b, c}) ag_tensor_release(t);
}
