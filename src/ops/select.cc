// Comparisons (eq, ne, lt, le, gt, ge: bool results, no gradient), where
// (select by a bool condition) and lerp; all broadcast their inputs as NumPy.
#include "ops/elementwise.h"

namespace ag::ops {

namespace {

Tensor compare(const Tensor& a, const Tensor& b, kernels::CompareKind k) {
  check_same(*a, *b);
  check_floating(*a);
  const Dims shape = broadcast_shapes(a->shape(), b->shape());
  Tensor y = empty(a->context(), DType::Bool, shape);
  auto kernel = [a, b, k, y] {
    uint8_t* out = reinterpret_cast<uint8_t*>(y->data());
    const TensorImpl* const in[2] = {a.get(), b.get()};
    for_elementwise(in, y->shape(), [&](const Dims& sub, const kernels::View* v, int64_t off) {
      kernels::compare(k, a->dtype(), sub, v[0], v[1], out + off);
    });
  };
  kernel();
  trace(*y, [&] { return kernel; });
  return y;
}

}  // namespace

// Comparisons: never recorded (their outputs are bool).
Tensor eq(const Tensor& a, const Tensor& b) { return compare(a, b, kernels::CompareKind::Eq); }
Tensor ne(const Tensor& a, const Tensor& b) { return compare(a, b, kernels::CompareKind::Ne); }
Tensor lt(const Tensor& a, const Tensor& b) { return compare(a, b, kernels::CompareKind::Lt); }
Tensor le(const Tensor& a, const Tensor& b) { return compare(a, b, kernels::CompareKind::Le); }
Tensor gt(const Tensor& a, const Tensor& b) { return compare(a, b, kernels::CompareKind::Gt); }
Tensor ge(const Tensor& a, const Tensor& b) { return compare(a, b, kernels::CompareKind::Ge); }

// where: y = cond ? a : b; da = where(cond, g, 0), db = where(cond, 0, g).
// Saves cond.
namespace {
struct WhereBackward final : SavingNode<1> {
  const char* name() const override { return "WhereBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    const Tensor cond = saved[0].unpack(*this);
    const Tensor zero = scalar_like(g[0], 0.0);
    if (needs_input_grad(1)) out[1] = reduce_to(where(cond, g[0], zero), input_shape(1));
    if (needs_input_grad(2)) out[2] = reduce_to(where(cond, zero, g[0]), input_shape(2));
  }
};
}  // namespace
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  check_same(*a, *b);
  check_floating(*a);
  if (cond->context() != a->context()) fail(AG_ERR_CONTEXT, "the tensors belong to different contexts");
  if (cond->dtype() != DType::Bool) fail(AG_ERR_DTYPE, "cond must be a bool tensor, got ", dtype_name(cond->dtype()));
  const Dims shape = broadcast_shapes(broadcast_shapes(cond->shape(), a->shape()), b->shape());
  Tensor y = empty(a->context(), a->dtype(), shape);
  auto kernel = [cond, a, b, y] {
    const int64_t item = static_cast<int64_t>(itemsize(a->dtype()));
    const TensorImpl* const in[3] = {cond.get(), a.get(), b.get()};
    for_elementwise(in, y->shape(), [&](const Dims& sub, const kernels::View* v, int64_t off) {
      kernels::where(a->dtype(), sub, v[0], v[1], v[2], y->data() + off * item);
    });
  };
  kernel();
  trace(*y, [&] { return kernel; });
  if (should_record({a.get(), b.get()})) {
    record<WhereBackward>({cond.get(), a.get(), b.get()}, y)->saved[0].save(cond, false);
  }
  return y;
}

// lerp: y = a + w (b - a); da = g (1 - w), db = g w, dw = g (b - a).
// Saves a and b if w needs grad, w if a or b does.
namespace {
struct LerpBackward final : SavingNode<3> {
  const char* name() const override { return "LerpBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    if (needs_input_grad(0) || needs_input_grad(1)) {
      const Tensor w = saved[2].unpack(*this);
      if (needs_input_grad(0)) out[0] = reduce_to(mul(g[0], sub(scalar_like(w, 1.0), w)), input_shape(0));
      if (needs_input_grad(1)) out[1] = reduce_to(mul(g[0], w), input_shape(1));
    }
    if (needs_input_grad(2)) {
      out[2] = reduce_to(mul(g[0], sub(saved[1].unpack(*this), saved[0].unpack(*this))), input_shape(2));
    }
  }
};
}  // namespace
Tensor lerp(const Tensor& a, const Tensor& b, const Tensor& weight) {
  check_same(*a, *b);
  check_same(*a, *weight);
  check_floating(*a);
  const Dims shape = broadcast_shapes(broadcast_shapes(a->shape(), b->shape()), weight->shape());
  Tensor y = empty(a->context(), a->dtype(), shape);
  const int64_t item = static_cast<int64_t>(itemsize(a->dtype()));
  const TensorImpl* const in[3] = {a.get(), b.get(), weight.get()};
  for_elementwise(in, shape, [&](const Dims& sub, const kernels::View* v, int64_t off) {
    kernels::lerp(a->dtype(), sub, v[0], v[1], v[2], y->data() + off * item);
  });
  if (should_record({a.get(), b.get(), weight.get()})) {
    auto n = record<LerpBackward>({a.get(), b.get(), weight.get()}, y);
    if (n->needs_input_grad(2)) {
      n->saved[0].save(a, false);
      n->saved[1].save(b, false);
    }
    if (n->needs_input_grad(0) || n->needs_input_grad(1)) n->saved[2].save(weight, false);
  }
  return y;
}

}  // namespace ag::ops
