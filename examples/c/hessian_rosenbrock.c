/*
 * hessian_rosenbrock: the functional API (ag/functional.h). ag_hessian takes
 * the Hessian of a scalar function written as an ordinary C callback; here
 * the Rosenbrock function
 *
 *     f(x, y) = (1 - x)^2 + 100 (y - x^2)^2
 *
 * at (x, y) = (1.5, 0.5), checked against the Hessian worked out by hand:
 *
 *     d2f/dx2  = 2 - 400 (y - x^2) + 800 x^2      d2f/dxdy = -400 x
 *     d2f/dydx = -400 x                           d2f/dy2  = 200
 *
 * Prints both matrices and "max abs error"; exits 0 when they agree.
 */
#include <math.h>
#include <stdio.h>

#include "ag/ag.h"

#define TRY(call)                                                         \
  do {                                                                    \
    ag_status st_ = (call);                                               \
    if (st_ != AG_OK) {                                                   \
      fprintf(stderr, "%s failed: %s\n", #call, ag_last_error_message()); \
      return 1;                                                           \
    }                                                                     \
  } while (0)

/* Inside the callback a failure returns the status to ag, which reports it. */
#define CHECK(call)                             \
  do {                                          \
    ag_status st_ = (call);                     \
    if (st_ != AG_OK) return st_;               \
  } while (0)

/* The user function: outputs[0] = f(p) for p = inputs[0] = [x, y]. It may run
 * several times; a scope releases its intermediates, and keep() hands the
 * result to ag, which takes that reference over. */
static ag_status rosenbrock(void *user_data, const ag_tensor *const *inputs, int32_t num_inputs,
                            ag_tensor **outputs, int32_t num_outputs) {
  (void)user_data, (void)num_inputs, (void)num_outputs;
  ag_context *ctx;
  CHECK(ag_tensor_context(&ctx, inputs[0]));
  ag_scope *scope;
  CHECK(ag_scope_begin(&scope));
  ag_tensor *x, *y, *one, *hundred, *a, *a2, *x2, *d, *d2, *t, *f;
  CHECK(ag_op_select(&x, inputs[0], 0, 0));
  CHECK(ag_op_select(&y, inputs[0], 0, 1));
  CHECK(ag_tensor_scalar(&one, ctx, AG_F64, 1.0)); /* constants: no gradient */
  CHECK(ag_tensor_scalar(&hundred, ctx, AG_F64, 100.0));
  CHECK(ag_op_sub(&a, one, x));       /* 1 - x */
  CHECK(ag_op_square(&a2, a));        /* (1 - x)^2 */
  CHECK(ag_op_square(&x2, x));
  CHECK(ag_op_sub(&d, y, x2));        /* y - x^2 */
  CHECK(ag_op_square(&d2, d));
  CHECK(ag_op_mul(&t, hundred, d2));  /* 100 (y - x^2)^2 */
  CHECK(ag_op_add(&f, a2, t));
  CHECK(ag_scope_keep(f));
  CHECK(ag_scope_end(scope));
  ag_context_release(ctx);
  outputs[0] = f;
  return AG_OK;
}

int main(void) {
  const double px = 1.5, py = 0.5;
  const double want[4] = {2.0 - 400.0 * (py - px * px) + 800.0 * px * px, -400.0 * px, -400.0 * px, 200.0};

  ag_context *ctx;
  TRY(ag_context_create(&ctx, NULL));
  const double p_data[2] = {px, py};
  const int64_t shape[1] = {2};
  ag_tensor *p;
  TRY(ag_tensor_create(&p, ctx, AG_F64, shape, 1, p_data));

  /* One input, so one block: hessian[0] has shape p.shape + p.shape = [2, 2]. */
  ag_tensor *hessian[1];
  const ag_tensor *inputs[1] = {p};
  TRY(ag_hessian(hessian, rosenbrock, NULL, inputs, 1, NULL));
  double got[4];
  TRY(ag_tensor_copy_data(hessian[0], got, sizeof got));

  double max_err = 0.0;
  printf("Hessian of Rosenbrock at (%.1f, %.1f):\n", px, py);
  for (int i = 0; i < 2; ++i)
    printf("  ag [%9.3f %9.3f]   analytic [%9.3f %9.3f]\n", got[2 * i], got[2 * i + 1], want[2 * i], want[2 * i + 1]);
  for (int k = 0; k < 4; ++k) max_err = fmax(max_err, fabs(got[k] - want[k]));
  printf("max abs error %.3g\n", max_err);

  ag_tensor_release(hessian[0]);
  ag_tensor_release(p);
  ag_context_release(ctx);
  return max_err < 1e-9 ? 0 : 1;
}
