/*
 * tests/fuzz/api_program.c - the API-program interpreter (api_program.h).
 *
 * Byte format. The first byte sets up the run: bit 0 gives context 0 two
 * threads, bit 1 makes a second context (one thread), bits 2-4 pick a period
 * after which context 0's host allocator fails an allocation (0: never).
 * Then each step is one byte: below 0x80 a generic call (the next two bytes
 * name it by its 16-bit id, see gen_api_calls.py; its arguments follow), else
 * one of the hand-driven steps of run_step (callbacks, option structs,
 * scopes, handles released twice, files). Missing bytes read as 0.
 *
 * Both contexts take their tensor memory from a host allocator here that
 * refuses blocks over 512 KiB and more than 16 MiB live: AddressSanitizer and
 * libFuzzer abort on huge requests instead of failing them, and programs
 * easily ask for terabytes. The allocator also checks that every block is
 * freed once, with its size, before the context's destroy runs.
 *
 * Every handle the program receives goes to a slot; the interpreter mirrors
 * ag's handle scopes (which slot references a scope will release) so that it
 * never releases a reference twice, except on purpose where ABI.md says ag
 * detects it: a handle whose object something else keeps alive.
 */
#define _POSIX_C_SOURCE 200809L
#include "api_program.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ag/ag.h"

#define FZ_ARR 20 /* every array argument has room for this many entries */
#define NT 16     /* tensor slots */
#define NH 4      /* hook slots */
#define NS 4      /* open scopes */
#define MAX_STEPS 96
/* 512 KiB: 131,072 floats, past every parallel grain (core/parallel.h), so
 * multi-chunk loops stay covered; at 1 MiB a program of erf calls on the
 * largest tensors ran 87 s in the -O0 build (several us per element). */
#define MAX_BLOCK (1u << 19)
#define MAX_LIVE (16u << 20)

static ag_tensor *const FZ_SENT_T = (ag_tensor *)(uintptr_t)0x5e47;
static ag_context *const FZ_SENT_C = (ag_context *)(uintptr_t)0x5e49;

typedef struct {
  int64_t live_bytes, live_blocks, count, period;
  int destroyed, has;
  const char **violation;
} Host;

typedef struct Prog {
  const uint8_t *p;
  size_t n;
  ag_context *ctx[2];
  Host host[2];
  ag_tensor *t[NT];
  int depth[NT]; /* the scope depth whose scope records the slot's reference; 0: none */
  ag_hook *h[NH];
  ag_scope *sc[NS];
  int nsc;
  ag_optimizer *opt;
  ag_backward_job *job;
  ag_safetensors *file;
  int live_callbacks; /* user_data blocks whose destroy has not run */
  const char *violation;
  int trace; /* AG_FUZZ_TRACE set: each step's name on stderr, to read a replay */
} Prog;

typedef struct {
  uint16_t id;
  const char *name;
  void (*call)(struct Prog *);
} FzCall;

static void fz_expect(Prog *p, int ok, const char *what) {
  if (!ok && !p->violation) p->violation = what;
}

/* ---- reading the program ---------------------------------------------------------- */

static uint8_t u8(Prog *p) {
  if (!p->n) return 0;
  p->n--;
  return *p->p++;
}

static int fz_count(Prog *p) {
  static const int odd[8] = {-1, 16, 17, FZ_ARR, 5, 6, 8, 3};
  const uint8_t b = u8(p);
  return b < 224 ? b % 5 : odd[b % 8];
}

static int64_t fz_int(Prog *p) {
  static const int64_t odd[16] = {INT64_MAX, INT64_MIN, INT32_MAX, INT32_MIN, (int64_t)1 << 40, -((int64_t)1 << 33),
                                  1 << 20, 1000, 100, 17, 16, 64, 255, 4096, -100, 65536};
  const uint8_t b = u8(p);
  return b < 240 ? (int64_t)(b % 9) - 3 : odd[b % 16];
}

static int fz_small(Prog *p) { return u8(p) % 7 - 1; } /* dtypes and statuses: -1..5 */

static double fz_double(Prog *p) {
  static const double odd[16] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1e308, -1e308, 4.9e-324,
                                 0.5, 1e-12, 1e12, 2.5, -7.0, 1e6, 3.0, 0.999};
  const uint8_t b = u8(p);
  return b < 240 ? (int8_t)(b * 2) / 16.0 : odd[b % 16];
}

static const char *fz_string(Prog *p) {
  static const char *const s[8] = {
      NULL, "", "w", "exp_avg", "momentum_buffer",
      "a tag long enough to need the heap, and some more words to pass any small-string buffer", "step", "sum"};
  return s[u8(p) % 8];
}

static ag_tensor *fz_tensor(Prog *p) {
  const uint8_t b = u8(p);
  return b == 0xff ? NULL : p->t[b % NT];
}

static ag_context *fz_ctx(Prog *p) {
  const uint8_t b = u8(p) % 8;
  return b == 7 ? NULL : p->ctx[b == 6];
}

/* A list of sizes or dims: the first byte is 0xff for NULL, else the number
 * of entries the program gives (low 3 bits); the rest of the room is 1, 2, 3. */
static const int64_t *fz_i64s(Prog *p, int64_t *v) {
  const uint8_t b = u8(p);
  int i, k = b & 7;
  if (b == 0xff) return NULL;
  for (i = 0; i < FZ_ARR; i++) v[i] = i < k ? fz_int(p) : 1 + i % 3;
  return v;
}

