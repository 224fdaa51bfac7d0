/*
 * tests/c_api/test_lifecycle.c - versions, names, contexts, tensor creation,
 * metadata, data access, version counters, retain/release.
 */
#include "harness.h"

#include <dlfcn.h>

/* ---- library info --------------------------------------------------------- */

static void test_version(void) {
  char want[64];
  CHECK(ag_version_number() == AG_VERSION_NUMBER);
  CHECK(AG_VERSION_NUMBER == AG_VERSION_MAJOR * 10000 + AG_VERSION_MINOR * 100 + AG_VERSION_PATCH);
  snprintf(want, sizeof want, "%d.%d.%d", AG_VERSION_MAJOR, AG_VERSION_MINOR, AG_VERSION_PATCH);
  REQUIRE(ag_version_string() != NULL);
  CHECK_STR(ag_version_string(), want);
  /* static string: the same pointer every time */
  CHECK(ag_version_string() == ag_version_string());
}

static void test_status_names(void) {
  static const struct {
    ag_status s;
    const char *name;
  } table[] = {
      {AG_OK, "AG_OK"},
      {AG_ERR_INVALID_ARGUMENT, "AG_ERR_INVALID_ARGUMENT"},
      {AG_ERR_SHAPE, "AG_ERR_SHAPE"},
      {AG_ERR_DTYPE, "AG_ERR_DTYPE"},
      {AG_ERR_OUT_OF_MEMORY, "AG_ERR_OUT_OF_MEMORY"},
      {AG_ERR_CONTEXT, "AG_ERR_CONTEXT"},
      {AG_ERR_GRAPH, "AG_ERR_GRAPH"},
      {AG_ERR_VERSION, "AG_ERR_VERSION"},
      {AG_ERR_CALLBACK, "AG_ERR_CALLBACK"},
      {AG_ERR_BUFFER_TOO_SMALL, "AG_ERR_BUFFER_TOO_SMALL"},
      {AG_ERR_UNSUPPORTED, "AG_ERR_UNSUPPORTED"},
      {AG_ERR_INTERNAL, "AG_ERR_INTERNAL"},
  };
  size_t i;
  /* pinned values */
  CHECK(AG_OK == 0);
  CHECK(AG_ERR_INVALID_ARGUMENT == -1);
  CHECK(AG_ERR_INTERNAL == -11);
  for (i = 0; i < sizeof table / sizeof table[0]; i++) {
    CHECK(table[i].s == -(ag_status)i);
    CHECK_STR(ag_status_name(table[i].s), table[i].name);
  }
  CHECK_STR(ag_status_name(1), "AG_ERR_UNKNOWN");
  CHECK_STR(ag_status_name(-12), "AG_ERR_UNKNOWN");
  CHECK_STR(ag_status_name(12345), "AG_ERR_UNKNOWN");
  CHECK_STR(ag_status_name(INT32_MIN), "AG_ERR_UNKNOWN");
  CHECK_STR(ag_status_name(INT32_MAX), "AG_ERR_UNKNOWN");
}

static void test_dtype_info(void) {
  CHECK(AG_F32 == 1 && AG_F64 == 2 && AG_I64 == 3 && AG_BOOL == 4);
  CHECK(ag_dtype_size(AG_F32) == 4);
  CHECK(ag_dtype_size(AG_F64) == 8);
  CHECK(ag_dtype_size(AG_I64) == 8);
  CHECK(ag_dtype_size(AG_BOOL) == 1);
  CHECK(ag_dtype_size(0) == 0);
  CHECK(ag_dtype_size(5) == 0);
  CHECK(ag_dtype_size(-1) == 0);
  CHECK(ag_dtype_size(INT32_MAX) == 0);
  CHECK_STR(ag_dtype_name(AG_F32), "f32");
  CHECK_STR(ag_dtype_name(AG_F64), "f64");
  CHECK_STR(ag_dtype_name(AG_I64), "i64");
  CHECK_STR(ag_dtype_name(AG_BOOL), "bool");
  CHECK_STR(ag_dtype_name(0), "invalid");
  CHECK_STR(ag_dtype_name(5), "invalid");
  CHECK_STR(ag_dtype_name(-3), "invalid");
}

