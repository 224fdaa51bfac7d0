#include "dist_mlp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HIDDEN 16

#define TRY(call)                                                                         \
  do {                                                                                    \
    ag_status s_ = (call);                                                                \
    if (s_ != AG_OK) {                                                                    \
      fprintf(stderr, "%s:%d: %s failed (%s): %s | %s\n", __FILE__, __LINE__, #call,      \
              ag_dist_status_name(s_), ag_last_error_message(), ag_dist_last_error_message()); \
      goto fail;                                                                          \
    }                                                                                     \
  } while (0)

/* A tensor of `dtype` from double values. */
static ag_status make_tensor(ag_tensor **out, ag_context *ctx, ag_dtype dtype, const int64_t *shape, int32_t ndim,
                             const double *v, int64_t n) {
  ag_status s;
  if (dtype == AG_F64) return ag_tensor_create(out, ctx, dtype, shape, ndim, v);
  float *f = malloc((size_t)n * sizeof(float));
  if (!f) return AG_ERR_OUT_OF_MEMORY;
  for (int64_t i = 0; i < n; ++i) f[i] = (float)v[i];
  s = ag_tensor_create(out, ctx, dtype, shape, ndim, f);
  free(f);
  return s;
}

/* The elements of `t` as doubles (n of them). */
static ag_status read_doubles(const ag_tensor *t, double *v, int64_t n) {
  if (ag_tensor_dtype(t) == AG_F64) return ag_tensor_copy_data(t, v, (size_t)n * sizeof(double));
  float *f = malloc((size_t)n * sizeof(float));
  if (!f) return AG_ERR_OUT_OF_MEMORY;
  ag_status s = ag_tensor_copy_data(t, f, (size_t)n * sizeof(float));
  for (int64_t i = 0; s == AG_OK && i < n; ++i) v[i] = f[i];
  free(f);
  return s;
}

int dist_mlp_init(dist_mlp *m, ag_dtype dtype, double salt) {
  static const int64_t shapes[DIST_MLP_PARAMS][2] = {
      {HIDDEN, DIST_MLP_IN}, {HIDDEN, 0}, {DIST_MLP_OUT, HIDDEN}, {DIST_MLP_OUT, 0}};
  double v[HIDDEN * DIST_MLP_IN];
  ag_optimizer_options oo = AG_OPTIMIZER_OPTIONS_INIT;
  memset(m, 0, sizeof *m);
  m->dtype = dtype;
  TRY(ag_context_create(&m->ctx, NULL));
  for (int p = 0; p < DIST_MLP_PARAMS; ++p) {
    const int32_t ndim = shapes[p][1] ? 2 : 1;
    const int64_t n = shapes[p][0] * (ndim == 2 ? shapes[p][1] : 1);
    for (int64_t i = 0; i < n; ++i) v[i] = 0.4 * sin(1.1 * (double)i + 0.7 * p + salt + 0.1);
    TRY(make_tensor(&m->params[p], m->ctx, dtype, shapes[p], ndim, v, n));
    TRY(ag_tensor_requires_grad(m->params[p], 1));
  }
  oo.lr = 0.1;
  oo.momentum = 0.9;
  TRY(ag_optimizer_create(&m->opt, AG_OPTIM_SGD, &oo));
  TRY(ag_optimizer_add_param_group(m->opt, m->params, DIST_MLP_PARAMS, NULL));
  return 0;
fail:
  return 1;
}

void dist_mlp_free(dist_mlp *m) {
  ag_optimizer_release(m->opt);
  for (int p = 0; p < DIST_MLP_PARAMS; ++p) ag_tensor_release(m->params[p]);
  ag_context_release(m->ctx);
  memset(m, 0, sizeof *m);
}

