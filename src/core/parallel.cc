// The parallel loop behind Context::parallel_chunks: the chunks of one loop
// run on the context's team of arena workers (below), or on the host's task
// system. Either way
// every chunk runs through Loop::run, which applies the context's FP mode,
// marks the thread as inside a loop (a loop started inside a chunk runs
// inline: one level of parallelism, and no host callback from inside a host
// task) and keeps the first failure by chunk index instead of letting an
// exception cross TBB's or the host's frames.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

#include <tbb/blocked_range.h>
#include <tbb/info.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include "core/context.h"
#include "core/error.h"
#include "core/fp_mode.h"
#include "core/spin_lock.h"

namespace ag {

namespace {

thread_local bool t_in_loop = false;

// One parallel loop: its chunks, the chunks done, and the first failure.
struct Loop {
  void (*fn)(void*, int64_t, int64_t);
  void* arg;
  int64_t n, chunk, chunks;
  uint32_t fp_mode;
  std::atomic<int64_t> done{0};
  std::mutex mu;
  int64_t failed_chunk = INT64_MAX;
  std::exception_ptr error;

  // Chunks [first, last): never throws.
  void run(int64_t first, int64_t last) noexcept {
    const bool outer = t_in_loop;
    t_in_loop = true;
    FpModeScope mode(fp_mode);
    for (int64_t j = first; j < last; ++j) {
      try {
        fn(arg, j * chunk, std::min(n, (j + 1) * chunk));
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (j < failed_chunk) {
          failed_chunk = j;
          error = std::current_exception();
        }
      }
    }
    done.fetch_add(last - first, std::memory_order_acq_rel);
    t_in_loop = outer;
  }

  void rethrow() {
    if (error) std::rethrow_exception(error);
  }
};

int64_t now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// How long the team's workers keep spinning after the last loop (or the end
// of a held pass) before they go back to TBB, which puts them to sleep:
// consecutive ops of one forward pass are microseconds apart, frames of a
// game milliseconds. Waking a sleeping worker costs some 2-50 us, but the
// caller never waits for it (it starts on the chunks itself).
constexpr int64_t kSpinNs = 200000;

// Workers that stay awake between loops. They are TBB tasks enqueued in the
// context's arena; each loops claiming chunks of the current loop, spins
// while the context is held (a backward pass) or for kSpinNs after the last
// loop, then returns to TBB. The caller of a loop publishes it and runs
// chunks itself too, so it never waits for a worker to wake up, only for
// chunks that a worker has claimed.
//
// Cache affinity: the chunks are dealt out in contiguous runs, one lane per
// participant (the caller is lane 0, each worker keeps its lane while it
// stays awake). A participant takes the chunks of its own lane first, then
// the next lanes' (stealing). Consecutive loops over the same elements (an
// optimizer's mul_ then sub_, a forward's ops on one activation) so find
// their data in the cache of the core that touched it last; a shared
// counter sent each chunk to whichever thread came first, and 1.6 MB of
// cache-resident update ran 1.8x slower on 2 threads than on 1.
//
// Claims go through one word a lane, (generation << 32) | next chunk. All
// lanes share the generation: odd while closed. Publishing sets the loop and
// the lanes' ends, then opens every lane (next = its first chunk); a claim
// compares-and-swaps the word it read, so it only succeeds for the loop that
// was current when it read the word (generations never repeat), and the
// caller waits until all claimed chunks are done before the loop, on its
// stack, goes away.
struct Team {
  explicit Team(int helpers) : helpers(helpers), lanes(new Lane[static_cast<size_t>(helpers) + 1]) {}
  const int helpers;
  struct alignas(64) Lane {
    std::atomic<uint64_t> word{uint64_t{1} << 32};  // closed
    std::atomic<int64_t> end{0};
  };
  std::unique_ptr<Lane[]> lanes;  // helpers + 1
  std::atomic<uint64_t> gen{1};   // the lanes' generation; odd: closed
  std::atomic<Loop*> loop{nullptr};
  std::atomic<bool> busy{false};  // a loop is being run (one at a time)
  std::atomic<int> alive{0};      // enqueued or running workers
  std::atomic<int> holds{0};
  std::atomic<int64_t> last_use{0};
  std::atomic<bool> stop{false};

