// Activation functions: sigmoid, relu, leaky_relu, elu, selu, silu,
// softplus, mish, hardtanh, clamp, gelu and gelu_tanh, (0.2) logit, relu6,
// hardswish, hardsigmoid, softsign, logsigmoid, glu, celu, prelu, threshold,
// softshrink, hardshrink and tanhshrink, and the fused
// gradient ops sigmoid_backward, silu_backward, mish_backward, gelu_backward
// and gelu_tanh_backward. Kinks follow PyTorch's subgradients: relu'(0) = 0,
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

// elu'(x) = 1 for x > 0, else alpha e^x. The exponent is min(x, 0) taken
// by a select: no overflow for large x (where the branch is discarded, its
// derivative is 0 and not 0 * inf), and the second derivative is 0 at x = 0
// as in PyTorch (which masks it with x < 0).
Tensor elu_grad(const Tensor& g, const Tensor& x, double alpha) {
  const Tensor zero = scalar_like(x, 0.0);
  return where(greater(x, 0.0), g, mul(g, mul_scalar(exp(where(lt(x, zero), x, zero)), alpha)));
}

}  // namespace

// sigmoid: dx = sigmoid_backward(g, y) = g y (1 - y).
Tensor sigmoid(const Tensor& x) {
  return unary_op(
      x, K::Sigmoid, "SigmoidBackward", Save::Output,
      [](Tensor g, const Tensor& y, double, double) { return sigmoid_backward(g, y); }, 0.0, 0.0,
      InPlaceGrad(kernels::BinaryKind::SigmoidBackward));
}

// relu: dx = 0 where y <= 0, else g (a NaN y passes g, as PyTorch).
Tensor relu(const Tensor& x) {
  return unary_op(
      x, K::Relu, "ReluBackward", Save::Output,
      [](Tensor g, const Tensor& y, double, double) { return relu_backward(std::move(g), y); }, 0.0, 0.0,
      InPlaceGrad(kernels::BinaryKind::ReluBackward));
}

// leaky_relu: dx = g where x > 0, else slope * g.
Tensor leaky_relu(const Tensor& x, double negative_slope) {
  return unary_op(
      x, K::LeakyRelu, "LeakyReluBackward", Save::Input,
      [](Tensor g, const Tensor& x, double slope, double) {
        return where(greater(x, 0.0), g, mul_scalar(g, slope));
      },
      negative_slope);
}

// elu: dx = g where x > 0, else g alpha e^x.
Tensor elu(const Tensor& x, double alpha) {
  return unary_op(
      x, K::Elu, "EluBackward", Save::Input,
      [](Tensor g, const Tensor& x, double alpha, double) { return elu_grad(g, x, alpha); }, alpha);
}

// selu: scale * elu(x, alpha) with fixed constants.
Tensor selu(const Tensor& x) {
  return unary_op(x, K::Selu, "SeluBackward", Save::Input, [](Tensor g, const Tensor& x, double, double) {
    constexpr double kAlpha = 1.6732632423543772848170429916717, kScale = 1.0507009873554804934193349852946;
    return mul_scalar(elu_grad(g, x, kAlpha), kScale);
  });
}

// silu: y = x sigmoid(x); dx = silu_backward(g, x).
Tensor silu(const Tensor& x) {
  return unary_op(x, K::Silu, "SiluBackward", Save::Input,
                  [](Tensor g, const Tensor& x, double, double) { return silu_backward(g, x); });
}

// softplus: y = log(1 + e^(beta x)) / beta, and x where beta x > threshold;
// dx = g sigmoid(beta x), and g where beta x > threshold. At beta x =
// threshold the first derivative is sigmoid(threshold) and the second 0
// (beta x enters sigmoid through a select below the threshold), as PyTorch.
Tensor softplus(const Tensor& x, double beta, double threshold) {
  if (beta == 0.0 || std::isnan(beta) || std::isnan(threshold)) {
    fail(AG_ERR_INVALID_ARGUMENT, "beta must be nonzero and threshold a number, got beta ", beta,
         " and threshold ", threshold);
  }
  return unary_op(
      x, K::Softplus, "SoftplusBackward", Save::Input,
      [](Tensor g, const Tensor& x, double beta, double threshold) {
        const Tensor bx = mul_scalar(x, beta), th = scalar_like(x, threshold);
        return where(greater(bx, threshold), g, mul(g, sigmoid(where(lt(bx, th), bx, th))));
      },
      beta, threshold);
}

