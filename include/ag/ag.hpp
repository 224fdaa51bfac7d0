/*
 * ag/ag.hpp - header-only C++11 wrapper over the C ABI of ag.
 *
 *   ag::Context ctx;
 *   ag::Tensor x = ag::tensor<float>(ctx, {3.0f}, {1});
 *   x.set_requires_grad(true);
 *   ag::Tensor y = ag::sum(x * x + 2.0 * x);
 *   y.backward();
 *   std::vector<float> g = x.grad().to_vector<float>();   (2x + 2 = 8)
 *
 * - Handles are RAII: copying a Context or Tensor retains the C handle,
 *   destroying one releases it; moved-from objects are empty.
 * - A failed call throws ag::Error, carrying the ag_status and a message that
 *   names the C++ function, then the C one and its reason:
 *   "ag::mul: [ag_op_mul] cannot broadcast shapes (2,3) and (4)".
 * - Everything here is inline and calls only the C functions of ag.h, so the
 *   wrapper adds nothing to the exported ABI and works with any C++ compiler
 *   whatever compiler built libag.
 * - One named function per op of the library: ag/ag_ops.hpp, included at the
 *   end. In-place ops are Tensor members (x.add_(y), x += y); common ops
 *   also have method forms (x.pow(2), x.sum(), x.requires_grad_());
 *   Tensor::register_hook takes a C++ callable; ag::Scope wraps the handle
 *   scopes of ag/scope.h.
 * - ag/ag_autograd.hpp, also included at the end: ag::grad, the functional
 *   API (jacobian, hessian, vjp, jvp, hvp) and custom functions from C++
 *   callables, graph export, and operator<< for tensors.
 */
#ifndef AG_AG_HPP
#define AG_AG_HPP

#include <cstddef>
#include <cstdint>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <string>
#include <utility>
#include <vector>

#include "ag/ag.h"

namespace ag {

/** A failed ag call: its status and the library's message for it. */
class Error : public std::runtime_error {
 public:
  Error(ag_status status, const std::string &message) : std::runtime_error(message), status_(status) {}
  ag_status status() const noexcept { return status_; }

 private:
  ag_status status_;
};

namespace detail {

/* "ag::mul" for a C message "[ag_op_mul] ...": the name of the op wrapper. */
inline std::string wrapper_name(const char *message) {
  const std::string m(message != nullptr ? message : "");
  const std::string::size_type end = m.find(']');
  if (m.compare(0, 7, "[ag_op_") != 0 || end == std::string::npos) return std::string();
  return "ag::" + m.substr(7, end - 7);
}

/* Throws for a failed call: the C++ function (`where`, or the op wrapper named
 * by the C message), then the C message with its function and reason. */
inline void check(ag_status status, const char *where = nullptr) {
  if (status == AG_OK) return;
  const char *message = ag_last_error_message();
  const std::string name = where != nullptr ? std::string(where) : wrapper_name(message);
  throw Error(status, name.empty() ? std::string(message) : name + ": " + message);
}

/* The ag dtype of a C++ element type (float, double, int64_t). */
template <typename T> struct dtype_of;
template <> struct dtype_of<float> { static ag_dtype value() noexcept { return AG_F32; } };
template <> struct dtype_of<double> { static ag_dtype value() noexcept { return AG_F64; } };
template <> struct dtype_of<int64_t> { static ag_dtype value() noexcept { return AG_I64; } };

inline int64_t numel_of(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (std::size_t i = 0; i < shape.size(); ++i) n *= shape[i];
  return n;
}

inline const int64_t *data_or_null(const std::vector<int64_t> &shape) noexcept {
  return shape.empty() ? nullptr : shape.data();
}

}  // namespace detail

/** Version check: the loaded library runs every function of these headers. */
inline bool library_compatible() noexcept {
  const int32_t lib = ag_version_number();
  return lib / 10000 == AG_VERSION_MAJOR && lib >= AG_VERSION_NUMBER;
}

/** A context (ag_context): owns the thread arena and memory of its tensors. */
class Context {
 public:
  /** A new context; num_threads 0 = one per hardware thread, 1 = no workers. */
  explicit Context(int32_t num_threads = 0) : c_(nullptr) {
    ag_context_options opts = AG_CONTEXT_OPTIONS_INIT;
    opts.num_threads = num_threads;
    detail::check(ag_context_create(&c_, &opts), "ag::Context::Context");
  }
  /** Takes over a reference the caller owns (e.g. from ag_tensor_context). */
  static Context adopt(ag_context *c) noexcept { return Context(c, 0); }

