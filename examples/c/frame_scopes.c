/*
 * frame_scopes: per-frame handle scopes (ag/scope.h), as a game or a
 * simulation would use ag: each frame builds a small graph, takes a gradient
 * and throws everything away. One ag_scope_begin / ag_scope_end pair per
 * frame releases every handle the frame made, so memory stays flat however
 * many frames run, and the frame code never calls ag_tensor_release.
 *
 * Each frame nudges a 256-element "aim" vector toward a target by gradient
 * descent on |tanh(aim) - target|^2. Prints the context's bytes in use after a few
 * frames and after the last one ("bytes in use: ... flat"); exits 0 when
 * they are equal and no scope is left open.
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

enum { FRAMES = 2000, DIM = 256 };

static int64_t bytes_in_use(const ag_context *ctx) {
  ag_memory_stats stats = AG_MEMORY_STATS_INIT;
  return ag_context_memory_stats(ctx, &stats) == AG_OK ? stats.bytes_in_use : -1;
}

int main(void) {
  ag_context *ctx;
  TRY(ag_context_create(&ctx, NULL));
  const int64_t dim = DIM;
  float target_v[DIM], aim_v[DIM], g[DIM];
  for (int i = 0; i < DIM; ++i) {
    target_v[i] = 0.5f * (float)((i % 7) - 3) / 3.0f; /* in [-0.5, 0.5] */
    aim_v[i] = 0.0f;
  }
  ag_tensor *aim, *target; /* state that outlives the frames */
  TRY(ag_tensor_create(&aim, ctx, AG_F32, &dim, 1, aim_v));
  TRY(ag_tensor_create(&target, ctx, AG_F32, &dim, 1, target_v));
  TRY(ag_tensor_requires_grad(aim, 1));

  int64_t early = 0, late = 0;
  double loss_v = 0.0;
  for (int frame = 1; frame <= FRAMES; ++frame) {
    ag_scope *scope;
    TRY(ag_scope_begin(&scope));
    /* Everything below is recorded in the scope, handles and gradients alike. */
    ag_tensor *t, *loss, *grad;
    TRY(ag_op_tanh(&t, aim));
    TRY(ag_op_mse_loss(&loss, t, target, AG_REDUCTION_SUM));
    TRY(ag_backward(loss, NULL, NULL));
    TRY(ag_tensor_item(loss, &loss_v));
    TRY(ag_tensor_grad(&grad, aim));
    TRY(ag_tensor_copy_data(grad, g, sizeof g));
    for (int i = 0; i < DIM; ++i) aim_v[i] -= 0.2f * g[i];
    TRY(ag_tensor_copy_from(aim, aim_v, sizeof aim_v));
    TRY(ag_tensor_set_grad(aim, NULL));
    TRY(ag_scope_end(scope)); /* t, loss, grad and the graph go here */

    if (frame == 10) early = bytes_in_use(ctx);
    if (frame == FRAMES) late = bytes_in_use(ctx);
  }
  printf("after %d frames: loss %.3g, aim (%.4f, %.4f)\n", FRAMES, loss_v, aim_v[0], aim_v[1]);
  printf("bytes in use: %lld after frame 10, %lld after frame %d: %s\n", (long long)early, (long long)late, FRAMES,
         early == late ? "flat" : "GROWING");

  const int ok = early == late && early > 0 && ag_scope_depth() == 0 && loss_v < 1e-6;
  ag_tensor_release(aim);
  ag_tensor_release(target);
  ag_context_release(ctx);
  return ok ? 0 : 1;
}
