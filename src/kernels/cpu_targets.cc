// The run-time half of Highway's dynamic dispatch on x86-64, in ag itself:
// which targets this CPU and its OS support (SupportedTargets), the target
// every HWY_DYNAMIC_DISPATCH reads (GetChosenTarget), and the two overrides
// tests use. These are the only symbols ag takes from libhwy, and libhwy
// 1.0.x also calibrates a benchmark timer in a static initializer (moved
// into a function upstream in 2025): 5.8 ms of the 7.4 ms a process spent
// loading ag and making its first context, on a 2-core VM.
// On other architectures, and with other Highway versions, ag links libhwy
// (src/meson.build).
//
// A target counts as supported when the CPU reports the instruction sets
// Highway compiles that target with (HWY_TARGET_STR in
// hwy/ops/set_macros-inl.h) and the OS saves the registers it uses (XCR0).
// One exception, as in libhwy's own detection: 1.0.3 compiles AVX3_DL with
// the VEX form of VNNI (avxvnni) but checks the AVX-512 form; ag's kernels
// contain no VNNI instruction of either form.
#include <cpuid.h>

#include <atomic>
#include <cstdint>

#include "hwy/targets.h"

#if !defined(__x86_64__)
#error "cpu_targets.cc is the x86-64 dispatch runtime; other architectures link libhwy"
#endif

namespace hwy {
namespace {

struct CpuidRegs {
  uint32_t a = 0, b = 0, c = 0, d = 0;
};

CpuidRegs cpuid(uint32_t leaf, uint32_t subleaf) {
  CpuidRegs r;
  __cpuid_count(leaf, subleaf, r.a, r.b, r.c, r.d);
  return r;
}

bool has(uint32_t reg, int bit) { return ((reg >> bit) & 1u) != 0; }

// XCR0: the register state the OS saves on a context switch. Only readable
// where CPUID reports OSXSAVE.
uint64_t xcr0() {
  uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t{hi} << 32) | lo;
}

// The highest leaf of a CPUID range (unsigned in GCC's cpuid.h, int in clang's).
uint32_t max_leaf_of(uint32_t range) { return static_cast<uint32_t>(__get_cpuid_max(range, nullptr)); }

int64_t detect_targets() {
  int64_t targets = HWY_EMU128 | HWY_SCALAR;
  const uint32_t max_leaf = max_leaf_of(0);
  if (max_leaf < 1) return targets;
  const CpuidRegs l1 = cpuid(1, 0);
  const CpuidRegs l7 = max_leaf >= 7 ? cpuid(7, 0) : CpuidRegs{};
  const CpuidRegs ext = max_leaf_of(0x80000000u) >= 0x80000001u ? cpuid(0x80000001u, 0) : CpuidRegs{};

  const bool ssse3 = has(l1.d, 25) && has(l1.d, 26) && has(l1.c, 0) && has(l1.c, 9);  // sse, sse2, sse3, ssse3
  const bool sse4 = ssse3 && has(l1.c, 19) && has(l1.c, 20) && has(l1.c, 1) &&        // sse4.1, sse4.2, pclmul
                    has(l1.c, 25);                                                     // aes
  // XMM and YMM state (bits 1, 2); AVX-512 adds opmask, ZMM0-15 high halves
  // and ZMM16-31 (bits 5, 6, 7).
  const uint64_t os = has(l1.c, 27) ? xcr0() : 0;
  const bool os_avx = (os & 0x6) == 0x6;
  const bool os_avx512 = (os & 0xE6) == 0xE6;
  const bool avx2 = sse4 && os_avx && has(l1.c, 28) && has(l7.b, 5) &&  // avx, avx2
                    has(l7.b, 3) && has(l7.b, 8) &&                      // bmi, bmi2
                    has(l1.c, 12) && has(l1.c, 29) &&                    // fma, f16c
                    has(ext.c, 5);                                       // lzcnt
  const bool avx3 = avx2 && os_avx512 && has(l7.b, 16) && has(l7.b, 31) &&  // avx512f, avx512vl
                    has(l7.b, 17) && has(l7.b, 30);                         // avx512dq, avx512bw
  const bool avx3_dl = avx3 && has(l7.c, 10) && has(l7.c, 1) &&  // vpclmulqdq, avx512vbmi
                       has(l7.c, 6) && has(l7.c, 9) &&           // avx512vbmi2, vaes
                       has(l7.c, 11) && has(l7.c, 12) &&         // avx512vnni, avx512bitalg
                       has(l7.c, 14);                            // avx512vpopcntdq
  if (ssse3) targets |= HWY_SSSE3;
  if (sse4) targets |= HWY_SSE4;
  if (avx2) targets |= HWY_AVX2;
  if (avx3) targets |= HWY_AVX3;
  if (avx3_dl) targets |= HWY_AVX3_DL;
  return targets;
}

// The CPU does not change under a running process: detected once.
int64_t detected_targets() {
  static const int64_t targets = detect_targets();
  return targets;
}

// SetSupportedTargetsForTest's mock (0: none) and DisableTargets' mask.
std::atomic<int64_t> g_mock_targets{0};
std::atomic<int64_t> g_enabled_targets{~int64_t{0}};

}  // namespace

int64_t SupportedTargets() {
  int64_t targets = g_mock_targets.load(std::memory_order_relaxed);
  if (targets == 0) targets = detected_targets();
  targets &= g_enabled_targets.load(std::memory_order_relaxed);
  return targets == 0 ? HWY_STATIC_TARGET : targets;
}

void DisableTargets(int64_t disabled_targets) {
  // The baseline stays: code compiled for it runs on every CPU that loads ag.
  g_enabled_targets.store(~(disabled_targets & ~int64_t{HWY_ENABLED_BASELINE}), std::memory_order_relaxed);
  GetChosenTarget().Update(SupportedTargets());
}

void SetSupportedTargetsForTest(int64_t targets) {
  g_mock_targets.store(targets, std::memory_order_relaxed);
  GetChosenTarget().Update(SupportedTargets());
}

ChosenTarget& GetChosenTarget() {
  static ChosenTarget chosen;  // constant-initialized: usable from any static constructor
  return chosen;
}

}  // namespace hwy
