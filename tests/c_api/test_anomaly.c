/*
 * tests/c_api/test_anomaly.c - anomaly mode and tag scopes: the first NaN or
 * infinity a node produces in backward stops the pass with the node, the tag
 * of its op, the input and the destination named; with the mode off the same
 * pass succeeds; tag scopes nest per thread; misuse gets a status.
 */
#include "harness.h"

#include <pthread.h>

static const int64_t s1[1] = {1};
static const int64_t s3[1] = {3};

/* The graph of sum(log(x) * 0) with x = [1, 0, 2] tagged 'x': log(0) * 0 is
 * NaN forward, and LogBackward computes 0 / 0 = NaN for x[1]. The log is
 * recorded inside scopes "loss" and "normalize", the mul inside "loss". */
static ag_tensor *log_times_zero(ag_context *ctx, ag_dtype dt, ag_tensor **x_out) {
  double xv[3] = {1, 0, 2};
  ag_tensor *x = TAGGED_LEAF(ctx, dt, s3, 1, xv, "x"), *zero = SCALAR(ctx, dt, 0.0), *l = NULL, *m = NULL, *s = NULL;
  *x_out = x;
  if (!x || !zero) return NULL;
  CHECK_OK(ag_tag_scope_push("loss"));
  CHECK_OK(ag_tag_scope_push("normalize"));
  CHECK_OK(ag_op_log(&l, x));
  CHECK_OK(ag_tag_scope_pop());
  CHECK_OK(ag_op_mul(&m, l, zero));
  CHECK_OK(ag_tag_scope_pop());
  CHECK(ag_tag_scope_current() == NULL);
  CHECK_OK(ag_op_sum(&s, m));
  REL(l);
  REL(m);
  REL(zero);
  return s;
}

static void test_nan_reported_with_node_and_tag(ag_dtype dt) {
  ag_context *ctx = NEW_CTX();
  ag_tensor *x = NULL, *s;
  REQUIRE(ctx);
  s = log_times_zero(ctx, dt, &x);
  REQUIRE(s && x);
  REQUIRE_OK(ag_context_set_anomaly_mode(ctx, 1));
  CHECK(ag_context_anomaly_mode(ctx) == 1);
  CHECK_ERR(ag_backward(s, NULL, NULL), AG_ERR_GRAPH, "ag_backward");
  CHECK_STR(ag_last_error_message(),
            "[ag_backward] anomaly: LogBackward (op tagged 'loss/normalize') produced NaN in its gradient for "
            "input 0 (element 1 of shape (3), going to the leaf 'x' of shape (3)); backward stopped there");
  /* The node that failed did not hand its gradient on. */
  CHECK_NO_GRAD(x);
  REL(s);
  REL(x);
  ag_context_release(ctx);
}

/* Anomaly mode off (the default): the same pass succeeds with a NaN gradient. */
static void test_off_gives_nan_gradient(ag_dtype dt) {
  ag_context *ctx = NEW_CTX();
  ag_tensor *x = NULL, *s, *g;
  double gv[3];
  REQUIRE(ctx);
  CHECK(ag_context_anomaly_mode(ctx) == 0);
  s = log_times_zero(ctx, dt, &x);
  REQUIRE(s && x);
  REQUIRE_OK(ag_backward(s, NULL, NULL));
  g = GRAD(x);
  REQUIRE(g != NULL);
  REQUIRE(READ(g, gv, 3) == 3);
  CHECK(gv[0] == 0.0 && gv[2] == 0.0);
  CHECK(isnan(gv[1]));
  /* Turned on and off again: no check. */
  REQUIRE_OK(ag_context_set_anomaly_mode(ctx, 1));
  REQUIRE_OK(ag_context_set_anomaly_mode(ctx, 0));
  CHECK(ag_context_anomaly_mode(ctx) == 0);
  REL(s);
  REQUIRE_OK(ag_tensor_set_grad(x, NULL));
  s = NULL;
  {
    ag_tensor *l = NULL;
    CHECK_OK(ag_op_log(&l, x));
    CHECK_OK(ag_op_sum(&s, l));
    REL(l);
  }
  CHECK_OK(ag_backward(s, NULL, NULL));
  REL(g);
  REL(s);
  REL(x);
  ag_context_release(ctx);
}

