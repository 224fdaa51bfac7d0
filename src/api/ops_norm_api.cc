// C entry points of the normalization layers (family CUSTOM in ops.def); their
// fused gradients are families (ops_api.cc).
#include "api/guard.h"
#include "ops/ops.h"

using namespace ag;

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

AG_API ag_status ag_op_instance_norm(ag_tensor** out, const ag_tensor* x, ag_tensor* running_mean,
                                     ag_tensor* running_var, const ag_tensor* weight, const ag_tensor* bias,
                                     int32_t use_input_stats, double momentum, double eps) noexcept {
  return api::call("ag_op_instance_norm", [&] {
    api::check_out(out);
    api::Borrowed tx(x, "x");
    *out = api::to_handle(ops::instance_norm(
        tx, api::optional_tensor(running_mean, "running_mean"), api::optional_tensor(running_var, "running_var"),
        api::optional_tensor(weight, "weight"), api::optional_tensor(bias, "bias"), use_input_stats != 0, momentum, eps));
  });
}

AG_API ag_status ag_op_local_response_norm(ag_tensor** out, const ag_tensor* x, int64_t size, double alpha,
                                           double beta, double k) noexcept {
  return api::call("ag_op_local_response_norm", [&] {
    api::check_out(out);
    *out = api::to_handle(ops::local_response_norm(api::Borrowed(x, "x"), size, alpha, beta, k));
  });
}

}  // extern "C"