  Context(const Context &other) noexcept : c_(ag_context_retain(other.c_)) {}
  Context(Context &&other) noexcept : c_(other.c_) { other.c_ = nullptr; }
  Context &operator=(Context other) noexcept {
    std::swap(c_, other.c_);
    return *this;
  }
  ~Context() { ag_context_release(c_); }

  /** The C handle, borrowed. */
  ag_context *get() const noexcept { return c_; }
  int32_t num_threads() const noexcept { return ag_context_num_threads(c_); }
  ag_memory_stats memory_stats() const {
    ag_memory_stats stats = AG_MEMORY_STATS_INIT;
    detail::check(ag_context_memory_stats(c_, &stats), "ag::Context::memory_stats");
    return stats;
  }
  void trim() { detail::check(ag_context_trim(c_), "ag::Context::trim"); }

  /** Seeds the generator of the random ops and resets its offset (ag/random.h). */
  void manual_seed(uint64_t seed) { detail::check(ag_context_manual_seed(c_, seed), "ag::Context::manual_seed"); }
  /** The last seed set, or AG_RNG_DEFAULT_SEED. */
  uint64_t seed() const {
    uint64_t s = 0;
    detail::check(ag_context_seed(c_, &s), "ag::Context::seed");
    return s;
  }
  /** The generator state (seed, offset): set_rng_state replays the numbers drawn from it. */
  std::pair<uint64_t, uint64_t> rng_state() const {
    uint64_t s = 0, offset = 0;
    detail::check(ag_context_rng_state(c_, &s, &offset), "ag::Context::rng_state");
    return std::make_pair(s, offset);
  }
  void set_rng_state(const std::pair<uint64_t, uint64_t> &state) {
    detail::check(ag_context_set_rng_state(c_, state.first, state.second), "ag::Context::set_rng_state");
  }

 private:
  Context(ag_context *c, int) noexcept : c_(c) {}
  ag_context *c_;
};

/**
 * A hook handle (ag/hooks.h), move-only. Destroying it keeps the hook
 * registered for the life of its tensor; remove() unregisters it.
 */
class Hook {
 public:
  Hook() noexcept : h_(nullptr) {}
  static Hook adopt(ag_hook *h) noexcept {
    Hook hook;
    hook.h_ = h;
    return hook;
  }
  Hook(Hook &&other) noexcept : h_(other.h_) { other.h_ = nullptr; }
  Hook &operator=(Hook &&other) noexcept {
    std::swap(h_, other.h_);
    return *this;
  }
  Hook(const Hook &) = delete;
  Hook &operator=(const Hook &) = delete;
  ~Hook() { ag_hook_release(h_); }

  /** Unregisters the hook (it runs no more) and empties this handle. */
  void remove() noexcept {
    ag_hook_remove(h_);
    h_ = nullptr;
  }
  explicit operator bool() const noexcept { return h_ != nullptr; }

