// C entry points of ag/profile.h: starting and stopping a context's
// profiler, reading the profile, and its Chrome trace JSON.
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "ag/profile.h"
#include "api/guard.h"
#include "core/profiler.h"
#include "engine/graph_export.h"

using namespace ag;

namespace {

constexpr int64_t kDefaultMaxEvents = 1000000;

struct Profile {
  static constexpr uint32_t kTag = 0x9F0F11E5u;
  ~Profile() { tag = 0; }
  uint32_t tag = kTag;
  Profiler::Result result;
};

const Profile* profile_of(const ag_profile* p) { return reinterpret_cast<const Profile*>(p); }

const Profile& profile_arg(const ag_profile* p) {
  if (p == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "profile is NULL");
  const Profile* q = profile_of(p);
  if (q->tag != Profile::kTag) fail(AG_ERR_INVALID_ARGUMENT, "profile is not a live handle (already released?)");
  return *q;
}

const char* system_reason(int err) { return std::strerror(err); }

// Microseconds with ns precision, as Chrome trace timestamps want them.
void append_us(std::string& out, int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%" PRId64 ".%03d", ns / 1000, static_cast<int>(ns % 1000));
  out += buf;
}

std::string chrome_trace(const Profiler::Result& r) {
  std::string out = "{\"traceEvents\": [\n";
  out += "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 0, \"args\": {\"name\": \"ag\"}}";
  for (uint32_t t = 1; t <= r.threads; ++t) {
    out += str(",\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": ", t,
               ", \"args\": {\"name\": \"ag thread ", t, "\"}}");
  }
  for (const ProfileEvent& e : r.events) {
    out += ",\n{\"name\": ";
    out += quoted(e.name.c_str());
    out += str(", \"cat\": \"", e.category, "\", \"ph\": \"X\", \"ts\": ");
    append_us(out, e.start_ns);
    out += ", \"dur\": ";
    append_us(out, e.duration_ns);
    out += str(", \"pid\": 1, \"tid\": ", e.thread, ", \"args\": {");
    if (e.pass != 0) {
      if (e.sequence_nr != UINT64_MAX) out += str("\"sequence_nr\": ", e.sequence_nr, ", ");
      if (!e.tag.empty()) out += str("\"tag\": ", quoted(e.tag.c_str()), ", ");
      out += str("\"pass\": ", e.pass);
    }
    out += "}}";
  }
  out += str("\n],\n\"displayTimeUnit\": \"ns\", \"otherData\": {\"dropped_events\": ", r.dropped, "}}\n");
  return out;
}

}  // namespace

extern "C" {

AG_API ag_status ag_profiler_options_init(ag_profiler_options* opts) noexcept {
  return api::call("ag_profiler_options_init", [&] {
    api::check_out(opts);
    *opts = ag_profiler_options AG_PROFILER_OPTIONS_INIT;
  });
}

AG_API ag_status ag_profiler_start(ag_context* ctx, const ag_profiler_options* options) noexcept {
  return api::call("ag_profiler_start", [&] {
    Context& c = api::context_arg(ctx);
    ag_profiler_options o = AG_PROFILER_OPTIONS_INIT;
    api::read_options(options, o);
    if (o.max_events < 0) fail(AG_ERR_INVALID_ARGUMENT, "max_events ", o.max_events, " is negative");
    auto p = std::make_shared<Profiler>(o.record_calls != 0, o.max_events ? o.max_events : kDefaultMaxEvents);
    if (!start_profiler(&c, std::move(p))) fail(AG_ERR_INVALID_ARGUMENT, "a profiler already runs on this context");
    ag_context_retain(ctx);  // dropped by ag_profiler_stop: ctx stays valid for it
  });
}

AG_API ag_status ag_profiler_stop(ag_profile** out, ag_context* ctx) noexcept {
  return api::call("ag_profiler_stop", [&] {
    api::check_out(out);
    Context& c = api::context_arg(ctx);
    auto profile = std::make_unique<Profile>();
    std::shared_ptr<Profiler> p = stop_profiler(&c);
    if (!p) fail(AG_ERR_INVALID_ARGUMENT, "no profiler runs on this context (ag_profiler_start)");
    ag_context_release(ctx);  // the reference ag_profiler_start took; c may be gone now
    profile->result = p->take();
    *out = reinterpret_cast<ag_profile*>(profile.release());
  });
}

AG_API int64_t ag_profile_num_events(const ag_profile* profile) noexcept {
  int64_t n = -1;
  api::call("ag_profile_num_events",
            [&] { n = static_cast<int64_t>(profile_arg(profile).result.events.size()); });
  return n;
}

AG_API int64_t ag_profile_num_dropped(const ag_profile* profile) noexcept {
  int64_t n = -1;
  api::call("ag_profile_num_dropped", [&] { n = profile_arg(profile).result.dropped; });
  return n;
}

AG_API ag_status ag_profile_event(const ag_profile* profile, int64_t index, const char** name, const char** category,
                                  int64_t* start_ns, int64_t* duration_ns, int32_t* thread) noexcept {
  return api::call("ag_profile_event", [&] {
    const auto& events = profile_arg(profile).result.events;
    if (index < 0 || static_cast<uint64_t>(index) >= events.size()) {
      fail(AG_ERR_INVALID_ARGUMENT, "index ", index, " is outside 0..", static_cast<int64_t>(events.size()) - 1);
    }
    const ProfileEvent& e = events[static_cast<size_t>(index)];
    if (name) *name = e.name.c_str();
    if (category) *category = e.category;
    if (start_ns) *start_ns = e.start_ns;
    if (duration_ns) *duration_ns = e.duration_ns;
    if (thread) *thread = static_cast<int32_t>(e.thread);
  });
}

AG_API ag_status ag_profile_chrome_trace(const ag_profile* profile, char* buf, size_t capacity,
                                         size_t* needed) noexcept {
  return api::call("ag_profile_chrome_trace", [&] {
    const Profile& p = profile_arg(profile);
    if (needed == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "needed is NULL");
    api::copy_text(chrome_trace(p.result), buf, capacity, needed, "the trace");
  });
}

AG_API ag_status ag_profile_write_chrome_trace(const ag_profile* profile, const char* path) noexcept {
  return api::call("ag_profile_write_chrome_trace", [&] {
    const Profile& p = profile_arg(profile);
    if (path == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "path is NULL");
    const std::string text = chrome_trace(p.result);
    std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path, "wb"), std::fclose);
    if (!f) fail(AG_ERR_INVALID_ARGUMENT, "cannot open '", path, "': ", system_reason(errno));
    const bool written = std::fwrite(text.data(), 1, text.size(), f.get()) == text.size();
    const int write_errno = errno;
    const bool closed = std::fclose(f.release()) == 0;
    if (!written || !closed) {
      fail(AG_ERR_INVALID_ARGUMENT, "cannot write '", path, "': ", system_reason(written ? errno : write_errno));
    }
  });
}

AG_API void ag_profile_release(ag_profile* profile) noexcept {
  if (profile == nullptr) return;
  api::call("ag_profile_release", [&] {
    profile_arg(profile);
    delete profile_of(profile);
  });
}

}  // extern "C"
