/*
 * quickstart: the README's "Using it" snippet as a program, with its status
 * checks: y = x * x at x = 3, then dy/dx by backward. Prints "dy/dx = 6".
 * Every handle is released once, so valgrind reports no leak.
 */
#include <stdio.h>

#include "ag/ag.h"

#define TRY(call)                                                         \
  do {                                                                    \
    if ((call) != AG_OK) {                                                \
      fprintf(stderr, "%s failed: %s\n", #call, ag_last_error_message()); \
      return 1;                                                           \
    }                                                                     \
  } while (0)

int main(void) {
  ag_context *ctx;
  TRY(ag_context_create(&ctx, NULL));
  int64_t shape[1] = {1};
  float data[1] = {3.0f};
  ag_tensor *x, *y, *g;
  TRY(ag_tensor_create(&x, ctx, AG_F32, shape, 1, data));
  TRY(ag_tensor_requires_grad(x, 1));
  TRY(ag_op_mul(&y, x, x));          /* graph recorded here */
  TRY(ag_backward(y, NULL, NULL));   /* seed 1 for a one-element root */
  TRY(ag_tensor_grad(&g, x));        /* dy/dx = 2x = 6 */
  double dydx;
  TRY(ag_tensor_item(g, &dydx));
  printf("dy/dx = %g\n", dydx);
  ag_tensor_release(g);
  ag_tensor_release(y);
  ag_tensor_release(x);
  ag_context_release(ctx);
  return dydx == 6.0 ? 0 : 1;
}
