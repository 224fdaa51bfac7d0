/*
 * tests/c_api/test_nn_reduce.c - the ops of ag/ops_nn.h and ag/ops_reduce.h
 * from plain C: a classifier's loss step (log_softmax, cross_entropy and its
 * gradient), reductions over dims with keepdim, max along a dim with either
 * output left out, the frozen reduction constants, and the error contract
 * (status, message naming the function, out-parameters untouched).
 */
#include "harness.h"

static const int64_t s2_23[2] = {2, 3};

static void test_reduction_constants_are_frozen(void) {
  CHECK(AG_REDUCTION_NONE == 0);
  CHECK(AG_REDUCTION_MEAN == 1);
  CHECK(AG_REDUCTION_SUM == 2);
  CHECK(AG_IGNORE_INDEX_DEFAULT == -100);
}

static void test_cross_entropy_step(ag_dtype dt) {
  ag_context *ctx = NEW_CTX();
  const double logits[6] = {1.0, 2.0, 0.5, -1.0, 0.0, 3.0};
  const int64_t s1_2[1] = {2};
  const double classes[2] = {1.0, 2.0};
  ag_tensor *x, *t, *loss = NULL, *g = NULL, *lp = NULL;
  double grad[6], logp[6];
  int i, k;
  REQUIRE(ctx);
  x = MAKE(ctx, dt, s2_23, 2, logits);
  t = MAKE(ctx, AG_I64, s1_2, 1, classes);
  REQUIRE(x && t);
  REQUIRE_OK(ag_tensor_requires_grad(x, 1));
  REQUIRE_OK(ag_op_log_softmax(&lp, x, -1));
  REQUIRE(READ(lp, logp, 6) == 6);
  REQUIRE_OK(ag_op_cross_entropy(&loss, x, t, AG_REDUCTION_MEAN, AG_IGNORE_INDEX_DEFAULT, 0.0));
  /* mean of -log p[class] over the two rows */
  CHECK_CLOSE(ITEM(loss), -(logp[1] + logp[5]) / 2.0, 1e-6);
  REQUIRE_OK(ag_backward(loss, NULL, NULL));
  REQUIRE_OK(ag_tensor_grad(&g, x));
  REQUIRE(READ(g, grad, 6) == 6);
  for (i = 0; i < 2; i++) {
    for (k = 0; k < 3; k++) {
      const double onehot = (double)(k == (int)classes[i]);
      CHECK_CLOSE(grad[i * 3 + k], (exp(logp[i * 3 + k]) - onehot) / 2.0, 1e-6);
    }
  }
  ag_tensor_release(g);
  ag_tensor_release(loss);
  ag_tensor_release(lp);
  ag_tensor_release(t);
  ag_tensor_release(x);
  ag_context_release(ctx);
}

static void test_reductions_over_dims(void) {
  ag_context *ctx = NEW_CTX();
  const double v[6] = {1.0, 5.0, 3.0, 4.0, 2.0, 6.0};
  const int64_t dim1[1] = {1}, dim0[1] = {0};
  int64_t shape[2];
  double out[6];
  ag_tensor *x, *y = NULL, *vals = NULL, *idx = NULL;
  REQUIRE(ctx);
  x = MAKE(ctx, AG_F64, s2_23, 2, v);
  REQUIRE(x);
  REQUIRE_OK(ag_op_sum_dims(&y, x, dim1, 1, 1));
  CHECK(ag_tensor_ndim(y) == 2);
  REQUIRE_OK(ag_tensor_shape(y, shape, 2));
  CHECK(shape[0] == 2 && shape[1] == 1);
  REQUIRE(READ(y, out, 6) == 2);
  CHECK_CLOSE(out[0], 9.0, 0.0);
  CHECK_CLOSE(out[1], 12.0, 0.0);
  ag_tensor_release(y);
  y = NULL;
  REQUIRE_OK(ag_op_var_dims(&y, x, dim0, 1, 0, 1.0));
  REQUIRE(READ(y, out, 6) == 3);
  CHECK_CLOSE(out[0], 4.5, 1e-15);
  CHECK_CLOSE(out[1], 4.5, 1e-15);
  CHECK_CLOSE(out[2], 4.5, 1e-15);
  ag_tensor_release(y);
  /* values only, then indices only */
  REQUIRE_OK(ag_op_max_dim(&vals, NULL, x, 1, 0));
  REQUIRE(READ(vals, out, 6) == 2);
  CHECK_CLOSE(out[0], 5.0, 0.0);
  CHECK_CLOSE(out[1], 6.0, 0.0);
  REQUIRE_OK(ag_op_min_dim(NULL, &idx, x, 0, 0));
  CHECK(ag_tensor_dtype(idx) == AG_I64);
  REQUIRE(READ(idx, out, 6) == 3);
  CHECK(out[0] == 0.0 && out[1] == 1.0 && out[2] == 0.0);
  ag_tensor_release(idx);
  ag_tensor_release(vals);
  ag_tensor_release(x);
  ag_context_release(ctx);
}

static void test_errors(void) {
  ag_context *ctx = NEW_CTX();
  const double v[6] = {1, 2, 3, 4, 5, 6};
  const int64_t dims[2] = {1, -1};
  ag_tensor *x, *classes, *out = SENT_T, *out2 = SENT_T;
  REQUIRE(ctx);
  x = MAKE(ctx, AG_F32, s2_23, 2, v);
  classes = MAKE(ctx, AG_I64, s2_23, 2, NULL);
  REQUIRE(x && classes);
  CHECK_ERR(ag_op_softmax(&out, x, 2), AG_ERR_INVALID_ARGUMENT, "ag_op_softmax");
  CHECK_CONTAINS(ag_last_error_message(), "dim 2 is out of range for a tensor of 2 dims");
  CHECK_ERR(ag_op_sum_dims(&out, x, dims, 2, 0), AG_ERR_INVALID_ARGUMENT, "ag_op_sum_dims");
  CHECK_CONTAINS(ag_last_error_message(), "appears more than once");
  CHECK_ERR(ag_op_mse_loss(&out, x, x, 3), AG_ERR_INVALID_ARGUMENT, "ag_op_mse_loss");
  /* class targets of the input's shape (they need it without the class dim) */
  CHECK_ERR(ag_op_cross_entropy(&out, x, classes, AG_REDUCTION_SUM, -100, 0.0), AG_ERR_SHAPE,
            "ag_op_cross_entropy");
  CHECK_ERR(ag_op_max_dim(&out, &out2, NULL, 0, 0), AG_ERR_INVALID_ARGUMENT, "ag_op_max_dim");
  CHECK_ERR(ag_op_max_dim(NULL, NULL, x, 0, 0), AG_ERR_INVALID_ARGUMENT, "ag_op_max_dim");
  CHECK(out == SENT_T);
  CHECK(out2 == SENT_T);
  ag_tensor_release(classes);
  ag_tensor_release(x);
  ag_context_release(ctx);
}

int main(int argc, char **argv) {
  h_init(argc, argv);
  RUN(test_reduction_constants_are_frozen);
  RUN_DT(test_cross_entropy_step, AG_F32);
  RUN_DT(test_cross_entropy_step, AG_F64);
  RUN(test_reductions_over_dims);
  RUN(test_errors);
  return h_finish();
}
