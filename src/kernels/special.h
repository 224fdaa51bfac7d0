// Special functions with no SIMD form: erfinv, lgamma, digamma and
// polygamma, one element at a time in double (f32 inputs are widened and the
// result rounded once). The kernel kinds of kernels.def marked SCALAR call
// them through the unary driver of elementwise.cc. Thread-safe (no global
// state: lgamma_r, not lgamma, which writes signgam).
#pragma once

#include <cstdint>

namespace ag::kernels::special {

// erfinv(y): erfinv(+-1) = +-inf, |y| > 1 and NaN -> NaN, erfinv(+-0) = +-0.
double erfinv(double y);
// ln |Gamma(x)|: +inf at 0, at the negative integers and at +-inf.
double lgamma(double x);
// digamma(x) = Gamma'(x) / Gamma(x): -inf at +0, +inf at -0 (as PyTorch),
// NaN at the negative integers and -inf, +inf at +inf.
double digamma(double x);
// polygamma(n, x), the n-th derivative of digamma (n >= 0): n = 0 is
// digamma; n >= 1 is (-1)^(n+1) n! zeta(n + 1, x), (-1)^(n+1) inf at the
// poles x = 0, -1, -2, ... (as PyTorch); NaN below -1e7 for n >= 2.
double polygamma(int64_t n, double x);

// Functors of the SCALAR kernel kinds (T: float or double).
struct Fn {
  double (*f)(double);
  template <class T>
  T operator()(T x) const {
    return static_cast<T>(f(static_cast<double>(x)));
  }
};
struct Polygamma {
  double n;
  template <class T>
  T operator()(T x) const {
    return static_cast<T>(polygamma(static_cast<int64_t>(n), static_cast<double>(x)));
  }
};

}  // namespace ag::kernels::special
