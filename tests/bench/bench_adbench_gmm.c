/*
 * tests/bench/bench_adbench_gmm.c - ADBench's GMM objective (Gaussian
 * mixture with a Wishart prior) and its gradient w.r.t. alphas, means, icf.
 *
 * Inputs, per size (d, K, n): alphas (K), means (K, d), icf (K, d + d(d-1)/2):
 * the log-diagonal q, then the strictly lower entries l of each inverse
 * Cholesky factor Q column by column (ADBench's layout); x (n, d); Wishart
 * gamma = 1, m = 0. The objective, with Q_k = diag(exp q_k) + L_k:
 *   sum_i logsumexp_k(alpha_k + sum(q_k) - |Q_k (x_i - mu_k)|^2 / 2)
 *   - n logsumexp(alpha) + sum_k (gamma^2/2 (|exp q_k|^2 + |l_k|^2) - m sum(q_k))
 *   + constants (-n d/2 log 2pi and the prior's normaliser, with the
 *     multivariate log-gamma, computed in plain C).
 * On ag: Q from one index_select over [exp q | l | 0] (the tril scatter),
 * Q x for all components in one GEMM ((K d, d) x (d, n)), Q mu by bmm.
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE 1

#include "bench_adbench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  int d, K, n, m;
  double gamma;
  double *alphas, *means, *icf, *x; /* host inputs */
  double constant;                  /* the terms without parameters */
  /* leaves (alphas, means, icf require grad) and constants */
  ag_tensor *t_alphas, *t_means, *t_icf, *t_x, *t_zero, *t_idx, *t_half, *t_n, *t_prior, *t_m, *t_const;
  ag_tensor *grads[3]; /* the last J's gradients (kept for the summary) */
} gmm_t;

static int64_t icf_size(int d) { return d + (int64_t)d * (d - 1) / 2; }

/* Column of icf holding Q[i][j] (i > j): d + the lower entries of earlier columns + i - j - 1. */
static int64_t lower_at(int d, int i, int j) { return d + (int64_t)j * (d - 1) - (int64_t)j * (j - 1) / 2 + (i - j - 1); }

/* log of the multivariate gamma function Gamma_p(a). */
static double multigammaln(double a, int p) {
  double r = 0.25 * p * (p - 1) * log(M_PI);
  for (int j = 1; j <= p; ++j) r += lgamma(a + 0.5 * (1 - j));
  return r;
}

static void gmm_leaves(gmm_t *g) {
  const int64_t d = g->d, K = g->K, n = g->n, ni = icf_size(g->d);
  ag_tensor *old[4] = {g->t_alphas, g->t_means, g->t_icf, g->t_x};
  for (int i = 0; i < 4; ++i) ag_tensor_release(old[i]); /* NULL is a no-op */
  int64_t sa[1] = {K}, sm[2] = {K, d}, si[2] = {K, ni}, sx[2] = {n, d};
  g->t_alphas = mk(g->alphas, sa, 1);
  g->t_means = mk(g->means, sm, 2);
  g->t_icf = mk(g->icf, si, 2);
  g->t_x = mk(g->x, sx, 2);
  CK(ag_tensor_requires_grad(g->t_alphas, 1));
  CK(ag_tensor_requires_grad(g->t_means, 1));
  CK(ag_tensor_requires_grad(g->t_icf, 1));
}

