#include "fashion_data.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* Reads a whole gzipped file; NULL with a message on failure. */
static uint8_t *fm_read_gz(const char *path, size_t *size) {
  gzFile f = gzopen(path, "rb");
  if (!f) {
    fprintf(stderr, "cannot open %s\n", path);
    return NULL;
  }
  size_t cap = 1 << 20, len = 0;
  uint8_t *buf = malloc(cap);
  for (;;) {
    if (!buf) break;
    if (len == cap) {
      uint8_t *bigger = realloc(buf, cap *= 2);
      if (!bigger) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = bigger;
    }
    const int got = gzread(f, buf + len, (unsigned)(cap - len));
    if (got < 0) {
      fprintf(stderr, "cannot read %s\n", path);
      free(buf);
      buf = NULL;
      break;
    }
    if (got == 0) break;
    len += (size_t)got;
  }
  gzclose(f);
  *size = len;
  return buf;
}

static uint32_t fm_be32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

int fm_load(fm_data *d, const char *dir, const char *prefix) {
  char path[1024];
  size_t ni = 0, nl = 0;
  snprintf(path, sizeof path, "%s/%s-images-idx3-ubyte.gz", dir, prefix);
  uint8_t *img = fm_read_gz(path, &ni);
  snprintf(path, sizeof path, "%s/%s-labels-idx1-ubyte.gz", dir, prefix);
  uint8_t *lab = fm_read_gz(path, &nl);
  if (!img || !lab || ni < 16 || nl < 8 || fm_be32(img) != 2051 || fm_be32(lab) != 2049 ||
      fm_be32(img + 4) != fm_be32(lab + 4) || fm_be32(img + 8) * fm_be32(img + 12) != FM_IN ||
      ni - 16 < (size_t)fm_be32(img + 4) * FM_IN || nl - 8 < (size_t)fm_be32(lab + 4)) {
    fprintf(stderr, "%s/%s-*: not a pair of IDX image (28x28) and label files\n", dir, prefix);
    free(img);
    free(lab);
    return 1;
  }
  d->n = fm_be32(img + 4);
  d->images = malloc((size_t)d->n * FM_IN);
  d->labels = malloc((size_t)d->n);
  if (!d->images || !d->labels) {
    fprintf(stderr, "out of memory loading %s/%s-*\n", dir, prefix);
    fm_free_data(d);
    free(img);
    free(lab);
    return 1;
  }
  memcpy(d->images, img + 16, (size_t)d->n * FM_IN);
  memcpy(d->labels, lab + 8, (size_t)d->n);
  free(img);
  free(lab);
  return 0;
}

void fm_free_data(fm_data *d) {
  free(d->images);
  free(d->labels);
  d->images = d->labels = NULL;
}

int fm_batch(const fm_data *d, ag_context *ctx, int64_t first, int64_t n, ag_tensor **x, ag_tensor **y) {
  float *xs = malloc((size_t)n * FM_IN * sizeof(float));
  int64_t *ys = malloc((size_t)n * sizeof(int64_t));
  int rc = 1;
  if (xs && ys) {
    const uint8_t *src = d->images + first * FM_IN;
    for (int64_t i = 0; i < n * FM_IN; ++i) xs[i] = (float)src[i] / 255.0f;
    for (int64_t i = 0; i < n; ++i) ys[i] = d->labels[first + i];
    const int64_t xshape[2] = {n, FM_IN};
    rc = ag_tensor_create(x, ctx, AG_F32, xshape, 2, xs) != AG_OK || ag_tensor_create(y, ctx, AG_I64, &n, 1, ys) != AG_OK;
  }
  free(xs);
  free(ys);
  return rc;
}
