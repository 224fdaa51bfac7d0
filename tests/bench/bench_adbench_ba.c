/*
 * tests/bench/bench_adbench_ba.c - ADBench's bundle adjustment: residuals and
 * their sparse Jacobian.
 *
 * N cameras of 11 parameters (Rodrigues rotation 3, centre 3, focal 1,
 * principal point 2, radial distortion 2), M points (3), P observations,
 * observation i sees point i % M from camera i % N (ADBench's replication
 * scheme) with weight w_i and feature f_i (2). Residuals:
 *   reprojection  w_i (proj(cam, X) - f_i)  (2 per observation),
 *   proj = focal * distort(Xc[0:2] / Xc[2]) + principal point,
 *   Xc = rodrigues(rot, X - centre), distort(p) = p (1 + k1 |p|^2 + k2 |p|^4);
 *   weight        1 - w_i^2                 (1 per observation).
 * The rows of observation i depend on one camera, one point and w_i only, so
 * the Jacobian has 15 nonzeros per reprojection row and 1 per weight row.
 * J computes every row at once as ADBench's reference does: the residuals of
 * all observations batched, over leaves that are per-observation copies of
 * the camera and point parameters; one reverse pass seeded with (1, 0) on
 * every observation and one with (0, 1) give the two reprojection rows of
 * every observation, a third pass the weight rows. (Rotations are never 0
 * here, so the theta = 0 branch of the Rodrigues formula is not taken.)
 */
#define _POSIX_C_SOURCE 200809L

#include "bench_adbench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NCAM = 11 };

typedef struct {
  int N, M, P;
  double *cams, *X, *w, *feats; /* host inputs */
  ag_tensor *t_cams, *t_X, *t_w, *t_feats, *t_icam, *t_ipt, *t_pa, *t_pb, *t_one, *t_seed[2], *t_ones;
  ag_tensor *jac[7]; /* the last J: d(reproj row 0, 1)/d(cam, X, w), d(w err)/dw */
} ba_t;

static void ba_leaves(ba_t *b) {
  ag_tensor *old[3] = {b->t_cams, b->t_X, b->t_w};
  for (int i = 0; i < 3; ++i) ag_tensor_release(old[i]);
  int64_t sc[2] = {b->N, NCAM}, sx[2] = {b->M, 3}, sw[1] = {b->P};
  b->t_cams = mk(b->cams, sc, 2);
  b->t_X = mk(b->X, sx, 2);
  b->t_w = mk(b->w, sw, 1);
}

