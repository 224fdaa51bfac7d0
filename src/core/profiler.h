// Profiler: a timeline of named spans (backward passes, the nodes they run,
// API calls) recorded while ag/profile.h's profiler runs on a context.
//
// The running profilers are kept by context in a small registry (at most
// one per context; the API holds a handle reference on the context
// meanwhile, so the address stays that context's).
// Threads record into buffers of their own (a thread finds its buffer
// through a one-entry thread-local cache), merged when the profiler stops.
// A backward pass holds a shared reference for as long as it runs, so a
// stop meanwhile never frees a buffer a worker thread still writes to; what
// such a pass records after the stop is dropped with the profiler.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace ag {

class Context;

struct ProfileEvent {
  std::string name;
  const char* category;     // static: "backward", "node" or "call"
  int64_t start_ns;         // since the profiler started
  int64_t duration_ns;
  uint32_t thread = 0;      // 1, 2, ... in the order threads first recorded
  uint64_t pass = 0;        // backward and node: the pass; 0 otherwise
  uint64_t sequence_nr = UINT64_MAX;  // node: its sequence_nr
  std::string tag;          // node: its tag scope, may be empty
};

// Profilers running in the process, over all contexts: what an API call
// checks before anything else (one relaxed load when none runs).
extern std::atomic<int> g_profilers_running;

inline bool profiling_anywhere() noexcept {
  return __builtin_expect(g_profilers_running.load(std::memory_order_relaxed) != 0, 0);
}

class Profiler {
 public:
  // max_events: events past this many are counted as dropped, not kept.
  Profiler(bool record_calls, int64_t max_events);
  ~Profiler();
  Profiler(const Profiler&) = delete;
  Profiler& operator=(const Profiler&) = delete;

  static int64_t clock_ns() noexcept;  // steady clock
  int64_t origin_ns() const { return origin_; }
  bool record_calls() const { return record_calls_; }

  // Adds e (start_ns and duration_ns from clock_ns) to this thread's buffer.
  // Throws std::bad_alloc.
  void record(ProfileEvent e);

  struct Result {
    std::vector<ProfileEvent> events;  // by start time, then thread
    int64_t dropped = 0;
    uint32_t threads = 0;
  };
  // Merges the buffers. Call once, after the profiler was detached from its
  // context. Throws std::bad_alloc.
  Result take();

  // Profilers alive in the process (tests check for leaks with it).
  static int64_t live() noexcept;

 private:
  struct Buffer {
    std::mutex mu;  // the owning thread and take(); never contended otherwise
    std::vector<ProfileEvent> events;
    uint32_t thread;
  };
  Buffer& buffer();

  const uint64_t serial_;  // unique in the process, for the thread-local cache
  const int64_t origin_;
  const bool record_calls_;
  const int64_t max_events_;
  std::atomic<int64_t> reserved_{0};
  std::mutex mu_;  // guards buffers_
  std::vector<std::unique_ptr<Buffer>> buffers_;
};

// Starts p on ctx (false if one runs there already). Throws std::bad_alloc.
bool start_profiler(const Context* ctx, std::shared_ptr<Profiler> p);
// Removes the profiler of ctx and returns it (null if none runs).
std::shared_ptr<Profiler> stop_profiler(const Context* ctx);
// The profiler running on ctx, or null; one relaxed load when none runs in
// the process.
std::shared_ptr<Profiler> profiler_of(const Context* ctx) noexcept;

// Times one C API call for the profiler of the context whose tensor the call
// hands out (see note_profiled_context), when that profiler records calls.
// Costs one relaxed load when no profiler runs in the process.
class CallTimer {
 public:
  explicit CallTimer(const char* fn) noexcept {
    if (profiling_anywhere()) begin(fn);
  }
  ~CallTimer() {
    if (__builtin_expect(fn_ != nullptr, 0)) end();
  }
  CallTimer(const CallTimer&) = delete;
  CallTimer& operator=(const CallTimer&) = delete;

 private:
  [[gnu::noinline, gnu::cold]] void begin(const char* fn) noexcept;
  [[gnu::noinline, gnu::cold]] void end() noexcept;
  const char* fn_ = nullptr;
  int64_t start_ = 0;
  Context* outer_ = nullptr;
};

// The current call works on ctx (it hands out one of its tensors, or steps
// an optimizer over its parameters): CallTimer records it there.
[[gnu::noinline, gnu::cold]] void note_profiled_context(Context* ctx) noexcept;

}  // namespace ag
