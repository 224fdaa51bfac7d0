// Sum reductions. Accumulation is in double and in a fixed order (Note
// [Summation order]), so results do not depend on how the work is split.
// SIMD rows per Highway target, dispatched once per call.
#include "kernels/targets.h"  // first: selects the targets

#include <algorithm>
#include <cstddef>
#include <memory>

#include "kernels/kernels.h"
#include "kernels/loops.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/kernels/reduce.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "kernels/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ag::kernels::HWY_NAMESPACE {

// Note [Summation order]
// A row reduced into one accumulator (accumulator stride 0) is summed the
// same way whether it is contiguous or strided (strided rows are gathered
// block by block first):
// 1. The row is cut into blocks of kBlock elements; the last may be shorter.
// 2. A block is summed in double with four vector accumulators of L lanes
//    (L = double lanes of the target): full groups of 4L elements go to
//    a0..a3, then whole vectors to a0, then a masked tail vector to a1; the
//    block sum is SumOfLanes((a0 + a1) + (a2 + a3)).
// 3. Block sums are combined pairwise, as a binary counter does:
//    ((s0 + s1) + (s2 + s3)) + ..., the incomplete groups at the end last.
// The order depends only on the row length and L, i.e. on the data and the
// target. Error: O(kBlock / 4L + log2(n / kBlock)) double roundings.
// Rows reduced into several accumulators (acc[i] += x[i]) add one element
// per accumulator per row, in row order, whatever the target.
constexpr size_t kBlock = 1024;
static_assert(kSumChunk % kBlock == 0 && ((kSumChunk / kBlock) & (kSumChunk / kBlock - 1)) == 0,
              "a sum chunk must be a power-of-two number of blocks (see kernels.h)");

template <class DD>
HWY_INLINE hn::Vec<DD> LoadAsDouble(DD dd, const double* p) {
  return hn::LoadU(dd, p);
}
template <class DD>
HWY_INLINE hn::Vec<DD> LoadAsDouble(DD dd, const float* p) {
  return hn::PromoteTo(dd, hn::LoadU(hn::Rebind<float, DD>(), p));
}
template <class DD>
HWY_INLINE hn::Vec<DD> LoadTailAsDouble(DD dd, const double* p, size_t n) {
  return LoadTail(dd, p, n);
}
template <class DD>
HWY_INLINE hn::Vec<DD> LoadTailAsDouble(DD dd, const float* p, size_t n) {
  return hn::PromoteTo(dd, LoadTail(hn::Rebind<float, DD>(), p, n));
}

// Sum of x[0, n), n <= kBlock, steps 2 of Note [Summation order].
template <class T>
HWY_NOINLINE double SumBlock(const T* x, size_t n) {
  const hn::ScalableTag<double> dd;
  const size_t N = hn::Lanes(dd);
  auto a0 = hn::Zero(dd);
  auto a1 = hn::Zero(dd);
  auto a2 = hn::Zero(dd);
  auto a3 = hn::Zero(dd);
  size_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    a0 = hn::Add(a0, LoadAsDouble(dd, x + i));
    a1 = hn::Add(a1, LoadAsDouble(dd, x + i + N));
    a2 = hn::Add(a2, LoadAsDouble(dd, x + i + 2 * N));
    a3 = hn::Add(a3, LoadAsDouble(dd, x + i + 3 * N));
  }
  for (; i + N <= n; i += N) a0 = hn::Add(a0, LoadAsDouble(dd, x + i));
  if (i < n) a1 = hn::Add(a1, LoadTailAsDouble(dd, x + i, n - i));
  return hn::GetLane(hn::SumOfLanes(dd, hn::Add(hn::Add(a0, a1), hn::Add(a2, a3))));
}

// Sum of x[i * stride] for i < n, in the order of Note [Summation order].
template <class T>
double SumRow(const T* x, int64_t n, int64_t stride) {
  double partial[64];  // block sums pending a merge, at most one per level
  int depth = 0;
  uint64_t count = 0;
  HWY_ALIGN T buf[kBlock];  // gathered block of a strided row
  for (int64_t i0 = 0; i0 < n; i0 += static_cast<int64_t>(kBlock)) {
    const size_t m = static_cast<size_t>(std::min<int64_t>(kBlock, n - i0));
    const T* src = x + i0 * stride;
    if (stride != 1) {
      for (size_t i = 0; i < m; ++i) buf[i] = src[static_cast<int64_t>(i) * stride];
      src = buf;
    }
    double s = SumBlock(src, m);
    for (uint64_t c = count; c & 1; c >>= 1) s = partial[--depth] + s;
    partial[depth++] = s;
    ++count;
  }
  if (depth == 0) return 0.0;
  double t = partial[depth - 1];
  for (int k = depth - 2; k >= 0; --k) t = partial[k] + t;
  return t;
}

// acc[i] += x[i] for i < n, both contiguous.
template <class T>
HWY_NOINLINE void AccumulateRow(double* acc, const T* x, size_t n) {
  const hn::ScalableTag<double> dd;
  const size_t N = hn::Lanes(dd);
  size_t i = 0;
  for (; i + N <= n; i += N) {
    hn::StoreU(hn::Add(hn::LoadU(dd, acc + i), LoadAsDouble(dd, x + i)), dd, acc + i);
  }
  if (i < n) {
    const size_t r = n - i;
    StoreTail(dd, hn::Add(LoadTail(dd, acc + i, r), LoadTailAsDouble(dd, x + i, r)), acc + i, r);
  }
}

