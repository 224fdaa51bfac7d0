// Losses added in 0.2: kl_div, poisson_nll_loss, gaussian_nll_loss,
// margin_ranking_loss, cosine_embedding_loss, triplet_margin_loss. As in
// losses.cc, each is a composite of differentiable ops following PyTorch's
// formula; branches are selects (where) whose unused side is made finite
// first, so that no NaN reaches a gradient through a 0 factor.
#include <cmath>

#include "ops/op_common.h"

namespace ag::ops {

namespace {

void check_loss_pair(const Tensor& a, const Tensor& b, const char* an, const char* bn) {
  check_floating(*a);
  check_same(*a, *b);
  if (!broadcastable_to(b->shape(), broadcast_shapes(a->shape(), b->shape())) ||
      !broadcastable_to(a->shape(), broadcast_shapes(a->shape(), b->shape()))) {
    fail(AG_ERR_SHAPE, an, " ", shape_str(a->shape()), " and ", bn, " ", shape_str(b->shape()), " do not broadcast");
  }
}

Tensor clamp_min0(const Tensor& t) { return clamp(t, 0.0, std::nan("")); }

}  // namespace

// kl_div: pointwise target * (log(target) - input) where target > 0, else 0
// (log_target: exp(target) * (target - input)); Mean averages all elements.
Tensor kl_div(const Tensor& input, const Tensor& target, Reduction r, bool log_target) {
  check_loss_pair(input, target, "input", "target");
  if (log_target) return reduce_loss(mul(exp(target), sub(target, input)), r);
  const Tensor zero = scalar_like(target, 0.0);
  const Tensor pos = gt(target, zero);
  const Tensor safe = where(pos, target, scalar_like(target, 1.0));  // log's argument where it is unused
  const Tensor loss = where(pos, mul(target, sub(log(safe), input)), zero);
  return reduce_loss(loss, r);
}

// poisson_nll_loss: exp(input) - target * input (log_input), else
// input - target * log(input + eps); full adds Stirling's term
// target*log(target) - target + 0.5*log(2*pi*target) where target > 1.
Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, bool log_input, bool full, double eps,
                        Reduction r) {
  check_loss_pair(input, target, "input", "target");
  check_finite(eps, "eps");
  Tensor loss = log_input ? sub(exp(input), mul(target, input))
                          : sub(input, mul(target, log(add(input, scalar_like(input, eps)))));
  if (full) {
    const Tensor big = gt(target, scalar_like(target, 1.0));
    const Tensor t = where(big, target, scalar_like(target, 2.0));  // finite where unused
    const Tensor stirling = add(sub(mul(t, log(t)), t), mul(scalar_like(t, 0.5), log(mul(scalar_like(t, 2 * M_PI), t))));
    loss = add(loss, where(big, stirling, scalar_like(t, 0.0)));
  }
  return reduce_loss(loss, r);
}

// gaussian_nll_loss: 0.5 * (log(max(var, eps)) + (input - target)^2 /
// max(var, eps)) (+ 0.5*log(2*pi) with full); var has input's shape, or
// one dim less, or a last dim of 1. The clamp is a constant shift (no
// gradient of its own), as PyTorch clamps under no_grad.
Tensor gaussian_nll_loss(const Tensor& input, const Tensor& target, const Tensor& var, bool full, double eps,
                         Reduction r) {
  check_loss_pair(input, target, "input", "target");
  check_same(*input, *var);
  check_finite(eps, "eps");
  Tensor v = var;
  if (var->shape() != input->shape()) {
    const Dims& is = input->shape();
    const Dims lead(is.data(), is.size() > 0 ? is.size() - 1 : 0);
    if (var->shape() == lead) {
      v = unsqueeze(var, -1);
    } else if (!(var->ndim() == input->ndim() && var->shape()[var->ndim() - 1] == 1 &&
                 Dims(var->shape().data(), var->ndim() - 1) == lead)) {
      fail(AG_ERR_SHAPE, "var of shape ", shape_str(var->shape()), " does not fit input of shape ", shape_str(is));
    }
  }
  const Tensor vc = contiguous_data(v);
  for (int64_t i = 0; i < vc->numel(); ++i) {
    const double x = vc->dtype() == DType::F32 ? vc->data_as<float>()[i] : vc->data_as<double>()[i];
    if (x < 0) fail(AG_ERR_INVALID_ARGUMENT, "var has a negative entry ", x);
  }
  // max(v, eps) = v + shift with the shift a constant.
  const Tensor shift = unary_forward(sub(scalar_like(v, eps), v), kernels::UnaryKind::Relu);
  const Tensor vv = add(v, shift);
  const Tensor d = sub(input, target);
  Tensor loss = mul(scalar_like(d, 0.5), add(log(vv), div(mul(d, d), vv)));
  if (full) loss = add(loss, scalar_like(loss, 0.5 * std::log(2 * M_PI)));
  return reduce_loss(loss, r);
}

