// Shape rules and helpers shared by the reductions over dims
// (reduce_dims.cc, reduce_select.cc, cumulative.cc) and the ops built on
// them (softmax, losses).
#pragma once

#include <algorithm>

#include "ops/op_common.h"

namespace ag::ops {

struct ReducedShape {
  Dims keep;          // x's shape with 1 in every reduced dim (keepdim=1)
  Dims out;           // the reduced dims dropped (keepdim=0)
  int64_t count = 1;  // elements reduced into each output element
};

// Wraps and validates dims against x (empty dims: all of them); a repeated
// dim is AG_ERR_INVALID_ARGUMENT.
ReducedShape reduced_shape(const TensorImpl& x, const Dims& dims);

// y (contiguous, of shape r.keep) as r.out unless keepdim.
Tensor drop_kept_dims(const Tensor& y, const ReducedShape& r, bool keepdim);

// A shape read as (outer, n, inner) around dim d (all 1 for a 0-dim shape).
struct Split {
  int64_t outer = 1, n = 1, inner = 1;
};

// The products saturate at INT64_MAX: only an empty shape (any size beside a
// 0) can overflow, and ops with an empty input return before using them.
inline int64_t saturating_product(const Dims& shape, int begin, int end) {
  int64_t p = 1;
  for (int i = begin; i < end; ++i) {
    if (shape[i] == 0) return 0;
  }
  for (int i = begin; i < end; ++i) {
    if (__builtin_mul_overflow(p, shape[i], &p)) return INT64_MAX;
  }
  return p;
}
inline Split split_at(const Dims& shape, int d) {
  Split s;
  if (shape.size() == 0) return s;
  s.outer = saturating_product(shape, 0, d);
  s.n = shape[d];
  s.inner = saturating_product(shape, d + 1, shape.size());
  return s;
}

// y (contiguous, numel = the kept elements) = x summed over its leading
// dims, when x is large and contiguous and every dim after the leading ones
// with 1 in `keep` (x's ndim) is kept whole: a gradient summed over its
// batch (conv2d's and linear's weight gradients). Parallel blocks of the
// kept elements, each summed over the rows in row order, so the bits do not
// depend on the thread count. False, with nothing done, otherwise.
bool sum_leading_dims(const TensorImpl& x, const Dims& keep, TensorImpl& y);

// Calls kernel(first_row, rows) over the outer rows of s, in parallel chunks
// of about one grain of work class w when large. The chunking depends only
// on the shape, and rows are independent, so results do not depend on the
// thread count.
template <class F>
void for_row_blocks(Context* ctx, const Split& s, F&& kernel, Work w = Work::Elementwise) {
  const int64_t row = std::max<int64_t>(s.n, 1) * s.inner;
  if (row == 0 || s.outer == 0) return;
  for_ranges(ctx, s.outer, units_per_chunk(w, row), [&](int64_t b, int64_t e) { kernel(b, e - b); });
}

// A constant tensor (no graph) of x's shape and dtype holding f(x[i]) (f
// takes and returns double): masks, signs and branch coefficients that
// composite ops multiply with.
template <class F>
Tensor coefficients(const Tensor& x, F f) {
  const Tensor xc = contiguous_data(x);
  Tensor c = empty(x->context(), x->dtype(), x->shape());
  visit_floating(x->dtype(), [&](auto z) {
    using T = decltype(z);
    const T* in = xc->data_as<T>();
    T* out = c->data_as<T>();
    for (int64_t i = 0; i < c->numel(); ++i) out[i] = static_cast<T>(f(static_cast<double>(in[i])));
  });
  return c;
}

// True if some element of x is 0 (or -0).
inline bool has_zero(const Tensor& x) {
  const Tensor xc = contiguous_data(x);
  bool found = false;
  visit_floating(x->dtype(), [&](auto z) {
    const auto* p = xc->data_as<decltype(z)>();
    for (int64_t i = 0; i < xc->numel() && !found; ++i) found = p[i] == 0;
  });
  return found;
}

inline double sign_of(double v) { return v > 0.0 ? 1.0 : (v < 0.0 ? -1.0 : 0.0); }

// |x| as x * sign(x) with a constant sign: gradient sign(x), 0 at 0.
inline Tensor abs_of(const Tensor& x) { return mul(x, coefficients(x, sign_of)); }

// t^e, with value and gradient 0 where t = 0 (by selects, so no 0 * inf
// there): for e < 1, whose slope at 0 is infinite (the sqrt of a zero
// variance or sum of squares, p-norms at zero), as PyTorch's masked
// backwards. Second derivatives there are 0 as well.
inline Tensor pow_away_from_zero(const Tensor& t, double e) {
  const Tensor zero = scalar_like(t, 0.0);
  const Tensor at_zero = eq(t, zero);
  return where(at_zero, zero, pow_scalar(where(at_zero, scalar_like(t, 1.0), t), e));
}

// Max/min/prod of x along dim d into a new tensor of x's shape with d set to
// 1 (no graph); `indices`, if given, receives the i64 index of the selected
// element (max/min). Max/min over a dim of size 0 is AG_ERR_SHAPE.
Tensor reduce_along(kernels::DimReduceKind k, const Tensor& x, int d, Tensor* indices);

// Max (or min) of x over the dims of r, in the keepdim shape; no graph.
Tensor extreme_keep(bool max, const Tensor& x, const Dims& dims);

// m + the sum over the dims of (x - m) / (the count of elements equal to m),
// taken over those elements only: exactly m (keepdim shape, a constant: the
// max, min or median of each slice), with the gradient shared evenly among
// the elements that attain it (NaN attains a NaN m), as PyTorch's amax.
Tensor shared_extreme(const Tensor& x, const Tensor& m, const Dims& dims);

// i64 indices that sort x along dim d (ascending or descending, stable,
// NaN as the largest value); no graph.
Tensor sort_indices(const Tensor& x, int d, bool descending);

}  // namespace ag::ops
