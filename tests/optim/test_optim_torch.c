/*
 * Replays the torch.optim fixtures of make_fixtures.py (format there):
 * every optimizer configuration must match PyTorch within 1e-6 (f32) and
 * 1e-12 (f64) after steps 1, 10 and 100 (absolute, or relative where
 * |value| > 1); clipping and schedules likewise.
 * Also: restoring the state and step counts mid-run gives the same bits, and
 * a large parameter gives the same bits at 1 and 4 threads.
 *
 * Usage: test_optim_torch FIXTURES.bin [FILTER]
 */
#include "../c_api/harness.h"

#define N0 37
#define N1 130
#define NTOT (N0 + N1)
#define STEPS 100

static unsigned char *g_blob;
static size_t g_size, g_pos;

static int rd(void *dst, size_t n) {
  if (g_pos + n > g_size) return 0;
  memcpy(dst, g_blob + g_pos, n);
  g_pos += n;
  return 1;
}

static uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

static double uniform(uint64_t seed, uint64_t step, uint64_t param, uint64_t i) {
  const uint64_t x = splitmix64((seed << 40) ^ (step << 20) ^ (param << 16) ^ i);
  return (double)(x >> 11) * 0x1p-52 - 1.0;
}

static const int64_t kShape0[1] = {N0}, kShape1[2] = {10, 13};

/* A tensor of the generator's values for (seed, step, param). */
static ag_tensor *gen_tensor(ag_context *ctx, ag_dtype dt, uint64_t seed, uint64_t step, int param) {
  double vd[N1];
  float vf[N1];
  const int n = param == 0 ? N0 : N1;
  for (int i = 0; i < n; ++i) {
    vd[i] = uniform(seed, step, (uint64_t)param, (uint64_t)i);
    vf[i] = (float)vd[i];
  }
  ag_tensor *t = NULL;
  ag_tensor_create(&t, ctx, dt, param == 0 ? kShape0 : kShape1, param == 0 ? 1 : 2,
                   dt == AG_F32 ? (const void *)vf : (const void *)vd);
  return t;
}

/* Max |params - expected| / max(1, |expected|) over both parameters;
 * expected holds NTOT values of dt. */
static double deviation(ag_tensor *const *params, const unsigned char *expected, ag_dtype dt) {
  double got[NTOT], worst = 0.0;
  float f[N1];
  int off = 0;
  for (int p = 0; p < 2; ++p) {
    const int n = p == 0 ? N0 : N1;
    if (dt == AG_F32) {
      ag_tensor_copy_data(params[p], f, sizeof f);
      for (int i = 0; i < n; ++i) got[off + i] = f[i];
    } else {
      ag_tensor_copy_data(params[p], got + off, (size_t)n * 8);
    }
    off += n;
  }
  for (int i = 0; i < NTOT; ++i) {
    double e;
    if (dt == AG_F32) {
      float ef;
      memcpy(&ef, expected + 4 * (size_t)i, 4);
      e = ef;
    } else {
      memcpy(&e, expected + 8 * (size_t)i, 8);
    }
    /* Absolute below magnitude 1, relative above (one f32 ulp of a
     * parameter near 8 is already 9.5e-7). */
    const double d = fabs(got[i] - e) / (fabs(e) > 1.0 ? fabs(e) : 1.0);
    if (!(d <= worst)) worst = d; /* NaN sticks */
  }
  return worst;
}

typedef struct fx_case {
  char name[48];
  int32_t kind, dtype;
  uint64_t seed;
  ag_optimizer_options opts;
  const unsigned char *expected; /* 3 x NTOT values */
} fx_case;

enum { MAX_CASES = 64 };
static fx_case g_cases[MAX_CASES];
static uint32_t g_ncases, g_nclips, g_nsched;
static size_t g_clip_pos;

