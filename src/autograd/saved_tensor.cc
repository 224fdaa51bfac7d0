#include "autograd/saved_tensor.h"

#include "autograd/accumulate_grad.h"
#include "autograd/grad_mode.h"
#include "autograd/node.h"

namespace ag {

namespace {

// Whether output t of its grad_fn can be kept as its storage alone: the
// node's input metadata gives back its dtype and shape, and it is all of its
// storage, contiguous. A tagged tensor keeps its tag (error messages) in a
// tensor object.
bool storage_describes(const TensorImpl& t, const AutogradMeta* m) {
  if ((m && m->tag) || t.offset() != 0 || !t.is_contiguous() || t.nbytes() != t.storage()->nbytes()) return false;
  const Node* fn = grad_fn_of(t);
  return fn && t.output_nr() < fn->num_inputs() && fn->input_meta(t.output_nr()).fits(t.dtype(), t.shape());
}

}  // namespace

void SavedTensor::save(const Tensor& t, bool is_output) {
  version_ = t->storage()->version();
  is_output_ = is_output;
  data_.reset();
  link_.reset();
  released_ = false;
  AutogradMeta* m = meta_of(*t);
  if (is_output) {
    output_nr_ = t->output_nr();
    if (storage_describes(*t, m)) {
      link_ = t->storage_ref();
      return;
    }
    data_ = make_view(*t, t->shape(), t->strides(), t->offset());
    if (m && m->tag) ensure_meta(*data_).tag = m->tag;
  } else if (m && m->requires_grad && is_leaf(*t)) {
    Ref<Node> acc = grad_accumulator(*t);
    data_ = static_cast<AccumulateGrad&>(*acc).saved_view(*t);
    link_ = std::move(acc);
  } else {
    data_ = t;
  }
}

Storage* SavedTensor::saved_storage() const { return static_cast<Storage*>(link_.get()); }

Node* SavedTensor::leaf_accumulator() const { return is_output_ ? nullptr : static_cast<Node*>(link_.get()); }

void SavedTensor::fail_modified(const Node& owner, uint64_t now) const {
  const Dims shape = data_ ? data_->shape() : owner.input_meta(output_nr_).shape();
  fail(AG_ERR_VERSION, "the tensor", data_ ? tag_suffix(*data_) : std::string(), " of shape ", shape_str(shape),
       " that this node saved was modified after it was saved: its version is ", now, ", expected ", version_);
}

UnpackedTensor SavedTensor::unpack(Node& owner) const {
  if (released_) {
    fail(AG_ERR_GRAPH,
         "its saved tensors were freed by an earlier backward; pass retain_graph = 1 to the first "
         "backward to walk the graph again");
  }
  if (storage_only()) {
    Storage& s = *saved_storage();
    const uint64_t now = s.version();
    if (now != version_) fail_modified(owner, now);
    const InputMeta& m = owner.input_meta(output_nr_);
    Tensor t = contiguous_over(Ref<Storage>::share(&s), m.dtype, m.shape());
    if (grad_enabled()) set_grad_fn(*t, Ref<Node>::share(&owner), output_nr_);
    return UnpackedTensor::own(std::move(t));
  }
  const uint64_t now = data_->storage()->version();
  if (now != version_) fail_modified(owner, now);
  if (Node* acc = leaf_accumulator(); acc && grad_enabled()) {
    // Gradients recorded through it flow to the leaf's AccumulateGrad, as
    // they would through the leaf. Outside a recorded pass nothing may see
    // that link (a gradient handed back as is would carry it into .grad).
    Tensor t = make_view(*data_, data_->shape(), data_->strides(), data_->offset());
    set_grad_fn(*t, Ref<Node>::share(acc), 0);
    return UnpackedTensor::own(std::move(t));
  }
  if (is_output_ && grad_enabled()) {
    Tensor t = make_view(*data_, data_->shape(), data_->strides(), data_->offset());
    set_grad_fn(*t, Ref<Node>::share(&owner), output_nr_);
    return UnpackedTensor::own(std::move(t));
  }
  return UnpackedTensor::borrow(data_);
}

const char* SavedTensor::contiguous_data(Node& owner, DType dtype, const Dims& shape) const {
  if (released_) return nullptr;
  if (storage_only()) {
    const InputMeta& m = owner.input_meta(output_nr_);
    if (!m.fits(dtype, shape)) return nullptr;
    Storage& s = *saved_storage();
    const uint64_t now = s.version();
    if (now != version_) fail_modified(owner, now);
    return static_cast<const char*>(s.data());
  }
  if (!data_ || data_->dtype() != dtype || data_->shape() != shape || !data_->is_contiguous()) return nullptr;
  const uint64_t now = data_->storage()->version();
  if (now != version_) fail_modified(owner, now);
  return data_->data();
}

void SavedTensor::release() {
  if (data_ || link_) {
    data_.reset();
    link_.reset();
    released_ = true;
  }
}

}  // namespace ag
