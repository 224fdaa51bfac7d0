/*
 * examples/sim/sim.h - what the differentiable-simulation examples share:
 * terse op wrappers (a failed call prints ag's message and exits: fine for
 * an example, never done inside the library), a finite-difference check of
 * a gradient in f64, a frame clock, and a small canvas saved as PNG through
 * libpng (when the build found it; else a warning and no picture).
 *
 * Ownership: every tensor the wrappers hand out is recorded in the thread's
 * innermost handle scope (ag/scope.h). The examples open one scope per
 * frame or iteration and let it release the intermediates; the graph keeps
 * what backward needs on its own.
 */
#ifndef AG_SIM_H
#define AG_SIM_H

#define _POSIX_C_SOURCE 200809L
#include <ag/ag.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef AG_SIM_PNG
#include <png.h>
#endif

typedef ag_tensor *T;
static ag_context *g_ctx;

static inline void ck(ag_status st, const char *what, int line) {
  if (st == AG_OK) return;
  fprintf(stderr, "line %d: %s failed: %s\n", line, what, ag_last_error_message());
  exit(3);
}
#define CK(call) ck((call), #call, __LINE__)

/* Op wrappers: one new (scope-recorded) tensor each. */
static inline T add(T a, T b) { T y; CK(ag_op_add(&y, a, b)); return y; }
static inline T sub(T a, T b) { T y; CK(ag_op_sub(&y, a, b)); return y; }
static inline T mul(T a, T b) { T y; CK(ag_op_mul(&y, a, b)); return y; }
static inline T dvd(T a, T b) { T y; CK(ag_op_div(&y, a, b)); return y; }
static inline T sqrtt(T a) { T y; CK(ag_op_sqrt(&y, a)); return y; }
static inline T sum(T a) { T y; CK(ag_op_sum(&y, a)); return y; }
static inline T sum_dim(T a, int64_t d) { T y; CK(ag_op_sum_dims(&y, a, &d, 1, 0)); return y; }
static inline T mean_dim(T a, int64_t d) { T y; CK(ag_op_mean_dims(&y, a, &d, 1, 0)); return y; }
/* Smooth penetration depth: ~max(x, 0), sharpness s (1/m). */
static inline T soft_pos(T x, double s) { T y; CK(ag_op_softplus(&y, x, s, 20.0)); return y; }
static inline T neg(T a) { T y; CK(ag_op_neg(&y, a)); return y; }
static inline T unsq(T a, int64_t d) { T y; CK(ag_op_unsqueeze(&y, a, d)); return y; }
static inline T gather(T x, int64_t d, T idx) { T y; CK(ag_op_gather(&y, x, d, idx)); return y; }
static inline T index_add(T x, int64_t d, T idx, T src) { T y; CK(ag_op_index_add(&y, x, d, idx, src)); return y; }
static inline T sigmoid(T x) { T y; CK(ag_op_sigmoid(&y, x)); return y; }
static inline T cst(double v) { T y; CK(ag_tensor_scalar(&y, g_ctx, AG_F64, v)); return y; }
static inline T make(const int64_t *shape, int32_t nd, const double *v) {
  T y; CK(ag_tensor_create(&y, g_ctx, AG_F64, shape, nd, v)); return y;
}
static inline T make_i64(const int64_t *shape, int32_t nd, const int64_t *v) {
  T y; CK(ag_tensor_create(&y, g_ctx, AG_I64, shape, nd, v)); return y;
}
static inline void read_all(T t, double *out) {
  CK(ag_tensor_copy_data(t, out, sizeof(double) * (size_t)ag_tensor_numel(t)));
}
static inline double item(T t) { double v; CK(ag_tensor_item(t, &v)); return v; }

static inline double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* One step of the descent the examples use: a step of length `*step` against
 * the gradient at the best point so far, grown after a success and halved
 * (retried from the best point) when the loss went up. Contacts and swings
 * make losses steep in places, where a raw gradient step would overshoot. */
typedef struct {
  double best, step, p[64], g[64];
} descent;
static inline void descend(descent *d, double *p, const double *g, int n, double loss) {
  double norm = 1e-12;
  if (loss < d->best) {
    d->best = loss;
    memcpy(d->p, p, sizeof(double) * (size_t)n);
    memcpy(d->g, g, sizeof(double) * (size_t)n);
    d->step *= 1.2;
  } else {
    d->step *= 0.5;
  }
  for (int i = 0; i < n; ++i) norm += d->g[i] * d->g[i];
  for (int i = 0; i < n; ++i) p[i] = d->p[i] - d->step * d->g[i] / sqrt(norm);
}

