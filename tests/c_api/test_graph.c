/*
 * tests/c_api/test_graph.c - introspection of recorded nodes (grad_fn, names,
 * sequence and topological numbers, next edges with input_nr, saved bytes,
 * tags) against the graph the test built, and export to DOT and JSON with
 * the buffer-size protocol (graph_json_dump.c and check_graph_json.py parse
 * the JSON).
 */
#include "harness.h"

static const int64_t s3[1] = {3};

/* s = sum(x * c): x (3) a leaf tagged 'x', c (3) a constant; the mul inside
 * tag scope "model". */
typedef struct small_graph {
  ag_context *ctx;
  ag_tensor *x, *c, *y, *s;
} small_graph;

static int build_small(small_graph *g) {
  double xv[3] = {1, 2, 3}, cv[3] = {4, 5, 6};
  memset(g, 0, sizeof *g);
  g->ctx = NEW_CTX();
  if (!g->ctx) return 0;
  g->x = TAGGED_LEAF(g->ctx, AG_F64, s3, 1, xv, "x");
  g->c = MAKE(g->ctx, AG_F64, s3, 1, cv);
  if (!g->x || !g->c) return 0;
  if (!CHECK_OK(ag_tag_scope_push("model"))) return 0;
  CHECK_OK(ag_op_mul(&g->y, g->x, g->c));
  CHECK_OK(ag_tag_scope_pop());
  return g->y && CHECK_OK(ag_op_sum(&g->s, g->y));
}

static void free_small(small_graph *g) {
  REL(g->s);
  REL(g->y);
  REL(g->c);
  REL(g->x);
  ag_context_release(g->ctx);
}

static void test_introspection(void) {
  small_graph g;
  const ag_node *sum = NULL, *mul = NULL, *acc = NULL, *next = NULL, *none = (const ag_node *)h_sentinel();
  int32_t input_nr = -5;
  if (!build_small(&g)) goto done;
  /* leaves have no grad_fn */
  sum = (const ag_node *)h_sentinel();
  CHECK_OK(ag_tensor_grad_fn(&sum, g.x));
  CHECK(sum == NULL);
  CHECK_OK(ag_tensor_grad_fn(&sum, g.c));
  CHECK(sum == NULL);
  CHECK_OK(ag_tensor_grad_fn(&sum, g.s));
  CHECK_OK(ag_tensor_grad_fn(&mul, g.y));
  if (!CHECK(sum != NULL && mul != NULL)) goto done;
  CHECK_STR(ag_node_name(sum), "SumBackward");
  CHECK_STR(ag_node_name(mul), "MulBackward");
  /* sum -> mul (input 0) */
  CHECK(ag_node_num_next_edges(sum) == 1);
  CHECK_OK(ag_node_next_edge(sum, 0, &next, &input_nr));
  CHECK(next == mul);
  CHECK(input_nr == 0);
  /* mul -> AccumulateGrad of x; c needs no gradient */
  CHECK(ag_node_num_next_edges(mul) == 2);
  input_nr = -5;
  CHECK_OK(ag_node_next_edge(mul, 0, &acc, &input_nr));
  if (!CHECK(acc != NULL)) goto done;
  CHECK(input_nr == 0);
  CHECK_STR(ag_node_name(acc), "AccumulateGrad");
  CHECK(ag_node_num_next_edges(acc) == 0);
  input_nr = -5;
  CHECK_OK(ag_node_next_edge(mul, 1, &none, &input_nr));
  CHECK(none == NULL);
  CHECK(input_nr == 0);
  CHECK_OK(ag_node_next_edge(mul, 0, &next, NULL)); /* input_nr may be NULL */
  CHECK(next == acc);
  /* numbers: later ops have larger sequence numbers; AccumulateGrad runs first */
  CHECK(ag_node_sequence_nr(sum) > ag_node_sequence_nr(mul));
  CHECK(ag_node_sequence_nr(acc) == UINT64_MAX);
  CHECK(ag_node_topological_nr(acc) == 0);
  CHECK(ag_node_topological_nr(mul) == 1);
  CHECK(ag_node_topological_nr(sum) == 2);
  /* tags: the scope around the mul only */
  CHECK_STR(ag_node_tag(mul), "model");
  CHECK(ag_node_tag(sum) == NULL);
  CHECK(ag_node_tag(acc) == NULL);
  /* mul keeps c (for x's gradient), not x (c needs none): 3 f64 */
  CHECK(ag_node_saved_bytes(mul) == 3 * sizeof(double));
  CHECK(ag_node_saved_bytes(sum) == 0);
  CHECK(ag_node_saved_bytes(acc) == 0);
  /* a backward with retain_graph keeps them, one without frees them */
  {
    ag_backward_options o = AG_BACKWARD_OPTIONS_INIT;
    o.retain_graph = 1;
    CHECK_OK(ag_backward(g.s, NULL, &o));
    CHECK(ag_node_saved_bytes(mul) == 3 * sizeof(double));
    CHECK_OK(ag_backward(g.s, NULL, NULL));
    CHECK(ag_node_saved_bytes(mul) == 0);
    CHECK_STR(ag_node_name(mul), "MulBackward");
  }
done:
  free_small(&g);
}

