// Data parallel: see ag/dist.h for the contract. Reduction order: buckets
// are started strictly in index order on every rank (MPI needs the same
// collective order everywhere), bucket 0 holding the last registered
// parameters; the sum within a bucket is MPI's (for 2 ranks a single
// commutative addition, so both ranks get the same bits), then the result
// is multiplied by 1/world_size in the parameter's dtype.
#include "ddp.h"

#include <cmath>
#include <cstring>
#include <string>
#include <unordered_set>

#include "error.h"

namespace ag_dist {

namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + ")";
}

// An owned reference to an ag tensor.
struct TensorRef {
  ag_tensor* t = nullptr;
  ~TensorRef() { ag_tensor_release(t); }
};

}  // namespace

Ddp::Ddp(ag_dist_comm& comm, ag_tensor* const* params, std::vector<TensorInfo> infos, int64_t bucket_bytes,
         double timeout_seconds)
    : comm_(comm), transport_(*comm.transport), timeout_(timeout_seconds) {
  const int32_t n = static_cast<int32_t>(infos.size());
  params_.reserve(infos.size());
  for (int32_t i = 0; i < n; ++i) params_.push_back(Param{params[i], std::move(infos[i]), -1, 0, false});
  // Reverse registration order: backward usually finishes the last layers
  // first, so bucket 0 can start while earlier layers still run.
  int64_t bucket_used = 0;
  for (int32_t i = n - 1; i >= 0; --i) {
    Param& p = params_[i];
    const int64_t bytes = p.info.numel * static_cast<int64_t>(ag_dtype_size(p.info.dtype));
    if (buckets_.empty() || buckets_.back().dtype != p.info.dtype ||
        (bucket_used > 0 && bucket_used + bytes > bucket_bytes)) {
      buckets_.emplace_back();
      buckets_.back().dtype = p.info.dtype;
      bucket_used = 0;
    }
    Bucket& b = buckets_.back();
    p.bucket = static_cast<int32_t>(buckets_.size() - 1);
    p.offset = b.numel;
    b.params.push_back(i);
    b.numel += p.info.numel;
    bucket_used += bytes;
  }
  for (Bucket& b : buckets_) {
    b.buffer.resize(static_cast<size_t>((b.numel * static_cast<int64_t>(ag_dtype_size(b.dtype)) + 7) / 8));
    b.pending = static_cast<int32_t>(b.params.size());
  }
  control_.resize(params_.size() + 1);
  comm_retain(comm_);
}

Ddp::~Ddp() { comm_release(comm_); }

void Ddp::launch(Bucket& b, bool zeros) {
  const size_t elem = ag_dtype_size(b.dtype);
  char* base = reinterpret_cast<char*>(b.buffer.data());
  for (int32_t i : b.params) {
    const Param& p = params_[i];
    char* dst = base + p.offset * static_cast<int64_t>(elem);
    const size_t bytes = static_cast<size_t>(p.info.numel) * elem;
    TensorRef g;
    if (!zeros) check_ag(ag_tensor_grad(&g.t, p.tensor), "ag_tensor_grad");
    if (g.t) {
      check_ag(ag_tensor_copy_data(g.t, dst, bytes), "ag_tensor_copy_data");
    } else {
      std::memset(dst, 0, bytes);  // no gradient: contributes zeros
    }
  }
  b.request = transport_call([&] { return transport_.start_allreduce(b.buffer.data(), b.numel, b.dtype); });
}

void Ddp::launch_ready_in_order() {
  while (next_launch_ < buckets_.size() && buckets_[next_launch_].pending == 0) launch(buckets_[next_launch_++], false);
}

void Ddp::progress() {
  for (size_t i = 0; i < next_launch_; ++i) {
    Bucket& b = buckets_[i];
    if (!b.done) b.done = transport_call([&] { return b.request->test(); });
  }
}

