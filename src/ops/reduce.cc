// Reductions over all elements: sum, mean. The result is 0-dim.
#include <vector>

#include "ops/op_common.h"

namespace ag::ops {

static_assert(kernels::kSumChunk == grain(Work::Reduction), "a sum chunk is one reduction grain");

namespace {

// Sum of all elements of x into the 0-dim y, divided by `divisor` in double
// (one rounding) when it is not 1.
void sum_all_into(const Tensor& x, double divisor, TensorImpl& y) {
  const int64_t n = x->numel();
  if (x->is_contiguous()) {
    // Chunk sums in parallel, merged in order: the same bits as one pass of
    // sum_to. The chunks are kSumChunk elements whatever the thread count
    // (the reduction grain, which the merge tree of sum_to is built on); a
    // single chunk is summed right here.
    double total;
    if (n <= kernels::kSumChunk) {
      total = kernels::sum_contiguous(x->dtype(), x->data(), n);
    } else {
      const int64_t chunks = (n + kernels::kSumChunk - 1) / kernels::kSumChunk;
      std::vector<double> sums(static_cast<size_t>(chunks));
      const size_t item = itemsize(x->dtype());
      for_ranges(x->context(), n, kernels::kSumChunk, [&](int64_t b, int64_t e) {
        sums[static_cast<size_t>(b / kernels::kSumChunk)] =
            kernels::sum_contiguous(x->dtype(), x->data() + b * item, e - b);
      });
      total = kernels::merge_block_sums(sums.data(), chunks);
    }
    visit_floating(x->dtype(), [&](auto z) { *y.data_as<decltype(z)>() = static_cast<decltype(z)>(total); });
  } else {
    Dims ones;
    ones.resize(x->ndim());
    for (int i = 0; i < x->ndim(); ++i) ones[i] = 1;
    kernels::sum_to(x->dtype(), x->shape(), view_of(*x), ones, y.data());
  }
  if (divisor == 1.0) return;
  // Divide in double: one rounding, and 0/0 = NaN for an empty tensor.
  visit_floating(y.dtype(), [&](auto z) {
    using T = decltype(z);
    T* p = y.data_as<T>();
    *p = static_cast<T>(static_cast<double>(*p) / divisor);
  });
}

// Sum of all elements (divided by `divisor`) into a new 0-dim tensor.
Tensor sum_all(const Tensor& x, double divisor = 1.0) {
  check_floating(*x);
  Tensor y = empty(x->context(), x->dtype(), Dims());
  sum_all_into(x, divisor, *y);
  trace(*y, [&] { return [x, divisor, y] { sum_all_into(x, divisor, *y); }; });
  return y;
}

struct ReduceAllNode : Node {
  explicit ReduceAllNode(const Tensor& x) : shape(x->shape()), numel(x->numel()) {}
  Dims shape;
  int64_t numel;
};

}  // namespace

// sum: y = sum(x); dx = g expanded to x.shape.
namespace {
struct SumBackward final : ReduceAllNode {
  using ReduceAllNode::ReduceAllNode;
  const char* name() const override { return "SumBackward"; }
  void apply(TensorList& g, TensorList& out) override { out[0] = expand_to_shape(g[0], shape); }
};
}  // namespace
Tensor sum(const Tensor& x) {
  Tensor y = sum_all(x);
  if (should_record({x.get()})) record<SumBackward>({x.get()}, y, x);
  return y;
}

// mean: y = sum(x) / n; dx = g / n expanded to x.shape.
namespace {
struct MeanBackward final : ReduceAllNode {
  using ReduceAllNode::ReduceAllNode;
  const char* name() const override { return "MeanBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    out[0] = expand_to_shape(div(g[0], scalar_like(g[0], static_cast<double>(numel))), shape);
  }
};
}  // namespace
Tensor mean(const Tensor& x) {
  Tensor s = sum_all(x, static_cast<double>(x->numel()));
  if (should_record({x.get()})) record<MeanBackward>({x.get()}, s, x);
  return s;
}

}  // namespace ag::ops
