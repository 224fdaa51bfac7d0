// C entry points of the CUSTOM ops of ops_reduce.h: reductions over dims with
// an attribute, max/min along a dim with indices, argmax/argmin.
#include "api/guard.h"
#include "ops/ops.h"

using namespace ag;

namespace {

using DimsAttrOp = Tensor (*)(const Tensor&, const Dims&, bool, double);

ag_status dims_attr_shim(const char* fn, DimsAttrOp op, ag_tensor** out, const ag_tensor* x, const int64_t* dims,
                         int32_t ndims, int32_t keepdim, double attr) {
  return api::call(fn, [&] {
    api::check_out(out);
    api::Borrowed tx(x, "x");
    *out = api::to_handle(op(tx, api::dims_arg(dims, ndims), keepdim != 0, attr));
  });
}

using SelectOp = std::pair<Tensor, Tensor> (*)(const Tensor&, int64_t, bool);

ag_status select_shim(const char* fn, SelectOp op, ag_tensor** values, ag_tensor** indices, const ag_tensor* x,
                      int64_t dim, int32_t keepdim) {
  return api::call(fn, [&] {
    if (values == nullptr && indices == nullptr) {
      fail(AG_ERR_INVALID_ARGUMENT, "values and indices are both NULL");
    }
    api::Borrowed tx(x, "x");
    std::pair<Tensor, Tensor> r = op(tx, dim, keepdim != 0);
    if (values) *values = api::to_handle(r.first);
    if (indices) *indices = api::to_handle(r.second);
  });
}

}  // namespace

extern "C" {

AG_API ag_status ag_op_var_dims(ag_tensor** out, const ag_tensor* x, const int64_t* dims, int32_t ndims,
                                int32_t keepdim, double correction) noexcept {
  return dims_attr_shim("ag_op_var_dims", &ops::var_dims, out, x, dims, ndims, keepdim, correction);
}

AG_API ag_status ag_op_std_dims(ag_tensor** out, const ag_tensor* x, const int64_t* dims, int32_t ndims,
                                int32_t keepdim, double correction) noexcept {
  return dims_attr_shim("ag_op_std_dims", &ops::std_dims, out, x, dims, ndims, keepdim, correction);
}

AG_API ag_status ag_op_norm_dims(ag_tensor** out, const ag_tensor* x, const int64_t* dims, int32_t ndims,
                                 int32_t keepdim, double p) noexcept {
  return dims_attr_shim("ag_op_norm_dims", &ops::norm_dims, out, x, dims, ndims, keepdim, p);
}

AG_API ag_status ag_op_max_dim(ag_tensor** values, ag_tensor** indices, const ag_tensor* x, int64_t dim,
                               int32_t keepdim) noexcept {
  return select_shim("ag_op_max_dim", &ops::max_dim, values, indices, x, dim, keepdim);
}

AG_API ag_status ag_op_min_dim(ag_tensor** values, ag_tensor** indices, const ag_tensor* x, int64_t dim,
                               int32_t keepdim) noexcept {
  return select_shim("ag_op_min_dim", &ops::min_dim, values, indices, x, dim, keepdim);
}

AG_API ag_status ag_op_argmax(ag_tensor** out, const ag_tensor* x, int64_t dim, int32_t keepdim) noexcept {
  return api::call("ag_op_argmax", [&] {
    api::check_out(out);
    *out = api::to_handle(ops::argmax(api::Borrowed(x, "x"), dim, keepdim != 0));
  });
}

AG_API ag_status ag_op_argmin(ag_tensor** out, const ag_tensor* x, int64_t dim, int32_t keepdim) noexcept {
  return api::call("ag_op_argmin", [&] {
    api::check_out(out);
    *out = api::to_handle(ops::argmin(api::Borrowed(x, "x"), dim, keepdim != 0));
  });
}

}  // extern "C"
