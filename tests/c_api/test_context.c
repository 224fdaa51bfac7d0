/*
 * tests/c_api/test_context.c - contexts through the C API: creation, thread
 * counts, struct_size variants, retain/release, a context outliving the
 * caller's release while tensors live, memory statistics, two contexts.
 */
#include "harness.h"

static void test_context_create_default(void) {
  ag_context *ctx = NULL;
  REQUIRE_OK(ag_context_create(&ctx, NULL));
  REQUIRE(ctx != NULL);
  CHECK(ag_context_num_threads(ctx) >= 1);
  ag_context_release(ctx);
  CHECK(ag_context_num_threads(NULL) == 0);
}

static void test_context_num_threads(void) {
  ag_context_options o = AG_CONTEXT_OPTIONS_INIT;
  ag_context *ctx = NULL;
  int32_t want[3] = {1, 2, 3};
  int i;
  for (i = 0; i < 3; i++) {
    ctx = NULL;
    o.num_threads = want[i];
    if (!CHECK_OK(ag_context_create(&ctx, &o)))
      continue;
    CHECK(ag_context_num_threads(ctx) == want[i]);
    ag_context_release(ctx);
  }
  o.num_threads = 0; /* one per hardware thread */
  ctx = NULL;
  REQUIRE_OK(ag_context_create(&ctx, &o));
  CHECK(ag_context_num_threads(ctx) >= 1);
  ag_context_release(ctx);
}

/* A zero-initialised extension beyond the known struct is accepted; a
 * struct_size covering only struct_size itself means "defaults". */
static void test_context_struct_size_variants(void) {
  struct {
    ag_context_options base;
    uint32_t future_field;
    uint32_t future_field2;
  } big;
  ag_context_options small = AG_CONTEXT_OPTIONS_INIT;
  ag_context *ctx = NULL;
  memset(&big, 0, sizeof big);
  big.base.struct_size = (uint32_t)sizeof big;
  big.base.num_threads = 1;
  REQUIRE_OK(ag_context_create(&ctx, &big.base));
  CHECK(ag_context_num_threads(ctx) == 1);
  ag_context_release(ctx);

  ctx = NULL;
  small.struct_size = (uint32_t)sizeof(uint32_t);
  small.num_threads = -5; /* beyond struct_size: must not be read */
  CHECK_OK(ag_context_create(&ctx, &small));
  if (ctx) {
    CHECK(ag_context_num_threads(ctx) >= 1);
    ag_context_release(ctx);
  }
}

static void test_context_retain_release(void) {
  ag_context *ctx = NULL;
  ag_tensor *t = NULL;
  REQUIRE_OK(ag_context_create(&ctx, NULL));
  CHECK(ag_context_retain(ctx) == ctx); /* 2 references */
  CHECK(ag_context_retain(ctx) == ctx); /* 3 references */
  CHECK(ag_context_retain(NULL) == NULL);
  ag_context_release(ctx); /* 2 */
  ag_context_release(ctx); /* 1 */
  /* still alive: usable */
  CHECK(ag_context_num_threads(ctx) >= 1);
  CHECK_OK(ag_tensor_scalar(&t, ctx, AG_F64, 2.0));
  CHECK_CLOSE(ITEM(t), 2.0, 0);
  REL(t);
  ag_context_release(ctx); /* 0: freed (ASan/valgrind see leaks otherwise) */
  ag_context_release(NULL); /* no-op */
}

