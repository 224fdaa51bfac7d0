// Cumulative ops along one dim (family DIM): cumsum and cumprod, and
// cumsum_reverse, the internal variant their gradients use (sums from the
// end of the dim: the backward of cumsum, and cumsum the backward of it).
#include "ops/reduce_dims.h"

namespace ag::ops {

namespace {

Tensor scan(kernels::ScanKind k, const Tensor& x, int d, bool reverse) {
  const Split s = split_at(x->shape(), d);
  const Tensor xc = contiguous_data(x);
  Tensor y = empty(x->context(), x->dtype(), x->shape());
  const int64_t row_bytes = s.n * s.inner * static_cast<int64_t>(itemsize(x->dtype()));
  if (s.n == 0) return y;
  for_row_blocks(x->context(), s, Work::Reduction, [&](int64_t first, int64_t rows) {
    kernels::scan_dim(k, x->dtype(), reverse, xc->data() + first * row_bytes, rows, s.n, s.inner,
                      y->data() + first * row_bytes);
  });
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
// dx_z = cumsum_reverse(g * y')_z with y' = cumprod(x with x_z set to 1),
// dx_k = 0 for k > z. Saves x and y.
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
    // before: 1 before the first zero of the slice; first: 1 at it (constants).
    Tensor before = full(x->context(), x->dtype(), x->shape(), 0.0);
    Tensor first = full(x->context(), x->dtype(), x->shape(), 0.0);
    const Tensor xc = contiguous_data(x);
    const Split s = split_at(x->shape(), dim);
    visit_floating(x->dtype(), [&](auto z) {
      using T = decltype(z);
      const T* v = xc->data_as<T>();
      T* b = before->data_as<T>();
      T* f = first->data_as<T>();
      for (int64_t o = 0; o < s.outer; ++o) {
        for (int64_t j = 0; j < s.inner; ++j) {
          for (int64_t k = 0; k < s.n; ++k) {
            const int64_t p = (o * s.n + k) * s.inner + j;
            if (v[p] == 0) {
              f[p] = T(1);
              break;
            }
            b[p] = T(1);
          }
        }
      }
    });
    const Tensor after = coefficients(before, [](double v) { return 1.0 - v; });
    const Tensor x_safe = add(mul(x, before), after);  // 1 from the first zero on
    const Tensor term_before = mul(before, div(cumsum_dir(mul(g[0], y), dim, true), x_safe));
    const Tensor not_first = coefficients(first, [](double v) { return 1.0 - v; });
    const Tensor y_skip = cumprod(add(mul(x, not_first), first), dim);
    out[0] = add(term_before, mul(first, cumsum_dir(mul(g[0], y_skip), dim, true)));
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

}  // namespace ag::ops
