/*
 * tests/c_api/test_functional_gradcheck.c - ag_gradcheck and ag_gradgradcheck
 * (ag/functional.h): passing on correct functions (ops, custom functions,
 * non-contiguous and broadcast inputs), failing at the right worst element on
 * custom functions whose first or second derivative is wrong, tolerances, a
 * short result struct, callback failures and bad arguments.
 */
#include "functional_fns.h"

static const int64_t s2[1] = {2}, s3[1] = {3};

/* ---- gradcheck --------------------------------------------------------------- */

typedef struct {
  double factor;      /* backward multiplies its gradient by this */
  int detach_saved;   /* backward uses a detached x: the second derivative is lost */
} cube_cfg;

static ag_status cube_forward(void *p, ag_function_ctx *ctx, const ag_tensor *const *in, int32_t n,
                              ag_tensor **out, int32_t m) {
  (void)p;
  if (n != 1 || m != 1)
    return AG_ERR_INTERNAL;
  if (ag_op_pow_scalar(&out[0], in[0], 3.0) != AG_OK)
    return AG_ERR_INTERNAL;
  return ag_function_ctx_save_for_backward(ctx, in, 1);
}

/* 3 x^2 g * factor, written with ag ops */
static ag_status cube_backward(void *p, ag_function_ctx *ctx, const ag_tensor *const *g, int32_t n,
                               ag_tensor **gi, int32_t m) {
  const cube_cfg *cfg = (const cube_cfg *)p;
  ag_tensor *x = NULL, *xd = NULL, *x2 = NULL, *k = NULL, *t = NULL;
  ag_context *c = NULL;
  ag_status st;
  if (n != 1 || m != 1)
    return AG_ERR_INTERNAL;
  st = ag_function_ctx_saved_tensor(&x, ctx, 0);
  if (st != AG_OK)
    return st;
  if (cfg->detach_saved) {
    st = ag_tensor_detach(&xd, x);
  } else {
    xd = ag_tensor_retain(x);
  }
  if (st == AG_OK)
    st = ag_tensor_context(&c, x);
  if (st == AG_OK)
    st = ag_tensor_scalar(&k, c, AG_F64, 3.0 * cfg->factor);
  ag_context_release(c);
  if (st == AG_OK)
    st = ag_op_mul(&x2, xd, xd);
  if (st == AG_OK)
    st = ag_op_mul(&t, x2, k);
  if (st == AG_OK)
    st = ag_op_mul(&gi[0], t, g[0]);
  ag_tensor_release(x);
  ag_tensor_release(xd);
  ag_tensor_release(x2);
  ag_tensor_release(k);
  ag_tensor_release(t);
  return st;
}

static ag_status fn_custom_cube(void *ud, const ag_tensor *const *in, int32_t n, ag_tensor **out, int32_t m) {
  ag_function_def d = AG_FUNCTION_DEF_INIT;
  d.name = "CubeBackward";
  d.forward = cube_forward;
  d.backward = cube_backward;
  d.user_data = ud;
  (void)n;
  return ag_function_apply(out, m, in, 1, &d);
}

/* The gradient of sum(x^3), taken inside fn with create_graph: 3 x^2. */
static ag_status fn_grad_inside(void *ud, const ag_tensor *const *in, int32_t n, ag_tensor **out, int32_t m) {
  ag_tensor *y = NULL;
  const ag_tensor *roots[1];
  ag_grad_options o = AG_GRAD_OPTIONS_INIT;
  ag_status st;
  if (n != 1 || m != 1)
    return AG_ERR_INTERNAL;
  st = fn_sum_cube(ud, in, 1, &y, 1);
  if (st != AG_OK)
    return st;
  roots[0] = y;
  o.create_graph = 1;
  st = ag_grad(out, roots, NULL, 1, in, 1, &o);
  ag_tensor_release(y);
  return st;
}

