// C entry points of the indexing ops (ag/ops_index.h).
#include "api/guard.h"
#include "ops/ops.h"

using namespace ag;

extern "C" {

AG_API ag_status ag_op_masked_fill(ag_tensor** out, const ag_tensor* x, const ag_tensor* mask, double value) noexcept {
  return api::call("ag_op_masked_fill", [&] {
    api::check_out(out);
    api::Borrowed tx(x, "x"), tm(mask, "mask");
    *out = api::to_handle(ops::masked_fill(tx, tm, value));
  });
}

AG_API ag_status ag_op_embedding(ag_tensor** out, const ag_tensor* weight, const ag_tensor* indices) noexcept {
  return api::call("ag_op_embedding", [&] {
    api::check_out(out);
    api::Borrowed tw(weight, "weight"), ti(indices, "indices");
    *out = api::to_handle(ops::embedding(tw, ti));
  });
}

AG_API ag_status ag_op_one_hot(ag_tensor** out, const ag_tensor* indices, int64_t num_classes) noexcept {
  return api::call("ag_op_one_hot", [&] {
    api::check_out(out);
    *out = api::to_handle(ops::one_hot(api::Borrowed(indices, "indices"), num_classes));
  });
}

}  // extern "C"
