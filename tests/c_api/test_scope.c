/* Handle scopes: what a scope releases, keeps, and refuses. */
#include "harness.h"

static int64_t bytes_in_use(ag_context *ctx) {
  ag_memory_stats s = AG_MEMORY_STATS_INIT;
  ag_context_memory_stats(ctx, &s);
  return s.bytes_in_use;
}

/* One training-like frame: every intermediate is left to the scope. */
static void frame(ag_context *ctx, ag_tensor *w, ag_tensor **out_loss) {
  int64_t n = 4096;
  ag_tensor *x = NULL, *y = NULL, *t = NULL, *loss = NULL, *g = NULL;
  REQUIRE_OK(ag_tensor_full(&x, ctx, AG_F64, &n, 1, 0.25));
  REQUIRE_OK(ag_op_mul(&y, x, w));
  REQUIRE_OK(ag_op_tanh(&t, y));
  REQUIRE_OK(ag_op_sum(&loss, t));
  REQUIRE_OK(ag_backward(loss, NULL, NULL));
  REQUIRE_OK(ag_tensor_grad(&g, w));
  *out_loss = loss;
}

static void test_frames_leak_nothing(void) {
  ag_context *ctx = NEW_CTX();
  ag_tensor *w = SCALAR(ctx, AG_F64, 2.0);
  REQUIRE_OK(ag_tensor_requires_grad(w, 1));
  int64_t after_first = -1;
  for (int it = 0; it < 5; ++it) {
    ag_scope *s = NULL;
    REQUIRE_OK(ag_scope_begin(&s));
    CHECK(ag_scope_depth() == 1);
    ag_tensor *loss = NULL;
    frame(ctx, w, &loss);
    CHECK(loss != NULL);
    CHECK(bytes_in_use(ctx) > 4096 * 8);
    CHECK_OK(ag_scope_end(s));
    CHECK(ag_scope_depth() == 0);
    CHECK_OK(ag_tensor_set_grad(w, NULL));
    if (it == 0) after_first = bytes_in_use(ctx);
    CHECK(bytes_in_use(ctx) == after_first);
  }
  /* Only w's own storage is left. */
  CHECK(after_first < 4096);
  REL(w);
  ag_context_release(ctx);
}

static void test_kept_handle_survives_and_is_the_callers(void) {
  ag_context *ctx = NEW_CTX();
  ag_tensor *w = SCALAR(ctx, AG_F64, 0.5);
  REQUIRE_OK(ag_tensor_requires_grad(w, 1));
  ag_scope *s = NULL;
  REQUIRE_OK(ag_scope_begin(&s));
  ag_tensor *loss = NULL;
  frame(ctx, w, &loss);
  REQUIRE(loss != NULL);
  CHECK_OK(ag_scope_keep(loss));
  CHECK_ERR(ag_scope_keep(loss), AG_ERR_INVALID_ARGUMENT, "ag_scope_keep"); /* kept once, recorded once */
  CHECK_MSG_HAS("not recorded by an open scope");
  CHECK_OK(ag_scope_end(s));
  CHECK_CLOSE(ITEM(loss), 4096.0 * tanh(0.125), 1e-9);
  CHECK(ag_tensor_numel(loss) == 1);
  REL(loss);
  CHECK_OK(ag_tensor_set_grad(w, NULL));
  CHECK(bytes_in_use(ctx) < 4096);
  REL(w);
  ag_context_release(ctx);
}

static void test_nested_keep_moves_to_the_enclosing_scope(void) {
  ag_context *ctx = NEW_CTX();
  ag_scope *outer = NULL, *inner = NULL;
  REQUIRE_OK(ag_scope_begin(&outer));
  REQUIRE_OK(ag_scope_begin(&inner));
  CHECK(ag_scope_depth() == 2);
  int64_t n = 1000;
  ag_tensor *a = NULL, *b = NULL;
  REQUIRE_OK(ag_tensor_ones(&a, ctx, AG_F64, &n, 1));
  REQUIRE_OK(ag_op_exp(&b, a));
  CHECK_OK(ag_scope_keep(b));
  /* Ending the outer one first is refused and releases nothing. */
  CHECK_ERR(ag_scope_end(outer), AG_ERR_INVALID_ARGUMENT, "ag_scope_end");
  CHECK_MSG_HAS("not the innermost");
  CHECK(ag_tensor_numel(a) == 1000);
  CHECK_OK(ag_scope_end(inner));
  CHECK(ag_tensor_numel(b) == 1000);    /* b now belongs to the outer scope */
  CHECK(bytes_in_use(ctx) >= 1000 * 8);
  CHECK_OK(ag_scope_end(outer));
  CHECK(bytes_in_use(ctx) == 0);
  CHECK_ERR(ag_scope_end(outer), AG_ERR_INVALID_ARGUMENT, "ag_scope_end");
  CHECK_MSG_HAS("not open on this thread");
  ag_context_release(ctx);
}

