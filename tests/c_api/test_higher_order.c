/*
 * tests/c_api/test_higher_order.c - graph reuse and gradients of gradients:
 * d2/dx2 and d3/dx3 against closed forms derived by hand and against finite
 * differences of plain C functions, Hessian-vector products of a small MLP
 * against finite differences of the same MLP written in C, released graphs,
 * and the memory of create_graph results (no reference cycle).
 */
#include "harness.h"

static const int64_t s1[1] = {1};

/* d(y)/d(x) through ag_grad with create_graph, so it can be differentiated again. */
static ag_tensor *dgrad(ag_tensor *y, ag_tensor *x) {
  ag_grad_options o = AG_GRAD_OPTIONS_INIT;
  ag_tensor *g = NULL;
  const ag_tensor *outs[1], *ins[1];
  outs[0] = y;
  ins[0] = x;
  o.create_graph = 1;
  if (!CHECK_OK(ag_grad(&g, outs, NULL, 1, ins, 1, &o)))
    return NULL;
  return g;
}

typedef enum { F_CUBE_POW, F_CUBE_MUL, F_TANH, F_EXP_TANH } fkind;

/* y = f(x) recorded with ag ops; *tmp receives intermediates to release. */
static ag_tensor *build(fkind k, ag_tensor *x, ag_tensor **tmp) {
  ag_tensor *y = NULL;
  tmp[0] = tmp[1] = NULL;
  switch (k) {
  case F_CUBE_POW: CHECK_OK(ag_op_pow_scalar(&y, x, 3.0)); break;
  case F_CUBE_MUL:
    CHECK_OK(ag_op_mul(&tmp[0], x, x));
    CHECK_OK(ag_op_mul(&y, tmp[0], x));
    break;
  case F_TANH: CHECK_OK(ag_op_tanh(&y, x)); break;
  case F_EXP_TANH:
    CHECK_OK(ag_op_exp(&tmp[0], x));
    CHECK_OK(ag_op_tanh(&tmp[1], x));
    CHECK_OK(ag_op_mul(&y, tmp[0], tmp[1]));
    break;
  }
  return y;
}

/* The same functions in plain C, and their derivatives worked out by hand:
 * tanh' = s, s = 1 - t^2, s' = -2ts;
 * (e t)' = e(t + s); (e t)'' = e(t + 2s - 2ts); (e t)''' = e(t + 3s - 6ts - 2s^2 + 4t^2 s). */
static double f_c(fkind k, double x, int order) {
  double t = tanh(x), s = 1 - t * t, e = exp(x);
  switch (k) {
  case F_CUBE_POW:
  case F_CUBE_MUL: return order == 0 ? x * x * x : order == 1 ? 3 * x * x : order == 2 ? 6 * x : 6.0;
  case F_TANH: return order == 0 ? t : order == 1 ? s : order == 2 ? -2 * t * s : s * (6 * t * t - 2);
  case F_EXP_TANH:
    return order == 0   ? e * t
           : order == 1 ? e * (t + s)
           : order == 2 ? e * (t + 2 * s - 2 * t * s)
                        : e * (t + 3 * s - 6 * t * s - 2 * s * s + 4 * t * t * s);
  }
  return NAN;
}

/* Central difference of order `order - 1` of the closed forms, in f64: ties
 * the hand-derived forms to f itself, independently of ag. */
static double fd(fkind k, double x, int order) {
  const double h = 1e-5;
  return (f_c(k, x + h, order - 1) - f_c(k, x - h, order - 1)) / (2 * h);
}

static void check_orders(fkind k, ag_dtype dt) {
  static const double points[3] = {-0.7, 0.3, 1.1};
  int p, order;
  for (p = 0; p < 3; p++) {
    ag_context *ctx = NEW_CTX();
    double v = points[p];
    ag_tensor *x, *y, *tmp[2], *g[4] = {NULL, NULL, NULL, NULL};
    REQUIRE(ctx);
    x = LEAF(ctx, dt, s1, 1, &v);
    REQUIRE(x);
    y = build(k, x, tmp);
    REQUIRE(y);
    g[0] = y;
    for (order = 1; order <= 3; order++) {
      double tol = dt == AG_F32 ? 2e-4 * (1 + fabs(f_c(k, v, order))) : 1e-10 * (1 + fabs(f_c(k, v, order)));
      g[order] = dgrad(g[order - 1], x);
      if (!g[order])
        break;
      /* recorded, so differentiable again (d3/dx3 of x^3 is a constant) */
      CHECK(ag_tensor_get_requires_grad(g[order]) == (order < 3 || k >= F_TANH));
      CHECK_CLOSE(ITEM(g[order]), f_c(k, v, order), tol);
      CHECK_CLOSE(f_c(k, v, order), fd(k, v, order), 1e-6 * (1 + fabs(f_c(k, v, order))));
    }
    CHECK_NO_GRAD(x); /* ag_grad never touches .grad */
    for (order = 1; order <= 3; order++)
      REL(g[order]);
    REL(y);
    REL(tmp[0]);
    REL(tmp[1]);
    REL(x);
    ag_context_release(ctx);
  }
}

