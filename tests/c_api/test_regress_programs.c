/*
 * tests/c_api/test_regress_programs.c - replays programs over the C API that
 * the fuzzer (tests/fuzz) once found trouble with (the .bin files of
 * tests/regress, given as arguments), plus some of them written out as plain
 * calls with checks.
 *
 * The programs run through the fuzz harness's own interpreter
 * (tests/fuzz/api_program.c), which checks the contract as it goes and ends
 * by releasing every handle and the context; the ASan build (detect_leaks=1)
 * also fails the executable if anything the program made is left unreachable.
 *
 * lsan_pool_leak.bin: a leaf used by abs, its requires_grad turned off, then
 * passed as the seed of a create_graph backward through that abs. The leaf
 * received a gradient whose graph saved the leaf itself (as the seed) and
 * so owned it: leaf, storage, nodes and the context were never freed.
 *
 * set_grad_self_cycle.bin: ag_tensor_set_grad(x, x) made x its own gradient,
 * so x owned itself and was never freed (with its context).
 *
 * nonleaf_input_grad_cycle.bin: y = lgamma(frac(x)), then a create_graph
 * backward with frac(x) among its inputs. That non-leaf's recorded gradient
 * saved it, a cycle the caller must clear (ABI.md), but set_grad(NULL)
 * refused a non-leaf that did not retain its gradient.
 * nonleaf_input_grad_cycle_in_scope.bin: the same inside a handle scope,
 * whose end released the non-leaf: the interpreter clears it first.
 *
 * reduce_dim_inf_row_index.bin: min_dim of a 0-dim +inf. On Highway's
 * emulated target (the fuzz build's) the row minimum came out as FLT_MAX,
 * and the search for its index read past the row.
 */
#include "harness.h"

#include "api_program.h"

static const char *const *g_files;
static int g_nfiles;

static void test_replay_regression_programs(void) {
  REQUIRE(g_nfiles > 0); /* meson passes the files: none means a broken setup */
  for (int i = 0; i < g_nfiles; i++) {
    static uint8_t buf[1 << 16];
    FILE *f = fopen(g_files[i], "rb");
    size_t n;
    if (!CHECK(f != NULL)) {
      printf("# cannot open %s\n", g_files[i]);
      continue;
    }
    n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    CHECK(n > 0);
    {
      const char *breach = ag_fuzz_run_program(buf, n);
      if (!CHECK(breach == NULL)) printf("# %s: %s\n", g_files[i], breach);
    }
  }
}

/* ---- lsan_pool_leak.bin as plain calls -------------------------------------------- */

static void test_leaf_without_requires_grad_as_create_graph_seed(void) {
  ag_context *ctx = NEW_CTX_THREADS(2);
  ag_tensor *x, *y = NULL, *g = SENT_T;
  ag_backward_options bo;
  REQUIRE(ctx);
  x = SCALAR(ctx, AG_F64, -0.5);
  REQUIRE(x);
  REQUIRE_OK(ag_tensor_requires_grad(x, 1));
  REQUIRE_OK(ag_op_abs(&y, x)); /* the graph now leads to x's accumulator */
  REQUIRE_OK(ag_tensor_requires_grad(x, 0));
  ag_backward_options_init(&bo);
  bo.retain_graph = 1;
  bo.create_graph = 1;
  CHECK_OK(ag_backward(y, x, &bo)); /* x is also the seed, saved by the recorded backward */
  /* x no longer requires grad: it gets none (had it, x.grad would own x) */
  CHECK_OK(ag_tensor_grad(&g, x));
  CHECK(g == NULL);
  if (g != SENT_T) REL(g);
  /* turned on again, the same graph delivers its gradient */
  REQUIRE_OK(ag_tensor_requires_grad(x, 1));
  bo.create_graph = 0;
  CHECK_OK(ag_backward(y, NULL, &bo));
  g = GRAD(x);
  CHECK(g != NULL);
  if (g) CHECK_CLOSE(ITEM(g), -1.0, 0);
  REL(g);
  REL(y);
  REL(x);
  ag_context_release(ctx);
}

/* ---- set_grad_self_cycle.bin as plain calls ------------------------------------------ */

