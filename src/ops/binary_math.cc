// Elementwise math of two inputs with NumPy broadcasting: pow, maximum,
// minimum, atan2, fmod, remainder, hypot, logaddexp, (0.2) xlogy, copysign,
// and addcmul and addcdiv of three inputs. Gradients are summed
// back to each input's shape and follow PyTorch's conventions at the special
// points.
#include <limits>

#include "ops/elementwise.h"

namespace ag::ops {

namespace {
using K = kernels::BinaryKind;

// a op b recording node N (constructed from a and b) that saves a and b.
template <class N>
Tensor binary_op(const Tensor& a, const Tensor& b, K k) {
  Tensor y = binary_forward(a, b, k);
  if (should_record({a.get(), b.get()})) {
    auto n = record<N>({a.get(), b.get()}, y);
    n->saved[0].save(a, false);
    n->saved[1].save(b, false);
  }
  return y;
}
}  // namespace

// pow: y = a^b; da = g b a^(b-1) (0 where b = 0); db = g y ln a (0 where
// a = 0 and b >= 0, as PyTorch).
namespace {
struct PowBackward final : BinaryNode {
  using BinaryNode::BinaryNode;
  const char* name() const override { return "PowBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    const Tensor a = saved[0].unpack(*this), b = saved[1].unpack(*this);
    const Tensor zero = scalar_like(a, 0.0);
    if (needs_input_grad(0)) {
      const Tensor da = mul(g[0], mul(b, pow(a, add_scalar(b, -1.0))));
      out[0] = reduce_to(where(eq(b, zero), zero, da), input_shape(0));
    }
    if (needs_input_grad(1)) {
      constexpr double inf = std::numeric_limits<double>::infinity();
      const Tensor at_zero = mul(inside(a, 0.0, 0.0, true), inside(b, 0.0, inf, true));
      const Tensor db = mul(g[0], mul(pow(a, b), log(a)));
      out[1] = reduce_to(where(ne(at_zero, zero), zero, db), input_shape(1));
    }
  }
};
}  // namespace
Tensor pow(const Tensor& a, const Tensor& b) { return binary_op<PowBackward>(a, b, K::Pow); }

namespace {
// The gradient for a in maximum(a, b): g, g/2 at ties, 0 where a < b (a
// select: a NaN g there gives 0), g to both for a NaN result, as PyTorch.
Tensor greater_share(const Tensor& g, const Tensor& a, const Tensor& b) {
  const Tensor share = binary_forward(a, b, K::GreaterShare);  // constant
  return zero_where(eq(share, scalar_like(share, 0.0)), mul(g, share));
}

// maximum (kMax) or minimum: the gradient goes to the selected input, half
// to each at ties.
template <bool kMax>
struct ExtremumBackward final : BinaryNode {
  using BinaryNode::BinaryNode;
  const char* name() const override { return kMax ? "MaximumBackward" : "MinimumBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    const Tensor a = saved[0].unpack(*this), b = saved[1].unpack(*this);
    if (needs_input_grad(0)) out[0] = reduce_to(kMax ? greater_share(g[0], a, b) : greater_share(g[0], b, a), input_shape(0));
    if (needs_input_grad(1)) out[1] = reduce_to(kMax ? greater_share(g[0], b, a) : greater_share(g[0], a, b), input_shape(1));
  }
};
}  // namespace
Tensor maximum(const Tensor& a, const Tensor& b) { return binary_op<ExtremumBackward<true>>(a, b, K::Maximum); }
Tensor minimum(const Tensor& a, const Tensor& b) { return binary_op<ExtremumBackward<false>>(a, b, K::Minimum); }

// atan2(a, b) = angle of (b, a); da = g b / (a^2 + b^2), db = -g a / (a^2 + b^2).
namespace {
struct Atan2Backward final : BinaryNode {
  using BinaryNode::BinaryNode;
  const char* name() const override { return "Atan2Backward"; }
  void apply(TensorList& g, TensorList& out) override {
    const Tensor a = saved[0].unpack(*this), b = saved[1].unpack(*this);
    const Tensor gr = div(g[0], add(square(a), square(b)));
    if (needs_input_grad(0)) out[0] = reduce_to(mul(gr, b), input_shape(0));
    if (needs_input_grad(1)) out[1] = reduce_to(neg(mul(gr, a)), input_shape(1));
  }
};
}  // namespace
Tensor atan2(const Tensor& a, const Tensor& b) { return binary_op<Atan2Backward>(a, b, K::Atan2); }

// fmod (sign of a) and remainder (sign of b): y = a - q b with q = trunc(a / b)
// (fmod) or floor(a / b) (remainder); da = g, db = -g q.
namespace {
template <bool kFloor>
struct ModBackward final : BinaryNode {
  using BinaryNode::BinaryNode;
  const char* name() const override { return kFloor ? "RemainderBackward" : "FmodBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    if (needs_input_grad(0)) out[0] = reduce_to(g[0], input_shape(0));
    if (needs_input_grad(1)) {
      const Tensor ratio = div(saved[0].unpack(*this), saved[1].unpack(*this));
      out[1] = reduce_to(neg(mul(g[0], kFloor ? floor(ratio) : trunc(ratio))), input_shape(1));
    }
  }
};
}  // namespace
Tensor fmod(const Tensor& a, const Tensor& b) { return binary_op<ModBackward<false>>(a, b, K::Fmod); }
Tensor remainder(const Tensor& a, const Tensor& b) { return binary_op<ModBackward<true>>(a, b, K::Remainder); }

// hypot: y = sqrt(a^2 + b^2) through the square, add and sqrt kernels (so it
// overflows where a^2 does); da = g a / y, db = g b / y. Saves a, b and y.
namespace {
struct HypotBackward final : SavingNode<3> {
  const char* name() const override { return "HypotBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    const Tensor gr = div(g[0], saved[2].unpack(*this));
    if (needs_input_grad(0)) out[0] = reduce_to(mul(gr, saved[0].unpack(*this)), input_shape(0));
    if (needs_input_grad(1)) out[1] = reduce_to(mul(gr, saved[1].unpack(*this)), input_shape(1));
  }
};
}  // namespace
Tensor hypot(const Tensor& a, const Tensor& b) {
  check_same(*a, *b);
  using U = kernels::UnaryKind;
  Tensor y = unary_forward(binary_forward(unary_forward(a, U::Square), unary_forward(b, U::Square), K::Add), U::Sqrt);
  if (should_record({a.get(), b.get()})) {
    auto n = record<HypotBackward>({a.get(), b.get()}, y);
    n->saved[0].save(a, false);
    n->saved[1].save(b, false);
    n->saved[2].save(y, true);
  }
  return y;
}

// logaddexp: y = log(e^a + e^b) (its own kernel); da = g e^(a - y),
// db = g e^(b - y). Saves a, b and y.
namespace {
struct LogaddexpBackward final : SavingNode<3> {
  const char* name() const override { return "LogaddexpBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    const Tensor y = saved[2].unpack(*this);
    if (needs_input_grad(0)) out[0] = reduce_to(mul(g[0], exp(sub(saved[0].unpack(*this), y))), input_shape(0));
    if (needs_input_grad(1)) out[1] = reduce_to(mul(g[0], exp(sub(saved[1].unpack(*this), y))), input_shape(1));
  }
};
}  // namespace
Tensor logaddexp(const Tensor& a, const Tensor& b) {
  Tensor y = binary_forward(a, b, K::Logaddexp);
  if (should_record({a.get(), b.get()})) {
    auto n = record<LogaddexpBackward>({a.get(), b.get()}, y);
    n->saved[0].save(a, false);
    n->saved[1].save(b, false);
    n->saved[2].save(y, true);
  }
  return y;
}

// ---- added in 0.2 ----

// xlogy: y = a log b, 0 where a = 0 (NaN where b is NaN); da = xlogy(g, b),
// 0 where a = 0 and b <= 0; db = g a / b, as PyTorch 1.13.
namespace {
struct XlogyBackward final : BinaryNode {
  using BinaryNode::BinaryNode;
  const char* name() const override { return "XlogyBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    const Tensor a = saved[0].unpack(*this), b = saved[1].unpack(*this);
    if (needs_input_grad(0)) {
      const Tensor zero = scalar_like(a, 0.0);
      const Tensor da = xlogy(g[0], b);
      out[0] = reduce_to(where(eq(a, zero), zero_where(le(b, zero), da), da), input_shape(0));
    }
    if (needs_input_grad(1)) out[1] = reduce_to(mul(g[0], div(a, b)), input_shape(1));
  }
};
}  // namespace
Tensor xlogy(const Tensor& a, const Tensor& b) { return binary_op<XlogyBackward>(a, b, K::Xlogy); }

// copysign: y = |a| with b's sign; da = g y / a (+-1), 0 where a = 0, as
// PyTorch (a constant: no second derivative); db = 0.
namespace {
struct CopysignBackward final : SavingNode<2> {
  const char* name() const override { return "CopysignBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    const Tensor a = saved[0].unpack(*this), y = saved[1].unpack(*this);
    if (needs_input_grad(0)) {
      const Tensor ratio = binary_forward(y, a, K::Div);  // no graph
      out[0] = reduce_to(zero_where(eq(a, scalar_like(a, 0.0)), mul(g[0], ratio)), input_shape(0));
    }
    if (needs_input_grad(1)) out[1] = full(g[0]->context(), g[0]->dtype(), input_shape(1), 0.0);
  }
};
}  // namespace
Tensor copysign(const Tensor& a, const Tensor& b) {
  Tensor y = binary_forward(a, b, K::Copysign);
  if (should_record({a.get(), b.get()})) {
    auto n = record<CopysignBackward>({a.get(), b.get()}, y);
    n->saved[0].save(a, false);
    n->saved[1].save(y, true);
  }
  return y;
}

// addcmul: input + value t1 t2; addcdiv: input + value t1 / t2 (PyTorch's
// order of operations: (value t1) t2), all three broadcast. Composed of
// mul, div and add, so the gradients are theirs.
Tensor addcmul(const Tensor& input, const Tensor& t1, const Tensor& t2, double value) {
  check_same(*input, *t1);
  check_same(*input, *t2);
  return add(input, mul(value == 1.0 ? t1 : mul(scalar_like(t1, value), t1), t2));
}

Tensor addcdiv(const Tensor& input, const Tensor& t1, const Tensor& t2, double value) {
  check_same(*input, *t1);
  check_same(*input, *t2);
  return add(input, div(value == 1.0 ? t1 : mul(scalar_like(t1, value), t1), t2));
}

}  // namespace ag::ops
