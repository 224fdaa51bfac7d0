// requires_grad, gradients, detach, backward and grad mode.
#include "api/guard.h"
#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "engine/engine.h"
#include "ops/ops.h"

using namespace ag;

extern "C" {

AG_API ag_status ag_tensor_requires_grad(ag_tensor* t, int32_t requires_grad) noexcept {
  return api::call("ag_tensor_requires_grad", [&] {
    TensorImpl& x = api::tensor_arg(t, "t");
    if (!is_leaf(x)) {
      fail(AG_ERR_GRAPH, "the tensor was produced by ", meta_of(x)->grad_fn->name(),
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

AG_API ag_status ag_tensor_set_grad(ag_tensor* t, const ag_tensor* grad) noexcept {
  return api::call("ag_tensor_set_grad", [&] {
    TensorImpl& x = api::tensor_arg(t, "t");
    if (!is_leaf(x)) fail(AG_ERR_GRAPH, "the tensor is not a leaf; only leaves hold gradients");
    Tensor g;
    if (grad != nullptr) {
      g = api::tensor_ref(grad, "grad");
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
  const AutogradMeta* m = meta_of(*api::impl(t));
  if (!m) return nullptr;
  if (m->grad_fn) return m->grad_fn->name();
  return m->requires_grad ? "AccumulateGrad" : nullptr;
}

AG_API ag_status ag_backward_options_init(ag_backward_options* opts) noexcept {
  return api::call("ag_backward_options_init", [&] {
    api::check_out(opts);
    *opts = ag_backward_options AG_BACKWARD_OPTIONS_INIT;
  });
}

AG_API ag_status ag_backward(ag_tensor* root, const ag_tensor* grad_root, const ag_backward_options* user_opts) noexcept {
  return api::call("ag_backward", [&] {
    Tensor r = api::tensor_ref(root, "root");
    ag_backward_options opts = AG_BACKWARD_OPTIONS_INIT;
    api::read_options(user_opts, opts);
    if (!requires_grad(*r)) {
      fail(AG_ERR_GRAPH, "the root does not require grad: no input of the ops that produced it requires grad, "
                         "or grad mode was off");
    }
    Tensor seed;
    if (grad_root == nullptr) {
      if (r->numel() != 1) {
        fail(AG_ERR_SHAPE, "grad_root may be NULL only for a root with one element; the root has shape ",
             shape_str(r->shape()));
      }
      seed = ops::full(r->context(), r->dtype(), r->shape(), 1.0);
    } else {
      seed = api::tensor_ref(grad_root, "grad_root");
      if (seed->context() != r->context()) fail(AG_ERR_CONTEXT, "grad_root belongs to another context than root");
      if (seed->dtype() != r->dtype()) {
        fail(AG_ERR_DTYPE, "grad_root has dtype ", dtype_name(seed->dtype()), ", root has ", dtype_name(r->dtype()));
      }
      if (seed->shape() != r->shape()) {
        fail(AG_ERR_SHAPE, "grad_root has shape ", shape_str(seed->shape()), ", root has ", shape_str(r->shape()));
      }
    }
    BackwardOptions o;
    o.retain_graph = opts.retain_graph != 0;
    o.create_graph = opts.create_graph != 0;
    run_backward(r, seed, o);
  });
}

AG_API ag_status ag_grad_mode_set(int32_t enabled, int32_t* previous) noexcept {
  if (previous) *previous = grad_enabled() ? 1 : 0;
  set_grad_enabled(enabled != 0);
  return AG_OK;
}

AG_API int32_t ag_grad_mode_enabled(void) noexcept { return grad_enabled() ? 1 : 0; }

}  // extern "C"
