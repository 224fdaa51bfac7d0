// Per-target functors of the binary math kernels (the BinaryKind values after
// TanhBackward): op(a, b) on vectors, lane types f32 and f64. Strided rows
// are gathered and run through the same vector code (elementwise.cc), so a
// result never depends on the layout. Same toggling guard as simd-inl.h.

#if defined(AG_KERNELS_BINARY_MATH_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef AG_KERNELS_BINARY_MATH_INL_H_
#undef AG_KERNELS_BINARY_MATH_INL_H_
#else
#define AG_KERNELS_BINARY_MATH_INL_H_
#endif

#include <cmath>

#include "kernels/simd-inl.h"
#include "kernels/unary_math-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ag::kernels::HWY_NAMESPACE {

// max(a, b) and min(a, b), NaN if either is NaN (as PyTorch's maximum and
// minimum, unlike fmax). Of +0 and -0 either may come out.
struct MaximumK {
  template <class V>
  HWY_INLINE V operator()(V a, V b) const {
    return hn::IfThenElse(hn::Or(hn::IsNaN(a), hn::IsNaN(b)), hn::Add(a, b), hn::Max(a, b));
  }
};

struct MinimumK {
  template <class V>
  HWY_INLINE V operator()(V a, V b) const {
    return hn::IfThenElse(hn::Or(hn::IsNaN(a), hn::IsNaN(b)), hn::Add(a, b), hn::Min(a, b));
  }
};

// atan2(y, x), the angle of the point (x, y), in [-pi, pi]. From
// r = atan(min(|x|,|y|) / max(|x|,|y|)) in [0, pi/4], unfolded by octant; the
// special values follow C's atan2: atan2(+-0, +0) = +-0, atan2(+-0, -0) =
// +-pi, atan2(+-inf, +-inf) = +-pi/4 or +-3pi/4, NaN if either is NaN.
struct Atan2K {
  template <class V>
  HWY_INLINE V operator()(V y, V x) const {
    const hn::DFromV<V> d;
    using T = hn::TFromD<decltype(d)>;
    const hn::RebindToSigned<decltype(d)> di;
    const V ax = hn::Abs(x), ay = hn::Abs(y);
    const V big = hn::Max(ax, ay), small = hn::Min(ax, ay);
    const auto both_inf = hn::And(hn::IsInf(x), hn::IsInf(y));
    // 0/0 -> 0 (the axis); inf/inf -> the diagonal, pi/4 correctly rounded.
    V q = hn::IfThenZeroElse(hn::Eq(big, hn::Zero(d)), hn::Div(small, big));
    V r = hn::IfThenElse(both_inf, hn::Set(d, T(0.78539816339744830961566084581988)), hn::Atan(d, q));
    r = hn::IfThenElse(hn::Gt(ay, ax), hn::Sub(hn::Set(d, T(1.5707963267948966192313216916398)), r), r);
    const auto x_negative = hn::RebindMask(d, hn::Lt(hn::BitCast(di, x), hn::Zero(di)));
    r = hn::IfThenElse(x_negative, hn::Sub(hn::Set(d, T(3.1415926535897932384626433832795)), r), r);
    r = hn::CopySign(r, y);
    return hn::IfThenElse(hn::Or(hn::IsNaN(x), hn::IsNaN(y)), hn::Add(x, y), r);
  }
};

// logaddexp(a, b) = log(e^a + e^b) = max(a, b) + log1p(e^-|a - b|), which
// cannot overflow; equal infinities give themselves, NaN if either is NaN.
struct LogaddexpK {
  template <class V>
  HWY_INLINE V operator()(V a, V b) const {
    const hn::DFromV<V> d;
    const V r = hn::Add(hn::Max(a, b), Log1pK()(d, ExpOfNonPositive(d, hn::Neg(hn::Abs(hn::Sub(a, b))))));
    const V y = hn::IfThenElse(hn::And(hn::IsInf(a), hn::Eq(a, b)), a, r);
    return hn::IfThenElse(hn::Or(hn::IsNaN(a), hn::IsNaN(b)), hn::Add(a, b), y);
  }
};

