// Gradient-check cases of the CUSTOM elementwise ops: where (bool condition
// as a fixed input) and lerp, with three-way broadcasting; (0.2) polygamma,
// nan_to_num, addcmul, addcdiv, glu and prelu; add_scaled.
#include "gradcheck.h"

namespace gradcheck {

namespace {

std::vector<double> alternating(int64_t n) {
  std::vector<double> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = (i * 7 + 3) % 3 == 0 ? 1.0 : 0.0;
  return v;
}

int64_t count(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

}  // namespace

Cases cases_where() {
  // (cond, a, b) shapes.
  const std::vector<std::vector<Shape>> shapes = {
      {{2, 3}, {2, 3}, {2, 3}}, {{2, 3}, {3}, {2, 1}}, {{3}, {2, 3}, {}}, {{2, 1}, {1, 3}, {3}}, {{}, {2, 2}, {2, 2}}};
  Cases cases;
  for (const auto& s : shapes) {
    cases.push_back(
        {"where",
         {fixed_input(AG_BOOL, s[0], alternating(count(s[0]))), Input{s[1]}, Input{s[2]}},
         [](ag_tensor** out, const std::vector<ag_tensor*>& x) { return ag_op_where(out, x[0], x[1], x[2]); }});
  }
  return cases;
}

Cases cases_lerp() {
  // (a, b, weight) shapes; weights around [0, 1] and beyond (both formulas).
  const std::vector<std::vector<Shape>> shapes = {
      {{2, 3}, {2, 3}, {2, 3}}, {{2, 3}, {3}, {2, 1}}, {{3}, {2, 3}, {}}, {{2, 1}, {1, 3}, {3}}};
  Cases cases;
  for (const auto& s : shapes) {
    cases.push_back(
        {"lerp",
         {Input{s[0]}, Input{s[1]}, Input{s[2], -0.5, 1.5}},
         [](ag_tensor** out, const std::vector<ag_tensor*>& x) { return ag_op_lerp(out, x[0], x[1], x[2]); }});
  }
  return cases;
}

Cases cases_polygamma() {
  Cases cases;
  for (int64_t n : {0, 1, 2, 3}) {
    for (const Shape& s : {Shape{2, 3}, Shape{}}) {
      cases.push_back({"polygamma(n=" + std::to_string(n) + ")", {Input{s, 0.4, 3.0}},
                       [n](ag_tensor** out, const std::vector<ag_tensor*>& x) { return ag_op_polygamma(out, n, x[0]); }});
    }
  }
  // Below 0, between the poles.
  cases.push_back({"polygamma(n=1, negative)", {Input{{3}, -0.8, -0.2}},
                   [](ag_tensor** out, const std::vector<ag_tensor*>& x) { return ag_op_polygamma(out, 1, x[0]); }});
  return cases;
}

Cases cases_nan_to_num() {
  return {{"nan_to_num", {Input{{2, 3}}}, [](ag_tensor** out, const std::vector<ag_tensor*>& x) {
             return ag_op_nan_to_num(out, x[0], 0.5, 1.0, -1.0);
           }}};
}

Cases cases_addcmul() {
  Cases cases;
  for (double v : {1.0, -0.5}) {
    cases.push_back({"addcmul(" + std::to_string(v) + ")", {Input{{2, 3}}, Input{{3}}, Input{{2, 1}}},
                     [v](ag_tensor** out, const std::vector<ag_tensor*>& x) {
                       return ag_op_addcmul(out, x[0], x[1], x[2], v);
                     }});
  }
  return cases;
}

Cases cases_addcdiv() {
  Cases cases;
  for (double v : {1.0, 2.5}) {
    cases.push_back({"addcdiv(" + std::to_string(v) + ")", {Input{{3}}, Input{{2, 3}}, Input{{2, 1}, 0.5, 2.0}},
                     [v](ag_tensor** out, const std::vector<ag_tensor*>& x) {
                       return ag_op_addcdiv(out, x[0], x[1], x[2], v);
                     }});
  }
  return cases;
}

Cases cases_add_scaled() {
  Cases cases;
  for (double alpha : {1.0, -0.75, 2.5}) {
    for (const auto& [a, b] : std::vector<std::pair<Shape, Shape>>{{{2, 3}, {2, 3}}, {{2, 3}, {3}}, {{3}, {2, 1}}}) {
      cases.push_back({"add_scaled(" + std::to_string(alpha) + ")", {Input{a}, Input{b}},
                       [alpha](ag_tensor** out, const std::vector<ag_tensor*>& x) {
                         return ag_op_add_scaled(out, x[0], x[1], alpha);
                       }});
    }
  }
  return cases;
}

Cases cases_glu() {
  const std::vector<std::pair<Shape, int64_t>> rows = {{{4}, 0}, {{2, 6}, 1}, {{4, 3}, 0}, {{2, 4, 3}, -2}};
  Cases cases;
  for (const auto& [s, dim] : rows) {
    cases.push_back({"glu(dim=" + std::to_string(dim) + ")", {Input{s}},
                     [dim = dim](ag_tensor** out, const std::vector<ag_tensor*>& x) { return ag_op_glu(out, x[0], dim); }});
  }
  return cases;
}

Cases cases_prelu() {
  // (x, weight) shapes: one slope, one per channel.
  const std::vector<std::pair<Shape, Shape>> rows = {{{2, 3}, {1}}, {{2, 3}, {3}}, {{2, 3, 4}, {3}}, {{5}, {}}, {{2, 3}, {}}};
  Cases cases;
  for (const auto& [xs, ws] : rows) {
    cases.push_back({"prelu", {Input{xs}, Input{ws, 0.1, 0.9}},
                     [](ag_tensor** out, const std::vector<ag_tensor*>& x) { return ag_op_prelu(out, x[0], x[1]); }});
  }
  return cases;
}

}  // namespace gradcheck
