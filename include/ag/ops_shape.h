/*
 * ag/ops_shape.h - shape and view operations.
 *
 * The general rules of ag/ops.h hold. In addition:
 * - a *view* shares the input's data and version counter: a write through
 *   the input or any view of it (ag_tensor_copy_from) is seen by all of them
 *   and bumps the version all of them report. Views are made by reshape
 *   (when the strides allow), flatten, squeeze, unsqueeze, transpose,
 *   permute, movedim, slice, select, narrow, split, chunk, unbind,
 *   tensor_split, tensor_split_indices (and ag_op_expand, ag_op_broadcast_to);
 * - these ops accept every dtype (views of i64 and bool tensors too); a
 *   gradient flows only for f32 and f64;
 * - `dim` arguments may be negative and count from the end (-1 is the last
 *   dim); a dim outside -ndim..ndim-1 is AG_ERR_INVALID_ARGUMENT naming the
 *   dim and the tensor's rank;
 * - a NULL array with a positive count, a count outside 0..16 for a list of
 *   dims, or a NULL or released tensor is AG_ERR_INVALID_ARGUMENT.
 * Semantics follow PyTorch's functions of the same names.
 */
#ifndef AG_OPS_SHAPE_H
#define AG_OPS_SHAPE_H

#include "ag/common.h"
#include "ag/tensor.h"

AG_BEGIN_DECLS

/** Padding modes of ag_op_pad (frozen values). */
#define AG_PAD_CONSTANT 0 /* fill with a value; negative pads crop */
#define AG_PAD_REFLECT 1  /* mirror at the edge, the edge not repeated */

/**
 * y = x with shape `shape` (ndim sizes, one of which may be -1 and is then
 * inferred). A view when x's strides can express the new shape (PyTorch's
 * `view` rule), else a contiguous copy. Gradient: reshaped back.
 * @return AG_ERR_SHAPE when the element counts differ (or -1 cannot be
 *         inferred, e.g. with a 0 among the other sizes);
 *         AG_ERR_INVALID_ARGUMENT for two -1, a size below -1, a bad ndim.
 */
AG_API ag_status ag_op_reshape(ag_tensor **out, const ag_tensor *x,
                               const int64_t *shape, int32_t ndim) AG_NOEXCEPT;

/**
 * y = x with dims start_dim..end_dim (inclusive) merged into one, as
 * reshape. A 0-dim x gives shape (1) (dims 0 and -1 are valid for it).
 * @return AG_ERR_INVALID_ARGUMENT for a dim out of range or start after end.
 */
AG_API ag_status ag_op_flatten(ag_tensor **out, const ag_tensor *x,
                               int64_t start_dim, int64_t end_dim) AG_NOEXCEPT;

/**
 * A view of x without the size-1 dims listed in `dims` (a listed dim of
 * another size is kept, as in PyTorch); ndims = 0 removes every size-1 dim.
 * @return AG_ERR_INVALID_ARGUMENT for a dim out of range or listed twice.
 */
AG_API ag_status ag_op_squeeze(ag_tensor **out, const ag_tensor *x,
                               const int64_t *dims, int32_t ndims) AG_NOEXCEPT;

/**
 * A view of x with a size-1 dim inserted at `dim` (-ndim-1..ndim).
 * @return AG_ERR_INVALID_ARGUMENT for a dim out of range or x with 16 dims.
 */
AG_API ag_status ag_op_unsqueeze(ag_tensor **out, const ag_tensor *x, int64_t dim) AG_NOEXCEPT;

/**
 * A view of x with dims dim0 and dim1 swapped (a 0-dim x accepts 0 and -1
 * and is returned as a view of itself).
 * @return AG_ERR_INVALID_ARGUMENT for a dim out of range.
 */
AG_API ag_status ag_op_transpose(ag_tensor **out, const ag_tensor *x,
                                 int64_t dim0, int64_t dim1) AG_NOEXCEPT;

/**
 * A view of x whose dim i is x's dim dims[i]; `dims` is a permutation of
 * x's dims (ndims == x's ndim). Gradient: the inverse permutation.
 * @return AG_ERR_INVALID_ARGUMENT when ndims differs from x's ndim, a dim is
 *         out of range or repeated.
 */
AG_API ag_status ag_op_permute(ag_tensor **out, const ag_tensor *x,
                               const int64_t *dims, int32_t ndims) AG_NOEXCEPT;

/**
 * A view x[start:end:step] along `dim`, with Python's slice rules: negative
 * start/end count from the end, then both clamp to 0..size (so the result
 * may be empty; INT64_MAX as end means "to the end"). step must be > 0.
 * Gradient: ag_op_slice_backward.
 * @return AG_ERR_INVALID_ARGUMENT for a dim out of range (also for a 0-dim
 *         x) or step <= 0.
 */
