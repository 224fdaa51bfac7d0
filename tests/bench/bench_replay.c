/*
 * tests/bench/bench_replay.c - record once, replay many (ag/replay.h) against
 * the eager forward + backward, on workload a of WORKLOADS.md (the 10,000-op
 * scalar chain, f32) and the MLP step of workload d (B = 64, 784-256-256-10,
 * nll_loss of log_softmax written as cross_entropy; no update).
 *
 *   bench_replay [--reps N] [--threads T] [--only a|d]
 *
 * Each repeat runs the eager step (fresh graph, fresh .grad, graph freed) and
 * one replay with new leaf values (ag_graph_replay with a values tensor), in
 * turn, so that machine noise hits both alike. Prints medians per workload,
 * one JSON object per line: eager and replay ns per op (a) or per step (d),
 * their ratio, and the host allocator's calls during the replays (must be 0).
 * Exit 3 when an ag call fails, 1 when a replay's output or gradient differs
 * from the eager run's on the same values (they must be bitwise equal) or a
 * replay allocated.
 */
#define _POSIX_C_SOURCE 200809L

#include <ag/ag.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_harness.h"

/* The host allocator: counts calls (malloc underneath). */
static long g_allocs;
static void *count_alloc(uint64_t size, uint64_t align, void *user) {
  (void)user;
  void *p = NULL;
  g_allocs++;
  return posix_memalign(&p, (size_t)align, size ? (size_t)size : 1) == 0 ? p : NULL;
}
static void count_free(void *p, uint64_t size, void *user) {
  (void)size, (void)user;
  free(p);
}

static int g_failed;

static int same_bits(const ag_tensor *a, const ag_tensor *b) {
  size_t n = (size_t)ag_tensor_numel(a) * ag_dtype_size(ag_tensor_dtype(a));
  char *x = malloc(n + 1), *y = malloc(n + 1);
  CK(ag_tensor_copy_data(a, x, n));
  CK(ag_tensor_copy_data(b, y, n));
  int same = memcmp(x, y, n) == 0;
  free(x);
  free(y);
  return same;
}
static int same_grad(const ag_tensor *a, const ag_tensor *b) {
  ag_tensor *ga, *gb;
  CK(ag_tensor_grad(&ga, a));
  CK(ag_tensor_grad(&gb, b));
  int same = ga && gb && same_bits(ga, gb);
  ag_tensor_release(ga);
  ag_tensor_release(gb);
  return same;
}

/* ---- a: y = x; op i: y*a, y+b, tanh(y) in turn ---- */
enum { N_CHAIN = 10000 };
static void replay_chain(int reps) {
  ag_tensor *x, *a, *b, *values[2];
  CK(ag_tensor_scalar(&x, g_ctx, AG_F32, 0.5));
  CK(ag_tensor_scalar(&a, g_ctx, AG_F32, 0.9999));
  CK(ag_tensor_scalar(&b, g_ctx, AG_F32, 0.0001));
  CK(ag_tensor_scalar(&values[0], g_ctx, AG_F32, 0.25));
  CK(ag_tensor_scalar(&values[1], g_ctx, AG_F32, 0.75));
  CK(ag_tensor_requires_grad(x, 1));
  CK(ag_graph_record_begin(g_ctx));
  ag_tensor *y = workload_chain(x, a, b, N_CHAIN);
  CK(ag_backward(y, NULL, NULL));
  ag_graph *graph;
  CK(ag_graph_record_end(&graph));

  double *eager = malloc(sizeof(double) * (size_t)reps), *replay = malloc(sizeof(double) * (size_t)reps);
  long allocs = 0;
  for (int r = 0; r < reps; ++r) {
    ag_tensor *v = values[r % 2], *ex;
    CK(ag_op_clone(&ex, v));
    CK(ag_tensor_requires_grad(ex, 1));
    int64_t t0 = now_ns();
    ag_tensor *ey = workload_chain(ex, a, b, N_CHAIN);
    CK(ag_backward(ey, NULL, NULL));
    int64_t t1 = now_ns();
    const long before = g_allocs;
    CK(ag_graph_replay(graph, 1, &x, (const ag_tensor *const *)&v));
    int64_t t2 = now_ns();
    allocs += g_allocs - before;
    if (!same_bits(y, ey) || !same_grad(x, ex)) g_failed = 1;
    ag_tensor_release(ey); /* graph teardown, outside the timing as in replay */
    ag_tensor_release(ex);
    eager[r] = (double)(t1 - t0) / N_CHAIN;
    replay[r] = (double)(t2 - t1) / N_CHAIN;
  }
  double me = median_of(eager, (size_t)reps), mr = median_of(replay, (size_t)reps);
  printf("{\"impl\": \"ag\", \"workload\": \"a_scalar_chain\", \"case\": \"N=%d f32\", \"threads\": %d, "
         "\"steps\": %lld, \"eager_fwd_bwd_ns_per_op\": %.2f, \"replay_ns_per_op\": %.2f, \"ratio\": %.3f, "
         "\"allocs_per_replay\": %.2f, \"reps\": %d}\n",
         N_CHAIN, ag_context_num_threads(g_ctx), (long long)ag_graph_num_steps(graph), me, mr, me / mr,
         (double)allocs / reps, reps);
  if (allocs != 0) g_failed = 1;
  free(eager);
  free(replay);
  ag_graph_release(graph);
  ag_tensor *all[] = {x, a, b, values[0], values[1], y};
  for (int i = 0; i < 6; ++i) ag_tensor_release(all[i]);
}

