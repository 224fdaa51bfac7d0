// GEMM: cache blocking with packed panels and a register-blocked micro-kernel
// (Goto's scheme), compiled for each Highway target. Per task (a tile of C of
// up to 4096 rows x ~256 or ~1024 columns, see the task grid in gemm_grid.cc):
//   for each KC block of k:    pack the task's KC x cols block of B into
//                              NR-column panels (stays in L2)
//     for each kBlockRows rows: pack that rows x KC block of A into MR-row
//                              panels (unless read in place)
//       for each NR columns:
//         for each MR rows:    micro-kernel: MR x NR accumulators in registers
// Packing reads A and B through their strides, so transposed operands cost
// nothing beyond the packing itself. Tiny products and single rows or
// columns (matrix-vector, dot) take unpacked paths, and so do products of at
// most 12 columns whose A is column-major (NarrowTile) or whose A rows run
// along k (DotTile, over B's columns or a copy of B^T). A small batch times
// a large row-major B is summed over k in two parts, one per half of B's
// rows (split_k in gemm_grid.cc). The shape tests that choose a path, and
// the blocking constants, are in gemm_blocking.h.
#include "kernels/targets.h"  // first: selects the targets

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <type_traits>

#include "kernels/gemm.h"
#include "kernels/gemm_blocking.h"

#ifndef AG_KERNELS_GEMM_SCRATCH_
#define AG_KERNELS_GEMM_SCRATCH_
namespace ag::kernels {
namespace {

// Per-thread packing buffers, kept between calls so a task does not pay for
// allocation (and page faults) each time.
class Scratch {
 public:
  ~Scratch() { std::free(p_); }
  void* get(size_t bytes) {
    if (bytes > n_) {
      void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
      if (p == nullptr) throw std::bad_alloc();
      std::free(p_);
      p_ = p;
      n_ = bytes;
    }
    return p_;
  }

 private:
  void* p_ = nullptr;
  size_t n_ = 0;
};

void* scratch(size_t bytes) {
  thread_local Scratch s;
  return s.get(bytes);
}

// The calling thread's buffer for the second parts of split products.
void* partial_scratch(size_t bytes) {
  thread_local Scratch s;
  return s.get(bytes);
}

}  // namespace
}  // namespace ag::kernels
#endif  // AG_KERNELS_GEMM_SCRATCH_

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/kernels/gemm.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "kernels/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ag::kernels::HWY_NAMESPACE {

// Micro-tile shape: MR rows x NV vectors of accumulators, sized to the
// register file (32 vector registers on AVX-512, 16 below).
#if HWY_TARGET <= HWY_AVX3
constexpr int kMR = 8;
constexpr int kNV = 3;
#elif HWY_TARGET == HWY_SCALAR
constexpr int kMR = 4;
constexpr int kNV = 4;
#else
constexpr int kMR = 6;
constexpr int kNV = 2;
#endif

// c[0, n) = alpha * acc + beta * c on the first block of k (c not read when
// beta is 0), c + alpha * acc on later ones, then relu on the last block
// when asked (as the relu kernel: x > 0 ? x : +0, NaN stays). Separate
// multiply and add (no FMA) so that full and partial tiles round alike.
template <class D>
HWY_INLINE void UpdateC(D d, hn::Vec<D> acc, hn::TFromD<D>* c, size_t n, hn::TFromD<D> alpha,
                        hn::TFromD<D> beta, bool first, bool relu) {
  using T = hn::TFromD<D>;
  const bool full = n == hn::Lanes(d);
  if (alpha != T(1)) acc = hn::Mul(hn::Set(d, alpha), acc);
  if (!first || beta != T(0)) {
    hn::Vec<D> old = full ? hn::LoadU(d, c) : LoadTail(d, c, n);
    if (first && beta != T(1)) old = hn::Mul(hn::Set(d, beta), old);
    acc = hn::Add(old, acc);
  }
  if (relu) acc = hn::IfThenZeroElse(hn::Le(acc, hn::Zero(d)), acc);
  if (full) {
    hn::StoreU(acc, d, c);
  } else {
    StoreTail(d, acc, c, n);
  }
}

// UpdateC for one element (the same operations, so the same bits).
template <class T>
HWY_INLINE void UpdateOne(T acc, T* c, T alpha, T beta, bool first, bool relu) {
  if (alpha != T(1)) acc = alpha * acc;
  if (!first || beta != T(0)) acc = (first && beta != T(1) ? beta * *c : *c) + acc;
  *c = relu && acc <= T(0) ? T(0) : acc;
}

// Depth of a packed block: KC elements.
template <class T>
constexpr size_t KC() {
  return kKCBytes / sizeof(T);
}
// The depth of PackedTile's blocks for the product g.
template <class T>
size_t PackedKC(const GemmArgs& g) {
  return (deep_blocks(g) ? kDeepKCBytes : kKCBytes) / sizeof(T);
}

