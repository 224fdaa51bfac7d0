/*
 * tests/c_api/test_interop_dlpack.c - DLPack export and import
 * (ag_tensor_to_dlpack, ag_tensor_from_dlpack and their legacy forms): the
 * struct layouts against DLPack's dlpack.h, round trips that share memory,
 * exports that outlive their handles and are freed on another thread, and
 * hand-built producers whose deleter must run exactly once on every path.
 */
#include "harness.h"

#include <pthread.h>
#include <stddef.h>

/* ---- the layout of DLPack 1.x (dlpack.h) on 64-bit targets ---------------------- */

#if UINTPTR_MAX == 0xFFFFFFFFFFFFFFFFu
_Static_assert(sizeof(ag_dlpack_version) == 8, "DLPackVersion");
_Static_assert(sizeof(ag_dlpack_device) == 8, "DLDevice");
_Static_assert(sizeof(ag_dlpack_dtype) == 4, "DLDataType");
_Static_assert(sizeof(ag_dlpack_tensor) == 48, "DLTensor size");
_Static_assert(offsetof(ag_dlpack_tensor, data) == 0, "DLTensor.data");
_Static_assert(offsetof(ag_dlpack_tensor, device) == 8, "DLTensor.device");
_Static_assert(offsetof(ag_dlpack_tensor, ndim) == 16, "DLTensor.ndim");
_Static_assert(offsetof(ag_dlpack_tensor, dtype) == 20, "DLTensor.dtype");
_Static_assert(offsetof(ag_dlpack_tensor, shape) == 24, "DLTensor.shape");
_Static_assert(offsetof(ag_dlpack_tensor, strides) == 32, "DLTensor.strides");
_Static_assert(offsetof(ag_dlpack_tensor, byte_offset) == 40, "DLTensor.byte_offset");
_Static_assert(sizeof(ag_dlpack_managed_tensor) == 64, "DLManagedTensor size");
_Static_assert(offsetof(ag_dlpack_managed_tensor, dl_tensor) == 0, "DLManagedTensor.dl_tensor");
_Static_assert(offsetof(ag_dlpack_managed_tensor, manager_ctx) == 48, "DLManagedTensor.manager_ctx");
_Static_assert(offsetof(ag_dlpack_managed_tensor, deleter) == 56, "DLManagedTensor.deleter");
_Static_assert(sizeof(ag_dlpack_managed_tensor_versioned) == 80, "DLManagedTensorVersioned size");
_Static_assert(offsetof(ag_dlpack_managed_tensor_versioned, version) == 0, "DLManagedTensorVersioned.version");
_Static_assert(offsetof(ag_dlpack_managed_tensor_versioned, manager_ctx) == 8, "DLManagedTensorVersioned.manager_ctx");
_Static_assert(offsetof(ag_dlpack_managed_tensor_versioned, deleter) == 16, "DLManagedTensorVersioned.deleter");
_Static_assert(offsetof(ag_dlpack_managed_tensor_versioned, flags) == 24, "DLManagedTensorVersioned.flags");
_Static_assert(offsetof(ag_dlpack_managed_tensor_versioned, dl_tensor) == 32, "DLManagedTensorVersioned.dl_tensor");
#endif

/* ---- export, and ag -> ag round trips ------------------------------------------- */

