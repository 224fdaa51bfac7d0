// Data-parallel gradient synchronisation (ag_dist_ddp): buckets, the
// post-accumulate-grad hook that starts their reductions during backward,
// and the end of a step (sync or skip).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "comm.h"

namespace ag_dist {

class Ddp {
 public:
  // Registers nothing yet: the caller has checked the parameters.
  Ddp(ag_dist_comm& comm, ag_tensor* const* params, std::vector<TensorInfo> infos, int64_t bucket_bytes,
      double timeout_seconds);
  ~Ddp();
  Ddp(const Ddp&) = delete;
  Ddp& operator=(const Ddp&) = delete;

  int32_t num_buckets() const { return static_cast<int32_t>(buckets_.size()); }
  // The hook of parameter i: its gradient is final for this backward.
  void on_grad_ready(int32_t i);
  // Ends the step: sync (skip = false) or skip_step (skip = true).
  void finish(bool skip);
  // Whether reductions may still write into the buffers (a step that
  // timed out); then the object must outlive the handle.
  bool busy() const noexcept;
  // Stops the hooks (the handle is going; hooks may outlive it).
  void close() { open_ = false; }

 private:
  struct Param {
    // Borrowed: a reference taken here would be recorded in (and released
    // by) whatever handle scope is open on the caller's thread.
    ag_tensor* tensor;
    TensorInfo info;
    int32_t bucket;
    int64_t offset;  // elements into the bucket's buffer
    bool ready = false;
  };
  struct Bucket {
    ag_dtype dtype = 0;
    std::vector<int32_t> params;
    int64_t numel = 0;
    std::vector<double> buffer;  // numel elements of dtype (8-byte aligned)
    int32_t pending = 0;         // parameters not ready yet
    std::unique_ptr<Request> request;
    bool done = false;
  };

  void launch(Bucket& b, bool zeros);
  void launch_ready_in_order();
  void progress();
  void wait(Request& r, double deadline, const char* what);
  void unpack();
  void reset_step();
  // Runs a transport call; a failure leaves the step unfinishable (the
  // ranks no longer agree on which collectives were made).
  template <class F>
  auto transport_call(F&& f) -> decltype(f()) {
    try {
      return f();
    } catch (const Error& e) {
      if (e.code() == AG_DIST_ERR_COMM && !broken_) {
        broken_ = true;
        broken_message_ = e.message();
      }
      throw;
    }
  }

  ag_dist_comm& comm_;
  Transport& transport_;
  std::vector<Param> params_;
  std::vector<Bucket> buckets_;
  size_t next_launch_ = 0;
  double timeout_;
  // The end-of-step reduction: [ranks skipping, then per parameter the
  // ranks that had a gradient], counts exact in f64.
  std::vector<double> control_;
  std::unique_ptr<Request> control_request_;
  bool finishing_ = false, skipping_ = false;
  bool broken_ = false;
  std::string broken_message_;
  std::atomic<bool> open_{true};
};

}  // namespace ag_dist

struct ag_dist_ddp {
  static constexpr uint64_t kLive = 0x61672d6464703031;  // "ag-ddp01"
  std::atomic<uint64_t> tag{kLive};
  std::shared_ptr<ag_dist::Ddp> ddp;
  std::vector<ag_hook*> hooks;
};
