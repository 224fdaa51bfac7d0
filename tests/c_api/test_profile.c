/*
 * tests/c_api/test_profile.c - the profiler of ag/profile.h: one "node"
 * event per node a backward runs, named as ag_node_name, inside its pass's
 * "backward" span; API calls with record_calls; nodes run by arena workers;
 * the Chrome trace buffer protocol; max_events; and the errors.
 */
#include "harness.h"

#define MAX_NODES 64

/* Every node reachable from root's grad_fn, each once. */
static int graph_nodes(const ag_tensor *root, const ag_node **nodes) {
  int n = 0;
  const ag_node *first = NULL;
  if (ag_tensor_grad_fn(&first, root) != AG_OK || !first) return 0;
  nodes[n++] = first;
  for (int i = 0; i < n; ++i) {
    for (int32_t e = 0; e < ag_node_num_next_edges(nodes[i]); ++e) {
      const ag_node *next = NULL;
      if (ag_node_next_edge(nodes[i], e, &next, NULL) != AG_OK || !next) continue;
      int seen = 0;
      for (int j = 0; j < n; ++j) seen |= nodes[j] == next;
      if (!seen && n < MAX_NODES) nodes[n++] = next;
    }
  }
  return n;
}

typedef struct event {
  const char *name, *category;
  int64_t start, duration;
  int32_t thread;
} event;

static int read_event(const ag_profile *p, int64_t i, event *e) {
  return ag_profile_event(p, i, &e->name, &e->category, &e->start, &e->duration, &e->thread) == AG_OK;
}

/* The node names of the graph, each used by exactly one node event of p,
 * every node event inside the one backward span. */
static void check_node_events(const ag_profile *p, const ag_node *const *nodes, int num_nodes) {
  const int64_t n = ag_profile_num_events(p);
  int used[MAX_NODES] = {0};
  int backward = 0, node_events = 0;
  event span = {0};
  for (int64_t i = 0; i < n; ++i) {
    event e;
    REQUIRE(read_event(p, i, &e));
    CHECK(e.duration >= 0 && e.start >= 0 && e.thread >= 1);
    if (!strcmp(e.category, "backward")) {
      CHECK_STR(e.name, "backward");
      span = e;
      ++backward;
    }
  }
  CHECK(backward == 1);
  for (int64_t i = 0; i < n; ++i) {
    event e;
    REQUIRE(read_event(p, i, &e));
    if (strcmp(e.category, "node")) continue;
    ++node_events;
    CHECK(e.start >= span.start && e.start + e.duration <= span.start + span.duration);
    int found = 0;
    for (int j = 0; j < num_nodes && !found; ++j) {
      if (!used[j] && !strcmp(ag_node_name(nodes[j]), e.name)) used[j] = found = 1;
    }
    if (!CHECK(found)) printf("# unmatched node event %s\n", e.name);
  }
  CHECK(node_events == num_nodes);
}

/* sum(relu(x @ w1 + b) @ w2) with leaves w1, b, w2. */
static ag_tensor *small_model(ag_context *ctx, ag_tensor **leaves) {
  const int64_t xs[2] = {4, 3}, w1s[2] = {3, 5}, bs[1] = {5}, w2s[2] = {5, 2};
  ag_tensor *x = NULL, *h = NULL, *hb = NULL, *a = NULL, *y = NULL, *s = NULL;
  ag_op_uniform(&x, ctx, AG_F32, xs, 2, -1, 1);
  ag_op_uniform(&leaves[0], ctx, AG_F32, w1s, 2, -1, 1);
  ag_op_uniform(&leaves[1], ctx, AG_F32, bs, 1, -1, 1);
  ag_op_uniform(&leaves[2], ctx, AG_F32, w2s, 2, -1, 1);
  for (int i = 0; i < 3; ++i) ag_tensor_requires_grad(leaves[i], 1);
  ag_op_matmul(&h, x, leaves[0]);
  ag_op_add(&hb, h, leaves[1]);
  ag_op_relu(&a, hb);
  ag_op_matmul(&y, a, leaves[2]);
  ag_op_sum(&s, y);
  ag_tensor_release(x);
  ag_tensor_release(h);
  ag_tensor_release(hb);
  ag_tensor_release(a);
  ag_tensor_release(y);
  return s;
}

static void test_backward_nodes(void) {
  ag_context *ctx = NULL;
  ag_tensor *leaves[3] = {NULL, NULL, NULL};
  ag_profile *p = NULL;
  const ag_node *nodes[MAX_NODES];
  REQUIRE_OK(ag_context_create(&ctx, NULL));
  ag_tensor *s = small_model(ctx, leaves);
  REQUIRE(s != NULL);
  const int num_nodes = graph_nodes(s, nodes);
  CHECK(num_nodes == 8); /* sum, mm, relu, add, mm, 3 AccumulateGrad */
  CHECK_OK(ag_profiler_start(ctx, NULL));
  CHECK_OK(ag_backward(s, NULL, NULL));
  REQUIRE_OK(ag_profiler_stop(&p, ctx));
  CHECK(ag_profile_num_dropped(p) == 0);
  check_node_events(p, nodes, num_nodes);
  /* No record_calls: no call events; a stopped profiler records nothing. */
  for (int64_t i = 0; i < ag_profile_num_events(p); ++i) {
    event e;
    CHECK(read_event(p, i, &e) && strcmp(e.category, "call"));
  }
  ag_profile_release(p);
  ag_tensor_release(s);
  for (int i = 0; i < 3; ++i) ag_tensor_release(leaves[i]);
  ag_context_release(ctx);
}

