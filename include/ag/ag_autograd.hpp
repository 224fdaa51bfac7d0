/*
 * ag/ag_autograd.hpp - the autograd part of the C++ wrapper, over the C calls
 * of ag/autograd.h, ag/functional.h, ag/function.h and ag/graph.h. Included
 * at the end of ag/ag.hpp: include that.
 *
 *   ag::grad(y, {x})                           gradients returned, .grad untouched
 *   ag::hessian(f, {x}), jacobian, vjp, jvp, hvp   f: a C++ callable
 *   ag::apply_function("CubeBackward", fwd, bwd, {x})   a custom function
 *   ag::graph_dot(loss), ag::graph_json(loss)  graph export
 *   std::cout << x                             tensor([1, 2, 3], dtype=f32)
 *
 * A user function (functional API) takes const std::vector<ag::Tensor> &
 * (the inputs) and returns an ag::Tensor, or a std::vector<ag::Tensor> when
 * it has several outputs. Exceptions thrown by callables become the status
 * and message of the C call, which then throws ag::Error in the caller.
 * Also defines the method forms and number operands declared in ag::Tensor.
 */
#ifndef AG_AG_AUTOGRAD_HPP
#define AG_AG_AUTOGRAD_HPP

#include <ostream>
#include <string>
#include <vector>

#include "ag/ag.hpp"

