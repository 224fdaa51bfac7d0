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

// The same along a strided dim (inner > 1): vectors across the inner extent
// (contiguous), walking the dim row by row, so each lane is one column.
template <bool kLog, class T>
HWY_NOINLINE void SoftmaxColumns(const T* HWY_RESTRICT x, T* HWY_RESTRICT y, size_t n, size_t inner) {
  const hn::ScalableTag<T> d;
  using V = hn::Vec<decltype(d)>;
  const size_t N = hn::Lanes(d);
  for (size_t j = 0; j < inner; j += N) {
    const size_t m = std::min(N, inner - j);
    auto load = [&](const T* p) { return m == N ? hn::LoadU(d, p + j) : LoadTail(d, p + j, m); };
    auto store = [&](V v, T* p) {
      if (m == N) {
        hn::StoreU(v, d, p + j);
      } else {
        StoreTail(d, v, p + j, m);
      }
    };
    V mx = hn::Set(d, -std::numeric_limits<T>::infinity());
    for (size_t k = 0; k < n; ++k) mx = hn::Max(mx, load(x + k * inner));
    V sum = hn::Zero(d);
    for (size_t k = 0; k < n; ++k) {
      const V e = ExpK()(d, hn::Sub(load(x + k * inner), mx));
      if (!kLog) store(e, y + k * inner);
      sum = hn::Add(sum, e);
    }
    if (kLog) {
      const V ls = LogK()(d, sum);
      for (size_t k = 0; k < n; ++k) store(hn::Sub(hn::Sub(load(x + k * inner), mx), ls), y + k * inner);
    } else {
      const V r = hn::Div(hn::Set(d, T(1)), sum);
      for (size_t k = 0; k < n; ++k) store(hn::Mul(load(y + k * inner), r), y + k * inner);
    }
  }
}

template <bool kLog, class T>
HWY_NOINLINE void SoftmaxBackwardColumns(const T* HWY_RESTRICT g, const T* HWY_RESTRICT y, T* HWY_RESTRICT out,
                                         size_t n, size_t inner) {
  const hn::ScalableTag<T> d;
  using V = hn::Vec<decltype(d)>;
  const size_t N = hn::Lanes(d);
  for (size_t j = 0; j < inner; j += N) {
    const size_t m = std::min(N, inner - j);
    auto load = [&](const T* p) { return m == N ? hn::LoadU(d, p + j) : LoadTail(d, p + j, m); };
    V s = hn::Zero(d);
    for (size_t k = 0; k < n; ++k) {
      const V gv = load(g + k * inner);
      s = hn::Add(s, kLog ? gv : hn::Mul(gv, load(y + k * inner)));
    }
    for (size_t k = 0; k < n; ++k) {
      const V gv = load(g + k * inner), yv = load(y + k * inner);
      const V r = kLog ? hn::Sub(gv, hn::Mul(ExpK()(d, yv), s)) : hn::Mul(yv, hn::Sub(gv, s));
      if (m == N) {
        hn::StoreU(r, d, out + k * inner + j);
      } else {
        StoreTail(d, r, out + k * inner + j, m);
      }
    }
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
    for (int64_t o = 0; o < outer; ++o) {
      SoftmaxColumns<kLog>(x + o * n * inner, y + o * n * inner, static_cast<size_t>(n), static_cast<size_t>(inner));
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
    for (int64_t o = 0; o < outer; ++o) {
      const int64_t b = o * n * inner;
      SoftmaxBackwardColumns<kLog>(g + b, y + b, out + b, static_cast<size_t>(n), static_cast<size_t>(inner));
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
