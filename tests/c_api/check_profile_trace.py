#!/usr/bin/env python3
"""Test 'profile_trace': runs profile_trace_dump (two backward passes of one
graph, forward calls recorded, 2 threads), parses the Chrome trace it wrote
with Python's json module, and checks it against the node names the program
printed: each pass has one event per node, named as ag_node_name, with a
non-negative duration inside the pass's span; every event has the fields
Perfetto reads."""
import collections
import json
import os
import subprocess
import sys
import tempfile


def main():
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        out = subprocess.run([sys.argv[1], path], check=True, capture_output=True).stdout.decode("utf-8")
        with open(path, encoding="utf-8") as f:
            trace = json.load(f)
    names = collections.Counter(out.split("\n")[:-1])
    assert names["AccumulateGrad"] == 3 and names["ReluBackward"] == 1, names
    events = trace["traceEvents"]
    assert trace["otherData"]["dropped_events"] == 0
    spans = [e for e in events if e["ph"] == "X"]
    for e in spans:
        assert set(e) == {"name", "cat", "ph", "ts", "dur", "pid", "tid", "args"}, e
        assert isinstance(e["ts"], (int, float)) and e["ts"] >= 0 and e["dur"] >= 0, e
        assert e["tid"] >= 1, e
    threads = {e["tid"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert {e["tid"] for e in spans} <= threads, threads
    passes = [e for e in spans if e["cat"] == "backward"]
    assert len(passes) == 2, passes
    for p in passes:
        nodes = [e for e in spans if e["cat"] == "node" and e["args"]["pass"] == p["args"]["pass"]]
        got = collections.Counter(e["name"] for e in nodes)
        assert got == names, (got, names)
        for e in nodes:
            # rounding of ts and dur to ns: allow 0.002 us
            assert e["ts"] >= p["ts"] - 0.002 and e["ts"] + e["dur"] <= p["ts"] + p["dur"] + 0.002, (e, p)
        tagged = [e for e in nodes if e["args"].get("tag") == 'layer "1"']
        assert sorted(e["name"] for e in tagged) == ["LinearBackward", "ReluBackward"], tagged
    calls = collections.Counter(e["name"] for e in spans if e["cat"] == "call")
    assert calls["ag_op_linear"] == 1 and calls["ag_op_tanh"] == 1 and calls["ag_op_mean"] == 2, calls
    print("ok: %d events, %d threads, %d nodes per pass" % (len(spans), len(threads), sum(names.values())))


if __name__ == "__main__":
    main()
