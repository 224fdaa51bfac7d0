// The part of an object that the C API hands out as a handle.
//
// A handle object counts the references the user holds separately from the
// internal ones (graph nodes keep tensors alive too). When the user's count
// drops to zero the tag is poisoned, so a released handle passed back in, or
// released twice, is detected while the object is still alive internally.
#pragma once

#include <atomic>
#include <cstdint>

namespace ag {

template <uint32_t Tag>
class HandleState {
 public:
  static constexpr uint32_t kDeadTag = 0xDEADBEEFu;

  ~HandleState() { tag_.store(kDeadTag, std::memory_order_relaxed); }

  // A spare object used again (core/tensor_impl.cc): no handle, as new.
  void revive_handle_state() noexcept {
    tag_.store(Tag, std::memory_order_relaxed);
    handles_.store(0, std::memory_order_relaxed);
  }

  bool handle_valid() const noexcept { return tag_.load(std::memory_order_relaxed) == Tag; }

  // One more user reference. Returns true if this is the first one, in which
  // case the caller transfers one internal reference to the user's side.
  bool handle_acquire() noexcept {
    if (handles_.fetch_add(1, std::memory_order_relaxed) == 0) {
      tag_.store(Tag, std::memory_order_relaxed);
      return true;
    }
    return false;
  }

  // handle_acquire for an object that no other thread can reach (the caller
  // holds its only reference): no atomic read-modify-write.
  bool handle_acquire_sole() noexcept {
    if (handles_.load(std::memory_order_relaxed) != 0) return handle_acquire();
    handles_.store(1, std::memory_order_relaxed);
    tag_.store(Tag, std::memory_order_relaxed);
    return true;
  }

  // One user reference less. Returns true if it was the last: the caller then
  // drops the internal reference that the user's side held.
  bool handle_release() noexcept {
    if (handles_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      tag_.store(kDeadTag, std::memory_order_relaxed);
      return true;
    }
    return false;
  }

  // handle_release for an object that no other thread can reach (the
  // caller's handle holds its only reference): no atomic read-modify-write.
  bool handle_release_sole() noexcept {
    // Acquire: other threads' handles, released before, saw the object last.
    if (handles_.load(std::memory_order_acquire) != 1) return handle_release();
    handles_.store(0, std::memory_order_relaxed);
    tag_.store(kDeadTag, std::memory_order_relaxed);
    return true;
  }

 private:
  std::atomic<uint32_t> tag_{Tag};
  std::atomic<int32_t> handles_{0};
};

}  // namespace ag
