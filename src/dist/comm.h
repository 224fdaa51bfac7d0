// ag_dist_comm: a reference-counted transport, and the checks shared by the
// collective calls that take tensors (the ranks agree on a parameter list
// before moving data, so one rank's bad argument fails every rank instead of
// leaving the others waiting).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ag/autograd.h"
#include "ag/context.h"
#include "ag/interop.h"
#include "error.h"
#include "transport.h"

struct ag_dist_comm {
  static constexpr uint64_t kLive = 0x61672d636f6d6d31;  // "ag-comm1"
  std::atomic<uint64_t> tag{kLive};
  std::atomic<int64_t> refs{1};
  std::unique_ptr<ag_dist::Transport> transport;
};

namespace ag_dist {

// The live communicator behind `c`, or an AG_ERR_INVALID_ARGUMENT error.
ag_dist_comm& comm_arg(const ag_dist_comm* c);
bool comm_valid(const ag_dist_comm* c);
void comm_retain(ag_dist_comm& c);
void comm_release(ag_dist_comm& c);

// What a collective needs to know about one tensor of a parameter list.
struct TensorInfo {
  ag_dtype dtype = 0;
  int64_t numel = 0;
  std::vector<int64_t> shape;
};

// Reads `t`'s dtype and shape; f32 or f64 only (`what` names it).
TensorInfo tensor_info(const ag_tensor* t, const std::string& what);

// Collective: every rank passes its local check's result (AG_OK or the
// error it caught) and the layout it would use. Rethrows the local error
// on a rank that failed; on the others, throws AG_DIST_ERR_PEER when
// another rank failed, AG_ERR_SHAPE when the layouts differ from rank 0's.
void agree(Transport& t, const Error* local_error, uint64_t layout_hash);

uint64_t hash_layout(const std::vector<TensorInfo>& infos, int64_t extra);

}  // namespace ag_dist
