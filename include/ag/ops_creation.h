/*
 * ag/ops_creation.h - tensors made from a few numbers: ranges and the
 * identity matrix. (Constant tensors are ag_tensor_zeros, ag_tensor_ones,
 * ag_tensor_full and ag_tensor_scalar in ag/tensor.h; random ones are in
 * ag/random.h.)
 *
 * Results are new contiguous leaves of `ctx` that do not require grad.
 * Semantics follow PyTorch's functions of the same names. Errors name the
 * function and the facts: "[ag_op_arange] end 0 is below start 5 but step 1
 * is positive". Every function returns AG_ERR_INVALID_ARGUMENT for a NULL
 * `out` or a NULL or released `ctx`, AG_ERR_DTYPE for a value that is not a
 * dtype, and AG_ERR_OUT_OF_MEMORY when the result does not fit in memory.
 * Large results are written in parallel; the values do not depend on the
 * thread count.
 */
#ifndef AG_OPS_CREATION_H
#define AG_OPS_CREATION_H

#include "ag/common.h"
#include "ag/context.h"
#include "ag/tensor.h"

AG_BEGIN_DECLS

/**
 * y = (start, start + step, start + 2 step, ...), the values below `end`
 * (above it for a negative step): a 1-D tensor of ceil((end - start) / step)
 * elements, empty when end == start. Element i is start + i * step computed
 * in double and rounded once to f32/f64; for AG_I64, start and step must be
 * integers and the values are computed in int64.
 * @return AG_ERR_DTYPE for AG_BOOL; AG_ERR_INVALID_ARGUMENT for a start, end
 *         or step that is not finite, step 0, an end on the wrong side of
 *         start for the sign of step, or (i64) a start or step that is not an
 *         integer, or a start, end or step beyond +-9.2e18.
 */
AG_API ag_status ag_op_arange(ag_tensor **out, ag_context *ctx, ag_dtype dtype, double start, double end,
                              double step) AG_NOEXCEPT;

/**
 * y = `steps` evenly spaced values from start to end inclusive, 1-D. With
 * s = (end - start) / (steps - 1) in the dtype's arithmetic, element i is
 * start + i s in the first half (i < steps / 2) and end - (steps - 1 - i) s
 * in the second, as PyTorch computes it, so both end points are exact.
 * steps = 0 gives an empty tensor, steps = 1 gives (start). dtype AG_F32 or
 * AG_F64.
 * @return AG_ERR_DTYPE for another dtype; AG_ERR_INVALID_ARGUMENT for a
 *         negative steps.
 */
AG_API ag_status ag_op_linspace(ag_tensor **out, ag_context *ctx, ag_dtype dtype, double start, double end,
                                int64_t steps) AG_NOEXCEPT;

/**
 * y = the (n, m) matrix with ones on the main diagonal and zeros elsewhere,
 * of any dtype (bool: true on the diagonal). m = -1 means m = n. Zero sizes
 * give an empty matrix.
 * @return AG_ERR_INVALID_ARGUMENT for a negative n or an m below -1.
 */
AG_API ag_status ag_op_eye(ag_tensor **out, ag_context *ctx, ag_dtype dtype, int64_t n, int64_t m) AG_NOEXCEPT;

AG_END_DECLS

#endif /* AG_OPS_CREATION_H */
