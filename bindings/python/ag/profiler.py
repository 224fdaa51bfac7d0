"""ag's profiler (ag/profile.h), shaped like torch.profiler.profile:

    with ag.profiler.profile(record_calls=True) as prof:
        loss = model(x); loss.backward(); opt.step()
    prof.export_chrome_trace("trace.json")    # for ui.perfetto.dev or chrome://tracing
    for e in prof.events(): print(e.name, e.category, e.duration_ns)

It records each backward pass over the context's graphs ("backward"), each
node a pass runs ("node", named as the tensors' grad_fn), and with
record_calls each C call that hands out a tensor of the context or steps an
optimizer ("call": the forward ops by C function name, "ag_op_linear").
"""
import collections
import ctypes

from . import _capi
from ._lib import F, call
from ._tensor import current_context

Event = collections.namedtuple("Event", "name category start_ns duration_ns thread")


class profile:
    """Profiles the context `ctx` (default: the current one) inside a with block."""

    def __init__(self, ctx=None, record_calls=False, max_events=0):
        self._ctx = current_context(ctx)
        self._opts = _capi.ag_profiler_options()
        call("ag_profiler_options_init", ctypes.byref(self._opts))
        self._opts.record_calls = int(bool(record_calls))
        self._opts.max_events = int(max_events)
        self._h = None

    def __enter__(self):
        call("ag_profiler_start", self._ctx.handle, ctypes.byref(self._opts))
        return self

    def __exit__(self, *exc):
        h = ctypes.c_void_p()
        call("ag_profiler_stop", ctypes.byref(h), self._ctx.handle)
        self._h = h.value

    def __del__(self, _release=F["ag_profile_release"]):
        h, self._h = getattr(self, "_h", None), None
        if h:
            _release(h)

    @property
    def _handle(self):
        if not self._h:
            raise RuntimeError("the profiler has not stopped yet (leave the with block first)")
        return self._h

    def events(self):
        """The recorded spans as Event tuples, by start time."""
        name, cat = ctypes.POINTER(ctypes.c_char)(), ctypes.POINTER(ctypes.c_char)()
        start, dur, thread = ctypes.c_int64(), ctypes.c_int64(), ctypes.c_int32()
        out = []
        for i in range(F["ag_profile_num_events"](self._handle)):
            call("ag_profile_event", self._h, i, ctypes.byref(name), ctypes.byref(cat), ctypes.byref(start),
                 ctypes.byref(dur), ctypes.byref(thread))
            out.append(Event(ctypes.string_at(name).decode("utf-8", "replace"), ctypes.string_at(cat).decode(),
                             start.value, dur.value, thread.value))
        return out

    @property
    def dropped_events(self):
        return F["ag_profile_num_dropped"](self._handle)

    def chrome_trace(self):
        """The profile as Chrome trace JSON text."""
        needed = ctypes.c_size_t()
        st = F["ag_profile_chrome_trace"](self._handle, None, 0, ctypes.byref(needed))
        if st not in (0, _capi.CONSTANTS["AG_ERR_BUFFER_TOO_SMALL"]):
            call("ag_profile_chrome_trace", self._h, None, 0, ctypes.byref(needed))
        buf = ctypes.create_string_buffer(needed.value)
        call("ag_profile_chrome_trace", self._h, buf, needed.value, ctypes.byref(needed))
        return buf.value.decode("utf-8")

    def export_chrome_trace(self, path):
        """Writes the Chrome trace JSON to the file `path`."""
        call("ag_profile_write_chrome_trace", self._handle, str(path).encode())
