// Custom differentiable functions from C callbacks: ag_function_apply runs
// the forward callback and records a FunctionNode whose apply calls the
// backward callback.
#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "ag/function.h"
#include "api/callback.h"
#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/saved_tensor.h"
#include "ops/inplace.h"
#include "ops/ops.h"

using namespace ag;

namespace {

constexpr uint32_t kCtxTag = 0xA6F0C7A1u;

// The user's data; destroy runs when the call and the node let go of it.
struct UserData final : RefCounted {
  UserData(void* p, ag_destroy_fn d) : ptr(p), destroy(d) {}
  ~UserData() override {
    if (destroy) destroy(ptr);
  }
  void* ptr;
  ag_destroy_fn destroy;
};

// Raised from backward when a once-differentiable function's result is
// differentiated again.
struct OnceDifferentiableBackward final : Node {
  explicit OnceDifferentiableBackward(std::string fn) : fn_name(std::move(fn)) {}
  const char* name() const override { return "OnceDifferentiableBackward"; }
  void apply(TensorList&, TensorList&) override {
    fail(AG_ERR_GRAPH, "the gradient was computed by ", fn_name,
         ", a function declared AG_FUNCTION_ONCE_DIFFERENTIABLE: it cannot be differentiated again");
  }
  std::string fn_name;
};

struct FunctionNode final : Node {
  const char* name() const override { return name_.c_str(); }
  void release_variables() override {
    for (SavedTensor& s : saved) s.release();
  }
  size_t saved_bytes() const override {
    size_t n = 0;
    for (const SavedTensor& s : saved) n += s.nbytes();
    return n;
  }
  bool saves(const TensorImpl* t) const override {
    for (const SavedTensor& s : saved) {
      if (s.holds(t)) return true;
    }
    return false;
  }
  void apply(TensorList& grads, TensorList& out) override;
  bool runs_user_code() const override { return true; }

