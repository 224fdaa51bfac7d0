// The sample table of the gradient checker: how to call each op on which
// inputs. An op whose CHECK column in ops.def is generic gets its cases in
// test_gradcheck.cc (from its DOMAIN and ATTRS columns); an op with CHECK
// CUSTOM provides `std::vector<Case> cases_<name>()` in a cases_<area>.cc file
// of this directory, declared here from ops.def, so an op without cases fails
// to link.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "ag/ag.h"

namespace gradcheck {

using Shape = std::vector<int64_t>;

// One input of a case. A differentiable input (dtype 0) is sampled uniformly
// from (lo, hi) in the dtype under test and perturbed by the checker. A
// fixed input (indices, masks, class targets) has dtype AG_I64 or AG_BOOL and
// takes `values` as they are (one per element), never perturbed.
struct Input {
  Input() = default;
  explicit Input(Shape s, double lo_ = -2.0, double hi_ = 2.0) : shape(std::move(s)), lo(lo_), hi(hi_) {}

  Shape shape;
  double lo = -2.0, hi = 2.0;
  ag_dtype dtype = static_cast<ag_dtype>(0);
  std::vector<double> values;
  bool fixed() const { return dtype != 0; }
};

inline Input fixed_input(ag_dtype dtype, Shape shape, std::vector<double> values) {
  Input in;
  in.shape = std::move(shape);
  in.dtype = dtype;
  in.values = std::move(values);
  return in;
}

// An int64 index input holding `values`.
inline Input index(Shape shape, std::vector<double> values) {
  return fixed_input(AG_I64, std::move(shape), std::move(values));
}

// x[0] transposed in its last two dims before `op` (a strided input).
template <class Op>
ag_status transposed(ag_tensor** out, const std::vector<ag_tensor*>& x, Op op) {
  ag_tensor* t = nullptr;
  ag_status st = ag_op_transpose(&t, x[0], -2, -1);
  if (st == AG_OK) st = op(out, t);
  ag_tensor_release(t);
  return st;
}

// One way to call an op. The label starts with the op's name; text after a
// '(' describes the attributes. `call` returns one tensor (for several
// outputs, the case picks or combines them). A non-differentiable case
// (comparisons, argmax, ...) is only checked to record no graph.
struct Case {
  using Call = std::function<ag_status(ag_tensor**, const std::vector<ag_tensor*>&)>;
  Case(std::string label_, std::vector<Input> inputs_, Call call_, bool differentiable_ = true)
      : label(std::move(label_)), inputs(std::move(inputs_)), call(std::move(call_)), differentiable(differentiable_) {}

  std::string label;
  std::vector<Input> inputs;
  Call call;
  bool differentiable;
};

using Cases = std::vector<Case>;

// A CUSTOM check's cases come from cases_<name>(); the generic checks
// (CHECK column of ops.def) are in test_gradcheck.cc.
#define AG_CASES_DECL_CUSTOM(name) Cases cases_##name();
#define AG_CASES_DECL(name, check) AG_CASES_DECL_##check(name)
#define AG_CASES_DECL_UNARY(name)
#define AG_CASES_DECL_UNARY_SCALAR(name)
#define AG_CASES_DECL_UNARY_SCALAR2(name)
#define AG_CASES_DECL_BINARY(name)
#define AG_CASES_DECL_COMPARE(name)
#define AG_CASES_DECL_SHAPE(name)
#define AG_CASES_DECL_DTYPE(name)
#define AG_CASES_DECL_DIM(name)
#define AG_CASES_DECL_DIMS(name)
#define AG_OP(name, family, check, ...) AG_CASES_DECL(name, check)
#include "ops/ops.def"

// c followed by y * y: the gradient then depends on x, so the second-order
// check runs through the op's backward (for ops linear in x: views, copies,
// gathers and scatters).
inline Case squared(Case c) {
  Case::Call f = c.call;
  c.label += " squared";
  c.call = [f](ag_tensor** out, const std::vector<ag_tensor*>& x) {
    ag_tensor* t = nullptr;
    ag_status st = f(&t, x);
    if (st == AG_OK) st = ag_op_mul(out, t, t);
    ag_tensor_release(t);
    return st;
  };
  return c;
}

// A constant tensor of like's dtype and context.
inline ag_tensor* constant_like(const ag_tensor* like, std::vector<int64_t> shape, std::vector<double> values) {
  ag_context* ctx = nullptr;
  if (ag_tensor_context(&ctx, like) != AG_OK) return nullptr;
  ag_tensor* t = nullptr;
  const ag_dtype dt = ag_tensor_dtype(like);
  std::vector<float> f(values.begin(), values.end());
  const void* data = dt == AG_F32 ? static_cast<const void*>(f.data()) : static_cast<const void*>(values.data());
  if (ag_tensor_create(&t, ctx, dt, shape.data(), static_cast<int32_t>(shape.size()), data) != AG_OK) t = nullptr;
  ag_context_release(ctx);
  return t;
}

// op(out, x, c) with c a constant made from shape and values, released after.
template <class Op>
inline ag_status with_constant(ag_tensor** out, const ag_tensor* like, std::vector<int64_t> shape, std::vector<double> values,
                        Op op) {
  ag_tensor* c = constant_like(like, std::move(shape), std::move(values));
  if (c == nullptr) return AG_ERR_INVALID_ARGUMENT;
  const ag_status st = op(out, c);
  ag_tensor_release(c);
  return st;
}

// For ops without tensor inputs (creation, random): a non-differentiable
// case whose call gets a context that lives as long as the test process.
Case no_input_case(std::string label, std::function<ag_status(ag_tensor**, ag_context*)> fn);

}  // namespace gradcheck
