// Per-target functors of the unary math and activation kernels (the
// UnaryKind values after PowScalar): op(d, v) on one vector, lane types f32
// and f64, built on simd-inl.h. Highway 1.0.3's contrib math gets NaN,
// infinities and out-of-domain inputs wrong in places; every functor here
// states its special values and fixes them. Accuracy bounds (ulp against
// std:: in double or long double) are checked on every compiled target by
// tests/ops/test_kernels_math_targets.cc, which lists the measured figures.
// Same toggling guard as simd-inl.h: included once per target.

#if defined(AG_KERNELS_UNARY_MATH_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef AG_KERNELS_UNARY_MATH_INL_H_
#undef AG_KERNELS_UNARY_MATH_INL_H_
#else
#define AG_KERNELS_UNARY_MATH_INL_H_
#endif

#include <limits>

#include "kernels/erf-inl.h"
#include "kernels/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ag::kernels::HWY_NAMESPACE {

// |x|. sign bit cleared, NaN stays NaN.
struct AbsK {
  template <class D, class V>
  HWY_INLINE V operator()(D, V x) const {
    return hn::Abs(x);
  }
};

// sign(x) = -1, +1; +-0 and NaN are returned as they are.
struct SignK {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    const V one = hn::CopySign(Const(d, 1.0), x);
    return hn::IfThenElse(hn::Or(hn::Eq(x, hn::Zero(d)), hn::IsNaN(x)), x, one);
  }
};

// e^x - 1: expm1(+-0) = +-0, expm1(-inf) = -1, expm1(+inf) = +inf, NaN -> NaN.
// The clamp keeps Highway's int32 exponent from overflowing (as ExpK).
struct Expm1K {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    using T = hn::TFromD<D>;
    const V hi = Const(d, sizeof(T) == 4 ? 100.0 : 1000.0);
    const V lo = Const(d, sizeof(T) == 4 ? -100.0 : -1000.0);
    const V y = hn::Expm1(d, hn::Min(hn::Max(x, lo), hi));
    return KeepNaN(x, hn::IfThenElse(hn::Eq(x, hn::Zero(d)), x, y));
  }
};

// The special values shared by the logarithms, given the special point p
// where the result is -inf (0 for log2, -1 for log1p): x < p and -inf -> NaN,
// x = p -> -inf, +inf and NaN -> x; other lanes take y.
template <class D, class V>
HWY_INLINE V LogEdges(D d, V x, V p, V y) {
  const V inf = hn::Inf(d);
  const V special = hn::IfThenElse(hn::Eq(x, p), hn::Neg(inf), hn::IfThenElse(hn::Lt(x, p), hn::NaN(d), x));
  return hn::IfThenElse(hn::And(hn::Gt(x, p), hn::Lt(x, inf)), y, special);
}

// log(1 + x): log1p(-1) = -inf, x < -1 -> NaN, +-0 -> +-0, +inf -> +inf.
struct Log1pK {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    const V y = hn::IfThenElse(hn::Eq(x, hn::Zero(d)), x, hn::Log1p(d, x));
    return LogEdges(d, x, Const(d, -1.0), y);
  }
};

// log2(x), with the special values of log, and exact at powers of two
// (Highway's Log2 gives log2(8) = 2.9999999999999996): a normal x whose
// mantissa bits are zero yields its exponent.
struct Log2K {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    using T = hn::TFromD<D>;
    const hn::RebindToSigned<D> di;
    using I = hn::TFromD<decltype(di)>;
    constexpr int kMantissa = sizeof(T) == 4 ? 23 : 52;
    constexpr I kBias = sizeof(T) == 4 ? 127 : 1023;
    const auto bits = hn::BitCast(di, x);
    const auto mantissa = hn::And(bits, hn::Set(di, static_cast<I>((I(1) << kMantissa) - 1)));
    const auto exponent = hn::Sub(hn::ShiftRight<kMantissa>(bits), hn::Set(di, kBias));
    const auto pow2 = hn::And(hn::RebindMask(d, hn::Eq(mantissa, hn::Zero(di))),
                              hn::Ge(x, hn::Set(d, std::numeric_limits<T>::min())));
    const V y = hn::IfThenElse(pow2, hn::ConvertTo(d, exponent), hn::Log2(d, x));
    return LogEdges(d, x, hn::Zero(d), y);
  }
};

// IEEE sqrt, correctly rounded: sqrt(-0) = -0, x < 0 -> NaN.
struct SqrtK {
  template <class D, class V>
  HWY_INLINE V operator()(D, V x) const {
    return hn::Sqrt(x);
  }
};

