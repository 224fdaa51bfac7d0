// lstsq and matrix_exp, composed of differentiable ops (qr, solve_triangular,
// matmul, solve and scalar products), so gradients of every order follow
// from theirs.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/elementwise.h"
#include "ops/linalg_common.h"
#include "ops/ops.h"

namespace ag::ops {

using namespace linalg;

// lstsq: X minimising ||A X - B|| for A (..., m, n) of full rank. m >= n:
// A = Q R, X = R^-1 Q^T B; m < n: the minimum-norm solution, A^T = Q R,
// X = Q R^-T B. B is (..., m, k), or (..., m) when it has one dim less than
// A; batch dims broadcast.
namespace {

// Fails for a batch element of rank below its size: a diagonal entry of R
// at or below eps * max(m, n) * its largest one (gelsy's default rcond),
// where the triangular solve would return inf or huge values.
void check_full_rank(const Tensor& r, int64_t m, int64_t n) {
  const Tensor c = f64_copy(r);
  const int64_t k = std::min(m, n), cols = r->shape()[r->ndim() - 1];
  const int64_t count = matrix_count(*c);
  const double eps = r->dtype() == DType::F32 ? std::numeric_limits<float>::epsilon()
                                              : std::numeric_limits<double>::epsilon();
  const double rcond = eps * static_cast<double>(std::max(m, n));
  const double* p = c->data_as<double>();
  for (int64_t b = 0; b < count; ++b, p += k * cols) {
    double hi = 0.0;
    for (int64_t i = 0; i < k; ++i) hi = std::max(hi, std::fabs(p[i * cols + i]));
    for (int64_t i = 0; i < k; ++i) {
      const double d = std::fabs(p[i * cols + i]);
      if (!(d > rcond * hi)) {
        fail(AG_ERR_INVALID_ARGUMENT, "batch element ", b, " of A is rank-deficient: |R[", i, ",", i, "]| = ", d,
             " is at most ", rcond, " times the largest diagonal entry of its QR factor ", hi,
             " (lstsq needs full rank; pinv(A) B gives the minimum-norm solution)");
      }
    }
  }
}

}  // namespace

Tensor lstsq(const Tensor& a, const Tensor& b) {
  check_matrix(a, "A");
  check_same(*a, *b);
  if (b->ndim() != a->ndim() && b->ndim() != a->ndim() - 1) {
    fail(AG_ERR_SHAPE, "B must have as many dims as A ", shape_str(a->shape()), " or one less, got shape ",
         shape_str(b->shape()));
  }
  const bool vector = b->ndim() == a->ndim() - 1;
  const Tensor bm = vector ? unsqueeze(b, -1) : b;
  const int64_t m = a->shape()[a->ndim() - 2], n = a->shape()[a->ndim() - 1];
  if (bm->shape()[bm->ndim() - 2] != m) {
    fail(AG_ERR_SHAPE, "A ", shape_str(a->shape()), " has ", m, " rows but B ", shape_str(b->shape()), " has ",
         bm->shape()[bm->ndim() - 2]);
  }
  Tensor x;
  if (m >= n) {
    const auto [q, r] = qr(a, QrMode::Reduced);
    check_full_rank(r, m, n);
    x = solve_triangular(r, matmul(mT(q), bm), true, true, false);
  } else {
    const auto [q, r] = qr(mT(a), QrMode::Reduced);
    check_full_rank(r, m, n);
    x = matmul(q, solve_triangular(mT(r), bm, false, true, false));
  }
  return vector ? squeeze(x, Dims{-1}) : x;
}

// ---- matrix_exp ----
// Scaling and squaring (Higham 2005): with s such that ||A / 2^s||_1 is
// below theta_m, exp(A) = r_m(A / 2^s)^(2^s), r_m = (V - U)^-1 (V + U) the
// [m/m] Pade approximant, U its odd and V its even part; m is the lowest of
// 3, 5, 7, 9, 13 whose theta covers the largest norm of the batch.
namespace {

constexpr double kPade3[] = {120.0, 60.0, 12.0, 1.0};
constexpr double kPade5[] = {30240.0, 15120.0, 3360.0, 420.0, 30.0, 1.0};
constexpr double kPade7[] = {17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0};
constexpr double kPade9[] = {17643225600.0, 8821612800.0, 2075673600.0, 302702400.0, 30270240.0,
                             2162160.0,     110880.0,     3960.0,       90.0,        1.0};
constexpr double kPade13[] = {64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
                              129060195264000.0,   10559470521600.0,    670442572800.0,     33522128640.0,
                              1323241920.0,        40840800.0,          960960.0,           16380.0,
                              182.0,               1.0};
constexpr double kTheta[] = {1.495585217958292e-2, 2.539398330063230e-1, 9.504178996162932e-1,
                             2.097847961257068e0, 5.371920351148152e0};

// The largest 1-norm (max column sum of |a_ij|) of the batch, without graph.
double max_norm1(const Tensor& a) {
  const Tensor c = f64_copy(a);
  const int64_t n = a->shape()[a->ndim() - 1];
  const int64_t count = n > 0 ? a->numel() / (n * n) : 0;
  const double* p = c->data_as<double>();
  double best = 0.0;
  for (int64_t b = 0; b < count; ++b, p += n * n) {
    for (int64_t j = 0; j < n; ++j) {
      double s = 0.0;
      for (int64_t i = 0; i < n; ++i) s += std::fabs(p[i * n + j]);
      best = std::isnan(s) ? s : std::max(best, s);
      if (std::isnan(best)) return best;
    }
  }
  return best;
}

// sum_k c[k] P[k], P[0] the identity (null: skipped, added as c[0] I).
Tensor combination(const Tensor& eye_n, const Tensor* powers, const double* c, int count) {
  Tensor sum = mul_scalar(eye_n, c[0]);
  for (int k = 1; k < count; ++k) {
    if (c[k] != 0.0) sum = add(sum, mul_scalar(powers[k], c[k]));
  }
  return sum;
}

// r_m(A) for m in {3, 5, 7, 9}: U = A sum b_{2k+1} A^2k, V = sum b_2k A^2k.
Tensor pade_low(const Tensor& a, const Tensor& eye_n, const double* b, int m) {
  Tensor even[5] = {Tensor(), matmul(a, a)};  // A^0 (unused), A^2, A^4, ...
  for (int k = 2; 2 * k <= m; ++k) even[k] = matmul(even[k - 1], even[1]);
  double cu[5], cv[5];
  for (int k = 0; 2 * k <= m; ++k) cv[k] = b[2 * k], cu[k] = b[2 * k + 1];
  const Tensor u = matmul(a, combination(eye_n, even, cu, m / 2 + 1));
  const Tensor v = combination(eye_n, even, cv, m / 2 + 1);
  return solve(sub(v, u), add(v, u));
}

// r_13(A) with the 6 products of Higham's evaluation.
Tensor pade13(const Tensor& a, const Tensor& eye_n) {
  const double* b = kPade13;
  const Tensor a2 = matmul(a, a), a4 = matmul(a2, a2), a6 = matmul(a4, a2);
  auto lin3 = [&](double c6, double c4, double c2) {
    return add(add(mul_scalar(a6, c6), mul_scalar(a4, c4)), mul_scalar(a2, c2));
  };
  const Tensor u_hi = matmul(a6, lin3(b[13], b[11], b[9]));
  const Tensor u = matmul(a, add(add(u_hi, lin3(b[7], b[5], b[3])), mul_scalar(eye_n, b[1])));
  const Tensor v_hi = matmul(a6, lin3(b[12], b[10], b[8]));
  const Tensor v = add(add(v_hi, lin3(b[6], b[4], b[2])), mul_scalar(eye_n, b[0]));
  return solve(sub(v, u), add(v, u));
}

}  // namespace

Tensor matrix_exp(const Tensor& x) {
  check_square(x, "input");
  const int64_t n = x->shape()[x->ndim() - 1];
  if (x->numel() == 0) return grad_clone(x);
  const Tensor eye_n = eye(x->context(), x->dtype(), n, -1);
  const double norm = max_norm1(x);  // NaN or inf: r_13 unscaled, which propagates them
  const double* low[] = {kPade3, kPade5, kPade7, kPade9};
  for (int i = 0; i < 4; ++i) {
    if (norm <= kTheta[i]) return pade_low(x, eye_n, low[i], 2 * i + 3);
  }
  const int s = std::isfinite(norm) && norm > kTheta[4] ? static_cast<int>(std::ceil(std::log2(norm / kTheta[4]))) : 0;
  Tensor r = pade13(s > 0 ? mul_scalar(x, std::ldexp(1.0, -s)) : x, eye_n);
  for (int i = 0; i < s; ++i) r = matmul(r, r);
  return r;
}

}  // namespace ag::ops
