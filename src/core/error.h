// Internal error type. Code below the C API throws ag::Error; the API layer
// (src/api/guard.h) turns it into a status and "[function] message".
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "ag/common.h"

namespace ag {

class Error {
 public:
  Error(ag_status code, std::string message) : code_(code), message_(std::move(message)) {}
  ag_status code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  ag_status code_;
  std::string message_;
};

// Concatenates the arguments into a message (strings, C strings, integers,
// doubles). A double prints in the shortest form that reads back exactly
// ("0.5", "1e-30", "nan"), not std::to_string's six fixed decimals.
namespace detail {
void append(std::string& s, double v);
inline void append(std::string& s, float v) { append(s, static_cast<double>(v)); }
inline void append(std::string& s, const std::string& v) { s += v; }
inline void append(std::string& s, const char* v) { s += v; }
inline void append(std::string& s, char v) { s += v; }
template <class T>
inline void append(std::string& s, T v) { s += std::to_string(v); }
}  // namespace detail

template <class... Args>
std::string str(const Args&... args) {
  std::string s;
  (detail::append(s, args), ...);
  return s;
}

template <class... Args>
[[noreturn]] void fail(ag_status code, const Args&... args) {
  throw Error(code, str(args...));
}

}  // namespace ag
