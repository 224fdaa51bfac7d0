/*
 * tests/c_api/test_tensor_create.c - tensor creation through the C API:
 * zeros, ones, full and scalar in every dtype with their conversions, data
 * copied in, 0-dim, zero-size and AG_MAX_DIMS shapes, and shape queries.
 */
#include "harness.h"

static void test_zeros_ones_full(void) {
  ag_context *ctx = NEW_CTX();
  static const ag_dtype dts[4] = {AG_F32, AG_F64, AG_I64, AG_BOOL};
  int64_t shape[2] = {2, 3};
  int k;
  REQUIRE(ctx);
  for (k = 0; k < 4; k++) {
    ag_tensor *z = NULL, *o = NULL, *f = NULL;
    double fullv = dts[k] == AG_BOOL ? 1.0 : dts[k] == AG_I64 ? 7.0 : 2.5;
    if (CHECK_OK(ag_tensor_zeros(&z, ctx, dts[k], shape, 2))) {
      CHECK(ag_tensor_dtype(z) == dts[k]);
      CHECK_SHAPE(z, shape, 2);
      CHECK(ag_tensor_numel(z) == 6);
      CHECK_ALL(z, 0.0, 6, 0);
    }
    if (CHECK_OK(ag_tensor_ones(&o, ctx, dts[k], shape, 2))) {
      CHECK(ag_tensor_dtype(o) == dts[k]);
      CHECK_SHAPE(o, shape, 2);
      CHECK_ALL(o, 1.0, 6, 0);
    }
    if (CHECK_OK(ag_tensor_full(&f, ctx, dts[k], shape, 2, fullv))) {
      CHECK(ag_tensor_dtype(f) == dts[k]);
      CHECK_SHAPE(f, shape, 2);
      CHECK_ALL(f, fullv, 6, 0);
    }
    /* a fresh leaf requires no grad and is outside any graph */
    CHECK(ag_tensor_get_requires_grad(z) == 0);
    CHECK(ag_tensor_is_leaf(z) == 1);
    CHECK(ag_tensor_grad_fn_name(z) == NULL);
    REL(z);
    REL(o);
    REL(f);
  }
  ag_context_release(ctx);
}

static void test_full_conversions(void) {
  ag_context *ctx = NEW_CTX();
  int64_t shape[1] = {1};
  ag_tensor *t = NULL;
  REQUIRE(ctx);
  /* f32 rounds to nearest */
  REQUIRE_OK(ag_tensor_full(&t, ctx, AG_F32, shape, 1, 0.1));
  {
    float f = 0;
    CHECK_OK(ag_tensor_copy_data(t, &f, sizeof f));
    CHECK(f == 0.1f);
  }
  REL(t);
  /* i64 truncates toward zero */
  REQUIRE_OK(ag_tensor_full(&t, ctx, AG_I64, shape, 1, 2.7));
  CHECK_CLOSE(ITEM(t), 2.0, 0);
  REL(t);
  REQUIRE_OK(ag_tensor_full(&t, ctx, AG_I64, shape, 1, -2.7));
  CHECK_CLOSE(ITEM(t), -2.0, 0);
  REL(t);
  {
    int64_t big = 0;
    REQUIRE_OK(ag_tensor_full(&t, ctx, AG_I64, shape, 1, 4503599627370496.0)); /* 2^52 */
    CHECK_OK(ag_tensor_copy_data(t, &big, sizeof big));
    CHECK(big == (int64_t)1 << 52);
    REL(t);
  }
  /* bool: nonzero is 1 */
  REQUIRE_OK(ag_tensor_full(&t, ctx, AG_BOOL, shape, 1, 0.5));
  {
    unsigned char b = 9;
    CHECK_OK(ag_tensor_copy_data(t, &b, 1));
    CHECK(b == 1);
  }
  REL(t);
  REQUIRE_OK(ag_tensor_full(&t, ctx, AG_BOOL, shape, 1, -3.0));
  CHECK_CLOSE(ITEM(t), 1.0, 0);
  REL(t);
  REQUIRE_OK(ag_tensor_full(&t, ctx, AG_BOOL, shape, 1, 0.0));
  CHECK_CLOSE(ITEM(t), 0.0, 0);
  REL(t);
  /* f64 keeps special values */
  REQUIRE_OK(ag_tensor_full(&t, ctx, AG_F64, shape, 1, -INFINITY));
  CHECK(isinf(ITEM(t)) && ITEM(t) < 0);
  REL(t);
  REQUIRE_OK(ag_tensor_full(&t, ctx, AG_F32, shape, 1, NAN));
  CHECK(isnan(ITEM(t)));
  REL(t);
  ag_context_release(ctx);
}