// g where y <= 0 is false (y > 0 or NaN, as PyTorch's threshold_backward),
// else +0: a select, so that inf or NaN in g under the mask gives 0.
struct ReluBackwardK {
  template <class V>
  HWY_INLINE V operator()(V g, V y) const {
    const hn::DFromV<V> d;
    return hn::IfThenZeroElse(hn::Le(y, hn::Zero(d)), g);
  }
};

// g * y * (1 - y): the gradient of sigmoid from its output y. Unfused, so
// every target rounds as the scalar formula does.
struct SigmoidBackwardK {
  template <class V>
  HWY_INLINE V operator()(V g, V y) const {
    const hn::DFromV<V> d;
    return hn::Mul(hn::Mul(g, y), hn::Sub(hn::Set(d, 1), y));
  }
};

// Fused gradients of activations from their input x: g * f'(x). Beyond
// |x| = 40 (gelu) or 1000 (the others) f' is 0 or 1 to the last bit; x is
// clamped there (ClampAbs) so that f'(+-inf) is 0 or 1 rather than
// inf * 0 = NaN.
//
// gelu' = Phi(x) + x phi(x), phi(x) = e^(-x^2/2) / sqrt(2 pi).
struct GeluBackwardK {
  template <class V>
  HWY_INLINE V operator()(V g, V x) const {
    const hn::DFromV<V> d;
    const V xc = ClampAbs(d, x, 40.0);
    const V a = hn::Abs(xc);
    const V e = erf_detail::ExpScaledSquare(d, a, hn::TFromV<V>(-0.5));
    const V pdf = hn::Mul(e, Const(d, 0.39894228040143267793994605993438));
    return hn::Mul(g, hn::Add(erf_detail::NormalCdfFromExp(d, xc, a, e), hn::Mul(xc, pdf)));
  }
};

// gelu_tanh(x) = x s with s = sigmoid(2u), u = k (x + c x^3):
// gelu_tanh' = s + x s (1 - s) 2 k (1 + 3 c x^2).
struct GeluTanhBackwardK {
  template <class V>
  HWY_INLINE V operator()(V g, V x_in) const {
    const hn::DFromV<V> d;
    using T = hn::TFromD<decltype(d)>;
    const V x = ClampAbs(d, x_in, 1000.0);
    const V x2 = hn::Mul(x, x);
    const V two_u = hn::Mul(Const(d, 2 * kSqrt2OverPi), hn::Add(x, hn::Mul(Const(d, kGeluTanhCubic), hn::Mul(x, x2))));
    V s, one_minus_s;
    SigmoidPair(d, two_u, s, one_minus_s);
    const V du =
        hn::Mul(Const(d, 2 * kSqrt2OverPi), hn::Add(hn::Set(d, T(1)), hn::Mul(Const(d, 3 * kGeluTanhCubic), x2)));
    const V ds = hn::Mul(hn::Mul(s, one_minus_s), du);
    return hn::Mul(g, hn::Add(s, hn::Mul(x, ds)));
  }
};

// silu' = s (1 + x (1 - s)), s = sigmoid(x).
struct SiluBackwardK {
  template <class V>
  HWY_INLINE V operator()(V g, V x) const {
    const hn::DFromV<V> d;
    using T = hn::TFromD<decltype(d)>;
    V s, one_minus_s;
    SigmoidPair(d, x, s, one_minus_s);
    return hn::Mul(g, hn::Mul(s, hn::Add(hn::Set(d, T(1)), hn::Mul(ClampAbs(d, x, 1000.0), one_minus_s))));
  }
};

// mish' = t + x s (1 - t^2), t = tanh(u), u = softplus(x), s = sigmoid(x);
// 1 - t^2 = 4 sigmoid(2u) (1 - sigmoid(2u)), which does not cancel where t
// is near 1.
struct MishBackwardK {
  template <class V>
  HWY_INLINE V operator()(V g, V x) const {
    const hn::DFromV<V> d;
    using T = hn::TFromD<decltype(d)>;
    const V u = SoftplusK<T>{T(1), T(20)}(d, x);
    const V t = TanhK()(d, u);
    V s2, one_minus_s2;
    SigmoidPair(d, hn::Add(u, u), s2, one_minus_s2);
    const V one_minus_t2 = hn::Mul(hn::Set(d, T(4)), hn::Mul(s2, one_minus_s2));
    return hn::Mul(g, hn::Add(t, hn::Mul(hn::Mul(ClampAbs(d, x, 1000.0), SigmoidK()(d, x)), one_minus_t2)));
  }
};

