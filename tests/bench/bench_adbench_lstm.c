/*
 * tests/bench/bench_adbench_lstm.c - ADBench's LSTM objective (diagonal
 * weights: every gate is an elementwise product) and its gradient w.r.t.
 * main_params and extra_params.
 *
 * Sizes: l layers, sequence length c, b characters (the hidden size).
 * main_params (2l, 4b): per layer a weight row and a bias row, each the four
 * gates (forget, input, output, change) of b entries; extra_params (3, b):
 * input scale, output scale, output bias; state (2l, b): per layer the
 * initial hidden and cell; sequence (c, b): one-hot characters. For t = 0 ..
 * c-2: x = sequence[t] * extra[0]; through each layer:
 *   forget = sigmoid(x W_f + B_f), ingate = sigmoid(h W_i + B_i),
 *   outgate = sigmoid(x W_o + B_o), change = tanh(h W_c + B_c),
 *   cell = cell forget + ingate change, h = outgate tanh(cell), x = h;
 * ypred = x extra[1] + extra[2]. loss = -sum_t sum(sequence[t+1] *
 * log_softmax(ypred_t)) / ((c-1) b). The state carries over from step to
 * step. The output layer does not feed back, so it runs once over the
 * stacked final hiddens of all steps.
 */
#define _POSIX_C_SOURCE 200809L

#include "bench_adbench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  int l, c, b;
  double *main, *extra, *state, *seq; /* host inputs */
  ag_tensor *t_main, *t_extra, *t_state, *t_gold, *t_scale;
  ag_tensor **t_in; /* the c-1 input characters, (1, b) each */
  ag_tensor *grads[2];
  hlist hl; /* the handles of one evaluation */
} lstm_t;

static void lstm_leaves(lstm_t *m) {
  ag_tensor_release(m->t_main);
  ag_tensor_release(m->t_extra);
  int64_t sm[2] = {2 * m->l, 4 * m->b}, se[2] = {3, m->b};
  m->t_main = mk(m->main, sm, 2);
  m->t_extra = mk(m->extra, se, 2);
  CK(ag_tensor_requires_grad(m->t_main, 1));
  CK(ag_tensor_requires_grad(m->t_extra, 1));
}

static void lstm_init(lstm_t *m, int l, int c, int b) {
  memset(m, 0, sizeof *m);
  m->l = l, m->c = c, m->b = b;
  m->main = (double *)xmalloc((size_t)8 * l * b * sizeof(double));
  m->extra = (double *)xmalloc((size_t)3 * b * sizeof(double));
  m->state = (double *)xmalloc((size_t)2 * l * b * sizeof(double));
  m->seq = (double *)calloc((size_t)c * b, sizeof(double));
  if (!m->seq) exit(3);
  det_fill(m->main, (int64_t)8 * l * b, 3001, -1.0, 1.0);
  det_fill(m->extra, (int64_t)3 * b, 3002, -1.0, 1.0);
  det_fill(m->state, (int64_t)2 * l * b, 3003, -1.0, 1.0);
  double *u = (double *)xmalloc((size_t)c * sizeof(double));
  det_fill(u, c, 3004, 0.0, 1.0);
  for (int t = 0; t < c; ++t) m->seq[(size_t)t * b + (int)(u[t] * b)] = 1.0; /* character floor(u b) */
  free(u);
  lstm_leaves(m);
  int64_t ss[2] = {2 * l, b}, sq[2] = {c - 1, b};
  m->t_state = mk(m->state, ss, 2);
  m->t_in = (ag_tensor **)xmalloc((size_t)(c - 1) * sizeof(ag_tensor *));
  for (int t = 0; t < c - 1; ++t) {
    int64_t s1[2] = {1, b};
    m->t_in[t] = mk(m->seq + (size_t)t * b, s1, 2);
  }
  m->t_gold = mk(m->seq + b, sq, 2);
  m->t_scale = mk_scalar(-1.0 / ((double)(c - 1) * b));
}

static void lstm_free(lstm_t *m) {
  for (int t = 0; t < m->c - 1; ++t) ag_tensor_release(m->t_in[t]);
  free(m->t_in);
  ag_tensor *ts[] = {m->t_main, m->t_extra, m->t_state, m->t_gold, m->t_scale, m->grads[0], m->grads[1]};
  for (size_t i = 0; i < sizeof ts / sizeof ts[0]; ++i) ag_tensor_release(ts[i]);
  hl_free(&m->hl);
  free(m->main), free(m->extra), free(m->state), free(m->seq);
}

/* Handles of one evaluation go to m->hl (see hlist: ag_scope would be
 * quadratic in the ~13 handles per layer and step). */
