// ag_context_*.
#include "api/guard.h"

using namespace ag;

extern "C" {

AG_API ag_status ag_context_options_init(ag_context_options* opts) noexcept {
  return api::call("ag_context_options_init", [&] {
    api::check_out(opts);
    *opts = ag_context_options AG_CONTEXT_OPTIONS_INIT;
  });
}

AG_API ag_status ag_context_create(ag_context** out, const ag_context_options* user_opts) noexcept {
  return api::call("ag_context_create", [&] {
    api::check_out(out);
    ag_context_options opts = AG_CONTEXT_OPTIONS_INIT;
    api::read_options(user_opts, opts);
    if (opts.num_threads < 0) fail(AG_ERR_INVALID_ARGUMENT, "num_threads ", opts.num_threads, " is negative");
    Context* c = new Context(opts.num_threads);
    c->handle_acquire();  // the caller's side keeps the reference from `new`
    *out = reinterpret_cast<ag_context*>(c);
  });
}

AG_API ag_context* ag_context_retain(ag_context* ctx) noexcept {
  if (ctx == nullptr) return nullptr;
  Context* c = api::impl(ctx);
  if (!c->handle_valid()) {
    api::set_last_error("ag_context_retain", "context is not a live handle (already released?)");
    return ctx;
  }
  if (c->handle_acquire()) c->retain();
  return ctx;
}

AG_API void ag_context_release(ag_context* ctx) noexcept {
  if (ctx == nullptr) return;
  Context* c = api::impl(ctx);
  if (!c->handle_valid()) {
    api::set_last_error("ag_context_release", "context is not a live handle (released twice?); ignored");
    return;
  }
  if (c->handle_release()) c->release();
}

AG_API int32_t ag_context_num_threads(const ag_context* ctx) noexcept {
  if (ctx == nullptr || !api::impl(ctx)->handle_valid()) return 0;
  return api::impl(ctx)->num_threads();
}

}  // extern "C"
