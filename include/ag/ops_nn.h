/*
 * ag/ops_nn.h - neural-network ops: softmax, log_softmax and their fused
 * gradients, and losses. The rules of ag/ops.h hold (out-parameter first, written only on
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

/* ---- losses ---- */

/*
 * How a loss reduces its per-element values (an int32_t argument; values
 * frozen): NONE keeps them (the input's shape without the class dim for the
 * classification losses), MEAN averages them (PyTorch's default), SUM adds
 * them. Any other value is AG_ERR_INVALID_ARGUMENT.
 */
#define AG_REDUCTION_NONE 0
#define AG_REDUCTION_MEAN 1
#define AG_REDUCTION_SUM 2

/** The ignore_index PyTorch uses by default: no class index equals it. */
#define AG_IGNORE_INDEX_DEFAULT (-100)

/**
 * Cross entropy between logits and targets, as torch.nn.functional.cross_entropy
 * without class weights.
 * @param input  logits of shape (C), (N, C) or (N, C, d1, ...): the class dim
 *               is 0 for one dim, else 1; f32 or f64.
 * @param target either AG_I64 class indices of input's shape without the
 *               class dim (each in 0..C-1 or equal to ignore_index), or
 *               class probabilities of input's shape and dtype.
 * @param reduction    AG_REDUCTION_NONE / MEAN / SUM. With class indices,
 *               MEAN divides by the number of targets not equal to
 *               ignore_index (NaN if there is none, with gradient 0, as
 *               PyTorch); with probabilities, by
 *               the number of items (numel / C).
 * @param ignore_index targets equal to it add nothing and get zero gradient
 *               (class indices only; AG_IGNORE_INDEX_DEFAULT is PyTorch's -100).
 * @param label_smoothing in [0, 1]: the target distribution becomes
 *               (1 - label_smoothing) * target + label_smoothing / C.
 * Gradients flow to input, and to probability targets.
 * @return AG_ERR_INVALID_ARGUMENT (NULL, bad reduction, label_smoothing
 *         outside [0, 1], a class index out of range: "[ag_op_cross_entropy]
 *         target 10 at index 3 is outside 0..9 (10 classes) and is not
 *         ignore_index -100"); AG_ERR_SHAPE (0-dim input, target shape);
 *         AG_ERR_DTYPE (input not f32/f64, target neither i64 nor the
 *         input's dtype); AG_ERR_CONTEXT.
 */
AG_API ag_status ag_op_cross_entropy(ag_tensor **out, const ag_tensor *input, const ag_tensor *target,
                                     int32_t reduction, int64_t ignore_index, double label_smoothing) AG_NOEXCEPT;

/**
 * Negative log-likelihood of class targets given log-probabilities, as
 * torch.nn.functional.nll_loss without class weights: -input[n, target[n]]
 * (and likewise over extra dims d1, ...). Shapes, ignore_index and the MEAN
 * over counted targets as in ag_op_cross_entropy with class indices.
 * Gradient flows to input.
 * @return AG_ERR_INVALID_ARGUMENT (NULL, bad reduction, class index out of
 *         range); AG_ERR_SHAPE (0-dim input, target shape); AG_ERR_DTYPE
 *         (input not f32/f64, target not i64); AG_ERR_CONTEXT.
 */
AG_API ag_status ag_op_nll_loss(ag_tensor **out, const ag_tensor *input, const ag_tensor *target, int32_t reduction,
                                int64_t ignore_index) AG_NOEXCEPT;

/**
 * Mean squared error: (input - target)^2 elementwise (broadcasting as
 * ag_op_sub), then the reduction (NONE keeps the broadcast shape; MEAN of an
 * empty tensor is NaN). Gradients flow to both.
 * @return AG_ERR_INVALID_ARGUMENT (NULL, bad reduction), AG_ERR_SHAPE,
 *         AG_ERR_DTYPE, AG_ERR_CONTEXT.
 */
AG_API ag_status ag_op_mse_loss(ag_tensor **out, const ag_tensor *input, const ag_tensor *target,
                                int32_t reduction) AG_NOEXCEPT;

