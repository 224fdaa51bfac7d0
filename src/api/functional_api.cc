// Functional helpers over a user function: vjp, jvp (double vjp), jacobian,
// hessian and hvp, built on the engine's grad.
#include "api/callback.h"
#include "api/functional.h"
#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "engine/engine.h"
#include "kernels/kernels.h"
#include "ops/ops.h"

using namespace ag;
using api::Tensors;

namespace ag::api {

UserFn user_fn(ag_fn fn, void* user_data, int32_t num_outputs) {
  if (fn == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "fn is NULL");
  if (num_outputs < 1) fail(AG_ERR_INVALID_ARGUMENT, "num_outputs is ", num_outputs, "; fn needs at least one output");
  return UserFn{fn, user_data, num_outputs};
}

Tensors input_args(const ag_tensor* const* inputs, int32_t n, bool floating) {
  if (inputs == nullptr || n < 1) {
    fail(AG_ERR_INVALID_ARGUMENT, "needs at least one input (inputs ", inputs ? "given" : "NULL", ", num_inputs ", n,
         ")");
  }
  Tensors out;
  for (int32_t i = 0; i < n; ++i) {
    const std::string what = str("inputs[", i, "]");
    Tensor t = tensor_ref(inputs[i], what.c_str());
    if (i > 0 && t->context() != out[0]->context()) fail(AG_ERR_CONTEXT, what, " belongs to another context than inputs[0]");
    if (floating && !is_floating(t->dtype())) {
      fail(AG_ERR_DTYPE, what, " has dtype ", dtype_name(t->dtype()), "; only floating inputs (f32, f64) can be differentiated");
    }
    out.push_back(std::move(t));
  }
  return out;
}

Tensors call_fn(const UserFn& f, const Tensors& inputs) {
  std::vector<Lent> lent;
  std::vector<const ag_tensor*> in;
  lent.reserve(inputs.size());
  for (const Tensor& t : inputs) {
    lent.emplace_back(t);
    in.push_back(lent.back().get());
  }
  std::vector<ag_tensor*> out(static_cast<size_t>(f.num_outputs), nullptr);
  try {
    invoke_callback("fn", [&] {
      return f.fn(f.user_data, in.data(), static_cast<int32_t>(in.size()), out.data(), f.num_outputs);
    });
  } catch (...) {
    try {
      take_returned_all(out, "fn", true);
    } catch (...) {
    }
    throw;
  }
  Tensors outputs = take_returned_all(out, "fn", false);
  for (size_t o = 0; o < outputs.size(); ++o) {
    const Tensor& y = outputs[o];
    if (y->context() != inputs[0]->context()) {
      fail(AG_ERR_CALLBACK, "fn returned outputs[", o, "] of another context than the inputs");
    }
    if (!is_floating(y->dtype())) {
      fail(AG_ERR_CALLBACK, "fn returned outputs[", o, "] of dtype ", dtype_name(y->dtype()),
           "; only floating outputs (f32, f64) can be differentiated");
    }
  }
  return outputs;
}

Tensors differentiable_inputs(const Tensors& xs, bool create_graph) {
  GradModeGuard on(true);
  Tensors out;
  for (const Tensor& x : xs) {
    if (create_graph && requires_grad(*x)) {
      out.push_back(ops::reshape(x, x->shape()));
    } else {
      Tensor d = make_view(*x, x->shape(), x->strides(), x->offset());
      ensure_meta(*d).requires_grad = true;
      out.push_back(std::move(d));
    }
  }
  return out;
}

Tensors grads_of(const Tensors& outputs, const Tensors& seeds, const Tensors& inputs, bool create_graph) {
  ExecuteRequest req;
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (!requires_grad(*outputs[k])) continue;
    req.roots.push_back(outputs[k]);
    req.seeds.push_back(seeds[k]);
  }
  if (req.roots.empty()) return Tensors(inputs.size());
  req.inputs = inputs;
  req.accumulate = false;
  req.opts.retain_graph = true;
  req.opts.create_graph = create_graph;
  Tensors g = execute(req);
  g.resize(inputs.size());
  return g;
}

