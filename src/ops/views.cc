// Views: reshape (when the strides allow), flatten, squeeze, unsqueeze,
// transpose, permute, movedim, slice, select, narrow, split, chunk, unbind,
// tensor_split, broadcast_to. A view shares the
// input's storage and so its version counter; only the shape, strides and
// offset differ. slice_backward, the gradient of the slicing views, writes a
// gradient into zeros of the input's shape.
#include "autograd/grad_math.h"
#include "ops/op_common.h"

namespace ag::ops {

namespace {

// Strides that let (shape, strides) be read as new_shape without a copy, or
// false when none exist (PyTorch's view rule: each run of merged old dims
// must split into whole new dims).
bool view_strides(const Dims& shape, const Dims& strides, const Dims& new_shape, Dims& out) {
  out = contiguous_strides(new_shape);
  if (shape.size() == 0 || new_shape.size() == 0 || numel_of(shape) == 0) return true;
  int view_d = new_shape.size() - 1;
  int64_t base = strides[shape.size() - 1];
  int64_t tensor_numel = 1, view_numel = 1;
  for (int d = shape.size() - 1; d >= 0; --d) {
    tensor_numel *= shape[d];
    if (d == 0 || (shape[d - 1] != 1 && strides[d - 1] != tensor_numel * base)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_shape[view_d] == 1)) {
        out[view_d] = view_numel * base;
        view_numel *= new_shape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return false;
      if (d > 0) {
        base = strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  return view_d == -1;
}

// A view of x with another shape: shares storage when the strides allow,
// else a contiguous copy. No graph.
Tensor reshape_data(const Tensor& x, const Dims& shape) {
  Dims strides;
  if (view_strides(x->shape(), x->strides(), shape, strides)) return make_view(*x, shape, strides, x->offset());
  Tensor c = grad_clone(x);
  return make_view(*c, shape, contiguous_strides(shape), 0);
}

// Python slice bounds of [start, end) over a dim of `size`: negative values
// count from the end, then both clamp to [0, size].
struct SliceRange {
  int64_t start, length;
};
SliceRange slice_range(int64_t size, int64_t start, int64_t end, int64_t step) {
  if (step <= 0) fail(AG_ERR_INVALID_ARGUMENT, "step ", step, " must be positive");
  auto clamp = [size](int64_t v) {
    if (v < 0) v = v < -size ? 0 : v + size;
    return v > size ? size : v;
  };
  const int64_t s = clamp(start), e = clamp(end);
  return {s, e > s ? (e - s - 1) / step + 1 : 0};
}

// One past the last index of r: an end that gives r again, whatever the step
// (start + length * step may overflow for a huge step).
int64_t slice_end(SliceRange r, int64_t step) { return r.length > 0 ? r.start + (r.length - 1) * step + 1 : r.start; }

// Shape, strides and offset of x sliced along dim.
Tensor slice_view(const Tensor& x, int dim, SliceRange r, int64_t step) {
  Dims shape = x->shape(), strides = x->strides();
  shape[dim] = r.length;
  const int64_t offset = r.length > 0 ? x->offset() + r.start * strides[dim] : x->offset();
  // The product overflows only for a slice of at most one element (else
  // (length - 1) * step is inside the dim), whose stride is never stepped.
  int64_t stepped;
  if (!__builtin_mul_overflow(strides[dim], step, &stepped)) strides[dim] = stepped;
  return make_view(*x, shape, strides, offset);
}

// Gradient of a view that only rearranges elements: reshape back.
struct ReshapeBackward final : Node {
  explicit ReshapeBackward(const Dims& s) : shape(s) {}
  const char* name() const override { return "ReshapeBackward"; }
  void apply(TensorList& g, TensorList& out) override { out[0] = reshape(g[0], shape); }
  Dims shape;
};

Tensor record_reshape(const Tensor& x, Tensor y) {
  if (should_record({x.get()})) record<ReshapeBackward>({x.get()}, y, x->shape());
  return y;
}

}  // namespace

// reshape: y = x with `shape` (one -1 inferred), a view when the strides
// allow, else a copy; dx = reshape(g, x.shape).
Tensor reshape(const Tensor& x, const Dims& shape_in) {
  Dims shape = shape_in;
  int infer = -1;
  int64_t known = 1;
  for (int i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer >= 0) fail(AG_ERR_INVALID_ARGUMENT, "only one size may be -1, got ", shape_str(shape_in));
      infer = i;
    } else if (shape[i] < 0) {
      fail(AG_ERR_INVALID_ARGUMENT, "size ", shape[i], " of dim ", i, " is negative");
    } else if (__builtin_mul_overflow(known, shape[i], &known)) {
      fail(AG_ERR_SHAPE, "shape ", shape_str(shape_in), " is invalid for an input of ", x->numel(), " elements");
    }
  }
  if (infer >= 0) {
    if (known == 0 || x->numel() % known != 0) {
      fail(AG_ERR_SHAPE, "shape ", shape_str(shape_in), " is invalid for an input of ", x->numel(), " elements");
    }
    shape[infer] = x->numel() / known;
  } else if (known != x->numel()) {
    fail(AG_ERR_SHAPE, "shape ", shape_str(shape_in), " is invalid for an input of ", x->numel(), " elements");
  }
  return record_reshape(x, reshape_data(x, shape));
}

// flatten: dims start_dim..end_dim merged into one (a 0-dim x gives shape (1)).
Tensor flatten(const Tensor& x, int64_t start_dim, int64_t end_dim) {
  const int nd = x->ndim() > 0 ? x->ndim() : 1;
  const int s = wrap_dim(start_dim, nd, "start_dim"), e = wrap_dim(end_dim, nd, "end_dim");
  if (s > e) fail(AG_ERR_INVALID_ARGUMENT, "start_dim ", start_dim, " comes after end_dim ", end_dim);
  if (x->ndim() == 0) return reshape(x, Dims{1});
  Dims shape;
  for (int i = 0; i < s; ++i) shape.push_back(x->shape()[i]);
  // numel_of: 0 if any merged size is 0, and no overflow otherwise (x exists).
  shape.push_back(numel_of(Dims(x->shape().data() + s, e - s + 1)));
  for (int i = e + 1; i < x->ndim(); ++i) shape.push_back(x->shape()[i]);
  return reshape(x, shape);
}

// squeeze: size-1 dims removed (those in dims, or all when dims is empty;
// a listed dim of another size stays).
Tensor squeeze(const Tensor& x, const Dims& dims) {
  const int nd = x->ndim() > 0 ? x->ndim() : 1;
  bool drop[kMaxDims] = {};
  for (int i = 0; i < dims.size(); ++i) {
    const int d = wrap_dim(dims[i], nd);
    for (int j = 0; j < i; ++j) {
      if (wrap_dim(dims[j], nd) == d) fail(AG_ERR_INVALID_ARGUMENT, "dim ", d, " appears more than once in dims");
    }
    drop[d] = true;
  }
  Dims shape, strides;
  for (int i = 0; i < x->ndim(); ++i) {
    if (x->shape()[i] == 1 && (dims.size() == 0 || drop[i])) continue;
    shape.push_back(x->shape()[i]);
    strides.push_back(x->strides()[i]);
  }
  return record_reshape(x, make_view(*x, shape, strides, x->offset()));
}

// unsqueeze: a size-1 dim inserted at dim (in -ndim-1..ndim).
Tensor unsqueeze(const Tensor& x, int64_t dim) {
  if (x->ndim() == kMaxDims) fail(AG_ERR_INVALID_ARGUMENT, "the tensor already has the maximum of ", kMaxDims, " dims");
  const int d = wrap_dim(dim, x->ndim() + 1);
  Dims shape, strides;
  for (int i = 0; i <= x->ndim(); ++i) {
    if (i == d) {
      shape.push_back(1);
      strides.push_back(d < x->ndim() ? x->shape()[d] * x->strides()[d] : 1);
    }
    if (i < x->ndim()) {
      shape.push_back(x->shape()[i]);
      strides.push_back(x->strides()[i]);
    }
  }
  return record_reshape(x, make_view(*x, shape, strides, x->offset()));
}

// permute: y dim i = x dim dims[i]; dx = permute(g, inverse of dims).
namespace {
struct PermuteBackward final : Node {
  explicit PermuteBackward(const Dims& d) : inverse(d) {}
  const char* name() const override { return "PermuteBackward"; }
  void apply(TensorList& g, TensorList& out) override { out[0] = permute(g[0], inverse); }
  Dims inverse;
};
}  // namespace
Tensor permute(const Tensor& x, const Dims& dims) {
  if (dims.size() != x->ndim()) {
    fail(AG_ERR_INVALID_ARGUMENT, "dims has ", dims.size(), " entries but the tensor has ", x->ndim(), " dims");
  }
  Dims shape, strides, inverse;
  inverse.resize(x->ndim());
  bool seen[kMaxDims] = {};
  for (int i = 0; i < dims.size(); ++i) {
    const int d = wrap_dim(dims[i], x->ndim());
    if (seen[d]) fail(AG_ERR_INVALID_ARGUMENT, "dim ", d, " appears more than once in dims");
    seen[d] = true;
    inverse[d] = i;
    shape.push_back(x->shape()[d]);
    strides.push_back(x->strides()[d]);
  }
  Tensor y = make_view(*x, shape, strides, x->offset());
  if (should_record({x.get()})) record<PermuteBackward>({x.get()}, y, inverse);
  return y;
}

// transpose: dims dim0 and dim1 swapped (a permute).
Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1) {
  const int nd = x->ndim() > 0 ? x->ndim() : 1;
  const int a = wrap_dim(dim0, nd, "dim0"), b = wrap_dim(dim1, nd, "dim1");
  if (x->ndim() == 0) return permute(x, Dims());
  Dims dims;
  for (int i = 0; i < x->ndim(); ++i) dims.push_back(i == a ? b : i == b ? a : i);
  return permute(x, dims);
}

