// ag_tensor_*: creation, lifetime, metadata and data.
#include <cmath>
#include <cstring>

#include "api/guard.h"
#include "kernels/kernels.h"
#include "ops/op_common.h"

using namespace ag;

namespace {

Tensor create_filled(ag_context* ctx, ag_dtype dtype, const int64_t* shape, int32_t ndim, double value) {
  Context& c = api::context_arg(ctx);
  const DType dt = api::dtype_arg(dtype);
  const Dims dims = checked_shape(shape, ndim, itemsize(dt));
  if (dt == DType::I64 && !(std::isfinite(value) && std::fabs(value) < 9.2233720368547758e18)) {
    fail(AG_ERR_INVALID_ARGUMENT, "value ", value, " does not fit in i64");
  }
  return ops::full(&c, dt, dims, value);
}

}  // namespace

namespace ag::api {
ag_tensor* to_handle_general(Tensor t) {
  if (Recorder* r = recording()) [[unlikely]] check_recorded_result(*r);
  TensorImpl* p = t.get();
  if (profiling_anywhere()) note_profiled_context(p->context());
  Scope* scope = scope_reserve();
  // A fresh op result is reachable only through t.
  const bool first = p->sole_owner() ? p->handle_acquire_sole() : p->handle_acquire();
  if (first) t.detach();  // the caller's side keeps this reference
  scope_track(scope, p);
  return reinterpret_cast<ag_tensor*>(p);
}
}  // namespace ag::api