// acc[j] += x[r * stride + j] for r < rows in row order, j < n: the adds of
// AccumulateRow row after row, with 4 vectors of acc kept in registers
// across the rows instead of loaded and stored per row (a 1024 x 1024 f32
// sum over dim 0 took 0.35 ns an element through AccumulateRow).
template <class T>
HWY_NOINLINE void AccumulateColumns(double* acc, const T* x, size_t rows, int64_t stride, size_t n) {
  const hn::ScalableTag<double> dd;
  const size_t N = hn::Lanes(dd);
  size_t j = 0;
  for (; j + 4 * N <= n; j += 4 * N) {
    auto a0 = hn::LoadU(dd, acc + j), a1 = hn::LoadU(dd, acc + j + N);
    auto a2 = hn::LoadU(dd, acc + j + 2 * N), a3 = hn::LoadU(dd, acc + j + 3 * N);
    const T* col = x + j;
    for (size_t r = 0; r < rows; ++r, col += stride) {
      a0 = hn::Add(a0, LoadAsDouble(dd, col));
      a1 = hn::Add(a1, LoadAsDouble(dd, col + N));
      a2 = hn::Add(a2, LoadAsDouble(dd, col + 2 * N));
      a3 = hn::Add(a3, LoadAsDouble(dd, col + 3 * N));
    }
    hn::StoreU(a0, dd, acc + j);
    hn::StoreU(a1, dd, acc + j + N);
    hn::StoreU(a2, dd, acc + j + 2 * N);
    hn::StoreU(a3, dd, acc + j + 3 * N);
  }
  if (j < n) {
    for (size_t r = 0; r < rows; ++r) AccumulateRow(acc + j, x + static_cast<int64_t>(r) * stride + j, n - j);
  }
}

template <class T>
void SumToTyped(const Dims& shape, View x, const Dims& out_shape, char* out) {
  const int64_t n_out = numel_of(out_shape);
  // Accumulators: one double per output element (a single one on the stack
  // for a full reduction, the common case).
  double single = 0.0;
  std::unique_ptr<double[]> many;
  double* acc = &single;
  if (n_out > 1) {
    many.reset(new double[n_out]());
    acc = many.get();
  }
  Dims acc_strides = contiguous_strides(out_shape);
  for (int i = 0; i < out_shape.size(); ++i) {
    if (out_shape[i] == 1 && shape[i] != 1) acc_strides[i] = 0;
  }
  const Dims* strides[2] = {&acc_strides, x.strides};
  const auto plan = plan_loop<2>(shape, strides);
  const T* xp = reinterpret_cast<const T*>(x.data);
  if (plan.ndim == 2 && plan.strides[0][0] == 0 && plan.strides[0][1] == 1 && plan.strides[1][1] == 1) {
    // Sums over rows (a bias gradient): columns in registers.
    AccumulateColumns(acc, xp, static_cast<size_t>(plan.shape[0]), plan.strides[1][0], static_cast<size_t>(plan.shape[1]));
  } else {
    for_each_row<2>(plan, [&](const int64_t* off, int64_t n, const int64_t* s) {
      double* arow = acc + off[0];
      const T* xrow = xp + off[1];
      const int64_t sa = s[0], sx = s[1];
      if (sa == 0) {
        *arow += SumRow(xrow, n, sx);
      } else if (sa == 1 && sx == 1) {
        AccumulateRow(arow, xrow, static_cast<size_t>(n));
      } else {
        for (int64_t i = 0; i < n; ++i) arow[i * sa] += static_cast<double>(xrow[i * sx]);
      }
    });
  }
  T* o = reinterpret_cast<T*>(out);
  for (int64_t i = 0; i < n_out; ++i) o[i] = static_cast<T>(acc[i]);
}

void SumTo(DType dt, const Dims& shape, View x, const Dims& out_shape, char* out) {
  if (dt == DType::F64) return SumToTyped<double>(shape, x, out_shape, out);
  return SumToTyped<float>(shape, x, out_shape, out);
}

double SumContiguous(DType dt, const char* x, int64_t n) {
  if (dt == DType::F64) return SumRow(reinterpret_cast<const double*>(x), n, 1);
  return SumRow(reinterpret_cast<const float*>(x), n, 1);
}

int64_t ReduceTargetId() { return HWY_TARGET; }

}  // namespace ag::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ag::kernels {

HWY_EXPORT(SumTo);
HWY_EXPORT(ReduceTargetId);
HWY_EXPORT(SumContiguous);

double sum_contiguous(DType dt, const char* x, int64_t n) { return HWY_DYNAMIC_DISPATCH(SumContiguous)(dt, x, n); }

double merge_block_sums(const double* sums, int64_t count) {
  // The same binary-counter merge as SumRow, one level up.
  double partial[64];
  int depth = 0;
  for (int64_t j = 0; j < count; ++j) {
    double s = sums[j];
    for (uint64_t c = static_cast<uint64_t>(j); c & 1; c >>= 1) s = partial[--depth] + s;
    partial[depth++] = s;
  }
  if (depth == 0) return 0.0;
  double t = partial[depth - 1];
  for (int k = depth - 2; k >= 0; --k) t = partial[k] + t;
  return t;
}

void sum_to(DType dt, const Dims& shape, View x, const Dims& out_shape, char* out) {
  HWY_DYNAMIC_DISPATCH(SumTo)(dt, shape, x, out_shape, out);
}

int64_t reduce_target() { return HWY_DYNAMIC_DISPATCH(ReduceTargetId)(); }

}  // namespace ag::kernels
#endif  // HWY_ONCE
