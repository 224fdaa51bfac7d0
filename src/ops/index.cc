// Indexing ops: index_select, index_add, gather, scatter_add, masked_fill,
// embedding (index_select of rows), one_hot. Indices are i64 and never wrap:
// a value outside 0..size-1 is an error naming the value, its position and
// the bound (as PyTorch's gather and index_select). The adds accumulate in a
// fixed order, so gradients are bitwise reproducible.
#include <string>

#include "autograd/grad_math.h"
#include "ops/index_common.h"

namespace ag::ops {

void check_index_dtype(const TensorImpl& index, const TensorImpl& x, const char* what) {
  if (index.dtype() != DType::I64) fail(AG_ERR_DTYPE, what, " must be i64, got ", dtype_name(index.dtype()));
  if (index.context() != x.context()) fail(AG_ERR_CONTEXT, what, " belongs to another context");
}

// Row-major multi-index of flat position i in shape, "(1,2)".
std::string position_str(const Dims& shape, int64_t i) {
  Dims p;
  p.resize(shape.size());
  for (int d = shape.size() - 1; d >= 0; --d) {
    p[d] = i % shape[d];
    i /= shape[d];
  }
  return shape_str(p);
}

namespace {

// out (contiguous, `shape`) = gather of x along dim by index (read as `shape`
// with index_strides), cut into row chunks of dim 0 that run in parallel.
void gather_rows(const TensorImpl& x, int dim, const char* index, const Dims& index_strides, const Dims& shape,
                 TensorImpl& out) {
  const int64_t item = static_cast<int64_t>(itemsize(x.dtype()));
  const int64_t inner = shape.size() && shape[0] ? numel_of(shape) / shape[0] : 0;
  for_rows(x.context(), shape, 0, [&](int64_t b, int64_t e) {
    if (shape.size() == 0) {
      kernels::gather(x.dtype(), shape, view_of(x), dim, kernels::View{index, &index_strides}, out.data());
      return;
    }
    Dims sub = shape;
    sub[0] = e - b;
    // Along dim the index picks x's position, so x's own offset only moves for other dims.
    const char* xp = x.data() + (dim == 0 ? 0 : b * x.strides()[0] * item);
    kernels::gather(x.dtype(), sub, kernels::View{xp, &x.strides()}, dim,
                    kernels::View{index + b * index_strides[0] * 8, &index_strides}, out.data() + b * inner * item);
  }, Work::Gather);
}

}  // namespace

// Every value of the i64 tensor `index` lies in [0, bound).
// `where` names the bound: "dim 0 of size 5".
void check_range(const Tensor& index, int64_t bound, const std::string& where, const char* what) {
  const Tensor c = index->is_contiguous() ? index : grad_clone(index);
  const int64_t* v = c->data_as<int64_t>();
  for (int64_t i = 0; i < c->numel(); ++i) {
    if (v[i] < 0 || v[i] >= bound) {
      fail(AG_ERR_INVALID_ARGUMENT, what, " ", v[i], " at position ", position_str(c->shape(), i),
           " is out of range for ", where, " (valid: 0..", bound - 1, ")");
    }
  }
}

std::string dim_str(const TensorImpl& x, int d) { return "dim " + std::to_string(d) + " of size " + std::to_string(x.shape()[d]); }

// index (1-D) read as a tensor of `shape`, varying along dim only.
Dims along_dim_strides(const TensorImpl& index, const Dims& shape, int dim) {
  Dims s;
  for (int d = 0; d < shape.size(); ++d) s.push_back(d == dim ? index.strides()[0] : 0);
  return s;
}

void check_1d(const TensorImpl& index) {
  if (index.ndim() != 1) fail(AG_ERR_SHAPE, "index must be 1-D, got shape ", shape_str(index.shape()));
}

Tensor i64_tensor(Context* ctx, const Dims& shape, const std::vector<int64_t>& v) {
  Tensor t = empty(ctx, DType::I64, shape);
  if (static_cast<int64_t>(v.size()) != t->numel()) {
    fail(AG_ERR_INTERNAL, v.size(), " index values for shape ", shape_str(shape));
  }
  std::copy(v.begin(), v.end(), t->data_as<int64_t>());
  return t;
}

Tensor zero_pad_to(const Tensor& t, const Dims& shape) {
  if (t->shape() == shape) return t;
  std::vector<int64_t> pads;
  for (int d = shape.size() - 1; d >= 0; --d) {
    pads.push_back(0);
    pads.push_back(shape[d] - t->shape()[d]);
  }
  return pad(t, pads, PadMode::Constant, 0.0);
}

// Common checks of index_add and scatter_add: x and src floating and alike.
void check_add_inputs(const TensorImpl& x, const TensorImpl& src) {
  check_floating(x);
  if (src.context() != x.context()) fail(AG_ERR_CONTEXT, "src belongs to another context than x");
  if (src.dtype() != x.dtype()) {
    fail(AG_ERR_DTYPE, "src has dtype ", dtype_name(src.dtype()), " but x has ", dtype_name(x.dtype()),
         " (no implicit promotion)");
  }
}

namespace {

struct IndexNode : SavingNode<1> {
  IndexNode(int d, const Dims& s) : dim(d), shape(s) {}
  int dim;
  Dims shape;  // of the input whose gradient is scattered back
};

}  // namespace

// index_select: y = x with dim indexed by index (1-D i64);
// dx = index_add(zeros(x.shape), dim, index, g). Saves index.
namespace {
struct IndexSelectBackward final : IndexNode {
  using IndexNode::IndexNode;
  const char* name() const override { return "IndexSelectBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    const Tensor index = saved[0].unpack(*this);
    if (should_record({g[0].get()})) {
      out[0] = index_add(full(g[0]->context(), g[0]->dtype(), shape, 0.0), dim, index, g[0]);
      return;
    }
    // Unrecorded: g's rows added into fresh zeros, without index_add's copy
    // of them.
    Tensor y = full_for_writes(g[0]->context(), g[0]->dtype(), shape, 0.0);
    const Dims is = along_dim_strides(*index, g[0]->shape(), dim);
    kernels::scatter_add(g[0]->dtype(), g[0]->shape(), kernels::View{index->data(), &is}, view_of(*g[0]), dim,
                         y->data(), y->strides());
    out[0] = std::move(y);
  }
};
}  // namespace
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index) {
  const int d = wrap_dim(dim, x->ndim());
  check_index_dtype(*index, *x, "index");
  check_1d(*index);
  check_range(index, x->shape()[d], dim_str(*x, d));
  Dims shape = x->shape();
  shape[d] = index->shape()[0];
  Tensor y = empty(x->context(), x->dtype(), shape);
  gather_rows(*x, d, index->data(), along_dim_strides(*index, shape, d), shape, *y);
  if (should_record({x.get()})) record<IndexSelectBackward>({x.get()}, y, d, x->shape())->saved[0].save(index, false);
  return y;
}

