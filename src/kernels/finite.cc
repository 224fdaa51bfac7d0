// The anomaly-mode finiteness scan, compiled for each Highway target.
#include "kernels/targets.h"  // first: selects the targets

#include <cstddef>

#include "kernels/finite.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/kernels/finite.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "kernels/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ag::kernels::HWY_NAMESPACE {

// x - x is 0 exactly for finite x and NaN for NaN and +-Inf; this needs no
// exponent masks and behaves alike on every target (also with FTZ/DAZ).
template <class D, class V>
HWY_INLINE bool AllFiniteK(D d, V v) {
  return hn::AllTrue(d, hn::Eq(hn::Sub(v, v), hn::Zero(d)));
}

template <class T>
HWY_NOINLINE size_t FirstNonfiniteRow(const T* x, size_t n) {
  const hn::ScalableTag<T> d;
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + N <= n; i += N) {
    if (!AllFiniteK(d, hn::LoadU(d, x + i))) break;
  }
  // The tail (zero-filled past n) or the vector that failed: find the lane.
  if (i < n && (i + N <= n || !AllFiniteK(d, LoadTail(d, x + i, n - i)))) {
    for (; i < n; ++i) {
      if (!(x[i] - x[i] == T(0))) return i;
    }
  }
  return n;
}

int64_t FirstNonfinite(DType dt, const char* x, int64_t n) {
  const size_t count = static_cast<size_t>(n);
  if (dt == DType::F64) return static_cast<int64_t>(FirstNonfiniteRow(reinterpret_cast<const double*>(x), count));
  return static_cast<int64_t>(FirstNonfiniteRow(reinterpret_cast<const float*>(x), count));
}

int64_t FiniteTargetId() { return HWY_TARGET; }

}  // namespace ag::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ag::kernels {

HWY_EXPORT(FirstNonfinite);
HWY_EXPORT(FiniteTargetId);

int64_t first_nonfinite(DType dt, const char* x, int64_t n) { return HWY_DYNAMIC_DISPATCH(FirstNonfinite)(dt, x, n); }

int64_t finite_target() { return HWY_DYNAMIC_DISPATCH(FiniteTargetId)(); }

}  // namespace ag::kernels
#endif  // HWY_ONCE
