// Shape rules shared by the reductions over dims (reduce_dims.cc) and the
// ops built on them (softmax, losses).
#pragma once

#include "ops/op_common.h"

namespace ag::ops {

struct ReducedShape {
  Dims keep;          // x's shape with 1 in every reduced dim (keepdim=1)
  Dims out;           // the reduced dims dropped (keepdim=0)
  int64_t count = 1;  // elements reduced into each output element
};

// Wraps and validates dims against x (empty dims: all of them); a repeated
// dim is AG_ERR_INVALID_ARGUMENT.
ReducedShape reduced_shape(const TensorImpl& x, const Dims& dims);

// y (contiguous, of shape r.keep) as r.out unless keepdim.
Tensor drop_kept_dims(const Tensor& y, const ReducedShape& r, bool keepdim);

}  // namespace ag::ops
