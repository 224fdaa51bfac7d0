/*
 * ag/ops_linalg.h - linear algebra: matrix products.
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

AG_END_DECLS

#endif /* AG_OPS_LINALG_H */
