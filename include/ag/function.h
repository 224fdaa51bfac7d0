/*
 * ag/function.h - custom differentiable functions defined by C callbacks
 * (torch.autograd.Function for any language).
 *
 * A function is a forward and a backward callback. ag_function_apply runs
 * forward on the inputs with grad mode off; when grad mode is on and an input
 * requires grad, the outputs get a node in the graph whose backward calls the
 * backward callback. The callbacks talk to the engine through a context
 * handle (ag_function_ctx), valid only during the callback it was passed to:
 *   forward:  ag_function_ctx_save_for_backward, ag_function_ctx_mark_dirty,
 *             ag_function_ctx_mark_non_differentiable, ..._needs_input_grad;
 *   backward: ag_function_ctx_saved_tensor, ..._needs_input_grad.
 *
 * Ownership in callbacks: tensors passed in (inputs, grad_outputs) are
 * borrowed; tensors written to out arrays (outputs, grad_inputs) are new
 * references that ag takes over. A callback fails by returning a status
 * other than AG_OK, after ag_set_callback_error(message) (ag/hooks.h) to give
 * its reason; the caller of ag_function_apply or ag_backward then gets
 * AG_ERR_CALLBACK with "<name> forward/backward failed (<status>): <message>".
 * ag checks what the callbacks return: outputs must be live tensors of the
 * inputs' context; a gradient must have the dtype and shape of its input.
 *
 * Backward runs on the thread that called ag_backward / ag_grad. Under
 * create_graph it runs with grad mode on, so a backward written with ag ops
 * is itself differentiable (double backward), unless the function is
 * AG_FUNCTION_ONCE_DIFFERENTIABLE: then it runs with grad mode off and
 * differentiating its result again fails with AG_ERR_GRAPH naming it.
 */
#ifndef AG_FUNCTION_H
#define AG_FUNCTION_H

#include "ag/common.h"
#include "ag/hooks.h"
#include "ag/tensor.h"

AG_BEGIN_DECLS

typedef struct ag_function_ctx ag_function_ctx;

/**
 * Forward: compute outputs[0..num_outputs) (new references, every entry
 * must be set) from inputs[0..num_inputs) (borrowed). Runs with grad mode off.
 * An output may be an input modified in place: write the input's handle
 * (retained) and call ag_function_ctx_mark_dirty on it.
 */
typedef ag_status (*ag_function_forward_fn)(void *user_data, ag_function_ctx *ctx, const ag_tensor *const *inputs,
                                            int32_t num_inputs, ag_tensor **outputs, int32_t num_outputs);

/**
 * Backward: given grad_outputs[0..num_outputs) (borrowed; a gradient that did
 * not flow is passed as zeros), write grad_inputs[0..num_inputs) (each starts
 * NULL; NULL means no gradient; entries for inputs that do not need a
 * gradient are ignored and released).
 */
typedef ag_status (*ag_function_backward_fn)(void *user_data, ag_function_ctx *ctx,
                                             const ag_tensor *const *grad_outputs, int32_t num_outputs,
                                             ag_tensor **grad_inputs, int32_t num_inputs);

/* Flags of ag_function_def. */
#define AG_FUNCTION_ONCE_DIFFERENTIABLE 1 /* backward is not differentiable itself */

/** Definition of a custom function. Append-only; struct_size first. */
typedef struct ag_function_def {
  uint32_t struct_size;
  int32_t flags;            /* AG_FUNCTION_* bits */
  const char *name;         /* node name ("MyOpBackward"), copied; NULL gives "CustomFunctionBackward" */
  ag_function_forward_fn forward;
  ag_function_backward_fn backward;
  void *user_data;          /* passed to both callbacks */
  ag_destroy_fn destroy;    /* called with user_data exactly once, when neither call nor node needs it */
} ag_function_def;

#define AG_FUNCTION_DEF_INIT {(uint32_t)sizeof(ag_function_def), 0, NULL, NULL, NULL, NULL, NULL}