/* fn may take gradients itself: grad mode is on in every call, also the perturbed ones. */
static void test_gradcheck_of_a_gradient(void) {
  ag_context *ctx = NEW_CTX();
  double xv[3] = {0.5, -2, 1}, six_x[3];
  ag_tensor *x, *jac[1] = {NULL};
  const ag_tensor *ins[1];
  ag_gradcheck_result r = AG_GRADCHECK_RESULT_INIT;
  int i;
  REQUIRE(ctx);
  for (i = 0; i < 3; i++)
    six_x[i] = 6 * xv[i];
  x = LEAF(ctx, AG_F64, s3, 1, xv);
  ins[0] = x;
  REQUIRE_OK(ag_gradcheck(&r, fn_grad_inside, NULL, ins, 1, 1, NULL));
  CHECK(r.passed == 1 && r.num_compared == 9);
  REQUIRE_OK(ag_gradgradcheck(&r, fn_grad_inside, NULL, ins, 1, NULL, 1, NULL));
  CHECK(r.passed == 1);
  REQUIRE_OK(ag_jacobian(jac, fn_grad_inside, NULL, ins, 1, 1, NULL));
  {
    double want[9] = {0};
    for (i = 0; i < 3; i++)
      want[i * 4] = six_x[i];
    CHECK_VALUES(jac[0], want, 9, 1e-12);
  }
  release_all(jac, 1);
  REL(x);
  ag_context_release(ctx);
}

static void test_gradcheck_passes_on_correct_functions(void) {
  ag_context *ctx = NEW_CTX();
  const double *av = mixed_a, *xv = mixed_x;
  int64_t s33[2] = {3, 3};
  ag_tensor *a, *x;
  const ag_tensor *ins[2];
  ag_gradcheck_result r = AG_GRADCHECK_RESULT_INIT;
  cube_cfg good = {1.0, 0};
  REQUIRE(ctx);
  a = LEAF(ctx, AG_F64, s33, 2, av);
  x = LEAF(ctx, AG_F64, s3, 1, xv);
  ins[0] = a;
  ins[1] = x;
  REQUIRE_OK(ag_gradcheck(&r, fn_mixed, NULL, ins, 2, 1, NULL));
  CHECK(r.passed == 1);
  CHECK(r.num_compared == 3 * 9 + 3 * 3);
  CHECK(r.input_index >= 0 && r.output_index == 0);
  CHECK_NEAR(r.analytical, r.numerical, 1e-3, 1e-5);
  /* the caller's tensors are not touched: no .grad, same version */
  CHECK_NO_GRAD(x);
  REQUIRE_OK(ag_gradgradcheck(&r, fn_mixed, NULL, ins, 2, NULL, 1, NULL));
  CHECK(r.passed == 1);
  ins[0] = x;
  REQUIRE_OK(ag_gradcheck(&r, fn_custom_cube, &good, ins, 1, 1, NULL));
  CHECK(r.passed == 1);
  REQUIRE_OK(ag_gradgradcheck(&r, fn_custom_cube, &good, ins, 1, NULL, 1, NULL));
  CHECK(r.passed == 1);
  CHECK(r.num_compared == 2 * 3 * 3); /* (x, v) -> d/dx: 3 x 3 elements for each of x and v */
  REL(a);
  REL(x);
  ag_context_release(ctx);
}

/* A @ cube(x), with the custom cube: the worst element of a backward off by
 * a factor is where |A[p, q] 3 x[q]^2| is largest, telling apart the output
 * and the input element. */
static ag_status fn_matvec_custom_cube(void *ud, const ag_tensor *const *in, int32_t n, ag_tensor **out, int32_t m) {
  ag_tensor *c = NULL;
  ag_status st;
  if (n != 2 || m != 1)
    return AG_ERR_INTERNAL;
  st = fn_custom_cube(ud, in + 1, 1, &c, 1);
  if (st != AG_OK)
    return st;
  st = ag_op_matmul(&out[0], in[0], c);
  ag_tensor_release(c);
  return st;
}

