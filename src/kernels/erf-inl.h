// Per-target erf, erfc and the standard normal CDF (Highway 1.0.3 has no
// erf), for lane types f32 and f64. Three Chebyshev series, evaluated by
// Clenshaw's recurrence (stable, unlike their monomial form):
//   |x| < 1:      erf(x) = x * S(2 x^2 - 1),
//   1/2 <= a < 3: erfc(a) = e^(-a^2) * M((a - 1.75) / 1.25) (used from 1 by
//                 erf, from 1/2 by the normal CDF's lower tail),
//   a >= 3:       erfc(a) = e^(-a^2) * T(6 / a - 1) / a.
// The coefficients interpolate erf(x)/x, erfcx(a) and a*erfcx(a) at 40
// Chebyshev nodes, computed with 50-digit arithmetic (mpmath); f32 keeps the
// leading terms whose tail is below 1.5e-8, f64 below 2e-17. Measured error
// of erf over all inputs on every target: 2 ulp in f32 and in f64 (relative
// error below 4.5e-16); the normal CDF keeps its relative accuracy in the
// lower tail (gelu: 5 / 6 ulp down to x = -12). A series whose region no
// lane of a vector falls in is skipped. Same toggling guard as simd-inl.h.

#if defined(AG_KERNELS_ERF_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef AG_KERNELS_ERF_INL_H_
#undef AG_KERNELS_ERF_INL_H_
#else
#define AG_KERNELS_ERF_INL_H_
#endif

#include "kernels/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ag::kernels::HWY_NAMESPACE {

