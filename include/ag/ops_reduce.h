/*
 * ag/ops_reduce.h - reductions over chosen dims, selections (max/min with
 * indices, argmax/argmin) and cumulative ops along one dim. The rules of ag/ops.h hold
 * (out-parameter first, written only on success; f32 or f64 inputs; errors
 * name the op).
 *
 * The reductions over dims share one signature:
 *   ag_op_<name>_dims(out, x, dims, ndims, keepdim)
 * - `dims` lists ndims dims to reduce (negative dims count from the end);
 *   ndims = 0 reduces all dims (dims may then be NULL), like dim=None in
 *   PyTorch. A 0-dim tensor takes dim 0 or -1.
 * - keepdim != 0 keeps each reduced dim with size 1; keepdim = 0 drops it.
 * - Errors: AG_ERR_INVALID_ARGUMENT for NULL, ndims outside 0..AG_MAX_DIMS,
 *   NULL dims with ndims > 0, a dim out of range ("[ag_op_sum_dims] dim 3 is
 *   out of range for a tensor of 2 dims (expected -2..1)") or a repeated dim
 *   ("dim 1 appears more than once in dims"); AG_ERR_DTYPE for a
 *   non-floating x.
 * - Zero-size dims behave as in NumPy: a sum over an empty dim is 0, a mean NaN.
 */
#ifndef AG_OPS_REDUCE_H
#define AG_OPS_REDUCE_H

#include "ag/common.h"
#include "ag/tensor.h"

AG_BEGIN_DECLS

/** y = sum of x over `dims`. Gradient: g expanded back over the reduced dims. */
AG_API ag_status ag_op_sum_dims(ag_tensor **out, const ag_tensor *x, const int64_t *dims, int32_t ndims,
                                int32_t keepdim) AG_NOEXCEPT;

/** y = mean of x over `dims` (NaN where the reduced count is 0). Gradient: g / count, expanded back. */
AG_API ag_status ag_op_mean_dims(ag_tensor **out, const ag_tensor *x, const int64_t *dims, int32_t ndims,
                                 int32_t keepdim) AG_NOEXCEPT;

/** y = product of x over `dims` (1 over an empty dim). Gradient: PyTorch's
 * rule, exact with zeros: g * prod / x without zeros; with one zero in a
 * slice, the product of the others at the zero and 0 elsewhere; 0 with more.
 * Second derivatives are exact with any number of zeros (PyTorch's prod over
 * all dims has a constant zero gradient with two zeros; its prod over a dim
 * agrees with ag). */
AG_API ag_status ag_op_prod_dims(ag_tensor **out, const ag_tensor *x, const int64_t *dims, int32_t ndims,
                                 int32_t keepdim) AG_NOEXCEPT;

/** y = log(sum(exp(x))) over `dims`, computed with the max subtracted: no
 * overflow; an all -inf slice (or an empty one) gives -inf, a +inf gives +inf.
 * Gradient: softmax of x over the dims times g. */
AG_API ag_status ag_op_logsumexp_dims(ag_tensor **out, const ag_tensor *x, const int64_t *dims, int32_t ndims,
                                      int32_t keepdim) AG_NOEXCEPT;

/**
 * y = sum((x - mean)^2) / max(0, N - correction) over `dims`, N the number of
 * elements reduced into each output (correction 1: the unbiased sample
 * variance, PyTorch's default; 0: the population variance). A divisor of 0
 * gives inf or NaN. The gradient is 2 (x - mean) / (N - correction), also
 * when correction > N (as PyTorch: 0 for a constant slice).
 * AG_ERR_INVALID_ARGUMENT also for a NaN correction.
 */
AG_API ag_status ag_op_var_dims(ag_tensor **out, const ag_tensor *x, const int64_t *dims, int32_t ndims,
                                int32_t keepdim, double correction) AG_NOEXCEPT;

/** y = sqrt(var_dims(x, dims, correction)). Where the variance is 0 (all
 * elements of a slice equal) the gradient and second derivative are 0, as
 * in PyTorch. */
