/*
 * libag_dist over MPI, run by meson as `mpirun -np 2 test_dist_mpi CASE`:
 *   train      data parallel on 2 ranks x 32 samples against 1 process x 64,
 *              f32 and f64, default buckets and 64-byte buckets (one per
 *              parameter, started during backward); gradients bitwise equal
 *              across ranks
 *   collectives  broadcast_params, all_reduce, rank/size, argument errors
 *   errors     one rank's failure is reported, not a hang: a parameter list
 *              that differs, a forward that fails on one rank (skip_step),
 *              a rank that is late (timeout, then sync again), a second
 *              backward before sync
 * Exit 0 when every check held on this rank.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "dist_mlp.h"

static int failures = 0;
static int rank = -1;

#define CHECK(cond)                                                                         \
  do {                                                                                      \
    if (!(cond)) {                                                                          \
      fprintf(stderr, "rank %d: %s:%d: CHECK(%s) failed; ag: %s | ag_dist: %s\n", rank, __FILE__, \
              __LINE__, #cond, ag_last_error_message(), ag_dist_last_error_message());       \
      ++failures;                                                                           \
    }                                                                                       \
  } while (0)

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void sleep_seconds(double s) {
  struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  nanosleep(&ts, NULL);
}

static int contains(const char *text, const char *part) { return strstr(text, part) != NULL; }

static void case_train(ag_dist_comm *comm) {
  CHECK(dist_check_training(comm, AG_F64, 0, 8, 1e-12) == 0);
  CHECK(dist_check_training(comm, AG_F64, 64, 8, 1e-12) == 0);
  CHECK(dist_check_training(comm, AG_F32, 0, 8, 2e-5) == 0);
  CHECK(dist_check_training(comm, AG_F32, 64, 8, 2e-5) == 0);
}

static void case_collectives(ag_dist_comm *comm) {
  int mpi_rank = -1, mpi_size = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &mpi_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &mpi_size);
  CHECK(ag_dist_comm_rank(comm) == mpi_rank && ag_dist_comm_size(comm) == mpi_size);
  CHECK(ag_dist_comm_rank(NULL) == -1 && ag_dist_comm_size(NULL) == -1);

  /* Parameters start different on each rank; rank 0's win. */
  dist_mlp m, expect;
  CHECK(dist_mlp_init(&m, AG_F32, 0.5 * rank) == 0);
  CHECK(dist_mlp_init(&expect, AG_F32, 0.0) == 0);
  CHECK(ag_dist_broadcast_params(comm, m.params, DIST_MLP_PARAMS, 0) == AG_OK);
  for (int p = 0; p < DIST_MLP_PARAMS; ++p) {
    float a[128], b[128];
    CHECK(ag_tensor_copy_data(m.params[p], a, sizeof a) == AG_OK);
    CHECK(ag_tensor_copy_data(expect.params[p], b, sizeof b) == AG_OK);
    CHECK(memcmp(a, b, (size_t)ag_tensor_numel(m.params[p]) * sizeof(float)) == 0);
  }
  CHECK(ag_dist_broadcast_params(comm, m.params, DIST_MLP_PARAMS, 2) == AG_ERR_INVALID_ARGUMENT);
  CHECK(contains(ag_dist_last_error_message(), "[ag_dist_broadcast_params] root is 2"));

  /* all_reduce: rank r holds r + 1, so the sum is 3 and the mean 1.5. */
  ag_tensor *t = NULL;
  const int64_t shape[1] = {3};
  const double v[3] = {rank + 1.0, 10.0 * (rank + 1), -0.25};
  double got[3];
  CHECK(ag_tensor_create(&t, m.ctx, AG_F64, shape, 1, v) == AG_OK);
  CHECK(ag_dist_all_reduce(comm, t, AG_DIST_SUM) == AG_OK);
  CHECK(ag_tensor_copy_data(t, got, sizeof got) == AG_OK);
  CHECK(got[0] == 3.0 && got[1] == 30.0 && got[2] == -0.5);
  CHECK(ag_dist_all_reduce(comm, t, AG_DIST_MEAN) == AG_OK);
  CHECK(ag_tensor_copy_data(t, got, sizeof got) == AG_OK);
  CHECK(got[0] == 3.0 && got[1] == 30.0 && got[2] == -0.5);
  CHECK(ag_dist_all_reduce(comm, t, 7) == AG_ERR_INVALID_ARGUMENT);
  ag_tensor_release(t);
  CHECK(ag_dist_barrier(comm) == AG_OK);
  dist_mlp_free(&m);
  dist_mlp_free(&expect);

  /* Local argument errors need no other rank. */
  ag_dist_comm *c = NULL;
  MPI_Comm null_comm = MPI_COMM_NULL;
  CHECK(ag_dist_comm_from_mpi(&c, NULL) == AG_ERR_INVALID_ARGUMENT && c == NULL);
  CHECK(ag_dist_comm_from_mpi(&c, &null_comm) == AG_ERR_INVALID_ARGUMENT && c == NULL);
  CHECK(contains(ag_dist_last_error_message(), "MPI_COMM_NULL"));
  CHECK(ag_dist_comm_from_mpi(NULL, &null_comm) == AG_ERR_INVALID_ARGUMENT);
  CHECK(ag_dist_barrier(NULL) == AG_ERR_INVALID_ARGUMENT);
  CHECK(strcmp(ag_dist_status_name(AG_DIST_ERR_TIMEOUT), "AG_DIST_ERR_TIMEOUT") == 0);
  CHECK(strcmp(ag_dist_status_name(AG_ERR_SHAPE), "AG_ERR_SHAPE") == 0);
  /* The Fortran handle gives a working communicator too. */
  CHECK(ag_dist_comm_from_mpi_fint(&c, (int32_t)MPI_Comm_c2f(MPI_COMM_WORLD)) == AG_OK);
  CHECK(ag_dist_comm_size(c) == mpi_size && ag_dist_barrier(c) == AG_OK);
  ag_dist_comm_release(c);
}

