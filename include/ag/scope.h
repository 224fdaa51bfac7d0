/*
 * ag/scope.h - handle scopes, so per-frame C code does not leak intermediates.
 *
 *   ag_scope *s;  ag_scope_begin(&s);
 *   ... ops: every tensor handle they hand out is recorded in s ...
 *   ag_scope_keep(result);       (result survives the scope)
 *   ag_scope_end(s);             (every other handle made inside is released)
 *
 * While a scope is open on a thread, every tensor handle reference handed out
 * on that thread (op results, ag_tensor_create/zeros/.../grad/detach, and
 * ag_tensor_retain) is recorded in the innermost open scope. Releasing a
 * handle with ag_tensor_release while scopes are open takes back one record
 * of it (from the innermost scope that has one), so the scope does not
 * release that reference again. Ending the scope releases every reference
 * still recorded: those handed out inside it and neither released nor kept.
 * Scopes nest; a kept handle moves to the enclosing scope, or becomes the
 * caller's to release when the scope was the outermost.
 *
 * Thread-safety: scopes are per thread. A scope records only handles handed
 * out on its own thread and is ended on that thread. A handle recorded in a
 * scope must not be released on another thread while the scope is open.
 * Scopes still open when their thread exits are ended then.
 */
#ifndef AG_SCOPE_H
#define AG_SCOPE_H

#include "ag/common.h"
#include "ag/tensor.h"

AG_BEGIN_DECLS

/** Opaque handle scope. */
typedef struct ag_scope ag_scope;

/**
 * Open a scope on the calling thread, nested in the thread's innermost open
 * scope if there is one. `*out` identifies it for ag_scope_end.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT if `out` is NULL;
 *         AG_ERR_OUT_OF_MEMORY.
 */
AG_API ag_status ag_scope_begin(ag_scope **out) AG_NOEXCEPT;

/**
 * End `scope`, which must be the calling thread's innermost open scope:
 * release every handle reference recorded in it and not kept. The `scope`
 * handle is invalid afterwards.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT if `scope` is NULL, not open on
 *         this thread, or not the innermost one (then nothing is released:
 *         end the inner scopes first).
 */
AG_API ag_status ag_scope_end(ag_scope *scope) AG_NOEXCEPT;

/**
 * Keep one reference of `t` from being released by the innermost open scope
 * that recorded it (the most recent record): it moves to that scope's
 * enclosing scope, or, from the outermost scope, to the caller, who releases
 * it with ag_tensor_release. Keep twice to keep two references.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT if `t` is NULL or released, or
 *         no open scope of this thread recorded it; AG_ERR_OUT_OF_MEMORY.
 */
AG_API ag_status ag_scope_keep(ag_tensor *t) AG_NOEXCEPT;

/** Number of scopes open on the calling thread (0 when none). */
AG_API int32_t ag_scope_depth(void) AG_NOEXCEPT;

AG_END_DECLS

#endif /* AG_SCOPE_H */
