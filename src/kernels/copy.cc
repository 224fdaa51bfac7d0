// Copies with dtype conversion, and fills.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/kernels.h"
#include "kernels/loops.h"

namespace ag::kernels {

namespace {

// Value conversion between dtypes. Floating -> i64 truncates toward zero and
// saturates, NaN giving 0 (a plain cast would be undefined there).
template <class To, class From>
To convert(From v) {
  if constexpr (std::is_same_v<To, uint8_t>) {
    return v != From(0) ? 1 : 0;
  } else if constexpr (std::is_same_v<To, int64_t> && std::is_floating_point_v<From>) {
    if (std::isnan(v)) return 0;
    if (v >= From(9.2233720368547758e18)) return INT64_MAX;
    if (v <= From(-9.2233720368547758e18)) return INT64_MIN;
    return static_cast<int64_t>(v);
  } else {
    return static_cast<To>(v);
  }
}

// Transposing copies (a row of the destination reads a column of the
// source) go through the plane of the two dims in tiles: a row walk
// touches a new source line per element and has left it by the next row,
// so a 1024 x 1024 f32 transpose ran at 5.3 ns an element, against 1.0 to
// 1.3 in tiles of 128 bytes of the source's rows by 64 of the
// destination's (32 x 16 floats; PyTorch's blocked copy 1.1 to 1.4 on the
// same machine). Square tiles of 64 lines or more lose: lines 4 KiB apart
// share one set of the L1 cache.
constexpr int64_t kTileSrcBytes = 128, kTileDstBytes = 64;
// Source strides (elements) from which a row walk loses its lines.
constexpr int64_t kTileMinStride = 16;

// The dim (other than the last) to tile with the last one, or -1: the
// source's most contiguous dim, when the last dim reads the source with a
// stride of at least kTileMinStride and that dim with a smaller one.
template <int N>
int transpose_dim(const LoopPlan<N>& p) {
  if (p.ndim < 2) return -1;
  const int last = p.ndim - 1;
  const int64_t inner = p.strides[1][last] < 0 ? -p.strides[1][last] : p.strides[1][last];
  if (inner < kTileMinStride) return -1;
  int best = -1;
  int64_t best_stride = inner;
  for (int d = 0; d < last; ++d) {
    const int64_t st = p.strides[1][d] < 0 ? -p.strides[1][d] : p.strides[1][d];
    if (st < best_stride) best = d, best_stride = st;
  }
  return best_stride < kTileMinStride ? best : -1;
}

// body(dst offset, src offset) for every element, the plane of dims b and
// last in tiles of TI x TJ, the other dims in row-major order around it.
template <class F>
void for_each_tiled(const LoopPlan<2>& p, int b, int64_t TI, int64_t TJ, F&& body) {
  const int last = p.ndim - 1;
  const int64_t nb = p.shape[b], nl = p.shape[last];
  const int64_t db0 = p.strides[0][b], db1 = p.strides[1][b], dl0 = p.strides[0][last], dl1 = p.strides[1][last];
  int64_t idx[kMaxDims] = {};
  int64_t off0 = 0, off1 = 0;
  for (;;) {
    for (int64_t i0 = 0; i0 < nb; i0 += TI) {
      const int64_t i1 = i0 + TI < nb ? i0 + TI : nb;
      for (int64_t j0 = 0; j0 < nl; j0 += TJ) {
        const int64_t j1 = j0 + TJ < nl ? j0 + TJ : nl;
        for (int64_t i = i0; i < i1; ++i) {
          for (int64_t j = j0; j < j1; ++j) body(off0 + i * db0 + j * dl0, off1 + i * db1 + j * dl1);
        }
      }
    }
    int d = last - 1;
    for (; d >= 0; --d) {
      if (d == b) continue;
      ++idx[d];
      off0 += p.strides[0][d], off1 += p.strides[1][d];
      if (idx[d] < p.shape[d]) break;
      off0 -= p.strides[0][d] * p.shape[d], off1 -= p.strides[1][d] * p.shape[d];
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace

void copy(DType src_dt, const Dims& shape, View src, DType dst_dt, char* dst, const Dims& dst_strides) {
  const Dims* strides[2] = {&dst_strides, src.strides};
  const auto plan = plan_loop<2>(shape, strides);
  const int b = transpose_dim(plan);
  visit_dtype(src_dt, [&](auto s0) {
    using S = decltype(s0);
    visit_dtype(dst_dt, [&](auto d0) {
      using D = decltype(d0);
      const S* sp = reinterpret_cast<const S*>(src.data);
      D* dp = reinterpret_cast<D*>(dst);
      if (b >= 0) {
        for_each_tiled(plan, b, kTileSrcBytes / static_cast<int64_t>(sizeof(S)),
                       kTileDstBytes / static_cast<int64_t>(sizeof(D)),
                       [&](int64_t o0, int64_t o1) { dp[o0] = convert<D>(sp[o1]); });
        return;
      }
      for_each_row<2>(plan, [&](const int64_t* off, int64_t n, const int64_t* st) {
        D* drow = dp + off[0];
        const S* srow = sp + off[1];
        if constexpr (std::is_same_v<S, D> && !std::is_same_v<D, uint8_t>) {
          if (st[0] == 1 && st[1] == 1) {
            std::memcpy(drow, srow, static_cast<size_t>(n) * sizeof(D));
            return;
          }
        }
        for (int64_t i = 0; i < n; ++i) drow[i * st[0]] = convert<D>(srow[i * st[1]]);
      });
    });
  });
}

void fill(DType dt, char* out, int64_t n, double value) {
  visit_dtype(dt, [&](auto z) {
    using T = decltype(z);
    const T v = convert<T>(value);
    T* o = reinterpret_cast<T*>(out);
    for (int64_t i = 0; i < n; ++i) o[i] = v;
  });
}

}  // namespace ag::kernels
