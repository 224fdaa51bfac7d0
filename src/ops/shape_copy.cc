// Shape ops that write a new tensor: concat, stack, flip, repeat, pad. They
// copy with the strided copy kernel; stack, repeat and reflect padding are
// compositions of views with concat, expand, clone and flip, so their
// gradients (of any order) come from those ops.
#include <vector>

#include "ops/op_common.h"

namespace ag::ops {

namespace {

// The element address of `index` along `dim` of t (no bounds check).
char* at(const TensorImpl& t, int dim, int64_t index) {
  return t.data() + index * t.strides()[dim] * static_cast<int64_t>(itemsize(t.dtype()));
}

}  // namespace

// concat: xs joined along dim; dxs[i] = narrow(g, dim, offset_i, size_i).
namespace {
struct ConcatBackward final : Node {
  ConcatBackward(int d, std::vector<int64_t> s) : dim(d), sizes(std::move(s)) {}
  const char* name() const override { return "ConcatBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    int64_t offset = 0;
    for (size_t i = 0; i < sizes.size(); ++i) {
      if (needs_input_grad(i)) out[i] = narrow(g[0], dim, offset, sizes[i]);
      offset += sizes[i];
    }
  }
  int dim;
  std::vector<int64_t> sizes;
};
}  // namespace
Tensor concat(const std::vector<Tensor>& xs, int64_t dim) {
  if (xs.empty()) fail(AG_ERR_INVALID_ARGUMENT, "expects at least one tensor");
  const TensorImpl& x0 = *xs[0];
  if (x0.ndim() == 0) fail(AG_ERR_SHAPE, "xs[0] is 0-dim; tensors to concatenate need at least one dim");
  const int d = wrap_dim(dim, x0.ndim());
  Dims shape = x0.shape();
  int64_t total = 0;
  std::vector<int64_t> sizes;
  bool record_graph = false;
  for (size_t i = 0; i < xs.size(); ++i) {
    const TensorImpl& x = *xs[i];
    if (x.context() != x0.context()) fail(AG_ERR_CONTEXT, "xs[", i, "] belongs to another context than xs[0]");
    if (x.dtype() != x0.dtype()) {
      fail(AG_ERR_DTYPE, "xs[", i, "] has dtype ", dtype_name(x.dtype()), " but xs[0] has ", dtype_name(x0.dtype()),
           " (no implicit promotion)");
    }
    Dims other = x.shape();
    if (x.ndim() == x0.ndim()) other[d] = shape[d];
    if (other != shape) {
      fail(AG_ERR_SHAPE, "xs[", i, "] has shape ", shape_str(x.shape()), " but xs[0] has ", shape_str(x0.shape()),
           ": sizes must match except in dim ", d);
    }
    if (__builtin_add_overflow(total, x.shape()[d], &total)) fail(AG_ERR_OUT_OF_MEMORY, "the result is too large");
    sizes.push_back(x.shape()[d]);
    record_graph = record_graph || requires_grad(x);
  }
  shape[d] = total;
  checked_shape(shape.data(), shape.size(), itemsize(x0.dtype()));
  Tensor y = empty(x0.context(), x0.dtype(), shape);
  int64_t offset = 0;
  for (const Tensor& x : xs) {
    if (x->numel() > 0) kernels::copy(x->dtype(), x->shape(), view_of(*x), x->dtype(), at(*y, d, offset), y->strides());
    offset += x->shape()[d];
  }
  if (record_graph && grad_enabled()) {
    Ref<ConcatBackward> n = make_ref<ConcatBackward>(d, std::move(sizes));
    for (const Tensor& x : xs) n->add_next_edge(gradient_edge(*x));
    set_history(n, *y);
  }
  return y;
}

// stack: xs (of one shape) joined along a new dim (unsqueeze + concat).
Tensor stack(const std::vector<Tensor>& xs, int64_t dim) {
  if (xs.empty()) fail(AG_ERR_INVALID_ARGUMENT, "expects at least one tensor");
  const int d = wrap_dim(dim, xs[0]->ndim() + 1);
  std::vector<Tensor> parts;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (xs[i]->shape() != xs[0]->shape()) {
      fail(AG_ERR_SHAPE, "xs[", i, "] has shape ", shape_str(xs[i]->shape()), " but xs[0] has ",
           shape_str(xs[0]->shape()), ": stacked tensors need equal shapes");
    }
    parts.push_back(unsqueeze(xs[i], d));
  }
  return concat(parts, d);
}

