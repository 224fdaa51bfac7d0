// The internal C++ op API: one function per row of ops.def, with the
// signature its family gives. Ops record a node when grad mode is on and an
// input requires grad; backward formulas call these same functions, so
// create_graph records the backward pass too. Errors throw ag::Error.
#pragma once

#include <utility>

#include "core/dtype.h"
#include "core/shape.h"
#include "core/tensor_impl.h"

namespace ag::ops {

#define AG_DECL_UNARY(name) Tensor name(const Tensor& x);
#define AG_DECL_UNARY_SCALAR(name) Tensor name(const Tensor& x, double attr);
#define AG_DECL_BINARY(name) Tensor name(const Tensor& a, const Tensor& b);
#define AG_DECL_REDUCE_ALL(name) Tensor name(const Tensor& x);
#define AG_DECL_SHAPE(name) Tensor name(const Tensor& x, const Dims& shape);
#define AG_DECL_DTYPE(name) Tensor name(const Tensor& x, DType dtype);
#define AG_DECL_DIM(name) Tensor name(const Tensor& x, int64_t dim);
#define AG_DECL_DIMS(name) Tensor name(const Tensor& x, const Dims& dims, bool keepdim);
#define AG_DECL_CUSTOM(name)  // declared by hand below
#define AG_OP(name, family) AG_DECL_##family(name)
#include "ops/ops.def"
#undef AG_OP
#undef AG_DECL_UNARY
#undef AG_DECL_UNARY_SCALAR
#undef AG_DECL_BINARY
#undef AG_DECL_REDUCE_ALL
#undef AG_DECL_SHAPE
#undef AG_DECL_DTYPE
#undef AG_DECL_DIM
#undef AG_DECL_DIMS
#undef AG_DECL_CUSTOM

// ---- softmax, losses, reductions over dims (CUSTOM rows) ----

// Fused gradients of softmax / log_softmax from the upstream gradient and the
// forward output y (same shape): y * (g - sum(g * y)), g - exp(y) * sum(g).
Tensor softmax_backward(const Tensor& grad, const Tensor& y, int64_t dim);
Tensor log_softmax_backward(const Tensor& grad, const Tensor& y, int64_t dim);

// How a loss reduces its per-element values (the AG_REDUCTION_* values).
enum class Reduction : int32_t { None = 0, Mean = 1, Sum = 2 };
// Checks a C reduction argument.
Reduction reduction_arg(int32_t r);

Tensor cross_entropy(const Tensor& input, const Tensor& target, Reduction r, int64_t ignore_index,
                     double label_smoothing);
Tensor nll_loss(const Tensor& input, const Tensor& target, Reduction r, int64_t ignore_index);
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction r);
Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction r);
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction r, double beta);
Tensor huber_loss(const Tensor& input, const Tensor& target, Reduction r, double delta);
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, Reduction r);
// pos_weight may be null.
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, const Tensor* pos_weight,
                                        Reduction r);

// Reductions over dims with an attribute (dims empty = all dims).
Tensor var_dims(const Tensor& x, const Dims& dims, bool keepdim, double correction);
Tensor std_dims(const Tensor& x, const Dims& dims, bool keepdim, double correction);
Tensor norm_dims(const Tensor& x, const Dims& dims, bool keepdim, double p);
// (values, i64 indices) of the max / min along dim; only values are differentiable.
std::pair<Tensor, Tensor> max_dim(const Tensor& x, int64_t dim, bool keepdim);
std::pair<Tensor, Tensor> min_dim(const Tensor& x, int64_t dim, bool keepdim);
Tensor argmax(const Tensor& x, int64_t dim, bool keepdim);
Tensor argmin(const Tensor& x, int64_t dim, bool keepdim);
// cumsum from the start (reverse = false) or from the end of dim.
Tensor cumsum_dir(const Tensor& x, int64_t dim, bool reverse);

// x viewed with `shape`, which differs from x's shape only by size-1 dims
// (inserted or dropped); differentiable, not an op of its own.
Tensor view_dims(const Tensor& x, const Dims& shape);

// Helpers for backward formulas (not ops themselves: no graph).
Tensor scalar_like(const Tensor& t, double value);  // 0-dim, t's dtype and context
Tensor zeros_like(const Tensor& t);
Tensor full(Context* ctx, DType dtype, const Dims& shape, double value);

}  // namespace ag::ops
