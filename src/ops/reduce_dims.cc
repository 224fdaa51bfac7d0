// Reductions over chosen dims (family DIMS): sum_dims, mean_dims; and
// view_dims, the size-1-dim view their gradients use to undo a dropped dim.
#include "ops/reduce_dims.h"

namespace ag::ops {

ReducedShape reduced_shape(const TensorImpl& x, const Dims& dims) {
  ReducedShape r;
  const int nd = x.ndim();
  bool reduce[kMaxDims] = {};
  for (int i = 0; i < dims.size(); ++i) {
    const int d = wrap_dim(dims[i], nd);
    if (reduce[d]) fail(AG_ERR_INVALID_ARGUMENT, "dim ", dims[i], " appears more than once in dims");
    reduce[d] = true;
  }
  r.count = 1;
  for (int d = 0; d < nd; ++d) {
    const bool red = dims.size() == 0 || reduce[d];
    r.keep.push_back(red ? 1 : x.shape()[d]);
    if (red) {
      r.count *= x.shape()[d];
    } else {
      r.out.push_back(x.shape()[d]);
    }
  }
  return r;
}

Tensor drop_kept_dims(const Tensor& y, const ReducedShape& r, bool keepdim) {
  if (keepdim || r.out == y->shape()) return y;
  return make_view(*y, r.out, contiguous_strides(r.out), y->offset());
}

namespace {

// Sum of x over the reduced dims, in the keepdim shape.
Tensor sum_keep(const Tensor& x, const ReducedShape& r) {
  Tensor y = empty(x->context(), x->dtype(), r.keep);
  kernels::sum_to(x->dtype(), x->shape(), view_of(*x), r.keep, y->data());
  return y;
}

// Keeps x's shape and the keepdim shape, to route a gradient back.
struct DimsNode : Node {
  DimsNode(const Tensor& x, const ReducedShape& r) : shape(x->shape()), keep(r.keep), count(r.count) {}
  Dims shape, keep;
  int64_t count;
};

}  // namespace

// view_dims: y = x with size-1 dims inserted or dropped (a view);
// dx = view_dims(g, x.shape).
namespace {
struct ViewDimsBackward final : Node {
  explicit ViewDimsBackward(const Dims& s) : shape(s) {}
  const char* name() const override { return "ViewDimsBackward"; }
  void apply(TensorList& g, TensorList& out) override { out[0] = view_dims(g[0], shape); }
  Dims shape;
};
}  // namespace
Tensor view_dims(const Tensor& x, const Dims& shape) {
  if (shape == x->shape()) return x;
  Dims strides;
  int j = 0;
  for (int i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1) {
      strides.push_back(1);
      continue;
    }
    while (j < x->ndim() && x->shape()[j] == 1) ++j;
    if (j == x->ndim() || x->shape()[j] != shape[i]) {
      fail(AG_ERR_INTERNAL, "view_dims: ", shape_str(x->shape()), " and ", shape_str(shape),
           " differ by more than size-1 dims");
    }
    strides.push_back(x->strides()[j++]);
  }
  Tensor y = make_view(*x, shape, strides, x->offset());
  if (should_record({x.get()})) record<ViewDimsBackward>({x.get()}, y, x->shape());
  return y;
}

// sum_dims: y = sum of x over dims; dx = expand(g with the dims kept, x.shape).
namespace {
struct SumDimsBackward final : DimsNode {
  using DimsNode::DimsNode;
  const char* name() const override { return "SumDimsBackward"; }
  void apply(TensorList& g, TensorList& out) override { out[0] = expand(view_dims(g[0], keep), shape); }
};
}  // namespace
Tensor sum_dims(const Tensor& x, const Dims& dims, bool keepdim) {
  check_floating(*x);
  const ReducedShape r = reduced_shape(*x, dims);
  Tensor y = drop_kept_dims(sum_keep(x, r), r, keepdim);
  if (should_record({x.get()})) record<SumDimsBackward>({x.get()}, y, x, r);
  return y;
}

// mean_dims: y = sum_dims(x) / count; dx = expand(g / count with the dims kept, x.shape).
namespace {
struct MeanDimsBackward final : DimsNode {
  using DimsNode::DimsNode;
  const char* name() const override { return "MeanDimsBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    out[0] = expand(view_dims(div(g[0], scalar_like(g[0], static_cast<double>(count))), keep), shape);
  }
};
}  // namespace
Tensor mean_dims(const Tensor& x, const Dims& dims, bool keepdim) {
  check_floating(*x);
  const ReducedShape r = reduced_shape(*x, dims);
  Tensor s = sum_keep(x, r);
  // Divide in double: one rounding, and 0/0 = NaN over an empty dim.
  visit_floating(s->dtype(), [&](auto z) {
    using T = decltype(z);
    T* p = s->data_as<T>();
    for (int64_t i = 0; i < s->numel(); ++i) {
      p[i] = static_cast<T>(static_cast<double>(p[i]) / static_cast<double>(r.count));
    }
  });
  Tensor y = drop_kept_dims(s, r, keepdim);
  if (should_record({x.get()})) record<MeanDimsBackward>({x.get()}, y, x, r);
  return y;
}

}  // namespace ag::ops