// margin_ranking_loss: max(0, -target * (input1 - input2) + margin).
Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin,
                           Reduction r) {
  check_loss_pair(input1, input2, "input1", "input2");
  check_loss_pair(input1, target, "input1", "target");
  check_finite(margin, "margin");
  return reduce_loss(clamp_min0(add(mul(neg(target), sub(input1, input2)), scalar_like(input1, margin))), r);
}

// cosine_embedding_loss: 1 - cos(x1, x2) where target == 1,
// max(0, cos - margin) where target == -1, else 0; cos over the last dim
// with 1e-12 added to each squared norm (PyTorch's EPSILON).
Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin,
                             Reduction r) {
  check_loss_pair(input1, input2, "input1", "input2");
  check_same(*input1, *target);
  check_finite(margin, "margin");
  if (input1->ndim() != 1 && input1->ndim() != 2) {
    fail(AG_ERR_SHAPE, "inputs must be 1-D (D) or 2-D (N, D), got shape ", shape_str(input1->shape()));
  }
  const Dims last{-1};
  const Tensor eps = scalar_like(input1, 1e-12);
  const Tensor dot = sum_dims(mul(input1, input2), last, false);
  const Tensor m1 = add(sum_dims(mul(input1, input1), last, false), eps);
  const Tensor m2 = add(sum_dims(mul(input2, input2), last, false), eps);
  const Tensor cos = div(dot, sqrt(mul(m1, m2)));
  if (target->shape() != cos->shape()) {
    fail(AG_ERR_SHAPE, "target of shape ", shape_str(target->shape()), " does not fit inputs ",
         shape_str(input1->shape()), ": expected ", shape_str(cos->shape()));
  }
  const Tensor zero = scalar_like(cos, 0.0);
  const Tensor pos = where(eq(target, scalar_like(target, 1.0)), sub(scalar_like(cos, 1.0), cos), zero);
  const Tensor negv = where(eq(target, scalar_like(target, -1.0)), clamp_min0(sub(cos, scalar_like(cos, margin))), zero);
  return reduce_loss(add(pos, negv), r);
}

// triplet_margin_loss: max(0, margin + d(a, p) - d(a, n)) with d(x, y) =
// ||x - y + eps||_p over the last dim; swap uses min(d(a, n), d(p, n)).
Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative, double margin,
                           double p, double eps, bool swap, Reduction r) {
  check_loss_pair(anchor, positive, "anchor", "positive");
  check_loss_pair(anchor, negative, "anchor", "negative");
  check_finite(margin, "margin");
  check_finite(eps, "eps");
  if (!(p > 0) || !std::isfinite(p)) fail(AG_ERR_INVALID_ARGUMENT, "p ", p, " must be positive and finite");
  if (anchor->ndim() != positive->ndim() || anchor->ndim() != negative->ndim() || anchor->ndim() == 0) {
    fail(AG_ERR_SHAPE, "anchor, positive and negative need the same number of dims (at least 1), got ",
         anchor->ndim(), ", ", positive->ndim(), ", ", negative->ndim());
  }
  const Tensor e = scalar_like(anchor, eps);
  auto dist = [&](const Tensor& a, const Tensor& b) { return norm_dims(add(sub(a, b), e), Dims{-1}, false, p); };
  const Tensor dp = dist(anchor, positive);
  Tensor dn = dist(anchor, negative);
  if (swap) dn = minimum(dn, dist(positive, negative));
  return reduce_loss(clamp_min0(add(sub(dp, dn), scalar_like(dp, margin))), r);
}

}  // namespace ag::ops
