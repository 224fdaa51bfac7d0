// Internal invariants of the graph and the engine, on the C++ internals.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#endif
#include <thread>
#include <vector>

#include "autograd/accumulate_grad.h"
#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "core/context.h"
#include "engine/engine.h"
#include "engine/node_map.h"
#include "kernels/kernels.h"
#include "ops/ops.h"

namespace ag {
namespace {

struct Fixture : ::testing::Test {
  Ref<Context> ctx = make_ref<Context>(1);
  Tensor leaf(const Dims& shape, double v, bool grad = true) {
    Tensor t = ops::full(ctx.get(), DType::F64, shape, v);
    if (grad) ensure_meta(*t).requires_grad = true;
    return t;
  }
  static double value(const Tensor& t, int64_t i = 0) { return t->data_as<double>()[i]; }
  static Node* fn(const Tensor& t) { return grad_fn_of(*t); }
};

TEST_F(Fixture, TopologicalAndSequenceNumbers) {
  Tensor x = leaf({2}, 1.0);
  Tensor a = ops::exp(x);
  Tensor b = ops::tanh(a);
  Tensor c = ops::mul(b, a);
  EXPECT_GT(fn(b)->topological_nr(), fn(a)->topological_nr());
  EXPECT_GT(fn(c)->topological_nr(), fn(b)->topological_nr());
  EXPECT_EQ(fn(a)->next_edge(0).fn->topological_nr(), 0u);  // AccumulateGrad
  EXPECT_LT(fn(a)->sequence_nr(), fn(b)->sequence_nr());
  EXPECT_LT(fn(b)->sequence_nr(), fn(c)->sequence_nr());
}

TEST_F(Fixture, OneAccumulatorPerLeafReferringBackWeakly) {
  Tensor x = leaf({3}, 2.0);
  const int32_t before = x->use_count();
  Tensor y1 = ops::neg(x);
  Tensor y2 = ops::exp(x);
  Node* acc = fn(y1)->next_edge(0).fn.get();
  EXPECT_EQ(acc, fn(y2)->next_edge(0).fn.get());
  EXPECT_STREQ(acc->name(), "AccumulateGrad");
  EXPECT_EQ(meta_of(*x)->grad_accumulator.get(), acc);
  EXPECT_EQ(x->use_count(), before);  // neither the node nor the graph holds the leaf
  Ref<Node> keep = meta_of(*x)->grad_accumulator;
  x.reset();  // the leaf dies; the node outlives it and forgets it
  EXPECT_FALSE(static_cast<AccumulateGrad&>(*keep).variable());
}

TEST_F(Fixture, SavedOutputMakesNoCycle) {
  Tensor x = leaf({4}, 0.5);
  Ref<Storage> data = x->storage_ref();
  const int32_t before = data->use_count();
  {
    Tensor y = ops::exp(x);   // saves its output
    Tensor z = ops::tanh(y);  // saves its output too
    Tensor w = ops::mul(x, x);  // saves the leaf: its data, not the leaf itself
    Tensor v = ops::mul(x, w);  // the same view of the leaf's data
    EXPECT_EQ(data->use_count(), before + 1);
  }
  // The whole graph was freed; the leaf's own AccumulateGrad keeps its one
  // saved view while the leaf lives, and drops it with the leaf.
  EXPECT_EQ(data->use_count(), before + 1);
  x.reset();
  EXPECT_EQ(data->use_count(), 1);
}

TEST_F(Fixture, SavedLeafViewGoesWithTheLeaf) {
  Tensor x = leaf({3}, 2.0);
  Ref<Storage> data = x->storage_ref();
  Tensor y = ops::mul(x, x);
  Ref<Node> acc = meta_of(*x)->grad_accumulator;  // outlives the leaf, as a graph's edge would keep it
  x.reset();
  y.reset();
  EXPECT_EQ(data->use_count(), 1);  // nothing of the graph or the node holds the data any more
  EXPECT_FALSE(static_cast<AccumulateGrad&>(*acc).variable());
}

TEST_F(Fixture, NoGraphWithoutGradMode) {
  Tensor x = leaf({2}, 1.0);
  GradModeGuard off(false);
  Tensor y = ops::mul(x, x);
  EXPECT_EQ(y->autograd_meta(), nullptr);  // no autograd allocation at all
}

TEST_F(Fixture, FanInSumsEveryContribution) {
  Tensor x = leaf({3}, 1.5);
  Tensor total = ops::mul(x, x);
  for (int i = 0; i < 50; ++i) total = ops::add(total, ops::mul(x, leaf({3}, i, false)));
  Tensor loss = ops::sum(total);
  run_backward(loss, ops::full(ctx.get(), DType::F64, Dims(), 1.0), BackwardOptions{});
  // d/dx (x^2 + sum_i i*x) = 2x + 1225
  EXPECT_DOUBLE_EQ(value(meta_of(*x)->grad, 1), 2 * 1.5 + 1225.0);
}

// Gradients reaching one input are summed in a fixed order, the most
// recently recorded producer first, whether they are summed as they arrive
// or at the end. f32 values whose sum depends on the order: 1e8 + 3 + 3 is
// 1e8 that way round, 1e8 + 8 the other.
float fan_in_gradient(Context* ctx, const std::vector<double>& coefficients) {
  Tensor x = ops::full(ctx, DType::F32, Dims{1}, 1.0);
  ensure_meta(*x).requires_grad = true;
  Tensor total;
  for (double c : coefficients) {
    Tensor b = ops::mul(x, ops::full(ctx, DType::F32, Dims{1}, c));
    total = total ? ops::add(total, b) : b;
  }
  run_backward(ops::sum(total), ops::full(ctx, DType::F32, Dims(), 1.0), BackwardOptions{});
  return meta_of(*x)->grad->data_as<float>()[0];
}

TEST(FanIn, SumsTheNewestContributionFirst) {
  for (int threads : {1, 2}) {
    Ref<Context> ctx = make_ref<Context>(threads);
    EXPECT_EQ(fan_in_gradient(ctx.get(), {3, 3, 1e8}), 1e8f) << threads << " threads";
    EXPECT_EQ(fan_in_gradient(ctx.get(), {1e8, 3, 3}), 1e8f + 8.0f) << threads << " threads";
  }
}

// The same order when the graph was recorded on two threads, whose sequence
// numbers do not follow the graph: the newest producer, h, is ready only
// after the others have run, and its gradient still comes first.
TEST(FanIn, KeepsTheOrderForAGraphRecordedOnTwoThreads) {
  Ref<Context> ctx = make_ref<Context>(1);
  Context* c = ctx.get();
  Tensor x = ops::full(c, DType::F32, Dims{1}, 1.0);
  ensure_meta(*x).requires_grad = true;
  for (int i = 0; i < 16; ++i) (void)ops::mul(x, x);  // this thread's numbers pass the other's
  Tensor h = ops::mul(x, ops::full(c, DType::F32, Dims{1}, 1e8));
  Tensor loss;
  std::thread other([&] {
    const Tensor three = ops::full(c, DType::F32, Dims{1}, 3.0);
    Tensor q = ops::mul(h, ops::full(c, DType::F32, Dims{1}, 1.0));
    loss = ops::sum(ops::add(ops::add(q, ops::mul(x, three)), ops::mul(x, three)));
  });
  other.join();
  ASSERT_LT(grad_fn_of(*loss)->sequence_nr(), grad_fn_of(*h)->sequence_nr());
  run_backward(loss, ops::full(c, DType::F32, Dims(), 1.0), BackwardOptions{});
  EXPECT_EQ(meta_of(*x)->grad->data_as<float>()[0], 1e8f);
}

TEST_F(Fixture, BitwiseRepeatable) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  Tensor x = leaf({64}, 0.0);
  for (int i = 0; i < 64; ++i) x->data_as<double>()[i] = u(rng);
  std::vector<double> first;
  for (int rep = 0; rep < 3; ++rep) {
    Tensor y = ops::tanh(x);
    for (int i = 0; i < 20; ++i) y = ops::add(ops::mul(y, x), ops::tanh(y));
    run_backward(ops::sum(y), ops::full(ctx.get(), DType::F64, Dims(), 1.0), BackwardOptions{});
    Tensor& g = meta_of(*x)->grad;
    std::vector<double> now(g->data_as<double>(), g->data_as<double>() + 64);
    if (rep == 0) first = now;
    EXPECT_EQ(0, std::memcmp(first.data(), now.data(), 64 * sizeof(double)));
    g.reset();
  }
}

// Workload-c-like step on a large odd size: results and gradients are
// bitwise the same with 1 and 2 threads, and the chunked parallel sum gives
// the bits of a single pass.
TEST(Parallel, BitwiseIdenticalForOneAndTwoThreads) {
  const int64_t n = (int64_t{1} << 20) + 12345;
  std::vector<std::vector<float>> results;
  for (int threads : {1, 2}) {
    Ref<Context> ctx = make_ref<Context>(threads);
    Tensor x = empty(ctx.get(), DType::F32, Dims{n});
    Tensor y = empty(ctx.get(), DType::F32, Dims{n});
    for (int64_t i = 0; i < n; ++i) {
      x->data_as<float>()[i] = static_cast<float>(std::sin(0.001 * static_cast<double>(i)));
      y->data_as<float>()[i] = static_cast<float>(std::cos(0.0007 * static_cast<double>(i)));
    }
    ensure_meta(*x).requires_grad = true;
    ensure_meta(*y).requires_grad = true;
    Tensor loss = ops::sum(ops::tanh(ops::add(ops::mul(x, y), x)));
    run_backward(loss, ops::full(ctx.get(), DType::F32, Dims(), 1.0), BackwardOptions{});
    std::vector<float> r{*loss->data_as<float>()};
    const Tensor& gx = meta_of(*x)->grad;
    const Tensor& gy = meta_of(*y)->grad;
    r.insert(r.end(), gx->data_as<float>(), gx->data_as<float>() + n);
    r.insert(r.end(), gy->data_as<float>(), gy->data_as<float>() + n);
    results.push_back(r);

    // The chunked sum against one kernel pass over everything.
    Tensor t = ops::tanh(x);
    Tensor whole = empty(ctx.get(), DType::F32, Dims());
    kernels::sum_to(DType::F32, t->shape(), {t->data(), &t->strides()}, Dims{1}, whole->data());
    GradModeGuard off(false);
    EXPECT_EQ(0, std::memcmp(ops::sum(t)->data(), whole->data(), sizeof(float)));
  }
  ASSERT_EQ(results[0].size(), results[1].size());
  EXPECT_EQ(0, std::memcmp(results[0].data(), results[1].data(), results[0].size() * sizeof(float)));
}

// Broadcast and strided elementwise ops large enough to run in parallel
// slices: the same values as a naive loop, bitwise, at 1 and 2 threads.
TEST(Parallel, StridedSlicesMatchNaive) {
  const int64_t n = 70001;
  for (int threads : {1, 2}) {
    Ref<Context> ctx = make_ref<Context>(threads);
    Tensor a = empty(ctx.get(), DType::F64, Dims{3, n});
    Tensor b = empty(ctx.get(), DType::F64, Dims{n});
    for (int64_t i = 0; i < 3 * n; ++i) a->data_as<double>()[i] = 0.5 + static_cast<double>(i % 977);
    for (int64_t i = 0; i < n; ++i) b->data_as<double>()[i] = 1.0 + static_cast<double>(i % 13);
    const Tensor s = ops::full(ctx.get(), DType::F64, Dims(), 3.0);
    const Tensor by_row = ops::div(a, b);                       // b repeats along dim 0
    const Tensor by_scalar = ops::mul(b, s);                    // 0-dim operand
    const Tensor wide = ops::exp(ops::expand(s, Dims{2, n}));   // stride-0 input
    const Tensor col = ops::sub(ops::expand(b, Dims{2, n}), ops::expand(s, Dims{2, 1}));
    for (int64_t r = 0; r < 3; ++r) {
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(by_row->data_as<double>()[r * n + i], a->data_as<double>()[r * n + i] / b->data_as<double>()[i]);
      }
    }
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(by_scalar->data_as<double>()[i], b->data_as<double>()[i] * 3.0);
      ASSERT_EQ(wide->data_as<double>()[n + i], wide->data_as<double>()[0]);
      ASSERT_EQ(col->data_as<double>()[n + i], b->data_as<double>()[i] - 3.0);
    }
  }
}