/** Fill `def` with the defaults (same bytes as AG_FUNCTION_DEF_INIT). AG_ERR_INVALID_ARGUMENT for NULL. */
AG_API ag_status ag_function_def_init(ag_function_def *def) AG_NOEXCEPT;

/**
 * Apply a custom function.
 * @param[out] outputs  array of num_outputs (>= 1) entries, new references on
 *                      AG_OK, untouched on failure.
 * @param inputs        num_inputs (>= 0) live tensors of one context.
 * @param def           forward and backward must be set. def->destroy runs
 *                      exactly once on every path: at once if the call fails
 *                      or records no node, else when the node is freed.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL outputs/def/callback, counts,
 *   invalid inputs, bad struct_size); AG_ERR_CONTEXT (inputs or outputs of
 *   several contexts); AG_ERR_GRAPH (mark_dirty on a leaf that requires
 *   grad); AG_ERR_CALLBACK (forward failed, or returned a NULL or dead output,
 *   marked a tensor that is no output / input); AG_ERR_OUT_OF_MEMORY.
 */
AG_API ag_status ag_function_apply(ag_tensor **outputs, int32_t num_outputs, const ag_tensor *const *inputs,
                                   int32_t num_inputs, const ag_function_def *def) AG_NOEXCEPT;

/**
 * Forward only: keep tensors (inputs, outputs or others; NULL entries are
 * kept as NULL) for backward. The engine records their versions: modifying
 * one before backward makes backward fail with AG_ERR_VERSION. Saving an
 * output makes no reference cycle. A second call replaces the list.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (invalid ctx or tensor, n < 0, not
 *         in forward).
 */
AG_API ag_status ag_function_ctx_save_for_backward(ag_function_ctx *ctx, const ag_tensor *const *tensors,
                                                   int32_t n) AG_NOEXCEPT;

/** Number of tensors saved; -1 for an invalid or inactive ctx. */
AG_API int32_t ag_function_ctx_num_saved(const ag_function_ctx *ctx) AG_NOEXCEPT;

/**
 * Backward only: a new reference to saved tensor `index` (NULL with AG_OK if
 * NULL was saved).
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL out, invalid ctx, index out of
 *         range, not in backward); AG_ERR_VERSION (modified since saved: the
 *         message names the function and both versions); AG_ERR_GRAPH (freed
 *         by an earlier backward without retain_graph).
 */
AG_API ag_status ag_function_ctx_saved_tensor(ag_tensor **out, ag_function_ctx *ctx, int32_t index) AG_NOEXCEPT;

/** 1 if input `index` needs a gradient, 0 if not (also for an invalid ctx or index). */
AG_API int32_t ag_function_ctx_needs_input_grad(const ag_function_ctx *ctx, int32_t index) AG_NOEXCEPT;

/**
 * Forward only: `output` (an output, by handle) gets no gradient: it does not
 * require grad, and backward receives zeros for it.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (invalid ctx or tensor, not in forward).
 *         A tensor that is not returned as an output fails the apply with AG_ERR_CALLBACK.
 */
AG_API ag_status ag_function_ctx_mark_non_differentiable(ag_function_ctx *ctx, const ag_tensor *output) AG_NOEXCEPT;

/**
 * Forward only: `input` was modified in place and is returned as an output.
 * Its version is bumped and, when a node is recorded, its history continues
 * through this function (its grad_fn becomes the function's node).
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (invalid ctx or tensor, not in
 *         forward); AG_ERR_UNSUPPORTED (a read-only tensor, ag/interop.h).
 *         An input marked dirty but not returned fails the apply
 *         with AG_ERR_CALLBACK; a leaf that requires grad (grad mode on) with
 *         AG_ERR_GRAPH.
 */
AG_API ag_status ag_function_ctx_mark_dirty(ag_function_ctx *ctx, const ag_tensor *input) AG_NOEXCEPT;

AG_END_DECLS

#endif /* AG_FUNCTION_H */
