// Dims: a fixed-capacity list of sizes or strides (no heap), and the shape
// arithmetic ops need: numel with overflow checks, contiguous strides,
// NumPy broadcasting.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include "ag/common.h"

namespace ag {

constexpr int kMaxDims = AG_MAX_DIMS;

class Dims {
 public:
  // Leaves the unused entries alone: no zero fill of all kMaxDims entries,
  // even where a Dims is value-initialized (Dims(), containers).
  Dims() {}
  Dims(const int64_t* v, int n) { assign(v, n); }
  Dims(std::initializer_list<int64_t> v) : n_(static_cast<int>(v.size())) {
    int i = 0;
    for (int64_t x : v) v_[i++] = x;
  }
  // Copies and compares touch only the n_ used entries (a 0-dim shape: none).
  Dims(const Dims& o) { assign(o.v_, o.n_); }
  Dims& operator=(const Dims& o) {
    assign(o.v_, o.n_);
    return *this;
  }

  int size() const { return n_; }
  const int64_t* data() const { return v_; }
  int64_t* data() { return v_; }
  int64_t operator[](int i) const { return v_[i]; }
  int64_t& operator[](int i) { return v_[i]; }
  void resize(int n) { n_ = n; }
  void push_back(int64_t x) { v_[n_++] = x; }
  const int64_t* begin() const { return v_; }
  const int64_t* end() const { return v_ + n_; }

  bool operator==(const Dims& o) const {
    if (n_ != o.n_) return false;
    for (int i = 0; i < n_; ++i) {
      if (v_[i] != o.v_[i]) return false;
    }
    return true;
  }
  bool operator!=(const Dims& o) const { return !(*this == o); }

 private:
  // Up to 4 entries (most shapes) one by one: a memcpy of variable size is
  // a library call, as costly as the rest of a small op's shape logic.
  void assign(const int64_t* v, int n) {
    n_ = n;
    if (n <= 0) return;
    v_[0] = v[0];
    if (n > 4) {
      std::memcpy(v_ + 1, v + 1, sizeof(int64_t) * static_cast<size_t>(n - 1));
      return;
    }
    for (int i = 1; i < 4; ++i) {
      if (i == n) return;
      v_[i] = v[i];
    }
  }

  int n_ = 0;
  int64_t v_[kMaxDims];
};

// Product of the sizes, validated by checked_shape: no overflow unless a size
// is 0, which is tested first.
inline int64_t numel_of(const Dims& shape) {
  for (int64_t d : shape) {
    if (d == 0) return 0;
  }
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// Checks a user-given shape (ndim range, NULL, negative sizes, overflow of
// numel * itemsize) and returns it. Throws ag::Error.
Dims checked_shape(const int64_t* shape, int32_t ndim, size_t itemsize);

Dims contiguous_strides(const Dims& shape);

// "(2,3)", "(4)", "()".
std::string shape_str(const Dims& shape);

// NumPy broadcast of two shapes; throws AG_ERR_SHAPE naming both.
Dims broadcast_shapes(const Dims& a, const Dims& b);

// Strides that read a tensor of (shape, strides) as if it had shape `to`
// (which `shape` broadcasts to): stride 0 for repeated dims.
Dims broadcast_strides(const Dims& shape, const Dims& strides, const Dims& to);

// True if `from` broadcasts to `to`.
bool broadcastable_to(const Dims& from, const Dims& to);

}  // namespace ag
