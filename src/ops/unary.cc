// Elementwise ops of one input: neg, exp, log, tanh, pow_scalar.
#include "ops/op_common.h"

namespace ag::ops {

namespace {

// y = k(x) for more than one grain of elements: parallel chunks of a
// contiguous x, else slices. Out of line: unary_forward stays small.
[[gnu::noinline]] void unary_large(const Tensor& x, kernels::UnaryKind k, double attr, double attr2, TensorImpl& y) {
  const size_t item = itemsize(x->dtype());
  if (x->is_contiguous()) {
    const Dims unit{1};
    for_chunks(x->context(), x->numel(), work_of(k), [&](int64_t off, int64_t len) {
      kernels::unary(k, x->dtype(), Dims{len}, kernels::View{x->data() + off * item, &unit}, y.data() + off * item, attr,
                     attr2);
    });
  } else {
    const Dims* strides[1] = {&x->strides()};
    for_slices(x->context(), x->shape(), strides, work_of(k), [&](const Dims& sub, const int64_t* in, int64_t out) {
      kernels::unary(k, x->dtype(), sub, kernels::View{x->data() + in[0] * item, strides[0]}, y.data() + out * item,
                     attr, attr2);
    });
  }
}

}  // namespace

Tensor unary_forward(const Tensor& x, kernels::UnaryKind k, double attr, double attr2) {
  check_floating(*x);
  Tensor y = empty(x->context(), x->dtype(), x->shape());
  if (x->numel() <= grain(work_of(k))) {
    // One kernel call over the whole shape (what for_slices makes of it).
    kernels::unary(k, x->dtype(), x->shape(), view_of(*x), y->data(), attr, attr2);
  } else {
    unary_large(x, k, attr, attr2, *y);
  }
  return y;
}

// neg: y = -x; dx = -g.
namespace {
struct NegBackward final : Node {
  const char* name() const override { return "NegBackward"; }
  void apply(TensorList& g, TensorList& out) override { out[0] = neg(g[0]); }
};
}  // namespace
Tensor neg(const Tensor& x) {
  Tensor y = unary_forward(x, kernels::UnaryKind::Neg);
  if (should_record({x.get()})) record<NegBackward>({x.get()}, y);
  return y;
}

// exp: y = e^x; dx = g * y. Saves y.
namespace {
struct ExpBackward final : SavingNode<1> {
  const char* name() const override { return "ExpBackward"; }
  void apply(TensorList& g, TensorList& out) override { out[0] = mul(g[0], saved[0].unpack(*this)); }
};
}  // namespace
Tensor exp(const Tensor& x) {
  Tensor y = unary_forward(x, kernels::UnaryKind::Exp);
  if (should_record({x.get()})) record<ExpBackward>({x.get()}, y)->saved[0].save(y, true);
  return y;
}

// log: y = ln x; dx = g / x. Saves x.
namespace {
struct LogBackward final : SavingNode<1> {
  const char* name() const override { return "LogBackward"; }
  void apply(TensorList& g, TensorList& out) override { out[0] = div(g[0], saved[0].unpack(*this)); }
};
}  // namespace
Tensor log(const Tensor& x) {
  Tensor y = unary_forward(x, kernels::UnaryKind::Log);
  if (should_record({x.get()})) record<LogBackward>({x.get()}, y)->saved[0].save(x, false);
  return y;
}

// tanh: y = tanh x; dx = tanh_backward(g, y) = g * (1 - y^2). Saves y.
namespace {
struct TanhBackward final : SavingNode<1> {
  const char* name() const override { return "TanhBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    out[0] = tanh_backward(last_use(*this, g, 0), saved[0].unpack(*this));
  }
};
}  // namespace
Tensor tanh(const Tensor& x) {
  Tensor y = unary_forward(x, kernels::UnaryKind::Tanh);
  if (should_record({x.get()})) record<TanhBackward>({x.get()}, y)->saved[0].save(y, true);
  return y;
}

// pow_scalar: y = x^p; dx = g * p * x^(p-1), and 0 for p = 0. Saves x.
namespace {
struct PowScalarBackward final : SavingNode<1> {
  explicit PowScalarBackward(double p) : p_(p) {}
  const char* name() const override { return "PowScalarBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    Tensor x = saved[0].unpack(*this);
    if (p_ == 0.0) {
      out[0] = zeros_like(x);
    } else if (p_ == 1.0) {
      out[0] = g[0];
    } else {
      out[0] = mul(g[0], mul(pow_scalar(x, p_ - 1.0), scalar_like(x, p_)));
    }
  }
  double p_;
};
}  // namespace
Tensor pow_scalar(const Tensor& x, double p) {
  Tensor y = unary_forward(x, kernels::UnaryKind::PowScalar, p);
  if (should_record({x.get()})) record<PowScalarBackward>({x.get()}, y, p)->saved[0].save(x, false);
  return y;
}

}  // namespace ag::ops
