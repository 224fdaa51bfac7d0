/*
 * tests/c_api/test_functional.c - derivatives of user functions
 * (ag/functional.h): vjp, jvp, jacobian, hessian and hvp against closed forms
 * and against central differences computed here in f64; create_graph for
 * higher derivatives; strict; broadcast, non-contiguous, empty and 0-dim
 * tensors; callback failures (also a failing hook) and bad arguments with
 * their statuses and messages. The gradient checks are in
 * test_functional_gradcheck.c.
 */
#include "functional_fns.h"

static const int64_t s2[1] = {2}, s3[1] = {3}, s23[2] = {2, 3};

/* ---- vjp / jvp ------------------------------------------------------------ */

static void test_vjp_cube(void) {
  ag_context *ctx = NEW_CTX();
  double xv[3] = {0.5, -1.5, 2}, vv[3] = {1, 2, -1}, want[3], y3[3];
  ag_tensor *x, *v, *vjp[1] = {NULL}, *outs[1] = {NULL};
  const ag_tensor *ins[1], *vs[1];
  int i;
  REQUIRE(ctx);
  x = LEAF(ctx, AG_F64, s3, 1, xv);
  v = F64(ctx, s3, 1, vv);
  for (i = 0; i < 3; i++) {
    want[i] = 3 * xv[i] * xv[i] * vv[i];
    y3[i] = xv[i] * xv[i] * xv[i];
  }
  ins[0] = x;
  vs[0] = v;
  REQUIRE_OK(ag_vjp(vjp, outs, fn_cube, NULL, ins, 1, vs, 1, NULL));
  CHECK_VALUES(vjp[0], want, 3, 1e-12);
  CHECK_VALUES(outs[0], y3, 3, 1e-12);
  /* without create_graph the results are outside any graph, and the caller's leaf got no .grad */
  CHECK(ag_tensor_get_requires_grad(vjp[0]) == 0);
  CHECK(ag_tensor_get_requires_grad(outs[0]) == 0);
  CHECK_NO_GRAD(x);
  release_all(vjp, 1);
  release_all(outs, 1);
  /* outputs may be NULL */
  REQUIRE_OK(ag_vjp(vjp, NULL, fn_cube, NULL, ins, 1, vs, 1, NULL));
  CHECK_VALUES(vjp[0], want, 3, 1e-12);
  release_all(vjp, 1);
  REL(v);
  REL(x);
  ag_context_release(ctx);
}

static void test_vjp_matvec_closed_form(void) {
  ag_context *ctx = NEW_CTX();
  double av[6] = {1, 2, 3, -1, 0.5, 4}, xv[3] = {0.3, -0.7, 2}, vv[2] = {1.5, -2};
  double want_a[6], want_x[3];
  ag_tensor *a, *x, *v, *vjp[2] = {NULL, NULL};
  const ag_tensor *ins[2], *vs[1];
  int p, q;
  REQUIRE(ctx);
  a = F64(ctx, s23, 2, av); /* not requiring grad: differentiated all the same */
  x = F64(ctx, s3, 1, xv);
  v = F64(ctx, s2, 1, vv);
  for (p = 0; p < 2; p++)
    for (q = 0; q < 3; q++)
      want_a[p * 3 + q] = vv[p] * xv[q];
  for (q = 0; q < 3; q++)
    want_x[q] = av[q] * vv[0] + av[3 + q] * vv[1];
  ins[0] = a;
  ins[1] = x;
  vs[0] = v;
  REQUIRE_OK(ag_vjp(vjp, NULL, fn_matvec, NULL, ins, 2, vs, 1, NULL));
  CHECK_SHAPE(vjp[0], s23, 2);
  CHECK_VALUES(vjp[0], want_a, 6, 1e-12);
  CHECK_VALUES(vjp[1], want_x, 3, 1e-12);
  release_all(vjp, 2);
  REL(v);
  REL(x);
  REL(a);
  ag_context_release(ctx);
}

static void test_jvp_two_outputs(void) {
  ag_context *ctx = NEW_CTX();
  double xv[3] = {0.5, -1.5, 2}, yv[3] = {3, 0.25, -1}, tx[3] = {1, -1, 0.5}, ty[3] = {2, 1, 1};
  double want0[3], want1[3], prod[3];
  ag_tensor *x, *y, *vx, *vy, *jvp[2] = {NULL, NULL}, *outs[2] = {NULL, NULL};
  const ag_tensor *ins[2], *vs[2];
  int i;
  REQUIRE(ctx);
  x = F64(ctx, s3, 1, xv);
  y = F64(ctx, s3, 1, yv);
  vx = F64(ctx, s3, 1, tx);
  vy = F64(ctx, s3, 1, ty);
  for (i = 0; i < 3; i++) {
    want0[i] = yv[i] * tx[i] + xv[i] * ty[i]; /* d(xy) = y dx + x dy */
    want1[i] = exp(xv[i]) * tx[i];
    prod[i] = xv[i] * yv[i];
  }
  ins[0] = x;
  ins[1] = y;
  vs[0] = vx;
  vs[1] = vy;
  REQUIRE_OK(ag_jvp(jvp, outs, fn_two_outputs, NULL, ins, 2, vs, 2, NULL));
  CHECK_VALUES(jvp[0], want0, 3, 1e-12);
  CHECK_VALUES(jvp[1], want1, 3, 1e-12);
  CHECK_VALUES(outs[0], prod, 3, 1e-12);
  CHECK(ag_tensor_get_requires_grad(jvp[0]) == 0);
  release_all(jvp, 2);
  release_all(outs, 2);
  REL(vx);
  REL(vy);
  REL(x);
  REL(y);
  ag_context_release(ctx);
}

