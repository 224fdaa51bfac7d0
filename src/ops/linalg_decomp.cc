// Decompositions and solves of square matrices, batched over leading dims:
// inv, det, slogdet, solve, cholesky, solve_triangular, cholesky_solve. The
// kernels (kernels/linalg_decomp.h) run in f64 on a contiguous copy, one
// matrix per task; results are cast back to the input's dtype. Backward
// formulas are written in ops (PyTorch's, see each block), so create_graph
// gives higher derivatives.
#include <cmath>
#include <vector>

#include "kernels/linalg_decomp.h"
#include "ops/linalg_common.h"

namespace ag::ops {

using namespace linalg;

namespace {

// A and B expanded to their broadcast batch dims: A (..., n, n), B (..., n, k).
void broadcast_batch(const Tensor& a, const Tensor& b, Tensor& ea, Tensor& eb) {
  const Dims batch = broadcast_shapes(batch_of(a->shape()), batch_of(b->shape()));
  Dims sa = batch, sb = batch;
  sa.push_back(a->shape()[a->ndim() - 2]);
  sa.push_back(a->shape()[a->ndim() - 1]);
  sb.push_back(b->shape()[b->ndim() - 2]);
  sb.push_back(b->shape()[b->ndim() - 1]);
  ea = expand(a, sa);
  eb = expand(b, sb);
}

void check_rhs(const Tensor& a, const Tensor& b) {
  check_same(*a, *b);
  if (b->ndim() < 2) fail(AG_ERR_SHAPE, "B must have at least 2 dims (..., n, k), got shape ", shape_str(b->shape()));
  const int64_t n = a->shape()[a->ndim() - 1];
  if (b->shape()[b->ndim() - 2] != n) {
    fail(AG_ERR_SHAPE, "A of shape ", shape_str(a->shape()), " and B of shape ", shape_str(b->shape()),
         ": B needs ", n, " rows");
  }
  const Dims ba = batch_of(a->shape()), bb = batch_of(b->shape());
  for (int i = 1; i <= ba.size() && i <= bb.size(); ++i) {
    const int64_t x = ba[ba.size() - i], y = bb[bb.size() - i];
    if (x != y && x != 1 && y != 1) {
      fail(AG_ERR_SHAPE, "batch dims ", shape_str(ba), " of A and ", shape_str(bb), " of B do not broadcast");
    }
  }
}

// ---- inv ----
// Y = A^-1; dA = -Y^T g Y^T.
struct InvBackward final : SavingNode<1> {
  const char* name() const override { return "InvBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    const Tensor y = saved[0].unpack(*this);
    out[0] = neg(matmul(matmul(mT(y), g[0]), mT(y)));
  }
};

// ---- det, slogdet ----
// det backward: g det A^-T where A is invertible; at exactly singular
// matrices the cofactor matrix, computed without a graph.
Tensor cofactors(const Tensor& a);

struct DetBackward final : SavingNode<2> {
  const char* name() const override { return "DetBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    const Tensor a = saved[0].unpack(*this), d = saved[1].unpack(*this);
    const Tensor gd = unsqueeze(unsqueeze(g[0], -1), -1);
    bool singular = false;
    const Tensor d64 = f64_copy(d);
    for (int64_t i = 0; i < d64->numel(); ++i) singular = singular || d64->data_as<double>()[i] == 0.0;
    if (singular) {
      out[0] = mul(gd, cofactors(a));
    } else {
      out[0] = mul(mul(gd, unsqueeze(unsqueeze(d, -1), -1)), mT(inv(a)));
    }
  }
};

// logabsdet backward: g A^-T (sign has no gradient).
struct LogAbsDetBackward final : SavingNode<1> {
  const char* name() const override { return "LogAbsDetBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    out[0] = mul(unsqueeze(unsqueeze(g[0], -1), -1), mT(inv(saved[0].unpack(*this))));
  }
};

// sign and log|det| of each matrix (f64, batch shape), no graph.
void lu_dets(const Tensor& a, Tensor& sign, Tensor& logabs, Tensor& det) {
  const int64_t n = a->shape()[a->ndim() - 1];
  const Dims batch = batch_of(a->shape());
  Tensor m = f64_copy(a);
  sign = empty(a->context(), DType::F64, batch);
  logabs = empty(a->context(), DType::F64, batch);
  det = empty(a->context(), DType::F64, batch);
  double *ps = sign->data_as<double>(), *pl = logabs->data_as<double>(), *pd = det->data_as<double>();
  int64_t unused = 0;
  for_matrices(a->context(), numel_of(batch), n, &unused, [&](int64_t b) {
    std::vector<int64_t> piv(static_cast<size_t>(n));
    double* lu = m->data_as<double>() + b * n * n;
    int s = 1;
    kernels::lu_factor(lu, n, piv.data(), &s);
    double logsum = 0.0, prod = s;
    int sgn = s;
    for (int64_t i = 0; i < n; ++i) {
      const double u = lu[i * n + i];
      prod *= u;
      logsum += std::log(std::fabs(u));
      if (u < 0) sgn = -sgn;
      if (u == 0) sgn = 0;
    }
    ps[b] = sgn;
    pl[b] = logsum;
    pd[b] = prod;
    return int64_t{-1};
  });
}

Tensor cofactors(const Tensor& a) {
  const int64_t n = a->shape()[a->ndim() - 1];
  const Tensor m = f64_copy(a);
  Tensor c = empty(a->context(), DType::F64, a->shape());
  int64_t unused = 0;
  for_matrices(a->context(), matrix_count(*m), n, &unused, [&](int64_t b) {
    const double* src = m->data_as<double>() + b * n * n;
    double* dst = c->data_as<double>() + b * n * n;
    std::vector<double> minor(static_cast<size_t>((n - 1) * (n - 1)));
    std::vector<int64_t> piv(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        int64_t k = 0;
        for (int64_t r = 0; r < n; ++r) {
          for (int64_t s = 0; s < n; ++s) {
            if (r != i && s != j) minor[k++] = src[r * n + s];
          }
        }
        int sg = 1;
        double d = 1.0;
        if (n > 1) {
          kernels::lu_factor(minor.data(), n - 1, piv.data(), &sg);
          d = sg;
          for (int64_t t = 0; t < n - 1; ++t) d *= minor[t * (n - 1) + t];
        }
        dst[i * n + j] = (i + j) % 2 == 0 ? d : -d;
      }
    }
    return int64_t{-1};
  });
  return to_dtype(c, a->dtype());
}

// ---- solve ----
// X = A^-1 B; dB = A^-T g, dA = -dB X^T (summed over broadcast batch dims).
Tensor solve_matrix(const Tensor& a, const Tensor& b);

struct SolveBackward final : SavingNode<2> {
  const char* name() const override { return "SolveBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    const Tensor a = saved[0].unpack(*this), x = saved[1].unpack(*this);
    const Tensor gb = solve_matrix(mT(a), g[0]);
    if (needs_input_grad(0)) out[0] = reduce_to(neg(matmul(gb, mT(x))), input_shape(0));
    if (needs_input_grad(1)) out[1] = reduce_to(gb, input_shape(1));
  }
};

Tensor solve_matrix(const Tensor& a, const Tensor& b) {
  check_square(a, "A");
  check_rhs(a, b);
  Tensor ea, eb;
  {
    GradModeGuard no_graph(false);
    broadcast_batch(a, b, ea, eb);
  }
  const int64_t n = a->shape()[a->ndim() - 1], k = b->shape()[b->ndim() - 1];
  const Tensor m = f64_copy(ea);
  Tensor x = f64_copy(eb);
  int64_t pivot = 0;
  const int64_t bad = for_matrices(a->context(), matrix_count(*ea), n, &pivot, [&](int64_t i) {
    std::vector<int64_t> piv(static_cast<size_t>(n));
    double* lu = m->data_as<double>() + i * n * n;
    int s = 1;
    const int64_t z = kernels::lu_factor(lu, n, piv.data(), &s);
    if (z < 0) kernels::lu_solve(lu, piv.data(), n, x->data_as<double>() + i * n * k, k);
    return z;
  });
  if (bad >= 0) {
    fail(AG_ERR_INVALID_ARGUMENT, "batch element ", bad, " of A is singular: pivot ", pivot,
         " of its LU factorization is exactly zero");
  }
  Tensor y = to_dtype(x, a->dtype());
  if (should_record({a.get(), b.get()})) {
    auto node = record<SolveBackward>({a.get(), b.get()}, y);
    node->saved[0].save(a, false);
    node->saved[1].save(y, true);
  }
  return y;
}

// ---- cholesky ----
// L = chol(A); dA = sym(L^-T Phi(L^T g) L^-1), Phi: the lower triangle with
// the diagonal halved, sym(S) = (S + S^T) / 2 (PyTorch's formula).
struct CholeskyBackward final : SavingNode<1> {
  const char* name() const override { return "CholeskyBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    const Tensor l = saved[0].unpack(*this);
    const Tensor p = matmul(mT(l), g[0]);
    const Tensor phi = sub(tril(p, 0), mul(diag_embed(diagonal(p, 0, -2, -1), 0, -2, -1), scalar_like(p, 0.5)));
    const Tensor s = solve_triangular(l, solve_triangular(mT(l), phi, 1, 1, 0), 0, 0, 0);
    out[0] = mul(add(s, mT(s)), scalar_like(s, 0.5));
  }
};

// ---- solve_triangular (left) ----
// X = A^-1 B; dB = A^-T g, dA = -dB X^T on A's triangle (without the
// diagonal when unitriangular).
Tensor triangular_left(const Tensor& a, const Tensor& b, bool upper, bool unit);

struct TriangularBackward final : SavingNode<2> {
  TriangularBackward(bool u, bool un) : upper(u), unit(un) {}
  const char* name() const override { return "TriangularSolveBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    const Tensor a = saved[0].unpack(*this), x = saved[1].unpack(*this);
    const Tensor gb = triangular_left(mT(a), g[0], !upper, unit);
    if (needs_input_grad(0)) {
      const Tensor ga = neg(matmul(gb, mT(x)));
      out[0] = reduce_to(upper ? triu(ga, unit ? 1 : 0) : tril(ga, unit ? -1 : 0), input_shape(0));
    }
    if (needs_input_grad(1)) out[1] = reduce_to(gb, input_shape(1));
  }
  bool upper, unit;
};

Tensor triangular_left(const Tensor& a, const Tensor& b, bool upper, bool unit) {
  Tensor ea, eb;
  {
    GradModeGuard no_graph(false);
    broadcast_batch(a, b, ea, eb);
  }
  const int64_t n = a->shape()[a->ndim() - 1], k = b->shape()[b->ndim() - 1];
  const Tensor m = f64_copy(ea);
  Tensor x = f64_copy(eb);
  int64_t unused = 0;
  for_matrices(a->context(), n > 0 ? numel_of(batch_of(ea->shape())) : 0, n, &unused, [&](int64_t i) {
    kernels::triangular_solve(m->data_as<double>() + i * n * n, n, upper, unit, x->data_as<double>() + i * n * k, k);
    return int64_t{-1};
  });
  Tensor y = to_dtype(x, a->dtype());
  if (should_record({a.get(), b.get()})) {
    auto node = record<TriangularBackward>({a.get(), b.get()}, y, upper, unit);
    node->saved[0].save(a, false);
    node->saved[1].save(y, true);
  }
  return y;
}

}  // namespace

