/*
 * ag/optim.h - optimizers (torch.optim semantics), gradient clipping and
 * learning-rate schedules.
 *
 * An optimizer holds references to its parameters (leaf tensors, f32 or f64,
 * contiguous, writable) in parameter groups, each with its own
 * hyper-parameters, and per-parameter state (moment buffers, step count).
 * ag_optimizer_step updates every parameter that has a gradient in place,
 * with one fused pass over its data, gradient and state, outside any graph:
 * the parameter's version counter is bumped (as an in-place op does), no
 * node is recorded, grad mode does not matter. The updates follow PyTorch's
 * single-tensor formulas of torch.optim (1.13) operation by operation, in
 * the parameter's dtype; they are elementwise, so the result has the same
 * bits at any thread count.
 *
 * Parameters are numbered 0, 1, ... in the order they were added, across
 * groups (as in PyTorch's state_dict).
 *
 * Thread-safety: an optimizer is used by one thread at a time; step writes
 * its parameters and reads their gradients (exclusive use of both).
 *
 * Added in version 0.2 (symbol version AG_0.2).
 */
#ifndef AG_OPTIM_H
#define AG_OPTIM_H

#include "ag/common.h"
#include "ag/tensor.h"

AG_BEGIN_DECLS

/** Opaque optimizer handle. */
typedef struct ag_optimizer ag_optimizer;

/* Optimizer kinds (ag_optimizer_create). Values are pinned. */
#define AG_OPTIM_SGD 1     /* torch.optim.SGD */
#define AG_OPTIM_ADAM 2    /* torch.optim.Adam */
#define AG_OPTIM_ADAMW 3   /* torch.optim.AdamW */
#define AG_OPTIM_RMSPROP 4 /* torch.optim.RMSprop */
#define AG_OPTIM_ADAGRAD 5 /* torch.optim.Adagrad */

/* Bits of ag_optimizer_options.zero_fields: the field is meant as 0, not as
 * "the default". */
#define AG_OPTIM_ZERO_LR 1
#define AG_OPTIM_ZERO_BETA1 2
#define AG_OPTIM_ZERO_BETA2 4
#define AG_OPTIM_ZERO_EPS 8
#define AG_OPTIM_ZERO_ALPHA 16
#define AG_OPTIM_ZERO_WEIGHT_DECAY 32

/**
 * Hyper-parameters of an optimizer or a parameter group. Append-only;
 * struct_size first. A field left 0 takes the default of the kind (as in
 * torch.optim) unless its AG_OPTIM_ZERO_* bit is set in zero_fields; fields
 * a kind does not use must be 0.
 */
typedef struct ag_optimizer_options {
  uint32_t struct_size;
  uint32_t zero_fields;     /* AG_OPTIM_ZERO_* bits */
  double lr;                /* 0: 1e-3 (SGD, Adam, AdamW), 1e-2 (RMSprop, Adagrad) */
  double momentum;          /* SGD, RMSprop; default 0 */
  double dampening;         /* SGD; default 0 */
  double weight_decay;      /* 0: 0, except AdamW: 1e-2 (decoupled) */
  double beta1;             /* Adam, AdamW; 0: 0.9 */
  double beta2;             /* Adam, AdamW; 0: 0.999 */
  double eps;               /* 0: 1e-8 (Adam, AdamW, RMSprop), 1e-10 (Adagrad) */
  double alpha;             /* RMSprop smoothing constant; 0: 0.99 */
  double lr_decay;          /* Adagrad; default 0 */
  double initial_accumulator_value; /* Adagrad; default 0 */
  int32_t nesterov;         /* SGD: Nesterov momentum (needs momentum > 0, dampening 0) */
  int32_t amsgrad;          /* Adam, AdamW */
  int32_t centered;         /* RMSprop */
  int32_t maximize;         /* every kind: ascend instead of descend */
} ag_optimizer_options;

#define AG_OPTIMIZER_OPTIONS_INIT {(uint32_t)sizeof(ag_optimizer_options), 0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0, 0, 0, 0}

/** Fill `opts` with the defaults (same bytes as AG_OPTIMIZER_OPTIONS_INIT). AG_ERR_INVALID_ARGUMENT for NULL. */
AG_API ag_status ag_optimizer_options_init(ag_optimizer_options *opts) AG_NOEXCEPT;

