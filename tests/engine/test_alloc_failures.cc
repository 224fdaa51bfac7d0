// Allocation failure at every point, SQLite style: each scenario (a forward
// and backward, a create_graph pass, hooks, a custom function, an optimizer
// step, safetensors save and load, a budgeted backward) runs once to learn
// its values, then again with its k-th allocation failing, for every k until
// a run sees no failure. Each run must end in AG_OK with the same values, or
// in AG_ERR_OUT_OF_MEMORY (AG_ERR_CALLBACK carrying "out of memory" when the
// failing allocation was a callback's own call); it must not crash, leak
// (the host allocator's count here, LeakSanitizer in the ASan build), and the
// context must give the reference values again afterwards.
//
// An allocation is a call of the context's host allocator or of any
// operator new in the process (replaced below, so ag's handle objects, graph
// nodes, engine bookkeeping, shapes and messages held in std::string are
// covered). Not covered: malloc called directly (the per-thread error message
// buffer, TBB's internals, the C runtime), and the per-thread pools' batch
// refills after the first block (they use nothrow new and tolerate failure).
// The pools are emptied before each run so that their refills are counted.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include <unistd.h>

#include "ag/ag.h"

namespace {

// -1: disarmed; else allocations left before the one that fails.
std::atomic<long> g_countdown{-1};
std::atomic<long> g_failed{0};

bool should_fail() {
  long c = g_countdown.load(std::memory_order_relaxed);
  while (c >= 0) {
    if (g_countdown.compare_exchange_weak(c, c - 1, std::memory_order_relaxed)) {
      if (c == 0) {
        g_failed.fetch_add(1, std::memory_order_relaxed);
        return true;
      }
      return false;
    }
  }
  return false;
}

// Calls of the replaced operator new (and of the host allocator) since the
// last reset, for the steady-state test below.
std::atomic<long> g_allocations{0};

void* checked_alloc(size_t n, size_t align) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (should_fail()) return nullptr;
  if (n == 0) n = 1;
  if (align <= alignof(std::max_align_t)) return std::malloc(n);
  return std::aligned_alloc(align, (n + align - 1) / align * align);
}

}  // namespace

// The replaceable global allocation functions (C++17, [new.delete]).
void* operator new(size_t n) {
  void* p = checked_alloc(n, 0);
  if (!p) throw std::bad_alloc();
  return p;
}
void* operator new[](size_t n) { return ::operator new(n); }
void* operator new(size_t n, std::align_val_t a) {
  void* p = checked_alloc(n, static_cast<size_t>(a));
  if (!p) throw std::bad_alloc();
  return p;
}
void* operator new[](size_t n, std::align_val_t a) { return ::operator new(n, a); }
void* operator new(size_t n, const std::nothrow_t&) noexcept { return checked_alloc(n, 0); }
void* operator new[](size_t n, const std::nothrow_t&) noexcept { return checked_alloc(n, 0); }
void* operator new(size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return checked_alloc(n, static_cast<size_t>(a));
}
void* operator new[](size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return checked_alloc(n, static_cast<size_t>(a));
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }

