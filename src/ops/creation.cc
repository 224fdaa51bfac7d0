// Creation ops: arange, linspace, eye. Results are new leaves that do not
// require grad; large ones are written in parallel chunks whose values depend
// only on the element index.
#include <cmath>

#include "kernels/creation.h"
#include "ops/op_common.h"

namespace ag::ops {

namespace {

// A length computed in double, as a checked 1-D shape.
Dims length_shape(double len, DType dt) {
  if (!(len < 9.2e18)) fail(AG_ERR_OUT_OF_MEMORY, "the result would have ", len, " elements");
  const int64_t n = static_cast<int64_t>(len);
  return checked_shape(&n, 1, itemsize(dt));
}

}  // namespace

// arange: start, start + step, ... while below end (above, for step < 0):
// ceil((end - start) / step) elements, as PyTorch.
Tensor arange(Context* ctx, DType dt, double start, double end, double step) {
  if (dt == DType::Bool) fail(AG_ERR_DTYPE, "dtype must be f32, f64 or i64, got bool");
  check_finite(start, "start");
  check_finite(end, "end");
  check_finite(step, "step");
  if (step == 0.0) fail(AG_ERR_INVALID_ARGUMENT, "step must be nonzero");
  if ((step > 0 && end < start) || (step < 0 && end > start)) {
    fail(AG_ERR_INVALID_ARGUMENT, "end ", end, (step > 0 ? " is below" : " is above"), " start ",
         start, " but step ", step, (step > 0 ? " is positive" : " is negative"));
  }
  if (dt == DType::I64) {
    if (start != std::trunc(start)) fail(AG_ERR_INVALID_ARGUMENT, "start ", start, " is not an integer (dtype i64)");
    if (step != std::trunc(step)) fail(AG_ERR_INVALID_ARGUMENT, "step ", step, " is not an integer (dtype i64)");
    // The values lie between start and end, so these bounds keep int64 arithmetic exact.
    for (double v : {start, end}) {
      if (std::fabs(v) > 9.2e18) fail(AG_ERR_INVALID_ARGUMENT, "start and end must lie within +-9.2e18 for i64, got ", v);
    }
    // The kernel casts step to int64.
    if (std::fabs(step) > 9.2e18) fail(AG_ERR_INVALID_ARGUMENT, "step must lie within +-9.2e18 for i64, got ", step);
  }
  const Dims shape = length_shape(std::ceil((end - start) / step), dt);
  Tensor y = empty(ctx, dt, shape);
  const size_t item = itemsize(dt);
  for_chunks(ctx, shape[0], [&](int64_t off, int64_t len) {
    kernels::arange(dt, y->data() + off * item, off, len, start, step);
  });
  return y;
}

// linspace: `steps` points from start to end inclusive, computed
// symmetrically (as PyTorch) so that end is exact; steps = 1 gives (start).
Tensor linspace(Context* ctx, DType dt, double start, double end, int64_t steps) {
  if (!is_floating(dt)) fail(AG_ERR_DTYPE, "dtype must be f32 or f64, got ", dtype_name(dt));
  if (steps < 0) fail(AG_ERR_INVALID_ARGUMENT, "steps ", steps, " is negative");
  const Dims shape = checked_shape(&steps, 1, itemsize(dt));
  if (steps == 1) return full(ctx, dt, shape, start);
  Tensor y = empty(ctx, dt, shape);
  const size_t item = itemsize(dt);
  for_chunks(ctx, steps, [&](int64_t off, int64_t len) {
    kernels::linspace(dt, y->data() + off * item, off, len, start, end, steps);
  });
  return y;
}

// eye: (n, m) with ones on the main diagonal; m = -1 means m = n.
Tensor eye(Context* ctx, DType dt, int64_t n, int64_t m) {
  if (n < 0) fail(AG_ERR_INVALID_ARGUMENT, "n ", n, " is negative");
  if (m < -1) fail(AG_ERR_INVALID_ARGUMENT, "m ", m, " is negative (-1 means m = n)");
  if (m == -1) m = n;
  const int64_t dims[2] = {n, m};
  Tensor y = full_for_writes(ctx, dt, checked_shape(dims, 2, itemsize(dt)), 0.0);
  visit_dtype(dt, [&](auto z) {
    using T = decltype(z);
    T* o = y->data_as<T>();
    for (int64_t i = 0; i < std::min(n, m); ++i) o[i * m + i] = T(1);
  });
  return y;
}

}  // namespace ag::ops