namespace erf_detail {

// erf(x) / x as a series in s = 2 x^2 - 1, |x| < 1 ; f64 uses 12 terms, f32 7
constexpr double kErfSmall[] = {
    9.754769393826541e-1,
    -1.4226120510371364e-1,
    1.0035582187599796e-2,
    -5.7687646997674848e-4,
    2.7419931252196061e-5,
    -1.1043175507344508e-6,
    3.8488755420345037e-8,
    -1.1808582533875467e-9,
    3.233421582605091e-11,
    -7.9910159470045488e-13,
    1.7990725113961456e-14,
    -3.7186354878186926e-16,
};
constexpr int kErfSmallTerms[2] = {7, 12};  // f32, f64
// erfcx(a) = e^(a^2) erfc(a) in s = (a - 1.75) / 1.25, 0.5 <= a < 3 ; f64 uses 24 terms, f32 13
constexpr double kErfcxMid[] = {
    3.3767541291270317e-1,
    -2.0312682790325261e-1,
    5.6012065857580275e-2,
    -1.4382627629996409e-2,
    3.4761764648834738e-3,
    -7.9704750451535697e-4,
    1.7441800602994392e-4,
    -3.6599916308240563e-5,
    7.3929315935785615e-6,
    -1.4420459716985373e-6,
    2.7234956938177341e-7,
    -4.9917046522406558e-8,
    8.8961149986957827e-9,
    -1.5442843904355806e-9,
    2.6150903228745477e-10,
    -4.3257559615179448e-11,
    6.9980138074700394e-12,
    -1.1083940801779288e-12,
    1.720460124641083e-13,
    -2.6194604491111086e-14,
    3.9151483738948073e-15,
    -5.7487950150936234e-16,
    8.2984121516404031e-17,
    -1.1783583879897592e-17,
};
constexpr int kErfcxMidTerms[2] = {13, 24};  // f32, f64
// a erfcx(a) in s = 6 / a - 1, a >= 3 ; f64 uses 20 terms, f32 8
constexpr double kErfcxTail[] = {
    5.5361488786406255e-1,
    -1.380962647295226e-2,
    -3.0315568258966747e-3,
    2.1991896709349211e-4,
    1.3081368026184262e-5,
    -3.3999321687626554e-6,
    1.1254538053165537e-7,
    4.2529264827920122e-8,
    -6.556364159480241e-9,
    -7.4856950392976332e-11,
    1.519594895239475e-10,
    -1.8847426108383922e-11,
    -1.1317681085105734e-12,
    6.8201854345864707e-13,
    -7.6825048239947582e-14,
    -7.7500573114248429e-15,
    3.7975183047910831e-15,
    -4.3260840259233138e-16,
    -5.0270661326041807e-17,
    2.5416442147220287e-17,
};
constexpr int kErfcxTailTerms[2] = {8, 20};  // f32, f64

// sum c[k] T_k(s) for k < n, by Clenshaw's recurrence.
template <class D, class V>
HWY_INLINE V Chebyshev(D d, const double* c, int n, V s) {
  using T = hn::TFromD<D>;
  const V s2 = hn::Add(s, s);
  V b1 = hn::Zero(d), b2 = hn::Zero(d);
  // b = (c[k] - b2) + s2 b1 as one fused multiply-add: c[k] - b2 is ready
  // a step early, so the chain from term to term is one FMA (a third of the
  // latency of mul, add, sub), and one rounding fewer.
  for (int k = n - 1; k >= 1; --k) {
    const V b = hn::MulAdd(s2, b1, hn::Sub(hn::Set(d, static_cast<T>(c[k])), b2));
    b2 = b1;
    b1 = b;
  }
  return hn::MulAdd(s, b1, hn::Sub(hn::Set(d, static_cast<T>(c[0])), b2));
}

template <class T>
constexpr int terms(const int (&n)[2]) {
  return n[sizeof(T) == 4 ? 0 : 1];
}

// erf(z) / z for |z| < 1.
template <class D, class V>
HWY_INLINE V ErfOverX(D d, V z) {
  using T = hn::TFromD<D>;
  const V s = hn::Sub(hn::Mul(hn::Set(d, T(2)), hn::Mul(z, z)), hn::Set(d, T(1)));
  return Chebyshev(d, kErfSmall, terms<T>(kErfSmallTerms), s);
}

// erfc(a) = e * erfcx(a) for a >= 1/2 given e = e^(-a^2) (a = +inf gives 0);
// lanes below 1/2 are garbage.
template <class D, class V>
HWY_INLINE V ErfcLarge(D d, V a, V e) {
  using T = hn::TFromD<D>;
  const auto mid = hn::Lt(a, hn::Set(d, T(3)));
  V g = hn::Zero(d);
  if (!hn::AllFalse(d, mid)) {
    const V s = hn::Mul(hn::Sub(a, hn::Set(d, T(1.75))), hn::Set(d, T(0.8)));
    g = Chebyshev(d, kErfcxMid, terms<T>(kErfcxMidTerms), s);
  }
  if (!hn::AllTrue(d, mid)) {
    const V s = hn::Sub(hn::Div(hn::Set(d, T(6)), a), hn::Set(d, T(1)));
    const V tail = hn::Div(Chebyshev(d, kErfcxTail, terms<T>(kErfcxTailTerms), s), a);
    g = hn::IfThenElse(mid, g, tail);
  }
  return hn::Mul(e, g);
}

// e^(c x^2) for c < 0 a power of two (c times a lane value is exact),
// without the rounding error of x^2 in the exponent (which would cost up to
// |c| x^2 ulp). With a fused multiply-add x^2 = s + r exactly (s = x * x
// rounded, r = fma(x, x, -s)), and e^(c r) = 1 + c r to within (c r)^2 / 2,
// far below an ulp: one exponential. Without one, x = h + l with h holding
// the upper half of the mantissa, so h^2 is exact, and x^2 = h^2 + l (x + h):
// two.
template <class D, class V>
HWY_INLINE V ExpScaledSquare(D d, V x, hn::TFromD<D> c) {
  const V cv = hn::Set(d, c);
#if HWY_NATIVE_FMA
  const V s = hn::Mul(x, x);
  const V r = hn::MulSub(x, x, s);
  const V e = ExpK()(d, hn::Mul(s, cv));
  return hn::MulAdd(hn::Mul(e, cv), r, e);
#else
  using T = hn::TFromD<D>;
  const hn::RebindToUnsigned<D> du;
  using U = hn::TFromD<decltype(du)>;
  const U keep = static_cast<U>(~U(0) << (sizeof(T) == 4 ? 12 : 27));
  const V h = hn::BitCast(d, hn::And(hn::BitCast(du, x), hn::Set(du, keep)));
  const V l = hn::Sub(x, h);
  return hn::Mul(ExpK()(d, hn::Mul(hn::Mul(h, h), cv)), ExpK()(d, hn::Mul(hn::Mul(l, hn::Add(x, h)), cv)));
#endif
}

}  // namespace erf_detail

