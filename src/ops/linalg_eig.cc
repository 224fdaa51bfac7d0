// eigh, eigvalsh, svd, svdvals, qr on the f64 kernels of
// kernels/linalg_eig.h, batched over leading dims. A node has one output, so
// each decomposition records one packed tensor and returns views of it:
// eigh P = [L; V] (..., n + 1, n), svd P = [U; S; V] (..., m + 1 + n, k),
// qr P = [Q^T | R] (..., qc, m + n). The backward node receives the packed
// gradient (zeros where an output was unused, which the formulas, linear in
// the output gradients, treat as PyTorch treats an undefined one). Backward
// formulas are PyTorch's, in ops (double backward works).
#include <cmath>
#include <vector>

#include "kernels/linalg_eig.h"
#include "ops/linalg_common.h"

namespace ag::ops {

using namespace linalg;

namespace {

Tensor identity_like(const Tensor& t, int64_t n) { return eye(t->context(), t->dtype(), n, -1); }

// E_ij = d_j - d_i off the diagonal, 1 on it.
Tensor differences(const Tensor& d, int64_t n) {
  return add(sub(unsqueeze(d, -2), unsqueeze(d, -1)), identity_like(d, n));
}

// ---- eigh ----
// A = V diag(L) V^T; gA = V (skew(V^T gV) / E + diag(gL)) V^T with
// skew(X) = (X - X^T) / 2, E_ij = L_j - L_i (defined for distinct eigenvalues).
struct EighBackward final : SavingNode<1> {
  const char* name() const override { return "EighBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    const Tensor p = saved[0].unpack(*this);
    const int64_t n = p->shape()[p->ndim() - 1];
    const Tensor l = select(p, -2, 0), v = narrow(p, -2, 1, n);
    const Tensor gl = select(g[0], -2, 0), gv = narrow(g[0], -2, 1, n);
    const Tensor vg = matmul(mT(v), gv);
    const Tensor skew = mul(sub(vg, mT(vg)), scalar_like(vg, 0.5));
    const Tensor inner = add(div(skew, differences(l, n)), diag_embed(gl, 0, -2, -1));
    out[0] = matmul(matmul(v, inner), mT(v));
  }
};

Tensor eigh_packed(const Tensor& a, bool upper) {
  check_square(a, "A");
  const int64_t n = a->shape()[a->ndim() - 1];
  const Tensor m = f64_copy(a);
  Dims ps = a->shape();
  ps[ps.size() - 2] = checked_mul_add(1, n, 1, "the packed rows (n + 1)");  // A may be empty with n huge
  Tensor p = empty(a->context(), DType::F64, ps);
  const int64_t count = n > 0 ? numel_of(batch_of(a->shape())) : 0;
  int64_t unused = 0;
  const int64_t bad = for_matrices(a->context(), count, n, &unused, [&](int64_t b) {
    double* out = p->data_as<double>() + b * (n + 1) * n;
    return kernels::eigh_jacobi(m->data_as<double>() + b * n * n, n, upper, out, out + n) ? int64_t{-1} : int64_t{0};
  });
  if (bad >= 0) {
    fail(AG_ERR_INVALID_ARGUMENT, "batch element ", bad, ": the Jacobi eigenvalue iteration did not converge ",
         "(the matrix has NaN or infinite entries)");
  }
  p = to_dtype(p, a->dtype());
  if (should_record({a.get()})) record<EighBackward>({a.get()}, p)->saved[0].save(p, true);
  return p;
}

// ---- svd ----
// A = U diag(S) V^T (thin); PyTorch's svd_backward with skew(X) = X - X^T,
// E_ij = S_j^2 - S_i^2 (distinct singular values; for m != n also nonzero).
struct SvdBackward final : SavingNode<1> {
  SvdBackward(int64_t m_, int64_t n_) : m(m_), n(n_) {}
  const char* name() const override { return "SvdBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    const Tensor p = saved[0].unpack(*this);
    const int64_t k = std::min(m, n);
    const Tensor u = narrow(p, -2, 0, m), s = select(p, -2, m), v = narrow(p, -2, m + 1, n);
    const Tensor gu = narrow(g[0], -2, 0, m), gs = select(g[0], -2, m), gv = narrow(g[0], -2, m + 1, n);
    const Tensor ug = matmul(mT(u), gu), vg = matmul(mT(v), gv);
    const Tensor su = unsqueeze(s, -2), sv = unsqueeze(s, -1);
    Tensor ga = div(add(mul(sub(ug, mT(ug)), su), mul(sv, sub(vg, mT(vg)))), differences(mul(s, s), k));
    ga = add(ga, diag_embed(gs, 0, -2, -1));
    if (m > n) {
      ga = matmul(u, ga);
      const Tensor gus = div(gu, su);
      ga = sub(add(ga, gus), matmul(u, matmul(mT(u), gus)));
      out[0] = matmul(ga, mT(v));
    } else if (m < n) {
      ga = matmul(ga, mT(v));
      const Tensor gvs = mT(div(gv, su));
      ga = sub(add(ga, gvs), matmul(matmul(gvs, v), mT(v)));
      out[0] = matmul(u, ga);
    } else {
      out[0] = matmul(matmul(u, ga), mT(v));
    }
  }
  int64_t m, n;
};

Tensor svd_packed(const Tensor& a) {
  check_matrix(a, "A");
  const int64_t m = a->shape()[a->ndim() - 2], n = a->shape()[a->ndim() - 1], k = std::min(m, n);
  const Tensor w = f64_copy(a);
  Dims ps = a->shape();
  ps[ps.size() - 2] = checked_mul_add(1, checked_mul_add(1, m, 1, "the packed rows (m + 1 + n)"), n,
                                     "the packed rows (m + 1 + n)");
  ps[ps.size() - 1] = k;
  Tensor p = empty(a->context(), DType::F64, ps);
  const int64_t count = k > 0 ? numel_of(batch_of(a->shape())) : 0;
  int64_t unused = 0;
  const int64_t bad = for_matrices(a->context(), count, std::max(m, n), &unused, [&](int64_t b) {
    double* out = p->data_as<double>() + b * (m + 1 + n) * k;
    std::vector<double> vt(static_cast<size_t>(k * n));
    if (!kernels::svd_jacobi(w->data_as<double>() + b * m * n, m, n, out + m * k, out, vt.data())) return int64_t{0};
    for (int64_t j = 0; j < k; ++j) {
      for (int64_t i = 0; i < n; ++i) out[(m + 1 + i) * k + j] = vt[j * n + i];
    }
    return int64_t{-1};
  });
  if (bad >= 0) {
    fail(AG_ERR_INVALID_ARGUMENT, "batch element ", bad, ": the Jacobi SVD iteration did not converge ",
         "(the matrix has NaN or infinite entries)");
  }
  p = to_dtype(p, a->dtype());
  if (should_record({a.get()})) record<SvdBackward>({a.get()}, p, m, n)->saved[0].save(p, true);
  return p;
}

// ---- qr ----
// A = Q R, m >= n: gA = (gQ + Q copyltu(M)) R^-T with M = R gR^T - gQ^T Q
// and copyltu(M) = tril(M) + tril(M, -1)^T (for R of full rank). m < n:
// A = [X | Y], R = [U | V] with X = Q U, V = Q^T Y: gY = Q gV and X takes
// the square formula with gQ + Y gV^T (PyTorch's split). Not defined for
// the complete Q of m > n (PyTorch neither) nor for mode 'r' (no Q).
Tensor qr_square_backward(const Tensor& q, const Tensor& r, const Tensor& gq, const Tensor& gr) {
  const Tensor mm = sub(matmul(r, mT(gr)), matmul(mT(gq), q));
  const Tensor x = add(gq, matmul(q, add(tril(mm, 0), mT(tril(mm, -1)))));
  return mT(solve_triangular(r, mT(x), true, true, false));  // x R^-T
}

struct QrBackward final : SavingNode<2> {
  QrBackward(int64_t m_, int64_t n_, QrMode mode_) : m(m_), n(n_), mode(mode_) {}
  const char* name() const override { return "QrBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    if (mode == QrMode::R) fail(AG_ERR_UNSUPPORTED, "qr: no gradient with mode AG_QR_R (Q is not computed)");
    if (mode == QrMode::Complete && m > n) {
      fail(AG_ERR_UNSUPPORTED, "qr: no gradient with mode AG_QR_COMPLETE for m > n (A is ", m, " x ", n, ")");
    }
    const Tensor a = saved[0].unpack(*this), p = saved[1].unpack(*this);
    if (m == 0 || n == 0) {
      out[0] = mul(a, scalar_like(a, 0.0));
      return;
    }
    const Tensor q = mT(narrow(p, -1, 0, m)), r = narrow(p, -1, m, n);
    const Tensor gq = mT(narrow(g[0], -1, 0, m)), gr = narrow(g[0], -1, m, n);
    if (m >= n) {
      out[0] = qr_square_backward(q, r, gq, gr);
      return;
    }
    const Tensor y = narrow(a, -1, m, n - m), gv = narrow(gr, -1, m, n - m);
    const Tensor gx = qr_square_backward(q, narrow(r, -1, 0, m), add(gq, matmul(y, mT(gv))), narrow(gr, -1, 0, m));
    out[0] = concat({gx, matmul(q, gv)}, -1);
  }
  int64_t m, n;
  QrMode mode;
};

}  // namespace

std::pair<Tensor, Tensor> eigh(const Tensor& a, bool upper) {
  const Tensor p = eigh_packed(a, upper);
  const int64_t n = p->shape()[p->ndim() - 1];
  return {select(p, -2, 0), narrow(p, -2, 1, n)};
}

Tensor eigvalsh(const Tensor& a, bool upper) { return select(eigh_packed(a, upper), -2, 0); }

std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& a, bool full_matrices) {
  check_matrix(a, "A");
  const int64_t m = a->shape()[a->ndim() - 2], n = a->shape()[a->ndim() - 1];
  if (full_matrices && m != n) {
    fail(AG_ERR_UNSUPPORTED, "full_matrices = 1 is supported for square matrices only (A is ", m, " x ", n,
         "): use the thin SVD (full_matrices = 0)");
  }
  const Tensor p = svd_packed(a);
  return {narrow(p, -2, 0, m), select(p, -2, m), mT(narrow(p, -2, m + 1, n))};
}

