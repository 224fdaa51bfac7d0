// C entry points of the normalization layers (family CUSTOM in ops.def).
#include "api/guard.h"
#include "ops/ops.h"

using namespace ag;

namespace {

Tensor optional_arg(const ag_tensor* t, const char* what) { return t ? api::tensor_ref(t, what) : Tensor(); }

}  // namespace

extern "C" {

AG_API ag_status ag_op_layer_norm(ag_tensor** out, const ag_tensor* x, const int64_t* normalized_shape, int32_t n,
                                  const ag_tensor* weight, const ag_tensor* bias, double eps) noexcept {
  return api::call("ag_op_layer_norm", [&] {
    api::check_out(out);
    api::Borrowed tx(x, "x");
    const Dims ns = api::dims_arg(normalized_shape, n, "normalized_shape", "n");
    *out = api::to_handle(ops::layer_norm(tx, ns, optional_arg(weight, "weight"), optional_arg(bias, "bias"), eps));
  });
}

AG_API ag_status ag_op_rms_norm(ag_tensor** out, const ag_tensor* x, const int64_t* normalized_shape, int32_t n,
                                const ag_tensor* weight, double eps) noexcept {
  return api::call("ag_op_rms_norm", [&] {
    api::check_out(out);
    api::Borrowed tx(x, "x");
    const Dims ns = api::dims_arg(normalized_shape, n, "normalized_shape", "n");
    *out = api::to_handle(ops::rms_norm(tx, ns, optional_arg(weight, "weight"), eps));
  });
}

AG_API ag_status ag_op_layer_norm_backward(ag_tensor** out, const ag_tensor* grad, const ag_tensor* x,
                                           const int64_t* normalized_shape, int32_t n, const ag_tensor* weight,
                                           double eps) noexcept {
  return api::call("ag_op_layer_norm_backward", [&] {
    api::check_out(out);
    api::Borrowed tg(grad, "grad"), tx(x, "x");
    const Dims ns = api::dims_arg(normalized_shape, n, "normalized_shape", "n");
    *out = api::to_handle(ops::layer_norm_backward(tg, tx, ns, optional_arg(weight, "weight"), eps));
  });
}

AG_API ag_status ag_op_rms_norm_backward(ag_tensor** out, const ag_tensor* grad, const ag_tensor* x,
                                         const int64_t* normalized_shape, int32_t n, const ag_tensor* weight,
                                         double eps) noexcept {
  return api::call("ag_op_rms_norm_backward", [&] {
    api::check_out(out);
    api::Borrowed tg(grad, "grad"), tx(x, "x");
    const Dims ns = api::dims_arg(normalized_shape, n, "normalized_shape", "n");
    *out = api::to_handle(ops::rms_norm_backward(tg, tx, ns, optional_arg(weight, "weight"), eps));
  });
}

AG_API ag_status ag_op_layer_norm_weight_grad(ag_tensor** out, const ag_tensor* grad, const ag_tensor* x,
                                              const int64_t* normalized_shape, int32_t n, double eps) noexcept {
  return api::call("ag_op_layer_norm_weight_grad", [&] {
    api::check_out(out);
    api::Borrowed tg(grad, "grad"), tx(x, "x");
    const Dims ns = api::dims_arg(normalized_shape, n, "normalized_shape", "n");
    *out = api::to_handle(ops::layer_norm_weight_grad(tg, tx, ns, eps));
  });
}

AG_API ag_status ag_op_rms_norm_weight_grad(ag_tensor** out, const ag_tensor* grad, const ag_tensor* x,
                                            const int64_t* normalized_shape, int32_t n, double eps) noexcept {
  return api::call("ag_op_rms_norm_weight_grad", [&] {
    api::check_out(out);
    api::Borrowed tg(grad, "grad"), tx(x, "x");
    const Dims ns = api::dims_arg(normalized_shape, n, "normalized_shape", "n");
    *out = api::to_handle(ops::rms_norm_weight_grad(tg, tx, ns, eps));
  });
}

AG_API ag_status ag_op_batch_norm(ag_tensor** out, const ag_tensor* x, ag_tensor* running_mean, ag_tensor* running_var,
                                  const ag_tensor* weight, const ag_tensor* bias, int32_t training, double momentum,
                                  double eps) noexcept {
  return api::call("ag_op_batch_norm", [&] {
    api::check_out(out);
    api::Borrowed tx(x, "x");
    *out = api::to_handle(ops::batch_norm(tx, optional_arg(running_mean, "running_mean"),
                                          optional_arg(running_var, "running_var"), optional_arg(weight, "weight"),
                                          optional_arg(bias, "bias"), training != 0, momentum, eps));
  });
}

AG_API ag_status ag_op_group_norm(ag_tensor** out, const ag_tensor* x, int64_t num_groups, const ag_tensor* weight,
                                  const ag_tensor* bias, double eps) noexcept {
  return api::call("ag_op_group_norm", [&] {
    api::check_out(out);
    api::Borrowed tx(x, "x");
    *out = api::to_handle(
        ops::group_norm(tx, num_groups, optional_arg(weight, "weight"), optional_arg(bias, "bias"), eps));
  });
}

}  // extern "C"
