/*
 * tests/c_api/test_autograd_broadcast.c - gradients of broadcasting binary ops
 * through the C API come back in the shape of each input; expand and
 * sum_to_size are each other's gradients.
 */
#include "harness.h"

static const int64_t s3[1] = {3};

/* The gradient of `t` has shape[0..ndim) and the values want[0..n). */
static void check_grad(const ag_tensor *t, const int64_t *shape, int32_t ndim, const double *want, int64_t n) {
  ag_tensor *g = GRAD(t);
  CHECK_SHAPE(g, shape, ndim);
  CHECK_VALUES(g, want, n, 0);
  REL(g);
}

/* a (2,3) + b (3) with grad_root ones: a.grad = ones, b.grad = [2,2,2]. */
static void test_broadcast_add_grad(ag_dtype dt) {
  ag_context *ctx = NEW_CTX();
  int64_t s23[2] = {2, 3};
  double av[6] = {1, 2, 3, 4, 5, 6}, bv[3] = {10, 20, 30};
  double gawant[6] = {1, 1, 1, 1, 1, 1}, gbwant[3] = {2, 2, 2};
  ag_tensor *a, *b, *y = NULL, *ones = NULL;
  REQUIRE(ctx);
  a = LEAF(ctx, dt, s23, 2, av);
  b = LEAF(ctx, dt, s3, 1, bv);
  REQUIRE(a && b);
  REQUIRE_OK(ag_op_add(&y, a, b));
  CHECK_SHAPE(y, s23, 2);
  REQUIRE_OK(ag_tensor_ones(&ones, ctx, dt, s23, 2));
  REQUIRE_OK(ag_backward(y, ones, NULL));
  check_grad(a, s23, 2, gawant, 6);
  check_grad(b, s3, 1, gbwant, 3);
  REL(ones);
  REL(y);
  REL(a);
  REL(b);
  ag_context_release(ctx);
}

/* a (2,1) * b (1,3) with grad_root G (2,3):
 * a.grad[i] = sum_j G[i][j] b[j], b.grad[j] = sum_i G[i][j] a[i]. */
static void test_broadcast_mul_grad(ag_dtype dt) {
  ag_context *ctx = NEW_CTX();
  int64_t s21[2] = {2, 1}, s13[2] = {1, 3}, s23[2] = {2, 3};
  double av[2] = {1, 2}, bv[3] = {3, 4, 5}, Gv[6] = {1, 2, 3, 4, 5, 6};
  double ywant[6] = {3, 4, 5, 6, 8, 10}, gawant[2] = {26, 62}, gbwant[3] = {9, 12, 15};
  ag_tensor *a, *b, *G, *y = NULL;
  REQUIRE(ctx);
  a = LEAF(ctx, dt, s21, 2, av);
  b = LEAF(ctx, dt, s13, 2, bv);
  G = MAKE(ctx, dt, s23, 2, Gv);
  REQUIRE(a && b && G);
  REQUIRE_OK(ag_op_mul(&y, a, b));
  CHECK_SHAPE(y, s23, 2);
  CHECK_VALUES(y, ywant, 6, 0);
  REQUIRE_OK(ag_backward(y, G, NULL));
  check_grad(a, s21, 2, gawant, 2);
  check_grad(b, s13, 2, gbwant, 3);
  REL(y);
  REL(G);
  REL(a);
  REL(b);
  ag_context_release(ctx);
}

/* A 0-dim leaf broadcast against (2,3): its gradient is the 0-dim sum. */
static void test_scalar_broadcast_grad(ag_dtype dt) {
  ag_context *ctx = NEW_CTX();
  int64_t s23[2] = {2, 3};
  double av[6] = {1, 2, 3, 4, 5, 6};
  double sv = 0.5;
  ag_tensor *a, *s, *y = NULL, *t = NULL, *gs, *ga;
  REQUIRE(ctx);
  a = LEAF(ctx, dt, s23, 2, av);
  s = LEAF(ctx, dt, NULL, 0, &sv);
  REQUIRE(a && s);
  REQUIRE_OK(ag_op_div(&y, a, s)); /* y = a / s */
  REQUIRE_OK(ag_op_sum(&t, y));
  CHECK_CLOSE(ITEM(t), 42.0, h_tol(dt) * 10);
  REQUIRE_OK(ag_backward(t, NULL, NULL));
  gs = GRAD(s);
  ga = GRAD(a);
  REQUIRE(gs != NULL && ga != NULL);
  CHECK(ag_tensor_ndim(gs) == 0);
  CHECK_CLOSE(ITEM(gs), -21.0 / (0.5 * 0.5), h_tol(dt) * 100); /* -sum(a)/s^2 = -84 */
  CHECK_ALL(ga, 2.0, 6, h_tol(dt));
  REL(gs);
  REL(ga);
  REL(t);
  REL(y);
  REL(s);
  REL(a);
  ag_context_release(ctx);
}

/* expand and sum_to_size are each other's gradients. */
static void test_expand_sum_to_size_grad(ag_dtype dt) {
  ag_context *ctx = NEW_CTX();
  int64_t s13[2] = {1, 3}, s23[2] = {2, 3}, s423[3] = {4, 2, 3};
  double xv[3] = {1, 2, 3}, wv[6] = {1, 2, 3, 4, 5, 6}, gxwant[3] = {5, 7, 9}, gzwant[24];
  ag_tensor *x, *w, *e = NULL, *m = NULL, *s = NULL;
  ag_tensor *z, *r = NULL, *t = NULL;
  int i;
  REQUIRE(ctx);
  /* sum(expand(x, (2,3)) * W) : dx = column sums of W = [5,7,9] */
  x = LEAF(ctx, dt, s13, 2, xv);
  w = MAKE(ctx, dt, s23, 2, wv);
  REQUIRE(x && w);
  REQUIRE_OK(ag_op_expand(&e, x, s23, 2));
  REQUIRE_OK(ag_op_mul(&m, e, w));
  REQUIRE_OK(ag_op_sum(&s, m));
  REQUIRE_OK(ag_backward(s, NULL, NULL));
  check_grad(x, s13, 2, gxwant, 3);
  /* sum(sum_to_size(Z, (1,3)) * x2) with Z (4,2,3) -> dZ = broadcast of [1,2,3] */
  z = LEAF(ctx, dt, s423, 3, NULL);
  REQUIRE(z);
  REQUIRE_OK(ag_op_sum_to_size(&r, z, s13, 2));
  CHECK_SHAPE(r, s13, 2);
  REQUIRE_OK(ag_op_mul(&t, r, x));
  REL(s);
  s = NULL;
  REQUIRE_OK(ag_op_sum(&s, t));
  REQUIRE_OK(ag_backward(s, NULL, NULL));
  for (i = 0; i < 24; i++)
    gzwant[i] = xv[i % 3];
  check_grad(z, s423, 3, gzwant, 24);
  REL(t);
  REL(r);
  REL(z);
  REL(s);
  REL(m);
  REL(e);
  REL(w);
  REL(x);
  ag_context_release(ctx);
}

int main(int argc, char **argv) {
  h_init(argc, argv);
  RUN_F64_F32(test_broadcast_add_grad);
  RUN_F64_F32(test_broadcast_mul_grad);
  RUN_F64_F32(test_scalar_broadcast_grad);
  RUN_F64_F32(test_expand_sum_to_size_grad);
  return h_finish();
}
