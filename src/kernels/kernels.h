// Kernels: plain computations over strided memory. They know dtypes and
// shapes, nothing of graphs or handles. Inputs are read through element
// strides (stride 0 = broadcast); outputs are contiguous unless said.
#pragma once

#include <cstdint>

#include "core/dtype.h"
#include "core/shape.h"

namespace ag::kernels {

// Strided read-only view: data points at the first element.
struct View {
  const char* data;
  const Dims* strides;
};

// True if `strides` read one element for the whole of `shape` (a broadcast
// scalar: stride 0 wherever the size is not 1).
inline bool is_broadcast_scalar(const Dims& shape, const Dims& strides) {
  for (int i = 0; i < shape.size(); ++i) {
    if (shape[i] != 1 && strides[i] != 0) return false;
  }
  return true;
}

// The elementwise kinds: the rows of kernels.def.
enum class UnaryKind {
#define AG_UNARY_KERNEL(kind, functor) kind,
#define AG_UNARY_KERNEL_BY_HAND(kind) kind,
#define AG_UNARY_KERNEL_SCALAR(kind, functor) kind,
#include "kernels/kernels.def"
};
enum class BinaryKind {
#define AG_BINARY_KERNEL(kind, functor) kind,
#define AG_BINARY_KERNEL_SCALAR(kind, functor) kind,
#define AG_BINARY_KERNEL_BY_HAND(kind) kind,
#include "kernels/kernels.def"
};

// out[i] = f(x[i]) over `shape`; floating dtypes only. Attributes:
//   PowScalar: attr = exponent;  LeakyRelu: attr = negative slope;  Elu: attr = alpha;
//   Softplus: attr = beta, attr2 = threshold;
//   Clamp: attr = lower, attr2 = upper bound (NaN = no bound);
//   InsideOpen / InsideClosed: 1 where attr < x < attr2 (<= for Closed), else 0;
//   the others: see kernels.def.
void unary(UnaryKind k, DType dt, const Dims& shape, View x, char* out, double attr, double attr2 = 0.0);
// unary() of one element at x (any shape of one element): the same bits,
// without the row driver (most calls of small graphs).
void unary_one(UnaryKind k, DType dt, const char* x, char* out, double attr, double attr2 = 0.0);

// unary() of n contiguous elements: the same vector row, without the shape
// walk (small tensors of small graphs, where that walk costs more than the
// arithmetic).
void unary_flat(UnaryKind k, DType dt, const char* x, char* out, size_t n, double attr, double attr2 = 0.0);

// out[i] = a[i] op b[i] over `shape` (the broadcast shape); floating dtypes only.
void binary(BinaryKind k, DType dt, const Dims& shape, View a, View b, char* out);
// binary() of n > 0 contiguous elements, where a (a_one) or b (b_one), not
// both, is one element read for all: the same vector rows, without the shape
// walk. False, with nothing written, for the kinds without vector rows
// (callers take binary()).
bool binary_flat(BinaryKind k, DType dt, const char* a, bool a_one, const char* b, bool b_one, char* out, size_t n);
// Whether k has vector rows (binary_flat takes it).
bool binary_has_rows(BinaryKind k);
// *out = *a op *b for one element, for the kinds that are one IEEE operation
// (Add, Sub, Mul, Div, TanhBackward): the bits of binary(). False (nothing
// written) for the other kinds.
bool binary_scalar(BinaryKind k, DType dt, const char* a, const char* b, char* out);
// The function binary_scalar calls for k and dt (null for the other kinds),
// for callers that run one kind many times (replayed steps).
using BinaryOneFn = void (*)(const char* a, const char* b, char* out);
BinaryOneFn binary_one_fn(BinaryKind k, DType dt);

// Comparisons a op b over `shape` (broadcast) into bool bytes (0 or 1); any
// comparison with NaN is false, except Ne.
enum class CompareKind { Eq, Ne, Lt, Le, Gt, Ge };
void compare(CompareKind k, DType dt, const Dims& shape, View a, View b, uint8_t* out);

// out[i] = cond[i] ? a[i] : b[i]; cond is bool bytes, a, b and out floating.
void where(DType dt, const Dims& shape, View cond, View a, View b, char* out);

// out[i] = a[i] + w[i] (b[i] - a[i]) (for |w| < 1/2; else b - (b - a)(1 - w),
// exact at w = 1), as PyTorch's lerp; floating.
void lerp(DType dt, const Dims& shape, View a, View b, View w, char* out);

// Sums x (of `shape`) into out, a contiguous tensor of `out_shape` that has
// x's ndim with 1 in every summed dim. Accumulates in double, in a fixed order.
void sum_to(DType dt, const Dims& shape, View x, const Dims& out_shape, char* out);

// Sum of n contiguous elements in double, in the fixed pairwise order of
// sum_to. Splitting x into chunks of kSumChunk elements (the last one
// shorter), summing each with sum_contiguous and merging the chunk sums in
// order with merge_block_sums gives the same bits as one call on all of x.
constexpr int64_t kSumChunk = int64_t{1} << 16;  // a power-of-two number of blocks
double sum_contiguous(DType dt, const char* x, int64_t n);
double merge_block_sums(const double* sums, int64_t count);

// Writes src (of `shape`, dtype src_dt) converted to dst_dt into dst, which
// may be strided too (dst_strides).
void copy(DType src_dt, const Dims& shape, View src, DType dst_dt, char* dst, const Dims& dst_strides);

// Sets n contiguous elements to value converted to dt.
void fill(DType dt, char* out, int64_t n, double value);

// Indexing (kernels/index.cc). Index values (i64) must already be in range.
// out[p] = x[p with p[dim] replaced by index[p]] for every p of `shape` (the
// index's shape, no larger than x's outside dim); out contiguous, any dtype.
void gather(DType dt, const Dims& shape, View x, int dim, const View& index, char* out);
// out[p with p[dim] replaced by index[p]] += src[p] for every p of `shape`, in
// row-major order (so repeated targets sum in a fixed order); out is strided
// (out_strides); floating dtypes.
void scatter_add(DType dt, const Dims& shape, const View& index, const View& src, int dim, char* out,
                 const Dims& out_strides);
// out[p] = mask[p] ? value : x[p] over `shape` (mask: bool); out contiguous.
void masked_fill(DType dt, const Dims& shape, View x, View mask, double value, char* out);
// Softmax along the middle dim of a contiguous (outer, n, inner) tensor x into
// y of the same layout (log_softmax if `log`). Rows are independent, so any
// split of `outer` gives the same bits.
void softmax(DType dt, bool log, const char* x, char* y, int64_t outer, int64_t n, int64_t inner);
// Their fused gradients from the upstream gradient g and the output y, all
// contiguous (outer, n, inner): y * (g - sum(g * y)), or g - exp(y) * sum(g).
void softmax_backward(DType dt, bool log, const char* g, const char* y, char* out, int64_t outer, int64_t n,
                      int64_t inner);

// Normalizes each of `rows` contiguous rows of n elements of x into y:
// (x - mean) * rstd [* w] [+ b], rstd = 1 / sqrt(var + eps) with the biased
// variance (layer_norm); without `center` the mean is 0 and var = mean(x^2)
// (rms_norm). w and b (n contiguous elements) may be null. Writes each row's
// mean (unless mean is null) and rstd. Rows are independent.
void norm_rows(DType dt, bool center, const char* x, const char* w, const char* b, char* y, char* mean, char* rstd,
               int64_t rows, int64_t n, double eps);

// The gradient of norm_rows with respect to x, row by row, from the upstream
// gradient g (same layout as x): with gx = g [* w] and xhat = (x - mean) *
// rstd, out = rstd * (gx - mean(gx) - xhat * mean(gx * xhat)) (no mean(gx)
// term without `center`). mean and rstd are the forward's (rstd null: they
// are recomputed from x, to the same bits).
void norm_backward_rows(DType dt, bool center, const char* g, const char* x, const char* w, const char* mean,
                        const char* rstd, char* out, int64_t rows, int64_t n, double eps);

// acc (n elements) += g * xhat over `rows` rows of n (layouts and statistics
// as norm_backward_rows): the weight gradient of layer_norm / rms_norm.
void norm_weight_grad_rows(DType dt, bool center, const char* g, const char* x, const char* mean, const char* rstd,
                           char* acc, int64_t rows, int64_t n, double eps);

// Reduces the middle dim (n >= 1) of a contiguous (outer, n, inner) tensor x
// into out, contiguous (outer, inner). Max/Min: NaN if the column holds one;
// indices (may be null) gets the index along the dim of the first element
// equal to the result (the first NaN). Prod: multiplied in double in order.
// Rows are independent, so any split of `outer` gives the same bits.
enum class DimReduceKind { Max, Min, Prod };
void reduce_dim(DimReduceKind k, DType dt, const char* x, int64_t outer, int64_t n, int64_t inner, char* out,
                int64_t* indices);

// Inclusive cumulative sum or product along the middle dim of a contiguous
// (outer, n, inner) tensor into out of the same layout, accumulated in
// double; `reverse` runs from the last index to the first.
enum class ScanKind { Sum, Prod };
void scan_dim(ScanKind k, DType dt, bool reverse, const char* x, int64_t outer, int64_t n, int64_t inner, char* out);

}  // namespace ag::kernels
