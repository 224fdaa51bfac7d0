// scaled_dot_product_attention as its math: softmax(q k^T * scale + mask) v,
// with dropout on the attention weights. A composition of matmul, softmax,
// where/add and dropout, so its gradients of any order come from those ops.
#include <cmath>
#include <limits>

#include "ops/op_common.h"

namespace ag::ops {

// q (..., L, E), k (..., S, E), v (..., S, Ev) -> (..., L, Ev); batch dims
// broadcast (as matmul). attn_mask (may be null) broadcasts to (..., L, S):
// bool (true = may attend) or of q's dtype (added to the scores).
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& attn_mask,
                                    double dropout_p, bool is_causal, double scale) {
  check_floating(*q);
  check_same(*q, *k);
  check_same(*q, *v);
  if (q->ndim() < 2 || k->ndim() < 2 || v->ndim() < 2) {
    fail(AG_ERR_SHAPE, "query, key and value need at least 2 dims, got ", shape_str(q->shape()), ", ",
         shape_str(k->shape()), ", ", shape_str(v->shape()));
  }
  const int64_t L = q->shape()[q->ndim() - 2], E = q->shape()[q->ndim() - 1], S = k->shape()[k->ndim() - 2];
  if (k->shape()[k->ndim() - 1] != E) {
    fail(AG_ERR_SHAPE, "key's last dim ", k->shape()[k->ndim() - 1], " differs from query's ", E);
  }
  if (v->shape()[v->ndim() - 2] != S) {
    fail(AG_ERR_SHAPE, "value has ", v->shape()[v->ndim() - 2], " positions but key has ", S);
  }
  if (!(dropout_p >= 0.0 && dropout_p <= 1.0)) fail(AG_ERR_INVALID_ARGUMENT, "dropout_p ", dropout_p, " is outside [0, 1]");
  if (!std::isfinite(scale) || scale < 0) fail(AG_ERR_INVALID_ARGUMENT, "scale ", scale, " must be finite and >= 0");
  if (is_causal && attn_mask) fail(AG_ERR_INVALID_ARGUMENT, "attn_mask and is_causal are both given");
  const double s = scale > 0 ? scale : 1.0 / std::sqrt(static_cast<double>(E));
  Tensor scores = mul(matmul(q, transpose(k, -2, -1)), scalar_like(q, s));
  const Tensor neg_inf = scalar_like(q, -std::numeric_limits<double>::infinity());
  if (is_causal) {
    Tensor causal = empty(q->context(), DType::Bool, Dims{L, S});
    uint8_t* c = reinterpret_cast<uint8_t*>(causal->data());
    for (int64_t i = 0; i < L && S > 0; ++i) {  // L may be huge when S is 0
      for (int64_t j = 0; j < S; ++j) c[i * S + j] = j <= i;
    }
    scores = where(causal, scores, neg_inf);
  } else if (attn_mask) {
    if (attn_mask->context() != q->context()) fail(AG_ERR_CONTEXT, "attn_mask belongs to another context");
    if (attn_mask->dtype() == DType::Bool) {
      scores = where(attn_mask, scores, neg_inf);
    } else {
      check_same(*q, *attn_mask);
      scores = add(scores, attn_mask);
    }
  }
  Tensor attn = softmax(scores, -1);
  if (dropout_p > 0) attn = dropout(attn, dropout_p, true);
  return matmul(attn, v);
}

}  // namespace ag::ops
