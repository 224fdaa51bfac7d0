// The collectives a communicator needs, behind one interface with two
// implementations: MPI (non-blocking, transport_mpi.cc) and host callbacks
// (blocking, transport_callbacks.cc). Failures throw ag_dist::Error.
#pragma once

#include <cstdint>
#include <memory>

#include "ag/dist.h"

namespace ag_dist {

// A started collective. MPI progresses only inside MPI calls, so test() is
// also how the DDP hooks push started reductions along during backward.
class Request {
 public:
  virtual ~Request() = default;
  // True once complete; throws on failure.
  virtual bool test() = 0;
  // Waits until complete, or until `deadline_seconds` (a steady-clock time
  // from now_seconds(); <= 0: no deadline) passes. False on timeout.
  virtual bool wait(double deadline_seconds) = 0;
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual int32_t rank() const = 0;
  virtual int32_t size() const = 0;
  // In-place sum over the ranks of `count` elements of dtype (f32, f64).
  virtual std::unique_ptr<Request> start_allreduce(void* data, int64_t count, ag_dtype dtype) = 0;
  virtual void broadcast(void* data, int64_t bytes, int32_t root) = 0;
  virtual void barrier() = 0;
};

double now_seconds();

// Collective over *mpi_comm (an MPI_Comm).
std::unique_ptr<Transport> make_mpi_transport(const void* mpi_comm);
std::unique_ptr<Transport> make_mpi_transport_fint(int32_t fint);
std::unique_ptr<Transport> make_callback_transport(const ag_dist_transport& t, void* user_data,
                                                   ag_destroy_fn destroy);

}  // namespace ag_dist
