// Strided iteration shared by the kernels: an N-operand walk over a shape in
// row-major order, after dropping size-1 dims and merging dims that are
// contiguous for every operand. The body sees one inner row at a time:
//   body(const int64_t* offsets /*N, elements*/, int64_t n, const int64_t* inner_strides /*N*/)
// Broadcast inputs have stride 0. Nothing here allocates.
#pragma once

#include <cstdint>

#include "core/shape.h"

namespace ag::kernels {

template <int N>
struct LoopPlan {
  int ndim = 0;
  int64_t shape[kMaxDims];
  int64_t strides[N][kMaxDims];
};

template <int N>
LoopPlan<N> plan_loop(const Dims& shape, const Dims* const (&strides)[N]) {
  LoopPlan<N> p;
  for (int i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0) {  // empty: one dim of 0 (the other sizes may overflow when merged)
      p.ndim = 1;
      p.shape[0] = 0;
      for (int k = 0; k < N; ++k) p.strides[k][0] = 0;
      return p;
    }
  }
  for (int i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1) continue;
    const int j = p.ndim;
    bool merge = j > 0;
    for (int k = 0; k < N && merge; ++k) {
      merge = p.strides[k][j - 1] == (*strides[k])[i] * shape[i];
    }
    if (merge) {
      p.shape[j - 1] *= shape[i];
      for (int k = 0; k < N; ++k) p.strides[k][j - 1] = (*strides[k])[i];
    } else {
      p.shape[j] = shape[i];
      for (int k = 0; k < N; ++k) p.strides[k][j] = (*strides[k])[i];
      ++p.ndim;
    }
  }
  return p;
}

template <int N, class F>
void for_each_row(const LoopPlan<N>& p, F&& body) {
  int64_t off[N] = {};
  int64_t inner[N] = {};
  for (int i = 0; i < p.ndim; ++i) {
    if (p.shape[i] == 0) return;
  }
  if (p.ndim == 0) {
    body(off, int64_t{1}, inner);
    return;
  }
  const int last = p.ndim - 1;
  for (int k = 0; k < N; ++k) inner[k] = p.strides[k][last];
  const int64_t n = p.shape[last];
  int64_t idx[kMaxDims] = {};
  for (;;) {
    body(off, n, inner);
    int d = last - 1;
    for (; d >= 0; --d) {
      ++idx[d];
      for (int k = 0; k < N; ++k) off[k] += p.strides[k][d];
      if (idx[d] < p.shape[d]) break;
      for (int k = 0; k < N; ++k) off[k] -= p.strides[k][d] * p.shape[d];
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace ag::kernels