#define H(t) hl_add(hl, (t))

static ag_tensor *row(hlist *hl, const ag_tensor *t, int64_t i) {
  ag_tensor *r;
  CK(ag_op_narrow(&r, t, 0, i, 1));
  return H(r);
}

/* The loss as ag ops. Per layer and step: the four gate pre-activations as
 * one (4, b) product and sum, one sigmoid over three gates, one tanh. */
static ag_tensor *lstm_objective(lstm_t *m) {
  hlist *hl = &m->hl;
  const int l = m->l, c = m->c, b = m->b;
  ag_tensor *W[16], *B[16], *h[16], *cell[16];
  int64_t s4[2] = {4, b};
  for (int i = 0; i < l; ++i) {
    CK(ag_op_reshape(&W[i], row(hl, m->t_main, 2 * i), s4, 2));
    CK(ag_op_reshape(&B[i], row(hl, m->t_main, 2 * i + 1), s4, 2));
    H(W[i]), H(B[i]);
    h[i] = row(hl, m->t_state, 2 * i);
    cell[i] = row(hl, m->t_state, 2 * i + 1);
  }
  ag_tensor *w_in = row(hl, m->t_extra, 0), **hs = (ag_tensor **)xmalloc((size_t)(c - 1) * sizeof(ag_tensor *));
  const int64_t gate_sizes[2] = {3, 1}, one_each[3] = {1, 1, 1};
  for (int t = 0; t < c - 1; ++t) {
    /* per step, as ADBench: a row sliced from one (c-1, b) product would cost
     * a (c-1, b) zero fill per step in backward (slice backward) */
    ag_tensor *x;
    CK(ag_op_mul(&x, m->t_in[t], w_in));
    H(x);
    for (int i = 0; i < l; ++i) {
      const ag_tensor *xs[4] = {x, h[i], x, h[i]};
      ag_tensor *xh, *z, *zb, *zs[2], *sg, *ch, *fio[3], *a, *bb, *tc;
      CK(ag_op_concat(&xh, xs, 4, 0));
      CK(ag_op_mul(&z, H(xh), W[i]));
      CK(ag_op_add(&zb, H(z), B[i]));
      CK(ag_op_split(zs, 2, H(zb), gate_sizes, 2, 0));
      CK(ag_op_sigmoid(&sg, H(zs[0])));
      CK(ag_op_tanh(&ch, H(zs[1])));
      CK(ag_op_split(fio, 3, H(sg), one_each, 3, 0));
      H(fio[0]), H(fio[1]), H(fio[2]), H(ch);
      CK(ag_op_mul(&a, cell[i], fio[0]));
      CK(ag_op_mul(&bb, fio[1], ch));
      CK(ag_op_add(&cell[i], H(a), H(bb)));
      CK(ag_op_tanh(&tc, H(cell[i])));
      CK(ag_op_mul(&h[i], fio[2], H(tc)));
      x = H(h[i]);
    }
    hs[t] = x;
  }
  ag_tensor *Hs, *yp, *yb, *yn, *gy, *tot, *loss;
  CK(ag_op_concat(&Hs, (const ag_tensor *const *)hs, c - 1, 0)); /* (c-1, b) */
  free(hs);
  CK(ag_op_mul(&yp, H(Hs), row(hl, m->t_extra, 1)));
  CK(ag_op_add(&yb, H(yp), row(hl, m->t_extra, 2)));
  CK(ag_op_log_softmax(&yn, H(yb), 1));
  CK(ag_op_mul(&gy, H(yn), m->t_gold));
  CK(ag_op_sum(&tot, H(gy)));
  CK(ag_op_mul(&loss, H(tot), m->t_scale));
  return H(loss);
}

static void lstm_F(void *arg) {
  lstm_t *m = (lstm_t *)arg;
  grad_mode(0);
  lstm_objective(m);
  hl_release(&m->hl);
  grad_mode(1);
}

static void lstm_J(void *arg) {
  lstm_t *m = (lstm_t *)arg;
  ag_tensor_release(m->grads[0]);
  ag_tensor_release(m->grads[1]);
  const ag_tensor *outs[1] = {lstm_objective(m)}, *ins[2] = {m->t_main, m->t_extra};
  CK(ag_grad(m->grads, outs, NULL, 1, ins, 2, NULL));
  hl_release(&m->hl);
}

static void lstm_summary(void *arg, double *value, double *grad_sq) {
  lstm_t *m = (lstm_t *)arg;
  grad_mode(0);
  *value = item(lstm_objective(m));
  hl_release(&m->hl);
  grad_mode(1);
  *grad_sq = sum_sq(m->grads[0]) + sum_sq(m->grads[1]);
}

