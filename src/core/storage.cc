#include "core/storage.h"

namespace ag {

Storage::Storage(Ref<Context> ctx, size_t nbytes) : ctx_(std::move(ctx)), nbytes_(nbytes) {
  data_ = nbytes <= kInlineBytes ? static_cast<void*>(inline_) : ctx_->allocate(nbytes);
}

Storage::~Storage() {
  if (data_ != inline_) ctx_->deallocate(data_, nbytes_);
}

Ref<Storage> Storage::allocate(Ref<Context> ctx, size_t nbytes) {
  return Ref<Storage>::adopt(new Storage(std::move(ctx), nbytes));
}

}  // namespace ag
