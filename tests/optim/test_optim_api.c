/*
 * The optimizer API's rules beside the numerics (test_optim_torch.c has
 * those): argument checks with messages, parameter groups with their own
 * hyper-parameters, zero_grad, versions, read-only parameters, lr get/set,
 * state names.
 */
#include "../c_api/harness.h"

static ag_tensor *leaf(ag_context *ctx, ag_dtype dt, const double *v, int64_t n) {
  ag_tensor *t = NULL;
  float f[16];
  for (int64_t i = 0; i < n; ++i) f[i] = (float)v[i];
  ag_tensor_create(&t, ctx, dt, &n, 1, dt == AG_F32 ? (const void *)f : (const void *)v);
  ag_tensor_requires_grad(t, 1);
  return t;
}

static void set_grad(ag_tensor *p, ag_context *ctx, ag_dtype dt, const double *v, int64_t n) {
  ag_tensor *g = leaf(ctx, dt, v, n);
  ag_tensor *d = NULL;
  ag_tensor_detach(&d, g);
  CHECK_OK(ag_tensor_set_grad(p, d));
  ag_tensor_release(d);
  ag_tensor_release(g);
}

static double at(ag_tensor *t, int i) {
  double v[16];
  float f[16];
  if (ag_tensor_dtype(t) == AG_F32) {
    ag_tensor_copy_data(t, f, sizeof f);
    return f[i];
  }
  ag_tensor_copy_data(t, v, sizeof v);
  return v[i];
}

/* Two groups, SGD with their own lr: p -= lr * g in each. */
static void test_param_groups(ag_dtype dt) {
  ag_context *ctx = NULL;
  REQUIRE_OK(ag_context_create(&ctx, NULL));
  const double v[2] = {1.0, -2.0}, g[2] = {0.5, 0.25};
  ag_tensor *a = leaf(ctx, dt, v, 2), *b = leaf(ctx, dt, v, 2);
  ag_optimizer *opt = NULL;
  ag_optimizer_options o = AG_OPTIMIZER_OPTIONS_INIT;
  o.lr = 0.1;
  REQUIRE_OK(ag_optimizer_create(&opt, AG_OPTIM_SGD, &o));
  CHECK_OK(ag_optimizer_add_param_group(opt, &a, 1, NULL));
  o.lr = 1.0;
  CHECK_OK(ag_optimizer_add_param_group(opt, &b, 1, &o));
  CHECK(ag_optimizer_num_groups(opt) == 2);
  CHECK(ag_optimizer_num_params(opt) == 2);
  double lr = 0;
  CHECK_OK(ag_optimizer_get_lr(opt, 0, &lr));
  CHECK(lr == 0.1);
  CHECK_OK(ag_optimizer_get_lr(opt, 1, &lr));
  CHECK(lr == 1.0);
  set_grad(a, ctx, dt, g, 2);
  set_grad(b, ctx, dt, g, 2);
  const int64_t va = ag_tensor_version(a);
  CHECK_OK(ag_optimizer_step(opt));
  CHECK(ag_tensor_version(a) == va + 1);
  CHECK_CLOSE(at(a, 0), 1.0 - 0.1 * 0.5, 1e-7);
  CHECK_CLOSE(at(b, 1), -2.0 - 1.0 * 0.25, 1e-7);
  /* set_lr for all groups; a second step with the gradients still there. */
  CHECK_OK(ag_optimizer_set_lr(opt, -1, 0.5));
  CHECK_OK(ag_optimizer_get_lr(opt, 0, &lr));
  CHECK(lr == 0.5);
  CHECK_OK(ag_optimizer_step(opt));
  CHECK_CLOSE(at(a, 0), 1.0 - 0.6 * 0.5, 1e-6);
  /* zero_grad: gradients gone, the next step changes nothing. */
  CHECK_OK(ag_optimizer_zero_grad(opt));
  ag_tensor *gr = (ag_tensor *)1;
  CHECK_OK(ag_tensor_grad(&gr, a));
  CHECK(gr == NULL);
  const int64_t v1 = ag_tensor_version(a);
  CHECK_OK(ag_optimizer_step(opt));
  CHECK(ag_tensor_version(a) == v1);
  int64_t step = -1;
  CHECK_OK(ag_optimizer_get_step(opt, 1, &step));
  CHECK(step == 2);
  ag_optimizer_release(opt);
  ag_tensor_release(a);
  ag_tensor_release(b);
  ag_context_release(ctx);
}

