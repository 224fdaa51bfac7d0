// Gradient-check cases of the normalization layers (ops_norm.h).
#include "gradcheck.h"

namespace gradcheck {

namespace {

// (x shape, normalized_shape) pairs: one and two normalized dims, a 1-D x.
const std::vector<std::pair<Shape, Shape>> kRowShapes = {
    {{3, 4}, {4}}, {{2, 3, 4}, {3, 4}}, {{5}, {5}}, {{2, 2, 3}, {3}}};

// A transposed (non-contiguous) view of a (4, 3) input, normalized over its last dim.
ag_status transposed(ag_tensor** t, ag_tensor* x) { return ag_op_transpose(t, x, 0, 1); }

}  // namespace

Cases cases_layer_norm() {
  Cases cases;
  for (const auto& [xs, ns] : kRowShapes) {
    for (int affine = 0; affine < 4; ++affine) {
      const bool w = affine & 1, b = affine & 2;
      std::vector<Input> in{Input{xs}};
      if (w) in.push_back(Input{ns});
      if (b) in.push_back(Input{ns});
      cases.push_back({"layer_norm(w=" + std::to_string(w) + ", b=" + std::to_string(b) + ")", in,
                       [ns = ns, w, b](ag_tensor** out, const std::vector<ag_tensor*>& x) {
                         ag_tensor* wt = w ? x[1] : nullptr;
                         ag_tensor* bt = b ? x[w ? 2 : 1] : nullptr;
                         return ag_op_layer_norm(out, x[0], ns.data(), static_cast<int32_t>(ns.size()), wt, bt, 1e-5);
                       }});
    }
  }
  cases.push_back({"layer_norm(transposed, eps=0.1)",
                   {Input{{4, 3}}, Input{{4}}},
                   [](ag_tensor** out, const std::vector<ag_tensor*>& x) {
                     ag_tensor* t = nullptr;
                     const int64_t ns[1] = {4};
                     ag_status st = transposed(&t, x[0]);
                     if (st == AG_OK) st = ag_op_layer_norm(out, t, ns, 1, x[1], nullptr, 0.1);
                     ag_tensor_release(t);
                     return st;
                   }});
  return cases;
}

Cases cases_rms_norm() {
  Cases cases;
  for (const auto& [xs, ns] : kRowShapes) {
    for (int w = 0; w < 2; ++w) {
      std::vector<Input> in{Input{xs}};
      if (w) in.push_back(Input{ns});
      cases.push_back({"rms_norm(w=" + std::to_string(w) + ")", in,
                       [ns = ns, w](ag_tensor** out, const std::vector<ag_tensor*>& x) {
                         return ag_op_rms_norm(out, x[0], ns.data(), static_cast<int32_t>(ns.size()),
                                               w ? x[1] : nullptr, 1e-6);
                       }});
    }
  }
  cases.push_back(
      {"rms_norm(transposed, eps=0.1)", {Input{{4, 3}}}, [](ag_tensor** out, const std::vector<ag_tensor*>& x) {
         ag_tensor* t = nullptr;
         const int64_t ns[1] = {4};
         ag_status st = transposed(&t, x[0]);
         if (st == AG_OK) st = ag_op_rms_norm(out, t, ns, 1, nullptr, 0.1);
         ag_tensor_release(t);
         return st;
       }});
  return cases;
}

namespace {

using NormBackwardOp = ag_status (*)(ag_tensor**, const ag_tensor*, const ag_tensor*, const int64_t*, int32_t,
                                     const ag_tensor*, double);

// (grad, x[, weight]) over the row shapes; inputs: grad, x, weight.
Cases norm_backward_cases(const std::string& name, NormBackwardOp fn) {
  Cases cases;
  for (const auto& [xs, ns] : kRowShapes) {
    for (int w = 0; w < 2; ++w) {
      std::vector<Input> in{Input{xs}, Input{xs}};
      if (w) in.push_back(Input{ns});
      cases.push_back({name + "(w=" + std::to_string(w) + ")", in,
                       [fn, ns = ns, w](ag_tensor** out, const std::vector<ag_tensor*>& x) {
                         return fn(out, x[0], x[1], ns.data(), static_cast<int32_t>(ns.size()), w ? x[2] : nullptr,
                                   1e-3);
                       }});
    }
  }
  return cases;
}

using WeightGradOp = ag_status (*)(ag_tensor**, const ag_tensor*, const ag_tensor*, const int64_t*, int32_t, double);

// (grad, x) over the row shapes.
Cases weight_grad_cases(const std::string& name, WeightGradOp fn) {
  Cases cases;
  for (const auto& [xs, ns] : kRowShapes) {
    cases.push_back({name, {Input{xs}, Input{xs}}, [fn, ns = ns](ag_tensor** out, const std::vector<ag_tensor*>& x) {
                       return fn(out, x[0], x[1], ns.data(), static_cast<int32_t>(ns.size()), 1e-3);
                     }});
  }
  return cases;
}

}  // namespace

Cases cases_layer_norm_weight_grad() {
  return weight_grad_cases("layer_norm_weight_grad", &ag_op_layer_norm_weight_grad);
}
Cases cases_rms_norm_weight_grad() { return weight_grad_cases("rms_norm_weight_grad", &ag_op_rms_norm_weight_grad); }

Cases cases_layer_norm_backward() { return norm_backward_cases("layer_norm_backward", &ag_op_layer_norm_backward); }
Cases cases_rms_norm_backward() { return norm_backward_cases("rms_norm_backward", &ag_op_rms_norm_backward); }

namespace {

// A (c) tensor of x's dtype and context holding `values` (constant running
// statistics), or NULL on failure.
ag_tensor* channel_tensor(const ag_tensor* x, const std::vector<double>& values) {
  ag_context* ctx = nullptr;
  if (ag_tensor_context(&ctx, x) != AG_OK) return nullptr;
  const int64_t shape[1] = {static_cast<int64_t>(values.size())};
  ag_tensor* t = nullptr;
  if (ag_tensor_dtype(x) == AG_F64) {
    ag_tensor_create(&t, ctx, AG_F64, shape, 1, values.data());
  } else {
    const std::vector<float> f(values.begin(), values.end());
    ag_tensor_create(&t, ctx, AG_F32, shape, 1, f.data());
  }
  ag_context_release(ctx);
  return t;
}

}  // namespace

Cases cases_batch_norm() {
  Cases cases;
  // Training: gradients through the batch statistics (running stats are
  // updated on every call; they never enter the result).
  for (const Shape& xs : {Shape{4, 3}, Shape{2, 3, 2}, Shape{2, 2, 2, 2}}) {
    const int64_t c = xs[1];
    for (int affine = 0; affine < 2; ++affine) {
      std::vector<Input> in{Input{xs}};
      if (affine) {
        in.push_back(Input{{c}});
        in.push_back(Input{{c}});
      }
      cases.push_back({"batch_norm(training, affine=" + std::to_string(affine) + ")", in,
                       [affine, c](ag_tensor** out, const std::vector<ag_tensor*>& x) {
                         ag_tensor* rm = channel_tensor(x[0], std::vector<double>(static_cast<size_t>(c), 0.0));
                         ag_tensor* rv = channel_tensor(x[0], std::vector<double>(static_cast<size_t>(c), 1.0));
                         const ag_status st = ag_op_batch_norm(out, x[0], rm, rv, affine ? x[1] : nullptr,
                                                               affine ? x[2] : nullptr, 1, 0.1, 1e-5);
                         ag_tensor_release(rm);
                         ag_tensor_release(rv);
                         return st;
                       }});
    }
  }
  // Eval: constant running statistics.
  cases.push_back({"batch_norm(eval)",
                   {Input{{3, 2, 2}}, Input{{2}}, Input{{2}}},
                   [](ag_tensor** out, const std::vector<ag_tensor*>& x) {
                     ag_tensor* rm = channel_tensor(x[0], {0.3, -0.2});
                     ag_tensor* rv = channel_tensor(x[0], {0.5, 1.7});
                     const ag_status st = ag_op_batch_norm(out, x[0], rm, rv, x[1], x[2], 0, 0.1, 1e-5);
                     ag_tensor_release(rm);
                     ag_tensor_release(rv);
                     return st;
                   }});
  cases.push_back({"batch_norm(training, no running stats)",
                   {Input{{3, 2}}, Input{{2}}},
                   [](ag_tensor** out, const std::vector<ag_tensor*>& x) {
                     return ag_op_batch_norm(out, x[0], nullptr, nullptr, x[1], nullptr, 1, 0.1, 1e-5);
                   }});
  return cases;
}

Cases cases_group_norm() {
  Cases cases;
  // (x shape, num_groups): groups of one and several channels, spatial dims.
  const std::vector<std::pair<Shape, int64_t>> rows = {
      {{2, 4, 3}, 2}, {{2, 6, 3}, 3}, {{1, 4, 2, 2}, 1}, {{2, 3, 2}, 3}};
  for (const auto& [xs, groups] : rows) {
    for (int affine = 0; affine < 2; ++affine) {
      std::vector<Input> in{Input{xs}};
      if (affine) {
        in.push_back(Input{{xs[1]}});
        in.push_back(Input{{xs[1]}});
      }
      cases.push_back({"group_norm(groups=" + std::to_string(groups) + ", affine=" + std::to_string(affine) + ")", in,
                       [groups = groups, affine](ag_tensor** out, const std::vector<ag_tensor*>& x) {
                         return ag_op_group_norm(out, x[0], groups, affine ? x[1] : nullptr, affine ? x[2] : nullptr,
                                                 1e-5);
                       }});
    }
  }
  return cases;
}

}  // namespace gradcheck
