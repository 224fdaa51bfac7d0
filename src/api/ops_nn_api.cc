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

AG_API ag_status ag_op_scaled_dot_product_attention(ag_tensor** out, const ag_tensor* query, const ag_tensor* key,
                                                    const ag_tensor* value, const ag_tensor* attn_mask,
                                                    double dropout_p, int32_t is_causal, double scale) noexcept {
  return api::call("ag_op_scaled_dot_product_attention", [&] {
    api::check_out(out);
    api::Borrowed tq(query, "query"), tk(key, "key"), tv(value, "value");
    *out = api::to_handle(ops::scaled_dot_product_attention(tq, tk, tv, api::optional_tensor(attn_mask, "attn_mask"),
                                                            dropout_p, is_causal != 0, scale));
  });
}

AG_API ag_status ag_op_kl_div(ag_tensor** out, const ag_tensor* input, const ag_tensor* target, int32_t reduction,
                              int32_t log_target) noexcept {
  return loss_call("ag_op_kl_div", out, input, target, reduction,
                   [&](const Tensor& i, const Tensor& t, Reduction r) { return ops::kl_div(i, t, r, log_target != 0); });
}

AG_API ag_status ag_op_poisson_nll_loss(ag_tensor** out, const ag_tensor* input, const ag_tensor* target,
                                        int32_t log_input, int32_t full, double eps, int32_t reduction) noexcept {
  return loss_call("ag_op_poisson_nll_loss", out, input, target, reduction, [&](const Tensor& i, const Tensor& t, Reduction r) {
    return ops::poisson_nll_loss(i, t, log_input != 0, full != 0, eps, r);
  });
}

AG_API ag_status ag_op_gaussian_nll_loss(ag_tensor** out, const ag_tensor* input, const ag_tensor* target,
                                         const ag_tensor* var, int32_t full, double eps, int32_t reduction) noexcept {
  return api::call("ag_op_gaussian_nll_loss", [&] {
    api::check_out(out);
    api::Borrowed ti(input, "input"), tt(target, "target"), tv(var, "var");
    *out = api::to_handle(ops::gaussian_nll_loss(ti, tt, tv, full != 0, eps, ops::reduction_arg(reduction)));
  });
}

AG_API ag_status ag_op_margin_ranking_loss(ag_tensor** out, const ag_tensor* input1, const ag_tensor* input2,
                                           const ag_tensor* target, double margin, int32_t reduction) noexcept {
  return api::call("ag_op_margin_ranking_loss", [&] {
    api::check_out(out);
    api::Borrowed a(input1, "input1"), b(input2, "input2"), t(target, "target");
    *out = api::to_handle(ops::margin_ranking_loss(a, b, t, margin, ops::reduction_arg(reduction)));
  });
}

AG_API ag_status ag_op_cosine_embedding_loss(ag_tensor** out, const ag_tensor* input1, const ag_tensor* input2,
                                             const ag_tensor* target, double margin, int32_t reduction) noexcept {
  return api::call("ag_op_cosine_embedding_loss", [&] {
    api::check_out(out);
    api::Borrowed a(input1, "input1"), b(input2, "input2"), t(target, "target");
    *out = api::to_handle(ops::cosine_embedding_loss(a, b, t, margin, ops::reduction_arg(reduction)));
  });
}

AG_API ag_status ag_op_triplet_margin_loss(ag_tensor** out, const ag_tensor* anchor, const ag_tensor* positive,
                                           const ag_tensor* negative, double margin, double p, double eps,
                                           int32_t swap, int32_t reduction) noexcept {
  return api::call("ag_op_triplet_margin_loss", [&] {
    api::check_out(out);
    api::Borrowed a(anchor, "anchor"), b(positive, "positive"), n(negative, "negative");
    *out = api::to_handle(ops::triplet_margin_loss(a, b, n, margin, p, eps, swap != 0, ops::reduction_arg(reduction)));
  });
}

AG_API ag_status ag_op_embedding_bag(ag_tensor** out, const ag_tensor* weight, const ag_tensor* indices,
                                     const ag_tensor* offsets, int32_t mode, const ag_tensor* per_sample_weights,
                                     int32_t include_last_offset, int64_t padding_idx) noexcept {
  return api::call("ag_op_embedding_bag", [&] {
    api::check_out(out);
    api::Borrowed tw(weight, "weight"), ti(indices, "indices");
    *out = api::to_handle(ops::embedding_bag(tw, ti, api::optional_tensor(offsets, "offsets"),
                                             static_cast<ops::EmbeddingBagMode>(mode),
                                             api::optional_tensor(per_sample_weights, "per_sample_weights"),
                                             include_last_offset != 0, padding_idx));
  });
}

AG_API ag_status ag_op_ctc_loss(ag_tensor** out, const ag_tensor* log_probs, const ag_tensor* targets,
                                const ag_tensor* input_lengths, const ag_tensor* target_lengths, int64_t blank,
                                int32_t reduction, int32_t zero_infinity) noexcept {
  return api::call("ag_op_ctc_loss", [&] {
    api::check_out(out);
    api::Borrowed tl(log_probs, "log_probs"), tt(targets, "targets"), til(input_lengths, "input_lengths"),
        ttl(target_lengths, "target_lengths");
    *out = api::to_handle(ops::ctc_loss(tl, tt, til, ttl, blank, ops::reduction_arg(reduction), zero_infinity != 0));
  });
}

}  // extern "C"