#if defined(__SSE__) || defined(__x86_64__)
// A context made in flush-to-zero mode runs its parallel kernels in that
// mode even when the caller has left it: every chunk flushes the denormal
// products to zero, whichever thread runs it. (TBB alone would use the mode
// of the arena's first use.)
TEST(Parallel, ChunksRunInTheCreatorsDenormalMode) {
  const unsigned saved = _mm_getcsr();
  _mm_setcsr(saved | 0x8040u);
  Ref<Context> ctx = make_ref<Context>(2);
  _mm_setcsr(saved & ~0x8040u);
  const int64_t n = int64_t{1} << 21;
  Tensor a = ops::full(ctx.get(), DType::F32, Dims{n}, 1e-20);
  Tensor y = ops::mul(a, a);  // 1e-40: a denormal float unless flushed
  int64_t nonzero = 0;
  for (int64_t i = 0; i < n; ++i) nonzero += y->data_as<float>()[i] != 0.0f;
  EXPECT_EQ(nonzero, 0);
  _mm_setcsr(saved);
}
#endif

TEST(NodeMap, FindsWhatWasInserted) {
  NodeMap m;
  std::vector<int> storage(5000);
  for (int i = 0; i < 5000; ++i) m.insert(reinterpret_cast<const Node*>(&storage[i]), static_cast<uint32_t>(i));
  for (int i = 0; i < 5000; ++i) EXPECT_EQ(m.find(reinterpret_cast<const Node*>(&storage[i])), static_cast<uint32_t>(i));
  int other = 0;
  EXPECT_EQ(m.find(reinterpret_cast<const Node*>(&other)), NodeMap::kMissing);
}