// index_add: y = x with src's slices along dim added at the positions index
// names (repeats accumulate in index order); dx = g,
// dsrc = index_select(g, dim, index). Saves index.
namespace {
struct IndexAddBackward final : IndexNode {
  using IndexNode::IndexNode;
  const char* name() const override { return "IndexAddBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    if (needs_input_grad(0)) out[0] = g[0];
    if (needs_input_grad(1)) out[1] = index_select(g[0], dim, saved[0].unpack(*this));
  }
};
}  // namespace
Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  check_add_inputs(*x, *src);
  const int d = wrap_dim(dim, x->ndim());
  check_index_dtype(*index, *x, "index");
  check_1d(*index);
  Dims expected = x->shape();
  expected[d] = index->shape()[0];
  if (src->shape() != expected) {
    fail(AG_ERR_SHAPE, "src has shape ", shape_str(src->shape()), " but x ", shape_str(x->shape()), " and index ",
         shape_str(index->shape()), " need ", shape_str(expected));
  }
  check_range(index, x->shape()[d], dim_str(*x, d));
  Tensor y = copy_for_writes(x);
  const Dims is = along_dim_strides(*index, expected, d);
  kernels::scatter_add(x->dtype(), expected, kernels::View{index->data(), &is}, view_of(*src), d, y->data(),
                       y->strides());
  if (should_record({x.get(), src.get()})) {
    record<IndexAddBackward>({x.get(), src.get()}, y, d, x->shape())->saved[0].save(index, false);
  }
  return y;
}

