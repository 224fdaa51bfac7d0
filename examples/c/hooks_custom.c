/*
 * hooks_custom: a custom differentiable function (ag/function.h) and hooks
 * (ag/hooks.h).
 *
 *   Cube(x) = x^3, written as a C forward and a C backward (3 x^2 * grad),
 *   which saves x for backward; ag records it as a "CubeBackward" node.
 *   A tensor hook on y = Cube(x) doubles the gradient flowing into y (say,
 *   a loss scale), and a post-accumulate hook on the leaf x counts how often
 *   its .grad was written.
 *
 * With x = [1, 2, 3] and loss = sum(Cube(x)), x.grad = 2 * 3 x^2 = [6, 24, 54].
 * Prints "x.grad = 6 24 54" and the hook counts; exits 0 when they are right.
 */
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
/* In a callback: hand a failure back to ag, which reports it to the caller. */
#define CHECK(call) do { ag_status st_ = (call); if (st_ != AG_OK) return st_; } while (0)

/* Forward runs with grad mode off: the ops inside record nothing. */
static ag_status cube_forward(void *user_data, ag_function_ctx *fctx, const ag_tensor *const *inputs,
                              int32_t num_inputs, ag_tensor **outputs, int32_t num_outputs) {
  (void)user_data, (void)num_inputs, (void)num_outputs;
  CHECK(ag_function_ctx_save_for_backward(fctx, inputs, 1));
  return ag_op_pow_scalar(&outputs[0], inputs[0], 3.0);
}

/* d(x^3)/dx = 3 x^2; the scope releases the temporaries, keep() hands the gradient to ag. */
static ag_status cube_backward(void *user_data, ag_function_ctx *fctx, const ag_tensor *const *grad_outputs,
                               int32_t num_outputs, ag_tensor **grad_inputs, int32_t num_inputs) {
  (void)user_data, (void)num_outputs, (void)num_inputs;
  ag_scope *scope;
  CHECK(ag_scope_begin(&scope));
  ag_tensor *x, *x2, *x2g, *three, *g;
  ag_context *ctx;
  CHECK(ag_function_ctx_saved_tensor(&x, fctx, 0));
  CHECK(ag_tensor_context(&ctx, x));
  ag_status st = ag_tensor_scalar(&three, ctx, ag_tensor_dtype(x), 3.0);
  ag_context_release(ctx);
  CHECK(st);
  CHECK(ag_op_square(&x2, x));
  CHECK(ag_op_mul(&x2g, x2, grad_outputs[0]));
  CHECK(ag_op_mul(&g, x2g, three));
  CHECK(ag_scope_keep(g));
  CHECK(ag_scope_end(scope));
  grad_inputs[0] = g;
  return AG_OK;
}

/* Tensor hook: replaces the incoming gradient by twice its value. */
static ag_status double_grad(void *user_data, const ag_tensor *grad, ag_tensor **replacement) {
  int *calls = user_data;
  ++*calls;
  ag_context *ctx;
  ag_tensor *two;
  CHECK(ag_tensor_context(&ctx, grad));
  ag_status st = ag_tensor_scalar(&two, ctx, ag_tensor_dtype(grad), 2.0);
  ag_context_release(ctx);
  CHECK(st);
  st = ag_op_mul(replacement, grad, two); /* ag takes *replacement over */
  ag_tensor_release(two);
  return st;
}

/* Post-accumulate hook: x.grad has just been written. */
static ag_status count_accumulate(void *user_data, ag_tensor *leaf) {
  (void)leaf;
  ++*(int *)user_data;
  return AG_OK;
}

int main(void) {
  ag_context *ctx;
  TRY(ag_context_create(&ctx, NULL));
  const float xs[3] = {1.0f, 2.0f, 3.0f};
  const int64_t n = 3;
  ag_tensor *x, *y, *loss, *grad;
  TRY(ag_tensor_create(&x, ctx, AG_F32, &n, 1, xs));
  TRY(ag_tensor_requires_grad(x, 1));

  ag_function_def cube;
  TRY(ag_function_def_init(&cube));
  cube.name = "CubeBackward";
  cube.forward = cube_forward;
  cube.backward = cube_backward;
  const ag_tensor *inputs[1] = {x};
  TRY(ag_function_apply(&y, 1, inputs, 1, &cube));
  printf("y = Cube(x) was recorded as %s\n", ag_tensor_grad_fn_name(y));

  int hook_calls = 0, accumulations = 0;
  /* NULL handle: the hooks stay for the life of their tensors; no destroy needed. */
  TRY(ag_tensor_register_hook(NULL, y, double_grad, &hook_calls, NULL));
  TRY(ag_tensor_register_post_accumulate_grad_hook(NULL, x, count_accumulate, &accumulations, NULL));

  TRY(ag_op_sum(&loss, y));
  TRY(ag_backward(loss, NULL, NULL));
  TRY(ag_tensor_grad(&grad, x));
  float g[3];
  TRY(ag_tensor_copy_data(grad, g, sizeof g));
  printf("x.grad = %g %g %g\n", g[0], g[1], g[2]);
  printf("tensor hook ran %d time(s), x.grad written %d time(s)\n", hook_calls, accumulations);

  const int ok = g[0] == 6.0f && g[1] == 24.0f && g[2] == 54.0f && hook_calls == 1 && accumulations == 1;
  ag_tensor_release(grad);
  ag_tensor_release(loss);
  ag_tensor_release(y);
  ag_tensor_release(x);
  ag_context_release(ctx);
  return ok ? 0 : 1;
}
