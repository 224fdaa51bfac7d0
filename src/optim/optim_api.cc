// C entry points of ag/optim.h.
#include <cmath>
#include <memory>
#include <vector>

#include "api/guard.h"
#include "autograd/grad_math.h"
#include "autograd/grad_mode.h"
#include "optim/optimizer.h"

using namespace ag;

namespace {

optim::Optimizer* opt_impl(const ag_optimizer* o) {
  return reinterpret_cast<optim::Optimizer*>(const_cast<ag_optimizer*>(o));
}

optim::Optimizer& opt_arg(const ag_optimizer* o) {
  if (o == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "optimizer is NULL");
  optim::Optimizer* p = opt_impl(o);
  if (!p->valid()) fail(AG_ERR_INVALID_ARGUMENT, "optimizer is not a live handle (already released?)");
  return *p;
}

optim::ParamState& param_arg(optim::Optimizer& o, int32_t index) {
  if (index < 0 || index >= o.num_params()) {
    fail(AG_ERR_INVALID_ARGUMENT, "param_index ", index, " is outside 0..", o.num_params() - 1);
  }
  return o.param(index);
}

int32_t state_slot(optim::Optimizer& o, int32_t index, const char* name) {
  if (name == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "name is NULL");
  const optim::ParamState& ps = param_arg(o, index);
  bool kept = false;
  const int slot = o.slot_of(name, ps.group, &kept);
  if (slot < 0 || !kept) {
    fail(AG_ERR_INVALID_ARGUMENT, "parameter ", index, " has no state \"", name, "\" with this optimizer's kind and options");
  }
  return slot;
}

std::vector<Tensor> tensor_list(ag_tensor* const* params, int32_t n) {
  if (n < 0) fail(AG_ERR_INVALID_ARGUMENT, "num_params ", n, " is negative");
  if (n > 0 && params == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "params is NULL but num_params is ", n);
  std::vector<Tensor> out;
  out.reserve(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) {
    const std::string what = "params[" + std::to_string(i) + "]";
    out.push_back(api::tensor_ref(params[i], what.c_str()));
  }
  return out;
}

// An optimizer call works on its parameters' context (for ag/profile.h).
void note_profiled(optim::Optimizer& o) {
  if (profiling_anywhere() && o.num_params() > 0) note_profiled_context(o.param(0).param->context());
}

}  // namespace

