#include "autograd/accumulate_grad.h"

#include "autograd/grad_math.h"
#include "autograd/grad_mode.h"
#include "autograd/hooks.h"
#include "core/error.h"
#include "core/recorder.h"

namespace ag {

AccumulateGrad::AccumulateGrad(TensorImpl& variable) : Node(kMaxSequenceNr), variable_(&variable) {
  variable.mark_weakly_referenced();
  add_input(variable.dtype(), variable.shape());
}

AccumulateGrad::~AccumulateGrad() {
  if (TensorImpl* v = saved_view_.load(std::memory_order_acquire)) v->release();
}

Tensor AccumulateGrad::saved_view(const TensorImpl& leaf) {
  const AutogradMeta* m = meta_of(leaf);
  const std::string* tag = m && m->tag ? m->tag.get() : nullptr;
  // Acquire: the view's fields and tag were written before it was published.
  if (TensorImpl* v = saved_view_.load(std::memory_order_acquire)) {
    const AutogradMeta* vm = meta_of(*v);
    if ((vm && vm->tag ? vm->tag.get() : nullptr) == tag) return Tensor::share(v);
  }
  Tensor view = make_view(leaf, leaf.shape(), leaf.strides(), leaf.offset());
  if (tag) ensure_meta(*view).tag = m->tag;
  std::lock_guard<SpinLock> lock(mu_);
  if (!saved_view_.load(std::memory_order_relaxed)) {
    view->retain();
    saved_view_.store(view.get(), std::memory_order_release);
  }
  return view;
}

Tensor AccumulateGrad::variable() const {
  std::lock_guard<SpinLock> lock(mu_);
  // try_retain fails for a leaf whose last reference is gone but whose
  // destructor has not reached forget_variable yet.
  if (variable_ && variable_->try_retain()) return Tensor::adopt(variable_);
  return Tensor();
}

void AccumulateGrad::forget_variable() {
  TensorImpl* view;
  {
    std::lock_guard<SpinLock> lock(mu_);
    variable_ = nullptr;
    // The leaf is gone: its data lives on only in the graphs that saved it
    // (host memory goes back once they are done). No saved_view call can
    // race with this: its caller holds a reference to the leaf.
    view = saved_view_.exchange(nullptr, std::memory_order_acq_rel);
  }
  if (view) view->release();
}

namespace {
// accumulate_into while the thread records for replay: the .grad buffers are
// the graph's own (never the incoming gradient, which a step holds) and the
// leaf gets its gradient anew on each replay, so it must have none from
// before the recording.
[[gnu::noinline]] void accumulate_recorded(Recorder& r, TensorImpl& t, AutogradMeta& m, const Tensor& incoming) {
  if (m.grad && !r.wrote(m.grad->storage())) {
    r.refuse(AG_ERR_GRAPH, str("tensor", tag_suffix(t), " has a .grad from before the recording: replay overwrites .grad, "
                               "so set it to NULL before recording (zero_grad with set_to_none)"));
  }
  m.grad = m.grad ? grad_sum(m.grad, incoming) : grad_enabled() ? grad_copy_recorded(incoming) : grad_clone(incoming);
  r.note_leaf_grad(Tensor::share(&t));
}
}  // namespace

void accumulate_into(TensorImpl& t, Tensor& incoming) {
  AutogradMeta* m = &ensure_meta(t);  // a non-leaf input of backward may have none yet
  // Held across the sum so that concurrent backward calls into a shared leaf
  // accumulate one after the other.
  std::lock_guard<std::mutex> lock(m->mu);
  if (Recorder* r = recording()) [[unlikely]] {
    accumulate_recorded(*r, t, *m, incoming);
    return;
  }
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

void AccumulateGrad::apply(TensorList& grads, TensorList&) {
  if (!grads[0]) return;
  Tensor leaf = variable();
  if (!leaf) return;  // nobody can read this gradient any more
  // A leaf whose requires_grad was turned off after graphs reached it gets
  // no gradient. Saved tensors keep only leaves that require grad weakly
  // (SavedTensor), so such a leaf, used as a seed or operand of a
  // create_graph pass, may be held by the very graph of the gradient: its
  // .grad would own the leaf, a cycle that is never freed.
  const AutogradMeta* m = meta_of(*leaf);
  if (!m || !m->requires_grad) return;
  accumulate_into(*leaf, grads[0]);
  if (NodeHooks* h = hooks()) {
    for (const Ref<Hook>& hook : h->snapshot(Hook::Kind::PostAccumulate)) {
      TensorList arg(1);
      arg[0] = leaf;
      hook->run(arg, nullptr);
    }
  }
}

Ref<Node> grad_accumulator(TensorImpl& leaf) {
  AutogradMeta& m = ensure_meta(leaf);
  if (Node* n = m.accumulator.load(std::memory_order_acquire)) return Ref<Node>::share(n);
  std::lock_guard<std::mutex> lock(m.mu);
  if (!m.grad_accumulator) {
    m.grad_accumulator = make_ref<AccumulateGrad>(leaf);
    m.accumulator.store(m.grad_accumulator.get(), std::memory_order_release);
  }
  return m.grad_accumulator;
}

GraphRoot::GraphRoot(const Tensor* roots, const Tensor* seeds, size_t n) : Node(kMaxSequenceNr) {
  for (size_t i = 0; i < n; ++i) {
    add_next_edge(gradient_edge(*roots[i]));
    seeds_.push_back(seeds[i]);
  }
}

void GraphRoot::apply(TensorList&, TensorList& out) {
  for (size_t i = 0; i < seeds_.size(); ++i) out[i] = seeds_[i];
}

}  // namespace ag
