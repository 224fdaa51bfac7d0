#include "core/context.h"

#include "core/fp_mode.h"
#include "core/process_barrier.h"
#include "core/spin_lock.h"

#include <algorithm>
#include <atomic>
#include <new>


namespace ag {

// With one thread the arena has a slot for the caller only and never asks
// TBB for workers. More slots than the machine has hardware threads would
// make TBB print a warning and change nothing (the chunks, hence the
// results, do not depend on the thread count). With the host's tasks there
// is no arena and TBB is never asked anything.
Context::Context(int num_threads, const HostAllocator& host, const HostTasks& tasks)
    : num_threads_(tasks.set() ? tasks.workers : num_threads > 0 ? num_threads : default_threads()),
      concurrency_(tasks.set() ? tasks.workers : std::min(num_threads_, std::max(1, default_threads()))),
      fp_mode_(FpMode::current()),
      tasks_(tasks),
      arena_(tasks.set() ? nullptr : make_arena(concurrency_)) {
  allocator_.set_owner_thread(this_thread_id());
  allocator_.set_host(host);  // last: a throw above must not call host.destroy
}

Context::~Context() = default;

namespace {

std::atomic<uint64_t> g_next_thread_id{1};

}  // namespace

uint64_t Context::next_thread_id() noexcept { return g_next_thread_id.fetch_add(1, std::memory_order_relaxed); }

void Context::begin_owner_counting() noexcept {
  if (!register_process_barrier()) return;
  owner_ = this_thread_id();
  mode_.store(kOwnerCounting, std::memory_order_release);
}

void Context::end_owner_counting() noexcept {
  if (mode_.load(std::memory_order_acquire) != kOwnerCounting) return;
  mode_.store(kMerging, std::memory_order_seq_cst);
  if (owner_ != this_thread_id()) {
    // The owner may be inside owner_update: after the barrier it either has
    // seen kMerging or is seen busy here, and it leaves that state at once.
    process_barrier();
    spin_until([this] { return !owner_busy_.load(std::memory_order_acquire); });
  }
  // Closes the foreign count: a later foreign release counts in refs_.
  const auto foreign = static_cast<int64_t>(foreign_.fetch_or(1, std::memory_order_acq_rel) >> 1);
  const int64_t net = owned_.load(std::memory_order_acquire) - foreign;
  if (net > 0) retain_n(static_cast<int32_t>(net));
  owned_.store(0, std::memory_order_relaxed);
  mode_.store(kShared, std::memory_order_release);
}

void Context::wait_while_merging() const noexcept {
  spin_until([this] { return mode_.load(std::memory_order_acquire) != kMerging; });
}

void Context::retain_shared() noexcept {
  wait_while_merging();
  retain();
}

void Context::release_shared(bool owner_side) noexcept {
  if (owner_side && mode_.load(std::memory_order_acquire) != kShared) {
    // The owner's reference, let go of by another thread: counted against
    // the owner's count, unless the fold has closed that count.
    if ((foreign_.fetch_add(2, std::memory_order_acq_rel) & 1) == 0) return;
  }
  // After the fold every outstanding reference is in refs_.
  wait_while_merging();
  release();
}

}  // namespace ag
