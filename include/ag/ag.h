/*
 * ag/ag.h - the only header a user of ag needs.
 *
 * ag is a reverse-mode autograd engine over dense CPU tensors behind a C ABI
 * of opaque handles:
 *
 *   ag_context *ctx;  ag_context_create(&ctx, NULL);
 *   int64_t shape[1] = {1};  float data[1] = {3.0f};
 *   ag_tensor *x;     ag_tensor_create(&x, ctx, AG_F32, shape, 1, data);
 *   ag_tensor_requires_grad(x, 1);
 *   ag_tensor *y;     ag_op_mul(&y, x, x);          (graph recorded here)
 *   ag_backward(y, NULL, NULL);                     (seed 1 for a one-element root)
 *   ag_tensor *g;     ag_tensor_grad(&g, x);        (dy/dx = 2x = 6)
 *   ag_tensor_release(g); ag_tensor_release(y); ag_tensor_release(x);
 *   ag_context_release(ctx);
 *
 * Rules that hold for every function (ABI.md has the whole contract):
 * - fallible calls return ag_status (AG_OK == 0) and, on failure, leave a
 *   message for ag_last_error_message() and their out-parameters untouched;
 * - `T **out` parameters receive new references the caller releases;
 *   pointers returned as values are borrowed;
 * - nothing aborts, prints or exits; no C++ exception crosses the boundary.
 */
#ifndef AG_AG_H
#define AG_AG_H

#include "ag/common.h"
#include "ag/context.h"
#include "ag/tensor.h"
#include "ag/autograd.h"
#include "ag/ops.h"
#include "ag/scope.h"
#include "ag/ops_shape.h"
#include "ag/ops_index.h"
#include "ag/ops_linalg.h"
#include "ag/ops_nn.h"
#include "ag/ops_reduce.h"
#include "ag/hooks.h"
#include "ag/function.h"
#include "ag/ops_inplace.h"
#include "ag/ops_conv.h"
#include "ag/ops_creation.h"
#include "ag/random.h"
#include "ag/anomaly.h"
#include "ag/graph.h"
#include "ag/ops_norm.h"
#include "ag/functional.h"
#include "ag/interop.h"
#include "ag/optim.h"
#include "ag/io.h"
#include "ag/budget.h"
#include "ag/profile.h"
#include "ag/replay.h"

#endif /* AG_AG_H */
