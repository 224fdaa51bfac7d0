/*
 * examples/sim/budget_frames.c - a gradient computed across the frames of a
 * 60 Hz loop with the budgeted backward (ag/budget.h), and the frame times
 * it costs.
 *
 * A swarm of balls (the physics of bouncing_ball.c, one (B,2) tensor) is
 * launched every episode. While it flies, each frame records one physics
 * step. Then the backward of the loss (every ball's distance to its target)
 * is begun and run a few milliseconds per frame next to the game's other
 * work, until it is done; the launch velocities take a descent step and the
 * next episode starts. Prints the loss per episode and a histogram of frame
 * times: no frame should take more than 16.6 ms.
 *
 *   budget_frames [--iters EPISODES] [--balls B] [--budget-us U] [--realtime]
 *                 [--png FILE] [--check-grad]
 */
#include "sim.h"

enum { STEPS = 90 };
static const double DT = 1.0 / 60, STIFF = 2000, SHARP = 200, RADIUS = 0.1, WALL = 4.0, DRAG = 0.1, CDAMP = 6;
static int g_balls = 2048;
static int64_t g_budget_ns = 3000000, g_max_nodes = 0;
static double g_hist[7], g_worst, g_worst_cpu, g_frames_n; /* frame times: < 1, 2, 4, 8, 12, 16.6 ms, more */

/* This thread's CPU time: unlike the wall clock, it does not count the time
 * a loaded machine gives to other processes. */
static double cpu_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
static double g_cpu_start;

/* One physics step of every ball (as bouncing_ball.c); new p, v kept out of the frame's scope. */
static void physics(T *p, T *v) {
  const int64_t two[1] = {2};
  const double grav[2] = {0, -9.81}, lo[2] = {-1e3, RADIUS}, hi[2] = {WALL - RADIUS, 1e3};
  ag_scope *sc;
  CK(ag_scope_begin(&sc));
  T below = sub(make(two, 1, lo), *p), beyond = sub(*p, make(two, 1, hi)), sharp = cst(SHARP);
  T push = sub(soft_pos(below, SHARP), soft_pos(beyond, SHARP));
  T contact = add(sigmoid(mul(sharp, below)), sigmoid(mul(sharp, beyond)));
  T acc = sub(add(make(two, 1, grav), mul(cst(STIFF), push)), mul(add(cst(DRAG), mul(cst(CDAMP), contact)), *v));
  T v2 = add(*v, mul(cst(DT), acc)), p2 = add(*p, mul(cst(DT), v2));
  CK(ag_scope_keep(v2));
  CK(ag_scope_keep(p2));
  CK(ag_scope_end(sc));
  ag_tensor_release(*p);
  ag_tensor_release(*v);
  *p = p2;
  *v = v2;
}

static void targets(double *t, int b) {
  for (int i = 0; i < b; ++i) t[2 * i] = 2.0 + 1.5 * (i % 7) / 7.0, t[2 * i + 1] = 0.5 + (i % 5) / 5.0;
}

static void frame_done(double start_ms, int realtime) {
  const double ms = now_ms() - start_ms, edges[6] = {1, 2, 4, 8, 12, 16.6}, cpu = cpu_ms() - g_cpu_start;
  if (cpu > g_worst_cpu) g_worst_cpu = cpu;
  int k = 0;
  while (k < 6 && ms >= edges[k]) ++k;
  g_hist[k]++;
  g_frames_n++;
  if (ms > g_worst) g_worst = ms;
  if (realtime && ms < 1000.0 / 60) { /* wait for the next 60 Hz tick */
    struct timespec ts = {0, (long)((1000.0 / 60 - ms) * 1e6)};
    nanosleep(&ts, NULL);
  }
}

/* One episode over frames: launch velocities v0[2B] -> loss, and the
 * gradient into grad (NULL: none, with grad mode off: a plain rollout). */
