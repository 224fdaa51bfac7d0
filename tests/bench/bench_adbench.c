/*
 * tests/bench/bench_adbench.c - the ADBench / GradBench objectives on ag's
 * public C API: GMM (gradient), BA (sparse Jacobian), LSTM (gradient).
 * For each size it times F (the objective alone, grad mode off) and J (the
 * objective and its derivative) and prints their medians and the ratio J/F,
 * ADBench's measure, as JSON lines; bench_adbench_torch.py is the PyTorch
 * twin (same inputs, same formulation, same lines) and run_adbench.sh prints
 * both side by side. README.md ("ADBench objectives") gives the definitions,
 * the input generator and the sizes.
 *
 *   bench_adbench [--only gmm,ba,lstm] [--quick] [--check] [--f32] [--threads T]
 *                 [--repeats MAX] [--min-repeats MIN] [--budget S] [--out FILE]
 *
 * --check: before timing, checks each gradient against central differences
 * and each objective against plain C loops on a tiny problem in f64.
 * --quick (the smoke test): --check, then the smallest size of each
 * objective with 2 timed pairs. Every timed size also compares the objective
 * with the plain-C loops. Exit status: 0 when all checks pass, 1 on a
 * failed check, 2 for bad arguments, 3 when an ag call failed.
 */
#define _POSIX_C_SOURCE 200809L

#include "bench_adbench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

ag_dtype g_dtype = AG_F64;
int g_max_reps = 25;
int g_min_reps = 5;
double g_budget = 3.0;

void det_fill(double *p, int64_t count, uint32_t seed, double lo, double hi) {
  float *f = (float *)xmalloc((size_t)count * sizeof(float));
  det_uniform(f, count, seed, lo, hi);
  for (int64_t i = 0; i < count; ++i) p[i] = (double)f[i];
  free(f);
}

ag_tensor *mk(const double *data, const int64_t *shape, int32_t ndim) {
  int64_t n = 1;
  for (int32_t i = 0; i < ndim; ++i) n *= shape[i];
  ag_tensor *t;
  if (!data) {
    CK(ag_tensor_zeros(&t, g_ctx, g_dtype, shape, ndim));
  } else if (g_dtype == AG_F64) {
    CK(ag_tensor_create(&t, g_ctx, AG_F64, shape, ndim, data));
  } else {
    float *f = (float *)xmalloc((size_t)n * sizeof(float));
    for (int64_t i = 0; i < n; ++i) f[i] = (float)data[i];
    CK(ag_tensor_create(&t, g_ctx, AG_F32, shape, ndim, f));
    free(f);
  }
  return t;
}

ag_tensor *mk_scalar(double v) {
  ag_tensor *t;
  CK(ag_tensor_scalar(&t, g_ctx, g_dtype, v));
  return t;
}

ag_tensor *mk_index(const int64_t *idx, int64_t n) {
  ag_tensor *t;
  CK(ag_tensor_create(&t, g_ctx, AG_I64, &n, 1, idx));
  return t;
}

double *to_host(const ag_tensor *t, int64_t *n) {
  *n = ag_tensor_numel(t);
  double *d = (double *)xmalloc((size_t)*n * sizeof(double));
  if (ag_tensor_dtype(t) == AG_F64) {
    CK(ag_tensor_copy_data(t, d, (size_t)*n * sizeof(double)));
  } else {
    float *f = (float *)xmalloc((size_t)*n * sizeof(float));
    CK(ag_tensor_copy_data(t, f, (size_t)*n * sizeof(float)));
    for (int64_t i = 0; i < *n; ++i) d[i] = (double)f[i];
    free(f);
  }
  return d;
}

double sum_sq(const ag_tensor *t) {
  int64_t n;
  double *d = to_host(t, &n), s = 0.0;
  for (int64_t i = 0; i < n; ++i) s += d[i] * d[i];
  free(d);
  return s;
}