// 1 / sqrt(x), two correct roundings (<= 1 ulp): +-0 -> +-inf, +inf -> +0.
struct RsqrtK {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    return hn::Div(Const(d, 1.0), hn::Sqrt(x));
  }
};

struct SquareK {
  template <class D, class V>
  HWY_INLINE V operator()(D, V x) const {
    return hn::Mul(x, x);
  }
};

struct ReciprocalK {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    return hn::Div(Const(d, 1.0), x);
  }
};

// Trigonometric functions: +-inf and NaN -> NaN, +-0 -> +-0 (cos: 1).
// Accurate for |x| <= 1e4 (Highway's range reduction loses digits beyond).
struct SinK {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    const V y = hn::IfThenElse(hn::Eq(x, hn::Zero(d)), x, hn::Sin(d, x));
    return hn::IfThenElse(hn::IsFinite(x), y, hn::NaN(d));
  }
};

// cos rounds to 1 below |x| = 2^-13 (f32) / 2^-27 (f64); Highway's Cos
// gives 1 - 1 ulp at 0 in f64.
struct CosK {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    using T = hn::TFromD<D>;
    const V tiny = Const(d, sizeof(T) == 4 ? 0x1p-13 : 0x1p-27);
    const V y = hn::IfThenElse(hn::Lt(hn::Abs(x), tiny), Const(d, 1.0), hn::Cos(d, x));
    return hn::IfThenElse(hn::IsFinite(x), y, hn::NaN(d));
  }
};

// tan = sin / cos.
struct TanK {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    const V y = hn::IfThenElse(hn::Eq(x, hn::Zero(d)), x, hn::Div(hn::Sin(d, x), hn::Cos(d, x)));
    return hn::IfThenElse(hn::IsFinite(x), y, hn::NaN(d));
  }
};

// asin, acos: |x| > 1 and NaN -> NaN; asin(+-0) = +-0.
struct AsinK {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    const V y = hn::IfThenElse(hn::Eq(x, hn::Zero(d)), x, hn::Asin(d, x));
    return hn::IfThenElse(hn::Le(hn::Abs(x), Const(d, 1.0)), y, hn::NaN(d));
  }
};

struct AcosK {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    return hn::IfThenElse(hn::Le(hn::Abs(x), Const(d, 1.0)), hn::Acos(d, x), hn::NaN(d));
  }
};

// atan: atan(+-inf) = +-pi/2, atan(+-0) = +-0, NaN -> NaN.
struct AtanK {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    const V y = hn::IfThenElse(hn::Eq(x, hn::Zero(d)), x, hn::Atan(d, x));
    return KeepNaN(x, y);
  }
};

// sinh: sinh(+-inf) = +-inf, +-0 -> +-0, NaN -> NaN, overflow to +-inf.
// Highway's Sinh is (y + 2) / (y + 1) * y / 2 with y = expm1|x|, NaN once y
// overflows; above |x| = 20 (where e^-|x| no longer matters) it is replaced
// by (h/2) h, h = e^(|x|/2), which overflows only where sinh does.
struct SinhK {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    const V ax = hn::Abs(x);
    const V h = ExpK()(d, hn::Mul(ax, Const(d, 0.5)));
    const V big = hn::CopySign(hn::Mul(hn::Mul(h, Const(d, 0.5)), h), x);
    const V y = hn::IfThenElse(hn::Gt(ax, Const(d, 20.0)), big, hn::Sinh(d, hn::Min(ax, Const(d, 20.0))));
    return KeepNaN(x, hn::IfThenElse(hn::Eq(x, hn::Zero(d)), x, hn::CopySign(y, x)));
  }
};

// cosh(x) = e^|x| / 2 + e^-|x| / 2, computed from h = e^(|x|/2) as
// (h/2) h + (1/2) / (h h), so that it overflows only where cosh does.
// cosh(+-inf) = +inf, NaN -> NaN.
struct CoshK {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    const V half = Const(d, 0.5);
    const V h = ExpK()(d, hn::Mul(hn::Abs(x), half));
    return hn::Add(hn::Mul(hn::Mul(h, half), h), hn::Div(half, hn::Mul(h, h)));
  }
};

// erf(x): see erf-inl.h.
struct ErfK {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    return Erf(d, x);
  }
};

