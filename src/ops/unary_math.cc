// Elementwise math of one input: abs, sign, expm1, log1p, log2, sqrt, rsqrt,
// square, reciprocal, the trigonometric and hyperbolic functions, erf, and
// the rounding ops (floor, ceil, round, trunc), whose gradient is zero.
// Each op is its kernel plus a backward formula in ag's own ops
// (elementwise.h), so higher derivatives come from create_graph.
#include "ops/elementwise.h"

namespace ag::ops {

namespace {
using K = kernels::UnaryKind;

// The gradient of a piecewise-constant op: zeros (PyTorch's convention).
Tensor zero_grad(const Tensor& g, const Tensor&, double, double) { return zeros_like(g); }
}  // namespace

// abs: dx = g * sign(x) (0 at x = 0).
Tensor abs(const Tensor& x) {
  return unary_op(x, K::Abs, "AbsBackward", Save::Input,
                  [](const Tensor& g, const Tensor& x, double, double) { return mul(g, sign(x)); });
}

// sign: -1, 0 or 1 (zeros and NaN as they are); zero gradient.
Tensor sign(const Tensor& x) { return unary_op(x, K::Sign, "SignBackward", Save::Nothing, zero_grad); }

// expm1: dx = g * (y + 1).
Tensor expm1(const Tensor& x) {
  return unary_op(x, K::Expm1, "Expm1Backward", Save::Output,
                  [](const Tensor& g, const Tensor& y, double, double) { return mul(g, add_scalar(y, 1.0)); });
}

// log1p: dx = g / (x + 1).
Tensor log1p(const Tensor& x) {
  return unary_op(x, K::Log1p, "Log1pBackward", Save::Input,
                  [](const Tensor& g, const Tensor& x, double, double) { return div(g, add_scalar(x, 1.0)); });
}

// log2: dx = g / (x ln 2).
Tensor log2(const Tensor& x) {
  return unary_op(x, K::Log2, "Log2Backward", Save::Input, [](const Tensor& g, const Tensor& x, double, double) {
    return div(g, mul_scalar(x, 0.69314718055994530941723212145818));
  });
}

// sqrt: dx = g / (2 y).
Tensor sqrt(const Tensor& x) {
  return unary_op(x, K::Sqrt, "SqrtBackward", Save::Output,
                  [](const Tensor& g, const Tensor& y, double, double) { return div(g, mul_scalar(y, 2.0)); });
}

// rsqrt: y = x^(-1/2); dx = -g y^3 / 2.
Tensor rsqrt(const Tensor& x) {
  return unary_op(x, K::Rsqrt, "RsqrtBackward", Save::Output, [](const Tensor& g, const Tensor& y, double, double) {
    return mul(g, mul_scalar(pow_scalar(y, 3.0), -0.5));
  });
}

// square: dx = 2 g x.
Tensor square(const Tensor& x) {
  return unary_op(x, K::Square, "SquareBackward", Save::Input,
                  [](const Tensor& g, const Tensor& x, double, double) { return mul(g, mul_scalar(x, 2.0)); });
}

// reciprocal: dx = -g y^2.
Tensor reciprocal(const Tensor& x) {
  return unary_op(x, K::Reciprocal, "ReciprocalBackward", Save::Output,
                  [](const Tensor& g, const Tensor& y, double, double) { return neg(mul(g, square(y))); });
}

// sin: dx = g cos x.
Tensor sin(const Tensor& x) {
  return unary_op(x, K::Sin, "SinBackward", Save::Input,
                  [](const Tensor& g, const Tensor& x, double, double) { return mul(g, cos(x)); });
}

// cos: dx = -g sin x.
Tensor cos(const Tensor& x) {
  return unary_op(x, K::Cos, "CosBackward", Save::Input,
                  [](const Tensor& g, const Tensor& x, double, double) { return neg(mul(g, sin(x))); });
}

// tan: dx = g (1 + y^2).
Tensor tan(const Tensor& x) {
  return unary_op(x, K::Tan, "TanBackward", Save::Output,
                  [](const Tensor& g, const Tensor& y, double, double) { return mul(g, add_scalar(square(y), 1.0)); });
}

namespace {
// 1 / sqrt(1 - x^2), the magnitude of the derivative of asin and acos.
Tensor inv_sqrt_one_minus_square(const Tensor& x) { return rsqrt(sub(scalar_like(x, 1.0), square(x))); }
}  // namespace

// asin: dx = g / sqrt(1 - x^2).
Tensor asin(const Tensor& x) {
  return unary_op(x, K::Asin, "AsinBackward", Save::Input, [](const Tensor& g, const Tensor& x, double, double) {
    return mul(g, inv_sqrt_one_minus_square(x));
  });
}

// acos: dx = -g / sqrt(1 - x^2).
Tensor acos(const Tensor& x) {
  return unary_op(x, K::Acos, "AcosBackward", Save::Input, [](const Tensor& g, const Tensor& x, double, double) {
    return neg(mul(g, inv_sqrt_one_minus_square(x)));
  });
}

// atan: dx = g / (1 + x^2).
Tensor atan(const Tensor& x) {
  return unary_op(x, K::Atan, "AtanBackward", Save::Input,
                  [](const Tensor& g, const Tensor& x, double, double) { return div(g, add_scalar(square(x), 1.0)); });
}

// sinh: dx = g cosh x.
Tensor sinh(const Tensor& x) {
  return unary_op(x, K::Sinh, "SinhBackward", Save::Input,
                  [](const Tensor& g, const Tensor& x, double, double) { return mul(g, cosh(x)); });
}

// cosh: dx = g sinh x.
Tensor cosh(const Tensor& x) {
  return unary_op(x, K::Cosh, "CoshBackward", Save::Input,
                  [](const Tensor& g, const Tensor& x, double, double) { return mul(g, sinh(x)); });
}

// erf: dx = g (2 / sqrt pi) e^(-x^2).
Tensor erf(const Tensor& x) {
  return unary_op(x, K::Erf, "ErfBackward", Save::Input, [](const Tensor& g, const Tensor& x, double, double) {
    return mul(g, mul_scalar(exp(neg(square(x))), 1.1283791670955125738961589031215));
  });
}

// Rounding to integral values (round: halfway cases to even); zero gradient.
Tensor floor(const Tensor& x) { return unary_op(x, K::Floor, "FloorBackward", Save::Nothing, zero_grad); }
Tensor ceil(const Tensor& x) { return unary_op(x, K::Ceil, "CeilBackward", Save::Nothing, zero_grad); }
Tensor round(const Tensor& x) { return unary_op(x, K::Round, "RoundBackward", Save::Nothing, zero_grad); }
Tensor trunc(const Tensor& x) { return unary_op(x, K::Trunc, "TruncBackward", Save::Nothing, zero_grad); }

}  // namespace ag::ops
