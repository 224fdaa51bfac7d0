/*
 * tests/bench/bench_threads.c - what threads buy, kernel family by family.
 *
 *   bench_threads [--threads 1,2] [--only copy,add,...] [--n 1048576]
 *                 [--repeats R] [--idle-us U] [--host | --vs-host]
 *                 [--paired [--block B]] [--calibrate]
 *
 * Families: copy (clone), cast (f32 -> f64), fill, add, tanh, sum, gather
 * (clone of a transposed view), adam (one optimizer step), update (the
 * MLP's p -= lr * g on a 256x784 weight, cache-resident), gemm (512^3),
 * conv2d (8x3x64x64, 16 3x3 filters, forward), mlp (64x784 -> 256 -> 10
 * training step: forward, backward, SGD), small (workload-a-like chain of
 * 200 0-dim ops and its backward), workloads a, b and e of bench_ag
 * (forward, backward and teardown; bench_harness.c builds their graphs) and
 * d (its training step in the linear layout, bench_mlp.c).
 * The elementwise families run on --n elements.
 *
 * One JSON line per family and thread count: {"bench": "threads", "family",
 * "n", "threads", "tasks": "arena"|"host", "idle_us", "median_ns", "min_ns",
 * "ratio_to_t1", "same_bits"}. same_bits compares the result's bytes with
 * those at the first thread count of the list; the program exits 1 when they
 * differ. --idle-us sleeps that long before each timed call (workers asleep
 * again: the cost of waking them). --host runs the contexts on a small host
 * task system (std-C threads, one shared queue) instead of ag's arena.
 * --vs-host times both, in alternating rounds (a loaded machine slows both
 * alike), and prints per family and thread count {"bench": "host_vs_arena",
 * ..., "arena_ns", "host_ns", "ratio", "same_bits"}: the median of the
 * per-round medians, host / arena, and whether both results have the same
 * bytes (exit 1 otherwise).
 * --paired keeps two contexts alive, at the first thread count of the list
 * and at another, and alternates them: each of --repeats rounds runs
 * --block calls on each context in turn (the order rotates every round), the
 * first call of a block untimed (it meets the other context's data in the
 * cache). A slow spell of a shared machine then hits both alike; this is how
 * the 2-thread targets of small graphs (no slower than 1 thread) are
 * measured. Each pair runs twice, the contexts' slots swapped, and a round's
 * ratio is the geometric mean of both orders, which cancels the second
 * slot's own slowness. Use a few hundred rounds: on a 2-vCPU virtual
 * machine, runs of some 30 rounds of a parallel family sometimes show the
 * 2-thread context no faster than 1 thread throughout (its worker not
 * joining), while longer runs do not. JSON lines {"bench":
 * "threads_paired", "family", "n", "threads", "rounds", "block",
 * "median_ns" (all timed calls), "ratio_to_t1" (median over rounds of the
 * slot-balanced ratio to the 1st thread count), "ratio_p25", "ratio_p75",
 * "slot_ratios" (the median ratio with this thread count in the second
 * slot, and with the 1st thread count there), "same_bits"}.
 * --calibrate prints, per kernel class, the ns per element at one thread on
 * 64K elements (in L2) and the grain that implies for src/core/parallel.h.
 */
#define _POSIX_C_SOURCE 200809L

#include "bench_harness.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LIST 16

static int parse_list(const char *s, int64_t *out) {
  int n = 0;
  while (*s && n < MAX_LIST) {
    char *end;
    out[n++] = strtoll(s, &end, 10);
    if (end == s) return -1;
    s = *end == ',' ? end + 1 : end;
  }
  return n;
}

static void sleep_us(int64_t us) {
  struct timespec ts = {(time_t)(us / 1000000), (long)(us % 1000000) * 1000};
  nanosleep(&ts, NULL);
}

/* ------------------------------------------------------------ host task system
 * A small one in the style of game engines' task systems: a fixed set of
 * pthreads pulling item ranges from a mutex-protected job table. Idle
 * workers and a waiting finish() spin for HOST_SPIN_NS before they sleep on
 * a condition variable, so a burst of jobs (the ops of one pass) does not
 * pay a futex wake-up per job; enqueue signals only when someone sleeps. */

typedef struct host_job {
  ag_task_fn fn;
  void *task_ctx;
  int64_t count, min_range, next;
  _Atomic int64_t done; /* written under mu, read by a spinning finish() */
} host_job;

