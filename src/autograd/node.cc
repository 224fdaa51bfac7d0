#include "autograd/node.h"

#include <algorithm>

#include "autograd/accumulate_grad.h"
#include "autograd/hooks.h"
#include "autograd/tag_scope.h"

namespace ag {

namespace {
thread_local uint64_t tl_next_sequence_nr = 0;
}

uint64_t next_sequence_nr() { return tl_next_sequence_nr++; }

Node::Node() : sequence_nr_(next_sequence_nr()), tag_(current_tag()) {}

void Node::destroy_hooks(NodeHooks* h) { delete h; }

NodeHooks& Node::ensure_hooks() {
  NodeHooks* h = hooks();
  if (h) return *h;
  NodeHooks* fresh = new NodeHooks();
  if (hooks_.compare_exchange_strong(h, fresh, std::memory_order_acq_rel)) return *fresh;
  delete fresh;  // another thread installed one first
  return *h;
}

void Node::add_next_edge(Edge e) {
  if (e.fn) topological_nr_ = std::max(topological_nr_, e.fn->topological_nr() + 1);
  next_edges_.push_back(std::move(e));
}

AutogradMeta::~AutogradMeta() {
  if (grad_accumulator) static_cast<AccumulateGrad&>(*grad_accumulator).forget_variable();
  Node* fn = grad_fn_of(*tensor);  // the tensor's history outlives its metadata
  if (retains_grad && fn) {
    if (NodeHooks* h = fn->hooks()) h->forget_retained(tensor->output_nr());
  }
}

std::string tag_suffix(const TensorImpl& t) {
  const AutogradMeta* m = meta_of(t);
  return m && m->tag ? " '" + *m->tag + "'" : std::string();
}

AutogradMeta& ensure_meta(TensorImpl& t) {
  if (AutogradMeta* m = meta_of(t)) return *m;
  return *static_cast<AutogradMeta*>(t.install_autograd_meta(std::make_unique<AutogradMeta>(t)));
}

void set_grad_fn(TensorImpl& t, Ref<Node> fn, uint32_t output_nr) { t.set_grad_fn(std::move(fn), output_nr); }

Edge gradient_edge(const TensorImpl& t) {
  if (Node* fn = grad_fn_of(t)) return Edge{Ref<Node>::share(fn), t.output_nr(), edge_numel(t.numel())};
  AutogradMeta* m = meta_of(t);
  if (!m || !m->requires_grad) return {};
  return Edge{grad_accumulator(const_cast<TensorImpl&>(t)), 0, edge_numel(t.numel())};
}

void collect_next_edges(Node& n, std::initializer_list<const TensorImpl*> inputs) {
  for (const TensorImpl* t : inputs) {
    // The common input, a non-leaf, without going through an Edge temporary.
    if (Node* fn = grad_fn_of(*t)) {
      n.add_next_edge_to(fn, t->output_nr(), edge_numel(t->numel()));
    } else if (t->autograd_meta() == nullptr) {
      n.add_null_edge();  // a constant: no gradient goes back
    } else {
      n.add_next_edge(gradient_edge(*t));
    }
  }
}

void set_history(const Ref<Node>& n, TensorImpl& output) {
  const uint32_t nr = n->add_input(output.dtype(), output.shape());
  output.set_grad_fn(n, nr);
}

void set_history(Ref<Node>&& n, TensorImpl& output) {
  const uint32_t nr = n->add_input(output.dtype(), output.shape());
  output.set_grad_fn(std::move(n), nr);
}

}  // namespace ag
