// In-place ops: they overwrite `self` (bumping its storage's version, shared
// by its views) instead of returning a new tensor. Not ops.def rows: they
// return nothing and mutate.
//
// Graph rules (as in PyTorch): with grad mode on, a leaf that requires grad
// cannot be modified in place; a tensor that requires grad, or is modified
// using one that does, is rebased: its history continues through the
// equivalent out-of-place op (so gradients, and gradients of gradients, come
// from the existing backward formulas). Rebasing a tensor whose storage
// another tensor shares (a view, or a tensor a node saved as its output) is
// refused: the other tensor's history would not see the change. With grad
// mode off, or nothing requiring grad, they are plain writes.
#pragma once

#include "core/tensor_impl.h"

namespace ag::ops {

// self op= other, other broadcast to self's shape (same dtype, floating).
void add_(const Tensor& self, const Tensor& other);
void sub_(const Tensor& self, const Tensor& other);
void mul_(const Tensor& self, const Tensor& other);
void div_(const Tensor& self, const Tensor& other);
// Every element = value (converted to self's dtype; any dtype).
void fill_(const Tensor& self, double value);
void zero_(const Tensor& self);
// self = src broadcast to self's shape (same dtype).
void copy_(const Tensor& self, const Tensor& src);
// self = min(max(self, min), max); NaN bounds are rejected, +-inf mean none.
void clamp_(const Tensor& self, double min, double max);

}  // namespace ag::ops
