/*
 * tests/c_api/test_budget.c - the budgeted, resumable backward (ag/budget.h):
 * gradients bitwise equal to one ag_backward on several graphs under every
 * budget, nothing landing before ag_backward_end, cancel, failures, the hold
 * on the graph, hooks and callbacks, and release of everything (ASan's leak
 * check runs this suite).
 */
#include "harness.h"

enum { MAX_WATCH = 260 };

/* A graph under test: leaves (made once), and a builder that records the
 * graph from them and returns the root, adding non-leaves whose retained
 * gradients are compared to `watch` (released by the caller). */
typedef struct graph graph;
struct graph {
  ag_context *ctx;
  ag_tensor *leaves[MAX_WATCH];
  int nleaves;
  ag_tensor *(*build)(graph *g, ag_tensor **watch, int *nwatch);
  int restrict_to_first; /* backward with inputs = {leaves[0]} */
  int create_graph;
};

/* A snapshot of the gradients of the watched tensors: raw bytes. */
typedef struct {
  int n;
  size_t bytes[MAX_WATCH];
  unsigned char *data[MAX_WATCH]; /* NULL: no gradient */
} snapshot;

static void snap_free(snapshot *s) {
  for (int i = 0; i < s->n; ++i) free(s->data[i]);
  s->n = 0;
}

static void snap_take(snapshot *s, ag_tensor **ts, int n) {
  s->n = n;
  for (int i = 0; i < n; ++i) {
    ag_tensor *g = GRAD(ts[i]);
    s->data[i] = NULL;
    s->bytes[i] = 0;
    if (!g) continue;
    s->bytes[i] = (size_t)ag_tensor_numel(g) * ag_dtype_size(ag_tensor_dtype(g));
    s->data[i] = malloc(s->bytes[i] + 1);
    CHECK_OK(ag_tensor_copy_data(g, s->data[i], s->bytes[i]));
    REL(g);
  }
}

/* Bitwise equality of two snapshots; a gradient must be there in both. */
static int snap_equal(const snapshot *a, const snapshot *b) {
  if (a->n != b->n) return 0;
  for (int i = 0; i < a->n; ++i) {
    if ((a->data[i] == NULL) != (b->data[i] == NULL) || a->bytes[i] != b->bytes[i]) return 0;
    if (a->data[i] && memcmp(a->data[i], b->data[i], a->bytes[i]) != 0) return 0;
  }
  return 1;
}

/* Every leaf's gradient set to 0.5 (so accumulation onto an existing
 * gradient is compared too), or to none. */
static void reset_grads(graph *g, int preset) {
  for (int i = 0; i < g->nleaves; ++i) {
    ag_tensor *v = NULL;
    if (preset) {
      int64_t dims[AG_MAX_DIMS];
      int32_t nd = ag_tensor_ndim(g->leaves[i]);
      CHECK_OK(ag_tensor_shape(g->leaves[i], dims, AG_MAX_DIMS));
      CHECK_OK(ag_tensor_full(&v, g->ctx, ag_tensor_dtype(g->leaves[i]), dims, nd, 0.5));
    }
    CHECK_OK(ag_tensor_set_grad(g->leaves[i], v));
    REL(v);
  }
}

static ag_backward_options opts_of(const graph *g) {
  ag_backward_options o = AG_BACKWARD_OPTIONS_INIT;
  o.create_graph = g->create_graph;
  if (g->restrict_to_first) {
    o.num_inputs = 1;
    o.inputs = (const ag_tensor *const *)&g->leaves[0];
  }
  return o;
}

/* Clears the watched non-leaves' gradients (under create_graph they may
 * refer back to the tensor) and releases them. */
static void drop_watch(ag_tensor **watch, int from, int n) {
  for (int i = from; i < n; ++i) {
    if (ag_tensor_retains_grad(watch[i])) CHECK_OK(ag_tensor_set_grad(watch[i], NULL));
    REL(watch[i]);
  }
}

