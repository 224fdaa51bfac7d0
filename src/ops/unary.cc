// Elementwise math of one input: the unary driver (unary_forward) and neg,
// exp, log, tanh, pow_scalar, abs, sign, expm1, log1p, log2, log10, sqrt, rsqrt,
// square, reciprocal, the trigonometric and hyperbolic functions, erf, the
// rounding ops (floor, ceil, round, trunc), whose gradient is zero, and (0.2)
// exp2, erfc, erfinv, lgamma, digamma, polygamma, sinc, asinh, acosh, atanh,
// frac and nan_to_num. Each op is
// its kernel plus a backward formula in ag's own ops (unary_op of
// elementwise.h), so higher derivatives come from create_graph.
#include <limits>

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

// unary_into for more than one element.
[[gnu::noinline]] void unary_into_elements(const Tensor& x, kernels::UnaryKind k, double attr, double attr2,
                                           TensorImpl& y) {
  if (x->numel() <= grain(work_of(k))) {
    // One kernel call over the whole shape (what for_slices makes of it);
    // contiguous, its one row straight away.
    if (x->is_contiguous()) {
      kernels::unary_flat(k, x->dtype(), x->data(), y.data(), static_cast<size_t>(x->numel()), attr, attr2);
    } else {
      kernels::unary(k, x->dtype(), x->shape(), view_of(*x), y.data(), attr, attr2);
    }
  } else {
    unary_large(x, k, attr, attr2, y);
  }
}

// y = k(x) for a contiguous y of x's shape. One element (scalar chains) goes
// straight to the kernel, without a call frame of its own.
inline void unary_into(const Tensor& x, kernels::UnaryKind k, double attr, double attr2, TensorImpl& y) {
  if (x->numel() == 1) {
    kernels::unary_one(k, x->dtype(), x->data(), y.data(), attr, attr2);
  } else {
    unary_into_elements(x, k, attr, attr2, y);
  }
}

}  // namespace

