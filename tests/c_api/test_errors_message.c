/*
 * tests/c_api/test_errors_message.c - ag_last_error_message() itself: a
 * success keeps it, a new failure replaces it, each thread has its own, and
 * release(NULL) records nothing while a released handle passed back in is
 * detected, ignored and recorded.
 */
#include "harness.h"

#include <pthread.h>

static const int64_t s2_23[2] = {2, 3};

/* ---- the error message itself ---------------------------------------------------- */

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

/* ---- released handles ------------------------------------------------------------ */

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

/* x is kept alive by the node of y = x*x, which saved it: a second release of
 * the caller's handle reaches a live object, and must be detected, ignored
 * and recorded. */
static void test_double_release_tensor(void) {
  h_squares f;
  ag_tensor *g, *g2;
  char before[512];
  double v;
  REQUIRE(SQUARE_OF_SCALAR(&f, 2.0));
  REQUIRE_OK(ag_backward(f.y, NULL, NULL));
  /* The leaf keeps its gradient alive, so the handle's object outlives the
   * user's references: a second release is detected, not a crash. */
  g = GRAD(f.x);
  REQUIRE(g);
  CHECK_STATUS(ag_tensor_item(NULL, &v), AG_ERR_INVALID_ARGUMENT);
  h_save_message(before, sizeof before);
  ag_tensor_release(g); /* legitimate */
  CHECK_STR(ag_last_error_message(), before);
  ag_tensor_release(g); /* double release */
  CHECK(strcmp(ag_last_error_message(), before) != 0);
  CHECK_CONTAINS(ag_last_error_message(), "ag_tensor_release");
  /* nothing was freed twice: the gradient is still there */
  g2 = GRAD(f.x);
  CHECK_CLOSE(ITEM(g2), 4.0, 0);
  REL(g2);
  h_squares_drop(&f);
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
  h_squares f;
  ag_tensor *g, *out = SENT_T;
  REQUIRE(SQUARE_OF_SCALAR(&f, 2.0));
  REQUIRE_OK(ag_backward(f.y, NULL, NULL));
  /* g's object stays alive (x holds its gradient) after its handle goes. */
  g = GRAD(f.x);
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
  h_squares_drop(&f);
}

int main(int argc, char **argv) {
  h_init(argc, argv);
  RUN(test_release_null_records_nothing);
  RUN(test_success_does_not_clear_message);
  RUN(test_new_failure_replaces_message);
  RUN(test_message_thread_local);
  RUN(test_double_release_tensor);
  RUN(test_double_release_context);
  RUN(test_released_handle_rejected);
  return h_finish();
}
