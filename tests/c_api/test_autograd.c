/*
 * tests/c_api/test_autograd.c - gradients through the C API: the seed
 * examples in f64 and f32, accumulation, snapshots, version checks, grad mode,
 * graph introspection, higher order, broadcasting, f32 against f64, and
 * ownership in every release order (run under ASan and valgrind for leaks).
 */
#include "harness.h"

#include <pthread.h>

static const int64_t s1[1] = {1};
static const int64_t s3[1] = {3};

/* ---- the seed examples -------------------------------------------------------- */

/* x = [3], y = x*x, dy/dx = 6. */
static void test_seed_square(ag_dtype dt) {
  ag_context *ctx = NEW_CTX();
  double xv[1] = {3.0};
  ag_tensor *x, *y = NULL, *g;
  REQUIRE(ctx);
  x = LEAF(ctx, dt, s1, 1, xv);
  REQUIRE(x);
  REQUIRE_OK(ag_op_mul(&y, x, x));
  CHECK(ag_tensor_dtype(y) == dt);
  CHECK_SHAPE(y, s1, 1);
  CHECK_CLOSE(ITEM(y), 9.0, 0);
  REQUIRE_OK(ag_backward(y, NULL, NULL));
  g = GRAD(x);
  REQUIRE(g != NULL);
  CHECK(ag_tensor_dtype(g) == dt);
  CHECK_SHAPE(g, s1, 1);
  CHECK_CLOSE(ITEM(g), 6.0, 0);
  REL(g);
  REL(y);
  REL(x);
  ag_context_release(ctx);
}

/* Q = 3a^3 - b^2 with a = [2,3], b = [6,4]; backward with ones gives
 * dQ/da = 9a^2 = [36,81], dQ/db = -2b = [-12,-8]. */
static void test_seed_Q(ag_dtype dt) {
  ag_context *ctx = NEW_CTX();
  int64_t s2[1] = {2};
  double av[2] = {2, 3}, bv[2] = {6, 4};
  double qwant[2] = {3 * 8 - 36, 3 * 27 - 16}, gawant[2] = {36, 81}, gbwant[2] = {-12, -8};
  ag_tensor *a, *b, *three, *a3 = NULL, *t = NULL, *b2 = NULL, *q = NULL, *ones = NULL, *ga, *gb;
  REQUIRE(ctx);
  a = LEAF(ctx, dt, s2, 1, av);
  b = LEAF(ctx, dt, s2, 1, bv);
  three = SCALAR(ctx, dt, 3.0);
  REQUIRE(a && b && three);
  REQUIRE_OK(ag_op_pow_scalar(&a3, a, 3.0));
  REQUIRE_OK(ag_op_mul(&t, three, a3));
  REQUIRE_OK(ag_op_pow_scalar(&b2, b, 2.0));
  REQUIRE_OK(ag_op_sub(&q, t, b2));
  CHECK_VALUES(q, qwant, 2, h_tol(dt) * 100);
  REQUIRE_OK(ag_tensor_ones(&ones, ctx, dt, s2, 1));
  REQUIRE_OK(ag_backward(q, ones, NULL));
  ga = GRAD(a);
  gb = GRAD(b);
  CHECK_VALUES(ga, gawant, 2, h_tol(dt) * 100);
  CHECK_VALUES(gb, gbwant, 2, h_tol(dt) * 10);
  /* the constant requires no grad and gets none */
  {
    ag_tensor *g3 = GRAD(three);
    CHECK(g3 == NULL);
    REL(g3);
  }
  REL(ga);
  REL(gb);
  REL(ones);
  REL(q);
  REL(b2);
  REL(t);
  REL(a3);
  REL(three);
  REL(a);
  REL(b);
  ag_context_release(ctx);
}

/* out = mean(3 * (x + 2)^2) over x = ones(2,2): out = 27, d out/dx = 4.5 everywhere. */
static void test_seed_mean(ag_dtype dt) {
  ag_context *ctx = NEW_CTX();
  int64_t s22[2] = {2, 2};
  ag_tensor *x = NULL, *two, *three, *y = NULL, *z = NULL, *z3 = NULL, *out = NULL, *g;
  REQUIRE(ctx);
  REQUIRE_OK(ag_tensor_ones(&x, ctx, dt, s22, 2));
  REQUIRE_OK(ag_tensor_requires_grad(x, 1));
  two = SCALAR(ctx, dt, 2.0);
  three = SCALAR(ctx, dt, 3.0);
  REQUIRE(two && three);
  REQUIRE_OK(ag_op_add(&y, x, two));
  REQUIRE_OK(ag_op_mul(&z, y, y));
  REQUIRE_OK(ag_op_mul(&z3, z, three));
  CHECK_ALL(z3, 27.0, 4, 0);
  REQUIRE_OK(ag_op_mean(&out, z3));
  CHECK(ag_tensor_ndim(out) == 0);
  CHECK_CLOSE(ITEM(out), 27.0, h_tol(dt));
  REQUIRE_OK(ag_backward(out, NULL, NULL));
  g = GRAD(x);
  REQUIRE(g != NULL);
  CHECK_SHAPE(g, s22, 2);
  CHECK_ALL(g, 4.5, 4, h_tol(dt));
  REL(g);
  REL(out);
  REL(z3);
  REL(z);
  REL(y);
  REL(three);
  REL(two);
  REL(x);
  ag_context_release(ctx);
}

/* A leaf used twice sums its gradients: y = x*x + x gives 2x + 1. */
static void test_leaf_used_twice(ag_dtype dt) {
  ag_context *ctx = NEW_CTX();
  double xv[3] = {1, 2, -3}, want[3] = {3, 5, -5};
  ag_tensor *x, *xx = NULL, *y = NULL, *s = NULL, *g;
  REQUIRE(ctx);
  x = LEAF(ctx, dt, s3, 1, xv);
  REQUIRE(x);
  REQUIRE_OK(ag_op_mul(&xx, x, x));
  REQUIRE_OK(ag_op_add(&y, xx, x));
  REQUIRE_OK(ag_op_sum(&s, y));
  REQUIRE_OK(ag_backward(s, NULL, NULL));
  g = GRAD(x);
  CHECK_VALUES(g, want, 3, h_tol(dt));
  REL(g);
  REL(s);
  REL(y);
  REL(xx);
  REL(x);
  ag_context_release(ctx);
}

