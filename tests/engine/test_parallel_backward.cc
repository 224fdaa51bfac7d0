// Expensive independent nodes run as arena tasks during backward: the
// gradients have the bits of a one-thread run, and a node failing inside a
// task is reported like one failing on the calling thread.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <atomic>
#include <vector>

#include "ag/ag.h"
#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "core/context.h"
#include "core/error.h"
#include "engine/engine.h"
#include "ops/inplace.h"
#include "ops/ops.h"

namespace ag {
namespace {

Tensor filled(Context* ctx, const Dims& shape, double phase, bool grad) {
  Tensor t = empty(ctx, DType::F32, shape);
  for (int64_t i = 0; i < t->numel(); ++i) {
    t->data_as<float>()[i] = static_cast<float>(0.05 * std::sin(phase + 0.37 * static_cast<double>(i)));
  }
  if (grad) ensure_meta(*t).requires_grad = true;
  return t;
}

void append(std::vector<float>& out, const Tensor& t) {
  out.insert(out.end(), t->data_as<float>(), t->data_as<float>() + t->numel());
}

// Four branches of different depth from one input, with shared and
// broadcast parameters, plus a cheap branch; returns the loss and every
// gradient, and how many nodes ran as tasks.
struct BranchRun {
  std::vector<float> bits;
  uint64_t tasks = 0;
};

BranchRun branches(int threads, int passes) {
  Ref<Context> ctx = make_ref<Context>(threads);
  Tensor x = filled(ctx.get(), Dims{128, 512}, 0.1, true);
  Tensor bias = filled(ctx.get(), Dims{512}, 0.2, true);
  std::vector<Tensor> weights;
  for (int k = 0; k < 4; ++k) weights.push_back(filled(ctx.get(), Dims{512, 512}, 1.0 + k, true));
  Tensor small = filled(ctx.get(), Dims{3}, 0.3, true);
  BranchRun r;
  const uint64_t before = nodes_run_as_tasks();
  for (int pass = 0; pass < passes; ++pass) {
    Tensor loss = ops::sum(ops::mul(small, small));
    for (int k = 0; k < 4; ++k) {
      Tensor h = ops::add(ops::matmul(x, weights[static_cast<size_t>(k)]), bias);
      for (int depth = 0; depth <= k; ++depth) h = ops::tanh(ops::mul(h, h));
      loss = ops::add(loss, ops::mean(ops::sigmoid(h)));
    }
    run_backward(loss, ops::full(ctx.get(), DType::F32, Dims(), 1.0), BackwardOptions{});
    append(r.bits, loss);
  }
  r.tasks = nodes_run_as_tasks() - before;
  append(r.bits, meta_of(*x)->grad);
  append(r.bits, meta_of(*bias)->grad);
  append(r.bits, meta_of(*small)->grad);
  for (const Tensor& w : weights) append(r.bits, meta_of(*w)->grad);
  return r;
}

// More threads than the machine has: the arena is capped, so TBB has no
// reason to print its warning (the library never prints). First in the
// file: TBB warns once per process.
TEST(ParallelBackward, OversubscribedContextPrintsNothing) {
  std::fflush(stderr);
  FILE* capture = std::tmpfile();
  ASSERT_NE(capture, nullptr);
  const int saved = dup(2);
  ASSERT_GE(saved, 0);
  ASSERT_GE(dup2(fileno(capture), 2), 0);
  const BranchRun r = branches(64, 1);
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  EXPECT_GT(r.tasks, 0u);
  std::fseek(capture, 0, SEEK_END);
  EXPECT_EQ(std::ftell(capture), 0L) << "something was written to stderr";
  std::fclose(capture);
}

TEST(ParallelBackward, SameBitsAsOneThread) {
  const BranchRun one = branches(1, 2);
  EXPECT_EQ(one.tasks, 0u);  // one thread: every node on the calling thread
  for (int threads : {2, 3}) {
    const BranchRun many = branches(threads, 2);
    EXPECT_GT(many.tasks, 0u) << threads << " threads";
    ASSERT_EQ(one.bits.size(), many.bits.size());
    EXPECT_EQ(0, std::memcmp(one.bits.data(), many.bits.data(), one.bits.size() * sizeof(float)))
        << threads << " threads";
  }
}

// create_graph records nodes during backward: that pass stays on the
// calling thread, and its second-order result matches one thread's.
TEST(ParallelBackward, CreateGraphRunsOnTheCallingThread) {
  std::vector<std::vector<float>> results;
  for (int threads : {1, 2}) {
    Ref<Context> ctx = make_ref<Context>(threads);
    Tensor x = filled(ctx.get(), Dims{128, 256}, 0.4, true);
    Tensor y = ops::sum(ops::add(ops::tanh(ops::mul(x, x)), ops::exp(x)));
    const uint64_t before = nodes_run_as_tasks();
    ExecuteRequest req;
    req.roots.push_back(y);
    req.seeds.push_back(ops::full(ctx.get(), DType::F32, Dims(), 1.0));
    req.inputs.push_back(x);
    req.accumulate = false;
    req.opts.create_graph = true;
    std::vector<Tensor> g = execute(req);
    EXPECT_EQ(nodes_run_as_tasks(), before);
    ASSERT_EQ(g.size(), 1u);
    run_backward(ops::sum(g[0]), ops::full(ctx.get(), DType::F32, Dims(), 1.0), BackwardOptions{});
    results.emplace_back();
    append(results.back(), g[0]);
    append(results.back(), meta_of(*x)->grad);
  }
  EXPECT_EQ(0, std::memcmp(results[0].data(), results[1].data(), results[0].size() * sizeof(float)));
}

// A saved tensor modified in place fails the node that saved it, inside a
// task; the message names the node and both versions, as on one thread.
TEST(ParallelBackward, FailureInsideATaskNamesTheNode) {
  std::vector<std::string> messages;
  for (int threads : {1, 2}) {
    Ref<Context> ctx = make_ref<Context>(threads);
    Tensor x = filled(ctx.get(), Dims{128, 512}, 0.5, true);
    Tensor z = filled(ctx.get(), Dims{128, 512}, 0.6, true);
    Tensor h = ops::exp(x);
    Tensor loss = ops::add(ops::sum(ops::mul(h, h)), ops::sum(ops::tanh(z)));
    {
      GradModeGuard off(false);  // as an optimizer would: bumps the saved h's version
      ops::mul_(h, ops::full(ctx.get(), DType::F32, Dims(), 2.0));
    }
    const uint64_t before = nodes_run_as_tasks();
    try {
      run_backward(loss, ops::full(ctx.get(), DType::F32, Dims(), 1.0), BackwardOptions{});
      ADD_FAILURE() << "backward succeeded with a modified saved tensor";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), AG_ERR_VERSION);
      EXPECT_NE(e.message().find("MulBackward"), std::string::npos) << e.message();
      EXPECT_NE(e.message().find("expected 0"), std::string::npos) << e.message();
      messages.push_back(e.message());
    }
    EXPECT_EQ(nodes_run_as_tasks() > before, threads > 1);
  }
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[0], messages[1]);
}