/* ---- d: the MLP step without the update ---- */
enum { B = 64, L = 3 };
static const int64_t IN[L] = {784, 256, 256}, OUT[L] = {256, 256, 10};

static ag_tensor *uniform(int64_t rows, int64_t cols, uint32_t seed, double lo, double hi) {
  int64_t n = rows * cols, shape[2] = {rows, cols};
  float *v = malloc(sizeof(float) * (size_t)n);
  uint32_t s = seed * 2654435761u + 1u;
  for (int64_t i = 0; i < n; ++i) {
    s = s * 1664525u + 1013904223u;
    v[i] = (float)(lo + (hi - lo) * (double)(s >> 8) / (double)(1u << 24));
  }
  ag_tensor *t; /* one row: a vector of cols */
  CK(ag_tensor_create(&t, g_ctx, AG_F32, rows == 1 ? &shape[1] : shape, rows == 1 ? 1 : 2, v));
  free(v);
  return t;
}

static ag_tensor *mlp_step(ag_tensor *x, ag_tensor **w, ag_tensor **b, ag_tensor *target) {
  ag_tensor *h = ag_tensor_retain(x);
  for (int l = 0; l < L; ++l) {
    ag_tensor *p, *q;
    CK(ag_op_matmul(&p, h, w[l]));
    CK(ag_op_add(&q, p, b[l]));
    ag_tensor_release(p);
    ag_tensor_release(h);
    if (l < L - 1) {
      CK(ag_op_relu(&h, q));
      ag_tensor_release(q);
    } else {
      h = q;
    }
  }
  ag_tensor *loss;
  CK(ag_op_cross_entropy(&loss, h, target, AG_REDUCTION_MEAN, AG_IGNORE_INDEX_DEFAULT, 0.0));
  ag_tensor_release(h);
  CK(ag_backward(loss, NULL, NULL));
  return loss;
}

