#include "core/tensor_impl.h"

namespace ag {

TensorImpl::TensorImpl(Ref<Storage> storage, DType dtype, const Dims& shape, const Dims& strides,
                       int64_t offset)
    : storage_(std::move(storage)),
      dtype_(dtype),
      offset_(offset),
      numel_(numel_of(shape)),
      shape_(shape),
      strides_(strides) {}

TensorImpl::~TensorImpl() { delete meta_.load(std::memory_order_acquire); }

AutogradMetaBase* TensorImpl::install_autograd_meta(std::unique_ptr<AutogradMetaBase> m) {
  AutogradMetaBase* expected = nullptr;
  if (meta_.compare_exchange_strong(expected, m.get(), std::memory_order_acq_rel)) return m.release();
  return expected;  // another thread's; m is freed
}

bool TensorImpl::is_contiguous() const {
  int64_t expected = 1;
  for (int i = shape_.size() - 1; i >= 0; --i) {
    if (shape_[i] == 1) continue;
    if (strides_[i] != expected) return numel_ == 0;
    expected *= shape_[i];
  }
  return true;
}

bool TensorImpl::is_non_overlapping() const {
  for (int i = 0; i < shape_.size(); ++i) {
    if (shape_[i] > 1 && strides_[i] == 0) return false;
  }
  return true;
}

Tensor empty(Context* ctx, DType dtype, const Dims& shape) {
  const size_t bytes = static_cast<size_t>(numel_of(shape)) * itemsize(dtype);
  Ref<Storage> s = Storage::allocate(ctx, bytes);
  return Tensor::adopt(new TensorImpl(std::move(s), dtype, shape, contiguous_strides(shape), 0));
}

Tensor make_view(const TensorImpl& t, const Dims& shape, const Dims& strides, int64_t offset) {
  return Tensor::adopt(new TensorImpl(t.storage_ref(), t.dtype(), shape, strides, offset));
}

}  // namespace ag
