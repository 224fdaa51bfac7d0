// The communicator functions of ag/dist.h.
#include "comm.h"

#include <chrono>
#include <cstring>

#include "error.h"

namespace ag_dist {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool comm_valid(const ag_dist_comm* c) {
  return c != nullptr && c->tag.load(std::memory_order_acquire) == ag_dist_comm::kLive;
}

ag_dist_comm& comm_arg(const ag_dist_comm* c) {
  if (c == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "the communicator is NULL");
  if (!comm_valid(c)) fail(AG_ERR_INVALID_ARGUMENT, "the communicator is not a live handle (already released?)");
  return *const_cast<ag_dist_comm*>(c);
}

void comm_retain(ag_dist_comm& c) { c.refs.fetch_add(1, std::memory_order_relaxed); }

void comm_release(ag_dist_comm& c) {
  if (c.refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    c.tag.store(0, std::memory_order_release);
    delete &c;
  }
}

TensorInfo tensor_info(const ag_tensor* t, const std::string& what) {
  TensorInfo info;
  if (t == nullptr) fail(AG_ERR_INVALID_ARGUMENT, what, " is NULL");
  int64_t dims[AG_MAX_DIMS];
  if (ag_tensor_shape(t, dims, AG_MAX_DIMS) != AG_OK) fail(AG_ERR_INVALID_ARGUMENT, what, ": ", ag_last_error_message());
  info.dtype = ag_tensor_dtype(t);
  if (info.dtype != AG_F32 && info.dtype != AG_F64)
    fail(AG_ERR_DTYPE, what, " is ", ag_dtype_name(info.dtype), " (f32 or f64 needed)");
  info.shape.assign(dims, dims + ag_tensor_ndim(t));
  info.numel = ag_tensor_numel(t);
  return info;
}

uint64_t hash_layout(const std::vector<TensorInfo>& infos, int64_t extra) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  auto mix = [&h](int64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= static_cast<uint64_t>(v >> (8 * i)) & 0xff;
      h *= 1099511628211ull;
    }
  };
  mix(static_cast<int64_t>(infos.size()));
  mix(extra);
  for (const TensorInfo& info : infos) {
    mix(info.dtype);
    mix(static_cast<int64_t>(info.shape.size()));
    for (int64_t d : info.shape) mix(d);
  }
  return h;
}

void agree(Transport& t, const Error* local_error, uint64_t layout_hash) {
  uint64_t root_hash = layout_hash;
  t.broadcast(&root_hash, sizeof root_hash, 0);
  double counts[2] = {local_error ? 1.0 : 0.0, (!local_error && root_hash != layout_hash) ? 1.0 : 0.0};
  t.start_allreduce(counts, 2, AG_F64)->wait(0);
  if (local_error) throw *local_error;
  if (counts[0] > 0)
    fail(AG_DIST_ERR_PEER, counts[0], " of ", t.size(), " ranks failed their own checks (their messages say why)");
  if (counts[1] > 0)
    fail(AG_ERR_SHAPE, "the tensor lists (count, dtypes, shapes, order) differ across ranks: ", counts[1], " of ",
         t.size(), " ranks differ from rank 0, ",
         root_hash == layout_hash ? "not this one" : "this one among them");
}

}  // namespace ag_dist

using namespace ag_dist;

namespace {

ag_status make_comm(ag_dist_comm** out, const char* fn, std::unique_ptr<Transport> (*make)(const void*),
                    const void* arg) {
  return call(fn, [&] {
    if (out == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "the output pointer is NULL");
    auto c = std::make_unique<ag_dist_comm>();
    c->transport = make(arg);
    *out = c.release();
  });
}

}  // namespace

