// The C entry points of the family ops, one per AG_OP row of ops.def,
// expanded from the family's signature (ops/gen_op_lists.py lists where each
// ag_op_<name> comes from in src/ops/OPS.md); and the op name table.
#include "api/guard.h"
#include "ops/ops.h"

using namespace ag;

// One C entry: the checks and the call (the variadic part), inside api::call.
#define AG_SHIM(name, params, ...) \
  AG_API ag_status ag_op_##name params noexcept { return api::call("ag_op_" #name, [&] { __VA_ARGS__ }); }

#define AG_SHIM_UNARY(name)                          \
  AG_SHIM(name, (ag_tensor * *out, const ag_tensor* x), \
          api::check_out(out); *out = api::to_handle(ops::name(api::Borrowed(x, "x")));)
#define AG_SHIM_UNARY_SCALAR(name)                                \
  AG_SHIM(name, (ag_tensor * *out, const ag_tensor* x, double attr), \
          api::check_out(out); *out = api::to_handle(ops::name(api::Borrowed(x, "x"), attr));)
#define AG_SHIM_UNARY_SCALAR2(name)                                              \
  AG_SHIM(name, (ag_tensor * *out, const ag_tensor* x, double attr, double attr2), \
          api::check_out(out); *out = api::to_handle(ops::name(api::Borrowed(x, "x"), attr, attr2));)
#define AG_SHIM_BINARY(name)                                                      \
  AG_SHIM(name, (ag_tensor * *out, const ag_tensor* a, const ag_tensor* b), api::check_out(out); \
          api::Borrowed ta(a, "a"), tb(b, "b"); *out = api::to_handle(ops::name(ta, tb));)
#define AG_SHIM_SHAPE(name)                                                                       \
  AG_SHIM(name, (ag_tensor * *out, const ag_tensor* x, const int64_t* shape, int32_t ndim),       \
          api::check_out(out); api::Borrowed tx(x, "x");                                          \
          *out = api::to_handle(ops::name(tx, api::dims_arg(shape, ndim, "shape", "ndim")));)
#define AG_SHIM_DTYPE(name)                                                  \
  AG_SHIM(name, (ag_tensor * *out, const ag_tensor* x, ag_dtype dtype),      \
          api::check_out(out); api::Borrowed tx(x, "x");                     \
          *out = api::to_handle(ops::name(tx, api::dtype_arg(dtype)));)
#define AG_SHIM_DIM(name)                                                    \
  AG_SHIM(name, (ag_tensor * *out, const ag_tensor* x, int64_t dim),         \
          api::check_out(out); *out = api::to_handle(ops::name(api::Borrowed(x, "x"), dim));)
#define AG_SHIM_DIMS(name)                                                                              \
  AG_SHIM(name, (ag_tensor * *out, const ag_tensor* x, const int64_t* dims, int32_t ndims, int32_t keepdim), \
          api::check_out(out); api::Borrowed tx(x, "x");                                                \
          *out = api::to_handle(ops::name(tx, api::dims_arg(dims, ndims), keepdim != 0));)
#define AG_SHIM_DIMS_SCALAR(name)                                                                  \
  AG_SHIM(name,                                                                                    \
          (ag_tensor * *out, const ag_tensor* x, const int64_t* dims, int32_t ndims, int32_t keepdim, \
           double attr),                                                                           \
          api::check_out(out); api::Borrowed tx(x, "x");                                           \
          *out = api::to_handle(ops::name(tx, api::dims_arg(dims, ndims), keepdim != 0, attr));)
#define AG_SHIM_DIMLIST(name)                                                                \
  AG_SHIM(name, (ag_tensor * *out, const ag_tensor* x, const int64_t* dims, int32_t ndims),  \
          api::check_out(out); api::Borrowed tx(x, "x");                                     \
          *out = api::to_handle(ops::name(tx, api::dims_arg(dims, ndims)));)
#define AG_SHIM_INT2(name)                                                   \
  AG_SHIM(name, (ag_tensor * *out, const ag_tensor* x, int64_t i, int64_t j), \
          api::check_out(out); *out = api::to_handle(ops::name(api::Borrowed(x, "x"), i, j));)
#define AG_SHIM_DIM_KEEPDIM(name)                                                      \
  AG_SHIM(name, (ag_tensor * *out, const ag_tensor* x, int64_t dim, int32_t keepdim), \
          api::check_out(out); *out = api::to_handle(ops::name(api::Borrowed(x, "x"), dim, keepdim != 0));)
