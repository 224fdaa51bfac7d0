// The cost model of ag's one parallel loop (Context::parallel_for and
// parallel_chunks): each kernel class has a grain, the elements one chunk
// holds. Work of at most one grain runs inline on the calling thread (no
// arena, no task, no host callback); larger work is cut into chunks of one
// grain (reductions: fixed by the sizes alone, so the reduction trees never
// depend on the thread count) or into equal chunks of at most one grain
// (loops over independent elements, even_chunk: their count a multiple of
// the threads, which changes no result).
//
// A grain is the most elements (a power of two) whose work takes at most
// kChunkNs on one thread, so that handing a chunk to another thread (a
// claim on a shared counter, well under 1 us when the worker spins; an
// enqueue of a few us otherwise, which the caller never waits for) stays
// small against it. The costs per element
// come from `bench_threads --calibrate --repeats 200` (1 thread, f32, 64K
// elements, output allocated per call; Xeon 8573C, AVX-512, a shared 2-core
// VM under load 8-10, so upper bounds):
//
//   class           family   ns/element   grain (power of two at most kChunkNs / cost)
//   copy            clone      0.117       65536  (cast f32->f64 0.78 and fill 0.38
//                                                  share it: coarser, never slower)
//   elementwise     add        0.135       32768
//   transcendental  tanh       0.70         8192
//   reduction       sum        0.086       65536  (= kernels::kSumChunk, fixed)
//   strided gather  clone(xT)  0.85         8192
//   optimizer       adam       0.75         8192
//
// Rounding down matters beyond the dispatch: a tensor of 65,536 elements
// (a 256 x 256 weight) that two threads' row bands wrote is one grain of
// 65,536 gathered onto one core, but two chunks of 32,768 left where they
// are. Workload d's update (p -= lr * g) took 82 us at 2 threads with the
// elementwise grain at 65,536 and 64 us at 32,768 (91 against 119 in its
// matmul layout).
//
// ATen uses 32768 elements for every class (at::internal::GRAIN_SIZE):
// 4x too coarse for transcendentals, gathers and optimizer updates (a 64K
// tensor gets 2 chunks where 8 balance better), and half what a copy
// needs to pay for its dispatch.
#pragma once

#include <algorithm>
#include <cstdint>

namespace ag {

enum class Work : uint8_t { Copy, Elementwise, Transcendental, Reduction, Gather, Optimizer };

// The aim for one chunk's work on one thread, in ns.
constexpr int64_t kChunkNs = 8000;

constexpr int64_t grain(Work w) {
  switch (w) {
    case Work::Copy: return int64_t{1} << 16;
    case Work::Elementwise: return int64_t{1} << 15;
    case Work::Transcendental: return int64_t{1} << 13;
    case Work::Reduction: return int64_t{1} << 16;
    case Work::Gather: return int64_t{1} << 13;
    case Work::Optimizer: return int64_t{1} << 13;
  }
  return int64_t{1} << 16;
}

// Units (rows, slices, output planes) per chunk when each unit holds
// `elements_per_unit` elements of work of class w: at least one.
constexpr int64_t units_per_chunk(Work w, int64_t elements_per_unit) {
  return std::max<int64_t>(1, grain(w) / std::max<int64_t>(1, elements_per_unit));
}

// Units per chunk for `units` units of `per_unit` elements of work class w,
// in a loop of independent units run by `lanes` participants: the fewest
// chunks of at most one grain, made equal, and when there are at least as
// many chunks as lanes, a multiple of the lanes (so at least half a grain
// each). Small units go in whole groups of 64 elements, which keeps vector
// alignment and cache lines apart. A 200,704-element update goes in 4
// chunks of 50,176 (flat, or 64 rows of 784), not 3 grains and a 4,096 tail
// that left one thread of two with twice the other's work; on 3 threads in
// 6. Each lane (core/parallel.cc) so gets an equal share of the elements,
// at the same place for every op over one tensor, and for the GEMM that
// wrote it (row bands): each thread finds its part in its own cache. Only
// loops whose results do not depend on their chunks may use it: reductions
// keep whole grains.
constexpr int64_t even_units(int64_t units, int64_t per_unit, Work w, int64_t lanes) {
  const int64_t per_chunk = units_per_chunk(w, per_unit);
  if (units <= per_chunk) return per_chunk;
  int64_t chunks = (units + per_chunk - 1) / per_chunk;
  if (lanes > 1 && chunks >= lanes) chunks = (chunks + lanes - 1) / lanes * lanes;
  const int64_t even = (units + chunks - 1) / chunks;
  const int64_t group = per_unit >= 64 ? 1 : 64 / std::max<int64_t>(1, per_unit);
  return (even + group - 1) / group * group;
}

// The same for n elements: the chunk of a flat elementwise loop.
constexpr int64_t even_chunk(int64_t n, Work w, int64_t lanes) { return even_units(n, 1, w, lanes); }

// A host's task system (ag_context_options.enqueue_task and friends);
// unset when enqueue is NULL.
struct HostTasks {
  void* (*enqueue)(void (*task)(int64_t, int64_t, uint32_t, void*), void* task_ctx, int64_t items, int64_t min_range,
                   void* user) = nullptr;
  void (*finish)(void* handle, void* user) = nullptr;
  void* user = nullptr;
  int32_t workers = 0;
  bool set() const { return enqueue != nullptr; }
};

}  // namespace ag
