/*
 * tests/c_api/test_regress_programs.c - replays programs over the C API that
 * a fuzzer once found trouble with (the .bin files of tests/regress, given as arguments),
 * plus the same programs written out as plain calls with checks.
 *
 * The byte format is the API-program fuzz harness's: one byte picks the
 * context's thread count, then each step is an op byte, three tensor slots
 * and the op's own bytes. The replay ends by releasing every handle and the
 * context; the ASan build (detect_leaks=1) fails the executable if anything
 * the program made is left unreachable.
 *
 * lsan_pool_leak.bin: a leaf used by abs, its requires_grad turned off, then
 * passed as the seed of a create_graph backward through that abs. The leaf
 * received a gradient whose graph saved the leaf itself (as the seed) and
 * so owned it: leaf, storage, nodes and the context were never freed.
 */
#include "harness.h"

/* ---- the program interpreter --------------------------------------------------- */

typedef struct {
  const uint8_t *p;
  size_t n;
} In;
static uint8_t u8(In *in) {
  if (!in->n) return 0;
  in->n--;
  return *in->p++;
}
static double f64(In *in) { return (int8_t)u8(in) / 16.0; }
/* (int8_t)byte % m, as the harness computes it */
static int smod(In *in, int m) { return (int8_t)u8(in) % m; }

#define NT 16
typedef ag_status (*un_fn)(ag_tensor **, const ag_tensor *);
typedef ag_status (*bin_fn)(ag_tensor **, const ag_tensor *, const ag_tensor *);
static const un_fn UN[16] = {ag_op_neg,  ag_op_exp,  ag_op_log,   ag_op_tanh, ag_op_sqrt, ag_op_sigmoid,
                             ag_op_relu, ag_op_abs,  ag_op_sum,   ag_op_mean, ag_op_clone, ag_op_gelu,
                             ag_op_sin,  ag_op_reciprocal, ag_op_square, ag_op_erf};
static const bin_fn BIN[12] = {ag_op_add, ag_op_sub, ag_op_mul,   ag_op_div, ag_op_pow, ag_op_maximum,
                               ag_op_matmul, ag_op_atan2, ag_op_bmm, ag_op_dot, ag_op_outer, ag_op_eq};

/* Runs one program; statuses are not checked (the programs pass NULLs and
 * bad shapes on purpose), only that every call returns. Arguments are read
 * left to right. */
static void run_program(const uint8_t *data, size_t size) {
  In in = {data, size};
  ag_context_options o;
  ag_context *ctx = NULL;
  ag_tensor *t[NT] = {0};
  int steps = 0;
  ag_context_options_init(&o);
  o.num_threads = 1 + (u8(&in) & 1);
  if (!CHECK_OK(ag_context_create(&ctx, &o))) return;
  while (in.n && steps++ < 64) {
    const int op = u8(&in) % 14;
    const int a = u8(&in) % NT, b = u8(&in) % NT, c = u8(&in) % NT;
    ag_tensor *out = NULL, *out2 = NULL;
    switch (op) {
      case 0: { /* create */
        int32_t nd = u8(&in) % 5;
        int64_t sh[4], numel = 1;
        double buf[64];
        ag_dtype dt;
        int i;
        for (i = 0; i < nd && i < 4; i++) {
          sh[i] = u8(&in) % 5;
          numel *= sh[i];
        }
        if (nd > 4) nd = 4;
        dt = 1 + u8(&in) % 5; /* includes an invalid dtype */
        for (i = 0; i < 64; i++) buf[i] = f64(&in);
        if (numel <= 8) ag_tensor_create(&out, ctx, dt, nd ? sh : NULL, nd, (u8(&in) & 1) ? buf : NULL);
        break;
      }
      case 1:
        if (t[a]) ag_tensor_requires_grad(t[a], u8(&in) & 1);
        break;
      case 2: UN[u8(&in) % 16](&out, t[a]); break;
      case 3: BIN[u8(&in) % 12](&out, t[a], t[b]); break;
      case 4: {
        ag_backward_options bo;
        const ag_tensor *seed;
        ag_backward_options_init(&bo);
        bo.retain_graph = u8(&in) & 1;
        bo.create_graph = u8(&in) & 1;
        seed = (u8(&in) & 1) ? t[b] : NULL;
        ag_backward(t[a], seed, &bo);
        break;
      }
      case 5: ag_tensor_grad(&out, t[a]); break;
      case 6:
        if (t[a]) {
          ag_tensor_release(t[a]);
          t[a] = NULL;
        }
        break;
      case 7: {
        int64_t sh[3];
        int32_t nd;
        sh[0] = u8(&in) % 4;
        sh[1] = -1 + (int)(u8(&in) % 4);
        sh[2] = 2;
        nd = 1 + u8(&in) % 3;
        ag_op_reshape(&out, t[a], sh, nd);
        break;
      }
      case 8: {
        const int d0 = smod(&in, 3), d1 = smod(&in, 3);
        ag_op_transpose(&out, t[a], d0, d1);
        break;
      }
      case 9: ag_op_add_(t[a], t[b]); break;
      case 10: {
        ag_grad_options go;
        const ag_tensor *outs[1], *ins[2];
        ag_tensor *g[2] = {0};
        int32_t n;
        ag_grad_options_init(&go);
        go.allow_unused = u8(&in) & 1;
        go.create_graph = u8(&in) & 1;
        outs[0] = t[a];
        ins[0] = t[b];
        ins[1] = t[c];
        n = 1 + (u8(&in) & 1);
        if (ag_grad(g, outs, NULL, 1, ins, n, &go) == AG_OK) {
          ag_tensor_release(g[0]);
          ag_tensor_release(g[1]);
        }
        break;
      }
      case 11: ag_op_softmax(&out, t[a], smod(&in, 3)); break;
      case 12: {
        int64_t dims[2];
        int32_t nd, keep;
        dims[0] = smod(&in, 3);
        dims[1] = smod(&in, 3);
        nd = u8(&in) % 3;
        keep = u8(&in) & 1;
        ag_op_sum_dims(&out, t[a], dims, nd, keep);
        break;
      }
      case 13: {
        const int d = smod(&in, 3), keep = u8(&in) & 1;
        ag_op_max_dim(&out, &out2, t[a], d, keep);
        ag_tensor_release(out2);
        break;
      }
    }
    if (out) {
      ag_tensor_release(t[c]);
      t[c] = out;
    }
  }
  for (int i = 0; i < NT; i++) ag_tensor_release(t[i]);
  ag_context_release(ctx);
}

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
    run_program(buf, n);
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

int main(int argc, char **argv) {
  /* arguments: the program files; the test filter comes from AG_TEST_FILTER */
  g_files = (const char *const *)(argv + 1);
  g_nfiles = argc - 1;
  h_init(1, argv);
  RUN(test_replay_regression_programs);
  RUN(test_leaf_without_requires_grad_as_create_graph_seed);
  return h_finish();
}