static double sigm(double v) { return 1.0 / (1.0 + exp(-v)); }

/* The loss by plain loops in double, independent of ag. */
static double lstm_reference(const lstm_t *m) {
  const int l = m->l, c = m->c, b = m->b;
  double *st = (double *)xmalloc((size_t)2 * l * b * sizeof(double)), *x = (double *)xmalloc((size_t)b * sizeof(double));
  memcpy(st, m->state, (size_t)2 * l * b * sizeof(double));
  double total = 0.0;
  for (int t = 0; t < c - 1; ++t) {
    for (int j = 0; j < b; ++j) x[j] = m->seq[(size_t)t * b + j] * m->extra[j];
    for (int i = 0; i < l; ++i) {
      const double *w = m->main + (size_t)(2 * i) * 4 * b, *bi = w + 4 * b;
      double *h = st + (size_t)(2 * i) * b, *ce = h + b;
      for (int j = 0; j < b; ++j) {
        double f = sigm(x[j] * w[j] + bi[j]), in = sigm(h[j] * w[b + j] + bi[b + j]);
        double o = sigm(x[j] * w[2 * b + j] + bi[2 * b + j]), ch = tanh(h[j] * w[3 * b + j] + bi[3 * b + j]);
        ce[j] = ce[j] * f + in * ch;
        h[j] = o * tanh(ce[j]);
      }
      memcpy(x, h, (size_t)b * sizeof(double));
    }
    double mx = -INFINITY, se = 0.0;
    for (int j = 0; j < b; ++j) x[j] = x[j] * m->extra[b + j] + m->extra[2 * b + j], mx = fmax(mx, x[j]);
    for (int j = 0; j < b; ++j) se += exp(x[j] - mx);
    for (int j = 0; j < b; ++j) total += m->seq[(size_t)(t + 1) * b + j] * (x[j] - mx - log(se));
  }
  free(st), free(x);
  return -total / ((double)(c - 1) * b);
}

void run_lstm(void) {
  static const int ls[] = {2, 4}, cs[] = {1024, 4096};
  for (int a = 0; a < 2; ++a) {
    for (int k = 0; k < 2; ++k) {
      if (g_quick && (a > 0 || k > 0)) return;
      lstm_t m;
      lstm_init(&m, ls[a], cs[k], 14);
      char size[64];
      snprintf(size, sizeof size, "l=%d c=%d b=%d", m.l, m.c, m.b);
      bench_case bc = {"lstm", size, lstm_F, lstm_J, lstm_summary, &m, lstm_reference(&m)};
      run_case(&bc);
      lstm_free(&m);
    }
  }
}

static double lstm_at(void *arg, const double *theta) {
  lstm_t *m = (lstm_t *)arg;
  const size_t nm = (size_t)8 * m->l * m->b;
  memcpy(m->main, theta, nm * sizeof(double));
  memcpy(m->extra, theta + nm, (size_t)3 * m->b * sizeof(double));
  lstm_leaves(m);
  grad_mode(0);
  double v = item(lstm_objective(m));
  hl_release(&m->hl);
  grad_mode(1);
  return v;
}

int check_lstm(void) {
  lstm_t m;
  lstm_init(&m, 2, 6, 4);
  const int64_t nm = (int64_t)8 * m.l * m.b, np = nm + 3 * m.b;
  double *theta = (double *)xmalloc((size_t)np * sizeof(double)), *grad = (double *)xmalloc((size_t)np * sizeof(double));
  memcpy(theta, m.main, (size_t)nm * sizeof(double));
  memcpy(theta + nm, m.extra, (size_t)(3 * m.b) * sizeof(double));
  lstm_J(&m);
  int64_t n0, n1;
  double *g0 = to_host(m.grads[0], &n0), *g1 = to_host(m.grads[1], &n1);
  memcpy(grad, g0, (size_t)n0 * sizeof(double));
  memcpy(grad + n0, g1, (size_t)n1 * sizeof(double));
  free(g0), free(g1);
  int ok = check_gradient("lstm l=2 c=6 b=4", np, lstm_at, &m, theta, grad, 1e-7);
  lstm_at(&m, theta);
  bench_case bc = {"lstm", "check l=2 c=6 b=4", lstm_F, lstm_J, lstm_summary, &m, lstm_reference(&m)};
  int keep_max = g_max_reps, keep_min = g_min_reps;
  g_max_reps = g_min_reps = 1;
  run_case(&bc);
  g_max_reps = keep_max, g_min_reps = keep_min;
  free(theta), free(grad);
  lstm_free(&m);
  return ok;
}
