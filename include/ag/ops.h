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
/**
 * y = a + alpha * b (PyTorch's add with alpha; a - alpha * b is alpha
 * negated). The product is rounded to the dtype before the sum. Recorded as
 * a product and a sum (grad_fn "AddBackward"): da = g, db = alpha * g, each
 * summed back to its input's shape. Since 0.2.
 */
AG_API ag_status ag_op_add_scaled(ag_tensor **out, const ag_tensor *a, const ag_tensor *b, double alpha) AG_NOEXCEPT;
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

/* ---- elementwise math, one input: y = f(x), same shape ----
 * Floating inputs only (AG_ERR_DTYPE otherwise); AG_ERR_INVALID_ARGUMENT for
 * a NULL out, a NULL or released x. IEEE special values as C's <math.h>
 * (NaN in, NaN out; e.g. sqrt(-1) = NaN, log2(0) = -inf, asin(2) = NaN).
 * Results are within a few ulp of the exact value (ABI.md lists bounds); they
 * may differ between SIMD targets. Gradients are the textbook derivatives. */

/** y = |x|. Gradient: sign(x), 0 at x = 0. */
AG_API ag_status ag_op_abs(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
/** y = -1, 0 or 1 by the sign of x (+-0 and NaN are passed through). Gradient: 0. */
AG_API ag_status ag_op_sign(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
/** y = e^x - 1, accurate near 0. */
AG_API ag_status ag_op_expm1(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
/** y = ln(1 + x), accurate near 0 (-inf at -1, NaN below). */
AG_API ag_status ag_op_log1p(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
/** y = log2 x (-inf at 0, NaN below 0). */
AG_API ag_status ag_op_log2(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
/** y = log10 x (-inf at 0, NaN below 0), ln x / ln 10 rounded twice (within 2 ulp). Gradient 1 / (x ln 10). */
AG_API ag_status ag_op_log10(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
/** y = sqrt x, correctly rounded (NaN below 0). Gradient 1 / (2 y). */
AG_API ag_status ag_op_sqrt(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
/** y = 1 / sqrt x (inf at 0). */
AG_API ag_status ag_op_rsqrt(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
/** y = x * x. */
AG_API ag_status ag_op_square(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
/** y = 1 / x (+-inf at +-0). */
AG_API ag_status ag_op_reciprocal(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
/**
 * y = sin x, cos x, tan x (radians; NaN for infinite x). Accurate (ABI.md)
 * for |x| <= 1e4; beyond, the argument reduction loses digits.
 */
AG_API ag_status ag_op_sin(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
AG_API ag_status ag_op_cos(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
AG_API ag_status ag_op_tan(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
/** y = asin x, acos x (NaN for |x| > 1), atan x. */
AG_API ag_status ag_op_asin(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
AG_API ag_status ag_op_acos(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
AG_API ag_status ag_op_atan(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
/** y = sinh x, cosh x (+-inf on overflow). */
AG_API ag_status ag_op_sinh(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
AG_API ag_status ag_op_cosh(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
/** y = erf x, the error function. Gradient (2 / sqrt pi) e^(-x^2). */
AG_API ag_status ag_op_erf(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
/**
 * Rounding to an integral value: floor, ceil, round (halfway cases to even,
 * as PyTorch and NumPy: round(2.5) = 2), trunc (toward zero). +-0, +-inf and
 * NaN are passed through. Gradient: 0 everywhere (recorded, so a graph that
 * goes through them still runs).
 */
AG_API ag_status ag_op_floor(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
AG_API ag_status ag_op_ceil(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
AG_API ag_status ag_op_round(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
AG_API ag_status ag_op_trunc(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;

/* ---- activations: y = f(x), same shape; errors as above ----
 * Subgradients at kinks follow PyTorch: relu'(0) = 0, leaky_relu'(0) =
 * negative_slope, elu'(0) = alpha, hardtanh' = 0 at the bounds, clamp' = 1
 * at the bounds. Where the gradient is 0 (relu, hardtanh, clamp, and
 * maximum/minimum below) it is selected, not multiplied by 0: a NaN or inf
 * arriving from downstream gives 0 there, as in PyTorch (sqrt(relu(x)) at
 * x = -1 has gradient 0). */

/** y = 1 / (1 + e^-x). Gradient through ag_op_sigmoid_backward. */
AG_API ag_status ag_op_sigmoid(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
/**
 * y = grad * s * (1 - s): the gradient through sigmoid given the upstream
 * gradient `grad` and sigmoid's output `s`, fused into one pass; broadcasts;
 * differentiable in both inputs (higher derivatives of sigmoid).
 * @return AG_ERR_SHAPE, AG_ERR_DTYPE, AG_ERR_CONTEXT as binary ops.
 */
AG_API ag_status ag_op_sigmoid_backward(ag_tensor **out, const ag_tensor *grad, const ag_tensor *s) AG_NOEXCEPT;
/** y = max(x, 0) (NaN stays NaN). Gradient 0 where y <= 0, else 1 (also for NaN, as PyTorch). */
AG_API ag_status ag_op_relu(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
/** y = x for x > 0, else negative_slope * x (PyTorch's default slope: 0.01). */
AG_API ag_status ag_op_leaky_relu(ag_tensor **out, const ag_tensor *x, double negative_slope) AG_NOEXCEPT;
/**
 * y = x for x > 0, else alpha * (e^x - 1) (PyTorch's default alpha: 1).
 * Gradient 1 for x > 0, else alpha e^x; second derivative alpha e^x for
 * x < 0, else 0 (at x = 0 too, as PyTorch; no overflow for large x).
 */
AG_API ag_status ag_op_elu(ag_tensor **out, const ag_tensor *x, double alpha) AG_NOEXCEPT;
/**
 * y = scale * elu(x, alpha) with alpha = 1.6732632423543772, scale =
 * 1.0507009873554805; derivatives as ag_op_elu's, times scale.
 */
AG_API ag_status ag_op_selu(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
/** y = x * sigmoid(x) (swish). Gradient through ag_op_silu_backward. */
AG_API ag_status ag_op_silu(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
/**
 * y = ln(1 + e^(beta x)) / beta, and y = x where beta * x > threshold
 * (PyTorch's defaults: beta 1, threshold 20). Gradient sigmoid(beta x), 1
 * above the threshold; at beta x = threshold the gradient is
 * sigmoid(threshold) and the second derivative 0 (as PyTorch).
 * @return AG_ERR_INVALID_ARGUMENT also when beta is 0 or NaN or threshold is NaN.
 */
AG_API ag_status ag_op_softplus(ag_tensor **out, const ag_tensor *x, double beta, double threshold) AG_NOEXCEPT;
/** y = x * tanh(softplus(x)) (softplus with beta 1, threshold 20). Gradient through ag_op_mish_backward. */
AG_API ag_status ag_op_mish(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
/**
 * y = x clamped to [min_val, max_val] (PyTorch's defaults: -1, 1). Gradient
 * 1 strictly inside (and for NaN x, as PyTorch), 0 at and beyond the bounds.
 * @return AG_ERR_INVALID_ARGUMENT also when min_val > max_val or a bound is NaN.
 */
AG_API ag_status ag_op_hardtanh(ag_tensor **out, const ag_tensor *x, double min_val, double max_val) AG_NOEXCEPT;
/**
 * y = min(max(x, min), max). A NaN bound means "no bound" on that side (pass
 * NAN for PyTorch's None). With min > max every element is max (as PyTorch).
 * NaN elements stay NaN. Gradient 1 where min <= x <= max, else 0 (NaN x: 0,
 * as PyTorch).
 */
AG_API ag_status ag_op_clamp(ag_tensor **out, const ag_tensor *x, double min, double max) AG_NOEXCEPT;
/**
 * y = x * Phi(x), Phi the standard normal CDF (exact GELU, PyTorch's
 * approximate='none'). Gradient through ag_op_gelu_backward.
 */
AG_API ag_status ag_op_gelu(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
/**
 * y = x / 2 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))): GELU with the
 * tanh approximation (PyTorch's approximate='tanh').
 */
AG_API ag_status ag_op_gelu_tanh(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;

/**
 * Fused gradients of activations: y = grad * f'(x) for f = silu, mish, gelu,
 * gelu_tanh, given the upstream gradient `grad` and f's input `x`, in one
 * pass (the ops' backward uses them). They broadcast and are differentiable
 * in both inputs (higher derivatives of f).
 * @return AG_ERR_SHAPE, AG_ERR_DTYPE, AG_ERR_CONTEXT, AG_ERR_INVALID_ARGUMENT as binary ops.
 */
AG_API ag_status ag_op_silu_backward(ag_tensor **out, const ag_tensor *grad, const ag_tensor *x) AG_NOEXCEPT;
AG_API ag_status ag_op_mish_backward(ag_tensor **out, const ag_tensor *grad, const ag_tensor *x) AG_NOEXCEPT;
AG_API ag_status ag_op_gelu_backward(ag_tensor **out, const ag_tensor *grad, const ag_tensor *x) AG_NOEXCEPT;
AG_API ag_status ag_op_gelu_tanh_backward(ag_tensor **out, const ag_tensor *grad, const ag_tensor *x) AG_NOEXCEPT;

/* ---- elementwise math, two inputs with broadcasting ----
 * Errors as for ag_op_add (AG_ERR_SHAPE, AG_ERR_DTYPE, AG_ERR_CONTEXT,
 * AG_ERR_INVALID_ARGUMENT). */

/**
 * y = a ** b (C pow semantics, e.g. a negative base with a non-integral
 * exponent is NaN). Gradients: b * a^(b-1) for a (0 where b = 0);
 * a^b * ln a for b (0 where a = 0 and b >= 0, as PyTorch). Its derivatives
 * in b are 0 there too (0^b = 0 for b > 0; PyTorch gives NaN from 0 * ln 0).
 */
AG_API ag_status ag_op_pow(ag_tensor **out, const ag_tensor *a, const ag_tensor *b) AG_NOEXCEPT;
/**
 * y = max(a, b), min(a, b); NaN if either is NaN. At ties the gradient is
 * split half and half between a and b; where the result is NaN both get the
 * whole gradient; the input not selected gets 0, selected (as PyTorch).
 */
AG_API ag_status ag_op_maximum(ag_tensor **out, const ag_tensor *a, const ag_tensor *b) AG_NOEXCEPT;
AG_API ag_status ag_op_minimum(ag_tensor **out, const ag_tensor *a, const ag_tensor *b) AG_NOEXCEPT;
/** y = atan2(a, b): the angle in [-pi, pi] of the point (b, a) (C atan2 special values). */
AG_API ag_status ag_op_atan2(ag_tensor **out, const ag_tensor *a, const ag_tensor *b) AG_NOEXCEPT;
/**
 * y = fmod(a, b) = a - trunc(a / b) * b, exact, with the sign of a (C fmod);
 * y = remainder(a, b) = a - floor(a / b) * b, with the sign of b (Python's %,
 * PyTorch's remainder). b = 0 gives NaN. Gradients: 1 for a;
 * -trunc(a / b) (fmod) or -floor(a / b) (remainder) for b.
 */
AG_API ag_status ag_op_fmod(ag_tensor **out, const ag_tensor *a, const ag_tensor *b) AG_NOEXCEPT;
AG_API ag_status ag_op_remainder(ag_tensor **out, const ag_tensor *a, const ag_tensor *b) AG_NOEXCEPT;
/**
 * y = sqrt(a^2 + b^2), computed so (it overflows to inf where a^2 + b^2 does,
 * unlike C's hypot). Gradients: a / y for a, b / y for b (NaN at a = b = 0).
 */
AG_API ag_status ag_op_hypot(ag_tensor **out, const ag_tensor *a, const ag_tensor *b) AG_NOEXCEPT;
/**
 * y = log(e^a + e^b), without overflow (max(a, b) + log1p(e^-|a - b|)).
 * Gradients: e^(a - y) for a, e^(b - y) for b.
 */
AG_API ag_status ag_op_logaddexp(ag_tensor **out, const ag_tensor *a, const ag_tensor *b) AG_NOEXCEPT;

/* ---- more elementwise math, special functions and activations (0.2) ----
 * Same rules as the sections above: floating inputs (AG_ERR_DTYPE
 * otherwise), NULL or released inputs AG_ERR_INVALID_ARGUMENT, NaN in gives
 * NaN out unless said. The functions and their attributes are PyTorch's of
 * the same name (torch, torch.special or torch.nn.functional); gradients
 * follow PyTorch's conventions at the points where the derivative is not
 * defined, as each comment says. erfinv, lgamma, digamma and polygamma are
 * computed one element at a time in double (no SIMD form). */

/** y = 2^x (exact for integral x). Gradient: y ln 2. */
AG_API ag_status ag_op_exp2(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
/** y = erfc(x) = 1 - erf(x), accurate in the upper tail. Gradient: -2/sqrt(pi) e^(-x^2). */
AG_API ag_status ag_op_erfc(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
/**
 * y = erfinv(x), the inverse of erf on (-1, 1): +-inf at +-1, NaN beyond.
 * Gradient: sqrt(pi)/2 e^(y^2).
 */
AG_API ag_status ag_op_erfinv(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
/** y = ln |Gamma(x)| (+inf at 0 and the negative integers). Gradient: digamma(x). */
AG_API ag_status ag_op_lgamma(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
/**
 * y = digamma(x) = Gamma'(x) / Gamma(x): -inf at +0, +inf at -0, NaN at the
 * negative integers (PyTorch's values). Gradient: polygamma(1, x).
 */
AG_API ag_status ag_op_digamma(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
/**
 * y = polygamma(n, x) with n = `order`, the n-th derivative of digamma (n = 0:
 * digamma; argument order as torch.polygamma): (-1)^(n+1) n! zeta(n + 1, x),
 * with (-1)^(n+1) inf at the poles x = 0, -1, -2, ... (PyTorch's formula gives
 * large finite values or NaN there), NaN at -inf, 0 at +inf for n >= 1 (the
 * limit; PyTorch: NaN). For n >= 2 and x below
 * -1e7 the result is NaN (not computed). Gradient: polygamma(n + 1, x).
 * @return AG_ERR_INVALID_ARGUMENT for order < 0.
 */
AG_API ag_status ag_op_polygamma(ag_tensor **out, int64_t order, const ag_tensor *x) AG_NOEXCEPT;
/**
 * y = log(z / (1 - z)) with z = x clamped to [eps, 1 - eps]; eps negative or
 * NaN means no clamping (PyTorch's eps=None). Gradient: 1 / (x (1 - x)), and
 * 0 outside [eps, 1 - eps] when clamping, NaN outside [0, 1] when not (PyTorch's).
 */
AG_API ag_status ag_op_logit(ag_tensor **out, const ag_tensor *x, double eps) AG_NOEXCEPT;
/**
 * y = sin(pi x) / (pi x), 1 at 0. Gradient: (cos(pi x) - y) / x, by its Taylor
 * series near 0 (0 at x = 0, second derivative -pi^2/3 there; PyTorch's
 * formula cancels near 0 and its second derivative is NaN at 0).
 */
AG_API ag_status ag_op_sinc(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
/** y = asinh x. Gradient: 1 / sqrt(x^2 + 1). */
AG_API ag_status ag_op_asinh(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
/** y = acosh x (NaN below 1). Gradient: 1 / sqrt(x^2 - 1). */
AG_API ag_status ag_op_acosh(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
/** y = atanh x (+-inf at +-1, NaN beyond). Gradient: 1 / (1 - x^2). */
AG_API ag_status ag_op_atanh(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
/**
 * y = |a| with the sign of b (C copysign, broadcasting). Gradients: y / a
 * (+-1) for a, 0 where a = 0; 0 for b (PyTorch's). The gradient is a constant:
 * its derivative is 0 (PyTorch's is NaN at a = 0).
 */
AG_API ag_status ag_op_copysign(ag_tensor **out, const ag_tensor *a, const ag_tensor *b) AG_NOEXCEPT;
/** y = x - trunc(x) (sign of x; +-inf gives NaN). Gradient: 1. */
AG_API ag_status ag_op_frac(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
/**
 * y = x with NaN replaced by `nan`, +inf by `posinf`, -inf by `neginf`; a NaN
 * posinf or neginf means PyTorch's None: the dtype's largest or lowest
 * finite value. Gradient: 1 where x is finite, else 0.
 */
AG_API ag_status ag_op_nan_to_num(ag_tensor **out, const ag_tensor *x, double nan, double posinf,
                                  double neginf) AG_NOEXCEPT;
/**
 * y = a log b, 0 where a = 0 (NaN where b is NaN), broadcasting.
 * Gradients: log b for a (0 where a = 0 and b <= 0, as PyTorch 1.13); a / b for b.
 */
AG_API ag_status ag_op_xlogy(ag_tensor **out, const ag_tensor *a, const ag_tensor *b) AG_NOEXCEPT;
/**
 * y = input + value * tensor1 * tensor2 (addcmul) or input + value * tensor1 /
 * tensor2 (addcdiv), the three broadcast together; computed as (value *
 * tensor1) op tensor2, as PyTorch. Gradients: those of the products, sums and
 * quotients they are composed of.
 */
AG_API ag_status ag_op_addcmul(ag_tensor **out, const ag_tensor *input, const ag_tensor *tensor1,
                               const ag_tensor *tensor2, double value) AG_NOEXCEPT;
AG_API ag_status ag_op_addcdiv(ag_tensor **out, const ag_tensor *input, const ag_tensor *tensor1,
                               const ag_tensor *tensor2, double value) AG_NOEXCEPT;

/** y = min(max(x, 0), 6) = hardtanh(x, 0, 6). Gradient: 1 on (0, 6), else 0. */
AG_API ag_status ag_op_relu6(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
/**
 * y = x relu6(x + 3) / 6. Gradient (PyTorch's): 0 below -3, x/3 + 1/2 on
 * [-3, 3], 1 above (a NaN x gets 1); its derivative is 1/3 on (-3, 3), else 0.
 */
AG_API ag_status ag_op_hardswish(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
/** y = relu6(x + 3) / 6. Gradient: 1/6 on (-3, 3), else 0. */
AG_API ag_status ag_op_hardsigmoid(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
/** y = x / (1 + |x|). Gradient: 1 / (1 + |x|)^2. */
AG_API ag_status ag_op_softsign(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
/** y = log(sigmoid(x)) = min(x, 0) - log1p(e^-|x|), no overflow. Gradient: sigmoid(-x). */
AG_API ag_status ag_op_logsigmoid(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
/**
 * y = a * sigmoid(b) where a and b are the first and second halves of x along
 * `dim` (negative counts from the end).
 * @return AG_ERR_INVALID_ARGUMENT (dim out of range, or x has 0 dims),
 *         AG_ERR_SHAPE (x's size along dim is odd).
 */
AG_API ag_status ag_op_glu(ag_tensor **out, const ag_tensor *x, int64_t dim) AG_NOEXCEPT;
/**
 * y = x for x > 0, else alpha (e^(x / alpha) - 1). Gradient: 1 for x > 0, else
 * e^(x / alpha) (its derivative is 0 at x = 0, as PyTorch's).
 * @return AG_ERR_INVALID_ARGUMENT for alpha 0 or NaN.
 */
AG_API ag_status ag_op_celu(ag_tensor **out, const ag_tensor *x, double alpha) AG_NOEXCEPT;
/**
 * y = x for x > 0, else weight * x, weight holding one slope (shape () or
 * (1)) or one per channel (shape (C), C = x's size along dim 1; x with fewer
 * than 2 dims has one channel). Gradients: 1 or weight for x (weight at
 * x = 0); the sum of x over x <= 0 for each slope.
 * @return AG_ERR_SHAPE for a weight of another size or more than 1 dim.
 */
AG_API ag_status ag_op_prelu(ag_tensor **out, const ag_tensor *x, const ag_tensor *weight) AG_NOEXCEPT;
/** y = x where x > threshold, else value. Gradient: 1 where x > threshold, else 0. */
AG_API ag_status ag_op_threshold(ag_tensor **out, const ag_tensor *x, double threshold, double value) AG_NOEXCEPT;
/**
 * softshrink: y = x - lambd above lambd, x + lambd below -lambd, else 0;
 * hardshrink: y = x outside [-lambd, lambd], else 0 (softshrink(NaN) = 0, hardshrink(NaN) = NaN,
 * as PyTorch 1.13). Gradient: 1 outside
 * [-lambd, lambd], else 0. PyTorch's default lambd is 0.5.
 * @return AG_ERR_INVALID_ARGUMENT for a negative (softshrink) or NaN lambd.
 */
AG_API ag_status ag_op_softshrink(ag_tensor **out, const ag_tensor *x, double lambd) AG_NOEXCEPT;
AG_API ag_status ag_op_hardshrink(ag_tensor **out, const ag_tensor *x, double lambd) AG_NOEXCEPT;
/** y = x - tanh x. Gradient: tanh(x)^2. */
AG_API ag_status ag_op_tanhshrink(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;

/* ---- comparisons: bool result (AG_BOOL, 0 or 1), broadcasting ----
 * a == b, a != b, a < b, a <= b, a > b, a >= b. Any comparison with NaN is
 * false except ne. Not differentiable: the result never requires grad.
 * Errors as for ag_op_add. */

AG_API ag_status ag_op_eq(ag_tensor **out, const ag_tensor *a, const ag_tensor *b) AG_NOEXCEPT;
AG_API ag_status ag_op_ne(ag_tensor **out, const ag_tensor *a, const ag_tensor *b) AG_NOEXCEPT;
AG_API ag_status ag_op_lt(ag_tensor **out, const ag_tensor *a, const ag_tensor *b) AG_NOEXCEPT;
AG_API ag_status ag_op_le(ag_tensor **out, const ag_tensor *a, const ag_tensor *b) AG_NOEXCEPT;
AG_API ag_status ag_op_gt(ag_tensor **out, const ag_tensor *a, const ag_tensor *b) AG_NOEXCEPT;
AG_API ag_status ag_op_ge(ag_tensor **out, const ag_tensor *a, const ag_tensor *b) AG_NOEXCEPT;

/* ---- selection and interpolation, three inputs broadcast together ---- */

/**
 * y = cond ? a : b elementwise; cond is AG_BOOL, a and b one floating dtype;
 * the three broadcast together. Gradients: where(cond, g, 0) for a,
 * where(cond, 0, g) for b (cond gets none).
 * @return AG_ERR_DTYPE when cond is not bool or a, b differ or are not
 *         floating; AG_ERR_SHAPE, AG_ERR_CONTEXT, AG_ERR_INVALID_ARGUMENT as
 *         binary ops.
 */
AG_API ag_status ag_op_where(ag_tensor **out, const ag_tensor *cond, const ag_tensor *a,
                             const ag_tensor *b) AG_NOEXCEPT;
/**
 * y = a + weight * (b - a) (computed as b - (b - a) * (1 - weight) where
 * |weight| >= 1/2, so weight = 1 gives b exactly, as PyTorch); the three
 * broadcast together. Gradients: 1 - weight, weight, b - a.
 * @return as binary ops (all three of one floating dtype).
 */
AG_API ag_status ag_op_lerp(ag_tensor **out, const ag_tensor *a, const ag_tensor *b,
                            const ag_tensor *weight) AG_NOEXCEPT;

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
