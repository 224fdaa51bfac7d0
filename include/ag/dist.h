/*
 * ag/dist.h - data-parallel training across processes: libag_dist.
 *
 * A separate library (libag_dist.so.0, pkg-config "ag-dist"), built when
 * ag is configured with the feature option `dist` (auto: when MPI is found).
 * It uses only libag's public API; libag itself never links MPI. ag/ag.h
 * does not include this header.
 *
 * Communicators. An ag_dist_comm is made from an MPI communicator (ag
 * duplicates it and sets MPI_ERRORS_RETURN on the duplicate, so MPI
 * failures come back as AG_DIST_ERR_COMM with MPI's error string; the host
 * keeps MPI_Init/MPI_Finalize and releases every ag_dist_comm before
 * MPI_Finalize), or from host callbacks (allreduce-sum, broadcast, barrier),
 * so a host can use its own transport.
 *
 * Data parallel. ag_dist_ddp_create registers the parameters of a model
 * replicated on every rank and puts them into buckets in reverse
 * registration order (the order in which backward usually finishes them).
 * A post-accumulate-grad hook on each parameter counts it ready; when a
 * bucket is complete and every bucket before it was started, its gradients
 * are copied into the bucket's buffer and an allreduce (MPI_Iallreduce) is
 * started while the rest of backward runs. ag_dist_ddp_sync starts what is
 * left, waits, multiplies by 1/world_size and writes the average into each
 * parameter's gradient. Bucket layout depends only on the registration
 * order, the sizes and bucket_bytes, never on the order gradients arrive, so
 * every rank reduces the same buffers in the same order.
 *
 * Errors. Calls return an ag_status: ag's codes (ag/common.h) and the
 * AG_DIST_ERR_* below. The message of the last failure of a libag_dist call
 * on this thread is ag_dist_last_error_message() (its own thread-local slot;
 * a failing libag call inside is reported with libag's message). Inside
 * backward, a failing hook reports through ag_set_callback_error, so
 * ag_backward returns AG_ERR_CALLBACK with that message. Nothing aborts,
 * prints or exits.
 *
 * Collectives. Every function marked "collective" must be called by every
 * rank of the communicator, in the same order. A rank that never arrives
 * makes the others wait: ag cannot cancel an MPI collective. The only
 * waits with a deadline are those of ag_dist_ddp_sync and
 * ag_dist_ddp_skip_step (ag_dist_ddp_options.timeout_seconds).
 *
 * Threads. One thread at a time uses a communicator and its DDP objects;
 * the hooks run on the thread that calls ag_backward. With MPI, that thread
 * is the one that calls MPI (MPI_THREAD_FUNNELED is enough when it is the
 * main thread).
 */
#ifndef AG_DIST_H
#define AG_DIST_H

#include "ag/common.h"
#include "ag/hooks.h"
#include "ag/tensor.h"

#if defined(__GNUC__)
#define AG_DIST_API __attribute__((visibility("default")))
#else
#define AG_DIST_API
#endif

AG_BEGIN_DECLS

/* libag_dist's own status codes (-101 to -199 are reserved for it). */
#define AG_DIST_ERR_COMM (-101)    /* the transport failed: an MPI error or a host callback's status */
#define AG_DIST_ERR_TIMEOUT (-102) /* a wait passed its deadline; the step stays pending */
#define AG_DIST_ERR_PEER (-103)    /* another rank failed or skipped the collective step */

/* Reductions of ag_dist_all_reduce. */
#define AG_DIST_SUM 1
#define AG_DIST_MEAN 2 /* the sum multiplied by 1/world_size */

/** Default bucket size of ag_dist_ddp_options.bucket_bytes (25 MiB). */
#define AG_DIST_DEFAULT_BUCKET_BYTES 26214400

/** A communicator: a group of ranks that reduce together. */
typedef struct ag_dist_comm ag_dist_comm;

/** Data-parallel gradient synchronisation of one replicated model. */
typedef struct ag_dist_ddp ag_dist_ddp;

