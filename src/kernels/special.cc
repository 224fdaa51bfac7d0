// Special functions one element at a time (see special.h): the kernels of
// the SCALAR kinds of kernels.def. Methods: erfinv refines a polynomial
// first guess (Giles 2010) by Halley steps on erf or, for |y| > 1/2, on erfc
// against the exact 1 - |y|; digamma shifts x to 10 or more by its
// recurrence and sums the asymptotic series (reflection below 0);
// polygamma sums the Hurwitz zeta function directly up to 10 and then by
// Euler-Maclaurin.
#include "kernels/special.h"

#include <cmath>
#include <limits>

namespace ag::kernels::special {

namespace {
constexpr double kPi = 3.14159265358979323846264338327950288;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The first guess: Giles' single-precision approximation.
double erfinv_guess(double y) {
  double w = -std::log((1.0 - y) * (1.0 + y)), p;
  if (w < 5.0) {
    w -= 2.5;
    p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w;
    p = -3.5233877e-06 + p * w;
    p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w;
    p = -0.00125372503 + p * w;
    p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w;
    p = 1.50140941 + p * w;
  } else {
    w = std::sqrt(w) - 3.0;
    p = -0.000200214257;
    p = 0.000100950558 + p * w;
    p = 0.00134934322 + p * w;
    p = -0.00367342844 + p * w;
    p = 0.00573950773 + p * w;
    p = -0.0076224613 + p * w;
    p = 0.00943887047 + p * w;
    p = 1.00167406 + p * w;
    p = 2.83297682 + p * w;
  }
  return p * y;
}
}  // namespace

double erfinv(double y) {
  const double a = std::fabs(y);
  if (!(a <= 1.0)) return kNaN;
  if (a == 1.0) return std::copysign(kInf, y);
  if (a == 0.0) return y;
  double x = erfinv_guess(a);
  const double tail = 1.0 - a;  // exact for a >= 1/2
  // The first guess is poor in the far tail (|y| > 1 - 1e-7): up to 12 steps.
  for (int i = 0; i < 12; ++i) {
    const double f = a > 0.5 ? tail - std::erfc(x) : std::erf(x) - a;
    const double r = f / (1.1283791670955125738961589031215 * std::exp(-x * x));  // f / f'
    const double step = r / (1.0 + x * r);                                          // Halley: f'' = -2 x f'
    x -= step;
    if (!(std::fabs(step) > 1e-17 * x)) break;
  }
  return std::copysign(x, y);
}

double lgamma(double x) {
  int sign = 0;
  return ::lgamma_r(x, &sign);
}

double digamma(double x) {
  if (x == 0.0) return std::copysign(kInf, -x);
  if (std::isnan(x) || x == kInf) return x;
  if (x < 0.0) {
    if (x == std::trunc(x)) return kNaN;  // the poles and -inf
    // psi(x) = psi(1 - x) - pi / tan(pi x), tan taken of the exact fraction of x.
    double whole;
    const double r = std::modf(x, &whole);
    return digamma(1.0 - x) - kPi / std::tan(kPi * r);
  }
  double result = 0.0;
  while (x < 10.0) {
    result -= 1.0 / x;
    x += 1.0;
  }
  // psi(x) ~ ln x - 1/(2x) - sum B_2k / (2k x^2k).
  const double z = 1.0 / (x * x);
  const double series =
      z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (1.0 / 240 - z * (1.0 / 132 - z * (691.0 / 32760 - z / 12))))));
  return result + std::log(x) - 0.5 / x - series;
}

namespace {
// zeta(s, q) = sum_k (q + k)^-s for an integral s >= 2; q not a pole.
double hurwitz_zeta(double s, double q) {
  double sum = 0.0;
  for (; q < 10.0; q += 1.0) sum += std::pow(q, -s);
  // Euler-Maclaurin: the integral, half the first term and
  // sum_j B_2j / (2j)! s (s+1) ... (s+2j-2) q^(-s-2j+1).
  static constexpr double kB2jOverFact[] = {
      1.0 / 12, -1.0 / 720, 1.0 / 30240, -1.0 / 1209600, 1.0 / 47900160,
      -691.0 / 1307674368000, 1.0 / 74724249600, -3617.0 / 10670622842880000.0,
      43867.0 / 5109094217170944000.0, -174611.0 / 802857662698291200000.0};
  sum += std::pow(q, 1.0 - s) / (s - 1.0) + 0.5 * std::pow(q, -s);
  double term = s * std::pow(q, -s - 1.0);
  const double q2 = q * q;
  for (int j = 1; j <= 10; ++j) {
    sum += kB2jOverFact[j - 1] * term;
    term *= (s + 2 * j - 1) * (s + 2 * j) / q2;
  }
  return sum;
}

// polygamma(1, x), by reflection below 0 (no long direct sum).
double trigamma(double x) {
  if (x < 0.0) {
    const double s = std::sin(kPi * (x - std::nearbyint(x)));
    return kPi * kPi / (s * s) - trigamma(1.0 - x);
  }
  return hurwitz_zeta(2.0, x);
}
}  // namespace

double polygamma(int64_t n, double x) {
  if (n == 0) return digamma(x);
  if (std::isnan(x) || x == -kInf) return kNaN;
  if (x <= 0.0 && x == std::floor(x)) return n % 2 == 1 ? kInf : -kInf;  // the poles and -inf (PyTorch's signs)
  if (n == 1) return trigamma(x);
  // The direct sum from x < 0 takes -x terms: far below 0 the result is
  // not computed (NaN) rather than taking seconds.
  if (x < -1e7) return kNaN;
  // n! overflows at n = 171: stop there, so a huge n costs no time (the
  // result is then inf times the zeta factor, as PyTorch's formula).
  double factorial = 1.0;
  for (int64_t k = 2; k <= n && factorial < kInf; ++k) factorial *= static_cast<double>(k);
  return (n % 2 == 1 ? factorial : -factorial) * hurwitz_zeta(static_cast<double>(n + 1), x);
}

}  // namespace ag::kernels::special