static double episode(const double *v0, double *grad, int realtime, double *end_pos) {
  const int64_t sb2[2] = {g_balls, 2};
  double *start = malloc(sizeof(double) * 2 * (size_t)g_balls), *tg = malloc(sizeof(double) * 2 * (size_t)g_balls);
  for (int i = 0; i < g_balls; ++i) start[2 * i] = 0.2, start[2 * i + 1] = 1.0;
  targets(tg, g_balls);
  T v0t = make(sb2, 2, v0);
  CK(ag_tensor_requires_grad(v0t, 1));
  T p = make(sb2, 2, start), v = ag_tensor_retain(v0t);
  for (int f = 0; f < STEPS; ++f) { /* the flight: one recorded step per frame */
    const double t0 = now_ms();
    g_cpu_start = cpu_ms();
    physics(&p, &v);
    frame_done(t0, realtime);
  }
  ag_tensor *loss;
  ag_scope *sc;
  CK(ag_scope_begin(&sc));
  T e = sub(p, make(sb2, 2, tg));
  loss = mean_dim(sum_dim(mul(e, e), 1), 0);
  CK(ag_scope_keep(loss));
  CK(ag_scope_end(sc));
  read_all(p, end_pos);
  ag_tensor_release(p);
  ag_tensor_release(v);
  if (!grad) {
    const double l = item(loss);
    ag_tensor_release(loss);
    ag_tensor_release(v0t);
    free(start);
    free(tg);
    return l;
  }
  /* The backward, a few ms per frame, next to the game's other work (here:
   * a no-grad physics step of a swarm at rest, standing in for it). */
  ag_backward_job *job;
  const double t0 = now_ms();
  g_cpu_start = cpu_ms();
  CK(ag_backward_begin(&job, loss, NULL, NULL)); /* counted in the first backward frame */
  T idle_p = make(sb2, 2, start), idle_v = make(sb2, 2, NULL);
  int32_t done = 0, prev;
  for (double t = t0; !done; t = now_ms()) {
    g_cpu_start = cpu_ms();
    CK(ag_backward_step(job, g_max_nodes, g_budget_ns, &done));
    ag_grad_mode_set(0, &prev);
    physics(&idle_p, &idle_v);
    ag_grad_mode_set(prev, NULL);
    frame_done(t, realtime);
  }
  CK(ag_backward_end(job)); /* the gradient lands in v0t's .grad */
  T g;
  CK(ag_tensor_grad(&g, v0t));
  read_all(g, grad);
  const double l = item(loss);
  ag_tensor_release(g);
  ag_tensor_release(idle_p);
  ag_tensor_release(idle_v);
  ag_tensor_release(loss);
  ag_tensor_release(v0t);
  free(start);
  free(tg);
  return l;
}

static double *g_end; /* end positions of the last episode (for the FD loss and the picture) */
static double loss_at(const double *v0) { return episode(v0, NULL, 0, g_end); }

int main(int argc, char **argv) {
  int iters = 6, realtime = 0, check = 0;
  const char *png = "budget_frames.png";
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--iters") && i + 1 < argc) iters = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--balls") && i + 1 < argc) g_balls = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--budget-us") && i + 1 < argc) g_budget_ns = 1000 * atoll(argv[++i]);
    else if (!strcmp(argv[i], "--png") && i + 1 < argc) png = argv[++i];
    else if (!strcmp(argv[i], "--realtime")) realtime = 1;
    else if (!strcmp(argv[i], "--check-grad")) check = 1;
    else {
      fprintf(stderr, "usage: budget_frames [--iters N] [--balls B] [--budget-us U] [--realtime] [--png F] [--check-grad]\n");
      return 2;
    }
  }
  if (check) g_balls = 3, g_max_nodes = 1, g_budget_ns = 0; /* one node per frame: the most steps */
  CK(ag_context_create(&g_ctx, NULL));
  double *v0 = malloc(sizeof(double) * 2 * (size_t)g_balls), *grad = malloc(sizeof(double) * 2 * (size_t)g_balls);
  g_end = malloc(sizeof(double) * 2 * (size_t)g_balls);
  for (int i = 0; i < g_balls; ++i) v0[2 * i] = 3.0, v0[2 * i + 1] = 4.0;
  int status = 0;
  if (check) {
    episode(v0, grad, 0, g_end);
    status = fd_check("budget_frames", loss_at, v0, grad, 2 * g_balls, 1e-6, 1e-6);
  } else {
    canvas c = canvas_new(640, 480, 0, 0, WALL + 0.2, 3.4);
    for (int e = 0; e < iters; ++e) {
      /* each ball its own descent step against its own gradient component */
      const double l = episode(v0, grad, realtime, g_end);
      printf("episode %2d  loss %.6f  (%d balls)\n", e, l, g_balls);
      for (int i = 0; i < 2 * g_balls; ++i) v0[i] -= 0.15 * g_balls * grad[i]; /* loss is a mean */
    }
    printf("frames %.0f, max frame time %.2f ms wall, %.2f ms CPU of this thread (budget %.1f ms of backward per "
           "frame)\n", g_frames_n, g_worst, g_worst_cpu, g_budget_ns / 1e6);
    const char *label[7] = {"< 1 ms", "1-2 ms", "2-4 ms", "4-8 ms", "8-12 ms", "12-16.6 ms", "> 16.6 ms"};
    for (int k = 0; k < 7; ++k) printf("  %-10s %6.0f %s\n", label[k], g_hist[k], k == 6 && g_hist[6] ? "(missed frames)" : "");
    for (int i = 0; i < g_balls && i < 400; ++i) canvas_dot(&c, g_end[2 * i], g_end[2 * i + 1], 2, 0x2060d0);
    double *tg = malloc(sizeof(double) * 2 * (size_t)g_balls);
    targets(tg, g_balls);
    for (int i = 0; i < g_balls && i < 35; ++i) canvas_dot(&c, tg[2 * i], tg[2 * i + 1], 4, 0xd02020);
    free(tg);
    canvas_save(&c, png);
  }
  free(v0);
  free(grad);
  free(g_end);
  ag_context_release(g_ctx);
  return status;
}
