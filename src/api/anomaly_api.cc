// Anomaly mode and tag scopes.
#include "ag/anomaly.h"
#include "api/guard.h"
#include "autograd/tag_scope.h"

using namespace ag;

extern "C" {

AG_API ag_status ag_context_set_anomaly_mode(ag_context* ctx, int32_t enabled) noexcept {
  return api::call("ag_context_set_anomaly_mode", [&] { api::context_arg(ctx).set_anomaly_mode(enabled != 0); });
}

AG_API int32_t ag_context_anomaly_mode(const ag_context* ctx) noexcept {
  if (ctx == nullptr || !api::impl(ctx)->handle_valid()) return 0;
  return api::impl(ctx)->anomaly_mode() ? 1 : 0;
}

AG_API ag_status ag_tag_scope_push(const char* name) noexcept {
  return api::call("ag_tag_scope_push", [&] { push_tag_scope(name); });
}

AG_API ag_status ag_tag_scope_pop(void) noexcept {
  return api::call("ag_tag_scope_pop", [&] { pop_tag_scope(); });
}

AG_API const char* ag_tag_scope_current(void) noexcept { return current_tag(); }

}  // extern "C"
