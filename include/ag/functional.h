/*
 * ag/functional.h - derivatives of a whole user function, given as a C
 * callback (torch.autograd.functional and torch.autograd.gradcheck):
 * vector-Jacobian and Jacobian-vector products, Jacobians, Hessians,
 * Hessian-vector products, and gradient checks against finite differences.
 *
 * The function. Every call below takes an ag_fn with its user_data and runs
 * it, during the call and on the calling thread, one or more times. It
 * computes outputs[0..num_outputs) (new references; ag takes them over;
 * every entry must be set) from inputs[0..num_inputs) (borrowed), usually
 * with ag ops. It runs with grad mode on (it may take gradients itself with
 * ag_grad). It fails by returning a status other than AG_OK, after
 * ag_set_callback_error(message) (ag/hooks.h) to give its reason; the call
 * then fails with AG_ERR_CALLBACK and "fn failed (<status>): <message>".
 * ag checks what it returns: live tensors of the inputs' context, floating
 * dtype (f32 or f64), and one element where the call needs a scalar function
 * (ag_hessian, ag_hvp); anything else is AG_ERR_CALLBACK naming the output.
 * No user_data destroy callback is taken: nothing keeps fn after the call.
 *
 * The inputs. The helpers (all but the gradient checks, which say their own
 * rules) differentiate with respect to every input, which must be a floating
 * tensor (f32 or f64; dtypes may differ) of one context; whether it requires
 * grad does not matter. fn sees each input as a new tensor sharing its data, so
 * the caller's graph is not touched; with create_graph, an input that
 * requires grad keeps its history, so the results can be differentiated
 * again with respect to the caller's inputs.
 *
 * Results are new references (the caller releases them), written only on
 * AG_OK. Without create_graph they are outside any graph. An input that no
 * output depends on gets zeros, or AG_ERR_GRAPH when opts->strict is set.
 */
#ifndef AG_FUNCTIONAL_H
#define AG_FUNCTIONAL_H

#include "ag/common.h"
#include "ag/hooks.h"
#include "ag/tensor.h"

AG_BEGIN_DECLS

/** A user function: outputs[0..num_outputs) of inputs[0..num_inputs) (see above). */
typedef ag_status (*ag_fn)(void *user_data, const ag_tensor *const *inputs, int32_t num_inputs,
                           ag_tensor **outputs, int32_t num_outputs);

/** Options of the functional helpers. Append-only; struct_size first. */
typedef struct ag_functional_options {
  uint32_t struct_size;
  /* Record the computation of the results, so they can be differentiated
   * again (with respect to the inputs, and to inputs of the caller's graph
   * that requires grad). */
  int32_t create_graph;
  /* 1: an input that no output depends on is AG_ERR_GRAPH instead of zeros. */
  int32_t strict;
} ag_functional_options;

#define AG_FUNCTIONAL_OPTIONS_INIT {(uint32_t)sizeof(ag_functional_options), 0, 0}

/** Fill `opts` with the defaults (same bytes as AG_FUNCTIONAL_OPTIONS_INIT). AG_ERR_INVALID_ARGUMENT for NULL. */
AG_API ag_status ag_functional_options_init(ag_functional_options *opts) AG_NOEXCEPT;

/**
 * Vector-Jacobian product: the gradients of sum_o <outputs[o], v[o]> with
 * respect to each input (torch.autograd.functional.vjp).
 * @param[out] vjp      num_inputs entries; vjp[i] has the shape and dtype of inputs[i].
 * @param[out] outputs  NULL, or num_outputs entries receiving fn's outputs.
 * @param v             NULL, or num_outputs entries: v[o] has the shape, dtype
 *                      and context of output o; a NULL entry (or NULL v)
 *                      stands for 1 and needs an output of one element.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL vjp/fn/inputs, num_inputs or
 *   num_outputs < 1, invalid handles, bad struct_size); AG_ERR_DTYPE (a
 *   non-floating input; v[o] of another dtype); AG_ERR_CONTEXT; AG_ERR_SHAPE
 *   (v[o] of another shape; NULL v[o] for an output with numel != 1);
 *   AG_ERR_CALLBACK (fn failed or returned a NULL, dead, non-floating output
 *   or one of another context); AG_ERR_GRAPH (strict, and an input no output
 *   depends on: the message names it); AG_ERR_OUT_OF_MEMORY.
 */
AG_API ag_status ag_vjp(ag_tensor **vjp, ag_tensor **outputs, ag_fn fn, void *user_data,
                        const ag_tensor *const *inputs, int32_t num_inputs, const ag_tensor *const *v,
                        int32_t num_outputs, const ag_functional_options *opts) AG_NOEXCEPT;