static void test_export_describes_the_tensor(void) {
  const int64_t shape[2] = {2, 3};
  const double vals[6] = {1, 2, 3, 4, 5, 6};
  ag_context *ctx = NEW_CTX();
  ag_tensor *x = NULL, *tr = NULL, *b = NULL, *i = NULL;
  ag_dlpack_managed_tensor_versioned *m = NULL;
  REQUIRE(ctx);
  x = MAKE(ctx, AG_F32, shape, 2, vals);
  if (x && CHECK_OK(ag_op_transpose(&tr, x, 0, 1)) && CHECK_OK(ag_tensor_to_dlpack(&m, tr))) {
    CHECK(m->version.major == 1 && m->version.minor == 0);
    CHECK(m->flags == 0);
    CHECK(m->deleter != NULL);
    CHECK(m->dl_tensor.device.device_type == AG_DLPACK_DEVICE_CPU && m->dl_tensor.device.device_id == 0);
    CHECK(m->dl_tensor.dtype.code == AG_DLPACK_CODE_FLOAT && m->dl_tensor.dtype.bits == 32 &&
          m->dl_tensor.dtype.lanes == 1);
    CHECK(m->dl_tensor.ndim == 2);
    CHECK(m->dl_tensor.shape[0] == 3 && m->dl_tensor.shape[1] == 2);
    CHECK(m->dl_tensor.strides != NULL);
    CHECK(m->dl_tensor.strides[0] == 1 && m->dl_tensor.strides[1] == 3);
    CHECK(m->dl_tensor.byte_offset == 0);
    CHECK(m->dl_tensor.data == ag_tensor_data(x));
    CHECK(((const float *)m->dl_tensor.data)[3] == 4.0f);
    m->deleter(m);
    m = NULL;
  }
  /* dtype mapping of i64 and bool, and a 0-dim export */
  b = MAKE(ctx, AG_BOOL, NULL, 0, vals);
  i = MAKE(ctx, AG_I64, shape, 2, vals);
  if (b && CHECK_OK(ag_tensor_to_dlpack(&m, b))) {
    CHECK(m->dl_tensor.dtype.code == AG_DLPACK_CODE_BOOL && m->dl_tensor.dtype.bits == 8);
    CHECK(m->dl_tensor.ndim == 0 && m->dl_tensor.shape != NULL && m->dl_tensor.strides != NULL);
    m->deleter(m);
  }
  if (i && CHECK_OK(ag_tensor_to_dlpack(&m, i))) {
    CHECK(m->dl_tensor.dtype.code == AG_DLPACK_CODE_INT && m->dl_tensor.dtype.bits == 64);
    m->deleter(m);
  }
  CHECK_ERR(ag_tensor_to_dlpack(NULL, x), AG_ERR_INVALID_ARGUMENT, "ag_tensor_to_dlpack");
  CHECK_ERR(ag_tensor_to_dlpack(&m, NULL), AG_ERR_INVALID_ARGUMENT, "ag_tensor_to_dlpack");
  CHECK_ERR(ag_tensor_to_dlpack_legacy(NULL, x), AG_ERR_INVALID_ARGUMENT, "ag_tensor_to_dlpack_legacy");
  ag_tensor_release(b);
  ag_tensor_release(i);
  ag_tensor_release(tr);
  ag_tensor_release(x);
  ag_context_release(ctx);
}

static void test_round_trip_shares_memory(void) {
  const int64_t shape[2] = {2, 3};
  const double vals[6] = {1, 2, 3, 4, 5, 6};
  double out[6];
  ag_context *ctx = NEW_CTX();
  ag_tensor *x = NULL, *sl = NULL, *back = NULL, *back_legacy = NULL, *one = NULL;
  ag_dlpack_managed_tensor_versioned *m = NULL;
  ag_dlpack_managed_tensor *lm = NULL;
  REQUIRE(ctx);
  x = MAKE(ctx, AG_F64, shape, 2, vals);
  one = SCALAR(ctx, AG_F64, 1.0);
  /* a view with an offset: the second column */
  if (x && one && CHECK_OK(ag_op_slice(&sl, x, 1, 1, 2, 1)) && CHECK_OK(ag_tensor_requires_grad(x, 1)) &&
      CHECK_OK(ag_tensor_to_dlpack(&m, x)) && CHECK_OK(ag_tensor_to_dlpack_legacy(&lm, sl))) {
    CHECK(lm->deleter != NULL);
    CHECK(lm->dl_tensor.data == ag_tensor_data(sl));
    CHECK((const char *)lm->dl_tensor.data == (const char *)ag_tensor_data(x) + sizeof(double));
    if (CHECK_OK(ag_tensor_from_dlpack(&back, ctx, m))) {
      CHECK(ag_tensor_data(back) == ag_tensor_data(x));
      CHECK(ag_tensor_get_requires_grad(back) == 0); /* data only */
      CHECK(ag_tensor_is_read_only(back) == 0);
      CHECK_OK(ag_op_add_(back, one)); /* seen through x */
      if (READ(x, out, 6) == 6)
        CHECK(out[0] == 2 && out[5] == 7);
    }
    if (CHECK_OK(ag_tensor_from_dlpack_legacy(&back_legacy, ctx, lm))) {
      CHECK(ag_tensor_data(back_legacy) == ag_tensor_data(sl));
      if (READ(back_legacy, out, 2) == 2)
        CHECK(out[0] == 3 && out[1] == 6);
    }
  }
  /* x goes first: the imports keep the memory */
  ag_tensor_release(x);
  ag_tensor_release(sl);
  if (back && READ(back, out, 6) == 6)
    CHECK(out[1] == 3);
  ag_tensor_release(back);
  ag_tensor_release(back_legacy);
  ag_tensor_release(one);
  ag_context_release(ctx);
}

