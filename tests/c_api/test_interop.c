/*
 * tests/c_api/test_interop.c - host memory wrapped without copies
 * (ag_tensor_from_buffer): the deleter runs exactly once on every path,
 * zero-copy reads and writes, strided host views through backward (against
 * finite differences), read-only tensors. The layout queries are in
 * test_interop_layout.c, DLPack in test_interop_dlpack.c.
 */
#include "harness.h"

#include <pthread.h>

/* ---- a deleter that counts its calls ------------------------------------------ */

typedef struct counter {
  int calls;
  void *data;        /* what the last call got */
  pthread_t thread;  /* where it ran */
} counter;

static void count_deleter(void *data, void *deleter_ctx) {
  counter *c = (counter *)deleter_ctx;
  c->calls++;
  c->data = data;
  c->thread = pthread_self();
}

/* A wrapped f64 tensor over `data`, counted by `c` (NULL: no deleter). */
static ag_tensor *wrap_f64(ag_context *ctx, double *data, const int64_t *shape, const int64_t *strides,
                           int32_t ndim, counter *c) {
  ag_tensor *t = NULL;
  if (!CHECK_OK(ag_tensor_from_buffer(&t, ctx, AG_F64, shape, strides, ndim, data, c ? count_deleter : NULL, c)))
    return NULL;
  return t;
}

/* ---- the deleter on the success paths ------------------------------------------- */

static void test_deleter_after_release(void) {
  double buf[6] = {1, 2, 3, 4, 5, 6};
  const int64_t shape[2] = {2, 3};
  counter c = {0};
  ag_context *ctx = NEW_CTX();
  ag_tensor *t;
  REQUIRE(ctx);
  t = wrap_f64(ctx, buf, shape, NULL, 2, &c);
  CHECK(t != NULL);
  CHECK(c.calls == 0);
  ag_tensor_release(t);
  CHECK(c.calls == 1);
  CHECK(c.data == buf);
  ag_context_release(ctx);
  CHECK(c.calls == 1);
}

/* Views, a detached copy and a tensor a graph saved all keep the memory. */
static void test_deleter_after_views_and_graph(void) {
  double buf[6] = {1, 2, 3, 4, 5, 6};
  const int64_t shape[2] = {2, 3};
  counter c = {0};
  ag_context *ctx = NEW_CTX();
  ag_tensor *t, *view = NULL, *det = NULL, *sq = NULL, *loss = NULL;
  REQUIRE(ctx);
  t = wrap_f64(ctx, buf, shape, NULL, 2, &c);
  REQUIRE(t);
  CHECK_OK(ag_tensor_requires_grad(t, 1));
  CHECK_OK(ag_op_transpose(&view, t, 0, 1));
  CHECK_OK(ag_tensor_detach(&det, t));
  CHECK_OK(ag_op_mul(&sq, t, t)); /* saves t for backward */
  CHECK_OK(ag_op_sum(&loss, sq));
  ag_tensor_release(sq);
  ag_tensor_release(t);
  ag_context_release(ctx);
  CHECK(c.calls == 0);
  ag_tensor_release(view);
  CHECK(c.calls == 0);
  ag_tensor_release(det);
  CHECK(c.calls == 0);
  /* Backward reads the saved host memory, then frees what it saved. */
  CHECK_OK(ag_backward(loss, NULL, NULL));
  CHECK(c.calls == 1);
  ag_tensor_release(loss);
  CHECK(c.calls == 1);
}

/* The context's handle goes first; ops still run on the tensor. */
static void test_deleter_after_context_release(void) {
  double buf[3] = {1, 2, 3};
  const int64_t shape[1] = {3};
  counter c = {0};
  ag_context *ctx = NEW_CTX();
  ag_tensor *t, *s = NULL;
  REQUIRE(ctx);
  t = wrap_f64(ctx, buf, shape, NULL, 1, &c);
  ag_context_release(ctx);
  REQUIRE(t);
  CHECK_OK(ag_op_sum(&s, t));
  CHECK_CLOSE(ITEM(s), 6.0, 0);
  ag_tensor_release(s);
  CHECK(c.calls == 0);
  ag_tensor_release(t);
  CHECK(c.calls == 1);
}