// flip: the order of elements reversed along dims (a copy); dx = flip(g, dims).
namespace {
struct FlipBackward final : Node {
  explicit FlipBackward(const Dims& d) : dims(d) {}
  const char* name() const override { return "FlipBackward"; }
  void apply(TensorList& g, TensorList& out) override { out[0] = flip(g[0], dims); }
  Dims dims;
};
}  // namespace
Tensor flip(const Tensor& x, const Dims& dims) {
  const int nd = x->ndim() > 0 ? x->ndim() : 1;
  bool flipped[kMaxDims] = {};
  Dims wrapped;
  for (int i = 0; i < dims.size(); ++i) {
    const int d = wrap_dim(dims[i], nd);
    if (flipped[d]) fail(AG_ERR_INVALID_ARGUMENT, "dim ", d, " appears more than once in dims");
    flipped[d] = true;
    wrapped.push_back(d);
  }
  Tensor y = empty(x->context(), x->dtype(), x->shape());
  if (x->numel() > 0) {
    // Read x backwards along the flipped dims: start at their last element, negative strides.
    Dims strides = x->strides();
    int64_t start = 0;
    for (int d = 0; d < x->ndim(); ++d) {
      if (!flipped[d]) continue;
      start += (x->shape()[d] - 1) * strides[d];
      strides[d] = -strides[d];
    }
    const char* src = x->data() + start * static_cast<int64_t>(itemsize(x->dtype()));
    kernels::copy(x->dtype(), x->shape(), kernels::View{src, &strides}, x->dtype(), y->data(), y->strides());
  }
  if (should_record({x.get()})) record<FlipBackward>({x.get()}, y, wrapped);
  return y;
}

// repeat: x tiled repeats[i] times along dim i (leading repeats add dims), as
// reshape -> expand -> clone -> reshape: dim i of size s becomes (r, s).
Tensor repeat(const Tensor& x, const Dims& repeats) {
  const int n = repeats.size();
  if (n < x->ndim()) {
    fail(AG_ERR_INVALID_ARGUMENT, "repeats has ", n, " entries but the tensor has ", x->ndim(), " dims (at least ",
         x->ndim(), " needed)");
  }
  const int off = n - x->ndim();
  Dims view_shape, expand_shape, out_shape;
  int pairs = 0;
  for (int i = 0; i < n; ++i) pairs += repeats[i] != 1 && i >= off && x->shape()[i - off] != 1;
  if (n + pairs > kMaxDims) {
    fail(AG_ERR_UNSUPPORTED, "repeating ", pairs, " dims of size > 1 of a ", n, "-dim result needs ", n + pairs,
         " dims internally (at most ", kMaxDims, ")");
  }
  for (int i = 0; i < n; ++i) {
    const int64_t r = repeats[i], s = i < off ? 1 : x->shape()[i - off];
    if (r < 0) fail(AG_ERR_INVALID_ARGUMENT, "repeat ", r, " of dim ", i, " is negative");
    int64_t size = 0;
    if (__builtin_mul_overflow(r, s, &size)) fail(AG_ERR_OUT_OF_MEMORY, "the result is too large");
    out_shape.push_back(size);
    if (r != 1 && s != 1) {
      view_shape.push_back(1);
      expand_shape.push_back(r);
    }
    view_shape.push_back(s);
    expand_shape.push_back(s == 1 ? r : s);
  }
  checked_shape(out_shape.data(), out_shape.size(), itemsize(x->dtype()));
  return reshape(clone(expand(reshape(x, view_shape), expand_shape)), out_shape);
}

