// Philox4x32-10, the counter-based generator of Salmon, Moraes, Dror and Shaw,
// "Parallel random numbers: as easy as 1, 2, 3" (SC'11): a 128-bit counter
// and a 64-bit key go through ten rounds of two 32x32->64-bit multiplies,
// giving four 32-bit words. Any counter can be computed on its own, so a
// tensor's elements can be drawn in chunks on any thread, in any order.
// This scalar version is the reference; philox_words (kernels/random.h)
// computes runs of blocks with Highway and gives the same words.
#pragma once

#include <array>
#include <cstdint>

namespace ag::kernels {

using PhiloxWords = std::array<uint32_t, 4>;

namespace philox_detail {
constexpr uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;  // round multipliers
constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;  // key schedule increments
}  // namespace philox_detail

// The ten rounds on counter c with key (k0, k1).
inline PhiloxWords philox4x32_10(PhiloxWords c, uint32_t k0, uint32_t k1) {
  using namespace philox_detail;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += kWeyl0;
      k1 += kWeyl1;
    }
    const uint64_t p0 = uint64_t{kMul0} * c[0];
    const uint64_t p1 = uint64_t{kMul1} * c[2];
    c = {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k0, static_cast<uint32_t>(p1), static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k1,
         static_cast<uint32_t>(p0)};
  }
  return c;
}

// The words of counter block `block` (the low 64 bits of the counter; the
// high ones are 0) under a 64-bit seed.
inline PhiloxWords philox_block(uint64_t seed, uint64_t block) {
  return philox4x32_10({static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32), 0u, 0u},
                       static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}

// Uniform in [0, 1) from the top 24 bits of a word (f32 resolution) or the
// top 53 bits of two (f64).
inline float uniform_f32(uint32_t w) { return static_cast<float>(w >> 8) * (1.0f / 16777216.0f); }
inline double uniform_f64(uint32_t hi, uint32_t lo) {
  return static_cast<double>(((uint64_t{hi} << 32) | lo) >> 11) * (1.0 / 9007199254740992.0);
}

}  // namespace ag::kernels
