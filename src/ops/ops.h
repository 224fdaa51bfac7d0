// The internal C++ op API: one function per row of ops.def, with the
// signature its family gives. Ops record a node when grad mode is on and an
// input requires grad; backward formulas call these same functions, so
// create_graph records the backward pass too. Errors throw ag::Error.
#pragma once

#include <vector>

#include "core/dtype.h"
#include "core/shape.h"
#include "core/tensor_impl.h"

namespace ag::ops {

#define AG_DECL_UNARY(name) Tensor name(const Tensor& x);
#define AG_DECL_UNARY_SCALAR(name) Tensor name(const Tensor& x, double attr);
#define AG_DECL_BINARY(name) Tensor name(const Tensor& a, const Tensor& b);
#define AG_DECL_REDUCE_ALL(name) Tensor name(const Tensor& x);
#define AG_DECL_SHAPE(name) Tensor name(const Tensor& x, const Dims& shape);
#define AG_DECL_DTYPE(name) Tensor name(const Tensor& x, DType dtype);
#define AG_DECL_CUSTOM(name)  // declared by hand below
#define AG_OP(name, family) AG_DECL_##family(name)
#include "ops/ops.def"
#undef AG_OP
#undef AG_DECL_UNARY
#undef AG_DECL_UNARY_SCALAR
#undef AG_DECL_BINARY
#undef AG_DECL_REDUCE_ALL
#undef AG_DECL_SHAPE
#undef AG_DECL_DTYPE
#undef AG_DECL_CUSTOM

// ---- shape and views (views share the input's storage and version counter) ----
Tensor flatten(const Tensor& x, int64_t start_dim, int64_t end_dim);
Tensor squeeze(const Tensor& x, const Dims& dims);  // no dims: every size-1 dim
Tensor unsqueeze(const Tensor& x, int64_t dim);
Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1);
Tensor permute(const Tensor& x, const Dims& dims);
Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step);
Tensor slice_backward(const Tensor& g, const Dims& input_shape, int64_t dim, int64_t start, int64_t end,
                      int64_t step);
Tensor select(const Tensor& x, int64_t dim, int64_t index);
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length);
std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& sizes, int64_t dim);
std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim);
int64_t chunk_count(const Tensor& x, int64_t chunks, int64_t dim);
Tensor concat(const std::vector<Tensor>& xs, int64_t dim);
Tensor stack(const std::vector<Tensor>& xs, int64_t dim);
Tensor flip(const Tensor& x, const Dims& dims);
Tensor repeat(const Tensor& x, const Dims& repeats);
enum class PadMode : int32_t { Constant = 0, Reflect = 1 };  // = AG_PAD_CONSTANT, AG_PAD_REFLECT
Tensor pad(const Tensor& x, const std::vector<int64_t>& pads, PadMode mode, double value);

// ---- indexing (i64 indices, never wrapped; bool masks) ----
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);
Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index);
Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
Tensor masked_fill(const Tensor& x, const Tensor& mask, double value);
Tensor embedding(const Tensor& weight, const Tensor& indices);
Tensor one_hot(const Tensor& indices, int64_t num_classes);
// ---- linear algebra (ops/linalg.cc) ----
Tensor matmul(const Tensor& a, const Tensor& b);
Tensor bmm(const Tensor& a, const Tensor& b);
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias);  // bias may be null
Tensor outer(const Tensor& a, const Tensor& b);
Tensor dot(const Tensor& a, const Tensor& b);

// ---- creation (ops/creation.cc): new leaves, no graph ----
Tensor arange(Context* ctx, DType dt, double start, double end, double step);
Tensor linspace(Context* ctx, DType dt, double start, double end, int64_t steps);
Tensor eye(Context* ctx, DType dt, int64_t n, int64_t m);  // m = -1: n
// ---- random (ops/random.cc): from the context's Philox generator ----
Tensor rand(Context* ctx, DType dt, const Dims& shape);
Tensor randn(Context* ctx, DType dt, const Dims& shape);
Tensor uniform(Context* ctx, DType dt, const Dims& shape, double low, double high);
Tensor normal(Context* ctx, DType dt, const Dims& shape, double mean, double std);
Tensor bernoulli(const Tensor& p);
Tensor bernoulli_scalar(Context* ctx, DType dt, const Dims& shape, double p);
Tensor randint(Context* ctx, const Dims& shape, int64_t low, int64_t high);
Tensor dropout(const Tensor& x, double p, bool training);

// Helpers for backward formulas (not ops themselves: no graph).
Tensor scalar_like(const Tensor& t, double value);  // 0-dim, t's dtype and context
Tensor zeros_like(const Tensor& t);
Tensor full(Context* ctx, DType dtype, const Dims& shape, double value);

}  // namespace ag::ops
