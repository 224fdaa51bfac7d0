/*
 * tests/c_api/test_errors_ops.c - error paths of the ops in the C API:
 * shapes that do not broadcast, mixed dtypes, non-floating inputs, bad cast
 * targets, tensors from two contexts, incompatible expand and sum_to_size;
 * kron past the dims limit; the arguments of embedding_bag and ctc_loss.
 */
#include "harness.h"

static const int64_t s1_3[1] = {3};
static const int64_t s2_23[2] = {2, 3};

static void test_broadcast_mismatch(void) {
  ag_context *ctx = NEW_CTX();
  int64_t s4[1] = {4}, s32[2] = {3, 2};
  ag_tensor *a, *b, *c, *out;
  REQUIRE(ctx);
  a = MAKE(ctx, AG_F64, s2_23, 2, NULL);
  b = MAKE(ctx, AG_F64, s4, 1, NULL);
  c = MAKE(ctx, AG_F64, s32, 2, NULL);
  REQUIRE(a && b && c);
#define MISMATCH(op)                                                     \
  do {                                                                   \
    out = SENT_T;                                                        \
    CHECK_ERR(op(&out, a, b), AG_ERR_SHAPE, #op);                        \
    CHECK_MSG_HAS("(2,3)");                                              \
    CHECK_MSG_HAS("(4)");                                                \
    CHECK(out == SENT_T);                                                \
    CHECK_ERR(op(&out, b, a), AG_ERR_SHAPE, #op);                        \
    CHECK_MSG_HAS("(4)");                                                \
    CHECK_MSG_HAS("(2,3)");                                              \
    CHECK(out == SENT_T);                                                \
    CHECK_ERR(op(&out, a, c), AG_ERR_SHAPE, #op);                        \
    CHECK_MSG_HAS("(2,3)");                                              \
    CHECK_MSG_HAS("(3,2)");                                              \
    CHECK(out == SENT_T);                                                \
  } while (0)
  MISMATCH(ag_op_add);
  MISMATCH(ag_op_sub);
  MISMATCH(ag_op_mul);
  MISMATCH(ag_op_div);
#undef MISMATCH
  /* the exact example from the header */
  out = SENT_T;
  CHECK_STATUS(ag_op_mul(&out, a, b), AG_ERR_SHAPE);
  CHECK_STR(ag_last_error_message(), "[ag_op_mul] cannot broadcast shapes (2,3) and (4)");
  REL(a);
  REL(b);
  REL(c);
  ag_context_release(ctx);
}

static void test_dtype_mismatch(void) {
  ag_context *ctx = NEW_CTX();
  int64_t s2[1] = {2};
  ag_tensor *f32v, *f64v, *f32s, *f64s, *out;
  REQUIRE(ctx);
  f32v = MAKE(ctx, AG_F32, s2, 1, NULL);
  f64v = MAKE(ctx, AG_F64, s2, 1, NULL);
  f32s = SCALAR(ctx, AG_F32, 1.0);
  f64s = SCALAR(ctx, AG_F64, 1.0);
  REQUIRE(f32v && f64v && f32s && f64s);
#define DT_MISMATCH(op, a, b)                                            \
  do {                                                                   \
    out = SENT_T;                                                        \
    CHECK_ERR(op(&out, a, b), AG_ERR_DTYPE, #op);                        \
    CHECK_MSG_HAS("f32");                                                \
    CHECK_MSG_HAS("f64");                                                \
    CHECK(out == SENT_T);                                                \
  } while (0)
  DT_MISMATCH(ag_op_add, f32v, f64v);
  DT_MISMATCH(ag_op_sub, f64v, f32v);
  DT_MISMATCH(ag_op_mul, f32v, f64v);
  DT_MISMATCH(ag_op_div, f64v, f32v);
  /* 0-dim tensors do not promote either */
  DT_MISMATCH(ag_op_mul, f64v, f32s);
  DT_MISMATCH(ag_op_mul, f32s, f64v);
  DT_MISMATCH(ag_op_add, f32v, f64s);
  DT_MISMATCH(ag_op_add, f32s, f64s);
#undef DT_MISMATCH
  REL(f32v);
  REL(f64v);
  REL(f32s);
  REL(f64s);
  ag_context_release(ctx);
}

static void test_non_floating_ops(void) {
  ag_context *ctx = NEW_CTX();
  ag_tensor *i, *b, *out = SENT_T;
  REQUIRE(ctx);
  i = MAKE(ctx, AG_I64, s1_3, 1, NULL);
  b = MAKE(ctx, AG_BOOL, s1_3, 1, NULL);
  REQUIRE(i && b);
  CHECK_ERR(ag_op_exp(&out, i), AG_ERR_DTYPE, "ag_op_exp");
  CHECK_MSG_HAS("i64");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_op_log(&out, i), AG_ERR_DTYPE, "ag_op_log");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_op_tanh(&out, i), AG_ERR_DTYPE, "ag_op_tanh");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_op_exp(&out, b), AG_ERR_DTYPE, "ag_op_exp");
  CHECK_MSG_HAS("bool");
  CHECK(out == SENT_T);
  /* every elementwise op, reduction and sum_to_size needs a floating input */
  CHECK_ERR(ag_op_neg(&out, i), AG_ERR_DTYPE, "ag_op_neg");
  CHECK_ERR(ag_op_pow_scalar(&out, i, 2.0), AG_ERR_DTYPE, "ag_op_pow_scalar");
  CHECK_ERR(ag_op_add(&out, i, i), AG_ERR_DTYPE, "ag_op_add");
  CHECK_ERR(ag_op_mul(&out, b, b), AG_ERR_DTYPE, "ag_op_mul");
  CHECK_ERR(ag_op_sum(&out, i), AG_ERR_DTYPE, "ag_op_sum");
  CHECK_ERR(ag_op_mean(&out, b), AG_ERR_DTYPE, "ag_op_mean");
  CHECK_ERR(ag_op_sum_to_size(&out, i, s1_3, 1), AG_ERR_DTYPE, "ag_op_sum_to_size");
  CHECK(out == SENT_T);
  /* expand and cast take all four */
  {
    ag_tensor *e = NULL, *c = NULL;
    CHECK_OK(ag_op_expand(&e, i, s2_23, 2));
    CHECK(ag_tensor_dtype(e) == AG_I64);
    CHECK_OK(ag_op_cast(&c, b, AG_F32));
    CHECK(ag_tensor_dtype(c) == AG_F32);
    REL(e);
    REL(c);
  }
  REL(i);
  REL(b);
  ag_context_release(ctx);
}

static void test_cast_bad_dtype(void) {
  ag_context *ctx;
  ag_tensor *x, *out = SENT_T;
  REQUIRE(NEW_CTX_WITH(&ctx, &x, AG_F64, s1_3, 1, NULL));
  CHECK_ERR(ag_op_cast(&out, x, 0), AG_ERR_DTYPE, "ag_op_cast");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_op_cast(&out, x, 5), AG_ERR_DTYPE, "ag_op_cast");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_op_cast(&out, x, -2), AG_ERR_DTYPE, "ag_op_cast");
  CHECK(out == SENT_T);
  REL(x);
  ag_context_release(ctx);
}