Tensors jacobian_of(const Tensors& outputs, const Tensors& inputs, bool create_graph, const StrictMessage& strict) {
  const size_t ni = inputs.size();
  Tensors result(outputs.size() * ni);
  for (size_t o = 0; o < outputs.size(); ++o) {
    const Tensor& y = outputs[o];
    std::vector<Dims> shapes(ni);
    for (size_t i = 0; i < ni; ++i) {
      const Dims& in = inputs[i]->shape();
      if (y->ndim() + in.size() > kMaxDims) {
        fail(AG_ERR_SHAPE, "the Jacobian of output ", o, " (shape ", shape_str(y->shape()), ") with respect to input ",
             i, " (shape ", shape_str(in), ") would have ", y->ndim() + in.size(), " dims, more than ", kMaxDims);
      }
      shapes[i] = y->shape();
      for (int d = 0; d < in.size(); ++d) shapes[i].push_back(in[d]);
    }
    std::vector<Tensors> rows(ni);
    std::vector<char> reached(ni, 0);
    for (int64_t k = 0; k < y->numel(); ++k) {
      Tensor seed = ops::full(y->context(), y->dtype(), y->shape(), 0.0);
      kernels::fill(y->dtype(), seed->data() + k * static_cast<int64_t>(itemsize(y->dtype())), 1, 1.0);
      Tensors g = grads_of({y}, {seed}, inputs, create_graph);
      for (size_t i = 0; i < ni; ++i) {
        reached[i] = reached[i] || g[i];
        rows[i].push_back(g[i] ? std::move(g[i]) : ops::zeros_like(inputs[i]));
      }
    }
    for (size_t i = 0; i < ni; ++i) {
      if (strict && y->numel() > 0 && !reached[i]) fail(AG_ERR_GRAPH, strict(o, i));
      Tensor& block = result[o * ni + i];
      if (rows[i].empty()) {
        block = ops::full(y->context(), inputs[i]->dtype(), shapes[i], 0.0);
      } else {
        GradModeGuard mode(create_graph);
        block = ops::reshape(ops::stack(rows[i], 0), shapes[i]);
      }
    }
  }
  return result;
}

}  // namespace ag::api