// The kc-deep product of MR rows of A (ap[r * a_rs + p]: a packed panel, or
// row-major A read in place) and a panel of NV vectors of B (bp[p * b_step +
// j]: packed, b_step = NV * N, or row-major B read in place), added into the
// MR x nr corner of C. Ragged edges take narrower kernels rather than
// padding: the last panel of B is only as wide as its columns (fewer
// vectors), and the last rows go by MR of 4, 2 and 1.
template <class T, int MR, int NV>
HWY_NOINLINE void MicroTile(size_t kc, const T* HWY_RESTRICT ap, int64_t a_rs, int64_t a_cs, const T* HWY_RESTRICT bp,
                            int64_t b_step, T* c, int64_t c_rs, size_t nr, T alpha, T beta, bool first, bool relu) {
  const hn::ScalableTag<T> d;
  using V = hn::Vec<decltype(d)>;
  const size_t N = hn::Lanes(d);
  V acc[MR][NV];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) __builtin_prefetch(c + r * c_rs);
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[r][v] = hn::Zero(d);
  }
  for (size_t p = 0; p < kc; ++p) {
    V b[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) b[v] = hn::LoadU(d, bp + v * N);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const V a = hn::Set(d, ap[r * a_rs]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[r][v] = hn::MulAdd(a, b[v], acc[r][v]);
    }
    ap += a_cs;
    bp += b_step;
  }
  if (nr == NV * N) {  // full width: straight from the registers
    // A plain product (alpha 1, no relu) stores its first block of k and
    // adds the later ones: UpdateC's operations without its tests per
    // vector, which cost as much as the multiply-adds when k is short.
    if (alpha == T(1) && !relu && (!first || beta == T(0))) {
      if (first) {
#pragma GCC unroll 8
        for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 4
          for (int v = 0; v < NV; ++v) hn::StoreU(acc[r][v], d, c + r * c_rs + v * N);
        }
      } else {
#pragma GCC unroll 8
        for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 4
          for (int v = 0; v < NV; ++v) {
            T* cv = c + r * c_rs + v * N;
            hn::StoreU(hn::Add(hn::LoadU(d, cv), acc[r][v]), d, cv);
          }
        }
      }
      return;
    }
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) UpdateC(d, acc[r][v], c + r * c_rs + v * N, N, alpha, beta, first, relu);
    }
    return;
  }
  // Last vector partial: through a buffer, so that the accumulators are only
  // ever indexed by constants (and stay in registers).
  HWY_ALIGN T tile[MR * NV * hn::MaxLanes(d)];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) hn::Store(acc[r][v], d, tile + (r * NV + v) * N);
  }
  for (int r = 0; r < MR; ++r) {
    for (size_t j = 0; j < nr; j += N) {
      UpdateC(d, hn::Load(d, tile + r * NV * N + j), c + r * c_rs + j, std::min(N, nr - j), alpha, beta, first,
              relu);
    }
  }
}

// The micro-kernel for mr rows (a full panel of kMR, or fewer split into 4,
// 2 and 1) and a panel of B of nv vectors.
template <class T, int MR>
HWY_INLINE void MicroTileRows(size_t nv, size_t kc, const T* ap, int64_t a_rs, int64_t a_cs, const T* bp, int64_t b_step,
                              T* c, int64_t c_rs, size_t nr, T alpha, T beta, bool first, bool relu) {
  static_assert(kNV <= 4, "covers up to 4 vectors");
  switch (nv) {
    case 1: return MicroTile<T, MR, 1>(kc, ap, a_rs, a_cs, bp, b_step, c, c_rs, nr, alpha, beta, first, relu);
    case 2: return MicroTile<T, MR, HWY_MIN(2, kNV)>(kc, ap, a_rs, a_cs, bp, b_step, c, c_rs, nr, alpha, beta, first, relu);
    case 3: return MicroTile<T, MR, HWY_MIN(3, kNV)>(kc, ap, a_rs, a_cs, bp, b_step, c, c_rs, nr, alpha, beta, first, relu);
    default: return MicroTile<T, MR, kNV>(kc, ap, a_rs, a_cs, bp, b_step, c, c_rs, nr, alpha, beta, first, relu);
  }
}

template <class T>
HWY_INLINE void MicroTileN(size_t mr, size_t nv, size_t kc, const T* ap, int64_t a_rs, int64_t a_cs, const T* bp,
                           int64_t b_step, T* c, int64_t c_rs, size_t nr, T alpha, T beta, bool first, bool relu) {
  if (mr == kMR) return MicroTileRows<T, kMR>(nv, kc, ap, a_rs, a_cs, bp, b_step, c, c_rs, nr, alpha, beta, first, relu);
  for (size_t r = 0; r < mr;) {
    const T* a = ap + static_cast<int64_t>(r) * a_rs;
    T* cr = c + static_cast<int64_t>(r) * c_rs;
    if (mr - r >= 4) {
      MicroTileRows<T, 4>(nv, kc, a, a_rs, a_cs, bp, b_step, cr, c_rs, nr, alpha, beta, first, relu);
      r += 4;
    } else if (mr - r >= 2) {
      MicroTileRows<T, 2>(nv, kc, a, a_rs, a_cs, bp, b_step, cr, c_rs, nr, alpha, beta, first, relu);
      r += 2;
    } else {
      MicroTileRows<T, 1>(nv, kc, a, a_rs, a_cs, bp, b_step, cr, c_rs, nr, alpha, beta, first, relu);
      r += 1;
    }
  }
}

#if HWY_TARGET != HWY_SCALAR
// Transposes the 128-bit block of L = 16 / sizeof(T) columns src + q * cs
// (L elements each) into L rows dst + p * dst_stride.
HWY_INLINE void TransposeBlock(const float* src, int64_t cs, float* dst, size_t dst_stride) {
  const hn::Full128<float> d;
  const hn::Full128<double> d64;
  const auto r0 = hn::LoadU(d, src), r1 = hn::LoadU(d, src + cs);
  const auto r2 = hn::LoadU(d, src + 2 * cs), r3 = hn::LoadU(d, src + 3 * cs);
  const auto lo01 = hn::BitCast(d64, hn::InterleaveLower(d, r0, r1));  // r0[0] r1[0] r0[1] r1[1]
  const auto lo23 = hn::BitCast(d64, hn::InterleaveLower(d, r2, r3));
  const auto hi01 = hn::BitCast(d64, hn::InterleaveUpper(d, r0, r1));  // r0[2] r1[2] r0[3] r1[3]
  const auto hi23 = hn::BitCast(d64, hn::InterleaveUpper(d, r2, r3));
  hn::StoreU(hn::BitCast(d, hn::InterleaveLower(d64, lo01, lo23)), d, dst);
  hn::StoreU(hn::BitCast(d, hn::InterleaveUpper(d64, lo01, lo23)), d, dst + dst_stride);
  hn::StoreU(hn::BitCast(d, hn::InterleaveLower(d64, hi01, hi23)), d, dst + 2 * dst_stride);
  hn::StoreU(hn::BitCast(d, hn::InterleaveUpper(d64, hi01, hi23)), d, dst + 3 * dst_stride);
}

