// tests/bench/libtorch_workloads.h - the ops of WORKLOADS.md's a, b, d and e
// on libtorch's C++ API, shared by bench_libtorch.cpp (separate processes)
// and bench_duel.cpp (one process with ag). Timing stays with the callers.
#pragma once

#include <torch/torch.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace workloads {

constexpr int kChainOps = 10000, kBranches = 1000;

// a, b: y * a, y + b, tanh(y) in turn, kChainOps ops.
inline torch::Tensor chain(torch::Tensor y, const torch::Tensor& a, const torch::Tensor& b) {
  for (int i = 0; i < kChainOps; ++i) {
    switch (i % 3) {
      case 0: y = y * a; break;
      case 1: y = y + b; break;
      default: y = torch::tanh(y); break;
    }
  }
  return y;
}

// e: sum over i of (w_i * x).sum().
inline torch::Tensor fanin_loss(const torch::Tensor& x, const std::vector<torch::Tensor>& w) {
  torch::Tensor loss = (w[0] * x).sum();
  for (size_t i = 1; i < w.size(); ++i) loss = loss + (w[i] * x).sum();
  return loss;
}

// d: the 784-256-256-10 MLP; params W0, b0, W1, b1, W2, b2, each W as
// [in, out] (matmul layout) or [out, in] (linear: F.linear, fused addmm).
struct Mlp {
  torch::Tensor X, target;
  std::vector<torch::Tensor> params;
  bool linear = false;
};

// det(count, seed, lo, hi) gives WORKLOADS.md's det_uniform as a tensor.
template <class Det>
Mlp mlp_model(Det det, bool linear) {
  const int64_t batch = 64, dims[4] = {784, 256, 256, 10};
  Mlp m;
  m.linear = linear;
  m.X = det(batch * 784, 21, 0.0, 1.0).reshape({batch, 784});
  m.target = torch::arange(batch, torch::kInt64).remainder(10);
  for (int l = 0; l < 3; ++l) {
    const double r = 1.0 / std::sqrt(double(dims[l]));
    torch::Tensor w = det(dims[l] * dims[l + 1], uint32_t(22 + 2 * l), -r, r).reshape({dims[l], dims[l + 1]});
    if (linear) w = w.t().contiguous();  // [out, in], the same numbers
    m.params.push_back(w.requires_grad_(true));
    m.params.push_back(det(dims[l + 1], uint32_t(23 + 2 * l), -r, r).requires_grad_(true));
  }
  return m;
}

inline torch::Tensor mlp_loss(const Mlp& m) {
  auto layer = [&](const torch::Tensor& h, int l) {
    const torch::Tensor &w = m.params[size_t(2 * l)], &b = m.params[size_t(2 * l + 1)];
    return m.linear ? torch::nn::functional::linear(h, w, b) : torch::matmul(h, w) + b;
  };
  torch::Tensor h = torch::relu(layer(m.X, 0));
  h = torch::relu(layer(h, 1));
  return torch::nll_loss(torch::log_softmax(layer(h, 2), 1), m.target);
}

// p -= lr * p.grad in one pass; p.grad = none.
inline void mlp_update(Mlp& m, double lr) {
  torch::NoGradGuard off;
  for (torch::Tensor& p : m.params) {
    p.sub_(p.grad(), lr);
    p.mutable_grad() = torch::Tensor();
  }
}

}  // namespace workloads
