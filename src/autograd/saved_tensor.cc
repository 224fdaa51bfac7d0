#include "autograd/saved_tensor.h"

#include "autograd/accumulate_grad.h"
#include "autograd/grad_mode.h"
#include "autograd/node.h"

namespace ag {

void SavedTensor::save(const Tensor& t, bool is_output) {
  version_ = t->storage()->version();
  is_output_ = is_output;
  released_ = false;
  if (is_output) {
    output_nr_ = meta_of(*t) ? meta_of(*t)->output_nr : 0;
    data_ = make_view(*t, t->shape(), t->strides(), t->offset());
  } else if (AutogradMeta* m = meta_of(*t); m && m->requires_grad && !m->grad_fn) {
    leaf_accumulator_ = grad_accumulator(*t);
    data_ = make_view(*t, t->shape(), t->strides(), t->offset());
  } else {
    data_ = t;
  }
}

Tensor SavedTensor::unpack(Node& owner) const {
  if (released_) {
    fail(AG_ERR_GRAPH,
         "its saved tensors were freed by an earlier backward; pass retain_graph = 1 to the first "
         "backward to walk the graph again");
  }
  const uint64_t now = data_->storage()->version();
  if (now != version_) {
    fail(AG_ERR_VERSION, "a tensor of shape ", shape_str(data_->shape()),
         " that this node saved was modified after it was saved: its version is ", now, ", expected ", version_);
  }
  if ((is_output_ || leaf_accumulator_) && grad_enabled()) {
    // A tensor whose gradient flows to the node (saved output) or to the
    // leaf's AccumulateGrad (saved leaf), as the original did.
    Tensor t = make_view(*data_, data_->shape(), data_->strides(), data_->offset());
    AutogradMeta& m = ensure_meta(*t);
    m.grad_fn = is_output_ ? Ref<Node>::share(&owner) : leaf_accumulator_;
    m.output_nr = is_output_ ? output_nr_ : 0;
    return t;
  }
  return data_;
}

void SavedTensor::release() {
  if (data_) {
    data_.reset();
    leaf_accumulator_.reset();
    released_ = true;
  }
}

}  // namespace ag
