/*
 * ag/ops_linalg.h - linear algebra: matrix products, matrix structure
 * (diagonals, triangles), decompositions and solves.
 *
 * The rules of ag/ops.h hold: `*out` is a new reference written only on
 * success; inputs share one context (AG_ERR_CONTEXT) and one floating dtype,
 * AG_F32 or AG_F64 (AG_ERR_DTYPE); a NULL or released handle is
 * AG_ERR_INVALID_ARGUMENT; shapes that do not fit are AG_ERR_SHAPE with the
 * facts in the message: "[ag_op_matmul] cannot multiply shapes (2,3) and
 * (4,5): inner dims 3 and 4 differ". Operands may be any strided views
 * (transposed, broadcast); they are read in place.
 *
 * Products run on a packed, cache-blocked GEMM, in parallel in the context's
 * threads for large sizes. Each output element is summed over k in an order
 * fixed by the sizes alone, so results are bitwise the same for any thread
 * count (they may differ between SIMD targets). An empty inner dimension
 * (k = 0) gives zeros; an empty outer dimension gives an empty result.
 * Gradients are products again (da = g b^T, db = a^T g), summed over
 * broadcast batch dims, so higher derivatives work.
 */
#ifndef AG_OPS_LINALG_H
#define AG_OPS_LINALG_H

#include "ag/common.h"
#include "ag/tensor.h"

AG_BEGIN_DECLS

/**
 * Matrix product with NumPy / torch.matmul semantics:
 * - 1-D x 1-D (k) and (k): the dot product, 0-dim;
 * - 2-D x 2-D (m, k) and (k, n): (m, n);
 * - a 1-D a (k) is taken as a row (1, k), a 1-D b (k) as a column (k, 1), and
 *   that added dim is removed from the result;
 * - with more than 2 dims, the leading (batch) dims broadcast:
 *   (..., m, k) x (..., k, n) gives (broadcast batch..., m, n).
 * AG_ERR_SHAPE: a 0-dim operand, inner dims that differ, batch dims that do
 * not broadcast. Also INVALID_ARGUMENT, DTYPE, CONTEXT.
 */
AG_API ag_status ag_op_matmul(ag_tensor **out, const ag_tensor *a, const ag_tensor *b) AG_NOEXCEPT;

/**
 * Batched product of 3-D tensors without broadcasting: (B, m, k) x (B, k, n)
 * gives (B, m, n). AG_ERR_SHAPE: an operand that is not 3-D, batch sizes
 * that differ, inner dims that differ. Also INVALID_ARGUMENT, DTYPE, CONTEXT.
 */
AG_API ag_status ag_op_bmm(ag_tensor **out, const ag_tensor *a, const ag_tensor *b) AG_NOEXCEPT;

/**
 * y = x weight^T + bias (torch.nn.functional.linear): x (..., in_features)
 * with at least 1 dim, weight (out_features, in_features), bias
 * (out_features) or NULL for none; y (..., out_features). The bias add is
 * fused into the product. AG_ERR_SHAPE: weight not 2-D, 0-dim x, last dim of
 * x other than in_features, bias not of shape (out_features). Also
 * INVALID_ARGUMENT (NULL x or weight), DTYPE, CONTEXT.
 */
AG_API ag_status ag_op_linear(ag_tensor **out, const ag_tensor *x, const ag_tensor *weight,
                              const ag_tensor *bias) AG_NOEXCEPT;

/** ag_op_linear_act: no activation (the result of ag_op_linear). */
#define AG_ACTIVATION_NONE 0
/** ag_op_linear_act: relu, max(y, 0) (+0 for y <= 0, NaN stays NaN). */
#define AG_ACTIVATION_RELU 1