/**
 * Mean absolute error: |input - target| elementwise (broadcasting), then the
 * reduction. The gradient is sign(input - target), 0 where they are equal.
 * @return AG_ERR_INVALID_ARGUMENT (NULL, bad reduction), AG_ERR_SHAPE,
 *         AG_ERR_DTYPE, AG_ERR_CONTEXT.
 */
AG_API ag_status ag_op_l1_loss(ag_tensor **out, const ag_tensor *input, const ag_tensor *target,
                               int32_t reduction) AG_NOEXCEPT;

/**
 * Smooth L1: with d = input - target (broadcasting), 0.5 d^2 / beta where
 * |d| < beta, else |d| - 0.5 beta; then the reduction. beta = 0 gives
 * ag_op_l1_loss (PyTorch's default beta is 1.0).
 * @return AG_ERR_INVALID_ARGUMENT (NULL, bad reduction, beta negative, NaN
 *         or infinite), AG_ERR_SHAPE, AG_ERR_DTYPE, AG_ERR_CONTEXT.
 */
AG_API ag_status ag_op_smooth_l1_loss(ag_tensor **out, const ag_tensor *input, const ag_tensor *target,
                                      int32_t reduction, double beta) AG_NOEXCEPT;

/**
 * Huber: with d = input - target (broadcasting), 0.5 d^2 where |d| < delta,
 * else delta (|d| - 0.5 delta); then the reduction (PyTorch's default delta
 * is 1.0).
 * @return AG_ERR_INVALID_ARGUMENT (NULL, bad reduction, delta not finite and
 *         > 0), AG_ERR_SHAPE, AG_ERR_DTYPE, AG_ERR_CONTEXT.
 */
AG_API ag_status ag_op_huber_loss(ag_tensor **out, const ag_tensor *input, const ag_tensor *target,
                                  int32_t reduction, double delta) AG_NOEXCEPT;

/**
 * Binary cross entropy of probabilities: -(t log p + (1 - t) log(1 - p)) with
 * p = input in [0, 1] and t = target of the same shape and dtype; each log is
 * clamped at -100 as in PyTorch, so p = 0 or 1 gives a finite loss. Then the
 * reduction. Gradients flow to input and target. The gradient is that of
 * the clamped loss: the clamped log contributes 0, so p = 0 gives
 * (1 - t) / (1 - p) and p = 1 gives -t / p (PyTorch divides p - t by
 * max(p (1 - p), 1e-12) instead: about -t * 1e12 at p = 0).
 * @return AG_ERR_INVALID_ARGUMENT (NULL, bad reduction, an input outside
 *         [0, 1]: "[ag_op_binary_cross_entropy] input 1.5 at index 2 is
 *         outside [0, 1]"), AG_ERR_SHAPE (shapes differ), AG_ERR_DTYPE,
 *         AG_ERR_CONTEXT.
 */
AG_API ag_status ag_op_binary_cross_entropy(ag_tensor **out, const ag_tensor *input, const ag_tensor *target,
                                            int32_t reduction) AG_NOEXCEPT;

/**
 * Binary cross entropy of logits x = input and targets t (same shape and
 * dtype), computed stably as (1 - t) x + w (log(1 + exp(-|x|)) + max(-x, 0))
 * with w = 1 + (pos_weight - 1) t; then the reduction. The gradient for
 * input is exact everywhere, x = 0 included: (1 - t) - w sigmoid(-x).
 * @param pos_weight NULL, or weights of positive examples that broadcast to
 *        input's shape (typically one per class, shape (C)).
 * Gradients flow to input, target and pos_weight.
 * @return AG_ERR_INVALID_ARGUMENT (NULL input/target, bad reduction),
 *         AG_ERR_SHAPE (target shape differs; pos_weight does not
 *         broadcast), AG_ERR_DTYPE, AG_ERR_CONTEXT.
 */
AG_API ag_status ag_op_binary_cross_entropy_with_logits(ag_tensor **out, const ag_tensor *input,
                                                        const ag_tensor *target, const ag_tensor *pos_weight,
                                                        int32_t reduction) AG_NOEXCEPT;

