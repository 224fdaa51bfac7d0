// Reductions of one dim that are not sums: max and min (with the index of
// the selected element) and prod. The tensor is read as contiguous
// (outer, n, inner) with the reduced dim of size n in the middle. Max and min
// run SIMD per Highway target: along the row when the dim is innermost
// (inner == 1), else across the inner extent, streaming the rows in order.
// Prod multiplies in double in a fixed order.
#include "kernels/targets.h"  // first: selects the targets

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include "kernels/kernels.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/kernels/reduce_dim.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "kernels/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ag::kernels::HWY_NAMESPACE {

// The extreme of two vectors. hn::Max/Min drop NaN on some targets, so NaN
// lanes are carried separately (see MaxMinRow).
template <bool kMax, class V>
HWY_INLINE V Extreme(V a, V b) {
  return kMax ? hn::Max(a, b) : hn::Min(a, b);
}

// Max or min of a contiguous row of n >= 1 elements; NaN if any is NaN.
template <bool kMax, class T>
HWY_NOINLINE T MaxMinRow(const T* HWY_RESTRICT x, size_t n) {
  const hn::ScalableTag<T> d;
  const size_t N = hn::Lanes(d);
  const auto init = hn::Set(d, kMax ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity());
  auto best = init;
  auto nan = hn::Zero(d);  // NaN in every lane that saw one
  size_t i = 0;
  for (; i + N <= n; i += N) {
    const auto v = hn::LoadU(d, x + i);
    best = Extreme<kMax>(best, v);
    nan = hn::IfThenElse(hn::IsNaN(v), v, nan);
  }
  if (i < n) {
    const auto v = hn::IfThenElse(hn::FirstN(d, n - i), LoadTail(d, x + i, n - i), init);
    best = Extreme<kMax>(best, v);
    nan = hn::IfThenElse(hn::IsNaN(v), v, nan);
  }
  if (!hn::AllFalse(d, hn::IsNaN(nan))) return std::numeric_limits<T>::quiet_NaN();
  // Reduced from lane 0, not from an identity: Highway's emulated target
  // starts MinOfLanes at the largest finite value, so a row of +inf gave
  // FLT_MAX, which no element equals.
  HWY_ALIGN T lanes[HWY_MAX_BYTES / sizeof(T)];
  hn::Store(best, d, lanes);
  T r = lanes[0];
  for (size_t j = 1; j < N; ++j) r = kMax ? std::max(r, lanes[j]) : std::min(r, lanes[j]);
  return r;
}

// out[j] = max or min over k of x[k * inner + j], j < inner, and (if idx is
// not null) in idx[j] the k it came from, as T (exact up to 2^digits). Rows
// are streamed in order with the running extremes kept in out, vectors
// across j. Only a strictly better element or a first NaN replaces the
// running one, so ties keep the first index and a NaN wins.
template <bool kMax, class T>
HWY_NOINLINE void MaxMinColumns(const T* HWY_RESTRICT x, size_t n, size_t inner, T* HWY_RESTRICT out,
                                T* HWY_RESTRICT idx) {
  const hn::ScalableTag<T> d;
  const size_t N = hn::Lanes(d);
  std::copy(x, x + inner, out);
  if (idx) std::fill(idx, idx + inner, T(0));
  for (size_t k = 1; k < n; ++k) {
    const T* row = x + k * inner;
    const auto kv = hn::Set(d, static_cast<T>(k));
    for (size_t j = 0; j < inner; j += N) {
      const size_t m = std::min(N, inner - j);
      const bool full = m == N;
      const auto best = full ? hn::LoadU(d, out + j) : LoadTail(d, out + j, m);
      const auto v = full ? hn::LoadU(d, row + j) : LoadTail(d, row + j, m);
      const auto better = kMax ? hn::Gt(v, best) : hn::Lt(v, best);
      const auto take = hn::Or(better, hn::AndNot(hn::IsNaN(best), hn::IsNaN(v)));
      if (full) {
        hn::StoreU(hn::IfThenElse(take, v, best), d, out + j);
      } else {
        StoreTail(d, hn::IfThenElse(take, v, best), out + j, m);
      }
      if (!idx) continue;
      const auto old = full ? hn::LoadU(d, idx + j) : LoadTail(d, idx + j, m);
      if (full) {
        hn::StoreU(hn::IfThenElse(take, kv, old), d, idx + j);
      } else {
        StoreTail(d, hn::IfThenElse(take, kv, old), idx + j, m);
      }
    }
  }
}

// Index of the first element equal to the extreme (the first NaN for NaN).
template <class T>
bool Selects(T v, T best) {
  return std::isnan(best) ? std::isnan(v) : v == best;
}

template <bool kMax, class T>
void MaxMin(const T* x, int64_t outer, int64_t n, int64_t inner, T* out, int64_t* indices) {
  // Column indices as T lanes are exact up to 2^digits; longer dims search
  // for the index afterwards.
  const bool lane_index = indices && inner > 1 && n <= (int64_t{1} << std::numeric_limits<T>::digits);
  std::vector<T> idx(lane_index ? static_cast<size_t>(inner) : 0);
  std::vector<uint8_t> found(indices && !lane_index && inner > 1 ? static_cast<size_t>(inner) : 0);
  for (int64_t o = 0; o < outer; ++o) {
    const T* xb = x + o * n * inner;
    T* ob = out + o * inner;
    if (inner == 1) {
      *ob = MaxMinRow<kMax>(xb, static_cast<size_t>(n));
      if (indices) {
        int64_t k = 0;
        while (k + 1 < n && !Selects(xb[k], *ob)) ++k;  // the extreme is an element: never past the row
        indices[o] = k;
      }
      continue;
    }
    MaxMinColumns<kMax>(xb, static_cast<size_t>(n), static_cast<size_t>(inner), ob, lane_index ? idx.data() : nullptr);
    if (!indices) continue;
    int64_t* ib = indices + o * inner;
    if (lane_index) {
      for (int64_t j = 0; j < inner; ++j) ib[j] = static_cast<int64_t>(idx[static_cast<size_t>(j)]);
      continue;
    }
    std::fill(found.begin(), found.end(), uint8_t{0});
    for (int64_t k = 0; k < n; ++k) {
      for (int64_t j = 0; j < inner; ++j) {
        if (!found[j] && Selects(xb[k * inner + j], ob[j])) ib[j] = k, found[j] = 1;
      }
    }
  }
}

template <class T>
void Prod(const T* x, int64_t outer, int64_t n, int64_t inner, T* out) {
  std::vector<double> acc(static_cast<size_t>(inner));
  for (int64_t o = 0; o < outer; ++o) {
    const T* xb = x + o * n * inner;
    std::fill(acc.begin(), acc.end(), 1.0);
    for (int64_t k = 0; k < n; ++k) {
      for (int64_t j = 0; j < inner; ++j) acc[j] *= static_cast<double>(xb[k * inner + j]);
    }
    for (int64_t j = 0; j < inner; ++j) out[o * inner + j] = static_cast<T>(acc[j]);
  }
}

template <class T>
void ReduceDimTyped(DimReduceKind k, const char* x, int64_t outer, int64_t n, int64_t inner, char* out,
                    int64_t* indices) {
  const T* xp = reinterpret_cast<const T*>(x);
  T* op = reinterpret_cast<T*>(out);
  switch (k) {
    case DimReduceKind::Max: return MaxMin<true>(xp, outer, n, inner, op, indices);
    case DimReduceKind::Min: return MaxMin<false>(xp, outer, n, inner, op, indices);
    case DimReduceKind::Prod: return Prod(xp, outer, n, inner, op);
  }
}

void ReduceDim(DimReduceKind k, DType dt, const char* x, int64_t outer, int64_t n, int64_t inner, char* out,
               int64_t* indices) {
  if (dt == DType::F64) return ReduceDimTyped<double>(k, x, outer, n, inner, out, indices);
  return ReduceDimTyped<float>(k, x, outer, n, inner, out, indices);
}

int64_t ReduceDimTargetId() { return HWY_TARGET; }

}  // namespace ag::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ag::kernels {

HWY_EXPORT(ReduceDim);
HWY_EXPORT(ReduceDimTargetId);

void reduce_dim(DimReduceKind k, DType dt, const char* x, int64_t outer, int64_t n, int64_t inner, char* out,
                int64_t* indices) {
  HWY_DYNAMIC_DISPATCH(ReduceDim)(k, dt, x, outer, n, inner, out, indices);
}

int64_t reduce_dim_target() { return HWY_DYNAMIC_DISPATCH(ReduceDimTargetId)(); }

}  // namespace ag::kernels
#endif  // HWY_ONCE
