// Parts of the engine's run loop (engine.cc) that do not depend on the
// pass: its budgets and its profiling spans. Internal to the engine.
#pragma once

#include <chrono>
#include <cstdint>
#include <utility>

#include "core/profiler.h"

namespace ag::engine_detail {

// Budgets of the run loop: none (ag_backward; compiled away), or a node
// count and a deadline (a budgeted step).
struct Unbudgeted {
  bool spent(size_t) { return false; }
};
inline int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
// The clock is read after every node while nodes are slow, and every few
// nodes when they take well under a microsecond each (a clock read costs as
// much as a small node): reads stay some 1 to 4 us apart, so a step overruns
// its time by about that much, or by one node.
struct StepBudget {
  StepBudget(int64_t nodes, int64_t ns) : max_nodes(nodes), deadline(ns > 0 ? now_ns() + ns : 0) {
    last_read = deadline ? deadline - ns : 0;
  }
  int64_t max_nodes;  // 0 = none
  int64_t deadline;   // steady clock, ns; 0 = none
  int64_t ran = 0;
  int64_t next_read = 1;  // the node count at which the clock is read next
  int64_t stride = 1;
  int64_t last_read;
  bool spent(size_t n) {
    ran += static_cast<int64_t>(n);
    if (max_nodes > 0 && ran >= max_nodes) return true;
    if (deadline == 0 || ran < next_read) return false;
    const int64_t t = now_ns();
    if (t >= deadline) return true;
    const int64_t gap = t - last_read;
    last_read = t;
    if (gap < 1000 && stride < 64) {
      stride *= 2;
    } else if (gap > 4000 && stride > 1) {
      stride /= 2;
    }
    next_read = ran + stride;
    return false;
  }
};

// Profiling (ag/profile.h): a span recorded when it ends, also by an
// exception. Category "node" (a node's run) or "backward" (a whole pass).
struct ProfileSpan {
  ProfileSpan(Profiler& p, const char* category, const char* name, const char* tag, uint64_t seq, uint64_t pass)
      : profiler(p), start(Profiler::clock_ns()), category(category), name(name), tag(tag), seq(seq), pass(pass) {}
  ~ProfileSpan() {
    try {
      ProfileEvent e;
      e.duration_ns = Profiler::clock_ns() - start;
      e.start_ns = start;
      e.category = category;
      e.name = name;
      if (tag) e.tag = tag;
      e.sequence_nr = seq;
      e.pass = pass;
      profiler.record(std::move(e));
    } catch (...) {
      // Out of memory: the event is lost, backward goes on.
    }
  }
  Profiler& profiler;
  int64_t start;
  const char* category;
  const char* name;
  const char* tag;
  uint64_t seq, pass;
};

}  // namespace ag::engine_detail