ag_tensor *hl_add(hlist *l, ag_tensor *t) {
  if (l->n == l->cap) {
    size_t nc = l->cap ? 2 * l->cap : 1024;
    ag_tensor **np = (ag_tensor **)realloc(l->p, nc * sizeof(ag_tensor *));
    if (!np) {
      fprintf(stderr, "bench_adbench: out of memory\n");
      exit(3);
    }
    l->p = np;
    l->cap = nc;
  }
  l->p[l->n++] = t;
  return t;
}

void hl_release(hlist *l) {
  while (l->n) ag_tensor_release(l->p[--l->n]);
}

void hl_free(hlist *l) {
  hl_release(l);
  free(l->p);
  l->p = NULL;
  l->cap = 0;
}

/* f32 sums over thousands of terms (1000 points, 4095 time steps) keep ~1e-5. */
double value_rtol(void) { return g_dtype == AG_F64 ? 1e-10 : 1e-4; }

void run_case(const bench_case *bc) {
  dvec tf = {0}, tj = {0};
  monitor_t mon = monitor_start();
  bc->F(bc->arg); /* warm-up: caches, the allocator's pools */
  bc->J(bc->arg);
  const int64_t t0 = now_ns();
  for (int r = 0; r < g_max_reps; ++r) {
    if (r >= g_min_reps && (double)(now_ns() - t0) * 1e-9 >= g_budget) break;
    int64_t a = now_ns();
    bc->F(bc->arg);
    int64_t b = now_ns();
    bc->J(bc->arg);
    int64_t c = now_ns();
    dv_push(&tf, (double)(b - a));
    dv_push(&tj, (double)(c - b));
  }
  double value = NAN, gsq = NAN;
  bc->summary(bc->arg, &value, &gsq);
  stats_t sf = stats(&tf), sj = stats(&tj);
  double rel = fabs(value - bc->ref) / fabs(bc->ref);
  int ok = isnan(bc->ref) || rel <= value_rtol();
  if (!ok) {
    g_mismatch = 1;
    fprintf(stderr, "bench_adbench: %s %s: objective %.17g differs from the plain-C loops' %.17g (rel err %.3g)\n",
            bc->objective, bc->size, value, bc->ref, rel);
  }
  sbuf s = {0};
  sb_printf(&s, "\"bench\": \"adbench\", \"objective\": \"%s\", \"size\": \"%s\", \"dtype\": \"%s\", \"F\": ",
            bc->objective, bc->size, g_dtype == AG_F64 ? "f64" : "f32");
  sb_stats(&s, sf);
  sb_printf(&s, ", \"J\": ");
  sb_stats(&s, sj);
  sb_printf(&s, ", \"J_over_F\": %.4g, \"value\": %.17g, \"grad_sq\": %.17g, \"ref_value\": %.17g, "
            "\"ref_rel_err\": %.3g, \"ref\": \"%s\", \"monitor\": ",
            sj.median / sf.median, value, gsq, bc->ref, isnan(rel) ? -1.0 : rel, ok ? "ok" : "MISMATCH");
  sb_monitor(&s, &mon);
  emit_sb(&s);
  dv_free(&tf);
  dv_free(&tj);
}