/* Two backward calls (retain_graph) accumulate; set_grad(x, NULL) resets. */
static void test_accumulate_and_reset(ag_dtype dt) {
  ag_context *ctx = NEW_CTX();
  double xv[3] = {1, 2, 3}, once[3] = {2, 4, 6}, twice[3] = {4, 8, 12};
  ag_backward_options o = AG_BACKWARD_OPTIONS_INIT;
  ag_tensor *x, *y = NULL, *s = NULL, *g;
  REQUIRE(ctx);
  x = LEAF(ctx, dt, s3, 1, xv);
  REQUIRE(x);
  REQUIRE_OK(ag_op_mul(&y, x, x));
  REQUIRE_OK(ag_op_sum(&s, y));
  o.retain_graph = 1;
  REQUIRE_OK(ag_backward(s, NULL, &o));
  g = GRAD(x);
  CHECK_VALUES(g, once, 3, 0);
  REL(g);
  REQUIRE_OK(ag_backward(s, NULL, &o));
  g = GRAD(x);
  CHECK_VALUES(g, twice, 3, 0);
  REL(g);
  /* reset */
  REQUIRE_OK(ag_tensor_set_grad(x, NULL));
  g = GRAD(x);
  CHECK(g == NULL);
  REL(g);
  /* the next backward starts afresh (and releases the graph) */
  REQUIRE_OK(ag_backward(s, NULL, NULL));
  g = GRAD(x);
  CHECK_VALUES(g, once, 3, 0);
  REL(g);
  REL(s);
  REL(y);
  REL(x);
  ag_context_release(ctx);
}

/* A gradient handle the caller holds is a snapshot. */
static void test_grad_snapshot(ag_dtype dt) {
  ag_context *ctx = NEW_CTX();
  double xv[3] = {1, 2, 3}, once[3] = {2, 4, 6}, twice[3] = {4, 8, 12};
  ag_backward_options o = AG_BACKWARD_OPTIONS_INIT;
  ag_tensor *x, *y = NULL, *s = NULL, *g1, *g2;
  REQUIRE(ctx);
  x = LEAF(ctx, dt, s3, 1, xv);
  REQUIRE(x);
  REQUIRE_OK(ag_op_mul(&y, x, x));
  REQUIRE_OK(ag_op_sum(&s, y));
  o.retain_graph = 1;
  REQUIRE_OK(ag_backward(s, NULL, &o));
  g1 = GRAD(x);
  REQUIRE(g1 != NULL);
  CHECK_VALUES(g1, once, 3, 0);
  REQUIRE_OK(ag_backward(s, NULL, &o));
  CHECK_VALUES(g1, once, 3, 0); /* unchanged under the caller */
  g2 = GRAD(x);
  CHECK_VALUES(g2, twice, 3, 0);
  /* resetting the grad leaves held handles alone too */
  REQUIRE_OK(ag_tensor_set_grad(x, NULL));
  CHECK_VALUES(g2, twice, 3, 0);
  REL(g1);
  REL(g2);
  REL(s);
  REL(y);
  REL(x);
  ag_context_release(ctx);
}

/* The handle is the gradient itself, not a copy: writing into it changes the
 * leaf's current gradient (ABI.md 1, "Gradient handles are snapshots"). */
static void test_grad_handle_is_the_gradient(ag_dtype dt) {
  ag_context *ctx = NEW_CTX();
  double xv[3] = {1, 2, 3}, want[3] = {2, 4, 6};
  char zeros[24];
  ag_tensor *x, *y = NULL, *s = NULL, *g, *g2;
  REQUIRE(ctx);
  memset(zeros, 0, sizeof zeros);
  x = LEAF(ctx, dt, s3, 1, xv);
  REQUIRE(x);
  REQUIRE_OK(ag_op_mul(&y, x, x));
  REQUIRE_OK(ag_op_sum(&s, y));
  REQUIRE_OK(ag_backward(s, NULL, NULL));
  g = GRAD(x);
  REQUIRE(g != NULL);
  CHECK_VALUES(g, want, 3, 0);
  REQUIRE_OK(ag_tensor_copy_from(g, zeros, 3 * ag_dtype_size(dt)));
  g2 = GRAD(x);
  CHECK_ALL(g2, 0.0, 3, 0);
  REL(g2);
  REL(g);
  REL(s);
  REL(y);
  REL(x);
  ag_context_release(ctx);
}

/* set_grad(x, G) shares G as the gradient; a later backward accumulates into
 * a new buffer, so G itself stays as it was. */
