// Handle scopes (ag/scope.h).
#include <algorithm>
#include <memory>

#include "api/guard.h"

using namespace ag;

namespace ag::api {

namespace {

// Releases the handle references s still records (newest first).
void release_recorded(Scope& s) noexcept {
  for (auto it = s.handed_out.rbegin(); it != s.handed_out.rend(); ++it) {
    TensorImpl* p = it->get();
    if (p->handle_valid() && p->handle_release()) p->release();
  }
  s.handed_out.clear();
}

// Ends the scopes a thread left open when it exits.
struct OpenScopesAtExit {
  ~OpenScopesAtExit() {
    while (Scope* s = tl_innermost_scope) {
      tl_innermost_scope = s->parent;
      release_recorded(*s);
      delete s;
    }
  }
};

int32_t depth() noexcept {
  int32_t d = 0;
  for (const Scope* s = tl_innermost_scope; s; s = s->parent) ++d;
  return d;
}

}  // namespace

void scope_forget(TensorImpl* t) noexcept {
  for (Scope* s = tl_innermost_scope; s; s = s->parent) {
    auto& v = s->handed_out;
    for (auto it = v.rbegin(); it != v.rend(); ++it) {
      if (it->get() == t) {
        v.erase(std::next(it).base());
        return;
      }
    }
  }
}

}  // namespace ag::api

extern "C" {

AG_API ag_status ag_scope_begin(ag_scope** out) noexcept {
  return api::call("ag_scope_begin", [&] {
    api::check_out(out);
    static thread_local api::OpenScopesAtExit at_exit;
    (void)at_exit;
    auto s = std::make_unique<api::Scope>();
    s->parent = api::tl_innermost_scope;
    api::tl_innermost_scope = s.get();
    *out = reinterpret_cast<ag_scope*>(s.release());
  });
}

AG_API ag_status ag_scope_end(ag_scope* scope) noexcept {
  return api::call("ag_scope_end", [&] {
    if (scope == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "scope is NULL");
    // Compared by address only: an ended scope's memory is never read.
    const auto* wanted = reinterpret_cast<const api::Scope*>(scope);
    int32_t level = 0;
    for (const api::Scope* s = api::tl_innermost_scope; s && s != wanted; s = s->parent) ++level;
    const int32_t open = api::depth();
    if (level == open) {
      fail(AG_ERR_INVALID_ARGUMENT, "scope is not open on this thread (ended already, or opened on another thread)");
    }
    if (level > 0) {
      fail(AG_ERR_INVALID_ARGUMENT, "scope is not the innermost: ", level, " scope", level == 1 ? " is" : "s are",
           " open inside it; end those first");
    }
    api::Scope* s = api::tl_innermost_scope;
    api::tl_innermost_scope = s->parent;
    api::release_recorded(*s);
    delete s;
  });
}

AG_API ag_status ag_scope_keep(ag_tensor* t) noexcept {
  return api::call("ag_scope_keep", [&] {
    TensorImpl* p = &api::tensor_arg(t, "t");
    for (api::Scope* s = api::tl_innermost_scope; s; s = s->parent) {
      auto& v = s->handed_out;
      auto it = std::find_if(v.rbegin(), v.rend(), [p](const Tensor& e) { return e.get() == p; });
      if (it == v.rend()) continue;
      if (s->parent) s->parent->handed_out.reserve(s->parent->handed_out.size() + 1);
      Tensor moved = std::move(*it);
      v.erase(std::next(it).base());
      if (s->parent) s->parent->handed_out.push_back(std::move(moved));
      return;
    }
    fail(AG_ERR_INVALID_ARGUMENT, "tensor t is not recorded by an open scope of this thread",
         api::tl_innermost_scope ? "" : " (no scope is open)");
  });
}

AG_API int32_t ag_scope_depth(void) noexcept { return api::depth(); }

}  // extern "C"
