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
 * Mark a leaf as requiring grad (1) or not (0). A leaf that no longer
 * requires grad receives no gradient, also from graphs recorded before.
 * Needs exclusive use of t: no other thread may use t meanwhile, nor run a
 * backward through a graph that reached it (the flag is read there).
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
 *                  requires_grad, or a non-leaf without retain_grad). The handle is a snapshot:
 *                  later backward calls accumulate into a new buffer.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL out, NULL or invalid t).
 *
 * Why NULL: ag_tensor_get_requires_grad(t) == 0: no gradient is tracked for
 * t; ag_tensor_is_leaf(t) == 0 and ag_tensor_retains_grad(t) == 0: t is an
 * intermediate result, whose gradient is not kept unless
 * ag_tensor_retain_grad(t) was called before backward (or use ag_grad, which
 * returns gradients of any tensor); otherwise no backward reached t yet.
 */
AG_API ag_status ag_tensor_grad(ag_tensor **out, const ag_tensor *t) AG_NOEXCEPT;

/**
 * Replace the gradient of leaf `t` (or of a non-leaf that retains it or holds
 * one because a backward listed it in its inputs): NULL
 * sets it back to none (so the next backward starts afresh), otherwise
 * `grad` (same shape, dtype and context; it is shared, not copied) becomes
 * the gradient.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (also for `grad` == `t`, which
 *         would own itself); AG_ERR_SHAPE; AG_ERR_DTYPE;
 *         AG_ERR_CONTEXT; AG_ERR_GRAPH (t is a non-leaf that neither retains
 *         its gradient nor holds one).
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
 * any graph (or NULL/invalid t). Static string; for a custom function
 * (ag/function.h) its def->name, valid while t lives.
 */
AG_API const char *ag_tensor_grad_fn_name(const ag_tensor *t) AG_NOEXCEPT;

/** Options of ag_backward. Append-only; struct_size first (see ag_context_options). */
typedef struct ag_backward_options {
  uint32_t struct_size;
  /* Keep saved tensors after the pass so the graph can be walked again. A
   * second backward through a released graph fails with AG_ERR_GRAPH naming
   * the first node whose saved tensors are gone (a graph whose nodes saved
   * nothing, such as sums only, can be walked again, as in PyTorch). */
  int32_t retain_graph;
  /* Record the backward pass itself, so gradients can be differentiated
   * again, to any order (implies retain_graph). A leaf's gradient then has a
   * graph of its own; it refers to the leaf only weakly, so releasing the
   * leaf and its gradient in any order frees both. */
  int32_t create_graph;
  /* If num_inputs > 0: only the gradients of inputs[0..num_inputs) are
   * computed and accumulated (into .grad, for leaves and non-leaves alike);
   * no other leaf's gradient changes, and only the nodes on a path from the
   * root to an input run. Each input must require grad. A non-leaf's
   * gradient recorded under create_graph may refer back to it (as with
   * ag_tensor_retain_grad): clear it with ag_tensor_set_grad(t, NULL) before
   * releasing t. */
  int32_t num_inputs;
  const ag_tensor *const *inputs;
} ag_backward_options;

#define AG_BACKWARD_OPTIONS_INIT {(uint32_t)sizeof(ag_backward_options), 0, 0, 0, NULL}

/** Fill `opts` with the defaults (same bytes as AG_BACKWARD_OPTIONS_INIT). AG_ERR_INVALID_ARGUMENT for NULL. */
AG_API ag_status ag_backward_options_init(ag_backward_options *opts) AG_NOEXCEPT;

/**
 * Compute the gradient of `root` with respect to every leaf that requires grad
 * (or the inputs listed in opts) and add it to the leaf's gradient.
 * @param root       a tensor that requires grad.
 * @param grad_root  the gradient of some scalar with respect to root (same
 *                   shape, dtype, context); NULL seeds 1, which needs a root
 *                   with exactly one element (any ndim).
 * @param opts       NULL for defaults.
 * @return AG_OK;
 *   AG_ERR_INVALID_ARGUMENT (NULL or invalid root or input, bad struct_size,
 *     num_inputs < 0, NULL inputs with num_inputs > 0);
 *   AG_ERR_GRAPH (root or an input requires no grad; graph released by an
 *     earlier backward without retain_graph: the message names the node);
 *   AG_ERR_SHAPE (NULL grad_root for a root with numel != 1; grad_root of
 *     another shape); AG_ERR_DTYPE; AG_ERR_CONTEXT;
 *   AG_ERR_VERSION (a tensor saved by a node was modified after it was saved;
 *     the message names the node, the tensor's tag and both versions);
 *   AG_ERR_CALLBACK (a hook, a queued callback or a custom function failed:
 *     the message carries the callback's own message);
 *   AG_ERR_OUT_OF_MEMORY.
 * Errors found before any node runs change nothing. A failure inside the pass
 * leaves the gradients that were already accumulated (as PyTorch does); the
 * message says the pass was interrupted and at which node.
 * Hooks and custom functions run on the calling thread, during the call.
 * In a context with num_threads > 1 (and without create_graph), independent
 * expensive nodes may run at once in the context's arena; the gradients have
 * the same bits as with one thread.
 */
