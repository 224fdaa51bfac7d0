// Matrix structure and products built on matmul: diagonal (a view) and its
// inverse diag_embed, diag, trace, tril, triu, mm, mv, the add-products
// (addmm, addmv, baddbmm, addbmm), cross, kron, tensordot, matrix_power.
// Everything but diagonal and its fill is composed of differentiable ops, so
// gradients of every order follow from theirs.
#include <string>
#include <vector>

#include "ops/reduce_dims.h"

namespace ag::ops {

namespace {

// The diagonal of dims d1, d2 with `offset` (above the main one when
// positive) as a view: those dims removed, the diagonal appended last.
Tensor diagonal_view(const Tensor& x, int64_t offset, int d1, int d2) {
  const Dims& s = x->shape();
  const Dims& st = x->strides();
  int64_t len = offset >= 0 ? std::min(s[d1], s[d2] - offset) : std::min(s[d1] + offset, s[d2]);
  if (len < 0) len = 0;
  Dims shape, strides;
  for (int i = 0; i < s.size(); ++i) {
    if (i == d1 || i == d2) continue;
    shape.push_back(s[i]);
    strides.push_back(st[i]);
  }
  shape.push_back(len);
  strides.push_back(st[d1] + st[d2]);
  int64_t start = x->offset();
  if (len > 0) start += offset >= 0 ? offset * st[d2] : -offset * st[d1];
  return make_view(*x, shape, strides, start);
}

void check_diag_dims(int ndim, int64_t dim1, int64_t dim2, int& d1, int& d2) {
  d1 = wrap_dim(dim1, ndim, "dim1");
  d2 = wrap_dim(dim2, ndim, "dim2");
  if (d1 == d2) fail(AG_ERR_INVALID_ARGUMENT, "dim1 ", dim1, " and dim2 ", dim2, " are the same dim");
}

// Zeros of `shape` with g written on the diagonal (offset, d1, d2): the
// gradient of diagonal and the forward of diag_embed; its gradient is the
// diagonal again.
Tensor diagonal_fill(const Tensor& g, const Dims& shape, int64_t offset, int d1, int d2);

struct DiagonalBackward final : Node {
  DiagonalBackward(const Dims& s, int64_t o, int a, int b) : shape(s), offset(o), d1(a), d2(b) {}
  const char* name() const override { return "DiagonalBackward"; }
  void apply(TensorList& g, TensorList& out) override { out[0] = diagonal_fill(g[0], shape, offset, d1, d2); }
  Dims shape;
  int64_t offset;
  int d1, d2;
};

struct DiagonalFillBackward final : Node {
  DiagonalFillBackward(int64_t o, int a, int b) : offset(o), d1(a), d2(b) {}
  const char* name() const override { return "DiagonalFillBackward"; }
  void apply(TensorList& g, TensorList& out) override { out[0] = diagonal(g[0], offset, d1, d2); }
  int64_t offset;
  int d1, d2;
};

Tensor diagonal_fill(const Tensor& g, const Dims& shape, int64_t offset, int d1, int d2) {
  Tensor y = full_for_writes(g->context(), g->dtype(), shape, 0.0);
  Tensor target = diagonal_view(y, offset, d1, d2);
  if (target->shape() != g->shape()) {
    fail(AG_ERR_SHAPE, "a diagonal of shape ", shape_str(target->shape()), " cannot take values of shape ",
         shape_str(g->shape()));
  }
  kernels::copy(g->dtype(), g->shape(), view_of(*g), g->dtype(), target->data(), target->strides());
  if (should_record({g.get()})) record<DiagonalFillBackward>({g.get()}, y, offset, d1, d2);
  return y;
}

void check_matrix(const Tensor& x, int min_ndim, const char* what) {
  check_floating(*x);
  if (x->ndim() < min_ndim) {
    fail(AG_ERR_SHAPE, what, " must have at least ", min_ndim, " dims, got shape ", shape_str(x->shape()));
  }
}

void check_ndim(const Tensor& x, int ndim, const char* what) {
  check_floating(*x);
  if (x->ndim() != ndim) fail(AG_ERR_SHAPE, what, " must be ", ndim, "-D, got shape ", shape_str(x->shape()));
}

// A bool (rows, cols) mask of the lower (lower = true: j - i <= k) or upper
// (j - i >= k) triangle; no graph.
Tensor triangle_mask(Context* ctx, int64_t rows, int64_t cols, int64_t k, bool lower) {
  Tensor m = empty(ctx, DType::Bool, Dims{rows, cols});
  if (m->numel() == 0) return m;  // rows may be any size when cols is 0
  bool* p = m->data_as<bool>();
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) p[i * cols + j] = lower ? j - i <= k : j - i >= k;
  }
  return m;
}

