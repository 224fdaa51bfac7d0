#include "core/tensor_impl.h"

#include <new>

#include "core/recorder.h"

namespace ag {

namespace {
// True if `strides` are the contiguous strides of `shape` (size-1 dims
// aside); an empty tensor is contiguous whatever its strides.
bool contiguous_layout(const Dims& shape, const Dims& strides, int64_t numel) {
  if (numel == 0) return true;  // (its sizes' product may overflow)
  int64_t expected = 1;
  for (int i = shape.size() - 1; i >= 0; --i) {
    if (shape[i] == 1) continue;
    if (strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}
}  // namespace

// The spare tensor. An op's result mostly dies right after the next op
// used it (the caller replaces it by that op's result), and in a chain of
// small ops that next result is a tensor just like it. So the last dead
// tensor of each thread whose data are its storage's inline bytes stays
// whole in its block, storage and all, and empty() makes it new: no
// constructors, destructors or pool traffic. It qualifies when nothing else
// holds its storage and it has no autograd metadata and no weak pointer.
// While spare it holds no context (Storage::retire) and no history (its
// grad_fn is dropped). Plain thread-locals, as the list of objects waiting
// to be freed (core/refcount.cc); the guard frees the spare at thread exit,
// after which tensors die as before.
namespace {
thread_local TensorImpl* tl_spare = nullptr;
thread_local bool tl_spare_guarded = false;
thread_local bool tl_spare_closed = false;
}  // namespace

struct SpareGuard {
  ~SpareGuard() {
    tl_spare_closed = true;
    if (TensorImpl* t = tl_spare) {
      tl_spare = nullptr;
      t->free_in_block();
    }
  }
};

namespace {
thread_local SpareGuard tl_spare_guard;
}  // namespace

const TensorImpl* spare_tensor() noexcept { return tl_spare; }

static_assert(static_cast<int>(DType::Bool) < 256, "TensorImpl keeps the dtype in a byte");

TensorImpl::TensorImpl(Ref<Storage> storage, DType dtype, const Dims& shape, const Dims& strides,
                       int64_t offset)
    : storage_(std::move(storage)),
      dtype_(static_cast<uint8_t>(dtype)),
      offset_(offset),
      numel_(numel_of(shape)),
      shape_(shape),
      strides_(strides) {
  contiguous_ = contiguous_layout(shape_, strides_, numel_);
}

TensorImpl::TensorImpl(ContiguousTag, Ref<Storage> storage, DType dtype, const Dims& shape, int64_t numel)
    : storage_(std::move(storage)),
      dtype_(static_cast<uint8_t>(dtype)),
      contiguous_(true),
      offset_(0),
      numel_(numel),
      shape_(shape),
      strides_(contiguous_strides(shape)) {}

TensorImpl::~TensorImpl() {
  delete meta_.load(std::memory_order_acquire);
  // The storage shares this tensor's block: dispose_in_place drops the
  // reference once nothing touches the tensor's memory any more.
  if (in_shared_block()) (void)storage_.detach();
}

void TensorImpl::dispose_in_place() const noexcept {
  if (!const_cast<TensorImpl*>(this)->keep_as_spare()) free_in_block();
}

void TensorImpl::free_in_block() const noexcept {
  Storage* s = storage_.get();
  this->TensorImpl::~TensorImpl();
  s->release_from_block();
}

bool TensorImpl::keep_as_spare() noexcept {
  if (!kSpareTensors || tl_spare != nullptr || tl_spare_closed || meta_.load(std::memory_order_relaxed) != nullptr ||
      weakly_referenced() || !storage_->reusable_inline()) {
    return false;
  }
  if (!tl_spare_guarded) {
    (void)&tl_spare_guard;  // constructs the guard on this thread
    tl_spare_guarded = true;
  }
  grad_fn_.reset();  // (queued for freeing if this was its last reference)
  storage_->retire();
  tl_spare = this;
  return true;
}

void TensorImpl::revive(Context* ctx, DType dtype, const Dims& shape, int64_t numel, size_t bytes) noexcept {
  storage_->revive(ctx, bytes);
  revive_count();
  revive_handle_state();
  dtype_ = static_cast<uint8_t>(dtype);
  contiguous_ = true;
  output_nr_ = 0;
  offset_ = 0;
  numel_ = numel;
  shape_ = shape;
  strides_ = contiguous_strides(shape);
}

AutogradMetaBase* TensorImpl::install_autograd_meta(std::unique_ptr<AutogradMetaBase> m) {
  AutogradMetaBase* expected = nullptr;
  if (meta_.compare_exchange_strong(expected, m.get(), std::memory_order_acq_rel)) return m.release();
  return expected;  // another thread's; m is freed
}

bool TensorImpl::is_non_overlapping() const {
  for (int i = 0; i < shape_.size(); ++i) {
    if (shape_[i] > 1 && strides_[i] == 0) return false;
  }
  return true;
}

Tensor empty(Context* ctx, DType dtype, const Dims& shape) {
  const int64_t numel = numel_of(shape);
  const size_t bytes = static_cast<size_t>(numel) * itemsize(dtype);
  if (TensorImpl* t = tl_spare) {
    // Not while recording for replay: the recording notes new storage.
    if (bytes <= Storage::kInlineBytes && !ctx->host_allocator() && recording() == nullptr) {
      tl_spare = nullptr;
      t->revive(ctx, dtype, shape, numel, bytes);
      return Tensor::adopt(t);
    }
  }
  // The storage first (its inline data is 16-byte aligned, as the block),
  // the tensor after it, then data too large to be inline but small enough
  // for the block to stay a pooled one (up to kMaxBlockBytes): one pool block
  // instead of two, the data beside their header.
  constexpr size_t kTensorAt = (sizeof(Storage) + alignof(TensorImpl) - 1) / alignof(TensorImpl) * alignof(TensorImpl);
  constexpr size_t kHeaderBytes = (kTensorAt + sizeof(TensorImpl) + 15) / 16 * 16;
  constexpr size_t kMaxBlockBytes = 1024;
  size_t block_bytes = kTensorAt + sizeof(TensorImpl);
  bool tail = false;
  if (bytes > Storage::kInlineBytes && bytes <= kMaxBlockBytes - kHeaderBytes && !ctx->host_allocator()) {
    block_bytes = kHeaderBytes + bytes;
    tail = true;
  }
  void* mem = pool_alloc(block_bytes);
  Storage* s;
  try {
    s = Storage::make_in_block(mem, block_bytes, ctx, bytes, tail ? static_cast<char*>(mem) + kHeaderBytes : nullptr);
  } catch (...) {
    pool_free(mem, block_bytes);
    throw;
  }
  auto* t = ::new (static_cast<char*>(mem) + kTensorAt)
      TensorImpl(TensorImpl::ContiguousTag{}, Ref<Storage>::adopt(s), dtype, shape, numel);
  t->set_in_shared_block();
  Tensor result = Tensor::adopt(t);
  if (Recorder* r = recording()) [[unlikely]] r->note_allocation(*s);
  return result;
}

// Through the general constructor: the one of empty() stays inlined there.
Tensor contiguous_over(Ref<Storage> s, DType dtype, const Dims& shape) {
  return Tensor::adopt(new TensorImpl(std::move(s), dtype, shape, contiguous_strides(shape), 0));
}

Tensor make_view(const TensorImpl& t, const Dims& shape, const Dims& strides, int64_t offset) {
  return Tensor::adopt(new TensorImpl(t.storage_ref(), t.dtype(), shape, strides, offset));
}

}  // namespace ag
