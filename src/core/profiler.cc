#include "core/profiler.h"

#include <algorithm>
#include <chrono>


namespace ag {

std::atomic<int> g_profilers_running{0};

namespace {

std::atomic<uint64_t> g_next_serial{1};
std::atomic<int64_t> g_live{0};

// The buffer this thread last recorded into, and whose it was.
struct BufferCache {
  uint64_t serial = 0;
  void* buffer = nullptr;
};
thread_local BufferCache tl_buffer;

// The context the current C API call works on (set by note_profiled_context).
thread_local Context* tl_call_context = nullptr;

// The running profilers: few at a time, so a vector.
struct Running {
  const Context* ctx;
  std::shared_ptr<Profiler> profiler;
};
std::mutex g_running_mu;
std::vector<Running> g_running;  // guarded by g_running_mu

}  // namespace

Profiler::Profiler(bool record_calls, int64_t max_events)
    : serial_(g_next_serial.fetch_add(1, std::memory_order_relaxed)),
      origin_(clock_ns()),
      record_calls_(record_calls),
      max_events_(max_events) {
  g_live.fetch_add(1, std::memory_order_relaxed);
}

Profiler::~Profiler() { g_live.fetch_sub(1, std::memory_order_relaxed); }

int64_t Profiler::live() noexcept { return g_live.load(std::memory_order_relaxed); }

int64_t Profiler::clock_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Profiler::Buffer& Profiler::buffer() {
  if (tl_buffer.serial == serial_) return *static_cast<Buffer*>(tl_buffer.buffer);
  std::lock_guard<std::mutex> lock(mu_);
  auto b = std::make_unique<Buffer>();
  b->thread = static_cast<uint32_t>(buffers_.size() + 1);
  buffers_.push_back(std::move(b));
  tl_buffer.serial = serial_;
  tl_buffer.buffer = buffers_.back().get();
  return *buffers_.back();
}

void Profiler::record(ProfileEvent e) {
  if (reserved_.fetch_add(1, std::memory_order_relaxed) >= max_events_) return;  // counted as dropped
  Buffer& b = buffer();
  e.thread = b.thread;
  e.start_ns -= origin_;
  std::lock_guard<std::mutex> lock(b.mu);
  b.events.push_back(std::move(e));
}

Profiler::Result Profiler::take() {
  Result r;
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = 0;
  for (const auto& b : buffers_) {
    std::lock_guard<std::mutex> block(b->mu);
    n += b->events.size();
  }
  r.events.reserve(n);
  for (const auto& b : buffers_) {
    std::lock_guard<std::mutex> block(b->mu);
    for (ProfileEvent& e : b->events) r.events.push_back(std::move(e));
    b->events.clear();
  }
  // Enclosing spans first at equal start times, so viewers nest them.
  std::stable_sort(r.events.begin(), r.events.end(), [](const ProfileEvent& a, const ProfileEvent& b) {
    if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
    if (a.duration_ns != b.duration_ns) return a.duration_ns > b.duration_ns;
    return a.thread < b.thread;
  });
  const int64_t reserved = reserved_.load(std::memory_order_relaxed);
  r.dropped = reserved > max_events_ ? reserved - max_events_ : 0;
  r.threads = static_cast<uint32_t>(buffers_.size());
  return r;
}

bool start_profiler(const Context* ctx, std::shared_ptr<Profiler> p) {
  std::lock_guard<std::mutex> lock(g_running_mu);
  for (const Running& r : g_running) {
    if (r.ctx == ctx) return false;
  }
  g_running.push_back({ctx, std::move(p)});
  g_profilers_running.fetch_add(1, std::memory_order_relaxed);
  return true;
}

std::shared_ptr<Profiler> stop_profiler(const Context* ctx) {
  std::lock_guard<std::mutex> lock(g_running_mu);
  for (size_t i = 0; i < g_running.size(); ++i) {
    if (g_running[i].ctx != ctx) continue;
    std::shared_ptr<Profiler> p = std::move(g_running[i].profiler);
    g_running.erase(g_running.begin() + static_cast<std::ptrdiff_t>(i));
    g_profilers_running.fetch_sub(1, std::memory_order_relaxed);
    return p;
  }
  return nullptr;
}

std::shared_ptr<Profiler> profiler_of(const Context* ctx) noexcept {
  if (!profiling_anywhere()) return nullptr;
  std::lock_guard<std::mutex> lock(g_running_mu);
  for (const Running& r : g_running) {
    if (r.ctx == ctx) return r.profiler;
  }
  return nullptr;
}

void CallTimer::begin(const char* fn) noexcept {
  fn_ = fn;
  outer_ = tl_call_context;
  tl_call_context = nullptr;
  start_ = Profiler::clock_ns();
}

void CallTimer::end() noexcept {
  const int64_t stop = Profiler::clock_ns();
  Context* ctx = tl_call_context;
  tl_call_context = outer_;
  if (ctx == nullptr) return;
  try {
    const std::shared_ptr<Profiler> p = profiler_of(ctx);
    if (!p || !p->record_calls() || start_ < p->origin_ns()) return;
    ProfileEvent e;
    e.name = fn_;
    e.category = "call";
    e.start_ns = start_;
    e.duration_ns = stop - start_;
    p->record(std::move(e));
  } catch (...) {
    // Out of memory: the event is lost, the call's result stands.
  }
}

void note_profiled_context(Context* ctx) noexcept { tl_call_context = ctx; }

}  // namespace ag