static int load(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  fseek(f, 0, SEEK_END);
  g_size = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  g_blob = malloc(g_size);
  if (!g_blob || fread(g_blob, 1, g_size, f) != g_size) {
    fclose(f);
    return 0;
  }
  fclose(f);
  char magic[8];
  uint32_t hdr[5];
  if (!rd(magic, 8) || memcmp(magic, "AGOPTFX1", 8) || !rd(hdr, sizeof hdr)) return 0;
  if (hdr[0] != N0 || hdr[1] != N1 || hdr[2] > MAX_CASES) return 0;
  g_ncases = hdr[2];
  g_nclips = hdr[3];
  g_nsched = hdr[4];
  for (uint32_t c = 0; c < g_ncases; ++c) {
    fx_case *k = &g_cases[c];
    double d[10];
    int32_t flags[4];
    uint32_t zero[2];
    if (!rd(k->name, 48) || !rd(&k->kind, 4) || !rd(&k->dtype, 4) || !rd(&k->seed, 8) || !rd(d, sizeof d) ||
        !rd(flags, sizeof flags) || !rd(zero, sizeof zero))
      return 0;
    k->name[47] = 0;
    ag_optimizer_options_init(&k->opts);
    k->opts.lr = d[0];
    k->opts.momentum = d[1];
    k->opts.dampening = d[2];
    k->opts.weight_decay = d[3];
    k->opts.beta1 = d[4];
    k->opts.beta2 = d[5];
    k->opts.eps = d[6];
    k->opts.alpha = d[7];
    k->opts.lr_decay = d[8];
    k->opts.initial_accumulator_value = d[9];
    k->opts.nesterov = flags[0];
    k->opts.amsgrad = flags[1];
    k->opts.centered = flags[2];
    k->opts.maximize = flags[3];
    k->opts.zero_fields = zero[0];
    k->expected = g_blob + g_pos;
    g_pos += 3 * NTOT * (k->dtype == AG_F32 ? 4u : 8u);
    if (g_pos > g_size) return 0;
  }
  g_clip_pos = g_pos;
  return 1;
}

/* Runs steps [from, to] of case k on params with opt. */
static int run_steps(const fx_case *k, ag_context *ctx, ag_optimizer *opt, ag_tensor **params, int from, int to,
                     double *worst) {
  static const int checkpoints[3] = {1, 10, 100};
  for (int t = from; t <= to; ++t) {
    for (int p = 0; p < 2; ++p) {
      ag_tensor *g = (p == 1 && t % 3 == 0) ? NULL : gen_tensor(ctx, k->dtype, k->seed, (uint64_t)t, p);
      if (!CHECK_OK(ag_tensor_set_grad(params[p], g))) return 0;
      ag_tensor_release(g);
    }
    const int64_t v0 = ag_tensor_version(params[0]);
    if (!CHECK_OK(ag_optimizer_step(opt))) return 0;
    CHECK(ag_tensor_version(params[0]) > v0);
    for (int c = 0; c < 3; ++c) {
      if (checkpoints[c] != t) continue;
      const double d = deviation(params, k->expected + (size_t)c * NTOT * (k->dtype == AG_F32 ? 4 : 8), k->dtype);
      if (d > *worst || d != d) *worst = d;
    }
  }
  return 1;
}

static void test_cases_match_torch(void) {
  REQUIRE(g_ncases > 0);
  for (uint32_t c = 0; c < g_ncases; ++c) {
    const fx_case *k = &g_cases[c];
    ag_context *ctx = NULL;
    REQUIRE_OK(ag_context_create(&ctx, NULL));
    ag_tensor *params[2] = {gen_tensor(ctx, k->dtype, k->seed, 0, 0), gen_tensor(ctx, k->dtype, k->seed, 0, 1)};
    ag_tensor_requires_grad(params[0], 1);
    ag_tensor_requires_grad(params[1], 1);
    ag_optimizer *opt = NULL;
    double worst = 0.0;
    if (CHECK_OK(ag_optimizer_create(&opt, k->kind, &k->opts)) &&
        CHECK_OK(ag_optimizer_add_param_group(opt, params, 2, NULL))) {
      run_steps(k, ctx, opt, params, 1, STEPS, &worst);
    }
    const double tol = k->dtype == AG_F32 ? 1e-6 : 1e-12;
    printf("# %-22s %s  max |ag - torch| / max(1, |torch|) = %.3g\n", k->name, ag_dtype_name(k->dtype), worst);
    if (!CHECK(worst <= tol)) printf("# FAIL case %s %s\n", k->name, ag_dtype_name(k->dtype));
    ag_optimizer_release(opt);
    ag_tensor_release(params[0]);
    ag_tensor_release(params[1]);
    ag_context_release(ctx);
  }
}

static const char *kStateNames[] = {"momentum_buffer", "exp_avg", "exp_avg_sq", "max_exp_avg_sq",
                                    "square_avg",      "grad_avg", "sum"};

/* 50 steps, then a fresh optimizer (params copied, state and steps restored)
 * runs steps 51..100: the same bits as without the restart. */