static void test_set_grad_then_accumulate(ag_dtype dt) {
  ag_context *ctx = NEW_CTX();
  double xv[3] = {1, 2, 3}, want[3] = {12, 14, 16};
  ag_tensor *x, *G = NULL, *y = NULL, *s = NULL, *g;
  REQUIRE(ctx);
  x = LEAF(ctx, dt, s3, 1, xv);
  REQUIRE(x);
  REQUIRE_OK(ag_tensor_full(&G, ctx, dt, s3, 1, 10.0));
  REQUIRE_OK(ag_tensor_set_grad(x, G));
  g = GRAD(x);
  CHECK_ALL(g, 10.0, 3, 0);
  REL(g);
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

/* ---- version counter checks ----------------------------------------------------- */

static int h_contains_int(const char *msg, int64_t v) {
  char num[32];
  snprintf(num, sizeof num, "%lld", (long long)v);
  return msg && strstr(msg, num) != NULL;
}

/* x saved by y = x*x, overwritten, then backpropagated: AG_ERR_VERSION naming
 * MulBackward and both versions; nothing accumulated. */
static void test_version_error_mul(ag_dtype dt) {
  ag_context *ctx = NEW_CTX();
  double xv[3] = {1, 2, 3}, nv[3] = {4, 5, 6};
  ag_tensor *x, *y = NULL, *s = NULL, *g;
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
  CHECK(h_contains_int(ag_last_error_message(), v_saved));
  CHECK(h_contains_int(ag_last_error_message(), v_now));
  g = GRAD(x);
  CHECK(g == NULL);
  REL(g);
  REL(s);
  REL(y);
  REL(x);
  ag_context_release(ctx);
}

/* exp and tanh save their output; overwriting it breaks their backward. */
static void test_version_error_saved_output(ag_dtype dt) {
  ag_context *ctx = NEW_CTX();
  double xv[3] = {0.1, 0.2, 0.3};
  char zeros[24];
  int which;
  REQUIRE(ctx);
  memset(zeros, 0, sizeof zeros);
  for (which = 0; which < 2; which++) {
    ag_tensor *x, *y = NULL, *s = NULL, *g;
    ag_status st;
    x = LEAF(ctx, dt, s3, 1, xv);
    if (!x)
      break;
    st = which == 0 ? ag_op_exp(&y, x) : ag_op_tanh(&y, x);
    if (CHECK_OK(st) && CHECK_OK(ag_op_sum(&s, y)) &&
        CHECK_OK(ag_tensor_copy_from(y, zeros, 3 * ag_dtype_size(dt)))) {
      CHECK_ERR(ag_backward(s, NULL, NULL), AG_ERR_VERSION, "ag_backward");
      CHECK_MSG_HAS(which == 0 ? "ExpBackward" : "TanhBackward");
      g = GRAD(x);
      CHECK(g == NULL);
      REL(g);
    }
    REL(s);
    REL(y);
    REL(x);
  }
  ag_context_release(ctx);
}

/* A write through a detached alias bumps the shared counter: same failure. */
static void test_version_error_via_detach(ag_dtype dt) {
  ag_context *ctx = NEW_CTX();
  double xv[3] = {1, 2, 3};
  char zeros[24];
  ag_tensor *x, *d = NULL, *y = NULL, *s = NULL, *g;
  REQUIRE(ctx);
  memset(zeros, 0, sizeof zeros);
  x = LEAF(ctx, dt, s3, 1, xv);
  REQUIRE(x);
  REQUIRE_OK(ag_op_mul(&y, x, x));
  REQUIRE_OK(ag_op_sum(&s, y));
  REQUIRE_OK(ag_tensor_detach(&d, x));
  REQUIRE_OK(ag_tensor_copy_from(d, zeros, 3 * ag_dtype_size(dt)));
  CHECK_ERR(ag_backward(s, NULL, NULL), AG_ERR_VERSION, "ag_backward");
  CHECK_MSG_HAS("MulBackward");
  g = GRAD(x);
  CHECK(g == NULL);
  REL(g);
  REL(d);
  REL(s);
  REL(y);
  REL(x);
  ag_context_release(ctx);
}

/* A tensor that no node saved may be overwritten freely: y = x + c saves nothing. */
static void test_unsaved_tensor_may_change(ag_dtype dt) {
  ag_context *ctx = NEW_CTX();
  double xv[3] = {1, 2, 3};
  char zeros[24];
  ag_tensor *x, *c, *y = NULL, *s = NULL, *g;
  REQUIRE(ctx);
  memset(zeros, 0, sizeof zeros);
  x = LEAF(ctx, dt, s3, 1, xv);
  c = MAKE(ctx, dt, s3, 1, xv);
  REQUIRE(x && c);
  REQUIRE_OK(ag_op_add(&y, x, c));
  REQUIRE_OK(ag_op_sum(&s, y));
  REQUIRE_OK(ag_tensor_copy_from(c, zeros, 3 * ag_dtype_size(dt)));
  CHECK_OK(ag_backward(s, NULL, NULL));
  g = GRAD(x);
  CHECK_ALL(g, 1.0, 3, 0);
  REL(g);
  REL(s);
  REL(y);
  REL(c);
  REL(x);
  ag_context_release(ctx);
}

/* ---- grad mode --------------------------------------------------------------- */

static void test_grad_mode_off(ag_dtype dt) {
  ag_context *ctx = NEW_CTX();
  double xv[1] = {3};
  int32_t prev = -7;
  ag_tensor *x, *y = NULL, *y2 = NULL;
  REQUIRE(ctx);
  x = LEAF(ctx, dt, s1, 1, xv);
  REQUIRE(x);
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
  ag_context *ctx = NEW_CTX();
  double xv[1] = {2};
  ag_tensor *x, *y = NULL, *y2 = NULL, *g;
  ag_backward_options o = AG_BACKWARD_OPTIONS_INIT;
  REQUIRE(ctx);
  x = LEAF(ctx, AG_F64, s1, 1, xv);
  REQUIRE(x);
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

static void test_grad_mode_per_thread(void) {
  ag_context *ctx = NEW_CTX();
  double xv[1] = {2};
  ag_tensor *x;
  mode_thread m;
  pthread_t th;
  REQUIRE(ctx);
  x = LEAF(ctx, AG_F64, s1, 1, xv);
  REQUIRE(x);
  /* main off: a new thread starts with it on */
  REQUIRE_OK(ag_grad_mode_set(0, NULL));
  memset(&m, 0, sizeof m);
  m.x = x;
  REQUIRE(pthread_create(&th, NULL, thread_check_mode, &m) == 0);
  REQUIRE(pthread_join(th, NULL) == 0);
  CHECK(m.enabled_at_start == 1);
  CHECK(m.op_status == AG_OK);
  CHECK(m.requires_grad_of_output == 1);
  CHECK(m.set_prev == 1);
  CHECK(ag_grad_mode_enabled() == 0);
  /* main on: a thread turning it off does not affect main */
  REQUIRE_OK(ag_grad_mode_set(1, NULL));
  memset(&m, 0, sizeof m);
  m.x = x;
  REQUIRE(pthread_create(&th, NULL, thread_check_mode, &m) == 0);
  REQUIRE(pthread_join(th, NULL) == 0);
  CHECK(m.enabled_at_start == 1);
  CHECK(ag_grad_mode_enabled() == 1);
  REL(x);
  ag_context_release(ctx);
}

/* ---- graph introspection ------------------------------------------------------- */

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
  g = GRAD(y);
  CHECK(g == NULL);
  REL(g);
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
  ag_tensor *x, *two, *y = NULL, *d = NULL, *z = NULL, *s = NULL, *g;
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
  g = GRAD(x);
  CHECK_VALUES(g, want, 3, h_tol(dt)); /* d/dx sum(d * x) = d, with d constant */
  REL(g);
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

/* ---- higher order ------------------------------------------------------------- */

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
  ag_context *ctx = NEW_CTX();
  double v = 2.0;
  ag_tensor *x, *xx = NULL, *y = NULL, *g;
  ag_backward_options o = AG_BACKWARD_OPTIONS_INIT;
  REQUIRE(ctx);
  x = LEAF(ctx, dt, s1, 1, &v);
  REQUIRE(x);
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

/* ---- broadcasting gradients -------------------------------------------------------- */

/* a (2,3) + b (3) with grad_root ones: a.grad = ones, b.grad = [2,2,2]. */
static void test_broadcast_add_grad(ag_dtype dt) {
  ag_context *ctx = NEW_CTX();
  int64_t s23[2] = {2, 3};
  double av[6] = {1, 2, 3, 4, 5, 6}, bv[3] = {10, 20, 30};
  ag_tensor *a, *b, *y = NULL, *ones = NULL, *ga, *gb;
  REQUIRE(ctx);
  a = LEAF(ctx, dt, s23, 2, av);
  b = LEAF(ctx, dt, s3, 1, bv);
  REQUIRE(a && b);
  REQUIRE_OK(ag_op_add(&y, a, b));
  CHECK_SHAPE(y, s23, 2);
  REQUIRE_OK(ag_tensor_ones(&ones, ctx, dt, s23, 2));
  REQUIRE_OK(ag_backward(y, ones, NULL));
  ga = GRAD(a);
  gb = GRAD(b);
  CHECK_SHAPE(ga, s23, 2);
  CHECK_ALL(ga, 1.0, 6, 0);
  CHECK_SHAPE(gb, s3, 1);
  CHECK_ALL(gb, 2.0, 3, 0);
  REL(ga);
  REL(gb);
  REL(ones);
  REL(y);
  REL(a);
  REL(b);
  ag_context_release(ctx);
}

/* a (2,1) * b (1,3) with grad_root G (2,3):
 * a.grad[i] = sum_j G[i][j] b[j], b.grad[j] = sum_i G[i][j] a[i]. */
static void test_broadcast_mul_grad(ag_dtype dt) {
  ag_context *ctx = NEW_CTX();
  int64_t s21[2] = {2, 1}, s13[2] = {1, 3}, s23[2] = {2, 3};
  double av[2] = {1, 2}, bv[3] = {3, 4, 5}, Gv[6] = {1, 2, 3, 4, 5, 6};
  double ywant[6] = {3, 4, 5, 6, 8, 10}, gawant[2] = {26, 62}, gbwant[3] = {9, 12, 15};
  ag_tensor *a, *b, *G, *y = NULL, *ga, *gb;
  REQUIRE(ctx);
  a = LEAF(ctx, dt, s21, 2, av);
  b = LEAF(ctx, dt, s13, 2, bv);
  G = MAKE(ctx, dt, s23, 2, Gv);
  REQUIRE(a && b && G);
  REQUIRE_OK(ag_op_mul(&y, a, b));
  CHECK_SHAPE(y, s23, 2);
  CHECK_VALUES(y, ywant, 6, 0);
  REQUIRE_OK(ag_backward(y, G, NULL));
  ga = GRAD(a);
  gb = GRAD(b);
  CHECK_SHAPE(ga, s21, 2);
  CHECK_VALUES(ga, gawant, 2, 0);
  CHECK_SHAPE(gb, s13, 2);
  CHECK_VALUES(gb, gbwant, 3, 0);
  REL(ga);
  REL(gb);
  REL(y);
  REL(G);
  REL(a);
  REL(b);
  ag_context_release(ctx);
}

/* A 0-dim leaf broadcast against (2,3): its gradient is the 0-dim sum. */
static void test_scalar_broadcast_grad(ag_dtype dt) {
  ag_context *ctx = NEW_CTX();
  int64_t s23[2] = {2, 3};
  double av[6] = {1, 2, 3, 4, 5, 6};
  double sv = 0.5;
  ag_tensor *a, *s, *y = NULL, *t = NULL, *gs, *ga;
  REQUIRE(ctx);
  a = LEAF(ctx, dt, s23, 2, av);
  s = LEAF(ctx, dt, NULL, 0, &sv);
  REQUIRE(a && s);
  REQUIRE_OK(ag_op_div(&y, a, s)); /* y = a / s */
  REQUIRE_OK(ag_op_sum(&t, y));
  CHECK_CLOSE(ITEM(t), 42.0, h_tol(dt) * 10);
  REQUIRE_OK(ag_backward(t, NULL, NULL));
  gs = GRAD(s);
  ga = GRAD(a);
  REQUIRE(gs != NULL && ga != NULL);
  CHECK(ag_tensor_ndim(gs) == 0);
  CHECK_CLOSE(ITEM(gs), -21.0 / (0.5 * 0.5), h_tol(dt) * 100); /* -sum(a)/s^2 = -84 */
  CHECK_ALL(ga, 2.0, 6, h_tol(dt));
  REL(gs);
  REL(ga);
  REL(t);
  REL(y);
  REL(s);
  REL(a);
  ag_context_release(ctx);
}

/* expand and sum_to_size are each other's gradients. */
static void test_expand_sum_to_size_grad(ag_dtype dt) {
  ag_context *ctx = NEW_CTX();
  int64_t s13[2] = {1, 3}, s23[2] = {2, 3}, s423[3] = {4, 2, 3};
  double xv[3] = {1, 2, 3}, wv[6] = {1, 2, 3, 4, 5, 6};
  ag_tensor *x, *w, *e = NULL, *m = NULL, *s = NULL, *g;
  ag_tensor *z, *r = NULL, *t = NULL, *gz;
  REQUIRE(ctx);
  /* sum(expand(x, (2,3)) * W) : dx = column sums of W = [5,7,9] */
  x = LEAF(ctx, dt, s13, 2, xv);
  w = MAKE(ctx, dt, s23, 2, wv);
  REQUIRE(x && w);
  REQUIRE_OK(ag_op_expand(&e, x, s23, 2));
  REQUIRE_OK(ag_op_mul(&m, e, w));
  REQUIRE_OK(ag_op_sum(&s, m));
  REQUIRE_OK(ag_backward(s, NULL, NULL));
  g = GRAD(x);
  {
    double want[3] = {5, 7, 9};
    CHECK_SHAPE(g, s13, 2);
    CHECK_VALUES(g, want, 3, 0);
  }
  REL(g);
  /* sum(sum_to_size(Z, (1,3)) * x2) with Z (4,2,3) -> dZ = broadcast of [1,2,3] */
  z = LEAF(ctx, dt, s423, 3, NULL);
  REQUIRE(z);
  REQUIRE_OK(ag_op_sum_to_size(&r, z, s13, 2));
  CHECK_SHAPE(r, s13, 2);
  REQUIRE_OK(ag_op_mul(&t, r, x));
  REL(s);
  s = NULL;
  REQUIRE_OK(ag_op_sum(&s, t));
  REQUIRE_OK(ag_backward(s, NULL, NULL));
  gz = GRAD(z);
  {
    double want[24];
    int i;
    for (i = 0; i < 24; i++)
      want[i] = xv[i % 3];
    CHECK_SHAPE(gz, s423, 3);
    CHECK_VALUES(gz, want, 24, 0);
  }
  REL(gz);
  REL(t);
  REL(r);
  REL(z);
  REL(s);
  REL(m);
  REL(e);
  REL(w);
  REL(x);
  ag_context_release(ctx);
}

/* cast is differentiable between f32 and f64: the gradient comes back in the leaf's dtype. */
static void test_cast_grad(void) {
  ag_context *ctx = NEW_CTX();
  double xv[3] = {1.5, -2, 0.25};
  ag_tensor *x, *c = NULL, *y = NULL, *s = NULL, *g;
  ag_tensor *x2, *c2 = NULL, *y2 = NULL, *s2 = NULL, *g2;
  double want[3] = {3, -4, 0.5};
  REQUIRE(ctx);
  x = LEAF(ctx, AG_F32, s3, 1, xv);
  REQUIRE(x);
  REQUIRE_OK(ag_op_cast(&c, x, AG_F64));
  CHECK(ag_tensor_dtype(c) == AG_F64);
  REQUIRE_OK(ag_op_mul(&y, c, c));
  REQUIRE_OK(ag_op_sum(&s, y));
  CHECK(ag_tensor_dtype(s) == AG_F64);
  REQUIRE_OK(ag_backward(s, NULL, NULL));
  g = GRAD(x);
  REQUIRE(g != NULL);
  CHECK(ag_tensor_dtype(g) == AG_F32);
  CHECK_VALUES(g, want, 3, 0);
  /* and the other way */
  x2 = LEAF(ctx, AG_F64, s3, 1, xv);
  REQUIRE(x2);
  REQUIRE_OK(ag_op_cast(&c2, x2, AG_F32));
  REQUIRE_OK(ag_op_mul(&y2, c2, c2));
  REQUIRE_OK(ag_op_sum(&s2, y2));
  REQUIRE_OK(ag_backward(s2, NULL, NULL));
  g2 = GRAD(x2);
  REQUIRE(g2 != NULL);
  CHECK(ag_tensor_dtype(g2) == AG_F64);
  CHECK_VALUES(g2, want, 3, 0);
  /* a cast to i64 or bool records no graph */
  {
    ag_tensor *i = NULL;
    CHECK_OK(ag_op_cast(&i, x, AG_I64));
    CHECK(ag_tensor_get_requires_grad(i) == 0);
    REL(i);
  }
  REL(g);
  REL(s);
  REL(y);
  REL(c);
  REL(x);
  REL(g2);
  REL(s2);
  REL(y2);
  REL(c2);
  REL(x2);
  ag_context_release(ctx);
}

/* ---- every op: f32 against f64, f64 against finite differences ----------------------- */

typedef struct {
  double out;
  double gx[6];
  double gw[3];
} comp_result;

typedef struct {
  ag_tensor *t[64];
  int n;
} tlist;

static ag_tensor *keep(tlist *l, ag_tensor *t) {
  if (l->n < 64)
    l->t[l->n++] = t;
  return t;
}

static void tlist_release(tlist *l) {
  while (l->n > 0)
    ag_tensor_release(l->t[--l->n]);
}

#define OP(dst, call)           \
  do {                          \
    dst = NULL;                 \
    if (!CHECK_OK(call))        \
      goto done;                \
    keep(&L, dst);              \
  } while (0)

/* out = mean(cast(sum_to_size(((tanh(x*w) / (exp(-x) + 1)) - log(x^2 + 1)) * expand(w), (1,3))))
 *       + sum(t6); x (2,3), w (3). The f32 path casts through f64 and back
 * (exact); the f64 path casts f64 -> f64. Returns 1 on success. */
static int composite(ag_dtype dt, const double *xv, const double *wv, int with_grad,
                     comp_result *r) {
  tlist L;
  int64_t s23[2] = {2, 3}, s13[2] = {1, 3};
  ag_context *ctx = NEW_CTX();
  ag_tensor *x, *w, *one, *t1, *t2, *nx, *t3, *x2, *x2p1, *t4, *t3p1, *t5, *t6, *ew, *t7, *s, *c,
      *c2, *m, *s6, *out;
  int ok = 0;
  L.n = 0;
  if (!ctx)
    return 0;
  x = keep(&L, with_grad ? LEAF(ctx, dt, s23, 2, xv) : MAKE(ctx, dt, s23, 2, xv));
  w = keep(&L, with_grad ? LEAF(ctx, dt, s3, 1, wv) : MAKE(ctx, dt, s3, 1, wv));
  one = keep(&L, SCALAR(ctx, dt, 1.0));
  if (!x || !w || !one)
    goto done;
  OP(t1, ag_op_mul(&t1, x, w));
  OP(t2, ag_op_tanh(&t2, t1));
  OP(nx, ag_op_neg(&nx, x));
  OP(t3, ag_op_exp(&t3, nx));
  OP(x2, ag_op_pow_scalar(&x2, x, 2.0));
  OP(x2p1, ag_op_add(&x2p1, x2, one));
  OP(t4, ag_op_log(&t4, x2p1));
  OP(t3p1, ag_op_add(&t3p1, t3, one));
  OP(t5, ag_op_div(&t5, t2, t3p1));
  OP(t6, ag_op_sub(&t6, t5, t4));
  OP(ew, ag_op_expand(&ew, w, s23, 2));
  OP(t7, ag_op_mul(&t7, t6, ew));
  OP(s, ag_op_sum_to_size(&s, t7, s13, 2));
  if (dt == AG_F32) {
    ag_tensor *up;
    OP(up, ag_op_cast(&up, s, AG_F64));
    OP(c, ag_op_cast(&c, up, AG_F32));
  } else {
    OP(c, ag_op_cast(&c, s, AG_F64));
  }
  c2 = c;
  OP(m, ag_op_mean(&m, c2));
  OP(s6, ag_op_sum(&s6, t6));
  OP(out, ag_op_add(&out, m, s6));
  if (!CHECK(ag_tensor_dtype(out) == dt))
    goto done;
  r->out = ITEM(out);
  if (with_grad) {
    ag_tensor *gx, *gw;
    if (!CHECK_OK(ag_backward(out, NULL, NULL)))
      goto done;
    gx = keep(&L, GRAD(x));
    gw = keep(&L, GRAD(w));
    if (!CHECK(gx && gw))
      goto done;
    if (READ(gx, r->gx, 6) != 6 || READ(gw, r->gw, 3) != 3)
      goto done;
  }
  ok = 1;
done:
  tlist_release(&L);
  ag_context_release(ctx);
  return ok;
}
#undef OP

static void test_every_op_f32_vs_f64(void) {
  /* inputs exactly representable in f32 */
  const double xv[6] = {0.5, -1.25, 2.0, 0.75, -0.5, 1.5};
  const double wv[3] = {0.25, -0.75, 1.125};
  comp_result r64, r32;
  int i;
  memset(&r64, 0, sizeof r64);
  memset(&r32, 0, sizeof r32);
  REQUIRE(composite(AG_F64, xv, wv, 1, &r64));
  REQUIRE(composite(AG_F32, xv, wv, 1, &r32));
  CHECK(isfinite(r64.out));
  CHECK_NEAR(r32.out, r64.out, 1e-5, 1e-6);
  for (i = 0; i < 6; i++)
    CHECK_NEAR(r32.gx[i], r64.gx[i], 1e-5, 1e-6);
  for (i = 0; i < 3; i++)
    CHECK_NEAR(r32.gw[i], r64.gw[i], 1e-5, 1e-6);
}

/* The same function in plain C, as an independent reference. */
static double composite_ref(const double *xv, const double *wv) {
  double t6[6], s[3] = {0, 0, 0}, sum6 = 0;
  int i;
  for (i = 0; i < 6; i++) {
    double x = xv[i], w = wv[i % 3];
    t6[i] = tanh(x * w) / (exp(-x) + 1) - log(x * x + 1);
    s[i % 3] += t6[i] * w;
    sum6 += t6[i];
  }
  return (s[0] + s[1] + s[2]) / 3 + sum6;
}

/* f64 gradients against central differences of the plain-C reference, and
 * the library's forward value against the reference. */
static void test_every_op_f64_vs_finite_differences(void) {
  const double xv[6] = {0.5, -1.25, 2.0, 0.75, -0.5, 1.5};
  const double wv[3] = {0.25, -0.75, 1.125};
  const double h = 1e-6;
  comp_result r;
  double xp[6], xm[6], wp[3], wm[3];
  int i;
  memset(&r, 0, sizeof r);
  REQUIRE(composite(AG_F64, xv, wv, 1, &r));
  CHECK_NEAR(r.out, composite_ref(xv, wv), 1e-12, 1e-13);
  for (i = 0; i < 6; i++) {
    memcpy(xp, xv, sizeof xp);
    memcpy(xm, xv, sizeof xm);
    xp[i] += h;
    xm[i] -= h;
    CHECK_NEAR(r.gx[i], (composite_ref(xp, wv) - composite_ref(xm, wv)) / (2 * h), 1e-6, 1e-8);
  }
  for (i = 0; i < 3; i++) {
    memcpy(wp, wv, sizeof wp);
    memcpy(wm, wv, sizeof wm);
    wp[i] += h;
    wm[i] -= h;
    CHECK_NEAR(r.gw[i], (composite_ref(xv, wp) - composite_ref(xv, wm)) / (2 * h), 1e-6, 1e-8);
  }
  /* the library's forward agrees at a perturbed point too (grad mode off path) */
  {
    comp_result rp;
    memset(&rp, 0, sizeof rp);
    memcpy(xp, xv, sizeof xp);
    xp[2] = 0.125;
    REQUIRE(composite(AG_F64, xp, wv, 0, &rp));
    CHECK_NEAR(rp.out, composite_ref(xp, wv), 1e-12, 1e-13);
  }
}

/* ---- misc backward semantics ----------------------------------------------------------- */

/* A NULL grad_root needs one element, of any ndim. */
static void test_one_element_root_any_ndim(ag_dtype dt) {
  ag_context *ctx = NEW_CTX();
  int64_t s111[3] = {1, 1, 1};
  double xv[1] = {-2};
  ag_tensor *x, *y = NULL, *g;
  REQUIRE(ctx);
  x = LEAF(ctx, dt, s111, 3, xv);
  REQUIRE(x);
  REQUIRE_OK(ag_op_pow_scalar(&y, x, 3.0));
  CHECK_SHAPE(y, s111, 3);
  REQUIRE_OK(ag_backward(y, NULL, NULL));
  g = GRAD(x);
  CHECK_SHAPE(g, s111, 3);
  CHECK_CLOSE(ITEM(g), 12.0, h_tol(dt) * 10);
  REL(g);
  REL(y);
  REL(x);
  ag_context_release(ctx);
}

/* A leaf that requires grad but is not in the graph gets no gradient. */
static void test_unreached_leaf(void) {
  ag_context *ctx = NEW_CTX();
  double xv[1] = {2};
  ag_tensor *x, *z, *y = NULL, *g;
  REQUIRE(ctx);
  x = LEAF(ctx, AG_F64, s1, 1, xv);
  z = LEAF(ctx, AG_F64, s1, 1, xv);
  REQUIRE(x && z);
  REQUIRE_OK(ag_op_exp(&y, x));
  REQUIRE_OK(ag_backward(y, NULL, NULL));
  g = GRAD(z);
  CHECK(g == NULL);
  REL(g);
  g = GRAD(x);
  CHECK_CLOSE(ITEM(g), exp(2.0), 1e-12);
  REL(g);
  REL(y);
  REL(x);
  REL(z);
  ag_context_release(ctx);
}

/* Zero-size tensors go through backward: sum of an empty x gives an empty gradient. */
static void test_zero_size_backward(void) {
  ag_context *ctx = NEW_CTX();
  int64_t s0[2] = {0, 3};
  ag_tensor *x, *s = NULL, *g;
  REQUIRE(ctx);
  x = LEAF(ctx, AG_F64, s0, 2, NULL);
  REQUIRE(x);
  REQUIRE_OK(ag_op_sum(&s, x));
  CHECK_CLOSE(ITEM(s), 0.0, 0);
  CHECK_OK(ag_backward(s, NULL, NULL));
  g = GRAD(x);
  if (CHECK(g != NULL)) {
    CHECK_SHAPE(g, s0, 2);
    CHECK(ag_tensor_numel(g) == 0);
  }
  REL(g);
  REL(s);
  REL(x);
  ag_context_release(ctx);
}

/* ---- ownership: every release order ------------------------------------------------- */

typedef struct {
  ag_context *ctx;
  ag_tensor *x, *w, *h, *y; /* y = sum(exp(x) * w) */
} small_graph;

static int build_small(small_graph *g) {
  double xv[3] = {0, 1, 2}, wv[3] = {1, 2, 3};
  ag_tensor *e = NULL;
  memset(g, 0, sizeof *g);
  g->ctx = NEW_CTX();
  if (!g->ctx)
    return 0;
  g->x = LEAF(g->ctx, AG_F64, s3, 1, xv);
  g->w = MAKE(g->ctx, AG_F64, s3, 1, wv);
  if (!g->x || !g->w)
    return 0;
  if (!CHECK_OK(ag_op_exp(&e, g->x)))
    return 0;
  if (!CHECK_OK(ag_op_mul(&g->h, e, g->w))) {
    ag_tensor_release(e);
    return 0;
  }
  ag_tensor_release(e); /* the graph keeps what it needs */
  if (!CHECK_OK(ag_op_sum(&g->y, g->h)))
    return 0;
  return 1;
}

static int check_small_grad(const ag_tensor *x) {
  double want[3] = {1, 2 * exp(1.0), 3 * exp(2.0)};
  ag_tensor *g = GRAD(x);
  int ok = CHECK_VALUES(g, want, 3, 1e-12);
  ag_tensor_release(g);
  return ok;
}

static void test_release_root_first(void) {
  small_graph g;
  REQUIRE(build_small(&g));
  REQUIRE_OK(ag_backward(g.y, NULL, NULL));
  check_small_grad(g.x);
  REL(g.y);
  REL(g.h);
  REL(g.w);
  REL(g.x);
  ag_context_release(g.ctx);
}

static void test_release_leaves_first(void) {
  small_graph g;
  REQUIRE(build_small(&g));
  REL(g.x);
  REL(g.w);
  REL(g.h);
  REQUIRE_OK(ag_backward(g.y, NULL, NULL)); /* the graph kept them */
  CHECK_CLOSE(ITEM(g.y), 1 + 2 * exp(1.0) + 3 * exp(2.0), 1e-12);
  REL(g.y);
  ag_context_release(g.ctx);
}

static void test_release_context_first(void) {
  small_graph g;
  REQUIRE(build_small(&g));
  ag_context_release(g.ctx);
  REQUIRE_OK(ag_backward(g.y, NULL, NULL));
  check_small_grad(g.x);
  REL(g.h);
  REL(g.x);
  REL(g.y);
  REL(g.w);
}

static void test_release_without_backward(void) {
  small_graph g;
  /* root first */
  REQUIRE(build_small(&g));
  REL(g.y);
  REL(g.h);
  REL(g.x);
  REL(g.w);
  ag_context_release(g.ctx);
  /* leaves and context first */
  REQUIRE(build_small(&g));
  ag_context_release(g.ctx);
  REL(g.x);
  REL(g.w);
  REL(g.h);
  REL(g.y);
}

static void test_grad_outlives_everything(void) {
  small_graph g;
  ag_tensor *gx;
  double want[3] = {1, 2 * exp(1.0), 3 * exp(2.0)};
  REQUIRE(build_small(&g));
  REQUIRE_OK(ag_backward(g.y, NULL, NULL));
  gx = GRAD(g.x);
  REQUIRE(gx != NULL);
  ag_context_release(g.ctx);
  REL(g.x);
  REL(g.y);
  REL(g.h);
  REL(g.w);
  CHECK_VALUES(gx, want, 3, 1e-12);
  {
    /* still usable in ops: its context lives on */
    ag_tensor *e = NULL;
    double neg[3] = {-want[0], -want[1], -want[2]};
    CHECK_OK(ag_op_neg(&e, gx));
    CHECK_VALUES(e, neg, 3, 1e-12);
    REL(e);
  }
  REL(gx);
}

/* create_graph keeps a graph alive through the gradient: release in any order. */
static void test_release_create_graph_orders(void) {
  int order;
  for (order = 0; order < 2; order++) {
    ag_context *ctx = NEW_CTX();
    double xv[1] = {1.5};
    ag_tensor *x, *y = NULL, *g;
    ag_backward_options o = AG_BACKWARD_OPTIONS_INIT;
    REQUIRE(ctx);
    x = LEAF(ctx, AG_F64, s1, 1, xv);
    REQUIRE(x);
    REQUIRE_OK(ag_op_tanh(&y, x));
    o.create_graph = 1;
    REQUIRE_OK(ag_backward(y, NULL, &o));
    g = GRAD(x);
    REQUIRE(g != NULL);
    /* x's gradient refers to the graph that produced it, which refers to x
     * only weakly: no need to clear it before releasing x. */
    if (order == 0) {
      ag_context_release(ctx);
      REL(x);
      REL(y);
      CHECK_CLOSE(ITEM(g), 1 - tanh(1.5) * tanh(1.5), 1e-12);
      REL(g);
    } else {
      REL(g);
      REL(y);
      REL(x);
      ag_context_release(ctx);
    }
  }
}

/* ---- threads ------------------------------------------------------------------------ */

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
  double xv[4] = {1, 1, 1, 1}, cv[4] = {1, 2, 3, 4}, want[4];
  int64_t s4[1] = {4};
  ag_tensor *x, *c, *g;
  pthread_t th[NT];
  bw_thread b[NT];
  int i, started = 0;
  REQUIRE(ctx);
  x = LEAF(ctx, AG_F64, s4, 1, xv);
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
  g = GRAD(x);
  CHECK_VALUES(g, want, 4, 0);
  REL(g);
  REL(x);
  REL(c);
  ag_context_release(ctx);
}

/* A context without worker threads (the configuration TSan runs use)... */
static void test_concurrent_backward_shared_leaf_1thread(void) { concurrent_backward_shared_leaf(1); }
/* ...and one with the default arena. */
static void test_concurrent_backward_shared_leaf_default(void) { concurrent_backward_shared_leaf(0); }

int main(int argc, char **argv) {
  static const ag_dtype dts[2] = {AG_F64, AG_F32};
  int k;
  h_init(argc, argv);
  for (k = 0; k < 2; k++) {
    RUN_DT(test_seed_square, dts[k]);
    RUN_DT(test_seed_Q, dts[k]);
    RUN_DT(test_seed_mean, dts[k]);
    RUN_DT(test_leaf_used_twice, dts[k]);
    RUN_DT(test_accumulate_and_reset, dts[k]);
    RUN_DT(test_grad_snapshot, dts[k]);
    RUN_DT(test_set_grad_then_accumulate, dts[k]);
    RUN_DT(test_grad_handle_is_the_gradient, dts[k]);
    RUN_DT(test_version_error_mul, dts[k]);
    RUN_DT(test_version_error_saved_output, dts[k]);
    RUN_DT(test_version_error_via_detach, dts[k]);
    RUN_DT(test_unsaved_tensor_may_change, dts[k]);
    RUN_DT(test_grad_mode_off, dts[k]);
    RUN_DT(test_detach_non_leaf, dts[k]);
    RUN_DT(test_create_graph, dts[k]);
    RUN_DT(test_create_graph_implies_retain, dts[k]);
    RUN_DT(test_broadcast_add_grad, dts[k]);
    RUN_DT(test_broadcast_mul_grad, dts[k]);
    RUN_DT(test_scalar_broadcast_grad, dts[k]);
    RUN_DT(test_expand_sum_to_size_grad, dts[k]);
    RUN_DT(test_one_element_root_any_ndim, dts[k]);
  }
  RUN(test_grad_mode_per_thread);
  RUN(test_backward_restores_grad_mode);
  RUN(test_grad_fn_names);
  RUN(test_is_leaf);
  RUN(test_cast_grad);
  RUN(test_every_op_f32_vs_f64);
  RUN(test_every_op_f64_vs_finite_differences);
  RUN(test_unreached_leaf);
  RUN(test_zero_size_backward);
  RUN(test_release_root_first);
  RUN(test_release_leaves_first);
  RUN(test_release_context_first);
  RUN(test_release_without_backward);
  RUN(test_grad_outlives_everything);
  RUN(test_release_create_graph_orders);
  RUN(test_concurrent_backward_shared_leaf_1thread);
  RUN(test_concurrent_backward_shared_leaf_default);
  return h_finish();
}
