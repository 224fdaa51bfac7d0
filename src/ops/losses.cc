// Loss functions: cross_entropy, nll_loss, mse_loss, l1_loss, smooth_l1_loss,
// huber_loss, binary_cross_entropy(_with_logits). They are composites of
// differentiable ops, so every derivative order comes from those ops.
// - Class targets become a constant weight tensor W of the input's shape (the
//   one-hot pick, label smoothing, ignore_index and the mean's 1/count folded
//   in), so the loss is one product and one sum: sum(W * log_probs).
// - Kinks (|d|, the branches of smooth_l1 and huber, max(-x, 0)) become
//   constant coefficient tensors read off the values (signs, branch masks),
//   so the loss is a polynomial in its input with piecewise-constant
//   coefficients: exact derivatives of every order away from the kinks, and
//   the subgradient 0 of |d| at 0, as in PyTorch.
#include <cmath>

#include "autograd/tag_scope.h"
#include "ops/reduce_dims.h"

namespace ag::ops {

Tensor reduce_loss(const Tensor& loss, Reduction r) {
  switch (r) {
    case Reduction::None: return loss;
    case Reduction::Sum: return sum(loss);
    case Reduction::Mean: return mean(loss);
  }
  return loss;
}

namespace {

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
  const Split s = split_at(input.shape(), cdim);  // saturated for an empty input, which is not walked
  t.outer = s.outer;
  t.classes = s.n;
  t.inner = s.inner;
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
// else 0; scaled by 1/count for the mean over the count > 0 non-ignored
// targets. Returns count. Reads the targets, so it is a step of its own when
// recorded for replay (new targets, new weights).
int64_t class_weights_into(const ClassTargets& t, int64_t ignore_index, double eps, Reduction r, TensorImpl& w) {
  const int64_t* v = t.data->data_as<int64_t>();
  int64_t count = 0;
  for (int64_t i = 0; i < t.data->numel(); ++i) count += v[i] != ignore_index;
  const double scale = r == Reduction::Mean && count > 0 ? 1.0 / static_cast<double>(count) : 1.0;
  const double off = -eps / static_cast<double>(t.classes) * scale;
  const double on = off - (1.0 - eps) * scale;
  if (w.numel() == 0) return count;  // the rows of an empty input may be more than could be walked
  visit_floating(w.dtype(), [&](auto z) {
    using T = decltype(z);
    T* p = w.data_as<T>();
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
  return count;
}

Tensor class_weights(const TensorImpl& input, const ClassTargets& t, int64_t ignore_index, double eps,
                     Reduction r, int64_t& count) {
  Tensor w = empty(input.context(), input.dtype(), input.shape());
  count = class_weights_into(t, ignore_index, eps, r, *w);
  if (Recorder* rec = recording()) [[unlikely]] {
    // With no target counted the loss is NaN by another formula (below).
    if (count == 0) rec->refuse(AG_ERR_UNSUPPORTED, "cross_entropy cannot be recorded with every target ignored");
    rec->add(*w, [t, ignore_index, eps, r, w] { class_weights_into(t, ignore_index, eps, r, *w); });
  }
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
      // No target counted: the value is 0/0 = NaN and the gradient 0 (W is
      // 0), as in PyTorch: NaN is added as a constant, not divided by.
      return count > 0 ? total : add(total, scalar_like(total, std::nan("")));
    }
  }
  return picked;
}

// a*d^2 + b*d + c with each coefficient chosen per element by abc(d, &a, &b, &c).
template <class F>
Tensor piecewise_quadratic(const Tensor& d, F abc) {
  auto pick = [&](int which) {
    return coefficients(d, [&](double v) {
      double k[3] = {0.0, 0.0, 0.0};
      abc(v, k[0], k[1], k[2]);
      return k[which];
    });
  };
  return add(add(mul(pick(0), mul(d, d)), mul(pick(1), d)), pick(2));
}

void check_same_shape(const TensorImpl& input, const TensorImpl& target) {
  if (input.shape() != target.shape()) {
    fail(AG_ERR_SHAPE, "target of shape ", shape_str(target.shape()), " must have the input's shape ",
         shape_str(input.shape()));
  }
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
  const CompositeScope named("cross_entropy");  // its nodes carry the op's name
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
  const CompositeScope named("nll_loss");  // its nodes carry the op's name
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
  const CompositeScope named("mse_loss");  // its nodes carry the op's name
  const Tensor d = sub(input, target);
  return reduce_loss(mul(d, d), r);
}

// l1_loss: |input - target|, broadcasting; the gradient at 0 is 0.
Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction r) {
  const CompositeScope named("l1_loss");  // its nodes carry the op's name
  return reduce_loss(abs_of(sub(input, target)), r);
}

// smooth_l1_loss: 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta
// (beta = 0 is l1_loss).
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction r, double beta) {
  const CompositeScope named("smooth_l1_loss");  // its nodes carry the op's name
  if (!(beta >= 0.0) || std::isinf(beta)) fail(AG_ERR_INVALID_ARGUMENT, "beta ", beta, " must be finite and >= 0");
  const Tensor d = sub(input, target);
  return reduce_loss(piecewise_quadratic(d, [beta](double v, double& a, double& b, double& c) {
                       if (std::fabs(v) < beta) {
                         a = 0.5 / beta;
                       } else {
                         b = sign_of(v);
                         c = -0.5 * beta;
                       }
                     }),
                     r);
}

