/*
 * Data-parallel training of the Fashion-MNIST MLP of examples/c/
 * fashion_mnist.c (784-256-256-10, Adam lr 1e-3, global batches of 64 in
 * file order) on the ranks of an MPI job, with libag_dist: each rank takes
 * 64 / world samples of every batch, ag_dist_ddp averages the gradients
 * (reducing buckets while backward still runs), so every rank takes the
 * same Adam step as one process on the whole batch would.
 *
 *   mpirun -np 2 fashion_mnist_ddp [--data DIR] [--steps N] [--epochs N]
 *                                  [--bucket-bytes B] [--check-loss-falls]
 *
 * Prints, per rank, the samples per second it processed and the time per
 * step it waited in ag_dist_ddp_sync; rank 0 prints the loss (mean over the
 * ranks) and the test accuracy. --check-loss-falls: exit 1 unless the mean
 * loss of the last 50 steps is below 70% of that of the first 50.
 */
#define FASHION_MNIST_NO_MAIN
#include "../c/fashion_mnist.c"

#include <mpi.h>

#include "ag/dist.h"

#define DDP_TRY(call)                                                                                  \
  do {                                                                                                 \
    ag_status s_ = (call);                                                                             \
    if (s_ != AG_OK) {                                                                                 \
      fprintf(stderr, "rank %d: %s failed (%s): %s%s\n", rank, #call, ag_dist_status_name(s_),         \
              ag_dist_last_error_message(), ag_last_error_message());                                  \
      goto fail;                                                                                       \
    }                                                                                                  \
  } while (0)

static int rank = 0;

/* One step on this rank's share [first, first + n) of a global batch;
 * returns the local loss and adds the time spent in sync to *sync_s. */
static int ddp_step(fm_model *m, ag_dist_ddp *ddp, const fm_data *d, int64_t first, int64_t n, double *loss_out,
                    double *sync_s) {
  ag_scope *scope = NULL;
  ag_tensor *x = NULL, *y = NULL, *logits = NULL, *loss = NULL;
  double t0;
  if (ag_scope_begin(&scope) != AG_OK) return 1;
  DDP_TRY(fm_batch(d, m->ctx, first, n, &x, &y) ? AG_ERR_INVALID_ARGUMENT : AG_OK);
  DDP_TRY(fm_forward(m, x, &logits) ? AG_ERR_INVALID_ARGUMENT : AG_OK);
  DDP_TRY(ag_op_cross_entropy(&loss, logits, y, AG_REDUCTION_MEAN, AG_IGNORE_INDEX_DEFAULT, 0.0));
  DDP_TRY(ag_optimizer_zero_grad(m->opt));
  DDP_TRY(ag_backward(loss, NULL, NULL)); /* buckets start reducing as backward completes them */
  t0 = fm_now();
  DDP_TRY(ag_dist_ddp_sync(ddp)); /* the rest, then the average into every .grad */
  *sync_s += fm_now() - t0;
  DDP_TRY(ag_optimizer_step(m->opt));
  DDP_TRY(ag_tensor_item(loss, loss_out));
  ag_scope_end(scope);
  return 0;
fail:
  ag_scope_end(scope);
  return 1;
}

