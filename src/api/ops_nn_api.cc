// C entry points of the CUSTOM ops of ops_nn.h: the fused softmax gradients.
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

}  // extern "C"
