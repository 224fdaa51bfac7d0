/*
 * tests/c_api/harness.h - a tiny TAP test harness for the pure-C tests of ag.
 *
 * Include it first in every test file (it sets _POSIX_C_SOURCE for pthreads).
 *
 *   static void test_something(void) {
 *     CHECK(1 + 1 == 2);
 *     CHECK_STATUS(ag_op_mul(&y, a, b), AG_OK);
 *     CHECK_CLOSE(value, 6.0, 1e-12);
 *     REQUIRE(y != NULL);          (on failure: record it and return from the test)
 *   }
 *   int main(int argc, char **argv) {
 *     h_init(argc, argv);
 *     RUN(test_something);
 *     RUN_DT(test_param, AG_F32);  (a test taking an ag_dtype)
 *     RUN_F64_F32(test_param);     (the same, in f64 and then in f32)
 *     return h_finish();
 *   }
 *
 * Every check that fails prints a TAP diagnostic ("# FAIL file:line: ...")
 * with ag_last_error_message(), and marks the running test "not ok". main
 * returns nonzero if any test failed. An optional argument (or the
 * AG_TEST_FILTER environment variable) runs only the tests whose name
 * contains it.
 *
 * CHECK* macros are expressions evaluating to 1 (pass) or 0 (fail). They
 * must only be used on the main thread: threads started by a test record
 * their observations in a struct that the test checks after joining.
 */
#ifndef AG_TEST_HARNESS_H
#define AG_TEST_HARNESS_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ag/ag.h"

/* ------------------------------------------------------------------------ */
/* state                                                                    */
/* ------------------------------------------------------------------------ */

typedef struct h_state {
  int test_no;       /* tests run so far (TAP numbering) */
  int tests_failed;  /* tests that recorded at least one failure */
  int cur_failures;  /* failures of the running test */
  long checks;       /* checks evaluated, for the summary */
  const char *filter;
  const char *cur_name;
} h_state;

static inline h_state *h_st(void) {
  static h_state s;
  return &s;
}

static inline void h_print_last_error(void) {
  const char *m = ag_last_error_message();
  printf("#   ag_last_error_message(): \"%s\"\n", m ? m : "(NULL!)");
}

/* Record a failure. `what` is a preformatted description. */
static inline void h_fail(const char *file, int line, const char *what) {
  h_state *s = h_st();
  s->cur_failures++;
  printf("# FAIL %s:%d: %s\n", file, line, what);
  h_print_last_error();
  fflush(stdout);
}

static inline int h_check(const char *file, int line, const char *expr, int ok) {
  h_st()->checks++;
  if (!ok) {
    char buf[1024];
    snprintf(buf, sizeof buf, "CHECK(%s)", expr);
    h_fail(file, line, buf);
  }
  return ok;
}

static inline int h_check_status(const char *file, int line, const char *expr, ag_status got,
                                 ag_status expected) {
  h_st()->checks++;
  if (got != expected) {
    char buf[1024];
    snprintf(buf, sizeof buf, "%s returned %s (%d), expected %s (%d)", expr, ag_status_name(got),
             (int)got, ag_status_name(expected), (int)expected);
    h_fail(file, line, buf);
    return 0;
  }
  return 1;
}

static inline int h_check_close(const char *file, int line, const char *ea, const char *eb,
                                double a, double b, double tol) {
  int ok;
  h_st()->checks++;
  if (isnan(a) || isnan(b))
    ok = 0;
  else if (a == b)
    ok = 1; /* also equal infinities */
  else
    ok = fabs(a - b) <= tol;
  if (!ok) {
    char buf[1024];
    snprintf(buf, sizeof buf, "CHECK_CLOSE(%s, %s): %.17g vs %.17g (diff %.3g, tol %.3g)", ea, eb,
             a, b, fabs(a - b), tol);
    h_fail(file, line, buf);
  }
  return ok;
}