Tensor triangle(const Tensor& x, int64_t k, bool lower) {
  check_matrix(x, 2, "input");
  const int n = x->ndim();
  const Tensor mask = triangle_mask(x->context(), x->shape()[n - 2], x->shape()[n - 1], k, lower);
  return where(mask, x, scalar_like(x, 0.0));
}

// beta * input + alpha * product; input is ignored (not even NaN passes)
// when beta is 0, and must broadcast to the product's shape.
Tensor addmm_result(const Tensor& input, Tensor product, double beta, double alpha) {
  check_same(*input, *product);
  if (broadcast_shapes(input->shape(), product->shape()) != product->shape()) {
    fail(AG_ERR_SHAPE, "input of shape ", shape_str(input->shape()), " does not broadcast to the product's shape ",
         shape_str(product->shape()));
  }
  if (alpha != 1.0) product = mul(product, scalar_like(product, alpha));
  if (beta == 0.0) return product;
  return add(beta == 1.0 ? input : mul(input, scalar_like(input, beta)), product);
}

}  // namespace

// diagonal: a view of the diagonal of dims dim1, dim2; dx = diagonal_fill(g).
Tensor diagonal(const Tensor& x, int64_t offset, int64_t dim1, int64_t dim2) {
  if (x->ndim() < 2) fail(AG_ERR_SHAPE, "input must have at least 2 dims, got shape ", shape_str(x->shape()));
  int d1 = 0, d2 = 0;
  check_diag_dims(x->ndim(), dim1, dim2, d1, d2);
  Tensor y = diagonal_view(x, offset, d1, d2);
  if (should_record({x.get()})) record<DiagonalBackward>({x.get()}, y, x->shape(), offset, d1, d2);
  return y;
}

// diag_embed: the last dim of x becomes the diagonal (offset) of new dims
// dim1, dim2 of size n + |offset|; zeros elsewhere.
Tensor diag_embed(const Tensor& x, int64_t offset, int64_t dim1, int64_t dim2) {
  if (x->ndim() < 1) fail(AG_ERR_SHAPE, "input must have at least 1 dim, got shape ()");
  if (x->ndim() == kMaxDims) fail(AG_ERR_UNSUPPORTED, "x has the maximum of ", kMaxDims, " dims (one more is needed)");
  const int nd = x->ndim() + 1;
  int d1 = 0, d2 = 0;
  check_diag_dims(nd, dim1, dim2, d1, d2);
  if (offset == INT64_MIN) fail(AG_ERR_INVALID_ARGUMENT, "offset ", offset, " has no magnitude in int64");
  const int64_t n = checked_mul_add(1, x->shape()[x->ndim() - 1], offset < 0 ? -offset : offset, "the embedded size");
  Dims shape;
  int src = 0;
  for (int i = 0; i < nd; ++i) shape.push_back(i == d1 || i == d2 ? n : x->shape()[src++]);
  checked_shape(shape.data(), shape.size(), itemsize(x->dtype()));
  return diagonal_fill(x, shape, offset, d1, d2);
}

// diag: a vector becomes a matrix with it on diagonal `diagonal`; a matrix
// gives that diagonal as a vector.
Tensor diag(const Tensor& x, int64_t k) {
  if (x->ndim() == 1) return diag_embed(x, k, 0, 1);
  if (x->ndim() == 2) return diagonal(x, k, 0, 1);
  fail(AG_ERR_SHAPE, "input must be 1-D or 2-D, got shape ", shape_str(x->shape()));
}

