// Cumulative sums and products along one dim of a contiguous
// (outer, n, inner) tensor, accumulated in double in index order (or reverse
// index order). Plain loops: the inner loop over j runs across contiguous
// memory, and the compiler vectorizes it.
#include <algorithm>
#include <vector>

#include "kernels/kernels.h"

namespace ag::kernels {

namespace {

template <class T>
void ScanTyped(ScanKind k, bool reverse, const T* x, int64_t outer, int64_t n, int64_t inner, T* out) {
  std::vector<double> acc(static_cast<size_t>(inner));
  for (int64_t o = 0; o < outer; ++o) {
    std::fill(acc.begin(), acc.end(), k == ScanKind::Sum ? 0.0 : 1.0);
    for (int64_t step = 0; step < n; ++step) {
      const int64_t kk = reverse ? n - 1 - step : step;
      const int64_t base = (o * n + kk) * inner;
      for (int64_t j = 0; j < inner; ++j) {
        const double v = static_cast<double>(x[base + j]);
        acc[static_cast<size_t>(j)] = k == ScanKind::Sum ? acc[static_cast<size_t>(j)] + v : acc[static_cast<size_t>(j)] * v;
        out[base + j] = static_cast<T>(acc[static_cast<size_t>(j)]);
      }
    }
  }
}

}  // namespace

void scan_dim(ScanKind k, DType dt, bool reverse, const char* x, int64_t outer, int64_t n, int64_t inner, char* out) {
  if (dt == DType::F64) {
    return ScanTyped(k, reverse, reinterpret_cast<const double*>(x), outer, n, inner, reinterpret_cast<double*>(out));
  }
  ScanTyped(k, reverse, reinterpret_cast<const float*>(x), outer, n, inner, reinterpret_cast<float*>(out));
}

}  // namespace ag::kernels