/* jvp of fn_mixed against central differences of the plain-C reference. */
static void test_jvp_matches_finite_differences(void) {
  ag_context *ctx = NEW_CTX();
  const double *av = mixed_a, *xv = mixed_x;
  double ta[9] = {0.1, 0, -0.2, 0.5, 1, 0, 0, -0.3, 0.2}, tx[3] = {1, 0.5, -2};
  double want[3], ap[9], am[9], xp[3], xm[3], h = 1e-6;
  int64_t s33[2] = {3, 3};
  ag_tensor *a, *x, *va, *vx, *jvp[1] = {NULL};
  const ag_tensor *ins[2], *vs[2];
  int p, k;
  REQUIRE(ctx);
  for (k = 0; k < 9; k++) {
    ap[k] = av[k] + h * ta[k];
    am[k] = av[k] - h * ta[k];
  }
  for (k = 0; k < 3; k++) {
    xp[k] = xv[k] + h * tx[k];
    xm[k] = xv[k] - h * tx[k];
  }
  for (p = 0; p < 3; p++)
    want[p] = (mixed_ref(ap, xp, p) - mixed_ref(am, xm, p)) / (2 * h);
  a = F64(ctx, s33, 2, av);
  x = F64(ctx, s3, 1, xv);
  va = F64(ctx, s33, 2, ta);
  vx = F64(ctx, s3, 1, tx);
  ins[0] = a;
  ins[1] = x;
  vs[0] = va;
  vs[1] = vx;
  REQUIRE_OK(ag_jvp(jvp, NULL, fn_mixed, NULL, ins, 2, vs, 1, NULL));
  CHECK_VALUES(jvp[0], want, 3, 1e-7);
  release_all(jvp, 1);
  REL(a);
  REL(x);
  REL(va);
  REL(vx);
  ag_context_release(ctx);
}

/* ag_vjp and ag_jvp take the same arguments. */
typedef ag_status (*product_fn)(ag_tensor **, ag_tensor **, ag_fn, void *, const ag_tensor *const *,
                                int32_t, const ag_tensor *const *, int32_t,
                                const ag_functional_options *);

/* With create_graph, the product of x^3 with v (3 x^2 v for both vjp and jvp)
 * at a leaf that requires grad can be differentiated again: 6 x v. */
static void check_create_graph_second_derivative(product_fn product) {
  ag_context *ctx = NEW_CTX();
  double xv[3] = {0.5, -1.5, 2}, vv[3] = {1, 2, -1}, want[3];
  ag_tensor *x, *v, *p[1] = {NULL}, *s = NULL, *h[1] = {NULL};
  const ag_tensor *ins[1], *vs[1], *roots[1];
  ag_functional_options o = AG_FUNCTIONAL_OPTIONS_INIT;
  int i;
  REQUIRE(ctx);
  x = LEAF(ctx, AG_F64, s3, 1, xv);
  v = F64(ctx, s3, 1, vv);
  for (i = 0; i < 3; i++)
    want[i] = 6 * xv[i] * vv[i];
  ins[0] = x;
  vs[0] = v;
  o.create_graph = 1;
  REQUIRE_OK(product(p, NULL, fn_cube, NULL, ins, 1, vs, 1, &o));
  CHECK(ag_tensor_get_requires_grad(p[0]) == 1);
  REQUIRE_OK(ag_op_sum(&s, p[0]));
  roots[0] = s;
  REQUIRE_OK(ag_grad(h, roots, NULL, 1, ins, 1, NULL));
  CHECK_VALUES(h[0], want, 3, 1e-12);
  release_all(h, 1);
  REL(s);
  release_all(p, 1);
  REL(v);
  REL(x);
  ag_context_release(ctx);
}

static void test_vjp_create_graph_second_derivative(void) {
  check_create_graph_second_derivative(ag_vjp);
}

static void test_jvp_create_graph_second_derivative(void) {
  check_create_graph_second_derivative(ag_jvp);
}

/* ---- jacobian / hessian / hvp ---------------------------------------------- */

static void test_jacobian_matvec_layout(void) {
  ag_context *ctx = NEW_CTX();
  double av[6] = {1, 2, 3, -1, 0.5, 4}, xv[3] = {0.3, -0.7, 2}, want_a[12];
  int64_t sja[3] = {2, 2, 3};
  ag_tensor *a, *x, *jac[2] = {NULL, NULL};
  const ag_tensor *ins[2];
  int p, q, r;
  REQUIRE(ctx);
  a = F64(ctx, s23, 2, av);
  x = F64(ctx, s3, 1, xv);
  /* d (A x)[p] / d A[q, r] = (p == q) x[r] */
  for (p = 0; p < 2; p++)
    for (q = 0; q < 2; q++)
      for (r = 0; r < 3; r++)
        want_a[(p * 2 + q) * 3 + r] = p == q ? xv[r] : 0;
  ins[0] = a;
  ins[1] = x;
  REQUIRE_OK(ag_jacobian(jac, fn_matvec, NULL, ins, 2, 1, NULL));
  CHECK_SHAPE(jac[0], sja, 3);
  CHECK_VALUES(jac[0], want_a, 12, 1e-12);
  CHECK_SHAPE(jac[1], s23, 2); /* d (A x) / d x = A */
  CHECK_VALUES(jac[1], av, 6, 1e-12);
  release_all(jac, 2);
  REL(a);
  REL(x);
  ag_context_release(ctx);
}

