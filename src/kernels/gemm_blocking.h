// Shape tests and blocking constants of the matrix product, shared by the
// kernels (gemm.cc, compiled per SIMD target) and the task grid
// (gemm_grid.cc). Internal to the kernels.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/gemm.h"

namespace ag::kernels {

// Products up to this many multiply-adds take the unpacked path.
constexpr int64_t kSmallMacs = 32 * 32 * 32;
inline bool small_product(const GemmArgs& g) {
  return g.m == 0 || g.n == 0 || g.k == 0 || g.m * g.n <= kSmallMacs / g.k;
}
// Depth of a packed block in bytes per element row. Products of fewer than
// kDeepRows rows (a batch through a layer) take KC = 128 floats or 64
// doubles: a KC x NR panel of B (24 KiB on AVX-512) stays in L1, and so
// does the transposing pack of a column-major B (64x256x784 with W^T ran
// 1.15x slower at KC 1024). Larger ones take KC = 1024 floats or 512
// doubles: their C no longer fits a cache, and deep blocks read and write
// it once per 1024 multiply-adds of each element, while the micro-kernel's
// panel of B streams from L2, which keeps up. A 2048^3 product on one
// AVX-512 core: 160 GFLOP/s at KC 1024 (with the row blocks and task sizes
// below), 133 at KC 128, where C went through the caches 16 times. The
// depth follows from the shape alone, as the sums' order must.
constexpr size_t kKCBytes = 512, kDeepKCBytes = 4096;
constexpr int64_t kDeepRows = 256;
// Whether g takes the deep blocks: at least kDeepRows rows, and a k longer
// than one shallow block (else both depths sum alike, and the shallow
// path's layout choices stay).
inline bool deep_blocks(const GemmArgs& g) {
  return g.m >= kDeepRows && g.k * static_cast<int64_t>(itemsize(g.dt)) > static_cast<int64_t>(kKCBytes);
}
// Rows of A per block of PackedTile (512 KiB of f32 A at KC 1024): the
// rows of a task run block by block over one packed block of B.
constexpr size_t kBlockRows = 128;
// Where split_k may cut k: a multiple of this many bytes of an element row.
constexpr size_t kSplitAlignBytes = 512;
// Row-major B is read in place, unpacked, up to this k (see PackedTile).
constexpr int64_t kDirectBMaxK = 16;

// A product of at most this many columns whose A is column-major (a_rs = 1:
// a transposed operand, as in a classifier weight's gradient h^T g) takes
// NarrowTile: vectors run down the columns of C along A's contiguous
// columns, so every lane is used (a panel of B would use n of 16).
// Such a product whose A rows and B columns are both contiguous along k
// (h W^T with W row-major: a classifier's forward) takes DotTile instead:
// vectors run along k, one accumulator per element of C, summed across
// lanes at the end. So does one whose B columns are not contiguous (x W
// with W stored [in, out]), on a copy of B^T, when k is long enough for the
// sums across lanes to pay and the copy stays in L2.
constexpr int64_t kNarrowCols = 12;
inline bool narrow_columns(const GemmArgs& g) { return g.n <= kNarrowCols && g.n > 1; }
inline bool narrow_product(const GemmArgs& g) { return narrow_columns(g) && g.a_rs == 1 && g.a_cs != 1; }
constexpr int64_t kDotCopyMinK = 128;
constexpr int64_t kDotCopyBytes = int64_t{128} << 10;
inline bool dot_product(const GemmArgs& g) {
  if (!narrow_columns(g) || g.a_cs != 1 || g.a_rs == 1) return false;
  return g.b_rs == 1 || (g.k >= kDotCopyMinK && g.n * g.k * static_cast<int64_t>(itemsize(g.dt)) <= kDotCopyBytes);
}

// A product of at most kNarrowCols rows and more columns (a classifier
// weight's gradient g^T h with W stored [out, in]) runs as its transpose
// C^T = B^T A^T, written through C's strides, when that is narrow or dot.
inline GemmArgs transposed(const GemmArgs& g) {
  GemmArgs t = g;
  t.m = g.n, t.n = g.m;
  t.a = g.b, t.a_rs = g.b_cs, t.a_cs = g.b_rs;
  t.b = g.a, t.b_rs = g.a_cs, t.b_cs = g.a_rs;
  t.c_rs = g.c_cs, t.c_cs = g.c_rs;
  return t;
}
inline bool narrow_rows(const GemmArgs& g) {
  if (g.m > kNarrowCols || g.n <= kNarrowCols) return false;
  const GemmArgs t = transposed(g);
  return narrow_product(t) || dot_product(t);
}

// Runs rows [i0, i1) x columns [j0, j1) of C on the best compiled target;
// small: g is a whole product for the unpacked paths.
void gemm_tile(const GemmArgs& g, int64_t i0, int64_t i1, int64_t j0, int64_t j1, bool small);
// Rows [i0, i1) of a split product's finishing pass (see gemm_finish).
void gemm_finish_rows(const GemmArgs& g, int64_t i0, int64_t i1);

}  // namespace ag::kernels
