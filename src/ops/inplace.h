// In-place ops: they overwrite `self` (bumping its storage's version, shared
// by its views) instead of returning a new tensor: the AG_INPLACE rows of
// ops.def, declared from their family below.
//
// Graph rules (as in PyTorch): with grad mode on, a leaf that requires grad
// cannot be modified in place; a tensor that requires grad, or is modified
// using one that does, is rebased: its history continues through the
// equivalent out-of-place op (so gradients, and gradients of gradients, come
// from the existing backward formulas). Rebasing a tensor whose storage
// another tensor shares (a view, or a tensor a node saved as its output) is
// refused: the other tensor's history would not see the change. So is
// rebasing self when a node in the history of self or other saved self as
// an input (that node would be reachable from self's new history while
// holding self: a reference cycle). With grad
// mode off, or nothing requiring grad, they are plain writes.
#pragma once

#include <vector>

#include "core/tensor_impl.h"

namespace ag::ops {

// Whether a node in the history of the roots (null entries skipped) saved
// self as an input: rebasing self onto a node above them would close a
// reference cycle through self. Walks that history: call it only when self
// has more owners than its handles (use_count() > 1).
bool saved_in_history(const TensorImpl& self, const std::vector<const TensorImpl*>& roots);

#define AG_DECL_INPLACE(name) void name##_(const Tensor& self);
#define AG_DECL_INPLACE_SCALAR(name) void name##_(const Tensor& self, double attr);
#define AG_DECL_INPLACE_SCALAR2(name) void name##_(const Tensor& self, double attr, double attr2);
#define AG_DECL_INPLACE_BINARY(name) void name##_(const Tensor& self, const Tensor& other);
#define AG_DECL_INPLACE_BINARY_SCALAR(name) void name##_(const Tensor& self, const Tensor& other, double attr);
#define AG_INPLACE(name, family, arg) AG_DECL_##family(name)
#include "ops/ops.def"
// add_, sub_, mul_, div_: self op= other, other broadcast to self's shape
// (same dtype, floating). copy_: self = other broadcast to self's shape.
// fill_: every element = value (converted to self's dtype; any dtype); zero_.
// clamp_: self = min(max(self, min), max); NaN bounds are rejected, +-inf mean none.
// add_scaled_: self += alpha * other (PyTorch's add_ with alpha; sub_ with
// alpha is this with -alpha), one pass where other is contiguous and whole.

}  // namespace ag::ops
