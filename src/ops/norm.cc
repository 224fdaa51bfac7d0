// Normalization layers: layer_norm and rms_norm (fused Highway kernels over
// contiguous rows: the forward, and the gradients with respect to x and
// weight, which are ops with their own backward), batch_norm (a composite of the reductions over
// dims) and group_norm (layer_norm over the rows of each group).
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
    fail(AG_ERR_SHAPE, "normalized_shape ", shape_str(ns), " does not match the last ", nd, nd == 1 ? " dim" : " dims",
         " of input shape ", shape_str(x.shape()));
  }
  return nd;
}

struct NormOutputs {
  Tensor y, mean, rstd;  // mean is null for rms_norm
};

// y = (x - mean) * rstd [* w] [+ b] over the last nd dims, with mean and rstd
// of shape x's with 1 in those dims; no graph.
NormOutputs norm_rows_forward(const Tensor& x, int nd, const Tensor& w, const Tensor& b, double eps, bool center) {
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
  NormOutputs r{empty(ctx, dt, x->shape()), center ? empty(ctx, dt, keep) : Tensor(), empty(ctx, dt, keep)};
  Split s;
  s.outer = numel_of(keep);
  s.n = n;
  const int64_t isz = static_cast<int64_t>(itemsize(dt));
  if (n == 0) return r;  // empty rows: nothing to normalize (their stats are never read)
  for_row_blocks(ctx, s, [&](int64_t first, int64_t rows) {
    kernels::norm_rows(dt, center, xc->data() + first * n * isz, wc ? wc->data() : nullptr, bc ? bc->data() : nullptr,
                       r.y->data() + first * n * isz, center ? r.mean->data() + first * isz : nullptr,
                       r.rstd->data() + first * isz, rows, n, eps);
  }, Work::Reduction);
  return r;
}

// The statistics of x over `dims` as ag ops (differentiable): the mean
// (center) and var + eps, biased (mean(x^2) + eps without center).
struct GraphStats {
  Tensor mean, var_eps;
};
GraphStats graph_stats(const Tensor& x, const Dims& dims, double eps, bool center) {
  const Tensor var = center ? var_dims(x, dims, true, 0.0) : mean_dims(mul(x, x), dims, true);
  return {center ? mean_dims(x, dims, true) : Tensor(), add(var, scalar_like(x, eps))};
}

// dx = norm_backward(g, x, w) (fused), with gx = g * w, xc = x - mean (x
// without center), r = rstd, c = mean(gx * xc), ga = gx - mean(gx), uc = u -
// mean(u) (gx and u without center):
//   dg = w * norm_backward(u, x), dw = sum of g * norm_backward(u, x)
//   (dx is linear and self-adjoint in gx),
//   dx' = r^3 * ((3 r^2 c mean(u * xc) - mean(u * ga)) * xc - c * uc - mean(u * xc) * ga)
//   (through r, mean and c). Saves g (0), x (1), w (2).
struct NormBackwardBackward final : SavingNode<3> {
  NormBackwardBackward(bool c, int nd_, double e, bool hw) : center(c), nd(nd_), eps(e), has_w(hw) {}
  const char* name() const override { return center ? "LayerNormBackwardBackward" : "RmsNormBackwardBackward"; }
  void apply(TensorList& u, TensorList& out) override;
  bool center;
  int nd;
  double eps;
  bool has_w;
};

