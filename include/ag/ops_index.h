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
 *         -1, -1 with empty indices, or indices with 16 dims.
 */
AG_API ag_status ag_op_one_hot(ag_tensor **out, const ag_tensor *indices,
                               int64_t num_classes) AG_NOEXCEPT;

AG_END_DECLS

#endif /* AG_OPS_INDEX_H */