/**
 * activation(x weight^T + bias): ag_op_linear followed by an activation,
 * AG_ACTIVATION_NONE or AG_ACTIVATION_RELU, in one op. The activation is
 * applied where the product writes its result (no second pass), with the
 * bits of ag_op_linear then ag_op_relu. Backward computes relu's mask and
 * the bias gradient in one pass over the incoming gradient; dx and dweight
 * have the bits of the unfused ops, dbias is summed row by row in order and
 * may differ from the unfused sum in the last bits. Shapes, bias (NULL for
 * none) and errors as ag_op_linear; AG_ERR_INVALID_ARGUMENT for another
 * activation.
 */
AG_API ag_status ag_op_linear_act(ag_tensor **out, const ag_tensor *x, const ag_tensor *weight,
                                  const ag_tensor *bias, int32_t activation) AG_NOEXCEPT;

/**
 * Outer product of vectors: a (n) and b (m) give y (n, m), y[i][j] = a[i] b[j].
 * AG_ERR_SHAPE if an operand is not 1-D. Also INVALID_ARGUMENT, DTYPE, CONTEXT.
 */
AG_API ag_status ag_op_outer(ag_tensor **out, const ag_tensor *a, const ag_tensor *b) AG_NOEXCEPT;

/**
 * Dot product of two vectors of one size: a 0-dim result (0 for size 0).
 * AG_ERR_SHAPE if an operand is not 1-D or the sizes differ. Also
 * INVALID_ARGUMENT, DTYPE, CONTEXT.
 */
AG_API ag_status ag_op_dot(ag_tensor **out, const ag_tensor *a, const ag_tensor *b) AG_NOEXCEPT;

/* ---- matrix structure ----
 * Semantics, argument order and defaults of the PyTorch functions of the
 * same names. Dims count from the end when negative; a dim out of range is
 * AG_ERR_INVALID_ARGUMENT. */

/** Sum of the main diagonal of a 2-D x (torch.trace); 0-dim result.
 * AG_ERR_SHAPE if x is not 2-D. Also INVALID_ARGUMENT, DTYPE. */
