/*
 * tests/c_api/test_partial_grad.c - ag_grad (gradients returned, no .grad
 * touched), backward restricted to a list of inputs, retain_grad on
 * non-leaves, and every error path of these calls.
 */
#include "harness.h"

static const int64_t s1[1] = {1};
static const int64_t s3[1] = {3};

/* y = a*b + exp(a), l = sum(y): dl/da = b + exp(a), dl/db = a. */
typedef struct {
  ag_context *ctx;
  ag_tensor *a, *b, *ab, *ea, *y, *l;
  double av[3], bv[3];
} graph;

static int build(graph *g, ag_dtype dt) {
  ag_tensor *t[4] = {NULL, NULL, NULL, NULL};
  int i;
  memset(g, 0, sizeof *g);
  for (i = 0; i < 3; i++) {
    g->av[i] = 0.3 * i - 0.2;
    g->bv[i] = 1.5 - 0.7 * i;
  }
  g->ctx = NEW_CTX();
  if (!g->ctx)
    return 0;
  g->a = LEAF(g->ctx, dt, s3, 1, g->av);
  g->b = LEAF(g->ctx, dt, s3, 1, g->bv);
  if (!CHECK_OK(ag_op_mul(&t[0], g->a, g->b)) || !CHECK_OK(ag_op_exp(&t[1], g->a)) ||
      !CHECK_OK(ag_op_add(&t[2], t[0], t[1])) || !CHECK_OK(ag_op_sum(&t[3], t[2])))
    return 0;
  g->ab = t[0];
  g->ea = t[1];
  g->y = t[2];
  g->l = t[3];
  return 1;
}

static void drop(graph *g) {
  REL(g->l);
  REL(g->y);
  REL(g->ea);
  REL(g->ab);
  REL(g->b);
  REL(g->a);
  ag_context_release(g->ctx);
}

static void test_grad_returns_without_touching_grad(ag_dtype dt) {
  graph g;
  ag_tensor *out[2] = {NULL, NULL};
  const ag_tensor *outs[1], *ins[2];
  double da[3], db[3];
  int i;
  REQUIRE(build(&g, dt));
  for (i = 0; i < 3; i++) {
    da[i] = g.bv[i] + exp(g.av[i]);
    db[i] = g.av[i];
  }
  outs[0] = g.l;
  ins[0] = g.a;
  ins[1] = g.b;
  REQUIRE_OK(ag_grad(out, outs, NULL, 1, ins, 2, NULL));
  CHECK_VALUES(out[0], da, 3, h_tol(dt) * 10);
  CHECK_VALUES(out[1], db, 3, h_tol(dt));
  CHECK(ag_tensor_get_requires_grad(out[0]) == 0);
  CHECK_NO_GRAD(g.a);
  CHECK_NO_GRAD(g.b);
  /* the graph was freed: a second pass fails and names a node */
  CHECK_ERR(ag_grad(out, outs, NULL, 1, ins, 2, NULL), AG_ERR_GRAPH, "ag_grad");
  CHECK_MSG_HAS("Backward");
  REL(out[0]);
  REL(out[1]);
  drop(&g);
}

/* Only the wanted input: the other's gradient is not computed; a non-leaf input. */
static void test_grad_one_input_and_non_leaf(void) {
  graph g;
  ag_tensor *out[1] = {NULL}, *gy = NULL;
  const ag_tensor *outs[1], *ins[1];
  ag_grad_options o = AG_GRAD_OPTIONS_INIT;
  double db[3], ones[3] = {1, 1, 1};
  int i;
  REQUIRE(build(&g, AG_F64));
  for (i = 0; i < 3; i++)
    db[i] = g.av[i];
  outs[0] = g.l;
  ins[0] = g.b;
  o.retain_graph = 1;
  REQUIRE_OK(ag_grad(out, outs, NULL, 1, ins, 1, &o));
  CHECK_VALUES(out[0], db, 3, 1e-12);
  REL(out[0]);
  ins[0] = g.y; /* a non-leaf: d sum(y) / dy = 1 */
  REQUIRE_OK(ag_grad(&gy, outs, NULL, 1, ins, 1, &o));
  CHECK_VALUES(gy, ones, 3, 0);
  REL(gy);
  CHECK_NO_GRAD(g.a);
  drop(&g);
}

