/*
 * tests/c_api/test_errors.c - every error path of the C API: the status, the
 * out-parameter left untouched, and ag_last_error_message() naming the
 * function in brackets and stating the facts.
 */
#include "harness.h"

#include <pthread.h>


static const int64_t s1_3[1] = {3};
static const int64_t s2_23[2] = {2, 3};

/* ---- memory statistics -------------------------------------------------------- */

static void test_memory_stats_errors(void) {
  ag_context *ctx = NEW_CTX();
  ag_memory_stats st;
  REQUIRE(ctx);
  CHECK_ERR(ag_memory_stats_init(NULL), AG_ERR_INVALID_ARGUMENT, "ag_memory_stats_init");
  st = (ag_memory_stats)AG_MEMORY_STATS_INIT;
  st.bytes_in_use = -42;
  CHECK_ERR(ag_context_memory_stats(NULL, &st), AG_ERR_INVALID_ARGUMENT,
            "ag_context_memory_stats");
  CHECK(st.bytes_in_use == -42);
  CHECK_ERR(ag_context_memory_stats(ctx, NULL), AG_ERR_INVALID_ARGUMENT,
            "ag_context_memory_stats");
  st.struct_size = 3;
  CHECK_ERR(ag_context_memory_stats(ctx, &st), AG_ERR_INVALID_ARGUMENT,
            "ag_context_memory_stats");
  CHECK(st.bytes_in_use == -42);
  CHECK(st.struct_size == 3);
  CHECK_ERR(ag_context_trim(NULL), AG_ERR_INVALID_ARGUMENT, "ag_context_trim");
  CHECK_ERR(ag_context_reset_peak_memory(NULL), AG_ERR_INVALID_ARGUMENT,
            "ag_context_reset_peak_memory");
  ag_context_release(ctx);
}

/* ---- NULL handles and NULL outs ------------------------------------------- */

static void test_null_handles_unary_ops(void) {
  ag_context *ctx = NEW_CTX();
  ag_tensor *x, *out;
  REQUIRE(ctx);
  x = MAKE(ctx, AG_F64, s1_3, 1, NULL);
  REQUIRE(x);
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
  ag_context *ctx = NEW_CTX();
  ag_tensor *x, *out;
  REQUIRE(ctx);
  x = MAKE(ctx, AG_F64, s1_3, 1, NULL);
  REQUIRE(x);
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
  ag_context *ctx = NEW_CTX();
  ag_tensor *x, *out;
  int64_t dims[4] = {-5, -5, -5, -5};
  double buf[3] = {1, 2, 3}, v = 42.0;
  REQUIRE(ctx);
  x = MAKE(ctx, AG_F64, s1_3, 1, NULL);
  REQUIRE(x);

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

/* release(NULL) is a no-op: it records nothing. */
static void test_release_null_records_nothing(void) {
  char before[512];
  double v;
  CHECK_STATUS(ag_tensor_item(NULL, &v), AG_ERR_INVALID_ARGUMENT);
  h_save_message(before, sizeof before);
  ag_tensor_release(NULL);
  ag_context_release(NULL);
  CHECK_STR(ag_last_error_message(), before);
}

/* ---- bad shapes, dims, dtypes at creation ----------------------------------- */

static void test_bad_ndim(void) {
  ag_context *ctx = NEW_CTX();
  int64_t shape[AG_MAX_DIMS + 1];
  ag_tensor *out, *x;
  int i;
  REQUIRE(ctx);
  for (i = 0; i <= AG_MAX_DIMS; i++)
    shape[i] = 1;
  out = SENT_T;
  CHECK_ERR(ag_tensor_create(&out, ctx, AG_F64, shape, AG_MAX_DIMS + 1, NULL),
            AG_ERR_INVALID_ARGUMENT, "ag_tensor_create");
  CHECK_MSG_HAS("17");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_tensor_zeros(&out, ctx, AG_F64, shape, AG_MAX_DIMS + 1), AG_ERR_INVALID_ARGUMENT,
            "ag_tensor_zeros");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_tensor_ones(&out, ctx, AG_F64, shape, AG_MAX_DIMS + 1), AG_ERR_INVALID_ARGUMENT,
            "ag_tensor_ones");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_tensor_full(&out, ctx, AG_F64, shape, AG_MAX_DIMS + 1, 2.0),
            AG_ERR_INVALID_ARGUMENT, "ag_tensor_full");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_tensor_create(&out, ctx, AG_F64, shape, -1, NULL), AG_ERR_INVALID_ARGUMENT,
            "ag_tensor_create");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_tensor_create(&out, ctx, AG_F64, shape, INT32_MAX, NULL), AG_ERR_INVALID_ARGUMENT,
            "ag_tensor_create");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_tensor_create(&out, ctx, AG_F64, NULL, 2, NULL), AG_ERR_INVALID_ARGUMENT,
            "ag_tensor_create");
  CHECK(out == SENT_T);

  x = MAKE(ctx, AG_F64, shape, 1, NULL);
  REQUIRE(x);
  CHECK_ERR(ag_op_expand(&out, x, shape, AG_MAX_DIMS + 1), AG_ERR_INVALID_ARGUMENT,
            "ag_op_expand");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_op_expand(&out, x, shape, -1), AG_ERR_INVALID_ARGUMENT, "ag_op_expand");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_op_sum_to_size(&out, x, shape, AG_MAX_DIMS + 1), AG_ERR_INVALID_ARGUMENT,
            "ag_op_sum_to_size");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_op_sum_to_size(&out, x, shape, -1), AG_ERR_INVALID_ARGUMENT, "ag_op_sum_to_size");
  CHECK(out == SENT_T);
  REL(x);
  ag_context_release(ctx);
}

