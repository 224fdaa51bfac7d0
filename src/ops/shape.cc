// Shape and dtype ops: expand (a stride-0 view), sum_to_size (its inverse),
// cast; and the tensor helpers that backward formulas use.
#include <cmath>

#include "autograd/grad_math.h"
#include "ops/op_common.h"
#include "ops/reduce_dims.h"

namespace ag::ops {

// expand: y = x broadcast to `shape` (a view); dx = sum_to_size(g, x.shape).
namespace {
struct ExpandBackward final : Node {
  explicit ExpandBackward(const Dims& s) : shape(s) {}
  const char* name() const override { return "ExpandBackward"; }
  void apply(TensorList& g, TensorList& out) override { out[0] = sum_to_size(g[0], shape); }
  Dims shape;
};
}  // namespace
Tensor expand(const Tensor& x, const Dims& shape_in) {
  Dims shape = shape_in;
  const int off = shape.size() - x->ndim();
  if (off < 0) {
    fail(AG_ERR_SHAPE, "cannot expand shape ", shape_str(x->shape()), " to ", shape_str(shape_in),
         ", which has fewer dims");
  }
  for (int i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (i < off) fail(AG_ERR_SHAPE, "size -1 is not allowed for the new leading dim ", i, " of ", shape_str(shape_in));
      shape[i] = x->shape()[i - off];
    } else if (shape[i] < 0) {
      fail(AG_ERR_INVALID_ARGUMENT, "size ", shape[i], " of dim ", i, " is negative");
    }
  }
  if (!broadcastable_to(x->shape(), shape)) {
    fail(AG_ERR_SHAPE, "cannot expand shape ", shape_str(x->shape()), " to ", shape_str(shape_in));
  }
  checked_shape(shape.data(), shape.size(), itemsize(x->dtype()));  // element count overflow
  return expand_to_shape(x, shape);
}

Tensor expand_to_shape(const Tensor& x, const Dims& shape) {
  Tensor y = make_view(*x, shape, broadcast_strides(x->shape(), x->strides(), shape), x->offset());
  if (should_record({x.get()})) record<ExpandBackward>({x.get()}, y, x->shape());
  return y;
}

// sum_to_size: y = x summed down to `shape`; dx = expand(g, x.shape).
namespace {
struct SumToSizeBackward final : Node {
  explicit SumToSizeBackward(const Dims& s) : shape(s) {}
  const char* name() const override { return "SumToSizeBackward"; }
  void apply(TensorList& g, TensorList& out) override { out[0] = expand_to_shape(g[0], shape); }
  Dims shape;
};
}  // namespace
Tensor sum_to_size(const Tensor& x, const Dims& shape) {
  check_floating(*x);
  if (!broadcastable_to(shape, x->shape())) {
    fail(AG_ERR_SHAPE, "shape ", shape_str(shape), " does not broadcast to the input's shape ",
         shape_str(x->shape()));
  }
  // The kernel wants the target with x's ndim: leading 1s.
  Dims aligned;
  aligned.resize(x->ndim());
  const int off = x->ndim() - shape.size();
  for (int i = 0; i < x->ndim(); ++i) aligned[i] = i < off ? 1 : shape[i - off];
  Tensor y = empty(x->context(), x->dtype(), shape);
  auto kernel = [x, aligned, y] {
    if (!sum_leading_dims(*x, aligned, *y)) kernels::sum_to(x->dtype(), x->shape(), view_of(*x), aligned, y->data());
  };
  kernel();
  trace(*y, [&] { return kernel; });
  if (should_record({x.get()})) record<SumToSizeBackward>({x.get()}, y, x->shape());
  return y;
}

// cast: y = x converted to dtype; dx = cast(g, x.dtype) between floating dtypes.
namespace {
struct CastBackward final : Node {
  explicit CastBackward(DType d) : dtype(d) {}
  const char* name() const override { return "CastBackward"; }
  void apply(TensorList& g, TensorList& out) override { out[0] = cast(g[0], dtype); }
  DType dtype;
};
}  // namespace
Tensor cast(const Tensor& x, DType dtype) {
  Tensor y = empty(x->context(), dtype, x->shape());
  copy_into(x->context(), x->dtype(), x->shape(), view_of(*x), dtype, y->data(), y->strides());
  if (is_floating(dtype) && should_record({x.get()})) record<CastBackward>({x.get()}, y, x->dtype());
  return y;
}