HWY_INLINE void TransposeBlock(const double* src, int64_t cs, double* dst, size_t dst_stride) {
  const hn::Full128<double> d;
  const auto r0 = hn::LoadU(d, src), r1 = hn::LoadU(d, src + cs);
  hn::StoreU(hn::InterleaveLower(d, r0, r1), d, dst);
  hn::StoreU(hn::InterleaveUpper(d, r0, r1), d, dst + dst_stride);
}
#endif

// Rows [0, mc) x cols [0, kc) of A (any layout but row-major, which is read
// in place) into panels of MR rows, interleaved: dst[panel][p][r], panels
// MR * KC apart (the last panel's missing rows are never read). Column-major
// A (a transposed operand) is a copy of MR contiguous elements per column.
template <class T>
void PackA(const T* a, int64_t rs, int64_t cs, size_t mc, size_t kc, size_t KC, T* HWY_RESTRICT dst) {
  const size_t panel = kMR * KC;
  for (size_t i0 = 0; i0 < mc; i0 += kMR) {
    const size_t mr = std::min<size_t>(kMR, mc - i0);
    const T* src = a + static_cast<int64_t>(i0) * rs;
    T* out = dst + i0 / kMR * panel;
    for (size_t p = 0; p < kc; ++p) {
      const T* col = src + static_cast<int64_t>(p) * cs;
      if (rs == 1 && mr == kMR) {
        std::memcpy(out + p * kMR, col, sizeof(T) * kMR);
      } else {
        for (size_t r = 0; r < mr; ++r) out[p * kMR + r] = col[static_cast<int64_t>(r) * rs];
      }
    }
  }
}


// Width of the panel of B that starts at column j of nc: NR, or for the last
// panel its columns rounded up to whole vectors.
HWY_INLINE size_t PanelWidth(size_t j, size_t nc, size_t NR, size_t N) {
  return std::min(NR, (nc - j + N - 1) / N * N);
}

// Rows [0, kc) x cols [0, nc) of B into panels of NR columns (the last one
// narrower, see PanelWidth), zero-padded: panel jp at dst + jp * NR * kc,
// element [p][j] of a panel of width w at p * w + j. Row-major B is read row
// by row (streaming), anything else column by column.
template <class T>
void PackB(const T* b, int64_t rs, int64_t cs, size_t kc, size_t nc, size_t NR, T* HWY_RESTRICT dst) {
  const hn::ScalableTag<T> d;
  const size_t N = hn::Lanes(d);
  const size_t panels = (nc + NR - 1) / NR;
  const size_t j_last = (panels - 1) * NR, w_last = PanelWidth(j_last, nc, NR, N);
  T* last = dst + j_last * kc;
  if (cs == 1) {
    for (size_t p = 0; p < kc; ++p) {
      const T* row = b + static_cast<int64_t>(p) * rs;
      for (size_t jp = 0; jp + 1 < panels; ++jp) {
#pragma GCC unroll 4
        for (int v = 0; v < kNV; ++v) hn::Store(hn::LoadU(d, row + jp * NR + v * N), d, dst + (jp * kc + p) * NR + v * N);
      }
      for (size_t j = j_last; j < nc; j += N) {  // zeros past nc
        const size_t n = std::min(N, nc - j);
        hn::Store(n == N ? hn::LoadU(d, row + j) : LoadTail(d, row + j, n), d, last + p * w_last + (j - j_last));
      }
    }
    return;  // the tails above wrote the zero padding
  }
  {
    size_t j = 0;
#if HWY_TARGET != HWY_SCALAR
    if (rs == 1) {  // column-major (a transposed operand): 128-bit block transposes
      constexpr size_t L = 16 / sizeof(T);
      for (; j + L <= nc; j += L) {
        const T* col = b + static_cast<int64_t>(j) * cs;
        const size_t w = j < j_last ? NR : w_last;
        T* out = dst + (j / NR) * kc * NR + j % NR;  // L divides N: never across panels
        size_t p = 0;
        for (; p + L <= kc; p += L) TransposeBlock(col + p, cs, out + p * w, w);
        for (; p < kc; ++p) {
          for (size_t q = 0; q < L; ++q) out[p * w + q] = col[static_cast<int64_t>(q) * cs + static_cast<int64_t>(p)];
        }
      }
    }
#endif
    for (; j < nc; ++j) {
      const T* col = b + static_cast<int64_t>(j) * cs;
      const size_t w = j < j_last ? NR : w_last;
      T* out = dst + (j / NR) * kc * NR + j % NR;
      for (size_t p = 0; p < kc; ++p) out[p * w] = col[static_cast<int64_t>(p) * rs];
    }
  }
  for (size_t p = 0; p < kc; ++p) {
    for (size_t j = nc - j_last; j < w_last; ++j) last[p * w_last + j] = T(0);
  }
}

