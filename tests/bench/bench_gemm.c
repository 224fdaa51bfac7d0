/*
 * tests/bench/bench_gemm.c - ag_op_matmul throughput at 1 and 2 threads, next
 * to OpenBLAS cblas_sgemm / cblas_dgemm in the same process when the build
 * found OpenBLAS (AG_BENCH_OPENBLAS).
 *
 *   bench_gemm [--sizes 512,1024] [--shapes mlp | MxNxK[:TT],...]
 *              [--dtypes f32,f64] [--threads 1,2] [--repeats R]
 *
 * A shape MxNxK[:XY] is C (m x n) = op(A) op(B) with k the inner dim; X and Y
 * are N (plain, row-major) or T (the operand is stored transposed and given
 * to ag as a transposed view, to OpenBLAS as CblasTrans). `--shapes mlp` is
 * every product of one step of workload d (WORKLOADS.md: 784-256-256-10,
 * batch 64), forward and backward, in both layouts of bench_mlp.c: matmul
 * (W stored [in, out]: x @ W, dX = dY W^T, dW = X^T dY) and linear (W stored
 * [out, in]: x @ W^T, dX = dY W, dW = dY^T X). `--sizes N` is N x N x N.
 *
 * Prints one JSON object per line: {"bench": "gemm", "impl": "ag" |
 * "openblas", "dtype", "shape": "MxNxK:XY", "m", "n", "k", "threads",
 * "median_ns", "min_ns", "gflops" (at the median), "gflops_best",
 * "cpu_median_ns" (process CPU time: on a busy machine the 1-thread figure
 * that time slicing does not inflate; at 2 threads it includes OpenBLAS's
 * busy-waiting), "repeats"}, and per case a line {"impl": "ratio",
 * "ag_over_openblas": ...} of the median GFLOP/s, with "ag_over_openblas_cpu"
 * from the CPU times and "ag_over_openblas_best" from the minima. ag's time
 * includes allocating and freeing the output tensor. `--table` adds a
 * markdown table of the ratios at the end.
 *
 * OpenBLAS 0.3.21 does not recognise this CPU generation and falls back to
 * slow kernels: the program re-executes itself with OPENBLAS_CORETYPE set to
 * Cooperlake (or to $AG_BENCH_OPENBLAS_CORETYPE) unless it already is.
 * OpenBLAS's pthread workers busy-wait after a call, which would take a core
 * from ag's threads, so at 2 threads and more every ag run of the thread
 * count comes first. At 1 thread (no workers) the two alternate call by
 * call, so that a slow spell of a shared machine hits both alike.
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
#define MAX_CASES 64

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

typedef struct {
  int m, n, k, ta, tb;
} shape_t;

/* Workload d's products: matmul layout, then what the linear layout adds. */
static const shape_t MLP_SHAPES[] = {
    {64, 256, 784, 0, 0},  {64, 256, 256, 0, 0}, {64, 10, 256, 0, 0},  /* forward x @ W */
    {784, 256, 64, 1, 0},  {256, 256, 64, 1, 0}, {256, 10, 64, 1, 0},  /* dW = X^T dY */
    {64, 784, 256, 0, 1},  {64, 256, 256, 0, 1}, {64, 256, 10, 0, 1},  /* dX = dY W^T */
    {64, 256, 784, 0, 1},  {64, 10, 256, 0, 1},                        /* forward x @ W^T */
    {64, 256, 10, 0, 0},                                               /* dX = dY W */
    {256, 784, 64, 1, 0},  {10, 256, 64, 1, 0},                        /* dW = dY^T X */
};

/* "MxNxK[:XY]" -> shape; 0 on a malformed spec. */
static int parse_shape(const char *s, shape_t *out) {
  char t[3] = "NN";
  int used = 0;
  if (sscanf(s, "%dx%dx%d%n", &out->m, &out->n, &out->k, &used) != 3) return 0;
  if (s[used] == ':') {
    t[0] = s[used + 1];
    t[1] = t[0] ? s[used + 2] : 0;
  }
  out->ta = t[0] == 'T';
  out->tb = t[1] == 'T';
  return out->m > 0 && out->n > 0 && out->k > 0;
}

static int parse_shapes(const char *s, shape_t *out) {
  if (!strcmp(s, "mlp")) {
    const int n = (int)(sizeof MLP_SHAPES / sizeof MLP_SHAPES[0]);
    memcpy(out, MLP_SHAPES, sizeof MLP_SHAPES);
    return n;
  }
  int n = 0;
  while (*s && n < MAX_CASES) {
    if (!parse_shape(s, &out[n])) return -1;
    ++n;
    const char *c = strchr(s, ',');
    if (!c) break;
    s = c + 1;
  }
  return n;
}