/* One reference run (ag_backward) and one budgeted run per budget; the
 * gradients must match bitwise. */
typedef struct {
  int64_t max_nodes, max_ns;
  int end_at_once; /* no steps: ag_backward_end does it all */
  const char *name;
} budget;

static const budget k_budgets[] = {
    {1, 0, 0, "one node per step"}, {7, 0, 0, "7 nodes per step"}, {0, 1, 0, "1 ns per step"},
    {0, 20000, 0, "20 us per step"}, {3, 1000000, 0, "3 nodes or 1 ms"}, {0, 0, 0, "no limit"},
    {0, 0, 1, "end only"},
};

static void compare_with_backward(graph *g, int preset) {
  ag_tensor *watch[MAX_WATCH];
  snapshot ref = {0}, got = {0};
  ag_backward_options o = opts_of(g);
  int nwatch = g->nleaves;
  memcpy(watch, g->leaves, sizeof(ag_tensor *) * (size_t)g->nleaves);
  reset_grads(g, preset);
  ag_tensor *root = g->build(g, watch, &nwatch);
  REQUIRE(root != NULL);
  CHECK_OK(ag_backward(root, NULL, &o));
  snap_take(&ref, watch, nwatch);
  REL(root);
  drop_watch(watch, g->nleaves, nwatch);
  for (size_t b = 0; b < sizeof k_budgets / sizeof k_budgets[0]; ++b) {
    const budget *bu = &k_budgets[b];
    snapshot before = {0};
    ag_backward_job *job = NULL;
    int32_t done = 0;
    int steps = 0;
    nwatch = g->nleaves;
    reset_grads(g, preset);
    root = g->build(g, watch, &nwatch);
    REQUIRE(root != NULL);
    snap_take(&before, watch, nwatch);
    if (!CHECK_OK(ag_backward_begin(&job, root, NULL, &o))) {
      snap_free(&before);
      REL(root);
      drop_watch(watch, g->nleaves, nwatch);
      continue;
    }
    REL(root); /* the job holds the graph */
    while (!bu->end_at_once && !done && steps < 1000000) {
      if (!CHECK_OK(ag_backward_step(job, bu->max_nodes, bu->max_ns, &done))) break;
      ++steps;
      if (steps == 2) { /* mid-job: nothing has landed */
        snap_take(&got, watch, nwatch);
        if (!CHECK(snap_equal(&got, &before))) printf("# mid-job change with budget '%s'\n", bu->name);
        snap_free(&got);
      }
    }
    if (bu->max_nodes == 1) CHECK(steps >= 4); /* every graph here has more nodes */
    if (done) {
      /* a step on a job that is done runs nothing and says so */
      done = 0;
      CHECK_OK(ag_backward_step(job, 1, 0, &done));
      CHECK(done == 1);
    }
    CHECK_OK(ag_backward_end(job));
    snap_take(&got, watch, nwatch);
    if (!CHECK(snap_equal(&got, &ref))) printf("# gradients differ with budget '%s'\n", bu->name);
    snap_free(&got);
    snap_free(&before);
    drop_watch(watch, g->nleaves, nwatch);
  }
  snap_free(&ref);
}

static void release_graph(graph *g) {
  reset_grads(g, 0);
  for (int i = 0; i < g->nleaves; ++i) REL(g->leaves[i]);
  ag_context_release(g->ctx);
}

/* ---- workload a: the scalar chain y = tanh(y * a + b) ... (f32) ---- */

static ag_tensor *build_chain(graph *g, ag_tensor **watch, int *nwatch) {
  (void)watch;
  (void)nwatch;
  ag_tensor *y = g->leaves[0];
  ag_tensor_retain(y);
  for (int i = 0; i < 300; ++i) {
    ag_tensor *n = NULL;
    switch (i % 3) {
      case 0: CHECK_OK(ag_op_mul(&n, y, g->leaves[1])); break;
      case 1: CHECK_OK(ag_op_add(&n, y, g->leaves[2])); break;
      default: CHECK_OK(ag_op_tanh(&n, y)); break;
    }
    REL(y);
    y = n;
  }
  return y;
}

