// Gradient checks of a user function: the Jacobian by backward against
// central finite differences, element by element, reporting the worst one.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "api/functional.h"
#include "autograd/grad_math.h"
#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "kernels/kernels.h"
#include "ops/op_common.h"
#include "ops/ops.h"

using namespace ag;
using api::Tensors;

namespace {

// A function of tensors checked by run_check.
using TensorFn = std::function<Tensors(const Tensors&)>;

struct Tolerances {
  double eps, atol, rtol;
};

Tolerances tolerances_arg(const ag_gradcheck_options* user) {
  ag_gradcheck_options o = AG_GRADCHECK_OPTIONS_INIT;
  api::read_options(user, o);
  if (o.reserved != 0) fail(AG_ERR_INVALID_ARGUMENT, "opts->reserved is ", o.reserved, "; it must be 0");
  const double given[3] = {o.eps, o.atol, o.rtol};
  const char* names[3] = {"eps", "atol", "rtol"};
  for (int k = 0; k < 3; ++k) {
    if (!(given[k] >= 0) || std::isinf(given[k])) {
      char value[32];
      std::snprintf(value, sizeof value, "%g", given[k]);
      fail(AG_ERR_INVALID_ARGUMENT, "opts->", names[k], " is ", value, "; it must be finite and >= 0 (0: default)");
    }
  }
  return Tolerances{o.eps > 0 ? o.eps : 1e-6, o.atol > 0 ? o.atol : 1e-5, o.rtol > 0 ? o.rtol : 1e-3};
}

void check_result_arg(const ag_gradcheck_result* r) {
  if (r == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "result is NULL");
  if (r->struct_size < sizeof(uint32_t)) {
    fail(AG_ERR_INVALID_ARGUMENT, "result->struct_size ", r->struct_size,
         " is too small; set it to sizeof(ag_gradcheck_result)");
  }
}

// Writes `full` into the caller's result, up to its struct_size (struct_size itself untouched).
void write_result(ag_gradcheck_result* r, const ag_gradcheck_result& full) {
  const uint32_t size = r->struct_size < sizeof(full) ? r->struct_size : static_cast<uint32_t>(sizeof(full));
  std::memcpy(reinterpret_cast<unsigned char*>(r) + sizeof(uint32_t),
              reinterpret_cast<const unsigned char*>(&full) + sizeof(uint32_t), size - sizeof(uint32_t));
}

// The elements of t, row-major, as doubles.
std::vector<double> values_of(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t->numel()));
  if (!v.empty()) {
    kernels::copy(t->dtype(), t->shape(), ops::view_of(*t), DType::F64, reinterpret_cast<char*>(v.data()),
                  contiguous_strides(t->shape()));
  }
  return v;
}

// A copy of a checked input that f may see and the check may perturb.
Tensor checked_copy(const Tensor& x, const char* what, size_t i) {
  if (x->dtype() != DType::F64) {
    fail(AG_ERR_DTYPE, what, "[", i, "] requires grad and has dtype ", dtype_name(x->dtype()),
         "; checked inputs must be f64 (finite differences in f32 are too coarse)");
  }
  Tensor c = grad_clone(x);
  ensure_meta(*c).requires_grad = true;
  return c;
}

// Outputs of f at xs as doubles, with the shapes of the first evaluation.
// Grad mode stays on, as for the analytical pass: fn may take gradients itself.
std::vector<std::vector<double>> evaluate(const TensorFn& f, const Tensors& xs, const std::vector<Dims>& shapes) {
  Tensors outs;
  {
    GradModeGuard on(true);
    outs = f(xs);
  }
  std::vector<std::vector<double>> v;
  for (size_t o = 0; o < outs.size(); ++o) {
    if (outs[o]->shape() != shapes[o]) {
      fail(AG_ERR_CALLBACK, "fn returned outputs[", o, "] of shape ", shape_str(outs[o]->shape()),
           " for a perturbed input, and of shape ", shape_str(shapes[o]), " before");
    }
    v.push_back(values_of(outs[o]));
  }
  return v;
}

