/*
 * ag/interop.h - data in and out without copies, DLPack, and the layouts
 * that bindings check at run time.
 *
 * Host memory: ag_tensor_from_buffer wraps memory the host owns; ag never
 * copies it (except data misaligned for its element type, see there) and
 * calls the host's deleter exactly once when the last reference goes.
 * Reading: ag_tensor_data gives the address of a tensor's first element,
 * ag_tensor_strides its strides in elements.
 * DLPack: ag_tensor_to_dlpack / ag_tensor_from_dlpack exchange tensors with
 * numpy, PyTorch, JAX, CuPy and any DLPack 1.x producer or consumer (the
 * legacy unversioned struct too); only CPU memory.
 * Layouts: ag_struct_size, ag_struct_field_offset and ag_constant_value let a
 * binding generated from ag-api.json check, against the loaded library, the
 * structs and constants it was generated with.
 *
 * Added in version 0.2 (symbol version AG_0.2).
 */
#ifndef AG_INTEROP_H
#define AG_INTEROP_H

#include "ag/common.h"
#include "ag/context.h"
#include "ag/tensor.h"

AG_BEGIN_DECLS

/**
 * Frees memory lent to ag: called exactly once with the `data` pointer and
 * the `deleter_ctx` that were passed in, on whichever thread drops the last
 * reference (or on the calling thread when the call that took the memory
 * fails). It must not call back into ag with the tensor it frees.
 */
typedef void (*ag_deleter_fn)(void *data, void *deleter_ctx);

/* Flags of ag_tensor_from_buffer_flags. */
#define AG_BUFFER_READ_ONLY 1 /* in-place ops and ag_tensor_data_mut refuse the tensor */

/**
 * Wrap host memory as a tensor without copying it.
 * @param[out] out     the new tensor (caller releases). It is a leaf that
 *                     does not require grad; its version counter starts at 0
 *                     and every write through ag bumps it, as for any tensor.
 * @param ctx          its context.
 * @param dtype        AG_F32, AG_F64, AG_I64 or AG_BOOL (bytes 0 or 1).
 * @param shape        `ndim` sizes, each >= 0; NULL when ndim is 0.
 * @param strides      `ndim` strides in elements (not bytes), each >= 0;
 *                     NULL for row-major contiguous. Stride 0 (a broadcast
 *                     view) is allowed; such a tensor is read-only in effect
 *                     (in-place ops refuse aliasing views). Negative strides
 *                     are AG_ERR_UNSUPPORTED.
 * @param ndim         0 .. AG_MAX_DIMS.
 * @param data         address of element (0, ..., 0); any byte offset into
 *                     the host's block is the host's business. May be NULL
 *                     only when the tensor has no element. Data aligned to
 *                     its element size is shared; misaligned data is copied
 *                     once into ag's memory (the deleter then runs before
 *                     this call returns, and writes no longer reach the host).
 * @param deleter      may be NULL: then the host keeps the memory valid for
 *                     as long as any tensor, view or graph uses it.
 * @param deleter_ctx  passed to the deleter.
 * The deleter runs exactly once on every path: when the last reference to
 * the memory goes (tensor, views, detached copies, tensors saved by graphs,
 * DLPack exports), or before this call returns when it fails.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL out or ctx, released ctx, bad
 *         ndim, negative size, NULL shape with ndim > 0, NULL data with
 *         elements); AG_ERR_DTYPE (bad dtype); AG_ERR_UNSUPPORTED (negative
 *         stride); AG_ERR_OUT_OF_MEMORY.
 * Thread-safe.
 */
AG_API ag_status ag_tensor_from_buffer(ag_tensor **out, ag_context *ctx, ag_dtype dtype, const int64_t *shape,
                                       const int64_t *strides, int32_t ndim, void *data, ag_deleter_fn deleter,
                                       void *deleter_ctx) AG_NOEXCEPT;

/**
 * As ag_tensor_from_buffer, with `flags` (0 or AG_BUFFER_READ_ONLY). A
 * read-only tensor can be read by every op; in-place ops, ag_tensor_copy_from
 * and ag_tensor_data_mut on it (or on any view of it) are AG_ERR_UNSUPPORTED.
 * @return as ag_tensor_from_buffer; AG_ERR_INVALID_ARGUMENT for unknown flags.
 */
AG_API ag_status ag_tensor_from_buffer_flags(ag_tensor **out, ag_context *ctx, ag_dtype dtype,
                                             const int64_t *shape, const int64_t *strides, int32_t ndim,
                                             void *data, uint32_t flags, ag_deleter_fn deleter,
                                             void *deleter_ctx) AG_NOEXCEPT;