/* One data-parallel step of m on this rank's half; forward_width other
 * than DIST_MLP_IN makes the forward fail. Returns the sync status, or the
 * failing status of the forward (after skip_step). */
static ag_status step(dist_mlp *m, ag_dist_ddp *ddp, int s, int forward_width, double *hash_before_sync) {
  ag_scope *scope = NULL;
  ag_tensor *loss = NULL;
  ag_status st;
  ag_scope_begin(&scope);
  st = dist_mlp_loss(m, s, 32 * rank, 32, forward_width, &loss);
  if (st == AG_OK) st = ag_optimizer_zero_grad(m->opt);
  if (st == AG_OK) st = ag_backward(loss, NULL, NULL);
  if (st == AG_OK) {
    if (hash_before_sync) *hash_before_sync = dist_mlp_grad_hash(m);
    st = ag_dist_ddp_sync(ddp);
  } else {
    CHECK(ag_dist_ddp_skip_step(ddp) == AG_OK);
  }
  ag_scope_end(scope);
  return st;
}

static void case_errors(ag_dist_comm *comm) {
  dist_mlp m;
  ag_dist_ddp *ddp = NULL;
  ag_dist_ddp_options opts = AG_DIST_DDP_OPTIONS_INIT;
  CHECK(dist_mlp_init(&m, AG_F32, 0.0) == 0);

  /* A parameter list that differs on rank 1 (one tensor fewer): both fail. */
  CHECK(ag_dist_ddp_create(&ddp, comm, m.params, rank ? 3 : 4, NULL) == AG_ERR_SHAPE && ddp == NULL);
  CHECK(contains(ag_dist_last_error_message(), rank ? "this one among them" : "not this one"));
  /* A local error on rank 1 (i64 parameter): rank 1 reports it, rank 0 hears of it. */
  {
    ag_tensor *bad = NULL, *list[DIST_MLP_PARAMS];
    const int64_t n = 4;
    CHECK(ag_tensor_zeros(&bad, m.ctx, AG_I64, &n, 1) == AG_OK);
    memcpy(list, m.params, sizeof list);
    if (rank == 1) list[3] = bad;
    CHECK(ag_dist_ddp_create(&ddp, comm, list, DIST_MLP_PARAMS, NULL) == (rank ? AG_ERR_DTYPE : AG_DIST_ERR_PEER));
    CHECK(contains(ag_dist_last_error_message(), rank ? "params[3] is i64" : "1 of 2 ranks failed"));
    ag_tensor_release(bad);
  }
  opts.reserved = 1;
  CHECK(ag_dist_ddp_create(&ddp, comm, m.params, DIST_MLP_PARAMS, &opts) == AG_ERR_INVALID_ARGUMENT);
  opts.reserved = 0;

  opts.timeout_seconds = 0.3;
  opts.bucket_bytes = 64;
  CHECK(ag_dist_ddp_create(&ddp, comm, m.params, DIST_MLP_PARAMS, &opts) == AG_OK);
  CHECK(ag_dist_ddp_num_buckets(ddp) == 4);

  /* Rank 1's forward fails (inputs of the wrong width): it reports
   * AG_ERR_SHAPE and skips; rank 0 hears of it and its gradients stay. */
  {
    double before = 0.0;
    ag_status st = step(&m, ddp, 0, rank ? DIST_MLP_IN + 1 : DIST_MLP_IN, &before);
    CHECK(st == (rank ? AG_ERR_SHAPE : AG_DIST_ERR_PEER));
    if (rank == 0) {
      CHECK(contains(ag_dist_last_error_message(), "1 of 2 ranks skipped this step"));
      CHECK(dist_mlp_grad_hash(&m) == before);
    }
  }
  /* The next step is a normal one again. */
  CHECK(step(&m, ddp, 1, DIST_MLP_IN, NULL) == AG_OK);
  CHECK(dist_all_equal(comm, dist_mlp_grad_hash(&m)) == 1);

  /* Rank 1 is late: rank 0's sync times out after 0.3 s, and a second sync
   * completes the step once rank 1 arrives. */
  {
    ag_scope *scope = NULL;
    ag_tensor *loss = NULL;
    ag_scope_begin(&scope);
    CHECK(dist_mlp_loss(&m, 2, 32 * rank, 32, DIST_MLP_IN, &loss) == AG_OK);
    CHECK(ag_optimizer_zero_grad(m.opt) == AG_OK);
    CHECK(ag_backward(loss, NULL, NULL) == AG_OK);
    if (rank == 1) {
      sleep_seconds(1.5);
      CHECK(ag_dist_ddp_sync(ddp) == AG_OK);
    } else {
      const double t0 = now();
      CHECK(ag_dist_ddp_sync(ddp) == AG_DIST_ERR_TIMEOUT);
      CHECK(now() - t0 < 1.2);
      CHECK(contains(ag_dist_last_error_message(), "stays pending"));
      ag_status st;
      while ((st = ag_dist_ddp_sync(ddp)) == AG_DIST_ERR_TIMEOUT) {
      }
      CHECK(st == AG_OK);
    }
    CHECK(dist_all_equal(comm, dist_mlp_grad_hash(&m)) == 1);
    ag_scope_end(scope);
  }

  /* A second backward before sync fails in the hook; both ranks skip. */
  {
    ag_scope *scope = NULL;
    ag_tensor *loss = NULL;
    ag_backward_options bo = AG_BACKWARD_OPTIONS_INIT;
    bo.retain_graph = 1;
    ag_scope_begin(&scope);
    CHECK(dist_mlp_loss(&m, 3, 32 * rank, 32, DIST_MLP_IN, &loss) == AG_OK);
    CHECK(ag_optimizer_zero_grad(m.opt) == AG_OK);
    CHECK(ag_backward(loss, NULL, &bo) == AG_OK);
    CHECK(ag_backward(loss, NULL, &bo) == AG_ERR_CALLBACK);
    CHECK(contains(ag_last_error_message(), "second gradient before ag_dist_ddp_sync"));
    CHECK(ag_dist_ddp_skip_step(ddp) == AG_OK);
    ag_scope_end(scope);
  }
  CHECK(step(&m, ddp, 4, DIST_MLP_IN, NULL) == AG_OK);
  ag_dist_ddp_release(ddp);
  dist_mlp_free(&m);
}

int main(int argc, char **argv) {
  int provided = 0, world = 0;
  if (argc != 2) {
    fprintf(stderr, "usage: mpirun -np 2 %s train|collectives|errors\n", argv[0]);
    return 2;
  }
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  ag_dist_comm *comm = NULL;
  MPI_Comm mc = MPI_COMM_WORLD;
  if (world != 2) {
    fprintf(stderr, "run with 2 ranks (mpirun -np 2)\n");
    ++failures;
  } else if (ag_dist_comm_from_mpi(&comm, &mc) != AG_OK) {
    fprintf(stderr, "rank %d: %s\n", rank, ag_dist_last_error_message());
    ++failures;
  } else if (!strcmp(argv[1], "train")) {
    case_train(comm);
  } else if (!strcmp(argv[1], "collectives")) {
    case_collectives(comm);
  } else if (!strcmp(argv[1], "errors")) {
    case_errors(comm);
  } else {
    fprintf(stderr, "unknown case %s\n", argv[1]);
    ++failures;
  }
  ag_dist_comm_release(comm);
  printf("rank %d: %s: %s\n", rank, argv[1], failures ? "FAILED" : "ok");
  MPI_Finalize();
  return failures != 0;
}