namespace {

ag_functional_options options_arg(const ag_functional_options* user) {
  ag_functional_options opts = AG_FUNCTIONAL_OPTIONS_INIT;
  api::read_options(user, opts);
  return opts;
}

void check_results(const void* p, const char* name) {
  if (p == nullptr) fail(AG_ERR_INVALID_ARGUMENT, name, " is NULL");
}

// The vectors v[k] for `refs` ("outputs" or "inputs"; "an output" or "an
// input" as `kind`), checked against them; NULL stands for 1.
Tensors vectors_for(const Tensors& refs, const ag_tensor* const* given, const char* refs_name, const char* kind) {
  Tensors seeds;
  for (size_t k = 0; k < refs.size(); ++k) {
    const std::string what = str("v[", k, "]"), ref = str(refs_name, "[", k, "]");
    seeds.push_back(api::seed_for(refs[k], given ? given[k] : nullptr, what.c_str(), ref.c_str(), kind));
  }
  return seeds;
}

// What the caller gets: outside any graph unless the graph was asked for.
Tensor detached_unless(const Tensor& t, bool create_graph) {
  return create_graph ? t : make_view(*t, t->shape(), t->strides(), t->offset());
}

// A result for the caller; zeros of `like`'s shape where no gradient came.
Tensor result_of(const Tensor& g, const Tensor& like, bool create_graph) {
  return g ? detached_unless(g, create_graph) : ops::zeros_like(like);
}

// The one-element output of a scalar function.
const Tensor& scalar_output(const Tensors& outs, const char* fn_name) {
  if (outs[0]->numel() != 1) {
    fail(AG_ERR_CALLBACK, "fn returned outputs[0] of shape ", shape_str(outs[0]->shape()), "; ", fn_name,
         " needs a scalar function (one output with one element)");
  }
  return outs[0];
}

// What every functional helper starts with: fn checked, options read, the
// inputs made differentiable; run() calls fn on them, recorded.
struct Call {
  Call(ag_fn fn, void* user_data, int32_t num_outputs, const ag_tensor* const* inputs, int32_t num_inputs,
       const ag_functional_options* user_opts)
      : f(api::user_fn(fn, user_data, num_outputs)),
        opts(options_arg(user_opts)),
        cg(opts.create_graph != 0),
        xs(api::differentiable_inputs(api::input_args(inputs, num_inputs, true), cg)) {}
  Tensors run() const {
    GradModeGuard on(true);
    return api::call_fn(f, xs);
  }
  const api::UserFn f;
  const ag_functional_options opts;
  const bool cg;
  Tensors xs;
};

// The gradient of a scalar fn's output (recorded, for a second derivative)
// with respect to c.xs; null where the output does not depend on an input.
Tensors gradient_of_scalar(const Call& c, const Tensors& outs, const char* fn_name) {
  const Tensor& y = scalar_output(outs, fn_name);
  Tensors g = api::grads_of({y}, {ops::full(y->context(), y->dtype(), y->shape(), 1.0)}, c.xs, true);
  for (size_t i = 0; i < g.size(); ++i) {
    if (!g[i] && c.opts.strict) fail(AG_ERR_GRAPH, "the output does not depend on inputs[", i, "] (strict)");
  }
  return g;
}

// Double vjp: the gradient with respect to `wrt` of sum_i <g[i], v[i]>, over
// the g[i] that exist (all null when none does).
Tensors double_vjp(const Tensors& g, const Tensors& v, const Tensors& wrt, bool create_graph) {
  Tensors g_used, v_used;
  for (size_t i = 0; i < g.size(); ++i) {
    if (!g[i]) continue;
    g_used.push_back(g[i]);
    v_used.push_back(v[i]);
  }
  return g_used.empty() ? Tensors(wrt.size()) : api::grads_of(g_used, v_used, wrt, create_graph);
}

// Hands the results (and fn's outputs, where wanted) to the caller. Room in
// the thread's handle scope is reserved first, so nothing fails halfway.
void hand_out(ag_tensor** results, Tensors& r, ag_tensor** outputs = nullptr, Tensors* outs = nullptr) {
  const size_t total = r.size() + (outputs ? outs->size() : 0);
  if (api::Scope* s = api::tl_innermost_scope) s->handed_out.reserve(s->handed_out.size() + total);
  if (outputs) {
    for (size_t k = 0; k < outs->size(); ++k) outputs[k] = api::to_handle(std::move((*outs)[k]));
  }
  for (size_t k = 0; k < r.size(); ++k) results[k] = api::to_handle(std::move(r[k]));
}

}  // namespace