/**
 * Address of the first element of `t` (element (0, ..., 0)), to read in
 * place with the strides of ag_tensor_strides. Borrowed: valid while the
 * caller holds a reference to `t` (or to a tensor sharing its storage);
 * ag never moves a tensor's data, in-place ops included. Writing through it
 * bypasses the version counter: use ag_tensor_data_mut to write.
 * NULL for NULL or an invalid handle (recorded as this thread's last error).
 * A tensor without elements gives a valid, not dereferenceable, address.
 * Thread-safe.
 */
AG_API const void *ag_tensor_data(const ag_tensor *t) AG_NOEXCEPT;

/**
 * Address of the first element of `t` for writing, and bump its version
 * counter (the write invalidates graphs that saved `t`, as an in-place op
 * does). Lifetime as for ag_tensor_data. Writing while another thread reads
 * `t` is a data race.
 * @param[out] out  the address.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL out, NULL or invalid t);
 *         AG_ERR_UNSUPPORTED (read-only tensor, or elements that overlap,
 *         as in an expand view).
 */
AG_API ag_status ag_tensor_data_mut(void **out, ag_tensor *t) AG_NOEXCEPT;

/**
 * Copy the strides of `t`, in elements, into `strides` (as ag_tensor_shape
 * copies sizes).
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL or invalid t, NULL strides
 *         with capacity > 0); AG_ERR_BUFFER_TOO_SMALL when capacity < ndim.
 */
AG_API ag_status ag_tensor_strides(const ag_tensor *t, int64_t *strides, int32_t capacity) AG_NOEXCEPT;

/**
 * 1 if `t` is row-major contiguous (sizes-1 dimensions and empty tensors
 * count as contiguous, as in PyTorch), 0 if not, -1 for NULL or an invalid
 * handle. Thread-safe.
 */
AG_API int32_t ag_tensor_is_contiguous(const ag_tensor *t) AG_NOEXCEPT;

/** 1 if `t` is read-only (see ag_tensor_from_buffer_flags), 0 if not, -1 for NULL or an invalid handle. */
AG_API int32_t ag_tensor_is_read_only(const ag_tensor *t) AG_NOEXCEPT;

/**
 * A row-major contiguous tensor with the values of `t`: a new reference to
 * `t` itself when it is contiguous already, else a copy that records a graph
 * node like ag_op_clone (gradients flow back to `t`).
 * @param[out] out  new reference (caller releases).
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL out, NULL or invalid t);
 *         AG_ERR_OUT_OF_MEMORY.
 */
AG_API ag_status ag_tensor_contiguous(ag_tensor **out, const ag_tensor *t) AG_NOEXCEPT;

/* ---- DLPack ----
 * The structs below have the layout of DLPack 1.x's dlpack.h (DLPackVersion,
 * DLDevice, DLDataType, DLTensor, DLManagedTensor, DLManagedTensorVersioned)
 * under ag's names, so a pointer to one may be passed where the other is
 * expected. Enum fields are int32_t. */

#define AG_DLPACK_MAJOR_VERSION 1
#define AG_DLPACK_MINOR_VERSION 0
#define AG_DLPACK_DEVICE_CPU 1          /* kDLCPU: the only device ag accepts */
#define AG_DLPACK_CODE_INT 0            /* kDLInt */
#define AG_DLPACK_CODE_UINT 1           /* kDLUInt */
#define AG_DLPACK_CODE_FLOAT 2          /* kDLFloat */
#define AG_DLPACK_CODE_BOOL 6           /* kDLBool */
#define AG_DLPACK_FLAG_READ_ONLY 1      /* DLPACK_FLAG_BITMASK_READ_ONLY */
#define AG_DLPACK_FLAG_IS_COPIED 2      /* DLPACK_FLAG_BITMASK_IS_COPIED */

typedef struct ag_dlpack_version {
  uint32_t major;
  uint32_t minor;
} ag_dlpack_version;

typedef struct ag_dlpack_device {
  int32_t device_type; /* AG_DLPACK_DEVICE_CPU */
  int32_t device_id;   /* 0 for CPU */
} ag_dlpack_device;

typedef struct ag_dlpack_dtype {
  uint8_t code;   /* AG_DLPACK_CODE_* */
  uint8_t bits;   /* 8, 32 or 64 for ag's dtypes */
  uint16_t lanes; /* 1 */
} ag_dlpack_dtype;

