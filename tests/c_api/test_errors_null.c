/*
 * tests/c_api/test_errors_null.c - NULL handles and NULL out-parameters in the
 * ops, contexts, creation and tensor functions of the C API:
 * AG_ERR_INVALID_ARGUMENT, the out-parameter left untouched, and a message
 * naming the function in brackets.
 */
#include "harness.h"

static const int64_t s1_3[1] = {3};
static const int64_t s2_23[2] = {2, 3};

/* ---- ops ------------------------------------------------------------------------- */

static void test_null_handles_unary_ops(void) {
  ag_context *ctx;
  ag_tensor *x, *out;
  REQUIRE(NEW_CTX_WITH(&ctx, &x, AG_F64, s1_3, 1, NULL));
#define UNARY_NULLS(op)                                                   \
  do {                                                                    \
    out = SENT_T;                                                         \
    CHECK_ERR(op(&out, NULL), AG_ERR_INVALID_ARGUMENT, #op);              \
    CHECK(out == SENT_T);                                                 \
    CHECK_ERR(op(NULL, x), AG_ERR_INVALID_ARGUMENT, #op);                 \
  } while (0)
  UNARY_NULLS(ag_op_neg);
  UNARY_NULLS(ag_op_exp);
  UNARY_NULLS(ag_op_log);
  UNARY_NULLS(ag_op_tanh);
  UNARY_NULLS(ag_op_sum);
  UNARY_NULLS(ag_op_mean);
#undef UNARY_NULLS
  out = SENT_T;
  CHECK_ERR(ag_op_pow_scalar(&out, NULL, 2.0), AG_ERR_INVALID_ARGUMENT, "ag_op_pow_scalar");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_op_pow_scalar(NULL, x, 2.0), AG_ERR_INVALID_ARGUMENT, "ag_op_pow_scalar");
  CHECK_ERR(ag_op_cast(&out, NULL, AG_F32), AG_ERR_INVALID_ARGUMENT, "ag_op_cast");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_op_cast(NULL, x, AG_F32), AG_ERR_INVALID_ARGUMENT, "ag_op_cast");
  CHECK_ERR(ag_op_expand(&out, NULL, s2_23, 2), AG_ERR_INVALID_ARGUMENT, "ag_op_expand");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_op_expand(NULL, x, s2_23, 2), AG_ERR_INVALID_ARGUMENT, "ag_op_expand");
  CHECK_ERR(ag_op_expand(&out, x, NULL, 2), AG_ERR_INVALID_ARGUMENT, "ag_op_expand");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_op_sum_to_size(&out, NULL, s1_3, 1), AG_ERR_INVALID_ARGUMENT, "ag_op_sum_to_size");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_op_sum_to_size(NULL, x, s1_3, 1), AG_ERR_INVALID_ARGUMENT, "ag_op_sum_to_size");
  CHECK_ERR(ag_op_sum_to_size(&out, x, NULL, 1), AG_ERR_INVALID_ARGUMENT, "ag_op_sum_to_size");
  CHECK(out == SENT_T);
  REL(x);
  ag_context_release(ctx);
}

static void test_null_handles_binary_ops(void) {
  ag_context *ctx;
  ag_tensor *x, *out;
  REQUIRE(NEW_CTX_WITH(&ctx, &x, AG_F64, s1_3, 1, NULL));
#define BINARY_NULLS(op)                                                  \
  do {                                                                    \
    out = SENT_T;                                                         \
    CHECK_ERR(op(&out, NULL, x), AG_ERR_INVALID_ARGUMENT, #op);           \
    CHECK(out == SENT_T);                                                 \
    CHECK_ERR(op(&out, x, NULL), AG_ERR_INVALID_ARGUMENT, #op);           \
    CHECK(out == SENT_T);                                                 \
    CHECK_ERR(op(&out, NULL, NULL), AG_ERR_INVALID_ARGUMENT, #op);        \
    CHECK(out == SENT_T);                                                 \
    CHECK_ERR(op(NULL, x, x), AG_ERR_INVALID_ARGUMENT, #op);              \
  } while (0)
  BINARY_NULLS(ag_op_add);
  BINARY_NULLS(ag_op_sub);
  BINARY_NULLS(ag_op_mul);
  BINARY_NULLS(ag_op_div);
#undef BINARY_NULLS
  REL(x);
  ag_context_release(ctx);
}

/* ---- contexts, creation and tensor functions ------------------------------------- */

static void test_null_handles_context_and_creation(void) {
  ag_context *ctx = NEW_CTX();
  ag_tensor *out;
  REQUIRE(ctx);
  CHECK_ERR(ag_context_create(NULL, NULL), AG_ERR_INVALID_ARGUMENT, "ag_context_create");
  CHECK_ERR(ag_context_options_init(NULL), AG_ERR_INVALID_ARGUMENT, "ag_context_options_init");
  CHECK_ERR(ag_backward_options_init(NULL), AG_ERR_INVALID_ARGUMENT, "ag_backward_options_init");

  out = SENT_T;
  CHECK_ERR(ag_tensor_create(&out, NULL, AG_F64, s1_3, 1, NULL), AG_ERR_INVALID_ARGUMENT,
            "ag_tensor_create");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_tensor_create(NULL, ctx, AG_F64, s1_3, 1, NULL), AG_ERR_INVALID_ARGUMENT,
            "ag_tensor_create");
  CHECK_ERR(ag_tensor_zeros(&out, NULL, AG_F64, s1_3, 1), AG_ERR_INVALID_ARGUMENT,
            "ag_tensor_zeros");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_tensor_zeros(NULL, ctx, AG_F64, s1_3, 1), AG_ERR_INVALID_ARGUMENT,
            "ag_tensor_zeros");
  CHECK_ERR(ag_tensor_ones(&out, NULL, AG_F64, s1_3, 1), AG_ERR_INVALID_ARGUMENT,
            "ag_tensor_ones");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_tensor_ones(NULL, ctx, AG_F64, s1_3, 1), AG_ERR_INVALID_ARGUMENT,
            "ag_tensor_ones");
  CHECK_ERR(ag_tensor_full(&out, NULL, AG_F64, s1_3, 1, 1.0), AG_ERR_INVALID_ARGUMENT,
            "ag_tensor_full");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_tensor_full(NULL, ctx, AG_F64, s1_3, 1, 1.0), AG_ERR_INVALID_ARGUMENT,
            "ag_tensor_full");
  CHECK_ERR(ag_tensor_scalar(&out, NULL, AG_F64, 1.0), AG_ERR_INVALID_ARGUMENT,
            "ag_tensor_scalar");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_tensor_scalar(NULL, ctx, AG_F64, 1.0), AG_ERR_INVALID_ARGUMENT,
            "ag_tensor_scalar");
  ag_context_release(ctx);
}