// mish: y = x tanh(softplus(x)); dx = mish_backward(g, x).
Tensor mish(const Tensor& x) {
  return unary_op(x, K::Mish, "MishBackward", Save::Input,
                  [](Tensor g, const Tensor& x, double, double) { return mish_backward(g, x); });
}

// hardtanh: clamp to [min_val, max_val]; dx = 0 at or beyond the bounds,
// else g (a NaN x passes g, as PyTorch); selects, see zero_where.
Tensor hardtanh(const Tensor& x, double min_val, double max_val) {
  if (!(min_val <= max_val)) {
    fail(AG_ERR_INVALID_ARGUMENT, "min_val ", min_val, " must not exceed max_val ", max_val, " (nor be NaN)");
  }
  return unary_op(
      x, K::Clamp, "HardtanhBackward", Save::Input,
      [](Tensor g, const Tensor& x, double lo, double hi) {
        return zero_where(le(x, scalar_like(x, lo)), zero_where(ge(x, scalar_like(x, hi)), g));
      },
      min_val, max_val);
}

// clamp: min(max(x, min), max), a NaN bound being no bound; dx = g where
// min <= x <= max, else 0 (also for a NaN x, as PyTorch); selects.
Tensor clamp(const Tensor& x, double min, double max) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  return unary_op(
      x, K::Clamp, "ClampBackward", Save::Input,
      [](Tensor g, const Tensor& x, double lo, double hi) {
        const Tensor in = inside(x, std::isnan(lo) ? -inf : lo, std::isnan(hi) ? inf : hi, true);
        return zero_where(eq(in, scalar_like(in, 0.0)), g);
      },
      min, max);
}

// gelu: y = x Phi(x), Phi the standard normal CDF; dx = gelu_backward(g, x).
Tensor gelu(const Tensor& x) {
  return unary_op(x, K::Gelu, "GeluBackward", Save::Input,
                  [](Tensor g, const Tensor& x, double, double) { return gelu_backward(g, x); });
}

// gelu_tanh: y = x (1 + tanh(k (x + c x^3))) / 2; dx = gelu_tanh_backward(g, x).
Tensor gelu_tanh(const Tensor& x) {
  return unary_op(x, K::GeluTanh, "GeluTanhBackward", Save::Input,
                  [](Tensor g, const Tensor& x, double, double) { return gelu_tanh_backward(g, x); });
}