static void test_two_contexts(void) {
  ag_context *c1 = NEW_CTX(), *c2 = NEW_CTX();
  ag_tensor *a, *b, *y = NULL, *out = SENT_T;
  REQUIRE(c1 && c2);
  a = MAKE(c1, AG_F64, s1_3, 1, NULL);
  b = MAKE(c2, AG_F64, s1_3, 1, NULL);
  REQUIRE(a && b);
  CHECK_ERR(ag_op_add(&out, a, b), AG_ERR_CONTEXT, "ag_op_add");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_op_mul(&out, b, a), AG_ERR_CONTEXT, "ag_op_mul");
  CHECK(out == SENT_T);
  /* set_grad with a gradient from another context */
  CHECK_OK(ag_tensor_requires_grad(a, 1));
  CHECK_ERR(ag_tensor_set_grad(a, b), AG_ERR_CONTEXT, "ag_tensor_set_grad");
  CHECK_NO_GRAD(a);
  /* backward with a grad_root from another context changes nothing */
  REQUIRE_OK(ag_op_mul(&y, a, a));
  CHECK_ERR(ag_backward(y, b, NULL), AG_ERR_CONTEXT, "ag_backward");
  CHECK_NO_GRAD(a);
  REL(y);
  REL(a);
  REL(b);
  ag_context_release(c1);
  ag_context_release(c2);
}