namespace {

// The host allocator of the scenarios' context: fails with the same
// countdown, and counts live blocks (checked against its frees' sizes).
struct Host {
  std::atomic<long> live{0};
  std::atomic<long> bad_frees{0};
  int destroyed = 0;
};

// Blocks are 64-aligned (ag asks for 16 or 64) with their size in the 64
// bytes before them.
void* host_alloc(uint64_t size, uint64_t align, void* user) {
  if (should_fail() || align > 64) return nullptr;
  void* p = std::aligned_alloc(64, (size + 63) / 64 * 64 + 64);
  if (!p) return nullptr;
  std::memcpy(p, &size, sizeof size);
  static_cast<Host*>(user)->live++;
  return static_cast<char*>(p) + 64;
}
void host_free(void* ptr, uint64_t size, void* user) {
  auto* h = static_cast<Host*>(user);
  char* base = static_cast<char*>(ptr) - 64;
  uint64_t had = 0;
  std::memcpy(&had, base, sizeof had);
  if (had != size) h->bad_frees++;
  h->live--;
  std::free(base);
}
void host_destroy(void* user) { static_cast<Host*>(user)->destroyed++; }

// A scenario's handles, released in reverse order at the end (every path).
struct Handles {
  ag_tensor* t[64] = {};
  int n = 0;
  ag_tensor* add(ag_tensor* x) {
    if (x) t[n++] = x;
    return x;
  }
  ~Handles() {
    while (n > 0) ag_tensor_release(t[--n]);
  }
};

// The values a scenario reads, in a fixed-size buffer (no allocation).
struct Values {
  double v[64];
  int n = 0;
};

#define TRY(call)                      \
  do {                                 \
    const ag_status st_ = (call);      \
    if (st_ != AG_OK) return st_;      \
  } while (0)

ag_status make(Handles& h, ag_tensor** out, ag_context* ctx, const int64_t* shape, int32_t nd, int seed, int grad) {
  double data[256];
  int64_t n = 1;
  for (int i = 0; i < nd; ++i) n *= shape[i];
  for (int64_t i = 0; i < n; ++i) data[i] = std::sin(0.7 * static_cast<double>(i + 1) + seed) * 0.9;
  TRY(ag_tensor_create(out, ctx, AG_F64, shape, nd, data));
  h.add(*out);
  if (grad) TRY(ag_tensor_requires_grad(*out, 1));
  return AG_OK;
}

ag_status read(Values& vals, const ag_tensor* t) {
  double buf[256];
  const int64_t n = ag_tensor_numel(t);
  if (n < 0 || n > 256) return AG_ERR_INVALID_ARGUMENT;
  TRY(ag_tensor_copy_data(t, buf, static_cast<size_t>(n) * sizeof(double)));
  for (int64_t i = 0; i < n && vals.n < 64; ++i) vals.v[vals.n++] = buf[i];
  return AG_OK;
}

ag_status read_grad(Values& vals, Handles& h, const ag_tensor* t) {
  ag_tensor* g = nullptr;
  TRY(ag_tensor_grad(&g, t));
  if (!g) return AG_ERR_GRAPH;
  h.add(g);
  return read(vals, g);
}

// loss = mean(tanh(x @ w + b)^2) with a large (> 1 KiB) extra term.
ag_status model(Handles& h, ag_context* ctx, ag_tensor** w, ag_tensor** b, ag_tensor** loss) {
  const int64_t sx[2] = {4, 3}, sw[2] = {3, 2}, sb[1] = {2}, sbig[1] = {200};
  ag_tensor *x, *big, *xw, *z, *a, *sq, *m, *bs, *bm;
  TRY(make(h, &x, ctx, sx, 2, 1, 0));
  TRY(make(h, w, ctx, sw, 2, 2, 1));
  TRY(make(h, b, ctx, sb, 1, 3, 1));
  TRY(make(h, &big, ctx, sbig, 1, 4, 0));
  TRY(ag_op_matmul(&xw, x, *w));
  h.add(xw);
  TRY(ag_op_add(&z, xw, *b));
  h.add(z);
  TRY(ag_op_tanh(&a, z));
  h.add(a);
  TRY(ag_op_square(&sq, a));
  h.add(sq);
  TRY(ag_op_mean(&m, sq));
  h.add(m);
  TRY(ag_op_mul(&bs, big, big));
  h.add(bs);
  TRY(ag_op_sum(&bm, bs));
  h.add(bm);
  TRY(ag_op_add(loss, m, bm));
  h.add(*loss);
  return AG_OK;
}

ag_status forward_backward(ag_context* ctx, Values& vals) {
  Handles h;
  ag_tensor *w, *b, *loss;
  TRY(model(h, ctx, &w, &b, &loss));
  TRY(ag_backward(loss, nullptr, nullptr));
  TRY(read(vals, loss));
  TRY(read_grad(vals, h, w));
  return read_grad(vals, h, b);
}

ag_status create_graph(ag_context* ctx, Values& vals) {
  Handles h;
  ag_tensor *w, *b, *loss, *gw, *gsq, *gs;
  ag_backward_options bo = AG_BACKWARD_OPTIONS_INIT;
  bo.create_graph = 1;
  TRY(model(h, ctx, &w, &b, &loss));
  TRY(ag_backward(loss, nullptr, &bo));
  TRY(ag_tensor_grad(&gw, w));
  h.add(gw);
  TRY(ag_op_square(&gsq, gw));
  h.add(gsq);
  TRY(ag_op_sum(&gs, gsq));
  h.add(gs);
  TRY(ag_tensor_set_grad(w, nullptr));
  TRY(ag_tensor_set_grad(b, nullptr));
  TRY(ag_backward(gs, nullptr, nullptr));
  TRY(read_grad(vals, h, w));
  return read_grad(vals, h, b);
}

// Hooks: a tensor hook that doubles the gradient of z, a node pre-hook that
// passes through, a post-accumulate hook that reads the leaf's gradient.
// Each makes tensors of its own, so its allocations fail too.
ag_status double_grad(void*, const ag_tensor* g, ag_tensor** repl) { return ag_op_add(repl, g, g); }
ag_status node_pre(void*, ag_tensor** grads, int32_t n, const ag_tensor* const*, int32_t) {
  if (n < 1 || !grads[0]) return AG_OK;
  ag_tensor* c = nullptr;
  const ag_status st = ag_op_clone(&c, grads[0]);
  if (st == AG_OK) grads[0] = c;
  return st;
}
ag_status post_acc(void* ud, ag_tensor* leaf) {
  ag_tensor* g = nullptr;
  const ag_status st = ag_tensor_grad(&g, leaf);
  if (st == AG_OK && g) {
    ag_tensor_item(g, static_cast<double*>(ud));
    ag_tensor_release(g);
  }
  return st;
}
void no_destroy(void*) {}

ag_status hooks(ag_context* ctx, Values& vals) {
  Handles h;
  const int64_t s[1] = {5};
  ag_tensor *x, *y, *z, *l, *one;
  ag_hook *h1 = nullptr, *h2 = nullptr, *h3 = nullptr;
  double seen = 0.0;
  ag_status st = AG_OK;
  TRY(make(h, &x, ctx, s, 1, 5, 1));
  TRY(ag_op_exp(&y, x));
  h.add(y);
  TRY(ag_op_mul(&z, y, x));
  h.add(z);
  TRY(ag_op_sum(&l, z));
  h.add(l);
  TRY(ag_tensor_scalar(&one, ctx, AG_F64, 1.0));
  h.add(one);
  if ((st = ag_tensor_register_hook(&h1, z, double_grad, nullptr, no_destroy)) == AG_OK &&
      (st = ag_tensor_register_node_pre_hook(&h2, y, node_pre, nullptr, no_destroy)) == AG_OK &&
      (st = ag_tensor_register_post_accumulate_grad_hook(&h3, x, post_acc, &seen, no_destroy)) == AG_OK) {
    st = ag_backward(l, one, nullptr);
  }
  ag_hook_remove(h1);
  ag_hook_remove(h2);
  ag_hook_remove(h3);
  TRY(st);
  vals.v[vals.n++] = seen;
  return read_grad(vals, h, x);
}

// A custom function y = x^2, whose backward computes 2 x g from the saved x.
ag_status sq_forward(void*, ag_function_ctx* fc, const ag_tensor* const* in, int32_t, ag_tensor** out, int32_t) {
  TRY(ag_function_ctx_save_for_backward(fc, in, 1));
  return ag_op_mul(&out[0], in[0], in[0]);
}
ag_status sq_backward(void*, ag_function_ctx* fc, const ag_tensor* const* gout, int32_t, ag_tensor** gin, int32_t) {
  ag_tensor *x = nullptr, *xg = nullptr;
  TRY(ag_function_ctx_saved_tensor(&x, fc, 0));
  ag_status st = ag_op_mul(&xg, x, gout[0]);
  if (st == AG_OK) st = ag_op_add(&gin[0], xg, xg);
  ag_tensor_release(xg);
  ag_tensor_release(x);
  return st;
}

ag_status custom_function(ag_context* ctx, Values& vals) {
  Handles h;
  const int64_t s[2] = {3, 4};
  ag_tensor *x, *y = nullptr, *t, *l;
  ag_function_def def = AG_FUNCTION_DEF_INIT;
  def.name = "SquareBackward";
  def.forward = sq_forward;
  def.backward = sq_backward;
  TRY(make(h, &x, ctx, s, 2, 6, 1));
  const ag_tensor* in[1] = {x};
  TRY(ag_function_apply(&y, 1, in, 1, &def));
  h.add(y);
  TRY(ag_op_tanh(&t, y));
  h.add(t);
  TRY(ag_op_sum(&l, t));
  h.add(l);
  TRY(ag_backward(l, nullptr, nullptr));
  return read_grad(vals, h, x);
}

ag_status optimizer(ag_context* ctx, Values& vals) {
  Handles h;
  ag_tensor *w, *b, *loss;
  ag_optimizer* opt = nullptr;
  ag_optimizer_options oo = AG_OPTIMIZER_OPTIONS_INIT;
  oo.lr = 0.1;
  oo.amsgrad = 1;
  TRY(model(h, ctx, &w, &b, &loss));
  TRY(ag_backward(loss, nullptr, nullptr));
  TRY(ag_optimizer_create(&opt, AG_OPTIM_ADAM, &oo));
  ag_tensor* params[2] = {w, b};
  ag_status st = ag_optimizer_add_param_group(opt, params, 2, nullptr);
  if (st == AG_OK) st = ag_optimizer_step(opt);
  if (st == AG_OK) st = ag_optimizer_step(opt);
  ag_tensor* state = nullptr;
  if (st == AG_OK) st = ag_optimizer_get_state(opt, 0, "exp_avg_sq", &state);
  if (st == AG_OK) st = read(vals, state);
  ag_tensor_release(state);
  ag_optimizer_release(opt);
  TRY(st);
  TRY(read(vals, w));
  return read(vals, b);
}

std::string temp_path() { return "/tmp/ag_alloc_failures_" + std::to_string(getpid()) + ".safetensors"; }

ag_status safetensors(ag_context* ctx, Values& vals, const char* path) {
  Handles h;
  const int64_t s1[2] = {3, 5}, s2[1] = {7};
  ag_tensor *a, *b, *la = nullptr, *lb = nullptr;
  ag_safetensors* f = nullptr;
  TRY(make(h, &a, ctx, s1, 2, 7, 0));
  TRY(make(h, &b, ctx, s2, 1, 8, 0));
  const char* names[2] = {"a", "b"};
  const ag_tensor* ts[2] = {a, b};
  const char* keys[1] = {"format"};
  const char* values[1] = {"pt"};
  TRY(ag_safetensors_save(path, names, ts, 2, keys, values, 1));
  TRY(ag_safetensors_load(&f, ctx, path));
  ag_status st = ag_safetensors_get(f, "b", &lb);
  if (st == AG_OK) st = ag_safetensors_get(f, "a", &la);
  const char* meta = ag_safetensors_metadata(f, "format");
  vals.v[vals.n++] = meta && std::strcmp(meta, "pt") == 0;
  ag_safetensors_release(f);
  h.add(la);
  h.add(lb);
  TRY(st);
  TRY(read(vals, la));
  return read(vals, lb);
}

ag_status budgeted(ag_context* ctx, Values& vals) {
  Handles h;
  ag_tensor *w, *b, *loss;
  ag_backward_job* job = nullptr;
  int32_t done = 0;
  TRY(model(h, ctx, &w, &b, &loss));
  TRY(ag_backward_begin(&job, loss, nullptr, nullptr));
  ag_status st = AG_OK;
  while (st == AG_OK && !done) st = ag_backward_step(job, 2, 0, &done);
  if (st == AG_OK) {
    st = ag_backward_end(job);
  } else {
    ag_backward_cancel(job);
  }
  TRY(st);
  TRY(read_grad(vals, h, w));
  return read_grad(vals, h, b);
}

using Scenario = ag_status (*)(ag_context*, Values&);

ag_context* make_context(Host& host) {
  ag_context_options o = AG_CONTEXT_OPTIONS_INIT;
  o.num_threads = 1;
  o.alloc = host_alloc;
  o.free = host_free;
  o.destroy = host_destroy;
  o.user = &host;
  ag_context* ctx = nullptr;
  EXPECT_EQ(ag_context_create(&ctx, &o), AG_OK);
  return ctx;
}

bool same(const Values& a, const Values& b) {
  if (a.n != b.n) return false;
  for (int i = 0; i < a.n; ++i)
    if (std::memcmp(&a.v[i], &b.v[i], sizeof(double)) != 0) return false;
  return true;
}

// Runs s with its k-th allocation failing for k = 0, 1, ... until a run
// has no failure; returns the number of injection points.
long fail_every_allocation(Scenario s, bool callbacks) {
  Host host;
  ag_context* ctx = make_context(host);
  if (!ctx) return 0;
  Values ref;
  EXPECT_EQ(s(ctx, ref), AG_OK) << ag_last_error_message();
  // AG_ALLOC_FAIL_AT=k runs that k alone (to debug one failure).
  const char* only = std::getenv("AG_ALLOC_FAIL_AT");
  long k = only ? std::atol(only) : 0;
  for (;; ++k) {
    Values got;
    ag_context_trim(ctx);  // empty the thread's pools: their refills count
    g_failed = 0;
    g_countdown = k;
    const ag_status st = s(ctx, got);
    g_countdown = -1;
    if (g_failed == 0) {  // k is past the scenario's last allocation
      EXPECT_EQ(st, AG_OK) << ag_last_error_message();
      EXPECT_TRUE(same(got, ref));
      break;
    }
    if (st == AG_OK) {
      // A failure ag absorbed (a pool's batch refill, a cache): same result.
      EXPECT_TRUE(same(got, ref)) << "k = " << k;
    } else if (callbacks && st == AG_ERR_CALLBACK) {
      EXPECT_NE(std::strstr(ag_last_error_message(), "out of memory"), nullptr)
          << "k = " << k << ": " << ag_last_error_message();
    } else {
      EXPECT_EQ(st, AG_ERR_OUT_OF_MEMORY) << "k = " << k << ": " << ag_last_error_message();
    }
    // Nothing of the failed run is left, and the context is still usable
    // and gives the same values.
    ag_memory_stats ms = AG_MEMORY_STATS_INIT;
    EXPECT_EQ(ag_context_memory_stats(ctx, &ms), AG_OK);
    EXPECT_EQ(ms.bytes_in_use, 0) << "k = " << k << ", status " << st << ": " << ag_last_error_message();
    Values again;
    EXPECT_EQ(s(ctx, again), AG_OK) << "after k = " << k << ": " << ag_last_error_message();
    EXPECT_TRUE(same(again, ref)) << "after k = " << k;
    if (::testing::Test::HasFailure() || only) break;
  }
  ag_memory_stats ms = AG_MEMORY_STATS_INIT;
  EXPECT_EQ(ag_context_memory_stats(ctx, &ms), AG_OK);
  EXPECT_EQ(ms.bytes_in_use, 0);
  ag_context_release(ctx);
  EXPECT_EQ(host.live.load(), 0);
  EXPECT_EQ(host.bad_frees.load(), 0);
  EXPECT_EQ(host.destroyed, 1);
  std::printf("%ld injection points\n", k);
  return k;
}

TEST(AllocFailures, ForwardBackward) { EXPECT_GT(fail_every_allocation(forward_backward, false), 20); }
TEST(AllocFailures, CreateGraph) { EXPECT_GT(fail_every_allocation(create_graph, false), 20); }
TEST(AllocFailures, Hooks) { EXPECT_GT(fail_every_allocation(hooks, true), 20); }
TEST(AllocFailures, CustomFunction) { EXPECT_GT(fail_every_allocation(custom_function, true), 20); }
TEST(AllocFailures, OptimizerStep) { EXPECT_GT(fail_every_allocation(optimizer, false), 20); }
TEST(AllocFailures, Budgeted) { EXPECT_GT(fail_every_allocation(budgeted, false), 20); }

std::string g_path;
ag_status safetensors_here(ag_context* ctx, Values& vals) { return safetensors(ctx, vals, g_path.c_str()); }
TEST(AllocFailures, SafetensorsSaveLoad) {
  g_path = temp_path();
  EXPECT_GT(fail_every_allocation(safetensors_here, false), 10);
  std::remove(g_path.c_str());
}

}  // namespace

