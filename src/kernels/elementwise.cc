// Elementwise kernels: unary and binary ops over strided rows (loops.h), with
// SIMD inner rows compiled for each Highway target and picked at run time
// (dynamic dispatch once per call, not per row). See Note [Kernel SIMD
// contract] in simd-inl.h for what is guaranteed about the results.
#include "kernels/targets.h"  // first: selects the targets

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <type_traits>

#include "kernels/kernels.h"
#include "kernels/loops.h"
#include "kernels/special.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/kernels/elementwise.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "kernels/binary_math-inl.h"
#include "kernels/simd-inl.h"
#include "kernels/unary_math-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ag::kernels::HWY_NAMESPACE {

// Strided inputs are gathered into chunks of this many elements.
constexpr int64_t kChunk = 256;

// The vector rows of an op are reached through plain function pointers with
// the op object behind a void pointer, so that row planning and gathering
// are compiled once per element type, not once per op (library size).

// out[i] = op(x[i]) for i < n, both contiguous.
template <class T, class Op>
HWY_NOINLINE void UnaryRow(const void* op_ptr, const T* x, T* out, size_t n) {
  const Op& op = *static_cast<const Op*>(op_ptr);
  const hn::ScalableTag<T> d;
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(op(d, hn::LoadU(d, x + i)), d, out + i);
  if (i < n) StoreTail(d, op(d, LoadTail(d, x + i, n - i)), out + i, n - i);
}
template <class T>
using UnaryRowFn = void (*)(const void*, const T*, T*, size_t);

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

template <class T>
HWY_NOINLINE void UnaryDriver(const Dims& shape, View x, char* out, UnaryRowFn<T> row, const void* op) {
  if (IsContiguous(shape, *x.strides)) {  // the common case: one row, no plan
    row(op, reinterpret_cast<const T*>(x.data), reinterpret_cast<T*>(out), static_cast<size_t>(numel_of(shape)));
    return;
  }
  ForEachUnaryRow<T>(shape, x, out, [&](const T* xrow, int64_t sx, T* orow, int64_t n) {
    if (sx == 1) {
      row(op, xrow, orow, static_cast<size_t>(n));
      return;
    }
    // Gather, then the same vector code: results do not depend on strides.
    HWY_ALIGN T buf[kChunk];
    for (int64_t i0 = 0; i0 < n; i0 += kChunk) {
      const int64_t m = std::min(kChunk, n - i0);
      const T* src = xrow + i0 * sx;
      for (int64_t i = 0; i < m; ++i) buf[i] = src[i * sx];
      row(op, buf, orow + i0, static_cast<size_t>(m));
    }
  });
}

template <class T, class Op>
void UnaryRows(const Dims& shape, View x, char* out, Op op) {
  UnaryDriver<T>(shape, x, out, &UnaryRow<T, Op>, &op);
}

// pow(x, p) for exponents without a fast path: std::pow per element.
template <class T>
void PowRows(const Dims& shape, View x, char* out, T p) {
  ForEachUnaryRow<T>(shape, x, out, [p](const T* xrow, int64_t sx, T* orow, int64_t n) {
    for (int64_t i = 0; i < n; ++i) orow[i] = std::pow(xrow[i * sx], p);
  });
}

// out[i] = op(x[i]) one element at a time (special functions with no
// vector form, special.h).
template <class T, class Op>
void UnaryScalarRows(const Dims& shape, View x, char* out, Op op) {
  ForEachUnaryRow<T>(shape, x, out, [op](const T* xrow, int64_t sx, T* orow, int64_t n) {
    for (int64_t i = 0; i < n; ++i) orow[i] = op(xrow[i * sx]);
  });
}

// The functor of kind k, handed to rows.vector(op) (vector code),
// rows.scalar(f) (one element at a time) or rows.pow(p) (std::pow): the one
// dispatch of the whole-shape and the one-element paths.
template <class T, class Rows>
void DispatchUnary(UnaryKind k, double attr, double attr2, const Rows& rows) {
  const T a1 = static_cast<T>(attr), a2 = static_cast<T>(attr2);
  switch (k) {
    case UnaryKind::PowScalar: {
      if (a1 == T(2)) return rows.vector(PowTwoK());
      if (a1 == T(1)) return rows.vector(PowOneK());
      if (a1 == T(0)) return rows.vector(PowZeroK());
      if (a1 == T(-1)) return rows.vector(PowMinusOneK());
      if (a1 == T(0.5)) return rows.vector(PowHalfK());
      return rows.pow(a1);
    }
#define AG_UNARY_KERNEL(kind, functor) \
  case UnaryKind::kind:                   \
    return rows.vector(functor);
#define AG_UNARY_KERNEL_SCALAR(kind, functor) \
  case UnaryKind::kind:                          \
    return rows.scalar(functor);
#include "kernels/kernels.def"
  }
}

