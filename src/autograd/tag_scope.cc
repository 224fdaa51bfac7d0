#include "autograd/tag_scope.h"

#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/error.h"

namespace ag {

namespace {

// Every full scope name ever opened; node-based, so the strings never move.
// Names stay for the life of the process: one entry per distinct name.
const char* intern(std::string s) {
  static std::mutex mu;
  // Never freed: nodes may outlive static destruction.
  static auto* table = new std::unordered_set<std::string>();
  std::lock_guard<std::mutex> lock(mu);
  return table->insert(std::move(s)).first->c_str();
}

// The enclosing scopes' names, innermost last (the current one is tl_current_tag).
thread_local std::vector<const char*> tl_outer;

}  // namespace

void push_tag_scope(const char* name) {
  if (name == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "name is NULL");
  if (name[0] == '\0') fail(AG_ERR_INVALID_ARGUMENT, "name is empty");
  const char* cur = detail::tl_current_tag;
  const char* full = intern(cur ? std::string(cur) + "/" + name : std::string(name));
  tl_outer.push_back(cur);
  detail::tl_current_tag = full;
}

void pop_tag_scope() {
  if (tl_outer.empty()) fail(AG_ERR_INVALID_ARGUMENT, "no tag scope is open on this thread");
  detail::tl_current_tag = tl_outer.back();
  tl_outer.pop_back();
}

size_t tag_scope_depth() { return tl_outer.size(); }

const char* composite_tag(const char* parent, const char* name) {
  // Direct-mapped by the name's address: a composite op called in a loop, in
  // the same user scope, finds its entry at once.
  struct Entry {
    const char* parent;
    const char* name;
    const char* full;
  };
  // On the heap: libag's static TLS block must stay small (see errors_api.cc).
  thread_local std::unique_ptr<Entry[]> cache;
  if (!cache) {
    cache.reset(new (std::nothrow) Entry[16]());
    if (!cache) return intern(parent ? std::string(parent) + "/" + name : std::string(name));
  }
  Entry& e = cache[(reinterpret_cast<uintptr_t>(name) >> 3) % 16];
  if (e.full == nullptr || e.parent != parent || e.name != name) {
    e = Entry{parent, name, intern(parent ? std::string(parent) + "/" + name : std::string(name))};
  }
  return e.full;
}

}  // namespace ag