/* x * x saves both operands. */
static void test_saved_bytes_both(void) {
  ag_context *ctx;
  double xv[3] = {1, 2, 3};
  ag_tensor *x, *y = NULL;
  const ag_node *n = NULL;
  REQUIRE(NEW_CTX_WITH_LEAF(&ctx, &x, AG_F64, s3, 1, xv));
  REQUIRE_OK(ag_op_mul(&y, x, x));
  REQUIRE_OK(ag_tensor_grad_fn(&n, y));
  CHECK(ag_node_saved_bytes(n) == 2 * 3 * sizeof(double));
  REL(y);
  REL(x);
  ag_context_release(ctx);
}

/* A custom function with two outputs: the edges from the ops on each output
 * name input_nr 0 and 1 of its node, which keeps what forward saved. */
static ag_status pair_forward(void *user, ag_function_ctx *ctx, const ag_tensor *const *in, int32_t nin,
                              ag_tensor **out, int32_t nout) {
  ag_status st;
  (void)user;
  (void)nin;
  (void)nout;
  st = ag_function_ctx_save_for_backward(ctx, in, 1);
  if (st == AG_OK) st = ag_op_exp(&out[0], in[0]);
  if (st == AG_OK) st = ag_op_neg(&out[1], in[0]);
  return st;
}
static ag_status pair_backward(void *user, ag_function_ctx *ctx, const ag_tensor *const *g, int32_t ng,
                               ag_tensor **gi, int32_t ni) {
  (void)user;
  (void)ctx;
  (void)ng;
  (void)ni;
  return ag_op_add(&gi[0], g[0], g[1]);
}

static void test_multi_output_input_nr(void) {
  ag_context *ctx = NEW_CTX();
  double xv[3] = {1, 2, 3};
  ag_tensor *x, *outs[2] = {NULL, NULL}, *z = NULL;
  const ag_tensor *ins[1];
  const ag_node *add = NULL, *fn = NULL, *next = NULL;
  int32_t input_nr = -1;
  ag_function_def def = AG_FUNCTION_DEF_INIT;
  REQUIRE(ctx);
  x = LEAF(ctx, AG_F64, s3, 1, xv);
  REQUIRE(x);
  def.name = "PairBackward";
  def.forward = pair_forward;
  def.backward = pair_backward;
  ins[0] = x;
  REQUIRE_OK(ag_function_apply(outs, 2, ins, 1, &def));
  /* z = outs[1] + outs[0]: edge 0 goes to input 1 of the function's node */
  REQUIRE_OK(ag_op_add(&z, outs[1], outs[0]));
  REQUIRE_OK(ag_tensor_grad_fn(&add, z));
  REQUIRE_OK(ag_tensor_grad_fn(&fn, outs[0]));
  CHECK_STR(ag_node_name(fn), "PairBackward");
  CHECK_OK(ag_node_next_edge(add, 0, &next, &input_nr));
  CHECK(next == fn && input_nr == 1);
  CHECK_OK(ag_node_next_edge(add, 1, &next, &input_nr));
  CHECK(next == fn && input_nr == 0);
  CHECK(ag_node_saved_bytes(fn) == 3 * sizeof(double));
  {
    ag_tensor *ones = NULL;
    REQUIRE_OK(ag_tensor_ones(&ones, ctx, AG_F64, s3, 1));
    CHECK_OK(ag_backward(z, ones, NULL));
    CHECK(ag_node_saved_bytes(fn) == 0); /* released with the graph */
    REL(ones);
  }
  REL(z);
  REL(outs[0]);
  REL(outs[1]);
  REL(x);
  ag_context_release(ctx);
}