/* Two outputs with their own seeds: grads of y*s1 + ab*s2 summed. */
static void test_grad_several_outputs(void) {
  graph g;
  ag_tensor *out[1] = {NULL}, *seed1, *seed2;
  const ag_tensor *outs[2], *seeds[2], *ins[1];
  double w1[3] = {1, 2, 3}, w2[3] = {-1, 0.5, 4}, want[3];
  int i;
  REQUIRE(build(&g, AG_F64));
  seed1 = MAKE(g.ctx, AG_F64, s3, 1, w1);
  seed2 = MAKE(g.ctx, AG_F64, s3, 1, w2);
  /* d(y.w1 + ab.w2)/db = a*w1 + a*w2 */
  for (i = 0; i < 3; i++)
    want[i] = g.av[i] * (w1[i] + w2[i]);
  outs[0] = g.y;
  outs[1] = g.ab;
  seeds[0] = seed1;
  seeds[1] = seed2;
  ins[0] = g.b;
  REQUIRE_OK(ag_grad(out, outs, seeds, 2, ins, 1, NULL));
  CHECK_VALUES(out[0], want, 3, 1e-12);
  REL(out[0]);
  REL(seed1);
  REL(seed2);
  drop(&g);
}

static void test_grad_allow_unused(void) {
  graph g;
  ag_tensor *c, *out[2];
  const ag_tensor *outs[1], *ins[2];
  ag_grad_options o = AG_GRAD_OPTIONS_INIT;
  double cv[1] = {2};
  REQUIRE(build(&g, AG_F64));
  c = LEAF(g.ctx, AG_F64, s1, 1, cv); /* not in the graph */
  outs[0] = g.l;
  ins[0] = g.b;
  ins[1] = c;
  out[0] = out[1] = SENT_T;
  o.retain_graph = 1;
  CHECK_ERR(ag_grad(out, outs, NULL, 1, ins, 2, &o), AG_ERR_GRAPH, "ag_grad");
  CHECK_MSG_HAS("inputs[1]");
  CHECK_MSG_HAS("allow_unused");
  CHECK(out[0] == SENT_T && out[1] == SENT_T);
  o.allow_unused = 1;
  REQUIRE_OK(ag_grad(out, outs, NULL, 1, ins, 2, &o));
  CHECK(out[0] != NULL && out[1] == NULL);
  REL(out[0]);
  REL(c);
  drop(&g);
}