/* r reports a failure whose worst element is the derivative of element
 * output_element of output output_index by element input_element of input
 * input_index. */
static void check_failed_at(const ag_gradcheck_result *r, int32_t input_index, int64_t input_element,
                            int32_t output_index, int64_t output_element) {
  CHECK(r->passed == 0);
  CHECK(r->input_index == input_index);
  CHECK(r->input_element == input_element);
  CHECK(r->output_index == output_index);
  CHECK(r->output_element == output_element);
}

/* ag_gradcheck of fn, whose custom cube's backward is off by a factor 2, at
 * x = (0.5, -2, 1) (input x_index of the two) and `other` (the other input:
 * it requires no grad, so it is passed through, not checked). 0 (recorded)
 * if that cannot be run; everything is released. */
static int gradcheck_wrong_backward(ag_gradcheck_result *r, ag_fn fn, int x_index, const int64_t *other_shape,
                                    int32_t other_ndim, const double *other_vals) {
  ag_context *ctx = NEW_CTX();
  double xv[3] = {0.5, -2, 1};
  ag_tensor *x, *other;
  const ag_tensor *ins[2];
  cube_cfg bad = {2.0, 0};
  int ok;
  if (!ctx)
    return 0;
  other = F64(ctx, other_shape, other_ndim, other_vals);
  x = LEAF(ctx, AG_F64, s3, 1, xv);
  ins[x_index] = x;
  ins[1 - x_index] = other;
  ok = CHECK_OK(ag_gradcheck(r, fn, &bad, ins, 2, 1, NULL));
  REL(x);
  REL(other);
  ag_context_release(ctx);
  return ok;
}

static void test_gradcheck_finds_wrong_backward_off_diagonal(void) {
  double av[6] = {1, 0, 0, 0, 0, 5};
  int64_t s23[2] = {2, 3};
  ag_gradcheck_result r = AG_GRADCHECK_RESULT_INIT;
  REQUIRE(gradcheck_wrong_backward(&r, fn_matvec_custom_cube, 1, s23, 2, av));
  check_failed_at(&r, 1, 2, 0, 1);
  CHECK_CLOSE(r.analytical, 30.0, 1e-9);
  CHECK_CLOSE(r.numerical, 15.0, 1e-5);
  CHECK(r.num_compared == 6);
}

/* A backward off by a factor 2: the worst element is where 3 x^2 is largest. */
static void test_gradcheck_finds_wrong_backward(void) {
  double c[2] = {0.25, 0.75};
  ag_gradcheck_result r = AG_GRADCHECK_RESULT_INIT;
  REQUIRE(gradcheck_wrong_backward(&r, fn_custom_cube, 0, s2, 1, c));
  check_failed_at(&r, 0, 1, 0, 1);
  CHECK_CLOSE(r.analytical, 24.0, 1e-9);
  CHECK_CLOSE(r.numerical, 12.0, 1e-5);
  CHECK(r.num_compared == 9);
}

/* Right first derivative, wrong second (backward detaches x): gradcheck
 * passes, gradgradcheck fails where |6 x v| is largest. */
static void test_gradgradcheck_finds_wrong_double_backward(void) {
  ag_context *ctx = NEW_CTX();
  double xv[3] = {0.5, -2, 1}, vv[3] = {1, 1, 1};
  ag_tensor *x, *v;
  const ag_tensor *ins[1], *gos[1];
  ag_gradcheck_result r = AG_GRADCHECK_RESULT_INIT;
  cube_cfg detached = {1.0, 1};
  REQUIRE(ctx);
  x = LEAF(ctx, AG_F64, s3, 1, xv);
  v = F64(ctx, s3, 1, vv);
  ins[0] = x;
  gos[0] = v;
  REQUIRE_OK(ag_gradcheck(&r, fn_custom_cube, &detached, ins, 1, 1, NULL));
  CHECK(r.passed == 1);
  REQUIRE_OK(ag_gradgradcheck(&r, fn_custom_cube, &detached, ins, 1, gos, 1, NULL));
  /* input 0 is x, not grad_outputs[0]; output 0 the gradient with respect to inputs[0] */
  check_failed_at(&r, 0, 1, 0, 1);
  CHECK_CLOSE(r.analytical, 0.0, 0);
  CHECK_CLOSE(r.numerical, -12.0, 1e-5);
  REL(x);
  REL(v);
  ag_context_release(ctx);
}