extern "C" {

AG_API ag_status ag_optimizer_options_init(ag_optimizer_options* opts) noexcept {
  return api::call("ag_optimizer_options_init", [&] {
    api::check_out(opts);
    *opts = ag_optimizer_options AG_OPTIMIZER_OPTIONS_INIT;
  });
}

AG_API ag_status ag_optimizer_create(ag_optimizer** out, int32_t kind, const ag_optimizer_options* opts) noexcept {
  return api::call("ag_optimizer_create", [&] {
    api::check_out(out);
    ag_optimizer_options o = AG_OPTIMIZER_OPTIONS_INIT;
    api::read_options(opts, o);
    const optim::Hyper h = optim::resolve(kind, o);
    *out = reinterpret_cast<ag_optimizer*>(new optim::Optimizer(kind, h));
  });
}

AG_API void ag_optimizer_release(ag_optimizer* opt) noexcept {
  if (opt == nullptr) return;
  api::call("ag_optimizer_release", [&] { delete &opt_arg(opt); });
}

AG_API ag_status ag_optimizer_add_param_group(ag_optimizer* opt, ag_tensor* const* params, int32_t num_params,
                                              const ag_optimizer_options* opts) noexcept {
  return api::call("ag_optimizer_add_param_group", [&] {
    optim::Optimizer& o = opt_arg(opt);
    optim::Hyper h = o.defaults();
    if (opts != nullptr) {
      ag_optimizer_options g = AG_OPTIMIZER_OPTIONS_INIT;
      api::read_options(opts, g);
      h = optim::resolve(o.kind(), g);
    }
    o.add_group(tensor_list(params, num_params), h);
  });
}

AG_API int32_t ag_optimizer_num_groups(const ag_optimizer* opt) noexcept {
  int32_t n = -1;
  api::call("ag_optimizer_num_groups", [&] { n = opt_arg(opt).num_groups(); });
  return n;
}

AG_API int32_t ag_optimizer_num_params(const ag_optimizer* opt) noexcept {
  int32_t n = -1;
  api::call("ag_optimizer_num_params", [&] { n = opt_arg(opt).num_params(); });
  return n;
}

AG_API ag_status ag_optimizer_step(ag_optimizer* opt) noexcept {
  return api::call("ag_optimizer_step", [&] {
    optim::Optimizer& o = opt_arg(opt);
    note_profiled(o);
    o.step();
  });
}

AG_API ag_status ag_optimizer_zero_grad(ag_optimizer* opt) noexcept {
  return api::call("ag_optimizer_zero_grad", [&] {
    optim::Optimizer& o = opt_arg(opt);
    note_profiled(o);
    o.zero_grad();
  });
}

AG_API ag_status ag_optimizer_set_lr(ag_optimizer* opt, int32_t group, double lr) noexcept {
  return api::call("ag_optimizer_set_lr", [&] {
    optim::Optimizer& o = opt_arg(opt);
    if (group < -1 || group >= o.num_groups()) {
      fail(AG_ERR_INVALID_ARGUMENT, "group ", group, " is outside -1..", o.num_groups() - 1);
    }
    if (!(lr >= 0.0) || std::isinf(lr)) fail(AG_ERR_INVALID_ARGUMENT, "lr ", lr, " must be finite and >= 0");
    for (int32_t i = 0; i < o.num_groups(); ++i) {
      if (group == -1 || group == i) o.group(i).lr = lr;
    }
  });
}

AG_API ag_status ag_optimizer_get_lr(const ag_optimizer* opt, int32_t group, double* out) noexcept {
  return api::call("ag_optimizer_get_lr", [&] {
    optim::Optimizer& o = opt_arg(opt);
    api::check_out(out);
    if (group < 0 || group >= o.num_groups()) {
      fail(AG_ERR_INVALID_ARGUMENT, "group ", group, " is outside 0..", o.num_groups() - 1);
    }
    *out = o.group(group).lr;
  });
}

AG_API ag_status ag_optimizer_get_state(const ag_optimizer* opt, int32_t param_index, const char* name,
                                        ag_tensor** out) noexcept {
  return api::call("ag_optimizer_get_state", [&] {
    optim::Optimizer& o = opt_arg(opt);
    api::check_out(out);
    const int32_t slot = state_slot(o, param_index, name);
    const Tensor& s = o.param(param_index).state[slot];
    GradModeGuard off(false);
    *out = s ? api::to_handle(grad_clone(s)) : nullptr;
  });
}

AG_API ag_status ag_optimizer_set_state(ag_optimizer* opt, int32_t param_index, const char* name,
                                        const ag_tensor* value) noexcept {
  return api::call("ag_optimizer_set_state", [&] {
    optim::Optimizer& o = opt_arg(opt);
    const int32_t slot = state_slot(o, param_index, name);
    api::Borrowed v(value, "value");
    const TensorImpl& p = *o.param(param_index).param;
    if (v->context() != p.context()) fail(AG_ERR_CONTEXT, "value belongs to another context than the parameter");
    if (v->dtype() != p.dtype()) {
      fail(AG_ERR_DTYPE, "value has dtype ", dtype_name(v->dtype()), ", the parameter ", dtype_name(p.dtype()));
    }
    if (v->shape() != p.shape()) {
      fail(AG_ERR_SHAPE, "value has shape ", shape_str(v->shape()), ", the parameter ", shape_str(p.shape()));
    }
    GradModeGuard off(false);
    o.param(param_index).state[slot] = grad_clone(v.get());
  });
}

AG_API ag_status ag_optimizer_get_step(const ag_optimizer* opt, int32_t param_index, int64_t* out) noexcept {
  return api::call("ag_optimizer_get_step", [&] {
    optim::Optimizer& o = opt_arg(opt);
    api::check_out(out);
    *out = param_arg(o, param_index).step;
  });
}

AG_API ag_status ag_optimizer_set_step(ag_optimizer* opt, int32_t param_index, int64_t step) noexcept {
  return api::call("ag_optimizer_set_step", [&] {
    optim::Optimizer& o = opt_arg(opt);
    optim::ParamState& ps = param_arg(o, param_index);
    if (step < 0) fail(AG_ERR_INVALID_ARGUMENT, "step ", step, " is negative");
    ps.step = step;
  });
}

AG_API ag_status ag_clip_grad_norm(ag_tensor* const* params, int32_t num_params, double max_norm, double norm_type,
                                   double* total_norm) noexcept {
  return api::call("ag_clip_grad_norm", [&] {
    const double total = optim::clip_grad_norm(tensor_list(params, num_params), max_norm, norm_type);
    if (total_norm) *total_norm = total;
  });
}

AG_API ag_status ag_clip_grad_value(ag_tensor* const* params, int32_t num_params, double clip_value) noexcept {
  return api::call("ag_clip_grad_value", [&] {
    optim::clip_grad_value(tensor_list(params, num_params), clip_value);
  });
}

AG_API ag_status ag_lr_step_decay(double base_lr, int64_t step, int64_t step_size, double gamma,
                                  double* out) noexcept {
  return api::call("ag_lr_step_decay", [&] {
    api::check_out(out);
    if (step < 0) fail(AG_ERR_INVALID_ARGUMENT, "step ", step, " is negative");
    if (step_size < 1) fail(AG_ERR_INVALID_ARGUMENT, "step_size ", step_size, " must be >= 1");
    *out = base_lr * std::pow(gamma, static_cast<double>(step / step_size));
  });
}

AG_API ag_status ag_lr_cosine_annealing(double base_lr, double eta_min, int64_t step, int64_t t_max,
                                        double* out) noexcept {
  return api::call("ag_lr_cosine_annealing", [&] {
    api::check_out(out);
    if (step < 0) fail(AG_ERR_INVALID_ARGUMENT, "step ", step, " is negative");
    if (t_max < 1) fail(AG_ERR_INVALID_ARGUMENT, "t_max ", t_max, " must be >= 1");
    const double pi = 3.14159265358979323846;
    *out = eta_min + (base_lr - eta_min) * (1.0 + std::cos(pi * static_cast<double>(step) / static_cast<double>(t_max))) / 2.0;
  });
}

AG_API ag_status ag_lr_linear(double base_lr, int64_t step, double start_factor, double end_factor,
                              int64_t total_steps, double* out) noexcept {
  return api::call("ag_lr_linear", [&] {
    api::check_out(out);
    if (step < 0) fail(AG_ERR_INVALID_ARGUMENT, "step ", step, " is negative");
    if (total_steps < 1) fail(AG_ERR_INVALID_ARGUMENT, "total_steps ", total_steps, " must be >= 1");
    if (!(start_factor > 0.0 && start_factor <= 1.0)) {
      fail(AG_ERR_INVALID_ARGUMENT, "start_factor ", start_factor, " must lie in (0, 1]");
    }
    if (!(end_factor >= 0.0 && end_factor <= 1.0)) {
      fail(AG_ERR_INVALID_ARGUMENT, "end_factor ", end_factor, " must lie in [0, 1]");
    }
    const double t = static_cast<double>(step < total_steps ? step : total_steps);
    *out = base_lr * (start_factor + (end_factor - start_factor) * t / static_cast<double>(total_steps));
  });
}

}  // extern "C"
