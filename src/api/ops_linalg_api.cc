// C entry points of linear and linear_act (family CUSTOM in ops.def); matmul, bmm, outer and
// dot are BINARY (ops_api.cc).
#include "api/guard.h"
#include "ops/ops.h"

using namespace ag;

extern "C" {

AG_API ag_status ag_op_linear(ag_tensor** out, const ag_tensor* x, const ag_tensor* weight,
                              const ag_tensor* bias) noexcept {
  return api::call("ag_op_linear", [&] {
    api::check_out(out);
    api::Borrowed tx(x, "x"), tw(weight, "weight");
    const Tensor tb = api::optional_tensor(bias, "bias");
    *out = api::to_handle(ops::linear(tx, tw, tb));
  });
}

AG_API ag_status ag_op_linear_act(ag_tensor** out, const ag_tensor* x, const ag_tensor* weight, const ag_tensor* bias,
                                  int32_t activation) noexcept {
  return api::call("ag_op_linear_act", [&] {
    api::check_out(out);
    api::Borrowed tx(x, "x"), tw(weight, "weight");
    const Tensor tb = api::optional_tensor(bias, "bias");
    if (activation != AG_ACTIVATION_NONE && activation != AG_ACTIVATION_RELU) {
      fail(AG_ERR_INVALID_ARGUMENT, "activation ", activation, " is none of AG_ACTIVATION_NONE (0), AG_ACTIVATION_RELU (1)");
    }
    *out = api::to_handle(ops::linear_act(tx, tw, tb, activation));
  });
}

}  // extern "C"

// Structure and decompositions (ops/linalg_struct.cc, ops/linalg_decomp.cc).
extern "C" {

AG_API ag_status ag_op_diagonal(ag_tensor** out, const ag_tensor* x, int64_t offset, int64_t dim1,
                                int64_t dim2) noexcept {
  return api::call("ag_op_diagonal", [&] {
    api::check_out(out);
    *out = api::to_handle(ops::diagonal(api::Borrowed(x, "x"), offset, dim1, dim2));
  });
}

AG_API ag_status ag_op_diag_embed(ag_tensor** out, const ag_tensor* x, int64_t offset, int64_t dim1,
                                  int64_t dim2) noexcept {
  return api::call("ag_op_diag_embed", [&] {
    api::check_out(out);
    *out = api::to_handle(ops::diag_embed(api::Borrowed(x, "x"), offset, dim1, dim2));
  });
}

AG_API ag_status ag_op_cross(ag_tensor** out, const ag_tensor* a, const ag_tensor* b, int64_t dim) noexcept {
  return api::call("ag_op_cross", [&] {
    api::check_out(out);
    api::Borrowed ta(a, "a"), tb(b, "b");
    *out = api::to_handle(ops::cross(ta, tb, dim));
  });
}

AG_API ag_status ag_op_tensordot(ag_tensor** out, const ag_tensor* a, const ag_tensor* b, const int64_t* dims_a,
                                 int32_t n_dims_a, const int64_t* dims_b, int32_t n_dims_b) noexcept {
  return api::call("ag_op_tensordot", [&] {
    api::check_out(out);
    api::Borrowed ta(a, "a"), tb(b, "b");
    const Dims da = api::dims_arg(dims_a, n_dims_a, "dims_a", "n_dims_a");
    const Dims db = api::dims_arg(dims_b, n_dims_b, "dims_b", "n_dims_b");
    *out = api::to_handle(ops::tensordot(ta, tb, da, db));
  });
}

AG_API ag_status ag_op_einsum(ag_tensor** out, const char* equation, const ag_tensor* const* operands,
                              int32_t n) noexcept {
  return api::call("ag_op_einsum", [&] {
    api::check_out(out);
    if (equation == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "equation is NULL");
    *out = api::to_handle(ops::einsum(equation, api::tensors_arg(operands, n)));
  });
}

AG_API ag_status ag_op_slogdet(ag_tensor** sign, ag_tensor** logabsdet, const ag_tensor* a) noexcept {
  return api::call("ag_op_slogdet", [&] {
    if (sign == nullptr && logabsdet == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "sign and logabsdet are both NULL");
    api::Borrowed ta(a, "a");
    std::pair<Tensor, Tensor> r = ops::slogdet(ta);
    if (sign) *sign = api::to_handle(r.first);
    if (logabsdet) *logabsdet = api::to_handle(r.second);
  });
}

AG_API ag_status ag_op_cholesky(ag_tensor** out, const ag_tensor* a, int32_t upper) noexcept {
  return api::call("ag_op_cholesky", [&] {
    api::check_out(out);
    *out = api::to_handle(ops::cholesky(api::Borrowed(a, "a"), upper != 0));
  });
}

AG_API ag_status ag_op_solve_triangular(ag_tensor** out, const ag_tensor* a, const ag_tensor* b, int32_t upper,
                                        int32_t left, int32_t unitriangular) noexcept {
  return api::call("ag_op_solve_triangular", [&] {
    api::check_out(out);
    api::Borrowed ta(a, "a"), tb(b, "b");
    *out = api::to_handle(ops::solve_triangular(ta, tb, upper != 0, left != 0, unitriangular != 0));
  });
}

AG_API ag_status ag_op_cholesky_solve(ag_tensor** out, const ag_tensor* b, const ag_tensor* l,
                                      int32_t upper) noexcept {
  return api::call("ag_op_cholesky_solve", [&] {
    api::check_out(out);
    api::Borrowed tb(b, "b"), tl(l, "l");
    *out = api::to_handle(ops::cholesky_solve(tb, tl, upper != 0));
  });
}

}  // extern "C"

