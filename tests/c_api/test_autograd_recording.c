/*
 * tests/c_api/test_autograd_recording.c - what the C API records: grad mode
 * (per thread, restored by backward), grad_fn names, leaves, detach, and
 * create_graph recording the backward pass for a higher-order gradient.
 */
#include "harness.h"

#include <pthread.h>

static const int64_t s1[1] = {1};
static const int64_t s3[1] = {3};

/* ---- grad mode ------------------------------------------------------------------- */

static void test_grad_mode_off(ag_dtype dt) {
  ag_context *ctx;
  double xv[1] = {3};
  int32_t prev = -7;
  ag_tensor *x, *y = NULL, *y2 = NULL;
  REQUIRE(NEW_CTX_WITH_LEAF(&ctx, &x, dt, s1, 1, xv));
  CHECK(ag_grad_mode_enabled() == 1);
  REQUIRE_OK(ag_grad_mode_set(0, &prev));
  CHECK(prev == 1);
  CHECK(ag_grad_mode_enabled() == 0);
  CHECK_OK(ag_op_mul(&y, x, x));
  CHECK(ag_tensor_get_requires_grad(y) == 0);
  CHECK(ag_tensor_is_leaf(y) == 1);
  CHECK(ag_tensor_grad_fn_name(y) == NULL);
  CHECK_CLOSE(ITEM(y), 9.0, 0);
  /* the leaf itself is unchanged */
  CHECK(ag_tensor_get_requires_grad(x) == 1);
  CHECK_STR(ag_tensor_grad_fn_name(x), "AccumulateGrad");
  CHECK_STATUS(ag_backward(y, NULL, NULL), AG_ERR_GRAPH);
  /* off twice: previous is 0 */
  prev = -7;
  CHECK_OK(ag_grad_mode_set(0, &prev));
  CHECK(prev == 0);
  prev = -7;
  REQUIRE_OK(ag_grad_mode_set(1, &prev));
  CHECK(prev == 0);
  CHECK(ag_grad_mode_enabled() == 1);
  CHECK_OK(ag_op_mul(&y2, x, x));
  CHECK(ag_tensor_get_requires_grad(y2) == 1);
  CHECK_STR(ag_tensor_grad_fn_name(y2), "MulBackward");
  REL(y);
  REL(y2);
  REL(x);
  ag_context_release(ctx);
}

/* Backward sets grad mode for its pass and restores the caller's mode after. */
static void test_backward_restores_grad_mode(void) {
  ag_context *ctx;
  double xv[1] = {2};
  ag_tensor *x, *y = NULL, *y2 = NULL, *g;
  ag_backward_options o = AG_BACKWARD_OPTIONS_INIT;
  REQUIRE(NEW_CTX_WITH_LEAF(&ctx, &x, AG_F64, s1, 1, xv));
  REQUIRE_OK(ag_op_mul(&y, x, x));
  REQUIRE_OK(ag_op_mul(&y2, x, x));
  /* off, then a plain backward of a graph recorded before */
  REQUIRE_OK(ag_grad_mode_set(0, NULL));
  CHECK_OK(ag_backward(y, NULL, NULL));
  CHECK(ag_grad_mode_enabled() == 0);
  /* create_graph records the pass even with the caller's mode off */
  REQUIRE_OK(ag_tensor_set_grad(x, NULL));
  o.create_graph = 1;
  CHECK_OK(ag_backward(y2, NULL, &o));
  CHECK(ag_grad_mode_enabled() == 0);
  g = GRAD(x);
  CHECK(ag_tensor_get_requires_grad(g) == 1);
  CHECK_CLOSE(ITEM(g), 4.0, 0);
  REL(g);
  REQUIRE_OK(ag_tensor_set_grad(x, NULL)); /* the next pass starts afresh */
  /* on: a plain backward leaves it on */
  REQUIRE_OK(ag_grad_mode_set(1, NULL));
  CHECK_OK(ag_backward(y2, NULL, NULL)); /* retained by create_graph */
  CHECK(ag_grad_mode_enabled() == 1);
  REL(y);
  REL(y2);
  REL(x);
  ag_context_release(ctx);
}

typedef struct {
  ag_tensor *x;
  int32_t enabled_at_start;
  int32_t set_prev;
  int requires_grad_of_output;
  int op_status;
} mode_thread;