static void test_tensor_cannot_be_its_own_gradient(void) {
  ag_context *ctx = NEW_CTX_THREADS(1);
  ag_tensor *x, *g = SENT_T;
  ag_memory_stats ms = AG_MEMORY_STATS_INIT;
  const int64_t shape[1] = {64}; /* past the bytes kept inside the header: counted below */
  REQUIRE(ctx);
  REQUIRE_OK(ag_tensor_zeros(&x, ctx, AG_F64, shape, 1));
  CHECK_ERR(ag_tensor_set_grad(x, x), AG_ERR_INVALID_ARGUMENT, "ag_tensor_set_grad");
  CHECK_MSG_HAS("its own gradient");
  CHECK_OK(ag_tensor_grad(&g, x));
  CHECK(g == NULL);
  REL(x);
  CHECK_OK(ag_context_memory_stats(ctx, &ms));
  CHECK(ms.bytes_in_use == 0); /* x went */
  ag_context_release(ctx);
}

/* ---- nonleaf_input_grad_cycle.bin as plain calls ------------------------------------- */

static int g_live_blocks, g_destroyed;
static void *count_alloc(uint64_t size, uint64_t align, void *user) {
  (void)user;
  g_live_blocks++;
  return aligned_alloc(align, (size + align - 1) / align * align);
}
static void count_free(void *ptr, uint64_t size, void *user) {
  (void)size;
  (void)user;
  g_live_blocks--;
  free(ptr);
}
static void count_destroy(void *user) {
  (void)user;
  g_destroyed++;
}

static void test_nonleaf_input_gradient_can_be_cleared(void) {
  ag_context_options o;
  ag_context *ctx = NULL;
  ag_tensor *x, *y1 = NULL, *y2 = NULL, *g = SENT_T, *other = NULL;
  const ag_tensor *inputs[1];
  ag_backward_options bo;
  ag_context_options_init(&o);
  o.alloc = count_alloc;
  o.free = count_free;
  o.destroy = count_destroy;
  REQUIRE_OK(ag_context_create(&ctx, &o));
  x = SCALAR(ctx, AG_F32, 2.5);
  REQUIRE(x);
  REQUIRE_OK(ag_tensor_requires_grad(x, 1));
  REQUIRE_OK(ag_op_frac(&y1, x));
  REQUIRE_OK(ag_op_lgamma(&y2, y1)); /* saves y1 */
  /* a non-leaf with no gradient may not be given one */
  CHECK_ERR(ag_tensor_set_grad(y1, NULL), AG_ERR_GRAPH, "ag_tensor_set_grad");
  ag_backward_options_init(&bo);
  bo.create_graph = 1;
  inputs[0] = y1;
  bo.num_inputs = 1;
  bo.inputs = inputs;
  CHECK_OK(ag_backward(y2, NULL, &bo));
  CHECK(ag_tensor_retains_grad(y1) == 0);
  CHECK_OK(ag_tensor_grad(&g, y1)); /* digamma(0.5), recorded: it saved y1 */
  CHECK(g != NULL && g != SENT_T);
  if (g && g != SENT_T) {
    CHECK_CLOSE(ITEM(g), -1.9635100260214235, 1e-6);
    CHECK(ag_tensor_get_requires_grad(g) == 1);
    /* the held gradient may be replaced, like a retained one */
    REQUIRE_OK(ag_tensor_zeros(&other, ctx, AG_F32, NULL, 0));
    CHECK_OK(ag_tensor_set_grad(y1, other));
    REL(other);
    REL(g);
  }
  CHECK_OK(ag_tensor_set_grad(y1, NULL));
  REL(y2);
  REL(y1);
  REL(x);
  ag_context_release(ctx);
  CHECK(g_live_blocks == 0);
  CHECK(g_destroyed == 1);
}

int main(int argc, char **argv) {
  /* arguments: the program files; the test filter comes from AG_TEST_FILTER */
  g_files = (const char *const *)(argv + 1);
  g_nfiles = argc - 1;
  h_init(1, argv);
  RUN(test_replay_regression_programs);
  RUN(test_leaf_without_requires_grad_as_create_graph_seed);
  RUN(test_tensor_cannot_be_its_own_gradient);
  RUN(test_nonleaf_input_gradient_can_be_cleared);
  return h_finish();
}
