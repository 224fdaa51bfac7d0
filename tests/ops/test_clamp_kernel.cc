// The clamp kernel (clamp_) on every Highway target it was compiled for that
// this CPU supports, against a scalar reference: odd sizes and tails (rows
// end at a PROT_NONE page, so a tail access past the end faults), in place
// and out of place, NaN, infinities, signed zeros, bounds that cross.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "hwy/targets.h"
#include "kernels/clamp.h"
#include "kernels/targets.h"

namespace ag::kernels {
namespace {

std::vector<int64_t> targets_to_cover() {
  hwy::SetSupportedTargetsForTest(0);
  std::vector<int64_t> out;
  for (int64_t bits = compiled_targets() & hwy::SupportedTargets(); bits != 0; bits &= bits - 1) {
    out.push_back(bits & -bits);
  }
  return out;
}

// n elements ending exactly at an inaccessible page.
template <class T>
class Guarded {
 public:
  explicit Guarded(size_t n) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t bytes = n * sizeof(T);
    span_ = (bytes + page - 1) / page * page + page;
    void* p = mmap(nullptr, span_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) std::abort();
    base_ = static_cast<char*>(p);
    if (mprotect(base_ + span_ - page, page, PROT_NONE) != 0) std::abort();
    data_ = reinterpret_cast<T*>(base_ + span_ - page - bytes);
  }
  ~Guarded() { munmap(base_, span_); }
  Guarded(const Guarded&) = delete;
  Guarded& operator=(const Guarded&) = delete;
  T* data() { return data_; }

 private:
  size_t span_ = 0;
  char* base_ = nullptr;
  T* data_ = nullptr;
};

template <class T>
T clamp_ref(T x, T lo, T hi) {
  if (std::isnan(x)) return x;
  const T a = x < lo ? lo : x;
  return a > hi ? hi : a;
}

template <class T>
bool same(T a, T b) {
  return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof(T)) == 0;
}

template <class T>
void check_target(const char* target) {
  constexpr DType dt = std::is_same_v<T, float> ? DType::F32 : DType::F64;
  const T inf = std::numeric_limits<T>::infinity();
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const std::vector<T> edges = {nan, inf, -inf, T(0), -T(0), T(-1), T(1), T(0.5), T(-0.5), T(2), T(-3), T(1e-30)};
  const T bounds[][2] = {{T(-1), T(1)}, {-inf, T(0.5)}, {T(-0.5), inf}, {T(2), T(1)}, {T(0), T(0)}, {-inf, inf}};
  for (size_t n : {size_t(0), size_t(1), size_t(3), size_t(7), size_t(15), size_t(16), size_t(17), size_t(31),
                   size_t(33), size_t(63), size_t(65), size_t(1000), size_t(1023)}) {
    for (const auto& b : bounds) {
      Guarded<T> x(n), out(n), mask(n);
      std::vector<T> orig(n);
      for (size_t i = 0; i < n; ++i) {
        orig[i] = i < edges.size() ? edges[i] : static_cast<T>(std::sin(0.37 * static_cast<double>(i)) * 3);
        x.data()[i] = orig[i];
      }
      clamp(dt, reinterpret_cast<const char*>(x.data()), reinterpret_cast<char*>(out.data()),
            reinterpret_cast<char*>(mask.data()), static_cast<int64_t>(n), b[0], b[1]);
      for (size_t i = 0; i < n; ++i) {
        const T want = clamp_ref(orig[i], b[0], b[1]);
        const T want_mask = (orig[i] >= b[0] && orig[i] <= b[1]) ? T(1) : T(0);
        ASSERT_TRUE(same(out.data()[i], want))
            << target << " n=" << n << " i=" << i << " x=" << orig[i] << " got " << out.data()[i] << " want " << want;
        ASSERT_TRUE(same(mask.data()[i], want_mask)) << target << " mask n=" << n << " i=" << i;
      }
      // In place, no mask.
      clamp(dt, reinterpret_cast<const char*>(x.data()), reinterpret_cast<char*>(x.data()), nullptr,
            static_cast<int64_t>(n), b[0], b[1]);
      for (size_t i = 0; i < n; ++i) ASSERT_TRUE(same(x.data()[i], out.data()[i])) << target << " in place i=" << i;
    }
  }
}

class ClampOnTarget : public ::testing::TestWithParam<int64_t> {
 protected:
  void SetUp() override {
    hwy::SetSupportedTargetsForTest(GetParam());
    ASSERT_EQ(clamp_target(), GetParam()) << "dispatch did not reach the target";
  }
  void TearDown() override { hwy::SetSupportedTargetsForTest(0); }
};

TEST_P(ClampOnTarget, F32MatchesScalar) { check_target<float>(hwy::TargetName(GetParam())); }
TEST_P(ClampOnTarget, F64MatchesScalar) { check_target<double>(hwy::TargetName(GetParam())); }

INSTANTIATE_TEST_SUITE_P(Kernels, ClampOnTarget, ::testing::ValuesIn(targets_to_cover()),
                         [](const ::testing::TestParamInfo<int64_t>& info) {
                           return std::string(hwy::TargetName(info.param));
                         });

}  // namespace
}  // namespace ag::kernels