// The rows [i0, i1) x cols [j0, j1) of C, blocked and packed. The packed
// block of B (KC x up to task_cols) stays in L2 while the blocks of A go by.
template <class T>
void PackedTile(const GemmArgs& g, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
  const hn::ScalableTag<T> d;
  const size_t N = hn::Lanes(d);
  const size_t NR = kNV * N;
  const size_t KC = PackedKC<T>(g);
  const size_t mc = static_cast<size_t>(i1 - i0), nc = static_cast<size_t>(j1 - j0);
  const size_t a_elems = (std::min(mc, kBlockRows) + kMR - 1) / kMR * kMR * KC;
  const size_t b_elems = (nc + NR - 1) / NR * NR * KC;
  T* abuf = static_cast<T*>(scratch(sizeof(T) * (a_elems + b_elems)));
  T* bbuf = abuf + a_elems;
  const T* A = reinterpret_cast<const T*>(g.a);
  const T* B = reinterpret_cast<const T*>(g.b);
  T* C = reinterpret_cast<T*>(g.c);
  const T alpha = static_cast<T>(g.alpha), beta = static_cast<T>(g.beta);
  // Row- or column-major A is read in place (the micro-kernel's broadcasts
  // stream along its rows, or take MR contiguous elements per column);
  // other layouts are packed per KC block, and so is column-major A at the
  // deep KC, where one micro-tile would touch KC pages of it (a 1024^3
  // product with A transposed ran at half speed in place).
  const bool a_direct = g.a_cs == 1 || (g.a_rs == 1 && !deep_blocks(g));
  // Row-major B of a short k is read in place too: packing it would cost as
  // much as the product (a classifier's input gradient g W, k = its
  // classes), and so few rows stay in L1 at any stride. Only a last panel
  // that ends inside a vector is packed (its loads would run past the row).
  const bool b_direct = g.b_cs == 1 && g.k <= kDirectBMaxK;
  const size_t j_ragged = nc % N == 0 ? nc : (nc - 1) / NR * NR;  // first column of a packed panel
  for (int64_t pc = 0; pc < g.k; pc += static_cast<int64_t>(KC)) {
    const size_t kc = static_cast<size_t>(std::min<int64_t>(static_cast<int64_t>(KC), g.k - pc));
    const T* b0 = B + pc * g.b_rs + j0 * g.b_cs;
    if (!b_direct) {
      PackB(b0, g.b_rs, g.b_cs, kc, nc, NR, bbuf);
    } else if (j_ragged < nc) {
      PackB(b0 + j_ragged, g.b_rs, g.b_cs, kc, nc - j_ragged, NR, bbuf + j_ragged * kc);
    }
    for (size_t ic = 0; ic < mc; ic += kBlockRows) {
      const size_t mb = std::min(kBlockRows, mc - ic);
      const int64_t i = i0 + static_cast<int64_t>(ic);
      const T* a0 = A + i * g.a_rs + pc * g.a_cs;
      if (!a_direct) PackA(a0, g.a_rs, g.a_cs, mb, kc, KC, abuf);
      const int64_t a_rs = a_direct ? g.a_rs : 1, a_cs = a_direct ? g.a_cs : kMR;
      for (size_t jr = 0; jr < nc; jr += NR) {
        const size_t w = PanelWidth(jr, nc, NR, N), nv = w / N;
        const bool in_place = b_direct && jr < j_ragged;
        const T* bp = in_place ? b0 + jr : bbuf + jr * kc;
        const int64_t b_step = in_place ? g.b_rs : static_cast<int64_t>(w);
        T* cp = C + i * g.c_rs + j0 + static_cast<int64_t>(jr);
        for (size_t ir = 0; ir < mb; ir += kMR) {
          const T* ap = a_direct ? a0 + static_cast<int64_t>(ir) * g.a_rs : abuf + ir * KC;
          MicroTileN<T>(std::min<size_t>(kMR, mb - ir), nv, kc, ap, a_rs, a_cs, bp, b_step,
                        cp + static_cast<int64_t>(ir) * g.c_rs, g.c_rs, std::min(NR, nc - jr), alpha, beta,
                        pc == 0, g.relu && pc + static_cast<int64_t>(kc) == g.k);
        }
      }
    }
  }
}

// Unpacked path for tiny products, a single row of C, and k = 0: one vector
// of C at a time.
template <class T>
void SmallGemm(const GemmArgs& g) {
  const hn::ScalableTag<T> d;
  const size_t N = hn::Lanes(d);
  const T* A = reinterpret_cast<const T*>(g.a);
  const T* B = reinterpret_cast<const T*>(g.b);
  const T alpha = g.k == 0 ? T(1) : static_cast<T>(g.alpha);  // k = 0: C = beta * C
  const T beta = static_cast<T>(g.beta);
  HWY_ALIGN T buf[hn::MaxLanes(d)];
  for (int64_t i = 0; i < g.m; ++i) {
    T* crow = reinterpret_cast<T*>(g.c) + i * g.c_rs;
    const T* arow = A + i * g.a_rs;
    for (int64_t j = 0; j < g.n; j += static_cast<int64_t>(N)) {
      const size_t nn = static_cast<size_t>(std::min<int64_t>(static_cast<int64_t>(N), g.n - j));
      auto acc = hn::Zero(d);
      for (int64_t p = 0; p < g.k; ++p) {
        const T* brow = B + p * g.b_rs + j * g.b_cs;
        hn::Vec<decltype(d)> bv;
        if (g.b_cs == 1) {
          bv = nn == N ? hn::LoadU(d, brow) : LoadTail(d, brow, nn);
        } else {
          for (size_t q = 0; q < N; ++q) buf[q] = q < nn ? brow[static_cast<int64_t>(q) * g.b_cs] : T(0);
          bv = hn::Load(d, buf);
        }
        acc = hn::MulAdd(hn::Set(d, arow[p * g.a_cs]), bv, acc);
      }
      UpdateC(d, acc, crow + j, nn, alpha, beta, true, g.relu);
    }
  }
}

