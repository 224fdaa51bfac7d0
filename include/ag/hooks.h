/*
 * ag/hooks.h - callbacks that run during backward: tensor hooks, hooks after
 * a leaf's gradient was accumulated, node pre- and post-hooks, and callbacks
 * queued to run once the current backward finished.
 *
 * Registration. Every registration takes (fn, user_data, destroy). `destroy`
 * (may be NULL) is called with user_data exactly once on every path: at once
 * when the registration fails; otherwise when the hook is removed, or its
 * tensor's node is freed, and no handle to it remains (a pass running the
 * hook at that moment delays it to the end of the hook). It runs on the
 * thread that lets go last, and must not call ag functions on a tensor
 * being freed.
 *
 * Handles. A registration may hand out an ag_hook handle (pass NULL for `out`
 * to keep the hook for the life of its tensor or node). ag_hook_remove
 * unregisters the hook and releases the handle; ag_hook_release only
 * releases the handle (the hook stays). Each handle is released exactly once,
 * by one of the two; a second call is detected, ignored and
 * recorded as the thread's last error.
 *
 * Running. Hooks run on the thread that called ag_backward / ag_grad, during
 * that call, with no lock of ag held: they may call any ag function (ops,
 * ag_tensor_grad, ...). Tensors passed to a hook are borrowed for the call:
 * do not release them; retain to keep one. A hook reports failure by
 * returning a status other than AG_OK, after ag_set_callback_error(message)
 * if it wants its own message to reach the caller: the pass then stops with
 * AG_ERR_CALLBACK and "... <hook kind> failed (<status name>): <message>".
 * Gradients a hook hands back are checked (dtype and shape) before use.
 *
 * Thread-safety: registering and removing hooks on one tensor from several
 * threads is safe; a hook removed while a pass runs may still run once in it.
 */
#ifndef AG_HOOKS_H
#define AG_HOOKS_H

#include "ag/common.h"
#include "ag/tensor.h"

AG_BEGIN_DECLS

typedef struct ag_hook ag_hook;

/** Called with user_data exactly once when a registration ends (see above). */
typedef void (*ag_destroy_fn)(void *user_data);

/**
 * Tensor hook: sees the gradient flowing into a tensor (borrowed) before it
 * is used. To replace it, store a new reference (same dtype and shape) into
 * *replacement, which starts as NULL; ag takes that reference over.
 */
typedef ag_status (*ag_tensor_hook_fn)(void *user_data, const ag_tensor *grad, ag_tensor **replacement);

/** Post-accumulate-grad hook: the leaf (borrowed) after its .grad was updated. */
typedef ag_status (*ag_leaf_hook_fn)(void *user_data, ag_tensor *leaf);

/**
 * Node hook. Pre-hook: grads[0..num_grads) are the gradients flowing into the
 * node (one per output of the forward op; NULL where none flows), other is
 * NULL and num_other 0. Post-hook: grads are the gradients the node produced
 * (one per input of the forward op; NULL where none), other the gradients it
 * received. Entries of grads are borrowed; to replace one, overwrite it with
 * a new reference (ag takes it over; do not release the old one), or with
 * NULL to drop that gradient.
 */
typedef ag_status (*ag_node_hook_fn)(void *user_data, ag_tensor **grads, int32_t num_grads,
                                     const ag_tensor *const *other, int32_t num_other);

/** Final callback of a backward pass. */
typedef ag_status (*ag_callback_fn)(void *user_data);

/**
 * Register a hook on the gradient of `t` (a leaf that requires grad, or a
 * non-leaf). For a leaf it runs before the gradient is accumulated (and
 * before ag_grad returns it); for a non-leaf, before the node that produced
 * t uses it. Hooks of one tensor run in registration order.
 * @param[out] out  a new hook handle, or NULL to keep no handle.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL or invalid t, NULL fn);
 *         AG_ERR_GRAPH (t requires no grad); AG_ERR_OUT_OF_MEMORY.
 *         destroy has run when this fails.
 */
AG_API ag_status ag_tensor_register_hook(ag_hook **out, ag_tensor *t, ag_tensor_hook_fn fn, void *user_data,
                                         ag_destroy_fn destroy) AG_NOEXCEPT;

/**
 * Register a hook that runs after a backward pass accumulated into the .grad
 * of leaf `t` (each time it does), e.g. to start an all-reduce of that
 * gradient while the rest of backward still runs.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT; AG_ERR_GRAPH (t is not a leaf that
 *         requires grad); AG_ERR_OUT_OF_MEMORY. destroy has run on failure.
 */
AG_API ag_status ag_tensor_register_post_accumulate_grad_hook(ag_hook **out, ag_tensor *t, ag_leaf_hook_fn fn,
                                                              void *user_data, ag_destroy_fn destroy) AG_NOEXCEPT;

/**
 * Register a pre-hook (runs before) or a post-hook (runs after) on the node
 * that produced `t` (its AccumulateGrad for a leaf that requires grad; see
 * ag_tensor_grad_fn_name).
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT; AG_ERR_GRAPH (t requires no grad);
 *         AG_ERR_OUT_OF_MEMORY. destroy has run on failure.
 */
AG_API ag_status ag_tensor_register_node_pre_hook(ag_hook **out, ag_tensor *t, ag_node_hook_fn fn,
                                                  void *user_data, ag_destroy_fn destroy) AG_NOEXCEPT;
AG_API ag_status ag_tensor_register_node_post_hook(ag_hook **out, ag_tensor *t, ag_node_hook_fn fn,
                                                   void *user_data, ag_destroy_fn destroy) AG_NOEXCEPT;

/**
 * Unregister the hook (it runs no more; its destroy runs once nothing uses
 * it) and release the handle. NULL is a no-op; a handle already removed or
 * released is ignored and recorded as the thread's last error. Thread-safe.
 */
AG_API void ag_hook_remove(ag_hook *hook) AG_NOEXCEPT;

/**
 * Release the handle and keep the hook registered. NULL is a no-op; a handle
 * already removed or released is ignored and recorded as the last error.
 */
AG_API void ag_hook_release(ag_hook *hook) AG_NOEXCEPT;

/**
 * From inside a hook or a custom function's backward: queue fn(user_data) to
 * run once, on this thread, when the current backward pass finishes
 * successfully (in queueing order; they may queue more). If the pass fails,
 * queued callbacks do not run (their destroy does).
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL fn); AG_ERR_GRAPH (no
 *         backward pass runs on this thread). destroy has run on failure.
 */
AG_API ag_status ag_backward_queue_callback(ag_callback_fn fn, void *user_data, ag_destroy_fn destroy) AG_NOEXCEPT;

/**
 * For callbacks (hooks, custom functions): set the message that goes with
 * the failing status the callback is about to return. Copied; NULL clears.
 * Per thread.
 */
AG_API void ag_set_callback_error(const char *message) AG_NOEXCEPT;

AG_END_DECLS

#endif /* AG_HOOKS_H */
