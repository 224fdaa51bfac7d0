/*
 * tests/c_api/test_errors_null.c - NULL handles and NULL out-parameters in the
 * ops, contexts, creation and tensor functions of the C API:
 * AG_ERR_INVALID_ARGUMENT, the out-parameter left untouched, and a message
 * naming the function in brackets.
 *
 * Every op of ops.def is called once per required tensor (or context)
 * argument with that argument NULL, as a caller passing on the NULL result
 * of a failed call would: the op must fail with AG_ERR_INVALID_ARGUMENT and
 * say that the input is missing. The list is expanded from ops.def, so a new
 * op is covered without a new test; a CUSTOM op needs a call below (its
 * signature is its own), else this file does not compile.
 */
#include "harness.h"

static const int64_t s1_3[1] = {3};
static const int64_t s2_23[2] = {2, 3};

/* ---- ops ------------------------------------------------------------------------- */

static void test_null_handles_unary_ops(void) {
  ag_context *ctx;
  ag_tensor *x, *out;
  REQUIRE(NEW_CTX_WITH(&ctx, &x, AG_F64, s1_3, 1, NULL));
#define UNARY_NULLS(op)                                                   \
  do {                                                                    \
    out = SENT_T;                                                         \
    CHECK_ERR(op(&out, NULL), AG_ERR_INVALID_ARGUMENT, #op);              \
    CHECK(out == SENT_T);                                                 \
    CHECK_ERR(op(NULL, x), AG_ERR_INVALID_ARGUMENT, #op);                 \
  } while (0)
  UNARY_NULLS(ag_op_neg);
  UNARY_NULLS(ag_op_exp);
  UNARY_NULLS(ag_op_log);
  UNARY_NULLS(ag_op_tanh);
  UNARY_NULLS(ag_op_sum);
  UNARY_NULLS(ag_op_mean);
#undef UNARY_NULLS
  out = SENT_T;
  CHECK_ERR(ag_op_pow_scalar(&out, NULL, 2.0), AG_ERR_INVALID_ARGUMENT, "ag_op_pow_scalar");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_op_pow_scalar(NULL, x, 2.0), AG_ERR_INVALID_ARGUMENT, "ag_op_pow_scalar");
  CHECK_ERR(ag_op_cast(&out, NULL, AG_F32), AG_ERR_INVALID_ARGUMENT, "ag_op_cast");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_op_cast(NULL, x, AG_F32), AG_ERR_INVALID_ARGUMENT, "ag_op_cast");
  CHECK_ERR(ag_op_expand(&out, NULL, s2_23, 2), AG_ERR_INVALID_ARGUMENT, "ag_op_expand");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_op_expand(NULL, x, s2_23, 2), AG_ERR_INVALID_ARGUMENT, "ag_op_expand");
  CHECK_ERR(ag_op_expand(&out, x, NULL, 2), AG_ERR_INVALID_ARGUMENT, "ag_op_expand");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_op_sum_to_size(&out, NULL, s1_3, 1), AG_ERR_INVALID_ARGUMENT, "ag_op_sum_to_size");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_op_sum_to_size(NULL, x, s1_3, 1), AG_ERR_INVALID_ARGUMENT, "ag_op_sum_to_size");
  CHECK_ERR(ag_op_sum_to_size(&out, x, NULL, 1), AG_ERR_INVALID_ARGUMENT, "ag_op_sum_to_size");
  CHECK(out == SENT_T);
  REL(x);
  ag_context_release(ctx);
}

