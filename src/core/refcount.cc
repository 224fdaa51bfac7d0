#include "core/refcount.h"

#include <new>
#include <vector>

namespace ag {

namespace {
struct Reaper {
  bool draining = false;
  std::vector<const RefCounted*> pending;
};
thread_local Reaper tl_reaper;
}  // namespace

void RefCounted::destroy(const RefCounted* obj) noexcept {
  Reaper& r = tl_reaper;
  if (r.draining) {
    try {
      r.pending.push_back(obj);
      return;
    } catch (const std::bad_alloc&) {
      // No room to defer: free it now (recursion is bounded by free memory).
      delete obj;
      return;
    }
  }
  r.draining = true;
  delete obj;
  while (!r.pending.empty()) {
    const RefCounted* next = r.pending.back();
    r.pending.pop_back();
    delete next;
  }
  r.draining = false;
}

}  // namespace ag
