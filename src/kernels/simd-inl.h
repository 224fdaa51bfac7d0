// Per-target SIMD helpers of the kernels: tail loads and stores, and the
// math functions with IEEE edge fix-ups over Highway's contrib math. Included
// once per target by the foreach_target TUs (elementwise.cc, reduce.cc),
// after hwy/foreach_target.h; hence the toggling guard instead of #pragma once.
//
// Note [Kernel SIMD contract]
// - Every elementwise result depends only on the input element(s), the op and
//   the target: rows are processed by the same vector code whatever their
//   length, offset or stride (strided inputs are gathered into a contiguous
//   chunk first), and tails are vectors with masked lanes. So f(x) never
//   depends on where x sits in a tensor; it may differ between targets.
// - add/sub/mul/div, neg and the pow fast paths are IEEE-exact (correctly
//   rounded), so they are bitwise the same on every target.
// - Reductions use a fixed summation tree (reduce.cc); results depend only on
//   the data and the target.
// - Nothing reads or writes memory outside the row: see LoadTail.

#if defined(AG_KERNELS_SIMD_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef AG_KERNELS_SIMD_INL_H_
#undef AG_KERNELS_SIMD_INL_H_
#else
#define AG_KERNELS_SIMD_INL_H_
#endif

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "hwy/highway.h"
#include "hwy/contrib/math/math-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ag::kernels::HWY_NAMESPACE {

namespace hn = hwy::HWY_NAMESPACE;

// Loads p[0, n) with n < Lanes(d) into the first lanes and zeroes the rest,
// touching no memory past p[n - 1]. Highway 1.0.3 has no LoadN, and its
// MaskedLoad is a real masked load only from AVX2 on (for 32/64-bit lanes):
// on SSE4 it is IfThenElseZero(m, Load(d, p)), a full *aligned* load (faults
// on an unaligned p, reads past the end), and on EMU128 a full load too. Those
// targets copy the tail into an aligned buffer instead.
template <class D>
HWY_INLINE hn::Vec<D> LoadTail(D d, const hn::TFromD<D>* HWY_RESTRICT p, size_t n) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  return hn::MaskedLoad(hn::FirstN(d, n), d, p);
#else
  constexpr size_t kMax = hn::MaxLanes(D());
  HWY_ALIGN hn::TFromD<D> buf[kMax] = {};
  // n < kMax already; the clamp lets GCC see that the copy fits.
  std::memcpy(buf, p, std::min(n, kMax - 1) * sizeof(buf[0]));
  return hn::Load(d, buf);
#endif
}

// Stores the first n < Lanes(d) lanes of v to p[0, n). BlendedStore is safe
// on every target in 1.0.3 (masked store from AVX2 on, per-lane stores below).
template <class D>
HWY_INLINE void StoreTail(D d, hn::Vec<D> v, hn::TFromD<D>* HWY_RESTRICT p, size_t n) {
  hn::BlendedStore(v, hn::FirstN(d, n), d, p);
}

// v in every lane, rounded once to the lane type.
template <class D>
HWY_INLINE hn::Vec<D> Const(D d, double v) {
  return hn::Set(d, static_cast<hn::TFromD<D>>(v));
}

// NaN lanes of x replace the lanes of y (Highway's math returns finite
// values or even 0 for NaN inputs).
template <class V>
HWY_INLINE V KeepNaN(V x, V y) {
  return hn::IfThenElse(hn::IsNaN(x), x, y);
}

// x clamped to [-limit, limit], NaN kept (Min and Max alone would drop it).
template <class D, class V>
HWY_INLINE V ClampAbs(D d, V x, double limit) {
  const V l = Const(d, limit);
  return KeepNaN(x, hn::Min(hn::Max(x, hn::Neg(l)), l));
}

