/*
 * tests/c_api/test_autograd_seed.c - gradients through the C API: the seed
 * examples in f64 and f32, a leaf used twice, a one-element root of any ndim,
 * a leaf backward does not reach, and zero-size tensors.
 */
#include "harness.h"

static const int64_t s1[1] = {1};
static const int64_t s3[1] = {3};

/* ---- the seed examples ----------------------------------------------------------- */

/* x = [3], y = x*x, dy/dx = 6. */
static void test_seed_square(ag_dtype dt) {
  ag_context *ctx;
  double xv[1] = {3.0};
  ag_tensor *x, *y = NULL, *g;
  REQUIRE(NEW_CTX_WITH_LEAF(&ctx, &x, dt, s1, 1, xv));
  REQUIRE_OK(ag_op_mul(&y, x, x));
  CHECK(ag_tensor_dtype(y) == dt);
  CHECK_SHAPE(y, s1, 1);
  CHECK_CLOSE(ITEM(y), 9.0, 0);
  REQUIRE_OK(ag_backward(y, NULL, NULL));
  g = GRAD(x);
  REQUIRE(g != NULL);
  CHECK(ag_tensor_dtype(g) == dt);
  CHECK_SHAPE(g, s1, 1);
  CHECK_CLOSE(ITEM(g), 6.0, 0);
  REL(g);
  REL(y);
  REL(x);
  ag_context_release(ctx);
}

/* Q = 3a^3 - b^2 with a = [2,3], b = [6,4]; backward with ones gives
 * dQ/da = 9a^2 = [36,81], dQ/db = -2b = [-12,-8]. */
static void test_seed_Q(ag_dtype dt) {
  ag_context *ctx = NEW_CTX();
  int64_t s2[1] = {2};
  double av[2] = {2, 3}, bv[2] = {6, 4};
  double qwant[2] = {3 * 8 - 36, 3 * 27 - 16}, gawant[2] = {36, 81}, gbwant[2] = {-12, -8};
  ag_tensor *a, *b, *three, *a3 = NULL, *t = NULL, *b2 = NULL, *q = NULL, *ones = NULL, *ga, *gb;
  REQUIRE(ctx);
  a = LEAF(ctx, dt, s2, 1, av);
  b = LEAF(ctx, dt, s2, 1, bv);
  three = SCALAR(ctx, dt, 3.0);
  REQUIRE(a && b && three);
  REQUIRE_OK(ag_op_pow_scalar(&a3, a, 3.0));
  REQUIRE_OK(ag_op_mul(&t, three, a3));
  REQUIRE_OK(ag_op_pow_scalar(&b2, b, 2.0));
  REQUIRE_OK(ag_op_sub(&q, t, b2));
  CHECK_VALUES(q, qwant, 2, h_tol(dt) * 100);
  REQUIRE_OK(ag_tensor_ones(&ones, ctx, dt, s2, 1));
  REQUIRE_OK(ag_backward(q, ones, NULL));
  ga = GRAD(a);
  gb = GRAD(b);
  CHECK_VALUES(ga, gawant, 2, h_tol(dt) * 100);
  CHECK_VALUES(gb, gbwant, 2, h_tol(dt) * 10);
  CHECK_NO_GRAD(three); /* the constant requires no grad and gets none */
  REL(ga);
  REL(gb);
  REL(ones);
  REL(q);
  REL(b2);
  REL(t);
  REL(a3);
  REL(three);
  REL(a);
  REL(b);
  ag_context_release(ctx);
}

/* out = mean(3 * (x + 2)^2) over x = ones(2,2): out = 27, d out/dx = 4.5 everywhere. */
static void test_seed_mean(ag_dtype dt) {
  ag_context *ctx = NEW_CTX();
  int64_t s22[2] = {2, 2};
  ag_tensor *x = NULL, *two, *three, *y = NULL, *z = NULL, *z3 = NULL, *out = NULL, *g;
  REQUIRE(ctx);
  REQUIRE_OK(ag_tensor_ones(&x, ctx, dt, s22, 2));
  REQUIRE_OK(ag_tensor_requires_grad(x, 1));
  two = SCALAR(ctx, dt, 2.0);
  three = SCALAR(ctx, dt, 3.0);
  REQUIRE(two && three);
  REQUIRE_OK(ag_op_add(&y, x, two));
  REQUIRE_OK(ag_op_mul(&z, y, y));
  REQUIRE_OK(ag_op_mul(&z3, z, three));
  CHECK_ALL(z3, 27.0, 4, 0);
  REQUIRE_OK(ag_op_mean(&out, z3));
  CHECK(ag_tensor_ndim(out) == 0);
  CHECK_CLOSE(ITEM(out), 27.0, h_tol(dt));
  REQUIRE_OK(ag_backward(out, NULL, NULL));
  g = GRAD(x);
  REQUIRE(g != NULL);
  CHECK_SHAPE(g, s22, 2);
  CHECK_ALL(g, 4.5, 4, h_tol(dt));
  REL(g);
  REL(out);
  REL(z3);
  REL(z);
  REL(y);
  REL(three);
  REL(two);
  REL(x);
  ag_context_release(ctx);
}