/* numpy.allclose style: |a - b| <= atol + rtol * |b| */
static inline int h_check_near(const char *file, int line, const char *ea, const char *eb,
                               double a, double b, double rtol, double atol) {
  int ok;
  h_st()->checks++;
  if (isnan(a) || isnan(b))
    ok = 0;
  else if (a == b)
    ok = 1;
  else
    ok = fabs(a - b) <= atol + rtol * fabs(b);
  if (!ok) {
    char buf[1024];
    snprintf(buf, sizeof buf, "CHECK_NEAR(%s, %s): %.17g vs %.17g (diff %.3g, rtol %.3g, atol %.3g)",
             ea, eb, a, b, fabs(a - b), rtol, atol);
    h_fail(file, line, buf);
  }
  return ok;
}

static inline int h_check_str(const char *file, int line, const char *ea, const char *a,
                              const char *b) {
  int ok;
  h_st()->checks++;
  if (a == NULL || b == NULL)
    ok = (a == b);
  else
    ok = strcmp(a, b) == 0;
  if (!ok) {
    char buf[1024];
    snprintf(buf, sizeof buf, "CHECK_STR(%s): got %s%s%s, expected %s%s%s", ea, a ? "\"" : "",
             a ? a : "NULL", a ? "\"" : "", b ? "\"" : "", b ? b : "NULL", b ? "\"" : "");
    h_fail(file, line, buf);
  }
  return ok;
}

static inline int h_check_contains(const char *file, int line, const char *ea, const char *hay,
                                   const char *needle) {
  int ok;
  h_st()->checks++;
  ok = hay != NULL && needle != NULL && strstr(hay, needle) != NULL;
  if (!ok) {
    char buf[1024];
    snprintf(buf, sizeof buf, "CHECK_CONTAINS(%s): \"%s\" does not contain \"%s\"", ea,
             hay ? hay : "(NULL)", needle ? needle : "(NULL)");
    h_fail(file, line, buf);
  }
  return ok;
}

static inline int h_check_starts(const char *file, int line, const char *ea, const char *s,
                                 const char *prefix) {
  int ok;
  h_st()->checks++;
  ok = s != NULL && prefix != NULL && strncmp(s, prefix, strlen(prefix)) == 0;
  if (!ok) {
    char buf[1024];
    snprintf(buf, sizeof buf, "CHECK_STARTS(%s): \"%s\" does not start with \"%s\"", ea,
             s ? s : "(NULL)", prefix ? prefix : "(NULL)");
    h_fail(file, line, buf);
  }
  return ok;
}

/* The call failed with `expected` and the message starts with "[fn]". */
static inline int h_check_err(const char *file, int line, const char *expr, ag_status got,
                              ag_status expected, const char *fn) {
  char prefix[128];
  int ok = h_check_status(file, line, expr, got, expected);
  snprintf(prefix, sizeof prefix, "[%s]", fn);
  ok &= h_check_starts(file, line, "ag_last_error_message()", ag_last_error_message(), prefix);
  return ok;
}

/* ------------------------------------------------------------------------ */
/* check macros (expressions: 1 = pass, 0 = fail)                            */
/* ------------------------------------------------------------------------ */