// Kernel functors: op(d, v) on one vector. The math ones wrap Highway's
// contrib math and fix the edges it gets wrong.
//
// Accuracy contract: error = distance in ulp to std:: in double (f32) or
// long double (f64), rounded to the lane type. Measured with Highway 1.0.3,
// GCC 12, on AVX3_DL, AVX2, SSE4 and SCALAR: f32 over all 2^32 inputs
// (subnormal inputs and results included), f64 over 20M samples (random bit
// patterns, uniform over the finite-result range, |x| down to 2^-40):
//   ExpK   f32 1 ulp, f64 1 ulp
//   LogK   f32 1 ulp, f64 1 ulp
//   TanhK  f32 3 ulp (worst near |x| = 0.014-0.03), f64 3 ulp (near 0.17-0.2)
// tests/ops/test_kernels_targets.cc checks exp <= 2, log <= 2, tanh <= 4 ulp
// on every compiled target (random samples), and the special values exactly.

struct NegK {
  template <class D, class V>
  HWY_INLINE V operator()(D, V x) const {
    return hn::Neg(x);
  }
};

/**
 * exp(x), lane types f32 and f64.
 *   Max error: see the table above; subnormal results are rounded once.
 *   Valid range: all inputs. exp(NaN) = NaN, exp(-inf) = +0, exp(+inf) = +inf,
 *   exp(x) = +inf above ln(max), subnormal or +0 below ln(min normal).
 * Fix-ups over hn::Exp (1.0.3): Exp(NaN) is 0; inputs above about 2^31 ln 2
 * overflow its int32 exponent (clamping to 100 / 1000 still overflows to inf).
 * Its own lower bound (-104 / -1000, below which it returns 0) is correct: the
 * true result there is below half the smallest subnormal.
 */
struct ExpK {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    using T = hn::TFromD<D>;
    const V hi = Const(d, sizeof(T) == 4 ? 100.0 : 1000.0);
    return KeepNaN(x, hn::Exp(d, hn::Min(x, hi)));
  }
};

/**
 * log(x), lane types f32 and f64.
 *   Max error: see the table above, subnormal inputs included.
 *   Valid range: all inputs. log(+-0) = -inf, log(x < 0) = NaN, log(-inf) = NaN,
 *   log(+inf) = +inf, log(NaN) = NaN.
 * Fix-ups over hn::Log (1.0.3), which returns finite values for all of these
 * (Log(0) ~ -105, Log(inf) ~ 88.7, garbage for x < 0 and NaN).
 */
struct LogK {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    const V zero = hn::Zero(d);
    const V inf = hn::Inf(d);
    const V y = hn::Log(d, x);
    // x < 0 -> NaN; +-0 -> -inf; +inf and NaN -> x.
    const V special = hn::IfThenElse(hn::Eq(x, zero), hn::Neg(inf),
                                     hn::IfThenElse(hn::Lt(x, zero), hn::NaN(d), x));
    return hn::IfThenElse(hn::And(hn::Gt(x, zero), hn::Lt(x, inf)), y, special);
  }
};

// e^(hi + lo) in f32 for hi <= 0 and |lo| far below 1, in fewer operations
// than hn::Exp (whose range reduction and scaling serve both signs): hi /
// ln 2 is rounded to q by adding 1.5 * 2^23 + 191, whose low mantissa bits
// are then q + 191, shifted into the exponent field as 2^(q + 64); lo joins
// the reduced argument r = hi - q ln 2 + lo, |r| <= 0.35; e^r = 1 + r +
// r^2 P(r), P of degree 4 (minimax, relative error 3.1e-9), its
// coefficients scaled by 2^-64 (exact) so that results down to the smallest
// subnormal round once. Below hi = -104 the result is 0; a NaN hi or lo
// gives NaN.
template <class D>
HWY_INLINE hn::Vec<D> ExpNonPositive(D d, hn::Vec<D> hi, hn::Vec<D> lo) {
  using V = hn::Vec<D>;
  const hn::RebindToSigned<D> di;
  const V lowest = hn::Set(d, -104.0f);
  const V y = hn::IfThenElse(hn::Lt(hi, lowest), lowest, hi);  // keeps a NaN (Max may not)
  const V shifter = hn::Set(d, 12582912.0f + 191.0f);
  const V j = hn::MulAdd(y, hn::Set(d, 1.44269504088896341f), shifter);
  const V q = hn::Sub(j, shifter);
  // ln 2 = 0.693145751953125 (16 bits: q times it is exact) + 1.4286e-6.
  V r = hn::MulAdd(q, hn::Set(d, -0.693145751953125f), y);
  r = hn::Add(hn::MulAdd(q, hn::Set(d, -1.428606765330187045e-6f), r), lo);
  constexpr float k = 5.42101086242752217e-20f;  // 2^-64
  V p = hn::Set(d, 0.0013814604480730294f * k);
  p = hn::MulAdd(p, r, hn::Set(d, 0.008368710654723163f * k));
  p = hn::MulAdd(p, r, hn::Set(d, 0.04166838754460418f * k));
  p = hn::MulAdd(p, r, hn::Set(d, 0.16666520680903782f * k));
  p = hn::MulAdd(p, r, hn::Set(d, 0.4999999345079673f * k));
  const V kv = hn::Set(d, k);
  p = hn::MulAdd(hn::Mul(r, r), p, hn::MulAdd(r, kv, kv));
  return hn::Mul(p, hn::BitCast(d, hn::ShiftLeft<23>(hn::BitCast(di, j))));
}