static void test_state_restore(void) {
  for (uint32_t c = 0; c < g_ncases; ++c) {
    const fx_case *k = &g_cases[c];
    ag_context *ctx = NULL;
    REQUIRE_OK(ag_context_create(&ctx, NULL));
    ag_tensor *a[2] = {gen_tensor(ctx, k->dtype, k->seed, 0, 0), gen_tensor(ctx, k->dtype, k->seed, 0, 1)};
    ag_tensor *b[2] = {gen_tensor(ctx, k->dtype, k->seed, 0, 0), gen_tensor(ctx, k->dtype, k->seed, 0, 1)};
    ag_optimizer *oa = NULL, *ob = NULL, *oc = NULL;
    double worst = 0.0;
    for (int p = 0; p < 2; ++p) {
      ag_tensor_requires_grad(a[p], 1);
      ag_tensor_requires_grad(b[p], 1);
    }
    CHECK_OK(ag_optimizer_create(&oa, k->kind, &k->opts));
    CHECK_OK(ag_optimizer_create(&ob, k->kind, &k->opts));
    CHECK_OK(ag_optimizer_add_param_group(oa, a, 2, NULL));
    CHECK_OK(ag_optimizer_add_param_group(ob, b, 2, NULL));
    run_steps(k, ctx, oa, a, 1, STEPS, &worst);
    run_steps(k, ctx, ob, b, 1, 50, &worst);
    /* Restart: new parameter tensors with b's values, new optimizer. */
    ag_tensor *c2[2];
    for (int p = 0; p < 2; ++p) {
      ag_tensor *d = NULL;
      ag_tensor_detach(&d, b[p]);
      ag_op_clone(&c2[p], d);
      ag_tensor_release(d);
      ag_tensor_requires_grad(c2[p], 1);
    }
    CHECK_OK(ag_optimizer_create(&oc, k->kind, &k->opts));
    CHECK_OK(ag_optimizer_add_param_group(oc, c2, 2, NULL));
    for (int p = 0; p < 2; ++p) {
      int64_t step = -1;
      CHECK_OK(ag_optimizer_get_step(ob, p, &step));
      CHECK(step == (p == 0 ? 50 : 34));
      CHECK_OK(ag_optimizer_set_step(oc, p, step));
      for (size_t s = 0; s < sizeof kStateNames / sizeof *kStateNames; ++s) {
        ag_tensor *st = NULL;
        if (ag_optimizer_get_state(ob, p, kStateNames[s], &st) != AG_OK) continue; /* not kept by this kind */
        if (st) CHECK_OK(ag_optimizer_set_state(oc, p, kStateNames[s], st));
        ag_tensor_release(st);
      }
    }
    run_steps(k, ctx, oc, c2, 51, STEPS, &worst);
    /* a (uninterrupted) and c2 (restored) hold the same bits. */
    for (int p = 0; p < 2; ++p) {
      unsigned char x[N1 * 8], y[N1 * 8];
      const size_t bytes = (size_t)ag_tensor_numel(a[p]) * ag_dtype_size(k->dtype);
      ag_tensor_copy_data(a[p], x, sizeof x);
      ag_tensor_copy_data(c2[p], y, sizeof y);
      if (!CHECK(memcmp(x, y, bytes) == 0)) printf("# restore differs: %s param %d\n", k->name, p);
    }
    ag_optimizer_release(oa);
    ag_optimizer_release(ob);
    ag_optimizer_release(oc);
    for (int p = 0; p < 2; ++p) {
      ag_tensor_release(a[p]);
      ag_tensor_release(b[p]);
      ag_tensor_release(c2[p]);
    }
    ag_context_release(ctx);
  }
}

static void test_clipping_matches_torch(void) {
  g_pos = g_clip_pos;
  double worst_total = 0.0, worst_grad = 0.0;
  for (uint32_t c = 0; c < g_nclips; ++c) {
    double hdr[2], total_expected;
    uint32_t dt_pad[2];
    uint64_t seed;
    REQUIRE(rd(hdr, sizeof hdr) && rd(dt_pad, sizeof dt_pad) && rd(&seed, 8) && rd(&total_expected, 8));
    const ag_dtype dt = (ag_dtype)dt_pad[0];
    const unsigned char *expected = g_blob + g_pos;
    g_pos += NTOT * (dt == AG_F32 ? 4u : 8u);
    REQUIRE(g_pos <= g_size);
    ag_context *ctx = NULL;
    REQUIRE_OK(ag_context_create(&ctx, NULL));
    ag_tensor *params[2], *grads[2];
    for (int p = 0; p < 2; ++p) {
      params[p] = gen_tensor(ctx, dt, seed, 0, p);
      ag_tensor_requires_grad(params[p], 1);
      ag_tensor *g = gen_tensor(ctx, dt, seed, 1, p);
      CHECK_OK(ag_tensor_set_grad(params[p], g));
      ag_tensor_release(g);
    }
    double total = -1.0;
    if (hdr[1] < 0) {
      CHECK_OK(ag_clip_grad_value(params, 2, hdr[0]));
      total = 0.0;
    } else {
      CHECK_OK(ag_clip_grad_norm(params, 2, hdr[0], hdr[1], &total));
    }
    const double rel = fabs(total - total_expected) / (fabs(total_expected) > 1 ? fabs(total_expected) : 1);
    if (rel > worst_total) worst_total = rel;
    for (int p = 0; p < 2; ++p) ag_tensor_grad(&grads[p], params[p]);
    const double d = deviation(grads, expected, dt);
    if (d > worst_grad || d != d) worst_grad = d;
    CHECK(rel <= 1e-6);
    CHECK(d <= (dt == AG_F32 ? 1e-6 : 1e-12));
    for (int p = 0; p < 2; ++p) {
      ag_tensor_release(grads[p]);
      ag_tensor_release(params[p]);
    }
    ag_context_release(ctx);
  }
  printf("# clipping: max relative deviation of the total norm %.3g, of the clipped gradients %.3g\n", worst_total,
         worst_grad);
}