AG_API ag_status ag_op_std_dims(ag_tensor **out, const ag_tensor *x, const int64_t *dims, int32_t ndims,
                                int32_t keepdim, double correction) AG_NOEXCEPT;

/**
 * y = the vector p-norm of x over `dims` (torch.linalg.vector_norm):
 * p = 2: sqrt(sum x^2), gradient x / y and 0 where y = 0 (second
 *   derivative 0 there too, as std's; PyTorch's is NaN, from 0 * inf);
 * p = 1: sum |x|, gradient sign(x) (0 at 0);
 * p = INFINITY / -INFINITY: max / min |x|, gradient sign(x) shared evenly
 *   among the elements that attain it (AG_ERR_SHAPE over an empty dim);
 * p = 0: the number of nonzero elements, gradient 0;
 * other p: (sum |x|^p)^(1/p); for p > 0 the gradient is 0 where y = 0,
 *   and for 0 < p < 1 also at each zero element (as PyTorch).
 * AG_ERR_INVALID_ARGUMENT also for a NaN p.
 */
AG_API ag_status ag_op_norm_dims(ag_tensor **out, const ag_tensor *x, const int64_t *dims, int32_t ndims,
                                 int32_t keepdim, double p) AG_NOEXCEPT;

/* ---- one dim, selecting an element ----
 * `dim` counts from the end when negative; keepdim != 0 keeps it with size
 * 1. A dim out of range is AG_ERR_INVALID_ARGUMENT; a dim of size 0 is
 * AG_ERR_SHAPE ("cannot take the max over dim 0 of size 0 (shape (0,3))"). */

/**
 * The largest element along `dim` (`values`, x's dtype) and its index
 * (`indices`, AG_I64): the first among equal maxima; NaN counts as the
 * largest (first NaN). Either out-parameter may be NULL when that result is
 * not wanted, not both (AG_ERR_INVALID_ARGUMENT). The gradient of `values`
 * goes to the returned index, 0 elsewhere.
 * @return AG_ERR_INVALID_ARGUMENT, AG_ERR_SHAPE, AG_ERR_DTYPE (not f32/f64).
 */
AG_API ag_status ag_op_max_dim(ag_tensor **values, ag_tensor **indices, const ag_tensor *x, int64_t dim,
                               int32_t keepdim) AG_NOEXCEPT;

/** As ag_op_max_dim for the smallest element (NaN counts as the smallest). */
AG_API ag_status ag_op_min_dim(ag_tensor **values, ag_tensor **indices, const ag_tensor *x, int64_t dim,
                               int32_t keepdim) AG_NOEXCEPT;

/** The AG_I64 indices of ag_op_max_dim; not differentiable (the result
 * never requires grad). */
AG_API ag_status ag_op_argmax(ag_tensor **out, const ag_tensor *x, int64_t dim, int32_t keepdim) AG_NOEXCEPT;

/** The AG_I64 indices of ag_op_min_dim; not differentiable. */
AG_API ag_status ag_op_argmin(ag_tensor **out, const ag_tensor *x, int64_t dim, int32_t keepdim) AG_NOEXCEPT;

/* ---- one dim, cumulative: same shape as x ---- */

/** y_k = x_0 + ... + x_k along `dim`, accumulated in double. Gradient: the
 * sum of g from the end of the dim. AG_ERR_INVALID_ARGUMENT, AG_ERR_DTYPE. */
AG_API ag_status ag_op_cumsum(ag_tensor **out, const ag_tensor *x, int64_t dim) AG_NOEXCEPT;

/** y_k = x_0 * ... * x_k along `dim`, multiplied in double. The gradient is
 * exact with zeros (past the first zero of a slice it is 0; at it, the
 * products that skip it), and so are second derivatives, with any number of
 * zeros. AG_ERR_INVALID_ARGUMENT, AG_ERR_DTYPE. */
AG_API ag_status ag_op_cumprod(ag_tensor **out, const ag_tensor *x, int64_t dim) AG_NOEXCEPT;