// e^x for x <= 0: ExpNonPositive in f32, ExpK in f64.
template <class D, class V>
HWY_INLINE V ExpOfNonPositive(D d, V x) {
  if constexpr (sizeof(hn::TFromD<D>) == 4) {
    return ExpNonPositive(d, x, hn::Zero(d));
  } else {
    return ExpK()(d, x);
  }
}

// e^(hi + lo) for hi <= 0 and |lo| far below 1 (the low part of an
// exponent that does not fit one lane value): ExpNonPositive in f32, ExpK
// of hi times 1 + lo in f64.
template <class D, class V>
HWY_INLINE V ExpOfNonPositive(D d, V hi, V lo) {
  if constexpr (sizeof(hn::TFromD<D>) == 4) {
    return ExpNonPositive(d, hi, lo);
  } else {
    const V e = ExpK()(d, hi);
    return hn::MulAdd(e, lo, e);
  }
}

// tanh(x) in f32 below |x| = 0.55: x P(x^2) / Q(x^2), degrees 1 and 2, all
// coefficients positive: a minimax fit of the relative error (Lawson's
// iteration on 9,000 points, tanh from mpmath), 6.0e-10, and 1.1e-9 with
// the coefficients rounded to f32.
constexpr float kTanhP[] = {0.99999999940158191f, 0.094964551192180488f};
constexpr float kTanhQ[] = {1.0f, 0.42829781862557997f, 0.0094337441963115564f};

/**
 * tanh(x), lane types f32 and f64.
 *   Max error: see the table above.
 *   Valid range: all inputs. tanh(+-inf) = +-1, tanh(+-0) = +-0, tanh(NaN) = NaN.
 * f32: kTanhP / kTanhQ below |x| = 0.55, (1 - E) / (1 + E) with
 * E = e^(-2 |x|) (ExpNonPositive) above, one division for both (about half
 * of hn::Tanh's time). f64: hn::Tanh (1.0.3), whose Tanh(NaN) is not NaN.
 */
