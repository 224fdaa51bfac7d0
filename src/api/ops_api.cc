// The C entry points of the ops, one per row of ops.def, expanded from the
// family's signature; and the op name table.
#include "api/guard.h"
#include "ops/ops.h"

using namespace ag;

#define AG_SHIM_UNARY(name)                                                          \
  AG_API ag_status ag_op_##name(ag_tensor** out, const ag_tensor* x) noexcept {      \
    return api::call("ag_op_" #name, [&] {                                           \
      api::check_out(out);                                                           \
      *out = api::to_handle(ops::name(api::Borrowed(x, "x")));                     \
    });                                                                              \
  }
#define AG_SHIM_REDUCE_ALL(name) AG_SHIM_UNARY(name)
#define AG_SHIM_UNARY_SCALAR(name)                                                             \
  AG_API ag_status ag_op_##name(ag_tensor** out, const ag_tensor* x, double attr) noexcept {   \
    return api::call("ag_op_" #name, [&] {                                                     \
      api::check_out(out);                                                                     \
      *out = api::to_handle(ops::name(api::Borrowed(x, "x"), attr));                         \
    });                                                                                        \
  }
#define AG_SHIM_UNARY_SCALAR2(name)                                                                 \
  AG_API ag_status ag_op_##name(ag_tensor** out, const ag_tensor* x, double attr, double attr2) noexcept {  \
    return api::call("ag_op_" #name, [&] {                                                                 \
      api::check_out(out);                                                                                 \
      *out = api::to_handle(ops::name(api::Borrowed(x, "x"), attr, attr2));                                \
    });                                                                                                    \
  }
#define AG_SHIM_COMPARE(name) AG_SHIM_BINARY(name)
#define AG_SHIM_BINARY(name)                                                                          \
  AG_API ag_status ag_op_##name(ag_tensor** out, const ag_tensor* a, const ag_tensor* b) noexcept {   \
    return api::call("ag_op_" #name, [&] {                                                            \
      api::check_out(out);                                                                            \
      api::Borrowed ta(a, "a"), tb(b, "b");                                                              \
      *out = api::to_handle(ops::name(ta, tb));                                                       \
    });                                                                                               \
  }
#define AG_SHIM_SHAPE(name)                                                                         \
  AG_API ag_status ag_op_##name(ag_tensor** out, const ag_tensor* x, const int64_t* shape,          \
                                int32_t ndim) noexcept {                                            \
    return api::call("ag_op_" #name, [&] {                                                          \
      api::check_out(out);                                                                          \
      api::Borrowed tx(x, "x");                                                                     \
      *out = api::to_handle(ops::name(tx, api::dims_arg(shape, ndim, "shape", "ndim")));                                 \
    });                                                                                             \
  }
#define AG_SHIM_DTYPE(name)                                                                         \
  AG_API ag_status ag_op_##name(ag_tensor** out, const ag_tensor* x, ag_dtype dtype) noexcept {     \
    return api::call("ag_op_" #name, [&] {                                                          \
      api::check_out(out);                                                                          \
      api::Borrowed tx(x, "x");                                                                     \
      *out = api::to_handle(ops::name(tx, api::dtype_arg(dtype)));                                  \
    });                                                                                             \
  }

#define AG_SHIM_DIM(name)                                                                       \
  AG_API ag_status ag_op_##name(ag_tensor** out, const ag_tensor* x, int64_t dim) noexcept {     \
    return api::call("ag_op_" #name, [&] {                                                      \
      api::check_out(out);                                                                      \
      *out = api::to_handle(ops::name(api::Borrowed(x, "x"), dim));                             \
    });                                                                                         \
  }
#define AG_SHIM_DIMS(name)                                                                      \
  AG_API ag_status ag_op_##name(ag_tensor** out, const ag_tensor* x, const int64_t* dims,       \
                                int32_t ndims, int32_t keepdim) noexcept {                      \
    return api::call("ag_op_" #name, [&] {                                                      \
      api::check_out(out);                                                                      \
      api::Borrowed tx(x, "x");                                                                 \
      *out = api::to_handle(ops::name(tx, api::dims_arg(dims, ndims), keepdim != 0));           \
    });                                                                                         \
  }

// A CUSTOM op writes its shim by hand, in ops_<area>_api.cc.
#define AG_SHIM_CUSTOM(name)

extern "C" {

#define AG_OP(name, family) AG_SHIM_##family(name)
#include "ops/ops.def"
#undef AG_OP

namespace {
const char* const kOpNames[] = {
#define AG_OP(name, family) #name,
#include "ops/ops.def"
#undef AG_OP
};
}  // namespace

AG_API int32_t ag_op_count(void) noexcept { return static_cast<int32_t>(sizeof(kOpNames) / sizeof(kOpNames[0])); }

AG_API const char* ag_op_name(int32_t index) noexcept {
  return index >= 0 && index < ag_op_count() ? kOpNames[index] : nullptr;
}

}  // extern "C"
