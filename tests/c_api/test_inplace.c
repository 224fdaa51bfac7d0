/*
 * tests/c_api/test_inplace.c - in-place ops: values against scalar
 * references (broadcast, 0-dim, empty), version counters shared by views,
 * saved tensors modified before backward, optimizer-style updates with grad
 * mode off, history rebased onto the out-of-place ops (first and second
 * derivatives against finite differences of C functions), and bad input.
 */
#include "harness.h"

static const int64_t s3[1] = {3};
static const int64_t s23[2] = {2, 3};

typedef ag_status (*binary_inplace_fn)(ag_tensor *, const ag_tensor *);

static double apply_ref(int op, double a, double b) {
  switch (op) {
  case 0: return a + b;
  case 1: return a - b;
  case 2: return a * b;
  case 3: return a / b;
  default: return b; /* copy_ */
  }
}

/* self (2,3) op= other (3) and op= a 0-dim tensor, against the scalar reference. */
static void test_binary_values(ag_dtype dt) {
  static const binary_inplace_fn fns[5] = {ag_op_add_, ag_op_sub_, ag_op_mul_, ag_op_div_, ag_op_copy_};
  int op, i, j;
  for (op = 0; op < 5; op++) {
    ag_context *ctx = NEW_CTX();
    double sv[6] = {1.5, -2, 3, 0.25, 8, -0.5}, ov[3] = {2, -4, 0.5}, want[6];
    ag_tensor *self, *other, *sc;
    int64_t v0;
    REQUIRE(ctx);
    self = MAKE(ctx, dt, s23, 2, sv);
    other = MAKE(ctx, dt, s3, 1, ov);
    sc = SCALAR(ctx, dt, 3.0);
    v0 = ag_tensor_version(self);
    REQUIRE_OK(fns[op](self, other));
    CHECK(ag_tensor_version(self) == v0 + 1);
    for (i = 0; i < 2; i++)
      for (j = 0; j < 3; j++)
        want[i * 3 + j] = apply_ref(op, sv[i * 3 + j], ov[j]);
    if (dt == AG_F32)
      for (i = 0; i < 6; i++)
        want[i] = (float)want[i];
    CHECK_VALUES(self, want, 6, h_tol(dt) * 4);
    REQUIRE_OK(fns[op](self, sc));
    for (i = 0; i < 6; i++)
      want[i] = apply_ref(op, want[i], 3.0);
    CHECK_VALUES(self, want, 6, h_tol(dt) * 4);
    CHECK(ag_tensor_get_requires_grad(self) == 0 && ag_tensor_is_leaf(self) == 1);
    REL(sc);
    REL(other);
    REL(self);
    ag_context_release(ctx);
  }
}

/* A large contiguous self takes the chunked path: same values. */
static void test_large_values(void) {
  ag_context *ctx = NEW_CTX();
  int64_t n = 200003, i;
  double *a = malloc(sizeof(double) * (size_t)n), *b = malloc(sizeof(double) * (size_t)n);
  double *got = malloc(sizeof(double) * (size_t)n);
  ag_tensor *ta, *tb;
  int bad = 0;
  REQUIRE(ctx && a && b && got);
  for (i = 0; i < n; i++) {
    a[i] = 0.001 * (double)i;
    b[i] = 1.0 + 0.0005 * (double)(i % 77);
  }
  ta = MAKE(ctx, AG_F64, &n, 1, a);
  tb = MAKE(ctx, AG_F64, &n, 1, b);
  REQUIRE_OK(ag_op_div_(ta, tb));
  REQUIRE_OK(ag_op_clamp_(ta, 0.5, 150.0));
  REQUIRE_OK(ag_tensor_copy_data(ta, got, sizeof(double) * (size_t)n));
  for (i = 0; i < n; i++) {
    double w = a[i] / b[i];
    w = w < 0.5 ? 0.5 : w > 150.0 ? 150.0 : w;
    bad += got[i] != w;
  }
  CHECK(bad == 0);
  REL(ta);
  REL(tb);
  free(a);
  free(b);
  free(got);
  ag_context_release(ctx);
}