/* 1 / 0 = inf from LogBackward, going to another node (an untagged op). */
static void test_inf_to_next_node(ag_dtype dt) {
  ag_context *ctx = NEW_CTX();
  double xv[3] = {1, 2, 0};
  ag_tensor *x, *one, *w = NULL, *l = NULL, *s = NULL;
  REQUIRE(ctx);
  x = LEAF(ctx, dt, s3, 1, xv);
  one = SCALAR(ctx, dt, 1.0);
  REQUIRE(x && one);
  REQUIRE_OK(ag_op_mul(&w, x, one));
  REQUIRE_OK(ag_op_log(&l, w));
  REQUIRE_OK(ag_op_sum(&s, l));
  REQUIRE_OK(ag_context_set_anomaly_mode(ctx, 1));
  CHECK_ERR(ag_backward(s, NULL, NULL), AG_ERR_GRAPH, "ag_backward");
  CHECK_STR(ag_last_error_message(),
            "[ag_backward] anomaly: LogBackward produced inf in its gradient for input 0 (element 2 of shape (3), "
            "going to MulBackward input 0); backward stopped there");
  REL(s);
  REL(l);
  REL(w);
  REL(one);
  REL(x);
  ag_context_release(ctx);
}

/* a / b with b = 0 and only b requiring grad: -inf for input 1 of DivBackward;
 * ag_grad reports it too and returns nothing. */
static void test_div_input_nr(ag_dtype dt) {
  ag_context *ctx = NEW_CTX();
  double av[1] = {1}, bv[1] = {0};
  ag_tensor *a, *b, *q = NULL, *grads[1];
  const ag_tensor *outs[1], *ins[1];
  REQUIRE(ctx);
  a = MAKE(ctx, dt, s1, 1, av);
  b = TAGGED_LEAF(ctx, dt, s1, 1, bv, "b");
  REQUIRE(a && b);
  REQUIRE_OK(ag_tag_scope_push("ratio"));
  REQUIRE_OK(ag_op_div(&q, a, b));
  REQUIRE_OK(ag_tag_scope_pop());
  REQUIRE_OK(ag_context_set_anomaly_mode(ctx, 1));
  outs[0] = q;
  ins[0] = b;
  grads[0] = SENT_T;
  CHECK_ERR(ag_grad(grads, outs, NULL, 1, ins, 1, NULL), AG_ERR_GRAPH, "ag_grad");
  CHECK_STR(ag_last_error_message(),
            "[ag_grad] anomaly: DivBackward (op tagged 'ratio') produced -inf in its gradient for input 1 "
            "(element 0 of shape (1), going to the leaf 'b' of shape (1)); backward stopped there");
  CHECK(grads[0] == SENT_T);
  REL(q);
  REL(b);
  REL(a);
  ag_context_release(ctx);
}

/* A NaN seed: the root node's own output is checked. */
static void test_nan_seed(void) {
  ag_context *ctx = NEW_CTX();
  double xv[3] = {1, 2, 3}, sv[3] = {1, NAN, 1};
  ag_tensor *x, *seed, *y = NULL;
  REQUIRE(ctx);
  x = LEAF(ctx, AG_F64, s3, 1, xv);
  seed = MAKE(ctx, AG_F64, s3, 1, sv);
  REQUIRE(x && seed);
  REQUIRE_OK(ag_op_exp(&y, x));
  REQUIRE_OK(ag_context_set_anomaly_mode(ctx, 1));
  CHECK_ERR(ag_backward(y, seed, NULL), AG_ERR_GRAPH, "ag_backward");
  CHECK_MSG_HAS("anomaly: GraphRoot produced NaN in its gradient for input 0 (element 1 of shape (3), going to "
                "ExpBackward input 0)");
  REL(y);
  REL(seed);
  REL(x);
  ag_context_release(ctx);
}

/* Finite gradients pass unchanged with the mode on, on 1 and 2 threads; a
 * large tensor (several chunks) reports its first bad element. */
static void test_large_and_finite(int32_t threads) {
  ag_context *ctx = NEW_CTX_THREADS(threads);
  const int64_t n = 200003;
  int64_t shape[1];
  double *xv = (double *)malloc((size_t)n * sizeof(double)), *gv = (double *)malloc((size_t)n * sizeof(double));
  ag_tensor *x = NULL, *l = NULL, *s = NULL, *g;
  int64_t i;
  int ok = 1;
  shape[0] = n;
  if (!CHECK(ctx && xv && gv)) goto done;
  for (i = 0; i < n; ++i) xv[i] = 1.0 + (double)(i % 7);
  x = LEAF(ctx, AG_F32, shape, 1, xv);
  if (!x || !CHECK_OK(ag_context_set_anomaly_mode(ctx, 1))) goto done;
  if (!CHECK_OK(ag_op_log(&l, x)) || !CHECK_OK(ag_op_sum(&s, l))) goto done;
  CHECK_OK(ag_backward(s, NULL, NULL));
  g = GRAD(x);
  if (!CHECK(g != NULL)) goto done;
  CHECK(READ(g, gv, n) == n);
  for (i = 0; i < n && ok; ++i) ok = fabs(gv[i] - 1.0 / xv[i]) <= 1e-6;
  CHECK(ok);
  REL(g);
  REL(l);
  REL(s);
  l = s = NULL;
  /* zeros at 150001 and 190000: the first one is named */
  xv[150001] = 0;
  xv[190000] = 0;
  REL(x);
  x = LEAF(ctx, AG_F32, shape, 1, xv);
  if (!x) goto done;
  if (!CHECK_OK(ag_op_log(&l, x)) || !CHECK_OK(ag_op_sum(&s, l))) goto done;
  CHECK_ERR(ag_backward(s, NULL, NULL), AG_ERR_GRAPH, "ag_backward");
  CHECK_MSG_HAS("LogBackward produced inf in its gradient for input 0 (element 150001 of shape (200003)");
done:
  REL(s);
  REL(l);
  REL(x);
  free(xv);
  free(gv);
  ag_context_release(ctx);
}
static void test_large_1_thread(void) { test_large_and_finite(1); }
static void test_large_2_threads(void) { test_large_and_finite(2); }