static void test_negative_dim(void) {
  ag_context *ctx = NEW_CTX();
  int64_t shape[2] = {2, -3};
  ag_tensor *out = SENT_T, *x;
  REQUIRE(ctx);
  CHECK_ERR(ag_tensor_create(&out, ctx, AG_F64, shape, 2, NULL), AG_ERR_INVALID_ARGUMENT,
            "ag_tensor_create");
  CHECK_MSG_HAS("-3");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_tensor_zeros(&out, ctx, AG_F32, shape, 2), AG_ERR_INVALID_ARGUMENT,
            "ag_tensor_zeros");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_tensor_ones(&out, ctx, AG_I64, shape, 2), AG_ERR_INVALID_ARGUMENT,
            "ag_tensor_ones");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_tensor_full(&out, ctx, AG_BOOL, shape, 2, 1.0), AG_ERR_INVALID_ARGUMENT,
            "ag_tensor_full");
  CHECK(out == SENT_T);
  /* expand: -1 keeps a dim, any other negative size is an error */
  x = MAKE(ctx, AG_F64, s2_23, 2, NULL);
  REQUIRE(x);
  {
    int64_t bad[2] = {2, -2};
    ag_status st = ag_op_expand(&out, x, bad, 2);
    CHECK(st == AG_ERR_INVALID_ARGUMENT || st == AG_ERR_SHAPE);
    CHECK_MSG_FN("ag_op_expand");
    CHECK(out == SENT_T);
  }
  {
    int64_t bad[2] = {-2, 3};
    ag_status st = ag_op_sum_to_size(&out, x, bad, 2);
    CHECK(st == AG_ERR_INVALID_ARGUMENT || st == AG_ERR_SHAPE);
    CHECK_MSG_FN("ag_op_sum_to_size");
    CHECK(out == SENT_T);
  }
  REL(x);
  ag_context_release(ctx);
}

static void test_bad_dtype(void) {
  ag_context *ctx = NEW_CTX();
  ag_tensor *out = SENT_T;
  REQUIRE(ctx);
  CHECK_ERR(ag_tensor_create(&out, ctx, 0, s1_3, 1, NULL), AG_ERR_DTYPE, "ag_tensor_create");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_tensor_create(&out, ctx, 5, s1_3, 1, NULL), AG_ERR_DTYPE, "ag_tensor_create");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_tensor_create(&out, ctx, -1, s1_3, 1, NULL), AG_ERR_DTYPE, "ag_tensor_create");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_tensor_zeros(&out, ctx, 0, s1_3, 1), AG_ERR_DTYPE, "ag_tensor_zeros");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_tensor_ones(&out, ctx, 9, s1_3, 1), AG_ERR_DTYPE, "ag_tensor_ones");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_tensor_full(&out, ctx, 0, s1_3, 1, 1.0), AG_ERR_DTYPE, "ag_tensor_full");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_tensor_scalar(&out, ctx, 0, 1.0), AG_ERR_DTYPE, "ag_tensor_scalar");
  CHECK(out == SENT_T);
  ag_context_release(ctx);
}

static void test_full_i64_out_of_range(void) {
  ag_context *ctx = NEW_CTX();
  ag_tensor *out = SENT_T;
  const double bad[5] = {NAN, INFINITY, -INFINITY, 1e19, -1e19};
  int i;
  REQUIRE(ctx);
  for (i = 0; i < 5; i++) {
    CHECK_ERR(ag_tensor_full(&out, ctx, AG_I64, s1_3, 1, bad[i]), AG_ERR_INVALID_ARGUMENT,
              "ag_tensor_full");
    CHECK(out == SENT_T);
    CHECK_ERR(ag_tensor_scalar(&out, ctx, AG_I64, bad[i]), AG_ERR_INVALID_ARGUMENT,
              "ag_tensor_scalar");
    CHECK(out == SENT_T);
  }
  ag_context_release(ctx);
}

static void test_size_overflow(void) {
  ag_context *ctx = NEW_CTX();
  ag_tensor *out = SENT_T;
  REQUIRE(ctx);
  {
    /* numel 2^61 fits in int64, but 2^61 * 8 bytes wraps to 0 in size_t */
    int64_t shape[2] = {(int64_t)1 << 61, 1};
    CHECK_ERR(ag_tensor_create(&out, ctx, AG_F64, shape, 2, NULL), AG_ERR_OUT_OF_MEMORY,
              "ag_tensor_create");
    CHECK(out == SENT_T);
    CHECK_ERR(ag_tensor_zeros(&out, ctx, AG_F64, shape, 2), AG_ERR_OUT_OF_MEMORY,
              "ag_tensor_zeros");
    CHECK(out == SENT_T);
  }
  {
    /* 2^62 * 4 bytes wraps to 0 */
    int64_t shape[1] = {(int64_t)1 << 62};
    CHECK_ERR(ag_tensor_ones(&out, ctx, AG_F32, shape, 1), AG_ERR_OUT_OF_MEMORY, "ag_tensor_ones");
    CHECK(out == SENT_T);
  }
  {
    /* numel itself overflows int64: a bad size or an overflowing byte size */
    int64_t shape[3] = {(int64_t)1 << 31, (int64_t)1 << 31, (int64_t)1 << 31};
    ag_status st = ag_tensor_create(&out, ctx, AG_BOOL, shape, 3, NULL);
    CHECK(st == AG_ERR_OUT_OF_MEMORY || st == AG_ERR_INVALID_ARGUMENT);
    CHECK_MSG_FN("ag_tensor_create");
    CHECK(out == SENT_T);
  }
  {
    /* a zero-size dim makes the product 0 even with huge other dims */
    int64_t shape[3] = {(int64_t)1 << 40, 0, (int64_t)1 << 40};
    ag_tensor *t = NULL;
    CHECK_OK(ag_tensor_create(&t, ctx, AG_F64, shape, 3, NULL));
    CHECK(ag_tensor_numel(t) == 0);
    REL(t);
  }
  ag_context_release(ctx);
}

