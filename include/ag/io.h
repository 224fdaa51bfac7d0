/*
 * ag/io.h - named tensors in safetensors files.
 *
 * The format (public, from Hugging Face): an 8-byte little-endian header
 * length N, N bytes of a JSON object {name: {"dtype", "shape",
 * "data_offsets": [begin, end]}, optional "__metadata__": {string: string}},
 * then the data, each tensor row-major, little-endian, at its offsets
 * relative to the end of the header. ag reads and writes the dtypes F32,
 * F64, I64 and BOOL.
 *
 * Loading maps the file into memory (copy-on-write: writes to loaded
 * tensors never reach the file) and wraps each tensor without copying when
 * its data is aligned to its element size, copying it otherwise; the mapping
 * goes when the file handle and the last tensor using it are released.
 *
 * Bad files (truncated, a header length past the end, invalid JSON, unknown
 * dtype strings, shape and offsets that disagree, offsets out of range or
 * overlapping) are AG_ERR_INVALID_ARGUMENT with a message saying what is
 * wrong, and where; nothing is read outside the file.
 *
 * Added in version 0.2 (symbol version AG_0.2).
 */
#ifndef AG_IO_H
#define AG_IO_H

#include "ag/common.h"
#include "ag/context.h"
#include "ag/tensor.h"

AG_BEGIN_DECLS

/** Opaque handle of a loaded safetensors file. */
typedef struct ag_safetensors ag_safetensors;

/**
 * Write `num_tensors` named tensors (any strides; written row-major) to a
 * safetensors file at `path`, replacing it: the data goes to a temporary
 * file beside it that is renamed over `path` at the end, so a failed save
 * leaves any old file intact.
 * @param path             the file.
 * @param names            `num_tensors` distinct UTF-8 names (not
 *                         "__metadata__"); may be NULL when num_tensors is 0.
 * @param tensors          the tensors; may be NULL when num_tensors is 0.
 * @param num_tensors      >= 0.
 * @param metadata_keys    `num_metadata` distinct strings for "__metadata__";
 *                         may be NULL when num_metadata is 0.
 * @param metadata_values  their values; may be NULL when num_metadata is 0.
 * @param num_metadata     >= 0.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL path, names or tensors with
 *         a count > 0, a NULL or duplicate name or key, invalid UTF-8, an
 *         invalid tensor, the file cannot be written: the message carries
 *         the system's reason); AG_ERR_OUT_OF_MEMORY.
 * Thread-safe (the tensors must not be written meanwhile).
 */
AG_API ag_status ag_safetensors_save(const char *path, const char *const *names, const ag_tensor *const *tensors,
                                     int32_t num_tensors, const char *const *metadata_keys,
                                     const char *const *metadata_values, int32_t num_metadata) AG_NOEXCEPT;

/**
 * Map and check a safetensors file.
 * @param[out] out  the loaded file (caller releases with ag_safetensors_release).
 * @param ctx       the context of the tensors it hands out.
 * @param path      the file.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL out, ctx or path, the file
 *         cannot be opened or mapped, a bad file: see above);
 *         AG_ERR_OUT_OF_MEMORY. A tensor of a dtype ag lacks (F16, I32, ...)
 *         does not fail the load; ag_safetensors_get fails for it.
 * Thread-safe.
 */
AG_API ag_status ag_safetensors_load(ag_safetensors **out, ag_context *ctx, const char *path) AG_NOEXCEPT;

/** Drop the caller's handle; NULL is a no-op. Tensors already handed out stay valid. */
AG_API void ag_safetensors_release(ag_safetensors *file) AG_NOEXCEPT;

/** Number of tensors in the file; -1 for NULL or an invalid handle. */
AG_API int32_t ag_safetensors_count(const ag_safetensors *file) AG_NOEXCEPT;

/**
 * Name of tensor `index` (0 .. count-1; in the order of their data offsets).
 * Borrowed: valid while `file` is. NULL for an invalid handle or index.
 */
AG_API const char *ag_safetensors_name(const ag_safetensors *file, int32_t index) AG_NOEXCEPT;

/**
 * The tensor named `name`: a leaf that does not require grad, sharing the
 * mapped memory (writable, copy-on-write) when aligned, else a copy.
 * @param[out] out  a new tensor (caller releases).
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL or invalid file, NULL out or
 *         name, no tensor of that name, BOOL bytes other than 0 and 1);
 *         AG_ERR_DTYPE (a dtype ag lacks, naming the tensor and the dtype);
 *         AG_ERR_OUT_OF_MEMORY.
 */
AG_API ag_status ag_safetensors_get(const ag_safetensors *file, const char *name, ag_tensor **out) AG_NOEXCEPT;

/**
 * Value of "__metadata__" entry `key`. Borrowed: valid while `file` is.
 * NULL when there is no such entry (or NULL / invalid arguments).
 */
AG_API const char *ag_safetensors_metadata(const ag_safetensors *file, const char *key) AG_NOEXCEPT;

AG_END_DECLS

#endif /* AG_IO_H */
