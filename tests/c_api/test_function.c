/*
 * tests/c_api/test_function.c - custom differentiable functions from C
 * callbacks: first and second derivatives against closed forms, several
 * inputs and outputs, saved inputs and outputs (no cycle), needs_input_grad,
 * mark_non_differentiable, mark_dirty, once_differentiable, version checks,
 * failing callbacks and their messages, checked return values, destroy
 * exactly once, and context misuse.
 */
#include "harness.h"

static const int64_t s3[1] = {3};

typedef struct {
  int forward_calls, backward_calls, destroyed;
  int fail_forward, fail_backward, wrong_shape, null_output, save_output, non_diff;
  int needs[2];
  int saved_status;
} fstate;

static void destroy_fstate(void *p) { ((fstate *)p)->destroyed++; }

static ag_function_def def_of(const char *name, ag_function_forward_fn f, ag_function_backward_fn b, fstate *s) {
  ag_function_def d = AG_FUNCTION_DEF_INIT;
  d.name = name;
  d.forward = f;
  d.backward = b;
  d.user_data = s;
  d.destroy = destroy_fstate;
  return d;
}

/* ---- cube: y = x^3, saved input, backward 3 x^2 g written with ag ops ---------- */

static ag_status cube_forward(void *p, ag_function_ctx *ctx, const ag_tensor *const *in, int32_t n, ag_tensor **out,
                              int32_t m) {
  fstate *s = (fstate *)p;
  ag_tensor *x = (ag_tensor *)in[0];
  s->forward_calls++;
  if (n != 1 || m != 1)
    return AG_ERR_INTERNAL;
  if (s->fail_forward) {
    ag_set_callback_error("forward does not like these inputs");
    return AG_ERR_SHAPE;
  }
  if (s->null_output)
    return AG_OK;
  s->needs[0] = ag_function_ctx_needs_input_grad(ctx, 0);
  if (ag_grad_mode_enabled())
    return AG_ERR_INTERNAL; /* forward runs with grad mode off */
  if (ag_op_pow_scalar(&out[0], x, 3.0) != AG_OK)
    return AG_ERR_INTERNAL;
  return ag_function_ctx_save_for_backward(ctx, in, 1);
}

static ag_status cube_backward(void *p, ag_function_ctx *ctx, const ag_tensor *const *g, int32_t n, ag_tensor **gi,
                               int32_t m) {
  fstate *s = (fstate *)p;
  ag_tensor *x = NULL, *x2 = NULL, *t = NULL, *three = NULL, *ctxh = NULL;
  ag_context *c = NULL;
  ag_status st;
  (void)ctxh;
  s->backward_calls++;
  if (n != 1 || m != 1)
    return AG_ERR_INTERNAL;
  if (s->fail_backward) {
    ag_set_callback_error("backward refuses");
    return AG_ERR_UNSUPPORTED;
  }
  s->saved_status = ag_function_ctx_saved_tensor(&x, ctx, 0);
  if (s->saved_status != AG_OK)
    return s->saved_status;
  if (s->wrong_shape) {
    int64_t two = 2;
    ag_tensor_context(&c, x);
    ag_tensor_zeros(&gi[0], c, AG_F64, &two, 1);
    ag_context_release(c);
    ag_tensor_release(x);
    return AG_OK;
  }
  ag_tensor_context(&c, x);
  ag_tensor_scalar(&three, c, AG_F64, 3.0);
  ag_context_release(c);
  st = ag_op_mul(&x2, x, x);
  if (st == AG_OK)
    st = ag_op_mul(&t, x2, three);
  if (st == AG_OK)
    st = ag_op_mul(&gi[0], t, g[0]);
  ag_tensor_release(three);
  ag_tensor_release(t);
  ag_tensor_release(x2);
  ag_tensor_release(x);
  return st;
}

/* The function under test (state s, backward cube_backward) and its one
 * input x = xv of shape (3): a leaf that requires grad if `leaf`. */
typedef struct {
  ag_context *ctx;
  fstate s;
  ag_function_def d;
  ag_tensor *x;
  const ag_tensor *ins[1];
} fixture;

static const double x123[3] = {1, 2, 3};