// A product with one column (matrix-vector, dot): each element of C is a dot
// product along k, in vectors with four accumulators merged in a fixed order.
template <class T>
void DotRows(const GemmArgs& g) {
  const hn::ScalableTag<T> d;
  using V = hn::Vec<decltype(d)>;
  const size_t N = hn::Lanes(d);
  const T* B = reinterpret_cast<const T*>(g.b);
  const T alpha = g.k == 0 ? T(1) : static_cast<T>(g.alpha);
  const T beta = static_cast<T>(g.beta);
  HWY_ALIGN T abuf[hn::MaxLanes(d)];
  HWY_ALIGN T bbuf[hn::MaxLanes(d)];
  // Elements [p, p + n) of a strided vector as a vector (zeros past n).
  auto load = [&](const T* x, int64_t stride, int64_t p, size_t n, T* buf) {
    if (stride == 1) return n == N ? hn::LoadU(d, x + p) : LoadTail(d, x + p, n);
    for (size_t q = 0; q < N; ++q) buf[q] = q < n ? x[(p + static_cast<int64_t>(q)) * stride] : T(0);
    return hn::Load(d, buf);
  };
  const int64_t step = static_cast<int64_t>(N);
  for (int64_t i = 0; i < g.m; ++i) {
    const T* arow = reinterpret_cast<const T*>(g.a) + i * g.a_rs;
    V acc[4] = {hn::Zero(d), hn::Zero(d), hn::Zero(d), hn::Zero(d)};
    int64_t p = 0;
    for (; p + 4 * step <= g.k; p += 4 * step) {
#pragma GCC unroll 4
      for (int u = 0; u < 4; ++u) {
        const int64_t q = p + u * step;
        acc[u] = hn::MulAdd(load(arow, g.a_cs, q, N, abuf), load(B, g.b_rs, q, N, bbuf), acc[u]);
      }
    }
    for (int u = 0; p < g.k; p += step, ++u) {
      const size_t n = static_cast<size_t>(std::min(step, g.k - p));
      acc[u] = hn::MulAdd(load(arow, g.a_cs, p, n, abuf), load(B, g.b_rs, p, n, bbuf), acc[u]);
    }
    const V sum = hn::Add(hn::Add(acc[0], acc[1]), hn::Add(acc[2], acc[3]));
    HWY_ALIGN T lane[hn::MaxLanes(d)];
    hn::Store(hn::SumOfLanes(d, sum), d, lane);
    T* c = reinterpret_cast<T*>(g.c) + i * g.c_rs;
    T y = alpha == T(1) ? lane[0] : alpha * lane[0];
    if (beta != T(0)) y = (beta == T(1) ? *c : beta * *c) + y;
    if (g.relu && y <= T(0)) y = T(0);
    *c = y;
  }
}

// The narrow and dot paths take the columns in blocks of at most this many
// (made as equal as they can be: 10 = 5 + 5), each block's accumulators in
// registers; one instance per block width keeps the code small. Both are
// compiled for AVX2 and above only (SSE4 and scalar take the packed path):
// the library's size has a cap (tests/abi/check_closure.sh).
constexpr int kBlockCols = 6;
// Vectors of rows of a narrow block, rows of a dot block: 4 x 6
// accumulators and 4 vectors of A in AVX-512's 32 registers, 2 x 6 and
// 2 + 1 in 16.
#if HWY_TARGET <= HWY_AVX3
constexpr int kNarrowVectors = 4, kDotRows = 4;
#else
constexpr int kNarrowVectors = 2, kDotRows = 2;
#endif

// Rows [i, i + rows) x columns [j0, j0 + NC) of a narrow product
// (narrow_product), rows <= NV vectors: NC accumulators per vector, one
// broadcast of B per column and k step, summed per KC block from zero, then
// added into C row by row as UpdateC does.
template <class T, int NC>
HWY_NOINLINE void NarrowBlock(const GemmArgs& g, int64_t i, size_t rows, int64_t j0) {
  constexpr int NV = kNarrowVectors;
  const hn::ScalableTag<T> d;
  using V = hn::Vec<decltype(d)>;
  const size_t N = hn::Lanes(d);
  const T* A = reinterpret_cast<const T*>(g.a);
  const T* B = reinterpret_cast<const T*>(g.b) + j0 * g.b_cs;
  const T alpha = static_cast<T>(g.alpha), beta = static_cast<T>(g.beta);
  const int64_t KCn = static_cast<int64_t>(KC<T>());
  // The accumulators column by column (row r of column j at j * NV * N + r).
  HWY_ALIGN T tile[NC * NV * hn::MaxLanes(d)];
  for (int64_t pc = 0; pc < g.k; pc += KCn) {
    const int64_t pe = std::min(g.k, pc + KCn);
    V acc[NC][NV];
#pragma GCC unroll 6
    for (int j = 0; j < NC; ++j) {
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[j][v] = hn::Zero(d);
    }
    // A whole run of rows, or a partial one (separate loop bodies, as in
    // DotBlock).
    auto steps = [&](auto load) HWY_ATTR {
      for (int64_t p = pc; p < pe; ++p) {
        const T* a = A + p * g.a_cs + i;
        V av[NV];
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) av[v] = load(a, static_cast<size_t>(v) * N);
        const T* b = B + p * g.b_rs;
#pragma GCC unroll 6
        for (int j = 0; j < NC; ++j) {
          const V bj = hn::Set(d, b[j * g.b_cs]);
#pragma GCC unroll 4
          for (int v = 0; v < NV; ++v) acc[j][v] = hn::MulAdd(av[v], bj, acc[j][v]);
        }
      }
    };
    if (rows == NV * N) {
      steps([&](const T* a, size_t lo) HWY_ATTR { return hn::LoadU(d, a + lo); });
    } else {
      steps([&](const T* a, size_t lo) HWY_ATTR {
        return rows >= lo + N ? hn::LoadU(d, a + lo) : rows > lo ? LoadTail(d, a + lo, rows - lo) : hn::Zero(d);
      });
    }
    const bool first = pc == 0, relu = g.relu && pe == g.k;
    const bool plain = first && beta == T(0) && alpha == T(1) && !relu;
    if (g.c_rs == 1 && plain && rows == NV * N) {
      // C's rows are contiguous (a transposed product): each accumulator is
      // a run of C's column, stored as a vector.
      T* c = reinterpret_cast<T*>(g.c) + i + j0 * g.c_cs;
#pragma GCC unroll 6
      for (int j = 0; j < NC; ++j) {
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) hn::StoreU(acc[j][v], d, c + j * g.c_cs + static_cast<int64_t>(v * N));
      }
      continue;
    }
