#include "core/refcount.h"

namespace ag {

namespace {
// Plain thread-locals (no destructors), so that releases that happen while
// the thread or process exits still work. The objects waiting to be freed
// are linked through their own next_to_free_ field: deferring costs no
// allocation.
thread_local bool tl_draining = false;
thread_local const RefCounted* tl_pending = nullptr;
}  // namespace

void RefCounted::destroy(const RefCounted* obj) noexcept {
  if (tl_draining) {
    obj->next_to_free_ = tl_pending;
    tl_pending = obj;
    return;
  }
  tl_draining = true;
  delete obj;
  while (const RefCounted* next = tl_pending) {
    tl_pending = next->next_to_free_;
    delete next;
  }
  tl_draining = false;
}

}  // namespace ag
