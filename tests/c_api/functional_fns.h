/*
 * tests/c_api/functional_fns.h - user functions (ag_fn) and helpers shared by
 * the tests of ag/functional.h.
 */
#ifndef AG_TEST_FUNCTIONAL_FNS_H
#define AG_TEST_FUNCTIONAL_FNS_H

#include "harness.h"

static inline ag_tensor *f64_at(const char *file, int line, ag_context *ctx, const int64_t *shape, int32_t ndim,
                         const double *vals) {
  return h_make_at(file, line, ctx, AG_F64, shape, ndim, vals);
}
#define F64(ctx, shape, ndim, vals) f64_at(__FILE__, __LINE__, (ctx), (shape), (ndim), (vals))

static inline void release_all(ag_tensor **ts, int n) {
  int i;
  for (i = 0; i < n; i++) {
    ag_tensor_release(ts[i]);
    ts[i] = NULL;
  }
}

/* ---- user functions ------------------------------------------------------ */

/* x^3, elementwise */
static inline ag_status fn_cube(void *ud, const ag_tensor *const *in, int32_t n, ag_tensor **out, int32_t m) {
  (void)ud;
  if (n != 1 || m != 1)
    return AG_ERR_INTERNAL;
  return ag_op_pow_scalar(&out[0], in[0], 3.0);
}

/* A @ x, A (2,3), x (3) */
static inline ag_status fn_matvec(void *ud, const ag_tensor *const *in, int32_t n, ag_tensor **out, int32_t m) {
  (void)ud;
  if (n != 2 || m != 1)
    return AG_ERR_INTERNAL;
  return ag_op_matmul(&out[0], in[0], in[1]);
}

/* (x * y, exp(x)) */
static inline ag_status fn_two_outputs(void *ud, const ag_tensor *const *in, int32_t n, ag_tensor **out, int32_t m) {
  ag_status st;
  (void)ud;
  if (n != 2 || m != 2)
    return AG_ERR_INTERNAL;
  st = ag_op_mul(&out[0], in[0], in[1]);
  if (st != AG_OK)
    return st;
  return ag_op_exp(&out[1], in[0]);
}

/* sum(x^3) + sum(x * y) */
static inline ag_status fn_scalar_xy(void *ud, const ag_tensor *const *in, int32_t n, ag_tensor **out, int32_t m) {
  ag_tensor *c = NULL, *sc = NULL, *p = NULL, *sp = NULL;
  ag_status st;
  (void)ud;
  if (n != 2 || m != 1)
    return AG_ERR_INTERNAL;
  st = ag_op_pow_scalar(&c, in[0], 3.0);
  if (st == AG_OK)
    st = ag_op_sum(&sc, c);
  if (st == AG_OK)
    st = ag_op_mul(&p, in[0], in[1]);
  if (st == AG_OK)
    st = ag_op_sum(&sp, p);
  if (st == AG_OK)
    st = ag_op_add(&out[0], sc, sp);
  ag_tensor_release(c);
  ag_tensor_release(sc);
  ag_tensor_release(p);
  ag_tensor_release(sp);
  return st;
}

/* sum(x^3) */
static inline ag_status fn_sum_cube(void *ud, const ag_tensor *const *in, int32_t n, ag_tensor **out, int32_t m) {
  ag_tensor *c = NULL;
  ag_status st;
  (void)ud;
  if (n != 1 || m != 1)
    return AG_ERR_INTERNAL;
  st = ag_op_pow_scalar(&c, in[0], 3.0);
  if (st == AG_OK)
    st = ag_op_sum(&out[0], c);
  ag_tensor_release(c);
  return st;
}

/* softmax(x, 0) */
static inline ag_status fn_softmax(void *ud, const ag_tensor *const *in, int32_t n, ag_tensor **out, int32_t m) {
  (void)ud;
  if (n != 1 || m != 1)
    return AG_ERR_INTERNAL;
  return ag_op_softmax(&out[0], in[0], 0);
}

