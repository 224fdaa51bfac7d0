/*
 * tests/c_api/test_hooks.c - tensor hooks, post-accumulate-grad hooks, node
 * pre/post hooks and queued callbacks: what they see, replacing gradients,
 * removal, destroy exactly once on every path, failing hooks and their
 * messages, and misuse.
 */
#include "harness.h"

static const int64_t s3[1] = {3};

/* Per-hook state: calls, destroys, a factor to scale the gradient by, what it saw. */
typedef struct {
  int calls, destroyed, fail, wrong_shape, drop;
  double factor;
  double seen[3];
  int seen_n;
  int order; /* global call order stamp */
  ag_context *other_ctx; /* if set: hand back a gradient from this context */
} state;

static int g_clock;

static void destroy_state(void *p) { ((state *)p)->destroyed++; }

/* Scales the gradient by s->factor (replacement), or fails. */
static ag_status scale_hook(void *p, const ag_tensor *grad, ag_tensor **replacement) {
  state *s = (state *)p;
  ag_tensor *f = NULL, *r = NULL;
  ag_context *ctx = NULL;
  s->calls++;
  s->order = ++g_clock;
  s->seen_n = (int)h_read_at(__FILE__, __LINE__, grad, s->seen, 3);
  if (s->fail) {
    ag_set_callback_error("the hook refused");
    return AG_ERR_INVALID_ARGUMENT;
  }
  if (s->other_ctx) {
    ag_tensor_zeros(replacement, s->other_ctx, AG_F64, s3, 1);
    return AG_OK;
  }
  if (s->factor == 1.0 && !s->wrong_shape)
    return AG_OK;
  if (ag_tensor_context(&ctx, grad) != AG_OK)
    return AG_ERR_INTERNAL;
  if (s->wrong_shape) {
    int64_t two = 2;
    ag_tensor_zeros(&r, ctx, AG_F64, &two, 1);
  } else {
    ag_tensor_scalar(&f, ctx, AG_F64, s->factor);
    ag_op_mul(&r, grad, f); /* ag calls from inside a hook */
    ag_tensor_release(f);
  }
  ag_context_release(ctx);
  *replacement = r;
  return AG_OK;
}

/* l = sum(y), y = x * w: dl/dx = w. */
typedef struct {
  ag_context *ctx;
  ag_tensor *x, *w, *y, *l;
} graph;

static const double xv[3] = {1, 2, 3}, wv[3] = {0.5, -1, 2};

static int build(graph *g) {
  g->ctx = NEW_CTX();
  g->y = g->l = NULL;
  if (!g->ctx)
    return 0;
  g->x = LEAF(g->ctx, AG_F64, s3, 1, xv);
  g->w = MAKE(g->ctx, AG_F64, s3, 1, wv);
  return g->x && g->w && CHECK_OK(ag_op_mul(&g->y, g->x, g->w)) && CHECK_OK(ag_op_sum(&g->l, g->y));
}

static void drop(graph *g) {
  REL(g->l);
  REL(g->y);
  REL(g->w);
  REL(g->x);
  ag_context_release(g->ctx);
}

/* With `hook` registered on y (no handle), backward fails with AG_ERR_CALLBACK.
 * 0 only if the hook could not be registered: a failed backward is recorded. */
static int check_backward_fails_with_hook(graph *g, ag_tensor_hook_fn hook, void *s, ag_destroy_fn destroy) {
  if (!CHECK_OK(ag_tensor_register_hook(NULL, g->y, hook, s, destroy)))
    return 0;
  CHECK_ERR(ag_backward(g->l, NULL, NULL), AG_ERR_CALLBACK, "ag_backward");
  return 1;
}