namespace ag {

/* ---- Tensor members declared in ag.hpp ---- */

inline Tensor &Tensor::operator+=(double value) {
  return done(ag_op_add_(t_, detail::scalar_like(*this, value).get()), "ag::Tensor::operator+=");
}
inline Tensor &Tensor::operator-=(double value) {
  return done(ag_op_sub_(t_, detail::scalar_like(*this, value).get()), "ag::Tensor::operator-=");
}
inline Tensor &Tensor::operator*=(double value) {
  return done(ag_op_mul_(t_, detail::scalar_like(*this, value).get()), "ag::Tensor::operator*=");
}
inline Tensor &Tensor::operator/=(double value) {
  return done(ag_op_div_(t_, detail::scalar_like(*this, value).get()), "ag::Tensor::operator/=");
}

inline Tensor Tensor::pow(double exponent) const { return ag::pow_scalar(*this, exponent); }
inline Tensor Tensor::pow(const Tensor &exponent) const { return ag::pow(*this, exponent); }
inline Tensor Tensor::sum() const { return ag::sum(*this); }
inline Tensor Tensor::sum(const std::vector<int64_t> &dims, bool keepdim) const {
  return ag::sum_dims(*this, dims, keepdim);
}
inline Tensor Tensor::mean() const { return ag::mean(*this); }
inline Tensor Tensor::mean(const std::vector<int64_t> &dims, bool keepdim) const {
  return ag::mean_dims(*this, dims, keepdim);
}
inline Tensor Tensor::neg() const { return ag::neg(*this); }
inline Tensor Tensor::abs() const { return ag::abs(*this); }
inline Tensor Tensor::exp() const { return ag::exp(*this); }
inline Tensor Tensor::log() const { return ag::log(*this); }
inline Tensor Tensor::sqrt() const { return ag::sqrt(*this); }
inline Tensor Tensor::square() const { return ag::square(*this); }
inline Tensor Tensor::tanh() const { return ag::tanh(*this); }
inline Tensor Tensor::sigmoid() const { return ag::sigmoid(*this); }
inline Tensor Tensor::relu() const { return ag::relu(*this); }
inline Tensor Tensor::clone() const { return ag::clone(*this); }
inline Tensor Tensor::reshape(const std::vector<int64_t> &shape) const { return ag::reshape(*this, shape); }
inline Tensor Tensor::transpose(int64_t dim0, int64_t dim1) const { return ag::transpose(*this, dim0, dim1); }
inline Tensor Tensor::matmul(const Tensor &other) const { return ag::matmul(*this, other); }

namespace detail {

/* NULL for an empty Tensor, as the C calls take optional tensors. */
inline std::vector<const ag_tensor *> optional_handles(const std::vector<Tensor> &xs, std::size_t n) {
  std::vector<const ag_tensor *> h(n, nullptr);
  for (std::size_t i = 0; i < xs.size() && i < n; ++i) h[i] = xs[i].get();
  return h;
}

/* Borrowed C tensors as Tensors (each retained, released with the vector). */
inline std::vector<Tensor> borrow_all(const ag_tensor *const *ts, int32_t n) {
  std::vector<Tensor> r;
  r.reserve(static_cast<std::size_t>(n > 0 ? n : 0));
  for (int32_t i = 0; i < n; ++i) r.push_back(Tensor::adopt(ag_tensor_retain(const_cast<ag_tensor *>(ts[i]))));
  return r;
}

inline std::vector<Tensor> as_list(const Tensor &t) { return std::vector<Tensor>(1, t); }
inline const std::vector<Tensor> &as_list(const std::vector<Tensor> &ts) { return ts; }

/* Hands a callable's results to the C library: new references, all or none. */
inline void hand_over(const std::vector<Tensor> &results, ag_tensor **out, int32_t n, const char *what) {
  if (results.size() != static_cast<std::size_t>(n))
    throw Error(AG_ERR_CALLBACK, std::string(what) + " returned " + std::to_string(results.size()) +
                                     " tensors, expected " + std::to_string(n));
  for (int32_t i = 0; i < n; ++i) out[i] = ag_tensor_retain(results[static_cast<std::size_t>(i)].get());
}

/* ag_fn over a C++ callable; user_data points to the callable, which lives for the call. */
template <typename F> struct UserFn {
  static ag_status call(void *user_data, const ag_tensor *const *inputs, int32_t num_inputs, ag_tensor **outputs,
                        int32_t num_outputs) noexcept {
    return run_callback([&] {
      const std::vector<Tensor> args = borrow_all(inputs, num_inputs);
      hand_over(as_list((*static_cast<F *>(user_data))(args)), outputs, num_outputs, "the user function");
    });
  }
};

inline ag_functional_options functional_options(bool create_graph, bool strict) {
  ag_functional_options opts = AG_FUNCTIONAL_OPTIONS_INIT;
  opts.create_graph = create_graph ? 1 : 0;
  opts.strict = strict ? 1 : 0;
  return opts;
}

inline std::vector<Tensor> adopt_n(std::vector<ag_tensor *> &outs) {
  std::vector<Tensor> r;
  r.reserve(outs.size());
  for (std::size_t i = 0; i < outs.size(); ++i) r.push_back(Tensor::adopt(outs[i]));
  return r;
}

}  // namespace detail

/* ---- gradients ---- */

/**
 * The gradients of outputs (weighted by grad_outputs; empty: seed 1 for
 * one-element outputs) with respect to inputs, returned instead of
 * accumulated (ag_grad). An unused input gives an empty Tensor with
 * allow_unused, else ag::Error.
 */
inline std::vector<Tensor> grad(const std::vector<Tensor> &outputs, const std::vector<Tensor> &inputs,
                                const std::vector<Tensor> &grad_outputs = std::vector<Tensor>(),
                                bool retain_graph = false, bool create_graph = false, bool allow_unused = false) {
  ag_grad_options opts = AG_GRAD_OPTIONS_INIT;
  opts.retain_graph = retain_graph ? 1 : 0;
  opts.create_graph = create_graph ? 1 : 0;
  opts.allow_unused = allow_unused ? 1 : 0;
  std::vector<const ag_tensor *> outs = detail::handles_of(outputs), ins = detail::handles_of(inputs);
  std::vector<const ag_tensor *> seeds = detail::optional_handles(grad_outputs, outputs.size());
  std::vector<ag_tensor *> grads(inputs.size() + 1, nullptr);
  detail::check(ag_grad(grads.data(), outs.empty() ? nullptr : outs.data(), grad_outputs.empty() ? nullptr : seeds.data(),
                        static_cast<int32_t>(outs.size()), ins.empty() ? nullptr : ins.data(),
                        static_cast<int32_t>(ins.size()), &opts),
                "ag::grad");
  grads.pop_back();
  return detail::adopt_n(grads);
}
inline std::vector<Tensor> grad(const Tensor &output, const std::vector<Tensor> &inputs,
                                const Tensor &grad_output = Tensor(), bool retain_graph = false,
                                bool create_graph = false, bool allow_unused = false) {
  return grad(std::vector<Tensor>(1, output), inputs, std::vector<Tensor>(1, grad_output), retain_graph,
              create_graph, allow_unused);
}

/* ---- functional API (ag/functional.h); fn: see the top of this file ---- */

/** Jacobians, row-major by output: result[o * inputs.size() + i] has shape output_o.shape + inputs[i].shape. */
template <typename F>
std::vector<Tensor> jacobian(F fn, const std::vector<Tensor> &inputs, int32_t num_outputs = 1,
                             bool create_graph = false, bool strict = false) {
  const ag_functional_options opts = detail::functional_options(create_graph, strict);
  std::vector<const ag_tensor *> ins = detail::handles_of(inputs);
  std::vector<ag_tensor *> out(static_cast<std::size_t>(num_outputs > 0 ? num_outputs : 0) * inputs.size(), nullptr);
  out.push_back(nullptr);  // never empty: data() is not NULL
  detail::check(ag_jacobian(out.data(), &detail::UserFn<F>::call, &fn, ins.empty() ? nullptr : ins.data(),
                            static_cast<int32_t>(ins.size()), num_outputs, &opts),
                "ag::jacobian");
  out.pop_back();
  return detail::adopt_n(out);
}

/** Hessian blocks of a scalar fn: result[i * inputs.size() + j] = d2f / d inputs[i] d inputs[j]. */
template <typename F>
std::vector<Tensor> hessian(F fn, const std::vector<Tensor> &inputs, bool create_graph = false, bool strict = false) {
  const ag_functional_options opts = detail::functional_options(create_graph, strict);
  std::vector<const ag_tensor *> ins = detail::handles_of(inputs);
  std::vector<ag_tensor *> out(inputs.size() * inputs.size() + 1, nullptr);
  detail::check(ag_hessian(out.data(), &detail::UserFn<F>::call, &fn, ins.empty() ? nullptr : ins.data(),
                           static_cast<int32_t>(ins.size()), &opts),
                "ag::hessian");
  out.pop_back();
  return detail::adopt_n(out);
}

/** Vector-Jacobian product, one per input; v: one per output (empty entries or v: 1 for one-element outputs). */
template <typename F>
std::vector<Tensor> vjp(F fn, const std::vector<Tensor> &inputs, const std::vector<Tensor> &v = std::vector<Tensor>(),
                        bool create_graph = false, bool strict = false) {
  const ag_functional_options opts = detail::functional_options(create_graph, strict);
  const std::size_t n_out = v.empty() ? 1 : v.size();
  std::vector<const ag_tensor *> ins = detail::handles_of(inputs), vs = detail::optional_handles(v, n_out);
  std::vector<ag_tensor *> out(inputs.size() + 1, nullptr);
  detail::check(ag_vjp(out.data(), nullptr, &detail::UserFn<F>::call, &fn, ins.empty() ? nullptr : ins.data(),
                       static_cast<int32_t>(ins.size()), vs.data(), static_cast<int32_t>(n_out), &opts),
                "ag::vjp");
  out.pop_back();
  return detail::adopt_n(out);
}

/** Jacobian-vector product, one per output; v: one per input (as in vjp). */
template <typename F>
std::vector<Tensor> jvp(F fn, const std::vector<Tensor> &inputs, const std::vector<Tensor> &v = std::vector<Tensor>(),
                        int32_t num_outputs = 1, bool create_graph = false, bool strict = false) {
  const ag_functional_options opts = detail::functional_options(create_graph, strict);
  std::vector<const ag_tensor *> ins = detail::handles_of(inputs), vs = detail::optional_handles(v, inputs.size());
  std::vector<ag_tensor *> out(static_cast<std::size_t>(num_outputs > 0 ? num_outputs : 0) + 1, nullptr);
  detail::check(ag_jvp(out.data(), nullptr, &detail::UserFn<F>::call, &fn, ins.empty() ? nullptr : ins.data(),
                       static_cast<int32_t>(ins.size()), vs.empty() ? nullptr : vs.data(), num_outputs, &opts),
                "ag::jvp");
  out.pop_back();
  return detail::adopt_n(out);
}

/** Hessian-vector product of a scalar fn, one per input. */
template <typename F>
std::vector<Tensor> hvp(F fn, const std::vector<Tensor> &inputs, const std::vector<Tensor> &v,
                        bool create_graph = false, bool strict = false) {
  const ag_functional_options opts = detail::functional_options(create_graph, strict);
  std::vector<const ag_tensor *> ins = detail::handles_of(inputs), vs = detail::optional_handles(v, inputs.size());
  std::vector<ag_tensor *> out(inputs.size() + 1, nullptr);
  detail::check(ag_hvp(out.data(), nullptr, &detail::UserFn<F>::call, &fn, ins.empty() ? nullptr : ins.data(),
                       static_cast<int32_t>(ins.size()), vs.empty() ? nullptr : vs.data(), &opts),
                "ag::hvp");
  out.pop_back();
  return detail::adopt_n(out);
}

/* ---- custom functions (ag/function.h) ---- */

/** What forward and backward of a custom function see (ag_function_ctx), valid during the callback. */
class FunctionCtx {
 public:
  explicit FunctionCtx(ag_function_ctx *c) noexcept : c_(c) {}
  /** Forward: keep tensors for backward (their versions are checked there). */
  void save_for_backward(const std::vector<Tensor> &ts) {
    std::vector<const ag_tensor *> h = detail::handles_of(ts);
    detail::check(ag_function_ctx_save_for_backward(c_, h.empty() ? nullptr : h.data(), static_cast<int32_t>(h.size())),
                  "ag::FunctionCtx::save_for_backward");
  }
  /** Backward: the saved tensors. */
  std::vector<Tensor> saved_tensors() const {
    std::vector<Tensor> r;
    for (int32_t i = 0; i < ag_function_ctx_num_saved(c_); ++i) {
      ag_tensor *t = nullptr;
      detail::check(ag_function_ctx_saved_tensor(&t, c_, i), "ag::FunctionCtx::saved_tensors");
      r.push_back(Tensor::adopt(t));
    }
    return r;
  }
  bool needs_input_grad(int32_t i) const noexcept { return ag_function_ctx_needs_input_grad(c_, i) > 0; }
  void mark_dirty(const Tensor &input) {
    detail::check(ag_function_ctx_mark_dirty(c_, input.get()), "ag::FunctionCtx::mark_dirty");
  }
  void mark_non_differentiable(const Tensor &output) {
    detail::check(ag_function_ctx_mark_non_differentiable(c_, output.get()), "ag::FunctionCtx::mark_non_differentiable");
  }
  ag_function_ctx *get() const noexcept { return c_; }

