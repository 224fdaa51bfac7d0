// Ranges: arange and linspace. One multiply-add per element, bound by the
// store bandwidth, so plain loops (the compiler vectorizes them).
#include "kernels/creation.h"

namespace ag::kernels {

void arange(DType dt, char* out, int64_t first, int64_t n, double start, double step) {
  if (dt == DType::I64) {
    const int64_t s = static_cast<int64_t>(start), st = static_cast<int64_t>(step);
    int64_t* o = reinterpret_cast<int64_t*>(out);
    // In uint64: (first + i) * st may pass INT64_MAX (arange(-9e18, 9e18, 1e18))
    // although the value, between start and end, does not.
    for (int64_t i = 0; i < n; ++i) {
      const uint64_t k = static_cast<uint64_t>(first + i);
      o[i] = static_cast<int64_t>(static_cast<uint64_t>(s) + k * static_cast<uint64_t>(st));
    }
    return;
  }
  visit_floating(dt, [&](auto z) {
    using T = decltype(z);
    T* o = reinterpret_cast<T*>(out);
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(start + static_cast<double>(first + i) * step);
  });
}

void linspace(DType dt, char* out, int64_t first, int64_t n, double start, double end, int64_t steps) {
  visit_floating(dt, [&](auto z) {
    using T = decltype(z);
    const T s = static_cast<T>(start), e = static_cast<T>(end);
    const T step = (e - s) / static_cast<T>(steps - 1);
    const int64_t half = steps / 2;
    T* o = reinterpret_cast<T*>(out);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t k = first + i;
      o[i] = k < half ? s + step * static_cast<T>(k) : e - step * static_cast<T>(steps - k - 1);
    }
  });
}

}  // namespace ag::kernels
