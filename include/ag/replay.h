/*
 * ag/replay.h - record a forward and backward once, replay it many times:
 * for simulation and training steps that run the same fixed-topology graph
 * every frame (PyTorch's CUDA graphs, on the CPU).
 *
 *   ag_graph_record_begin(ctx);
 *   ... ops on leaves x, w (no .grad yet), ag_backward(loss, NULL, NULL) ...
 *   ag_graph *g;  ag_graph_record_end(&g);
 *   each frame:  ag_tensor_copy_from(x, new_values, bytes);   (or pass them
 *                ag_graph_replay(g, 0, NULL, NULL);            to replay)
 *                read loss, x's and w's .grad
 *   ag_graph_release(g);
 *
 * Recording runs the calls as usual (they return their results, the
 * backward fills .grad) and also records, per kernel the ops and the backward
 * nodes ran, a call over the same buffers. Replay runs those kernel calls
 * again in the recorded order: no allocation, no graph node, no argument
 * checks. Its results are bitwise those of running the recorded calls again
 * eagerly on the new values, written into the same tensors: every tensor the
 * recording returned (outputs such as the loss, intermediates) is rewritten
 * in place, and so are the .grad of the leaves the backward reached.
 *
 * Gradients: replay overwrites .grad (as PyTorch code that calls
 * zero_grad(set_to_none=True) before each step would see); it does not
 * accumulate across replays. A leaf reached by a recorded backward must have
 * no .grad when the recording starts. Replay sets each such leaf's .grad
 * back to the recorded gradient tensor (a handle taken earlier sees the new
 * values: the buffers are the graph's).
 *
 * What cannot be recorded fails, with AG_ERR_UNSUPPORTED and a message
 * naming the call or node, and so does ag_graph_record_end then (until it,
 * later ops fail before they run, other calls such as releases work): ops that
 * draw random numbers (ag_op_rand ... ag_op_dropout), in-place ops and
 * writes into existing tensors (ag_op_add_, ag_tensor_copy_from, optimizer
 * steps), custom functions, hooks and retain_grad, budgeted backward jobs,
 * and any op whose kernels are not replayable yet (the elementwise ops of
 * one and two inputs with broadcasting, sum and mean (all and over dims),
 * sum_to_size, matmul and linear, softmax, log_softmax and cross_entropy
 * are; data-dependent shapes such as nonzero never are). Tensors the host
 * creates while recording (ag_tensor_create, ag_tensor_full, ...) are
 * constants: replay keeps their values. Host code between the calls is not
 * recorded: values read while recording (ag_tensor_item) must not steer
 * which calls follow. Values are not checked again on replay: class
 * indices of cross_entropy out of range add nothing, and targets that all
 * become ignore_index give a loss of 0 instead of NaN (recording refuses
 * that case).
 *
 * Lifetime: a graph keeps alive every tensor its kernels read or write
 * (leaves, constants, intermediates, gradients) and the context; the caller
 * may release all its handles. Memory: every intermediate of the recorded
 * pass stays allocated (no reuse between ops).
 *
 * Threads: recording is per thread (ops of other threads are not recorded;
 * the recorded backward runs its nodes on the calling thread). A graph is
 * replayed by one thread at a time (a concurrent replay fails with
 * AG_ERR_INVALID_ARGUMENT); the context's threads still split each kernel.
 * Replaying while another thread uses the graph's tensors is a data race.
 */
#ifndef AG_REPLAY_H
#define AG_REPLAY_H

#include "ag/common.h"
#include "ag/context.h"
#include "ag/tensor.h"

AG_BEGIN_DECLS

/** Opaque handle of a recorded forward and backward. */
typedef struct ag_graph ag_graph;

/**
 * Start recording the ops, backward passes and gradient accumulations that
 * the calling thread runs on tensors of `ctx`, until ag_graph_record_end.
 * @param ctx  the context of the recorded tensors.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL or invalid ctx, the thread
 *   records already).
 * Thread-safe (each thread records on its own).
 */
AG_API ag_status ag_graph_record_begin(ag_context *ctx) AG_NOEXCEPT;

/**
 * Stop recording on the calling thread and hand out what was recorded.
 * @param[out] graph  the new graph, released with ag_graph_release; NULL
 *   on failure.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL graph, the thread does not
 *   record); the status and message of the first call refused while
 *   recording (AG_ERR_UNSUPPORTED, AG_ERR_GRAPH): no graph then. The
 *   recording ends whatever the status.
 */
AG_API ag_status ag_graph_record_end(ag_graph **graph) AG_NOEXCEPT;

/**
 * Replay the recorded kernels. First copies values[i] into leaves[i] for
 * each i < n (all checked before any is written: same context, dtype and
 * shape); then runs the kernels and sets the recorded leaves' .grad.
 * @param n       number of leaves to give new values (0: none).
 * @param leaves  n tensors to overwrite (usually the graph's leaves); may be
 *                NULL when n is 0.
 * @param values  n tensors with the new values; may be NULL when n is 0.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL or invalid graph or tensors,
 *   n < 0, a replay of the graph running on another thread, a replay while
 *   the thread records); AG_ERR_DTYPE, AG_ERR_SHAPE, AG_ERR_CONTEXT (a
 *   value that does not fit its leaf: nothing was written);
 *   AG_ERR_UNSUPPORTED (a read-only or aliasing leaf).
 * Not thread-safe for one graph (see the header comment).
 */
AG_API ag_status ag_graph_replay(ag_graph *graph, int32_t n, ag_tensor *const *leaves,
                                 const ag_tensor *const *values) AG_NOEXCEPT;

/**
 * Number of kernel calls one replay makes.
 * @return the count; -1 for a NULL or invalid graph.
 */
AG_API int64_t ag_graph_num_steps(const ag_graph *graph) AG_NOEXCEPT;

/**
 * Release the graph and what it keeps alive (not while it is replayed).
 * NULL is ignored.
 */
AG_API void ag_graph_release(ag_graph *graph) AG_NOEXCEPT;

AG_END_DECLS

#endif /* AG_REPLAY_H */