typedef struct release_job {
  ag_tensor *t;
  pthread_t self;
} release_job;

static void *release_on_thread(void *arg) {
  release_job *job = (release_job *)arg;
  job->self = pthread_self();
  ag_tensor_release(job->t);
  return NULL;
}

static void test_deleter_on_other_thread(void) {
  double buf[4] = {1, 2, 3, 4};
  const int64_t shape[1] = {4};
  counter c = {0};
  ag_context *ctx = NEW_CTX();
  release_job job;
  pthread_t th;
  REQUIRE(ctx);
  job.t = wrap_f64(ctx, buf, shape, NULL, 1, &c);
  ag_context_release(ctx);
  REQUIRE(job.t);
  REQUIRE(pthread_create(&th, NULL, release_on_thread, &job) == 0);
  pthread_join(th, NULL);
  CHECK(c.calls == 1);
  CHECK(c.calls == 1 && pthread_equal(c.thread, job.self));
  CHECK(c.calls == 1 && !pthread_equal(c.thread, pthread_self()));
}

/* ---- the deleter on the failure paths ------------------------------------------- */

/* The call fails with `status`, names `fact`, and ran the deleter once. */
#define CHECK_FAILS_AND_FREES(call, status, fact, c)           \
  do {                                                         \
    (c).calls = 0;                                             \
    CHECK_ERR(call, status, "ag_tensor_from_buffer_flags");    \
    CHECK_MSG_HAS(fact);                                       \
    CHECK((c).calls == 1);                                     \
  } while (0)

static void test_deleter_on_failures(void) {
  double buf[6] = {0};
  const int64_t shape[2] = {2, 3}, neg_shape[2] = {2, -3};
  const int64_t neg_strides[2] = {3, -1}, huge_strides[2] = {INT64_MAX / 2, 1};
  counter c = {0};
  ag_tensor *t = NULL;
  ag_context *ctx = NEW_CTX();
  REQUIRE(ctx);
  CHECK_FAILS_AND_FREES(ag_tensor_from_buffer_flags(NULL, ctx, AG_F64, shape, NULL, 2, buf, 0, count_deleter, &c),
                        AG_ERR_INVALID_ARGUMENT, "output pointer is NULL", c);
  CHECK_FAILS_AND_FREES(ag_tensor_from_buffer_flags(&t, NULL, AG_F64, shape, NULL, 2, buf, 0, count_deleter, &c),
                        AG_ERR_INVALID_ARGUMENT, "context is NULL", c);
  CHECK_FAILS_AND_FREES(ag_tensor_from_buffer_flags(&t, ctx, 0, shape, NULL, 2, buf, 0, count_deleter, &c),
                        AG_ERR_DTYPE, "dtype 0", c);
  CHECK_FAILS_AND_FREES(ag_tensor_from_buffer_flags(&t, ctx, 99, shape, NULL, 2, buf, 0, count_deleter, &c),
                        AG_ERR_DTYPE, "dtype 99", c);
  CHECK_FAILS_AND_FREES(ag_tensor_from_buffer_flags(&t, ctx, AG_F64, shape, neg_strides, 2, buf, 0, count_deleter,
                                                    &c),
                        AG_ERR_UNSUPPORTED, "stride -1 of dim 1 is negative", c);
  CHECK_FAILS_AND_FREES(ag_tensor_from_buffer_flags(&t, ctx, AG_F64, shape, NULL, 2, NULL, 0, count_deleter, &c),
                        AG_ERR_INVALID_ARGUMENT, "data is NULL but the tensor has 6 elements", c);
  CHECK_FAILS_AND_FREES(ag_tensor_from_buffer_flags(&t, ctx, AG_F64, shape, NULL, 2, buf, 6, count_deleter, &c),
                        AG_ERR_INVALID_ARGUMENT, "flags 6", c);
  CHECK_FAILS_AND_FREES(ag_tensor_from_buffer_flags(&t, ctx, AG_F64, shape, NULL, 17, buf, 0, count_deleter, &c),
                        AG_ERR_INVALID_ARGUMENT, "ndim 17", c);
  CHECK_FAILS_AND_FREES(ag_tensor_from_buffer_flags(&t, ctx, AG_F64, NULL, NULL, 2, buf, 0, count_deleter, &c),
                        AG_ERR_INVALID_ARGUMENT, "shape is NULL", c);
  CHECK_FAILS_AND_FREES(ag_tensor_from_buffer_flags(&t, ctx, AG_F64, neg_shape, NULL, 2, buf, 0, count_deleter,
                                                    &c),
                        AG_ERR_INVALID_ARGUMENT, "size -3 of dim 1 is negative", c);
  CHECK_FAILS_AND_FREES(ag_tensor_from_buffer_flags(&t, ctx, AG_F64, shape, huge_strides, 2, buf, 0, count_deleter,
                                                    &c),
                        AG_ERR_OUT_OF_MEMORY, "spans more bytes", c);
  CHECK(t == NULL); /* never written on failure */
  /* The plain entry point takes the same path and names itself. */
  c.calls = 0;
  CHECK_ERR(ag_tensor_from_buffer(NULL, ctx, AG_F64, shape, NULL, 2, buf, count_deleter, &c),
            AG_ERR_INVALID_ARGUMENT, "ag_tensor_from_buffer");
  CHECK(c.calls == 1);
  c.calls = 0;
  CHECK_ERR(ag_tensor_from_buffer(&t, ctx, AG_F64, shape, neg_strides, 2, buf, count_deleter, &c),
            AG_ERR_UNSUPPORTED, "ag_tensor_from_buffer");
  CHECK(c.calls == 1);
  /* A NULL deleter is allowed on both paths. */
  CHECK_STATUS(ag_tensor_from_buffer(&t, ctx, 0, shape, NULL, 2, buf, NULL, NULL), AG_ERR_DTYPE);
  CHECK_OK(ag_tensor_from_buffer(&t, ctx, AG_F64, shape, NULL, 2, buf, NULL, NULL));
  ag_tensor_release(t);
  ag_context_release(ctx);
}