// sigmoid(x) = 1 / (1 + e^-x), from e = e^-|x| so that it never overflows:
// 1 / (1 + e) for x >= 0, e / (1 + e) below. sigmoid(-inf) = 0, (+inf) = 1.
// SigmoidPair also gives 1 - sigmoid(x) = sigmoid(-x) to full relative
// accuracy (where the subtraction 1 - s would cancel).
template <class D, class V>
HWY_INLINE void SigmoidPair(D d, V x, V& s, V& one_minus_s) {
  const V e = ExpOfNonPositive(d, hn::Neg(hn::Abs(x)));
  const V r = hn::Div(Const(d, 1.0), hn::Add(Const(d, 1.0), e));
  const V er = hn::Mul(e, r);
  const auto negative = hn::Lt(x, hn::Zero(d));
  s = hn::IfThenElse(negative, er, r);
  one_minus_s = hn::IfThenElse(negative, r, er);
}

struct SigmoidK {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    V s, one_minus_s;
    SigmoidPair(d, x, s, one_minus_s);
    return s;
  }
};

// relu(x) = x for x > 0, else +0; NaN stays NaN.
struct ReluK {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    return hn::IfThenZeroElse(hn::Le(x, hn::Zero(d)), x);
  }
};

// x for x > 0, else slope * x.
template <class T>
struct LeakyReluK {
  T slope;
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    return hn::IfThenElse(hn::Gt(x, hn::Zero(d)), x, hn::Mul(x, hn::Set(d, slope)));
  }
};

// x for x > 0, else alpha * expm1(x).
template <class T>
struct EluK {
  T alpha;
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    return hn::IfThenElse(hn::Gt(x, hn::Zero(d)), x, hn::Mul(hn::Set(d, alpha), Expm1K()(d, x)));
  }
};

// The constants of selu (Klambauer et al. 2017), as PyTorch rounds them.
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;

struct SeluK {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    const V neg = hn::Mul(Const(d, kSeluAlpha), Expm1K()(d, x));
    return hn::Mul(Const(d, kSeluScale), hn::IfThenElse(hn::Gt(x, hn::Zero(d)), x, neg));
  }
};

// silu(x) = x * sigmoid(x) (NaN at -inf, as x / (1 + e^-x)).
struct SiluK {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    return hn::Mul(x, SigmoidK()(d, x));
  }
};

// softplus(x) = log1p(e^(beta x)) / beta, and x where beta x > threshold.
template <class T>
struct SoftplusK {
  T beta, threshold;
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    const V vb = hn::Set(d, beta);
    const V bx = hn::Mul(x, vb);
    const V y = hn::Div(Log1pK()(d, ExpK()(d, bx)), vb);
    return hn::IfThenElse(hn::Gt(bx, hn::Set(d, threshold)), x, y);
  }
};

// mish(x) = x * tanh(softplus(x)) with softplus's defaults (beta 1, threshold 20).
struct MishK {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    using T = hn::TFromD<D>;
    return hn::Mul(x, TanhK()(d, SoftplusK<T>{T(1), T(20)}(d, x)));
  }
};

// min(max(x, lo), hi); a NaN bound is no bound; NaN stays NaN. With lo > hi
// every lane is hi (as PyTorch's clamp).
template <class T>
struct ClampK {
  T lo, hi;
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    V r = x;
    if (lo == lo) r = hn::IfThenElse(hn::Lt(r, hn::Set(d, lo)), hn::Set(d, lo), r);
    if (hi == hi) r = hn::IfThenElse(hn::Gt(r, hn::Set(d, hi)), hn::Set(d, hi), r);
    return r;
  }
};

// gelu(x) = x * Phi(x), Phi the standard normal CDF (erf-inl.h), whose
// lower tail keeps its relative accuracy.
struct GeluK {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    return hn::Mul(x, erf_detail::NormalCdfOfX(d, x));
  }
};

// gelu with the tanh approximation:
// 0.5 x (1 + tanh(u)) with u = sqrt(2/pi) (x + 0.044715 x^3), computed as
// x * sigmoid(2 u) (the same function), which keeps its digits where
// tanh(u) is near -1 and 1 + tanh(u) would cancel.
constexpr double kSqrt2OverPi = 0.79788456080286535587989211986876;
constexpr double kGeluTanhCubic = 0.044715;

struct GeluTanhK {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    const V x3 = hn::Mul(x, hn::Mul(x, x));
    const V two_u = hn::Mul(Const(d, 2 * kSqrt2OverPi), hn::Add(x, hn::Mul(Const(d, kGeluTanhCubic), x3)));
    return hn::Mul(x, SigmoidK()(d, two_u));
  }
};

// Rounding to integral values; +-0, +-inf and NaN are returned as they are,
// and a result 0 keeps x's sign (C's rules; Highway's SCALAR Floor and Ceil
// return +0 for -0), hence the CopySign.
struct FloorK {
  template <class D, class V>
  HWY_INLINE V operator()(D, V x) const {
    return hn::CopySign(hn::Floor(x), x);
  }
};