static void replay_mlp(int reps) {
  ag_tensor *w[L], *b[L], *ew[L], *eb[L], *target, *x, *values[2];
  int64_t labels[B], tshape[1] = {B};
  for (int i = 0; i < B; ++i) labels[i] = i % 10;
  CK(ag_tensor_create(&target, g_ctx, AG_I64, tshape, 1, labels));
  for (int l = 0; l < L; ++l) {
    w[l] = uniform(IN[l], OUT[l], 22 + 2 * l, -0.05, 0.05);
    b[l] = uniform(1, OUT[l], 23 + 2 * l, -0.05, 0.05);
    CK(ag_tensor_requires_grad(w[l], 1));
    CK(ag_tensor_requires_grad(b[l], 1));
    ew[l] = uniform(IN[l], OUT[l], 22 + 2 * l, -0.05, 0.05);
    eb[l] = uniform(1, OUT[l], 23 + 2 * l, -0.05, 0.05);
    CK(ag_tensor_requires_grad(ew[l], 1));
    CK(ag_tensor_requires_grad(eb[l], 1));
  }
  x = uniform(B, 784, 21, 0, 1);
  values[0] = uniform(B, 784, 41, 0, 1);
  values[1] = uniform(B, 784, 42, 0, 1);
  CK(ag_graph_record_begin(g_ctx));
  ag_tensor *loss = mlp_step(x, w, b, target);
  ag_graph *graph;
  CK(ag_graph_record_end(&graph));

  double *eager = malloc(sizeof(double) * (size_t)reps), *replay = malloc(sizeof(double) * (size_t)reps);
  long allocs = 0;
  for (int r = 0; r < reps; ++r) {
    ag_tensor *v = values[r % 2];
    for (int l = 0; l < L; ++l) {
      CK(ag_tensor_set_grad(ew[l], NULL));
      CK(ag_tensor_set_grad(eb[l], NULL));
    }
    int64_t t0 = now_ns();
    ag_tensor *eloss = mlp_step(v, ew, eb, target);
    ag_tensor_release(eloss);
    int64_t t1 = now_ns();
    const long before = g_allocs;
    CK(ag_graph_replay(graph, 1, &x, (const ag_tensor *const *)&v));
    int64_t t2 = now_ns();
    allocs += g_allocs - before;
    for (int l = 0; l < L; ++l) {
      if (!same_grad(w[l], ew[l]) || !same_grad(b[l], eb[l])) g_failed = 1;
    }
    eager[r] = (double)(t1 - t0);
    replay[r] = (double)(t2 - t1);
  }
  double me = median_of(eager, (size_t)reps), mr = median_of(replay, (size_t)reps);
  printf("{\"impl\": \"ag\", \"workload\": \"d_mlp_step\", \"case\": \"B=64 784-256-256-10 matmul, no update\", "
         "\"threads\": %d, \"steps\": %lld, \"eager_step_us\": %.2f, \"replay_step_us\": %.2f, \"ratio\": %.3f, "
         "\"allocs_per_replay\": %.2f, \"reps\": %d}\n",
         ag_context_num_threads(g_ctx), (long long)ag_graph_num_steps(graph), me / 1e3, mr / 1e3, me / mr,
         (double)allocs / reps, reps);
  if (allocs != 0) g_failed = 1;
  free(eager);
  free(replay);
  ag_graph_release(graph);
  for (int l = 0; l < L; ++l) {
    ag_tensor_release(w[l]);
    ag_tensor_release(b[l]);
    ag_tensor_release(ew[l]);
    ag_tensor_release(eb[l]);
  }
  ag_tensor *all[] = {target, x, values[0], values[1], loss};
  for (int i = 0; i < 5; ++i) ag_tensor_release(all[i]);
}

int main(int argc, char **argv) {
  int reps = 21, threads = 1;
  const char *only = "";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--reps") == 0) reps = atoi(argv[i + 1]);
    else if (strcmp(argv[i], "--threads") == 0) threads = atoi(argv[i + 1]);
    else if (strcmp(argv[i], "--only") == 0) only = argv[i + 1];
  }
  if (reps < 1) reps = 1;
  ag_context_options o = AG_CONTEXT_OPTIONS_INIT;
  o.num_threads = threads;
  o.alloc = count_alloc;
  o.free = count_free;
  CK(ag_context_create(&g_ctx, &o));
  if (strcmp(only, "d") != 0) replay_chain(reps);
  if (strcmp(only, "a") != 0) replay_mlp(reps);
  ag_context_release(g_ctx);
  if (g_failed) fprintf(stderr, "bench_replay: a replay differs from the eager run or allocated\n");
  return g_failed;
}
