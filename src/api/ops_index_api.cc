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

AG_API ag_status ag_op_scatter_value(ag_tensor** out, const ag_tensor* x, int64_t dim, const ag_tensor* index,
                                     double value) noexcept {
  return api::call("ag_op_scatter_value", [&] {
    api::check_out(out);
    api::Borrowed tx(x, "x"), ti(index, "index");
    *out = api::to_handle(ops::scatter_value(tx, dim, ti, value));
  });
}

AG_API ag_status ag_op_scatter_reduce(ag_tensor** out, const ag_tensor* x, int64_t dim, const ag_tensor* index,
                                      const ag_tensor* src, int32_t reduce, int32_t include_self) noexcept {
  return api::call("ag_op_scatter_reduce", [&] {
    api::check_out(out);
    api::Borrowed tx(x, "x"), ti(index, "index"), ts(src, "src");
    if (reduce < AG_SCATTER_REDUCE_SUM || reduce > AG_SCATTER_REDUCE_AMIN) {
      fail(AG_ERR_INVALID_ARGUMENT, "reduce ", reduce, " is not an AG_SCATTER_REDUCE_* value (0..4)");
    }
    *out = api::to_handle(ops::scatter_reduce(tx, dim, ti, ts, static_cast<ops::ScatterReduce>(reduce), include_self != 0));
  });
}

AG_API ag_status ag_op_index_put(ag_tensor** out, const ag_tensor* x, const ag_tensor* const* indices,
                                 int32_t nindices, const ag_tensor* values, int32_t accumulate) noexcept {
  return api::call("ag_op_index_put", [&] {
    api::check_out(out);
    api::Borrowed tx(x, "x"), tv(values, "values");
    *out = api::to_handle(ops::index_put(tx, api::tensors_arg(indices, nindices), tv, accumulate != 0));
  });
}

AG_API ag_status ag_op_index_fill(ag_tensor** out, const ag_tensor* x, int64_t dim, const ag_tensor* index,
                                  double value) noexcept {
  return api::call("ag_op_index_fill", [&] {
    api::check_out(out);
    api::Borrowed tx(x, "x"), ti(index, "index");
    *out = api::to_handle(ops::index_fill(tx, dim, ti, value));
  });
}

AG_API ag_status ag_op_masked_scatter(ag_tensor** out, const ag_tensor* x, const ag_tensor* mask,
                                      const ag_tensor* source) noexcept {
  return api::call("ag_op_masked_scatter", [&] {
    api::check_out(out);
    api::Borrowed tx(x, "x"), tm(mask, "mask"), ts(source, "source");
    *out = api::to_handle(ops::masked_scatter(tx, tm, ts));
  });
}

AG_API ag_status ag_op_masked_select(ag_tensor** out, const ag_tensor* x, const ag_tensor* mask) noexcept {
  return api::call("ag_op_masked_select", [&] {
    api::check_out(out);
    api::Borrowed tx(x, "x"), tm(mask, "mask");
    *out = api::to_handle(ops::masked_select(tx, tm));
  });
}

AG_API ag_status ag_op_take_along_dim(ag_tensor** out, const ag_tensor* x, const ag_tensor* indices,
                                      int64_t dim) noexcept {
  return api::call("ag_op_take_along_dim", [&] {
    api::check_out(out);
    api::Borrowed tx(x, "x"), ti(indices, "indices");
    *out = api::to_handle(ops::take_along_dim(tx, ti, dim));
  });
}

}  // extern "C"
