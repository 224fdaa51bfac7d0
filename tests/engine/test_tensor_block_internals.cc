// A new tensor and its storage share one pool block (core/tensor_impl.cc,
// empty): the storage outlives the tensor when views hold it, also when the
// last view goes on another thread, and frees the block then. The weak
// pointer flag lives in the reference count (core/refcount.h): the counts
// seen by callers leave it out. Run under ASan and TSan, these catch a block
// freed too early or freed without ordering.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "core/context.h"
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

TEST(TensorBlock, LastViewReleasedOnAnotherThread) {
  Ref<Context> ctx = make_ref<Context>(1);
  std::vector<Tensor> views;
  for (int k = 0; k < 64; ++k) views.push_back(view_of_dropped_tensor(ctx.get(), k % 2 ? 8 : 1024));
  std::thread other([&] {
    for (size_t k = 0; k < views.size(); ++k) expect_ramp(views[k], k % 2 ? 8 : 1024);
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

}  // namespace
}  // namespace ag