#define AG_SHIM_VALUES_INDICES(name)                                                                      \
  AG_SHIM(name,                                                                                           \
          (ag_tensor * *values, ag_tensor * *indices, const ag_tensor* x, int64_t dim, int32_t keepdim),  \
          if (values == nullptr && indices == nullptr) {                                                  \
            fail(AG_ERR_INVALID_ARGUMENT, "values and indices are both NULL");                            \
          } api::Borrowed tx(x, "x");                                                                     \
          std::pair<Tensor, Tensor> r = ops::name(tx, dim, keepdim != 0);                                 \
          if (values) *values = api::to_handle(r.first); if (indices) *indices = api::to_handle(r.second);)
#define AG_SHIM_TENSORS_DIM(name)                                                     \
  AG_SHIM(name, (ag_tensor * *out, const ag_tensor* const* xs, int32_t n, int64_t dim), \
          api::check_out(out); *out = api::to_handle(ops::name(api::tensors_arg(xs, n), dim));)
#define AG_SHIM_INDEX(name)                                                                  \
  AG_SHIM(name, (ag_tensor * *out, const ag_tensor* x, int64_t dim, const ag_tensor* index), \
          api::check_out(out); api::Borrowed tx(x, "x"), ti(index, "index");                 \
          *out = api::to_handle(ops::name(tx, dim, ti));)
#define AG_SHIM_INDEX_SRC(name)                                                                        \
  AG_SHIM(name,                                                                                        \
          (ag_tensor * *out, const ag_tensor* x, int64_t dim, const ag_tensor* index, const ag_tensor* src), \
          api::check_out(out); api::Borrowed tx(x, "x"), ti(index, "index"), ts(src, "src");          \
          *out = api::to_handle(ops::name(tx, dim, ti, ts));)
#define AG_SHIM_GRAD_Y_DIM(name)                                                             \
  AG_SHIM(name, (ag_tensor * *out, const ag_tensor* grad, const ag_tensor* y, int64_t dim),  \
          api::check_out(out); api::Borrowed tg(grad, "grad"), ty(y, "y");                  \
          *out = api::to_handle(ops::name(tg, ty, dim));)
#define AG_SHIM_LOSS(name)                                                                            \
  AG_SHIM(name, (ag_tensor * *out, const ag_tensor* input, const ag_tensor* target, int32_t reduction), \
          api::check_out(out); api::Borrowed ti(input, "input"), tt(target, "target");                 \
          *out = api::to_handle(ops::name(ti, tt, ops::reduction_arg(reduction)));)
#define AG_SHIM_RANDOM(name)                                                                               \
  AG_SHIM(name, (ag_tensor * *out, ag_context * ctx, ag_dtype dtype, const int64_t* shape, int32_t ndim), \
          api::check_out(out); Context& c = api::context_arg(ctx);                                        \
          const api::Spec s = api::spec_arg(dtype, shape, ndim);                                          \
          *out = api::to_handle(ops::name(&c, s.dtype, s.shape));)
#define AG_SHIM_RANDOM2(name)                                                                      \
  AG_SHIM(name,                                                                                    \
          (ag_tensor * *out, ag_context * ctx, ag_dtype dtype, const int64_t* shape, int32_t ndim, \
           double attr, double attr2),                                                             \
          api::check_out(out); Context& c = api::context_arg(ctx);                                \
          const api::Spec s = api::spec_arg(dtype, shape, ndim);                                  \
          *out = api::to_handle(ops::name(&c, s.dtype, s.shape, attr, attr2));)
#define AG_SHIM_NORM_BACKWARD(name)                                                                  \
  AG_SHIM(name,                                                                                      \
          (ag_tensor * *out, const ag_tensor* grad, const ag_tensor* x, const int64_t* normalized_shape, \
           int32_t n, const ag_tensor* weight, double eps),                                          \
          api::check_out(out); api::Borrowed tg(grad, "grad"), tx(x, "x");                           \
          const Dims ns = api::dims_arg(normalized_shape, n, "normalized_shape", "n");               \
          *out = api::to_handle(ops::name(tg, tx, ns, api::optional_tensor(weight, "weight"), eps));)
