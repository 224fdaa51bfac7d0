/*
 * ag/ops_nn.h - neural-network ops: softmax, log_softmax and their fused
 * gradients. The rules of ag/ops.h hold (out-parameter first, written only on
 * success; f32 or f64 inputs of one dtype and context; errors name the op).
 *
 * `dim` selects the dim the op works along; a negative dim counts from the
 * end (-1 is the last). A 0-dim tensor takes dim 0 or -1 and is treated as
 * one row of one element. A dim outside -ndim..ndim-1 is
 * AG_ERR_INVALID_ARGUMENT: "[ag_op_softmax] dim 2 is out of range for a
 * tensor of 2 dims (expected -2..1)".
 */
#ifndef AG_OPS_NN_H
#define AG_OPS_NN_H

#include "ag/common.h"
#include "ag/tensor.h"

AG_BEGIN_DECLS

/**
 * y = exp(x) / sum(exp(x)) along `dim` (same shape as x), computed as
 * exp(x - max) / sum(exp(x - max)) so that large inputs do not overflow.
 * -inf inputs give 0; a row that is all -inf, or holds +inf or NaN, gives
 * NaN (as in PyTorch). Empty tensors give empty results.
 * Gradient: ag_op_softmax_backward(grad, y, dim).
 * @return AG_ERR_INVALID_ARGUMENT (NULL, dim out of range), AG_ERR_DTYPE
 *         (not f32/f64).
 */
AG_API ag_status ag_op_softmax(ag_tensor **out, const ag_tensor *x, int64_t dim) AG_NOEXCEPT;

/**
 * y = log(softmax(x)) along `dim`, computed as (x - max) - log(sum(exp(x - max))):
 * accurate where softmax underflows to 0. Same edge cases as ag_op_softmax
 * (-inf in, -inf out; an all -inf row gives NaN).
 * Gradient: ag_op_log_softmax_backward(grad, y, dim).
 * @return AG_ERR_INVALID_ARGUMENT (NULL, dim out of range), AG_ERR_DTYPE.
 */
AG_API ag_status ag_op_log_softmax(ag_tensor **out, const ag_tensor *x, int64_t dim) AG_NOEXCEPT;

/**
 * out = y * (grad - sum(grad * y, dim)): the gradient through softmax, given
 * the upstream gradient `grad` and softmax's output `y` (same shape), fused
 * into one pass. Differentiable in both inputs (second derivatives of
 * softmax go through it).
 * @return AG_ERR_INVALID_ARGUMENT (NULL, dim out of range), AG_ERR_SHAPE
 *         (grad and y differ in shape), AG_ERR_DTYPE, AG_ERR_CONTEXT.
 */
AG_API ag_status ag_op_softmax_backward(ag_tensor **out, const ag_tensor *grad, const ag_tensor *y,
                                        int64_t dim) AG_NOEXCEPT;

/**
 * out = grad - exp(y) * sum(grad, dim): the gradient through log_softmax,
 * given the upstream gradient `grad` and log_softmax's output `y` (same
 * shape), fused into one pass. Differentiable in both inputs.
 * @return AG_ERR_INVALID_ARGUMENT (NULL, dim out of range), AG_ERR_SHAPE
 *         (grad and y differ in shape), AG_ERR_DTYPE, AG_ERR_CONTEXT.
 */
AG_API ag_status ag_op_log_softmax_backward(ag_tensor **out, const ag_tensor *grad, const ag_tensor *y,
                                            int64_t dim) AG_NOEXCEPT;

AG_END_DECLS

#endif /* AG_OPS_NN_H */