/**
 * Message of the last failed libag_dist call on this thread, "[function]
 * facts". Never NULL; "" before any failure. Borrowed until the next
 * libag_dist call on this thread.
 */
AG_DIST_API const char *ag_dist_last_error_message(void) AG_NOEXCEPT;

/** Name of a status: the AG_DIST_ERR_* names, else ag_status_name's. Static string. */
AG_DIST_API const char *ag_dist_status_name(ag_status status) AG_NOEXCEPT;

/**
 * Collective over `mpi_comm`. A communicator over a duplicate of an MPI
 * communicator (MPI_Comm_dup; MPI_ERRORS_RETURN is set on the duplicate).
 * @param[out] out   the new communicator (release with ag_dist_comm_release).
 * @param mpi_comm   the address of the host's MPI_Comm (e.g. &comm), read
 *                   during the call only. libag_dist and the host must be
 *                   built against the same MPI.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL out or mpi_comm,
 *         MPI_COMM_NULL, MPI not initialized or already finalized);
 *         AG_DIST_ERR_COMM (MPI_Comm_dup failed); AG_ERR_OUT_OF_MEMORY.
 */
AG_DIST_API ag_status ag_dist_comm_from_mpi(ag_dist_comm **out, const void *mpi_comm) AG_NOEXCEPT;

/**
 * As ag_dist_comm_from_mpi, with the communicator's Fortran handle
 * (MPI_Comm_c2f; mpi4py's Comm.py2f()), for hosts that cannot name an
 * MPI_Comm.
 * @param[out] out  the new communicator.
 */
AG_DIST_API ag_status ag_dist_comm_from_mpi_fint(ag_dist_comm **out, int32_t mpi_fint) AG_NOEXCEPT;

/**
 * Host transport: in-place sum of `count` elements of `dtype` (AG_F32 or
 * AG_F64) over all ranks. Every rank must receive the same bits: sum the
 * ranks' buffers in one fixed order (e.g. rank 0, 1, ...).
 */
typedef ag_status (*ag_dist_allreduce_fn)(void *user_data, void *data, int64_t count, ag_dtype dtype);
/** Host transport: `bytes` bytes of rank `root`'s `data` into every rank's `data`. */
typedef ag_status (*ag_dist_broadcast_fn)(void *user_data, void *data, int64_t bytes, int32_t root);
/** Host transport: returns once every rank called it. */
typedef ag_status (*ag_dist_barrier_fn)(void *user_data);

/**
 * A host transport: this rank, the number of ranks and three blocking
 * collectives. A callback returns AG_OK or a failing status (reported as
 * AG_DIST_ERR_COMM naming the callback and the status). Append-only;
 * struct_size first.
 */
typedef struct ag_dist_transport {
  uint32_t struct_size;
  int32_t rank;       /* 0 .. world_size - 1 */
  int32_t world_size; /* >= 1 */
  uint32_t reserved;  /* 0 */
  ag_dist_allreduce_fn allreduce_sum;
  ag_dist_broadcast_fn broadcast;
  ag_dist_barrier_fn barrier;
} ag_dist_transport;

#define AG_DIST_TRANSPORT_INIT {(uint32_t)sizeof(ag_dist_transport), 0, 1, 0, NULL, NULL, NULL}

/** Fill `transport` with the defaults (same bytes as AG_DIST_TRANSPORT_INIT). AG_ERR_INVALID_ARGUMENT for NULL. */
AG_DIST_API ag_status ag_dist_transport_init(ag_dist_transport *transport) AG_NOEXCEPT;

/**
 * A communicator over host callbacks. The callbacks run on the thread of
 * the libag_dist call (or of ag_backward, for the DDP hooks), with
 * `user_data`.
 * @param[out] out     the new communicator.
 * @param transport    copied; every callback must be set.
 * @param user_data    passed to every callback; may be NULL.
 * @param destroy      may be NULL; called with user_data exactly once: when
 *                     the communicator is freed, or before this call
 *                     returns if it fails.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL out or transport, bad
 *         struct_size or reserved, a NULL callback, world_size < 1, rank
 *         out of range); AG_ERR_OUT_OF_MEMORY.
 */
