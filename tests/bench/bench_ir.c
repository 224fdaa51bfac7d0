/*
 * tests/bench/bench_ir.c - workloads a, b and e of WORKLOADS.md (forward,
 * backward and graph teardown, one thread) without timing, for counting
 * instructions per op, which stays repeatable on a busy machine:
 *
 *   valgrind --tool=callgrind --toggle-collect=measured_repeats \
 *       --callgrind-out-file=/dev/null bench_ir a 3
 *
 * prints the total; divide by repeats x ops (bench_ir prints both).
 * One repeat runs first outside measured_repeats, so the counts are those of
 * a warm process (pools filled, task lists grown), as in bench_ag's timed
 * repeats. Exit status 2 for bad arguments, 3 when an ag call failed.
 */
#define _POSIX_C_SOURCE 200809L

#include "bench_harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N_CHAIN = 10000, K_FANIN = 1000 };

static ag_context *g_ir_ctx;
static ag_tensor *g_x, *g_a, *g_b, *g_w[K_FANIN];

/* a and b: y = x; N times cycling y * a, y + b, tanh(y); b then sums. */
static void chain_repeat(int sum) {
  CK(ag_tensor_set_grad(g_x, NULL));
  ag_tensor *y = workload_chain(g_x, g_a, g_b, N_CHAIN);
  if (sum) y = sum_and_release(y);
  CK(ag_backward(y, NULL, NULL));
  ag_tensor_release(y);
}

/* e: loss = sum(w_0 * x) + ... + sum(w_999 * x). */
static void fanin_repeat(void) {
  CK(ag_tensor_set_grad(g_x, NULL));
  for (int i = 0; i < K_FANIN; ++i) CK(ag_tensor_set_grad(g_w[i], NULL));
  ag_tensor *loss = workload_fanin(g_x, g_w, K_FANIN);
  CK(ag_backward(loss, NULL, NULL));
  ag_tensor_release(loss);
}

static void one_repeat(char w) {
  if (w == 'e') {
    fanin_repeat();
  } else {
    chain_repeat(w == 'b');
  }
}

/* The span callgrind counts (--toggle-collect=measured_repeats). */
__attribute__((noinline)) void measured_repeats(char w, int reps) {
  for (int r = 0; r < reps; ++r) one_repeat(w);
}

int main(int argc, char **argv) {
  if (argc != 3 || strlen(argv[1]) != 1 || !strchr("abe", argv[1][0]) || atoi(argv[2]) < 1) {
    fprintf(stderr, "usage: bench_ir a|b|e REPEATS\n");
    return 2;
  }
  const char w = argv[1][0];
  const int reps = atoi(argv[2]);
  ag_context_options opts = AG_CONTEXT_OPTIONS_INIT;
  opts.num_threads = 1;
  CK(ag_context_create(&g_ir_ctx, &opts));
  if (w == 'e') {
    g_x = det_tensor(g_ir_ctx, 64, 31, -1.0, 1.0);
    for (int i = 0; i < K_FANIN; ++i) {
      g_w[i] = det_tensor(g_ir_ctx, 64, (uint32_t)(1000 + i), -1.0, 1.0);
      CK(ag_tensor_requires_grad(g_w[i], 1));
    }
  } else if (w == 'a') {
    CK(ag_tensor_scalar(&g_x, g_ir_ctx, AG_F32, 0.5));
    CK(ag_tensor_scalar(&g_a, g_ir_ctx, AG_F32, 0.9999));
    CK(ag_tensor_scalar(&g_b, g_ir_ctx, AG_F32, 0.0001));
  } else {
    int64_t shape[1] = {16};
    g_x = det_tensor(g_ir_ctx, 16, 1, 0.25, 0.75);
    CK(ag_tensor_full(&g_a, g_ir_ctx, AG_F32, shape, 1, 0.9999));
    CK(ag_tensor_full(&g_b, g_ir_ctx, AG_F32, shape, 1, 0.0001));
  }
  CK(ag_tensor_requires_grad(g_x, 1));
  one_repeat(w); /* warm-up, not counted */
  measured_repeats(w, reps);
  const int ops = w == 'e' ? 3 * K_FANIN - 1 : N_CHAIN;
  printf("workload %c: %d repeats x %d ops = %lld ops counted\n", w, reps, ops, (long long)reps * ops);
  ag_tensor_release(g_x);
  if (g_a) ag_tensor_release(g_a);
  if (g_b) ag_tensor_release(g_b);
  for (int i = 0; i < K_FANIN; ++i) {
    if (g_w[i]) ag_tensor_release(g_w[i]);
  }
  ag_context_release(g_ir_ctx);
  return 0;
}
