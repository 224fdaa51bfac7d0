// Kernels of the creation ops (kernels/creation.cc). Each writes elements
// first..first+n-1 of the whole result, whose values depend only on their
// index, so any chunking gives the same bits.
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace ag::kernels {

// out[i] = start + (first + i) * step: in double, rounded once to f32/f64;
// in int64 for i64 (start and step integral).
void arange(DType dt, char* out, int64_t first, int64_t n, double start, double step);

// Elements of `steps` (>= 2) evenly spaced points from start to end, in the
// dtype's own arithmetic (f32 or f64): the first half counts up from start,
// the second half down from end, so both end points are exact.
void linspace(DType dt, char* out, int64_t first, int64_t n, double start, double end, int64_t steps);

}  // namespace ag::kernels
