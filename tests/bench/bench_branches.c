/*
 * tests/bench/bench_branches.c - backward through independent branches, the
 * case where the engine runs ready nodes as tasks in the context's arena.
 *
 *   bench_branches [--branches 4] [--depth 6] [--sizes 4096,16384,65536,262144]
 *                  [--threads 1,2] [--repeats R]
 *
 * loss = sum_k sum(chain_k(x * c_k)) over `branches` branches, each a chain of
 * `depth` (tanh, mul) pairs on n elements; x requires grad. Prints one JSON
 * line per size and thread count: {"bench": "branches", "n", "branches",
 * "depth", "threads", "bwd_median_ns", "bwd_min_ns", "repeats",
 * "grad_sum"} and, per size, {"impl": "ratio", "t1_over_tn": ...} (the
 * speedup of the largest thread count over 1). grad_sum must not depend on
 * the thread count: the program exits 1 if it does.
 */
#define _POSIX_C_SOURCE 200809L

#include "bench_harness.h"

#include <stdlib.h>
#include <string.h>

#define MAX_LIST 8

static int parse_list(const char *s, int64_t *out) {
  int n = 0;
  while (*s && n < MAX_LIST) {
    char *end;
    out[n++] = strtoll(s, &end, 10);
    s = *end == ',' ? end + 1 : end;
    if (end == s && *s) return -1;
  }
  return n;
}

typedef struct {
  double median, min, grad_sum;
} result_t;

static result_t run(int threads, int64_t n, int branches, int depth, int repeats) {
  ag_context_options opts = AG_CONTEXT_OPTIONS_INIT;
  opts.num_threads = threads;
  ag_context *ctx;
  CK(ag_context_create(&ctx, &opts));
  ag_tensor *x = det_tensor(ctx, n, 21, -1, 1);
  CK(ag_tensor_requires_grad(x, 1));
  dvec times = {0};
  double gsum = 0;
  for (int r = 0; r < repeats + 2; ++r) { /* 2 warm-up repeats */
    ag_scope *scope;
    CK(ag_scope_begin(&scope));
    ag_tensor *loss = NULL;
    for (int k = 0; k < branches; ++k) {
      ag_tensor *c = det_tensor(ctx, n, 100 + (uint32_t)k, 0.5, 1.5), *h, *s;
      CK(ag_op_mul(&h, x, c));
      for (int d = 0; d < depth; ++d) {
        CK(ag_op_tanh(&h, h));
        CK(ag_op_mul(&h, h, c));
      }
      CK(ag_op_sum(&s, h));
      if (loss) {
        CK(ag_op_add(&loss, loss, s));
      } else {
        loss = s;
      }
    }
    CK(ag_tensor_set_grad(x, NULL));
    const int64_t t0 = now_ns();
    CK(ag_backward(loss, NULL, NULL));
    const int64_t t1 = now_ns();
    if (r >= 2) dv_push(&times, (double)(t1 - t0));
    gsum = grad_sum(x);
    ag_scope_end(scope);
  }
  stats_t st = stats(&times);
  dv_free(&times);
  ag_tensor_release(x);
  ag_context_release(ctx);
  result_t res = {st.median, st.min, gsum};
  return res;
}

int main(int argc, char **argv) {
  int64_t sizes[MAX_LIST] = {4096, 16384, 65536, 262144}, threads[MAX_LIST] = {1, 2};
  int nsizes = 4, nthreads = 2, branches = 4, depth = 6, repeats = 51;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--sizes")) {
      nsizes = parse_list(argv[i + 1], sizes);
    } else if (!strcmp(argv[i], "--threads")) {
      nthreads = parse_list(argv[i + 1], threads);
    } else if (!strcmp(argv[i], "--branches")) {
      branches = atoi(argv[i + 1]);
    } else if (!strcmp(argv[i], "--depth")) {
      depth = atoi(argv[i + 1]);
    } else if (!strcmp(argv[i], "--repeats")) {
      repeats = atoi(argv[i + 1]);
    } else {
      fprintf(stderr, "bench_branches: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  if (nsizes <= 0 || nthreads <= 0 || branches < 1 || depth < 0 || repeats < 1) {
    fprintf(stderr, "bench_branches: bad arguments\n");
    return 2;
  }
  int status = 0;
  for (int s = 0; s < nsizes; ++s) {
    result_t first = {0, 0, 0}, last = {0, 0, 0};
    for (int t = 0; t < nthreads; ++t) {
      result_t r = run((int)threads[t], sizes[s], branches, depth, repeats);
      printf("{\"bench\": \"branches\", \"n\": %lld, \"branches\": %d, \"depth\": %d, \"threads\": %lld, "
             "\"bwd_median_ns\": %.0f, \"bwd_min_ns\": %.0f, \"repeats\": %d, \"grad_sum\": %.17g}\n",
             (long long)sizes[s], branches, depth, (long long)threads[t], r.median, r.min, repeats, r.grad_sum);
      if (t == 0) first = r;
      if (t > 0 && memcmp(&r.grad_sum, &first.grad_sum, sizeof(double)) != 0) {
        fprintf(stderr, "bench_branches: grad_sum differs between thread counts\n");
        status = 1;
      }
      last = r;
    }
    if (nthreads > 1) {
      printf("{\"impl\": \"ratio\", \"n\": %lld, \"t1_over_tn\": %.3f}\n", (long long)sizes[s],
             first.median / last.median);
    }
    fflush(stdout);
  }
  return status;
}