static void *thread_check_mode(void *arg) {
  mode_thread *m = (mode_thread *)arg;
  ag_tensor *y = NULL;
  m->enabled_at_start = ag_grad_mode_enabled();
  m->op_status = ag_op_mul(&y, m->x, m->x);
  m->requires_grad_of_output = ag_tensor_get_requires_grad(y);
  ag_tensor_release(y);
  /* turn it off here; the main thread must not see that */
  m->set_prev = -7;
  ag_grad_mode_set(0, &m->set_prev);
  return NULL;
}

/* Runs thread_check_mode on x in a new thread, into a zeroed *m; 0 (recorded)
 * if the thread could not be started or joined. */
static int run_mode_thread(mode_thread *m, ag_tensor *x) {
  pthread_t th;
  memset(m, 0, sizeof *m);
  m->x = x;
  if (!CHECK(pthread_create(&th, NULL, thread_check_mode, m) == 0))
    return 0;
  return CHECK(pthread_join(th, NULL) == 0);
}

static void test_grad_mode_per_thread(void) {
  ag_context *ctx;
  double xv[1] = {2};
  ag_tensor *x;
  mode_thread m;
  REQUIRE(NEW_CTX_WITH_LEAF(&ctx, &x, AG_F64, s1, 1, xv));
  /* main off: a new thread starts with it on */
  REQUIRE_OK(ag_grad_mode_set(0, NULL));
  REQUIRE(run_mode_thread(&m, x));
  CHECK(m.enabled_at_start == 1);
  CHECK(m.op_status == AG_OK);
  CHECK(m.requires_grad_of_output == 1);
  CHECK(m.set_prev == 1);
  CHECK(ag_grad_mode_enabled() == 0);
  /* main on: a thread turning it off does not affect main */
  REQUIRE_OK(ag_grad_mode_set(1, NULL));
  REQUIRE(run_mode_thread(&m, x));
  CHECK(m.enabled_at_start == 1);
  CHECK(ag_grad_mode_enabled() == 1);
  REL(x);
  ag_context_release(ctx);
}

/* ---- graph introspection --------------------------------------------------------- */

