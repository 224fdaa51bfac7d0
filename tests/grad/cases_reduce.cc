// Gradient-check cases of the CUSTOM ops of ops_reduce.h.
#include <cmath>

#include "gradcheck.h"

namespace gradcheck {

namespace {

using DimsAttrOp = ag_status (*)(ag_tensor**, const ag_tensor*, const int64_t*, int32_t, int32_t, double);
using SelectOp = ag_status (*)(ag_tensor**, ag_tensor**, const ag_tensor*, int64_t, int32_t);
using ArgOp = ag_status (*)(ag_tensor**, const ag_tensor*, int64_t, int32_t);

const std::vector<std::pair<Shape, Shape>> kDimsRows = {
    {{2, 3}, {1}}, {{2, 3}, {0}}, {{2, 3, 4}, {0, 2}}, {{2, 3, 4}, {-1}}, {{2, 3}, {}}, {{5}, {0}}};

Cases dims_attr_cases(const std::string& name, DimsAttrOp fn, const std::vector<double>& attrs) {
  Cases cases;
  for (double a : attrs) {
    for (const auto& [s, dims] : kDimsRows) {
      for (int32_t keep : {0, 1}) {
        cases.push_back({name + "(" + std::to_string(a) + ", keepdim=" + std::to_string(keep) + ")", {Input{s}},
                         [fn, a, dims = dims, keep](ag_tensor** out, const std::vector<ag_tensor*>& x) {
                           return fn(out, x[0], dims.data(), static_cast<int32_t>(dims.size()), keep, a);
                         }});
      }
    }
  }
  return cases;
}

const std::vector<std::pair<Shape, int64_t>> kDimRows = {{{5}, 0},     {{2, 3}, 1},    {{2, 3}, 0},
                                                         {{2, 3}, -1}, {{2, 3, 4}, 1}, {{}, 0}};

Cases select_cases(const std::string& name, SelectOp fn) {
  Cases cases;
  for (const auto& [s, dim] : kDimRows) {
    for (int32_t keep : {0, 1}) {
      cases.push_back({name + "(dim=" + std::to_string(dim) + ", keepdim=" + std::to_string(keep) + ")", {Input{s}},
                       [fn, dim = dim, keep](ag_tensor** out, const std::vector<ag_tensor*>& x) {
                         return fn(out, nullptr, x[0], dim, keep);
                       }});
    }
  }
  return cases;
}

Cases arg_cases(const std::string& name, ArgOp fn) {
  Cases cases;
  for (const auto& [s, dim] : kDimRows) {
    cases.push_back({name + "(dim=" + std::to_string(dim) + ")", {Input{s}},
                     [fn, dim = dim](ag_tensor** out, const std::vector<ag_tensor*>& x) { return fn(out, x[0], dim, 0); },
                     false});
  }
  return cases;
}

}  // namespace

Cases cases_var_dims() { return dims_attr_cases("var_dims", &ag_op_var_dims, {1.0, 0.0}); }
Cases cases_std_dims() { return dims_attr_cases("std_dims", &ag_op_std_dims, {1.0, 0.0}); }
Cases cases_norm_dims() {
  return dims_attr_cases("norm_dims", &ag_op_norm_dims, {2.0, 1.0, INFINITY, -INFINITY, 3.0, 0.0});
}
Cases cases_max_dim() { return select_cases("max_dim", &ag_op_max_dim); }
Cases cases_min_dim() { return select_cases("min_dim", &ag_op_min_dim); }
Cases cases_argmax() { return arg_cases("argmax", &ag_op_argmax); }
Cases cases_argmin() { return arg_cases("argmin", &ag_op_argmin); }

}  // namespace gradcheck
