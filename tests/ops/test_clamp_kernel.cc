// The clamp kernel (clamp_) on every Highway target it was compiled for that
// this CPU supports, against a scalar reference: odd sizes and tails (rows
// end at a PROT_NONE page, so a tail access past the end faults), in place
// and out of place, NaN, infinities, signed zeros, bounds that cross.
#include <cmath>
#include <limits>
#include <vector>

#include "kernel_test_support.h"
#include "kernels/clamp.h"

namespace ag::kernels {
namespace {

using namespace ag::kernels::testing;

template <class T>
T clamp_ref(T x, T lo, T hi) {
  if (std::isnan(x)) return x;
  const T a = x < lo ? lo : x;
  return a > hi ? hi : a;
}

template <class T>
void check_target(const char* target) {
  constexpr DType dt = dtype_of<T>();
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
        ASSERT_TRUE(same_bits(out.data()[i], want))
            << target << " n=" << n << " i=" << i << " x=" << orig[i] << " got " << out.data()[i] << " want " << want;
        ASSERT_TRUE(same_bits(mask.data()[i], want_mask)) << target << " mask n=" << n << " i=" << i;
      }
      // In place, no mask.
      clamp(dt, reinterpret_cast<const char*>(x.data()), reinterpret_cast<char*>(x.data()), nullptr,
            static_cast<int64_t>(n), b[0], b[1]);
      for (size_t i = 0; i < n; ++i)
        ASSERT_TRUE(same_bits(x.data()[i], out.data()[i])) << target << " in place i=" << i;
    }
  }
}

class ClampOnTarget : public OnTargetTest {
 protected:
  void SetUp() override {
    OnTargetTest::SetUp();
    ASSERT_EQ(clamp_target(), GetParam()) << "dispatch did not reach the target";
  }
};

TEST_P(ClampOnTarget, F32MatchesScalar) { check_target<float>(hwy::TargetName(GetParam())); }
TEST_P(ClampOnTarget, F64MatchesScalar) { check_target<double>(hwy::TargetName(GetParam())); }

INSTANTIATE_TEST_SUITE_P(Kernels, ClampOnTarget, ::testing::ValuesIn(targets_to_cover()), target_name);

}  // namespace
}  // namespace ag::kernels