// gather: y[p] = x[p with p[dim] = index[p]], y has index's shape;
// dx = scatter_add(zeros(x.shape), dim, index, g). Saves index.
namespace {
struct GatherBackward final : IndexNode {
  using IndexNode::IndexNode;
  const char* name() const override { return "GatherBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    out[0] = scatter_add(full(g[0]->context(), g[0]->dtype(), shape, 0.0), dim, saved[0].unpack(*this), g[0]);
  }
};
}  // namespace

// index has x's ndim and no dim larger than x's, except along `dim` when
// along_dim is true.
void check_index_fits(const TensorImpl& index, const TensorImpl& x, int dim, bool along_dim, const char* x_name) {
  bool fits = index.ndim() == x.ndim();
  for (int i = 0; fits && i < x.ndim(); ++i) fits = index.shape()[i] <= x.shape()[i] || (along_dim && i == dim);
  if (!fits) {
    fail(AG_ERR_SHAPE, "index of shape ", shape_str(index.shape()), " does not fit ", x_name, " of shape ",
         shape_str(x.shape()), (along_dim ? " (same ndim, no larger size outside dim " : " (same ndim, no larger size"),
         (along_dim ? std::to_string(dim) + ")" : std::string(")")));
  }
}
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index) {
  const int d = wrap_dim(dim, x->ndim());
  check_index_dtype(*index, *x, "index");
  check_index_fits(*index, *x, d, true, "x");
  check_range(index, x->shape()[d], dim_str(*x, d));
  Tensor y = empty(x->context(), x->dtype(), index->shape());
  gather_rows(*x, d, index->data(), index->strides(), index->shape(), *y);
  if (should_record({x.get()})) record<GatherBackward>({x.get()}, y, d, x->shape())->saved[0].save(index, false);
  return y;
}

// scatter_add: y = x with src[p] added at p with p[dim] = index[p], for p
// over index's shape (repeats accumulate in row-major order of p);
// dx = g, dsrc = gather(g, dim, index), zero-padded to src's shape. Saves index.
namespace {
struct ScatterAddBackward final : IndexNode {
  using IndexNode::IndexNode;
  const char* name() const override { return "ScatterAddBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    if (needs_input_grad(0)) out[0] = g[0];
    if (!needs_input_grad(1)) return;
    Tensor index = saved[0].unpack(*this);
    out[1] = zero_pad_to(gather(g[0], dim, index), shape);
  }
};
}  // namespace
Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  check_add_inputs(*x, *src);
  const int d = wrap_dim(dim, x->ndim());
  check_index_dtype(*index, *x, "index");
  check_index_fits(*index, *x, d, true, "x");
  check_index_fits(*index, *src, d, false, "src");
  check_range(index, x->shape()[d], dim_str(*x, d));
  Tensor y = copy_for_writes(x);
  kernels::scatter_add(x->dtype(), index->shape(), view_of(*index), view_of(*src), d, y->data(), y->strides());
  if (should_record({x.get(), src.get()})) {
    record<ScatterAddBackward>({x.get(), src.get()}, y, d, src->shape())->saved[0].save(index, false);
  }
  return y;
}

