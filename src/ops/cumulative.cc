// Cumulative ops along one dim (family DIM): cumsum, cumprod and
// logcumsumexp, with their variants from the end of the dim that the
// gradients use; cummax and cummin (family SCAN_INDICES).
#include <cmath>
#include <limits>

#include "ops/reduce_dims.h"

namespace ag::ops {

namespace {

Tensor scan(kernels::ScanKind k, const Tensor& x, int d, bool reverse) {
  const Split s = split_at(x->shape(), d);
  const Tensor xc = contiguous_data(x);
  Tensor y = empty(x->context(), x->dtype(), x->shape());
  if (y->numel() == 0) return y;  // the sizes of an empty x may overflow row_bytes
  const int64_t row_bytes = s.n * s.inner * static_cast<int64_t>(itemsize(x->dtype()));
  for_row_blocks(x->context(), s, [&](int64_t first, int64_t rows) {
    kernels::scan_dim(k, x->dtype(), reverse, xc->data() + first * row_bytes, rows, s.n, s.inner,
                      y->data() + first * row_bytes);
  }, Work::Reduction);
  return y;
}

struct CumsumBackward final : Node {
  CumsumBackward(int d, bool r) : dim(d), reverse(r) {}
  const char* name() const override { return reverse ? "CumsumReverseBackward" : "CumsumBackward"; }
  void apply(TensorList& g, TensorList& out) override { out[0] = cumsum_dir(g[0], dim, !reverse); }
  int dim;
  bool reverse;
};

}  // namespace

// cumsum_dir: y_k = sum of x_i for i <= k (i >= k if reverse);
// dx = cumsum_dir(g, !reverse).
Tensor cumsum_dir(const Tensor& x, int64_t dim, bool reverse) {
  check_floating(*x);
  const int d = wrap_dim(dim, x->ndim(), "dim", true);
  Tensor y = scan(kernels::ScanKind::Sum, x, d, reverse);
  if (should_record({x.get()})) record<CumsumBackward>({x.get()}, y, d, reverse);
  return y;
}

Tensor cumsum(const Tensor& x, int64_t dim) { return cumsum_dir(x, dim, false); }

// cumprod: y_k = product of x_i for i <= k. Without zeros
// dx = cumsum_reverse(g * y) / x. With z the first zero of a slice:
// dx_k = cumsum_reverse(g * y)_k / x_k for k < z (y is 0 from z on),
// dx_z = c_z with c = cumsum_reverse(g * y'), y' = cumprod(x with x_z set to 1),
// dx_k = x_z * s_k for k > z: 0 in value, and s_k (the sum over j >= k of
// g_j times the product of x_i, i <= j, i != k, z) its derivative in x_z:
// s_k = c_k / x_k where x_k != 0, cumsum_reverse(g * y'')_k at the second
// zero (y'' with both zeros set to 1). Second derivatives are exact for any
// number of zeros. Saves x and y.
namespace {
struct CumprodBackward final : SavingNode<2> {
  explicit CumprodBackward(int d) : dim(d) {}
  const char* name() const override { return "CumprodBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    const Tensor x = saved[0].unpack(*this), y = saved[1].unpack(*this);
    if (!has_zero(x)) {
      out[0] = div(cumsum_dir(mul(g[0], y), dim, true), x);
      return;
    }
    // Constants: before (1 before the first zero of the slice), first (1 at
    // it), second (1 at the second zero).
    Tensor before = full_for_writes(x->context(), x->dtype(), x->shape(), 0.0);
    Tensor first = full_for_writes(x->context(), x->dtype(), x->shape(), 0.0);
    Tensor second = full_for_writes(x->context(), x->dtype(), x->shape(), 0.0);
    bool has_second = false;
    const Tensor xc = contiguous_data(x);
    const Split s = split_at(x->shape(), dim);
    visit_floating(x->dtype(), [&](auto z) {
      using T = decltype(z);
      const T* v = xc->data_as<T>();
      T* b = before->data_as<T>();
      T* f = first->data_as<T>();
      T* f2 = second->data_as<T>();
      for (int64_t o = 0; o < s.outer; ++o) {
        for (int64_t j = 0; j < s.inner; ++j) {
          int zeros = 0;
          for (int64_t k = 0; k < s.n && zeros < 2; ++k) {
            const int64_t p = (o * s.n + k) * s.inner + j;
            if (v[p] == 0) {
              (zeros == 0 ? f : f2)[p] = T(1);
              has_second |= zeros == 1;
              ++zeros;
            } else if (zeros == 0) {
              b[p] = T(1);
            }
          }
        }
      }
    });
    auto one_minus = [](const Tensor& m) { return coefficients(m, [](double v) { return 1.0 - v; }); };
    const Tensor after = one_minus(before);
    const Tensor x_safe = add(mul(x, before), after);  // 1 from the first zero on
    const Tensor term_before = mul(before, div(cumsum_dir(mul(g[0], y), dim, true), x_safe));
    const Tensor not_first = one_minus(first);
    const Tensor c = cumsum_dir(mul(g[0], cumprod(add(mul(x, not_first), first), dim)), dim, true);
    // past: 1 past the first zero where x != 0 (constant).
    const Tensor past = coefficients(add(sub(after, first), coefficients(x, [](double v) { return v == 0.0 ? -1.0 : 0.0; })),
                                     [](double v) { return v > 0.0 ? 1.0 : 0.0; });
    Tensor slope = mul(past, div(c, add(mul(x, past), one_minus(past))));
    if (has_second) {
      const Tensor x_skip2 = add(mul(x, one_minus(add(first, second))), add(first, second));
      slope = add(slope, mul(second, cumsum_dir(mul(g[0], cumprod(x_skip2, dim)), dim, true)));
    }
    const Tensor x_first = expand(sum_dims(mul(x, first), Dims{dim}, true), x->shape());
    out[0] = add(add(term_before, mul(first, c)), mul(x_first, slope));
  }
  int dim;
};
}  // namespace
Tensor cumprod(const Tensor& x, int64_t dim) {
  check_floating(*x);
  const int d = wrap_dim(dim, x->ndim(), "dim", true);
  Tensor y = scan(kernels::ScanKind::Prod, x, d, false);
  if (should_record({x.get()})) {
    auto n = record<CumprodBackward>({x.get()}, y, d);
    n->saved[0].save(x, false);
    n->saved[1].save(y, true);
  }
  return y;
}

// logcumsumexp_dir: y_k = log(sum of exp(x_i) for i <= k) (i >= k if
// reverse), accumulated in double as y_k = logaddexp(y_(k-1), x_k).
// dx_i = sum over k >= i of g_k exp(x_i - y_k), PyTorch's stable form: with
// the positive and negative parts of g in log space (lowest where absent),
// dx = exp(logcumsumexp_dir(log g+ - y, !reverse) + x) - the same for g-.
namespace {
Tensor logcumsumexp_forward(const Tensor& x, int d, bool reverse) {
  const Split s = split_at(x->shape(), d);
  const Tensor xc = contiguous_data(x);
  Tensor y = empty(x->context(), x->dtype(), x->shape());
  if (y->numel() == 0) return y;  // no rows, however many the sizes of an empty x count
  visit_floating(x->dtype(), [&](auto z) {
    using T = decltype(z);
    const T* in = xc->data_as<T>();
    T* out = y->data_as<T>();
    for_row_blocks(x->context(), s, [&](int64_t first, int64_t rows) {
      for (int64_t o = first; o < first + rows; ++o) {
        for (int64_t j = 0; j < s.inner; ++j) {
          double acc = -std::numeric_limits<double>::infinity();
          for (int64_t t = 0; t < s.n; ++t) {
            const int64_t k = reverse ? s.n - 1 - t : t;
            const int64_t p = (o * s.n + k) * s.inner + j;
            const double v = static_cast<double>(in[p]);
            const double hi = std::max(acc, v), lo = std::min(acc, v);
            if (std::isnan(v) || std::isnan(acc)) {
              acc = std::nan("");
            } else if (!std::isinf(hi) || hi < 0 || lo == hi) {
              acc = hi == -std::numeric_limits<double>::infinity() ? hi : hi + std::log1p(std::exp(lo - hi));
            } else {
              acc = hi;  // +inf
            }
            out[p] = static_cast<T>(acc);
          }
        }
      }
    }, Work::Transcendental);
  });
  return y;
}

struct LogcumsumexpBackward final : SavingNode<2> {
  LogcumsumexpBackward(int d, bool r) : dim(d), reverse(r) {}
  const char* name() const override { return "LogcumsumexpBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    const Tensor x = saved[0].unpack(*this), y = saved[1].unpack(*this);
    const Tensor lowest = scalar_like(g[0], -std::numeric_limits<double>::max());
    const Tensor zero = scalar_like(g[0], 0.0), one = scalar_like(g[0], 1.0);
    auto part = [&](const Tensor& mask, const Tensor& magnitude) {
      const Tensor log_g = where(mask, log(where(mask, magnitude, one)), lowest);
      return exp(add(logcumsumexp_dir(sub(log_g, y), dim, !reverse), x));
    };
    out[0] = sub(part(gt(g[0], zero), g[0]), part(lt(g[0], zero), neg(g[0])));
  }
  int dim;
  bool reverse;
};
}  // namespace

Tensor logcumsumexp_dir(const Tensor& x, int64_t dim, bool reverse) {
  check_floating(*x);
  const int d = wrap_dim(dim, x->ndim(), "dim", true);
  Tensor y = logcumsumexp_forward(x, d, reverse);
  if (should_record({x.get()})) {
    auto n = record<LogcumsumexpBackward>({x.get()}, y, d, reverse);
    n->saved[0].save(x, false);
    n->saved[1].save(y, true);
  }
  return y;
}

Tensor logcumsumexp(const Tensor& x, int64_t dim) { return logcumsumexp_dir(x, dim, false); }

// cummax / cummin: the running max (min) along dim and the index where it
// was attained: the last one among ties, and the last NaN once one was seen
// (NaN propagates), as PyTorch's. The values are x taken at the indices, so
// the gradient is g scattered (summed) to them.
namespace {
std::pair<Tensor, Tensor> running_extreme(const Tensor& x, int64_t dim, bool max) {
  check_floating(*x);
  const int d = wrap_dim(dim, x->ndim(), "dim", true);
  const Split s = split_at(x->shape(), d);
  const Tensor xc = contiguous_data(x);
  Tensor idx = empty(x->context(), DType::I64, x->shape());
  int64_t* out = idx->data_as<int64_t>();
  // An empty x has no slices to visit, but outer or inner may be huge.
  if (x->numel() > 0) visit_floating(x->dtype(), [&](auto z) {
    using T = decltype(z);
    const T* v = xc->data_as<T>();
    for (int64_t o = 0; o < s.outer; ++o) {
      for (int64_t j = 0; j < s.inner; ++j) {
        int64_t best = 0;
        for (int64_t k = 0; k < s.n; ++k) {
          const int64_t p = (o * s.n + k) * s.inner + j;
          const T cur = v[(o * s.n + best) * s.inner + j];
          if (std::isnan(v[p]) || (!std::isnan(cur) && (max ? v[p] >= cur : v[p] <= cur))) best = k;
          out[p] = best;
        }
      }
    }
  });
  if (x->ndim() == 0) return {reshape(take_along_dim(reshape(x, Dims{1}), reshape(idx, Dims{1}), 0), Dims{}), idx};
  return {take_along_dim(x, idx, d), idx};
}
}  // namespace

std::pair<Tensor, Tensor> cummax(const Tensor& x, int64_t dim) { return running_extreme(x, dim, true); }
std::pair<Tensor, Tensor> cummin(const Tensor& x, int64_t dim) { return running_extreme(x, dim, false); }

}  // namespace ag::ops