 private:
  ag_function_ctx *c_;
};

namespace detail {

template <typename Fwd, typename Bwd> struct CustomFn {
  Fwd forward;
  Bwd backward;
  CustomFn(Fwd f, Bwd b) : forward(f), backward(b) {}
  static ag_status run_forward(void *user_data, ag_function_ctx *c, const ag_tensor *const *inputs, int32_t num_inputs,
                               ag_tensor **outputs, int32_t num_outputs) noexcept {
    return run_callback([&] {
      FunctionCtx fctx(c);
      const std::vector<Tensor> args = borrow_all(inputs, num_inputs);
      hand_over(as_list(static_cast<CustomFn *>(user_data)->forward(fctx, args)), outputs, num_outputs, "forward");
    });
  }
  static ag_status run_backward(void *user_data, ag_function_ctx *c, const ag_tensor *const *grad_outputs,
                                int32_t num_outputs, ag_tensor **grad_inputs, int32_t num_inputs) noexcept {
    return run_callback([&] {
      FunctionCtx fctx(c);
      const std::vector<Tensor> grads = borrow_all(grad_outputs, num_outputs);
      const std::vector<Tensor> r = as_list(static_cast<CustomFn *>(user_data)->backward(fctx, grads));
      if (r.size() > static_cast<std::size_t>(num_inputs))
        throw Error(AG_ERR_CALLBACK, "backward returned " + std::to_string(r.size()) + " gradients for " +
                                         std::to_string(num_inputs) + " inputs");
      for (std::size_t i = 0; i < r.size(); ++i) grad_inputs[i] = ag_tensor_retain(r[i].get());  // empty: no gradient
    });
  }
  static void destroy(void *user_data) noexcept { delete static_cast<CustomFn *>(user_data); }
};

}  // namespace detail

/**
 * Applies a custom function: forward(FunctionCtx &, inputs) returns the
 * outputs (a Tensor or a vector of num_outputs), running with grad mode off;
 * backward(FunctionCtx &, grad_outputs) returns one gradient per input (an
 * empty Tensor for none). `name` names the node (e.g. "CubeBackward").
 */
template <typename Fwd, typename Bwd>
std::vector<Tensor> apply_function(const char *name, Fwd forward, Bwd backward, const std::vector<Tensor> &inputs,
                                   int32_t num_outputs = 1, bool once_differentiable = false) {
  typedef detail::CustomFn<Fwd, Bwd> Fn;
  ag_function_def def = AG_FUNCTION_DEF_INIT;
  def.name = name;
  def.flags = once_differentiable ? AG_FUNCTION_ONCE_DIFFERENTIABLE : 0;
  def.forward = &Fn::run_forward;
  def.backward = &Fn::run_backward;
  def.user_data = new Fn(forward, backward);  // def.destroy deletes it on every path
  def.destroy = &Fn::destroy;
  std::vector<const ag_tensor *> ins = detail::handles_of(inputs);
  std::vector<ag_tensor *> out(static_cast<std::size_t>(num_outputs > 0 ? num_outputs : 0) + 1, nullptr);
  detail::check(ag_function_apply(out.data(), num_outputs, ins.empty() ? nullptr : ins.data(),
                                  static_cast<int32_t>(ins.size()), &def),
                "ag::apply_function");
  out.pop_back();
  return detail::adopt_n(out);
}

/* ---- graph export (ag/graph.h) ---- */

/** The graph of root as text, format AG_GRAPH_DOT or AG_GRAPH_JSON. */
inline std::string export_graph(const Tensor &root, int32_t format) {
  std::size_t needed = 0;
  const ag_status sized = ag_graph_export(root.get(), format, nullptr, 0, &needed);  // asks for the size
  if (sized != AG_ERR_BUFFER_TOO_SMALL) detail::check(sized, "ag::export_graph");
  std::string text(needed, '\0');
  detail::check(ag_graph_export(root.get(), format, &text[0], text.size(), &needed), "ag::export_graph");
  text.resize(needed > 0 ? needed - 1 : 0);  // without the NUL
  return text;
}
inline std::string graph_dot(const Tensor &root) { return export_graph(root, AG_GRAPH_DOT); }
inline std::string graph_json(const Tensor &root) { return export_graph(root, AG_GRAPH_JSON); }

/* ---- printing ---- */

namespace detail {

template <typename T>
void print_elements(std::ostream &os, const std::vector<T> &v, const std::vector<int64_t> &shape, std::size_t dim,
                    std::size_t &at) {
  if (dim == shape.size()) {
    os << +v[at++];  // + prints int8-like types as numbers
    return;
  }
  os << '[';
  for (int64_t i = 0; i < shape[dim]; ++i) {
    if (i > 0) os << ", ";
    print_elements(os, v, shape, dim + 1, at);
  }
  os << ']';
}

template <typename T> void print_tensor(std::ostream &os, const Tensor &t) {
  std::vector<T> v(static_cast<std::size_t>(t.numel()));
  check(ag_tensor_copy_data(t.get(), v.empty() ? nullptr : v.data(), v.size() * sizeof(T)), "ag::operator<<");
  std::size_t at = 0;
  print_elements(os, v, t.shape(), 0, at);
}

}  // namespace detail

/**
 * Prints "tensor([[1, 2], [3, 4]], dtype=f32, grad_fn=MulBackward)" (the
 * stream's precision applies); more than 1000 elements print as their shape.
 */
inline std::ostream &operator<<(std::ostream &os, const Tensor &t) {
  if (!t) return os << "tensor(undefined)";
  os << "tensor(";
  const std::vector<int64_t> shape = t.shape();
  if (t.numel() > 1000) {
    os << "shape=[";
    for (std::size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
    os << ']';
  } else if (t.dtype() == AG_F32) {
    detail::print_tensor<float>(os, t);
  } else if (t.dtype() == AG_F64) {
    detail::print_tensor<double>(os, t);
  } else if (t.dtype() == AG_I64) {
    detail::print_tensor<int64_t>(os, t);
  } else {
    detail::print_tensor<unsigned char>(os, t);  // AG_BOOL: one byte, 0 or 1
  }
  os << ", dtype=" << ag_dtype_name(t.dtype());
  if (!t.is_leaf() && t.grad_fn_name() != nullptr) {
    os << ", grad_fn=" << t.grad_fn_name();
  } else if (t.requires_grad()) {
    os << ", requires_grad";
  }
  return os << ')';
}

}  // namespace ag

#endif /* AG_AG_AUTOGRAD_HPP */
