// Random kernels: Philox blocks turned into uniform, normal, Bernoulli and
// integer values, a batch of blocks at a time. Box-Muller runs in double for
// both dtypes (the vector kernel box_muller); the 24- or 53-bit uniforms
// keep every value finite.
#include "kernels/random.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/philox.h"

namespace ag::kernels {

namespace {

constexpr int64_t kBatch = 64;  // blocks generated per call of the vector kernel

// Calls batch(i, words, count) for runs of the elements [first, first + n):
// elements i..i+count-1 relative to out, whose words (per_block elements to
// each 4 words) start at `words`; `first` is a multiple of per_block.
template <class Batch>
void for_batches(int64_t per_block, int64_t first, int64_t n, uint64_t seed, uint64_t offset, Batch batch) {
  uint32_t words[4 * kBatch];
  const uint64_t block = offset + static_cast<uint64_t>(first / per_block);
  const int64_t blocks = (n + per_block - 1) / per_block;
  for (int64_t b0 = 0; b0 < blocks; b0 += kBatch) {
    const int64_t nb = blocks - b0 < kBatch ? blocks - b0 : kBatch;
    philox_words(seed, block + static_cast<uint64_t>(b0), nb, words);
    const int64_t i = b0 * per_block;
    batch(i, words, n - i < nb * per_block ? n - i : nb * per_block);
  }
}

// Uniform j of a batch: word j (f32) or words 2j, 2j + 1 (f64).
template <class T>
inline T uniform_at(const uint32_t* w, int64_t j) {
  if constexpr (sizeof(T) == 4) {
    return uniform_f32(w[j]);
  } else {
    return uniform_f64(w[2 * j], w[2 * j + 1]);
  }
}

// Bernoulli draws from one 32-bit word w per element: u = w / 2^32 < p is
// w < p 2^32 (both scalings exact), so the integer w < ceil(p 2^32). The
// value is selected with a bit mask, not a branch: a branch on a random bit
// mispredicts about as often as it is taken (and compilers turn v * (w < t)
// back into one).
template <class T>
struct Select {
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  explicit Select(T v) { std::memcpy(&bits, &v, sizeof v); }
  // *out = take ? v : +0.
  void store(T* out, bool take) const {
    const Bits r = bits & (Bits{0} - static_cast<Bits>(take));
    std::memcpy(out, &r, sizeof r);
  }
  Bits bits;
};

template <class T>
void bernoulli_scalar_p(T* out, int64_t first, int64_t n, uint64_t seed, uint64_t offset, double p, T v) {
  const uint64_t threshold = static_cast<uint64_t>(std::ceil(p * 4294967296.0));
  const Select<T> value(v);
  for_batches(4, first, n, seed, offset, [&, value](int64_t i, const uint32_t* w, int64_t count) {
    for (int64_t j = 0; j < count; ++j) value.store(out + i + j, uint64_t{w[j]} < threshold);
  });
}

template <class T>
void fill_typed(RandomKind k, T* out, int64_t first, int64_t n, uint64_t seed, uint64_t offset, double a, double b) {
  if (k == RandomKind::Bernoulli) return bernoulli_scalar_p(out, first, n, seed, offset, a, static_cast<T>(b));
  constexpr int64_t per = sizeof(T) == 4 ? 4 : 2;
  if (k == RandomKind::Uniform && a == 0.0 && b == 1.0) {  // rand: u itself, the same value as below
    for_batches(per, first, n, seed, offset, [&](int64_t i, const uint32_t* w, int64_t count) {
      for (int64_t j = 0; j < count; ++j) out[i + j] = uniform_at<T>(w, j);
    });
    return;
  }
  if (k == RandomKind::Uniform) {
    const T high = static_cast<T>(b);
    const T below_high = std::nextafter(high, -std::numeric_limits<T>::infinity());
    const double width = b - a;
    for_batches(per, first, n, seed, offset, [&](int64_t i, const uint32_t* w, int64_t count) {
      for (int64_t j = 0; j < count; ++j) {
        const T v = static_cast<T>(a + width * static_cast<double>(uniform_at<T>(w, j)));
        out[i + j] = v >= high && b > a ? below_high : v;  // rounding must not reach b
      }
    });
    return;
  }
  // Normal: elements 2m and 2m + 1 from the uniforms 2m and 2m + 1.
  for_batches(per, first, n, seed, offset, [&](int64_t i, const uint32_t* w, int64_t count) {
    constexpr int64_t kPairs = kBatch * per / 2;
    double u1[kPairs], u2[kPairs], z0[kPairs], z1[kPairs];
    const int64_t pairs = (count + 1) / 2;
    for (int64_t m = 0; m < pairs; ++m) {
      u1[m] = static_cast<double>(uniform_at<T>(w, 2 * m));
      u2[m] = static_cast<double>(uniform_at<T>(w, 2 * m + 1));
    }
    box_muller(u1, u2, pairs, z0, z1);
    for (int64_t m = 0; m < pairs; ++m) {
      out[i + 2 * m] = static_cast<T>(a + b * z0[m]);
      if (2 * m + 1 < count) out[i + 2 * m + 1] = static_cast<T>(a + b * z1[m]);
    }
  });
}

}  // namespace

void random_fill(RandomKind k, DType dt, char* out, int64_t first, int64_t n, uint64_t seed, uint64_t offset, double a,
                 double b) {
  visit_floating(dt, [&](auto z) {
    using T = decltype(z);
    fill_typed<T>(k, reinterpret_cast<T*>(out), first, n, seed, offset, a, b);
  });
}

void bernoulli(DType dt, const char* p, char* out, int64_t first, int64_t n, uint64_t seed, uint64_t offset) {
  visit_floating(dt, [&](auto z) {
    using T = decltype(z);
    const T* pp = reinterpret_cast<const T*>(p);
    T* o = reinterpret_cast<T*>(out);
    const Select<T> one(T(1));
    for_batches(4, first, n, seed, offset, [&, one](int64_t i, const uint32_t* w, int64_t count) {
      for (int64_t j = 0; j < count; ++j) {
        one.store(o + i + j, static_cast<double>(w[j]) < static_cast<double>(pp[i + j]) * 4294967296.0);
      }
    });
  });
}

void randint(char* out, int64_t first, int64_t n, uint64_t seed, uint64_t offset, int64_t low, uint64_t range) {
  int64_t* o = reinterpret_cast<int64_t*>(out);
  for_batches(2, first, n, seed, offset, [&](int64_t i, const uint32_t* w, int64_t count) {
    for (int64_t j = 0; j < count; ++j) {
      const uint64_t r = (uint64_t{w[2 * j]} << 32) | w[2 * j + 1];
      // In uint64: low + r may pass INT64_MAX on the way only when the result does not.
      o[i + j] = static_cast<int64_t>(static_cast<uint64_t>(low) + r % range);
    }
  });
}

}  // namespace ag::kernels