Tensor svdvals(const Tensor& a) {
  const Tensor p = svd_packed(a);
  return select(p, -2, a->shape()[a->ndim() - 2]);
}

std::pair<Tensor, Tensor> qr(const Tensor& a, QrMode mode) {
  check_matrix(a, "A");
  const int64_t m = a->shape()[a->ndim() - 2], n = a->shape()[a->ndim() - 1];
  const int64_t qc = mode == QrMode::Complete ? m : std::min(m, n);
  const Tensor w = f64_copy(a);
  Dims ps = a->shape();
  ps[ps.size() - 2] = qc;
  ps[ps.size() - 1] = checked_mul_add(1, m, n, "the packed columns (m + n)");
  Tensor p = empty(a->context(), DType::F64, ps);
  // The batch's size only when p holds it: an empty A's sizes may overflow.
  const int64_t count = p->numel() > 0 ? numel_of(batch_of(a->shape())) : 0;
  int64_t unused = 0;
  for_matrices(a->context(), count, std::max(m, n), &unused, [&](int64_t b) {
    std::vector<double> q(static_cast<size_t>(m * qc)), r(static_cast<size_t>(qc * n));
    kernels::qr_householder(w->data_as<double>() + b * m * n, m, n, qc, q.data(), r.data());
    double* out = p->data_as<double>() + b * qc * (m + n);
    for (int64_t i = 0; i < qc; ++i) {
      for (int64_t j = 0; j < m; ++j) out[i * (m + n) + j] = q[j * qc + i];
      for (int64_t j = 0; j < n; ++j) out[i * (m + n) + m + j] = r[i * n + j];
    }
    return int64_t{-1};
  });
  p = to_dtype(p, a->dtype());
  if (should_record({a.get()})) {
    auto node = record<QrBackward>({a.get()}, p, m, n, mode);
    node->saved[0].save(a, false);
    node->saved[1].save(p, true);
  }
  const Tensor r = narrow(p, -1, m, n);
  if (mode == QrMode::R) return {empty(a->context(), a->dtype(), Dims{0}), r};
  return {mT(narrow(p, -1, 0, m)), r};
}

}  // namespace ag::ops
