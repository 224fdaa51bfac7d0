/*
 * libag_dist over a host transport in one process: two threads play two
 * ranks, their collectives meet in memory (a fake transport). Checks data
 * parallel training against single-process training (dist_mlp.c), the
 * destroy contract of ag_dist_comm_from_callbacks, a failing callback, and
 * that AG_X_INIT and ag_x_init agree.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist_mlp.h"

#define RANKS 2

static int failures = 0;
static pthread_mutex_t failures_mu = PTHREAD_MUTEX_INITIALIZER;

#define CHECK(cond)                                                                                   \
  do {                                                                                                \
    if (!(cond)) {                                                                                    \
      fprintf(stderr, "%s:%d: CHECK(%s) failed; ag_dist: %s\n", __FILE__, __LINE__, #cond,            \
              ag_dist_last_error_message());                                                          \
      pthread_mutex_lock(&failures_mu);                                                               \
      ++failures;                                                                                     \
      pthread_mutex_unlock(&failures_mu);                                                             \
    }                                                                                                 \
  } while (0)

/* The fake network: each rank posts its buffer, all meet at a barrier. */
typedef struct fake_net {
  pthread_barrier_t barrier;
  void *posted[RANKS];
  int fail_allreduce; /* every rank's allreduce fails (so none waits) */
} fake_net;

typedef struct fake_rank {
  fake_net *net;
  int rank;
  int destroyed;
} fake_rank;

static ag_status fake_allreduce(void *user_data, void *data, int64_t count, ag_dtype dtype) {
  fake_rank *r = user_data;
  const size_t elem = dtype == AG_F64 ? 8 : 4;
  void *sum;
  if (r->net->fail_allreduce) return AG_ERR_INTERNAL;
  sum = malloc((size_t)count * elem + 1);
  if (!sum) return AG_ERR_OUT_OF_MEMORY; /* would leave the other rank waiting; tests only */
  r->net->posted[r->rank] = data;
  pthread_barrier_wait(&r->net->barrier);
  /* Every rank adds in rank order, so all get the same bits. */
  for (int64_t i = 0; i < count; ++i) {
    if (dtype == AG_F64) {
      double s = 0.0;
      for (int k = 0; k < RANKS; ++k) s += ((const double *)r->net->posted[k])[i];
      ((double *)sum)[i] = s;
    } else {
      float s = 0.0f;
      for (int k = 0; k < RANKS; ++k) s += ((const float *)r->net->posted[k])[i];
      ((float *)sum)[i] = s;
    }
  }
  pthread_barrier_wait(&r->net->barrier); /* everyone has read every buffer */
  memcpy(data, sum, (size_t)count * elem);
  free(sum);
  return AG_OK;
}

static ag_status fake_broadcast(void *user_data, void *data, int64_t bytes, int32_t root) {
  fake_rank *r = user_data;
  r->net->posted[r->rank] = data;
  pthread_barrier_wait(&r->net->barrier);
  if (r->rank != root) memcpy(data, r->net->posted[root], (size_t)bytes);
  pthread_barrier_wait(&r->net->barrier);
  return AG_OK;
}

static ag_status fake_barrier(void *user_data) {
  pthread_barrier_wait(&((fake_rank *)user_data)->net->barrier);
  return AG_OK;
}

static void fake_destroy(void *user_data) { ++((fake_rank *)user_data)->destroyed; }

static ag_dist_comm *fake_comm(fake_rank *r) {
  ag_dist_transport t = AG_DIST_TRANSPORT_INIT;
  ag_dist_comm *comm = NULL;
  t.rank = r->rank;
  t.world_size = RANKS;
  t.allreduce_sum = fake_allreduce;
  t.broadcast = fake_broadcast;
  t.barrier = fake_barrier;
  CHECK(ag_dist_comm_from_callbacks(&comm, &t, r, fake_destroy) == AG_OK);
  return comm;
}