// erf(x): erf(+-0) = +-0, erf(+-inf) = +-1, NaN -> NaN.
template <class D, class V>
HWY_INLINE V Erf(D d, V x) {
  using T = hn::TFromD<D>;
  const V a = hn::Abs(x);
  const auto small = hn::Lt(a, hn::Set(d, T(1)));
  V y = hn::Zero(d);
  if (!hn::AllFalse(d, small)) y = hn::Mul(x, erf_detail::ErfOverX(d, x));
  if (!hn::AllTrue(d, small)) {
    const V e = ExpK()(d, hn::Neg(hn::Mul(a, a)));
    const V big = hn::CopySign(hn::Sub(hn::Set(d, T(1)), erf_detail::ErfcLarge(d, a, e)), x);
    y = hn::IfThenElse(small, y, big);
  }
  return KeepNaN(x, y);
}

// erfc(x) = 1 - erf(x), keeping its relative accuracy in the upper tail:
// 1 - x erf(x)/x where that does not cancel (|x| < 1/2, or -1 < x < 0),
// ErfcLarge above, 2 - ErfcLarge(|x|) below -1. erfc(-inf) = 2,
// erfc(+inf) = +0, NaN -> NaN.
template <class D, class V>
HWY_INLINE V Erfc(D d, V x) {
  using T = hn::TFromD<D>;
  const V a = hn::Abs(x);
  const V one = hn::Set(d, T(1));
  const auto negative = hn::Lt(x, hn::Zero(d));
  const auto small = hn::Lt(a, hn::IfThenElse(negative, one, hn::Set(d, T(0.5))));
  V y = hn::Zero(d);
  if (!hn::AllFalse(d, small)) y = hn::Sub(one, hn::Mul(x, erf_detail::ErfOverX(d, x)));
  if (!hn::AllTrue(d, small)) {
    // Beyond 40 the result is 0 (or 2) anyway; the clamp keeps x^2 finite.
    const V ac = hn::Min(a, hn::Set(d, T(40)));
    const V c = erf_detail::ErfcLarge(d, ac, erf_detail::ExpScaledSquare(d, ac, T(-1)));
    y = hn::IfThenElse(small, y, hn::IfThenElse(negative, hn::Sub(hn::Set(d, T(2)), c), c));
  }
  return KeepNaN(x, y);
}

// Phi(x) = erfc(-x / sqrt 2) / 2, the standard normal CDF: Phi(-inf) = 0,
// Phi(+inf) = 1, NaN -> NaN. Relative accuracy holds in the lower tail too:
// e^(-x^2/2) comes from x itself (not from the rounded x / sqrt 2).
template <class D, class V>
HWY_INLINE V NormalCdf(D d, V x) {
  using T = hn::TFromD<D>;
  const V half = hn::Set(d, T(0.5));
  const V z = hn::Mul(x, hn::Set(d, T(0.70710678118654752440084436210485)));
  const V a = hn::Abs(z);
  // 1/2 + erf(z)/2 cancels for z well below 0: there the lower tail
  // erfc(a)/2 takes over from a = 1/2 (from 1 above 0, as erf).
  const auto negative = hn::Lt(x, hn::Zero(d));
  const auto small = hn::Lt(a, hn::IfThenElse(negative, half, hn::Set(d, T(1))));
  V y = hn::Zero(d);
  if (!hn::AllFalse(d, small)) y = hn::Add(half, hn::Mul(half, hn::Mul(z, erf_detail::ErfOverX(d, z))));
  if (!hn::AllTrue(d, small)) {
    // Beyond |x| = 40 the factor is 0 anyway; the clamp keeps x^2 finite.
    const V limit = hn::Set(d, T(40));
    const V e = erf_detail::ExpScaledSquare(d, hn::Min(hn::Max(x, hn::Neg(limit)), limit), T(-0.5));
    const V c = hn::Mul(half, erf_detail::ErfcLarge(d, a, e));
    y = hn::IfThenElse(small, y, hn::IfThenElse(negative, c, hn::Sub(hn::Set(d, T(1)), c)));
  }
  return KeepNaN(x, y);
}

}  // namespace ag::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // AG_KERNELS_ERF_INL_H_