static void test_introspection_bad_input(void) {
  small_graph g;
  const ag_node *mul = NULL, *next = (const ag_node *)h_sentinel();
  int32_t input_nr = -7;
  CHECK_ERR(ag_tensor_grad_fn(NULL, NULL), AG_ERR_INVALID_ARGUMENT, "ag_tensor_grad_fn");
  CHECK_STR(ag_last_error_message(), "[ag_tensor_grad_fn] the output pointer is NULL");
  CHECK_ERR(ag_tensor_grad_fn(&mul, NULL), AG_ERR_INVALID_ARGUMENT, "ag_tensor_grad_fn");
  CHECK_STR(ag_last_error_message(), "[ag_tensor_grad_fn] input t is NULL (missing: did an earlier call fail?)");
  CHECK(mul == NULL);
  if (!build_small(&g)) goto done;
  REQUIRE_OK(ag_tensor_grad_fn(&mul, g.y));
  CHECK_ERR(ag_node_next_edge(mul, 2, &next, &input_nr), AG_ERR_INVALID_ARGUMENT, "ag_node_next_edge");
  CHECK_STR(ag_last_error_message(), "[ag_node_next_edge] edge 2 is out of range: MulBackward has 2 next edges");
  CHECK_ERR(ag_node_next_edge(mul, -1, &next, &input_nr), AG_ERR_INVALID_ARGUMENT, "ag_node_next_edge");
  CHECK_MSG_HAS("edge -1 is out of range");
  CHECK_ERR(ag_node_next_edge(NULL, 0, &next, &input_nr), AG_ERR_INVALID_ARGUMENT, "ag_node_next_edge");
  CHECK_STR(ag_last_error_message(), "[ag_node_next_edge] node is NULL");
  CHECK_ERR(ag_node_next_edge(mul, 0, NULL, &input_nr), AG_ERR_INVALID_ARGUMENT, "ag_node_next_edge");
  CHECK_STR(ag_last_error_message(), "[ag_node_next_edge] next is NULL");
  CHECK(next == (const ag_node *)h_sentinel() && input_nr == -7); /* untouched */
  /* NULL node getters */
  CHECK(ag_node_name(NULL) == NULL);
  CHECK(ag_node_tag(NULL) == NULL);
  CHECK(ag_node_sequence_nr(NULL) == UINT64_MAX);
  CHECK(ag_node_topological_nr(NULL) == -1);
  CHECK(ag_node_num_next_edges(NULL) == 0);
  CHECK(ag_node_saved_bytes(NULL) == 0);
done:
  free_small(&g);
}

/* The whole text of the export of t, malloc'ed, or NULL. */
static char *export_text(const ag_tensor *t, int32_t format) {
  size_t needed = 0;
  char *buf;
  if (!CHECK_STATUS(ag_graph_export(t, format, NULL, 0, &needed), AG_ERR_BUFFER_TOO_SMALL)) return NULL;
  buf = (char *)malloc(needed);
  if (!buf) return NULL;
  if (!CHECK_OK(ag_graph_export(t, format, buf, needed, &needed))) {
    free(buf);
    return NULL;
  }
  return buf;
}

