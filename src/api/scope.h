// Handle scopes: while a scope is open on a thread, every tensor handle
// reference handed out on that thread is also recorded in the innermost
// scope, which releases it when the scope ends unless it was kept.
#pragma once

#include <vector>

#include "core/tensor_impl.h"

namespace ag::api {

struct Scope {
  Scope* parent = nullptr;
  // One entry per handle reference handed out and not yet released by the
  // caller. The strong reference keeps the object alive, so a handle released
  // on another thread meanwhile is seen as dead (and skipped) at the end
  // instead of read after being freed.
  std::vector<Tensor> handed_out;
};

// Constant-initialised and inline: no init-function check on each access
// (every op's handle goes through it).
inline thread_local Scope* tl_innermost_scope = nullptr;

// Makes room for one more entry in the innermost scope, if any: called
// before a handle reference is created, so that running out of memory leaves
// no untracked reference behind. Grows geometrically: reserving one more
// each time would copy the whole record per handle. Throws std::bad_alloc.
inline Scope* scope_reserve() {
  Scope* s = tl_innermost_scope;
  if (s && s->handed_out.size() == s->handed_out.capacity()) {
    s->handed_out.reserve(s->handed_out.empty() ? 16 : 2 * s->handed_out.size());
  }
  return s;
}

// Records a handle reference of t in s (from scope_reserve; may be null).
inline void scope_track(Scope* s, TensorImpl* t) noexcept {
  if (s) s->handed_out.push_back(Tensor::share(t));
}

// Called when the caller releases a handle reference of t on this thread:
// the most recent record of t in the innermost scope holding one is dropped,
// so that reference is not released again when the scope ends.
void scope_forget(TensorImpl* t) noexcept;

}  // namespace ag::api
