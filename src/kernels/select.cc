// Elementwise kernels that mix bool and floating data or take three inputs:
// comparisons (bool out), where (bool condition) and lerp. Rows of any
// stride are cut into chunks; an input that is not contiguous in a row is
// gathered into a buffer first, and the vector code runs on contiguous data,
// so results never depend on strides (Note [Kernel SIMD contract]).
#include <algorithm>
#include <cstddef>

#include "kernels/kernels.h"
#include "kernels/loops.h"
#include "kernels/targets.h"  // first: selects the targets

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/kernels/select.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ag::kernels::HWY_NAMESPACE {

constexpr int64_t kSelectChunk = 256;

// row[0, m) read with `stride`: the row itself when contiguous, else a copy in buf.
template <class T>
HWY_INLINE const T* Contiguous(const T* row, int64_t stride, int64_t m, T* buf) {
  if (stride == 1) return row;
  for (int64_t i = 0; i < m; ++i) buf[i] = row[i * stride];
  return buf;
}

// Calls chunk(out_offset, input_offsets, m, inner_strides) for chunks of at
// most kSelectChunk elements of each inner row of an N-operand walk
// (operand 0 = the contiguous output).
template <int N, class Chunk>
void ForEachChunk(const Dims& shape, const Dims* const (&strides)[N], Chunk chunk) {
  const auto plan = plan_loop<N>(shape, strides);
  for_each_row<N>(plan, [&](const int64_t* off, int64_t n, const int64_t* s) {
    for (int64_t i0 = 0; i0 < n; i0 += kSelectChunk) {
      int64_t at[N];
      for (int k = 0; k < N; ++k) at[k] = off[k] + i0 * s[k];
      chunk(at, std::min(kSelectChunk, n - i0), s);
    }
  });
}

// The comparison as a vector mask.
template <CompareKind K, class V>
HWY_INLINE auto CompareMask(V a, V b) {
  if constexpr (K == CompareKind::Eq) return hn::Eq(a, b);
  // Not Eq: Highway's Ne is an ordered compare on x86 (false with NaN).
  if constexpr (K == CompareKind::Ne) return hn::Not(hn::Eq(a, b));
  if constexpr (K == CompareKind::Lt) return hn::Lt(a, b);
  if constexpr (K == CompareKind::Le) return hn::Le(a, b);
  if constexpr (K == CompareKind::Gt) return hn::Gt(a, b);
  if constexpr (K == CompareKind::Ge) return hn::Ge(a, b);
}

// out[i] = a[i] K b[i] as 0/1 bytes: 4-byte lanes narrowed in registers,
// the rest (f64, the tail) through a buffer of integer lanes.
template <CompareKind K, class T>
void CompareChunk(const T* a, const T* b, uint8_t* out, size_t m) {
  const hn::ScalableTag<T> d;
  const hn::RebindToSigned<decltype(d)> di;
  using I = hn::TFromD<decltype(di)>;
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  if constexpr (sizeof(T) == 4) {  // whole vectors narrowed in registers (0 or 1 per lane)
    const hn::Rebind<uint8_t, decltype(di)> du8;
    const auto one = hn::Set(di, 1);
    for (; i + N <= m; i += N) {
      const auto mask = hn::RebindMask(di, CompareMask<K>(hn::LoadU(d, a + i), hn::LoadU(d, b + i)));
      const auto bits = hn::And(hn::VecFromMask(di, mask), one);
      hn::StoreU(hn::DemoteTo(du8, bits), du8, out + i);
    }
  }
  HWY_ALIGN I flags[kSelectChunk];  // all ones or zero per lane
  const size_t first = i;
  for (; i + N <= m; i += N) {
    hn::Store(hn::VecFromMask(di, hn::RebindMask(di, CompareMask<K>(hn::LoadU(d, a + i), hn::LoadU(d, b + i)))), di,
              flags + i);
  }
  if (i < m) {
    const auto va = LoadTail(d, a + i, m - i), vb = LoadTail(d, b + i, m - i);
    hn::Store(hn::VecFromMask(di, hn::RebindMask(di, CompareMask<K>(va, vb))), di, flags + i);
  }
  for (size_t j = first; j < m; ++j) out[j] = static_cast<uint8_t>(flags[j] & 1);
}

template <CompareKind K, class T>
void CompareRows(const Dims& shape, View a, View b, uint8_t* out) {
  const Dims out_strides = contiguous_strides(shape);
  const Dims* strides[3] = {&out_strides, a.strides, b.strides};
  const T* ap = reinterpret_cast<const T*>(a.data);
  const T* bp = reinterpret_cast<const T*>(b.data);
  HWY_ALIGN T abuf[kSelectChunk];
  HWY_ALIGN T bbuf[kSelectChunk];
  ForEachChunk<3>(shape, strides, [&](const int64_t* at, int64_t m, const int64_t* s) {
    CompareChunk<K>(Contiguous(ap + at[1], s[1], m, abuf), Contiguous(bp + at[2], s[2], m, bbuf), out + at[0],
                    static_cast<size_t>(m));
  });
}

template <class T>
void CompareTyped(CompareKind k, const Dims& shape, View a, View b, uint8_t* out) {
  switch (k) {
    case CompareKind::Eq:
      return CompareRows<CompareKind::Eq, T>(shape, a, b, out);
    case CompareKind::Ne:
      return CompareRows<CompareKind::Ne, T>(shape, a, b, out);
    case CompareKind::Lt:
      return CompareRows<CompareKind::Lt, T>(shape, a, b, out);
    case CompareKind::Le:
      return CompareRows<CompareKind::Le, T>(shape, a, b, out);
    case CompareKind::Gt:
      return CompareRows<CompareKind::Gt, T>(shape, a, b, out);
    case CompareKind::Ge:
      return CompareRows<CompareKind::Ge, T>(shape, a, b, out);
  }
}

void Compare(CompareKind k, DType dt, const Dims& shape, View a, View b, uint8_t* out) {
  if (dt == DType::F64) return CompareTyped<double>(k, shape, a, b, out);
  return CompareTyped<float>(k, shape, a, b, out);
}

// out[i] = c[i] ? a[i] : b[i]: the condition widened to T lanes through a buffer.
template <class T>
void WhereChunk(const uint8_t* c, const T* a, const T* b, T* out, size_t m) {
  const hn::ScalableTag<T> d;
  const hn::RebindToSigned<decltype(d)> di;
  using I = hn::TFromD<decltype(di)>;
  const size_t N = hn::Lanes(d);
  // The condition widened to T's lane width without a branch: a branch per
  // element on a random condition cost some 6 ns an element in mispredicts.
  HWY_ALIGN I flags[kSelectChunk];
  for (size_t j = 0; j < m; ++j) flags[j] = static_cast<I>(c[j] != 0);
  const auto zero = hn::Zero(di);
  size_t i = 0;
  for (; i + N <= m; i += N) {
    const auto mask = hn::RebindMask(d, hn::Ne(hn::Load(di, flags + i), zero));
    hn::StoreU(hn::IfThenElse(mask, hn::LoadU(d, a + i), hn::LoadU(d, b + i)), d, out + i);
  }
  if (i < m) {
    const auto mask = hn::RebindMask(d, hn::Ne(hn::Load(di, flags + i), zero));
    StoreTail(d, hn::IfThenElse(mask, LoadTail(d, a + i, m - i), LoadTail(d, b + i, m - i)), out + i, m - i);
  }
}

template <class T>
void WhereTyped(const Dims& shape, View cond, View a, View b, char* out) {
  const Dims out_strides = contiguous_strides(shape);
  const Dims* strides[4] = {&out_strides, cond.strides, a.strides, b.strides};
  const uint8_t* cp = reinterpret_cast<const uint8_t*>(cond.data);
  const T* ap = reinterpret_cast<const T*>(a.data);
  const T* bp = reinterpret_cast<const T*>(b.data);
  T* o = reinterpret_cast<T*>(out);
  uint8_t cbuf[kSelectChunk];
  HWY_ALIGN T abuf[kSelectChunk];
  HWY_ALIGN T bbuf[kSelectChunk];
  ForEachChunk<4>(shape, strides, [&](const int64_t* at, int64_t m, const int64_t* s) {
    WhereChunk(Contiguous(cp + at[1], s[1], m, cbuf), Contiguous(ap + at[2], s[2], m, abuf),
               Contiguous(bp + at[3], s[3], m, bbuf), o + at[0], static_cast<size_t>(m));
  });
}

void Where(DType dt, const Dims& shape, View cond, View a, View b, char* out) {
  if (dt == DType::F64) return WhereTyped<double>(shape, cond, a, b, out);
  return WhereTyped<float>(shape, cond, a, b, out);
}

// lerp(a, b, w): a + w (b - a) for |w| < 1/2, else b - (b - a)(1 - w).
template <class V>
HWY_INLINE V LerpVec(V a, V b, V w) {
  const hn::DFromV<V> d;
  const V diff = hn::Sub(b, a);
  const V near_a = hn::Add(a, hn::Mul(w, diff));
  const V near_b = hn::Sub(b, hn::Mul(diff, hn::Sub(hn::Set(d, 1), w)));
  return hn::IfThenElse(hn::Lt(hn::Abs(w), hn::Set(d, 0.5)), near_a, near_b);
}

template <class T>
void LerpChunk(const T* a, const T* b, const T* w, T* out, size_t m) {
  const hn::ScalableTag<T> d;
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + N <= m; i += N)
    hn::StoreU(LerpVec(hn::LoadU(d, a + i), hn::LoadU(d, b + i), hn::LoadU(d, w + i)), d, out + i);
  if (i < m) {
    const size_t r = m - i;
    StoreTail(d, LerpVec(LoadTail(d, a + i, r), LoadTail(d, b + i, r), LoadTail(d, w + i, r)), out + i, r);
  }
}