// inv: LU with partial pivoting, then solves against the identity.
Tensor inv(const Tensor& a) {
  check_square(a, "A");
  const int64_t n = a->shape()[a->ndim() - 1];
  Tensor m = f64_copy(a);
  Tensor y = full_for_writes(a->context(), DType::F64, a->shape(), 0.0);
  int64_t pivot = 0;
  const int64_t bad = for_matrices(a->context(), matrix_count(*a), n, &pivot, [&](int64_t b) {
    std::vector<int64_t> piv(static_cast<size_t>(n));
    double* lu = m->data_as<double>() + b * n * n;
    int s = 1;
    const int64_t z = kernels::lu_factor(lu, n, piv.data(), &s);
    if (z >= 0) return z;
    double* yb = y->data_as<double>() + b * n * n;
    for (int64_t i = 0; i < n; ++i) yb[i * n + i] = 1.0;
    kernels::lu_solve(lu, piv.data(), n, yb, n);
    return int64_t{-1};
  });
  if (bad >= 0) {
    fail(AG_ERR_INVALID_ARGUMENT, "batch element ", bad, " is singular: pivot ", pivot,
         " of its LU factorization is exactly zero");
  }
  Tensor r = to_dtype(y, a->dtype());
  if (should_record({a.get()})) record<InvBackward>({a.get()}, r)->saved[0].save(r, true);
  return r;
}