// Every row of x over shape.
template <class T>
struct ShapeRows {
  const Dims& shape;
  View x;
  char* out;
  template <class Op>
  void vector(Op op) const {
    UnaryRows<T>(shape, x, out, op);
  }
  template <class F>
  void scalar(F f) const {
    UnaryScalarRows<T>(shape, x, out, f);
  }
  void pow(T p) const { PowRows<T>(shape, x, out, p); }
};

// Whether Op has a one_lane form (a branch where operator() blends both
// sides of a select, see TanhK).
template <class Op, class = void>
struct HasOneLane : std::false_type {};
template <class Op>
struct HasOneLane<Op, std::void_t<decltype(&Op::template one_lane<hn::CappedTag<float, 1>, hn::Vec<hn::CappedTag<float, 1>>>)>>
    : std::true_type {};

// One element: the op's vector code on a one-lane vector (the same
// instructions per lane as a full row, so the same bits; the
// MathOnTarget.UnaryOneMatchesRows tests check every kind), without the row
// driver and its tail masks.
template <class T>
struct OneElement {
  const T* x;
  T* out;
  template <class Op>
  void vector(Op op) const {
    const hn::CappedTag<T, 1> d1;
    if constexpr (HasOneLane<Op>::value) {
      hn::StoreU(op.one_lane(d1, hn::LoadU(d1, x)), d1, out);
    } else {
      hn::StoreU(op(d1, hn::LoadU(d1, x)), d1, out);
    }
  }
  template <class F>
  void scalar(F f) const {
    *out = f(*x);
  }
  void pow(T p) const { *out = std::pow(*x, p); }
};

// n contiguous elements: the row function itself (unary_flat).
template <class T>
struct FlatRows {
  const T* x;
  T* out;
  size_t n;
  template <class Op>
  void vector(Op op) const {
    UnaryRow<T, Op>(&op, x, out, n);
  }
  template <class F>
  void scalar(F f) const {
    for (size_t i = 0; i < n; ++i) out[i] = f(x[i]);
  }
  void pow(T p) const {
    for (size_t i = 0; i < n; ++i) out[i] = std::pow(x[i], p);
  }
};

void UnaryFlat(UnaryKind k, DType dt, const char* x, char* out, size_t n, double attr, double attr2) {
  if (dt == DType::F64) {
    return DispatchUnary<double>(
        k, attr, attr2, FlatRows<double>{reinterpret_cast<const double*>(x), reinterpret_cast<double*>(out), n});
  }
  DispatchUnary<float>(k, attr, attr2,
                       FlatRows<float>{reinterpret_cast<const float*>(x), reinterpret_cast<float*>(out), n});
}

void Unary(UnaryKind k, DType dt, const Dims& shape, View x, char* out, double attr, double attr2) {
  if (dt == DType::F64) return DispatchUnary<double>(k, attr, attr2, ShapeRows<double>{shape, x, out});
  DispatchUnary<float>(k, attr, attr2, ShapeRows<float>{shape, x, out});
}

void UnaryOne(UnaryKind k, DType dt, const char* x, char* out, double attr, double attr2) {
  if (dt == DType::F64) {
    return DispatchUnary<double>(
        k, attr, attr2, OneElement<double>{reinterpret_cast<const double*>(x), reinterpret_cast<double*>(out)});
  }
  DispatchUnary<float>(k, attr, attr2,
                       OneElement<float>{reinterpret_cast<const float*>(x), reinterpret_cast<float*>(out)});
}