static void test_null_handles_tensor_functions(void) {
  ag_context *ctx;
  ag_tensor *x, *out;
  int64_t dims[4] = {-5, -5, -5, -5};
  double buf[3] = {1, 2, 3}, v = 42.0;
  REQUIRE(NEW_CTX_WITH(&ctx, &x, AG_F64, s1_3, 1, NULL));

  CHECK_ERR(ag_tensor_shape(NULL, dims, 4), AG_ERR_INVALID_ARGUMENT, "ag_tensor_shape");
  CHECK(dims[0] == -5);
  CHECK_ERR(ag_tensor_shape(x, NULL, 2), AG_ERR_INVALID_ARGUMENT, "ag_tensor_shape");

  CHECK_ERR(ag_tensor_copy_data(NULL, buf, sizeof buf), AG_ERR_INVALID_ARGUMENT,
            "ag_tensor_copy_data");
  CHECK(buf[0] == 1 && buf[1] == 2 && buf[2] == 3);
  CHECK_ERR(ag_tensor_copy_data(x, NULL, sizeof buf), AG_ERR_INVALID_ARGUMENT,
            "ag_tensor_copy_data");

  CHECK_ERR(ag_tensor_copy_from(NULL, buf, sizeof buf), AG_ERR_INVALID_ARGUMENT,
            "ag_tensor_copy_from");
  CHECK_ERR(ag_tensor_copy_from(x, NULL, sizeof buf), AG_ERR_INVALID_ARGUMENT,
            "ag_tensor_copy_from");

  CHECK_ERR(ag_tensor_item(NULL, &v), AG_ERR_INVALID_ARGUMENT, "ag_tensor_item");
  CHECK(v == 42.0);
  {
    ag_tensor *s = SCALAR(ctx, AG_F64, 1.0);
    CHECK_ERR(ag_tensor_item(s, NULL), AG_ERR_INVALID_ARGUMENT, "ag_tensor_item");
    REL(s);
  }

  CHECK_ERR(ag_tensor_requires_grad(NULL, 1), AG_ERR_INVALID_ARGUMENT, "ag_tensor_requires_grad");

  out = SENT_T;
  CHECK_ERR(ag_tensor_grad(&out, NULL), AG_ERR_INVALID_ARGUMENT, "ag_tensor_grad");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_tensor_grad(NULL, x), AG_ERR_INVALID_ARGUMENT, "ag_tensor_grad");

  CHECK_ERR(ag_tensor_set_grad(NULL, x), AG_ERR_INVALID_ARGUMENT, "ag_tensor_set_grad");
  CHECK_ERR(ag_tensor_set_grad(NULL, NULL), AG_ERR_INVALID_ARGUMENT, "ag_tensor_set_grad");

  CHECK_ERR(ag_tensor_detach(&out, NULL), AG_ERR_INVALID_ARGUMENT, "ag_tensor_detach");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_tensor_detach(NULL, x), AG_ERR_INVALID_ARGUMENT, "ag_tensor_detach");

  CHECK_ERR(ag_backward(NULL, NULL, NULL), AG_ERR_INVALID_ARGUMENT, "ag_backward");
  CHECK_ERR(ag_backward(NULL, x, NULL), AG_ERR_INVALID_ARGUMENT, "ag_backward");

  /* grad_mode_set accepts a NULL `previous` */
  CHECK_OK(ag_grad_mode_set(1, NULL));

  REL(x);
  ag_context_release(ctx);
}

int main(int argc, char **argv) {
  h_init(argc, argv);
  RUN(test_null_handles_unary_ops);
  RUN(test_null_handles_binary_ops);
  RUN(test_null_handles_context_and_creation);
  RUN(test_null_handles_tensor_functions);
  return h_finish();
}