// The fused gradients z = g f'(x) of silu, mish, gelu and gelu_tanh (and
// z = g y (1 - y) of sigmoid from its output y): one pass instead of a chain
// of ops. Each is an op whose backward is dg = f_backward(gz, x) and
// dx = gz g f''(x) (sigmoid: dy = gz g (1 - 2 y)), written in ag's ops.
// Saves g if x needs grad, x always.
namespace {
using SecondDerivative = Tensor (*)(const Tensor& x);

struct FusedBackwardBackward final : BinaryNode {
  FusedBackwardBackward(const char* name, Tensor (*first)(const Tensor&, const Tensor&), SecondDerivative second)
      : name_(name), first_(first), second_(second) {}
  const char* name() const override { return name_; }
  void apply(TensorList& gz, TensorList& out) override {
    const Tensor x = saved[1].unpack(*this);
    if (needs_input_grad(0)) out[0] = reduce_to(first_(gz[0], x), input_shape(0));
    if (needs_input_grad(1)) out[1] = reduce_to(mul(mul(gz[0], saved[0].unpack(*this)), second_(x)), input_shape(1));
  }
  const char* name_;
  Tensor (*first_)(const Tensor&, const Tensor&);
  SecondDerivative second_;
};

Tensor fused_backward(const Tensor& g, const Tensor& x, kernels::BinaryKind k, const char* name,
                      Tensor (*first)(const Tensor&, const Tensor&), SecondDerivative second) {
  Tensor z = binary_forward(g, x, k);
  if (should_record({g.get(), x.get()})) {
    auto n = record<FusedBackwardBackward>({g.get(), x.get()}, z, name, first, second);
    if (n->needs_input_grad(1)) n->saved[0].save(g, false);
    n->saved[1].save(x, false);
  }
  return z;
}

constexpr double kInvSqrt2Pi = 0.39894228040143267793994605993438;
constexpr double kGeluK = 0.79788456080286535587989211986876, kGeluC = 0.044715;

// d(y (1 - y))/dy = 1 - 2 y.
Tensor sigmoid_second(const Tensor& y) { return sub(scalar_like(y, 1.0), mul_scalar(y, 2.0)); }

// silu'' = s (1 - s) (2 + x (1 - 2 s)), s = sigmoid(x).
Tensor silu_second(const Tensor& x) {
  const Tensor s = sigmoid(x);
  const Tensor one_minus_2s = sub(scalar_like(x, 1.0), mul_scalar(s, 2.0));
  return mul(sigmoid_backward(scalar_like(x, 1.0), s), add_scalar(mul(x, one_minus_2s), 2.0));
}

// mish'' = (1 - t^2) s (2 + x (1 - s) - 2 x t s), t = tanh(softplus(x)),
// s = sigmoid(x) (t' = (1 - t^2) s).
Tensor mish_second(const Tensor& x) {
  const Tensor t = tanh(softplus(x, 1.0, 20.0)), s = sigmoid(x);
  const Tensor inner = sub(add_scalar(mul(x, sub(scalar_like(x, 1.0), s)), 2.0), mul_scalar(mul(x, mul(t, s)), 2.0));
  return mul(tanh_backward(s, t), inner);
}

// gelu'' = phi(x) (2 - x^2).
Tensor gelu_second(const Tensor& x) {
  const Tensor x2 = square(x);
  return mul(mul_scalar(exp(mul_scalar(x2, -0.5)), kInvSqrt2Pi), sub(scalar_like(x, 2.0), x2));
}

// gelu_tanh = x s, s = sigmoid(v), v = 2 k (x + c x^3), v' = 2 k (1 + 3 c x^2),
// q = s (1 - s) v': gelu_tanh'' = 2 q + x ((1 - 2 s) q v' + s (1 - s) v''),
// v'' = 12 k c x.
Tensor gelu_tanh_second(const Tensor& x) {
  const Tensor x2 = square(x);
  const Tensor s = sigmoid(mul_scalar(add(x, mul_scalar(mul(x, x2), kGeluC)), 2 * kGeluK));
  const Tensor dv = mul_scalar(add_scalar(mul_scalar(x2, 3 * kGeluC), 1.0), 2 * kGeluK);
  const Tensor ds = sigmoid_backward(scalar_like(x, 1.0), s);  // s (1 - s)
  const Tensor q = mul(ds, dv);
  const Tensor one_minus_2s = sub(scalar_like(x, 1.0), mul_scalar(s, 2.0));
  const Tensor inner = add(mul(mul(one_minus_2s, q), dv), mul(ds, mul_scalar(x, 12 * kGeluK * kGeluC)));
  return add(mul_scalar(q, 2.0), mul(x, inner));
}
}  // namespace

Tensor sigmoid_backward(const Tensor& g, const Tensor& y) {
  return fused_backward(g, y, kernels::BinaryKind::SigmoidBackward, "SigmoidBackwardBackward", sigmoid_backward,
                        sigmoid_second);
}

Tensor silu_backward(const Tensor& g, const Tensor& x) {
  return fused_backward(g, x, kernels::BinaryKind::SiluBackward, "SiluBackwardBackward", silu_backward, silu_second);
}

Tensor mish_backward(const Tensor& g, const Tensor& x) {
  return fused_backward(g, x, kernels::BinaryKind::MishBackward, "MishBackwardBackward", mish_backward, mish_second);
}

Tensor gelu_backward(const Tensor& g, const Tensor& x) {
  return fused_backward(g, x, kernels::BinaryKind::GeluBackward, "GeluBackwardBackward", gelu_backward, gelu_second);
}

Tensor gelu_tanh_backward(const Tensor& g, const Tensor& x) {
  return fused_backward(g, x, kernels::BinaryKind::GeluTanhBackward, "GeluTanhBackwardBackward", gelu_tanh_backward,
                        gelu_tanh_second);
}

// ---- added in 0.2 ----