static void ba_init(ba_t *b, int N, int M, int P) {
  memset(b, 0, sizeof *b);
  b->N = N, b->M = M, b->P = P;
  b->cams = (double *)xmalloc((size_t)N * NCAM * sizeof(double));
  b->X = (double *)xmalloc((size_t)M * 3 * sizeof(double));
  b->w = (double *)xmalloc((size_t)P * sizeof(double));
  b->feats = (double *)xmalloc((size_t)P * 2 * sizeof(double));
  /* per parameter: (lo, hi); points sit 4..6 in front of cameras near the origin */
  static const double lo[NCAM] = {-0.3, -0.3, -0.3, -0.5, -0.5, -1.0, 400.0, -10.0, -10.0, -0.1, -0.1};
  static const double hi[NCAM] = {0.3, 0.3, 0.3, 0.5, 0.5, 0.0, 600.0, 10.0, 10.0, 0.1, 0.1};
  double *u = (double *)xmalloc((size_t)N * NCAM * sizeof(double));
  det_fill(u, (int64_t)N * NCAM, 2001, 0.0, 1.0);
  for (int64_t i = 0; i < (int64_t)N * NCAM; ++i) b->cams[i] = lo[i % NCAM] + (hi[i % NCAM] - lo[i % NCAM]) * u[i];
  free(u);
  u = (double *)xmalloc((size_t)M * 3 * sizeof(double));
  det_fill(u, (int64_t)M * 3, 2002, 0.0, 1.0);
  for (int64_t i = 0; i < (int64_t)M * 3; ++i) b->X[i] = i % 3 == 2 ? 4.0 + 2.0 * u[i] : -1.0 + 2.0 * u[i];
  free(u);
  det_fill(b->w, P, 2003, 0.5, 1.5);
  det_fill(b->feats, (int64_t)P * 2, 2004, -100.0, 100.0);
  ba_leaves(b);
  int64_t sf[2] = {P, 2};
  b->t_feats = mk(b->feats, sf, 2);
  int64_t *ic = (int64_t *)xmalloc((size_t)P * sizeof(int64_t)), *ip = (int64_t *)xmalloc((size_t)P * sizeof(int64_t));
  for (int i = 0; i < P; ++i) ic[i] = i % N, ip[i] = i % M;
  b->t_icam = mk_index(ic, P);
  b->t_ipt = mk_index(ip, P);
  free(ic), free(ip);
  static const int64_t pa[3] = {1, 2, 0}, pb[3] = {2, 0, 1}; /* (a x b)_k = a_pa b_pb - a_pb b_pa */
  b->t_pa = mk_index(pa, 3);
  b->t_pb = mk_index(pb, 3);
  b->t_one = mk_scalar(1.0);
  double *seed = (double *)xmalloc((size_t)P * 2 * sizeof(double));
  for (int r = 0; r < 2; ++r) {
    for (int i = 0; i < P; ++i) seed[2 * i] = r == 0, seed[2 * i + 1] = r == 1;
    b->t_seed[r] = mk(seed, sf, 2);
  }
  free(seed);
  int64_t sw[1] = {P};
  CK(ag_tensor_ones(&b->t_ones, g_ctx, g_dtype, sw, 1));
}

static void ba_free(ba_t *b) {
  ag_tensor *ts[] = {b->t_cams, b->t_X, b->t_w, b->t_feats, b->t_icam, b->t_ipt, b->t_pa, b->t_pb, b->t_one,
                     b->t_seed[0], b->t_seed[1], b->t_ones};
  for (size_t i = 0; i < sizeof ts / sizeof ts[0]; ++i) ag_tensor_release(ts[i]);
  for (int i = 0; i < 7; ++i) ag_tensor_release(b->jac[i]);
  free(b->cams), free(b->X), free(b->w), free(b->feats);
}

static ag_tensor *cols(const ag_tensor *t, int64_t start, int64_t len) {
  ag_tensor *r;
  CK(ag_op_narrow(&r, t, 1, start, len));
  return r;
}

static ag_tensor *rowsum(const ag_tensor *t) {
  ag_tensor *r;
  int64_t dim1 = 1;
  CK(ag_op_sum_dims(&r, t, &dim1, 1, 1));
  return r;
}

/* Residuals of every observation from per-observation camera rows C (P, 11),
 * points Xp (P, 3) and weights w (P): reprojection (P, 2) and weight (P). */