/* ---- ops: shapes, dtypes, contexts ---------------------------------------- */

static void test_broadcast_mismatch(void) {
  ag_context *ctx = NEW_CTX();
  int64_t s4[1] = {4}, s32[2] = {3, 2};
  ag_tensor *a, *b, *c, *out;
  REQUIRE(ctx);
  a = MAKE(ctx, AG_F64, s2_23, 2, NULL);
  b = MAKE(ctx, AG_F64, s4, 1, NULL);
  c = MAKE(ctx, AG_F64, s32, 2, NULL);
  REQUIRE(a && b && c);
#define MISMATCH(op)                                                     \
  do {                                                                   \
    out = SENT_T;                                                        \
    CHECK_ERR(op(&out, a, b), AG_ERR_SHAPE, #op);                        \
    CHECK_MSG_HAS("(2,3)");                                              \
    CHECK_MSG_HAS("(4)");                                                \
    CHECK(out == SENT_T);                                                \
    CHECK_ERR(op(&out, b, a), AG_ERR_SHAPE, #op);                        \
    CHECK_MSG_HAS("(4)");                                                \
    CHECK_MSG_HAS("(2,3)");                                              \
    CHECK(out == SENT_T);                                                \
    CHECK_ERR(op(&out, a, c), AG_ERR_SHAPE, #op);                        \
    CHECK_MSG_HAS("(2,3)");                                              \
    CHECK_MSG_HAS("(3,2)");                                              \
    CHECK(out == SENT_T);                                                \
  } while (0)
  MISMATCH(ag_op_add);
  MISMATCH(ag_op_sub);
  MISMATCH(ag_op_mul);
  MISMATCH(ag_op_div);
#undef MISMATCH
  /* the exact example from the header */
  out = SENT_T;
  CHECK_STATUS(ag_op_mul(&out, a, b), AG_ERR_SHAPE);
  CHECK_STR(ag_last_error_message(), "[ag_op_mul] cannot broadcast shapes (2,3) and (4)");
  REL(a);
  REL(b);
  REL(c);
  ag_context_release(ctx);
}

static void test_dtype_mismatch(void) {
  ag_context *ctx = NEW_CTX();
  int64_t s2[1] = {2};
  ag_tensor *f32v, *f64v, *f32s, *f64s, *out;
  REQUIRE(ctx);
  f32v = MAKE(ctx, AG_F32, s2, 1, NULL);
  f64v = MAKE(ctx, AG_F64, s2, 1, NULL);
  f32s = SCALAR(ctx, AG_F32, 1.0);
  f64s = SCALAR(ctx, AG_F64, 1.0);
  REQUIRE(f32v && f64v && f32s && f64s);
#define DT_MISMATCH(op, a, b)                                            \
  do {                                                                   \
    out = SENT_T;                                                        \
    CHECK_ERR(op(&out, a, b), AG_ERR_DTYPE, #op);                        \
    CHECK_MSG_HAS("f32");                                                \
    CHECK_MSG_HAS("f64");                                                \
    CHECK(out == SENT_T);                                                \
  } while (0)
  DT_MISMATCH(ag_op_add, f32v, f64v);
  DT_MISMATCH(ag_op_sub, f64v, f32v);
  DT_MISMATCH(ag_op_mul, f32v, f64v);
  DT_MISMATCH(ag_op_div, f64v, f32v);
  /* 0-dim tensors do not promote either */
  DT_MISMATCH(ag_op_mul, f64v, f32s);
  DT_MISMATCH(ag_op_mul, f32s, f64v);
  DT_MISMATCH(ag_op_add, f32v, f64s);
  DT_MISMATCH(ag_op_add, f32s, f64s);
#undef DT_MISMATCH
  REL(f32v);
  REL(f64v);
  REL(f32s);
  REL(f64s);
  ag_context_release(ctx);
}

static void test_non_floating_ops(void) {
  ag_context *ctx = NEW_CTX();
  ag_tensor *i, *b, *out = SENT_T;
  REQUIRE(ctx);
  i = MAKE(ctx, AG_I64, s1_3, 1, NULL);
  b = MAKE(ctx, AG_BOOL, s1_3, 1, NULL);
  REQUIRE(i && b);
  CHECK_ERR(ag_op_exp(&out, i), AG_ERR_DTYPE, "ag_op_exp");
  CHECK_MSG_HAS("i64");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_op_log(&out, i), AG_ERR_DTYPE, "ag_op_log");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_op_tanh(&out, i), AG_ERR_DTYPE, "ag_op_tanh");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_op_exp(&out, b), AG_ERR_DTYPE, "ag_op_exp");
  CHECK_MSG_HAS("bool");
  CHECK(out == SENT_T);
  /* every elementwise op, reduction and sum_to_size needs a floating input */
  CHECK_ERR(ag_op_neg(&out, i), AG_ERR_DTYPE, "ag_op_neg");
  CHECK_ERR(ag_op_pow_scalar(&out, i, 2.0), AG_ERR_DTYPE, "ag_op_pow_scalar");
  CHECK_ERR(ag_op_add(&out, i, i), AG_ERR_DTYPE, "ag_op_add");
  CHECK_ERR(ag_op_mul(&out, b, b), AG_ERR_DTYPE, "ag_op_mul");
  CHECK_ERR(ag_op_sum(&out, i), AG_ERR_DTYPE, "ag_op_sum");
  CHECK_ERR(ag_op_mean(&out, b), AG_ERR_DTYPE, "ag_op_mean");
  CHECK_ERR(ag_op_sum_to_size(&out, i, s1_3, 1), AG_ERR_DTYPE, "ag_op_sum_to_size");
  CHECK(out == SENT_T);
  /* expand and cast take all four */
  {
    ag_tensor *e = NULL, *c = NULL;
    CHECK_OK(ag_op_expand(&e, i, s2_23, 2));
    CHECK(ag_tensor_dtype(e) == AG_I64);
    CHECK_OK(ag_op_cast(&c, b, AG_F32));
    CHECK(ag_tensor_dtype(c) == AG_F32);
    REL(e);
    REL(c);
  }
  REL(i);
  REL(b);
  ag_context_release(ctx);
}

static void test_cast_bad_dtype(void) {
  ag_context *ctx = NEW_CTX();
  ag_tensor *x, *out = SENT_T;
  REQUIRE(ctx);
  x = MAKE(ctx, AG_F64, s1_3, 1, NULL);
  REQUIRE(x);
  CHECK_ERR(ag_op_cast(&out, x, 0), AG_ERR_DTYPE, "ag_op_cast");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_op_cast(&out, x, 5), AG_ERR_DTYPE, "ag_op_cast");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_op_cast(&out, x, -2), AG_ERR_DTYPE, "ag_op_cast");
  CHECK(out == SENT_T);
  REL(x);
  ag_context_release(ctx);
}