/* 0 (recorded, nothing left to release) if the context or x cannot be made. */
static int setup(fixture *f, const char *name, ag_function_forward_fn forward, const double *xv, int leaf) {
  memset(&f->s, 0, sizeof f->s);
  f->d = def_of(name, forward, cube_backward, &f->s);
  f->x = NULL;
  f->ctx = NEW_CTX();
  if (f->ctx)
    f->x = leaf ? LEAF(f->ctx, AG_F64, s3, 1, xv) : MAKE(f->ctx, AG_F64, s3, 1, xv);
  f->ins[0] = f->x;
  if (!f->x) {
    ag_context_release(f->ctx);
    return 0;
  }
  return 1;
}

static void teardown(fixture *f) {
  REL(f->x);
  ag_context_release(f->ctx);
}

static void test_cube_first_and_second_order(void) {
  fixture f;
  double xv[3] = {0.5, -1.5, 2}, y3[3], g1[3], g2[3];
  ag_tensor *y = NULL, *l = NULL, *gx[1] = {NULL}, *sg = NULL, *h[1] = {NULL};
  const ag_tensor *outs[1];
  ag_grad_options o = AG_GRAD_OPTIONS_INIT;
  int i;
  REQUIRE(setup(&f, "CubeBackward", cube_forward, xv, 1));
  for (i = 0; i < 3; i++) {
    y3[i] = xv[i] * xv[i] * xv[i];
    g1[i] = 3 * xv[i] * xv[i];
    g2[i] = 6 * xv[i];
  }
  REQUIRE_OK(ag_function_apply(&y, 1, f.ins, 1, &f.d));
  CHECK(f.s.forward_calls == 1 && f.s.needs[0] == 1);
  CHECK_VALUES(y, y3, 3, 1e-12);
  CHECK_STR(ag_tensor_grad_fn_name(y), "CubeBackward");
  REQUIRE_OK(ag_op_sum(&l, y));
  outs[0] = l;
  o.create_graph = 1;
  REQUIRE_OK(ag_grad(gx, outs, NULL, 1, f.ins, 1, &o));
  CHECK(f.s.backward_calls == 1);
  CHECK_VALUES(gx[0], g1, 3, 1e-12);
  CHECK(ag_tensor_get_requires_grad(gx[0]) == 1);
  /* double backward through the recorded custom backward */
  REQUIRE_OK(ag_op_sum(&sg, gx[0]));
  outs[0] = sg;
  o.create_graph = 0;
  REQUIRE_OK(ag_grad(h, outs, NULL, 1, f.ins, 1, &o));
  CHECK_VALUES(h[0], g2, 3, 1e-12);
  REL(h[0]);
  REL(sg);
  REL(gx[0]);
  REL(l);
  CHECK(f.s.destroyed == 0);
  REL(y);
  CHECK(f.s.destroyed == 1); /* the node went with its output */
  teardown(&f);
}

/* No input requires grad: forward runs, no node, destroy at once. */
static void test_no_graph_destroys_at_once(void) {
  fixture f;
  ag_tensor *y = NULL;
  REQUIRE(setup(&f, "CubeBackward", cube_forward, x123, 0));
  REQUIRE_OK(ag_function_apply(&y, 1, f.ins, 1, &f.d));
  CHECK(f.s.needs[0] == 0);
  CHECK(f.s.destroyed == 1);
  CHECK(ag_tensor_get_requires_grad(y) == 0);
  CHECK(ag_tensor_grad_fn_name(y) == NULL);
  REL(y);
  teardown(&f);
}

/* ---- two inputs, two outputs: (a*b, a+b); b does not need a gradient --------- */

static ag_status pair_forward(void *p, ag_function_ctx *ctx, const ag_tensor *const *in, int32_t n, ag_tensor **out,
                              int32_t m) {
  fstate *s = (fstate *)p;
  s->forward_calls++;
  if (n != 2 || m != 2)
    return AG_ERR_INTERNAL;
  if (ag_op_mul(&out[0], in[0], in[1]) != AG_OK || ag_op_add(&out[1], in[0], in[1]) != AG_OK)
    return AG_ERR_INTERNAL;
  if (s->non_diff && ag_function_ctx_mark_non_differentiable(ctx, out[1]) != AG_OK)
    return AG_ERR_INTERNAL;
  return ag_function_ctx_save_for_backward(ctx, in, 2);
}

