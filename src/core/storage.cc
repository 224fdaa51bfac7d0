#include "core/storage.h"

namespace ag {

Storage::Storage(Context* ctx, size_t nbytes) : ctx_(ctx), nbytes_(nbytes) {
  data_ = nbytes <= kInlineBytes ? static_cast<void*>(inline_) : ctx->allocate(nbytes);
  owner_side_ref_ = ctx->retain_storage_ref();  // after the allocation, which may throw
}

Storage::~Storage() {
  if (data_ != inline_) ctx_->deallocate(data_, nbytes_);
  ctx_->release_storage_ref(owner_side_ref_);
}

Ref<Storage> Storage::allocate(Context* ctx, size_t nbytes) { return Ref<Storage>::adopt(new Storage(ctx, nbytes)); }

}  // namespace ag