// slice: x[start:end:step] along dim (a view); dx = slice_backward(g, x.shape, ...).
namespace {
struct SliceBackward final : Node {
  SliceBackward(const Dims& s, int d, int64_t b, int64_t e, int64_t st)
      : shape(s), dim(d), start(b), end(e), step(st) {}
  const char* name() const override { return "SliceBackward"; }
  void apply(TensorList& g, TensorList& out) override { out[0] = slice_backward(g[0], shape, dim, start, end, step); }
  Dims shape;
  int dim;
  int64_t start, end, step;
};
}  // namespace
Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step) {
  const int d = wrap_dim(dim, x->ndim());
  const SliceRange r = slice_range(x->shape()[d], start, end, step);
  Tensor y = slice_view(x, d, r, step);
  if (should_record({x.get()})) {
    record<SliceBackward>({x.get()}, y, x->shape(), d, r.start, slice_end(r, step), step);
  }
  return y;
}

// slice_backward: zeros of input_shape with g written at [start:end:step]
// along dim; dg = slice(gy, dim, start, end, step).
namespace {
struct SliceBackwardBackward final : Node {
  SliceBackwardBackward(int d, int64_t b, int64_t e, int64_t st) : dim(d), start(b), end(e), step(st) {}
  const char* name() const override { return "SliceBackwardBackward"; }
  void apply(TensorList& g, TensorList& out) override { out[0] = slice(g[0], dim, start, end, step); }
  int dim;
  int64_t start, end, step;
};
}  // namespace
Tensor slice_backward(const Tensor& g, const Dims& input_shape, int64_t dim, int64_t start, int64_t end,
                      int64_t step) {
  check_floating(*g);
  checked_shape(input_shape.data(), input_shape.size(), itemsize(g->dtype()));
  const int d = wrap_dim(dim, input_shape.size());
  const SliceRange r = slice_range(input_shape[d], start, end, step);
  Dims expected = input_shape;
  expected[d] = r.length;
  if (g->shape() != expected) {
    fail(AG_ERR_SHAPE, "grad has shape ", shape_str(g->shape()), " but the slice of ", shape_str(input_shape),
         " has shape ", shape_str(expected));
  }
  Tensor y = full_for_writes(g->context(), g->dtype(), input_shape, 0.0);
  Tensor target = slice_view(y, d, r, step);
  kernels::copy(g->dtype(), g->shape(), view_of(*g), g->dtype(), target->data(), target->strides());
  if (should_record({g.get()})) record<SliceBackwardBackward>({g.get()}, y, d, r.start, slice_end(r, step), step);
  return y;
}