/* ---- copies, zero-copy and memory statistics ------------------------------------ */

/* f64 data at an odd address is copied; its deleter runs before the call returns. */
static void test_misaligned_data_is_copied(void) {
  double vals[4] = {1.5, -2, 3.25, 4}, out[4];
  unsigned char *block = (unsigned char *)malloc(sizeof vals + 8);
  unsigned char *odd;
  const int64_t shape[1] = {4};
  counter c = {0};
  ag_context *ctx = NEW_CTX();
  ag_tensor *t = NULL;
  int i;
  REQUIRE(block);
  odd = block + 1;
  memcpy(odd, vals, sizeof vals);
  if (ctx && CHECK_OK(ag_tensor_from_buffer_flags(&t, ctx, AG_F64, shape, NULL, 1, odd, AG_BUFFER_READ_ONLY,
                                                  count_deleter, &c))) {
    CHECK(c.calls == 1);
    CHECK(c.data == odd);
    CHECK(ag_tensor_data(t) != (const void *)odd);
    CHECK((uintptr_t)ag_tensor_data(t) % sizeof(double) == 0);
    CHECK(ag_tensor_is_read_only(t) == 1); /* the copy keeps the flag */
    memset(odd, 0, sizeof vals);           /* no longer ag's business */
    if (READ(t, out, 4) == 4) {
      for (i = 0; i < 4; i++)
        CHECK(out[i] == vals[i]);
    }
    ag_tensor_release(t);
    CHECK(c.calls == 1);
  }
  free(block);
  ag_context_release(ctx);
}

static int64_t bytes_in_use(ag_context *ctx) {
  ag_memory_stats s = AG_MEMORY_STATS_INIT;
  if (!CHECK_OK(ag_context_memory_stats(ctx, &s)))
    return -1;
  return s.bytes_in_use;
}