static void test_expand_incompatible(void) {
  ag_context *ctx;
  ag_tensor *x, *out = SENT_T;
  int64_t to43[2] = {4, 3}, to3[1] = {3}, to24[2] = {2, 4};
  REQUIRE(NEW_CTX_WITH(&ctx, &x, AG_F64, s2_23, 2, NULL));
  CHECK_ERR(ag_op_expand(&out, x, to43, 2), AG_ERR_SHAPE, "ag_op_expand");
  CHECK_MSG_HAS("(2,3)");
  CHECK_MSG_HAS("(4,3)");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_op_expand(&out, x, to3, 1), AG_ERR_SHAPE, "ag_op_expand"); /* fewer dims */
  CHECK(out == SENT_T);
  CHECK_ERR(ag_op_expand(&out, x, to24, 2), AG_ERR_SHAPE, "ag_op_expand");
  CHECK(out == SENT_T);
  REL(x);
  ag_context_release(ctx);
}

static void test_sum_to_size_incompatible(void) {
  ag_context *ctx;
  ag_tensor *x, *out = SENT_T;
  int64_t to4[1] = {4}, to231[3] = {2, 3, 1}, to33[2] = {3, 3};
  REQUIRE(NEW_CTX_WITH(&ctx, &x, AG_F64, s2_23, 2, NULL));
  CHECK_ERR(ag_op_sum_to_size(&out, x, to4, 1), AG_ERR_SHAPE, "ag_op_sum_to_size");
  CHECK_MSG_HAS("(2,3)");
  CHECK_MSG_HAS("(4)");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_op_sum_to_size(&out, x, to231, 3), AG_ERR_SHAPE, "ag_op_sum_to_size");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_op_sum_to_size(&out, x, to33, 2), AG_ERR_SHAPE, "ag_op_sum_to_size");
  CHECK(out == SENT_T);
  REL(x);
  ag_context_release(ctx);
}

/* kron of inputs with more than AG_MAX_DIMS / 2 dims: its interleaved
 * shapes would need 2 n dims (a fuzzer input overran them before the
 * check); 8 dims still work. */
static void test_kron_too_many_dims(void) {
  ag_context *ctx = NEW_CTX();
  int64_t ones9[9] = {1, 1, 1, 1, 1, 1, 1, 1, 2}, ones8[8] = {1, 1, 1, 1, 1, 1, 1, 2};
  ag_tensor *a, *b, *c, *out = SENT_T;
  REQUIRE(ctx);
  a = MAKE(ctx, AG_F64, ones9, 9, NULL);
  b = MAKE(ctx, AG_F64, s1_3, 1, NULL);
  c = MAKE(ctx, AG_F64, ones8, 8, NULL);
  REQUIRE(a && b && c);
  CHECK_ERR(ag_op_kron(&out, a, b), AG_ERR_SHAPE, "ag_op_kron");
  CHECK_MSG_HAS("9 dims need 18 dims");
  CHECK(out == SENT_T);
  CHECK_ERR(ag_op_kron(&out, b, a), AG_ERR_SHAPE, "ag_op_kron");
  CHECK(out == SENT_T);
  CHECK_STATUS(ag_op_kron(&out, c, b), AG_OK);
  CHECK(out != SENT_T && ag_tensor_ndim(out) == 8 && ag_tensor_numel(out) == 6);
  if (out != SENT_T) REL(out);
  REL(a);
  REL(b);
  REL(c);
  ag_context_release(ctx);
}