static ag_status pair_backward(void *p, ag_function_ctx *ctx, const ag_tensor *const *g, int32_t n, ag_tensor **gi,
                               int32_t m) {
  fstate *s = (fstate *)p;
  ag_tensor *a = NULL, *b = NULL, *t = NULL;
  s->backward_calls++;
  if (n != 2 || m != 2)
    return AG_ERR_INTERNAL;
  s->needs[0] = ag_function_ctx_needs_input_grad(ctx, 0);
  s->needs[1] = ag_function_ctx_needs_input_grad(ctx, 1);
  if (ag_function_ctx_num_saved(ctx) != 2)
    return AG_ERR_INTERNAL;
  ag_function_ctx_saved_tensor(&a, ctx, 0);
  ag_function_ctx_saved_tensor(&b, ctx, 1);
  /* ga = g0 * b + g1 (g1 is zeros when it did not flow) */
  ag_op_mul(&t, g[0], b);
  ag_op_add(&gi[0], t, g[1]);
  ag_tensor_release(t);
  ag_op_mul(&gi[1], g[0], a); /* not needed: ignored by ag */
  ag_tensor_release(a);
  ag_tensor_release(b);
  return AG_OK;
}

static void test_two_inputs_two_outputs(void) {
  int variant;
  for (variant = 0; variant < 2; variant++) {
    ag_context *ctx = NEW_CTX();
    fstate s = {0};
    ag_function_def d = def_of("PairBackward", pair_forward, pair_backward, &s);
    double av[3] = {1, 2, 3}, bv[3] = {-1, 0.5, 4}, want[3];
    ag_tensor *a, *b, *y[2] = {NULL, NULL}, *l0 = NULL, *l1 = NULL, *l = NULL, *ga;
    const ag_tensor *ins[2];
    int i;
    REQUIRE(ctx);
    s.non_diff = variant;
    a = LEAF(ctx, AG_F64, s3, 1, av);
    b = MAKE(ctx, AG_F64, s3, 1, bv);
    ins[0] = a;
    ins[1] = b;
    REQUIRE_OK(ag_function_apply(y, 2, ins, 2, &d));
    CHECK(ag_tensor_get_requires_grad(y[0]) == 1);
    CHECK(ag_tensor_get_requires_grad(y[1]) == !variant);
    REQUIRE_OK(ag_op_sum(&l0, y[0]));
    if (variant == 0) {
      REQUIRE_OK(ag_op_sum(&l1, y[1]));
      REQUIRE_OK(ag_op_add(&l, l0, l1));
    } else {
      l = ag_tensor_retain(l0);
    }
    REQUIRE_OK(ag_backward(l, NULL, NULL));
    CHECK(s.needs[0] == 1 && s.needs[1] == 0);
    for (i = 0; i < 3; i++)
      want[i] = bv[i] + (variant ? 0 : 1);
    ga = GRAD(a);
    CHECK_VALUES(ga, want, 3, 1e-12);
    CHECK_NO_GRAD(b);
    REL(ga);
    REL(l);
    REL(l1);
    REL(l0);
    REL(y[0]);
    REL(y[1]);
    REL(a);
    REL(b);
    CHECK(s.destroyed == 1);
    ag_context_release(ctx);
  }
}

/* ---- saved output: y = exp(x), backward g * y; no cycle; double backward ---- */

static ag_status exp_forward(void *p, ag_function_ctx *ctx, const ag_tensor *const *in, int32_t n, ag_tensor **out,
                             int32_t m) {
  (void)p;
  (void)n;
  (void)m;
  if (ag_op_exp(&out[0], in[0]) != AG_OK)
    return AG_ERR_INTERNAL;
  return ag_function_ctx_save_for_backward(ctx, (const ag_tensor *const *)out, 1);
}

static ag_status exp_backward(void *p, ag_function_ctx *ctx, const ag_tensor *const *g, int32_t n, ag_tensor **gi,
                              int32_t m) {
  ag_tensor *y = NULL;
  ag_status st;
  (void)p;
  (void)n;
  (void)m;
  st = ag_function_ctx_saved_tensor(&y, ctx, 0);
  if (st != AG_OK)
    return st;
  st = ag_op_mul(&gi[0], g[0], y);
  ag_tensor_release(y);
  return st;
}

static int64_t in_use(ag_context *ctx) {
  ag_memory_stats s = AG_MEMORY_STATS_INIT;
  CHECK_OK(ag_context_memory_stats(ctx, &s));
  return s.bytes_in_use;
}

