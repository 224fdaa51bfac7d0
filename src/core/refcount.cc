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

void RefCounted::free_now(const RefCounted* obj) noexcept {
  if (obj->in_shared_block_) {
    obj->dispose_in_place();
  } else {
    delete obj;
  }
}

void RefCounted::destroy(const RefCounted* obj) noexcept {
  if (tl_draining) {
    obj->next_to_free_ = tl_pending;
    tl_pending = obj;
    return;
  }
  tl_draining = true;
  free_now(obj);
  while (const RefCounted* next = tl_pending) {
    tl_pending = next->next_to_free_;
    free_now(next);
  }
  tl_draining = false;
}

}  // namespace ag
