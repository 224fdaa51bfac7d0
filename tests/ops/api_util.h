// Small helpers for forward tests through the C API: tensors from vectors,
// values back as doubles, and the error-message check.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ag/ag.h"

namespace apitest {

using Shape = std::vector<int64_t>;

#define ASSERT_AG(call) ASSERT_EQ((call), AG_OK) << ag_last_error_message()

class Ctx {
 public:
  explicit Ctx(int32_t threads = 1) {
    ag_context_options o = AG_CONTEXT_OPTIONS_INIT;
    o.num_threads = threads;
    ag_context_create(&ctx_, &o);
  }
  ~Ctx() { ag_context_release(ctx_); }
  Ctx(const Ctx&) = delete;
  Ctx& operator=(const Ctx&) = delete;
  ag_context* get() const { return ctx_; }

 private:
  ag_context* ctx_ = nullptr;
};

// Owns one tensor handle.
class T {
 public:
  T() = default;
  explicit T(ag_tensor* t) : t_(t) {}
  ~T() { ag_tensor_release(t_); }
  T(T&& o) noexcept : t_(o.t_) { o.t_ = nullptr; }
  T& operator=(T&& o) noexcept {
    std::swap(t_, o.t_);
    return *this;
  }
  ag_tensor* get() const { return t_; }
  ag_tensor** out() {
    ag_tensor_release(t_);
    t_ = nullptr;
    return &t_;
  }
  operator ag_tensor*() const { return t_; }

 private:
  ag_tensor* t_ = nullptr;
};

inline int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

inline T make(ag_context* ctx, ag_dtype dt, const Shape& shape, const std::vector<double>& v) {
  ag_tensor* t = nullptr;
  const int32_t nd = static_cast<int32_t>(shape.size());
  if (dt == AG_F64) {
    ag_tensor_create(&t, ctx, dt, shape.data(), nd, v.data());
  } else if (dt == AG_F32) {
    std::vector<float> f(v.begin(), v.end());
    ag_tensor_create(&t, ctx, dt, shape.data(), nd, f.data());
  } else {
    std::vector<int64_t> i(v.begin(), v.end());
    ag_tensor_create(&t, ctx, AG_I64, shape.data(), nd, i.data());
  }
  return T(t);
}

inline std::vector<double> read(const ag_tensor* t) {
  const size_t n = static_cast<size_t>(ag_tensor_numel(t));
  std::vector<double> out(n);
  if (ag_tensor_dtype(t) == AG_F64) {
    ag_tensor_copy_data(t, out.data(), n * sizeof(double));
  } else if (ag_tensor_dtype(t) == AG_F32) {
    std::vector<float> f(n);
    ag_tensor_copy_data(t, f.data(), n * sizeof(float));
    out.assign(f.begin(), f.end());
  } else {
    std::vector<int64_t> i(n);
    ag_tensor_copy_data(t, i.data(), n * sizeof(int64_t));
    out.assign(i.begin(), i.end());
  }
  return out;
}

inline Shape shape_of(const ag_tensor* t) {
  Shape s(static_cast<size_t>(ag_tensor_ndim(t)));
  ag_tensor_shape(t, s.data(), static_cast<int32_t>(s.size()));
  return s;
}

// Deterministic values in (lo, hi) from a simple LCG (no ag involved).
inline std::vector<double> sample(int64_t n, double lo, double hi, uint64_t seed) {
  std::vector<double> v(static_cast<size_t>(n));
  for (double& e : v) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    e = lo + (hi - lo) * static_cast<double>(seed >> 11) / 9007199254740992.0;
  }
  return v;
}

// The call failed with `status` and the message is exactly `message`.
#define EXPECT_AG_ERROR(call, status, message)                 \
  do {                                                         \
    EXPECT_EQ((call), (status));                               \
    EXPECT_EQ(std::string(ag_last_error_message()), (message)); \
  } while (0)

}  // namespace apitest