static void test_early_release_and_retain_are_counted(void) {
  ag_context *ctx = NEW_CTX();
  int64_t n = 512;
  ag_scope *s = NULL;
  REQUIRE_OK(ag_scope_begin(&s));
  ag_tensor *a = NULL;
  REQUIRE_OK(ag_tensor_zeros(&a, ctx, AG_F32, &n, 1));
  REL(a); /* released by hand inside the scope: the scope skips it */
  ag_tensor *b = NULL;
  REQUIRE_OK(ag_tensor_zeros(&b, ctx, AG_F32, &n, 1));
  CHECK(ag_tensor_retain(b) == b); /* a second reference, recorded too */
  CHECK_OK(ag_scope_end(s));
  CHECK(bytes_in_use(ctx) == 0); /* both references of b went, a's once */
  ag_context_release(ctx);
}

/* A handle made before the scope, retained and released inside it (as a C++
 * copy does), is still the caller's after the scope ends. */
static void test_release_inside_takes_back_a_record(void) {
  ag_context *ctx = NEW_CTX();
  int64_t n = 256;
  ag_tensor *outer = NULL;
  REQUIRE_OK(ag_tensor_ones(&outer, ctx, AG_F64, &n, 1));
  ag_scope *s = NULL;
  REQUIRE_OK(ag_scope_begin(&s));
  ag_tensor *copy = ag_tensor_retain(outer);
  CHECK(copy == outer);
  ag_tensor *y = NULL;
  REQUIRE_OK(ag_op_exp(&y, copy));
  REL(copy); /* the retain's record goes with it */
  CHECK_OK(ag_scope_end(s));
  CHECK(ag_tensor_numel(outer) == 256); /* still live: the scope released only y */
  CHECK(bytes_in_use(ctx) < 2 * 256 * 8);
  REL(outer);
  CHECK(bytes_in_use(ctx) == 0);
  ag_context_release(ctx);
}

static ag_status noop_leaf_hook(void *user_data, ag_tensor *leaf) {
  (void)leaf;
  ++*(int *)user_data;
  return AG_OK;
}

/* Replaces the gradient by a new tensor (twice it), made inside the hook. */
static ag_status doubling_hook(void *user_data, const ag_tensor *grad, ag_tensor **replacement) {
  ag_tensor *two = NULL;
  ag_status s = ag_tensor_full(&two, *(ag_context **)user_data, AG_F64, NULL, 0, 2.0);
  if (s == AG_OK) s = ag_op_mul(replacement, grad, two);
  ag_tensor_release(two);
  return s;
}

/* Tensors lent to hooks and tensors hooks hand back go through the open
 * scope without leaving a record in it: its end releases neither the leaf
 * nor ag's reference to a replacement. */
static void test_hooks_inside_a_scope_leave_no_record(void) {
  ag_context *ctx = NEW_CTX();
  ag_tensor *w = SCALAR(ctx, AG_F64, 3.0);
  int calls = 0;
  REQUIRE_OK(ag_tensor_requires_grad(w, 1));
  REQUIRE_OK(ag_tensor_register_post_accumulate_grad_hook(NULL, w, noop_leaf_hook, &calls, NULL));
  REQUIRE_OK(ag_tensor_register_hook(NULL, w, doubling_hook, &ctx, NULL));
  for (int it = 0; it < 3; ++it) {
    ag_scope *s = NULL;
    ag_tensor *y = NULL, *g = NULL;
    double v = 0.0;
    REQUIRE_OK(ag_scope_begin(&s));
    REQUIRE_OK(ag_op_mul(&y, w, w));
    REQUIRE_OK(ag_backward(y, NULL, NULL));
    REQUIRE_OK(ag_tensor_grad(&g, w));
    CHECK_OK(ag_tensor_item(g, &v));
    CHECK(v == 12.0); /* 2 * dy/dw = 2 * 2w */
    CHECK_OK(ag_scope_end(s));
    CHECK(ag_tensor_numel(w) == 1); /* still live */
    CHECK_OK(ag_tensor_set_grad(w, NULL));
  }
  CHECK(calls == 3);
  REL(w);
  CHECK(bytes_in_use(ctx) == 0);
  ag_context_release(ctx);
}

static void test_bad_arguments(void) {
  CHECK_ERR(ag_scope_begin(NULL), AG_ERR_INVALID_ARGUMENT, "ag_scope_begin");
  CHECK_ERR(ag_scope_end(NULL), AG_ERR_INVALID_ARGUMENT, "ag_scope_end");
  CHECK_ERR(ag_scope_keep(NULL), AG_ERR_INVALID_ARGUMENT, "ag_scope_keep");
  ag_context *ctx = NEW_CTX();
  ag_tensor *t = SCALAR(ctx, AG_F32, 1.0);
  CHECK_ERR(ag_scope_keep(t), AG_ERR_INVALID_ARGUMENT, "ag_scope_keep");
  CHECK_MSG_HAS("no scope is open");
  REL(t);
  ag_context_release(ctx);
  CHECK(ag_scope_depth() == 0);
}

int main(int argc, char **argv) {
  h_init(argc, argv);
  RUN(test_frames_leak_nothing);
  RUN(test_kept_handle_survives_and_is_the_callers);
  RUN(test_nested_keep_moves_to_the_enclosing_scope);
  RUN(test_early_release_and_retain_are_counted);
  RUN(test_release_inside_takes_back_a_record);
  RUN(test_hooks_inside_a_scope_leave_no_record);
  RUN(test_bad_arguments);
  return h_finish();
}
