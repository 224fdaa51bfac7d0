// The cost model of ag's one parallel loop (Context::parallel_for and
// parallel_chunks): each kernel class has a grain, the elements one chunk
// holds. Work of at most one grain runs inline on the calling thread (no
// arena, no task, no host callback); larger work is cut into chunks of one
// grain, fixed by the sizes alone, so the chunk boundaries (and with them
// the reduction trees) never depend on the thread count.
//
// A grain is the elements whose work takes about kChunkNs on one thread, so
// that handing a chunk to another thread (a claim on a shared counter, about
// 0.2-0.5 us when the worker spins; an enqueue of about 1-2 us otherwise,
// which the caller never waits for) stays small against it. The costs per
// element come from tests/bench/bench_grain.c (1 thread, f32, data in L2,
// Xeon 8573C with AVX-512, shared and loaded 2-core VM, medians):
//
//   class           ns/element   grain (kChunkNs / cost, a power of two)
//   copy/cast/fill    0.10        65536
//   elementwise       0.13        65536
//   transcendental    0.60        16384
//   reduction         0.07        65536 (sum; merged in chunk order)
//   strided gather    0.45        16384
//   optimizer         0.60        16384 (Adam; SGD is cheaper, same grain)
//
// ATen uses 32768 elements for every class (at::internal::GRAIN_SIZE): too
// large for transcendentals and optimizer updates (one chunk per 2 threads
// on a 64K tensor), too small for copies (chunks of ~3 us, close to a
// wake-up).
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
    case Work::Elementwise: return int64_t{1} << 16;
    case Work::Transcendental: return int64_t{1} << 14;
    case Work::Reduction: return int64_t{1} << 16;
    case Work::Gather: return int64_t{1} << 14;
    case Work::Optimizer: return int64_t{1} << 14;
  }
  return int64_t{1} << 16;
}

// Units (rows, slices, output planes) per chunk when each unit holds
// `elements_per_unit` elements of work of class w: at least one.
constexpr int64_t units_per_chunk(Work w, int64_t elements_per_unit) {
  return std::max<int64_t>(1, grain(w) / std::max<int64_t>(1, elements_per_unit));
}

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