AG_API ag_status ag_op_slice(ag_tensor **out, const ag_tensor *x, int64_t dim,
                             int64_t start, int64_t end, int64_t step) AG_NOEXCEPT;

/**
 * y = zeros of `input_shape` with `grad` written at [start:end:step] along
 * `dim` (the bounds as in ag_op_slice): the gradient of slice, select,
 * narrow and split. Differentiable in grad (its gradient is the slice).
 * @return AG_ERR_SHAPE when grad's shape is not that of the slice;
 *         AG_ERR_DTYPE for a non-floating grad; AG_ERR_INVALID_ARGUMENT for a
 *         bad input_shape, dim or step.
 */
AG_API ag_status ag_op_slice_backward(ag_tensor **out, const ag_tensor *grad,
                                      const int64_t *input_shape, int32_t ndim, int64_t dim,
                                      int64_t start, int64_t end, int64_t step) AG_NOEXCEPT;

/**
 * A view of x at position `index` of `dim`, that dim removed (index may be
 * negative: -1 is the last).
 * @return AG_ERR_INVALID_ARGUMENT for a dim or index out of range.
 */
AG_API ag_status ag_op_select(ag_tensor **out, const ag_tensor *x, int64_t dim,
                              int64_t index) AG_NOEXCEPT;

/**
 * A view x[start:start+length] along `dim`; start may be negative (counts
 * from the end) and lies in -size..size; the range must fit in the dim.
 * @return AG_ERR_INVALID_ARGUMENT for a dim or start out of range, a
 *         negative length or a range past the end.
 */
AG_API ag_status ag_op_narrow(ag_tensor **out, const ag_tensor *x, int64_t dim,
                              int64_t start, int64_t length) AG_NOEXCEPT;

/**
 * Splits x along `dim` into nsizes consecutive views of the given sizes
 * (which must add up to the dim's size; zeros allowed) and writes them to
 * outs[0..nsizes), each a new reference the caller releases. `capacity` is
 * the length of the caller's `outs` array. On failure nothing is written.
 * @return AG_ERR_SHAPE when the sizes do not add up to the dim;
 *         AG_ERR_BUFFER_TOO_SMALL when capacity < nsizes;
 *         AG_ERR_INVALID_ARGUMENT for NULL outs, a negative size or count, a
 *         dim out of range.
 */
AG_API ag_status ag_op_split(ag_tensor **outs, int32_t capacity, const ag_tensor *x,
                             const int64_t *sizes, int32_t nsizes, int64_t dim) AG_NOEXCEPT;

/**
 * Splits x along `dim` into views of ceil(size / chunks) elements, the last
 * one smaller, as PyTorch's chunk: there may be fewer than `chunks` pieces
 * (size 5 in 4 chunks gives 2,2,1), and an empty dim gives one empty piece.
 * Writes the pieces to outs[0..n) and n to *n_out. With outs == NULL and
 * capacity == 0 only *n_out is written (query the count first).
 * @return AG_ERR_BUFFER_TOO_SMALL when capacity < n (nothing written);
 *         AG_ERR_INVALID_ARGUMENT for NULL n_out, NULL outs with capacity > 0,
 *         chunks <= 0 or above INT32_MAX, a dim out of range.
 */
AG_API ag_status ag_op_chunk(ag_tensor **outs, int32_t capacity, int32_t *n_out,
                             const ag_tensor *x, int64_t chunks, int64_t dim) AG_NOEXCEPT;

/* ---- ops that write a new tensor (any dtype) ---- */

/**
 * y = the n tensors xs[0..n) joined along `dim`. They share dtype, context
 * and ndim (at least 1), and their sizes match except in `dim` (empty
 * tensors of the same ndim are fine). Gradient: the matching slice per input.
 * @return AG_ERR_SHAPE for a 0-dim tensor or sizes that differ outside `dim`
 *         (the message names the index); AG_ERR_DTYPE, AG_ERR_CONTEXT;
 *         AG_ERR_INVALID_ARGUMENT for n < 1, NULL xs or element, a dim out
 *         of range.
 */
AG_API ag_status ag_op_concat(ag_tensor **out, const ag_tensor *const *xs, int32_t n,
                              int64_t dim) AG_NOEXCEPT;

/**
 * y = the n tensors xs[0..n), all of one shape, joined along a new dim
 * `dim` (-ndim-1..ndim). Gradient: the matching select per input.
 * @return AG_ERR_SHAPE for shapes that differ; otherwise as ag_op_concat.
 */
AG_API ag_status ag_op_stack(ag_tensor **out, const ag_tensor *const *xs, int32_t n,
                             int64_t dim) AG_NOEXCEPT;