  // Claims a chunk of the current loop for the participant of `lane`, from
  // its own lane first: its index and loop, or false.
  bool claim(int lane, int64_t& index, Loop*& l) noexcept {
    if (gen.load(std::memory_order_seq_cst) & 1) return false;
    const int lanes_n = helpers + 1;
    for (int i = 0; i < lanes_n; ++i) {
      Lane& ln = lanes[static_cast<size_t>((lane + i) % lanes_n)];
      uint64_t w = ln.word.load(std::memory_order_seq_cst);
      for (;;) {
        if ((w >> 32) & 1) break;
        Loop* cur = loop.load(std::memory_order_seq_cst);
        const int64_t next = static_cast<int64_t>(w & 0xffffffffu);
        if (cur == nullptr || next >= ln.end.load(std::memory_order_seq_cst)) break;
        if (ln.word.compare_exchange_weak(w, w + 1, std::memory_order_seq_cst)) {
          index = next;
          l = cur;
          return true;
        }
      }
    }
    return false;
  }

  void publish(Loop* l) noexcept {
    const uint64_t g = gen.load(std::memory_order_relaxed) + 1;  // even: open
    const int64_t lanes_n = helpers + 1;
    loop.store(l, std::memory_order_seq_cst);
    for (int64_t k = 0; k < lanes_n; ++k) {
      lanes[static_cast<size_t>(k)].end.store((k + 1) * l->chunks / lanes_n, std::memory_order_seq_cst);
    }
    for (int64_t k = 0; k < lanes_n; ++k) {
      const uint64_t first = static_cast<uint64_t>(k * l->chunks / lanes_n);
      lanes[static_cast<size_t>(k)].word.store((g << 32) | first, std::memory_order_seq_cst);
    }
    gen.store(g, std::memory_order_seq_cst);
  }

  void close() noexcept {
    const uint64_t g = gen.load(std::memory_order_relaxed) + 1;  // odd: closed
    gen.store(g, std::memory_order_seq_cst);
    for (int k = 0; k <= helpers; ++k) lanes[static_cast<size_t>(k)].word.store(g << 32, std::memory_order_seq_cst);
    loop.store(nullptr, std::memory_order_seq_cst);
  }

  void work(int lane) noexcept {
    for (int64_t idle = 0; !stop.load(std::memory_order_relaxed);) {
      int64_t i;
      Loop* l;
      if (claim(lane, i, l)) {
        l->run(i, i + 1);
        idle = 0;
        continue;
      }
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
      if (++idle % 256 != 0) continue;
      if (holds.load(std::memory_order_relaxed) == 0 &&
          now_ns() - last_use.load(std::memory_order_relaxed) > kSpinNs) {
        break;
      }
      // A long held pass with nothing parallel for a while: let other
      // threads have the core between looks.
      if (idle > (1 << 16)) std::this_thread::yield();
    }
    alive.fetch_sub(1, std::memory_order_acq_rel);
  }
};

void host_task(int64_t begin, int64_t end, uint32_t, void* loop) noexcept {
  Loop& l = *static_cast<Loop*>(loop);
  // A host's range outside [0, chunks) would touch memory ag does not own.
  begin = std::max<int64_t>(begin, 0);
  end = std::min(end, l.chunks);
  if (begin < end) l.run(begin, end);
}

}  // namespace

struct Context::Arena {
  explicit Arena(int n) : arena(n), team(std::make_shared<Team>(n - 1)) {}
  // Enqueued workers hold the team until TBB runs them; they return at once
  // on stop. Waiting for them (bounded: a TBB without workers never runs
  // them) leaves no task, and no team, behind when the process exits.
  ~Arena() {
    team->stop.store(true, std::memory_order_relaxed);
    const int64_t deadline = now_ns() + 200'000'000;
    while (team->alive.load(std::memory_order_acquire) > 0 && now_ns() < deadline) std::this_thread::yield();
  }
  tbb::task_arena arena;
  // Shared with the workers' tasks, which may start after the context is
  // gone (they see stop and return).
  std::shared_ptr<Team> team;

