#include "autograd/saved_tensor.h"

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
  if (is_output_ && grad_enabled()) {
    Tensor t = make_view(*data_, data_->shape(), data_->strides(), data_->offset());
    AutogradMeta& m = ensure_meta(*t);
    m.grad_fn = Ref<Node>::share(&owner);
    m.output_nr = output_nr_;
    return t;
  }
  return data_;
}

void SavedTensor::release() {
  if (data_) {
    data_.reset();
    released_ = true;
  }
}

}  // namespace ag
