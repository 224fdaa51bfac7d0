// Convolution as im2col + GEMM: unfold (im2col) and fold (col2im) are each
// other's adjoint, hence each other's gradient; conv2d is one batched matmul
// of the grouped weight with unfold(x), so its gradients of any order come
// from unfold, fold and matmul. conv1d is conv2d on a height-1 view.
#include <string>

#include "kernels/conv.h"
#include "ops/op_common.h"

namespace ag::ops {

namespace {

std::string pair_str(Size2d p) { return "(" + std::to_string(p[0]) + ", " + std::to_string(p[1]) + ")"; }

void check_positive(Size2d p, const char* what) {
  if (p[0] <= 0 || p[1] <= 0) fail(AG_ERR_INVALID_ARGUMENT, what, " must be positive, got ", pair_str(p));
}

void check_window_args(Size2d kernel_size, Size2d dilation, Size2d padding, Size2d stride) {
  check_positive(kernel_size, "kernel_size");
  check_positive(dilation, "dilation");
  check_positive(stride, "stride");
  if (padding[0] < 0 || padding[1] < 0) {
    fail(AG_ERR_INVALID_ARGUMENT, "padding must be non-negative, got ", pair_str(padding));
  }
}

// The window positions along (H, W) of `in`, or an error naming the facts
// when the dilated kernel does not fit into the padded input.
kernels::Window2d window(Size2d in, Size2d kernel_size, Size2d dilation, Size2d padding, Size2d stride) {
  kernels::Window2d w{kernel_size[0], kernel_size[1], stride[0], stride[1], padding[0], padding[1],
                      dilation[0],    dilation[1],    0,         0};
  const Size2d span{checked_mul_add(dilation[0], kernel_size[0] - 1, 1, "the dilated kernel height"),
                    checked_mul_add(dilation[1], kernel_size[1] - 1, 1, "the dilated kernel width")};
  const Size2d padded{checked_mul_add(2, padding[0], in[0], "the padded input height"),
                      checked_mul_add(2, padding[1], in[1], "the padded input width")};
  if (padded[0] < span[0] || padded[1] < span[1]) {
    fail(AG_ERR_SHAPE, "the padded input ", pair_str(padded), " (input ", pair_str(in), ", padding ", pair_str(padding),
         ") is smaller than the dilated kernel ", pair_str(span), " (kernel_size ", pair_str(kernel_size),
         ", dilation ", pair_str(dilation), ")");
  }
  w.out_h = (padded[0] - span[0]) / stride[0] + 1;
  w.out_w = (padded[1] - span[1]) / stride[1] + 1;
  return w;
}

// x as a 4-D (N, C, H, W) tensor: a batch of one for a 3-D x.
Tensor batched4(const Tensor& x, const char* what) {
  if (x->ndim() == 4) return x;
  if (x->ndim() == 3) return unsqueeze(x, 0);
  fail(AG_ERR_SHAPE, what, " must be 3-D (C, H, W) or 4-D (N, C, H, W), got shape ", shape_str(x->shape()));
}

// groups, channels and bias of a convolution; x is the caller's input and
// xb its batched form (channels in dim 1).
void check_channels(const TensorImpl& x, const TensorImpl& xb, const TensorImpl& weight, const TensorImpl* bias,
                    int64_t groups) {
  if (groups <= 0) fail(AG_ERR_INVALID_ARGUMENT, "groups must be positive, got ", groups);
  const Dims& ws = weight.shape();
  const int64_t C = xb.shape()[1], OC = ws[0];
  if (OC % groups != 0) fail(AG_ERR_SHAPE, "out_channels ", OC, " (weight dim 0) is not divisible by groups ", groups);
  if (C != ws[1] * groups) {
    fail(AG_ERR_SHAPE, "input of shape ", shape_str(x.shape()), " has ", C, " channels but weight of shape ",
         shape_str(ws), " with groups ", groups, " expects ", ws[1] * groups);
  }
  if (bias && (bias->ndim() != 1 || bias->shape()[0] != OC)) {
    fail(AG_ERR_SHAPE, "bias shape ", shape_str(bias->shape()), " does not fit weight shape ", shape_str(ws),
         ": expected (", OC, ")");
  }
}

struct WindowArgs {
  Size2d kernel_size, dilation, padding, stride;
};

struct UnfoldBackward final : Node {
  UnfoldBackward(Size2d in, WindowArgs a) : input_hw(in), args(a) {}
  const char* name() const override { return "UnfoldBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    out[0] = fold(g[0], input_hw, args.kernel_size, args.dilation, args.padding, args.stride);
  }
  Size2d input_hw;
  WindowArgs args;
};

struct FoldBackward final : Node {
  explicit FoldBackward(WindowArgs a) : args(a) {}
  const char* name() const override { return "FoldBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    out[0] = unfold(g[0], args.kernel_size, args.dilation, args.padding, args.stride);
  }
  WindowArgs args;
};

}  // namespace

// unfold: (N, C, H, W) -> (N, C*kh*kw, L), one column per window position
// (PyTorch's F.unfold); a 3-D x gives (C*kh*kw, L). dx = fold(g).
Tensor unfold(const Tensor& x, Size2d kernel_size, Size2d dilation, Size2d padding, Size2d stride) {
  check_floating(*x);
  check_window_args(kernel_size, dilation, padding, stride);
  const Tensor x4 = batched4(x, "input");
  const Dims& s = x4->shape();
  if (s[1] == 0 || s[2] == 0 || s[3] == 0) {
    fail(AG_ERR_SHAPE, "input of shape ", shape_str(x->shape()), " has a zero-size dim other than the batch dim");
  }
  const kernels::Window2d w = window({s[2], s[3]}, kernel_size, dilation, padding, stride);
  const int64_t rows = s[1] * kernel_size[0] * kernel_size[1], L = w.out_h * w.out_w;
  const int64_t dims[] = {s[0], rows, L};
  checked_shape(dims, 3, itemsize(x->dtype()));
  Tensor y = empty(x->context(), x->dtype(), Dims{s[0], rows, L});
  for_ranges(x->context(), s[0] * rows, units_per_chunk(Work::Gather, L), [&](int64_t r0, int64_t r1) {
    kernels::unfold2d(x4->dtype(), s, view_of(*x4), w, y->data(), r0, r1);
  });
  if (should_record({x4.get()})) {
    record<UnfoldBackward>({x4.get()}, y, Size2d{s[2], s[3]}, WindowArgs{kernel_size, dilation, padding, stride});
  }
  return x->ndim() == 3 ? reshape(y, Dims{rows, L}) : y;
}

// fold: the adjoint of unfold, (N, C*kh*kw, L) -> (N, C, H, W) with
// (H, W) = output_size, overlapping windows summed; a 2-D input gives
// (C, H, W). dcols = unfold(g).
Tensor fold(const Tensor& cols, Size2d output_size, Size2d kernel_size, Size2d dilation, Size2d padding,
            Size2d stride) {
  check_floating(*cols);
  check_positive(output_size, "output_size");
  check_window_args(kernel_size, dilation, padding, stride);
  if (cols->ndim() != 2 && cols->ndim() != 3) {
    fail(AG_ERR_SHAPE, "input must be 2-D (C*kh*kw, L) or 3-D (N, C*kh*kw, L), got shape ", shape_str(cols->shape()));
  }
  const Tensor c3 = cols->ndim() == 3 ? cols : unsqueeze(cols, 0);
  const int64_t N = c3->shape()[0], rows = c3->shape()[1], L = c3->shape()[2];
  const int64_t kk = kernel_size[0] * kernel_size[1];
  if (rows % kk != 0) {
    fail(AG_ERR_SHAPE, "input of shape ", shape_str(cols->shape()), ": its channel dim ", rows,
         " is not divisible by kh*kw = ", kk, " (kernel_size ", pair_str(kernel_size), ")");
  }
  const kernels::Window2d w = window(output_size, kernel_size, dilation, padding, stride);
  if (L != w.out_h * w.out_w) {
    fail(AG_ERR_SHAPE, "input of shape ", shape_str(cols->shape()), " has ", L, " blocks but output_size ",
         pair_str(output_size), " has ", w.out_h, " x ", w.out_w, " = ", w.out_h * w.out_w, " window positions");
  }
  const Dims shape{N, rows / kk, output_size[0], output_size[1]};
  checked_shape(shape.data(), 4, itemsize(cols->dtype()));
  Tensor y = empty(cols->context(), cols->dtype(), shape);
  for_ranges(cols->context(), N * shape[1], units_per_chunk(Work::Gather, kk * L), [&](int64_t p0, int64_t p1) {
    kernels::fold2d(c3->dtype(), shape, view_of(*c3), w, y->data(), p0, p1);
  });
  if (should_record({c3.get()})) record<FoldBackward>({c3.get()}, y, WindowArgs{kernel_size, dilation, padding, stride});
  return cols->ndim() == 2 ? reshape(y, Dims{shape[1], shape[2], shape[3]}) : y;
}

// conv2d: y[n, o] = bias[o] + sum over the group's channels and the kernel
// of weight[o, c, i, j] * x[n, g*C/G + c, y*s - p + i*d, ...]: with G
// groups, (G, OC/G, K) @ unfold(x) viewed as (N, G, K, L), K = C/G*kh*kw.
Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, Size2d stride, Size2d padding,
              Size2d dilation, int64_t groups) {
  check_same(*x, *weight);
  check_floating(*x);
  if (bias) check_same(*x, *bias);
  if (weight->ndim() != 4) {
    fail(AG_ERR_SHAPE, "weight must be 4-D (out_channels, in_channels/groups, kH, kW), got shape ",
         shape_str(weight->shape()));
  }
  const Tensor x4 = batched4(x, "input");
  check_channels(*x, *x4, *weight, bias.get(), groups);
  const Dims& ws = weight->shape();
  const int64_t N = x4->shape()[0], OC = ws[0];
  const Tensor cols = unfold(x4, {ws[2], ws[3]}, dilation, padding, stride);
  const kernels::Window2d w = window({x4->shape()[2], x4->shape()[3]}, {ws[2], ws[3]}, dilation, padding, stride);
  const int64_t K = ws[1] * ws[2] * ws[3], L = cols->shape()[2];
  const Tensor wg = reshape(weight, Dims{groups, OC / groups, K});
  Tensor y = reshape(matmul(wg, reshape(cols, Dims{N, groups, K, L})), Dims{N, OC, w.out_h, w.out_w});
  if (bias) y = add(y, reshape(bias, Dims{OC, 1, 1}));
  return x->ndim() == 3 ? reshape(y, Dims{OC, w.out_h, w.out_w}) : y;
}

