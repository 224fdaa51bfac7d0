// Spin waiting, for waits of a few instructions on another thread: relax
// and spin_until (the parallel loop's joins, the context's owner counting),
// and SpinLock, a lock for critical sections that short (a leaf's
// accumulator finding its leaf on every backward pass): taking it is one
// atomic exchange and releasing it one store, where std::mutex costs a
// read-modify-write each way plus a library call.
#pragma once

#include <atomic>
#include <thread>

namespace ag {

// Waits a moment: a pause while the other side is about to finish, then
// yields (on a loaded machine the thread waited for may be descheduled).
// `spins` counts the pauses of one wait, from 0 (it stops growing once
// the wait yields, so a wait of any length cannot overflow it).
inline void relax(int& spins) noexcept {
#if defined(__x86_64__) || defined(__i386__)
  if (spins < 2000) {
    ++spins;
    __builtin_ia32_pause();
    return;
  }
#endif
  std::this_thread::yield();
}

// Waits until done() holds.
template <class F>
void spin_until(F done) noexcept {
  for (int spins = 0; !done();) relax(spins);
}

class SpinLock {
 public:
  void lock() noexcept {
    while (locked_.exchange(true, std::memory_order_acquire)) {
      spin_until([this] { return !locked_.load(std::memory_order_relaxed); });
    }
  }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

}  // namespace ag
