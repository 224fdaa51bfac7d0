// C entry points of the random generator state and the random ops of family
// CUSTOM (ag/random.h); rand, randn, uniform, normal are families (ops_api.cc).
#include "api/guard.h"
#include "ops/ops.h"

using namespace ag;

static_assert(Context::kDefaultSeed == AG_RNG_DEFAULT_SEED, "the documented default seed");

namespace {

// The body shared by the shims of the ops that draw a new (dtype, shape)
// tensor from ctx's generator.
template <class Draw>
ag_status draw_call(const char* fn, ag_tensor** out, ag_context* ctx, ag_dtype dtype, const int64_t* shape,
                    int32_t ndim, Draw draw) noexcept {
  return api::call(fn, [&] {
    api::check_out(out);
    Context& c = api::context_arg(ctx);
    const api::Spec s = api::spec_arg(dtype, shape, ndim);
    *out = api::to_handle(draw(&c, s.dtype, s.shape));
  });
}

}  // namespace

extern "C" {

AG_API ag_status ag_context_manual_seed(ag_context* ctx, uint64_t seed) noexcept {
  return api::call("ag_context_manual_seed", [&] { api::context_arg(ctx).set_rng_state({seed, 0}); });
}

AG_API ag_status ag_context_seed(const ag_context* ctx, uint64_t* seed) noexcept {
  return api::call("ag_context_seed", [&] {
    Context& c = api::context_arg(ctx);
    if (seed == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "seed is NULL");
    *seed = c.rng_state().seed;
  });
}

AG_API ag_status ag_context_rng_state(const ag_context* ctx, uint64_t* seed, uint64_t* offset) noexcept {
  return api::call("ag_context_rng_state", [&] {
    Context& c = api::context_arg(ctx);
    if (seed == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "seed is NULL");
    if (offset == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "offset is NULL");
    const Context::RngState s = c.rng_state();
    *seed = s.seed;
    *offset = s.offset;
  });
}

AG_API ag_status ag_context_set_rng_state(ag_context* ctx, uint64_t seed, uint64_t offset) noexcept {
  return api::call("ag_context_set_rng_state", [&] { api::context_arg(ctx).set_rng_state({seed, offset}); });
}

AG_API ag_status ag_op_bernoulli(ag_tensor** out, const ag_tensor* p) noexcept {
  return api::call("ag_op_bernoulli", [&] {
    api::check_out(out);
    *out = api::to_handle(ops::bernoulli(api::Borrowed(p, "p")));
  });
}

AG_API ag_status ag_op_bernoulli_scalar(ag_tensor** out, ag_context* ctx, ag_dtype dtype, const int64_t* shape,
                                        int32_t ndim, double p) noexcept {
  return draw_call("ag_op_bernoulli_scalar", out, ctx, dtype, shape, ndim,
                   [&](Context* c, DType dt, const Dims& sh) { return ops::bernoulli_scalar(c, dt, sh, p); });
}

AG_API ag_status ag_op_randint(ag_tensor** out, ag_context* ctx, const int64_t* shape, int32_t ndim, int64_t low,
                               int64_t high) noexcept {
  return api::call("ag_op_randint", [&] {
    api::check_out(out);
    Context& c = api::context_arg(ctx);
    *out = api::to_handle(ops::randint(&c, checked_shape(shape, ndim, sizeof(int64_t)), low, high));
  });
}

AG_API ag_status ag_op_dropout(ag_tensor** out, const ag_tensor* x, double p, int32_t training) noexcept {
  return api::call("ag_op_dropout", [&] {
    api::check_out(out);
    *out = api::to_handle(ops::dropout(api::Borrowed(x, "x"), p, training != 0));
  });
}

}  // extern "C"