typedef struct free_job {
  ag_dlpack_managed_tensor_versioned *m;
  double seen;
} free_job;

static void *free_export_on_thread(void *arg) {
  free_job *job = (free_job *)arg;
  job->seen = ((const double *)job->m->dl_tensor.data)[2];
  job->m->deleter(job->m);
  return NULL;
}

/* The export outlives the tensor and context handles, and is freed on another thread. */
static void test_export_outlives_handles(void) {
  const int64_t shape[1] = {3};
  const double vals[3] = {7, 8, 9};
  ag_context *ctx = NEW_CTX();
  ag_tensor *x = NULL;
  free_job job = {NULL, 0};
  pthread_t th;
  REQUIRE(ctx);
  x = MAKE(ctx, AG_F64, shape, 1, vals);
  if (x)
    CHECK_OK(ag_tensor_to_dlpack(&job.m, x));
  ag_tensor_release(x);
  ag_context_release(ctx);
  REQUIRE(job.m != NULL);
  CHECK(((const double *)job.m->dl_tensor.data)[0] == 7);
  REQUIRE(pthread_create(&th, NULL, free_export_on_thread, &job) == 0);
  pthread_join(th, NULL);
  CHECK(job.seen == 9);
}

static void test_export_keeps_read_only(void) {
  double buf[2] = {1, 2};
  const int64_t shape[1] = {2};
  ag_context *ctx = NEW_CTX();
  ag_tensor *t = NULL, *back = NULL, *one = NULL;
  ag_dlpack_managed_tensor_versioned *m = NULL;
  REQUIRE(ctx);
  one = SCALAR(ctx, AG_F64, 1.0);
  if (one && CHECK_OK(ag_tensor_from_buffer_flags(&t, ctx, AG_F64, shape, NULL, 1, buf, AG_BUFFER_READ_ONLY, NULL,
                                                  NULL)) &&
      CHECK_OK(ag_tensor_to_dlpack(&m, t))) {
    CHECK(m->flags == AG_DLPACK_FLAG_READ_ONLY);
    CHECK(m->dl_tensor.data == (void *)buf);
    if (CHECK_OK(ag_tensor_from_dlpack(&back, ctx, m))) {
      CHECK(ag_tensor_is_read_only(back) == 1);
      CHECK_ERR(ag_op_add_(back, one), AG_ERR_UNSUPPORTED, "ag_op_add_");
      CHECK_MSG_HAS("tensor is read-only (imported with AG_BUFFER_READ_ONLY / DLPack read-only flag)");
    }
  }
  CHECK(buf[0] == 1);
  ag_tensor_release(back);
  ag_tensor_release(t);
  ag_tensor_release(one);
  ag_context_release(ctx);
}

/* ---- hand-built producers -------------------------------------------------------- */

/* A producer's managed tensor over its own f64 data, counting deleter calls. */
typedef struct producer {
  ag_dlpack_managed_tensor_versioned m;
  ag_dlpack_managed_tensor legacy;
  double data[8];
  int64_t shape[2];
  int64_t strides[2];
  int calls;
} producer;

static void producer_deleter(ag_dlpack_managed_tensor_versioned *self) {
  ((producer *)self->manager_ctx)->calls++;
}

static void producer_legacy_deleter(ag_dlpack_managed_tensor *self) { ((producer *)self->manager_ctx)->calls++; }

/* A (2, 3) f64 tensor, version 1.0, row-major with NULL strides. */
static void producer_init(producer *p) {
  int i;
  memset(p, 0, sizeof *p);
  for (i = 0; i < 8; i++)
    p->data[i] = i;
  p->shape[0] = 2;
  p->shape[1] = 3;
  p->m.version.major = 1;
  p->m.version.minor = 3;
  p->m.manager_ctx = p;
  p->m.deleter = producer_deleter;
  p->m.dl_tensor.data = p->data;
  p->m.dl_tensor.device.device_type = AG_DLPACK_DEVICE_CPU;
  p->m.dl_tensor.ndim = 2;
  p->m.dl_tensor.dtype.code = AG_DLPACK_CODE_FLOAT;
  p->m.dl_tensor.dtype.bits = 64;
  p->m.dl_tensor.dtype.lanes = 1;
  p->m.dl_tensor.shape = p->shape;
  p->legacy.dl_tensor = p->m.dl_tensor;
  p->legacy.manager_ctx = p;
  p->legacy.deleter = producer_legacy_deleter;
}