static void test_op_introspection(void) {
  static const char *declared[] = {"neg", "exp",  "log", "tanh", "pow_scalar",  "add",  "sub",
                                   "mul", "div",  "sum", "mean", "expand", "sum_to_size", "cast"};
  int32_t n = ag_op_count(), i, j;
  size_t k;
  void *self = dlopen(NULL, RTLD_NOW);
  CHECK(self != NULL);
  CHECK(n >= (int32_t)(sizeof declared / sizeof declared[0]));
  for (i = 0; i < n; i++) {
    const char *name = ag_op_name(i);
    char sym[128];
    if (!CHECK(name != NULL))
      continue;
    CHECK(name[0] != '\0');
    CHECK(strncmp(name, "ag_op_", 6) != 0);
    for (j = 0; j < i; j++) {
      const char *other = ag_op_name(j);
      if (other && strcmp(other, name) == 0) {
        CHECK(!"op names must be unique");
        printf("#   duplicate op name \"%s\" at %d and %d\n", name, (int)j, (int)i);
      }
    }
    /* every listed op is an exported ag_op_<name> function */
    snprintf(sym, sizeof sym, "ag_op_%s", name);
    if (self && !CHECK(dlsym(self, sym) != NULL))
      printf("#   op %d \"%s\": no exported symbol %s\n", (int)i, name, sym);
  }
  /* every op declared in ops.h is listed */
  for (k = 0; k < sizeof declared / sizeof declared[0]; k++) {
    int found = 0;
    for (i = 0; i < n; i++) {
      const char *name = ag_op_name(i);
      if (name && strcmp(name, declared[k]) == 0)
        found = 1;
    }
    if (!CHECK(found))
      printf("#   op \"%s\" is declared in ops.h but not listed by ag_op_name\n", declared[k]);
  }
  CHECK(ag_op_name(-1) == NULL);
  CHECK(ag_op_name(n) == NULL);
  CHECK(ag_op_name(n + 1) == NULL);
  CHECK(ag_op_name(INT32_MAX) == NULL);
  CHECK(ag_op_name(INT32_MIN) == NULL);
  if (self)
    dlclose(self);
}

/* ---- options -------------------------------------------------------------- */

static void test_context_options_init(void) {
  ag_context_options a = AG_CONTEXT_OPTIONS_INIT;
  ag_context_options b;
  memset(&b, 0xAB, sizeof b);
  CHECK_OK(ag_context_options_init(&b));
  CHECK(memcmp(&a, &b, sizeof a) == 0);
  CHECK(a.struct_size == sizeof(ag_context_options));
  CHECK(a.num_threads == 0);
  CHECK(sizeof(ag_context_options) == 8); /* no padding, pinned layout */
}

static void test_backward_options_init(void) {
  ag_backward_options a = AG_BACKWARD_OPTIONS_INIT;
  ag_backward_options b;
  memset(&b, 0xCD, sizeof b);
  CHECK_OK(ag_backward_options_init(&b));
  CHECK(memcmp(&a, &b, sizeof a) == 0);
  CHECK(a.struct_size == sizeof(ag_backward_options));
  CHECK(a.retain_graph == 0 && a.create_graph == 0 && a.num_inputs == 0 && a.inputs == NULL);
  CHECK(sizeof(ag_backward_options) == 16 + sizeof(void *)); /* no padding */
}

/* ---- contexts ------------------------------------------------------------- */

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
  ag_memory_stats a = AG_MEMORY_STATS_INIT, b, s0, s1, s2, s3;
  ag_context *ctx = NEW_CTX();
  int64_t big[1] = {1 << 16}; /* 512 KiB of f64: a large, cached block */
  const int64_t bytes = (int64_t)8 << 16;
  ag_tensor *t = NULL;
  REQUIRE(ctx);
  memset(&b, 0xAB, sizeof b);
  CHECK_OK(ag_memory_stats_init(&b));
  CHECK(memcmp(&a, &b, sizeof a) == 0);
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

/* ---- tensor creation ------------------------------------------------------- */

static void test_zeros_ones_full(void) {
  ag_context *ctx = NEW_CTX();
  static const ag_dtype dts[4] = {AG_F32, AG_F64, AG_I64, AG_BOOL};
  int64_t shape[2] = {2, 3};
  int k;
  REQUIRE(ctx);
  for (k = 0; k < 4; k++) {
    ag_tensor *z = NULL, *o = NULL, *f = NULL;
    double fullv = dts[k] == AG_BOOL ? 1.0 : dts[k] == AG_I64 ? 7.0 : 2.5;
    if (CHECK_OK(ag_tensor_zeros(&z, ctx, dts[k], shape, 2))) {
      CHECK(ag_tensor_dtype(z) == dts[k]);
      CHECK_SHAPE(z, shape, 2);
      CHECK(ag_tensor_numel(z) == 6);
      CHECK_ALL(z, 0.0, 6, 0);
    }
    if (CHECK_OK(ag_tensor_ones(&o, ctx, dts[k], shape, 2))) {
      CHECK(ag_tensor_dtype(o) == dts[k]);
      CHECK_SHAPE(o, shape, 2);
      CHECK_ALL(o, 1.0, 6, 0);
    }
    if (CHECK_OK(ag_tensor_full(&f, ctx, dts[k], shape, 2, fullv))) {
      CHECK(ag_tensor_dtype(f) == dts[k]);
      CHECK_SHAPE(f, shape, 2);
      CHECK_ALL(f, fullv, 6, 0);
    }
    /* a fresh leaf requires no grad and is outside any graph */
    CHECK(ag_tensor_get_requires_grad(z) == 0);
    CHECK(ag_tensor_is_leaf(z) == 1);
    CHECK(ag_tensor_grad_fn_name(z) == NULL);
    REL(z);
    REL(o);
    REL(f);
  }
  ag_context_release(ctx);
}

