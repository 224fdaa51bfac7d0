// Pooling. max_pool2d has its own kernel that also yields the argmax of each
// window; its gradient scatters into those positions with scatter_add, whose
// own gradient is gather by the same indices, so every order is covered.
// avg_pool2d is a sum over unfold's columns (a matmul with ones) divided by
// PyTorch's per-window divisor; adaptive_avg_pool2d is the linear map
// P_h x P_w^T with averaging matrices. Both are compositions, so their
// gradients of any order come from unfold, fold, pad and matmul.
#include <string>
#include <vector>

#include "kernels/conv.h"
#include "ops/op_common.h"

namespace ag::ops {

namespace {

std::string pair_str(Size2d p) { return "(" + std::to_string(p[0]) + ", " + std::to_string(p[1]) + ")"; }

// x as (N, C, H, W) (a batch of one for a 3-D x), with C, H, W non-zero.
Tensor pool_input(const Tensor& x) {
  check_floating(*x);
  if (x->ndim() != 3 && x->ndim() != 4) {
    fail(AG_ERR_SHAPE, "input must be 3-D (C, H, W) or 4-D (N, C, H, W), got shape ", shape_str(x->shape()));
  }
  const Tensor x4 = x->ndim() == 4 ? x : unsqueeze(x, 0);
  const Dims& s = x4->shape();
  if (s[1] == 0 || s[2] == 0 || s[3] == 0) {
    fail(AG_ERR_SHAPE, "input of shape ", shape_str(x->shape()), " has a zero-size dim other than the batch dim");
  }
  return x4;
}

// PyTorch's pooling output size along one dim: floor or ceil of the window
// count, where in ceil mode the last window must start inside the input or
// its left padding.
int64_t pooled_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dilation, bool ceil_mode) {
  const int64_t span = checked_mul_add(dilation, k - 1, 1, "the dilated kernel size");
  const int64_t padded = checked_mul_add(2, pad, in, "the padded input size");
  const int64_t num = checked_mul_add(1, padded - span, ceil_mode ? stride - 1 : 0, "the window count");
  int64_t out = (num >= 0 ? num / stride : -((-num + stride - 1) / stride)) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

// Checks the window arguments and returns the window over x4's (H, W).
kernels::Window2d pool_window(const Tensor& x, const Tensor& x4, Size2d k, Size2d stride, Size2d pad, Size2d dil,
                              bool ceil_mode, bool pad_half_of_dilated) {
  if (k[0] <= 0 || k[1] <= 0) fail(AG_ERR_INVALID_ARGUMENT, "kernel_size must be positive, got ", pair_str(k));
  if (stride[0] <= 0 || stride[1] <= 0) fail(AG_ERR_INVALID_ARGUMENT, "stride must be positive, got ", pair_str(stride));
  if (dil[0] <= 0 || dil[1] <= 0) fail(AG_ERR_INVALID_ARGUMENT, "dilation must be positive, got ", pair_str(dil));
  if (pad[0] < 0 || pad[1] < 0) fail(AG_ERR_INVALID_ARGUMENT, "padding must be non-negative, got ", pair_str(pad));
  // Max pooling bounds padding by the dilated kernel, average pooling by the kernel.
  const Size2d span = pad_half_of_dilated ? Size2d{checked_mul_add(dil[0], k[0] - 1, 1, "the dilated kernel height"),
                                                   checked_mul_add(dil[1], k[1] - 1, 1, "the dilated kernel width")}
                                          : k;
  if (pad[0] > span[0] / 2 || pad[1] > span[1] / 2) {
    fail(AG_ERR_INVALID_ARGUMENT, "padding ", pair_str(pad), " must be at most half of the ",
         pad_half_of_dilated ? "dilated kernel " : "kernel ", pair_str(span));
  }
  const Dims& s = x4->shape();
  kernels::Window2d w{k[0], k[1], stride[0], stride[1], pad[0], pad[1], dil[0], dil[1], 0, 0};
  w.out_h = pooled_size(s[2], k[0], pad[0], stride[0], dil[0], ceil_mode);
  w.out_w = pooled_size(s[3], k[1], pad[1], stride[1], dil[1], ceil_mode);
  if (w.out_h < 1 || w.out_w < 1) {
    fail(AG_ERR_SHAPE, "input of shape ", shape_str(x->shape()), " gives an output size ",
         pair_str({w.out_h, w.out_w}), " (kernel_size ", pair_str(k), ", stride ", pair_str(stride), ", padding ",
         pair_str(pad), ", dilation ", pair_str(dil), "): too small");
  }
  return w;
}

Tensor unbatched_if(const Tensor& x, const Tensor& y) {
  if (x->ndim() == 4) return y;
  return reshape(y, Dims{y->shape()[1], y->shape()[2], y->shape()[3]});
}

// The gradient of max pooling: g (N, C, OH, OW) added at the argmax
// positions of a zero (N, C, H, W) tensor (repeats summed in row-major order).
Tensor scatter_to_argmax(const Tensor& g, const Tensor& indices, const Dims& input_shape) {
  const int64_t N = input_shape[0], C = input_shape[1], L = g->shape()[2] * g->shape()[3];
  const Tensor zeros = full(g->context(), g->dtype(), Dims{N, C, input_shape[2] * input_shape[3]}, 0.0);
  return reshape(scatter_add(zeros, 2, reshape(indices, Dims{N, C, L}), reshape(g, Dims{N, C, L})), input_shape);
}

struct MaxPool2dBackward final : SavingNode<1> {
  explicit MaxPool2dBackward(const Dims& s) : input_shape(s) {}
  const char* name() const override { return "MaxPool2dBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    out[0] = scatter_to_argmax(g[0], saved[0].unpack(*this), input_shape);
  }
  Dims input_shape;
};

}  // namespace

// max_pool2d: the maximum of each (dilated) window, padding counting as
// -inf; dx = g scattered to the argmax positions. Saves the indices.
Tensor max_pool2d(const Tensor& x, Size2d kernel_size, Size2d stride, Size2d padding, Size2d dilation, bool ceil_mode,
                  Tensor* indices) {
  const Tensor x4 = pool_input(x);
  const kernels::Window2d w = pool_window(x, x4, kernel_size, stride, padding, dilation, ceil_mode, true);
  const Dims& s = x4->shape();
  const Dims shape{s[0], s[1], w.out_h, w.out_w};
  Tensor y = empty(x->context(), x->dtype(), shape);
  Tensor idx = empty(x->context(), DType::I64, shape);
  const int64_t window = kernel_size[0] * kernel_size[1] * w.out_h * w.out_w;
  for_ranges(x->context(), s[0] * s[1], units_per_chunk(Work::Gather, window),
                                [&](int64_t p0, int64_t p1) {
                                  kernels::max_pool2d(x4->dtype(), s, view_of(*x4), w, y->data(),
                                                      idx->data_as<int64_t>(), p0, p1);
                                });
  if (should_record({x4.get()})) record<MaxPool2dBackward>({x4.get()}, y, s)->saved[0].save(idx, false);
  if (indices != nullptr) *indices = unbatched_if(x, idx);
  return unbatched_if(x, y);
}

// avg_pool2d: each window's sum (zeros in the padding; in ceil mode the
// windows may reach past the padding, where x is extended by zeros) divided
// by PyTorch's divisor: the window clipped to the padded input
// (count_include_pad) or to the input, or divisor_override.
Tensor avg_pool2d(const Tensor& x, Size2d kernel_size, Size2d stride, Size2d padding, bool ceil_mode,
                  bool count_include_pad, int64_t divisor_override) {
  const Tensor x4 = pool_input(x);
  if (divisor_override < 0) fail(AG_ERR_INVALID_ARGUMENT, "divisor_override must be positive (or 0: none), got ", divisor_override);
  const kernels::Window2d w = pool_window(x, x4, kernel_size, stride, padding, {1, 1}, ceil_mode, false);
  const Dims& s = x4->shape();
  const int64_t N = s[0], C = s[1], H = s[2], W = s[3], L = w.out_h * w.out_w;
  // Zeros beyond the padding, so that unfold sees every ceil-mode window.
  const int64_t extra_h = std::max<int64_t>(0, (w.out_h - 1) * w.sh + w.kh - (H + 2 * w.ph));
  const int64_t extra_w = std::max<int64_t>(0, (w.out_w - 1) * w.sw + w.kw - (W + 2 * w.pw));
  const Tensor xp = extra_h || extra_w ? pad(x4, {0, extra_w, 0, extra_h}, PadMode::Constant, 0.0) : x4;
  const Tensor planes = reshape(xp, Dims{N * C, 1, H + extra_h, W + extra_w});
  const Tensor cols = unfold(planes, kernel_size, {1, 1}, padding, stride);  // (N*C, kh*kw, L)
  const Tensor ones = full(x->context(), x->dtype(), Dims{1, kernel_size[0] * kernel_size[1]}, 1.0);
  Tensor divisor = empty(x->context(), x->dtype(), Dims{L});
  visit_floating(x->dtype(), [&](auto zero) {
    using T = decltype(zero);
    T* d = divisor->data_as<T>();
    for (int64_t i = 0; i < w.out_h; ++i) {
      for (int64_t j = 0; j < w.out_w; ++j) {
        int64_t h0 = i * w.sh - w.ph, w0 = j * w.sw - w.pw;
        int64_t h1 = std::min(h0 + w.kh, H + w.ph), w1 = std::min(w0 + w.kw, W + w.pw);
        const int64_t padded_count = (h1 - h0) * (w1 - w0);
        h0 = std::max<int64_t>(h0, 0), w0 = std::max<int64_t>(w0, 0);
        h1 = std::min(h1, H), w1 = std::min(w1, W);
        const int64_t count = divisor_override ? divisor_override : count_include_pad ? padded_count
                                                                                       : (h1 - h0) * (w1 - w0);
        d[i * w.out_w + j] = static_cast<T>(count);
      }
    }
  });
  const Tensor y = reshape(div(matmul(ones, cols), divisor), Dims{N, C, w.out_h, w.out_w});
  return unbatched_if(x, y);
}

// adaptive_avg_pool2d: output cell (i, j) averages rows
// [floor(i*H/OH), ceil((i+1)*H/OH)) and the same range of columns:
// y = P_h @ x @ P_w^T with P_h (OH, H) and P_w (OW, W) holding 1/count.
namespace {
Tensor averaging_matrix(const Tensor& x, int64_t out, int64_t in) {
  Tensor p = full_for_writes(x->context(), x->dtype(), Dims{out, in}, 0.0);
  visit_floating(x->dtype(), [&](auto zero) {
    using T = decltype(zero);
    T* d = p->data_as<T>();
    for (int64_t i = 0; i < out; ++i) {
      const int64_t b = i * in / out, e = ((i + 1) * in + out - 1) / out;
      for (int64_t k = b; k < e; ++k) d[i * in + k] = static_cast<T>(1.0 / static_cast<double>(e - b));
    }
  });
  return p;
}
}  // namespace
Tensor adaptive_avg_pool2d(const Tensor& x, Size2d output_size) {
  const Tensor x4 = pool_input(x);
  if (output_size[0] < 0 || output_size[1] < 0) {
    fail(AG_ERR_INVALID_ARGUMENT, "output_size must be non-negative, got ", pair_str(output_size));
  }
  const Dims& s = x4->shape();
  const Tensor ph = averaging_matrix(x, output_size[0], s[2]);
  const Tensor pw = averaging_matrix(x, output_size[1], s[3]);
  return matmul(matmul(ph, x), transpose(pw, 0, 1));
}

}  // namespace ag::ops