// pad: constant mode writes x into a tensor filled with `value` (negative
// pads crop); its gradient is pad(g, -pads) with 0. Reflect mode mirrors x at
// its edges (without repeating the edge), built from narrow, flip and concat.
// pads come in (before, after) pairs, the last dim first.
namespace {
struct PadConstantBackward final : Node {
  explicit PadConstantBackward(std::vector<int64_t> p) : pads(std::move(p)) {}
  const char* name() const override { return "PadConstantBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    std::vector<int64_t> neg;
    for (int64_t p : pads) neg.push_back(-p);
    out[0] = pad(g[0], neg, PadMode::Constant, 0.0);
  }
  std::vector<int64_t> pads;
};

Tensor pad_constant(const Tensor& x, const std::vector<int64_t>& pads, double value) {
  const int pairs = static_cast<int>(pads.size() / 2);
  Dims shape = x->shape();
  Dims src_start, dst_start, region = x->shape();  // per dim: the part of x that lands in y
  src_start.resize(x->ndim());
  dst_start.resize(x->ndim());
  for (int i = 0; i < x->ndim(); ++i) src_start[i] = dst_start[i] = 0;
  for (int k = 0; k < pairs; ++k) {
    const int d = x->ndim() - 1 - k;
    const int64_t before = pads[2 * k], after = pads[2 * k + 1], s = x->shape()[d];
    for (int64_t p : {before, after}) {  // a crop's size, and the gradient's padding, are negations
      if (p == INT64_MIN) fail(AG_ERR_INVALID_ARGUMENT, "padding ", p, " of dim ", d, " has no negation in int64");
    }
    int64_t size = 0;
    if (__builtin_add_overflow(s, before, &size) || __builtin_add_overflow(size, after, &size)) {
      fail(AG_ERR_OUT_OF_MEMORY, "padding dim ", d, " overflows");
    }
    if (size < 0) {
      fail(AG_ERR_SHAPE, "padding (", before, ",", after, ") makes dim ", d, " of size ", s, " negative (", size, ")");
    }
    shape[d] = size;
    src_start[d] = before < 0 ? -before : 0;
    dst_start[d] = before > 0 ? before : 0;
    const int64_t len = s - src_start[d] - (after < 0 ? -after : 0);
    region[d] = len > 0 ? len : 0;
  }
  checked_shape(shape.data(), shape.size(), itemsize(x->dtype()));
  Tensor y = full_for_writes(x->context(), x->dtype(), shape, value);
  if (numel_of(region) > 0) {
    const int64_t item = static_cast<int64_t>(itemsize(x->dtype()));
    int64_t src_off = 0, dst_off = 0;
    for (int i = 0; i < x->ndim(); ++i) {
      src_off += src_start[i] * x->strides()[i];
      dst_off += dst_start[i] * y->strides()[i];
    }
    kernels::copy(x->dtype(), region, kernels::View{x->data() + src_off * item, &x->strides()}, x->dtype(),
                  y->data() + dst_off * item, y->strides());
  }
  if (should_record({x.get()})) record<PadConstantBackward>({x.get()}, y, pads);
  return y;
}

Tensor pad_reflect(const Tensor& x, const std::vector<int64_t>& pads) {
  const int pairs = static_cast<int>(pads.size() / 2);
  for (int k = 0; k < pairs; ++k) {
    const int d = x->ndim() - 1 - k;
    for (int64_t p : {pads[2 * k], pads[2 * k + 1]}) {
      if (p < 0) fail(AG_ERR_INVALID_ARGUMENT, "reflect padding ", p, " of dim ", d, " is negative");
      if (p > 0 && p >= x->shape()[d]) {
        fail(AG_ERR_SHAPE, "reflect padding ", p, " of dim ", d, " must be less than its size ", x->shape()[d]);
      }
    }
  }
  Tensor t = x;
  for (int k = 0; k < pairs; ++k) {
    const int d = x->ndim() - 1 - k;
    const int64_t before = pads[2 * k], after = pads[2 * k + 1], s = x->shape()[d];
    if (before == 0 && after == 0) continue;
    std::vector<Tensor> parts;
    const Dims dims{d};
    if (before > 0) parts.push_back(flip(narrow(t, d, 1, before), dims));
    parts.push_back(t);
    if (after > 0) parts.push_back(flip(narrow(t, d, s - 1 - after, after), dims));
    t = concat(parts, d);
  }
  return t.get() == x.get() ? clone(x) : t;  // always a new tensor
}
}  // namespace
Tensor pad(const Tensor& x, const std::vector<int64_t>& pads, PadMode mode, double value) {
  if (pads.size() % 2 != 0) fail(AG_ERR_INVALID_ARGUMENT, "pads has an odd count ", pads.size(), "; it needs pairs");
  if (pads.size() / 2 > static_cast<size_t>(x->ndim())) {
    fail(AG_ERR_INVALID_ARGUMENT, "pads has ", pads.size(), " entries (", pads.size() / 2,
         " dims) but the tensor has ", x->ndim(), " dims");
  }
  return mode == PadMode::Constant ? pad_constant(x, pads, value) : pad_reflect(x, pads);
}

}  // namespace ag::ops