struct CeilK {
  template <class D, class V>
  HWY_INLINE V operator()(D, V x) const {
    return hn::CopySign(hn::Ceil(x), x);
  }
};

// Halfway cases to even (as PyTorch and NumPy).
struct RoundK {
  template <class D, class V>
  HWY_INLINE V operator()(D, V x) const {
    return hn::CopySign(hn::Round(x), x);
  }
};

struct TruncK {
  template <class D, class V>
  HWY_INLINE V operator()(D, V x) const {
    return hn::CopySign(hn::Trunc(x), x);
  }
};

// Indicator of lo < x < hi (kClosed: lo <= x <= hi) as 1 or 0; NaN -> 0.
// The masks of the backward formulas of relu, clamp and friends.
template <class T, bool kClosed>
struct InsideK {
  T lo, hi;
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    const V vl = hn::Set(d, lo), vh = hn::Set(d, hi);
    const auto in = kClosed ? hn::And(hn::Ge(x, vl), hn::Le(x, vh)) : hn::And(hn::Gt(x, vl), hn::Lt(x, vh));
    return hn::IfThenElseZero(in, Const(d, 1.0));
  }
};

// ---- added in 0.2: special functions and activations ----

// 2^x = 2^n e^(f ln 2) with n = round(x), f = x - n exact (so the result is
// as accurate as exp of |f ln 2| <= 0.35 and exact for integral x), 2^n
// built as two normal factors so that overflow and subnormal results round
// once. exp2(-inf) = +0, exp2(+inf) = +inf, NaN -> NaN.
struct Exp2K {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    using T = hn::TFromD<D>;
    const hn::RebindToSigned<D> di;
    using I = hn::TFromD<decltype(di)>;
    constexpr int kMantissa = sizeof(T) == 4 ? 23 : 52;
    constexpr I kBias = sizeof(T) == 4 ? 127 : 1023;
    const V lim = Const(d, sizeof(T) == 4 ? 250.0 : 2000.0);  // each factor stays normal
    const V xc = hn::Min(hn::Max(x, hn::Neg(lim)), lim);
    const V n = hn::Round(xc);
    const V e = ExpK()(d, hn::Mul(hn::Sub(xc, n), Const(d, 0.69314718055994530941723212145818)));
    const auto ni = hn::ConvertTo(di, n);
    const auto h = hn::ShiftRight<1>(ni);
    const auto pow2 = [&](decltype(ni) k) {
      return hn::BitCast(d, hn::ShiftLeft<kMantissa>(hn::Add(k, hn::Set(di, kBias))));
    };
    return KeepNaN(x, hn::Mul(hn::Mul(e, pow2(h)), pow2(hn::Sub(ni, h))));
  }
};

// erfc(x): see erf-inl.h.
struct ErfcK {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    return Erfc(d, x);
  }
};

// sinc(x) = sin(pi x) / (pi x), 1 at 0 (PyTorch's formula: pi x rounded
// first). +-inf and NaN -> NaN.
struct SincK {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    const V px = hn::Mul(x, Const(d, 3.14159265358979323846264338327950288));
    return hn::IfThenElse(hn::Eq(x, hn::Zero(d)), Const(d, 1.0), hn::Div(SinK()(d, px), px));
  }
};

// Inverse hyperbolic functions: asinh(+-0) = +-0, asinh(+-inf) = +-inf;
// acosh(1) = 0, acosh(x < 1) = NaN, acosh(+inf) = +inf; atanh(+-1) = +-inf,
// atanh(|x| > 1) = NaN, atanh(+-0) = +-0; NaN -> NaN.
struct AsinhK {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    const auto keep = hn::Or(hn::Eq(x, hn::Zero(d)), hn::Or(hn::IsInf(x), hn::IsNaN(x)));
    return hn::IfThenElse(keep, x, hn::Asinh(d, x));
  }
};

struct AcoshK {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    const V one = Const(d, 1.0);
    const V y = hn::IfThenElse(hn::Eq(x, one), hn::Zero(d), hn::Acosh(d, x));
    const V special = hn::IfThenElse(hn::Eq(x, hn::Inf(d)), x, y);
    return hn::IfThenElse(hn::Ge(x, one), special, hn::NaN(d));
  }
};

struct AtanhK {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    const V ax = hn::Abs(x);
    const V one = Const(d, 1.0);
    V y = hn::IfThenElse(hn::Eq(x, hn::Zero(d)), x, hn::Atanh(d, x));
    y = hn::IfThenElse(hn::Eq(ax, one), hn::CopySign(hn::Inf(d), x), y);
    return hn::IfThenElse(hn::Le(ax, one), y, hn::NaN(d));
  }
};

