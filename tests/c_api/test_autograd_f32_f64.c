/*
 * tests/c_api/test_autograd_f32_f64.c - gradients across dtypes through the C
 * API: cast between f32 and f64, and a composite of every op in f32 against
 * f64, and in f64 against central differences of a plain-C reference.
 */
#include "harness.h"

static const int64_t s3[1] = {3};

/* The leaf x (3 elements), cast to `to`, squared and summed: the gradient
 * (2x = want) comes back in x's dtype. 0 (recorded) if a step fails; all
 * but x is released. */
static int check_cast_grad(ag_tensor *x, ag_dtype to, const double *want) {
  ag_tensor *c = NULL, *y = NULL, *s = NULL, *g = NULL;
  int ok = CHECK_OK(ag_op_cast(&c, x, to));
  if (ok) {
    CHECK(ag_tensor_dtype(c) == to);
    ok = CHECK_OK(ag_op_mul(&y, c, c)) && CHECK_OK(ag_op_sum(&s, y));
  }
  if (ok) {
    CHECK(ag_tensor_dtype(s) == to);
    ok = CHECK_OK(ag_backward(s, NULL, NULL));
  }
  if (ok) {
    g = GRAD(x);
    ok = CHECK(g != NULL);
  }
  if (ok) {
    CHECK(ag_tensor_dtype(g) == ag_tensor_dtype(x));
    CHECK_VALUES(g, want, 3, 0);
  }
  REL(g);
  REL(s);
  REL(y);
  REL(c);
  return ok;
}

/* cast is differentiable between f32 and f64: the gradient comes back in the leaf's dtype. */
static void test_cast_grad(void) {
  ag_context *ctx;
  double xv[3] = {1.5, -2, 0.25}, want[3] = {3, -4, 0.5};
  ag_tensor *x, *x2;
  REQUIRE(NEW_CTX_WITH_LEAF(&ctx, &x, AG_F32, s3, 1, xv));
  REQUIRE(check_cast_grad(x, AG_F64, want));
  /* and the other way */
  x2 = LEAF(ctx, AG_F64, s3, 1, xv);
  REQUIRE(x2);
  REQUIRE(check_cast_grad(x2, AG_F32, want));
  /* a cast to i64 or bool records no graph */
  {
    ag_tensor *i = NULL;
    CHECK_OK(ag_op_cast(&i, x, AG_I64));
    CHECK(ag_tensor_get_requires_grad(i) == 0);
    REL(i);
  }
  REL(x);
  REL(x2);
  ag_context_release(ctx);
}

/* ---- every op: f32 against f64, f64 against finite differences ------------------- */

typedef struct {
  double out;
  double gx[6];
  double gw[3];
} comp_result;

typedef struct {
  ag_tensor *t[64];
  int n;
} tlist;

static ag_tensor *keep(tlist *l, ag_tensor *t) {
  if (l->n < 64)
    l->t[l->n++] = t;
  return t;
}

static void tlist_release(tlist *l) {
  while (l->n > 0)
    ag_tensor_release(l->t[--l->n]);
}

#define OP(dst, call)           \
  do {                          \
    dst = NULL;                 \
    if (!CHECK_OK(call))        \
      goto done;                \
    keep(&L, dst);              \
  } while (0)

/* out = mean(cast(sum_to_size(((tanh(x*w) / (exp(-x) + 1)) - log(x^2 + 1)) * expand(w), (1,3))))
 *       + sum(t6); x (2,3), w (3). The f32 path casts through f64 and back
 * (exact); the f64 path casts f64 -> f64. Returns 1 on success. */
static int composite(ag_dtype dt, const double *xv, const double *wv, int with_grad,
                     comp_result *r) {
  tlist L;
  int64_t s23[2] = {2, 3}, s13[2] = {1, 3};
  ag_context *ctx = NEW_CTX();
  ag_tensor *x, *w, *one, *t1, *t2, *nx, *t3, *x2, *x2p1, *t4, *t3p1, *t5, *t6, *ew, *t7, *s, *c,
      *c2, *m, *s6, *out;
  int ok = 0;
  L.n = 0;
  if (!ctx)
    return 0;
  x = keep(&L, with_grad ? LEAF(ctx, dt, s23, 2, xv) : MAKE(ctx, dt, s23, 2, xv));
  w = keep(&L, with_grad ? LEAF(ctx, dt, s3, 1, wv) : MAKE(ctx, dt, s3, 1, wv));
  one = keep(&L, SCALAR(ctx, dt, 1.0));
  if (!x || !w || !one)
    goto done;
  OP(t1, ag_op_mul(&t1, x, w));
  OP(t2, ag_op_tanh(&t2, t1));
  OP(nx, ag_op_neg(&nx, x));
  OP(t3, ag_op_exp(&t3, nx));
  OP(x2, ag_op_pow_scalar(&x2, x, 2.0));
  OP(x2p1, ag_op_add(&x2p1, x2, one));
  OP(t4, ag_op_log(&t4, x2p1));
  OP(t3p1, ag_op_add(&t3p1, t3, one));
  OP(t5, ag_op_div(&t5, t2, t3p1));
  OP(t6, ag_op_sub(&t6, t5, t4));
  OP(ew, ag_op_expand(&ew, w, s23, 2));
  OP(t7, ag_op_mul(&t7, t6, ew));
  OP(s, ag_op_sum_to_size(&s, t7, s13, 2));
  if (dt == AG_F32) {
    ag_tensor *up;
    OP(up, ag_op_cast(&up, s, AG_F64));
    OP(c, ag_op_cast(&c, up, AG_F32));
  } else {
    OP(c, ag_op_cast(&c, s, AG_F64));
  }
  c2 = c;
  OP(m, ag_op_mean(&m, c2));
  OP(s6, ag_op_sum(&s6, t6));
  OP(out, ag_op_add(&out, m, s6));
  if (!CHECK(ag_tensor_dtype(out) == dt))
    goto done;
  r->out = ITEM(out);
  if (with_grad) {
    ag_tensor *gx, *gw;
    if (!CHECK_OK(ag_backward(out, NULL, NULL)))
      goto done;
    gx = keep(&L, GRAD(x));
    gw = keep(&L, GRAD(w));
    if (!CHECK(gx && gw))
      goto done;
    if (READ(gx, r->gx, 6) != 6 || READ(gw, r->gw, 3) != 3)
      goto done;
  }
  ok = 1;
done:
  tlist_release(&L);
  ag_context_release(ctx);
  return ok;
}

