/*
 * ag/ag_ops.hpp - the op wrappers of ag.hpp: one C++ function ag::<name> per
 * C function ag_op_<name>, with the C function's semantics and errors (see
 * its documentation in ag/ops*.h, ag/random.h); a failure throws ag::Error
 * with the C message. Included at the end of ag/ag.hpp: include that.
 *
 * How the C arguments appear in C++:
 * - a pointer and count (shape, dims, sizes) is a std::vector<int64_t>;
 * - a (height, width) array of the conv and pool ops is a std::vector<int64_t>
 *   of 2 values, or 1 value used for both, or {} for the C default (NULL);
 * - an optional tensor (bias, weight, pos_weight, running statistics) is an
 *   empty Tensor() for none (NULL); lists of tensors are std::vector<Tensor>;
 * - ops with several results return a std::vector<Tensor> (split, chunk) or
 *   a ValuesIndices (max_dim, min_dim, max_pool2d_with_indices);
 * - int32_t flags are bool; defaults are those the C documentation names
 *   (PyTorch's); creation and random ops take the Context first and the
 *   dtype last (AG_F32 by default), as ag::zeros.
 * A family op is wrapped by its family's macro below, one generated line per
 * op of ops.def (src/ops/gen_op_lists.py; a test checks the lines are
 * fresh); a CUSTOM op (or one flagged HAND_HPP) by a function in the section
 * of its header (tests/cpp checks both).
 */
#ifndef AG_AG_OPS_HPP
#define AG_AG_OPS_HPP

#include <limits>
#include <tuple>

#include "ag/ag.hpp"

namespace ag {

/** The two results of max_dim, min_dim (values) and max_pool2d_with_indices (the pooled output). */
struct ValuesIndices {
  Tensor values;
  Tensor indices;
};

namespace detail {

/* Calls an ag_op_* whose first parameter is its one result. */
template <typename F, typename... Args> Tensor op(F f, Args... args) {
  ag_tensor *out = nullptr;
  check(f(&out, args...));
  return Tensor::adopt(out);
}

inline int32_t count_of(const std::vector<int64_t> &v) noexcept { return static_cast<int32_t>(v.size()); }

/* A (height, width) argument of the conv and pool ops: {} passes NULL (the C default), {n} means (n, n). */
class Pair {
 public:
  Pair(const char *fn, const char *name, const std::vector<int64_t> &v) : null_(v.empty()) {
    if (v.size() > 2)
      throw Error(AG_ERR_INVALID_ARGUMENT, std::string("ag::") + fn + ": " + name + " has " +
                                               std::to_string(v.size()) + " values (expected 1 or 2)");
    v_[0] = v.empty() ? 0 : v[0];
    v_[1] = v.size() == 2 ? v[1] : v_[0];
  }
  const int64_t *get() const noexcept { return null_ ? nullptr : v_; }

