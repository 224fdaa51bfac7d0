// Activation functions: sigmoid (with its fused backward op), relu,
// leaky_relu, elu, selu, silu, softplus, mish, hardtanh, clamp, gelu and
// gelu_tanh. Kinks follow PyTorch's subgradients: relu'(0) = 0,
// leaky_relu'(0) = slope, elu'(0) = alpha, hardtanh' = 0 at the bounds,
// clamp' = 1 at the bounds.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>

#include "ops/elementwise.h"

namespace ag::ops {

namespace {
using K = kernels::UnaryKind;

// Bool mask x > v.
Tensor greater(const Tensor& x, double v) { return gt(x, scalar_like(x, v)); }

// An attribute in a message: the shortest form that reads back exactly.
std::string num(double v) {
  char buf[32];
  for (int digits = 6; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v || std::isnan(v)) break;
  }
  return buf;
}
}  // namespace

// sigmoid: dx = sigmoid_backward(g, y) = g y (1 - y).
Tensor sigmoid(const Tensor& x) {
  return unary_op(x, K::Sigmoid, "SigmoidBackward", Save::Output,
                  [](const Tensor& g, const Tensor& y, double, double) { return sigmoid_backward(g, y); });
}

// sigmoid_backward: z = g y (1 - y), fused; dg = sigmoid_backward(gz, y),
// dy = gz g (1 - 2 y). Saves g if y needs grad, y always.
namespace {
struct SigmoidBackwardBackward final : BinaryNode {
  using BinaryNode::BinaryNode;
  const char* name() const override { return "SigmoidBackwardBackward"; }
  void apply(TensorList& gz, TensorList& out) override {
    Tensor y = saved[1].unpack(*this);
    if (needs_input_grad(0)) out[0] = reduce_to(sigmoid_backward(gz[0], y), shape_a);
    if (needs_input_grad(1)) {
      const Tensor one_minus_2y = sub(scalar_like(y, 1.0), mul_scalar(y, 2.0));
      out[1] = reduce_to(mul(mul(gz[0], saved[0].unpack(*this)), one_minus_2y), shape_b);
    }
  }
};
}  // namespace
Tensor sigmoid_backward(const Tensor& g, const Tensor& y) {
  Tensor z = binary_forward(g, y, kernels::BinaryKind::SigmoidBackward);
  if (should_record({g.get(), y.get()})) {
    auto n = record<SigmoidBackwardBackward>({g.get(), y.get()}, z, g, y);
    if (n->needs_input_grad(1)) n->saved[0].save(g, false);
    n->saved[1].save(y, false);
  }
  return z;
}

// relu: dx = g where y > 0, else 0.
Tensor relu(const Tensor& x) {
  return unary_op(x, K::Relu, "ReluBackward", Save::Output, [](const Tensor& g, const Tensor& y, double, double) {
    return mul(g, inside(y, 0.0, std::numeric_limits<double>::infinity(), false));
  });
}

// leaky_relu: dx = g where x > 0, else slope * g.
Tensor leaky_relu(const Tensor& x, double negative_slope) {
  return unary_op(
      x, K::LeakyRelu, "LeakyReluBackward", Save::Input,
      [](const Tensor& g, const Tensor& x, double slope, double) {
        return where(greater(x, 0.0), g, mul_scalar(g, slope));
      },
      negative_slope);
}

// elu: dx = g where x > 0, else g alpha e^x.
Tensor elu(const Tensor& x, double alpha) {
  return unary_op(
      x, K::Elu, "EluBackward", Save::Input,
      [](const Tensor& g, const Tensor& x, double alpha, double) {
        return where(greater(x, 0.0), g, mul(g, mul_scalar(exp(x), alpha)));
      },
      alpha);
}

// selu: scale * elu(x, alpha) with fixed constants.
Tensor selu(const Tensor& x) {
  return unary_op(x, K::Selu, "SeluBackward", Save::Input, [](const Tensor& g, const Tensor& x, double, double) {
    constexpr double kAlpha = 1.6732632423543772848170429916717, kScale = 1.0507009873554804934193349852946;
    return mul_scalar(where(greater(x, 0.0), g, mul(g, mul_scalar(exp(x), kAlpha))), kScale);
  });
}

// silu: y = x s, s = sigmoid(x); dx = g (s + x s (1 - s)).
Tensor silu(const Tensor& x) {
  return unary_op(x, K::Silu, "SiluBackward", Save::Input, [](const Tensor& g, const Tensor& x, double, double) {
    const Tensor s = sigmoid(x);
    return mul(g, add(s, sigmoid_backward(x, s)));
  });
}