/**
 * Create an optimizer without parameters.
 * @param[out] out  the new optimizer (caller releases with ag_optimizer_release).
 * @param kind      AG_OPTIM_*.
 * @param opts      the default hyper-parameters of its groups; NULL for defaults.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL out, unknown kind, bad
 *         struct_size, a negative or NaN hyper-parameter, beta1/beta2/alpha
 *         not in [0, 1), nesterov without momentum or with dampening, a field
 *         the kind does not use set); AG_ERR_OUT_OF_MEMORY. Thread-safe.
 */
AG_API ag_status ag_optimizer_create(ag_optimizer **out, int32_t kind, const ag_optimizer_options *opts) AG_NOEXCEPT;

/**
 * Drop the optimizer, its state and its references to the parameters. NULL
 * is a no-op; an invalid handle is ignored and recorded as this thread's
 * last error.
 */
AG_API void ag_optimizer_release(ag_optimizer *opt) AG_NOEXCEPT;

/**
 * Add a parameter group.
 * @param opt     the optimizer.
 * @param params  `num_params` leaf tensors (f32 or f64, contiguous, not
 *                read-only, of one context), each in no group yet; the
 *                optimizer takes a reference to each.
 * @param opts    the group's own hyper-parameters (zero fields take the
 *                kind's defaults, as in ag_optimizer_create); NULL for the
 *                optimizer's.
 * Adagrad's "sum" state is created here (filled with
 * initial_accumulator_value), the other states at the first step that
 * finds a gradient.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (invalid opt or tensor, NULL params
 *         with num_params > 0, num_params < 0, a tensor twice, bad options);
 *         AG_ERR_DTYPE (not f32/f64); AG_ERR_GRAPH (not a leaf);
 *         AG_ERR_UNSUPPORTED (not contiguous, read-only); AG_ERR_CONTEXT;
 *         AG_ERR_OUT_OF_MEMORY. On failure nothing is added.
 */
AG_API ag_status ag_optimizer_add_param_group(ag_optimizer *opt, ag_tensor *const *params, int32_t num_params,
                                              const ag_optimizer_options *opts) AG_NOEXCEPT;

/** Number of parameter groups of `opt`; -1 for NULL or an invalid handle. */
AG_API int32_t ag_optimizer_num_groups(const ag_optimizer *opt) AG_NOEXCEPT;

/** Number of parameters of `opt` over all groups; -1 for NULL or an invalid handle. */
AG_API int32_t ag_optimizer_num_params(const ag_optimizer *opt) AG_NOEXCEPT;

/**
 * One optimization step: every parameter with a gradient is updated in place
 * (version counter bumped); parameters without one are skipped and their
 * state is left alone, as in PyTorch. A gradient that is not contiguous is
 * read through a contiguous copy.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (invalid opt); AG_ERR_OUT_OF_MEMORY
 *         (states and gradient copies are made before any parameter is
 *         written, so then nothing has changed).
 */
AG_API ag_status ag_optimizer_step(ag_optimizer *opt) AG_NOEXCEPT;

/**
 * Set the gradient of every parameter to none (PyTorch's
 * zero_grad(set_to_none=True)): the next backward starts afresh.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (invalid opt).
 */
AG_API ag_status ag_optimizer_zero_grad(ag_optimizer *opt) AG_NOEXCEPT;

/**
 * Set the learning rate of group `group` (0-based), or of every group when
 * `group` is -1 (for schedules).
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (invalid opt, group out of range,
 *         negative or NaN lr).
 */
AG_API ag_status ag_optimizer_set_lr(ag_optimizer *opt, int32_t group, double lr) AG_NOEXCEPT;

/**
 * The learning rate of group `group`.
 * @param[out] out  the learning rate.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (invalid opt, NULL out, group out of range).
 */
AG_API ag_status ag_optimizer_get_lr(const ag_optimizer *opt, int32_t group, double *out) AG_NOEXCEPT;

/**
 * A copy of the state tensor `name` of parameter `param_index`: for SGD
 * "momentum_buffer"; Adam and AdamW "exp_avg", "exp_avg_sq",
 * "max_exp_avg_sq" (amsgrad); RMSprop "square_avg", "momentum_buffer"
 * (momentum > 0), "grad_avg" (centered); Adagrad "sum". Same shape and
 * dtype as the parameter.
 * @param[out] out  a new tensor (caller releases), or NULL with AG_OK while
 *                  the state does not exist yet (before the first step that
 *                  updated the parameter).
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (invalid opt, NULL out or name,
 *         index out of range, a name the kind does not keep); AG_ERR_OUT_OF_MEMORY.
 */
AG_API ag_status ag_optimizer_get_state(const ag_optimizer *opt, int32_t param_index, const char *name,
                                        ag_tensor **out) AG_NOEXCEPT;