extern "C" {

AG_API ag_status ag_functional_options_init(ag_functional_options* opts) noexcept {
  return api::call("ag_functional_options_init", [&] {
    api::check_out(opts);
    *opts = ag_functional_options AG_FUNCTIONAL_OPTIONS_INIT;
  });
}

AG_API ag_status ag_vjp(ag_tensor** vjp, ag_tensor** outputs, ag_fn fn, void* user_data,
                        const ag_tensor* const* inputs, int32_t num_inputs, const ag_tensor* const* v,
                        int32_t num_outputs, const ag_functional_options* user_opts) noexcept {
  return api::call("ag_vjp", [&] {
    check_results(vjp, "vjp");
    const Call c(fn, user_data, num_outputs, inputs, num_inputs, user_opts);
    const Tensors& xs = c.xs;
    const bool cg = c.cg;
    Tensors outs = c.run();
    Tensors seeds = vectors_for(outs, v, "outputs", "an output");
    Tensors g = api::grads_of(outs, seeds, xs, cg);
    Tensors r;
    for (size_t i = 0; i < xs.size(); ++i) {
      if (!g[i] && c.opts.strict) fail(AG_ERR_GRAPH, "no output depends on inputs[", i, "] (strict)");
      r.push_back(result_of(g[i], xs[i], cg));
    }
    for (Tensor& y : outs) y = detached_unless(y, cg);
    hand_out(vjp, r, outputs, &outs);
  });
}

AG_API ag_status ag_jvp(ag_tensor** jvp, ag_tensor** outputs, ag_fn fn, void* user_data,
                        const ag_tensor* const* inputs, int32_t num_inputs, const ag_tensor* const* v,
                        int32_t num_outputs, const ag_functional_options* user_opts) noexcept {
  return api::call("ag_jvp", [&] {
    check_results(jvp, "jvp");
    const Call c(fn, user_data, num_outputs, inputs, num_inputs, user_opts);
    const Tensors& xs = c.xs;
    const bool cg = c.cg;
    Tensors tangents = vectors_for(xs, v, "inputs", "an input");
    Tensors outs = c.run();
    // The vjp with cotangents u is linear in u; its derivative with respect
    // to u in direction v is J v.
    Tensors u;
    for (const Tensor& y : outs) {
      Tensor z = ops::zeros_like(y);
      ensure_meta(*z).requires_grad = true;
      u.push_back(std::move(z));
    }
    Tensors g = api::grads_of(outs, u, xs, true);
    Tensors jv = double_vjp(g, tangents, u, cg);
    Tensors r;
    for (size_t o = 0; o < outs.size(); ++o) {
      if (!jv[o] && c.opts.strict) fail(AG_ERR_GRAPH, "outputs[", o, "] depends on no input (strict)");
      r.push_back(result_of(jv[o], outs[o], cg));
    }
    for (Tensor& y : outs) y = detached_unless(y, cg);
    hand_out(jvp, r, outputs, &outs);
  });
}

AG_API ag_status ag_jacobian(ag_tensor** jacobian, ag_fn fn, void* user_data, const ag_tensor* const* inputs,
                             int32_t num_inputs, int32_t num_outputs, const ag_functional_options* user_opts) noexcept {
  return api::call("ag_jacobian", [&] {
    check_results(jacobian, "jacobian");
    const Call c(fn, user_data, num_outputs, inputs, num_inputs, user_opts);
    const Tensors& xs = c.xs;
    const bool cg = c.cg;
    Tensors outs = c.run();
    api::StrictMessage strict;
    if (c.opts.strict) {
      strict = [](size_t o, size_t i) { return str("outputs[", o, "] does not depend on inputs[", i, "] (strict)"); };
    }
    Tensors j = api::jacobian_of(outs, xs, cg, strict);
    hand_out(jacobian, j);
  });
}

AG_API ag_status ag_hessian(ag_tensor** hessian, ag_fn fn, void* user_data, const ag_tensor* const* inputs,
                            int32_t num_inputs, const ag_functional_options* user_opts) noexcept {
  return api::call("ag_hessian", [&] {
    check_results(hessian, "hessian");
    const Call c(fn, user_data, 1, inputs, num_inputs, user_opts);
    const Tensors& xs = c.xs;
    const bool cg = c.cg;
    Tensors outs = c.run();
    Tensors g = gradient_of_scalar(c, outs, "ag_hessian");
    for (size_t i = 0; i < g.size(); ++i) {
      if (!g[i]) g[i] = ops::zeros_like(xs[i]);
    }
    api::StrictMessage strict;
    if (c.opts.strict) {
      strict = [](size_t i, size_t j) {
        return str("the gradient with respect to inputs[", i, "] does not depend on inputs[", j, "] (strict)");
      };
    }
    Tensors h = api::jacobian_of(g, xs, cg, strict);
    hand_out(hessian, h);
  });
}

AG_API ag_status ag_hvp(ag_tensor** hvp, ag_tensor** output, ag_fn fn, void* user_data,
                        const ag_tensor* const* inputs, int32_t num_inputs, const ag_tensor* const* v,
                        const ag_functional_options* user_opts) noexcept {
  return api::call("ag_hvp", [&] {
    check_results(hvp, "hvp");
    const Call c(fn, user_data, 1, inputs, num_inputs, user_opts);
    const Tensors& xs = c.xs;
    const bool cg = c.cg;
    Tensors vs = vectors_for(xs, v, "inputs", "an input");
    Tensors outs = c.run();
    const Tensors g = gradient_of_scalar(c, outs, "ag_hvp");
    Tensors hv = double_vjp(g, vs, xs, cg);
    Tensors r;
    for (size_t i = 0; i < xs.size(); ++i) {
      if (!hv[i] && c.opts.strict) fail(AG_ERR_GRAPH, "<grad f, v> does not depend on inputs[", i, "] (strict)");
      r.push_back(result_of(hv[i], xs[i], cg));
    }
    for (Tensor& t : outs) t = detached_unless(t, cg);
    hand_out(hvp, r, output, &outs);
  });
}

}  // extern "C"
