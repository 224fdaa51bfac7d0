/*
 * ag/ops_index.h - indexing operations.
 *
 * The general rules of ag/ops.h hold. In addition:
 * - indices are AG_I64 tensors and masks AG_BOOL tensors (else AG_ERR_DTYPE);
 *   they are never differentiated;
 * - index values are never wrapped: a value outside 0..size-1 (negative ones
 *   included, as PyTorch's gather and index_select) is AG_ERR_INVALID_ARGUMENT
 *   with a message naming the value, its position and the valid range:
 *   "[ag_op_gather] index 7 at position (1,0) is out of range for dim 0 of
 *   size 5 (valid: 0..4)";
 * - `dim` may be negative (counts from the end); 0-dim inputs have no dim to
 *   index (AG_ERR_INVALID_ARGUMENT);
 * - the adds (index_add, scatter_add, and the gradients of index_select,
 *   gather and embedding) accumulate repeated indices in a fixed order, so
 *   results are bitwise the same for any thread count.
 * Semantics follow PyTorch's functions of the same names (functional forms).
 */
#ifndef AG_OPS_INDEX_H
#define AG_OPS_INDEX_H

#include "ag/common.h"
#include "ag/tensor.h"

AG_BEGIN_DECLS

/** Reductions of ag_op_scatter_reduce (frozen values). */
#define AG_SCATTER_REDUCE_SUM 0
#define AG_SCATTER_REDUCE_PROD 1
#define AG_SCATTER_REDUCE_MEAN 2
#define AG_SCATTER_REDUCE_AMAX 3
#define AG_SCATTER_REDUCE_AMIN 4

/**
 * y = x with `dim` indexed by the 1-D i64 `index`: y has x's shape with
 * size len(index) at dim, and y[..., i, ...] = x[..., index[i], ...]. Any
 * dtype for x. Gradient: ag_op_index_add into zeros.
 * @return AG_ERR_SHAPE for an index that is not 1-D; AG_ERR_DTYPE,
 *         AG_ERR_CONTEXT; AG_ERR_INVALID_ARGUMENT for an index value or dim
 *         out of range.
 */
AG_API ag_status ag_op_index_select(ag_tensor **out, const ag_tensor *x, int64_t dim,
                                    const ag_tensor *index) AG_NOEXCEPT;

/**
 * y = a copy of x with y[..., index[i], ...] += src[..., i, ...] for each i
 * in order (PyTorch's index_add, functional). x and src are f32 or f64 of
 * one dtype; src has x's shape with size len(index) at dim. Gradients:
 * x gets the gradient, src gets ag_op_index_select of it.
 * @return AG_ERR_SHAPE for a non-1-D index or a src of another shape;
 *         AG_ERR_DTYPE, AG_ERR_CONTEXT; AG_ERR_INVALID_ARGUMENT for an index
 *         value or dim out of range.
 */
AG_API ag_status ag_op_index_add(ag_tensor **out, const ag_tensor *x, int64_t dim,
                                 const ag_tensor *index, const ag_tensor *src) AG_NOEXCEPT;

/**
 * y[p] = x[p with p[dim] replaced by index[p]]: y has index's shape; index
 * has x's ndim and no size larger than x's outside dim. Any dtype for x.
 * Gradient: ag_op_scatter_add into zeros.
 * @return AG_ERR_SHAPE when index does not fit x; AG_ERR_DTYPE,
 *         AG_ERR_CONTEXT; AG_ERR_INVALID_ARGUMENT for an index value or dim
 *         out of range.
 */
AG_API ag_status ag_op_gather(ag_tensor **out, const ag_tensor *x, int64_t dim,
                              const ag_tensor *index) AG_NOEXCEPT;

/**
 * y = a copy of x with y[p with p[dim] replaced by index[p]] += src[p] for
 * every position p of index, in row-major order (PyTorch's scatter_add,
 * functional). index has x's ndim, no size larger than src's, and none
 * larger than x's outside dim; x and src are f32 or f64 of one dtype.
 * Gradients: x gets the gradient; src gets ag_op_gather of it (zero where
 * src is larger than index).
 * @return as ag_op_gather, plus AG_ERR_SHAPE when index does not fit src.
 */
AG_API ag_status ag_op_scatter_add(ag_tensor **out, const ag_tensor *x, int64_t dim,
                                   const ag_tensor *index, const ag_tensor *src) AG_NOEXCEPT;