static void test_saved_output_no_cycle_and_double_backward(void) {
  ag_context *ctx = NEW_CTX_THREADS(1);
  fstate s = {0};
  ag_function_def d = def_of("ExpFnBackward", exp_forward, exp_backward, &s);
  int64_t n = 256, i; /* 2 KiB of data: counted in bytes_in_use */
  double xv[256], e[256];
  ag_tensor *x, *y = NULL, *l = NULL, *g[1] = {NULL}, *sg = NULL, *h[1] = {NULL};
  const ag_tensor *ins[1], *outs[1];
  ag_grad_options o = AG_GRAD_OPTIONS_INIT;
  int64_t base;
  REQUIRE(ctx);
  for (i = 0; i < n; i++) {
    xv[i] = 0.01 * (double)i - 1;
    e[i] = exp(xv[i]);
  }
  base = in_use(ctx);
  x = LEAF(ctx, AG_F64, &n, 1, xv);
  ins[0] = x;
  REQUIRE_OK(ag_function_apply(&y, 1, ins, 1, &d));
  REQUIRE_OK(ag_op_sum(&l, y));
  outs[0] = l;
  o.create_graph = 1;
  REQUIRE_OK(ag_grad(g, outs, NULL, 1, ins, 1, &o));
  CHECK_VALUES(g[0], e, 256, 1e-12);
  REQUIRE_OK(ag_op_sum(&sg, g[0]));
  outs[0] = sg;
  o.create_graph = 0;
  REQUIRE_OK(ag_grad(h, outs, NULL, 1, ins, 1, &o)); /* d/dx sum(exp x) twice = exp x */
  CHECK_VALUES(h[0], e, 256, 1e-12);
  REL(h[0]);
  REL(sg);
  REL(g[0]);
  REL(l);
  REL(y); /* the node saved y: it must not keep itself alive */
  CHECK(s.destroyed == 1);
  REL(x);
  CHECK(in_use(ctx) == base);
  ag_context_release(ctx);
}

/* ---- once_differentiable ---------------------------------------------------------- */

static void test_once_differentiable(void) {
  fixture f;
  double xv[3] = {0.5, 1, 2}, g1[3];
  ag_tensor *y = NULL, *l = NULL, *gx[1] = {NULL}, *sg = NULL, *h[1] = {NULL};
  const ag_tensor *outs[1];
  ag_grad_options o = AG_GRAD_OPTIONS_INIT;
  int i;
  REQUIRE(setup(&f, "OnceCubeBackward", cube_forward, xv, 1));
  f.d.flags = AG_FUNCTION_ONCE_DIFFERENTIABLE;
  for (i = 0; i < 3; i++)
    g1[i] = 3 * xv[i] * xv[i];
  REQUIRE_OK(ag_function_apply(&y, 1, f.ins, 1, &f.d));
  REQUIRE_OK(ag_op_sum(&l, y));
  outs[0] = l;
  o.create_graph = 1;
  REQUIRE_OK(ag_grad(gx, outs, NULL, 1, f.ins, 1, &o));
  CHECK_VALUES(gx[0], g1, 3, 1e-12);
  REQUIRE_OK(ag_op_sum(&sg, gx[0]));
  outs[0] = sg;
  h[0] = SENT_T;
  CHECK_ERR(ag_grad(h, outs, NULL, 1, f.ins, 1, NULL), AG_ERR_GRAPH, "ag_grad");
  CHECK_MSG_HAS("OnceCubeBackward");
  CHECK_MSG_HAS("cannot be differentiated again");
  CHECK(h[0] == SENT_T);
  REL(sg);
  REL(gx[0]);
  REL(l);
  REL(y);
  teardown(&f);
}

/* ---- mark_dirty: scale a non-leaf by 2 in place ------------------------------- */

static ag_status double_inplace_forward(void *p, ag_function_ctx *ctx, const ag_tensor *const *in, int32_t n,
                                        ag_tensor **out, int32_t m) {
  ag_tensor *t = (ag_tensor *)in[0];
  double v[3];
  int i;
  (void)p;
  (void)n;
  (void)m;
  h_read_at(__FILE__, __LINE__, t, v, 3);
  for (i = 0; i < 3; i++)
    v[i] *= 2;
  if (ag_tensor_copy_from(t, v, sizeof v) != AG_OK)
    return AG_ERR_INTERNAL;
  out[0] = ag_tensor_retain(t);
  return ag_function_ctx_mark_dirty(ctx, t);
}