/**
 * Jacobian-vector product: the directional derivative sum_i J[o][i] v[i] of
 * each output (torch.autograd.functional.jvp), computed by differentiating a
 * vector-Jacobian product with respect to its cotangent (two reverse passes).
 * @param[out] jvp      num_outputs entries; jvp[o] has the shape and dtype of output o.
 * @param[out] outputs  NULL, or num_outputs entries receiving fn's outputs.
 * @param v             NULL, or num_inputs entries: v[i] has the shape, dtype
 *                      and context of inputs[i]; a NULL entry (or NULL v)
 *                      stands for 1 and needs an input of one element.
 * With strict, an output that depends on no input is AG_ERR_GRAPH.
 * @return as ag_vjp, with v checked against the inputs.
 */
AG_API ag_status ag_jvp(ag_tensor **jvp, ag_tensor **outputs, ag_fn fn, void *user_data,
                        const ag_tensor *const *inputs, int32_t num_inputs, const ag_tensor *const *v,
                        int32_t num_outputs, const ag_functional_options *opts) AG_NOEXCEPT;

/**
 * Jacobians of every output with respect to every input
 * (torch.autograd.functional.jacobian, one reverse pass per output element).
 * @param[out] jacobian  num_outputs * num_inputs entries, row-major by
 *   output: jacobian[o * num_inputs + i] has shape output_o.shape +
 *   inputs[i].shape (so its element [p, q] is d output_o[p] / d inputs[i][q])
 *   and the dtype of inputs[i]. A 0-dim output or input adds no dims.
 * @return as ag_vjp; also AG_ERR_SHAPE when output_o.ndim + inputs[i].ndim
 *   exceeds AG_MAX_DIMS. With strict, AG_ERR_GRAPH names an (output, input)
 *   pair without dependence.
 */
AG_API ag_status ag_jacobian(ag_tensor **jacobian, ag_fn fn, void *user_data, const ag_tensor *const *inputs,
                             int32_t num_inputs, int32_t num_outputs, const ag_functional_options *opts) AG_NOEXCEPT;

/**
 * Hessian of a scalar function (fn is called with num_outputs = 1 and must
 * return one element, of any ndim) (torch.autograd.functional.hessian).
 * @param[out] hessian  num_inputs * num_inputs entries: hessian[i * num_inputs
 *   + j] has shape inputs[i].shape + inputs[j].shape, element [p, q] =
 *   d^2 f / d inputs[i][p] d inputs[j][q], and the dtype of inputs[j].
 * With strict, an input the output does not depend on, and a block (i, j)
 * whose gradient i does not depend on input j (a linear f), are AG_ERR_GRAPH.
 * @return as ag_jacobian; AG_ERR_CALLBACK also for an output with numel != 1.
 */
AG_API ag_status ag_hessian(ag_tensor **hessian, ag_fn fn, void *user_data, const ag_tensor *const *inputs,
                            int32_t num_inputs, const ag_functional_options *opts) AG_NOEXCEPT;

/**
 * Hessian-vector product H v of a scalar function (num_outputs = 1, one
 * element), by differentiating <grad f, v> (torch.autograd.functional.hvp;
 * for a twice continuously differentiable f this equals v^T H, i.e. vhp).
 * @param[out] hvp     num_inputs entries; hvp[i] has the shape and dtype of inputs[i].
 * @param[out] output  NULL, or receives fn's output.
 * @param v            num_inputs entries as in ag_jvp (NULL entries for
 *                     one-element inputs stand for 1; NULL v only if every
 *                     input has one element).
 * With strict, an input that <grad f, v> does not depend on (a linear f) is
 * AG_ERR_GRAPH, as in ag_hessian.
 * @return as ag_vjp; AG_ERR_CALLBACK also for an output with numel != 1.
 */
AG_API ag_status ag_hvp(ag_tensor **hvp, ag_tensor **output, ag_fn fn, void *user_data,
                        const ag_tensor *const *inputs, int32_t num_inputs, const ag_tensor *const *v,
                        const ag_functional_options *opts) AG_NOEXCEPT;

/**
 * Options of the gradient checks. Append-only; struct_size first. A field
 * left 0 takes its default (pass a tiny positive value for a tolerance of
 * practically zero).
 */
typedef struct ag_gradcheck_options {
  uint32_t struct_size;
  int32_t reserved; /* 0 */
  double eps;       /* finite-difference step; 0: 1e-6 */
  double atol;      /* absolute tolerance; 0: 1e-5 */
  double rtol;      /* relative tolerance (of the numerical value); 0: 1e-3 */
} ag_gradcheck_options;

#define AG_GRADCHECK_OPTIONS_INIT {(uint32_t)sizeof(ag_gradcheck_options), 0, 0.0, 0.0, 0.0}

/** Fill `opts` with the defaults (same bytes as AG_GRADCHECK_OPTIONS_INIT). AG_ERR_INVALID_ARGUMENT for NULL. */
AG_API ag_status ag_gradcheck_options_init(ag_gradcheck_options *opts) AG_NOEXCEPT;