static void test_cube_pow(ag_dtype dt) { check_orders(F_CUBE_POW, dt); }
static void test_cube_mul(ag_dtype dt) { check_orders(F_CUBE_MUL, dt); }
static void test_tanh_orders(ag_dtype dt) { check_orders(F_TANH, dt); }
static void test_exp_tanh_orders(ag_dtype dt) { check_orders(F_EXP_TANH, dt); }

/* Third derivative of x^3 through ag_backward with create_graph into .grad. */
static void test_third_derivative_via_backward(void) {
  ag_context *ctx = NEW_CTX();
  double v = 1.7;
  ag_backward_options o = AG_BACKWARD_OPTIONS_INIT;
  ag_tensor *x, *y = NULL, *g1, *g2, *g3;
  REQUIRE(ctx);
  x = LEAF(ctx, AG_F64, s1, 1, &v);
  REQUIRE_OK(ag_op_pow_scalar(&y, x, 3.0));
  o.create_graph = 1;
  REQUIRE_OK(ag_backward(y, NULL, &o));
  g1 = GRAD(x);
  CHECK_CLOSE(ITEM(g1), 3 * v * v, 1e-12);
  REQUIRE_OK(ag_tensor_set_grad(x, NULL)); /* start afresh; no cycle to break */
  REQUIRE_OK(ag_backward(g1, NULL, &o));
  g2 = GRAD(x);
  CHECK_CLOSE(ITEM(g2), 6 * v, 1e-12);
  REQUIRE_OK(ag_tensor_set_grad(x, NULL));
  REQUIRE_OK(ag_backward(g2, NULL, NULL));
  g3 = GRAD(x);
  CHECK_CLOSE(ITEM(g3), 6.0, 1e-12);
  CHECK(ag_tensor_get_requires_grad(g3) == 0);
  REL(g3);
  REL(g2);
  REL(g1);
  REL(y);
  REL(x);
  ag_context_release(ctx);
}

/* ---- Hessian-vector product of a small MLP ----------------------------------------
 * loss = sum(w2 * tanh(sum_i x_i W1[i,:] + b1)), x (3,1) fixed, W1 (3,4), b1 (1,4),
 * w2 (1,4). H v is checked against finite differences of the loss written in C. */
enum { NI = 3, NH = 4, NP = NI * NH + 2 * NH };
static const double mlp_x[NI] = {0.5, -1.2, 0.8};

static double mlp_loss_c(const double *p) {
  const double *W1 = p, *b1 = p + NI * NH, *w2 = p + NI * NH + NH;
  double loss = 0;
  int i, j;
  for (j = 0; j < NH; j++) {
    double z = b1[j];
    for (i = 0; i < NI; i++)
      z += mlp_x[i] * W1[i * NH + j];
    loss += w2[j] * tanh(z);
  }
  return loss;
}

