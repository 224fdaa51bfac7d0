/*
 * tests/bench/bench_adbench.h - what the three ADBench objectives (GMM, BA,
 * LSTM; bench_adbench_{gmm,ba,lstm}.c) share with their driver
 * bench_adbench.c: the dtype and repeat settings, tensors made from double
 * host data, the F/J timing loop with its JSON line, and the gradient check
 * against central finite differences.
 */
#ifndef AG_BENCH_ADBENCH_H
#define AG_BENCH_ADBENCH_H

#include "bench_harness.h"

extern ag_dtype g_dtype; /* AG_F64 (ADBench's precision) unless --f32 */
extern int g_max_reps;   /* F/J pairs timed at most */
extern int g_min_reps;   /* ... and at least */
extern double g_budget;  /* seconds of F/J pairs per size, between those bounds */

/* det_uniform widened to double: the same values in f32 and f64 runs. */
void det_fill(double *p, int64_t count, uint32_t seed, double lo, double hi);

/* A g_dtype tensor (a leaf) from row-major double data (NULL: zeros). */
ag_tensor *mk(const double *data, const int64_t *shape, int32_t ndim);
ag_tensor *mk_scalar(double v);
ag_tensor *mk_index(const int64_t *idx, int64_t n);
/* The elements of t as doubles (caller frees); *n receives the count. */
double *to_host(const ag_tensor *t, int64_t *n);
/* sum of squares of t's elements, in double. */
double sum_sq(const ag_tensor *t);

/* A list of handles released together, what an ag handle scope does for a
 * benchmark that makes tens of thousands of handles (LSTM): ag_scope grows
 * its record one entry at a time (std::vector::reserve(size + 1) in
 * src/api/scope.h), which is quadratic in the number of handles. */
typedef struct {
  ag_tensor **p;
  size_t n, cap;
} hlist;

/* Records t in l and returns it. */
ag_tensor *hl_add(hlist *l, ag_tensor *t);
/* Releases every handle recorded in l (l is then empty, its memory kept). */
void hl_release(hlist *l);
void hl_free(hlist *l);

/* One benchmark size: F evaluates the objective with grad mode off, J the
 * objective and its gradient (or Jacobian) with grad mode on; each opens and
 * ends a handle scope of its own. summary (untimed) writes the objective's
 * value and the sum of squares of the gradient or Jacobian entries, the
 * checksums the PyTorch twin prints as well. ref: the objective computed by
 * plain C loops (NAN when there is none) that `value` must match. */
typedef struct {
  const char *objective, *size;
  void (*F)(void *arg);
  void (*J)(void *arg);
  void (*summary)(void *arg, double *value, double *grad_sq);
  void *arg;
  double ref;
} bench_case;

/* Times F and J interleaved (a warm-up pair, then pairs until g_budget
 * seconds and g_min_reps..g_max_reps pairs) and emits the JSON line
 * {"bench": "adbench", "objective", "size", "dtype", "F": stats, "J": stats,
 * "J_over_F", "value", "grad_sq", "ref_value", "ref_rel_err", "ref": "ok" |
 * "MISMATCH", "monitor"}. A value off the reference sets g_mismatch. */
void run_case(const bench_case *bc);

/* Relative tolerance of an objective value against its plain-C reference. */
double value_rtol(void);

/* Central differences of f at theta (n parameters) against grad, the
 * gradient ag computed there: each entry must satisfy
 * |grad - fd| <= tol * (|fd| + max |fd|). Prints one JSON line
 * {"bench": "adbench_gradcheck", ...} and returns 1 when all pass. */
int check_gradient(const char *name, int64_t n, double (*f)(void *arg, const double *theta), void *arg,
                   const double *theta, const double *grad, double tol);

/* The objectives (bench_adbench_{gmm,ba,lstm}.c). run_*: the timed sizes;
 * check_*: gradient and value checks on a tiny problem in f64 (1 = pass). */
void run_gmm(void);
void run_ba(void);
void run_lstm(void);
int check_gmm(void);
int check_ba(void);
int check_lstm(void);

#endif /* AG_BENCH_ADBENCH_H */
