/*
 * tests/c_api/test_tensor_data.c - tensor data and ownership through the C
 * API: copying in and out, item, version counters shared by detach and expand
 * views, retain/release, getters on NULL, many short-lived tensors.
 */
#include "harness.h"

/* ---- data access and versions ---------------------------------------------------- */

static void test_copy_data_and_from(void) {
  ag_context *ctx;
  int64_t shape[2] = {2, 2};
  double init[4] = {1, 2, 3, 4}, next[4] = {-1, -2, -3, -4}, back[6];
  ag_tensor *t;
  int64_t v0, v1, v2;
  REQUIRE(NEW_CTX_WITH(&ctx, &t, AG_F64, shape, 2, init));
  v0 = ag_tensor_version(t);
  CHECK(v0 >= 0);
  /* reading does not bump the version */
  back[4] = back[5] = 77.0;
  CHECK_OK(ag_tensor_copy_data(t, back, sizeof back)); /* larger buffer is fine */
  CHECK(memcmp(back, init, sizeof init) == 0);
  CHECK(back[4] == 77.0 && back[5] == 77.0); /* only numel elements written */
  CHECK(ag_tensor_version(t) == v0);
  /* writing bumps it */
  CHECK_OK(ag_tensor_copy_from(t, next, sizeof next));
  v1 = ag_tensor_version(t);
  CHECK(v1 > v0);
  CHECK_VALUES(t, next, 4, 0);
  CHECK_OK(ag_tensor_copy_from(t, init, sizeof init));
  v2 = ag_tensor_version(t);
  CHECK(v2 > v1);
  CHECK_VALUES(t, init, 4, 0);
  REL(t);
  CHECK(ag_tensor_version(NULL) == -1);
  ag_context_release(ctx);
}

static void test_copy_from_all_dtypes(void) {
  ag_context *ctx = NEW_CTX();
  int64_t shape[1] = {3};
  ag_tensor *f = NULL, *i = NULL, *b = NULL;
  float fv[3] = {0.5f, 1.5f, -2.5f}, fb[3];
  int64_t iv[3] = {-5, 0, 5}, ib[3];
  unsigned char bv[3] = {1, 0, 1}, bb[3];
  REQUIRE(ctx);
  REQUIRE_OK(ag_tensor_zeros(&f, ctx, AG_F32, shape, 1));
  REQUIRE_OK(ag_tensor_zeros(&i, ctx, AG_I64, shape, 1));
  REQUIRE_OK(ag_tensor_zeros(&b, ctx, AG_BOOL, shape, 1));
  CHECK_OK(ag_tensor_copy_from(f, fv, sizeof fv));
  CHECK_OK(ag_tensor_copy_from(i, iv, sizeof iv));
  CHECK_OK(ag_tensor_copy_from(b, bv, sizeof bv));
  CHECK_OK(ag_tensor_copy_data(f, fb, sizeof fb));
  CHECK_OK(ag_tensor_copy_data(i, ib, sizeof ib));
  CHECK_OK(ag_tensor_copy_data(b, bb, sizeof bb));
  CHECK(memcmp(fv, fb, sizeof fb) == 0);
  CHECK(memcmp(iv, ib, sizeof ib) == 0);
  CHECK(memcmp(bv, bb, sizeof bb) == 0);
  REL(f);
  REL(i);
  REL(b);
  ag_context_release(ctx);
}

static void test_item_any_ndim(void) {
  ag_context *ctx = NEW_CTX();
  int64_t shape[3] = {1, 1, 1};
  double v = 0;
  double d = 3.5;
  ag_tensor *t = NULL, *i = NULL, *b = NULL;
  REQUIRE(ctx);
  REQUIRE_OK(ag_tensor_create(&t, ctx, AG_F64, shape, 3, &d));
  CHECK_OK(ag_tensor_item(t, &v));
  CHECK(v == 3.5);
  REQUIRE_OK(ag_tensor_full(&i, ctx, AG_I64, shape, 2, -9.0));
  CHECK_OK(ag_tensor_item(i, &v));
  CHECK(v == -9.0);
  REQUIRE_OK(ag_tensor_ones(&b, ctx, AG_BOOL, shape, 1));
  CHECK_OK(ag_tensor_item(b, &v));
  CHECK(v == 1.0);
  REL(t);
  REL(i);
  REL(b);
  ag_context_release(ctx);
}