static void test_full_conversions(void) {
  ag_context *ctx = NEW_CTX();
  int64_t shape[1] = {1};
  ag_tensor *t = NULL;
  REQUIRE(ctx);
  /* f32 rounds to nearest */
  REQUIRE_OK(ag_tensor_full(&t, ctx, AG_F32, shape, 1, 0.1));
  {
    float f = 0;
    CHECK_OK(ag_tensor_copy_data(t, &f, sizeof f));
    CHECK(f == 0.1f);
  }
  REL(t);
  /* i64 truncates toward zero */
  REQUIRE_OK(ag_tensor_full(&t, ctx, AG_I64, shape, 1, 2.7));
  CHECK_CLOSE(ITEM(t), 2.0, 0);
  REL(t);
  REQUIRE_OK(ag_tensor_full(&t, ctx, AG_I64, shape, 1, -2.7));
  CHECK_CLOSE(ITEM(t), -2.0, 0);
  REL(t);
  {
    int64_t big = 0;
    REQUIRE_OK(ag_tensor_full(&t, ctx, AG_I64, shape, 1, 4503599627370496.0)); /* 2^52 */
    CHECK_OK(ag_tensor_copy_data(t, &big, sizeof big));
    CHECK(big == (int64_t)1 << 52);
    REL(t);
  }
  /* bool: nonzero is 1 */
  REQUIRE_OK(ag_tensor_full(&t, ctx, AG_BOOL, shape, 1, 0.5));
  {
    unsigned char b = 9;
    CHECK_OK(ag_tensor_copy_data(t, &b, 1));
    CHECK(b == 1);
  }
  REL(t);
  REQUIRE_OK(ag_tensor_full(&t, ctx, AG_BOOL, shape, 1, -3.0));
  CHECK_CLOSE(ITEM(t), 1.0, 0);
  REL(t);
  REQUIRE_OK(ag_tensor_full(&t, ctx, AG_BOOL, shape, 1, 0.0));
  CHECK_CLOSE(ITEM(t), 0.0, 0);
  REL(t);
  /* f64 keeps special values */
  REQUIRE_OK(ag_tensor_full(&t, ctx, AG_F64, shape, 1, -INFINITY));
  CHECK(isinf(ITEM(t)) && ITEM(t) < 0);
  REL(t);
  REQUIRE_OK(ag_tensor_full(&t, ctx, AG_F32, shape, 1, NAN));
  CHECK(isnan(ITEM(t)));
  REL(t);
  ag_context_release(ctx);
}

static void test_scalar(void) {
  ag_context *ctx = NEW_CTX();
  static const ag_dtype dts[4] = {AG_F32, AG_F64, AG_I64, AG_BOOL};
  static const double vals[4] = {1.25, -3.5, 42.0, 1.0};
  int k;
  REQUIRE(ctx);
  for (k = 0; k < 4; k++) {
    ag_tensor *t = NULL;
    if (!CHECK_OK(ag_tensor_scalar(&t, ctx, dts[k], vals[k])))
      continue;
    CHECK(ag_tensor_ndim(t) == 0);
    CHECK(ag_tensor_numel(t) == 1);
    CHECK(ag_tensor_dtype(t) == dts[k]);
    CHECK_OK(ag_tensor_shape(t, NULL, 0));
    CHECK_CLOSE(ITEM(t), vals[k], 0);
    REL(t);
  }
  ag_context_release(ctx);
}

