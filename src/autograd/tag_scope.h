// Tag scopes: a per-thread stack of names ("loss", "loss/normalize") that
// nodes record at creation as their provenance. The joined names are
// interned once per process, so a node keeps one pointer and recording with
// no scope open costs one thread-local read.
#pragma once

#include <cstddef>

namespace ag {

namespace detail {
// Constant-initialised and inline: no init-function check on each op.
inline thread_local const char* tl_current_tag = nullptr;
}

// The innermost scope's full name ("outer/inner"), or null when none is open.
inline const char* current_tag() { return detail::tl_current_tag; }

// Opens a scope named `name` (non-empty) inside the current one. Throws ag::Error.
void push_tag_scope(const char* name);
// Closes the innermost scope; AG_ERR_INVALID_ARGUMENT when none is open.
void pop_tag_scope();
// Scopes open on the calling thread.
size_t tag_scope_depth();

// The interned tag "<parent>/<name>" (or "<name>" for a null parent). A
// per-thread cache keyed by the two pointers makes repeated calls with the
// same parent and a string literal allocate nothing.
const char* composite_tag(const char* parent, const char* name);

// Names the nodes that a composite op (one made of other ops, such as
// mse_loss) records, by its user-facing name: for its lifetime they carry the
// tag "<current tag>/<name>", which graph exports and anomaly messages show.
// `name` must be a string literal. No allocation on the recording path after
// the first call per thread.
class CompositeScope {
 public:
  explicit CompositeScope(const char* name) : saved_(detail::tl_current_tag) {
    detail::tl_current_tag = composite_tag(saved_, name);
  }
  ~CompositeScope() { detail::tl_current_tag = saved_; }
  CompositeScope(const CompositeScope&) = delete;
  CompositeScope& operator=(const CompositeScope&) = delete;

 private:
  const char* saved_;
};

}  // namespace ag