static void test_detach_shares_data_and_version(void) {
  ag_context *ctx;
  int64_t shape[1] = {3};
  double xv[3] = {1, 2, 3}, nv[3] = {7, 8, 9}, mv[3] = {-1, -1, -1};
  ag_tensor *x, *d = NULL;
  int64_t v0;
  REQUIRE(NEW_CTX_WITH(&ctx, &x, AG_F64, shape, 1, xv));
  CHECK_OK(ag_tensor_requires_grad(x, 1));
  REQUIRE_OK(ag_tensor_detach(&d, x));
  CHECK(d != x);
  CHECK(ag_tensor_get_requires_grad(d) == 0);
  CHECK(ag_tensor_is_leaf(d) == 1);
  CHECK(ag_tensor_grad_fn_name(d) == NULL);
  CHECK_SHAPE(d, shape, 1);
  CHECK(ag_tensor_dtype(d) == AG_F64);
  CHECK_VALUES(d, xv, 3, 0);
  v0 = ag_tensor_version(x);
  CHECK(ag_tensor_version(d) == v0);
  /* a write through x is seen by d, with the same counter */
  CHECK_OK(ag_tensor_copy_from(x, nv, sizeof nv));
  CHECK_VALUES(d, nv, 3, 0);
  CHECK(ag_tensor_version(x) > v0);
  CHECK(ag_tensor_version(d) == ag_tensor_version(x));
  /* and a write through d is seen by x */
  v0 = ag_tensor_version(x);
  CHECK_OK(ag_tensor_copy_from(d, mv, sizeof mv));
  CHECK_VALUES(x, mv, 3, 0);
  CHECK(ag_tensor_version(x) > v0);
  CHECK(ag_tensor_version(d) == ag_tensor_version(x));
  /* x still requires grad; d is independent of it in the graph */
  CHECK(ag_tensor_get_requires_grad(x) == 1);
  /* releasing x keeps d's data alive */
  REL(x);
  CHECK_VALUES(d, mv, 3, 0);
  REL(d);
  ag_context_release(ctx);
}

static void test_expand_view_shares_version(void) {
  ag_context *ctx;
  int64_t s1[2] = {1, 3}, s2[2] = {2, 3};
  double xv[3] = {1, 2, 3}, nv[3] = {4, 5, 6};
  double want1[6] = {1, 2, 3, 1, 2, 3}, want2[6] = {4, 5, 6, 4, 5, 6};
  ag_tensor *x, *e = NULL;
  REQUIRE(NEW_CTX_WITH(&ctx, &x, AG_F64, s1, 2, xv));
  REQUIRE_OK(ag_op_expand(&e, x, s2, 2));
  CHECK_SHAPE(e, s2, 2);
  CHECK_VALUES(e, want1, 6, 0);
  CHECK(ag_tensor_version(e) == ag_tensor_version(x));
  CHECK_OK(ag_tensor_copy_from(x, nv, sizeof nv));
  CHECK_VALUES(e, want2, 6, 0); /* a view: shares the data */
  CHECK(ag_tensor_version(e) == ag_tensor_version(x));
  REL(x);
  CHECK_VALUES(e, want2, 6, 0);
  REL(e);
  ag_context_release(ctx);
}

/* ---- retain and release ---------------------------------------------------------- */

static void test_tensor_retain_release(void) {
  ag_context *ctx = NEW_CTX();
  ag_tensor *t;
  REQUIRE(ctx);
  t = SCALAR(ctx, AG_F64, 4.0);
  REQUIRE(t);
  CHECK(ag_tensor_retain(t) == t);
  CHECK(ag_tensor_retain(t) == t);
  CHECK(ag_tensor_retain(NULL) == NULL);
  REL(t);
  REL(t);
  CHECK_CLOSE(ITEM(t), 4.0, 0); /* one reference left */
  REL(t);
  REL(NULL); /* no-op */
  ag_context_release(ctx);
}

static void test_getters_on_null(void) {
  CHECK(ag_tensor_dtype(NULL) == 0);
  CHECK(ag_tensor_ndim(NULL) == -1);
  CHECK(ag_tensor_numel(NULL) == -1);
  CHECK(ag_tensor_version(NULL) == -1);
  CHECK(ag_tensor_get_requires_grad(NULL) == 0);
  CHECK(ag_tensor_is_leaf(NULL) == 0);
  CHECK(ag_tensor_grad_fn_name(NULL) == NULL);
  CHECK(ag_context_num_threads(NULL) == 0);
}

/* Many short-lived tensors and contexts (pools must recycle, leak checkers see the rest). */
static void test_many_create_release(void) {
  int round, i;
  for (round = 0; round < 3; round++) {
    ag_context *ctx = NEW_CTX_THREADS(1);
    ag_tensor *acc = NULL;
    REQUIRE(ctx);
    REQUIRE_OK(ag_tensor_scalar(&acc, ctx, AG_F64, 0.0));
    for (i = 0; i < 2000; i++) {
      ag_tensor *one = NULL, *next = NULL;
      int64_t shape[1] = {(i % 7) + 1};
      ag_tensor *big = NULL;
      if (!CHECK_OK(ag_tensor_ones(&big, ctx, AG_F32, shape, 1)))
        break;
      REL(big);
      if (!CHECK_OK(ag_tensor_scalar(&one, ctx, AG_F64, 1.0)))
        break;
      if (!CHECK_OK(ag_op_add(&next, acc, one))) {
        REL(one);
        break;
      }
      REL(one);
      REL(acc);
      acc = next;
    }
    CHECK_CLOSE(ITEM(acc), 2000.0, 0);
    REL(acc);
    ag_context_release(ctx);
  }
}

int main(int argc, char **argv) {
  h_init(argc, argv);
  RUN(test_copy_data_and_from);
  RUN(test_copy_from_all_dtypes);
  RUN(test_item_any_ndim);
  RUN(test_detach_shares_data_and_version);
  RUN(test_expand_view_shares_version);
  RUN(test_tensor_retain_release);
  RUN(test_getters_on_null);
  RUN(test_many_create_release);
  return h_finish();
}
