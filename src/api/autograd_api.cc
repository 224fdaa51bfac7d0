// requires_grad, gradients, detach, backward and grad mode.
#include <memory>
#include <string>
#include <vector>

#include "api/guard.h"
#include "autograd/grad_mode.h"
#include "autograd/hooks.h"
#include "autograd/node.h"
#include "core/handle.h"
#include "engine/engine.h"
#include "ops/ops.h"

using namespace ag;

Tensor api::seed_for(const Tensor& r, const ag_tensor* given, const char* what, const char* root_name,
                     const char* kind) {
  if (given == nullptr) {
    if (r->numel() != 1) {
      fail(AG_ERR_SHAPE, what, " may be NULL only for ", kind, " with one element; ", root_name, " has shape ",
           shape_str(r->shape()));
    }
    return ops::full(r->context(), r->dtype(), r->shape(), 1.0);
  }
  Tensor seed = api::tensor_ref(given, what);
  if (seed->context() != r->context()) fail(AG_ERR_CONTEXT, what, " belongs to another context than ", root_name);
  if (seed->dtype() != r->dtype()) {
    fail(AG_ERR_DTYPE, what, " has dtype ", dtype_name(seed->dtype()), ", ", root_name, " has ",
         dtype_name(r->dtype()));
  }
  if (seed->shape() != r->shape()) {
    fail(AG_ERR_SHAPE, what, " has shape ", shape_str(seed->shape()), ", ", root_name, " has ",
         shape_str(r->shape()));
  }
  return seed;
}

namespace {

// The inputs of a restricted pass: live tensors of the root's context that require grad.
std::vector<Tensor> input_list(const ag_tensor* const* inputs, int32_t n, const TensorImpl& root) {
  std::vector<Tensor> out;
  if (n < 0) fail(AG_ERR_INVALID_ARGUMENT, "num_inputs is ", n);
  if (n > 0 && inputs == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "inputs is NULL but num_inputs is ", n);
  for (int32_t i = 0; i < n; ++i) {
    const std::string what = str("inputs[", i, "]");
    Tensor t = api::tensor_ref(inputs[i], what.c_str());
    if (t->context() != root.context()) fail(AG_ERR_CONTEXT, what, " belongs to another context than the root");
    if (!requires_grad(*t)) fail(AG_ERR_GRAPH, what, " does not require grad");
    out.push_back(std::move(t));
  }
  return out;
}

// The request of ag_backward and ag_backward_begin, checked.
ExecuteRequest backward_request(ag_tensor* root, const ag_tensor* grad_root, const ag_backward_options* user_opts) {
  Tensor r = api::tensor_ref(root, "root");
  ag_backward_options opts = AG_BACKWARD_OPTIONS_INIT;
  api::read_options(user_opts, opts);
  if (!requires_grad(*r)) {
    fail(AG_ERR_GRAPH, "the root does not require grad: no input of the ops that produced it requires grad, "
                       "or grad mode was off");
  }
  ExecuteRequest req;
  req.roots.push_back(r);
  req.seeds.push_back(api::seed_for(r, grad_root, "grad_root", "root"));
  req.inputs = input_list(opts.inputs, opts.num_inputs, *r);
  req.accumulate = true;
  req.opts.retain_graph = opts.retain_graph != 0;
  req.opts.create_graph = opts.create_graph != 0;
  return req;
}

}  // namespace

