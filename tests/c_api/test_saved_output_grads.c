/*
 * Backward of the ops that save their output and whose gradient is one
 * kernel of (g, y): tanh, sigmoid, relu, exp. Outside a recorded pass the
 * node writes dx into g's buffer straight from the saved output's elements;
 * recorded (create_graph) or with a post hook on the node it goes through
 * its formula. Both must give the same bits, and the closed form within
 * rounding, for a scalar, a short vector and a tensor above the parallel
 * grain (in chunks, at 1 and 2 threads), in f32 and f64.
 */
#include "harness.h"

#include <string.h>

#include "ag/ag.h"

enum { OP_TANH, OP_SIGMOID, OP_RELU, OP_EXP, OP_COUNT };
static const char *const k_names[OP_COUNT] = {"tanh", "sigmoid", "relu", "exp"};

static ag_status apply_op(int op, ag_tensor **y, ag_tensor *x) {
  switch (op) {
    case OP_TANH: return ag_op_tanh(y, x);
    case OP_SIGMOID: return ag_op_sigmoid(y, x);
    case OP_RELU: return ag_op_relu(y, x);
    default: return ag_op_exp(y, x);
  }
}

/* dx / g at output y (relu: 0 where y <= 0). */
static double closed_form(int op, double y) {
  switch (op) {
    case OP_TANH: return 1.0 - y * y;
    case OP_SIGMOID: return y * (1.0 - y);
    case OP_RELU: return y > 0.0 ? 1.0 : 0.0;
    default: return y;
  }
}

static double *values(int64_t n, uint32_t seed, double lo, double hi) {
  double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
  uint32_t s = seed * 2654435761u + 1u;
  for (int64_t i = 0; i < n; ++i) {
    s = s * 1664525u + 1013904223u;
    v[i] = lo + (hi - lo) * (double)(s >> 8) / (double)(1u << 24);
  }
  if (n > 2) v[1] = 0.0; /* relu's kink */
  return v;
}

static ag_tensor *tensor_of(ag_context *ctx, ag_dtype dt, const double *v, int64_t n, int ndim) {
  ag_tensor *t = NULL, *c = NULL;
  if (ag_tensor_create(&t, ctx, AG_F64, &n, ndim, v) != AG_OK) return NULL;
  if (ag_op_cast(&c, t, dt) != AG_OK) c = NULL;
  ag_tensor_release(t);
  return c;
}

static ag_status no_change(void *user, ag_tensor **grads, int32_t ng, const ag_tensor *const *other, int32_t no) {
  (void)grads, (void)ng, (void)other, (void)no;
  ++*(int *)user;
  return AG_OK;
}

enum { PLAIN, RECORDED, HOOKED };

/* x.grad of loss = sum(op(x) * w) by one backward of the given kind, into
 * out (n elements of dt); also y = op(x) into y_out when not NULL. */
static int grad_of(ag_context *ctx, ag_dtype dt, int op, const double *xv, const double *wv, int64_t n, int ndim,
                   int kind, void *out, void *y_out) {
  const size_t item = dt == AG_F64 ? 8 : 4;
  int ok = 0, hook_runs = 0;
  ag_tensor *x = tensor_of(ctx, dt, xv, n, ndim), *w = tensor_of(ctx, dt, wv, n, ndim);
  ag_tensor *y = NULL, *p = NULL, *loss = NULL, *g = NULL;
  if (!x || !w || ag_tensor_requires_grad(x, 1) != AG_OK) goto done;
  if (apply_op(op, &y, x) != AG_OK || ag_op_mul(&p, y, w) != AG_OK || ag_op_sum(&loss, p) != AG_OK) goto done;
  if (kind == HOOKED && ag_tensor_register_node_post_hook(NULL, y, no_change, &hook_runs, NULL) != AG_OK) goto done;
  ag_backward_options o = AG_BACKWARD_OPTIONS_INIT;
  o.create_graph = kind == RECORDED;
  if (ag_backward(loss, NULL, &o) != AG_OK || ag_tensor_grad(&g, x) != AG_OK || !g) goto done;
  if (ag_tensor_copy_data(g, out, (size_t)n * item) != AG_OK) goto done;
  if (y_out && ag_tensor_copy_data(y, y_out, (size_t)n * item) != AG_OK) goto done;
  ok = kind != HOOKED || hook_runs == 1;
done:
  ag_tensor_release(g);
  ag_tensor_release(loss);
  ag_tensor_release(p);
  ag_tensor_release(y);
  ag_tensor_release(w);
  if (x) ag_tensor_set_grad(x, NULL);
  ag_tensor_release(x);
  return ok;
}