static void test_grad_errors(void) {
  graph g;
  ag_context *other = NEW_CTX();
  ag_tensor *out[1] = {SENT_T}, *plain, *foreign, *bad_seed;
  const ag_tensor *outs[1], *ins[1], *seeds[1];
  ag_grad_options o = AG_GRAD_OPTIONS_INIT;
  double v3[3] = {1, 2, 3};
  REQUIRE(other);
  REQUIRE(build(&g, AG_F64));
  plain = MAKE(g.ctx, AG_F64, s3, 1, v3);
  foreign = LEAF(other, AG_F64, s3, 1, v3);
  bad_seed = MAKE(g.ctx, AG_F64, s1, 1, v3);
  outs[0] = g.l;
  ins[0] = g.a;
  CHECK_ERR(ag_grad(NULL, outs, NULL, 1, ins, 1, NULL), AG_ERR_INVALID_ARGUMENT, "ag_grad");
  CHECK_ERR(ag_grad(out, NULL, NULL, 1, ins, 1, NULL), AG_ERR_INVALID_ARGUMENT, "ag_grad");
  CHECK_ERR(ag_grad(out, outs, NULL, 0, ins, 1, NULL), AG_ERR_INVALID_ARGUMENT, "ag_grad");
  CHECK_MSG_HAS("num_outputs 0");
  CHECK_ERR(ag_grad(out, outs, NULL, 1, ins, 0, NULL), AG_ERR_INVALID_ARGUMENT, "ag_grad");
  CHECK_MSG_HAS("num_inputs 0");
  ins[0] = NULL;
  CHECK_ERR(ag_grad(out, outs, NULL, 1, ins, 1, NULL), AG_ERR_INVALID_ARGUMENT, "ag_grad");
  CHECK_MSG_HAS("inputs[0] is NULL");
  ins[0] = plain;
  CHECK_ERR(ag_grad(out, outs, NULL, 1, ins, 1, NULL), AG_ERR_GRAPH, "ag_grad");
  CHECK_MSG_HAS("inputs[0] does not require grad");
  ins[0] = foreign;
  CHECK_ERR(ag_grad(out, outs, NULL, 1, ins, 1, NULL), AG_ERR_CONTEXT, "ag_grad");
  ins[0] = g.a;
  outs[0] = plain;
  CHECK_ERR(ag_grad(out, outs, NULL, 1, ins, 1, NULL), AG_ERR_GRAPH, "ag_grad");
  CHECK_MSG_HAS("outputs[0] does not require grad");
  outs[0] = g.y; /* 3 elements: needs a seed */
  CHECK_ERR(ag_grad(out, outs, NULL, 1, ins, 1, NULL), AG_ERR_SHAPE, "ag_grad");
  CHECK_MSG_HAS("grad_outputs[0] may be NULL only");
  seeds[0] = bad_seed;
  CHECK_ERR(ag_grad(out, outs, seeds, 1, ins, 1, NULL), AG_ERR_SHAPE, "ag_grad");
  CHECK_MSG_HAS("grad_outputs[0] has shape (1), outputs[0] has (3)");
  o.struct_size = 2;
  outs[0] = g.l;
  CHECK_ERR(ag_grad(out, outs, NULL, 1, ins, 1, &o), AG_ERR_INVALID_ARGUMENT, "ag_grad");
  CHECK(out[0] == SENT_T);
  /* nothing ran: the graph is still whole */
  REQUIRE_OK(ag_grad(out, outs, NULL, 1, ins, 1, NULL));
  REL(out[0]);
  CHECK_ERR(ag_grad_options_init(NULL), AG_ERR_INVALID_ARGUMENT, "ag_grad_options_init");
  CHECK_INIT_GIVES(ag_grad_options, ag_grad_options_init, 0xCD, AG_GRAD_OPTIONS_INIT);
  REL(plain);
  REL(foreign);
  REL(bad_seed);
  drop(&g);
  ag_context_release(other);
}

/* ---- backward restricted to inputs ------------------------------------------ */

static void test_backward_inputs(ag_dtype dt) {
  graph g;
  ag_backward_options o = AG_BACKWARD_OPTIONS_INIT;
  const ag_tensor *ins[2];
  ag_tensor *gb, *gy;
  double db[3], ones[3] = {1, 1, 1};
  int i;
  REQUIRE(build(&g, dt));
  for (i = 0; i < 3; i++)
    db[i] = g.av[i];
  ins[0] = g.b;
  ins[1] = g.y; /* a non-leaf input accumulates into its .grad too */
  o.inputs = ins;
  o.num_inputs = 2;
  o.retain_graph = 1;
  REQUIRE_OK(ag_backward(g.l, NULL, &o));
  CHECK_NO_GRAD(g.a); /* not listed: untouched */
  gb = GRAD(g.b);
  gy = GRAD(g.y);
  CHECK_VALUES(gb, db, 3, h_tol(dt));
  CHECK_VALUES(gy, ones, 3, 0);
  REL(gb);
  REL(gy);
  /* accumulates like a full backward */
  o.num_inputs = 1;
  REQUIRE_OK(ag_backward(g.l, NULL, &o));
  gb = GRAD(g.b);
  for (i = 0; i < 3; i++)
    db[i] *= 2;
  CHECK_VALUES(gb, db, 3, h_tol(dt));
  REL(gb);
  /* errors */
  o.num_inputs = -1;
  CHECK_ERR(ag_backward(g.l, NULL, &o), AG_ERR_INVALID_ARGUMENT, "ag_backward");
  o.num_inputs = 1;
  o.inputs = NULL;
  CHECK_ERR(ag_backward(g.l, NULL, &o), AG_ERR_INVALID_ARGUMENT, "ag_backward");
  CHECK_MSG_HAS("inputs is NULL but num_inputs is 1");
  drop(&g);
}