struct TanhK {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    if constexpr (sizeof(hn::TFromD<D>) == 4) {
      const V a = hn::Abs(x), z = hn::Mul(x, x), e = ExpOfNonPositive(d, hn::Mul(a, hn::Set(d, -2.0f)));
      const auto small = hn::Lt(a, hn::Set(d, 0.55f));
      return hn::Div(hn::IfThenElse(small, SmallNum(d, x, z), LargeNum(d, x, e)),
                     hn::IfThenElse(small, SmallDen(d, z), LargeDen(d, e)));
    } else {
      return KeepNaN(x, hn::Tanh(d, x));
    }
  }
  // One lane (OneElement): only the side the lane takes, with the same
  // operations as operator() there, hence the same bits, but without the
  // other side's latency, which a chain of scalar ops waits for.
  template <class D, class V>
  HWY_INLINE V one_lane(D d, V x) const {
    if constexpr (sizeof(hn::TFromD<D>) == 4) {
      const V a = hn::Abs(x);
      if (hn::AllTrue(d, hn::Lt(a, hn::Set(d, 0.55f)))) {
        const V z = hn::Mul(x, x);
        return hn::Div(SmallNum(d, x, z), SmallDen(d, z));
      }
      const V e = ExpOfNonPositive(d, hn::Mul(a, hn::Set(d, -2.0f)));
      return hn::Div(LargeNum(d, x, e), LargeDen(d, e));
    } else {
      return (*this)(d, x);
    }
  }

 private:
  // Below |x| = 0.55: x P(z) / Q(z), z = x^2.
  template <class D, class V>
  static HWY_INLINE V SmallNum(D d, V x, V z) {
    return hn::Mul(x, hn::MulAdd(z, hn::Set(d, kTanhP[1]), hn::Set(d, kTanhP[0])));
  }
  template <class D, class V>
  static HWY_INLINE V SmallDen(D d, V z) {
    return hn::MulAdd(hn::MulAdd(z, hn::Set(d, kTanhQ[2]), hn::Set(d, kTanhQ[1])), z, hn::Set(d, kTanhQ[0]));
  }
  // Above: sign(x) (1 - e) / (1 + e), e = e^(-2 |x|).
  template <class D, class V>
  static HWY_INLINE V LargeNum(D d, V x, V e) {
    return hn::CopySign(hn::Sub(hn::Set(d, 1.0f), e), x);
  }
  template <class D, class V>
  static HWY_INLINE V LargeDen(D d, V e) {
    return hn::Add(hn::Set(d, 1.0f), e);
  }
};

// pow(x, p) fast paths for the exponents 0, 1, 2, -1 and 0.5. They are
// correctly rounded (IEEE mul/div/sqrt), hence within 0.5 ulp of the exact
// value; std::pow is not always correctly rounded, so they may differ from it
// by 1 ulp (bit-exactness with std::pow is not part of the contract). The
// special values match std::pow, see each functor.

// pow(x, 0) = 1 for every x, NaN included.
struct PowZeroK {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V) const {
    return hn::Set(d, hn::TFromD<D>(1));
  }
};

// pow(x, 1) = x.
struct PowOneK {
  template <class D, class V>
  HWY_INLINE V operator()(D, V x) const {
    return x;
  }
};

// pow(x, 2) = x * x.
struct PowTwoK {
  template <class D, class V>
  HWY_INLINE V operator()(D, V x) const {
    return hn::Mul(x, x);
  }
};

// pow(x, -1) = 1 / x (pow(+-0, -1) = +-inf, pow(+-inf, -1) = +-0).
struct PowMinusOneK {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    return hn::Div(hn::Set(d, hn::TFromD<D>(1)), x);
  }
};

// pow(x, 0.5) = sqrt(x), except pow(-0, 0.5) = +0 (adding +0 turns -0 into
// +0 and changes nothing else) and pow(-inf, 0.5) = +inf.
struct PowHalfK {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    const V inf = hn::Inf(d);
    const V y = hn::Add(hn::Sqrt(x), hn::Zero(d));
    return hn::IfThenElse(hn::Eq(x, hn::Neg(inf)), inf, y);
  }
};

// Binary functors: op(a, b) on vectors. Rows of other strides are gathered
// and run through the same vector code (elementwise.cc).
struct AddK {
  template <class V>
  HWY_INLINE V operator()(V a, V b) const {
    return hn::Add(a, b);
  }
};

struct SubK {
  template <class V>
  HWY_INLINE V operator()(V a, V b) const {
    return hn::Sub(a, b);
  }
};

struct MulK {
  template <class V>
  HWY_INLINE V operator()(V a, V b) const {
    return hn::Mul(a, b);
  }
};

struct DivK {
  template <class V>
  HWY_INLINE V operator()(V a, V b) const {
    return hn::Div(a, b);
  }
};

// g * (1 - y*y): the gradient of tanh from its output. Unfused on purpose,
// so every target rounds as the scalar formula does.
struct TanhBackwardK {
  template <class V>
  HWY_INLINE V operator()(V g, V y) const {
    const hn::DFromV<V> d;
    return hn::Mul(g, hn::Sub(hn::Set(d, 1), hn::Mul(y, y)));
  }
};

}  // namespace ag::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // AG_KERNELS_SIMD_INL_H_
