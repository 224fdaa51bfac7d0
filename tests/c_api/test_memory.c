/* Memory statistics, the storage cache and trim, through the C API. */
#include "harness.h"

static ag_context *make_ctx(void) {
  ag_context *ctx = NULL;
  ag_context_options o = AG_CONTEXT_OPTIONS_INIT;
  o.num_threads = 1;
  CHECK_OK(ag_context_create(&ctx, &o));
  return ctx;
}

static void test_init_matches_macro(void) {
  CHECK_INIT_GIVES(ag_memory_stats, ag_memory_stats_init, 0xAB, AG_MEMORY_STATS_INIT);
  CHECK_STATUS(ag_memory_stats_init(NULL), AG_ERR_INVALID_ARGUMENT);
}

static void test_in_use_cache_and_trim(void) {
  ag_context *ctx = make_ctx();
  ag_memory_stats s = AG_MEMORY_STATS_INIT;
  CHECK_STATUS(ag_context_memory_stats(ctx, &s), AG_OK);
  CHECK(s.bytes_in_use == 0);
  CHECK(s.bytes_cached == 0);

  int64_t n = 1 << 20; /* 4 MiB of f32: a large block */
  ag_tensor *t = NULL;
  CHECK_STATUS(ag_tensor_zeros(&t, ctx, AG_F32, &n, 1), AG_OK);
  CHECK_STATUS(ag_context_memory_stats(ctx, &s), AG_OK);
  CHECK(s.bytes_in_use >= 4 * n);
  CHECK(s.peak_bytes_in_use >= s.bytes_in_use);
  const int64_t allocs = s.allocations;

  ag_tensor_release(t);
  CHECK_STATUS(ag_context_memory_stats(ctx, &s), AG_OK);
  CHECK(s.bytes_in_use == 0);
  CHECK(s.bytes_cached >= 4 * n); /* kept for reuse */
  CHECK(s.peak_bytes_in_use >= 4 * n);

  /* The same size again comes from the cache. */
  CHECK_STATUS(ag_tensor_zeros(&t, ctx, AG_F32, &n, 1), AG_OK);
  CHECK_STATUS(ag_context_memory_stats(ctx, &s), AG_OK);
  CHECK(s.allocations == allocs + 1);
  CHECK(s.cache_hits >= 1);
  CHECK(s.bytes_cached == 0);
  ag_tensor_release(t);

  CHECK_STATUS(ag_context_trim(ctx), AG_OK);
  CHECK_STATUS(ag_context_memory_stats(ctx, &s), AG_OK);
  CHECK(s.bytes_cached == 0);

  CHECK_STATUS(ag_context_reset_peak_memory(ctx), AG_OK);
  CHECK_STATUS(ag_context_memory_stats(ctx, &s), AG_OK);
  CHECK(s.peak_bytes_in_use == s.bytes_in_use);
  ag_context_release(ctx);
}

static void test_short_struct_is_respected(void) {
  ag_context *ctx = make_ctx();
  ag_memory_stats s;
  memset(&s, 0x5A, sizeof s);
  s.struct_size = 16; /* knows struct_size, reserved and bytes_in_use only */
  CHECK_STATUS(ag_context_memory_stats(ctx, &s), AG_OK);
  CHECK(s.bytes_in_use == 0);
  const unsigned char *tail = (const unsigned char *)&s + 16;
  int untouched = 1;
  for (size_t i = 0; i < sizeof s - 16; ++i) untouched = untouched && tail[i] == 0x5A;
  CHECK(untouched);
  s.struct_size = 0;
  CHECK_STATUS(ag_context_memory_stats(ctx, &s), AG_ERR_INVALID_ARGUMENT);
  CHECK(strstr(ag_last_error_message(), "[ag_context_memory_stats]") != NULL);
  CHECK_STATUS(ag_context_memory_stats(NULL, &s), AG_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(ag_context_memory_stats(ctx, NULL), AG_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(ag_context_trim(NULL), AG_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(ag_context_reset_peak_memory(NULL), AG_ERR_INVALID_ARGUMENT);
  ag_context_release(ctx);
}

/* A steady training-like loop reuses its blocks: no growth after the first iteration. */
static void test_steady_loop_stops_allocating_fresh_memory(void) {
  ag_context *ctx = make_ctx();
  int64_t n = 1 << 16;
  ag_tensor *x = NULL;
  CHECK_STATUS(ag_tensor_full(&x, ctx, AG_F32, &n, 1, 0.5), AG_OK);
  CHECK_STATUS(ag_tensor_requires_grad(x, 1), AG_OK);
  int64_t hits_before = 0, allocs_before = 0;
  for (int it = 0; it < 5; ++it) {
    ag_tensor *y = NULL, *s = NULL;
    CHECK_STATUS(ag_op_tanh(&y, x), AG_OK);
    CHECK_STATUS(ag_op_sum(&s, y), AG_OK);
    CHECK_STATUS(ag_backward(s, NULL, NULL), AG_OK);
    CHECK_STATUS(ag_tensor_set_grad(x, NULL), AG_OK);
    ag_tensor_release(s);
    ag_tensor_release(y);
    ag_memory_stats st = AG_MEMORY_STATS_INIT;
    CHECK_STATUS(ag_context_memory_stats(ctx, &st), AG_OK);
    if (it == 1) {
      hits_before = st.cache_hits;
      allocs_before = st.allocations;
    }
    if (it == 4) CHECK(st.cache_hits - hits_before > 0 && st.cache_hits - hits_before >= (st.allocations - allocs_before) / 2);
  }
  ag_tensor_release(x);
  ag_context_release(ctx);
}

int main(int argc, char **argv) {
  h_init(argc, argv);
  RUN(test_init_matches_macro);
  RUN(test_in_use_cache_and_trim);
  RUN(test_short_struct_is_respected);
  RUN(test_steady_loop_stops_allocating_fresh_memory);
  return h_finish();
}
