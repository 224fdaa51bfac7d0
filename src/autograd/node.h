// Node, Edge and AutogradMeta: the recorded graph.
//
// A Node is the backward of one forward op. Its inputs are the gradients of
// the op's outputs (one per output, described by input_meta); its outputs are
// the gradients of the op's inputs, sent along next_edges. An Edge names a
// node and which of its inputs the gradient goes to. Leaves that require grad
// end in an AccumulateGrad node.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "autograd/small_vector.h"
#include "core/refcount.h"
#include "core/tensor_impl.h"

namespace ag {

class Node;
struct NodeHooks;

struct Edge {
  Ref<Node> fn;
  uint32_t input_nr = 0;
  // The elements of the gradient sent along the edge (saturated at
  // UINT32_MAX), set by whoever makes the edge (gradient_edge,
  // add_next_edge_to). The parallel engine's cost bound reads it here
  // instead of in fn's input metadata, a cache line of another node per
  // edge (engine.cc).
  uint32_t grad_numel = 0;
  bool valid() const { return static_cast<bool>(fn); }
};

// A tensor's element count as an Edge::grad_numel.
inline uint32_t edge_numel(int64_t numel) {
  return numel < int64_t{UINT32_MAX} ? static_cast<uint32_t>(numel) : UINT32_MAX;
}

// dtype and shape of one node input (= one forward output); the engine checks
// every gradient against it. Up to kInlineDims sizes are kept inline, longer
// shapes in a heap block: a Dims holds kMaxDims, and the backward walk, which
// touches every node, misses the cache less on small nodes.
class InputMeta {
 public:
  static constexpr int kInlineDims = 4;

  InputMeta(DType d, const Dims& s) : dtype(d), ndim_(s.size()) { init(s.data()); }
  InputMeta(const InputMeta& o) : dtype(o.dtype), ndim_(o.ndim_) { init(o.sizes()); }
  InputMeta& operator=(const InputMeta&) = delete;
  ~InputMeta() {
    if (ndim_ > kInlineDims) delete[] heap_;
  }

  int ndim() const { return ndim_; }
  const int64_t* sizes() const { return ndim_ > kInlineDims ? heap_ : inline_; }
  Dims shape() const { return Dims(sizes(), ndim_); }
  // Whether a gradient of dtype d and shape s fits this input.
  bool fits(DType d, const Dims& s) const {
    if (d != dtype || s.size() != ndim_) return false;
    const int64_t* v = sizes();
    for (int i = 0; i < ndim_; ++i) {
      if (s[i] != v[i]) return false;
    }
    return true;
  }

  DType dtype;

 private:
  void init(const int64_t* v) {
    int64_t* dst = inline_;
    if (ndim_ > kInlineDims) dst = heap_ = new int64_t[ndim_];
    for (int i = 0; i < ndim_; ++i) dst[i] = v[i];
  }
  int32_t ndim_;
  union {
    int64_t inline_[kInlineDims];
    int64_t* heap_;
  };
};

// Gradients flowing into or out of a node; a null entry means "no gradient".
using TensorList = SmallVector<Tensor, 2>;

class Node : public RefCounted {
 public:
  // Priority of nodes that must run as soon as they are ready (AccumulateGrad).
  static constexpr uint64_t kMaxSequenceNr = UINT64_MAX;

  virtual const char* name() const = 0;
  // grads has one entry per input (never all null); out receives one entry
  // per next edge, null where no gradient flows. Runs with grad mode set to
  // the backward call's create_graph. Throws ag::Error.
  virtual void apply(TensorList& grads, TensorList& out) = 0;
  // Frees saved tensors after a backward without retain_graph.
  virtual void release_variables() {}
  // Whether the node is a leaf's AccumulateGrad (captured, not run, by ag_grad).
  virtual bool is_accumulate_grad() const { return false; }
  // Bytes of the tensors the node still keeps for its backward (0 once released).
  virtual size_t saved_bytes() const { return 0; }
  // Whether the node saved t itself (an input kept as is, not a view).
  virtual bool saves(const TensorImpl* t) const {
    (void)t;
    return false;
  }
  // Whether apply calls the user's code (custom functions): such a node runs
  // on the thread that called backward, never as an arena task.
  virtual bool runs_user_code() const { return false; }

  uint64_t sequence_nr() const { return sequence_nr_; }
  uint32_t topological_nr() const { return topological_nr_; }
  // The thread's tag scope when the forward op recorded the node (interned,
  // lives as long as the process), or null.
  const char* tag() const { return tag_; }
  size_t num_inputs() const { return input_meta_.size(); }
  size_t num_outputs() const { return next_edges_.size(); }
  const Edge& next_edge(size_t i) const { return next_edges_[i]; }
  const InputMeta& input_meta(size_t i) const { return input_meta_[i]; }
  // The shape of forward input i, read from the node its edge leads to
  // (nodes keep no copy); only for an input whose gradient is needed.
  Dims input_shape(size_t i) const {
    const Edge& e = next_edges_[i];
    return e.fn->input_meta(e.input_nr).shape();
  }
  // Whether the gradient of forward input i is needed (its edge leads somewhere).
  bool needs_input_grad(size_t i) const { return i < next_edges_.size() && next_edges_[i].valid(); }