// Eigendecomposition, SVD, QR, pinv (ops/linalg_eig.cc, ops/linalg_norm.cc).
static_assert(AG_QR_REDUCED == static_cast<int>(ops::QrMode::Reduced) && AG_QR_R == static_cast<int>(ops::QrMode::R));
static_assert(AG_NORM_FRO == ops::kNormFro && AG_NORM_NUC == ops::kNormNuc);

extern "C" {

AG_API ag_status ag_op_eigh(ag_tensor** eigenvalues, ag_tensor** eigenvectors, const ag_tensor* a,
                            int32_t upper) noexcept {
  return api::call("ag_op_eigh", [&] {
    if (eigenvalues == nullptr && eigenvectors == nullptr) {
      fail(AG_ERR_INVALID_ARGUMENT, "eigenvalues and eigenvectors are both NULL");
    }
    std::pair<Tensor, Tensor> r = ops::eigh(api::Borrowed(a, "a"), upper != 0);
    if (eigenvalues) *eigenvalues = api::to_handle(r.first);
    if (eigenvectors) *eigenvectors = api::to_handle(r.second);
  });
}

AG_API ag_status ag_op_eigvalsh(ag_tensor** out, const ag_tensor* a, int32_t upper) noexcept {
  return api::call("ag_op_eigvalsh", [&] {
    api::check_out(out);
    *out = api::to_handle(ops::eigvalsh(api::Borrowed(a, "a"), upper != 0));
  });
}

AG_API ag_status ag_op_svd(ag_tensor** u, ag_tensor** s, ag_tensor** vh, const ag_tensor* a,
                           int32_t full_matrices) noexcept {
  return api::call("ag_op_svd", [&] {
    if (u == nullptr && s == nullptr && vh == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "u, s and vh are all NULL");
    std::tuple<Tensor, Tensor, Tensor> r = ops::svd(api::Borrowed(a, "a"), full_matrices != 0);
    if (u) *u = api::to_handle(std::get<0>(r));
    if (s) *s = api::to_handle(std::get<1>(r));
    if (vh) *vh = api::to_handle(std::get<2>(r));
  });
}

AG_API ag_status ag_op_qr(ag_tensor** q, ag_tensor** r, const ag_tensor* a, int32_t mode) noexcept {
  return api::call("ag_op_qr", [&] {
    if (q == nullptr && r == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "q and r are both NULL");
    if (mode != AG_QR_REDUCED && mode != AG_QR_COMPLETE && mode != AG_QR_R) {
      fail(AG_ERR_INVALID_ARGUMENT, "mode must be AG_QR_REDUCED, AG_QR_COMPLETE or AG_QR_R, got ", mode);
    }
    std::pair<Tensor, Tensor> res = ops::qr(api::Borrowed(a, "a"), static_cast<ops::QrMode>(mode));
    if (q) *q = api::to_handle(res.first);
    if (r) *r = api::to_handle(res.second);
  });
}

AG_API ag_status ag_op_pinv(ag_tensor** out, const ag_tensor* a, double atol, double rtol,
                            int32_t hermitian) noexcept {
  return api::call("ag_op_pinv", [&] {
    api::check_out(out);
    *out = api::to_handle(ops::pinv(api::Borrowed(a, "a"), atol, rtol, hermitian != 0));
  });
}

}  // extern "C"