// The fused gradient of layer_norm / rms_norm with respect to x. mean and
// rstd, when given, are the forward's statistics of x (a shortcut: the
// kernel would recompute the same bits).
Tensor norm_backward(const Tensor& g, const Tensor& x, const Tensor& w, int nd, double eps, bool center,
                     const Tensor* mean = nullptr, const Tensor* rstd = nullptr) {
  const DType dt = x->dtype();
  int64_t n = 1;
  for (int i = x->ndim() - nd; i < x->ndim(); ++i) n *= x->shape()[i];
  const Tensor gc = contiguous_data(g), xc = contiguous_data(x);
  const Tensor wc = w ? contiguous_data(w) : Tensor();
  Tensor dx = empty(x->context(), dt, x->shape());
  Split s;
  s.outer = n > 0 ? x->numel() / n : 0;
  s.n = n;
  const int64_t isz = static_cast<int64_t>(itemsize(dt));
  for_row_blocks(x->context(), s, [&](int64_t first, int64_t rows) {
    const int64_t off = first * n * isz;
    kernels::norm_backward_rows(dt, center, gc->data() + off, xc->data() + off, wc ? wc->data() : nullptr,
                                mean && center ? (*mean)->data() + first * isz : nullptr,
                                rstd ? (*rstd)->data() + first * isz : nullptr, dx->data() + off, rows, n, eps);
  }, Work::Reduction);
  const bool rec = w ? should_record({g.get(), x.get(), w.get()}) : should_record({g.get(), x.get()});
  if (rec) {
    auto node = w ? record<NormBackwardBackward>({g.get(), x.get(), w.get()}, dx, center, nd, eps, true)
                  : record<NormBackwardBackward>({g.get(), x.get()}, dx, center, nd, eps, false);
    node->saved[0].save(g, false);
    node->saved[1].save(x, false);
    if (w) node->saved[2].save(w, false);
  }
  return dx;
}

void NormBackwardBackward::apply(TensorList& u, TensorList& out) {
  const Tensor g = saved[0].unpack(*this), x = saved[1].unpack(*this);
  const Tensor w = has_w ? saved[2].unpack(*this) : Tensor();
  const Dims dims = last_dims(x->ndim(), nd);
  const Tensor& uu = u[0];
  if (needs_input_grad(0) || (has_w && needs_input_grad(2))) {
    const Tensor dgx = norm_backward(uu, x, Tensor(), nd, eps, center);
    if (needs_input_grad(0)) out[0] = has_w ? mul(dgx, w) : dgx;
    if (has_w && needs_input_grad(2)) out[2] = reduce_to(mul(dgx, g), w->shape());
  }
  if (needs_input_grad(1)) {
    const GraphStats st = graph_stats(x, dims, eps, center);
    auto row_mean = [&](const Tensor& t) { return mean_dims(t, dims, true); };
    const Tensor gx = has_w ? mul(g, w) : g;
    const Tensor xc = center ? sub(x, st.mean) : x;
    const Tensor ga = center ? sub(gx, row_mean(gx)) : gx;
    const Tensor uc = center ? sub(uu, row_mean(uu)) : uu;
    const Tensor c = row_mean(mul(gx, xc));
    const Tensor mux = row_mean(mul(uu, xc));
    const Tensor r2 = pow_scalar(st.var_eps, -1.0);
    const Tensor coef = sub(mul(scalar_like(x, 3.0), mul(r2, mul(c, mux))), row_mean(mul(uu, ga)));
    const Tensor inner = sub(sub(mul(coef, xc), mul(c, uc)), mul(mux, ga));
    out[1] = mul(pow_scalar(st.var_eps, -1.5), inner);
  }
}

// dw = norm_weight_grad(g, x) = sum over the leading dims of g * xhat:
//   dg = u * xhat, dx = norm_backward(g * u, x) (the gradient of xhat with
//   upstream g * u). Saves g (0) and x (1).
struct NormWeightGradBackward final : SavingNode<2> {
  NormWeightGradBackward(bool c, int nd_, double e) : center(c), nd(nd_), eps(e) {}
  const char* name() const override { return center ? "LayerNormWeightGradBackward" : "RmsNormWeightGradBackward"; }
  void apply(TensorList& u, TensorList& out) override;
  bool center;
  int nd;
  double eps;
};