static void test_export_dot(void) {
  small_graph g;
  char *dot = NULL, *again = NULL;
  if (!build_small(&g)) goto done;
  dot = export_text(g.s, AG_GRAPH_DOT);
  again = export_text(g.s, AG_GRAPH_DOT);
  if (!CHECK(dot && again)) goto done;
  CHECK_STR(dot, again); /* deterministic */
  CHECK_STARTS(dot, "digraph ag {\n");
  /* Labels say what their numbers are. */
  CHECK_CONTAINS(dot, "  n0 [label=\"SumBackward\\nop #");
  CHECK_CONTAINS(dot, " recorded, 2 steps above the leaves\\nkeeps 0 B for backward\\n"
                      "gets grad of output 0: f64 ()\"];\n");
  CHECK_CONTAINS(dot, "  n1 [label=\"MulBackward\\nop #");
  CHECK_CONTAINS(dot, " recorded, 1 step above the leaves\\nin scope model\\nkeeps 24 B for backward\\n"
                      "gets grad of output 0: f64 (3)\"];\n");
  CHECK_CONTAINS(dot, "  n2 [label=\"AccumulateGrad\\nwrites .grad of leaf 'x': f64 (3)\"];\n");
  /* The tag scope is a box around its nodes. */
  CHECK_CONTAINS(dot, "  subgraph cluster_0 { label=\"model\"; style=dashed; n1; }\n");
  CHECK_CONTAINS(dot, "  n0 -> n1 [label=\"grad for input 0\"];\n  n1 -> n2 [label=\"grad for input 0\"];\n");
  /* c, which needs no gradient, shows as a constant (it has no node). */
  CHECK_CONTAINS(dot, "  c1_1 [shape=plain, label=\"constant\"];\n"
                      "  n1 -> c1_1 [style=dashed, label=\"input 1: no grad\"];\n}\n");
  CHECK(strstr(dot, "n3") == NULL);
done:
  free(dot);
  free(again);
  free_small(&g);
}

static void test_export_json(void) {
  small_graph g;
  char *json = NULL;
  if (!build_small(&g)) goto done;
  json = export_text(g.s, AG_GRAPH_JSON);
  if (!CHECK(json != NULL)) goto done;
  CHECK_STARTS(json, "{\"root\": 0, \"nodes\": [\n  {\"id\": 0, \"name\": \"SumBackward\", \"sequence_nr\": ");
  CHECK_CONTAINS(json, "\"topological_nr\": 2, \"saved_bytes\": 0, \"tag\": null, \"inputs\": [{\"dtype\": \"f64\", "
                       "\"shape\": []}], \"leaf\": null, \"next_edges\": [{\"to\": 1, \"input_nr\": 0}]}");
  CHECK_CONTAINS(json, "\"tag\": \"model\", \"inputs\": [{\"dtype\": \"f64\", \"shape\": [3]}], \"leaf\": null, "
                       "\"next_edges\": [{\"to\": 2, \"input_nr\": 0}, null]}");
  CHECK_CONTAINS(json, "{\"id\": 2, \"name\": \"AccumulateGrad\", \"sequence_nr\": null, \"topological_nr\": 0, "
                       "\"saved_bytes\": 0, \"tag\": null, \"inputs\": [{\"dtype\": \"f64\", \"shape\": [3]}], "
                       "\"leaf\": {\"tag\": \"x\", \"dtype\": \"f64\", \"shape\": [3]}, \"next_edges\": []}");
  /* the released leaf: no leaf in the export */
  REL(g.x);
  g.x = NULL;
  free(json);
  json = export_text(g.s, AG_GRAPH_JSON);
  if (!CHECK(json != NULL)) goto done;
  CHECK_CONTAINS(json, "\"name\": \"AccumulateGrad\"");
  CHECK_CONTAINS(json, "\"leaf\": null, \"next_edges\": []}");
  CHECK(strstr(json, "\"leaf\": {") == NULL);
done:
  free(json);
  free_small(&g);
}

