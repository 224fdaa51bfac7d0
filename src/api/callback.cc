#include "api/callback.h"

#include <algorithm>

namespace ag::api {

namespace {
thread_local std::string tl_callback_message;
}

void Lent::reset() {
  if (!h_) return;
  TensorImpl* p = impl(h_);
  h_ = nullptr;
  // The callback may have released it already (a misuse): then nothing is ours.
  if (!p->handle_valid()) return;
  // Lent while a scope was open, the handle was recorded there: take the
  // record back, as ag_tensor_release does, or the scope's end would
  // release the tensor's owner's reference.
  if (tl_innermost_scope) scope_forget(p);
  if (p->handle_release()) p->release();
}

Tensor take_returned(ag_tensor* h, const std::string& what) {
  TensorImpl* p = impl(h);
  if (!p->handle_valid()) fail(AG_ERR_CALLBACK, what, " returned a tensor handle that is not live (released?)");
  Tensor t = Tensor::share(p);
  if (tl_innermost_scope) scope_forget(p);  // ag, not the open scope, owns it now
  if (p->handle_release()) p->release();
  return t;
}

std::vector<Tensor> take_returned_all(std::vector<ag_tensor*>& hs, const std::string& what, bool allow_null) {
  // Dead handles are not ours; problems are noted by index, without
  // allocating, so that nothing is taken before the result has its room.
  const size_t n = hs.size();
  size_t first_null = n, first_dead = n;
  for (size_t i = 0; i < n; ++i) {
    if (hs[i] == nullptr) {
      first_null = std::min(first_null, i);
    } else if (!impl(hs[i])->handle_valid()) {
      first_dead = std::min(first_dead, i);
      hs[i] = nullptr;
    }
  }
  std::vector<Tensor> out;
  try {
    out.resize(n);
  } catch (...) {
    // Out of memory: the references the callback handed over still go.
    for (ag_tensor*& h : hs) {
      TensorImpl* p = h ? impl(h) : nullptr;
      h = nullptr;
      if (p && p->handle_release()) p->release();
    }
    throw;
  }
  for (size_t i = 0; i < n; ++i) {
    if (hs[i]) out[i] = take_returned(hs[i], what);
  }
  const size_t bad = std::min(allow_null ? n : first_null, first_dead);
  if (bad == first_dead && bad < n) fail(AG_ERR_CALLBACK, what, " returned a dead tensor handle in entry ", bad, " (released?)");
  if (bad < n) fail(AG_ERR_CALLBACK, what, " left entry ", bad, " NULL");
  return out;
}

void clear_callback_message() noexcept { tl_callback_message.clear(); }

void check_callback(ag_status st, const std::string& what, uint64_t errors_before) {
  if (st == AG_OK) return;
  std::string msg = std::move(tl_callback_message);
  tl_callback_message.clear();
  if (msg.empty() && error_count() != errors_before) msg = last_error();
  fail(AG_ERR_CALLBACK, what, " failed (", ag_status_name(st), ")", msg.empty() ? "" : ": ", msg);
}

}  // namespace ag::api

extern "C" AG_API void ag_set_callback_error(const char* message) noexcept {
  try {
    if (message) {
      ag::api::tl_callback_message = message;
    } else {
      ag::api::tl_callback_message.clear();
    }
  } catch (...) {
    // Out of memory: the status alone reaches the caller.
  }
}