static void make_chain(graph *g, int create_graph) {
  const int64_t none[1] = {1};
  const double x = 0.5, a = 0.9999, b = 0.0001;
  memset(g, 0, sizeof *g);
  g->ctx = NEW_CTX_THREADS(1);
  g->leaves[0] = LEAF(g->ctx, AG_F32, none, 0, &x);
  g->leaves[1] = LEAF(g->ctx, AG_F32, none, 0, &a);
  g->leaves[2] = LEAF(g->ctx, AG_F32, none, 0, &b);
  g->nleaves = 3;
  g->build = build_chain;
  g->create_graph = create_graph;
}

static void test_chain(void) {
  graph g;
  make_chain(&g, 0);
  compare_with_backward(&g, 0);
  compare_with_backward(&g, 1);
  release_graph(&g);
}

static void test_chain_create_graph(void) {
  graph g;
  make_chain(&g, 1);
  compare_with_backward(&g, 0);
  release_graph(&g);
}

/* ---- workload e: fan-in, loss = sum_i sum(W_i * x) (f64) ---- */

enum { FAN = 200, FAN_D = 16 };

static ag_tensor *build_fanin(graph *g, ag_tensor **watch, int *nwatch) {
  (void)watch;
  (void)nwatch;
  ag_tensor *loss = NULL;
  for (int i = 1; i <= FAN; ++i) {
    ag_tensor *p = NULL, *s = NULL, *n = NULL;
    CHECK_OK(ag_op_mul(&p, g->leaves[i], g->leaves[0]));
    CHECK_OK(ag_op_sum(&s, p));
    REL(p);
    if (!loss) {
      loss = s;
      continue;
    }
    CHECK_OK(ag_op_add(&n, loss, s));
    REL(s);
    REL(loss);
    loss = n;
  }
  return loss;
}

static void make_fanin(graph *g, int threads) {
  const int64_t d[1] = {FAN_D};
  double v[FAN_D];
  memset(g, 0, sizeof *g);
  g->ctx = NEW_CTX_THREADS(threads);
  for (int i = 0; i <= FAN; ++i) {
    for (int j = 0; j < FAN_D; ++j) v[j] = sin(0.37 * i + 1.3 * j);
    g->leaves[i] = LEAF(g->ctx, AG_F64, d, 1, v);
  }
  g->nleaves = FAN + 1;
  g->build = build_fanin;
}

static void test_fanin(void) {
  graph g;
  make_fanin(&g, 1);
  compare_with_backward(&g, 0);
  compare_with_backward(&g, 1);
  g.restrict_to_first = 1; /* only x's gradient */
  compare_with_backward(&g, 0);
  release_graph(&g);
}

/* ---- a mixed graph: matmul, broadcast, fan-out, a retained non-leaf ---- */

static ag_tensor *build_mixed(graph *g, ag_tensor **watch, int *nwatch) {
  ag_tensor *h0 = NULL, *h = NULL, *hh = NULL, *u = NULL, *s1 = NULL, *aa = NULL, *s2 = NULL, *l = NULL,
            *hb = NULL;
  CHECK_OK(ag_op_matmul(&h0, g->leaves[0], g->leaves[1])); /* (4,3)@(3) */
  CHECK_OK(ag_op_add(&hb, h0, g->leaves[2]));              /* + bias (4) */
  CHECK_OK(ag_op_tanh(&h, hb));
  CHECK_OK(ag_tensor_retain_grad(h));
  CHECK_OK(ag_op_mul(&hh, h, h));
  CHECK_OK(ag_op_add(&u, hh, h));
  CHECK_OK(ag_op_sum(&s1, u));
  CHECK_OK(ag_op_mul(&aa, g->leaves[0], g->leaves[3])); /* (4,3) * scalar: broadcast */
  CHECK_OK(ag_op_sum(&s2, aa));
  CHECK_OK(ag_op_add(&l, s1, s2));
  watch[(*nwatch)++] = h;
  REL(h0);
  REL(hb);
  REL(hh);
  REL(u);
  REL(s1);
  REL(aa);
  REL(s2);
  return l;
}

