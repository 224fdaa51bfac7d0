// Gradient-check cases of the creation and random ops (family CUSTOM). Ops
// without tensor inputs are not differentiable: their cases only check that
// nothing is recorded, in a context of this file. Dropout re-seeds its
// input's context before each call, so every evaluation sees one mask.
#include <cstdint>

#include "gradcheck.h"

namespace gradcheck {

namespace {

using X = const std::vector<ag_tensor*>&;

// The context of the cases without tensor inputs. Never released: it lives
// as long as the test process.
ag_context* case_context() {
  static ag_context* ctx = [] {
    ag_context* c = nullptr;
    ag_context_create(&c, nullptr);
    return c;
  }();
  return ctx;
}

Case no_input_case(std::string label, std::function<ag_status(ag_tensor**, ag_context*)> fn) {
  return {std::move(label), {}, [fn](ag_tensor** out, X) { return fn(out, case_context()); }, false};
}

}  // namespace

Cases cases_arange() {
  Cases c;
  c.push_back(no_input_case("arange(f64)", [](ag_tensor** o, ag_context* ctx) { return ag_op_arange(o, ctx, AG_F64, 0, 5, 1); }));
  c.push_back(no_input_case("arange(f32, negative step)",
                            [](ag_tensor** o, ag_context* ctx) { return ag_op_arange(o, ctx, AG_F32, 3, -1, -0.5); }));
  c.push_back(no_input_case("arange(i64)", [](ag_tensor** o, ag_context* ctx) { return ag_op_arange(o, ctx, AG_I64, 1, 9, 3); }));
  return c;
}

Cases cases_linspace() {
  Cases c;
  c.push_back(no_input_case("linspace(f64)", [](ag_tensor** o, ag_context* ctx) { return ag_op_linspace(o, ctx, AG_F64, -1, 1, 7); }));
  c.push_back(no_input_case("linspace(f32, 1 step)", [](ag_tensor** o, ag_context* ctx) { return ag_op_linspace(o, ctx, AG_F32, 2, 3, 1); }));
  return c;
}

Cases cases_eye() {
  Cases c;
  c.push_back(no_input_case("eye(3)", [](ag_tensor** o, ag_context* ctx) { return ag_op_eye(o, ctx, AG_F64, 3, -1); }));
  c.push_back(no_input_case("eye(2, 4)", [](ag_tensor** o, ag_context* ctx) { return ag_op_eye(o, ctx, AG_F32, 2, 4); }));
  return c;
}

namespace {

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
