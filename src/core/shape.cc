#include "core/shape.h"

#include <limits>

#include "core/error.h"

namespace ag {

Dims checked_shape(const int64_t* shape, int32_t ndim, size_t itemsize) {
  if (ndim < 0 || ndim > kMaxDims) fail(AG_ERR_INVALID_ARGUMENT, "ndim ", ndim, " is outside 0..", kMaxDims);
  if (ndim > 0 && shape == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "shape is NULL but ndim is ", ndim);
  Dims d(shape, ndim);
  const int64_t limit = std::numeric_limits<int64_t>::max() / static_cast<int64_t>(itemsize ? itemsize : 1);
  int64_t n = 1;
  for (int i = 0; i < ndim; ++i) {
    if (d[i] < 0) fail(AG_ERR_INVALID_ARGUMENT, "size ", d[i], " of dim ", i, " is negative");
  }
  for (int i = 0; i < ndim; ++i) {
    if (d[i] == 0) return d;  // empty, whatever the other sizes (as NumPy)
  }
  for (int i = 0; i < ndim; ++i) {
    if (n > limit / d[i]) fail(AG_ERR_OUT_OF_MEMORY, "shape ", shape_str(d), " has too many bytes");
    n *= d[i];
  }
  return d;
}

Dims contiguous_strides(const Dims& shape) {
  Dims s;
  s.resize(shape.size());
  int64_t acc = 1;
  for (int i = shape.size() - 1; i >= 0; --i) {
    s[i] = acc;
    // Saturates: only an empty tensor (never indexed) can have sizes whose
    // product overflows.
    if (__builtin_mul_overflow(acc, shape[i] > 0 ? shape[i] : 1, &acc)) acc = INT64_MAX;
  }
  return s;
}

std::string shape_str(const Dims& shape) {
  std::string s = "(";
  for (int i = 0; i < shape.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(shape[i]);
  }
  return s + ")";
}

Dims broadcast_shapes(const Dims& a, const Dims& b) {
  const int n = a.size() > b.size() ? a.size() : b.size();
  Dims out;
  out.resize(n);
  for (int i = 0; i < n; ++i) {
    const int ia = a.size() - n + i, ib = b.size() - n + i;
    const int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    if (da != db && da != 1 && db != 1) {
      fail(AG_ERR_SHAPE, "cannot broadcast shapes ", shape_str(a), " and ", shape_str(b));
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Dims broadcast_strides(const Dims& shape, const Dims& strides, const Dims& to) {
  Dims s;
  s.resize(to.size());
  const int off = to.size() - shape.size();
  for (int i = 0; i < to.size(); ++i) {
    const int j = i - off;
    s[i] = (j < 0 || (shape[j] == 1 && to[i] != 1)) ? 0 : strides[j];
  }
  return s;
}

bool broadcastable_to(const Dims& from, const Dims& to) {
  if (from.size() > to.size()) return false;
  const int off = to.size() - from.size();
  for (int j = 0; j < from.size(); ++j) {
    if (from[j] != 1 && from[j] != to[j + off]) return false;
  }
  return true;
}

}  // namespace ag
