// The host's task system (ag_context_options.enqueue_task/finish_task):
// kernels, reductions and a backward with parallel branches give the bits of
// ag's own arena at 1 to 4 host workers; ag creates no thread; a failing
// chunk and a host that drops items come out as statuses.
#include <gtest/gtest.h>

#include <dirent.h>

#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ag/ag.h"
#include "core/context.h"
#include "core/error.h"

namespace {

// A small host scheduler: workers - 1 std::threads take ranges from one
// queue; finish() runs queued ranges too while it waits (no deadlock when
// called from a worker).
class Scheduler {
 public:
  explicit Scheduler(int workers) {
    for (int i = 1; i < workers; ++i) threads_.emplace_back([this, i] { work(static_cast<uint32_t>(i)); });
  }
  ~Scheduler() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

  struct Job {
    ag_task_fn fn;
    void* ctx;
    std::atomic<int64_t> left;
  };

  static void* enqueue(ag_task_fn fn, void* task_ctx, int64_t count, int64_t min_range, void* user) {
    auto* s = static_cast<Scheduler*>(user);
    s->enqueued.fetch_add(1);
    s->last_count.store(count);
    auto* job = new Job{fn, task_ctx, {count}};
    {
      std::lock_guard<std::mutex> lock(s->mu_);
      // Uneven ranges, so that nothing depends on how the host cuts.
      int64_t b = 0, step = std::max<int64_t>(min_range, 1);
      while (b < count) {
        const int64_t e = std::min(count, b + step);
        s->queue_.push_back({job, b, e});
        b = e;
        step = step % 3 + 1;
      }
    }
    s->cv_.notify_all();
    return job;
  }

  static void finish(void* handle, void* user) {
    auto* s = static_cast<Scheduler*>(user);
    auto* job = static_cast<Job*>(handle);
    while (job->left.load() > 0) {
      if (!s->run_one(0)) std::this_thread::yield();
    }
    delete job;
  }

  std::atomic<int> enqueued{0};
  std::atomic<int64_t> last_count{0};  // items of the last enqueue

 private:
  struct Range {
    Job* job;
    int64_t b, e;
  };

  bool run_one(uint32_t worker) {
    Range r;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (queue_.empty()) return false;
      r = queue_.front();
      queue_.pop_front();
    }
    r.job->fn(r.b, r.e, worker, r.job->ctx);
    r.job->left.fetch_sub(r.e - r.b);
    return true;
  }