static void test_mixed(void) {
  const int64_t sa[2] = {4, 3}, sv[1] = {3}, sb[1] = {4}, s0[1] = {1};
  const double a[12] = {0.1, -0.2, 0.3, 0.4, -0.5, 0.6, 0.7, 0.8, -0.9, 1.0, 1.1, -1.2};
  const double v[3] = {0.3, -0.7, 1.1}, b[4] = {0.01, 0.02, -0.03, 0.04}, c = 1.7;
  graph g;
  memset(&g, 0, sizeof g);
  g.ctx = NEW_CTX();
  g.leaves[0] = LEAF(g.ctx, AG_F64, sa, 2, a);
  g.leaves[1] = LEAF(g.ctx, AG_F64, sv, 1, v);
  g.leaves[2] = LEAF(g.ctx, AG_F64, sb, 1, b);
  g.leaves[3] = LEAF(g.ctx, AG_F64, s0, 0, &c);
  g.nleaves = 4;
  g.build = build_mixed;
  compare_with_backward(&g, 0);
  compare_with_backward(&g, 1);
  release_graph(&g);
}

/* ---- two expensive branches that run side by side in a 2-thread arena ---- */

enum { BIG = 1 << 17 };

static ag_tensor *build_wide(graph *g, ag_tensor **watch, int *nwatch) {
  (void)watch;
  (void)nwatch;
  ag_tensor *y1 = NULL, *y2 = NULL, *s1 = NULL, *s2 = NULL, *l = NULL;
  CHECK_OK(ag_op_mul(&y1, g->leaves[0], g->leaves[0]));
  CHECK_OK(ag_op_sin(&y2, g->leaves[0]));
  CHECK_OK(ag_op_sum(&s1, y1));
  CHECK_OK(ag_op_sum(&s2, y2));
  CHECK_OK(ag_op_add(&l, s1, s2));
  REL(y1);
  REL(y2);
  REL(s1);
  REL(s2);
  return l;
}

static void test_parallel_waves(void) {
  const int64_t n[1] = {BIG};
  graph g;
  memset(&g, 0, sizeof g);
  g.ctx = NEW_CTX_THREADS(2);
  REQUIRE(g.ctx != NULL);
  REQUIRE_OK(ag_tensor_full(&g.leaves[0], g.ctx, AG_F32, n, 1, 0.25));
  REQUIRE_OK(ag_tensor_requires_grad(g.leaves[0], 1));
  g.nleaves = 1;
  g.build = build_wide;
  compare_with_backward(&g, 0);
  release_graph(&g);
}

/* ---- cancel, hooks and callbacks ---- */

typedef struct {
  int tensor_hook, post_hook, callback, destroyed;
} counts;

static ag_status count_tensor_hook(void *p, const ag_tensor *grad, ag_tensor **replacement) {
  (void)grad;
  (void)replacement;
  ((counts *)p)->tensor_hook++;
  return AG_OK;
}
static ag_status count_post_hook(void *p, ag_tensor *leaf) {
  (void)leaf;
  ((counts *)p)->post_hook++;
  return AG_OK;
}
static ag_status count_callback(void *p) {
  ((counts *)p)->callback++;
  return AG_OK;
}
static void count_destroy(void *p) { ((counts *)p)->destroyed++; }
static ag_status queue_from_hook(void *p, const ag_tensor *grad, ag_tensor **replacement) {
  (void)grad;
  (void)replacement;
  return ag_backward_queue_callback(count_callback, p, count_destroy);
}

/* Cancel at every point of the chain: .grad (preset) untouched, the same
 * handle; no post-accumulate hook runs; a later job on a new graph works. */