static void ba_residuals(const ba_t *b, const ag_tensor *C, const ag_tensor *Xp, const ag_tensor *w,
                         ag_tensor **reproj, ag_tensor **werr) {
  ag_tensor *rot = cols(C, 0, 3), *centre = cols(C, 3, 3), *focal = cols(C, 6, 1), *x0 = cols(C, 7, 2),
            *k1 = cols(C, 9, 1), *k2 = cols(C, 10, 1);
  ag_tensor *xc, *r2, *sqt, *theta, *cs, *sn, *u, *ua, *ub, *xa, *xb, *c1, *c2, *cross, *ux, *dot, *omc, *tmp;
  CK(ag_op_sub(&xc, Xp, centre));
  CK(ag_op_square(&r2, rot));
  sqt = rowsum(r2);
  CK(ag_op_sqrt(&theta, sqt));
  CK(ag_op_cos(&cs, theta));
  CK(ag_op_sin(&sn, theta));
  CK(ag_op_div(&u, rot, theta)); /* the unit axis */
  CK(ag_op_index_select(&ua, u, 1, b->t_pa));
  CK(ag_op_index_select(&ub, u, 1, b->t_pb));
  CK(ag_op_index_select(&xa, xc, 1, b->t_pa));
  CK(ag_op_index_select(&xb, xc, 1, b->t_pb));
  CK(ag_op_mul(&c1, ua, xb));
  CK(ag_op_mul(&c2, ub, xa));
  CK(ag_op_sub(&cross, c1, c2));
  CK(ag_op_mul(&ux, u, xc));
  dot = rowsum(ux);
  CK(ag_op_sub(&omc, b->t_one, cs));
  CK(ag_op_mul(&tmp, dot, omc));
  ag_tensor *t1, *t2, *t3, *xcam, *xy, *z, *p, *p2, *rsq, *rsq2, *a1, *a2, *L, *pl, *pf, *proj, *e;
  CK(ag_op_mul(&t1, xc, cs));
  CK(ag_op_mul(&t2, cross, sn));
  CK(ag_op_mul(&t3, u, tmp));
  CK(ag_op_add(&xcam, t1, t2));
  CK(ag_op_add(&xcam, xcam, t3));
  xy = cols(xcam, 0, 2);
  z = cols(xcam, 2, 1);
  CK(ag_op_div(&p, xy, z));
  CK(ag_op_square(&p2, p));
  rsq = rowsum(p2);
  CK(ag_op_square(&rsq2, rsq));
  CK(ag_op_mul(&a1, k1, rsq));
  CK(ag_op_mul(&a2, k2, rsq2));
  CK(ag_op_add(&L, a1, a2));
  CK(ag_op_add(&L, L, b->t_one));
  CK(ag_op_mul(&pl, p, L));
  CK(ag_op_mul(&pf, pl, focal));
  CK(ag_op_add(&proj, pf, x0));
  CK(ag_op_sub(&e, proj, b->t_feats));
  ag_tensor *w2, *wsq;
  CK(ag_op_unsqueeze(&w2, w, 1));
  CK(ag_op_mul(reproj, e, w2));
  CK(ag_op_square(&wsq, w));
  CK(ag_op_sub(werr, b->t_one, wsq));
}

static void ba_gather(const ba_t *b, ag_tensor **C, ag_tensor **Xp) {
  CK(ag_op_index_select(C, b->t_cams, 0, b->t_icam));
  CK(ag_op_index_select(Xp, b->t_X, 0, b->t_ipt));
}

static void ba_F(void *arg) {
  const ba_t *b = (const ba_t *)arg;
  grad_mode(0);
  ag_scope *s;
  CK(ag_scope_begin(&s));
  ag_tensor *C, *Xp, *reproj, *werr;
  ba_gather(b, &C, &Xp);
  ba_residuals(b, C, Xp, b->t_w, &reproj, &werr);
  CK(ag_scope_end(s));
  grad_mode(1);
}

static void ba_J(void *arg) {
  ba_t *b = (ba_t *)arg;
  for (int i = 0; i < 7; ++i) ag_tensor_release(b->jac[i]);
  ag_scope *s;
  CK(ag_scope_begin(&s));
  ag_tensor *C, *Xp, *w, *reproj, *werr;
  grad_mode(0);
  ba_gather(b, &C, &Xp); /* per-observation copies: the leaves of the block rows */
  grad_mode(1);
  CK(ag_tensor_detach(&w, b->t_w));
  CK(ag_tensor_requires_grad(C, 1));
  CK(ag_tensor_requires_grad(Xp, 1));
  CK(ag_tensor_requires_grad(w, 1));
  ba_residuals(b, C, Xp, w, &reproj, &werr);
  const ag_tensor *ins[3] = {C, Xp, w}, *outs[1] = {reproj}, *wouts[1] = {werr};
  ag_grad_options keep = AG_GRAD_OPTIONS_INIT;
  keep.retain_graph = 1;
  const ag_tensor *seed0[1] = {b->t_seed[0]}, *seed1[1] = {b->t_seed[1]}, *seedw[1] = {b->t_ones};
  CK(ag_grad(b->jac, outs, seed0, 1, ins, 3, &keep));
  CK(ag_grad(b->jac + 3, outs, seed1, 1, ins, 3, NULL));
  CK(ag_grad(b->jac + 6, wouts, seedw, 1, ins + 2, 1, NULL));
  for (int i = 0; i < 7; ++i) CK(ag_scope_keep(b->jac[i]));
  CK(ag_scope_end(s));
}

