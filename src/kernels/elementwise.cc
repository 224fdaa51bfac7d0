// Elementwise kernels, scalar loops over strided rows. The SIMD versions
// replace the inner loops; the interfaces stay.
#include <cmath>

#include "kernels/kernels.h"
#include "kernels/loops.h"

namespace ag::kernels {

namespace {

template <class T>
T apply_unary(UnaryKind k, T x, T p) {
  switch (k) {
    case UnaryKind::Neg: return -x;
    case UnaryKind::Exp: return std::exp(x);
    case UnaryKind::Log: return std::log(x);
    case UnaryKind::Tanh: return std::tanh(x);
    case UnaryKind::PowScalar: return std::pow(x, p);
  }
  return x;
}

template <class T>
T apply_binary(BinaryKind k, T a, T b) {
  switch (k) {
    case BinaryKind::Add: return a + b;
    case BinaryKind::Sub: return a - b;
    case BinaryKind::Mul: return a * b;
    case BinaryKind::Div: return a / b;
  }
  return a;
}

template <class T, class F>
void unary_rows(const Dims& shape, View x, char* out, F f) {
  const Dims out_strides = contiguous_strides(shape);
  const Dims* strides[2] = {&out_strides, x.strides};
  const auto plan = plan_loop<2>(shape, strides);
  T* o = reinterpret_cast<T*>(out);
  const T* xp = reinterpret_cast<const T*>(x.data);
  for_each_row<2>(plan, [&](const int64_t* off, int64_t n, const int64_t* s) {
    T* orow = o + off[0];
    const T* xrow = xp + off[1];
    const int64_t sx = s[1];
    if (sx == 1) {
      for (int64_t i = 0; i < n; ++i) orow[i] = f(xrow[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) orow[i] = f(xrow[i * sx]);
    }
  });
}

template <class T, class F>
void binary_rows(const Dims& shape, View a, View b, char* out, F f) {
  const Dims out_strides = contiguous_strides(shape);
  const Dims* strides[3] = {&out_strides, a.strides, b.strides};
  const auto plan = plan_loop<3>(shape, strides);
  T* o = reinterpret_cast<T*>(out);
  const T* ap = reinterpret_cast<const T*>(a.data);
  const T* bp = reinterpret_cast<const T*>(b.data);
  for_each_row<3>(plan, [&](const int64_t* off, int64_t n, const int64_t* s) {
    T* orow = o + off[0];
    const T* arow = ap + off[1];
    const T* brow = bp + off[2];
    const int64_t sa = s[1], sb = s[2];
    if (sa == 1 && sb == 1) {
      for (int64_t i = 0; i < n; ++i) orow[i] = f(arow[i], brow[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) orow[i] = f(arow[i * sa], brow[i * sb]);
    }
  });
}

}  // namespace

void unary(UnaryKind k, DType dt, const Dims& shape, View x, char* out, double attr) {
  visit_floating(dt, [&](auto zero) {
    using T = decltype(zero);
    const T p = static_cast<T>(attr);
    switch (k) {
      case UnaryKind::Neg: return unary_rows<T>(shape, x, out, [](T v) { return -v; });
      case UnaryKind::Exp: return unary_rows<T>(shape, x, out, [](T v) { return std::exp(v); });
      case UnaryKind::Log: return unary_rows<T>(shape, x, out, [](T v) { return std::log(v); });
      case UnaryKind::Tanh: return unary_rows<T>(shape, x, out, [](T v) { return std::tanh(v); });
      case UnaryKind::PowScalar:
        return unary_rows<T>(shape, x, out, [p](T v) { return apply_unary(UnaryKind::PowScalar, v, p); });
    }
  });
}

void binary(BinaryKind k, DType dt, const Dims& shape, View a, View b, char* out) {
  visit_floating(dt, [&](auto zero) {
    using T = decltype(zero);
    switch (k) {
      case BinaryKind::Add: return binary_rows<T>(shape, a, b, out, [](T x, T y) { return x + y; });
      case BinaryKind::Sub: return binary_rows<T>(shape, a, b, out, [](T x, T y) { return x - y; });
      case BinaryKind::Mul: return binary_rows<T>(shape, a, b, out, [](T x, T y) { return x * y; });
      case BinaryKind::Div: return binary_rows<T>(shape, a, b, out, [](T x, T y) { return x / y; });
    }
    (void)apply_binary<T>;
  });
}

}  // namespace ag::kernels