#pragma GCC unroll 6
    for (int j = 0; j < NC; ++j) {
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) hn::Store(acc[j][v], d, tile + (j * NV + v) * N);
    }
    if (g.c_rs == 1) {
      // The same with UpdateC, in a loop (one per accumulator would make the
      // code several times larger).
      T* c = reinterpret_cast<T*>(g.c) + i + j0 * g.c_cs;
      for (int j = 0; j < NC; ++j) {
        for (size_t lo = 0; lo < rows; lo += N) {
          UpdateC(d, hn::Load(d, tile + static_cast<size_t>(j * NV) * N + lo), c + j * g.c_cs + lo,
                  std::min(N, rows - lo), alpha, beta, first, relu);
        }
      }
      continue;
    }
    // Element by element: at most 6 per row, where a gather of a row's
    // columns took as long as the multiply-adds; a plain product (the
    // common case) only copies.
    T* c = reinterpret_cast<T*>(g.c) + i * g.c_rs + j0 * g.c_cs;
    if (plain) {
      for (size_t r = 0; r < rows; ++r, c += g.c_rs) {
#pragma GCC unroll 6
        for (int j = 0; j < NC; ++j) c[j * g.c_cs] = tile[static_cast<size_t>(j * NV) * N + r];
      }
    } else {
      for (size_t r = 0; r < rows; ++r, c += g.c_rs) {
#pragma GCC unroll 6
        for (int j = 0; j < NC; ++j) {
          UpdateOne(tile[static_cast<size_t>(j * NV) * N + r], c + j * g.c_cs, alpha, beta, first, relu);
        }
      }
    }
  }
}

// The lanes of a vector summed, for N vectors at once: FoldLanes returns one
// vector whose lane B * q + r (B lanes per 128-bit block, nb = N / B
// blocks) holds the sum of v[nb * r + q]. Vectors are folded in pairs
// (halves, then 128-bit blocks, then lanes within a block), some two
// shuffles per vector where SumOfLanes takes four and a broadcast. Each
// vector is summed by the same tree whatever its neighbours, so the bits of
// a sum do not depend on the tile it is in. For AVX2 and above, as DotBlock.
#if HWY_TARGET <= HWY_AVX2
template <class D>
HWY_INLINE hn::Vec<D> FoldHalves(D d, hn::Vec<D> a, hn::Vec<D> b) {
  return hn::Add(hn::ConcatLowerLower(d, b, a), hn::ConcatUpperUpper(d, b, a));
}
#if HWY_TARGET <= HWY_AVX3
// Blocks (a0 + a1, a2 + a3, b0 + b1, b2 + b3) of a's and b's 128-bit blocks.
HWY_INLINE hn::Vec512<float> FoldBlocks(hn::Vec512<float> a, hn::Vec512<float> b) {
  return hn::Add(hn::Vec512<float>{_mm512_shuffle_f32x4(a.raw, b.raw, _MM_SHUFFLE(2, 0, 2, 0))},
                 hn::Vec512<float>{_mm512_shuffle_f32x4(a.raw, b.raw, _MM_SHUFFLE(3, 1, 3, 1))});
}
HWY_INLINE hn::Vec512<double> FoldBlocks(hn::Vec512<double> a, hn::Vec512<double> b) {
  return hn::Add(hn::Vec512<double>{_mm512_shuffle_f64x2(a.raw, b.raw, _MM_SHUFFLE(2, 0, 2, 0))},
                 hn::Vec512<double>{_mm512_shuffle_f64x2(a.raw, b.raw, _MM_SHUFFLE(3, 1, 3, 1))});
}
#endif
template <class D>
HWY_INLINE hn::Vec<D> FoldLanes(D d, const hn::Vec<D>* v) {
  using T = hn::TFromD<D>;
  using V = hn::Vec<D>;
  constexpr size_t N = hn::MaxLanes(D()), B = 16 / sizeof(T);
  static_assert(N == 2 * B || N == 4 * B, "256- or 512-bit vectors");
  V x[B];  // block q of x[n]: v[nb * n + q], partly summed
#pragma GCC unroll 4
  for (size_t n = 0; n < B; ++n) {
#if HWY_TARGET <= HWY_AVX3
    x[n] = FoldBlocks(FoldHalves(d, v[4 * n], v[4 * n + 1]), FoldHalves(d, v[4 * n + 2], v[4 * n + 3]));
#else
    x[n] = FoldHalves(d, v[2 * n], v[2 * n + 1]);
#endif
  }
  // Lanes (or pairs of lanes, as dw) of a and b interleaved, then summed.
  const hn::Repartition<double, D> dw;
  auto fold = [&](auto dl, V a, V b) HWY_ATTR {
    const auto lo = hn::InterleaveLower(dl, hn::BitCast(dl, a), hn::BitCast(dl, b));
    const auto hi = hn::InterleaveUpper(dl, hn::BitCast(dl, a), hn::BitCast(dl, b));
    return hn::Add(hn::BitCast(d, lo), hn::BitCast(d, hi));
  };
  if constexpr (B == 2) {
    return fold(d, x[0], x[1]);
  } else {
    return fold(dw, fold(d, x[0], x[1]), fold(d, x[2], x[3]));
  }
}
#endif