/* embedding_bag and ctc_loss: each bad argument fails with a message naming the facts. */
static void test_embedding_bag_errors(void) {
  ag_context *ctx = NEW_CTX();
  const int64_t s43[2] = {4, 3}, s5[1] = {5}, s3[1] = {3}, s2[1] = {2}, s22[2] = {2, 2}, s4[1] = {4};
  const double iv[5] = {0, 3, 1, 2, 2}, ov[3] = {0, 2, 2}, bad_ov[3] = {0, 4, 2}, far[5] = {0, 3, 9, 2, 2};
  const double ov1[2] = {1, 2};
  ag_tensor *w, *idx, *off, *off_bad, *off1, *idx_far, *idx2, *psw, *out = SENT_T;
  REQUIRE(ctx);
  w = MAKE(ctx, AG_F64, s43, 2, NULL);
  idx = MAKE(ctx, AG_I64, s5, 1, iv);
  off = MAKE(ctx, AG_I64, s3, 1, ov);
  off_bad = MAKE(ctx, AG_I64, s3, 1, bad_ov);
  off1 = MAKE(ctx, AG_I64, s2, 1, ov1);
  idx_far = MAKE(ctx, AG_I64, s5, 1, far);
  idx2 = MAKE(ctx, AG_I64, s22, 2, NULL);
  psw = MAKE(ctx, AG_F64, s4, 1, NULL);
  REQUIRE(w && idx && off && off_bad && off1 && idx_far && idx2 && psw);
  CHECK_OK(ag_op_embedding_bag(&out, w, idx, off, AG_EMBEDDING_BAG_MEAN, NULL, 0, -1));
  REL(out);
  out = SENT_T;
  CHECK_ERR(ag_op_embedding_bag(&out, w, idx, off, 3, NULL, 0, -1), AG_ERR_INVALID_ARGUMENT, "ag_op_embedding_bag");
  CHECK_MSG_HAS("mode 3 is not one of AG_EMBEDDING_BAG_SUM (0)");
  CHECK_ERR(ag_op_embedding_bag(&out, w, idx, off, 0, NULL, 0, 4), AG_ERR_INVALID_ARGUMENT, "ag_op_embedding_bag");
  CHECK_MSG_HAS("padding_idx 4 is outside -1..3");
  CHECK_ERR(ag_op_embedding_bag(&out, w, idx, NULL, 0, NULL, 0, -1), AG_ERR_INVALID_ARGUMENT, "ag_op_embedding_bag");
  CHECK_MSG_HAS("offsets must be given for 1-D indices");
  CHECK_ERR(ag_op_embedding_bag(&out, w, idx2, off, 0, NULL, 0, -1), AG_ERR_INVALID_ARGUMENT, "ag_op_embedding_bag");
  CHECK_MSG_HAS("offsets must be NULL for 2-D indices");
  CHECK_ERR(ag_op_embedding_bag(&out, w, idx, off_bad, 0, NULL, 0, -1), AG_ERR_INVALID_ARGUMENT, "ag_op_embedding_bag");
  CHECK_MSG_HAS("offsets[2] = 2 must be in 4..5");
  CHECK_ERR(ag_op_embedding_bag(&out, w, idx, off1, 0, NULL, 0, -1), AG_ERR_INVALID_ARGUMENT, "ag_op_embedding_bag");
  CHECK_MSG_HAS("offsets[0] is 1, must be 0");
  CHECK_ERR(ag_op_embedding_bag(&out, w, idx_far, off, 0, NULL, 0, -1), AG_ERR_INVALID_ARGUMENT, "ag_op_embedding_bag");
  CHECK_MSG_HAS("index 9 at position (2) is out of range for weight's 4 rows");
  CHECK_ERR(ag_op_embedding_bag(&out, w, idx, off, AG_EMBEDDING_BAG_MAX, psw, 0, -1), AG_ERR_INVALID_ARGUMENT,
            "ag_op_embedding_bag");
  CHECK_MSG_HAS("per_sample_weights is only supported with AG_EMBEDDING_BAG_SUM");
  CHECK_ERR(ag_op_embedding_bag(&out, w, idx, off, AG_EMBEDDING_BAG_SUM, psw, 0, -1), AG_ERR_SHAPE,
            "ag_op_embedding_bag");
  CHECK_MSG_HAS("per_sample_weights (4) must have the shape of indices (5)");
  CHECK_ERR(ag_op_embedding_bag(&out, idx, idx, off, 0, NULL, 0, -1), AG_ERR_DTYPE, "ag_op_embedding_bag");
  CHECK_ERR(ag_op_embedding_bag(&out, psw, idx, off, 0, NULL, 0, -1), AG_ERR_SHAPE, "ag_op_embedding_bag");
  CHECK_MSG_HAS("weight must be 2-D (V, D), got shape (4)");
  CHECK_ERR(ag_op_embedding_bag(&out, w, psw, off, 0, NULL, 0, -1), AG_ERR_DTYPE, "ag_op_embedding_bag");
  CHECK_MSG_HAS("indices must be i64");
  CHECK(out == SENT_T);
  REL(w), REL(idx), REL(off), REL(off_bad), REL(off1), REL(idx_far), REL(idx2), REL(psw);
  ag_context_release(ctx);
}

