// The anomaly-mode finiteness scan (first_nonfinite) on every Highway target
// it was compiled for that this CPU supports, against a scalar reference:
// every size up to a few vectors and the position of the bad element in the
// body, the tail and the last lane (rows end at a PROT_NONE page, so a tail
// read past the end faults), NaN, infinities, and values that are finite
// but extreme (max, denormals, -0).
#include <cmath>
#include <limits>
#include <string>

#include "kernel_test_support.h"
#include "kernels/finite.h"

namespace ag::kernels {
namespace {

using namespace ag::kernels::testing;

template <class T>
int64_t first_nonfinite_ref(const T* x, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(x[i])) return static_cast<int64_t>(i);
  }
  return static_cast<int64_t>(n);
}

template <class T>
void check_target(const std::string& target) {
  using L = std::numeric_limits<T>;
  constexpr DType dt = dtype_of<T>();
  const T finite[] = {T(1), T(-0.0), L::max(), L::lowest(), L::denorm_min(), L::min(), T(-3.5)};
  const T bad[] = {L::quiet_NaN(), -L::quiet_NaN(), L::infinity(), -L::infinity()};
  for (size_t n = 0; n <= 70; ++n) {
    Guarded<T> x(n);
    for (size_t i = 0; i < n; ++i) x.data()[i] = finite[i % (sizeof(finite) / sizeof(finite[0]))];
    const char* p = reinterpret_cast<const char*>(x.data());
    ASSERT_EQ(first_nonfinite(dt, p, static_cast<int64_t>(n)), static_cast<int64_t>(n)) << target << " n=" << n;
    for (size_t pos = 0; pos < n; ++pos) {
      for (const T b : bad) {
        const T keep = x.data()[pos];
        x.data()[pos] = b;
        // A second bad element later must not hide the first.
        if (pos + 3 < n) x.data()[pos + 3] = L::infinity();
        ASSERT_EQ(first_nonfinite(dt, p, static_cast<int64_t>(n)), first_nonfinite_ref(x.data(), n))
            << target << " n=" << n << " pos=" << pos << " value=" << b;
        x.data()[pos] = keep;
        if (pos + 3 < n) x.data()[pos + 3] = finite[(pos + 3) % (sizeof(finite) / sizeof(finite[0]))];
      }
    }
  }
}

class FiniteOnTarget : public OnTargetTest {
 protected:
  void SetUp() override {
    OnTargetTest::SetUp();
    ASSERT_EQ(finite_target(), GetParam()) << "dispatch did not reach the target";
  }
};

TEST_P(FiniteOnTarget, F32MatchesScalar) { check_target<float>(hwy::TargetName(GetParam())); }
TEST_P(FiniteOnTarget, F64MatchesScalar) { check_target<double>(hwy::TargetName(GetParam())); }

INSTANTIATE_TEST_SUITE_P(Kernels, FiniteOnTarget, ::testing::ValuesIn(targets_to_cover()), target_name);

}  // namespace
}  // namespace ag::kernels