// det: the product of U's diagonal times the permutation's sign.
Tensor det(const Tensor& a) {
  check_square(a, "A");
  Tensor sign, logabs, d;
  lu_dets(a, sign, logabs, d);
  Tensor r = to_dtype(d, a->dtype());
  if (should_record({a.get()})) {
    auto node = record<DetBackward>({a.get()}, r);
    node->saved[0].save(a, false);
    node->saved[1].save(r, true);
  }
  return r;
}

// slogdet: sign (+1, -1, 0 for singular) and log|det| (-inf for singular).
std::pair<Tensor, Tensor> slogdet(const Tensor& a) {
  check_square(a, "A");
  Tensor sign, logabs, d;
  lu_dets(a, sign, logabs, d);
  Tensor l = to_dtype(logabs, a->dtype());
  if (should_record({a.get()})) record<LogAbsDetBackward>({a.get()}, l)->saved[0].save(a, false);
  return {to_dtype(sign, a->dtype()), l};
}

// solve: A X = B, B (..., n, k) or a vector batch (..., n) (B of 1 dim, or
// of A's batch dims plus n); batch dims broadcast.
Tensor solve(const Tensor& a, const Tensor& b) {
  check_square(a, "A");
  check_same(*a, *b);
  const bool vector = b->ndim() == 1 || (b->ndim() == a->ndim() - 1 && b->shape() == Dims(a->shape().data(), a->ndim() - 1));
  if (vector) return squeeze(solve_matrix(a, unsqueeze(b, -1)), Dims{-1});
  return solve_matrix(a, b);
}

