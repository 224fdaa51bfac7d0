// The C entries of the CUSTOM ops of ag/ops_reduce.h: sorting and selecting
// (sort, topk, kthvalue) and the distances with their own signatures.
#include "api/guard.h"
#include "ops/ops.h"

using namespace ag;

extern "C" {

namespace {
void check_pair(const void* values, const void* indices) {
  if (values == nullptr && indices == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "values and indices are both NULL");
}
void write_pair(ag_tensor** values, ag_tensor** indices, const std::pair<Tensor, Tensor>& r) {
  if (values) *values = api::to_handle(r.first);
  if (indices) *indices = api::to_handle(r.second);
}
}  // namespace

AG_API ag_status ag_op_sort(ag_tensor** values, ag_tensor** indices, const ag_tensor* x, int64_t dim,
                            int32_t descending, int32_t stable) noexcept {
  return api::call("ag_op_sort", [&] {
    check_pair(values, indices);
    write_pair(values, indices, ops::sort(api::Borrowed(x, "x"), dim, descending != 0, stable != 0));
  });
}

AG_API ag_status ag_op_topk(ag_tensor** values, ag_tensor** indices, const ag_tensor* x, int64_t k, int64_t dim,
                            int32_t largest, int32_t sorted) noexcept {
  return api::call("ag_op_topk", [&] {
    check_pair(values, indices);
    write_pair(values, indices, ops::topk(api::Borrowed(x, "x"), k, dim, largest != 0, sorted != 0));
  });
}

AG_API ag_status ag_op_kthvalue(ag_tensor** values, ag_tensor** indices, const ag_tensor* x, int64_t k, int64_t dim,
                                int32_t keepdim) noexcept {
  return api::call("ag_op_kthvalue", [&] {
    check_pair(values, indices);
    write_pair(values, indices, ops::kthvalue(api::Borrowed(x, "x"), k, dim, keepdim != 0));
  });
}

AG_API ag_status ag_op_pairwise_distance(ag_tensor** out, const ag_tensor* x1, const ag_tensor* x2, double p,
                                         double eps, int32_t keepdim) noexcept {
  return api::call("ag_op_pairwise_distance", [&] {
    api::check_out(out);
    api::Borrowed t1(x1, "x1"), t2(x2, "x2");
    *out = api::to_handle(ops::pairwise_distance(t1, t2, p, eps, keepdim != 0));
  });
}

AG_API ag_status ag_op_cosine_similarity(ag_tensor** out, const ag_tensor* x1, const ag_tensor* x2, int64_t dim,
                                         double eps) noexcept {
  return api::call("ag_op_cosine_similarity", [&] {
    api::check_out(out);
    api::Borrowed t1(x1, "x1"), t2(x2, "x2");
    *out = api::to_handle(ops::cosine_similarity(t1, t2, dim, eps));
  });
}

AG_API ag_status ag_op_normalize(ag_tensor** out, const ag_tensor* x, double p, int64_t dim, double eps) noexcept {
  return api::call("ag_op_normalize", [&] {
    api::check_out(out);
    *out = api::to_handle(ops::normalize(api::Borrowed(x, "x"), p, dim, eps));
  });
}

}  // extern "C"