extern "C" {

AG_DIST_API ag_status ag_dist_comm_from_mpi(ag_dist_comm** out, const void* mpi_comm) noexcept {
  return make_comm(out, "ag_dist_comm_from_mpi", [](const void* arg) {
    if (arg == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "mpi_comm is NULL (pass the address of an MPI_Comm)");
    return make_mpi_transport(arg);
  }, mpi_comm);
}

AG_DIST_API ag_status ag_dist_comm_from_mpi_fint(ag_dist_comm** out, int32_t mpi_fint) noexcept {
  return make_comm(out, "ag_dist_comm_from_mpi_fint", [](const void* arg) {
    return make_mpi_transport_fint(*static_cast<const int32_t*>(arg));
  }, &mpi_fint);
}

AG_DIST_API ag_status ag_dist_transport_init(ag_dist_transport* transport) noexcept {
  return call("ag_dist_transport_init", [&] {
    if (transport == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "transport is NULL");
    const ag_dist_transport init = AG_DIST_TRANSPORT_INIT;
    std::memcpy(transport, &init, sizeof init);
  });
}

AG_DIST_API ag_status ag_dist_comm_from_callbacks(ag_dist_comm** out, const ag_dist_transport* transport,
                                                  void* user_data, ag_destroy_fn destroy) noexcept {
  bool destroy_owed = true;  // until the transport owns user_data
  const ag_status s = call("ag_dist_comm_from_callbacks", [&] {
    if (out == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "the output pointer is NULL");
    if (transport == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "transport is NULL");
    if (transport->struct_size != sizeof(ag_dist_transport))
      fail(AG_ERR_INVALID_ARGUMENT, "transport->struct_size is ", transport->struct_size, ", expected ",
           sizeof(ag_dist_transport), " (use AG_DIST_TRANSPORT_INIT)");
    const ag_dist_transport& t = *transport;
    if (t.reserved != 0) fail(AG_ERR_INVALID_ARGUMENT, "transport->reserved is ", t.reserved, ", must be 0");
    if (!t.allreduce_sum || !t.broadcast || !t.barrier)
      fail(AG_ERR_INVALID_ARGUMENT, "transport->", !t.allreduce_sum ? "allreduce_sum" : !t.broadcast ? "broadcast" : "barrier",
           " is NULL (every callback is needed)");
    if (t.world_size < 1) fail(AG_ERR_INVALID_ARGUMENT, "transport->world_size is ", t.world_size, ", must be >= 1");
    if (t.rank < 0 || t.rank >= t.world_size)
      fail(AG_ERR_INVALID_ARGUMENT, "transport->rank is ", t.rank, ", not in [0, ", t.world_size, ")");
    auto c = std::make_unique<ag_dist_comm>();
    c->transport = make_callback_transport(t, user_data, destroy);
    destroy_owed = false;
    *out = c.release();
  });
  if (destroy_owed && destroy) destroy(user_data);
  return s;
}

AG_DIST_API ag_dist_comm* ag_dist_comm_retain(ag_dist_comm* comm) noexcept {
  if (!comm_valid(comm)) {
    if (comm) set_last_error("ag_dist_comm_retain", "the communicator is not a live handle (already released?)");
    return nullptr;
  }
  comm_retain(*comm);
  return comm;
}

AG_DIST_API void ag_dist_comm_release(ag_dist_comm* comm) noexcept {
  if (comm == nullptr) return;
  if (!comm_valid(comm)) {
    set_last_error("ag_dist_comm_release", "the communicator is not a live handle (already released?)");
    return;
  }
  comm_release(*comm);
}

AG_DIST_API int32_t ag_dist_comm_rank(const ag_dist_comm* comm) noexcept {
  return comm_valid(comm) ? comm->transport->rank() : -1;
}

AG_DIST_API int32_t ag_dist_comm_size(const ag_dist_comm* comm) noexcept {
  return comm_valid(comm) ? comm->transport->size() : -1;
}

AG_DIST_API ag_status ag_dist_barrier(ag_dist_comm* comm) noexcept {
  return call("ag_dist_barrier", [&] { comm_arg(comm).transport->barrier(); });
}

AG_DIST_API const char* ag_dist_status_name(ag_status status) noexcept {
  switch (status) {
    case AG_DIST_ERR_COMM: return "AG_DIST_ERR_COMM";
    case AG_DIST_ERR_TIMEOUT: return "AG_DIST_ERR_TIMEOUT";
    case AG_DIST_ERR_PEER: return "AG_DIST_ERR_PEER";
    default: return ag_status_name(status);
  }
}

}  // extern "C"
