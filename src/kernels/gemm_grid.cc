// The task grid of the matrix product: how gemm_task cuts C (and, for some
// shapes, k) into tasks for the parallel loop, from the shape and the thread
// count alone. The tiles themselves run in gemm.cc.
#include <algorithm>
#include <memory>
#include <vector>

#include "kernels/gemm.h"
#include "kernels/gemm_blocking.h"

namespace ag::kernels {
namespace {

// The task grid: tiles of C of rows x cols, from the sizes alone. Each task
// packs its own blocks of B, so tall tasks (PackedTile runs their rows in
// blocks) keep the repacking of B across tasks small: a 2048^3 product ran
// 1.15x slower in tasks of 256 rows than in whole columns. Columns near
// kTaskCols keep a block of B in L2: KC x 256 (1 MiB of f32) at the deep
// KC, KC x 1024 (512 KiB) at the shallow one. Both are multiples of every
// target's MR and NR so that only the last tile has partial panels, and
// even splits make the tasks alike.
constexpr int64_t kTaskRows = 4096, kRowAlign = 24, kColAlign = 48;
constexpr int64_t kTaskCols = 1024, kDeepTaskCols = 256;
int64_t task_cols(const GemmArgs& g) { return deep_blocks(g) ? kDeepTaskCols : kTaskCols; }
// Column tiles of the threads' grids step by whole vectors (AVX-512's 16
// floats) rather than whole panels: 256 columns split 128 + 128, where
// panels of 48 gave one thread of two 144 (a partial panel costs less than
// the other thread's wait).
constexpr int64_t kColStep = 16;
constexpr int64_t kVectorTaskMacs = int64_t{1} << 18;
constexpr int64_t kMinTasks = 4, kMinTaskMacs = int64_t{1} << 20;
// Row bands (row_bands) are taken when they finish within this much of the
// best grid by the model: the C they keep in place would otherwise cross
// to another core (some 20 GB/s on 2 cores), which costs about as much as
// computing it. Their rows align to 8 (AVX-512's MR): equal bands matter
// more than a partial panel.
constexpr double kBandSlack = 0.15;
constexpr int64_t kBandAlign = 8;

// Each task packs its KC x cols block of B: about this many multiply-adds'
// time per packed element (a transposing copy against 2 x 16-lane FMAs).
constexpr double kPackMacs = 8;

// Finishing time, in multiply-adds per unit of k, of the tiles of rows x cols
// of an m x n product on t threads under the parallel loop's schedule
// (core/parallel.cc): thread p owns the tasks [p c / t, (p + 1) c / t) in
// index order and runs them first, then takes the next task of the next
// lanes; the thread free first moves next. A task costs its rows x cols
// plus the packing of its cols.
double makespan(int64_t m, int64_t n, int64_t rows, int64_t cols, int64_t t) {
  std::vector<double> cost;
  for (int64_t i0 = 0; i0 < m; i0 += rows) {
    for (int64_t j0 = 0; j0 < n; j0 += cols) {
      const double r = static_cast<double>(std::min(rows, m - i0)), c = static_cast<double>(std::min(cols, n - j0));
      cost.push_back(c * (r + kPackMacs));
    }
  }
  const int64_t count = static_cast<int64_t>(cost.size());
  std::vector<int64_t> next(static_cast<size_t>(t)), end(static_cast<size_t>(t));
  for (int64_t p = 0; p < t; ++p) {
    next[static_cast<size_t>(p)] = p * count / t;
    end[static_cast<size_t>(p)] = (p + 1) * count / t;
  }
  std::vector<double> busy(static_cast<size_t>(t), 0.0);
  for (int64_t left = count; left > 0; --left) {
    const int64_t p = std::min_element(busy.begin(), busy.end()) - busy.begin();
    for (int64_t i = 0; i < t; ++i) {
      const size_t lane = static_cast<size_t>((p + i) % t);
      if (next[lane] < end[lane]) {
        busy[static_cast<size_t>(p)] += cost[static_cast<size_t>(next[lane]++)];
        break;
      }
    }
  }
  return *std::max_element(busy.begin(), busy.end());
}

struct Grid {
  bool small;
  int64_t mb, nb, rows, cols;
};

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t split(int64_t n, int64_t target, int64_t align) {
  const int64_t parts = ceil_div(n, target);
  return ceil_div(ceil_div(n, parts), align) * align;
}

// Rows (or columns) per task of a narrow product's `len` rows of `per_row`
// multiply-adds each: equal tasks of at least kMinTaskMacs and 16 rows
// (whole vectors), their count a multiple of the threads when there are
// at least as many (192 + 64 of 256 rows would leave one thread of two
// three quarters of the work).
int64_t narrow_task(int64_t len, int64_t per_row, int64_t threads) {
  const int64_t t = std::max<int64_t>(1, threads);
  int64_t count = std::clamp<int64_t>(len * per_row / kMinTaskMacs, 1, ceil_div(len, 16));
  if (t > 1 && count >= t) count = std::min(ceil_div(count, t) * t, ceil_div(len, 16));
  return ceil_div(ceil_div(len, count), 16) * 16;
}

// One band of whole rows of C per thread, in tasks of at most kTaskRows
// rows, or mb = 0 if the rows do not cut into t such bands. The parallel
// loop deals lane p the p-th contiguous run of tasks, so thread p writes
// band p: the rows the elementwise loops that come next deal to it too
// (an optimizer's update of a weight gradient), and C stays in its cache.
// On 2 cores, scaling a 256 x 784 gradient by lr took 25 us when the other
// core had written half of each thread's part, 15 us in bands.
Grid row_bands(const GemmArgs& g, int64_t t) {
  const int64_t per_band = ceil_div(ceil_div(g.m, t), kTaskRows);
  const int64_t rows = ceil_div(ceil_div(g.m, t * per_band), kBandAlign) * kBandAlign;
  // Bands are for short k (at most half of m and n), whose block of B is
  // small at any width.
  const int64_t cols = split(g.n, kTaskCols, kColAlign);
  if (ceil_div(g.m, rows) != t * per_band) return {false, 0, 0, 0, 0};
  return {false, t * per_band, ceil_div(g.n, cols), rows, cols};
}

Grid grid(const GemmArgs& g) {
  // Tiny products, and a single row or column (packing would pad it to a
  // whole panel), take the unpacked paths; large single rows or columns in
  // tasks of ~kVectorTaskMacs (their elements are independent).
  if (small_product(g)) return {true, 1, 1, g.m, g.n};
  if (g.n == 1) {
    const int64_t rows = std::max<int64_t>(1, kVectorTaskMacs / g.k);
    return {true, ceil_div(g.m, rows), 1, rows, 1};
  }
  if (g.m == 1) {
    const int64_t cols = ceil_div(std::max<int64_t>(1, kVectorTaskMacs / g.k), kColAlign) * kColAlign;
    return {true, 1, ceil_div(g.n, cols), 1, cols};
  }
  if (narrow_product(g) || dot_product(g)) {
    // Whole-width row tasks; the loop's lanes make them one band per thread.
    const int64_t rows = narrow_task(g.m, g.n * g.k, g.threads);
    return {false, ceil_div(g.m, rows), 1, rows, g.n};
  }
  if (narrow_rows(g)) {
    // The same for its transpose: whole-height column tasks.
    const int64_t cols = narrow_task(g.n, g.m * g.k, g.threads);
    return {false, 1, ceil_div(g.n, cols), g.m, cols};
  }
  int64_t rows = split(g.m, kTaskRows, kRowAlign);
  int64_t cols = split(g.n, task_cols(g), kColAlign);
  // A product of few rows (a small batch) fits one row block: narrower
  // column tiles give a second thread work, as long as each keeps
  // kMinTaskMacs. Each element of C is summed the same way in any tile.
  int64_t mb = ceil_div(g.m, rows);
  const int64_t macs = g.m * g.n * g.k;
  const int64_t want = std::min<int64_t>(kMinTasks, macs / kMinTaskMacs);
  if (mb * ceil_div(g.n, cols) < want) cols = split(g.n, ceil_div(g.n, ceil_div(want, mb)), kColAlign);
  // For t threads: among the tiles up to the sizes above (rows step by their
  // alignment, columns by kColStep; at most 4t tasks, each keeping
  // kMinTaskMacs), the grid whose tasks finish first (makespan), ties to the
  // fewest tasks. Equal counts are not equal shares: 784 columns in tiles of
  // 240 leave one thread of two with 480 of them, tiles of 192 with 400.
  const int64_t t = std::max<int64_t>(1, g.threads);
  int64_t nb = ceil_div(g.n, cols);
  if (t > 1 && mb * nb < 4 * t) {
    double best = makespan(g.m, g.n, rows, cols, t);
    for (int64_t r = split(g.m, kTaskRows, kRowAlign); r >= kRowAlign; r -= kRowAlign) {
      const int64_t mr = ceil_div(g.m, r);
      if (mr > 4 * t) break;
      for (int64_t c = split(g.n, task_cols(g), kColAlign); c >= kColStep; c -= kColStep) {
        const int64_t nc = ceil_div(g.n, c), count = mr * nc;
        if (count > 4 * t || macs / count < kMinTaskMacs) break;
        const double cand = makespan(g.m, g.n, r, c, t);
        if (cand < best * (1 - 1e-3) || (cand <= best * (1 + 1e-3) && count < mb * nb)) {
          best = std::min(best, cand);
          rows = r, cols = c, mb = mr, nb = nc;
        }
      }
    }
  }
  // Bands when C is much the largest operand (a weight's gradient, k the
  // batch, at most half of m and n): otherwise each band would read all of
  // a large B, which then sits in every core's cache (whoever writes it
  // next, the update of a weight read here, must fetch it back), and a
  // 512^3 product ran 1.25x slower in bands on 2 threads. Bands for fewer
  // threads are candidates too, where t bands would make tasks too small:
  // more threads must never do worse than fewer.
  if (t > 1 && 2 * g.k <= std::min(g.m, g.n)) {
    Grid band{};
    double band_time = makespan(g.m, g.n, rows, cols, t) * (1 + kBandSlack);
    for (int64_t tb = t; tb > 1; --tb) {
      const Grid b = row_bands(g, tb);
      if (b.mb == 0 || macs / (b.mb * b.nb) < kMinTaskMacs) continue;
      const double time = makespan(g.m, g.n, b.rows, b.cols, t);
      if (band.mb == 0 ? time <= band_time : time < band_time * (1 - 1e-3)) band = b, band_time = time;
    }
    if (band.mb > 0) return band;
  }
  return {false, mb, ceil_div(g.n, cols), rows, cols};
}

// grid() of the last few shapes on this thread: every task asks for it, and
// the makespan search is not free. On the heap: the TLS block has a budget
// (tests/abi/check_tls.py).
struct GridCache {
  struct Entry {
    int64_t m = -1, n = -1, k = -1, threads = -1;
    Grid grid{};
  };
  static constexpr int kEntries = 16;
  Entry entries[kEntries];
  int next = 0;
};

Grid cached_grid(const GemmArgs& g) {
  thread_local std::unique_ptr<GridCache> cache;
  if (!cache) cache = std::make_unique<GridCache>();
  for (const GridCache::Entry& e : cache->entries) {
    if (e.m == g.m && e.n == g.n && e.k == g.k && e.threads == g.threads) return e.grid;
  }
  GridCache::Entry& e = cache->entries[cache->next];
  cache->next = (cache->next + 1) % GridCache::kEntries;
  e = GridCache::Entry{g.m, g.n, g.k, g.threads, grid(g)};
  return e.grid;
}

// Where k is split (gemm.h): 0, or the first k of the second part, a
// multiple of kSplitAlignBytes near k / 2. Only products on the packed path
// whose B is row-major and holds at least 4 rows per row of C (k >= 4 m)
// and 2 columns per row of A (n >= 2 m), so that reading B dominates and
// the finishing pass over C is small against it, and whose parts keep
// kMinTaskMacs each. A batch of 64 times a 784 x 256 weight: split at 384.
int64_t split_k(const GemmArgs& g) {
  if (g.part || g.b_cs != 1 || g.b_rs < g.n || g.m < 2 || g.n < 2 || g.k < 4 * g.m || g.n < 2 * g.m) return 0;
  if (small_product(g) || narrow_product(g) || dot_product(g) || narrow_rows(g)) return 0;
  const int64_t kc = static_cast<int64_t>(kSplitAlignBytes / itemsize(g.dt));
  const int64_t cut = (g.k / 2 + kc / 2) / kc * kc;
  if (cut < kc || cut >= g.k || g.m * g.n * std::min(cut, g.k - cut) < kMinTaskMacs) return 0;
  return cut;
}

// Part 0 (k in [0, cut), into C with beta) or 1 (k in [cut, k), into
// g.partial from zero) of a split product; relu waits for the finish. Each
// part gets the grid for all the threads, so that the two, one after the
// other, balance too (a grid for half of 5 threads left one of 5 with two
// tasks of 6); on 2 threads lane 0 runs part 0 and lane 1 part 1.
GemmArgs part_of(const GemmArgs& g, int64_t cut, int which) {
  GemmArgs p = g;
  p.part = true;
  p.relu = false;
  if (which == 0) {
    p.k = cut;
    return p;
  }
  const int64_t item = static_cast<int64_t>(itemsize(g.dt));
  p.a += cut * g.a_cs * item;
  p.b += cut * g.b_rs * item;
  p.k = g.k - cut;
  p.beta = 0.0;
  p.c = g.partial;
  p.c_rs = g.n;
  p.c_cs = 1;
  return p;
}

// Rows per finishing task: about 8K elements each.
int64_t finish_rows(const GemmArgs& g) { return std::max<int64_t>(1, (int64_t{1} << 13) / std::max<int64_t>(1, g.n)); }

}  // namespace

int64_t gemm_tasks(const GemmArgs& g) {
  if (const int64_t cut = split_k(g)) return gemm_tasks(part_of(g, cut, 0)) + gemm_tasks(part_of(g, cut, 1));
  const Grid gr = cached_grid(g);
  return gr.mb * gr.nb;
}

double gemm_task_flops(const GemmArgs& g) {
  if (const int64_t cut = split_k(g)) return gemm_task_flops(part_of(g, cut, 0));
  const Grid gr = cached_grid(g);
  return 2.0 * static_cast<double>(gr.rows) * static_cast<double>(gr.cols) * static_cast<double>(g.k);
}

size_t gemm_partial_bytes(const GemmArgs& g) {
  return split_k(g) ? static_cast<size_t>(g.m * g.n) * itemsize(g.dt) : 0;
}

int64_t gemm_finish_tasks(const GemmArgs& g) { return split_k(g) ? ceil_div(g.m, finish_rows(g)) : 0; }

void gemm_finish(const GemmArgs& g, int64_t t) {
  const int64_t rows = finish_rows(g);
  gemm_finish_rows(g, t * rows, std::min(g.m, (t + 1) * rows));
}

void gemm_task(const GemmArgs& g, int64_t t) {
  if (const int64_t cut = split_k(g)) {
    const GemmArgs first = part_of(g, cut, 0);
    const int64_t n0 = gemm_tasks(first);
    return t < n0 ? gemm_task(first, t) : gemm_task(part_of(g, cut, 1), t - n0);
  }
  const Grid gr = cached_grid(g);
  if (g.m == 0 || g.n == 0) return;
  const int64_t i0 = t / gr.nb * gr.rows, j0 = t % gr.nb * gr.cols;
  const int64_t i1 = std::min(g.m, i0 + gr.rows), j1 = std::min(g.n, j0 + gr.cols);
  if (!gr.small) return gemm_tile(g, i0, i1, j0, j1, false);
  // The unpacked paths take the tile as a product of its own.
  const int64_t item = static_cast<int64_t>(itemsize(g.dt));
  GemmArgs sub = g;
  sub.m = i1 - i0;
  sub.n = j1 - j0;
  sub.a += i0 * g.a_rs * item;
  sub.b += j0 * g.b_cs * item;
  sub.c += (i0 * g.c_rs + j0) * item;
  gemm_tile(sub, 0, sub.m, 0, sub.n, true);
}

}  // namespace ag::kernels