static void test_null_handles_binary_ops(void) {
  ag_context *ctx;
  ag_tensor *x, *out;
  REQUIRE(NEW_CTX_WITH(&ctx, &x, AG_F64, s1_3, 1, NULL));
#define BINARY_NULLS(op)                                                  \
  do {                                                                    \
    out = SENT_T;                                                         \
    CHECK_ERR(op(&out, NULL, x), AG_ERR_INVALID_ARGUMENT, #op);           \
    CHECK(out == SENT_T);                                                 \
    CHECK_ERR(op(&out, x, NULL), AG_ERR_INVALID_ARGUMENT, #op);           \
    CHECK(out == SENT_T);                                                 \
    CHECK_ERR(op(&out, NULL, NULL), AG_ERR_INVALID_ARGUMENT, #op);        \
    CHECK(out == SENT_T);                                                 \
    CHECK_ERR(op(NULL, x, x), AG_ERR_INVALID_ARGUMENT, #op);              \
  } while (0)
  BINARY_NULLS(ag_op_add);
  BINARY_NULLS(ag_op_sub);
  BINARY_NULLS(ag_op_mul);
  BINARY_NULLS(ag_op_div);
#undef BINARY_NULLS
  REL(x);
  ag_context_release(ctx);
}


/* ---- every op of ops.def, one NULL argument at a time --------------------------- */

static ag_context *g_ctx;
static ag_tensor *g_x, *g_idx; /* f64 [2, 2] and i64 [2] */
static int g_null_at;          /* which required argument is NULL */

/* Required argument k: NULL when k is the one under test. */
#define T(k) ((k) == g_null_at ? NULL : (const ag_tensor *)g_x)
#define IX(k) ((k) == g_null_at ? NULL : (const ag_tensor *)g_idx)
#define CTX(k) ((k) == g_null_at ? NULL : g_ctx)

static const int64_t v0[1] = {0}, v1[2] = {1, 1}, v2[2] = {2, 2}, v4[4] = {0, 0, 0, 0};

/* The fixed-signature families, one call each. */
#define NULLS_OF(name, n, call)                              \
  static ag_status nulls_##name(ag_tensor **out) { return call; } \
  enum { nreq_##name = n };
#define NULLS_CALL(name, n, ...)                                        \
  static ag_status nulls_##name(ag_tensor **out) { __VA_ARGS__ }        \
  enum { nreq_##name = n };
#define NULLS_UNARY(name) NULLS_OF(name, 1, ag_op_##name(out, T(0)))
#define NULLS_UNARY_SCALAR(name) NULLS_OF(name, 1, ag_op_##name(out, T(0), 0.5))
#define NULLS_UNARY_SCALAR2(name) NULLS_OF(name, 1, ag_op_##name(out, T(0), 0.0, 1.0))
#define NULLS_BINARY(name) NULLS_OF(name, 2, ag_op_##name(out, T(0), T(1)))
#define NULLS_SHAPE(name) NULLS_OF(name, 1, ag_op_##name(out, T(0), v2, 2))
#define NULLS_DTYPE(name) NULLS_OF(name, 1, ag_op_##name(out, T(0), AG_F32))
#define NULLS_DIM(name) NULLS_OF(name, 1, ag_op_##name(out, T(0), 0))
#define NULLS_DIMS(name) NULLS_OF(name, 1, ag_op_##name(out, T(0), v0, 1, 0))
#define NULLS_DIMS_SCALAR(name) NULLS_OF(name, 1, ag_op_##name(out, T(0), v0, 1, 0, 1.0))
#define NULLS_DIMLIST(name) NULLS_OF(name, 1, ag_op_##name(out, T(0), v1, 2))
#define NULLS_INT2(name) NULLS_OF(name, 1, ag_op_##name(out, T(0), 0, 1))
#define NULLS_DIM_KEEPDIM(name) NULLS_OF(name, 1, ag_op_##name(out, T(0), 0, 0))
#define NULLS_VALUES_INDICES(name) \
  NULLS_CALL(name, 1, ag_tensor *ix = SENT_T; return ag_op_##name(out, &ix, T(0), 0, 0);)
#define NULLS_TENSORS_DIM(name) \
  NULLS_CALL(name, 2, const ag_tensor *xs[2]; xs[0] = T(0); xs[1] = T(1); return ag_op_##name(out, xs, 2, 0);)
#define NULLS_INDEX(name) NULLS_OF(name, 2, ag_op_##name(out, T(0), 0, IX(1)))
#define NULLS_INDEX_SRC(name) NULLS_OF(name, 3, ag_op_##name(out, T(0), 0, IX(1), T(2)))
#define NULLS_GRAD_Y_DIM(name) NULLS_OF(name, 2, ag_op_##name(out, T(0), T(1), 0))
#define NULLS_LOSS(name) NULLS_OF(name, 2, ag_op_##name(out, T(0), T(1), 1))
#define NULLS_RANDOM(name) NULLS_OF(name, 1, ag_op_##name(out, CTX(0), AG_F64, v2, 2))
#define NULLS_RANDOM2(name) NULLS_OF(name, 1, ag_op_##name(out, CTX(0), AG_F64, v2, 2, 0.0, 1.0))
#define NULLS_NORM_BACKWARD(name) NULLS_OF(name, 2, ag_op_##name(out, T(0), T(1), v2 + 1, 1, NULL, 1e-5))
#define NULLS_NORM_WEIGHT_GRAD(name) NULLS_OF(name, 2, ag_op_##name(out, T(0), T(1), v2 + 1, 1, 1e-5))
#define NULLS_INT(name) NULLS_OF(name, 1, ag_op_##name(out, T(0), 0))
#define NULLS_ADDMM(name) NULLS_OF(name, 3, ag_op_##name(out, T(0), T(1), T(2), 1.0, 1.0))
#define NULLS_STAT_MEAN(name) \
  NULLS_CALL(name, 1, ag_tensor *m = SENT_T; return ag_op_##name(out, &m, T(0), v0, 1, 0, 1.0);)
#define NULLS_SCAN_INDICES(name) \
  NULLS_CALL(name, 1, ag_tensor *ix = SENT_T; return ag_op_##name(out, &ix, T(0), 0);)
#define NULLS_BINARY_SCALAR(name) NULLS_OF(name, 2, ag_op_##name(out, T(0), T(1), 2.0))
#define NULLS_QUANTILE(name) NULLS_OF(name, 2, ag_op_##name(out, T(0), T(1), v0, 1, 0, 0))
#define NULLS_CUSTOM(name) /* written out below */
#define AG_OP(name, family, ...) NULLS_##family(name)
#include "ops/ops.def"

/* CUSTOM ops: n = the required tensor (or context) arguments, numbered in
 * order; optional ones (bias, weight, pos_weight, running stats) stay NULL. */
NULLS_OF(slice, 1, ag_op_slice(out, T(0), 0, 0, 1, 1))
NULLS_OF(slice_backward, 1, ag_op_slice_backward(out, T(0), v2, 2, 0, 0, 2, 1))
NULLS_OF(narrow, 1, ag_op_narrow(out, T(0), 0, 0, 1))
NULLS_CALL(split, 1, ag_tensor *o[4]; (void)out; return ag_op_split(o, 4, T(0), v1, 2, 0);)
NULLS_CALL(chunk, 1, ag_tensor *o[4]; int32_t n = 0; (void)out; return ag_op_chunk(o, 4, &n, T(0), 2, 0);)
NULLS_OF(repeat, 1, ag_op_repeat(out, T(0), v1, 2))
NULLS_OF(pad, 1, ag_op_pad(out, T(0), v4, 4, 0, 0.0))
NULLS_OF(masked_fill, 2, ag_op_masked_fill(out, T(0), T(1), 0.0))
NULLS_OF(embedding, 2, ag_op_embedding(out, T(0), IX(1)))
NULLS_OF(one_hot, 1, ag_op_one_hot(out, IX(0), 3))
NULLS_OF(linear, 2, ag_op_linear(out, T(0), T(1), NULL))
NULLS_OF(linear_act, 2, ag_op_linear_act(out, T(0), T(1), NULL, AG_ACTIVATION_RELU))
NULLS_OF(cross_entropy, 2, ag_op_cross_entropy(out, T(0), IX(1), 1, -100, 0.0))
NULLS_OF(nll_loss, 2, ag_op_nll_loss(out, T(0), IX(1), 1, -100))
NULLS_OF(smooth_l1_loss, 2, ag_op_smooth_l1_loss(out, T(0), T(1), 1, 1.0))
NULLS_OF(huber_loss, 2, ag_op_huber_loss(out, T(0), T(1), 1, 1.0))
NULLS_OF(binary_cross_entropy_with_logits, 2, ag_op_binary_cross_entropy_with_logits(out, T(0), T(1), NULL, 1))
NULLS_OF(unfold, 1, ag_op_unfold(out, T(0), v1, v1, v4, v1))
NULLS_OF(fold, 1, ag_op_fold(out, T(0), v2, v1, v1, v4, v1))
NULLS_OF(conv2d, 2, ag_op_conv2d(out, T(0), T(1), NULL, v1, v4, v1, 1))
NULLS_OF(conv1d, 2, ag_op_conv1d(out, T(0), T(1), NULL, 1, 0, 1, 1))
NULLS_OF(max_pool2d, 1, ag_op_max_pool2d(out, T(0), v1, v1, v4, v1, 0))
NULLS_CALL(max_pool2d_with_indices, 1, ag_tensor *ix = SENT_T;
           return ag_op_max_pool2d_with_indices(out, &ix, T(0), v1, v1, v4, v1, 0);)
NULLS_OF(avg_pool2d, 1, ag_op_avg_pool2d(out, T(0), v1, v1, v4, 0, 1, 0))
NULLS_OF(adaptive_avg_pool2d, 1, ag_op_adaptive_avg_pool2d(out, T(0), v1))
NULLS_OF(arange, 1, ag_op_arange(out, CTX(0), AG_F64, 0.0, 2.0, 1.0))
NULLS_OF(linspace, 1, ag_op_linspace(out, CTX(0), AG_F64, 0.0, 1.0, 3))
NULLS_OF(eye, 1, ag_op_eye(out, CTX(0), AG_F64, 2, 2))
NULLS_OF(bernoulli, 1, ag_op_bernoulli(out, T(0)))
NULLS_OF(bernoulli_scalar, 1, ag_op_bernoulli_scalar(out, CTX(0), AG_F64, v2, 2, 0.5))
NULLS_OF(randint, 1, ag_op_randint(out, CTX(0), v2, 2, 0, 3))
NULLS_OF(dropout, 1, ag_op_dropout(out, T(0), 0.5, 1))
NULLS_OF(where, 3, ag_op_where(out, T(0), T(1), T(2)))
NULLS_OF(lerp, 3, ag_op_lerp(out, T(0), T(1), T(2)))
NULLS_OF(polygamma, 1, ag_op_polygamma(out, 1, T(0)))
NULLS_OF(nan_to_num, 1, ag_op_nan_to_num(out, T(0), 0.0, 1.0, -1.0))
NULLS_OF(addcmul, 3, ag_op_addcmul(out, T(0), T(1), T(2), 0.5))
NULLS_OF(addcdiv, 3, ag_op_addcdiv(out, T(0), T(1), T(2), 0.5))
NULLS_OF(layer_norm, 1, ag_op_layer_norm(out, T(0), v2 + 1, 1, NULL, NULL, 1e-5))
NULLS_OF(rms_norm, 1, ag_op_rms_norm(out, T(0), v2 + 1, 1, NULL, 1e-5))
NULLS_OF(batch_norm, 1, ag_op_batch_norm(out, T(0), NULL, NULL, NULL, NULL, 1, 0.1, 1e-5))
NULLS_OF(group_norm, 1, ag_op_group_norm(out, T(0), 1, NULL, NULL, 1e-5))
NULLS_OF(diagonal, 1, ag_op_diagonal(out, T(0), 0, 0, 1))
NULLS_OF(diag_embed, 1, ag_op_diag_embed(out, T(0), 0, -2, -1))
NULLS_OF(cross, 2, ag_op_cross(out, T(0), T(1), -1))
NULLS_OF(tensordot, 2, ag_op_tensordot(out, T(0), T(1), v0, 1, v0, 1))
NULLS_CALL(slogdet, 1, ag_tensor *ld = SENT_T; return ag_op_slogdet(out, &ld, T(0));)
NULLS_CALL(einsum, 2, const ag_tensor *xs[2]; xs[0] = T(0); xs[1] = T(1); return ag_op_einsum(out, "i,i->", xs, 2);)
NULLS_OF(cholesky, 1, ag_op_cholesky(out, T(0), 0))
NULLS_OF(solve_triangular, 2, ag_op_solve_triangular(out, T(0), T(1), 0, 1, 0))
NULLS_OF(cholesky_solve, 2, ag_op_cholesky_solve(out, T(0), T(1), 0))
NULLS_OF(roll, 1, ag_op_roll(out, T(0), v1, 1, v0, 1))
NULLS_OF(rot90, 1, ag_op_rot90(out, T(0), 1, v4, 2))
NULLS_OF(repeat_interleave_tensor, 2, ag_op_repeat_interleave_tensor(out, T(0), IX(1), 0))
NULLS_CALL(unbind, 1, ag_tensor *o[4]; (void)out; return ag_op_unbind(o, 4, T(0), 0);)
NULLS_CALL(tensor_split, 1, ag_tensor *o[4]; (void)out; return ag_op_tensor_split(o, 4, T(0), 2, 0);)
NULLS_CALL(tensor_split_indices, 1, ag_tensor *o[4]; (void)out; return ag_op_tensor_split_indices(o, 4, T(0), v1, 1, 0);)
NULLS_OF(diff, 1, ag_op_diff(out, T(0), 1, 0, NULL, NULL))
NULLS_OF(scatter_value, 2, ag_op_scatter_value(out, T(0), 0, IX(1), 0.0))
NULLS_OF(scatter_reduce, 3, ag_op_scatter_reduce(out, T(0), 0, IX(1), T(2), 0, 1))
NULLS_CALL(index_put, 3, const ag_tensor *ix[1]; ix[0] = IX(1); return ag_op_index_put(out, T(0), ix, 1, T(2), 0);)
NULLS_OF(index_fill, 2, ag_op_index_fill(out, T(0), 0, IX(1), 0.0))
NULLS_OF(masked_scatter, 3, ag_op_masked_scatter(out, T(0), T(1), T(2)))
NULLS_OF(masked_select, 2, ag_op_masked_select(out, T(0), T(1)))
NULLS_OF(take_along_dim, 2, ag_op_take_along_dim(out, T(0), IX(1), 0))
NULLS_OF(conv_transpose1d, 2, ag_op_conv_transpose1d(out, T(0), T(1), NULL, 1, 0, 0, 1, 1))
NULLS_OF(conv_transpose2d, 2, ag_op_conv_transpose2d(out, T(0), T(1), NULL, v1, v4, v4, 1, v1))
NULLS_OF(interpolate, 1, ag_op_interpolate(out, T(0), v2, 2, 0.0, 0, 0))
NULLS_OF(max_pool1d, 1, ag_op_max_pool1d(out, T(0), 1, 0, 0, 1, 0))
NULLS_OF(avg_pool1d, 1, ag_op_avg_pool1d(out, T(0), 1, 0, 0, 0, 1))
NULLS_OF(adaptive_max_pool2d, 1, ag_op_adaptive_max_pool2d(out, T(0), v1))
NULLS_OF(instance_norm, 1, ag_op_instance_norm(out, T(0), NULL, NULL, NULL, NULL, 1, 0.1, 1e-5))
NULLS_OF(local_response_norm, 1, ag_op_local_response_norm(out, T(0), 2, 1e-4, 0.75, 1.0))
NULLS_OF(scaled_dot_product_attention, 3, ag_op_scaled_dot_product_attention(out, T(0), T(1), T(2), NULL, 0.0, 0, 0.0))
NULLS_OF(kl_div, 2, ag_op_kl_div(out, T(0), T(1), 1, 0))
NULLS_OF(poisson_nll_loss, 2, ag_op_poisson_nll_loss(out, T(0), T(1), 1, 0, 1e-8, 1))
NULLS_OF(gaussian_nll_loss, 3, ag_op_gaussian_nll_loss(out, T(0), T(1), T(2), 0, 1e-6, 1))
NULLS_OF(margin_ranking_loss, 3, ag_op_margin_ranking_loss(out, T(0), T(1), T(2), 0.0, 1))
NULLS_OF(cosine_embedding_loss, 3, ag_op_cosine_embedding_loss(out, T(0), T(1), T(2), 0.0, 1))
NULLS_OF(triplet_margin_loss, 3, ag_op_triplet_margin_loss(out, T(0), T(1), T(2), 1.0, 2.0, 1e-6, 0, 1))
NULLS_OF(pairwise_distance, 2, ag_op_pairwise_distance(out, T(0), T(1), 2.0, 1e-6, 0))
NULLS_OF(cosine_similarity, 2, ag_op_cosine_similarity(out, T(0), T(1), 0, 1e-8))
NULLS_OF(normalize, 1, ag_op_normalize(out, T(0), 2.0, 0, 1e-12))
NULLS_CALL(sort, 1, ag_tensor *ix = SENT_T; return ag_op_sort(out, &ix, T(0), 0, 0, 0);)
NULLS_CALL(topk, 1, ag_tensor *ix = SENT_T; return ag_op_topk(out, &ix, T(0), 1, 0, 1, 1);)
NULLS_CALL(kthvalue, 1, ag_tensor *ix = SENT_T; return ag_op_kthvalue(out, &ix, T(0), 1, 0, 0);)
NULLS_CALL(eigh, 1, ag_tensor *v = SENT_T; return ag_op_eigh(out, &v, T(0), 0);)
NULLS_OF(eigvalsh, 1, ag_op_eigvalsh(out, T(0), 0))
NULLS_CALL(svd, 1, ag_tensor *s = SENT_T, *vh = SENT_T; return ag_op_svd(out, &s, &vh, T(0), 0);)
NULLS_CALL(qr, 1, ag_tensor *r = SENT_T; return ag_op_qr(out, &r, T(0), 0);)
NULLS_OF(pinv, 1, ag_op_pinv(out, T(0), 0.0, 0.0, 0))
NULLS_OF(embedding_bag, 2, ag_op_embedding_bag(out, T(0), IX(1), NULL, AG_EMBEDDING_BAG_SUM, NULL, 0, -1))
NULLS_OF(ctc_loss, 4, ag_op_ctc_loss(out, T(0), IX(1), IX(2), IX(3), 0, AG_REDUCTION_MEAN, 0))

typedef struct {
  const char *name;
  ag_status (*call)(ag_tensor **out);
  int required;
} NullCase;

static const NullCase k_null_cases[] = {
#define AG_OP(name, ...) {#name, nulls_##name, nreq_##name},
#include "ops/ops.def"
};

static void test_null_inputs_every_op(void) {
  const int n = (int)(sizeof k_null_cases / sizeof k_null_cases[0]);
  const int64_t s22[2] = {2, 2}, s2[1] = {2};
  const double xv[4] = {0.5, 0.25, 0.75, 1.0};
  REQUIRE(NEW_CTX_WITH(&g_ctx, &g_x, AG_F64, s22, 2, xv));
  REQUIRE_OK(ag_tensor_zeros(&g_idx, g_ctx, AG_I64, s2, 1));
  /* the list is the library's own (same ops, same order) */
  CHECK(n == ag_op_count());
  for (int i = 0; i < n; i++) {
    const NullCase *c = &k_null_cases[i];
    char fn[96];
    CHECK_STR(ag_op_name(i), c->name);
    snprintf(fn, sizeof fn, "[ag_op_%s]", c->name);
    CHECK(c->required > 0);
    for (g_null_at = 0; g_null_at < c->required; g_null_at++) {
      ag_tensor *out = SENT_T;
      const ag_status st = c->call(&out);
      if (!CHECK(st == AG_ERR_INVALID_ARGUMENT)) {
        printf("# %s with argument %d NULL returned %d: %s\n", fn, g_null_at, (int)st, ag_last_error_message());
      }
      CHECK_STARTS(ag_last_error_message(), fn);
      CHECK_CONTAINS(ag_last_error_message(), "is NULL (missing: did an earlier call fail?)");
      CHECK(out == SENT_T);
      if (st == AG_OK && out != SENT_T) REL(out);
    }
  }
  g_null_at = -1;
  REL(g_idx);
  REL(g_x);
  ag_context_release(g_ctx);
}

/* Lists of tensors with a NULL element, outside the ops. */
static void test_null_elements_in_lists(void) {
  ag_context *ctx;
  ag_tensor *x, *y = NULL, *g[2] = {SENT_T, SENT_T};
  const int64_t s1[1] = {1};
  const ag_tensor *outs[1], *ins[2];
  ag_backward_options bo;
  REQUIRE(NEW_CTX_WITH_LEAF(&ctx, &x, AG_F64, s1, 1, NULL));
  REQUIRE_OK(ag_op_sum(&y, x));
  outs[0] = NULL;
  ins[0] = x;
  ins[1] = NULL;
  CHECK_ERR(ag_grad(g, outs, NULL, 1, ins, 1, NULL), AG_ERR_INVALID_ARGUMENT, "ag_grad");
  CHECK_MSG_HAS("outputs[0] is NULL (missing: did an earlier call fail?)");
  outs[0] = y;
  CHECK_ERR(ag_grad(g, outs, NULL, 1, ins, 2, NULL), AG_ERR_INVALID_ARGUMENT, "ag_grad");
  CHECK_MSG_HAS("inputs[1] is NULL (missing: did an earlier call fail?)");
  CHECK(g[0] == SENT_T && g[1] == SENT_T);
  ag_backward_options_init(&bo);
  bo.num_inputs = 2;
  bo.inputs = ins;
  CHECK_ERR(ag_backward(y, NULL, &bo), AG_ERR_INVALID_ARGUMENT, "ag_backward");
  CHECK_MSG_HAS("inputs[1] is NULL (missing: did an earlier call fail?)");
  REL(y);
  REL(x);
  ag_context_release(ctx);
}

/* ---- contexts, creation and tensor functions ------------------------------------- */

static void test_null_handles_context_and_creation(void) {
  ag_context *ctx = NEW_CTX();
  ag_tensor *out;
  REQUIRE(ctx);
  CHECK_ERR(ag_context_create(NULL, NULL), AG_ERR_INVALID_ARGUMENT, "ag_context_create");
  CHECK_ERR(ag_context_options_init(NULL), AG_ERR_INVALID_ARGUMENT, "ag_context_options_init");
  CHECK_ERR(ag_backward_options_init(NULL), AG_ERR_INVALID_ARGUMENT, "ag_backward_options_init");

  out = SENT_T;
  CHECK_ERR(ag_tensor_create(&out, NULL, AG_F64, s1_3, 1, NULL), AG_ERR_INVALID_ARGUMENT,
            "ag_tensor_create");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_tensor_create(NULL, ctx, AG_F64, s1_3, 1, NULL), AG_ERR_INVALID_ARGUMENT,
            "ag_tensor_create");
  CHECK_ERR(ag_tensor_zeros(&out, NULL, AG_F64, s1_3, 1), AG_ERR_INVALID_ARGUMENT,
            "ag_tensor_zeros");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_tensor_zeros(NULL, ctx, AG_F64, s1_3, 1), AG_ERR_INVALID_ARGUMENT,
            "ag_tensor_zeros");
  CHECK_ERR(ag_tensor_ones(&out, NULL, AG_F64, s1_3, 1), AG_ERR_INVALID_ARGUMENT,
            "ag_tensor_ones");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_tensor_ones(NULL, ctx, AG_F64, s1_3, 1), AG_ERR_INVALID_ARGUMENT,
            "ag_tensor_ones");
  CHECK_ERR(ag_tensor_full(&out, NULL, AG_F64, s1_3, 1, 1.0), AG_ERR_INVALID_ARGUMENT,
            "ag_tensor_full");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_tensor_full(NULL, ctx, AG_F64, s1_3, 1, 1.0), AG_ERR_INVALID_ARGUMENT,
            "ag_tensor_full");
  CHECK_ERR(ag_tensor_scalar(&out, NULL, AG_F64, 1.0), AG_ERR_INVALID_ARGUMENT,
            "ag_tensor_scalar");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_tensor_scalar(NULL, ctx, AG_F64, 1.0), AG_ERR_INVALID_ARGUMENT,
            "ag_tensor_scalar");
  ag_context_release(ctx);
}

static void test_null_handles_tensor_functions(void) {
  ag_context *ctx;
  ag_tensor *x, *out;
  int64_t dims[4] = {-5, -5, -5, -5};
  double buf[3] = {1, 2, 3}, v = 42.0;
  REQUIRE(NEW_CTX_WITH(&ctx, &x, AG_F64, s1_3, 1, NULL));

  CHECK_ERR(ag_tensor_shape(NULL, dims, 4), AG_ERR_INVALID_ARGUMENT, "ag_tensor_shape");
  CHECK(dims[0] == -5);
  CHECK_ERR(ag_tensor_shape(x, NULL, 2), AG_ERR_INVALID_ARGUMENT, "ag_tensor_shape");

  CHECK_ERR(ag_tensor_copy_data(NULL, buf, sizeof buf), AG_ERR_INVALID_ARGUMENT,
            "ag_tensor_copy_data");
  CHECK(buf[0] == 1 && buf[1] == 2 && buf[2] == 3);
  CHECK_ERR(ag_tensor_copy_data(x, NULL, sizeof buf), AG_ERR_INVALID_ARGUMENT,
            "ag_tensor_copy_data");

  CHECK_ERR(ag_tensor_copy_from(NULL, buf, sizeof buf), AG_ERR_INVALID_ARGUMENT,
            "ag_tensor_copy_from");
  CHECK_ERR(ag_tensor_copy_from(x, NULL, sizeof buf), AG_ERR_INVALID_ARGUMENT,
            "ag_tensor_copy_from");

  CHECK_ERR(ag_tensor_item(NULL, &v), AG_ERR_INVALID_ARGUMENT, "ag_tensor_item");
  CHECK(v == 42.0);
  {
    ag_tensor *s = SCALAR(ctx, AG_F64, 1.0);
    CHECK_ERR(ag_tensor_item(s, NULL), AG_ERR_INVALID_ARGUMENT, "ag_tensor_item");
    REL(s);
  }

  CHECK_ERR(ag_tensor_requires_grad(NULL, 1), AG_ERR_INVALID_ARGUMENT, "ag_tensor_requires_grad");

  out = SENT_T;
  CHECK_ERR(ag_tensor_grad(&out, NULL), AG_ERR_INVALID_ARGUMENT, "ag_tensor_grad");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_tensor_grad(NULL, x), AG_ERR_INVALID_ARGUMENT, "ag_tensor_grad");

  CHECK_ERR(ag_tensor_set_grad(NULL, x), AG_ERR_INVALID_ARGUMENT, "ag_tensor_set_grad");
  CHECK_ERR(ag_tensor_set_grad(NULL, NULL), AG_ERR_INVALID_ARGUMENT, "ag_tensor_set_grad");

  CHECK_ERR(ag_tensor_detach(&out, NULL), AG_ERR_INVALID_ARGUMENT, "ag_tensor_detach");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_tensor_detach(NULL, x), AG_ERR_INVALID_ARGUMENT, "ag_tensor_detach");

  CHECK_ERR(ag_backward(NULL, NULL, NULL), AG_ERR_INVALID_ARGUMENT, "ag_backward");
  CHECK_ERR(ag_backward(NULL, x, NULL), AG_ERR_INVALID_ARGUMENT, "ag_backward");

  /* grad_mode_set accepts a NULL `previous` */
  CHECK_OK(ag_grad_mode_set(1, NULL));

  REL(x);
  ag_context_release(ctx);
}

int main(int argc, char **argv) {
  h_init(argc, argv);
  RUN(test_null_handles_unary_ops);
  RUN(test_null_handles_binary_ops);
  RUN(test_null_inputs_every_op);
  RUN(test_null_elements_in_lists);
  RUN(test_null_handles_context_and_creation);
  RUN(test_null_handles_tensor_functions);
  return h_finish();
}
