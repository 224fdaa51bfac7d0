// A compact form for elementwise unary ops whose backward is one formula
// g -> dx of the upstream gradient g, one saved tensor (the input or the
// output) and up to two attributes, written with ag's ops so that
// create_graph records it. Used by unary.cc and activation.cc.
#pragma once

#include "ops/op_common.h"

namespace ag::ops {

// dx from the upstream gradient g (given up by the node: a formula may pass
// it on as a temporary), the saved tensor s and the attributes.
using UnaryGradFn = Tensor (*)(Tensor g, const Tensor& s, double attr, double attr2);

enum class Save { Input, Output, Nothing };

struct UnaryGradNode final : SavingNode<1> {
  UnaryGradNode(const char* name, UnaryGradFn fn, double attr, double attr2)
      : name_(name), fn_(fn), attr_(attr), attr2_(attr2) {}
  const char* name() const override { return name_; }
  void apply(TensorList& g, TensorList& out) override {
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
};

// Returns y, an elementwise function of x the caller computed (for an op
// composed of kernels), recording `name` with backward fn when x requires grad.
inline Tensor unary_record(const Tensor& x, Tensor y, const char* name, Save save, UnaryGradFn fn,
                           double attr = 0.0, double attr2 = 0.0) {
  if (should_record({x.get()})) {
    auto n = record<UnaryGradNode>({x.get()}, y, name, fn, attr, attr2);
    if (save == Save::Input) n->saved[0].save(x, false);
    if (save == Save::Output) n->saved[0].save(y, true);
  }
  return y;
}

// y = kernel k of x, recording `name` with backward fn when x requires grad.
inline Tensor unary_op(const Tensor& x, kernels::UnaryKind k, const char* name, Save save, UnaryGradFn fn,
                       double attr = 0.0, double attr2 = 0.0) {
  return unary_record(x, unary_forward(x, k, attr, attr2), name, save, fn, attr, attr2);
}

// Scalar constants of formulas: 0-dim tensors in t's dtype.
inline Tensor mul_scalar(const Tensor& t, double v) { return mul(t, scalar_like(t, v)); }
inline Tensor add_scalar(const Tensor& t, double v) { return add(t, scalar_like(t, v)); }

}  // namespace ag::ops
