// Tag scopes: a per-thread stack of names ("loss", "loss/normalize") that
// nodes record at creation as their provenance. The joined names are
// interned once per process, so a node keeps one pointer and recording with
// no scope open costs one thread-local read.
#pragma once

#include <cstddef>

namespace ag {

namespace detail {
extern thread_local const char* tl_current_tag;
}

// The innermost scope's full name ("outer/inner"), or null when none is open.
inline const char* current_tag() { return detail::tl_current_tag; }

// Opens a scope named `name` (non-empty) inside the current one. Throws ag::Error.
void push_tag_scope(const char* name);
// Closes the innermost scope; AG_ERR_INVALID_ARGUMENT when none is open.
void pop_tag_scope();
// Scopes open on the calling thread.
size_t tag_scope_depth();

}  // namespace ag
