// Loss functions: cross_entropy, nll_loss, mse_loss. They are composites of
// differentiable ops, so every derivative order comes from those ops. Class
// targets become a constant weight tensor W of the input's shape (the one-hot
// pick, label smoothing, ignore_index and the mean's 1/count folded in), so
// the loss is one product and one sum: sum(W * log_probs).
#include <cmath>

#include "ops/reduce_dims.h"

namespace ag::ops {

namespace {

Tensor reduce_loss(const Tensor& loss, Reduction r) {
  switch (r) {
    case Reduction::None: return loss;
    case Reduction::Sum: return sum(loss);
    case Reduction::Mean: return mean(loss);
  }
  return loss;
}

// The class dim of an input of (C), (N, C) or (N, C, d...): 0 for 1 dim, else 1.
int class_dim(const TensorImpl& input) {
  if (input.ndim() == 0) fail(AG_ERR_SHAPE, "input must have a class dim, got a 0-dim tensor");
  return input.ndim() == 1 ? 0 : 1;
}

// Class targets (i64) of the input's shape without the class dim, read as
// (outer, inner) around it.
struct ClassTargets {
  Tensor data;  // contiguous i64
  int64_t outer = 1, classes = 1, inner = 1;
};

ClassTargets class_targets(const TensorImpl& input, const Tensor& target, int cdim, int64_t ignore_index) {
  Dims expected;
  for (int i = 0; i < input.ndim(); ++i) {
    if (i != cdim) expected.push_back(input.shape()[i]);
  }
  if (target->shape() != expected) {
    fail(AG_ERR_SHAPE, "class targets of shape ", shape_str(target->shape()), " do not fit input of shape ",
         shape_str(input.shape()), ": expected ", shape_str(expected));
  }
  ClassTargets t;
  t.data = contiguous_data(target);
  for (int i = 0; i < cdim; ++i) t.outer *= input.shape()[i];
  t.classes = input.shape()[cdim];
  for (int i = cdim + 1; i < input.ndim(); ++i) t.inner *= input.shape()[i];
  const int64_t* v = t.data->data_as<int64_t>();
  for (int64_t i = 0; i < t.data->numel(); ++i) {
    if (v[i] != ignore_index && (v[i] < 0 || v[i] >= t.classes)) {
      fail(AG_ERR_INVALID_ARGUMENT, "target ", v[i], " at index ", i, " is outside 0..", t.classes - 1, " (",
           t.classes, " classes) and is not ignore_index ", ignore_index);
    }
  }
  return t;
}

// W with W[o, c, j] = -((1 - eps) [c == t] + eps / C) for targets t != ignore_index,
// else 0; scaled by 1/count for the mean over the count > 0 non-ignored targets.
Tensor class_weights(const TensorImpl& input, const ClassTargets& t, int64_t ignore_index, double eps,
                     Reduction r, int64_t& count) {
  const int64_t* v = t.data->data_as<int64_t>();
  count = 0;
  for (int64_t i = 0; i < t.data->numel(); ++i) count += v[i] != ignore_index;
  const double scale = r == Reduction::Mean && count > 0 ? 1.0 / static_cast<double>(count) : 1.0;
  const double off = -eps / static_cast<double>(t.classes) * scale;
  const double on = off - (1.0 - eps) * scale;
  Tensor w = empty(input.context(), input.dtype(), input.shape());
  visit_floating(input.dtype(), [&](auto z) {
    using T = decltype(z);
    T* p = w->data_as<T>();
    for (int64_t o = 0; o < t.outer; ++o) {
      for (int64_t c = 0; c < t.classes; ++c) {
        for (int64_t j = 0; j < t.inner; ++j) {
          const int64_t target = v[o * t.inner + j];
          const double val = target == ignore_index ? 0.0 : (target == c ? on : off);
          p[(o * t.classes + c) * t.inner + j] = static_cast<T>(val);
        }
      }
    }
  });
  return w;
}

// The loss of log-probabilities against validated class targets.
Tensor class_target_loss(const Tensor& log_probs, const ClassTargets& t, int cdim, int64_t ignore_index, double eps,
                         Reduction r) {
  int64_t count = 0;
  const Tensor w = class_weights(*log_probs, t, ignore_index, eps, r, count);
  const Tensor picked = mul(log_probs, w);
  switch (r) {
    case Reduction::None: return sum_dims(picked, Dims{cdim}, false);
    case Reduction::Sum: return sum(picked);
    case Reduction::Mean: {
      const Tensor total = sum(picked);
      // No target counted: 0/0 = NaN, as in PyTorch.
      return count > 0 ? total : div(total, scalar_like(total, 0.0));
    }
  }
  return picked;
}

}  // namespace

Reduction reduction_arg(int32_t r) {
  if (r < 0 || r > 2) {
    fail(AG_ERR_INVALID_ARGUMENT, "reduction ", r,
         " is not one of AG_REDUCTION_NONE (0), AG_REDUCTION_MEAN (1), AG_REDUCTION_SUM (2)");
  }
  return static_cast<Reduction>(r);
}

// cross_entropy: log_softmax over the class dim, then the negative
// log-likelihood of class targets (i64) or the cross entropy with
// probability targets (input's dtype and shape), with label smoothing eps:
// probabilities q become (1 - eps) q + eps / C.
Tensor cross_entropy(const Tensor& input, const Tensor& target, Reduction r, int64_t ignore_index,
                     double label_smoothing) {
  check_floating(*input);
  if (!(label_smoothing >= 0.0 && label_smoothing <= 1.0)) {
    fail(AG_ERR_INVALID_ARGUMENT, "label_smoothing ", label_smoothing, " is outside [0, 1]");
  }
  const int cdim = class_dim(*input);
  if (target->dtype() == DType::I64) {
    if (input->context() != target->context()) fail(AG_ERR_CONTEXT, "the tensors belong to different contexts");
    const ClassTargets t = class_targets(*input, target, cdim, ignore_index);
    return class_target_loss(log_softmax(input, cdim), t, cdim, ignore_index, label_smoothing, r);
  }
  if (!is_floating(target->dtype())) {
    fail(AG_ERR_DTYPE, "target must be i64 class indices or probabilities of the input's dtype, got ",
         dtype_name(target->dtype()));
  }
  check_same(*input, *target);
  if (target->shape() != input->shape()) {
    fail(AG_ERR_SHAPE, "probability targets of shape ", shape_str(target->shape()),
         " must have the input's shape ", shape_str(input->shape()));
  }
  const int64_t classes = input->shape()[cdim];
  Tensor q = target;
  if (label_smoothing > 0.0) {
    q = add(mul(target, scalar_like(target, 1.0 - label_smoothing)),
            scalar_like(target, label_smoothing / static_cast<double>(classes)));
  }
  const Tensor per_item = neg(sum_dims(mul(log_softmax(input, cdim), q), Dims{cdim}, false));
  return reduce_loss(per_item, r);
}

// nll_loss: -input[.., target, ..] over the class dim of log-probabilities,
// skipping ignore_index; the mean divides by the number of counted targets.
Tensor nll_loss(const Tensor& input, const Tensor& target, Reduction r, int64_t ignore_index) {
  check_floating(*input);
  const int cdim = class_dim(*input);
  if (target->dtype() != DType::I64) {
    fail(AG_ERR_DTYPE, "target must be i64 class indices, got ", dtype_name(target->dtype()));
  }
  if (input->context() != target->context()) fail(AG_ERR_CONTEXT, "the tensors belong to different contexts");
  return class_target_loss(input, class_targets(*input, target, cdim, ignore_index), cdim, ignore_index, 0.0, r);
}

// mse_loss: (input - target)^2, broadcasting, then the reduction.
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction r) {
  const Tensor d = sub(input, target);
  return reduce_loss(mul(d, d), r);
}

}  // namespace ag::ops