static void test_tensor_hook_non_leaf_replaces(void) {
  graph g;
  state s = {0};
  ag_hook *h = NULL;
  double want[3] = {1.5, -3, 6}, ones[3] = {1, 1, 1};
  REQUIRE(build(&g));
  s.factor = 3.0;
  REQUIRE_OK(ag_tensor_register_hook(&h, g.y, scale_hook, &s, destroy_state));
  REQUIRE(h != NULL);
  REQUIRE_OK(ag_backward(g.l, NULL, NULL));
  CHECK(s.calls == 1);
  CHECK(s.seen_n == 3);
  CHECK_CLOSE(s.seen[0], ones[0], 0);
  CHECK_GRAD_VALUES(g.x, want, 3, 1e-12); /* 3 * w */
  CHECK(s.destroyed == 0);
  ag_hook_remove(h);
  CHECK(s.destroyed == 1);
  /* a second removal is detected, ignored and recorded */
  ag_hook_remove(h);
  CHECK(s.destroyed == 1);
  CHECK_MSG_FN("ag_hook_remove");
  CHECK_MSG_HAS("not a live handle");
  drop(&g);
  CHECK(s.destroyed == 1);
}

static void test_tensor_hook_leaf_and_ag_grad(void) {
  graph g;
  state s = {0};
  ag_hook *h = NULL;
  ag_tensor *out = NULL;
  const ag_tensor *outs[1], *ins[1];
  ag_backward_options o = AG_BACKWARD_OPTIONS_INIT;
  double want[3] = {-1, 2, -4};
  REQUIRE(build(&g));
  s.factor = -2.0;
  REQUIRE_OK(ag_tensor_register_hook(&h, g.x, scale_hook, &s, destroy_state));
  o.retain_graph = 1;
  REQUIRE_OK(ag_backward(g.l, NULL, &o));
  CHECK_GRAD_VALUES(g.x, want, 3, 1e-12);
  outs[0] = g.l;
  ins[0] = g.x;
  REQUIRE_OK(ag_grad(&out, outs, NULL, 1, ins, 1, NULL)); /* the hook applies to ag_grad too */
  CHECK_VALUES(out, want, 3, 1e-12);
  CHECK(s.calls == 2);
  REL(out);
  ag_hook_release(h); /* handle gone, hook stays with the leaf */
  CHECK(s.destroyed == 0);
  ag_hook_release(h);
  CHECK_MSG_FN("ag_hook_release");
  drop(&g); /* the leaf dies: its hook goes with it */
  CHECK(s.destroyed == 1);
}

/* A hook without a handle lives as long as its node; destroy runs once. */
static void test_hook_without_handle(void) {
  graph g;
  state s = {0};
  s.factor = 1.0;
  REQUIRE(build(&g));
  REQUIRE_OK(ag_tensor_register_hook(NULL, g.y, scale_hook, &s, destroy_state));
  REQUIRE_OK(ag_backward(g.l, NULL, NULL));
  CHECK(s.calls == 1);
  CHECK(s.destroyed == 0);
  drop(&g);
  CHECK(s.destroyed == 1);
}

/* Removed hooks no longer run. */
static void test_removed_hook_does_not_run(void) {
  graph g;
  state a = {0}, b = {0};
  ag_hook *ha = NULL, *hb = NULL;
  a.factor = b.factor = 1.0;
  REQUIRE(build(&g));
  REQUIRE_OK(ag_tensor_register_hook(&ha, g.y, scale_hook, &a, destroy_state));
  REQUIRE_OK(ag_tensor_register_hook(&hb, g.y, scale_hook, &b, destroy_state));
  ag_hook_remove(ha);
  REQUIRE_OK(ag_backward(g.l, NULL, NULL));
  CHECK(a.calls == 0 && a.destroyed == 1);
  CHECK(b.calls == 1 && b.destroyed == 0);
  ag_hook_remove(hb);
  CHECK(b.destroyed == 1);
  drop(&g);
}