static void gmm_init(gmm_t *g, int d, int K, int n, double gamma, int m) {
  memset(g, 0, sizeof *g);
  g->d = d, g->K = K, g->n = n, g->gamma = gamma, g->m = m;
  const int64_t ni = icf_size(d);
  g->alphas = (double *)xmalloc((size_t)K * sizeof(double));
  g->means = (double *)xmalloc((size_t)K * d * sizeof(double));
  g->icf = (double *)xmalloc((size_t)(K * ni) * sizeof(double));
  g->x = (double *)xmalloc((size_t)n * d * sizeof(double));
  det_fill(g->alphas, K, 1001, -1.0, 1.0);
  det_fill(g->means, (int64_t)K * d, 1002, 0.0, 1.0);
  det_fill(g->icf, K * ni, 1003, -0.5, 0.5);
  det_fill(g->x, (int64_t)n * d, 1004, 0.0, 1.0);
  gmm_leaves(g);
  /* Q flattened row-major from the columns of [exp q | l | 0]. */
  int64_t *idx = (int64_t *)xmalloc((size_t)d * d * sizeof(int64_t));
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j) idx[i * d + j] = i == j ? i : i > j ? lower_at(d, i, j) : ni;
  g->t_idx = mk_index(idx, (int64_t)d * d);
  free(idx);
  int64_t sz[2] = {K, 1};
  g->t_zero = mk(NULL, sz, 2);
  g->t_half = mk_scalar(0.5);
  g->t_n = mk_scalar((double)n);
  g->t_prior = mk_scalar(0.5 * gamma * gamma);
  g->t_m = mk_scalar((double)m);
  const int nn = d + m + 1;
  const double C = nn * d * (log(gamma) - 0.5 * log(2.0)) - multigammaln(0.5 * nn, d);
  g->constant = -0.5 * n * d * log(2.0 * M_PI) - K * C;
  g->t_const = mk_scalar(g->constant);
}

static void gmm_free(gmm_t *g) {
  ag_tensor *ts[] = {g->t_alphas, g->t_means, g->t_icf, g->t_x, g->t_zero, g->t_idx,
                     g->t_half, g->t_n, g->t_prior, g->t_m, g->t_const, g->grads[0], g->grads[1], g->grads[2]};
  for (size_t i = 0; i < sizeof ts / sizeof ts[0]; ++i) ag_tensor_release(ts[i]);
  free(g->alphas), free(g->means), free(g->icf), free(g->x);
}

/* The objective as ag ops (handles go to the caller's scope). */
static ag_tensor *gmm_objective(const gmm_t *g) {
  const int64_t d = g->d, K = g->K, n = g->n, nl = icf_size(g->d) - d;
  ag_tensor *q, *l, *qd, *sum_q, *cat, *qf, *Q, *Q2, *xt, *qx, *qx3, *mu3, *qmu, *diff, *sq, *sqsum;
  CK(ag_op_narrow(&q, g->t_icf, 1, 0, d));
  CK(ag_op_narrow(&l, g->t_icf, 1, d, nl));
  CK(ag_op_exp(&qd, q));
  int64_t dim1 = 1, dim0 = 0;
  CK(ag_op_sum_dims(&sum_q, q, &dim1, 1, 0));
  const ag_tensor *parts[3] = {qd, l, g->t_zero};
  CK(ag_op_concat(&cat, parts, 3, 1));
  CK(ag_op_index_select(&qf, cat, 1, g->t_idx));
  int64_t s3[3] = {K, d, d}, s2[2] = {K * d, d}, sn[3] = {K, d, n}, sm[3] = {K, d, 1};
  CK(ag_op_reshape(&Q, qf, s3, 3));
  CK(ag_op_reshape(&Q2, qf, s2, 2));
  CK(ag_op_transpose(&xt, g->t_x, 0, 1));
  CK(ag_op_matmul(&qx, Q2, xt)); /* (K d, n): every component in one product */
  CK(ag_op_reshape(&qx3, qx, sn, 3));
  CK(ag_op_reshape(&mu3, g->t_means, sm, 3));
  CK(ag_op_bmm(&qmu, Q, mu3));
  CK(ag_op_sub(&diff, qx3, qmu)); /* Q_k (x_i - mu_k), (K, d, n) */
  CK(ag_op_square(&sq, diff));
  CK(ag_op_sum_dims(&sqsum, sq, &dim1, 1, 0)); /* (K, n) */
  ag_tensor *a, *a2, *hs, *inner, *lse, *slse, *lsea, *na, *obj;
  CK(ag_op_add(&a, g->t_alphas, sum_q));
  CK(ag_op_unsqueeze(&a2, a, 1));
  CK(ag_op_mul(&hs, sqsum, g->t_half));
  CK(ag_op_sub(&inner, a2, hs));
  CK(ag_op_logsumexp_dims(&lse, inner, &dim0, 1, 0)); /* (n) */
  CK(ag_op_sum(&slse, lse));
  CK(ag_op_logsumexp_dims(&lsea, g->t_alphas, &dim0, 1, 0));
  CK(ag_op_mul(&na, lsea, g->t_n));
  CK(ag_op_sub(&obj, slse, na));
  ag_tensor *qd2, *sqd, *l2, *sl, *p, *pw;
  CK(ag_op_square(&qd2, qd));
  CK(ag_op_sum(&sqd, qd2));
  CK(ag_op_square(&l2, l));
  CK(ag_op_sum(&sl, l2));
  CK(ag_op_add(&p, sqd, sl));
  CK(ag_op_mul(&pw, p, g->t_prior));
  if (g->m != 0) {
    ag_tensor *sq_all, *msq;
    CK(ag_op_sum(&sq_all, sum_q));
    CK(ag_op_mul(&msq, sq_all, g->t_m));
    CK(ag_op_sub(&pw, pw, msq));
  }
  CK(ag_op_add(&obj, obj, pw));
  CK(ag_op_add(&obj, obj, g->t_const));
  return obj;
}