/* value: the sum of squared residuals; grad_sq: of the Jacobian's nonzeros. */
static void ba_summary(void *arg, double *value, double *grad_sq) {
  ba_t *b = (ba_t *)arg;
  grad_mode(0);
  ag_scope *s;
  CK(ag_scope_begin(&s));
  ag_tensor *C, *Xp, *reproj, *werr;
  ba_gather(b, &C, &Xp);
  ba_residuals(b, C, Xp, b->t_w, &reproj, &werr);
  *value = sum_sq(reproj) + sum_sq(werr);
  CK(ag_scope_end(s));
  grad_mode(1);
  *grad_sq = 0.0;
  for (int i = 0; i < 7; ++i) *grad_sq += sum_sq(b->jac[i]);
}

/* The residuals of observation i by plain C: r[0..1] reprojection, r[2] weight. */
static void ba_point_residuals(const ba_t *b, int i, double r[3]) {
  const double *cam = b->cams + (size_t)(i % b->N) * NCAM, *X = b->X + (size_t)(i % b->M) * 3;
  double xc[3], u[3], xcam[3];
  for (int k = 0; k < 3; ++k) xc[k] = X[k] - cam[3 + k];
  double th = sqrt(cam[0] * cam[0] + cam[1] * cam[1] + cam[2] * cam[2]);
  for (int k = 0; k < 3; ++k) u[k] = cam[k] / th;
  double cr[3] = {u[1] * xc[2] - u[2] * xc[1], u[2] * xc[0] - u[0] * xc[2], u[0] * xc[1] - u[1] * xc[0]};
  double dot = u[0] * xc[0] + u[1] * xc[1] + u[2] * xc[2];
  for (int k = 0; k < 3; ++k) xcam[k] = xc[k] * cos(th) + cr[k] * sin(th) + u[k] * dot * (1.0 - cos(th));
  double p[2] = {xcam[0] / xcam[2], xcam[1] / xcam[2]}, rsq = p[0] * p[0] + p[1] * p[1];
  double L = 1.0 + cam[9] * rsq + cam[10] * rsq * rsq;
  for (int k = 0; k < 2; ++k) r[k] = b->w[i] * (p[k] * L * cam[6] + cam[7 + k] - b->feats[2 * i + k]);
  r[2] = 1.0 - b->w[i] * b->w[i];
}

static double ba_reference(const ba_t *b) {
  double s = 0.0, r[3];
  for (int i = 0; i < b->P; ++i) {
    ba_point_residuals(b, i, r);
    s += r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
  }
  return s;
}

static void ba_case(int N, int M, int P) {
  ba_t b;
  ba_init(&b, N, M, P);
  char size[64];
  snprintf(size, sizeof size, "n=%d m=%d p=%d", N, M, P);
  bench_case bc = {"ba", size, ba_F, ba_J, ba_summary, &b, ba_reference(&b)};
  run_case(&bc);
  ba_free(&b);
}

void run_ba(void) {
  ba_case(21, 11315, 36455); /* the sizes of ADBench's ba2 file */
  if (!g_quick) ba_case(100, 50000, 200000);
}

/* Central differences of every residual: as each row depends on one camera
 * and one point, moving parameter j of every camera (or point) at once moves
 * each row by its own block entry. */
