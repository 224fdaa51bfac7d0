/*
 * tests/bench/bench_gemm.c - ag_op_matmul throughput (f32, n x n x n) at 1 and
 * 2 threads, next to OpenBLAS cblas_sgemm in the same process when the build
 * found OpenBLAS (AG_BENCH_OPENBLAS).
 *
 *   bench_gemm [--sizes 512,1024] [--threads 1,2] [--repeats R]
 *
 * Prints one JSON object per line: {"bench": "gemm", "impl": "ag" | "openblas",
 * "dtype": "f32", "n": N, "threads": T, "median_ns", "min_ns", "gflops" (at the
 * median), "gflops_best", "cpu_median_ns" (process CPU time: on a busy
 * machine the 1-thread figure that time slicing does not inflate; at 2
 * threads it includes OpenBLAS's busy-waiting), "repeats"}, and per size and
 * thread count a line {"impl": "ratio", "ag_over_openblas": ...} of the
 * median GFLOP/s, with "ag_over_openblas_cpu" from the CPU times.
 * ag's time includes allocating and freeing the output tensor.
 *
 * OpenBLAS 0.3.21 does not recognise this CPU generation and falls back to
 * slow kernels: the program re-executes itself with OPENBLAS_CORETYPE set to
 * Cooperlake (or to $AG_BENCH_OPENBLAS_CORETYPE) unless it already is. OpenBLAS's pthread workers busy-wait after a
 * call, which would take a core from ag's threads, so the multi-threaded
 * OpenBLAS runs come last.
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE 1

#include <ag/ag.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef AG_BENCH_OPENBLAS
#include <cblas.h>
void openblas_set_num_threads(int num_threads);
#endif

#define MAX_LIST 8

static void die(const char *what) {
  fprintf(stderr, "bench_gemm: %s: %s\n", what, ag_last_error_message());
  exit(3);
}

static double clock_ns(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}
static double now_ns(void) { return clock_ns(CLOCK_MONOTONIC); }
static double cpu_ns(void) { return clock_ns(CLOCK_PROCESS_CPUTIME_ID); }

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int parse_list(const char *s, int *out) {
  int n = 0;
  while (*s && n < MAX_LIST) {
    out[n++] = atoi(s);
    const char *c = strchr(s, ',');
    if (!c) break;
    s = c + 1;
  }
  return n;
}

/* Deterministic inputs in [-1, 1). */
static void fill(float *x, size_t n, uint64_t seed) {
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    x[i] = (float)((double)(seed >> 11) / 9007199254740992.0 * 2.0 - 1.0);
  }
}

typedef struct {
  double median_ns, min_ns, cpu_median_ns;
} timing;

static double median(double *t, int r) {
  qsort(t, (size_t)r, sizeof(double), cmp_double);
  return r % 2 ? t[r / 2] : 0.5 * (t[r / 2 - 1] + t[r / 2]);
}

/* t: wall times, c: CPU times of the r repeats */
static timing summarize(double *t, double *c, int r) {
  timing s;
  s.median_ns = median(t, r);
  s.min_ns = t[0];
  s.cpu_median_ns = median(c, r);
  return s;
}

static void report(const char *impl, int n, int threads, timing t, int repeats) {
  const double flops = 2.0 * n * (double)n * n;
  printf("{\"bench\": \"gemm\", \"impl\": \"%s\", \"dtype\": \"f32\", \"n\": %d, \"threads\": %d, "
         "\"median_ns\": %.0f, \"min_ns\": %.0f, \"gflops\": %.1f, \"gflops_best\": %.1f, \"cpu_median_ns\": %.0f, "
         "\"repeats\": %d}\n",
         impl, n, threads, t.median_ns, t.min_ns, flops / t.median_ns, flops / t.min_ns, t.cpu_median_ns, repeats);
  fflush(stdout);
}

/* ag_op_matmul on a context with `threads` threads; also leaves C in `c`. */
static timing time_ag(int n, int threads, int repeats, const float *a, const float *b, float *c) {
  ag_context_options o = AG_CONTEXT_OPTIONS_INIT;
  o.num_threads = threads;
  ag_context *ctx = NULL;
  if (ag_context_create(&ctx, &o) != AG_OK) die("ag_context_create");
  const int64_t shape[2] = {n, n};
  ag_tensor *ta = NULL, *tb = NULL;
  if (ag_tensor_create(&ta, ctx, AG_F32, shape, 2, a) != AG_OK) die("ag_tensor_create");
  if (ag_tensor_create(&tb, ctx, AG_F32, shape, 2, b) != AG_OK) die("ag_tensor_create");
  double *t = malloc(sizeof(double) * 2 * (size_t)repeats), *cpu = t + repeats;
  if (!t) die("malloc");
  for (int r = -2; r < repeats; ++r) { /* two warm-up runs */
    ag_tensor *y = NULL;
    const double t0 = now_ns(), c0 = cpu_ns();
    if (ag_op_matmul(&y, ta, tb) != AG_OK) die("ag_op_matmul");
    ag_tensor_release(y);
    if (r >= 0) t[r] = now_ns() - t0, cpu[r] = cpu_ns() - c0;
  }
  ag_tensor *y = NULL; /* the result, for comparison with OpenBLAS */
  if (ag_op_matmul(&y, ta, tb) != AG_OK) die("ag_op_matmul");
  if (ag_tensor_copy_data(y, c, sizeof(float) * (size_t)n * n) != AG_OK) die("ag_tensor_copy_data");
  ag_tensor_release(y);
  timing s = summarize(t, cpu, repeats);
  free(t);
  ag_tensor_release(ta);
  ag_tensor_release(tb);
  ag_context_release(ctx);
  return s;
}

