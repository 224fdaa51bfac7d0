// AccumulateGrad: the sink of a leaf that requires grad. It holds the leaf;
// the leaf holds it only weakly, so a leaf outlives its graphs but not the
// reverse. GraphRoot: the node that hands the seed gradients to the roots.
#pragma once

#include "autograd/node.h"

namespace ag {

class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(Tensor variable);
  ~AccumulateGrad() override;
  const char* name() const override { return "AccumulateGrad"; }
  void apply(TensorList& grads, TensorList& out) override;
  const Tensor& variable() const { return variable_; }

 private:
  Tensor variable_;
};

// The leaf's AccumulateGrad, created on first use; shared by every graph
// that uses the leaf.
Ref<Node> grad_accumulator(TensorImpl& leaf);

class GraphRoot final : public Node {
 public:
  GraphRoot(const Edge& root, Tensor seed);
  const char* name() const override { return "GraphRoot"; }
  void apply(TensorList& grads, TensorList& out) override;

 private:
  Tensor seed_;
};

}  // namespace ag
