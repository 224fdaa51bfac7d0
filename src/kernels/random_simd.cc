// Vector kernels of the random ops.
// - Philox4x32-10 over runs of consecutive counter blocks, one block per
//   64-bit lane: each 32-bit word sits in the low half of a lane, so one
//   MulEven gives the whole 32x32->64-bit product of a round. Integer
//   arithmetic only, so every target gives the words of philox_block exactly.
// - Box-Muller on Highway's contrib Log, Sin and Cos in double: within a few
//   ulp of the std:: functions, and may differ between targets.
#include "kernels/targets.h"  // first: selects the targets

#include <cstdint>

#include "kernels/philox.h"
#include "kernels/random.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/kernels/random_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "kernels/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ag::kernels::HWY_NAMESPACE {

namespace hn = hwy::HWY_NAMESPACE;

void PhiloxBlocks(uint64_t seed, uint64_t block, int64_t nblocks, uint32_t* out) {
#if HWY_TARGET == HWY_SCALAR
  // One lane: the scalar rounds themselves (SCALAR cannot bit-cast a u64
  // lane to u32 lanes).
  for (int64_t b = 0; b < nblocks; ++b) {
    const PhiloxWords w = philox_block(seed, block + static_cast<uint64_t>(b));
    for (int j = 0; j < 4; ++j) out[4 * b + j] = w[j];
  }
#else
  using namespace philox_detail;
  const hn::ScalableTag<uint64_t> d;
  const hn::Repartition<uint32_t, decltype(d)> d32;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  uint32_t k0[10], k1[10];  // the key of each round
  k0[0] = static_cast<uint32_t>(seed);
  k1[0] = static_cast<uint32_t>(seed >> 32);
  for (int r = 1; r < 10; ++r) k0[r] = k0[r - 1] + kWeyl0, k1[r] = k1[r - 1] + kWeyl1;
  const auto low = hn::Set(d, uint64_t{0xFFFFFFFFu});
  const auto mul0 = hn::BitCast(d32, hn::Set(d, uint64_t{kMul0}));
  const auto mul1 = hn::BitCast(d32, hn::Set(d, uint64_t{kMul1}));
  HWY_ALIGN uint64_t lanes[4][HWY_MAX_BYTES / 8];
  for (int64_t b = 0; b < nblocks; b += N) {
    const auto ctr = hn::Iota(d, block + static_cast<uint64_t>(b));  // wraps as uint64_t, as philox_block
    auto c0 = hn::And(ctr, low), c1 = hn::ShiftRight<32>(ctr), c2 = hn::Zero(d), c3 = hn::Zero(d);
    for (int r = 0; r < 10; ++r) {
      const auto p0 = hn::MulEven(mul0, hn::BitCast(d32, c0));
      const auto p1 = hn::MulEven(mul1, hn::BitCast(d32, c2));
      c0 = hn::Xor(hn::Xor(hn::ShiftRight<32>(p1), c1), hn::Set(d, uint64_t{k0[r]}));
      c2 = hn::Xor(hn::Xor(hn::ShiftRight<32>(p0), c3), hn::Set(d, uint64_t{k1[r]}));
      c1 = hn::And(p1, low);
      c3 = hn::And(p0, low);
    }
    hn::Store(c0, d, lanes[0]);
    hn::Store(c1, d, lanes[1]);
    hn::Store(c2, d, lanes[2]);
    hn::Store(c3, d, lanes[3]);
    // Interleave into block order; the last vector may hold more blocks than asked for.
    const int64_t m = nblocks - b < N ? nblocks - b : N;
    for (int64_t l = 0; l < m; ++l) {
      for (int j = 0; j < 4; ++j) out[4 * (b + l) + j] = static_cast<uint32_t>(lanes[j][l]);
    }
  }
#endif
}

// z0 = r cos t, z1 = r sin t with r = sqrt(-2 log(1 - u1)), t = 2 pi u2, for
// u1, u2 in [0, 1): 1 - u1 is in (0, 1], so the log is finite; it may round
// to a tiny positive value at 1, hence the Max before the Sqrt.
void BoxMuller(const double* u1, const double* u2, size_t n, double* z0, double* z1) {
  const hn::ScalableTag<double> d;
  const size_t N = hn::Lanes(d);
  const auto one = hn::Set(d, 1.0), minus_two = hn::Set(d, -2.0), zero = hn::Zero(d);
  const auto two_pi = hn::Set(d, 6.283185307179586476925286766559);
  auto pair = [&](decltype(one) a, decltype(one) b, size_t i, size_t m) {
    const auto r = hn::Sqrt(hn::Max(hn::Mul(minus_two, hn::Log(d, hn::Sub(one, a))), zero));
    const auto t = hn::Mul(two_pi, b);
    const auto c = hn::Mul(r, hn::Cos(d, t)), s = hn::Mul(r, hn::Sin(d, t));
    if (m == N) {
      hn::StoreU(c, d, z0 + i);
      hn::StoreU(s, d, z1 + i);
    } else {
      StoreTail(d, c, z0 + i, m);
      StoreTail(d, s, z1 + i, m);
    }
  };
  size_t i = 0;
  for (; i + N <= n; i += N) pair(hn::LoadU(d, u1 + i), hn::LoadU(d, u2 + i), i, N);
  if (i < n) pair(LoadTail(d, u1 + i, n - i), LoadTail(d, u2 + i, n - i), i, n - i);
}

int64_t RandomTargetId() { return HWY_TARGET; }

}  // namespace ag::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ag::kernels {

HWY_EXPORT(PhiloxBlocks);
HWY_EXPORT(BoxMuller);
HWY_EXPORT(RandomTargetId);

void philox_words(uint64_t seed, uint64_t block, int64_t nblocks, uint32_t* out) {
  HWY_DYNAMIC_DISPATCH(PhiloxBlocks)(seed, block, nblocks, out);
}

void box_muller(const double* u1, const double* u2, int64_t n, double* z0, double* z1) {
  HWY_DYNAMIC_DISPATCH(BoxMuller)(u1, u2, static_cast<size_t>(n), z0, z1);
}

int64_t random_target() { return HWY_DYNAMIC_DISPATCH(RandomTargetId)(); }

}  // namespace ag::kernels
#endif  // HWY_ONCE