// conv1d: conv2d on (N, C, 1, L) with a (OC, C/G, 1, k) kernel.
Tensor conv1d(const Tensor& x, const Tensor& weight, const Tensor& bias, int64_t stride, int64_t padding,
              int64_t dilation, int64_t groups) {
  if (x->ndim() != 2 && x->ndim() != 3) {
    fail(AG_ERR_SHAPE, "input must be 2-D (C, L) or 3-D (N, C, L), got shape ", shape_str(x->shape()));
  }
  if (weight->ndim() != 3) {
    fail(AG_ERR_SHAPE, "weight must be 3-D (out_channels, in_channels/groups, kW), got shape ",
         shape_str(weight->shape()));
  }
  check_same(*x, *weight);
  check_floating(*x);
  if (bias) check_same(*x, *bias);
  check_channels(*x, *(x->ndim() == 3 ? x : unsqueeze(x, 0)), *weight, bias.get(), groups);
  if (stride <= 0) fail(AG_ERR_INVALID_ARGUMENT, "stride must be positive, got ", stride);
  if (dilation <= 0) fail(AG_ERR_INVALID_ARGUMENT, "dilation must be positive, got ", dilation);
  if (padding < 0) fail(AG_ERR_INVALID_ARGUMENT, "padding must be non-negative, got ", padding);
  const int64_t len = x->shape()[x->ndim() - 1];
  const int64_t span = checked_mul_add(dilation, weight->shape()[2] - 1, 1, "the dilated kernel size");
  const int64_t padded = checked_mul_add(2, padding, len, "the padded input length");
  if (padded < span) {
    fail(AG_ERR_SHAPE, "the padded input length ", padded, " (length ", len, ", padding ", padding,
         ") is smaller than the dilated kernel ", span, " (kernel size ", weight->shape()[2], ", dilation ", dilation,
         ")");
  }
  const Tensor y = conv2d(unsqueeze(x, -2), unsqueeze(weight, 2), bias, {1, stride}, {0, padding}, {1, dilation},
                          groups);
  return squeeze(y, Dims{y->ndim() - 2});
}

}  // namespace ag::ops
