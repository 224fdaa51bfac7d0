#include "autograd/accumulate_grad.h"

#include "autograd/grad_math.h"
#include "autograd/grad_mode.h"

namespace ag {

AccumulateGrad::AccumulateGrad(Tensor variable)
    : Node(kMaxSequenceNr), variable_(std::move(variable)) {
  add_input(variable_->dtype(), variable_->shape());
}

AccumulateGrad::~AccumulateGrad() {
  AutogradMeta* m = meta_of(*variable_);
  std::lock_guard<std::mutex> lock(m->mu);
  if (m->grad_accumulator == this) m->grad_accumulator = nullptr;
}

void AccumulateGrad::apply(TensorList& grads, TensorList&) {
  Tensor& incoming = grads[0];
  if (!incoming) return;
  AutogradMeta* m = meta_of(*variable_);
  // Held across the sum so that concurrent backward calls into a shared leaf
  // accumulate one after the other.
  std::lock_guard<std::mutex> lock(m->mu);
  if (m->grad) {
    // Out of place, so a gradient handle the caller holds stays a snapshot.
    m->grad = grad_sum(m->grad, incoming);
  } else if (incoming->use_count() == 1 && incoming->storage()->use_count() == 1 && incoming->is_contiguous()) {
    m->grad = std::move(incoming);  // nobody else sees this buffer: adopt it
  } else {
    // Shared (another input's gradient, the caller's grad_root, a broadcast
    // view): copy, recorded under create_graph.
    m->grad = grad_enabled() ? grad_copy_recorded(incoming) : grad_clone(incoming);
  }
}

Ref<Node> grad_accumulator(TensorImpl& leaf) {
  AutogradMeta& m = ensure_meta(leaf);
  std::lock_guard<std::mutex> lock(m.mu);
  if (m.grad_accumulator && m.grad_accumulator->try_retain()) {
    return Ref<Node>::adopt(m.grad_accumulator);
  }
  Ref<Node> acc = make_ref<AccumulateGrad>(Tensor::share(&leaf));
  m.grad_accumulator = acc.get();
  return acc;
}

GraphRoot::GraphRoot(const Edge& root, Tensor seed) : Node(kMaxSequenceNr), seed_(std::move(seed)) {
  add_next_edge(root);
}

void GraphRoot::apply(TensorList&, TensorList& out) {
  out[0] = seed_;
}

}  // namespace ag