static void test_mlp_hessian_vector_product(void) {
  ag_context *ctx = NEW_CTX();
  int64_t sx[2] = {NI, 1}, sw[2] = {NI, NH}, sb[2] = {1, NH};
  double p[NP], v[NP], hv_fd[NP];
  ag_tensor *params[3], *vs[3], *x, *xw = NULL, *z = NULL, *zb = NULL, *h = NULL, *hw = NULL, *loss = NULL;
  ag_tensor *grads[3] = {NULL, NULL, NULL}, *dots[3] = {NULL, NULL, NULL}, *s01 = NULL, *s = NULL;
  ag_tensor *hv[3] = {NULL, NULL, NULL};
  ag_grad_options o = AG_GRAD_OPTIONS_INIT;
  const ag_tensor *outs[1];
  int i, j, k;
  REQUIRE(ctx);
  for (i = 0; i < NP; i++) {
    p[i] = 0.3 * sin(1.7 * i + 0.4);
    v[i] = cos(0.9 * i + 0.2);
  }
  x = MAKE(ctx, AG_F64, sx, 2, mlp_x);
  params[0] = LEAF(ctx, AG_F64, sw, 2, p);
  params[1] = LEAF(ctx, AG_F64, sb, 2, p + NI * NH);
  params[2] = LEAF(ctx, AG_F64, sb, 2, p + NI * NH + NH);
  vs[0] = MAKE(ctx, AG_F64, sw, 2, v);
  vs[1] = MAKE(ctx, AG_F64, sb, 2, v + NI * NH);
  vs[2] = MAKE(ctx, AG_F64, sb, 2, v + NI * NH + NH);
  REQUIRE_OK(ag_op_mul(&xw, x, params[0]));         /* (3,4) */
  REQUIRE_OK(ag_op_sum_to_size(&z, xw, sb, 2));     /* (1,4) */
  REQUIRE_OK(ag_op_add(&zb, z, params[1]));
  REQUIRE_OK(ag_op_tanh(&h, zb));
  REQUIRE_OK(ag_op_mul(&hw, h, params[2]));
  REQUIRE_OK(ag_op_sum(&loss, hw));
  CHECK_CLOSE(ITEM(loss), mlp_loss_c(p), 1e-12);

  outs[0] = loss;
  o.create_graph = 1;
  REQUIRE_OK(ag_grad(grads, outs, NULL, 1, (const ag_tensor *const *)params, 3, &o));
  for (k = 0; k < 3; k++)
    REQUIRE_OK(ag_op_mul(&dots[k], grads[k], vs[k]));
  {
    ag_tensor *d0 = NULL, *d1 = NULL, *d2 = NULL;
    REQUIRE_OK(ag_op_sum(&d0, dots[0]));
    REQUIRE_OK(ag_op_sum(&d1, dots[1]));
    REQUIRE_OK(ag_op_sum(&d2, dots[2]));
    REQUIRE_OK(ag_op_add(&s01, d0, d1));
    REQUIRE_OK(ag_op_add(&s, s01, d2));
    REL(d0);
    REL(d1);
    REL(d2);
  }
  outs[0] = s;
  o.create_graph = 0;
  REQUIRE_OK(ag_grad(hv, outs, NULL, 1, (const ag_tensor *const *)params, 3, &o));

  /* (H v)_i = d/de_i d/dt loss(p + e_i + t v), by a 2-D central difference. */
  for (i = 0; i < NP; i++) {
    const double e = 1e-4;
    double q[NP], acc = 0;
    int a, b;
    for (a = -1; a <= 1; a += 2) {
      for (b = -1; b <= 1; b += 2) {
        for (j = 0; j < NP; j++)
          q[j] = p[j] + b * e * v[j] + (j == i ? a * e : 0.0);
        acc += a * b * mlp_loss_c(q);
      }
    }
    hv_fd[i] = acc / (4 * e * e);
  }
  CHECK_VALUES(hv[0], hv_fd, NI * NH, 1e-6);
  CHECK_VALUES(hv[1], hv_fd + NI * NH, NH, 1e-6);
  CHECK_VALUES(hv[2], hv_fd + NI * NH + NH, NH, 1e-6);
  for (k = 0; k < 3; k++) {
    CHECK_NO_GRAD(params[k]);
    REL(hv[k]);
    REL(dots[k]);
    REL(grads[k]);
    REL(params[k]);
    REL(vs[k]);
  }
  REL(s);
  REL(s01);
  REL(loss);
  REL(hw);
  REL(h);
  REL(zb);
  REL(z);
  REL(xw);
  REL(x);
  ag_context_release(ctx);
}

/* ---- graph reuse ----------------------------------------------------------- */

static void test_released_graph_names_the_node(void) {
  ag_context *ctx = NEW_CTX();
  double v = 0.5;
  ag_tensor *x, *y = NULL, *z = NULL, *g;
  REQUIRE(ctx);
  x = LEAF(ctx, AG_F64, s1, 1, &v);
  REQUIRE_OK(ag_op_exp(&y, x));
  REQUIRE_OK(ag_op_mul(&z, y, y));
  REQUIRE_OK(ag_backward(z, NULL, NULL));
  CHECK_ERR(ag_backward(z, NULL, NULL), AG_ERR_GRAPH, "ag_backward");
  CHECK_MSG_HAS("MulBackward");
  CHECK_MSG_HAS("retain_graph");
  /* nothing changed by the failed call: the gradient is that of one pass */
  g = GRAD(x);
  CHECK_CLOSE(ITEM(g), 2 * exp(2 * v), 1e-12);
  REL(g);
  REL(z);
  REL(y);
  REL(x);
  ag_context_release(ctx);
}

