// Ops built on a stable sort along one dim: sort, msort, topk, kthvalue,
// median and nanmedian (whole tensor and along a dim), quantile and
// nanquantile. The order is computed without a graph; the values are then
// taken from x with take_along_dim, so each gradient is g scattered to the
// selected elements (and its derivatives are those of take_along_dim).
// NaN sorts as the largest value, and ties keep their order (stable), as
// PyTorch's CPU sort.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "ops/reduce_dims.h"

namespace ag::ops {

namespace {

template <class T>
bool less_nan_last(T a, T b) {
  return a < b || (std::isnan(b) && !std::isnan(a));
}

// x with at least one dim (a 0-dim x as shape (1)), for the indexing ops.
Tensor at_least_1d(const Tensor& x) { return x->ndim() == 0 ? reshape(x, Dims{1}) : x; }

// The elements of x at `idx` along dim d (idx of x's rank); x's rank kept.
Tensor take(const Tensor& x, const Tensor& idx, int d) {
  if (x->ndim() > 0) return take_along_dim(x, idx, d);
  return reshape(take_along_dim(at_least_1d(x), at_least_1d(idx), 0), idx->shape());
}

// The count of non-NaN elements of each slice along d (keepdim shape, any order).
std::vector<int64_t> non_nan_counts(const Tensor& x, int d) {
  const Split s = split_at(x->shape(), d);
  const Tensor xc = contiguous_data(x);
  std::vector<int64_t> counts(static_cast<size_t>(s.outer * s.inner), 0);
  visit_floating(x->dtype(), [&](auto z) {
    const auto* v = xc->data_as<decltype(z)>();
    for (int64_t o = 0; o < s.outer; ++o) {
      for (int64_t k = 0; k < s.n; ++k) {
        for (int64_t j = 0; j < s.inner; ++j) counts[o * s.inner + j] += !std::isnan(v[(o * s.n + k) * s.inner + j]);
      }
    }
  });
  return counts;
}

// The i64 indices (keepdim shape) of the elements at sorted position
// pos(non-NaN count, n) of each slice of `order` along d.
template <class F>
Tensor index_at_position(const Tensor& x, const Tensor& order, int d, F pos) {
  Dims keep = x->shape();
  if (keep.size() > 0) keep[d] = 1;
  Tensor idx = empty(x->context(), DType::I64, keep);
  if (x->numel() == 0) return idx;  // no slices, however many the sizes of an empty x count
  const Split s = split_at(x->shape(), d);
  const std::vector<int64_t> counts = non_nan_counts(x, d);
  const int64_t* o_in = order->data_as<int64_t>();
  int64_t* out = idx->data_as<int64_t>();
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t j = 0; j < s.inner; ++j) {
      const int64_t p = pos(counts[o * s.inner + j], s.n);
      out[o * s.inner + j] = o_in[(o * s.n + p) * s.inner + j];
    }
  }
  return idx;
}

Tensor drop_dim(const Tensor& y, int d, bool keepdim) {
  if (keepdim || y->ndim() == 0) return y;
  Dims shape;
  for (int i = 0; i < y->ndim(); ++i) {
    if (i != d) shape.push_back(y->shape()[i]);
  }
  return reshape(y, shape);
}

}  // namespace

Tensor sort_indices(const Tensor& x, int d, bool descending) {
  const Split s = split_at(x->shape(), d);
  const Tensor xc = contiguous_data(x);
  Tensor idx = empty(x->context(), DType::I64, x->shape());
  int64_t* out = idx->data_as<int64_t>();
  if (x->numel() == 0) return idx;  // no rows, however many the sizes of an empty x count
  visit_floating(x->dtype(), [&](auto z) {
    using T = decltype(z);
    const T* v = xc->data_as<T>();
    for_row_blocks(x->context(), s, [&](int64_t first, int64_t rows) {
      std::vector<int64_t> order(static_cast<size_t>(s.n));
      for (int64_t o = first; o < first + rows; ++o) {
        for (int64_t j = 0; j < s.inner; ++j) {
          const T* base = v + o * s.n * s.inner + j;
          const int64_t stride = s.inner;
          std::iota(order.begin(), order.end(), int64_t{0});
          if (descending) {
            std::stable_sort(order.begin(), order.end(),
                             [&](int64_t a, int64_t b) { return less_nan_last(base[b * stride], base[a * stride]); });
          } else {
            std::stable_sort(order.begin(), order.end(),
                             [&](int64_t a, int64_t b) { return less_nan_last(base[a * stride], base[b * stride]); });
          }
          int64_t* dst = out + o * s.n * s.inner + j;
          for (int64_t k = 0; k < s.n; ++k) dst[k * stride] = order[static_cast<size_t>(k)];
        }
      }
    }, Work::Gather);
  });
  return idx;
}

