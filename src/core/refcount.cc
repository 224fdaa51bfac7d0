#include "core/refcount.h"

#include <new>
#include <vector>

namespace ag {

namespace {
// Plain thread-locals (no destructors), so that releases that happen while
// the thread or process exits, after C++ thread-locals were destroyed, still
// work; the worklist is created on first use and deleted when a drain ends.
thread_local bool tl_draining = false;
thread_local std::vector<const RefCounted*>* tl_pending = nullptr;
}  // namespace

void RefCounted::destroy(const RefCounted* obj) noexcept {
  if (tl_draining) {
    try {
      if (!tl_pending) tl_pending = new std::vector<const RefCounted*>();
      tl_pending->push_back(obj);
      return;
    } catch (const std::bad_alloc&) {
      // No room to defer: free it now (recursion is bounded by free memory).
      delete obj;
      return;
    }
  }
  tl_draining = true;
  delete obj;
  if (std::vector<const RefCounted*>* pending = tl_pending) {
    while (!pending->empty()) {
      const RefCounted* next = pending->back();
      pending->pop_back();
      delete next;
    }
    tl_pending = nullptr;
    delete pending;
  }
  tl_draining = false;
}

}  // namespace ag