static void test_create_with_data_all_dtypes(void) {
  ag_context *ctx = NEW_CTX();
  int64_t shape[2] = {2, 3};
  float f32[6] = {1.5f, -2.0f, 3.25f, 0.0f, -0.5f, 1e30f};
  double f64[6] = {1.5, -2.0, 3.25, 0.0, -0.5, 1e300};
  int64_t i64[6] = {1, -2, INT64_MAX, INT64_MIN, 0, 123456789012345LL};
  unsigned char bin[6] = {0, 1, 2, 255, 0, 7};
  unsigned char bwant[6] = {0, 1, 1, 1, 0, 1};
  REQUIRE(ctx);
  {
    ag_tensor *t = NULL;
    float back[6];
    REQUIRE_OK(ag_tensor_create(&t, ctx, AG_F32, shape, 2, f32));
    CHECK(ag_tensor_dtype(t) == AG_F32);
    CHECK_SHAPE(t, shape, 2);
    CHECK(ag_tensor_numel(t) == 6);
    CHECK_OK(ag_tensor_copy_data(t, back, sizeof back));
    CHECK(memcmp(back, f32, sizeof back) == 0);
    REL(t);
  }
  {
    ag_tensor *t = NULL;
    double back[6];
    REQUIRE_OK(ag_tensor_create(&t, ctx, AG_F64, shape, 2, f64));
    CHECK(ag_tensor_dtype(t) == AG_F64);
    CHECK_SHAPE(t, shape, 2);
    CHECK_OK(ag_tensor_copy_data(t, back, sizeof back));
    CHECK(memcmp(back, f64, sizeof back) == 0);
    REL(t);
  }
  {
    ag_tensor *t = NULL;
    int64_t back[6];
    REQUIRE_OK(ag_tensor_create(&t, ctx, AG_I64, shape, 2, i64));
    CHECK(ag_tensor_dtype(t) == AG_I64);
    CHECK_SHAPE(t, shape, 2);
    CHECK_OK(ag_tensor_copy_data(t, back, sizeof back));
    CHECK(memcmp(back, i64, sizeof back) == 0);
    REL(t);
  }
  {
    ag_tensor *t = NULL;
    unsigned char back[6];
    REQUIRE_OK(ag_tensor_create(&t, ctx, AG_BOOL, shape, 2, bin));
    CHECK(ag_tensor_dtype(t) == AG_BOOL);
    CHECK_SHAPE(t, shape, 2);
    CHECK_OK(ag_tensor_copy_data(t, back, sizeof back));
    CHECK(memcmp(back, bwant, sizeof back) == 0);
    REL(t);
  }
  {
    /* the data is copied: changing the caller's buffer changes nothing */
    ag_tensor *t = NULL;
    double src[2] = {1.0, 2.0}, back[2];
    int64_t s1[1] = {2};
    REQUIRE_OK(ag_tensor_create(&t, ctx, AG_F64, s1, 1, src));
    src[0] = 99.0;
    CHECK_OK(ag_tensor_copy_data(t, back, sizeof back));
    CHECK(back[0] == 1.0 && back[1] == 2.0);
    REL(t);
  }
  {
    /* data NULL: zeros */
    ag_tensor *t = NULL;
    REQUIRE_OK(ag_tensor_create(&t, ctx, AG_I64, shape, 2, NULL));
    CHECK_ALL(t, 0.0, 6, 0);
    REL(t);
  }
  ag_context_release(ctx);
}

static void test_create_0dim_shape_null(void) {
  ag_context *ctx = NEW_CTX();
  ag_tensor *t = NULL, *u = NULL;
  double v = -7.25;
  int64_t dims[2] = {111, 222};
  REQUIRE(ctx);
  REQUIRE_OK(ag_tensor_create(&t, ctx, AG_F64, NULL, 0, &v));
  CHECK(ag_tensor_ndim(t) == 0);
  CHECK(ag_tensor_numel(t) == 1);
  CHECK_OK(ag_tensor_shape(t, NULL, 0));
  CHECK_OK(ag_tensor_shape(t, dims, 2));
  CHECK(dims[0] == 111 && dims[1] == 222); /* nothing to write for 0 dims */
  CHECK_CLOSE(ITEM(t), -7.25, 0);
  /* a non-NULL shape pointer with ndim 0 is fine too */
  REQUIRE_OK(ag_tensor_create(&u, ctx, AG_F32, dims, 0, NULL));
  CHECK(ag_tensor_ndim(u) == 0);
  CHECK_CLOSE(ITEM(u), 0.0, 0);
  REL(t);
  REL(u);
  ag_context_release(ctx);
}

static void test_zero_size_dims(void) {
  ag_context *ctx = NEW_CTX();
  int64_t s1[1] = {0};
  int64_t s3[3] = {3, 0, 2};
  ag_tensor *a = NULL, *b = NULL, *sum = NULL, *mean = NULL, *o = NULL;
  double d = 5.0;
  REQUIRE(ctx);
  REQUIRE_OK(ag_tensor_create(&a, ctx, AG_F64, s1, 1, NULL));
  CHECK(ag_tensor_numel(a) == 0);
  CHECK(ag_tensor_ndim(a) == 1);
  CHECK_SHAPE(a, s1, 1);
  REQUIRE_OK(ag_tensor_ones(&b, ctx, AG_F32, s3, 3));
  CHECK(ag_tensor_numel(b) == 0);
  CHECK(ag_tensor_ndim(b) == 3);
  CHECK_SHAPE(b, s3, 3);
  /* empty copies with NULL buffers */
  CHECK_OK(ag_tensor_copy_data(b, NULL, 0));
  CHECK_OK(ag_tensor_copy_from(b, NULL, 0));
  /* item needs exactly one element */
  CHECK_STATUS(ag_tensor_item(a, &d), AG_ERR_SHAPE);
  CHECK(d == 5.0);
  /* the sum of an empty tensor is 0, the mean NaN */
  REQUIRE_OK(ag_op_sum(&sum, b));
  CHECK(ag_tensor_ndim(sum) == 0);
  CHECK_CLOSE(ITEM(sum), 0.0, 0);
  REQUIRE_OK(ag_op_mean(&mean, a));
  CHECK(isnan(ITEM(mean)));
  /* elementwise ops on empty tensors give empty tensors */
  REQUIRE_OK(ag_op_exp(&o, b));
  CHECK_SHAPE(o, s3, 3);
  REL(a);
  REL(b);
  REL(sum);
  REL(mean);
  REL(o);
  ag_context_release(ctx);
}

