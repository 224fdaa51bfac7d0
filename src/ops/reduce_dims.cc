// Reductions over chosen dims: sum_dims, mean_dims, prod_dims,
// logsumexp_dims (family DIMS), var_dims, std_dims, norm_dims. Their
// gradients undo a dropped dim with reshape (a view). Beyond sum and prod they are composites, so their derivatives of every order come
// from the ops they are made of.
#include <cmath>
#include <limits>

#include "ops/reduce_dims.h"

namespace ag::ops {

ReducedShape reduced_shape(const TensorImpl& x, const Dims& dims) {
  ReducedShape r;
  const int nd = x.ndim();
  bool reduce[kMaxDims] = {};
  for (int i = 0; i < dims.size(); ++i) {
    const int d = wrap_dim(dims[i], nd, "dim", true);
    if (reduce[d]) fail(AG_ERR_INVALID_ARGUMENT, "dim ", dims[i], " appears more than once in dims");
    reduce[d] = true;
  }
  r.count = 1;
  for (int d = 0; d < nd; ++d) {
    const bool red = dims.size() == 0 || reduce[d];
    r.keep.push_back(red ? 1 : x.shape()[d]);
    if (red) {
      // Saturates: only an empty x can overflow here, and a 0 later still gives 0.
      if (__builtin_mul_overflow(r.count, x.shape()[d], &r.count)) r.count = INT64_MAX;
    } else {
      r.out.push_back(x.shape()[d]);
    }
  }
  // An empty x may have kept sizes whose product overflows (shape (2^32,2^32,0)
  // reduced over dim 2): the result would be too large. 8: the largest itemsize.
  if (x.numel() == 0) checked_shape(r.keep.data(), r.keep.size(), sizeof(int64_t));
  return r;
}

Tensor drop_kept_dims(const Tensor& y, const ReducedShape& r, bool keepdim) {
  if (keepdim || r.out == y->shape()) return y;
  return make_view(*y, r.out, contiguous_strides(r.out), y->offset());
}

bool sum_leading_dims(const TensorImpl& x, const Dims& keep, TensorImpl& y) {
  if (x.numel() <= grain(Work::Reduction) || !x.is_contiguous()) return false;
  int lead = 0;  // the reduced leading dims; the rest must be kept whole
  while (lead < x.ndim() && keep[lead] == 1) ++lead;
  for (int d = lead; d < x.ndim(); ++d) {
    if (keep[d] != x.shape()[d]) return false;
  }
  const int64_t cols = y.numel(), n = cols > 0 ? x.numel() / cols : 0;
  if (cols < 2 || n < 2) return false;
  const int64_t item = static_cast<int64_t>(itemsize(x.dtype()));
  const Dims strides{cols, 1};
  // Blocks of at least 64 outputs: whole vectors of the row-wise adds.
  const int64_t per_chunk = std::max<int64_t>(64, units_per_chunk(Work::Reduction, n));
  for_ranges(x.context(), cols, per_chunk, [&](int64_t b, int64_t e) {
    kernels::sum_to(x.dtype(), Dims{n, e - b}, kernels::View{x.data() + b * item, &strides}, Dims{1, e - b},
                    y.data() + b * item);
  });
  return true;
}

namespace {

// Sum of x over the reduced dims into y, of the keepdim shape `keep`.
// Large inputs whose dim 0 is kept run in parallel blocks of dim-0 rows:
// each output element sums its own elements in the same order either way,
// so the bits do not depend on the thread count.
// Large inputs reduced over leading dims only: sum_leading_dims.
void sum_keep_into(const Tensor& x, const Dims& keep, TensorImpl& y) {
  const int64_t rows = x->ndim() > 0 ? x->shape()[0] : 1;
  if (keep[0] != rows && sum_leading_dims(*x, keep, y)) return;
  if (x->numel() <= grain(Work::Reduction) || rows < 2 || keep[0] != rows) {
    kernels::sum_to(x->dtype(), x->shape(), view_of(*x), keep, y.data());
    return;
  }
  const int64_t item = static_cast<int64_t>(itemsize(x->dtype()));
  const int64_t in_row = x->numel() / rows, out_row = y.numel() / rows;
  const int64_t rows_per_chunk = units_per_chunk(Work::Reduction, in_row);
  for_ranges(x->context(), rows, rows_per_chunk, [&](int64_t b, int64_t e) {
    Dims shape = x->shape(), sub_keep = keep;
    shape[0] = sub_keep[0] = e - b;
    kernels::sum_to(x->dtype(), shape, kernels::View{x->data() + b * x->strides()[0] * item, &x->strides()},
                    sub_keep, y.data() + b * out_row * item);
  });
}

// The same, each sum divided by `divisor` in double (one rounding) when it
// is not 1.
void sum_keep_into(const Tensor& x, const Dims& keep, double divisor, TensorImpl& y) {
  sum_keep_into(x, keep, y);
  if (divisor == 1.0) return;
  // Divide in double: one rounding, and 0/0 = NaN over an empty dim.
  visit_floating(y.dtype(), [&](auto z) {
    using T = decltype(z);
    T* p = y.data_as<T>();
    for (int64_t i = 0; i < y.numel(); ++i) p[i] = static_cast<T>(static_cast<double>(p[i]) / divisor);
  });
}

// Sum of x over the reduced dims (divided by `divisor`), in the keepdim shape.
Tensor sum_keep(const Tensor& x, const ReducedShape& r, double divisor = 1.0) {
  Tensor y = empty(x->context(), x->dtype(), r.keep);
  sum_keep_into(x, r.keep, divisor, *y);
  trace(*y, [&] { return [x, keep = r.keep, divisor, y] { sum_keep_into(x, keep, divisor, *y); }; });
  return y;
}

// Keeps x's shape and the keepdim shape, to route a gradient back.
struct DimsNode : Node {
  DimsNode(const Tensor& x, const ReducedShape& r) : shape(x->shape()), keep(r.keep), count(r.count) {}
  Dims shape, keep;
  int64_t count;
};

}  // namespace

// sum_dims: y = sum of x over dims; dx = expand(g with the dims kept, x.shape).
namespace {
struct SumDimsBackward final : DimsNode {
  using DimsNode::DimsNode;
  const char* name() const override { return "SumDimsBackward"; }
  void apply(TensorList& g, TensorList& out) override { out[0] = expand_to_shape(reshape(g[0], keep), shape); }
};
}  // namespace
Tensor sum_dims(const Tensor& x, const Dims& dims, bool keepdim) {
  check_floating(*x);
  const ReducedShape r = reduced_shape(*x, dims);
  Tensor y = drop_kept_dims(sum_keep(x, r), r, keepdim);
  if (should_record({x.get()})) record<SumDimsBackward>({x.get()}, y, x, r);
  return y;
}

// mean_dims: y = sum_dims(x) / count; dx = expand(g / count with the dims kept, x.shape).
namespace {
struct MeanDimsBackward final : DimsNode {
  using DimsNode::DimsNode;
  const char* name() const override { return "MeanDimsBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    out[0] = expand_to_shape(reshape(div(g[0], scalar_like(g[0], static_cast<double>(count))), keep), shape);
  }
};
}  // namespace
Tensor mean_dims(const Tensor& x, const Dims& dims, bool keepdim) {
  check_floating(*x);
  const ReducedShape r = reduced_shape(*x, dims);
  Tensor s = sum_keep(x, r, static_cast<double>(r.count));
  Tensor y = drop_kept_dims(s, r, keepdim);
  if (should_record({x.get()})) record<MeanDimsBackward>({x.get()}, y, x, r);
  return y;
}

Tensor shared_extreme(const Tensor& x, const Tensor& m, const Dims& dims) {
  const Tensor me = expand(m, x->shape());
  const Tensor xc = contiguous_data(x), mc = contiguous_data(me);
  Tensor miss = empty(x->context(), DType::Bool, x->shape());
  Tensor hit = empty(x->context(), x->dtype(), x->shape());
  visit_floating(x->dtype(), [&](auto z) {
    using T = decltype(z);
    const T *a = xc->data_as<T>(), *b = mc->data_as<T>();
    T* h = hit->data_as<T>();
    bool* no = miss->data_as<bool>();
    for (int64_t i = 0; i < x->numel(); ++i) {
      const bool same = a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i]));
      h[i] = same ? T(1) : T(0);
      no[i] = !same;
    }
  });
  // At least 1, so that the unselected quotients (and their gradients) stay finite.
  const Tensor hits = coefficients(expand(sum_dims(hit, dims, true), x->shape()), [](double c) { return c > 0 ? c : 1.0; });
  return add(m, sum_dims(zero_where(miss, div(sub(x, me), hits)), dims, true));
}