static void test_record_calls(void) {
  ag_context *ctx = NULL, *other = NULL;
  ag_tensor *leaves[3] = {NULL, NULL, NULL}, *t = NULL;
  ag_profile *p = NULL;
  ag_profiler_options o;
  REQUIRE_OK(ag_context_create(&ctx, NULL));
  REQUIRE_OK(ag_context_create(&other, NULL));
  CHECK_OK(ag_profiler_options_init(&o));
  o.record_calls = 1;
  CHECK_OK(ag_profiler_start(ctx, &o));
  ag_tensor *s = small_model(ctx, leaves);
  CHECK_OK(ag_tensor_ones(&t, other, AG_F32, NULL, 0)); /* another context's: not recorded */
  CHECK_OK(ag_backward(s, NULL, NULL));
  REQUIRE_OK(ag_profiler_stop(&p, ctx));
  int matmul = 0, uniform = 0, ones = 0, relu_node = 0;
  int64_t backward_start = -1;
  for (int64_t i = 0; i < ag_profile_num_events(p); ++i) {
    event e;
    REQUIRE(read_event(p, i, &e));
    if (!strcmp(e.category, "call")) {
      matmul += !strcmp(e.name, "ag_op_matmul");
      uniform += !strcmp(e.name, "ag_op_uniform");
      ones += !strcmp(e.name, "ag_tensor_ones");
      CHECK(backward_start < 0); /* every call came before the backward */
    } else if (!strcmp(e.category, "backward")) {
      backward_start = e.start;
    } else {
      relu_node += !strcmp(e.name, "ReluBackward");
    }
  }
  CHECK(matmul == 2 && uniform == 4 && ones == 0 && relu_node == 1);
  ag_profile_release(p);
  ag_tensor_release(t);
  ag_tensor_release(s);
  for (int i = 0; i < 3; ++i) ag_tensor_release(leaves[i]);
  ag_context_release(other);
  ag_context_release(ctx);
}

/* Branches big enough to run as arena tasks on a 2-thread context. */
static void test_worker_threads(void) {
  ag_context_options co = AG_CONTEXT_OPTIONS_INIT;
  ag_context *ctx = NULL;
  ag_tensor *x = NULL, *b[4] = {NULL}, *acc = NULL, *s = NULL;
  ag_profile *p = NULL;
  const ag_node *nodes[MAX_NODES];
  const int64_t n = 1 << 19;
  co.num_threads = 2;
  REQUIRE_OK(ag_context_create(&ctx, &co));
  REQUIRE_OK(ag_op_uniform(&x, ctx, AG_F32, &n, 1, -1, 1));
  CHECK_OK(ag_tensor_requires_grad(x, 1));
  CHECK_OK(ag_op_tanh(&b[0], x));
  CHECK_OK(ag_op_sigmoid(&b[1], x));
  CHECK_OK(ag_op_sin(&b[2], x));
  CHECK_OK(ag_op_add(&b[3], b[0], b[1]));
  CHECK_OK(ag_op_add(&acc, b[3], b[2]));
  CHECK_OK(ag_op_sum(&s, acc));
  const int num_nodes = graph_nodes(s, nodes);
  CHECK_OK(ag_profiler_start(ctx, NULL));
  CHECK_OK(ag_backward(s, NULL, NULL));
  REQUIRE_OK(ag_profiler_stop(&p, ctx));
  check_node_events(p, nodes, num_nodes);
  ag_profile_release(p);
  for (int i = 0; i < 4; ++i) ag_tensor_release(b[i]);
  ag_tensor_release(acc);
  ag_tensor_release(s);
  ag_tensor_release(x);
  ag_context_release(ctx);
}

