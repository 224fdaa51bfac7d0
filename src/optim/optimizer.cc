// Optimizers: groups, state, and the step (see ag/optim.h).
#include "optim/optimizer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>

#include "autograd/grad_math.h"
#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "core/context.h"
#include "core/error.h"
#include "core/storage.h"
#include "ops/inplace.h"
#include "ops/ops.h"

namespace ag::optim {

namespace {

bool uses(int32_t kind, const char* field) {
  const bool sgd = kind == AG_OPTIM_SGD, adam = kind == AG_OPTIM_ADAM || kind == AG_OPTIM_ADAMW;
  const bool rms = kind == AG_OPTIM_RMSPROP, ada = kind == AG_OPTIM_ADAGRAD;
  if (!std::strcmp(field, "momentum")) return sgd || rms;
  if (!std::strcmp(field, "dampening") || !std::strcmp(field, "nesterov")) return sgd;
  if (!std::strcmp(field, "beta1") || !std::strcmp(field, "beta2") || !std::strcmp(field, "amsgrad")) return adam;
  if (!std::strcmp(field, "eps")) return !sgd;
  if (!std::strcmp(field, "alpha") || !std::strcmp(field, "centered")) return rms;
  if (!std::strcmp(field, "lr_decay") || !std::strcmp(field, "initial_accumulator_value")) return ada;
  return true;  // lr, weight_decay, maximize
}

const char* kind_name(int32_t kind) {
  switch (kind) {
    case AG_OPTIM_SGD: return "SGD";
    case AG_OPTIM_ADAM: return "Adam";
    case AG_OPTIM_ADAMW: return "AdamW";
    case AG_OPTIM_RMSPROP: return "RMSprop";
    case AG_OPTIM_ADAGRAD: return "Adagrad";
  }
  return "?";
}

// value, or the default when value is 0 and its zero bit is not set.
double pick(double value, uint32_t zero_fields, uint32_t bit, double def) {
  return (value == 0.0 && !(zero_fields & bit)) ? def : value;
}

void check_nonneg(const char* name, double v) {
  if (!(v >= 0.0) || std::isinf(v)) fail(AG_ERR_INVALID_ARGUMENT, name, " ", v, " must be finite and >= 0");
}

void check_unit(const char* name, double v) {
  if (!(v >= 0.0 && v < 1.0)) fail(AG_ERR_INVALID_ARGUMENT, name, " ", v, " must lie in [0, 1)");
}

}  // namespace

Hyper resolve(int32_t kind, const ag_optimizer_options& o) {
  if (kind < AG_OPTIM_SGD || kind > AG_OPTIM_ADAGRAD) {
    fail(AG_ERR_INVALID_ARGUMENT, "kind ", kind, " is not one of AG_OPTIM_SGD .. AG_OPTIM_ADAGRAD");
  }
  const struct {
    const char* name;
    bool set;
  } fields[] = {{"momentum", o.momentum != 0.0},
                {"dampening", o.dampening != 0.0},
                {"beta1", o.beta1 != 0.0},
                {"beta2", o.beta2 != 0.0},
                {"eps", o.eps != 0.0},
                {"alpha", o.alpha != 0.0},
                {"lr_decay", o.lr_decay != 0.0},
                {"initial_accumulator_value", o.initial_accumulator_value != 0.0},
                {"nesterov", o.nesterov != 0},
                {"amsgrad", o.amsgrad != 0},
                {"centered", o.centered != 0}};
  for (const auto& f : fields) {
    if (f.set && !uses(kind, f.name)) fail(AG_ERR_INVALID_ARGUMENT, kind_name(kind), " has no option ", f.name);
  }
  const uint32_t z = o.zero_fields;
  Hyper h;
  const bool big_lr = kind == AG_OPTIM_RMSPROP || kind == AG_OPTIM_ADAGRAD;
  h.lr = pick(o.lr, z, AG_OPTIM_ZERO_LR, big_lr ? 1e-2 : 1e-3);
  h.momentum = o.momentum;
  h.dampening = o.dampening;
  h.weight_decay = pick(o.weight_decay, z, AG_OPTIM_ZERO_WEIGHT_DECAY, kind == AG_OPTIM_ADAMW ? 1e-2 : 0.0);
  const bool adam = kind == AG_OPTIM_ADAM || kind == AG_OPTIM_ADAMW;
  h.beta1 = adam ? pick(o.beta1, z, AG_OPTIM_ZERO_BETA1, 0.9) : 0.0;
  h.beta2 = adam ? pick(o.beta2, z, AG_OPTIM_ZERO_BETA2, 0.999) : 0.0;
  h.eps = kind == AG_OPTIM_SGD ? 0.0 : pick(o.eps, z, AG_OPTIM_ZERO_EPS, kind == AG_OPTIM_ADAGRAD ? 1e-10 : 1e-8);
  h.alpha = kind == AG_OPTIM_RMSPROP ? pick(o.alpha, z, AG_OPTIM_ZERO_ALPHA, 0.99) : 0.0;
  h.lr_decay = o.lr_decay;
  h.initial_accumulator_value = o.initial_accumulator_value;
  h.nesterov = o.nesterov != 0;
  h.amsgrad = o.amsgrad != 0;
  h.centered = o.centered != 0;
  h.maximize = o.maximize != 0;
  check_nonneg("lr", h.lr);
  check_nonneg("momentum", h.momentum);
  check_nonneg("dampening", h.dampening);
  check_nonneg("weight_decay", h.weight_decay);
  check_nonneg("eps", h.eps);
  check_nonneg("lr_decay", h.lr_decay);
  check_nonneg("initial_accumulator_value", h.initial_accumulator_value);
  if (adam) {
    check_unit("beta1", h.beta1);
    check_unit("beta2", h.beta2);
  }
  if (kind == AG_OPTIM_RMSPROP) check_nonneg("alpha", h.alpha);
  if (h.nesterov && (h.momentum <= 0.0 || h.dampening != 0.0)) {
    fail(AG_ERR_INVALID_ARGUMENT, "nesterov needs momentum > 0 and dampening 0 (momentum ", h.momentum,
         ", dampening ", h.dampening, ")");
  }
  return h;
}

void Optimizer::add_group(const std::vector<Tensor>& params, const Hyper& h) {
  Context* ctx = ctx_;
  for (size_t i = 0; i < params.size(); ++i) {
    const TensorImpl& p = *params[i];
    if (!is_floating(p.dtype())) fail(AG_ERR_DTYPE, "params[", i, "] has dtype ", dtype_name(p.dtype()), "; need f32 or f64");
    if (!is_leaf(p)) fail(AG_ERR_GRAPH, "params[", i, "] is not a leaf (it was produced by a recorded op)");
    if (!p.is_contiguous()) fail(AG_ERR_UNSUPPORTED, "params[", i, "] is not contiguous");
    if (p.storage()->read_only()) fail(AG_ERR_UNSUPPORTED, "params[", i, "]: ", kReadOnlyMessage);
    if (ctx == nullptr) ctx = p.context();
    if (p.context() != ctx) fail(AG_ERR_CONTEXT, "params[", i, "] belongs to another context than the optimizer's parameters");
    for (size_t j = 0; j < i; ++j) {
      if (params[j].get() == &p) fail(AG_ERR_INVALID_ARGUMENT, "params[", i, "] is params[", j, "] again");
    }
    for (size_t j = 0; j < params_.size(); ++j) {
      if (params_[j].param.get() == &p) {
        fail(AG_ERR_INVALID_ARGUMENT, "params[", i, "] is already parameter ", j, " of the optimizer");
      }
    }
  }
  std::vector<ParamState> added(params.size());
  const int32_t group = num_groups();
  for (size_t i = 0; i < params.size(); ++i) {
    added[i].param = params[i];
    added[i].group = group;
    if (kind_ == AG_OPTIM_ADAGRAD) {
      added[i].state[0] = ops::full(ctx, params[i]->dtype(), params[i]->shape(), h.initial_accumulator_value);
    }
  }
  groups_.reserve(groups_.size() + 1);
  params_.reserve(params_.size() + added.size());
  groups_.push_back(h);
  for (auto& a : added) params_.push_back(std::move(a));
  ctx_ = ctx;
}

int Optimizer::slot_of(const char* name, int32_t group, bool* kept) const {
  const Hyper& h = groups_[static_cast<size_t>(group)];
  auto is = [&](const char* n) { return std::strcmp(name, n) == 0; };
  *kept = true;
  switch (kind_) {
    case AG_OPTIM_SGD:
      if (is("momentum_buffer")) return *kept = h.momentum != 0.0, 0;
      break;
    case AG_OPTIM_ADAM:
    case AG_OPTIM_ADAMW:
      if (is("exp_avg")) return 0;
      if (is("exp_avg_sq")) return 1;
      if (is("max_exp_avg_sq")) return *kept = h.amsgrad, 2;
      break;
    case AG_OPTIM_RMSPROP:
      if (is("square_avg")) return 0;
      if (is("momentum_buffer")) return *kept = h.momentum > 0.0, 1;
      if (is("grad_avg")) return *kept = h.centered, 2;
      break;
    case AG_OPTIM_ADAGRAD:
      if (is("sum")) return 0;
      break;
  }
  return -1;
}

namespace {

// What one parameter needs for this step.
struct Work {
  ParamState* ps;
  Tensor grad;  // contiguous, not sharing the parameter's storage
  bool first;   // SGD momentum buffer starts as the gradient
};

Tensor zeros_for(const Tensor& p) { return ops::full(p->context(), p->dtype(), p->shape(), 0.0); }

}  // namespace

void Optimizer::step() {
  GradModeGuard off(false);
  // Everything that can fail (allocation) happens before any write.
  std::vector<Work> work;
  for (auto& ps : params_) {
    Tensor g;
    if (AutogradMeta* m = meta_of(*ps.param)) {
      std::lock_guard<std::mutex> lock(m->mu);
      g = m->grad;
    }
    if (!g) continue;
    if (!g->is_contiguous() || g->storage() == ps.param->storage()) g = grad_clone(g);
    const Hyper& h = groups_[static_cast<size_t>(ps.group)];
    bool first = false;
    auto ensure = [&](int slot) {
      if (!ps.state[slot]) ps.state[slot] = zeros_for(ps.param);
    };
    switch (kind_) {
      case AG_OPTIM_SGD:
        if (h.momentum != 0.0 && !ps.state[0]) {
          ps.state[0] = empty(ps.param->context(), ps.param->dtype(), ps.param->shape());
          first = true;
        }
        break;
      case AG_OPTIM_ADAM:
      case AG_OPTIM_ADAMW:
        ensure(0);
        ensure(1);
        if (h.amsgrad) ensure(2);
        break;
      case AG_OPTIM_RMSPROP:
        ensure(0);
        if (h.momentum > 0.0) ensure(1);
        if (h.centered) ensure(2);
        break;
      case AG_OPTIM_ADAGRAD:
        ensure(0);
        break;
    }
    work.push_back(Work{&ps, std::move(g), first});
  }
  for (Work& w : work) {
    ParamState& ps = *w.ps;
    const Hyper& h = groups_[static_cast<size_t>(ps.group)];
    ps.step += 1;
    const double t = static_cast<double>(ps.step);
    kernels::OptimStep s{};
    s.kind = static_cast<kernels::OptimKind>(kind_);
    s.maximize = h.maximize;
    s.nesterov = h.nesterov;
    s.amsgrad = h.amsgrad;
    s.centered = h.centered;
    s.first = w.first;
    s.lr = h.lr;
    s.momentum = h.momentum;
    s.dampening = h.dampening;
    s.weight_decay = h.weight_decay;
    s.beta1 = h.beta1;
    s.beta2 = h.beta2;
    s.alpha = h.alpha;
    s.eps = h.eps;
    if (kind_ == AG_OPTIM_ADAM || kind_ == AG_OPTIM_ADAMW) {
      s.step_size = h.lr / (1.0 - std::pow(h.beta1, t));
      s.bias2_sqrt = std::sqrt(1.0 - std::pow(h.beta2, t));
      s.decay = 1.0 - h.lr * h.weight_decay;
    } else if (kind_ == AG_OPTIM_ADAGRAD) {
      s.step_size = h.lr / (1.0 + (t - 1.0) * h.lr_decay);
    }
    TensorImpl& p = *ps.param;
    const size_t item = itemsize(p.dtype());
    auto at = [&](const Tensor& x, int64_t off) { return x ? x->data() + off * static_cast<int64_t>(item) : nullptr; };
    p.context()->parallel_for(p.numel(), ag::Work::Optimizer, [&](int64_t b, int64_t e) {
      kernels::optim_update(p.dtype(), s, at(ps.param, b), at(w.grad, b), at(ps.state[0], b), at(ps.state[1], b),
                            at(ps.state[2], b), e - b);
    });
    p.storage()->bump_version();
  }
}

void Optimizer::zero_grad() {
  for (auto& ps : params_) {
    if (AutogradMeta* m = meta_of(*ps.param)) {
      Tensor old;
      {
        std::lock_guard<std::mutex> lock(m->mu);
        old = std::move(m->grad);
        m->grad = Tensor();
      }
    }
  }
}

namespace {

std::vector<Tensor> grads_of(const std::vector<Tensor>& params) {
  std::vector<Tensor> grads;
  for (size_t i = 0; i < params.size(); ++i) {
    Tensor g;
    if (AutogradMeta* m = meta_of(*params[i])) {
      std::lock_guard<std::mutex> lock(m->mu);
      g = m->grad;
    }
    if (!g) continue;
    if (g->storage()->read_only()) fail(AG_ERR_UNSUPPORTED, "the gradient of params[", i, "]: ", kReadOnlyMessage);
    if (!g->is_non_overlapping()) {
      fail(AG_ERR_UNSUPPORTED, "the gradient of params[", i, "] has elements that alias each other");
    }
    grads.push_back(std::move(g));
  }
  return grads;
}

template <class T>
double norm_of(const T* x, int64_t n, double p) {
  double acc = 0.0;
  if (std::isinf(p)) {
    for (int64_t i = 0; i < n; ++i) {
      const double a = std::fabs(static_cast<double>(x[i]));
      if (a > acc || std::isnan(a)) acc = a;
    }
    return acc;
  }
  if (p == 2.0) {
    for (int64_t i = 0; i < n; ++i) acc += static_cast<double>(x[i]) * static_cast<double>(x[i]);
    return std::sqrt(acc);
  }
  if (p == 1.0) {
    for (int64_t i = 0; i < n; ++i) acc += std::fabs(static_cast<double>(x[i]));
    return acc;
  }
  for (int64_t i = 0; i < n; ++i) acc += std::pow(std::fabs(static_cast<double>(x[i])), p);
  return std::pow(acc, 1.0 / p);
}

// Rounds v to dtype dt (PyTorch keeps the norms in the gradients' dtype).
double round_to(DType dt, double v) { return dt == DType::F32 ? static_cast<double>(static_cast<float>(v)) : v; }

}  // namespace

double clip_grad_norm(const std::vector<Tensor>& params, double max_norm, double norm_type) {
  if (!(max_norm >= 0.0)) fail(AG_ERR_INVALID_ARGUMENT, "max_norm ", max_norm, " must be >= 0");
  if (!(norm_type > 0.0)) fail(AG_ERR_INVALID_ARGUMENT, "norm_type ", norm_type, " must be > 0 (or INFINITY)");
  GradModeGuard off(false);
  const std::vector<Tensor> grads = grads_of(params);
  if (grads.empty()) return 0.0;
  // The total in the widest dtype among the gradients.
  DType wide = DType::F32;
  std::vector<double> norms;
  for (const Tensor& g0 : grads) {
    const Tensor g = g0->is_contiguous() ? g0 : grad_clone(g0);
    const double nrm = g->dtype() == DType::F64 ? norm_of(g->data_as<double>(), g->numel(), norm_type)
                                                 : norm_of(g->data_as<float>(), g->numel(), norm_type);
    norms.push_back(round_to(g->dtype(), nrm));
    if (g->dtype() == DType::F64) wide = DType::F64;
  }
  const double total = round_to(wide, norm_of(norms.data(), static_cast<int64_t>(norms.size()), norm_type));
  for (const Tensor& g : grads) {
    // max_norm / (total + 1e-6), clamped to 1, in the gradient's dtype.
    double coef;
    if (g->dtype() == DType::F32) {
      const float c = static_cast<float>(max_norm) / (static_cast<float>(total) + 1e-6f);
      coef = c < 1.0f ? c : 1.0f;
    } else {
      const double c = max_norm / (total + 1e-6);
      coef = c < 1.0 ? c : 1.0;
    }
    ops::mul_(g, ops::full(g->context(), g->dtype(), Dims(), coef));
  }
  return total;
}

void clip_grad_value(const std::vector<Tensor>& params, double clip_value) {
  if (!(clip_value >= 0.0)) fail(AG_ERR_INVALID_ARGUMENT, "clip_value ", clip_value, " must be >= 0");
  GradModeGuard off(false);
  for (const Tensor& g : grads_of(params)) ops::clamp_(g, -clip_value, clip_value);
}

}  // namespace ag::optim
