/*
 * tests/c_api/test_op_forward_values.c - forward values of every op through
 * the C API in f64 and f32, as a sanity check of what the autograd tests
 * build on.
 */
#include "harness.h"

/* Forward values of every op, as a sanity check of what the autograd tests build on. */
static void test_op_forward_values(ag_dtype dt) {
  ag_context *ctx = NEW_CTX();
  int64_t s23[2] = {2, 3}, s3[1] = {3}, s13[2] = {1, 3}, s21[2] = {2, 1};
  double av[6] = {0.5, 1, 1.5, 2, 2.5, 3}, bv[3] = {2, -1, 4};
  double tol = h_tol(dt);
  ag_tensor *a, *b, *y = NULL;
  double w[6];
  int i;
  REQUIRE(ctx);
  a = MAKE(ctx, dt, s23, 2, av);
  b = MAKE(ctx, dt, s3, 1, bv);
  REQUIRE(a && b);
#define UNARY(op, expr)                                   \
  do {                                                    \
    y = NULL;                                             \
    if (CHECK_OK(op(&y, a))) {                            \
      for (i = 0; i < 6; i++)                             \
        w[i] = (expr);                                    \
      CHECK(ag_tensor_dtype(y) == dt);                    \
      CHECK_SHAPE(y, s23, 2);                             \
      h_check_values_at(__FILE__, __LINE__, #op, y, w, 6, tol * 10); \
      REL(y);                                             \
    }                                                     \
  } while (0)
  UNARY(ag_op_neg, -av[i]);
  UNARY(ag_op_exp, exp(av[i]));
  UNARY(ag_op_log, log(av[i]));
  UNARY(ag_op_tanh, tanh(av[i]));
#undef UNARY
#define BINARY(op, expr)                                  \
  do {                                                    \
    y = NULL;                                             \
    if (CHECK_OK(op(&y, a, b))) {                         \
      for (i = 0; i < 6; i++)                             \
        w[i] = (expr);                                    \
      CHECK_SHAPE(y, s23, 2);                             \
      h_check_values_at(__FILE__, __LINE__, #op, y, w, 6, tol * 10); \
      REL(y);                                             \
    }                                                     \
  } while (0)
  BINARY(ag_op_add, av[i] + bv[i % 3]);
  BINARY(ag_op_sub, av[i] - bv[i % 3]);
  BINARY(ag_op_mul, av[i] * bv[i % 3]);
  BINARY(ag_op_div, av[i] / bv[i % 3]);
#undef BINARY
  y = NULL;
  if (CHECK_OK(ag_op_pow_scalar(&y, a, 2.5))) {
    for (i = 0; i < 6; i++)
      w[i] = pow(av[i], 2.5);
    CHECK_VALUES(y, w, 6, tol * 100);
    REL(y);
  }
  y = NULL;
  if (CHECK_OK(ag_op_sum(&y, a))) {
    CHECK(ag_tensor_ndim(y) == 0);
    CHECK_CLOSE(ITEM(y), 10.5, tol * 10);
    REL(y);
  }
  y = NULL;
  if (CHECK_OK(ag_op_mean(&y, a))) {
    CHECK(ag_tensor_ndim(y) == 0);
    CHECK_CLOSE(ITEM(y), 1.75, tol);
    REL(y);
  }
  y = NULL;
  if (CHECK_OK(ag_op_expand(&y, b, s23, 2))) {
    double want[6] = {2, -1, 4, 2, -1, 4};
    CHECK_SHAPE(y, s23, 2);
    CHECK_VALUES(y, want, 6, 0);
    REL(y);
  }
  y = NULL;
  {
    int64_t keep[2] = {-1, 3}; /* -1 keeps x's dim */
    ag_tensor *col = NULL;
    double cv[2] = {5, 6}, want[6] = {5, 5, 5, 6, 6, 6};
    col = MAKE(ctx, dt, s21, 2, cv);
    if (col && CHECK_OK(ag_op_expand(&y, col, keep, 2))) {
      CHECK_SHAPE(y, s23, 2);
      CHECK_VALUES(y, want, 6, 0);
      REL(y);
    }
    REL(col);
  }
  {
    /* to (1,3), to (3) (fewer dims) and to (2,1) */
    static const double col_sums[3] = {2.5, 3.5, 4.5}, row_sums[2] = {3, 7.5};
    const struct {
      const int64_t *shape;
      int32_t ndim;
      const double *want;
      int64_t n;
    } to[3] = {{s13, 2, col_sums, 3}, {s3, 1, col_sums, 3}, {s21, 2, row_sums, 2}};
    for (i = 0; i < 3; i++) {
      y = NULL;
      if (CHECK_OK(ag_op_sum_to_size(&y, a, to[i].shape, to[i].ndim))) {
        CHECK_SHAPE(y, to[i].shape, to[i].ndim);
        CHECK_VALUES(y, to[i].want, to[i].n, tol * 10);
        REL(y);
      }
    }
  }
  y = NULL;
  if (CHECK_OK(ag_op_cast(&y, a, AG_I64))) {
    double want[6] = {0, 1, 1, 2, 2, 3};
    CHECK(ag_tensor_dtype(y) == AG_I64);
    CHECK_VALUES(y, want, 6, 0);
    REL(y);
  }
  y = NULL;
  if (CHECK_OK(ag_op_cast(&y, b, AG_BOOL))) {
    double want[3] = {1, 1, 1};
    CHECK(ag_tensor_dtype(y) == AG_BOOL);
    CHECK_VALUES(y, want, 3, 0);
    REL(y);
  }
  y = NULL;
  if (CHECK_OK(ag_op_cast(&y, a, dt == AG_F32 ? AG_F64 : AG_F32))) {
    CHECK(ag_tensor_dtype(y) == (dt == AG_F32 ? AG_F64 : AG_F32));
    CHECK_VALUES(y, av, 6, 0);
    REL(y);
  }
  REL(a);
  REL(b);
  ag_context_release(ctx);
}

int main(int argc, char **argv) {
  h_init(argc, argv);
  RUN_F64_F32(test_op_forward_values);
  return h_finish();
}
