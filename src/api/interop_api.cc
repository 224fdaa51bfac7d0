// ag/interop.h: host memory wrapped without copies, data access, and DLPack
// export and import. Host memory lives in a Storage that holds the host's
// deleter (core/storage.h); every path that takes memory holds it in a
// LentMemory first, so that the deleter runs exactly once however the call
// ends.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "ag/interop.h"
#include "api/guard.h"
#include "ops/ops.h"

using namespace ag;

namespace {

// A tensor layout given by the host, checked.
struct HostLayout {
  Dims shape;
  Dims strides;
  size_t extent_bytes;  // from element (0, ..., 0) to the end of the last element addressed
};

HostLayout host_layout(DType dt, const int64_t* shape, const int64_t* strides, int32_t ndim) {
  HostLayout l;
  l.shape = checked_shape(shape, ndim, itemsize(dt));
  if (strides == nullptr) {
    l.strides = contiguous_strides(l.shape);
  } else {
    l.strides = Dims(strides, ndim);
    for (int i = 0; i < ndim; ++i) {
      if (l.strides[i] < 0) {
        fail(AG_ERR_UNSUPPORTED, "stride ", l.strides[i], " of dim ", i,
             " is negative; negative strides are not supported (pass a copy, or flip the array after import)");
      }
    }
  }
  l.extent_bytes = 0;
  if (numel_of(l.shape) == 0) return l;
  // Offset of the last element, then its end, in bytes: must fit in int64.
  int64_t last = 0;
  bool overflow = false;
  for (int i = 0; i < ndim; ++i) {
    int64_t step = 0;
    overflow |= __builtin_mul_overflow(l.shape[i] - 1, l.strides[i], &step);
    overflow |= __builtin_add_overflow(last, step, &last);
  }
  int64_t bytes = 0;
  overflow |= __builtin_add_overflow(last, int64_t{1}, &last);
  overflow |= __builtin_mul_overflow(last, static_cast<int64_t>(itemsize(dt)), &bytes);
  if (overflow) {
    fail(AG_ERR_OUT_OF_MEMORY, "shape ", shape_str(l.shape), " with strides ", shape_str(l.strides),
         " spans more bytes than an int64 can count");
  }
  l.extent_bytes = static_cast<size_t>(bytes);
  return l;
}

// A leaf over the host's memory at `data`. Aligned data is shared and the
// storage takes the deleter from `lent`; misaligned data is copied (strides
// kept) and `lent` keeps the deleter, which runs when the caller's call ends.
Tensor wrap_host(Context& c, DType dt, const HostLayout& l, void* data, LentMemory& lent, bool read_only) {
  const int64_t n = numel_of(l.shape);
  if (n > 0 && data == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "data is NULL but the tensor has ", n, " elements");
  Ref<Storage> s = Storage::wrap_or_copy(&c, data, l.extent_bytes, itemsize(dt), lent, read_only);
  return Tensor::adopt(new TensorImpl(std::move(s), dt, l.shape, l.strides, 0));
}

uint32_t known_buffer_flags() { return AG_BUFFER_READ_ONLY; }

// ---- DLPack ----

// The DLPack dtype of an ag dtype, and back.
ag_dlpack_dtype dlpack_dtype(DType dt) {
  switch (dt) {
    case DType::F32: return ag_dlpack_dtype{AG_DLPACK_CODE_FLOAT, 32, 1};
    case DType::F64: return ag_dlpack_dtype{AG_DLPACK_CODE_FLOAT, 64, 1};
    case DType::I64: return ag_dlpack_dtype{AG_DLPACK_CODE_INT, 64, 1};
    case DType::Bool: return ag_dlpack_dtype{AG_DLPACK_CODE_BOOL, 8, 1};
  }
  return ag_dlpack_dtype{0, 0, 0};
}

DType dtype_of_dlpack(ag_dlpack_dtype d) {
  if (d.lanes == 1) {
    if (d.code == AG_DLPACK_CODE_FLOAT && d.bits == 32) return DType::F32;
    if (d.code == AG_DLPACK_CODE_FLOAT && d.bits == 64) return DType::F64;
    if (d.code == AG_DLPACK_CODE_INT && d.bits == 64) return DType::I64;
    if (d.code == AG_DLPACK_CODE_BOOL && d.bits == 8) return DType::Bool;
  }
  fail(AG_ERR_DTYPE, "DLPack dtype (code ", static_cast<int>(d.code), ", bits ", static_cast<int>(d.bits),
       ", lanes ", static_cast<int>(d.lanes),
       ") is not one of ag's (float 32, float 64, int 64, bool 8, with 1 lane)");
}

// One heap block per export, from plain new rather than the context's
// allocator: it is metadata, not tensor data, and the consumer frees it on
// any thread, possibly after the context's last handle went. It holds the
// storage (data only: no tensor, hence no graph), which holds the context.
template <class Managed>
struct DLPackExport {
  Managed managed{};
  int64_t shape[kMaxDims];
  int64_t strides[kMaxDims];
  Ref<Storage> storage;

