// What every op block uses: argument checks with precise messages, kernel
// views, and recording a node.
#pragma once

#include <algorithm>
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

// Runs kernel(sub_shape, in_offsets, out_offset) over chunks of whole slices
// of the first dim of `shape` with a size above 1, in parallel where large:
// for kernels over N strided or broadcast inputs (element strides `strides`)
// and a contiguous output. Offsets are in elements.
template <int N, class F>
void for_slices(Context* ctx, const Dims& shape, const Dims* const (&strides)[N], F&& kernel) {
  int64_t n = 1;
  for (int i = 0; i < shape.size(); ++i) n *= shape[i];
  int dim = 0;
  while (dim < shape.size() && shape[dim] == 1) ++dim;
  if (n <= kElementwiseChunk || dim == shape.size()) {
    const int64_t zero[N] = {};
    kernel(shape, zero, int64_t{0});
    return;
  }
  const int64_t rows = shape[dim], slice = n / rows;
  const int64_t per_chunk = std::max<int64_t>(1, kElementwiseChunk / slice);
  ctx->parallel_chunks(rows, per_chunk, [&](int64_t b, int64_t e) {
    Dims sub = shape;
    sub[dim] = e - b;
    int64_t in_off[N];
    for (int k = 0; k < N; ++k) in_off[k] = b * (*strides[k])[dim];
    kernel(sub, in_off, b * slice);
  });
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

// Gradient of a broadcast input: summed back to its shape when it differs.
inline Tensor reduce_to(const Tensor& g, const Dims& shape) {
  return g->shape() == shape ? g : sum_to_size(g, shape);
}

}  // namespace ag::ops