static void test_chrome_trace_buffer(void) {
  ag_context *ctx = NULL;
  ag_tensor *leaves[3] = {NULL, NULL, NULL};
  ag_profile *p = NULL;
  size_t needed = 0, again = 0;
  char small[8] = "unused";
  REQUIRE_OK(ag_context_create(&ctx, NULL));
  ag_tensor *s = small_model(ctx, leaves);
  CHECK_OK(ag_profiler_start(ctx, NULL));
  CHECK_OK(ag_backward(s, NULL, NULL));
  REQUIRE_OK(ag_profiler_stop(&p, ctx));
  CHECK_STATUS(ag_profile_chrome_trace(p, NULL, 0, &needed), AG_ERR_BUFFER_TOO_SMALL);
  CHECK_STATUS(ag_profile_chrome_trace(p, small, sizeof small, &again), AG_ERR_BUFFER_TOO_SMALL);
  CHECK_STR(small, "unused");
  CHECK(needed > 100 && again == needed);
  char *buf = malloc(needed);
  REQUIRE(buf != NULL);
  CHECK_OK(ag_profile_chrome_trace(p, buf, needed, &again));
  CHECK(strlen(buf) + 1 == needed);
  CHECK_STARTS(buf, "{\"traceEvents\": [");
  CHECK_CONTAINS(buf, "\"name\": \"ReluBackward\", \"cat\": \"node\", \"ph\": \"X\"");
  free(buf);
  CHECK_ERR(ag_profile_chrome_trace(p, NULL, 0, NULL), AG_ERR_INVALID_ARGUMENT, "ag_profile_chrome_trace");
  CHECK_ERR(ag_profile_chrome_trace(p, NULL, 4, &needed), AG_ERR_INVALID_ARGUMENT, "ag_profile_chrome_trace");
  CHECK_ERR(ag_profile_write_chrome_trace(p, "/nonexistent-dir/trace.json"), AG_ERR_INVALID_ARGUMENT,
            "ag_profile_write_chrome_trace");
  CHECK_CONTAINS(ag_last_error_message(), "/nonexistent-dir/trace.json");
  ag_profile_release(p);
  ag_tensor_release(s);
  for (int i = 0; i < 3; ++i) ag_tensor_release(leaves[i]);
  ag_context_release(ctx);
}

static void test_max_events(void) {
  ag_context *ctx = NULL;
  ag_tensor *leaves[3] = {NULL, NULL, NULL};
  ag_profile *p = NULL;
  ag_profiler_options o = AG_PROFILER_OPTIONS_INIT;
  o.max_events = 3;
  REQUIRE_OK(ag_context_create(&ctx, NULL));
  ag_tensor *s = small_model(ctx, leaves);
  CHECK_OK(ag_profiler_start(ctx, &o));
  CHECK_OK(ag_backward(s, NULL, NULL));
  REQUIRE_OK(ag_profiler_stop(&p, ctx));
  CHECK(ag_profile_num_events(p) == 3);
  CHECK(ag_profile_num_dropped(p) == 9 - 3); /* 8 nodes and the pass */
  ag_profile_release(p);
  ag_tensor_release(s);
  for (int i = 0; i < 3; ++i) ag_tensor_release(leaves[i]);
  ag_context_release(ctx);
}

static void test_errors(void) {
  ag_context *ctx = NULL;
  ag_profile *p = NULL;
  ag_profiler_options o = AG_PROFILER_OPTIONS_INIT;
  const char *name = "untouched";
  REQUIRE_OK(ag_context_create(&ctx, NULL));
  CHECK_ERR(ag_profiler_start(NULL, NULL), AG_ERR_INVALID_ARGUMENT, "ag_profiler_start");
  CHECK_ERR(ag_profiler_stop(&p, ctx), AG_ERR_INVALID_ARGUMENT, "ag_profiler_stop");
  CHECK(p == NULL);
  o.max_events = -1;
  CHECK_ERR(ag_profiler_start(ctx, &o), AG_ERR_INVALID_ARGUMENT, "ag_profiler_start");
  CHECK_OK(ag_profiler_start(ctx, NULL));
  CHECK_ERR(ag_profiler_start(ctx, NULL), AG_ERR_INVALID_ARGUMENT, "ag_profiler_start");
  CHECK_CONTAINS(ag_last_error_message(), "already runs");
  CHECK_ERR(ag_profiler_stop(NULL, ctx), AG_ERR_INVALID_ARGUMENT, "ag_profiler_stop");
  REQUIRE_OK(ag_profiler_stop(&p, ctx));
  CHECK(ag_profile_num_events(p) == 0);
  CHECK_ERR(ag_profile_event(p, 0, &name, NULL, NULL, NULL, NULL), AG_ERR_INVALID_ARGUMENT, "ag_profile_event");
  CHECK_STR(name, "untouched");
  CHECK(ag_profile_num_events(NULL) == -1 && ag_profile_num_dropped(NULL) == -1);
  ag_profile_release(p);
  ag_profile_release(NULL);
  /* The profiler's reference keeps ctx valid for the stop after the
   * caller's release; the stop frees it (the leak checkers would see it). */
  CHECK_OK(ag_profiler_start(ctx, NULL));
  ag_context_release(ctx);
  CHECK(ag_context_num_threads(ctx) >= 1);
  CHECK_OK(ag_profiler_stop(&p, ctx));
  ag_profile_release(p);
}

int main(int argc, char **argv) {
  h_init(argc, argv);
  RUN(test_backward_nodes);
  RUN(test_record_calls);
  RUN(test_worker_threads);
  RUN(test_chrome_trace_buffer);
  RUN(test_max_events);
  RUN(test_errors);
  return h_finish();
}