static void test_cancel(void) {
  graph g;
  counts c = {0, 0, 0, 0};
  ag_hook *h1 = NULL, *h2 = NULL;
  make_chain(&g, 0);
  REQUIRE_OK(ag_tensor_register_hook(&h1, g.leaves[0], count_tensor_hook, &c, NULL));
  REQUIRE_OK(ag_tensor_register_post_accumulate_grad_hook(&h2, g.leaves[0], count_post_hook, &c, NULL));
  for (int stop = 0; stop < 400; stop += 37) {
    ag_tensor *w[MAX_WATCH];
    int nw = 0;
    ag_backward_job *job = NULL;
    reset_grads(&g, 1);
    ag_tensor *before = GRAD(g.leaves[0]);
    ag_tensor *root = build_chain(&g, w, &nw);
    REQUIRE_OK(ag_backward_begin(&job, root, NULL, NULL));
    REL(root);
    for (int s = 0; s < stop; ++s) {
      int32_t done = 0;
      CHECK_OK(ag_backward_step(job, 1, 0, &done));
      if (done) break;
    }
    CHECK_OK(ag_backward_cancel(job));
    ag_tensor *after = GRAD(g.leaves[0]);
    CHECK(after == before);
    CHECK_GRAD_ALL(g.leaves[0], 0.5, 1, 0.0);
    CHECK_GRAD_ALL(g.leaves[1], 0.5, 1, 0.0);
    REL(before);
    REL(after);
  }
  CHECK(c.post_hook == 0);
  CHECK(c.tensor_hook >= 1); /* the leaf's tensor hook ran in the steps that reached it */
  /* the post-accumulate hook runs at ag_backward_end */
  {
    ag_tensor *w[MAX_WATCH];
    int nw = 0;
    ag_backward_job *job = NULL;
    ag_tensor *root = build_chain(&g, w, &nw);
    int32_t done = 0;
    REQUIRE_OK(ag_backward_begin(&job, root, NULL, NULL));
    REL(root);
    while (!done) CHECK_OK(ag_backward_step(job, 50, 0, &done));
    CHECK(c.post_hook == 0);
    CHECK_OK(ag_backward_end(job));
    CHECK(c.post_hook == 1);
  }
  ag_hook_remove(h1);
  ag_hook_remove(h2);
  release_graph(&g);
}

/* Queued callbacks run at the end, and are dropped (destroyed) on cancel. */
static void test_callbacks(void) {
  graph g;
  counts c = {0, 0, 0, 0};
  ag_hook *h = NULL;
  make_chain(&g, 0);
  REQUIRE_OK(ag_tensor_register_hook(&h, g.leaves[1], queue_from_hook, &c, NULL));
  for (int cancel = 0; cancel < 2; ++cancel) {
    ag_tensor *w[MAX_WATCH];
    int nw = 0;
    ag_backward_job *job = NULL;
    int32_t done = 0;
    ag_tensor *root = build_chain(&g, w, &nw);
    REQUIRE_OK(ag_backward_begin(&job, root, NULL, NULL));
    REL(root);
    while (!done) CHECK_OK(ag_backward_step(job, 0, 0, &done));
    CHECK(c.callback == cancel); /* the one of the first (ended) run */
    if (cancel) {
      CHECK_OK(ag_backward_cancel(job));
      CHECK(c.callback == 1 && c.destroyed == 2);
    } else {
      CHECK_OK(ag_backward_end(job));
      CHECK(c.callback == 1 && c.destroyed == 1);
    }
  }
  ag_hook_remove(h);
  release_graph(&g);
}

/* ---- errors ---- */

