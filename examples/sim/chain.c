/*
 * examples/sim/chain.c - a chain of masses and springs pinned at one end,
 * released from the horizontal: the spring rest lengths that bring its
 * centre of mass to a target after 2 s, by gradient descent through the
 * rollout.
 *
 * Springs are gathered and scattered the way a physics engine does it with
 * index arrays: ag_op_gather fetches both end positions of every spring,
 * ag_op_index_add sums the spring forces into the masses. Their backward
 * (scatter_add and index_select) carries the gradient the other way.
 *
 *   chain [--iters N] [--png FILE] [--check-grad]
 */
#include "sim.h"

enum { N = 10, S = N - 1, STEPS = 120 };
static const double DT = 1.0 / 60, STIFF = 400, DAMP = 0.4, LINK = 0.2, TARGET[2] = {-0.3, -0.9};
static double g_frames[STEPS + 1][N][2]; /* positions of the last recorded rollout */

/* One rollout with rest lengths `rest` (shape (S)); returns |COM_T - target|^2. */
static T rollout(T rest, int record) {
  const int64_t sn2[2] = {N, 2}, ss2[2] = {S, 2}, ss[1] = {S}, sn1[2] = {N, 1}, s2[1] = {2};
  double x0[N * 2] = {0}, pin[N], grav[2] = {0, -9.81};
  int64_t ia[S], ib[S], ia2[S * 2], ib2[S * 2];
  for (int i = 0; i < N; ++i) x0[2 * i] = LINK * i, pin[i] = i == 0 ? 0.0 : 1.0; /* mass 0 is pinned */
  for (int s = 0; s < S; ++s) ia[s] = s, ib[s] = s + 1, ia2[2 * s] = ia2[2 * s + 1] = s, ib2[2 * s] = ib2[2 * s + 1] = s + 1;
  T x = make(sn2, 2, x0), v = make(sn2, 2, NULL), mask = make(sn1, 2, pin), g = make(s2, 1, grav);
  T ta = make_i64(ss, 1, ia), tb = make_i64(ss, 1, ib), ta2 = make_i64(ss2, 2, ia2), tb2 = make_i64(ss2, 2, ib2);
  T zero = make(sn2, 2, NULL), k = cst(STIFF), damp = cst(DAMP), dt = cst(DT), tiny = cst(1e-12);
  for (int t = 0; t < STEPS; ++t) {
    if (record) read_all(x, &g_frames[t][0][0]);
    T d = sub(gather(x, 0, tb2), gather(x, 0, ta2));       /* (S,2): from end a to end b */
    T len = sqrtt(add(sum_dim(mul(d, d), 1), tiny));       /* (S) */
    T f = mul(unsq(dvd(mul(k, sub(len, rest)), len), 1), d); /* pull on a toward b (Hooke) */
    T force = index_add(index_add(zero, 0, ta, f), 0, tb, neg(f)); /* +f on a, -f on b */
    T acc = mul(mask, sub(add(force, g), mul(damp, v)));   /* unit masses; the pin does not move */
    v = add(v, mul(dt, acc));
    x = add(x, mul(dt, v));
  }
  if (record) read_all(x, &g_frames[STEPS][0][0]);
  T e = sub(mean_dim(x, 0), make(s2, 1, TARGET));
  return sum(mul(e, e));
}

static double loss_at(const double *rest) {
  const int64_t ss[1] = {S};
  ag_scope *sc;
  CK(ag_scope_begin(&sc));
  const double l = item(rollout(make(ss, 1, rest), 0));
  CK(ag_scope_end(sc));
  return l;
}

static double loss_and_grad(const double *rest, double *grad, int record) {
  const int64_t ss[1] = {S};
  ag_scope *sc;
  CK(ag_scope_begin(&sc));
  T r = make(ss, 1, rest);
  CK(ag_tensor_requires_grad(r, 1));
  T loss = rollout(r, record);
  CK(ag_backward(loss, NULL, NULL));
  T g;
  CK(ag_tensor_grad(&g, r));
  read_all(g, grad);
  const double l = item(loss);
  CK(ag_scope_end(sc));
  return l;
}

/* The chain every 20 frames, and its centre of mass's path. */
static void draw(canvas *c, unsigned rgb) {
  for (int t = 0; t <= STEPS; t += 20) {
    for (int i = 0; i + 1 < N; ++i)
      canvas_line(c, g_frames[t][i][0], g_frames[t][i][1], g_frames[t][i + 1][0], g_frames[t][i + 1][1], rgb);
  }
  for (int t = 0; t < STEPS; ++t) {
    double a[2] = {0, 0};
    for (int i = 0; i < N; ++i) a[0] += g_frames[t][i][0] / N, a[1] += g_frames[t][i][1] / N;
    canvas_dot(c, a[0], a[1], 1, rgb == 0x2060d0 ? 0x20a040 : 0xd0d0d0);
  }
}

int main(int argc, char **argv) {
  int iters = 60, check = 0;
  const char *png = "chain.png";
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--iters") && i + 1 < argc) iters = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--png") && i + 1 < argc) png = argv[++i];
    else if (!strcmp(argv[i], "--check-grad")) check = 1;
    else {
      fprintf(stderr, "usage: chain [--iters N] [--png FILE] [--check-grad]\n");
      return 2;
    }
  }
  ag_context_options o = AG_CONTEXT_OPTIONS_INIT;
  o.num_threads = 1;
  CK(ag_context_create(&g_ctx, &o));
  double rest[S], grad[S];
  for (int s = 0; s < S; ++s) rest[s] = LINK;
  int status = 0;
  if (check) {
    loss_and_grad(rest, grad, 0);
    status = fd_check("chain", loss_at, rest, grad, S, 1e-6, 1e-5);
  } else {
    canvas c = canvas_new(560, 720, -2.2, -3.4, 2.2, 0.4);
    descent d = {INFINITY, 0.05, {0}, {0}};
    for (int it = 0; it < iters; ++it) {
      const double l = loss_and_grad(rest, grad, it == 0 || it == iters - 1);
      if (it == 0) draw(&c, 0xb0b0b0);
      printf("iter %3d  loss %.8f  rest lengths %.3f %.3f ... %.3f\n", it, l, rest[0], rest[1], rest[S - 1]);
      descend(&d, rest, grad, S, l);
    }
    draw(&c, 0x2060d0);
    canvas_dot(&c, TARGET[0], TARGET[1], 5, 0xd02020);
    canvas_save(&c, png);
  }
  ag_context_release(g_ctx);
  return status;
}