#define HOST_MAX_JOBS 64
#define HOST_SPIN_NS 100000
typedef struct {
  pthread_mutex_t mu;
  pthread_cond_t cv, done_cv;
  host_job jobs[HOST_MAX_JOBS];
  int used[HOST_MAX_JOBS];
  int stop, nthreads, sleepers, finish_sleepers;
  _Atomic uint64_t generation; /* bumped (under mu) by every enqueue */
  pthread_t threads[MAX_LIST];
} host_pool;

/* Claims a range of some job (under mu); 0 when none. */
static int host_claim(host_pool *p, host_job **job, int64_t *b, int64_t *e) {
  for (int j = 0; j < HOST_MAX_JOBS; ++j) {
    host_job *h = &p->jobs[j];
    if (p->used[j] && h->next < h->count) {
      *job = h;
      *b = h->next;
      *e = h->next + h->min_range < h->count ? h->next + h->min_range : h->count;
      h->next = *e;
      return 1;
    }
  }
  return 0;
}

static void host_run(host_pool *p, host_job *job, int64_t b, int64_t e, uint32_t worker) {
  pthread_mutex_unlock(&p->mu);
  job->fn(b, e, worker, job->task_ctx);
  pthread_mutex_lock(&p->mu);
  const int64_t done = atomic_load_explicit(&job->done, memory_order_relaxed) + (e - b);
  atomic_store_explicit(&job->done, done, memory_order_release);
  if (done == job->count && p->finish_sleepers) pthread_cond_broadcast(&p->done_cv);
}

static void *host_worker(void *arg) {
  host_pool *p = arg;
  static uint32_t next_index = 1;
  pthread_mutex_lock(&p->mu);
  const uint32_t me = next_index++;
  while (!p->stop) {
    host_job *job;
    int64_t b, e;
    if (host_claim(p, &job, &b, &e)) {
      host_run(p, job, b, e, me);
      continue;
    }
    const uint64_t seen = atomic_load_explicit(&p->generation, memory_order_relaxed);
    pthread_mutex_unlock(&p->mu);
    const int64_t t0 = now_ns();
    while (atomic_load_explicit(&p->generation, memory_order_relaxed) == seen && now_ns() - t0 < HOST_SPIN_NS) {
    }
    pthread_mutex_lock(&p->mu);
    if (!p->stop && atomic_load_explicit(&p->generation, memory_order_relaxed) == seen) {
      ++p->sleepers;
      pthread_cond_wait(&p->cv, &p->mu);
      --p->sleepers;
    }
  }
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

static void *host_enqueue(ag_task_fn fn, void *task_ctx, int64_t count, int64_t min_range, void *user) {
  host_pool *p = user;
  pthread_mutex_lock(&p->mu);
  int slot = -1;
  for (int j = 0; j < HOST_MAX_JOBS && slot < 0; ++j) {
    if (!p->used[j]) slot = j;
  }
  if (slot < 0 || p->nthreads == 0) { /* no room: run inline, as the contract allows */
    pthread_mutex_unlock(&p->mu);
    fn(0, count, 0, task_ctx);
    return NULL;
  }
  /* Ranges of about count / (4 * threads) items, at least min_range. */
  int64_t range = count / (4 * (p->nthreads + 1));
  if (range < min_range) range = min_range;
  if (range < 1) range = 1;
  host_job *h = &p->jobs[slot];
  h->fn = fn;
  h->task_ctx = task_ctx;
  h->count = count;
  h->min_range = range;
  h->next = 0;
  atomic_store_explicit(&h->done, 0, memory_order_relaxed);
  p->used[slot] = 1;
  atomic_fetch_add_explicit(&p->generation, 1, memory_order_relaxed);
  if (p->sleepers) pthread_cond_broadcast(&p->cv);
  pthread_mutex_unlock(&p->mu);
  return h;
}

static void host_finish(void *handle, void *user) {
  host_pool *p = user;
  host_job *job = handle;
  pthread_mutex_lock(&p->mu);
  while (atomic_load_explicit(&job->done, memory_order_relaxed) < job->count) {
    int64_t b, e;
    if (job->next < job->count) { /* help with our own job first */
      b = job->next;
      e = b + job->min_range < job->count ? b + job->min_range : job->count;
      job->next = e;
      host_run(p, job, b, e, 0);
      continue;
    }
    pthread_mutex_unlock(&p->mu);
    const int64_t t0 = now_ns();
    while (atomic_load_explicit(&job->done, memory_order_acquire) < job->count && now_ns() - t0 < HOST_SPIN_NS) {
    }
    pthread_mutex_lock(&p->mu);
    if (atomic_load_explicit(&job->done, memory_order_relaxed) < job->count) {
      ++p->finish_sleepers;
      pthread_cond_wait(&p->done_cv, &p->mu);
      --p->finish_sleepers;
    }
  }
  p->used[job - p->jobs] = 0;
  pthread_mutex_unlock(&p->mu);
}

static host_pool *host_start(int workers) {
  host_pool *p = xmalloc(sizeof *p);
  memset(p, 0, sizeof *p);
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->cv, NULL);
  pthread_cond_init(&p->done_cv, NULL);
  p->nthreads = workers;
  for (int i = 0; i < workers; ++i) pthread_create(&p->threads[i], NULL, host_worker, p);
  return p;
}