// Through the C API: hooks run on the thread that called backward even when
// the nodes around them run as tasks.
struct HookLog {
  std::thread::id caller;
  std::atomic<int> calls{0};
  std::atomic<int> elsewhere{0};
  void seen() {
    ++calls;
    if (std::this_thread::get_id() != caller) ++elsewhere;
  }
};

ag_status on_grad(void* user, const ag_tensor*, ag_tensor**) {
  static_cast<HookLog*>(user)->seen();
  return AG_OK;
}
ag_status on_leaf(void* user, ag_tensor*) {
  static_cast<HookLog*>(user)->seen();
  return AG_OK;
}

#define ASSERT_AG(call) ASSERT_EQ((call), AG_OK) << ag_last_error_message()

TEST(ParallelBackward, HooksRunOnTheCallingThread) {
  ag_context_options opts = AG_CONTEXT_OPTIONS_INIT;
  opts.num_threads = 2;
  ag_context* ctx = nullptr;
  ASSERT_AG(ag_context_create(&ctx, &opts));
  ag_scope* scope = nullptr;
  ASSERT_AG(ag_scope_begin(&scope));
  HookLog log;
  log.caller = std::this_thread::get_id();
  const int64_t shape[2] = {256, 256};
  ag_tensor *x = nullptr, *loss = nullptr;
  ASSERT_AG(ag_tensor_full(&x, ctx, AG_F32, shape, 2, 0.25));
  ASSERT_AG(ag_tensor_requires_grad(x, 1));
  ASSERT_AG(ag_tensor_register_post_accumulate_grad_hook(nullptr, x, on_leaf, &log, nullptr));
  for (int k = 0; k < 4; ++k) {
    ag_tensor *c = nullptr, *t = nullptr, *tt = nullptr, *s = nullptr;
    ASSERT_AG(ag_tensor_full(&c, ctx, AG_F32, shape, 2, 0.5 + k));
    ASSERT_AG(ag_op_mul(&t, x, c));
    ASSERT_AG(ag_op_tanh(&t, t));
    ASSERT_AG(ag_tensor_register_hook(nullptr, t, on_grad, &log, nullptr));
    ASSERT_AG(ag_op_mul(&tt, t, t));
    ASSERT_AG(ag_op_sum(&s, tt));
    if (loss) {
      ASSERT_AG(ag_op_add(&loss, loss, s));
    } else {
      loss = s;
    }
  }
  const uint64_t before = nodes_run_as_tasks();
  ASSERT_AG(ag_backward(loss, nullptr, nullptr));
  EXPECT_GT(nodes_run_as_tasks(), before);  // the unhooked t * t nodes
  EXPECT_EQ(log.calls.load(), 5);
  EXPECT_EQ(log.elsewhere.load(), 0);
  ag_scope_end(scope);
  ag_context_release(ctx);
}

}  // namespace
}  // namespace ag

