// The two tensor computations the engine itself needs: summing gradients and
// copying one. Defined with the ops (src/ops/), so that under create_graph the
// sums are recorded like any other op.
#pragma once

#include "core/tensor_impl.h"

namespace ag {

// a + b (same shape and dtype); recorded when grad mode is on.
Tensor grad_sum(const Tensor& a, const Tensor& b);
// The same for an `a` the caller gives up: the sum may go into a's buffer.
Tensor grad_sum(Tensor&& a, const Tensor& b);
// A contiguous copy of t, outside any graph.
Tensor grad_clone(const Tensor& t);
// A contiguous copy of t, recorded when grad mode is on.
Tensor grad_copy_recorded(const Tensor& t);

}  // namespace ag