static ag_status double_backward(void *p, ag_function_ctx *ctx, const ag_tensor *const *g, int32_t n,
                                 ag_tensor **gi, int32_t m) {
  ag_tensor *two = NULL;
  ag_context *c = NULL;
  ag_status st;
  (void)p;
  (void)ctx;
  (void)n;
  (void)m;
  ag_tensor_context(&c, g[0]);
  ag_tensor_scalar(&two, c, AG_F64, 2.0);
  ag_context_release(c);
  st = ag_op_mul(&gi[0], g[0], two);
  ag_tensor_release(two);
  return st;
}

static void test_mark_dirty(void) {
  ag_context *ctx = NEW_CTX();
  fstate s = {0};
  ag_function_def d = def_of("DoubleInplaceBackward", double_inplace_forward, double_backward, &s);
  double xv[3] = {1, 2, 3}, want[3] = {2, 4, 6}, twos[3] = {2, 2, 2};
  ag_tensor *x, *t = NULL, *y = NULL, *l = NULL;
  const ag_tensor *ins[1];
  int64_t v0;
  REQUIRE(ctx);
  x = LEAF(ctx, AG_F64, s3, 1, xv);
  REQUIRE_OK(ag_op_clone(&t, x));
  v0 = ag_tensor_version(t);
  ins[0] = t;
  REQUIRE_OK(ag_function_apply(&y, 1, ins, 1, &d));
  CHECK(y == t); /* the same tensor, modified in place */
  CHECK(ag_tensor_version(t) > v0);
  CHECK_VALUES(t, want, 3, 0);
  CHECK_STR(ag_tensor_grad_fn_name(t), "DoubleInplaceBackward"); /* its history continues through the function */
  REQUIRE_OK(ag_op_sum(&l, t));
  REQUIRE_OK(ag_backward(l, NULL, NULL));
  CHECK_GRAD_VALUES(x, twos, 3, 0);
  REL(l);
  REL(y);
  REL(t);
  /* a leaf that requires grad cannot be modified in place with grad mode on */
  ins[0] = x;
  y = SENT_T;
  CHECK_ERR(ag_function_apply(&y, 1, ins, 1, &d), AG_ERR_GRAPH, "ag_function_apply");
  CHECK_MSG_HAS("leaf that requires grad");
  CHECK(y == SENT_T);
  REL(x);
  ag_context_release(ctx);
  CHECK(s.destroyed == 2);
}

/* ---- version check on a saved input -------------------------------------------- */

static void test_saved_input_modified(void) {
  fixture f;
  ag_tensor *y = NULL, *l = NULL;
  REQUIRE(setup(&f, "CubeBackward", cube_forward, x123, 1));
  REQUIRE_OK(ag_function_apply(&y, 1, f.ins, 1, &f.d));
  REQUIRE_OK(ag_op_sum(&l, y));
  REQUIRE_OK(ag_tensor_copy_from(f.x, x123, sizeof x123)); /* bumps the version */
  CHECK_ERR(ag_backward(l, NULL, NULL), AG_ERR_CALLBACK, "ag_backward");
  CHECK(f.s.saved_status == AG_ERR_VERSION);
  CHECK_MSG_HAS("CubeBackward");
  CHECK_MSG_HAS("version is 1, expected 0");
  REL(l);
  REL(y);
  teardown(&f);
}

/* ---- failures ------------------------------------------------------------------- */

static void test_failing_forward(void) {
  fixture f;
  ag_tensor *y = SENT_T;
  REQUIRE(setup(&f, "CubeBackward", cube_forward, x123, 1));
  f.s.fail_forward = 1;
  CHECK_ERR(ag_function_apply(&y, 1, f.ins, 1, &f.d), AG_ERR_CALLBACK, "ag_function_apply");
  CHECK_MSG_HAS("CubeBackward forward failed (AG_ERR_SHAPE): forward does not like these inputs");
  CHECK(y == SENT_T);
  CHECK(f.s.destroyed == 1);
  f.s.fail_forward = 0;
  f.s.null_output = 1;
  CHECK_ERR(ag_function_apply(&y, 1, f.ins, 1, &f.d), AG_ERR_CALLBACK, "ag_function_apply");
  CHECK_MSG_HAS("left entry 0 NULL");
  CHECK(f.s.destroyed == 2);
  teardown(&f);
}

