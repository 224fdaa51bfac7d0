// The C boundary: every exported function runs its body through call(),
// which turns exceptions into a status and the thread's last error message,
// and converts between handles and internal objects.
#pragma once

#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "ag/ag.h"
#include "api/scope.h"
#include "core/context.h"
#include "core/error.h"
#include "core/profiler.h"
#include "core/recorder.h"
#include "core/tensor_impl.h"

namespace ag::api {

// Records "[fn] message" as this thread's last error.
void set_last_error(const char* fn, const std::string& message) noexcept;
// How many errors this thread recorded so far, and the last one.
uint64_t error_count() noexcept;
const char* last_error() noexcept;

// A C call while the calling thread records for replay (ag/replay.h): the
// outermost call is refused if replay could not repeat it (random draws,
// in-place writes, host callbacks), and what an op computed is checked to be
// replayable when it returns. One relaxed load when no thread records.
class RecordedCall {
 public:
  explicit RecordedCall(const char* fn) : r_(recording()) {
    if (r_) [[unlikely]] enter(fn);
  }
  ~RecordedCall() {
    if (r_) --r_->call_depth;
  }
  RecordedCall(const RecordedCall&) = delete;
  RecordedCall& operator=(const RecordedCall&) = delete;
  void done(const char* fn) {
    if (r_) [[unlikely]] leave(fn);
  }

 private:
  void enter(const char* fn);  // throws ag::Error (then the call is not entered)
  void leave(const char* fn);  // throws ag::Error
  Recorder* r_;
};

template <class F>
ag_status call(const char* fn, F&& body) noexcept {
  CallTimer timer(fn);  // ag/profile.h; one relaxed load when no profiler runs
  try {
    RecordedCall recorded(fn);
    body();
    recorded.done(fn);
    return AG_OK;
  } catch (const Error& e) {
    set_last_error(fn, e.message());
    return e.code();
  } catch (const std::bad_alloc&) {
    set_last_error(fn, "out of memory");
    return AG_ERR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    set_last_error(fn, std::string("internal error: ") + e.what());
    return AG_ERR_INTERNAL;
  } catch (...) {
    set_last_error(fn, "internal error: unknown exception");
    return AG_ERR_INTERNAL;
  }
}

inline void check_out(const void* out) {
  if (out == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "the output pointer is NULL");
}

inline TensorImpl* impl(const ag_tensor* t) {
  return reinterpret_cast<TensorImpl*>(const_cast<ag_tensor*>(t));
}
inline Context* impl(const ag_context* c) { return reinterpret_cast<Context*>(const_cast<ag_context*>(c)); }

// A live tensor handle; `what` names the argument in the message.
inline TensorImpl& tensor_arg(const ag_tensor* t, const char* what) {
  // Mostly the NULL out-value of an earlier call whose failed status was ignored.
  if (t == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "input ", what, " is NULL (missing: did an earlier call fail?)");
  TensorImpl* p = impl(t);
  if (!p->handle_valid()) fail(AG_ERR_INVALID_ARGUMENT, "tensor ", what, " is not a live handle (already released?)");
  return *p;
}
// A Tensor that borrows the caller's handle reference for the duration of a
// call, without touching the reference count.
class Borrowed {
 public:
  Borrowed(const ag_tensor* t, const char* what) : t_(Tensor::adopt(&tensor_arg(t, what))) {}
  ~Borrowed() { t_.detach(); }
  Borrowed(const Borrowed&) = delete;
  Borrowed& operator=(const Borrowed&) = delete;
  operator const Tensor&() const { return t_; }
  const Tensor& get() const { return t_; }
  TensorImpl* operator->() const { return t_.get(); }
  TensorImpl& operator*() const { return *t_; }

