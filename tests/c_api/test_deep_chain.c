/*
 * tests/c_api/test_deep_chain.c - a 1,000,000-op chain: backward gives the
 * closed-form gradients, and the graph is freed (with and without backward)
 * on a thread with a 256 KiB stack, which proves that neither backward nor
 * teardown recurses along the chain.
 *
 * The chain, for i = 0 .. N-1:  y = (i % 10 == 9) ? y + b : y * a,  y_0 = x,
 * with 0-dim f64 leaves x = 1, a = 1 - 1e-7, b = 1e-3. With K = N/10 adds and
 * M = N - K muls, the k-th add (k = 1..K) is followed by 9(K-k) muls, so
 *   y      = x a^M + b S0,          S0 = sum_{j=0}^{K-1} a^{9j}
 *   dy/dx  = a^M
 *   dy/db  = S0 = (1 - a^{9K}) / (1 - a^9)
 *   dy/da  = M x a^{M-1} + (9 b / a) S1,   S1 = sum_{j=0}^{K-1} j a^{9j}
 *          = r (1 - K r^{K-1} + (K-1) r^K) / (1-r)^2 with r = a^9.
 *
 * AG_DEEP_CHAIN_N (a multiple of 10) overrides N for quick local runs.
 */
#include "harness.h"

#include <pthread.h>

#define SMALL_STACK (256 * 1024)

static long chain_n(void) {
  const char *e = getenv("AG_DEEP_CHAIN_N");
  long n = e ? strtol(e, NULL, 10) : 0;
  if (n <= 0 || n % 10 != 0)
    n = 1000000;
  return n;
}

typedef struct {
  long n;
  int with_backward;
  int release_ctx_first;
  /* results, checked on the main thread after join */
  int done;          /* reached the end */
  ag_status status;  /* first failing status */
  char where[64];    /* which call failed */
  char message[512]; /* its ag_last_error_message() */
  double y, gx, ga, gb;
  long built;
} chain_job;

static int job_fail(chain_job *j, const char *where, ag_status st) {
  if (j->status == AG_OK) {
    j->status = st;
    snprintf(j->where, sizeof j->where, "%s", where);
    h_save_message(j->message, sizeof j->message);
  }
  return 0;
}

#define JOB_OK(call, where)                 \
  do {                                      \
    ag_status st_ = (call);                 \
    if (st_ != AG_OK) {                     \
      job_fail(j, where, st_);              \
      goto cleanup;                         \
    }                                       \
  } while (0)

/* The one element of the gradient of `leaf` (named `name`) into *out; 0, with
 * the failure recorded in j, if any step fails. */
static int job_grad_item(chain_job *j, const ag_tensor *leaf, const char *name, double *out) {
  char where[64];
  ag_tensor *g = NULL;
  ag_status st = ag_tensor_grad(&g, leaf);
  if (st != AG_OK) {
    snprintf(where, sizeof where, "grad %s", name);
    return job_fail(j, where, st);
  }
  if (!g) {
    snprintf(where, sizeof where, "grad %s is NULL", name);
    return job_fail(j, where, AG_ERR_INTERNAL);
  }
  st = ag_tensor_item(g, out);
  if (st != AG_OK) {
    snprintf(where, sizeof where, "item grad %s", name);
    job_fail(j, where, st);
  }
  ag_tensor_release(g);
  return st == AG_OK;
}

static void *chain_thread(void *arg) {
  chain_job *j = (chain_job *)arg;
  ag_context_options o = AG_CONTEXT_OPTIONS_INIT;
  ag_context *ctx = NULL;
  ag_tensor *x = NULL, *a = NULL, *b = NULL, *y = NULL;
  long i;
  o.num_threads = 1; /* everything runs on this (small-stack) thread */
  JOB_OK(ag_context_create(&ctx, &o), "ag_context_create");
  JOB_OK(ag_tensor_scalar(&x, ctx, AG_F64, 1.0), "scalar x");
  JOB_OK(ag_tensor_scalar(&a, ctx, AG_F64, 1.0 - 1e-7), "scalar a");
  JOB_OK(ag_tensor_scalar(&b, ctx, AG_F64, 1e-3), "scalar b");
  JOB_OK(ag_tensor_requires_grad(x, 1), "requires_grad x");
  JOB_OK(ag_tensor_requires_grad(a, 1), "requires_grad a");
  JOB_OK(ag_tensor_requires_grad(b, 1), "requires_grad b");
  if (j->release_ctx_first) {
    ag_context_release(ctx);
    ctx = NULL;
  }
  y = ag_tensor_retain(x);
  for (i = 0; i < j->n; i++) {
    ag_tensor *next = NULL;
    ag_status st = (i % 10 == 9) ? ag_op_add(&next, y, b) : ag_op_mul(&next, y, a);
    if (st != AG_OK) {
      job_fail(j, (i % 10 == 9) ? "ag_op_add in the chain" : "ag_op_mul in the chain", st);
      goto cleanup;
    }
    ag_tensor_release(y); /* only the graph keeps the intermediate */
    y = next;
    j->built = i + 1;
  }
  JOB_OK(ag_tensor_item(y, &j->y), "item y");
  if (j->with_backward) {
    JOB_OK(ag_backward(y, NULL, NULL), "ag_backward");
    if (!job_grad_item(j, x, "x", &j->gx) || !job_grad_item(j, a, "a", &j->ga) ||
        !job_grad_item(j, b, "b", &j->gb))
      goto cleanup;
    /* free the chain root first, leaves after */
    ag_tensor_release(y);
    y = NULL;
  } else {
    /* free leaves first: the whole chain goes with the root, still un-walked */
    ag_tensor_release(x);
    ag_tensor_release(a);
    ag_tensor_release(b);
    x = a = b = NULL;
    ag_tensor_release(y);
    y = NULL;
  }
  j->done = 1;
cleanup:
  ag_tensor_release(y);
  ag_tensor_release(x);
  ag_tensor_release(a);
  ag_tensor_release(b);
  ag_context_release(ctx);
  return NULL;
}