static void test_fill_zero_clamp_values(ag_dtype dt) {
  ag_context *ctx = NEW_CTX();
  double v[6] = {-3, -0.5, 0, 0.5, 3, NAN}, w[6], clamped[6] = {-1, -0.5, 0, 0.5, 1, NAN};
  ag_tensor *t, *ti, *tb;
  int i;
  REQUIRE(ctx);
  t = MAKE(ctx, dt, s23, 2, v);
  REQUIRE_OK(ag_op_clamp_(t, -1, 1));
  REQUIRE(READ(t, w, 6) == 6);
  for (i = 0; i < 5; i++)
    CHECK_CLOSE(w[i], clamped[i], 0);
  CHECK(isnan(w[5])); /* NaN stays NaN */
  REQUIRE_OK(ag_op_clamp_(t, -INFINITY, 0.25)); /* one bound only */
  REQUIRE(READ(t, w, 6) == 6);
  CHECK_CLOSE(w[0], -1, 0);
  CHECK_CLOSE(w[4], 0.25, 0);
  REQUIRE_OK(ag_op_clamp_(t, 2, 1)); /* min > max: max everywhere but NaN */
  REQUIRE(READ(t, w, 6) == 6);
  for (i = 0; i < 5; i++)
    CHECK_CLOSE(w[i], 1, 0);
  REQUIRE_OK(ag_op_fill_(t, 2.5));
  CHECK_ALL(t, 2.5, 6, 0);
  REQUIRE_OK(ag_op_zero_(t));
  CHECK_ALL(t, 0, 6, 0);
  /* fill_ and zero_ take every dtype */
  ti = MAKE(ctx, AG_I64, s3, 1, NULL);
  REQUIRE_OK(ag_op_fill_(ti, -7));
  CHECK_ALL(ti, -7, 3, 0);
  tb = MAKE(ctx, AG_BOOL, s3, 1, NULL);
  REQUIRE_OK(ag_op_fill_(tb, 1));
  CHECK_ALL(tb, 1, 3, 0);
  REQUIRE_OK(ag_op_zero_(tb));
  CHECK_ALL(tb, 0, 3, 0);
  REL(t);
  REL(ti);
  REL(tb);
  ag_context_release(ctx);
}

/* Zero-size dims: nothing written, still fine; broadcasting rules still apply. */
static void test_empty(void) {
  ag_context *ctx = NEW_CTX();
  int64_t s03[2] = {0, 3};
  ag_tensor *e, *o, *bad;
  double ov[3] = {1, 2, 3};
  REQUIRE(ctx);
  e = MAKE(ctx, AG_F32, s03, 2, NULL);
  o = MAKE(ctx, AG_F32, s3, 1, ov);
  bad = MAKE(ctx, AG_F32, s23, 2, NULL);
  CHECK_OK(ag_op_add_(e, o));
  CHECK_OK(ag_op_mul_(e, o));
  CHECK_OK(ag_op_clamp_(e, 0, 1));
  CHECK_OK(ag_op_fill_(e, 4));
  CHECK_OK(ag_op_copy_(e, o));
  CHECK(ag_tensor_numel(e) == 0);
  CHECK_ERR(ag_op_add_(e, bad), AG_ERR_SHAPE, "ag_op_add_"); /* (2,3) does not go into (0,3) */
  REL(bad);
  REL(o);
  REL(e);
  ag_context_release(ctx);
}

/* ---- versions and saved tensors ------------------------------------------------ */

static void test_views_share_version(void) {
  ag_context *ctx = NEW_CTX();
  double v[3] = {1, 2, 3};
  ag_tensor *a, *d = NULL, *one;
  int64_t v0;
  REQUIRE(ctx);
  a = MAKE(ctx, AG_F64, s3, 1, v);
  one = SCALAR(ctx, AG_F64, 1);
  REQUIRE_OK(ag_tensor_detach(&d, a));
  v0 = ag_tensor_version(d);
  REQUIRE_OK(ag_op_add_(a, one));
  CHECK(ag_tensor_version(d) == v0 + 1);
  {
    double want[3] = {2, 3, 4};
    CHECK_VALUES(d, want, 3, 0); /* same data */
  }
  REQUIRE_OK(ag_op_zero_(d));
  CHECK(ag_tensor_version(a) == v0 + 2);
  CHECK_ALL(a, 0, 3, 0);
  REL(one);
  REL(d);
  REL(a);
  ag_context_release(ctx);
}