static void test_bad_arguments(void) {
  ag_context *ctx = NULL;
  REQUIRE_OK(ag_context_create(&ctx, NULL));
  const double v[2] = {1.0, 2.0};
  ag_tensor *p = leaf(ctx, AG_F32, v, 2);
  ag_optimizer *opt = NULL;
  ag_optimizer_options o = AG_OPTIMIZER_OPTIONS_INIT;

  CHECK_ERR(ag_optimizer_create(NULL, AG_OPTIM_SGD, NULL), AG_ERR_INVALID_ARGUMENT, "ag_optimizer_create");
  CHECK_ERR(ag_optimizer_create(&opt, 99, NULL), AG_ERR_INVALID_ARGUMENT, "ag_optimizer_create");
  CHECK_MSG_HAS("kind 99");
  o.beta1 = 0.9;
  CHECK_ERR(ag_optimizer_create(&opt, AG_OPTIM_SGD, &o), AG_ERR_INVALID_ARGUMENT, "ag_optimizer_create");
  CHECK_MSG_HAS("SGD has no option beta1");
  ag_optimizer_options_init(&o);
  o.beta2 = 1.0;
  CHECK_ERR(ag_optimizer_create(&opt, AG_OPTIM_ADAM, &o), AG_ERR_INVALID_ARGUMENT, "ag_optimizer_create");
  CHECK_MSG_HAS("beta2");
  ag_optimizer_options_init(&o);
  o.lr = -1.0;
  CHECK_ERR(ag_optimizer_create(&opt, AG_OPTIM_ADAM, &o), AG_ERR_INVALID_ARGUMENT, "ag_optimizer_create");
  ag_optimizer_options_init(&o);
  o.nesterov = 1;
  CHECK_ERR(ag_optimizer_create(&opt, AG_OPTIM_SGD, &o), AG_ERR_INVALID_ARGUMENT, "ag_optimizer_create");
  CHECK_MSG_HAS("nesterov");
  ag_optimizer_options_init(&o);
  o.struct_size = 2;
  CHECK_ERR(ag_optimizer_create(&opt, AG_OPTIM_SGD, &o), AG_ERR_INVALID_ARGUMENT, "ag_optimizer_create");
  CHECK(opt == NULL);

  REQUIRE_OK(ag_optimizer_create(&opt, AG_OPTIM_ADAM, NULL));
  double lr = 0;
  CHECK_ERR(ag_optimizer_get_lr(opt, 0, &lr), AG_ERR_INVALID_ARGUMENT, "ag_optimizer_get_lr"); /* no group yet */
  CHECK_ERR(ag_optimizer_add_param_group(opt, NULL, 1, NULL), AG_ERR_INVALID_ARGUMENT,
            "ag_optimizer_add_param_group");
  ag_tensor *twice[2] = {p, p};
  CHECK_ERR(ag_optimizer_add_param_group(opt, twice, 2, NULL), AG_ERR_INVALID_ARGUMENT,
            "ag_optimizer_add_param_group");
  CHECK_MSG_HAS("params[1] is params[0] again");
  CHECK(ag_optimizer_num_params(opt) == 0);
  /* a non-leaf */
  ag_tensor *y = NULL;
  ag_op_mul(&y, p, p);
  CHECK_ERR(ag_optimizer_add_param_group(opt, &y, 1, NULL), AG_ERR_GRAPH, "ag_optimizer_add_param_group");
  ag_tensor_release(y);
  /* an integer tensor */
  int64_t ints[2] = {1, 2}, two = 2;
  ag_tensor *it = NULL;
  ag_tensor_create(&it, ctx, AG_I64, &two, 1, ints);
  CHECK_ERR(ag_optimizer_add_param_group(opt, &it, 1, NULL), AG_ERR_DTYPE, "ag_optimizer_add_param_group");
  ag_tensor_release(it);
  /* a read-only buffer */
  static float ro_data[2] = {1.0f, 2.0f};
  ag_tensor *ro = NULL;
  CHECK_OK(ag_tensor_from_buffer_flags(&ro, ctx, AG_F32, &two, NULL, 1, ro_data, AG_BUFFER_READ_ONLY, NULL, NULL));
  CHECK_ERR(ag_optimizer_add_param_group(opt, &ro, 1, NULL), AG_ERR_UNSUPPORTED, "ag_optimizer_add_param_group");
  CHECK_MSG_HAS("read-only");
  ag_tensor_release(ro);
  /* a strided view */
  int64_t shape2[2] = {2, 2};
  ag_tensor *m = NULL, *mt = NULL;
  ag_tensor_zeros(&m, ctx, AG_F32, shape2, 2);
  ag_op_transpose(&mt, m, 0, 1);
  CHECK_ERR(ag_optimizer_add_param_group(opt, &mt, 1, NULL), AG_ERR_UNSUPPORTED, "ag_optimizer_add_param_group");
  ag_tensor_release(mt);
  ag_tensor_release(m);

  CHECK_OK(ag_optimizer_add_param_group(opt, &p, 1, NULL));
  CHECK_ERR(ag_optimizer_add_param_group(opt, &p, 1, NULL), AG_ERR_INVALID_ARGUMENT,
            "ag_optimizer_add_param_group");
  CHECK_MSG_HAS("already parameter 0");
  ag_tensor *st = (ag_tensor *)1;
  CHECK_OK(ag_optimizer_get_state(opt, 0, "exp_avg", &st));
  CHECK(st == NULL); /* no step yet */
  CHECK_ERR(ag_optimizer_get_state(opt, 0, "max_exp_avg_sq", &st), AG_ERR_INVALID_ARGUMENT,
            "ag_optimizer_get_state"); /* amsgrad off */
  CHECK_ERR(ag_optimizer_get_state(opt, 0, "sum", &st), AG_ERR_INVALID_ARGUMENT, "ag_optimizer_get_state");
  CHECK_ERR(ag_optimizer_get_state(opt, 1, "exp_avg", &st), AG_ERR_INVALID_ARGUMENT, "ag_optimizer_get_state");
  CHECK_MSG_HAS("param_index 1");
  ag_tensor *wrong = NULL;
  int64_t three = 3;
  ag_tensor_zeros(&wrong, ctx, AG_F32, &three, 1);
  CHECK_ERR(ag_optimizer_set_state(opt, 0, "exp_avg", wrong), AG_ERR_SHAPE, "ag_optimizer_set_state");
  ag_tensor_release(wrong);
  CHECK_ERR(ag_optimizer_set_step(opt, 0, -1), AG_ERR_INVALID_ARGUMENT, "ag_optimizer_set_step");
  CHECK_ERR(ag_optimizer_set_lr(opt, 1, 0.1), AG_ERR_INVALID_ARGUMENT, "ag_optimizer_set_lr");
  CHECK_ERR(ag_optimizer_set_lr(opt, 0, NAN), AG_ERR_INVALID_ARGUMENT, "ag_optimizer_set_lr");
  CHECK_ERR(ag_optimizer_step(NULL), AG_ERR_INVALID_ARGUMENT, "ag_optimizer_step");
  CHECK(ag_optimizer_num_params(NULL) == -1);
  ag_optimizer_release(opt);
  ag_optimizer_release(NULL);

  /* clipping and schedules */
  CHECK_ERR(ag_clip_grad_norm(&p, 1, -1.0, 2.0, NULL), AG_ERR_INVALID_ARGUMENT, "ag_clip_grad_norm");
  CHECK_ERR(ag_clip_grad_norm(&p, 1, 1.0, 0.0, NULL), AG_ERR_INVALID_ARGUMENT, "ag_clip_grad_norm");
  double total = -1;
  CHECK_OK(ag_clip_grad_norm(&p, 1, 1.0, 2.0, &total)); /* no gradient: total 0 */
  CHECK(total == 0.0);
  CHECK_ERR(ag_clip_grad_value(NULL, 1, 1.0), AG_ERR_INVALID_ARGUMENT, "ag_clip_grad_value");
  CHECK_ERR(ag_lr_step_decay(0.1, 0, 0, 0.5, &lr), AG_ERR_INVALID_ARGUMENT, "ag_lr_step_decay");
  CHECK_ERR(ag_lr_cosine_annealing(0.1, 0.0, -1, 10, &lr), AG_ERR_INVALID_ARGUMENT, "ag_lr_cosine_annealing");
  CHECK_ERR(ag_lr_linear(0.1, 0, 0.0, 1.0, 10, &lr), AG_ERR_INVALID_ARGUMENT, "ag_lr_linear");
  ag_tensor_release(p);
  ag_context_release(ctx);
}

