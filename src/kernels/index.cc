// Indexing kernels: gather, scatter-add and masked fill over strided memory.
// Index chasing is bound by memory access, not arithmetic, so these are plain
// loops rather than Highway kernels. Index values are checked by the ops
// before these run.
#include <cstdint>
#include <cstring>

#include "kernels/kernels.h"
#include "kernels/loops.h"

namespace ag::kernels {

void gather(DType dt, const Dims& shape, View x, int dim, const View& index, char* out) {
  Dims xs = *x.strides;
  const int64_t dim_stride = xs[dim];
  xs[dim] = 0;
  const Dims os = contiguous_strides(shape);
  const Dims* strides[3] = {&os, index.strides, &xs};
  const auto plan = plan_loop<3>(shape, strides);
  const int64_t* ip = reinterpret_cast<const int64_t*>(index.data);
  visit_dtype(dt, [&](auto z) {
    using T = decltype(z);
    const T* xp = reinterpret_cast<const T*>(x.data);
    T* op = reinterpret_cast<T*>(out);
    for_each_row<3>(plan, [&](const int64_t* off, int64_t n, const int64_t* st) {
      if (st[1] == 0) {  // one index for the row (index_select, embedding): a plain copy
        const T* src = xp + off[2] + ip[off[1]] * dim_stride;
        T* dst = op + off[0];
        if (st[0] == 1 && st[2] == 1) {
          std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(T));
        } else {
          for (int64_t i = 0; i < n; ++i) dst[i * st[0]] = src[i * st[2]];
        }
        return;
      }
      for (int64_t i = 0; i < n; ++i) {
        op[off[0] + i * st[0]] = xp[off[2] + i * st[2] + ip[off[1] + i * st[1]] * dim_stride];
      }
    });
  });
}

void scatter_add(DType dt, const Dims& shape, const View& index, const View& src, int dim, char* out,
                 const Dims& out_strides) {
  Dims os = out_strides;
  const int64_t dim_stride = os[dim];
  os[dim] = 0;
  const Dims* strides[3] = {&os, index.strides, src.strides};
  const auto plan = plan_loop<3>(shape, strides);
  const int64_t* ip = reinterpret_cast<const int64_t*>(index.data);
  visit_floating(dt, [&](auto z) {
    using T = decltype(z);
    const T* sp = reinterpret_cast<const T*>(src.data);
    T* op = reinterpret_cast<T*>(out);
    // Row-major over `shape`, one element after the other: repeated targets
    // accumulate in that fixed order.
    for_each_row<3>(plan, [&](const int64_t* off, int64_t n, const int64_t* st) {
      if (st[1] == 0) {  // one index for the row (index_add): a row added in place
        T* dst = op + off[0] + ip[off[1]] * dim_stride;
        const T* src = sp + off[2];
        if (st[0] == 1 && st[2] == 1) {
          for (int64_t i = 0; i < n; ++i) dst[i] += src[i];
        } else {
          for (int64_t i = 0; i < n; ++i) dst[i * st[0]] += src[i * st[2]];
        }
        return;
      }
      for (int64_t i = 0; i < n; ++i) {
        op[off[0] + i * st[0] + ip[off[1] + i * st[1]] * dim_stride] += sp[off[2] + i * st[2]];
      }
    });
  });
}

void masked_fill(DType dt, const Dims& shape, View x, View mask, double value, char* out) {
  const Dims os = contiguous_strides(shape);
  const Dims* strides[3] = {&os, x.strides, mask.strides};
  const auto plan = plan_loop<3>(shape, strides);
  const uint8_t* mp = reinterpret_cast<const uint8_t*>(mask.data);
  visit_dtype(dt, [&](auto z) {
    using T = decltype(z);
    const T* xp = reinterpret_cast<const T*>(x.data);
    T* op = reinterpret_cast<T*>(out);
    const T v = static_cast<T>(value);
    for_each_row<3>(plan, [&](const int64_t* off, int64_t n, const int64_t* st) {
      for (int64_t i = 0; i < n; ++i) {
        op[off[0] + i * st[0]] = mp[off[2] + i * st[2]] ? v : xp[off[1] + i * st[1]];
      }
    });
  });
}

}  // namespace ag::kernels