// The weight gradient of layer_norm / rms_norm (statistics as in
// norm_backward): per-chunk partial sums of fixed row blocks, summed in
// order, so the bits do not depend on the thread count.
Tensor norm_weight_grad(const Tensor& g, const Tensor& x, int nd, double eps, bool center, const Tensor* mean = nullptr,
                        const Tensor* rstd = nullptr) {
  Context* ctx = x->context();
  const DType dt = x->dtype();
  Dims ns;
  for (int i = x->ndim() - nd; i < x->ndim(); ++i) ns.push_back(x->shape()[i]);
  const int64_t n = numel_of(ns);
  const int64_t rows = n > 0 ? x->numel() / n : 0;
  const int64_t per_chunk = units_per_chunk(Work::Reduction, n);
  const int64_t chunks = (rows + per_chunk - 1) / per_chunk;
  Tensor partial = empty(ctx, dt, Dims{chunks, n});
  kernels::fill(dt, partial->data(), chunks * n, 0.0);
  const Tensor gc = contiguous_data(g), xc = contiguous_data(x);
  const int64_t isz = static_cast<int64_t>(itemsize(dt));
  for_ranges(ctx, chunks, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      const int64_t first = c * per_chunk, count = std::min(per_chunk, rows - first);
      kernels::norm_weight_grad_rows(dt, center, gc->data() + first * n * isz, xc->data() + first * n * isz,
                                     mean && center ? (*mean)->data() + first * isz : nullptr,
                                     rstd ? (*rstd)->data() + first * isz : nullptr, partial->data() + c * n * isz,
                                     count, n, eps);
    }
  });
  Tensor dw;
  {
    GradModeGuard no_graph(false);  // the node below records the whole op
    dw = reshape(sum_dims(partial, Dims{0}, false), ns);
  }
  if (should_record({g.get(), x.get()})) {
    auto node = record<NormWeightGradBackward>({g.get(), x.get()}, dw, center, nd, eps);
    node->saved[0].save(g, false);
    node->saved[1].save(x, false);
  }
  return dw;
}

void NormWeightGradBackward::apply(TensorList& u, TensorList& out) {
  const Tensor g = saved[0].unpack(*this), x = saved[1].unpack(*this);
  if (needs_input_grad(0)) {
    const GraphStats st = graph_stats(x, last_dims(x->ndim(), nd), eps, center);
    out[0] = mul(u[0], mul(center ? sub(x, st.mean) : x, pow_scalar(st.var_eps, -0.5)));
  }
  if (needs_input_grad(1)) out[1] = norm_backward(mul(g, u[0]), x, Tensor(), nd, eps, center);
}