int check_ba(void) {
  ba_t b;
  ba_init(&b, 3, 5, 12);
  ba_J(&b);
  const int P = b.P;
  double *jac[7];
  for (int i = 0; i < 7; ++i) {
    int64_t n;
    jac[i] = to_host(b.jac[i], &n);
  }
  double worst = 0.0, scale = 0.0;
  int ok = 1, nchecked = 0;
  for (int q = 0; q < NCAM + 3 + 1; ++q) { /* q: camera parameter, then point coordinate, then weight */
    double *base = q < NCAM ? b.cams : q < NCAM + 3 ? b.X : b.w;
    int stride = q < NCAM ? NCAM : q < NCAM + 3 ? 3 : 1, col = q < NCAM ? q : q < NCAM + 3 ? q - NCAM : 0;
    int count = q < NCAM ? b.N : q < NCAM + 3 ? b.M : P;
    double *r_up = (double *)xmalloc((size_t)P * 3 * sizeof(double)), *r_dn = (double *)xmalloc((size_t)P * 3 * sizeof(double));
    double *save = (double *)xmalloc((size_t)count * sizeof(double)), *hs = (double *)xmalloc((size_t)count * sizeof(double));
    for (int sgn = 0; sgn < 2; ++sgn) {
      for (int e = 0; e < count; ++e) {
        save[e] = base[e * stride + col];
        hs[e] = 1e-5 * fmax(1.0, fabs(save[e]));
        base[e * stride + col] = save[e] + (sgn == 0 ? hs[e] : -hs[e]);
      }
      ba_leaves(&b);
      grad_mode(0);
      ag_scope *s;
      CK(ag_scope_begin(&s));
      ag_tensor *C, *Xp, *reproj, *werr;
      ba_gather(&b, &C, &Xp);
      ba_residuals(&b, C, Xp, b.t_w, &reproj, &werr);
      int64_t n;
      double *rp = to_host(reproj, &n), *rw = to_host(werr, &n), *dst = sgn == 0 ? r_up : r_dn;
      for (int i = 0; i < P; ++i) dst[3 * i] = rp[2 * i], dst[3 * i + 1] = rp[2 * i + 1], dst[3 * i + 2] = rw[i];
      free(rp), free(rw);
      CK(ag_scope_end(s));
      grad_mode(1);
      for (int e = 0; e < count; ++e) base[e * stride + col] = save[e];
    }
    for (int i = 0; i < P; ++i) {
      const double h = hs[q < NCAM ? i % b.N : q < NCAM + 3 ? i % b.M : i];
      for (int row = 0; row < 3; ++row) {
        double fd = (r_up[3 * i + row] - r_dn[3 * i + row]) / (2.0 * h), an;
        if (row < 2) { /* jac[0..2]: row 0's d/d(C, Xp, w); jac[3..5]: row 1's */
          an = q < NCAM ? jac[3 * row][i * NCAM + q] : q < NCAM + 3 ? jac[3 * row + 1][i * 3 + q - NCAM] : jac[3 * row + 2][i];
        } else {
          an = q == NCAM + 3 ? jac[6][i] : 0.0; /* the weight row depends on w alone */
        }
        double err = fabs(an - fd) / (fabs(fd) + 1.0);
        if (err > worst) worst = err;
        scale = fmax(scale, fabs(fd));
        if (!(err <= 1e-6)) {
          if (ok) fprintf(stderr, "bench_adbench: ba: d r%d[%d] / d param %d is %.12g, central differences give %.12g\n",
                          row, i, q, an, fd);
          ok = 0;
        }
        ++nchecked;
      }
    }
    free(r_up), free(r_dn), free(save), free(hs);
  }
  ba_leaves(&b);
  if (!ok) g_mismatch = 1;
  sbuf sb = {0};
  sb_printf(&sb, "\"bench\": \"adbench_gradcheck\", \"objective\": \"ba n=3 m=5 p=12\", \"entries\": %d, "
            "\"max_fd\": %.6g, \"worst_err\": %.3g, \"tol\": 1e-06, \"gradcheck\": \"%s\"",
            nchecked, scale, worst, ok ? "ok" : "MISMATCH");
  emit_sb(&sb);
  bench_case bc = {"ba", "check n=3 m=5 p=12", ba_F, ba_J, ba_summary, &b, ba_reference(&b)};
  int keep_max = g_max_reps, keep_min = g_min_reps;
  g_max_reps = g_min_reps = 1;
  run_case(&bc);
  g_max_reps = keep_max, g_min_reps = keep_min;
  for (int i = 0; i < 7; ++i) free(jac[i]);
  ba_free(&b);
  return ok;
}
