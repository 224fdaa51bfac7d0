/*
 * tests/c_api/test_interop_layout.c - the layout queries of ag/interop.h
 * (ag_tensor_data, _strides, _is_contiguous, _contiguous) on contiguous,
 * transposed, expanded, 0-dim, empty and host tensors.
 */
#include "harness.h"

typedef struct counter {
  int calls;
  void *data; /* what the last call got */
} counter;

static void count_deleter(void *data, void *deleter_ctx) {
  counter *c = (counter *)deleter_ctx;
  c->calls++;
  c->data = data;
}

static void test_layout_of_views(void) {
  const int64_t shape[2] = {2, 3}, to[3] = {4, 2, 3};
  const double vals[6] = {1, 2, 3, 4, 5, 6};
  int64_t st[3] = {-7, -7, -7};
  double out[24];
  ag_context *ctx = NEW_CTX();
  ag_tensor *x = NULL, *tr = NULL, *ex = NULL, *same = NULL, *c1 = NULL, *c2 = NULL;
  REQUIRE(ctx);
  x = MAKE(ctx, AG_F64, shape, 2, vals);
  if (x && CHECK_OK(ag_op_transpose(&tr, x, 0, 1)) && CHECK_OK(ag_op_expand(&ex, x, to, 3))) {
    CHECK_OK(ag_tensor_strides(x, st, 3));
    CHECK(st[0] == 3 && st[1] == 1 && st[2] == -7);
    CHECK(ag_tensor_is_contiguous(x) == 1);
    CHECK_OK(ag_tensor_contiguous(&same, x));
    CHECK(same == x); /* a new reference to the same handle */
    CHECK_OK(ag_tensor_strides(tr, st, 2));
    CHECK(st[0] == 1 && st[1] == 3);
    CHECK(ag_tensor_is_contiguous(tr) == 0);
    CHECK(ag_tensor_data(tr) == ag_tensor_data(x));
    if (CHECK_OK(ag_tensor_contiguous(&c1, tr))) {
      CHECK(c1 != tr);
      CHECK(ag_tensor_is_contiguous(c1) == 1);
      CHECK(ag_tensor_data(c1) != ag_tensor_data(x));
      if (READ(c1, out, 6) == 6)
        CHECK(out[0] == 1 && out[1] == 4 && out[2] == 2 && out[5] == 6);
    }
    CHECK_OK(ag_tensor_strides(ex, st, 3));
    CHECK(st[0] == 0 && st[1] == 3 && st[2] == 1);
    CHECK(ag_tensor_is_contiguous(ex) == 0);
    if (CHECK_OK(ag_tensor_contiguous(&c2, ex))) {
      CHECK(ag_tensor_is_contiguous(c2) == 1);
      if (READ(c2, out, 24) == 24)
        CHECK(out[0] == 1 && out[6] == 1 && out[23] == 6);
    }
    /* capacity and NULL checks, buffer untouched on failure */
    st[0] = -7;
    CHECK_ERR(ag_tensor_strides(x, st, 1), AG_ERR_BUFFER_TOO_SMALL, "ag_tensor_strides");
    CHECK(st[0] == -7);
    CHECK_ERR(ag_tensor_strides(x, NULL, 2), AG_ERR_INVALID_ARGUMENT, "ag_tensor_strides");
    CHECK_ERR(ag_tensor_strides(NULL, st, 2), AG_ERR_INVALID_ARGUMENT, "ag_tensor_strides");
    CHECK_ERR(ag_tensor_contiguous(NULL, x), AG_ERR_INVALID_ARGUMENT, "ag_tensor_contiguous");
    CHECK_ERR(ag_tensor_contiguous(&c2, NULL), AG_ERR_INVALID_ARGUMENT, "ag_tensor_contiguous");
  }
  ag_tensor_release(same);
  ag_tensor_release(c1);
  ag_tensor_release(c2);
  ag_tensor_release(tr);
  ag_tensor_release(ex);
  ag_tensor_release(x);
  ag_context_release(ctx);
}

