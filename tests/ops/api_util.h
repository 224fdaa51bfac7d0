// Small helpers for forward tests through the C API: contexts, tensors from
// vectors, values back as doubles, owned handles, and the error-message checks.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "ag/ag.h"

namespace apitest {

using Shape = std::vector<int64_t>;

#define ASSERT_AG(call) ASSERT_EQ((call), AG_OK) << ag_last_error_message()

// threads: 0 = one per hardware thread, 1 = no worker threads.
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

// A new tensor the caller releases; f64, f32, i64 or bool (nonzero = true).
inline ag_tensor* new_tensor(ag_context* ctx, ag_dtype dt, const Shape& shape, const std::vector<double>& v) {
  ag_tensor* t = nullptr;
  const int32_t nd = static_cast<int32_t>(shape.size());
  if (dt == AG_F64) {
    ag_tensor_create(&t, ctx, dt, shape.data(), nd, v.data());
  } else if (dt == AG_F32) {
    std::vector<float> f(v.begin(), v.end());
    ag_tensor_create(&t, ctx, dt, shape.data(), nd, f.data());
  } else if (dt == AG_I64) {
    std::vector<int64_t> i(v.begin(), v.end());
    ag_tensor_create(&t, ctx, dt, shape.data(), nd, i.data());
  } else {
    std::vector<uint8_t> b(v.size());
    for (size_t k = 0; k < v.size(); ++k) b[k] = v[k] != 0;
    ag_tensor_create(&t, ctx, dt, shape.data(), nd, b.data());
  }
  return t;
}

inline T make(ag_context* ctx, ag_dtype dt, const Shape& shape, const std::vector<double>& v) {
  return T(new_tensor(ctx, dt, shape, v));
}

// The values as doubles, whatever the dtype.
inline std::vector<double> read(const ag_tensor* t) {
  const size_t n = static_cast<size_t>(ag_tensor_numel(t));
  std::vector<double> out(n);
  switch (ag_tensor_dtype(t)) {
    case AG_F64: ag_tensor_copy_data(t, out.data(), n * sizeof(double)); break;
    case AG_F32: {
      std::vector<float> f(n);
      ag_tensor_copy_data(t, f.data(), n * sizeof(float));
      out.assign(f.begin(), f.end());
      break;
    }
    case AG_I64: {
      std::vector<int64_t> i(n);
      ag_tensor_copy_data(t, i.data(), n * sizeof(int64_t));
      out.assign(i.begin(), i.end());
      break;
    }
    default: {
      std::vector<uint8_t> b(n);
      ag_tensor_copy_data(t, b.data(), n);
      out.assign(b.begin(), b.end());
    }
  }
  return out;
}

inline Shape shape_of(const ag_tensor* t) {
  Shape s(static_cast<size_t>(ag_tensor_ndim(t)));
  EXPECT_EQ(ag_tensor_shape(t, s.data(), static_cast<int32_t>(s.size())), AG_OK);
  return s;
}

// The elements in their own type E (no conversion).
template <class E>
std::vector<E> data_of(const ag_tensor* t) {
  std::vector<E> v(static_cast<size_t>(ag_tensor_numel(t)));
  EXPECT_EQ(ag_tensor_copy_data(t, v.data(), v.size() * sizeof(E)), AG_OK) << ag_last_error_message();
  return v;
}

// A host copy of a tensor: shape and values in double.
struct Host {
  Shape shape;
  std::vector<double> v;
  double at(int64_t i) const { return v[static_cast<size_t>(i)]; }
};

inline Host random_host(const Shape& s, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Host h{s, std::vector<double>(static_cast<size_t>(numel(s)))};
  for (double& x : h.v) x = u(rng);
  return h;
}

inline ag_tensor* new_tensor(ag_context* ctx, ag_dtype dt, const Host& h) { return new_tensor(ctx, dt, h.shape, h.v); }

inline Host host_of(const ag_tensor* t) { return Host{shape_of(t), read(t)}; }

// got matches want element by element within tol relative to max(1, |want|).
inline void expect_close(const std::vector<double>& got, const std::vector<double>& want, double tol,
                         const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], tol * std::max(1.0, std::fabs(want[i]))) << what << " element " << i;
  }
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

// The call failed with `status` and the message contains `text`.
#define EXPECT_AG_ERROR_CONTAINS(call, status, text)                                      \
  do {                                                                                    \
    EXPECT_EQ((call), (status)) << ag_last_error_message();                               \
    EXPECT_NE(std::string(ag_last_error_message()).find(text), std::string::npos)         \
        << "message: " << ag_last_error_message() << "\nexpected to contain: " << (text); \
  } while (0)

// A failed call left its out-parameter untouched (`out` still holds
// `sentinel`) and set exactly `message`.
inline void expect_error_untouched(ag_status got, const ag_tensor* out, const ag_tensor* sentinel, ag_status want,
                                   const std::string& message) {
  EXPECT_EQ(got, want) << message;
  EXPECT_EQ(out, sentinel) << "out-parameter written on failure: " << message;
  EXPECT_EQ(std::string(ag_last_error_message()), message);
}

// Base fixture: a context and the tensors made by the test, all released
// after it.
class ApiTest : public ::testing::Test {
 protected:
  void SetUp() override { ctx_ = make_ctx(0); }
  void TearDown() override {
    for (ag_tensor* t : owned_) ag_tensor_release(t);
    for (ag_context* c : ctxs_) ag_context_release(c);
  }
  ag_context* make_ctx(int32_t threads) {
    ag_context_options o = AG_CONTEXT_OPTIONS_INIT;
    o.num_threads = threads;
    ag_context* c = nullptr;
    EXPECT_EQ(ag_context_create(&c, &o), AG_OK);
    ctxs_.push_back(c);
    return c;
  }
  ag_tensor* own(ag_tensor* t) {
    owned_.push_back(t);
    return t;
  }
  // An owned tensor of dtype dt from elements of the matching C type, in
  // context c (the fixture's by default).
  template <class E>
  ag_tensor* create(ag_dtype dt, const Shape& s, const std::vector<E>& v, ag_context* c = nullptr) {
    ag_tensor* t = nullptr;
    EXPECT_EQ(ag_tensor_create(&t, c ? c : ctx_, dt, s.data(), static_cast<int32_t>(s.size()), v.data()), AG_OK)
        << ag_last_error_message();
    return own(t);
  }
  ag_tensor* f64(const Shape& s, const std::vector<double>& v, ag_context* c = nullptr) {
    return create(AG_F64, s, v, c);
  }
  ag_tensor* i64(const Shape& s, const std::vector<int64_t>& v, ag_context* c = nullptr) {
    return create(AG_I64, s, v, c);
  }
  ag_tensor* mask(const Shape& s, const std::vector<uint8_t>& v, ag_context* c = nullptr) {
    return create(AG_BOOL, s, v, c);
  }
  // f64 tensor holding 0, 1, 2, ... in row-major order.
  ag_tensor* iota(const Shape& s) {
    std::vector<double> v(static_cast<size_t>(numel(s)));
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);
    return f64(s, v);
  }
  static std::vector<double> values(const ag_tensor* t) { return data_of<double>(t); }
  static std::vector<int64_t> ivalues(const ag_tensor* t) { return data_of<int64_t>(t); }
  static Shape shape(const ag_tensor* t) { return shape_of(t); }

  ag_context* ctx_ = nullptr;
  std::vector<ag_context*> ctxs_;
  std::vector<ag_tensor*> owned_;
};

}  // namespace apitest
