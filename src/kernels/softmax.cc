// Softmax and log-softmax along one dim, and their fused gradients. The
// tensor is read as contiguous (outer, n, inner) with the dim of size n in
// the middle. inner == 1 (the dim is innermost) runs SIMD rows per Highway
// target; other dims run a scalar path that walks the dim with stride inner.
// Both subtract the row maximum first, so exp never overflows.
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

// Scalar path for inner > 1: per outer block, running max and sum per
// column (element j of the inner extent), walking the dim row by row.
template <bool kLog, class T>
void SoftmaxStrided(const T* x, T* y, int64_t outer, int64_t n, int64_t inner) {
  std::vector<T> mx(static_cast<size_t>(inner)), sum(static_cast<size_t>(inner));
  for (int64_t o = 0; o < outer; ++o) {
    const T* xb = x + o * n * inner;
    T* yb = y + o * n * inner;
    std::fill(mx.begin(), mx.end(), -std::numeric_limits<T>::infinity());
    std::fill(sum.begin(), sum.end(), T(0));
    for (int64_t k = 0; k < n; ++k) {
      for (int64_t j = 0; j < inner; ++j) mx[j] = std::max(mx[j], xb[k * inner + j]);
    }
    for (int64_t k = 0; k < n; ++k) {
      for (int64_t j = 0; j < inner; ++j) {
        const T e = std::exp(xb[k * inner + j] - mx[j]);
        if (!kLog) yb[k * inner + j] = e;
        sum[j] += e;
      }
    }
    for (int64_t j = 0; j < inner; ++j) sum[j] = kLog ? std::log(sum[j]) : T(1) / sum[j];
    for (int64_t k = 0; k < n; ++k) {
      for (int64_t j = 0; j < inner; ++j) {
        T& v = yb[k * inner + j];
        v = kLog ? (xb[k * inner + j] - mx[j]) - sum[j] : v * sum[j];
      }
    }
  }
}

template <bool kLog, class T>
void SoftmaxBackwardStrided(const T* g, const T* y, T* out, int64_t outer, int64_t n, int64_t inner) {
  std::vector<T> sum(static_cast<size_t>(inner));
  for (int64_t o = 0; o < outer; ++o) {
    const int64_t base = o * n * inner;
    std::fill(sum.begin(), sum.end(), T(0));
    for (int64_t k = 0; k < n; ++k) {
      for (int64_t j = 0; j < inner; ++j) {
        const int64_t p = base + k * inner + j;
        sum[j] += kLog ? g[p] : g[p] * y[p];
      }
    }
    for (int64_t k = 0; k < n; ++k) {
      for (int64_t j = 0; j < inner; ++j) {
        const int64_t p = base + k * inner + j;
        out[p] = kLog ? g[p] - std::exp(y[p]) * sum[j] : y[p] * (g[p] - sum[j]);
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
    SoftmaxStrided<kLog>(x, y, outer, n, inner);
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
    SoftmaxBackwardStrided<kLog>(g, y, out, outer, n, inner);
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
