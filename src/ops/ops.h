// The internal C++ op API: one function per row of ops.def, with the
// signature its family gives. Ops record a node when grad mode is on and an
// input requires grad; backward formulas call these same functions, so
// create_graph records the backward pass too. Errors throw ag::Error.
#pragma once

#include <array>
#include <string>
#include <tuple>
#include <vector>
#include <utility>

#include "core/dtype.h"
#include "core/shape.h"
#include "core/tensor_impl.h"

namespace ag::ops {

// How a loss reduces its per-element values (the AG_REDUCTION_* values).
enum class Reduction : int32_t { None = 0, Mean = 1, Sum = 2 };

// The C++ signature of each family of ops.def (CUSTOM ops are declared below).
#define AG_DECL_UNARY(name) Tensor name(const Tensor& x);
#define AG_DECL_UNARY_SCALAR(name) Tensor name(const Tensor& x, double attr);
#define AG_DECL_UNARY_SCALAR2(name) Tensor name(const Tensor& x, double attr, double attr2);
#define AG_DECL_BINARY(name) Tensor name(const Tensor& a, const Tensor& b);
#define AG_DECL_SHAPE(name) Tensor name(const Tensor& x, const Dims& shape);
#define AG_DECL_DTYPE(name) Tensor name(const Tensor& x, DType dtype);
#define AG_DECL_DIM(name) Tensor name(const Tensor& x, int64_t dim);
#define AG_DECL_DIMS(name) Tensor name(const Tensor& x, const Dims& dims, bool keepdim);
#define AG_DECL_DIMS_SCALAR(name) Tensor name(const Tensor& x, const Dims& dims, bool keepdim, double attr);
#define AG_DECL_DIMLIST(name) Tensor name(const Tensor& x, const Dims& dims);
#define AG_DECL_INT2(name) Tensor name(const Tensor& x, int64_t i, int64_t j);
#define AG_DECL_DIM_KEEPDIM(name) Tensor name(const Tensor& x, int64_t dim, bool keepdim);
#define AG_DECL_VALUES_INDICES(name) std::pair<Tensor, Tensor> name(const Tensor& x, int64_t dim, bool keepdim);
#define AG_DECL_TENSORS_DIM(name) Tensor name(const std::vector<Tensor>& xs, int64_t dim);
#define AG_DECL_INDEX(name) Tensor name(const Tensor& x, int64_t dim, const Tensor& index);
#define AG_DECL_INDEX_SRC(name) Tensor name(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
#define AG_DECL_GRAD_Y_DIM(name) Tensor name(const Tensor& grad, const Tensor& y, int64_t dim);
#define AG_DECL_LOSS(name) Tensor name(const Tensor& input, const Tensor& target, Reduction r);
#define AG_DECL_RANDOM(name) Tensor name(Context* ctx, DType dt, const Dims& shape);
#define AG_DECL_RANDOM2(name) Tensor name(Context* ctx, DType dt, const Dims& shape, double attr, double attr2);
#define AG_DECL_NORM_BACKWARD(name) \
  Tensor name(const Tensor& grad, const Tensor& x, const Dims& normalized_shape, const Tensor& weight, double eps);
#define AG_DECL_NORM_WEIGHT_GRAD(name) \
  Tensor name(const Tensor& grad, const Tensor& x, const Dims& normalized_shape, double eps);
#define AG_DECL_INT(name) Tensor name(const Tensor& x, int64_t k);
#define AG_DECL_ADDMM(name) \
  Tensor name(const Tensor& input, const Tensor& a, const Tensor& b, double beta, double alpha);
#define AG_DECL_STAT_MEAN(name) \
  std::pair<Tensor, Tensor> name(const Tensor& x, const Dims& dims, bool keepdim, double correction);
#define AG_DECL_SCAN_INDICES(name) std::pair<Tensor, Tensor> name(const Tensor& x, int64_t dim);
#define AG_DECL_BINARY_SCALAR(name) Tensor name(const Tensor& a, const Tensor& b, double p);
#define AG_DECL_QUANTILE(name) \
  Tensor name(const Tensor& x, const Tensor& q, const Dims& dims, bool keepdim, int32_t interpolation);
#define AG_DECL_CUSTOM(name)  // declared by hand below
#define AG_OP(name, family, ...) AG_DECL_##family(name)
#include "ops/ops.def"
// (What each op computes: its block in src/ops and its C documentation.)

// The same ops on a first input the caller gives up (a temporary, such as an
// upstream gradient in a backward formula): when nobody else sees it and no
// graph is recorded, the result is written into its buffer; else as above.
Tensor add(Tensor&& a, const Tensor& b);
Tensor sub(Tensor&& a, const Tensor& b);
Tensor mul(Tensor&& a, const Tensor& b);
Tensor div(Tensor&& a, const Tensor& b);
Tensor tanh_backward(Tensor&& g, const Tensor& t);
// relu's gradient from its output y: g where y > 0 (or NaN), else +0. A
// recorded select when a graph is built (create_graph), else one fused pass,
// with the same bits.
Tensor relu_backward(Tensor&& g, const Tensor& y);

// ---- shape and views (views share the input's storage and version counter) ----
Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step);
Tensor slice_backward(const Tensor& g, const Dims& input_shape, int64_t dim, int64_t start, int64_t end,
                      int64_t step);
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length);
std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& sizes, int64_t dim);
std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim);
int64_t chunk_count(const Tensor& x, int64_t chunks, int64_t dim);
Tensor repeat(const Tensor& x, const Dims& repeats);
enum class PadMode : int32_t { Constant = 0, Reflect = 1 };  // = AG_PAD_CONSTANT, AG_PAD_REFLECT
Tensor pad(const Tensor& x, const std::vector<int64_t>& pads, PadMode mode, double value);