static void host_stop(host_pool *p) {
  pthread_mutex_lock(&p->mu);
  p->stop = 1;
  pthread_cond_broadcast(&p->cv);
  pthread_mutex_unlock(&p->mu);
  for (int i = 0; i < p->nthreads; ++i) pthread_join(p->threads[i], NULL);
  free(p);
}

/* ------------------------------------------------------------ families */

enum { CHAIN_N = 10000, FANIN_K = 1000, FANIN_D = 64 };

typedef struct {
  ag_context *ctx;
  int64_t n;
  ag_tensor *x, *y, *xt, *w1, *w2, *img, *filt, *mx, *mt, *pa, *pb, *p, *s0, *up, *ug;
  ag_optimizer *adam, *sgd;
  /* workloads a (0-dim) and b (16 elements): x, a, b; e: x and its 1000 w_i */
  ag_tensor *chain[2][3], *fx, *fw[FANIN_K];
  mlp_model *d; /* workload d, linear layout */
} fixture;

static ag_tensor *shaped(ag_context *ctx, const int64_t *shape, int nd, uint32_t seed, double lo, double hi) {
  int64_t count = 1;
  for (int i = 0; i < nd; ++i) count *= shape[i];
  ag_tensor *t = det_tensor(ctx, count, seed, lo, hi), *r;
  CK(ag_op_reshape(&r, t, shape, nd));
  ag_tensor_release(t);
  return r;
}