static void gmm_F(void *arg) {
  grad_mode(0);
  ag_scope *s;
  CK(ag_scope_begin(&s));
  gmm_objective((const gmm_t *)arg);
  CK(ag_scope_end(s));
  grad_mode(1);
}

static void gmm_J(void *arg) {
  gmm_t *g = (gmm_t *)arg;
  for (int i = 0; i < 3; ++i) ag_tensor_release(g->grads[i]);
  ag_scope *s;
  CK(ag_scope_begin(&s));
  ag_tensor *obj = gmm_objective(g);
  const ag_tensor *outs[1] = {obj}, *ins[3] = {g->t_alphas, g->t_means, g->t_icf};
  CK(ag_grad(g->grads, outs, NULL, 1, ins, 3, NULL));
  for (int i = 0; i < 3; ++i) CK(ag_scope_keep(g->grads[i]));
  CK(ag_scope_end(s));
}

static void gmm_summary(void *arg, double *value, double *grad_sq) {
  gmm_t *g = (gmm_t *)arg;
  grad_mode(0);
  ag_scope *s;
  CK(ag_scope_begin(&s));
  *value = item(gmm_objective(g));
  CK(ag_scope_end(s));
  grad_mode(1);
  *grad_sq = sum_sq(g->grads[0]) + sum_sq(g->grads[1]) + sum_sq(g->grads[2]);
}

/* The objective by plain loops in double, independent of ag. */
static double gmm_reference(const gmm_t *g) {
  const int d = g->d, K = g->K, n = g->n;
  const int64_t ni = icf_size(d);
  double *Q = (double *)xmalloc((size_t)K * d * d * sizeof(double));
  double *sumq = (double *)xmalloc((size_t)K * sizeof(double));
  double *inner = (double *)xmalloc((size_t)K * sizeof(double));
  double *xc = (double *)xmalloc((size_t)d * sizeof(double));
  double prior = 0.0;
  for (int k = 0; k < K; ++k) {
    const double *row = g->icf + k * ni;
    double *Qk = Q + (size_t)k * d * d, ssq = 0.0;
    sumq[k] = 0.0;
    for (int i = 0; i < d; ++i) {
      for (int j = 0; j < d; ++j) Qk[i * d + j] = i == j ? exp(row[i]) : i > j ? row[lower_at(d, i, j)] : 0.0;
      sumq[k] += row[i];
    }
    for (int i = 0; i < d * d; ++i) ssq += Qk[i] * Qk[i];
    prior += 0.5 * g->gamma * g->gamma * ssq - g->m * sumq[k];
  }
  double slse = 0.0;
  for (int i = 0; i < n; ++i) {
    double mx = -INFINITY;
    for (int k = 0; k < K; ++k) {
      const double *Qk = Q + (size_t)k * d * d;
      for (int j = 0; j < d; ++j) xc[j] = g->x[i * d + j] - g->means[k * d + j];
      double sq = 0.0;
      for (int r = 0; r < d; ++r) {
        double v = 0.0;
        for (int j = 0; j <= r; ++j) v += Qk[r * d + j] * xc[j];
        sq += v * v;
      }
      inner[k] = g->alphas[k] + sumq[k] - 0.5 * sq;
      mx = fmax(mx, inner[k]);
    }
    double se = 0.0;
    for (int k = 0; k < K; ++k) se += exp(inner[k] - mx);
    slse += mx + log(se);
  }
  double amx = -INFINITY, ase = 0.0;
  for (int k = 0; k < K; ++k) amx = fmax(amx, g->alphas[k]);
  for (int k = 0; k < K; ++k) ase += exp(g->alphas[k] - amx);
  free(Q), free(sumq), free(inner), free(xc);
  return slse - n * (amx + log(ase)) + prior + g->constant;
}