AG_DIST_API ag_status ag_dist_comm_from_callbacks(ag_dist_comm **out, const ag_dist_transport *transport,
                                                  void *user_data, ag_destroy_fn destroy) AG_NOEXCEPT;

/** Adds a reference and returns `comm`; NULL gives NULL. Thread-safe. */
AG_DIST_API ag_dist_comm *ag_dist_comm_retain(ag_dist_comm *comm) AG_NOEXCEPT;

/**
 * Drops a reference; NULL is a no-op. The communicator (and its MPI
 * duplicate, freed with MPI_Comm_free unless MPI was finalized) goes when
 * no reference and no DDP object uses it. Not collective, but with MPI
 * release every communicator before MPI_Finalize.
 */
AG_DIST_API void ag_dist_comm_release(ag_dist_comm *comm) AG_NOEXCEPT;

/** This process's rank in `comm`; -1 for NULL or an invalid handle. */
AG_DIST_API int32_t ag_dist_comm_rank(const ag_dist_comm *comm) AG_NOEXCEPT;

/** Number of ranks of `comm`; -1 for NULL or an invalid handle. */
AG_DIST_API int32_t ag_dist_comm_size(const ag_dist_comm *comm) AG_NOEXCEPT;

/**
 * Collective. Returns once every rank called it.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (invalid comm); AG_DIST_ERR_COMM.
 */
AG_DIST_API ag_status ag_dist_barrier(ag_dist_comm *comm) AG_NOEXCEPT;

/**
 * Collective. Reduce tensor `t` (f32 or f64, the same shape on every rank)
 * in place over all ranks (version counter bumped): AG_DIST_SUM or
 * AG_DIST_MEAN. Outside any graph. For logging a loss, averaging metrics.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (invalid comm or t, unknown op);
 *         AG_ERR_DTYPE; AG_ERR_UNSUPPORTED (t read-only or aliasing);
 *         AG_DIST_ERR_COMM; AG_ERR_OUT_OF_MEMORY.
 */
AG_DIST_API ag_status ag_dist_all_reduce(ag_dist_comm *comm, ag_tensor *t, int32_t op) AG_NOEXCEPT;

/**
 * Collective. Copy the values of rank `root`'s params[0..num_params) into
 * every other rank's (in place, version counters bumped; root's are left
 * alone), in one message. Call it once before training so every replica
 * starts from the same parameters. The ranks first agree that their lists
 * have the same dtypes and shapes.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (invalid comm or tensor, NULL
 *         params, num_params < 1, root out of range); AG_ERR_DTYPE (not
 *         f32/f64); AG_ERR_SHAPE (the lists differ across ranks: every rank
 *         fails); AG_DIST_ERR_PEER (another rank failed its checks);
 *         AG_ERR_UNSUPPORTED (read-only); AG_DIST_ERR_COMM;
 *         AG_ERR_OUT_OF_MEMORY. Once the data moved, nothing fails.
 */
AG_DIST_API ag_status ag_dist_broadcast_params(ag_dist_comm *comm, ag_tensor *const *params, int32_t num_params,
                                               int32_t root) AG_NOEXCEPT;

/** Options of ag_dist_ddp_create. Append-only; struct_size first. */
typedef struct ag_dist_ddp_options {
  uint32_t struct_size;
  uint32_t reserved;      /* 0 */
  int64_t bucket_bytes;   /* 0: AG_DIST_DEFAULT_BUCKET_BYTES; a parameter larger than it gets a bucket alone */
  double timeout_seconds; /* deadline of the waits of sync and skip_step; 0: none (wait as long as it takes) */
} ag_dist_ddp_options;

#define AG_DIST_DDP_OPTIONS_INIT {(uint32_t)sizeof(ag_dist_ddp_options), 0, 0, 0.0}

