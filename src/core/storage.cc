#include "core/storage.h"

#include <cstdint>
#include <cstring>

#include "core/recorder.h"

namespace ag {

Storage::Storage(Context* ctx, size_t nbytes) : ctx_(ctx), nbytes_(nbytes) {
  // With a host allocator every byte of data comes from the host.
  const bool inline_data = nbytes == 0 || (nbytes <= kInlineBytes && !ctx->host_allocator());
  data_ = inline_data ? static_cast<void*>(inline_) : ctx->allocate(nbytes);
  owner_side_ref_ = ctx->retain_storage_ref();  // after the allocation, which may throw
}

Storage::Storage(Context* ctx, size_t nbytes, void* block_data)
    : ctx_(ctx), data_(block_data), nbytes_(nbytes), block_data_(true) {
  ctx->note_block_data(nbytes);
  owner_side_ref_ = ctx->retain_storage_ref();
}

// An empty host tensor may come with NULL: the inline bytes then give it an
// address like every other tensor's.
Storage::Storage(Context* ctx, void* data, size_t nbytes, bool read_only)
    : ctx_(ctx),
      data_(data ? data : static_cast<void*>(inline_)),
      nbytes_(nbytes),
      owner_side_ref_(ctx->retain_storage_ref()),
      host_(true),
      read_only_(read_only) {}

Storage::~Storage() {
  if (host_) {
    deleter_.run();
  } else if (data_ != inline_) {
    if (block_data_) {
      ctx_->note_block_data_freed(nbytes_);
    } else {
      ctx_->deallocate(data_, nbytes_);
    }
  }
  if (ctx_) ctx_->release_storage_ref(owner_side_ref_);  // (null: retired)
}

void Storage::retire() noexcept {
  ctx_->release_storage_ref(owner_side_ref_);
  ctx_ = nullptr;
}

void Storage::revive(Context* ctx, size_t nbytes) noexcept {
  ctx_ = ctx;
  nbytes_ = nbytes;
  version_.store(0, std::memory_order_relaxed);
  owner_side_ref_ = ctx->retain_storage_ref();
}

Ref<Storage> Storage::allocate(Context* ctx, size_t nbytes) {
  Ref<Storage> s = Ref<Storage>::adopt(new Storage(ctx, nbytes));
  if (Recorder* r = recording()) [[unlikely]] r->note_allocation(*s);
  return s;
}

Storage* Storage::make_in_block(void* mem, size_t block_bytes, Context* ctx, size_t nbytes, void* block_data) {
  // May throw: nothing made yet.
  Storage* s = block_data ? ::new (mem) Storage(ctx, nbytes, block_data) : ::new (mem) Storage(ctx, nbytes);
  s->block_bytes_ = static_cast<uint32_t>(block_bytes);
  s->set_in_shared_block();
  return s;
}

void Storage::dispose_in_place() const noexcept {
  const size_t bytes = block_bytes_;
  void* block = const_cast<Storage*>(this);
  this->Storage::~Storage();
  pool_free(block, bytes);
}

Ref<Storage> Storage::wrap(Context* ctx, void* data, size_t nbytes, LentMemory& lent, bool read_only) {
  Storage* s = new Storage(ctx, data, nbytes, read_only);  // may throw: `lent` keeps the deleter
  s->deleter_ = lent.release();
  return Ref<Storage>::adopt(s);
}

Ref<Storage> Storage::wrap_or_copy(Context* ctx, void* data, size_t nbytes, size_t align, LentMemory& lent,
                                   bool read_only) {
  if (nbytes == 0 || reinterpret_cast<uintptr_t>(data) % align == 0) return wrap(ctx, data, nbytes, lent, read_only);
  Ref<Storage> s = allocate(ctx, nbytes);
  std::memcpy(s->data(), data, nbytes);
  s->read_only_ = read_only;
  return s;
}

}  // namespace ag