/* Tags with characters JSON and DOT must escape. */
static void test_export_escapes(void) {
  ag_context *ctx = NEW_CTX();
  double xv[3] = {1, 2, 3};
  ag_tensor *x, *y = NULL;
  char *json, *dot;
  REQUIRE(ctx);
  x = TAGGED_LEAF(ctx, AG_F64, s3, 1, xv, "a\"b\\c\nd\te");
  REQUIRE(x);
  REQUIRE_OK(ag_tag_scope_push("q\"s"));
  REQUIRE_OK(ag_op_exp(&y, x));
  REQUIRE_OK(ag_tag_scope_pop());
  json = export_text(y, AG_GRAPH_JSON);
  dot = export_text(y, AG_GRAPH_DOT);
  if (CHECK(json && dot)) {
    CHECK_CONTAINS(json, "\"tag\": \"q\\\"s\"");
    CHECK_CONTAINS(json, "\"tag\": \"a\\\"b\\\\c\\nd\\u0009e\"");
    CHECK_CONTAINS(dot, "\\nin scope q\\\"s\\n");
    CHECK_CONTAINS(dot, "label=\"q\\\"s\"; style=dashed;");
    CHECK_CONTAINS(dot, "leaf 'a\\\"b\\\\c\\nd");
  }
  free(json);
  free(dot);
  REL(y);
  REL(x);
  ag_context_release(ctx);
}

static void test_export_buffer_protocol(void) {
  small_graph g;
  size_t needed = 0, needed2 = 12345;
  char *buf = NULL;
  size_t i;
  if (!build_small(&g)) goto done;
  CHECK_ERR(ag_graph_export(g.s, AG_GRAPH_JSON, NULL, 0, &needed), AG_ERR_BUFFER_TOO_SMALL, "ag_graph_export");
  if (!CHECK(needed > 1)) goto done;
  buf = (char *)malloc(needed + 8);
  if (!CHECK(buf != NULL)) goto done;
  /* one byte short: fails, buf untouched */
  memset(buf, 'Z', needed + 8);
  CHECK_ERR(ag_graph_export(g.s, AG_GRAPH_JSON, buf, needed - 1, &needed2), AG_ERR_BUFFER_TOO_SMALL,
            "ag_graph_export");
  CHECK(needed2 == needed);
  CHECK_MSG_HAS("bytes (with the NUL), capacity is ");
  for (i = 0; i < needed + 8 && buf[i] == 'Z'; ++i) {
  }
  CHECK(i == needed + 8);
  /* exact fit: text and NUL, nothing beyond */
  needed2 = 0;
  CHECK_OK(ag_graph_export(g.s, AG_GRAPH_JSON, buf, needed, &needed2));
  CHECK(needed2 == needed);
  CHECK(strlen(buf) == needed - 1);
  CHECK(buf[needed] == 'Z');
  /* bad input: needed untouched */
  needed2 = 777;
  CHECK_ERR(ag_graph_export(g.s, 0, buf, needed, &needed2), AG_ERR_INVALID_ARGUMENT, "ag_graph_export");
  CHECK_STR(ag_last_error_message(), "[ag_graph_export] format 0 is not AG_GRAPH_DOT (1) or AG_GRAPH_JSON (2)");
  CHECK_ERR(ag_graph_export(g.s, AG_GRAPH_DOT, NULL, 10, &needed2), AG_ERR_INVALID_ARGUMENT, "ag_graph_export");
  CHECK_STR(ag_last_error_message(), "[ag_graph_export] buf is NULL but capacity is 10");
  CHECK_ERR(ag_graph_export(g.s, AG_GRAPH_DOT, buf, needed, NULL), AG_ERR_INVALID_ARGUMENT, "ag_graph_export");
  CHECK_STR(ag_last_error_message(), "[ag_graph_export] needed is NULL");
  CHECK_ERR(ag_graph_export(NULL, AG_GRAPH_DOT, buf, needed, &needed2), AG_ERR_INVALID_ARGUMENT, "ag_graph_export");
  CHECK_STR(ag_last_error_message(), "[ag_graph_export] input root is NULL (missing: did an earlier call fail?)");
  REQUIRE_OK(ag_tensor_set_tag(g.c, "const"));
  CHECK_ERR(ag_graph_export(g.c, AG_GRAPH_DOT, buf, needed, &needed2), AG_ERR_GRAPH, "ag_graph_export");
  CHECK_STR(ag_last_error_message(), "[ag_graph_export] root 'const' requires no grad: it has no graph");
  CHECK(needed2 == 777);
done:
  free(buf);
  free_small(&g);
}

