/*
 * tests/c_api/test_errors_tensor.c - error paths of tensor creation (bad ndim,
 * dims, dtypes, values and sizes) and of data access (buffers too small,
 * wrong sizes, views, item): the status, the out-parameter or buffer left
 * untouched, and a message stating the facts.
 */
#include "harness.h"

static const int64_t s1_3[1] = {3};
static const int64_t s2_23[2] = {2, 3};

/* ---- bad shapes, dims, dtypes at creation ---------------------------------------- */

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

/* ---- data access ----------------------------------------------------------------- */

static void test_copy_data_too_small(void) {
  ag_context *ctx;
  double xv[3] = {1, 2, 3};
  unsigned char buf[24], zero_ok;
  ag_tensor *x;
  size_t i;
  REQUIRE(NEW_CTX_WITH(&ctx, &x, AG_F64, s1_3, 1, xv));
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
  ag_context *ctx;
  double xv[3] = {1, 2, 3}, src[4] = {9, 9, 9, 9};
  ag_tensor *x;
  int64_t v0;
  REQUIRE(NEW_CTX_WITH(&ctx, &x, AG_F64, s1_3, 1, xv));
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
  ag_context *ctx;
  int64_t s13[2] = {1, 3};
  double xv[3] = {1, 2, 3}, src[6] = {0, 0, 0, 0, 0, 0};
  ag_tensor *x, *e = NULL;
  int64_t v0;
  REQUIRE(NEW_CTX_WITH(&ctx, &x, AG_F64, s13, 2, xv));
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
  ag_context *ctx;
  ag_tensor *x, *z = NULL;
  int64_t s0[1] = {0};
  double v = 123.0;
  REQUIRE(NEW_CTX_WITH(&ctx, &x, AG_F64, s1_3, 1, NULL));
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
  ag_context *ctx;
  ag_tensor *x;
  int64_t dims[2] = {-7, -7};
  REQUIRE(NEW_CTX_WITH(&ctx, &x, AG_F64, s2_23, 2, NULL));
  CHECK_ERR(ag_tensor_shape(x, dims, 1), AG_ERR_BUFFER_TOO_SMALL, "ag_tensor_shape");
  CHECK(dims[0] == -7 && dims[1] == -7);
  REL(x);
  ag_context_release(ctx);
}

int main(int argc, char **argv) {
  h_init(argc, argv);
  RUN(test_bad_ndim);
  RUN(test_negative_dim);
  RUN(test_bad_dtype);
  RUN(test_full_i64_out_of_range);
  RUN(test_size_overflow);
  RUN(test_copy_data_too_small);
  RUN(test_copy_from_wrong_size);
  RUN(test_copy_from_expand_view);
  RUN(test_item_errors);
  RUN(test_shape_buffer_too_small);
  return h_finish();
}