static void test_jacobian_softmax_closed_form(void) {
  ag_context *ctx = NEW_CTX();
  double xv[3] = {0.1, -1, 2}, sm[3], want[9], z = 0;
  int64_t s33[2] = {3, 3};
  ag_tensor *x, *jac[1] = {NULL};
  const ag_tensor *ins[1];
  int p, q;
  REQUIRE(ctx);
  for (p = 0; p < 3; p++)
    z += exp(xv[p]);
  for (p = 0; p < 3; p++)
    sm[p] = exp(xv[p]) / z;
  for (p = 0; p < 3; p++)
    for (q = 0; q < 3; q++)
      want[p * 3 + q] = (p == q ? sm[p] : 0) - sm[p] * sm[q];
  x = F64(ctx, s3, 1, xv);
  ins[0] = x;
  REQUIRE_OK(ag_jacobian(jac, fn_softmax, NULL, ins, 1, 1, NULL));
  CHECK_SHAPE(jac[0], s33, 2);
  CHECK_VALUES(jac[0], want, 9, 1e-12);
  release_all(jac, 1);
  REL(x);
  ag_context_release(ctx);
}

static void test_jacobian_two_outputs_and_f32(void) {
  ag_context *ctx = NEW_CTX();
  double xv[2] = {0.5, -1}, yv[2] = {2, 3}, j00[4], j01[4], j10[4], j11[4];
  int64_t s22[2] = {2, 2};
  ag_tensor *x, *y, *jac[4] = {NULL, NULL, NULL, NULL};
  const ag_tensor *ins[2];
  int p, q;
  REQUIRE(ctx);
  for (p = 0; p < 2; p++)
    for (q = 0; q < 2; q++) {
      j00[p * 2 + q] = p == q ? yv[p] : 0;
      j01[p * 2 + q] = p == q ? xv[p] : 0;
      j10[p * 2 + q] = p == q ? exp(xv[p]) : 0;
      j11[p * 2 + q] = 0; /* exp(x) does not depend on y */
    }
  x = MAKE(ctx, AG_F32, s2, 1, xv);
  y = MAKE(ctx, AG_F32, s2, 1, yv);
  ins[0] = x;
  ins[1] = y;
  REQUIRE_OK(ag_jacobian(jac, fn_two_outputs, NULL, ins, 2, 2, NULL));
  for (p = 0; p < 4; p++) {
    CHECK_SHAPE(jac[p], s22, 2);
    CHECK(ag_tensor_dtype(jac[p]) == AG_F32);
  }
  CHECK_VALUES(jac[0], j00, 4, 1e-6);
  CHECK_VALUES(jac[1], j01, 4, 1e-6);
  CHECK_VALUES(jac[2], j10, 4, 1e-6);
  CHECK_VALUES(jac[3], j11, 4, 0);
  release_all(jac, 4);
  REL(x);
  REL(y);
  ag_context_release(ctx);
}

/* Jacobian of fn_mixed with respect to x against central differences. */
static void test_jacobian_matches_finite_differences(void) {
  ag_context *ctx = NEW_CTX();
  const double *av = mixed_a, *xv = mixed_x;
  double want[9], xp[3], xm[3], h = 1e-6;
  int64_t s33[2] = {3, 3};
  ag_tensor *a, *x, *jac[2] = {NULL, NULL};
  const ag_tensor *ins[2];
  int p, q, k;
  REQUIRE(ctx);
  for (q = 0; q < 3; q++) {
    for (k = 0; k < 3; k++)
      xp[k] = xm[k] = xv[k];
    xp[q] += h;
    xm[q] -= h;
    for (p = 0; p < 3; p++)
      want[p * 3 + q] = (mixed_ref(av, xp, p) - mixed_ref(av, xm, p)) / (2 * h);
  }
  a = F64(ctx, s33, 2, av);
  x = F64(ctx, s3, 1, xv);
  ins[0] = a;
  ins[1] = x;
  REQUIRE_OK(ag_jacobian(jac, fn_mixed, NULL, ins, 2, 1, NULL));
  CHECK_SHAPE(jac[1], s33, 2);
  CHECK_VALUES(jac[1], want, 9, 1e-7);
  release_all(jac, 2);
  REL(a);
  REL(x);
  ag_context_release(ctx);
}

