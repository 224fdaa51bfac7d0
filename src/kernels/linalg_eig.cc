// Jacobi eigensolver and SVD, Householder QR (see linalg_eig.h). Cyclic
// sweeps with Rutishauser's rotation; converged when a sweep leaves every
// off-diagonal entry (eigh) or column inner product (svd) below
// eps-relative size: both converge quadratically, so the last sweep is cheap.
#include "kernels/linalg_eig.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace ag::kernels {

namespace {

constexpr int kMaxSweeps = 80;
constexpr double kEps = 2.220446049250313e-16;

// (c, s) of the rotation that zeroes the off-diagonal of [[app, apq], [apq, aqq]].
void rotation(double app, double aqq, double apq, double* c, double* s) {
  const double theta = (aqq - app) / (2.0 * apq);
  const double t = std::isinf(theta * theta) ? 0.5 / theta
                                              : std::copysign(1.0, theta) / (std::fabs(theta) + std::hypot(theta, 1.0));
  *c = 1.0 / std::sqrt(t * t + 1.0);
  *s = t * *c;
}

// x <- c x - s y, y <- s x + c y over n elements of stride st.
void rotate(double* x, double* y, int64_t n, int64_t st, double c, double s) {
  for (int64_t k = 0; k < n; ++k) {
    const double a = x[k * st], b = y[k * st];
    x[k * st] = c * a - s * b;
    y[k * st] = s * a + c * b;
  }
}

// Flips column j of the m x k matrix u (and row j of the k x n vt, if any) so
// that its component of largest magnitude is positive.
void fix_sign(double* u, int64_t m, int64_t k, int64_t j, double* vt, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 1; i < m; ++i) {
    if (std::fabs(u[i * k + j]) > std::fabs(u[best * k + j])) best = i;
  }
  if (m == 0 || !(u[best * k + j] < 0)) return;
  for (int64_t i = 0; i < m; ++i) u[i * k + j] = -u[i * k + j];
  if (vt) {
    for (int64_t i = 0; i < n; ++i) vt[j * n + i] = -vt[j * n + i];
  }
}

}  // namespace

bool eigh_jacobi(double* a, int64_t n, bool upper, double* w, double* v) {
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < i; ++j) {
      if (upper) a[i * n + j] = a[j * n + i];
      else a[j * n + i] = a[i * n + j];
    }
  }
  std::vector<double> vv(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i) vv[i * n + i] = 1.0;
  double total = 0.0;
  for (int64_t i = 0; i < n * n; ++i) total += a[i] * a[i];
  if (!std::isfinite(total)) return false;
  bool converged = false;
  for (int sweep = 0; sweep < kMaxSweeps && !converged; ++sweep) {
    double off = 0.0;
    for (int64_t p = 0; p < n; ++p) {
      for (int64_t q = p + 1; q < n; ++q) off += a[p * n + q] * a[p * n + q];
    }
    if (off <= kEps * kEps * 1e-4 * total) {
      converged = true;
      break;
    }
    for (int64_t p = 0; p < n; ++p) {
      for (int64_t q = p + 1; q < n; ++q) {
        const double apq = a[p * n + q];
        if (apq == 0.0) continue;
        double c, s;
        rotation(a[p * n + p], a[q * n + q], apq, &c, &s);
        rotate(a + p, a + q, n, n, c, s);          // columns p, q
        rotate(a + p * n, a + q * n, n, 1, c, s);  // rows p, q
        a[p * n + q] = a[q * n + p] = 0.0;
        rotate(vv.data() + p, vv.data() + q, n, n, c, s);
      }
    }
  }
  if (!converged) return false;
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return a[x * n + x] < a[y * n + y]; });
  for (int64_t j = 0; j < n; ++j) w[j] = a[order[j] * n + order[j]];
  if (v) {
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) v[i * n + j] = vv[i * n + order[j]];
    }
    for (int64_t j = 0; j < n; ++j) fix_sign(v, n, n, j, nullptr, 0);
  }
  return true;
}