// Rows [i, i + rows) x columns [j0, j0 + NC) of a dot product
// (dot_product), rows <= MR: MR x NC accumulators of vectors along k (zeros
// past k), each summed across its lanes (FoldLanes) when k is done; C
// is then updated row by row as UpdateC does. One pass over k: A's rows and
// B's columns are contiguous, and B (at most 12 columns) stays in L1.
template <class T, int NC>
HWY_NOINLINE void DotBlock(const GemmArgs& g, int64_t i, int rows, int64_t j0) {
  constexpr int MR = kDotRows;
  const hn::ScalableTag<T> d;
  using V = hn::Vec<decltype(d)>;
  const size_t N = hn::Lanes(d);
  const T* A = reinterpret_cast<const T*>(g.a);
  const T* B = reinterpret_cast<const T*>(g.b) + j0 * g.b_cs;
  const T alpha = static_cast<T>(g.alpha), beta = static_cast<T>(g.beta);
  const int64_t step = static_cast<int64_t>(N);
  const T* a[MR];
#pragma GCC unroll 4
  for (int r = 0; r < MR; ++r) a[r] = A + (i + std::min(r, rows - 1)) * g.a_rs;  // spare rows repeat the last
  V acc[MR][NC];
#pragma GCC unroll 4
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 6
    for (int j = 0; j < NC; ++j) acc[r][j] = hn::Zero(d);
  }
  // Whole vectors, then the partial one (a separate loop body: a load that
  // chooses per step keeps the accumulators out of registers).
  auto step_at = [&](int64_t p, auto load) HWY_ATTR {
    V av[MR];
#pragma GCC unroll 4
    for (int r = 0; r < MR; ++r) av[r] = load(a[r] + p);
#pragma GCC unroll 6
    for (int j = 0; j < NC; ++j) {
      const V bj = load(B + j * g.b_cs + p);
#pragma GCC unroll 4
      for (int r = 0; r < MR; ++r) acc[r][j] = hn::MulAdd(av[r], bj, acc[r][j]);
    }
  };
  int64_t p = 0;
  for (; p + step <= g.k; p += step) step_at(p, [&](const T* x) HWY_ATTR { return hn::LoadU(d, x); });
  if (p < g.k) {
    const size_t n = static_cast<size_t>(g.k - p);
    step_at(p, [&](const T* x) HWY_ATTR { return LoadTail(d, x, n); });
  }
  // The sums, accumulator a = r * NC + j in group a / N (zeros pad the
  // last group; the min only keeps the unused index in range), at the lane
  // FoldLanes puts it.
  constexpr int kN = static_cast<int>(hn::MaxLanes(decltype(d)())), kB = 16 / sizeof(T), kNB = kN / kB;
  constexpr int kGroups = (MR * NC + kN - 1) / kN;
  HWY_ALIGN T sums[kGroups * kN];
#pragma GCC unroll 2
  for (int grp = 0; grp < kGroups; ++grp) {
    V v[kN];
#pragma GCC unroll 16
    for (int q = 0; q < kN; ++q) {
      const int a = grp * kN + q;
      v[q] = a < MR * NC ? acc[std::min(a / NC, MR - 1)][a % NC] : hn::Zero(d);
    }
    hn::Store(FoldLanes(d, v), d, sums + grp * kN);
  }
  auto lane = [&](int r, int j) { const int a = r * NC + j, w = a % kN; return a - w + kB * (w % kNB) + w / kNB; };
  if (alpha == T(1) && beta == T(0) && !g.relu) {
    // A plain product (the common case): stores, unrolled so that every
    // index is a constant.
#pragma GCC unroll 4
    for (int r = 0; r < MR; ++r) {
      if (r >= rows) break;
      T* c = reinterpret_cast<T*>(g.c) + (i + r) * g.c_rs + j0 * g.c_cs;
#pragma GCC unroll 6
      for (int j = 0; j < NC; ++j) c[j * g.c_cs] = sums[lane(r, j)];
    }
    return;
  }
  for (int r = 0; r < rows; ++r) {
    T* c = reinterpret_cast<T*>(g.c) + (i + r) * g.c_rs + j0 * g.c_cs;
    for (int j = 0; j < NC; ++j) UpdateOne(sums[lane(r, j)], c + j * g.c_cs, alpha, beta, true, g.relu);
  }
}

// Calls block(width, j0) for the blocks of n columns (kBlockCols), the
// width as a constant (std::integral_constant) so each block's
// accumulators stay in registers.
template <class F>
HWY_INLINE void ColumnBlocks(int64_t n, F&& block) {
  static_assert(kNarrowCols <= 2 * kBlockCols, "blocks are at least 2 wide");
  const int64_t blocks = (n + kBlockCols - 1) / kBlockCols;
  for (int64_t b = 0, j0 = 0; b < blocks; ++b) {
    const int64_t w = n / blocks + (b < n % blocks ? 1 : 0);
    switch (w) {
      case 2: block(std::integral_constant<int, 2>(), j0); break;
      case 3: block(std::integral_constant<int, 3>(), j0); break;
      case 4: block(std::integral_constant<int, 4>(), j0); break;
      case 5: block(std::integral_constant<int, 5>(), j0); break;
      default: block(std::integral_constant<int, 6>(), j0); break;
    }
    j0 += w;
  }
}

// B^T (n x k, row-major) of a k x n B of any strides; 128-bit block
// transposes where B's rows are contiguous.
template <class T>
void CopyTransposed(const T* b, int64_t rs, int64_t cs, int64_t k, int64_t n, T* HWY_RESTRICT dst) {
  int64_t j = 0;
  if (cs == 1) {
    constexpr int64_t L = 16 / sizeof(T);
    for (; j + L <= n; j += L) {
      int64_t p = 0;
      for (; p + L <= k; p += L) TransposeBlock(b + p * rs + j, rs, dst + j * k + p, static_cast<size_t>(k));
      for (; p < k; ++p) {
        for (int64_t q = 0; q < L; ++q) dst[(j + q) * k + p] = b[p * rs + j + q];
      }
    }
  }
  for (; j < n; ++j) {
    for (int64_t p = 0; p < k; ++p) dst[j * k + p] = b[p * rs + j * cs];
  }
}

