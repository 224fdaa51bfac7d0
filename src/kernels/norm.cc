// Row normalization (layer_norm, rms_norm): each contiguous row of n elements
// is normalized by its own statistics, computed in two passes (the mean, then
// the deviations from it), so f32 rows with a large mean keep their precision.
// Rows are independent, so any split of the rows gives the same bits.
#include <cmath>
#include <cstddef>

#include "kernels/kernels.h"
#include "kernels/targets.h"  // first: selects the targets

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/kernels/norm.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ag::kernels::HWY_NAMESPACE {

// Sum of the vectors of a row of x (tail lanes zero), with two accumulators
// to halve the add latency chain.
template <class D>
HWY_INLINE hn::TFromD<D> RowSum(D d, const hn::TFromD<D>* HWY_RESTRICT x, size_t n) {
  const size_t N = hn::Lanes(d);
  auto a0 = hn::Zero(d), a1 = hn::Zero(d);
  size_t i = 0;
  for (; i + 2 * N <= n; i += 2 * N) {
    a0 = hn::Add(a0, hn::LoadU(d, x + i));
    a1 = hn::Add(a1, hn::LoadU(d, x + i + N));
  }
  for (; i + N <= n; i += N) a0 = hn::Add(a0, hn::LoadU(d, x + i));
  if (i < n) a1 = hn::Add(a1, LoadTail(d, x + i, n - i));
  return hn::GetLane(hn::SumOfLanes(d, hn::Add(a0, a1)));
}

// The sums of c = x - m and of c^2 over a row (tail lanes excluded).
template <class D>
HWY_INLINE void DeviationSums(D d, const hn::TFromD<D>* HWY_RESTRICT x, size_t n, hn::TFromD<D> m, hn::TFromD<D>* sum,
                              hn::TFromD<D>* sum_sq) {
  const size_t N = hn::Lanes(d);
  const auto vm = hn::Set(d, m);
  auto s = hn::Zero(d), q = hn::Zero(d);
  size_t i = 0;
  for (; i + N <= n; i += N) {
    const auto c = hn::Sub(hn::LoadU(d, x + i), vm);
    s = hn::Add(s, c);
    q = hn::Add(q, hn::Mul(c, c));
  }
  if (i < n) {
    const auto c = hn::IfThenElseZero(hn::FirstN(d, n - i), hn::Sub(LoadTail(d, x + i, n - i), vm));
    s = hn::Add(s, c);
    q = hn::Add(q, hn::Mul(c, c));
  }
  *sum = hn::GetLane(hn::SumOfLanes(d, s));
  *sum_sq = hn::GetLane(hn::SumOfLanes(d, q));
}

// The mean (0 unless kCenter) and rstd = 1 / sqrt(var + eps) of one row, by
// the corrected two-pass algorithm: the second pass sums the deviations from
// the first mean as well, which removes that mean's rounding error (large in
// f32 for a row with a large common offset) from both mean and variance.
template <bool kCenter, class T>
HWY_INLINE void RowStats(const T* HWY_RESTRICT x, size_t n, double eps, T* mean, T* rstd) {
  const hn::ScalableTag<T> d;
  const T inv_n = T(1) / static_cast<T>(n);
  T m = kCenter ? RowSum(d, x, n) * inv_n : T(0);
  T dev = 0, dev_sq = 0;
  DeviationSums(d, x, n, m, &dev, &dev_sq);
  T var = dev_sq * inv_n;
  if (kCenter) {
    const T shift = dev * inv_n;
    m += shift;
    var -= shift * shift;
  }
  *mean = m;
  *rstd = static_cast<T>(1.0 / std::sqrt(static_cast<double>(var) + eps));
}

// The statistics of row r: those the forward stored when rstd is given (mean
// only if kCenter), else recomputed from the row (the same bits).
template <bool kCenter, class T>
HWY_INLINE void StoredOrRowStats(const T* HWY_RESTRICT x, size_t n, double eps, const T* mean, const T* rstd, int64_t r,
                                 T* m, T* rs) {
  if (rstd == nullptr) return RowStats<kCenter>(x, n, eps, m, rs);
  *m = kCenter ? mean[r] : T(0);
  *rs = rstd[r];
}

// y = (x - mean) * rstd [* w] [+ b] over one row.
template <class T>
HWY_NOINLINE void NormRow(const T* HWY_RESTRICT x, const T* HWY_RESTRICT w, const T* HWY_RESTRICT b, T* HWY_RESTRICT y,
                          size_t n, T m, T r) {
  const hn::ScalableTag<T> d;
  const size_t N = hn::Lanes(d);
  const auto vm = hn::Set(d, m);
  const auto vr = hn::Set(d, r);
  auto out = [&](size_t i, auto v, size_t lanes) {
    v = hn::Mul(hn::Sub(v, vm), vr);
    if (w) v = hn::Mul(v, lanes == N ? hn::LoadU(d, w + i) : LoadTail(d, w + i, lanes));
    if (b) v = hn::Add(v, lanes == N ? hn::LoadU(d, b + i) : LoadTail(d, b + i, lanes));
    return v;
  };
  size_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(out(i, hn::LoadU(d, x + i), N), d, y + i);
  if (i < n) StoreTail(d, out(i, LoadTail(d, x + i, n - i), n - i), y + i, n - i);
}

// The gradient of one row with respect to x, with gx = g [* w] and
// xhat = (x - m) * r: dx = r * (gx - mean(gx) - xhat * mean(gx * xhat))
// (no mean(gx) term without kCenter).
template <bool kCenter, class T>
HWY_NOINLINE void NormBackwardRow(const T* HWY_RESTRICT g, const T* HWY_RESTRICT x, const T* HWY_RESTRICT w,
                                  T* HWY_RESTRICT out, size_t n, T m, T r) {
  const hn::ScalableTag<T> d;
  const size_t N = hn::Lanes(d);
  const auto vm = hn::Set(d, m);
  const auto vr = hn::Set(d, r);
  auto load = [&](const T* p, size_t i, size_t lanes) {
    return lanes == N ? hn::LoadU(d, p + i) : LoadTail(d, p + i, lanes);
  };
  auto gx_at = [&](size_t i, size_t lanes) {
    const auto gv = load(g, i, lanes);
    return w ? hn::Mul(gv, load(w, i, lanes)) : gv;
  };
  // Tail lanes of gx are zero, so they add nothing to either sum.
  auto s = hn::Zero(d), q = hn::Zero(d);
  size_t i = 0;
  for (; i < n; i += N) {
    const size_t lanes = i + N <= n ? N : n - i;
    const auto gv = gx_at(i, lanes);
    s = hn::Add(s, gv);
    q = hn::Add(q, hn::Mul(gv, hn::Mul(hn::Sub(load(x, i, lanes), vm), vr)));
  }
  const T inv_n = T(1) / static_cast<T>(n);
  const auto a = hn::Set(d, kCenter ? hn::GetLane(hn::SumOfLanes(d, s)) * inv_n : T(0));
  const auto c = hn::Set(d, hn::GetLane(hn::SumOfLanes(d, q)) * inv_n);
  for (i = 0; i < n; i += N) {
    const size_t lanes = i + N <= n ? N : n - i;
    const auto xh = hn::Mul(hn::Sub(load(x, i, lanes), vm), vr);
    const auto v = hn::Mul(vr, hn::Sub(hn::Sub(gx_at(i, lanes), a), hn::Mul(xh, c)));
    if (lanes == N) {
      hn::StoreU(v, d, out + i);
    } else {
      StoreTail(d, v, out + i, lanes);
    }
  }
}

template <bool kCenter, class T>
void NormRowsTyped(const char* xc, const char* wc, const char* bc, char* yc, char* meanc, char* rstdc, int64_t rows,
                   int64_t n, double eps) {
  const T* x = reinterpret_cast<const T*>(xc);
  const T* w = reinterpret_cast<const T*>(wc);
  const T* b = reinterpret_cast<const T*>(bc);
  T* y = reinterpret_cast<T*>(yc);
  T* mean = reinterpret_cast<T*>(meanc);
  T* rstd = reinterpret_cast<T*>(rstdc);
  for (int64_t r = 0; r < rows; ++r) {
    T m, rs;
    RowStats<kCenter>(x + r * n, static_cast<size_t>(n), eps, &m, &rs);
    if (mean) mean[r] = m;
    rstd[r] = rs;
    NormRow(x + r * n, w, b, y + r * n, static_cast<size_t>(n), m, rs);
  }
}

void NormRows(DType dt, bool center, const char* x, const char* w, const char* b, char* y, char* mean, char* rstd,
              int64_t rows, int64_t n, double eps) {
  if (dt == DType::F64) {
    return center ? NormRowsTyped<true, double>(x, w, b, y, mean, rstd, rows, n, eps)
                  : NormRowsTyped<false, double>(x, w, b, y, mean, rstd, rows, n, eps);
  }
  return center ? NormRowsTyped<true, float>(x, w, b, y, mean, rstd, rows, n, eps)
                : NormRowsTyped<false, float>(x, w, b, y, mean, rstd, rows, n, eps);
}

template <bool kCenter, class T>
void NormBackwardRowsTyped(const char* gc, const char* xc, const char* wc, const char* meanc, const char* rstdc,
                           char* outc, int64_t rows, int64_t n, double eps) {
  const T* g = reinterpret_cast<const T*>(gc);
  const T* x = reinterpret_cast<const T*>(xc);
  const T* w = reinterpret_cast<const T*>(wc);
  const T* mean = reinterpret_cast<const T*>(meanc);
  const T* rstd = reinterpret_cast<const T*>(rstdc);
  T* out = reinterpret_cast<T*>(outc);
  for (int64_t r = 0; r < rows; ++r) {
    T m, rs;
    StoredOrRowStats<kCenter>(x + r * n, static_cast<size_t>(n), eps, mean, rstd, r, &m, &rs);
    NormBackwardRow<kCenter>(g + r * n, x + r * n, w, out + r * n, static_cast<size_t>(n), m, rs);
  }
}

// acc += g * xhat over rows, xhat = (x - mean) * rstd per row.
template <bool kCenter, class T>
void NormWeightGradRowsTyped(const char* gc, const char* xc, const char* meanc, const char* rstdc, char* accc,
                             int64_t rows, int64_t n, double eps) {
  const hn::ScalableTag<T> d;
  const size_t N = hn::Lanes(d);
  const T* g = reinterpret_cast<const T*>(gc);
  const T* x = reinterpret_cast<const T*>(xc);
  const T* mean = reinterpret_cast<const T*>(meanc);
  const T* rstd = reinterpret_cast<const T*>(rstdc);
  T* acc = reinterpret_cast<T*>(accc);
  const size_t len = static_cast<size_t>(n);
  for (int64_t r = 0; r < rows; ++r) {
    T m, rs;
    StoredOrRowStats<kCenter>(x + r * n, len, eps, mean, rstd, r, &m, &rs);
    const auto vm = hn::Set(d, m), vr = hn::Set(d, rs);
    const T* gr = g + r * n;
    const T* xr = x + r * n;
    size_t i = 0;
    for (; i + N <= len; i += N) {
      const auto xh = hn::Mul(hn::Sub(hn::LoadU(d, xr + i), vm), vr);
      hn::StoreU(hn::Add(hn::LoadU(d, acc + i), hn::Mul(hn::LoadU(d, gr + i), xh)), d, acc + i);
    }
    if (i < len) {
      const size_t k = len - i;
      const auto xh = hn::Mul(hn::Sub(LoadTail(d, xr + i, k), vm), vr);
      StoreTail(d, hn::Add(LoadTail(d, acc + i, k), hn::Mul(LoadTail(d, gr + i, k), xh)), acc + i, k);
    }
  }
}

void NormWeightGradRows(DType dt, bool center, const char* g, const char* x, const char* mean, const char* rstd,
                        char* acc, int64_t rows, int64_t n, double eps) {
  if (dt == DType::F64) {
    return center ? NormWeightGradRowsTyped<true, double>(g, x, mean, rstd, acc, rows, n, eps)
                  : NormWeightGradRowsTyped<false, double>(g, x, mean, rstd, acc, rows, n, eps);
  }
  return center ? NormWeightGradRowsTyped<true, float>(g, x, mean, rstd, acc, rows, n, eps)
                : NormWeightGradRowsTyped<false, float>(g, x, mean, rstd, acc, rows, n, eps);
}

void NormBackwardRows(DType dt, bool center, const char* g, const char* x, const char* w, const char* mean,
                      const char* rstd, char* out, int64_t rows, int64_t n, double eps) {
  if (dt == DType::F64) {
    return center ? NormBackwardRowsTyped<true, double>(g, x, w, mean, rstd, out, rows, n, eps)
                  : NormBackwardRowsTyped<false, double>(g, x, w, mean, rstd, out, rows, n, eps);
  }
  return center ? NormBackwardRowsTyped<true, float>(g, x, w, mean, rstd, out, rows, n, eps)
                : NormBackwardRowsTyped<false, float>(g, x, w, mean, rstd, out, rows, n, eps);
}

int64_t NormTargetId() { return HWY_TARGET; }

}  // namespace ag::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ag::kernels {

