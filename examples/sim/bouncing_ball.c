/*
 * examples/sim/bouncing_ball.c - a ball launched at a wall, bouncing off it
 * and the floor, and the launch velocity that lands it on a target after
 * 1.5 s, found by gradient descent through the whole rollout.
 *
 * The contact is smooth: a stiff spring pushes back in proportion to a
 * softplus of the penetration, so the loss is differentiable everywhere.
 * The fixed-step loop is the rollout (90 steps of 1/60 s, semi-implicit
 * Euler); every iteration records it, runs backward and takes one step.
 *
 *   bouncing_ball [--iters N] [--png FILE] [--check-grad]
 */
#include "sim.h"

enum { STEPS = 90 };
static const double DT = 1.0 / 60, STIFF = 2000, SHARP = 200, RADIUS = 0.1, WALL = 4.0, DRAG = 0.1, CDAMP = 6;
static const double START[2] = {0.2, 1.0}, TARGET[2] = {2.9, 0.9};
static double g_traj[STEPS + 1][2]; /* positions of the last recorded rollout */

/* One rollout from launch velocity v0 (shape (2)); returns the loss
 * |p_T - target|^2 and, if `record`, keeps the trajectory in g_traj. */
static T rollout(T v0, int record) {
  const int64_t two[1] = {2};
  const double grav[2] = {0, -9.81}, lo[2] = {-1e3, RADIUS}, hi[2] = {WALL - RADIUS, 1e3};
  T p = make(two, 1, START), v = v0, g = make(two, 1, grav), tlo = make(two, 1, lo), thi = make(two, 1, hi);
  T k = cst(STIFF), dt = cst(DT), drag = cst(DRAG), cdamp = cst(CDAMP), sharp = cst(SHARP);
  for (int s = 0; s < STEPS; ++s) {
    if (record) read_all(p, g_traj[s]);
    /* The floor pushes up below y = r, the wall left beyond x = WALL - r,
     * with a damper while in contact (how much in contact: a sigmoid). */
    T below = sub(tlo, p), beyond = sub(p, thi);
    T push = sub(soft_pos(below, SHARP), soft_pos(beyond, SHARP));
    T contact = add(sigmoid(mul(sharp, below)), sigmoid(mul(sharp, beyond)));
    T acc = sub(add(g, mul(k, push)), mul(add(drag, mul(cdamp, contact)), v));
    v = add(v, mul(dt, acc));
    p = add(p, mul(dt, v));
  }
  if (record) read_all(p, g_traj[STEPS]);
  T d = sub(p, make(two, 1, TARGET));
  return sum(mul(d, d));
}

/* The loss at launch velocity v[0..2), without a graph (for finite differences). */
static double loss_at(const double *v) {
  const int64_t two[1] = {2};
  ag_scope *s;
  CK(ag_scope_begin(&s));
  const double l = item(rollout(make(two, 1, v), 0));
  CK(ag_scope_end(s));
  return l;
}

/* Loss and gradient at v (one recorded rollout and one backward). */
static double loss_and_grad(const double *v, double *grad, int record) {
  const int64_t two[1] = {2};
  ag_scope *s;
  CK(ag_scope_begin(&s));
  T v0 = make(two, 1, v);
  CK(ag_tensor_requires_grad(v0, 1));
  T loss = rollout(v0, record);
  CK(ag_backward(loss, NULL, NULL));
  T g;
  CK(ag_tensor_grad(&g, v0));
  read_all(g, grad);
  const double l = item(loss);
  CK(ag_scope_end(s)); /* releases every tensor of this iteration and so the graph */
  return l;
}

static void draw(canvas *c, unsigned rgb) {
  for (int s = 0; s < STEPS; ++s) canvas_line(c, g_traj[s][0], g_traj[s][1], g_traj[s + 1][0], g_traj[s + 1][1], rgb);
}

int main(int argc, char **argv) {
  int iters = 60, check = 0;
  const char *png = "bouncing_ball.png";
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--iters") && i + 1 < argc) iters = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--png") && i + 1 < argc) png = argv[++i];
    else if (!strcmp(argv[i], "--check-grad")) check = 1;
    else {
      fprintf(stderr, "usage: bouncing_ball [--iters N] [--png FILE] [--check-grad]\n");
      return 2;
    }
  }
  ag_context_options o = AG_CONTEXT_OPTIONS_INIT;
  o.num_threads = 1; /* tiny tensors: threads would only cost */
  CK(ag_context_create(&g_ctx, &o));
  double v[2] = {3.0, 4.0}, grad[2];
  int status = 0;
  if (check) {
    loss_and_grad(v, grad, 0);
    status = fd_check("bouncing_ball", loss_at, v, grad, 2, 1e-6, 1e-6);
  } else {
    canvas c = canvas_new(640, 480, 0, 0, WALL + 0.2, 3.4);
    canvas_line(&c, 0, RADIUS, WALL, RADIUS, 0x000000);        /* floor (where the centre rests) */
    canvas_line(&c, WALL - RADIUS, 0, WALL - RADIUS, 3.4, 0x000000); /* wall */
    descent d = {INFINITY, 0.5, {0}, {0}};
    for (int it = 0; it < iters; ++it) {
      const double l = loss_and_grad(v, grad, it == 0 || it == iters - 1);
      if (it == 0) draw(&c, 0xb0b0b0);
      printf("iter %3d  loss %.8f  launch velocity (%.4f, %.4f)\n", it, l, v[0], v[1]);
      descend(&d, v, grad, 2, l);
    }
    draw(&c, 0x2060d0);
    canvas_dot(&c, TARGET[0], TARGET[1], 5, 0xd02020);
    canvas_save(&c, png);
  }
  ag_context_release(g_ctx);
  return status;
}