/**
 * Scaled dot-product attention (F.scaled_dot_product_attention, math path):
 * softmax(query key^T * scale + mask) value for query (..., L, E), key
 * (..., S, E), value (..., S, Ev), batch dims broadcast; y (..., L, Ev).
 * attn_mask (may be NULL) broadcasts to (..., L, S): bool (true = may
 * attend; false gives the score -inf) or of query's dtype (added).
 * is_causal != 0 masks j > i (then attn_mask must be NULL). scale 0 means
 * 1/sqrt(E). dropout_p > 0 drops attention weights as ag_op_dropout does
 * (from the context's generator). A row with every position masked gives
 * NaN, as PyTorch's math path. Gradients of every order (composition).
 * @return AG_ERR_SHAPE for fewer than 2 dims, mismatched E or S;
 *         AG_ERR_INVALID_ARGUMENT for dropout_p outside [0, 1], a negative or
 *         non-finite scale, a mask with is_causal; also DTYPE, CONTEXT.
 */
AG_API ag_status ag_op_scaled_dot_product_attention(ag_tensor **out, const ag_tensor *query,
                                                    const ag_tensor *key, const ag_tensor *value,
                                                    const ag_tensor *attn_mask, double dropout_p,
                                                    int32_t is_causal, double scale) AG_NOEXCEPT;

/**
 * Kullback-Leibler divergence (F.kl_div) of log-probabilities `input` from
 * `target` (broadcast together): pointwise target * (log(target) - input)
 * where target > 0, else 0 (PyTorch 1.13's rule); with log_target != 0,
 * exp(target) * (target - input). AG_REDUCTION_MEAN averages over all
 * elements (PyTorch's 'batchmean' is AG_REDUCTION_SUM divided by the batch
 * size). Gradients in both arguments, of every order.
 * @return AG_ERR_SHAPE for shapes that do not broadcast; AG_ERR_INVALID_ARGUMENT
 *         for another reduction; also DTYPE, CONTEXT.
 */
AG_API ag_status ag_op_kl_div(ag_tensor **out, const ag_tensor *input, const ag_tensor *target,
                              int32_t reduction, int32_t log_target) AG_NOEXCEPT;

/**
 * Poisson negative log likelihood (F.poisson_nll_loss): exp(input) -
 * target * input with log_input != 0, else input - target * log(input +
 * eps); full != 0 adds Stirling's term target*log(target) - target +
 * 0.5*log(2*pi*target) where target > 1. Reduced by `reduction`.
 * @return as ag_op_kl_div; AG_ERR_INVALID_ARGUMENT for a non-finite eps.
 */
AG_API ag_status ag_op_poisson_nll_loss(ag_tensor **out, const ag_tensor *input,
                                        const ag_tensor *target, int32_t log_input, int32_t full,
                                        double eps, int32_t reduction) AG_NOEXCEPT;

/**
 * Gaussian negative log likelihood (F.gaussian_nll_loss): 0.5 * (log(v) +
 * (input - target)^2 / v) with v = max(var, eps) (+ 0.5*log(2*pi) with
 * full); var has input's shape, or input's without the last dim, or a last
 * dim of 1. The clamp passes the gradient unchanged (PyTorch clamps under
 * no_grad).
 * @return AG_ERR_SHAPE for a var that fits none of the shapes;
 *         AG_ERR_INVALID_ARGUMENT for a negative var entry, a non-finite eps,
 *         another reduction; also DTYPE, CONTEXT.
 */
AG_API ag_status ag_op_gaussian_nll_loss(ag_tensor **out, const ag_tensor *input,
                                         const ag_tensor *target, const ag_tensor *var,
                                         int32_t full, double eps, int32_t reduction) AG_NOEXCEPT;

