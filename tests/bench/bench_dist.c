/*
 * bench_dist: how much of the gradient allreduce libag_dist hides behind
 * backward, on the ranks of an MPI job. An MLP 784-1024-1024-1024-10 (f32,
 * 2.9 M parameters, 11.6 MB of gradients), batch 32 per rank, synthetic
 * data. Per step it times ag_backward and ag_dist_ddp_sync separately, in
 * three modes:
 *   alone      backward without DDP (no hooks, no communication)
 *   after      one bucket: the whole allreduce starts when backward ends
 *   overlap    buckets of --bucket-bytes (default 1 MiB), started as
 *              backward completes them
 * and prints the median over --steps steps (after 3 warm-up steps) on each
 * rank: backward, sync, and their sum.
 *
 *   mpirun -np 2 bench_dist [--steps N] [--bucket-bytes B] [--threads N]
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ag/ag.h"
#include "ag/dist.h"

#define LAYERS 4
#define BATCH 32
#define MAX_STEPS 1000

static const int64_t dims[LAYERS + 1] = {784, 1024, 1024, 1024, 10};
static int rank = 0;

#define CK(call)                                                                                           \
  do {                                                                                                     \
    ag_status s_ = (call);                                                                                 \
    if (s_ != AG_OK) {                                                                                     \
      fprintf(stderr, "rank %d: %s failed (%s): %s%s\n", rank, #call, ag_dist_status_name(s_),             \
              ag_dist_last_error_message(), ag_last_error_message());                                      \
      MPI_Abort(MPI_COMM_WORLD, 3);                                                                        \
    }                                                                                                      \
  } while (0)

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Runs `steps` timed steps; ddp may be NULL (backward alone). */
static void run(const char *mode, ag_context *ctx, ag_tensor **params, ag_dist_ddp *ddp, int steps) {
  static double bw[MAX_STEPS], sy[MAX_STEPS], total[MAX_STEPS];
  const int64_t xshape[2] = {BATCH, dims[0]}, n = BATCH;
  for (int s = -3; s < steps; ++s) {
    ag_scope *scope = NULL;
    ag_tensor *x = NULL, *y = NULL, *h = NULL, *loss = NULL;
    double t0, t1, t2;
    CK(ag_scope_begin(&scope));
    CK(ag_op_uniform(&x, ctx, AG_F32, xshape, 2, 0.0, 1.0));
    CK(ag_op_randint(&y, ctx, &n, 1, 0, dims[LAYERS]));
    h = x;
    for (int l = 0; l < LAYERS; ++l) {
      CK(ag_op_linear(&h, h, params[2 * l], params[2 * l + 1]));
      if (l + 1 < LAYERS) CK(ag_op_relu(&h, h));
    }
    CK(ag_op_cross_entropy(&loss, h, y, AG_REDUCTION_MEAN, AG_IGNORE_INDEX_DEFAULT, 0.0));
    for (int p = 0; p < 2 * LAYERS; ++p) CK(ag_tensor_set_grad(params[p], NULL));
    MPI_Barrier(MPI_COMM_WORLD); /* the ranks start backward together */
    t0 = now();
    CK(ag_backward(loss, NULL, NULL));
    t1 = now();
    if (ddp) CK(ag_dist_ddp_sync(ddp));
    t2 = now();
    CK(ag_scope_end(scope));
    if (s >= 0) {
      bw[s] = 1e3 * (t1 - t0);
      sy[s] = 1e3 * (t2 - t1);
      total[s] = 1e3 * (t2 - t0);
    }
  }
  printf("rank %d %-8s backward %7.2f ms  sync %7.2f ms  backward + sync %7.2f ms  (%d buckets, median of %d)\n", rank,
         mode, median(bw, steps), median(sy, steps), median(total, steps), ddp ? ag_dist_ddp_num_buckets(ddp) : 0,
         steps);
  fflush(stdout);
}

int main(int argc, char **argv) {
  int provided = 0, steps = 30, threads = 1;
  int64_t bucket_bytes = 1 << 20;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--steps") && i + 1 < argc) {
      steps = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--bucket-bytes") && i + 1 < argc) {
      bucket_bytes = atoll(argv[++i]);
    } else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
      threads = atoi(argv[++i]);
    } else {
      if (rank == 0) fprintf(stderr, "usage: mpirun -np N %s [--steps N] [--bucket-bytes B] [--threads N]\n", argv[0]);
      MPI_Finalize();
      return 2;
    }
  }
  if (steps < 1 || steps > MAX_STEPS) steps = 30;
  ag_context *ctx = NULL;
  ag_context_options co = AG_CONTEXT_OPTIONS_INIT;
  ag_tensor *params[2 * LAYERS];
  ag_dist_comm *comm = NULL;
  ag_dist_ddp *ddp = NULL;
  ag_dist_ddp_options opts = AG_DIST_DDP_OPTIONS_INIT;
  MPI_Comm world = MPI_COMM_WORLD;
  co.num_threads = threads;
  CK(ag_context_create(&ctx, &co));
  CK(ag_context_manual_seed(ctx, 1 + (uint64_t)rank)); /* each rank its own data */
  for (int l = 0; l < LAYERS; ++l) {
    const double bound = 1.0 / sqrt((double)dims[l]);
    const int64_t wshape[2] = {dims[l + 1], dims[l]};
    CK(ag_op_uniform(&params[2 * l], ctx, AG_F32, wshape, 2, -bound, bound));
    CK(ag_op_uniform(&params[2 * l + 1], ctx, AG_F32, &dims[l + 1], 1, -bound, bound));
  }
  for (int p = 0; p < 2 * LAYERS; ++p) CK(ag_tensor_requires_grad(params[p], 1));
  CK(ag_dist_comm_from_mpi(&comm, &world));
  CK(ag_dist_broadcast_params(comm, params, 2 * LAYERS, 0));

  run("alone", ctx, params, NULL, steps);
  opts.bucket_bytes = INT64_MAX;
  CK(ag_dist_ddp_create(&ddp, comm, params, 2 * LAYERS, &opts));
  run("after", ctx, params, ddp, steps);
  ag_dist_ddp_release(ddp);
  opts.bucket_bytes = bucket_bytes;
  CK(ag_dist_ddp_create(&ddp, comm, params, 2 * LAYERS, &opts));
  run("overlap", ctx, params, ddp, steps);
  ag_dist_ddp_release(ddp);

  for (int p = 0; p < 2 * LAYERS; ++p) ag_tensor_release(params[p]);
  ag_dist_comm_release(comm);
  ag_context_release(ctx);
  MPI_Finalize();
  return 0;
}
