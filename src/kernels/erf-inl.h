// Per-target erf, erfc and the standard normal CDF (Highway 1.0.3 has no
// erf), for lane types f32 and f64, from Chebyshev series evaluated by
// Clenshaw's recurrence (stable, unlike their monomial form). erf and erfc:
//   |x| < 1:      erf(x) = x * S(2 x^2 - 1),
//   1/2 <= a < 3: erfc(a) = e^(-a^2) * M((a - 1.75) / 1.25) (used from 1 by
//                 erf, from 1/2 by erfc's upper tail),
//   a >= 3:       erfc(a) = e^(-a^2) * T(6 / a - 1) / a.
// The coefficients interpolate erf(x)/x, erfcx(a) and a*erfcx(a) at 40
// Chebyshev nodes, computed with 50-digit arithmetic (mpmath); f32 keeps the
// leading terms whose tail is below 1.5e-8, f64 below 2e-17. Measured error
// of erf over all inputs on every target: 2 ulp in f32 and in f64 (relative
// error below 4.5e-16). A series whose region no lane of a vector falls in
// is skipped.
// The normal CDF (gelu's) takes one formula over the whole half-line
// instead, so that a vector of mixed inputs evaluates one approximation,
// not three: Phi(-a) = e^(-a^2/2) R(a) (kNormalTailP), which keeps its
// relative accuracy in the lower tail (gelu down to x = -12: f32 8 ulp
// over all inputs on AVX2, 7 on AVX-512; f64 6 ulp on samples).
// Same toggling guard as simd-inl.h.

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

// Phi(-a) = e^(-a^2/2) R(a) for a >= 0 (R is the Mills ratio over
// sqrt(2 pi)).
// f32: R(a) = P(a) / Q(a), degrees 4 and 5, all coefficients positive (so
// Horner's rule does not cancel). A minimax fit of the relative error on
// [0, 14] (Lawson's iteration on 6,000 points, R from mpmath): 5.5e-9, and
// 4.0e-8 with the coefficients rounded to f32. Beyond 14, e^(-a^2/2) is 0.
constexpr float kNormalTailP[] = {0.5000000027514401f, 0.4372469254622375f, 0.18245867727828538f,
                                  0.040371431453588874f, 0.004077425703390209f};
constexpr float kNormalTailQ[] = {1.0f, 1.672378805560867f, 1.19927806988722f, 0.46742072218520164f,
                                  0.10120298214170989f, 0.010220461789654486f};
// f64: R(a) = t N(u) with t = 4 / (a + 4) and u = 2.2 t - 1.2, for
// 0 <= a <= 40 (t from 1/11); N interpolated at 60 Chebyshev nodes (mpmath,
// 50 digits), 24 terms, dropped tail below 2.4e-18 of N.
constexpr double kNormalTailF64[] = {
    2.5290522709612708e-1,
    1.8512582239347326e-1,
    5.0691305295675966e-2,
    1.0021739452576226e-2,
    1.241239548229789e-3,
    3.429878388069156e-5,
    -1.7660484480749079e-5,
    -2.2671711224465565e-6,
    2.363239623917853e-7,
    6.4767883745165064e-8,
    -4.3777969280277493e-9,
    -1.8132757002034755e-9,
    1.3998376024327941e-10,
    5.2338865965829425e-11,
    -6.3375024021391095e-12,
    -1.4418956950156865e-12,
    3.0674051504867364e-13,
    2.9981871908218728e-14,
    -1.3868007658154744e-14,
    1.2563448900483063e-16,
    5.3498239779747519e-16,
    -6.4255205697025684e-17,
    -1.4615833927313492e-17,
    4.6036824394539688e-18,
};

