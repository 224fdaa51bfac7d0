// Helpers of the decomposition ops (linalg_decomp.cc, linalg_eig.cc): f64
// working copies, square checks and the parallel loop over a batch of
// matrices.
#pragma once

#include <algorithm>
#include <vector>

#include "ops/op_common.h"

namespace ag::ops::linalg {

inline Tensor mT(const Tensor& x) { return transpose(x, -2, -1); }

// A contiguous f64 copy of x (no graph).
inline Tensor f64_copy(const Tensor& x) {
  Tensor y = empty(x->context(), DType::F64, x->shape());
  if (y->numel() > 0) kernels::copy(x->dtype(), x->shape(), view_of(*x), DType::F64, y->data(), y->strides());
  return y;
}

// y (contiguous f64) in dtype dt (no graph).
inline Tensor to_dtype(const Tensor& y, DType dt) {
  if (dt == DType::F64) return y;
  Tensor r = empty(y->context(), dt, y->shape());
  if (r->numel() > 0) kernels::copy(DType::F64, y->shape(), view_of(*y), dt, r->data(), r->strides());
  return r;
}

inline void check_matrix(const Tensor& a, const char* what) {
  check_floating(*a);
  if (a->ndim() < 2) fail(AG_ERR_SHAPE, what, " must be matrices (..., m, n), got shape ", shape_str(a->shape()));
}

inline void check_square(const Tensor& a, const char* what) {
  check_matrix(a, what);
  const int nd = a->ndim();
  if (a->shape()[nd - 1] != a->shape()[nd - 2]) {
    fail(AG_ERR_SHAPE, what, " must be square matrices (..., n, n), got shape ", shape_str(a->shape()));
  }
}

inline Dims batch_of(const Dims& s) { return Dims(s.data(), s.size() - 2); }

// The number of matrices in x (..., m, n): 0 for an empty x, whose other
// sizes may be anything (m * n may overflow).
inline int64_t matrix_count(const TensorImpl& x) {
  const Dims& s = x.shape();
  return x.numel() == 0 ? 0 : x.numel() / (s[s.size() - 2] * s[s.size() - 1]);
}

// Runs fn(b) for each of `count` matrices of about n^3 flops, in parallel
// chunks of about 1e5 flops; returns the first b for which fn returned >= 0
// with that value in *what, or -1 (the ops turn it into their message,
// outside the parallel region).
template <class F>
int64_t for_matrices(Context* ctx, int64_t count, int64_t n, int64_t* what, F&& fn) {
  if (count == 0) return -1;  // n may then be any size
  std::vector<int64_t> bad(static_cast<size_t>(count), -1);
  // n^3 in double: it may overflow int64.
  const double flops = static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  const int64_t chunk = static_cast<int64_t>(std::max(1.0, 100000.0 / std::max(1.0, flops)));
  for_ranges(ctx, count, chunk, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) bad[b] = fn(b);
  });
  for (int64_t b = 0; b < count; ++b) {
    if (bad[b] >= 0) {
      *what = bad[b];
      return b;
    }
  }
  return -1;
}

}  // namespace ag::ops::linalg
