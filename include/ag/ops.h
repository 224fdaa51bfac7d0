/*
 * ag/ops.h - differentiable operations.
 *
 * Every op is `ag_status ag_op_<name>(ag_tensor **out, inputs..., attributes...)`:
 * - `*out` receives a new tensor (caller releases), written only on success;
 * - inputs must share one context (else AG_ERR_CONTEXT) and one floating
 *   dtype, AG_F32 or AG_F64, never mixed (AG_ERR_DTYPE; ag_op_cast, which
 *   takes any dtype, converts explicitly);
 * - binary ops broadcast as NumPy does (AG_ERR_SHAPE when they cannot), and
 *   their gradients are summed back to each input's shape;
 * - with grad mode on and an input that requires grad, the op records a node
 *   and its output requires grad;
 * - a NULL or released handle is AG_ERR_INVALID_ARGUMENT.
 * Errors name the op: "[ag_op_mul] cannot broadcast shapes (2,3) and (4)".
 * Ops are thread-safe with respect to their (read-only) inputs.
 */
#ifndef AG_OPS_H
#define AG_OPS_H

#include "ag/common.h"
#include "ag/tensor.h"

AG_BEGIN_DECLS

/* ---- elementwise, one input: y = f(x), same shape ---- */

/** y = -x. */
AG_API ag_status ag_op_neg(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
/** y = e^x. */
AG_API ag_status ag_op_exp(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
/** y = ln x (-inf at 0, NaN below 0). */
AG_API ag_status ag_op_log(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
/** y = tanh x. */
AG_API ag_status ag_op_tanh(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
/**
 * y = x ** exponent (C pow semantics). The gradient is exponent * x ** (exponent - 1),
 * and 0 everywhere for exponent 0.
 */
AG_API ag_status ag_op_pow_scalar(ag_tensor **out, const ag_tensor *x, double exponent) AG_NOEXCEPT;

/** y = a contiguous copy of x (new storage; any dtype). Gradient: passed through. */
AG_API ag_status ag_op_clone(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;

/* ---- elementwise, two inputs with broadcasting ---- */

/** y = a + b. */
AG_API ag_status ag_op_add(ag_tensor **out, const ag_tensor *a, const ag_tensor *b) AG_NOEXCEPT;
/** y = a - b. */
AG_API ag_status ag_op_sub(ag_tensor **out, const ag_tensor *a, const ag_tensor *b) AG_NOEXCEPT;
/** y = a * b. */
AG_API ag_status ag_op_mul(ag_tensor **out, const ag_tensor *a, const ag_tensor *b) AG_NOEXCEPT;
/** y = a / b (IEEE: x/0 is +-inf or NaN). */
AG_API ag_status ag_op_div(ag_tensor **out, const ag_tensor *a, const ag_tensor *b) AG_NOEXCEPT;

/**
 * y = grad * (1 - t^2): the gradient through tanh given the upstream gradient
 * `grad` and tanh's output `t`, fused into one pass (tanh's backward uses it).
 * Differentiable in both inputs, so higher derivatives of tanh work.
 */
AG_API ag_status ag_op_tanh_backward(ag_tensor **out, const ag_tensor *grad, const ag_tensor *t) AG_NOEXCEPT;

/* ---- reductions over all elements: 0-dim result ---- */

/** y = sum of all elements (0 for an empty tensor). */
AG_API ag_status ag_op_sum(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
/** y = mean of all elements (NaN for an empty tensor). */
AG_API ag_status ag_op_mean(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;

/* ---- shape ---- */

/**
 * Broadcast `x` to `shape` without copying (a view: size-1 dims repeat with
 * stride 0; new leading dims may be added; -1 keeps a dim of x). The view
 * shares x's data and version counter. Gradient: summed back to x's shape.
 * @return AG_ERR_SHAPE when x cannot broadcast to `shape`;
 *         AG_ERR_INVALID_ARGUMENT for a bad ndim, NULL shape with ndim > 0,
 *         or a size below -1; AG_ERR_OUT_OF_MEMORY when the element count
 *         overflows.
 */
AG_API ag_status ag_op_expand(ag_tensor **out, const ag_tensor *x,
                              const int64_t *shape, int32_t ndim) AG_NOEXCEPT;

/**
 * Sum `x` down to `shape`, the inverse of expand: `x`'s shape must be a
 * broadcast of `shape`; dims where `shape` has 1 (or lacks a leading dim) are
 * summed. Gradient: expanded back to x's shape.
 * @return AG_ERR_SHAPE when `shape` does not broadcast to x's shape.
 */
AG_API ag_status ag_op_sum_to_size(ag_tensor **out, const ag_tensor *x,
                                   const int64_t *shape, int32_t ndim) AG_NOEXCEPT;

/* ---- dtype ---- */

/**
 * Convert `x` to `dtype` (any of the four; f64 -> f32 rounds to nearest,
 * float -> i64 truncates toward zero and saturates, NaN giving 0;
 * nonzero -> bool 1). Differentiable between f32 and
 * f64: the gradient is converted back.
 * @return AG_ERR_DTYPE for an invalid dtype.
 */
AG_API ag_status ag_op_cast(ag_tensor **out, const ag_tensor *x, ag_dtype dtype) AG_NOEXCEPT;

/* ---- introspection ---- */

/** Number of ops this library provides: the ag_op_<name> functions other than ag_op_count and ag_op_name. */
AG_API int32_t ag_op_count(void) AG_NOEXCEPT;

/**
 * Name of op `index` (0 <= index < ag_op_count()), without the "ag_op_"
 * prefix, e.g. "mul"; NULL when out of range. Static string.
 */
AG_API const char *ag_op_name(int32_t index) AG_NOEXCEPT;

AG_END_DECLS

#endif /* AG_OPS_H */
