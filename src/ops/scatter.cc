// Writing indexing ops: scatter (of a tensor or a value), scatter_reduce,
// index_copy, index_fill, and the compositions index_put, masked_select,
// masked_scatter, take_along_dim. Indices are i64 and, except in index_put
// (PyTorch's advanced indexing), never wrap. The element loops run in
// row-major order of the index, so with repeated indices the last write wins
// and reductions accumulate in a fixed order.
#include <cstring>
#include <vector>

#include "autograd/grad_math.h"
#include "ops/index_common.h"

namespace ag::ops {

namespace {

// Calls f(pos) for every position of shape in row-major order.
template <class F>
void walk(const Dims& shape, F&& f) {
  if (numel_of(shape) == 0) return;
  int64_t pos[kMaxDims] = {};
  for (;;) {
    f(static_cast<const int64_t*>(pos));
    int d = shape.size() - 1;
    for (; d >= 0; --d) {
      if (++pos[d] < shape[d]) break;
      pos[d] = 0;
    }
    if (d < 0) return;
  }
}

int64_t offset_of(const int64_t* pos, const Dims& strides) {
  int64_t o = 0;
  for (int d = 0; d < strides.size(); ++d) o += pos[d] * strides[d];
  return o;
}

// The element offset in y of position pos with pos[dim] replaced by the
// index value there.
int64_t target_of(const int64_t* pos, const Dims& ystrides, int dim, int64_t idx) {
  int64_t o = 0;
  for (int d = 0; d < ystrides.size(); ++d) o += (d == dim ? idx : pos[d]) * ystrides[d];
  return o;
}

// value converted to dtype, as bytes.
void scalar_bytes(DType dt, double value, char* out) {
  switch (dt) {
    case DType::F32: { const float v = static_cast<float>(value); std::memcpy(out, &v, 4); break; }
    case DType::F64: std::memcpy(out, &value, 8); break;
    case DType::I64: {
      if (!(value >= -9.2233720368547758e18 && value < 9.2233720368547758e18)) {
        fail(AG_ERR_INVALID_ARGUMENT, "value ", value, " does not fit i64");
      }
      const int64_t v = static_cast<int64_t>(value);
      std::memcpy(out, &v, 8);
      break;
    }
    case DType::Bool: out[0] = value != 0.0; break;
  }
}

// y[p with p[dim] = index[p]] = src[p] (value when src is null) for p over
// `shape`, the index read through istrides; y is contiguous.
void assign_along(TensorImpl& y, int dim, const TensorImpl& index, const Dims& istrides, const Dims& shape,
                  const TensorImpl* src, double value) {
  const size_t item = itemsize(y.dtype());
  char fill[8];
  if (!src) scalar_bytes(y.dtype(), value, fill);
  const int64_t* ix = reinterpret_cast<const int64_t*>(index.data());
  walk(shape, [&](const int64_t* p) {
    char* dst = y.data() + target_of(p, y.strides(), dim, ix[offset_of(p, istrides)]) * item;
    std::memcpy(dst, src ? src->data() + offset_of(p, src->strides()) * item : fill, item);
  });
}

void check_src(const TensorImpl& x, const TensorImpl& src) {
  if (src.context() != x.context()) fail(AG_ERR_CONTEXT, "src belongs to another context than x");
  if (src.dtype() != x.dtype()) {
    fail(AG_ERR_DTYPE, "src has dtype ", dtype_name(src.dtype()), " but x has ", dtype_name(x.dtype()),
         " (no implicit promotion)");
  }
}

// Checks of scatter and scatter_reduce; src may be null (a value).
int check_scatter(const Tensor& x, int64_t dim, const Tensor& index, const TensorImpl* src) {
  const int d = wrap_dim(dim, x->ndim());
  check_index_dtype(*index, *x, "index");
  check_index_fits(*index, *x, d, true, "x");
  if (src) {
    check_src(*x, *src);
    check_index_fits(*index, *src, d, false, "src");
  }
  check_range(index, x->shape()[d], dim_str(*x, d));
  return d;
}

// Checks of index_copy and index_fill: a 1-D index into dim.
int check_index_along(const Tensor& x, int64_t dim, const Tensor& index) {
  const int d = wrap_dim(dim, x->ndim());
  check_index_dtype(*index, *x, "index");
  check_1d(*index);
  check_range(index, x->shape()[d], dim_str(*x, d));
  return d;
}

// t's leading part of `shape` (slices from 0 in every dim).
Tensor crop_to(const Tensor& t, const Dims& shape) {
  Tensor r = t;
  for (int d = 0; d < shape.size(); ++d) {
    if (r->shape()[d] != shape[d]) r = narrow(r, d, 0, shape[d]);
  }
  return r;
}

struct IndexedNode : SavingNode<1> {
  IndexedNode(int d, const Dims& s) : dim(d), src_shape(s) {}
  int dim;
  Dims src_shape;
};

// Positions (row-major, i64) where the bool tensor m is true.
Tensor true_positions(const Tensor& m) {
  const Tensor c = contiguous_data(m);
  const uint8_t* v = reinterpret_cast<const uint8_t*>(c->data());
  std::vector<int64_t> pos;
  for (int64_t i = 0; i < c->numel(); ++i) {
    if (v[i]) pos.push_back(i);
  }
  Tensor t = empty(m->context(), DType::I64, Dims{static_cast<int64_t>(pos.size())});
  std::copy(pos.begin(), pos.end(), t->data_as<int64_t>());
  return t;
}

// x and mask broadcast together: shape, and the positions of the true mask.
struct MaskedPlan {
  Dims shape;
  Tensor positions;
};
MaskedPlan masked_plan(const Tensor& x, const Tensor& mask) {
  if (mask->dtype() != DType::Bool) fail(AG_ERR_DTYPE, "mask must be bool, got ", dtype_name(mask->dtype()));
  if (mask->context() != x->context()) fail(AG_ERR_CONTEXT, "mask belongs to another context than x");
  MaskedPlan p;
  p.shape = broadcast_shapes(x->shape(), mask->shape());
  p.positions = true_positions(expand(mask, p.shape));
  return p;
}

}  // namespace

// scatter: y = x with y[p with p[dim] = index[p]] = src[p] for p over
// index's shape; dx = scatter(g, dim, index, 0), dsrc = gather(g, dim,
// index) zero-padded to src's shape. Saves index.
namespace {
struct ScatterBackward final : IndexedNode {
  using IndexedNode::IndexedNode;
  const char* name() const override { return "ScatterBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    Tensor index = saved[0].unpack(*this);
    if (needs_input_grad(0)) out[0] = scatter_value(g[0], dim, index, 0.0);
    if (needs_input_grad(1)) out[1] = zero_pad_to(gather(g[0], dim, index), src_shape);
  }
};
}  // namespace
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  const int d = check_scatter(x, dim, index, src.get());
  Tensor y = copy_for_writes(x);
  const Tensor ic = contiguous_data(index);
  assign_along(*y, d, *ic, ic->strides(), ic->shape(), src.get(), 0.0);
  if (should_record({x.get(), src.get()})) {
    record<ScatterBackward>({x.get(), src.get()}, y, d, src->shape())->saved[0].save(index, false);
  }
  return y;
}