namespace {
// g where lo < x < hi (closed: <=), else 0 (a select).
Tensor pass_inside(const Tensor& g, const Tensor& x, double lo, double hi, bool closed) {
  const Tensor in = inside(x, lo, hi, closed);
  return zero_where(eq(in, scalar_like(in, 0.0)), g);
}
}  // namespace

// logit: y = log(z / (1 - z)), z = x clamped to [eps, 1 - eps] (eps < 0 or
// NaN: z = x); dx = g / (x (1 - x)), 0 outside [eps, 1 - eps], and NaN
// outside [0, 1] without eps (PyTorch).
Tensor logit(const Tensor& x, double eps) {
  const double e = eps >= 0.0 ? eps : -1.0;
  return unary_op(
      x, K::Logit, "LogitBackward", Save::Input,
      [](Tensor g, const Tensor& x, double eps, double) {
        const Tensor d = div(g, mul(x, sub(scalar_like(x, 1.0), x)));
        if (eps >= 0.0) return pass_inside(d, x, eps, 1.0 - eps, true);
        const Tensor in = inside(x, 0.0, 1.0, true);
        return where(eq(in, scalar_like(in, 0.0)), scalar_like(x, std::nan("")), d);
      },
      e);
}

// relu6 = hardtanh(x, 0, 6) (its gradient: 0 at the bounds).
Tensor relu6(const Tensor& x) { return hardtanh(x, 0.0, 6.0); }

// hardswish: y = x relu6(x + 3) / 6; dx = g (x / 3 + 1/2) on [-3, 3], 0
// below, g above (PyTorch's; a NaN x passes g). The second derivative is
// 1/3 on the open interval only, as PyTorch's: the values at the bounds
// come from a constant.
Tensor hardswish(const Tensor& x) {
  return unary_op(x, K::Hardswish, "HardswishBackward", Save::Input, [](Tensor g, const Tensor& x, double, double) {
    const Tensor outer = where(lt(x, scalar_like(x, -3.0)), scalar_like(x, 0.0),
                               where(eq(x, scalar_like(x, -3.0)), scalar_like(x, -0.5),
                                     where(eq(x, scalar_like(x, 3.0)), scalar_like(x, 1.5), scalar_like(x, 1.0))));
    const Tensor zero = scalar_like(x, 0.0);
    const Tensor open = gt(inside(x, -3.0, 3.0, false), zero);
    return where(open, mul(g, add_scalar(mul_scalar(x, 1.0 / 3.0), 0.5)), mul(g, outer));
  });
}

// hardsigmoid: y = relu6(x + 3) / 6; dx = g / 6 on (-3, 3), else 0.
Tensor hardsigmoid(const Tensor& x) {
  return unary_op(x, K::Hardsigmoid, "HardsigmoidBackward", Save::Input, [](Tensor g, const Tensor& x, double, double) {
    return pass_inside(mul_scalar(g, 1.0 / 6.0), x, -3.0, 3.0, false);
  });
}

// softsign: y = x / (1 + |x|); dx = g / (1 + |x|)^2.
Tensor softsign(const Tensor& x) {
  return unary_op(x, K::Softsign, "SoftsignBackward", Save::Input, [](Tensor g, const Tensor& x, double, double) {
    return div(g, square(add_scalar(abs(x), 1.0)));
  });
}

// logsigmoid: y = log sigmoid(x) = -softplus(-x); dx = g sigmoid(-x).
Tensor logsigmoid(const Tensor& x) {
  return unary_op(x, K::LogSigmoid, "LogSigmoidBackward", Save::Input,
                  [](Tensor g, const Tensor& x, double, double) { return mul(g, sigmoid(neg(x))); });
}

// tanhshrink: y = x - tanh x; dx = g tanh(x)^2.
Tensor tanhshrink(const Tensor& x) {
  return unary_op(x, K::Tanhshrink, "TanhshrinkBackward", Save::Input,
                  [](Tensor g, const Tensor& x, double, double) { return mul(g, square(tanh(x))); });
}