// Rows [i0, i1) of a dot product: kDotRows rows at a time, the columns in
// blocks.
template <class T>
void DotTile(const GemmArgs& g, int64_t i0, int64_t i1) {
  if (g.b_rs != 1) {  // on a copy of B^T (dot_product)
    T* bt = static_cast<T*>(scratch(sizeof(T) * static_cast<size_t>(g.n * g.k)));
    CopyTransposed(reinterpret_cast<const T*>(g.b), g.b_rs, g.b_cs, g.k, g.n, bt);
    GemmArgs t = g;
    t.b = reinterpret_cast<const char*>(bt);
    t.b_rs = 1;
    t.b_cs = g.k;
    return DotTile<T>(t, i0, i1);
  }
  for (int64_t i = i0; i < i1; i += kDotRows) {
    const int rows = static_cast<int>(std::min<int64_t>(kDotRows, i1 - i));
    ColumnBlocks(g.n, [&](auto w, int64_t j0) HWY_ATTR { DotBlock<T, decltype(w)::value>(g, i, rows, j0); });
  }
}

// Rows [i0, i1) of a narrow product: runs of kNarrowVectors vectors of rows,
// the columns in blocks.
template <class T>
void NarrowTile(const GemmArgs& g, int64_t i0, int64_t i1) {
  const int64_t run = kNarrowVectors * static_cast<int64_t>(hn::Lanes(hn::ScalableTag<T>()));
  for (int64_t i = i0; i < i1; i += run) {
    const size_t rows = static_cast<size_t>(std::min(run, i1 - i));
    ColumnBlocks(g.n, [&](auto w, int64_t j0) HWY_ATTR { NarrowBlock<T, decltype(w)::value>(g, i, rows, j0); });
  }
}

// Columns [j0, j1) of a product of few rows (narrow_rows): rows of its
// transpose.
template <class T>
void NarrowTransposed(const GemmArgs& g, int64_t j0, int64_t j1) {
  const GemmArgs t = transposed(g);
  if (narrow_product(t)) return NarrowTile<T>(t, j0, j1);
  DotTile<T>(t, j0, j1);
}

void GemmTile(const GemmArgs& g, int64_t i0, int64_t i1, int64_t j0, int64_t j1, bool small) {
  if (g.dt == DType::F64) {
    if (small && g.n == 1) return DotRows<double>(g);
    if (small) return SmallGemm<double>(g);
#if HWY_TARGET <= HWY_AVX2
    if (narrow_product(g)) return NarrowTile<double>(g, i0, i1);
    if (dot_product(g)) return DotTile<double>(g, i0, i1);
    if (narrow_rows(g)) return NarrowTransposed<double>(g, j0, j1);
#endif
    return PackedTile<double>(g, i0, i1, j0, j1);
  }
  if (small && g.n == 1) return DotRows<float>(g);
  if (small) return SmallGemm<float>(g);
#if HWY_TARGET <= HWY_AVX2
  if (narrow_product(g)) return NarrowTile<float>(g, i0, i1);
  if (dot_product(g)) return DotTile<float>(g, i0, i1);
  if (narrow_rows(g)) return NarrowTransposed<float>(g, j0, j1);
#endif
  PackedTile<float>(g, i0, i1, j0, j1);
}

// Rows [i0, i1) of a split product: C += the second part's sum, then relu
// when asked, with UpdateC's operations for a later block of k.
template <class T>
void FinishRows(const GemmArgs& g, int64_t i0, int64_t i1) {
  const hn::ScalableTag<T> d;
  const size_t N = hn::Lanes(d);
  const T* S = reinterpret_cast<const T*>(g.partial);
  T* C = reinterpret_cast<T*>(g.c);
  for (int64_t i = i0; i < i1; ++i) {
    for (int64_t j = 0; j < g.n; j += static_cast<int64_t>(N)) {
      const size_t nn = static_cast<size_t>(std::min<int64_t>(static_cast<int64_t>(N), g.n - j));
      const T* s = S + i * g.n + j;
      UpdateC(d, nn == N ? hn::LoadU(d, s) : LoadTail(d, s, nn), C + i * g.c_rs + j, nn, T(1), T(1), false, g.relu);
    }
  }
}

void GemmFinish(const GemmArgs& g, int64_t i0, int64_t i1) {
  if (g.dt == DType::F64) return FinishRows<double>(g, i0, i1);
  FinishRows<float>(g, i0, i1);
}

int64_t GemmTargetId() { return HWY_TARGET; }

}  // namespace ag::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ag::kernels {

HWY_EXPORT(GemmTile);
HWY_EXPORT(GemmFinish);
HWY_EXPORT(GemmTargetId);

void gemm_tile(const GemmArgs& g, int64_t i0, int64_t i1, int64_t j0, int64_t j1, bool small) {
  HWY_DYNAMIC_DISPATCH(GemmTile)(g, i0, i1, j0, j1, small);
}

void gemm_finish_rows(const GemmArgs& g, int64_t i0, int64_t i1) { HWY_DYNAMIC_DISPATCH(GemmFinish)(g, i0, i1); }

PartialBuffer::PartialBuffer(size_t bytes) {
  if (bytes == 0) return;
  if (bytes <= kKeptPartialBytes) {
    p_ = static_cast<char*>(partial_scratch(bytes));
  } else {
    own_.reset(new char[bytes]);
    p_ = own_.get();
  }
}

int64_t gemm_target() { return HWY_DYNAMIC_DISPATCH(GemmTargetId)(); }

}  // namespace ag::kernels
#endif  // HWY_ONCE
