// Elementwise ops of two inputs with NumPy broadcasting: add, sub, mul, div.
// Gradients are summed back to each input's shape.
#include "autograd/grad_math.h"
#include "ops/op_common.h"

namespace ag::ops {

namespace {

// binary_into's cases above one grain, or small but neither flat nor
// without broadcast (the elementwise driver). Out of line: binary_into stays
// small.
[[gnu::noinline]] void binary_into_general(const Tensor& a, const Tensor& b, kernels::BinaryKind k, const Dims& shape,
                                           TensorImpl& y) {
  const int64_t item = static_cast<int64_t>(itemsize(a->dtype()));
  const TensorImpl* const in[2] = {a.get(), b.get()};
  for_elementwise(in, shape, [&](const Dims& sub, const kernels::View* v, int64_t off) {
    kernels::binary(k, a->dtype(), sub, v[0], v[1], y.data() + off * item);
  }, work_of(k));
}

// Below one grain: the kernel's row straight away where each input is a
// contiguous row or one element (the rows binary() would pick, so the same
// bits); else, without broadcast, one kernel call over the whole shape.
// Out of line: the one-element path of binary_into stays small.
[[gnu::noinline]] void binary_into_small(const Tensor& a, const Tensor& b, kernels::BinaryKind k, const Dims& shape,
                                         TensorImpl& y) {
  const int64_t n = y.numel();
  const FlatRead ra = flat_read(*a, n), rb = flat_read(*b, n);
  if (n > 0 && ra != FlatRead::No && rb != FlatRead::No && (ra == FlatRead::Row || rb == FlatRead::Row) &&
      kernels::binary_flat(k, a->dtype(), a->data(), ra == FlatRead::One, b->data(), rb == FlatRead::One, y.data(),
                           static_cast<size_t>(n))) {
    return;
  }
  if (a->shape() == b->shape()) return kernels::binary(k, a->dtype(), shape, view_of(*a), view_of(*b), y.data());
  binary_into_general(a, b, k, shape, y);
}

}  // namespace

void binary_into_elements(const Tensor& a, const Tensor& b, kernels::BinaryKind k, const Dims& shape, TensorImpl& y) {
  if (y.numel() <= grain(work_of(k))) return binary_into_small(a, b, k, shape, y);
  binary_into_general(a, b, k, shape, y);
}

namespace {

// a = k(a, b) in a's own buffer, for an `a` the caller gives up. False, with
// nothing done, unless the buffer can take the result (reusable_as_result,
// b broadcasting to a's shape) and no graph is recorded.
bool binary_in_place(const Tensor& a, const Tensor& b, kernels::BinaryKind k) {
  if (a->context() != b->context() || a->dtype() != b->dtype() || !is_floating(a->dtype())) return false;
  if (b->shape() != a->shape() && !broadcastable_to(b->shape(), a->shape())) return false;
  if (!reusable_as_result(a, a->dtype(), a->shape()) || should_record({a.get(), b.get()})) return false;
  binary_into(a, b, k, a->shape(), *a);
  return true;
}

}  // namespace

bool binary_in_place_over(const Tensor& a, const char* b, kernels::BinaryKind k) {
  const DType dt = a->dtype();
  if (!kernels::binary_has_rows(k) || !is_floating(dt) || !reusable_as_result(a, dt, a->shape())) return false;
  const int64_t n = a->numel();
  char* y = a->data();
  // binary_into's paths for two contiguous rows: one element, one row below
  // a grain, parallel chunks of rows above (the rows kernels::binary picks).
  if (n == 0) return true;
  if (n == 1 && kernels::binary_scalar(k, dt, y, b, y)) return true;
  if (n <= grain(work_of(k))) return kernels::binary_flat(k, dt, y, false, b, false, y, static_cast<size_t>(n));
  const size_t item = itemsize(dt);
  for_chunks(a->context(), n, [&](int64_t off, int64_t len) {
    const size_t at = static_cast<size_t>(off) * item;
    kernels::binary_flat(k, dt, y + at, false, b + at, false, y + at, static_cast<size_t>(len));
  }, work_of(k));
  return true;
}

Tensor binary_forward(const Tensor& a, const Tensor& b, kernels::BinaryKind k) {
  check_same(*a, *b);
  check_floating(*a);
  const Dims shape = a->shape() == b->shape() ? a->shape() : broadcast_shapes(a->shape(), b->shape());
  Tensor y = empty(a->context(), a->dtype(), shape);
  binary_into(a, b, k, shape, *y);
  if (Recorder* r = recording()) [[unlikely]] {
    const kernels::BinaryOneFn one = y->numel() == 1 && a->numel() == 1 && b->numel() == 1
                                         ? kernels::binary_one_fn(k, a->dtype())
                                         : nullptr;
    if (one != nullptr) {
      // One element each (scalar chains): the kind's function on the
      // resolved pointers, which stay put while the recording keeps the
      // tensors; the step itself holds only the pointers (replay streams
      // through the steps).
      r->keep(a), r->keep(b), r->keep(y);
      r->add(*y, [one, pa = a->data(), pb = b->data(), py = y->data()] { one(pa, pb, py); });
    } else {
      r->add(*y, [a, b, k, y] { binary_into(a, b, k, y->shape(), *y); });
    }
  }
  return y;
}

// add: y = a + b; da = g, db = g.
namespace {
struct AddBackward final : Node {  // saves nothing
  const char* name() const override { return "AddBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    if (needs_input_grad(1)) out[1] = reduce_to(needs_input_grad(0) ? g[0] : last_use(*this, g, 0), input_shape(1));
    if (needs_input_grad(0)) out[0] = reduce_to(last_use(*this, g, 0), input_shape(0));
  }
};
}  // namespace
Tensor add(const Tensor& a, const Tensor& b) {
  Tensor y = binary_forward(a, b, kernels::BinaryKind::Add);
  if (should_record({a.get(), b.get()})) record<AddBackward>({a.get(), b.get()}, y);
  return y;
}
Tensor add(Tensor&& a, const Tensor& b) {
  if (binary_in_place(a, b, kernels::BinaryKind::Add)) return std::move(a);
  return add(a, b);
}

// sub: y = a - b; da = g, db = -g.
namespace {
struct SubBackward final : Node {  // saves nothing
  const char* name() const override { return "SubBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    if (needs_input_grad(1)) out[1] = reduce_to(neg(g[0]), input_shape(1));
    if (needs_input_grad(0)) out[0] = reduce_to(last_use(*this, g, 0), input_shape(0));
  }
};
}  // namespace
Tensor sub(const Tensor& a, const Tensor& b) {
  Tensor y = binary_forward(a, b, kernels::BinaryKind::Sub);
  if (should_record({a.get(), b.get()})) record<SubBackward>({a.get(), b.get()}, y);
  return y;
}
Tensor sub(Tensor&& a, const Tensor& b) {
  if (binary_in_place(a, b, kernels::BinaryKind::Sub)) return std::move(a);
  return sub(a, b);
}

// add_scaled: y = a + alpha * b, recorded as mul then add (so da = g,
// db = alpha g, and gradients of any order, come from their nodes). The
// product is rounded before the sum, as the in-place form's kernel does.
Tensor add_scaled(const Tensor& a, const Tensor& b, double alpha) {
  if (alpha == 1.0) return add(a, b);
  return add(mul(b, scalar_like(b, alpha)), a);
}

// mul: y = a * b; da = g * b, db = g * a. Saves b if a needs grad, a if b does.
namespace {
struct MulBackward final : BinaryNode {
  using BinaryNode::BinaryNode;
  const char* name() const override { return "MulBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    if (needs_input_grad(1)) {
      out[1] = reduce_to(needs_input_grad(0) ? mul(g[0], saved[0].unpack(*this))
                                             : mul(last_use(*this, g, 0), saved[0].unpack(*this)), input_shape(1));
    }
    if (needs_input_grad(0)) out[0] = reduce_to(mul(last_use(*this, g, 0), saved[1].unpack(*this)), input_shape(0));
  }
};
}  // namespace
Tensor mul(const Tensor& a, const Tensor& b) {
  Tensor y = binary_forward(a, b, kernels::BinaryKind::Mul);
  if (should_record({a.get(), b.get()})) {
    auto n = record<MulBackward>({a.get(), b.get()}, y);
    if (n->needs_input_grad(1)) n->saved[0].save(a, false);
    if (n->needs_input_grad(0)) n->saved[1].save(b, false);
  }
  return y;
}
Tensor mul(Tensor&& a, const Tensor& b) {
  if (binary_in_place(a, b, kernels::BinaryKind::Mul)) return std::move(a);
  return mul(a, b);
}

