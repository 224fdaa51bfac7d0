// Resampling: interpolate (nearest, linear, bilinear) and pixel_shuffle /
// pixel_unshuffle. interpolate works one spatial dim at a time: nearest is
// an index_select, linear a weighted sum of two index_selects (constant
// weights), so gradients of any order come from index_select (whose
// gradient adds repeated picks) and mul. The pixel shuffles are reshape and
// permute.
#include <cmath>
#include <vector>

#include "ops/index_common.h"
#include "ops/op_common.h"

namespace ag::ops {

namespace {

// w (out values) as a tensor of x's dtype shaped to broadcast along dim d.
Tensor weights_along(const Tensor& x, int d, const std::vector<double>& w) {
  Tensor t = empty(x->context(), DType::F64, Dims{static_cast<int64_t>(w.size())});
  std::copy(w.begin(), w.end(), t->data_as<double>());
  Dims shape;
  for (int i = d; i < x->ndim(); ++i) shape.push_back(i == d ? static_cast<int64_t>(w.size()) : 1);
  return reshape(cast(t, x->dtype()), shape);
}

// PyTorch's source scale of one dim: 1/scale_factor when one was given,
// else in/out (align_corners: (in-1)/(out-1)).
double source_scale(int64_t in, int64_t out, double scale_factor, bool align_corners) {
  if (align_corners) return out > 1 ? static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0;
  return scale_factor > 0 ? 1.0 / scale_factor : static_cast<double>(in) / static_cast<double>(out);
}

Tensor resample_dim(const Tensor& x, int d, int64_t out, double scale_factor, InterpMode mode, bool align_corners) {
  const int64_t in = x->shape()[d];
  const double scale = source_scale(in, out, scale_factor, align_corners);
  Context* ctx = x->context();
  if (mode == InterpMode::Nearest) {
    // In float, as PyTorch computes the nearest source index.
    const float fscale = static_cast<float>(scale);
    std::vector<int64_t> idx;
    for (int64_t o = 0; o < out; ++o) {
      idx.push_back(std::min(static_cast<int64_t>(std::floor(static_cast<float>(o) * fscale)), in - 1));
    }
    return index_select(x, d, i64_tensor(ctx, Dims{out}, idx));
  }
  std::vector<int64_t> i0, i1;
  std::vector<double> l0, l1;
  for (int64_t o = 0; o < out; ++o) {
    double src = align_corners ? static_cast<double>(o) * scale : (static_cast<double>(o) + 0.5) * scale - 0.5;
    if (src < 0) src = 0;
    const int64_t a = std::min(static_cast<int64_t>(src), in - 1);
    const int64_t b = a < in - 1 ? a + 1 : a;
    const double lambda = std::min(src - static_cast<double>(a), 1.0);
    i0.push_back(a);
    i1.push_back(b);
    l0.push_back(1.0 - lambda);
    l1.push_back(lambda);
  }
  return add(mul(index_select(x, d, i64_tensor(ctx, Dims{out}, i0)), weights_along(x, d, l0)),
             mul(index_select(x, d, i64_tensor(ctx, Dims{out}, i1)), weights_along(x, d, l1)));
}

}  // namespace

// interpolate: x (N, C, spatial...) resampled to `size` or by
// scale_factor (output size floor(in * scale_factor)), PyTorch's
// F.interpolate without recompute_scale_factor or antialias.
Tensor interpolate(const Tensor& x, const Dims& size, double scale_factor, InterpMode mode, bool align_corners) {
  check_floating(*x);
  const int spatial = x->ndim() - 2;
  if (mode == InterpMode::Linear && x->ndim() != 3) {
    fail(AG_ERR_SHAPE, "linear mode needs a 3-D input (N, C, L), got shape ", shape_str(x->shape()));
  }
  if (mode == InterpMode::Bilinear && x->ndim() != 4) {
    fail(AG_ERR_SHAPE, "bilinear mode needs a 4-D input (N, C, H, W), got shape ", shape_str(x->shape()));
  }
  if (spatial < 1 || spatial > 3) {
    fail(AG_ERR_SHAPE, "input must have 1 to 3 spatial dims after (N, C), got shape ", shape_str(x->shape()));
  }
  if (mode == InterpMode::Nearest && align_corners) fail(AG_ERR_INVALID_ARGUMENT, "align_corners needs a linear mode");
  const bool by_size = size.size() > 0;
  if (by_size == (scale_factor > 0)) {
    fail(AG_ERR_INVALID_ARGUMENT, "exactly one of size (", size.size(), " entries) and scale_factor (", scale_factor,
         ") must be given");
  }
  if (!by_size && !std::isfinite(scale_factor)) fail(AG_ERR_INVALID_ARGUMENT, "scale_factor ", scale_factor, " is not finite");
  if (by_size && size.size() != 1 && size.size() != spatial) {
    fail(AG_ERR_INVALID_ARGUMENT, "size has ", size.size(), " entries but the input has ", spatial, " spatial dims");
  }
  Tensor t = x;
  for (int k = 0; k < spatial; ++k) {
    const int d = 2 + k;
    const int64_t in = x->shape()[d];
    const double scaled = by_size ? 0.0 : std::floor(static_cast<double>(in) * scale_factor);
    if (scaled >= 0x1p63) {
      fail(AG_ERR_INVALID_ARGUMENT, "dim ", d, " of size ", in, " scaled by ", scale_factor, " overflows int64");
    }
    const int64_t out = by_size ? size[size.size() == 1 ? 0 : k] : static_cast<int64_t>(scaled);
    if (out <= 0 || in <= 0) {
      fail(AG_ERR_SHAPE, "dim ", d, " of size ", in, " would be resampled to ", out, " (both must be positive)");
    }
    t = resample_dim(t, d, out, by_size ? 0.0 : scale_factor, mode, align_corners);
  }
  return t.get() == x.get() ? clone(x) : t;
}

// pixel_shuffle: (*, C*r*r, H, W) -> (*, C, H*r, W*r).
Tensor pixel_shuffle(const Tensor& x, int64_t r) {
  if (r <= 0) fail(AG_ERR_INVALID_ARGUMENT, "upscale_factor ", r, " must be positive");
  if (x->ndim() < 3) fail(AG_ERR_SHAPE, "input must have at least 3 dims, got shape ", shape_str(x->shape()));
  const int n = x->ndim();
  const int64_t C = x->shape()[n - 3], H = x->shape()[n - 2], W = x->shape()[n - 1];
  const int64_t r2 = checked_mul_add(r, r, 0, "upscale_factor^2");
  if (C % r2 != 0) fail(AG_ERR_SHAPE, "channels ", C, " are not divisible by upscale_factor^2 = ", r2);
  // An empty input may have any H and W.
  const int64_t OH = checked_mul_add(H, r, 0, "the output height"), OW = checked_mul_add(W, r, 0, "the output width");
  Dims lead(x->shape().data(), n - 3), s1 = lead, perm, out = lead;
  for (int64_t v : {C / r2, r, r, H, W}) s1.push_back(v);
  for (int i = 0; i < n - 3; ++i) perm.push_back(i);
  for (int v : {0, 3, 1, 4, 2}) perm.push_back(n - 3 + v);
  for (int64_t v : {C / r2, OH, OW}) out.push_back(v);
  if (s1.size() > kMaxDims) fail(AG_ERR_UNSUPPORTED, "input has too many dims (", n, ")");
  return reshape(permute(reshape(x, s1), perm), out);
}

// pixel_unshuffle: (*, C, H*r, W*r) -> (*, C*r*r, H, W).
Tensor pixel_unshuffle(const Tensor& x, int64_t r) {
  if (r <= 0) fail(AG_ERR_INVALID_ARGUMENT, "downscale_factor ", r, " must be positive");
  if (x->ndim() < 3) fail(AG_ERR_SHAPE, "input must have at least 3 dims, got shape ", shape_str(x->shape()));
  const int n = x->ndim();
  const int64_t C = x->shape()[n - 3], H = x->shape()[n - 2], W = x->shape()[n - 1];
  if (H % r != 0 || W % r != 0) {
    fail(AG_ERR_SHAPE, "height ", H, " and width ", W, " must be divisible by downscale_factor ", r);
  }
  Dims lead(x->shape().data(), n - 3), s1 = lead, perm, out = lead;
  for (int64_t v : {C, H / r, r, W / r, r}) s1.push_back(v);
  for (int i = 0; i < n - 3; ++i) perm.push_back(i);
  for (int v : {0, 2, 4, 1, 3}) perm.push_back(n - 3 + v);
  // An empty input may have any C, and H = 0 any r.
  const int64_t OC = checked_mul_add(checked_mul_add(C, r, 0, "the output channels"), r, 0, "the output channels");
  for (int64_t v : {OC, H / r, W / r}) out.push_back(v);
  if (s1.size() > kMaxDims) fail(AG_ERR_UNSUPPORTED, "input has too many dims (", n, ")");
  return reshape(permute(reshape(x, s1), perm), out);
}

}  // namespace ag::ops