/* NULL strides, a byte offset and the read-only flag. */
static void test_import_hand_built(void) {
  producer p;
  double out[6];
  void *w = NULL;
  ag_context *ctx = NEW_CTX();
  ag_tensor *t = NULL;
  int64_t st[2];
  REQUIRE(ctx);
  producer_init(&p);
  p.m.dl_tensor.byte_offset = 2 * sizeof(double);
  p.m.flags = AG_DLPACK_FLAG_READ_ONLY | AG_DLPACK_FLAG_IS_COPIED;
  if (CHECK_OK(ag_tensor_from_dlpack(&t, ctx, &p.m))) {
    CHECK(p.calls == 0);
    CHECK(ag_tensor_data(t) == (const void *)(p.data + 2));
    CHECK_OK(ag_tensor_strides(t, st, 2));
    CHECK(st[0] == 3 && st[1] == 1);
    CHECK(ag_tensor_is_read_only(t) == 1);
    CHECK_ERR(ag_tensor_data_mut(&w, t), AG_ERR_UNSUPPORTED, "ag_tensor_data_mut");
    if (READ(t, out, 6) == 6)
      CHECK(out[0] == 2 && out[5] == 7);
    ag_tensor_release(t);
    CHECK(p.calls == 1);
  }
  /* legacy: never read-only; explicit strides (a transposed read) */
  producer_init(&p);
  p.shape[0] = 3;
  p.shape[1] = 2;
  p.strides[0] = 1;
  p.strides[1] = 3;
  p.legacy.dl_tensor.strides = p.strides;
  t = NULL;
  if (CHECK_OK(ag_tensor_from_dlpack_legacy(&t, ctx, &p.legacy))) {
    CHECK(ag_tensor_is_read_only(t) == 0);
    CHECK(ag_tensor_is_contiguous(t) == 0);
    if (READ(t, out, 6) == 6)
      CHECK(out[0] == 0 && out[1] == 3 && out[2] == 1 && out[5] == 5);
    ag_tensor_release(t);
    CHECK(p.calls == 1);
  }
  ag_context_release(ctx);
}

/* An import whose data is misaligned is copied: the producer is freed at once. */
static void test_import_misaligned_copies(void) {
  producer p;
  double out[6];
  ag_context *ctx = NEW_CTX();
  ag_tensor *t = NULL;
  REQUIRE(ctx);
  producer_init(&p);
  memmove((char *)p.data + 4, p.data, 6 * sizeof(double));
  p.m.dl_tensor.byte_offset = 4;
  if (CHECK_OK(ag_tensor_from_dlpack(&t, ctx, &p.m))) {
    CHECK(p.calls == 1);
    CHECK(ag_tensor_data(t) != (const void *)((char *)p.data + 4));
    memset(p.data, 0, sizeof p.data);
    if (READ(t, out, 6) == 6)
      CHECK(out[0] == 0 && out[1] == 1 && out[5] == 5);
    ag_tensor_release(t);
    CHECK(p.calls == 1);
  }
  ag_context_release(ctx);
}

/* Each failure names its fact and runs the producer's deleter once. */
#define CHECK_IMPORT_FAILS(call, status, fn, fact, p) \
  do {                                                \
    CHECK_ERR(call, status, fn);                      \
    CHECK_MSG_HAS(fact);                              \
    CHECK((p).calls == 1);                            \
  } while (0)