// scatter_value: y = x with value at p with p[dim] = index[p];
// dx = scatter_value(g, dim, index, 0). Saves index.
namespace {
struct ScatterValueBackward final : IndexedNode {
  using IndexedNode::IndexedNode;
  const char* name() const override { return "ScatterValueBackward"; }
  void apply(TensorList& g, TensorList& out) override { out[0] = scatter_value(g[0], dim, saved[0].unpack(*this), 0.0); }
};
}  // namespace
Tensor scatter_value(const Tensor& x, int64_t dim, const Tensor& index, double value) {
  const int d = check_scatter(x, dim, index, nullptr);
  Tensor y = copy_for_writes(x);
  const Tensor ic = contiguous_data(index);
  assign_along(*y, d, *ic, ic->strides(), ic->shape(), nullptr, value);
  if (should_record({x.get()})) record<ScatterValueBackward>({x.get()}, y, d, Dims())->saved[0].save(index, false);
  return y;
}

// index_copy: y = x with y[..., index[i], ...] = src[..., i, ...];
// dx = index_fill(g, dim, index, 0), dsrc = index_select(g, dim, index).
namespace {
struct IndexCopyBackward final : IndexedNode {
  using IndexedNode::IndexedNode;
  const char* name() const override { return "IndexCopyBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    Tensor index = saved[0].unpack(*this);
    if (needs_input_grad(0)) out[0] = index_fill(g[0], dim, index, 0.0);
    if (needs_input_grad(1)) out[1] = index_select(g[0], dim, index);
  }
};
}  // namespace
Tensor index_copy(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  const int d = check_index_along(x, dim, index);
  check_src(*x, *src);
  Dims expected = x->shape();
  expected[d] = index->shape()[0];
  if (src->shape() != expected) {
    fail(AG_ERR_SHAPE, "src has shape ", shape_str(src->shape()), " but x ", shape_str(x->shape()), " and index ",
         shape_str(index->shape()), " need ", shape_str(expected));
  }
  Tensor y = copy_for_writes(x);
  assign_along(*y, d, *index, along_dim_strides(*index, expected, d), expected, src.get(), 0.0);
  if (should_record({x.get(), src.get()})) {
    record<IndexCopyBackward>({x.get(), src.get()}, y, d, src->shape())->saved[0].save(index, false);
  }
  return y;
}

