/*
 * Fashion-MNIST in its IDX files (gzipped), for the examples and benchmarks
 * that train on it: loading, and batches as ag tensors. Needs zlib.
 */
#ifndef AG_EXAMPLES_FASHION_DATA_H
#define AG_EXAMPLES_FASHION_DATA_H

#include <stdint.h>

#include "ag/ag.h"

#define FM_IN 784 /* 28 x 28 pixels */
#define FM_CLASSES 10

typedef struct fm_data {
  uint8_t *images; /* n x 784 */
  uint8_t *labels; /* n */
  int64_t n;
} fm_data;

/* Loads "<dir>/<prefix>-images-idx3-ubyte.gz" and the labels; 0 on success,
 * else 1 after printing why. */
int fm_load(fm_data *d, const char *dir, const char *prefix);

void fm_free_data(fm_data *d);

/* Samples [first, first + n) as x (n x 784 f32, in [0, 1]) and class
 * indices y (n, i64); 0 on success. */
int fm_batch(const fm_data *d, ag_context *ctx, int64_t first, int64_t n, ag_tensor **x, ag_tensor **y);

#endif