// ---- indexing (i64 indices, never wrapped; bool masks) ----
Tensor masked_fill(const Tensor& x, const Tensor& mask, double value);
Tensor embedding(const Tensor& weight, const Tensor& indices);
Tensor one_hot(const Tensor& indices, int64_t num_classes);
// ---- linear algebra (ops/linalg.cc) ----
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias);  // bias may be null
// activation: AG_ACTIVATION_NONE or AG_ACTIVATION_RELU (checked by the C entry)
Tensor linear_act(const Tensor& x, const Tensor& weight, const Tensor& bias, int32_t activation);
// (ops/linalg_struct.cc, ops/linalg_decomp.cc)
Tensor diagonal(const Tensor& x, int64_t offset, int64_t dim1, int64_t dim2);
Tensor diag_embed(const Tensor& x, int64_t offset, int64_t dim1, int64_t dim2);
Tensor cross(const Tensor& a, const Tensor& b, int64_t dim);
Tensor tensordot(const Tensor& a, const Tensor& b, const Dims& dims_a, const Dims& dims_b);
Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands);  // ops/einsum.cc
std::pair<Tensor, Tensor> slogdet(const Tensor& a);  // (sign, logabsdet)
Tensor cholesky(const Tensor& a, bool upper);
Tensor solve_triangular(const Tensor& a, const Tensor& b, bool upper, bool left, bool unitriangular);
Tensor cholesky_solve(const Tensor& b, const Tensor& l, bool upper);
// Decompositions and norms of linalg_eig.cc, linalg_norm.cc.
enum class QrMode : int32_t { Reduced = 0, Complete = 1, R = 2 };  // the AG_QR_* values
constexpr double kNormFro = 1000000.0, kNormNuc = 1000001.0;        // AG_NORM_FRO, AG_NORM_NUC
std::pair<Tensor, Tensor> eigh(const Tensor& a, bool upper);        // (eigenvalues, eigenvectors)
Tensor eigvalsh(const Tensor& a, bool upper);
std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& a, bool full_matrices);  // (U, S, Vh)
std::pair<Tensor, Tensor> qr(const Tensor& a, QrMode mode);         // (Q, R); Q empty for QrMode::R
Tensor pinv(const Tensor& a, double atol, double rtol, bool hermitian);  // NaN: PyTorch's None
// ---- losses (ops/losses.cc) ----
// Checks a C reduction argument.
Reduction reduction_arg(int32_t r);

Tensor cross_entropy(const Tensor& input, const Tensor& target, Reduction r, int64_t ignore_index,
                     double label_smoothing);
Tensor nll_loss(const Tensor& input, const Tensor& target, Reduction r, int64_t ignore_index);
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction r, double beta);
Tensor huber_loss(const Tensor& input, const Tensor& target, Reduction r, double delta);
// pos_weight may be null.
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, const Tensor* pos_weight,
                                        Reduction r);

// cumsum from the start (reverse = false) or from the end of dim.
Tensor cumsum_dir(const Tensor& x, int64_t dim, bool reverse);

