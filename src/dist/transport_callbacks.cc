// The host-callback transport: three blocking collectives supplied by the
// host (a game server's own network layer, a test's threads). Its requests
// complete when started.
#include <string>

#include "error.h"
#include "transport.h"

namespace ag_dist {

namespace {

class DoneRequest final : public Request {
 public:
  bool test() override { return true; }
  bool wait(double) override { return true; }
};

class CallbackTransport final : public Transport {
 public:
  CallbackTransport(const ag_dist_transport& t, void* user_data, ag_destroy_fn destroy)
      : t_(t), user_data_(user_data), destroy_(destroy) {}
  ~CallbackTransport() override {
    if (destroy_) destroy_(user_data_);
  }
  int32_t rank() const override { return t_.rank; }
  int32_t size() const override { return t_.world_size; }

  std::unique_ptr<Request> start_allreduce(void* data, int64_t count, ag_dtype dtype) override {
    check(t_.allreduce_sum(user_data_, data, count, dtype), "allreduce_sum");
    return std::make_unique<DoneRequest>();
  }
  void broadcast(void* data, int64_t bytes, int32_t root) override {
    check(t_.broadcast(user_data_, data, bytes, root), "broadcast");
  }
  void barrier() override { check(t_.barrier(user_data_), "barrier"); }

 private:
  static void check(ag_status s, const char* callback) {
    if (s != AG_OK) fail(AG_DIST_ERR_COMM, "the transport's ", callback, " callback failed (", ag_dist_status_name(s), ")");
  }

  ag_dist_transport t_;
  void* user_data_;
  ag_destroy_fn destroy_;
};

}  // namespace

std::unique_ptr<Transport> make_callback_transport(const ag_dist_transport& t, void* user_data,
                                                   ag_destroy_fn destroy) {
  return std::make_unique<CallbackTransport>(t, user_data, destroy);
}

}  // namespace ag_dist
