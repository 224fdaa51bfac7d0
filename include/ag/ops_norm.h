/*
 * ag/ops_norm.h - normalization layers: layer_norm, rms_norm (and their fused
 * gradients with respect to x and weight), batch_norm, group_norm.
 *
 * The rules of ag/ops.h hold: `*out` is a new reference written only on
 * success; inputs share one context (AG_ERR_CONTEXT) and one floating dtype,
 * AG_F32 or AG_F64 (AG_ERR_DTYPE); a NULL or released handle is
 * AG_ERR_INVALID_ARGUMENT; shapes that do not fit are AG_ERR_SHAPE with the
 * facts in the message: "[ag_op_layer_norm] normalized_shape (4) does not
 * match the last 1 dim of input shape (2,3)". Optional tensors (weight, bias,
 * running statistics) are NULL for none. Semantics follow
 * torch.nn.functional; eps is always passed explicitly (PyTorch's defaults:
 * 1e-5 for layer_norm and batch_norm, the dtype's machine epsilon for
 * rms_norm: 1.1920929e-07 for f32, 2.220446049250313e-16 for f64).
 *
 * Statistics use the biased variance (divided by the element count).
 * Results are bitwise the same for any thread count. Gradients flow to x,
 * weight and bias, and are differentiable again (second derivatives work).
 */
#ifndef AG_OPS_NORM_H
#define AG_OPS_NORM_H

#include "ag/common.h"
#include "ag/tensor.h"

AG_BEGIN_DECLS

/**
 * Layer normalization over the last n dims of x, whose sizes must equal
 * normalized_shape[0..n): y = (x - mean) / sqrt(var + eps) * weight + bias,
 * mean and (biased) var taken over those dims, separately for every index of
 * the leading dims. weight and bias (shape normalized_shape) may be NULL.
 * y has x's shape; an empty x gives an empty y. f32 statistics are computed
 * in two passes (mean, then squared deviations), so a large common offset
 * does not cost precision.
 * @return AG_ERR_INVALID_ARGUMENT (NULL x or out, n < 1 or n > 16,
 *         normalized_shape NULL with n > 0), AG_ERR_SHAPE (normalized_shape
 *         not the trailing sizes of x, weight or bias of another shape),
 *         AG_ERR_DTYPE, AG_ERR_CONTEXT.
 */
AG_API ag_status ag_op_layer_norm(ag_tensor **out, const ag_tensor *x, const int64_t *normalized_shape, int32_t n,
                                  const ag_tensor *weight, const ag_tensor *bias, double eps) AG_NOEXCEPT;

/**
 * Root-mean-square normalization (torch.nn.functional.rms_norm) over the last
 * n dims of x (sizes normalized_shape[0..n)):
 * y = x / sqrt(mean(x^2) + eps) * weight. weight (shape normalized_shape)
 * may be NULL. Same shapes, empty-tensor behaviour and errors as
 * ag_op_layer_norm.
 * @return AG_ERR_INVALID_ARGUMENT, AG_ERR_SHAPE, AG_ERR_DTYPE, AG_ERR_CONTEXT.
 */
AG_API ag_status ag_op_rms_norm(ag_tensor **out, const ag_tensor *x, const int64_t *normalized_shape, int32_t n,
                                const ag_tensor *weight, double eps) AG_NOEXCEPT;

/**
 * The gradient of ag_op_layer_norm with respect to x, fused into one kernel:
 * with xhat = (x - mean) / sqrt(var + eps) and gx = grad * weight (grad if
 * weight is NULL), out = (gx - mean(gx) - xhat * mean(gx * xhat)) /
 * sqrt(var + eps), means over the normalized dims. grad has x's shape. The
 * gradients of weight and bias are sum(grad * xhat) and sum(grad) over the
 * leading dims. Differentiable in grad, x and weight (second derivatives of
 * layer_norm go through it).
 * @return AG_ERR_INVALID_ARGUMENT, AG_ERR_SHAPE (also: grad and x differ in
 *         shape), AG_ERR_DTYPE, AG_ERR_CONTEXT.
 */
AG_API ag_status ag_op_layer_norm_backward(ag_tensor **out, const ag_tensor *grad, const ag_tensor *x,
                                           const int64_t *normalized_shape, int32_t n, const ag_tensor *weight,
                                           double eps) AG_NOEXCEPT;

/**
 * The gradient of ag_op_rms_norm with respect to x, fused into one kernel:
 * with r = 1 / sqrt(mean(x^2) + eps), xhat = x * r and gx = grad * weight
 * (grad if weight is NULL), out = r * (gx - xhat * mean(gx * xhat)).
 * Differentiable in grad, x and weight.
 * @return AG_ERR_INVALID_ARGUMENT, AG_ERR_SHAPE (also: grad and x differ in
 *         shape), AG_ERR_DTYPE, AG_ERR_CONTEXT.
 */
AG_API ag_status ag_op_rms_norm_backward(ag_tensor **out, const ag_tensor *grad, const ag_tensor *x,
                                         const int64_t *normalized_shape, int32_t n, const ag_tensor *weight,
                                         double eps) AG_NOEXCEPT;

/**
 * The gradient of ag_op_layer_norm with respect to weight, fused into one
 * pass: out = sum of grad * xhat over the leading dims of x, xhat = (x -
 * mean) / sqrt(var + eps); shape normalized_shape. grad has x's shape.
 * Differentiable in grad and x. Bitwise the same for any thread count.
 * @return AG_ERR_INVALID_ARGUMENT, AG_ERR_SHAPE (normalized_shape not the
 *         trailing sizes of x, grad and x differ in shape), AG_ERR_DTYPE,
 *         AG_ERR_CONTEXT.
 */
