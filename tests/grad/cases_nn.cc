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

}  // namespace gradcheck