static void test_max_dims(void) {
  ag_context *ctx = NEW_CTX();
  int64_t shape[AG_MAX_DIMS];
  int64_t dims[AG_MAX_DIMS];
  ag_tensor *t = NULL, *s = NULL;
  int i;
  REQUIRE(ctx);
  for (i = 0; i < AG_MAX_DIMS; i++)
    shape[i] = (i % 4 == 0) ? 2 : 1;
  REQUIRE_OK(ag_tensor_ones(&t, ctx, AG_F64, shape, AG_MAX_DIMS));
  CHECK(ag_tensor_ndim(t) == AG_MAX_DIMS);
  CHECK(ag_tensor_numel(t) == 16);
  CHECK_OK(ag_tensor_shape(t, dims, AG_MAX_DIMS));
  CHECK(memcmp(dims, shape, sizeof dims) == 0);
  REQUIRE_OK(ag_op_sum(&s, t));
  CHECK_CLOSE(ITEM(s), 16.0, 0);
  REL(t);
  REL(s);
  ag_context_release(ctx);
}

static void test_shape_query(void) {
  ag_context *ctx = NEW_CTX();
  int64_t shape[3] = {2, 3, 4};
  int64_t dims[5];
  ag_tensor *t = NULL;
  int i;
  REQUIRE(ctx);
  REQUIRE_OK(ag_tensor_zeros(&t, ctx, AG_F32, shape, 3));
  CHECK(ag_tensor_ndim(t) == 3);
  CHECK(ag_tensor_numel(t) == 24);
  for (i = 0; i < 5; i++)
    dims[i] = -99;
  CHECK_OK(ag_tensor_shape(t, dims, 3));
  CHECK(dims[0] == 2 && dims[1] == 3 && dims[2] == 4);
  for (i = 0; i < 5; i++)
    dims[i] = -99;
  CHECK_OK(ag_tensor_shape(t, dims, 5)); /* more room than needed */
  CHECK(dims[0] == 2 && dims[1] == 3 && dims[2] == 4);
  for (i = 0; i < 5; i++)
    dims[i] = -99;
  CHECK_STATUS(ag_tensor_shape(t, dims, 2), AG_ERR_BUFFER_TOO_SMALL);
  for (i = 0; i < 5; i++)
    CHECK(dims[i] == -99); /* untouched */
  CHECK_STATUS(ag_tensor_shape(t, NULL, 0), AG_ERR_BUFFER_TOO_SMALL);
  CHECK_STATUS(ag_tensor_shape(t, dims, 0), AG_ERR_BUFFER_TOO_SMALL);
  CHECK(dims[0] == -99);
  REL(t);
  ag_context_release(ctx);
}

/* ---- data access and versions ---------------------------------------------- */

static void test_copy_data_and_from(void) {
  ag_context *ctx = NEW_CTX();
  int64_t shape[2] = {2, 2};
  double init[4] = {1, 2, 3, 4}, next[4] = {-1, -2, -3, -4}, back[6];
  ag_tensor *t;
  int64_t v0, v1, v2;
  REQUIRE(ctx);
  t = MAKE(ctx, AG_F64, shape, 2, init);
  REQUIRE(t);
  v0 = ag_tensor_version(t);
  CHECK(v0 >= 0);
  /* reading does not bump the version */
  back[4] = back[5] = 77.0;
  CHECK_OK(ag_tensor_copy_data(t, back, sizeof back)); /* larger buffer is fine */
  CHECK(memcmp(back, init, sizeof init) == 0);
  CHECK(back[4] == 77.0 && back[5] == 77.0); /* only numel elements written */
  CHECK(ag_tensor_version(t) == v0);
  /* writing bumps it */
  CHECK_OK(ag_tensor_copy_from(t, next, sizeof next));
  v1 = ag_tensor_version(t);
  CHECK(v1 > v0);
  CHECK_VALUES(t, next, 4, 0);
  CHECK_OK(ag_tensor_copy_from(t, init, sizeof init));
  v2 = ag_tensor_version(t);
  CHECK(v2 > v1);
  CHECK_VALUES(t, init, 4, 0);
  REL(t);
  CHECK(ag_tensor_version(NULL) == -1);
  ag_context_release(ctx);
}