extern "C" {

AG_API ag_status ag_tensor_requires_grad(ag_tensor* t, int32_t requires_grad) noexcept {
  return api::call("ag_tensor_requires_grad", [&] {
    TensorImpl& x = api::tensor_arg(t, "t");
    if (!is_leaf(x)) {
      fail(AG_ERR_GRAPH, "the tensor was produced by ", grad_fn_of(x)->name(),
           " and is not a leaf; only leaves take requires_grad (detach it first)");
    }
    if (requires_grad && !is_floating(x.dtype())) {
      fail(AG_ERR_DTYPE, "only floating tensors can require grad, got ", dtype_name(x.dtype()));
    }
    if (requires_grad || meta_of(x)) ensure_meta(x).requires_grad = requires_grad != 0;
  });
}

AG_API int32_t ag_tensor_get_requires_grad(const ag_tensor* t) noexcept {
  if (t == nullptr || !api::impl(t)->handle_valid()) return 0;
  return requires_grad(*api::impl(t)) ? 1 : 0;
}

AG_API int32_t ag_tensor_is_leaf(const ag_tensor* t) noexcept {
  if (t == nullptr || !api::impl(t)->handle_valid()) return 0;
  return is_leaf(*api::impl(t)) ? 1 : 0;
}

AG_API ag_status ag_tensor_grad(ag_tensor** out, const ag_tensor* t) noexcept {
  return api::call("ag_tensor_grad", [&] {
    api::check_out(out);
    const TensorImpl& x = api::tensor_arg(t, "t");
    AutogradMeta* m = meta_of(x);
    Tensor g;
    if (m) {
      std::lock_guard<std::mutex> lock(m->mu);
      g = m->grad;
    }
    *out = g ? api::to_handle(std::move(g)) : nullptr;
  });
}

namespace {
// A non-leaf listed in a backward's inputs holds a gradient without
// retaining it; it may be replaced or cleared like a retained one.
bool holds_grad(AutogradMeta& m) {
  std::lock_guard<std::mutex> lock(m.mu);
  return static_cast<bool>(m.grad);
}
}  // namespace

AG_API ag_status ag_tensor_set_grad(ag_tensor* t, const ag_tensor* grad) noexcept {
  return api::call("ag_tensor_set_grad", [&] {
    TensorImpl& x = api::tensor_arg(t, "t");
    if (!is_leaf(x) && !(meta_of(x) && (meta_of(x)->retains_grad || holds_grad(*meta_of(x))))) {
      fail(AG_ERR_GRAPH, "the tensor is not a leaf and does not retain its gradient (ag_tensor_retain_grad)");
    }
    Tensor g;
    if (grad != nullptr) {
      g = api::tensor_ref(grad, "grad");
      // It would own itself and never be freed (torch refuses it too).
      if (g.get() == &x) fail(AG_ERR_INVALID_ARGUMENT, "a tensor cannot be its own gradient");
      if (g->context() != x.context()) fail(AG_ERR_CONTEXT, "grad belongs to another context than t");
      if (g->dtype() != x.dtype()) {
        fail(AG_ERR_DTYPE, "grad has dtype ", dtype_name(g->dtype()), ", t has ", dtype_name(x.dtype()));
      }
      if (g->shape() != x.shape()) {
        fail(AG_ERR_SHAPE, "grad has shape ", shape_str(g->shape()), ", t has ", shape_str(x.shape()));
      }
    }
    if (!g && !meta_of(x)) return;
    AutogradMeta& m = ensure_meta(x);
    std::lock_guard<std::mutex> lock(m.mu);
    m.grad = std::move(g);
  });
}

AG_API ag_status ag_tensor_detach(ag_tensor** out, const ag_tensor* t) noexcept {
  return api::call("ag_tensor_detach", [&] {
    api::check_out(out);
    const TensorImpl& x = api::tensor_arg(t, "t");
    *out = api::to_handle(make_view(x, x.shape(), x.strides(), x.offset()));
  });
}

AG_API const char* ag_tensor_grad_fn_name(const ag_tensor* t) noexcept {
  if (t == nullptr || !api::impl(t)->handle_valid()) return nullptr;
  if (const Node* fn = grad_fn_of(*api::impl(t))) return fn->name();
  const AutogradMeta* m = meta_of(*api::impl(t));
  return m && m->requires_grad ? "AccumulateGrad" : nullptr;
}

AG_API ag_status ag_backward_options_init(ag_backward_options* opts) noexcept {
  return api::call("ag_backward_options_init", [&] {
    api::check_out(opts);
    *opts = ag_backward_options AG_BACKWARD_OPTIONS_INIT;
  });
}

AG_API ag_status ag_backward(ag_tensor* root, const ag_tensor* grad_root, const ag_backward_options* user_opts) noexcept {
  return api::call("ag_backward", [&] { execute(backward_request(root, grad_root, user_opts)); });
}

}  // extern "C"

