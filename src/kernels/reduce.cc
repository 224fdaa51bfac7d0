// Sum reductions. Accumulation is in double and in a fixed order, so results
// do not depend on how the work is split.
#include <memory>

#include "kernels/kernels.h"
#include "kernels/loops.h"

namespace ag::kernels {

void sum_to(DType dt, const Dims& shape, View x, const Dims& out_shape, char* out) {
  visit_floating(dt, [&](auto zero) {
    using T = decltype(zero);
    const int64_t n_out = numel_of(out_shape);
    // Accumulators: one double per output element (a single one on the stack
    // for a full reduction, the common case).
    double single = 0.0;
    std::unique_ptr<double[]> many;
    double* acc = &single;
    if (n_out > 1) {
      many.reset(new double[n_out]());
      acc = many.get();
    }
    Dims acc_strides = contiguous_strides(out_shape);
    for (int i = 0; i < out_shape.size(); ++i) {
      if (out_shape[i] == 1 && shape[i] != 1) acc_strides[i] = 0;
    }
    const Dims* strides[2] = {&acc_strides, x.strides};
    const auto plan = plan_loop<2>(shape, strides);
    const T* xp = reinterpret_cast<const T*>(x.data);
    for_each_row<2>(plan, [&](const int64_t* off, int64_t n, const int64_t* s) {
      double* arow = acc + off[0];
      const T* xrow = xp + off[1];
      const int64_t sa = s[0], sx = s[1];
      if (sa == 0) {
        double t = 0.0;
        for (int64_t i = 0; i < n; ++i) t += static_cast<double>(xrow[i * sx]);
        *arow += t;
      } else {
        for (int64_t i = 0; i < n; ++i) arow[i * sa] += static_cast<double>(xrow[i * sx]);
      }
    });
    T* o = reinterpret_cast<T*>(out);
    for (int64_t i = 0; i < n_out; ++i) o[i] = static_cast<T>(acc[i]);
  });
}

}  // namespace ag::kernels