  // Runs the loop's chunks on the team and the calling thread.
  void run(Loop& l) {
    Team& t = *team;
    t.last_use.store(now_ns(), std::memory_order_relaxed);
    t.publish(&l);
    for (int a = t.alive.load(std::memory_order_acquire); a < t.helpers; ++a) {
      t.alive.fetch_add(1, std::memory_order_acq_rel);
      arena.enqueue([keep = team, lane = a + 1] { keep->work(lane); });
    }
    int64_t i;
    Loop* mine;
    while (t.claim(0, i, mine)) l.run(i, i + 1);
    int spins = 0;
    while (l.done.load(std::memory_order_acquire) < l.chunks) relax(spins);
    t.close();
    t.last_use.store(now_ns(), std::memory_order_relaxed);
  }
};

void Context::hold_workers() noexcept {
  if (arena_) arena_->team->holds.fetch_add(1, std::memory_order_relaxed);
}
void Context::release_workers() noexcept {
  if (!arena_) return;
  arena_->team->last_use.store(now_ns(), std::memory_order_relaxed);
  arena_->team->holds.fetch_sub(1, std::memory_order_relaxed);
}

void Context::ArenaDeleter::operator()(Arena* a) const noexcept { delete a; }

int Context::default_threads() { return tbb::info::default_concurrency(); }

std::unique_ptr<Context::Arena, Context::ArenaDeleter> Context::make_arena(int threads) {
  return std::unique_ptr<Arena, ArenaDeleter>(new Arena(threads));
}

void Context::parallel_impl(int64_t n, int64_t chunk, void (*fn)(void*, int64_t, int64_t), void* arg) {
  Loop loop;
  loop.fn = fn;
  loop.arg = arg;
  loop.n = n;
  loop.chunk = chunk;
  loop.chunks = (n + chunk - 1) / chunk;
  loop.fp_mode = fp_mode_;
  if (t_in_loop) {
    // Inside a chunk of another loop: inline, in the caller's mode.
    for (int64_t b = 0; b < n; b += chunk) fn(arg, b, std::min(n, b + chunk));
    return;
  }
  dispatches_.fetch_add(1, std::memory_order_relaxed);
  if (tasks_.set()) {
    void* handle = tasks_.enqueue(&host_task, &loop, loop.chunks, 1, tasks_.user);
    if (handle != nullptr) tasks_.finish(handle, tasks_.user);
    const int64_t done = loop.done.load(std::memory_order_acquire);
    if (done != loop.chunks) {
      fail(AG_ERR_CALLBACK, "the host's task system ran ", done, " of ", loop.chunks,
           " items before finish_task returned (enqueue_task must run them all, or return a handle that "
           "finish_task waits for)");
    }
  } else if (!arena_->team->busy.exchange(true, std::memory_order_acquire)) {
    arena_->run(loop);
    arena_->team->busy.store(false, std::memory_order_release);
  } else {
    // Another thread's loop holds the team: TBB's own parallel_for.
    arena_->arena.execute([&] {
      tbb::parallel_for(
          tbb::blocked_range<int64_t>(0, loop.chunks, 1),
          [&](const tbb::blocked_range<int64_t>& r) { loop.run(r.begin(), r.end()); }, tbb::simple_partitioner());
    });
  }
  loop.rethrow();
}

}  // namespace ag