/* An input the root does not depend on: the pass runs nothing, changes nothing. */
static void test_backward_unreachable_input(void) {
  graph g;
  ag_backward_options o = AG_BACKWARD_OPTIONS_INIT;
  ag_tensor *c;
  const ag_tensor *ins[1];
  double cv[1] = {1};
  REQUIRE(build(&g, AG_F64));
  c = LEAF(g.ctx, AG_F64, s1, 1, cv);
  ins[0] = c;
  o.inputs = ins;
  o.num_inputs = 1;
  REQUIRE_OK(ag_backward(g.l, NULL, &o));
  CHECK_NO_GRAD(c);
  CHECK_NO_GRAD(g.a);
  CHECK_NO_GRAD(g.b);
  REL(c);
  drop(&g);
}

/* ---- retain_grad --------------------------------------------------------------- */

static void test_retain_grad(ag_dtype dt) {
  graph g;
  ag_backward_options o = AG_BACKWARD_OPTIONS_INIT;
  ag_tensor *gy, *ga;
  double ones[3] = {1, 1, 1}, twos[3] = {2, 2, 2};
  REQUIRE(build(&g, dt));
  CHECK(ag_tensor_retains_grad(g.y) == 0);
  REQUIRE_OK(ag_tensor_retain_grad(g.y));
  REQUIRE_OK(ag_tensor_retain_grad(g.y)); /* twice is once */
  REQUIRE_OK(ag_tensor_retain_grad(g.a)); /* a leaf: no-op */
  CHECK(ag_tensor_retains_grad(g.y) == 1);
  CHECK(ag_tensor_retains_grad(g.a) == 0);
  CHECK(ag_tensor_retains_grad(NULL) == 0);
  o.retain_graph = 1;
  REQUIRE_OK(ag_backward(g.l, NULL, &o));
  gy = GRAD(g.y);
  CHECK_VALUES(gy, ones, 3, 0);
  CHECK_NO_GRAD(g.ea); /* not retained */
  ga = GRAD(g.a);
  CHECK(ga != NULL);
  REL(ga);
  REL(gy);
  REQUIRE_OK(ag_backward(g.l, NULL, &o));
  CHECK_GRAD_VALUES(g.y, twos, 3, 0);
  /* a retaining non-leaf's gradient may be reset */
  REQUIRE_OK(ag_tensor_set_grad(g.y, NULL));
  CHECK_NO_GRAD(g.y);
  CHECK_ERR(ag_tensor_set_grad(g.ea, NULL), AG_ERR_GRAPH, "ag_tensor_set_grad");
  /* the retaining tensor dies before the next pass: nothing to keep, no crash */
  REQUIRE_OK(ag_tensor_retain_grad(g.ea));
  REL(g.ea);
  g.ea = NULL;
  REQUIRE_OK(ag_backward(g.l, NULL, NULL));
  CHECK_GRAD_VALUES(g.y, ones, 3, 0); /* y, reset above, still retains */
  drop(&g);
}

static void test_retain_grad_errors(void) {
  ag_context *ctx = NEW_CTX();
  ag_tensor *t;
  double v = 1;
  REQUIRE(ctx);
  t = MAKE(ctx, AG_F64, s1, 1, &v);
  CHECK_ERR(ag_tensor_retain_grad(NULL), AG_ERR_INVALID_ARGUMENT, "ag_tensor_retain_grad");
  CHECK_ERR(ag_tensor_retain_grad(t), AG_ERR_GRAPH, "ag_tensor_retain_grad");
  CHECK_MSG_HAS("does not require grad");
  REL(t);
  ag_context_release(ctx);
}

int main(int argc, char **argv) {
  h_init(argc, argv);
  RUN_F64_F32(test_grad_returns_without_touching_grad);
  RUN_F64_F32(test_backward_inputs);
  RUN_F64_F32(test_retain_grad);
  RUN(test_backward_unreachable_input);
  RUN(test_grad_one_input_and_non_leaf);
  RUN(test_grad_several_outputs);
  RUN(test_grad_allow_unused);
  RUN(test_grad_errors);
  RUN(test_retain_grad_errors);
  return h_finish();
}
