/*
 * Fits y = w*x + b to noisy points by gradient descent, using ag for the
 * gradients of the mean squared error. Prints the loss as it falls.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ag/ag.h"

#define N 64

/* Prints the failing call and ag's message, then leaves main. */
#define TRY(call)                                                                 \
  do {                                                                            \
    ag_status st_ = (call);                                                       \
    if (st_ != AG_OK) {                                                           \
      fprintf(stderr, "%s failed: %s\n", #call, ag_last_error_message());         \
      return 1;                                                                   \
    }                                                                             \
  } while (0)

int main(void) {
  const float true_w = 2.5f, true_b = -1.0f, lr = 0.5f;
  float xs[N], ys[N];
  unsigned seed = 12345u;
  for (int i = 0; i < N; ++i) {
    xs[i] = (float)i / N;
    seed = seed * 1103515245u + 12345u;
    float noise = ((float)((seed >> 16) & 0x7fff) / 32768.0f - 0.5f) * 0.1f;
    ys[i] = true_w * xs[i] + true_b + noise;
  }

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
  double loss_v = 0.0;
  for (int step = 0; step <= 200; ++step) {
    /* loss = mean((w*x + b - y)^2); w and b broadcast over the N points */
    ag_tensor *wx, *pred, *err, *sq, *loss;
    TRY(ag_op_mul(&wx, w, x));
    TRY(ag_op_add(&pred, wx, b));
    TRY(ag_op_sub(&err, pred, y));
    TRY(ag_op_pow_scalar(&sq, err, 2.0));
    TRY(ag_op_mean(&loss, sq));
    TRY(ag_backward(loss, NULL, NULL));
    TRY(ag_tensor_item(loss, &loss_v));

    ag_tensor *gw, *gb;
    TRY(ag_tensor_grad(&gw, w));
    TRY(ag_tensor_grad(&gb, b));
    double gwv, gbv;
    TRY(ag_tensor_item(gw, &gwv));
    TRY(ag_tensor_item(gb, &gbv));
    wv -= lr * (float)gwv;
    bv -= lr * (float)gbv;
    TRY(ag_tensor_copy_from(w, &wv, sizeof wv));
    TRY(ag_tensor_copy_from(b, &bv, sizeof bv));
    TRY(ag_tensor_set_grad(w, NULL));
    TRY(ag_tensor_set_grad(b, NULL));

    if (step % 20 == 0) printf("step %3d  loss %.6f  w %.4f  b %.4f\n", step, loss_v, wv, bv);
    ag_tensor_release(gw);
    ag_tensor_release(gb);
    ag_tensor_release(loss);
    ag_tensor_release(sq);
    ag_tensor_release(err);
    ag_tensor_release(pred);
    ag_tensor_release(wx);
  }
  printf("fitted y = %.3f x + %.3f (true: y = %.3f x + %.3f)\n", wv, bv, true_w, true_b);

  ag_tensor_release(x);
  ag_tensor_release(y);
  ag_tensor_release(w);
  ag_tensor_release(b);
  ag_context_release(ctx);
  return fabsf(wv - true_w) < 0.1f && fabsf(bv - true_b) < 0.1f ? 0 : 1;
}