// A small graph's backward, called again and again (once a frame, say),
// allocates nothing once it ran: nodes, tensors and the engine's lists come
// from the thread's pools and kept capacity. Scalar chain x -> (mul, add,
// tanh) x 20, on one thread and on two.
static ag_status scalar_chain_pass(ag_tensor* x, ag_tensor* a, long* backward_allocations) {
  ag_tensor* y = x;
  for (int i = 0; i < 60; ++i) {
    ag_tensor* next = nullptr;
    const ag_status st = i % 3 == 0 ? ag_op_mul(&next, y, a) : i % 3 == 1 ? ag_op_add(&next, y, a) : ag_op_tanh(&next, y);
    if (y != x) ag_tensor_release(y);
    if (st != AG_OK) return st;
    y = next;
  }
  g_allocations = 0;
  const ag_status st = ag_backward(y, nullptr, nullptr);
  *backward_allocations = g_allocations.load();
  ag_tensor_release(y);
  if (st != AG_OK) return st;
  return ag_tensor_set_grad(x, nullptr);
}

TEST(SteadyState, SmallBackwardAllocatesNothing) {
#if defined(__SANITIZE_ADDRESS__) || defined(AG_NO_POOLS)
  GTEST_SKIP() << "pools are plain new/delete in this build: every node and tensor is an allocation";
#endif
  for (int threads : {1, 2}) {
    ag_context_options o = AG_CONTEXT_OPTIONS_INIT;
    o.num_threads = threads;
    ag_context* ctx = nullptr;
    ASSERT_EQ(ag_context_create(&ctx, &o), AG_OK);
    ag_tensor *x = nullptr, *a = nullptr;
    ASSERT_EQ(ag_tensor_scalar(&x, ctx, AG_F32, 0.5), AG_OK);
    ASSERT_EQ(ag_tensor_scalar(&a, ctx, AG_F32, 0.25), AG_OK);
    ASSERT_EQ(ag_tensor_requires_grad(x, 1), AG_OK);
    long allocations = -1;
    for (int i = 0; i < 3; ++i) ASSERT_EQ(scalar_chain_pass(x, a, &allocations), AG_OK) << ag_last_error_message();
    EXPECT_EQ(allocations, 0) << threads << " thread(s)";
    ag_tensor_release(a);
    ag_tensor_release(x);
    ag_context_release(ctx);
  }
}