// ---- the budgeted backward (ag/budget.h) ----

namespace {

constexpr uint32_t kJobTag = 0xA6B06E70u;

// What an ag_backward_job handle points to: the engine's job, and the
// failure that ended it, if one did.
struct Job : HandleState<kJobTag> {
  explicit Job(ExecuteRequest req) : job(std::move(req)) {}
  BackwardJob job;
  ag_status failed = AG_OK;
  std::string message;
};

Job& job_arg(ag_backward_job* job) {
  if (job == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "job is NULL");
  Job* j = reinterpret_cast<Job*>(job);
  if (!j->handle_valid()) fail(AG_ERR_INVALID_ARGUMENT, "job is not a live handle (ended or cancelled already?)");
  return *j;
}

// Runs f on the job; a failure ends the job for good (its state is then
// mid-node) and is repeated by every later call.
template <class F>
void run_job(Job& j, F&& f) {
  if (j.failed != AG_OK) fail(j.failed, "the job failed earlier: ", j.message);
  try {
    f();
  } catch (const Error& e) {
    j.failed = e.code();
    j.message = e.message();
    throw;
  } catch (const std::bad_alloc&) {
    j.failed = AG_ERR_OUT_OF_MEMORY;
    j.message = "out of memory";
    throw;
  }
}

}  // namespace

