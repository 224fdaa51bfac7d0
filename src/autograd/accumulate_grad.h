// AccumulateGrad: the sink of a leaf that requires grad. The leaf owns it
// (AutogradMeta::grad_accumulator); it refers back to the leaf only weakly,
// so the leaf's gradient recorded under create_graph, whose graph ends here,
// makes no reference cycle. GraphRoot: the node that hands the seed
// gradients to the roots.
#pragma once

#include <atomic>
#include <mutex>

#include "autograd/node.h"
#include "core/spin_lock.h"

namespace ag {

class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(TensorImpl& variable);
  ~AccumulateGrad() override;
  const char* name() const override { return "AccumulateGrad"; }
  bool is_accumulate_grad() const override { return true; }
  void apply(TensorList& grads, TensorList& out) override;
  // The leaf with a new reference, or null once it died.
  Tensor variable() const;
  // Called by the leaf's AutogradMeta as it dies.
  void forget_variable();
  // A view of the leaf's data (its shape, strides, offset and tag) for the
  // ops that save it (SavedTensor): made once and shared by all of them
  // while the leaf lives, as a leaf's storage and layout never change (a
  // fan-in saves one leaf per op). Always with the leaf's current tag. Call
  // holding a reference to the leaf.
  Tensor saved_view(const TensorImpl& leaf);
  // Whether the shared view exists and no saved tensor holds it: then it
  // is no other user of the leaf's storage.
  bool saved_view_unused() const {
    const TensorImpl* v = saved_view_.load(std::memory_order_acquire);
    return v && v->use_count() == 1;
  }

 private:
  mutable SpinLock mu_;  // guards variable_ and the making of saved_view_
  TensorImpl* variable_;  // weak: cleared by forget_variable
  // saved_view's view, once made: one reference, dropped when the leaf dies
  // (forget_variable) or by the destructor.
  std::atomic<TensorImpl*> saved_view_{nullptr};
};

// The leaf's AccumulateGrad, created on first use; shared by every graph
// that uses the leaf.
Ref<Node> grad_accumulator(TensorImpl& leaf);

// Sums `incoming` into the gradient of leaf (or of a non-leaf that retains
// it) and returns nothing; the leaf's lock is held across the sum.
void accumulate_into(TensorImpl& t, Tensor& incoming);

class GraphRoot final : public Node {
 public:
  // n roots, each seeded with the seed of the same index.
  GraphRoot(const Tensor* roots, const Tensor* seeds, size_t n);
  const char* name() const override { return "GraphRoot"; }
  void apply(TensorList& grads, TensorList& out) override;

 private:
  SmallVector<Tensor, 1> seeds_;
};

}  // namespace ag
