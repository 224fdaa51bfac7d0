// Elementwise math of one input: the unary driver (unary_forward) and neg,
// exp, log, tanh, pow_scalar, abs, sign, expm1, log1p, log2, log10, sqrt, rsqrt,
// square, reciprocal, the trigonometric and hyperbolic functions, erf, and the
// rounding ops (floor, ceil, round, trunc), whose gradient is zero. Each op is
// its kernel plus a backward formula in ag's own ops (unary_op of
// elementwise.h), so higher derivatives come from create_graph.
#include "ops/elementwise.h"

namespace ag::ops {

namespace {

// y = k(x) for more than one grain of elements (the elementwise
// driver). Out of line: unary_forward stays small.
[[gnu::noinline]] void unary_large(const Tensor& x, kernels::UnaryKind k, double attr, double attr2, TensorImpl& y) {
  const int64_t item = static_cast<int64_t>(itemsize(x->dtype()));
  const TensorImpl* const in[1] = {x.get()};
  for_elementwise(in, x->shape(), [&](const Dims& sub, const kernels::View* v, int64_t off) {
    kernels::unary(k, x->dtype(), sub, v[0], y.data() + off * item, attr, attr2);
  }, work_of(k));
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

namespace {
using K = kernels::UnaryKind;

// The gradient of a piecewise-constant op: zeros (PyTorch's convention).
Tensor zero_grad(Tensor g, const Tensor&, double, double) { return zeros_like(g); }
}  // namespace

// neg: dx = -g.
Tensor neg(const Tensor& x) {
  return unary_op(x, K::Neg, "NegBackward", Save::Nothing, [](Tensor g, const Tensor&, double, double) { return neg(g); });
}

// exp: dx = g * y.
Tensor exp(const Tensor& x) {
  return unary_op(x, K::Exp, "ExpBackward", Save::Output,
                  [](Tensor g, const Tensor& y, double, double) { return mul(std::move(g), y); });
}

// log: dx = g / x.
Tensor log(const Tensor& x) {
  return unary_op(x, K::Log, "LogBackward", Save::Input,
                  [](Tensor g, const Tensor& x, double, double) { return div(std::move(g), x); });
}

// tanh: dx = tanh_backward(g, y) = g * (1 - y^2).
Tensor tanh(const Tensor& x) {
  return unary_op(x, K::Tanh, "TanhBackward", Save::Output,
                  [](Tensor g, const Tensor& y, double, double) { return tanh_backward(std::move(g), y); });
}

// pow_scalar: y = x^p; dx = g * p * x^(p-1), and 0 for p = 0.
Tensor pow_scalar(const Tensor& x, double p) {
  return unary_op(
      x, K::PowScalar, "PowScalarBackward", Save::Input,
      [](Tensor g, const Tensor& x, double p, double) {
        if (p == 0.0) return zeros_like(x);
        if (p == 1.0) return g;
        return mul(std::move(g), mul(pow_scalar(x, p - 1.0), scalar_like(x, p)));
      },
      p);
}

// abs: dx = g * sign(x) (0 at x = 0).
Tensor abs(const Tensor& x) {
  return unary_op(x, K::Abs, "AbsBackward", Save::Input,
                  [](Tensor g, const Tensor& x, double, double) { return mul(g, sign(x)); });
}

// sign: -1, 0 or 1 (zeros and NaN as they are); zero gradient.
Tensor sign(const Tensor& x) { return unary_op(x, K::Sign, "SignBackward", Save::Nothing, zero_grad); }

// expm1: dx = g * (y + 1).
Tensor expm1(const Tensor& x) {
  return unary_op(x, K::Expm1, "Expm1Backward", Save::Output,
                  [](Tensor g, const Tensor& y, double, double) { return mul(g, add_scalar(y, 1.0)); });
}

// log1p: dx = g / (x + 1).
Tensor log1p(const Tensor& x) {
  return unary_op(x, K::Log1p, "Log1pBackward", Save::Input,
                  [](Tensor g, const Tensor& x, double, double) { return div(g, add_scalar(x, 1.0)); });
}

// log2: dx = g / (x ln 2).
Tensor log2(const Tensor& x) {
  return unary_op(x, K::Log2, "Log2Backward", Save::Input, [](Tensor g, const Tensor& x, double, double) {
    return div(g, mul_scalar(x, 0.69314718055994530941723212145818));
  });
}

// log10: y = ln x / ln 10 (the log kernel, then one rounding of the
// product); dx = g / (x ln 10).
Tensor log10(const Tensor& x) {
  constexpr double ln10 = 2.30258509299404568401799145468436;
  const Tensor y = binary_forward(unary_forward(x, K::Log), scalar_like(x, 1.0 / ln10), kernels::BinaryKind::Mul);
  return unary_record(x, y, "Log10Backward", Save::Input,
                      [](Tensor g, const Tensor& x, double, double) { return div(std::move(g), mul_scalar(x, ln10)); });
}

// sqrt: dx = g / (2 y).
Tensor sqrt(const Tensor& x) {
  return unary_op(x, K::Sqrt, "SqrtBackward", Save::Output,
                  [](Tensor g, const Tensor& y, double, double) { return div(g, mul_scalar(y, 2.0)); });
}

// rsqrt: y = x^(-1/2); dx = -g y^3 / 2.
Tensor rsqrt(const Tensor& x) {
  return unary_op(x, K::Rsqrt, "RsqrtBackward", Save::Output, [](Tensor g, const Tensor& y, double, double) {
    return mul(g, mul_scalar(pow_scalar(y, 3.0), -0.5));
  });
}

// square: dx = 2 g x.
Tensor square(const Tensor& x) {
  return unary_op(x, K::Square, "SquareBackward", Save::Input,
                  [](Tensor g, const Tensor& x, double, double) { return mul(g, mul_scalar(x, 2.0)); });
}

// reciprocal: dx = -g y^2.
Tensor reciprocal(const Tensor& x) {
  return unary_op(x, K::Reciprocal, "ReciprocalBackward", Save::Output,
                  [](Tensor g, const Tensor& y, double, double) { return neg(mul(g, square(y))); });
}

// sin: dx = g cos x.
Tensor sin(const Tensor& x) {
  return unary_op(x, K::Sin, "SinBackward", Save::Input,
                  [](Tensor g, const Tensor& x, double, double) { return mul(g, cos(x)); });
}

// cos: dx = -g sin x.
Tensor cos(const Tensor& x) {
  return unary_op(x, K::Cos, "CosBackward", Save::Input,
                  [](Tensor g, const Tensor& x, double, double) { return neg(mul(g, sin(x))); });
}

// tan: dx = g (1 + y^2).
Tensor tan(const Tensor& x) {
  return unary_op(x, K::Tan, "TanBackward", Save::Output,
                  [](Tensor g, const Tensor& y, double, double) { return mul(g, add_scalar(square(y), 1.0)); });
}

namespace {
// 1 / sqrt(1 - x^2), the magnitude of the derivative of asin and acos.
Tensor inv_sqrt_one_minus_square(const Tensor& x) { return rsqrt(sub(scalar_like(x, 1.0), square(x))); }
}  // namespace

// asin: dx = g / sqrt(1 - x^2).
Tensor asin(const Tensor& x) {
  return unary_op(x, K::Asin, "AsinBackward", Save::Input, [](Tensor g, const Tensor& x, double, double) {
    return mul(g, inv_sqrt_one_minus_square(x));
  });
}

// acos: dx = -g / sqrt(1 - x^2).
Tensor acos(const Tensor& x) {
  return unary_op(x, K::Acos, "AcosBackward", Save::Input, [](Tensor g, const Tensor& x, double, double) {
    return neg(mul(g, inv_sqrt_one_minus_square(x)));
  });
}

// atan: dx = g / (1 + x^2).
Tensor atan(const Tensor& x) {
  return unary_op(x, K::Atan, "AtanBackward", Save::Input,
                  [](Tensor g, const Tensor& x, double, double) { return div(g, add_scalar(square(x), 1.0)); });
}

// sinh: dx = g cosh x.
Tensor sinh(const Tensor& x) {
  return unary_op(x, K::Sinh, "SinhBackward", Save::Input,
                  [](Tensor g, const Tensor& x, double, double) { return mul(g, cosh(x)); });
}

// cosh: dx = g sinh x.
Tensor cosh(const Tensor& x) {
  return unary_op(x, K::Cosh, "CoshBackward", Save::Input,
                  [](Tensor g, const Tensor& x, double, double) { return mul(g, sinh(x)); });
}

// erf: dx = g (2 / sqrt pi) e^(-x^2).
Tensor erf(const Tensor& x) {
  return unary_op(x, K::Erf, "ErfBackward", Save::Input, [](Tensor g, const Tensor& x, double, double) {
    return mul(g, mul_scalar(exp(neg(square(x))), 1.1283791670955125738961589031215));
  });
}

// Rounding to integral values (round: halfway cases to even); zero gradient.
Tensor floor(const Tensor& x) { return unary_op(x, K::Floor, "FloorBackward", Save::Nothing, zero_grad); }
Tensor ceil(const Tensor& x) { return unary_op(x, K::Ceil, "CeilBackward", Save::Nothing, zero_grad); }
Tensor round(const Tensor& x) { return unary_op(x, K::Round, "RoundBackward", Save::Nothing, zero_grad); }
Tensor trunc(const Tensor& x) { return unary_op(x, K::Trunc, "TruncBackward", Save::Nothing, zero_grad); }

}  // namespace ag::ops
