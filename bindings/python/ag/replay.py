"""Record a forward and backward once, replay it many times (ag/replay.h),
with the habits of torch.cuda.graph / CUDAGraph.replay():

    g = ag.Graph()
    with ag.graph(g):                       # ops, loss.backward() run and are recorded
        loss = model(x)
        loss.backward()
    for batch in data:
        g.replay({x: batch})                # new values into the recorded leaf x
        print(loss.item(), w.grad)          # outputs and .grad rewritten in place

Replay reruns the recorded kernels over the same tensors: no allocation,
no graph node; results bitwise those of running the same calls again. The
leaves' .grad is overwritten (zero_grad(set_to_none=True) semantics), so
leaves must have no .grad when recording starts. Random ops, in-place ops,
hooks, custom Functions and ops without replayable kernels raise
ag.UnsupportedError while recording, and so does leaving the block.
"""
import ctypes

from ._lib import F, call, check
from ._tensor import current_context


class Graph:
    """A recorded forward and backward (an ag_graph handle), filled by ag.graph(g)."""

    def __init__(self):
        self._h = None

    def __del__(self, _release=F["ag_graph_release"]):
        h, self._h = getattr(self, "_h", None), None
        if h:
            _release(h)

    @property
    def num_steps(self):
        """Kernel calls one replay makes."""
        return F["ag_graph_num_steps"](self._h) if self._h else 0

    def replay(self, values=None):
        """Reruns the recorded kernels; `values` maps recorded leaves to tensors
        (same shape and dtype) whose values they take first."""
        if not self._h:
            raise RuntimeError("the graph has not been recorded (use it in `with ag.graph(g):` first)")
        pairs = list((values or {}).items())
        n = len(pairs)
        leaves = (ctypes.c_void_p * max(n, 1))(*[k.handle for k, _ in pairs])
        vals = (ctypes.c_void_p * max(n, 1))(*[v.handle for _, v in pairs])
        call("ag_graph_replay", self._h, n, leaves if n else None, vals if n else None)


class graph:
    """Context manager that records into `g` the calls made inside the block
    on tensors of `ctx` (default: the current context)."""

    def __init__(self, g, ctx=None):
        if g._h:
            raise RuntimeError("the graph was recorded already; make a new ag.Graph()")
        self._g = g
        self._ctx = current_context(ctx)

    def __enter__(self):
        call("ag_graph_record_begin", self._ctx.handle)
        return self._g

    def __exit__(self, exc_type, *exc):
        h = ctypes.c_void_p()
        st = F["ag_graph_record_end"](ctypes.byref(h))
        if exc_type is None:
            check(st)  # raises with the first refused call's message
            self._g._h = h.value
        elif h.value:
            F["ag_graph_release"](h.value)
        return False
