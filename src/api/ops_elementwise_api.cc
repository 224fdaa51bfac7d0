// C entry points of the elementwise ops with signatures of their own (family
// CUSTOM in ops.def): where and lerp.
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

}  // extern "C"