  void work(uint32_t worker) {
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
        if (stop_) return;
      }
      run_one(worker);
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Range> queue_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

#define CK(call) ASSERT_EQ((call), AG_OK) << #call << ": " << ag_last_error_message()

int thread_count() {
  int n = 0;
  DIR* d = opendir("/proc/self/task");
  if (!d) return -1;
  while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

ag_tensor* wave(ag_context* ctx, int64_t n, double phase) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(0.9 * std::sin(phase + 0.37 * i));
  ag_tensor* t = nullptr;
  EXPECT_EQ(ag_tensor_create(&t, ctx, AG_F32, &n, 1, v.data()), AG_OK);
  return t;
}

void append(std::vector<unsigned char>& out, const ag_tensor* t) {
  const size_t bytes = static_cast<size_t>(ag_tensor_numel(t)) * (ag_tensor_dtype(t) == AG_F64 ? 8 : 4);
  const size_t at = out.size();
  out.resize(at + bytes);
  EXPECT_EQ(ag_tensor_copy_data(t, out.data() + at, bytes), AG_OK);
}

// Every family of parallel loop once, results' bytes appended in order.
void workload(ag_context* ctx, std::vector<unsigned char>& bits) {
  ag_scope* scope;
  CK(ag_scope_begin(&scope));
  const int64_t n = 3 * 65536 + 77;  // several chunks of every grain, and a ragged end
  ag_tensor *x = wave(ctx, n, 0.1), *y = wave(ctx, n, 0.7), *r;
  CK(ag_op_tanh(&r, x));
  append(bits, r);
  CK(ag_op_add(&r, x, y));
  append(bits, r);
  CK(ag_op_sum(&r, x));  // chunked reduction
  append(bits, r);
  CK(ag_op_cast(&r, x, AG_F64));
  append(bits, r);
  const int64_t shape[2] = {401, n / 401};
  ag_tensor *m, *mt;
  CK(ag_op_narrow(&m, x, 0, 0, shape[0] * shape[1]));
  CK(ag_op_reshape(&m, m, shape, 2));
  CK(ag_op_transpose(&mt, m, 0, 1));
  CK(ag_op_clone(&r, mt));  // strided gather
  append(bits, r);
  const int64_t sd[1] = {1};
  CK(ag_op_sum_dims(&r, m, sd, 1, 0));  // row reductions
  append(bits, r);
  CK(ag_op_softmax(&r, m, 1));
  append(bits, r);
  const int64_t sd0[1] = {0};
  CK(ag_op_sum_dims(&r, m, sd0, 1, 0));  // over the leading dim: column blocks
  append(bits, r);
  // conv2d's weight gradient: per-sample products summed over the batch.
  {
    const int64_t xs[4] = {32, 16, 16, 16}, ws[4] = {16, 16, 3, 3}, xn = 32 * 16 * 16 * 16, wn = 16 * 16 * 9;
    const int64_t one[2] = {1, 1};
    ag_tensor *cx, *cw, *cy, *cl;
    CK(ag_op_narrow(&cx, x, 0, 0, xn));
    CK(ag_op_reshape(&cx, cx, xs, 4));
    CK(ag_op_narrow(&cw, y, 0, 0, wn));
    CK(ag_op_reshape(&cw, cw, ws, 4));
    CK(ag_op_clone(&cw, cw));
    CK(ag_tensor_requires_grad(cw, 1));
    CK(ag_op_conv2d(&cy, cx, cw, nullptr, one, one, one, 1));
    CK(ag_op_mul(&cl, cy, cy));
    CK(ag_op_sum(&cl, cl));
    CK(ag_backward(cl, nullptr, nullptr));
    CK(ag_tensor_grad(&r, cw));
    append(bits, r);
  }
  const int64_t gs[2] = {96, 320};
  ag_tensor *a, *b;
  CK(ag_op_narrow(&a, x, 0, 0, gs[0] * gs[1]));
  CK(ag_op_reshape(&a, a, gs, 2));
  CK(ag_op_transpose(&b, a, 0, 1));
  CK(ag_op_matmul(&r, b, a));  // 320 x 320 x 96
  append(bits, r);
  // A backward with four parallel branches of enough work each.
  ag_tensor* p = wave(ctx, n, 0.3);
  CK(ag_tensor_requires_grad(p, 1));
  ag_tensor* loss = nullptr;
  for (int k = 0; k < 4; ++k) {
    ag_tensor *c = wave(ctx, n, 1.0 + k), *h, *s;
    CK(ag_op_mul(&h, p, c));
    for (int d = 0; d <= k; ++d) {
      CK(ag_op_tanh(&h, h));
      CK(ag_op_mul(&h, h, c));
    }
    CK(ag_op_sum(&s, h));
    if (loss) {
      CK(ag_op_add(&loss, loss, s));
    } else {
      loss = s;
    }
  }
  CK(ag_backward(loss, nullptr, nullptr));
  append(bits, loss);
  CK(ag_tensor_grad(&r, p));
  append(bits, r);
  // An optimizer step over a large parameter.
  ag_optimizer* adam;
  CK(ag_optimizer_create(&adam, AG_OPTIM_ADAM, nullptr));
  CK(ag_optimizer_add_param_group(adam, &p, 1, nullptr));
  CK(ag_optimizer_step(adam));
  CK(ag_optimizer_step(adam));
  ag_optimizer_release(adam);
  append(bits, p);
  CK(ag_scope_end(scope));
}

ag_context* host_context(Scheduler& s, int workers) {
  ag_context_options o = AG_CONTEXT_OPTIONS_INIT;
  o.enqueue_task = &Scheduler::enqueue;
  o.finish_task = &Scheduler::finish;
  o.task_user = &s;
  o.worker_count = workers;
  ag_context* ctx = nullptr;
  EXPECT_EQ(ag_context_create(&ctx, &o), AG_OK) << ag_last_error_message();
  return ctx;
}

std::vector<unsigned char> arena_bits(int threads) {
  ag_context_options o = AG_CONTEXT_OPTIONS_INIT;
  o.num_threads = threads;
  ag_context* ctx;
  EXPECT_EQ(ag_context_create(&ctx, &o), AG_OK);
  std::vector<unsigned char> bits;
  workload(ctx, bits);
  ag_context_release(ctx);
  return bits;
}

// First in the file: before any arena context made TBB start its workers.
TEST(HostTasks, AgCreatesNoThreadAndSameBitsAsTheArena) {
  std::vector<std::vector<unsigned char>> host;
  for (int workers = 1; workers <= 4; ++workers) {
    Scheduler s(workers);
    const int before = thread_count();
    ASSERT_GT(before, 0);
    ag_context* ctx = host_context(s, workers);
    ASSERT_NE(ctx, nullptr);
    EXPECT_EQ(ag_context_num_threads(ctx), workers);
    host.emplace_back();
    workload(ctx, host.back());
    ag_context_release(ctx);
    EXPECT_EQ(thread_count(), before) << workers << " workers: ag started a thread";
    if (workers == 1) {
      EXPECT_EQ(s.enqueued.load(), 0) << "one worker: everything inline";
    } else {
      EXPECT_GT(s.enqueued.load(), 10) << workers << " workers";
    }
  }
  const std::vector<unsigned char> one = arena_bits(1), two = arena_bits(2), three = arena_bits(3);
  ASSERT_FALSE(one.empty());
  EXPECT_TRUE(one == two) << "the arena at 2 threads differs from 1";
  EXPECT_TRUE(one == three) << "the arena at 3 threads differs from 1";
  for (size_t k = 0; k < host.size(); ++k) EXPECT_TRUE(host[k] == one) << k + 1 << " host workers";
}

// A sum over the leading dim of a large tensor (the parallel column blocks)
// against plain loops in double.
TEST(HostTasks, SumOverLeadingDimMatchesLoops) {
  ag_context_options o = AG_CONTEXT_OPTIONS_INIT;
  o.num_threads = 2;
  ag_context* ctx;
  ASSERT_EQ(ag_context_create(&ctx, &o), AG_OK);
  const int64_t rows = 301, cols = 700, n = rows * cols, shape[2] = {rows, cols}, dim0[1] = {0};
  ag_tensor *x = wave(ctx, n, 0.2), *m, *r;
  ASSERT_EQ(ag_op_reshape(&m, x, shape, 2), AG_OK);
  ASSERT_EQ(ag_op_sum_dims(&r, m, dim0, 1, 0), AG_OK);
  ASSERT_EQ(ag_tensor_numel(r), cols);
  std::vector<float> xv(static_cast<size_t>(n)), rv(static_cast<size_t>(cols));
  ASSERT_EQ(ag_tensor_copy_data(x, xv.data(), xv.size() * 4), AG_OK);
  ASSERT_EQ(ag_tensor_copy_data(r, rv.data(), rv.size() * 4), AG_OK);
  for (int64_t j = 0; j < cols; ++j) {
    double s = 0;
    for (int64_t i = 0; i < rows; ++i) s += xv[static_cast<size_t>(i * cols + j)];
    ASSERT_NEAR(rv[static_cast<size_t>(j)], s, 1e-5 * (1 + std::fabs(s))) << "column " << j;
  }
  ag_tensor_release(r);
  ag_tensor_release(m);
  ag_tensor_release(x);
  ag_context_release(ctx);
}

TEST(HostTasks, OptionsAreChecked) {
  Scheduler s(2);
  ag_context* ctx = nullptr;
  ag_context_options o = AG_CONTEXT_OPTIONS_INIT;
  o.enqueue_task = &Scheduler::enqueue;
  o.worker_count = 2;
  EXPECT_EQ(ag_context_create(&ctx, &o), AG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(ag_last_error_message(), "finish_task is NULL"), nullptr) << ag_last_error_message();
  o.finish_task = &Scheduler::finish;
  o.worker_count = 0;
  EXPECT_EQ(ag_context_create(&ctx, &o), AG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(ag_last_error_message(), "worker_count 0"), nullptr) << ag_last_error_message();
  o.worker_count = 2;
  o.num_threads = 3;
  EXPECT_EQ(ag_context_create(&ctx, &o), AG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(ag_last_error_message(), "num_threads 3 differs"), nullptr) << ag_last_error_message();
  ag_context_options plain = AG_CONTEXT_OPTIONS_INIT;
  plain.worker_count = 2;
  EXPECT_EQ(ag_context_create(&ctx, &plain), AG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(ag_last_error_message(), "without enqueue_task"), nullptr) << ag_last_error_message();
  EXPECT_EQ(ctx, nullptr);
}

// A host whose enqueue returns NULL without running the items: the op
// fails with AG_ERR_CALLBACK instead of returning garbage.
void* lazy_enqueue(ag_task_fn, void*, int64_t, int64_t, void*) { return nullptr; }
void never_finish(void*, void*) {}

TEST(HostTasks, AHostThatDropsItemsIsAnError) {
  ag_context_options o = AG_CONTEXT_OPTIONS_INIT;
  o.enqueue_task = &lazy_enqueue;
  o.finish_task = &never_finish;
  o.worker_count = 2;
  ag_context* ctx;
  CK(ag_context_create(&ctx, &o));
  const int64_t n = 1 << 20;
  std::vector<float> data(static_cast<size_t>(n), 0.5f);
  ag_tensor* x = nullptr;
  EXPECT_EQ(ag_tensor_create(&x, ctx, AG_F32, &n, 1, data.data()), AG_ERR_CALLBACK);  // a parallel copy
  EXPECT_EQ(x, nullptr);
  EXPECT_EQ(ag_tensor_full(&x, ctx, AG_F32, &n, 1, 2.0), AG_ERR_CALLBACK);  // a parallel fill
  EXPECT_EQ(x, nullptr);
  EXPECT_NE(std::strstr(ag_last_error_message(), "ran 0 of 16 items"), nullptr) << ag_last_error_message();
  ag_context_release(ctx);
}

// A chunk that throws inside a host task: the exception stays inside ag's
// task function (noexcept, so crossing the host's frames would terminate)
// and comes out of the loop on the calling thread, the lowest chunk's.
TEST(HostTasks, AFailingChunkComesOutOnTheCaller) {
  for (int workers : {1, 3}) {
    Scheduler s(workers);
    ag::HostTasks tasks{&Scheduler::enqueue, &Scheduler::finish, &s, workers};
    ag::Ref<ag::Context> ctx = ag::make_ref<ag::Context>(0, ag::HostAllocator(), tasks);
    std::atomic<int> ran{0};
    try {
      ctx->parallel_chunks(100, 10, [&](int64_t b, int64_t) {
        ran.fetch_add(1);
        if (b == 30 || b == 70) ag::fail(AG_ERR_OUT_OF_MEMORY, "chunk at ", b);
      });
      ADD_FAILURE() << "no exception";
    } catch (const ag::Error& e) {
      EXPECT_EQ(e.code(), AG_ERR_OUT_OF_MEMORY);
      EXPECT_NE(e.message().find("chunk at 30"), std::string::npos) << e.message();
    }
    EXPECT_EQ(ran.load(), workers == 1 ? 4 : 10) << workers;  // inline stops at the failure
  }
}

// An elementwise loop's chunks: the fewest of at most one grain (32,768
// elements for add), a multiple of the threads when there are at least as
// many, so each thread gets an equal share; up to one grain, none. A
// 256 x 256 weight (65,536) is split in two.
TEST(HostTasks, ElementwiseChunksComeInMultiplesOfTheThreads) {
  struct Case {
    int workers;
    int64_t n, chunks;
  };
  for (const Case& c : {Case{2, 200704, 8}, Case{3, 200704, 9}, Case{4, 200704, 8}, Case{3, 500000, 18},
                        Case{8, 200704, 7}, Case{2, 65536, 2}, Case{3, 65536, 2}, Case{3, 32768, 0}}) {
    Scheduler s(c.workers);
    ag_context* ctx = host_context(s, c.workers);
    ASSERT_NE(ctx, nullptr);
    ag_tensor *x, *y;
    CK(ag_tensor_full(&x, ctx, AG_F32, &c.n, 1, 0.5));
    const int before = s.enqueued.load();
    CK(ag_op_add(&y, x, x));
    EXPECT_EQ(s.enqueued.load() - before, c.chunks > 0 ? 1 : 0) << c.workers << " workers, " << c.n;
    if (c.chunks > 0) {
      EXPECT_EQ(s.last_count.load(), c.chunks) << c.workers << " workers, " << c.n;
    }
    ag_tensor_release(y);
    ag_tensor_release(x);
    ag_context_release(ctx);
  }
}

}  // namespace
