/*
 * ag/anomaly.h - anomaly mode and tag scopes: finding where a NaN or an
 * infinity enters the backward pass, and which forward op it came from.
 *
 * Tag scopes. Each thread has a stack of tag scopes. An op recorded while
 * scopes are open remembers the full name of the innermost one, the names
 * joined with '/' ("loss/normalize"); ag_node_tag (ag/graph.h), graph
 * exports and anomaly messages show it. Pushing a scope around a single op
 * tags that op. With no scope open, recording costs nothing extra. Full names
 * are interned for the life of the process (one copy per distinct name), so
 * use a bounded set of names, not one per step.
 *
 * Anomaly mode (per context, off by default). When on, backward and grad
 * check every gradient a node produces for NaN and infinities; the first one
 * found stops the pass with AG_ERR_GRAPH and a message naming the node, the
 * tag of the op that recorded it, which input of the op the gradient is for,
 * the element, and where the gradient was going (the next node, or the leaf
 * and its tensor tag, ag_tensor_set_tag), e.g.
 *   "[ag_backward] anomaly: DivBackward (op tagged 'loss/normalize') produced
 *    NaN in its gradient for input 1 (element 0 of shape (3), going to the
 *    leaf 'w' of shape (3)); backward stopped there"
 * As after any failure inside a pass, gradients accumulated before that node
 * stay. The check reads every gradient once; with the mode off it costs one
 * flag read per backward call.
 */
#ifndef AG_ANOMALY_H
#define AG_ANOMALY_H

#include "ag/common.h"
#include "ag/context.h"

AG_BEGIN_DECLS

/**
 * Turn anomaly mode on (nonzero) or off (0) for the backward passes of `ctx`
 * (a pass reads the mode of its roots' context once, when it starts).
 * Thread-safe.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL or invalid ctx).
 */
AG_API ag_status ag_context_set_anomaly_mode(ag_context *ctx, int32_t enabled) AG_NOEXCEPT;

/** 1 if anomaly mode is on for `ctx`, else 0 (also for NULL or invalid ctx). Thread-safe. */
AG_API int32_t ag_context_anomaly_mode(const ag_context *ctx) AG_NOEXCEPT;

/**
 * Open a tag scope named `name` (copied; non-empty) inside the calling
 * thread's current one; ops recorded until the matching ag_tag_scope_pop
 * carry the joined name ("outer/name").
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL or empty name);
 *         AG_ERR_OUT_OF_MEMORY.
 */
AG_API ag_status ag_tag_scope_push(const char *name) AG_NOEXCEPT;

/**
 * Close the calling thread's innermost tag scope.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (no scope is open on this thread).
 */
AG_API ag_status ag_tag_scope_pop(void) AG_NOEXCEPT;

/**
 * Full name of the calling thread's innermost tag scope, or NULL when none
 * is open. Interned: valid for the life of the process.
 */
AG_API const char *ag_tag_scope_current(void) AG_NOEXCEPT;

AG_END_DECLS

#endif /* AG_ANOMALY_H */
