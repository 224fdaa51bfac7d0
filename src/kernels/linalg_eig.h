// Symmetric eigendecomposition, SVD and Householder QR of one matrix per
// call, in f64 on contiguous row-major buffers (the ops widen f32 and loop
// over batches, as for kernels/linalg_decomp.h). Jacobi methods: slower than
// LAPACK's for large n but short, and accurate to the last bits for the
// small matrices ag's users factorize.
#pragma once

#include <cstdint>

namespace ag::kernels {

// Eigenvalues w (ascending) and eigenvectors v (n x n, column j for w[j]) of
// the symmetric matrix a, of which only the lower (upper: the upper)
// triangle is read; a is overwritten. Each eigenvector's component of
// largest magnitude (the first of equal ones) is made positive. v may be
// null (values only). Returns false if the cyclic Jacobi sweeps did not
// converge (NaN or inf input).
bool eigh_jacobi(double* a, int64_t n, bool upper, double* w, double* v);

// Thin SVD of the m x n matrix a (overwritten): k = min(m, n) singular
// values s (descending), u (m x k), vt (k x n); u and vt may be null
// (values only, both or neither). One-sided Jacobi on the columns (on the
// rows when m < n). Left singular vectors of zero singular values complete
// an orthonormal basis. Sign: each column of u has its component of largest
// magnitude positive (vt's row follows). Returns false if not converged.
bool svd_jacobi(double* a, int64_t m, int64_t n, double* s, double* u, double* vt);

// Householder QR of the m x n matrix a with LAPACK's reflector convention
// (so R's signs are those of PyTorch's CPU results): q is m x qc with qc =
// min(m, n) (reduced) or m (complete), r is rr x n with rr = qc, upper
// triangular. q may be null (R only).
void qr_householder(const double* a, int64_t m, int64_t n, int64_t qc, double* q, double* r);

}  // namespace ag::kernels