typedef struct ag_dlpack_tensor {
  void *data;
  ag_dlpack_device device;
  int32_t ndim;
  ag_dlpack_dtype dtype;
  int64_t *shape;
  int64_t *strides; /* in elements; NULL means row-major contiguous */
  uint64_t byte_offset;
} ag_dlpack_tensor;

/** DLManagedTensor (legacy, unversioned). */
typedef struct ag_dlpack_managed_tensor {
  ag_dlpack_tensor dl_tensor;
  void *manager_ctx;
  void (*deleter)(struct ag_dlpack_managed_tensor *self);
} ag_dlpack_managed_tensor;

/** DLManagedTensorVersioned (DLPack 1.x). */
typedef struct ag_dlpack_managed_tensor_versioned {
  ag_dlpack_version version;
  void *manager_ctx;
  void (*deleter)(struct ag_dlpack_managed_tensor_versioned *self);
  uint64_t flags; /* AG_DLPACK_FLAG_* */
  ag_dlpack_tensor dl_tensor;
} ag_dlpack_managed_tensor_versioned;

/**
 * Export `t` as a DLPack 1.x managed tensor sharing its memory (no copy).
 * @param[out] out  the managed tensor; the consumer calls its deleter exactly
 *                  once, on any thread, which drops ag's reference to the
 *                  memory. Its shape and strides (in elements, never NULL)
 *                  live in the export itself. version is 1.0; flags is 0, or
 *                  AG_DLPACK_FLAG_READ_ONLY for a read-only tensor.
 * The export carries data only: no graph, no requires_grad (as detach()).
 * Writes through it are not seen by ag's version counter.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL out, NULL or invalid t);
 *         AG_ERR_OUT_OF_MEMORY. Thread-safe.
 */
AG_API ag_status ag_tensor_to_dlpack(ag_dlpack_managed_tensor_versioned **out, const ag_tensor *t) AG_NOEXCEPT;

/** As ag_tensor_to_dlpack, as a legacy DLManagedTensor (no version, no flags). */
AG_API ag_status ag_tensor_to_dlpack_legacy(ag_dlpack_managed_tensor **out, const ag_tensor *t) AG_NOEXCEPT;

/**
 * Wrap a DLPack 1.x managed tensor as an ag tensor without copying.
 * ag takes ownership of `src` on every path: its deleter (if not NULL) runs
 * exactly once, when the last reference to the memory goes, or before this
 * call returns when it fails. AG_DLPACK_FLAG_READ_ONLY makes a read-only
 * tensor (see ag_tensor_from_buffer_flags). Alignment, strides and sizes are
 * handled as by ag_tensor_from_buffer (byte_offset is added to data).
 * @param[out] out  the new tensor (caller releases).
 * @param ctx       its context.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL out, ctx or src, bad ndim,
 *         negative size, NULL data or shape where needed);
 *         AG_ERR_UNSUPPORTED (major version other than 1, device other than
 *         CPU, negative strides); AG_ERR_DTYPE (a dtype ag lacks: ag reads
 *         float 32/64, int 64 and bool 8, with 1 lane); AG_ERR_OUT_OF_MEMORY.
 */
AG_API ag_status ag_tensor_from_dlpack(ag_tensor **out, ag_context *ctx,
                                       ag_dlpack_managed_tensor_versioned *src) AG_NOEXCEPT;

/** As ag_tensor_from_dlpack, from a legacy DLManagedTensor (never read-only). */
AG_API ag_status ag_tensor_from_dlpack_legacy(ag_tensor **out, ag_context *ctx,
                                              ag_dlpack_managed_tensor *src) AG_NOEXCEPT;

/* ---- layouts and constants of the loaded library ---- */

/**
 * sizeof of the public struct named `name` ("ag_context_options", ...) in
 * the loaded library; 0 for NULL or a name that is not a public struct.
 * Thread-safe.
 */
AG_API size_t ag_struct_size(const char *name) AG_NOEXCEPT;

/**
 * offsetof of field `field` in public struct `name`; -1 when either name is
 * NULL or unknown. Thread-safe.
 */
AG_API int64_t ag_struct_field_offset(const char *name, const char *field) AG_NOEXCEPT;

/**
 * Value of the integer constant (macro) `name` ("AG_ERR_SHAPE",
 * "AG_MAX_DIMS", ...) in the loaded library. A uint64_t constant above
 * INT64_MAX (AG_RNG_DEFAULT_SEED) is given as its bit pattern.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL name or out, unknown name).
 * Thread-safe.
 */
AG_API ag_status ag_constant_value(const char *name, int64_t *out) AG_NOEXCEPT;

AG_END_DECLS

#endif /* AG_INTEROP_H */
