// What every op block uses: argument checks with precise messages, kernel
// views, and recording a node.
#pragma once

#include <initializer_list>

#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/saved_tensor.h"
#include "core/error.h"
#include "kernels/kernels.h"
#include "ops/ops.h"

namespace ag::ops {

inline kernels::View view_of(const TensorImpl& t) { return kernels::View{t.data(), &t.strides()}; }

// Elements per parallel chunk of an elementwise kernel: ~20 us of work or
// more, so that task dispatch (0.1-2 us) stays small against it.
constexpr int64_t kElementwiseChunk = int64_t{1} << 16;

// Runs kernel(offset, length) over the n elements of contiguous tensors in
// chunks, in parallel in the context's arena where that pays.
template <class F>
void for_chunks(Context* ctx, int64_t n, F&& kernel) {
  ctx->parallel_chunks(n, kElementwiseChunk, [&](int64_t b, int64_t e) { kernel(b, e - b); });
}

inline void check_floating(const TensorImpl& t) {
  if (!is_floating(t.dtype())) {
    fail(AG_ERR_DTYPE, "expects a floating tensor (f32 or f64), got ", dtype_name(t.dtype()));
  }
}

// Same context and same dtype (no implicit promotion).
inline void check_same(const TensorImpl& a, const TensorImpl& b) {
  if (a.context() != b.context()) fail(AG_ERR_CONTEXT, "the tensors belong to different contexts");
  if (a.dtype() != b.dtype()) {
    fail(AG_ERR_DTYPE, "dtypes ", dtype_name(a.dtype()), " and ", dtype_name(b.dtype()),
         " differ (no implicit promotion; convert with ag_op_cast)");
  }
}

inline bool should_record(std::initializer_list<const TensorImpl*> inputs) {
  if (!grad_enabled()) return false;
  for (const TensorImpl* t : inputs) {
    if (requires_grad(*t)) return true;
  }
  return false;
}

// Creates node N, wires it to the inputs and makes `out` its output.
template <class N, class... Args>
Ref<N> record(std::initializer_list<const TensorImpl*> inputs, Tensor& out, Args&&... args) {
  Ref<N> n = make_ref<N>(std::forward<Args>(args)...);
  collect_next_edges(*n, inputs);
  set_history(n, *out);
  return n;
}

// A node that keeps N tensors for its backward and frees them after it ran.
template <int N>
struct SavingNode : Node {
  void release_variables() override {
    for (SavedTensor& s : saved) s.release();
  }
  SavedTensor saved[N];
};

// The forward passes of the elementwise families (unary.cc, binary.cc):
// dtype checks, the kernel call, parallel chunks for large contiguous
// inputs. No graph.
Tensor unary_forward(const Tensor& x, kernels::UnaryKind k, double attr = 0.0, double attr2 = 0.0);
Tensor binary_forward(const Tensor& a, const Tensor& b, kernels::BinaryKind k);

// Constant masks of backward formulas (no graph), in x's dtype: 1 where
// lo < x < hi (closed: lo <= x <= hi), else 0.
inline Tensor inside(const Tensor& x, double lo, double hi, bool closed) {
  return unary_forward(x, closed ? kernels::UnaryKind::InsideClosed : kernels::UnaryKind::InsideOpen, lo, hi);
}

// Gradient of a broadcast input: summed back to its shape when it differs.
inline Tensor reduce_to(const Tensor& g, const Dims& shape) {
  return g->shape() == shape ? g : sum_to_size(g, shape);
}

// A node of a binary op: the input shapes, for summing broadcast gradients
// back, and two saved tensors.
struct BinaryNode : SavingNode<2> {
  BinaryNode(const Tensor& a, const Tensor& b) : shape_a(a->shape()), shape_b(b->shape()) {}
  Dims shape_a, shape_b;
};

}  // namespace ag::ops