void Ddp::on_grad_ready(int32_t i) {
  if (!open_.load(std::memory_order_acquire)) return;
  Param& p = params_[i];
  if (finishing_)
    fail(AG_ERR_GRAPH, "a gradient of parameter ", i, " arrived while the previous step's sync is still pending");
  if (p.ready)
    fail(AG_ERR_GRAPH, "parameter ", i, " ", shape_text(p.info.shape),
         " received a second gradient before ag_dist_ddp_sync (one backward per step)");
  p.ready = true;
  --buckets_[p.bucket].pending;
  launch_ready_in_order();
  progress();
}

void Ddp::wait(Request& r, double deadline, const char* what) {
  if (!transport_call([&] { return r.wait(deadline); }))
    fail(AG_DIST_ERR_TIMEOUT, "rank ", transport_.rank(), " waited ", timeout_, " s for ", what,
         ": a rank has not reached ag_dist_ddp_sync or ag_dist_ddp_skip_step; the step stays pending (call again "
         "to keep waiting)");
}

bool Ddp::busy() const noexcept {
  try {
    for (const Bucket& b : buckets_)
      if (b.request && !b.done && !b.request->test()) return true;
    return control_request_ && !control_request_->test();
  } catch (...) {
    return true;  // a failed transport: assume it may still write
  }
}

void Ddp::finish(bool skip) {
  if (broken_)
    fail(AG_DIST_ERR_COMM, "an earlier transport failure left this step unfinished (", broken_message_,
         "); the communicator cannot be trusted: release the DDP object");
  if (!finishing_) {
    // Gradients are read before anything is started, so a failure here
    // (out of memory) leaves the step as it was.
    std::vector<double> control(params_.size() + 1, 0.0);
    control[0] = skip ? 1.0 : 0.0;
    for (size_t i = 0; i < params_.size() && !skip; ++i) {
      TensorRef g;
      check_ag(ag_tensor_grad(&g.t, params_[i].tensor), "ag_tensor_grad");
      control[i + 1] = g.t ? 1.0 : 0.0;
    }
    finishing_ = true;
    skipping_ = skip;
    for (; next_launch_ < buckets_.size(); ++next_launch_) launch(buckets_[next_launch_], skip);
    control_ = std::move(control);
    control_request_ = transport_call(
        [&] { return transport_.start_allreduce(control_.data(), static_cast<int64_t>(control_.size()), AG_F64); });
  }
  const double deadline = timeout_ > 0 ? now_seconds() + timeout_ : 0.0;
  for (size_t i = 0; i < buckets_.size(); ++i) {
    Bucket& b = buckets_[i];
    if (!b.done) {
      const std::string what = "bucket " + std::to_string(i) + " of " + std::to_string(buckets_.size());
      wait(*b.request, deadline, what.c_str());
      b.done = true;
    }
  }
  wait(*control_request_, deadline, "the end-of-step reduction");
  const double skipped = control_[0];
  const bool self_skipped = skipping_;
  if (skipped > 0 || self_skipped) {
    reset_step();
    if (!self_skipped)
      fail(AG_DIST_ERR_PEER, skipped, " of ", transport_.size(),
           " ranks skipped this step (ag_dist_ddp_skip_step); no gradient changed");
    return;
  }
  // The step is over whatever unpack does: the next backward starts afresh.
  struct Reset {
    Ddp* d;
    ~Reset() { d->reset_step(); }
  } reset{this};
  unpack();
}

