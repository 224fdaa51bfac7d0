// Gradient-check cases of matrix structure, the add-products, cross, kron,
// tensordot, matrix_power and the decompositions. Ops linear in their input
// are checked squared (second order through their backward). Decompositions
// get well-conditioned inputs built inside the call: M M^T + n I for
// symmetric positive-definite ones, M + n I for invertible ones, so that the
// finite differences explore the op around a safe point.
#include <cmath>

#include "gradcheck.h"

namespace gradcheck {

namespace {

using X = std::vector<ag_tensor*>;

// Owns the intermediate tensors of a call.
struct Temps {
  Temps() = default;
  Temps(const Temps&) = delete;
  Temps& operator=(const Temps&) = delete;
  ~Temps() {
    for (ag_tensor* t : list) ag_tensor_release(t);
  }
  ag_tensor* keep(ag_tensor* t) {
    list.push_back(t);
    return t;
  }
  std::vector<ag_tensor*> list;
};

// The size of m's last dim.
int64_t last_dim(const ag_tensor* m) {
  int64_t dims[AG_MAX_DIMS] = {};
  const int32_t nd = ag_tensor_ndim(m);
  if (nd < 1 || ag_tensor_shape(m, dims, AG_MAX_DIMS) != AG_OK) return 0;
  return dims[nd - 1];
}

// m + s I over m's last two dims (square), I without gradient; nullptr on error.
ag_tensor* plus_identity(ag_tensor* m, double s, Temps& tmp) {
  ag_context* ctx = nullptr;
  if (ag_tensor_context(&ctx, m) != AG_OK) return nullptr;
  const int64_t n = last_dim(m);
  ag_tensor *d = nullptr, *eye = nullptr, *r = nullptr;
  ag_status st = ag_tensor_full(&d, ctx, ag_tensor_dtype(m), &n, 1, s);
  ag_context_release(ctx);
  if (st != AG_OK) return nullptr;
  tmp.keep(d);
  if (ag_op_diag_embed(&eye, d, 0, -2, -1) != AG_OK) return nullptr;
  tmp.keep(eye);
  if (ag_op_add(&r, m, eye) != AG_OK) return nullptr;
  return tmp.keep(r);
}

// M M^T + n I: symmetric positive-definite.
ag_tensor* spd(ag_tensor* m, Temps& tmp) {
  ag_tensor *t = nullptr, *p = nullptr;
  if (ag_op_transpose(&t, m, -2, -1) != AG_OK) return nullptr;
  tmp.keep(t);
  if (ag_op_matmul(&p, m, t) != AG_OK) return nullptr;
  tmp.keep(p);
  return plus_identity(p, static_cast<double>(last_dim(m)), tmp);
}

// M + n I: diagonally dominant for entries in (-1, 1), so invertible.
ag_tensor* invertible(ag_tensor* m, Temps& tmp) {
  return plus_identity(m, static_cast<double>(last_dim(m)), tmp);
}

// x + E with E (m x n) zero but for E_jj = 3 (n - j): singular values (and,
// with symmetric, x + x^T + E's eigenvalues) well apart, so that the
// gradients of the vectors, which divide by their gaps, are well conditioned.
ag_tensor* separated(ag_tensor* x, bool symmetric, Temps& tmp) {
  int64_t dims[AG_MAX_DIMS] = {};
  const int32_t nd = ag_tensor_ndim(x);
  ag_context* ctx = nullptr;
  if (nd < 2 || ag_tensor_shape(x, dims, AG_MAX_DIMS) != AG_OK || ag_tensor_context(&ctx, x) != AG_OK) return nullptr;
  const int64_t m = dims[nd - 2], n = dims[nd - 1];
  const ag_dtype dt = ag_tensor_dtype(x);
  ag_tensor *eye = nullptr, *w = nullptr, *e = nullptr, *t = nullptr, *y = nullptr;
  ag_status st = ag_op_eye(&eye, ctx, dt, m, n);
  if (st == AG_OK) st = ag_op_arange(&w, ctx, dt, 3.0 * static_cast<double>(n), 0.0, -3.0);
  ag_context_release(ctx);
  if (st != AG_OK) return nullptr;
  tmp.keep(eye), tmp.keep(w);
  if (ag_op_mul(&e, eye, w) != AG_OK) return nullptr;
  tmp.keep(e);
  ag_tensor* base = x;
  if (symmetric) {
    if (ag_op_transpose(&t, x, -2, -1) != AG_OK) return nullptr;
    tmp.keep(t);
    if (ag_op_add(&y, x, t) != AG_OK) return nullptr;
    base = tmp.keep(y);
    y = nullptr;
  }
  if (ag_op_add(&y, base, e) != AG_OK) return nullptr;
  return tmp.keep(y);
}

ag_tensor* separated_general(ag_tensor* x, Temps& tmp) { return separated(x, false, tmp); }
ag_tensor* separated_symmetric(ag_tensor* x, Temps& tmp) { return separated(x, true, tmp); }

// A case on one input made well conditioned by `prep` first.
template <class Prep, class F>
Case prepared(const std::string& label, Shape shape, Prep prep, F fn) {
  return {label, {Input{std::move(shape), -1.0, 1.0}}, [prep, fn](ag_tensor** out, const X& x) {
            Temps tmp;
            ag_tensor* a = prep(x[0], tmp);
            if (a == nullptr) return AG_ERR_INTERNAL;
            return fn(out, a);
          }};
}

using Binary = ag_status (*)(ag_tensor**, const ag_tensor*, const ag_tensor*);
using Int = ag_status (*)(ag_tensor**, const ag_tensor*, int64_t);
using AddMM = ag_status (*)(ag_tensor**, const ag_tensor*, const ag_tensor*, const ag_tensor*, double, double);

Case binary(const std::string& label, Binary fn, Shape a, Shape b) {
  return {label, {Input{std::move(a)}, Input{std::move(b)}},
          [fn](ag_tensor** out, const X& x) { return fn(out, x[0], x[1]); }};
}

Case int_case(const std::string& label, Int fn, Shape s, int64_t k) {
  return squared({label, {Input{std::move(s)}}, [fn, k](ag_tensor** out, const X& x) { return fn(out, x[0], k); }});
}

Case addmm_case(const std::string& label, AddMM fn, Shape in, Shape a, Shape b, double beta, double alpha) {
  return {label, {Input{std::move(in)}, Input{std::move(a)}, Input{std::move(b)}},
          [fn, beta, alpha](ag_tensor** out, const X& x) { return fn(out, x[0], x[1], x[2], beta, alpha); }};
}

}  // namespace

Cases cases_trace() {
  return {squared({"trace", {Input{{3, 3}}}, [](ag_tensor** out, const X& x) { return ag_op_trace(out, x[0]); }}),
          squared({"trace(3 x 5)", {Input{{3, 5}}}, [](ag_tensor** out, const X& x) { return ag_op_trace(out, x[0]); }})};
}

Cases cases_diagonal() {
  Cases c;
  auto d = [](int64_t off, int64_t d1, int64_t d2) {
    return [=](ag_tensor** out, const X& x) { return ag_op_diagonal(out, x[0], off, d1, d2); };
  };
  c.push_back(squared({"diagonal", {Input{{3, 4}}}, d(0, 0, 1)}));
  c.push_back(squared({"diagonal(offset 1)", {Input{{3, 4}}}, d(1, 0, 1)}));
  c.push_back(squared({"diagonal(offset -2, dims 2, 0)", {Input{{4, 2, 3}}}, d(-2, 2, 0)}));
  c.push_back(squared({"diagonal(batch, last dims)", {Input{{2, 3, 3}}}, d(0, -2, -1)}));
  return c;
}

Cases cases_diag_embed() {
  Cases c;
  auto d = [](int64_t off, int64_t d1, int64_t d2) {
    return [=](ag_tensor** out, const X& x) { return ag_op_diag_embed(out, x[0], off, d1, d2); };
  };
  c.push_back(squared({"diag_embed", {Input{{2, 3}}}, d(0, -2, -1)}));
  c.push_back(squared({"diag_embed(offset -1, dims 0, 2)", {Input{{2, 3}}}, d(-1, 0, 2)}));
  return c;
}

Cases cases_diag() {
  return {int_case("diag(vector)", ag_op_diag, {3}, 1), int_case("diag(matrix)", ag_op_diag, {3, 4}, -1)};
}
Cases cases_tril() { return {int_case("tril", ag_op_tril, {2, 3, 4}, 0), int_case("tril(k 1)", ag_op_tril, {4, 3}, 1)}; }
Cases cases_triu() { return {int_case("triu", ag_op_triu, {3, 4}, 0), int_case("triu(k -1)", ag_op_triu, {2, 4, 3}, -1)}; }

Cases cases_mm() { return {binary("mm", ag_op_mm, {3, 4}, {4, 2})}; }
Cases cases_mv() { return {binary("mv", ag_op_mv, {3, 4}, {4})}; }
Cases cases_kron() {
  return {binary("kron", ag_op_kron, {2, 3}, {2, 2}), binary("kron(1-D and 2-D)", ag_op_kron, {3}, {2, 2})};
}

Cases cases_addmm() {
  return {addmm_case("addmm", ag_op_addmm, {3, 2}, {3, 4}, {4, 2}, 0.5, 2.0),
          addmm_case("addmm(broadcast input)", ag_op_addmm, {2}, {3, 4}, {4, 2}, 1.0, 1.0)};
}
Cases cases_addmv() { return {addmm_case("addmv", ag_op_addmv, {3}, {3, 4}, {4}, 0.5, -1.5)}; }
Cases cases_baddbmm() { return {addmm_case("baddbmm", ag_op_baddbmm, {2, 3, 2}, {2, 3, 4}, {2, 4, 2}, 2.0, 0.5)}; }
Cases cases_addbmm() { return {addmm_case("addbmm", ag_op_addbmm, {3, 2}, {2, 3, 4}, {2, 4, 2}, -1.0, 0.5)}; }

Cases cases_cross() {
  auto c = [](int64_t dim) { return [dim](ag_tensor** out, const X& x) { return ag_op_cross(out, x[0], x[1], dim); }; };
  return {{"cross", {Input{{4, 3}}, Input{{4, 3}}}, c(-1)},
          {"cross(dim 0, broadcast)", {Input{{3, 1}}, Input{{3, 2}}}, c(0)}};
}

Cases cases_tensordot() {
  auto t = [](std::vector<int64_t> da, std::vector<int64_t> db) {
    return [da, db](ag_tensor** out, const X& x) {
      return ag_op_tensordot(out, x[0], x[1], da.data(), static_cast<int32_t>(da.size()), db.data(),
                             static_cast<int32_t>(db.size()));
    };
  };
  return {{"tensordot", {Input{{2, 3, 4}}, Input{{4, 3, 2}}}, t({1, 2}, {1, 0})},
          {"tensordot(outer)", {Input{{2}}, Input{{3}}}, t({}, {})}};
}

Cases cases_matrix_power() {
  auto p = [](int64_t k) { return [k](ag_tensor** out, ag_tensor* a) { return ag_op_matrix_power(out, a, k); }; };
  return {prepared("matrix_power(3)", {3, 3}, invertible, p(3)),
          prepared("matrix_power(-2, batch)", {2, 3, 3}, invertible, p(-2)),
          prepared("matrix_power(1)", {3, 3}, invertible, p(1))};
}

Cases cases_inv() {
  auto f = [](ag_tensor** out, ag_tensor* a) { return ag_op_inv(out, a); };
  return {prepared("inv", {3, 3}, invertible, f), prepared("inv(batch)", {2, 4, 4}, invertible, f)};
}

Cases cases_det() {
  auto f = [](ag_tensor** out, ag_tensor* a) { return ag_op_det(out, a); };
  return {prepared("det", {3, 3}, invertible, f), prepared("det(batch)", {2, 2, 2}, invertible, f),
          {"det(raw)", {Input{{3, 3}}}, [](ag_tensor** out, const X& x) { return ag_op_det(out, x[0]); }}};
}

Cases cases_slogdet() {
  auto f = [](ag_tensor** out, ag_tensor* a) { return ag_op_slogdet(nullptr, out, a); };
  return {prepared("slogdet", {3, 3}, invertible, f), prepared("slogdet(batch)", {2, 3, 3}, invertible, f)};
}

Cases cases_solve() {
  auto solve_with = [](Shape a, Shape b, const std::string& label) {
    return Case{label, {Input{std::move(a), -1.0, 1.0}, Input{std::move(b)}}, [](ag_tensor** out, const X& x) {
                  Temps tmp;
                  ag_tensor* a = invertible(x[0], tmp);
                  return a ? ag_op_solve(out, a, x[1]) : AG_ERR_INTERNAL;
                }};
  };
  return {solve_with({3, 3}, {3, 2}, "solve"), solve_with({3, 3}, {3}, "solve(vector)"),
          solve_with({2, 3, 3}, {3, 1}, "solve(broadcast b)")};
}

Cases cases_cholesky() {
  auto lower = [](ag_tensor** out, ag_tensor* a) { return ag_op_cholesky(out, a, 0); };
  auto upper = [](ag_tensor** out, ag_tensor* a) { return ag_op_cholesky(out, a, 1); };
  return {prepared("cholesky", {3, 3}, spd, lower), prepared("cholesky(upper, batch)", {2, 3, 3}, spd, upper)};
}

Cases cases_solve_triangular() {
  auto tri = [](int32_t upper, int32_t left, int32_t unit) {
    return [=](ag_tensor** out, const X& x) {
      Temps tmp;
      ag_tensor* a = invertible(x[0], tmp);
      return a ? ag_op_solve_triangular(out, a, x[1], upper, left, unit) : AG_ERR_INTERNAL;
    };
  };
  return {{"solve_triangular(lower)", {Input{{3, 3}, -1.0, 1.0}, Input{{3, 2}}}, tri(0, 1, 0)},
          {"solve_triangular(upper, right)", {Input{{3, 3}, -1.0, 1.0}, Input{{2, 3}}}, tri(1, 0, 0)},
          {"solve_triangular(unit, batch)", {Input{{2, 3, 3}, -1.0, 1.0}, Input{{3, 2}}}, tri(1, 1, 1)}};
}

Cases cases_cholesky_solve() {
  auto cs = [](int32_t upper) {
    // A triangular l (the op reads one triangle; its gradient, PyTorch's,
    // is that of l l^T in the whole l, which agrees on the triangle).
    return [upper](ag_tensor** out, const X& x) {
      Temps tmp;
      ag_tensor *m = invertible(x[1], tmp), *l = nullptr;
      if (m == nullptr || (upper ? ag_op_triu : ag_op_tril)(&l, m, 0) != AG_OK) return AG_ERR_INTERNAL;
      tmp.keep(l);
      return ag_op_cholesky_solve(out, x[0], l, upper);
    };
  };
  return {{"cholesky_solve", {Input{{3, 2}}, Input{{3, 3}, -1.0, 1.0}}, cs(0)},
          {"cholesky_solve(upper)", {Input{{3, 2}}, Input{{3, 3}, -1.0, 1.0}}, cs(1)}};
}

// Eigenvectors and singular vectors are checked through ag's sign
// convention (largest component positive), which is locally constant.
Cases cases_eigh() {
  auto values = [](int32_t upper) {
    return [upper](ag_tensor** out, ag_tensor* a) { return ag_op_eigh(out, nullptr, a, upper); };
  };
  auto vectors = [](int32_t upper) {
    return [upper](ag_tensor** out, ag_tensor* a) { return ag_op_eigh(nullptr, out, a, upper); };
  };
  return {prepared("eigh(values)", {3, 3}, separated_symmetric, values(0)),
          prepared("eigh(vectors)", {3, 3}, separated_symmetric, vectors(0)),
          prepared("eigh(vectors, upper, batch)", {2, 4, 4}, separated_symmetric, vectors(1))};
}

Cases cases_eigvalsh() {
  auto f = [](ag_tensor** out, ag_tensor* a) { return ag_op_eigvalsh(out, a, 0); };
  return {prepared("eigvalsh(batch)", {2, 3, 3}, separated_symmetric, f)};
}

Cases cases_svd() {
  auto part = [](int which) {
    return [which](ag_tensor** out, ag_tensor* a) {
      return ag_op_svd(which == 0 ? out : nullptr, which == 1 ? out : nullptr, which == 2 ? out : nullptr, a, 0);
    };
  };
  return {prepared("svd(U, tall)", {4, 3}, separated_general, part(0)),
          prepared("svd(S, wide)", {3, 5}, separated_general, part(1)),
          prepared("svd(Vh, wide, batch)", {2, 2, 4}, separated_general, part(2)),
          prepared("svd(U, wide)", {2, 3}, separated_general, part(0)),
          prepared("svd(Vh, tall)", {4, 2}, separated_general, part(2)),
          prepared("svd(U, square)", {3, 3}, separated_general, part(0))};
}

Cases cases_svdvals() {
  auto f = [](ag_tensor** out, ag_tensor* a) { return ag_op_svdvals(out, a); };
  return {prepared("svdvals", {4, 3}, separated_general, f)};
}

Cases cases_qr() {
  auto part = [](int which, int32_t mode) {
    return [which, mode](ag_tensor** out, const X& x) {
      return ag_op_qr(which == 0 ? out : nullptr, which == 1 ? out : nullptr, x[0], mode);
    };
  };
  return {{"qr(Q, tall)", {Input{{4, 3}}}, part(0, AG_QR_REDUCED)},
          {"qr(R, tall, batch)", {Input{{2, 4, 2}}}, part(1, AG_QR_REDUCED)},
          {"qr(Q, square, complete)", {Input{{3, 3}}}, part(0, AG_QR_COMPLETE)},
          {"qr(Q, wide)", {Input{{2, 4}}}, part(0, AG_QR_REDUCED)},
          {"qr(R, wide, batch)", {Input{{2, 2, 3}}}, part(1, AG_QR_REDUCED)}};
}

Cases cases_matrix_norm() {
  auto norm = [](double ord, std::vector<int64_t> dims, int32_t keepdim) {
    return [=](ag_tensor** out, ag_tensor* a) {
      return ag_op_matrix_norm(out, a, dims.data(), static_cast<int32_t>(dims.size()), keepdim, ord);
    };
  };
  const double inf = HUGE_VAL;
  return {prepared("matrix_norm(fro)", {2, 3, 4}, separated_general, norm(AG_NORM_FRO, {}, 0)),
          prepared("matrix_norm(nuc, dims 0 2, keepdim)", {3, 2, 4}, separated_general, norm(AG_NORM_NUC, {0, 2}, 1)),
          prepared("matrix_norm(2)", {3, 4}, separated_general, norm(2.0, {}, 0)),
          prepared("matrix_norm(-2, batch)", {2, 4, 3}, separated_general, norm(-2.0, {}, 0)),
          prepared("matrix_norm(1)", {3, 4}, separated_general, norm(1.0, {}, 0)),
          prepared("matrix_norm(-1, keepdim)", {3, 4}, separated_general, norm(-1.0, {-1, -2}, 1)),
          prepared("matrix_norm(inf)", {4, 3}, separated_general, norm(inf, {}, 0)),
          prepared("matrix_norm(-inf)", {4, 3}, separated_general, norm(-inf, {}, 0))};
}

Cases cases_linalg_norm() {
  auto norm = [](double ord, std::vector<int64_t> dims, int32_t keepdim) {
    return [=](ag_tensor** out, const X& x) {
      return ag_op_linalg_norm(out, x[0], dims.data(), static_cast<int32_t>(dims.size()), keepdim, ord);
    };
  };
  return {{"linalg_norm(all elements)", {Input{{2, 3}}}, norm(NAN, {}, 0)},
          {"linalg_norm(vector 3)", {Input{{4}}}, norm(3.0, {}, 1)},
          {"linalg_norm(dim 1)", {Input{{2, 3}}}, norm(NAN, {1}, 0)},
          {"linalg_norm(dims, fro)", {Input{{2, 3, 2}}}, norm(NAN, {0, 2}, 0)},
          {"linalg_norm(matrix 1)", {Input{{3, 3}}}, norm(1.0, {}, 0)}};
}

Cases cases_pinv() {
  auto p = [](int32_t hermitian) {
    return [hermitian](ag_tensor** out, ag_tensor* a) { return ag_op_pinv(out, a, NAN, NAN, hermitian); };
  };
  return {prepared("pinv(tall)", {4, 3}, separated_general, p(0)), prepared("pinv(wide)", {2, 3}, separated_general, p(0)),
          prepared("pinv(hermitian, batch)", {2, 3, 3}, separated_symmetric, p(1))};
}

Cases cases_cond() {
  auto c = [](double p) { return [p](ag_tensor** out, ag_tensor* a) { return ag_op_cond(out, a, p); }; };
  return {prepared("cond", {3, 3}, separated_general, c(NAN)), prepared("cond(-2, tall)", {4, 3}, separated_general, c(-2.0)),
          prepared("cond(fro)", {3, 3}, invertible, c(AG_NORM_FRO)), prepared("cond(inf)", {3, 3}, invertible, c(HUGE_VAL)),
          prepared("cond(nuc)", {3, 3}, separated_general, c(AG_NORM_NUC))};
}

// A made of full rank by separated_general (singular values well apart).
Cases cases_lstsq() {
  auto l = [](ag_tensor** out, const X& x) {
    Temps tmp;
    ag_tensor* a = separated_general(x[0], tmp);
    return a == nullptr ? AG_ERR_INTERNAL : ag_op_lstsq(out, a, x[1]);
  };
  return {{"lstsq(tall)", {Input{{4, 3}, -1.0, 1.0}, Input{{4, 2}}}, l},
          {"lstsq(wide, min norm)", {Input{{2, 3}, -1.0, 1.0}, Input{{2, 2}}}, l},
          {"lstsq(batch, vector b)", {Input{{2, 3, 3}, -1.0, 1.0}, Input{{2, 3}}}, l},
          {"lstsq(broadcast batch)", {Input{{2, 4, 2}, -1.0, 1.0}, Input{{1, 4, 1}}}, l}};
}

// Input ranges picking each branch: degree 3 (1-norm < 0.015), 5 or 7, 13
// unscaled and 13 with two squarings (1-norm up to 12).
Cases cases_matrix_exp() {
  auto e = [](ag_tensor** out, const X& x) { return ag_op_matrix_exp(out, x[0]); };
  return {{"matrix_exp(degree 3)", {Input{{2, 2}, -0.007, 0.007}}, e},
          {"matrix_exp(degree 5 or 7)", {Input{{3, 3}, -0.3, 0.3}}, e},
          {"matrix_exp(batch)", {Input{{2, 3, 3}, -1.0, 1.0}}, e},
          {"matrix_exp(squared)", {Input{{4, 4}, -3.0, 3.0}}, e}};
}

}  // namespace gradcheck

namespace gradcheck {

Cases cases_einsum() {
  auto e = [](const char* eq) {
    return [eq](ag_tensor** out, const X& x) {
      return ag_op_einsum(out, eq, const_cast<const ag_tensor* const*>(x.data()), static_cast<int32_t>(x.size()));
    };
  };
  return {{"einsum(ij,jk->ik)", {Input{{2, 3}}, Input{{3, 4}}}, e("ij,jk->ik")},
          {"einsum(bij,bjk)", {Input{{2, 2, 3}}, Input{{2, 3, 2}}}, e("bij,bjk")},
          squared({"einsum(ii->i)", {Input{{3, 3}}}, e("ii->i")}),
          {"einsum(i,i,i->)", {Input{{4}}, Input{{4}}, Input{{4}}}, e("i,i,i->")},
          {"einsum(...ij,...j->...i)", {Input{{2, 3, 4}}, Input{{1, 4}}}, e("...ij,...j->...i")},
          {"einsum(ijk,ikl->jl summed)", {Input{{2, 3, 2}}, Input{{2, 2, 3}}}, e("ijk,ikl->jl")}};
}

}  // namespace gradcheck