// Backward of layer_norm (center) and rms_norm, with xhat = (x - mean) * rstd:
// dx = norm_backward(g, x, w), dw = norm_weight_grad(g, x) (sum of g * xhat
// over the leading dims), both fused, and db = sum of g. Without create_graph
// they take the saved statistics (the same bits as recomputing them).
// Saves x (0), weight (1), mean (2), rstd (3).
struct RowNormBackward final : SavingNode<4> {
  RowNormBackward(bool c, int nd_, double e, bool hw, bool hb) : center(c), nd(nd_), eps(e), has_w(hw), has_b(hb) {}
  const char* name() const override { return center ? "LayerNormBackward" : "RmsNormBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    const Tensor x = saved[0].unpack(*this);
    const Tensor& gy = g[0];
    const Tensor w = has_w ? saved[1].unpack(*this) : Tensor();
    const bool graph = grad_enabled();
    const Tensor mean = center ? saved[2].unpack(*this) : Tensor();
    const Tensor rstd = saved[3].unpack(*this);
    if (needs_input_grad(0)) {
      out[0] =
          graph ? norm_backward(gy, x, w, nd, eps, center) : norm_backward(gy, x, w, nd, eps, center, &mean, &rstd);
    }
    const int ib = has_w ? 2 : 1;
    const bool need_w = has_w && needs_input_grad(1), need_b = has_b && needs_input_grad(ib);
    if (need_w) {
      out[1] =
          graph ? norm_weight_grad(gy, x, nd, eps, center) : norm_weight_grad(gy, x, nd, eps, center, &mean, &rstd);
    }
    if (need_b) {
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
  NormOutputs r = norm_rows_forward(x, nd, w, b, eps, center);
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

Tensor layer_norm(const Tensor& x, const Dims& normalized_shape, const Tensor& weight, const Tensor& bias, double eps) {
  return row_norm(x, normalized_shape, weight, bias, eps, true);
}

Tensor rms_norm(const Tensor& x, const Dims& normalized_shape, const Tensor& weight, double eps) {
  return row_norm(x, normalized_shape, weight, Tensor(), eps, false);
}

namespace {

// Checks (grad, x) of a fused gradient op; returns the normalized dim count.
int checked_grad_input(const Tensor& grad, const Tensor& x, const Dims& normalized_shape) {
  const int nd = check_normalized_shape(*x, normalized_shape);
  check_same(*grad, *x);
  if (grad->shape() != x->shape()) {
    fail(AG_ERR_SHAPE, "grad of shape ", shape_str(grad->shape()), " and input of shape ", shape_str(x->shape()),
         " differ");
  }
  return nd;
}

Tensor checked_norm_backward(const Tensor& grad, const Tensor& x, const Dims& normalized_shape, const Tensor& weight,
                             double eps, bool center) {
  const int nd = checked_grad_input(grad, x, normalized_shape);
  check_affine(*x, weight, "weight", normalized_shape);
  return norm_backward(grad, x, weight, nd, eps, center);
}

}  // namespace

Tensor layer_norm_backward(const Tensor& grad, const Tensor& x, const Dims& normalized_shape, const Tensor& weight,
                           double eps) {
  return checked_norm_backward(grad, x, normalized_shape, weight, eps, true);
}

Tensor rms_norm_backward(const Tensor& grad, const Tensor& x, const Dims& normalized_shape, const Tensor& weight,
                         double eps) {
  return checked_norm_backward(grad, x, normalized_shape, weight, eps, false);
}

Tensor layer_norm_weight_grad(const Tensor& grad, const Tensor& x, const Dims& normalized_shape, double eps) {
  const int nd = checked_grad_input(grad, x, normalized_shape);
  return norm_weight_grad(grad, x, nd, eps, true);
}

Tensor rms_norm_weight_grad(const Tensor& grad, const Tensor& x, const Dims& normalized_shape, double eps) {
  const int nd = checked_grad_input(grad, x, normalized_shape);
  return norm_weight_grad(grad, x, nd, eps, false);
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
  if (x->ndim() < 2)
    fail(AG_ERR_SHAPE, "input must have at least 2 dims (N, C, ...), got shape ", shape_str(x->shape()));
  check_channels(*x, running_mean, "running_mean");
  check_channels(*x, running_var, "running_var");
  check_channels(*x, weight, "weight");
  check_channels(*x, bias, "bias");
  if (!training && (!running_mean || !running_var)) {
    fail(AG_ERR_INVALID_ARGUMENT, "evaluation mode (training = 0) needs running_mean and running_var");
  }
  for (const Tensor* p : {&running_mean, &running_var}) {
    if (training && *p && (*p)->storage()->read_only()) {
      fail(AG_ERR_UNSUPPORTED, p == &running_mean ? "running_mean" : "running_var",
           " is read-only (imported with AG_BUFFER_READ_ONLY / DLPack read-only flag) and cannot be updated in place");
    }
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
        return add(mul(running, scalar_like(x, 1.0 - momentum)),
                   mul(reshape(batch, c), scalar_like(x, momentum * scale)));
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

Tensor group_norm(const Tensor& x, int64_t num_groups, const Tensor& weight, const Tensor& bias, double eps) {
  check_floating(*x);
  if (x->ndim() < 2)
    fail(AG_ERR_SHAPE, "input must have at least 2 dims (N, C, ...), got shape ", shape_str(x->shape()));
  const int64_t channels = x->shape()[1];
  if (num_groups <= 0) fail(AG_ERR_INVALID_ARGUMENT, "num_groups must be positive, got ", num_groups);
  if (channels % num_groups != 0) {
    fail(AG_ERR_SHAPE, "the ", channels, " channels (dim 1) of input shape ", shape_str(x->shape()),
         " are not divisible by num_groups ", num_groups);
  }
  check_channels(*x, weight, "weight");
  check_channels(*x, bias, "bias");
  // Each (sample, group) is one row of layer_norm.
  // N * num_groups overflows only for 0 channels (any num_groups divides 0),
  // when x is empty and so is every row.
  int64_t rows_count = 0;
  const bool overflows = __builtin_mul_overflow(x->shape()[0], num_groups, &rows_count);
  const int64_t rest = !overflows && rows_count > 0 ? x->numel() / rows_count : 0;
  const Dims rows{x->shape()[0], num_groups, rest};
  Tensor y = reshape(layer_norm(reshape(x, rows), Dims{rest}, Tensor(), Tensor(), eps), x->shape());
  if (weight) y = mul(y, per_channel(weight, x->ndim()));
  if (bias) y = add(y, per_channel(bias, x->ndim()));
  return y;
}

}  // namespace ag::ops