static void fixture_init(fixture *f, ag_context *ctx, int64_t n) {
  memset(f, 0, sizeof *f);
  f->ctx = ctx;
  f->n = n;
  f->x = det_tensor(ctx, n, 1, -2, 2);
  f->y = det_tensor(ctx, n, 2, -2, 2);
  const int64_t t2[2] = {1024, n / 1024 > 0 ? n / 1024 : 1};
  ag_tensor *m = shaped(ctx, t2, 2, 3, -1, 1);
  CK(ag_op_transpose(&f->xt, m, 0, 1));
  ag_tensor_release(m);
  const int64_t g[2] = {512, 512};
  f->w1 = shaped(ctx, g, 2, 4, -1, 1);
  f->w2 = shaped(ctx, g, 2, 5, -1, 1);
  const int64_t is[4] = {8, 3, 64, 64}, fs[4] = {16, 3, 3, 3};
  f->img = shaped(ctx, is, 4, 6, -1, 1);
  f->filt = shaped(ctx, fs, 4, 7, -0.3, 0.3);
  const int64_t xs[2] = {64, 784}, a[2] = {784, 256}, b[2] = {256, 10}, ts[2] = {64, 10};
  f->mx = shaped(ctx, xs, 2, 8, 0, 1);
  f->mt = shaped(ctx, ts, 2, 9, 0, 1);
  f->pa = shaped(ctx, a, 2, 10, -0.05, 0.05);
  f->pb = shaped(ctx, b, 2, 11, -0.05, 0.05);
  CK(ag_tensor_requires_grad(f->pa, 1));
  CK(ag_tensor_requires_grad(f->pb, 1));
  ag_optimizer_options oo = AG_OPTIMIZER_OPTIONS_INIT;
  oo.lr = 0.01;
  CK(ag_optimizer_create(&f->sgd, AG_OPTIM_SGD, &oo));
  ag_tensor *ps[2] = {f->pa, f->pb};
  CK(ag_optimizer_add_param_group(f->sgd, ps, 2, NULL));
  f->p = det_tensor(ctx, n, 12, -1, 1);
  CK(ag_tensor_requires_grad(f->p, 1));
  CK(ag_tensor_set_grad(f->p, f->y));
  CK(ag_optimizer_create(&f->adam, AG_OPTIM_ADAM, NULL));
  CK(ag_optimizer_add_param_group(f->adam, &f->p, 1, NULL));
  const int64_t w0[2] = {256, 784};
  f->up = shaped(ctx, w0, 2, 14, -0.05, 0.05);
  f->ug = shaped(ctx, w0, 2, 15, -1, 1);
  f->s0 = det_tensor(ctx, 1, 13, 0.1, 0.9);
  CK(ag_tensor_requires_grad(f->s0, 1));
  /* bench_ag's inputs of a, b and e */
  CK(ag_tensor_scalar(&f->chain[0][0], ctx, AG_F32, 0.5));
  CK(ag_tensor_scalar(&f->chain[0][1], ctx, AG_F32, 0.9999));
  CK(ag_tensor_scalar(&f->chain[0][2], ctx, AG_F32, 0.0001));
  const int64_t s16[1] = {16};
  f->chain[1][0] = det_tensor(ctx, 16, 1, 0.25, 0.75);
  CK(ag_tensor_full(&f->chain[1][1], ctx, AG_F32, s16, 1, 0.9999));
  CK(ag_tensor_full(&f->chain[1][2], ctx, AG_F32, s16, 1, 0.0001));
  CK(ag_tensor_requires_grad(f->chain[0][0], 1));
  CK(ag_tensor_requires_grad(f->chain[1][0], 1));
  f->fx = det_tensor(ctx, FANIN_D, 31, -1, 1);
  CK(ag_tensor_requires_grad(f->fx, 1));
  for (int i = 0; i < FANIN_K; ++i) {
    f->fw[i] = det_tensor(ctx, FANIN_D, (uint32_t)(1000 + i), -1, 1);
    CK(ag_tensor_requires_grad(f->fw[i], 1));
  }
  f->d = mlp_model_new(ctx, 1);
}

static void fixture_free(fixture *f) {
  ag_tensor *all[] = {f->x, f->y, f->xt, f->w1, f->w2, f->img, f->filt, f->mx, f->mt, f->pa, f->pb, f->p, f->s0, f->up, f->ug};
  for (size_t i = 0; i < sizeof all / sizeof *all; ++i) ag_tensor_release(all[i]);
  for (int i = 0; i < 6; ++i) ag_tensor_release(f->chain[i / 3][i % 3]);
  ag_tensor_release(f->fx);
  for (int i = 0; i < FANIN_K; ++i) ag_tensor_release(f->fw[i]);
  mlp_model_free(f->d);
  ag_optimizer_release(f->adam);
  ag_optimizer_release(f->sgd);
}

/* FNV-1a over a tensor's bytes. */
static uint64_t hash_of(const ag_tensor *t) {
  size_t bytes = (size_t)ag_tensor_numel(t) * (ag_tensor_dtype(t) == AG_F64 ? 8 : 4);
  unsigned char *buf = xmalloc(bytes ? bytes : 1);
  CK(ag_tensor_copy_data(t, buf, bytes));
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < bytes; ++i) h = (h ^ buf[i]) * 1099511628211ull;
  free(buf);
  return h;
}

/* Workload a, b or e as bench_ag runs it (no scope: a scope's bookkeeping
 * would add to every op); returns the hash of x's gradient when `hash`. */
static uint64_t run_workload(fixture *f, char w, int hash) {
  ag_tensor *x, *y;
  if (w == 'e') {
    x = f->fx;
    CK(ag_tensor_set_grad(x, NULL));
    for (int i = 0; i < FANIN_K; ++i) CK(ag_tensor_set_grad(f->fw[i], NULL));
    y = workload_fanin(x, f->fw, FANIN_K);
  } else {
    ag_tensor **c = f->chain[w == 'b'];
    x = c[0];
    CK(ag_tensor_set_grad(x, NULL));
    y = workload_chain(x, c[1], c[2], CHAIN_N);
    if (w == 'b') y = sum_and_release(y);
  }
  CK(ag_backward(y, NULL, NULL));
  ag_tensor_release(y);
  if (!hash) return 0;
  ag_tensor *g;
  CK(ag_tensor_grad(&g, x));
  const uint64_t h = hash_of(g);
  ag_tensor_release(g);
  return h;
}

