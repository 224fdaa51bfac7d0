// The profiler (ag/profile.h) from the inside: every Profiler object is
// freed once its profile is released (also when passes on other threads
// held it), the process-wide "a profiler runs" flag falls back to zero, and
// backward passes run concurrently from two threads on one profiled
// context, with arena workers, each record all of their nodes.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "ag/ag.h"
#include "core/profiler.h"
#include "engine/engine.h"

namespace {

// sum(tanh(x) * sin(x) + sigmoid(x)) over n elements: 6 nodes + AccumulateGrad.
ag_tensor* branches(ag_context* ctx, int64_t n, ag_tensor** x) {
  ag_tensor *a = nullptr, *b = nullptr, *c = nullptr, *m = nullptr, *p = nullptr, *s = nullptr;
  EXPECT_EQ(ag_op_uniform(x, ctx, AG_F32, &n, 1, -1, 1), AG_OK);
  EXPECT_EQ(ag_tensor_requires_grad(*x, 1), AG_OK);
  EXPECT_EQ(ag_op_tanh(&a, *x), AG_OK);
  EXPECT_EQ(ag_op_sin(&b, *x), AG_OK);
  EXPECT_EQ(ag_op_sigmoid(&c, *x), AG_OK);
  EXPECT_EQ(ag_op_mul(&m, a, b), AG_OK);
  EXPECT_EQ(ag_op_add(&p, m, c), AG_OK);
  EXPECT_EQ(ag_op_sum(&s, p), AG_OK);
  for (ag_tensor* t : {a, b, c, m, p}) ag_tensor_release(t);
  return s;
}

TEST(Profiler, FreedAndFlagClearedAfterRelease) {
  const int64_t before = ag::Profiler::live();
  ag_context* ctx = nullptr;
  ASSERT_EQ(ag_context_create(&ctx, nullptr), AG_OK);
  ag_tensor* x = nullptr;
  ag_tensor* s = branches(ctx, 1000, &x);
  ASSERT_EQ(ag_profiler_start(ctx, nullptr), AG_OK);
  EXPECT_TRUE(ag::profiling_anywhere());
  EXPECT_EQ(ag::Profiler::live(), before + 1);
  ASSERT_EQ(ag_backward(s, nullptr, nullptr), AG_OK);
  ag_profile* profile = nullptr;
  ASSERT_EQ(ag_profiler_stop(&profile, ctx), AG_OK);
  EXPECT_FALSE(ag::profiling_anywhere());
  EXPECT_EQ(ag::Profiler::live(), before);  // the profile keeps events, not the profiler
  EXPECT_EQ(ag_profile_num_events(profile), 8);  // 7 nodes and the pass
  ag_profile_release(profile);
  ag_tensor_release(s);
  ag_tensor_release(x);
  ag_context_release(ctx);
}

TEST(Profiler, ConcurrentPassesWithWorkers) {
  ag_context_options co = AG_CONTEXT_OPTIONS_INIT;
  co.num_threads = 2;
  ag_context* ctx = nullptr;
  ASSERT_EQ(ag_context_create(&ctx, &co), AG_OK);
  constexpr int kPasses = 5;
  const uint64_t tasks_before = ag::nodes_run_as_tasks();
  ASSERT_EQ(ag_profiler_start(ctx, nullptr), AG_OK);
  auto work = [ctx](int* failures) {
    for (int i = 0; i < kPasses; ++i) {
      ag_tensor* x = nullptr;
      ag_tensor* s = branches(ctx, int64_t{1} << 18, &x);
      if (ag_backward(s, nullptr, nullptr) != AG_OK) ++*failures;
      ag_tensor_release(s);
      ag_tensor_release(x);
    }
  };
  int f1 = 0, f2 = 0;
  std::thread t1(work, &f1), t2(work, &f2);
  t1.join();
  t2.join();
  EXPECT_EQ(f1 + f2, 0);
  ag_profile* profile = nullptr;
  ASSERT_EQ(ag_profiler_stop(&profile, ctx), AG_OK);
  EXPECT_GT(ag::nodes_run_as_tasks(), tasks_before);  // workers ran nodes meanwhile
  std::map<std::string, int> names;
  int backward = 0;
  for (int64_t i = 0; i < ag_profile_num_events(profile); ++i) {
    const char *name = nullptr, *category = nullptr;
    int64_t start = -1, duration = -1;
    int32_t thread = 0;
    ASSERT_EQ(ag_profile_event(profile, i, &name, &category, &start, &duration, &thread), AG_OK);
    EXPECT_GE(start, 0);
    EXPECT_GE(duration, 0);
    EXPECT_GE(thread, 1);
    if (std::strcmp(category, "backward") == 0) ++backward;
    if (std::strcmp(category, "node") == 0) ++names[name];
  }
  EXPECT_EQ(backward, 2 * kPasses);
  EXPECT_EQ(names["SumBackward"], 2 * kPasses);
  EXPECT_EQ(names["MulBackward"], 2 * kPasses);
  EXPECT_EQ(names["TanhBackward"], 2 * kPasses);
  EXPECT_EQ(names["SinBackward"], 2 * kPasses);
  EXPECT_EQ(names["SigmoidBackward"], 2 * kPasses);
  EXPECT_EQ(names["AccumulateGrad"], 2 * kPasses);
  EXPECT_EQ(ag_profile_num_dropped(profile), 0);
  ag_profile_release(profile);
  ag_context_release(ctx);
}

}  // namespace