static void *fz_tensors(Prog *p, ag_tensor **v) {
  const uint8_t b = u8(p);
  int i, k = b & 7;
  if (b == 0xff) return NULL;
  for (i = 0; i < FZ_ARR; i++) v[i] = i < k ? fz_tensor(p) : p->t[i % NT];
  return v;
}

static void *fz_out_ptr(Prog *p, void *out) { return (u8(p) & 31) == 31 ? NULL : out; }

static void fz_sentinels(ag_tensor **v, int n) {
  for (int i = 0; i < n; i++) v[i] = FZ_SENT_T;
}

/* ---- contract checks ---------------------------------------------------------------- */

static void fz_check_status(Prog *p, ag_status st, const char *fn) {
  const char *m;
  if (p->trace) fprintf(stderr, "  %s: %s %s\n", fn, ag_status_name(st), st ? ag_last_error_message() : "");
  fz_expect(p, st <= 0 && st >= AG_ERR_INTERNAL, "a status outside the list of ABI.md");
  fz_expect(p, st != AG_ERR_INTERNAL, "AG_ERR_INTERNAL (a bug in ag, says ABI.md)");
  if (st == AG_OK) return;
  m = ag_last_error_message();
  fz_expect(p, m && m[0] == '[', "a failure message without [function]");
  if (m && m[0] == '[' && strncmp(m + 1, fn, strlen(fn)) != 0 && strncmp(m + 1, "ag_", 3) != 0)
    fz_expect(p, 0, "a failure message naming no ag function");
}

/* ---- slots and the mirror of ag's handle scopes ---------------------------------------- */

/* Drops slot i's reference. ag takes the record back from the innermost scope
 * that has one for this handle, so the slot of that record inherits i's. */
static int holds_grad(const ag_tensor *h) {
  ag_tensor *g = NULL;
  if (ag_tensor_grad(&g, h) != AG_OK || !g) return 0;
  ag_tensor_release(g);
  return 1;
}

/* Before scope `depth` ends and releases its handles: the non-leaves among
 * them that nothing outside the scope holds give up their gradients
 * (ABI.md, as rel_slot does). */
static void clear_scope_grads(Prog *p, int depth) {
  for (int i = 0; i < NT; i++) {
    ag_tensor *h = p->t[i];
    int outside = 0;
    if (!h || p->depth[i] != depth) continue;
    for (int j = 0; j < NT; j++) outside += p->t[j] == h && p->depth[j] != depth;
    if (!outside && !ag_tensor_is_leaf(h) && holds_grad(h))
      fz_expect(p, ag_tensor_set_grad(h, NULL) == AG_OK, "a non-leaf's gradient could not be cleared");
  }
}

static void rel_slot(Prog *p, int i) {
  ag_tensor *h = p->t[i];
  int j, inner = i, others = 0;
  if (!h) return;
  for (j = 0; j < NT; j++) {
    if (p->t[j] == h && p->depth[j] > p->depth[inner]) inner = j;
    others += j != i && p->t[j] == h;
  }
  /* ABI.md: a non-leaf that holds a recorded gradient (retained, or as a
   * backward's input) may form a cycle through it; the caller clears it
   * before letting go. */
  if (!others && !ag_tensor_is_leaf(h) && holds_grad(h))
    fz_expect(p, ag_tensor_set_grad(h, NULL) == AG_OK, "a non-leaf's gradient could not be cleared");
  p->depth[inner] = p->depth[i];
  p->t[i] = NULL;
  p->depth[i] = 0;
  ag_tensor_release(h);
}

static void keep(Prog *p, ag_tensor *h) {
  const int i = u8(p) % NT;
  if (!h) return;
  if (p->t[i] == h) { /* the slot's own handle again: of its two records, the inner goes */
    ag_tensor_release(h);
    if (p->nsc < p->depth[i]) p->depth[i] = p->nsc;
    return;
  }
  rel_slot(p, i);
  p->t[i] = h;
  p->depth[i] = p->nsc;
}

static void fz_keep_out(Prog *p, ag_status st, ag_tensor *h, int nullable_out) {
  if (st != AG_OK) {
    fz_expect(p, h == FZ_SENT_T, "*out written by a failing call");
    return;
  }
  if (h == FZ_SENT_T) {
    fz_expect(p, nullable_out, "AG_OK without writing *out");
    return;
  }
  keep(p, h);
}

static void fz_keep_outs(Prog *p, ag_status st, ag_tensor **v, int n) {
  for (int i = 0; i < n; i++) {
    if (v[i] == FZ_SENT_T) continue;
    if (st != AG_OK) {
      fz_expect(p, 0, "an output array written by a failing call");
      return;
    }
    keep(p, v[i]);
  }
}

#include "api_calls.inc"

int ag_fuzz_generic_calls(void) { return FZ_NCALLS; }

