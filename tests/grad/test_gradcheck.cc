// Gradient checks of every op in ops.def, through the C API: analytic
// gradients (ag_backward with a random grad_root) against central finite
// differences in f64, on random inputs including broadcast shapes; second
// derivatives through create_graph; f32 gradients against the f64 path.
// The op list comes from ops.def: a new op is checked without a new test,
// and a row in the sample table below (or, for a CUSTOM op, its cases_<name>
// function, see gradcheck.h) gives it shapes, attributes, domains.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "gradcheck.h"

namespace {

using namespace gradcheck;

#define ASSERT_AG(call) ASSERT_EQ((call), AG_OK) << ag_last_error_message()

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

class Ctx {
 public:
  Ctx() { ag_context_create(&ctx_, nullptr); }
  ~Ctx() { ag_context_release(ctx_); }
  ag_context* get() const { return ctx_; }

 private:
  ag_context* ctx_ = nullptr;
};

ag_tensor* make(ag_context* ctx, ag_dtype dt, const Shape& shape, const std::vector<double>& v) {
  ag_tensor* t = nullptr;
  if (dt == AG_F64) {
    ag_tensor_create(&t, ctx, dt, shape.data(), static_cast<int32_t>(shape.size()), v.data());
  } else {
    std::vector<float> f(v.begin(), v.end());
    ag_tensor_create(&t, ctx, dt, shape.data(), static_cast<int32_t>(shape.size()), f.data());
  }
  return t;
}

// The tensor of input `in` with values v: fixed inputs in their own dtype.
ag_tensor* make_input(ag_context* ctx, ag_dtype dt, const Input& in, const std::vector<double>& v) {
  if (!in.fixed()) return make(ctx, dt, in.shape, v);
  ag_tensor* t = nullptr;
  const int32_t nd = static_cast<int32_t>(in.shape.size());
  if (in.dtype == AG_I64) {
    std::vector<int64_t> i(v.begin(), v.end());
    ag_tensor_create(&t, ctx, AG_I64, in.shape.data(), nd, i.data());
  } else {
    std::vector<uint8_t> b(v.size());
    for (size_t k = 0; k < v.size(); ++k) b[k] = v[k] != 0.0;
    ag_tensor_create(&t, ctx, AG_BOOL, in.shape.data(), nd, b.data());
  }
  return t;
}

std::vector<double> read(const ag_tensor* t) {
  const int64_t n = ag_tensor_numel(t);
  std::vector<double> out(static_cast<size_t>(n));
  if (ag_tensor_dtype(t) == AG_F64) {
    ag_tensor_copy_data(t, out.data(), out.size() * sizeof(double));
  } else {
    std::vector<float> f(out.size());
    ag_tensor_copy_data(t, f.data(), f.size() * sizeof(float));
    out.assign(f.begin(), f.end());
  }
  return out;
}

Shape shape_of(const ag_tensor* t) {
  Shape s(static_cast<size_t>(ag_tensor_ndim(t)));
  ag_tensor_shape(t, s.data(), static_cast<int32_t>(s.size()));
  return s;
}

// Everything one gradient evaluation needs: inputs as numbers, the seed, the dtype.
struct Problem {
  const Case* c;
  std::vector<std::vector<double>> x;
  Shape out_shape;
  std::vector<double> seed;
};

// <seed, f(x)> with grad mode off.
double objective(ag_context* ctx, ag_dtype dt, const Problem& p, const std::vector<std::vector<double>>& x) {
  int32_t prev = 0;
  ag_grad_mode_set(0, &prev);
  std::vector<ag_tensor*> in;
  for (size_t i = 0; i < x.size(); ++i) in.push_back(make_input(ctx, dt, p.c->inputs[i], x[i]));
  ag_tensor* y = nullptr;
  const ag_status st = p.c->call(&y, in);
  double dot = std::nan("");
  if (st == AG_OK) {
    const std::vector<double> v = read(y);
    dot = 0.0;
    for (size_t k = 0; k < v.size(); ++k) dot += v[k] * p.seed[k];
  }
  ag_tensor_release(y);
  for (ag_tensor* t : in) ag_tensor_release(t);
  ag_grad_mode_set(prev, nullptr);
  return dot;
}

// Analytic gradients of <seed, f(x)> for every input, by ag_backward.
std::vector<std::vector<double>> analytic(ag_context* ctx, ag_dtype dt, const Problem& p) {
  std::vector<ag_tensor*> in;
  for (size_t i = 0; i < p.x.size(); ++i) {
    in.push_back(make_input(ctx, dt, p.c->inputs[i], p.x[i]));
    if (!p.c->inputs[i].fixed()) ag_tensor_requires_grad(in.back(), 1);
  }
  ag_tensor* y = nullptr;
  EXPECT_EQ(p.c->call(&y, in), AG_OK) << p.c->label << ": " << ag_last_error_message();
  ag_tensor* seed = make(ctx, dt, p.out_shape, p.seed);
  EXPECT_EQ(ag_backward(y, seed, nullptr), AG_OK) << ag_last_error_message();
  std::vector<std::vector<double>> grads;
  for (ag_tensor* t : in) {
    ag_tensor* g = nullptr;
    if (ag_tensor_get_requires_grad(t)) {
      EXPECT_EQ(ag_tensor_grad(&g, t), AG_OK);
    }
    grads.push_back(g ? read(g) : std::vector<double>(static_cast<size_t>(ag_tensor_numel(t)), 0.0));
    ag_tensor_release(g);
  }
  ag_tensor_release(seed);
  ag_tensor_release(y);
  for (ag_tensor* t : in) ag_tensor_release(t);
  return grads;
}

Problem make_problem(ag_context* ctx, const Case& c, std::mt19937_64& rng) {
  Problem p;
  p.c = &c;
  for (const Input& in : c.inputs) {
    if (in.fixed()) {
      p.x.push_back(in.values);
      continue;
    }
    std::uniform_real_distribution<double> u(in.lo, in.hi);
    std::vector<double> v(static_cast<size_t>(numel(in.shape)));
    for (double& e : v) e = u(rng);
    p.x.push_back(v);
  }
  // Output shape from one forward evaluation.
  std::vector<ag_tensor*> in;
  for (size_t i = 0; i < p.x.size(); ++i) in.push_back(make_input(ctx, AG_F64, c.inputs[i], p.x[i]));
  ag_tensor* y = nullptr;
  EXPECT_EQ(c.call(&y, in), AG_OK) << c.label << ": " << ag_last_error_message();
  if (y) p.out_shape = shape_of(y);
  ag_tensor_release(y);
  for (ag_tensor* t : in) ag_tensor_release(t);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  p.seed.resize(static_cast<size_t>(numel(p.out_shape)));
  for (double& e : p.seed) e = u(rng);
  return p;
}

// ---- the sample table: how to call each family, and per-op overrides ----

using Unary = ag_status (*)(ag_tensor**, const ag_tensor*);
using UnaryScalar = ag_status (*)(ag_tensor**, const ag_tensor*, double);
using UnaryScalar2 = ag_status (*)(ag_tensor**, const ag_tensor*, double, double);
using Binary = ag_status (*)(ag_tensor**, const ag_tensor*, const ag_tensor*);
using ShapeOp = ag_status (*)(ag_tensor**, const ag_tensor*, const int64_t*, int32_t);
using DtypeOp = ag_status (*)(ag_tensor**, const ag_tensor*, ag_dtype);
using DimOp = ag_status (*)(ag_tensor**, const ag_tensor*, int64_t);
using DimsOp = ag_status (*)(ag_tensor**, const ag_tensor*, const int64_t*, int32_t, int32_t);

// An op's knobs from ops.def: DOMAIN, the sampling range of its first two
// differentiable inputs ({} = (-2, 2)), and ATTRS, the attribute values of
// the scalar checks ({} = the check's defaults).
struct Knobs {
  std::vector<double> domain, attrs;
  void range(size_t input, double& lo, double& hi) const {
    if (domain.size() >= 2 * input + 2) lo = domain[2 * input], hi = domain[2 * input + 1];
  }
};

const std::vector<Shape> kUnaryShapes = {{}, {5}, {2, 3}, {2, 1, 3}};
const std::vector<std::pair<Shape, Shape>> kBinaryShapes = {
    {{2, 3}, {2, 3}}, {{2, 3}, {3}}, {{2, 1}, {1, 3}}, {{}, {2, 2}}, {{4, 1, 3}, {2, 1}}, {{3}, {}}};

std::vector<Case> unary_cases(const std::string& name, Unary fn, const Knobs& k) {
  std::vector<Case> cases;
  for (const Shape& s : kUnaryShapes) {
    Input in{s};
    k.range(0, in.lo, in.hi);
    cases.push_back({name, {in}, [fn](ag_tensor** out, const std::vector<ag_tensor*>& x) { return fn(out, x[0]); }});
  }
  return cases;
}

std::vector<Case> unary_scalar_cases(const std::string& name, UnaryScalar fn, const Knobs& k) {
  const std::vector<double> attrs = k.attrs.empty() ? std::vector<double>{2.0, 3.0, 0.5, -1.5, 1.0, 0.0} : k.attrs;
  std::vector<Case> cases;
  for (double a : attrs) {
    for (const Shape& s : kUnaryShapes) {
      Input in{s};
      k.range(0, in.lo, in.hi);
      cases.push_back({name + "(" + std::to_string(a) + ")", {in},
                       [fn, a](ag_tensor** out, const std::vector<ag_tensor*>& x) { return fn(out, x[0], a); }});
    }
  }
  return cases;
}

// Attribute pairs (ATTRS: a1, a2, a1, a2, ...; default (0, 1)).
std::vector<Case> unary_scalar2_cases(const std::string& name, UnaryScalar2 fn, const Knobs& k) {
  const std::vector<double> attrs = k.attrs.empty() ? std::vector<double>{0.0, 1.0} : k.attrs;
  std::vector<Case> cases;
  for (size_t i = 0; i + 1 < attrs.size(); i += 2) {
    const double a1 = attrs[i], a2 = attrs[i + 1];
    for (const Shape& s : kUnaryShapes) {
      Input in{s};
      k.range(0, in.lo, in.hi);
      cases.push_back({name + "(" + std::to_string(a1) + ", " + std::to_string(a2) + ")", {in},
                       [fn, a1, a2](ag_tensor** out, const std::vector<ag_tensor*>& x) {
                         return fn(out, x[0], a1, a2);
                       }});
    }
  }
  return cases;
}

// Comparisons: bool results, no gradient.
std::vector<Case> compare_cases(const std::string& name, Binary fn, const Knobs&) {
  std::vector<Case> cases;
  for (const auto& [sa, sb] : kBinaryShapes) {
    cases.push_back({name, {Input{sa}, Input{sb}},
                     [fn](ag_tensor** out, const std::vector<ag_tensor*>& x) { return fn(out, x[0], x[1]); },
                     false});
  }
  return cases;
}

std::vector<Case> binary_cases(const std::string& name, Binary fn, const Knobs& k) {
  std::vector<Case> cases;
  for (const auto& [sa, sb] : kBinaryShapes) {
    Input a{sa}, b{sb};
    k.range(0, a.lo, a.hi);
    k.range(1, b.lo, b.hi);
    cases.push_back({name, {a, b}, [fn](ag_tensor** out, const std::vector<ag_tensor*>& x) { return fn(out, x[0], x[1]); }});
  }
  return cases;
}

std::vector<Case> shape_cases(const std::string& name, ShapeOp fn, const Knobs&) {
  // (input shape, attribute shape) pairs valid for the op.
  std::vector<std::pair<Shape, Shape>> pairs;
  if (name == "expand") pairs = {{{3}, {2, 3}}, {{2, 1}, {2, 4}}, {{}, {3}}, {{2, 1, 3}, {2, 2, 3}}};
  if (name == "reshape") pairs = {{{2, 3}, {3, 2}}, {{2, 3}, {-1}}, {{}, {1, 1}}, {{2, 3, 2}, {6, -1}}, {{4}, {2, 1, 2}}};
  if (name == "sum_to_size") pairs = {{{2, 3}, {3}}, {{2, 3}, {2, 1}}, {{2, 3}, {}}, {{2, 4, 3}, {4, 1}}};
  std::vector<Case> cases;
  for (const auto& [in, attr] : pairs) {
    cases.push_back({name, {Input{in}}, [fn, attr](ag_tensor** out, const std::vector<ag_tensor*>& x) {
                       return fn(out, x[0], attr.data(), static_cast<int32_t>(attr.size()));
                     }});
  }
  return cases;
}

std::vector<Case> dtype_cases(const std::string& name, DtypeOp fn, const Knobs&) {
  std::vector<Case> cases;
  for (const Shape& s : kUnaryShapes) {
    // The target is the input's own dtype, so the f64 check stays exact; the
    // f32 <-> f64 conversion is checked by the f32-vs-f64 comparison below.
    cases.push_back({name, {Input{s}}, [fn](ag_tensor** out, const std::vector<ag_tensor*>& x) {
                       return fn(out, x[0], ag_tensor_dtype(x[0]));
                     }});
  }
  return cases;
}

// Calls fn on x expanded to `to` (a stride-0, non-contiguous input).
template <class F>
ag_status on_expanded(ag_tensor** out, const ag_tensor* x, const Shape& to, F fn) {
  ag_tensor* e = nullptr;
  ag_status st = ag_op_expand(&e, x, to.data(), static_cast<int32_t>(to.size()));
  if (st == AG_OK) st = fn(out, e);
  ag_tensor_release(e);
  return st;
}

std::vector<Case> dim_cases(const std::string& name, DimOp fn, const Knobs& k) {
  const std::vector<std::pair<Shape, int64_t>> rows = {{{}, 0},     {{5}, 0},        {{2, 3}, 1},   {{2, 3}, 0},
                                                       {{2, 3}, -1}, {{2, 3, 4}, 1}, {{2, 3, 4}, -3}};
  std::vector<Case> cases;
  for (const auto& [s, dim] : rows) {
    Input in{s};
    k.range(0, in.lo, in.hi);
    cases.push_back({name + "(dim=" + std::to_string(dim) + ")", {in},
                     [fn, dim = dim](ag_tensor** out, const std::vector<ag_tensor*>& x) { return fn(out, x[0], dim); }});
  }
  for (int64_t dim : {0, 1}) {  // a broadcast (non-contiguous) input
    cases.push_back({name + "(expanded, dim=" + std::to_string(dim) + ")", {Input{{3, 1}}},
                     [fn, dim](ag_tensor** out, const std::vector<ag_tensor*>& x) {
                       return on_expanded(out, x[0], {3, 4},
                                          [&](ag_tensor** o, const ag_tensor* e) { return fn(o, e, dim); });
                     }});
  }
  return cases;
}

std::vector<Case> dims_cases(const std::string& name, DimsOp fn, const Knobs& k) {
  const std::vector<std::pair<Shape, Shape>> rows = {
      {{2, 3}, {1}}, {{2, 3}, {0}}, {{2, 3, 4}, {0, 2}}, {{2, 3, 4}, {-1}}, {{2, 3}, {}}, {{}, {0}}, {{2, 3, 4}, {2, 0}}};
  std::vector<Case> cases;
  for (const auto& [s, dims] : rows) {
    for (int32_t keep : {0, 1}) {
      Input in{s};
      k.range(0, in.lo, in.hi);
      cases.push_back({name + "(keepdim=" + std::to_string(keep) + ")", {in},
                       [fn, dims = dims, keep](ag_tensor** out, const std::vector<ag_tensor*>& x) {
                         return fn(out, x[0], dims.data(), static_cast<int32_t>(dims.size()), keep);
                       }});
    }
  }
  cases.push_back({name + "(expanded)", {Input{{3, 1}}}, [fn](ag_tensor** out, const std::vector<ag_tensor*>& x) {
                     const int64_t dims[1] = {1};
                     return on_expanded(out, x[0], {2, 3, 4},
                                        [&](ag_tensor** o, const ag_tensor* e) { return fn(o, e, dims, 1, 0); });
                   }});
  return cases;
}

std::vector<Case> all_cases() {
  std::vector<Case> all;
  auto add = [&](std::vector<Case> c) { all.insert(all.end(), c.begin(), c.end()); };
  const double NONE = std::nan("");  // an absent bound in ATTRS
  (void)NONE;
#define AG_UNPAREN(...) __VA_ARGS__
#define AG_CASES_UNARY(name, k) add(unary_cases(#name, &ag_op_##name, k));
#define AG_CASES_UNARY_SCALAR(name, k) add(unary_scalar_cases(#name, &ag_op_##name, k));
#define AG_CASES_UNARY_SCALAR2(name, k) add(unary_scalar2_cases(#name, &ag_op_##name, k));
#define AG_CASES_BINARY(name, k) add(binary_cases(#name, &ag_op_##name, k));
#define AG_CASES_COMPARE(name, k) add(compare_cases(#name, &ag_op_##name, k));
#define AG_CASES_SHAPE(name, k) add(shape_cases(#name, &ag_op_##name, k));
#define AG_CASES_DTYPE(name, k) add(dtype_cases(#name, &ag_op_##name, k));
#define AG_CASES_DIM(name, k) add(dim_cases(#name, &ag_op_##name, k));
#define AG_CASES_DIMS(name, k) add(dims_cases(#name, &ag_op_##name, k));
#define AG_CASES_CUSTOM(name, k) add(cases_##name());
#define AG_OP(name, family, check, flags, domain, attrs) \
  AG_CASES_##check(name, (Knobs{{AG_UNPAREN domain}, {AG_UNPAREN attrs}}))
#include "ops/ops.def"
  return all;
}

std::string base_name(const std::string& label) { return label.substr(0, label.find('(')); }

TEST(GradCheck, EveryOpHasCases) {
  const std::vector<Case> cases = all_cases();
  for (int32_t i = 0; i < ag_op_count(); ++i) {
    const std::string name = ag_op_name(i);
    bool found = false;
    for (const Case& c : cases) found = found || base_name(c.label) == name;
    EXPECT_TRUE(found) << "op " << name << " has no gradient-check case";
  }
}

TEST(GradCheck, FirstOrderF64) {
  Ctx ctx;
  std::mt19937_64 rng(1234);
  int checked = 0;
  for (const Case& c : all_cases()) {
    if (!c.differentiable) continue;
    Problem p = make_problem(ctx.get(), c, rng);
    const auto grads = analytic(ctx.get(), AG_F64, p);
    const double eps = 1e-6;
    for (size_t i = 0; i < p.x.size(); ++i) {
      if (c.inputs[i].fixed()) continue;
      for (size_t j = 0; j < p.x[i].size(); ++j) {
        auto xp = p.x, xm = p.x;
        xp[i][j] += eps;
        xm[i][j] -= eps;
        const double fd = (objective(ctx.get(), AG_F64, p, xp) - objective(ctx.get(), AG_F64, p, xm)) / (2 * eps);
        EXPECT_NEAR(grads[i][j], fd, 1e-6 + 1e-5 * std::fabs(fd))
            << c.label << " input " << i << " element " << j;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 100);
}

// Second order: with v(x) = d<seed, f(x)>/dx from a create_graph backward,
// d<u, v(x)>/dx (a second backward through the recorded backward) is compared
// with central differences of <u, v(x)> computed by first-order backward.
TEST(GradCheck, SecondOrderF64) {
  Ctx ctx;
  std::mt19937_64 rng(99);
  for (const Case& c : all_cases()) {
    if (!c.differentiable) continue;
    Problem p = make_problem(ctx.get(), c, rng);
    std::vector<std::vector<double>> u;
    for (const auto& xi : p.x) {
      std::uniform_real_distribution<double> d(-1.0, 1.0);
      std::vector<double> ui(xi.size());
      for (double& e : ui) e = d(rng);
      u.push_back(ui);
    }
    auto dot_uv = [&](const std::vector<std::vector<double>>& x) {
      Problem q = p;
      q.x = x;
      const auto v = analytic(ctx.get(), AG_F64, q);
      double s = 0.0;
      for (size_t i = 0; i < v.size(); ++i)
        for (size_t j = 0; j < v[i].size(); ++j) s += u[i][j] * v[i][j];
      return s;
    };

    std::vector<ag_tensor*> in;
    for (size_t i = 0; i < p.x.size(); ++i) {
      in.push_back(make_input(ctx.get(), AG_F64, c.inputs[i], p.x[i]));
      if (!c.inputs[i].fixed()) ag_tensor_requires_grad(in.back(), 1);
    }
    ag_tensor* y = nullptr;
    ASSERT_AG(c.call(&y, in));
    ag_tensor* seed = make(ctx.get(), AG_F64, p.out_shape, p.seed);
    ag_backward_options opts = AG_BACKWARD_OPTIONS_INIT;
    opts.create_graph = 1;
    ASSERT_AG(ag_backward(y, seed, &opts));
    // s = sum_i <u_i, grad_i>, built from the recorded first-order gradients.
    ag_tensor* s = nullptr;
    std::vector<ag_tensor*> firsts;
    for (size_t i = 0; i < in.size(); ++i) {
      ag_tensor* g = nullptr;
      if (!c.inputs[i].fixed()) {
        ASSERT_AG(ag_tensor_grad(&g, in[i]));
      }
      firsts.push_back(g);
      if (!g || !ag_tensor_get_requires_grad(g)) continue;  // gradient constant in x
      ag_tensor* ut = make(ctx.get(), AG_F64, c.inputs[i].shape, u[i]);
      ag_tensor *prod = nullptr, *term = nullptr;
      ASSERT_AG(ag_op_mul(&prod, g, ut));
      ASSERT_AG(ag_op_sum(&term, prod));
      if (s) {
        ag_tensor* acc = nullptr;
        ASSERT_AG(ag_op_add(&acc, s, term));
        ag_tensor_release(s);
        ag_tensor_release(term);
        s = acc;
      } else {
        s = term;
      }
      ag_tensor_release(prod);
      ag_tensor_release(ut);
    }
    std::vector<std::vector<double>> second(in.size());
    for (size_t i = 0; i < in.size(); ++i) second[i].assign(p.x[i].size(), 0.0);
    if (s) {
      for (size_t i = 0; i < in.size(); ++i) {
        if (!c.inputs[i].fixed()) {
          ASSERT_AG(ag_tensor_set_grad(in[i], nullptr));
        }
      }
      ASSERT_AG(ag_backward(s, nullptr, nullptr));
      for (size_t i = 0; i < in.size(); ++i) {
        ag_tensor* g2 = nullptr;
        if (!c.inputs[i].fixed()) {
          ASSERT_AG(ag_tensor_grad(&g2, in[i]));
        }
        if (g2) second[i] = read(g2);
        ag_tensor_release(g2);
      }
    }
    const double eps = 1e-5;
    for (size_t i = 0; i < p.x.size(); ++i) {
      if (c.inputs[i].fixed()) continue;
      for (size_t j = 0; j < p.x[i].size(); ++j) {
        auto xp = p.x, xm = p.x;
        xp[i][j] += eps;
        xm[i][j] -= eps;
        const double fd = (dot_uv(xp) - dot_uv(xm)) / (2 * eps);
        EXPECT_NEAR(second[i][j], fd, 1e-5 + 1e-4 * std::fabs(fd)) << c.label << " input " << i << " element " << j;
      }
    }
    ag_tensor_release(s);
    for (ag_tensor* g : firsts) ag_tensor_release(g);
    ag_tensor_release(seed);
    ag_tensor_release(y);
    for (ag_tensor* t : in) ag_tensor_release(t);
  }
}

// A non-differentiable op records no graph even when its inputs require grad.
TEST(GradCheck, NonDifferentiableRecordsNothing) {
  Ctx ctx;
  std::mt19937_64 rng(5);
  for (const Case& c : all_cases()) {
    if (c.differentiable) continue;
    Problem p = make_problem(ctx.get(), c, rng);
    std::vector<ag_tensor*> in;
    for (size_t i = 0; i < p.x.size(); ++i) {
      in.push_back(make_input(ctx.get(), AG_F64, c.inputs[i], p.x[i]));
      if (!c.inputs[i].fixed()) ag_tensor_requires_grad(in.back(), 1);
    }
    ag_tensor* y = nullptr;
    ASSERT_AG(c.call(&y, in));
    EXPECT_EQ(ag_tensor_get_requires_grad(y), 0) << c.label;
    ag_tensor_release(y);
    for (ag_tensor* t : in) ag_tensor_release(t);
  }
}

// f32 gradients on f32-representable inputs agree with the f64 path.
TEST(GradCheck, F32MatchesF64) {
  Ctx ctx;
  std::mt19937_64 rng(7);
  for (const Case& c : all_cases()) {
    if (!c.differentiable) continue;
    Problem p = make_problem(ctx.get(), c, rng);
    for (auto& xi : p.x)
      for (double& e : xi) e = static_cast<float>(e);
    for (double& e : p.seed) e = static_cast<float>(e);
    const auto g64 = analytic(ctx.get(), AG_F64, p);
    const auto g32 = analytic(ctx.get(), AG_F32, p);
    for (size_t i = 0; i < g64.size(); ++i) {
      for (size_t j = 0; j < g64[i].size(); ++j) {
        EXPECT_NEAR(g32[i][j], g64[i][j], 1e-5 + 2e-5 * std::fabs(g64[i][j])) << c.label << " input " << i;
      }
    }
  }
}

}  // namespace
