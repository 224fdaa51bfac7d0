/*
 * tests/c_api/test_host_allocator.c - a context's host allocator
 * (ag_context_options.alloc/free/user/destroy): every byte of tensor data
 * comes from it with the alignment asked for and goes back with the same
 * size; an allocator that fails the k-th allocation, for every k over a
 * forward + backward, gives AG_ERR_OUT_OF_MEMORY, leaks nothing (the host's
 * count and ASan's leak check) and leaves the context usable.
 */
#include "harness.h"

enum { MAX_BLOCKS = 4096 };

/* The host's side: live blocks with their sizes, and a failure switch. */
typedef struct {
  void *ptr[MAX_BLOCKS];
  uint64_t size[MAX_BLOCKS];
  int live;
  long allocs, frees, bad_frees, misaligned;
  long fail_at; /* fail the allocation with this number (1-based); 0 = never */
  int destroyed;
} host;

static void *host_alloc(uint64_t size, uint64_t align, void *user) {
  host *h = (host *)user;
  void *p = NULL;
  h->allocs++;
  if (h->fail_at && h->allocs == h->fail_at) return NULL;
  if (h->live == MAX_BLOCKS || (align != 16 && align != 64)) return NULL;
  if (posix_memalign(&p, (size_t)align, size ? (size_t)size : 1) != 0) return NULL;
  if ((uintptr_t)p % align) h->misaligned++;
  h->ptr[h->live] = p;
  h->size[h->live] = size;
  h->live++;
  return p;
}

static void host_free(void *p, uint64_t size, void *user) {
  host *h = (host *)user;
  h->frees++;
  for (int i = 0; i < h->live; ++i) {
    if (h->ptr[i] == p) {
      if (h->size[i] != size) h->bad_frees++;
      h->live--;
      h->ptr[i] = h->ptr[h->live];
      h->size[i] = h->size[h->live];
      free(p);
      return;
    }
  }
  h->bad_frees++; /* never handed out */
}

static void host_destroy(void *user) { ((host *)user)->destroyed++; }

static int owned(const host *h, const void *p) {
  for (int i = 0; i < h->live; ++i) {
    const char *b = (const char *)h->ptr[i];
    if ((const char *)p >= b && (const char *)p < b + (h->size[i] ? h->size[i] : 1)) return 1;
  }
  return 0;
}

static ag_context *host_ctx(host *h) {
  ag_context *ctx = NULL;
  ag_context_options o = AG_CONTEXT_OPTIONS_INIT;
  o.num_threads = 1;
  o.alloc = host_alloc;
  o.free = host_free;
  o.user = h;
  o.destroy = host_destroy;
  if (!CHECK_OK(ag_context_create(&ctx, &o))) return NULL;
  return ctx;
}

/* A forward + backward with small, tiny and large (> 1 KiB) tensors:
 * loss = sum(tanh(W @ x)^2) + sum(big * x0) where x0 = x[0] broadcast.
 * Returns the first status that is not AG_OK (AG_OK when all ran) and the
 * gradient sum of x in *gx; releases everything it made. */
static ag_status workload(ag_context *ctx, double *gx) {
  const int64_t s8[1] = {8}, s88[2] = {8, 8}, sbig[1] = {400}, s1[1] = {1};
  double xv[8], wv[64], bv[400];
  ag_tensor *x = NULL, *w = NULL, *big = NULL, *h0 = NULL, *h = NULL, *hh = NULL, *s1t = NULL, *x0 = NULL,
            *bx = NULL, *s2 = NULL, *loss = NULL, *g = NULL;
  ag_status st;
  for (int i = 0; i < 8; ++i) xv[i] = 0.1 * i - 0.3;
  for (int i = 0; i < 64; ++i) wv[i] = sin(0.7 * i);
  for (int i = 0; i < 400; ++i) bv[i] = cos(0.1 * i);
#define TRY(call)             \
  do {                        \
    st = (call);              \
    if (st != AG_OK) goto out; \
  } while (0)
  TRY(ag_tensor_create(&x, ctx, AG_F64, s8, 1, xv));
  TRY(ag_tensor_requires_grad(x, 1));
  TRY(ag_tensor_create(&w, ctx, AG_F64, s88, 2, wv));
  TRY(ag_tensor_requires_grad(w, 1));
  TRY(ag_tensor_create(&big, ctx, AG_F64, sbig, 1, bv));
  TRY(ag_op_matmul(&h0, w, x));
  TRY(ag_op_tanh(&h, h0));
  TRY(ag_op_mul(&hh, h, h));
  TRY(ag_op_sum(&s1t, hh));
  TRY(ag_op_slice(&x0, x, 0, 0, 1, 1));
  TRY(ag_op_mul(&bx, big, x0));
  TRY(ag_op_sum(&s2, bx));
  TRY(ag_op_add(&loss, s1t, s2));
  TRY(ag_backward(loss, NULL, NULL));
  TRY(ag_tensor_grad(&g, x));
  {
    double v[8];
    TRY(ag_tensor_copy_data(g, v, sizeof v));
    *gx = 0;
    for (int i = 0; i < 8; ++i) *gx += v[i];
  }
out:
#undef TRY
  (void)s1;
  REL(g);
  REL(loss);
  REL(s2);
  REL(bx);
  REL(x0);
  REL(s1t);
  REL(hh);
  REL(h);
  REL(h0);
  REL(big);
  REL(w);
  REL(x);
  return st;
}

