// Normalization layers: layer_norm and rms_norm (a fused Highway kernel over
// contiguous rows; backward written with ag's ops), batch_norm and group_norm
// (composites of the reductions over dims).
#include "ops/inplace.h"
#include "ops/reduce_dims.h"

namespace ag::ops {

namespace {

// The last nd dims of an ndim-dim tensor.
Dims last_dims(int ndim, int nd) {
  Dims dims;
  for (int i = ndim - nd; i < ndim; ++i) dims.push_back(i);
  return dims;
}

// Checks an optional affine parameter of a row norm: same dtype and context
// as x, shape exactly normalized_shape.
void check_affine(const TensorImpl& x, const Tensor& p, const char* what, const Dims& normalized_shape) {
  if (!p) return;
  check_same(x, *p);
  if (p->shape() != normalized_shape) {
    fail(AG_ERR_SHAPE, what, " shape ", shape_str(p->shape()), " does not match normalized_shape ",
         shape_str(normalized_shape));
  }
}

// Checks x against normalized_shape (its last dims); returns their count.
int check_normalized_shape(const TensorImpl& x, const Dims& ns) {
  check_floating(x);
  const int nd = ns.size();
  if (nd == 0) fail(AG_ERR_INVALID_ARGUMENT, "normalized_shape must have at least 1 dim, got ()");
  bool match = nd <= x.ndim();
  for (int i = 0; match && i < nd; ++i) match = x.shape()[x.ndim() - nd + i] == ns[i];
  if (!match) {
    fail(AG_ERR_SHAPE, "normalized_shape ", shape_str(ns), " does not match the last ", nd,
         nd == 1 ? " dim" : " dims", " of input shape ", shape_str(x.shape()));
  }
  return nd;
}

struct RowStats {
  Tensor y, mean, rstd;  // mean is null for rms_norm
};

// y = (x - mean) * rstd [* w] [+ b] over the last nd dims, with mean and rstd
// of shape x's with 1 in those dims; no graph.
RowStats norm_rows_forward(const Tensor& x, int nd, const Tensor& w, const Tensor& b, double eps, bool center) {
  Context* ctx = x->context();
  const DType dt = x->dtype();
  Dims keep = x->shape();
  int64_t n = 1;
  for (int i = x->ndim() - nd; i < x->ndim(); ++i) {
    n *= keep[i];
    keep[i] = 1;
  }
  const Tensor xc = contiguous_data(x);
  const Tensor wc = w ? contiguous_data(w) : Tensor();
  const Tensor bc = b ? contiguous_data(b) : Tensor();
  RowStats r{empty(ctx, dt, x->shape()), center ? empty(ctx, dt, keep) : Tensor(), empty(ctx, dt, keep)};
  Split s;
  s.outer = numel_of(keep);
  s.n = n;
  const int64_t isz = static_cast<int64_t>(itemsize(dt));
  if (n == 0) return r;  // empty rows: nothing to normalize (their stats are never read)
  for_row_blocks(ctx, s, [&](int64_t first, int64_t rows) {
    kernels::norm_rows(dt, center, xc->data() + first * n * isz, wc ? wc->data() : nullptr,
                       bc ? bc->data() : nullptr, r.y->data() + first * n * isz,
                       center ? r.mean->data() + first * isz : nullptr, r.rstd->data() + first * isz, rows, n, eps);
  });
  return r;
}

// Backward of layer_norm (center) and rms_norm, with xhat = (x - mean) * rstd
// and gx = g * w (or g):
//   dx = rstd * (gx - mean(gx) - xhat * mean(gx * xhat))   (no mean(gx) for rms_norm)
//   dw = sum of g * xhat over the leading dims, db = sum of g.
// Under create_graph the statistics are recomputed from x with ag's ops, so
// that second derivatives see how they depend on x; otherwise the saved ones
// are used. Saves x (0), weight (1), mean (2), rstd (3).
struct RowNormBackward final : SavingNode<4> {
  RowNormBackward(bool c, int nd_, double e, bool hw, bool hb) : center(c), nd(nd_), eps(e), has_w(hw), has_b(hb) {}
  const char* name() const override { return center ? "LayerNormBackward" : "RmsNormBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    const Tensor x = saved[0].unpack(*this);
    const Dims dims = last_dims(x->ndim(), nd);
    Tensor mean, rstd;
    if (grad_enabled()) {
      const Tensor var = center ? var_dims(x, dims, true, 0.0) : mean_dims(mul(x, x), dims, true);
      rstd = pow_scalar(add(var, scalar_like(x, eps)), -0.5);
      if (center) mean = mean_dims(x, dims, true);
    } else {
      rstd = saved[3].unpack(*this);
      if (center) mean = saved[2].unpack(*this);
    }
    const Tensor xhat = mul(center ? sub(x, mean) : x, rstd);
    const Tensor& gy = g[0];
    const Tensor w = has_w ? saved[1].unpack(*this) : Tensor();
    if (needs_input_grad(0)) {
      const Tensor gx = has_w ? mul(gy, w) : gy;
      Tensor inner = sub(gx, mul(xhat, mean_dims(mul(gx, xhat), dims, true)));
      if (center) inner = sub(inner, mean_dims(gx, dims, true));
      out[0] = mul(inner, rstd);
    }
    if (has_w && needs_input_grad(1)) out[1] = reduce_to(mul(gy, xhat), w->shape());
    const int ib = has_w ? 2 : 1;
    if (has_b && needs_input_grad(ib)) {
      Dims bshape;
      for (int i = x->ndim() - nd; i < x->ndim(); ++i) bshape.push_back(x->shape()[i]);
      out[ib] = reduce_to(gy, bshape);
    }
  }
  bool center;
  int nd;
  double eps;
  bool has_w, has_b;
};

Tensor row_norm(const Tensor& x, const Dims& normalized_shape, const Tensor& w, const Tensor& b, double eps,
                bool center) {
  const int nd = check_normalized_shape(*x, normalized_shape);
  check_affine(*x, w, "weight", normalized_shape);
  check_affine(*x, b, "bias", normalized_shape);
  RowStats r = norm_rows_forward(x, nd, w, b, eps, center);
  const bool rec = w ? (b ? should_record({x.get(), w.get(), b.get()}) : should_record({x.get(), w.get()}))
                     : (b ? should_record({x.get(), b.get()}) : should_record({x.get()}));
  if (rec) {
    auto record_with = [&](std::initializer_list<const TensorImpl*> in) {
      return record<RowNormBackward>(in, r.y, center, nd, eps, bool(w), bool(b));
    };
    auto n = w ? (b ? record_with({x.get(), w.get(), b.get()}) : record_with({x.get(), w.get()}))
               : (b ? record_with({x.get(), b.get()}) : record_with({x.get()}));
    n->saved[0].save(x, false);
    if (w) n->saved[1].save(w, false);
    if (center) n->saved[2].save(r.mean, false);
    n->saved[3].save(r.rstd, false);
  }
  return r.y;
}

}  // namespace

Tensor layer_norm(const Tensor& x, const Dims& normalized_shape, const Tensor& weight, const Tensor& bias,
                  double eps) {
  return row_norm(x, normalized_shape, weight, bias, eps, true);
}

Tensor rms_norm(const Tensor& x, const Dims& normalized_shape, const Tensor& weight, double eps) {
  return row_norm(x, normalized_shape, weight, Tensor(), eps, false);
}

namespace {

// A per-channel tensor (C) of batch_norm: same dtype and context as x.
void check_channels(const TensorImpl& x, const Tensor& p, const char* what) {
  if (!p) return;
  check_same(x, *p);
  const int64_t c = x.shape()[1];
  if (p->ndim() != 1 || p->shape()[0] != c) {
    fail(AG_ERR_SHAPE, what, " shape ", shape_str(p->shape()), " does not match the ", c,
         " channels (dim 1) of input shape ", shape_str(x.shape()), ": expected (", c, ")");
  }
}

// (C) as (1, C, 1, ...) for an ndim-dim input.
Tensor per_channel(const Tensor& p, int ndim) {
  Dims s;
  for (int i = 0; i < ndim; ++i) s.push_back(i == 1 ? p->shape()[0] : 1);
  return reshape(p, s);
}

}  // namespace

Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, bool training, double momentum, double eps) {
  check_floating(*x);
  if (x->ndim() < 2) fail(AG_ERR_SHAPE, "input must have at least 2 dims (N, C, ...), got shape ", shape_str(x->shape()));
  check_channels(*x, running_mean, "running_mean");
  check_channels(*x, running_var, "running_var");
  check_channels(*x, weight, "weight");
  check_channels(*x, bias, "bias");
  if (!training && (!running_mean || !running_var)) {
    fail(AG_ERR_INVALID_ARGUMENT, "evaluation mode (training = 0) needs running_mean and running_var");
  }
  for (const Tensor* p : {&running_mean, &running_var}) {
    if (training && *p && !(*p)->is_non_overlapping()) {
      fail(AG_ERR_UNSUPPORTED, p == &running_mean ? "running_mean" : "running_var",
           " has elements that alias each other (an expand view) and cannot be updated in place");
    }
  }
  const int ndim = x->ndim();
  const int64_t channels = x->shape()[1];
  const int64_t count = channels > 0 ? x->numel() / channels : 0;
  if (training && count == 1) {
    fail(AG_ERR_INVALID_ARGUMENT, "training needs more than 1 value per channel, got input shape ",
         shape_str(x->shape()));
  }
  Tensor y;
  if (x->numel() == 0) {
    y = clone(x);  // as PyTorch: no statistics, running stats untouched
  } else if (training) {
    Dims dims;
    for (int i = 0; i < ndim; ++i) {
      if (i != 1) dims.push_back(i);
    }
    const Tensor mean = mean_dims(x, dims, true);
    const Tensor var = var_dims(x, dims, true, 0.0);
    y = mul(sub(x, mean), pow_scalar(add(var, scalar_like(x, eps)), -0.5));
    if (running_mean || running_var) {
      GradModeGuard no_graph(false);
      const Dims c{channels};
      const double unbias = static_cast<double>(count) / static_cast<double>(count - 1);
      auto blend = [&](const Tensor& running, const Tensor& batch, double scale) {
        return add(mul(running, scalar_like(x, 1.0 - momentum)), mul(reshape(batch, c), scalar_like(x, momentum * scale)));
      };
      // Both new values first, so that a failure writes neither.
      const Tensor new_mean = running_mean ? blend(running_mean, mean, 1.0) : Tensor();
      const Tensor new_var = running_var ? blend(running_var, var, unbias) : Tensor();
      if (running_mean) copy_(running_mean, new_mean);
      if (running_var) copy_(running_var, new_var);
    }
  } else {
    // The running statistics are constants here (never differentiated).
    Tensor mean, rstd;
    {
      GradModeGuard no_graph(false);
      mean = per_channel(running_mean, ndim);
      rstd = pow_scalar(add(per_channel(running_var, ndim), scalar_like(x, eps)), -0.5);
    }
    y = mul(sub(x, mean), rstd);
  }
  if (weight) y = mul(y, per_channel(weight, ndim));
  if (bias) y = add(y, per_channel(bias, ndim));
  return y;
}

}  // namespace ag::ops
