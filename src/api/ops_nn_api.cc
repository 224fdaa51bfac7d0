// C entry points of the CUSTOM ops of ops_nn.h: the fused softmax gradients
// and the losses.
#include "api/guard.h"
#include "ops/ops.h"

using namespace ag;

using ops::Reduction;

namespace {

// The body shared by the loss shims: input and target borrowed under those
// names, the reduction checked, then the loss itself.
template <class Loss>
ag_status loss_call(const char* fn, ag_tensor** out, const ag_tensor* input, const ag_tensor* target, int32_t reduction,
                    Loss loss) noexcept {
  return api::call(fn, [&] {
    api::check_out(out);
    api::Borrowed ti(input, "input"), tt(target, "target");
    *out = api::to_handle(loss(ti.get(), tt.get(), ops::reduction_arg(reduction)));
  });
}

}  // namespace

extern "C" {

AG_API ag_status ag_op_cross_entropy(ag_tensor** out, const ag_tensor* input, const ag_tensor* target,
                                     int32_t reduction, int64_t ignore_index, double label_smoothing) noexcept {
  return loss_call("ag_op_cross_entropy", out, input, target, reduction,
                   [&](const Tensor& i, const Tensor& t, Reduction r) {
                     return ops::cross_entropy(i, t, r, ignore_index, label_smoothing);
                   });
}

AG_API ag_status ag_op_nll_loss(ag_tensor** out, const ag_tensor* input, const ag_tensor* target, int32_t reduction,
                                int64_t ignore_index) noexcept {
  return loss_call("ag_op_nll_loss", out, input, target, reduction,
                   [&](const Tensor& i, const Tensor& t, Reduction r) { return ops::nll_loss(i, t, r, ignore_index); });
}

AG_API ag_status ag_op_smooth_l1_loss(ag_tensor** out, const ag_tensor* input, const ag_tensor* target,
                                      int32_t reduction, double beta) noexcept {
  return loss_call("ag_op_smooth_l1_loss", out, input, target, reduction,
                   [&](const Tensor& i, const Tensor& t, Reduction r) { return ops::smooth_l1_loss(i, t, r, beta); });
}

AG_API ag_status ag_op_huber_loss(ag_tensor** out, const ag_tensor* input, const ag_tensor* target,
                                  int32_t reduction, double delta) noexcept {
  return loss_call("ag_op_huber_loss", out, input, target, reduction,
                   [&](const Tensor& i, const Tensor& t, Reduction r) { return ops::huber_loss(i, t, r, delta); });
}

AG_API ag_status ag_op_binary_cross_entropy_with_logits(ag_tensor** out, const ag_tensor* input,
                                                        const ag_tensor* target, const ag_tensor* pos_weight,
                                                        int32_t reduction) noexcept {
  return api::call("ag_op_binary_cross_entropy_with_logits", [&] {
    api::check_out(out);
    api::Borrowed ti(input, "input"), tt(target, "target");
    const Tensor pw = api::optional_tensor(pos_weight, "pos_weight");
    *out = api::to_handle(
        ops::binary_cross_entropy_with_logits(ti, tt, pos_weight ? &pw : nullptr, ops::reduction_arg(reduction)));
  });
}

}  // extern "C"