/* Zero-size and 0-dim tensors: the blocks have the concatenated shapes. */
static void test_jacobian_empty_and_scalar(void) {
  ag_context *ctx = NEW_CTX();
  int64_t s0[1] = {0}, s00[2] = {0, 0}, s33[2] = {3, 3};
  double xv[3] = {1, 2, -3}, grad[3], hess[9];
  ag_tensor *e, *x, *x0, *jac[1] = {NULL};
  const ag_tensor *ins[1];
  int p, q;
  REQUIRE(ctx);
  for (p = 0; p < 3; p++) {
    grad[p] = 3 * xv[p] * xv[p];
    for (q = 0; q < 3; q++)
      hess[p * 3 + q] = p == q ? 6 * xv[p] : 0;
  }
  e = F64(ctx, s0, 1, NULL);
  ins[0] = e;
  REQUIRE_OK(ag_jacobian(jac, fn_cube, NULL, ins, 1, 1, NULL));
  CHECK_SHAPE(jac[0], s00, 2);
  release_all(jac, 1);
  REQUIRE_OK(ag_hessian(jac, fn_sum_cube, NULL, ins, 1, NULL));
  CHECK_SHAPE(jac[0], s00, 2);
  release_all(jac, 1);
  /* a 0-dim output adds no dims */
  x = F64(ctx, s3, 1, xv);
  ins[0] = x;
  REQUIRE_OK(ag_jacobian(jac, fn_sum_cube, NULL, ins, 1, 1, NULL));
  CHECK_SHAPE(jac[0], s3, 1);
  CHECK_VALUES(jac[0], grad, 3, 1e-12);
  release_all(jac, 1);
  REQUIRE_OK(ag_hessian(jac, fn_sum_cube, NULL, ins, 1, NULL));
  CHECK_SHAPE(jac[0], s33, 2);
  CHECK_VALUES(jac[0], hess, 9, 1e-12);
  release_all(jac, 1);
  /* a 0-dim input and output: a 0-dim Jacobian */
  x0 = SCALAR(ctx, AG_F64, 2.0);
  ins[0] = x0;
  REQUIRE_OK(ag_jacobian(jac, fn_cube, NULL, ins, 1, 1, NULL));
  CHECK(ag_tensor_ndim(jac[0]) == 0);
  CHECK_CLOSE(ITEM(jac[0]), 12.0, 1e-12);
  release_all(jac, 1);
  REL(x0);
  REL(x);
  REL(e);
  ag_context_release(ctx);
}

/* A transposed (non-contiguous) input and a broadcast 0-dim one. */
static void test_jacobian_broadcast_and_noncontiguous(void) {
  ag_context *ctx = NEW_CTX();
  double xv[6] = {1, 2, 3, 4, 5, -6}, xt[6], want_x[36];
  int64_t s32[2] = {3, 2}, s3232[4] = {3, 2, 3, 2};
  ag_tensor *x, *xtr = NULL, *b, *jac[2] = {NULL, NULL};
  const ag_tensor *ins[2];
  ag_gradcheck_result r = AG_GRADCHECK_RESULT_INIT;
  int p, q;
  REQUIRE(ctx);
  x = F64(ctx, s23, 2, xv);
  REQUIRE_OK(ag_op_transpose(&xtr, x, 0, 1));
  b = SCALAR(ctx, AG_F64, -1.5);
  for (p = 0; p < 3; p++)
    for (q = 0; q < 2; q++)
      xt[p * 2 + q] = xv[q * 3 + p];
  for (p = 0; p < 6; p++)
    for (q = 0; q < 6; q++)
      want_x[p * 6 + q] = p == q ? -1.5 : 0;
  ins[0] = xtr;
  ins[1] = b;
  REQUIRE_OK(ag_jacobian(jac, fn_scale, NULL, ins, 2, 1, NULL));
  CHECK_SHAPE(jac[0], s3232, 4);
  CHECK_VALUES(jac[0], want_x, 36, 0);
  CHECK_SHAPE(jac[1], s32, 2); /* d (x b) / d b = x */
  CHECK_VALUES(jac[1], xt, 6, 0);
  release_all(jac, 2);
  REQUIRE_OK(ag_tensor_requires_grad(b, 1));
  REQUIRE_OK(ag_tensor_requires_grad(x, 1));
  REL(xtr);
  REQUIRE_OK(ag_op_transpose(&xtr, x, 0, 1));
  ins[0] = xtr;
  REQUIRE_OK(ag_gradcheck(&r, fn_scale, NULL, ins, 2, 1, NULL));
  CHECK(r.passed == 1 && r.num_compared == 36 + 6);
  REQUIRE_OK(ag_gradgradcheck(&r, fn_scale, NULL, ins, 2, NULL, 1, NULL));
  CHECK(r.passed == 1);
  REL(xtr);
  REL(x);
  REL(b);
  ag_context_release(ctx);
}