/**
 * Restore the state tensor `name` (names as ag_optimizer_get_state) of
 * parameter `param_index` from `value` (copied; same shape and dtype as the
 * parameter, any strides). Setting "momentum_buffer" of SGD makes the next
 * step use it instead of starting it from the gradient.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (invalid opt or value, NULL name,
 *         index out of range, unknown name); AG_ERR_SHAPE; AG_ERR_DTYPE;
 *         AG_ERR_OUT_OF_MEMORY.
 */
AG_API ag_status ag_optimizer_set_state(ag_optimizer *opt, int32_t param_index, const char *name,
                                        const ag_tensor *value) AG_NOEXCEPT;

/**
 * The step count of parameter `param_index`: how many steps updated it.
 * @param[out] out  the count.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (invalid opt, NULL out, index out of range).
 */
AG_API ag_status ag_optimizer_get_step(const ag_optimizer *opt, int32_t param_index, int64_t *out) AG_NOEXCEPT;

/**
 * Restore the step count of parameter `param_index` (>= 0; it drives Adam's
 * bias corrections and Adagrad's lr decay).
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (invalid opt, index out of range, negative step).
 */
AG_API ag_status ag_optimizer_set_step(ag_optimizer *opt, int32_t param_index, int64_t step) AG_NOEXCEPT;

/* ---- gradient clipping (torch.nn.utils) ---- */

/**
 * Scale the gradients of `params` in place so that their joint norm is at
 * most max_norm (torch.nn.utils.clip_grad_norm_): total = the norm_type-norm
 * of the per-gradient norms (norm_type INFINITY: the largest |element|);
 * every gradient is multiplied by min(1, max_norm / (total + 1e-6)).
 * Parameters without a gradient are skipped (total 0 when none has one).
 * Norms are accumulated in double.
 * @param params     `num_params` tensors; may be NULL when num_params is 0.
 * @param[out] total_norm  the total norm before clipping; may be NULL.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (invalid tensor, num_params < 0,
 *         NULL params with num_params > 0, max_norm NaN or negative,
 *         norm_type NaN or <= 0); AG_ERR_UNSUPPORTED (a read-only gradient);
 *         AG_ERR_OUT_OF_MEMORY.
 */
AG_API ag_status ag_clip_grad_norm(ag_tensor *const *params, int32_t num_params, double max_norm,
                                   double norm_type, double *total_norm) AG_NOEXCEPT;

/**
 * Clamp every gradient element of `params` to [-clip_value, clip_value] in
 * place (torch.nn.utils.clip_grad_value_); parameters without a gradient
 * are skipped.
 * @param params  `num_params` tensors; may be NULL when num_params is 0.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (invalid tensor, num_params < 0,
 *         NULL params with num_params > 0, clip_value NaN or negative);
 *         AG_ERR_UNSUPPORTED (a read-only gradient).
 */
AG_API ag_status ag_clip_grad_value(ag_tensor *const *params, int32_t num_params, double clip_value) AG_NOEXCEPT;

/* ---- learning-rate schedules ----
 * Pure functions of the step (epoch) count, the closed forms of PyTorch's
 * schedulers: pass the result to ag_optimizer_set_lr. Thread-safe. */

/**
 * StepLR: base_lr * gamma^floor(step / step_size).
 * @param[out] out  the learning rate.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL out, step < 0, step_size < 1).
 */
AG_API ag_status ag_lr_step_decay(double base_lr, int64_t step, int64_t step_size, double gamma,
                                  double *out) AG_NOEXCEPT;

/**
 * CosineAnnealingLR: eta_min + (base_lr - eta_min) (1 + cos(pi step / t_max)) / 2.
 * @param[out] out  the learning rate.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL out, step < 0, t_max < 1).
 */
AG_API ag_status ag_lr_cosine_annealing(double base_lr, double eta_min, int64_t step, int64_t t_max,
                                        double *out) AG_NOEXCEPT;

/**
 * LinearLR (linear warmup): base_lr * (start_factor + (end_factor -
 * start_factor) min(step, total_steps) / total_steps).
 * @param[out] out  the learning rate.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL out, step < 0, total_steps < 1,
 *         start_factor not in (0, 1], end_factor not in [0, 1]).
 */
AG_API ag_status ag_lr_linear(double base_lr, int64_t step, double start_factor, double end_factor,
                              int64_t total_steps, double *out) AG_NOEXCEPT;

AG_END_DECLS

#endif /* AG_OPTIM_H */
