// Record once, replay many (ag/replay.h): the C entries, and the checks that
// every C call makes while its thread records (api::RecordedCall).
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "ag/replay.h"
#include "api/guard.h"
#include "autograd/node.h"
#include "core/recorder.h"
#include "ops/op_common.h"

namespace ag {

namespace api {

namespace {

bool starts_with(const char* s, const char* prefix) { return std::strncmp(s, prefix, std::strlen(prefix)) == 0; }

// Why the C call `fn` cannot be recorded, or null if it may be.
const char* refused_call(const char* fn) {
  static const char* const kRandom[] = {"ag_op_rand",      "ag_op_randn",   "ag_op_uniform",
                                        "ag_op_normal",    "ag_op_bernoulli", "ag_op_bernoulli_scalar",
                                        "ag_op_randint",   "ag_op_dropout"};
  for (const char* r : kRandom) {
    if (std::strcmp(fn, r) == 0) return "it draws random numbers, which replay would repeat identically";
  }
  const size_t n = std::strlen(fn);
  if (starts_with(fn, "ag_op_") && fn[n - 1] == '_') return "it writes in place, which replay would not repeat";
  if (std::strcmp(fn, "ag_function_apply") == 0) return "custom functions run host callbacks that replay cannot repeat";
  if (starts_with(fn, "ag_tensor_register_") || std::strcmp(fn, "ag_tensor_retain_grad") == 0 ||
      std::strcmp(fn, "ag_backward_queue_callback") == 0) {
    return "hooks and callbacks run host code that replay cannot repeat";
  }
  if (std::strcmp(fn, "ag_backward_begin") == 0) return "a budgeted backward job is not recorded (use ag_backward)";
  if (starts_with(fn, "ag_optimizer_")) return "an optimizer writes its parameters in place";
  return nullptr;
}

}  // namespace

void RecordedCall::enter(const char* fn) {
  if (std::strcmp(fn, "ag_graph_record_end") == 0) {
    r_ = nullptr;  // it ends (and frees) the recording
    return;
  }
  if (r_->call_depth == 0) {
    r_->call = fn;
    r_->status_at_call = r_->status();
    // After a refusal, ops fail before they run (no half-made outputs);
    // other calls (releases, queries, constants) still do their work.
    if (r_->status() != AG_OK && starts_with(fn, "ag_op_")) {
      fail(r_->status(), "the recording failed already, end it (ag_graph_record_end): ", r_->message());
    }
    if (const char* why = refused_call(fn)) r_->refuse(AG_ERR_UNSUPPORTED, str(fn, " cannot be recorded: ", why));
  }
  ++r_->call_depth;
}

void RecordedCall::leave(const char* fn) {
  if (r_->call_depth != 1) return;
  if (r_->status() != AG_OK && r_->status_at_call == AG_OK) fail(r_->status(), r_->message());
  // Ops compute; other calls (tensor creation, queries) make constants.
  if (starts_with(fn, "ag_op_")) {
    r_->check_fresh(fn);
  } else {
    r_->drop_fresh();
  }
}

void check_recorded_result(Recorder& r) {
  if (r.call_depth == 1 && r.call != nullptr && starts_with(r.call, "ag_op_")) r.check_fresh(r.call);
}

}  // namespace api

namespace {

constexpr uint32_t kGraphTag = 0xA6C4A9F2u;

// What an ag_graph handle points to.
struct Graph : HandleState<kGraphTag> {
  std::unique_ptr<Recorder> rec;  // the steps, the context and the leaves
  // Each leaf with the .grad the recording left it: replay sets it again.
  std::vector<std::pair<Tensor, Tensor>> grads;
  std::atomic<bool> busy{false};
};

Graph& graph_arg(const ag_graph* g) {
  if (g == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "graph is NULL");
  Graph* p = reinterpret_cast<Graph*>(const_cast<ag_graph*>(g));
  if (!p->handle_valid()) fail(AG_ERR_INVALID_ARGUMENT, "graph is not a live handle (released already?)");
  return *p;
}

// Clears the busy flag of a replay however it ends.
struct ReplayLock {
  explicit ReplayLock(Graph& g) : g_(g) {
    if (g_.busy.exchange(true, std::memory_order_acquire)) {
      fail(AG_ERR_INVALID_ARGUMENT, "the graph is being replayed on another thread (one thread at a time)");
    }
  }
  ~ReplayLock() { g_.busy.store(false, std::memory_order_release); }
  ReplayLock(const ReplayLock&) = delete;
  ReplayLock& operator=(const ReplayLock&) = delete;
  Graph& g_;
};

void check_value(const TensorImpl& leaf, const TensorImpl& value, int32_t i) {
  if (leaf.context() != value.context()) fail(AG_ERR_CONTEXT, "values[", i, "] belongs to another context than leaves[", i, "]");
  if (leaf.dtype() != value.dtype()) {
    fail(AG_ERR_DTYPE, "values[", i, "] has dtype ", dtype_name(value.dtype()), " but the recorded leaves[", i,
         "] has ", dtype_name(leaf.dtype()));
  }
  if (leaf.shape() != value.shape()) {
    fail(AG_ERR_SHAPE, "values[", i, "] has shape ", shape_str(value.shape()), " but the recorded leaves[", i,
         "] has ", shape_str(leaf.shape()), " (a graph replays fixed shapes: record it again)");
  }
  if (leaf.storage()->read_only()) fail(AG_ERR_UNSUPPORTED, "leaves[", i, "]: ", kReadOnlyMessage);
  if (!leaf.is_non_overlapping()) fail(AG_ERR_UNSUPPORTED, "leaves[", i, "] aliases its own elements (an expand view)");
}

}  // namespace

}  // namespace ag