// sum c[k] T_k(s) for k < n, by Clenshaw's recurrence.
template <class D, class V>
HWY_INLINE V Chebyshev(D d, const double* c, int n, V s) {
  using T = hn::TFromD<D>;
  const V s2 = hn::Add(s, s);
  V b1 = hn::Zero(d), b2 = hn::Zero(d);
  // b = (c[k] - b2) + s2 b1 as one fused multiply-add: c[k] - b2 is ready
  // a step early, so the chain from term to term is one FMA (a third of the
  // latency of mul, add, sub), and one rounding fewer.
  // Unrolled, the coefficients become constants in the lane type (rolled,
  // each step converted its double at run time: erf 1.2x slower).
#pragma GCC unroll 32
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
// rounded, r = fma(x, x, -s)): e^(c s + c r), one exponential. Without one,
// x = h + l with h holding the upper half of the mantissa, so h^2 is exact,
// and x^2 = h^2 + l (x + h): two.
template <class D, class V>
HWY_INLINE V ExpScaledSquare(D d, V x, hn::TFromD<D> c) {
  const V cv = hn::Set(d, c);
#if HWY_NATIVE_FMA
  const V s = hn::Mul(x, x);
  return ExpOfNonPositive(d, hn::Mul(s, cv), hn::Mul(hn::MulSub(x, x, s), cv));
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

// Phi(x) given a = |x| clamped to 40 and e = e^(-a^2/2) (a NaN x gives a
// number unless a is NaN): the lower tail Phi(-a) = e R(a), and 1 minus it
// above 0 (no cancellation: it is at most 1/2 there).
template <class D, class V>
HWY_INLINE V NormalCdfFromExp(D d, V x, V a, V e) {
  using T = hn::TFromD<D>;
  V lower;
  if constexpr (sizeof(T) == 4) {
    V p = hn::Set(d, kNormalTailP[4]), q = hn::Set(d, kNormalTailQ[5]);
    for (int k = 3; k >= 0; --k) p = hn::MulAdd(p, a, hn::Set(d, kNormalTailP[k]));
    for (int k = 4; k >= 0; --k) q = hn::MulAdd(q, a, hn::Set(d, kNormalTailQ[k]));
    lower = hn::Mul(e, hn::Div(p, q));
  } else {
    // a + 4 drops the low bits of a small a, which t would carry into the
    // result (R moves by 1.6 per unit of t near a = 0), while v = a / (a + 4)
    // keeps them (its error is relative to a): below a = 2 the series'
    // argument and the factor t = 1 - v are formed from v, above it from t.
    const V four = hn::Set(d, T(4));
    const V r = hn::Div(hn::Set(d, T(1)), hn::Add(a, four));
    const V t = hn::Mul(four, r);
    const V v = hn::Mul(a, r);
    const auto near = hn::Lt(a, hn::Set(d, T(2)));
    const V slope = hn::Set(d, T(2.2));  // u = slope t + 1 - slope = 1 - slope v
    const V u = hn::IfThenElse(near, hn::NegMulAdd(slope, v, hn::Set(d, T(1))),
                               hn::MulAdd(slope, t, hn::Sub(hn::Set(d, T(1)), slope)));
    const V n = Chebyshev(d, kNormalTailF64, 24, u);
    lower = hn::Mul(e, hn::IfThenElse(near, hn::NegMulAdd(v, n, n), hn::Mul(t, n)));
  }
  return hn::IfThenElse(hn::Lt(x, hn::Zero(d)), lower, hn::Sub(hn::Set(d, T(1)), lower));
}

// Phi(x), the standard normal CDF, for x not NaN (a NaN x gives a number:
// callers multiply by x). Phi(-inf) = 0, Phi(+inf) = 1. Relative accuracy
// holds in the lower tail too: e^(-x^2/2) comes from x itself, and R from
// |x|, not from a rounded x / sqrt 2. Beyond |x| = 40 the exponential is 0
// anyway; the clamp keeps x^2 finite.
template <class D, class V>
HWY_INLINE V NormalCdfOfX(D d, V x) {
  using T = hn::TFromD<D>;
  const V a = hn::Min(hn::Abs(x), hn::Set(d, T(40)));
  return NormalCdfFromExp(d, x, a, ExpScaledSquare(d, a, T(-0.5)));
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
    const V e = ExpOfNonPositive(d, hn::Neg(hn::Mul(a, a)));
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

}  // namespace ag::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // AG_KERNELS_ERF_INL_H_