// 0 where a < b, 1/2 where a == b, else 1 (also when a or b is NaN): the
// share of the gradient of maximum(a, b) that goes to a (PyTorch splits ties
// evenly and passes the whole gradient to both inputs of a NaN result).
struct GreaterShareK {
  template <class V>
  HWY_INLINE V operator()(V a, V b) const {
    const hn::DFromV<V> d;
    const V half = hn::Set(d, 0.5);
    return hn::IfThenZeroElse(hn::Lt(a, b), hn::IfThenElse(hn::Eq(a, b), half, hn::Set(d, 1)));
  }
};

// pow(x, y) in f64 lanes as e^(y ln|x|), with C's special values: y = 0 or
// x = 1 -> 1; |x| = 1 and y = +-inf -> 1; x < 0 finite with y finite and not
// an integer -> NaN; the sign of x (-0 and -inf included) kept for odd
// integral y; zeros and infinities follow from log(0) = -inf, log(inf) = inf.
// Error: |y ln|x|| * 2^-52 relative plus 2 ulp of f64; used for f32 inputs,
// where every result that fits f32 has |y ln|x|| < 150, so the f64 result is
// within 1e-13 relative and rounds to within 1 ulp of f32 (elementwise.cc).
struct PowF64K {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x, V y) const {
    const hn::RebindToSigned<D> di;
    const V one = Const(d, 1.0);
    const V ax = hn::Abs(x);
    V r = ExpK()(d, hn::Mul(y, LogK()(d, ax)));
    const auto is_int = hn::Eq(hn::Round(y), y);
    const V half = hn::Mul(y, Const(d, 0.5));
    const auto odd = hn::And(is_int, hn::Ne(hn::Round(half), half));
    const auto x_negative = hn::RebindMask(d, hn::Lt(hn::BitCast(di, x), hn::Zero(di)));
    r = hn::IfThenElse(hn::And(x_negative, odd), hn::Neg(r), r);
    const auto finite = hn::And(hn::IsFinite(x), hn::IsFinite(y));
    r = hn::IfThenElse(hn::And(hn::And(hn::Lt(x, hn::Zero(d)), finite), hn::Not(is_int)), hn::NaN(d), r);
    const auto unit = hn::Or(hn::Or(hn::Eq(y, hn::Zero(d)), hn::Eq(x, one)), hn::And(hn::Eq(ax, one), hn::IsInf(y)));
    return hn::IfThenElse(unit, one, r);
  }
};

// Ops without a vector algorithm here (exact fmod needs an iterative
// reduction; an f64 pow within 1 ulp a double-double logarithm): libm per
// element, which is exact (fmod, remainder) or within 1 ulp (glibc pow).
struct PowScalarK {
  template <class T>
  T operator()(T a, T b) const {
    return std::pow(a, b);
  }
};

// C fmod: the result has the sign of a.
struct FmodScalarK {
  template <class T>
  T operator()(T a, T b) const {
    return std::fmod(a, b);
  }
};

// Python's modulus: the result has the sign of b (as PyTorch's remainder).
struct RemainderScalarK {
  template <class T>
  T operator()(T a, T b) const {
    T r = std::fmod(a, b);
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  }
};

// xlogy(a, b) = a log b; 0 where a = 0, except NaN where b is NaN (PyTorch).
struct XlogyK {
  template <class V>
  HWY_INLINE V operator()(V a, V b) const {
    const hn::DFromV<V> d;
    const V y = hn::IfThenZeroElse(hn::Eq(a, hn::Zero(d)), hn::Mul(a, LogK()(d, b)));
    return hn::IfThenElse(hn::IsNaN(b), b, y);
  }
};

// |a| with the sign bit of b (C copysign: NaN b counts by its sign bit).
struct CopysignK {
  template <class V>
  HWY_INLINE V operator()(V a, V b) const {
    return hn::CopySign(a, b);
  }
};

}  // namespace ag::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // AG_KERNELS_BINARY_MATH_INL_H_
