/*
 * tests/bench/bench_linalg.c - the decompositions on the shapes of robotics
 * and simulation code: a batch of small matrices (B x n x n) and one larger
 * one, f64, 1 thread. Per op: forward, and forward + backward of sum(y)
 * (sum(logabsdet) for slogdet), median of R runs.
 *
 *   bench_linalg [--repeats R]
 *
 * Prints one JSON object per line: {"bench": "linalg", "op", "batch", "n",
 * "pass": "forward" | "backward", "median_ns", "min_ns", "cpu_median_ns"}.
 * Inputs are M + n I with M uniform in (-1, 1) (solve: B of n x 4), and
 * M M^T / n + I for cholesky, so every op succeeds.
 */
#define _POSIX_C_SOURCE 200809L

#include <ag/ag.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void check(ag_status st, const char *what) {
  if (st != AG_OK) {
    fprintf(stderr, "bench_linalg: %s: %s\n", what, ag_last_error_message());
    exit(3);
  }
}

static double clock_ns(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

enum { OP_INV, OP_DET, OP_SLOGDET, OP_SOLVE, OP_CHOLESKY, OP_COUNT };
static const char *const kNames[OP_COUNT] = {"inv", "det", "slogdet", "solve", "cholesky"};

/* The op's output to sum (a new reference). */
static ag_tensor *run(int op, const ag_tensor *a, const ag_tensor *rhs) {
  ag_tensor *y = NULL;
  switch (op) {
    case OP_INV: check(ag_op_inv(&y, a), "inv"); break;
    case OP_DET: check(ag_op_det(&y, a), "det"); break;
    case OP_SLOGDET: check(ag_op_slogdet(NULL, &y, a), "slogdet"); break;
    case OP_SOLVE: check(ag_op_solve(&y, a, rhs), "solve"); break;
    default: check(ag_op_cholesky(&y, a, 0), "cholesky"); break;
  }
  return y;
}

/* a = M + n I (or M M^T / n + I for cholesky), a leaf that requires grad. */
static ag_tensor *input(ag_context *ctx, int op, int64_t batch, int64_t n) {
  const int64_t shape[3] = {batch, n, n};
  double *v = malloc(sizeof(double) * (size_t)(batch * n * n));
  unsigned s = 12345u;
  for (int64_t i = 0; i < batch * n * n; ++i) {
    s = s * 1103515245u + 12345u;
    v[i] = ((double)(s >> 8) / 16777216.0) * 2.0 - 1.0;
  }
  if (op == OP_CHOLESKY) {
    double *w = calloc((size_t)(batch * n * n), sizeof(double));
    for (int64_t b = 0; b < batch; ++b) {
      const double *m = v + b * n * n;
      double *o = w + b * n * n;
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          double acc = i == j ? 1.0 : 0.0;
          for (int64_t k = 0; k < n; ++k) acc += m[i * n + k] * m[j * n + k] / (double)n;
          o[i * n + j] = acc;
        }
      }
    }
    free(v);
    v = w;
  } else {
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t i = 0; i < n; ++i) v[b * n * n + i * n + i] += (double)n;
    }
  }
  ag_tensor *t = NULL;
  check(ag_tensor_create(&t, ctx, AG_F64, shape, 3, v), "create");
  free(v);
  check(ag_tensor_requires_grad(t, 1), "requires_grad");
  return t;
}

int main(int argc, char **argv) {
  int repeats = 9;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--repeats") == 0 && i + 1 < argc) repeats = atoi(argv[++i]);
  }
  if (repeats < 1 || repeats > 1000) repeats = 9;
  ag_context *ctx = NULL;
  ag_context_options opts = AG_CONTEXT_OPTIONS_INIT;
  opts.num_threads = 1;
  check(ag_context_create(&ctx, &opts), "context");
  const int64_t sizes[][2] = {{1024, 4}, {256, 16}, {1, 128}};
  double *t = malloc(sizeof(double) * (size_t)repeats), *c = malloc(sizeof(double) * (size_t)repeats);
  for (int op = 0; op < OP_COUNT; ++op) {
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); ++k) {
      const int64_t batch = sizes[k][0], n = sizes[k][1];
      ag_tensor *a = input(ctx, op, batch, n), *rhs = NULL;
      const int64_t rshape[3] = {batch, n, 4};
      check(ag_tensor_full(&rhs, ctx, AG_F64, rshape, 3, 0.5), "rhs");
      for (int pass = 0; pass < 2; ++pass) {
        for (int r = 0; r < repeats; ++r) {
          const double t0 = clock_ns(CLOCK_MONOTONIC), c0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
          ag_tensor *y = run(op, a, rhs);
          if (pass == 1) {
            ag_tensor *s = NULL;
            check(ag_op_sum(&s, y), "sum");
            check(ag_backward(s, NULL, NULL), "backward");
            ag_tensor_release(s);
          }
          ag_tensor_release(y);
          t[r] = clock_ns(CLOCK_MONOTONIC) - t0;
          c[r] = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - c0;
        }
        qsort(t, (size_t)repeats, sizeof(double), cmp_double);
        qsort(c, (size_t)repeats, sizeof(double), cmp_double);
        printf("{\"bench\": \"linalg\", \"op\": \"%s\", \"batch\": %lld, \"n\": %lld, \"pass\": \"%s\", "
               "\"median_ns\": %.0f, \"min_ns\": %.0f, \"cpu_median_ns\": %.0f}\n",
               kNames[op], (long long)batch, (long long)n, pass ? "backward" : "forward", t[repeats / 2], t[0],
               c[repeats / 2]);
      }
      ag_tensor_release(rhs);
      ag_tensor_release(a);
    }
  }
  free(t);
  free(c);
  ag_context_release(ctx);
  return 0;
}
