// C entry points of the creation ops (ag/ops_creation.h).
#include "api/guard.h"
#include "ops/ops.h"

using namespace ag;

extern "C" {

AG_API ag_status ag_op_arange(ag_tensor** out, ag_context* ctx, ag_dtype dtype, double start, double end,
                              double step) noexcept {
  return api::call("ag_op_arange", [&] {
    api::check_out(out);
    Context& c = api::context_arg(ctx);
    *out = api::to_handle(ops::arange(&c, api::dtype_arg(dtype), start, end, step));
  });
}

AG_API ag_status ag_op_linspace(ag_tensor** out, ag_context* ctx, ag_dtype dtype, double start, double end,
                                int64_t steps) noexcept {
  return api::call("ag_op_linspace", [&] {
    api::check_out(out);
    Context& c = api::context_arg(ctx);
    *out = api::to_handle(ops::linspace(&c, api::dtype_arg(dtype), start, end, steps));
  });
}

AG_API ag_status ag_op_eye(ag_tensor** out, ag_context* ctx, ag_dtype dtype, int64_t n, int64_t m) noexcept {
  return api::call("ag_op_eye", [&] {
    api::check_out(out);
    Context& c = api::context_arg(ctx);
    *out = api::to_handle(ops::eye(&c, api::dtype_arg(dtype), n, m));
  });
}

}  // extern "C"
