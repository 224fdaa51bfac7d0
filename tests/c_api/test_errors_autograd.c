/*
 * tests/c_api/test_errors_autograd.c - autograd misuse through the C API:
 * non-scalar roots, bad grad_roots, roots that require no grad, a released
 * graph, requires_grad and set_grad errors; nothing accumulates on failure.
 */
#include "harness.h"

static const int64_t s1_3[1] = {3};

static void test_backward_nonscalar_root(void) {
  ag_context *ctx;
  double xv[3] = {1, 2, 3};
  ag_tensor *x, *y = NULL;
  REQUIRE(NEW_CTX_WITH(&ctx, &x, AG_F64, s1_3, 1, xv));
  REQUIRE_OK(ag_tensor_requires_grad(x, 1));
  REQUIRE_OK(ag_op_mul(&y, x, x));
  CHECK_ERR(ag_backward(y, NULL, NULL), AG_ERR_SHAPE, "ag_backward");
  CHECK_MSG_HAS("3");
  CHECK_NO_GRAD(x); /* nothing accumulated */
  REL(y);
  REL(x);
  ag_context_release(ctx);
}

static void test_backward_bad_grad_root(void) {
  ag_context *ctx = NEW_CTX();
  double xv[3] = {1, 2, 3};
  int64_t s2[1] = {2}, s31[2] = {3, 1};
  ag_tensor *x, *y = NULL, *r2, *r31, *rf32, *r0;
  REQUIRE(ctx);
  x = MAKE(ctx, AG_F64, s1_3, 1, xv);
  r2 = MAKE(ctx, AG_F64, s2, 1, NULL);
  r31 = MAKE(ctx, AG_F64, s31, 2, NULL);
  rf32 = MAKE(ctx, AG_F32, s1_3, 1, NULL);
  r0 = SCALAR(ctx, AG_F64, 1.0);
  REQUIRE(x && r2 && r31 && rf32 && r0);
  REQUIRE_OK(ag_tensor_requires_grad(x, 1));
  REQUIRE_OK(ag_op_mul(&y, x, x));
  CHECK_ERR(ag_backward(y, r2, NULL), AG_ERR_SHAPE, "ag_backward");
  CHECK_MSG_HAS("(2)");
  CHECK_MSG_HAS("(3)");
  CHECK_ERR(ag_backward(y, r31, NULL), AG_ERR_SHAPE, "ag_backward");
  CHECK_ERR(ag_backward(y, r0, NULL), AG_ERR_SHAPE, "ag_backward");
  CHECK_ERR(ag_backward(y, rf32, NULL), AG_ERR_DTYPE, "ag_backward");
  CHECK_NO_GRAD(x);
  /* the graph is intact after those failures */
  {
    ag_tensor *ones = NULL;
    double want[3] = {2, 4, 6};
    REQUIRE_OK(ag_tensor_ones(&ones, ctx, AG_F64, s1_3, 1));
    CHECK_OK(ag_backward(y, ones, NULL));
    CHECK_GRAD_VALUES(x, want, 3, 0);
    REL(ones);
  }
  REL(y);
  REL(x);
  REL(r2);
  REL(r31);
  REL(rf32);
  REL(r0);
  ag_context_release(ctx);
}

static void test_backward_requires_no_grad(void) {
  ag_context *ctx = NEW_CTX();
  ag_tensor *x, *y = NULL;
  REQUIRE(ctx);
  x = SCALAR(ctx, AG_F64, 2.0);
  REQUIRE(x);
  REQUIRE_OK(ag_op_mul(&y, x, x));
  CHECK_ERR(ag_backward(y, NULL, NULL), AG_ERR_GRAPH, "ag_backward");
  CHECK_ERR(ag_backward(x, NULL, NULL), AG_ERR_GRAPH, "ag_backward");
  REL(y);
  REL(x);
  ag_context_release(ctx);
}

