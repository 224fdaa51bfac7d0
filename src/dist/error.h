// Errors of libag_dist: the same shape as libag's (a status and "[function]
// facts" in a thread-local slot), kept in libag_dist's own slot because
// libag has no public setter for its own.
#pragma once

#include <new>
#include <sstream>
#include <string>
#include <utility>

#include "ag/dist.h"

namespace ag_dist {

class Error {
 public:
  Error(ag_status code, std::string message) : code_(code), message_(std::move(message)) {}
  ag_status code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  ag_status code_;
  std::string message_;
};

template <class... Parts>
[[noreturn]] void fail(ag_status code, const Parts&... parts) {
  std::ostringstream s;
  (s << ... << parts);
  throw Error(code, s.str());
}

// A libag call made on the caller's behalf: its failure is ours, with
// libag's status and message.
void check_ag(ag_status status, const char* what);

void set_last_error(const char* fn, const std::string& message) noexcept;

template <class F>
ag_status call(const char* fn, F&& body) noexcept {
  try {
    body();
    return AG_OK;
  } catch (const Error& e) {
    set_last_error(fn, e.message());
    return e.code();
  } catch (const std::bad_alloc&) {
    set_last_error(fn, "out of memory");
    return AG_ERR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    set_last_error(fn, std::string("internal error: ") + e.what());
    return AG_ERR_INTERNAL;
  } catch (...) {
    set_last_error(fn, "internal error: unknown exception");
    return AG_ERR_INTERNAL;
  }
}

}  // namespace ag_dist