  static void release(Managed* self) { delete static_cast<DLPackExport*>(self->manager_ctx); }
};

template <class Managed>
Managed* export_dlpack(const TensorImpl& x) {
  auto* e = new DLPackExport<Managed>();
  e->storage = x.storage_ref();
  for (int i = 0; i < x.ndim(); ++i) {
    e->shape[i] = x.shape()[i];
    e->strides[i] = x.strides()[i];
  }
  ag_dlpack_tensor& t = e->managed.dl_tensor;
  t.data = x.data();
  t.device = ag_dlpack_device{AG_DLPACK_DEVICE_CPU, 0};
  t.ndim = x.ndim();
  t.dtype = dlpack_dtype(x.dtype());
  t.shape = e->shape;
  t.strides = e->strides;
  t.byte_offset = 0;
  e->managed.manager_ctx = e;
  e->managed.deleter = &DLPackExport<Managed>::release;
  return &e->managed;
}

// Calls a managed tensor's own deleter: the HostDeleter of an import.
template <class Managed>
void run_dlpack_deleter(void* managed, void*) {
  Managed* m = static_cast<Managed*>(managed);
  m->deleter(m);
}

template <class Managed>
HostDeleter dlpack_deleter(Managed* src) {
  HostDeleter d;
  if (src != nullptr && src->deleter != nullptr) {
    d.fn = &run_dlpack_deleter<Managed>;
    d.data = src;
  }
  return d;
}

Tensor import_dlpack(Context& c, const ag_dlpack_tensor& t, LentMemory& lent, bool read_only) {
  if (t.device.device_type != AG_DLPACK_DEVICE_CPU) {
    fail(AG_ERR_UNSUPPORTED, "DLPack device type ", t.device.device_type, " (device id ", t.device.device_id,
         ") is not supported: ag reads CPU memory only (device type ", AG_DLPACK_DEVICE_CPU, ")");
  }
  const DType dt = dtype_of_dlpack(t.dtype);
  const HostLayout l = host_layout(dt, t.shape, t.strides, t.ndim);
  // Offset by integer arithmetic: data may be NULL for an empty tensor.
  void* data = t.data == nullptr ? nullptr
                                 : reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(t.data) + t.byte_offset);
  return wrap_host(c, dt, l, data, lent, read_only);
}

}  // namespace