static void test_errors_arguments(void) {
  graph g;
  ag_backward_job *job = NULL;
  ag_tensor *w[MAX_WATCH], *plain = NULL;
  int nw = 0;
  int32_t done = 7;
  const int64_t s0[1] = {1};
  make_chain(&g, 0);
  CHECK_ERR(ag_backward_step(NULL, 1, 0, &done), AG_ERR_INVALID_ARGUMENT, "ag_backward_step");
  CHECK(done == 7);
  CHECK_ERR(ag_backward_end(NULL), AG_ERR_INVALID_ARGUMENT, "ag_backward_end");
  CHECK_ERR(ag_backward_cancel(NULL), AG_ERR_INVALID_ARGUMENT, "ag_backward_cancel");
  ag_tensor *root = build_chain(&g, w, &nw);
  CHECK_ERR(ag_backward_begin(NULL, root, NULL, NULL), AG_ERR_INVALID_ARGUMENT, "ag_backward_begin");
  CHECK_ERR(ag_backward_begin(&job, NULL, NULL, NULL), AG_ERR_INVALID_ARGUMENT, "ag_backward_begin");
  CHECK(job == NULL);
  plain = MAKE(g.ctx, AG_F64, s0, 0, NULL);
  CHECK_ERR(ag_backward_begin(&job, plain, NULL, NULL), AG_ERR_GRAPH, "ag_backward_begin");
  CHECK_ERR(ag_backward_begin(&job, root, plain, NULL), AG_ERR_DTYPE, "ag_backward_begin");
  CHECK(job == NULL);
  REL(plain);
  REQUIRE_OK(ag_backward_begin(&job, root, NULL, NULL));
  CHECK_ERR(ag_backward_step(job, -1, 0, &done), AG_ERR_INVALID_ARGUMENT, "ag_backward_step");
  CHECK_ERR(ag_backward_step(job, 0, -5, &done), AG_ERR_INVALID_ARGUMENT, "ag_backward_step");
  CHECK_OK(ag_backward_step(job, 1, 0, NULL)); /* done may be NULL */
  CHECK_OK(ag_backward_end(job));
  REL(root);
  release_graph(&g);
}

/* While a job holds a graph: a backward, ag_grad or second job through it
 * fails with AG_ERR_GRAPH; a graph that only shares leaves is fine. */
static void test_errors_graph_held(void) {
  graph g;
  ag_backward_job *job = NULL, *job2 = NULL;
  ag_tensor *w[MAX_WATCH], *grads[1] = {NULL};
  int nw = 0;
  make_chain(&g, 0);
  ag_tensor *root = build_chain(&g, w, &nw);
  ag_tensor *other = build_chain(&g, w, &nw);
  REQUIRE_OK(ag_backward_begin(&job, root, NULL, NULL));
  CHECK_OK(ag_backward_step(job, 10, 0, NULL));
  CHECK_ERR(ag_backward(root, NULL, NULL), AG_ERR_GRAPH, "ag_backward");
  CHECK_MSG_HAS("held by an unfinished budgeted backward");
  CHECK_ERR(ag_backward_begin(&job2, root, NULL, NULL), AG_ERR_GRAPH, "ag_backward_begin");
  CHECK(job2 == NULL);
  const ag_tensor *outs[1] = {root};
  const ag_tensor *ins[1] = {g.leaves[0]};
  CHECK_ERR(ag_grad(grads, outs, NULL, 1, ins, 1, NULL), AG_ERR_GRAPH, "ag_grad");
  CHECK(grads[0] == NULL);
  /* a graph sharing only the leaves runs (and accumulates now) */
  CHECK_OK(ag_backward(other, NULL, NULL));
  ag_tensor *mid = GRAD(g.leaves[0]);
  CHECK(mid != NULL);
  CHECK_OK(ag_backward_end(job));
  /* both contributions landed: twice the gradient of one */
  double one = 0, two = 0;
  CHECK_OK(ag_tensor_item(mid, &one));
  ag_tensor *fin = GRAD(g.leaves[0]);
  CHECK_OK(ag_tensor_item(fin, &two));
  CHECK_CLOSE(two, 2 * one, 1e-6 * fabs(one));
  REL(mid);
  REL(fin);
  /* the job released the graph's saved tensors: walking it again fails */
  CHECK_ERR(ag_backward(root, NULL, NULL), AG_ERR_GRAPH, "ag_backward");
  REL(root);
  REL(other);
  release_graph(&g);
}