/* Every byte of data from the host, aligned, freed with its size; destroy
 * once, after the last free, also when tensors outlive the handle. */
static void test_every_byte_from_host(void) {
  host h;
  double gx = 0, ref = 0;
  memset(&h, 0, sizeof h);
  ag_context *ctx = host_ctx(&h);
  REQUIRE(ctx != NULL);
  CHECK_OK(workload(ctx, &gx));
  CHECK(h.allocs > 10);
  CHECK(h.live == 0);
  CHECK(h.misaligned == 0 && h.bad_frees == 0);
  /* a tiny tensor's data is the host's too (not inline in ag's header) */
  ag_tensor *s = NULL;
  CHECK_OK(ag_tensor_scalar(&s, ctx, AG_F32, 1.5));
  CHECK(h.live == 1 && owned(&h, ag_tensor_data(s)));
  ag_context_release(ctx);
  CHECK(h.destroyed == 0); /* s still holds the context */
  REL(s);
  CHECK(h.live == 0 && h.destroyed == 1 && h.bad_frees == 0);
  /* same gradient as with ag's own allocator */
  ag_context *plain = NEW_CTX_THREADS(1);
  CHECK_OK(workload(plain, &ref));
  CHECK(gx == ref);
  ag_context_release(plain);
}

/* Fail the k-th allocation for every k a successful run makes. */
static void test_fail_kth_allocation(void) {
  host h;
  double gx = 0, ref = 0;
  memset(&h, 0, sizeof h);
  ag_context *ctx = host_ctx(&h);
  REQUIRE(ctx != NULL);
  REQUIRE_OK(workload(ctx, &ref));
  const long total = h.allocs;
  long ooms = 0;
  for (long k = 1; k <= total; ++k) {
    h.allocs = 0;
    h.fail_at = k;
    ag_status st = workload(ctx, &gx);
    if (!CHECK(st == AG_ERR_OUT_OF_MEMORY)) printf("# k = %ld: %s\n", k, ag_status_name(st));
    ooms += st == AG_ERR_OUT_OF_MEMORY;
    if (!CHECK(h.live == 0)) printf("# k = %ld: %d blocks leaked\n", k, h.live);
    /* the context stays usable */
    h.fail_at = 0;
    gx = 0;
    CHECK_OK(workload(ctx, &gx));
    CHECK(gx == ref);
  }
  CHECK(ooms == total);
  CHECK(h.bad_frees == 0 && h.live == 0);
  ag_context_release(ctx);
  CHECK(h.destroyed == 1);
}

/* Only one of alloc/free set is refused (no destroy: the context was not
 * made); an old caller's 8-byte struct never reads the new fields. */
static void test_options(void) {
  host h;
  ag_context *ctx = NULL;
  ag_context_options o = AG_CONTEXT_OPTIONS_INIT;
  memset(&h, 0, sizeof h);
  o.alloc = host_alloc;
  o.user = &h;
  o.destroy = host_destroy;
  CHECK_ERR(ag_context_create(&ctx, &o), AG_ERR_INVALID_ARGUMENT, "ag_context_create");
  CHECK_MSG_HAS("free is NULL");
  CHECK(ctx == NULL && h.destroyed == 0);
  o.alloc = NULL;
  o.free = host_free;
  CHECK_ERR(ag_context_create(&ctx, &o), AG_ERR_INVALID_ARGUMENT, "ag_context_create");
  o.alloc = host_alloc;
  o.struct_size = 8; /* a 0.1 caller: the rest is not read */
  REQUIRE_OK(ag_context_create(&ctx, &o));
  ag_tensor *t = NULL;
  const int64_t n[1] = {1000};
  CHECK_OK(ag_tensor_zeros(&t, ctx, AG_F32, n, 1));
  CHECK(h.allocs == 0);
  REL(t);
  ag_context_release(ctx);
  CHECK(h.destroyed == 0);
}

int main(int argc, char **argv) {
  h_init(argc, argv);
  RUN(test_every_byte_from_host);
  RUN(test_fail_kth_allocation);
  RUN(test_options);
  return h_finish();
}
