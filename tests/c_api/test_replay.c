/*
 * tests/c_api/test_replay.c - record once, replay many (ag/replay.h).
 *
 * Each graph (a scalar chain, an MLP step with matmul, relu and
 * cross_entropy, and one with broadcasting and reductions) is recorded once
 * and replayed with new leaf values; after each replay its output and the
 * leaves' .grad must be bitwise those of the same calls run eagerly on the
 * same values in fresh tensors. The context's host allocator counts its
 * calls: a replay makes none. Then what cannot be recorded: random ops,
 * in-place ops, hooks, a leaf with a .grad from before, and a replay value
 * of another shape or dtype (nothing written).
 */
#include "harness.h"

typedef struct {
  long allocs, frees;
} counter;

static ag_tensor *g_target;

static void *count_alloc(uint64_t size, uint64_t align, void *user) {
  void *p = NULL;
  ((counter *)user)->allocs++;
  if (posix_memalign(&p, (size_t)align, size ? (size_t)size : 1) != 0) return NULL;
  return p;
}

static void count_free(void *p, uint64_t size, void *user) {
  (void)size;
  ((counter *)user)->frees++;
  free(p);
}

static ag_context *counted_context(counter *c, int threads) {
  ag_context_options o = AG_CONTEXT_OPTIONS_INIT;
  o.num_threads = threads;
  o.alloc = count_alloc;
  o.free = count_free;
  o.user = c;
  ag_context *ctx = NULL;
  if (ag_context_create(&ctx, &o) != AG_OK) return NULL;
  return ctx;
}

/* Deterministic values in [lo, hi) from a seed (no ag involved). */
static void fill_values(double *v, int64_t n, unsigned seed, double lo, double hi) {
  uint32_t s = seed * 2654435761u + 12345u;
  for (int64_t i = 0; i < n; ++i) {
    s = s * 1664525u + 1013904223u;
    v[i] = lo + (hi - lo) * (double)(s >> 8) / (double)(1u << 24);
  }
}

static ag_tensor *tensor_of(ag_context *ctx, ag_dtype dt, const int64_t *shape, int32_t nd, unsigned seed, double lo,
                            double hi, int grad) {
  int64_t n = 1;
  for (int i = 0; i < nd; ++i) n *= shape[i];
  double *v = malloc(sizeof(double) * (size_t)(n ? n : 1));
  float *f = malloc(sizeof(float) * (size_t)(n ? n : 1));
  fill_values(v, n, seed, lo, hi);
  for (int64_t i = 0; i < n; ++i) f[i] = (float)v[i];
  ag_tensor *t = NULL;
  ag_tensor_create(&t, ctx, dt, shape, nd, dt == AG_F32 ? (const void *)f : (const void *)v);
  free(v);
  free(f);
  if (t && grad) ag_tensor_requires_grad(t, 1);
  return t;
}

/* Whether a and b hold the same bytes (same shape and dtype). */
static int same_bits(const ag_tensor *a, const ag_tensor *b) {
  if (!a || !b) return 0;
  int64_t na = ag_tensor_numel(a), nb = ag_tensor_numel(b);
  if (na != nb || ag_tensor_dtype(a) != ag_tensor_dtype(b)) return 0;
  size_t bytes = (size_t)na * ag_dtype_size(ag_tensor_dtype(a));
  char *x = malloc(bytes + 1), *y = malloc(bytes + 1);
  int ok = ag_tensor_copy_data(a, x, bytes) == AG_OK && ag_tensor_copy_data(b, y, bytes) == AG_OK &&
           memcmp(x, y, bytes) == 0;
  free(x);
  free(y);
  return ok;
}

static int same_grad(const ag_tensor *a, const ag_tensor *b) {
  ag_tensor *ga = NULL, *gb = NULL;
  ag_tensor_grad(&ga, a);
  ag_tensor_grad(&gb, b);
  int ok = same_bits(ga, gb);
  if (ga) ag_tensor_release(ga);
  if (gb) ag_tensor_release(gb);
  return ok;
}

/* A graph under test: builds the loss from its leaves; returns it. */
enum { MAX_LEAVES = 6 };
typedef ag_tensor *(*build_fn)(ag_tensor **leaves);

