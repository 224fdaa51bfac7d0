// TensorImpl: dtype, shape, strides and offset over a Storage, plus a
// non-leaf's history (grad_fn) and the autograd metadata, allocated only for
// leaves that require grad and the few other tensors that need it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "core/dtype.h"
#include "core/handle.h"
#include "core/refcount.h"
#include "core/shape.h"
#include "core/storage.h"

namespace ag {

constexpr uint32_t kTensorTag = 0xA67E5012u;

// Implemented by autograd/; core only owns it.
struct AutogradMetaBase : PoolAllocated {
  virtual ~AutogradMetaBase() = default;
};

class TensorImpl;
using Tensor = Ref<TensorImpl>;

class TensorImpl : public RefCounted, public HandleState<kTensorTag> {
 public:
  TensorImpl(Ref<Storage> storage, DType dtype, const Dims& shape, const Dims& strides, int64_t offset);
  ~TensorImpl() override;

  DType dtype() const { return static_cast<DType>(dtype_); }
  const Dims& shape() const { return shape_; }
  const Dims& strides() const { return strides_; }
  int ndim() const { return shape_.size(); }
  int64_t numel() const { return numel_; }
  int64_t offset() const { return offset_; }
  size_t nbytes() const { return static_cast<size_t>(numel_) * itemsize(dtype()); }

  Storage* storage() const { return storage_.get(); }
  const Ref<Storage>& storage_ref() const { return storage_; }
  Context* context() const { return storage_->context(); }
  char* data() const { return static_cast<char*>(storage_->data()) + offset_ * static_cast<int64_t>(itemsize(dtype())); }
  template <class T>
  T* data_as() const { return reinterpret_cast<T*>(data()); }

  // Known from the shape and strides, which never change: kept, because
  // small ops ask it of every input.
  bool is_contiguous() const { return contiguous_; }
  // True if no two elements share memory (no stride-0 dim of size > 1).
  bool is_non_overlapping() const;
  // True if the caller holds the only reference to this tensor and to its
  // storage, and no weak pointer exists: nobody else sees it or its memory.
  bool is_private() const { return sole_owner() && storage_->sole_owner(); }

  // A non-leaf's history: the node that produced it (its grad_fn, an
  // autograd Node that core knows only as refcounted) and which of the
  // node's outputs it is. Kept here rather than in the autograd metadata, so
  // that an op's output needs no metadata object at all.
  RefCounted* grad_fn() const { return grad_fn_.get(); }
  uint32_t output_nr() const { return output_nr_; }
  void set_grad_fn(Ref<RefCounted> fn, uint32_t output_nr) {
    grad_fn_ = std::move(fn);
    output_nr_ = output_nr;
  }

  AutogradMetaBase* autograd_meta() const { return meta_.load(std::memory_order_acquire); }
  // Installs m unless the tensor has metadata already (threads may race to
  // install it); returns the tensor's metadata either way.
  AutogradMetaBase* install_autograd_meta(std::unique_ptr<AutogradMetaBase> m);

 private:
  friend Tensor empty(Context* ctx, DType dtype, const Dims& shape);
  // empty()'s tensor: contiguous strides of shape, numel elements.
  struct ContiguousTag {};
  TensorImpl(ContiguousTag, Ref<Storage> storage, DType dtype, const Dims& shape, int64_t numel);
  void dispose_in_place() const noexcept override;
  // Destroys the tensor and leaves the block to its storage.
  void free_in_block() const noexcept;
  // The spare tensor of the thread (tensor_impl.cc).
  bool keep_as_spare() noexcept;
  void revive(Context* ctx, DType dtype, const Dims& shape, int64_t numel, size_t bytes) noexcept;
  friend struct SpareGuard;

  // The fields every op reads share the first cache line; the shape and
  // strides (kMaxDims entries each, mostly unused) come last.
  Ref<Storage> storage_;
  uint8_t dtype_;  // a DType, in a byte: contiguous_ fits beside it
  bool contiguous_;
  uint32_t output_nr_ = 0;
  int64_t offset_;
  int64_t numel_;
  Ref<RefCounted> grad_fn_;
  // Owned; ends before grad_fn_ (its destructor may look at the history).
  std::atomic<AutogradMetaBase*> meta_{nullptr};
  Dims shape_;
  Dims strides_;
};

// A new contiguous tensor with uninitialized data (the tensor and its
// storage in one pool block), or the thread's spare tensor made new
// (tensor_impl.cc).
Tensor empty(Context* ctx, DType dtype, const Dims& shape);

// Whether dead tensors are kept as spares: not without pools (under
// AddressSanitizer), so that a use after free is still reported.
#if defined(__SANITIZE_ADDRESS__) || defined(AG_NO_POOLS)
constexpr bool kSpareTensors = false;
#else
constexpr bool kSpareTensors = true;
#endif
// The calling thread's spare tensor, or null; for tests.
const TensorImpl* spare_tensor() noexcept;
// The contiguous tensor of shape over s from its first byte (s holds at
// least its bytes).
Tensor contiguous_over(Ref<Storage> s, DType dtype, const Dims& shape);
// A view of t's storage with other shape/strides/offset (same dtype).
Tensor make_view(const TensorImpl& t, const Dims& shape, const Dims& strides, int64_t offset);

}  // namespace ag