int check_gradient(const char *name, int64_t n, double (*f)(void *arg, const double *theta), void *arg,
                   const double *theta, const double *grad, double tol) {
  double *th = (double *)xmalloc((size_t)n * sizeof(double));
  double *fd = (double *)xmalloc((size_t)n * sizeof(double));
  memcpy(th, theta, (size_t)n * sizeof(double));
  double scale = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    /* h ~ eps^(1/3): truncation and rounding errors both near 1e-10 relative */
    const double h = 1e-5 * fmax(1.0, fabs(theta[i]));
    th[i] = theta[i] + h;
    double up = f(arg, th);
    th[i] = theta[i] - h;
    double dn = f(arg, th);
    th[i] = theta[i];
    fd[i] = (up - dn) / (2.0 * h);
    scale = fmax(scale, fabs(fd[i]));
  }
  double worst = 0.0;
  int64_t at = 0;
  int ok = 1;
  for (int64_t i = 0; i < n; ++i) {
    double err = fabs(grad[i] - fd[i]) / (fabs(fd[i]) + scale);
    if (!(err <= worst)) {
      worst = err;
      at = i;
    }
    if (!(err <= tol)) ok = 0;
  }
  if (!ok) {
    fprintf(stderr, "bench_adbench: %s: gradient entry %lld is %.12g, central differences give %.12g\n", name,
            (long long)at, grad[at], fd[at]);
    g_mismatch = 1;
  }
  sbuf s = {0};
  sb_printf(&s, "\"bench\": \"adbench_gradcheck\", \"objective\": \"%s\", \"params\": %lld, \"max_fd\": %.6g, "
            "\"worst_err\": %.3g, \"worst_at\": %lld, \"tol\": %.3g, \"gradcheck\": \"%s\"",
            name, (long long)n, scale, worst, (long long)at, tol, ok ? "ok" : "MISMATCH");
  emit_sb(&s);
  free(th);
  free(fd);
  return ok;
}

static int listed(const char *only, const char *name) {
  if (!only) return 1;
  size_t len = strlen(name);
  for (const char *p = only; (p = strstr(p, name)) != NULL; p += len) {
    int starts = p == only || p[-1] == ',';
    int ends = p[len] == '\0' || p[len] == ',';
    if (starts && ends) return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  const char *only = NULL;
  int check = 0;
  for (int i = 1; i < argc; ++i) {
    const char *s = argv[i];
    int has = i + 1 < argc;
    if (!strcmp(s, "--only") && has) only = argv[++i];
    else if (!strcmp(s, "--quick")) g_quick = 1;
    else if (!strcmp(s, "--check")) check = 1;
    else if (!strcmp(s, "--f32")) g_dtype = AG_F32;
    else if (!strcmp(s, "--threads") && has) g_threads = atoi(argv[++i]);
    else if (!strcmp(s, "--repeats") && has) g_max_reps = atoi(argv[++i]);
    else if (!strcmp(s, "--min-repeats") && has) g_min_reps = atoi(argv[++i]);
    else if (!strcmp(s, "--budget") && has) g_budget = atof(argv[++i]);
    else if (!strcmp(s, "--out") && has) {
      g_out = fopen(argv[++i], "a");
      if (!g_out) {
        fprintf(stderr, "bench_adbench: cannot open %s\n", argv[i]);
        return 2;
      }
    } else {
      fprintf(stderr,
              "usage: bench_adbench [--only gmm,ba,lstm] [--quick] [--check] [--f32] [--threads T]\n"
              "                     [--repeats MAX] [--min-repeats MIN] [--budget S] [--out FILE]\n");
      return 2;
    }
  }
  if (g_threads < 1 || g_max_reps < 1 || g_min_reps < 1 || g_min_reps > g_max_reps) {
    fprintf(stderr, "bench_adbench: bad --threads or --repeats\n");
    return 2;
  }
  if (g_quick) {
    check = 1;
    g_max_reps = g_min_reps = 2;
  }
  if (!det_uniform_selfcheck()) return 2;
  ag_context_options opts = AG_CONTEXT_OPTIONS_INIT;
  opts.num_threads = g_threads;
  CK(ag_context_create(&g_ctx, &opts));
  if (check) {
    ag_dtype keep = g_dtype;
    g_dtype = AG_F64; /* finite differences need f64 */
    if (listed(only, "gmm")) check_gmm();
    if (listed(only, "ba")) check_ba();
    if (listed(only, "lstm")) check_lstm();
    g_dtype = keep;
  }
  if (listed(only, "gmm")) run_gmm();
  if (listed(only, "ba")) run_ba();
  if (listed(only, "lstm")) run_lstm();
  ag_context_release(g_ctx);
  if (g_out) fclose(g_out);
  return g_mismatch ? 1 : 0;
}