typedef struct {
  int nleaves;
  int64_t shape[MAX_LEAVES][3];
  int32_t ndim[MAX_LEAVES];
  int grad[MAX_LEAVES];
  ag_dtype dtype;
  build_fn build;
} graph_spec;

/* The context of the graph under test, for constants the builders make. */
static ag_context *g_ctx;

static ag_tensor *make_leaf(ag_context *ctx, const graph_spec *g, int i, unsigned seed) {
  return tensor_of(ctx, g->dtype, g->shape[i], g->ndim[i], seed * 31u + (unsigned)i, -1.0, 1.0, g->grad[i]);
}

/* Records g once, replays it with three sets of new leaf values, and
 * compares each replay with the eager run on the same values. */
static void check_replay(const graph_spec *g, int threads) {
  counter c = {0, 0};
  ag_context *ctx = counted_context(&c, threads);
  REQUIRE(ctx != NULL);
  g_ctx = ctx;
  /* cross_entropy's class indices (a constant of the MLP step) */
  int64_t tshape[1] = {8};
  int64_t labels[8] = {0, 1, 2, 3, 0, 1, 2, 3};
  REQUIRE(CHECK_STATUS(ag_tensor_create(&g_target, ctx, AG_I64, tshape, 1, labels), AG_OK));
  ag_tensor *leaves[MAX_LEAVES];
  for (int i = 0; i < g->nleaves; ++i) leaves[i] = make_leaf(ctx, g, i, 1);

  REQUIRE(CHECK_STATUS(ag_graph_record_begin(ctx), AG_OK));
  ag_tensor *loss = g->build(leaves);
  REQUIRE(loss != NULL);
  CHECK_STATUS(ag_backward(loss, NULL, NULL), AG_OK);
  ag_graph *graph = NULL;
  REQUIRE(CHECK_STATUS(ag_graph_record_end(&graph), AG_OK));
  CHECK(ag_graph_num_steps(graph) > 0);

  for (unsigned round = 2; round < 5; ++round) {
    ag_tensor *values[MAX_LEAVES], *fresh[MAX_LEAVES];
    for (int i = 0; i < g->nleaves; ++i) {
      values[i] = make_leaf(ctx, g, i, round);
      ag_tensor_requires_grad(values[i], 0);
    }
    const long before = c.allocs;
    CHECK_STATUS(ag_graph_replay(graph, g->nleaves, leaves, (const ag_tensor *const *)values), AG_OK);
    CHECK(c.allocs == before); /* no allocation per replay */

    for (int i = 0; i < g->nleaves; ++i) fresh[i] = make_leaf(ctx, g, i, round);
    ag_tensor *eager = g->build(fresh);
    REQUIRE(eager != NULL);
    CHECK_STATUS(ag_backward(eager, NULL, NULL), AG_OK);
    CHECK(same_bits(loss, eager));
    for (int i = 0; i < g->nleaves; ++i) {
      CHECK(same_bits(leaves[i], fresh[i]));
      if (g->grad[i]) CHECK(same_grad(leaves[i], fresh[i]));
    }
    ag_tensor_release(eager);
    for (int i = 0; i < g->nleaves; ++i) {
      ag_tensor_release(values[i]);
      ag_tensor_release(fresh[i]);
    }
  }
  /* Replay overwrites .grad: after set_grad(NULL), the leaf gets it back. */
  if (g->grad[0]) {
    ag_tensor *before = NULL;
    ag_tensor_grad(&before, leaves[0]);
    CHECK_STATUS(ag_tensor_set_grad(leaves[0], NULL), AG_OK);
    CHECK_STATUS(ag_graph_replay(graph, 0, NULL, NULL), AG_OK);
    ag_tensor *after = NULL;
    ag_tensor_grad(&after, leaves[0]);
    CHECK(after != NULL && same_bits(before, after));
    if (before) ag_tensor_release(before);
    if (after) ag_tensor_release(after);
  }
  ag_tensor_release(loss);
  for (int i = 0; i < g->nleaves; ++i) ag_tensor_release(leaves[i]);
  ag_tensor_release(g_target);
  ag_graph_release(graph); /* the graph kept the tensors alive until here */
  ag_context_release(ctx);
  CHECK(c.allocs == c.frees);
}