static void test_two_contexts(void) {
  ag_context *c1 = NEW_CTX(), *c2 = NEW_CTX();
  ag_tensor *a, *b, *y = NULL, *out = SENT_T, *g;
  REQUIRE(c1 && c2);
  a = MAKE(c1, AG_F64, s1_3, 1, NULL);
  b = MAKE(c2, AG_F64, s1_3, 1, NULL);
  REQUIRE(a && b);
  CHECK_ERR(ag_op_add(&out, a, b), AG_ERR_CONTEXT, "ag_op_add");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_op_mul(&out, b, a), AG_ERR_CONTEXT, "ag_op_mul");
  CHECK(out == SENT_T);
  /* set_grad with a gradient from another context */
  CHECK_OK(ag_tensor_requires_grad(a, 1));
  CHECK_ERR(ag_tensor_set_grad(a, b), AG_ERR_CONTEXT, "ag_tensor_set_grad");
  g = GRAD(a);
  CHECK(g == NULL);
  REL(g);
  /* backward with a grad_root from another context changes nothing */
  REQUIRE_OK(ag_op_mul(&y, a, a));
  CHECK_ERR(ag_backward(y, b, NULL), AG_ERR_CONTEXT, "ag_backward");
  g = GRAD(a);
  CHECK(g == NULL);
  REL(g);
  REL(y);
  REL(a);
  REL(b);
  ag_context_release(c1);
  ag_context_release(c2);
}

static void test_expand_incompatible(void) {
  ag_context *ctx = NEW_CTX();
  ag_tensor *x, *out = SENT_T;
  int64_t to43[2] = {4, 3}, to3[1] = {3}, to24[2] = {2, 4};
  REQUIRE(ctx);
  x = MAKE(ctx, AG_F64, s2_23, 2, NULL);
  REQUIRE(x);
  CHECK_ERR(ag_op_expand(&out, x, to43, 2), AG_ERR_SHAPE, "ag_op_expand");
  CHECK_MSG_HAS("(2,3)");
  CHECK_MSG_HAS("(4,3)");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_op_expand(&out, x, to3, 1), AG_ERR_SHAPE, "ag_op_expand"); /* fewer dims */
  CHECK(out == SENT_T);
  CHECK_ERR(ag_op_expand(&out, x, to24, 2), AG_ERR_SHAPE, "ag_op_expand");
  CHECK(out == SENT_T);
  REL(x);
  ag_context_release(ctx);
}

static void test_sum_to_size_incompatible(void) {
  ag_context *ctx = NEW_CTX();
  ag_tensor *x, *out = SENT_T;
  int64_t to4[1] = {4}, to231[3] = {2, 3, 1}, to33[2] = {3, 3};
  REQUIRE(ctx);
  x = MAKE(ctx, AG_F64, s2_23, 2, NULL);
  REQUIRE(x);
  CHECK_ERR(ag_op_sum_to_size(&out, x, to4, 1), AG_ERR_SHAPE, "ag_op_sum_to_size");
  CHECK_MSG_HAS("(2,3)");
  CHECK_MSG_HAS("(4)");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_op_sum_to_size(&out, x, to231, 3), AG_ERR_SHAPE, "ag_op_sum_to_size");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_op_sum_to_size(&out, x, to33, 2), AG_ERR_SHAPE, "ag_op_sum_to_size");
  CHECK(out == SENT_T);
  REL(x);
  ag_context_release(ctx);
}