extern "C" {

AG_API ag_status ag_backward_begin(ag_backward_job** job, ag_tensor* root, const ag_tensor* grad_root,
                                   const ag_backward_options* opts) noexcept {
  return api::call("ag_backward_begin", [&] {
    api::check_out(job);
    auto j = std::make_unique<Job>(backward_request(root, grad_root, opts));
    *job = reinterpret_cast<ag_backward_job*>(j.release());
  });
}

AG_API ag_status ag_backward_step(ag_backward_job* job, int64_t max_nodes, int64_t max_ns, int32_t* done) noexcept {
  return api::call("ag_backward_step", [&] {
    Job& j = job_arg(job);
    if (max_nodes < 0 || max_ns < 0) {
      fail(AG_ERR_INVALID_ARGUMENT, "max_nodes ", max_nodes, " and max_ns ", max_ns, " must not be negative");
    }
    bool finished = false;
    run_job(j, [&] { finished = j.job.step(max_nodes, max_ns); });
    if (done) *done = finished ? 1 : 0;
  });
}

AG_API ag_status ag_backward_end(ag_backward_job* job) noexcept {
  return api::call("ag_backward_end", [&] {
    std::unique_ptr<Job> j(&job_arg(job));  // freed whatever happens
    run_job(*j, [&] { j->job.finish(); });
  });
}

AG_API ag_status ag_backward_cancel(ag_backward_job* job) noexcept {
  return api::call("ag_backward_cancel", [&] { delete &job_arg(job); });
}

AG_API ag_status ag_grad_options_init(ag_grad_options* opts) noexcept {
  return api::call("ag_grad_options_init", [&] {
    api::check_out(opts);
    *opts = ag_grad_options AG_GRAD_OPTIONS_INIT;
  });
}

AG_API ag_status ag_grad(ag_tensor** grads, const ag_tensor* const* outputs, const ag_tensor* const* grad_outputs,
                         int32_t num_outputs, const ag_tensor* const* inputs, int32_t num_inputs,
                         const ag_grad_options* user_opts) noexcept {
  return api::call("ag_grad", [&] {
    if (grads == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "grads is NULL");
    if (outputs == nullptr || num_outputs < 1) {
      fail(AG_ERR_INVALID_ARGUMENT, "needs at least one output (outputs ", outputs ? "given" : "NULL",
           ", num_outputs ", num_outputs, ")");
    }
    if (inputs == nullptr || num_inputs < 1) {
      fail(AG_ERR_INVALID_ARGUMENT, "needs at least one input (inputs ", inputs ? "given" : "NULL",
           ", num_inputs ", num_inputs, ")");
    }
    ag_grad_options opts = AG_GRAD_OPTIONS_INIT;
    api::read_options(user_opts, opts);
    ExecuteRequest req;
    for (int32_t i = 0; i < num_outputs; ++i) {
      const std::string what = str("outputs[", i, "]");
      Tensor r = api::tensor_ref(outputs[i], what.c_str());
      if (i > 0 && r->context() != req.roots[0]->context()) {
        fail(AG_ERR_CONTEXT, what, " belongs to another context than outputs[0]");
      }
      if (!requires_grad(*r)) fail(AG_ERR_GRAPH, what, " does not require grad");
      req.seeds.push_back(api::seed_for(r, grad_outputs ? grad_outputs[i] : nullptr,
                                   str("grad_outputs[", i, "]").c_str(), what.c_str()));
      req.roots.push_back(std::move(r));
    }
    req.inputs = input_list(inputs, num_inputs, *req.roots[0]);
    req.accumulate = false;
    req.opts.retain_graph = opts.retain_graph != 0;
    req.opts.create_graph = opts.create_graph != 0;
    std::vector<Tensor> result = execute(req);
    for (int32_t i = 0; i < num_inputs; ++i) {
      if (!result[static_cast<size_t>(i)] && !opts.allow_unused) {
        fail(AG_ERR_GRAPH, "no gradient reaches inputs[", i, "] from the outputs (pass allow_unused = 1 to get NULL)");
      }
    }
    for (int32_t i = 0; i < num_inputs; ++i) {
      Tensor& g = result[static_cast<size_t>(i)];
      grads[i] = g ? api::to_handle(std::move(g)) : nullptr;
    }
  });
}

AG_API ag_status ag_tensor_set_tag(ag_tensor* t, const char* tag) noexcept {
  return api::call("ag_tensor_set_tag", [&] {
    TensorImpl& x = api::tensor_arg(t, "t");
    if (tag == nullptr) {
      if (AutogradMeta* m = meta_of(x)) m->tag.reset();
      return;
    }
    auto s = std::make_shared<const std::string>(tag);
    ensure_meta(x).tag = std::move(s);
  });
}

AG_API const char* ag_tensor_tag(const ag_tensor* t) noexcept {
  if (t == nullptr || !api::impl(t)->handle_valid()) return nullptr;
  const AutogradMeta* m = meta_of(*api::impl(t));
  return m && m->tag ? m->tag->c_str() : nullptr;
}

AG_API ag_status ag_tensor_retain_grad(ag_tensor* t) noexcept {
  return api::call("ag_tensor_retain_grad", [&] {
    TensorImpl& x = api::tensor_arg(t, "t");
    if (!requires_grad(x)) fail(AG_ERR_GRAPH, "the tensor does not require grad");
    if (is_leaf(x)) return;
    AutogradMeta& m = ensure_meta(x);
    if (m.retains_grad) return;
    grad_fn_of(x)->ensure_hooks().retain(x.output_nr(), &x);
    m.retains_grad = true;
  });
}

AG_API int32_t ag_tensor_retains_grad(const ag_tensor* t) noexcept {
  if (t == nullptr || !api::impl(t)->handle_valid()) return 0;
  const AutogradMeta* m = meta_of(*api::impl(t));
  return m && m->retains_grad && !is_leaf(*api::impl(t)) ? 1 : 0;
}

AG_API ag_status ag_grad_mode_set(int32_t enabled, int32_t* previous) noexcept {
  if (previous) *previous = grad_enabled() ? 1 : 0;
  set_grad_enabled(enabled != 0);
  return AG_OK;
}

AG_API int32_t ag_grad_mode_enabled(void) noexcept { return grad_enabled() ? 1 : 0; }

}  // extern "C"
