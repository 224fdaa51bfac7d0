// Transposed convolution, the adjoint of conv2d in its input: the grouped
// weight transposed times x gives the columns of every window, fold (the
// adjoint of unfold) sums them into the output, and pad crops the padding. Its gradients of any order
// come from matmul and fold. conv_transpose1d runs on a height-1 view.
#include "ops/op_common.h"

namespace ag::ops {

// conv_transpose2d: y (N, OC, OH, OW), OC = weight dim 1 * groups, OH = (H-1)*s
// - 2p + d*(k-1) + output_padding + 1; weight (C, OC/groups, kh, kw).
Tensor conv_transpose2d(const Tensor& x, const Tensor& weight, const Tensor& bias, Size2d stride, Size2d padding,
                        Size2d output_padding, int64_t groups, Size2d dilation) {
  check_same(*x, *weight);
  check_floating(*x);
  if (bias) check_same(*x, *bias);
  if (weight->ndim() != 4) {
    fail(AG_ERR_SHAPE, "weight must be 4-D (in_channels, out_channels/groups, kH, kW), got shape ",
         shape_str(weight->shape()));
  }
  if (x->ndim() != 3 && x->ndim() != 4) {
    fail(AG_ERR_SHAPE, "input must be 3-D (C, H, W) or 4-D (N, C, H, W), got shape ", shape_str(x->shape()));
  }
  if (groups <= 0) fail(AG_ERR_INVALID_ARGUMENT, "groups must be positive, got ", groups);
  for (int i = 0; i < 2; ++i) {
    if (stride[i] <= 0 || dilation[i] <= 0) {
      fail(AG_ERR_INVALID_ARGUMENT, "stride and dilation must be positive, got stride (", stride[0], ", ", stride[1],
           "), dilation (", dilation[0], ", ", dilation[1], ")");
    }
    if (padding[i] < 0 || output_padding[i] < 0) {
      fail(AG_ERR_INVALID_ARGUMENT, "padding and output_padding must be non-negative");
    }
    if (output_padding[i] >= stride[i] && output_padding[i] >= dilation[i]) {
      fail(AG_ERR_INVALID_ARGUMENT, "output_padding (", output_padding[0], ", ", output_padding[1],
           ") must be smaller than stride (", stride[0], ", ", stride[1], ") or dilation (", dilation[0], ", ",
           dilation[1], ")");
    }
  }
  const Tensor x4 = x->ndim() == 4 ? x : unsqueeze(x, 0);
  const Dims& ws = weight->shape();
  const int64_t N = x4->shape()[0], C = x4->shape()[1], H = x4->shape()[2], W = x4->shape()[3];
  if (C != ws[0]) {
    fail(AG_ERR_SHAPE, "input of shape ", shape_str(x->shape()), " has ", C, " channels but weight of shape ",
         shape_str(ws), " expects ", ws[0]);
  }
  if (C % groups != 0) fail(AG_ERR_SHAPE, "in_channels ", C, " is not divisible by groups ", groups);
  // Sizes of empty tensors may be anything, so their products are checked.
  const int64_t OC = checked_mul_add(ws[1], groups, 0, "out_channels (weight dim 1 * groups)");
  const int64_t kernel_area = checked_mul_add(ws[2], ws[3], 0, "the kernel area");
  const int64_t in_area = checked_mul_add(H, W, 0, "the input area");
  if (bias && (bias->ndim() != 1 || bias->shape()[0] != OC)) {
    fail(AG_ERR_SHAPE, "bias shape ", shape_str(bias->shape()), " does not fit weight shape ", shape_str(ws),
         " and groups ", groups, ": expected (", OC, ")");
  }
  // Folded without padding (`full`), then cropped by padding at the start and
  // cut or zero-extended to the output size at the end (output_padding may
  // exceed padding, and with a large dilation the stride).
  Size2d full{}, out_hw{};
  for (int i = 0; i < 2; ++i) {
    const int64_t in = i == 0 ? H : W;
    const int64_t span = checked_mul_add(dilation[i], ws[2 + i] - 1, 1, "the dilated kernel size");
    full[i] = checked_mul_add(in - 1, stride[i], span, "the output size");
    out_hw[i] = checked_mul_add(-2, padding[i], checked_mul_add(1, full[i], output_padding[i], "the output size"),
                                "the output size");
  }
  if (out_hw[0] <= 0 || out_hw[1] <= 0 || H == 0 || W == 0) {
    fail(AG_ERR_SHAPE, "the output size (", out_hw[0], ", ", out_hw[1], ") of input ", shape_str(x->shape()),
         " is not positive");
  }
  const int64_t Cg = C / groups, K = checked_mul_add(ws[1], kernel_area, 0, "the kernel volume");
  // (G, K, Cg) @ (N, G, Cg, H*W) -> (N, G, K, H*W): the columns of every window.
  const Tensor wt = transpose(reshape(weight, Dims{groups, Cg, K}), 1, 2);
  const Tensor cols = matmul(wt, reshape(x4, Dims{N, groups, Cg, in_area}));
  const int64_t rows = checked_mul_add(OC, kernel_area, 0, "the column count");
  Tensor y = fold(reshape(cols, Dims{N, rows, in_area}), full, {ws[2], ws[3]}, dilation, {0, 0}, stride);
  if (padding[0] || padding[1] || output_padding[0] || output_padding[1]) {
    y = pad(y, {-padding[1], output_padding[1] - padding[1], -padding[0], output_padding[0] - padding[0]},
            PadMode::Constant, 0.0);
  }
  if (bias) y = add(y, reshape(bias, Dims{OC, 1, 1}));
  return x->ndim() == 3 ? squeeze(y, Dims{0}) : y;
}

// conv_transpose1d: conv_transpose2d on (N, C, 1, L) with a (C, OC/G, 1, k) kernel.
Tensor conv_transpose1d(const Tensor& x, const Tensor& weight, const Tensor& bias, int64_t stride, int64_t padding,
                        int64_t output_padding, int64_t groups, int64_t dilation) {
  if (x->ndim() != 2 && x->ndim() != 3) {
    fail(AG_ERR_SHAPE, "input must be 2-D (C, L) or 3-D (N, C, L), got shape ", shape_str(x->shape()));
  }
  if (weight->ndim() != 3) {
    fail(AG_ERR_SHAPE, "weight must be 3-D (in_channels, out_channels/groups, kW), got shape ",
         shape_str(weight->shape()));
  }
  const Tensor y = conv_transpose2d(unsqueeze(x, -2), unsqueeze(weight, 2), bias, {1, stride}, {0, padding},
                                    {0, output_padding}, groups, {1, dilation});
  return squeeze(y, Dims{y->ndim() - 2});
}

}  // namespace ag::ops