/* Deterministic inputs in [-1, 1), as f32 or f64. */
static void fill(void *x, int f64, size_t n, uint64_t seed) {
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    const double v = (double)(seed >> 11) / 9007199254740992.0 * 2.0 - 1.0;
    if (f64) {
      ((double *)x)[i] = v;
    } else {
      ((float *)x)[i] = (float)v;
    }
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

static double flops_of(shape_t s) { return 2.0 * s.m * (double)s.n * s.k; }

static void shape_str(shape_t s, char *buf, size_t len) {
  snprintf(buf, len, "%dx%dx%d:%c%c", s.m, s.n, s.k, s.ta ? 'T' : 'N', s.tb ? 'T' : 'N');
}

static void report(const char *impl, int f64, shape_t s, int threads, timing t, int repeats) {
  char sh[64];
  shape_str(s, sh, sizeof sh);
  const double flops = flops_of(s);
  printf("{\"bench\": \"gemm\", \"impl\": \"%s\", \"dtype\": \"%s\", \"shape\": \"%s\", \"m\": %d, \"n\": %d, "
         "\"k\": %d, \"threads\": %d, \"median_ns\": %.0f, \"min_ns\": %.0f, \"gflops\": %.1f, \"gflops_best\": %.1f, "
         "\"cpu_median_ns\": %.0f, \"repeats\": %d}\n",
         impl, f64 ? "f64" : "f32", sh, s.m, s.n, s.k, threads, t.median_ns, t.min_ns, flops / t.median_ns,
         flops / t.min_ns, t.cpu_median_ns, repeats);
  fflush(stdout);
}

/* Operand of r x c as op() sees it, stored transposed when t: a tensor of the
 * stored shape, transposed by a view when t. */
static ag_tensor *operand(ag_context *ctx, int f64, int r, int c, int t, const void *data) {
  const int64_t shape[2] = {t ? c : r, t ? r : c};
  ag_tensor *x = NULL;
  if (ag_tensor_create(&x, ctx, f64 ? AG_F64 : AG_F32, shape, 2, data) != AG_OK) die("ag_tensor_create");
  if (!t) return x;
  ag_tensor *v = NULL;
  if (ag_op_transpose(&v, x, 0, 1) != AG_OK) die("ag_op_transpose");
  ag_tensor_release(x);
  return v;
}

typedef void (*other_fn)(int f64, shape_t s, const void *a, const void *b, void *c);

/* ag_op_matmul on a context with `threads` threads; also leaves C in `c`.
 * With `other`, each call of ag is followed by a timed call of other into
 * other_c, whose timing goes to *other_t. */
static timing time_ag(int f64, shape_t s, int threads, int repeats, const void *a, const void *b, void *c,
                      other_fn other, void *other_c, timing *other_t) {
  ag_context_options o = AG_CONTEXT_OPTIONS_INIT;
  o.num_threads = threads;
  ag_context *ctx = NULL;
  if (ag_context_create(&ctx, &o) != AG_OK) die("ag_context_create");
  ag_tensor *ta = operand(ctx, f64, s.m, s.k, s.ta, a), *tb = operand(ctx, f64, s.k, s.n, s.tb, b);
  double *t = malloc(sizeof(double) * 4 * (size_t)repeats), *cpu = t + repeats;
  double *ot = cpu + repeats, *ocpu = ot + repeats;
  if (!t) die("malloc");
  for (int r = -2; r < repeats; ++r) { /* two warm-up runs */
    ag_tensor *y = NULL;
    const double t0 = now_ns(), c0 = cpu_ns();
    if (ag_op_matmul(&y, ta, tb) != AG_OK) die("ag_op_matmul");
    ag_tensor_release(y);
    if (r >= 0) t[r] = now_ns() - t0, cpu[r] = cpu_ns() - c0;
    if (other) {
      const double t1 = now_ns(), c1 = cpu_ns();
      other(f64, s, a, b, other_c);
      if (r >= 0) ot[r] = now_ns() - t1, ocpu[r] = cpu_ns() - c1;
    }
  }
  if (other) *other_t = summarize(ot, ocpu, repeats);
  ag_tensor *y = NULL; /* the result, for comparison with OpenBLAS */
  if (ag_op_matmul(&y, ta, tb) != AG_OK) die("ag_op_matmul");
  if (ag_tensor_copy_data(y, c, (f64 ? sizeof(double) : sizeof(float)) * (size_t)s.m * s.n) != AG_OK) {
    die("ag_tensor_copy_data");
  }
  ag_tensor_release(y);
  timing res = summarize(t, cpu, repeats);
  free(t);
  ag_tensor_release(ta);
  ag_tensor_release(tb);
  ag_context_release(ctx);
  return res;
}

#ifdef AG_BENCH_OPENBLAS
static void blas(int f64, shape_t s, const void *a, const void *b, void *c) {
  const enum CBLAS_TRANSPOSE ta = s.ta ? CblasTrans : CblasNoTrans, tb = s.tb ? CblasTrans : CblasNoTrans;
  const int lda = s.ta ? s.m : s.k, ldb = s.tb ? s.k : s.n;
  if (f64) {
    cblas_dgemm(CblasRowMajor, ta, tb, s.m, s.n, s.k, 1.0, a, lda, b, ldb, 0.0, c, s.n);
  } else {
    cblas_sgemm(CblasRowMajor, ta, tb, s.m, s.n, s.k, 1.0f, a, lda, b, ldb, 0.0f, c, s.n);
  }
}

static timing time_openblas(int f64, shape_t s, int threads, int repeats, const void *a, const void *b, void *c) {
  openblas_set_num_threads(threads);
  double *t = malloc(sizeof(double) * 2 * (size_t)repeats), *cpu = t + repeats;
  if (!t) die("malloc");
  for (int r = -2; r < repeats; ++r) {
    const double t0 = now_ns(), c0 = cpu_ns();
    blas(f64, s, a, b, c);
    if (r >= 0) t[r] = now_ns() - t0, cpu[r] = cpu_ns() - c0;
  }
  timing res = summarize(t, cpu, repeats);
  free(t);
  return res;
}
#endif

typedef struct {
  shape_t s;
  int f64, reps;
  void *a, *b, *c, *blas_c;
  timing ag, blas; /* blas: timed with ag's calls (1 thread) */
  int have_blas;
  double ratio[3]; /* median, cpu, best; 0 without OpenBLAS */
} bench_case;

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
  static shape_t shapes[MAX_CASES];
  int sizes[MAX_LIST] = {512, 1024}, nsizes = 2, threads[MAX_LIST] = {1, 2}, nthreads = 2, repeats = 0;
  int nshapes = 0, dtypes[2] = {0}, ndtypes = 1, table = 0;
  const char *usage =
      "usage: bench_gemm [--sizes 512,1024] [--shapes mlp | MxNxK[:TT],...] [--dtypes f32,f64] [--threads 1,2] "
      "[--repeats R] [--table]\n";
  for (int i = 1; i < argc; ++i) {
    const int has = i + 1 < argc;
    if (!strcmp(argv[i], "--sizes") && has) {
      nsizes = parse_list(argv[++i], sizes);
    } else if (!strcmp(argv[i], "--shapes") && has) {
      nshapes = parse_shapes(argv[++i], shapes);
      if (nshapes < 0) {
        fputs(usage, stderr);
        return 2;
      }
      nsizes = 0;
    } else if (!strcmp(argv[i], "--dtypes") && has) {
      const char *d = argv[++i];
      ndtypes = 0;
      if (strstr(d, "f32")) dtypes[ndtypes++] = 0;
      if (strstr(d, "f64")) dtypes[ndtypes++] = 1;
      if (!ndtypes) {
        fputs(usage, stderr);
        return 2;
      }
    } else if (!strcmp(argv[i], "--threads") && has) {
      nthreads = parse_list(argv[++i], threads);
    } else if (!strcmp(argv[i], "--repeats") && has) {
      repeats = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--table")) {
      table = 1;
    } else {
      fputs(usage, stderr);
      return 2;
    }
  }
  for (int si = 0; si < nsizes && nshapes < MAX_CASES; ++si) shapes[nshapes++] = (shape_t){sizes[si], sizes[si], sizes[si], 0, 0};
  const int ncases = nshapes * ndtypes;
  bench_case *cases = calloc((size_t)ncases * (size_t)nthreads, sizeof(bench_case));
  if (!cases) die("calloc");
  int status = 0;
  for (int ti = 0; ti < nthreads; ++ti) {
    bench_case *cs = cases + (size_t)ti * ncases;
    /* every ag run of this thread count first, then OpenBLAS's */
    for (int ci = 0; ci < ncases; ++ci) {
      bench_case *bc = &cs[ci];
      bc->s = shapes[ci / ndtypes];
      bc->f64 = dtypes[ci % ndtypes];
      const double flops = flops_of(bc->s);
      /* about 1 s of work per measurement at 150 GFLOP/s, 5 to 5000 repeats */
      const double r = 1.5e11 / flops;
      bc->reps = repeats > 0 ? repeats : r > 5000 ? 5000 : r > 5 ? (int)r : 5;
      const size_t item = bc->f64 ? sizeof(double) : sizeof(float);
      bc->a = malloc(item * (size_t)bc->s.m * bc->s.k);
      bc->b = malloc(item * (size_t)bc->s.k * bc->s.n);
      bc->c = malloc(item * (size_t)bc->s.m * bc->s.n);
      if (!bc->a || !bc->b || !bc->c) die("malloc");
      fill(bc->a, bc->f64, (size_t)bc->s.m * bc->s.k, 1);
      fill(bc->b, bc->f64, (size_t)bc->s.k * bc->s.n, 2);
      other_fn other = NULL;
      bc->blas_c = NULL;
#ifdef AG_BENCH_OPENBLAS
      if (threads[ti] == 1) {
        openblas_set_num_threads(1);
        other = blas;
        bc->blas_c = malloc(item * (size_t)bc->s.m * bc->s.n);
        if (!bc->blas_c) die("malloc");
      }
#endif
      bc->ag = time_ag(bc->f64, bc->s, threads[ti], bc->reps, bc->a, bc->b, bc->c, other, bc->blas_c, &bc->blas);
      bc->have_blas = other != NULL;
      report("ag", bc->f64, bc->s, threads[ti], bc->ag, bc->reps);
    }
    for (int ci = 0; ci < ncases; ++ci) {
      bench_case *bc = &cs[ci];
#ifdef AG_BENCH_OPENBLAS
      const size_t nc = (size_t)bc->s.m * bc->s.n;
      void *c2 = bc->have_blas ? bc->blas_c : malloc((bc->f64 ? sizeof(double) : sizeof(float)) * nc);
      if (!c2) die("malloc");
      const timing tb = bc->have_blas ? bc->blas : time_openblas(bc->f64, bc->s, threads[ti], bc->reps, bc->a, bc->b, c2);
      report("openblas", bc->f64, bc->s, threads[ti], tb, bc->reps);
      double diff = 0;
      for (size_t i = 0; i < nc; ++i) {
        const double x = bc->f64 ? ((double *)bc->c)[i] : ((float *)bc->c)[i];
        const double y = bc->f64 ? ((double *)c2)[i] : ((float *)c2)[i];
        if ((x > y ? x - y : y - x) > diff) diff = x > y ? x - y : y - x;
      }
      bc->ratio[0] = tb.median_ns / bc->ag.median_ns;
      bc->ratio[1] = tb.cpu_median_ns / bc->ag.cpu_median_ns;
      bc->ratio[2] = tb.min_ns / bc->ag.min_ns;
      char sh[64];
      shape_str(bc->s, sh, sizeof sh);
      printf("{\"bench\": \"gemm\", \"impl\": \"ratio\", \"dtype\": \"%s\", \"shape\": \"%s\", \"threads\": %d, "
             "\"ag_over_openblas\": %.3f, \"ag_over_openblas_cpu\": %.3f, \"ag_over_openblas_best\": %.3f, "
             "\"max_abs_diff\": %.3g}\n",
             bc->f64 ? "f64" : "f32", sh, threads[ti], bc->ratio[0], bc->ratio[1], bc->ratio[2], diff);
      fflush(stdout);
      free(c2);
      if (diff > (bc->f64 ? 1e-10 : 1e-3) * bc->s.k) {
        fprintf(stderr, "bench_gemm: ag and OpenBLAS disagree on %s (max abs diff %g)\n", sh, diff);
        status = 1;
      }
#endif
      free(bc->a);
      free(bc->b);
      free(bc->c);
    }
  }
  if (table) {
    printf("\n| shape (MxNxK:op) | dtype |");
    for (int ti = 0; ti < nthreads; ++ti) printf(" ag GFLOP/s T=%d | ag/OpenBLAS T=%d (median, cpu, best) |", threads[ti], threads[ti]);
    printf("\n|---|---|");
    for (int ti = 0; ti < nthreads; ++ti) printf("---|---|");
    printf("\n");
    for (int ci = 0; ci < ncases; ++ci) {
      char sh[64];
      shape_str(cases[ci].s, sh, sizeof sh);
      printf("| %s | %s |", sh, cases[ci].f64 ? "f64" : "f32");
      for (int ti = 0; ti < nthreads; ++ti) {
        const bench_case *bc = &cases[(size_t)ti * ncases + ci];
        printf(" %.1f | %.2f, %.2f, %.2f |", flops_of(bc->s) / bc->ag.median_ns, bc->ratio[0], bc->ratio[1], bc->ratio[2]);
      }
      printf("\n");
    }
  }
  free(cases);
  return status;
}