/* The context outlives the caller's release while tensors live. */
static void test_context_outlives_release(void) {
  ag_context *ctx = NULL;
  ag_tensor *a = NULL, *b = NULL, *c = NULL, *s = NULL, *g = NULL;
  int64_t shape[1] = {3};
  double av[3] = {1, 2, 3}, bv[3] = {4, 5, 6};
  REQUIRE_OK(ag_context_create(&ctx, NULL));
  a = MAKE(ctx, AG_F64, shape, 1, av);
  b = MAKE(ctx, AG_F64, shape, 1, bv);
  REQUIRE(a && b);
  ag_context_release(ctx); /* the caller's reference goes first */
  /* tensors still work */
  {
    ag_context *c = NULL;
    CHECK_OK(ag_tensor_context(&c, a));
    CHECK(c == ctx);
    ag_context_release(c);
  }
  CHECK_OK(ag_tensor_requires_grad(a, 1));
  REQUIRE_OK(ag_op_mul(&c, a, b));
  {
    double want[3] = {4, 10, 18};
    CHECK_VALUES(c, want, 3, 0);
  }
  REQUIRE_OK(ag_op_sum(&s, c));
  CHECK_CLOSE(ITEM(s), 32.0, 0);
  CHECK_OK(ag_backward(s, NULL, NULL));
  g = GRAD(a);
  CHECK_VALUES(g, bv, 3, 0);
  REL(a);
  REL(s);
  REL(b);
  REL(c);
  REL(g); /* the last tensor frees the context */
}

/* The context of a tensor comes back as a new reference, also after the
 * caller released its own: the context lives as long as its tensors. */
static void test_context_of_tensor_after_caller_release(void) {
  ag_context *ctx = NULL, *again = (ag_context *)0x1, *bad = (ag_context *)0x1;
  ag_tensor *t = NULL, *z = NULL, *e = NULL;
  int64_t shape[1] = {2};
  REQUIRE_OK(ag_context_create(&ctx, NULL));
  t = SCALAR(ctx, AG_F64, 1.0);
  REQUIRE(t);
  ag_context_release(ctx);
  CHECK(ag_context_num_threads(ctx) == 0); /* the released handle is rejected */
  CHECK_OK(ag_tensor_context(&again, t));
  CHECK(again == ctx);
  CHECK(ag_context_num_threads(again) >= 1);
  CHECK_OK(ag_tensor_zeros(&z, again, AG_F32, shape, 1));
  CHECK_OK(ag_op_exp(&e, t));
  CHECK_CLOSE(ITEM(e), exp(1.0), 1e-12);
  ag_context_release(again);
  ag_context_release(again); /* one release too many: detected, recorded, ignored */
  CHECK_MSG_FN("ag_context_release");
  CHECK_ERR(ag_tensor_context(&bad, NULL), AG_ERR_INVALID_ARGUMENT, "ag_tensor_context");
  CHECK(bad == (ag_context *)0x1);
  CHECK_ERR(ag_tensor_context(NULL, t), AG_ERR_INVALID_ARGUMENT, "ag_tensor_context");
  REL(e);
  REL(z);
  REL(t); /* the last tensor frees the context */
}

/* Memory statistics: INIT equals init(), the counters move as documented,
 * trim empties the cache, reset_peak resets the peak, and an output struct
 * shorter than the library's is written only within its struct_size. */