// glu: a sigmoid(b) for the halves a, b of x along dim (composed of views
// and ops, so its gradients are theirs).
Tensor glu(const Tensor& x, int64_t dim) {
  check_floating(*x);
  if (x->shape().size() == 0) fail(AG_ERR_INVALID_ARGUMENT, "x has 0 dims: there is no dim to halve");
  const int d = wrap_dim(dim, x->shape().size());
  const int64_t n = x->shape()[d];
  if (n % 2 != 0) fail(AG_ERR_SHAPE, "dim ", dim, " has size ", n, ", which is not even");
  return mul(narrow(x, d, 0, n / 2), sigmoid(narrow(x, d, n / 2, n / 2)));
}

// celu: y = x for x > 0, else alpha (e^(x/alpha) - 1); dx = g, else
// g e^(x/alpha). As elu's, the exponent is min(x, 0) (a select), so the
// second derivative is 0 at x = 0 as PyTorch's.
Tensor celu(const Tensor& x, double alpha) {
  if (alpha == 0.0 || std::isnan(alpha)) fail(AG_ERR_INVALID_ARGUMENT, "alpha must be nonzero, got ", alpha);
  return unary_op(
      x, K::Celu, "CeluBackward", Save::Input,
      [](Tensor g, const Tensor& x, double alpha, double inv_alpha) {
        const Tensor zero = scalar_like(x, 0.0);
        (void)alpha;
        return where(greater(x, 0.0), g, mul(g, exp(mul_scalar(where(lt(x, zero), x, zero), inv_alpha))));
      },
      alpha, 1.0 / alpha);
}

// prelu: y = x for x > 0, else weight x, weight of shape () or (1) (one
// slope) or (C), C = x's size in dim 1 (dim 0 of a 1-dim x in PyTorch 1.13
// has no channels: C must be 1). Composed of where and mul: dx = g or
// weight g; dweight = the sum of x g where x <= 0.
Tensor prelu(const Tensor& x, const Tensor& weight) {
  check_same(*x, *weight);
  check_floating(*x);
  const Dims& ws = weight->shape();
  if (ws.size() > 1) fail(AG_ERR_SHAPE, "weight must have 0 or 1 dims, got ", ws.size());
  const int64_t wn = weight->numel();
  const int64_t channels = x->shape().size() >= 2 ? x->shape()[1] : 1;
  if (wn != 1 && wn != channels) {
    fail(AG_ERR_SHAPE, "weight has ", wn, " elements; expected 1 or the ", channels, " channels of x (its dim 1)");
  }
  Tensor w = weight;
  if (wn != 1 || ws.size() != 0) {
    Dims shape;
    shape.push_back(wn);
    for (int i = 2; i < x->shape().size(); ++i) shape.push_back(1);
    if (wn == 1) shape = Dims{};
    w = reshape(weight, shape);
  }
  return where(greater(x, 0.0), x, mul(w, x));
}

// threshold: y = x where x > threshold, else value; dx = g where x >
// threshold, else 0 (a NaN x passes g).
Tensor threshold(const Tensor& x, double threshold, double value) {
  return unary_op(
      x, K::Threshold, "ThresholdBackward", Save::Input,
      [](Tensor g, const Tensor& x, double th, double) { return zero_where(le(x, scalar_like(x, th)), g); },
      threshold, value);
}

// softshrink: x - lambd above lambd, x + lambd below -lambd, else 0;
// hardshrink: x outside [-lambd, lambd], else 0. dx = g outside
// [-lambd, lambd], else 0 (PyTorch's; a NaN x passes g).
Tensor softshrink(const Tensor& x, double lambd) {
  if (!(lambd >= 0.0)) fail(AG_ERR_INVALID_ARGUMENT, "lambd must be at least 0, got ", lambd);
  return unary_op(
      x, K::Softshrink, "SoftshrinkBackward", Save::Input,
      [](Tensor g, const Tensor& x, double l, double) {
        const Tensor in = inside(x, -l, l, true);
        return zero_where(gt(in, scalar_like(in, 0.0)), g);
      },
      lambd);
}

Tensor hardshrink(const Tensor& x, double lambd) {
  if (std::isnan(lambd)) fail(AG_ERR_INVALID_ARGUMENT, "lambd is NaN");
  return unary_op(
      x, K::Hardshrink, "HardshrinkBackward", Save::Input,
      [](Tensor g, const Tensor& x, double l, double) {
        const Tensor in = inside(x, -l, l, true);
        return zero_where(gt(in, scalar_like(in, 0.0)), g);
      },
      lambd);
}

}  // namespace ag::ops