/* ---- the graphs ---- */

/* a scalar chain as in benchmark workload a: y = tanh((y * a) + b), 30 ops */
static ag_tensor *build_chain(ag_tensor **l) {
  ag_tensor *y = l[0];
  ag_tensor_retain(y);
  for (int i = 0; i < 30; ++i) {
    ag_tensor *n = NULL;
    switch (i % 3) {
      case 0: ag_op_mul(&n, y, l[1]); break;
      case 1: ag_op_add(&n, y, l[2]); break;
      default: ag_op_tanh(&n, y); break;
    }
    ag_tensor_release(y);
    if (!n) return NULL;
    y = n;
  }
  return y;
}

/* an MLP step: cross_entropy(relu(X @ W1 + b1) @ W2 + b2, target) */
static ag_tensor *build_mlp(ag_tensor **l) {
  ag_tensor *h1 = NULL, *h2 = NULL, *h3 = NULL, *h4 = NULL, *h5 = NULL, *loss = NULL;
  ag_op_matmul(&h1, l[0], l[1]);
  ag_op_add(&h2, h1, l[2]);
  ag_op_relu(&h3, h2);
  ag_op_matmul(&h4, h3, l[3]);
  ag_op_add(&h5, h4, l[4]);
  ag_op_cross_entropy(&loss, h5, g_target, AG_REDUCTION_MEAN, AG_IGNORE_INDEX_DEFAULT, 0.0);
  ag_tensor *all[] = {h1, h2, h3, h4, h5};
  for (int i = 0; i < 5; ++i) {
    if (all[i]) ag_tensor_release(all[i]);
  }
  return loss;
}

/* broadcasting and reductions: sum(mean_dims(exp(x * v + c) / (c - 3), 0)) + mean(x) */
static ag_tensor *build_broadcast(ag_tensor **l) {
  ag_tensor *a = NULL, *b = NULL, *e = NULL, *three = NULL, *d = NULL, *q = NULL, *m = NULL, *s = NULL, *mx = NULL,
            *out = NULL;
  int64_t dim0 = 0;
  ag_op_mul(&a, l[0], l[1]);          /* [4,3] * [3] */
  ag_op_add(&b, a, l[2]);             /* + [4,1] */
  ag_op_exp(&e, b);
  ag_tensor_scalar(&three, g_ctx, ag_tensor_dtype(l[0]), 3.0);
  ag_op_sub(&d, l[2], three);         /* [4,1] - [] */
  ag_op_div(&q, e, d);
  ag_op_mean_dims(&m, q, &dim0, 1, 0); /* [3] */
  ag_op_sum(&s, m);
  ag_op_mean(&mx, l[0]);
  ag_op_add(&out, s, mx);
  ag_tensor *all[] = {a, b, e, three, d, q, m, s, mx};
  for (int i = 0; i < 9; ++i) {
    if (all[i]) ag_tensor_release(all[i]);
  }
  return out;
}

static void test_scalar_chain(ag_dtype dt) {
  graph_spec g = {3, {{0}, {0}, {0}}, {0, 0, 0}, {1, 0, 0}, dt, build_chain};
  check_replay(&g, 1);
}

static void test_mlp_step(ag_dtype dt) {
  graph_spec g = {5, {{8, 5}, {5, 6}, {6}, {6, 4}, {4}}, {2, 2, 1, 2, 1}, {0, 1, 1, 1, 1}, dt, build_mlp};
  check_replay(&g, 1);
  check_replay(&g, 2);
}

static void test_broadcast_reduce(ag_dtype dt) {
  graph_spec g = {3, {{4, 3}, {3}, {4, 1}}, {2, 1, 2}, {1, 1, 1}, dt, build_broadcast};
  check_replay(&g, 1);
}

/* ---- what cannot be recorded ---- */

static int message_has(const char *part) {
  const char *m = ag_last_error_message();
  return m != NULL && strstr(m, part) != NULL;
}