  // Wiring, used while the node is built (never after it is shared).
  void add_next_edge(Edge e);
  // The same for an edge to fn, which gains a reference.
  void add_next_edge_to(Node* fn, uint32_t input_nr, uint32_t grad_numel) {
    topological_nr_ = std::max(topological_nr_, fn->topological_nr_ + 1);
    fn->retain();
    Edge& e = next_edges_.emplace_back();
    e.fn = Ref<Node>::adopt(fn);
    e.input_nr = input_nr;
    e.grad_numel = grad_numel;
  }
  // An edge to nothing (an input that takes no gradient).
  void add_null_edge() { next_edges_.emplace_back(); }
  uint32_t add_input(DType dtype, const Dims& shape) {
    input_meta_.emplace_back(dtype, shape);
    return static_cast<uint32_t>(input_meta_.size() - 1);
  }

  // Hooks and retained gradients, null until the first registration: the
  // engine checks this one pointer per node.
  NodeHooks* hooks() const { return hooks_.load(std::memory_order_acquire); }
  NodeHooks& ensure_hooks();

  // Where a running backward keeps this node's bookkeeping: `index` is the
  // node's task in the pass whose id is in `owner`. Saves a hash map lookup
  // per edge. Only a pass that started while no other ran uses slots; one
  // that overlaps another (nested or concurrent backward calls) keeps a map
  // of its own. Engine only.
  struct EngineSlot {
    std::atomic<uint64_t> owner{0};
    uint32_t index = 0;
  };
  EngineSlot& engine_slot() const { return engine_slot_; }

 protected:
  Node();
  // For the engine's own nodes (AccumulateGrad, GraphRoot): no tag.
  explicit Node(uint64_t sequence_nr) : sequence_nr_(sequence_nr) {}
  ~Node() override {
    if (NodeHooks* h = hooks_.load(std::memory_order_acquire)) destroy_hooks(h);
  }

 private:
  static void destroy_hooks(NodeHooks* h);

  // What the engine's dependency walk reads of every node (the slot and the
  // first edge's target) sits in the object's first cache line, which the
  // walk is the first to touch; the rest of what it runs on follows.
  mutable EngineSlot engine_slot_;
  SmallVector<Edge, 2> next_edges_;
  std::atomic<NodeHooks*> hooks_{nullptr};
  uint64_t sequence_nr_;
  uint32_t topological_nr_ = 0;
  const char* tag_ = nullptr;
  SmallVector<InputMeta, 1> input_meta_;
};

// Next sequence number of the calling thread: later nodes get larger numbers.
uint64_t next_sequence_nr();

// What a tensor knows of autograd beyond its history (TensorImpl::grad_fn):
// created for leaves that require grad, named tensors, non-leaves that
// retain their gradient, and tensors given a gradient; op outputs have none.
struct AutogradMeta final : AutogradMetaBase {
  explicit AutogradMeta(TensorImpl& t) : tensor(&t) {}
  ~AutogradMeta() override;

  TensorImpl* tensor;          // the tensor this belongs to
  bool requires_grad = false;  // set by the user on leaves
  bool retains_grad = false;   // a non-leaf whose gradient is kept (retain_grad)

  // The user's name for the tensor, shown in error messages; shared (not
  // copied) with the views that saved tensors keep.
  std::shared_ptr<const std::string> tag;

  std::mutex mu;  // guards grad and the creation of the accumulator
  Tensor grad;    // accumulated gradient of a leaf (or of a non-leaf that retains it)
  // The leaf's AccumulateGrad, created on first use. The leaf owns it and the
  // node refers back only weakly, so a leaf's gradient recorded under
  // create_graph (whose graph ends in this node) makes no reference cycle.
  Ref<Node> grad_accumulator;
  // The same pointer, published once grad_accumulator is set: every op on
  // the leaf reads it without taking the lock.
  std::atomic<Node*> accumulator{nullptr};
};

inline AutogradMeta* meta_of(const TensorImpl& t) { return static_cast<AutogradMeta*>(t.autograd_meta()); }
// " 'tag'" for a tagged tensor, "" otherwise (for messages).
std::string tag_suffix(const TensorImpl& t);
// t's metadata, created if missing (thread-safe).
AutogradMeta& ensure_meta(TensorImpl& t);

// The node that produced t (null for a leaf), and t's history.
inline Node* grad_fn_of(const TensorImpl& t) { return static_cast<Node*>(t.grad_fn()); }
void set_grad_fn(TensorImpl& t, Ref<Node> fn, uint32_t output_nr);

inline bool requires_grad(const TensorImpl& t) {
  if (t.grad_fn()) return true;
  const AutogradMeta* m = meta_of(t);
  return m && m->requires_grad;
}
inline bool is_leaf(const TensorImpl& t) { return !t.grad_fn(); }

// Where a gradient for t goes: (grad_fn, output_nr) for a non-leaf, the
// leaf's AccumulateGrad for a leaf that requires grad, an invalid edge else.
Edge gradient_edge(const TensorImpl& t);

// Wires a new node during the forward pass: edges to the inputs' gradient
// edges, and topological_nr one above the highest of them.
void collect_next_edges(Node& n, std::initializer_list<const TensorImpl*> inputs);
// Makes `output` the next output of n: records its dtype and shape as an
// input of n and sets its grad_fn and output_nr.
void set_history(const Ref<Node>& n, TensorImpl& output);
// The same, handing the caller's reference to n over to the output.
void set_history(Ref<Node>&& n, TensorImpl& output);

}  // namespace ag