/* One call of the family; returns the hash of its result when `hash`. */
static uint64_t run_family(fixture *f, const char *fam, int hash) {
  if (fam[0] && !fam[1] && strchr("abe", fam[0])) return run_workload(f, fam[0], hash);
  ag_scope *scope;
  CK(ag_scope_begin(&scope));
  ag_tensor *r = NULL;
  if (!strcmp(fam, "copy")) {
    CK(ag_op_clone(&r, f->x));
  } else if (!strcmp(fam, "cast")) {
    CK(ag_op_cast(&r, f->x, AG_F64));
  } else if (!strcmp(fam, "fill")) {
    CK(ag_tensor_full(&r, f->ctx, AG_F32, &f->n, 1, 0.25));
  } else if (!strcmp(fam, "add")) {
    CK(ag_op_add(&r, f->x, f->y));
  } else if (!strcmp(fam, "tanh")) {
    CK(ag_op_tanh(&r, f->x));
  } else if (!strcmp(fam, "sum")) {
    CK(ag_op_sum(&r, f->x));
  } else if (!strcmp(fam, "gather")) {
    CK(ag_op_clone(&r, f->xt));
  } else if (!strcmp(fam, "adam")) {
    CK(ag_optimizer_step(f->adam));
    r = f->p;
  } else if (!strcmp(fam, "update")) {
    /* The MLP's update of its first weight, p -= lr * g in one pass, on
     * data that stays in the cache between calls. */
    CK(ag_op_add_scaled_(f->up, f->ug, -0.01));
    r = f->up;
  } else if (!strcmp(fam, "gemm")) {
    CK(ag_op_matmul(&r, f->w1, f->w2));
  } else if (!strcmp(fam, "conv2d")) {
    const int64_t stride[2] = {1, 1}, pad[2] = {1, 1}, dil[2] = {1, 1};
    CK(ag_op_conv2d(&r, f->img, f->filt, NULL, stride, pad, dil, 1));
  } else if (!strcmp(fam, "mlp")) {
    ag_tensor *h, *o, *d, *loss;
    CK(ag_op_matmul(&h, f->mx, f->pa));
    CK(ag_op_tanh(&h, h));
    CK(ag_op_matmul(&o, h, f->pb));
    CK(ag_op_sub(&d, o, f->mt));
    CK(ag_op_mul(&d, d, d));
    CK(ag_op_mean(&loss, d));
    CK(ag_optimizer_zero_grad(f->sgd));
    CK(ag_backward(loss, NULL, NULL));
    CK(ag_optimizer_step(f->sgd));
    r = loss;
  } else if (!strcmp(fam, "d")) {
    r = mlp_model_step(f->d, NULL);
  } else if (!strcmp(fam, "small")) {
    ag_tensor *h = f->s0, *b;
    CK(ag_tensor_scalar(&b, f->ctx, AG_F32, 0.01));
    for (int i = 0; i < 100; ++i) {
      CK(ag_op_tanh(&h, h));
      CK(ag_op_add(&h, h, b));
    }
    CK(ag_tensor_set_grad(f->s0, NULL));
    CK(ag_backward(h, NULL, NULL));
    CK(ag_tensor_grad(&r, f->s0));
  } else {
    fprintf(stderr, "bench_threads: unknown family %s\n", fam);
    exit(2);
  }
  const uint64_t h = hash && r ? hash_of(r) : 0;
  CK(ag_scope_end(scope));
  return h;
}

static const char *k_all = "copy,cast,fill,add,tanh,sum,gather,adam,update,gemm,conv2d,mlp,small,a,b,d,e";

typedef struct {
  double median, min;
  uint64_t hash;
} timing;

static timing time_family(ag_context *ctx, const char *fam, int64_t n, int repeats, int64_t idle_us) {
  fixture f;
  fixture_init(&f, ctx, n);
  timing t = {0, 0, 0};
  t.hash = run_family(&f, fam, 1);
  /* adam changes its parameter every step: hash the first step only, on a
   * fresh fixture, so every thread count starts from the same state. */
  for (int i = 0; i < 3; ++i) run_family(&f, fam, 0);
  dvec d = {0};
  for (int i = 0; i < repeats; ++i) {
    if (idle_us > 0) sleep_us(idle_us);
    const int64_t t0 = now_ns();
    run_family(&f, fam, 0);
    dv_push(&d, (double)(now_ns() - t0));
  }
  const stats_t s = stats(&d);
  t.median = s.median;
  t.min = s.min;
  dv_free(&d);
  fixture_free(&f);
  return t;
}

