// ag_struct_size, ag_struct_field_offset, ag_constant_value: the layouts and
// constants of this build, for bindings generated from ag-api.json to check
// against the library they loaded. The tables come from the same script that
// writes ag-api.json, and hold sizeof/offsetof/the macros themselves, so
// they are the compiler's word, not the script's.
#include <cstddef>
#include <cstring>

#include "api/guard.h"

namespace {

struct ag_struct_entry {
  const char* name;
  size_t size;
};
struct ag_field_entry {
  const char* name;
  const char* field;
  size_t offset;
};
struct ag_constant_entry {
  const char* name;
  int64_t value;
};

#include "api_tables.h"

bool same(const char* a, const char* b) { return std::strcmp(a, b) == 0; }

}  // namespace

extern "C" {

AG_API size_t ag_struct_size(const char* name) noexcept {
  if (name == nullptr) return 0;
  for (const auto& s : kStructs) {
    if (same(s.name, name)) return s.size;
  }
  return 0;
}

AG_API int64_t ag_struct_field_offset(const char* name, const char* field) noexcept {
  if (name == nullptr || field == nullptr) return -1;
  for (const auto& f : kFields) {
    if (same(f.name, name) && same(f.field, field)) return static_cast<int64_t>(f.offset);
  }
  return -1;
}

AG_API ag_status ag_constant_value(const char* name, int64_t* out) noexcept {
  return ag::api::call("ag_constant_value", [&] {
    ag::api::check_out(out);
    if (name == nullptr) ag::fail(AG_ERR_INVALID_ARGUMENT, "name is NULL");
    for (const auto& c : kConstants) {
      if (same(c.name, name)) {
        *out = c.value;
        return;
      }
    }
    ag::fail(AG_ERR_INVALID_ARGUMENT, "no constant named '", name, "'");
  });
}

}  // extern "C"