void run_gmm(void) {
  static const int ds[] = {2, 10, 20, 64}, Ks[] = {5, 10, 25, 50};
  for (int a = 0; a < 4; ++a) {
    for (int b = 0; b < 4; ++b) {
      if (g_quick && (a > 0 || b > 0)) return;
      gmm_t g;
      gmm_init(&g, ds[a], Ks[b], 1000, 1.0, 0);
      char size[64];
      snprintf(size, sizeof size, "d=%d K=%d n=%d", g.d, g.K, g.n);
      bench_case bc = {"gmm", size, gmm_F, gmm_J, gmm_summary, &g, gmm_reference(&g)};
      run_case(&bc);
      gmm_free(&g);
    }
  }
}

static double gmm_at(void *arg, const double *theta) {
  gmm_t *g = (gmm_t *)arg;
  const int64_t K = g->K, d = g->d;
  memcpy(g->alphas, theta, (size_t)K * sizeof(double));
  memcpy(g->means, theta + K, (size_t)(K * d) * sizeof(double));
  memcpy(g->icf, theta + K + K * d, (size_t)(K * icf_size(g->d)) * sizeof(double));
  gmm_leaves(g);
  double v;
  grad_mode(0);
  ag_scope *s;
  CK(ag_scope_begin(&s));
  v = item(gmm_objective(g));
  CK(ag_scope_end(s));
  grad_mode(1);
  return v;
}

int check_gmm(void) {
  gmm_t g;
  gmm_init(&g, 3, 4, 20, 1.5, 2); /* m != 0 and gamma != 1: every term of the prior counts */
  const int64_t K = g.K, d = g.d, np = K + K * d + K * icf_size(g.d);
  double *theta = (double *)xmalloc((size_t)np * sizeof(double)), *grad = (double *)xmalloc((size_t)np * sizeof(double));
  memcpy(theta, g.alphas, (size_t)K * sizeof(double));
  memcpy(theta + K, g.means, (size_t)(K * d) * sizeof(double));
  memcpy(theta + K + K * d, g.icf, (size_t)(K * icf_size(g.d)) * sizeof(double));
  gmm_J(&g);
  int64_t off = 0;
  for (int i = 0; i < 3; ++i) {
    int64_t cnt;
    double *h = to_host(g.grads[i], &cnt);
    memcpy(grad + off, h, (size_t)cnt * sizeof(double));
    off += cnt;
    free(h);
  }
  int ok = check_gradient("gmm d=3 K=4 n=20 gamma=1.5 m=2", np, gmm_at, &g, theta, grad, 1e-7);
  gmm_at(&g, theta);
  bench_case bc = {"gmm", "check d=3 K=4 n=20 gamma=1.5 m=2", gmm_F, gmm_J, gmm_summary, &g, gmm_reference(&g)};
  int keep_max = g_max_reps, keep_min = g_min_reps;
  g_max_reps = g_min_reps = 1;
  run_case(&bc); /* the value against the plain loops */
  g_max_reps = keep_max, g_min_reps = keep_min;
  free(theta), free(grad);
  gmm_free(&g);
  return ok;
}