// trace: the sum of the main diagonal of a matrix.
Tensor trace(const Tensor& x) {
  check_ndim(x, 2, "input");
  return sum(diagonal(x, 0, 0, 1));
}

// tril / triu: the lower (j - i <= k) / upper (j - i >= k) triangle of the
// last two dims, zeros elsewhere; the gradient is masked the same way.
Tensor tril(const Tensor& x, int64_t k) { return triangle(x, k, true); }
Tensor triu(const Tensor& x, int64_t k) { return triangle(x, k, false); }

// mm: (n, m) @ (m, p), no broadcasting; mv: (n, m) @ (m).
Tensor mm(const Tensor& a, const Tensor& b) {
  check_ndim(a, 2, "a");
  check_ndim(b, 2, "b");
  return matmul(a, b);
}

Tensor mv(const Tensor& a, const Tensor& b) {
  check_ndim(a, 2, "a");
  check_ndim(b, 1, "b");
  return matmul(a, b);
}

Tensor addmm(const Tensor& input, const Tensor& a, const Tensor& b, double beta, double alpha) {
  return addmm_result(input, mm(a, b), beta, alpha);
}

Tensor addmv(const Tensor& input, const Tensor& a, const Tensor& b, double beta, double alpha) {
  return addmm_result(input, mv(a, b), beta, alpha);
}

Tensor baddbmm(const Tensor& input, const Tensor& a, const Tensor& b, double beta, double alpha) {
  return addmm_result(input, bmm(a, b), beta, alpha);
}

// addbmm: the batch of products summed into one matrix.
Tensor addbmm(const Tensor& input, const Tensor& a, const Tensor& b, double beta, double alpha) {
  return addmm_result(input, sum_dims(bmm(a, b), Dims{0}, false), beta, alpha);
}

// cross: the cross product of 3-vectors along dim of the broadcast inputs.
Tensor cross(const Tensor& a, const Tensor& b, int64_t dim) {
  check_same(*a, *b);
  check_floating(*a);
  const Dims shape = broadcast_shapes(a->shape(), b->shape());
  const int d = wrap_dim(dim, shape.size());
  if (a->ndim() != b->ndim()) {
    fail(AG_ERR_SHAPE, "a ", shape_str(a->shape()), " and b ", shape_str(b->shape()), " must have the same number of dims");
  }
  if (a->shape()[d] != 3 || b->shape()[d] != 3) {
    fail(AG_ERR_SHAPE, "dim ", dim, " must have size 3 in a ", shape_str(a->shape()), " and b ", shape_str(b->shape()));
  }
  const Tensor ea = expand(a, shape), eb = expand(b, shape);
  auto part = [d](const Tensor& t, int64_t i) { return narrow(t, d, i, 1); };
  auto term = [&](int i, int j) { return sub(mul(part(ea, i), part(eb, j)), mul(part(ea, j), part(eb, i))); };
  return concat({term(1, 2), term(2, 0), term(0, 1)}, d);
}

// kron: block (i...) of the result is a[i...] * b; shapes padded with
// leading 1s to one ndim. As a broadcast product of interleaved dims.
Tensor kron(const Tensor& a, const Tensor& b) {
  check_same(*a, *b);
  check_floating(*a);
  const int n = std::max(a->ndim(), b->ndim());
  // Before the interleaved shapes are built: they hold 2 n dims.
  if (2 * n > kMaxDims) fail(AG_ERR_SHAPE, "inputs of ", n, " dims need ", 2 * n, " dims, more than ", kMaxDims);
  Dims sa, sb, out;
  for (int i = 0; i < n; ++i) {
    const int ia = i - (n - a->ndim()), ib = i - (n - b->ndim());
    const int64_t x = ia >= 0 ? a->shape()[ia] : 1, y = ib >= 0 ? b->shape()[ib] : 1;
    sa.push_back(x);
    sa.push_back(1);
    sb.push_back(1);
    sb.push_back(y);
    out.push_back(checked_mul_add(x, y, 0, "a size of the result"));  // empty inputs may have any sizes
  }
  return reshape(mul(reshape(a, sa), reshape(b, sb)), out);
}

