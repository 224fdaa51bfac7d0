// C entry points of convolution and pooling (ag/ops_conv.h). Spatial
// arguments are int64_t[2] arrays (height, width); NULL takes the default.
#include "api/guard.h"
#include "ops/ops.h"

using namespace ag;

namespace {

// A (height, width) pair, or `fallback` for NULL.
ops::Size2d pair_arg(const int64_t* p, ops::Size2d fallback) {
  return p == nullptr ? fallback : ops::Size2d{p[0], p[1]};
}

ops::Size2d required_pair(const int64_t* p, const char* what) {
  if (p == nullptr) fail(AG_ERR_INVALID_ARGUMENT, what, " is NULL");
  return ops::Size2d{p[0], p[1]};
}

}  // namespace

extern "C" {

AG_API ag_status ag_op_unfold(ag_tensor** out, const ag_tensor* x, const int64_t* kernel_size, const int64_t* dilation,
                              const int64_t* padding, const int64_t* stride) noexcept {
  return api::call("ag_op_unfold", [&] {
    api::check_out(out);
    api::Borrowed tx(x, "x");
    *out = api::to_handle(ops::unfold(tx, required_pair(kernel_size, "kernel_size"), pair_arg(dilation, {1, 1}),
                                      pair_arg(padding, {0, 0}), pair_arg(stride, {1, 1})));
  });
}

AG_API ag_status ag_op_fold(ag_tensor** out, const ag_tensor* x, const int64_t* output_size, const int64_t* kernel_size,
                            const int64_t* dilation, const int64_t* padding, const int64_t* stride) noexcept {
  return api::call("ag_op_fold", [&] {
    api::check_out(out);
    api::Borrowed tx(x, "x");
    *out = api::to_handle(ops::fold(tx, required_pair(output_size, "output_size"),
                                    required_pair(kernel_size, "kernel_size"), pair_arg(dilation, {1, 1}),
                                    pair_arg(padding, {0, 0}), pair_arg(stride, {1, 1})));
  });
}

AG_API ag_status ag_op_conv2d(ag_tensor** out, const ag_tensor* x, const ag_tensor* weight, const ag_tensor* bias,
                              const int64_t* stride, const int64_t* padding, const int64_t* dilation,
                              int64_t groups) noexcept {
  return api::call("ag_op_conv2d", [&] {
    api::check_out(out);
    api::Borrowed tx(x, "x"), tw(weight, "weight");
    *out = api::to_handle(ops::conv2d(tx, tw, api::optional_tensor(bias, "bias"), pair_arg(stride, {1, 1}),
                                      pair_arg(padding, {0, 0}), pair_arg(dilation, {1, 1}), groups));
  });
}

AG_API ag_status ag_op_conv1d(ag_tensor** out, const ag_tensor* x, const ag_tensor* weight, const ag_tensor* bias,
                              int64_t stride, int64_t padding, int64_t dilation, int64_t groups) noexcept {
  return api::call("ag_op_conv1d", [&] {
    api::check_out(out);
    api::Borrowed tx(x, "x"), tw(weight, "weight");
    *out = api::to_handle(ops::conv1d(tx, tw, api::optional_tensor(bias, "bias"), stride, padding, dilation, groups));
  });
}

AG_API ag_status ag_op_max_pool2d(ag_tensor** out, const ag_tensor* x, const int64_t* kernel_size, const int64_t* stride,
                                  const int64_t* padding, const int64_t* dilation, int32_t ceil_mode) noexcept {
  return api::call("ag_op_max_pool2d", [&] {
    api::check_out(out);
    api::Borrowed tx(x, "x");
    const ops::Size2d k = required_pair(kernel_size, "kernel_size");
    *out = api::to_handle(ops::max_pool2d(tx, k, pair_arg(stride, k), pair_arg(padding, {0, 0}),
                                          pair_arg(dilation, {1, 1}), ceil_mode != 0, nullptr));
  });
}

AG_API ag_status ag_op_max_pool2d_with_indices(ag_tensor** out, ag_tensor** indices, const ag_tensor* x,
                                               const int64_t* kernel_size, const int64_t* stride,
                                               const int64_t* padding, const int64_t* dilation,
                                               int32_t ceil_mode) noexcept {
  return api::call("ag_op_max_pool2d_with_indices", [&] {
    api::check_out(out);
    if (indices == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "the indices output pointer is NULL");
    api::Borrowed tx(x, "x");
    const ops::Size2d k = required_pair(kernel_size, "kernel_size");
    Tensor idx;
    Tensor y = ops::max_pool2d(tx, k, pair_arg(stride, k), pair_arg(padding, {0, 0}), pair_arg(dilation, {1, 1}),
                               ceil_mode != 0, &idx);
    *out = api::to_handle(std::move(y));
    *indices = api::to_handle(std::move(idx));
  });
}

AG_API ag_status ag_op_avg_pool2d(ag_tensor** out, const ag_tensor* x, const int64_t* kernel_size, const int64_t* stride,
                                  const int64_t* padding, int32_t ceil_mode, int32_t count_include_pad,
                                  int64_t divisor_override) noexcept {
  return api::call("ag_op_avg_pool2d", [&] {
    api::check_out(out);
    api::Borrowed tx(x, "x");
    const ops::Size2d k = required_pair(kernel_size, "kernel_size");
    *out = api::to_handle(ops::avg_pool2d(tx, k, pair_arg(stride, k), pair_arg(padding, {0, 0}), ceil_mode != 0,
                                          count_include_pad != 0, divisor_override));
  });
}

AG_API ag_status ag_op_adaptive_avg_pool2d(ag_tensor** out, const ag_tensor* x, const int64_t* output_size) noexcept {
  return api::call("ag_op_adaptive_avg_pool2d", [&] {
    api::check_out(out);
    api::Borrowed tx(x, "x");
    *out = api::to_handle(ops::adaptive_avg_pool2d(tx, required_pair(output_size, "output_size")));
  });
}

AG_API ag_status ag_op_conv_transpose2d(ag_tensor** out, const ag_tensor* x, const ag_tensor* weight,
                                        const ag_tensor* bias, const int64_t* stride, const int64_t* padding,
                                        const int64_t* output_padding, int64_t groups,
                                        const int64_t* dilation) noexcept {
  return api::call("ag_op_conv_transpose2d", [&] {
    api::check_out(out);
    api::Borrowed tx(x, "x"), tw(weight, "weight");
    *out = api::to_handle(ops::conv_transpose2d(tx, tw, api::optional_tensor(bias, "bias"), pair_arg(stride, {1, 1}),
                                                pair_arg(padding, {0, 0}), pair_arg(output_padding, {0, 0}), groups,
                                                pair_arg(dilation, {1, 1})));
  });
}

AG_API ag_status ag_op_conv_transpose1d(ag_tensor** out, const ag_tensor* x, const ag_tensor* weight,
                                        const ag_tensor* bias, int64_t stride, int64_t padding,
                                        int64_t output_padding, int64_t groups, int64_t dilation) noexcept {
  return api::call("ag_op_conv_transpose1d", [&] {
    api::check_out(out);
    api::Borrowed tx(x, "x"), tw(weight, "weight");
    *out = api::to_handle(ops::conv_transpose1d(tx, tw, api::optional_tensor(bias, "bias"), stride, padding,
                                                output_padding, groups, dilation));
  });
}

AG_API ag_status ag_op_interpolate(ag_tensor** out, const ag_tensor* x, const int64_t* size, int32_t ndim,
                                   double scale_factor, int32_t mode, int32_t align_corners) noexcept {
  return api::call("ag_op_interpolate", [&] {
    api::check_out(out);
    api::Borrowed tx(x, "x");
    if (mode < AG_INTERP_NEAREST || mode > AG_INTERP_BILINEAR) {
      fail(AG_ERR_INVALID_ARGUMENT, "mode ", mode, " is not an AG_INTERP_* value (0..2)");
    }
    *out = api::to_handle(ops::interpolate(tx, api::dims_arg(size, ndim, "size", "ndim"), scale_factor,
                                           static_cast<ops::InterpMode>(mode), align_corners != 0));
  });
}

AG_API ag_status ag_op_max_pool1d(ag_tensor** out, const ag_tensor* x, int64_t kernel_size, int64_t stride,
                                  int64_t padding, int64_t dilation, int32_t ceil_mode) noexcept {
  return api::call("ag_op_max_pool1d", [&] {
    api::check_out(out);
    *out = api::to_handle(ops::max_pool1d(api::Borrowed(x, "x"), kernel_size, stride, padding, dilation, ceil_mode != 0));
  });
}

AG_API ag_status ag_op_avg_pool1d(ag_tensor** out, const ag_tensor* x, int64_t kernel_size, int64_t stride,
                                  int64_t padding, int32_t ceil_mode, int32_t count_include_pad) noexcept {
  return api::call("ag_op_avg_pool1d", [&] {
    api::check_out(out);
    *out = api::to_handle(ops::avg_pool1d(api::Borrowed(x, "x"), kernel_size, stride, padding, ceil_mode != 0,
                                          count_include_pad != 0));
  });
}

AG_API ag_status ag_op_adaptive_max_pool2d(ag_tensor** out, const ag_tensor* x, const int64_t* output_size) noexcept {
  return api::call("ag_op_adaptive_max_pool2d", [&] {
    api::check_out(out);
    api::Borrowed tx(x, "x");
    *out = api::to_handle(ops::adaptive_max_pool2d(tx, required_pair(output_size, "output_size")));
  });
}

}  // extern "C"
