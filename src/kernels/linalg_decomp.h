// Dense factorizations and triangular solves of small to medium matrices,
// one matrix per call (the ops loop over batches). All in f64 on contiguous
// row-major buffers: f32 inputs are widened by the op, which keeps pivoting
// and accumulation exact enough at no extra code.
#pragma once

#include <cstdint>

namespace ag::kernels {

// LU with partial pivoting of the n x n matrix a, in place (L unit lower,
// U upper); piv[i] is the row swapped with row i at step i. Returns -1, or
// the first step whose pivot is exactly 0 (the factorization continues, so
// that the determinant is 0 and the other pivots are defined). *sign is the
// permutation's sign (+1 or -1).
int64_t lu_factor(double* a, int64_t n, int64_t* piv, int* sign);

// Solves A X = B for the k columns of B (n x k, in place) from lu_factor's
// output.
void lu_solve(const double* lu, const int64_t* piv, int64_t n, double* b, int64_t k);

// Cholesky A = L L^T of the symmetric n x n matrix a (only its lower
// triangle is read), in place: L in the lower triangle, zeros above. Returns
// -1, or the order (1-based) of the first leading minor that is not
// positive definite.
int64_t cholesky_factor(double* a, int64_t n);

// Solves A X = B in place for the k columns of B (n x k), A triangular
// (upper or lower part read, the other ignored); unit: A's diagonal taken as
// ones. A zero on the diagonal gives inf/NaN, as LAPACK's trsm does.
void triangular_solve(const double* a, int64_t n, bool upper, bool unit, double* b, int64_t k);

}  // namespace ag::kernels
