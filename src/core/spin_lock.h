// SpinLock: a lock for critical sections of a few instructions, taken on
// every backward pass (a leaf's accumulator finding its leaf). Taking it is
// one atomic exchange and releasing it one store, where std::mutex costs a
// read-modify-write each way plus a library call. Waiters spin briefly,
// then yield: the holder may have been descheduled.
#pragma once

#include <atomic>
#include <thread>

namespace ag {

class SpinLock {
 public:
  void lock() noexcept {
    for (int spins = 0; locked_.exchange(true, std::memory_order_acquire);) {
      while (locked_.load(std::memory_order_relaxed)) {
#if defined(__x86_64__) || defined(__i386__)
        if (++spins < 1000) {
          __builtin_ia32_pause();
          continue;
        }
#endif
        std::this_thread::yield();
      }
    }
  }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

}  // namespace ag