/* A @ tanh(x) + exp(x) * 0.5, A (3,3), x (3) */
static inline ag_status fn_mixed(void *ud, const ag_tensor *const *in, int32_t n, ag_tensor **out, int32_t m) {
  ag_tensor *t = NULL, *at = NULL, *e = NULL, *half = NULL, *eh = NULL;
  ag_context *c = NULL;
  ag_status st;
  (void)ud;
  if (n != 2 || m != 1)
    return AG_ERR_INTERNAL;
  st = ag_tensor_context(&c, in[1]);
  if (st == AG_OK)
    st = ag_tensor_scalar(&half, c, ag_tensor_dtype(in[1]), 0.5);
  ag_context_release(c);
  if (st == AG_OK)
    st = ag_op_tanh(&t, in[1]);
  if (st == AG_OK)
    st = ag_op_matmul(&at, in[0], t);
  if (st == AG_OK)
    st = ag_op_exp(&e, in[1]);
  if (st == AG_OK)
    st = ag_op_mul(&eh, e, half);
  if (st == AG_OK)
    st = ag_op_add(&out[0], at, eh);
  ag_tensor_release(t);
  ag_tensor_release(at);
  ag_tensor_release(e);
  ag_tensor_release(half);
  ag_tensor_release(eh);
  return st;
}

/* 2 * x, ignoring its second input */
static inline ag_status fn_ignores_y(void *ud, const ag_tensor *const *in, int32_t n, ag_tensor **out, int32_t m) {
  (void)ud;
  if (n != 2 || m != 1)
    return AG_ERR_INTERNAL;
  return ag_op_add(&out[0], in[0], in[0]);
}

/* x * b (broadcast) */
static inline ag_status fn_scale(void *ud, const ag_tensor *const *in, int32_t n, ag_tensor **out, int32_t m) {
  (void)ud;
  if (n != 2 || m != 1)
    return AG_ERR_INTERNAL;
  return ag_op_mul(&out[0], in[0], in[1]);
}

/* the input itself */
static inline ag_status fn_identity(void *ud, const ag_tensor *const *in, int32_t n, ag_tensor **out, int32_t m) {
  (void)ud;
  if (n != 1 || m != 1)
    return AG_ERR_INTERNAL;
  out[0] = ag_tensor_retain((ag_tensor *)in[0]);
  return out[0] ? AG_OK : AG_ERR_INTERNAL;
}

/* A point (A (3,3), x (3)) at which the tests take fn_mixed. */
static const double mixed_a[9] = {1, -2, 0.5, 0.3, 1.1, -0.7, 2, 0.1, -1}, mixed_x[3] = {0.2, -0.4, 0.9};

/* The value of fn_mixed's output p at (A, x), in plain C. */
static inline double mixed_ref(const double *a, const double *x, int p) {
  double s = 0;
  int r;
  for (r = 0; r < 3; r++)
    s += a[p * 3 + r] * tanh(x[r]);
  return s + 0.5 * exp(x[p]);
}

/* A function that misbehaves on request. */
typedef struct {
  int calls;
  int fail_at;        /* the call that fails (1-based), 0: none */
  int null_output;
  int i64_output;
  int grow_at;        /* from this call on, return a longer output */
} misuse;

static inline ag_status fn_misbehaving(void *ud, const ag_tensor *const *in, int32_t n, ag_tensor **out, int32_t m) {
  misuse *s = (misuse *)ud;
  ag_context *c = NULL;
  ag_status st;
  (void)n;
  (void)m;
  s->calls++;
  if (s->fail_at && s->calls == s->fail_at) {
    ag_set_callback_error("the model diverged");
    return AG_ERR_SHAPE;
  }
  if (s->null_output)
    return AG_OK;
  if (s->i64_output) {
    int64_t one = 1;
    st = ag_tensor_context(&c, in[0]);
    if (st == AG_OK)
      st = ag_tensor_zeros(&out[0], c, AG_I64, &one, 1);
    ag_context_release(c);
    return st;
  }
  if (s->grow_at && s->calls >= s->grow_at) {
    const ag_tensor *parts[2];
    parts[0] = in[0];
    parts[1] = in[0];
    return ag_op_concat(&out[0], parts, 2, 0);
  }
  return ag_op_mul(&out[0], in[0], in[0]);
}

#endif /* AG_TEST_FUNCTIONAL_FNS_H */
