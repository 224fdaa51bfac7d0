// Distances and similarities, composed of differentiable ops (so their
// derivatives of every order come from those): dist, cdist, pdist,
// pairwise_distance, cosine_similarity, normalize. Their p-norms are
// norm_dims', with its conventions where the norm is 0.
#include <cmath>

#include "ops/reduce_dims.h"

namespace ag::ops {

namespace {

void check_p(double p) {
  if (std::isnan(p) || p < 0) fail(AG_ERR_INVALID_ARGUMENT, "p ", p, " is not a non-negative number");
}

}  // namespace

// dist: the p-norm of a - b (broadcast) over all elements.
Tensor dist(const Tensor& a, const Tensor& b, double p) {
  check_p(p);
  return norm_dims(sub(a, b), Dims{}, false, p);
}

// cdist: the p-norm distances between the rows of x1 (..., P, M) and x2
// (..., R, M), batch dims broadcast: (..., P, R). For p = 2 with more than
// 25 rows on a side, PyTorch's default (compute_mode
// use_mm_for_euclid_dist_if_necessary) expands |u - v|^2 = |u|^2 + |v|^2 -
// 2 u.v into a matrix product: so does ag (clamped at 0, gradient 0 where the
// distance is 0); otherwise the differences directly.
Tensor cdist(const Tensor& x1, const Tensor& x2, double p) {
  check_p(p);
  check_same(*x1, *x2);
  if (x1->ndim() < 2 || x2->ndim() < 2) {
    fail(AG_ERR_SHAPE, "expects x1 and x2 of at least 2 dims, got shapes ", shape_str(x1->shape()), " and ",
         shape_str(x2->shape()));
  }
  const int64_t m1 = x1->shape()[x1->ndim() - 1], m2 = x2->shape()[x2->ndim() - 1];
  if (m1 != m2) fail(AG_ERR_SHAPE, "x1 and x2 have ", m1, " and ", m2, " columns (shapes ", shape_str(x1->shape()),
                     " and ", shape_str(x2->shape()), ")");
  const int64_t rows1 = x1->shape()[x1->ndim() - 2], rows2 = x2->shape()[x2->ndim() - 2];
  if (p == 2.0 && (rows1 > 25 || rows2 > 25) && m1 > 0) {
    const Tensor n1 = sum_dims(mul(x1, x1), Dims{-1}, true);
    const Tensor n2 = transpose(sum_dims(mul(x2, x2), Dims{-1}, true), -2, -1);
    const Tensor cross = matmul(x1, transpose(x2, -2, -1));
    const Tensor sq = sub(add(n1, n2), mul(cross, scalar_like(cross, 2.0)));
    return pow_away_from_zero(clamp(sq, 0.0, std::nan("")), 0.5);
  }
  return norm_dims(sub(unsqueeze(x1, -2), unsqueeze(x2, -3)), Dims{-1}, false, p);
}

// pdist: the p-norm distances between the rows i < j of x (N, M), in row
// order: N (N - 1) / 2 values.
Tensor pdist(const Tensor& x, double p) {
  check_p(p);
  check_floating(*x);
  if (x->ndim() != 2) fail(AG_ERR_SHAPE, "expects a 2-D input, got shape ", shape_str(x->shape()));
  const int64_t n = x->shape()[0];
  // n (n - 1) / 2 with the even factor halved first; n may be huge for an empty x.
  const int64_t pairs = n % 2 == 0 ? checked_mul_add(n / 2, n - 1, 0, "the number of pairs")
                                   : checked_mul_add(n, (n - 1) / 2, 0, "the number of pairs");
  Tensor first = empty(x->context(), DType::I64, Dims{pairs}), second = empty(x->context(), DType::I64, Dims{pairs});
  int64_t k = 0;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = i + 1; j < n; ++j, ++k) {
      first->data_as<int64_t>()[k] = i;
      second->data_as<int64_t>()[k] = j;
    }
  }
  return norm_dims(sub(index_select(x, 0, first), index_select(x, 0, second)), Dims{1}, false, p);
}

// pairwise_distance: the p-norm of x1 - x2 + eps over the last dim (any p,
// as PyTorch's, which takes negative p too).
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p, double eps, bool keepdim) {
  if (std::isnan(p)) fail(AG_ERR_INVALID_ARGUMENT, "p is NaN");  // negative p: as norm_dims
  check_finite(eps, "eps");
  const Tensor d = add(sub(x1, x2), scalar_like(x1, eps));
  return norm_dims(d, d->ndim() == 0 ? Dims{} : Dims{-1}, keepdim, p);
}

// cosine_similarity: sum over dim of (x1 / max(|x1|, eps)) (x2 / max(|x2|,
// eps)), x1 and x2 broadcast. As PyTorch 1.13, the clamp to eps is applied
// to the value only: the gradient is that of x / |x| (0 where |x| = 0).
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim, double eps) {
  check_same(*x1, *x2);
  check_floating(*x1);
  check_finite(eps, "eps");
  const Dims shape = broadcast_shapes(x1->shape(), x2->shape());
  const Tensor a = expand(x1, shape), b = expand(x2, shape);
  const int d = wrap_dim(dim, static_cast<int>(shape.size()), "dim", true);
  auto unit = [&](const Tensor& t) {
    const Tensor n = norm_dims(t, Dims{d}, true, 2.0);
    return div(t, add(n, coefficients(n, [eps](double v) { return v < eps ? eps - v : 0.0; })));
  };
  return sum_dims(mul(unit(a), unit(b)), Dims{d}, false);
}

// normalize: x / max(p-norm of x over dim, eps) (a real clamp: no gradient
// through the norm where it is below eps).
Tensor normalize(const Tensor& x, double p, int64_t dim, double eps) {
  check_floating(*x);
  check_finite(eps, "eps");
  if (std::isnan(p)) fail(AG_ERR_INVALID_ARGUMENT, "p is NaN");
  const int d = wrap_dim(dim, x->ndim(), "dim", true);
  return div(x, expand(clamp(norm_dims(x, Dims{d}, true, p), eps, std::nan("")), x->shape()));
}

}  // namespace ag::ops
