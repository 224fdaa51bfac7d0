#!/usr/bin/env python3
"""ag's transcendental kernels against PyTorch's at one thread.

    AG_LIBRARY=build/src/libag.so PYTHONPATH=bindings/python \
        /usr/bin/python3 tests/bench/bench_transcendental.py [--sizes 1048576,16777216] [--repeats 20]

For tanh, exp, log, sigmoid, gelu and erf on f32 inputs of each size: the
median time of ag (a context of one thread, through the Python binding on
a numpy array shared without copy) and of torch with
torch.set_num_threads(1), interleaved call by call so that a loaded machine
slows both alike. One JSON line per op and size: {"bench":
"transcendental", "op", "n", "ag_ns", "torch_ns", "ratio" (ag / torch),
"max_abs_diff"}. Needs numpy and torch (Debian's python3): exits 77
(skipped) without them.
"""
import argparse
import json
import statistics
import sys
import time

try:
    import numpy as np
    import torch
except ImportError as e:  # pragma: no cover
    print("bench_transcendental: %s; skipped" % e, file=sys.stderr)
    sys.exit(77)

import ag

# Inputs where each function does real work (log on positives).
OPS = {
    "tanh": (-4.0, 4.0), "exp": (-20.0, 20.0), "log": (1e-3, 1e3), "sigmoid": (-10.0, 10.0),
    "gelu": (-6.0, 6.0), "erf": (-3.0, 3.0),
}


def torch_fn(name):
    return {"gelu": torch.nn.functional.gelu, "sigmoid": torch.sigmoid}.get(name) or getattr(torch, name)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--sizes", default="1048576,16777216")
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument("--only", default=",".join(OPS))
    a = p.parse_args()
    torch.set_num_threads(1)
    ctx = ag.Context(num_threads=1)
    rng = np.random.default_rng(7)
    for n in (int(s) for s in a.sizes.split(",")):
        for name in a.only.split(","):
            lo, hi = OPS[name]
            x = rng.uniform(lo, hi, n).astype(np.float32)
            xa, xt = ag.from_numpy(x, ctx), torch.from_numpy(x)
            fa, ft = ag.ops[name], torch_fn(name)
            ya, yt = fa(xa), ft(xt)  # warm up, and the results to compare
            diff = float(np.max(np.abs(ya.numpy().astype(np.float64) - yt.numpy().astype(np.float64))))
            del ya, yt
            ta, tt = [], []
            for _ in range(a.repeats):
                t0 = time.perf_counter_ns()
                y = fa(xa)
                ta.append(time.perf_counter_ns() - t0)
                del y
                t0 = time.perf_counter_ns()
                y = ft(xt)
                tt.append(time.perf_counter_ns() - t0)
                del y
            ma, mt = statistics.median(ta), statistics.median(tt)
            print(json.dumps({"bench": "transcendental", "op": name, "n": n, "ag_ns": round(ma),
                              "torch_ns": round(mt), "ratio": round(ma / mt, 3), "max_abs_diff": diff}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
