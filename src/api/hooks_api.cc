// Hooks and final callbacks: C callbacks wrapped as engine hooks.
#include <memory>
#include <mutex>
#include <unordered_set>
#include <vector>

#include "ag/hooks.h"
#include "api/callback.h"
#include "autograd/accumulate_grad.h"
#include "autograd/hooks.h"
#include "engine/engine.h"

using namespace ag;

namespace {

// The hook handles users hold. A handle passed back in is looked up here
// before it is touched, so a second removal or release is detected without
// reading freed memory. Hooks are few, so a lock is cheap; the registry is
// never destroyed, so handles released during process exit still find it.
class LiveHandles {
 public:
  void insert(const void* h) {
    std::lock_guard<std::mutex> lock(mu_);
    set_.insert(h);
  }
  // True if h was live; it is not any more.
  bool take(const void* h) {
    std::lock_guard<std::mutex> lock(mu_);
    return set_.erase(h) == 1;
  }

 private:
  std::mutex mu_;
  std::unordered_set<const void*> set_;
};

LiveHandles& live_handles() {
  static LiveHandles* registry = new LiveHandles;
  return *registry;
}

}  // namespace

namespace {

// One C registration. destroy runs in the destructor: once, whichever of the
// node's list, the user's handle and a running pass lets go last.
class CHook final : public Hook {
 public:
  CHook(Kind kind, void* fn, void* user_data, ag_destroy_fn destroy)
      : Hook(kind, 0), fn_(fn), user_data_(user_data), destroy_(destroy) {}
  ~CHook() override {
    if (destroy_) destroy_(user_data_);
  }

  void run(TensorList& grads, const TensorList* other) override {
    switch (kind()) {
      case Kind::Tensor: {
        api::Lent g(grads[0]);
        ag_tensor* replacement = nullptr;
        api::invoke_callback("tensor hook", [&] {
          return reinterpret_cast<ag_tensor_hook_fn>(fn_)(user_data_, g.get(), &replacement);
        });
        if (replacement) grads[0] = api::take_returned(replacement, "tensor hook");
        break;
      }
      case Kind::PostAccumulate: {
        api::Lent leaf(grads[0]);
        api::invoke_callback("post-accumulate-grad hook",
                             [&] { return reinterpret_cast<ag_leaf_hook_fn>(fn_)(user_data_, leaf.get()); });
        break;
      }
      case Kind::NodePre:
      case Kind::NodePost: {
        const char* what = kind() == Kind::NodePre ? "node pre-hook" : "node post-hook";
        std::vector<api::Lent> lent;
        std::vector<ag_tensor*> handles;
        lent.reserve(grads.size());
        for (size_t i = 0; i < grads.size(); ++i) {
          lent.emplace_back(grads[i]);
          handles.push_back(lent.back().get());
        }
        std::vector<api::Lent> lent_other;
        std::vector<const ag_tensor*> other_handles;
        if (other) {
          lent_other.reserve(other->size());
          for (size_t i = 0; i < other->size(); ++i) {
            lent_other.emplace_back((*other)[i]);
            other_handles.push_back(lent_other.back().get());
          }
        }
        api::invoke_callback(what, [&] {
          return reinterpret_cast<ag_node_hook_fn>(fn_)(user_data_, handles.data(),
                                                        static_cast<int32_t>(handles.size()),
                                                        other ? other_handles.data() : nullptr,
                                                        static_cast<int32_t>(other_handles.size()));
        });
        for (size_t i = 0; i < grads.size(); ++i) {
          if (handles[i] == lent[i].get()) continue;
          grads[i] = handles[i] ? api::take_returned(handles[i], what) : Tensor();
        }
        break;
      }
    }
  }

 private:
  void* fn_;
  void* user_data_;
  ag_destroy_fn destroy_;
};

// Registration shared by the four kinds; destroy runs on every failure path.
template <class Fn>
ag_status register_hook(const char* fname, ag_hook** out, ag_tensor* t, Fn fn, void* user_data,
                        ag_destroy_fn destroy, Hook::Kind kind) noexcept {
  Ref<CHook> hook;
  try {
    hook = make_ref<CHook>(kind, reinterpret_cast<void*>(fn), user_data, destroy);
  } catch (...) {
    if (destroy) destroy(user_data);
    api::set_last_error(fname, "out of memory");
    return AG_ERR_OUT_OF_MEMORY;
  }
  return api::call(fname, [&] {
    if (fn == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "fn is NULL");
    TensorImpl& x = api::tensor_arg(t, "t");
    if (!requires_grad(x)) fail(AG_ERR_GRAPH, "the tensor does not require grad, so no gradient reaches it");
    Ref<Node> node;
    uint32_t input_nr = 0;
    if (is_leaf(x)) {
      node = grad_accumulator(x);
    } else {
      if (kind == Hook::Kind::PostAccumulate) {
        fail(AG_ERR_GRAPH, "the tensor was produced by ", grad_fn_of(x)->name(),
             " and is not a leaf; post-accumulate-grad hooks go on leaves");
      }
      node = Ref<Node>::share(grad_fn_of(x));
      input_nr = x.output_nr();
    }
    hook->set_input_nr(input_nr);
    if (out) live_handles().insert(hook.get());  // may throw: nothing registered yet
    try {
      node->ensure_hooks().add(node.get(), Ref<Hook>(hook));
    } catch (...) {
      if (out) live_handles().take(hook.get());
      throw;
    }
    if (out) {
      hook->handle_acquire();
      hook->retain();  // the user's side
      *out = reinterpret_cast<ag_hook*>(hook.get());
    }
  });
}

}  // namespace