// Compares the Jacobian of f at xs by backward and by central differences
// over the inputs listed in `checked` (contiguous f64 copies that require
// grad). out_index maps f's output o to the index reported.
ag_gradcheck_result run_check(const TensorFn& f, const Tensors& xs, const std::vector<size_t>& checked,
                              const std::vector<int32_t>& out_index, const Tolerances& tol) {
  Tensors wrt;
  for (size_t c : checked) wrt.push_back(xs[c]);
  const size_t nc = checked.size();
  std::vector<Dims> shapes;
  std::vector<std::vector<double>> analytical;  // [o * nc + c], row-major (output element, input element)
  {
    Tensors outs;
    {
      GradModeGuard on(true);
      outs = f(xs);
    }
    for (const Tensor& y : outs) shapes.push_back(y->shape());
    for (const Tensor& j : api::jacobian_of(outs, wrt, false, {})) analytical.push_back(values_of(j));
  }
  const size_t no = shapes.size();
  std::vector<std::vector<double>> numerical(analytical.size());
  for (size_t o = 0; o < no; ++o) {
    for (size_t c = 0; c < nc; ++c) numerical[o * nc + c].resize(analytical[o * nc + c].size());
  }
  for (size_t c = 0; c < nc; ++c) {
    double* p = wrt[c]->data_as<double>();
    const int64_t n = wrt[c]->numel();
    for (int64_t k = 0; k < n; ++k) {
      const double v = p[k];
      p[k] = v + tol.eps;
      const auto plus = evaluate(f, xs, shapes);
      p[k] = v - tol.eps;
      const auto minus = evaluate(f, xs, shapes);
      p[k] = v;
      for (size_t o = 0; o < no; ++o) {
        std::vector<double>& col = numerical[o * nc + c];
        for (size_t e = 0; e < plus[o].size(); ++e) {
          col[e * static_cast<size_t>(n) + static_cast<size_t>(k)] = (plus[o][e] - minus[o][e]) / (2 * tol.eps);
        }
      }
    }
  }
  ag_gradcheck_result r = AG_GRADCHECK_RESULT_INIT;
  r.input_index = r.output_index = -1;
  r.input_element = r.output_element = -1;
  double worst = -1;
  for (size_t o = 0; o < no; ++o) {
    for (size_t c = 0; c < nc; ++c) {
      const std::vector<double>& a = analytical[o * nc + c];
      const std::vector<double>& num = numerical[o * nc + c];
      const int64_t n = wrt[c]->numel();
      for (size_t e = 0; e < a.size(); ++e) {
        double ratio = std::fabs(a[e] - num[e]) / (tol.atol + tol.rtol * std::fabs(num[e]));
        if (std::isnan(ratio)) ratio = std::numeric_limits<double>::infinity();
        ++r.num_compared;
        if (ratio <= worst) continue;
        worst = ratio;
        r.input_index = static_cast<int32_t>(checked[c]);
        r.output_index = out_index[o];
        r.input_element = static_cast<int64_t>(e) % n;
        r.output_element = static_cast<int64_t>(e) / n;
        r.analytical = a[e];
        r.numerical = num[e];
      }
    }
  }
  r.passed = worst <= 1 ? 1 : 0;
  return r;
}

// Copies of the inputs for a check: those that require grad (f64 only)
// copied and listed in `checked`, the others shared.
Tensors check_inputs(const Tensors& given, std::vector<size_t>& checked) {
  Tensors xs;
  for (size_t i = 0; i < given.size(); ++i) {
    if (requires_grad(*given[i])) {
      xs.push_back(checked_copy(given[i], "inputs", i));
      checked.push_back(i);
    } else {
      xs.push_back(given[i]);
    }
  }
  if (checked.empty()) {
    fail(AG_ERR_INVALID_ARGUMENT, "no input requires grad; mark the inputs to check with ag_tensor_requires_grad");
  }
  return xs;
}

// Fixed pseudo-random values in [-1, 1] (splitmix64), the same on every call.
Tensor fixed_random_like(const Tensor& y, uint64_t stream) {
  Tensor t = ops::full(y->context(), DType::F64, y->shape(), 0.0);
  double* p = t->data_as<double>();
  uint64_t s = 0x9E3779B97F4A7C15ull * (stream + 1);
  for (int64_t k = 0; k < t->numel(); ++k) {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    p[k] = static_cast<double>(z >> 11) / 9007199254740992.0 * 2 - 1;
  }
  return t;
}

}  // namespace