static void test_scalar(void) {
  ag_context *ctx = NEW_CTX();
  static const ag_dtype dts[4] = {AG_F32, AG_F64, AG_I64, AG_BOOL};
  static const double vals[4] = {1.25, -3.5, 42.0, 1.0};
  int k;
  REQUIRE(ctx);
  for (k = 0; k < 4; k++) {
    ag_tensor *t = NULL;
    if (!CHECK_OK(ag_tensor_scalar(&t, ctx, dts[k], vals[k])))
      continue;
    CHECK(ag_tensor_ndim(t) == 0);
    CHECK(ag_tensor_numel(t) == 1);
    CHECK(ag_tensor_dtype(t) == dts[k]);
    CHECK_OK(ag_tensor_shape(t, NULL, 0));
    CHECK_CLOSE(ITEM(t), vals[k], 0);
    REL(t);
  }
  ag_context_release(ctx);
}

static void test_create_with_data_all_dtypes(void) {
  ag_context *ctx = NEW_CTX();
  int64_t shape[2] = {2, 3};
  float f32[6] = {1.5f, -2.0f, 3.25f, 0.0f, -0.5f, 1e30f};
  double f64[6] = {1.5, -2.0, 3.25, 0.0, -0.5, 1e300};
  int64_t i64[6] = {1, -2, INT64_MAX, INT64_MIN, 0, 123456789012345LL};
  unsigned char bin[6] = {0, 1, 2, 255, 0, 7};
  unsigned char bwant[6] = {0, 1, 1, 1, 0, 1};
  /* what goes in, and what comes back (bool as 0 or 1) */
  const struct {
    ag_dtype dt;
    const void *in, *want;
  } cases[4] = {{AG_F32, f32, f32}, {AG_F64, f64, f64}, {AG_I64, i64, i64}, {AG_BOOL, bin, bwant}};
  unsigned char got[6 * 8];
  int k;
  REQUIRE(ctx);
  for (k = 0; k < 4; k++) {
    ag_tensor *t = NULL;
    size_t bytes = 6 * ag_dtype_size(cases[k].dt);
    REQUIRE_OK(ag_tensor_create(&t, ctx, cases[k].dt, shape, 2, cases[k].in));
    CHECK(ag_tensor_dtype(t) == cases[k].dt);
    CHECK_SHAPE(t, shape, 2);
    CHECK(ag_tensor_numel(t) == 6);
    CHECK_OK(ag_tensor_copy_data(t, got, bytes));
    CHECK(memcmp(got, cases[k].want, bytes) == 0);
    REL(t);
  }
  {
    /* the data is copied: changing the caller's buffer changes nothing */
    ag_tensor *t = NULL;
    double src[2] = {1.0, 2.0}, back[2];
    int64_t s1[1] = {2};
    REQUIRE_OK(ag_tensor_create(&t, ctx, AG_F64, s1, 1, src));
    src[0] = 99.0;
    CHECK_OK(ag_tensor_copy_data(t, back, sizeof back));
    CHECK(back[0] == 1.0 && back[1] == 2.0);
    REL(t);
  }
  {
    /* data NULL: zeros */
    ag_tensor *t = NULL;
    REQUIRE_OK(ag_tensor_create(&t, ctx, AG_I64, shape, 2, NULL));
    CHECK_ALL(t, 0.0, 6, 0);
    REL(t);
  }
  ag_context_release(ctx);
}

static void test_create_0dim_shape_null(void) {
  ag_context *ctx = NEW_CTX();
  ag_tensor *t = NULL, *u = NULL;
  double v = -7.25;
  int64_t dims[2] = {111, 222};
  REQUIRE(ctx);
  REQUIRE_OK(ag_tensor_create(&t, ctx, AG_F64, NULL, 0, &v));
  CHECK(ag_tensor_ndim(t) == 0);
  CHECK(ag_tensor_numel(t) == 1);
  CHECK_OK(ag_tensor_shape(t, NULL, 0));
  CHECK_OK(ag_tensor_shape(t, dims, 2));
  CHECK(dims[0] == 111 && dims[1] == 222); /* nothing to write for 0 dims */
  CHECK_CLOSE(ITEM(t), -7.25, 0);
  /* a non-NULL shape pointer with ndim 0 is fine too */
  REQUIRE_OK(ag_tensor_create(&u, ctx, AG_F32, dims, 0, NULL));
  CHECK(ag_tensor_ndim(u) == 0);
  CHECK_CLOSE(ITEM(u), 0.0, 0);
  REL(t);
  REL(u);
  ag_context_release(ctx);
}