static ag_context *make_ctx(int threads, host_pool **pool, int host) {
  ag_context_options o = AG_CONTEXT_OPTIONS_INIT;
  o.num_threads = threads;
  *pool = NULL;
  if (host) {
    *pool = host_start(threads - 1);
    o.enqueue_task = host_enqueue;
    o.finish_task = host_finish;
    o.task_user = *pool;
    o.worker_count = threads;
  }
  ag_context *ctx;
  CK(ag_context_create(&ctx, &o));
  return ctx;
}

/* Host task system against the arena at each thread count, in `rounds`
 * alternating rounds of `repeats` calls each. */
static int vs_host(const char *only, const int64_t *threads, int nthreads, int64_t n, int repeats, int64_t idle_us) {
  enum { kRounds = 5 };
  int mismatch = 0;
  char list[512];
  snprintf(list, sizeof list, "%s", only);
  for (char *fam = strtok(list, ","); fam; fam = strtok(NULL, ",")) {
    for (int k = 0; k < nthreads; ++k) {
      dvec med[2] = {{0}, {0}};
      uint64_t hash[2] = {0, 0};
      for (int r = 0; r < kRounds; ++r) {
        for (int host = 0; host < 2; ++host) {
          host_pool *pool;
          ag_context *ctx = make_ctx((int)threads[k], &pool, host);
          const timing t = time_family(ctx, fam, n, repeats, idle_us);
          ag_context_release(ctx);
          if (pool) host_stop(pool);
          dv_push(&med[host], t.median);
          hash[host] = t.hash;
        }
      }
      const stats_t a = stats(&med[0]), h = stats(&med[1]);
      const int same = hash[0] == hash[1];
      mismatch |= !same;
      printf("{\"bench\": \"host_vs_arena\", \"family\": \"%s\", \"n\": %lld, \"threads\": %lld, "
             "\"idle_us\": %lld, \"arena_ns\": %.0f, \"host_ns\": %.0f, \"ratio\": %.3f, \"same_bits\": %s}\n",
             fam, (long long)n, (long long)threads[k], (long long)idle_us, a.median, h.median, h.median / a.median,
             same ? "true" : "false");
      fflush(stdout);
      dv_free(&med[0]);
      dv_free(&med[1]);
    }
  }
  return mismatch;
}

/* One paired run of family `fam`: contexts at t0 (slot 0) and t1 (slot 1),
 * alive together; in each of `rounds` rounds both run `block` calls (the
 * first untimed), in an order rotated by one each round. Pushes each round's
 * median ratio slot 1 / slot 0 onto `ratio` and every timed call of slot i
 * onto all[i]; hash[i] is slot i's result. */
static void paired_run(const char *fam, int64_t t0, int64_t t1, int64_t n, int rounds, int block, int64_t idle_us,
                       dvec *ratio, dvec all[2], uint64_t hash[2]) {
  host_pool *pool;
  const int64_t threads[2] = {t0, t1};
  ag_context *ctx[2];
  fixture fx[2];
  for (int k = 0; k < 2; ++k) {
    ctx[k] = make_ctx((int)threads[k], &pool, 0);
    fixture_init(&fx[k], ctx[k], n);
    hash[k] = run_family(&fx[k], fam, 1);
  }
  double *t = xmalloc(sizeof(double) * (size_t)block);
  double med[2];
  for (int r = 0; r < rounds; ++r) {
    for (int j = 0; j < 2; ++j) {
      const int k = (j + r) % 2;
      run_family(&fx[k], fam, 0);
      for (int i = 0; i < block; ++i) {
        if (idle_us > 0) sleep_us(idle_us);
        const int64_t t_start = now_ns();
        run_family(&fx[k], fam, 0);
        t[i] = (double)(now_ns() - t_start);
        dv_push(&all[k], t[i]);
      }
      med[k] = median_of(t, (size_t)block);
    }
    dv_push(ratio, med[1] / med[0]);
  }
  free(t);
  for (int k = 0; k < 2; ++k) {
    fixture_free(&fx[k]);
    ag_context_release(ctx[k]);
  }
}