// sort: values along dim in ascending (descending) order and their indices;
// always stable (stable = 0 allows any order of ties: this one).
std::pair<Tensor, Tensor> sort(const Tensor& x, int64_t dim, bool descending, bool stable) {
  (void)stable;
  check_floating(*x);
  const int d = wrap_dim(dim, x->ndim(), "dim", true);
  Tensor idx = sort_indices(x, d, descending);
  return {take(x, idx, d), idx};
}

// msort: sort along dim 0, ascending.
Tensor msort(const Tensor& x) { return sort(x, 0, false, true).first; }

// topk: the k largest (smallest) along dim, in sorted order.
std::pair<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim, bool largest, bool sorted) {
  (void)sorted;
  check_floating(*x);
  const int d = wrap_dim(dim, x->ndim(), "dim", true);
  const int64_t n = x->ndim() == 0 ? 1 : x->shape()[d];
  if (k < 0 || k > n) fail(AG_ERR_INVALID_ARGUMENT, "k ", k, " is out of range for dim ", dim, " of size ", n);
  const Tensor order = sort_indices(x, d, largest);
  Tensor idx = x->ndim() == 0 ? order : grad_clone(narrow(order, d, 0, k));
  return {take(x, idx, d), idx};
}

// kthvalue: the k-th smallest along dim (k from 1) and its index.
std::pair<Tensor, Tensor> kthvalue(const Tensor& x, int64_t k, int64_t dim, bool keepdim) {
  check_floating(*x);
  const int d = wrap_dim(dim, x->ndim(), "dim", true);
  const int64_t n = x->ndim() == 0 ? 1 : x->shape()[d];
  if (k < 1 || k > n) fail(AG_ERR_INVALID_ARGUMENT, "k ", k, " is out of range for dim ", dim, " of size ", n);
  const Tensor order = sort_indices(x, d, false);
  const Tensor idx = index_at_position(x, order, d, [k](int64_t, int64_t) { return k - 1; });
  return {drop_dim(take(x, idx, d), d, keepdim), drop_dim(idx, d, keepdim)};
}

namespace {

// The lower median's sorted position: with NaNs (median) the first NaN,
// (nanmedian) among the non-NaN elements, 0 if all are NaN.
int64_t median_position(bool ignore_nan, int64_t non_nan, int64_t n) {
  if (!ignore_nan) return non_nan < n ? non_nan : (n - 1) / 2;
  return non_nan > 0 ? (non_nan - 1) / 2 : 0;
}

std::pair<Tensor, Tensor> median_along(const Tensor& x, int64_t dim, bool keepdim, bool ignore_nan) {
  check_floating(*x);
  const int d = wrap_dim(dim, x->ndim(), "dim", true);
  const int64_t n = x->ndim() == 0 ? 1 : x->shape()[d];
  if (n == 0) fail(AG_ERR_SHAPE, "cannot take the median over dim ", dim, " of size 0 (shape ", shape_str(x->shape()), ")");
  const Tensor order = sort_indices(x, d, false);
  const Tensor idx =
      index_at_position(x, order, d, [ignore_nan](int64_t c, int64_t m) { return median_position(ignore_nan, c, m); });
  return {drop_dim(take(x, idx, d), d, keepdim), drop_dim(idx, d, keepdim)};
}

// The median of all elements, with the gradient shared evenly among the
// elements equal to it (all NaNs for a NaN median), as PyTorch's.
Tensor median_all(const Tensor& x, bool ignore_nan) {
  check_floating(*x);
  if (x->numel() == 0) fail(AG_ERR_SHAPE, "cannot take the median of an empty tensor");
  const Tensor flat = reshape(x, Dims{x->numel()});
  const int64_t at = median_along(flat, 0, true, ignore_nan).second->data_as<int64_t>()[0];
  const Tensor fc = contiguous_data(flat);
  double value = 0.0;
  visit_floating(x->dtype(), [&](auto z) { value = static_cast<double>(fc->data_as<decltype(z)>()[at]); });
  return reshape(shared_extreme(flat, full(x->context(), x->dtype(), Dims{1}, value), Dims{}), Dims{});
}

}  // namespace

std::pair<Tensor, Tensor> median_dim(const Tensor& x, int64_t dim, bool keepdim) {
  return median_along(x, dim, keepdim, false);
}
std::pair<Tensor, Tensor> nanmedian_dim(const Tensor& x, int64_t dim, bool keepdim) {
  return median_along(x, dim, keepdim, true);
}
Tensor median(const Tensor& x) { return median_all(x, false); }
Tensor nanmedian(const Tensor& x) { return median_all(x, true); }

