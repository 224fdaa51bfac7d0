// Gradient-check cases of the indexing ops (family CUSTOM). Indices and
// masks are fixed inputs; repeated indices check the accumulating
// gradients; "squared" variants make the second-order check run through
// each op's backward.
#include <cstdint>

#include "gradcheck.h"

namespace gradcheck {

namespace {

using X = const std::vector<ag_tensor*>&;

}  // namespace

Cases cases_index_select() {
  Cases c;
  c.push_back({"index_select(0, repeats)", {Input{{4, 3}}, index({3}, {2, 0, 2})},
               [](ag_tensor** out, X x) { return ag_op_index_select(out, x[0], 0, x[1]); }});
  c.push_back({"index_select(-1)", {Input{{2, 4}}, index({2}, {3, 1})},
               [](ag_tensor** out, X x) { return ag_op_index_select(out, x[0], -1, x[1]); }});
  c.push_back({"index_select(transposed)", {Input{{3, 4}}, index({4}, {1, 1, 0, 2})}, [](ag_tensor** out, X x) {
                 return transposed(out, x, [&](ag_tensor** o, ag_tensor* t) { return ag_op_index_select(o, t, 1, x[1]); });
               }});
  c.push_back(squared(c.front()));
  return c;
}

Cases cases_index_add() {
  Cases c;
  c.push_back({"index_add(0, repeats)", {Input{{4, 3}}, index({3}, {1, 3, 1}), Input{{3, 3}}},
               [](ag_tensor** out, X x) { return ag_op_index_add(out, x[0], 0, x[1], x[2]); }});
  c.push_back({"index_add(1)", {Input{{2, 3}}, index({2}, {2, 0}), Input{{2, 2}}},
               [](ag_tensor** out, X x) { return ag_op_index_add(out, x[0], 1, x[1], x[2]); }});
  c.push_back(squared(c.front()));
  return c;
}

Cases cases_gather() {
  Cases c;
  c.push_back({"gather(1)", {Input{{3, 4}}, index({3, 2}, {0, 3, 1, 1, 2, 0})},
               [](ag_tensor** out, X x) { return ag_op_gather(out, x[0], 1, x[1]); }});
  c.push_back({"gather(0, index longer than x)", {Input{{2, 3}}, index({4, 2}, {1, 0, 0, 0, 1, 1, 0, 1})},
               [](ag_tensor** out, X x) { return ag_op_gather(out, x[0], 0, x[1]); }});
  c.push_back({"gather(transposed)", {Input{{3, 2}}, index({2, 3}, {2, 0, 1, 1, 1, 0})}, [](ag_tensor** out, X x) {
                 return transposed(out, x, [&](ag_tensor** o, ag_tensor* t) { return ag_op_gather(o, t, 1, x[1]); });
               }});
  c.push_back(squared(c.front()));
  return c;
}

Cases cases_scatter_add() {
  Cases c;
  c.push_back({"scatter_add(0, repeats)", {Input{{3, 4}}, index({2, 3}, {2, 2, 0, 2, 1, 0}), Input{{2, 3}}},
               [](ag_tensor** out, X x) { return ag_op_scatter_add(out, x[0], 0, x[1], x[2]); }});
  c.push_back({"scatter_add(1, src larger)", {Input{{2, 3}}, index({2, 2}, {1, 1, 0, 2}), Input{{3, 4}}},
               [](ag_tensor** out, X x) { return ag_op_scatter_add(out, x[0], 1, x[1], x[2]); }});
  c.push_back(squared(c.front()));
  c.push_back(squared(c[1]));
  return c;
}

Cases cases_masked_fill() {
  Cases c;
  c.push_back({"masked_fill(same shape)", {Input{{2, 3}}, fixed_input(AG_BOOL, {2, 3}, {1, 0, 0, 1, 1, 0})},
               [](ag_tensor** out, X x) { return ag_op_masked_fill(out, x[0], x[1], -1.5); }});
  c.push_back({"masked_fill(mask broadcast)", {Input{{2, 3}}, fixed_input(AG_BOOL, {3}, {0, 1, 0})},
               [](ag_tensor** out, X x) { return ag_op_masked_fill(out, x[0], x[1], 2.0); }});
  c.push_back({"masked_fill(x broadcast)", {Input{{3}}, fixed_input(AG_BOOL, {2, 3}, {1, 0, 0, 0, 0, 1})},
               [](ag_tensor** out, X x) { return ag_op_masked_fill(out, x[0], x[1], 0.0); }});
  c.push_back(squared(c[1]));
  return c;
}

Cases cases_embedding() {
  Cases c;
  c.push_back({"embedding(2-D indices, repeats)", {Input{{5, 3}}, index({2, 2}, {4, 0, 4, 4})},
               [](ag_tensor** out, X x) { return ag_op_embedding(out, x[0], x[1]); }});
  c.push_back({"embedding(0-dim index)", {Input{{3, 2}}, index({}, {1})},
               [](ag_tensor** out, X x) { return ag_op_embedding(out, x[0], x[1]); }});
  c.push_back(squared(c.front()));
  return c;
}

Cases cases_one_hot() {
  Cases c;
  c.push_back({"one_hot(4)", {index({3}, {0, 3, 1})}, [](ag_tensor** out, X x) { return ag_op_one_hot(out, x[0], 4); },
               false});
  return c;
}

}  // namespace gradcheck
