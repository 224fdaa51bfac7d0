// A new tensor and its storage share one pool block (core/tensor_impl.cc,
// empty), with its data too when they fit the block (inline up to 64 bytes,
// then at the block's tail, counted as the context's memory): the storage
// outlives the tensor when views hold it, also when the
// last view goes on another thread, and frees the block then. The weak
// pointer flag lives in the reference count (core/refcount.h): the counts
// seen by callers leave it out. Run under ASan and TSan, these catch a block
// freed too early or freed without ordering. The thread's spare tensor (a
// dead tensor with inline data, kept whole for the next empty()) comes back
// as new, holds no context or history meanwhile, and is never one that
// something else still reaches.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "core/context.h"
#include "core/recorder.h"
#include "core/tensor_impl.h"

namespace ag {
namespace {

// A tensor of n floats 0, 1, 2, ... and a view of all of it; the tensor is
// dropped, the view is returned.
Tensor view_of_dropped_tensor(Context* ctx, int64_t n) {
  Tensor t = empty(ctx, DType::F32, Dims{n});
  for (int64_t i = 0; i < n; ++i) t->data_as<float>()[i] = static_cast<float>(i);
  Tensor v = make_view(*t, t->shape(), t->strides(), 0);
  EXPECT_EQ(t->storage(), v->storage());
  EXPECT_EQ(t->storage()->use_count(), 2);
  return v;  // t goes here
}

void expect_ramp(const Tensor& v, int64_t n) {
  ASSERT_EQ(v->numel(), n);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(v->data_as<float>()[i], static_cast<float>(i)) << "element " << i;
}

TEST(TensorBlock, ViewKeepsTheStorageOfADroppedTensor) {
  Ref<Context> ctx = make_ref<Context>(1);
  for (int64_t n : {int64_t{1}, int64_t{16}, int64_t{4096}}) {  // inline data and the context's memory
    Tensor v = view_of_dropped_tensor(ctx.get(), n);
    EXPECT_TRUE(v->storage()->sole_owner());
    expect_ramp(v, n);
  }
}

TEST(TensorBlock, LargeDataIsFreedWithTheLastView) {
  Ref<Context> ctx = make_ref<Context>(1);
  const int64_t before = ctx->allocator().stats().bytes_in_use;
  Tensor v = view_of_dropped_tensor(ctx.get(), 4096);
  EXPECT_GE(ctx->allocator().stats().bytes_in_use, before + 4096 * 4);
  v.reset();
  EXPECT_EQ(ctx->allocator().stats().bytes_in_use, before);
}

// Data over the inline bytes but small enough for one pooled block sit at
// the block's tail, still counted as the context's memory: the statistics
// change by the same bytes and allocations on both sides of the limit.
TEST(TensorBlock, BlockDataIsCountedAsTheContextsMemory) {
  Ref<Context> ctx = make_ref<Context>(1);
  for (int64_t n : {int64_t{17}, int64_t{64}, int64_t{100}, int64_t{112}, int64_t{113}, int64_t{128}, int64_t{4096}}) {
    const MemoryStats before = ctx->allocator().stats();
    Tensor t = empty(ctx.get(), DType::F32, Dims{n});
    const MemoryStats during = ctx->allocator().stats();
    EXPECT_GE(during.bytes_in_use, before.bytes_in_use + n * 4) << n;
    EXPECT_EQ(during.allocations, before.allocations + 1) << n;
    // In the block (at most 1 KiB, the largest pooled one) up to 400 bytes
    // at least (the limit depends on the header's size), never for 16 KiB.
    const auto* storage_at = reinterpret_cast<const char*>(t->storage());
    const bool in_block = t->data() > storage_at && t->data() < storage_at + 1024;
    if (n <= 100) {
      EXPECT_TRUE(in_block) << n;
    }
    if (n >= 4096) {
      EXPECT_FALSE(in_block) << n;
    }
    // Every byte is the tensor's: a view keeps them after the tensor goes.
    for (int64_t i = 0; i < n; ++i) t->data_as<float>()[i] = static_cast<float>(i);
    Tensor v = make_view(*t, t->shape(), t->strides(), 0);
    t.reset();
    expect_ramp(v, n);
    v.reset();
    EXPECT_EQ(ctx->allocator().stats().bytes_in_use, before.bytes_in_use) << n;
  }
}

TEST(TensorBlock, LastViewReleasedOnAnotherThread) {
  Ref<Context> ctx = make_ref<Context>(1);
  std::vector<Tensor> views;
  // Inline data, data at the block's tail, the context's memory.
  const auto size_of = [](size_t k) -> int64_t { return k % 3 == 0 ? 8 : k % 3 == 1 ? 100 : 1024; };
  for (size_t k = 0; k < 64; ++k) views.push_back(view_of_dropped_tensor(ctx.get(), size_of(k)));
  std::thread other([&] {
    for (size_t k = 0; k < views.size(); ++k) expect_ramp(views[k], size_of(k));
    views.clear();  // the blocks join this thread's pools
  });
  other.join();
  EXPECT_TRUE(views.empty());
}

TEST(TensorBlock, WeakFlagIsNotCounted) {
  Ref<Context> ctx = make_ref<Context>(1);
  Tensor t = empty(ctx.get(), DType::F32, Dims{2});
  EXPECT_TRUE(t->sole_owner());
  t->mark_weakly_referenced();
  EXPECT_FALSE(t->sole_owner());  // a weak pointer may turn into a reference
  EXPECT_EQ(t->use_count(), 1);
  ASSERT_TRUE(t->try_retain());
  EXPECT_EQ(t->use_count(), 2);
  Tensor second = Tensor::adopt(t.get());
  t.reset();
  EXPECT_EQ(second->use_count(), 1);
}

// Each test starts with the thread's spare slot empty: a spare left by an
// earlier test is taken into `held`, which stays alive until the end.
class SpareTensor : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!kSpareTensors) GTEST_SKIP() << "no spare tensors without pools (AddressSanitizer build)";
    ctx = make_ref<Context>(1);
    held = empty(ctx.get(), DType::F32, Dims{});
    ASSERT_EQ(spare_tensor(), nullptr);
  }
  // Drops t, which must not become the spare.
  static void expect_not_kept(Tensor t) {
    t.reset();
    EXPECT_EQ(spare_tensor(), nullptr);
  }
  Ref<Context> ctx;
  Tensor held;
};

