// ag_dist_all_reduce and ag_dist_broadcast_params: collectives over whole
// tensors, outside any graph. Data goes out through ag_tensor_copy_data and
// comes back through ag_tensor_copy_from, so any layout works and version
// counters are bumped as for any write.
#include <cstring>
#include <string>
#include <vector>

#include "comm.h"
#include "error.h"

namespace ag_dist {
namespace {

// A tensor the collective will write: f32/f64, not read-only, no aliasing.
TensorInfo writable_info(const ag_tensor* t, const std::string& what) {
  TensorInfo info = tensor_info(t, what);
  if (ag_tensor_is_read_only(t)) fail(AG_ERR_UNSUPPORTED, what, " is read-only");
  int64_t strides[AG_MAX_DIMS];
  check_ag(ag_tensor_strides(t, strides, AG_MAX_DIMS), "ag_tensor_strides");
  for (size_t d = 0; d < info.shape.size(); ++d)
    if (strides[d] == 0 && info.shape[d] > 1) fail(AG_ERR_UNSUPPORTED, what, " has aliasing elements (an expand view)");
  return info;
}

// Runs the local checks; returns the error, if any, to pass to agree().
template <class F>
std::unique_ptr<Error> local_check(F&& f) {
  try {
    f();
    return nullptr;
  } catch (const Error& e) {
    return std::make_unique<Error>(e);
  }
}

}  // namespace
}  // namespace ag_dist

using namespace ag_dist;

extern "C" {

AG_DIST_API ag_status ag_dist_all_reduce(ag_dist_comm* comm, ag_tensor* t, int32_t op) noexcept {
  return call("ag_dist_all_reduce", [&] {
    Transport& tr = *comm_arg(comm).transport;
    TensorInfo info;
    auto err = local_check([&] {
      if (op != AG_DIST_SUM && op != AG_DIST_MEAN)
        fail(AG_ERR_INVALID_ARGUMENT, "op is ", op, " (AG_DIST_SUM or AG_DIST_MEAN)");
      info = writable_info(t, "tensor t");
    });
    agree(tr, err.get(), hash_layout({info}, op));
    const size_t elem = ag_dtype_size(info.dtype);
    std::vector<double> buf((static_cast<size_t>(info.numel) * elem + 7) / 8);
    check_ag(ag_tensor_copy_data(t, buf.data(), static_cast<size_t>(info.numel) * elem), "ag_tensor_copy_data");
    tr.start_allreduce(buf.data(), info.numel, info.dtype)->wait(0);
    if (op == AG_DIST_MEAN) {
      const double inv = 1.0 / tr.size();
      if (info.dtype == AG_F64) {
        for (int64_t i = 0; i < info.numel; ++i) buf[i] *= inv;
      } else {
        float* f = reinterpret_cast<float*>(buf.data());
        for (int64_t i = 0; i < info.numel; ++i) f[i] *= static_cast<float>(inv);
      }
    }
    check_ag(ag_tensor_copy_from(t, buf.data(), static_cast<size_t>(info.numel) * elem), "ag_tensor_copy_from");
  });
}

AG_DIST_API ag_status ag_dist_broadcast_params(ag_dist_comm* comm, ag_tensor* const* params, int32_t num_params,
                                               int32_t root) noexcept {
  return call("ag_dist_broadcast_params", [&] {
    Transport& tr = *comm_arg(comm).transport;
    std::vector<TensorInfo> infos;
    auto err = local_check([&] {
      if (params == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "params is NULL");
      if (num_params < 1) fail(AG_ERR_INVALID_ARGUMENT, "num_params is ", num_params, ", must be >= 1");
      if (root < 0 || root >= tr.size()) fail(AG_ERR_INVALID_ARGUMENT, "root is ", root, ", not in [0, ", tr.size(), ")");
      for (int32_t i = 0; i < num_params; ++i)
        infos.push_back(writable_info(params[i], "params[" + std::to_string(i) + "]"));
    });
    agree(tr, err.get(), hash_layout(infos, root));
    std::vector<size_t> offsets;
    size_t total = 0;
    for (const TensorInfo& info : infos) {
      offsets.push_back(total);
      total += static_cast<size_t>(info.numel) * ag_dtype_size(info.dtype);
    }
    std::vector<unsigned char> buf(total);
    if (tr.rank() == root)
      for (size_t i = 0; i < infos.size(); ++i)
        check_ag(ag_tensor_copy_data(params[i], buf.data() + offsets[i], buf.size() - offsets[i]), "ag_tensor_copy_data");
    tr.broadcast(buf.data(), static_cast<int64_t>(total), root);
    if (tr.rank() != root)
      for (size_t i = 0; i < infos.size(); ++i)
        check_ag(ag_tensor_copy_from(params[i], buf.data() + offsets[i],
                                     static_cast<size_t>(infos[i].numel) * ag_dtype_size(infos[i].dtype)),
                 "ag_tensor_copy_from");
  });
}

}  // extern "C"
