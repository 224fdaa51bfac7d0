/*
 * tests/c_api/test_add_scaled.c - a + alpha * b: ag_op_add_scaled and the
 * in-place ag_op_add_scaled_ (PyTorch's add/add_/sub_ with alpha). Values
 * against a C reference that rounds the product before the sum, bit for bit
 * on the one-pass path (large enough to be split in chunks) and equal to the
 * out-of-place op; broadcast and strided selves; a recorded write's
 * gradients against their closed forms in f64; bad input leaves self as it was.
 */
#include "harness.h"

static const int64_t s3[1] = {3};
static const int64_t s23[2] = {2, 3};

/* n elements: self += alpha * other on the one-pass path, bit for bit. */
static void test_one_pass_bits(ag_dtype dt) {
  ag_context *ctx = NEW_CTX();
  int64_t n = 100003, i;
  const double alpha = -0.3;
  double *sv = malloc(sizeof(double) * (size_t)n), *ov = malloc(sizeof(double) * (size_t)n);
  void *got = malloc(sizeof(double) * (size_t)n), *oop = malloc(sizeof(double) * (size_t)n);
  ag_tensor *self, *other, *y = NULL;
  int64_t bad = 0;
  size_t bytes = (size_t)n * (dt == AG_F32 ? sizeof(float) : sizeof(double));
  REQUIRE(ctx && sv && ov && got && oop);
  for (i = 0; i < n; i++) {
    sv[i] = 0.001 * (double)(i % 1000) - 0.37;
    ov[i] = 1.0 / (1.0 + (double)(i % 97));
  }
  self = MAKE(ctx, dt, &n, 1, sv);
  other = MAKE(ctx, dt, &n, 1, ov);
  REQUIRE_OK(ag_op_add_scaled(&y, self, other, alpha));
  REQUIRE_OK(ag_tensor_copy_data(y, oop, bytes));
  REQUIRE_OK(ag_op_add_scaled_(self, other, alpha));
  CHECK(ag_tensor_version(self) == 1);
  REQUIRE_OK(ag_tensor_copy_data(self, got, bytes));
  for (i = 0; i < n; i++) {
    if (dt == AG_F32) {
      float a = (float)sv[i], b = (float)ov[i], al = (float)alpha;
      float prod = al * b;
      float want = a + prod;
      if (memcmp(&want, (float *)got + i, sizeof want) != 0) bad++;
    } else {
      double prod = alpha * ov[i];
      double want = sv[i] + prod;
      if (memcmp(&want, (double *)got + i, sizeof want) != 0) bad++;
    }
  }
  CHECK(bad == 0);
  CHECK(memcmp(got, oop, bytes) == 0); /* the in-place and the out-of-place op agree */
  REL(y);
  REL(other);
  REL(self);
  free(oop);
  free(got);
  free(ov);
  free(sv);
  ag_context_release(ctx);
}

/* other broadcast (3) and 0-dim, a transposed self, other = self, alpha = 1. */
static void test_general_paths(ag_dtype dt) {
  ag_context *ctx = NEW_CTX();
  double sv[6] = {1.5, -2, 3, 0.25, 8, -0.5}, ov[3] = {2, -4, 0.5}, want[6];
  int64_t s32[2] = {3, 2};
  ag_tensor *self, *other, *sc, *base, *tr = NULL, *sum = NULL;
  double tol = h_tol(dt) * 4;
  int i, j;
  REQUIRE(ctx);
  self = MAKE(ctx, dt, s23, 2, sv);
  other = MAKE(ctx, dt, s3, 1, ov);
  sc = SCALAR(ctx, dt, 3.0);
  REQUIRE_OK(ag_op_add_scaled_(self, other, 2.5));
  for (i = 0; i < 2; i++)
    for (j = 0; j < 3; j++)
      want[i * 3 + j] = sv[i * 3 + j] + 2.5 * ov[j];
  CHECK_VALUES(self, want, 6, tol);
  REQUIRE_OK(ag_op_add_scaled_(self, sc, -0.5)); /* sub_(3, alpha=0.5) */
  for (i = 0; i < 6; i++)
    want[i] -= 1.5;
  CHECK_VALUES(self, want, 6, tol);
  REQUIRE_OK(ag_op_add_scaled_(self, self, 2.0)); /* other is self: 3 self */
  for (i = 0; i < 6; i++)
    want[i] *= 3;
  CHECK_VALUES(self, want, 6, tol);
  REQUIRE_OK(ag_op_add_scaled_(self, other, 1.0)); /* alpha 1: add_ */
  for (i = 0; i < 2; i++)
    for (j = 0; j < 3; j++)
      want[i * 3 + j] += ov[j];
  CHECK_VALUES(self, want, 6, tol);
  CHECK(ag_tensor_version(self) == 4);
  /* a transposed (strided) self: element (r, c) of tr is base's (c, r) */
  base = MAKE(ctx, dt, s32, 2, sv);
  REQUIRE_OK(ag_op_transpose(&tr, base, 0, 1));
  REQUIRE_OK(ag_op_add_scaled_(tr, other, -1.0));
  for (i = 0; i < 3; i++)
    for (j = 0; j < 2; j++)
      want[i * 2 + j] = sv[i * 2 + j] - ov[i];
  CHECK_VALUES(base, want, 6, tol);
  /* the out-of-place op broadcasts both ways: (3) + alpha (2,1) is (2,3) */
  {
    int64_t s21[2] = {2, 1};
    double cv[2] = {10, -20}, wsum[6];
    ag_tensor *col = MAKE(ctx, dt, s21, 2, cv);
    REQUIRE_OK(ag_op_add_scaled(&sum, other, col, 0.25));
    for (i = 0; i < 2; i++)
      for (j = 0; j < 3; j++)
        wsum[i * 3 + j] = ov[j] + 0.25 * cv[i];
    CHECK_SHAPE(sum, s23, 2);
    CHECK_VALUES(sum, wsum, 6, tol);
    REL(col);
  }
  REL(sum);
  REL(tr);
  REL(base);
  REL(sc);
  REL(other);
  REL(self);
  ag_context_release(ctx);
}

