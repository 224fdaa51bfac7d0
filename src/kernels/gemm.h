// General matrix product C = alpha * A * B + beta * C for f32 and f64, with A
// (m x k) and B (k x n) read through arbitrary element strides (row-major,
// column-major, transposed or broadcast operands are read in place) and C
// (m x n) with a row stride and unit column stride.
//
// The product is cut into tasks, tiles of C that depend on m, n, k, the
// dtype and the threads that will run them (GemmArgs::threads); every
// element of C is computed with the same operations in the same k order in
// any tile and on any thread, so neither the grid nor the thread count
// changes the bits. K is never split across tasks. Results may differ
// between SIMD targets.
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace ag::kernels {

struct GemmArgs {
  DType dt;
  int64_t m, n, k;
  double alpha;
  const char* a;
  int64_t a_rs, a_cs;  // element strides of A's rows and columns
  const char* b;
  int64_t b_rs, b_cs;
  double beta;  // 0: C is not read (NaN in C does not propagate)
  char* c;
  int64_t c_rs;
  // Threads that will run the tasks: a large product gets a multiple of it
  // (as long as each task keeps enough work), so that every thread count
  // up to the machine's gets an even share.
  int64_t threads = 1;
  // C = relu(alpha * A * B + beta * C), relu as the relu kernel's (x > 0 ? x
  // : +0, NaN stays): the same bits as the product followed by relu.
  bool relu = false;
  // C's column stride: 1 but for the transposed narrow products gemm.cc
  // runs internally (only its narrow and dot paths read it).
  int64_t c_cs = 1;
};

// Number of tasks of the product (at least 1).
int64_t gemm_tasks(const GemmArgs& g);

// Computes task t in [0, gemm_tasks(g)); tasks write disjoint parts of C.
void gemm_task(const GemmArgs& g, int64_t t);

// Rough cost of one task in flops, for grouping tasks into parallel chunks.
double gemm_task_flops(const GemmArgs& g);

// The HWY_TARGET gemm_task dispatches to (for the all-targets test).
int64_t gemm_target();

}  // namespace ag::kernels