 private:
  ag_hook *h_;
};

class Tensor;

namespace detail {

/* A C++ callback run by the C library: its exceptions become the status and
 * message of the pass (no exception crosses the C boundary). */
template <typename Body> ag_status run_callback(Body body) noexcept {
  try {
    body();
    return AG_OK;
  } catch (const Error &e) {
    ag_set_callback_error(e.what());
    return e.status();
  } catch (const std::bad_alloc &) {
    ag_set_callback_error("out of memory");
    return AG_ERR_OUT_OF_MEMORY;
  } catch (const std::exception &e) {
    ag_set_callback_error(e.what());
    return AG_ERR_CALLBACK;
  } catch (...) {
    ag_set_callback_error("unknown exception");
    return AG_ERR_CALLBACK;
  }
}

template <typename F> struct TensorHook {
  static ag_status call(void *user_data, const ag_tensor *grad, ag_tensor **replacement) noexcept;
  static void destroy(void *user_data) noexcept { delete static_cast<F *>(user_data); }
};

}  // namespace detail

/** A tensor handle (ag_tensor). An empty Tensor holds NULL. */
class Tensor {
 public:
  Tensor() noexcept : t_(nullptr) {}
  /** Takes over a reference the caller owns (an ag_op_* or ag_tensor_* out-parameter). */
  static Tensor adopt(ag_tensor *t) noexcept { return Tensor(t, 0); }

  Tensor(const Tensor &other) noexcept : t_(ag_tensor_retain(other.t_)) {}
  Tensor(Tensor &&other) noexcept : t_(other.t_) { other.t_ = nullptr; }
  Tensor &operator=(Tensor other) noexcept {
    std::swap(t_, other.t_);
    return *this;
  }
  ~Tensor() { ag_tensor_release(t_); }

  /** The C handle, borrowed. */
  ag_tensor *get() const noexcept { return t_; }
  /** Gives up the reference to the caller, leaving this Tensor empty. */
  ag_tensor *release_handle() noexcept {
    ag_tensor *t = t_;
    t_ = nullptr;
    return t;
  }
  explicit operator bool() const noexcept { return t_ != nullptr; }

  ag_dtype dtype() const noexcept { return ag_tensor_dtype(t_); }
  int32_t ndim() const noexcept { return ag_tensor_ndim(t_); }
  int64_t numel() const noexcept { return ag_tensor_numel(t_); }
  int64_t version() const noexcept { return ag_tensor_version(t_); }

  std::vector<int64_t> shape() const {
    int64_t dims[AG_MAX_DIMS];
    detail::check(ag_tensor_shape(t_, dims, AG_MAX_DIMS), "ag::Tensor::shape");
    return std::vector<int64_t>(dims, dims + ndim());
  }

  Context context() const {
    ag_context *c = nullptr;
    detail::check(ag_tensor_context(&c, t_), "ag::Tensor::context");
    return Context::adopt(c);
  }

  /** The elements in row-major order; T must match the dtype. */
  template <typename T> std::vector<T> to_vector() const {
    check_element_type<T>("to_vector");
    std::vector<T> out(static_cast<std::size_t>(numel() > 0 ? numel() : 0));
    detail::check(ag_tensor_copy_data(t_, out.empty() ? nullptr : out.data(), out.size() * sizeof(T)),
                  "ag::Tensor::to_vector");
    return out;
  }

  /** Overwrites the elements (bumps the version); T must match the dtype. */
  template <typename T> void copy_from(const std::vector<T> &src) {
    check_element_type<T>("copy_from");
    detail::check(ag_tensor_copy_from(t_, src.empty() ? nullptr : src.data(), src.size() * sizeof(T)),
                  "ag::Tensor::copy_from");
  }

  /** The only element of a one-element tensor. */
  double item() const {
    double v = 0.0;
    detail::check(ag_tensor_item(t_, &v), "ag::Tensor::item");
    return v;
  }

  /* ---- autograd ---- */

  Tensor &set_requires_grad(bool on = true) {
    detail::check(ag_tensor_requires_grad(t_, on ? 1 : 0), "ag::Tensor::set_requires_grad");
    return *this;
  }
  /** PyTorch's spelling of set_requires_grad: x.requires_grad_(). */
  Tensor &requires_grad_(bool on = true) {
    detail::check(ag_tensor_requires_grad(t_, on ? 1 : 0), "ag::Tensor::requires_grad_");
    return *this;
  }
  /** Keeps the gradient of this non-leaf in backward, so grad() returns it. */
  Tensor &retain_grad() {
    detail::check(ag_tensor_retain_grad(t_), "ag::Tensor::retain_grad");
    return *this;
  }
  bool retains_grad() const noexcept { return ag_tensor_retains_grad(t_) != 0; }
  /** A name for error messages and graph exports (ag_tensor_set_tag); nullptr removes it. */
  Tensor &set_tag(const char *tag) {
    detail::check(ag_tensor_set_tag(t_, tag), "ag::Tensor::set_tag");
    return *this;
  }
  /** The tag, or nullptr. */
  const char *tag() const noexcept { return ag_tensor_tag(t_); }
  bool requires_grad() const noexcept { return ag_tensor_get_requires_grad(t_) != 0; }
  bool is_leaf() const noexcept { return ag_tensor_is_leaf(t_) != 0; }
  /** Name of the producing node, or nullptr outside any graph. */
  const char *grad_fn_name() const noexcept { return ag_tensor_grad_fn_name(t_); }