/**
 * Outcome of a gradient check: an output struct, written up to the caller's
 * struct_size (which the caller sets, >= 4; struct_size itself is not
 * written). Append-only.
 *
 * Every element pair is compared as |analytical - numerical| <= atol + rtol *
 * |numerical|; NaN on either side fails. The worst element is the one with
 * the largest |analytical - numerical| / (atol + rtol * |numerical|) (the
 * first one on ties; the first NaN).
 */
typedef struct ag_gradcheck_result {
  uint32_t struct_size;
  int32_t passed;         /* 1: every element within tolerance (also when there is nothing to compare); else 0 */
  int32_t input_index;    /* worst element: the input perturbed (-1 when nothing was compared) */
  int32_t output_index;   /* worst element: the output (-1 when nothing was compared) */
  int64_t input_element;  /* row-major index of the element within that input (-1: none) */
  int64_t output_element; /* row-major index of the element within that output (-1: none) */
  double analytical;      /* d output[output_element] / d input[input_element] by backward */
  double numerical;       /* the same by central differences */
  int64_t num_compared;   /* number of element pairs compared */
} ag_gradcheck_result;

#define AG_GRADCHECK_RESULT_INIT {(uint32_t)sizeof(ag_gradcheck_result), 0, 0, 0, 0, 0, 0.0, 0.0, 0}

/** Fill `result` with AG_GRADCHECK_RESULT_INIT. AG_ERR_INVALID_ARGUMENT for NULL. */
AG_API ag_status ag_gradcheck_result_init(ag_gradcheck_result *result) AG_NOEXCEPT;

/**
 * Check the gradients of fn at `inputs` against central finite differences
 * (torch.autograd.gradcheck): the full Jacobian of every output with respect
 * to every input that requires grad, once by backward (one pass per output
 * element) and once by (f(x + eps) - f(x - eps)) / (2 eps) per input element.
 * Inputs that do not require grad are passed through unchanged and not
 * checked. The checked inputs must be f64 (finite differences in f32 are too
 * coarse for any useful tolerance); fn sees copies of them, so the caller's
 * tensors are never modified. fn is called 2 * (checked elements) + 1 times
 * and must return the same output shapes each time.
 *
 * A check that ran returns AG_OK whether it passed or not: `result->passed`
 * says which, and the worst element says where. A distinct status is kept
 * for a check that could not run, so FFI wrappers that turn statuses into
 * exceptions still let the caller read the outcome.
 *
 * @param[out] result  struct_size set by the caller; written on AG_OK only.
 * @param opts         NULL for defaults.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL result/fn/inputs, counts < 1,
 *   invalid handles, struct_size, no input requires grad, a negative or NaN
 *   eps/atol/rtol, nonzero reserved); AG_ERR_DTYPE (a checked input that is
 *   not f64); AG_ERR_CONTEXT; AG_ERR_CALLBACK (fn failed, returned a bad
 *   output, or changed an output's shape between calls); AG_ERR_GRAPH and
 *   the errors of ag_grad from the backward passes; AG_ERR_OUT_OF_MEMORY.
 */
AG_API ag_status ag_gradcheck(ag_gradcheck_result *result, ag_fn fn, void *user_data,
                              const ag_tensor *const *inputs, int32_t num_inputs, int32_t num_outputs,
                              const ag_gradcheck_options *opts) AG_NOEXCEPT;

/**
 * Check second derivatives (torch.autograd.gradgradcheck): ag_gradcheck of
 * the function (inputs..., grad_outputs...) -> the vector-Jacobian product
 * of fn at inputs with cotangents grad_outputs, recorded with create_graph,
 * one output per input that requires grad. Both the checked inputs and the
 * grad_outputs are perturbed.
 * @param grad_outputs  NULL, or num_outputs f64 tensors shaped like fn's
 *   outputs (every one is checked); NULL: fixed pseudo-random values in
 *   [-1, 1], the same on every call.
 * In result: input_index < num_inputs names an input, input_index =
 * num_inputs + o names grad_outputs[o]; output_index names the input of fn
 * whose gradient component is the worst.
 * @return as ag_gradcheck; AG_ERR_DTYPE also for an f32 output or grad_output;
 *   AG_ERR_SHAPE / AG_ERR_CONTEXT for a grad_output not fitting its output.
 */
AG_API ag_status ag_gradgradcheck(ag_gradcheck_result *result, ag_fn fn, void *user_data,
                                  const ag_tensor *const *inputs, int32_t num_inputs,
                                  const ag_tensor *const *grad_outputs, int32_t num_outputs,
                                  const ag_gradcheck_options *opts) AG_NOEXCEPT;

AG_END_DECLS

#endif /* AG_FUNCTIONAL_H */
