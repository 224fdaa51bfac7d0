// Gradient-check cases of the creation ops (family CUSTOM). They have no
// tensor inputs and are not differentiable: the cases only check that
// nothing is recorded, in a context of the test process.
#include <cstdint>

#include "gradcheck.h"

namespace gradcheck {

namespace {

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

}  // namespace

// Declared in gradcheck.h: the random ops' cases use it too.
Case no_input_case(std::string label, std::function<ag_status(ag_tensor**, ag_context*)> fn) {
  return {std::move(label), {}, [fn](ag_tensor** out, const std::vector<ag_tensor*>&) { return fn(out, case_context()); },
          false};
}

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

}  // namespace gradcheck