// tensordot: contracts dims_a of a with dims_b of b (pairwise equal sizes);
// the result has a's other dims, then b's. As one matrix product.
Tensor tensordot(const Tensor& a, const Tensor& b, const Dims& dims_a, const Dims& dims_b) {
  check_same(*a, *b);
  check_floating(*a);
  if (dims_a.size() != dims_b.size()) {
    fail(AG_ERR_INVALID_ARGUMENT, "dims_a has ", dims_a.size(), " dims and dims_b ", dims_b.size());
  }
  if (a->ndim() + b->ndim() - 2 * dims_a.size() > kMaxDims) {  // before the result's dims are listed
    fail(AG_ERR_SHAPE, "the result would have more than ", kMaxDims, " dims");
  }
  bool used_a[kMaxDims] = {}, used_b[kMaxDims] = {};
  Dims pa, pb, out, contracted;
  for (int i = 0; i < dims_a.size(); ++i) {
    const int da = wrap_dim(dims_a[i], a->ndim(), "dims_a"), db = wrap_dim(dims_b[i], b->ndim(), "dims_b");
    if (used_a[da] || used_b[db]) fail(AG_ERR_INVALID_ARGUMENT, "a dim appears twice in dims_a or dims_b");
    used_a[da] = used_b[db] = true;
    if (a->shape()[da] != b->shape()[db]) {
      fail(AG_ERR_SHAPE, "contracted dims ", dims_a[i], " of a ", shape_str(a->shape()), " and ", dims_b[i], " of b ",
           shape_str(b->shape()), " differ in size");
    }
    contracted.push_back(a->shape()[da]);
  }
  Dims perm_a, perm_b;
  for (int i = 0; i < a->ndim(); ++i) {
    if (used_a[i]) continue;
    perm_a.push_back(i);
    out.push_back(a->shape()[i]);
  }
  const int na = out.size();
  for (int i = 0; i < dims_a.size(); ++i) perm_a.push_back(wrap_dim(dims_a[i], a->ndim()));
  for (int i = 0; i < dims_b.size(); ++i) perm_b.push_back(wrap_dim(dims_b[i], b->ndim()));
  for (int i = 0; i < b->ndim(); ++i) {
    if (used_b[i]) continue;
    perm_b.push_back(i);
    out.push_back(b->shape()[i]);
  }
  // Saturated products: only sizes of an empty a or b overflow, and then a
  // matrix is empty (or the result too large, as its real shape would be).
  const int64_t k = saturating_product(contracted, 0, contracted.size());
  const int64_t fa = saturating_product(out, 0, na), fb = saturating_product(out, na, out.size());
  const Tensor ma = reshape(permute(a, perm_a), Dims{fa, k});
  const Tensor mb = reshape(permute(b, perm_b), Dims{k, fb});
  return reshape(matmul(ma, mb), out);
}

// matrix_power: A^n of square matrices (batched) by repeated squaring; n = 0
// gives identities, n < 0 the power of the inverse.
Tensor matrix_power(const Tensor& x, int64_t n) {
  check_matrix(x, 2, "input");
  const int nd = x->ndim();
  const int64_t m = x->shape()[nd - 1];
  if (x->shape()[nd - 2] != m) fail(AG_ERR_SHAPE, "input must be square matrices, got shape ", shape_str(x->shape()));
  if (n == 0) {
    // No graph: the identity does not depend on x (PyTorch's gradient is 0).
    return grad_clone(expand(eye(x->context(), x->dtype(), m, m), x->shape()));
  }
  Tensor base = n < 0 ? inv(x) : x;
  uint64_t e = n < 0 ? 0 - static_cast<uint64_t>(n) : static_cast<uint64_t>(n);
  Tensor result;
  while (true) {
    if (e & 1) result = result ? matmul(result, base) : base;
    e >>= 1;
    if (e == 0) break;
    base = matmul(base, base);
  }
  return result.get() == x.get() ? clone(x) : result;
}

}  // namespace ag::ops
