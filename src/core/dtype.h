// Element types and the dispatch from a runtime dtype to a C++ type.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ag/common.h"
#include "core/error.h"

namespace ag {

enum class DType : int32_t { F32 = AG_F32, F64 = AG_F64, I64 = AG_I64, Bool = AG_BOOL };

inline bool dtype_valid(int32_t d) { return d >= AG_F32 && d <= AG_BOOL; }
inline bool is_floating(DType d) { return d == DType::F32 || d == DType::F64; }

inline size_t itemsize(DType d) {
  switch (d) {
    case DType::F32: return 4;
    case DType::F64: return 8;
    case DType::I64: return 8;
    case DType::Bool: return 1;
  }
  return 0;
}

inline const char* dtype_name(DType d) {
  switch (d) {
    case DType::F32: return "f32";
    case DType::F64: return "f64";
    case DType::I64: return "i64";
    case DType::Bool: return "bool";
  }
  return "invalid";
}

// Calls f(T{}) with the C++ type of d. Bool is stored as uint8_t (0 or 1).
template <class F>
decltype(auto) visit_dtype(DType d, F&& f) {
  switch (d) {
    case DType::F32: return f(float{});
    case DType::F64: return f(double{});
    case DType::I64: return f(int64_t{});
    case DType::Bool: return f(uint8_t{});
  }
  return f(float{});
}

// As visit_dtype for the floating dtypes only.
template <class F>
decltype(auto) visit_floating(DType d, F&& f) {
  if (d == DType::F64) return f(double{});
  return f(float{});
}

}  // namespace ag