/* A leaf that requires grad: its AccumulateGrad alone. */
static void test_export_leaf(void) {
  small_graph g;
  char *dot = NULL;
  if (!build_small(&g)) goto done;
  dot = export_text(g.x, AG_GRAPH_DOT);
  if (!CHECK(dot != NULL)) goto done;
  CHECK_STARTS(dot, "digraph ag {\n");
  CHECK_CONTAINS(dot, "  node [shape=box, fontname=\"monospace\"];\n"
                      "  n0 [label=\"AccumulateGrad\\nwrites .grad of leaf 'x': f64 (3)\"];\n}\n");
  CHECK(strstr(dot, "->") == NULL);
done:
  free(dot);
  free_small(&g);
}

/* A composite op (mse_loss: a subtraction, a product, a mean) names its
 * nodes: they carry its name as their tag, under the user's tag scope, and
 * the DOT export draws them in one box labelled with it. */
static void test_composite_named(void) {
  ag_context *ctx = NEW_CTX();
  double xv[3] = {1, 2, 3}, tv[3] = {0, 0, 0};
  ag_tensor *x, *t, *loss = NULL, *loss2 = NULL;
  const ag_node *root = NULL, *next = NULL;
  char *dot;
  REQUIRE(ctx);
  x = TAGGED_LEAF(ctx, AG_F64, s3, 1, xv, "x");
  t = MAKE(ctx, AG_F64, s3, 1, tv);
  REQUIRE(x && t);
  REQUIRE_OK(ag_op_mse_loss(&loss, x, t, AG_REDUCTION_MEAN));
  REQUIRE_OK(ag_tensor_grad_fn(&root, loss));
  CHECK_STR(ag_node_tag(root), "mse_loss");
  REQUIRE_OK(ag_node_next_edge(root, 0, &next, NULL));
  CHECK_STR(ag_node_tag(next), "mse_loss");
  CHECK(ag_tag_scope_current() == NULL); /* the op's scope ended with it */
  REQUIRE_OK(ag_tag_scope_push("loss"));
  REQUIRE_OK(ag_op_mse_loss(&loss2, x, t, AG_REDUCTION_SUM));
  REQUIRE_OK(ag_tag_scope_pop());
  REQUIRE_OK(ag_tensor_grad_fn(&root, loss2));
  CHECK_STR(ag_node_tag(root), "loss/mse_loss");
  dot = export_text(loss, AG_GRAPH_DOT);
  if (CHECK(dot != NULL)) {
    CHECK_CONTAINS(dot, "  subgraph cluster_0 { label=\"mse_loss\"; style=dashed; n0; n1");
    CHECK_CONTAINS(dot, "input 1: no grad"); /* the target */
  }
  free(dot);
  REL(loss2);
  REL(loss);
  REL(t);
  REL(x);
  ag_context_release(ctx);
}

int main(int argc, char **argv) {
  h_init(argc, argv);
  RUN(test_introspection);
  RUN(test_saved_bytes_both);
  RUN(test_multi_output_input_nr);
  RUN(test_introspection_bad_input);
  RUN(test_export_dot);
  RUN(test_export_json);
  RUN(test_export_escapes);
  RUN(test_export_buffer_protocol);
  RUN(test_export_leaf);
  RUN(test_composite_named);
  return h_finish();
}