HWY_EXPORT(NormRows);
HWY_EXPORT(NormBackwardRows);
HWY_EXPORT(NormWeightGradRows);
HWY_EXPORT(NormTargetId);

void norm_rows(DType dt, bool center, const char* x, const char* w, const char* b, char* y, char* mean, char* rstd,
               int64_t rows, int64_t n, double eps) {
  HWY_DYNAMIC_DISPATCH(NormRows)(dt, center, x, w, b, y, mean, rstd, rows, n, eps);
}

void norm_backward_rows(DType dt, bool center, const char* g, const char* x, const char* w, const char* mean,
                        const char* rstd, char* out, int64_t rows, int64_t n, double eps) {
  HWY_DYNAMIC_DISPATCH(NormBackwardRows)(dt, center, g, x, w, mean, rstd, out, rows, n, eps);
}

void norm_weight_grad_rows(DType dt, bool center, const char* g, const char* x, const char* mean, const char* rstd,
                           char* acc, int64_t rows, int64_t n, double eps) {
  HWY_DYNAMIC_DISPATCH(NormWeightGradRows)(dt, center, g, x, mean, rstd, acc, rows, n, eps);
}

int64_t norm_target() { return HWY_DYNAMIC_DISPATCH(NormTargetId)(); }

}  // namespace ag::kernels
#endif  // HWY_ONCE
