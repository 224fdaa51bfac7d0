// C entry points of the CUSTOM ops of ops_nn.h: the fused softmax gradients
// and the losses.
#include "api/guard.h"
#include "ops/ops.h"

using namespace ag;

extern "C" {

AG_API ag_status ag_op_softmax_backward(ag_tensor** out, const ag_tensor* grad, const ag_tensor* y,
                                        int64_t dim) noexcept {
  return api::call("ag_op_softmax_backward", [&] {
    api::check_out(out);
    api::Borrowed tg(grad, "grad"), ty(y, "y");
    *out = api::to_handle(ops::softmax_backward(tg, ty, dim));
  });
}

AG_API ag_status ag_op_log_softmax_backward(ag_tensor** out, const ag_tensor* grad, const ag_tensor* y,
                                            int64_t dim) noexcept {
  return api::call("ag_op_log_softmax_backward", [&] {
    api::check_out(out);
    api::Borrowed tg(grad, "grad"), ty(y, "y");
    *out = api::to_handle(ops::log_softmax_backward(tg, ty, dim));
  });
}

AG_API ag_status ag_op_cross_entropy(ag_tensor** out, const ag_tensor* input, const ag_tensor* target,
                                     int32_t reduction, int64_t ignore_index, double label_smoothing) noexcept {
  return api::call("ag_op_cross_entropy", [&] {
    api::check_out(out);
    api::Borrowed ti(input, "input"), tt(target, "target");
    *out = api::to_handle(ops::cross_entropy(ti, tt, ops::reduction_arg(reduction), ignore_index, label_smoothing));
  });
}

AG_API ag_status ag_op_nll_loss(ag_tensor** out, const ag_tensor* input, const ag_tensor* target, int32_t reduction,
                                int64_t ignore_index) noexcept {
  return api::call("ag_op_nll_loss", [&] {
    api::check_out(out);
    api::Borrowed ti(input, "input"), tt(target, "target");
    *out = api::to_handle(ops::nll_loss(ti, tt, ops::reduction_arg(reduction), ignore_index));
  });
}

AG_API ag_status ag_op_mse_loss(ag_tensor** out, const ag_tensor* input, const ag_tensor* target,
                                int32_t reduction) noexcept {
  return api::call("ag_op_mse_loss", [&] {
    api::check_out(out);
    api::Borrowed ti(input, "input"), tt(target, "target");
    *out = api::to_handle(ops::mse_loss(ti, tt, ops::reduction_arg(reduction)));
  });
}

AG_API ag_status ag_op_l1_loss(ag_tensor** out, const ag_tensor* input, const ag_tensor* target,
                               int32_t reduction) noexcept {
  return api::call("ag_op_l1_loss", [&] {
    api::check_out(out);
    api::Borrowed ti(input, "input"), tt(target, "target");
    *out = api::to_handle(ops::l1_loss(ti, tt, ops::reduction_arg(reduction)));
  });
}

AG_API ag_status ag_op_smooth_l1_loss(ag_tensor** out, const ag_tensor* input, const ag_tensor* target,
                                      int32_t reduction, double beta) noexcept {
  return api::call("ag_op_smooth_l1_loss", [&] {
    api::check_out(out);
    api::Borrowed ti(input, "input"), tt(target, "target");
    *out = api::to_handle(ops::smooth_l1_loss(ti, tt, ops::reduction_arg(reduction), beta));
  });
}

AG_API ag_status ag_op_huber_loss(ag_tensor** out, const ag_tensor* input, const ag_tensor* target,
                                  int32_t reduction, double delta) noexcept {
  return api::call("ag_op_huber_loss", [&] {
    api::check_out(out);
    api::Borrowed ti(input, "input"), tt(target, "target");
    *out = api::to_handle(ops::huber_loss(ti, tt, ops::reduction_arg(reduction), delta));
  });
}

AG_API ag_status ag_op_binary_cross_entropy(ag_tensor** out, const ag_tensor* input, const ag_tensor* target,
                                            int32_t reduction) noexcept {
  return api::call("ag_op_binary_cross_entropy", [&] {
    api::check_out(out);
    api::Borrowed ti(input, "input"), tt(target, "target");
    *out = api::to_handle(ops::binary_cross_entropy(ti, tt, ops::reduction_arg(reduction)));
  });
}

AG_API ag_status ag_op_binary_cross_entropy_with_logits(ag_tensor** out, const ag_tensor* input,
                                                        const ag_tensor* target, const ag_tensor* pos_weight,
                                                        int32_t reduction) noexcept {
  return api::call("ag_op_binary_cross_entropy_with_logits", [&] {
    api::check_out(out);
    api::Borrowed ti(input, "input"), tt(target, "target");
    const Ref<TensorImpl> pw = pos_weight ? api::tensor_ref(pos_weight, "pos_weight") : Ref<TensorImpl>();
    *out = api::to_handle(
        ops::binary_cross_entropy_with_logits(ti, tt, pos_weight ? &pw : nullptr, ops::reduction_arg(reduction)));
  });
}

}  // extern "C"