static void test_copy_from_all_dtypes(void) {
  ag_context *ctx = NEW_CTX();
  int64_t shape[1] = {3};
  ag_tensor *f = NULL, *i = NULL, *b = NULL;
  float fv[3] = {0.5f, 1.5f, -2.5f}, fb[3];
  int64_t iv[3] = {-5, 0, 5}, ib[3];
  unsigned char bv[3] = {1, 0, 1}, bb[3];
  REQUIRE(ctx);
  REQUIRE_OK(ag_tensor_zeros(&f, ctx, AG_F32, shape, 1));
  REQUIRE_OK(ag_tensor_zeros(&i, ctx, AG_I64, shape, 1));
  REQUIRE_OK(ag_tensor_zeros(&b, ctx, AG_BOOL, shape, 1));
  CHECK_OK(ag_tensor_copy_from(f, fv, sizeof fv));
  CHECK_OK(ag_tensor_copy_from(i, iv, sizeof iv));
  CHECK_OK(ag_tensor_copy_from(b, bv, sizeof bv));
  CHECK_OK(ag_tensor_copy_data(f, fb, sizeof fb));
  CHECK_OK(ag_tensor_copy_data(i, ib, sizeof ib));
  CHECK_OK(ag_tensor_copy_data(b, bb, sizeof bb));
  CHECK(memcmp(fv, fb, sizeof fb) == 0);
  CHECK(memcmp(iv, ib, sizeof ib) == 0);
  CHECK(memcmp(bv, bb, sizeof bb) == 0);
  REL(f);
  REL(i);
  REL(b);
  ag_context_release(ctx);
}

static void test_item_any_ndim(void) {
  ag_context *ctx = NEW_CTX();
  int64_t shape[3] = {1, 1, 1};
  double v = 0;
  double d = 3.5;
  ag_tensor *t = NULL, *i = NULL, *b = NULL;
  REQUIRE(ctx);
  REQUIRE_OK(ag_tensor_create(&t, ctx, AG_F64, shape, 3, &d));
  CHECK_OK(ag_tensor_item(t, &v));
  CHECK(v == 3.5);
  REQUIRE_OK(ag_tensor_full(&i, ctx, AG_I64, shape, 2, -9.0));
  CHECK_OK(ag_tensor_item(i, &v));
  CHECK(v == -9.0);
  REQUIRE_OK(ag_tensor_ones(&b, ctx, AG_BOOL, shape, 1));
  CHECK_OK(ag_tensor_item(b, &v));
  CHECK(v == 1.0);
  REL(t);
  REL(i);
  REL(b);
  ag_context_release(ctx);
}

static void test_detach_shares_data_and_version(void) {
  ag_context *ctx = NEW_CTX();
  int64_t shape[1] = {3};
  double xv[3] = {1, 2, 3}, nv[3] = {7, 8, 9}, mv[3] = {-1, -1, -1};
  ag_tensor *x, *d = NULL;
  int64_t v0;
  REQUIRE(ctx);
  x = MAKE(ctx, AG_F64, shape, 1, xv);
  REQUIRE(x);
  CHECK_OK(ag_tensor_requires_grad(x, 1));
  REQUIRE_OK(ag_tensor_detach(&d, x));
  CHECK(d != x);
  CHECK(ag_tensor_get_requires_grad(d) == 0);
  CHECK(ag_tensor_is_leaf(d) == 1);
  CHECK(ag_tensor_grad_fn_name(d) == NULL);
  CHECK_SHAPE(d, shape, 1);
  CHECK(ag_tensor_dtype(d) == AG_F64);
  CHECK_VALUES(d, xv, 3, 0);
  v0 = ag_tensor_version(x);
  CHECK(ag_tensor_version(d) == v0);
  /* a write through x is seen by d, with the same counter */
  CHECK_OK(ag_tensor_copy_from(x, nv, sizeof nv));
  CHECK_VALUES(d, nv, 3, 0);
  CHECK(ag_tensor_version(x) > v0);
  CHECK(ag_tensor_version(d) == ag_tensor_version(x));
  /* and a write through d is seen by x */
  v0 = ag_tensor_version(x);
  CHECK_OK(ag_tensor_copy_from(d, mv, sizeof mv));
  CHECK_VALUES(x, mv, 3, 0);
  CHECK(ag_tensor_version(x) > v0);
  CHECK(ag_tensor_version(d) == ag_tensor_version(x));
  /* x still requires grad; d is independent of it in the graph */
  CHECK(ag_tensor_get_requires_grad(x) == 1);
  /* releasing x keeps d's data alive */
  REL(x);
  CHECK_VALUES(d, mv, 3, 0);
  REL(d);
  ag_context_release(ctx);
}

static void test_expand_view_shares_version(void) {
  ag_context *ctx = NEW_CTX();
  int64_t s1[2] = {1, 3}, s2[2] = {2, 3};
  double xv[3] = {1, 2, 3}, nv[3] = {4, 5, 6};
  double want1[6] = {1, 2, 3, 1, 2, 3}, want2[6] = {4, 5, 6, 4, 5, 6};
  ag_tensor *x, *e = NULL;
  REQUIRE(ctx);
  x = MAKE(ctx, AG_F64, s1, 2, xv);
  REQUIRE(x);
  REQUIRE_OK(ag_op_expand(&e, x, s2, 2));
  CHECK_SHAPE(e, s2, 2);
  CHECK_VALUES(e, want1, 6, 0);
  CHECK(ag_tensor_version(e) == ag_tensor_version(x));
  CHECK_OK(ag_tensor_copy_from(x, nv, sizeof nv));
  CHECK_VALUES(e, want2, 6, 0); /* a view: shares the data */
  CHECK(ag_tensor_version(e) == ag_tensor_version(x));
  REL(x);
  CHECK_VALUES(e, want2, 6, 0);
  REL(e);
  ag_context_release(ctx);
}