namespace {

// expand(g with the reduced dims kept, shape).
Tensor expand_back(const Tensor& g, const Dims& keep, const Dims& shape) {
  return expand_to_shape(reshape(g, keep), shape);
}

// Product over the dims of r, in the keepdim shape (one dim at a time).
Tensor prod_keep(const Tensor& x, const ReducedShape& r) {
  Tensor y = x;
  for (int d = x->ndim() - 1; d >= 0; --d) {
    if (r.keep[d] == 1 && x->shape()[d] != 1) y = reduce_along(kernels::DimReduceKind::Prod, y, d, nullptr);
  }
  return y.get() == x.get() ? grad_clone(x) : y;
}

}  // namespace

// prod_dims: y = product over dims. Gradient (PyTorch's rule for zeros), per
// reduced slice with z zeros, using x2 = x with its zeros replaced by 1 and
// P = prod(x2): z = 0: g * P / x; z = 1: g * P at the zero, and
// g * x_zero * P / x2 elsewhere (0 in value, but the right derivative in
// x_zero); z = 2: g * x_other_zero * P at each zero (0 in value, derivative P
// in the other zero), 0 elsewhere; z >= 3: 0. Second derivatives are exact.
namespace {
struct ProdDimsBackward final : SavingNode<1> {
  ProdDimsBackward(const Tensor& x, const Dims& d, const ReducedShape& r) : shape(x->shape()), dims(d), keep(r.keep) {}
  const char* name() const override { return "ProdDimsBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    const Tensor x = saved[0].unpack(*this);
    const Tensor ge = expand_back(g[0], keep, shape);
    const Tensor zero = coefficients(x, [](double v) { return v == 0.0 ? 1.0 : 0.0; });
    const Tensor nonzero = coefficients(x, [](double v) { return v == 0.0 ? 0.0 : 1.0; });
    // Zeros per slice, expanded to x's shape (constants).
    const Tensor zeros_in_slice = expand(sum_dims(zero, dims, true), shape);
    const Tensor none = coefficients(zeros_in_slice, [](double c) { return c == 0.0 ? 1.0 : 0.0; });
    const Tensor one = coefficients(zeros_in_slice, [](double c) { return c == 1.0 ? 1.0 : 0.0; });
    const Tensor two = coefficients(zeros_in_slice, [](double c) { return c == 2.0 ? 1.0 : 0.0; });
    const Tensor x2 = add(mul(x, nonzero), zero);
    const Tensor p = expand(prod_dims(x2, dims, true), shape);
    const Tensor p_over_x = div(p, x2);
    if (!has_zero(x)) {  // the common case
      out[0] = mul(ge, p_over_x);
      return;
    }
    const Tensor x_zero = expand(sum_dims(mul(x, zero), dims, true), shape);
    const Tensor at_zero = mul(one, zero), beside_zero = mul(one, nonzero);
    const Tensor at_one_of_two = mul(two, zero);
    // x_zero - x at one of two zeros: the other zero (x_zero sums both).
    const Tensor local = add(add(add(mul(at_zero, p), mul(none, p_over_x)), mul(beside_zero, mul(x_zero, p_over_x))),
                             mul(at_one_of_two, mul(sub(x_zero, x), p)));
    out[0] = mul(ge, local);
  }
  Dims shape, dims, keep;
};
}  // namespace
Tensor prod_dims(const Tensor& x, const Dims& dims, bool keepdim) {
  check_floating(*x);
  const ReducedShape r = reduced_shape(*x, dims);
  Tensor y = drop_kept_dims(prod_keep(x, r), r, keepdim);
  if (should_record({x.get()})) record<ProdDimsBackward>({x.get()}, y, x, dims, r)->saved[0].save(x, false);
  return y;
}

