/*
 * ag/autograd.h - gradient recording and the backward pass.
 *
 * While grad mode is on (per thread, on by default), an op whose input
 * requires grad records a node in the graph; its output then requires grad
 * and is not a leaf. ag_backward walks the graph from a root and sums
 * gradients into the leaves that require grad (their .grad).
 *
 * Threading: backward runs on the calling thread inside the context's arena.
 * Two threads may run backward on different graphs, also when they share
 * leaves; one graph must not be the target of two concurrent backward calls.
 */
#ifndef AG_AUTOGRAD_H
#define AG_AUTOGRAD_H

#include "ag/common.h"
#include "ag/tensor.h"

AG_BEGIN_DECLS

/**
 * Mark a leaf as requiring grad (1) or not (0).
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL or invalid t); AG_ERR_DTYPE
 *         (requires_grad on a non-floating tensor); AG_ERR_GRAPH (t is not a
 *         leaf: it was produced by a recorded op; detach it first).
 */
AG_API ag_status ag_tensor_requires_grad(ag_tensor *t, int32_t requires_grad) AG_NOEXCEPT;

/** 1 if `t` requires grad (a marked leaf, or the output of a recorded op), else 0 (also for NULL). */
AG_API int32_t ag_tensor_get_requires_grad(const ag_tensor *t) AG_NOEXCEPT;

/** 1 if `t` is a leaf (not produced by a recorded op), else 0 (also for NULL). */
AG_API int32_t ag_tensor_is_leaf(const ag_tensor *t) AG_NOEXCEPT;

/**
 * The gradient accumulated into leaf `t`.
 * @param[out] out  a new reference to the gradient (caller releases), or NULL
 *                  with AG_OK when there is none (never reached, no
 *                  requires_grad, or not a leaf). The handle is a snapshot:
 *                  later backward calls accumulate into a new buffer.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL out, NULL or invalid t).
 */
AG_API ag_status ag_tensor_grad(ag_tensor **out, const ag_tensor *t) AG_NOEXCEPT;

/**
 * Replace the gradient of leaf `t`: NULL sets it back to none (so the next
 * backward starts afresh), otherwise `grad` (same shape, dtype and context;
 * it is shared, not copied) becomes the gradient.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT; AG_ERR_SHAPE; AG_ERR_DTYPE;
 *         AG_ERR_CONTEXT; AG_ERR_GRAPH (t is not a leaf).
 */
AG_API ag_status ag_tensor_set_grad(ag_tensor *t, const ag_tensor *grad) AG_NOEXCEPT;

/**
 * A new tensor sharing the data (and version counter) of `t`, outside any
 * graph: a leaf that does not require grad.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT; AG_ERR_OUT_OF_MEMORY.
 */
AG_API ag_status ag_tensor_detach(ag_tensor **out, const ag_tensor *t) AG_NOEXCEPT;

/**
 * Name of the node that produced `t` ("MulBackward", "TanhBackward", ...),
 * "AccumulateGrad" for a leaf that requires grad, NULL for a tensor outside
 * any graph (or NULL/invalid t). Static string.
 */
AG_API const char *ag_tensor_grad_fn_name(const ag_tensor *t) AG_NOEXCEPT;

/** Options of ag_backward. Append-only; struct_size first (see ag_context_options). */
typedef struct ag_backward_options {
  uint32_t struct_size;
  /* Keep saved tensors after the pass so the graph can be walked again. */
  int32_t retain_graph;
  /* Record the backward pass itself, so gradients can be differentiated
   * again (implies retain_graph). A leaf's gradient then refers to the graph
   * that produced it, which refers back to the leaf (as in PyTorch): set the
   * gradient back to none (ag_tensor_set_grad(leaf, NULL)) before releasing
   * the leaf, or neither is freed. */
  int32_t create_graph;
} ag_backward_options;

#define AG_BACKWARD_OPTIONS_INIT {(uint32_t)sizeof(ag_backward_options), 0, 0}

/** Fill `opts` with the defaults (same bytes as AG_BACKWARD_OPTIONS_INIT). AG_ERR_INVALID_ARGUMENT for NULL. */
AG_API ag_status ag_backward_options_init(ag_backward_options *opts) AG_NOEXCEPT;

/**
 * Compute the gradient of `root` with respect to every leaf that requires grad
 * and add it to the leaf's gradient.
 * @param root       a tensor that requires grad.
 * @param grad_root  the gradient of some scalar with respect to root (same
 *                   shape, dtype, context); NULL seeds 1, which needs a root
 *                   with exactly one element (any ndim).
 * @param opts       NULL for defaults.
 * @return AG_OK;
 *   AG_ERR_INVALID_ARGUMENT (NULL or invalid root, bad struct_size);
 *   AG_ERR_GRAPH (root requires no grad; graph released by an earlier
 *     backward without retain_graph: the message names the node);
 *   AG_ERR_SHAPE (NULL grad_root for a root with numel != 1; grad_root of
 *     another shape); AG_ERR_DTYPE; AG_ERR_CONTEXT;
 *   AG_ERR_VERSION (a tensor saved by a node was modified after it was saved;
 *     the message names the node and both versions);
 *   AG_ERR_OUT_OF_MEMORY.
 * Errors found before any node runs change nothing. A failure inside the pass
 * leaves the gradients that were already accumulated (as PyTorch does); the
 * message says the pass was interrupted and at which node.
 */
AG_API ag_status ag_backward(ag_tensor *root, const ag_tensor *grad_root,
                             const ag_backward_options *opts) AG_NOEXCEPT;

/**
 * Turn grad mode on (1) or off (0) for the calling thread; with it off, ops
 * record nothing (inference, optimizer updates). New threads start with it on.
 * @param previous  receives the mode before the call; may be NULL.
 * @return AG_OK.
 */
AG_API ag_status ag_grad_mode_set(int32_t enabled, int32_t *previous) AG_NOEXCEPT;

/** 1 if grad mode is on for the calling thread, else 0. */
AG_API int32_t ag_grad_mode_enabled(void) AG_NOEXCEPT;

AG_END_DECLS

#endif /* AG_AUTOGRAD_H */