/** Fill `opts` with the defaults (same bytes as AG_DIST_DDP_OPTIONS_INIT). AG_ERR_INVALID_ARGUMENT for NULL. */
AG_DIST_API ag_status ag_dist_ddp_options_init(ag_dist_ddp_options *opts) AG_NOEXCEPT;

/**
 * Collective. Register `params` (leaves that require grad, f32 or f64, each
 * once; the same dtypes and shapes in the same order on every rank) for
 * data-parallel training, with a post-accumulate-grad hook on each. The
 * DDP object holds a reference to comm; the parameters are borrowed: keep
 * their handles live (unreleased) until ag_dist_ddp_release.
 * Use per step: forward, ag_backward (buckets start reducing as backward
 * completes them), ag_dist_ddp_sync, optimizer step, zero grad. One
 * backward per sync: a parameter whose gradient arrives a second time
 * before sync makes that backward fail (AG_ERR_CALLBACK).
 * @param[out] out  the new object (release with ag_dist_ddp_release).
 * @param opts      NULL for defaults.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL out or params, invalid comm
 *         or tensor, num_params < 1, a tensor twice, bad options);
 *         AG_ERR_DTYPE; AG_ERR_GRAPH (not a leaf that requires grad);
 *         AG_ERR_SHAPE (the lists differ across ranks: every rank fails);
 *         AG_DIST_ERR_PEER (another rank failed its checks);
 *         AG_DIST_ERR_COMM; AG_ERR_OUT_OF_MEMORY.
 */
AG_DIST_API ag_status ag_dist_ddp_create(ag_dist_ddp **out, ag_dist_comm *comm, ag_tensor *const *params,
                                         int32_t num_params, const ag_dist_ddp_options *opts) AG_NOEXCEPT;

/**
 * Remove the hooks and drop the object's references. NULL is a no-op. Not
 * collective; release it between steps (after sync or skip_step). If a
 * step is still pending after a timeout, its buffers are left allocated,
 * since MPI may still write into them.
 */
AG_DIST_API void ag_dist_ddp_release(ag_dist_ddp *ddp) AG_NOEXCEPT;

/**
 * Collective. Finish the step: start the buckets backward did not complete
 * (a parameter without a gradient counts as zeros), wait for all, and give
 * every parameter the average of the ranks' gradients (written into its
 * gradient tensor in place, or a new gradient when it had none; a
 * parameter no rank had a gradient for keeps none). Every rank gets the
 * same bits.
 * @return AG_OK;
 *   AG_DIST_ERR_TIMEOUT (the deadline passed: nothing was written and the
 *     step stays pending; call sync again to keep waiting, or give up on
 *     the job: the collective cannot be cancelled);
 *   AG_DIST_ERR_PEER (a rank called ag_dist_ddp_skip_step: no gradient
 *     changed; the step is over on every rank);
 *   AG_ERR_INVALID_ARGUMENT (invalid ddp); AG_DIST_ERR_COMM;
 *   AG_ERR_OUT_OF_MEMORY.
 */
AG_DIST_API ag_status ag_dist_ddp_sync(ag_dist_ddp *ddp) AG_NOEXCEPT;

/**
 * Collective, in place of ag_dist_ddp_sync on a rank whose step failed (its
 * forward or backward returned an error): joins the step's reductions
 * without contributing, so the other ranks do not hang; their sync returns
 * AG_DIST_ERR_PEER and nobody's gradients change.
 * @return AG_OK (the step is over); AG_DIST_ERR_TIMEOUT (pending, as for
 *         sync; call skip_step again); AG_ERR_INVALID_ARGUMENT;
 *         AG_DIST_ERR_COMM; AG_ERR_OUT_OF_MEMORY.
 */
AG_DIST_API ag_status ag_dist_ddp_skip_step(ag_dist_ddp *ddp) AG_NOEXCEPT;

/** Number of buckets of `ddp`; -1 for NULL or an invalid handle. */
AG_DIST_API int32_t ag_dist_ddp_num_buckets(const ag_dist_ddp *ddp) AG_NOEXCEPT;

AG_END_DECLS

#endif /* AG_DIST_H */
