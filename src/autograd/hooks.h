// Hooks on the graph and retained gradients of non-leaves.
//
// A Hook is what a registration returns: the C API hands it out as an
// ag_hook handle. A node's NodeHooks (allocated on the first registration)
// lists the hooks that run around that node:
//   Tensor          sees and may replace the gradient of one node input (a
//                   non-leaf tensor's gradient; for a leaf, the input of its
//                   AccumulateGrad) before the node runs;
//   PostAccumulate  runs after AccumulateGrad summed into the leaf's .grad;
//   NodePre         sees and may replace all gradients flowing into the node;
//   NodePost        sees and may replace the gradients the node produced.
// Callbacks run without any lock held, so they may call back into ag.
#pragma once

#include <atomic>
#include <mutex>
#include <vector>

#include "autograd/node.h"
#include "core/handle.h"

namespace ag {

constexpr uint32_t kHookTag = 0xA6400C5Eu;

class Hook : public RefCounted, public HandleState<kHookTag> {
 public:
  enum class Kind : uint8_t { Tensor, PostAccumulate, NodePre, NodePost };

  Hook(Kind kind, uint32_t input_nr) : kind_(kind), input_nr_(input_nr) {}
  Kind kind() const { return kind_; }
  uint32_t input_nr() const { return input_nr_; }
  void set_input_nr(uint32_t i) { input_nr_ = i; }  // before registration only
  bool removed() const { return removed_.load(std::memory_order_acquire); }
  void mark_removed() { removed_.store(true, std::memory_order_release); }

  // Tensor: grads = {gradient}; PostAccumulate: grads = {the leaf};
  // NodePre: grads = the node's inputs; NodePost: grads = the node's outputs,
  // other = its inputs. Entries of grads may be replaced (the engine checks
  // what comes back). Throws ag::Error.
  virtual void run(TensorList& grads, const TensorList* other) = 0;

  // The node whose list holds the hook: set when registered, cleared when the
  // node dies (weak, so the list -> hook -> node makes no cycle).
  void set_owner(Node* n);
  // Marks the hook removed and takes it out of its node's list, if the node lives.
  void remove();

 private:
  Kind kind_;
  uint32_t input_nr_;
  std::atomic<bool> removed_{false};
  std::mutex owner_mu_;
  Node* owner_ = nullptr;
};

struct NodeHooks {
  ~NodeHooks();

  // A non-leaf that retains its gradient: the tensor is referred to weakly,
  // its AutogradMeta clears the slot when it dies.
  struct Retained {
    uint32_t input_nr;
    TensorImpl* tensor;
  };

  // Adds h to the list of `owner` (the node holding this NodeHooks).
  void add(Node* owner, Ref<Hook> h);
  // Removes h from the list (no-op if it is not there).
  void remove(const Hook* h);
  // The live hooks of one kind (any input_nr), in registration order.
  std::vector<Ref<Hook>> snapshot(Hook::Kind kind) const;
  bool has(Hook::Kind kind) const;

  void retain(uint32_t input_nr, TensorImpl* t);
  void forget_retained(uint32_t input_nr);
  // The retaining tensor of input_nr, with a new reference, or null.
  Tensor retained(uint32_t input_nr) const;
  bool any_retained() const;

  mutable std::mutex mu;
  std::vector<Ref<Hook>> hooks;
  std::vector<Retained> retains;
};

// A retained gradient held back for later (a budgeted backward sums them in
// at its end): the retaining tensor and the gradient.
struct DeferredGrad {
  Tensor tensor;
  Tensor grad;
};

// Runs the Tensor hooks of `node` on grads (before the node) and stores
// retained gradients, or, given `defer`, appends them there instead. Does
// nothing when the node has no hooks.
void run_tensor_hooks(Node& node, TensorList& grads, std::vector<DeferredGrad>* defer = nullptr);
// Sums g into the retained gradient of t (as run_tensor_hooks does).
void store_retained(TensorImpl& t, const Tensor& g);
// Runs node pre-hooks on the node's inputs.
void run_node_pre_hooks(Node& node, TensorList& grads);
// Runs node post-hooks on the node's outputs.
void run_node_post_hooks(Node& node, TensorList& out, const TensorList& grads);

}  // namespace ag