static void test_saved_tensor_modified(ag_dtype dt) {
  ag_context *ctx = NEW_CTX();
  double xv[3] = {1, 2, 3}, av[3] = {4, 5, 6};
  ag_tensor *x, *a, *y = NULL, *l = NULL, *one;
  REQUIRE(ctx);
  x = LEAF(ctx, dt, s3, 1, xv);
  a = MAKE(ctx, dt, s3, 1, av);
  one = SCALAR(ctx, dt, 1);
  REQUIRE_OK(ag_tensor_set_tag(a, "scale"));
  REQUIRE_OK(ag_op_mul(&y, x, a)); /* saves a */
  REQUIRE_OK(ag_op_sum(&l, y));
  REQUIRE_OK(ag_op_add_(a, one)); /* a requires no grad: a plain write */
  CHECK_ERR(ag_backward(l, NULL, NULL), AG_ERR_VERSION, "ag_backward");
  CHECK_MSG_HAS("MulBackward");
  CHECK_MSG_HAS("the tensor 'scale' of shape (3)");
  CHECK_MSG_HAS("version is 1, expected 0");
  CHECK_NO_GRAD(x);
  REL(one);
  REL(l);
  REL(y);
  REL(a);
  REL(x);
  ag_context_release(ctx);
}

/* A saved leaf keeps its tag in the message (its node saved a view). */
/* An op's own output, saved (kept as its storage alone): its bytes count,
 * two retained passes unpack it alike, and writing into it after the
 * forward fails the backward with AG_ERR_VERSION naming its shape. */
static void test_saved_output_modified(ag_dtype dt) {
  ag_context *ctx = NEW_CTX();
  double xv[3] = {0.5, -1, 2}, want[3];
  ag_tensor *x, *y = NULL, *z = NULL, *l = NULL, *one, *g = NULL;
  const ag_node *node = NULL;
  ag_backward_options opts;
  int32_t prev;
  int i;
  REQUIRE(ctx);
  x = LEAF(ctx, dt, s3, 1, xv);
  one = SCALAR(ctx, dt, 1);
  REQUIRE_OK(ag_op_exp(&y, x)); /* saves its output y */
  REQUIRE_OK(ag_tensor_grad_fn(&node, y));
  CHECK(ag_node_saved_bytes(node) == 3 * (dt == AG_F64 ? 8u : 4u));
  REQUIRE_OK(ag_op_sum(&l, y));
  REQUIRE_OK(ag_backward_options_init(&opts));
  opts.retain_graph = 1;
  REQUIRE_OK(ag_backward(l, NULL, &opts));
  REQUIRE_OK(ag_backward(l, NULL, &opts));
  REQUIRE_OK(ag_tensor_grad(&g, x));
  for (i = 0; i < 3; ++i) want[i] = 2 * exp(xv[i]);
  CHECK_VALUES(g, want, 3, h_tol(dt) * 4);
  REL(g);
  REQUIRE_OK(ag_tensor_set_grad(x, NULL));
  REQUIRE_OK(ag_op_tanh(&z, y)); /* saves its output z */
  REL(l);
  REQUIRE_OK(ag_op_sum(&l, z));
  REQUIRE_OK(ag_grad_mode_set(0, &prev));
  REQUIRE_OK(ag_op_mul_(y, one)); /* a write into exp's saved output */
  REQUIRE_OK(ag_grad_mode_set(prev, NULL));
  CHECK_ERR(ag_backward(l, NULL, NULL), AG_ERR_VERSION, "ag_backward");
  CHECK_MSG_HAS("ExpBackward: the tensor of shape (3) that this node saved was modified");
  CHECK_MSG_HAS("version is 1, expected 0");
  CHECK_NO_GRAD(x);
  REL(l);
  REL(z);
  REL(y);
  REL(one);
  REL(x);
  ag_context_release(ctx);
}

