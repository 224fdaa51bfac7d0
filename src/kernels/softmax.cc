// Softmax and log-softmax along one dim, and their fused gradients. The
// tensor is read as contiguous (outer, n, inner) with the dim of size n in
// the middle. inner == 1 (the dim is innermost) runs SIMD rows per Highway
// target along the row; other dims run SIMD across the inner extent, one
// column per lane. Both subtract the maximum first, so exp never overflows.
#include "kernels/targets.h"  // first: selects the targets

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include "kernels/kernels.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/kernels/softmax.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "kernels/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ag::kernels::HWY_NAMESPACE {

// y = softmax(x) (log_softmax if kLog) over a contiguous row of n elements.
// An all -inf row gives NaN (-inf - -inf), as in PyTorch.
template <bool kLog, class T>
HWY_NOINLINE void SoftmaxRow(const T* HWY_RESTRICT x, T* HWY_RESTRICT y, size_t n) {
  const hn::ScalableTag<T> d;
  const size_t N = hn::Lanes(d);
  const auto ninf = hn::Set(d, -std::numeric_limits<T>::infinity());
  auto vmax = ninf;
  size_t i = 0;
  for (; i + N <= n; i += N) vmax = hn::Max(vmax, hn::LoadU(d, x + i));
  if (i < n) vmax = hn::Max(vmax, hn::IfThenElse(hn::FirstN(d, n - i), LoadTail(d, x + i, n - i), ninf));
  const auto m = hn::MaxOfLanes(d, vmax);

  auto vsum = hn::Zero(d);
  for (i = 0; i + N <= n; i += N) {
    const auto e = ExpK()(d, hn::Sub(hn::LoadU(d, x + i), m));
    if (!kLog) hn::StoreU(e, d, y + i);
    vsum = hn::Add(vsum, e);
  }
  if (i < n) {
    const auto e = hn::IfThenElseZero(hn::FirstN(d, n - i), ExpK()(d, hn::Sub(LoadTail(d, x + i, n - i), m)));
    if (!kLog) StoreTail(d, e, y + i, n - i);
    vsum = hn::Add(vsum, e);
  }
  const T s = hn::GetLane(hn::SumOfLanes(d, vsum));

  if (kLog) {
    // y = (x - max) - log(sum): the shift first, as the sum was formed.
    const auto ls = hn::Set(d, std::log(s));
    for (i = 0; i + N <= n; i += N) hn::StoreU(hn::Sub(hn::Sub(hn::LoadU(d, x + i), m), ls), d, y + i);
    if (i < n) StoreTail(d, hn::Sub(hn::Sub(LoadTail(d, x + i, n - i), m), ls), y + i, n - i);
  } else {
    const auto r = hn::Set(d, T(1) / s);
    for (i = 0; i + N <= n; i += N) hn::StoreU(hn::Mul(hn::LoadU(d, y + i), r), d, y + i);
    if (i < n) StoreTail(d, hn::Mul(LoadTail(d, y + i, n - i), r), y + i, n - i);
  }
}

// The fused gradient over a contiguous row, from the upstream gradient g and
// the forward output y:
//   softmax:     out = y * (g - sum(g * y))
//   log_softmax: out = g - exp(y) * sum(g)
template <bool kLog, class T>
HWY_NOINLINE void SoftmaxBackwardRow(const T* HWY_RESTRICT g, const T* HWY_RESTRICT y, T* HWY_RESTRICT out,
                                     size_t n) {
  const hn::ScalableTag<T> d;
  const size_t N = hn::Lanes(d);
  auto vsum = hn::Zero(d);
  size_t i = 0;
  for (; i + N <= n; i += N) {
    const auto gv = hn::LoadU(d, g + i);
    vsum = hn::Add(vsum, kLog ? gv : hn::Mul(gv, hn::LoadU(d, y + i)));
  }
  if (i < n) {
    const auto gv = LoadTail(d, g + i, n - i);
    vsum = hn::Add(vsum, kLog ? gv : hn::Mul(gv, LoadTail(d, y + i, n - i)));
  }
  const auto s = hn::SumOfLanes(d, vsum);
  auto row = [&](auto gv, auto yv) {
    return kLog ? hn::Sub(gv, hn::Mul(ExpK()(d, yv), s)) : hn::Mul(yv, hn::Sub(gv, s));
  };
  for (i = 0; i + N <= n; i += N) hn::StoreU(row(hn::LoadU(d, g + i), hn::LoadU(d, y + i)), d, out + i);
  if (i < n) StoreTail(d, row(LoadTail(d, g + i, n - i), LoadTail(d, y + i, n - i)), out + i, n - i);
}

// Calls f(j, m) over the vectors of a row of `inner` elements: m = lanes
// used (the last vector may be partial).
template <class D, class F>
HWY_INLINE void ForVectors(D d, size_t inner, F f) {
  const size_t N = hn::Lanes(d);
  for (size_t j = 0; j < inner; j += N) f(j, std::min(N, inner - j));
}

template <class D, class T>
HWY_INLINE hn::Vec<D> LoadPart(D d, const T* p, size_t m) {
  return m == hn::Lanes(d) ? hn::LoadU(d, p) : LoadTail(d, p, m);
}

template <class D, class T>
HWY_INLINE void StorePart(D d, hn::Vec<D> v, T* p, size_t m) {
  if (m == hn::Lanes(d)) {
    hn::StoreU(v, d, p);
  } else {
    StoreTail(d, v, p, m);
  }
}

// The same along a strided dim (inner > 1): one column per lane, rows
// streamed in order (cache-friendly for a large inner extent), the running
// max and sum of each column kept in mx and sum (inner elements each).
template <bool kLog, class T>
HWY_NOINLINE void SoftmaxColumns(const T* HWY_RESTRICT x, T* HWY_RESTRICT y, size_t n, size_t inner,
                                 T* HWY_RESTRICT mx, T* HWY_RESTRICT sum) {
  const hn::ScalableTag<T> d;
  std::fill(mx, mx + inner, -std::numeric_limits<T>::infinity());
  std::fill(sum, sum + inner, T(0));
  for (size_t k = 0; k < n; ++k) {
    ForVectors(d, inner, [&](size_t j, size_t m) {
      StorePart(d, hn::Max(LoadPart(d, mx + j, m), LoadPart(d, x + k * inner + j, m)), mx + j, m);
    });
  }
  for (size_t k = 0; k < n; ++k) {
    ForVectors(d, inner, [&](size_t j, size_t m) {
      const auto e = ExpK()(d, hn::Sub(LoadPart(d, x + k * inner + j, m), LoadPart(d, mx + j, m)));
      if (!kLog) StorePart(d, e, y + k * inner + j, m);
      StorePart(d, hn::Add(LoadPart(d, sum + j, m), e), sum + j, m);
    });
  }
  // sum becomes log(sum) (kLog) or 1 / sum.
  ForVectors(d, inner, [&](size_t j, size_t m) {
    const auto v = LoadPart(d, sum + j, m);
    StorePart(d, kLog ? LogK()(d, v) : hn::Div(hn::Set(d, T(1)), v), sum + j, m);
  });
  for (size_t k = 0; k < n; ++k) {
    ForVectors(d, inner, [&](size_t j, size_t m) {
      T* out = y + k * inner + j;
      const auto r = LoadPart(d, sum + j, m);
      const auto v = kLog ? hn::Sub(hn::Sub(LoadPart(d, x + k * inner + j, m), LoadPart(d, mx + j, m)), r)
                          : hn::Mul(LoadPart(d, out, m), r);
      StorePart(d, v, out, m);
    });
  }
}

template <bool kLog, class T>
HWY_NOINLINE void SoftmaxBackwardColumns(const T* HWY_RESTRICT g, const T* HWY_RESTRICT y, T* HWY_RESTRICT out,
                                         size_t n, size_t inner, T* HWY_RESTRICT sum) {
  const hn::ScalableTag<T> d;
  std::fill(sum, sum + inner, T(0));
  for (size_t k = 0; k < n; ++k) {
    ForVectors(d, inner, [&](size_t j, size_t m) {
      const auto gv = LoadPart(d, g + k * inner + j, m);
      const auto term = kLog ? gv : hn::Mul(gv, LoadPart(d, y + k * inner + j, m));
      StorePart(d, hn::Add(LoadPart(d, sum + j, m), term), sum + j, m);
    });
  }
  for (size_t k = 0; k < n; ++k) {
    ForVectors(d, inner, [&](size_t j, size_t m) {
      const auto gv = LoadPart(d, g + k * inner + j, m), yv = LoadPart(d, y + k * inner + j, m);
      const auto s = LoadPart(d, sum + j, m);
      const auto r = kLog ? hn::Sub(gv, hn::Mul(ExpK()(d, yv), s)) : hn::Mul(yv, hn::Sub(gv, s));
      StorePart(d, r, out + k * inner + j, m);
    });
  }
}

// A NaN that the max skips still reaches the sum through exp, so a row with a
// NaN is all NaN on both paths.
template <bool kLog, class T>
void SoftmaxTyped(const char* xc, char* yc, int64_t outer, int64_t n, int64_t inner) {
  const T* x = reinterpret_cast<const T*>(xc);
  T* y = reinterpret_cast<T*>(yc);
  if (inner == 1) {
    for (int64_t o = 0; o < outer; ++o) SoftmaxRow<kLog>(x + o * n, y + o * n, static_cast<size_t>(n));
  } else {
    std::vector<T> mx(static_cast<size_t>(inner)), sum(static_cast<size_t>(inner));
    for (int64_t o = 0; o < outer; ++o) {
      SoftmaxColumns<kLog>(x + o * n * inner, y + o * n * inner, static_cast<size_t>(n), static_cast<size_t>(inner),
                           mx.data(), sum.data());
    }
  }
}

void Softmax(DType dt, bool log, const char* x, char* y, int64_t outer, int64_t n, int64_t inner) {
  if (dt == DType::F64) {
    return log ? SoftmaxTyped<true, double>(x, y, outer, n, inner) : SoftmaxTyped<false, double>(x, y, outer, n, inner);
  }
  return log ? SoftmaxTyped<true, float>(x, y, outer, n, inner) : SoftmaxTyped<false, float>(x, y, outer, n, inner);
}

template <bool kLog, class T>
void SoftmaxBackwardTyped(const char* gc, const char* yc, char* oc, int64_t outer, int64_t n, int64_t inner) {
  const T* g = reinterpret_cast<const T*>(gc);
  const T* y = reinterpret_cast<const T*>(yc);
  T* out = reinterpret_cast<T*>(oc);
  if (inner == 1) {
    for (int64_t o = 0; o < outer; ++o) {
      SoftmaxBackwardRow<kLog>(g + o * n, y + o * n, out + o * n, static_cast<size_t>(n));
    }
  } else {
    std::vector<T> sum(static_cast<size_t>(inner));
    for (int64_t o = 0; o < outer; ++o) {
      const int64_t b = o * n * inner;
      SoftmaxBackwardColumns<kLog>(g + b, y + b, out + b, static_cast<size_t>(n), static_cast<size_t>(inner),
                                   sum.data());
    }
  }
}

void SoftmaxBackward(DType dt, bool log, const char* g, const char* y, char* out, int64_t outer, int64_t n,
                     int64_t inner) {
  if (dt == DType::F64) {
    return log ? SoftmaxBackwardTyped<true, double>(g, y, out, outer, n, inner)
               : SoftmaxBackwardTyped<false, double>(g, y, out, outer, n, inner);
  }
  return log ? SoftmaxBackwardTyped<true, float>(g, y, out, outer, n, inner)
             : SoftmaxBackwardTyped<false, float>(g, y, out, outer, n, inner);
}

int64_t SoftmaxTargetId() { return HWY_TARGET; }

}  // namespace ag::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ag::kernels {

HWY_EXPORT(Softmax);
HWY_EXPORT(SoftmaxBackward);
HWY_EXPORT(SoftmaxTargetId);

void softmax(DType dt, bool log, const char* x, char* y, int64_t outer, int64_t n, int64_t inner) {
  HWY_DYNAMIC_DISPATCH(Softmax)(dt, log, x, y, outer, n, inner);
}

void softmax_backward(DType dt, bool log, const char* g, const char* y, char* out, int64_t outer, int64_t n,
                      int64_t inner) {
  HWY_DYNAMIC_DISPATCH(SoftmaxBackward)(dt, log, g, y, out, outer, n, inner);
}

int64_t softmax_target() { return HWY_DYNAMIC_DISPATCH(SoftmaxTargetId)(); }

}  // namespace ag::kernels
#endif  // HWY_ONCE