/* Host memory is the host's: the context's statistics do not count it. */
static void test_memory_stats_exclude_host_memory(void) {
  const int64_t n = 1 << 17, shape[1] = {1 << 17};
  double *big = (double *)calloc((size_t)n, sizeof(double));
  ag_context *ctx = NEW_CTX();
  ag_tensor *t = NULL, *copy = NULL;
  int64_t before;
  if (big && ctx) {
    before = bytes_in_use(ctx);
    CHECK_OK(ag_tensor_from_buffer(&t, ctx, AG_F64, shape, NULL, 1, big, NULL, NULL));
    CHECK(bytes_in_use(ctx) == before);
    CHECK_OK(ag_op_clone(&copy, t)); /* ag's memory is counted */
    CHECK(bytes_in_use(ctx) >= before + n * 8);
    ag_tensor_release(copy);
    ag_tensor_release(t);
  }
  CHECK(big != NULL);
  ag_context_release(ctx);
  free(big);
}

static void test_zero_copy_reads_and_writes(void) {
  double buf[6] = {1, 2, 3, 4, 5, 6}, out[6];
  const int64_t shape[2] = {2, 3};
  counter c = {0};
  ag_context *ctx = NEW_CTX();
  ag_tensor *t, *one = NULL;
  void *w = NULL;
  int i;
  REQUIRE(ctx);
  t = wrap_f64(ctx, buf, shape, NULL, 2, &c);
  one = SCALAR(ctx, AG_F64, 1.0);
  if (t && one) {
    CHECK(ag_tensor_data(t) == (const void *)buf);
    CHECK(ag_tensor_version(t) == 0);
    CHECK(ag_tensor_is_contiguous(t) == 1);
    CHECK(ag_tensor_is_read_only(t) == 0);
    buf[4] = 42; /* the host writes, ag reads */
    if (READ(t, out, 6) == 6)
      CHECK(out[4] == 42);
    CHECK_OK(ag_op_add_(t, one)); /* ag writes, the host reads */
    CHECK(buf[0] == 2 && buf[4] == 43 && buf[5] == 7);
    CHECK(ag_tensor_version(t) == 1);
    CHECK_OK(ag_tensor_data_mut(&w, t));
    CHECK(w == (void *)buf);
    CHECK(ag_tensor_version(t) == 2);
    for (i = 0; i < 6; i++)
      buf[i] = (double)i;
    CHECK_OK(ag_tensor_copy_from(t, out, sizeof out)); /* out: as read above */
    CHECK(buf[0] == 1 && buf[4] == 42 && buf[5] == 6);
    CHECK(ag_tensor_version(t) == 3);
  }
  ag_tensor_release(one);
  ag_tensor_release(t);
  ag_context_release(ctx);
  CHECK(c.calls == 1);
}

/* ---- strided host views through ops and backward --------------------------------- */

/* The views of the gradient test: M (3, 4) read transposed as (4, 3); v (3)
 * broadcast to (4, 3) with stride 0; rows 1 and 3, even columns, of S (5, 6)
 * as (2, 3). */
typedef struct host_views {
  double m[3][4], v[3], s[5][6];
  ag_tensor *mt, *vb, *ss;
} host_views;

/* loss = sum(tanh(mt * vb)) + sum(unsqueeze(ss, 1) * (mt * vb)), broadcast to (2, 4, 3). */
static double views_loss(const host_views *h, ag_tensor **loss_out) {
  ag_tensor *p = NULL, *th = NULL, *a = NULL, *su = NULL, *q = NULL, *b = NULL, *loss = NULL;
  double value = NAN;
  if (CHECK_OK(ag_op_mul(&p, h->mt, h->vb)) && CHECK_OK(ag_op_tanh(&th, p)) && CHECK_OK(ag_op_sum(&a, th)) &&
      CHECK_OK(ag_op_unsqueeze(&su, h->ss, 1)) && CHECK_OK(ag_op_mul(&q, su, p)) && CHECK_OK(ag_op_sum(&b, q)) &&
      CHECK_OK(ag_op_add(&loss, a, b))) {
    value = ITEM(loss);
  }
  ag_tensor_release(p);
  ag_tensor_release(th);
  ag_tensor_release(a);
  ag_tensor_release(su);
  ag_tensor_release(q);
  ag_tensor_release(b);
  if (loss_out)
    *loss_out = loss;
  else
    ag_tensor_release(loss);
  return value;
}