  std::string name_;
  Ref<UserData> user;
  ag_function_backward_fn backward = nullptr;
  int32_t flags = 0;
  std::vector<SavedTensor> saved;
  std::vector<char> saved_null;
  std::vector<InputMeta> inputs;  // dtype and shape of each forward input
};

enum class Phase { Forward, Backward };

// What the callbacks see as ag_function_ctx; lives on the stack of one call.
struct FunctionCtx {
  ~FunctionCtx() { tag = 0; }
  uint32_t tag = kCtxTag;
  Phase phase = Phase::Forward;
  FunctionNode* node = nullptr;  // null when forward records no node
  std::vector<Tensor> to_save;
  std::vector<const TensorImpl*> non_differentiable, dirty;
  std::vector<char> needs;  // forward: whether input i needs a gradient
};

ag_function_ctx* handle_of(FunctionCtx& c) { return reinterpret_cast<ag_function_ctx*>(&c); }

FunctionCtx& ctx_arg(const ag_function_ctx* c) {
  if (c == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "ctx is NULL");
  FunctionCtx* p = reinterpret_cast<FunctionCtx*>(const_cast<ag_function_ctx*>(c));
  if (p->tag != kCtxTag) {
    fail(AG_ERR_INVALID_ARGUMENT, "ctx is not an active function context (use it only inside the callback it was "
                                  "passed to)");
  }
  return *p;
}

FunctionCtx& ctx_in(const ag_function_ctx* c, Phase phase) {
  FunctionCtx& ctx = ctx_arg(c);
  if (ctx.phase != phase) {
    fail(AG_ERR_INVALID_ARGUMENT, "only allowed in ", phase == Phase::Forward ? "forward" : "backward",
         ", called in ", ctx.phase == Phase::Forward ? "forward" : "backward");
  }
  return ctx;
}

void FunctionNode::apply(TensorList& grads, TensorList& out) {
  const bool once = (flags & AG_FUNCTION_ONCE_DIFFERENTIABLE) != 0;
  const bool create_graph = grad_enabled();
  Context* ctx_of_grads = nullptr;
  for (size_t i = 0; i < grads.size(); ++i) {
    if (grads[i]) ctx_of_grads = grads[i]->context();
  }
  // Gradients that did not flow reach the callback as zeros.
  std::vector<Tensor> g(grads.size());
  std::vector<api::Lent> lent;
  std::vector<const ag_tensor*> gh;
  lent.reserve(grads.size());
  for (size_t i = 0; i < grads.size(); ++i) {
    g[i] = grads[i] ? grads[i] : ops::full(ctx_of_grads, input_meta(i).dtype, input_meta(i).shape(), 0.0);
    lent.emplace_back(g[i]);
    gh.push_back(lent.back().get());
  }
  FunctionCtx ctx;
  ctx.phase = Phase::Backward;
  ctx.node = this;
  std::vector<ag_tensor*> gi(inputs.size(), nullptr);
  const std::string what = str(name_, " backward");
  {
    GradModeGuard mode(create_graph && !once);
    try {
      api::invoke_callback(what, [&] {
        return backward(user->ptr, handle_of(ctx), gh.data(), static_cast<int32_t>(gh.size()), gi.data(),
                        static_cast<int32_t>(gi.size()));
      });
    } catch (...) {
      try {
        api::take_returned_all(gi, what, true);
      } catch (...) {
      }
      throw;
    }
  }
  std::vector<Tensor> result = api::take_returned_all(gi, what, true);
  // Under create_graph the result of a once-differentiable backward depends
  // on the gradients and on the inputs (through what it saved) in ways ag
  // did not record: it leads to a node that fails when reached.
  Ref<Node> delayed;
  if (once && create_graph) {
    delayed = make_ref<OnceDifferentiableBackward>(name_);
    for (const Tensor& t : g) delayed->add_next_edge(gradient_edge(*t));
    for (size_t i = 0; i < num_outputs(); ++i) delayed->add_next_edge(next_edge(i));
  }
  for (size_t i = 0; i < result.size(); ++i) {
    Tensor& r = result[i];
    if (!r || !needs_input_grad(i)) continue;
    const InputMeta& m = inputs[i];
    if (!m.fits(r->dtype(), r->shape())) {
      fail(AG_ERR_CALLBACK, what, " returned a gradient of dtype ", dtype_name(r->dtype()), " and shape ",
           shape_str(r->shape()), " for input ", i, ", which has dtype ", dtype_name(m.dtype), " and shape ",
           shape_str(m.shape()));
    }
    if (ctx_of_grads && r->context() != ctx_of_grads) {
      fail(AG_ERR_CALLBACK, what, " returned a gradient for input ", i, " from another context");
    }
    if (delayed) {
      Tensor v = make_view(*r, r->shape(), r->strides(), r->offset());
      set_history(delayed, *v);
      r = std::move(v);
    }
    out[i] = std::move(r);
  }
}

bool contains(const std::vector<const TensorImpl*>& v, const TensorImpl* p) {
  return std::find(v.begin(), v.end(), p) != v.end();
}

}  // namespace

