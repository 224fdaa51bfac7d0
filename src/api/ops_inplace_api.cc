// C entry points of the in-place ops (ag/ops_inplace.h), one per AG_INPLACE
// row of ops.def, expanded from the family's signature.
#include "api/guard.h"
#include "ops/inplace.h"

using namespace ag;

#define AG_SHIM_INPLACE(name, arg)                                                                  \
  AG_API ag_status ag_op_##name##_(ag_tensor* self) noexcept {                                     \
    return api::call("ag_op_" #name "_", [&] { ops::name##_(api::Borrowed(self, "self")); });      \
  }
#define AG_SHIM_INPLACE_SCALAR(name, arg)                                                           \
  AG_API ag_status ag_op_##name##_(ag_tensor* self, double attr) noexcept {                        \
    return api::call("ag_op_" #name "_", [&] { ops::name##_(api::Borrowed(self, "self"), attr); }); \
  }
#define AG_SHIM_INPLACE_SCALAR2(name, arg)                                                                  \
  AG_API ag_status ag_op_##name##_(ag_tensor* self, double attr, double attr2) noexcept {                  \
    return api::call("ag_op_" #name "_", [&] { ops::name##_(api::Borrowed(self, "self"), attr, attr2); }); \
  }
#define AG_SHIM_INPLACE_BINARY(name, arg)                                             \
  AG_API ag_status ag_op_##name##_(ag_tensor* self, const ag_tensor* arg) noexcept { \
    return api::call("ag_op_" #name "_", [&] {                                        \
      api::Borrowed s(self, "self"), o(arg, #arg);                                    \
      ops::name##_(s, o);                                                             \
    });                                                                               \
  }
#define AG_SHIM_INPLACE_BINARY_SCALAR(name, arg)                                                 \
  AG_API ag_status ag_op_##name##_(ag_tensor* self, const ag_tensor* arg, double attr) noexcept { \
    return api::call("ag_op_" #name "_", [&] {                                                     \
      api::Borrowed s(self, "self"), o(arg, #arg);                                                 \
      ops::name##_(s, o, attr);                                                                    \
    });                                                                                            \
  }

extern "C" {

#define AG_INPLACE(name, family, arg) AG_SHIM_##family(name, arg)
#include "ops/ops.def"

}  // extern "C"