/* Stepping with grad mode on records nothing and works on leaves that
 * require grad (the update is outside any graph). */
static void test_step_records_no_graph(void) {
  ag_context *ctx = NULL;
  REQUIRE_OK(ag_context_create(&ctx, NULL));
  const double v[3] = {1.0, 2.0, 3.0};
  ag_tensor *p = leaf(ctx, AG_F64, v, 3);
  ag_tensor *y = NULL, *s = NULL;
  ag_op_mul(&y, p, p);
  ag_op_sum(&s, y);
  CHECK_OK(ag_backward(s, NULL, NULL));
  ag_optimizer *opt = NULL;
  REQUIRE_OK(ag_optimizer_create(&opt, AG_OPTIM_ADAGRAD, NULL));
  CHECK_OK(ag_optimizer_add_param_group(opt, &p, 1, NULL));
  CHECK_OK(ag_optimizer_step(opt));
  CHECK(ag_tensor_is_leaf(p) == 1);
  CHECK(ag_tensor_grad_fn_name(p) != NULL && strcmp(ag_tensor_grad_fn_name(p), "AccumulateGrad") == 0);
  /* Adagrad's first step moves each element by lr (sum = g^2, update lr * g / |g|). */
  CHECK_CLOSE(at(p, 2), 3.0 - 0.01, 1e-9);
  ag_tensor *sum = NULL;
  CHECK_OK(ag_optimizer_get_state(opt, 0, "sum", &sum));
  REQUIRE(sum != NULL);
  CHECK_CLOSE(at(sum, 1), 16.0, 1e-12);
  ag_tensor_release(sum);
  ag_optimizer_release(opt);
  ag_tensor_release(s);
  ag_tensor_release(y);
  ag_tensor_release(p);
  ag_context_release(ctx);
}

int main(int argc, char **argv) {
  h_init(argc, argv);
  RUN_F64_F32(test_param_groups);
  RUN(test_bad_arguments);
  RUN(test_step_records_no_graph);
  return h_finish();
}