void Ddp::unpack() {
  const double inv = 1.0 / transport_.size();
  for (Bucket& b : buckets_) {
    if (b.dtype == AG_F64) {
      for (int64_t k = 0; k < b.numel; ++k) b.buffer[k] *= inv;
    } else {
      float* f = reinterpret_cast<float*>(b.buffer.data());
      const float finv = static_cast<float>(inv);
      for (int64_t k = 0; k < b.numel; ++k) f[k] *= finv;
    }
  }
  // New gradient tensors first, so that running out of memory changes nothing.
  std::vector<TensorRef> fresh(params_.size());
  std::vector<TensorRef> current(params_.size());
  for (size_t i = 0; i < params_.size(); ++i) {
    const Param& p = params_[i];
    if (control_[i + 1] == 0) continue;  // no rank had a gradient: it stays none
    check_ag(ag_tensor_grad(&current[i].t, p.tensor), "ag_tensor_grad");
    const bool writable = current[i].t && !ag_tensor_is_read_only(current[i].t) && ag_tensor_is_contiguous(current[i].t);
    if (writable) continue;
    ag_context* ctx = nullptr;
    check_ag(ag_tensor_context(&ctx, p.tensor), "ag_tensor_context");
    const Bucket& b = buckets_[p.bucket];
    const void* src = reinterpret_cast<const char*>(b.buffer.data()) + p.offset * static_cast<int64_t>(ag_dtype_size(b.dtype));
    const ag_status s = ag_tensor_create(&fresh[i].t, ctx, p.info.dtype, p.info.shape.data(),
                                         static_cast<int32_t>(p.info.shape.size()), src);
    ag_context_release(ctx);
    check_ag(s, "ag_tensor_create");
  }
  for (size_t i = 0; i < params_.size(); ++i) {
    const Param& p = params_[i];
    if (control_[i + 1] == 0) continue;
    const Bucket& b = buckets_[p.bucket];
    const size_t elem = ag_dtype_size(b.dtype);
    const void* src = reinterpret_cast<const char*>(b.buffer.data()) + p.offset * static_cast<int64_t>(elem);
    if (fresh[i].t) {
      check_ag(ag_tensor_set_grad(p.tensor, fresh[i].t), "ag_tensor_set_grad");
    } else {
      check_ag(ag_tensor_copy_from(current[i].t, src, static_cast<size_t>(p.info.numel) * elem), "ag_tensor_copy_from");
    }
  }
}

void Ddp::reset_step() {
  for (Param& p : params_) p.ready = false;
  for (Bucket& b : buckets_) {
    b.pending = static_cast<int32_t>(b.params.size());
    b.request.reset();
    b.done = false;
  }
  control_request_.reset();
  next_launch_ = 0;
  finishing_ = skipping_ = false;
}

}  // namespace ag_dist

using namespace ag_dist;

namespace {

struct HookCtx {
  std::shared_ptr<Ddp> ddp;
  int32_t index;
};

ag_status grad_ready_hook(void* user_data, ag_tensor*) {
  auto* h = static_cast<HookCtx*>(user_data);
  const ag_status s = call("ag_dist_ddp hook", [&] { h->ddp->on_grad_ready(h->index); });
  if (s != AG_OK) ag_set_callback_error(ag_dist_last_error_message());
  return s;
}

void hook_destroy(void* user_data) { delete static_cast<HookCtx*>(user_data); }

bool ddp_valid(const ag_dist_ddp* d) {
  return d != nullptr && d->tag.load(std::memory_order_acquire) == ag_dist_ddp::kLive;
}

Ddp& ddp_arg(ag_dist_ddp* d) {
  if (d == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "ddp is NULL");
  if (!ddp_valid(d)) fail(AG_ERR_INVALID_ARGUMENT, "ddp is not a live handle (already released?)");
  return *d->ddp;
}

void release_handle(ag_dist_ddp* d) {
  d->ddp->close();
  for (ag_hook* h : d->hooks) ag_hook_remove(h);
  // Reductions of a step that timed out may still write into the buffers:
  // then the buffers are left to MPI rather than freed under it.
  if (d->ddp->busy()) static_cast<void>(new std::shared_ptr<Ddp>(d->ddp));
  d->tag.store(0, std::memory_order_release);
  delete d;
}

}  // namespace