/* t = x * c; t += alpha * w; l = sum(t * t). dl/dx = 2 t c, dl/dw = 2 alpha t,
 * from the closed form; t's node is the sum's. */
static void test_recorded_gradients(void) {
  ag_context *ctx = NEW_CTX();
  const double alpha = -1.75, c = 0.5;
  double xv[3] = {0.5, -1.25, 2}, wv[3] = {3, 0.25, -1}, gx[3], gw[3], t[3];
  ag_tensor *x, *w, *cs, *tt = NULL, *sq = NULL, *l = NULL, *g;
  int i;
  REQUIRE(ctx);
  x = LEAF(ctx, AG_F64, s3, 1, xv);
  w = LEAF(ctx, AG_F64, s3, 1, wv);
  cs = SCALAR(ctx, AG_F64, c);
  REQUIRE_OK(ag_op_mul(&tt, x, cs));
  REQUIRE_OK(ag_op_add_scaled_(tt, w, alpha));
  CHECK_STR(ag_tensor_grad_fn_name(tt), "AddBackward");
  REQUIRE_OK(ag_op_mul(&sq, tt, tt));
  REQUIRE_OK(ag_op_sum(&l, sq));
  REQUIRE_OK(ag_backward(l, NULL, NULL));
  for (i = 0; i < 3; i++) {
    t[i] = xv[i] * c + alpha * wv[i];
    gx[i] = 2 * t[i] * c;
    gw[i] = 2 * alpha * t[i];
  }
  CHECK_VALUES(tt, t, 3, 1e-15);
  g = GRAD(x);
  CHECK_VALUES(g, gx, 3, 1e-14);
  REL(g);
  g = GRAD(w);
  CHECK_VALUES(g, gw, 3, 1e-14);
  REL(g);
  REL(l);
  REL(sq);
  REL(tt);
  REL(cs);
  REL(w);
  REL(x);
  ag_context_release(ctx);
}

static void test_errors(void) {
  ag_context *ctx = NEW_CTX();
  double v3[3] = {1, 2, 3};
  int64_t s4 = 4;
  ag_tensor *a, *b4, *f32, *i64, *x, *y = NULL;
  REQUIRE(ctx);
  a = MAKE(ctx, AG_F64, s3, 1, v3);
  b4 = MAKE(ctx, AG_F64, &s4, 1, NULL);
  f32 = MAKE(ctx, AG_F32, s3, 1, v3);
  i64 = MAKE(ctx, AG_I64, s3, 1, v3);
  x = LEAF(ctx, AG_F64, s3, 1, v3);
  CHECK_ERR(ag_op_add_scaled_(NULL, a, 2), AG_ERR_INVALID_ARGUMENT, "ag_op_add_scaled_");
  CHECK_MSG_HAS("input self is NULL");
  CHECK_ERR(ag_op_add_scaled_(a, NULL, 2), AG_ERR_INVALID_ARGUMENT, "ag_op_add_scaled_");
  CHECK_MSG_HAS("input other is NULL");
  CHECK_ERR(ag_op_add_scaled_(a, b4, 2), AG_ERR_SHAPE, "ag_op_add_scaled_");
  CHECK_ERR(ag_op_add_scaled_(a, f32, 2), AG_ERR_DTYPE, "ag_op_add_scaled_");
  CHECK_ERR(ag_op_add_scaled_(i64, i64, 2), AG_ERR_DTYPE, "ag_op_add_scaled_");
  CHECK_ERR(ag_op_add_scaled_(x, a, 2), AG_ERR_GRAPH, "ag_op_add_scaled_");
  CHECK_MSG_HAS("leaf that requires grad");
  CHECK_ERR(ag_op_add_scaled(&y, a, b4, 2), AG_ERR_SHAPE, "ag_op_add_scaled");
  CHECK_ERR(ag_op_add_scaled(&y, a, f32, 2), AG_ERR_DTYPE, "ag_op_add_scaled");
  CHECK(y == NULL);
  CHECK_VALUES(a, v3, 3, 0);
  CHECK_VALUES(x, v3, 3, 0);
  CHECK(ag_tensor_version(a) == 0 && ag_tensor_version(x) == 0);
  REL(x);
  REL(i64);
  REL(f32);
  REL(b4);
  REL(a);
  ag_context_release(ctx);
}

int main(int argc, char **argv) {
  h_init(argc, argv);
  RUN_F64_F32(test_one_pass_bits);
  RUN_F64_F32(test_general_paths);
  RUN(test_recorded_gradients);
  RUN(test_errors);
  return h_finish();
}
