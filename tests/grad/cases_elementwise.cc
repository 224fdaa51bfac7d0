// Gradient-check cases of the CUSTOM elementwise ops: where (bool condition
// as a fixed input) and lerp, with three-way broadcasting.
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

}  // namespace gradcheck
