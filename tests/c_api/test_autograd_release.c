/*
 * tests/c_api/test_autograd_release.c - ownership through backward: a graph,
 * its leaves, its context and the gradients released in every order (run
 * under ASan and valgrind for leaks).
 */
#include "harness.h"

static const int64_t s1[1] = {1};
static const int64_t s3[1] = {3};

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

int main(int argc, char **argv) {
  h_init(argc, argv);
  RUN(test_release_root_first);
  RUN(test_release_leaves_first);
  RUN(test_release_context_first);
  RUN(test_release_without_backward);
  RUN(test_grad_outlives_everything);
  RUN(test_release_create_graph_orders);
  return h_finish();
}