static int ends_with(const char *s, const char *suffix) {
  size_t n, m;
  if (!s)
    return 0;
  n = strlen(s);
  m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

static void test_grad_fn_names(void) {
  ag_context *ctx = NEW_CTX();
  int64_t s23[2] = {2, 3}, s13[2] = {1, 3};
  double xv[3] = {0.5, 1, 2};
  ag_tensor *x, *p, *o = NULL;
  REQUIRE(ctx);
  x = LEAF(ctx, AG_F64, s3, 1, xv);
  p = MAKE(ctx, AG_F64, s3, 1, xv);
  REQUIRE(x && p);
  CHECK_STR(ag_tensor_grad_fn_name(x), "AccumulateGrad");
  CHECK(ag_tensor_grad_fn_name(p) == NULL);
  REQUIRE_OK(ag_op_mul(&o, x, p));
  CHECK_STR(ag_tensor_grad_fn_name(o), "MulBackward");
  REL(o);
  o = NULL;
  REQUIRE_OK(ag_op_add(&o, p, x));
  CHECK_STR(ag_tensor_grad_fn_name(o), "AddBackward");
  REL(o);
  o = NULL;
  REQUIRE_OK(ag_op_tanh(&o, x));
  CHECK_STR(ag_tensor_grad_fn_name(o), "TanhBackward");
  REL(o);
  /* an op on plain tensors records nothing */
  o = NULL;
  REQUIRE_OK(ag_op_mul(&o, p, p));
  CHECK(ag_tensor_grad_fn_name(o) == NULL);
  REL(o);
#define NAMED(call)                                                      \
  do {                                                                   \
    o = NULL;                                                            \
    if (CHECK_OK(call)) {                                                \
      const char *nm = ag_tensor_grad_fn_name(o);                        \
      if (!CHECK(ends_with(nm, "Backward")))                             \
        printf("#   %s: grad_fn name %s\n", #call, nm ? nm : "NULL");    \
      CHECK(ag_tensor_is_leaf(o) == 0);                                  \
      CHECK(ag_tensor_get_requires_grad(o) == 1);                        \
      REL(o);                                                            \
    }                                                                    \
  } while (0)
  NAMED(ag_op_neg(&o, x));
  NAMED(ag_op_exp(&o, x));
  NAMED(ag_op_log(&o, x));
  NAMED(ag_op_pow_scalar(&o, x, 3.0));
  NAMED(ag_op_sub(&o, x, p));
  NAMED(ag_op_div(&o, p, x));
  NAMED(ag_op_sum(&o, x));
  NAMED(ag_op_mean(&o, x));
  NAMED(ag_op_expand(&o, x, s23, 2));
  NAMED(ag_op_cast(&o, x, AG_F32));
#undef NAMED
  {
    ag_tensor *e = NULL;
    REQUIRE_OK(ag_op_expand(&e, x, s23, 2));
    o = NULL;
    if (CHECK_OK(ag_op_sum_to_size(&o, e, s13, 2))) {
      CHECK(ends_with(ag_tensor_grad_fn_name(o), "Backward"));
      REL(o);
    }
    REL(e);
  }
  REL(x);
  REL(p);
  ag_context_release(ctx);
}

static void test_is_leaf(void) {
  ag_context *ctx = NEW_CTX();
  double xv[1] = {2};
  ag_tensor *x, *p, *y = NULL, *q = NULL, *g;
  REQUIRE(ctx);
  x = LEAF(ctx, AG_F64, s1, 1, xv);
  p = MAKE(ctx, AG_F64, s1, 1, xv);
  REQUIRE(x && p);
  CHECK(ag_tensor_is_leaf(x) == 1);
  CHECK(ag_tensor_is_leaf(p) == 1);
  CHECK(ag_tensor_get_requires_grad(x) == 1);
  CHECK(ag_tensor_get_requires_grad(p) == 0);
  REQUIRE_OK(ag_op_mul(&y, x, p));
  CHECK(ag_tensor_is_leaf(y) == 0);
  CHECK(ag_tensor_get_requires_grad(y) == 1);
  REQUIRE_OK(ag_op_mul(&q, p, p)); /* nothing recorded: still a leaf */
  CHECK(ag_tensor_is_leaf(q) == 1);
  CHECK(ag_tensor_get_requires_grad(q) == 0);
  /* a non-leaf has no .grad (no retain_grad) */
  REQUIRE_OK(ag_backward(y, NULL, NULL));
  CHECK_NO_GRAD(y);
  /* the gradient of x (no create_graph) is a plain leaf */
  g = GRAD(x);
  REQUIRE(g != NULL);
  CHECK(ag_tensor_is_leaf(g) == 1);
  CHECK(ag_tensor_get_requires_grad(g) == 0);
  CHECK_CLOSE(ITEM(g), 2.0, 0);
  REL(g);
  /* requires_grad can be turned off again on a leaf */
  CHECK_OK(ag_tensor_requires_grad(x, 0));
  CHECK(ag_tensor_get_requires_grad(x) == 0);
  CHECK(ag_tensor_grad_fn_name(x) == NULL);
  {
    ag_tensor *z = NULL;
    CHECK_OK(ag_op_mul(&z, x, x));
    CHECK(ag_tensor_get_requires_grad(z) == 0);
    REL(z);
  }
  REL(x);
  REL(p);
  REL(y);
  REL(q);
  ag_context_release(ctx);
}

static void test_detach_non_leaf(ag_dtype dt) {
  ag_context *ctx = NEW_CTX();
  double xv[3] = {1, 2, 3}, want[3] = {2, 4, 6};
  ag_tensor *x, *two, *y = NULL, *d = NULL, *z = NULL, *s = NULL;
  REQUIRE(ctx);
  x = LEAF(ctx, dt, s3, 1, xv);
  two = SCALAR(ctx, dt, 2.0);
  REQUIRE(x && two);
  REQUIRE_OK(ag_op_mul(&y, x, two));
  REQUIRE_OK(ag_tensor_detach(&d, y));
  CHECK(ag_tensor_is_leaf(d) == 1);
  CHECK(ag_tensor_get_requires_grad(d) == 0);
  CHECK(ag_tensor_grad_fn_name(d) == NULL);
  CHECK_VALUES(d, want, 3, 0);
  /* the detached tensor is cut off: using it with x gives only x's own path */
  REQUIRE_OK(ag_op_mul(&z, d, x));
  REQUIRE_OK(ag_op_sum(&s, z));
  REQUIRE_OK(ag_backward(s, NULL, NULL));
  CHECK_GRAD_VALUES(x, want, 3, h_tol(dt)); /* d/dx sum(d * x) = d, with d constant */
  /* a detached tensor is a leaf: it may be marked */
  CHECK_OK(ag_tensor_requires_grad(d, 1));
  CHECK_STR(ag_tensor_grad_fn_name(d), "AccumulateGrad");
  REL(s);
  REL(z);
  REL(d);
  REL(y);
  REL(two);
  REL(x);
  ag_context_release(ctx);
}

/* ---- higher order ---------------------------------------------------------------- */

/* d2/dx2 of x^3 at x is 6x; first derivative 3x^2. With pow_scalar and with mul. */
static void test_create_graph(ag_dtype dt) {
  static const double points[2] = {2.0, 3.0};
  int k, variant;
  for (variant = 0; variant < 2; variant++) {
    for (k = 0; k < 2; k++) {
      ag_context *ctx = NEW_CTX();
      double v = points[k];
      ag_tensor *x, *y = NULL, *xx = NULL, *g, *g2;
      ag_backward_options o = AG_BACKWARD_OPTIONS_INIT;
      if (!ctx)
        return;
      x = LEAF(ctx, dt, s1, 1, &v);
      REQUIRE(x);
      if (variant == 0) {
        REQUIRE_OK(ag_op_pow_scalar(&y, x, 3.0));
      } else {
        REQUIRE_OK(ag_op_mul(&xx, x, x));
        REQUIRE_OK(ag_op_mul(&y, xx, x));
      }
      o.create_graph = 1;
      REQUIRE_OK(ag_backward(y, NULL, &o));
      g = GRAD(x);
      REQUIRE(g != NULL);
      CHECK_CLOSE(ITEM(g), 3 * v * v, h_tol(dt) * 10);
      CHECK(ag_tensor_get_requires_grad(g) == 1); /* the pass was recorded */
      CHECK(ag_tensor_is_leaf(g) == 0);
      REQUIRE_OK(ag_tensor_set_grad(x, NULL));
      REQUIRE_OK(ag_backward(g, NULL, NULL));
      g2 = GRAD(x);
      REQUIRE(g2 != NULL);
      CHECK_CLOSE(ITEM(g2), 6 * v, h_tol(dt) * 10);
      REL(g2);
      REL(g);
      REL(y);
      REL(xx);
      REL(x);
      ag_context_release(ctx);
    }
  }
}

/* create_graph implies retain_graph: the same root can be walked again. */
static void test_create_graph_implies_retain(ag_dtype dt) {
  ag_context *ctx;
  double v = 2.0;
  ag_tensor *x, *xx = NULL, *y = NULL, *g;
  ag_backward_options o = AG_BACKWARD_OPTIONS_INIT;
  REQUIRE(NEW_CTX_WITH_LEAF(&ctx, &x, dt, s1, 1, &v));
  REQUIRE_OK(ag_op_mul(&xx, x, x));
  REQUIRE_OK(ag_op_mul(&y, xx, x));
  o.create_graph = 1;
  REQUIRE_OK(ag_backward(y, NULL, &o));
  REQUIRE_OK(ag_tensor_set_grad(x, NULL));
  CHECK_OK(ag_backward(y, NULL, NULL));
  g = GRAD(x);
  CHECK_CLOSE(ITEM(g), 12.0, h_tol(dt) * 10);
  CHECK(ag_tensor_get_requires_grad(g) == 0); /* that pass was not recorded */
  REL(g);
  REL(y);
  REL(xx);
  REL(x);
  ag_context_release(ctx);
}

int main(int argc, char **argv) {
  h_init(argc, argv);
  RUN_F64_F32(test_grad_mode_off);
  RUN_F64_F32(test_detach_non_leaf);
  RUN_F64_F32(test_create_graph);
  RUN_F64_F32(test_create_graph_implies_retain);
  RUN(test_grad_mode_per_thread);
  RUN(test_backward_restores_grad_mode);
  RUN(test_grad_fn_names);
  RUN(test_is_leaf);
  return h_finish();
}
