// Gradient-check cases of the writing indexing ops added in 0.2 (scatter,
// scatter_reduce, index_put, index_copy, index_fill, masked_scatter,
// masked_select, take_along_dim). Indices and masks are fixed inputs;
// repeated indices check the accumulating gradients; "squared" variants run
// the second-order check through each op's backward.
#include <cstdint>
#include <string>

#include "gradcheck.h"

namespace gradcheck {

namespace {

using X = const std::vector<ag_tensor*>&;

Input mask(Shape s, std::vector<double> v) { return fixed_input(AG_BOOL, std::move(s), std::move(v)); }

}  // namespace

Cases cases_scatter() {
  Cases c;
  // Distinct targets: with repeats the winner is arbitrary in PyTorch.
  c.push_back({"scatter(0)", {Input{{3, 4}}, index({2, 3}, {2, 0, 1, 0, 2, 0}), Input{{2, 3}}},
               [](ag_tensor** out, X x) { return ag_op_scatter(out, x[0], 0, x[1], x[2]); }});
  c.push_back({"scatter(1, src larger)", {Input{{2, 3}}, index({2, 2}, {1, 0, 0, 2}), Input{{3, 4}}},
               [](ag_tensor** out, X x) { return ag_op_scatter(out, x[0], 1, x[1], x[2]); }});
  c.push_back(squared(c.front()));
  return c;
}

Cases cases_scatter_value() {
  Cases c;
  c.push_back({"scatter_value(1)", {Input{{2, 3}}, index({2, 2}, {1, 1, 0, 2})},
               [](ag_tensor** out, X x) { return ag_op_scatter_value(out, x[0], 1, x[1], 0.5); }});
  c.push_back(squared(c.front()));
  return c;
}

Cases cases_scatter_reduce() {
  Cases c;
  const char* names[5] = {"sum", "prod", "mean", "amax", "amin"};
  for (int32_t r = 0; r < 5; ++r) {
    for (int32_t self = 0; self < 2; ++self) {
      // Repeated targets (accumulation), one untouched position; prod away from 0.
      const double lo = r == AG_SCATTER_REDUCE_PROD ? 0.5 : -2.0;
      c.push_back({std::string("scatter_reduce(") + names[r] + (self ? ", include_self)" : ")"),
                   {Input{{2, 4}, lo, 2.0}, index({2, 3}, {0, 2, 0, 3, 3, 1}), Input{{2, 3}, lo, 2.0}},
                   [=](ag_tensor** out, X x) { return ag_op_scatter_reduce(out, x[0], 1, x[1], x[2], r, self); }});
      c.push_back(squared(c.back()));
    }
  }
  return c;
}

Cases cases_index_put() {
  Cases c;
  for (int32_t acc = 0; acc < 2; ++acc) {
    // Distinct positions without accumulate; a repeat with it.
    const std::vector<double> rows = acc ? std::vector<double>{0, 2, 0} : std::vector<double>{0, 2, 1};
    c.push_back({std::string("index_put(two indices") + (acc ? ", accumulate)" : ")"),
                 {Input{{3, 4, 2}}, index({3}, rows), index({1}, {-1}), Input{{3, 2}}},
                 [=](ag_tensor** out, X x) {
                   const ag_tensor* ix[2] = {x[1], x[2]};
                   return ag_op_index_put(out, x[0], ix, 2, x[3], acc);
                 }});
    c.push_back({std::string("index_put(values broadcast") + (acc ? ", accumulate)" : ")"),
                 {Input{{3, 2}}, index({2}, {2, 0}), Input{{2}}},
                 [=](ag_tensor** out, X x) {
                   const ag_tensor* ix[1] = {x[1]};
                   return ag_op_index_put(out, x[0], ix, 1, x[2], acc);
                 }});
    c.push_back(squared(c.back()));
  }
  return c;
}

Cases cases_index_copy() {
  Cases c;
  c.push_back({"index_copy(0)", {Input{{4, 3}}, index({2}, {3, 1}), Input{{2, 3}}},
               [](ag_tensor** out, X x) { return ag_op_index_copy(out, x[0], 0, x[1], x[2]); }});
  c.push_back({"index_copy(-1)", {Input{{2, 3}}, index({2}, {2, 0}), Input{{2, 2}}},
               [](ag_tensor** out, X x) { return ag_op_index_copy(out, x[0], -1, x[1], x[2]); }});
  c.push_back(squared(c.front()));
  return c;
}

Cases cases_index_fill() {
  Cases c;
  c.push_back({"index_fill(1, repeats)", {Input{{2, 4}}, index({3}, {3, 0, 3})},
               [](ag_tensor** out, X x) { return ag_op_index_fill(out, x[0], 1, x[1], -1.0); }});
  c.push_back(squared(c.front()));
  return c;
}

Cases cases_masked_scatter() {
  Cases c;
  c.push_back({"masked_scatter(same shape)", {Input{{2, 3}}, mask({2, 3}, {1, 0, 1, 0, 0, 1}), Input{{5}}},
               [](ag_tensor** out, X x) { return ag_op_masked_scatter(out, x[0], x[1], x[2]); }});
  c.push_back({"masked_scatter(mask broadcast)", {Input{{2, 3}}, mask({3}, {0, 1, 1}), Input{{2, 2}}},
               [](ag_tensor** out, X x) { return ag_op_masked_scatter(out, x[0], x[1], x[2]); }});
  c.push_back(squared(c.front()));
  return c;
}

Cases cases_masked_select() {
  Cases c;
  c.push_back({"masked_select(same shape)", {Input{{2, 3}}, mask({2, 3}, {1, 0, 1, 0, 0, 1})},
               [](ag_tensor** out, X x) { return ag_op_masked_select(out, x[0], x[1]); }});
  c.push_back({"masked_select(x broadcast)", {Input{{3}}, mask({2, 3}, {1, 0, 1, 1, 1, 0})},
               [](ag_tensor** out, X x) { return ag_op_masked_select(out, x[0], x[1]); }});
  c.push_back(squared(c.back()));
  return c;
}

Cases cases_take_along_dim() {
  Cases c;
  c.push_back({"take_along_dim(1, repeats)", {Input{{2, 3}}, index({2, 2}, {2, 2, 0, 1})},
               [](ag_tensor** out, X x) { return ag_op_take_along_dim(out, x[0], x[1], 1); }});
  c.push_back({"take_along_dim(0, broadcast)", {Input{{3, 1}}, index({2, 4}, {2, 0, 1, 1, 0, 0, 2, 1})},
               [](ag_tensor** out, X x) { return ag_op_take_along_dim(out, x[0], x[1], 0); }});
  c.push_back(squared(c.front()));
  return c;
}

}  // namespace gradcheck