extern "C" {

AG_API ag_status ag_tensor_from_buffer_flags(ag_tensor** out, ag_context* ctx, ag_dtype dtype, const int64_t* shape,
                                             const int64_t* strides, int32_t ndim, void* data, uint32_t flags,
                                             ag_deleter_fn deleter, void* deleter_ctx) noexcept {
  return api::call("ag_tensor_from_buffer_flags", [&] {
    LentMemory lent(HostDeleter{deleter, data, deleter_ctx});
    api::check_out(out);
    Context& c = api::context_arg(ctx);
    const DType dt = api::dtype_arg(dtype);
    if ((flags & ~known_buffer_flags()) != 0) {
      fail(AG_ERR_INVALID_ARGUMENT, "flags ", flags, " has bits other than AG_BUFFER_READ_ONLY (1)");
    }
    const HostLayout l = host_layout(dt, shape, strides, ndim);
    *out = api::to_handle(wrap_host(c, dt, l, data, lent, (flags & AG_BUFFER_READ_ONLY) != 0));
  });
}

AG_API ag_status ag_tensor_from_buffer(ag_tensor** out, ag_context* ctx, ag_dtype dtype, const int64_t* shape,
                                       const int64_t* strides, int32_t ndim, void* data, ag_deleter_fn deleter,
                                       void* deleter_ctx) noexcept {
  return api::call("ag_tensor_from_buffer", [&] {
    LentMemory lent(HostDeleter{deleter, data, deleter_ctx});
    api::check_out(out);
    Context& c = api::context_arg(ctx);
    const DType dt = api::dtype_arg(dtype);
    const HostLayout l = host_layout(dt, shape, strides, ndim);
    *out = api::to_handle(wrap_host(c, dt, l, data, lent, false));
  });
}

AG_API const void* ag_tensor_data(const ag_tensor* t) noexcept {
  const void* p = nullptr;
  api::call("ag_tensor_data", [&] { p = api::tensor_arg(t, "t").data(); });
  return p;
}

AG_API ag_status ag_tensor_data_mut(void** out, ag_tensor* t) noexcept {
  return api::call("ag_tensor_data_mut", [&] {
    api::check_out(out);
    TensorImpl& x = api::tensor_arg(t, "t");
    if (x.storage()->read_only()) fail(AG_ERR_UNSUPPORTED, kReadOnlyMessage);
    if (!x.is_non_overlapping()) {
      fail(AG_ERR_UNSUPPORTED, "the tensor's elements alias each other (an expand view); write to its base");
    }
    x.storage()->bump_version();
    *out = x.data();
  });
}

AG_API ag_status ag_tensor_strides(const ag_tensor* t, int64_t* strides, int32_t capacity) noexcept {
  return api::call("ag_tensor_strides", [&] {
    const TensorImpl& x = api::tensor_arg(t, "t");
    if (strides == nullptr && capacity > 0) {
      fail(AG_ERR_INVALID_ARGUMENT, "strides is NULL but capacity is ", capacity);
    }
    if (capacity < x.ndim()) {
      fail(AG_ERR_BUFFER_TOO_SMALL, "capacity ", capacity, " is less than the tensor's ndim ", x.ndim());
    }
    for (int i = 0; i < x.ndim(); ++i) strides[i] = x.strides()[i];
  });
}

AG_API int32_t ag_tensor_is_contiguous(const ag_tensor* t) noexcept {
  if (t == nullptr || !api::impl(t)->handle_valid()) return -1;
  return api::impl(t)->is_contiguous() ? 1 : 0;
}

AG_API int32_t ag_tensor_is_read_only(const ag_tensor* t) noexcept {
  if (t == nullptr || !api::impl(t)->handle_valid()) return -1;
  return api::impl(t)->storage()->read_only() ? 1 : 0;
}

AG_API ag_status ag_tensor_contiguous(ag_tensor** out, const ag_tensor* t) noexcept {
  return api::call("ag_tensor_contiguous", [&] {
    api::check_out(out);
    Tensor x = api::tensor_ref(t, "t");
    // Already contiguous: the same handle again, as ag_tensor_retain.
    *out = api::to_handle(x->is_contiguous() ? std::move(x) : ops::clone(x));
  });
}

AG_API ag_status ag_tensor_to_dlpack(ag_dlpack_managed_tensor_versioned** out, const ag_tensor* t) noexcept {
  return api::call("ag_tensor_to_dlpack", [&] {
    api::check_out(out);
    const TensorImpl& x = api::tensor_arg(t, "t");
    ag_dlpack_managed_tensor_versioned* m = export_dlpack<ag_dlpack_managed_tensor_versioned>(x);
    m->version = ag_dlpack_version{AG_DLPACK_MAJOR_VERSION, AG_DLPACK_MINOR_VERSION};
    m->flags = x.storage()->read_only() ? AG_DLPACK_FLAG_READ_ONLY : 0;
    *out = m;
  });
}

AG_API ag_status ag_tensor_to_dlpack_legacy(ag_dlpack_managed_tensor** out, const ag_tensor* t) noexcept {
  return api::call("ag_tensor_to_dlpack_legacy", [&] {
    api::check_out(out);
    *out = export_dlpack<ag_dlpack_managed_tensor>(api::tensor_arg(t, "t"));
  });
}

AG_API ag_status ag_tensor_from_dlpack(ag_tensor** out, ag_context* ctx,
                                       ag_dlpack_managed_tensor_versioned* src) noexcept {
  return api::call("ag_tensor_from_dlpack", [&] {
    LentMemory lent(dlpack_deleter(src));
    api::check_out(out);
    if (src == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "src is NULL");
    Context& c = api::context_arg(ctx);
    if (src->version.major != AG_DLPACK_MAJOR_VERSION) {
      fail(AG_ERR_UNSUPPORTED, "DLPack version ", src->version.major, ".", src->version.minor,
           " is not supported: ag reads major version ", AG_DLPACK_MAJOR_VERSION);
    }
    const bool read_only = (src->flags & AG_DLPACK_FLAG_READ_ONLY) != 0;
    *out = api::to_handle(import_dlpack(c, src->dl_tensor, lent, read_only));
  });
}

AG_API ag_status ag_tensor_from_dlpack_legacy(ag_tensor** out, ag_context* ctx, ag_dlpack_managed_tensor* src) noexcept {
  return api::call("ag_tensor_from_dlpack_legacy", [&] {
    LentMemory lent(dlpack_deleter(src));
    api::check_out(out);
    if (src == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "src is NULL");
    Context& c = api::context_arg(ctx);
    *out = api::to_handle(import_dlpack(c, src->dl_tensor, lent, false));
  });
}

}  // extern "C"