/**
 * y = value where the bool `mask` is set, else x; x and mask broadcast
 * together (y has the broadcast shape). Any dtype for x; value is converted
 * to it. Gradient: the gradient with the masked positions zeroed, summed
 * back to x's shape.
 * @return AG_ERR_SHAPE when x and mask do not broadcast; AG_ERR_DTYPE for a
 *         mask that is not bool; AG_ERR_CONTEXT.
 */
AG_API ag_status ag_op_masked_fill(ag_tensor **out, const ag_tensor *x, const ag_tensor *mask,
                                   double value) AG_NOEXCEPT;

/**
 * y[..., :] = weight[indices[...], :]: the rows of weight (V, D) picked by
 * i64 indices of any shape (up to 15 dims); y has shape (indices..., D).
 * Gradient (weight): the rows of the gradient added into zeros of (V, D),
 * repeated indices in a fixed order.
 * @return AG_ERR_SHAPE for a weight that is not 2-D; AG_ERR_DTYPE,
 *         AG_ERR_CONTEXT; AG_ERR_INVALID_ARGUMENT for an index outside 0..V-1
 *         or indices with 16 dims.
 */
AG_API ag_status ag_op_embedding(ag_tensor **out, const ag_tensor *weight,
                                 const ag_tensor *indices) AG_NOEXCEPT;

/**
 * y = the one-hot encoding of i64 indices: shape (indices..., num_classes),
 * dtype i64, y[..., c] = 1 where indices[...] == c, else 0.
 * num_classes = -1 uses the largest index + 1. Not differentiable.
 * @return AG_ERR_DTYPE for indices that are not i64; AG_ERR_INVALID_ARGUMENT
 *         for a negative index, an index >= num_classes, num_classes below
 *         -1, -1 with empty indices, or indices with 16 dims;
 *         AG_ERR_OUT_OF_MEMORY when the result is too large.
 */
AG_API ag_status ag_op_one_hot(ag_tensor **out, const ag_tensor *indices,
                               int64_t num_classes) AG_NOEXCEPT;

/**
 * y = a copy of x with y[p with p[dim] = index[p]] = src[p] for every
 * position p of index, PyTorch's scatter (functional). index has x's ndim,
 * no size above src's, nor above x's outside dim; x and src of one dtype
 * (any). With repeated targets the last in row-major order of index wins.
 * Gradients: x gets the gradient with the written positions zeroed, src gets
 * ag_op_gather of it (zeros where index does not reach).
 * @return AG_ERR_SHAPE when index does not fit; AG_ERR_DTYPE,
 *         AG_ERR_CONTEXT; AG_ERR_INVALID_ARGUMENT for an index value or dim
 *         out of range.
 */
AG_API ag_status ag_op_scatter(ag_tensor **out, const ag_tensor *x, int64_t dim,
                               const ag_tensor *index, const ag_tensor *src) AG_NOEXCEPT;

/**
 * As ag_op_scatter with every written element `value` (converted to x's
 * dtype). Gradient: the gradient with the written positions zeroed.
 * @return as ag_op_scatter; AG_ERR_INVALID_ARGUMENT for a value an i64 x
 *         cannot hold.
 */
AG_API ag_status ag_op_scatter_value(ag_tensor **out, const ag_tensor *x, int64_t dim,
                                     const ag_tensor *index, double value) AG_NOEXCEPT;

/**
 * y = a copy of x with src[p] reduced into y[p with p[dim] = index[p]] for
 * every position p of index, PyTorch's scatter_reduce: `reduce` is an
 * AG_SCATTER_REDUCE_* value (sum, prod, mean, amax, amin); include_self = 0
 * leaves x's value out at the positions index reaches. Positions index does
 * not reach keep x's value. f32 or f64; the index fits as in ag_op_scatter.
 * Accumulation runs in row-major order of index. amax/amin propagate NaN.
 * Gradients: PyTorch's formulas: sum passes it on; mean divides by the
 * count; amax/amin share it equally among the elements equal to the result
 * (ties); prod divides the product by the factor, and for a factor that is
 * the only zero of its target uses the product of the others (the
 * second-order gradient with several zeros in one target is not PyTorch's,
 * which refuses it).
 * @return as ag_op_scatter; AG_ERR_INVALID_ARGUMENT for another reduce.
 */
AG_API ag_status ag_op_scatter_reduce(ag_tensor **out, const ag_tensor *x, int64_t dim,
                                      const ag_tensor *index, const ag_tensor *src, int32_t reduce,
                                      int32_t include_self) AG_NOEXCEPT;

