/*
 * tests/c_api/test_autograd_accumulate.c - the gradient of a leaf through the C
 * API: accumulation over backward calls, reset, held handles as snapshots,
 * set_grad, and threads backpropagating into one shared leaf.
 */
#include "harness.h"

#include <pthread.h>

static const int64_t s3[1] = {3};
static const double xv[3] = {1, 2, 3};

/* Two backward calls (retain_graph) accumulate; set_grad(x, NULL) resets. */
static void test_accumulate_and_reset(ag_dtype dt) {
  h_squares f;
  double once[3] = {2, 4, 6}, twice[3] = {4, 8, 12};
  ag_backward_options o = AG_BACKWARD_OPTIONS_INIT;
  REQUIRE(SUM_OF_SQUARES(&f, dt, s3, 1, xv));
  o.retain_graph = 1;
  REQUIRE_OK(ag_backward(f.s, NULL, &o));
  CHECK_GRAD_VALUES(f.x, once, 3, 0);
  REQUIRE_OK(ag_backward(f.s, NULL, &o));
  CHECK_GRAD_VALUES(f.x, twice, 3, 0);
  /* reset */
  REQUIRE_OK(ag_tensor_set_grad(f.x, NULL));
  CHECK_NO_GRAD(f.x);
  /* the next backward starts afresh (and releases the graph) */
  REQUIRE_OK(ag_backward(f.s, NULL, NULL));
  CHECK_GRAD_VALUES(f.x, once, 3, 0);
  h_squares_drop(&f);
}

/* A gradient handle the caller holds is a snapshot. */
static void test_grad_snapshot(ag_dtype dt) {
  h_squares f;
  double once[3] = {2, 4, 6}, twice[3] = {4, 8, 12};
  ag_backward_options o = AG_BACKWARD_OPTIONS_INIT;
  ag_tensor *g1, *g2;
  REQUIRE(SUM_OF_SQUARES(&f, dt, s3, 1, xv));
  o.retain_graph = 1;
  REQUIRE_OK(ag_backward(f.s, NULL, &o));
  g1 = GRAD(f.x);
  REQUIRE(g1 != NULL);
  CHECK_VALUES(g1, once, 3, 0);
  REQUIRE_OK(ag_backward(f.s, NULL, &o));
  CHECK_VALUES(g1, once, 3, 0); /* unchanged under the caller */
  g2 = GRAD(f.x);
  CHECK_VALUES(g2, twice, 3, 0);
  /* resetting the grad leaves held handles alone too */
  REQUIRE_OK(ag_tensor_set_grad(f.x, NULL));
  CHECK_VALUES(g2, twice, 3, 0);
  REL(g1);
  REL(g2);
  h_squares_drop(&f);
}

/* The handle is the gradient itself, not a copy: writing into it changes the
 * leaf's current gradient (ABI.md 1, "Gradient handles are snapshots"). */
static void test_grad_handle_is_the_gradient(ag_dtype dt) {
  h_squares f;
  double want[3] = {2, 4, 6};
  char zeros[24];
  ag_tensor *g;
  memset(zeros, 0, sizeof zeros);
  REQUIRE(SUM_OF_SQUARES(&f, dt, s3, 1, xv));
  REQUIRE_OK(ag_backward(f.s, NULL, NULL));
  g = GRAD(f.x);
  REQUIRE(g != NULL);
  CHECK_VALUES(g, want, 3, 0);
  REQUIRE_OK(ag_tensor_copy_from(g, zeros, 3 * ag_dtype_size(dt)));
  CHECK_GRAD_ALL(f.x, 0.0, 3, 0);
  REL(g);
  h_squares_drop(&f);
}

/* set_grad(x, G) shares G as the gradient; a later backward accumulates into
 * a new buffer, so G itself stays as it was. */
static void test_set_grad_then_accumulate(ag_dtype dt) {
  ag_context *ctx;
  double want[3] = {12, 14, 16};
  ag_tensor *x, *G = NULL, *y = NULL, *s = NULL, *g;
  REQUIRE(NEW_CTX_WITH_LEAF(&ctx, &x, dt, s3, 1, xv));
  REQUIRE_OK(ag_tensor_full(&G, ctx, dt, s3, 1, 10.0));
  REQUIRE_OK(ag_tensor_set_grad(x, G));
  CHECK_GRAD_ALL(x, 10.0, 3, 0);
  REQUIRE_OK(ag_op_mul(&y, x, x));
  REQUIRE_OK(ag_op_sum(&s, y));
  REQUIRE_OK(ag_backward(s, NULL, NULL));
  g = GRAD(x);
  CHECK_VALUES(g, want, 3, 0);
  CHECK_ALL(G, 10.0, 3, 0);
  REL(g);
  REL(G);
  REL(s);
  REL(y);
  REL(x);
  ag_context_release(ctx);
}

/* ---- threads --------------------------------------------------------------------- */

typedef struct {
  ag_tensor *x, *c;
  int iters;
  int failures;
} bw_thread;

static void *thread_backward(void *arg) {
  bw_thread *b = (bw_thread *)arg;
  int i;
  for (i = 0; i < b->iters; i++) {
    ag_tensor *y = NULL, *s = NULL;
    if (ag_op_mul(&y, b->x, b->c) != AG_OK || ag_op_sum(&s, y) != AG_OK ||
        ag_backward(s, NULL, NULL) != AG_OK)
      b->failures++;
    ag_tensor_release(s);
    ag_tensor_release(y);
  }
  return NULL;
}

/* Threads run backward on their own graphs into one shared leaf. */
static void concurrent_backward_shared_leaf(int32_t num_threads) {
  enum { NT = 4, ITERS = 50 };
  ag_context *ctx = NEW_CTX_THREADS(num_threads);
  double ones[4] = {1, 1, 1, 1}, cv[4] = {1, 2, 3, 4}, want[4];
  int64_t s4[1] = {4};
  ag_tensor *x, *c;
  pthread_t th[NT];
  bw_thread b[NT];
  int i, started = 0;
  REQUIRE(ctx);
  x = LEAF(ctx, AG_F64, s4, 1, ones);
  c = MAKE(ctx, AG_F64, s4, 1, cv);
  REQUIRE(x && c);
  for (i = 0; i < NT; i++) {
    b[i].x = x;
    b[i].c = c;
    b[i].iters = ITERS;
    b[i].failures = 0;
    if (CHECK(pthread_create(&th[i], NULL, thread_backward, &b[i]) == 0))
      started++;
  }
  for (i = 0; i < started; i++)
    pthread_join(th[i], NULL);
  for (i = 0; i < started; i++)
    CHECK(b[i].failures == 0);
  for (i = 0; i < 4; i++)
    want[i] = cv[i] * NT * ITERS;
  CHECK_GRAD_VALUES(x, want, 4, 0);
  REL(x);
  REL(c);
  ag_context_release(ctx);
}

/* A context without worker threads (the configuration TSan runs use)... */
static void test_concurrent_backward_shared_leaf_1thread(void) { concurrent_backward_shared_leaf(1); }

/* ...and one with the default arena. */
static void test_concurrent_backward_shared_leaf_default(void) { concurrent_backward_shared_leaf(0); }

int main(int argc, char **argv) {
  h_init(argc, argv);
  RUN_F64_F32(test_accumulate_and_reset);
  RUN_F64_F32(test_grad_snapshot);
  RUN_F64_F32(test_set_grad_then_accumulate);
  RUN_F64_F32(test_grad_handle_is_the_gradient);
  RUN(test_concurrent_backward_shared_leaf_1thread);
  RUN(test_concurrent_backward_shared_leaf_default);
  return h_finish();
}
