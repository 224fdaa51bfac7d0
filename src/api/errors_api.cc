// Errors, version and dtype queries.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "api/guard.h"

namespace ag::api {

namespace {
// The message lives in a per-thread heap buffer, not in a thread_local array:
// libag's static TLS block must stay small, or dlopen (Python's ctypes, Go,
// Julia) fails with "cannot allocate memory in static TLS block" once other
// libraries took the surplus. The buffer is made on the first error and freed
// at thread exit; an error recorded after that (from another thread-exit
// destructor) or when no buffer can be had reads as a fixed message.
constexpr size_t kMessageBytes = 1024;
constexpr const char* kNoBuffer = "[ag] (no memory to record the error message)";

struct ErrorBuffer {
  char* text = nullptr;
  bool exited = false;
  ~ErrorBuffer() {
    std::free(text);
    text = nullptr;
    exited = true;
  }
};
thread_local ErrorBuffer tl_last_error;
thread_local uint64_t tl_error_count = 0;
}  // namespace

void set_last_error(const char* fn, const std::string& message) noexcept {
  ErrorBuffer& b = tl_last_error;
  if (b.text == nullptr && !b.exited) {
    b.text = static_cast<char*>(std::malloc(kMessageBytes));
    if (b.text) b.text[0] = '\0';
  }
  if (b.text) std::snprintf(b.text, kMessageBytes, "[%s] %s", fn, message.c_str());
  ++tl_error_count;
}

uint64_t error_count() noexcept { return tl_error_count; }
const char* last_error() noexcept {
  const ErrorBuffer& b = tl_last_error;
  if (b.text) return b.text;
  return tl_error_count == 0 ? "" : kNoBuffer;
}

}  // namespace ag::api

using namespace ag;

extern "C" {

AG_API int32_t ag_version_number(void) noexcept { return AG_VERSION_NUMBER; }

#define AG_STR2(x) #x
#define AG_STR(x) AG_STR2(x)
AG_API const char* ag_version_string(void) noexcept {
  return AG_STR(AG_VERSION_MAJOR) "." AG_STR(AG_VERSION_MINOR) "." AG_STR(AG_VERSION_PATCH);
}

AG_API const char* ag_last_error_message(void) noexcept { return api::last_error(); }

AG_API const char* ag_status_name(ag_status status) noexcept {
  switch (status) {
    case AG_OK: return "AG_OK";
    case AG_ERR_INVALID_ARGUMENT: return "AG_ERR_INVALID_ARGUMENT";
    case AG_ERR_SHAPE: return "AG_ERR_SHAPE";
    case AG_ERR_DTYPE: return "AG_ERR_DTYPE";
    case AG_ERR_OUT_OF_MEMORY: return "AG_ERR_OUT_OF_MEMORY";
    case AG_ERR_CONTEXT: return "AG_ERR_CONTEXT";
    case AG_ERR_GRAPH: return "AG_ERR_GRAPH";
    case AG_ERR_VERSION: return "AG_ERR_VERSION";
    case AG_ERR_CALLBACK: return "AG_ERR_CALLBACK";
    case AG_ERR_BUFFER_TOO_SMALL: return "AG_ERR_BUFFER_TOO_SMALL";
    case AG_ERR_UNSUPPORTED: return "AG_ERR_UNSUPPORTED";
    case AG_ERR_INTERNAL: return "AG_ERR_INTERNAL";
    default: return "AG_ERR_UNKNOWN";
  }
}

AG_API size_t ag_dtype_size(ag_dtype dtype) noexcept {
  return dtype_valid(dtype) ? itemsize(static_cast<DType>(dtype)) : 0;
}

AG_API const char* ag_dtype_name(ag_dtype dtype) noexcept {
  return dtype_valid(dtype) ? dtype_name(static_cast<DType>(dtype)) : "invalid";
}

}  // extern "C"
