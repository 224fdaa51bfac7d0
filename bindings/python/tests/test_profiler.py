"""ag.profiler: one node event per backward node, named as the grad_fn of the
tensors that recorded them, inside the pass's span; forward calls with
record_calls; the Chrome trace parses as JSON and holds the same spans."""
import collections
import json

import pytest

import ag


def _model(ctx):
    w = ag.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True, ctx=ctx)
    x = ag.tensor([[1.0, 2.0], [3.0, 4.0]], ctx=ctx)
    h = x @ w
    y = h.relu()
    loss = y.sum()
    return loss, [h.grad_fn, y.grad_fn, loss.grad_fn, "AccumulateGrad"]


def test_backward_nodes_and_calls(tmp_path):
    with ag.Context(num_threads=1) as ctx:
        with ag.profiler.profile(record_calls=True) as prof:
            loss, names = _model(ctx)
            loss.backward()
        events = prof.events()
        assert prof.dropped_events == 0
        nodes = [e for e in events if e.category == "node"]
        assert collections.Counter(e.name for e in nodes) == collections.Counter(names)
        (span,) = [e for e in events if e.category == "backward"]
        for e in nodes:
            assert e.duration_ns >= 0 and span.start_ns <= e.start_ns
            assert e.start_ns + e.duration_ns <= span.start_ns + span.duration_ns
        calls = [e.name for e in events if e.category == "call"]
        assert "ag_op_matmul" in calls and "ag_op_relu" in calls
        trace = json.loads(prof.chrome_trace())
        spans = [e for e in trace["traceEvents"] if e["ph"] == "X"]
        assert sorted(e["name"] for e in spans) == sorted(e.name for e in events)
        path = tmp_path / "trace.json"
        prof.export_chrome_trace(path)
        assert json.loads(path.read_text()) == trace


def test_errors():
    with ag.Context() as ctx:
        prof = ag.profiler.profile(ctx)
        with pytest.raises(RuntimeError):
            prof.events()  # not stopped yet
        with prof:
            with pytest.raises(ag.Error, match="already runs"):
                with ag.profiler.profile(ctx):
                    pass
        assert prof.events() == []