/* ---- added in 0.2: more reductions over dims (same rules as ag_op_sum_dims) ---- */

/** y = the largest element over `dims` (torch.amax), NaN where the slice has
 * one. Gradient: g shared evenly among the elements equal to y (all NaNs
 * for a NaN y), as PyTorch. AG_ERR_SHAPE over an empty dim. */
AG_API ag_status ag_op_amax(ag_tensor **out, const ag_tensor *x, const int64_t *dims, int32_t ndims,
                            int32_t keepdim) AG_NOEXCEPT;
/** As ag_op_amax for the smallest element (torch.amin). */
AG_API ag_status ag_op_amin(ag_tensor **out, const ag_tensor *x, const int64_t *dims, int32_t ndims,
                            int32_t keepdim) AG_NOEXCEPT;
/** y = the sum over `dims` with NaN read as 0 (torch.nansum); gradient g,
 * 0 at the NaNs. */
AG_API ag_status ag_op_nansum(ag_tensor **out, const ag_tensor *x, const int64_t *dims, int32_t ndims,
                              int32_t keepdim) AG_NOEXCEPT;
/** y = nansum over the count of non-NaN elements (torch.nanmean); NaN where
 * a slice has none. Gradient g / count, 0 at the NaNs. */
AG_API ag_status ag_op_nanmean(ag_tensor **out, const ag_tensor *x, const int64_t *dims, int32_t ndims,
                               int32_t keepdim) AG_NOEXCEPT;
/**
 * The variance (ag_op_var_dims, same correction) and the mean over `dims`
 * in one call (torch.var_mean). Either out-parameter may be NULL, not both
 * (AG_ERR_INVALID_ARGUMENT). Gradients: those of ag_op_var_dims and
 * ag_op_mean_dims.
 * @param[out] out the variance.
 * @param[out] mean the mean.
 */
AG_API ag_status ag_op_var_mean(ag_tensor **out, ag_tensor **mean, const ag_tensor *x, const int64_t *dims,
                                int32_t ndims, int32_t keepdim, double correction) AG_NOEXCEPT;
/**
 * As ag_op_var_mean with the standard deviation (ag_op_std_dims) first
 * (torch.std_mean).
 * @param[out] out the standard deviation.
 * @param[out] mean the mean.
 */
AG_API ag_status ag_op_std_mean(ag_tensor **out, ag_tensor **mean, const ag_tensor *x, const int64_t *dims,
                                int32_t ndims, int32_t keepdim, double correction) AG_NOEXCEPT;
/**
 * The median of all elements (torch.median without dim): the lower of the
 * two middle values for an even count; NaN if x has a NaN. Gradient: g
 * shared evenly among the elements equal to the median, as PyTorch.
 * AG_ERR_SHAPE for an empty x.
 */
