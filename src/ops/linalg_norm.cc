// Matrix norms, linalg.norm's dispatch, pinv and cond: composed of
// differentiable ops (svdvals, sums, vector norms) except pinv, which has
// its own backward node (PyTorch's formula in the pseudo-inverse alone).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/linalg_decomp.h"
#include "ops/linalg_common.h"
#include "ops/ops.h"

namespace ag::ops {

using namespace linalg;

namespace {

bool is_norm_code(double ord) { return ord == kNormFro || ord == kNormNuc; }

// The two dims of a matrix norm, wrapped and distinct ({} gives (-2, -1)).
std::pair<int, int> matrix_dims(const Tensor& x, const Dims& dims) {
  if (dims.size() != 0 && dims.size() != 2) {
    fail(AG_ERR_INVALID_ARGUMENT, "a matrix norm takes 2 dims, got ", dims.size());
  }
  if (x->ndim() < 2) fail(AG_ERR_SHAPE, "a matrix norm needs at least 2 dims, got shape ", shape_str(x->shape()));
  const int d0 = wrap_dim(dims.size() ? dims[0] : -2, x->ndim()), d1 = wrap_dim(dims.size() ? dims[1] : -1, x->ndim());
  if (d0 == d1) fail(AG_ERR_INVALID_ARGUMENT, "the dims of a matrix norm must differ, got ", d0, " twice");
  return {d0, d1};
}

// The singular values of x over dims (d0, d1), as a tensor of the other dims
// followed by min(m, n).
Tensor singular_values_over(const Tensor& x, int d0, int d1) {
  Dims order;
  for (int i = 0; i < x->ndim(); ++i) {
    if (i != d0 && i != d1) order.push_back(i);
  }
  order.push_back(d0);
  order.push_back(d1);
  return std::get<1>(svd(permute(x, order), false));
}

// y reduced over (d0, d1) without keepdim: with keepdim, both dims back as 1.
Tensor keep_dims(const Tensor& y, int d0, int d1, bool keepdim) {
  if (!keepdim) return y;
  return unsqueeze(unsqueeze(y, std::min(d0, d1)), std::max(d0, d1));
}

}  // namespace

// matrix_norm: 'fro' sqrt(sum x^2); 'nuc' the sum of the singular values;
// 2 / -2 the largest / smallest singular value; 1 / -1 the max / min over
// columns of the column sums of |x|; inf / -inf the same over rows.
Tensor matrix_norm(const Tensor& x, const Dims& dims, bool keepdim, double ord) {
  check_floating(*x);
  const auto [d0, d1] = matrix_dims(x, dims);
  const bool inf = std::isinf(ord);
  if (ord == kNormFro) return norm_dims(x, Dims{d0, d1}, keepdim, 2.0);
  if (ord == 1.0 || ord == -1.0 || inf) {
    const int sum_dim = inf ? d1 : d0, ext_dim = inf ? d0 : d1;
    const Tensor sums = sum_dims(abs(x), Dims{sum_dim}, true);
    const Tensor y = norm_dims(sums, Dims{ext_dim}, true, ord > 0 ? HUGE_VAL : -HUGE_VAL);
    return keepdim ? y : squeeze(y, Dims{d0, d1});
  }
  if (ord == 2.0 || ord == -2.0 || ord == kNormNuc) {
    const Tensor s = singular_values_over(x, d0, d1);
    const Tensor y = ord == kNormNuc ? sum_dims(s, Dims{-1}, false) : norm_dims(s, Dims{-1}, false, ord * HUGE_VAL);
    return keep_dims(y, d0, d1, keepdim);
  }
  fail(AG_ERR_INVALID_ARGUMENT, "ord ", ord, " is not a matrix norm (AG_NORM_FRO, AG_NORM_NUC, 1, -1, 2, -2, inf, -inf)");
}

// linalg_norm: torch.linalg.norm's dispatch. One dim: the vector norm (ord
// NaN: 2); two dims: the matrix norm (ord NaN: 'fro'); no dims: with ord NaN
// the 2-norm of all elements, else x must have 1 or 2 dims.
Tensor linalg_norm(const Tensor& x, const Dims& dims, bool keepdim, double ord) {
  check_floating(*x);
  const bool none = std::isnan(ord);
  auto vector = [&](const Dims& d) {
    if (is_norm_code(ord)) fail(AG_ERR_INVALID_ARGUMENT, "AG_NORM_FRO and AG_NORM_NUC need 2 dims (a matrix norm)");
    return norm_dims(x, d, keepdim, none ? 2.0 : ord);
  };
  if (dims.size() == 1) return vector(dims);
  if (dims.size() == 2) return matrix_norm(x, dims, keepdim, none ? kNormFro : ord);
  if (dims.size() != 0) fail(AG_ERR_INVALID_ARGUMENT, "linalg_norm takes 0, 1 or 2 dims, got ", dims.size());
  if (none) return norm_dims(x, Dims{}, keepdim, 2.0);
  if (x->ndim() == 1) return vector(Dims{0});
  if (x->ndim() == 2) return matrix_norm(x, Dims{0, 1}, keepdim, ord);
  fail(AG_ERR_SHAPE, "with ord given and no dims, x must have 1 or 2 dims, got shape ", shape_str(x->shape()));
}

// ---- pinv ----
// Y = A^+; gradient (PyTorch's pinv_backward, for A of constant rank):
// m <= n: K = g^T Y, gA = -(Y K)^T + K Y^T - A Y K Y^T + Y^T Y (g^T - K A);
// m > n:  K = Y g^T, gA = -(K Y)^T + (g^T - A K) Y Y^T + Y^T K - Y^T K Y A.
namespace {
struct PinvBackward final : SavingNode<2> {
  const char* name() const override { return "PinvBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    const Tensor a = saved[0].unpack(*this), y = saved[1].unpack(*this);
    const Tensor gh = mT(g[0]), yh = mT(y);
    const int64_t m = a->shape()[a->ndim() - 2], n = a->shape()[a->ndim() - 1];
    if (m <= n) {
      const Tensor k = matmul(gh, y), kyh = matmul(k, yh);
      out[0] = add(sub(sub(kyh, mT(matmul(y, k))), matmul(matmul(a, y), kyh)),
                   matmul(matmul(yh, y), sub(gh, matmul(k, a))));
    } else {
      const Tensor k = matmul(y, gh), yhk = matmul(yh, k);
      out[0] = sub(add(sub(matmul(matmul(sub(gh, matmul(a, k)), y), yh), mT(matmul(k, y))), yhk),
                   matmul(matmul(yhk, y), a));
    }
  }
};
}  // namespace

// pinv: singular values (hermitian: |eigenvalues|) above max(atol, rtol *
// the largest) inverted, the others dropped. atol NaN: 0; rtol NaN: eps *
// max(m, n) when atol is NaN too, else 0 (PyTorch's defaults).
Tensor pinv(const Tensor& a, double atol, double rtol, bool hermitian) {
  check_matrix(a, "A");
  if (hermitian) check_square(a, "A (hermitian)");
  const int64_t m = a->shape()[a->ndim() - 2], n = a->shape()[a->ndim() - 1];
  if (std::isnan(rtol)) {
    const double eps = a->dtype() == DType::F32 ? 1.1920928955078125e-07 : 2.220446049250313e-16;
    rtol = std::isnan(atol) ? eps * static_cast<double>(std::max(m, n)) : 0.0;
  }
  if (std::isnan(atol)) atol = 0.0;
  Tensor y;
  if (std::min(m, n) == 0) {
    Dims ys = a->shape();
    std::swap(ys[ys.size() - 1], ys[ys.size() - 2]);
    y = full(a->context(), a->dtype(), ys, 0.0);
  } else {
    GradModeGuard no_graph(false);
    Tensor left, vals, right;  // A = left diag(vals) right
    if (hermitian) {
      auto [l, v] = eigh(a, false);
      left = v, vals = l, right = mT(v);
    } else {
      std::tie(left, vals, right) = svd(a, false);
    }
    const Tensor mag = abs(vals);
    const Tensor largest = norm_dims(mag, Dims{-1}, true, HUGE_VAL);
    const Tensor tol = maximum(mul(largest, scalar_like(mag, rtol)), scalar_like(mag, atol));
    const Tensor keep = gt(mag, tol);
    const Tensor safe = where(keep, vals, scalar_like(vals, 1.0));
    const Tensor inv_vals = where(keep, reciprocal(safe), scalar_like(vals, 0.0));
    y = matmul(mul(mT(right), unsqueeze(inv_vals, -2)), mT(left));
  }
  if (should_record({a.get()})) {
    auto node = record<PinvBackward>({a.get()}, y);
    node->saved[0].save(a, false);
    node->saved[1].save(y, true);
  }
  return y;
}

// cond, as torch.linalg.cond: p NaN or 2 the ratio of the largest to the
// smallest singular value, -2 its inverse; 'nuc' sum(S) sum(1 / S) (the
// singular values again, so a singular A gives inf or nan as the sums do);
// 'fro', 1, -1, inf, -inf matrix_norm(A, p) matrix_norm(A^-1, p) for
// square A, and inf for a matrix whose LU factorization has an exactly
// zero pivot (its inverse is taken of the identity instead, and gets no
// gradient).
Tensor cond(const Tensor& a, double p) {
  check_matrix(a, "A");
  if (std::isnan(p) || p == 2.0 || p == -2.0 || p == kNormNuc) {
    const Tensor s = std::get<1>(svd(a, false));
    const int64_t k = s->shape()[s->ndim() - 1];
    if (k == 0) fail(AG_ERR_SHAPE, "cond of empty matrices (shape ", shape_str(a->shape()), ")");
    if (p == kNormNuc) {
      check_square(a, "A");
      return mul(sum_dims(s, Dims{-1}, false), sum_dims(reciprocal(s), Dims{-1}, false));
    }
    const Tensor hi = select(s, -1, 0), lo = select(s, -1, k - 1);
    return p == -2.0 ? div(lo, hi) : div(hi, lo);
  }
  check_square(a, "A");
  const Tensor norm_a = matrix_norm(a, Dims{}, false, p);  // also rejects a p that is no matrix norm
  // Which matrices are singular: an exactly zero pivot, as inv finds it.
  const int64_t n = a->shape()[a->ndim() - 1];
  const Dims batch = batch_of(a->shape());
  const int64_t count = matrix_count(*a);
  const Tensor lu = f64_copy(a);
  std::vector<uint8_t> singular(static_cast<size_t>(count), 0);
  int64_t unused = 0;
  for_matrices(a->context(), count, n, &unused, [&](int64_t b) {
    std::vector<int64_t> piv(static_cast<size_t>(n));
    int sign = 1;
    singular[static_cast<size_t>(b)] = kernels::lu_factor(lu->data_as<double>() + b * n * n, n, piv.data(), &sign) >= 0;
    return int64_t{-1};
  });
  if (std::find(singular.begin(), singular.end(), 1) == singular.end()) {
    return mul(norm_a, matrix_norm(inv(a), Dims{}, false, p));
  }
  Tensor mask = empty(a->context(), DType::Bool, batch);
  std::copy(singular.begin(), singular.end(), mask->data_as<uint8_t>());
  const Tensor mask2 = unsqueeze(unsqueeze(mask, -1), -1);
  const Tensor safe = where(mask2, eye(a->context(), a->dtype(), n, -1), a);
  const Tensor r = mul(norm_a, matrix_norm(inv(safe), Dims{}, false, p));
  return where(mask, full(a->context(), a->dtype(), Dims{}, HUGE_VAL), r);
}

}  // namespace ag::ops
