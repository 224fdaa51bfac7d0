/*
 * ag/budget.h - a backward pass spread over several calls, so a game or
 * simulation can compute a large gradient across frames:
 *
 *   ag_backward_job *job;
 *   ag_backward_begin(&job, loss, NULL, NULL);       (walks the graph once)
 *   each frame:  int32_t done;
 *                ag_backward_step(job, 0, 2000000, &done);   (about 2 ms)
 *                if (done) ag_backward_end(job);             (gradients land)
 *   or at any time:  ag_backward_cancel(job);               (nothing lands)
 *
 * The gradients are bitwise those of one ag_backward with the same root,
 * grad_root and options: the nodes run in the same order with the same
 * sums, only at other times.
 *
 * What lands when: a job buffers what a backward would write into tensors
 * that the caller can see. The leaves' .grad (their AccumulateGrad nodes),
 * the retained gradients of non-leaves (ag_tensor_retain_grad) and the
 * .grad of non-leaf inputs (opts->inputs) are summed in by ag_backward_end,
 * which then runs the post-accumulate-grad hooks and the callbacks queued
 * during the pass. Tensor hooks and node pre/post hooks run during the step
 * that runs their node (they may see a leaf's .grad from before the job).
 * ag_backward_cancel, a failed step, and an ag_backward_end whose remaining
 * nodes fail leave every .grad untouched. The buffered leaf gradients cost
 * memory until the end: one gradient per leaf reached.
 *
 * The graph while a job holds it: the job keeps every node and saved tensor
 * it needs alive, so the caller may release root, grad_root, inputs and the
 * context handle right after ag_backward_begin. A backward, ag_grad or job
 * through a node the job holds (leaves' AccumulateGrad excepted: graphs may
 * share leaves) fails with AG_ERR_GRAPH until the job ends or is cancelled.
 * Writing in place into a tensor that a node saved makes the step that runs
 * the node fail with AG_ERR_VERSION (as ag_backward would). While any job is
 * open, other backward passes in the process keep their bookkeeping in a
 * hash map instead of the nodes' slots (a few per cent slower).
 *
 * Threads: a job is used by one thread at a time; successive calls may come
 * from different threads (a host job system), ordered by the host. Hooks
 * and custom functions run on the thread of the call that runs their node;
 * grad mode is set to create_graph during each call and restored after.
 * Independent expensive nodes may still run in the context's arena.
 */
#ifndef AG_BUDGET_H
#define AG_BUDGET_H

#include "ag/autograd.h"
#include "ag/common.h"
#include "ag/tensor.h"

AG_BEGIN_DECLS

/** Opaque handle of a backward pass in progress. */
typedef struct ag_backward_job ag_backward_job;

/**
 * Start a backward pass of `root` that runs in ag_backward_step calls.
 * Checks what ag_backward checks and walks the graph once (counting each
 * node's dependencies, some 20 ns per node); runs no node.
 * @param[out] job   the new job; the caller owns it and must pass it to
 *                   ag_backward_end or ag_backward_cancel exactly once.
 * @param root       as for ag_backward.
 * @param grad_root  as for ag_backward; may be NULL.
 * @param opts       as for ag_backward; NULL for defaults.
 * @return AG_OK; the errors of ag_backward found before any node runs;
 *   AG_ERR_GRAPH also when a node of the graph is held by another job.
 * Thread-safe.
 */
AG_API ag_status ag_backward_begin(ag_backward_job **job, ag_tensor *root, const ag_tensor *grad_root,
                                   const ag_backward_options *opts) AG_NOEXCEPT;

/**
 * Run nodes of the job until none is left or a limit is reached: after
 * `max_nodes` nodes (0 = no limit), or once `max_ns` nanoseconds passed
 * since the call began (0 = no limit). The clock is read after each node,
 * or every few nodes while nodes take well under a microsecond (reads some
 * 1 to 4 us apart), so a step overruns by about that much or one node.
 * At least one node runs per call while any is left; independent expensive
 * nodes gathered to run side by side count as one batch.
 * @param done  receives 1 when every node has run (the job waits for
 *              ag_backward_end), else 0; may be NULL.
 * @return AG_OK (also for a job already done: nothing runs);
 *   AG_ERR_INVALID_ARGUMENT (NULL or invalid job, negative limits);
 *   the errors of a node, as for ag_backward (AG_ERR_VERSION, AG_ERR_GRAPH,
 *   AG_ERR_CALLBACK, AG_ERR_OUT_OF_MEMORY): the job has then failed, every
 *   later step and ag_backward_end return the same status, and no .grad
 *   changed. Not thread-safe for one job (see the header comment).
 */
AG_API ag_status ag_backward_step(ag_backward_job *job, int64_t max_nodes, int64_t max_ns,
                                  int32_t *done) AG_NOEXCEPT;

/**
 * Finish the job: run whatever nodes remain (without a budget), sum the
 * buffered gradients into their tensors' .grad, run the post-accumulate-grad
 * hooks and queued callbacks, and release the job and everything it holds.
 * The `job` handle is invalid afterwards, whatever the status.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL or invalid job); the status
 *   of a step that failed earlier, or of a node that fails now (no .grad
 *   changed); AG_ERR_CALLBACK from a post-accumulate hook or callback (as in
 *   ag_backward, the gradients summed before it stay).
 */
AG_API ag_status ag_backward_end(ag_backward_job *job) AG_NOEXCEPT;

/**
 * Abandon the job: release it and everything it holds without touching any
 * .grad; no hook or callback runs. Saved tensors of nodes that already ran
 * are gone unless retain_graph was set (a later backward through the graph
 * then fails with AG_ERR_GRAPH, naming the node). The `job` handle is
 * invalid afterwards.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL or invalid job).
 */
AG_API ag_status ag_backward_cancel(ag_backward_job *job) AG_NOEXCEPT;

AG_END_DECLS

#endif /* AG_BUDGET_H */