static void test_import_failures_free_the_producer(void) {
  producer p;
  const int64_t neg_strides[2] = {3, -1};
  ag_context *ctx = NEW_CTX();
  ag_tensor *t = NULL;
  REQUIRE(ctx);
  producer_init(&p);
  p.m.version.major = 2;
  p.m.version.minor = 0;
  CHECK_IMPORT_FAILS(ag_tensor_from_dlpack(&t, ctx, &p.m), AG_ERR_UNSUPPORTED, "ag_tensor_from_dlpack",
                     "DLPack version 2.0", p);
  producer_init(&p);
  p.m.version.major = 0;
  CHECK_IMPORT_FAILS(ag_tensor_from_dlpack(&t, ctx, &p.m), AG_ERR_UNSUPPORTED, "ag_tensor_from_dlpack",
                     "DLPack version 0.", p);
  producer_init(&p);
  p.m.dl_tensor.device.device_type = 2;
  CHECK_IMPORT_FAILS(ag_tensor_from_dlpack(&t, ctx, &p.m), AG_ERR_UNSUPPORTED, "ag_tensor_from_dlpack",
                     "device type 2", p);
  producer_init(&p);
  p.m.dl_tensor.dtype.code = AG_DLPACK_CODE_UINT;
  p.m.dl_tensor.dtype.bits = 16;
  CHECK_IMPORT_FAILS(ag_tensor_from_dlpack(&t, ctx, &p.m), AG_ERR_DTYPE, "ag_tensor_from_dlpack",
                     "code 1, bits 16, lanes 1", p);
  producer_init(&p);
  p.m.dl_tensor.dtype.lanes = 4;
  CHECK_IMPORT_FAILS(ag_tensor_from_dlpack(&t, ctx, &p.m), AG_ERR_DTYPE, "ag_tensor_from_dlpack", "lanes 4", p);
  producer_init(&p);
  p.m.dl_tensor.strides = (int64_t *)neg_strides;
  CHECK_IMPORT_FAILS(ag_tensor_from_dlpack(&t, ctx, &p.m), AG_ERR_UNSUPPORTED, "ag_tensor_from_dlpack",
                     "stride -1 of dim 1 is negative", p);
  producer_init(&p);
  p.m.dl_tensor.data = NULL;
  CHECK_IMPORT_FAILS(ag_tensor_from_dlpack(&t, ctx, &p.m), AG_ERR_INVALID_ARGUMENT, "ag_tensor_from_dlpack",
                     "data is NULL", p);
  producer_init(&p);
  p.m.dl_tensor.ndim = 17;
  CHECK_IMPORT_FAILS(ag_tensor_from_dlpack(&t, ctx, &p.m), AG_ERR_INVALID_ARGUMENT, "ag_tensor_from_dlpack",
                     "ndim 17", p);
  producer_init(&p);
  CHECK_IMPORT_FAILS(ag_tensor_from_dlpack(NULL, ctx, &p.m), AG_ERR_INVALID_ARGUMENT, "ag_tensor_from_dlpack",
                     "output pointer is NULL", p);
  producer_init(&p);
  CHECK_IMPORT_FAILS(ag_tensor_from_dlpack(&t, NULL, &p.m), AG_ERR_INVALID_ARGUMENT, "ag_tensor_from_dlpack",
                     "context is NULL", p);
  producer_init(&p);
  p.legacy.dl_tensor.device.device_type = 10;
  CHECK_IMPORT_FAILS(ag_tensor_from_dlpack_legacy(&t, ctx, &p.legacy), AG_ERR_UNSUPPORTED,
                     "ag_tensor_from_dlpack_legacy", "device type 10", p);
  producer_init(&p);
  CHECK_IMPORT_FAILS(ag_tensor_from_dlpack_legacy(NULL, ctx, &p.legacy), AG_ERR_INVALID_ARGUMENT,
                     "ag_tensor_from_dlpack_legacy", "output pointer is NULL", p);
  CHECK(t == NULL);
  CHECK_ERR(ag_tensor_from_dlpack(&t, ctx, NULL), AG_ERR_INVALID_ARGUMENT, "ag_tensor_from_dlpack");
  CHECK_MSG_HAS("src is NULL");
  CHECK_ERR(ag_tensor_from_dlpack_legacy(&t, ctx, NULL), AG_ERR_INVALID_ARGUMENT, "ag_tensor_from_dlpack_legacy");
  /* A NULL deleter is allowed, on failure and on success. */
  producer_init(&p);
  p.m.deleter = NULL;
  p.m.version.major = 2;
  CHECK_STATUS(ag_tensor_from_dlpack(&t, ctx, &p.m), AG_ERR_UNSUPPORTED);
  p.m.version.major = 1;
  if (CHECK_OK(ag_tensor_from_dlpack(&t, ctx, &p.m)))
    ag_tensor_release(t);
  CHECK(p.calls == 0);
  ag_context_release(ctx);
}

int main(int argc, char **argv) {
  h_init(argc, argv);
  RUN(test_export_describes_the_tensor);
  RUN(test_round_trip_shares_memory);
  RUN(test_export_outlives_handles);
  RUN(test_export_keeps_read_only);
  RUN(test_import_hand_built);
  RUN(test_import_misaligned_copies);
  RUN(test_import_failures_free_the_producer);
  return h_finish();
}