static void test_memory_stats(void) {
  ag_memory_stats a = AG_MEMORY_STATS_INIT, s0, s1, s2, s3;
  ag_context *ctx = NEW_CTX();
  int64_t big[1] = {1 << 16}; /* 512 KiB of f64: a large, cached block */
  const int64_t bytes = (int64_t)8 << 16;
  ag_tensor *t = NULL;
  REQUIRE(ctx);
  CHECK_INIT_GIVES(ag_memory_stats, ag_memory_stats_init, 0xAB, a);
  CHECK(a.struct_size == sizeof(ag_memory_stats));
  CHECK(sizeof(ag_memory_stats) == 48);
  s0 = a;
  REQUIRE_OK(ag_context_memory_stats(ctx, &s0));
  CHECK(s0.struct_size == sizeof(ag_memory_stats));
  CHECK(s0.bytes_in_use >= 0 && s0.bytes_cached >= 0 && s0.allocations >= 0);
  CHECK(s0.peak_bytes_in_use >= s0.bytes_in_use);
  REQUIRE_OK(ag_tensor_zeros(&t, ctx, AG_F64, big, 1));
  s1 = a;
  REQUIRE_OK(ag_context_memory_stats(ctx, &s1));
  CHECK(s1.bytes_in_use >= s0.bytes_in_use + bytes);
  CHECK(s1.peak_bytes_in_use >= s1.bytes_in_use);
  CHECK(s1.allocations >= s0.allocations + 1);
  REL(t);
  t = NULL;
  s2 = a;
  REQUIRE_OK(ag_context_memory_stats(ctx, &s2));
  CHECK(s2.bytes_in_use <= s1.bytes_in_use - bytes);
  CHECK(s2.bytes_cached >= bytes); /* kept for reuse */
  CHECK(s2.peak_bytes_in_use >= s1.bytes_in_use);
  /* the same size again is served from the cache */
  REQUIRE_OK(ag_tensor_ones(&t, ctx, AG_F64, big, 1));
  s3 = a;
  REQUIRE_OK(ag_context_memory_stats(ctx, &s3));
  CHECK(s3.cache_hits >= s2.cache_hits + 1);
  CHECK(s3.allocations >= s2.allocations + 1);
  REL(t);
  /* trim returns every cached block */
  CHECK_OK(ag_context_trim(ctx));
  s3 = a;
  REQUIRE_OK(ag_context_memory_stats(ctx, &s3));
  CHECK(s3.bytes_cached == 0);
  /* reset the peak to what is in use now */
  CHECK_OK(ag_context_reset_peak_memory(ctx));
  s3 = a;
  REQUIRE_OK(ag_context_memory_stats(ctx, &s3));
  CHECK(s3.peak_bytes_in_use == s3.bytes_in_use);
  /* an older, shorter caller struct: only its first 16 bytes are the library's to write */
  {
    ag_memory_stats part;
    unsigned char *p = (unsigned char *)&part;
    size_t i;
    int tail_ok = 1;
    memset(&part, 0x5A, sizeof part);
    part.struct_size = 16;
    CHECK_OK(ag_context_memory_stats(ctx, &part));
    CHECK(part.struct_size == 16);
    CHECK(part.bytes_in_use == s3.bytes_in_use);
    for (i = 16; i < sizeof part; i++)
      if (p[i] != 0x5A)
        tail_ok = 0;
    CHECK(tail_ok);
  }
  /* a newer, longer caller struct: bytes past the library's struct keep their values */
  {
    struct {
      ag_memory_stats base;
      int64_t future;
    } ext;
    memset(&ext, 0, sizeof ext);
    ext.base.struct_size = (uint32_t)sizeof ext;
    ext.future = 777;
    CHECK_OK(ag_context_memory_stats(ctx, &ext.base));
    CHECK(ext.base.struct_size == sizeof ext);
    CHECK(ext.future == 777);
  }
  ag_context_release(ctx);
}

static void test_two_contexts_independent(void) {
  ag_context *c1 = NEW_CTX(), *c2 = NEW_CTX();
  ag_tensor *a, *b, *s1 = NULL, *s2 = NULL;
  REQUIRE(c1 && c2);
  CHECK(c1 != c2);
  a = SCALAR(c1, AG_F64, 2.0);
  b = SCALAR(c2, AG_F64, 3.0);
  REQUIRE(a && b);
  {
    ag_context *x1 = NULL, *x2 = NULL;
    CHECK_OK(ag_tensor_context(&x1, a));
    CHECK_OK(ag_tensor_context(&x2, b));
    CHECK(x1 == c1 && x2 == c2);
    ag_context_release(x1);
    ag_context_release(x2);
  }
  CHECK_OK(ag_op_mul(&s1, a, a));
  CHECK_OK(ag_op_mul(&s2, b, b));
  CHECK_CLOSE(ITEM(s1), 4.0, 0);
  CHECK_CLOSE(ITEM(s2), 9.0, 0);
  ag_context_release(c1);
  REL(s1);
  REL(a);
  /* c2 unaffected by c1 going away */
  CHECK_CLOSE(ITEM(s2), 9.0, 0);
  REL(s2);
  REL(b);
  ag_context_release(c2);
}

int main(int argc, char **argv) {
  h_init(argc, argv);
  RUN(test_context_create_default);
  RUN(test_context_num_threads);
  RUN(test_context_struct_size_variants);
  RUN(test_context_retain_release);
  RUN(test_context_outlives_release);
  RUN(test_context_of_tensor_after_caller_release);
  RUN(test_memory_stats);
  RUN(test_two_contexts_independent);
  return h_finish();
}
