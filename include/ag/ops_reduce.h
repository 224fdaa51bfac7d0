/*
 * ag/ops_reduce.h - reductions over chosen dims, selections (max/min with
 * indices, argmax/argmin) and cumulative ops along one dim. The rules of ag/ops.h hold
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

/** y = product of x over `dims` (1 over an empty dim). Gradient: PyTorch's
 * rule, exact with zeros: g * prod / x without zeros; with one zero in a
 * slice, the product of the others at the zero and 0 elsewhere; 0 with more.
 * Second derivatives are exact with any number of zeros (PyTorch's prod over
 * all dims has a constant zero gradient with two zeros; its prod over a dim
 * agrees with ag). */
AG_API ag_status ag_op_prod_dims(ag_tensor **out, const ag_tensor *x, const int64_t *dims, int32_t ndims,
                                 int32_t keepdim) AG_NOEXCEPT;

/** y = log(sum(exp(x))) over `dims`, computed with the max subtracted: no
 * overflow; an all -inf slice (or an empty one) gives -inf, a +inf gives +inf.
 * Gradient: softmax of x over the dims times g. */
AG_API ag_status ag_op_logsumexp_dims(ag_tensor **out, const ag_tensor *x, const int64_t *dims, int32_t ndims,
                                      int32_t keepdim) AG_NOEXCEPT;

/**
 * y = sum((x - mean)^2) / max(0, N - correction) over `dims`, N the number of
 * elements reduced into each output (correction 1: the unbiased sample
 * variance, PyTorch's default; 0: the population variance). A divisor of 0
 * gives inf or NaN. The gradient is 2 (x - mean) / (N - correction), also
 * when correction > N (as PyTorch: 0 for a constant slice).
 * AG_ERR_INVALID_ARGUMENT also for a NaN correction.
 */
AG_API ag_status ag_op_var_dims(ag_tensor **out, const ag_tensor *x, const int64_t *dims, int32_t ndims,
                                int32_t keepdim, double correction) AG_NOEXCEPT;

/** y = sqrt(var_dims(x, dims, correction)). Where the variance is 0 (all
 * elements of a slice equal) the gradient and second derivative are 0, as
 * in PyTorch. */
AG_API ag_status ag_op_std_dims(ag_tensor **out, const ag_tensor *x, const int64_t *dims, int32_t ndims,
                                int32_t keepdim, double correction) AG_NOEXCEPT;

/**
 * y = the vector p-norm of x over `dims` (torch.linalg.vector_norm):
 * p = 2: sqrt(sum x^2), gradient x / y and 0 where y = 0 (second
 *   derivative 0 there too, as std's; PyTorch's is NaN, from 0 * inf);
 * p = 1: sum |x|, gradient sign(x) (0 at 0);
 * p = INFINITY / -INFINITY: max / min |x|, gradient sign(x) shared evenly
 *   among the elements that attain it (AG_ERR_SHAPE over an empty dim);
 * p = 0: the number of nonzero elements, gradient 0;
 * other p: (sum |x|^p)^(1/p); for p > 0 the gradient is 0 where y = 0,
 *   and for 0 < p < 1 also at each zero element (as PyTorch).
 * AG_ERR_INVALID_ARGUMENT also for a NaN p.
 */
AG_API ag_status ag_op_norm_dims(ag_tensor **out, const ag_tensor *x, const int64_t *dims, int32_t ndims,
                                 int32_t keepdim, double p) AG_NOEXCEPT;

/* ---- one dim, selecting an element ----
 * `dim` counts from the end when negative; keepdim != 0 keeps it with size
 * 1. A dim out of range is AG_ERR_INVALID_ARGUMENT; a dim of size 0 is
 * AG_ERR_SHAPE ("cannot take the max over dim 0 of size 0 (shape (0,3))"). */

/**
 * The largest element along `dim` (`values`, x's dtype) and its index
 * (`indices`, AG_I64): the first among equal maxima; NaN counts as the
 * largest (first NaN). Either out-parameter may be NULL when that result is
 * not wanted, not both (AG_ERR_INVALID_ARGUMENT). The gradient of `values`
 * goes to the returned index, 0 elsewhere.
 * @return AG_ERR_INVALID_ARGUMENT, AG_ERR_SHAPE, AG_ERR_DTYPE (not f32/f64).
 */
AG_API ag_status ag_op_max_dim(ag_tensor **values, ag_tensor **indices, const ag_tensor *x, int64_t dim,
                               int32_t keepdim) AG_NOEXCEPT;

/** As ag_op_max_dim for the smallest element (NaN counts as the smallest). */
AG_API ag_status ag_op_min_dim(ag_tensor **values, ag_tensor **indices, const ag_tensor *x, int64_t dim,
                               int32_t keepdim) AG_NOEXCEPT;

/** The AG_I64 indices of ag_op_max_dim; not differentiable (the result
 * never requires grad). */
AG_API ag_status ag_op_argmax(ag_tensor **out, const ag_tensor *x, int64_t dim, int32_t keepdim) AG_NOEXCEPT;

/** The AG_I64 indices of ag_op_min_dim; not differentiable. */
AG_API ag_status ag_op_argmin(ag_tensor **out, const ag_tensor *x, int64_t dim, int32_t keepdim) AG_NOEXCEPT;

/* ---- one dim, cumulative: same shape as x ---- */

/** y_k = x_0 + ... + x_k along `dim`, accumulated in double. Gradient: the
 * sum of g from the end of the dim. AG_ERR_INVALID_ARGUMENT, AG_ERR_DTYPE. */
AG_API ag_status ag_op_cumsum(ag_tensor **out, const ag_tensor *x, int64_t dim) AG_NOEXCEPT;

/** y_k = x_0 * ... * x_k along `dim`, multiplied in double. The gradient is
 * exact with zeros (past the first zero of a slice it is 0; at it, the
 * products that skip it), and so are second derivatives, with any number of
 * zeros. AG_ERR_INVALID_ARGUMENT, AG_ERR_DTYPE. */
AG_API ag_status ag_op_cumprod(ag_tensor **out, const ag_tensor *x, int64_t dim) AG_NOEXCEPT;

AG_END_DECLS

#endif /* AG_OPS_REDUCE_H */
