// Fused optimizer updates (src/optim/): one pass over a parameter's data,
// gradient and state per step, elementwise, so any split of the element
// range gives the same bits.
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace ag::kernels {

enum class OptimKind : int32_t { Sgd = 1, Adam = 2, AdamW = 3, RmsProp = 4, Adagrad = 5 };

// The scalars of one step of one parameter; every double is rounded once to
// the parameter's dtype, as PyTorch passes Python floats to its kernels.
struct OptimStep {
  OptimKind kind;
  bool maximize, nesterov, amsgrad, centered;
  bool first;           // SGD: the momentum buffer starts as the gradient
  double lr;            // SGD, RMSprop: -lr is the update's factor
  double momentum, dampening, weight_decay;
  double beta1, beta2, alpha, eps;
  double step_size;     // Adam/AdamW: lr / (1 - beta1^t); Adagrad: lr / (1 + (t - 1) lr_decay)
  double bias2_sqrt;    // Adam/AdamW: sqrt(1 - beta2^t)
  double decay;         // AdamW: 1 - lr * weight_decay
};

// Updates n contiguous elements of param (f32 or f64) from grad and the
// state buffers of the kind (null when unused):
//   SGD      s0 momentum_buffer
//   Adam(W)  s0 exp_avg, s1 exp_avg_sq, s2 max_exp_avg_sq
//   RMSprop  s0 square_avg, s1 momentum_buffer, s2 grad_avg
//   Adagrad  s0 sum
void optim_update(DType dt, const OptimStep& s, char* param, const char* grad, char* s0, char* s1, char* s2,
                  int64_t n);

// y += alpha * x over n contiguous elements (f32 or f64): plain SGD's
// update with lr = -alpha, so the product is rounded before the sum.
void add_scaled(DType dt, char* y, const char* x, double alpha, int64_t n);

// The HWY_TARGET optim_update dispatches to (for the all-targets test).
int64_t optim_target();

}  // namespace ag::kernels
