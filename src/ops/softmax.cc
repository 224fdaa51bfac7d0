// softmax and log_softmax along one dim (family DIM), and their fused
// gradients softmax_backward and log_softmax_backward, ops with their own
// backward so that second derivatives work.
#include "ops/reduce_dims.h"

namespace ag::ops {

namespace {

Tensor softmax_forward(const Tensor& x, int64_t dim, bool log) {
  check_floating(*x);
  const Split s = split_at(x->shape(), wrap_dim(dim, x->ndim(), "dim", true));
  const Tensor xc = contiguous_data(x);
  Tensor y = empty(x->context(), x->dtype(), x->shape());
  if (y->numel() == 0) return y;  // no rows, however many the sizes of an empty x count
  auto kernel = [s, xc, y, log] {
    const int64_t row_bytes = s.n * s.inner * static_cast<int64_t>(itemsize(y->dtype()));
    for_row_blocks(y->context(), s, [&](int64_t first, int64_t rows) {
      kernels::softmax(y->dtype(), log, xc->data() + first * row_bytes, y->data() + first * row_bytes, rows, s.n,
                       s.inner);
    }, Work::Transcendental);
  };
  kernel();
  trace(*y, [&] { return kernel; });
  return y;
}

Tensor softmax_backward_forward(const Tensor& g, const Tensor& y, int64_t dim, bool log) {
  check_same(*g, *y);
  check_floating(*g);
  if (g->shape() != y->shape()) {
    fail(AG_ERR_SHAPE, "grad of shape ", shape_str(g->shape()), " and output of shape ", shape_str(y->shape()),
         " differ");
  }
  const Split s = split_at(y->shape(), wrap_dim(dim, y->ndim(), "dim", true));
  const Tensor gc = contiguous_data(g);
  const Tensor yc = contiguous_data(y);
  Tensor out = empty(y->context(), y->dtype(), y->shape());
  if (out->numel() == 0) return out;  // no rows, however many the sizes of an empty y count
  auto kernel = [s, gc, yc, out, log] {
    const int64_t row_bytes = s.n * s.inner * static_cast<int64_t>(itemsize(out->dtype()));
    for_row_blocks(out->context(), s, [&](int64_t first, int64_t rows) {
      const int64_t off = first * row_bytes;
      kernels::softmax_backward(out->dtype(), log, gc->data() + off, yc->data() + off, out->data() + off, rows, s.n,
                                s.inner);
    });
  };
  kernel();
  trace(*out, [&] { return kernel; });
  return out;
}

Tensor sum_along(const Tensor& t, int64_t dim) { return sum_dims(t, Dims{dim}, true); }

// Saves the output y and the dim.
struct SoftmaxNode : SavingNode<1> {
  explicit SoftmaxNode(int64_t d) : dim(d) {}
  int64_t dim;
};

// Saves grad (slot 0, when y needs a gradient) and y (slot 1), and the dim.
struct SoftmaxBackwardNode : SavingNode<2> {
  explicit SoftmaxBackwardNode(int64_t d) : dim(d) {}
  int64_t dim;
};

}  // namespace

// softmax: y = exp(x - max) / sum(exp(x - max)) along dim;
// dx = softmax_backward(g, y, dim). Saves y.
namespace {
struct SoftmaxBackward final : SoftmaxNode {
  using SoftmaxNode::SoftmaxNode;
  const char* name() const override { return "SoftmaxBackward"; }
  void apply(TensorList& g, TensorList& out) override { out[0] = softmax_backward(g[0], saved[0].unpack(*this), dim); }
};
}  // namespace
Tensor softmax(const Tensor& x, int64_t dim) {
  Tensor y = softmax_forward(x, dim, false);
  if (should_record({x.get()})) record<SoftmaxBackward>({x.get()}, y, dim)->saved[0].save(y, true);
  return y;
}

// log_softmax: y = (x - max) - log(sum(exp(x - max))) along dim;
// dx = log_softmax_backward(g, y, dim). Saves y.
namespace {
struct LogSoftmaxBackward final : SoftmaxNode {
  using SoftmaxNode::SoftmaxNode;
  const char* name() const override { return "LogSoftmaxBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    out[0] = log_softmax_backward(g[0], saved[0].unpack(*this), dim);
  }
};
}  // namespace
Tensor log_softmax(const Tensor& x, int64_t dim) {
  Tensor y = softmax_forward(x, dim, true);
  if (should_record({x.get()})) record<LogSoftmaxBackward>({x.get()}, y, dim)->saved[0].save(y, true);
  return y;
}

// softmax_backward: out = y * (g - s), s = sum(g * y) along dim;
// dg = softmax_backward(u, y, dim), dy = u * (g - s) - g * sum(u * y).
namespace {
struct SoftmaxBackwardBackward final : SoftmaxBackwardNode {
  using SoftmaxBackwardNode::SoftmaxBackwardNode;
  const char* name() const override { return "SoftmaxBackwardBackward"; }
  void apply(TensorList& u, TensorList& out) override {
    Tensor y = saved[1].unpack(*this);
    if (needs_input_grad(0)) out[0] = softmax_backward(u[0], y, dim);
    if (needs_input_grad(1)) {
      Tensor g = saved[0].unpack(*this);
      Tensor s = sum_along(mul(g, y), dim);
      out[1] = sub(mul(u[0], sub(g, s)), mul(g, sum_along(mul(u[0], y), dim)));
    }
  }
};
}  // namespace
Tensor softmax_backward(const Tensor& grad, const Tensor& y, int64_t dim) {
  Tensor out = softmax_backward_forward(grad, y, dim, false);
  if (should_record({grad.get(), y.get()})) {
    auto n = record<SoftmaxBackwardBackward>({grad.get(), y.get()}, out, dim);
    if (n->needs_input_grad(1)) n->saved[0].save(grad, false);
    n->saved[1].save(y, false);
  }
  return out;
}

// log_softmax_backward: out = g - exp(y) * sum(g) along dim;
// dg = u - sum(u * exp(y)), dy = -u * exp(y) * sum(g).
namespace {
struct LogSoftmaxBackwardBackward final : SoftmaxBackwardNode {
  using SoftmaxBackwardNode::SoftmaxBackwardNode;
  const char* name() const override { return "LogSoftmaxBackwardBackward"; }
  void apply(TensorList& u, TensorList& out) override {
    Tensor ue = mul(u[0], exp(saved[1].unpack(*this)));
    if (needs_input_grad(0)) out[0] = sub(u[0], sum_along(ue, dim));
    if (needs_input_grad(1)) out[1] = neg(mul(ue, sum_along(saved[0].unpack(*this), dim)));
  }
};
}  // namespace
Tensor log_softmax_backward(const Tensor& grad, const Tensor& y, int64_t dim) {
  Tensor out = softmax_backward_forward(grad, y, dim, true);
  if (should_record({grad.get(), y.get()})) {
    auto n = record<LogSoftmaxBackwardBackward>({grad.get(), y.get()}, out, dim);
    if (n->needs_input_grad(1)) n->saved[0].save(grad, false);
    n->saved[1].save(y, false);
  }
  return out;
}

}  // namespace ag::ops
