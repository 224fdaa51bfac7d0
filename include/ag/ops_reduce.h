/*
 * ag/ops_reduce.h - reductions over chosen dims. The rules of ag/ops.h hold
 * (out-parameter first, written only on success; f32 or f64 inputs; errors
 * name the op).
 *
 * The reductions over dims share one signature:
 *   ag_op_<name>_dims(out, x, dims, ndims, keepdim)
 * - `dims` lists ndims dims to reduce (negative dims count from the end);
 *   ndims = 0 reduces all dims (dims may then be NULL), like dim=None in
 *   PyTorch. A 0-dim tensor takes dim 0 or -1.
 * - keepdim != 0 keeps each reduced dim with size 1; keepdim = 0 drops it.
 * - Errors: AG_ERR_INVALID_ARGUMENT for NULL, ndims outside 0..AG_MAX_DIMS,
 *   NULL dims with ndims > 0, a dim out of range ("[ag_op_sum_dims] dim 3 is
 *   out of range for a tensor of 2 dims (expected -2..1)") or a repeated dim
 *   ("dim 1 appears more than once in dims"); AG_ERR_DTYPE for a
 *   non-floating x.
 * - Zero-size dims behave as in NumPy: a sum over an empty dim is 0, a mean NaN.
 */
#ifndef AG_OPS_REDUCE_H
#define AG_OPS_REDUCE_H

#include "ag/common.h"
#include "ag/tensor.h"

AG_BEGIN_DECLS

/** y = sum of x over `dims`. Gradient: g expanded back over the reduced dims. */
AG_API ag_status ag_op_sum_dims(ag_tensor **out, const ag_tensor *x, const int64_t *dims, int32_t ndims,
                                int32_t keepdim) AG_NOEXCEPT;

/** y = mean of x over `dims` (NaN where the reduced count is 0). Gradient: g / count, expanded back. */
AG_API ag_status ag_op_mean_dims(ag_tensor **out, const ag_tensor *x, const int64_t *dims, int32_t ndims,
                                 int32_t keepdim) AG_NOEXCEPT;

AG_END_DECLS

#endif /* AG_OPS_REDUCE_H */
