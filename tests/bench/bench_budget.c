/*
 * tests/bench/bench_budget.c - what the budgeted backward (ag/budget.h) costs
 * over one ag_backward, on workload a (the 10,000-op scalar chain, f32) and
 * workload e (fan-in of K = 1000 products with x, D = 64) of bench_ag.
 *
 *   bench_budget [--reps N] [--threads T]
 *
 * For each workload and budget it records a fresh graph and times the whole
 * backward: ag_backward, or ag_backward_begin + every ag_backward_step +
 * ag_backward_end (no frame gaps in between). Runs alternate between the two
 * so that machine noise hits both alike; prints the medians and their ratio,
 * one JSON object per line. Exit 3 when an ag call fails, 1 when the
 * gradients of the two differ (they must be bitwise equal).
 */
#define _POSIX_C_SOURCE 200809L

#include <ag/ag.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_harness.h"

enum { N_CHAIN = 10000, K = 1000, D = 64 };
static ag_tensor *g_x, *g_a, *g_b, *g_fx, *g_w[K];

/* Workloads a and e as bench_ag records them (bench_harness.c). */
static ag_tensor *record_chain(void) { return workload_chain(g_x, g_a, g_b, N_CHAIN); }
static ag_tensor *record_fanin(void) { return workload_fanin(g_fx, g_w, K); }

static float grad_bits(ag_tensor *leaf) {
  ag_tensor *g;
  float v[D];
  CK(ag_tensor_grad(&g, leaf));
  CK(ag_tensor_copy_data(g, v, sizeof(float) * (size_t)ag_tensor_numel(g)));
  ag_tensor_release(g);
  return v[0];
}

typedef struct {
  const char *name;
  int64_t max_nodes, max_ns;
} budget;

static int run(const char *workload, ag_tensor *(*record)(void), ag_tensor *leaf, const budget *b, int reps) {
  double *plain = malloc(sizeof(double) * (size_t)reps), *job = malloc(sizeof(double) * (size_t)reps);
  double steps_total = 0;
  int same = 1;
  for (int r = -2; r < reps; ++r) { /* two warm-up rounds */
    float g1, g2;
    CK(ag_tensor_set_grad(leaf, NULL));
    ag_tensor *root = record();
    int64_t t0 = now_ns();
    CK(ag_backward(root, NULL, NULL));
    int64_t t1 = now_ns();
    ag_tensor_release(root);
    g1 = grad_bits(leaf);

    CK(ag_tensor_set_grad(leaf, NULL));
    root = record();
    ag_backward_job *jb;
    int32_t done = 0;
    int steps = 0;
    int64_t t2 = now_ns();
    CK(ag_backward_begin(&jb, root, NULL, NULL));
    while (!done) {
      CK(ag_backward_step(jb, b->max_nodes, b->max_ns, &done));
      ++steps;
    }
    CK(ag_backward_end(jb));
    int64_t t3 = now_ns();
    ag_tensor_release(root);
    g2 = grad_bits(leaf);
    same = same && memcmp(&g1, &g2, sizeof g1) == 0;
    if (r >= 0) {
      plain[r] = (double)(t1 - t0);
      job[r] = (double)(t3 - t2);
      steps_total += steps;
    }
  }
  double mp = median_of(plain, (size_t)reps), mj = median_of(job, (size_t)reps);
  printf("{\"workload\": \"%s\", \"budget\": \"%s\", \"ag_backward_us\": %.1f, \"budgeted_us\": %.1f, "
         "\"overhead_pct\": %.1f, \"steps\": %.0f, \"bitwise_equal\": %s}\n",
         workload, b->name, mp / 1e3, mj / 1e3, 100.0 * (mj / mp - 1.0), steps_total / reps, same ? "true" : "false");
  fflush(stdout);
  free(plain);
  free(job);
  return same;
}

int main(int argc, char **argv) {
  int reps = 30, threads = 1;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: bench_budget [--reps N] [--threads T]\n");
      return 2;
    }
  }
  if (reps < 1) reps = 1;
  ag_context_options o = AG_CONTEXT_OPTIONS_INIT;
  o.num_threads = threads;
  CK(ag_context_create(&g_ctx, &o));
  const int64_t sd[1] = {D};
  CK(ag_tensor_scalar(&g_x, g_ctx, AG_F32, 0.5));
  CK(ag_tensor_scalar(&g_a, g_ctx, AG_F32, 0.9999));
  CK(ag_tensor_scalar(&g_b, g_ctx, AG_F32, 0.0001));
  CK(ag_tensor_requires_grad(g_x, 1));
  CK(ag_tensor_full(&g_fx, g_ctx, AG_F32, sd, 1, 0.25));
  CK(ag_tensor_requires_grad(g_fx, 1));
  for (int i = 0; i < K; ++i) {
    CK(ag_tensor_full(&g_w[i], g_ctx, AG_F32, sd, 1, 0.001 * i - 0.5));
    CK(ag_tensor_requires_grad(g_w[i], 1));
  }
  const budget budgets[] = {
      {"unlimited (one step)", 0, 0},
      {"1000 nodes per step", 1000, 0},
      {"100 nodes per step", 100, 0},
      {"100 us per step", 0, 100000},
      {"1 node per step", 1, 0},
  };
  int ok = 1;
  for (size_t b = 0; b < sizeof budgets / sizeof budgets[0]; ++b) {
    ok &= run("a_chain_scalar", record_chain, g_x, &budgets[b], reps);
    ok &= run("e_fanin", record_fanin, g_fx, &budgets[b], reps);
  }
  for (int i = 0; i < K; ++i) ag_tensor_release(g_w[i]);
  ag_tensor_release(g_x);
  ag_tensor_release(g_a);
  ag_tensor_release(g_b);
  ag_tensor_release(g_fx);
  ag_context_release(g_ctx);
  return ok ? 0 : 1;
}