using namespace ag;

extern "C" {

AG_API ag_status ag_graph_record_begin(ag_context* ctx) noexcept {
  return api::call("ag_graph_record_begin", [&] {
    Context& c = api::context_arg(ctx);
    if (thread_recorder() != nullptr) fail(AG_ERR_INVALID_ARGUMENT, "the calling thread records already");
    set_thread_recorder(new Recorder(&c));
  });
}

AG_API ag_status ag_graph_record_end(ag_graph** graph) noexcept {
  return api::call("ag_graph_record_end", [&] {
    api::check_out(graph);
    *graph = nullptr;
    std::unique_ptr<Recorder> rec(thread_recorder());
    if (!rec) fail(AG_ERR_INVALID_ARGUMENT, "the calling thread does not record (no ag_graph_record_begin)");
    set_thread_recorder(nullptr);
    if (rec->status() != AG_OK) fail(rec->status(), "the recording failed: ", rec->message());
    auto g = std::make_unique<Graph>();
    for (const Tensor& leaf : rec->leaves_with_grad()) {
      AutogradMeta* m = meta_of(*leaf);
      std::lock_guard<std::mutex> lock(m->mu);
      g->grads.emplace_back(leaf, m->grad);
    }
    g->rec = std::move(rec);
    g->handle_acquire();
    *graph = reinterpret_cast<ag_graph*>(g.release());
  });
}

AG_API ag_status ag_graph_replay(ag_graph* graph, int32_t n, ag_tensor* const* leaves,
                                 const ag_tensor* const* values) noexcept {
  return api::call("ag_graph_replay", [&] {
    Graph& g = graph_arg(graph);
    if (recording()) fail(AG_ERR_INVALID_ARGUMENT, "the calling thread records: end the recording first");
    if (n < 0) fail(AG_ERR_INVALID_ARGUMENT, "n ", n, " is negative");
    if (n > 0 && (leaves == nullptr || values == nullptr)) {
      fail(AG_ERR_INVALID_ARGUMENT, "leaves or values is NULL but n is ", n);
    }
    ReplayLock lock(g);
    for (int32_t i = 0; i < n; ++i) {
      check_value(api::tensor_arg(leaves[i], "leaves[i]"), api::tensor_arg(values[i], "values[i]"), i);
    }
    for (int32_t i = 0; i < n; ++i) {
      TensorImpl& leaf = *api::impl(leaves[i]);
      const TensorImpl& v = *api::impl(values[i]);
      if (&leaf == &v) continue;
      ops::copy_into(leaf.context(), v.dtype(), v.shape(), ops::view_of(v), leaf.dtype(), leaf.data(), leaf.strides());
      leaf.storage()->bump_version();
    }
    g.rec->steps().run();
    for (const auto& [leaf, grad] : g.grads) {
      AutogradMeta& m = ensure_meta(*leaf);
      std::lock_guard<std::mutex> guard(m.mu);
      if (m.grad.get() != grad.get()) m.grad = grad;
    }
  });
}

AG_API int64_t ag_graph_num_steps(const ag_graph* graph) noexcept {
  if (graph == nullptr || !reinterpret_cast<const Graph*>(graph)->handle_valid()) return -1;
  return static_cast<int64_t>(reinterpret_cast<const Graph*>(graph)->rec->steps().size());
}

AG_API void ag_graph_release(ag_graph* graph) noexcept {
  if (graph == nullptr) return;
  Graph* g = reinterpret_cast<Graph*>(graph);
  if (!g->handle_valid()) {
    api::set_last_error("ag_graph_release", "graph is not a live handle (released twice?); ignored");
    return;
  }
  g->handle_release();
  delete g;
}

}  // extern "C"
