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
 * One call of a parallel loop that ag hands to a host task system (see
 * ag_context_options.enqueue_task): run items [begin, end) of the loop whose
 * `task_ctx` ag passed to enqueue_task. `worker_index` is the host's name
 * for the calling worker (ag does not use it). Never throws, unwinds or
 * fails (ag keeps a failing item's error and reports it from the op), and
 * may run on several host threads at once.
 */
typedef void (*ag_task_fn)(int64_t begin, int64_t end, uint32_t worker_index, void *task_ctx);

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
  /* Host allocator (0.2), for engines that budget their memory. NULL alloc
   * (the default) = ag's own caching allocator. When set, every byte of
   * tensor data made for this context comes from alloc, also the few bytes
   * of tiny tensors that ag otherwise keeps inside the storage header, and
   * goes back through free with the same size; ag caches nothing. alloc
   * returns memory of at least `size` bytes aligned to `align` (a power of
   * two, 16 or 64), or NULL: the op then fails with AG_ERR_OUT_OF_MEMORY and
   * nothing leaks. alloc and free may be called from any thread, also
   * concurrently (ops on several threads, the arena's workers), and free also
   * after ag_context_release, until the last tensor is gone. Host memory
   * lent with ag_tensor_from_buffer/DLPack never goes through them.
   * Still on the global heap (operator new / per-thread pools): tensor,
   * storage and graph node headers (tens of bytes each, pooled per thread),
   * shapes with more than 4 dims, kernel scratch (matmul packing, reductions),
   * the backward engine's bookkeeping, hooks, error messages, the arena's
   * threads. */
  void *(*alloc)(uint64_t size, uint64_t align, void *user);
  void (*free)(void *ptr, uint64_t size, void *user);
  void *user; /* passed to alloc, free and destroy; may be NULL */
  /* Called once with `user` when the context is freed (after the last
   * free), if ag_context_create succeeded; may be NULL. */
  void (*destroy)(void *user);
  /* Host task system (0.2), in the shape of Box2D v3's enqueue/finish
   * callbacks, for engines that own their threads. NULL enqueue_task (the
   * default) = ag's own arena. When set, ag creates no thread and no TBB
   * arena: every parallel kernel and the parallel backward hand their
   * chunks to the host. enqueue_task splits items [0, item_count) into
   * ranges of at least min_range items, gets task(begin, end, worker,
   * task_ctx) called once per range on any of its threads, and returns a
   * non-NULL handle; or it runs every item itself before returning (e.g.
   * task(0, item_count, 0, task_ctx)) and returns NULL. ag then calls
   * finish_task(handle, task_user), which returns once every range has
   * run; it is called on the thread that called enqueue_task, once per
   * non-NULL handle. ag calls enqueue_task from one thread at a time per
   * loop, never from inside a task (a loop inside an item runs inline), and
   * from any thread that uses the context. Deadlock caveat: if the host
   * calls ag from its own worker threads and its finish_task blocks that
   * worker without running queued items itself, the items may wait for a
   * worker that never comes; finish_task should help run the enqueued
   * items (Box2D's samples do) or ag should be called from threads that
   * the host does not need to run items. worker_count (>= 1) is how many
   * threads may run items at once, the caller included; it replaces
   * num_threads (which must be 0 or equal to it), and 1 means ag never
   * calls enqueue_task. Results have the same bits as with ag's arena at
   * any thread count. */
  void *(*enqueue_task)(ag_task_fn task, void *task_ctx, int64_t item_count, int64_t min_range, void *task_user);
  void (*finish_task)(void *handle, void *task_user);
  void *task_user; /* passed to enqueue_task and finish_task; may be NULL */
  int32_t worker_count;
  uint32_t reserved; /* 0 */
} ag_context_options;

#define AG_CONTEXT_OPTIONS_INIT {(uint32_t)sizeof(ag_context_options), 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, 0}

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
 *         negative num_threads, only one of alloc and free set, only one of
 *         enqueue_task and finish_task set, worker_count below 1 with them
 *         or set without them, num_threads other than 0 or worker_count
 *         with them, nonzero reserved);
 *         AG_ERR_OUT_OF_MEMORY.
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

/** Threads of the context's arena, or the host's worker_count (>= 1); 0 for NULL or an invalid handle. Thread-safe. */
AG_API int32_t ag_context_num_threads(const ag_context *ctx) AG_NOEXCEPT;

/**
 * Memory statistics of a context's tensor storage. The context caches freed
 * large blocks for reuse (so steady-state loops stop paying for page faults);
 * ag_context_trim returns them to the system. Without a host allocator,
 * data of 64 bytes or less (scalars, short vectors) lives in the tensor's
 * own header block and is counted in no field. Append-only; struct_size
 * first.
 */
typedef struct ag_memory_stats {
  uint32_t struct_size;
  uint32_t reserved; /* 0 */
  int64_t bytes_in_use;      /* held by live tensors (large blocks rounded to size classes) */
  int64_t peak_bytes_in_use; /* highest bytes_in_use since creation or the last reset (with several
                                threads allocating at once: the highest total one of them saw) */
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