static void test_ctc_loss_errors(void) {
  ag_context *ctx = NEW_CTX();
  const int64_t s423[3] = {4, 2, 3}, s22[2] = {2, 2}, s2[1] = {2}, s3[1] = {3}, s43[2] = {4, 3};
  const double tv[4] = {1, 2, 2, 0}, il[2] = {4, 3}, tl[2] = {2, 1}, il_long[2] = {5, 3}, tl_long[2] = {3, 1};
  const double tv_blank[4] = {1, 0, 2, 0}, tv_far[4] = {1, 7, 2, 0};
  ag_tensor *lp, *t, *in_l, *t_l, *in_long, *t_long, *t_blank, *t_far, *three, *flat, *out = SENT_T;
  REQUIRE(ctx);
  lp = MAKE(ctx, AG_F64, s423, 3, NULL);
  t = MAKE(ctx, AG_I64, s22, 2, tv);
  in_l = MAKE(ctx, AG_I64, s2, 1, il);
  t_l = MAKE(ctx, AG_I64, s2, 1, tl);
  in_long = MAKE(ctx, AG_I64, s2, 1, il_long);
  t_long = MAKE(ctx, AG_I64, s2, 1, tl_long);
  t_blank = MAKE(ctx, AG_I64, s22, 2, tv_blank);
  t_far = MAKE(ctx, AG_I64, s22, 2, tv_far);
  three = MAKE(ctx, AG_I64, s3, 1, tv);
  flat = MAKE(ctx, AG_F64, s43, 2, NULL);
  REQUIRE(lp && t && in_l && t_l && in_long && t_long && t_blank && t_far && three && flat);
  CHECK_OK(ag_op_ctc_loss(&out, lp, t, in_l, t_l, 0, AG_REDUCTION_MEAN, 0));
  REL(out);
  out = SENT_T;
  CHECK_ERR(ag_op_ctc_loss(&out, lp, t, in_l, t_l, 3, AG_REDUCTION_MEAN, 0), AG_ERR_INVALID_ARGUMENT, "ag_op_ctc_loss");
  CHECK_MSG_HAS("blank 3 is outside 0..2 (3 classes)");
  CHECK_ERR(ag_op_ctc_loss(&out, lp, t, in_long, t_l, 0, AG_REDUCTION_MEAN, 0), AG_ERR_INVALID_ARGUMENT,
            "ag_op_ctc_loss");
  CHECK_MSG_HAS("input_lengths[0] = 5 is outside 0..4 (T = 4)");
  CHECK_ERR(ag_op_ctc_loss(&out, lp, t, in_l, t_long, 0, AG_REDUCTION_MEAN, 0), AG_ERR_INVALID_ARGUMENT,
            "ag_op_ctc_loss");
  CHECK_MSG_HAS("target_lengths[0] = 3 exceeds the 2 target columns");
  CHECK_ERR(ag_op_ctc_loss(&out, lp, t_blank, in_l, t_l, 0, AG_REDUCTION_MEAN, 0), AG_ERR_INVALID_ARGUMENT,
            "ag_op_ctc_loss");
  CHECK_MSG_HAS("target 0 (sample 0, position 1) is outside 0..2 or is the blank 0");
  CHECK_ERR(ag_op_ctc_loss(&out, lp, t_far, in_l, t_l, 0, AG_REDUCTION_MEAN, 0), AG_ERR_INVALID_ARGUMENT,
            "ag_op_ctc_loss");
  CHECK_MSG_HAS("target 7 (sample 0, position 1)");
  CHECK_ERR(ag_op_ctc_loss(&out, lp, t, three, t_l, 0, AG_REDUCTION_MEAN, 0), AG_ERR_SHAPE, "ag_op_ctc_loss");
  CHECK_MSG_HAS("input_lengths must be (N) with N = 2, got shape (3)");
  CHECK_ERR(ag_op_ctc_loss(&out, lp, three, in_l, t_long, 0, AG_REDUCTION_MEAN, 0), AG_ERR_SHAPE, "ag_op_ctc_loss");
  CHECK_MSG_HAS("target_lengths sum to 4 but the concatenated targets hold 3");
  {
    const double tl_huge[2] = {6e18, 6e18}; /* their sum passes INT64_MAX */
    ag_tensor *t_huge = MAKE(ctx, AG_I64, s2, 1, tl_huge);
    REQUIRE(t_huge);
    CHECK_ERR(ag_op_ctc_loss(&out, lp, three, in_l, t_huge, 0, AG_REDUCTION_MEAN, 0), AG_ERR_SHAPE, "ag_op_ctc_loss");
    CHECK_MSG_HAS("target_lengths sum past int64 but the concatenated targets hold 3");
    REL(t_huge);
  }
  CHECK_ERR(ag_op_ctc_loss(&out, t, t, in_l, t_l, 0, AG_REDUCTION_MEAN, 0), AG_ERR_DTYPE, "ag_op_ctc_loss");
  CHECK_ERR(ag_op_ctc_loss(&out, lp, lp, in_l, t_l, 0, AG_REDUCTION_MEAN, 0), AG_ERR_DTYPE, "ag_op_ctc_loss");
  CHECK_MSG_HAS("targets must be i64");
  CHECK_ERR(ag_op_ctc_loss(&out, in_l, t, in_l, t_l, 0, AG_REDUCTION_MEAN, 0), AG_ERR_DTYPE, "ag_op_ctc_loss");
  CHECK_ERR(ag_op_ctc_loss(&out, lp, t, in_l, t_l, 0, 7, 0), AG_ERR_INVALID_ARGUMENT, "ag_op_ctc_loss");
  CHECK_MSG_HAS("reduction 7 is not one of");
  CHECK_ERR(ag_op_ctc_loss(&out, flat, t, in_l, t_l, 0, AG_REDUCTION_MEAN, 0), AG_ERR_SHAPE, "ag_op_ctc_loss");
  CHECK_MSG_HAS("input_lengths must be () or (1), got shape (2)");
  CHECK(out == SENT_T);
  REL(lp), REL(t), REL(in_l), REL(t_l), REL(in_long), REL(t_long), REL(t_blank), REL(t_far), REL(three), REL(flat);
  ag_context_release(ctx);
}

int main(int argc, char **argv) {
  h_init(argc, argv);
  RUN(test_broadcast_mismatch);
  RUN(test_dtype_mismatch);
  RUN(test_non_floating_ops);
  RUN(test_cast_bad_dtype);
  RUN(test_two_contexts);
  RUN(test_expand_incompatible);
  RUN(test_sum_to_size_incompatible);
  RUN(test_kron_too_many_dims);
  RUN(test_embedding_bag_errors);
  RUN(test_ctc_loss_errors);
  return h_finish();
}
