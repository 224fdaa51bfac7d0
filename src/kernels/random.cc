// Random kernels: Philox blocks turned into uniform, normal, Bernoulli and
// integer values. Box-Muller runs in double for both dtypes (its log and
// trigonometric functions dominate the cost; the 24- or 53-bit uniforms
// keep every value finite).
#include "kernels/random.h"

#include <cmath>
#include <limits>

#include "kernels/philox.h"

namespace ag::kernels {

namespace {

constexpr double kTwoPi = 6.283185307179586476925286766559;

// Calls emit(i, words, count) for each block that elements [first, first + n)
// use, i being the first element of the block relative to out; `first` is a
// multiple of the elements per block.
template <class Emit>
void for_blocks(int64_t per_block, int64_t first, int64_t n, uint64_t seed, uint64_t offset, Emit emit) {
  uint64_t block = offset + static_cast<uint64_t>(first / per_block);
  for (int64_t i = 0; i < n; i += per_block, ++block) {
    emit(i, philox_block(seed, block), n - i < per_block ? n - i : per_block);
  }
}

// The uniforms of one block: four f32 or two f64.
template <class T>
void uniforms(const PhiloxWords& w, T* u) {
  if constexpr (sizeof(T) == 4) {
    for (int j = 0; j < 4; ++j) u[j] = uniform_f32(w[j]);
  } else {
    u[0] = uniform_f64(w[0], w[1]);
    u[1] = uniform_f64(w[2], w[3]);
  }
}

// Two standard normals from uniforms u1, u2 in [0, 1): 1 - u1 lies in (0, 1],
// so the log is finite.
inline void box_muller(double u1, double u2, double* z) {
  const double r = std::sqrt(-2.0 * std::log(1.0 - u1));
  const double t = kTwoPi * u2;
  z[0] = r * std::cos(t);
  z[1] = r * std::sin(t);
}

// u < p ? v : 0 from one 32-bit word per element.
template <class T, class P>
void bernoulli_typed(T* out, int64_t first, int64_t n, uint64_t seed, uint64_t offset, P p, T v) {
  for_blocks(4, first, n, seed, offset, [&](int64_t i, const PhiloxWords& w, int64_t count) {
    for (int64_t j = 0; j < count; ++j) out[i + j] = uniform_u32(w[j]) < p(i + j) ? v : T(0);
  });
}

template <class T>
void fill_typed(RandomKind k, T* out, int64_t first, int64_t n, uint64_t seed, uint64_t offset, double a, double b) {
  if (k == RandomKind::Bernoulli) {
    return bernoulli_typed(out, first, n, seed, offset, [a](int64_t) { return a; }, static_cast<T>(b));
  }
  constexpr int64_t per = sizeof(T) == 4 ? 4 : 2;
  const T high = static_cast<T>(b);
  const T below_high = std::nextafter(high, -std::numeric_limits<T>::infinity());
  for_blocks(per, first, n, seed, offset, [&](int64_t i, const PhiloxWords& w, int64_t count) {
    T u[per];
    uniforms(w, u);
    T v[per];
    switch (k) {
      case RandomKind::Uniform:
        for (int j = 0; j < per; ++j) {
          v[j] = static_cast<T>(a + (b - a) * static_cast<double>(u[j]));
          if (v[j] >= high && b > a) v[j] = below_high;  // rounding must not reach b
        }
        break;
      case RandomKind::Normal:
        for (int j = 0; j < per; j += 2) {
          double z[2];
          box_muller(u[j], u[j + 1], z);
          v[j] = static_cast<T>(a + b * z[0]);
          v[j + 1] = static_cast<T>(a + b * z[1]);
        }
        break;
      case RandomKind::Bernoulli:
        break;  // above
    }
    for (int64_t j = 0; j < count; ++j) out[i + j] = v[j];
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
    bernoulli_typed(reinterpret_cast<T*>(out), first, n, seed, offset,
                    [pp](int64_t i) { return static_cast<double>(pp[i]); }, T(1));
  });
}

void randint(char* out, int64_t first, int64_t n, uint64_t seed, uint64_t offset, int64_t low, uint64_t range) {
  int64_t* o = reinterpret_cast<int64_t*>(out);
  for_blocks(2, first, n, seed, offset, [&](int64_t i, const PhiloxWords& w, int64_t count) {
    for (int64_t j = 0; j < count; ++j) {
      const uint64_t r = (uint64_t{w[2 * j]} << 32) | w[2 * j + 1];
      // In uint64: low + r may pass INT64_MAX on the way only when the result does not.
      o[i + j] = static_cast<int64_t>(static_cast<uint64_t>(low) + r % range);
    }
  });
}

}  // namespace ag::kernels