/* ---- data access ------------------------------------------------------------ */

static void test_copy_data_too_small(void) {
  ag_context *ctx = NEW_CTX();
  double xv[3] = {1, 2, 3};
  unsigned char buf[24], zero_ok;
  ag_tensor *x;
  size_t i;
  REQUIRE(ctx);
  x = MAKE(ctx, AG_F64, s1_3, 1, xv);
  REQUIRE(x);
  memset(buf, 0xCD, sizeof buf);
  CHECK_ERR(ag_tensor_copy_data(x, buf, 23), AG_ERR_BUFFER_TOO_SMALL, "ag_tensor_copy_data");
  CHECK_MSG_HAS("24"); /* the bytes it needs */
  for (i = 0; i < sizeof buf; i++)
    if (buf[i] != 0xCD)
      break;
  CHECK(i == sizeof buf); /* untouched */
  CHECK_ERR(ag_tensor_copy_data(x, buf, 8), AG_ERR_BUFFER_TOO_SMALL, "ag_tensor_copy_data");
  zero_ok = 1;
  for (i = 0; i < sizeof buf; i++)
    if (buf[i] != 0xCD)
      zero_ok = 0;
  CHECK(zero_ok);
  CHECK_ERR(ag_tensor_copy_data(x, buf, 0), AG_ERR_BUFFER_TOO_SMALL, "ag_tensor_copy_data");
  REL(x);
  ag_context_release(ctx);
}

static void test_copy_from_wrong_size(void) {
  ag_context *ctx = NEW_CTX();
  double xv[3] = {1, 2, 3}, src[4] = {9, 9, 9, 9};
  ag_tensor *x;
  int64_t v0;
  REQUIRE(ctx);
  x = MAKE(ctx, AG_F64, s1_3, 1, xv);
  REQUIRE(x);
  v0 = ag_tensor_version(x);
  CHECK_ERR(ag_tensor_copy_from(x, src, 16), AG_ERR_INVALID_ARGUMENT, "ag_tensor_copy_from");
  CHECK_MSG_HAS("16");
  CHECK_MSG_HAS("24");
  CHECK_ERR(ag_tensor_copy_from(x, src, 32), AG_ERR_INVALID_ARGUMENT, "ag_tensor_copy_from");
  CHECK_ERR(ag_tensor_copy_from(x, src, 0), AG_ERR_INVALID_ARGUMENT, "ag_tensor_copy_from");
  CHECK_VALUES(x, xv, 3, 0);
  CHECK(ag_tensor_version(x) == v0); /* failed writes bump nothing */
  REL(x);
  ag_context_release(ctx);
}

static void test_copy_from_expand_view(void) {
  ag_context *ctx = NEW_CTX();
  int64_t s13[2] = {1, 3};
  double xv[3] = {1, 2, 3}, src[6] = {0, 0, 0, 0, 0, 0};
  ag_tensor *x, *e = NULL;
  int64_t v0;
  REQUIRE(ctx);
  x = MAKE(ctx, AG_F64, s13, 2, xv);
  REQUIRE(x);
  REQUIRE_OK(ag_op_expand(&e, x, s2_23, 2));
  v0 = ag_tensor_version(x);
  CHECK_ERR(ag_tensor_copy_from(e, src, sizeof src), AG_ERR_UNSUPPORTED, "ag_tensor_copy_from");
  CHECK_VALUES(x, xv, 3, 0);
  CHECK(ag_tensor_version(x) == v0);
  REL(e);
  REL(x);
  ag_context_release(ctx);
}

static void test_item_errors(void) {
  ag_context *ctx = NEW_CTX();
  ag_tensor *x, *z = NULL;
  int64_t s0[1] = {0};
  double v = 123.0;
  REQUIRE(ctx);
  x = MAKE(ctx, AG_F64, s1_3, 1, NULL);
  REQUIRE(x);
  CHECK_ERR(ag_tensor_item(x, &v), AG_ERR_SHAPE, "ag_tensor_item");
  CHECK_MSG_HAS("3");
  CHECK(v == 123.0);
  REQUIRE_OK(ag_tensor_zeros(&z, ctx, AG_F64, s0, 1));
  CHECK_ERR(ag_tensor_item(z, &v), AG_ERR_SHAPE, "ag_tensor_item");
  CHECK(v == 123.0);
  REL(x);
  REL(z);
  ag_context_release(ctx);
}

static void test_shape_buffer_too_small(void) {
  ag_context *ctx = NEW_CTX();
  ag_tensor *x;
  int64_t dims[2] = {-7, -7};
  REQUIRE(ctx);
  x = MAKE(ctx, AG_F64, s2_23, 2, NULL);
  REQUIRE(x);
  CHECK_ERR(ag_tensor_shape(x, dims, 1), AG_ERR_BUFFER_TOO_SMALL, "ag_tensor_shape");
  CHECK(dims[0] == -7 && dims[1] == -7);
  REL(x);
  ag_context_release(ctx);
}

/* ---- autograd misuse -------------------------------------------------------- */

static void test_backward_nonscalar_root(void) {
  ag_context *ctx = NEW_CTX();
  double xv[3] = {1, 2, 3};
  ag_tensor *x, *y = NULL, *g;
  REQUIRE(ctx);
  x = MAKE(ctx, AG_F64, s1_3, 1, xv);
  REQUIRE(x);
  REQUIRE_OK(ag_tensor_requires_grad(x, 1));
  REQUIRE_OK(ag_op_mul(&y, x, x));
  CHECK_ERR(ag_backward(y, NULL, NULL), AG_ERR_SHAPE, "ag_backward");
  CHECK_MSG_HAS("3");
  g = GRAD(x);
  CHECK(g == NULL); /* nothing accumulated */
  REL(g);
  REL(y);
  REL(x);
  ag_context_release(ctx);
}