// cholesky: lower L with A = L L^T (upper: U = L^T, A = U^T U).
Tensor cholesky(const Tensor& a, bool upper) {
  check_square(a, "A");
  const int64_t n = a->shape()[a->ndim() - 1];
  Tensor m = f64_copy(a);
  int64_t order = 0;
  const int64_t bad = for_matrices(a->context(), matrix_count(*a), n, &order, [&](int64_t b) {
    return kernels::cholesky_factor(m->data_as<double>() + b * n * n, n);
  });
  if (bad >= 0) {
    fail(AG_ERR_INVALID_ARGUMENT, "batch element ", bad, " is not positive-definite: its leading minor of order ",
         order, " is not positive-definite");
  }
  Tensor l = to_dtype(m, a->dtype());
  if (should_record({a.get()})) record<CholeskyBackward>({a.get()}, l)->saved[0].save(l, true);
  return upper ? mT(l) : l;
}

// solve_triangular: A X = B (left) or X A = B (right, as the transposed
// left solve), A upper or lower triangular, unitriangular: ones assumed on
// its diagonal.
Tensor solve_triangular(const Tensor& a, const Tensor& b, bool upper, bool left, bool unitriangular) {
  check_square(a, "A");
  check_same(*a, *b);
  if (b->ndim() < 2) fail(AG_ERR_SHAPE, "B must have at least 2 dims, got shape ", shape_str(b->shape()));
  if (left) {
    check_rhs(a, b);
    return triangular_left(a, b, upper, unitriangular);
  }
  const Tensor bt = mT(b);
  check_rhs(a, bt);
  return mT(triangular_left(mT(a), bt, !upper, unitriangular));
}

// cholesky_solve: A X = B with A = L L^T (upper: U^T U), two triangular
// solves. Gradients (PyTorch's, which treat A as L L^T of the whole l):
// dB = cholesky_solve(g, l), S = dB X^T + X dB^T, dl = -S L (upper: -U S).
namespace {
struct CholeskySolveBackward final : SavingNode<2> {
  explicit CholeskySolveBackward(bool u) : upper(u) {}
  const char* name() const override { return "CholeskySolveBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    const Tensor l = saved[0].unpack(*this), x = saved[1].unpack(*this);
    const Tensor gb = cholesky_solve(g[0], l, upper);
    if (needs_input_grad(0)) out[0] = reduce_to(gb, input_shape(0));
    if (needs_input_grad(1)) {
      const Tensor p = matmul(gb, mT(x));
      const Tensor s = add(p, mT(p));
      out[1] = reduce_to(neg(upper ? matmul(l, s) : matmul(s, l)), input_shape(1));
    }
  }
  bool upper;
};
}  // namespace

Tensor cholesky_solve(const Tensor& b, const Tensor& l, bool upper) {
  check_square(l, "L");
  Tensor x;
  {
    GradModeGuard no_graph(false);
    const Tensor lower = upper ? mT(l) : l;
    x = solve_triangular(mT(lower), solve_triangular(lower, b, false, true, false), true, true, false);
  }
  if (should_record({b.get(), l.get()})) {
    auto node = record<CholeskySolveBackward>({b.get(), l.get()}, x, upper);
    node->saved[0].save(l, false);
    node->saved[1].save(x, true);
  }
  return x;
}

}  // namespace ag::ops
