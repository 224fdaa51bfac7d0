// General matrix product C = alpha * A * B + beta * C for f32 and f64, with A
// (m x k) and B (k x n) read through arbitrary element strides (row-major,
// column-major, transposed or broadcast operands are read in place) and C
// (m x n) with a row stride and unit column stride.
//
// The product is cut into tasks, tiles of C that depend on m, n, k, the
// dtype and the threads that will run them (GemmArgs::threads); every
// element of C is computed with the same operations in the same k order in
// any tile and on any thread, so neither the grid nor the thread count
// changes the bits. K is split only where the shape alone says so (see
// gemm_partial_bytes), never by the thread count. Results may differ
// between SIMD targets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

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
  // A product whose k is split (gemm_partial_bytes(g) > 0): where its
  // second part's m x n sum goes, row-major, until gemm_finish adds it.
  char* partial = nullptr;
  // Internal: a part of a split product (never split again).
  bool part = false;
};

// Number of tasks of the product (at least 1).
int64_t gemm_tasks(const GemmArgs& g);

// Computes task t in [0, gemm_tasks(g)); tasks write disjoint parts of C
// (and of g.partial).
void gemm_task(const GemmArgs& g, int64_t t);

// A product whose B is row-major and much the largest operand (a small
// batch times a weight stored [in, out]) is summed over k in two parts,
// split at a multiple of 128 floats (64 doubles): the tasks of one part read only
// its half of B's rows, which is how an elementwise loop (an optimizer's
// update of that weight) deals B to the threads, so each thread finds its
// rows of B in its own cache. The first part goes to C, the second to
// g.partial; then gemm_finish adds them (and applies relu). The split
// depends on the shape alone, so the bits do not depend on the threads.
//
// Bytes of g.partial the product needs: 0 when k is not split.
size_t gemm_partial_bytes(const GemmArgs& g);
// Tasks of the finishing pass (0 when k is not split); run them after every
// task of gemm_task, in any order.
int64_t gemm_finish_tasks(const GemmArgs& g);
void gemm_finish(const GemmArgs& g, int64_t t);
// Room for the partial sums of a call's split products: the calling
// thread's kept buffer (reused by its later calls, so a replayed step
// allocates nothing) up to kKeptPartialBytes, a buffer of its own above
// (freed with it, so one large product does not hold memory for good).
// Throws std::bad_alloc.
constexpr size_t kKeptPartialBytes = size_t{4} << 20;
class PartialBuffer {
 public:
  explicit PartialBuffer(size_t bytes);
  char* get() const { return p_; }

 private:
  std::unique_ptr<char[]> own_;
  char* p_ = nullptr;
};

// Rough cost of one task in flops, for grouping tasks into parallel chunks.
double gemm_task_flops(const GemmArgs& g);

// The HWY_TARGET gemm_task dispatches to (for the all-targets test).
int64_t gemm_target();

}  // namespace ag::kernels