#define CHECK(cond) h_check(__FILE__, __LINE__, #cond, (cond) ? 1 : 0)
#define CHECK_STATUS(call, expected) \
  h_check_status(__FILE__, __LINE__, #call, (call), (ag_status)(expected))
#define CHECK_OK(call) CHECK_STATUS(call, AG_OK)
#define CHECK_CLOSE(a, b, tol) \
  h_check_close(__FILE__, __LINE__, #a, #b, (double)(a), (double)(b), (double)(tol))
#define CHECK_NEAR(a, b, rtol, atol) \
  h_check_near(__FILE__, __LINE__, #a, #b, (double)(a), (double)(b), (double)(rtol), (double)(atol))
/* The call fails with `status`, and ag_last_error_message() starts with "[fn]". */
#define CHECK_ERR(call, status, fn) \
  h_check_err(__FILE__, __LINE__, #call, (call), (ag_status)(status), (fn))
#define CHECK_STR(a, b) h_check_str(__FILE__, __LINE__, #a, (a), (b))
#define CHECK_CONTAINS(hay, needle) h_check_contains(__FILE__, __LINE__, #hay, (hay), (needle))
#define CHECK_STARTS(s, prefix) h_check_starts(__FILE__, __LINE__, #s, (s), (prefix))

/* Like CHECK / CHECK_OK, but return from the (void) test function on failure. */
#define REQUIRE(cond)  \
  do {                 \
    if (!CHECK(cond))  \
      return;          \
  } while (0)
#define REQUIRE_OK(call)   \
  do {                     \
    if (!CHECK_OK(call))   \
      return;              \
  } while (0)

/* The last error message starts with "[fn]". */
#define CHECK_MSG_FN(fn) CHECK_STARTS(ag_last_error_message(), "[" fn "]")
/* The last error message contains `s`. */
#define CHECK_MSG_HAS(s) CHECK_CONTAINS(ag_last_error_message(), (s))

/* ------------------------------------------------------------------------ */
/* running tests                                                            */
/* ------------------------------------------------------------------------ */

static inline void h_init(int argc, char **argv) {
  h_state *s = h_st();
  s->filter = argc > 1 ? argv[1] : getenv("AG_TEST_FILTER");
  if (s->filter && !*s->filter)
    s->filter = NULL;
  setvbuf(stdout, NULL, _IOLBF, 0);
}

static inline int h_begin(const char *name) {
  h_state *s = h_st();
  if (s->filter && !strstr(name, s->filter))
    return 0;
  s->cur_failures = 0;
  s->cur_name = name;
  printf("# running %s\n", name);
  fflush(stdout);
  return 1;
}

static inline void h_end(const char *name) {
  h_state *s = h_st();
  s->test_no++;
  if (s->cur_failures) {
    s->tests_failed++;
    printf("not ok %d - %s\n", s->test_no, name);
  } else {
    printf("ok %d - %s\n", s->test_no, name);
  }
  s->cur_name = NULL;
  fflush(stdout);
}

static inline void h_run(const char *name, void (*fn)(void)) {
  if (!h_begin(name))
    return;
  fn();
  h_end(name);
}

static inline void h_run_dt(const char *name, void (*fn)(ag_dtype), ag_dtype dt) {
  char full[256];
  snprintf(full, sizeof full, "%s[%s]", name, ag_dtype_name(dt));
  if (!h_begin(full))
    return;
  fn(dt);
  h_end(full);
}

#define RUN(fn) h_run(#fn, fn)
#define RUN_DT(fn, dt) h_run_dt(#fn, fn, dt)
/* A test taking an ag_dtype, run in f64 and then in f32. */
#define RUN_F64_F32(fn)   \
  do {                    \
    RUN_DT(fn, AG_F64);   \
    RUN_DT(fn, AG_F32);   \
  } while (0)

static inline int h_finish(void) {
  h_state *s = h_st();
  printf("1..%d\n", s->test_no);
  printf("# %d of %d tests failed (%ld checks)\n", s->tests_failed, s->test_no, s->checks);
  fflush(stdout);
  return s->tests_failed ? 1 : 0;
}

/* ------------------------------------------------------------------------ */
/* ag helpers (failures are recorded at the caller's file:line)              */
/* ------------------------------------------------------------------------ */

/* Tolerance for values computed in `dt`. */
static inline double h_tol(ag_dtype dt) { return dt == AG_F32 ? 1e-5 : 1e-12; }

static inline int64_t h_numel_of(const int64_t *shape, int32_t ndim) {
  int64_t n = 1;
  int32_t i;
  for (i = 0; i < ndim; i++)
    n *= shape[i];
  return n;
}

static inline ag_context *h_ctx_at(const char *file, int line, int32_t num_threads) {
  ag_context *ctx = NULL;
  ag_context_options o = AG_CONTEXT_OPTIONS_INIT;
  o.num_threads = num_threads;
  if (!h_check_status(file, line, "ag_context_create", ag_context_create(&ctx, &o), AG_OK))
    return NULL;
  h_check(file, line, "context != NULL", ctx != NULL);
  return ctx;
}
/* A new context (default threads), or NULL with a recorded failure. */
#define NEW_CTX() h_ctx_at(__FILE__, __LINE__, 0)
#define NEW_CTX_THREADS(n) h_ctx_at(__FILE__, __LINE__, (n))

/* Create a tensor of `dt` from double values (NULL = zeros). */
static inline ag_tensor *h_make_at(const char *file, int line, ag_context *ctx, ag_dtype dt,
                                   const int64_t *shape, int32_t ndim, const double *vals) {
  ag_tensor *t = NULL;
  void *buf = NULL;
  int64_t n = h_numel_of(shape, ndim), i;
  ag_status st;
  if (vals && n > 0) {
    buf = malloc((size_t)n * 8);
    if (!buf)
      return NULL;
    for (i = 0; i < n; i++) {
      switch (dt) {
      case AG_F32: ((float *)buf)[i] = (float)vals[i]; break;
      case AG_F64: ((double *)buf)[i] = vals[i]; break;
      case AG_I64: ((int64_t *)buf)[i] = (int64_t)vals[i]; break;
      case AG_BOOL: ((unsigned char *)buf)[i] = vals[i] != 0.0; break;
      default: break;
      }
    }
  }
  st = ag_tensor_create(&t, ctx, dt, shape, ndim, buf);
  free(buf);
  if (!h_check_status(file, line, "ag_tensor_create", st, AG_OK))
    return NULL;
  h_check(file, line, "created tensor != NULL", t != NULL);
  return t;
}
#define MAKE(ctx, dt, shape, ndim, vals) h_make_at(__FILE__, __LINE__, (ctx), (dt), (shape), (ndim), (vals))

static inline ag_tensor *h_scalar_at(const char *file, int line, ag_context *ctx, ag_dtype dt,
                                     double v) {
  ag_tensor *t = NULL;
  if (!h_check_status(file, line, "ag_tensor_scalar", ag_tensor_scalar(&t, ctx, dt, v), AG_OK))
    return NULL;
  h_check(file, line, "scalar tensor != NULL", t != NULL);
  return t;
}
#define SCALAR(ctx, dt, v) h_scalar_at(__FILE__, __LINE__, (ctx), (dt), (v))

/* A tensor that requires grad (a leaf), tagged `tag` unless that is NULL; NULL
 * with a recorded failure if any step fails. */
static inline ag_tensor *h_leaf_at(const char *file, int line, ag_context *ctx, ag_dtype dt,
                                   const int64_t *shape, int32_t ndim, const double *vals,
                                   const char *tag) {
  ag_tensor *t = h_make_at(file, line, ctx, dt, shape, ndim, vals);
  if (t && (!h_check_status(file, line, "ag_tensor_requires_grad(t, 1)",
                            ag_tensor_requires_grad(t, 1), AG_OK) ||
            (tag && !h_check_status(file, line, "ag_tensor_set_tag", ag_tensor_set_tag(t, tag),
                                    AG_OK)))) {
    ag_tensor_release(t);
    return NULL;
  }
  return t;
}
#define LEAF(ctx, dt, shape, ndim, vals) \
  h_leaf_at(__FILE__, __LINE__, (ctx), (dt), (shape), (ndim), (vals), NULL)
#define TAGGED_LEAF(ctx, dt, shape, ndim, vals, tag) \
  h_leaf_at(__FILE__, __LINE__, (ctx), (dt), (shape), (ndim), (vals), (tag))

/* *ctx = a new context and *x = MAKE (or, if `leaf`, LEAF) in it. On failure:
 * 0, recorded, and nothing left to release. */
static inline int h_ctx_with_at(const char *file, int line, ag_context **ctx, ag_tensor **x, ag_dtype dt,
                                const int64_t *shape, int32_t ndim, const double *vals, int leaf) {
  *x = NULL;
  *ctx = h_ctx_at(file, line, 0);
  if (!*ctx)
    return 0;
  *x = leaf ? h_leaf_at(file, line, *ctx, dt, shape, ndim, vals, NULL)
            : h_make_at(file, line, *ctx, dt, shape, ndim, vals);
  if (!h_check(file, line, "tensor in the new context != NULL", *x != NULL)) {
    ag_context_release(*ctx);
    *ctx = NULL;
    return 0;
  }
  return 1;
}
#define NEW_CTX_WITH(ctx, x, dt, shape, ndim, vals) \
  h_ctx_with_at(__FILE__, __LINE__, (ctx), (x), (dt), (shape), (ndim), (vals), 0)
#define NEW_CTX_WITH_LEAF(ctx, x, dt, shape, ndim, vals) \
  h_ctx_with_at(__FILE__, __LINE__, (ctx), (x), (dt), (shape), (ndim), (vals), 1)

/* Read the elements of `t` as doubles into out[cap]; returns numel, or -1 on failure. */
static inline int64_t h_read_at(const char *file, int line, const ag_tensor *t, double *out,
                                size_t cap) {
  int64_t n = ag_tensor_numel(t), i;
  ag_dtype dt = ag_tensor_dtype(t);
  size_t es = ag_dtype_size(dt);
  void *buf;
  if (!h_check(file, line, "readable tensor (numel >= 0, valid dtype)", n >= 0 && es > 0))
    return -1;
  if (!h_check(file, line, "numel <= capacity of the read buffer", (size_t)n <= cap))
    return -1;
  buf = malloc((size_t)n * es + 1);
  if (!buf)
    return -1;
  if (!h_check_status(file, line, "ag_tensor_copy_data", ag_tensor_copy_data(t, buf, (size_t)n * es),
                      AG_OK)) {
    free(buf);
    return -1;
  }
  for (i = 0; i < n; i++) {
    switch (dt) {
    case AG_F32: out[i] = ((float *)buf)[i]; break;
    case AG_F64: out[i] = ((double *)buf)[i]; break;
    case AG_I64: out[i] = (double)((int64_t *)buf)[i]; break;
    case AG_BOOL: out[i] = ((unsigned char *)buf)[i]; break;
    default: out[i] = NAN; break;
    }
  }
  free(buf);
  return n;
}
#define READ(t, out, cap) h_read_at(__FILE__, __LINE__, (t), (out), (cap))

/* The one element of `t`, NaN (with a recorded failure) if that fails. */
static inline double h_item_at(const char *file, int line, const ag_tensor *t) {
  double v = NAN;
  if (!h_check_status(file, line, "ag_tensor_item", ag_tensor_item(t, &v), AG_OK))
    return NAN;
  return v;
}
#define ITEM(t) h_item_at(__FILE__, __LINE__, (t))

/* New reference to the gradient of `t` (may legitimately be NULL). */
static inline ag_tensor *h_grad_at(const char *file, int line, const ag_tensor *t) {
  ag_tensor *g = NULL;
  h_check_status(file, line, "ag_tensor_grad", ag_tensor_grad(&g, t), AG_OK);
  return g;
}
#define GRAD(t) h_grad_at(__FILE__, __LINE__, (t))

/* `t` has no gradient. One found anyway is released, so a failure leaks nothing. */
static inline int h_check_no_grad_at(const char *file, int line, const char *et, const ag_tensor *t) {
  ag_tensor *g = h_grad_at(file, line, t);
  char buf[512];
  int ok;
  snprintf(buf, sizeof buf, "CHECK_NO_GRAD(%s)", et);
  ok = h_check(file, line, buf, g == NULL);
  ag_tensor_release(g);
  return ok;
}
#define CHECK_NO_GRAD(t) h_check_no_grad_at(__FILE__, __LINE__, #t, (t))

/* The elements of `t` equal expected[0..n) within tol, and numel(t) == n. */
static inline int h_check_values_at(const char *file, int line, const char *et, const ag_tensor *t,
                                    const double *expected, int64_t n, double tol) {
  double got[256];
  int64_t m, i;
  int ok = 1;
  char buf[512];
  if (!h_check(file, line, "tensor to check is not NULL", t != NULL))
    return 0;
  m = h_read_at(file, line, t, got, 256);
  if (m < 0)
    return 0;
  if (m != n) {
    snprintf(buf, sizeof buf, "CHECK_VALUES(%s): numel %lld, expected %lld", et, (long long)m,
             (long long)n);
    h_st()->checks++;
    h_fail(file, line, buf);
    return 0;
  }
  for (i = 0; i < n; i++) {
    snprintf(buf, sizeof buf, "%s[%lld]", et, (long long)i);
    ok &= h_check_close(file, line, buf, "expected", got[i], expected[i], tol);
  }
  return ok;
}
#define CHECK_VALUES(t, expected, n, tol) \
  h_check_values_at(__FILE__, __LINE__, #t, (t), (expected), (n), (tol))

/* Every element of `t` equals v within tol (numel must be n). */
static inline int h_check_all_at(const char *file, int line, const char *et, const ag_tensor *t,
                                 double v, int64_t n, double tol) {
  double want[256];
  int64_t i;
  if (n > 256)
    n = 256;
  for (i = 0; i < n; i++)
    want[i] = v;
  return h_check_values_at(file, line, et, t, want, n, tol);
}
#define CHECK_ALL(t, v, n, tol) h_check_all_at(__FILE__, __LINE__, #t, (t), (v), (n), (tol))

/* CHECK_VALUES (or, with expected NULL, CHECK_ALL of `v`) on the gradient of
 * `t`, which is released after the check. */
static inline int h_check_grad_at(const char *file, int line, const char *et, const ag_tensor *t,
                                  const double *expected, double v, int64_t n, double tol) {
  ag_tensor *g = h_grad_at(file, line, t);
  char buf[256];
  int ok;
  snprintf(buf, sizeof buf, "grad(%s)", et);
  ok = expected ? h_check_values_at(file, line, buf, g, expected, n, tol)
                : h_check_all_at(file, line, buf, g, v, n, tol);
  ag_tensor_release(g);
  return ok;
}
#define CHECK_GRAD_VALUES(t, expected, n, tol) \
  h_check_grad_at(__FILE__, __LINE__, #t, (t), (expected), 0.0, (n), (tol))
#define CHECK_GRAD_ALL(t, v, n, tol) h_check_grad_at(__FILE__, __LINE__, #t, (t), NULL, (v), (n), (tol))

/* shape(t) == shape[0..ndim) */
static inline int h_check_shape_at(const char *file, int line, const char *et, const ag_tensor *t,
                                   const int64_t *shape, int32_t ndim) {
  int64_t dims[AG_MAX_DIMS];
  int32_t i, nd = ag_tensor_ndim(t);
  char buf[512];
  int ok = 1;
  h_st()->checks++;
  if (nd != ndim) {
    snprintf(buf, sizeof buf, "CHECK_SHAPE(%s): ndim %d, expected %d", et, (int)nd, (int)ndim);
    h_fail(file, line, buf);
    return 0;
  }
  if (!h_check_status(file, line, "ag_tensor_shape", ag_tensor_shape(t, dims, AG_MAX_DIMS), AG_OK))
    return 0;
  for (i = 0; i < ndim; i++) {
    if (dims[i] != shape[i]) {
      snprintf(buf, sizeof buf, "CHECK_SHAPE(%s): dim %d is %lld, expected %lld", et, (int)i,
               (long long)dims[i], (long long)shape[i]);
      h_fail(file, line, buf);
      ok = 0;
    }
  }
  return ok;
}
#define CHECK_SHAPE(t, shape, ndim) h_check_shape_at(__FILE__, __LINE__, #t, (t), (shape), (ndim))

/* A copy of the current last error message (the library's buffer is borrowed). */
static inline void h_save_message(char *dst, size_t cap) {
  const char *m = ag_last_error_message();
  snprintf(dst, cap, "%s", m ? m : "");
}

/* Release helpers for brevity (NULL-safe as the library is). */
#define REL(t) ag_tensor_release(t)

/* init_fn on a struct filled with `junk` bytes succeeds and writes exactly
 * `expected` (the struct's INIT value: the last argument, as it has commas). */
#define CHECK_INIT_GIVES(type, init_fn, junk, ...)         \
  do {                                                     \
    const type h_want_ = __VA_ARGS__;                      \
    type h_got_;                                           \
    memset(&h_got_, (junk), sizeof h_got_);                \
    CHECK_OK(init_fn(&h_got_));                            \
    CHECK(memcmp(&h_want_, &h_got_, sizeof h_want_) == 0); \
  } while (0)

/* ------------------------------------------------------------------------ */
/* a small graph that tests of several files start from                      */
/* ------------------------------------------------------------------------ */

/* A context, a leaf x, y = x * x and s = sum(y) (s is NULL in the 0-dim form). */
typedef struct h_squares {
  ag_context *ctx;
  ag_tensor *x, *y, *s;
} h_squares;

/* NULL-safe, so it also cleans up after a half-built graph. */
static inline void h_squares_drop(h_squares *f) {
  ag_tensor_release(f->s);
  ag_tensor_release(f->y);
  ag_tensor_release(f->x);
  ag_context_release(f->ctx);
  f->ctx = NULL;
  f->x = f->y = f->s = NULL;
}

/* x = LEAF(dt, shape, vals), y = x * x, s = sum(y). On failure: 0, recorded,
 * and nothing left to release. */
static inline int h_sum_of_squares_at(const char *file, int line, h_squares *f, ag_dtype dt,
                                      const int64_t *shape, int32_t ndim, const double *vals) {
  f->y = f->s = NULL;
  if (!h_ctx_with_at(file, line, &f->ctx, &f->x, dt, shape, ndim, vals, 1) ||
      !h_check_status(file, line, "ag_op_mul(&y, x, x)", ag_op_mul(&f->y, f->x, f->x), AG_OK) ||
      !h_check_status(file, line, "ag_op_sum(&s, y)", ag_op_sum(&f->s, f->y), AG_OK)) {
    h_squares_drop(f);
    return 0;
  }
  return 1;
}
#define SUM_OF_SQUARES(f, dt, shape, ndim, vals) \
  h_sum_of_squares_at(__FILE__, __LINE__, (f), (dt), (shape), (ndim), (vals))

/* The 0-dim form: x = SCALAR(f64, v) made to require grad, y = x * x, no s. */
static inline int h_square_of_scalar_at(const char *file, int line, h_squares *f, double v) {
  f->x = f->y = f->s = NULL;
  f->ctx = h_ctx_at(file, line, 0);
  if (f->ctx)
    f->x = h_scalar_at(file, line, f->ctx, AG_F64, v);
  if (!h_check(file, line, "context and scalar x != NULL", f->x != NULL) ||
      !h_check_status(file, line, "ag_tensor_requires_grad(x, 1)", ag_tensor_requires_grad(f->x, 1),
                      AG_OK) ||
      !h_check_status(file, line, "ag_op_mul(&y, x, x)", ag_op_mul(&f->y, f->x, f->x), AG_OK)) {
    h_squares_drop(f);
    return 0;
  }
  return 1;
}
#define SQUARE_OF_SCALAR(f, v) h_square_of_scalar_at(__FILE__, __LINE__, (f), (v))

/* A pointer that is never a valid handle, to check out-parameters stay untouched. */
static inline void *h_sentinel(void) {
  static char obj[16];
  return obj;
}
#define SENT_T ((ag_tensor *)h_sentinel())
#define SENT_C ((ag_context *)h_sentinel())

#endif /* AG_TEST_HARNESS_H */
