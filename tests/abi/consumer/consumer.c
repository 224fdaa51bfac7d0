/*
 * A host program built against an installed ag, through pkg-config or CMake
 * (test 'install'): d/dx sum(x * x) = 2x, the library's version, the errors.
 */
#include <stdio.h>
#include <string.h>

#include <ag/ag.h>

int main(void) {
  ag_context *ctx = NULL;
  ag_tensor *x = NULL, *y = NULL, *s = NULL, *g = NULL, *never = NULL;
  int64_t shape[1] = {3};
  float data[3] = {1.0f, 2.0f, 3.0f}, grad[3] = {0, 0, 0};
  int ok = ag_version_number() == AG_VERSION_NUMBER;

  ok = ok && ag_context_create(&ctx, NULL) == AG_OK;
  ok = ok && ag_tensor_create(&x, ctx, AG_F32, shape, 1, data) == AG_OK;
  ok = ok && ag_tensor_requires_grad(x, 1) == AG_OK;
  ok = ok && ag_op_mul(&y, x, x) == AG_OK && ag_op_sum(&s, y) == AG_OK;
  ok = ok && ag_backward(s, NULL, NULL) == AG_OK && ag_tensor_grad(&g, x) == AG_OK;
  ok = ok && ag_tensor_copy_data(g, grad, sizeof grad) == AG_OK;
  ok = ok && grad[0] == 2.0f && grad[1] == 4.0f && grad[2] == 6.0f;
  ok = ok && ag_op_add(&never, NULL, x) == AG_ERR_INVALID_ARGUMENT && never == NULL && strlen(ag_last_error_message()) > 0;

  ag_tensor_release(g);
  ag_tensor_release(s);
  ag_tensor_release(y);
  ag_tensor_release(x);
  ag_context_release(ctx);
  printf("consumer of ag %s: %s\n", ag_version_string(), ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
