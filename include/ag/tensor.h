/*
 * ag/tensor.h - creating tensors, reading their metadata and data.
 *
 * A tensor is a dense, strided array of one dtype with 0 to AG_MAX_DIMS
 * dimensions; a 0-dim tensor (shape NULL, ndim 0) holds one element, and a
 * zero-size dimension is legal (numel 0). Tensors of one context may be used
 * together; mixing contexts is AG_ERR_CONTEXT.
 *
 * Ownership: every `ag_tensor **out` receives a new reference that the caller
 * releases with ag_tensor_release; it is written only on success. Pointers
 * returned as values are borrowed.
 *
 * Threading: a tensor may be read (ops, queries, copy_data) from several
 * threads at once. Writing its data (ag_tensor_copy_from) while another
 * thread reads it is a data race.
 */
#ifndef AG_TENSOR_H
#define AG_TENSOR_H

#include "ag/common.h"
#include "ag/context.h"

AG_BEGIN_DECLS

/** Opaque tensor handle. */
typedef struct ag_tensor ag_tensor;

/**
 * Create a contiguous tensor.
 * @param[out] out  the new tensor (caller owns).
 * @param ctx       its context.
 * @param dtype     AG_F32, AG_F64, AG_I64 or AG_BOOL.
 * @param shape     `ndim` sizes, each >= 0; may be NULL when ndim is 0.
 * @param ndim      0 .. AG_MAX_DIMS.
 * @param data      numel elements in row-major order, copied; NULL = zeros.
 *                  AG_BOOL data is read as bytes, nonzero meaning 1.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL out/ctx, released ctx, bad
 *         ndim or size, NULL shape with ndim > 0); AG_ERR_DTYPE (bad dtype);
 *         AG_ERR_OUT_OF_MEMORY (also for a byte size that overflows).
 */
AG_API ag_status ag_tensor_create(ag_tensor **out, ag_context *ctx, ag_dtype dtype,
                                  const int64_t *shape, int32_t ndim, const void *data) AG_NOEXCEPT;

/** As ag_tensor_create with data NULL: all elements 0. */
AG_API ag_status ag_tensor_zeros(ag_tensor **out, ag_context *ctx, ag_dtype dtype,
                                 const int64_t *shape, int32_t ndim) AG_NOEXCEPT;

/** As ag_tensor_create with every element 1. */
AG_API ag_status ag_tensor_ones(ag_tensor **out, ag_context *ctx, ag_dtype dtype,
                                const int64_t *shape, int32_t ndim) AG_NOEXCEPT;

/**
 * As ag_tensor_create with every element `value` converted to `dtype`
 * (rounded to nearest for f32; truncated toward zero for i64, which needs a
 * finite value in range; nonzero is 1 for AG_BOOL).
 * @return as ag_tensor_create; AG_ERR_INVALID_ARGUMENT for a value that i64
 *         cannot hold.
 */
AG_API ag_status ag_tensor_full(ag_tensor **out, ag_context *ctx, ag_dtype dtype,
                                const int64_t *shape, int32_t ndim, double value) AG_NOEXCEPT;

/** A 0-dim tensor holding `value` (converted as ag_tensor_full does). */
AG_API ag_status ag_tensor_scalar(ag_tensor **out, ag_context *ctx, ag_dtype dtype,
                                  double value) AG_NOEXCEPT;

/**
 * Add a reference to `t` and return it. NULL for NULL, and for a handle
 * already released (recorded as this thread's last error). Thread-safe.
 */
AG_API ag_tensor *ag_tensor_retain(ag_tensor *t) AG_NOEXCEPT;

/**
 * Drop the caller's reference. Data and graph go when nothing refers to them
 * any more (a graph keeps the tensors it saved for backward). NULL is a no-op;
 * a handle already released is detected where possible, ignored, and
 * recorded as this thread's last error. Thread-safe.
 */
AG_API void ag_tensor_release(ag_tensor *t) AG_NOEXCEPT;

/** dtype of `t`; 0 for NULL or an invalid handle. */
AG_API ag_dtype ag_tensor_dtype(const ag_tensor *t) AG_NOEXCEPT;

/** Number of dimensions of `t`; -1 for NULL or an invalid handle. */
AG_API int32_t ag_tensor_ndim(const ag_tensor *t) AG_NOEXCEPT;

/** Number of elements of `t` (1 for 0-dim); -1 for NULL or an invalid handle. */
AG_API int64_t ag_tensor_numel(const ag_tensor *t) AG_NOEXCEPT;

/**
 * Copy the shape of `t` into `dims`.
 * @param dims      room for `capacity` sizes; may be NULL when capacity is 0.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL or invalid `t`, NULL dims with
 *         capacity > 0); AG_ERR_BUFFER_TOO_SMALL when capacity < ndim
 *         (dims untouched).
 */
AG_API ag_status ag_tensor_shape(const ag_tensor *t, int64_t *dims, int32_t capacity) AG_NOEXCEPT;

/**
 * The context of `t`.
 * @param[out] out  a new reference to it (caller releases with
 *                  ag_context_release), also after the caller released its
 *                  own context handles: the context lives as long as `t`.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL out, NULL or invalid t).
 */
AG_API ag_status ag_tensor_context(ag_context **out, const ag_tensor *t) AG_NOEXCEPT;

/**
 * Copy the elements of `t` in row-major order into `dst`.
 * @param dst_bytes  size of dst; at least numel * ag_dtype_size(dtype).
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL or invalid t, NULL dst with
 *         numel > 0); AG_ERR_BUFFER_TOO_SMALL (dst untouched).
 */
AG_API ag_status ag_tensor_copy_data(const ag_tensor *t, void *dst, size_t dst_bytes) AG_NOEXCEPT;

/**
 * Overwrite the elements of `t` with `src` (row-major, numel elements of t's
 * dtype) and bump its version counter, which `t` shares with its views and
 * detached copies. A tensor saved by a graph node and overwritten this way
 * makes a later backward through that node fail with AG_ERR_VERSION.
 * Needs a tensor whose elements do not alias each other (not an expand view).
 * @param src_bytes  must equal numel * ag_dtype_size(dtype).
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL or invalid t, NULL src with
 *         numel > 0, src_bytes mismatch); AG_ERR_UNSUPPORTED (aliasing view,
 *         read-only tensor).
 */
AG_API ag_status ag_tensor_copy_from(ag_tensor *t, const void *src, size_t src_bytes) AG_NOEXCEPT;

/**
 * Read the only element of a one-element tensor (any ndim) as a double.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL t or out); AG_ERR_SHAPE when
 *         numel != 1.
 */
AG_API ag_status ag_tensor_item(const ag_tensor *t, double *out) AG_NOEXCEPT;

/**
 * Version counter of the storage of `t`: bumped by every write to its data.
 * -1 for NULL or an invalid handle.
 */
AG_API int64_t ag_tensor_version(const ag_tensor *t) AG_NOEXCEPT;

AG_END_DECLS

#endif /* AG_TENSOR_H */