/**
 * F.margin_ranking_loss: max(0, -target * (input1 - input2) + margin), all
 * three broadcast; the gradient passes at 0 (PyTorch's clamp_min).
 * @return AG_ERR_SHAPE for shapes that do not broadcast; AG_ERR_INVALID_ARGUMENT
 *         for a non-finite margin, another reduction; also DTYPE, CONTEXT.
 */
AG_API ag_status ag_op_margin_ranking_loss(ag_tensor **out, const ag_tensor *input1,
                                           const ag_tensor *input2, const ag_tensor *target,
                                           double margin, int32_t reduction) AG_NOEXCEPT;

/**
 * F.cosine_embedding_loss of rows input1, input2 ((N, D) or (D)) and target
 * (N) or 0-dim of 1 / -1: 1 - cos where target == 1, max(0, cos - margin)
 * where target == -1, else 0; cos = x1.x2 / sqrt((|x1|^2 + 1e-12)(|x2|^2 +
 * 1e-12)) as PyTorch.
 * @return AG_ERR_SHAPE for inputs not 1-D or 2-D, not broadcasting, or a
 *         target of another shape; AG_ERR_INVALID_ARGUMENT for a non-finite
 *         margin, another reduction; also DTYPE, CONTEXT.
 */
AG_API ag_status ag_op_cosine_embedding_loss(ag_tensor **out, const ag_tensor *input1,
                                             const ag_tensor *input2, const ag_tensor *target,
                                             double margin, int32_t reduction) AG_NOEXCEPT;

/**
 * F.triplet_margin_loss: max(0, margin + d(anchor, positive) - d(anchor,
 * negative)) with d(x, y) = ||x - y + eps||_p over the last dim (PyTorch's
 * pairwise_distance); swap != 0 uses min(d(a, n), d(p, n)) (ties share the
 * gradient). The three inputs have the same number of dims (>= 1).
 * @return AG_ERR_SHAPE for other ranks or shapes that do not broadcast;
 *         AG_ERR_INVALID_ARGUMENT for p <= 0 or not finite, a non-finite
 *         margin or eps, another reduction; also DTYPE, CONTEXT.
 */
AG_API ag_status ag_op_triplet_margin_loss(ag_tensor **out, const ag_tensor *anchor,
                                           const ag_tensor *positive, const ag_tensor *negative,
                                           double margin, double p, double eps, int32_t swap,
                                           int32_t reduction) AG_NOEXCEPT;

/* ---- embedding_bag and ctc_loss ---- */

/** Reductions of ag_op_embedding_bag (frozen values, PyTorch's mode numbers). */
#define AG_EMBEDDING_BAG_SUM 0
#define AG_EMBEDDING_BAG_MEAN 1
#define AG_EMBEDDING_BAG_MAX 2

/**
 * F.embedding_bag: out[b, :] = the rows of weight (V, D) picked by the
 * indices of bag b, reduced by `mode` (AG_EMBEDDING_BAG_SUM, _MEAN or _MAX);
 * out is (B, D). Composed of index_select, index_add (sum, mean) and gather
 * (max: of each column's first maximum in the bag, as PyTorch, which also
 * gets the whole gradient), so its gradients of every order are theirs;
 * gradients flow to weight and per_sample_weights (indices and offsets are
 * i64 and never differentiated).
 * @param indices i64, 2-D (B, L): each row is a bag (offsets must be NULL);
 *        or 1-D, cut into bags by offsets.
 * @param offsets NULL for 2-D indices, else the 1-D i64 start of each bag in
 *        indices: offsets[0] == 0, non-decreasing, at most len(indices); the
 *        last bag runs to the end of indices.
 * @param per_sample_weights NULL, or weights of indices' shape and weight's
 *        dtype that scale each picked row (AG_EMBEDDING_BAG_SUM only, as
 *        PyTorch).
 * @param include_last_offset nonzero: offsets holds B + 1 values, the last
 *        the end of the last bag (indices after it are left out); with 2-D
 *        indices the last row is then left out (PyTorch's offsets 0, L,
 *        2L, ... read this way; PyTorch reads out of bounds there).
 * @param padding_idx -1 for none, else a row 0..V-1: entries equal to it are
 *        left out of their bag (they count in no mean and get no gradient).
 *        PyTorch's negative padding_idx p is p + V here.
 * Empty bags (or bags of padding only) give zeros, in every mode.
 * @return AG_ERR_INVALID_ARGUMENT for another mode, padding_idx outside
 *         -1..V-1, an index outside 0..V-1, offsets given with 2-D indices
 *         or missing with 1-D ones, offsets[0] != 0, decreasing offsets or
 *         one past len(indices), per_sample_weights with another mode;
 *         AG_ERR_SHAPE for a weight not 2-D, indices not 1-D or 2-D, offsets
 *         not 1-D, per_sample_weights of another shape, no offset or no row
 *         of 2-D indices with include_last_offset; AG_ERR_DTYPE,
 *         AG_ERR_CONTEXT; AG_ERR_UNSUPPORTED while recording for replay.
 */
