/*
 * ag/profile.h - where time goes: a timeline of backward passes, the nodes
 * they run, and (optionally) C API calls, as Chrome trace JSON for Perfetto
 * (ui.perfetto.dev) or chrome://tracing.
 *
 * A profiler runs on one context between ag_profiler_start and
 * ag_profiler_stop; it holds a reference on the context meanwhile (as
 * ag_context_retain), so the context stays alive, and valid for
 * ag_profiler_stop, even after the caller released its own handle. Meanwhile
 * it records, with a steady clock:
 *   - "backward": each ag_backward / ag_grad pass whose roots belong to the
 *     context, from its first node to its last (also a failed one);
 *   - "node": each node such a pass runs, on whichever thread runs it (the
 *     caller or, for expensive independent nodes, an arena worker); its
 *     name is ag_node_name's, and its args carry its sequence_nr, its tag
 *     scope and the pass it belongs to. The nodes of a budgeted backward
 *     (ag/budget.h) are recorded too, without a pass span;
 *   - "call", with record_calls set: each C API call, on any thread, that
 *     hands out a tensor of the context (ops, creation, ag_tensor_grad, ...)
 *     or steps or zeroes an optimizer over its parameters, named by the
 *     function ("ag_op_linear"); these are the forward pass's op timings.
 *
 * Cost when no profiler runs: one test of a pointer per node and one relaxed
 * atomic load per API call. While one runs: two clock reads and one small
 * allocation per event. Events past max_events are counted, not kept.
 *
 * Threading: start and stop may be called from any thread; recording is
 * thread-safe (each thread writes a buffer of its own; stop merges them).
 * A pass still running when its profiler stops finishes normally; its later
 * events are dropped. A profile handle is read-only and may be read from
 * several threads at once.
 *
 * Added in version 0.2 (symbol version AG_0.2).
 */
#ifndef AG_PROFILE_H
#define AG_PROFILE_H

#include "ag/common.h"
#include "ag/context.h"

AG_BEGIN_DECLS

/** Opaque handle of a recorded profile (ag_profiler_stop). */
typedef struct ag_profile ag_profile;

/** Options of ag_profiler_start (ABI.md, section 4). */
typedef struct ag_profiler_options {
  uint32_t struct_size;  /* sizeof(ag_profiler_options) */
  int32_t record_calls;  /* != 0: also time C API calls (default 0) */
  int64_t max_events;    /* events kept at most; 0 = 1000000 (default) */
} ag_profiler_options;

#define AG_PROFILER_OPTIONS_INIT {(uint32_t)sizeof(ag_profiler_options), 0, 0}

/**
 * Write the defaults (= AG_PROFILER_OPTIONS_INIT) into *opts.
 * @param[out] opts  the options.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL opts).
 */
AG_API ag_status ag_profiler_options_init(ag_profiler_options *opts) AG_NOEXCEPT;

/**
 * Start recording on ctx; the timeline's zero is now.
 * @param ctx      the context.
 * @param options  NULL for defaults.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (invalid ctx, a profiler already
 *         running on ctx, struct_size, max_events < 0); AG_ERR_OUT_OF_MEMORY.
 * Thread-safe.
 */
AG_API ag_status ag_profiler_start(ag_context *ctx, const ag_profiler_options *options) AG_NOEXCEPT;

/**
 * Stop the profiler of ctx and hand out what it recorded: events ordered by
 * start time (an enclosing span before what it encloses).
 * @param[out] out  new profile handle; release with ag_profile_release.
 * @param ctx       the context.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL out, invalid ctx, no
 *         profiler running on ctx); AG_ERR_OUT_OF_MEMORY (the profiler is
 *         stopped and its events are lost).
 * Thread-safe.
 */
AG_API ag_status ag_profiler_stop(ag_profile **out, ag_context *ctx) AG_NOEXCEPT;

/** Events in the profile; -1 for NULL or invalid. */
AG_API int64_t ag_profile_num_events(const ag_profile *profile) AG_NOEXCEPT;

/** Events the profile did not keep (past max_events); -1 for NULL or invalid. */
AG_API int64_t ag_profile_num_dropped(const ag_profile *profile) AG_NOEXCEPT;

/**
 * Event `index` (0 .. num_events-1) of the profile.
 * @param profile            the profile.
 * @param index              which event.
 * @param[out] name          borrowed name, valid while the profile lives:
 *                           "backward", a node's name or a function's;
 *                           may be NULL.
 * @param[out] category      static "backward", "node" or "call"; may be NULL.
 * @param[out] start_ns      start, in ns since ag_profiler_start; may be NULL.
 * @param[out] duration_ns   duration in ns (>= 0); may be NULL.
 * @param[out] thread        1, 2, ... by the order in which threads first
 *                           recorded; may be NULL.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL or invalid profile, index out
 *         of range). Out-params untouched on failure.
 */
AG_API ag_status ag_profile_event(const ag_profile *profile, int64_t index, const char **name,
                                  const char **category, int64_t *start_ns, int64_t *duration_ns,
                                  int32_t *thread) AG_NOEXCEPT;

/**
 * The profile as Chrome trace JSON (UTF-8):
 *   {"traceEvents": [{"name": "MmBackward", "cat": "node", "ph": "X",
 *     "ts": 12.345, "dur": 6.789, "pid": 1, "tid": 1,
 *     "args": {"sequence_nr": 7, "tag": "layer1", "pass": 3}}, ...,
 *    and "M" (metadata) events naming the process and threads],
 *    "displayTimeUnit": "ns", "otherData": {"dropped_events": 0}}
 * ts and dur are microseconds with ns precision. Node args carry
 * sequence_nr, pass and, when set, tag; a backward's args its pass.
 * Buffer protocol of ag_graph_export: with AG_OK and AG_ERR_BUFFER_TOO_SMALL,
 * *needed receives the bytes the text needs, including the terminating NUL;
 * if capacity >= *needed the text and a NUL are written to buf, else buf is
 * untouched (buf NULL and capacity 0 ask for the size).
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL or invalid profile, NULL
 *         needed, NULL buf with capacity > 0); AG_ERR_BUFFER_TOO_SMALL;
 *         AG_ERR_OUT_OF_MEMORY.
 */
AG_API ag_status ag_profile_chrome_trace(const ag_profile *profile, char *buf, size_t capacity,
                                         size_t *needed) AG_NOEXCEPT;

/**
 * Write the Chrome trace JSON of ag_profile_chrome_trace to the file `path`
 * (replaced if it exists).
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL or invalid profile, NULL
 *         path, the file cannot be written: the message carries the
 *         system's reason); AG_ERR_OUT_OF_MEMORY.
 */
AG_API ag_status ag_profile_write_chrome_trace(const ag_profile *profile, const char *path) AG_NOEXCEPT;

/** Free the profile; NULL is a no-op. */
AG_API void ag_profile_release(ag_profile *profile) AG_NOEXCEPT;

AG_END_DECLS

#endif /* AG_PROFILE_H */