/* (f(x + eps) - f(x - eps)) / (2 eps), perturbing the host's element *x in place. */
static double central_difference(host_views *h, double *x) {
  const double eps = 1e-6, saved = *x;
  double up, down;
  int32_t prev = 1;
  ag_grad_mode_set(0, &prev);
  *x = saved + eps;
  up = views_loss(h, NULL);
  *x = saved - eps;
  down = views_loss(h, NULL);
  *x = saved;
  ag_grad_mode_set(prev, NULL);
  return (up - down) / (2 * eps);
}

static void test_strided_host_views_backward(void) {
  const int64_t mt_shape[2] = {4, 3}, mt_strides[2] = {1, 4};
  const int64_t vb_shape[2] = {4, 3}, vb_strides[2] = {0, 1};
  const int64_t ss_shape[2] = {2, 3}, ss_strides[2] = {12, 2};
  host_views h;
  ag_context *ctx = NEW_CTX();
  ag_tensor *loss = NULL, *gm = NULL, *gv = NULL, *gs = NULL;
  double dm[12], dv[12], ds[6], sum;
  int i, j;
  REQUIRE(ctx);
  for (i = 0; i < 3; i++)
    for (j = 0; j < 4; j++)
      h.m[i][j] = 0.1 * (i * 4 + j) - 0.5;
  for (i = 0; i < 3; i++)
    h.v[i] = 0.7 - 0.4 * i;
  for (i = 0; i < 5; i++)
    for (j = 0; j < 6; j++)
      h.s[i][j] = 0.05 * (i * 6 + j) - 0.6;
  h.mt = wrap_f64(ctx, &h.m[0][0], mt_shape, mt_strides, 2, NULL);
  h.vb = wrap_f64(ctx, h.v, vb_shape, vb_strides, 2, NULL);
  h.ss = wrap_f64(ctx, &h.s[1][0], ss_shape, ss_strides, 2, NULL);
  if (h.mt && h.vb && h.ss && CHECK_OK(ag_tensor_requires_grad(h.mt, 1)) &&
      CHECK_OK(ag_tensor_requires_grad(h.vb, 1)) && CHECK_OK(ag_tensor_requires_grad(h.ss, 1))) {
    CHECK(ag_tensor_is_contiguous(h.mt) == 0);
    CHECK(ag_tensor_is_contiguous(h.vb) == 0);
    CHECK(ag_tensor_is_contiguous(h.ss) == 0);
    views_loss(&h, &loss);
    if (loss && CHECK_OK(ag_backward(loss, NULL, NULL))) {
      gm = GRAD(h.mt);
      gv = GRAD(h.vb);
      gs = GRAD(h.ss);
    }
    ag_tensor_release(loss);
    if (gm && gv && gs && READ(gm, dm, 12) == 12 && READ(gv, dv, 12) == 12 && READ(gs, ds, 6) == 6) {
      /* d/dM[i][j] is the gradient of the transposed view at (j, i). */
      for (i = 0; i < 3; i++)
        for (j = 0; j < 4; j++)
          CHECK_NEAR(dm[j * 3 + i], central_difference(&h, &h.m[i][j]), 1e-6, 1e-8);
      /* v[k] feeds every row of the broadcast: its gradients sum. */
      for (j = 0; j < 3; j++) {
        sum = 0;
        for (i = 0; i < 4; i++)
          sum += dv[i * 3 + j];
        CHECK_NEAR(sum, central_difference(&h, &h.v[j]), 1e-6, 1e-8);
      }
      for (i = 0; i < 2; i++)
        for (j = 0; j < 3; j++)
          CHECK_NEAR(ds[i * 3 + j], central_difference(&h, &h.s[1 + 2 * i][2 * j]), 1e-6, 1e-8);
      /* Elements outside the slice are not read at all. */
      CHECK(central_difference(&h, &h.s[2][0]) == 0);
      CHECK(central_difference(&h, &h.s[1][1]) == 0);
      CHECK(central_difference(&h, &h.s[0][0]) == 0);
    }
    CHECK(gm && gv && gs);
  }
  ag_tensor_release(gm);
  ag_tensor_release(gv);
  ag_tensor_release(gs);
  ag_tensor_release(h.mt);
  ag_tensor_release(h.vb);
  ag_tensor_release(h.ss);
  ag_context_release(ctx);
}

