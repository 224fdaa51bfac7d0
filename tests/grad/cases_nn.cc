// Gradient-check cases of the CUSTOM ops of ops_nn.h.
#include "gradcheck.h"

namespace gradcheck {

namespace {

using SoftmaxBackwardOp = ag_status (*)(ag_tensor**, const ag_tensor*, const ag_tensor*, int64_t);

// (grad, y) of one shape along several dims; y need not be a softmax output
// (the formulas are smooth everywhere), but stays in a plausible range.
Cases softmax_backward_cases(const std::string& name, SoftmaxBackwardOp fn, double ylo, double yhi) {
  const std::vector<std::pair<Shape, int64_t>> rows = {{{}, 0}, {{5}, 0}, {{2, 3}, 1}, {{2, 3}, 0}, {{2, 3, 4}, -2}};
  Cases cases;
  for (const auto& [s, dim] : rows) {
    cases.push_back({name + "(dim=" + std::to_string(dim) + ")", {Input{s}, Input{s, ylo, yhi}},
                     [fn, dim = dim](ag_tensor** out, const std::vector<ag_tensor*>& x) { return fn(out, x[0], x[1], dim); }});
  }
  return cases;
}

}  // namespace

Cases cases_softmax_backward() { return softmax_backward_cases("softmax_backward", &ag_op_softmax_backward, 0.05, 0.9); }

Cases cases_log_softmax_backward() {
  return softmax_backward_cases("log_softmax_backward", &ag_op_log_softmax_backward, -3.0, -0.1);
}

namespace {

const int32_t kReductions[] = {AG_REDUCTION_NONE, AG_REDUCTION_MEAN, AG_REDUCTION_SUM};

std::string attrs(int32_t reduction, double extra) {
  return "(reduction=" + std::to_string(reduction) + ", " + std::to_string(extra) + ")";
}

// (input shape, class targets) pairs, some with ignored targets (-100).
const std::vector<std::pair<Shape, std::pair<Shape, std::vector<double>>>> kClassRows = {
    {{4, 5}, {{4}, {0, 3, 4, 1}}},
    {{4, 5}, {{4}, {2, -100, 0, 4}}},
    {{5}, {{}, {3}}},
    {{2, 3, 4}, {{2, 4}, {0, 2, 1, 1, 2, -100, 0, 0}}},
};

}  // namespace

Cases cases_cross_entropy() {
  Cases cases;
  for (int32_t red : kReductions) {
    for (double eps : {0.0, 0.15}) {
      for (const auto& [in, tgt] : kClassRows) {
        cases.push_back({"cross_entropy" + attrs(red, eps), {Input{in}, fixed_input(AG_I64, tgt.first, tgt.second)},
                         [red, eps](ag_tensor** out, const std::vector<ag_tensor*>& x) {
                           return ag_op_cross_entropy(out, x[0], x[1], red, AG_IGNORE_INDEX_DEFAULT, eps);
                         }});
      }
      // Probability targets: differentiable too.
      for (const Shape& s : {Shape{3, 4}, Shape{4}, Shape{2, 3, 2}}) {
        cases.push_back({"cross_entropy" + attrs(red, eps), {Input{s}, Input{s, 0.05, 1.0}},
                         [red, eps](ag_tensor** out, const std::vector<ag_tensor*>& x) {
                           return ag_op_cross_entropy(out, x[0], x[1], red, AG_IGNORE_INDEX_DEFAULT, eps);
                         }});
      }
    }
  }
  // Another ignore_index, and a broadcast (non-contiguous) input.
  cases.push_back({"cross_entropy(ignore_index=1)", {Input{{3, 4}}, fixed_input(AG_I64, {3}, {1, 0, 3})},
                   [](ag_tensor** out, const std::vector<ag_tensor*>& x) {
                     return ag_op_cross_entropy(out, x[0], x[1], AG_REDUCTION_MEAN, 1, 0.0);
                   }});
  cases.push_back({"cross_entropy(expanded)", {Input{{1, 4}}, fixed_input(AG_I64, {3}, {1, 0, 3})},
                   [](ag_tensor** out, const std::vector<ag_tensor*>& x) {
                     const int64_t to[2] = {3, 4};
                     ag_tensor* e = nullptr;
                     ag_status st = ag_op_expand(&e, x[0], to, 2);
                     if (st == AG_OK) st = ag_op_cross_entropy(out, e, x[1], AG_REDUCTION_SUM, -100, 0.1);
                     ag_tensor_release(e);
                     return st;
                   }});
  return cases;
}

Cases cases_nll_loss() {
  Cases cases;
  for (int32_t red : kReductions) {
    for (const auto& [in, tgt] : kClassRows) {
      cases.push_back({"nll_loss" + attrs(red, 0), {Input{in, -3.0, -0.1}, fixed_input(AG_I64, tgt.first, tgt.second)},
                       [red](ag_tensor** out, const std::vector<ag_tensor*>& x) {
                         return ag_op_nll_loss(out, x[0], x[1], red, AG_IGNORE_INDEX_DEFAULT);
                       }});
    }
  }
  return cases;
}

Cases cases_mse_loss() {
  Cases cases;
  const std::vector<std::pair<Shape, Shape>> shapes = {{{2, 3}, {2, 3}}, {{2, 3}, {3}}, {{}, {}}, {{4}, {4}}};
  for (int32_t red : kReductions) {
    for (const auto& [a, b] : shapes) {
      cases.push_back({"mse_loss" + attrs(red, 0), {Input{a}, Input{b}},
                       [red](ag_tensor** out, const std::vector<ag_tensor*>& x) {
                         return ag_op_mse_loss(out, x[0], x[1], red);
                       }});
    }
  }
  return cases;
}

namespace {

using PairLoss = ag_status (*)(ag_tensor**, const ag_tensor*, const ag_tensor*, int32_t);

// Elementwise losses of (input, target) over several shapes (one broadcast);
// inputs from (-2, 2), targets from (tlo, thi).
template <class F>
Cases elementwise_loss_cases(const std::string& name, F call, const std::string& attr, double tlo, double thi) {
  const std::vector<std::pair<Shape, Shape>> shapes = {{{2, 3}, {2, 3}}, {{4}, {4}}, {{}, {}}, {{2, 3}, {3}}};
  Cases cases;
  for (int32_t red : kReductions) {
    for (const auto& [a, b] : shapes) {
      cases.push_back({name + "(reduction=" + std::to_string(red) + attr + ")", {Input{a}, Input{b, tlo, thi}},
                       [call, red](ag_tensor** out, const std::vector<ag_tensor*>& x) { return call(out, x[0], x[1], red); }});
    }
  }
  return cases;
}

}  // namespace

// Random differences fall within a finite-difference step of a kink (0,
// +-beta, +-delta) with negligible probability; the kinks themselves are
// tested in tests/ops/test_loss_ops.cc.
Cases cases_l1_loss() { return elementwise_loss_cases("l1_loss", &ag_op_l1_loss, "", -0.6, 0.6); }

Cases cases_smooth_l1_loss() {
  Cases cases;
  for (double beta : {1.0, 0.5, 0.0}) {
    auto call = [beta](ag_tensor** out, const ag_tensor* a, const ag_tensor* b, int32_t red) {
      return ag_op_smooth_l1_loss(out, a, b, red, beta);
    };
    auto more = elementwise_loss_cases("smooth_l1_loss", call, ", beta=" + std::to_string(beta), -0.6, 0.6);
    cases.insert(cases.end(), more.begin(), more.end());
  }
  return cases;
}

Cases cases_huber_loss() {
  Cases cases;
  for (double delta : {1.0, 0.3}) {
    auto call = [delta](ag_tensor** out, const ag_tensor* a, const ag_tensor* b, int32_t red) {
      return ag_op_huber_loss(out, a, b, red, delta);
    };
    auto more = elementwise_loss_cases("huber_loss", call, ", delta=" + std::to_string(delta), -0.6, 0.6);
    cases.insert(cases.end(), more.begin(), more.end());
  }
  return cases;
}

Cases cases_binary_cross_entropy() {
  Cases cases;
  for (int32_t red : kReductions) {
    for (const Shape& s : {Shape{2, 3}, Shape{5}, Shape{}}) {
      cases.push_back({"binary_cross_entropy(reduction=" + std::to_string(red) + ")", {Input{s, 0.05, 0.95}, Input{s, 0.0, 1.0}},
                       [red](ag_tensor** out, const std::vector<ag_tensor*>& x) {
                         return ag_op_binary_cross_entropy(out, x[0], x[1], red);
                       }});
    }
  }
  return cases;
}

Cases cases_binary_cross_entropy_with_logits() {
  Cases cases;
  for (int32_t red : kReductions) {
    for (const Shape& s : {Shape{2, 3}, Shape{5}, Shape{}}) {
      cases.push_back({"binary_cross_entropy_with_logits(reduction=" + std::to_string(red) + ")",
                       {Input{s, -4.0, 4.0}, Input{s, 0.0, 1.0}}, [red](ag_tensor** out, const std::vector<ag_tensor*>& x) {
                         return ag_op_binary_cross_entropy_with_logits(out, x[0], x[1], nullptr, red);
                       }});
    }
    // pos_weight of one per class (broadcast), differentiable too.
    cases.push_back({"binary_cross_entropy_with_logits(pos_weight, reduction=" + std::to_string(red) + ")",
                     {Input{{2, 3}, -4.0, 4.0}, Input{{2, 3}, 0.0, 1.0}, Input{{3}, 0.5, 3.0}},
                     [red](ag_tensor** out, const std::vector<ag_tensor*>& x) {
                       return ag_op_binary_cross_entropy_with_logits(out, x[0], x[1], x[2], red);
                     }});
  }
  return cases;
}

}  // namespace gradcheck
