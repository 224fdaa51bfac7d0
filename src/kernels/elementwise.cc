// Elementwise kernels: unary and binary ops over strided rows (loops.h), with
// SIMD inner rows compiled for each Highway target and picked at run time
// (dynamic dispatch once per call, not per row). See Note [Kernel SIMD
// contract] in simd-inl.h for what is guaranteed about the results.
#include "kernels/targets.h"  // first: selects the targets

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "kernels/kernels.h"
#include "kernels/loops.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/kernels/elementwise.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "kernels/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ag::kernels::HWY_NAMESPACE {

// Strided inputs are gathered into chunks of this many elements.
constexpr int64_t kChunk = 256;

// out[i] = op(x[i]) for i < n, both contiguous.
template <class T, class Op>
HWY_NOINLINE void UnaryRow(const T* x, T* out, size_t n, Op op) {
  const hn::ScalableTag<T> d;
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(op(d, hn::LoadU(d, x + i)), d, out + i);
  if (i < n) StoreTail(d, op(d, LoadTail(d, x + i, n - i)), out + i, n - i);
}

// True if `strides` are the contiguous strides of `shape` (size-1 dims aside).
inline bool IsContiguous(const Dims& shape, const Dims& strides) {
  int64_t expected = 1;
  for (int i = shape.size() - 1; i >= 0; --i) {
    if (shape[i] == 1) continue;
    if (strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

// Calls row(xrow, sx, orow, n) for each inner row of x over `shape`; out is contiguous.
template <class T, class Row>
void ForEachUnaryRow(const Dims& shape, View x, char* out, Row row) {
  const Dims out_strides = contiguous_strides(shape);
  const Dims* strides[2] = {&out_strides, x.strides};
  const auto plan = plan_loop<2>(shape, strides);
  T* o = reinterpret_cast<T*>(out);
  const T* xp = reinterpret_cast<const T*>(x.data);
  for_each_row<2>(plan, [&](const int64_t* off, int64_t n, const int64_t* s) { row(xp + off[1], s[1], o + off[0], n); });
}

template <class T, class Op>
void UnaryRows(const Dims& shape, View x, char* out, Op op) {
  if (IsContiguous(shape, *x.strides)) {  // the common case: one row, no plan
    UnaryRow(reinterpret_cast<const T*>(x.data), reinterpret_cast<T*>(out), static_cast<size_t>(numel_of(shape)), op);
    return;
  }
  ForEachUnaryRow<T>(shape, x, out, [&](const T* xrow, int64_t sx, T* orow, int64_t n) {
    if (sx == 1) {
      UnaryRow(xrow, orow, static_cast<size_t>(n), op);
      return;
    }
    // Gather, then the same vector code: results do not depend on strides.
    HWY_ALIGN T buf[kChunk];
    for (int64_t i0 = 0; i0 < n; i0 += kChunk) {
      const int64_t m = std::min(kChunk, n - i0);
      const T* src = xrow + i0 * sx;
      for (int64_t i = 0; i < m; ++i) buf[i] = src[i * sx];
      UnaryRow(buf, orow + i0, static_cast<size_t>(m), op);
    }
  });
}

// pow(x, p) for exponents without a fast path: std::pow per element.
template <class T>
void PowRows(const Dims& shape, View x, char* out, T p) {
  ForEachUnaryRow<T>(shape, x, out, [p](const T* xrow, int64_t sx, T* orow, int64_t n) {
    for (int64_t i = 0; i < n; ++i) orow[i] = std::pow(xrow[i * sx], p);
  });
}

template <class T>
void UnaryTyped(UnaryKind k, const Dims& shape, View x, char* out, double attr) {
  switch (k) {
    case UnaryKind::Neg: return UnaryRows<T>(shape, x, out, NegK());
    case UnaryKind::Exp: return UnaryRows<T>(shape, x, out, ExpK());
    case UnaryKind::Log: return UnaryRows<T>(shape, x, out, LogK());
    case UnaryKind::Tanh: return UnaryRows<T>(shape, x, out, TanhK());
    case UnaryKind::PowScalar: {
      const T p = static_cast<T>(attr);
      if (p == T(2)) return UnaryRows<T>(shape, x, out, PowTwoK());
      if (p == T(1)) return UnaryRows<T>(shape, x, out, PowOneK());
      if (p == T(0)) return UnaryRows<T>(shape, x, out, PowZeroK());
      if (p == T(-1)) return UnaryRows<T>(shape, x, out, PowMinusOneK());
      if (p == T(0.5)) return UnaryRows<T>(shape, x, out, PowHalfK());
      return PowRows<T>(shape, x, out, p);
    }
  }
}

void Unary(UnaryKind k, DType dt, const Dims& shape, View x, char* out, double attr) {
  if (dt == DType::F64) return UnaryTyped<double>(k, shape, x, out, attr);
  return UnaryTyped<float>(k, shape, x, out, attr);
}

// out[i] = op(a[i], b[i]), all contiguous.
template <class T, class Op>
HWY_NOINLINE void BinaryRowVV(const T* a, const T* b, T* out, size_t n, Op op) {
  const hn::ScalableTag<T> d;
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(op(hn::LoadU(d, a + i), hn::LoadU(d, b + i)), d, out + i);
  if (i < n) {
    StoreTail(d, op(LoadTail(d, a + i, n - i), LoadTail(d, b + i, n - i)), out + i, n - i);
  }
}

// out[i] = op(a[i], b) (kScalarFirst: op(b, a[i])); a and out contiguous.
template <bool kScalarFirst, class T, class Op>
HWY_NOINLINE void BinaryRowVS(const T* a, T b, T* out, size_t n, Op op) {
  const hn::ScalableTag<T> d;
  const size_t N = hn::Lanes(d);
  const auto vb = hn::Set(d, b);
  size_t i = 0;
  for (; i + N <= n; i += N) {
    const auto va = hn::LoadU(d, a + i);
    hn::StoreU(kScalarFirst ? op(vb, va) : op(va, vb), d, out + i);
  }
  if (i < n) {
    const auto va = LoadTail(d, a + i, n - i);
    StoreTail(d, kScalarFirst ? op(vb, va) : op(va, vb), out + i, n - i);
  }
}

template <class T, class Op>
void BinaryRows(const Dims& shape, View a, View b, char* out, Op op) {
  if (IsContiguous(shape, *a.strides) && IsContiguous(shape, *b.strides)) {  // one row, no plan
    BinaryRowVV(reinterpret_cast<const T*>(a.data), reinterpret_cast<const T*>(b.data), reinterpret_cast<T*>(out),
                static_cast<size_t>(numel_of(shape)), op);
    return;
  }
  const Dims out_strides = contiguous_strides(shape);
  const Dims* strides[3] = {&out_strides, a.strides, b.strides};
  const auto plan = plan_loop<3>(shape, strides);
  T* o = reinterpret_cast<T*>(out);
  const T* ap = reinterpret_cast<const T*>(a.data);
  const T* bp = reinterpret_cast<const T*>(b.data);
  for_each_row<3>(plan, [&](const int64_t* off, int64_t n, const int64_t* s) {
    T* orow = o + off[0];
    const T* arow = ap + off[1];
    const T* brow = bp + off[2];
    const int64_t sa = s[1], sb = s[2];
    const size_t un = static_cast<size_t>(n);
    if (sa == 1 && sb == 1) {
      BinaryRowVV(arow, brow, orow, un, op);
    } else if (sa == 1 && sb == 0) {
      BinaryRowVS<false>(arow, *brow, orow, un, op);
    } else if (sa == 0 && sb == 1) {
      BinaryRowVS<true>(brow, *arow, orow, un, op);
    } else {
      // Other strides: one IEEE operation per element, the same result as the
      // vector paths.
      for (int64_t i = 0; i < n; ++i) orow[i] = Op::scalar(arow[i * sa], brow[i * sb]);
    }
  });
}

template <class T>
void BinaryTyped(BinaryKind k, const Dims& shape, View a, View b, char* out) {
  switch (k) {
    case BinaryKind::Add: return BinaryRows<T>(shape, a, b, out, AddK());
    case BinaryKind::Sub: return BinaryRows<T>(shape, a, b, out, SubK());
    case BinaryKind::Mul: return BinaryRows<T>(shape, a, b, out, MulK());
    case BinaryKind::Div: return BinaryRows<T>(shape, a, b, out, DivK());
    case BinaryKind::TanhBackward: return BinaryRows<T>(shape, a, b, out, TanhBackwardK());
  }
}

void Binary(BinaryKind k, DType dt, const Dims& shape, View a, View b, char* out) {
  if (dt == DType::F64) return BinaryTyped<double>(k, shape, a, b, out);
  return BinaryTyped<float>(k, shape, a, b, out);
}

// One element: one IEEE operation, the same bits as every vector path (the
// strided rows above rely on that too), without dispatch or row planning.
template <class T>
void BinaryOneTyped(BinaryKind k, const char* a, const char* b, char* out) {
  const T x = *reinterpret_cast<const T*>(a), y = *reinterpret_cast<const T*>(b);
  T* o = reinterpret_cast<T*>(out);
  switch (k) {
    case BinaryKind::Add: *o = AddK::scalar(x, y); return;
    case BinaryKind::Sub: *o = SubK::scalar(x, y); return;
    case BinaryKind::Mul: *o = MulK::scalar(x, y); return;
    case BinaryKind::Div: *o = DivK::scalar(x, y); return;
    case BinaryKind::TanhBackward: *o = TanhBackwardK::scalar(x, y); return;
  }
}

void BinaryOne(BinaryKind k, DType dt, const char* a, const char* b, char* out) {
  if (dt == DType::F64) return BinaryOneTyped<double>(k, a, b, out);
  return BinaryOneTyped<float>(k, a, b, out);
}

int64_t ElementwiseTargetId() { return HWY_TARGET; }

}  // namespace ag::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ag::kernels {

HWY_EXPORT(Unary);
HWY_EXPORT(Binary);
HWY_EXPORT(ElementwiseTargetId);

void unary(UnaryKind k, DType dt, const Dims& shape, View x, char* out, double attr) {
  HWY_DYNAMIC_DISPATCH(Unary)(k, dt, shape, x, out, attr);
}

void binary(BinaryKind k, DType dt, const Dims& shape, View a, View b, char* out) {
  // Scalars are most of the calls of small graphs; any target gives the same bits.
  if (numel_of(shape) == 1) return HWY_STATIC_DISPATCH(BinaryOne)(k, dt, a.data, b.data, out);
  HWY_DYNAMIC_DISPATCH(Binary)(k, dt, shape, a, b, out);
}

int64_t compiled_targets() { return HWY_TARGETS; }

int64_t elementwise_target() { return HWY_DYNAMIC_DISPATCH(ElementwiseTargetId)(); }

}  // namespace ag::kernels
#endif  // HWY_ONCE