AG_API ag_status ag_backward(ag_tensor *root, const ag_tensor *grad_root,
                             const ag_backward_options *opts) AG_NOEXCEPT;

/** Options of ag_grad. Append-only; struct_size first. */
typedef struct ag_grad_options {
  uint32_t struct_size;
  /* As in ag_backward_options. */
  int32_t retain_graph;
  int32_t create_graph;
  /* 1: an input no gradient reaches gets NULL; 0: that is AG_ERR_GRAPH. */
  int32_t allow_unused;
} ag_grad_options;

#define AG_GRAD_OPTIONS_INIT {(uint32_t)sizeof(ag_grad_options), 0, 0, 0}

/** Fill `opts` with the defaults (same bytes as AG_GRAD_OPTIONS_INIT). AG_ERR_INVALID_ARGUMENT for NULL. */
AG_API ag_status ag_grad_options_init(ag_grad_options *opts) AG_NOEXCEPT;

/**
 * The gradients of the sum of outputs[i] * grad_outputs[i] with respect to
 * each of inputs, returned instead of accumulated: no tensor's .grad changes
 * (torch.autograd.grad).
 * @param[out] grads  array of num_inputs entries; on AG_OK each holds a new
 *                    reference (caller releases), or NULL for an input no
 *                    gradient reached when allow_unused is set. Untouched
 *                    on failure.
 * @param outputs       num_outputs (>= 1) tensors that require grad.
 * @param grad_outputs  NULL, or num_outputs entries; a NULL entry seeds 1 and
 *                      needs an output with one element; otherwise the same
 *                      shape, dtype and context as the output.
 * @param inputs        num_inputs (>= 1) tensors that require grad, leaves
 *                      or not, of the outputs' context.
 * @param opts          NULL for defaults.
 * With create_graph, the returned gradients are recorded and can be
 * differentiated again (Hessian-vector products, gradient penalties).
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL grads/outputs/inputs, counts
 *   < 1, invalid handles, bad struct_size); AG_ERR_GRAPH (an output or input
 *   requires no grad; an input unreachable without allow_unused; released
 *   graph, naming the node); AG_ERR_SHAPE; AG_ERR_DTYPE; AG_ERR_CONTEXT;
 *   AG_ERR_VERSION; AG_ERR_CALLBACK; AG_ERR_OUT_OF_MEMORY.
 */
AG_API ag_status ag_grad(ag_tensor **grads, const ag_tensor *const *outputs, const ag_tensor *const *grad_outputs,
                         int32_t num_outputs, const ag_tensor *const *inputs, int32_t num_inputs,
                         const ag_grad_options *opts) AG_NOEXCEPT;

/**
 * Give `t` a tag (a name, copied; NULL removes it) that error messages use,
 * e.g. AG_ERR_VERSION: "... the tensor 'w1' of shape (3) that this node saved
 * was modified ...". A node that saved t shows the tag t had when it was
 * saved. Needs exclusive use of t.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL or invalid t); AG_ERR_OUT_OF_MEMORY.
 */
AG_API ag_status ag_tensor_set_tag(ag_tensor *t, const char *tag) AG_NOEXCEPT;

/** The tag of `t`, or NULL (none, NULL or invalid t). Borrowed: valid until the tag changes or t is released. */
AG_API const char *ag_tensor_tag(const ag_tensor *t) AG_NOEXCEPT;

/**
 * Keep the gradient of a non-leaf `t` in its .grad during later backward
 * calls (read it with ag_tensor_grad; it accumulates like a leaf's). A no-op
 * for a leaf. A kept gradient recorded under create_graph may refer back to
 * t (as in PyTorch): clear it with ag_tensor_set_grad(t, NULL) before
 * releasing t.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL or invalid t); AG_ERR_GRAPH
 *         (t requires no grad).
 */
AG_API ag_status ag_tensor_retain_grad(ag_tensor *t) AG_NOEXCEPT;

/** 1 if `t` is a non-leaf that retains its gradient, else 0 (also for NULL). */
AG_API int32_t ag_tensor_retains_grad(const ag_tensor *t) AG_NOEXCEPT;

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