static void test_saved_leaf_and_output_tags(void) {
  ag_context *ctx = NEW_CTX();
  double xv[3] = {1, 2, 3};
  ag_tensor *x, *y = NULL, *z = NULL, *l = NULL, *one;
  int32_t prev;
  REQUIRE(ctx);
  x = LEAF(ctx, AG_F64, s3, 1, xv);
  one = SCALAR(ctx, AG_F64, 1);
  REQUIRE_OK(ag_tensor_set_tag(x, "weights"));
  CHECK_STR(ag_tensor_tag(x), "weights");
  REQUIRE_OK(ag_op_mul(&y, x, x)); /* saves the leaf */
  REQUIRE_OK(ag_op_sum(&l, y));
  REQUIRE_OK(ag_grad_mode_set(0, &prev));
  REQUIRE_OK(ag_op_mul_(x, one)); /* an optimizer-style write */
  REQUIRE_OK(ag_grad_mode_set(prev, NULL));
  CHECK_ERR(ag_backward(l, NULL, NULL), AG_ERR_VERSION, "ag_backward");
  CHECK_MSG_HAS("MulBackward: the tensor 'weights' of shape (3)");
  REL(l);
  REL(y);
  /* tag API */
  REQUIRE_OK(ag_op_exp(&z, x));
  REQUIRE_OK(ag_tensor_set_tag(z, "activations"));
  CHECK_STR(ag_tensor_tag(z), "activations");
  REQUIRE_OK(ag_tensor_set_tag(z, NULL));
  CHECK(ag_tensor_tag(z) == NULL);
  CHECK(ag_tensor_tag(NULL) == NULL);
  CHECK_ERR(ag_tensor_set_tag(NULL, "x"), AG_ERR_INVALID_ARGUMENT, "ag_tensor_set_tag");
  REL(z);
  REL(one);
  REL(x);
  ag_context_release(ctx);
}

/* ---- leaves: an SGD step with grad mode off ---------------------------------- */

static void test_optimizer_update(void) {
  ag_context *ctx = NEW_CTX();
  double wv[3] = {1, -2, 0.5}, want[3];
  ag_tensor *w, *y = NULL, *l = NULL, *g, *lr, *step = NULL, *one;
  int32_t prev;
  int i;
  REQUIRE(ctx);
  w = LEAF(ctx, AG_F64, s3, 1, wv);
  lr = SCALAR(ctx, AG_F64, 0.1);
  one = SCALAR(ctx, AG_F64, 1);
  REQUIRE_OK(ag_op_mul(&y, w, w));
  REQUIRE_OK(ag_op_sum(&l, y));
  REQUIRE_OK(ag_backward(l, NULL, NULL));
  g = GRAD(w);
  /* grad mode on: refused, w unchanged */
  CHECK_ERR(ag_op_sub_(w, one), AG_ERR_GRAPH, "ag_op_sub_");
  CHECK_MSG_HAS("leaf that requires grad");
  CHECK_VALUES(w, wv, 3, 0);
  CHECK(ag_tensor_version(w) == 0);
  REQUIRE_OK(ag_grad_mode_set(0, &prev));
  REQUIRE_OK(ag_op_mul(&step, g, lr));
  CHECK_OK(ag_op_sub_(w, step));
  CHECK_OK(ag_op_zero_(g)); /* zero the gradient in place too */
  REQUIRE_OK(ag_grad_mode_set(prev, NULL));
  for (i = 0; i < 3; i++)
    want[i] = wv[i] - 0.1 * 2 * wv[i];
  CHECK_VALUES(w, want, 3, 1e-15);
  CHECK(ag_tensor_is_leaf(w) == 1 && ag_tensor_get_requires_grad(w) == 1);
  CHECK_ALL(g, 0, 3, 0);
  REL(step);
  REL(g);
  REL(l);
  REL(y);
  REL(one);
  REL(lr);
  REL(w);
  ag_context_release(ctx);
}