extern "C" {

AG_DIST_API ag_status ag_dist_ddp_options_init(ag_dist_ddp_options* opts) noexcept {
  return call("ag_dist_ddp_options_init", [&] {
    if (opts == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "opts is NULL");
    const ag_dist_ddp_options init = AG_DIST_DDP_OPTIONS_INIT;
    std::memcpy(opts, &init, sizeof init);
  });
}

AG_DIST_API ag_status ag_dist_ddp_create(ag_dist_ddp** out, ag_dist_comm* comm, ag_tensor* const* params,
                                         int32_t num_params, const ag_dist_ddp_options* opts) noexcept {
  return call("ag_dist_ddp_create", [&] {
    if (out == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "the output pointer is NULL");
    ag_dist_comm& c = comm_arg(comm);
    ag_dist_ddp_options o = AG_DIST_DDP_OPTIONS_INIT;
    std::vector<TensorInfo> infos;
    std::unique_ptr<Error> local;
    try {
      if (opts) {
        if (opts->struct_size != sizeof(ag_dist_ddp_options))
          fail(AG_ERR_INVALID_ARGUMENT, "opts->struct_size is ", opts->struct_size, ", expected ",
               sizeof(ag_dist_ddp_options), " (use AG_DIST_DDP_OPTIONS_INIT)");
        o = *opts;
        if (o.reserved != 0) fail(AG_ERR_INVALID_ARGUMENT, "opts->reserved is ", o.reserved, ", must be 0");
        if (o.bucket_bytes < 0) fail(AG_ERR_INVALID_ARGUMENT, "opts->bucket_bytes is ", o.bucket_bytes, ", must be >= 0");
        if (!(o.timeout_seconds >= 0) || std::isinf(o.timeout_seconds))
          fail(AG_ERR_INVALID_ARGUMENT, "opts->timeout_seconds is ", o.timeout_seconds, " (finite, >= 0; 0: none)");
      }
      if (o.bucket_bytes == 0) o.bucket_bytes = AG_DIST_DEFAULT_BUCKET_BYTES;
      if (params == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "params is NULL");
      if (num_params < 1) fail(AG_ERR_INVALID_ARGUMENT, "num_params is ", num_params, ", must be >= 1");
      std::unordered_set<const ag_tensor*> seen;
      for (int32_t i = 0; i < num_params; ++i) {
        const std::string what = "params[" + std::to_string(i) + "]";
        infos.push_back(tensor_info(params[i], what));
        if (!ag_tensor_is_leaf(params[i]) || !ag_tensor_get_requires_grad(params[i]))
          fail(AG_ERR_GRAPH, what, " is not a leaf that requires grad");
        if (!seen.insert(params[i]).second) fail(AG_ERR_INVALID_ARGUMENT, what, " is listed twice");
      }
    } catch (const Error& e) {
      local = std::make_unique<Error>(e);
    }
    // Bucket layout is part of what the ranks must agree on.
    agree(*c.transport, local.get(), hash_layout(infos, o.bucket_bytes));
    auto handle = std::make_unique<ag_dist_ddp>();
    handle->ddp = std::make_shared<Ddp>(c, params, std::move(infos), o.bucket_bytes, o.timeout_seconds);
    try {
      handle->hooks.reserve(static_cast<size_t>(num_params));
      for (int32_t i = 0; i < num_params; ++i) {
        ag_hook* h = nullptr;
        check_ag(ag_tensor_register_post_accumulate_grad_hook(&h, params[i], grad_ready_hook,
                                                              new HookCtx{handle->ddp, i}, hook_destroy),
                 "ag_tensor_register_post_accumulate_grad_hook");
        handle->hooks.push_back(h);
      }
    } catch (...) {
      release_handle(handle.release());  // removes the hooks registered so far
      throw;
    }
    *out = handle.release();
  });
}

AG_DIST_API void ag_dist_ddp_release(ag_dist_ddp* ddp) noexcept {
  if (ddp == nullptr) return;
  if (!ddp_valid(ddp)) {
    set_last_error("ag_dist_ddp_release", "ddp is not a live handle (already released?)");
    return;
  }
  release_handle(ddp);
}

AG_DIST_API ag_status ag_dist_ddp_sync(ag_dist_ddp* ddp) noexcept {
  return call("ag_dist_ddp_sync", [&] { ddp_arg(ddp).finish(false); });
}

AG_DIST_API ag_status ag_dist_ddp_skip_step(ag_dist_ddp* ddp) noexcept {
  return call("ag_dist_ddp_skip_step", [&] { ddp_arg(ddp).finish(true); });
}

AG_DIST_API int32_t ag_dist_ddp_num_buckets(const ag_dist_ddp* ddp) noexcept {
  return ddp_valid(ddp) ? ddp->ddp->num_buckets() : -1;
}

}  // extern "C"