/* A function that returns its input: the output is the leaf fn was given. */
static void test_identity_function(void) {
  ag_context *ctx = NEW_CTX();
  double xv[3] = {1, 2, 3}, vv[3] = {4, 5, 6}, eye[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  int64_t s33[2] = {3, 3};
  ag_tensor *x, *v, *r[1] = {NULL}, *outs[1] = {NULL};
  const ag_tensor *ins[1], *vs[1];
  ag_gradcheck_result res = AG_GRADCHECK_RESULT_INIT;
  REQUIRE(ctx);
  x = LEAF(ctx, AG_F64, s3, 1, xv);
  v = F64(ctx, s3, 1, vv);
  ins[0] = x;
  vs[0] = v;
  REQUIRE_OK(ag_vjp(r, outs, fn_identity, NULL, ins, 1, vs, 1, NULL));
  CHECK_VALUES(r[0], vv, 3, 0);
  CHECK_VALUES(outs[0], xv, 3, 0);
  release_all(r, 1);
  release_all(outs, 1);
  REQUIRE_OK(ag_jvp(r, NULL, fn_identity, NULL, ins, 1, vs, 1, NULL));
  CHECK_VALUES(r[0], vv, 3, 0);
  release_all(r, 1);
  REQUIRE_OK(ag_jacobian(r, fn_identity, NULL, ins, 1, 1, NULL));
  CHECK_SHAPE(r[0], s33, 2);
  CHECK_VALUES(r[0], eye, 9, 0);
  release_all(r, 1);
  REQUIRE_OK(ag_gradcheck(&res, fn_identity, NULL, ins, 1, 1, NULL));
  CHECK(res.passed == 1 && res.num_compared == 9);
  REL(x);
  REL(v);
  ag_context_release(ctx);
}

static void test_hessian_closed_form(void) {
  ag_context *ctx = NEW_CTX();
  double xv[3] = {0.5, -1.5, 2}, yv[3] = {1, 2, 3}, hxx[9], eye[9], zero[9];
  int64_t s33[2] = {3, 3};
  ag_tensor *x, *y, *h[4] = {NULL, NULL, NULL, NULL};
  const ag_tensor *ins[2];
  int p, q;
  REQUIRE(ctx);
  for (p = 0; p < 3; p++)
    for (q = 0; q < 3; q++) {
      hxx[p * 3 + q] = p == q ? 6 * xv[p] : 0;
      eye[p * 3 + q] = p == q;
      zero[p * 3 + q] = 0;
    }
  x = F64(ctx, s3, 1, xv);
  y = F64(ctx, s3, 1, yv);
  ins[0] = x;
  ins[1] = y;
  REQUIRE_OK(ag_hessian(h, fn_scalar_xy, NULL, ins, 2, NULL));
  for (p = 0; p < 4; p++)
    CHECK_SHAPE(h[p], s33, 2);
  CHECK_VALUES(h[0], hxx, 9, 1e-12);
  CHECK_VALUES(h[1], eye, 9, 1e-12);
  CHECK_VALUES(h[2], eye, 9, 1e-12);
  CHECK_VALUES(h[3], zero, 9, 0);
  release_all(h, 4);
  REL(x);
  REL(y);
  ag_context_release(ctx);
}

static void test_hvp_closed_form_and_create_graph(void) {
  ag_context *ctx = NEW_CTX();
  double xv[3] = {0.5, -1.5, 2}, yv[3] = {1, 2, 3}, vx[3] = {1, -1, 2}, vy[3] = {0.5, 0.5, -1};
  double want_x[3], want_y[3], third[3], fval = 0;
  ag_tensor *x, *y, *tx, *ty, *hv[2] = {NULL, NULL}, *out[1] = {NULL}, *s = NULL, *g[1] = {NULL};
  const ag_tensor *ins[2], *vs[2], *roots[1];
  ag_functional_options o = AG_FUNCTIONAL_OPTIONS_INIT;
  int i;
  REQUIRE(ctx);
  for (i = 0; i < 3; i++) {
    want_x[i] = 6 * xv[i] * vx[i] + vy[i]; /* H = [[diag(6x), I], [I, 0]] */
    want_y[i] = vx[i];
    third[i] = 6 * vx[i]; /* d/dx of sum(6 x vx) */
    fval += xv[i] * xv[i] * xv[i] + xv[i] * yv[i];
  }
  x = LEAF(ctx, AG_F64, s3, 1, xv);
  y = F64(ctx, s3, 1, yv);
  tx = F64(ctx, s3, 1, vx);
  ty = F64(ctx, s3, 1, vy);
  ins[0] = x;
  ins[1] = y;
  vs[0] = tx;
  vs[1] = ty;
  REQUIRE_OK(ag_hvp(hv, out, fn_scalar_xy, NULL, ins, 2, vs, NULL));
  CHECK_VALUES(hv[0], want_x, 3, 1e-12);
  CHECK_VALUES(hv[1], want_y, 3, 1e-12);
  CHECK_CLOSE(ITEM(out[0]), fval, 1e-12);
  release_all(hv, 2);
  release_all(out, 1);
  o.create_graph = 1;
  REQUIRE_OK(ag_hvp(hv, NULL, fn_scalar_xy, NULL, ins, 2, vs, &o));
  REQUIRE_OK(ag_op_sum(&s, hv[0]));
  roots[0] = s;
  ins[1] = NULL;
  REQUIRE_OK(ag_grad(g, roots, NULL, 1, ins, 1, NULL));
  CHECK_VALUES(g[0], third, 3, 1e-12);
  release_all(g, 1);
  REL(s);
  release_all(hv, 2);
  REL(x);
  REL(y);
  REL(tx);
  REL(ty);
  ag_context_release(ctx);
}

/* Results handed out inside a handle scope go with it. */
static void test_results_in_handle_scope(void) {
  ag_context *ctx = NEW_CTX();
  double xv[3] = {1, 2, 3};
  ag_tensor *x, *r[1] = {NULL}, *outs[1] = {NULL};
  const ag_tensor *ins[1];
  ag_scope *scope = NULL;
  REQUIRE(ctx);
  x = F64(ctx, s3, 1, xv);
  ins[0] = x;
  REQUIRE_OK(ag_scope_begin(&scope));
  CHECK_OK(ag_vjp(r, outs, fn_sum_cube, NULL, ins, 1, NULL, 1, NULL));
  CHECK_OK(ag_jacobian(r, fn_cube, NULL, ins, 1, 1, NULL));
  CHECK(ag_tensor_numel(r[0]) == 9);
  CHECK_OK(ag_scope_end(scope)); /* releases r[0] and the vjp results (leak checks would see them) */
  CHECK(ag_scope_depth() == 0);
  REL(x);
  ag_context_release(ctx);
}

/* sum(2 x): a linear function, whose Hessian is zero */
static ag_status fn_linear(void *ud, const ag_tensor *const *in, int32_t n, ag_tensor **out, int32_t m) {
  ag_tensor *t = NULL;
  ag_status st;
  (void)ud;
  if (n != 1 || m != 1)
    return AG_ERR_INTERNAL;
  st = ag_op_add(&t, in[0], in[0]);
  if (st == AG_OK)
    st = ag_op_sum(&out[0], t);
  ag_tensor_release(t);
  return st;
}

/* zeros shaped like the input, made without using it */
static ag_status fn_constant(void *ud, const ag_tensor *const *in, int32_t n, ag_tensor **out, int32_t m) {
  ag_context *c = NULL;
  ag_status st;
  (void)ud;
  if (n != 1 || m != 1)
    return AG_ERR_INTERNAL;
  st = ag_tensor_context(&c, in[0]);
  if (st == AG_OK)
    st = ag_tensor_zeros(&out[0], c, AG_F64, s3, 1);
  ag_context_release(c);
  return st;
}

static void test_strict_jvp_hessian_hvp(void) {
  ag_context *ctx = NEW_CTX();
  double xv[3] = {1, 2, 3}, zero[9] = {0};
  ag_tensor *x, *r[1] = {NULL};
  const ag_tensor *ins[1];
  ag_functional_options o = AG_FUNCTIONAL_OPTIONS_INIT;
  REQUIRE(ctx);
  x = F64(ctx, s3, 1, xv);
  ins[0] = x;
  REQUIRE_OK(ag_jvp(r, NULL, fn_constant, NULL, ins, 1, ins, 1, &o));
  CHECK_VALUES(r[0], zero, 3, 0);
  release_all(r, 1);
  REQUIRE_OK(ag_hessian(r, fn_linear, NULL, ins, 1, &o));
  CHECK_VALUES(r[0], zero, 9, 0);
  release_all(r, 1);
  REQUIRE_OK(ag_hvp(r, NULL, fn_linear, NULL, ins, 1, ins, &o));
  CHECK_VALUES(r[0], zero, 3, 0);
  release_all(r, 1);
  o.strict = 1;
  r[0] = SENT_T;
  CHECK_ERR(ag_jvp(r, NULL, fn_constant, NULL, ins, 1, ins, 1, &o), AG_ERR_GRAPH, "ag_jvp");
  CHECK_MSG_HAS("outputs[0] depends on no input (strict)");
  CHECK_ERR(ag_hessian(r, fn_linear, NULL, ins, 1, &o), AG_ERR_GRAPH, "ag_hessian");
  CHECK_MSG_HAS("the gradient with respect to inputs[0] does not depend on inputs[0] (strict)");
  CHECK_ERR(ag_hvp(r, NULL, fn_linear, NULL, ins, 1, ins, &o), AG_ERR_GRAPH, "ag_hvp");
  CHECK_MSG_HAS("<grad f, v> does not depend on inputs[0] (strict)");
  CHECK(r[0] == SENT_T);
  /* strict is no obstacle where everything depends on everything */
  REQUIRE_OK(ag_hessian(r, fn_sum_cube, NULL, ins, 1, &o));
  release_all(r, 1);
  REL(x);
  ag_context_release(ctx);
}

/* With create_graph, the Hessian can be differentiated again: d/dx sum(diag(6 x)) = 6. */
static void test_hessian_create_graph_third_derivative(void) {
  ag_context *ctx = NEW_CTX();
  double xv[3] = {1, -2, 3}, six[3] = {6, 6, 6};
  ag_tensor *x, *h[1] = {NULL}, *s = NULL, *g[1] = {NULL};
  const ag_tensor *ins[1], *roots[1];
  ag_functional_options o = AG_FUNCTIONAL_OPTIONS_INIT;
  REQUIRE(ctx);
  x = LEAF(ctx, AG_F64, s3, 1, xv);
  ins[0] = x;
  o.create_graph = 1;
  REQUIRE_OK(ag_hessian(h, fn_sum_cube, NULL, ins, 1, &o));
  REQUIRE_OK(ag_op_sum(&s, h[0]));
  roots[0] = s;
  REQUIRE_OK(ag_grad(g, roots, NULL, 1, ins, 1, NULL));
  CHECK_VALUES(g[0], six, 3, 1e-12);
  release_all(g, 1);
  REL(s);
  release_all(h, 1);
  REL(x);
  ag_context_release(ctx);
}

static void test_strict_and_unused_inputs(void) {
  ag_context *ctx = NEW_CTX();
  double xv[3] = {1, 2, 3}, zero[3] = {0, 0, 0}, two[3] = {2, 2, 2};
  ag_tensor *x, *y, *r[2] = {NULL, NULL}, *jac[2] = {NULL, NULL};
  const ag_tensor *ins[2];
  ag_functional_options o = AG_FUNCTIONAL_OPTIONS_INIT;
  REQUIRE(ctx);
  x = F64(ctx, s3, 1, xv);
  y = F64(ctx, s3, 1, xv);
  ins[0] = x;
  ins[1] = y;
  /* sum is not needed: v given through a ones tensor */
  {
    ag_tensor *v = NULL;
    const ag_tensor *vs[1];
    REQUIRE_OK(ag_tensor_ones(&v, ctx, AG_F64, s3, 1));
    vs[0] = v;
    REQUIRE_OK(ag_vjp(r, NULL, fn_ignores_y, NULL, ins, 2, vs, 1, NULL));
    CHECK_VALUES(r[0], two, 3, 0);
    CHECK_VALUES(r[1], zero, 3, 0);
    release_all(r, 2);
    o.strict = 1;
    r[0] = r[1] = SENT_T;
    CHECK_ERR(ag_vjp(r, NULL, fn_ignores_y, NULL, ins, 2, vs, 1, &o), AG_ERR_GRAPH, "ag_vjp");
    CHECK_MSG_HAS("no output depends on inputs[1] (strict)");
    CHECK(r[0] == SENT_T && r[1] == SENT_T);
    REL(v);
  }
  CHECK_ERR(ag_jacobian(jac, fn_ignores_y, NULL, ins, 2, 1, &o), AG_ERR_GRAPH, "ag_jacobian");
  CHECK_MSG_HAS("outputs[0] does not depend on inputs[1] (strict)");
  o.strict = 0;
  REQUIRE_OK(ag_jacobian(jac, fn_ignores_y, NULL, ins, 2, 1, &o));
  {
    double z9[9] = {0};
    CHECK_VALUES(jac[1], z9, 9, 0);
  }
  release_all(jac, 2);
  REL(x);
  REL(y);
  ag_context_release(ctx);
}

/* ---- failures ------------------------------------------------------------------ */

static ag_status failing_hook(void *ud, const ag_tensor *grad, ag_tensor **replacement) {
  (void)ud;
  (void)grad;
  (void)replacement;
  ag_set_callback_error("hook says no");
  return AG_ERR_UNSUPPORTED;
}

/* y = x * x with a failing hook on y: backward fails inside the helper. */
static ag_status fn_with_failing_hook(void *ud, const ag_tensor *const *in, int32_t n, ag_tensor **out, int32_t m) {
  ag_status st;
  (void)ud;
  (void)n;
  (void)m;
  st = ag_op_mul(&out[0], in[0], in[0]);
  if (st != AG_OK)
    return st;
  return ag_tensor_register_hook(NULL, out[0], failing_hook, NULL, NULL);
}

static void test_callback_failures(void) {
  ag_context *ctx = NEW_CTX();
  double xv[3] = {1, 2, 3};
  ag_tensor *x, *r[1], *outs[1], *h[1];
  const ag_tensor *ins[1];
  misuse s;
  REQUIRE(ctx);
  x = LEAF(ctx, AG_F64, s3, 1, xv);
  ins[0] = x;

  memset(&s, 0, sizeof s);
  s.fail_at = 1;
  r[0] = outs[0] = SENT_T;
  CHECK_ERR(ag_vjp(r, outs, fn_misbehaving, &s, ins, 1, NULL, 1, NULL), AG_ERR_CALLBACK, "ag_vjp");
  CHECK_MSG_HAS("fn failed (AG_ERR_SHAPE): the model diverged");
  CHECK(r[0] == SENT_T && outs[0] == SENT_T);

  memset(&s, 0, sizeof s);
  s.null_output = 1;
  CHECK_ERR(ag_jacobian(r, fn_misbehaving, &s, ins, 1, 1, NULL), AG_ERR_CALLBACK, "ag_jacobian");
  CHECK_MSG_HAS("fn left entry 0 NULL");

  memset(&s, 0, sizeof s);
  s.i64_output = 1;
  CHECK_ERR(ag_jacobian(r, fn_misbehaving, &s, ins, 1, 1, NULL), AG_ERR_CALLBACK, "ag_jacobian");
  CHECK_MSG_HAS("fn returned outputs[0] of dtype i64; only floating outputs (f32, f64) can be differentiated");

  /* a non-scalar function for the scalar helpers */
  memset(&s, 0, sizeof s);
  CHECK_ERR(ag_hessian(h, fn_misbehaving, &s, ins, 1, NULL), AG_ERR_CALLBACK, "ag_hessian");
  CHECK_MSG_HAS("fn returned outputs[0] of shape (3); ag_hessian needs a scalar function");
  CHECK_ERR(ag_hvp(h, NULL, fn_misbehaving, &s, ins, 1, ins, NULL), AG_ERR_CALLBACK, "ag_hvp");
  CHECK_MSG_HAS("ag_hvp needs a scalar function");

  /* a hook that fails during the helper's backward */
  CHECK_ERR(ag_vjp(r, NULL, fn_with_failing_hook, NULL, ins, 1, ins, 1, NULL), AG_ERR_CALLBACK, "ag_vjp");
  CHECK_MSG_HAS("hook says no");
  REL(x);
  ag_context_release(ctx);
}

static void test_bad_arguments(void) {
  ag_context *ctx = NEW_CTX();
  double xv[3] = {1, 2, 3};
  int64_t s4[1] = {4};
  ag_tensor *x, *xf, *idx, *wrong, *r[2] = {NULL, NULL};
  const ag_tensor *ins[2], *vs[1];
  ag_functional_options fo = AG_FUNCTIONAL_OPTIONS_INIT;
  REQUIRE(ctx);
  x = LEAF(ctx, AG_F64, s3, 1, xv);
  xf = MAKE(ctx, AG_F32, s3, 1, xv);
  idx = MAKE(ctx, AG_I64, s3, 1, xv);
  wrong = F64(ctx, s4, 1, NULL);
  ins[0] = x;

  CHECK_ERR(ag_vjp(NULL, NULL, fn_cube, NULL, ins, 1, NULL, 1, NULL), AG_ERR_INVALID_ARGUMENT, "ag_vjp");
  CHECK_MSG_HAS("vjp is NULL");
  CHECK_ERR(ag_vjp(r, NULL, NULL, NULL, ins, 1, NULL, 1, NULL), AG_ERR_INVALID_ARGUMENT, "ag_vjp");
  CHECK_MSG_HAS("fn is NULL");
  CHECK_ERR(ag_jvp(r, NULL, fn_cube, NULL, ins, 1, NULL, 0, NULL), AG_ERR_INVALID_ARGUMENT, "ag_jvp");
  CHECK_MSG_HAS("num_outputs is 0");
  CHECK_ERR(ag_jacobian(r, fn_cube, NULL, NULL, 1, 1, NULL), AG_ERR_INVALID_ARGUMENT, "ag_jacobian");
  CHECK_MSG_HAS("needs at least one input (inputs NULL, num_inputs 1)");
  CHECK_ERR(ag_hessian(r, fn_cube, NULL, ins, 0, NULL), AG_ERR_INVALID_ARGUMENT, "ag_hessian");
  ins[0] = idx;
  CHECK_ERR(ag_jacobian(r, fn_cube, NULL, ins, 1, 1, NULL), AG_ERR_DTYPE, "ag_jacobian");
  CHECK_MSG_HAS("inputs[0] has dtype i64; only floating inputs (f32, f64) can be differentiated");
  ins[0] = x;
  vs[0] = wrong;
  CHECK_ERR(ag_vjp(r, NULL, fn_cube, NULL, ins, 1, vs, 1, NULL), AG_ERR_SHAPE, "ag_vjp");
  CHECK_MSG_HAS("v[0] has shape (4), outputs[0] has (3)");
  vs[0] = xf;
  CHECK_ERR(ag_vjp(r, NULL, fn_cube, NULL, ins, 1, vs, 1, NULL), AG_ERR_DTYPE, "ag_vjp");
  CHECK_MSG_HAS("v[0] has dtype f32, outputs[0] has f64");
  CHECK_ERR(ag_jvp(r, NULL, fn_cube, NULL, ins, 1, NULL, 1, NULL), AG_ERR_SHAPE, "ag_jvp");
  CHECK_MSG_HAS("v[0] may be NULL only for an input with one element; inputs[0] has shape (3)");
  CHECK_ERR(ag_hvp(r, NULL, fn_cube, NULL, ins, 1, vs, NULL), AG_ERR_DTYPE, "ag_hvp");
  CHECK_MSG_HAS("v[0] has dtype f32, inputs[0] has f64");
  /* inputs of two dtypes are fine; the op inside fn fails, and its message is carried */
  ins[1] = xf;
  CHECK_ERR(ag_jacobian(r, fn_matvec, NULL, ins, 2, 1, NULL), AG_ERR_CALLBACK, "ag_jacobian");
  CHECK_MSG_HAS("fn failed (AG_ERR_DTYPE): [ag_op_matmul] dtypes f64 and f32 differ");
  fo.struct_size = 2;
  CHECK_ERR(ag_jacobian(r, fn_cube, NULL, ins, 1, 1, &fo), AG_ERR_INVALID_ARGUMENT, "ag_jacobian");
  CHECK_MSG_HAS("struct_size 2 is too small");
  CHECK(r[0] == NULL && r[1] == NULL);

  REL(x);
  REL(xf);
  REL(idx);
  REL(wrong);
  ag_context_release(ctx);
}

int main(int argc, char **argv) {
  h_init(argc, argv);
  RUN(test_vjp_cube);
  RUN(test_vjp_matvec_closed_form);
  RUN(test_jvp_two_outputs);
  RUN(test_jvp_matches_finite_differences);
  RUN(test_vjp_create_graph_second_derivative);
  RUN(test_jvp_create_graph_second_derivative);
  RUN(test_jacobian_matvec_layout);
  RUN(test_jacobian_softmax_closed_form);
  RUN(test_jacobian_two_outputs_and_f32);
  RUN(test_jacobian_matches_finite_differences);
  RUN(test_jacobian_empty_and_scalar);
  RUN(test_jacobian_broadcast_and_noncontiguous);
  RUN(test_identity_function);
  RUN(test_hessian_closed_form);
  RUN(test_hvp_closed_form_and_create_graph);
  RUN(test_results_in_handle_scope);
  RUN(test_strict_and_unused_inputs);
  RUN(test_strict_jvp_hessian_hvp);
  RUN(test_hessian_create_graph_third_derivative);
  RUN(test_callback_failures);
  RUN(test_bad_arguments);
  return h_finish();
}