/* A leaf used twice sums its gradients: y = x*x + x gives 2x + 1. */
static void test_leaf_used_twice(ag_dtype dt) {
  ag_context *ctx;
  double xv[3] = {1, 2, -3}, want[3] = {3, 5, -5};
  ag_tensor *x, *xx = NULL, *y = NULL, *s = NULL;
  REQUIRE(NEW_CTX_WITH_LEAF(&ctx, &x, dt, s3, 1, xv));
  REQUIRE_OK(ag_op_mul(&xx, x, x));
  REQUIRE_OK(ag_op_add(&y, xx, x));
  REQUIRE_OK(ag_op_sum(&s, y));
  REQUIRE_OK(ag_backward(s, NULL, NULL));
  CHECK_GRAD_VALUES(x, want, 3, h_tol(dt));
  REL(s);
  REL(y);
  REL(xx);
  REL(x);
  ag_context_release(ctx);
}

/* ---- roots and leaves ------------------------------------------------------------ */

/* A NULL grad_root needs one element, of any ndim. */
static void test_one_element_root_any_ndim(ag_dtype dt) {
  ag_context *ctx;
  int64_t s111[3] = {1, 1, 1};
  double xv[1] = {-2};
  ag_tensor *x, *y = NULL, *g;
  REQUIRE(NEW_CTX_WITH_LEAF(&ctx, &x, dt, s111, 3, xv));
  REQUIRE_OK(ag_op_pow_scalar(&y, x, 3.0));
  CHECK_SHAPE(y, s111, 3);
  REQUIRE_OK(ag_backward(y, NULL, NULL));
  g = GRAD(x);
  CHECK_SHAPE(g, s111, 3);
  CHECK_CLOSE(ITEM(g), 12.0, h_tol(dt) * 10);
  REL(g);
  REL(y);
  REL(x);
  ag_context_release(ctx);
}

/* A leaf that requires grad but is not in the graph gets no gradient. */
static void test_unreached_leaf(void) {
  ag_context *ctx = NEW_CTX();
  double xv[1] = {2};
  ag_tensor *x, *z, *y = NULL, *g;
  REQUIRE(ctx);
  x = LEAF(ctx, AG_F64, s1, 1, xv);
  z = LEAF(ctx, AG_F64, s1, 1, xv);
  REQUIRE(x && z);
  REQUIRE_OK(ag_op_exp(&y, x));
  REQUIRE_OK(ag_backward(y, NULL, NULL));
  CHECK_NO_GRAD(z);
  g = GRAD(x);
  CHECK_CLOSE(ITEM(g), exp(2.0), 1e-12);
  REL(g);
  REL(y);
  REL(x);
  REL(z);
  ag_context_release(ctx);
}

/* Zero-size tensors go through backward: sum of an empty x gives an empty gradient. */
static void test_zero_size_backward(void) {
  ag_context *ctx;
  int64_t s0[2] = {0, 3};
  ag_tensor *x, *s = NULL, *g;
  REQUIRE(NEW_CTX_WITH_LEAF(&ctx, &x, AG_F64, s0, 2, NULL));
  REQUIRE_OK(ag_op_sum(&s, x));
  CHECK_CLOSE(ITEM(s), 0.0, 0);
  CHECK_OK(ag_backward(s, NULL, NULL));
  g = GRAD(x);
  if (CHECK(g != NULL)) {
    CHECK_SHAPE(g, s0, 2);
    CHECK(ag_tensor_numel(g) == 0);
  }
  REL(g);
  REL(s);
  REL(x);
  ag_context_release(ctx);
}

int main(int argc, char **argv) {
  h_init(argc, argv);
  RUN_F64_F32(test_seed_square);
  RUN_F64_F32(test_seed_Q);
  RUN_F64_F32(test_seed_mean);
  RUN_F64_F32(test_leaf_used_twice);
  RUN_F64_F32(test_one_element_root_any_ndim);
  RUN(test_unreached_leaf);
  RUN(test_zero_size_backward);
  return h_finish();
}
