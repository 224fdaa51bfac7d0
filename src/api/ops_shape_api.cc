// C entry points of the shape and view ops of family CUSTOM (ag/ops_shape.h);
// the others are expanded from their family (ops_api.cc).
#include <vector>

#include "api/guard.h"
#include "ops/ops.h"

using namespace ag;

namespace {

std::vector<int64_t> list_arg(const int64_t* v, int32_t n, const char* what, const char* count) {
  if (n < 0) fail(AG_ERR_INVALID_ARGUMENT, count, " ", n, " is negative");
  if (n > 0 && v == nullptr) fail(AG_ERR_INVALID_ARGUMENT, what, " is NULL but ", count, " is ", n);
  return std::vector<int64_t>(v, v + n);
}

// Hands every tensor to the caller's array, all or nothing.
void write_outputs(ag_tensor** outs, int32_t capacity, std::vector<Tensor> ts) {
  if (outs == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "outs is NULL");
  if (capacity < static_cast<int64_t>(ts.size())) {
    fail(AG_ERR_BUFFER_TOO_SMALL, "capacity ", capacity, " is less than the ", ts.size(), " outputs");
  }
  for (size_t i = 0; i < ts.size(); ++i) outs[i] = api::to_handle(std::move(ts[i]));
}

}  // namespace

