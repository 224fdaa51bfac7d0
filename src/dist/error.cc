#include "error.h"

namespace ag_dist {

namespace {
thread_local std::string last_error;
}

void check_ag(ag_status status, const char* what) {
  if (status != AG_OK) fail(status, what, " failed: ", ag_last_error_message());
}

void set_last_error(const char* fn, const std::string& message) noexcept {
  try {
    last_error = std::string("[") + fn + "] " + message;
  } catch (...) {
    last_error.clear();  // out of memory: "" rather than a stale message
  }
}

}  // namespace ag_dist

extern "C" AG_DIST_API const char* ag_dist_last_error_message(void) noexcept { return ag_dist::last_error.c_str(); }
