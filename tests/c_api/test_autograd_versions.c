/*
 * tests/c_api/test_autograd_versions.c - version counters through the C API:
 * a saved tensor overwritten before backward fails with AG_ERR_VERSION naming
 * the node and both versions; an unsaved tensor may change freely.
 */
#include "harness.h"

static const int64_t s3[1] = {3};
static const double xv[3] = {1, 2, 3};

/* The message states the version found and the one saved, in that order. */
static int names_versions(const char *msg, int64_t now, int64_t saved) {
  char part[96];
  snprintf(part, sizeof part, "its version is %lld, expected %lld", (long long)now, (long long)saved);
  return msg && strstr(msg, part) != NULL;
}

/* x saved by y = x*x, overwritten, then backpropagated: AG_ERR_VERSION naming
 * MulBackward and both versions; nothing accumulated. */
static void test_version_error_mul(ag_dtype dt) {
  ag_context *ctx = NEW_CTX();
  double nv[3] = {4, 5, 6};
  ag_tensor *x, *y = NULL, *s = NULL;
  int64_t v_saved, v_now;
  float fbuf[3];
  double dbuf[3];
  size_t es = ag_dtype_size(dt);
  int i;
  REQUIRE(ctx);
  x = LEAF(ctx, dt, s3, 1, xv);
  REQUIRE(x);
  v_saved = ag_tensor_version(x);
  REQUIRE_OK(ag_op_mul(&y, x, x));
  REQUIRE_OK(ag_op_sum(&s, y));
  for (i = 0; i < 3; i++) {
    fbuf[i] = (float)nv[i];
    dbuf[i] = nv[i];
  }
  REQUIRE_OK(ag_tensor_copy_from(x, dt == AG_F32 ? (void *)fbuf : (void *)dbuf, 3 * es));
  v_now = ag_tensor_version(x);
  CHECK(v_now > v_saved);
  CHECK_ERR(ag_backward(s, NULL, NULL), AG_ERR_VERSION, "ag_backward");
  CHECK_MSG_HAS("MulBackward");
  CHECK(names_versions(ag_last_error_message(), v_now, v_saved));
  CHECK_NO_GRAD(x);
  REL(s);
  REL(y);
  REL(x);
  ag_context_release(ctx);
}

/* exp and tanh save their output; overwriting it breaks their backward. */
static void test_version_error_saved_output(ag_dtype dt) {
  ag_context *ctx = NEW_CTX();
  double small[3] = {0.1, 0.2, 0.3};
  char zeros[24];
  int which;
  REQUIRE(ctx);
  memset(zeros, 0, sizeof zeros);
  for (which = 0; which < 2; which++) {
    ag_tensor *x, *y = NULL, *s = NULL;
    ag_status st;
    x = LEAF(ctx, dt, s3, 1, small);
    if (!x)
      break;
    st = which == 0 ? ag_op_exp(&y, x) : ag_op_tanh(&y, x);
    if (CHECK_OK(st) && CHECK_OK(ag_op_sum(&s, y)) &&
        CHECK_OK(ag_tensor_copy_from(y, zeros, 3 * ag_dtype_size(dt)))) {
      CHECK_ERR(ag_backward(s, NULL, NULL), AG_ERR_VERSION, "ag_backward");
      CHECK_MSG_HAS(which == 0 ? "ExpBackward" : "TanhBackward");
      CHECK_NO_GRAD(x);
    }
    REL(s);
    REL(y);
    REL(x);
  }
  ag_context_release(ctx);
}

/* A write through a detached alias bumps the shared counter: same failure. */
static void test_version_error_via_detach(ag_dtype dt) {
  h_squares f;
  char zeros[24];
  ag_tensor *d = NULL;
  memset(zeros, 0, sizeof zeros);
  REQUIRE(SUM_OF_SQUARES(&f, dt, s3, 1, xv));
  REQUIRE_OK(ag_tensor_detach(&d, f.x));
  REQUIRE_OK(ag_tensor_copy_from(d, zeros, 3 * ag_dtype_size(dt)));
  CHECK_ERR(ag_backward(f.s, NULL, NULL), AG_ERR_VERSION, "ag_backward");
  CHECK_MSG_HAS("MulBackward");
  CHECK_NO_GRAD(f.x);
  REL(d);
  h_squares_drop(&f);
}

/* A tensor that no node saved may be overwritten freely: y = x + c saves nothing. */
static void test_unsaved_tensor_may_change(ag_dtype dt) {
  ag_context *ctx = NEW_CTX();
  char zeros[24];
  ag_tensor *x, *c, *y = NULL, *s = NULL;
  REQUIRE(ctx);
  memset(zeros, 0, sizeof zeros);
  x = LEAF(ctx, dt, s3, 1, xv);
  c = MAKE(ctx, dt, s3, 1, xv);
  REQUIRE(x && c);
  REQUIRE_OK(ag_op_add(&y, x, c));
  REQUIRE_OK(ag_op_sum(&s, y));
  REQUIRE_OK(ag_tensor_copy_from(c, zeros, 3 * ag_dtype_size(dt)));
  CHECK_OK(ag_backward(s, NULL, NULL));
  CHECK_GRAD_ALL(x, 1.0, 3, 0);
  REL(s);
  REL(y);
  REL(c);
  REL(x);
  ag_context_release(ctx);
}

int main(int argc, char **argv) {
  h_init(argc, argv);
  RUN_F64_F32(test_version_error_mul);
  RUN_F64_F32(test_version_error_saved_output);
  RUN_F64_F32(test_version_error_via_detach);
  RUN_F64_F32(test_unsaved_tensor_may_change);
  return h_finish();
}