extern "C" {

AG_API ag_status ag_op_slice(ag_tensor** out, const ag_tensor* x, int64_t dim, int64_t start, int64_t end,
                             int64_t step) noexcept {
  return api::call("ag_op_slice", [&] {
    api::check_out(out);
    *out = api::to_handle(ops::slice(api::Borrowed(x, "x"), dim, start, end, step));
  });
}

AG_API ag_status ag_op_slice_backward(ag_tensor** out, const ag_tensor* grad, const int64_t* input_shape,
                                      int32_t ndim, int64_t dim, int64_t start, int64_t end, int64_t step) noexcept {
  return api::call("ag_op_slice_backward", [&] {
    api::check_out(out);
    api::Borrowed tg(grad, "grad");
    *out = api::to_handle(ops::slice_backward(tg, api::dims_arg(input_shape, ndim, "input_shape", "ndim"), dim, start, end, step));
  });
}

AG_API ag_status ag_op_narrow(ag_tensor** out, const ag_tensor* x, int64_t dim, int64_t start,
                              int64_t length) noexcept {
  return api::call("ag_op_narrow", [&] {
    api::check_out(out);
    *out = api::to_handle(ops::narrow(api::Borrowed(x, "x"), dim, start, length));
  });
}

AG_API ag_status ag_op_split(ag_tensor** outs, int32_t capacity, const ag_tensor* x, const int64_t* sizes,
                             int32_t nsizes, int64_t dim) noexcept {
  return api::call("ag_op_split", [&] {
    if (outs == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "outs is NULL");
    api::Borrowed tx(x, "x");
    write_outputs(outs, capacity, ops::split(tx, list_arg(sizes, nsizes, "sizes", "nsizes"), dim));
  });
}

AG_API ag_status ag_op_chunk(ag_tensor** outs, int32_t capacity, int32_t* n_out, const ag_tensor* x,
                             int64_t chunks, int64_t dim) noexcept {
  return api::call("ag_op_chunk", [&] {
    if (n_out == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "n_out is NULL");
    if (chunks > INT32_MAX) fail(AG_ERR_INVALID_ARGUMENT, "chunks ", chunks, " exceeds INT32_MAX");
    api::Borrowed tx(x, "x");
    if (outs == nullptr && capacity == 0) {  // asks for the count only
      *n_out = static_cast<int32_t>(ops::chunk_count(tx, chunks, dim));  // <= chunks
      return;
    }
    std::vector<Tensor> pieces = ops::chunk(tx, chunks, dim);
    const int32_t n = static_cast<int32_t>(pieces.size());
    write_outputs(outs, capacity, std::move(pieces));
    *n_out = n;
  });
}

AG_API ag_status ag_op_repeat(ag_tensor** out, const ag_tensor* x, const int64_t* repeats, int32_t n) noexcept {
  return api::call("ag_op_repeat", [&] {
    api::check_out(out);
    api::Borrowed tx(x, "x");
    *out = api::to_handle(ops::repeat(tx, api::dims_arg(repeats, n, "repeats", "n")));
  });
}

AG_API ag_status ag_op_pad(ag_tensor** out, const ag_tensor* x, const int64_t* pads, int32_t npads, int32_t mode,
                           double value) noexcept {
  return api::call("ag_op_pad", [&] {
    api::check_out(out);
    api::Borrowed tx(x, "x");
    if (mode != AG_PAD_CONSTANT && mode != AG_PAD_REFLECT) {
      fail(AG_ERR_INVALID_ARGUMENT, "mode ", mode, " is not AG_PAD_CONSTANT (0) or AG_PAD_REFLECT (1)");
    }
    *out = api::to_handle(ops::pad(tx, list_arg(pads, npads, "pads", "npads"), static_cast<ops::PadMode>(mode), value));
  });
}

AG_API ag_status ag_op_roll(ag_tensor** out, const ag_tensor* x, const int64_t* shifts, int32_t nshifts,
                            const int64_t* dims, int32_t ndims) noexcept {
  return api::call("ag_op_roll", [&] {
    api::check_out(out);
    api::Borrowed tx(x, "x");
    *out = api::to_handle(
        ops::roll(tx, list_arg(shifts, nshifts, "shifts", "nshifts"), list_arg(dims, ndims, "dims", "ndims")));
  });
}

AG_API ag_status ag_op_rot90(ag_tensor** out, const ag_tensor* x, int64_t k, const int64_t* dims,
                             int32_t ndims) noexcept {
  return api::call("ag_op_rot90", [&] {
    api::check_out(out);
    api::Borrowed tx(x, "x");
    *out = api::to_handle(ops::rot90(tx, k, api::dims_arg(dims, ndims)));
  });
}

AG_API ag_status ag_op_repeat_interleave_tensor(ag_tensor** out, const ag_tensor* x, const ag_tensor* repeats,
                                                int64_t dim) noexcept {
  return api::call("ag_op_repeat_interleave_tensor", [&] {
    api::check_out(out);
    api::Borrowed tx(x, "x"), tr(repeats, "repeats");
    *out = api::to_handle(ops::repeat_interleave_tensor(tx, tr, dim));
  });
}

AG_API ag_status ag_op_unbind(ag_tensor** outs, int32_t capacity, const ag_tensor* x, int64_t dim) noexcept {
  return api::call("ag_op_unbind", [&] {
    if (outs == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "outs is NULL");
    api::Borrowed tx(x, "x");
    const int64_t n = ops::unbind_count(tx, dim);
    if (capacity < n) fail(AG_ERR_BUFFER_TOO_SMALL, "capacity ", capacity, " is less than the ", n, " outputs");
    write_outputs(outs, capacity, ops::unbind(tx, dim));
  });
}

AG_API ag_status ag_op_tensor_split(ag_tensor** outs, int32_t capacity, const ag_tensor* x, int64_t sections,
                                    int64_t dim) noexcept {
  return api::call("ag_op_tensor_split", [&] {
    if (outs == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "outs is NULL");
    api::Borrowed tx(x, "x");
    if (sections > capacity) fail(AG_ERR_BUFFER_TOO_SMALL, "capacity ", capacity, " is less than the ", sections, " outputs");
    write_outputs(outs, capacity, ops::tensor_split(tx, sections, dim));
  });
}

AG_API ag_status ag_op_tensor_split_indices(ag_tensor** outs, int32_t capacity, const ag_tensor* x,
                                            const int64_t* indices, int32_t nindices, int64_t dim) noexcept {
  return api::call("ag_op_tensor_split_indices", [&] {
    if (outs == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "outs is NULL");
    api::Borrowed tx(x, "x");
    write_outputs(outs, capacity, ops::tensor_split_indices(tx, list_arg(indices, nindices, "indices", "nindices"), dim));
  });
}

AG_API ag_status ag_op_diff(ag_tensor** out, const ag_tensor* x, int64_t n, int64_t dim, const ag_tensor* prepend,
                            const ag_tensor* append) noexcept {
  return api::call("ag_op_diff", [&] {
    api::check_out(out);
    api::Borrowed tx(x, "x");
    *out = api::to_handle(ops::diff(tx, n, dim, api::optional_tensor(prepend, "prepend"),
                                    api::optional_tensor(append, "append")));
  });
}

}  // extern "C"