/* --paired: each thread count against the first of the list, in two paired
 * runs with the slots swapped. The second context of a pair measures some
 * 2 % slower than the first on the 2-vCPU machine whatever its thread count
 * (tests/bench/README.md), so each round's ratio is the geometric mean of
 * the two slot orders: sqrt((Tk in slot 1 / T1 in slot 0) / (T1 in slot 1 /
 * Tk in slot 0)), in which a factor of the slot cancels. */
static int paired(const char *only, const int64_t *threads, int nthreads, int64_t n, int rounds, int block,
                  int64_t idle_us) {
  int mismatch = 0;
  char list[512];
  snprintf(list, sizeof list, "%s", only);
  for (char *fam = strtok(list, ","); fam; fam = strtok(NULL, ",")) {
    dvec base_all = {0};
    uint64_t base_hash = 0;
    {
      // Not recorded: in the first pair of contexts a process makes, the
      // second measures slower whatever its thread count (where the
      // allocator puts its data, most likely); the pairs after it do not.
      dvec warm = {0}, warm_all[2] = {{0}, {0}};
      uint64_t warm_hash[2];
      paired_run(fam, threads[0], threads[0], n, rounds / 10 + 1, block, idle_us, &warm, warm_all, warm_hash);
      dv_free(&warm);
      dv_free(&warm_all[0]);
      dv_free(&warm_all[1]);
    }
    for (int k = 1; k < nthreads || k == 1; ++k) {
      const int64_t tk = k < nthreads ? threads[k] : threads[0];
      dvec forward = {0}, swapped = {0}, all_a[2] = {{0}, {0}}, all_b[2] = {{0}, {0}};
      uint64_t hash_a[2], hash_b[2];
      paired_run(fam, threads[0], tk, n, rounds, block, idle_us, &forward, all_a, hash_a);
      paired_run(fam, tk, threads[0], n, rounds, block, idle_us, &swapped, all_b, hash_b);
      dvec ratio = {0}, all_k = {0};
      for (size_t r = 0; r < forward.n; ++r) dv_push(&ratio, sqrt(forward.v[r] / swapped.v[r]));
      for (size_t i = 0; i < all_a[1].n; ++i) dv_push(&all_k, all_a[1].v[i]);
      for (size_t i = 0; i < all_b[0].n; ++i) dv_push(&all_k, all_b[0].v[i]);
      if (k == 1) {
        for (size_t i = 0; i < all_a[0].n; ++i) dv_push(&base_all, all_a[0].v[i]);
        for (size_t i = 0; i < all_b[1].n; ++i) dv_push(&base_all, all_b[1].v[i]);
        base_hash = hash_a[0];
        const stats_t b = stats(&base_all);
        printf("{\"bench\": \"threads_paired\", \"family\": \"%s\", \"n\": %lld, \"threads\": %lld, \"rounds\": %d, "
               "\"block\": %d, \"idle_us\": %lld, \"median_ns\": %.0f, \"ratio_to_t1\": 1.000, \"ratio_p25\": 1.000, "
               "\"ratio_p75\": 1.000, \"slot_ratios\": [1.000, 1.000], \"same_bits\": true}\n",
               fam, (long long)n, (long long)threads[0], rounds, block, (long long)idle_us, b.median);
      }
      if (k < nthreads) {
        const stats_t a = stats(&all_k), q = stats(&ratio), f = stats(&forward), w = stats(&swapped);
        const int same = hash_a[1] == base_hash && hash_b[0] == base_hash && hash_b[1] == base_hash;
        mismatch |= !same;
        printf("{\"bench\": \"threads_paired\", \"family\": \"%s\", \"n\": %lld, \"threads\": %lld, \"rounds\": %d, "
               "\"block\": %d, \"idle_us\": %lld, \"median_ns\": %.0f, \"ratio_to_t1\": %.3f, \"ratio_p25\": %.3f, "
               "\"ratio_p75\": %.3f, \"slot_ratios\": [%.3f, %.3f], \"same_bits\": %s}\n",
               fam, (long long)n, (long long)tk, rounds, block, (long long)idle_us, a.median, q.median, q.p25, q.p75,
               f.median, w.median, same ? "true" : "false");
      }
      fflush(stdout);
      dv_free(&forward);
      dv_free(&swapped);
      dv_free(&ratio);
      dv_free(&all_k);
      for (int i = 0; i < 2; ++i) dv_free(&all_a[i]), dv_free(&all_b[i]);
    }
    dv_free(&base_all);
  }
  return mismatch;
}

