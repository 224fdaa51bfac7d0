/*
 * A small MLP (8-16-4, tanh, MSE) on synthetic data, and the check both dist
 * tests run: data-parallel training on every rank of a communicator against
 * single-process training on the whole global batch, step by step.
 */
#ifndef AG_TESTS_DIST_MLP_H
#define AG_TESTS_DIST_MLP_H

#include "ag/ag.h"
#include "ag/dist.h"

#define DIST_MLP_PARAMS 4
#define DIST_MLP_BATCH 64 /* global batch; each of W ranks takes 64 / W samples */
#define DIST_MLP_IN 8
#define DIST_MLP_OUT 4

typedef struct dist_mlp {
  ag_context *ctx;
  ag_dtype dtype;
  ag_tensor *params[DIST_MLP_PARAMS]; /* w1 (16x8), b1, w2 (4x16), b2 */
  ag_optimizer *opt;                  /* SGD, lr 0.1, momentum 0.9 */
} dist_mlp;

/* Parameters from a fixed formula shifted by `salt` (0 on every rank gives
 * identical replicas); 0 on success, else prints why. */
int dist_mlp_init(dist_mlp *m, ag_dtype dtype, double salt);
void dist_mlp_free(dist_mlp *m);

/* The MSE loss of samples [first, first + n) of step `step`'s global batch;
 * `in_width` is the width of the inputs made (DIST_MLP_IN, or another to
 * make the forward fail). Returns the status of the failing call. */
ag_status dist_mlp_loss(const dist_mlp *m, int step, int first, int n, int in_width, ag_tensor **loss);

/* An FNV-1a hash of the bytes of every parameter's gradient (52 bits, so
 * that an f64 holds it exactly); parameters without one count as absent. */
double dist_mlp_grad_hash(const dist_mlp *m);

/* 1 if every rank has the same value `v` (compared through an all-reduce of
 * a vector with v in this rank's slot), else 0; -1 if the collective failed. */
int dist_all_equal(ag_dist_comm *comm, double v);

/*
 * Trains `steps` steps data-parallel (this rank's share of each global
 * batch, ag_dist_ddp with bucket_bytes) beside a reference that trains on
 * the whole batch in the same process, and checks after each sync: the
 * gradients are bitwise equal on every rank and within `rtol` (relative to
 * the largest element, per tensor) of the reference's; the global loss (the
 * mean of the ranks' losses) within rtol of the reference's. Returns 0 when
 * all held; prints each failure.
 */
int dist_check_training(ag_dist_comm *comm, ag_dtype dtype, int64_t bucket_bytes, int steps, double rtol);

#endif