static void *rank_main(void *arg) {
  fake_rank *r = arg;
  ag_dist_comm *comm = fake_comm(r);
  if (!comm) return NULL;
  CHECK(ag_dist_comm_rank(comm) == r->rank && ag_dist_comm_size(comm) == RANKS);
  CHECK(dist_check_training(comm, AG_F64, 0, 6, 1e-12) == 0);
  CHECK(dist_check_training(comm, AG_F32, 100, 6, 2e-5) == 0);

  /* A failing allreduce callback: AG_DIST_ERR_COMM naming it. */
  dist_mlp m;
  ag_dist_ddp *ddp = NULL;
  ag_tensor *loss = NULL;
  CHECK(dist_mlp_init(&m, AG_F32, 0.0) == 0);
  CHECK(ag_dist_ddp_create(&ddp, comm, m.params, DIST_MLP_PARAMS, NULL) == AG_OK);
  CHECK(dist_mlp_loss(&m, 0, 32 * r->rank, 32, DIST_MLP_IN, &loss) == AG_OK);
  CHECK(ag_backward(loss, NULL, NULL) == AG_OK); /* one bucket, started by the last hook */
  CHECK(ag_dist_barrier(comm) == AG_OK);
  if (r->rank == 0) r->net->fail_allreduce = 1;
  CHECK(ag_dist_barrier(comm) == AG_OK);
  CHECK(ag_dist_ddp_sync(ddp) == AG_DIST_ERR_COMM);
  CHECK(strstr(ag_dist_last_error_message(), "allreduce_sum callback failed (AG_ERR_INTERNAL)") != NULL);
  ag_tensor_release(loss);
  ag_dist_ddp_release(ddp);
  dist_mlp_free(&m);
  ag_dist_comm_release(comm);
  return NULL;
}

int main(void) {
  fake_net net;
  fake_rank ranks[RANKS];
  pthread_t threads[RANKS];
  memset(&net, 0, sizeof net);
  pthread_barrier_init(&net.barrier, NULL, RANKS);
  for (int i = 0; i < RANKS; ++i) {
    ranks[i].net = &net;
    ranks[i].rank = i;
    ranks[i].destroyed = 0;
    pthread_create(&threads[i], NULL, rank_main, &ranks[i]);
  }
  for (int i = 0; i < RANKS; ++i) pthread_join(threads[i], NULL);
  for (int i = 0; i < RANKS; ++i) CHECK(ranks[i].destroyed == 1);

  /* destroy runs once when the call fails too. */
  {
    fake_rank r = {&net, 0, 0};
    ag_dist_transport t = AG_DIST_TRANSPORT_INIT;
    ag_dist_comm *comm = NULL;
    t.allreduce_sum = fake_allreduce;
    t.broadcast = fake_broadcast;
    t.barrier = NULL;
    CHECK(ag_dist_comm_from_callbacks(&comm, &t, &r, fake_destroy) == AG_ERR_INVALID_ARGUMENT && !comm);
    CHECK(strstr(ag_dist_last_error_message(), "transport->barrier is NULL") != NULL);
    t.barrier = fake_barrier;
    t.rank = 1;
    CHECK(ag_dist_comm_from_callbacks(&comm, &t, &r, fake_destroy) == AG_ERR_INVALID_ARGUMENT && !comm);
    t.rank = 0;
    t.struct_size = 8;
    CHECK(ag_dist_comm_from_callbacks(&comm, &t, &r, fake_destroy) == AG_ERR_INVALID_ARGUMENT && !comm);
    CHECK(ag_dist_comm_from_callbacks(NULL, &t, &r, fake_destroy) == AG_ERR_INVALID_ARGUMENT);
    CHECK(r.destroyed == 4);
    /* A world of one: ag_dist_all_reduce is the identity, destroy at release. */
    t.struct_size = sizeof t;
    t.world_size = 1;
    CHECK(ag_dist_comm_from_callbacks(&comm, &t, &r, fake_destroy) == AG_OK);
    CHECK(ag_dist_comm_retain(comm) == comm);
    ag_dist_comm_release(comm);
    CHECK(r.destroyed == 4);
    ag_dist_comm_release(comm);
    CHECK(r.destroyed == 5);
  }

  /* AG_X_INIT == ag_x_init(), byte for byte. */
  {
    ag_dist_transport a = AG_DIST_TRANSPORT_INIT, b;
    ag_dist_ddp_options c = AG_DIST_DDP_OPTIONS_INIT, d;
    memset(&b, 0xab, sizeof b);
    memset(&d, 0xab, sizeof d);
    CHECK(ag_dist_transport_init(&b) == AG_OK && memcmp(&a, &b, sizeof a) == 0);
    CHECK(ag_dist_ddp_options_init(&d) == AG_OK && memcmp(&c, &d, sizeof c) == 0);
    CHECK(ag_dist_transport_init(NULL) == AG_ERR_INVALID_ARGUMENT);
  }
  pthread_barrier_destroy(&net.barrier);
  printf("%s\n", failures ? "FAILED" : "all checks passed");
  return failures != 0;
}
