// Kernels of the random ops (kernels/random.cc), over the Philox counter
// blocks of kernels/philox.h. Element e of a random tensor takes its bits
// from block offset + e / per_block(dt) only, so a tensor written in chunks
// (each starting at an element that is a multiple of per_block) has the same
// bits however the chunks are spread over threads.
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace ag::kernels {

// Vector kernels (kernels/random_simd.cc):
// the words of blocks block..block+nblocks-1 (4 per block, in block order)
// under `seed`: philox_block for each;
void philox_words(uint64_t seed, uint64_t block, int64_t nblocks, uint32_t* out);
// z0[i] = r cos t, z1[i] = r sin t, r = sqrt(-2 log(1 - u1[i])), t = 2 pi u2[i]
// for uniforms in [0, 1) (Box-Muller), within a few ulp of std:: math;
void box_muller(const double* u1, const double* u2, int64_t n, double* z0, double* z1);
// the HWY_TARGET they dispatch to (for the all-targets test).
int64_t random_target();

enum class RandomKind {
  Uniform,    // a + (b - a) u, u uniform in [0, 1), kept below b
  Normal,     // a + b z, z standard normal (Box-Muller)
  Bernoulli,  // u < a ? b : 0, u a 32-bit uniform whatever the dtype; b finite
};

// Elements per Philox block (four 32-bit words): one word per f32 value or
// Bernoulli draw (so f32 and f64 masks agree), two per f64 or i64 value.
inline int64_t random_per_block(RandomKind k, DType dt) {
  return dt == DType::F32 || k == RandomKind::Bernoulli ? 4 : 2;
}
inline uint64_t random_blocks(RandomKind k, DType dt, int64_t n) {
  const int64_t per = random_per_block(k, dt);
  return static_cast<uint64_t>((n + per - 1) / per);
}

// Elements first..first+n-1 of a random f32/f64 tensor drawn from the blocks
// from `offset` on under `seed`; out points at element `first`.
void random_fill(RandomKind k, DType dt, char* out, int64_t first, int64_t n, uint64_t seed, uint64_t offset, double a,
                 double b);

// out[i] = u_i < p[i] ? 1 : 0, p and out contiguous f32/f64, drawn as
// random_fill's Bernoulli.
void bernoulli(DType dt, const char* p, char* out, int64_t first, int64_t n, uint64_t seed, uint64_t offset);

// out[i] = low + (r_i mod range), r_i a 64-bit word pair, out i64.
void randint(char* out, int64_t first, int64_t n, uint64_t seed, uint64_t offset, int64_t low, uint64_t range);

}  // namespace ag::kernels