/* ---- rebased history ------------------------------------------------------------ */

/* f(x, c) = sum(((2x) *= x) += x) /= c) = sum((2x^2 + x) / c), c a (1) leaf.
 * df/dx = (4x + 1) / c; df/dc = -sum(2x^2 + x) / c^2; d2f/dx2 (summed) = 4/c each. */
static double f_c(const double *x, double c) {
  double s = 0;
  int i;
  for (i = 0; i < 3; i++)
    s += (2 * x[i] * x[i] + x[i]) / c;
  return s;
}

static void test_rebase_gradients(ag_dtype dt) {
  ag_context *ctx = NEW_CTX();
  int64_t s1 = 1;
  double xv[3] = {0.5, -1.25, 2}, cv = 1.5, gx_fd[3], gc_fd, h = 1e-6;
  ag_tensor *x, *c, *two, *t = NULL, *l = NULL, *grads[2] = {NULL, NULL};
  ag_tensor *sgx = NULL, *hx[1] = {NULL};
  const ag_tensor *outs[1], *ins[2];
  ag_grad_options o = AG_GRAD_OPTIONS_INIT;
  double tol = dt == AG_F32 ? 1e-4 : 1e-7;
  int i;
  REQUIRE(ctx);
  x = LEAF(ctx, dt, s3, 1, xv);
  c = LEAF(ctx, dt, &s1, 1, &cv);
  two = SCALAR(ctx, dt, 2);
  REQUIRE_OK(ag_op_mul(&t, x, two));
  REQUIRE_OK(ag_op_mul_(t, x));
  CHECK_STR(ag_tensor_grad_fn_name(t), "MulBackward");
  REQUIRE_OK(ag_op_add_(t, x));
  CHECK_STR(ag_tensor_grad_fn_name(t), "AddBackward");
  REQUIRE_OK(ag_op_div_(t, c)); /* other (1) broadcast and requiring grad */
  REQUIRE_OK(ag_op_sum(&l, t));
  CHECK_CLOSE(ITEM(l), f_c(xv, cv), tol);
  for (i = 0; i < 3; i++) {
    double xp[3], xm[3];
    memcpy(xp, xv, sizeof xp);
    memcpy(xm, xv, sizeof xm);
    xp[i] += h;
    xm[i] -= h;
    gx_fd[i] = (f_c(xp, cv) - f_c(xm, cv)) / (2 * h);
  }
  gc_fd = (f_c(xv, cv + h) - f_c(xv, cv - h)) / (2 * h);
  outs[0] = l;
  ins[0] = x;
  ins[1] = c;
  o.create_graph = 1;
  REQUIRE_OK(ag_grad(grads, outs, NULL, 1, ins, 2, &o));
  CHECK_VALUES(grads[0], gx_fd, 3, tol);
  CHECK_CLOSE(ITEM(grads[1]), gc_fd, tol * 10);
  /* second order: d/dx sum(df/dx) = 4/c for each element */
  REQUIRE_OK(ag_op_sum(&sgx, grads[0]));
  outs[0] = sgx;
  o.create_graph = 0;
  REQUIRE_OK(ag_grad(hx, outs, NULL, 1, ins, 1, &o));
  CHECK_ALL(hx[0], 4 / cv, 3, tol);
  REL(hx[0]);
  REL(sgx);
  REL(grads[0]);
  REL(grads[1]);
  REL(l);
  REL(t);
  REL(two);
  REL(c);
  REL(x);
  ag_context_release(ctx);
}