/**
 * y = x with the order of elements reversed along each of `dims` (a copy;
 * ndims = 0 copies x unchanged). Gradient: flipped back.
 * @return AG_ERR_INVALID_ARGUMENT for a dim out of range or listed twice.
 */
AG_API ag_status ag_op_flip(ag_tensor **out, const ag_tensor *x, const int64_t *dims,
                            int32_t ndims) AG_NOEXCEPT;

/**
 * y = x tiled repeats[i] times along dim i (PyTorch's Tensor.repeat): n must
 * be at least x's ndim, extra leading repeats add leading dims, and the
 * result has shape size_i * repeats_i. Repeats may be 0 (empty result).
 * Gradient: the tiles summed.
 * @return AG_ERR_INVALID_ARGUMENT for n below x's ndim or above 16, a
 *         negative repeat; AG_ERR_UNSUPPORTED when n plus the number of
 *         repeated dims of size > 1 exceeds 16; AG_ERR_OUT_OF_MEMORY when
 *         the size overflows.
 */
AG_API ag_status ag_op_repeat(ag_tensor **out, const ag_tensor *x, const int64_t *repeats,
                              int32_t n) AG_NOEXCEPT;

/**
 * y = x padded, PyTorch's F.pad: `pads` holds npads/2 (before, after) pairs,
 * the first pair for the last dim, the next for the one before, ...
 * AG_PAD_CONSTANT fills with `value` (converted to x's dtype); negative pads
 * crop. AG_PAD_REFLECT mirrors x at each edge without repeating the edge
 * element ([1,2,3] padded (2,1) is [3,2,1,2,3,2]); each pad must be >= 0 and
 * below the dim's size; `value` is ignored. Gradient: constant -> the
 * gradient cropped (padding with negated pads); reflect -> the mirrored
 * parts added back onto x's positions.
 * @return AG_ERR_INVALID_ARGUMENT for an odd npads, more pairs than dims, a
 *         NULL pads with npads > 0, a mode other than the two, a negative
 *         reflect pad, a pad of INT64_MIN (its negation does not exist);
 *         AG_ERR_SHAPE when constant padding makes a size
 *         negative or a reflect pad is not below the dim's size.
 */
AG_API ag_status ag_op_pad(ag_tensor **out, const ag_tensor *x, const int64_t *pads,
                           int32_t npads, int32_t mode, double value) AG_NOEXCEPT;

/**
 * y = x with its elements shifted by shifts[i] along dims[i] (wrapping
 * around; negative shifts go the other way), PyTorch's roll. With ndims = 0
 * x is rolled as if flattened (nshifts must then be 1). A new tensor.
 * Gradient: rolled back.
 * @return AG_ERR_INVALID_ARGUMENT for nshifts = 0, nshifts != ndims (or
 *         != 1 without dims), a dim out of range.
 */
AG_API ag_status ag_op_roll(ag_tensor **out, const ag_tensor *x, const int64_t *shifts,
                            int32_t nshifts, const int64_t *dims, int32_t ndims) AG_NOEXCEPT;

/**
 * y = x rotated by k quarter turns in the plane of dims[0], dims[1] (ndims
 * must be 2), from the first towards the second, PyTorch's rot90: k = 1 is
 * flip(dims[1]) then transpose; k may be negative. For k = 1, 3 the result is
 * a transposed view of a new tensor. Gradient: rotated back.
 * @return AG_ERR_INVALID_ARGUMENT for ndims != 2, equal dims, a dim out of
 *         range; AG_ERR_SHAPE for x with fewer than 2 dims.
 */
AG_API ag_status ag_op_rot90(ag_tensor **out, const ag_tensor *x, int64_t k, const int64_t *dims,
                             int32_t ndims) AG_NOEXCEPT;

/**
 * y = x tiled dims[i] times along dim i, PyTorch's tile: as ag_op_repeat,
 * with dims filled up with leading 1s when it has fewer entries than x has
 * dims. Gradient: the tiles summed.
 * @return as ag_op_repeat.
 */
AG_API ag_status ag_op_tile(ag_tensor **out, const ag_tensor *x, const int64_t *dims,
                            int32_t ndims) AG_NOEXCEPT;

/**
 * y = x with every element along `dim` repeated `repeats` times in place
 * ([1,2] with 2 repeats is [1,1,2,2]), PyTorch's repeat_interleave with an
 * int (dim is required: flatten x first for PyTorch's dim=None). Gradient:
 * the copies summed.
 * @return AG_ERR_INVALID_ARGUMENT for negative repeats, a dim out of range;
 *         AG_ERR_UNSUPPORTED for x with 16 dims.
 */
AG_API ag_status ag_op_repeat_interleave(ag_tensor **out, const ag_tensor *x, int64_t repeats,
                                         int64_t dim) AG_NOEXCEPT;

