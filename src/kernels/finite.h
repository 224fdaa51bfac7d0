// The "all finite" scan of anomaly mode: its own header, so only the engine
// needs to see it.
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace ag::kernels {

// Index of the first element of x (n contiguous f32/f64 elements) that is NaN
// or infinite, or n when all are finite.
int64_t first_nonfinite(DType dt, const char* x, int64_t n);

// The HWY_TARGET first_nonfinite dispatches to (for the all-targets test).
int64_t finite_target();

}  // namespace ag::kernels