#undef OP

static void test_every_op_f32_vs_f64(void) {
  /* inputs exactly representable in f32 */
  const double xv[6] = {0.5, -1.25, 2.0, 0.75, -0.5, 1.5};
  const double wv[3] = {0.25, -0.75, 1.125};
  comp_result r64, r32;
  int i;
  memset(&r64, 0, sizeof r64);
  memset(&r32, 0, sizeof r32);
  REQUIRE(composite(AG_F64, xv, wv, 1, &r64));
  REQUIRE(composite(AG_F32, xv, wv, 1, &r32));
  CHECK(isfinite(r64.out));
  CHECK_NEAR(r32.out, r64.out, 1e-5, 1e-6);
  for (i = 0; i < 6; i++)
    CHECK_NEAR(r32.gx[i], r64.gx[i], 1e-5, 1e-6);
  for (i = 0; i < 3; i++)
    CHECK_NEAR(r32.gw[i], r64.gw[i], 1e-5, 1e-6);
}

/* The same function in plain C, as an independent reference. */
static double composite_ref(const double *xv, const double *wv) {
  double t6[6], s[3] = {0, 0, 0}, sum6 = 0;
  int i;
  for (i = 0; i < 6; i++) {
    double x = xv[i], w = wv[i % 3];
    t6[i] = tanh(x * w) / (exp(-x) + 1) - log(x * x + 1);
    s[i % 3] += t6[i] * w;
    sum6 += t6[i];
  }
  return (s[0] + s[1] + s[2]) / 3 + sum6;
}

/* f64 gradients against central differences of the plain-C reference, and
 * the library's forward value against the reference. */
/* grad[0..n) against central differences of composite_ref in each element
 * of x (wrt_w 0, n = 6) or of w (wrt_w 1, n = 3). */
static void check_central_differences(const double *grad, const double *xv, const double *wv, int wrt_w) {
  const double h = 1e-6;
  const double *v = wrt_w ? wv : xv;
  const int n = wrt_w ? 3 : 6;
  double vp[6], vm[6], fd;
  int i;
  for (i = 0; i < n; i++) {
    memcpy(vp, v, (size_t)n * sizeof *v);
    memcpy(vm, v, (size_t)n * sizeof *v);
    vp[i] += h;
    vm[i] -= h;
    fd = wrt_w ? composite_ref(xv, vp) - composite_ref(xv, vm) : composite_ref(vp, wv) - composite_ref(vm, wv);
    CHECK_NEAR(grad[i], fd / (2 * h), 1e-6, 1e-8);
  }
}

static void test_every_op_f64_vs_finite_differences(void) {
  const double xv[6] = {0.5, -1.25, 2.0, 0.75, -0.5, 1.5};
  const double wv[3] = {0.25, -0.75, 1.125};
  comp_result r;
  double xp[6];
  memset(&r, 0, sizeof r);
  REQUIRE(composite(AG_F64, xv, wv, 1, &r));
  CHECK_NEAR(r.out, composite_ref(xv, wv), 1e-12, 1e-13);
  check_central_differences(r.gx, xv, wv, 0);
  check_central_differences(r.gw, xv, wv, 1);
  /* the library's forward agrees at a perturbed point too (grad mode off path) */
  {
    comp_result rp;
    memset(&rp, 0, sizeof rp);
    memcpy(xp, xv, sizeof xp);
    xp[2] = 0.125;
    REQUIRE(composite(AG_F64, xp, wv, 0, &rp));
    CHECK_NEAR(rp.out, composite_ref(xp, wv), 1e-12, 1e-13);
  }
}

int main(int argc, char **argv) {
  h_init(argc, argv);
  RUN(test_cast_grad);
  RUN(test_every_op_f32_vs_f64);
  RUN(test_every_op_f64_vs_finite_differences);
  return h_finish();
}
