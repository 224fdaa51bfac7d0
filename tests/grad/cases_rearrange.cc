// Gradient-check cases of the shape ops added in 0.2 (roll, rot90, tile,
// repeat_interleave, movedim, unbind, tensor_split, broadcast_to, diff).
// "squared" variants run the second-order check through each op's backward.
#include <cstdint>
#include <string>

#include "gradcheck.h"

namespace gradcheck {

namespace {

using X = const std::vector<ag_tensor*>&;

// Output k of a multi-output op that writes n tensors to outs.
template <class Op>
ag_status pick(ag_tensor** out, int n, int k, Op op) {
  ag_tensor* outs[8] = {};
  const ag_status st = op(outs);
  if (st != AG_OK) return st;
  *out = outs[k];
  for (int j = 0; j < n; ++j) {
    if (j != k) ag_tensor_release(outs[j]);
  }
  return AG_OK;
}

}  // namespace

Cases cases_roll() {
  Cases c;
  const int64_t s2[2] = {1, -3}, d2[2] = {0, 1}, s1[1] = {4};
  c.push_back({"roll(two dims)", {Input{{3, 4}}}, [=](ag_tensor** out, X x) { return ag_op_roll(out, x[0], s2, 2, d2, 2); }});
  c.push_back({"roll(flat)", {Input{{2, 3}}}, [=](ag_tensor** out, X x) { return ag_op_roll(out, x[0], s1, 1, nullptr, 0); }});
  c.push_back({"roll(transposed)", {Input{{3, 2}}}, [=](ag_tensor** out, X x) {
                 return transposed(out, x, [&](ag_tensor** o, ag_tensor* t) { return ag_op_roll(o, t, s2, 2, d2, 2); });
               }});
  c.push_back(squared(c.front()));
  return c;
}

Cases cases_rot90() {
  Cases c;
  const int64_t d[2] = {0, 2};
  for (int64_t k : {1, 2, 3, -1, 0}) {
    c.push_back({"rot90(k=" + std::to_string(k) + ")", {Input{{2, 3, 4}}},
                 [=](ag_tensor** out, X x) { return ag_op_rot90(out, x[0], k, d, 2); }});
  }
  c.push_back(squared(c.front()));
  return c;
}

Cases cases_tile() {
  Cases c;
  const int64_t d1[1] = {2}, d3[3] = {2, 1, 3};
  c.push_back({"tile(fewer dims)", {Input{{2, 3}}}, [=](ag_tensor** out, X x) { return ag_op_tile(out, x[0], d1, 1); }});
  c.push_back({"tile(more dims)", {Input{{2, 3}}}, [=](ag_tensor** out, X x) { return ag_op_tile(out, x[0], d3, 3); }});
  c.push_back(squared(c.back()));
  return c;
}

Cases cases_repeat_interleave() {
  Cases c;
  c.push_back({"repeat_interleave(3, dim 1)", {Input{{2, 3}}},
               [](ag_tensor** out, X x) { return ag_op_repeat_interleave(out, x[0], 3, 1); }});
  c.push_back({"repeat_interleave(2, dim 0 transposed)", {Input{{2, 3}}}, [](ag_tensor** out, X x) {
                 return transposed(out, x, [](ag_tensor** o, ag_tensor* t) { return ag_op_repeat_interleave(o, t, 2, 0); });
               }});
  c.push_back(squared(c.front()));
  return c;
}

Cases cases_repeat_interleave_tensor() {
  Cases c;
  c.push_back({"repeat_interleave_tensor(dim 1)", {Input{{2, 3}}, fixed_input(AG_I64, {3}, {2, 0, 3})},
               [](ag_tensor** out, X x) { return ag_op_repeat_interleave_tensor(out, x[0], x[1], 1); }});
  c.push_back({"repeat_interleave_tensor(one count)", {Input{{3}}, fixed_input(AG_I64, {1}, {2})},
               [](ag_tensor** out, X x) { return ag_op_repeat_interleave_tensor(out, x[0], x[1], 0); }});
  c.push_back(squared(c.front()));
  return c;
}

Cases cases_movedim() {
  Cases c;
  for (auto [s, d] : std::vector<std::pair<int64_t, int64_t>>{{0, 2}, {2, 0}, {-1, 1}}) {
    c.push_back({"movedim(" + std::to_string(s) + "," + std::to_string(d) + ")", {Input{{2, 3, 4}}},
                 [s = s, d = d](ag_tensor** out, X x) { return ag_op_movedim(out, x[0], s, d); }});
  }
  c.push_back(squared(c.front()));
  return c;
}

Cases cases_unbind() {
  Cases c;
  for (int k = 0; k < 3; ++k) {
    c.push_back({"unbind(out " + std::to_string(k) + ")", {Input{{2, 3}}}, [k](ag_tensor** out, X x) {
                   return pick(out, 3, k, [&](ag_tensor** o) { return ag_op_unbind(o, 8, x[0], 1); });
                 }});
  }
  c.push_back(squared(c[1]));
  return c;
}

Cases cases_tensor_split() {
  Cases c;
  for (int k = 0; k < 3; ++k) {
    c.push_back({"tensor_split(3 of 5, out " + std::to_string(k) + ")", {Input{{5, 2}}}, [k](ag_tensor** out, X x) {
                   return pick(out, 3, k, [&](ag_tensor** o) { return ag_op_tensor_split(o, 8, x[0], 3, 0); });
                 }});
  }
  c.push_back(squared(c[0]));
  return c;
}

Cases cases_tensor_split_indices() {
  Cases c;
  const int64_t ix[2] = {1, -1};
  for (int k = 0; k < 3; ++k) {
    c.push_back({"tensor_split_indices(1,-1 out " + std::to_string(k) + ")", {Input{{2, 4}}}, [=](ag_tensor** out, X x) {
                   return pick(out, 3, k, [&](ag_tensor** o) { return ag_op_tensor_split_indices(o, 8, x[0], ix, 2, 1); });
                 }});
  }
  c.push_back(squared(c[1]));
  return c;
}

Cases cases_broadcast_to() {
  Cases c;
  const int64_t s[3] = {2, 3, 4}, s2[2] = {-1, 4};
  c.push_back({"broadcast_to(new dim)", {Input{{3, 1}}}, [=](ag_tensor** out, X x) { return ag_op_broadcast_to(out, x[0], s, 3); }});
  c.push_back({"broadcast_to(-1)", {Input{{3, 1}}}, [=](ag_tensor** out, X x) { return ag_op_broadcast_to(out, x[0], s2, 2); }});
  c.push_back(squared(c.front()));
  return c;
}

Cases cases_diff() {
  Cases c;
  c.push_back({"diff(n=1, dim 1)", {Input{{2, 4}}}, [](ag_tensor** out, X x) { return ag_op_diff(out, x[0], 1, 1, nullptr, nullptr); }});
  c.push_back({"diff(n=2, dim 0)", {Input{{4, 2}}}, [](ag_tensor** out, X x) { return ag_op_diff(out, x[0], 2, 0, nullptr, nullptr); }});
  c.push_back({"diff(prepend, append)", {Input{{2, 3}}, Input{{2, 1}}, Input{{2, 2}}},
               [](ag_tensor** out, X x) { return ag_op_diff(out, x[0], 2, -1, x[1], x[2]); }});
  c.push_back(squared(c.back()));
  return c;
}

}  // namespace gradcheck