  /** The gradient of this leaf (a snapshot); empty when there is none. */
  Tensor grad() const {
    ag_tensor *g = nullptr;
    detail::check(ag_tensor_grad(&g, t_), "ag::Tensor::grad");
    return adopt(g);
  }
  /** Sets this leaf's gradient (shared, not copied); an empty Tensor clears it. */
  void set_grad(const Tensor &g) { detail::check(ag_tensor_set_grad(t_, g.t_), "ag::Tensor::set_grad"); }

  Tensor detach() const {
    ag_tensor *d = nullptr;
    detail::check(ag_tensor_detach(&d, t_), "ag::Tensor::detach");
    return adopt(d);
  }

  /** Accumulates gradients into the leaves; an empty grad_root seeds 1. */
  void backward(const Tensor &grad_root = Tensor(), bool retain_graph = false, bool create_graph = false) const {
    ag_backward_options opts = AG_BACKWARD_OPTIONS_INIT;
    opts.retain_graph = retain_graph ? 1 : 0;
    opts.create_graph = create_graph ? 1 : 0;
    detail::check(ag_backward(t_, grad_root.t_, &opts), "ag::Tensor::backward");
  }

  /**
   * Registers fn(const Tensor &grad) -> Tensor on the gradient flowing into
   * this tensor (ag_tensor_register_hook): a non-empty result replaces the
   * gradient. An exception thrown by fn stops the pass with AG_ERR_CALLBACK
   * and its message. fn is destroyed when the hook ends.
   */
  template <typename F> Hook register_hook(F fn) {
    typedef typename std::decay<F>::type Fn;
    ag_hook *h = nullptr;
    // The registration owns the copy from here on, and destroys it itself when it fails.
    detail::check(ag_tensor_register_hook(&h, t_, &detail::TensorHook<Fn>::call, new Fn(std::move(fn)),
                                          &detail::TensorHook<Fn>::destroy),
                  "ag::Tensor::register_hook");
    return Hook::adopt(h);
  }

  /* ---- in place (ag/ops_inplace.h): overwrite this tensor, bump its version, return *this ---- */