AG_API ag_status ag_op_embedding_bag(ag_tensor **out, const ag_tensor *weight, const ag_tensor *indices,
                                     const ag_tensor *offsets, int32_t mode,
                                     const ag_tensor *per_sample_weights, int32_t include_last_offset,
                                     int64_t padding_idx) AG_NOEXCEPT;

/**
 * F.ctc_loss: the connectionist temporal classification loss -log p(target |
 * log_probs), summed over all alignments by the forward (alpha) recursion in
 * log space over the target with blanks around each label (2 S + 1 states),
 * one step per time frame for the whole batch at once: T steps of a few ops
 * over (N, 2 S + 1) each (gather, pad, logaddexp, where), recorded as such,
 * so memory and backward time grow with T. Composed of differentiable ops;
 * the gradient for log_probs is PyTorch's: exp(log_probs) - the occupation
 * probabilities for t < input_lengths[n] (0 after), which is the exact
 * gradient plus exp(log_probs), a difference that vanishes through a
 * log_softmax before it. Second order is that of the composite.
 * @param log_probs (T, N, C) or unbatched (T, C), f32/f64: log-probabilities
 *        (log_softmax output) of C classes per frame.
 * @param targets i64 class indices in 0..C-1, none equal to blank (as
 *        PyTorch's documentation requires; PyTorch does not check): (N, S)
 *        padded (row n's first target_lengths[n] values are used), or 1-D,
 *        the targets of all samples concatenated; unbatched: (S).
 * @param input_lengths i64 (N) (unbatched: () or (1)), each in 0..T; 0 gives
 *        0 for an empty target, else inf.
 * @param target_lengths i64 (N) (unbatched: () or (1)), each >= 0 and at
 *        most S for padded targets; for concatenated ones their sum is at
 *        most len(targets).
 * @param blank the blank class, 0..C-1.
 * @param reduction AG_REDUCTION_NONE: the losses (N) (unbatched: 0-dim);
 *        MEAN: each loss divided by its target length (at least 1), then
 *        averaged over the batch (PyTorch's 'mean'); SUM.
 * @param zero_infinity nonzero: infinite losses (targets no alignment
 *        reaches within the input length) become 0, with gradient 0; else
 *        they are inf (with gradient 0, where PyTorch's is NaN).
 * @return AG_ERR_SHAPE for log_probs not 2-D or 3-D, targets or lengths of
 *         other shapes, concatenated targets shorter than the lengths' sum;
 *         AG_ERR_INVALID_ARGUMENT for blank outside 0..C-1, a length out of
 *         range, a target outside 0..C-1 or equal to blank, another
 *         reduction; AG_ERR_DTYPE (log_probs not floating, the others not
 *         i64), AG_ERR_CONTEXT; AG_ERR_UNSUPPORTED while recording for replay.
 */
AG_API ag_status ag_op_ctc_loss(ag_tensor **out, const ag_tensor *log_probs, const ag_tensor *targets,
                                const ag_tensor *input_lengths, const ag_tensor *target_lengths, int64_t blank,
                                int32_t reduction, int32_t zero_infinity) AG_NOEXCEPT;

AG_END_DECLS

#endif /* AG_OPS_NN_H */