TEST_F(SpareTensor, DeadScalarComesBackAsNewOnAnyContext) {
  const int32_t ctx_refs = ctx->use_count();  // storage references count here (no owner counting)
  Tensor t = empty(ctx.get(), DType::F32, Dims{});
  EXPECT_EQ(ctx->use_count(), ctx_refs + 1);
  *t->data_as<float>() = 3.0f;
  t->storage()->bump_version();
  const TensorImpl* p = t.get();
  t.reset();
  ASSERT_EQ(spare_tensor(), p);
  EXPECT_EQ(ctx->use_count(), ctx_refs);  // a spare holds no context

  Ref<Context> other = make_ref<Context>(1);
  const int32_t other_refs = other->use_count();
  Tensor u = empty(other.get(), DType::F64, Dims{2, 4});  // 64 bytes: the most that is inline
  ASSERT_EQ(u.get(), p);
  EXPECT_EQ(spare_tensor(), nullptr);
  EXPECT_EQ(u->context(), other.get());
  EXPECT_EQ(other->use_count(), other_refs + 1);
  EXPECT_EQ(ctx->use_count(), ctx_refs);
  EXPECT_EQ(u->dtype(), DType::F64);
  EXPECT_EQ(u->shape(), (Dims{2, 4}));
  EXPECT_EQ(u->strides(), (Dims{4, 1}));
  EXPECT_EQ(u->numel(), 8);
  EXPECT_EQ(u->offset(), 0);
  EXPECT_TRUE(u->is_contiguous());
  EXPECT_EQ(u->storage()->nbytes(), 64u);
  EXPECT_EQ(u->storage()->version(), 0u);
  EXPECT_EQ(u->use_count(), 1);
  EXPECT_TRUE(u->is_private());
  EXPECT_EQ(u->grad_fn(), nullptr);
  EXPECT_EQ(u->output_nr(), 0u);
  EXPECT_EQ(u->autograd_meta(), nullptr);
  EXPECT_TRUE(u->handle_valid());
  for (int i = 0; i < 8; ++i) u->data_as<double>()[i] = 0.5 * i;
  for (int i = 0; i < 8; ++i) EXPECT_EQ(u->data_as<double>()[i], 0.5 * i);
  u.reset();
  EXPECT_EQ(other->use_count(), other_refs);
  EXPECT_EQ(spare_tensor(), p);
}

