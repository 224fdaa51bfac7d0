/*
 * Trains a model on Fashion-MNIST with ag's Adam, the way PyTorch's reference
 * does it: lr 1e-3, batches of 64 in file order (no shuffle), inputs scaled
 * to [0, 1], PyTorch's default init of nn.Linear and nn.Conv2d (weights and
 * biases uniform in +-1/sqrt(fan_in), i.e. kaiming_uniform with a = sqrt(5))
 * drawn from ag's generator. Prints a progress bar (loss, samples/s), the
 * test accuracy, and saves the parameters as safetensors. Models:
 *   mlp (default)  784-256-256-10, ReLU
 *   cnn            conv 1->16 3x3 pad 1, relu, max_pool 2, conv 16->32 3x3
 *                  pad 1, relu, max_pool 2, linear 32*7*7->10
 * Parameter names are those of the same torch.nn.Sequential's state_dict.
 *
 *   fashion_mnist [--model mlp|cnn] [--data DIR] [--epochs N] [--steps N]
 *                 [--threads N] [--out FILE] [--init-out FILE]
 *                 [--profile FILE] [--check-loss-falls]
 *
 * DIR holds {train,t10k}-{images-idx3,labels-idx1}-ubyte.gz (default: Debian's
 * dataset-fashion-mnist). --steps N stops after N steps (quick mode);
 * --init-out FILE also saves the initial parameters (PyTorch twins can start
 * from them); --profile FILE writes a Chrome trace (Perfetto) of the
 * training steps: forward op calls, backward nodes, optimizer steps
 * (tests/bench/trace_summary.py tabulates it); --check-loss-falls exits 1 unless the mean loss of the last 50
 * steps is below 70% of that of the first 50 (the meson test).
 *
 * Built with FASHION_MNIST_NO_MAIN, this file is the benchmark's trainer
 * (tests/bench/bench_fashion.c).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ag/ag.h"
#include "fashion_data.h"

#define FM_BATCH 64
#define FM_HIDDEN 256
#define FM_LAYERS 3
#define FM_PARAMS (2 * FM_LAYERS) /* weight and bias per layer, both models */

#define FM_MLP 0
#define FM_CNN 1

typedef struct fm_model {
  int kind; /* FM_MLP or FM_CNN */
  ag_context *ctx;
  ag_tensor *params[FM_PARAMS]; /* w1, b1, w2, b2, w3, b3 */
  ag_optimizer *opt;
} fm_model;

static const char *const fm_param_names[2][FM_PARAMS] = {
    {"0.weight", "0.bias", "2.weight", "2.bias", "4.weight", "4.bias"},
    {"0.weight", "0.bias", "3.weight", "3.bias", "7.weight", "7.bias"}};