#define AG_SHIM_NORM_WEIGHT_GRAD(name)                                                               \
  AG_SHIM(name,                                                                                      \
          (ag_tensor * *out, const ag_tensor* grad, const ag_tensor* x, const int64_t* normalized_shape, \
           int32_t n, double eps),                                                                   \
          api::check_out(out); api::Borrowed tg(grad, "grad"), tx(x, "x");                           \
          const Dims ns = api::dims_arg(normalized_shape, n, "normalized_shape", "n");               \
          *out = api::to_handle(ops::name(tg, tx, ns, eps));)
#define AG_SHIM_INT(name)                                          \
  AG_SHIM(name, (ag_tensor * *out, const ag_tensor* x, int64_t k), \
          api::check_out(out); *out = api::to_handle(ops::name(api::Borrowed(x, "x"), k));)
#define AG_SHIM_ADDMM(name)                                                                             \
  AG_SHIM(name,                                                                                         \
          (ag_tensor * *out, const ag_tensor* input, const ag_tensor* a, const ag_tensor* b, double beta, \
           double alpha),                                                                               \
          api::check_out(out); api::Borrowed ti(input, "input"), ta(a, "a"), tb(b, "b");                \
          *out = api::to_handle(ops::name(ti, ta, tb, beta, alpha));)
// Two results (either out-parameter may be NULL, not both: checked first).
#define AG_SHIM_PAIR_OUT(out1, out2, r)        \
  if (out1) *out1 = api::to_handle(r.first); \
  if (out2) *out2 = api::to_handle(r.second);
#define AG_SHIM_STAT_MEAN(name)                                                                      \
  AG_SHIM(name,                                                                                      \
          (ag_tensor * *out, ag_tensor * *mean, const ag_tensor* x, const int64_t* dims, int32_t ndims, \
           int32_t keepdim, double correction),                                                      \
          api::Borrowed tx(x, "x"); const Dims d = api::dims_arg(dims, ndims);                       \
          if (out == nullptr && mean == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "out and mean are both NULL"); \
          std::pair<Tensor, Tensor> r = ops::name(tx, d, keepdim != 0, correction);                  \
          AG_SHIM_PAIR_OUT(out, mean, r))
#define AG_SHIM_SCAN_INDICES(name)                                                                      \
  AG_SHIM(name, (ag_tensor * *values, ag_tensor * *indices, const ag_tensor* x, int64_t dim),           \
          if (values == nullptr && indices == nullptr) {                                                \
            fail(AG_ERR_INVALID_ARGUMENT, "values and indices are both NULL");                          \
          } api::Borrowed tx(x, "x");                                                                   \
          std::pair<Tensor, Tensor> r = ops::name(tx, dim); AG_SHIM_PAIR_OUT(values, indices, r))
#define AG_SHIM_BINARY_SCALAR(name)                                                                \
  AG_SHIM(name, (ag_tensor * *out, const ag_tensor* a, const ag_tensor* b, double p), api::check_out(out); \
          api::Borrowed ta(a, "a"), tb(b, "b"); *out = api::to_handle(ops::name(ta, tb, p));)
#define AG_SHIM_QUANTILE(name)                                                                        \
  AG_SHIM(name,                                                                                       \
          (ag_tensor * *out, const ag_tensor* x, const ag_tensor* q, const int64_t* dims, int32_t ndims, \
           int32_t keepdim, int32_t interpolation),                                                   \
          api::check_out(out); api::Borrowed tx(x, "x"), tq(q, "q");                                  \
          *out = api::to_handle(ops::name(tx, tq, api::dims_arg(dims, ndims), keepdim != 0, interpolation));)
// A CUSTOM op writes its entry by hand, in ops_<area>_api.cc.
#define AG_SHIM_CUSTOM(name)

extern "C" {

#define AG_OP(name, family, ...) AG_SHIM_##family(name)
#include "ops/ops.def"

namespace {
const char* const kOpNames[] = {
#define AG_OP(name, ...) #name,
#include "ops/ops.def"
};
}  // namespace

AG_API int32_t ag_op_count(void) noexcept { return static_cast<int32_t>(sizeof(kOpNames) / sizeof(kOpNames[0])); }

AG_API const char* ag_op_name(int32_t index) noexcept {
  return index >= 0 && index < ag_op_count() ? kOpNames[index] : nullptr;
}

}  // extern "C"