 private:
  int64_t v_[2];
  bool null_;
};

inline std::vector<const ag_tensor *> handles_of(const std::vector<Tensor> &xs) {
  std::vector<const ag_tensor *> h(xs.size());
  for (std::size_t i = 0; i < xs.size(); ++i) h[i] = xs[i].get();
  return h;
}

inline std::vector<Tensor> adopt_all(const std::vector<ag_tensor *> &outs, std::size_t n) {
  std::vector<Tensor> r;
  r.reserve(n);
  for (std::size_t i = 0; i < n; ++i) r.push_back(Tensor::adopt(outs[i]));
  return r;
}

inline ValuesIndices values_indices(ag_tensor *values, ag_tensor *indices) {
  ValuesIndices r;
  r.values = Tensor::adopt(values);
  r.indices = Tensor::adopt(indices);
  return r;
}

}  // namespace detail

/* ---- the family ops: one macro per signature family, one line per op ---- */

#define AG_HPP_UNARY(name)                        \
  inline Tensor name(const Tensor &x) {           \
    ag_tensor *out = nullptr;                     \
    detail::check(ag_op_##name(&out, x.get()));   \
    return Tensor::adopt(out);                    \
  }
#define AG_HPP_UNARY_SCALAR(name)                       \
  inline Tensor name(const Tensor &x, double attr) {    \
    ag_tensor *out = nullptr;                           \
    detail::check(ag_op_##name(&out, x.get(), attr));   \
    return Tensor::adopt(out);                          \
  }
#define AG_HPP_BINARY(name)                                \
  inline Tensor name(const Tensor &a, const Tensor &b) {   \
    ag_tensor *out = nullptr;                              \
    detail::check(ag_op_##name(&out, a.get(), b.get()));   \
    return Tensor::adopt(out);                             \
  }
#define AG_HPP_SHAPE(name)                                                             \
  inline Tensor name(const Tensor &x, const std::vector<int64_t> &shape) {             \
    ag_tensor *out = nullptr;                                                          \
    detail::check(ag_op_##name(&out, x.get(), detail::data_or_null(shape),             \
                               static_cast<int32_t>(shape.size())));                   \
    return Tensor::adopt(out);                                                         \
  }
#define AG_HPP_DTYPE(name)                                \
  inline Tensor name(const Tensor &x, ag_dtype dtype) {   \
    ag_tensor *out = nullptr;                             \
    detail::check(ag_op_##name(&out, x.get(), dtype));    \
    return Tensor::adopt(out);                            \
  }
#define AG_HPP_UNARY_SCALAR2(name)                                      \
  inline Tensor name(const Tensor &x, double attr, double attr2) {      \
    ag_tensor *out = nullptr;                                           \
    detail::check(ag_op_##name(&out, x.get(), attr, attr2));            \
    return Tensor::adopt(out);                                          \
  }
#define AG_HPP_DIM(name)                                  \
  inline Tensor name(const Tensor &x, int64_t dim) {      \
    ag_tensor *out = nullptr;                             \
    detail::check(ag_op_##name(&out, x.get(), dim));      \
    return Tensor::adopt(out);                            \
  }
#define AG_HPP_DIMS(name)                                                                       \
  inline Tensor name(const Tensor &x, const std::vector<int64_t> &dims, bool keepdim = false) { \
    ag_tensor *out = nullptr;                                                                   \
    detail::check(ag_op_##name(&out, x.get(), detail::data_or_null(dims),                       \
                               static_cast<int32_t>(dims.size()), keepdim ? 1 : 0));            \
    return Tensor::adopt(out);                                                                  \
  }
#define AG_HPP_DIMLIST(name)                                                               \
  inline Tensor name(const Tensor &x, const std::vector<int64_t> &dims) {                  \
    return detail::op(ag_op_##name, x.get(), detail::data_or_null(dims), detail::count_of(dims)); \
  }
#define AG_HPP_DIM_KEEPDIM(name)                                             \
  inline Tensor name(const Tensor &x, int64_t dim, bool keepdim = false) {   \
    return detail::op(ag_op_##name, x.get(), dim, keepdim ? 1 : 0);          \
  }
#define AG_HPP_INT(name)                             \
  inline Tensor name(const Tensor &x, int64_t k) {   \
    ag_tensor *out = nullptr;                        \
    detail::check(ag_op_##name(&out, x.get(), k));   \
    return Tensor::adopt(out);                       \
  }
#define AG_HPP_ADDMM(name)                                                                                  \
  inline Tensor name(const Tensor &input, const Tensor &a, const Tensor &b, double beta = 1.0, double alpha = 1.0) { \
    return detail::op(ag_op_##name, input.get(), a.get(), b.get(), beta, alpha);                           \
  }
#define AG_HPP_VALUES_INDICES(name)                                                  \
  inline ValuesIndices name(const Tensor &x, int64_t dim, bool keepdim = false) {    \
    ag_tensor *values = nullptr, *indices = nullptr;                                 \
    detail::check(ag_op_##name(&values, &indices, x.get(), dim, keepdim ? 1 : 0));   \
    return detail::values_indices(values, indices);                                  \
  }
#define AG_HPP_TENSORS_DIM(name)                                                                  \
  inline Tensor name(const std::vector<Tensor> &xs, int64_t dim = 0) {                            \
    std::vector<const ag_tensor *> h = detail::handles_of(xs);                                    \
    return detail::op(ag_op_##name, h.empty() ? nullptr : h.data(), static_cast<int32_t>(h.size()), dim); \
  }
#define AG_HPP_INDEX(name)                                                       \
  inline Tensor name(const Tensor &x, int64_t dim, const Tensor &index) {        \
    return detail::op(ag_op_##name, x.get(), dim, index.get());                  \
  }
#define AG_HPP_INDEX_SRC(name)                                                                   \
  inline Tensor name(const Tensor &x, int64_t dim, const Tensor &index, const Tensor &src) {     \
    return detail::op(ag_op_##name, x.get(), dim, index.get(), src.get());                       \
  }
#define AG_HPP_GRAD_Y_DIM(name)                                                  \
  inline Tensor name(const Tensor &grad, const Tensor &y, int64_t dim) {         \
    return detail::op(ag_op_##name, grad.get(), y.get(), dim);                   \
  }
#define AG_HPP_LOSS(name)                                                                                    \
  inline Tensor name(const Tensor &input, const Tensor &target, int32_t reduction = AG_REDUCTION_MEAN) {      \
    return detail::op(ag_op_##name, input.get(), target.get(), reduction);                                   \
  }
#define AG_HPP_RANDOM(name)                                                                              \
  inline Tensor name(const Context &ctx, const std::vector<int64_t> &shape, ag_dtype dtype = AG_F32) {   \
    return detail::op(ag_op_##name, ctx.get(), dtype, detail::data_or_null(shape), detail::count_of(shape)); \
  }
#define AG_HPP_NORM_BACKWARD(name)                                                                          \
  inline Tensor name(const Tensor &grad, const Tensor &x, const std::vector<int64_t> &normalized_shape,      \
                     const Tensor &weight, double eps) {                                                    \
    return detail::op(ag_op_##name, grad.get(), x.get(), detail::data_or_null(normalized_shape),            \
                      detail::count_of(normalized_shape), weight.get(), eps);                               \
  }
#define AG_HPP_STAT_MEAN(name)                                                                             \
  inline ValuesIndices name(const Tensor &x, const std::vector<int64_t> &dims, bool keepdim = false,       \
                            double correction = 1.0) {                                                     \
    ag_tensor *out = nullptr, *mean = nullptr;                                                             \
    detail::check(ag_op_##name(&out, &mean, x.get(), detail::data_or_null(dims), detail::count_of(dims),   \
                               keepdim ? 1 : 0, correction));                                              \
    return detail::values_indices(out, mean);                                                              \
  }
#define AG_HPP_SCAN_INDICES(name)                                            \
  inline ValuesIndices name(const Tensor &x, int64_t dim) {                  \
    ag_tensor *values = nullptr, *indices = nullptr;                         \
    detail::check(ag_op_##name(&values, &indices, x.get(), dim));            \
    return detail::values_indices(values, indices);                          \
  }
#define AG_HPP_BINARY_SCALAR(name)                                                   \
  inline Tensor name(const Tensor &a, const Tensor &b, double p = 2.0) {             \
    return detail::op(ag_op_##name, a.get(), b.get(), p);                           \
  }
#define AG_HPP_QUANTILE(name)                                                                              \
  inline Tensor name(const Tensor &x, const Tensor &q, const std::vector<int64_t> &dims = {},             \
                     bool keepdim = false, int32_t interpolation = AG_QUANTILE_LINEAR) {                  \
    return detail::op(ag_op_##name, x.get(), q.get(), detail::data_or_null(dims), detail::count_of(dims), \
                      keepdim ? 1 : 0, interpolation);                                                    \
  }
#define AG_HPP_NORM_WEIGHT_GRAD(name)                                                                       \
  inline Tensor name(const Tensor &grad, const Tensor &x, const std::vector<int64_t> &normalized_shape,      \
                     double eps) {                                                                          \
    return detail::op(ag_op_##name, grad.get(), x.get(), detail::data_or_null(normalized_shape),            \
                      detail::count_of(normalized_shape), eps);                                             \
  }


/* BEGIN generated by src/ops/gen_op_lists.py from ops.def: do not edit */
AG_HPP_UNARY(neg)
AG_HPP_UNARY(exp)
AG_HPP_UNARY(log)
AG_HPP_UNARY(tanh)
AG_HPP_UNARY_SCALAR(pow_scalar)
AG_HPP_UNARY(clone)
AG_HPP_BINARY(add)
AG_HPP_BINARY(sub)
AG_HPP_BINARY(mul)
AG_HPP_BINARY(div)
AG_HPP_BINARY(tanh_backward)
AG_HPP_UNARY(sum)
AG_HPP_UNARY(mean)
AG_HPP_SHAPE(expand)
AG_HPP_SHAPE(sum_to_size)
AG_HPP_DTYPE(cast)
AG_HPP_SHAPE(reshape)
AG_HPP_DIM(unsqueeze)
AG_HPP_DIMLIST(permute)
AG_HPP_TENSORS_DIM(concat)
AG_HPP_TENSORS_DIM(stack)
AG_HPP_DIMLIST(flip)
AG_HPP_INDEX(index_select)
AG_HPP_INDEX_SRC(index_add)
AG_HPP_INDEX(gather)
AG_HPP_INDEX_SRC(scatter_add)
AG_HPP_BINARY(matmul)
AG_HPP_BINARY(bmm)
AG_HPP_BINARY(outer)
AG_HPP_BINARY(dot)
AG_HPP_DIM(softmax)
AG_HPP_DIM(log_softmax)
AG_HPP_GRAD_Y_DIM(softmax_backward)
AG_HPP_GRAD_Y_DIM(log_softmax_backward)
AG_HPP_DIMS(sum_dims)
AG_HPP_DIMS(mean_dims)
AG_HPP_LOSS(mse_loss)
AG_HPP_LOSS(l1_loss)
AG_HPP_LOSS(binary_cross_entropy)
AG_HPP_DIMS(prod_dims)
AG_HPP_DIMS(logsumexp_dims)
AG_HPP_VALUES_INDICES(max_dim)
AG_HPP_VALUES_INDICES(min_dim)
AG_HPP_DIM_KEEPDIM(argmax)
AG_HPP_DIM_KEEPDIM(argmin)
AG_HPP_DIM(cumsum)
AG_HPP_DIM(cumprod)
AG_HPP_RANDOM(rand)
AG_HPP_RANDOM(randn)
AG_HPP_UNARY(abs)
AG_HPP_UNARY(sign)
AG_HPP_UNARY(expm1)
AG_HPP_UNARY(log1p)
AG_HPP_UNARY(log2)
AG_HPP_UNARY(sqrt)
AG_HPP_UNARY(rsqrt)
AG_HPP_UNARY(square)
AG_HPP_UNARY(reciprocal)
AG_HPP_UNARY(sin)
AG_HPP_UNARY(cos)
AG_HPP_UNARY(tan)
AG_HPP_UNARY(asin)
AG_HPP_UNARY(acos)
AG_HPP_UNARY(atan)
AG_HPP_UNARY(sinh)
AG_HPP_UNARY(cosh)
AG_HPP_UNARY(erf)
AG_HPP_UNARY(sigmoid)
AG_HPP_BINARY(sigmoid_backward)
AG_HPP_UNARY(relu)
AG_HPP_UNARY_SCALAR(leaky_relu)
AG_HPP_UNARY_SCALAR(elu)
AG_HPP_UNARY(selu)
AG_HPP_UNARY(silu)
AG_HPP_BINARY(silu_backward)
AG_HPP_UNARY_SCALAR2(softplus)
AG_HPP_UNARY(mish)
AG_HPP_BINARY(mish_backward)
AG_HPP_UNARY_SCALAR2(hardtanh)
AG_HPP_UNARY_SCALAR2(clamp)
AG_HPP_UNARY(gelu)
AG_HPP_UNARY(gelu_tanh)
AG_HPP_BINARY(gelu_backward)
AG_HPP_BINARY(gelu_tanh_backward)
AG_HPP_BINARY(pow)
AG_HPP_BINARY(maximum)
AG_HPP_BINARY(minimum)
AG_HPP_BINARY(atan2)
AG_HPP_BINARY(fmod)
AG_HPP_BINARY(remainder)
AG_HPP_BINARY(eq)
AG_HPP_BINARY(ne)
AG_HPP_BINARY(lt)
AG_HPP_BINARY(le)
AG_HPP_BINARY(gt)
AG_HPP_BINARY(ge)
AG_HPP_UNARY(floor)
AG_HPP_UNARY(ceil)
AG_HPP_UNARY(round)
AG_HPP_UNARY(trunc)
AG_HPP_NORM_BACKWARD(layer_norm_backward)
AG_HPP_NORM_BACKWARD(rms_norm_backward)
AG_HPP_NORM_WEIGHT_GRAD(layer_norm_weight_grad)
AG_HPP_NORM_WEIGHT_GRAD(rms_norm_weight_grad)
AG_HPP_UNARY(log10)
AG_HPP_BINARY(hypot)
AG_HPP_BINARY(logaddexp)
AG_HPP_UNARY(trace)
AG_HPP_INT(diag)
AG_HPP_INT(tril)
AG_HPP_INT(triu)
AG_HPP_BINARY(mm)
AG_HPP_BINARY(mv)
AG_HPP_ADDMM(addmm)
AG_HPP_ADDMM(addmv)
AG_HPP_ADDMM(baddbmm)
AG_HPP_ADDMM(addbmm)
AG_HPP_BINARY(kron)
AG_HPP_INT(matrix_power)
AG_HPP_UNARY(inv)
AG_HPP_UNARY(det)
AG_HPP_BINARY(solve)
AG_HPP_UNARY(exp2)
AG_HPP_UNARY(erfc)
AG_HPP_UNARY(erfinv)
AG_HPP_UNARY(lgamma)
AG_HPP_UNARY(digamma)
AG_HPP_UNARY_SCALAR(logit)
AG_HPP_UNARY(sinc)
AG_HPP_UNARY(asinh)
AG_HPP_UNARY(acosh)
AG_HPP_UNARY(atanh)
AG_HPP_BINARY(copysign)
AG_HPP_UNARY(frac)
AG_HPP_BINARY(xlogy)
AG_HPP_UNARY(relu6)
AG_HPP_UNARY(hardswish)
AG_HPP_UNARY(hardsigmoid)
AG_HPP_UNARY(softsign)
AG_HPP_UNARY(logsigmoid)
AG_HPP_DIM(glu)
AG_HPP_UNARY_SCALAR(celu)
AG_HPP_BINARY(prelu)
AG_HPP_UNARY_SCALAR2(threshold)
AG_HPP_UNARY_SCALAR(softshrink)
AG_HPP_UNARY_SCALAR(hardshrink)
AG_HPP_UNARY(tanhshrink)
AG_HPP_DIMLIST(tile)
AG_HPP_SHAPE(broadcast_to)
AG_HPP_INDEX_SRC(scatter)
AG_HPP_INDEX_SRC(index_copy)
AG_HPP_DIM(pixel_shuffle)
AG_HPP_DIM(pixel_unshuffle)
AG_HPP_DIMS(amax)
AG_HPP_DIMS(amin)
AG_HPP_DIMS(nansum)
AG_HPP_DIMS(nanmean)
AG_HPP_STAT_MEAN(var_mean)
AG_HPP_STAT_MEAN(std_mean)
AG_HPP_DIM(logcumsumexp)
AG_HPP_SCAN_INDICES(cummax)
AG_HPP_SCAN_INDICES(cummin)
AG_HPP_BINARY_SCALAR(dist)
AG_HPP_BINARY_SCALAR(cdist)
AG_HPP_UNARY_SCALAR(pdist)
AG_HPP_UNARY(msort)
AG_HPP_UNARY(median)
AG_HPP_UNARY(nanmedian)
AG_HPP_VALUES_INDICES(median_dim)
AG_HPP_VALUES_INDICES(nanmedian_dim)
AG_HPP_QUANTILE(quantile)
AG_HPP_QUANTILE(nanquantile)
AG_HPP_UNARY(svdvals)
AG_HPP_UNARY_SCALAR(cond)
AG_HPP_BINARY(lstsq)
AG_HPP_UNARY(matrix_exp)
AG_HPP_BINARY_SCALAR(add_scaled)
/* END generated */

#undef AG_HPP_UNARY
#undef AG_HPP_UNARY_SCALAR
#undef AG_HPP_BINARY
#undef AG_HPP_SHAPE
#undef AG_HPP_DTYPE
#undef AG_HPP_DIM
#undef AG_HPP_DIMS
#undef AG_HPP_UNARY_SCALAR2
#undef AG_HPP_DIMLIST
#undef AG_HPP_DIM_KEEPDIM
#undef AG_HPP_VALUES_INDICES
#undef AG_HPP_TENSORS_DIM
#undef AG_HPP_INDEX
#undef AG_HPP_INDEX_SRC
#undef AG_HPP_GRAD_Y_DIM
#undef AG_HPP_LOSS
#undef AG_HPP_RANDOM
#undef AG_HPP_NORM_BACKWARD
#undef AG_HPP_NORM_WEIGHT_GRAD

inline Tensor pow(const Tensor &x, double exponent) { return pow_scalar(x, exponent); }

/* ---- operators; a double operand becomes a 0-dim tensor of the other's dtype ---- */

namespace detail {
inline Tensor scalar_like(const Tensor &like, double value) { return scalar(like.context(), value, like.dtype()); }
}  // namespace detail

inline Tensor operator-(const Tensor &x) { return neg(x); }
inline Tensor operator+(const Tensor &a, const Tensor &b) { return add(a, b); }
inline Tensor operator-(const Tensor &a, const Tensor &b) { return sub(a, b); }
inline Tensor operator*(const Tensor &a, const Tensor &b) { return mul(a, b); }
inline Tensor operator/(const Tensor &a, const Tensor &b) { return div(a, b); }
inline Tensor operator+(const Tensor &a, double b) { return add(a, detail::scalar_like(a, b)); }
inline Tensor operator-(const Tensor &a, double b) { return sub(a, detail::scalar_like(a, b)); }
inline Tensor operator*(const Tensor &a, double b) { return mul(a, detail::scalar_like(a, b)); }
inline Tensor operator/(const Tensor &a, double b) { return div(a, detail::scalar_like(a, b)); }
inline Tensor operator+(double a, const Tensor &b) { return add(detail::scalar_like(b, a), b); }
inline Tensor operator-(double a, const Tensor &b) { return sub(detail::scalar_like(b, a), b); }
inline Tensor operator*(double a, const Tensor &b) { return mul(detail::scalar_like(b, a), b); }
inline Tensor operator/(double a, const Tensor &b) { return div(detail::scalar_like(b, a), b); }


/* ---- shape and views (ag/ops_shape.h) ---- */

inline Tensor flatten(const Tensor &x, int64_t start_dim = 0, int64_t end_dim = -1) {
  return detail::op(ag_op_flatten, x.get(), start_dim, end_dim);
}
/** dims {} removes every size-1 dim. */
inline Tensor squeeze(const Tensor &x, const std::vector<int64_t> &dims = std::vector<int64_t>()) {
  return detail::op(ag_op_squeeze, x.get(), detail::data_or_null(dims), detail::count_of(dims));
}
inline Tensor transpose(const Tensor &x, int64_t dim0, int64_t dim1) {
  return detail::op(ag_op_transpose, x.get(), dim0, dim1);
}
/** x[start:end:step] along dim; the default end is "to the end". */
inline Tensor slice(const Tensor &x, int64_t dim, int64_t start,
                    int64_t end = std::numeric_limits<int64_t>::max(), int64_t step = 1) {
  return detail::op(ag_op_slice, x.get(), dim, start, end, step);
}
inline Tensor slice_backward(const Tensor &grad, const std::vector<int64_t> &input_shape, int64_t dim, int64_t start,
                             int64_t end, int64_t step) {
  return detail::op(ag_op_slice_backward, grad.get(), detail::data_or_null(input_shape),
                    detail::count_of(input_shape), dim, start, end, step);
}
inline Tensor select(const Tensor &x, int64_t dim, int64_t index) {
  return detail::op(ag_op_select, x.get(), dim, index);
}
inline Tensor narrow(const Tensor &x, int64_t dim, int64_t start, int64_t length) {
  return detail::op(ag_op_narrow, x.get(), dim, start, length);
}
/** Views of the given sizes along dim. */
inline std::vector<Tensor> split(const Tensor &x, const std::vector<int64_t> &sizes, int64_t dim = 0) {
  std::vector<ag_tensor *> outs(sizes.size() + 1, nullptr);  // never empty: outs.data() is not NULL
  detail::check(ag_op_split(outs.data(), detail::count_of(sizes), x.get(), detail::data_or_null(sizes),
                            detail::count_of(sizes), dim));
  return detail::adopt_all(outs, sizes.size());
}
/** Views of ceil(size / chunks) elements along dim (maybe fewer than chunks pieces). */
inline std::vector<Tensor> chunk(const Tensor &x, int64_t chunks, int64_t dim = 0) {
  int32_t n = 0;
  detail::check(ag_op_chunk(nullptr, 0, &n, x.get(), chunks, dim));
  std::vector<ag_tensor *> outs(static_cast<std::size_t>(n) + 1, nullptr);
  detail::check(ag_op_chunk(outs.data(), n, &n, x.get(), chunks, dim));
  return detail::adopt_all(outs, static_cast<std::size_t>(n));
}
inline Tensor repeat(const Tensor &x, const std::vector<int64_t> &repeats) {
  return detail::op(ag_op_repeat, x.get(), detail::data_or_null(repeats), detail::count_of(repeats));
}
/** pads: (before, after) pairs, the first for the last dim; mode AG_PAD_CONSTANT or AG_PAD_REFLECT. */
inline Tensor pad(const Tensor &x, const std::vector<int64_t> &pads, int32_t mode = AG_PAD_CONSTANT,
                  double value = 0.0) {
  return detail::op(ag_op_pad, x.get(), detail::data_or_null(pads), detail::count_of(pads), mode, value);
}
/** Shifts along dims (wrapping); no dims: x rolled as if flattened. */
inline Tensor roll(const Tensor &x, const std::vector<int64_t> &shifts, const std::vector<int64_t> &dims = {}) {
  return detail::op(ag_op_roll, x.get(), detail::data_or_null(shifts), detail::count_of(shifts),
                    detail::data_or_null(dims), detail::count_of(dims));
}
inline Tensor rot90(const Tensor &x, int64_t k = 1, const std::vector<int64_t> &dims = {0, 1}) {
  return detail::op(ag_op_rot90, x.get(), k, detail::data_or_null(dims), detail::count_of(dims));
}
inline Tensor repeat_interleave(const Tensor &x, int64_t repeats, int64_t dim) {
  return detail::op(ag_op_repeat_interleave, x.get(), repeats, dim);
}
inline Tensor movedim(const Tensor &x, int64_t source, int64_t destination) {
  return detail::op(ag_op_movedim, x.get(), source, destination);
}
inline Tensor repeat_interleave_tensor(const Tensor &x, const Tensor &repeats, int64_t dim) {
  return detail::op(ag_op_repeat_interleave_tensor, x.get(), repeats.get(), dim);
}
/** The views x[..., i, ...] along dim. */
inline std::vector<Tensor> unbind(const Tensor &x, int64_t dim = 0) {
  const std::vector<int64_t> shape = x.shape();
  const int64_t d = dim < 0 ? dim + static_cast<int64_t>(shape.size()) : dim;
  const std::size_t n = d >= 0 && d < static_cast<int64_t>(shape.size()) ? static_cast<std::size_t>(shape[d]) : 0;
  std::vector<ag_tensor *> outs(n + 1, nullptr);
  detail::check(ag_op_unbind(outs.data(), static_cast<int32_t>(n), x.get(), dim));
  return detail::adopt_all(outs, n);
}
/** `sections` views along dim, the first ones one longer. */
inline std::vector<Tensor> tensor_split(const Tensor &x, int64_t sections, int64_t dim = 0) {
  std::vector<ag_tensor *> outs(static_cast<std::size_t>(sections > 0 ? sections : 0) + 1, nullptr);
  detail::check(ag_op_tensor_split(outs.data(), static_cast<int32_t>(outs.size() - 1), x.get(), sections, dim));
  return detail::adopt_all(outs, outs.size() - 1);
}
/** Views x[:i0], x[i0:i1], ..., x[ik:] along dim. */
inline std::vector<Tensor> tensor_split_indices(const Tensor &x, const std::vector<int64_t> &indices, int64_t dim = 0) {
  std::vector<ag_tensor *> outs(indices.size() + 1, nullptr);
  detail::check(ag_op_tensor_split_indices(outs.data(), static_cast<int32_t>(outs.size()), x.get(),
                                           detail::data_or_null(indices), detail::count_of(indices), dim));
  return detail::adopt_all(outs, outs.size());
}
/** prepend and append may be empty Tensors. */
inline Tensor diff(const Tensor &x, int64_t n = 1, int64_t dim = -1, const Tensor &prepend = Tensor(),
                   const Tensor &append = Tensor()) {
  return detail::op(ag_op_diff, x.get(), n, dim, prepend.get(), append.get());
}

/* ---- indexing (ag/ops_index.h) ---- */

inline Tensor masked_fill(const Tensor &x, const Tensor &mask, double value) {
  return detail::op(ag_op_masked_fill, x.get(), mask.get(), value);
}
/** The rows of weight (V, D) picked by i64 indices (the C argument order, not F.embedding's). */
inline Tensor embedding(const Tensor &weight, const Tensor &indices) {
  return detail::op(ag_op_embedding, weight.get(), indices.get());
}
/** num_classes -1: the largest index + 1. */
inline Tensor one_hot(const Tensor &indices, int64_t num_classes = -1) {
  return detail::op(ag_op_one_hot, indices.get(), num_classes);
}
inline Tensor scatter_value(const Tensor &x, int64_t dim, const Tensor &index, double value) {
  return detail::op(ag_op_scatter_value, x.get(), dim, index.get(), value);
}
/** reduce: an AG_SCATTER_REDUCE_* value. */
inline Tensor scatter_reduce(const Tensor &x, int64_t dim, const Tensor &index, const Tensor &src, int32_t reduce,
                             bool include_self = true) {
  return detail::op(ag_op_scatter_reduce, x.get(), dim, index.get(), src.get(), reduce, int32_t{include_self});
}
/** x[indices...] = values (added with accumulate). */
inline Tensor index_put(const Tensor &x, const std::vector<Tensor> &indices, const Tensor &values,
                        bool accumulate = false) {
  std::vector<const ag_tensor *> ix;
  for (const Tensor &t : indices) ix.push_back(t.get());
  return detail::op(ag_op_index_put, x.get(), ix.empty() ? nullptr : ix.data(), static_cast<int32_t>(ix.size()),
                    values.get(), int32_t{accumulate});
}
inline Tensor index_fill(const Tensor &x, int64_t dim, const Tensor &index, double value) {
  return detail::op(ag_op_index_fill, x.get(), dim, index.get(), value);
}
inline Tensor masked_scatter(const Tensor &x, const Tensor &mask, const Tensor &source) {
  return detail::op(ag_op_masked_scatter, x.get(), mask.get(), source.get());
}
inline Tensor masked_select(const Tensor &x, const Tensor &mask) {
  return detail::op(ag_op_masked_select, x.get(), mask.get());
}
inline Tensor take_along_dim(const Tensor &x, const Tensor &indices, int64_t dim) {
  return detail::op(ag_op_take_along_dim, x.get(), indices.get(), dim);
}

/* ---- nn added in 0.2 (ag/ops_conv.h, ag/ops_norm.h, ag/ops_nn.h); empty Tensors for NULL ---- */

inline Tensor conv_transpose2d(const Tensor &x, const Tensor &weight, const Tensor &bias = Tensor(),
                               const std::vector<int64_t> &stride = std::vector<int64_t>(),
                               const std::vector<int64_t> &padding = std::vector<int64_t>(),
                               const std::vector<int64_t> &output_padding = std::vector<int64_t>(),
                               int64_t groups = 1, const std::vector<int64_t> &dilation = std::vector<int64_t>()) {
  return detail::op(ag_op_conv_transpose2d, x.get(), weight.get(), bias.get(),
                    detail::Pair("conv_transpose2d", "stride", stride).get(),
                    detail::Pair("conv_transpose2d", "padding", padding).get(),
                    detail::Pair("conv_transpose2d", "output_padding", output_padding).get(), groups,
                    detail::Pair("conv_transpose2d", "dilation", dilation).get());
}
inline Tensor conv_transpose1d(const Tensor &x, const Tensor &weight, const Tensor &bias = Tensor(), int64_t stride = 1,
                               int64_t padding = 0, int64_t output_padding = 0, int64_t groups = 1,
                               int64_t dilation = 1) {
  return detail::op(ag_op_conv_transpose1d, x.get(), weight.get(), bias.get(), stride, padding, output_padding, groups,
                    dilation);
}
/** size empty: by scale_factor; mode AG_INTERP_*. */
inline Tensor interpolate(const Tensor &x, const std::vector<int64_t> &size, double scale_factor = 0.0,
                          int32_t mode = AG_INTERP_NEAREST, bool align_corners = false) {
  return detail::op(ag_op_interpolate, x.get(), detail::data_or_null(size), detail::count_of(size), scale_factor, mode,
                    int32_t{align_corners});
}
/** stride 0: kernel_size. */
inline Tensor max_pool1d(const Tensor &x, int64_t kernel_size, int64_t stride = 0, int64_t padding = 0,
                         int64_t dilation = 1, bool ceil_mode = false) {
  return detail::op(ag_op_max_pool1d, x.get(), kernel_size, stride, padding, dilation, int32_t{ceil_mode});
}
inline Tensor avg_pool1d(const Tensor &x, int64_t kernel_size, int64_t stride = 0, int64_t padding = 0,
                         bool ceil_mode = false, bool count_include_pad = true) {
  return detail::op(ag_op_avg_pool1d, x.get(), kernel_size, stride, padding, int32_t{ceil_mode},
                    int32_t{count_include_pad});
}
inline Tensor adaptive_max_pool2d(const Tensor &x, const std::vector<int64_t> &output_size) {
  return detail::op(ag_op_adaptive_max_pool2d, x.get(),
                    detail::Pair("adaptive_max_pool2d", "output_size", output_size).get());
}
inline Tensor instance_norm(const Tensor &x, const Tensor &running_mean = Tensor(), const Tensor &running_var = Tensor(),
                            const Tensor &weight = Tensor(), const Tensor &bias = Tensor(), bool use_input_stats = true,
                            double momentum = 0.1, double eps = 1e-5) {
  return detail::op(ag_op_instance_norm, x.get(), running_mean.get(), running_var.get(), weight.get(), bias.get(),
                    int32_t{use_input_stats}, momentum, eps);
}
inline Tensor local_response_norm(const Tensor &x, int64_t size, double alpha = 1e-4, double beta = 0.75,
                                  double k = 1.0) {
  return detail::op(ag_op_local_response_norm, x.get(), size, alpha, beta, k);
}
/** scale 0: 1/sqrt(E). */
inline Tensor scaled_dot_product_attention(const Tensor &query, const Tensor &key, const Tensor &value,
                                           const Tensor &attn_mask = Tensor(), double dropout_p = 0.0,
                                           bool is_causal = false, double scale = 0.0) {
  return detail::op(ag_op_scaled_dot_product_attention, query.get(), key.get(), value.get(), attn_mask.get(), dropout_p,
                    int32_t{is_causal}, scale);
}
inline Tensor kl_div(const Tensor &input, const Tensor &target, int32_t reduction = AG_REDUCTION_MEAN,
                     bool log_target = false) {
  return detail::op(ag_op_kl_div, input.get(), target.get(), reduction, int32_t{log_target});
}
inline Tensor poisson_nll_loss(const Tensor &input, const Tensor &target, bool log_input = true, bool full = false,
                               double eps = 1e-8, int32_t reduction = AG_REDUCTION_MEAN) {
  return detail::op(ag_op_poisson_nll_loss, input.get(), target.get(), int32_t{log_input}, int32_t{full}, eps,
                    reduction);
}
inline Tensor gaussian_nll_loss(const Tensor &input, const Tensor &target, const Tensor &var, bool full = false,
                                double eps = 1e-6, int32_t reduction = AG_REDUCTION_MEAN) {
  return detail::op(ag_op_gaussian_nll_loss, input.get(), target.get(), var.get(), int32_t{full}, eps, reduction);
}
inline Tensor margin_ranking_loss(const Tensor &input1, const Tensor &input2, const Tensor &target,
                                  double margin = 0.0, int32_t reduction = AG_REDUCTION_MEAN) {
  return detail::op(ag_op_margin_ranking_loss, input1.get(), input2.get(), target.get(), margin, reduction);
}
inline Tensor cosine_embedding_loss(const Tensor &input1, const Tensor &input2, const Tensor &target,
                                    double margin = 0.0, int32_t reduction = AG_REDUCTION_MEAN) {
  return detail::op(ag_op_cosine_embedding_loss, input1.get(), input2.get(), target.get(), margin, reduction);
}
inline Tensor triplet_margin_loss(const Tensor &anchor, const Tensor &positive, const Tensor &negative,
                                  double margin = 1.0, double p = 2.0, double eps = 1e-6, bool swap = false,
                                  int32_t reduction = AG_REDUCTION_MEAN) {
  return detail::op(ag_op_triplet_margin_loss, anchor.get(), positive.get(), negative.get(), margin, p, eps,
                    int32_t{swap}, reduction);
}
/** The C argument order (weight first, as ag::embedding); padding_idx -1 = none. */
inline Tensor embedding_bag(const Tensor &weight, const Tensor &indices, const Tensor &offsets = Tensor(),
                            int32_t mode = AG_EMBEDDING_BAG_MEAN, const Tensor &per_sample_weights = Tensor(),
                            bool include_last_offset = false, int64_t padding_idx = -1) {
  return detail::op(ag_op_embedding_bag, weight.get(), indices.get(), offsets.get(), mode, per_sample_weights.get(),
                    int32_t{include_last_offset}, padding_idx);
}
inline Tensor ctc_loss(const Tensor &log_probs, const Tensor &targets, const Tensor &input_lengths,
                       const Tensor &target_lengths, int64_t blank = 0, int32_t reduction = AG_REDUCTION_MEAN,
                       bool zero_infinity = false) {
  return detail::op(ag_op_ctc_loss, log_probs.get(), targets.get(), input_lengths.get(), target_lengths.get(), blank,
                    reduction, int32_t{zero_infinity});
}

/* ---- linear algebra (ag/ops_linalg.h) ---- */

inline Tensor linear(const Tensor &x, const Tensor &weight, const Tensor &bias = Tensor()) {
  return detail::op(ag_op_linear, x.get(), weight.get(), bias.get());
}
inline Tensor linear_act(const Tensor &x, const Tensor &weight, const Tensor &bias = Tensor(),
                         int32_t activation = AG_ACTIVATION_RELU) {
  return detail::op(ag_op_linear_act, x.get(), weight.get(), bias.get(), activation);
}

inline Tensor diagonal(const Tensor &x, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1) {
  return detail::op(ag_op_diagonal, x.get(), offset, dim1, dim2);
}
inline Tensor diag_embed(const Tensor &x, int64_t offset = 0, int64_t dim1 = -2, int64_t dim2 = -1) {
  return detail::op(ag_op_diag_embed, x.get(), offset, dim1, dim2);
}
inline Tensor cross(const Tensor &a, const Tensor &b, int64_t dim = -1) {
  return detail::op(ag_op_cross, a.get(), b.get(), dim);
}
inline Tensor tensordot(const Tensor &a, const Tensor &b, const std::vector<int64_t> &dims_a,
                        const std::vector<int64_t> &dims_b) {
  return detail::op(ag_op_tensordot, a.get(), b.get(), detail::data_or_null(dims_a), detail::count_of(dims_a),
                    detail::data_or_null(dims_b), detail::count_of(dims_b));
}
inline Tensor einsum(const std::string &equation, const std::vector<Tensor> &operands) {
  std::vector<const ag_tensor *> h = detail::handles_of(operands);
  return detail::op(ag_op_einsum, equation.c_str(), h.empty() ? nullptr : h.data(), static_cast<int32_t>(h.size()));
}
/** (sign, logabsdet) as (values, indices). */
inline ValuesIndices slogdet(const Tensor &a) {
  ag_tensor *sign = nullptr, *logabsdet = nullptr;
  detail::check(ag_op_slogdet(&sign, &logabsdet, a.get()));
  return detail::values_indices(sign, logabsdet);
}
inline Tensor cholesky(const Tensor &a, bool upper = false) { return detail::op(ag_op_cholesky, a.get(), upper ? 1 : 0); }
inline Tensor solve_triangular(const Tensor &a, const Tensor &b, bool upper, bool left = true,
                               bool unitriangular = false) {
  return detail::op(ag_op_solve_triangular, a.get(), b.get(), upper ? 1 : 0, left ? 1 : 0, unitriangular ? 1 : 0);
}
inline Tensor cholesky_solve(const Tensor &b, const Tensor &l, bool upper = false) {
  return detail::op(ag_op_cholesky_solve, b.get(), l.get(), upper ? 1 : 0);
}
/** (eigenvalues, eigenvectors) as (values, indices). */
inline ValuesIndices eigh(const Tensor &a, bool upper = false) {
  ag_tensor *l = nullptr, *v = nullptr;
  detail::check(ag_op_eigh(&l, &v, a.get(), upper ? 1 : 0));
  return detail::values_indices(l, v);
}
inline Tensor eigvalsh(const Tensor &a, bool upper = false) { return detail::op(ag_op_eigvalsh, a.get(), upper ? 1 : 0); }
/** (U, S, Vh) of the thin SVD. */
inline std::tuple<Tensor, Tensor, Tensor> svd(const Tensor &a, bool full_matrices = false) {
  ag_tensor *u = nullptr, *s = nullptr, *vh = nullptr;
  detail::check(ag_op_svd(&u, &s, &vh, a.get(), full_matrices ? 1 : 0));
  return {Tensor::adopt(u), Tensor::adopt(s), Tensor::adopt(vh)};
}
/** (Q, R) as (values, indices). */
inline ValuesIndices qr(const Tensor &a, int32_t mode = AG_QR_REDUCED) {
  ag_tensor *q = nullptr, *r = nullptr;
  detail::check(ag_op_qr(&q, &r, a.get(), mode));
  return detail::values_indices(q, r);
}
/** dims {}: the last two; ord AG_NORM_FRO, AG_NORM_NUC or a number. */
inline Tensor matrix_norm(const Tensor &x, double ord = AG_NORM_FRO, const std::vector<int64_t> &dims = {},
                          bool keepdim = false) {
  return detail::op(ag_op_matrix_norm, x.get(), detail::data_or_null(dims), detail::count_of(dims), keepdim ? 1 : 0,
                    ord);
}
/** ord NaN: PyTorch's None; dims {}: None. */
inline Tensor linalg_norm(const Tensor &x, double ord = std::numeric_limits<double>::quiet_NaN(),
                          const std::vector<int64_t> &dims = {}, bool keepdim = false) {
  return detail::op(ag_op_linalg_norm, x.get(), detail::data_or_null(dims), detail::count_of(dims), keepdim ? 1 : 0,
                    ord);
}
/** atol, rtol NaN: PyTorch's None (defaults). */
inline Tensor pinv(const Tensor &a, double atol = std::numeric_limits<double>::quiet_NaN(),
                   double rtol = std::numeric_limits<double>::quiet_NaN(), bool hermitian = false) {
  return detail::op(ag_op_pinv, a.get(), atol, rtol, hermitian ? 1 : 0);
}

/* ---- softmax gradients and losses (ag/ops_nn.h) ---- */

inline Tensor cross_entropy(const Tensor &input, const Tensor &target, int32_t reduction = AG_REDUCTION_MEAN,
                            int64_t ignore_index = AG_IGNORE_INDEX_DEFAULT, double label_smoothing = 0.0) {
  return detail::op(ag_op_cross_entropy, input.get(), target.get(), reduction, ignore_index, label_smoothing);
}
inline Tensor nll_loss(const Tensor &input, const Tensor &target, int32_t reduction = AG_REDUCTION_MEAN,
                       int64_t ignore_index = AG_IGNORE_INDEX_DEFAULT) {
  return detail::op(ag_op_nll_loss, input.get(), target.get(), reduction, ignore_index);
}
inline Tensor smooth_l1_loss(const Tensor &input, const Tensor &target, int32_t reduction = AG_REDUCTION_MEAN,
                             double beta = 1.0) {
  return detail::op(ag_op_smooth_l1_loss, input.get(), target.get(), reduction, beta);
}
inline Tensor huber_loss(const Tensor &input, const Tensor &target, int32_t reduction = AG_REDUCTION_MEAN,
                         double delta = 1.0) {
  return detail::op(ag_op_huber_loss, input.get(), target.get(), reduction, delta);
}
inline Tensor binary_cross_entropy_with_logits(const Tensor &input, const Tensor &target,
                                               const Tensor &pos_weight = Tensor(),
                                               int32_t reduction = AG_REDUCTION_MEAN) {
  return detail::op(ag_op_binary_cross_entropy_with_logits, input.get(), target.get(), pos_weight.get(), reduction);
}

/* ---- reductions (ag/ops_reduce.h); dims {} reduces over all dims ---- */

/** correction 1: the unbiased variance (PyTorch's default). */
inline Tensor var_dims(const Tensor &x, const std::vector<int64_t> &dims, bool keepdim = false,
                       double correction = 1.0) {
  return detail::op(ag_op_var_dims, x.get(), detail::data_or_null(dims), detail::count_of(dims), keepdim ? 1 : 0,
                    correction);
}
inline Tensor std_dims(const Tensor &x, const std::vector<int64_t> &dims, bool keepdim = false,
                       double correction = 1.0) {
  return detail::op(ag_op_std_dims, x.get(), detail::data_or_null(dims), detail::count_of(dims), keepdim ? 1 : 0,
                    correction);
}
inline Tensor norm_dims(const Tensor &x, const std::vector<int64_t> &dims, bool keepdim = false, double p = 2.0) {
  return detail::op(ag_op_norm_dims, x.get(), detail::data_or_null(dims), detail::count_of(dims), keepdim ? 1 : 0,
                    p);
}

/* ---- sorting, selecting and distances added in 0.2 (ag/ops_reduce.h) ---- */

inline ValuesIndices sort(const Tensor &x, int64_t dim = -1, bool descending = false, bool stable = false) {
  ag_tensor *values = nullptr, *indices = nullptr;
  detail::check(ag_op_sort(&values, &indices, x.get(), dim, descending ? 1 : 0, stable ? 1 : 0));
  return detail::values_indices(values, indices);
}
inline ValuesIndices topk(const Tensor &x, int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true) {
  ag_tensor *values = nullptr, *indices = nullptr;
  detail::check(ag_op_topk(&values, &indices, x.get(), k, dim, largest ? 1 : 0, sorted ? 1 : 0));
  return detail::values_indices(values, indices);
}
inline ValuesIndices kthvalue(const Tensor &x, int64_t k, int64_t dim = -1, bool keepdim = false) {
  ag_tensor *values = nullptr, *indices = nullptr;
  detail::check(ag_op_kthvalue(&values, &indices, x.get(), k, dim, keepdim ? 1 : 0));
  return detail::values_indices(values, indices);
}
inline Tensor pairwise_distance(const Tensor &x1, const Tensor &x2, double p = 2.0, double eps = 1e-6,
                                bool keepdim = false) {
  return detail::op(ag_op_pairwise_distance, x1.get(), x2.get(), p, eps, keepdim ? 1 : 0);
}
inline Tensor cosine_similarity(const Tensor &x1, const Tensor &x2, int64_t dim = 1, double eps = 1e-8) {
  return detail::op(ag_op_cosine_similarity, x1.get(), x2.get(), dim, eps);
}
inline Tensor normalize(const Tensor &x, double p = 2.0, int64_t dim = 1, double eps = 1e-12) {
  return detail::op(ag_op_normalize, x.get(), p, dim, eps);
}

/* ---- convolution and pooling (ag/ops_conv.h); {} = the C default of a (height, width) ---- */

inline Tensor unfold(const Tensor &x, const std::vector<int64_t> &kernel_size,
                     const std::vector<int64_t> &dilation = std::vector<int64_t>(),
                     const std::vector<int64_t> &padding = std::vector<int64_t>(),
                     const std::vector<int64_t> &stride = std::vector<int64_t>()) {
  return detail::op(ag_op_unfold, x.get(), detail::Pair("unfold", "kernel_size", kernel_size).get(),
                    detail::Pair("unfold", "dilation", dilation).get(),
                    detail::Pair("unfold", "padding", padding).get(), detail::Pair("unfold", "stride", stride).get());
}
inline Tensor fold(const Tensor &x, const std::vector<int64_t> &output_size, const std::vector<int64_t> &kernel_size,
                   const std::vector<int64_t> &dilation = std::vector<int64_t>(),
                   const std::vector<int64_t> &padding = std::vector<int64_t>(),
                   const std::vector<int64_t> &stride = std::vector<int64_t>()) {
  return detail::op(ag_op_fold, x.get(), detail::Pair("fold", "output_size", output_size).get(),
                    detail::Pair("fold", "kernel_size", kernel_size).get(),
                    detail::Pair("fold", "dilation", dilation).get(), detail::Pair("fold", "padding", padding).get(),
                    detail::Pair("fold", "stride", stride).get());
}
inline Tensor conv2d(const Tensor &x, const Tensor &weight, const Tensor &bias = Tensor(),
                     const std::vector<int64_t> &stride = std::vector<int64_t>(),
                     const std::vector<int64_t> &padding = std::vector<int64_t>(),
                     const std::vector<int64_t> &dilation = std::vector<int64_t>(), int64_t groups = 1) {
  return detail::op(ag_op_conv2d, x.get(), weight.get(), bias.get(), detail::Pair("conv2d", "stride", stride).get(),
                    detail::Pair("conv2d", "padding", padding).get(),
                    detail::Pair("conv2d", "dilation", dilation).get(), groups);
}
inline Tensor conv1d(const Tensor &x, const Tensor &weight, const Tensor &bias = Tensor(), int64_t stride = 1,
                     int64_t padding = 0, int64_t dilation = 1, int64_t groups = 1) {
  return detail::op(ag_op_conv1d, x.get(), weight.get(), bias.get(), stride, padding, dilation, groups);
}
/** stride {} = kernel_size. */
inline Tensor max_pool2d(const Tensor &x, const std::vector<int64_t> &kernel_size,
                         const std::vector<int64_t> &stride = std::vector<int64_t>(),
                         const std::vector<int64_t> &padding = std::vector<int64_t>(),
                         const std::vector<int64_t> &dilation = std::vector<int64_t>(), bool ceil_mode = false) {
  return detail::op(ag_op_max_pool2d, x.get(), detail::Pair("max_pool2d", "kernel_size", kernel_size).get(),
                    detail::Pair("max_pool2d", "stride", stride).get(),
                    detail::Pair("max_pool2d", "padding", padding).get(),
                    detail::Pair("max_pool2d", "dilation", dilation).get(), ceil_mode ? 1 : 0);
}
/** The pooled output (values) and each maximum's flat position h*W + w (indices). */
inline ValuesIndices max_pool2d_with_indices(const Tensor &x, const std::vector<int64_t> &kernel_size,
                                             const std::vector<int64_t> &stride = std::vector<int64_t>(),
                                             const std::vector<int64_t> &padding = std::vector<int64_t>(),
                                             const std::vector<int64_t> &dilation = std::vector<int64_t>(),
                                             bool ceil_mode = false) {
  const char *fn = "max_pool2d_with_indices";
  ag_tensor *values = nullptr, *indices = nullptr;
  detail::check(ag_op_max_pool2d_with_indices(
      &values, &indices, x.get(), detail::Pair(fn, "kernel_size", kernel_size).get(),
      detail::Pair(fn, "stride", stride).get(), detail::Pair(fn, "padding", padding).get(),
      detail::Pair(fn, "dilation", dilation).get(), ceil_mode ? 1 : 0));
  return detail::values_indices(values, indices);
}
/** divisor_override 0: divide by the window size. */
inline Tensor avg_pool2d(const Tensor &x, const std::vector<int64_t> &kernel_size,
                         const std::vector<int64_t> &stride = std::vector<int64_t>(),
                         const std::vector<int64_t> &padding = std::vector<int64_t>(), bool ceil_mode = false,
                         bool count_include_pad = true, int64_t divisor_override = 0) {
  return detail::op(ag_op_avg_pool2d, x.get(), detail::Pair("avg_pool2d", "kernel_size", kernel_size).get(),
                    detail::Pair("avg_pool2d", "stride", stride).get(),
                    detail::Pair("avg_pool2d", "padding", padding).get(), ceil_mode ? 1 : 0,
                    count_include_pad ? 1 : 0, divisor_override);
}
inline Tensor adaptive_avg_pool2d(const Tensor &x, const std::vector<int64_t> &output_size) {
  return detail::op(ag_op_adaptive_avg_pool2d, x.get(),
                    detail::Pair("adaptive_avg_pool2d", "output_size", output_size).get());
}

/* ---- creation (ag/ops_creation.h) ---- */

inline Tensor arange(const Context &ctx, double start, double end, double step = 1.0, ag_dtype dtype = AG_F32) {
  return detail::op(ag_op_arange, ctx.get(), dtype, start, end, step);
}
inline Tensor linspace(const Context &ctx, double start, double end, int64_t steps, ag_dtype dtype = AG_F32) {
  return detail::op(ag_op_linspace, ctx.get(), dtype, start, end, steps);
}
/** m -1: a square (n, n) matrix. */
inline Tensor eye(const Context &ctx, int64_t n, int64_t m = -1, ag_dtype dtype = AG_F32) {
  return detail::op(ag_op_eye, ctx.get(), dtype, n, m);
}

/* ---- random (ag/random.h): drawn from the context's generator (Context::manual_seed) ---- */

inline Tensor uniform(const Context &ctx, const std::vector<int64_t> &shape, double low = 0.0, double high = 1.0,
                      ag_dtype dtype = AG_F32) {
  return detail::op(ag_op_uniform, ctx.get(), dtype, detail::data_or_null(shape), detail::count_of(shape), low,
                    high);
}
inline Tensor normal(const Context &ctx, const std::vector<int64_t> &shape, double mean = 0.0, double std = 1.0,
                     ag_dtype dtype = AG_F32) {
  return detail::op(ag_op_normal, ctx.get(), dtype, detail::data_or_null(shape), detail::count_of(shape), mean, std);
}
inline Tensor bernoulli(const Tensor &p) { return detail::op(ag_op_bernoulli, p.get()); }
inline Tensor bernoulli_scalar(const Context &ctx, const std::vector<int64_t> &shape, double p,
                               ag_dtype dtype = AG_F32) {
  return detail::op(ag_op_bernoulli_scalar, ctx.get(), dtype, detail::data_or_null(shape), detail::count_of(shape),
                    p);
}
/** AG_I64 values in [low, high). */
inline Tensor randint(const Context &ctx, const std::vector<int64_t> &shape, int64_t low, int64_t high) {
  return detail::op(ag_op_randint, ctx.get(), detail::data_or_null(shape), detail::count_of(shape), low, high);
}
inline Tensor dropout(const Tensor &x, double p = 0.5, bool training = true) {
  return detail::op(ag_op_dropout, x.get(), p, training ? 1 : 0);
}

/* ---- selection and interpolation (ag/ops.h) ---- */

inline Tensor where(const Tensor &cond, const Tensor &a, const Tensor &b) {
  return detail::op(ag_op_where, cond.get(), a.get(), b.get());
}
inline Tensor lerp(const Tensor &a, const Tensor &b, const Tensor &weight) {
  return detail::op(ag_op_lerp, a.get(), b.get(), weight.get());
}
/* ---- special functions and three-input arithmetic (ag/ops.h, 0.2) ---- */

inline Tensor polygamma(int64_t order, const Tensor &x) { return detail::op(ag_op_polygamma, order, x.get()); }
/** NaN posinf / neginf: the dtype's largest / lowest finite value (PyTorch's None). */
inline Tensor nan_to_num(const Tensor &x, double nan = 0.0, double posinf = std::numeric_limits<double>::quiet_NaN(),
                         double neginf = std::numeric_limits<double>::quiet_NaN()) {
  return detail::op(ag_op_nan_to_num, x.get(), nan, posinf, neginf);
}
inline Tensor addcmul(const Tensor &input, const Tensor &tensor1, const Tensor &tensor2, double value = 1.0) {
  return detail::op(ag_op_addcmul, input.get(), tensor1.get(), tensor2.get(), value);
}
inline Tensor addcdiv(const Tensor &input, const Tensor &tensor1, const Tensor &tensor2, double value = 1.0) {
  return detail::op(ag_op_addcdiv, input.get(), tensor1.get(), tensor2.get(), value);
}
inline Tensor lerp(const Tensor &a, const Tensor &b, double weight) {
  return lerp(a, b, detail::scalar_like(a, weight));
}

/* ---- normalization (ag/ops_norm.h); eps defaults are PyTorch's ---- */

inline Tensor layer_norm(const Tensor &x, const std::vector<int64_t> &normalized_shape,
                         const Tensor &weight = Tensor(), const Tensor &bias = Tensor(), double eps = 1e-5) {
  return detail::op(ag_op_layer_norm, x.get(), detail::data_or_null(normalized_shape),
                    detail::count_of(normalized_shape), weight.get(), bias.get(), eps);
}
inline Tensor rms_norm(const Tensor &x, const std::vector<int64_t> &normalized_shape, const Tensor &weight,
                       double eps) {
  return detail::op(ag_op_rms_norm, x.get(), detail::data_or_null(normalized_shape),
                    detail::count_of(normalized_shape), weight.get(), eps);
}
/** eps: the machine epsilon of x's dtype, as PyTorch. */
inline Tensor rms_norm(const Tensor &x, const std::vector<int64_t> &normalized_shape,
                       const Tensor &weight = Tensor()) {
  const double eps = x && x.dtype() == AG_F32 ? static_cast<double>(std::numeric_limits<float>::epsilon())
                                              : std::numeric_limits<double>::epsilon();
  return rms_norm(x, normalized_shape, weight, eps);
}
/** Training updates running_mean and running_var (when given) in place. */
inline Tensor batch_norm(const Tensor &x, const Tensor &running_mean, const Tensor &running_var,
                         const Tensor &weight = Tensor(), const Tensor &bias = Tensor(), bool training = false,
                         double momentum = 0.1, double eps = 1e-5) {
  return detail::op(ag_op_batch_norm, x.get(), running_mean.get(), running_var.get(), weight.get(), bias.get(),
                    training ? 1 : 0, momentum, eps);
}
inline Tensor group_norm(const Tensor &x, int64_t num_groups, const Tensor &weight = Tensor(),
                         const Tensor &bias = Tensor(), double eps = 1e-5) {
  return detail::op(ag_op_group_norm, x.get(), num_groups, weight.get(), bias.get(), eps);
}

}  // namespace ag

// The autograd part needs the op wrappers above; it is included here, not
// from ag.hpp, so that any of the three headers can be included first.
#include "ag/ag_autograd.hpp"

#endif /* AG_AG_OPS_HPP */
