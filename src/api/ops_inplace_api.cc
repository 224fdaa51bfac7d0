// C entry points of the in-place ops (ag/ops_inplace.h).
#include <cmath>

#include "api/guard.h"
#include "ops/inplace.h"

using namespace ag;

extern "C" {

#define AG_SHIM_INPLACE_BINARY(name, arg)                                                        \
  AG_API ag_status ag_op_##name##_(ag_tensor* self, const ag_tensor* arg) noexcept {             \
    return api::call("ag_op_" #name "_", [&] {                                                   \
      api::Borrowed s(self, "self"), o(arg, #arg);                                               \
      ops::name##_(s, o);                                                                        \
    });                                                                                          \
  }
AG_SHIM_INPLACE_BINARY(add, other)
AG_SHIM_INPLACE_BINARY(sub, other)
AG_SHIM_INPLACE_BINARY(mul, other)
AG_SHIM_INPLACE_BINARY(div, other)
AG_SHIM_INPLACE_BINARY(copy, src)
#undef AG_SHIM_INPLACE_BINARY

AG_API ag_status ag_op_zero_(ag_tensor* self) noexcept {
  return api::call("ag_op_zero_", [&] { ops::zero_(api::Borrowed(self, "self")); });
}

AG_API ag_status ag_op_fill_(ag_tensor* self, double value) noexcept {
  return api::call("ag_op_fill_", [&] {
    api::Borrowed s(self, "self");
    if (s->dtype() == DType::I64 && !(std::isfinite(value) && std::fabs(value) < 9.2233720368547758e18)) {
      fail(AG_ERR_INVALID_ARGUMENT, "value ", value, " does not fit in i64");
    }
    ops::fill_(s, value);
  });
}

AG_API ag_status ag_op_clamp_(ag_tensor* self, double min, double max) noexcept {
  return api::call("ag_op_clamp_", [&] { ops::clamp_(api::Borrowed(self, "self"), min, max); });
}

}  // extern "C"
