// A compact form for elementwise unary ops whose backward is one formula
// g -> dx of the upstream gradient g, one saved tensor (the input or the
// output) and up to two attributes, written with ag's ops so that
// create_graph records it. Used by unary.cc and activation.cc.
#pragma once

#include <optional>

#include "ops/op_common.h"

namespace ag::ops {

// dx from the upstream gradient g (given up by the node: a formula may pass
// it on as a temporary), the saved tensor s and the attributes.
using UnaryGradFn = Tensor (*)(Tensor g, const Tensor& s, double attr, double attr2);

enum class Save { Input, Output, Nothing };

// For an op that saves its output y and whose dx is one binary kernel of
// (g, y) (tanh, sigmoid, relu, exp): outside a recorded pass the node runs
// that kernel in g's buffer on y's elements where it can, without making a
// tensor for y (which a saved output kept as its storage alone needs: a
// tensor made and freed per node, a third of the cost of a scalar tanh's
// backward). The same bits as fn.
using InPlaceGrad = std::optional<kernels::BinaryKind>;

struct UnaryGradNode final : SavingNode<1> {
  UnaryGradNode(const char* name, UnaryGradFn fn, double attr, double attr2, InPlaceGrad in_place)
      : name_(name), fn_(fn), attr_(attr), attr2_(attr2), in_place_(in_place) {}
  const char* name() const override { return name_; }
  void apply(TensorList& g, TensorList& out) override {
    if (in_place_ && g[0] && !grad_enabled() && !hooks()) {
      const Tensor& g0 = g[0];
      const char* y = saved[0].contiguous_data(*this, g0->dtype(), g0->shape());
      if (y && binary_in_place_over(g0, y, *in_place_)) {
        out[0] = std::move(g[0]);
        return;
      }
    }
    if (!saved[0].defined()) {
      out[0] = fn_(last_use(*this, g, 0), Tensor(), attr_, attr2_);
      return;
    }
    // Bound as is: a conditional with Tensor() would copy the saved tensor
    // (two atomic count updates per node).
    const UnpackedTensor s = saved[0].unpack(*this);
    out[0] = fn_(last_use(*this, g, 0), s, attr_, attr2_);
  }
  const char* name_;
  UnaryGradFn fn_;
  double attr_, attr2_;
  InPlaceGrad in_place_;
};

// Returns y, an elementwise function of x the caller computed (for an op
// composed of kernels), recording `name` with backward fn when x requires grad.
inline Tensor unary_record(const Tensor& x, Tensor y, const char* name, Save save, UnaryGradFn fn,
                           double attr = 0.0, double attr2 = 0.0, InPlaceGrad in_place = {}) {
  if (should_record({x.get()})) {
    auto n = record<UnaryGradNode>({x.get()}, y, name, fn, attr, attr2, in_place);
    if (save == Save::Input) n->saved[0].save(x, false);
    if (save == Save::Output) n->saved[0].save(y, true);
  }
  return y;
}

// y = kernel k of x, recording `name` with backward fn when x requires grad.
inline Tensor unary_op(const Tensor& x, kernels::UnaryKind k, const char* name, Save save, UnaryGradFn fn,
                       double attr = 0.0, double attr2 = 0.0, InPlaceGrad in_place = {}) {
  return unary_record(x, unary_forward(x, k, attr, attr2), name, save, fn, attr, attr2, in_place);
}

// Scalar constants of formulas: 0-dim tensors in t's dtype.
inline Tensor mul_scalar(const Tensor& t, double v) { return mul(t, scalar_like(t, v)); }
inline Tensor add_scalar(const Tensor& t, double v) { return add(t, scalar_like(t, v)); }

}  // namespace ag::ops