static int calibrate(int repeats) {
  /* family, class */
  static const char *fams[][2] = {{"copy", "copy"}, {"cast", "copy"}, {"fill", "copy"}, {"add", "elementwise"},
                                  {"tanh", "transcendental"}, {"sum", "reduction"}, {"gather", "gather"},
                                  {"adam", "optimizer"}};
  const int64_t n = 65536;
  const double chunk_ns = 8000.0; /* kChunkNs of src/core/parallel.h */
  host_pool *pool;
  ag_context *ctx = make_ctx(1, &pool, 0);
  for (size_t i = 0; i < sizeof fams / sizeof *fams; ++i) {
    const timing t = time_family(ctx, fams[i][0], n, repeats, 0);
    const double per = t.median / (double)n;
    int64_t g = 1;
    while ((double)(g * 2) * per <= chunk_ns) g *= 2; /* the most elements within chunk_ns */
    printf("{\"bench\": \"grain\", \"family\": \"%s\", \"class\": \"%s\", \"n\": %lld, \"ns_per_element\": %.4f, "
           "\"grain_for_%.0f_ns\": %lld}\n",
           fams[i][0], fams[i][1], (long long)n, per, chunk_ns, (long long)g);
  }
  ag_context_release(ctx);
  return 0;
}

int main(int argc, char **argv) {
  int64_t threads[MAX_LIST] = {1, 2};
  int nthreads = 2, repeats = 50, host = 0, calib = 0, versus = 0, pair = 0, block = 5;
  int64_t n = 1 << 20, idle_us = 0;
  const char *only = k_all;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--threads") && v) {
      nthreads = parse_list(v, threads);
      ++i;
    } else if (!strcmp(a, "--only") && v) {
      only = v;
      ++i;
    } else if (!strcmp(a, "--n") && v) {
      n = strtoll(v, NULL, 10);
      ++i;
    } else if (!strcmp(a, "--repeats") && v) {
      repeats = atoi(v);
      ++i;
    } else if (!strcmp(a, "--idle-us") && v) {
      idle_us = strtoll(v, NULL, 10);
      ++i;
    } else if (!strcmp(a, "--host")) {
      host = 1;
    } else if (!strcmp(a, "--vs-host")) {
      versus = 1;
    } else if (!strcmp(a, "--calibrate")) {
      calib = 1;
    } else if (!strcmp(a, "--paired")) {
      pair = 1;
    } else if (!strcmp(a, "--block") && v) {
      block = atoi(v);
      ++i;
    } else {
      fprintf(stderr,
              "usage: bench_threads [--threads 1,2] [--only %s] [--n N] [--repeats R] [--idle-us U] [--host | --vs-host] "
              "[--paired [--block B]] [--calibrate]\n",
              k_all);
      return 2;
    }
  }
  if (nthreads < 1 || repeats < 1 || n < 1024 || block < 1) {
    fprintf(stderr, "bench_threads: bad --threads, --repeats, --n or --block\n");
    return 2;
  }
  if (calib) return calibrate(repeats);
  if (versus) return vs_host(only, threads, nthreads, n, repeats, idle_us);
  if (pair) return paired(only, threads, nthreads, n, repeats, block, idle_us);
  int mismatch = 0;
  char list[512];
  snprintf(list, sizeof list, "%s", only);
  for (char *fam = strtok(list, ","); fam; fam = strtok(NULL, ",")) {
    timing first = {0, 0, 0};
    for (int k = 0; k < nthreads; ++k) {
      host_pool *pool;
      ag_context *ctx = make_ctx((int)threads[k], &pool, host);
      const timing t = time_family(ctx, fam, n, repeats, idle_us);
      ag_context_release(ctx);
      if (pool) host_stop(pool);
      if (k == 0) first = t;
      const int same = t.hash == first.hash;
      mismatch |= !same;
      printf("{\"bench\": \"threads\", \"family\": \"%s\", \"n\": %lld, \"threads\": %lld, \"tasks\": \"%s\", "
             "\"idle_us\": %lld, \"median_ns\": %.0f, \"min_ns\": %.0f, \"ratio_to_t1\": %.3f, \"same_bits\": %s}\n",
             fam, (long long)n, (long long)threads[k], host ? "host" : "arena", (long long)idle_us, t.median, t.min,
             t.median / first.median, same ? "true" : "false");
      fflush(stdout);
    }
  }
  return mismatch;
}
