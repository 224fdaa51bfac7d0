// In-place ops (see inplace.h for the graph rules). The new values are
// written into self's storage; when a graph is recorded, self's history is
// rebased onto the node of the equivalent out-of-place op.
#include "ops/inplace.h"

#include <cmath>
#include <unordered_set>
#include <vector>

#include "autograd/accumulate_grad.h"
#include "autograd/grad_math.h"
#include "autograd/hooks.h"
#include "kernels/clamp.h"
#include "kernels/optim.h"
#include "ops/op_common.h"

namespace ag::ops {

namespace {

// Whether another tensor uses self's storage (a view, a detached tensor, an
// output saved for backward). The view a leaf's AccumulateGrad keeps for the
// ops that save the leaf counts only while one of them holds it.
bool storage_shared(const TensorImpl& self) {
  int32_t others = self.storage()->use_count() - 1;
  if (const AutogradMeta* m = meta_of(self)) {
    const Node* acc = m->accumulator.load(std::memory_order_acquire);
    if (acc && static_cast<const AccumulateGrad*>(acc)->saved_view_unused()) --others;
  }
  return others > 0;
}

// Checks shared by every in-place op; returns whether a graph is recorded.
bool check_inplace(const Tensor& self, const TensorImpl* other) {
  if (self->storage()->read_only()) fail(AG_ERR_UNSUPPORTED, kReadOnlyMessage);
  if (!self->is_non_overlapping()) {
    fail(AG_ERR_UNSUPPORTED, "self has elements that alias each other (an expand view); write to its base");
  }
  if (other) {
    check_same(*self, *other);
    const Dims shape = broadcast_shapes(self->shape(), other->shape());
    if (shape != self->shape()) {
      fail(AG_ERR_SHAPE, "cannot broadcast the other tensor of shape ", shape_str(other->shape()),
           " to self's shape ", shape_str(self->shape()));
    }
  }
  if (!grad_enabled()) return false;
  if (is_leaf(*self) && requires_grad(*self)) {
    fail(AG_ERR_GRAPH, "self is a leaf that requires grad: it cannot be modified in place while grad mode is on "
                       "(turn grad mode off for optimizer updates, or modify a clone)");
  }
  const bool record = requires_grad(*self) || (other && requires_grad(*other));
  if (record && storage_shared(*self)) {
    fail(AG_ERR_UNSUPPORTED, "self shares its storage with another tensor (a view, a detached tensor, or an "
                             "output saved for backward); modifying it while recording a graph would hide the "
                             "change from that tensor's history: modify a clone");
  }
  // Only a tensor with more owners than its handles' can be saved by a node.
  if (record && self->use_count() > 1 && saved_in_history(*self, {self.get(), other})) {
    fail(AG_ERR_UNSUPPORTED, "self is saved for the backward of an op in the history of self or of the other "
                         "tensor; recording the write would make that op reachable from self's new history while "
                         "it holds self (a reference cycle, and a backward that can only fail): modify a clone");
  }
  return record;
}

// Writes src (broadcast to self's shape) into self.
void write(const Tensor& self, const TensorImpl& src) {
  const Dims strides = broadcast_strides(src.shape(), src.strides(), self->shape());
  copy_into(self->context(), src.dtype(), self->shape(), kernels::View{src.data(), &strides}, self->dtype(),
            self->data(), self->strides());
}

// Makes result's node self's history: self now stands where result stood.
// A tensor that retains its gradient keeps doing so, now at its new node.
void rebase(const Tensor& self, const Tensor& result) {
  const AutogradMeta* m = meta_of(*self);
  const bool retains = m && m->retains_grad && !is_leaf(*self);
  if (retains) {
    if (NodeHooks* h = grad_fn_of(*self)->hooks()) h->forget_retained(self->output_nr());
  }
  set_grad_fn(*self, Ref<Node>::share(grad_fn_of(*result)), result->output_nr());
  if (retains) grad_fn_of(*self)->ensure_hooks().retain(self->output_nr(), self.get());
}

using BinaryOp = Tensor (*)(const Tensor&, const Tensor&);

kernels::BinaryKind kind_of(BinaryOp op) {
  if (op == BinaryOp{&add}) return kernels::BinaryKind::Add;
  if (op == BinaryOp{&sub}) return kernels::BinaryKind::Sub;
  if (op == BinaryOp{&mul}) return kernels::BinaryKind::Mul;
  return kernels::BinaryKind::Div;
}

// self = op(self, other).
void binary_inplace(const Tensor& self, const Tensor& other, BinaryOp op, bool saves_self) {
  check_floating(*self);
  const bool record = check_inplace(self, other.get());
  if (record) {
    // mul and div save their first input: give them a copy of the old self,
    // which the write below does not touch.
    const Tensor old = saves_self ? clone(self) : self;
    const Tensor result = op(old, other.get() == self.get() ? old : other);
    write(self, *result);
    self->storage()->bump_version();
    rebase(self, result);
    return;
  }
  GradModeGuard off(false);
  if (self->is_contiguous() && other->storage() != self->storage()) {
    // Straight into self (check_inplace made sure other broadcasts to it), in
    // parallel chunks where that pays, a scalar other included: p -= lr * g.
    binary_into(self, other, kind_of(op), self->shape(), *self);
  } else {
    write(self, *op(self, other));
  }
  self->storage()->bump_version();
}

}  // namespace

bool saved_in_history(const TensorImpl& self, const std::vector<const TensorImpl*>& roots) {
  std::vector<const Node*> todo;
  std::unordered_set<const Node*> seen;
  for (const TensorImpl* t : roots) {
    const Node* fn = t ? grad_fn_of(*t) : nullptr;
    if (fn && seen.insert(fn).second) todo.push_back(fn);
  }
  while (!todo.empty()) {
    const Node* n = todo.back();
    todo.pop_back();
    if (n->saves(&self)) return true;
    for (size_t i = 0; i < n->num_outputs(); ++i) {
      const Node* next = n->next_edge(i).fn.get();
      if (next && seen.insert(next).second) todo.push_back(next);
    }
  }
  return false;
}

void add_(const Tensor& self, const Tensor& other) { binary_inplace(self, other, &add, false); }
void sub_(const Tensor& self, const Tensor& other) { binary_inplace(self, other, &sub, false); }
void mul_(const Tensor& self, const Tensor& other) { binary_inplace(self, other, &mul, true); }
void div_(const Tensor& self, const Tensor& other) { binary_inplace(self, other, &div, true); }

void add_scaled_(const Tensor& self, const Tensor& other, double alpha) {
  if (alpha == 1.0) return add_(self, other);
  check_floating(*self);
  const bool record = check_inplace(self, other.get());
  if (record) {
    // The product saves nothing but alpha; a copy keeps an other that is
    // self from being read after the write.
    const Tensor result = add_scaled(self, other.get() == self.get() ? clone(self) : other, alpha);
    write(self, *result);
    self->storage()->bump_version();
    rebase(self, result);
    return;
  }
  GradModeGuard off(false);
  if (self->is_contiguous() && other->is_contiguous() && other->shape() == self->shape() &&
      other->storage() != self->storage()) {
    // One pass (an optimizer's p -= lr * g), in parallel chunks where that pays.
    const int64_t item = static_cast<int64_t>(itemsize(self->dtype()));
    for_chunks(self->context(), self->numel(), [&](int64_t off, int64_t len) {
      kernels::add_scaled(self->dtype(), self->data() + off * item, other->data() + off * item, alpha, len);
    }, Work::Optimizer);
  } else {
    const Tensor scaled = mul(other, scalar_like(other, alpha));
    if (self->is_contiguous()) {
      binary_into(self, scaled, kernels::BinaryKind::Add, self->shape(), *self);
    } else {
      write(self, *add(self, scaled));
    }
  }
  self->storage()->bump_version();
}

void fill_(const Tensor& self, double value) {
  if (self->dtype() == DType::I64 && !(std::isfinite(value) && std::fabs(value) < 9.2233720368547758e18)) {
    fail(AG_ERR_INVALID_ARGUMENT, "value ", value, " does not fit in i64");
  }
  const bool record = check_inplace(self, nullptr);
  // The old values get a zero gradient: history through self * 0.
  Tensor result;
  if (record) result = mul(self, scalar_like(self, 0.0));
  if (self->is_contiguous()) {
    fill_into(self->context(), self->dtype(), self->data(), self->numel(), value);
  } else {
    write(self, *full(self->context(), self->dtype(), Dims(), value));
  }
  self->storage()->bump_version();
  if (record) rebase(self, result);
}

void zero_(const Tensor& self) { fill_(self, 0.0); }

void copy_(const Tensor& self, const Tensor& src) {
  const bool record = check_inplace(self, src.get());
  // History: self * 0 + src, so the old values get a zero gradient and src
  // its gradient summed back to its shape.
  Tensor result;
  if (record) {
    const Tensor zeroed = requires_grad(*self) ? mul(self, scalar_like(self, 0.0)) : zeros_like(self);
    result = add(zeroed, src);
  }
  if (src->storage() == self->storage()) {
    write(self, *grad_clone(src));  // read everything before writing
  } else {
    write(self, *src);
  }
  self->storage()->bump_version();
  if (record) rebase(self, result);
}

void clamp_(const Tensor& self, double min, double max) {
  check_floating(*self);
  if (std::isnan(min) || std::isnan(max)) {
    fail(AG_ERR_INVALID_ARGUMENT, "min ", min, " and max ", max, " must not be NaN (use -inf / +inf for no bound)");
  }
  const bool record = check_inplace(self, nullptr);
  const int64_t n = self->numel();
  // A contiguous working copy when self is strided.
  const Tensor work = self->is_contiguous() ? self : grad_clone(self);
  Tensor mask;
  if (record) mask = empty(self->context(), self->dtype(), self->shape());
  const size_t item = itemsize(self->dtype());
  for_chunks(self->context(), n, [&](int64_t off, int64_t len) {
    kernels::clamp(self->dtype(), work->data() + off * item, work->data() + off * item,
                   mask ? mask->data() + off * item : nullptr, len, min, max);
  });
  Tensor result;
  if (record) result = mul(self, mask);  // the gradient passes where self was within the bounds
  if (work.get() != self.get()) write(self, *work);
  self->storage()->bump_version();
  if (record) rebase(self, result);
}

}  // namespace ag::ops
