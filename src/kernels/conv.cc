// Sliding-window kernels (see conv.h).
#include "kernels/conv.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace ag::kernels {

namespace {

// The window positions z in [0, out) whose element z*s - p + j*d lies in
// [0, size): [lo, hi), empty when lo >= hi.
void valid_range(int64_t out, int64_t s, int64_t p, int64_t offset, int64_t size, int64_t& lo, int64_t& hi) {
  const int64_t first = offset - p;  // element of position 0
  lo = first >= 0 ? 0 : (-first + s - 1) / s;
  hi = first >= size ? 0 : (size - 1 - first) / s + 1;
  if (hi > out) hi = out;
  if (lo > hi) lo = hi;
}

// d[i] += s[i] (rows that do not overlap: the compiler may vectorize).
template <class T>
void add_row(T* __restrict d, const T* __restrict s, int64_t n) {
  for (int64_t i = 0; i < n; ++i) d[i] += s[i];
}

}  // namespace

void unfold2d(DType dt, const Dims& x_shape, View x, const Window2d& w, char* cols, int64_t r0, int64_t r1) {
  const int64_t C = x_shape[1], H = x_shape[2], W = x_shape[3];
  const Dims& xs = *x.strides;
  const int64_t L = w.out_h * w.out_w;
  visit_floating(dt, [&](auto zero) {
    using T = decltype(zero);
    const T* xp = reinterpret_cast<const T*>(x.data);
    T* out = reinterpret_cast<T*>(cols);
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t j = r % w.kw, i = r / w.kw % w.kh, c = r / (w.kw * w.kh) % C, n = r / (w.kw * w.kh * C);
      T* row = out + r * L;
      int64_t ylo, yhi, zlo, zhi;
      valid_range(w.out_h, w.sh, w.ph, i * w.dh, H, ylo, yhi);
      valid_range(w.out_w, w.sw, w.pw, j * w.dw, W, zlo, zhi);
      std::memset(static_cast<void*>(row), 0, sizeof(T) * static_cast<size_t>(ylo * w.out_w));
      const T* plane = xp + n * xs[0] + c * xs[1];
      for (int64_t y = ylo; y < yhi; ++y) {
        T* o = row + y * w.out_w;
        const T* src = plane + (y * w.sh - w.ph + i * w.dh) * xs[2] + (zlo * w.sw - w.pw + j * w.dw) * xs[3];
        for (int64_t z = 0; z < zlo; ++z) o[z] = T(0);
        const int64_t step = w.sw * xs[3];
        if (step == 1) {
          std::memcpy(static_cast<void*>(o + zlo), src, sizeof(T) * static_cast<size_t>(zhi - zlo));
        } else {
          for (int64_t z = zlo; z < zhi; ++z) o[z] = src[(z - zlo) * step];
        }
        for (int64_t z = zhi; z < w.out_w; ++z) o[z] = T(0);
      }
      const int64_t done = yhi > ylo ? yhi : ylo;
      std::memset(static_cast<void*>(row + done * w.out_w), 0, sizeof(T) * static_cast<size_t>((w.out_h - done) * w.out_w));
    }
  });
}

void fold2d(DType dt, const Dims& out_shape, View cols, const Window2d& w, char* out, int64_t p0, int64_t p1) {
  const int64_t C = out_shape[1], H = out_shape[2], W = out_shape[3];
  const Dims& cs = *cols.strides;
  visit_floating(dt, [&](auto zero) {
    using T = decltype(zero);
    const T* cp = reinterpret_cast<const T*>(cols.data);
    T* op = reinterpret_cast<T*>(out);
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t n = p / C, c = p % C;
      T* plane = op + p * H * W;
      for (int64_t e = 0; e < H * W; ++e) plane[e] = T(0);
      for (int64_t i = 0; i < w.kh; ++i) {
        for (int64_t j = 0; j < w.kw; ++j) {
          const T* row = cp + n * cs[0] + ((c * w.kh + i) * w.kw + j) * cs[1];
          int64_t ylo, yhi, zlo, zhi;
          valid_range(w.out_h, w.sh, w.ph, i * w.dh, H, ylo, yhi);
          valid_range(w.out_w, w.sw, w.pw, j * w.dw, W, zlo, zhi);
          for (int64_t y = ylo; y < yhi; ++y) {
            T* dst = plane + (y * w.sh - w.ph + i * w.dh) * W - w.pw + j * w.dw;
            const T* src = row + y * w.out_w * cs[2];
            if (w.sw == 1 && cs[2] == 1) {
              add_row(dst + zlo, src + zlo, zhi - zlo);
            } else {
              for (int64_t z = zlo; z < zhi; ++z) dst[z * w.sw] += src[z * cs[2]];
            }
          }
        }
      }
    }
  });
}

void max_pool2d(DType dt, const Dims& x_shape, View x, const Window2d& w, char* out, int64_t* indices, int64_t p0,
                int64_t p1) {
  const int64_t C = x_shape[1], H = x_shape[2], W = x_shape[3];
  const Dims& xs = *x.strides;
  visit_floating(dt, [&](auto zero) {
    using T = decltype(zero);
    const T* xp = reinterpret_cast<const T*>(x.data);
    T* op = reinterpret_cast<T*>(out);
    for (int64_t p = p0; p < p1; ++p) {
      const T* plane = xp + p / C * xs[0] + p % C * xs[1];
      T* o = op + p * w.out_h * w.out_w;
      int64_t* ix = indices + p * w.out_h * w.out_w;
      for (int64_t y = 0; y < w.out_h; ++y) {
        int64_t hs = y * w.sh - w.ph;
        const int64_t he = std::min(hs + (w.kh - 1) * w.dh + 1, H);
        while (hs < 0) hs += w.dh;
        for (int64_t z = 0; z < w.out_w; ++z) {
          int64_t ws = z * w.sw - w.pw;
          const int64_t we = std::min(ws + (w.kw - 1) * w.dw + 1, W);
          while (ws < 0) ws += w.dw;
          T best = -std::numeric_limits<T>::infinity();
          int64_t at = hs * W + ws;
          for (int64_t h = hs; h < he; h += w.dh) {
            for (int64_t v = ws; v < we; v += w.dw) {
              const T e = plane[h * xs[2] + v * xs[3]];
              if (e > best || std::isnan(e)) {
                best = e;
                at = h * W + v;
              }
            }
          }
          o[y * w.out_w + z] = best;
          ix[y * w.out_w + z] = at;
        }
      }
    }
  });
}

}  // namespace ag::kernels