// The strided loops against a naive index computation, over broadcast and
// permuted strides and odd sizes.
TEST(Kernels, BinaryBroadcastMatchesNaive) {
  std::mt19937 rng(11);
  const std::vector<std::pair<Dims, Dims>> cases = {
      {{7, 1, 5}, {3, 1}}, {{1}, {9}}, {{2, 3, 4, 5}, {4, 1}}, {{0, 3}, {3}}, {{}, {17}}, {{33, 2}, {33, 1}}};
  for (const auto& [sa, sb] : cases) {
    const Dims out = broadcast_shapes(sa, sb);
    std::vector<double> a(static_cast<size_t>(numel_of(sa))), b(static_cast<size_t>(numel_of(sb)));
    for (double& v : a) v = rng() % 100;
    for (double& v : b) v = rng() % 100 + 1;
    const Dims as = broadcast_strides(sa, contiguous_strides(sa), out);
    const Dims bs = broadcast_strides(sb, contiguous_strides(sb), out);
    std::vector<double> y(static_cast<size_t>(numel_of(out)));
    kernels::binary(kernels::BinaryKind::Div, DType::F64, out, {reinterpret_cast<const char*>(a.data()), &as},
                    {reinterpret_cast<const char*>(b.data()), &bs}, reinterpret_cast<char*>(y.data()));
    const Dims os = contiguous_strides(out);
    for (int64_t i = 0; i < numel_of(out); ++i) {
      int64_t ia = 0, ib = 0, rem = i;
      for (int d = 0; d < out.size(); ++d) {
        const int64_t idx = rem / os[d];
        rem %= os[d];
        ia += idx * as[d];
        ib += idx * bs[d];
      }
      ASSERT_EQ(y[static_cast<size_t>(i)], a[static_cast<size_t>(ia)] / b[static_cast<size_t>(ib)]);
    }
  }
}

}  // namespace
}  // namespace ag
