// Copies with dtype conversion, and fills.
#include <cmath>

#include "kernels/kernels.h"
#include "kernels/loops.h"

namespace ag::kernels {

namespace {

template <class To, class From>
To convert(From v) {
  if constexpr (std::is_same_v<To, uint8_t>) {
    return v != From(0) ? 1 : 0;
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