 private:
  Tensor t_;
};

inline Tensor tensor_ref(const ag_tensor* t, const char* what) { return Tensor::share(&tensor_arg(t, what)); }

// An optional tensor argument: NULL gives an empty Tensor.
inline Tensor optional_tensor(const ag_tensor* t, const char* what) { return t ? tensor_ref(t, what) : Tensor(); }

inline Context& context_arg(const ag_context* c) {
  if (c == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "context is NULL (missing: did an earlier call fail?)");
  Context* p = impl(c);
  if (!p->handle_valid()) fail(AG_ERR_INVALID_ARGUMENT, "context is not a live handle (already released?)");
  return *p;
}

// Hands t to the caller as a new handle reference (recorded in the thread's
// innermost handle scope, if one is open).
// Throws (before any handle exists) if the op being recorded for replay
// computed something replay would not repeat.
void check_recorded_result(Recorder& r);

ag_tensor* to_handle_general(Tensor t);
// The common case inline in every op's entry point (a call frame of its
// own cost about as much as its body): a fresh result, nothing recording,
// profiling or keeping scope.
inline ag_tensor* to_handle(Tensor t) {
  TensorImpl* p = t.get();
  if (g_recording_threads.load(std::memory_order_relaxed) == 0 && !profiling_anywhere() &&
      tl_innermost_scope == nullptr && p->sole_owner()) {
    if (p->handle_acquire_sole()) t.detach();  // the caller's side keeps this reference
    return reinterpret_cast<ag_tensor*>(p);
  }
  return to_handle_general(std::move(t));
}

// The gradient seed of root r: 1 for a one-element r when `given` is NULL,
// else `given`, checked against r (context, dtype, shape). `what` and
// `root_name` name both in messages; `kind` says what r is ("a root").
Tensor seed_for(const Tensor& r, const ag_tensor* given, const char* what, const char* root_name,
                const char* kind = "a root");

// The buffer protocol of ag_graph_export: *needed = bytes with the NUL;
// text and NUL copied when they fit, else AG_ERR_BUFFER_TOO_SMALL. `what`
// names the text in the message.
inline void copy_text(const std::string& text, char* buf, size_t capacity, size_t* needed, const char* what) {
  if (needed == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "needed is NULL");
  if (buf == nullptr && capacity > 0) fail(AG_ERR_INVALID_ARGUMENT, "buf is NULL but capacity is ", capacity);
  *needed = text.size() + 1;
  if (capacity < text.size() + 1) {
    fail(AG_ERR_BUFFER_TOO_SMALL, what, " needs ", text.size() + 1, " bytes (with the NUL), capacity is ", capacity);
  }
  std::memcpy(buf, text.c_str(), text.size() + 1);
}

inline DType dtype_arg(ag_dtype d) {
  if (!dtype_valid(d)) fail(AG_ERR_DTYPE, "dtype ", d, " is not one of AG_F32, AG_F64, AG_I64, AG_BOOL");
  return static_cast<DType>(d);
}

// A list of 0..AG_MAX_DIMS sizes or dims passed as pointer + count; `what`
// and `count` are the C parameter names, for the message. The op checks the
// values themselves.
inline Dims dims_arg(const int64_t* dims, int32_t n, const char* what = "dims", const char* count = "ndims") {
  if (n < 0 || n > kMaxDims) fail(AG_ERR_INVALID_ARGUMENT, count, " ", n, " is outside 0..", kMaxDims);
  if (n > 0 && dims == nullptr) fail(AG_ERR_INVALID_ARGUMENT, what, " is NULL but ", count, " is ", n);
  return Dims(dims, n);
}

// The tensors of a caller's array of n >= 1 handles, referenced for the call.
inline std::vector<Tensor> tensors_arg(const ag_tensor* const* xs, int32_t n) {
  if (n <= 0) fail(AG_ERR_INVALID_ARGUMENT, "expects at least one tensor, got n = ", n);
  if (xs == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "xs is NULL but n is ", n);
  std::vector<Tensor> out;
  for (int32_t i = 0; i < n; ++i) {
    const std::string what = "xs[" + std::to_string(i) + "]";
    out.push_back(tensor_ref(xs[i], what.c_str()));
  }
  return out;
}

// The dtype and shape of a new tensor, the shape checked for that dtype's item size.
struct Spec {
  DType dtype;
  Dims shape;
};
inline Spec spec_arg(ag_dtype dtype, const int64_t* shape, int32_t ndim) {
  const DType dt = dtype_arg(dtype);
  return {dt, checked_shape(shape, ndim, itemsize(dt))};
}

// Reads a caller's option struct that starts with uint32_t struct_size into
// `opts` (which holds the defaults): only the bytes the caller knows, and
// bytes beyond the ones this library knows must be zero.
template <class T>
void read_options(const T* user, T& opts) {
  if (user == nullptr) return;
  const uint32_t size = user->struct_size;
  if (size < sizeof(uint32_t)) {
    fail(AG_ERR_INVALID_ARGUMENT, "struct_size ", size, " is too small; set it to sizeof the options struct");
  }
  const unsigned char* bytes = reinterpret_cast<const unsigned char*>(user);
  for (uint32_t i = sizeof(T); i < size; ++i) {
    if (bytes[i] != 0) {
      fail(AG_ERR_INVALID_ARGUMENT, "struct_size ", size, " is larger than this library knows (", sizeof(T),
           ") and the unknown fields are not zero");
    }
  }
  std::memcpy(&opts, user, size < sizeof(T) ? size : sizeof(T));
  opts.struct_size = sizeof(T);
}

}  // namespace ag::api
