// C entry points of the elementwise ops with signatures of their own (family
// CUSTOM in ops.def): where, lerp, (0.2) polygamma, nan_to_num, addcmul and
// addcdiv.
#include "api/guard.h"
#include "ops/ops.h"

using namespace ag;

extern "C" {

AG_API ag_status ag_op_where(ag_tensor** out, const ag_tensor* cond, const ag_tensor* a, const ag_tensor* b) noexcept {
  return api::call("ag_op_where", [&] {
    api::check_out(out);
    api::Borrowed tc(cond, "cond"), ta(a, "a"), tb(b, "b");
    *out = api::to_handle(ops::where(tc, ta, tb));
  });
}

AG_API ag_status ag_op_lerp(ag_tensor** out, const ag_tensor* a, const ag_tensor* b, const ag_tensor* weight) noexcept {
  return api::call("ag_op_lerp", [&] {
    api::check_out(out);
    api::Borrowed ta(a, "a"), tb(b, "b"), tw(weight, "weight");
    *out = api::to_handle(ops::lerp(ta, tb, tw));
  });
}

AG_API ag_status ag_op_polygamma(ag_tensor** out, int64_t order, const ag_tensor* x) noexcept {
  return api::call("ag_op_polygamma", [&] {
    api::check_out(out);
    *out = api::to_handle(ops::polygamma(order, api::Borrowed(x, "x")));
  });
}

AG_API ag_status ag_op_nan_to_num(ag_tensor** out, const ag_tensor* x, double nan, double posinf,
                                  double neginf) noexcept {
  return api::call("ag_op_nan_to_num", [&] {
    api::check_out(out);
    *out = api::to_handle(ops::nan_to_num(api::Borrowed(x, "x"), nan, posinf, neginf));
  });
}

AG_API ag_status ag_op_addcmul(ag_tensor** out, const ag_tensor* input, const ag_tensor* tensor1,
                               const ag_tensor* tensor2, double value) noexcept {
  return api::call("ag_op_addcmul", [&] {
    api::check_out(out);
    api::Borrowed ti(input, "input"), t1(tensor1, "tensor1"), t2(tensor2, "tensor2");
    *out = api::to_handle(ops::addcmul(ti, t1, t2, value));
  });
}

AG_API ag_status ag_op_addcdiv(ag_tensor** out, const ag_tensor* input, const ag_tensor* tensor1,
                               const ag_tensor* tensor2, double value) noexcept {
  return api::call("ag_op_addcdiv", [&] {
    api::check_out(out);
    api::Borrowed ti(input, "input"), t1(tensor1, "tensor1"), t2(tensor2, "tensor2");
    *out = api::to_handle(ops::addcdiv(ti, t1, t2, value));
  });
}

}  // extern "C"