/* ---- read-only ------------------------------------------------------------------ */

#define READ_ONLY_MSG "tensor is read-only (imported with AG_BUFFER_READ_ONLY / DLPack read-only flag)"

static void test_read_only_refuses_writes(void) {
  double buf[6] = {1, 2, 3, 4, 5, 6}, src[6] = {0}, out[6];
  const int64_t shape[2] = {2, 3}, c3[1] = {3};
  counter c = {0};
  ag_context *ctx = NEW_CTX();
  ag_tensor *t = NULL, *view = NULL, *det = NULL, *one = NULL, *y = NULL, *x = NULL, *rm = NULL, *rv = NULL;
  ag_tensor *bn = NULL;
  void *w = NULL;
  REQUIRE(ctx);
  one = SCALAR(ctx, AG_F64, 1.0);
  if (CHECK_OK(ag_tensor_from_buffer_flags(&t, ctx, AG_F64, shape, NULL, 2, buf, AG_BUFFER_READ_ONLY,
                                           count_deleter, &c)) &&
      one && CHECK_OK(ag_op_transpose(&view, t, 0, 1)) && CHECK_OK(ag_tensor_detach(&det, t))) {
    CHECK(ag_tensor_is_read_only(t) == 1);
    CHECK(ag_tensor_is_read_only(view) == 1);
    CHECK(ag_tensor_is_read_only(det) == 1);
    CHECK_ERR(ag_op_add_(t, one), AG_ERR_UNSUPPORTED, "ag_op_add_");
    CHECK_STR(ag_last_error_message(), "[ag_op_add_] " READ_ONLY_MSG);
    CHECK_ERR(ag_op_zero_(view), AG_ERR_UNSUPPORTED, "ag_op_zero_");
    CHECK_MSG_HAS(READ_ONLY_MSG);
    CHECK_ERR(ag_op_mul_(det, one), AG_ERR_UNSUPPORTED, "ag_op_mul_");
    CHECK_ERR(ag_op_copy_(view, one), AG_ERR_UNSUPPORTED, "ag_op_copy_");
    CHECK_ERR(ag_op_clamp_(t, 0, 1), AG_ERR_UNSUPPORTED, "ag_op_clamp_");
    CHECK_ERR(ag_op_fill_(det, 3), AG_ERR_UNSUPPORTED, "ag_op_fill_");
    CHECK_ERR(ag_tensor_copy_from(t, src, sizeof src), AG_ERR_UNSUPPORTED, "ag_tensor_copy_from");
    CHECK_MSG_HAS(READ_ONLY_MSG);
    CHECK_ERR(ag_tensor_copy_from(view, src, sizeof src), AG_ERR_UNSUPPORTED, "ag_tensor_copy_from");
    CHECK_ERR(ag_tensor_data_mut(&w, t), AG_ERR_UNSUPPORTED, "ag_tensor_data_mut");
    CHECK_MSG_HAS(READ_ONLY_MSG);
    CHECK_ERR(ag_tensor_data_mut(&w, view), AG_ERR_UNSUPPORTED, "ag_tensor_data_mut");
    CHECK(w == NULL);
    CHECK(ag_tensor_version(t) == 0);
    CHECK(buf[0] == 1 && buf[5] == 6);
    /* Out-of-place ops read it; their results are ag's own and writable. */
    if (CHECK_OK(ag_op_mul(&y, view, view)) && READ(y, out, 6) == 6) {
      CHECK(out[0] == 1 && out[1] == 16 && out[5] == 36);
      CHECK(ag_tensor_is_read_only(y) == 0);
      CHECK_OK(ag_op_add_(y, one));
    }
  }
  /* Batch norm does not update read-only running statistics. */
  {
    double stats[3] = {0, 0, 0};
    const int64_t xs[2] = {4, 3};
    const double xv[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    x = MAKE(ctx, AG_F64, xs, 2, xv);
    if (x && CHECK_OK(ag_tensor_from_buffer_flags(&rm, ctx, AG_F64, c3, NULL, 1, stats, AG_BUFFER_READ_ONLY, NULL,
                                                  NULL))) {
      rv = MAKE(ctx, AG_F64, c3, 1, NULL);
      CHECK_ERR(ag_op_batch_norm(&bn, x, rm, rv, NULL, NULL, 1, 0.1, 1e-5), AG_ERR_UNSUPPORTED, "ag_op_batch_norm");
      CHECK_MSG_HAS("running_mean is read-only");
      CHECK(stats[0] == 0);
      CHECK_OK(ag_op_batch_norm(&bn, x, rm, rv, NULL, NULL, 0, 0.1, 1e-5)); /* eval only reads them */
    }
  }
  ag_tensor_release(bn);
  ag_tensor_release(x);
  ag_tensor_release(rm);
  ag_tensor_release(rv);
  ag_tensor_release(y);
  ag_tensor_release(one);
  ag_tensor_release(view);
  ag_tensor_release(det);
  ag_tensor_release(t);
  ag_context_release(ctx);
  CHECK(c.calls == 1);
}

/* ---- ag never reuses host memory as scratch --------------------------------------- */

/* Replaces the gradient SumBackward produced with a tensor over the host's
 * buffer (ag takes over the new reference). */
static ag_status host_gradient_hook(void *user_data, ag_tensor **grads, int32_t num_grads,
                                    const ag_tensor *const *other, int32_t num_other) {
  const int64_t shape[1] = {3};
  ag_context *ctx = NULL;
  ag_status st;
  if (num_grads != 1 || grads[0] == NULL || num_other != 1)
    return AG_ERR_INVALID_ARGUMENT;
  st = ag_tensor_context(&ctx, other[0]);
  if (st != AG_OK)
    return st;
  st = ag_tensor_from_buffer(&grads[0], ctx, AG_F64, shape, NULL, 1, user_data, NULL, NULL);
  ag_context_release(ctx);
  return st;
}

/* Backward formulas write into gradients nobody else sees (MulBackward here
 * multiplies its incoming gradient in place); one over host memory is seen
 * by the host and stays as it was. */
static void test_host_gradient_is_not_scratch(void) {
  double host_grad[3] = {5, 6, 7}, g[3];
  const int64_t shape[1] = {3};
  const double xv[3] = {1, 2, 3}, wv[3] = {10, 20, 30};
  ag_context *ctx = NEW_CTX();
  ag_tensor *x = NULL, *w = NULL, *p = NULL, *loss = NULL, *gx = NULL;
  REQUIRE(ctx);
  x = LEAF(ctx, AG_F64, shape, 1, xv);
  w = MAKE(ctx, AG_F64, shape, 1, wv);
  if (x && w && CHECK_OK(ag_op_mul(&p, x, w)) && CHECK_OK(ag_op_sum(&loss, p)) &&
      CHECK_OK(ag_tensor_register_node_post_hook(NULL, loss, host_gradient_hook, host_grad, NULL)) &&
      CHECK_OK(ag_backward(loss, NULL, NULL))) {
    CHECK(host_grad[0] == 5 && host_grad[1] == 6 && host_grad[2] == 7);
    gx = GRAD(x);
    /* d/dx = host_grad * w */
    if (gx && READ(gx, g, 3) == 3)
      CHECK(g[0] == 50 && g[1] == 120 && g[2] == 210);
  }
  ag_tensor_release(gx);
  ag_tensor_release(loss);
  ag_tensor_release(p);
  ag_tensor_release(w);
  ag_tensor_release(x);
  ag_context_release(ctx);
}

int main(int argc, char **argv) {
  h_init(argc, argv);
  RUN(test_deleter_after_release);
  RUN(test_deleter_after_views_and_graph);
  RUN(test_deleter_after_context_release);
  RUN(test_deleter_on_other_thread);
  RUN(test_deleter_on_failures);
  RUN(test_misaligned_data_is_copied);
  RUN(test_memory_stats_exclude_host_memory);
  RUN(test_zero_copy_reads_and_writes);
  RUN(test_strided_host_views_backward);
  RUN(test_read_only_refuses_writes);
  RUN(test_host_gradient_is_not_scratch);
  return h_finish();
}
