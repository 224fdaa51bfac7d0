// Clamp over contiguous rows, compiled for each Highway target.
#include "kernels/targets.h"  // first: selects the targets

#include <cstddef>

#include "kernels/clamp.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/kernels/clamp.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "kernels/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ag::kernels::HWY_NAMESPACE {

// Selects, not Min/Max: those treat NaN and equal signed zeros differently
// per target. NaN compares false and stays; x equal to a bound stays x.
template <class D, class V>
HWY_INLINE V ClampK(D, V x, V lo, V hi) {
  const V a = hn::IfThenElse(x < lo, lo, x);
  return hn::IfThenElse(a > hi, hi, a);
}

template <class D, class V>
HWY_INLINE V InRangeK(D d, V x, V lo, V hi) {
  return hn::IfThenElseZero(hn::And(x >= lo, x <= hi), hn::Set(d, hn::TFromD<D>(1)));
}

template <class T>
HWY_NOINLINE void ClampRow(const T* x, T* out, T* mask, size_t n, T lo_s, T hi_s) {
  const hn::ScalableTag<T> d;
  const size_t N = hn::Lanes(d);
  const auto lo = hn::Set(d, lo_s), hi = hn::Set(d, hi_s);
  size_t i = 0;
  for (; i + N <= n; i += N) {
    const auto v = hn::LoadU(d, x + i);
    if (mask) hn::StoreU(InRangeK(d, v, lo, hi), d, mask + i);
    hn::StoreU(ClampK(d, v, lo, hi), d, out + i);
  }
  if (i < n) {
    const auto v = LoadTail(d, x + i, n - i);
    if (mask) StoreTail(d, InRangeK(d, v, lo, hi), mask + i, n - i);
    StoreTail(d, ClampK(d, v, lo, hi), out + i, n - i);
  }
}

void Clamp(DType dt, const char* x, char* out, char* mask, int64_t n, double lo, double hi) {
  const size_t count = static_cast<size_t>(n);
  if (dt == DType::F64) {
    ClampRow(reinterpret_cast<const double*>(x), reinterpret_cast<double*>(out), reinterpret_cast<double*>(mask), count,
             lo, hi);
  } else {
    ClampRow(reinterpret_cast<const float*>(x), reinterpret_cast<float*>(out), reinterpret_cast<float*>(mask), count,
             static_cast<float>(lo), static_cast<float>(hi));
  }
}

int64_t ClampTargetId() { return HWY_TARGET; }

}  // namespace ag::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ag::kernels {

HWY_EXPORT(Clamp);
HWY_EXPORT(ClampTargetId);

void clamp(DType dt, const char* x, char* out, char* mask, int64_t n, double lo, double hi) {
  HWY_DYNAMIC_DISPATCH(Clamp)(dt, x, out, mask, n, lo, hi);
}

int64_t clamp_target() { return HWY_DYNAMIC_DISPATCH(ClampTargetId)(); }

}  // namespace ag::kernels
#endif  // HWY_ONCE