// logsumexp_dims: m + log(sum(exp(x - m))) with m the (constant) max over
// the dims, 0 where it is infinite: an all -inf slice gives -inf, a +inf
// gives +inf, an empty slice -inf.
Tensor logsumexp_dims(const Tensor& x, const Dims& dims, bool keepdim) {
  check_floating(*x);
  const ReducedShape r = reduced_shape(*x, dims);
  Tensor m = r.count == 0 ? full(x->context(), x->dtype(), r.keep, 0.0)
                          : coefficients(extreme_keep(true, x, dims), [](double v) { return std::isfinite(v) ? v : 0.0; });
  const Tensor y = add(log(sum_dims(exp(sub(x, m)), dims, true)), m);
  return keepdim ? y : reshape(y, r.out);
}

// var_dims: sum((x - mean)^2) / max(0, N - correction) over the dims (N
// elements per slice); inf or NaN where the divisor is 0. The gradient is
// 2 (x - mean) / (N - correction) also for correction > N, as PyTorch's.
Tensor var_dims(const Tensor& x, const Dims& dims, bool keepdim, double correction) {
  check_floating(*x);
  if (std::isnan(correction)) fail(AG_ERR_INVALID_ARGUMENT, "correction is NaN");
  const ReducedShape r = reduced_shape(*x, dims);
  const Tensor d = sub(x, mean_dims(x, dims, true));
  const double divisor = static_cast<double>(r.count) - correction;
  const Tensor s = sum_dims(mul(d, d), dims, keepdim);
  if (divisor >= 0.0) return div(s, scalar_like(x, divisor));
  // The value s / 0 (inf, NaN for s = 0) as a constant added to s / divisor - that.
  const Tensor rest = coefficients(s, [divisor](double v) {
    return (v > 0.0 ? std::numeric_limits<double>::infinity() : std::nan("")) - v / divisor;
  });
  return add(div(s, scalar_like(x, divisor)), rest);
}

