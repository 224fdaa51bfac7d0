// Calling user callbacks from inside ag: lending tensors to them as handles,
// taking over the references they hand back, and turning a failing status
// (with the message the callback set) into an AG_ERR_CALLBACK error.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "api/guard.h"

namespace ag::api {

// A handle reference to t lent to a callback for the duration of a call.
class Lent {
 public:
  Lent() = default;
  explicit Lent(const Tensor& t) : h_(t ? to_handle(t) : nullptr) {}
  ~Lent() { reset(); }
  Lent(const Lent&) = delete;
  Lent& operator=(const Lent&) = delete;
  Lent(Lent&& o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  ag_tensor* get() const { return h_; }
  void reset();

 private:
  ag_tensor* h_ = nullptr;
};

// Takes over the handle reference a callback returned in an out-parameter.
// Throws AG_ERR_CALLBACK (naming `what`) for a handle that is not live.
Tensor take_returned(ag_tensor* h, const std::string& what);

// Takes over the handles a callback wrote into `hs`; all or nothing, so a
// bad entry leaks none of the good ones. A NULL entry is AG_ERR_CALLBACK
// unless allow_null; dead handles are dropped from `hs` and are AG_ERR_CALLBACK.
std::vector<Tensor> take_returned_all(std::vector<ag_tensor*>& hs, const std::string& what, bool allow_null);

// Clears the callback message of this thread; call before invoking a callback.
void clear_callback_message() noexcept;

// Throws AG_ERR_CALLBACK "<what> failed (<status>): <message>" when st is not
// AG_OK. The message is the one the callback set, else the last error of an
// ag call that failed inside the callback (errors_before = error_count()
// before it ran).
void check_callback(ag_status st, const std::string& what, uint64_t errors_before);

// Runs fn(); an exception escaping a (C++) callback becomes AG_ERR_CALLBACK.
template <class F>
ag_status invoke_callback(const std::string& what, F&& fn) {
  clear_callback_message();
  const uint64_t errors_before = error_count();
  ag_status st;
  try {
    st = fn();
  } catch (const Error&) {
    throw;
  } catch (...) {
    fail(AG_ERR_CALLBACK, what, " threw an exception; callbacks must report failure through their status");
  }
  check_callback(st, what, errors_before);
  return st;
}

}  // namespace ag::api