// The history a spare held goes with it: the node is not kept alive.
TEST_F(SpareTensor, DropsTheHistory) {
  struct Producer : RefCounted {
    explicit Producer(int* gone) : gone(gone) {}
    ~Producer() override { ++*gone; }
    int* gone;
  };
  int gone = 0;
  Tensor t = empty(ctx.get(), DType::F32, Dims{3});
  t->set_grad_fn(make_ref<Producer>(&gone), 1);
  const TensorImpl* p = t.get();
  t.reset();
  EXPECT_EQ(spare_tensor(), p);
  EXPECT_EQ(gone, 1);
  Tensor u = empty(ctx.get(), DType::F32, Dims{3});
  ASSERT_EQ(u.get(), p);
  EXPECT_EQ(u->grad_fn(), nullptr);
  EXPECT_EQ(u->output_nr(), 0u);
}

TEST_F(SpareTensor, OneAtATime) {
  Tensor a = empty(ctx.get(), DType::F32, Dims{});
  Tensor b = empty(ctx.get(), DType::F32, Dims{});
  const TensorImpl* pa = a.get();
  a.reset();
  b.reset();  // the slot is taken: b goes back to the pool
  EXPECT_EQ(spare_tensor(), pa);
}

TEST_F(SpareTensor, NotWhileSomethingElseReachesIt) {
  {  // its storage, through a view
    Tensor t = empty(ctx.get(), DType::F32, Dims{4});
    for (int i = 0; i < 4; ++i) t->data_as<float>()[i] = static_cast<float>(i);
    Tensor v = make_view(*t, t->shape(), t->strides(), 0);
    expect_not_kept(std::move(t));
    expect_ramp(v, 4);
  }
  {  // a weak pointer
    Tensor t = empty(ctx.get(), DType::F32, Dims{});
    t->mark_weakly_referenced();
    expect_not_kept(std::move(t));
  }
  {  // autograd metadata (hooks, retained gradients, a leaf's flag)
    struct Meta : AutogradMetaBase {};
    Tensor t = empty(ctx.get(), DType::F32, Dims{});
    t->install_autograd_meta(std::make_unique<Meta>());
    expect_not_kept(std::move(t));
  }
  // Data in the context's memory (more than the inline bytes).
  expect_not_kept(empty(ctx.get(), DType::F32, Dims{17}));
}

TEST_F(SpareTensor, NotTakenForDataThatDoesNotFitInline) {
  Tensor t = empty(ctx.get(), DType::F32, Dims{});
  const TensorImpl* p = t.get();
  t.reset();
  ASSERT_EQ(spare_tensor(), p);
  Tensor big = empty(ctx.get(), DType::F64, Dims{9});  // 72 bytes
  EXPECT_NE(big.get(), p);
  EXPECT_EQ(spare_tensor(), p);
}

// A recording for replay notes every storage made while it records: it gets
// new ones, not the spare.
TEST_F(SpareTensor, NotTakenWhileRecording) {
  Tensor t = empty(ctx.get(), DType::F32, Dims{});
  const TensorImpl* p = t.get();
  t.reset();
  ASSERT_EQ(spare_tensor(), p);
  Recorder r(ctx.get());
  set_thread_recorder(&r);
  Tensor u = empty(ctx.get(), DType::F32, Dims{});
  set_thread_recorder(nullptr);
  EXPECT_NE(u.get(), p);
  EXPECT_EQ(spare_tensor(), p);
}

// A thread's spare is freed when the thread exits (TSan and the pools'
// accounting see it); the contexts it used are gone before.
TEST_F(SpareTensor, FreedAtThreadExit) {
  const int32_t ctx_refs = ctx->use_count();
  std::thread other([&] {
    Tensor t = empty(ctx.get(), DType::F32, Dims{2});
    const TensorImpl* p = t.get();
    t.reset();
    EXPECT_EQ(spare_tensor(), p);
    EXPECT_EQ(ctx->use_count(), ctx_refs);
  });
  other.join();
  EXPECT_EQ(ctx->use_count(), ctx_refs);
}

}  // namespace
}  // namespace ag
