// The denormal handling of the floating-point unit (flush-to-zero and
// denormals-are-zero). A context captures the creating thread's mode and the
// chunks of its parallel kernels run in it on every thread; TBB alone would
// use the mode of the arena's first use.
#pragma once

#include <cstdint>

#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#define AG_FP_MODE_MXCSR 1
#endif

namespace ag {

struct FpMode {
#if AG_FP_MODE_MXCSR
  static constexpr uint32_t kMask = 0x8040u;  // FTZ (bit 15) | DAZ (bit 6)
  static uint32_t current() { return _mm_getcsr() & kMask; }
#else
  static uint32_t current() { return 0; }
#endif
};

// Runs the enclosing block in `mode`, restoring the thread's own after.
class FpModeScope {
 public:
#if AG_FP_MODE_MXCSR
  explicit FpModeScope(uint32_t mode) : saved_(_mm_getcsr()) {
    if ((saved_ & FpMode::kMask) != mode) _mm_setcsr((saved_ & ~FpMode::kMask) | mode);
  }
  ~FpModeScope() { _mm_setcsr(saved_); }

 private:
  uint32_t saved_;
#else
  explicit FpModeScope(uint32_t) {}
#endif
  FpModeScope(const FpModeScope&) = delete;
  FpModeScope& operator=(const FpModeScope&) = delete;
};

}  // namespace ag