extern "C" {

AG_API ag_status ag_tensor_create(ag_tensor** out, ag_context* ctx, ag_dtype dtype, const int64_t* shape,
                                  int32_t ndim, const void* data) noexcept {
  return api::call("ag_tensor_create", [&] {
    api::check_out(out);
    Context& c = api::context_arg(ctx);
    const DType dt = api::dtype_arg(dtype);
    const Dims dims = checked_shape(shape, ndim, itemsize(dt));
    Tensor t = empty(&c, dt, dims);
    if (data == nullptr) {
      std::memset(t->data(), 0, t->nbytes());
    } else if (dt == DType::Bool) {
      const Dims strides = contiguous_strides(dims);
      kernels::copy(dt, dims, kernels::View{static_cast<const char*>(data), &strides}, dt, t->data(), strides);
    } else {
      const Dims strides = contiguous_strides(dims);
      ops::copy_into(&c, dt, dims, kernels::View{static_cast<const char*>(data), &strides}, dt, t->data(), strides);
    }
    *out = api::to_handle(std::move(t));
  });
}

AG_API ag_status ag_tensor_zeros(ag_tensor** out, ag_context* ctx, ag_dtype dtype, const int64_t* shape,
                                 int32_t ndim) noexcept {
  return api::call("ag_tensor_zeros", [&] {
    api::check_out(out);
    *out = api::to_handle(create_filled(ctx, dtype, shape, ndim, 0.0));
  });
}

AG_API ag_status ag_tensor_ones(ag_tensor** out, ag_context* ctx, ag_dtype dtype, const int64_t* shape,
                                int32_t ndim) noexcept {
  return api::call("ag_tensor_ones", [&] {
    api::check_out(out);
    *out = api::to_handle(create_filled(ctx, dtype, shape, ndim, 1.0));
  });
}

AG_API ag_status ag_tensor_full(ag_tensor** out, ag_context* ctx, ag_dtype dtype, const int64_t* shape,
                                int32_t ndim, double value) noexcept {
  return api::call("ag_tensor_full", [&] {
    api::check_out(out);
    *out = api::to_handle(create_filled(ctx, dtype, shape, ndim, value));
  });
}

AG_API ag_status ag_tensor_scalar(ag_tensor** out, ag_context* ctx, ag_dtype dtype, double value) noexcept {
  return api::call("ag_tensor_scalar", [&] {
    api::check_out(out);
    *out = api::to_handle(create_filled(ctx, dtype, nullptr, 0, value));
  });
}

AG_API ag_tensor* ag_tensor_retain(ag_tensor* t) noexcept {
  if (t == nullptr) return nullptr;
  TensorImpl* p = api::impl(t);
  if (!p->handle_valid()) {
    api::set_last_error("ag_tensor_retain", "tensor is not a live handle (already released?)");
    return nullptr;
  }
  api::Scope* scope = nullptr;
  try {
    scope = api::scope_reserve();
  } catch (const std::bad_alloc&) {
    api::set_last_error("ag_tensor_retain", "out of memory recording the handle in the open scope");
    return nullptr;
  }
  if (p->handle_acquire()) p->retain();
  api::scope_track(scope, p);
  return t;
}

AG_API void ag_tensor_release(ag_tensor* t) noexcept {
  if (t == nullptr) return;
  TensorImpl* p = api::impl(t);
  if (!p->handle_valid()) {
    api::set_last_error("ag_tensor_release", "tensor is not a live handle (released twice?); ignored");
    return;
  }
  if (api::tl_innermost_scope) api::scope_forget(p);
  // An intermediate result is usually reachable only through this handle.
  if (p->sole_owner() ? p->handle_release_sole() : p->handle_release()) p->release();
}

AG_API ag_dtype ag_tensor_dtype(const ag_tensor* t) noexcept {
  if (t == nullptr || !api::impl(t)->handle_valid()) return 0;
  return static_cast<ag_dtype>(api::impl(t)->dtype());
}

AG_API int32_t ag_tensor_ndim(const ag_tensor* t) noexcept {
  if (t == nullptr || !api::impl(t)->handle_valid()) return -1;
  return api::impl(t)->ndim();
}

AG_API int64_t ag_tensor_numel(const ag_tensor* t) noexcept {
  if (t == nullptr || !api::impl(t)->handle_valid()) return -1;
  return api::impl(t)->numel();
}

AG_API ag_status ag_tensor_shape(const ag_tensor* t, int64_t* dims, int32_t capacity) noexcept {
  return api::call("ag_tensor_shape", [&] {
    const TensorImpl& x = api::tensor_arg(t, "t");
    if (dims == nullptr && capacity > 0) fail(AG_ERR_INVALID_ARGUMENT, "dims is NULL but capacity is ", capacity);
    if (capacity < x.ndim()) {
      fail(AG_ERR_BUFFER_TOO_SMALL, "capacity ", capacity, " is less than the tensor's ndim ", x.ndim());
    }
    for (int i = 0; i < x.ndim(); ++i) dims[i] = x.shape()[i];
  });
}

AG_API ag_status ag_tensor_context(ag_context** out, const ag_tensor* t) noexcept {
  return api::call("ag_tensor_context", [&] {
    api::check_out(out);
    Context* c = api::tensor_arg(t, "t").context();
    if (c->handle_acquire()) c->retain();  // the first handle again: it holds a reference
    *out = reinterpret_cast<ag_context*>(c);
  });
}

AG_API ag_status ag_tensor_copy_data(const ag_tensor* t, void* dst, size_t dst_bytes) noexcept {
  return api::call("ag_tensor_copy_data", [&] {
    const TensorImpl& x = api::tensor_arg(t, "t");
    if (dst_bytes < x.nbytes()) {
      fail(AG_ERR_BUFFER_TOO_SMALL, "dst_bytes ", dst_bytes, " is less than the ", x.nbytes(), " bytes of ",
           x.numel(), " ", dtype_name(x.dtype()), " elements");
    }
    if (x.numel() == 0) return;
    if (dst == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "dst is NULL");
    const Dims strides = contiguous_strides(x.shape());
    ops::copy_into(x.context(), x.dtype(), x.shape(), kernels::View{x.data(), &x.strides()}, x.dtype(),
                   static_cast<char*>(dst), strides);
  });
}

AG_API ag_status ag_tensor_copy_from(ag_tensor* t, const void* src, size_t src_bytes) noexcept {
  return api::call("ag_tensor_copy_from", [&] {
    TensorImpl& x = api::tensor_arg(t, "t");
    if (src_bytes != x.nbytes()) {
      fail(AG_ERR_INVALID_ARGUMENT, "src_bytes ", src_bytes, " differs from the ", x.nbytes(), " bytes of ",
           x.numel(), " ", dtype_name(x.dtype()), " elements");
    }
    if (x.numel() > 0 && src == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "src is NULL");
    if (x.storage()->read_only()) fail(AG_ERR_UNSUPPORTED, kReadOnlyMessage);
    if (!x.is_non_overlapping()) {
      fail(AG_ERR_UNSUPPORTED, "the tensor's elements alias each other (an expand view); write to its base");
    }
    if (x.numel() > 0) {
      // (bool bytes are normalized to 0/1 by the copy)
      const Dims strides = contiguous_strides(x.shape());
      ops::copy_into(x.context(), x.dtype(), x.shape(), kernels::View{static_cast<const char*>(src), &strides},
                     x.dtype(), x.data(), x.strides());
    }
    x.storage()->bump_version();
  });
}

AG_API ag_status ag_tensor_item(const ag_tensor* t, double* out) noexcept {
  return api::call("ag_tensor_item", [&] {
    api::check_out(out);
    const TensorImpl& x = api::tensor_arg(t, "t");
    if (x.numel() != 1) fail(AG_ERR_SHAPE, "needs a tensor with one element, got shape ", shape_str(x.shape()));
    *out = visit_dtype(x.dtype(), [&](auto z) { return static_cast<double>(*reinterpret_cast<decltype(z)*>(x.data())); });
  });
}

AG_API int64_t ag_tensor_version(const ag_tensor* t) noexcept {
  if (t == nullptr || !api::impl(t)->handle_valid()) return -1;
  return static_cast<int64_t>(api::impl(t)->storage()->version());
}

}  // extern "C"
