// The MPI transport: a duplicate of the host's communicator with
// MPI_ERRORS_RETURN, so that no MPI failure aborts the process; every MPI
// error becomes AG_DIST_ERR_COMM with MPI's own error string.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <thread>
#include <vector>

#include "error.h"
#include "transport.h"

namespace ag_dist {

namespace {

// Largest element count of one MPI call (counts are int).
constexpr int64_t kMaxCount = int64_t{1} << 30;

void check_mpi(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING + 1] = {0};
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) len = 0;
  text[std::clamp(len, 0, MPI_MAX_ERROR_STRING)] = 0;
  fail(AG_DIST_ERR_COMM, what, " failed: ", len ? text : "unknown MPI error", " (code ", rc, ")");
}

void check_mpi_usable() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized) fail(AG_ERR_INVALID_ARGUMENT, "MPI is not initialized (the host calls MPI_Init first)");
  if (finalized) fail(AG_ERR_INVALID_ARGUMENT, "MPI is already finalized");
}

class MpiRequest final : public Request {
 public:
  explicit MpiRequest(std::vector<MPI_Request> reqs) : reqs_(std::move(reqs)) {}
  ~MpiRequest() override {
    // Only reached complete, or at teardown of a communicator whose step
    // timed out: the request cannot be cancelled, so it is left to MPI.
  }
  bool test() override {
    int done = 0;
    check_mpi(MPI_Testall(static_cast<int>(reqs_.size()), reqs_.data(), &done, MPI_STATUSES_IGNORE),
              "MPI_Testall");
    return done != 0;
  }
  bool wait(double deadline) override {
    if (deadline <= 0) {
      check_mpi(MPI_Waitall(static_cast<int>(reqs_.size()), reqs_.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
      return true;
    }
    // Poll: spin first (a reduction usually completes within microseconds of
    // the last rank arriving), then sleep between tests to leave the core to
    // the other ranks of an oversubscribed machine.
    const double spin_until = now_seconds() + 1e-3;
    for (;;) {
      if (test()) return true;
      const double now = now_seconds();
      if (now >= deadline) return false;
      if (now > spin_until) std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }

 private:
  std::vector<MPI_Request> reqs_;
};

class MpiTransport final : public Transport {
 public:
  explicit MpiTransport(MPI_Comm host) {
    check_mpi_usable();
    if (host == MPI_COMM_NULL) fail(AG_ERR_INVALID_ARGUMENT, "the MPI communicator is MPI_COMM_NULL");
    check_mpi(MPI_Comm_dup(host, &comm_), "MPI_Comm_dup");
    const int rc = MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    if (rc == MPI_SUCCESS) {
      int r = 0, s = 0;
      if (MPI_Comm_rank(comm_, &r) == MPI_SUCCESS && MPI_Comm_size(comm_, &s) == MPI_SUCCESS) {
        rank_ = r;
        size_ = s;
        return;
      }
    }
    MPI_Comm_free(&comm_);
    check_mpi(rc == MPI_SUCCESS ? MPI_ERR_OTHER : rc, "MPI_Comm_set_errhandler");
  }
  ~MpiTransport() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(&comm_);  // after MPI_Finalize, MPI owns it
  }
  int32_t rank() const override { return rank_; }
  int32_t size() const override { return size_; }

  std::unique_ptr<Request> start_allreduce(void* data, int64_t count, ag_dtype dtype) override {
    const MPI_Datatype type = dtype == AG_F64 ? MPI_DOUBLE : MPI_FLOAT;
    const size_t elem = dtype == AG_F64 ? 8 : 4;
    std::vector<MPI_Request> reqs;
    reqs.reserve(static_cast<size_t>((count + kMaxCount - 1) / kMaxCount));
    for (int64_t first = 0; first < count; first += kMaxCount) {
      const int n = static_cast<int>(std::min(kMaxCount, count - first));
      MPI_Request r = MPI_REQUEST_NULL;
      const int rc = MPI_Iallreduce(MPI_IN_PLACE, static_cast<char*>(data) + first * elem, n, type, MPI_SUM,
                                    comm_, &r);
      if (rc != MPI_SUCCESS) {
        // The chunks already started must complete before the buffer goes.
        MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
        check_mpi(rc, "MPI_Iallreduce");
      }
      reqs.push_back(r);
    }
    return std::make_unique<MpiRequest>(std::move(reqs));
  }

  void broadcast(void* data, int64_t bytes, int32_t root) override {
    for (int64_t first = 0; first < bytes; first += kMaxCount) {
      const int n = static_cast<int>(std::min(kMaxCount, bytes - first));
      check_mpi(MPI_Bcast(static_cast<char*>(data) + first, n, MPI_BYTE, root, comm_), "MPI_Bcast");
    }
  }

  void barrier() override { check_mpi(MPI_Barrier(comm_), "MPI_Barrier"); }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int32_t rank_ = 0, size_ = 1;
};

}  // namespace

std::unique_ptr<Transport> make_mpi_transport(const void* mpi_comm) {
  return std::make_unique<MpiTransport>(*static_cast<const MPI_Comm*>(mpi_comm));
}

std::unique_ptr<Transport> make_mpi_transport_fint(int32_t fint) {
  check_mpi_usable();  // MPI_Comm_f2c needs an initialized MPI
  return std::make_unique<MpiTransport>(MPI_Comm_f2c(static_cast<MPI_Fint>(fint)));
}

}  // namespace ag_dist
