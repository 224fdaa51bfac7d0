/*
 * tests/bench/bench_conv.c - ag_op_conv2d on the workload: input
 * (32, 3, 64, 64), 16 filters 3x3, bias, stride 1, padding 1, f32; the
 * forward pass alone, and forward + backward of sum(y) with both input and
 * weight requiring grad (gradients reset between iterations).
 *
 *   bench_conv [--threads 1,2] [--repeats R] [--batch N]
 *
 * Prints one JSON object per line: {"bench": "conv2d", "impl": "ag",
 * "phase": "forward" | "forward_backward", "shape": [N, C, H, W], "filters",
 * "kernel", "threads", "median_ns", "min_ns", "cpu_median_ns", "repeats",
 * "checksum": {"y_sum", "xgrad_sum", "wgrad_sum"}}. bench_conv_libtorch.cpp
 * prints the same lines for libtorch on the same inputs; run_conv.sh runs both.
 */
#define _POSIX_C_SOURCE 200809L

#include <ag/ag.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_LIST 8

static void die(const char *what) {
  fprintf(stderr, "bench_conv: %s: %s\n", what, ag_last_error_message());
  exit(3);
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

static double median(double *t, int r) {
  qsort(t, (size_t)r, sizeof(double), cmp_double);
  return r % 2 ? t[r / 2] : 0.5 * (t[r / 2 - 1] + t[r / 2]);
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

/* Deterministic inputs in [-1, 1) (the same generator as bench_conv_libtorch.cpp). */
static void fill(float *x, size_t n, uint64_t seed) {
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    x[i] = (float)((double)(seed >> 11) / 9007199254740992.0 * 2.0 - 1.0);
  }
}

static double sum_of(const ag_tensor *t) {
  const size_t n = (size_t)ag_tensor_numel(t);
  float *v = malloc(sizeof(float) * (n ? n : 1));
  if (!v || ag_tensor_copy_data(t, v, sizeof(float) * n) != AG_OK) die("ag_tensor_copy_data");
  double s = 0;
  for (size_t i = 0; i < n; ++i) s += v[i];
  free(v);
  return s;
}

enum { C = 3, H = 64, W = 64, OC = 16, K = 3 };

/* One iteration; with `backward`, also the gradients of sum(y). Returns y (a new reference). */
static ag_tensor *step(ag_tensor *x, ag_tensor *w, ag_tensor *b, int backward) {
  const int64_t pad[2] = {1, 1};
  ag_tensor *y = NULL, *loss = NULL;
  if (ag_op_conv2d(&y, x, w, b, NULL, pad, NULL, 1) != AG_OK) die("ag_op_conv2d");
  if (backward) {
    if (ag_tensor_set_grad(x, NULL) != AG_OK || ag_tensor_set_grad(w, NULL) != AG_OK) die("ag_tensor_set_grad");
    if (ag_op_sum(&loss, y) != AG_OK) die("ag_op_sum");
    if (ag_backward(loss, NULL, NULL) != AG_OK) die("ag_backward");
    ag_tensor_release(loss);
  }
  return y;
}

static void run(int batch, int threads, int repeats, const float *xv, const float *wv, const float *bv) {
  ag_context_options o = AG_CONTEXT_OPTIONS_INIT;
  o.num_threads = threads;
  ag_context *ctx = NULL;
  if (ag_context_create(&ctx, &o) != AG_OK) die("ag_context_create");
  const int64_t xs[4] = {batch, C, H, W}, ws[4] = {OC, C, K, K}, bs[1] = {OC};
  ag_tensor *x = NULL, *w = NULL, *b = NULL;
  if (ag_tensor_create(&x, ctx, AG_F32, xs, 4, xv) != AG_OK || ag_tensor_create(&w, ctx, AG_F32, ws, 4, wv) != AG_OK ||
      ag_tensor_create(&b, ctx, AG_F32, bs, 1, bv) != AG_OK) {
    die("ag_tensor_create");
  }
  double *t = malloc(sizeof(double) * 2 * (size_t)repeats), *cpu = t + repeats;
  if (!t) die("malloc");
  for (int backward = 0; backward < 2; ++backward) {
    if (ag_tensor_requires_grad(x, backward) != AG_OK || ag_tensor_requires_grad(w, backward) != AG_OK ||
        ag_tensor_requires_grad(b, backward) != AG_OK) {
      die("ag_tensor_requires_grad");
    }
    for (int r = -3; r < repeats; ++r) { /* three warm-up runs */
      const double t0 = clock_ns(CLOCK_MONOTONIC), c0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
      ag_tensor_release(step(x, w, b, backward));
      if (r >= 0) t[r] = clock_ns(CLOCK_MONOTONIC) - t0, cpu[r] = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - c0;
    }
    ag_tensor *y = step(x, w, b, backward), *gx = NULL, *gw = NULL;
    double gx_sum = 0, gw_sum = 0;
    if (backward) {
      if (ag_tensor_grad(&gx, x) != AG_OK || ag_tensor_grad(&gw, w) != AG_OK) die("ag_tensor_grad");
      gx_sum = sum_of(gx);
      gw_sum = sum_of(gw);
    }
    const double y_sum = sum_of(y);
    const double med = median(t, repeats), best = t[0], cpu_med = median(cpu, repeats);
    printf("{\"bench\": \"conv2d\", \"impl\": \"ag\", \"phase\": \"%s\", \"shape\": [%d, %d, %d, %d], "
           "\"filters\": %d, \"kernel\": [%d, %d], \"threads\": %d, \"median_ns\": %.0f, \"min_ns\": %.0f, "
           "\"cpu_median_ns\": %.0f, \"repeats\": %d, \"checksum\": {\"y_sum\": %.6g, \"xgrad_sum\": %.6g, "
           "\"wgrad_sum\": %.6g}}\n",
           backward ? "forward_backward" : "forward", batch, C, H, W, OC, K, K, threads, med, best, cpu_med, repeats,
           y_sum, gx_sum, gw_sum);
    fflush(stdout);
    ag_tensor_release(gx);
    ag_tensor_release(gw);
    ag_tensor_release(y);
  }
  free(t);
  ag_tensor_release(x);
  ag_tensor_release(w);
  ag_tensor_release(b);
  ag_context_release(ctx);
}

int main(int argc, char **argv) {
  int threads[MAX_LIST] = {1, 2}, nthreads = 2, repeats = 30, batch = 32;
  for (int i = 1; i < argc; ++i) {
    const int has = i + 1 < argc;
    if (!strcmp(argv[i], "--threads") && has) {
      nthreads = parse_list(argv[++i], threads);
    } else if (!strcmp(argv[i], "--repeats") && has) {
      repeats = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--batch") && has) {
      batch = atoi(argv[++i]);
    } else {
      fprintf(stderr, "usage: bench_conv [--threads 1,2] [--repeats R] [--batch N]\n");
      return 2;
    }
  }
  if (repeats < 1 || batch < 1) {
    fprintf(stderr, "bench_conv: --repeats and --batch must be positive\n");
    return 2;
  }
  const size_t nx = (size_t)batch * C * H * W, nw = (size_t)OC * C * K * K;
  float *xv = malloc(sizeof(float) * nx), *wv = malloc(sizeof(float) * nw), *bv = malloc(sizeof(float) * OC);
  if (!xv || !wv || !bv) die("malloc");
  fill(xv, nx, 1);
  fill(wv, nw, 2);
  fill(bv, OC, 3);
  for (int ti = 0; ti < nthreads; ++ti) run(batch, threads[ti], repeats, xv, wv, bv);
  free(xv);
  free(wv);
  free(bv);
  return 0;
}
