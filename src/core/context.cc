#include "core/context.h"

#include <new>

#include <tbb/info.h>
#include <tbb/task_arena.h>

namespace ag {

struct Context::Arena {
  explicit Arena(int n) : arena(n) {}
  tbb::task_arena arena;
};

// With one thread the arena has a slot for the caller only and never asks
// TBB for workers.
Context::Context(int num_threads)
    : num_threads_(num_threads > 0 ? num_threads : tbb::info::default_concurrency()),
      arena_(std::make_unique<Arena>(num_threads_)) {}

Context::~Context() = default;

void Context::execute_impl(void (*fn)(void*), void* arg) {
  arena_->arena.execute([&] { fn(arg); });
}

}  // namespace ag
