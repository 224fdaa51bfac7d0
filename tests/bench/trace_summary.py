#!/usr/bin/env python3
"""Where a profiled run spent its time: reads a Chrome trace written by ag's
profiler (ag/profile.h, e.g. `fashion_mnist --profile trace.json`) and prints
a Markdown table of the top spans by total time, per name: backward nodes
("node"), API calls such as forward ops and optimizer steps ("call"), and
whole backward passes ("backward"). Times per step are totals divided by
the number of backward passes. Standard library only.

Usage: trace_summary.py TRACE.json [--top N]
"""
import argparse
import collections
import json


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--top", type=int, default=15)
    a = ap.parse_args()
    with open(a.trace, encoding="utf-8") as f:
        trace = json.load(f)
    spans = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    passes = sum(1 for e in spans if e["cat"] == "backward")
    steps = max(passes, 1)
    total = collections.defaultdict(float)
    count = collections.Counter()
    for e in spans:
        key = (e["cat"], e["name"])
        total[key] += e["dur"]
        count[key] += 1
    # The step as the caller saw it: calls (forward, optimizer) plus passes.
    step_us = sum(t for (cat, _), t in total.items() if cat in ("call", "backward")) / steps
    print("%d backward passes; calls + backward: %.3f ms per step; dropped events: %d\n"
          % (passes, step_us / 1e3, trace.get("otherData", {}).get("dropped_events", 0)))
    print("| kind | name | count per step | us per step | share of step |")
    print("|---|---|---:|---:|---:|")
    ranked = sorted(total, key=lambda k: -total[k])
    for cat, name in [k for k in ranked if k[0] != "backward"][:a.top]:
        t = total[(cat, name)] / steps
        print("| %s | %s | %.3g | %.1f | %.1f%% |" % (cat, name, count[(cat, name)] / steps, t,
                                                       100.0 * t / step_us if step_us else 0.0))
    if passes:
        t = total[("backward", "backward")] / steps
        print("| backward | (whole pass) | 1 | %.1f | %.1f%% |" % (t, 100.0 * t / step_us if step_us else 0.0))


if __name__ == "__main__":
    main()
