/*
 * tests/bench/bench_harness.h - what every bench_ag workload shares: the
 * deterministic inputs (det_uniform), a growable string buffer, timing and
 * statistics, checksum verdicts, the machine-noise monitor, JSON-line output
 * with noise retries, the command-line globals, and a few ag helpers.
 *
 * Every helper exits the process on failure (3 for a failed ag call or no
 * memory), which is what a benchmark wants: no half-measured line is printed.
 */
#ifndef AG_BENCH_HARNESS_H
#define AG_BENCH_HARNESS_H

#include <ag/ag.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

/* ------------------------------------------------------------------ errors */

void fail_call(const char *what, ag_status st, const char *file, int line);

#define CK(call)                                                       \
  do {                                                                 \
    ag_status ck_st_ = (call);                                         \
    if (ck_st_ != AG_OK) fail_call(#call, ck_st_, __FILE__, __LINE__); \
  } while (0)

void *xmalloc(size_t n);

/* ------------------------------------------------------------------ det data */

void det_uniform(float *p, int64_t count, uint32_t seed, double lo, double hi);
/* A new f32 tensor of shape [count] filled by det_uniform. */
ag_tensor *det_tensor(ag_context *ctx, int64_t count, uint32_t seed, double lo, double hi);
/* 1 when det_uniform reproduces WORKLOADS.md's reference values, else 0 (with a message). */
int det_uniform_selfcheck(void);

/* ------------------------------------------------------------------ strings */

typedef struct {
  char *p;
  size_t len, cap;
} sbuf;

void sb_printf(sbuf *s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* The text (caller frees); s is empty afterwards. */
char *sb_take(sbuf *s);

/* ------------------------------------------------------------------ timing, stats */

static inline int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts); /* what std::chrono::steady_clock uses on Linux */
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

typedef struct {
  double *v;
  size_t n, cap;
} dvec;

void dv_push(dvec *d, double x);
void dv_free(dvec *d);

typedef struct {
  double median, min, p25, p75;
  size_t n;
} stats_t;

stats_t stats(const dvec *d);
/* The median of v[0..n) (n > 0), which it sorts in place. */
double median_of(double *v, size_t n);
void sb_stats(sbuf *s, stats_t st);

typedef struct {
  const char *name;
  const dvec *data;
} series_t;

void sb_series(sbuf *s, const series_t *ss, int count);

/* ------------------------------------------------------------------ checksums */

typedef struct {
  const char *name;
  double got, expect, rtol;
} check_t;

extern int g_mismatch; /* set by sb_checks on a mismatch; main's exit status */

/* "check": {...}, "expected": {...}, "rel_err": {...}, "rtol": {...}, "checksum": "ok"|"MISMATCH" */
void sb_checks(sbuf *s, const char *workload, const check_t *c, int count);
/* The same fields for one check whose value is a list, as libtorch's
 * "loss_steps_0_1_2": [...]; rel_err is a list too, rtol one number for all. */
void sb_check_list(sbuf *s, const char *workload, const char *name, const double *got, const double *expect,
                   int count, double rtol);

/* ------------------------------------------------------------------ machine noise */

extern double g_quiet_thresh, g_quiet_max_wait;
extern double g_noise_max; /* max "others" seen by sb_monitor since reset */

/* Wait (up to g_quiet_max_wait s) until the machine is < g_quiet_thresh busy;
 * returns "[busy, waited_s]" (static buffer). */
const char *wait_quiet(void);

/* CPU used by *other* processes (and hypervisor steal) while a workload runs, as a
 * fraction of all CPUs: (machine busy time - own CPU time) / (wall * ncpu). */
typedef struct {
  long long busy0, steal0;
  double self0;
  int64_t t0;
} monitor_t;

monitor_t monitor_start(void);
void sb_monitor(sbuf *s, const monitor_t *m);

/* ------------------------------------------------------------------ output */

extern int g_threads;
extern int g_quick;
extern FILE *g_out;
extern ag_context *g_ctx;

void emit(const char *body);
void emit_sb(sbuf *s);

/* Run a workload; if other processes used > g_noise_limit of the machine while it
 * ran, run it again (up to g_retries times) and keep the quietest attempt. */
extern double g_noise_limit;
extern int g_retries;
void with_retry(void (*fn)(void *), void *arg);

/* ------------------------------------------------------------------ ag helpers */

double item(const ag_tensor *t);
/* sum(t.grad) in float64 (as x.grad().to(kFloat64).sum()); NaN when t has no grad. */
double grad_sum(const ag_tensor *t);
void grad_mode(int on);

/* ------------------------------------------------------------------ workloads' graphs */

/* a and b: op i is y * a, y + b, tanh(y) for i % 3 = 0, 1, 2 (n >= 1). Returns a
 * new reference; x stays the caller's, intermediates are released as they are
 * replaced (as `y = y * a` drops the old tensor in C++). */
ag_tensor *workload_chain(ag_tensor *x, ag_tensor *a, ag_tensor *b, int n);
/* e: loss = (W[0] * x).sum() + ... + (W[k-1] * x).sum(), a new reference (k >= 1). */
ag_tensor *workload_fanin(ag_tensor *x, ag_tensor *const *W, int k);
/* sum(y) as a new reference; releases y. */
ag_tensor *sum_and_release(ag_tensor *y);

/* ------------------------------------------------------------------ workloads outside bench_ag.c */

/* d: the MLP training step (bench_mlp.c); arg points to an int, the variant:
 * 0 matmul, 1 linear, 2 linear_act, 3 linear_act_sgd. */
void bench_mlp(void *variant);
/* Workload d's model, inputs and update in ctx, for other benchmarks. */
typedef struct mlp_model mlp_model;
mlp_model *mlp_model_new(ag_context *ctx, int variant);
/* One training step (forward, backward, update); returns the loss, a new
 * reference, and when t is not NULL the times of forward, backward, update
 * and the whole step in t[0..3] (ns). */
ag_tensor *mlp_model_step(mlp_model *m, int64_t *t);
void mlp_model_free(mlp_model *m);

#endif /* AG_BENCH_HARNESS_H */