static void generic_call(Prog *p) {
  const uint8_t hi8 = u8(p), lo8 = u8(p);
  const uint16_t id = (uint16_t)(hi8 << 8 | lo8);
  int lo = 0, hi = FZ_NCALLS;
  while (lo < hi) { /* first id >= the program's, wrapping around */
    const int mid = (lo + hi) / 2;
    if (FZ_CALLS[mid].id < id)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (p->trace) fprintf(stderr, "[%zu] %s\n", p->n, FZ_CALLS[lo == FZ_NCALLS ? 0 : lo].name);
  FZ_CALLS[lo == FZ_NCALLS ? 0 : lo].call(p);
}

/* ---- host allocator ---------------------------------------------------------------------- */

/* Blocks carry their size in front, so a free with another size is seen. */
static void *host_alloc(uint64_t size, uint64_t align, void *user) {
  Host *h = user;
  unsigned char *base;
  const int64_t n = __atomic_add_fetch(&h->count, 1, __ATOMIC_RELAXED);
  if (align != 16 && align != 64) __atomic_store_n(h->violation, "host alloc asked for an odd alignment", __ATOMIC_RELAXED);
  if (size > MAX_BLOCK || (h->period && n % h->period == 0)) return NULL;
  if (__atomic_add_fetch(&h->live_bytes, (int64_t)size, __ATOMIC_RELAXED) > (int64_t)MAX_LIVE) {
    __atomic_sub_fetch(&h->live_bytes, (int64_t)size, __ATOMIC_RELAXED);
    return NULL;
  }
  base = aligned_alloc(64, 64 + ((size + 63) & ~(uint64_t)63));
  if (!base) {
    __atomic_sub_fetch(&h->live_bytes, (int64_t)size, __ATOMIC_RELAXED);
    return NULL;
  }
  memcpy(base, &size, sizeof size);
  __atomic_add_fetch(&h->live_blocks, 1, __ATOMIC_RELAXED);
  return base + 64;
}

static void host_free(void *ptr, uint64_t size, void *user) {
  Host *h = user;
  unsigned char *base = (unsigned char *)ptr - 64;
  uint64_t had;
  memcpy(&had, base, sizeof had);
  if (had != size) __atomic_store_n(h->violation, "host free with a size other than alloc's", __ATOMIC_RELAXED);
  __atomic_sub_fetch(&h->live_bytes, (int64_t)had, __ATOMIC_RELAXED);
  __atomic_sub_fetch(&h->live_blocks, 1, __ATOMIC_RELAXED);
  free(base);
}

static void free_mem(void *mem, void *unused) {
  (void)unused;
  free(mem);
}

static void host_destroy(void *user) { ((Host *)user)->destroyed++; }

/* ---- callbacks ------------------------------------------------------------------------------ */

typedef struct {
  Prog *p;
  int mode;
  ag_tensor *saved; /* custom function: an input to mark dirty */
} Cb;

static Cb *new_cb(Prog *p, int mode) {
  Cb *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->p = p;
  c->mode = mode;
  p->live_callbacks++;
  return c;
}

static void cb_destroy(void *ud) {
  Cb *c = ud;
  c->p->live_callbacks--;
  free(c);
}

static ag_status fail_cb(void) {
  ag_set_callback_error("the program's callback fails");
  return AG_ERR_INVALID_ARGUMENT;
}

static ag_status final_cb(void *ud) { return ((Cb *)ud)->mode & 1 ? fail_cb() : AG_OK; }

/* Modes shared by the hooks: 0 nothing, 1 fail, 2 replace with a clone,
 * 3 replace with a 0-dim tensor (wrong shape), 4 queue a final callback,
 * 5 run a backward of its own from inside the pass, 6 drop the gradient. */
static ag_tensor *replacement(const Cb *c, const ag_tensor *g) {
  ag_tensor *r = NULL;
  if (c->mode == 2) {
    ag_op_clone(&r, g);
  } else if (c->mode == 3) {
    ag_context *ctx = NULL;
    if (ag_tensor_context(&ctx, g) == AG_OK) {
      ag_tensor_scalar(&r, ctx, ag_tensor_dtype(g), 1.0);
      ag_context_release(ctx);
    }
  }
  return r;
}

static ag_status common_cb(Cb *c, const ag_tensor *g) {
  if (c->mode == 1) return fail_cb();
  if (c->mode == 4) {
    Cb *f = new_cb(c->p, c->p->live_callbacks);
    if (f) ag_backward_queue_callback(final_cb, f, cb_destroy);
  }
  if (c->mode == 5 && g) {
    ag_tensor *s = NULL;
    if (ag_op_sum(&s, g) == AG_OK) {
      ag_backward(s, NULL, NULL);
      ag_tensor_release(s);
    }
  }
  return AG_OK;
}

static ag_status tensor_hook(void *ud, const ag_tensor *g, ag_tensor **repl) {
  Cb *c = ud;
  const ag_status st = common_cb(c, g);
  if (st == AG_OK) *repl = replacement(c, g);
  return st;
}

static ag_status leaf_hook(void *ud, ag_tensor *leaf) {
  ag_tensor *g = NULL;
  ag_status st;
  if (ag_tensor_grad(&g, leaf) != AG_OK) return AG_ERR_CALLBACK;
  st = common_cb(ud, g);
  ag_tensor_release(g);
  return st;
}

static ag_status node_hook(void *ud, ag_tensor **grads, int32_t n, const ag_tensor *const *other, int32_t num_other) {
  Cb *c = ud;
  const ag_status st = common_cb(c, n > 0 ? grads[0] : (num_other > 0 ? other[0] : NULL));
  if (st != AG_OK || n < 1) return st;
  if (c->mode == 6) {
    grads[0] = NULL;
  } else if (grads[0]) {
    ag_tensor *r = replacement(c, grads[0]);
    if (r) grads[0] = r;
  }
  return AG_OK;
}

/* Custom function: forward returns clones of (or products with) the inputs;
 * mode bits pick marks, saves and backward failures. */
static ag_status fn_forward(void *ud, ag_function_ctx *fc, const ag_tensor *const *in, int32_t n_in, ag_tensor **out,
                            int32_t n_out) {
  Cb *c = ud;
  int32_t i;
  if (c->mode & 1) return fail_cb();
  if (c->mode & 2) ag_function_ctx_save_for_backward(fc, in, n_in);
  for (i = 0; i < n_out; i++) {
    if (n_in == 0) return AG_ERR_INVALID_ARGUMENT;
    if (i == 0 && (c->mode & 4) && c->saved) { /* output 0 is input 0 changed in place */
      ag_op_mul_(c->saved, in[0]);
      out[0] = ag_tensor_retain(c->saved);
      ag_function_ctx_mark_dirty(fc, c->saved);
      continue;
    }
    if (i == 0 && (c->mode & 128)) continue; /* a NULL output fails the call */
    if (ag_op_mul(&out[i], in[i % n_in], in[(i + 1) % n_in]) != AG_OK) return AG_ERR_CALLBACK;
  }
  if (c->mode & 8) ag_function_ctx_mark_non_differentiable(fc, out[n_out - 1]);
  return AG_OK;
}

static ag_status fn_backward(void *ud, ag_function_ctx *fc, const ag_tensor *const *gout, int32_t n_out,
                             ag_tensor **gin, int32_t n_in) {
  Cb *c = ud;
  int32_t i;
  if (c->mode & 16) return fail_cb();
  for (i = 0; i < n_in; i++) {
    if (!ag_function_ctx_needs_input_grad(fc, i) && !(c->mode & 32)) continue;
    if ((c->mode & 64) && ag_function_ctx_num_saved(fc) > i) {
      ag_tensor *s = NULL;
      if (ag_function_ctx_saved_tensor(&s, fc, i) == AG_OK) {
        ag_op_mul(&gin[i], s, gout[0]);
        ag_tensor_release(s);
      }
    } else if (n_out > 0) {
      ag_op_clone(&gin[i], gout[i % n_out]);
    }
  }
  return AG_OK;
}

/* The program's function for the functional helpers: one op of the
 * generic table would need slots; a fixed product keeps it simple. */
static ag_status fn_fn(void *ud, const ag_tensor *const *in, int32_t n_in, ag_tensor **out, int32_t n_out) {
  int32_t i;
  if (((Cb *)ud)->mode & 1) return fail_cb();
  for (i = 0; i < n_out; i++) {
    if (n_in == 0) return AG_ERR_INVALID_ARGUMENT;
    if (ag_op_mul(&out[i], in[i % n_in], in[0]) != AG_OK) return AG_ERR_CALLBACK;
  }
  return AG_OK;
}

/* ---- hand-driven steps ------------------------------------------------------------------------ */

static void step_create(Prog *p) {
  ag_tensor *out = FZ_SENT_T;
  int64_t shape_v[FZ_ARR];
  const int64_t *shape = fz_i64s(p, shape_v);
  const int32_t nd = fz_count(p);
  const ag_dtype dt = (ag_dtype)fz_small(p);
  const uint8_t how = u8(p);
  int64_t numel = 1;
  int32_t i;
  ag_context *ctx = fz_ctx(p);
  ag_status st;
  for (i = 0; shape && i < nd && i < FZ_ARR; i++) {
    if (shape[i] < 0 || shape[i] > 64 || numel > 4096) numel = -1;
    if (numel >= 0) numel *= shape[i];
  }
  if (numel >= 0 && numel <= 512 && (shape || nd <= 0) && nd <= AG_MAX_DIMS) {
    /* data from the program, in the dtype's layout (8 bytes per element covers all) */
    static uint64_t buf[512];
    const size_t es = ag_dtype_size(dt) ? ag_dtype_size(dt) : 8;
    unsigned char *b = (unsigned char *)buf;
    for (i = 0; i < numel; i++) {
      const double v = fz_double(p);
      if (dt == AG_F32) {
        float f = (float)v;
        memcpy(b + i * es, &f, 4);
      } else if (dt == AG_I64) {
        int64_t k = isfinite(v) ? (int64_t)v : 7;
        memcpy(b + i * es, &k, 8);
      } else if (dt == AG_BOOL) {
        b[i] = (unsigned char)(v != 0);
      } else {
        memcpy(b + i * es, &v, 8);
      }
    }
    if (how & 1) { /* lent memory, read-only at random; freed by the deleter */
      void *mem = malloc((size_t)(numel ? numel : 1) * es);
      if (!mem) return;
      memcpy(mem, buf, (size_t)numel * es);
      st = ag_tensor_from_buffer_flags(&out, ctx, dt, shape, NULL, nd, mem, (how >> 1) & 1, free_mem, NULL);
      fz_check_status(p, st, "ag_tensor_from_buffer_flags");
    } else {
      st = ag_tensor_create(&out, ctx, dt, shape, nd, (how & 2) ? NULL : buf);
      fz_check_status(p, st, "ag_tensor_create");
    }
  } else { /* large, overflowing or invalid sizes: no data to read */
    st = ag_tensor_full(&out, ctx, dt, shape, nd, fz_double(p));
    fz_check_status(p, st, "ag_tensor_full");
  }
  fz_keep_out(p, st, out, 0);
  if (st == AG_OK && (how & 4)) ag_tensor_requires_grad(p->t[u8(p) % NT], 1);
}

/* Option structs sit at the start of zeroed room, so that a struct_size
 * larger than the struct (a newer caller's) stays within the caller's memory. */
#define ROOM 256
static uint32_t fz_struct_size(Prog *p) { return (uint32_t)(fz_int(p) & (ROOM - 1)); }

static void step_backward(Prog *p) {
  union {
    ag_backward_options o;
    unsigned char room[ROOM];
  } u;
  ag_backward_options bo;
  ag_tensor *in_v[FZ_ARR];
  ag_tensor *root = fz_tensor(p), *seed = (u8(p) & 3) == 3 ? fz_tensor(p) : NULL;
  const uint8_t f = u8(p);
  ag_backward_options_init(&bo);
  bo.retain_graph = f & 1;
  bo.create_graph = (f >> 1) & 1;
  if (f & 4) {
    bo.num_inputs = fz_count(p);
    bo.inputs = fz_tensors(p, in_v);
  }
  if ((f & 0xf8) == 0xf8) bo.struct_size = fz_struct_size(p);
  memset(&u, 0, sizeof u);
  u.o = bo;
  fz_check_status(p, ag_backward(root, seed, (f & 0xf0) == 0xe0 ? NULL : &u.o), "ag_backward");
}

static void step_grad(Prog *p) {
  ag_grad_options go;
  ag_tensor *o_v[FZ_ARR], *go_v[FZ_ARR], *i_v[FZ_ARR], *g[FZ_ARR];
  void *outs = fz_tensors(p, o_v), *gouts = (u8(p) & 1) ? fz_tensors(p, go_v) : NULL;
  const int32_t n_out = fz_count(p);
  void *ins = fz_tensors(p, i_v);
  const int32_t n_in = fz_count(p);
  const uint8_t f = u8(p);
  ag_status st;
  ag_grad_options_init(&go);
  go.retain_graph = f & 1;
  go.create_graph = (f >> 1) & 1;
  go.allow_unused = (f >> 2) & 1;
  fz_sentinels(g, FZ_ARR);
  st = ag_grad(g, outs, gouts, n_out, ins, n_in, (f & 8) ? NULL : &go);
  fz_check_status(p, st, "ag_grad");
  for (int i = 0; i < FZ_ARR; i++) {
    if (g[i] == FZ_SENT_T) continue;
    fz_expect(p, st == AG_OK && i < n_in, "ag_grad wrote a gradient it should not");
    if (st == AG_OK) keep(p, g[i]);
  }
}

static void step_hook(Prog *p) {
  const uint8_t f = u8(p);
  const int slot = u8(p) % NH;
  ag_tensor *t = fz_tensor(p);
  ag_hook *h = (ag_hook *)(uintptr_t)0x5e4b;
  Cb *c = new_cb(p, u8(p) % 7);
  ag_status st;
  if (!c) return;
  switch (f % 4) {
    case 0: st = ag_tensor_register_hook(&h, t, tensor_hook, c, cb_destroy); break;
    case 1: st = ag_tensor_register_post_accumulate_grad_hook(&h, t, leaf_hook, c, cb_destroy); break;
    case 2: st = ag_tensor_register_node_pre_hook(&h, t, node_hook, c, cb_destroy); break;
    default: st = ag_tensor_register_node_post_hook(&h, t, node_hook, c, cb_destroy); break;
  }
  fz_check_status(p, st, "ag_tensor_register_hook");
  if (st != AG_OK) return;
  if (p->h[slot]) ((f >> 2) & 1 ? ag_hook_remove : ag_hook_release)(p->h[slot]);
  p->h[slot] = h;
}

static void step_hook_end(Prog *p) {
  const uint8_t f = u8(p);
  ag_hook *h = p->h[f % NH];
  if (!h) return;
  p->h[f % NH] = NULL;
  ((f >> 2) & 1 ? ag_hook_remove : ag_hook_release)(h);
}

static void step_function(Prog *p) {
  ag_function_def def;
  ag_tensor *in_v[FZ_ARR], *out[FZ_ARR];
  void *ins = fz_tensors(p, in_v);
  const int32_t n_in = fz_count(p), n_out = fz_count(p);
  Cb *c = new_cb(p, u8(p));
  ag_status st;
  if (!c) return;
  c->saved = ins && n_in > 0 ? in_v[0] : NULL;
  ag_function_def_init(&def);
  def.flags = u8(p) & 1;
  def.name = fz_string(p);
  def.forward = fn_forward;
  def.backward = fn_backward;
  def.user_data = c;
  def.destroy = cb_destroy;
  fz_sentinels(out, FZ_ARR);
  st = ag_function_apply(out, n_out, ins, n_in, &def);
  fz_check_status(p, st, "ag_function_apply");
  fz_keep_outs(p, st, out, FZ_ARR);
}

static void step_functional(Prog *p) {
  ag_functional_options fo;
  ag_tensor *in_v[FZ_ARR], *v_v[FZ_ARR], *r[FZ_ARR * FZ_ARR], *o[FZ_ARR]; /* a Jacobian has n_out * n_in blocks */
  void *ins = fz_tensors(p, in_v), *vs = fz_tensors(p, v_v);
  const int32_t n_in = fz_count(p), n_out = fz_count(p);
  const uint8_t f = u8(p);
  Cb c = {p, f >> 3, NULL};
  ag_status st;
  ag_functional_options_init(&fo);
  fo.create_graph = f & 1;
  fo.strict = (f >> 1) & 1;
  fz_sentinels(r, FZ_ARR * FZ_ARR);
  fz_sentinels(o, FZ_ARR);
  switch ((f >> 2) % 4) {
    case 0: st = ag_vjp(r, o, fn_fn, &c, ins, n_in, vs, n_out, &fo); break;
    case 1: st = ag_jvp(r, o, fn_fn, &c, ins, n_in, vs, n_out, &fo); break;
    case 2: st = ag_jacobian(r, fn_fn, &c, ins, n_in, n_out, &fo); break;
    default: st = ag_hvp(r, o, fn_fn, &c, ins, n_in, vs, &fo); break;
  }
  fz_check_status(p, st, "ag_vjp");
  fz_keep_outs(p, st, r, FZ_ARR * FZ_ARR);
  fz_keep_outs(p, st, o, FZ_ARR);
}

static void step_scope(Prog *p) {
  const uint8_t f = u8(p);
  ag_status st;
  if (f % 3 == 0 && p->nsc < NS) {
    ag_scope *s = NULL;
    st = ag_scope_begin(&s);
    fz_check_status(p, st, "ag_scope_begin");
    if (st == AG_OK) p->sc[p->nsc++] = s;
  } else if (f % 3 == 1 && p->nsc > 0) {
    const int k = (f >> 2) & 1 ? p->nsc - 2 : p->nsc - 1; /* sometimes not the innermost */
    if (k == p->nsc - 1) clear_scope_grads(p, p->nsc);
    st = ag_scope_end(k >= 0 ? p->sc[k] : NULL);
    fz_check_status(p, st, "ag_scope_end");
    fz_expect(p, (st == AG_OK) == (k == p->nsc - 1), "ag_scope_end of a scope that is not the innermost");
    if (st == AG_OK) {
      for (int i = 0; i < NT; i++) /* released by the scope */
        if (p->depth[i] == p->nsc) p->t[i] = NULL, p->depth[i] = 0;
      p->nsc--;
    }
  } else if (f % 3 == 2) {
    ag_tensor *t = fz_tensor(p);
    int i, inner = -1;
    st = ag_scope_keep(t);
    fz_check_status(p, st, "ag_scope_keep");
    for (i = 0; i < NT; i++)
      if (t && p->t[i] == t && p->depth[i] > 0 && (inner < 0 || p->depth[i] > p->depth[inner])) inner = i;
    if (st == AG_OK) {
      fz_expect(p, inner >= 0, "ag_scope_keep of a handle no scope recorded");
      if (inner >= 0) p->depth[inner]--;
    }
  }
}

/* Released handles passed back where ABI.md says ag detects them: objects
 * that something else keeps alive (a leaf's gradient held by the leaf; a
 * context held by its tensors, whose handle the program releases early). */
static int in_slots(const Prog *p, const ag_tensor *t) {
  for (int i = 0; i < NT; i++)
    if (p->t[i] == t) return 1;
  return 0;
}

static void step_released(Prog *p) {
  ag_tensor *t = fz_tensor(p), *g = NULL, *out = FZ_SENT_T;
  ag_context *c = NULL;
  const int k = u8(p) & 1;
  if (!t) return;
  if (ag_tensor_grad(&g, t) == AG_OK && g && !in_slots(p, g)) {
    ag_tensor_release(g);
    ag_tensor_release(g); /* detected: t still holds its gradient */
    fz_expect(p, ag_op_neg(&out, g) == AG_ERR_INVALID_ARGUMENT && out == FZ_SENT_T, "a released handle accepted");
    fz_expect(p, ag_tensor_retain(g) == NULL, "retain of a released handle");
  } else if (g) {
    ag_tensor_release(g);
  }
  if (ag_tensor_context(&c, t) != AG_OK) return;
  ag_context_release(c);
  if (c == p->ctx[k]) { /* the program's own handle goes early; t keeps the context */
    ag_context_release(p->ctx[k]);
    ag_context_release(p->ctx[k]);
    fz_expect(p, ag_context_num_threads(c) == 0, "a released context handle accepted");
    p->ctx[k] = NULL;
  }
}

static void step_optimizer(Prog *p) {
  const uint8_t f = u8(p);
  ag_optimizer_options oo;
  ag_status st;
  ag_optimizer_options_init(&oo);
  switch (f % 4) {
    case 0: {
      ag_optimizer *o = NULL;
      oo.lr = fz_double(p);
      oo.momentum = (f & 16) ? fz_double(p) : 0;
      oo.weight_decay = (f & 32) ? fz_double(p) : 0;
      oo.nesterov = (f >> 6) & 1;
      oo.amsgrad = oo.centered = (f >> 7) & 1;
      st = ag_optimizer_create(&o, fz_small(p), (f & 8) ? NULL : &oo);
      fz_check_status(p, st, "ag_optimizer_create");
      if (st != AG_OK) return;
      ag_optimizer_release(p->opt);
      p->opt = o;
      break;
    }
    case 1: {
      ag_tensor *v[FZ_ARR];
      void *params = fz_tensors(p, v);
      const int32_t n = fz_count(p);
      fz_check_status(p, ag_optimizer_add_param_group(p->opt, params, n, (f & 8) ? NULL : &oo),
                      "ag_optimizer_add_param_group");
      break;
    }
    case 2:
      fz_check_status(p, (f & 8) ? ag_optimizer_zero_grad(p->opt) : ag_optimizer_step(p->opt), "ag_optimizer_step");
      break;
    default: {
      ag_tensor *s = FZ_SENT_T;
      const int32_t i = fz_count(p);
      const char *name = fz_string(p);
      if (f & 8) {
        st = ag_optimizer_get_state(p->opt, i, name, &s);
        fz_check_status(p, st, "ag_optimizer_get_state");
        fz_keep_out(p, st, s, 0);
      } else {
        fz_check_status(p, ag_optimizer_set_state(p->opt, i, name, fz_tensor(p)), "ag_optimizer_set_state");
        fz_check_status(p, ag_optimizer_set_step(p->opt, i, fz_int(p)), "ag_optimizer_set_step");
      }
    }
  }
}

static void step_budget(Prog *p) {
  const uint8_t f = u8(p);
  if (!p->job || (f & 3) == 0) {
    ag_backward_options bo;
    ag_backward_job *j = NULL;
    ag_tensor *root = fz_tensor(p);
    ag_status st;
    ag_backward_options_init(&bo);
    bo.retain_graph = (f >> 2) & 1;
    bo.create_graph = (f >> 3) & 1;
    st = ag_backward_begin(&j, root, NULL, &bo);
    fz_check_status(p, st, "ag_backward_begin");
    if (st != AG_OK) return;
    if (p->job) ag_backward_cancel(p->job);
    p->job = j;
  } else if ((f & 3) == 1) {
    int32_t done = 0;
    const int64_t max_nodes = fz_int(p), max_ns = fz_int(p);
    fz_check_status(p, ag_backward_step(p->job, max_nodes, max_ns, &done), "ag_backward_step");
  } else {
    fz_check_status(p, (f & 4) ? ag_backward_cancel(p->job) : ag_backward_end(p->job), "ag_backward_end");
    p->job = NULL; /* the handle goes in every case (budget.h) */
  }
}

/* A file from the program's bytes (the parser's input), or the slots saved
 * and loaded back. */
static void step_file(Prog *p) {
  char path[64];
  const uint8_t f = u8(p);
  ag_safetensors *file = NULL;
  ag_status st;
  snprintf(path, sizeof path, "/tmp/ag_fuzz_%ld.safetensors", (long)getpid());
  if (f & 1) {
    size_t k = (size_t)u8(p) * 2, i;
    FILE *fp = fopen(path, "wb");
    if (!fp) return;
    if (f & 2) { /* a valid-looking header length, then text */
      uint64_t len = k;
      fwrite(&len, 8, 1, fp);
    }
    for (i = 0; i < k && p->n; i++) fputc(u8(p), fp);
    fclose(fp);
  } else {
    const char *names[4] = {"a", "b", fz_string(p), "a"};
    const char *mk[1] = {"k"}, *mv[1] = {fz_string(p)};
    const ag_tensor *ts[4];
    for (int i = 0; i < 4; i++) ts[i] = fz_tensor(p);
    fz_check_status(p, ag_safetensors_save(path, names, ts, (f >> 2) % 5, mk, mv, (f >> 5) & 1),
                    "ag_safetensors_save");
  }
  st = ag_safetensors_load(&file, fz_ctx(p), path);
  fz_check_status(p, st, "ag_safetensors_load");
  unlink(path);
  if (st != AG_OK) return;
  for (int32_t i = 0; i < ag_safetensors_count(file) && i < 8; i++) {
    ag_tensor *t = FZ_SENT_T;
    st = ag_safetensors_get(file, ag_safetensors_name(file, i), &t);
    fz_check_status(p, st, "ag_safetensors_get");
    fz_keep_out(p, st, t, 0);
  }
  (void)ag_safetensors_metadata(file, "k");
  if (f & 64) {
    ag_safetensors_release(file);
  } else {
    ag_safetensors_release(p->file);
    p->file = file;
  }
}

static void step_graph(Prog *p) {
  static char buf[1 << 14];
  ag_tensor *t = fz_tensor(p);
  const ag_node *n = NULL;
  size_t needed = 0;
  const uint8_t f = u8(p);
  fz_check_status(p, ag_graph_export(t, f % 4, buf, (f & 4) ? sizeof buf : 8, &needed), "ag_graph_export");
  if (ag_tensor_grad_fn(&n, t) != AG_OK) return;
  for (int depth = 0; n && depth < 32; depth++) { /* a random walk to the leaves */
    const ag_node *next = NULL;
    int32_t input_nr = 0;
    const int32_t k = ag_node_num_next_edges(n);
    (void)ag_node_name(n);
    (void)ag_node_tag(n);
    (void)ag_node_saved_bytes(n);
    (void)ag_node_sequence_nr(n);
    if (k <= 0 || ag_node_next_edge(n, (int32_t)(u8(p) % (k + 1)), &next, &input_nr) != AG_OK) break;
    n = next;
  }
}

static void step_data(Prog *p) {
  static double buf[FZ_ARR * 4];
  ag_tensor *t = fz_tensor(p);
  const uint8_t f = u8(p);
  const size_t bytes = (size_t)(u8(p) % (sizeof buf + 1));
  void *mut = NULL;
  switch (f % 4) {
    case 0: fz_check_status(p, ag_tensor_copy_data(t, (f & 4) ? NULL : buf, bytes), "ag_tensor_copy_data"); break;
    case 1:
      for (size_t i = 0; i < FZ_ARR * 4; i++) buf[i] = fz_double(p) + (double)i;
      fz_check_status(p, ag_tensor_copy_from(t, (f & 4) ? NULL : buf, bytes), "ag_tensor_copy_from");
      break;
    case 2:
      if (ag_tensor_data_mut(&mut, t) == AG_OK && mut && ag_tensor_numel(t) > 0 && ag_tensor_is_contiguous(t))
        memset(mut, 0, ag_dtype_size(ag_tensor_dtype(t))); /* element 0 */
      break;
    default: {
      ag_dlpack_managed_tensor_versioned *d = NULL;
      ag_tensor *back = FZ_SENT_T;
      ag_status st;
      if (ag_tensor_to_dlpack(&d, t) != AG_OK) return;
      if (f & 4) { /* the consumer drops it */
        if (d->deleter) d->deleter(d);
        return;
      }
      st = ag_tensor_from_dlpack(&back, fz_ctx(p), d);
      fz_check_status(p, st, "ag_tensor_from_dlpack");
      fz_keep_out(p, st, back, 0);
    }
  }
}

static void step_misc(Prog *p) {
  const uint8_t f = u8(p);
  ag_context *c = fz_ctx(p);
  union {
    ag_memory_stats ms;
    unsigned char room[ROOM];
  } u;
  int32_t prev = 0;
  switch (f % 4) {
    case 0: ag_grad_mode_set((f >> 2) & 1, (f & 8) ? NULL : &prev); break;
    case 1:
      memset(&u, 0, sizeof u);
      ag_memory_stats_init(&u.ms);
      if (f & 4) u.ms.struct_size = fz_struct_size(p);
      fz_check_status(p, ag_context_memory_stats(c, &u.ms), "ag_context_memory_stats");
      break;
    case 2: fz_check_status(p, ag_context_trim(c), "ag_context_trim"); break;
    default: {
      union {
        ag_context_options o;
        unsigned char room[ROOM];
      } o;
      ag_context *extra = NULL;
      memset(&o, 0, sizeof o);
      ag_context_options_init(&o.o);
      o.o.num_threads = (int32_t)fz_int(p);
      if (f & 4) o.o.alloc = NULL, o.o.free = host_free; /* only one of the two */
      if (f & 8) o.o.struct_size = fz_struct_size(p);
      if (o.o.num_threads >= 0 && o.o.num_threads <= 2 && ag_context_create(&extra, &o.o) == AG_OK)
        ag_context_release(extra);
    }
  }
}

static void run_step(Prog *p) {
  const uint8_t op = u8(p);
  if (p->trace && op >= 0x80) fprintf(stderr, "[%zu] step %d\n", p->n, op % 16);
  if (op < 0x80) {
    generic_call(p);
    return;
  }
  switch (op % 16) {
    case 0: step_create(p); break;
    case 1: step_backward(p); break;
    case 2: step_grad(p); break;
    case 3: step_hook(p); break;
    case 4: step_hook_end(p); break;
    case 5: step_function(p); break;
    case 6: step_functional(p); break;
    case 7: step_scope(p); break;
    case 8: step_released(p); break;
    case 9: step_optimizer(p); break;
    case 10: step_budget(p); break;
    case 11: step_file(p); break;
    case 12: step_graph(p); break;
    case 13: step_data(p); break;
    case 14: rel_slot(p, u8(p) % NT); break;
    default: step_misc(p); break;
  }
}

static void make_context(Prog *p, int i, int32_t threads, int64_t period) {
  ag_context_options o;
  ag_context_options_init(&o);
  o.num_threads = threads;
  o.alloc = host_alloc;
  o.free = host_free;
  o.destroy = host_destroy;
  o.user = &p->host[i];
  p->host[i].period = period;
  p->host[i].violation = &p->violation;
  if (ag_context_create(&p->ctx[i], &o) == AG_OK) p->host[i].has = 1;
}

const char *ag_fuzz_run_program(const uint8_t *data, size_t size) {
  static const int64_t periods[8] = {0, 7, 13, 29, 61, 127, 251, 509};
  Prog prog, *p = &prog;
  int i, steps = 0;
  uint8_t head;
  memset(p, 0, sizeof *p);
  p->p = data;
  p->n = size;
  p->trace = getenv("AG_FUZZ_TRACE") != NULL;
  head = u8(p);
  make_context(p, 0, 1 + (head & 1), periods[(head >> 2) & 7]);
  if (head & 2) make_context(p, 1, 1, 0);
  while (p->n && steps++ < MAX_STEPS) run_step(p);
  /* everything the program holds, then the contexts */
  if (p->job) ag_backward_cancel(p->job);
  while (p->nsc > 0) {
    clear_scope_grads(p, p->nsc);
    fz_check_status(p, ag_scope_end(p->sc[p->nsc - 1]), "ag_scope_end");
    for (i = 0; i < NT; i++)
      if (p->depth[i] == p->nsc) p->t[i] = NULL, p->depth[i] = 0;
    p->nsc--;
  }
  for (i = 0; i < NT; i++) rel_slot(p, i);
  for (i = 0; i < NH; i++) ag_hook_release(p->h[i]);
  ag_optimizer_release(p->opt);
  ag_safetensors_release(p->file);
  ag_grad_mode_set(1, NULL);
  ag_context_release(p->ctx[0]);
  ag_context_release(p->ctx[1]);
  for (i = 0; i < 2; i++) {
    if (!p->host[i].has) continue;
    fz_expect(p, p->host[i].live_blocks == 0, "tensor memory left allocated after every handle was released");
    fz_expect(p, p->host[i].destroyed == 1, "the context was not freed after every handle was released");
  }
  fz_expect(p, p->live_callbacks == 0, "a callback's destroy did not run after every handle was released");
  return p->violation;
}
