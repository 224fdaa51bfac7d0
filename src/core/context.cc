#include "core/context.h"

#include "core/fp_mode.h"

#include <algorithm>
#include <new>

#include <tbb/blocked_range.h>
#include <tbb/info.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

namespace ag {

struct Context::Arena {
  explicit Arena(int n) : arena(n) {}
  tbb::task_arena arena;
};

// With one thread the arena has a slot for the caller only and never asks
// TBB for workers. More slots than the machine has hardware threads would
// make TBB print a warning and change nothing (the chunks, hence the
// results, do not depend on the thread count).
Context::Context(int num_threads)
    : num_threads_(num_threads > 0 ? num_threads : tbb::info::default_concurrency()),
      fp_mode_(FpMode::current()),
      arena_(std::make_unique<Arena>(std::min(num_threads_, std::max(1, tbb::info::default_concurrency())))) {}

Context::~Context() = default;

void Context::parallel_impl(int64_t n, int64_t chunk, void (*fn)(void*, int64_t, int64_t), void* arg) {
  const int64_t chunks = (n + chunk - 1) / chunk;
  arena_->arena.execute([&] {
    tbb::parallel_for(
        tbb::blocked_range<int64_t>(0, chunks, 1),
        [&](const tbb::blocked_range<int64_t>& r) {
          FpModeScope mode(fp_mode_);
          for (int64_t j = r.begin(); j < r.end(); ++j) fn(arg, j * chunk, std::min(n, (j + 1) * chunk));
        },
        tbb::simple_partitioner());
  });
}

}  // namespace ag