// DLPack's published layout (dlpack.h 1.x) on 64-bit targets: the ag_dlpack_*
// structs must stay interchangeable with it.
static_assert(sizeof(void*) != 8 || (sizeof(ag_dlpack_tensor) == 48 && offsetof(ag_dlpack_tensor, data) == 0 &&
                                     offsetof(ag_dlpack_tensor, device) == 8 &&
                                     offsetof(ag_dlpack_tensor, ndim) == 16 &&
                                     offsetof(ag_dlpack_tensor, dtype) == 20 &&
                                     offsetof(ag_dlpack_tensor, shape) == 24 &&
                                     offsetof(ag_dlpack_tensor, strides) == 32 &&
                                     offsetof(ag_dlpack_tensor, byte_offset) == 40),
              "ag_dlpack_tensor differs from DLTensor");
static_assert(sizeof(void*) != 8 || (sizeof(ag_dlpack_managed_tensor) == 64 &&
                                     offsetof(ag_dlpack_managed_tensor, manager_ctx) == 48 &&
                                     offsetof(ag_dlpack_managed_tensor, deleter) == 56),
              "ag_dlpack_managed_tensor differs from DLManagedTensor");
static_assert(sizeof(void*) != 8 || (sizeof(ag_dlpack_managed_tensor_versioned) == 80 &&
                                     offsetof(ag_dlpack_managed_tensor_versioned, version) == 0 &&
                                     offsetof(ag_dlpack_managed_tensor_versioned, manager_ctx) == 8 &&
                                     offsetof(ag_dlpack_managed_tensor_versioned, deleter) == 16 &&
                                     offsetof(ag_dlpack_managed_tensor_versioned, flags) == 24 &&
                                     offsetof(ag_dlpack_managed_tensor_versioned, dl_tensor) == 32),
              "ag_dlpack_managed_tensor_versioned differs from DLManagedTensorVersioned");
