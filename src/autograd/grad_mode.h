// Per-thread grad mode, on by default; the engine sets it to create_graph
// while backward runs.
#pragma once

namespace ag {

namespace detail {
inline thread_local bool tl_grad_enabled = true;
}

inline bool grad_enabled() { return detail::tl_grad_enabled; }
inline void set_grad_enabled(bool on) { detail::tl_grad_enabled = on; }

// Sets grad mode for a scope and restores the previous mode.
class GradModeGuard {
 public:
  explicit GradModeGuard(bool on) : prev_(grad_enabled()) { set_grad_enabled(on); }
  ~GradModeGuard() { set_grad_enabled(prev_); }
  GradModeGuard(const GradModeGuard&) = delete;
  GradModeGuard& operator=(const GradModeGuard&) = delete;

 private:
  bool prev_;
};

}  // namespace ag
