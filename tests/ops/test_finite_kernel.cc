// The anomaly-mode finiteness scan (first_nonfinite) on every Highway target
// it was compiled for that this CPU supports, against a scalar reference:
// every size up to a few vectors and the position of the bad element in the
// body, the tail and the last lane (rows end at a PROT_NONE page, so a tail
// read past the end faults), NaN, infinities, and values that are finite
// but extreme (max, denormals, -0).
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "hwy/targets.h"
#include "kernels/finite.h"
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
int64_t first_nonfinite_ref(const T* x, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(x[i])) return static_cast<int64_t>(i);
  }
  return static_cast<int64_t>(n);
}

template <class T>
void check_target(const std::string& target) {
  using L = std::numeric_limits<T>;
  const DType dt = sizeof(T) == 8 ? DType::F64 : DType::F32;
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

class FiniteOnTarget : public ::testing::TestWithParam<int64_t> {
 protected:
  void SetUp() override {
    hwy::SetSupportedTargetsForTest(GetParam());
    ASSERT_EQ(finite_target(), GetParam()) << "dispatch did not reach the target";
  }
  void TearDown() override { hwy::SetSupportedTargetsForTest(0); }
};

TEST_P(FiniteOnTarget, F32MatchesScalar) { check_target<float>(hwy::TargetName(GetParam())); }
TEST_P(FiniteOnTarget, F64MatchesScalar) { check_target<double>(hwy::TargetName(GetParam())); }

INSTANTIATE_TEST_SUITE_P(Kernels, FiniteOnTarget, ::testing::ValuesIn(targets_to_cover()),
                         [](const ::testing::TestParamInfo<int64_t>& info) {
                           return std::string(hwy::TargetName(info.param));
                         });

}  // namespace
}  // namespace ag::kernels