static void test_zero_size_dims(void) {
  ag_context *ctx = NEW_CTX();
  int64_t s1[1] = {0};
  int64_t s3[3] = {3, 0, 2};
  ag_tensor *a = NULL, *b = NULL, *sum = NULL, *mean = NULL, *o = NULL;
  double d = 5.0;
  REQUIRE(ctx);
  REQUIRE_OK(ag_tensor_create(&a, ctx, AG_F64, s1, 1, NULL));
  CHECK(ag_tensor_numel(a) == 0);
  CHECK(ag_tensor_ndim(a) == 1);
  CHECK_SHAPE(a, s1, 1);
  REQUIRE_OK(ag_tensor_ones(&b, ctx, AG_F32, s3, 3));
  CHECK(ag_tensor_numel(b) == 0);
  CHECK(ag_tensor_ndim(b) == 3);
  CHECK_SHAPE(b, s3, 3);
  /* empty copies with NULL buffers */
  CHECK_OK(ag_tensor_copy_data(b, NULL, 0));
  CHECK_OK(ag_tensor_copy_from(b, NULL, 0));
  /* item needs exactly one element */
  CHECK_STATUS(ag_tensor_item(a, &d), AG_ERR_SHAPE);
  CHECK(d == 5.0);
  /* the sum of an empty tensor is 0, the mean NaN */
  REQUIRE_OK(ag_op_sum(&sum, b));
  CHECK(ag_tensor_ndim(sum) == 0);
  CHECK_CLOSE(ITEM(sum), 0.0, 0);
  REQUIRE_OK(ag_op_mean(&mean, a));
  CHECK(isnan(ITEM(mean)));
  /* elementwise ops on empty tensors give empty tensors */
  REQUIRE_OK(ag_op_exp(&o, b));
  CHECK_SHAPE(o, s3, 3);
  REL(a);
  REL(b);
  REL(sum);
  REL(mean);
  REL(o);
  ag_context_release(ctx);
}

static void test_max_dims(void) {
  ag_context *ctx = NEW_CTX();
  int64_t shape[AG_MAX_DIMS];
  int64_t dims[AG_MAX_DIMS];
  ag_tensor *t = NULL, *s = NULL;
  int i;
  REQUIRE(ctx);
  for (i = 0; i < AG_MAX_DIMS; i++)
    shape[i] = (i % 4 == 0) ? 2 : 1;
  REQUIRE_OK(ag_tensor_ones(&t, ctx, AG_F64, shape, AG_MAX_DIMS));
  CHECK(ag_tensor_ndim(t) == AG_MAX_DIMS);
  CHECK(ag_tensor_numel(t) == 16);
  CHECK_OK(ag_tensor_shape(t, dims, AG_MAX_DIMS));
  CHECK(memcmp(dims, shape, sizeof dims) == 0);
  REQUIRE_OK(ag_op_sum(&s, t));
  CHECK_CLOSE(ITEM(s), 16.0, 0);
  REL(t);
  REL(s);
  ag_context_release(ctx);
}

static void test_shape_query(void) {
  ag_context *ctx = NEW_CTX();
  int64_t shape[3] = {2, 3, 4};
  int64_t dims[5];
  ag_tensor *t = NULL;
  int i;
  REQUIRE(ctx);
  REQUIRE_OK(ag_tensor_zeros(&t, ctx, AG_F32, shape, 3));
  CHECK(ag_tensor_ndim(t) == 3);
  CHECK(ag_tensor_numel(t) == 24);
  for (i = 0; i < 5; i++)
    dims[i] = -99;
  CHECK_OK(ag_tensor_shape(t, dims, 3));
  CHECK(dims[0] == 2 && dims[1] == 3 && dims[2] == 4);
  for (i = 0; i < 5; i++)
    dims[i] = -99;
  CHECK_OK(ag_tensor_shape(t, dims, 5)); /* more room than needed */
  CHECK(dims[0] == 2 && dims[1] == 3 && dims[2] == 4);
  for (i = 0; i < 5; i++)
    dims[i] = -99;
  CHECK_STATUS(ag_tensor_shape(t, dims, 2), AG_ERR_BUFFER_TOO_SMALL);
  for (i = 0; i < 5; i++)
    CHECK(dims[i] == -99); /* untouched */
  CHECK_STATUS(ag_tensor_shape(t, NULL, 0), AG_ERR_BUFFER_TOO_SMALL);
  CHECK_STATUS(ag_tensor_shape(t, dims, 0), AG_ERR_BUFFER_TOO_SMALL);
  CHECK(dims[0] == -99);
  REL(t);
  ag_context_release(ctx);
}

int main(int argc, char **argv) {
  h_init(argc, argv);
  RUN(test_zeros_ones_full);
  RUN(test_full_conversions);
  RUN(test_scalar);
  RUN(test_create_with_data_all_dtypes);
  RUN(test_create_0dim_shape_null);
  RUN(test_zero_size_dims);
  RUN(test_max_dims);
  RUN(test_shape_query);
  return h_finish();
}