  Tensor &add_(const Tensor &other) { return done(ag_op_add_(t_, other.t_), "ag::Tensor::add_"); }
  Tensor &sub_(const Tensor &other) { return done(ag_op_sub_(t_, other.t_), "ag::Tensor::sub_"); }
  /* PyTorch's add_(other, alpha) and sub_(other, alpha): one pass, p.sub_(g, lr). */
  Tensor &add_(const Tensor &other, double alpha) {
    return done(ag_op_add_scaled_(t_, other.t_, alpha), "ag::Tensor::add_");
  }
  Tensor &sub_(const Tensor &other, double alpha) {
    return done(ag_op_add_scaled_(t_, other.t_, -alpha), "ag::Tensor::sub_");
  }
  Tensor &mul_(const Tensor &other) { return done(ag_op_mul_(t_, other.t_), "ag::Tensor::mul_"); }
  Tensor &div_(const Tensor &other) { return done(ag_op_div_(t_, other.t_), "ag::Tensor::div_"); }
  Tensor &zero_() { return done(ag_op_zero_(t_), "ag::Tensor::zero_"); }
  Tensor &fill_(double value) { return done(ag_op_fill_(t_, value), "ag::Tensor::fill_"); }
  Tensor &copy_(const Tensor &src) { return done(ag_op_copy_(t_, src.t_), "ag::Tensor::copy_"); }
  Tensor &clamp_(double min, double max) { return done(ag_op_clamp_(t_, min, max), "ag::Tensor::clamp_"); }
  /* x += y is x.add_(y): in place, like PyTorch (x = x + y records a new tensor instead). */
  Tensor &operator+=(const Tensor &other) { return done(ag_op_add_(t_, other.t_), "ag::Tensor::operator+="); }
  Tensor &operator-=(const Tensor &other) { return done(ag_op_sub_(t_, other.t_), "ag::Tensor::operator-="); }
  Tensor &operator*=(const Tensor &other) { return done(ag_op_mul_(t_, other.t_), "ag::Tensor::operator*="); }
  Tensor &operator/=(const Tensor &other) { return done(ag_op_div_(t_, other.t_), "ag::Tensor::operator/="); }
  /* With a number: a 0-dim tensor of this dtype (ag/ag_autograd.hpp). */
  Tensor &operator+=(double value);
  Tensor &operator-=(double value);
  Tensor &operator*=(double value);
  Tensor &operator/=(double value);

  /* ---- method forms of common ops (the free functions of ag/ag_ops.hpp; defined in ag/ag_autograd.hpp) ---- */

  Tensor pow(double exponent) const;
  Tensor pow(const Tensor &exponent) const;
  Tensor sum() const;
  Tensor sum(const std::vector<int64_t> &dims, bool keepdim = false) const;
  Tensor mean() const;
  Tensor mean(const std::vector<int64_t> &dims, bool keepdim = false) const;
  Tensor neg() const;
  Tensor abs() const;
  Tensor exp() const;
  Tensor log() const;
  Tensor sqrt() const;
  Tensor square() const;
  Tensor tanh() const;
  Tensor sigmoid() const;
  Tensor relu() const;
  Tensor clone() const;
  Tensor reshape(const std::vector<int64_t> &shape) const;
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor matmul(const Tensor &other) const;

 private:
  Tensor(ag_tensor *t, int) noexcept : t_(t) {}
  Tensor &done(ag_status status, const char *where) {
    detail::check(status, where);
    return *this;
  }
  // The C calls move bytes; a C++ element type of another dtype would reinterpret them.
  template <typename T> void check_element_type(const char *method) const {
    if (t_ != nullptr && dtype() != detail::dtype_of<T>::value())
      throw Error(AG_ERR_DTYPE, std::string("ag::Tensor::") + method + ": tensor is " + ag_dtype_name(dtype()) +
                                    ", elements given as " + ag_dtype_name(detail::dtype_of<T>::value()));
  }
  ag_tensor *t_;
};

template <typename F>
ag_status detail::TensorHook<F>::call(void *user_data, const ag_tensor *grad, ag_tensor **replacement) noexcept {
  return run_callback([&] {
    const Tensor g = Tensor::adopt(ag_tensor_retain(const_cast<ag_tensor *>(grad)));
    Tensor r = (*static_cast<F *>(user_data))(g);
    if (r) *replacement = r.release_handle();
  });
}

/** Turns grad mode off on this thread for its lifetime, then restores it. */
class NoGradGuard {
 public:
  NoGradGuard() noexcept : previous_(1) { ag_grad_mode_set(0, &previous_); }
  ~NoGradGuard() { ag_grad_mode_set(previous_, nullptr); }
  NoGradGuard(const NoGradGuard &) = delete;
  NoGradGuard &operator=(const NoGradGuard &) = delete;