static void test_tensor_retain_release(void) {
  ag_context *ctx = NEW_CTX();
  ag_tensor *t;
  REQUIRE(ctx);
  t = SCALAR(ctx, AG_F64, 4.0);
  REQUIRE(t);
  CHECK(ag_tensor_retain(t) == t);
  CHECK(ag_tensor_retain(t) == t);
  CHECK(ag_tensor_retain(NULL) == NULL);
  REL(t);
  REL(t);
  CHECK_CLOSE(ITEM(t), 4.0, 0); /* one reference left */
  REL(t);
  REL(NULL); /* no-op */
  ag_context_release(ctx);
}

static void test_getters_on_null(void) {
  CHECK(ag_tensor_dtype(NULL) == 0);
  CHECK(ag_tensor_ndim(NULL) == -1);
  CHECK(ag_tensor_numel(NULL) == -1);
  CHECK(ag_tensor_version(NULL) == -1);
  CHECK(ag_tensor_get_requires_grad(NULL) == 0);
  CHECK(ag_tensor_is_leaf(NULL) == 0);
  CHECK(ag_tensor_grad_fn_name(NULL) == NULL);
  CHECK(ag_context_num_threads(NULL) == 0);
}

/* Many short-lived tensors and contexts (pools must recycle, leak checkers see the rest). */
static void test_many_create_release(void) {
  int round, i;
  for (round = 0; round < 3; round++) {
    ag_context *ctx = NEW_CTX_THREADS(1);
    ag_tensor *acc = NULL;
    REQUIRE(ctx);
    REQUIRE_OK(ag_tensor_scalar(&acc, ctx, AG_F64, 0.0));
    for (i = 0; i < 2000; i++) {
      ag_tensor *one = NULL, *next = NULL;
      int64_t shape[1] = {(i % 7) + 1};
      ag_tensor *big = NULL;
      if (!CHECK_OK(ag_tensor_ones(&big, ctx, AG_F32, shape, 1)))
        break;
      REL(big);
      if (!CHECK_OK(ag_tensor_scalar(&one, ctx, AG_F64, 1.0)))
        break;
      if (!CHECK_OK(ag_op_add(&next, acc, one))) {
        REL(one);
        break;
      }
      REL(one);
      REL(acc);
      acc = next;
    }
    CHECK_CLOSE(ITEM(acc), 2000.0, 0);
    REL(acc);
    ag_context_release(ctx);
  }
}