bool svd_jacobi(double* a, int64_t m, int64_t n, double* s, double* u, double* vt) {
  // Columns of the tall one (A, or A^T when m < n), each contiguous.
  const bool tall = m >= n;
  const int64_t M = tall ? m : n, N = tall ? n : m;
  std::vector<double> col(static_cast<size_t>(M * N)), vc(static_cast<size_t>(N * N), 0.0);
  for (int64_t j = 0; j < N; ++j) {
    for (int64_t i = 0; i < M; ++i) col[j * M + i] = tall ? a[i * n + j] : a[j * n + i];
    vc[j * N + j] = 1.0;
  }
  double total = 0.0;
  for (double x : col) total += x * x;
  if (!std::isfinite(total)) return false;
  bool converged = false;
  for (int sweep = 0; sweep < kMaxSweeps && !converged; ++sweep) {
    converged = true;
    for (int64_t p = 0; p < N; ++p) {
      for (int64_t q = p + 1; q < N; ++q) {
        double* cp = col.data() + p * M;
        double* cq = col.data() + q * M;
        double alpha = 0.0, beta = 0.0, gamma = 0.0;
        for (int64_t i = 0; i < M; ++i) {
          alpha += cp[i] * cp[i];
          beta += cq[i] * cq[i];
          gamma += cp[i] * cq[i];
        }
        if (std::fabs(gamma) <= kEps * std::sqrt(alpha * beta) || gamma == 0.0) continue;
        converged = false;
        double c, sn;
        rotation(alpha, beta, gamma, &c, &sn);
        rotate(cp, cq, M, 1, c, sn);
        rotate(vc.data() + p * N, vc.data() + q * N, N, 1, c, sn);
      }
    }
  }
  if (!converged) return false;
  std::vector<double> norm(static_cast<size_t>(N));
  for (int64_t j = 0; j < N; ++j) {
    double t = 0.0;
    for (int64_t i = 0; i < M; ++i) t += col[j * M + i] * col[j * M + i];
    norm[j] = std::sqrt(t);
  }
  std::vector<int64_t> order(static_cast<size_t>(N));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return norm[x] > norm[y]; });
  for (int64_t j = 0; j < N; ++j) s[j] = norm[order[j]];
  if (!u) return true;
  // Left vectors of the tall problem, orthonormalized in order (the ones of
  // tiny singular values are noise; zero ones are completed from e_i).
  std::vector<double> lv(static_cast<size_t>(M * N));
  auto project_out = [&](double* x, int64_t upto) {
    for (int pass = 0; pass < 2; ++pass) {
      for (int64_t t = 0; t < upto; ++t) {
        const double* y = lv.data() + t * M;
        double d = 0.0;
        for (int64_t i = 0; i < M; ++i) d += x[i] * y[i];
        for (int64_t i = 0; i < M; ++i) x[i] -= d * y[i];
      }
    }
    double t = 0.0;
    for (int64_t i = 0; i < M; ++i) t += x[i] * x[i];
    return std::sqrt(t);
  };
  for (int64_t j = 0; j < N; ++j) {
    double* x = lv.data() + j * M;
    const double* src = col.data() + order[j] * M;
    double len = 0.0;
    if (s[j] > 0.0) {
      for (int64_t i = 0; i < M; ++i) x[i] = src[i] / s[j];
      len = project_out(x, j);
    }
    for (int64_t e = 0; len < 0.5 && e < M; ++e) {
      std::fill(x, x + M, 0.0);
      x[e] = 1.0;
      len = project_out(x, j);
    }
    for (int64_t i = 0; i < M; ++i) x[i] /= len;
  }
  const int64_t k = N;
  for (int64_t j = 0; j < k; ++j) {
    const double* l = lv.data() + j * M;
    const double* r = vc.data() + order[j] * N;
    if (tall) {  // u = left (m x k), vt row j = V column
      for (int64_t i = 0; i < m; ++i) u[i * k + j] = l[i];
      for (int64_t i = 0; i < n; ++i) vt[j * n + i] = r[i];
    } else {  // A^T = L S R^T: u = R (m x k), vt row j = L column
      for (int64_t i = 0; i < m; ++i) u[i * k + j] = r[i];
      for (int64_t i = 0; i < n; ++i) vt[j * n + i] = l[i];
    }
  }
  for (int64_t j = 0; j < k; ++j) fix_sign(u, m, k, j, vt, n);
  return true;
}

void qr_householder(const double* a, int64_t m, int64_t n, int64_t qc, double* q, double* r) {
  const int64_t k = std::min(m, n);
  std::vector<double> w(a, a + m * n), vs(static_cast<size_t>(m * k), 0.0), tau(static_cast<size_t>(k), 0.0);
  for (int64_t j = 0; j < k; ++j) {
    double* v = vs.data() + j * m;
    const double alpha = w[j * n + j];
    double xnorm = 0.0;
    for (int64_t i = j + 1; i < m; ++i) xnorm = std::hypot(xnorm, w[i * n + j]);
    v[j] = 1.0;
    if (xnorm == 0.0) continue;  // H = I, as LAPACK's dlarfg
    const double beta = -std::copysign(std::hypot(alpha, xnorm), alpha);
    tau[j] = (beta - alpha) / beta;
    const double scale = 1.0 / (alpha - beta);
    for (int64_t i = j + 1; i < m; ++i) {
      v[i] = w[i * n + j] * scale;
      w[i * n + j] = 0.0;
    }
    w[j * n + j] = beta;
    for (int64_t c = j + 1; c < n; ++c) {
      double d = 0.0;
      for (int64_t i = j; i < m; ++i) d += v[i] * w[i * n + c];
      d *= tau[j];
      for (int64_t i = j; i < m; ++i) w[i * n + c] -= d * v[i];
    }
  }
  for (int64_t i = 0; i < qc; ++i) {
    for (int64_t c = 0; c < n; ++c) r[i * n + c] = i < m && c >= i ? w[i * n + c] : 0.0;
  }
  if (!q) return;
  std::fill(q, q + m * qc, 0.0);
  for (int64_t i = 0; i < qc; ++i) q[i * qc + i] = 1.0;
  for (int64_t j = k - 1; j >= 0; --j) {
    if (tau[j] == 0.0) continue;
    const double* v = vs.data() + j * m;
    for (int64_t c = 0; c < qc; ++c) {
      double d = 0.0;
      for (int64_t i = j; i < m; ++i) d += v[i] * q[i * qc + c];
      d *= tau[j];
      for (int64_t i = j; i < m; ++i) q[i * qc + c] -= d * v[i];
    }
  }
}

}  // namespace ag::kernels
