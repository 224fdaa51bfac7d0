// Optimizers behind ag/optim.h: parameter groups, per-parameter state, and
// the step that runs the fused kernels of kernels/optim.h.
#pragma once

#include <cstdint>
#include <vector>

#include "ag/optim.h"
#include "core/tensor_impl.h"
#include "kernels/optim.h"

namespace ag::optim {

// Resolved hyper-parameters of one group (defaults filled in, checked).
struct Hyper {
  double lr = 0, momentum = 0, dampening = 0, weight_decay = 0;
  double beta1 = 0, beta2 = 0, eps = 0, alpha = 0, lr_decay = 0, initial_accumulator_value = 0;
  bool nesterov = false, amsgrad = false, centered = false, maximize = false;
};

// Fills the kind's defaults into the zero fields of o and checks the result.
Hyper resolve(int32_t kind, const ag_optimizer_options& o);

struct ParamState {
  Tensor param;
  int32_t group = 0;
  int64_t step = 0;
  Tensor state[3];  // slots as in kernels::optim_update
};

class Optimizer {
 public:
  static constexpr uint32_t kTag = 0x0B71A12Eu;
  Optimizer(int32_t kind, const Hyper& defaults) : kind_(kind), defaults_(defaults) {}
  ~Optimizer() { tag_ = 0; }
  bool valid() const { return tag_ == kTag; }

  void add_group(const std::vector<Tensor>& params, const Hyper& h);
  void step();
  void zero_grad();
  int32_t num_groups() const { return static_cast<int32_t>(groups_.size()); }
  int32_t num_params() const { return static_cast<int32_t>(params_.size()); }
  const Hyper& defaults() const { return defaults_; }
  int32_t kind() const { return kind_; }
  Hyper& group(int32_t i) { return groups_[static_cast<size_t>(i)]; }
  ParamState& param(int32_t i) { return params_[static_cast<size_t>(i)]; }
  // The state slot of `name` for this kind and group, or -1 if the kind
  // never keeps it. `kept` says whether the group's options keep it.
  int slot_of(const char* name, int32_t group, bool* kept) const;

 private:
  uint32_t tag_ = kTag;
  int32_t kind_;
  Hyper defaults_;
  std::vector<Hyper> groups_;
  std::vector<ParamState> params_;
  Context* ctx_ = nullptr;
};

// torch.nn.utils.clip_grad_norm_ / clip_grad_value_ over the gradients of params.
double clip_grad_norm(const std::vector<Tensor>& params, double max_norm, double norm_type);
void clip_grad_value(const std::vector<Tensor>& params, double clip_value);

}  // namespace ag::optim
