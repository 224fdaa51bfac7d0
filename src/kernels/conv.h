// Sliding-window kernels of convolution and pooling: im2col (unfold), col2im
// (fold) and max pooling with argmax indices. They move and compare data
// (no arithmetic to vectorize beyond copies and adds), so they are plain
// loops like the indexing kernels; the products of convolution run on the
// GEMM. Each call computes a range of independent output rows or planes, so
// callers can split the work into fixed chunks: results never depend on the
// number of threads.
#pragma once

#include <cstdint>

#include "core/dtype.h"
#include "kernels/kernels.h"

namespace ag::kernels {

// A 2-D window: kernel size, stride, zero/implicit padding, dilation, per
// (height, width); and the number of window positions (out_h, out_w).
struct Window2d {
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
  int64_t out_h, out_w;
};

// x (N, C, H, W) read through its 4 element strides; cols contiguous
// (N, C*kh*kw, out_h*out_w): cols[n, (c*kh + i)*kw + j, y*out_w + z] =
// x[n, c, y*sh - ph + i*dh, z*sw - pw + j*dw], 0 outside x. Writes the
// rows [r0, r1) of the N*C*kh*kw rows.
void unfold2d(DType dt, const Dims& x_shape, View x, const Window2d& w, char* cols, int64_t r0, int64_t r1);

// The adjoint of unfold2d: out (N, C, H, W), contiguous, gets the sum of
// every cols element at the x position unfold2d read it from; cols
// (N, C*kh*kw, out_h*out_w) is read through its 3 element strides. Writes
// the planes [p0, p1) of the N*C planes, each summed in a fixed order.
void fold2d(DType dt, const Dims& out_shape, View cols, const Window2d& w, char* out, int64_t p0, int64_t p1);

// Max pooling: out (N, C, out_h, out_w) and indices (flat h*W + w positions
// in the plane), contiguous; padding is -inf. The first maximum wins; a NaN
// in the window is the result (the last NaN's index, as PyTorch). Writes the
// planes [p0, p1) of the N*C planes.
void max_pool2d(DType dt, const Dims& x_shape, View x, const Window2d& w, char* out, int64_t* indices, int64_t p0,
                int64_t p1);

}  // namespace ag::kernels