static void test_gradcheck_tolerances_and_partial_result(void) {
  ag_context *ctx = NEW_CTX();
  double xv[3] = {0.5, -2, 1};
  ag_tensor *x;
  const ag_tensor *ins[1];
  ag_gradcheck_options o = AG_GRADCHECK_OPTIONS_INIT;
  ag_gradcheck_result r = AG_GRADCHECK_RESULT_INIT;
  struct {
    uint32_t struct_size;
    int32_t passed;
    int32_t input_index;
    int32_t canary;
  } small;
  cube_cfg slightly_off = {1.0001, 0};
  REQUIRE(ctx);
  x = LEAF(ctx, AG_F64, s3, 1, xv);
  ins[0] = x;
  /* 1e-4 relative error: within rtol 1e-3 of the defaults ... */
  REQUIRE_OK(ag_gradcheck(&r, fn_custom_cube, &slightly_off, ins, 1, 1, NULL));
  CHECK(r.passed == 1);
  /* ... but not within rtol 1e-5 */
  o.rtol = 1e-5;
  o.atol = 1e-12;
  REQUIRE_OK(ag_gradcheck(&r, fn_custom_cube, &slightly_off, ins, 1, 1, &o));
  CHECK(r.passed == 0);
  CHECK(r.input_index == 0 && r.input_element == r.output_element);
  CHECK_NEAR(r.analytical, 1.0001 * 3 * xv[r.input_element] * xv[r.input_element], 1e-12, 0);
  /* an older, shorter result struct: only its fields are written */
  small.struct_size = 12;
  small.passed = 7;
  small.input_index = 7;
  small.canary = 12345;
  REQUIRE_OK(ag_gradcheck((ag_gradcheck_result *)(void *)&small, fn_custom_cube, &slightly_off, ins, 1, 1, &o));
  CHECK(small.struct_size == 12);
  CHECK(small.passed == 0);
  CHECK(small.input_index == 0);
  CHECK(small.canary == 12345);
  REL(x);
  ag_context_release(ctx);
}

/* ---- failures ------------------------------------------------------------------ */

static void test_gradcheck_callback_failures(void) {
  ag_context *ctx = NEW_CTX();
  double xv[3] = {1, 2, 3};
  ag_tensor *x;
  const ag_tensor *ins[1];
  ag_gradcheck_result res = AG_GRADCHECK_RESULT_INIT;
  misuse s;
  REQUIRE(ctx);
  x = LEAF(ctx, AG_F64, s3, 1, xv);
  ins[0] = x;
  /* a failure in a later (perturbed) call, and an output that changes shape */
  memset(&s, 0, sizeof s);
  s.fail_at = 4;
  res.passed = 42;
  CHECK_ERR(ag_gradcheck(&res, fn_misbehaving, &s, ins, 1, 1, NULL), AG_ERR_CALLBACK, "ag_gradcheck");
  CHECK_MSG_HAS("the model diverged");
  CHECK(res.passed == 42);
  memset(&s, 0, sizeof s);
  s.grow_at = 2;
  CHECK_ERR(ag_gradcheck(&res, fn_misbehaving, &s, ins, 1, 1, NULL), AG_ERR_CALLBACK, "ag_gradcheck");
  CHECK_MSG_HAS("fn returned outputs[0] of shape (6) for a perturbed input, and of shape (3) before");
  REL(x);
  ag_context_release(ctx);
}