/* Hooks of one tensor run in registration order, each seeing the last one's result. */
static void test_hooks_chain_in_order(void) {
  graph g;
  state a = {0}, b = {0};
  double want[3] = {3, -6, 12};
  REQUIRE(build(&g));
  a.factor = 2.0;
  b.factor = 3.0;
  REQUIRE_OK(ag_tensor_register_hook(NULL, g.y, scale_hook, &a, destroy_state));
  REQUIRE_OK(ag_tensor_register_hook(NULL, g.y, scale_hook, &b, destroy_state));
  REQUIRE_OK(ag_backward(g.l, NULL, NULL));
  CHECK(a.order < b.order);
  CHECK_CLOSE(b.seen[0], 2.0, 0);
  CHECK_GRAD_VALUES(g.x, want, 3, 1e-12);
  drop(&g);
  CHECK(a.destroyed == 1 && b.destroyed == 1);
}

/* ---- post-accumulate-grad hooks ------------------------------------------------ */

typedef struct {
  int calls, destroyed;
  double grad0;
  ag_tensor *expect_leaf;
} leaf_state;

static void destroy_leaf_state(void *p) { ((leaf_state *)p)->destroyed++; }

static ag_status after_accumulate(void *p, ag_tensor *leaf) {
  leaf_state *s = (leaf_state *)p;
  ag_tensor *g = NULL;
  double v[3];
  s->calls++;
  if (leaf != s->expect_leaf)
    return AG_ERR_INTERNAL;
  if (ag_tensor_grad(&g, leaf) != AG_OK || g == NULL)
    return AG_ERR_INTERNAL;
  h_read_at(__FILE__, __LINE__, g, v, 3);
  s->grad0 = v[0];
  ag_tensor_release(g);
  return AG_OK;
}

static void test_post_accumulate_grad_hook(void) {
  graph g;
  leaf_state s = {0};
  ag_hook *h = NULL;
  ag_backward_options o = AG_BACKWARD_OPTIONS_INIT;
  REQUIRE(build(&g));
  s.expect_leaf = g.x;
  REQUIRE_OK(ag_tensor_register_post_accumulate_grad_hook(&h, g.x, after_accumulate, &s, destroy_leaf_state));
  o.retain_graph = 1;
  REQUIRE_OK(ag_backward(g.l, NULL, &o));
  CHECK(s.calls == 1);
  CHECK_CLOSE(s.grad0, 0.5, 0);
  REQUIRE_OK(ag_backward(g.l, NULL, &o));
  CHECK(s.calls == 2);
  CHECK_CLOSE(s.grad0, 1.0, 0); /* sees the accumulated gradient */
  /* not for ag_grad, which accumulates nothing */
  {
    ag_tensor *out = NULL;
    const ag_tensor *outs[1], *ins[1];
    outs[0] = g.l;
    ins[0] = g.x;
    REQUIRE_OK(ag_grad(&out, outs, NULL, 1, ins, 1, NULL));
    REL(out);
    CHECK(s.calls == 2);
  }
  /* only on leaves */
  {
    leaf_state s2 = {0};
    CHECK_ERR(ag_tensor_register_post_accumulate_grad_hook(NULL, g.y, after_accumulate, &s2, destroy_leaf_state),
              AG_ERR_GRAPH, "ag_tensor_register_post_accumulate_grad_hook");
    CHECK_MSG_HAS("MulBackward");
    CHECK(s2.destroyed == 1);
  }
  ag_hook_remove(h);
  CHECK(s.destroyed == 1);
  drop(&g);
}

/* ---- node hooks ------------------------------------------------------------------ */

typedef struct {
  int calls, destroyed, num_grads, num_other, drop_first;
  double first;
} node_state;

static void destroy_node_state(void *p) { ((node_state *)p)->destroyed++; }

static ag_status node_hook(void *p, ag_tensor **grads, int32_t n, const ag_tensor *const *other, int32_t m) {
  node_state *s = (node_state *)p;
  double v[3];
  s->calls++;
  s->num_grads = n;
  s->num_other = m;
  if (n > 0 && grads[0]) {
    h_read_at(__FILE__, __LINE__, grads[0], v, 3);
    s->first = v[0];
  }
  if (m > 0 && other == NULL)
    return AG_ERR_INTERNAL;
  if (s->drop_first)
    grads[0] = NULL; /* drop that gradient (borrowed: not released) */
  return AG_OK;
}

