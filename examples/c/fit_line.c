/*
 * fit_line: fits a straight line y = w*x + b to 64 noisy points that lie near
 * y = 2.5x - 1, by gradient descent on the mean squared error, with ag
 * computing dloss/dw and dloss/db. Prints the loss as it falls and the
 * fitted line; exits 0 when w and b are within 0.1 of the truth.
 *
 * Each step opens a handle scope (ag/scope.h): every tensor made inside it
 * (the intermediates, the loss, the gradient snapshots) is released when the
 * scope ends, so the loop neither leaks nor releases handles one by one.
 */
#include <math.h>
#include <stdio.h>

#include "ag/ag.h"

#define N 64

/* Prints the failing call and ag's message, then leaves main. */
#define TRY(call)                                                         \
  do {                                                                    \
    ag_status st_ = (call);                                               \
    if (st_ != AG_OK) {                                                   \
      fprintf(stderr, "%s failed: %s\n", #call, ag_last_error_message()); \
      return 1;                                                           \
    }                                                                     \
  } while (0)

int main(void) {
  const float true_w = 2.5f, true_b = -1.0f, lr = 0.5f;
  float xs[N], ys[N];
  unsigned seed = 12345u; /* a fixed LCG: the same points on every run */
  for (int i = 0; i < N; ++i) {
    xs[i] = (float)i / N;
    seed = seed * 1103515245u + 12345u;
    float noise = ((float)((seed >> 16) & 0x7fff) / 32768.0f - 0.5f) * 0.1f;
    ys[i] = true_w * xs[i] + true_b + noise;
  }

  /* Tensors that live across steps: made outside any scope, released at the end. */
  ag_context *ctx;
  TRY(ag_context_create(&ctx, NULL));
  int64_t n = N;
  ag_tensor *x, *y, *w, *b;
  TRY(ag_tensor_create(&x, ctx, AG_F32, &n, 1, xs));
  TRY(ag_tensor_create(&y, ctx, AG_F32, &n, 1, ys));
  TRY(ag_tensor_scalar(&w, ctx, AG_F32, 0.0));
  TRY(ag_tensor_scalar(&b, ctx, AG_F32, 0.0));
  TRY(ag_tensor_requires_grad(w, 1));
  TRY(ag_tensor_requires_grad(b, 1));

  float wv = 0.0f, bv = 0.0f;
  for (int step = 0; step <= 200; ++step) {
    ag_scope *scope;
    TRY(ag_scope_begin(&scope));
    /* loss = mean((w*x + b - y)^2); the scalars w and b broadcast over the points */
    ag_tensor *wx, *pred, *loss, *gw, *gb;
    TRY(ag_op_mul(&wx, w, x));
    TRY(ag_op_add(&pred, wx, b));
    TRY(ag_op_mse_loss(&loss, pred, y, AG_REDUCTION_MEAN));
    TRY(ag_backward(loss, NULL, NULL));

    double loss_v, gwv, gbv;
    TRY(ag_tensor_item(loss, &loss_v));
    TRY(ag_tensor_grad(&gw, w));
    TRY(ag_tensor_grad(&gb, b));
    TRY(ag_tensor_item(gw, &gwv));
    TRY(ag_tensor_item(gb, &gbv));
    /* The update happens outside the graph: write the new values into the leaves. */
    wv -= lr * (float)gwv;
    bv -= lr * (float)gbv;
    TRY(ag_tensor_copy_from(w, &wv, sizeof wv));
    TRY(ag_tensor_copy_from(b, &bv, sizeof bv));
    TRY(ag_tensor_set_grad(w, NULL)); /* gradients accumulate: clear them */
    TRY(ag_tensor_set_grad(b, NULL));
    if (step % 40 == 0) printf("step %3d  loss %.6f  w %.4f  b %.4f\n", step, loss_v, wv, bv);
    TRY(ag_scope_end(scope)); /* releases wx, pred, loss, gw, gb */
  }
  printf("fitted y = %.3f x + %.3f (true: y = %.3f x + %.3f)\n", wv, bv, true_w, true_b);

  ag_tensor_release(x);
  ag_tensor_release(y);
  ag_tensor_release(w);
  ag_tensor_release(b);
  ag_context_release(ctx);
  return fabsf(wv - true_w) < 0.1f && fabsf(bv - true_b) < 0.1f ? 0 : 1;
}