/* Writing in place into a saved tensor mid-job: the step that reaches the
 * node fails with AG_ERR_VERSION, later calls repeat it, no .grad changed. */
static void test_errors_version(void) {
  const int64_t s3[1] = {3};
  const double xv[3] = {1, 2, 3};
  ag_context *ctx = NEW_CTX();
  ag_tensor *x = LEAF(ctx, AG_F64, s3, 1, xv);
  ag_tensor *e = NULL, *y = NULL, *t = NULL, *l = NULL, *two = SCALAR(ctx, AG_F64, 2.0);
  ag_backward_job *job = NULL;
  int32_t done = 0;
  REQUIRE(x && two);
  CHECK_OK(ag_op_exp(&e, x));   /* saves its result e */
  CHECK_OK(ag_op_mul(&y, e, e)); /* saves e twice */
  CHECK_OK(ag_op_tanh(&t, y));
  CHECK_OK(ag_op_sum(&l, t));
  REQUIRE_OK(ag_backward_begin(&job, l, NULL, NULL));
  CHECK_OK(ag_backward_step(job, 1, 0, &done)); /* the root's node */
  int32_t prev = 0;
  ag_grad_mode_set(0, &prev);
  CHECK_OK(ag_op_mul_(e, two)); /* bumps e's version */
  ag_grad_mode_set(prev, NULL);
  ag_status st = AG_OK;
  for (int i = 0; i < 10 && st == AG_OK && !done; ++i) st = ag_backward_step(job, 1, 0, &done);
  CHECK(st == AG_ERR_VERSION);
  CHECK_ERR(ag_backward_step(job, 1, 0, &done), AG_ERR_VERSION, "ag_backward_step");
  CHECK_MSG_HAS("failed earlier");
  CHECK_ERR(ag_backward_end(job), AG_ERR_VERSION, "ag_backward_end");
  CHECK_NO_GRAD(x);
  REL(e);
  REL(y);
  REL(t);
  REL(l);
  REL(two);
  REL(x);
  ag_context_release(ctx);
}

/* Everything released in any order while the job runs: the job keeps what
 * it needs; ending it frees the rest (ASan's leak check). */
static void test_release_everything(void) {
  graph g;
  ag_backward_job *job = NULL;
  ag_tensor *w[MAX_WATCH];
  int nw = 0;
  int32_t done = 0;
  make_fanin(&g, 1);
  ag_tensor *root = build_fanin(&g, w, &nw);
  ag_tensor *x = ag_tensor_retain(g.leaves[0]);
  REQUIRE_OK(ag_backward_begin(&job, root, NULL, NULL));
  REL(root);
  release_graph(&g); /* every leaf but x, and the context handle */
  while (!done) CHECK_OK(ag_backward_step(job, 5, 0, &done));
  CHECK_OK(ag_backward_end(job));
  ag_tensor *gx = GRAD(x);
  CHECK(gx != NULL);
  REL(gx);
  REL(x);
  /* a cancelled job whose leaves are gone frees everything too */
  make_fanin(&g, 1);
  root = build_fanin(&g, w, &nw);
  REQUIRE_OK(ag_backward_begin(&job, root, NULL, NULL));
  REL(root);
  CHECK_OK(ag_backward_step(job, 3, 0, NULL));
  release_graph(&g);
  CHECK_OK(ag_backward_cancel(job));
}

int main(int argc, char **argv) {
  h_init(argc, argv);
  RUN(test_chain);
  RUN(test_chain_create_graph);
  RUN(test_fanin);
  RUN(test_mixed);
  RUN(test_parallel_waves);
  RUN(test_cancel);
  RUN(test_callbacks);
  RUN(test_errors_arguments);
  RUN(test_errors_graph_held);
  RUN(test_errors_version);
  RUN(test_release_everything);
  return h_finish();
}