static void test_backward_bad_grad_root(void) {
  ag_context *ctx = NEW_CTX();
  double xv[3] = {1, 2, 3};
  int64_t s2[1] = {2}, s31[2] = {3, 1};
  ag_tensor *x, *y = NULL, *g, *r2, *r31, *rf32, *r0;
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
  g = GRAD(x);
  CHECK(g == NULL);
  REL(g);
  /* the graph is intact after those failures */
  {
    ag_tensor *ones = NULL;
    double want[3] = {2, 4, 6};
    REQUIRE_OK(ag_tensor_ones(&ones, ctx, AG_F64, s1_3, 1));
    CHECK_OK(ag_backward(y, ones, NULL));
    g = GRAD(x);
    CHECK_VALUES(g, want, 3, 0);
    REL(g);
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

static void test_backward_bad_struct_size(void) {
  ag_context *ctx = NEW_CTX();
  ag_tensor *x, *y = NULL, *g;
  ag_backward_options o = AG_BACKWARD_OPTIONS_INIT;
  REQUIRE(ctx);
  x = SCALAR(ctx, AG_F64, 2.0);
  REQUIRE(x);
  REQUIRE_OK(ag_tensor_requires_grad(x, 1));
  REQUIRE_OK(ag_op_mul(&y, x, x));
  o.struct_size = 0;
  CHECK_ERR(ag_backward(y, NULL, &o), AG_ERR_INVALID_ARGUMENT, "ag_backward");
  o.struct_size = 3;
  CHECK_ERR(ag_backward(y, NULL, &o), AG_ERR_INVALID_ARGUMENT, "ag_backward");
  g = GRAD(x);
  CHECK(g == NULL);
  REL(g);
  REL(y);
  REL(x);
  ag_context_release(ctx);
}

static void test_context_bad_options(void) {
  ag_context *out = SENT_C;
  ag_context_options o = AG_CONTEXT_OPTIONS_INIT;
  o.struct_size = 0;
  CHECK_ERR(ag_context_create(&out, &o), AG_ERR_INVALID_ARGUMENT, "ag_context_create");
  CHECK(out == SENT_C);
  o.struct_size = 3;
  CHECK_ERR(ag_context_create(&out, &o), AG_ERR_INVALID_ARGUMENT, "ag_context_create");
  CHECK(out == SENT_C);
  o = (ag_context_options)AG_CONTEXT_OPTIONS_INIT;
  o.num_threads = -1;
  CHECK_ERR(ag_context_create(&out, &o), AG_ERR_INVALID_ARGUMENT, "ag_context_create");
  CHECK_MSG_HAS("-1");
  CHECK(out == SENT_C);
  {
    /* a larger struct whose unknown trailing bytes are not zero */
    struct {
      ag_context_options base;
      uint32_t future;
    } big;
    memset(&big, 0, sizeof big);
    big.base.struct_size = (uint32_t)sizeof big;
    big.future = 1;
    CHECK_ERR(ag_context_create(&out, &big.base), AG_ERR_INVALID_ARGUMENT, "ag_context_create");
    CHECK(out == SENT_C);
  }
}

/* Backward options: a larger struct with zero trailing bytes is accepted,
 * nonzero unknown bytes are rejected (and change nothing). */
static void test_backward_options_extension(void) {
  ag_context *ctx = NEW_CTX();
  ag_tensor *x, *y = NULL, *g;
  struct {
    ag_backward_options base;
    uint32_t future;
    uint32_t future2;
  } big;
  REQUIRE(ctx);
  x = SCALAR(ctx, AG_F64, 2.0);
  REQUIRE(x);
  REQUIRE_OK(ag_tensor_requires_grad(x, 1));
  REQUIRE_OK(ag_op_mul(&y, x, x));
  memset(&big, 0, sizeof big);
  big.base.struct_size = (uint32_t)sizeof big;
  big.base.retain_graph = 1;
  big.future2 = 5;
  CHECK_ERR(ag_backward(y, NULL, &big.base), AG_ERR_INVALID_ARGUMENT, "ag_backward");
  g = GRAD(x);
  CHECK(g == NULL);
  REL(g);
  big.future2 = 0;
  CHECK_OK(ag_backward(y, NULL, &big.base));
  CHECK_OK(ag_backward(y, NULL, &big.base)); /* retain_graph was read */
  g = GRAD(x);
  CHECK_CLOSE(ITEM(g), 8.0, 0);
  REL(g);
  REL(y);
  REL(x);
  ag_context_release(ctx);
}

/* Backward twice through a graph released by the first pass. */
static void test_backward_released_graph(void) {
  ag_context *ctx = NEW_CTX();
  ag_tensor *x, *y = NULL, *g;
  REQUIRE(ctx);
  x = SCALAR(ctx, AG_F64, 3.0);
  REQUIRE(x);
  REQUIRE_OK(ag_tensor_requires_grad(x, 1));
  REQUIRE_OK(ag_op_mul(&y, x, x));
  REQUIRE_OK(ag_backward(y, NULL, NULL));
  CHECK_ERR(ag_backward(y, NULL, NULL), AG_ERR_GRAPH, "ag_backward");
  CHECK_MSG_HAS("Backward");
  CHECK_MSG_HAS("MulBackward");
  g = GRAD(x);
  CHECK_CLOSE(ITEM(g), 6.0, 0); /* the first pass only */
  REL(g);
  REL(y);
  REL(x);
  ag_context_release(ctx);
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
  ag_tensor *x, *y = NULL, *wrong_shape, *wrong_dtype, *ok, *g;
  REQUIRE(ctx);
  x = MAKE(ctx, AG_F64, s1_3, 1, NULL);
  wrong_shape = MAKE(ctx, AG_F64, s2, 1, NULL);
  wrong_dtype = MAKE(ctx, AG_F32, s1_3, 1, NULL);
  ok = MAKE(ctx, AG_F64, s1_3, 1, NULL);
  REQUIRE(x && wrong_shape && wrong_dtype && ok);
  REQUIRE_OK(ag_tensor_requires_grad(x, 1));
  CHECK_ERR(ag_tensor_set_grad(x, wrong_shape), AG_ERR_SHAPE, "ag_tensor_set_grad");
  CHECK_ERR(ag_tensor_set_grad(x, wrong_dtype), AG_ERR_DTYPE, "ag_tensor_set_grad");
  g = GRAD(x);
  CHECK(g == NULL);
  REL(g);
  REQUIRE_OK(ag_op_neg(&y, x));
  CHECK_ERR(ag_tensor_set_grad(y, ok), AG_ERR_GRAPH, "ag_tensor_set_grad");
  REL(y);
  REL(x);
  REL(wrong_shape);
  REL(wrong_dtype);
  REL(ok);
  ag_context_release(ctx);
}

/* ---- the error message itself -------------------------------------------- */

static void test_success_does_not_clear_message(void) {
  ag_context *ctx = NEW_CTX();
  char before[512];
  ag_tensor *t = NULL, *u = NULL;
  double v = 0;
  REQUIRE(ctx);
  CHECK_STATUS(ag_tensor_item(NULL, &v), AG_ERR_INVALID_ARGUMENT);
  h_save_message(before, sizeof before);
  CHECK(before[0] != '\0');
  CHECK_OK(ag_tensor_scalar(&t, ctx, AG_F64, 2.0));
  CHECK_OK(ag_op_exp(&u, t));
  CHECK_OK(ag_tensor_item(u, &v));
  CHECK_STR(ag_last_error_message(), before);
  REL(t);
  REL(u);
  CHECK_STR(ag_last_error_message(), before);
  ag_context_release(ctx);
}

static void test_new_failure_replaces_message(void) {
  /* a new failure replaces the message */
  ag_tensor *out = SENT_T;
  CHECK_ERR(ag_op_neg(&out, NULL), AG_ERR_INVALID_ARGUMENT, "ag_op_neg");
  CHECK_ERR(ag_op_tanh(&out, NULL), AG_ERR_INVALID_ARGUMENT, "ag_op_tanh");
  CHECK(strstr(ag_last_error_message(), "ag_op_neg") == NULL);
  CHECK(out == SENT_T);
}

typedef struct {
  char initial[512];
  char after[512];
  ag_status st;
  int initial_null;
} thread_msgs;

static void *thread_fail(void *arg) {
  thread_msgs *m = (thread_msgs *)arg;
  double v;
  const char *init = ag_last_error_message();
  m->initial_null = init == NULL;
  snprintf(m->initial, sizeof m->initial, "%s", init ? init : "");
  m->st = ag_tensor_item(NULL, &v);
  h_save_message(m->after, sizeof m->after);
  return NULL;
}

static void test_message_thread_local(void) {
  ag_context *ctx = NEW_CTX();
  ag_tensor *a, *b, *out = SENT_T;
  int64_t s4[1] = {4};
  char mine[512];
  thread_msgs m;
  pthread_t th;
  REQUIRE(ctx);
  a = MAKE(ctx, AG_F64, s2_23, 2, NULL);
  b = MAKE(ctx, AG_F64, s4, 1, NULL);
  REQUIRE(a && b);
  CHECK_ERR(ag_op_mul(&out, a, b), AG_ERR_SHAPE, "ag_op_mul");
  h_save_message(mine, sizeof mine);
  memset(&m, 0, sizeof m);
  REQUIRE(pthread_create(&th, NULL, thread_fail, &m) == 0);
  REQUIRE(pthread_join(th, NULL) == 0);
  /* the other thread started with "" and saw its own failure */
  CHECK(!m.initial_null);
  CHECK_STR(m.initial, "");
  CHECK(m.st == AG_ERR_INVALID_ARGUMENT);
  CHECK_STARTS(m.after, "[ag_tensor_item]");
  /* ours is unchanged */
  CHECK_STR(ag_last_error_message(), mine);
  CHECK_STARTS(ag_last_error_message(), "[ag_op_mul]");
  REL(a);
  REL(b);
  ag_context_release(ctx);
}

/* ---- released handles ----------------------------------------------------- */

/* x is kept alive by the node of y = x*x, which saved it: a second release of
 * the caller's handle reaches a live object, and must be detected, ignored
 * and recorded. */
static void test_double_release_tensor(void) {
  ag_context *ctx = NEW_CTX();
  ag_tensor *x, *y = NULL, *g, *g2;
  char before[512];
  double v;
  REQUIRE(ctx);
  x = SCALAR(ctx, AG_F64, 2.0);
  REQUIRE(x);
  REQUIRE_OK(ag_tensor_requires_grad(x, 1));
  REQUIRE_OK(ag_op_mul(&y, x, x));
  REQUIRE_OK(ag_backward(y, NULL, NULL));
  /* The leaf keeps its gradient alive, so the handle's object outlives the
   * user's references: a second release is detected, not a crash. */
  g = GRAD(x);
  REQUIRE(g);
  CHECK_STATUS(ag_tensor_item(NULL, &v), AG_ERR_INVALID_ARGUMENT);
  h_save_message(before, sizeof before);
  ag_tensor_release(g); /* legitimate */
  CHECK_STR(ag_last_error_message(), before);
  ag_tensor_release(g); /* double release */
  CHECK(strcmp(ag_last_error_message(), before) != 0);
  CHECK_CONTAINS(ag_last_error_message(), "ag_tensor_release");
  /* nothing was freed twice: the gradient is still there */
  g2 = GRAD(x);
  CHECK_CLOSE(ITEM(g2), 4.0, 0);
  REL(g2);
  REL(y);
  REL(x);
  ag_context_release(ctx);
}

/* The context is kept alive by a tensor: a second release of the caller's
 * context handle is detected, ignored and recorded. */
static void test_double_release_context(void) {
  ag_context *ctx = NEW_CTX();
  ag_tensor *t, *u = NULL;
  char before[512];
  double v;
  REQUIRE(ctx);
  t = SCALAR(ctx, AG_F64, 2.0);
  REQUIRE(t);
  CHECK_STATUS(ag_tensor_item(NULL, &v), AG_ERR_INVALID_ARGUMENT);
  h_save_message(before, sizeof before);
  ag_context_release(ctx);
  CHECK_STR(ag_last_error_message(), before);
  ag_context_release(ctx); /* double release */
  CHECK(strcmp(ag_last_error_message(), before) != 0);
  CHECK_CONTAINS(ag_last_error_message(), "ag_context_release");
  /* the tensor (and the context it holds) still work */
  CHECK_OK(ag_op_exp(&u, t));
  CHECK_CLOSE(ITEM(u), exp(2.0), 1e-12);
  REL(u);
  REL(t);
}

/* A released tensor handle (its object kept alive by a graph) passed back in. */
static void test_released_handle_rejected(void) {
  ag_context *ctx = NEW_CTX();
  ag_tensor *x, *y = NULL, *g, *out = SENT_T;
  REQUIRE(ctx);
  x = SCALAR(ctx, AG_F64, 2.0);
  REQUIRE(x);
  REQUIRE_OK(ag_tensor_requires_grad(x, 1));
  REQUIRE_OK(ag_op_mul(&y, x, x));
  REQUIRE_OK(ag_backward(y, NULL, NULL));
  /* g's object stays alive (x holds its gradient) after its handle goes. */
  g = GRAD(x);
  REQUIRE(g);
  ag_tensor_release(g);
  CHECK_ERR(ag_op_neg(&out, g), AG_ERR_INVALID_ARGUMENT, "ag_op_neg");
  CHECK_MSG_HAS("not a live handle");
  CHECK(out == SENT_T);
  /* retain of a released handle returns NULL, adds nothing, records it */
  CHECK(ag_tensor_retain(g) == NULL);
  CHECK_MSG_FN("ag_tensor_retain");
  CHECK_ERR(ag_tensor_requires_grad(g, 0), AG_ERR_INVALID_ARGUMENT, "ag_tensor_requires_grad");
  CHECK_ERR(ag_tensor_detach(&out, g), AG_ERR_INVALID_ARGUMENT, "ag_tensor_detach");
  CHECK(out == SENT_T);
  CHECK(ag_tensor_numel(g) == -1);
  CHECK(ag_tensor_ndim(g) == -1);
  CHECK(ag_tensor_dtype(g) == 0);
  REL(y);
  REL(x);
  ag_context_release(ctx);
}

int main(int argc, char **argv) {
  h_init(argc, argv);
  RUN(test_null_handles_unary_ops);
  RUN(test_null_handles_binary_ops);
  RUN(test_null_handles_context_and_creation);
  RUN(test_null_handles_tensor_functions);
  RUN(test_release_null_records_nothing);
  RUN(test_bad_ndim);
  RUN(test_negative_dim);
  RUN(test_bad_dtype);
  RUN(test_full_i64_out_of_range);
  RUN(test_size_overflow);
  RUN(test_broadcast_mismatch);
  RUN(test_dtype_mismatch);
  RUN(test_non_floating_ops);
  RUN(test_cast_bad_dtype);
  RUN(test_two_contexts);
  RUN(test_expand_incompatible);
  RUN(test_sum_to_size_incompatible);
  RUN(test_copy_data_too_small);
  RUN(test_copy_from_wrong_size);
  RUN(test_copy_from_expand_view);
  RUN(test_item_errors);
  RUN(test_shape_buffer_too_small);
  RUN(test_backward_nonscalar_root);
  RUN(test_backward_bad_grad_root);
  RUN(test_backward_requires_no_grad);
  RUN(test_backward_bad_struct_size);
  RUN(test_context_bad_options);
  RUN(test_memory_stats_errors);
  RUN(test_backward_options_extension);
  RUN(test_backward_released_graph);
  RUN(test_requires_grad_errors);
  RUN(test_set_grad_errors);
  RUN(test_success_does_not_clear_message);
  RUN(test_new_failure_replaces_message);
  RUN(test_message_thread_local);
  RUN(test_double_release_tensor);
  RUN(test_double_release_context);
  RUN(test_released_handle_rejected);
  return h_finish();
}