// masked_fill: y = value where mask, else x (x and mask broadcast together);
// dx = masked_fill(g, mask, 0) summed to x's shape. Saves mask.
namespace {
struct MaskedFillBackward final : SavingNode<1> {
  explicit MaskedFillBackward(const Dims& s) : shape(s) {}
  const char* name() const override { return "MaskedFillBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    out[0] = reduce_to(masked_fill(g[0], saved[0].unpack(*this), 0.0), shape);
  }
  Dims shape;
};
}  // namespace
Tensor masked_fill(const Tensor& x, const Tensor& mask, double value) {
  if (mask->dtype() != DType::Bool) fail(AG_ERR_DTYPE, "mask must be bool, got ", dtype_name(mask->dtype()));
  if (mask->context() != x->context()) fail(AG_ERR_CONTEXT, "mask belongs to another context than x");
  const Dims shape = broadcast_shapes(x->shape(), mask->shape());
  const Dims xs = broadcast_strides(x->shape(), x->strides(), shape);
  const Dims ms = broadcast_strides(mask->shape(), mask->strides(), shape);
  Tensor y = empty(x->context(), x->dtype(), shape);
  const int64_t item = static_cast<int64_t>(itemsize(x->dtype()));
  const int64_t inner = shape.size() && shape[0] ? y->numel() / shape[0] : 0;
  for_rows(x->context(), shape, 0, [&](int64_t b, int64_t e) {
    Dims sub = shape;
    if (sub.size()) sub[0] = e - b;
    const int64_t xo = sub.size() ? b * xs[0] * item : 0, mo = sub.size() ? b * ms[0] : 0;
    kernels::masked_fill(x->dtype(), sub, kernels::View{x->data() + xo, &xs}, kernels::View{mask->data() + mo, &ms},
                         value, y->data() + b * inner * item);
  });
  if (should_record({x.get()})) record<MaskedFillBackward>({x.get()}, y, x->shape())->saved[0].save(mask, false);
  return y;
}

// embedding: y[..., :] = weight[indices[...], :] for weight (V, D): rows
// selected by index_select, so the gradient is an index_add into zeros.
Tensor embedding(const Tensor& weight, const Tensor& indices) {
  if (weight->ndim() != 2) fail(AG_ERR_SHAPE, "weight must be 2-D (V, D), got shape ", shape_str(weight->shape()));
  check_index_dtype(*indices, *weight, "indices");
  if (indices->ndim() >= kMaxDims) fail(AG_ERR_INVALID_ARGUMENT, "indices has ", indices->ndim(), " dims; at most ", kMaxDims - 1);
  check_range(indices, weight->shape()[0], "weight's " + std::to_string(weight->shape()[0]) + " rows");
  Dims shape = indices->shape();
  shape.push_back(weight->shape()[1]);
  return reshape(index_select(weight, 0, reshape(indices, Dims{-1})), shape);
}

// one_hot: y[..., c] = (indices[...] == c), i64, with num_classes classes
// (-1: the largest index + 1). Not differentiable.
Tensor one_hot(const Tensor& indices, int64_t num_classes) {
  if (indices->dtype() != DType::I64) fail(AG_ERR_DTYPE, "indices must be i64, got ", dtype_name(indices->dtype()));
  if (indices->ndim() >= kMaxDims) fail(AG_ERR_INVALID_ARGUMENT, "indices has ", indices->ndim(), " dims; at most ", kMaxDims - 1);
  const Tensor c = indices->is_contiguous() ? indices : grad_clone(indices);
  const int64_t* v = c->data_as<int64_t>();
  for (int64_t i = 0; i < c->numel(); ++i) {
    if (v[i] < 0) fail(AG_ERR_INVALID_ARGUMENT, "index ", v[i], " at position ", position_str(c->shape(), i), " is negative");
  }
  if (num_classes == -1) {
    if (c->numel() == 0) fail(AG_ERR_INVALID_ARGUMENT, "cannot infer num_classes from an empty tensor");
    num_classes = 0;
    for (int64_t i = 0; i < c->numel(); ++i) {
      // INT64_MAX + 1 classes overflow.
      if (v[i] == INT64_MAX) fail(AG_ERR_OUT_OF_MEMORY, "the result is too large");
      num_classes = v[i] >= num_classes ? v[i] + 1 : num_classes;
    }
  } else if (num_classes < 0) {
    fail(AG_ERR_INVALID_ARGUMENT, "num_classes ", num_classes, " must be -1 (infer) or at least 0");
  } else {
    check_range(c, num_classes, std::to_string(num_classes) + " classes");
  }
  Dims shape = indices->shape();
  shape.push_back(num_classes);
  checked_shape(shape.data(), shape.size(), sizeof(int64_t));
  Tensor y = full_for_writes(indices->context(), DType::I64, shape, 0.0);
  int64_t* out = y->data_as<int64_t>();
  for (int64_t i = 0; i < c->numel(); ++i) out[i * num_classes + v[i]] = 1;
  return y;
}

}  // namespace ag::ops