extern "C" {

AG_API ag_status ag_gradcheck_options_init(ag_gradcheck_options* opts) noexcept {
  return api::call("ag_gradcheck_options_init", [&] {
    api::check_out(opts);
    *opts = ag_gradcheck_options AG_GRADCHECK_OPTIONS_INIT;
  });
}

AG_API ag_status ag_gradcheck_result_init(ag_gradcheck_result* result) noexcept {
  return api::call("ag_gradcheck_result_init", [&] {
    api::check_out(result);
    *result = ag_gradcheck_result AG_GRADCHECK_RESULT_INIT;
  });
}

AG_API ag_status ag_gradcheck(ag_gradcheck_result* result, ag_fn fn, void* user_data,
                              const ag_tensor* const* inputs, int32_t num_inputs, int32_t num_outputs,
                              const ag_gradcheck_options* opts) noexcept {
  return api::call("ag_gradcheck", [&] {
    check_result_arg(result);
    const api::UserFn f = api::user_fn(fn, user_data, num_outputs);
    const Tolerances tol = tolerances_arg(opts);
    std::vector<size_t> checked;
    const Tensors xs = check_inputs(api::input_args(inputs, num_inputs, false), checked);
    std::vector<int32_t> out_index;
    for (int32_t o = 0; o < num_outputs; ++o) out_index.push_back(o);
    const TensorFn call = [&](const Tensors& in) { return api::call_fn(f, in); };
    write_result(result, run_check(call, xs, checked, out_index, tol));
  });
}

AG_API ag_status ag_gradgradcheck(ag_gradcheck_result* result, ag_fn fn, void* user_data,
                                  const ag_tensor* const* inputs, int32_t num_inputs,
                                  const ag_tensor* const* grad_outputs, int32_t num_outputs,
                                  const ag_gradcheck_options* opts) noexcept {
  return api::call("ag_gradgradcheck", [&] {
    check_result_arg(result);
    const api::UserFn f = api::user_fn(fn, user_data, num_outputs);
    const Tolerances tol = tolerances_arg(opts);
    std::vector<size_t> checked_x;
    Tensors xs = check_inputs(api::input_args(inputs, num_inputs, false), checked_x);
    // One evaluation to learn the outputs the grad_outputs must fit.
    Tensors probe;
    {
      GradModeGuard on(true);
      probe = api::call_fn(f, xs);
    }
    std::vector<size_t> checked = checked_x;
    for (size_t o = 0; o < probe.size(); ++o) {
      const Tensor& y = probe[o];
      const std::string what = str("grad_outputs[", o, "]"), out = str("outputs[", o, "]");
      if (y->dtype() != DType::F64) {
        fail(AG_ERR_DTYPE, "fn returned ", out, " of dtype ", dtype_name(y->dtype()),
             "; the grad_outputs are perturbed too, so the outputs must be f64");
      }
      const ag_tensor* given = grad_outputs ? grad_outputs[o] : nullptr;
      Tensor v = given ? api::seed_for(y, given, what.c_str(), out.c_str()) : fixed_random_like(y, o);
      checked.push_back(xs.size());
      xs.push_back(checked_copy(v, "grad_outputs", o));
    }
    probe.clear();
    const size_t n_in = static_cast<size_t>(num_inputs);
    std::vector<int32_t> out_index;
    for (size_t c : checked_x) out_index.push_back(static_cast<int32_t>(c));
    // (inputs, grad_outputs) -> the vjp of fn, recorded so it can be differentiated.
    const TensorFn vjp = [&](const Tensors& all) {
      GradModeGuard on(true);
      const Tensors x(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n_in));
      const Tensors v(all.begin() + static_cast<std::ptrdiff_t>(n_in), all.end());
      const Tensors outs = api::call_fn(f, x);
      for (size_t o = 0; o < outs.size(); ++o) {
        if (outs[o]->shape() != v[o]->shape() || outs[o]->dtype() != v[o]->dtype()) {
          fail(AG_ERR_CALLBACK, "fn returned outputs[", o, "] of shape ", shape_str(outs[o]->shape()), " and dtype ",
               dtype_name(outs[o]->dtype()), ", and of shape ", shape_str(v[o]->shape()), " and dtype ",
               dtype_name(v[o]->dtype()), " before");
        }
      }
      Tensors wrt;
      for (size_t c : checked_x) wrt.push_back(x[c]);
      Tensors g = api::grads_of(outs, v, wrt, true);
      for (size_t k = 0; k < g.size(); ++k) {
        if (!g[k]) g[k] = ops::zeros_like(wrt[k]);
      }
      return g;
    };
    write_result(result, run_check(vjp, xs, checked, out_index, tol));
  });
}

}  // extern "C"