static void test_schedules_match_torch(void) {
  double worst = 0.0;
  for (uint32_t s = 0; s < g_nsched; ++s) {
    int32_t kind_steps[2];
    double p[4];
    REQUIRE(rd(kind_steps, sizeof kind_steps) && rd(p, sizeof p));
    for (int32_t t = 0; t < kind_steps[1]; ++t) {
      double expected, got = -1.0;
      REQUIRE(rd(&expected, 8));
      if (kind_steps[0] == 1) {
        CHECK_OK(ag_lr_step_decay(p[0], t, (int64_t)p[1], p[2], &got));
      } else if (kind_steps[0] == 2) {
        CHECK_OK(ag_lr_cosine_annealing(p[0], p[2], t, (int64_t)p[1], &got));
      } else {
        CHECK_OK(ag_lr_linear(p[0], t, p[1], p[2], (int64_t)p[3], &got));
      }
      const double rel = fabs(got - expected) / p[0];
      if (rel > worst) worst = rel;
      if (!CHECK(rel <= 1e-6)) printf("# schedule %d step %d: ag %.17g torch %.17g\n", kind_steps[0], t, got, expected);
    }
  }
  printf("# schedules: max deviation relative to base_lr %.3g\n", worst);
}

/* A parameter large enough to be split into parallel chunks: the same bits at 1 and 4 threads. */
static void test_threads_bitwise(void) {
  const int64_t n = 300001;
  const int kinds[5] = {AG_OPTIM_SGD, AG_OPTIM_ADAM, AG_OPTIM_ADAMW, AG_OPTIM_RMSPROP, AG_OPTIM_ADAGRAD};
  float *init = malloc((size_t)n * 4), *grad = malloc((size_t)n * 4), *r1 = malloc((size_t)n * 4),
        *r4 = malloc((size_t)n * 4);
  REQUIRE(init && grad && r1 && r4);
  for (int64_t i = 0; i < n; ++i) {
    init[i] = (float)uniform(7, 0, 0, (uint64_t)i);
    grad[i] = (float)uniform(7, 1, 0, (uint64_t)i);
  }
  for (int k = 0; k < 5; ++k) {
    for (int threads = 1; threads <= 4; threads += 3) {
      ag_context_options co = AG_CONTEXT_OPTIONS_INIT;
      co.num_threads = threads;
      ag_context *ctx = NULL;
      ag_tensor *p = NULL, *g = NULL;
      ag_optimizer *opt = NULL;
      ag_optimizer_options oo = AG_OPTIMIZER_OPTIONS_INIT;
      if (kinds[k] == AG_OPTIM_SGD) oo.momentum = 0.9;
      REQUIRE_OK(ag_context_create(&ctx, &co));
      ag_tensor_create(&p, ctx, AG_F32, &n, 1, init);
      ag_tensor_create(&g, ctx, AG_F32, &n, 1, grad);
      ag_tensor_requires_grad(p, 1);
      CHECK_OK(ag_optimizer_create(&opt, kinds[k], &oo));
      CHECK_OK(ag_optimizer_add_param_group(opt, &p, 1, NULL));
      for (int t = 0; t < 3; ++t) {
        CHECK_OK(ag_tensor_set_grad(p, g));
        CHECK_OK(ag_optimizer_step(opt));
      }
      ag_tensor_copy_data(p, threads == 1 ? r1 : r4, (size_t)n * 4);
      ag_optimizer_release(opt);
      ag_tensor_release(p);
      ag_tensor_release(g);
      ag_context_release(ctx);
    }
    CHECK(memcmp(r1, r4, (size_t)n * 4) == 0);
    CHECK(memcmp(r1, init, (size_t)n * 4) != 0);
  }
  free(init);
  free(grad);
  free(r1);
  free(r4);
}

int main(int argc, char **argv) {
  if (argc < 2 || !load(argv[1])) {
    printf("Bail out! cannot read the fixtures %s\n", argc > 1 ? argv[1] : "(no path given)");
    return 1;
  }
  h_init(argc - 1, argv + 1);
  RUN(test_cases_match_torch);
  RUN(test_state_restore);
  RUN(test_clipping_matches_torch);
  RUN(test_schedules_match_torch);
  RUN(test_threads_bitwise);
  free(g_blob);
  return h_finish();
}