static void test_failing_backward_and_wrong_shape(void) {
  int variant;
  for (variant = 0; variant < 2; variant++) {
    fixture f;
    ag_tensor *y = NULL, *l = NULL;
    REQUIRE(setup(&f, "CubeBackward", cube_forward, x123, 1));
    REQUIRE_OK(ag_function_apply(&y, 1, f.ins, 1, &f.d));
    REQUIRE_OK(ag_op_sum(&l, y));
    f.s.fail_backward = variant == 0;
    f.s.wrong_shape = variant == 1;
    CHECK_ERR(ag_backward(l, NULL, NULL), AG_ERR_CALLBACK, "ag_backward");
    if (variant == 0) {
      CHECK_MSG_HAS("CubeBackward backward failed (AG_ERR_UNSUPPORTED): backward refuses");
    } else {
      CHECK_MSG_HAS("returned a gradient of dtype f64 and shape (2) for input 0, which has dtype f64 and shape (3)");
    }
    CHECK_NO_GRAD(f.x);
    REL(l);
    REL(y);
    REL(f.x);
    f.x = NULL;
    CHECK(f.s.destroyed == 1);
    teardown(&f);
  }
}

static ag_status misuse_forward(void *p, ag_function_ctx *ctx, const ag_tensor *const *in, int32_t n, ag_tensor **out,
                                int32_t m) {
  fstate *s = (fstate *)p;
  ag_tensor *t = SENT_T;
  (void)n;
  (void)m;
  /* backward-only calls fail in forward */
  s->saved_status = ag_function_ctx_saved_tensor(&t, ctx, 0);
  if (t != SENT_T)
    return AG_ERR_INTERNAL;
  if (ag_function_ctx_save_for_backward(ctx, in, -1) != AG_ERR_INVALID_ARGUMENT)
    return AG_ERR_INTERNAL;
  if (ag_function_ctx_mark_dirty(NULL, in[0]) != AG_ERR_INVALID_ARGUMENT)
    return AG_ERR_INTERNAL;
  return ag_op_neg(&out[0], in[0]);
}

static void test_ctx_misuse_and_bad_arguments(void) {
  fixture f;
  ag_tensor *y = NULL;
  REQUIRE(setup(&f, "MisuseBackward", misuse_forward, x123, 1));
  REQUIRE_OK(ag_function_apply(&y, 1, f.ins, 1, &f.d));
  CHECK(f.s.saved_status == AG_ERR_INVALID_ARGUMENT);
  REL(y);
  CHECK(f.s.destroyed == 1);
  /* bad arguments: destroy still runs exactly once each time */
  y = SENT_T;
  CHECK_ERR(ag_function_apply(&y, 0, f.ins, 1, &f.d), AG_ERR_INVALID_ARGUMENT, "ag_function_apply");
  CHECK(f.s.destroyed == 2);
  CHECK_ERR(ag_function_apply(&y, 1, NULL, 1, &f.d), AG_ERR_INVALID_ARGUMENT, "ag_function_apply");
  CHECK(f.s.destroyed == 3);
  CHECK_ERR(ag_function_apply(&y, 1, f.ins, 1, NULL), AG_ERR_INVALID_ARGUMENT, "ag_function_apply");
  f.d.backward = NULL;
  CHECK_ERR(ag_function_apply(&y, 1, f.ins, 1, &f.d), AG_ERR_INVALID_ARGUMENT, "ag_function_apply");
  CHECK_MSG_HAS("def->forward and def->backward");
  CHECK(f.s.destroyed == 4);
  f.d.struct_size = 2;
  CHECK_ERR(ag_function_apply(&y, 1, f.ins, 1, &f.d), AG_ERR_INVALID_ARGUMENT, "ag_function_apply");
  CHECK(y == SENT_T);
  CHECK(ag_function_ctx_num_saved(NULL) == -1);
  CHECK(ag_function_ctx_needs_input_grad(NULL, 0) == 0);
  CHECK_ERR(ag_function_def_init(NULL), AG_ERR_INVALID_ARGUMENT, "ag_function_def_init");
  CHECK_INIT_GIVES(ag_function_def, ag_function_def_init, 0xCD, AG_FUNCTION_DEF_INIT);
  teardown(&f);
}

int main(int argc, char **argv) {
  h_init(argc, argv);
  RUN(test_cube_first_and_second_order);
  RUN(test_no_graph_destroys_at_once);
  RUN(test_two_inputs_two_outputs);
  RUN(test_saved_output_no_cycle_and_double_backward);
  RUN(test_once_differentiable);
  RUN(test_mark_dirty);
  RUN(test_saved_input_modified);
  RUN(test_failing_forward);
  RUN(test_failing_backward_and_wrong_shape);
  RUN(test_ctx_misuse_and_bad_arguments);
  return h_finish();
}