// out[i] = op(a[i], b[i]), all contiguous.
template <class T, class Op>
HWY_NOINLINE void BinaryRowVV(const void* op_ptr, const T* a, const T* b, T* out, size_t n) {
  const Op& op = *static_cast<const Op*>(op_ptr);
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
HWY_NOINLINE void BinaryRowVS(const void* op_ptr, const T* a, T b, T* out, size_t n) {
  const Op& op = *static_cast<const Op*>(op_ptr);
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

// The vector rows of one binary op.
template <class T>
struct BinaryRowFns {
  void (*vv)(const void*, const T*, const T*, T*, size_t);
  void (*vs)(const void*, const T*, T, T*, size_t);  // op(a[i], b)
  void (*sv)(const void*, const T*, T, T*, size_t);  // op(b, a[i])
};

template <class T>
HWY_NOINLINE void BinaryDriver(const Dims& shape, View a, View b, char* out, const BinaryRowFns<T>& row,
                               const void* op) {
  // The common cases take one row and no plan: both inputs contiguous, or
  // one of them a broadcast scalar (the rows the plan would give, joined).
  const bool ca = IsContiguous(shape, *a.strides), cb = IsContiguous(shape, *b.strides);
  const T* ap = reinterpret_cast<const T*>(a.data);
  const T* bp = reinterpret_cast<const T*>(b.data);
  T* o = reinterpret_cast<T*>(out);
  const size_t count = static_cast<size_t>(numel_of(shape));
  if (ca && cb) return row.vv(op, ap, bp, o, count);
  if (ca && count > 0 && is_broadcast_scalar(shape, *b.strides)) return row.vs(op, ap, *bp, o, count);
  if (cb && count > 0 && is_broadcast_scalar(shape, *a.strides)) return row.sv(op, bp, *ap, o, count);
  const Dims out_strides = contiguous_strides(shape);
  const Dims* strides[3] = {&out_strides, a.strides, b.strides};
  const auto plan = plan_loop<3>(shape, strides);
  for_each_row<3>(plan, [&](const int64_t* off, int64_t n, const int64_t* s) {
    T* orow = o + off[0];
    const T* arow = ap + off[1];
    const T* brow = bp + off[2];
    const int64_t sa = s[1], sb = s[2];
    const size_t un = static_cast<size_t>(n);
    if (sa == 1 && sb == 1) {
      row.vv(op, arow, brow, orow, un);
    } else if (sa == 1 && sb == 0) {
      row.vs(op, arow, *brow, orow, un);
    } else if (sa == 0 && sb == 1) {
      row.sv(op, brow, *arow, orow, un);
    } else {
      // Other strides: gathered, then the same vector code.
      HWY_ALIGN T abuf[kChunk];
      HWY_ALIGN T bbuf[kChunk];
      for (int64_t i0 = 0; i0 < n; i0 += kChunk) {
        const int64_t m = std::min(kChunk, n - i0);
        for (int64_t i = 0; i < m; ++i) abuf[i] = arow[(i0 + i) * sa], bbuf[i] = brow[(i0 + i) * sb];
        row.vv(op, abuf, bbuf, orow + i0, static_cast<size_t>(m));
      }
    }
  });
}

template <class T, class Op>
void BinaryRows(const Dims& shape, View a, View b, char* out, Op op) {
  static const BinaryRowFns<T> fns{&BinaryRowVV<T, Op>, &BinaryRowVS<false, T, Op>, &BinaryRowVS<true, T, Op>};
  BinaryDriver<T>(shape, a, b, out, fns, &op);
}

// out[i] = op(a[i], b[i]) one element at a time (ops with no vector form).
template <class T, class Op>
void BinaryScalarRows(const Dims& shape, View a, View b, char* out, Op op) {
  const Dims out_strides = contiguous_strides(shape);
  const Dims* strides[3] = {&out_strides, a.strides, b.strides};
  const auto plan = plan_loop<3>(shape, strides);
  T* o = reinterpret_cast<T*>(out);
  const T* ap = reinterpret_cast<const T*>(a.data);
  const T* bp = reinterpret_cast<const T*>(b.data);
  for_each_row<3>(plan, [&](const int64_t* off, int64_t n, const int64_t* s) {
    for (int64_t i = 0; i < n; ++i) o[off[0] + i] = op(ap[off[1] + i * s[1]], bp[off[2] + i * s[2]]);
  });
}

// pow on f32: each vector of floats is widened to f64 lanes, PowF64K, and
// rounded back once. Overflow is made inf before narrowing (the SCALAR
// target's DemoteTo clamps to the largest float).
HWY_INLINE void PowF32Vec(const float* a, const float* b, float* out, size_t n) {
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> df;
  const auto thr = hn::Set(dd, 0x1.ffffffp+127);  // rounds to inf in f32
  auto pow = [&](hn::Vec<decltype(df)> va, hn::Vec<decltype(df)> vb) {
    const auto r = PowF64K()(dd, hn::PromoteTo(dd, va), hn::PromoteTo(dd, vb));
    const auto big = hn::DemoteTo(df, hn::IfThenElseZero(hn::Ge(hn::Abs(r), thr), hn::Set(dd, 1.0)));
    const auto y = hn::DemoteTo(df, r);
    return hn::IfThenElse(hn::Eq(big, hn::Set(df, 1.0f)), hn::CopySign(hn::Inf(df), y), y);
  };
  const size_t N = hn::Lanes(dd);
  size_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(pow(hn::LoadU(df, a + i), hn::LoadU(df, b + i)), df, out + i);
  if (i < n) StoreTail(df, pow(LoadTail(df, a + i, n - i), LoadTail(df, b + i, n - i)), out + i, n - i);
}

void PowF32Rows(const Dims& shape, View a, View b, char* out) {
  const Dims out_strides = contiguous_strides(shape);
  const Dims* strides[3] = {&out_strides, a.strides, b.strides};
  const auto plan = plan_loop<3>(shape, strides);
  float* o = reinterpret_cast<float*>(out);
  const float* ap = reinterpret_cast<const float*>(a.data);
  const float* bp = reinterpret_cast<const float*>(b.data);
  HWY_ALIGN float abuf[kChunk];
  HWY_ALIGN float bbuf[kChunk];
  for_each_row<3>(plan, [&](const int64_t* off, int64_t n, const int64_t* s) {
    for (int64_t i0 = 0; i0 < n; i0 += kChunk) {
      const int64_t m = std::min(kChunk, n - i0);
      const float* arow = ap + off[1] + i0 * s[1];
      const float* brow = bp + off[2] + i0 * s[2];
      if (s[1] != 1) {
        for (int64_t i = 0; i < m; ++i) abuf[i] = arow[i * s[1]];
        arow = abuf;
      }
      if (s[2] != 1) {
        for (int64_t i = 0; i < m; ++i) bbuf[i] = brow[i * s[2]];
        brow = bbuf;
      }
      PowF32Vec(arow, brow, o + off[0] + i0, static_cast<size_t>(m));
    }
  });
}

template <class T>
void BinaryTyped(BinaryKind k, const Dims& shape, View a, View b, char* out) {
  switch (k) {
    case BinaryKind::Pow:
      if constexpr (sizeof(T) == 4) return PowF32Rows(shape, a, b, out);
      return BinaryScalarRows<T>(shape, a, b, out, PowScalarK());
#define AG_BINARY_KERNEL(kind, functor) \
  case BinaryKind::kind:                   \
    return BinaryRows<T>(shape, a, b, out, functor);
#define AG_BINARY_KERNEL_SCALAR(kind, functor) \
  case BinaryKind::kind:                          \
    return BinaryScalarRows<T>(shape, a, b, out, functor);
#include "kernels/kernels.def"
  }
}

// The row BinaryDriver picks for contiguous inputs or a broadcast scalar,
// called directly (binary_flat).
template <class T, class Op>
HWY_INLINE void BinaryFlatRow(Op op, const char* a, bool a_one, const char* b, bool b_one, char* out, size_t n) {
  const T* ap = reinterpret_cast<const T*>(a);
  const T* bp = reinterpret_cast<const T*>(b);
  T* o = reinterpret_cast<T*>(out);
  if (a_one) return BinaryRowVS<true, T, Op>(&op, bp, *ap, o, n);
  if (b_one) return BinaryRowVS<false, T, Op>(&op, ap, *bp, o, n);
  BinaryRowVV<T, Op>(&op, ap, bp, o, n);
}

template <class T>
bool BinaryFlatTyped(BinaryKind k, const char* a, bool a_one, const char* b, bool b_one, char* out, size_t n) {
  switch (k) {
#define AG_BINARY_KERNEL(kind, functor)                    \
  case BinaryKind::kind:                                   \
    BinaryFlatRow<T>(functor, a, a_one, b, b_one, out, n); \
    return true;
#include "kernels/kernels.def"
    default:
      return false;
  }
}

bool BinaryFlat(BinaryKind k, DType dt, const char* a, bool a_one, const char* b, bool b_one, char* out, size_t n) {
  if (dt == DType::F64) return BinaryFlatTyped<double>(k, a, a_one, b, b_one, out, n);
  return BinaryFlatTyped<float>(k, a, a_one, b, b_one, out, n);
}

void Binary(BinaryKind k, DType dt, const Dims& shape, View a, View b, char* out) {
  if (dt == DType::F64) return BinaryTyped<double>(k, shape, a, b, out);
  return BinaryTyped<float>(k, shape, a, b, out);
}

int64_t ElementwiseTargetId() { return HWY_TARGET; }

}  // namespace ag::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ag::kernels {

HWY_EXPORT(Unary);
HWY_EXPORT(UnaryOne);
HWY_EXPORT(Binary);
HWY_EXPORT(UnaryFlat);
HWY_EXPORT(BinaryFlat);
HWY_EXPORT(ElementwiseTargetId);

namespace {

// One element of the arithmetic kinds: one IEEE operation in the order of
// the vector functors, so the same bits as every vector path (the strided
// rows rely on that too), without dispatch or row planning.
template <class T, BinaryKind K>
void binary_one(const char* a, const char* b, char* out) {
  const T x = *reinterpret_cast<const T*>(a), y = *reinterpret_cast<const T*>(b);
  T* o = reinterpret_cast<T*>(out);
  if constexpr (K == BinaryKind::Add) *o = x + y;
  if constexpr (K == BinaryKind::Sub) *o = x - y;
  if constexpr (K == BinaryKind::Mul) *o = x * y;
  if constexpr (K == BinaryKind::Div) *o = x / y;
  if constexpr (K == BinaryKind::TanhBackward) *o = x * (T(1) - y * y);
}

// The kinds binary_one covers.
#define AG_BINARY_ONE_KINDS(X) X(Add) X(Sub) X(Mul) X(Div) X(TanhBackward)

template <class T>
BinaryOneFn binary_one_typed(BinaryKind k) {
#define AG_CASE(kind) \
  case BinaryKind::kind: return &binary_one<T, BinaryKind::kind>;
  switch (k) {
    AG_BINARY_ONE_KINDS(AG_CASE)
    default: return nullptr;
  }
#undef AG_CASE
}

// binary_scalar's switch calls binary_one directly (inlined), not through a
// pointer: it is on the path of every op of a scalar chain.
template <class T>
bool binary_scalar_typed(BinaryKind k, const char* a, const char* b, char* out) {
#define AG_CASE(kind)                               \
  case BinaryKind::kind:                            \
    binary_one<T, BinaryKind::kind>(a, b, out);     \
    return true;
  switch (k) {
    AG_BINARY_ONE_KINDS(AG_CASE)
    default: return false;
  }
#undef AG_CASE
}

}  // namespace

BinaryOneFn binary_one_fn(BinaryKind k, DType dt) {
  return dt == DType::F64 ? binary_one_typed<double>(k) : binary_one_typed<float>(k);
}

bool binary_scalar(BinaryKind k, DType dt, const char* a, const char* b, char* out) {
  return dt == DType::F64 ? binary_scalar_typed<double>(k, a, b, out) : binary_scalar_typed<float>(k, a, b, out);
}

void unary(UnaryKind k, DType dt, const Dims& shape, View x, char* out, double attr, double attr2) {
  HWY_DYNAMIC_DISPATCH(Unary)(k, dt, shape, x, out, attr, attr2);
}

void unary_one(UnaryKind k, DType dt, const char* x, char* out, double attr, double attr2) {
  HWY_DYNAMIC_DISPATCH(UnaryOne)(k, dt, x, out, attr, attr2);
}

void unary_flat(UnaryKind k, DType dt, const char* x, char* out, size_t n, double attr, double attr2) {
  HWY_DYNAMIC_DISPATCH(UnaryFlat)(k, dt, x, out, n, attr, attr2);
}

bool binary_flat(BinaryKind k, DType dt, const char* a, bool a_one, const char* b, bool b_one, char* out, size_t n) {
  return HWY_DYNAMIC_DISPATCH(BinaryFlat)(k, dt, a, a_one, b, b_one, out, n);
}

bool binary_has_rows(BinaryKind k) {
  switch (k) {
#define AG_BINARY_KERNEL(kind, functor) \
  case BinaryKind::kind:                \
    return true;
#include "kernels/kernels.def"
    default:
      return false;
  }
}

void binary(BinaryKind k, DType dt, const Dims& shape, View a, View b, char* out) {
  // Scalars are most of the calls of small graphs; any target gives the same bits.
  if (numel_of(shape) == 1 && binary_scalar(k, dt, a.data, b.data, out)) return;
  HWY_DYNAMIC_DISPATCH(Binary)(k, dt, shape, a, b, out);
}

int64_t compiled_targets() { return HWY_TARGETS; }

int64_t elementwise_target() { return HWY_DYNAMIC_DISPATCH(ElementwiseTargetId)(); }

}  // namespace ag::kernels
#endif  // HWY_ONCE
