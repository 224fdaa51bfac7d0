#include "autograd/saved_tensor.h"

#include "autograd/accumulate_grad.h"
#include "autograd/grad_mode.h"
#include "autograd/node.h"

namespace ag {

void SavedTensor::save(const Tensor& t, bool is_output) {
  version_ = t->storage()->version();
  is_output_ = is_output;
  leaf_accumulator_.reset();
  released_ = false;
  AutogradMeta* m = meta_of(*t);
  if (is_output) {
    output_nr_ = t->output_nr();
    data_ = make_view(*t, t->shape(), t->strides(), t->offset());
    if (m && m->tag) ensure_meta(*data_).tag = m->tag;
  } else if (m && m->requires_grad && is_leaf(*t)) {
    leaf_accumulator_ = grad_accumulator(*t);
    data_ = static_cast<AccumulateGrad&>(*leaf_accumulator_).saved_view(*t);
  } else {
    data_ = t;
  }
}

UnpackedTensor SavedTensor::unpack(Node& owner) const {
  if (released_) {
    fail(AG_ERR_GRAPH,
         "its saved tensors were freed by an earlier backward; pass retain_graph = 1 to the first "
         "backward to walk the graph again");
  }
  const uint64_t now = data_->storage()->version();
  if (now != version_) {
    fail(AG_ERR_VERSION, "the tensor", tag_suffix(*data_), " of shape ", shape_str(data_->shape()),
         " that this node saved was modified after it was saved: its version is ", now, ", expected ", version_);
  }
  if (leaf_accumulator_ && grad_enabled()) {
    // Gradients recorded through it flow to the leaf's AccumulateGrad, as
    // they would through the leaf. Outside a recorded pass nothing may see
    // that link (a gradient handed back as is would carry it into .grad).
    Tensor t = make_view(*data_, data_->shape(), data_->strides(), data_->offset());
    set_grad_fn(*t, leaf_accumulator_, 0);
    return UnpackedTensor::own(std::move(t));
  }
  if (is_output_ && grad_enabled()) {
    Tensor t = make_view(*data_, data_->shape(), data_->strides(), data_->offset());
    set_grad_fn(*t, Ref<Node>::share(&owner), output_nr_);
    return UnpackedTensor::own(std::move(t));
  }
  return UnpackedTensor::borrow(data_);
}

void SavedTensor::release() {
  if (data_) {
    data_.reset();
    leaf_accumulator_.reset();
    released_ = true;
  }
}

}  // namespace ag
