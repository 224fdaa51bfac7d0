// Storage: refcounted memory shared by a tensor, its views and detached
// copies, with the version counter that every write bumps. The memory is
// either the context's or lent by the host (wrap), which then gets it back
// through its deleter when the storage dies.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/context.h"
#include "core/refcount.h"

namespace ag {

// Gives lent memory back to its owner: fn(data, ctx), exactly once.
struct HostDeleter {
  void (*fn)(void* data, void* ctx) = nullptr;
  void* data = nullptr;
  void* ctx = nullptr;
  void run() noexcept {
    if (fn) fn(data, ctx);
    fn = nullptr;
  }
};

// Owns a HostDeleter until the memory is handed to a Storage (release), and
// runs it when it goes out of scope otherwise: the failure paths of the
// calls that take host memory.
class LentMemory {
 public:
  explicit LentMemory(HostDeleter d) : d_(d) {}
  ~LentMemory() { d_.run(); }
  LentMemory(const LentMemory&) = delete;
  LentMemory& operator=(const LentMemory&) = delete;
  HostDeleter release() {
    HostDeleter d = d_;
    d_.fn = nullptr;
    return d;
  }

 private:
  HostDeleter d_;
};

class Storage;
// Threads recording for replay (core/recorder.h), and the hook through which
// a recording sees in-place writes.
extern std::atomic<int> g_recording_threads;
void note_write_while_recording(const Storage& s);

class Storage : public RefCounted {
 public:
  // Uninitialized memory for nbytes of ctx, which the storage keeps alive;
  // throws std::bad_alloc.
  static Ref<Storage> allocate(Context* ctx, size_t nbytes);
  // The host's memory at `data` (nbytes: the extent the tensor addresses),
  // not counted in ctx's memory statistics. On success the storage owns the
  // deleter (taken from `lent`); if this throws (std::bad_alloc), `lent`
  // still does.
  static Ref<Storage> wrap(Context* ctx, void* data, size_t nbytes, LentMemory& lent, bool read_only);
  // As wrap when `data` is aligned to `align` (an element's size: all the
  // kernels need); otherwise a copy in ctx's memory, and `lent` keeps the
  // deleter, which then runs when the caller's call ends.
  static Ref<Storage> wrap_or_copy(Context* ctx, void* data, size_t nbytes, size_t align, LentMemory& lent,
                                   bool read_only);
  // The storage of a new tensor, made at `mem`, the start of a pool block of
  // block_bytes that also holds the tensor (core/tensor_impl.cc): one
  // allocation per tensor. The storage outlives the tensor (which holds a
  // reference) and frees the block when it dies. Its data are block_data,
  // the block's tail, when not null (counted in the context's memory
  // statistics as the context's own memory), else as allocate's. Throws
  // std::bad_alloc, leaving `mem` to the caller.
  static Storage* make_in_block(void* mem, size_t block_bytes, Context* ctx, size_t nbytes, void* block_data);
  // The reference of the tensor in the block, dropped after the tensor's
  // destructor. Mostly the only one: the storage then goes at once, not
  // through the list of objects waiting to be freed.
  void release_from_block() const noexcept {
    if (sole_owner()) {
      Storage::dispose_in_place();
    } else {
      release();
    }
  }
  ~Storage() override;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Context* context() const { return ctx_; }
  // Host memory imported read-only: every write path refuses it.
  bool read_only() const { return read_only_; }
  bool is_host_memory() const { return host_; }

  // The storage of a spare tensor (core/tensor_impl.cc): one whose data is
  // its inline bytes and whose only reference is its tensor's can stay with
  // it when the tensor dies. retire drops its context reference then, so a
  // spare keeps no context alive; revive starts it again for ctx, version 0.
  bool reusable_inline() const noexcept { return data_ == inline_ && !host_ && sole_owner(); }
  void retire() noexcept;
  void revive(Context* ctx, size_t nbytes) noexcept;

  uint64_t version() const { return version_.load(std::memory_order_acquire); }
  void bump_version() {
    if (g_recording_threads.load(std::memory_order_relaxed) != 0) [[unlikely]] note_write_while_recording(*this);
    version_.fetch_add(1, std::memory_order_acq_rel);
  }

  // Tiny tensors (scalars, short vectors) keep their data inline.
  static constexpr size_t kInlineBytes = 64;

 private:
  Storage(Context* ctx, size_t nbytes);
  Storage(Context* ctx, size_t nbytes, void* block_data);
  Storage(Context* ctx, void* data, size_t nbytes, bool read_only);
  void dispose_in_place() const noexcept override;

  Context* ctx_;  // a reference taken with retain_storage_ref
  void* data_ = nullptr;
  size_t nbytes_;
  std::atomic<uint64_t> version_{0};
  bool owner_side_ref_;  // what retain_storage_ref returned
  bool host_ = false;
  bool read_only_ = false;
  bool block_data_ = false;   // data_ is the tail of the block (make_in_block)
  uint32_t block_bytes_ = 0;  // of the block shared with a tensor (make_in_block)
  HostDeleter deleter_;
  alignas(16) unsigned char inline_[kInlineBytes];
};

// The message of every write path that meets a read-only storage.
constexpr const char* kReadOnlyMessage =
    "tensor is read-only (imported with AG_BUFFER_READ_ONLY / DLPack read-only flag)";

}  // namespace ag