// frac(x) = x - trunc(x) (sign of x; +-inf -> NaN), PyTorch's formula.
struct FracK {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    return hn::Sub(x, TruncK()(d, x));
  }
};

// relu6(x + 3) / 6 (hardsigmoid) and x times it (hardswish), in PyTorch's
// order of operations; NaN -> NaN.
template <class D, class V>
HWY_INLINE V Relu6Shifted(D d, V x) {
  return hn::Min(hn::Max(hn::Add(x, Const(d, 3.0)), hn::Zero(d)), Const(d, 6.0));
}

struct HardswishK {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    return KeepNaN(x, hn::Div(hn::Mul(x, Relu6Shifted(d, x)), Const(d, 6.0)));
  }
};

struct HardsigmoidK {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    return KeepNaN(x, hn::Div(Relu6Shifted(d, x), Const(d, 6.0)));
  }
};

// x / (1 + |x|) (+-inf -> NaN, as PyTorch's composite).
struct SoftsignK {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    return hn::Div(x, hn::Add(Const(d, 1.0), hn::Abs(x)));
  }
};

// log sigmoid(x) = min(x, 0) - log1p(e^-|x|): no overflow.
struct LogSigmoidK {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    const V y = hn::Sub(hn::Min(x, hn::Zero(d)), Log1pK()(d, ExpOfNonPositive(d, hn::Neg(hn::Abs(x)))));
    return KeepNaN(x, y);
  }
};

// x - tanh(x).
struct TanhshrinkK {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    return hn::Sub(x, TanhK()(d, x));
  }
};

// log(z / (1 - z)), z = x clamped to [eps, 1 - eps] when eps >= 0 (else x).
template <class T>
struct LogitK {
  T eps;
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    V z = x;
    if (eps >= T(0)) {
      const V lo = hn::Set(d, eps), hi = hn::Set(d, T(1) - eps);
      z = hn::IfThenElse(hn::Lt(x, lo), lo, hn::IfThenElse(hn::Gt(x, hi), hi, x));
    }
    return LogK()(d, hn::Div(z, hn::Sub(Const(d, 1.0), z)));
  }
};

// x for x > 0, else alpha expm1(x inv_alpha), inv_alpha = 1 / alpha rounded
// from double (PyTorch's celu).
template <class T>
struct CeluK {
  T alpha, inv_alpha;
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    const V neg = hn::Mul(Expm1K()(d, hn::Mul(x, hn::Set(d, inv_alpha))), hn::Set(d, alpha));
    return hn::IfThenElse(hn::Gt(x, hn::Zero(d)), x, neg);
  }
};

// x - lambd above lambd, x + lambd below -lambd, else +0 (NaN gives 0, as
// PyTorch 1.13's softshrink).
template <class T>
struct SoftshrinkK {
  T lambd;
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    const V l = hn::Set(d, lambd);
    const V inner = hn::IfThenElseZero(hn::Lt(x, hn::Neg(l)), hn::Add(x, l));
    return hn::IfThenElse(hn::Gt(x, l), hn::Sub(x, l), inner);
  }
};

// +0 where -lambd <= x <= lambd, else x (NaN stays NaN, as PyTorch 1.13).
template <class T>
struct HardshrinkK {
  T lambd;
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    const V l = hn::Set(d, lambd);
    return hn::IfThenZeroElse(hn::And(hn::Ge(x, hn::Neg(l)), hn::Le(x, l)), x);
  }
};

// value where x <= threshold, else x (NaN stays NaN).
template <class T>
struct ThresholdK {
  T threshold, value;
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    return hn::IfThenElse(hn::Le(x, hn::Set(d, threshold)), hn::Set(d, value), x);
  }
};

// nan_to_num in two passes: NaN -> nan and +inf -> posinf, then
// -inf -> neginf.
template <class T>
struct NanPosinfToK {
  T nan, posinf;
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    const V y = hn::IfThenElse(hn::Eq(x, hn::Inf(d)), hn::Set(d, posinf), x);
    return hn::IfThenElse(hn::IsNaN(x), hn::Set(d, nan), y);
  }
};

template <class T>
struct NeginfToK {
  T neginf;
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    return hn::IfThenElse(hn::Eq(x, hn::Neg(hn::Inf(d))), hn::Set(d, neginf), x);
  }
};

}  // namespace ag::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // AG_KERNELS_UNARY_MATH_INL_H_