// select: x[..., index, ...] along dim, that dim removed (a view).
Tensor select(const Tensor& x, int64_t dim, int64_t index) {
  const int d = wrap_dim(dim, x->ndim());
  const int64_t size = x->shape()[d];
  if (index < -size || index >= size) {
    fail(AG_ERR_INVALID_ARGUMENT, "index ", index, " is out of range for dim ", d, " of size ", size);
  }
  const int64_t i = index < 0 ? index + size : index;
  return squeeze(slice(x, d, i, i + 1, 1), Dims{d});
}

// narrow: x[start:start+length] along dim (a view); start may be negative.
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length) {
  const int d = wrap_dim(dim, x->ndim());
  const int64_t size = x->shape()[d];
  if (start < -size || start > size) {
    fail(AG_ERR_INVALID_ARGUMENT, "start ", start, " is out of range for dim ", d, " of size ", size);
  }
  const int64_t s = start < 0 ? start + size : start;
  if (length < 0 || length > size - s) {
    fail(AG_ERR_INVALID_ARGUMENT, "length ", length, " from start ", s, " exceeds dim ", d, " of size ", size);
  }
  return slice(x, d, s, s + length, 1);
}

// split: consecutive narrows of the given sizes, which must add up to the dim.
std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& sizes, int64_t dim) {
  const int d = wrap_dim(dim, x->ndim());
  int64_t total = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 0) fail(AG_ERR_INVALID_ARGUMENT, "size ", sizes[i], " at position ", i, " is negative");
  }
  for (size_t i = 0; i < sizes.size(); ++i) {
    total += sizes[i];
    if (total > x->shape()[d]) break;
  }
  if (total != x->shape()[d]) {
    fail(AG_ERR_SHAPE, "sizes add up to ", total, (total > x->shape()[d] ? " or more" : ""), " but dim ", d,
         " has size ", x->shape()[d]);
  }
  std::vector<Tensor> out;
  int64_t start = 0;
  for (int64_t s : sizes) {
    out.push_back(narrow(x, d, start, s));
    start += s;
  }
  return out;
}