AG_API ag_status ag_op_median(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
/** As ag_op_median ignoring NaNs (torch.nanmedian); NaN if all are NaN. */
AG_API ag_status ag_op_nanmedian(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
/**
 * The lower median along `dim` and its index (torch.median with dim), rules
 * of ag_op_max_dim: a slice with a NaN gives its first NaN. The gradient of
 * `values` goes to the returned index. Either out-parameter may be NULL,
 * not both (AG_ERR_INVALID_ARGUMENT).
 */
AG_API ag_status ag_op_median_dim(ag_tensor **values, ag_tensor **indices, const ag_tensor *x, int64_t dim,
                                  int32_t keepdim) AG_NOEXCEPT;
/** As ag_op_median_dim ignoring NaNs (torch.nanmedian with dim); an all-NaN
 * slice gives NaN at index 0. */
AG_API ag_status ag_op_nanmedian_dim(ag_tensor **values, ag_tensor **indices, const ag_tensor *x, int64_t dim,
                                     int32_t keepdim) AG_NOEXCEPT;

/* The interpolation of ag_op_quantile between the sorted values below and
 * above the rank q (n - 1). */
#define AG_QUANTILE_LINEAR 0   /* below + (rank - floor(rank)) (above - below) */
#define AG_QUANTILE_LOWER 1    /* below */
#define AG_QUANTILE_HIGHER 2   /* above */
#define AG_QUANTILE_MIDPOINT 3 /* (below + above) / 2 */
#define AG_QUANTILE_NEAREST 4  /* the nearer one, rank rounded half to even */

/**
 * The q-quantiles of x (torch.quantile): over all elements (ndims = 0, dims
 * may be NULL) or along the one dim dims[0] (ndims = 1). q (x's dtype) is a
 * 0-dim tensor or a 1-D tensor of values in [0, 1]; a 1-D q adds a leading
 * dim of its size to the result. keepdim keeps the reduced dim(s) with size
 * 1. Each slice is sorted (NaN last); a slice with a NaN gives NaN. The
 * gradient goes to the one or two sorted elements interpolated, weighted.
 * @param interpolation one of AG_QUANTILE_*.
 * @return AG_ERR_INVALID_ARGUMENT (q outside [0, 1], ndims > 1, a bad
 * interpolation), AG_ERR_SHAPE (q of 2 or more dims, an empty x),
 * AG_ERR_DTYPE (not f32/f64, q's dtype not x's).
 */
AG_API ag_status ag_op_quantile(ag_tensor **out, const ag_tensor *x, const ag_tensor *q, const int64_t *dims,
                                int32_t ndims, int32_t keepdim, int32_t interpolation) AG_NOEXCEPT;
/** As ag_op_quantile ignoring NaNs: the ranks count the non-NaN elements of
 * each slice (torch.nanquantile); an all-NaN slice gives NaN. */
AG_API ag_status ag_op_nanquantile(ag_tensor **out, const ag_tensor *x, const ag_tensor *q, const int64_t *dims,
                                   int32_t ndims, int32_t keepdim, int32_t interpolation) AG_NOEXCEPT;

/* ---- added in 0.2: sorting and selecting along one dim (rules of ag_op_max_dim) ---- */

/**
 * x sorted along `dim` (`values`) and the AG_I64 positions of the sorted
 * elements in x (`indices`), ascending or descending (torch.sort). NaN sorts
 * as the largest value; the sort is always stable (equal elements keep their
 * order), whatever `stable` says. Either out-parameter may be NULL, not both.
 * The gradient of `values` goes back to the elements' positions.
 */
AG_API ag_status ag_op_sort(ag_tensor **values, ag_tensor **indices, const ag_tensor *x, int64_t dim,
                            int32_t descending, int32_t stable) AG_NOEXCEPT;
/** x sorted along dim 0, ascending (torch.msort). Gradient as ag_op_sort. */
AG_API ag_status ag_op_msort(ag_tensor **out, const ag_tensor *x) AG_NOEXCEPT;
/**
 * The k largest (largest != 0) or smallest elements along `dim` and their
 * indices (torch.topk), always in sorted order (also for sorted = 0); ties
 * as ag_op_sort. AG_ERR_INVALID_ARGUMENT for k outside 0..size of dim.
 * Either out-parameter may be NULL, not both.
 */
AG_API ag_status ag_op_topk(ag_tensor **values, ag_tensor **indices, const ag_tensor *x, int64_t k, int64_t dim,
                            int32_t largest, int32_t sorted) AG_NOEXCEPT;
/**
 * The k-th smallest element along `dim` (k from 1) and its index
 * (torch.kthvalue; NaN as the largest). AG_ERR_INVALID_ARGUMENT for k
 * outside 1..size of dim. Either out-parameter may be NULL, not both.
 */
AG_API ag_status ag_op_kthvalue(ag_tensor **values, ag_tensor **indices, const ag_tensor *x, int64_t k, int64_t dim,
                                int32_t keepdim) AG_NOEXCEPT;

/* ---- added in 0.2: cumulative along one dim ---- */

/** y_k = log(exp(x_0) + ... + exp(x_k)) along `dim` (torch.logcumsumexp),
 * accumulated in double without overflow. Gradient: sum over k >= i of
 * g_k exp(x_i - y_k), computed in log space (PyTorch's formula). */
AG_API ag_status ag_op_logcumsumexp(ag_tensor **out, const ag_tensor *x, int64_t dim) AG_NOEXCEPT;
/**
 * The running maximum along `dim` (`values`) and the AG_I64 index where it
 * was attained (torch.cummax): the last index among equal values; once a NaN
 * was seen the values are NaN and the index that of the last NaN. Either
 * out-parameter may be NULL, not both. The gradient of `values` is g summed
 * into the elements at the indices.
 */
AG_API ag_status ag_op_cummax(ag_tensor **values, ag_tensor **indices, const ag_tensor *x, int64_t dim) AG_NOEXCEPT;
/** As ag_op_cummax for the running minimum (torch.cummin). */
AG_API ag_status ag_op_cummin(ag_tensor **values, ag_tensor **indices, const ag_tensor *x, int64_t dim) AG_NOEXCEPT;

/* ---- added in 0.2: distances and similarities (composed of the ops above: norms as
 * ag_op_norm_dims, with its gradients where a norm is 0) ---- */

/** The p-norm of a - b (broadcast) over all elements (torch.dist), p >= 0
 * (INFINITY allowed). AG_ERR_INVALID_ARGUMENT for a negative or NaN p. */
AG_API ag_status ag_op_dist(ag_tensor **out, const ag_tensor *a, const ag_tensor *b, double p) AG_NOEXCEPT;
/**
 * The p-norm distances between the rows of a (..., P, M) and of b
 * (..., R, M), batch dims broadcast: shape (..., P, R) (torch.cdist with
 * its default compute_mode: for p = 2 and P or R above 25, through the
 * matrix product |u|^2 + |v|^2 - 2 u.v clamped at 0; else directly).
 * Gradient 0 where a distance is 0 (p = 2). AG_ERR_SHAPE for fewer than 2
 * dims or different M; AG_ERR_INVALID_ARGUMENT for a negative or NaN p.
 */
AG_API ag_status ag_op_cdist(ag_tensor **out, const ag_tensor *a, const ag_tensor *b, double p) AG_NOEXCEPT;
/** The p-norm distances between the rows i < j of x (N, M), in row order
 * (torch.nn.functional.pdist): N (N - 1) / 2 values. AG_ERR_SHAPE unless x
 * is 2-D; AG_ERR_INVALID_ARGUMENT for a negative or NaN p, or an N (of an
 * empty x) whose count of pairs overflows int64. */
AG_API ag_status ag_op_pdist(ag_tensor **out, const ag_tensor *x, double p) AG_NOEXCEPT;
/** The p-norm of x1 - x2 + eps (broadcast) over the last dim
 * (torch.nn.functional.pairwise_distance); any p but NaN, negative p as
 * ag_op_norm_dims. */
AG_API ag_status ag_op_pairwise_distance(ag_tensor **out, const ag_tensor *x1, const ag_tensor *x2, double p,
                                         double eps, int32_t keepdim) AG_NOEXCEPT;
/**
 * The sum over `dim` of (x1 / max(|x1|, eps)) (x2 / max(|x2|, eps)), x1 and
 * x2 broadcast, |.| the 2-norm over dim (torch.nn.functional.
 * cosine_similarity; PyTorch's default eps is 1e-8). As PyTorch 1.13 the
 * clamp acts on the value only: the gradient is that of x / |x| (0 where
 * |x| = 0).
 */
AG_API ag_status ag_op_cosine_similarity(ag_tensor **out, const ag_tensor *x1, const ag_tensor *x2, int64_t dim,
                                         double eps) AG_NOEXCEPT;
/** x / max(p-norm of x over dim, eps) (torch.nn.functional.normalize; PyTorch's
 * defaults p = 2, dim = 1, eps = 1e-12); no gradient through the norm where
 * it is below eps. */
AG_API ag_status ag_op_normalize(ag_tensor **out, const ag_tensor *x, double p, int64_t dim, double eps) AG_NOEXCEPT;

AG_END_DECLS

#endif /* AG_OPS_REDUCE_H */
