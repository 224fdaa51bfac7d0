// Random ops: rand, randn, uniform, normal, bernoulli, randint, and dropout,
// which multiplies by a random mask. Each op reserves the Philox counter
// blocks it needs from its context (Context::reserve_random) after its
// checks and allocation, so a failed call leaves the generator as it was.
// Results are new leaves that do not require grad, except dropout's, which
// is an ordinary mul: its backward multiplies by the same saved mask.
#include <cmath>

#include "kernels/random.h"
#include "ops/op_common.h"

namespace ag::ops {

namespace {

void check_random_dtype(DType dt) {
  if (!is_floating(dt)) fail(AG_ERR_DTYPE, "dtype must be f32 or f64, got ", dtype_name(dt));
}

void check_probability(double p, const char* what) {
  if (!(p >= 0.0 && p <= 1.0)) fail(AG_ERR_INVALID_ARGUMENT, what, " ", p, " is outside [0, 1]");
}

Tensor random_tensor(Context* ctx, DType dt, const Dims& shape, kernels::RandomKind k, double a, double b) {
  check_random_dtype(dt);
  Tensor y = empty(ctx, dt, shape);
  const int64_t n = y->numel();
  const Context::RngState s = ctx->reserve_random(kernels::random_blocks(k, dt, n));
  const size_t item = itemsize(dt);
  for_chunks(ctx, n, [&](int64_t off, int64_t len) {
    kernels::random_fill(k, dt, y->data() + off * item, off, len, s.seed, s.offset, a, b);
  }, Work::Transcendental);
  return y;
}

}  // namespace

Tensor rand(Context* ctx, DType dt, const Dims& shape) { return uniform(ctx, dt, shape, 0.0, 1.0); }

Tensor randn(Context* ctx, DType dt, const Dims& shape) { return normal(ctx, dt, shape, 0.0, 1.0); }

Tensor uniform(Context* ctx, DType dt, const Dims& shape, double low, double high) {
  check_finite(low, "low");
  check_finite(high, "high");
  if (low > high) fail(AG_ERR_INVALID_ARGUMENT, "low ", low, " is above high ", high);
  if (!std::isfinite(high - low)) {
    fail(AG_ERR_INVALID_ARGUMENT, "high - low overflows (low ", low, ", high ", high, ")");
  }
  return random_tensor(ctx, dt, shape, kernels::RandomKind::Uniform, low, high);
}

Tensor normal(Context* ctx, DType dt, const Dims& shape, double mean, double std) {
  check_finite(mean, "mean");
  check_finite(std, "std");
  if (std < 0.0) fail(AG_ERR_INVALID_ARGUMENT, "std ", std, " is negative");
  return random_tensor(ctx, dt, shape, kernels::RandomKind::Normal, mean, std);
}

Tensor bernoulli_scalar(Context* ctx, DType dt, const Dims& shape, double p) {
  check_probability(p, "p");
  return random_tensor(ctx, dt, shape, kernels::RandomKind::Bernoulli, p, 1.0);
}

// bernoulli: y[i] = 1 with probability p[i], else 0, in p's dtype and shape.
Tensor bernoulli(const Tensor& p) {
  check_floating(*p);
  Context* ctx = p->context();
  Tensor pc = p;
  if (!p->is_contiguous()) {
    pc = empty(ctx, p->dtype(), p->shape());
    kernels::copy(p->dtype(), p->shape(), view_of(*p), p->dtype(), pc->data(), contiguous_strides(p->shape()));
  }
  visit_floating(p->dtype(), [&](auto z) {
    using T = decltype(z);
    const T* v = pc->data_as<T>();
    for (int64_t i = 0; i < pc->numel(); ++i) {
      if (!(v[i] >= T(0) && v[i] <= T(1))) {
        fail(AG_ERR_INVALID_ARGUMENT, "probability ", static_cast<double>(v[i]), " at flat index ", i,
             " is outside [0, 1]");
      }
    }
  });
  Tensor y = empty(ctx, p->dtype(), p->shape());
  const int64_t n = y->numel();
  const Context::RngState s = ctx->reserve_random(kernels::random_blocks(kernels::RandomKind::Bernoulli, p->dtype(), n));
  const size_t item = itemsize(p->dtype());
  for_chunks(ctx, n, [&](int64_t off, int64_t len) {
    kernels::bernoulli(p->dtype(), pc->data() + off * item, y->data() + off * item, off, len, s.seed, s.offset);
  }, Work::Transcendental);
  return y;
}

// randint: i64 values uniform in [low, high).
Tensor randint(Context* ctx, const Dims& shape, int64_t low, int64_t high) {
  if (low >= high) fail(AG_ERR_INVALID_ARGUMENT, "low ", low, " is not below high ", high);
  Tensor y = empty(ctx, DType::I64, shape);
  const int64_t n = y->numel();
  const Context::RngState s = ctx->reserve_random(static_cast<uint64_t>((n + 1) / 2));  // two words per value
  const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  for_chunks(ctx, n, [&](int64_t off, int64_t len) {
    kernels::randint(y->data() + off * 8, off, len, s.seed, s.offset, low, range);
  }, Work::Transcendental);
  return y;
}

// dropout: in training, y = x * mask with mask[i] = 1 / (1 - p) with
// probability 1 - p, else 0 (all 0 for p = 1); a recorded mul, so dx = g *
// mask, with the mask saved. Not training, or p = 0: y is x itself; p = 1:
// x * 0, drawing nothing (as PyTorch).
Tensor dropout(const Tensor& x, double p, bool training) {
  check_floating(*x);
  check_probability(p, "p");
  if (!training || p == 0.0) return x;
  if (p == 1.0) return mul(x, scalar_like(x, 0.0));
  const Tensor mask = random_tensor(x->context(), x->dtype(), x->shape(), kernels::RandomKind::Bernoulli, 1.0 - p,
                                    1.0 / (1.0 - p));
  return mul(x, mask);
}

}  // namespace ag::ops