// chunk: pieces of ceil(size / chunks) along dim, the last one smaller; fewer
// than `chunks` pieces when the size does not fill them (PyTorch's rule), one
// empty piece for an empty dim.
namespace {
// ceil(a / b) for a >= 0, b > 0, without a + b - 1 (an empty tensor's dim may
// be near INT64_MAX).
int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0); }
}  // namespace

int64_t chunk_count(const Tensor& x, int64_t chunks, int64_t dim) {
  if (chunks <= 0) fail(AG_ERR_INVALID_ARGUMENT, "chunks ", chunks, " must be positive");
  const int64_t size = x->shape()[wrap_dim(dim, x->ndim())];
  if (size == 0) return 1;
  return ceil_div(size, ceil_div(size, chunks));
}
std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim) {
  const int64_t n = chunk_count(x, chunks, dim);
  const int64_t size = x->shape()[wrap_dim(dim, x->ndim())];
  const int64_t piece = ceil_div(size, chunks);
  std::vector<int64_t> sizes;
  for (int64_t i = 0; i < n; ++i) sizes.push_back(i + 1 < n ? piece : size - piece * (n - 1));
  return split(x, sizes, dim);
}

// movedim: x's dim `source` moved to position `destination`, the others
// keeping their order (a permute).
Tensor movedim(const Tensor& x, int64_t source, int64_t destination) {
  const int nd = x->ndim() > 0 ? x->ndim() : 1;
  const int s = wrap_dim(source, nd, "source"), d = wrap_dim(destination, nd, "destination");
  if (x->ndim() == 0) return permute(x, Dims());
  Dims rest, dims;
  for (int i = 0; i < x->ndim(); ++i) {
    if (i != s) rest.push_back(i);
  }
  for (int i = 0, r = 0; i < x->ndim(); ++i) dims.push_back(i == d ? s : rest[r++]);
  return permute(x, dims);
}

// broadcast_to: expand under PyTorch's other name (a view).
Tensor broadcast_to(const Tensor& x, const Dims& shape) { return expand(x, shape); }

// unbind: the selects of every position of dim (views). The count is checked
// against the caller's room first: an empty tensor's dim may be near INT64_MAX.
int64_t unbind_count(const Tensor& x, int64_t dim) { return x->shape()[wrap_dim(dim, x->ndim())]; }
std::vector<Tensor> unbind(const Tensor& x, int64_t dim) {
  const int d = wrap_dim(dim, x->ndim());
  std::vector<Tensor> out;
  for (int64_t i = 0; i < x->shape()[d]; ++i) out.push_back(select(x, d, i));
  return out;
}

// tensor_split: `sections` pieces along dim, the first size % sections of
// them one longer (views; pieces may be empty).
std::vector<Tensor> tensor_split(const Tensor& x, int64_t sections, int64_t dim) {
  const int d = wrap_dim(dim, x->ndim());
  if (sections <= 0) fail(AG_ERR_INVALID_ARGUMENT, "sections ", sections, " must be positive");
  const int64_t size = x->shape()[d], base = size / sections, extra = size % sections;
  std::vector<Tensor> out;
  int64_t start = 0;
  for (int64_t i = 0; i < sections; ++i) {
    const int64_t len = base + (i < extra ? 1 : 0);
    out.push_back(narrow(x, d, start, len));
    start += len;
  }
  return out;
}

// tensor_split at indices: x[:i0], x[i0:i1], ..., x[ik:] along dim, with
// Python's slice rules (negative indices count from the end; a piece whose
// end lies before its start is empty).
std::vector<Tensor> tensor_split_indices(const Tensor& x, const std::vector<int64_t>& indices, int64_t dim) {
  const int d = wrap_dim(dim, x->ndim());
  std::vector<Tensor> out;
  int64_t start = 0;
  for (int64_t i : indices) {
    out.push_back(slice(x, d, start, i, 1));
    start = i;
  }
  out.push_back(slice(x, d, start, INT64_MAX, 1));
  return out;
}

}  // namespace ag::ops