// quantile / nanquantile: PyTorch's rule on the sorted slice of n (non-NaN,
// for nanquantile) elements: rank r = q (n - 1); linear: the values at
// floor(r) and ceil(r) interpolated by r - floor(r); lower, higher, nearest
// (round half to even) and midpoint (weight 1/2) likewise. A slice with a
// NaN gives NaN (quantile); an all-NaN slice NaN (nanquantile).
Tensor quantile_impl(const Tensor& x, const Tensor& q, const Dims& dims, bool keepdim, int32_t interpolation,
                     bool ignore_nan) {
  check_floating(*x);
  check_same(*x, *q);
  if (q->ndim() > 1) fail(AG_ERR_SHAPE, "q must be a scalar or 1-D tensor, got shape ", shape_str(q->shape()));
  if (dims.size() > 1) fail(AG_ERR_INVALID_ARGUMENT, "takes at most one dim, got ", dims.size());
  if (interpolation < 0 || interpolation > 4) {
    fail(AG_ERR_INVALID_ARGUMENT, "interpolation ", interpolation, " is not one of AG_QUANTILE_*");
  }
  if (x->numel() == 0) fail(AG_ERR_SHAPE, "cannot take a quantile of an empty tensor");
  std::vector<double> qs;
  {
    const Tensor qc = contiguous_data(q);
    visit_floating(q->dtype(), [&](auto z) {
      const auto* p = qc->data_as<decltype(z)>();
      for (int64_t i = 0; i < q->numel(); ++i) qs.push_back(static_cast<double>(p[i]));
    });
  }
  for (double v : qs) {
    if (!(v >= 0.0 && v <= 1.0)) fail(AG_ERR_INVALID_ARGUMENT, "q ", v, " is not in [0, 1]");
  }
  // Reduce over the last dim of xs: x flattened (no dim) or dim moved last.
  const bool all = dims.size() == 0;
  const int d = all ? 0 : wrap_dim(dims[0], x->ndim(), "dim", true);
  Tensor xs = all ? reshape(x, Dims{x->numel()}) : (x->ndim() == 0 ? reshape(x, Dims{1}) : movedim(x, d, -1));
  const int last = xs->ndim() - 1;
  const Tensor order = sort_indices(xs, last, false);
  const Tensor sorted = take_along_dim(xs, order, last);
  const Split s = split_at(xs->shape(), last);
  const std::vector<int64_t> counts = non_nan_counts(xs, last);
  Dims keep = xs->shape();
  keep[last] = 1;
  std::vector<Tensor> outs;
  for (double qv : qs) {
    Tensor lo_idx = empty(x->context(), DType::I64, keep), hi_idx = empty(x->context(), DType::I64, keep);
    Tensor w = empty(x->context(), x->dtype(), keep);
    visit_floating(x->dtype(), [&](auto z) {
      using T = decltype(z);
      T* wp = w->data_as<T>();
      for (int64_t r = 0; r < s.outer; ++r) {
        const int64_t c = counts[r];
        double rank;
        if (ignore_nan) {
          rank = c > 0 ? qv * static_cast<double>(c - 1) : 0.0;
        } else {
          rank = c < s.n ? static_cast<double>(s.n - 1) : qv * static_cast<double>(s.n - 1);
        }
        double lo = std::floor(rank), hi = std::ceil(rank), weight = rank - lo;
        switch (interpolation) {  // = AG_QUANTILE_*
          case 1: hi = lo; weight = 0.0; break;                                 // lower
          case 2: lo = hi; weight = 0.0; break;                                 // higher
          case 3: weight = lo == hi ? 0.0 : 0.5; break;                         // midpoint
          case 4: lo = hi = std::nearbyint(rank); weight = 0.0; break;          // nearest
          default: break;                                                       // linear
        }
        lo_idx->data_as<int64_t>()[r] = static_cast<int64_t>(lo);
        hi_idx->data_as<int64_t>()[r] = static_cast<int64_t>(hi);
        wp[r] = static_cast<T>(weight);
      }
    });
    const Tensor below = take_along_dim(sorted, lo_idx, last), above = take_along_dim(sorted, hi_idx, last);
    Tensor y = add(below, mul(w, sub(above, below)));
    Dims shape;
    if (all || x->ndim() == 0) {
      for (int i = 0; i < x->ndim() && keepdim; ++i) shape.push_back(1);
      y = reshape(y, shape);
    } else if (keepdim) {
      y = movedim(y, -1, d);
    } else {
      shape = keep;
      shape.resize(shape.size() - 1);
      y = reshape(y, shape);
    }
    outs.push_back(y);
  }
  return q->ndim() == 0 ? outs[0] : stack(outs, 0);
}

Tensor quantile(const Tensor& x, const Tensor& q, const Dims& dims, bool keepdim, int32_t interpolation) {
  return quantile_impl(x, q, dims, keepdim, interpolation, false);
}
Tensor nanquantile(const Tensor& x, const Tensor& q, const Dims& dims, bool keepdim, int32_t interpolation) {
  return quantile_impl(x, q, dims, keepdim, interpolation, true);
}

}  // namespace ag::ops