/* 0-dim, empty and size-1 dims (whose strides do not matter, as in PyTorch). */
static void test_layout_of_small_tensors(void) {
  double one_value = 2.5, col[3] = {1, 2, 3};
  const int64_t empty_shape[3] = {2, 0, 3}, col_shape[2] = {3, 1}, col_strides[2] = {1, 7};
  int64_t st[3];
  counter c = {0};
  ag_context *ctx = NEW_CTX();
  ag_tensor *s = NULL, *e = NULL, *h = NULL, *col_t = NULL, *same = NULL;
  REQUIRE(ctx);
  if (CHECK_OK(ag_tensor_from_buffer(&s, ctx, AG_F64, NULL, NULL, 0, &one_value, NULL, NULL))) {
    CHECK(ag_tensor_data(s) == (const void *)&one_value);
    CHECK_OK(ag_tensor_strides(s, NULL, 0));
    CHECK(ag_tensor_is_contiguous(s) == 1);
    CHECK_CLOSE(ITEM(s), 2.5, 0);
    CHECK_OK(ag_tensor_contiguous(&same, s));
    CHECK(same == s);
    ag_tensor_release(same);
  }
  e = MAKE(ctx, AG_F32, empty_shape, 3, NULL);
  if (e) {
    CHECK(ag_tensor_data(e) != NULL);
    CHECK(ag_tensor_is_contiguous(e) == 1);
    CHECK_OK(ag_tensor_strides(e, st, 3));
  }
  /* An empty host tensor may come with NULL data; it still has an address. */
  if (CHECK_OK(ag_tensor_from_buffer(&h, ctx, AG_F32, empty_shape, NULL, 3, NULL, count_deleter, &c))) {
    CHECK(ag_tensor_numel(h) == 0);
    CHECK(ag_tensor_data(h) != NULL);
    CHECK(ag_tensor_is_contiguous(h) == 1);
    ag_tensor_release(h);
    CHECK(c.calls == 1 && c.data == NULL);
  }
  if (CHECK_OK(ag_tensor_from_buffer(&col_t, ctx, AG_F64, col_shape, col_strides, 2, col, NULL, NULL))) {
    CHECK(ag_tensor_is_contiguous(col_t) == 1);
    CHECK_OK(ag_tensor_strides(col_t, st, 2));
    CHECK(st[0] == 1 && st[1] == 7);
  }
  CHECK(ag_tensor_data(NULL) == NULL);
  CHECK_MSG_FN("ag_tensor_data");
  CHECK(ag_tensor_is_contiguous(NULL) == -1);
  CHECK(ag_tensor_is_read_only(NULL) == -1);
  CHECK_ERR(ag_tensor_data_mut(NULL, s), AG_ERR_INVALID_ARGUMENT, "ag_tensor_data_mut");
  ag_tensor_release(col_t);
  ag_tensor_release(e);
  ag_tensor_release(s);
  ag_context_release(ctx);
}

/* ag_tensor_contiguous of a view records a copy: gradients reach the base. */
static void test_contiguous_copy_is_differentiable(void) {
  double buf[6] = {1, 2, 3, 4, 5, 6}, g[6];
  const int64_t shape[2] = {2, 3}, wshape[2] = {3, 2};
  const double wv[6] = {10, 20, 30, 40, 50, 60};
  ag_context *ctx = NEW_CTX();
  ag_tensor *x = NULL, *tr = NULL, *c = NULL, *w = NULL, *p = NULL, *loss = NULL, *gx = NULL;
  REQUIRE(ctx);
  CHECK_OK(ag_tensor_from_buffer(&x, ctx, AG_F64, shape, NULL, 2, buf, NULL, NULL));
  w = MAKE(ctx, AG_F64, wshape, 2, wv);
  if (x && w && CHECK_OK(ag_tensor_requires_grad(x, 1)) && CHECK_OK(ag_op_transpose(&tr, x, 0, 1)) &&
      CHECK_OK(ag_tensor_contiguous(&c, tr)) && CHECK_OK(ag_op_mul(&p, c, w)) && CHECK_OK(ag_op_sum(&loss, p)) &&
      CHECK_OK(ag_backward(loss, NULL, NULL))) {
    CHECK(c != tr);
    gx = GRAD(x);
    /* d loss / d x[i][j] = w[j][i] */
    if (gx && READ(gx, g, 6) == 6)
      CHECK(g[0] == 10 && g[1] == 30 && g[2] == 50 && g[3] == 20 && g[4] == 40 && g[5] == 60);
  }
  ag_tensor_release(gx);
  ag_tensor_release(loss);
  ag_tensor_release(p);
  ag_tensor_release(c);
  ag_tensor_release(tr);
  ag_tensor_release(w);
  ag_tensor_release(x);
  ag_context_release(ctx);
}

int main(int argc, char **argv) {
  h_init(argc, argv);
  RUN(test_layout_of_views);
  RUN(test_layout_of_small_tensors);
  RUN(test_contiguous_copy_is_differentiable);
  return h_finish();
}
