// Copies with dtype conversion, and fills.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/kernels.h"
#include "kernels/loops.h"

namespace ag::kernels {

namespace {

// Value conversion between dtypes. Floating -> i64 truncates toward zero and
// saturates, NaN giving 0 (a plain cast would be undefined there).
template <class To, class From>
To convert(From v) {
  if constexpr (std::is_same_v<To, uint8_t>) {
    return v != From(0) ? 1 : 0;
  } else if constexpr (std::is_same_v<To, int64_t> && std::is_floating_point_v<From>) {
    if (std::isnan(v)) return 0;
    if (v >= From(9.2233720368547758e18)) return INT64_MAX;
    if (v <= From(-9.2233720368547758e18)) return INT64_MIN;
    return static_cast<int64_t>(v);
  } else {
    return static_cast<To>(v);
  }
}

}  // namespace

void copy(DType src_dt, const Dims& shape, View src, DType dst_dt, char* dst, const Dims& dst_strides) {
  const Dims* strides[2] = {&dst_strides, src.strides};
  const auto plan = plan_loop<2>(shape, strides);
  visit_dtype(src_dt, [&](auto s0) {
    using S = decltype(s0);
    visit_dtype(dst_dt, [&](auto d0) {
      using D = decltype(d0);
      const S* sp = reinterpret_cast<const S*>(src.data);
      D* dp = reinterpret_cast<D*>(dst);
      for_each_row<2>(plan, [&](const int64_t* off, int64_t n, const int64_t* st) {
        D* drow = dp + off[0];
        const S* srow = sp + off[1];
        if constexpr (std::is_same_v<S, D> && !std::is_same_v<D, uint8_t>) {
          if (st[0] == 1 && st[1] == 1) {
            std::memcpy(drow, srow, static_cast<size_t>(n) * sizeof(D));
            return;
          }
        }
        for (int64_t i = 0; i < n; ++i) drow[i * st[0]] = convert<D>(srow[i * st[1]]);
      });
    });
  });
}

void fill(DType dt, char* out, int64_t n, double value) {
  visit_dtype(dt, [&](auto z) {
    using T = decltype(z);
    const T v = convert<T>(value);
    T* o = reinterpret_cast<T*>(out);
    for (int64_t i = 0; i < n; ++i) o[i] = v;
  });
}

}  // namespace ag::kernels