/* Forward values of every op, as a sanity check of what the autograd tests build on. */
static void test_op_forward_values(ag_dtype dt) {
  ag_context *ctx = NEW_CTX();
  int64_t s23[2] = {2, 3}, s3[1] = {3}, s13[2] = {1, 3}, s21[2] = {2, 1};
  double av[6] = {0.5, 1, 1.5, 2, 2.5, 3}, bv[3] = {2, -1, 4};
  double tol = h_tol(dt);
  ag_tensor *a, *b, *y = NULL;
  double w[6];
  int i;
  REQUIRE(ctx);
  a = MAKE(ctx, dt, s23, 2, av);
  b = MAKE(ctx, dt, s3, 1, bv);
  REQUIRE(a && b);
#define UNARY(op, expr)                                   \
  do {                                                    \
    y = NULL;                                             \
    if (CHECK_OK(op(&y, a))) {                            \
      for (i = 0; i < 6; i++)                             \
        w[i] = (expr);                                    \
      CHECK(ag_tensor_dtype(y) == dt);                    \
      CHECK_SHAPE(y, s23, 2);                             \
      h_check_values_at(__FILE__, __LINE__, #op, y, w, 6, tol * 10); \
      REL(y);                                             \
    }                                                     \
  } while (0)
  UNARY(ag_op_neg, -av[i]);
  UNARY(ag_op_exp, exp(av[i]));
  UNARY(ag_op_log, log(av[i]));
  UNARY(ag_op_tanh, tanh(av[i]));
#undef UNARY
#define BINARY(op, expr)                                  \
  do {                                                    \
    y = NULL;                                             \
    if (CHECK_OK(op(&y, a, b))) {                         \
      for (i = 0; i < 6; i++)                             \
        w[i] = (expr);                                    \
      CHECK_SHAPE(y, s23, 2);                             \
      h_check_values_at(__FILE__, __LINE__, #op, y, w, 6, tol * 10); \
      REL(y);                                             \
    }                                                     \
  } while (0)
  BINARY(ag_op_add, av[i] + bv[i % 3]);
  BINARY(ag_op_sub, av[i] - bv[i % 3]);
  BINARY(ag_op_mul, av[i] * bv[i % 3]);
  BINARY(ag_op_div, av[i] / bv[i % 3]);
#undef BINARY
  y = NULL;
  if (CHECK_OK(ag_op_pow_scalar(&y, a, 2.5))) {
    for (i = 0; i < 6; i++)
      w[i] = pow(av[i], 2.5);
    CHECK_VALUES(y, w, 6, tol * 100);
    REL(y);
  }
  y = NULL;
  if (CHECK_OK(ag_op_sum(&y, a))) {
    CHECK(ag_tensor_ndim(y) == 0);
    CHECK_CLOSE(ITEM(y), 10.5, tol * 10);
    REL(y);
  }
  y = NULL;
  if (CHECK_OK(ag_op_mean(&y, a))) {
    CHECK(ag_tensor_ndim(y) == 0);
    CHECK_CLOSE(ITEM(y), 1.75, tol);
    REL(y);
  }
  y = NULL;
  if (CHECK_OK(ag_op_expand(&y, b, s23, 2))) {
    double want[6] = {2, -1, 4, 2, -1, 4};
    CHECK_SHAPE(y, s23, 2);
    CHECK_VALUES(y, want, 6, 0);
    REL(y);
  }
  y = NULL;
  {
    int64_t keep[2] = {-1, 3}; /* -1 keeps x's dim */
    ag_tensor *col = NULL;
    double cv[2] = {5, 6}, want[6] = {5, 5, 5, 6, 6, 6};
    col = MAKE(ctx, dt, s21, 2, cv);
    if (col && CHECK_OK(ag_op_expand(&y, col, keep, 2))) {
      CHECK_SHAPE(y, s23, 2);
      CHECK_VALUES(y, want, 6, 0);
      REL(y);
    }
    REL(col);
  }
  y = NULL;
  if (CHECK_OK(ag_op_sum_to_size(&y, a, s13, 2))) {
    double want[3] = {2.5, 3.5, 4.5};
    CHECK_SHAPE(y, s13, 2);
    CHECK_VALUES(y, want, 3, tol * 10);
    REL(y);
  }
  y = NULL;
  if (CHECK_OK(ag_op_sum_to_size(&y, a, s3, 1))) {
    double want[3] = {2.5, 3.5, 4.5};
    CHECK_SHAPE(y, s3, 1);
    CHECK_VALUES(y, want, 3, tol * 10);
    REL(y);
  }
  y = NULL;
  if (CHECK_OK(ag_op_sum_to_size(&y, a, s21, 2))) {
    double want[2] = {3, 7.5};
    CHECK_SHAPE(y, s21, 2);
    CHECK_VALUES(y, want, 2, tol * 10);
    REL(y);
  }
  y = NULL;
  if (CHECK_OK(ag_op_cast(&y, a, AG_I64))) {
    double want[6] = {0, 1, 1, 2, 2, 3};
    CHECK(ag_tensor_dtype(y) == AG_I64);
    CHECK_VALUES(y, want, 6, 0);
    REL(y);
  }
  y = NULL;
  if (CHECK_OK(ag_op_cast(&y, b, AG_BOOL))) {
    double want[3] = {1, 1, 1};
    CHECK(ag_tensor_dtype(y) == AG_BOOL);
    CHECK_VALUES(y, want, 3, 0);
    REL(y);
  }
  y = NULL;
  if (CHECK_OK(ag_op_cast(&y, a, dt == AG_F32 ? AG_F64 : AG_F32))) {
    CHECK(ag_tensor_dtype(y) == (dt == AG_F32 ? AG_F64 : AG_F32));
    CHECK_VALUES(y, av, 6, 0);
    REL(y);
  }
  REL(a);
  REL(b);
  ag_context_release(ctx);
}

int main(int argc, char **argv) {
  h_init(argc, argv);
  RUN(test_version);
  RUN(test_status_names);
  RUN(test_dtype_info);
  RUN(test_op_introspection);
  RUN(test_context_options_init);
  RUN(test_backward_options_init);
  RUN(test_context_create_default);
  RUN(test_context_num_threads);
  RUN(test_context_struct_size_variants);
  RUN(test_context_retain_release);
  RUN(test_context_outlives_release);
  RUN(test_context_of_tensor_after_caller_release);
  RUN(test_memory_stats);
  RUN(test_two_contexts_independent);
  RUN(test_zeros_ones_full);
  RUN(test_full_conversions);
  RUN(test_scalar);
  RUN(test_create_with_data_all_dtypes);
  RUN(test_create_0dim_shape_null);
  RUN(test_zero_size_dims);
  RUN(test_max_dims);
  RUN(test_shape_query);
  RUN(test_copy_data_and_from);
  RUN(test_copy_from_all_dtypes);
  RUN(test_item_any_ndim);
  RUN(test_detach_shares_data_and_version);
  RUN(test_expand_view_shares_version);
  RUN(test_tensor_retain_release);
  RUN(test_getters_on_null);
  RUN(test_many_create_release);
  RUN_DT(test_op_forward_values, AG_F64);
  RUN_DT(test_op_forward_values, AG_F32);
  return h_finish();
}