namespace {

Hook* hook_arg(ag_hook* h) { return reinterpret_cast<Hook*>(h); }

// A final callback from C: destroy runs when it is dropped, run or not.
class CCallback final : public FinalCallback {
 public:
  CCallback(ag_callback_fn fn, void* user_data, ag_destroy_fn destroy)
      : fn_(fn), user_data_(user_data), destroy_(destroy) {}
  ~CCallback() override {
    if (destroy_) destroy_(user_data_);
  }
  void run() override {
    api::invoke_callback("queued callback", [&] { return fn_(user_data_); });
  }

 private:
  ag_callback_fn fn_;
  void* user_data_;
  ag_destroy_fn destroy_;
};

}  // namespace

extern "C" {

AG_API ag_status ag_tensor_register_hook(ag_hook** out, ag_tensor* t, ag_tensor_hook_fn fn, void* user_data,
                                         ag_destroy_fn destroy) noexcept {
  return register_hook("ag_tensor_register_hook", out, t, fn, user_data, destroy, Hook::Kind::Tensor);
}

AG_API ag_status ag_tensor_register_post_accumulate_grad_hook(ag_hook** out, ag_tensor* t, ag_leaf_hook_fn fn,
                                                              void* user_data, ag_destroy_fn destroy) noexcept {
  return register_hook("ag_tensor_register_post_accumulate_grad_hook", out, t, fn, user_data, destroy,
                       Hook::Kind::PostAccumulate);
}

AG_API ag_status ag_tensor_register_node_pre_hook(ag_hook** out, ag_tensor* t, ag_node_hook_fn fn,
                                                  void* user_data, ag_destroy_fn destroy) noexcept {
  return register_hook("ag_tensor_register_node_pre_hook", out, t, fn, user_data, destroy, Hook::Kind::NodePre);
}

AG_API ag_status ag_tensor_register_node_post_hook(ag_hook** out, ag_tensor* t, ag_node_hook_fn fn,
                                                   void* user_data, ag_destroy_fn destroy) noexcept {
  return register_hook("ag_tensor_register_node_post_hook", out, t, fn, user_data, destroy, Hook::Kind::NodePost);
}

AG_API void ag_hook_remove(ag_hook* hook) noexcept {
  if (hook == nullptr) return;
  if (!live_handles().take(hook)) {
    api::set_last_error("ag_hook_remove", "hook is not a live handle (removed or released twice?); ignored");
    return;
  }
  Hook* h = hook_arg(hook);
  try {
    h->remove();
  } catch (...) {
    api::set_last_error("ag_hook_remove", "internal error while removing the hook");
  }
  if (h->handle_release()) h->release();
}

AG_API void ag_hook_release(ag_hook* hook) noexcept {
  if (hook == nullptr) return;
  if (!live_handles().take(hook)) {
    api::set_last_error("ag_hook_release", "hook is not a live handle (removed or released twice?); ignored");
    return;
  }
  Hook* h = hook_arg(hook);
  if (h->handle_release()) h->release();
}

AG_API ag_status ag_backward_queue_callback(ag_callback_fn fn, void* user_data, ag_destroy_fn destroy) noexcept {
  std::unique_ptr<FinalCallback> cb;
  try {
    cb = std::make_unique<CCallback>(fn, user_data, destroy);
  } catch (...) {
    if (destroy) destroy(user_data);
    api::set_last_error("ag_backward_queue_callback", "out of memory");
    return AG_ERR_OUT_OF_MEMORY;
  }
  return api::call("ag_backward_queue_callback", [&] {
    if (fn == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "fn is NULL");
    if (!queue_final_callback(cb)) {
      fail(AG_ERR_GRAPH, "no backward pass runs on this thread; queue callbacks from a hook or a custom function");
    }
  });
}

}  // extern "C"