// index_fill: y = x with value at every position of dim that index names;
// dx = index_fill(g, dim, index, 0).
namespace {
struct IndexFillBackward final : IndexedNode {
  using IndexedNode::IndexedNode;
  const char* name() const override { return "IndexFillBackward"; }
  void apply(TensorList& g, TensorList& out) override { out[0] = index_fill(g[0], dim, saved[0].unpack(*this), 0.0); }
};
}  // namespace
Tensor index_fill(const Tensor& x, int64_t dim, const Tensor& index, double value) {
  const int d = check_index_along(x, dim, index);
  Dims shape = x->shape();
  shape[d] = index->shape()[0];
  Tensor y = copy_for_writes(x);
  assign_along(*y, d, *index, along_dim_strides(*index, shape, d), shape, nullptr, value);
  if (should_record({x.get()})) record<IndexFillBackward>({x.get()}, y, d, Dims())->saved[0].save(index, false);
  return y;
}

// scatter_reduce: y = x with the src values at p (p[dim] = index[p]) reduced
// into y by sum, prod, mean, amax or amin, x's value included or not;
// positions no index names keep x's value. Gradients: PyTorch's formulas
// (amax/amin share the gradient among the tied maxima; prod divides by the
// factor, with a single zero factor taken out). Saves index, x, src, y.
namespace {
template <class T>
void scatter_reduce_kernel(TensorImpl& y, int dim, const TensorImpl& index, const TensorImpl& src, ScatterReduce r,
                           bool include_self) {
  T* yv = reinterpret_cast<T*>(y.data());
  const T* sv = reinterpret_cast<const T*>(src.data());
  const int64_t* ix = reinterpret_cast<const int64_t*>(index.data());
  std::vector<int64_t> count(y.numel(), 0);
  walk(index.shape(), [&](const int64_t* p) {
    const int64_t o = target_of(p, y.strides(), dim, ix[offset_of(p, index.strides())]);
    const T v = sv[offset_of(p, src.strides())];
    T& t = yv[o];
    if (!include_self && count[o] == 0) {
      t = v;
    } else {
      switch (r) {
        case ScatterReduce::Sum:
        case ScatterReduce::Mean: t += v; break;
        case ScatterReduce::Prod: t *= v; break;
        case ScatterReduce::Amax: t = (v > t || v != v) && t == t ? v : t; break;
        case ScatterReduce::Amin: t = (v < t || v != v) && t == t ? v : t; break;
      }
    }
    ++count[o];
  });
  if (r == ScatterReduce::Mean) {
    for (int64_t o = 0; o < y.numel(); ++o) {
      if (count[o] > 0) yv[o] /= static_cast<T>(count[o] + (include_self ? 1 : 0));
    }
  }
}

struct ScatterReduceBackward final : SavingNode<4> {
  ScatterReduceBackward(int d, ScatterReduce r, bool s) : dim(d), reduce(r), include_self(s) {}
  const char* name() const override { return "ScatterReduceBackward"; }
  void apply(TensorList& gl, TensorList& out) override {
    const Tensor& g = gl[0];
    Tensor index = saved[0].unpack(*this), x = saved[1].unpack(*this), src_full = saved[2].unpack(*this),
           y = saved[3].unpack(*this);
    Tensor src = crop_to(src_full, index->shape());
    const Tensor zero = scalar_like(g, 0.0), one = scalar_like(g, 1.0);
    Tensor gx, gs;
    switch (reduce) {
      case ScatterReduce::Sum:
        gx = g;
        gs = gather(g, dim, index);
        break;
      case ScatterReduce::Prod: {
        const Tensor masked_x = masked_fill(x, eq(x, zero), 1.0);
        gx = div(mul(g, scatter_reduce(masked_x, dim, index, src, reduce, include_self)), masked_x);
        const Tensor src_zero = eq(src, zero);
        const Tensor zf = cast(src_zero, g->dtype());
        const Tensor zeros_in_target = gather(scatter_add(zeros_like(x), dim, index, zf), dim, index);
        const Tensor single_zero = eq(mul(zf, zeros_in_target), one);
        const Tensor others = scatter_reduce(x, dim, index, masked_fill(src, single_zero, 1.0), reduce, include_self);
        gs = where(single_zero, gather(mul(g, others), dim, index),
                   div(gather(mul(g, y), dim, index), masked_fill(src, src_zero, 1.0)));
        break;
      }
      case ScatterReduce::Mean: {
        Tensor n = scatter_add(full(g->context(), g->dtype(), x->shape(), include_self ? 1.0 : 0.0), dim, index,
                               full(g->context(), g->dtype(), index->shape(), 1.0));
        n = masked_fill(n, eq(n, zero), 1.0);
        gx = div(g, n);
        gs = div(gather(g, dim, index), gather(n, dim, index));
        break;
      }
      case ScatterReduce::Amax:
      case ScatterReduce::Amin: {
        const Tensor x_is = cast(eq(x, y), g->dtype());
        const Tensor src_is = cast(eq(src, gather(y, dim, index)), g->dtype());
        const Tensor shared = div(g, scatter_add(x_is, dim, index, src_is));
        gx = mul(x_is, shared);
        gs = mul(src_is, gather(shared, dim, index));
        break;
      }
    }
    if (needs_input_grad(0)) out[0] = include_self ? gx : scatter_value(gx, dim, index, 0.0);
    if (needs_input_grad(1)) out[1] = zero_pad_to(gs, src_full->shape());
  }
  int dim;
  ScatterReduce reduce;
  bool include_self;
};
}  // namespace
Tensor scatter_reduce(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src, ScatterReduce reduce,
                      bool include_self) {
  check_add_inputs(*x, *src);
  const int d = check_scatter(x, dim, index, src.get());
  Tensor y = copy_for_writes(x);
  if (x->dtype() == DType::F32) {
    scatter_reduce_kernel<float>(*y, d, *index, *src, reduce, include_self);
  } else {
    scatter_reduce_kernel<double>(*y, d, *index, *src, reduce, include_self);
  }
  if (should_record({x.get(), src.get()})) {
    ScatterReduceBackward* n = record<ScatterReduceBackward>({x.get(), src.get()}, y, d, reduce, include_self);
    n->saved[0].save(index, false);
    n->saved[1].save(x, false);
    n->saved[2].save(src, false);
    n->saved[3].save(y, true);
  }
  return y;
}

