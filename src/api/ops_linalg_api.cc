// C entry points of the linear algebra ops (family CUSTOM in ops.def).
#include "api/guard.h"
#include "ops/ops.h"

using namespace ag;

#define AG_SHIM_PRODUCT(name)                                                                          \
  AG_API ag_status ag_op_##name(ag_tensor** out, const ag_tensor* a, const ag_tensor* b) noexcept {     \
    return api::call("ag_op_" #name, [&] {                                                              \
      api::check_out(out);                                                                              \
      api::Borrowed ta(a, "a"), tb(b, "b");                                                             \
      *out = api::to_handle(ops::name(ta, tb));                                                         \
    });                                                                                                 \
  }

extern "C" {

AG_SHIM_PRODUCT(matmul)
AG_SHIM_PRODUCT(bmm)
AG_SHIM_PRODUCT(outer)
AG_SHIM_PRODUCT(dot)

AG_API ag_status ag_op_linear(ag_tensor** out, const ag_tensor* x, const ag_tensor* weight,
                              const ag_tensor* bias) noexcept {
  return api::call("ag_op_linear", [&] {
    api::check_out(out);
    api::Borrowed tx(x, "x"), tw(weight, "weight");
    const Tensor tb = api::optional_tensor(bias, "bias");
    *out = api::to_handle(ops::linear(tx, tw, tb));
  });
}

}  // extern "C"
