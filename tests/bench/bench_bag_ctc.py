#!/usr/bin/env python3
"""ag's embedding_bag and ctc_loss (composites of ag ops) against PyTorch's fused kernels.

    AG_LIBRARY=build/src/libag.so PYTHONPATH=bindings/python \
        /usr/bin/python3 tests/bench/bench_bag_ctc.py [--scale 1] [--repeats 20]

Forward and backward (gradient of the sum for weight, of the loss for
log_probs), f64, default threads: embedding_bag sum/mean/max of V=1000 rows
of D=64 over n=4096*scale indices in bags of 16; ctc_loss of T=50*scale
frames, N=16, C=20, targets of 10..29 labels (the OpInfo sample's size).
ag and torch run interleaved call by call, so that a loaded machine slows
both alike; one JSON line per case with the medians: {"bench": "bag_ctc",
"case", "ag_ms", "torch_ms", "ratio" (ag / torch)}. Needs numpy and torch
(Debian's python3): exits 77 (skipped) without them.
"""
import argparse
import json
import statistics
import sys
import time

try:
    import numpy as np
    import torch
    import torch.nn.functional as Fn
except ImportError as e:  # pragma: no cover
    print("bench_bag_ctc: %s; skipped" % e, file=sys.stderr)
    sys.exit(77)

import ag


def timed(f):
    t0 = time.perf_counter()
    f()
    return (time.perf_counter() - t0) * 1e3


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--scale", type=int, default=1)
    p.add_argument("--repeats", type=int, default=20)
    a = p.parse_args()
    rng = np.random.default_rng(0)
    cases = {}
    w = rng.standard_normal((1000, 64))
    idx = rng.integers(0, 1000, 4096 * a.scale)
    off = np.arange(0, idx.size, 16)
    aw, tw = ag.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
    ai, ao, ti, to = ag.tensor(idx), ag.tensor(off), torch.tensor(idx), torch.tensor(off)
    for m in ("sum", "mean", "max"):
        cases["embedding_bag_%s" % m] = (
            lambda m=m: ag.grad([ag.embedding_bag(aw, ai, ao, m).sum()], [aw]),
            lambda m=m: torch.autograd.grad(Fn.embedding_bag(ti, tw, to, mode=m).sum(), tw))
    T, N, C, S = 50 * a.scale, 16, 20, 30
    x = rng.standard_normal((T, N, C))
    lp = x - np.log(np.exp(x).sum(-1, keepdims=True))
    args = [rng.integers(1, C, (N, S)), np.full(N, T), rng.integers(10, S, N)]
    al, tl = ag.tensor(lp, requires_grad=True), torch.tensor(lp, requires_grad=True)
    aa, ta = [ag.tensor(v) for v in args], [torch.tensor(v) for v in args]
    cases["ctc_loss"] = (lambda: ag.grad([ag.ctc_loss(al, *aa)], [al]),
                         lambda: torch.autograd.grad(Fn.ctc_loss(tl, *ta), tl))
    for name, (fa, ft) in cases.items():
        fa(), ft()  # warm up
        ta_ms, tt_ms = [], []
        for _ in range(a.repeats):
            ta_ms.append(timed(fa))
            tt_ms.append(timed(ft))
        ag_ms, torch_ms = statistics.median(ta_ms), statistics.median(tt_ms)
        print(json.dumps({"bench": "bag_ctc", "case": name, "ag_ms": round(ag_ms, 3), "torch_ms": round(torch_ms, 3),
                          "ratio": round(ag_ms / torch_ms, 2)}))


if __name__ == "__main__":
    main()