// div: y = a / b; da = g / b, db = -(g / b) * (a / b). Saves a and b.
namespace {
struct DivBackward final : BinaryNode {
  using BinaryNode::BinaryNode;
  const char* name() const override { return "DivBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    Tensor b = saved[1].unpack(*this);
    Tensor ga = div(last_use(*this, g, 0), b);
    if (needs_input_grad(1)) out[1] = reduce_to(neg(mul(ga, div(saved[0].unpack(*this), b))), input_shape(1));
    if (needs_input_grad(0)) out[0] = reduce_to(std::move(ga), input_shape(0));
  }
};
}  // namespace
Tensor div(const Tensor& a, const Tensor& b) {
  Tensor y = binary_forward(a, b, kernels::BinaryKind::Div);
  if (should_record({a.get(), b.get()})) {
    auto n = record<DivBackward>({a.get(), b.get()}, y);
    if (n->needs_input_grad(1)) n->saved[0].save(a, false);
    n->saved[1].save(b, false);
  }
  return y;
}
Tensor div(Tensor&& a, const Tensor& b) {
  if (binary_in_place(a, b, kernels::BinaryKind::Div)) return std::move(a);
  return div(a, b);
}

// tanh_backward: y = g * (1 - t^2) (the fused gradient of tanh from its output t);
// dg = tanh_backward(gy, t), dt = -2 * gy * g * t. Saves g if t needs grad, t always.
namespace {
struct TanhBackwardBackward final : BinaryNode {
  using BinaryNode::BinaryNode;
  const char* name() const override { return "TanhBackwardBackward"; }
  void apply(TensorList& gy, TensorList& out) override {
    Tensor t = saved[1].unpack(*this);
    if (needs_input_grad(0)) out[0] = reduce_to(tanh_backward(gy[0], t), input_shape(0));
    if (needs_input_grad(1)) out[1] = reduce_to(neg(mul(mul(gy[0], saved[0].unpack(*this)), add(t, t))), input_shape(1));
  }
};
}  // namespace
Tensor tanh_backward(const Tensor& g, const Tensor& t) {
  Tensor y = binary_forward(g, t, kernels::BinaryKind::TanhBackward);
  if (should_record({g.get(), t.get()})) {
    auto n = record<TanhBackwardBackward>({g.get(), t.get()}, y);
    if (n->needs_input_grad(1)) n->saved[0].save(g, false);
    n->saved[1].save(t, false);
  }
  return y;
}
Tensor tanh_backward(Tensor&& g, const Tensor& t) {
  if (binary_in_place(g, t, kernels::BinaryKind::TanhBackward)) return std::move(g);
  return tanh_backward(g, t);
}

Tensor relu_backward(Tensor&& g, const Tensor& y) {
  if (grad_enabled()) return zero_where(le(y, scalar_like(y, 0.0)), g);
  if (binary_in_place(g, y, kernels::BinaryKind::ReluBackward)) return std::move(g);
  return binary_forward(g, y, kernels::BinaryKind::ReluBackward);
}

}  // namespace ag::ops

namespace ag {

Tensor grad_sum(const Tensor& a, const Tensor& b) { return ops::add(a, b); }
Tensor grad_sum(Tensor&& a, const Tensor& b) { return ops::add(std::move(a), b); }

}  // namespace ag