static void check_op(ag_dtype dt, int op, int64_t n, int ndim, int threads) {
  ag_context_options co = AG_CONTEXT_OPTIONS_INIT;
  co.num_threads = threads;
  ag_context *ctx = NULL;
  REQUIRE_OK(ag_context_create(&ctx, &co));
  const size_t item = dt == AG_F64 ? 8 : 4, bytes = (size_t)n * item;
  double *xv = values(n, 7 + (uint32_t)op, op == OP_EXP ? -3.0 : -2.5, 2.5), *wv = values(n, 3, -1.0, 1.0);
  char *plain = malloc(bytes), *rec = malloc(bytes), *hooked = malloc(bytes), *y = malloc(bytes);
  const int ran = grad_of(ctx, dt, op, xv, wv, n, ndim, PLAIN, plain, y) &&
                  grad_of(ctx, dt, op, xv, wv, n, ndim, RECORDED, rec, NULL) &&
                  grad_of(ctx, dt, op, xv, wv, n, ndim, HOOKED, hooked, NULL);
  if (CHECK(ran)) {
    if (!CHECK(memcmp(plain, rec, bytes) == 0) || !CHECK(memcmp(plain, hooked, bytes) == 0)) {
      printf("# %s, n = %lld, %d thread(s): the paths differ\n", k_names[op], (long long)n, threads);
    }
    /* The closed form, from the output the forward gave (w is exact in f32). */
    int bad = 0;
    const double rtol = dt == AG_F64 ? 1e-15 : 1e-6;
    for (int64_t i = 0; i < n && bad < 3; ++i) {
      const double yi = dt == AG_F64 ? ((double *)y)[i] : ((float *)y)[i];
      const double got = dt == AG_F64 ? ((double *)plain)[i] : ((float *)plain)[i];
      const double want = wv[i] * closed_form(op, yi);
      if (!(fabs(got - want) <= rtol * (fabs(wv[i]) + fabs(want)) + 1e-300)) {
        ++bad;
        printf("# %s[%lld]: %.17g, closed form %.17g\n", k_names[op], (long long)i, got, want);
      }
    }
    CHECK(bad == 0);
  }
  free(plain);
  free(rec);
  free(hooked);
  free(y);
  free(xv);
  free(wv);
  ag_context_release(ctx);
}

static void test_scalar(ag_dtype dt) {
  for (int op = 0; op < OP_COUNT; ++op) check_op(dt, op, 1, 0, 1);
}

static void test_short_vector(ag_dtype dt) {
  for (int op = 0; op < OP_COUNT; ++op) check_op(dt, op, 16, 1, 1);
}

/* Above every grain: chunks, on one thread and on two. */
static void test_chunked(ag_dtype dt) {
  for (int op = 0; op < OP_COUNT; ++op) {
    check_op(dt, op, 100003, 1, 1);
    check_op(dt, op, 100003, 1, 2);
  }
}

/* A graph walked twice (retain_graph) reads the same saved output twice;
 * a write into it after the forward fails the second walk as it fails the
 * first (test_autograd_versions: the version is checked on this path too). */
static void test_retained_graph_walked_twice(ag_dtype dt) {
  ag_context *ctx = NULL;
  REQUIRE_OK(ag_context_create(&ctx, NULL));
  const double xv[3] = {-0.7, 0.2, 1.3};
  ag_tensor *x = tensor_of(ctx, dt, xv, 3, 1), *y = NULL, *s = NULL, *g = NULL, *g64 = NULL;
  REQUIRE(x != NULL);
  CHECK_OK(ag_tensor_requires_grad(x, 1));
  CHECK_OK(ag_op_tanh(&y, x));
  CHECK_OK(ag_op_sum(&s, y));
  ag_backward_options o = AG_BACKWARD_OPTIONS_INIT;
  o.retain_graph = 1;
  CHECK_OK(ag_backward(s, NULL, &o));
  CHECK_OK(ag_backward(s, NULL, NULL));
  CHECK_OK(ag_tensor_grad(&g, x));
  double got[3];
  if (g && CHECK_OK(ag_op_cast(&g64, g, AG_F64)) && CHECK_OK(ag_tensor_copy_data(g64, got, sizeof got))) {
    for (int i = 0; i < 3; ++i) {
      const double t = tanh(xv[i]);
      CHECK_CLOSE(got[i], 2.0 * (1.0 - t * t), dt == AG_F64 ? 1e-14 : 1e-6);
    }
  }
  ag_tensor_release(g64);
  ag_tensor_release(g);
  ag_tensor_release(s);
  ag_tensor_release(y);
  ag_tensor_release(x);
  ag_context_release(ctx);
}

int main(int argc, char **argv) {
  h_init(argc, argv);
  RUN_F64_F32(test_scalar);
  RUN_F64_F32(test_short_vector);
  RUN_F64_F32(test_chunked);
  RUN_F64_F32(test_retained_graph_walked_twice);
  return h_finish();
}