#define FM_TRY(call)                                                       \
  do {                                                                     \
    if ((call) != AG_OK) {                                                 \
      fprintf(stderr, "%s failed: %s\n", #call, ag_last_error_message()); \
      goto fail;                                                           \
    }                                                                      \
  } while (0)

/* PyTorch's nn.Linear and nn.Conv2d init: weight and bias uniform in
 * +-1/sqrt(fan_in), fan_in = in_features or in_channels * kH * kW. */
static int fm_init(fm_model *m, int kind, int threads, uint64_t seed) {
  static const int64_t shapes[2][FM_LAYERS][4] = {
      {{FM_HIDDEN, FM_IN}, {FM_HIDDEN, FM_HIDDEN}, {FM_CLASSES, FM_HIDDEN}},
      {{16, 1, 3, 3}, {32, 16, 3, 3}, {FM_CLASSES, 32 * 7 * 7}}};
  ag_context_options co = AG_CONTEXT_OPTIONS_INIT;
  ag_optimizer_options oo = AG_OPTIMIZER_OPTIONS_INIT;
  memset(m, 0, sizeof *m);
  m->kind = kind;
  co.num_threads = threads;
  FM_TRY(ag_context_create(&m->ctx, &co));
  FM_TRY(ag_context_manual_seed(m->ctx, seed));
  for (int l = 0; l < FM_LAYERS; ++l) {
    const int64_t *wshape = shapes[kind][l];
    const int32_t ndim = kind == FM_CNN && l < 2 ? 4 : 2;
    int64_t fan_in = 1;
    for (int32_t d = 1; d < ndim; ++d) fan_in *= wshape[d];
    const double bound = 1.0 / sqrt((double)fan_in);
    FM_TRY(ag_op_uniform(&m->params[2 * l], m->ctx, AG_F32, wshape, ndim, -bound, bound));
    FM_TRY(ag_op_uniform(&m->params[2 * l + 1], m->ctx, AG_F32, wshape, 1, -bound, bound));
  }
  for (int i = 0; i < FM_PARAMS; ++i) FM_TRY(ag_tensor_requires_grad(m->params[i], 1));
  oo.lr = 1e-3;
  FM_TRY(ag_optimizer_create(&m->opt, AG_OPTIM_ADAM, &oo));
  FM_TRY(ag_optimizer_add_param_group(m->opt, m->params, FM_PARAMS, NULL));
  return 0;
fail:
  return 1;
}

static int fm_save(const fm_model *m, const char *path) {
  if (ag_safetensors_save(path, fm_param_names[m->kind], (const ag_tensor *const *)m->params, FM_PARAMS, NULL,
                          NULL, 0) != AG_OK) {
    fprintf(stderr, "saving %s failed: %s\n", path, ag_last_error_message());
    return 1;
  }
  return 0;
}

static void fm_free_model(fm_model *m) {
  ag_optimizer_release(m->opt);
  for (int i = 0; i < FM_PARAMS; ++i) ag_tensor_release(m->params[i]);
  ag_context_release(m->ctx);
}

/* Conv 3x3 with padding 1, ReLU, max pooling 2x2. */
static int fm_conv_block(const ag_tensor *x, const ag_tensor *w, const ag_tensor *b, ag_tensor **y) {
  static const int64_t pad[2] = {1, 1}, pool[2] = {2, 2};
  ag_tensor *c = NULL, *a = NULL;
  FM_TRY(ag_op_conv2d(&c, x, w, b, NULL, pad, NULL, 1));
  FM_TRY(ag_op_relu(&a, c));
  FM_TRY(ag_op_max_pool2d(y, a, pool, NULL, NULL, NULL, 0));
  return 0;
fail:
  return 1;
}

/* logits of x (n x 784); intermediates go with the caller's scope. */
static int fm_forward(const fm_model *m, const ag_tensor *x, ag_tensor **logits) {
  ag_tensor *h = NULL, *a = NULL;
  if (m->kind == FM_CNN) {
    const int64_t image[4] = {-1, 1, 28, 28};
    FM_TRY(ag_op_reshape(&a, x, image, 4));
    FM_TRY(fm_conv_block(a, m->params[0], m->params[1], &h) ? AG_ERR_INVALID_ARGUMENT : AG_OK);
    FM_TRY(fm_conv_block(h, m->params[2], m->params[3], &a) ? AG_ERR_INVALID_ARGUMENT : AG_OK);
    FM_TRY(ag_op_flatten(&h, a, 1, -1));
    FM_TRY(ag_op_linear(logits, h, m->params[4], m->params[5]));
    return 0;
  }
  FM_TRY(ag_op_linear(&h, x, m->params[0], m->params[1]));
  FM_TRY(ag_op_relu(&a, h));
  FM_TRY(ag_op_linear(&h, a, m->params[2], m->params[3]));
  FM_TRY(ag_op_relu(&a, h));
  FM_TRY(ag_op_linear(logits, a, m->params[4], m->params[5]));
  return 0;
fail:
  return 1;
}

/* One training step on batch [first, first + 64); writes the loss. */
static int fm_step(fm_model *m, const fm_data *d, int64_t first, double *loss_out) {
  ag_scope *scope = NULL;
  ag_tensor *x = NULL, *y = NULL, *logits = NULL, *loss = NULL;
  if (ag_scope_begin(&scope) != AG_OK) return 1;
  FM_TRY(fm_batch(d, m->ctx, first, FM_BATCH, &x, &y) ? AG_ERR_INVALID_ARGUMENT : AG_OK);
  FM_TRY(fm_forward(m, x, &logits) ? AG_ERR_INVALID_ARGUMENT : AG_OK);
  FM_TRY(ag_op_cross_entropy(&loss, logits, y, AG_REDUCTION_MEAN, AG_IGNORE_INDEX_DEFAULT, 0.0));
  FM_TRY(ag_optimizer_zero_grad(m->opt));
  FM_TRY(ag_backward(loss, NULL, NULL));
  FM_TRY(ag_optimizer_step(m->opt));
  FM_TRY(ag_tensor_item(loss, loss_out));
  ag_scope_end(scope);
  return 0;
fail:
  ag_scope_end(scope);
  return 1;
}

/* Fraction of d classified right, in batches of 1000 with grad mode off. */
static int fm_accuracy(const fm_model *m, const fm_data *d, double *acc) {
  int64_t right = 0;
  int32_t prev = 1;
  ag_grad_mode_set(0, &prev);
  for (int64_t first = 0; first < d->n; first += 1000) {
    const int64_t n = d->n - first < 1000 ? d->n - first : 1000;
    ag_scope *scope = NULL;
    ag_tensor *x = NULL, *y = NULL, *logits = NULL, *pred = NULL;
    int64_t p[1000];
    ag_scope_begin(&scope);
    const int bad = fm_batch(d, m->ctx, first, n, &x, &y) || fm_forward(m, x, &logits) ||
                    ag_op_argmax(&pred, logits, 1, 0) != AG_OK ||
                    ag_tensor_copy_data(pred, p, sizeof p) != AG_OK;
    ag_scope_end(scope);
    if (bad) {
      ag_grad_mode_set(prev, NULL);
      return 1;
    }
    for (int64_t i = 0; i < n; ++i) right += p[i] == d->labels[first + i];
  }
  ag_grad_mode_set(prev, NULL);
  *acc = (double)right / (double)d->n;
  return 0;
}

static double fm_clock(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static double fm_now(void) { return fm_clock(CLOCK_MONOTONIC); }

static void fm_progress(int epoch, int epochs, int64_t step, int64_t steps, double loss, double rate) {
  char bar[31];
  const int filled = (int)(30 * step / (steps > 0 ? steps : 1));
  for (int i = 0; i < 30; ++i) bar[i] = i < filled ? '=' : (i == filled ? '>' : ' ');
  bar[30] = 0;
  fprintf(stderr, "\repoch %d/%d [%s] %5lld/%lld  loss %.4f  %7.0f samples/s", epoch + 1, epochs, bar,
          (long long)step, (long long)steps, loss, rate);
}

typedef struct fm_result {
  int64_t steps;
  double train_seconds; /* steps only, no evaluation */
  double train_cpu_seconds; /* the same in CPU time of the process (all threads) */
  double first_loss, last_loss; /* means over the first and last 50 steps */
  double test_accuracy;
} fm_result;

/* Stops the profiler of m's context and writes its Chrome trace. */
static int fm_write_profile(const fm_model *m, const char *path) {
  ag_profile *profile = NULL;
  if (ag_profiler_stop(&profile, m->ctx) != AG_OK || ag_profile_write_chrome_trace(profile, path) != AG_OK) {
    fprintf(stderr, "profile %s: %s\n", path, ag_last_error_message());
    ag_profile_release(profile);
    return 1;
  }
  fprintf(stderr, "profile of %lld events written to %s\n", (long long)ag_profile_num_events(profile), path);
  ag_profile_release(profile);
  return 0;
}

/* Trains `epochs` epochs (or max_steps steps if > 0) and evaluates. With
 * profile_out set, the training steps (forward calls, backward nodes,
 * optimizer) are profiled into that Chrome trace file. */
static int fm_train(fm_model *m, const fm_data *train, const fm_data *test, int epochs, int64_t max_steps,
                    int progress, const char *profile_out, fm_result *r) {
  const int64_t per_epoch = train->n / FM_BATCH;
  double window[50], first_sum = 0.0;
  int64_t done = 0;
  memset(r, 0, sizeof *r);
  if (profile_out) {
    ag_profiler_options po = AG_PROFILER_OPTIONS_INIT;
    po.record_calls = 1;
    if (ag_profiler_start(m->ctx, &po) != AG_OK) {
      fprintf(stderr, "ag_profiler_start: %s\n", ag_last_error_message());
      return 1;
    }
  }
  for (int ep = 0; ep < epochs && (max_steps <= 0 || done < max_steps); ++ep) {
    double t0 = fm_now(), shown = t0;
    for (int64_t s = 0; s < per_epoch && (max_steps <= 0 || done < max_steps); ++s) {
      double loss = 0.0;
      const double before = fm_now(), cpu_before = fm_clock(CLOCK_PROCESS_CPUTIME_ID);
      if (fm_step(m, train, s * FM_BATCH, &loss)) {
        if (profile_out) fm_write_profile(m, profile_out);
        return 1;
      }
      r->train_seconds += fm_now() - before;
      r->train_cpu_seconds += fm_clock(CLOCK_PROCESS_CPUTIME_ID) - cpu_before;
      if (done < 50) first_sum += loss;
      window[done % 50] = loss;
      ++done;
      if (progress && (fm_now() - shown > 0.2 || s + 1 == per_epoch)) {
        shown = fm_now();
        fm_progress(ep, epochs, s + 1, per_epoch, loss, (double)((s + 1) * FM_BATCH) / (shown - t0));
      }
    }
    if (progress) fputc('\n', stderr);
  }
  if (profile_out && fm_write_profile(m, profile_out)) return 1;
  const int64_t w = done < 50 ? done : 50;
  double last_sum = 0.0;
  for (int64_t i = 0; i < w; ++i) last_sum += window[i];
  r->steps = done;
  r->first_loss = w ? first_sum / (double)w : 0.0;
  r->last_loss = w ? last_sum / (double)w : 0.0;
  return fm_accuracy(m, test, &r->test_accuracy);
}

/* "mlp" or "cnn" as FM_MLP or FM_CNN; -1 for anything else. */
static int fm_model_kind(const char *name) {
  return !strcmp(name, "mlp") ? FM_MLP : !strcmp(name, "cnn") ? FM_CNN : -1;
}

#ifndef FASHION_MNIST_NO_MAIN
int main(int argc, char **argv) {
  const char *dir = "/usr/share/datasets/fashion-mnist", *out = NULL, *init_out = NULL, *profile = NULL;
  int epochs = 2, threads = 1, check = 0, kind = FM_MLP;
  int64_t steps = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--model") && i + 1 < argc && fm_model_kind(argv[i + 1]) >= 0) {
      kind = fm_model_kind(argv[++i]);
    } else if (!strcmp(argv[i], "--data") && i + 1 < argc) {
      dir = argv[++i];
    } else if (!strcmp(argv[i], "--epochs") && i + 1 < argc) {
      epochs = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--steps") && i + 1 < argc) {
      steps = atoll(argv[++i]);
    } else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
      threads = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--out") && i + 1 < argc) {
      out = argv[++i];
    } else if (!strcmp(argv[i], "--init-out") && i + 1 < argc) {
      init_out = argv[++i];
    } else if (!strcmp(argv[i], "--profile") && i + 1 < argc) {
      profile = argv[++i];
    } else if (!strcmp(argv[i], "--check-loss-falls")) {
      check = 1;
    } else {
      fprintf(stderr, "usage: %s [--model mlp|cnn] [--data DIR] [--epochs N] [--steps N] [--threads N] "
                      "[--out FILE] [--init-out FILE] [--profile FILE] [--check-loss-falls]\n", argv[0]);
      return 2;
    }
  }
  if (!out) out = kind == FM_CNN ? "fashion_mnist_cnn.safetensors" : "fashion_mnist_mlp.safetensors";
  if (steps > 0) epochs = (int)((steps * FM_BATCH + 59999) / 60000) + 1;
  fm_data train = {0}, test = {0};
  fm_model m;
  fm_result r;
  int rc = 1;
  if (fm_load(&train, dir, "train") || fm_load(&test, dir, "t10k")) return 1;
  if (fm_init(&m, kind, threads, 0) == 0 && !(init_out && fm_save(&m, init_out)) &&
      fm_train(&m, &train, &test, epochs, steps, 1, profile, &r) == 0) {
    printf("%s: steps %lld  %.3f ms/step  loss %.4f -> %.4f  test accuracy %.4f\n",
           kind == FM_CNN ? "cnn" : "mlp", (long long)r.steps, 1e3 * r.train_seconds / (double)r.steps,
           r.first_loss, r.last_loss, r.test_accuracy);
    if (fm_save(&m, out) == 0) {
      printf("parameters saved to %s\n", out);
      rc = check && !(r.last_loss < 0.7 * r.first_loss);
      if (rc) printf("the loss did not fall enough\n");
    }
  }
  if (m.ctx) fm_free_model(&m);
  fm_free_data(&train);
  fm_free_data(&test);
  return rc;
}
#endif