static void test_gradcheck_bad_arguments(void) {
  ag_context *ctx = NEW_CTX();
  double xv[3] = {1, 2, 3};
  int64_t s4[1] = {4};
  ag_tensor *x, *xf, *wrong;
  const ag_tensor *ins[1], *vs[1];
  ag_gradcheck_options go = AG_GRADCHECK_OPTIONS_INIT;
  ag_gradcheck_result res = AG_GRADCHECK_RESULT_INIT;
  REQUIRE(ctx);
  x = LEAF(ctx, AG_F64, s3, 1, xv);
  xf = MAKE(ctx, AG_F32, s3, 1, xv);
  wrong = F64(ctx, s4, 1, NULL);
  ins[0] = x;
  CHECK_ERR(ag_gradcheck(NULL, fn_cube, NULL, ins, 1, 1, NULL), AG_ERR_INVALID_ARGUMENT, "ag_gradcheck");
  CHECK_MSG_HAS("result is NULL");
  res.struct_size = 0;
  CHECK_ERR(ag_gradcheck(&res, fn_cube, NULL, ins, 1, 1, NULL), AG_ERR_INVALID_ARGUMENT, "ag_gradcheck");
  CHECK_MSG_HAS("result->struct_size 0 is too small");
  res.struct_size = sizeof res;
  go.eps = -1;
  CHECK_ERR(ag_gradcheck(&res, fn_cube, NULL, ins, 1, 1, &go), AG_ERR_INVALID_ARGUMENT, "ag_gradcheck");
  CHECK_MSG_HAS("opts->eps is -1; it must be finite and >= 0 (0: default)");
  go.eps = 0;
  go.atol = NAN;
  CHECK_ERR(ag_gradcheck(&res, fn_cube, NULL, ins, 1, 1, &go), AG_ERR_INVALID_ARGUMENT, "ag_gradcheck");
  CHECK_MSG_HAS("opts->atol is nan");
  go.atol = 0;
  go.reserved = 1;
  CHECK_ERR(ag_gradgradcheck(&res, fn_cube, NULL, ins, 1, NULL, 1, &go), AG_ERR_INVALID_ARGUMENT,
            "ag_gradgradcheck");
  CHECK_MSG_HAS("opts->reserved is 1; it must be 0");
  ins[0] = wrong; /* requires no grad */
  CHECK_ERR(ag_gradcheck(&res, fn_cube, NULL, ins, 1, 1, NULL), AG_ERR_INVALID_ARGUMENT, "ag_gradcheck");
  CHECK_MSG_HAS("no input requires grad");
  REQUIRE_OK(ag_tensor_requires_grad(xf, 1));
  ins[0] = xf;
  CHECK_ERR(ag_gradcheck(&res, fn_cube, NULL, ins, 1, 1, NULL), AG_ERR_DTYPE, "ag_gradcheck");
  CHECK_MSG_HAS("inputs[0] requires grad and has dtype f32; checked inputs must be f64");
  ins[0] = x;
  vs[0] = wrong;
  CHECK_ERR(ag_gradgradcheck(&res, fn_cube, NULL, ins, 1, vs, 1, NULL), AG_ERR_SHAPE, "ag_gradgradcheck");
  CHECK_MSG_HAS("grad_outputs[0] has shape (4), outputs[0] has (3)");
  CHECK(res.passed == 0 && res.num_compared == 0); /* untouched */
  REL(x);
  REL(xf);
  REL(wrong);
  ag_context_release(ctx);
}

int main(int argc, char **argv) {
  h_init(argc, argv);
  RUN(test_gradcheck_passes_on_correct_functions);
  RUN(test_gradcheck_of_a_gradient);
  RUN(test_gradcheck_finds_wrong_backward);
  RUN(test_gradcheck_finds_wrong_backward_off_diagonal);
  RUN(test_gradgradcheck_finds_wrong_double_backward);
  RUN(test_gradcheck_tolerances_and_partial_result);
  RUN(test_gradcheck_callback_failures);
  RUN(test_gradcheck_bad_arguments);
  return h_finish();
}