static void test_mode_bad_input(void) {
  CHECK_ERR(ag_context_set_anomaly_mode(NULL, 1), AG_ERR_INVALID_ARGUMENT, "ag_context_set_anomaly_mode");
  CHECK_STR(ag_last_error_message(), "[ag_context_set_anomaly_mode] context is NULL (missing: did an earlier call fail?)");
  CHECK(ag_context_anomaly_mode(NULL) == 0);
}

static void test_scopes_nest(void) {
  const char *a, *ab;
  CHECK(ag_tag_scope_current() == NULL);
  REQUIRE_OK(ag_tag_scope_push("a"));
  a = ag_tag_scope_current();
  CHECK_STR(a, "a");
  REQUIRE_OK(ag_tag_scope_push("b"));
  ab = ag_tag_scope_current();
  CHECK_STR(ab, "a/b");
  REQUIRE_OK(ag_tag_scope_pop());
  CHECK(ag_tag_scope_current() == a);
  REQUIRE_OK(ag_tag_scope_push("b"));
  CHECK(ag_tag_scope_current() == ab); /* interned: one copy per name */
  REQUIRE_OK(ag_tag_scope_pop());
  REQUIRE_OK(ag_tag_scope_pop());
  CHECK(ag_tag_scope_current() == NULL);
  CHECK_STR(a, "a"); /* still valid after the scope closed */
}

static void test_scope_misuse(void) {
  CHECK_ERR(ag_tag_scope_pop(), AG_ERR_INVALID_ARGUMENT, "ag_tag_scope_pop");
  CHECK_STR(ag_last_error_message(), "[ag_tag_scope_pop] no tag scope is open on this thread");
  CHECK_ERR(ag_tag_scope_push(NULL), AG_ERR_INVALID_ARGUMENT, "ag_tag_scope_push");
  CHECK_STR(ag_last_error_message(), "[ag_tag_scope_push] name is NULL");
  CHECK_ERR(ag_tag_scope_push(""), AG_ERR_INVALID_ARGUMENT, "ag_tag_scope_push");
  CHECK_STR(ag_last_error_message(), "[ag_tag_scope_push] name is empty");
  CHECK(ag_tag_scope_current() == NULL);
}

static void *other_thread(void *arg) {
  const char **seen = (const char **)arg;
  seen[0] = ag_tag_scope_current();
  seen[1] = ag_tag_scope_push("t") == AG_OK ? ag_tag_scope_current() : NULL;
  ag_tag_scope_pop();
  return NULL;
}

/* Scopes belong to their thread. */
static void test_scope_per_thread(void) {
  pthread_t th;
  const char *seen[2] = {"x", NULL};
  REQUIRE_OK(ag_tag_scope_push("main"));
  REQUIRE(pthread_create(&th, NULL, other_thread, (void *)seen) == 0);
  pthread_join(th, NULL);
  CHECK(seen[0] == NULL);
  CHECK_STR(seen[1], "t");
  CHECK_STR(ag_tag_scope_current(), "main");
  CHECK_OK(ag_tag_scope_pop());
}

int main(int argc, char **argv) {
  h_init(argc, argv);
  RUN_F64_F32(test_nan_reported_with_node_and_tag);
  RUN_F64_F32(test_off_gives_nan_gradient);
  RUN_F64_F32(test_inf_to_next_node);
  RUN_F64_F32(test_div_input_nr);
  RUN(test_nan_seed);
  RUN(test_large_1_thread);
  RUN(test_large_2_threads);
  RUN(test_mode_bad_input);
  RUN(test_scopes_nest);
  RUN(test_scope_misuse);
  RUN(test_scope_per_thread);
  return h_finish();
}