/* fill_, zero_, copy_ and clamp_ on a non-leaf: the old values' gradient. */
static void test_rebase_fill_copy_clamp(void) {
  ag_context *ctx = NEW_CTX();
  int64_t s1 = 1;
  double xv[3] = {-2, 0.5, 3}, sv = 4, mask[3] = {0, 1, 0}, zeros[3] = {0, 0, 0};
  ag_tensor *x, *s, *t = NULL, *l = NULL, *g[2] = {NULL, NULL};
  const ag_tensor *outs[1], *ins[2];
  int k;
  REQUIRE(ctx);
  x = LEAF(ctx, AG_F64, s3, 1, xv);
  s = LEAF(ctx, AG_F64, &s1, 1, &sv);
  ins[0] = x;
  ins[1] = s;
  for (k = 0; k < 4; k++) {
    ag_grad_options o = AG_GRAD_OPTIONS_INIT;
    o.allow_unused = 1;
    REQUIRE_OK(ag_op_clone(&t, x));
    switch (k) {
    case 0: REQUIRE_OK(ag_op_clamp_(t, -1, 1)); break;
    case 1: REQUIRE_OK(ag_op_fill_(t, 7)); break;
    case 2: REQUIRE_OK(ag_op_zero_(t)); break;
    case 3: REQUIRE_OK(ag_op_copy_(t, s)); break;
    }
    CHECK(ag_tensor_get_requires_grad(t) == 1);
    REQUIRE_OK(ag_op_sum(&l, t));
    outs[0] = l;
    REQUIRE_OK(ag_grad(g, outs, NULL, 1, ins, 2, &o));
    CHECK_VALUES(g[0], k == 0 ? mask : zeros, 3, 0);
    if (k == 3) {
      CHECK_CLOSE(ITEM(g[1]), 3.0, 0); /* summed back to src's shape */
      CHECK_ALL(t, 4, 3, 0);
    } else {
      CHECK(g[1] == NULL);
    }
    REL(g[0]);
    REL(g[1]);
    g[0] = g[1] = NULL;
    REL(l);
    REL(t);
  }
  REL(s);
  REL(x);
  ag_context_release(ctx);
}

/* A constant modified with a tensor that requires grad starts a history. */
static void test_rebase_constant_self(void) {
  ag_context *ctx = NEW_CTX();
  double av[3] = {1, 2, 3}, xv[3] = {4, 5, 6};
  ag_tensor *a, *x, *l = NULL;
  REQUIRE(ctx);
  a = MAKE(ctx, AG_F64, s3, 1, av);
  x = LEAF(ctx, AG_F64, s3, 1, xv);
  REQUIRE_OK(ag_op_mul_(a, x));
  CHECK(ag_tensor_is_leaf(a) == 0 && ag_tensor_get_requires_grad(a) == 1);
  REQUIRE_OK(ag_op_sum(&l, a));
  REQUIRE_OK(ag_backward(l, NULL, NULL));
  CHECK_GRAD_VALUES(x, av, 3, 0); /* d sum(a*x)/dx = old a */
  REL(l);
  REL(x);
  REL(a);
  ag_context_release(ctx);
}

/* ---- bad input -------------------------------------------------------------------- */

