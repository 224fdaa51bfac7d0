// Storage: refcounted memory shared by a tensor, its views and detached
// copies, with the version counter that every write bumps.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/context.h"
#include "core/refcount.h"

namespace ag {

class Storage : public RefCounted {
 public:
  // Uninitialized memory for nbytes of ctx, which the storage keeps alive;
  // throws std::bad_alloc.
  static Ref<Storage> allocate(Context* ctx, size_t nbytes);
  ~Storage() override;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Context* context() const { return ctx_; }

  uint64_t version() const { return version_.load(std::memory_order_acquire); }
  void bump_version() { version_.fetch_add(1, std::memory_order_acq_rel); }

 private:
  // Tiny tensors (scalars, short vectors) keep their data inline.
  static constexpr size_t kInlineBytes = 64;

  Storage(Context* ctx, size_t nbytes);

  Context* ctx_;  // a reference taken with retain_storage_ref
  void* data_ = nullptr;
  size_t nbytes_;
  std::atomic<uint64_t> version_{0};
  bool owner_side_ref_;  // what retain_storage_ref returned
  alignas(16) unsigned char inline_[kInlineBytes];
};

}  // namespace ag