/* Compares grad[0..n) with central differences of loss(p) in f64 (grad mode
 * off), relative to the largest |gradient|. Returns 0 when they agree. */
static inline int fd_check(const char *name, double (*loss)(const double *p), double *p, const double *grad, int n,
                    double h, double tol) {
  int prev = 0;
  double worst = 0, scale = 1e-12;
  ag_grad_mode_set(0, &prev);
  for (int i = 0; i < n; ++i) scale = fmax(scale, fabs(grad[i]));
  for (int i = 0; i < n; ++i) {
    const double keep = p[i];
    p[i] = keep + h;
    const double up = loss(p);
    p[i] = keep - h;
    const double down = loss(p);
    p[i] = keep;
    const double fd = (up - down) / (2 * h), err = fabs(fd - grad[i]) / scale;
    if (err > worst) worst = err;
    if (i < 4) printf("  d loss / d p[%d]: ag %+.10e  fd %+.10e\n", i, grad[i], fd);
  }
  ag_grad_mode_set(prev, NULL);
  printf("%s: gradient vs finite differences over %d parameters: worst relative error %.2e (tolerance %.0e) %s\n",
         name, n, worst, tol, worst <= tol ? "ok" : "MISMATCH");
  return worst <= tol ? 0 : 1;
}

/* ---- a tiny RGB canvas over the world rectangle [x0,x1] x [y0,y1] ---- */
typedef struct {
  int w, h;
  double x0, y0, x1, y1;
  unsigned char *px;
} canvas;

static inline canvas canvas_new(int w, int h, double x0, double y0, double x1, double y1) {
  canvas c = {w, h, x0, y0, x1, y1, malloc((size_t)w * (size_t)h * 3)};
  if (c.px) memset(c.px, 255, (size_t)w * (size_t)h * 3);
  return c;
}
static inline void canvas_dot(canvas *c, double x, double y, int r, unsigned rgb) {
  const int cx = (int)((x - c->x0) / (c->x1 - c->x0) * (c->w - 1));
  const int cy = (int)((c->y1 - y) / (c->y1 - c->y0) * (c->h - 1));
  for (int dy = -r; dy <= r; ++dy) {
    for (int dx = -r; dx <= r; ++dx) {
      const int px = cx + dx, py = cy + dy;
      if (!c->px || dx * dx + dy * dy > r * r || px < 0 || py < 0 || px >= c->w || py >= c->h) continue;
      unsigned char *p = c->px + 3 * ((size_t)py * (size_t)c->w + (size_t)px);
      p[0] = (unsigned char)(rgb >> 16), p[1] = (unsigned char)(rgb >> 8), p[2] = (unsigned char)rgb;
    }
  }
}
/* A line as a run of dots. */
static inline void canvas_line(canvas *c, double xa, double ya, double xb, double yb, unsigned rgb) {
  for (int i = 0; i <= 400; ++i) canvas_dot(c, xa + (xb - xa) * i / 400.0, ya + (yb - ya) * i / 400.0, 1, rgb);
}
/* Writes the PNG (path NULL: none); frees the canvas. */
static inline void canvas_save(canvas *c, const char *path) {
  if (path && c->px) {
#ifdef AG_SIM_PNG
    FILE *f = fopen(path, "wb");
    png_structp png = f ? png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL) : NULL;
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (info && !setjmp(png_jmpbuf(png))) {
      png_init_io(png, f);
      png_set_IHDR(png, info, (png_uint_32)c->w, (png_uint_32)c->h, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                   PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
      png_write_info(png, info);
      for (int y = 0; y < c->h; ++y) png_write_row(png, c->px + (size_t)y * (size_t)c->w * 3);
      png_write_end(png, NULL);
      printf("wrote %s\n", path);
    } else {
      fprintf(stderr, "warning: could not write %s\n", path);
    }
    if (png) png_destroy_write_struct(&png, info ? &info : NULL);
    if (f) fclose(f);
#else
    fprintf(stderr, "warning: built without libpng (libpng-dev); no picture written to %s\n", path);
#endif
  }
  free(c->px);
  c->px = NULL;
}

#endif /* AG_SIM_H */
