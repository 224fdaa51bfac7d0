// Gradient-check cases of the random ops and dropout (family CUSTOM). The
// draws are not differentiable: their cases only check that nothing is
// recorded. Dropout re-seeds its input's context before each call, so every
// evaluation of the checker sees the same mask.
#include <cstdint>

#include "gradcheck.h"

namespace gradcheck {

namespace {

using X = const std::vector<ag_tensor*>&;

const int64_t kShape[2] = {2, 3};

// dropout of x[0] after re-seeding x[0]'s context: the same mask at every call.
ag_status seeded_dropout(ag_tensor** out, ag_tensor* x, double p, int32_t training) {
  ag_context* ctx = nullptr;
  ag_status st = ag_tensor_context(&ctx, x);
  if (st == AG_OK) st = ag_context_manual_seed(ctx, 42);
  ag_context_release(ctx);
  return st == AG_OK ? ag_op_dropout(out, x, p, training) : st;
}

}  // namespace

Cases cases_rand() {
  return {no_input_case("rand", [](ag_tensor** o, ag_context* ctx) { return ag_op_rand(o, ctx, AG_F64, kShape, 2); })};
}

Cases cases_randn() {
  return {no_input_case("randn", [](ag_tensor** o, ag_context* ctx) { return ag_op_randn(o, ctx, AG_F32, kShape, 2); })};
}

Cases cases_uniform() {
  return {no_input_case("uniform(-1, 3)",
                        [](ag_tensor** o, ag_context* ctx) { return ag_op_uniform(o, ctx, AG_F64, kShape, 2, -1, 3); })};
}

Cases cases_normal() {
  return {no_input_case("normal(1, 2)",
                        [](ag_tensor** o, ag_context* ctx) { return ag_op_normal(o, ctx, AG_F64, nullptr, 0, 1, 2); })};
}

Cases cases_bernoulli() {
  // p requires grad in the check; the draw still records nothing.
  return {{"bernoulli", {Input{{2, 3}, 0.1, 0.9}}, [](ag_tensor** out, X x) { return ag_op_bernoulli(out, x[0]); }, false}};
}

Cases cases_bernoulli_scalar() {
  return {no_input_case("bernoulli_scalar(0.3)", [](ag_tensor** o, ag_context* ctx) {
    return ag_op_bernoulli_scalar(o, ctx, AG_F32, kShape, 2, 0.3);
  })};
}

Cases cases_randint() {
  return {no_input_case("randint(-3, 7)",
                        [](ag_tensor** o, ag_context* ctx) { return ag_op_randint(o, ctx, kShape, 2, -3, 7); })};
}

Cases cases_dropout() {
  Cases c;
  for (const Shape& s : {Shape{}, Shape{7}, Shape{2, 5}}) {
    c.push_back({"dropout(0.3)", {Input{s}}, [](ag_tensor** out, X x) { return seeded_dropout(out, x[0], 0.3, 1); }});
  }
  c.push_back({"dropout(transposed)", {Input{{3, 4}}}, [](ag_tensor** out, X x) {
                 ag_tensor* t = nullptr;
                 ag_status st = ag_op_transpose(&t, x[0], 0, 1);
                 if (st == AG_OK) st = seeded_dropout(out, t, 0.5, 1);
                 ag_tensor_release(t);
                 return st;
               }});
  c.push_back({"dropout(p = 1)", {Input{{2, 3}}}, [](ag_tensor** out, X x) { return seeded_dropout(out, x[0], 1.0, 1); }});
  c.push_back({"dropout(p = 0)", {Input{{2, 3}}}, [](ag_tensor** out, X x) { return seeded_dropout(out, x[0], 0.0, 1); }});
  c.push_back({"dropout(eval)", {Input{{2, 3}}}, [](ag_tensor** out, X x) { return seeded_dropout(out, x[0], 0.4, 0); }});
  // dropout(x)^2: the second-order check runs through the mask's mul.
  c.push_back({"dropout(0.3) squared", {Input{{2, 4}}}, [](ag_tensor** out, X x) {
                 ag_tensor* t = nullptr;
                 ag_status st = seeded_dropout(&t, x[0], 0.3, 1);
                 if (st == AG_OK) st = ag_op_mul(out, t, t);
                 ag_tensor_release(t);
                 return st;
               }});
  return c;
}

}  // namespace gradcheck