// huber_loss: 0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta).
Tensor huber_loss(const Tensor& input, const Tensor& target, Reduction r, double delta) {
  const CompositeScope named("huber_loss");  // its nodes carry the op's name
  if (!(delta > 0.0) || std::isinf(delta)) fail(AG_ERR_INVALID_ARGUMENT, "delta ", delta, " must be finite and > 0");
  const Tensor d = sub(input, target);
  return reduce_loss(piecewise_quadratic(d, [delta](double v, double& a, double& b, double& c) {
                       if (std::fabs(v) < delta) {
                         a = 0.5;
                       } else {
                         b = delta * sign_of(v);
                         c = -0.5 * delta * delta;
                       }
                     }),
                     r);
}

// binary_cross_entropy: -(t log p + (1 - t) log(1 - p)), each log clamped
// at -100 as in PyTorch (so p = 0 or 1 gives a finite loss; the clamped log
// gets zero gradient). p must lie in [0, 1].
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, Reduction r) {
  const CompositeScope named("binary_cross_entropy");  // its nodes carry the op's name
  check_floating(*input);
  check_same(*input, *target);
  check_same_shape(*input, *target);
  const Tensor pc = contiguous_data(input);
  visit_floating(pc->dtype(), [&](auto z) {
    const auto* p = pc->data_as<decltype(z)>();
    for (int64_t i = 0; i < pc->numel(); ++i) {
      if (!(p[i] >= 0 && p[i] <= 1)) {
        fail(AG_ERR_INVALID_ARGUMENT, "input ", static_cast<double>(p[i]), " at index ", i, " is outside [0, 1]");
      }
    }
  });
  // max(log v, -100): where log v < -100, v is replaced by 1 (log 1 = 0,
  // zero gradient) and -100 added; no -inf * 0 anywhere.
  auto clamped_log = [](const Tensor& v) {
    auto kept = [](double x) { return std::log(x) >= -100.0; };
    const Tensor keep = coefficients(v, [&](double x) { return kept(x) ? 1.0 : 0.0; });
    const Tensor other = coefficients(v, [&](double x) { return kept(x) ? 0.0 : 1.0; });
    return add(log(add(mul(v, keep), other)), mul(other, scalar_like(v, -100.0)));
  };
  const Tensor one = scalar_like(input, 1.0);
  const Tensor lp = clamped_log(input), lq = clamped_log(sub(one, input));
  return reduce_loss(neg(add(mul(target, lp), mul(sub(one, target), lq))), r);
}

// binary_cross_entropy_with_logits: (1 - t) x + w (log(1 + exp(-|x|)) + max(-x, 0))
// with w = 1 + (pos_weight - 1) t (w = 1 without pos_weight): the stable form
// of -(pos_weight t log sigmoid(x) + (1 - t) log(1 - sigmoid(x))).
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, const Tensor* pos_weight,
                                        Reduction r) {
  const CompositeScope named("binary_cross_entropy_with_logits");  // its nodes carry the op's name
  check_floating(*input);
  check_same(*input, *target);
  check_same_shape(*input, *target);
  if (pos_weight) {
    check_same(*input, **pos_weight);
    if (!broadcastable_to((*pos_weight)->shape(), input->shape())) {
      fail(AG_ERR_SHAPE, "pos_weight of shape ", shape_str((*pos_weight)->shape()),
           " does not broadcast to the input's shape ", shape_str(input->shape()));
    }
  }
  const Tensor one = scalar_like(input, 1.0);
  // |x| = x s with s = -1 for x < 0, else 1 (not sign(x): at x = 0 the
  // softplus(-x) term must keep its slope -1/2, there is no kink there).
  const Tensor s = coefficients(input, [](double v) { return v < 0.0 ? -1.0 : 1.0; });
  const Tensor softplus_neg =
      add(log(add(one, exp(neg(mul(input, s))))), mul(neg(input), coefficients(input, [](double v) {
                                                         return v < 0.0 ? 1.0 : 0.0;
                                                       })));
  Tensor weighted = softplus_neg;
  if (pos_weight) {
    weighted = mul(add(one, mul(sub(*pos_weight, one), target)), softplus_neg);
  }
  return reduce_loss(add(mul(sub(one, target), input), weighted), r);
}

}  // namespace ag::ops
