/*
 * ag/context.h - the context: everything that would otherwise be global.
 *
 * A context owns the thread arena that backward and parallel kernels run in,
 * and the memory of its tensors. Two contexts never interfere. A context
 * lives as long as any of its tensors: ag_context_release drops the caller's
 * reference, and the context goes when its last tensor does, so garbage-
 * collected languages may finalize handles in any order.
 */
#ifndef AG_CONTEXT_H
#define AG_CONTEXT_H

#include "ag/common.h"

AG_BEGIN_DECLS

/** Opaque context handle. */
typedef struct ag_context ag_context;

/**
 * Options for ag_context_create. Append-only; set struct_size to
 * sizeof(ag_context_options) (AG_CONTEXT_OPTIONS_INIT and
 * ag_context_options_init do), so a newer library reads only the fields an
 * older caller knows.
 */
typedef struct ag_context_options {
  uint32_t struct_size;
  /* Threads of the context's arena, the calling thread included.
   * 0 = one per hardware thread; 1 = no worker threads at all; more than
   * the machine's hardware threads run as many as it has. The chunks
   * of parallel kernels run in the denormal mode (FTZ/DAZ) of the thread
   * that created the context. */
  int32_t num_threads;
} ag_context_options;

#define AG_CONTEXT_OPTIONS_INIT {(uint32_t)sizeof(ag_context_options), 0}

/**
 * Fill `opts` with the defaults (the same bytes as AG_CONTEXT_OPTIONS_INIT).
 * For languages that cannot expand macros.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT if `opts` is NULL.
 */
AG_API ag_status ag_context_options_init(ag_context_options *opts) AG_NOEXCEPT;

/**
 * Create a context.
 * @param[out] out  the new context; the caller owns it (ag_context_release).
 * @param opts      NULL for defaults. struct_size must be at least 4 (fields
 *                  past it keep their defaults); bytes past the fields this
 *                  library knows, in a larger struct, must be zero.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL `out`, bad struct_size,
 *         negative num_threads); AG_ERR_OUT_OF_MEMORY.
 * Thread-safe. Any thread may use the context; tensors made on the calling
 * thread cost a little less while a handle to the context is held (their
 * references to it are counted without atomic operations).
 */
AG_API ag_status ag_context_create(ag_context **out, const ag_context_options *opts) AG_NOEXCEPT;

/**
 * Add a reference to `ctx` and return it. NULL for NULL, and for a handle
 * already released (recorded as this thread's last error). Thread-safe.
 */
AG_API ag_context *ag_context_retain(ag_context *ctx) AG_NOEXCEPT;

/**
 * Drop the caller's reference. The context is freed when no handle and no
 * tensor refers to it. NULL is a no-op; a handle already released is detected
 * where possible, ignored, and recorded as this thread's last error.
 * Thread-safe.
 */
AG_API void ag_context_release(ag_context *ctx) AG_NOEXCEPT;

/** Threads of the context's arena (>= 1); 0 for NULL or an invalid handle. Thread-safe. */
AG_API int32_t ag_context_num_threads(const ag_context *ctx) AG_NOEXCEPT;

/**
 * Memory statistics of a context's tensor storage. The context caches freed
 * large blocks for reuse (so steady-state loops stop paying for page faults);
 * ag_context_trim returns them to the system. Append-only; struct_size first.
 */
typedef struct ag_memory_stats {
  uint32_t struct_size;
  uint32_t reserved; /* 0 */
  int64_t bytes_in_use;      /* held by live tensors (large blocks rounded to size classes) */
  int64_t peak_bytes_in_use; /* highest bytes_in_use since creation or the last reset */
  int64_t bytes_cached;      /* freed blocks kept for reuse */
  int64_t allocations;       /* storage allocations so far */
  int64_t cache_hits;        /* of those, served from the cache */
} ag_memory_stats;

#define AG_MEMORY_STATS_INIT {(uint32_t)sizeof(ag_memory_stats), 0, 0, 0, 0, 0, 0}

/** Fill `stats` with AG_MEMORY_STATS_INIT. AG_ERR_INVALID_ARGUMENT for NULL. */
AG_API ag_status ag_memory_stats_init(ag_memory_stats *stats) AG_NOEXCEPT;

/**
 * Read the memory statistics of `ctx` into `stats`, whose struct_size the
 * caller sets (fields beyond it are not written).
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL or invalid ctx, NULL stats,
 *         struct_size < 4). Thread-safe; the fields are read one by one, so
 *         with other threads allocating they may not be mutually consistent.
 */
AG_API ag_status ag_context_memory_stats(const ag_context *ctx, ag_memory_stats *stats) AG_NOEXCEPT;

/**
 * Return every cached block of `ctx` to the system, and the calling thread's
 * cached small-object blocks (tensor, node and metadata headers, kept per
 * thread for reuse by any context). Thread-safe. AG_ERR_INVALID_ARGUMENT for
 * NULL/invalid ctx.
 */
AG_API ag_status ag_context_trim(ag_context *ctx) AG_NOEXCEPT;

/** Set peak_bytes_in_use to the current bytes_in_use. Thread-safe. AG_ERR_INVALID_ARGUMENT for NULL/invalid ctx. */
AG_API ag_status ag_context_reset_peak_memory(ag_context *ctx) AG_NOEXCEPT;

AG_END_DECLS

#endif /* AG_CONTEXT_H */