int main(int argc, char **argv) {
  const char *dir = "/usr/share/datasets/fashion-mnist";
  int epochs = 1, check = 0, provided = 0, world = 1, rc = 1;
  int64_t steps = 0, bucket_bytes = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--data") && i + 1 < argc) {
      dir = argv[++i];
    } else if (!strcmp(argv[i], "--epochs") && i + 1 < argc) {
      epochs = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--steps") && i + 1 < argc) {
      steps = atoll(argv[++i]);
    } else if (!strcmp(argv[i], "--bucket-bytes") && i + 1 < argc) {
      bucket_bytes = atoll(argv[++i]);
    } else if (!strcmp(argv[i], "--check-loss-falls")) {
      check = 1;
    } else {
      if (rank == 0)
        fprintf(stderr, "usage: mpirun -np N %s [--data DIR] [--steps N] [--epochs N] [--bucket-bytes B] "
                        "[--check-loss-falls]\n", argv[0]);
      MPI_Finalize();
      return 2;
    }
  }
  if (FM_BATCH % world) {
    if (rank == 0) fprintf(stderr, "the number of ranks must divide the batch (%d)\n", FM_BATCH);
    MPI_Finalize();
    return 2;
  }
  const int64_t share = FM_BATCH / world;
  fm_data train = {0}, test = {0};
  fm_model m;
  ag_dist_comm *comm = NULL;
  ag_dist_ddp *ddp = NULL;
  ag_dist_ddp_options opts = AG_DIST_DDP_OPTIONS_INIT;
  MPI_Comm mpi_world = MPI_COMM_WORLD;
  memset(&m, 0, sizeof m);
  /* Every rank reads the files; a rank could as well read only its shards. */
  if (fm_load(&train, dir, "train") || fm_load(&test, dir, "t10k")) goto done;
  DDP_TRY(ag_dist_comm_from_mpi(&comm, &mpi_world));
  /* A rank-dependent seed, to show that the broadcast makes the replicas equal. */
  DDP_TRY(fm_init(&m, FM_MLP, 1, (uint64_t)rank) ? AG_ERR_INVALID_ARGUMENT : AG_OK);
  DDP_TRY(ag_dist_broadcast_params(comm, m.params, 2 * FM_LAYERS, 0));
  opts.bucket_bytes = bucket_bytes;
  DDP_TRY(ag_dist_ddp_create(&ddp, comm, m.params, 2 * FM_LAYERS, &opts));

  const int64_t per_epoch = train.n / FM_BATCH;
  const int64_t total = steps > 0 ? steps : per_epoch * epochs;
  double first_sum = 0.0, last_sum = 0.0, sync_s = 0.0, t0 = fm_now();
  for (int64_t s = 0; s < total; ++s) {
    double loss = 0.0, mean = 0.0;
    const int64_t first = (s % per_epoch) * FM_BATCH + rank * share;
    if (ddp_step(&m, ddp, &train, first, share, &loss, &sync_s)) goto done;
    /* For the log only: the loss of the whole batch (mean over the ranks). */
    MPI_Allreduce(&loss, &mean, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    mean /= world;
    if (s < 50) first_sum += mean;
    if (s >= total - 50) last_sum += mean;
  }
  const double seconds = fm_now() - t0;
  const double w = total < 50 ? (double)total : 50.0;
  printf("rank %d of %d: %lld steps of %lld samples, %.0f samples/s, %.3f ms/step in ddp_sync, %d bucket(s)\n", rank,
         world, (long long)total, (long long)share, (double)(total * share) / seconds, 1e3 * sync_s / (double)total,
         ag_dist_ddp_num_buckets(ddp));
  fflush(stdout);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    double acc = 0.0;
    if (fm_accuracy(&m, &test, &acc)) goto done;
    printf("global batch %d on %d ranks: %.0f samples/s in all, loss %.4f -> %.4f, test accuracy %.4f\n", FM_BATCH,
           world, (double)(total * FM_BATCH) / seconds, first_sum / w, last_sum / w, acc);
    if (check && !(last_sum < 0.7 * first_sum)) {
      printf("the loss did not fall enough\n");
      goto done;
    }
  }
  rc = 0;
  goto done;
fail:
  rc = 1;
done:
  ag_dist_ddp_release(ddp);
  ag_dist_comm_release(comm);
  if (m.ctx) fm_free_model(&m);
  fm_free_data(&train);
  fm_free_data(&test);
  /* A rank that failed ends the job rather than leave the others waiting. */
  if (rc == 1 && world > 1) MPI_Abort(MPI_COMM_WORLD, 1);
  MPI_Finalize();
  return rc;
}
