// A bounded soak of the threading rules of ABI.md §5, for ThreadSanitizer
// (CI runs the `concurrency` suite in a TSan build) and plain runs alike:
// several threads at once build graphs on shared leaves of one context and
// run backward into them (accumulation into a shared leaf is serialized by
// ag), register and remove hooks on the shared leaves, hand tensors they made
// to other threads to release, read the shared gradient, and run graphs of
// their own contexts. Every context has one thread and a host allocator:
// Debian's TBB is not instrumented for TSan, and the allocator is called
// from every thread at once.
//
// Checked after the join: the shared gradient equals the sum the threads
// contributed (integers in f64, exact in any order), the post-accumulate hook
// ran once per backward, each thread's own results match the closed form,
// and every block and context is freed.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "ag/ag.h"

namespace {

constexpr int kThreads = 4;
constexpr int kIters = 400;
constexpr int64_t kN = 8;

struct Host {
  std::atomic<long> live{0};
  std::atomic<long> allocs{0};
  std::atomic<int> destroyed{0};
};
void* host_alloc(uint64_t size, uint64_t align, void* user) {
  static_cast<Host*>(user)->live++;
  static_cast<Host*>(user)->allocs++;
  return std::aligned_alloc(align, (size + align - 1) / align * align + align);
}
void host_free(void* p, uint64_t, void* user) {
  static_cast<Host*>(user)->live--;
  std::free(p);
}
void host_destroy(void* user) { static_cast<Host*>(user)->destroyed++; }

ag_context* make_context(Host* h) {
  ag_context_options o = AG_CONTEXT_OPTIONS_INIT;
  o.num_threads = 1;
  o.alloc = host_alloc;
  o.free = host_free;
  o.destroy = host_destroy;
  o.user = h;
  ag_context* ctx = nullptr;
  EXPECT_EQ(ag_context_create(&ctx, &o), AG_OK);
  return ctx;
}

ag_tensor* full(ag_context* ctx, double v) {
  ag_tensor* t = nullptr;
  EXPECT_EQ(ag_tensor_full(&t, ctx, AG_F64, &kN, 1, v), AG_OK) << ag_last_error_message();
  return t;
}

// Tensors handed from one thread to another to release.
struct Mailbox {
  std::mutex mu;
  std::deque<ag_tensor*> q;
  void put(ag_tensor* t) {
    std::lock_guard<std::mutex> lock(mu);
    q.push_back(t);
  }
  ag_tensor* take() {
    std::lock_guard<std::mutex> lock(mu);
    if (q.empty()) return nullptr;
    ag_tensor* t = q.front();
    q.pop_front();
    return t;
  }
};

std::atomic<long> g_post_acc{0}, g_leaf_hook{0}, g_destroyed{0};
ag_status count_post_acc(void*, ag_tensor*) {
  g_post_acc++;
  return AG_OK;
}
ag_status count_leaf_hook(void*, const ag_tensor*, ag_tensor**) {
  g_leaf_hook++;
  return AG_OK;
}
ag_status twice(void*, const ag_tensor* g, ag_tensor** repl) { return ag_op_add(repl, g, g); }
void count_destroy(void*) { g_destroyed++; }

struct Outcome {
  int failures = 0;  // calls that did not return AG_OK
  int wrong = 0;     // values off the closed form
};

#define OK(call)                        \
  do {                                  \
    if ((call) != AG_OK) ++out.failures; \
  } while (0)

// Thread t: y = sum(W * c) with c = t + 1 (doubled by a hook on W * c every
// other iteration), backward into the shared W; a hook registered and
// removed on W; W's gradient read; z = sum(x^2) in its own context, checked.
void worker(int t, ag_context* shared, ag_tensor* w, Mailbox& box, Host* own_host, Outcome& out) {
  ag_context* own = make_context(own_host);
  ag_tensor* c = full(shared, t + 1.0);
  for (int i = 0; i < kIters; ++i) {
    ag_tensor *z = nullptr, *y = nullptr;
    ag_hook *h = nullptr, *lh = nullptr;
    OK(ag_op_mul(&z, w, c));
    if (i % 2) OK(ag_tensor_register_hook(&h, z, twice, nullptr, count_destroy));
    if (i % 3 == 0) OK(ag_tensor_register_hook(&lh, w, count_leaf_hook, nullptr, count_destroy));
    OK(ag_op_sum(&y, z));
    OK(ag_backward(y, nullptr, nullptr));
    if (lh) ag_hook_remove(lh);
    if (h) ag_hook_release(h);  // the hook stays with z, which goes below
    ag_tensor* g = nullptr;
    if (i % 8 == 0 && ag_tensor_grad(&g, w) == AG_OK && g) {  // a snapshot, read while others accumulate
      double v[kN];
      OK(ag_tensor_copy_data(g, v, sizeof v));
      ag_tensor_release(g);
    }
    box.put(z);  // some other thread releases it (with its graph and hook)
    box.put(y);
    if (ag_tensor* other = box.take()) ag_tensor_release(other);
    if (ag_tensor* other = box.take()) ag_tensor_release(other);

    ag_tensor *x = full(own, 0.5 * (t + 1)), *xx = nullptr, *s = nullptr, *gx = nullptr;
    OK(ag_tensor_requires_grad(x, 1));
    OK(ag_op_mul(&xx, x, x));
    OK(ag_op_sum(&s, xx));
    OK(ag_backward(s, nullptr, nullptr));
    OK(ag_tensor_grad(&gx, x));
    double v[kN] = {0};
    if (gx) OK(ag_tensor_copy_data(gx, v, sizeof v));
    for (double e : v) out.wrong += e != 2.0 * 0.5 * (t + 1);  // d/dx sum(x^2) = 2x
    ag_tensor_release(gx);
    ag_tensor_release(s);
    ag_tensor_release(xx);
    ag_tensor_release(x);
  }
  ag_tensor_release(c);
  ag_context_release(own);
}

TEST(ThreadsSoak, SharedLeavesHooksCrossThreadReleasesOwnContexts) {
  Host shared_host, own_hosts[kThreads];
  ag_context* shared = make_context(&shared_host);
  ASSERT_NE(shared, nullptr);
  ag_tensor* w = full(shared, 1.5);
  ASSERT_NE(w, nullptr);
  ASSERT_EQ(ag_tensor_requires_grad(w, 1), AG_OK);
  ag_hook* post = nullptr;
  ASSERT_EQ(ag_tensor_register_post_accumulate_grad_hook(&post, w, count_post_acc, nullptr, count_destroy), AG_OK);
  Mailbox box;
  Outcome outcomes[kThreads];
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back(worker, t, shared, w, std::ref(box), &own_hosts[t], std::ref(outcomes[t]));
  }
  for (auto& th : threads) th.join();
  while (ag_tensor* left = box.take()) ag_tensor_release(left);

  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(outcomes[t].failures, 0) << "thread " << t;
    EXPECT_EQ(outcomes[t].wrong, 0) << "thread " << t;
  }
  // Each thread adds c = t + 1 per iteration, 2c on odd iterations.
  double expected = 0.0;
  for (int t = 0; t < kThreads; ++t) expected += (t + 1.0) * (kIters / 2) * 3.0;
  ag_tensor* g = nullptr;
  ASSERT_EQ(ag_tensor_grad(&g, w), AG_OK);
  ASSERT_NE(g, nullptr);
  double v[kN] = {0};
  ASSERT_EQ(ag_tensor_copy_data(g, v, sizeof v), AG_OK);
  for (double e : v) EXPECT_EQ(e, expected);
  ag_tensor_release(g);
  EXPECT_EQ(g_post_acc.load(), static_cast<long>(kThreads) * kIters);
  // The leaf hooks saw at least the passes that began after their
  // registration by the same thread.
  EXPECT_GE(g_leaf_hook.load(), static_cast<long>(kThreads) * ((kIters + 2) / 3));

  ag_hook_remove(post);
  ag_tensor_release(w);
  ag_context_release(shared);
  // Every registration's destroy ran once: per thread kIters / 2 tensor
  // hooks and (kIters + 2) / 3 leaf hooks, plus the post-accumulate hook.
  EXPECT_EQ(g_destroyed.load(), kThreads * (kIters / 2 + (kIters + 2) / 3) + 1);
  EXPECT_EQ(shared_host.live.load(), 0);
  EXPECT_EQ(shared_host.destroyed.load(), 1);
  for (auto& h : own_hosts) {
    EXPECT_EQ(h.live.load(), 0);
    EXPECT_EQ(h.destroyed.load(), 1);
    EXPECT_GT(h.allocs.load(), 0);
  }
}

}  // namespace
