/*
 * Threads a context starts: none for num_threads = 1 (an embedding host's
 * frame loop must not gain threads), workers for num_threads = 2. Counted
 * from /proc/self/status, so this test is Linux-only and runs in its own
 * process before anything else created a context.
 */
#include "harness.h"

static long thread_count(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long n = -1;
  if (!f) return -1;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "Threads:", 8) == 0) n = strtol(line + 8, NULL, 10);
  }
  fclose(f);
  return n;
}

/* Large enough for every parallel path: elementwise, broadcast, sum, backward. */
static void run_parallel_sized_work(ag_context *ctx) {
  int64_t n = (int64_t)1 << 21;
  ag_tensor *x = NULL, *s = NULL, *y = NULL, *t = NULL, *loss = NULL;
  REQUIRE_OK(ag_tensor_full(&x, ctx, AG_F32, &n, 1, 0.5));
  REQUIRE_OK(ag_tensor_scalar(&s, ctx, AG_F32, 2.0));
  REQUIRE_OK(ag_tensor_requires_grad(x, 1));
  REQUIRE_OK(ag_op_mul(&y, x, s));
  REQUIRE_OK(ag_op_tanh(&t, y));
  REQUIRE_OK(ag_op_sum(&loss, t));
  REQUIRE_OK(ag_backward(loss, NULL, NULL));
  CHECK_CLOSE(ITEM(loss), (double)n * tanh(1.0), 1e-3 * (double)n);
  REL(loss);
  REL(t);
  REL(y);
  REL(s);
  REL(x);
}

static void test_one_thread_context_starts_no_thread(void) {
  const long before = thread_count();
  REQUIRE(before > 0);
  ag_context *ctx = NEW_CTX_THREADS(1);
  run_parallel_sized_work(ctx);
  CHECK(thread_count() == before);
  ag_context_release(ctx);
  CHECK(thread_count() == before);
}

/* The counter sees workers when there are some, so the test above can fail. */
static void test_two_thread_context_starts_workers(void) {
  const long before = thread_count();
  ag_context *ctx = NEW_CTX_THREADS(2);
  run_parallel_sized_work(ctx);
  CHECK(thread_count() > before);
  ag_context_release(ctx);
}

int main(int argc, char **argv) {
  h_init(argc, argv);
  RUN(test_one_thread_context_starts_no_thread);
  RUN(test_two_thread_context_starts_workers);
  return h_finish();
}