// clone: y = contiguous copy of x; dx = g.
namespace {
struct CloneBackward final : Node {
  const char* name() const override { return "CloneBackward"; }
  void apply(TensorList& g, TensorList& out) override { out[0] = g[0]; }
};
}  // namespace
Tensor clone(const Tensor& x) {
  Tensor y = grad_clone(x);
  if (should_record({x.get()})) record<CloneBackward>({x.get()}, y);
  return y;
}

void copy_into(Context* ctx, DType src_dt, const Dims& shape, kernels::View src, DType dst_dt, char* dst,
               const Dims& dst_strides) {
  const int64_t n = numel_of(shape);
  int dim = 0;
  while (dim < shape.size() && shape[dim] == 1) ++dim;
  // Small copies (most of them) skip the layout check.
  const Work w = n <= grain(Work::Gather) || *src.strides != contiguous_strides(shape) ||
                         dst_strides != contiguous_strides(shape)
                     ? Work::Gather
                     : Work::Copy;
  if (n <= grain(w) || dim == shape.size()) {
    kernels::copy(src_dt, shape, src, dst_dt, dst, dst_strides);
    return;
  }
  const int64_t src_item = static_cast<int64_t>(itemsize(src_dt)), dst_item = static_cast<int64_t>(itemsize(dst_dt));
  // A gather's chunks take at least 32 units: in a transposing copy (a
  // transpose's first dim is the source's contiguous one), a chunk of fewer
  // rows would read part of each source line, and the next chunk the rest.
  int64_t units = units_per_chunk(w, n / shape[dim]);
  if (w == Work::Gather && units < 32) units = std::min<int64_t>(32, shape[dim]);
  ctx->parallel_chunks(shape[dim], units, [&](int64_t b, int64_t e) {
    Dims sub = shape;
    sub[dim] = e - b;
    kernels::copy(src_dt, sub, kernels::View{src.data + b * (*src.strides)[dim] * src_item, src.strides}, dst_dt,
                  dst + b * dst_strides[dim] * dst_item, dst_strides);
  });
}

Tensor copy_for_writes(const Tensor& x) {
  Tensor y = empty(x->context(), x->dtype(), x->shape());
  copy_into(x->context(), x->dtype(), x->shape(), view_of(*x), x->dtype(), y->data(), y->strides());
  return y;
}

Tensor full_for_writes(Context* ctx, DType dt, const Dims& shape, double value) {
  Tensor t = empty(ctx, dt, shape);
  fill_into(ctx, dt, t->data(), t->numel(), value);
  return t;
}

void fill_into(Context* ctx, DType dt, char* out, int64_t n, double value) {
  const int64_t item = static_cast<int64_t>(itemsize(dt));
  ctx->parallel_for(n, Work::Copy, [&](int64_t b, int64_t e) { kernels::fill(dt, out + b * item, e - b, value); });
}

Tensor full(Context* ctx, DType dtype, const Dims& shape, double value) {
  Tensor t = empty(ctx, dtype, shape);
  fill_into(ctx, dtype, t->data(), t->numel(), value);
  // A constant, filled again on replay: a step may have written it since.
  trace(*t, [&] { return [t, value] { fill_into(t->context(), t->dtype(), t->data(), t->numel(), value); }; });
  return t;
}

Tensor scalar_like(const Tensor& t, double value) { return full(t->context(), t->dtype(), Dims(), value); }

Tensor zeros_like(const Tensor& t) { return full(t->context(), t->dtype(), t->shape(), 0.0); }

}  // namespace ag::ops

namespace ag {

Tensor grad_copy_recorded(const Tensor& t) { return ops::clone(t); }

Tensor grad_clone(const Tensor& t) {
  Tensor y = empty(t->context(), t->dtype(), t->shape());
  ops::copy_into(t->context(), t->dtype(), t->shape(), ops::view_of(*t), t->dtype(), y->data(), y->strides());
  trace(*y, [&] {
    return [t, y] {
      ops::copy_into(t->context(), t->dtype(), t->shape(), ops::view_of(*t), t->dtype(), y->data(), y->strides());
    };
  });
  return y;
}

}  // namespace ag
