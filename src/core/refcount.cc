#include "core/refcount.h"

#include <new>
#include <vector>

namespace ag {

namespace {
// Plain thread-locals (no destructors), so that releases that happen while
// the thread or process exits, after C++ thread-locals were destroyed, still
// work. The worklist is created on first use and kept for the thread's life;
// the guard frees it at thread exit (a release after that makes a new one).
using Worklist = std::vector<const RefCounted*>;
thread_local bool tl_draining = false;
thread_local Worklist* tl_pending = nullptr;

struct WorklistGuard {
  ~WorklistGuard() {
    delete tl_pending;
    tl_pending = nullptr;
  }
};
thread_local WorklistGuard tl_guard;
}  // namespace

void RefCounted::destroy(const RefCounted* obj) noexcept {
  if (tl_draining) {
    try {
      if (!tl_pending) {
        tl_pending = new Worklist();
        (void)&tl_guard;  // constructs the guard on this thread
      }
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
  if (Worklist* pending = tl_pending) {
    while (!pending->empty()) {
      const RefCounted* next = pending->back();
      pending->pop_back();
      delete next;
    }
  }
  tl_draining = false;
}

}  // namespace ag