/**
 * y = x with element i along `dim` repeated repeats[i] times, repeats an i64
 * tensor of size(dim) entries (or one entry, used for all), PyTorch's
 * repeat_interleave with a tensor. Gradient: the copies summed.
 * @return AG_ERR_DTYPE for repeats not i64; AG_ERR_SHAPE for repeats of
 *         another length or more than 1 dim; AG_ERR_INVALID_ARGUMENT for a
 *         negative repeat, a dim out of range; AG_ERR_CONTEXT;
 *         AG_ERR_OUT_OF_MEMORY when the result is too large.
 */
AG_API ag_status ag_op_repeat_interleave_tensor(ag_tensor **out, const ag_tensor *x,
                                                const ag_tensor *repeats, int64_t dim) AG_NOEXCEPT;

/**
 * A view of x with dim `source` moved to position `destination`, the other
 * dims keeping their order, PyTorch's movedim with one dim each (use
 * ag_op_permute for several). Gradient: moved back.
 * @return AG_ERR_INVALID_ARGUMENT for a dim out of range.
 */
AG_API ag_status ag_op_movedim(ag_tensor **out, const ag_tensor *x, int64_t source,
                               int64_t destination) AG_NOEXCEPT;

/**
 * Writes the size(dim) views x[..., i, ...] (dim removed) to
 * outs[0..size(dim)), each a new reference, PyTorch's unbind. `capacity` is
 * the length of the caller's outs array. On failure nothing is written.
 * @return AG_ERR_BUFFER_TOO_SMALL when capacity < size(dim);
 *         AG_ERR_INVALID_ARGUMENT for NULL outs, a dim out of range.
 */
AG_API ag_status ag_op_unbind(ag_tensor **outs, int32_t capacity, const ag_tensor *x,
                              int64_t dim) AG_NOEXCEPT;

/**
 * Splits x along `dim` into `sections` views (always that many, some maybe
 * empty); the first size % sections are one element longer, PyTorch's
 * tensor_split with an int. Writes them to outs[0..sections).
 * @return AG_ERR_BUFFER_TOO_SMALL when capacity < sections (nothing
 *         written); AG_ERR_INVALID_ARGUMENT for NULL outs, sections <= 0, a
 *         dim out of range.
 */
AG_API ag_status ag_op_tensor_split(ag_tensor **outs, int32_t capacity, const ag_tensor *x,
                                    int64_t sections, int64_t dim) AG_NOEXCEPT;

/**
 * Splits x along `dim` at the nindices positions `indices` into nindices+1
 * views x[:i0], x[i0:i1], ..., x[ik:], with Python's slice rules (negative
 * positions count from the end, positions clamp to the size, a piece whose
 * end lies before its start is empty), PyTorch's tensor_split with a list.
 * Writes them to outs[0..nindices].
 * @return AG_ERR_BUFFER_TOO_SMALL when capacity < nindices + 1;
 *         AG_ERR_INVALID_ARGUMENT for NULL outs, a dim out of range.
 */
AG_API ag_status ag_op_tensor_split_indices(ag_tensor **outs, int32_t capacity, const ag_tensor *x,
                                            const int64_t *indices, int32_t nindices,
                                            int64_t dim) AG_NOEXCEPT;

/**
 * A view of x broadcast to `shape` (-1 keeps a size), PyTorch's broadcast_to
 * (the same as ag_op_expand). Gradient: summed back to x's shape.
 * @return as ag_op_expand.
 */
AG_API ag_status ag_op_broadcast_to(ag_tensor **out, const ag_tensor *x, const int64_t *shape,
                                    int32_t ndim) AG_NOEXCEPT;

/**
 * y = the n-th forward difference of x along `dim` (x[1:] - x[:-1], n
 * times), PyTorch's diff; prepend and append (may be NULL) are joined to x
 * along dim first and must match x's other sizes. n = 0 returns a copy of
 * x (prepend and append ignored, as PyTorch); a dim shorter than n gives an
 * empty result. f32 and f64. Gradient: through the differences.
 * @return AG_ERR_INVALID_ARGUMENT for negative n, a dim out of range;
 *         AG_ERR_SHAPE for a 0-dim x or prepend/append of other sizes;
 *         AG_ERR_DTYPE for an x that is not f32 or f64, or prepend/append
 *         of another dtype; AG_ERR_CONTEXT.
 */
AG_API ag_status ag_op_diff(ag_tensor **out, const ag_tensor *x, int64_t n, int64_t dim,
                            const ag_tensor *prepend, const ag_tensor *append) AG_NOEXCEPT;

AG_END_DECLS

#endif /* AG_OPS_SHAPE_H */
