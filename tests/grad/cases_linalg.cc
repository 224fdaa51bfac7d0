// Gradient-check cases of the linear algebra ops (family CUSTOM): every
// promotion rule of matmul, broadcast batch dims, a stride-0 (expanded)
// operand, a product large enough for the packed GEMM path, empty inner
// dims, linear with and without bias.
#include "gradcheck.h"

namespace gradcheck {

namespace {

using Binary = ag_status (*)(ag_tensor**, const ag_tensor*, const ag_tensor*);

Case binary_case(const std::string& label, Binary fn, Shape a, Shape b, double range = 2.0) {
  return {label, {Input{std::move(a), -range, range}, Input{std::move(b), -range, range}},
          [fn](ag_tensor** out, const std::vector<ag_tensor*>& x) { return fn(out, x[0], x[1]); }};
}

}  // namespace

Cases cases_matmul() {
  Cases c;
  c.push_back(binary_case("matmul", ag_op_matmul, {3, 4}, {4, 5}));
  c.push_back(binary_case("matmul(1-D a)", ag_op_matmul, {4}, {4, 5}));
  c.push_back(binary_case("matmul(1-D b)", ag_op_matmul, {3, 4}, {4}));
  c.push_back(binary_case("matmul(1-D both)", ag_op_matmul, {4}, {4}));
  c.push_back(binary_case("matmul(batch, 2-D b)", ag_op_matmul, {2, 3, 4}, {4, 5}));
  c.push_back(binary_case("matmul(2-D a, batch)", ag_op_matmul, {3, 4}, {2, 4, 2}));
  c.push_back(binary_case("matmul(broadcast batch)", ag_op_matmul, {2, 1, 3, 4}, {3, 4, 2}));
  c.push_back(binary_case("matmul(1-D a, batch)", ag_op_matmul, {3}, {2, 3, 2}));
  c.push_back(binary_case("matmul(batch, 1-D b)", ag_op_matmul, {2, 2, 3}, {3}));
  c.push_back(binary_case("matmul(k = 0)", ag_op_matmul, {2, 0}, {0, 3}));
  // Packed GEMM path (more than 32^3 multiply-adds), values near 1 for f32.
  c.push_back(binary_case("matmul(packed)", ag_op_matmul, {33, 35}, {35, 29}, 1.0));
  // a stride-0 operand: a (3, 1) expanded to (3, 4) along k.
  c.push_back({"matmul(expanded a)", {Input{{3, 1}}, Input{{4, 2}}},
               [](ag_tensor** out, const std::vector<ag_tensor*>& x) {
                 const int64_t shape[] = {3, 4};
                 ag_tensor* e = nullptr;
                 ag_status st = ag_op_expand(&e, x[0], shape, 2);
                 if (st == AG_OK) st = ag_op_matmul(out, e, x[1]);
                 ag_tensor_release(e);
                 return st;
               }});
  return c;
}

Cases cases_bmm() {
  Cases c;
  c.push_back(binary_case("bmm", ag_op_bmm, {2, 3, 4}, {2, 4, 5}));
  c.push_back(binary_case("bmm(1 x 1 x 3)", ag_op_bmm, {1, 1, 3}, {1, 3, 2}));
  c.push_back(binary_case("bmm(k = 0)", ag_op_bmm, {3, 2, 0}, {3, 0, 4}));
  return c;
}

Cases cases_linear() {
  Cases c;
  auto with_bias = [](ag_tensor** out, const std::vector<ag_tensor*>& x) { return ag_op_linear(out, x[0], x[1], x[2]); };
  auto no_bias = [](ag_tensor** out, const std::vector<ag_tensor*>& x) { return ag_op_linear(out, x[0], x[1], nullptr); };
  c.push_back({"linear", {Input{{3, 4}}, Input{{5, 4}}, Input{{5}}}, with_bias});
  c.push_back({"linear(batch)", {Input{{2, 3, 4}}, Input{{5, 4}}, Input{{5}}}, with_bias});
  c.push_back({"linear(1-D x)", {Input{{4}}, Input{{5, 4}}, Input{{5}}}, with_bias});
  c.push_back({"linear(no bias)", {Input{{3, 4}}, Input{{2, 4}}}, no_bias});
  c.push_back({"linear(batch, no bias)", {Input{{2, 2, 3}}, Input{{4, 3}}}, no_bias});
  c.push_back({"linear(packed)", {Input{{40, 30}, -1, 1}, Input{{31, 30}, -1, 1}, Input{{31}, -1, 1}}, with_bias});
  return c;
}

// linear_act with relu: the pre-activations of these inputs stay away from
// relu's kink (finite differences straddling it would disagree).
Cases cases_linear_act() {
  Cases c;
  auto relu_bias = [](ag_tensor** out, const std::vector<ag_tensor*>& x) {
    return ag_op_linear_act(out, x[0], x[1], x[2], AG_ACTIVATION_RELU);
  };
  auto relu_no_bias = [](ag_tensor** out, const std::vector<ag_tensor*>& x) {
    return ag_op_linear_act(out, x[0], x[1], nullptr, AG_ACTIVATION_RELU);
  };
  auto none_bias = [](ag_tensor** out, const std::vector<ag_tensor*>& x) {
    return ag_op_linear_act(out, x[0], x[1], x[2], AG_ACTIVATION_NONE);
  };
  c.push_back({"linear_act(relu)", {Input{{3, 4}}, Input{{5, 4}}, Input{{5}}}, relu_bias});
  c.push_back({"linear_act(relu, batch)", {Input{{2, 3, 4}}, Input{{5, 4}}, Input{{5}}}, relu_bias});
  c.push_back({"linear_act(relu, 1-D x)", {Input{{4}}, Input{{5, 4}}, Input{{5}}}, relu_bias});
  c.push_back({"linear_act(relu, no bias)", {Input{{3, 4}}, Input{{2, 4}}}, relu_no_bias});
  c.push_back({"linear_act(relu, packed)", {Input{{40, 30}, -1, 1}, Input{{31, 30}, -1, 1}, Input{{31}, -1, 1}}, relu_bias});
  c.push_back({"linear_act(none)", {Input{{3, 4}}, Input{{5, 4}}, Input{{5}}}, none_bias});
  return c;
}

Cases cases_outer() {
  Cases c;
  c.push_back(binary_case("outer", ag_op_outer, {3}, {4}));
  c.push_back(binary_case("outer(1 x 5)", ag_op_outer, {1}, {5}));
  return c;
}

Cases cases_dot() {
  Cases c;
  c.push_back(binary_case("dot", ag_op_dot, {5}, {5}));
  c.push_back(binary_case("dot(size 1)", ag_op_dot, {1}, {1}));
  return c;
}

}  // namespace gradcheck