// ---- convolution and pooling (ops/conv.cc, ops/pool.cc) ----
// Spatial arguments are (height, width) pairs; inputs are (N, C, H, W) or
// unbatched (C, H, W) (conv1d: (N, C, L) or (C, L)).
using Size2d = std::array<int64_t, 2>;
Tensor unfold(const Tensor& x, Size2d kernel_size, Size2d dilation, Size2d padding, Size2d stride);
Tensor fold(const Tensor& cols, Size2d output_size, Size2d kernel_size, Size2d dilation, Size2d padding,
            Size2d stride);
Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, Size2d stride, Size2d padding,
              Size2d dilation, int64_t groups);  // bias may be null
Tensor conv1d(const Tensor& x, const Tensor& weight, const Tensor& bias, int64_t stride, int64_t padding,
              int64_t dilation, int64_t groups);
// Returns the pooled values and sets *indices (i64, flat h*W + w positions in
// each plane) when indices is not null.
Tensor max_pool2d(const Tensor& x, Size2d kernel_size, Size2d stride, Size2d padding, Size2d dilation, bool ceil_mode,
                  Tensor* indices);
Tensor avg_pool2d(const Tensor& x, Size2d kernel_size, Size2d stride, Size2d padding, bool ceil_mode,
                  bool count_include_pad, int64_t divisor_override);  // divisor_override 0: none
Tensor adaptive_avg_pool2d(const Tensor& x, Size2d output_size);

// ---- creation (ops/creation.cc): new leaves, no graph ----
Tensor arange(Context* ctx, DType dt, double start, double end, double step);
Tensor linspace(Context* ctx, DType dt, double start, double end, int64_t steps);
Tensor eye(Context* ctx, DType dt, int64_t n, int64_t m);  // m = -1: n
// ---- random (ops/random.cc): from the context's Philox generator ----
Tensor bernoulli(const Tensor& p);
Tensor bernoulli_scalar(Context* ctx, DType dt, const Dims& shape, double p);
Tensor randint(Context* ctx, const Dims& shape, int64_t low, int64_t high);
Tensor dropout(const Tensor& x, double p, bool training);
// Elementwise (CUSTOM rows of ops.def).
// where: cond ? a : b, cond bool, a and b floating, all three broadcast.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
// lerp: a + weight * (b - a), all three broadcast.
Tensor lerp(const Tensor& a, const Tensor& b, const Tensor& weight);
// polygamma(n, x), n >= 0 (digamma for n = 0).
Tensor polygamma(int64_t n, const Tensor& x);
// NaN -> nan, +inf -> posinf, -inf -> neginf (NaN: the dtype's extremes).
Tensor nan_to_num(const Tensor& x, double nan, double posinf, double neginf);
// input + value t1 t2, input + value t1 / t2 (all three broadcast).
Tensor addcmul(const Tensor& input, const Tensor& t1, const Tensor& t2, double value);
Tensor addcdiv(const Tensor& input, const Tensor& t1, const Tensor& t2, double value);
// ---- normalization (ops/norm.cc); weight, bias and running stats may be null ----
// Over the last normalized_shape.size() dims of x (biased variance).
Tensor layer_norm(const Tensor& x, const Dims& normalized_shape, const Tensor& weight, const Tensor& bias, double eps);
Tensor rms_norm(const Tensor& x, const Dims& normalized_shape, const Tensor& weight, double eps);
// x is (N, C, ...); training updates the running stats in place (no graph).
Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, bool training, double momentum, double eps);
// x is (N, C, ...); C divisible by num_groups.
Tensor group_norm(const Tensor& x, int64_t num_groups, const Tensor& weight, const Tensor& bias, double eps);

// ---- shape and indexing added in 0.2 (views.cc, shape_rearrange.cc, scatter.cc) ----
Tensor roll(const Tensor& x, const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims);
Tensor rot90(const Tensor& x, int64_t k, const Dims& dims);
Tensor repeat_interleave_tensor(const Tensor& x, const Tensor& repeats, int64_t dim);
int64_t unbind_count(const Tensor& x, int64_t dim);  // size(dim), dim checked
std::vector<Tensor> unbind(const Tensor& x, int64_t dim);
std::vector<Tensor> tensor_split(const Tensor& x, int64_t sections, int64_t dim);
std::vector<Tensor> tensor_split_indices(const Tensor& x, const std::vector<int64_t>& indices, int64_t dim);
Tensor diff(const Tensor& x, int64_t n, int64_t dim, const Tensor& prepend, const Tensor& append);  // may be null
Tensor scatter_value(const Tensor& x, int64_t dim, const Tensor& index, double value);
enum class ScatterReduce : int32_t { Sum = 0, Prod = 1, Mean = 2, Amax = 3, Amin = 4 };  // = AG_SCATTER_REDUCE_*
Tensor scatter_reduce(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src, ScatterReduce reduce,
                      bool include_self);
