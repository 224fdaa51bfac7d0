// C entry point of linear (family CUSTOM in ops.def); matmul, bmm, outer and
// dot are BINARY (ops_api.cc).
#include "api/guard.h"
#include "ops/ops.h"

using namespace ag;

extern "C" {

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