ag_status dist_mlp_loss(const dist_mlp *m, int step, int first, int n, int in_width, ag_tensor **loss) {
  double xs[DIST_MLP_BATCH * (DIST_MLP_IN + 1)], ys[DIST_MLP_BATCH * DIST_MLP_OUT];
  const int64_t xshape[2] = {n, in_width}, yshape[2] = {n, DIST_MLP_OUT};
  ag_tensor *x = NULL, *y = NULL, *h = NULL, *a = NULL, *out = NULL;
  ag_status s;
  if (n > DIST_MLP_BATCH || in_width > DIST_MLP_IN + 1) return AG_ERR_INVALID_ARGUMENT;
  for (int i = 0; i < n; ++i) {
    const int g = first + i; /* index in the global batch */
    for (int j = 0; j < in_width; ++j) xs[i * in_width + j] = sin(0.7 * g + 1.3 * j + 0.29 * step);
    for (int k = 0; k < DIST_MLP_OUT; ++k) ys[i * DIST_MLP_OUT + k] = 0.5 * cos(0.5 * g - 0.9 * k + 0.17 * step);
  }
  s = make_tensor(&x, m->ctx, m->dtype, xshape, 2, xs, (int64_t)n * in_width);
  if (s == AG_OK) s = make_tensor(&y, m->ctx, m->dtype, yshape, 2, ys, (int64_t)n * DIST_MLP_OUT);
  if (s == AG_OK) s = ag_op_linear(&h, x, m->params[0], m->params[1]);
  if (s == AG_OK) s = ag_op_tanh(&a, h);
  if (s == AG_OK) s = ag_op_linear(&out, a, m->params[2], m->params[3]);
  if (s == AG_OK) s = ag_op_mse_loss(loss, out, y, AG_REDUCTION_MEAN);
  ag_tensor_release(x);
  ag_tensor_release(y);
  ag_tensor_release(h);
  ag_tensor_release(a);
  ag_tensor_release(out);
  return s;
}

double dist_mlp_grad_hash(const dist_mlp *m) {
  uint64_t h = 1469598103934665603ull;
  unsigned char buf[HIDDEN * DIST_MLP_IN * 8];
  for (int p = 0; p < DIST_MLP_PARAMS; ++p) {
    ag_tensor *g = NULL;
    size_t bytes = 0;
    if (ag_tensor_grad(&g, m->params[p]) != AG_OK || !g) {
      h = (h ^ 0xabu) * 1099511628211ull;
      continue;
    }
    bytes = (size_t)ag_tensor_numel(g) * ag_dtype_size(ag_tensor_dtype(g));
    if (ag_tensor_copy_data(g, buf, sizeof buf) != AG_OK) bytes = 0;
    for (size_t i = 0; i < bytes; ++i) h = (h ^ buf[i]) * 1099511628211ull;
    ag_tensor_release(g);
  }
  return (double)(h >> 12);
}

int dist_all_equal(ag_dist_comm *comm, double v) {
  const int32_t world = ag_dist_comm_size(comm), rank = ag_dist_comm_rank(comm);
  int64_t n = world;
  double slots[64] = {0}, got[64];
  ag_context *ctx = NULL;
  ag_tensor *t = NULL;
  int result = -1;
  if (world < 1 || world > 64 || ag_context_create(&ctx, NULL) != AG_OK) return -1;
  slots[rank] = v;
  if (ag_tensor_create(&t, ctx, AG_F64, &n, 1, slots) == AG_OK && ag_dist_all_reduce(comm, t, AG_DIST_SUM) == AG_OK &&
      ag_tensor_copy_data(t, got, sizeof got) == AG_OK) {
    result = 1;
    for (int32_t r = 1; r < world; ++r) result &= got[r] == got[0];
  }
  ag_tensor_release(t);
  ag_context_release(ctx);
  return result;
}

/* max |a - b| / max |b| over n elements. */
static double rel_diff(const double *a, const double *b, int64_t n) {
  double d = 0.0, scale = 1e-30;
  for (int64_t i = 0; i < n; ++i) {
    d = fmax(d, fabs(a[i] - b[i]));
    scale = fmax(scale, fabs(b[i]));
  }
  return d / scale;
}

