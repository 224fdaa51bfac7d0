// C entry points of the normalization layers (family CUSTOM in ops.def).
#include "api/guard.h"
#include "ops/ops.h"

using namespace ag;

namespace {

// The body shared by the shims of the gradient ops: grad and x borrowed
// under those names, normalized_shape checked, then the op.
template <class Op>
ag_status grad_call(const char* fn, ag_tensor** out, const ag_tensor* grad, const ag_tensor* x,
                    const int64_t* normalized_shape, int32_t n, Op op) noexcept {
  return api::call(fn, [&] {
    api::check_out(out);
    api::Borrowed tg(grad, "grad"), tx(x, "x");
    const Dims ns = api::dims_arg(normalized_shape, n, "normalized_shape", "n");
    *out = api::to_handle(op(tg.get(), tx.get(), ns));
  });
}

}  // namespace

extern "C" {

AG_API ag_status ag_op_layer_norm(ag_tensor** out, const ag_tensor* x, const int64_t* normalized_shape, int32_t n,
                                  const ag_tensor* weight, const ag_tensor* bias, double eps) noexcept {
  return api::call("ag_op_layer_norm", [&] {
    api::check_out(out);
    api::Borrowed tx(x, "x");
    const Dims ns = api::dims_arg(normalized_shape, n, "normalized_shape", "n");
    *out = api::to_handle(
        ops::layer_norm(tx, ns, api::optional_tensor(weight, "weight"), api::optional_tensor(bias, "bias"), eps));
  });
}

AG_API ag_status ag_op_rms_norm(ag_tensor** out, const ag_tensor* x, const int64_t* normalized_shape, int32_t n,
                                const ag_tensor* weight, double eps) noexcept {
  return api::call("ag_op_rms_norm", [&] {
    api::check_out(out);
    api::Borrowed tx(x, "x");
    const Dims ns = api::dims_arg(normalized_shape, n, "normalized_shape", "n");
    *out = api::to_handle(ops::rms_norm(tx, ns, api::optional_tensor(weight, "weight"), eps));
  });
}

AG_API ag_status ag_op_layer_norm_backward(ag_tensor** out, const ag_tensor* grad, const ag_tensor* x,
                                           const int64_t* normalized_shape, int32_t n, const ag_tensor* weight,
                                           double eps) noexcept {
  return grad_call("ag_op_layer_norm_backward", out, grad, x, normalized_shape, n,
                   [&](const Tensor& g, const Tensor& t, const Dims& ns) {
                     return ops::layer_norm_backward(g, t, ns, api::optional_tensor(weight, "weight"), eps);
                   });
}

AG_API ag_status ag_op_rms_norm_backward(ag_tensor** out, const ag_tensor* grad, const ag_tensor* x,
                                         const int64_t* normalized_shape, int32_t n, const ag_tensor* weight,
                                         double eps) noexcept {
  return grad_call("ag_op_rms_norm_backward", out, grad, x, normalized_shape, n,
                   [&](const Tensor& g, const Tensor& t, const Dims& ns) {
                     return ops::rms_norm_backward(g, t, ns, api::optional_tensor(weight, "weight"), eps);
                   });
}

AG_API ag_status ag_op_layer_norm_weight_grad(ag_tensor** out, const ag_tensor* grad, const ag_tensor* x,
                                              const int64_t* normalized_shape, int32_t n, double eps) noexcept {
  return grad_call(
      "ag_op_layer_norm_weight_grad", out, grad, x, normalized_shape, n,
      [&](const Tensor& g, const Tensor& t, const Dims& ns) { return ops::layer_norm_weight_grad(g, t, ns, eps); });
}

AG_API ag_status ag_op_rms_norm_weight_grad(ag_tensor** out, const ag_tensor* grad, const ag_tensor* x,
                                            const int64_t* normalized_shape, int32_t n, double eps) noexcept {
  return grad_call(
      "ag_op_rms_norm_weight_grad", out, grad, x, normalized_shape, n,
      [&](const Tensor& g, const Tensor& t, const Dims& ns) { return ops::rms_norm_weight_grad(g, t, ns, eps); });
}

AG_API ag_status ag_op_batch_norm(ag_tensor** out, const ag_tensor* x, ag_tensor* running_mean, ag_tensor* running_var,
                                  const ag_tensor* weight, const ag_tensor* bias, int32_t training, double momentum,
                                  double eps) noexcept {
  return api::call("ag_op_batch_norm", [&] {
    api::check_out(out);
    api::Borrowed tx(x, "x");
    *out = api::to_handle(ops::batch_norm(
        tx, api::optional_tensor(running_mean, "running_mean"), api::optional_tensor(running_var, "running_var"),
        api::optional_tensor(weight, "weight"), api::optional_tensor(bias, "bias"), training != 0, momentum, eps));
  });
}

AG_API ag_status ag_op_group_norm(ag_tensor** out, const ag_tensor* x, int64_t num_groups, const ag_tensor* weight,
                                  const ag_tensor* bias, double eps) noexcept {
  return api::call("ag_op_group_norm", [&] {
    api::check_out(out);
    api::Borrowed tx(x, "x");
    *out = api::to_handle(ops::group_norm(tx, num_groups, api::optional_tensor(weight, "weight"),
                                          api::optional_tensor(bias, "bias"), eps));
  });
}

}  // extern "C"
