#include "autograd/hooks.h"

#include <algorithm>

#include "autograd/grad_math.h"

namespace ag {

void Hook::set_owner(Node* n) {
  if (n) n->mark_weakly_referenced();
  std::lock_guard<std::mutex> lock(owner_mu_);
  owner_ = n;
}

void Hook::remove() {
  mark_removed();
  Ref<Node> owner;
  {
    std::lock_guard<std::mutex> lock(owner_mu_);
    // try_retain fails for a node on its way out; its list then goes anyway.
    if (owner_ && owner_->try_retain()) owner = Ref<Node>::adopt(owner_);
    owner_ = nullptr;
  }
  if (owner && owner->hooks()) owner->hooks()->remove(this);
}

NodeHooks::~NodeHooks() {
  for (const Ref<Hook>& h : hooks) h->set_owner(nullptr);
}

void NodeHooks::add(Node* owner, Ref<Hook> h) {
  h->set_owner(owner);
  std::lock_guard<std::mutex> lock(mu);
  hooks.push_back(std::move(h));
}

void NodeHooks::remove(const Hook* h) {
  Ref<Hook> dropped;  // released after the lock: its destroy callback may call into ag
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = std::find_if(hooks.begin(), hooks.end(), [h](const Ref<Hook>& x) { return x.get() == h; });
    if (it == hooks.end()) return;
    dropped = std::move(*it);
    hooks.erase(it);
  }
}

std::vector<Ref<Hook>> NodeHooks::snapshot(Hook::Kind kind) const {
  std::vector<Ref<Hook>> out;
  std::lock_guard<std::mutex> lock(mu);
  for (const Ref<Hook>& h : hooks) {
    if (h->kind() == kind && !h->removed()) out.push_back(h);
  }
  return out;
}

bool NodeHooks::has(Hook::Kind kind) const {
  std::lock_guard<std::mutex> lock(mu);
  for (const Ref<Hook>& h : hooks) {
    if (h->kind() == kind && !h->removed()) return true;
  }
  return false;
}

void NodeHooks::retain(uint32_t input_nr, TensorImpl* t) {
  t->mark_weakly_referenced();
  std::lock_guard<std::mutex> lock(mu);
  for (Retained& r : retains) {
    if (r.input_nr == input_nr) {
      r.tensor = t;
      return;
    }
  }
  retains.push_back({input_nr, t});
}

void NodeHooks::forget_retained(uint32_t input_nr) {
  std::lock_guard<std::mutex> lock(mu);
  retains.erase(std::remove_if(retains.begin(), retains.end(), [&](const Retained& r) { return r.input_nr == input_nr; }),
                retains.end());
}

Tensor NodeHooks::retained(uint32_t input_nr) const {
  std::lock_guard<std::mutex> lock(mu);
  for (const Retained& r : retains) {
    if (r.input_nr == input_nr && r.tensor->try_retain()) return Tensor::adopt(r.tensor);
  }
  return Tensor();
}

bool NodeHooks::any_retained() const {
  std::lock_guard<std::mutex> lock(mu);
  return !retains.empty();
}

namespace {

const char* kind_name(Hook::Kind k) {
  switch (k) {
    case Hook::Kind::Tensor: return "tensor hook";
    case Hook::Kind::PostAccumulate: return "post-accumulate-grad hook";
    case Hook::Kind::NodePre: return "node pre-hook";
    case Hook::Kind::NodePost: return "node post-hook";
  }
  return "hook";
}

// The context of the gradients a node sees (they all share one).
Context* context_of(const TensorList& grads) {
  for (size_t i = 0; i < grads.size(); ++i) {
    if (grads[i]) return grads[i]->context();
  }
  return nullptr;
}

// A gradient a hook handed back must fit where it goes.
void check_replacement(const Hook& h, const Node& node, const Tensor& g, const InputMeta& m, size_t index,
                       const Context* ctx) {
  if (ctx && g->context() != ctx) {
    fail(AG_ERR_CALLBACK, "a ", kind_name(h.kind()), " of ", node.name(), " returned gradient ", index,
         " from another context");
  }
  if (!m.fits(g->dtype(), g->shape())) {
    fail(AG_ERR_CALLBACK, "a ", kind_name(h.kind()), " of ", node.name(), " returned a gradient of dtype ",
         dtype_name(g->dtype()), " and shape ", shape_str(g->shape()), " for gradient ", index,
         " which has dtype ", dtype_name(m.dtype), " and shape ", shape_str(m.shape()));
  }
}

}  // namespace

void store_retained(TensorImpl& t, const Tensor& g) {
  AutogradMeta* m = meta_of(t);
  std::lock_guard<std::mutex> lock(m->mu);
  // Shared, not copied: gradients are never written in place.
  m->grad = m->grad ? grad_sum(m->grad, g) : g;
}

void run_tensor_hooks(Node& node, TensorList& grads, std::vector<DeferredGrad>* defer) {
  NodeHooks* hooks = node.hooks();
  if (!hooks) return;
  for (const Ref<Hook>& h : hooks->snapshot(Hook::Kind::Tensor)) {
    const uint32_t i = h->input_nr();
    if (i >= grads.size() || !grads[i]) continue;
    TensorList one(1);
    one[0] = grads[i];
    h->run(one, nullptr);
    if (one[0] && one[0].get() != grads[i].get()) {
      check_replacement(*h, node, one[0], node.input_meta(i), i, grads[i]->context());
      grads[i] = std::move(one[0]);
    }
  }
  if (!hooks->any_retained()) return;
  for (size_t i = 0; i < grads.size(); ++i) {
    if (!grads[i]) continue;
    Tensor t = hooks->retained(static_cast<uint32_t>(i));
    if (!t) continue;
    if (defer) {
      defer->push_back({std::move(t), grads[i]});
    } else {
      store_retained(*t, grads[i]);
    }
  }
}

void run_node_pre_hooks(Node& node, TensorList& grads) {
  NodeHooks* hooks = node.hooks();
  if (!hooks) return;
  const Context* ctx = context_of(grads);
  for (const Ref<Hook>& h : hooks->snapshot(Hook::Kind::NodePre)) {
    TensorList copy(grads.size());
    for (size_t i = 0; i < grads.size(); ++i) copy[i] = grads[i];
    h->run(copy, nullptr);
    for (size_t i = 0; i < grads.size(); ++i) {
      if (copy[i].get() == grads[i].get()) continue;
      if (copy[i]) check_replacement(*h, node, copy[i], node.input_meta(i), i, ctx);
      grads[i] = std::move(copy[i]);
    }
  }
}

void run_node_post_hooks(Node& node, TensorList& out, const TensorList& grads) {
  NodeHooks* hooks = node.hooks();
  if (!hooks) return;
  const Context* ctx = context_of(grads);
  for (const Ref<Hook>& h : hooks->snapshot(Hook::Kind::NodePost)) {
    TensorList copy(out.size());
    for (size_t i = 0; i < out.size(); ++i) copy[i] = out[i];
    h->run(copy, &grads);
    for (size_t i = 0; i < out.size(); ++i) {
      if (copy[i].get() == out[i].get()) continue;
      const Edge& e = node.next_edge(i);
      if (copy[i] && e.valid()) check_replacement(*h, node, copy[i], e.fn->input_meta(e.input_nr), i, ctx);
      out[i] = std::move(copy[i]);
    }
  }
}

}  // namespace ag