#ifdef AG_BENCH_OPENBLAS
static timing time_openblas(int n, int threads, int repeats, const float *a, const float *b, float *c) {
  openblas_set_num_threads(threads);
  double *t = malloc(sizeof(double) * 2 * (size_t)repeats), *cpu = t + repeats;
  if (!t) die("malloc");
  for (int r = -2; r < repeats; ++r) {
    const double t0 = now_ns(), c0 = cpu_ns();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
    if (r >= 0) t[r] = now_ns() - t0, cpu[r] = cpu_ns() - c0;
  }
  timing s = summarize(t, cpu, repeats);
  free(t);
  return s;
}
#endif

int main(int argc, char **argv) {
#ifdef AG_BENCH_OPENBLAS
  /* OpenBLAS reads OPENBLAS_CORETYPE when it loads: re-execute with it set */
  const char *want = getenv("AG_BENCH_OPENBLAS_CORETYPE") ? getenv("AG_BENCH_OPENBLAS_CORETYPE") : "Cooperlake";
  const char *have = getenv("OPENBLAS_CORETYPE");
  if (!have || strcmp(have, want) != 0) {
    setenv("OPENBLAS_CORETYPE", want, 1);
    execv("/proc/self/exe", argv);
    fprintf(stderr, "bench_gemm: could not re-execute with OPENBLAS_CORETYPE=%s; continuing\n", want);
  }
#endif
  int sizes[MAX_LIST] = {512, 1024}, nsizes = 2, threads[MAX_LIST] = {1, 2}, nthreads = 2, repeats = 0;
  for (int i = 1; i < argc; ++i) {
    const int has = i + 1 < argc;
    if (!strcmp(argv[i], "--sizes") && has) {
      nsizes = parse_list(argv[++i], sizes);
    } else if (!strcmp(argv[i], "--threads") && has) {
      nthreads = parse_list(argv[++i], threads);
    } else if (!strcmp(argv[i], "--repeats") && has) {
      repeats = atoi(argv[++i]);
    } else {
      fprintf(stderr, "usage: bench_gemm [--sizes 512,1024] [--threads 1,2] [--repeats R]\n");
      return 2;
    }
  }
  for (int ti = 0; ti < nthreads; ++ti) {
    /* every ag run of this thread count first, then OpenBLAS's */
    float *in[MAX_LIST][2], *out[MAX_LIST];
    int reps[MAX_LIST];
    timing tag[MAX_LIST];
    for (int si = 0; si < nsizes; ++si) {
      const int n = sizes[si];
      const double flops = 2.0 * n * (double)n * n;
      /* about 1 s of work per measurement at 150 GFLOP/s, at least 5 repeats */
      reps[si] = repeats > 0 ? repeats : (int)(1.5e11 / flops) > 5 ? (int)(1.5e11 / flops) : 5;
      const size_t nn = (size_t)n * n;
      in[si][0] = malloc(sizeof(float) * nn);
      in[si][1] = malloc(sizeof(float) * nn);
      out[si] = malloc(sizeof(float) * nn);
      if (!in[si][0] || !in[si][1] || !out[si]) die("malloc");
      fill(in[si][0], nn, 1);
      fill(in[si][1], nn, 2);
      tag[si] = time_ag(n, threads[ti], reps[si], in[si][0], in[si][1], out[si]);
      report("ag", n, threads[ti], tag[si], reps[si]);
    }
    int status = 0;
    for (int si = 0; si < nsizes; ++si) {
#ifdef AG_BENCH_OPENBLAS
      const int n = sizes[si];
      const size_t nn = (size_t)n * n;
      float *c2 = malloc(sizeof(float) * nn);
      if (!c2) die("malloc");
      const timing tb = time_openblas(n, threads[ti], reps[si], in[si][0], in[si][1], c2);
      report("openblas", n, threads[ti], tb, reps[si]);
      double diff = 0;
      for (size_t i = 0; i < nn; ++i) {
        const double d = out[si][i] > c2[i] ? out[si][i] - c2[i] : c2[i] - out[si][i];
        if (d > diff) diff = d;
      }
      printf("{\"bench\": \"gemm\", \"impl\": \"ratio\", \"dtype\": \"f32\", \"n\": %d, \"threads\": %d, "
             "\"ag_over_openblas\": %.3f, \"ag_over_openblas_cpu\": %.3f, \"max_abs_diff\": %.3g}\n",
             n, threads[ti], tb.median_ns / tag[si].median_ns, tb.cpu_median_ns / tag[si].cpu_median_ns, diff);
      fflush(stdout);
      free(c2);
      if (diff > 1e-3 * n) {
        fprintf(stderr, "bench_gemm: ag and OpenBLAS disagree (max abs diff %g)\n", diff);
        status = 1;
      }
#endif
      free(in[si][0]);
      free(in[si][1]);
      free(out[si]);
    }
    if (status) return status;
  }
  return 0;
}