 private:
  int32_t previous_;
};

/** Opens a tag scope (ag/anomaly.h) on this thread for its lifetime: ops recorded meanwhile carry its name. */
class TagScope {
 public:
  explicit TagScope(const char *name) { detail::check(ag_tag_scope_push(name), "ag::TagScope::TagScope"); }
  ~TagScope() { ag_tag_scope_pop(); }
  TagScope(const TagScope &) = delete;
  TagScope &operator=(const TagScope &) = delete;
};

/**
 * A handle scope (ag/scope.h) open on this thread for its lifetime: every
 * handle reference handed out on this thread meanwhile (op results, and
 * Tensor copies, since a copy retains) is recorded, and a Tensor destroyed
 * inside the scope takes its record back. What is still recorded when the
 * scope ends is released then, so a Tensor that outlives the scope must come
 * from keep(). Meant for code that mixes in C calls returning handles.
 */
class Scope {
 public:
  Scope() : s_(nullptr) { detail::check(ag_scope_begin(&s_), "ag::Scope::Scope"); }
  /** Ends the scope; a failure (it is not the innermost) cannot be reported and leaves it open. */
  ~Scope() {
    if (s_ != nullptr) ag_scope_end(s_);
  }
  Scope(const Scope &) = delete;
  Scope &operator=(const Scope &) = delete;

  /** A new reference to t that this scope does not release (it moves to the enclosing scope, if any). */
  Tensor keep(const Tensor &t) {
    Tensor kept(t);  // a retain, recorded; keep takes that record out of this scope
    detail::check(ag_scope_keep(kept.get()), "ag::Scope::keep");
    return kept;
  }
  /** Ends the scope now, reporting a failure (then the scope stays open). */
  void end() {
    detail::check(ag_scope_end(s_), "ag::Scope::end");
    s_ = nullptr;
  }
  /** Number of scopes open on this thread. */
  static int32_t depth() noexcept { return ag_scope_depth(); }

 private:
  ag_scope *s_;
};

/* ---- creating tensors ---- */

/** A tensor holding a copy of `data` (row-major) with `shape` ({} = 0-dim). */
template <typename T>
Tensor tensor(const Context &ctx, const std::vector<T> &data, const std::vector<int64_t> &shape) {
  if (static_cast<int64_t>(data.size()) != detail::numel_of(shape))
    throw Error(AG_ERR_INVALID_ARGUMENT, "ag::tensor: " + std::to_string(data.size()) +
                                             " elements do not fill the shape (" +
                                             std::to_string(detail::numel_of(shape)) + " elements)");
  ag_tensor *t = nullptr;
  detail::check(ag_tensor_create(&t, ctx.get(), detail::dtype_of<T>::value(), detail::data_or_null(shape),
                                 static_cast<int32_t>(shape.size()), data.empty() ? nullptr : data.data()),
                "ag::tensor");
  return Tensor::adopt(t);
}

inline Tensor zeros(const Context &ctx, const std::vector<int64_t> &shape, ag_dtype dtype = AG_F32) {
  ag_tensor *t = nullptr;
  detail::check(ag_tensor_zeros(&t, ctx.get(), dtype, detail::data_or_null(shape), static_cast<int32_t>(shape.size())),
                "ag::zeros");
  return Tensor::adopt(t);
}

inline Tensor ones(const Context &ctx, const std::vector<int64_t> &shape, ag_dtype dtype = AG_F32) {
  ag_tensor *t = nullptr;
  detail::check(ag_tensor_ones(&t, ctx.get(), dtype, detail::data_or_null(shape), static_cast<int32_t>(shape.size())),
                "ag::ones");
  return Tensor::adopt(t);
}

inline Tensor full(const Context &ctx, const std::vector<int64_t> &shape, double value, ag_dtype dtype = AG_F32) {
  ag_tensor *t = nullptr;
  detail::check(
      ag_tensor_full(&t, ctx.get(), dtype, detail::data_or_null(shape), static_cast<int32_t>(shape.size()), value),
      "ag::full");
  return Tensor::adopt(t);
}

inline Tensor scalar(const Context &ctx, double value, ag_dtype dtype = AG_F32) {
  ag_tensor *t = nullptr;
  detail::check(ag_tensor_scalar(&t, ctx.get(), dtype, value), "ag::scalar");
  return Tensor::adopt(t);
}

}  // namespace ag

#include "ag/ag_ops.hpp"  // which includes ag/ag_autograd.hpp at its end

#endif /* AG_AG_HPP */