// index_put: x[indices[0], ..., indices[n-1]] = values (added with
// accumulate), PyTorch's advanced indexing of the first n dims: the i64
// indices broadcast together (negative values count from the end) and
// values broadcast to (index shape, remaining dims of x). As index_copy or
// index_add on x viewed as (first n dims merged, rest).
Tensor index_put(const Tensor& x, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate) {
  const int n = static_cast<int>(indices.size());
  if (n == 0) fail(AG_ERR_INVALID_ARGUMENT, "indices is empty");
  if (n > x->ndim()) fail(AG_ERR_SHAPE, "indices has ", n, " tensors but x has only ", x->ndim(), " dims");
  Dims b;
  for (int k = 0; k < n; ++k) {
    check_index_dtype(*indices[k], *x, "indices");
    b = broadcast_shapes(b, indices[k]->shape());
  }
  check_src(*x, *values);
  // Before the indexed shape is listed: b's dims, then x's after the first n.
  if (b.size() + x->ndim() - n > kMaxDims) {
    fail(AG_ERR_UNSUPPORTED, "the indexed result would have more than ", kMaxDims, " dims");
  }
  // The linear indices below stay under rows, checked to fit int64 (an empty
  // x may have any sizes).
  int64_t rows = 1;
  for (int k = 0; k < n; ++k) rows = x->shape()[k] == 0 ? 0 : rows;
  for (int k = 0; k < n && rows > 0; ++k) rows = checked_mul_add(rows, x->shape()[k], 0, "the indexed dims' size");
  Tensor lin = full_for_writes(x->context(), DType::I64, b, 0.0);
  int64_t* lv = lin->data_as<int64_t>();
  for (int k = 0; k < n; ++k) {
    const Tensor ik = contiguous_data(expand(indices[k], b));
    const int64_t* iv = ik->data_as<int64_t>();
    const int64_t size = x->shape()[k];
    for (int64_t j = 0; j < ik->numel(); ++j) {
      int64_t v = iv[j];
      if (v < -size || v >= size) {
        fail(AG_ERR_INVALID_ARGUMENT, "index ", v, " at position ", position_str(b, j), " of indices[", k,
             "] is out of range for dim ", k, " of size ", size);
      }
      lv[j] = lv[j] * size + (v < 0 ? v + size : v);
    }
  }
  Dims flat_shape{rows}, vshape = b, vflat{numel_of(b)};
  for (int d = n; d < x->ndim(); ++d) {
    flat_shape.push_back(x->shape()[d]);
    vshape.push_back(x->shape()[d]);
    vflat.push_back(x->shape()[d]);
  }
  if (!broadcastable_to(values->shape(), vshape)) {
    fail(AG_ERR_SHAPE, "values of shape ", shape_str(values->shape()), " do not broadcast to the indexed shape ",
         shape_str(vshape));
  }
  const Tensor vals = reshape(expand(values, vshape), vflat);
  const Tensor xf = reshape(x, flat_shape);
  const Tensor index = reshape(lin, Dims{-1});
  return reshape(accumulate ? index_add(xf, 0, index, vals) : index_copy(xf, 0, index, vals), x->shape());
}