Tensor index_put(const Tensor& x, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate);
Tensor index_fill(const Tensor& x, int64_t dim, const Tensor& index, double value);
Tensor masked_scatter(const Tensor& x, const Tensor& mask, const Tensor& source);
Tensor masked_select(const Tensor& x, const Tensor& mask);
Tensor take_along_dim(const Tensor& x, const Tensor& indices, int64_t dim);

// ---- nn added in 0.2 (conv_transpose.cc, resample.cc, pool_variants.cc, norm_variants.cc,
// attention.cc, losses_more.cc); bias, masks, running stats may be null ----
Tensor conv_transpose2d(const Tensor& x, const Tensor& weight, const Tensor& bias, Size2d stride, Size2d padding,
                        Size2d output_padding, int64_t groups, Size2d dilation);
Tensor conv_transpose1d(const Tensor& x, const Tensor& weight, const Tensor& bias, int64_t stride, int64_t padding,
                        int64_t output_padding, int64_t groups, int64_t dilation);
enum class InterpMode : int32_t { Nearest = 0, Linear = 1, Bilinear = 2 };  // = AG_INTERP_*
// size empty: by scale_factor (> 0).
Tensor interpolate(const Tensor& x, const Dims& size, double scale_factor, InterpMode mode, bool align_corners);
Tensor max_pool1d(const Tensor& x, int64_t kernel_size, int64_t stride, int64_t padding, int64_t dilation,
                  bool ceil_mode);  // stride 0: kernel_size
Tensor avg_pool1d(const Tensor& x, int64_t kernel_size, int64_t stride, int64_t padding, bool ceil_mode,
                  bool count_include_pad);
Tensor adaptive_max_pool2d(const Tensor& x, Size2d output_size);
Tensor instance_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                     const Tensor& bias, bool use_input_stats, double momentum, double eps);
Tensor local_response_norm(const Tensor& x, int64_t size, double alpha, double beta, double k);
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& attn_mask,
                                    double dropout_p, bool is_causal, double scale);  // scale 0: 1/sqrt(E)
Tensor reduce_loss(const Tensor& loss, Reduction r);
Tensor kl_div(const Tensor& input, const Tensor& target, Reduction r, bool log_target);
Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, bool log_input, bool full, double eps, Reduction r);
Tensor gaussian_nll_loss(const Tensor& input, const Tensor& target, const Tensor& var, bool full, double eps,
                         Reduction r);
Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin,
                           Reduction r);
Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin,
                             Reduction r);
Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative, double margin,
                           double p, double eps, bool swap, Reduction r);

// ---- reductions, sorting and distances added in 0.2 (cumulative.cc, sort.cc, distance.cc) ----
Tensor logcumsumexp_dir(const Tensor& x, int64_t dim, bool reverse);  // from the end of dim if reverse
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p, double eps, bool keepdim);
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim, double eps);
Tensor normalize(const Tensor& x, double p, int64_t dim, double eps);
std::pair<Tensor, Tensor> sort(const Tensor& x, int64_t dim, bool descending, bool stable);
std::pair<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim, bool largest, bool sorted);
std::pair<Tensor, Tensor> kthvalue(const Tensor& x, int64_t k, int64_t dim, bool keepdim);

// ---- embedding_bag and ctc_loss (embedding_bag_ctc.cc); offsets, per_sample_weights may be null ----
enum class EmbeddingBagMode : int32_t { Sum = 0, Mean = 1, Max = 2 };  // = AG_EMBEDDING_BAG_*
Tensor embedding_bag(const Tensor& weight, const Tensor& indices, const Tensor& offsets, EmbeddingBagMode mode,
                     const Tensor& per_sample_weights, bool include_last_offset, int64_t padding_idx);
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, int64_t blank, Reduction r, bool zero_infinity);

// Helpers for backward formulas (not ops themselves: no graph).
Tensor scalar_like(const Tensor& t, double value);  // 0-dim, t's dtype and context
Tensor zeros_like(const Tensor& t);
Tensor full(Context* ctx, DType dtype, const Dims& shape, double value);

}  // namespace ag::ops