AG_API ag_status ag_op_layer_norm_weight_grad(ag_tensor **out, const ag_tensor *grad, const ag_tensor *x,
                                              const int64_t *normalized_shape, int32_t n, double eps) AG_NOEXCEPT;

/**
 * The gradient of ag_op_rms_norm with respect to weight: out = sum of
 * grad * x / sqrt(mean(x^2) + eps) over the leading dims of x. As
 * ag_op_layer_norm_weight_grad otherwise.
 * @return AG_ERR_INVALID_ARGUMENT, AG_ERR_SHAPE, AG_ERR_DTYPE, AG_ERR_CONTEXT.
 */
AG_API ag_status ag_op_rms_norm_weight_grad(ag_tensor **out, const ag_tensor *grad, const ag_tensor *x,
                                            const int64_t *normalized_shape, int32_t n, double eps) AG_NOEXCEPT;

/**
 * Batch normalization of x (N, C, ...) per channel (dim 1):
 * y = (x - mean) / sqrt(var + eps) * weight + bias, with weight, bias,
 * running_mean and running_var of shape (C), each may be NULL.
 * - training != 0: mean and (biased) var are taken over every dim but 1 of
 *   this batch, and gradients flow through them. If given, the running
 *   statistics are then updated in place (no graph; their version is
 *   bumped): running_mean = (1 - momentum) * running_mean + momentum * mean,
 *   running_var = (1 - momentum) * running_var + momentum * var * m / (m - 1)
 *   (the unbiased variance; m = elements per channel). Training needs m > 1.
 * - training == 0: running_mean and running_var (both required) are used as
 *   constants; no gradient flows into them.
 * An empty x gives an empty y and leaves the running statistics untouched
 * (as PyTorch).
 * @return AG_ERR_INVALID_ARGUMENT (NULL x or out, eval mode without running
 *         statistics, training with 1 value per channel), AG_ERR_SHAPE (x
 *         with fewer than 2 dims, a per-channel tensor not of shape (C)),
 *         AG_ERR_UNSUPPORTED (a running statistic that is an expand view
 *         or read-only),
 *         AG_ERR_DTYPE, AG_ERR_CONTEXT.
 */
AG_API ag_status ag_op_batch_norm(ag_tensor **out, const ag_tensor *x, ag_tensor *running_mean,
                                  ag_tensor *running_var, const ag_tensor *weight, const ag_tensor *bias,
                                  int32_t training, double momentum, double eps) AG_NOEXCEPT;

/**
 * Group normalization of x (N, C, ...): the C channels are split into
 * num_groups groups of C / num_groups consecutive channels, and each
 * (sample, group) is normalized over its channels and all trailing dims:
 * y = (x - mean) / sqrt(var + eps) * weight + bias (biased variance), with
 * weight and bias of shape (C), each may be NULL. y has x's shape; an empty
 * x gives an empty y. PyTorch's default eps is 1e-5.
 * @return AG_ERR_INVALID_ARGUMENT (NULL x or out, num_groups < 1),
 *         AG_ERR_SHAPE (x with fewer than 2 dims, C not divisible by
 *         num_groups, weight or bias not of shape (C)), AG_ERR_DTYPE,
 *         AG_ERR_CONTEXT.
 */
AG_API ag_status ag_op_group_norm(ag_tensor **out, const ag_tensor *x, int64_t num_groups, const ag_tensor *weight,
                                  const ag_tensor *bias, double eps) AG_NOEXCEPT;

/**
 * Instance normalization (F.instance_norm) of x (N, C, spatial...): with
 * use_input_stats != 0 each (sample, channel) is normalized over its
 * spatial elements (biased variance), then scaled by weight and shifted by
 * bias. weight and bias of shape (C), each may be NULL. running_mean and
 * running_var of shape (C), each may be NULL. They are then updated in place, without graph, with the sample average of the
 * per-instance mean and unbiased variance: r = (1-momentum)*r +
 * momentum*stat. With use_input_stats = 0, x is normalized by the running
 * statistics (both required), as ag_op_batch_norm in evaluation.
 * Gradients: of group_norm with one channel per group (or of batch_norm).
 * @return AG_ERR_SHAPE for fewer than 3 dims or parameters of another size;
 *         AG_ERR_INVALID_ARGUMENT for 1 spatial element with
 *         use_input_stats, missing running statistics without; also DTYPE,
 *         CONTEXT.
 */
AG_API ag_status ag_op_instance_norm(ag_tensor **out, const ag_tensor *x, ag_tensor *running_mean,
                                     ag_tensor *running_var, const ag_tensor *weight,
                                     const ag_tensor *bias, int32_t use_input_stats, double momentum,
                                     double eps) AG_NOEXCEPT;

/**
 * Local response normalization (F.local_response_norm) of x (N, C, ...):
 * y = x / (k + alpha * a)^beta with a the average of x^2 over `size`
 * neighbouring channels (zero padded: size/2 before, (size-1)/2 after), as
 * PyTorch computes it. Gradients of every order (composition).
 * @return AG_ERR_SHAPE for fewer than 3 dims; AG_ERR_INVALID_ARGUMENT for
 *         size < 1 or a non-finite alpha, beta, k; AG_ERR_DTYPE.
 */
AG_API ag_status ag_op_local_response_norm(ag_tensor **out, const ag_tensor *x, int64_t size,
                                           double alpha, double beta, double k) AG_NOEXCEPT;

AG_END_DECLS

#endif /* AG_OPS_NORM_H */