// std_dims: sqrt(var_dims); gradient 0 where the variance is 0 (as PyTorch).
Tensor std_dims(const Tensor& x, const Dims& dims, bool keepdim, double correction) {
  return pow_away_from_zero(var_dims(x, dims, keepdim, correction), 0.5);
}

// norm_dims: the vector p-norm over the dims: p = 2 sqrt(sum x^2) (gradient
// x / norm, 0 where the norm is 0), p = 1 sum |x| (gradient sign x), p = inf
// max |x| and p = -inf min |x| (gradient sign x shared evenly among the
// elements that attain it), p = 0 the count of nonzeros (gradient 0), other
// p (sum |x|^p)^(1/p).
Tensor norm_dims(const Tensor& x, const Dims& dims, bool keepdim, double p) {
  check_floating(*x);
  if (std::isnan(p)) fail(AG_ERR_INVALID_ARGUMENT, "p is NaN");
  const ReducedShape r = reduced_shape(*x, dims);
  Tensor y;
  if (p == 2.0) {
    y = pow_away_from_zero(sum_dims(mul(x, x), dims, true), 0.5);
  } else if (p == 1.0) {
    y = sum_dims(abs_of(x), dims, true);
  } else if (std::isinf(p)) {
    const Tensor a = abs_of(x);
    y = shared_extreme(a, extreme_keep(p > 0, a, dims), dims);
  } else if (p == 0.0) {
    const Tensor nonzero = coefficients(x, [](double v) { return v != 0.0 ? 1.0 : 0.0; });
    y = add(sum_dims(nonzero, dims, true), sum_dims(mul(x, zeros_like(x)), dims, true));
  } else if (p > 0.0) {
    // 0 < p < 1: |x|^p has an infinite slope at 0, taken as 0 (PyTorch's
    // mask); the outer root likewise where the norm is 0.
    const Tensor a = p < 1.0 ? pow_away_from_zero(abs_of(x), p) : pow_scalar(abs_of(x), p);
    y = pow_away_from_zero(sum_dims(a, dims, true), 1.0 / p);
  } else {
    y = pow_scalar(sum_dims(pow_scalar(abs_of(x), p), dims, true), 1.0 / p);
  }
  return keepdim ? y : reshape(y, r.out);
}

// amax / amin: the largest (smallest) element over the dims, NaN if the
// slice has one; the gradient is shared evenly among the elements equal to it.
Tensor amax(const Tensor& x, const Dims& dims, bool keepdim) {
  check_floating(*x);
  const ReducedShape r = reduced_shape(*x, dims);
  const Tensor y = shared_extreme(x, extreme_keep(true, x, dims), dims);
  return keepdim ? y : reshape(y, r.out);
}

Tensor amin(const Tensor& x, const Dims& dims, bool keepdim) {
  check_floating(*x);
  const ReducedShape r = reduced_shape(*x, dims);
  const Tensor y = shared_extreme(x, extreme_keep(false, x, dims), dims);
  return keepdim ? y : reshape(y, r.out);
}

// nansum: the sum with NaNs read as 0 (gradient 0 there); nanmean: nansum
// over the count of non-NaN elements (NaN if there is none).
Tensor nansum(const Tensor& x, const Dims& dims, bool keepdim) {
  check_floating(*x);
  return sum_dims(zero_where(ne(x, x), x), dims, keepdim);
}

Tensor nanmean(const Tensor& x, const Dims& dims, bool keepdim) {
  check_floating(*x);
  const Tensor count = sum_dims(coefficients(x, [](double v) { return std::isnan(v) ? 0.0 : 1.0; }), dims, keepdim);
  return div(nansum(x, dims, keepdim), count);
}

// var_mean / std_mean: (var_dims, mean_dims) and (std_dims, mean_dims).
std::pair<Tensor, Tensor> var_mean(const Tensor& x, const Dims& dims, bool keepdim, double correction) {
  return {var_dims(x, dims, keepdim, correction), mean_dims(x, dims, keepdim)};
}

std::pair<Tensor, Tensor> std_mean(const Tensor& x, const Dims& dims, bool keepdim, double correction) {
  return {std_dims(x, dims, keepdim, correction), mean_dims(x, dims, keepdim)};
}

}  // namespace ag::ops
