// LU, Cholesky and triangular solves (see linalg_decomp.h). Plain loops in
// the orders that keep the inner loop on contiguous rows: the matrices of
// the ops that use them (robotics, simulation: 3x3 to a few hundred) are
// latency- rather than throughput-bound.
#include "kernels/linalg_decomp.h"

#include <cmath>
#include <utility>

namespace ag::kernels {

int64_t lu_factor(double* a, int64_t n, int64_t* piv, int* sign) {
  int64_t first_zero = -1;
  *sign = 1;
  for (int64_t j = 0; j < n; ++j) {
    int64_t p = j;
    double best = std::fabs(a[j * n + j]);
    for (int64_t i = j + 1; i < n; ++i) {
      const double v = std::fabs(a[i * n + j]);
      if (v > best) {
        best = v;
        p = i;
      }
    }
    piv[j] = p;
    if (p != j) {
      for (int64_t c = 0; c < n; ++c) std::swap(a[j * n + c], a[p * n + c]);
      *sign = -*sign;
    }
    const double d = a[j * n + j];
    if (d == 0.0) {
      if (first_zero < 0) first_zero = j;
      continue;  // the column below is zero already: nothing to eliminate
    }
    for (int64_t i = j + 1; i < n; ++i) {
      double* row = a + i * n;
      const double f = row[j] / d;
      row[j] = f;
      if (f == 0.0) continue;
      const double* top = a + j * n;
      for (int64_t c = j + 1; c < n; ++c) row[c] -= f * top[c];
    }
  }
  return first_zero;
}

void lu_solve(const double* lu, const int64_t* piv, int64_t n, double* b, int64_t k) {
  for (int64_t j = 0; j < n; ++j) {
    if (piv[j] != j) {
      for (int64_t c = 0; c < k; ++c) std::swap(b[j * k + c], b[piv[j] * k + c]);
    }
  }
  for (int64_t i = 0; i < n; ++i) {  // L y = P b, L unit lower
    double* bi = b + i * k;
    for (int64_t j = 0; j < i; ++j) {
      const double f = lu[i * n + j];
      if (f == 0.0) continue;
      const double* bj = b + j * k;
      for (int64_t c = 0; c < k; ++c) bi[c] -= f * bj[c];
    }
  }
  for (int64_t i = n - 1; i >= 0; --i) {  // U x = y
    double* bi = b + i * k;
    for (int64_t j = i + 1; j < n; ++j) {
      const double f = lu[i * n + j];
      if (f == 0.0) continue;
      const double* bj = b + j * k;
      for (int64_t c = 0; c < k; ++c) bi[c] -= f * bj[c];
    }
    const double d = lu[i * n + i];
    for (int64_t c = 0; c < k; ++c) bi[c] /= d;
  }
}

int64_t cholesky_factor(double* a, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    double* rj = a + j * n;
    double d = rj[j];
    for (int64_t c = 0; c < j; ++c) d -= rj[c] * rj[c];
    if (!(d > 0.0)) return j + 1;  // also NaN
    d = std::sqrt(d);
    rj[j] = d;
    for (int64_t i = j + 1; i < n; ++i) {
      double* ri = a + i * n;
      double s = ri[j];
      for (int64_t c = 0; c < j; ++c) s -= ri[c] * rj[c];
      ri[j] = s / d;
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t c = i + 1; c < n; ++c) a[i * n + c] = 0.0;
  }
  return -1;
}

void triangular_solve(const double* a, int64_t n, bool upper, bool unit, double* b, int64_t k) {
  auto row_step = [&](int64_t i, int64_t j0, int64_t j1) {
    double* bi = b + i * k;
    for (int64_t j = j0; j < j1; ++j) {
      const double f = a[i * n + j];
      if (f == 0.0) continue;
      const double* bj = b + j * k;
      for (int64_t c = 0; c < k; ++c) bi[c] -= f * bj[c];
    }
    if (!unit) {
      const double d = a[i * n + i];
      for (int64_t c = 0; c < k; ++c) bi[c] /= d;
    }
  };
  if (upper) {
    for (int64_t i = n - 1; i >= 0; --i) row_step(i, i + 1, n);
  } else {
    for (int64_t i = 0; i < n; ++i) row_step(i, 0, i);
  }
}

}  // namespace ag::kernels
