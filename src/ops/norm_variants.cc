// Normalization variants: instance_norm (group_norm with one channel per
// group, or batch_norm's evaluation path on running statistics) and
// local_response_norm (a composition of pad and avg_pool2d over channels,
// as PyTorch computes it).
#include <vector>

#include "ops/inplace.h"
#include "ops/op_common.h"

namespace ag::ops {

// instance_norm: each (sample, channel) normalized over its spatial dims
// (use_input_stats), the running statistics (if given) updated with the
// sample average of the per-instance mean and unbiased variance; or, without
// use_input_stats, normalized by the running statistics.
Tensor instance_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                     const Tensor& bias, bool use_input_stats, double momentum, double eps) {
  check_floating(*x);
  if (x->ndim() < 3) {
    fail(AG_ERR_SHAPE, "input must have at least 3 dims (N, C, spatial...), got shape ", shape_str(x->shape()));
  }
  if (!use_input_stats) return batch_norm(x, running_mean, running_var, weight, bias, false, momentum, eps);
  const int64_t N = x->shape()[0], C = x->shape()[1];
  const int64_t spatial = N * C > 0 ? x->numel() / (N * C) : 0;
  if (spatial <= 1 && x->numel() > 0) {
    fail(AG_ERR_INVALID_ARGUMENT, "instance_norm needs more than 1 value per channel, got input shape ",
         shape_str(x->shape()));
  }
  const Tensor y = group_norm(x, C, weight, bias, eps);
  if ((running_mean || running_var) && x->numel() > 0) {
    for (const Tensor* p : {&running_mean, &running_var}) {
      if (*p && ((*p)->ndim() != 1 || (*p)->shape()[0] != C)) {
        fail(AG_ERR_SHAPE, "running statistics must have shape (", C, "), got ", shape_str((*p)->shape()));
      }
      if (*p) check_same(*x, **p);
    }
    GradModeGuard no_graph(false);
    const Tensor rows = reshape(x, Dims{N, C, spatial});
    auto blend = [&](const Tensor& running, const Tensor& stat) {
      return add(mul(running, scalar_like(x, 1.0 - momentum)),
                 mul(mean_dims(stat, Dims{0}, false), scalar_like(x, momentum)));
    };
    // Both new values first, so that a failure writes neither.
    const Tensor new_mean = running_mean ? blend(running_mean, mean_dims(rows, Dims{2}, false)) : Tensor();
    const Tensor new_var = running_var ? blend(running_var, var_dims(rows, Dims{2}, false, 1.0)) : Tensor();
    if (running_mean) copy_(running_mean, new_mean);
    if (running_var) copy_(running_var, new_var);
  }
  return y;
}

// local_response_norm: x / (k + alpha * avg of x^2 over `size` neighbouring
// channels (zero padded, size/2 before and (size-1)/2 after))^beta.
Tensor local_response_norm(const Tensor& x, int64_t size, double alpha, double beta, double k) {
  check_floating(*x);
  if (x->ndim() < 3) {
    fail(AG_ERR_SHAPE, "input must have at least 3 dims (N, C, ...), got shape ", shape_str(x->shape()));
  }
  if (size <= 0) fail(AG_ERR_INVALID_ARGUMENT, "size ", size, " must be positive");
  check_finite(alpha, "alpha");
  check_finite(beta, "beta");
  check_finite(k, "k");
  if (x->numel() == 0) return clone(x);
  const int64_t N = x->shape()[0], C = x->shape()[1];
  const int64_t rest = x->numel() / (N * C);
  const Tensor sq = reshape(mul(x, x), Dims{N, 1, C, rest});
  const Tensor padded = pad(sq, {0, 0, size / 2, (size - 1) / 2}, PadMode::Constant, 0.0);
  const Tensor avg = reshape(avg_pool2d(padded, {size, 1}, {1, 1}, {0, 0}, false, true, 0), x->shape());
  const Tensor div_ = pow_scalar(add(mul(avg, scalar_like(x, alpha)), scalar_like(x, k)), beta);
  return div(x, div_);
}

}  // namespace ag::ops