extern "C" {

AG_API ag_status ag_function_def_init(ag_function_def* def) noexcept {
  return api::call("ag_function_def_init", [&] {
    api::check_out(def);
    *def = ag_function_def AG_FUNCTION_DEF_INIT;
  });
}

AG_API ag_status ag_function_apply(ag_tensor** outputs, int32_t num_outputs, const ag_tensor* const* inputs,
                                   int32_t num_inputs, const ag_function_def* def) noexcept {
  return api::call("ag_function_apply", [&] {
    if (def == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "def is NULL");
    // Own user_data first, so that destroy runs on every path below.
    Ref<UserData> user;
    if (def->struct_size >= offsetof(ag_function_def, destroy) + sizeof(ag_destroy_fn)) {
      try {
        user = make_ref<UserData>(def->user_data, def->destroy);
      } catch (...) {
        if (def->destroy) def->destroy(def->user_data);
        throw;
      }
    }
    ag_function_def d = AG_FUNCTION_DEF_INIT;
    api::read_options(def, d);
    if (!user) user = make_ref<UserData>(d.user_data, nullptr);
    if (d.forward == nullptr || d.backward == nullptr) {
      fail(AG_ERR_INVALID_ARGUMENT, "def->forward and def->backward must be set");
    }
    if (outputs == nullptr || num_outputs < 1) {
      fail(AG_ERR_INVALID_ARGUMENT, "needs at least one output (outputs ", outputs ? "given" : "NULL",
           ", num_outputs ", num_outputs, ")");
    }
    if (num_inputs < 0 || (num_inputs > 0 && inputs == nullptr)) {
      fail(AG_ERR_INVALID_ARGUMENT, "inputs is ", inputs ? "given" : "NULL", " with num_inputs ", num_inputs);
    }
    const std::string name = d.name ? d.name : "CustomFunctionBackward";
    std::vector<Tensor> in;
    Context* context = nullptr;
    bool record = false;
    for (int32_t i = 0; i < num_inputs; ++i) {
      Tensor t = api::tensor_ref(inputs[i], str("inputs[", i, "]").c_str());
      if (context && t->context() != context) fail(AG_ERR_CONTEXT, "inputs[", i, "] belongs to another context");
      context = t->context();
      record = record || requires_grad(*t);
      in.push_back(std::move(t));
    }
    record = record && grad_enabled();

    Ref<FunctionNode> node;
    FunctionCtx ctx;
    ctx.needs.assign(in.size(), 0);
    if (record) {
      node = make_ref<FunctionNode>();
      node->name_ = name;
      node->user = user;
      node->backward = d.backward;
      node->flags = d.flags;
      for (size_t i = 0; i < in.size(); ++i) {
        node->add_next_edge(gradient_edge(*in[i]));
        node->inputs.push_back(InputMeta{in[i]->dtype(), in[i]->shape()});
        ctx.needs[i] = node->needs_input_grad(i) ? 1 : 0;
      }
      ctx.node = node.get();
    }

    std::vector<ag_tensor*> outs(static_cast<size_t>(num_outputs), nullptr);
    const std::string what = str(name, " forward");
    {
      GradModeGuard off(false);
      try {
        api::invoke_callback(what, [&] {
          return d.forward(user->ptr, handle_of(ctx), inputs, num_inputs, outs.data(), num_outputs);
        });
      } catch (...) {
        try {
          api::take_returned_all(outs, what, true);
        } catch (...) {
        }
        throw;
      }
    }
    std::vector<Tensor> out = api::take_returned_all(outs, what, false);
    std::vector<const TensorImpl*> in_ptrs, out_ptrs;
    for (const Tensor& t : in) in_ptrs.push_back(t.get());
    for (size_t i = 0; i < out.size(); ++i) {
      if (context && out[i]->context() != context) {
        fail(AG_ERR_CONTEXT, what, " returned output ", i, " of another context than the inputs");
      }
      context = out[i]->context();
      out_ptrs.push_back(out[i].get());
    }
    for (const TensorImpl* p : ctx.non_differentiable) {
      if (!contains(out_ptrs, p)) fail(AG_ERR_CALLBACK, what, " marked a tensor non-differentiable that it did not return");
    }
    for (const TensorImpl* p : ctx.dirty) {
      if (!contains(in_ptrs, p) || !contains(out_ptrs, p)) {
        fail(AG_ERR_CALLBACK, what, " marked a tensor dirty that is not both an input and an output");
      }
      if (record && is_leaf(*p) && requires_grad(*p)) {
        fail(AG_ERR_GRAPH, what, " modified a leaf that requires grad in place (mark_dirty) while grad mode is on");
      }
      if (record && p->use_count() > 1 && ops::saved_in_history(*p, in_ptrs)) {
        fail(AG_ERR_UNSUPPORTED, what, " modified in place (mark_dirty) a tensor that an op in its inputs' history "
                                       "saved as its input: the new node would close a reference cycle through it; "
                                       "modify a clone");
      }
    }
    // Checks done; from here on nothing fails but memory.
    for (size_t i = 0; i < out.size(); ++i) {
      const bool dirty = contains(ctx.dirty, out[i].get());
      if (dirty) {
        out[i]->storage()->bump_version();
      } else if (contains(in_ptrs, out[i].get())) {
        // An input returned unchanged: a new tensor on its data, so the
        // input's own history stays as it was.
        out[i] = make_view(*out[i], out[i]->shape(), out[i]->strides(), out[i]->offset());
      }
      if (!record) continue;
      if (contains(ctx.non_differentiable, out_ptrs[i]) || !is_floating(out[i]->dtype())) {
        node->add_input(out[i]->dtype(), out[i]->shape());
      } else {
        set_history(node, *out[i]);
      }
    }
    if (record) {
      node->saved.resize(ctx.to_save.size());
      node->saved_null.assign(ctx.to_save.size(), 0);
      for (size_t k = 0; k < ctx.to_save.size(); ++k) {
        const Tensor& t = ctx.to_save[k];
        if (!t) {
          node->saved_null[k] = 1;
          continue;
        }
        bool is_output = false;
        for (const Tensor& o : out) is_output = is_output || o.get() == t.get();
        node->saved[k].save(t, is_output && grad_fn_of(*t) == node.get());
      }
    }
    for (size_t i = 0; i < out.size(); ++i) outputs[i] = api::to_handle(std::move(out[i]));
  });
}

AG_API ag_status ag_function_ctx_save_for_backward(ag_function_ctx* c, const ag_tensor* const* tensors,
                                                   int32_t n) noexcept {
  return api::call("ag_function_ctx_save_for_backward", [&] {
    FunctionCtx& ctx = ctx_in(c, Phase::Forward);
    if (n < 0 || (n > 0 && tensors == nullptr)) {
      fail(AG_ERR_INVALID_ARGUMENT, "tensors is ", tensors ? "given" : "NULL", " with n ", n);
    }
    std::vector<Tensor> list;
    for (int32_t i = 0; i < n; ++i) {
      list.push_back(tensors[i] ? api::tensor_ref(tensors[i], str("tensors[", i, "]").c_str()) : Tensor());
    }
    ctx.to_save = std::move(list);
  });
}

AG_API int32_t ag_function_ctx_num_saved(const ag_function_ctx* c) noexcept {
  if (c == nullptr) return -1;
  const FunctionCtx* p = reinterpret_cast<const FunctionCtx*>(c);
  if (p->tag != kCtxTag) return -1;
  if (p->phase == Phase::Forward) return static_cast<int32_t>(p->to_save.size());
  return static_cast<int32_t>(p->node->saved.size());
}

AG_API ag_status ag_function_ctx_saved_tensor(ag_tensor** out, ag_function_ctx* c, int32_t index) noexcept {
  return api::call("ag_function_ctx_saved_tensor", [&] {
    api::check_out(out);
    FunctionCtx& ctx = ctx_in(c, Phase::Backward);
    FunctionNode& node = *ctx.node;
    if (index < 0 || static_cast<size_t>(index) >= node.saved.size()) {
      fail(AG_ERR_INVALID_ARGUMENT, "index ", index, " is outside the ", node.saved.size(), " saved tensors");
    }
    if (node.saved_null[static_cast<size_t>(index)]) {
      *out = nullptr;
      return;
    }
    try {
      *out = api::to_handle(node.saved[static_cast<size_t>(index)].unpack(node));
    } catch (const Error& e) {
      throw Error(e.code(), str(node.name(), ": saved tensor ", index, ": ", e.message()));
    }
  });
}

AG_API int32_t ag_function_ctx_needs_input_grad(const ag_function_ctx* c, int32_t index) noexcept {
  if (c == nullptr || index < 0) return 0;
  const FunctionCtx* p = reinterpret_cast<const FunctionCtx*>(c);
  if (p->tag != kCtxTag) return 0;
  if (p->phase == Phase::Forward) {
    return static_cast<size_t>(index) < p->needs.size() && p->needs[static_cast<size_t>(index)] ? 1 : 0;
  }
  return p->node->needs_input_grad(static_cast<size_t>(index)) ? 1 : 0;
}

AG_API ag_status ag_function_ctx_mark_non_differentiable(ag_function_ctx* c, const ag_tensor* output) noexcept {
  return api::call("ag_function_ctx_mark_non_differentiable", [&] {
    FunctionCtx& ctx = ctx_in(c, Phase::Forward);
    ctx.non_differentiable.push_back(&api::tensor_arg(output, "output"));
  });
}

AG_API ag_status ag_function_ctx_mark_dirty(ag_function_ctx* c, const ag_tensor* input) noexcept {
  return api::call("ag_function_ctx_mark_dirty", [&] {
    FunctionCtx& ctx = ctx_in(c, Phase::Forward);
    TensorImpl& t = api::tensor_arg(input, "input");
    if (t.storage()->read_only()) fail(AG_ERR_UNSUPPORTED, "input ", kReadOnlyMessage);
    ctx.dirty.push_back(&t);
  });
}

}  // extern "C"