/* Backward twice through a graph released by the first pass. */
static void test_backward_released_graph(void) {
  h_squares f;
  ag_tensor *g;
  REQUIRE(SQUARE_OF_SCALAR(&f, 3.0));
  REQUIRE_OK(ag_backward(f.y, NULL, NULL));
  CHECK_ERR(ag_backward(f.y, NULL, NULL), AG_ERR_GRAPH, "ag_backward");
  CHECK_MSG_HAS("Backward");
  CHECK_MSG_HAS("MulBackward");
  g = GRAD(f.x);
  CHECK_CLOSE(ITEM(g), 6.0, 0); /* the first pass only */
  REL(g);
  h_squares_drop(&f);
}

static void test_requires_grad_errors(void) {
  ag_context *ctx = NEW_CTX();
  ag_tensor *i, *b, *x, *y = NULL;
  REQUIRE(ctx);
  i = MAKE(ctx, AG_I64, s1_3, 1, NULL);
  b = MAKE(ctx, AG_BOOL, s1_3, 1, NULL);
  x = MAKE(ctx, AG_F32, s1_3, 1, NULL);
  REQUIRE(i && b && x);
  CHECK_ERR(ag_tensor_requires_grad(i, 1), AG_ERR_DTYPE, "ag_tensor_requires_grad");
  CHECK_MSG_HAS("i64");
  CHECK(ag_tensor_get_requires_grad(i) == 0);
  CHECK_ERR(ag_tensor_requires_grad(b, 1), AG_ERR_DTYPE, "ag_tensor_requires_grad");
  CHECK(ag_tensor_get_requires_grad(b) == 0);
  /* non-leaf */
  REQUIRE_OK(ag_tensor_requires_grad(x, 1));
  REQUIRE_OK(ag_op_exp(&y, x));
  CHECK_ERR(ag_tensor_requires_grad(y, 1), AG_ERR_GRAPH, "ag_tensor_requires_grad");
  CHECK_ERR(ag_tensor_requires_grad(y, 0), AG_ERR_GRAPH, "ag_tensor_requires_grad");
  CHECK(ag_tensor_get_requires_grad(y) == 1);
  CHECK(ag_tensor_is_leaf(y) == 0);
  REL(i);
  REL(b);
  REL(x);
  REL(y);
  ag_context_release(ctx);
}

static void test_set_grad_errors(void) {
  ag_context *ctx = NEW_CTX();
  int64_t s2[1] = {2};
  ag_tensor *x, *y = NULL, *wrong_shape, *wrong_dtype, *ok;
  REQUIRE(ctx);
  x = MAKE(ctx, AG_F64, s1_3, 1, NULL);
  wrong_shape = MAKE(ctx, AG_F64, s2, 1, NULL);
  wrong_dtype = MAKE(ctx, AG_F32, s1_3, 1, NULL);
  ok = MAKE(ctx, AG_F64, s1_3, 1, NULL);
  REQUIRE(x && wrong_shape && wrong_dtype && ok);
  REQUIRE_OK(ag_tensor_requires_grad(x, 1));
  CHECK_ERR(ag_tensor_set_grad(x, wrong_shape), AG_ERR_SHAPE, "ag_tensor_set_grad");
  CHECK_ERR(ag_tensor_set_grad(x, wrong_dtype), AG_ERR_DTYPE, "ag_tensor_set_grad");
  CHECK_NO_GRAD(x);
  REQUIRE_OK(ag_op_neg(&y, x));
  CHECK_ERR(ag_tensor_set_grad(y, ok), AG_ERR_GRAPH, "ag_tensor_set_grad");
  REL(y);
  REL(x);
  REL(wrong_shape);
  REL(wrong_dtype);
  REL(ok);
  ag_context_release(ctx);
}

int main(int argc, char **argv) {
  h_init(argc, argv);
  RUN(test_backward_nonscalar_root);
  RUN(test_backward_bad_grad_root);
  RUN(test_backward_requires_no_grad);
  RUN(test_backward_released_graph);
  RUN(test_requires_grad_errors);
  RUN(test_set_grad_errors);
  return h_finish();
}
