// Shape ops that rearrange or repeat elements: roll, rot90, tile,
// repeat_interleave, diff. Each is a composition of views with narrow,
// concat, flip, expand, index_select and sub, so its gradients (of any
// order) come from those ops.
#include <algorithm>
#include <vector>

#include "ops/op_common.h"

namespace ag::ops {

namespace {

// x rolled by `shift` along dim d: the last shift elements come first.
Tensor roll_dim(const Tensor& x, int d, int64_t shift) {
  const int64_t n = x->shape()[d];
  if (n == 0) return x;
  const int64_t s = shift % n < 0 ? shift % n + n : shift % n;  // no shift % n + n: n may be near INT64_MAX
  if (s == 0) return x;
  return concat({narrow(x, d, n - s, s), narrow(x, d, 0, n - s)}, d);
}

}  // namespace

// roll: elements shifted along dims (wrapping around); with no dims, x is
// flattened, rolled and reshaped back.
Tensor roll(const Tensor& x, const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims) {
  if (shifts.empty()) fail(AG_ERR_INVALID_ARGUMENT, "shifts is empty");
  if (dims.empty()) {
    if (shifts.size() != 1) {
      fail(AG_ERR_INVALID_ARGUMENT, "without dims, shifts must have one entry, got ", shifts.size());
    }
    return reshape(roll_dim(reshape(x, Dims{-1}), 0, shifts[0]), x->shape());
  }
  if (shifts.size() != dims.size()) {
    fail(AG_ERR_INVALID_ARGUMENT, "shifts has ", shifts.size(), " entries but dims has ", dims.size());
  }
  Tensor t = x;
  for (size_t i = 0; i < dims.size(); ++i) t = roll_dim(t, wrap_dim(dims[i], x->ndim()), shifts[i]);
  return t.get() == x.get() ? clone(x) : t;  // always a new tensor
}

// rot90: k quarter turns in the plane of dims (dims[0] towards dims[1]), as
// PyTorch: k = 1 flips dims[1] and transposes, k = 2 flips both, k = 3 flips
// dims[0] and transposes.
Tensor rot90(const Tensor& x, int64_t k, const Dims& dims) {
  if (dims.size() != 2) fail(AG_ERR_INVALID_ARGUMENT, "dims must have 2 entries, got ", dims.size());
  if (x->ndim() < 2) fail(AG_ERR_SHAPE, "x must have at least 2 dims, got ", x->ndim());
  const int a = wrap_dim(dims[0], x->ndim()), b = wrap_dim(dims[1], x->ndim());
  if (a == b) fail(AG_ERR_INVALID_ARGUMENT, "dims ", dims[0], " and ", dims[1], " name the same dim");
  switch (((k % 4) + 4) % 4) {
    case 1: return transpose(flip(x, Dims{b}), a, b);
    case 2: return flip(x, Dims{a, b});
    case 3: return transpose(flip(x, Dims{a}), a, b);
    default: return clone(x);
  }
}

// tile: repeat with dims filled up with leading 1s to x's ndim.
Tensor tile(const Tensor& x, const Dims& dims) {
  Dims reps;
  for (int i = dims.size(); i < x->ndim(); ++i) reps.push_back(1);
  for (int i = 0; i < dims.size(); ++i) reps.push_back(dims[i]);
  return repeat(x, reps);
}

// repeat_interleave: each element along dim repeated `repeats` times in
// place (unsqueeze, expand, then a copying reshape).
Tensor repeat_interleave(const Tensor& x, int64_t repeats, int64_t dim) {
  if (repeats < 0) fail(AG_ERR_INVALID_ARGUMENT, "repeats ", repeats, " is negative");
  const int d = wrap_dim(dim, x->ndim());
  if (x->ndim() == kMaxDims) fail(AG_ERR_UNSUPPORTED, "x has the maximum of ", kMaxDims, " dims (one more is needed)");
  Tensor u = unsqueeze(x, d + 1);
  Dims shape = u->shape(), out_shape = x->shape();
  shape[d + 1] = repeats;
  int64_t size = 0;
  if (__builtin_mul_overflow(out_shape[d], repeats, &size)) fail(AG_ERR_OUT_OF_MEMORY, "the result is too large");
  out_shape[d] = size;
  checked_shape(out_shape.data(), out_shape.size(), itemsize(x->dtype()));
  return reshape(clone(expand(u, shape)), out_shape);
}

// repeat_interleave with a tensor of repeats: element i along dim repeated
// repeats[i] times (one repeat count is used for all), as an index_select,
// whose gradient adds the copies back.
Tensor repeat_interleave_tensor(const Tensor& x, const Tensor& repeats, int64_t dim) {
  const int d = wrap_dim(dim, x->ndim());
  if (repeats->dtype() != DType::I64) fail(AG_ERR_DTYPE, "repeats must be i64, got ", dtype_name(repeats->dtype()));
  if (repeats->context() != x->context()) fail(AG_ERR_CONTEXT, "repeats belongs to another context than x");
  if (repeats->ndim() > 1) fail(AG_ERR_SHAPE, "repeats must be 0-D or 1-D, got shape ", shape_str(repeats->shape()));
  const int64_t n = x->shape()[d];
  const Tensor r = contiguous_data(repeats);
  if (r->numel() != 1 && r->numel() != n) {
    fail(AG_ERR_SHAPE, "repeats has ", r->numel(), " entries but dim ", d, " has size ", n, " (1 or ", n, " needed)");
  }
  const int64_t* rv = r->data_as<int64_t>();
  // One repeat count for a dim that may be huge (x empty): check the total
  // before looping, and do not loop when it is 0.
  int64_t total = 0;
  if (r->numel() == 1 && n > 0 && rv[0] >= 0 &&
      (__builtin_mul_overflow(n, rv[0], &total) || total > (int64_t{1} << 40))) {
    fail(AG_ERR_OUT_OF_MEMORY, "the result is too large");
  }
  const int64_t count = r->numel() == 1 && rv[0] == 0 ? 0 : n;
  if (r->numel() == 1 && count > 0 && rv[0] < 0) fail(AG_ERR_INVALID_ARGUMENT, "repeats[0] = ", rv[0], " is negative");
  for (int64_t i = 0; i < count && r->numel() > 1; ++i) {
    const int64_t k = rv[i];
    if (k < 0) fail(AG_ERR_INVALID_ARGUMENT, "repeats[", i, "] = ", k, " is negative");
    // Compared without adding: total + k overflows for k near INT64_MAX.
    if (k > (int64_t{1} << 40) - total) fail(AG_ERR_OUT_OF_MEMORY, "the result is too large");
    total += k;
  }
  // The index is allocated before it is filled: the allocator, not a host
  // array, refuses a total beyond memory.
  Tensor index = empty(x->context(), DType::I64, Dims{total});
  int64_t* out = index->data_as<int64_t>();
  for (int64_t i = 0; i < count; ++i) out = std::fill_n(out, rv[r->numel() == 1 ? 0 : i], i);
  return index_select(x, d, index);
}

// diff: the n-th forward difference along dim, x[1:] - x[:-1] applied n
// times, after prepend and append (either may be null) are joined to x
// (n = 0: a copy of x alone).
Tensor diff(const Tensor& x, int64_t n, int64_t dim, const Tensor& prepend, const Tensor& append) {
  if (n < 0) fail(AG_ERR_INVALID_ARGUMENT, "n ", n, " is negative");
  if (x->ndim() == 0) fail(AG_ERR_SHAPE, "x must have at least 1 dim");
  check_floating(*x);  // the differences are subtractions, which take floating tensors
  const int d = wrap_dim(dim, x->ndim());
  if (n == 0) return clone(x);  // as PyTorch: prepend and append are not joined
  Tensor t = x;
  if (prepend || append) {
    std::vector<Tensor> parts;
    if (prepend) parts.push_back(prepend);
    parts.push_back(x);
    if (append) parts.push_back(append);
    t = concat(parts, d);
  }
  // Nothing to subtract: the result's size along d is all there is to compute
  // (n and, for an empty t, that size may be huge).
  const int64_t m = t->shape()[d];
  if (n >= m || t->numel() == 0) return clone(narrow(t, d, 0, n >= m ? 0 : m - n));
  for (int64_t i = 0; i < n && t->shape()[d] > 0; ++i) {
    const int64_t len = t->shape()[d] - 1;
    t = sub(narrow(t, d, 1, len), narrow(t, d, 0, len));
  }
  return t;
}

}  // namespace ag::ops