template <class T>
void LerpTyped(const Dims& shape, View a, View b, View w, char* out) {
  const Dims out_strides = contiguous_strides(shape);
  const Dims* strides[4] = {&out_strides, a.strides, b.strides, w.strides};
  const T* ap = reinterpret_cast<const T*>(a.data);
  const T* bp = reinterpret_cast<const T*>(b.data);
  const T* wp = reinterpret_cast<const T*>(w.data);
  T* o = reinterpret_cast<T*>(out);
  HWY_ALIGN T abuf[kSelectChunk];
  HWY_ALIGN T bbuf[kSelectChunk];
  HWY_ALIGN T wbuf[kSelectChunk];
  ForEachChunk<4>(shape, strides, [&](const int64_t* at, int64_t m, const int64_t* s) {
    LerpChunk(Contiguous(ap + at[1], s[1], m, abuf), Contiguous(bp + at[2], s[2], m, bbuf),
              Contiguous(wp + at[3], s[3], m, wbuf), o + at[0], static_cast<size_t>(m));
  });
}

void Lerp(DType dt, const Dims& shape, View a, View b, View w, char* out) {
  if (dt == DType::F64) return LerpTyped<double>(shape, a, b, w, out);
  return LerpTyped<float>(shape, a, b, w, out);
}

int64_t SelectTargetId() { return HWY_TARGET; }

}  // namespace ag::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ag::kernels {

HWY_EXPORT(Compare);
HWY_EXPORT(Where);
HWY_EXPORT(Lerp);
HWY_EXPORT(SelectTargetId);

void compare(CompareKind k, DType dt, const Dims& shape, View a, View b, uint8_t* out) {
  HWY_DYNAMIC_DISPATCH(Compare)(k, dt, shape, a, b, out);
}

void where(DType dt, const Dims& shape, View cond, View a, View b, char* out) {
  HWY_DYNAMIC_DISPATCH(Where)(dt, shape, cond, a, b, out);
}

void lerp(DType dt, const Dims& shape, View a, View b, View w, char* out) {
  HWY_DYNAMIC_DISPATCH(Lerp)(dt, shape, a, b, w, out);
}

int64_t select_target() { return HWY_DYNAMIC_DISPATCH(SelectTargetId)(); }

}  // namespace ag::kernels
#endif  // HWY_ONCE