Tensor unary_forward(const Tensor& x, kernels::UnaryKind k, double attr, double attr2) {
  check_floating(*x);
  Tensor y = empty(x->context(), x->dtype(), x->shape());
  unary_into(x, k, attr, attr2, *y);
  if (Recorder* r = recording()) [[unlikely]] {
    if (x->numel() == 1) {
      // One element (scalar chains): the kernel on the resolved pointers,
      // which stay put while the recording keeps the tensors.
      r->keep(x), r->keep(y);
      r->add(*y, [k, attr, attr2, dt = x->dtype(), px = x->data(), py = y->data()] {
        kernels::unary_one(k, dt, px, py, attr, attr2);
      });
    } else {
      r->add(*y, [x, k, attr, attr2, y] { unary_into(x, k, attr, attr2, *y); });
    }
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
  return unary_op(
      x, K::Exp, "ExpBackward", Save::Output, [](Tensor g, const Tensor& y, double, double) { return mul(std::move(g), y); },
      0.0, 0.0, InPlaceGrad(kernels::BinaryKind::Mul));
}

// log: dx = g / x.
Tensor log(const Tensor& x) {
  return unary_op(x, K::Log, "LogBackward", Save::Input,
                  [](Tensor g, const Tensor& x, double, double) { return div(std::move(g), x); });
}

// tanh: dx = tanh_backward(g, y) = g * (1 - y^2).
Tensor tanh(const Tensor& x) {
  return unary_op(
      x, K::Tanh, "TanhBackward", Save::Output,
      [](Tensor g, const Tensor& y, double, double) { return tanh_backward(std::move(g), y); }, 0.0, 0.0,
      InPlaceGrad(kernels::BinaryKind::TanhBackward));
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

// ---- added in 0.2 ----

// exp2: y = 2^x; dx = g y ln 2.
Tensor exp2(const Tensor& x) {
  return unary_op(x, K::Exp2, "Exp2Backward", Save::Output, [](Tensor g, const Tensor& y, double, double) {
    return mul(std::move(g), mul_scalar(y, 0.69314718055994530941723212145818));
  });
}

// erfc: y = 1 - erf x; dx = -g (2 / sqrt pi) e^(-x^2).
Tensor erfc(const Tensor& x) {
  return unary_op(x, K::Erfc, "ErfcBackward", Save::Input, [](Tensor g, const Tensor& x, double, double) {
    return mul(g, mul_scalar(exp(neg(square(x))), -1.1283791670955125738961589031215));
  });
}

// erfinv (a scalar kernel, special.h): dx = g (sqrt pi / 2) e^(y^2).
Tensor erfinv(const Tensor& x) {
  return unary_op(x, K::Erfinv, "ErfinvBackward", Save::Output, [](Tensor g, const Tensor& y, double, double) {
    return mul(g, mul_scalar(exp(square(y)), 0.88622692545275801364908374167057));
  });
}

// lgamma (scalar kernel): y = ln |Gamma(x)|; dx = g digamma(x).
Tensor lgamma(const Tensor& x) {
  return unary_op(x, K::Lgamma, "LgammaBackward", Save::Input,
                  [](Tensor g, const Tensor& x, double, double) { return mul(g, digamma(x)); });
}

// polygamma(n, x) (scalar kernel; n = 0 is digamma): dx = g polygamma(n + 1, x).
Tensor polygamma(int64_t n, const Tensor& x) {
  if (n < 0) fail(AG_ERR_INVALID_ARGUMENT, "order must be non-negative, got ", n);
  return unary_op(
      x, K::Polygamma, n == 0 ? "DigammaBackward" : "PolygammaBackward", Save::Input,
      [](Tensor g, const Tensor& x, double n, double) {
        return mul(g, polygamma(static_cast<int64_t>(n) + 1, x));
      },
      static_cast<double>(n));
}

Tensor digamma(const Tensor& x) { return polygamma(0, x); }

// sinc: y = sin(pi x) / (pi x), 1 at 0; dx = g (cos(pi x) - y) / x, which
// cancels near 0: there (|pi x| < 1/100) its Taylor series
// pi (-u/3 + u^3/30 - u^5/840 + u^7/45360), u = pi x, which also gives the
// exact second derivative -pi^2/3 at 0 (PyTorch: NaN). The formula runs on x
// with those elements replaced by 1, so that no 0/0 enters the graph.
Tensor sinc(const Tensor& x) {
  return unary_op(x, K::Sinc, "SincBackward", Save::Input, [](Tensor g, const Tensor& x, double, double) {
    constexpr double pi = 3.14159265358979323846264338327950288;
    const Tensor small = le(abs(x), scalar_like(x, 0.01 / pi));
    const Tensor xs = where(small, scalar_like(x, 1.0), x);
    const Tensor far = div(sub(cos(mul_scalar(xs, pi)), sinc(xs)), xs);
    const Tensor u = mul_scalar(x, pi), u2 = square(u);
    const Tensor poly = add_scalar(mul(u2, add_scalar(mul(u2, add_scalar(mul_scalar(u2, 1.0 / 45360), -1.0 / 840)), 1.0 / 30)),
                                   -1.0 / 3);
    return mul(g, where(small, mul_scalar(mul(u, poly), pi), far));
  });
}

// asinh: dx = g / sqrt(x^2 + 1).
Tensor asinh(const Tensor& x) {
  return unary_op(x, K::Asinh, "AsinhBackward", Save::Input, [](Tensor g, const Tensor& x, double, double) {
    return mul(g, rsqrt(add_scalar(square(x), 1.0)));
  });
}

// acosh: dx = g / sqrt(x^2 - 1).
Tensor acosh(const Tensor& x) {
  return unary_op(x, K::Acosh, "AcoshBackward", Save::Input, [](Tensor g, const Tensor& x, double, double) {
    return mul(g, rsqrt(add_scalar(square(x), -1.0)));
  });
}

// atanh: dx = g / (1 - x^2).
Tensor atanh(const Tensor& x) {
  return unary_op(x, K::Atanh, "AtanhBackward", Save::Input, [](Tensor g, const Tensor& x, double, double) {
    return div(g, sub(scalar_like(x, 1.0), square(x)));
  });
}

// frac: y = x - trunc(x); dx = g.
Tensor frac(const Tensor& x) {
  return unary_op(x, K::Frac, "FracBackward", Save::Nothing, [](Tensor g, const Tensor&, double, double) { return g; });
}

// nan_to_num: NaN -> nan, +inf -> posinf, -inf -> neginf (NaN for either
// infinity: the dtype's largest or lowest finite value), two kernel passes;
// dx = g where x is finite, else 0 (PyTorch).
Tensor nan_to_num(const Tensor& x, double nan, double posinf, double neginf) {
  check_floating(*x);
  const bool f32 = x->dtype() == DType::F32;
  const double big = f32 ? std::numeric_limits<float>::max() : std::numeric_limits<double>::max();
  if (std::isnan(posinf)) posinf = big;
  if (std::isnan(neginf)) neginf = -big;
  const Tensor y = unary_forward(unary_forward(x, K::NanPosinfTo, nan, posinf), K::NeginfTo, neginf);
  return unary_record(x, y, "NanToNumBackward", Save::Input, [](Tensor g, const Tensor& x, double, double) {
    constexpr double inf = std::numeric_limits<double>::infinity();
    const Tensor finite = inside(x, -inf, inf, false);
    return zero_where(eq(finite, scalar_like(finite, 0.0)), g);
  });
}

}  // namespace ag::ops