static int run_small_stack(chain_job *j) {
  pthread_attr_t attr;
  pthread_t th;
  int ok = 1;
  if (!CHECK(pthread_attr_init(&attr) == 0))
    return 0;
  ok &= CHECK(pthread_attr_setstacksize(&attr, SMALL_STACK) == 0);
  if (ok)
    ok &= CHECK(pthread_create(&th, &attr, chain_thread, j) == 0);
  if (ok)
    ok &= CHECK(pthread_join(th, NULL) == 0);
  pthread_attr_destroy(&attr);
  return ok;
}

static void report_job(const chain_job *j) {
  if (j->status != AG_OK)
    printf("#   chain thread: %s failed with %s after %ld ops: \"%s\"\n", j->where,
           ag_status_name(j->status), j->built, j->message);
}

static void test_deep_chain_backward_small_stack(void) {
  chain_job j;
  long n = chain_n(), K = n / 10, M = n - K;
  double a = 1.0 - 1e-7, b = 1e-3, x = 1.0;
  double la = log1p(-1e-7);        /* log a */
  double r = exp(9 * la);          /* a^9 */
  double one_minus_r = -expm1(9 * la);
  double aM = exp((double)M * la);
  double S0 = -expm1(9.0 * (double)K * la) / one_minus_r;
  /* 1 - K r^(K-1) + (K-1) r^K, rewritten as (1 - r^K) - K r^(K-1) (1 - r) to limit cancellation */
  double S1 = r * (-expm1(9.0 * (double)K * la) -
                   (double)K * exp(9.0 * (double)(K - 1) * la) * one_minus_r) /
              (one_minus_r * one_minus_r);
  double want_y = x * aM + b * S0;
  double want_gx = aM;
  double want_gb = S0;
  double want_ga = (double)M * x * exp((double)(M - 1) * la) + 9.0 * b / a * S1;
  {
    /* cross-check the closed forms against plain sums (long double, which is
     * only double under valgrind: hence the loose tolerance) */
    long double rl = powl(1.0L - 1e-7L, 9), p = 1.0L, s0 = 0.0L, s1 = 0.0L;
    long k;
    for (k = 0; k < K; k++) {
      s0 += p;
      s1 += (long double)k * p;
      p *= rl;
    }
    CHECK_NEAR(S0, (double)s0, 1e-9, 0);
    CHECK_NEAR(S1, (double)s1, 1e-9, 0);
  }
  memset(&j, 0, sizeof j);
  j.n = n;
  j.with_backward = 1;
  printf("# chain of %ld ops: y=%.17g dy/dx=%.17g dy/da=%.17g dy/db=%.17g expected\n", n, want_y,
         want_gx, want_ga, want_gb);
  REQUIRE(run_small_stack(&j));
  report_job(&j);
  CHECK(j.status == AG_OK);
  CHECK(j.built == n);
  REQUIRE(j.done);
  CHECK_NEAR(j.y, want_y, 1e-8, 0);
  CHECK_NEAR(j.gx, want_gx, 1e-8, 0);
  CHECK_NEAR(j.gb, want_gb, 1e-8, 0);
  CHECK_NEAR(j.ga, want_ga, 1e-8, 0);
}

static void test_deep_chain_free_without_backward_small_stack(void) {
  chain_job j;
  memset(&j, 0, sizeof j);
  j.n = chain_n();
  j.with_backward = 0;
  REQUIRE(run_small_stack(&j));
  report_job(&j);
  CHECK(j.status == AG_OK);
  CHECK(j.built == j.n);
  CHECK(j.done);
  CHECK(isfinite(j.y) && j.y > 0);
}

/* The same without backward, with the caller's context reference dropped first:
 * the context goes with the last tensor of the chain. */
static void test_deep_chain_context_released_first(void) {
  chain_job j;
  memset(&j, 0, sizeof j);
  j.n = chain_n() / 10;
  j.with_backward = 0;
  j.release_ctx_first = 1;
  REQUIRE(run_small_stack(&j));
  report_job(&j);
  CHECK(j.status == AG_OK);
  CHECK(j.done);
}

int main(int argc, char **argv) {
  h_init(argc, argv);
  RUN(test_deep_chain_backward_small_stack);
  RUN(test_deep_chain_free_without_backward_small_stack);
  RUN(test_deep_chain_context_released_first);
  return h_finish();
}