static void test_retain_graph_twice(void) {
  ag_context *ctx = NEW_CTX();
  double v = 0.5;
  ag_backward_options o = AG_BACKWARD_OPTIONS_INIT;
  ag_tensor *x, *y = NULL, *g;
  REQUIRE(ctx);
  x = LEAF(ctx, AG_F64, s1, 1, &v);
  REQUIRE_OK(ag_op_tanh(&y, x));
  o.retain_graph = 1;
  REQUIRE_OK(ag_backward(y, NULL, &o));
  REQUIRE_OK(ag_backward(y, NULL, &o));
  REQUIRE_OK(ag_backward(y, NULL, NULL)); /* the last one frees */
  g = GRAD(x);
  CHECK_CLOSE(ITEM(g), 3 * (1 - tanh(v) * tanh(v)), 1e-12);
  CHECK_ERR(ag_backward(y, NULL, NULL), AG_ERR_GRAPH, "ag_backward");
  CHECK_MSG_HAS("TanhBackward");
  REL(g);
  REL(y);
  REL(x);
  ag_context_release(ctx);
}

/* A graph that saved nothing (sums only) may be walked again, as in PyTorch. */
static void test_add_only_graph_walks_again(void) {
  ag_context *ctx = NEW_CTX();
  double v = 0.5;
  ag_tensor *x, *y = NULL, *g;
  REQUIRE(ctx);
  x = LEAF(ctx, AG_F64, s1, 1, &v);
  REQUIRE_OK(ag_op_add(&y, x, x));
  REQUIRE_OK(ag_backward(y, NULL, NULL));
  CHECK_OK(ag_backward(y, NULL, NULL));
  g = GRAD(x);
  CHECK_CLOSE(ITEM(g), 4.0, 0);
  REL(g);
  REL(y);
  REL(x);
  ag_context_release(ctx);
}

/* ---- no reference cycle ---------------------------------------------------- */

static int64_t in_use(ag_context *ctx) {
  ag_memory_stats s = AG_MEMORY_STATS_INIT;
  CHECK_OK(ag_context_memory_stats(ctx, &s));
  return s.bytes_in_use;
}

/* After a create_graph backward, leaf, gradient, graph and root are freed in
 * every release order without clearing the gradient first. Tensors of 512
 * doubles, so their storage is counted in bytes_in_use. */
static void test_create_graph_frees_in_any_order(void) {
  int order;
  for (order = 0; order < 6; order++) {
    ag_context *ctx = NEW_CTX_THREADS(1);
    int64_t n = 512, i;
    double xv[512];
    ag_tensor *x, *y = NULL, *l = NULL, *g, *t[3];
    ag_backward_options o = AG_BACKWARD_OPTIONS_INIT;
    static const int perm[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    REQUIRE(ctx);
    for (i = 0; i < n; i++)
      xv[i] = 0.001 * (double)i;
    {
      const int64_t base = in_use(ctx);
      x = LEAF(ctx, AG_F64, &n, 1, xv);
      REQUIRE_OK(ag_op_mul(&y, x, x)); /* saves the leaf */
      REQUIRE_OK(ag_op_sum(&l, y));
      o.create_graph = 1;
      REQUIRE_OK(ag_backward(l, NULL, &o));
      g = GRAD(x);
      REQUIRE(g != NULL);
      CHECK(ag_tensor_get_requires_grad(g) == 1);
      REL(y);
      t[0] = x;
      t[1] = g;
      t[2] = l;
      for (i = 0; i < 3; i++)
        REL(t[perm[order][i]]);
      CHECK(in_use(ctx) == base);
    }
    ag_context_release(ctx);
  }
}

int main(int argc, char **argv) {
  h_init(argc, argv);
  RUN_F64_F32(test_cube_pow);
  RUN_F64_F32(test_cube_mul);
  RUN_F64_F32(test_tanh_orders);
  RUN_F64_F32(test_exp_tanh_orders);
  RUN(test_third_derivative_via_backward);
  RUN(test_mlp_hessian_vector_product);
  RUN(test_released_graph_names_the_node);
  RUN(test_retain_graph_twice);
  RUN(test_add_only_graph_walks_again);
  RUN(test_create_graph_frees_in_any_order);
  return h_finish();
}
