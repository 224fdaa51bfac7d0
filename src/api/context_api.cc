// ag_context_*.
#include "api/guard.h"
#include "core/pool.h"

using namespace ag;

extern "C" {

AG_API ag_status ag_context_options_init(ag_context_options* opts) noexcept {
  return api::call("ag_context_options_init", [&] {
    api::check_out(opts);
    *opts = ag_context_options AG_CONTEXT_OPTIONS_INIT;
  });
}

AG_API ag_status ag_context_create(ag_context** out, const ag_context_options* user_opts) noexcept {
  return api::call("ag_context_create", [&] {
    api::check_out(out);
    ag_context_options opts = AG_CONTEXT_OPTIONS_INIT;
    api::read_options(user_opts, opts);
    if (opts.num_threads < 0) fail(AG_ERR_INVALID_ARGUMENT, "num_threads ", opts.num_threads, " is negative");
    if ((opts.alloc == nullptr) != (opts.free == nullptr)) {
      fail(AG_ERR_INVALID_ARGUMENT, "alloc is ", opts.alloc ? "set" : "NULL", " but free is ",
           opts.free ? "set" : "NULL", "; set both or neither");
    }
    if ((opts.enqueue_task == nullptr) != (opts.finish_task == nullptr)) {
      fail(AG_ERR_INVALID_ARGUMENT, "enqueue_task is ", opts.enqueue_task ? "set" : "NULL", " but finish_task is ",
           opts.finish_task ? "set" : "NULL", "; set both or neither");
    }
    HostTasks tasks;
    if (opts.enqueue_task) {
      if (opts.worker_count < 1) {
        fail(AG_ERR_INVALID_ARGUMENT, "worker_count ", opts.worker_count,
             " must be at least 1 with a host task system (the threads that may run items, the caller included)");
      }
      if (opts.num_threads != 0 && opts.num_threads != opts.worker_count) {
        fail(AG_ERR_INVALID_ARGUMENT, "num_threads ", opts.num_threads, " differs from worker_count ",
             opts.worker_count, " (with a host task system, set num_threads to 0 or to worker_count)");
      }
      tasks = HostTasks{opts.enqueue_task, opts.finish_task, opts.task_user, opts.worker_count};
    } else if (opts.worker_count != 0) {
      fail(AG_ERR_INVALID_ARGUMENT, "worker_count ", opts.worker_count, " is set without enqueue_task and finish_task");
    }
    if (opts.reserved != 0) fail(AG_ERR_INVALID_ARGUMENT, "reserved is ", opts.reserved, ", must be 0");
    HostAllocator host;
    if (opts.alloc) host = HostAllocator{opts.alloc, opts.free, opts.user, opts.destroy};
    Context* c = new Context(opts.num_threads, host, tasks);
    c->handle_acquire();  // the caller's side keeps the reference from `new`
    c->begin_owner_counting();
    *out = reinterpret_cast<ag_context*>(c);
  });
}

AG_API ag_context* ag_context_retain(ag_context* ctx) noexcept {
  if (ctx == nullptr) return nullptr;
  Context* c = api::impl(ctx);
  if (!c->handle_valid()) {
    api::set_last_error("ag_context_retain", "context is not a live handle (already released?)");
    return nullptr;
  }
  if (c->handle_acquire()) c->retain();
  return ctx;
}

AG_API void ag_context_release(ag_context* ctx) noexcept {
  if (ctx == nullptr) return;
  Context* c = api::impl(ctx);
  if (!c->handle_valid()) {
    api::set_last_error("ag_context_release", "context is not a live handle (released twice?); ignored");
    return;
  }
  if (c->handle_release()) {
    c->end_owner_counting();
    c->release();
  }
}

AG_API int32_t ag_context_num_threads(const ag_context* ctx) noexcept {
  if (ctx == nullptr || !api::impl(ctx)->handle_valid()) return 0;
  return api::impl(ctx)->num_threads();
}

AG_API ag_status ag_memory_stats_init(ag_memory_stats* stats) noexcept {
  return api::call("ag_memory_stats_init", [&] {
    api::check_out(stats);
    *stats = ag_memory_stats AG_MEMORY_STATS_INIT;
  });
}

AG_API ag_status ag_context_memory_stats(const ag_context* ctx, ag_memory_stats* stats) noexcept {
  return api::call("ag_context_memory_stats", [&] {
    Context& c = api::context_arg(ctx);
    api::check_out(stats);
    if (stats->struct_size < sizeof(uint32_t)) {
      fail(AG_ERR_INVALID_ARGUMENT, "struct_size ", stats->struct_size, " is too small; set it to sizeof(ag_memory_stats)");
    }
    const MemoryStats m = c.allocator().stats();
    ag_memory_stats full = AG_MEMORY_STATS_INIT;
    full.bytes_in_use = m.bytes_in_use;
    full.peak_bytes_in_use = m.peak_bytes_in_use;
    full.bytes_cached = m.bytes_cached;
    full.allocations = m.allocations;
    full.cache_hits = m.cache_hits;
    const uint32_t size = stats->struct_size < sizeof(full) ? stats->struct_size : static_cast<uint32_t>(sizeof(full));
    std::memcpy(reinterpret_cast<unsigned char*>(stats) + sizeof(uint32_t),
                reinterpret_cast<const unsigned char*>(&full) + sizeof(uint32_t), size - sizeof(uint32_t));
  });
}

AG_API ag_status ag_context_trim(ag_context* ctx) noexcept {
  return api::call("ag_context_trim", [&] {
    api::context_arg(ctx).allocator().trim();
    pool_trim();
  });
}

AG_API ag_status ag_context_reset_peak_memory(ag_context* ctx) noexcept {
  return api::call("ag_context_reset_peak_memory", [&] { api::context_arg(ctx).allocator().reset_peak(); });
}

}  // extern "C"