AG_API ag_status ag_op_trace(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;

/**
 * The diagonal of dims dim1, dim2 of x (torch.diagonal; defaults offset 0,
 * dim1 0, dim2 1) as a view sharing x's storage: those dims removed and the
 * diagonal appended as the last dim. offset > 0 is above the main diagonal,
 * < 0 below; an offset past the matrix gives an empty diagonal.
 * AG_ERR_SHAPE if x has fewer than 2 dims; AG_ERR_INVALID_ARGUMENT if dim1
 * and dim2 name the same dim. Gradient: g on that diagonal, zeros elsewhere.
 */
AG_API ag_status ag_op_diagonal(ag_tensor **out, const ag_tensor *x, int64_t offset, int64_t dim1,
                                int64_t dim2) AG_NOEXCEPT;

/**
 * A tensor whose diagonal (offset, dim1, dim2) is the last dim of x, zeros
 * elsewhere (torch.diag_embed; defaults offset 0, dim1 -2, dim2 -1, counted
 * in the result's x.ndim + 1 dims). The new dims have size
 * x.shape[-1] + |offset|. AG_ERR_SHAPE for a 0-dim x; AG_ERR_INVALID_ARGUMENT
 * if dim1 and dim2 name the same dim or that size overflows int64;
 * AG_ERR_OUT_OF_MEMORY if the result's bytes do; AG_ERR_UNSUPPORTED for an
 * x of AG_MAX_DIMS dims. Gradient: the diagonal of g.
 */
AG_API ag_status ag_op_diag_embed(ag_tensor **out, const ag_tensor *x, int64_t offset, int64_t dim1,
                                  int64_t dim2) AG_NOEXCEPT;

/**
 * torch.diag: a 1-D x (n) gives the square matrix with x on diagonal `k`
 * (k = 0 main, > 0 above, < 0 below) and zeros elsewhere; a 2-D x gives its
 * diagonal `k` as a vector. AG_ERR_SHAPE for other ranks.
 */
AG_API ag_status ag_op_diag(ag_tensor **out, const ag_tensor *x, int64_t k) AG_NOEXCEPT;

/**
 * The lower triangle of the last two dims of x (torch.tril): elements (i, j)
 * with j - i <= k kept, the others 0 (k = 0 the main diagonal). The gradient
 * is masked the same way (NaN or inf in g outside the triangle give 0).
 * AG_ERR_SHAPE if x has fewer than 2 dims.
 */
AG_API ag_status ag_op_tril(ag_tensor **out, const ag_tensor *x, int64_t k) AG_NOEXCEPT;

/** As ag_op_tril for the upper triangle: elements with j - i >= k kept (torch.triu). */
AG_API ag_status ag_op_triu(ag_tensor **out, const ag_tensor *x, int64_t k) AG_NOEXCEPT;

/* ---- products ---- */

/** Matrix product of 2-D a (n, m) and b (m, p), no broadcasting (torch.mm).
 * AG_ERR_SHAPE: an operand not 2-D, inner dims that differ. */
AG_API ag_status ag_op_mm(ag_tensor **out, const ag_tensor *a, const ag_tensor *b) AG_NOEXCEPT;

/** Matrix-vector product of a 2-D a (n, m) and 1-D b (m) (torch.mv).
 * AG_ERR_SHAPE: wrong ranks, inner dims that differ. */
AG_API ag_status ag_op_mv(ag_tensor **out, const ag_tensor *a, const ag_tensor *b) AG_NOEXCEPT;

/**
 * beta * input + alpha * (a @ b) for 2-D a and b (torch.addmm; PyTorch's
 * defaults beta = alpha = 1). input broadcasts to the product's shape (else
 * AG_ERR_SHAPE); with beta = 0 input is not read (NaN in it does not
 * propagate) and gets a zero gradient.
 */
AG_API ag_status ag_op_addmm(ag_tensor **out, const ag_tensor *input, const ag_tensor *a, const ag_tensor *b,
                             double beta, double alpha) AG_NOEXCEPT;

/** As ag_op_addmm with a matrix-vector product: a (n, m), b (m) (torch.addmv). */
AG_API ag_status ag_op_addmv(ag_tensor **out, const ag_tensor *input, const ag_tensor *a, const ag_tensor *b,
                             double beta, double alpha) AG_NOEXCEPT;

/** As ag_op_addmm with batched products: a (B, n, m), b (B, m, p) (torch.baddbmm). */
AG_API ag_status ag_op_baddbmm(ag_tensor **out, const ag_tensor *input, const ag_tensor *a, const ag_tensor *b,
                               double beta, double alpha) AG_NOEXCEPT;

/** As ag_op_baddbmm with the B products summed into one (n, p) matrix (torch.addbmm). */
AG_API ag_status ag_op_addbmm(ag_tensor **out, const ag_tensor *input, const ag_tensor *a, const ag_tensor *b,
                              double beta, double alpha) AG_NOEXCEPT;

/**
 * Cross product of 3-vectors along `dim` (torch.linalg.cross, default dim
 * -1): a and b have the same number of dims, size 3 at dim, and their other
 * dims broadcast. AG_ERR_SHAPE otherwise.
 */
AG_API ag_status ag_op_cross(ag_tensor **out, const ag_tensor *a, const ag_tensor *b, int64_t dim) AG_NOEXCEPT;

/** Kronecker product (torch.kron): shapes padded with leading 1s to one rank;
 * the result's size is the product of the sizes in each dim
 * (AG_ERR_INVALID_ARGUMENT if one overflows int64, which empty inputs allow). */
AG_API ag_status ag_op_kron(ag_tensor **out, const ag_tensor *a, const ag_tensor *b) AG_NOEXCEPT;

/**
 * Contraction of dims dims_a of a with dims_b of b, pairwise (torch.tensordot
 * with dims=(dims_a, dims_b); tensordot(a, b, n) is dims_a = the last n of a,
 * dims_b = the first n of b). The result has a's other dims, then b's.
 * AG_ERR_INVALID_ARGUMENT: lists of different lengths, a dim listed twice;
 * AG_ERR_SHAPE: paired dims of different sizes, a result of more than
 * AG_MAX_DIMS dims.
 */
AG_API ag_status ag_op_tensordot(ag_tensor **out, const ag_tensor *a, const ag_tensor *b, const int64_t *dims_a,
                                 int32_t n_dims_a, const int64_t *dims_b, int32_t n_dims_b) AG_NOEXCEPT;

/**
 * Einstein summation (torch.einsum) of the n tensors operands[0..n) by
 * `equation`: comma-separated subscripts per operand (letters a-z, A-Z, and
 * one "..." per operand for its leading dims, which broadcast), then
 * optionally "->" and the output's subscripts; without "->" the output has
 * the ellipsis dims and then the letters seen once, in order A-Z, a-z.
 * Letters repeated in one operand take its diagonal; letters not in the
 * output are summed; size-1 dims broadcast. Computed with diagonals, sums
 * and batched products, all differentiable.
 * AG_ERR_INVALID_ARGUMENT: a NULL equation, a character other than letters,
 * ',', "->", "..." and spaces, a count of subscript groups other than n, an
 * output letter twice or in no operand; AG_ERR_SHAPE: an operand whose dims
 * do not match its subscripts, sizes of one letter that differ (other than 1),
 * a product of two operands (left to right) of more than AG_MAX_DIMS dims.
 */
AG_API ag_status ag_op_einsum(ag_tensor **out, const char *equation, const ag_tensor *const *operands,
                              int32_t n) AG_NOEXCEPT;

/**
 * A^n of square matrices (..., m, m) (torch.linalg.matrix_power) by repeated
 * squaring: n = 0 gives identities (no gradient), n < 0 the power of the
 * inverse (AG_ERR_INVALID_ARGUMENT for a singular matrix, as ag_op_inv).
 * AG_ERR_SHAPE for matrices that are not square.
 */
AG_API ag_status ag_op_matrix_power(ag_tensor **out, const ag_tensor *x, int64_t k) AG_NOEXCEPT;

/* ---- decompositions and solves ----
 * Square matrices (..., n, n), batched over the leading dims; f32 and f64,
 * computed in f64 (LU with partial pivoting, Cholesky, triangular solves).
 * A matrix for which the operation is undefined (singular for inv and
 * solve, not positive-definite for cholesky) is AG_ERR_INVALID_ARGUMENT
 * naming the batch element and the pivot; nothing is returned then.
 * Matrices that are not square are AG_ERR_SHAPE. Gradients follow
 * PyTorch's formulas, written in ops, so higher derivatives work. */

/** Inverse (torch.linalg.inv). Gradient: -A^-T g A^-T. */
AG_API ag_status ag_op_inv(ag_tensor **out, const ag_tensor *a) AG_NOEXCEPT;

/**
 * Determinant (torch.linalg.det), shape A's batch dims; 0 for singular
 * matrices. Gradient: g det(A) A^-T; at an exactly singular matrix the
 * cofactor matrix times g (PyTorch's value when it records the graph), as a
 * constant: second derivatives there are not available (they are 0).
 */
AG_API ag_status ag_op_det(ag_tensor **out, const ag_tensor *a) AG_NOEXCEPT;

/**
 * Sign (+1, -1, or 0 for a singular matrix) and log |det| (-inf for a
 * singular matrix) of the determinant (torch.linalg.slogdet), each of shape
 * A's batch dims. Either out-parameter may be NULL, not both
 * (AG_ERR_INVALID_ARGUMENT). Gradient of logabsdet: g A^-T (an error at
 * singular matrices); sign has none.
 */
AG_API ag_status ag_op_slogdet(ag_tensor **sign, ag_tensor **logabsdet, const ag_tensor *a) AG_NOEXCEPT;

/**
 * X with A X = B (torch.linalg.solve, left): B (..., n, k), or vectors
 * (n) / (..., n) when B is 1-D or has exactly A's batch dims then n. Batch
 * dims broadcast. Gradients: dB = A^-T g, dA = -dB X^T.
 */
AG_API ag_status ag_op_solve(ag_tensor **out, const ag_tensor *a, const ag_tensor *b) AG_NOEXCEPT;

/**
 * Cholesky factor of symmetric positive-definite matrices
 * (torch.linalg.cholesky): lower L with A = L L^T, or with upper != 0 the
 * upper U = L^T (A = U^T U). Only the lower triangle of A is read. Gradient
 * (PyTorch's): sym(L^-T Phi(L^T g) L^-1), Phi the lower triangle with half
 * the diagonal, sym(S) = (S + S^T) / 2.
 */
AG_API ag_status ag_op_cholesky(ag_tensor **out, const ag_tensor *a, int32_t upper) AG_NOEXCEPT;

/**
 * X with A X = B (left != 0) or X A = B (left = 0) for triangular A
 * (torch.linalg.solve_triangular): the upper (upper != 0) or lower triangle
 * of A is read, with ones assumed on the diagonal if unitriangular != 0.
 * B (..., n, k) for left, (..., k, n) otherwise; batch dims broadcast. A
 * zero on the diagonal gives inf/NaN (no error, as PyTorch). The gradient
 * of A lies on the triangle read.
 */
AG_API ag_status ag_op_solve_triangular(ag_tensor **out, const ag_tensor *a, const ag_tensor *b, int32_t upper,
                                        int32_t left, int32_t unitriangular) AG_NOEXCEPT;

/**
 * X with A X = B where A = L L^T is given by its Cholesky factor l (lower;
 * with upper != 0, l is U and A = U^T U) (torch.cholesky_solve, default
 * upper 0): two triangular solves. B (..., n, k); batch dims broadcast.
 * Only l's triangle is read; its gradient is PyTorch's, which takes A as
 * l l^T of the whole l (so it has entries in the other triangle too):
 * dB = cholesky_solve(g, l), S = dB X^T + X dB^T, dl = -S l (upper: -l S).
 */
AG_API ag_status ag_op_cholesky_solve(ag_tensor **out, const ag_tensor *b, const ag_tensor *l,
                                      int32_t upper) AG_NOEXCEPT;

/* ---- eigendecomposition, SVD, QR, matrix norms, pseudo-inverse ----
 * Batched over leading dims, f32 and f64, computed in f64 by Jacobi
 * iterations (eigh, svd) and Householder reflections (qr). Input with NaN
 * or inf entries, on which the iterations do not converge, is
 * AG_ERR_INVALID_ARGUMENT naming the batch element. Gradients are
 * PyTorch's formulas written in ops (higher derivatives work); where they
 * divide by eigenvalue or singular-value gaps they are inf/NaN at equal
 * values, as PyTorch's. An empty A whose m + n + 1 overflows int64 is
 * AG_ERR_INVALID_ARGUMENT (results are computed packed in that many rows). */

#define AG_QR_REDUCED 0  /* Q (m, k), R (k, n), k = min(m, n) */
#define AG_QR_COMPLETE 1 /* Q (m, m), R (m, n) */
#define AG_QR_R 2        /* R (k, n) only; Q is an empty tensor of shape (0) */

/* Matrix-norm orders given as the double `ord` beside the numeric ones. */
#define AG_NORM_FRO 1000000 /* Frobenius: sqrt(sum x^2) ('fro') */
#define AG_NORM_NUC 1000001 /* nuclear: the sum of the singular values ('nuc') */

/**
 * Eigenvalues (ascending, shape (..., n)) and eigenvectors (columns, shape
 * (..., n, n)) of symmetric matrices (torch.linalg.eigh): only the lower
 * (upper != 0: the upper) triangle of A is read. Each eigenvector is
 * normalized with its component of largest magnitude positive (LAPACK's
 * signs are arbitrary: compare sign-invariant quantities across libraries).
 * Either out-parameter may be NULL, not both (AG_ERR_INVALID_ARGUMENT).
 * Gradient (PyTorch's): V (skew(V^T gV) / E + diag(gL)) V^T with
 * skew(X) = (X - X^T) / 2, E_ij = L_j - L_i; it needs distinct eigenvalues
 * when the eigenvectors receive a gradient.
 */
AG_API ag_status ag_op_eigh(ag_tensor **eigenvalues, ag_tensor **eigenvectors, const ag_tensor *a,
                            int32_t upper) AG_NOEXCEPT;

/** Eigenvalues (ascending) of symmetric matrices (torch.linalg.eigvalsh):
 * ag_op_eigh's first output. Gradient V diag(g) V^T. */
AG_API ag_status ag_op_eigvalsh(ag_tensor **out, const ag_tensor *a, int32_t upper) AG_NOEXCEPT;

/**
 * Singular value decomposition A = U diag(S) Vh (torch.linalg.svd with
 * full_matrices = 0): U (..., m, k), S (..., k) descending, Vh (..., k, n),
 * k = min(m, n). full_matrices != 0 is AG_ERR_UNSUPPORTED unless m = n (the
 * same result then). Signs: each column of U has its component of largest
 * magnitude positive, Vh's rows follow; left vectors of zero singular
 * values complete an orthonormal basis. Any out-parameter may be NULL, not
 * all. Gradient (PyTorch's): needs distinct singular values when U or Vh
 * receive a gradient, and nonzero ones for m != n.
 */
AG_API ag_status ag_op_svd(ag_tensor **u, ag_tensor **s, ag_tensor **vh, const ag_tensor *a,
                           int32_t full_matrices) AG_NOEXCEPT;

/** Singular values, descending, shape (..., min(m, n)) (torch.linalg.svdvals).
 * Gradient U diag(g) Vh. */
AG_API ag_status ag_op_svdvals(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;

/**
 * QR decomposition A = Q R (torch.linalg.qr) by Householder reflections with
 * LAPACK's sign convention (R's diagonal signs are those of PyTorch's CPU
 * results). mode: AG_QR_REDUCED, AG_QR_COMPLETE or AG_QR_R. Either
 * out-parameter may be NULL, not both. Gradient (PyTorch's, for R of full
 * rank): m >= n: (gQ + Q copyltu(M)) R^-T with M = R gR^T - gQ^T Q and
 * copyltu(M) = tril(M) + tril(M, -1)^T; m < n: A = [X | Y] split, X taking
 * the square formula. Backward is AG_ERR_UNSUPPORTED for AG_QR_COMPLETE
 * with m > n and for AG_QR_R (as PyTorch).
 */
AG_API ag_status ag_op_qr(ag_tensor **q, ag_tensor **r, const ag_tensor *a, int32_t mode) AG_NOEXCEPT;

/**
 * Matrix norm over the 2 dims `dims` (NULL with ndims 0: the last two)
 * (torch.linalg.matrix_norm): ord AG_NORM_FRO, AG_NORM_NUC, 2 / -2 (largest
 * / smallest singular value), 1 / -1 (max / min column sum of |x|),
 * INFINITY / -INFINITY (max / min row sum). Gradients: of the
 * compositions (sums, |x| with subgradient 0 at 0, ties of max / min share
 * the gradient evenly as amax's, singular values as ag_op_svdvals).
 */
AG_API ag_status ag_op_matrix_norm(ag_tensor **out, const ag_tensor *x, const int64_t *dims, int32_t ndims,
                                   int32_t keepdim, double ord) AG_NOEXCEPT;

/**
 * torch.linalg.norm: one dim: the vector norm of ord (NaN: 2) as
 * ag_op_norm_dims; two dims: ag_op_matrix_norm (ord NaN: AG_NORM_FRO); no
 * dims (NULL, 0): ord NaN gives the 2-norm of all elements, otherwise x
 * must have 1 or 2 dims. AG_NORM_FRO / AG_NORM_NUC over one dim are
 * AG_ERR_INVALID_ARGUMENT.
 */
AG_API ag_status ag_op_linalg_norm(ag_tensor **out, const ag_tensor *x, const int64_t *dims, int32_t ndims,
                                   int32_t keepdim, double ord) AG_NOEXCEPT;

/**
 * Moore-Penrose pseudo-inverse (torch.linalg.pinv): the singular values
 * (hermitian != 0: the eigenvalues of the symmetric A, lower triangle read)
 * of magnitude above max(atol, rtol * largest) are inverted, the others
 * dropped. atol NaN: 0 (None); rtol NaN: eps * max(m, n) if atol is NaN
 * too, else 0 (PyTorch's defaults). torch.pinverse(A, rcond) is atol 0,
 * rtol rcond. Gradient (PyTorch's, valid where the rank is locally
 * constant): written in A and pinv(A) alone.
 */
AG_API ag_status ag_op_pinv(ag_tensor **out, const ag_tensor *a, double atol, double rtol,
                            int32_t hermitian) AG_NOEXCEPT;

/**
 * Condition number (torch.linalg.cond): p NaN (None) or 2: S_max / S_min
 * of the singular values, -2: S_min / S_max (inf for singular matrices as
 * the ratio gives); AG_NORM_NUC: sum(S) * sum(1 / S) for square A (inf or
 * NaN for singular ones, as the sums give); AG_NORM_FRO, 1, -1, INFINITY,
 * -INFINITY: matrix_norm(A, p) * matrix_norm(A^-1, p) for square A, and
 * inf (no gradient) for each matrix whose LU factorization has an exactly
 * zero pivot, as PyTorch. Another p is AG_ERR_INVALID_ARGUMENT.
 */
AG_API ag_status ag_op_cond(ag_tensor **out, const ag_tensor *a, double p) AG_NOEXCEPT;

/**
 * Least-squares solution (torch.linalg.lstsq's `solution`) of A X = B for
 * A (..., m, n) of full rank: m >= n the X minimising ||A X - B||, through
 * A = Q R, X = R^-1 Q^T B; m < n the minimum-norm solution, through
 * A^T = Q R, X = Q R^-T B (what PyTorch's CPU driver gelsy returns). B is
 * (..., m, k), or (..., m) when it has one dim less than A; batch dims
 * broadcast; the result is (..., n, k) or (..., n). AG_ERR_INVALID_ARGUMENT
 * for a rank-deficient A (a diagonal entry of R at most eps * max(m, n)
 * times the largest, gelsy's default rcond; gelsy would return a
 * minimum-norm solution: use ag_op_pinv). Residuals, rank and singular
 * values are not computed. Composed of qr, matmul and solve_triangular, so
 * its gradients (of every order) are theirs. f32/f64, same dtype.
 */
AG_API ag_status ag_op_lstsq(ag_tensor **out, const ag_tensor *a, const ag_tensor *b) AG_NOEXCEPT;

/**
 * Matrix exponential (torch.linalg.matrix_exp) of square matrices
 * (..., n, n) by scaling and squaring with a Pade approximant (Higham 2005):
 * degree 3, 5, 7, 9 or 13 and the number of squarings chosen from the largest
 * 1-norm of the batch. Composed of matmul, solve and scalar products, so its
 * gradients (of every order) are theirs (the scaling is a constant).
 * NaN or inf entries give NaN results. f32/f64.
 */
AG_API ag_status ag_op_matrix_exp(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;

AG_END_DECLS

#endif /* AG_OPS_LINALG_H */
