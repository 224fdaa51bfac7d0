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
//   TanhK  f32 3 ulp, f64 3 ulp (worst near |x| = 0.17-0.2)
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

/**
 * tanh(x), lane types f32 and f64.
 *   Max error: see the table above.
 *   Valid range: all inputs. tanh(+-inf) = +-1, tanh(+-0) = +-0, tanh(NaN) = NaN.
 * Fix-up over hn::Tanh (1.0.3): Tanh(NaN) is not NaN.
 */
struct TanhK {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    return KeepNaN(x, hn::Tanh(d, x));
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
