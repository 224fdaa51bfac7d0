// Pooling variants built on the 2-D drivers of pool.cc: max_pool1d and
// avg_pool1d run on a height-1 view; adaptive_max_pool2d takes the maximum
// over each adaptive window one dim at a time (a maximum over a rectangle is
// the maximum of the row maxima), with max_dim, so gradients go to the
// selected elements.
#include <vector>

#include "ops/op_common.h"

namespace ag::ops {

namespace {

void check_1d_input(const Tensor& x) {
  if (x->ndim() != 2 && x->ndim() != 3) {
    fail(AG_ERR_SHAPE, "input must be 2-D (C, L) or 3-D (N, C, L), got shape ", shape_str(x->shape()));
  }
}

// Max over the adaptive windows [floor(i*in/out), ceil((i+1)*in/out)) of dim d.
Tensor adaptive_max_dim(const Tensor& x, int d, int64_t out) {
  const int64_t in = x->shape()[d];
  std::vector<Tensor> parts;
  for (int64_t i = 0; i < out; ++i) {
    const int64_t start = (i * in) / out, end = ((i + 1) * in + out - 1) / out;
    parts.push_back(max_dim(narrow(x, d, start, end - start), d, true).first);
  }
  return concat(parts, d);
}

}  // namespace

// max_pool1d: max_pool2d over (N, C, 1, L) windows (1, k); stride 0 = kernel_size.
Tensor max_pool1d(const Tensor& x, int64_t kernel_size, int64_t stride, int64_t padding, int64_t dilation,
                  bool ceil_mode) {
  check_1d_input(x);
  const Tensor y = max_pool2d(unsqueeze(x, -2), {1, kernel_size}, {1, stride == 0 ? kernel_size : stride},
                              {0, padding}, {1, dilation}, ceil_mode, nullptr);
  return squeeze(y, Dims{y->ndim() - 2});
}

// avg_pool1d: avg_pool2d over (N, C, 1, L) windows (1, k); stride 0 = kernel_size.
Tensor avg_pool1d(const Tensor& x, int64_t kernel_size, int64_t stride, int64_t padding, bool ceil_mode,
                  bool count_include_pad) {
  check_1d_input(x);
  const Tensor y = avg_pool2d(unsqueeze(x, -2), {1, kernel_size}, {1, stride == 0 ? kernel_size : stride},
                              {0, padding}, ceil_mode, count_include_pad, 0);
  return squeeze(y, Dims{y->ndim() - 2});
}

// adaptive_max_pool2d: (N, C, H, W) or (C, H, W) -> (..., oh, ow).
Tensor adaptive_max_pool2d(const Tensor& x, Size2d output_size) {
  check_floating(*x);
  if (x->ndim() != 3 && x->ndim() != 4) {
    fail(AG_ERR_SHAPE, "input must be 3-D (C, H, W) or 4-D (N, C, H, W), got shape ", shape_str(x->shape()));
  }
  if (output_size[0] <= 0 || output_size[1] <= 0) {
    fail(AG_ERR_INVALID_ARGUMENT, "output_size (", output_size[0], ", ", output_size[1], ") must be positive");
  }
  const int h = x->ndim() - 2, w = x->ndim() - 1;
  if (x->shape()[h] == 0 || x->shape()[w] == 0) fail(AG_ERR_SHAPE, "input of shape ", shape_str(x->shape()), " has an empty spatial dim");
  return adaptive_max_dim(adaptive_max_dim(x, w, output_size[1]), h, output_size[0]);
}

}  // namespace ag::ops