namespace ag {
namespace {

// The bench's small workloads (a: 0-dim chain, b: 16-element chain, e:
// fan-in of 1000 64-element products) never hand work to another thread on
// a context of two; one large op does.
TEST(ParallelBackward, SmallGraphsNeverDispatch) {
  Ref<Context> ctx = make_ref<Context>(2);
  const uint64_t before = ctx->parallel_dispatches();
  for (int64_t n : {int64_t{0}, int64_t{16}}) {
    Tensor x = n ? filled(ctx.get(), Dims{n}, 0.3, true) : ops::full(ctx.get(), DType::F32, Dims(), 0.5);
    if (!n) ensure_meta(*x).requires_grad = true;
    Tensor a = ops::full(ctx.get(), DType::F32, x->shape(), 0.9999), b = ops::full(ctx.get(), DType::F32, x->shape(), 1e-4);
    Tensor y = x;
    for (int i = 0; i < 3000; ++i) y = i % 3 == 0 ? ops::mul(y, a) : i % 3 == 1 ? ops::add(y, b) : ops::tanh(y);
    run_backward(ops::sum(y), ops::full(ctx.get(), DType::F32, Dims(), 1.0), BackwardOptions{});
  }
  Tensor x = filled(ctx.get(), Dims{64}, 0.1, true);
  Tensor loss;
  for (int i = 0; i < 1000; ++i) {
    Tensor w = filled(ctx.get(), Dims{64}, 0.01 * i, true);
    Tensor s = ops::sum(ops::mul(w, x));
    loss = i ? ops::add(loss, s) : s;
  }
  run_backward(loss, ops::full(ctx.get(), DType::F32, Dims(), 1.0), BackwardOptions{});
  EXPECT_EQ(ctx->parallel_dispatches(), before);
  Tensor big = filled(ctx.get(), Dims{1 << 20}, 0.2, false);
  Tensor t = ops::tanh(big);
  EXPECT_GT(ctx->parallel_dispatches(), before);
}

// An optimizer's update, p -= lr * g with a 0-dim lr, and in-place ops with
// a broadcast row split a large self into chunks like the out-of-place ops
// (they ran on the calling thread alone), with the out-of-place bits; a
// small self stays on the calling thread.
TEST(ParallelBackward, InPlaceWithBroadcastOtherRunsInChunks) {
  Ref<Context> ctx = make_ref<Context>(2);
  GradModeGuard off(false);
  Tensor lr = ops::full(ctx.get(), DType::F32, Dims(), 0.01);
  Tensor row = filled(ctx.get(), Dims{1, 1024}, 0.7, false);
  for (const Tensor& other : {lr, row}) {
    Tensor g = filled(ctx.get(), Dims{256, 1024}, 0.3, false);
    const Tensor expect = ops::sub(ops::mul(g, other), other);
    uint64_t before = ctx->parallel_dispatches();
    ops::mul_(g, other);
    EXPECT_GT(ctx->parallel_dispatches(), before);
    before = ctx->parallel_dispatches();
    ops::sub_(g, other);
    EXPECT_GT(ctx->parallel_dispatches(), before);
    EXPECT_EQ(std::memcmp(g->data(), expect->data(), static_cast<size_t>(g->numel()) * sizeof(float)), 0);
  }
  Tensor small = filled(ctx.get(), Dims{64, 64}, 0.3, false);
  const uint64_t before = ctx->parallel_dispatches();
  ops::mul_(small, lr);
  EXPECT_EQ(ctx->parallel_dispatches(), before);
}

}  // namespace
}  // namespace ag
