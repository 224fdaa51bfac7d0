// Clamp kernel for clamp_: its own header, so the ops that do not clamp
// need not see it.
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace ag::kernels {

// out[i] = min(max(x[i], lo), hi) for n contiguous f32/f64 elements (NaN
// stays NaN; lo > hi gives hi, as in PyTorch); out may be x. If mask is not
// null, mask[i] = 1 where lo <= x[i] <= hi, else 0 (the gradient's factor).
void clamp(DType dt, const char* x, char* out, char* mask, int64_t n, double lo, double hi);

// The HWY_TARGET clamp dispatches to (for the all-targets test).
int64_t clamp_target();

}  // namespace ag::kernels