static void test_node_pre_and_post_hooks(void) {
  graph g;
  node_state pre = {0}, post = {0};
  REQUIRE(build(&g));
  REQUIRE_OK(ag_tensor_register_node_pre_hook(NULL, g.y, node_hook, &pre, destroy_node_state));
  REQUIRE_OK(ag_tensor_register_node_post_hook(NULL, g.y, node_hook, &post, destroy_node_state));
  post.drop_first = 1; /* MulBackward's gradient for x is dropped */
  REQUIRE_OK(ag_backward(g.l, NULL, NULL));
  CHECK(pre.calls == 1 && pre.num_grads == 1 && pre.num_other == 0);
  CHECK_CLOSE(pre.first, 1.0, 0);
  CHECK(post.calls == 1 && post.num_grads == 2 && post.num_other == 1);
  CHECK_CLOSE(post.first, 0.5, 0); /* dy/dx = w */
  CHECK_NO_GRAD(g.x);
  drop(&g);
  CHECK(pre.destroyed == 1 && post.destroyed == 1);
}

/* ---- queued callbacks ---------------------------------------------------------- */

typedef struct {
  int calls, destroyed, queued_status, fail;
  int order;
  int grads_done; /* the leaf had its gradient when the callback ran */
  ag_tensor *leaf;
} cb_state;

static void destroy_cb(void *p) { ((cb_state *)p)->destroyed++; }

static ag_status final_cb(void *p) {
  cb_state *s = (cb_state *)p;
  ag_tensor *gx = NULL;
  s->calls++;
  s->order = ++g_clock;
  if (s->leaf && ag_tensor_grad(&gx, s->leaf) == AG_OK && gx) {
    s->grads_done = 1;
    ag_tensor_release(gx);
  }
  if (s->fail) {
    ag_set_callback_error("final callback says no");
    return AG_ERR_UNSUPPORTED;
  }
  return AG_OK;
}

static ag_status queueing_hook(void *p, const ag_tensor *grad, ag_tensor **replacement) {
  cb_state *s = (cb_state *)p;
  (void)grad;
  (void)replacement;
  s->queued_status = ag_backward_queue_callback(final_cb, s, destroy_cb);
  return AG_OK;
}

static void test_queue_callback(void) {
  graph g;
  cb_state s = {0};
  REQUIRE(build(&g));
  s.leaf = g.x;
  REQUIRE_OK(ag_tensor_register_hook(NULL, g.y, queueing_hook, &s, NULL));
  REQUIRE_OK(ag_backward(g.l, NULL, NULL));
  CHECK(s.queued_status == AG_OK);
  CHECK(s.calls == 1);
  CHECK(s.destroyed == 1);
  CHECK(s.grads_done == 1); /* runs after the whole pass */
  drop(&g);
}

static void test_queue_callback_failure(void) {
  graph g;
  cb_state s = {0};
  REQUIRE(build(&g));
  s.fail = 1;
  REQUIRE(check_backward_fails_with_hook(&g, queueing_hook, &s, NULL));
  CHECK_MSG_HAS("final callback says no");
  CHECK_MSG_HAS("AG_ERR_UNSUPPORTED");
  CHECK(s.destroyed == 1);
  drop(&g);
}

static void test_queue_callback_outside_backward(void) {
  cb_state s = {0};
  CHECK_ERR(ag_backward_queue_callback(final_cb, &s, destroy_cb), AG_ERR_GRAPH, "ag_backward_queue_callback");
  CHECK_MSG_HAS("no backward pass");
  CHECK(s.destroyed == 1 && s.calls == 0);
  CHECK_ERR(ag_backward_queue_callback(NULL, &s, destroy_cb), AG_ERR_INVALID_ARGUMENT, "ag_backward_queue_callback");
  CHECK(s.destroyed == 2);
}