/* Ends the thread's recording expecting `status`, and no graph. */
static void end_expecting(ag_status status) {
  ag_graph *g = (ag_graph *)1;
  CHECK_STATUS(ag_graph_record_end(&g), status);
  CHECK(g == NULL);
}

static ag_status pass_hook(void *u, const ag_tensor *g, ag_tensor **r) {
  (void)u, (void)g, (void)r;
  return AG_OK;
}

static void test_refusals(void) {
  counter c = {0, 0};
  ag_context *ctx = counted_context(&c, 1);
  REQUIRE(ctx != NULL);
  int64_t shape[1] = {4};
  ag_tensor *x = tensor_of(ctx, AG_F32, shape, 1, 7, -1.0, 1.0, 1), *y = NULL;

  /* random draws */
  REQUIRE(CHECK_STATUS(ag_graph_record_begin(ctx), AG_OK));
  CHECK_STATUS(ag_graph_record_begin(ctx), AG_ERR_INVALID_ARGUMENT); /* records already */
  CHECK_STATUS(ag_op_randn(&y, ctx, AG_F32, shape, 1), AG_ERR_UNSUPPORTED);
  CHECK(message_has("ag_op_randn") && message_has("random"));
  end_expecting(AG_ERR_UNSUPPORTED);
  CHECK(message_has("ag_op_randn"));

  /* in place */
  ag_tensor *z = NULL;
  ag_tensor_zeros(&z, ctx, AG_F32, shape, 1);
  REQUIRE(CHECK_STATUS(ag_graph_record_begin(ctx), AG_OK));
  CHECK_STATUS(ag_op_add_(z, x), AG_ERR_UNSUPPORTED);
  CHECK(message_has("in place"));
  end_expecting(AG_ERR_UNSUPPORTED);

  /* a write into an existing tensor */
  float v[4] = {1, 2, 3, 4};
  REQUIRE(CHECK_STATUS(ag_graph_record_begin(ctx), AG_OK));
  CHECK_STATUS(ag_tensor_copy_from(z, v, sizeof v), AG_ERR_UNSUPPORTED);
  end_expecting(AG_ERR_UNSUPPORTED);
  CHECK(message_has("ag_tensor_copy_from"));

  /* an op without replayable kernels (a scan) */
  REQUIRE(CHECK_STATUS(ag_graph_record_begin(ctx), AG_OK));
  CHECK_STATUS(ag_op_cumsum(&y, x, 0), AG_ERR_UNSUPPORTED);
  CHECK(message_has("ag_op_cumsum"));
  /* after the refusal: ops fail before they run (no outputs to leak, also
   * of several-output ops), other calls still work */
  ag_tensor *var = (ag_tensor *)1, *mean = (ag_tensor *)1, *w = NULL;
  CHECK_STATUS(ag_op_var_mean(&var, &mean, x, NULL, 0, 0, 1.0), AG_ERR_UNSUPPORTED);
  CHECK(var == (ag_tensor *)1 && mean == (ag_tensor *)1); /* on failure outs are not written */
  CHECK(message_has("failed already") && message_has("ag_op_cumsum"));
  REQUIRE(CHECK_STATUS(ag_tensor_zeros(&w, ctx, AG_F32, shape, 1), AG_OK));
  float wv[4] = {1, 1, 1, 1};
  CHECK_STATUS(ag_tensor_copy_data(w, wv, sizeof wv), AG_OK);
  CHECK(wv[0] == 0.0f && wv[3] == 0.0f);
  ag_tensor_release(w);
  end_expecting(AG_ERR_UNSUPPORTED);
  CHECK(message_has("ag_op_cumsum"));

  /* a hook registered while recording, and one registered before */
  REQUIRE(CHECK_STATUS(ag_graph_record_begin(ctx), AG_OK));
  CHECK_STATUS(ag_tensor_register_hook(NULL, x, pass_hook, NULL, NULL), AG_ERR_UNSUPPORTED);
  end_expecting(AG_ERR_UNSUPPORTED);
  ag_tensor *e = NULL, *s = NULL;
  REQUIRE(CHECK_STATUS(ag_op_exp(&e, x), AG_OK));
  REQUIRE(CHECK_STATUS(ag_tensor_register_hook(NULL, e, pass_hook, NULL, NULL), AG_OK));
  REQUIRE(CHECK_STATUS(ag_graph_record_begin(ctx), AG_OK));
  REQUIRE(CHECK_STATUS(ag_op_sum(&s, e), AG_OK));
  CHECK_STATUS(ag_backward(s, NULL, NULL), AG_ERR_UNSUPPORTED);
  CHECK(message_has("hooks"));
  end_expecting(AG_ERR_UNSUPPORTED);
  ag_tensor_release(s);
  ag_tensor_release(e);

  /* a leaf whose .grad is from before the recording */
  s = NULL;
  REQUIRE(CHECK_STATUS(ag_op_sum(&s, x), AG_OK));
  REQUIRE(CHECK_STATUS(ag_backward(s, NULL, NULL), AG_OK));
  ag_tensor_release(s);
  REQUIRE(CHECK_STATUS(ag_graph_record_begin(ctx), AG_OK));
  REQUIRE(CHECK_STATUS(ag_op_sum(&s, x), AG_OK));
  CHECK_STATUS(ag_backward(s, NULL, NULL), AG_ERR_GRAPH);
  CHECK(message_has("before the recording"));
  end_expecting(AG_ERR_GRAPH);
  ag_tensor_release(s);
  CHECK_STATUS(ag_graph_record_end(NULL), AG_ERR_INVALID_ARGUMENT);
  ag_graph *none = NULL;
  CHECK_STATUS(ag_graph_record_end(&none), AG_ERR_INVALID_ARGUMENT); /* not recording */

  /* a replay value of another shape or dtype: nothing written */
  CHECK_STATUS(ag_tensor_set_grad(x, NULL), AG_OK);
  ag_tensor *t = NULL;
  REQUIRE(CHECK_STATUS(ag_graph_record_begin(ctx), AG_OK));
  REQUIRE(CHECK_STATUS(ag_op_tanh(&t, x), AG_OK));
  REQUIRE(CHECK_STATUS(ag_op_sum(&s, t), AG_OK));
  REQUIRE(CHECK_STATUS(ag_backward(s, NULL, NULL), AG_OK));
  CHECK_STATUS(ag_graph_replay((ag_graph *)NULL, 0, NULL, NULL), AG_ERR_INVALID_ARGUMENT);
  ag_graph *g = NULL;
  REQUIRE(CHECK_STATUS(ag_graph_record_end(&g), AG_OK));
  int64_t other[1] = {5};
  ag_tensor *ok_value = tensor_of(ctx, AG_F32, shape, 1, 8, -1.0, 1.0, 0);
  ag_tensor *bad_shape = tensor_of(ctx, AG_F32, other, 1, 9, -1.0, 1.0, 0);
  ag_tensor *bad_dtype = tensor_of(ctx, AG_F64, shape, 1, 9, -1.0, 1.0, 0);
  ag_tensor *old_x = NULL, *old_s = NULL;
  ag_op_clone(&old_x, x);
  ag_op_clone(&old_s, s);
  ag_tensor *leaves[2] = {x, x};
  const ag_tensor *values[2] = {ok_value, bad_shape};
  CHECK_STATUS(ag_graph_replay(g, 2, leaves, values), AG_ERR_SHAPE);
  CHECK(message_has("values[1]") && message_has("(5)"));
  values[1] = bad_dtype;
  CHECK_STATUS(ag_graph_replay(g, 2, leaves, values), AG_ERR_DTYPE);
  CHECK(same_bits(x, old_x) && same_bits(s, old_s)); /* nothing written, nothing ran */
  CHECK_STATUS(ag_graph_replay(g, -1, NULL, NULL), AG_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(ag_graph_replay(g, 1, leaves, values), AG_OK);
  CHECK(same_bits(x, ok_value) && !same_bits(s, old_s));
  ag_graph_release(g);
  ag_graph_release(NULL);
  CHECK(ag_graph_num_steps(NULL) == -1);

  ag_tensor *all[] = {x, z, t, s, ok_value, bad_shape, bad_dtype, old_x, old_s};
  for (int i = 0; i < 9; ++i) ag_tensor_release(all[i]);
  ag_context_release(ctx);
  CHECK(c.allocs == c.frees);
}

/* Ops that write into a tensor after a replayable step made it (a copy of
 * x, a fill) by kernels that replay does not repeat: recording refuses them
 * (replay would have rewritten the copy or the fill alone). */
static void test_untraced_writes_refused(void) {
  ag_context *ctx = NULL;
  REQUIRE(CHECK_STATUS(ag_context_create(&ctx, NULL), AG_OK));
  int64_t shape[1] = {4}, two[1] = {2};
  ag_tensor *x = tensor_of(ctx, AG_F32, shape, 1, 11, -1.0, 1.0, 1);
  ag_tensor *src = tensor_of(ctx, AG_F32, two, 1, 12, -1.0, 1.0, 0);
  const int64_t iv[2] = {3, 1};
  ag_tensor *idx = NULL;
  REQUIRE(CHECK_STATUS(ag_tensor_create(&idx, ctx, AG_I64, two, 1, iv), AG_OK));
  ag_tensor *y = NULL, *s = NULL;

  REQUIRE(CHECK_STATUS(ag_graph_record_begin(ctx), AG_OK));
  CHECK_STATUS(ag_op_index_add(&y, x, 0, idx, src), AG_ERR_UNSUPPORTED);
  CHECK(message_has("ag_op_index_add"));
  end_expecting(AG_ERR_UNSUPPORTED);

  REQUIRE(CHECK_STATUS(ag_graph_record_begin(ctx), AG_OK));
  CHECK_STATUS(ag_op_scatter_add(&y, x, 0, idx, src), AG_ERR_UNSUPPORTED);
  end_expecting(AG_ERR_UNSUPPORTED);

  const int64_t pads[2] = {1, 2};
  REQUIRE(CHECK_STATUS(ag_graph_record_begin(ctx), AG_OK));
  CHECK_STATUS(ag_op_pad(&y, x, pads, 2, AG_PAD_CONSTANT, 0.5), AG_ERR_UNSUPPORTED);
  CHECK(message_has("ag_op_pad"));
  end_expecting(AG_ERR_UNSUPPORTED);

  REQUIRE(CHECK_STATUS(ag_graph_record_begin(ctx), AG_OK));
  CHECK_STATUS(ag_op_eye(&y, ctx, AG_F32, 3, 3), AG_ERR_UNSUPPORTED);
  end_expecting(AG_ERR_UNSUPPORTED);

  REQUIRE(CHECK_STATUS(ag_graph_record_begin(ctx), AG_OK));
  CHECK_STATUS(ag_op_one_hot(&y, idx, 5), AG_ERR_UNSUPPORTED);
  end_expecting(AG_ERR_UNSUPPORTED);

  /* the gradient of a slice: zeros with the slice's gradient copied in */
  ag_tensor *v = NULL;
  REQUIRE(CHECK_STATUS(ag_graph_record_begin(ctx), AG_OK));
  ag_status st = ag_op_slice(&v, x, 0, 1, 3, 1);
  if (st == AG_OK) {
    REQUIRE(CHECK_STATUS(ag_op_sum(&s, v), AG_OK));
    CHECK_STATUS(ag_backward(s, NULL, NULL), AG_ERR_UNSUPPORTED);
    CHECK(message_has("Slice"));
  } else {
    CHECK(st == AG_ERR_UNSUPPORTED);
  }
  end_expecting(AG_ERR_UNSUPPORTED);
  ag_tensor_release(s);
  ag_tensor_release(v);

  ag_tensor_release(x);
  ag_tensor_release(src);
  ag_tensor_release(idx);
  ag_context_release(ctx);
}

int main(int argc, char **argv) {
  h_init(argc, argv);
  RUN_F64_F32(test_scalar_chain);
  RUN_F64_F32(test_mlp_step);
  RUN_F64_F32(test_broadcast_reduce);
  RUN(test_refusals);
  RUN(test_untraced_writes_refused);
  return h_finish();
}