// masked_select: the elements of x where mask is true (x and mask broadcast
// together), row-major, as a 1-D tensor; an index_select of x flattened.
Tensor masked_select(const Tensor& x, const Tensor& mask) {
  const MaskedPlan p = masked_plan(x, mask);
  return index_select(reshape(expand(x, p.shape), Dims{-1}), 0, p.positions);
}

// masked_scatter: x (broadcast with mask) with the positions where mask is
// true taking source's elements in row-major order; an index_copy.
Tensor masked_scatter(const Tensor& x, const Tensor& mask, const Tensor& source) {
  const MaskedPlan p = masked_plan(x, mask);
  check_src(*x, *source);
  const int64_t count = p.positions->numel();
  if (source->numel() < count) {
    fail(AG_ERR_SHAPE, "source has ", source->numel(), " elements but mask selects ", count);
  }
  const Tensor src = narrow(reshape(source, Dims{-1}), 0, 0, count);
  return reshape(index_copy(reshape(expand(x, p.shape), Dims{-1}), 0, p.positions, src), p.shape);
}

// take_along_dim: gather after x and indices are broadcast against each
// other in every dim but dim.
Tensor take_along_dim(const Tensor& x, const Tensor& indices, int64_t dim) {
  const int d = wrap_dim(dim, x->ndim());
  check_index_dtype(*indices, *x, "indices");
  if (indices->ndim() != x->ndim()) {
    fail(AG_ERR_SHAPE, "indices has ", indices->ndim(), " dims but x has ", x->ndim());
  }
  Dims xs = x->shape(), is = indices->shape();
  xs[d] = 1;
  is[d] = 1;
  Dims b = broadcast_shapes(xs, is), bx = b, bi = b;
  bx[d] = x->shape()[d];
  bi[d] = indices->shape()[d];
  return gather(expand(x, bx), d, expand(indices, bi));
}

}  // namespace ag::ops