/* ---- failures ---------------------------------------------------------------------- */

static void test_failing_hook_message_reaches_caller(void) {
  graph g;
  state s = {0};
  REQUIRE(build(&g));
  s.fail = 1;
  REQUIRE(check_backward_fails_with_hook(&g, scale_hook, &s, destroy_state));
  CHECK_MSG_HAS("tensor hook failed (AG_ERR_INVALID_ARGUMENT): the hook refused");
  CHECK_MSG_HAS("MulBackward");
  CHECK_NO_GRAD(g.x);
  drop(&g);
  CHECK(s.destroyed == 1);
}

static void test_hook_wrong_shape(void) {
  graph g;
  state s = {0};
  REQUIRE(build(&g));
  s.wrong_shape = 1;
  REQUIRE(check_backward_fails_with_hook(&g, scale_hook, &s, destroy_state));
  CHECK_MSG_HAS("tensor hook of MulBackward returned a gradient of dtype f64 and shape (2)");
  CHECK_MSG_HAS("shape (3)");
  drop(&g);
  CHECK(s.destroyed == 1);
}

static void test_hook_other_context(void) {
  graph g;
  state s = {0};
  REQUIRE(build(&g));
  s.other_ctx = NEW_CTX();
  REQUIRE(s.other_ctx);
  REQUIRE(check_backward_fails_with_hook(&g, scale_hook, &s, destroy_state));
  CHECK_MSG_HAS("from another context");
  ag_context_release(s.other_ctx);
  drop(&g);
  CHECK(s.destroyed == 1);
}

static void test_registration_errors_destroy(void) {
  graph g;
  state s = {0};
  ag_hook *h = (ag_hook *)h_sentinel();
  REQUIRE(build(&g));
  CHECK_ERR(ag_tensor_register_hook(&h, NULL, scale_hook, &s, destroy_state), AG_ERR_INVALID_ARGUMENT,
            "ag_tensor_register_hook");
  CHECK(s.destroyed == 1);
  CHECK_ERR(ag_tensor_register_hook(&h, g.x, NULL, &s, destroy_state), AG_ERR_INVALID_ARGUMENT,
            "ag_tensor_register_hook");
  CHECK(s.destroyed == 2);
  CHECK_ERR(ag_tensor_register_hook(&h, g.w, scale_hook, &s, destroy_state), AG_ERR_GRAPH,
            "ag_tensor_register_hook");
  CHECK_MSG_HAS("does not require grad");
  CHECK(s.destroyed == 3);
  CHECK_ERR(ag_tensor_register_node_pre_hook(&h, g.w, node_hook, &s, destroy_state), AG_ERR_GRAPH,
            "ag_tensor_register_node_pre_hook");
  CHECK(s.destroyed == 4);
  CHECK_ERR(ag_tensor_register_node_post_hook(&h, NULL, node_hook, &s, NULL), AG_ERR_INVALID_ARGUMENT,
            "ag_tensor_register_node_post_hook");
  CHECK(h == (ag_hook *)h_sentinel()); /* untouched on failure */
  ag_hook_remove(NULL);
  ag_hook_release(NULL);
  drop(&g);
}

int main(int argc, char **argv) {
  h_init(argc, argv);
  RUN(test_tensor_hook_non_leaf_replaces);
  RUN(test_tensor_hook_leaf_and_ag_grad);
  RUN(test_hook_without_handle);
  RUN(test_removed_hook_does_not_run);
  RUN(test_hooks_chain_in_order);
  RUN(test_post_accumulate_grad_hook);
  RUN(test_node_pre_and_post_hooks);
  RUN(test_queue_callback);
  RUN(test_queue_callback_failure);
  RUN(test_queue_callback_outside_backward);
  RUN(test_failing_hook_message_reaches_caller);
  RUN(test_hook_wrong_shape);
  RUN(test_hook_other_context);
  RUN(test_registration_errors_destroy);
  return h_finish();
}