/**
 * y = a copy of x with x[indices[0], ..., indices[n-1]] = values (added when
 * accumulate != 0), PyTorch's index_put with i64 index tensors for the
 * first n dims (bool masks: convert them to positions first): the indices
 * broadcast together to a shape B, negative values count from the end, and
 * values broadcast to (B, x's remaining sizes). Without accumulate, repeated
 * positions take the last value. f32 or f64 with accumulate, else any dtype.
 * Gradients: x gets the gradient (zeroed at the written positions without
 * accumulate), values get the gradient at the indexed positions, summed
 * over broadcast dims.
 * @return AG_ERR_INVALID_ARGUMENT for nindices < 1, an index out of range,
 *         indexed dims (of an empty x) whose sizes' product overflows int64;
 *         AG_ERR_SHAPE for more indices than dims, indices or values that do
 *         not broadcast; AG_ERR_UNSUPPORTED for an indexed shape of more than
 *         AG_MAX_DIMS dims; AG_ERR_DTYPE, AG_ERR_CONTEXT.
 */
AG_API ag_status ag_op_index_put(ag_tensor **out, const ag_tensor *x,
                                 const ag_tensor *const *indices, int32_t nindices,
                                 const ag_tensor *values, int32_t accumulate) AG_NOEXCEPT;

/**
 * y = a copy of x with y[..., index[i], ...] = src[..., i, ...] along dim,
 * PyTorch's index_copy (functional); index 1-D i64, src has x's shape with
 * size len(index) at dim, x and src of one dtype (any). Repeated indices:
 * the last wins. Gradients: x gets the gradient with the copied positions
 * zeroed, src gets ag_op_index_select of it.
 * @return AG_ERR_SHAPE for a non-1-D index or a src of another shape;
 *         AG_ERR_DTYPE, AG_ERR_CONTEXT; AG_ERR_INVALID_ARGUMENT for an index
 *         value or dim out of range.
 */
AG_API ag_status ag_op_index_copy(ag_tensor **out, const ag_tensor *x, int64_t dim,
                                  const ag_tensor *index, const ag_tensor *src) AG_NOEXCEPT;

/**
 * y = a copy of x with every position index names along dim set to `value`,
 * PyTorch's index_fill (functional); index 1-D i64. Gradient: zeroed at the
 * filled positions.
 * @return as ag_op_index_copy; AG_ERR_INVALID_ARGUMENT for a value an i64 x
 *         cannot hold.
 */
AG_API ag_status ag_op_index_fill(ag_tensor **out, const ag_tensor *x, int64_t dim,
                                  const ag_tensor *index, double value) AG_NOEXCEPT;

/**
 * y = x (broadcast with the bool mask) with the positions where mask is true
 * taking source's elements in row-major order, PyTorch's masked_scatter;
 * source (of x's dtype) needs at least as many elements as mask selects.
 * Gradients: x gets the gradient zeroed where mask is true (summed over
 * broadcast dims), source gets the selected gradient (zeros beyond).
 * @return AG_ERR_SHAPE for shapes that do not broadcast or too small a
 *         source; AG_ERR_DTYPE, AG_ERR_CONTEXT.
 */
AG_API ag_status ag_op_masked_scatter(ag_tensor **out, const ag_tensor *x, const ag_tensor *mask,
                                      const ag_tensor *source) AG_NOEXCEPT;

/**
 * y = the 1-D tensor of the elements of x where the bool mask is true (x
 * and mask broadcast together), in row-major order, PyTorch's
 * masked_select. Gradient: scattered back into zeros.
 * @return AG_ERR_SHAPE for shapes that do not broadcast; AG_ERR_DTYPE for a
 *         mask that is not bool; AG_ERR_CONTEXT.
 */
AG_API ag_status ag_op_masked_select(ag_tensor **out, const ag_tensor *x,
                                     const ag_tensor *mask) AG_NOEXCEPT;

/**
 * y = ag_op_gather(x, dim, indices) after x and the i64 indices (of x's
 * ndim) are broadcast against each other in every dim but dim, PyTorch's
 * take_along_dim (dim is required: flatten both for PyTorch's dim=None).
 * Index values do not wrap. Gradient: added back at the taken positions.
 * @return AG_ERR_SHAPE for indices of another ndim or shapes that do not
 *         broadcast; AG_ERR_INVALID_ARGUMENT for an index value or dim out of
 *         range; AG_ERR_DTYPE, AG_ERR_CONTEXT.
 */
AG_API ag_status ag_op_take_along_dim(ag_tensor **out, const ag_tensor *x, const ag_tensor *indices,
                                      int64_t dim) AG_NOEXCEPT;

AG_END_DECLS

#endif /* AG_OPS_INDEX_H */
