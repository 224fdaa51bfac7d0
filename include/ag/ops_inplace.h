/*
 * ag/ops_inplace.h - ops that overwrite their first argument.
 *
 * Each writes its result into `self` and bumps the version counter of self's
 * storage (shared by its views and detached tensors), so a node that saved
 * any of them notices at backward (AG_ERR_VERSION, naming the node and both
 * versions). `other` / `src` is broadcast to self's shape (NumPy rules; the
 * result keeps self's shape) and must have self's dtype and context.
 *
 * Graph rules, as in PyTorch:
 * - With grad mode off, or when neither self nor other requires grad, these
 *   are plain writes (optimizer updates run with grad mode off).
 * - With grad mode on, a leaf that requires grad cannot be modified in place
 *   (AG_ERR_GRAPH).
 * - Otherwise the write is recorded: self's history continues through the
 *   out-of-place equivalent (self's grad_fn becomes that op's node, e.g.
 *   "MulBackward"; fill_, zero_ and copy_ give the old values a zero
 *   gradient; clamp_ passes the gradient where the old value lay within
 *   [min, max]). Gradients of any order flow as for the out-of-place ops.
 *   Recording a write into a tensor whose storage another tensor shares (a
 *   view, a detached tensor, an output a node saved) is refused with
 *   AG_ERR_UNSUPPORTED: modify a clone instead. So is a write into a tensor
 *   that an op in the history of self or of other saved as its input
 *   (PyTorch records it, and a backward through that op fails; here the
 *   op's node would hold self while reachable from self's new history, a
 *   reference cycle). A write into a tensor saved by an op outside that
 *   history is recorded; a backward through that op then fails with
 *   AG_ERR_VERSION.
 *
 * Errors (every function): AG_ERR_INVALID_ARGUMENT (NULL or invalid handle);
 * AG_ERR_DTYPE (non-floating self for arithmetic and clamp_; dtypes differ);
 * AG_ERR_CONTEXT; AG_ERR_SHAPE (other does not broadcast to self's shape);
 * AG_ERR_UNSUPPORTED (self's elements alias, an expand view; see above;
 * or self is read-only, ag/interop.h);
 * AG_ERR_GRAPH (a leaf that requires grad, grad mode on);
 * AG_ERR_OUT_OF_MEMORY. On failure self is unchanged.
 * Thread-safety: exclusive use of self (and every tensor sharing its storage).
 * Empty tensors are fine (nothing is written; the version is still bumped).
 */
#ifndef AG_OPS_INPLACE_H
#define AG_OPS_INPLACE_H

#include "ag/common.h"
#include "ag/tensor.h"

AG_BEGIN_DECLS

/** self += other. */
AG_API ag_status ag_op_add_(ag_tensor *self, const ag_tensor *other) AG_NOEXCEPT;
/** self -= other. */
AG_API ag_status ag_op_sub_(ag_tensor *self, const ag_tensor *other) AG_NOEXCEPT;
/**
 * self += alpha * other (PyTorch's add_ with alpha; sub_ with alpha is
 * alpha negated): one pass over self where other is contiguous with self's
 * shape, as an optimizer's p -= lr * g needs. The product is rounded to the
 * dtype before the sum, as ag_op_add_scaled does, whose node a recorded
 * write gets ("AddBackward"). alpha = 1 is ag_op_add_. Since 0.2.
 */
AG_API ag_status ag_op_add_scaled_(ag_tensor *self, const ag_tensor *other, double alpha) AG_NOEXCEPT;
/** self *= other. */
AG_API ag_status ag_op_mul_(ag_tensor *self, const ag_tensor *other) AG_NOEXCEPT;
/** self /= other (IEEE: x/0 is +-inf or NaN). */
AG_API ag_status ag_op_div_(ag_tensor *self, const ag_tensor *other) AG_NOEXCEPT;
/** Every element of self = 0 (any dtype). */
AG_API ag_status ag_op_zero_(ag_tensor *self) AG_NOEXCEPT;
/**
 * Every element of self = value, converted to self's dtype as ag_tensor_full
 * does (any dtype). AG_ERR_INVALID_ARGUMENT also for a value i64 cannot hold.
 */
AG_API ag_status ag_op_fill_(ag_tensor *self, double value) AG_NOEXCEPT;
/** self = src (broadcast; same dtype: no conversion). src may share self's storage. */
AG_API ag_status ag_op_copy_(ag_tensor *self, const ag_tensor *src) AG_NOEXCEPT;
/**
 * self = min(max(self, min), max), f32/f64. -INFINITY / INFINITY mean no
 * bound; min > max gives max everywhere (as PyTorch); NaN elements stay NaN.
 * AG_ERR_INVALID_ARGUMENT also for a NaN bound.
 */
AG_API ag_status ag_op_clamp_(ag_tensor *self, double min, double max) AG_NOEXCEPT;

AG_END_DECLS

#endif /* AG_OPS_INPLACE_H */
