// Shared helpers of the kernel tests that run on every compiled Highway
// target (test_kernels_*targets.cc, test_*_kernel.cc, test_gemm.cc): target
// forcing, guard-page buffers, ulp distances, edge inputs.
#pragma once

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "hwy/targets.h"
#include "kernels/kernels.h"
#include "kernels/targets.h"

namespace ag::kernels::testing {

// ---------------------------------------------------------------- targets

// Targets the kernels were compiled for and the CPU supports, best first.
inline std::vector<int64_t> targets_to_cover() {
  hwy::SetSupportedTargetsForTest(0);
  std::vector<int64_t> out;
  for (int64_t bits = compiled_targets() & hwy::SupportedTargets(); bits != 0; bits &= bits - 1) {
    out.push_back(bits & -bits);
  }
  return out;
}

inline std::string target_list(int64_t bits) {
  std::string s;
  for (; bits != 0; bits &= bits - 1) {
    if (!s.empty()) s += ' ';
    s += hwy::TargetName(bits & -bits);
  }
  return s;
}

// Forces one target for the kernels' dynamic dispatch; restores the real CPU
// detection afterwards (the mock is process-global state of the dispatch
// runtime: kernels/cpu_targets.cc or libhwy, src/meson.build says which).
class ForceTarget {
 public:
  explicit ForceTarget(int64_t target) { hwy::SetSupportedTargetsForTest(target); }
  ~ForceTarget() { hwy::SetSupportedTargetsForTest(0); }
  ForceTarget(const ForceTarget&) = delete;
  ForceTarget& operator=(const ForceTarget&) = delete;
};

// Base of the fixtures parameterized by target: the test body runs with
// GetParam() forced; derived fixtures check that their kernels reached it.
class OnTargetTest : public ::testing::TestWithParam<int64_t> {
 protected:
  void SetUp() override { hwy::SetSupportedTargetsForTest(GetParam()); }
  void TearDown() override { hwy::SetSupportedTargetsForTest(0); }
  const char* target() const { return hwy::TargetName(GetParam()); }
};

// Test names per target: INSTANTIATE_TEST_SUITE_P(Kernels, F, ValuesIn(targets_to_cover()), target_name).
inline std::string target_name(const ::testing::TestParamInfo<int64_t>& info) { return hwy::TargetName(info.param); }

// ---------------------------------------------------------------- helpers

// n elements that end exactly at an inaccessible page.
template <class T>
class Guarded {
 public:
  explicit Guarded(size_t n) : n_(n) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t bytes = n * sizeof(T);
    span_ = (bytes + page - 1) / page * page + page;
    void* p = mmap(nullptr, span_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) std::abort();
    base_ = static_cast<char*>(p);
    if (mprotect(base_ + span_ - page, page, PROT_NONE) != 0) std::abort();
    data_ = reinterpret_cast<T*>(base_ + span_ - page - bytes);
  }
  Guarded(size_t n, const std::vector<T>& v) : Guarded(n) {
    for (size_t i = 0; i < n; ++i) data_[i] = v[i % v.size()];
  }
  ~Guarded() { munmap(base_, span_); }
  Guarded(const Guarded&) = delete;
  Guarded& operator=(const Guarded&) = delete;
  T* data() { return data_; }
  const char* bytes() const { return reinterpret_cast<const char*>(data_); }
  char* bytes() { return reinterpret_cast<char*>(data_); }
  T& operator[](size_t i) { return data_[i]; }
  size_t size() const { return n_; }

 private:
  size_t n_;
  size_t span_ = 0;
  char* base_ = nullptr;
  T* data_ = nullptr;
};

template <class T>
constexpr DType dtype_of() {
  return std::is_same_v<T, float> ? DType::F32 : DType::F64;
}

// Reference precision: double for f32, long double for f64.
template <class T>
using Ref = std::conditional_t<std::is_same_v<T, float>, double, long double>;

// Position of v on the line of representable values (-0 and +0 coincide).
template <class T>
long double ordinal(T v) {
  using I = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  I i;
  std::memcpy(&i, &v, sizeof(i));
  if (i < 0) return static_cast<long double>(std::numeric_limits<I>::min()) - i;
  return static_cast<long double>(i);
}

// Distance in ulp; NaN matches only NaN.
template <class T>
double ulp_diff(T got, T want) {
  if (std::isnan(got) || std::isnan(want)) {
    return std::isnan(got) && std::isnan(want) ? 0.0 : std::numeric_limits<double>::infinity();
  }
  if (got == want) return 0.0;
  return static_cast<double>(std::fabs(ordinal(got) - ordinal(want)));
}

template <class T>
bool same_bits(T a, T b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

template <class T>
bool is_signaling_nan(T v) {
  using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  U u;
  std::memcpy(&u, &v, sizeof(u));
  const U quiet_bit = U(1) << (std::numeric_limits<T>::digits - 2);
  return std::isnan(v) && (u & quiet_bit) == 0;
}

inline Dims dims1(size_t n) { return Dims{static_cast<int64_t>(n)}; }

template <class T>
std::vector<T> run_unary(UnaryKind k, const std::vector<T>& x, T p = T(0), T p2 = T(0)) {
  Guarded<T> in(x.size(), x.empty() ? std::vector<T>{T(0)} : x), out(x.size());
  const Dims shape = dims1(x.size()), strides = {1};
  unary(k, dtype_of<T>(), shape, View{in.bytes(), &strides}, out.bytes(), static_cast<double>(p), static_cast<double>(p2));
  return std::vector<T>(out.data(), out.data() + x.size());
}

template <class T>
T bits_to(std::mt19937_64& rng) {
  using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  const U u = static_cast<U>(rng());
  T v;
  std::memcpy(&v, &u, sizeof(v));
  return v;
}

// IEEE edge inputs common to all unary tests.
template <class T>
std::vector<T> edge_values() {
  using L = std::numeric_limits<T>;
  return {T(0), -T(0), T(1), T(-1), L::infinity(), -L::infinity(), L::quiet_NaN(),
          -L::quiet_NaN(), L::min(), -L::min(), L::denorm_min(), -L::denorm_min(), L::max(),
          L::lowest(), T(0.5), T(2), T(-2), L::epsilon(), T(1) - L::epsilon() / 2};
}

}  // namespace ag::kernels::testing