int dist_check_training(ag_dist_comm *comm, ag_dtype dtype, int64_t bucket_bytes, int steps, double rtol) {
  const int32_t world = ag_dist_comm_size(comm), rank = ag_dist_comm_rank(comm);
  const int share = DIST_MLP_BATCH / world, first = rank * share;
  dist_mlp d = {0}, r = {0};
  ag_dist_ddp *ddp = NULL;
  ag_dist_ddp_options opts = AG_DIST_DDP_OPTIONS_INIT;
  ag_scope *scope = NULL;
  int failures = 0;
  double worst_grad = 0.0, worst_loss = 0.0;
  if (DIST_MLP_BATCH % world) {
    fprintf(stderr, "world size %d does not divide the batch %d\n", world, DIST_MLP_BATCH);
    return 1;
  }
  if (dist_mlp_init(&d, dtype, 0.0) || dist_mlp_init(&r, dtype, 0.0)) goto fail;
  opts.bucket_bytes = bucket_bytes;
  TRY(ag_dist_ddp_create(&ddp, comm, d.params, DIST_MLP_PARAMS, &opts));
  for (int s = 0; s < steps; ++s) {
    ag_tensor *loss_r = NULL, *loss_d = NULL, *gl = NULL;
    double lr = 0.0, ld = 0.0;
    TRY(ag_scope_begin(&scope));
    TRY(dist_mlp_loss(&r, s, 0, DIST_MLP_BATCH, DIST_MLP_IN, &loss_r));
    TRY(ag_optimizer_zero_grad(r.opt));
    TRY(ag_backward(loss_r, NULL, NULL));
    TRY(dist_mlp_loss(&d, s, first, share, DIST_MLP_IN, &loss_d));
    TRY(ag_optimizer_zero_grad(d.opt));
    TRY(ag_backward(loss_d, NULL, NULL));
    TRY(ag_dist_ddp_sync(ddp));
    if (dist_all_equal(comm, dist_mlp_grad_hash(&d)) != 1) {
      fprintf(stderr, "rank %d step %d: the gradients differ across ranks\n", rank, s);
      ++failures;
    }
    for (int p = 0; p < DIST_MLP_PARAMS; ++p) {
      double a[16 * DIST_MLP_IN], b[16 * DIST_MLP_IN];
      ag_tensor *ga = NULL, *gb = NULL;
      const int64_t n = ag_tensor_numel(d.params[p]);
      TRY(ag_tensor_grad(&ga, d.params[p]));
      TRY(ag_tensor_grad(&gb, r.params[p]));
      TRY(ga && gb ? AG_OK : AG_ERR_GRAPH);
      TRY(read_doubles(ga, a, n));
      TRY(read_doubles(gb, b, n));
      worst_grad = fmax(worst_grad, rel_diff(a, b, n));
      if (!(rel_diff(a, b, n) <= rtol)) {
        fprintf(stderr, "rank %d step %d: gradient of parameter %d differs from single-process by %g (relative)\n",
                rank, s, p, rel_diff(a, b, n));
        ++failures;
      }
    }
    TRY(ag_tensor_item(loss_r, &lr));
    TRY(ag_tensor_item(loss_d, &ld));
    TRY(ag_tensor_scalar(&gl, d.ctx, AG_F64, ld));
    TRY(ag_dist_all_reduce(comm, gl, AG_DIST_MEAN));
    TRY(ag_tensor_item(gl, &ld));
    worst_loss = fmax(worst_loss, fabs(ld - lr) / fabs(lr));
    if (!(fabs(ld - lr) <= rtol * fabs(lr))) {
      fprintf(stderr, "rank %d step %d: loss %.17g, single-process %.17g\n", rank, s, ld, lr);
      ++failures;
    }
    TRY(ag_optimizer_step(r.opt));
    TRY(ag_optimizer_step(d.opt));
    TRY(ag_scope_end(scope));
    scope = NULL;
  }
  printf("rank %d of %d, %s, %d bucket(s): %d steps, largest relative difference to single-process: "
         "gradients %.3g, loss %.3g (tolerance %g)\n",
         rank, world, ag_dtype_name(dtype), ag_dist_ddp_num_buckets(ddp), steps, worst_grad, worst_loss, rtol);
  ag_dist_ddp_release(ddp);
  dist_mlp_free(&d);
  dist_mlp_free(&r);
  return failures != 0;
fail:
  if (scope) ag_scope_end(scope);
  ag_dist_ddp_release(ddp);
  dist_mlp_free(&d);
  dist_mlp_free(&r);
  return 1;
}