// softplus: y = log(1 + e^(beta x)) / beta, and x where beta x > threshold;
// dx = g sigmoid(beta x), and g where beta x > threshold.
Tensor softplus(const Tensor& x, double beta, double threshold) {
  if (beta == 0.0 || std::isnan(beta) || std::isnan(threshold)) {
    fail(AG_ERR_INVALID_ARGUMENT, "beta must be nonzero and threshold a number, got beta ", num(beta),
         " and threshold ", num(threshold));
  }
  return unary_op(
      x, K::Softplus, "SoftplusBackward", Save::Input,
      [](const Tensor& g, const Tensor& x, double beta, double threshold) {
        const Tensor bx = mul_scalar(x, beta);
        return where(greater(bx, threshold), g, mul(g, sigmoid(bx)));
      },
      beta, threshold);
}

// mish: y = x t, t = tanh(softplus(x)); dx = g (t + x sigmoid(x) (1 - t^2)).
Tensor mish(const Tensor& x) {
  return unary_op(x, K::Mish, "MishBackward", Save::Input, [](const Tensor& g, const Tensor& x, double, double) {
    const Tensor t = tanh(softplus(x, 1.0, 20.0));
    return mul(g, add(t, tanh_backward(mul(x, sigmoid(x)), t)));
  });
}

// hardtanh: clamp to [min_val, max_val]; dx = g strictly inside, else 0.
Tensor hardtanh(const Tensor& x, double min_val, double max_val) {
  if (!(min_val <= max_val)) {
    fail(AG_ERR_INVALID_ARGUMENT, "min_val ", num(min_val), " must not exceed max_val ", num(max_val), " (nor be NaN)");
  }
  return unary_op(
      x, K::Clamp, "HardtanhBackward", Save::Input,
      [](const Tensor& g, const Tensor& x, double lo, double hi) { return mul(g, inside(x, lo, hi, false)); }, min_val,
      max_val);
}

// clamp: min(max(x, min), max), a NaN bound being no bound; dx = g where
// min <= x <= max, else 0.
Tensor clamp(const Tensor& x, double min, double max) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  return unary_op(
      x, K::Clamp, "ClampBackward", Save::Input,
      [](const Tensor& g, const Tensor& x, double lo, double hi) {
        return mul(g, inside(x, std::isnan(lo) ? -inf : lo, std::isnan(hi) ? inf : hi, true));
      },
      min, max);
}

// gelu: y = x Phi(x); dx = g (Phi(x) + x phi(x)), Phi(x) = (1 + erf(x / sqrt 2)) / 2,
// phi(x) = e^(-x^2 / 2) / sqrt(2 pi).
Tensor gelu(const Tensor& x) {
  return unary_op(x, K::Gelu, "GeluBackward", Save::Input, [](const Tensor& g, const Tensor& x, double, double) {
    const Tensor cdf = add_scalar(mul_scalar(erf(mul_scalar(x, 0.70710678118654752440084436210485)), 0.5), 0.5);
    const Tensor pdf = mul_scalar(exp(mul_scalar(square(x), -0.5)), 0.39894228040143267793994605993438);
    return mul(g, add(cdf, mul(x, pdf)));
  });
}

// gelu_tanh: y = x (1 + t) / 2, t = tanh(k (x + c x^3)), k = sqrt(2 / pi),
// c = 0.044715; dx = g ((1 + t) / 2 + (x / 2) (1 - t^2) k (1 + 3 c x^2)).
Tensor gelu_tanh(const Tensor& x) {
  return unary_op(x, K::GeluTanh, "GeluTanhBackward", Save::Input,
                  [](const Tensor& g, const Tensor& x, double, double) {
                    constexpr double k = 0.79788456080286535587989211986876, c = 0.044715;
                    const Tensor t = tanh(mul_scalar(add(x, mul_scalar(pow_scalar(x, 3.0), c)), k));
                    const Tensor du = mul_scalar(add_scalar(mul_scalar(square(x), 3.0 * c), 1.0), k);
                    const Tensor dy = add(mul_scalar(add_scalar(t, 1.0), 0.5), tanh_backward(mul(mul_scalar(x, 0.5), du), t));
                    return mul(g, dy);
                  });
}

}  // namespace ag::ops