static void test_errors(void) {
  ag_context *ctx = NEW_CTX(), *other_ctx = NEW_CTX();
  double v3[3] = {1, 2, 3};
  int64_t s4 = 4, s31[2] = {3, 1}, s33[2] = {3, 3};
  ag_tensor *a, *b4, *f32, *foreign, *i64, *x, *y = NULL, *ex = NULL, *col, *h = NULL, *z = NULL;
  REQUIRE(ctx && other_ctx);
  a = MAKE(ctx, AG_F64, s3, 1, v3);
  b4 = MAKE(ctx, AG_F64, &s4, 1, NULL);
  f32 = MAKE(ctx, AG_F32, s3, 1, v3);
  foreign = MAKE(other_ctx, AG_F64, s3, 1, v3);
  i64 = MAKE(ctx, AG_I64, s3, 1, v3);
  x = LEAF(ctx, AG_F64, s3, 1, v3);
  col = MAKE(ctx, AG_F64, s31, 2, v3);
  CHECK_ERR(ag_op_add_(NULL, a), AG_ERR_INVALID_ARGUMENT, "ag_op_add_");
  CHECK_MSG_HAS("input self is NULL (missing: did an earlier call fail?)");
  CHECK_ERR(ag_op_mul_(a, NULL), AG_ERR_INVALID_ARGUMENT, "ag_op_mul_");
  CHECK_MSG_HAS("input other is NULL (missing: did an earlier call fail?)");
  CHECK_ERR(ag_op_copy_(a, NULL), AG_ERR_INVALID_ARGUMENT, "ag_op_copy_");
  CHECK_MSG_HAS("input src is NULL (missing: did an earlier call fail?)");
  CHECK_ERR(ag_op_add_(a, b4), AG_ERR_SHAPE, "ag_op_add_");
  CHECK_MSG_HAS("(4)");
  CHECK_ERR(ag_op_sub_(a, col), AG_ERR_SHAPE, "ag_op_sub_"); /* would grow self to (3,3) */
  CHECK_MSG_HAS("cannot broadcast the other tensor of shape (3,1) to self's shape (3)");
  CHECK_ERR(ag_op_div_(a, f32), AG_ERR_DTYPE, "ag_op_div_");
  CHECK_ERR(ag_op_copy_(a, f32), AG_ERR_DTYPE, "ag_op_copy_");
  CHECK_ERR(ag_op_add_(a, foreign), AG_ERR_CONTEXT, "ag_op_add_");
  CHECK_ERR(ag_op_add_(i64, i64), AG_ERR_DTYPE, "ag_op_add_");
  CHECK_ERR(ag_op_clamp_(i64, 0, 1), AG_ERR_DTYPE, "ag_op_clamp_");
  CHECK_ERR(ag_op_clamp_(a, NAN, 1), AG_ERR_INVALID_ARGUMENT, "ag_op_clamp_");
  CHECK_ERR(ag_op_fill_(i64, 1e300), AG_ERR_INVALID_ARGUMENT, "ag_op_fill_");
  REQUIRE_OK(ag_op_expand(&ex, col, s33, 2));
  CHECK_ERR(ag_op_zero_(ex), AG_ERR_UNSUPPORTED, "ag_op_zero_");
  CHECK_MSG_HAS("expand");
  /* recording into a tensor whose storage a saved output shares */
  REQUIRE_OK(ag_op_exp(&y, x));
  CHECK_ERR(ag_op_add_(y, a), AG_ERR_UNSUPPORTED, "ag_op_add_");
  CHECK_MSG_HAS("shares its storage");
  /* recording into a tensor a node saved as its input (z's node would be
   * reachable from h's new history while holding h: a cycle) */
  REQUIRE_OK(ag_op_mul(&h, x, a));
  REQUIRE_OK(ag_op_sin(&z, h));
  CHECK_ERR(ag_op_add_(h, z), AG_ERR_UNSUPPORTED, "ag_op_add_");
  CHECK_MSG_HAS("saved for the backward of an op");
  CHECK(ag_tensor_version(h) == 0);
  /* z's node is not in the history of h or a: recorded, as in PyTorch, and
   * a backward through z then fails on the version */
  REQUIRE_OK(ag_op_add_(h, a));
  CHECK(ag_tensor_version(h) == 1);
  CHECK_ERR(ag_backward(z, a, NULL), AG_ERR_VERSION, "ag_backward");
  REL(z);
  REL(h);
  /* failures changed nothing */
  CHECK_VALUES(a, v3, 3, 0);
  CHECK(ag_tensor_version(a) == 0 && ag_tensor_version(y) == 0);
  REL(ex);
  REL(y);
  REL(col);
  REL(x);
  REL(i64);
  REL(foreign);
  REL(f32);
  REL(b4);
  REL(a);
  ag_context_release(ctx);
  ag_context_release(other_ctx);
}

int main(int argc, char **argv) {
  h_init(argc, argv);
  RUN_F64_F32(test_binary_values);
  RUN_F64_F32(test_fill_zero_clamp_values);
  RUN_F64_F32(test_saved_tensor_modified);
  RUN_F64_F32(test_saved_output_modified);
  RUN_F64_F32(test_rebase_gradients);
  RUN(test_large_values);
  RUN(test_empty);
  RUN(test_views_share_version);
  RUN(test_saved_leaf_and_output_tags);
  RUN(test_optimizer_update);
  RUN(test_rebase_fill_copy_clamp);
  RUN(test_rebase_constant_self);
  RUN(test_errors);
  return h_finish();
}
