#!/usr/bin/env python3
"""Common ops at one thread, ag against PyTorch: where an op is slower.

    AG_LIBRARY=build/src/libag.so PYTHONPATH=bindings/python \
        /usr/bin/python3 tests/bench/bench_ops_torch.py [--only exp,cumsum_dim1] [--scale 1.0] [--repeats 15]

For each case (elementwise ops of 1M f32 elements, broadcasts, reductions
over either dim of a 1024 x 1024 matrix, scans, softmax, transposing copies,
a 512^3 product, layer_norm, indexing): the median time of the forward
without gradient recording, and of forward plus .sum().backward(), for ag
(a context of one thread, through the Python binding) and for torch with
torch.set_num_threads(1), in alternating blocks so that a loaded machine
slows both alike; the best of three blocks is kept. `--scale` multiplies
the sizes (0.01 for a smoke run). One JSON line per case: {"bench":
"ops_torch", "op", "fwd_ag_us", "fwd_torch_us", "fwd_ratio", "step_ag_us",
"step_torch_us", "step_ratio"}; ratios are ag / torch. Needs numpy and torch
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
except ImportError as e:  # pragma: no cover
    print("bench_ops_torch: %s; skipped" % e, file=sys.stderr)
    sys.exit(77)

import ag

F = torch.nn.functional


def cases(n, m, k, index_a, index_t):
    """(name, input shapes, ag function, torch function, low, high)."""
    mat, row, col = (m, m), (m,), (m, 1)
    return [
        ("exp", [n], lambda x: x.exp(), lambda x: x.exp(), -1, 1),
        ("log", [n], lambda x: x.log(), lambda x: x.log(), 0.1, 2),
        ("sqrt", [n], lambda x: x.sqrt(), lambda x: x.sqrt(), 0.1, 2),
        ("sin", [n], lambda x: x.sin(), lambda x: x.sin(), -1, 1),
        ("tanh", [n], lambda x: x.tanh(), lambda x: x.tanh(), -1, 1),
        ("sigmoid", [n], lambda x: x.sigmoid(), lambda x: x.sigmoid(), -1, 1),
        ("relu", [n], lambda x: x.relu(), lambda x: x.relu(), -1, 1),
        ("gelu", [n], ag.gelu, F.gelu, -1, 1),
        ("silu", [n], ag.silu, F.silu, -1, 1),
        ("abs", [n], lambda x: x.abs(), lambda x: x.abs(), -1, 1),
        ("pow_2.5", [n], lambda x: x ** 2.5, lambda x: x ** 2.5, 0.1, 2),
        ("add", [n, n], lambda x, y: x + y, lambda x, y: x + y, -1, 1),
        ("mul", [n, n], lambda x, y: x * y, lambda x, y: x * y, -1, 1),
        ("div", [n, n], lambda x, y: x / y, lambda x, y: x / y, 0.5, 2),
        ("maximum", [n, n], ag.maximum, torch.maximum, -1, 1),
        ("atan2", [n, n], ag.atan2, torch.atan2, -1, 1),
        ("add_row_broadcast", [mat, row], lambda x, y: x + y, lambda x, y: x + y, -1, 1),
        ("mul_col_broadcast", [mat, col], lambda x, y: x * y, lambda x, y: x * y, -1, 1),
        ("sum_dim0", [mat], lambda x: x.sum(0), lambda x: x.sum(0), -1, 1),
        ("sum_dim1", [mat], lambda x: x.sum(1), lambda x: x.sum(1), -1, 1),
        ("var_dim1", [mat], lambda x: x.var(1), lambda x: x.var(1), -1, 1),
        ("max_dim1", [mat], lambda x: ag.max_dim(x, 1)[0], lambda x: x.max(1)[0], -1, 1),
        ("amax_dim0", [mat], lambda x: x.amax(0), lambda x: x.amax(0), -1, 1),
        ("norm", [mat], lambda x: x.norm(), lambda x: x.norm(), -1, 1),
        ("softmax_dim1", [mat], lambda x: ag.softmax(x, 1), lambda x: torch.softmax(x, 1), -1, 1),
        ("softmax_dim0", [mat], lambda x: ag.softmax(x, 0), lambda x: torch.softmax(x, 0), -1, 1),
        ("log_softmax_dim1", [mat], lambda x: ag.log_softmax(x, 1), lambda x: torch.log_softmax(x, 1), -1, 1),
        ("cumsum_dim1", [mat], lambda x: x.cumsum(1), lambda x: x.cumsum(1), -1, 1),
        ("cumsum_dim0", [mat], lambda x: x.cumsum(0), lambda x: x.cumsum(0), -1, 1),
        ("transpose_copy", [mat], lambda x: x.t().contiguous(), lambda x: x.t().contiguous(), -1, 1),
        ("matmul", [(k, k), (k, k)], lambda x, y: x @ y, lambda x, y: x @ y, -1, 1),
        ("layer_norm", [mat], lambda x: ag.layer_norm(x, [m]), lambda x: F.layer_norm(x, [m]), -1, 1),
        ("mse_loss", [n, n], ag.mse_loss, F.mse_loss, -1, 1),
        ("where", [n, n], lambda x, y: ag.where(x > 0, x, y), lambda x, y: torch.where(x > 0, x, y), -1, 1),
        ("clamp", [n], lambda x: x.clamp(-0.5, 0.5), lambda x: x.clamp(-0.5, 0.5), -1, 1),
        ("cat", [mat, mat], lambda x, y: ag.cat([x, y], 0), lambda x, y: torch.cat([x, y], 0), -1, 1),
        ("index_select", [mat], lambda x: ag.index_select(x, 0, index_a),
         lambda x: torch.index_select(x, 0, index_t), -1, 1),
    ]


def median_ns(f, reps):
    f()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter_ns()
        f()
        times.append(time.perf_counter_ns() - t0)
    return statistics.median(times)


def run_case(case, ctx, rng, reps):
    name, shapes, fa, ft, lo, hi = case
    arrays = [rng.uniform(lo, hi, size=s).astype(np.float32) for s in shapes]
    xa = [ag.tensor(a, requires_grad=True, ctx=ctx) for a in arrays]
    xt = [torch.tensor(a, requires_grad=True) for a in arrays]

    def step(xs, f):
        for x in xs:
            x.grad = None
        f(*xs).sum().backward()

    def fwd_a():
        with ag.no_grad():
            fa(*xa)

    def fwd_t():
        with torch.no_grad():
            ft(*xt)

    best = {}
    for _ in range(3):  # alternating blocks; the best of each kept
        for key, f in (("step_ag", lambda: step(xa, fa)), ("step_torch", lambda: step(xt, ft)),
                       ("fwd_ag", fwd_a), ("fwd_torch", fwd_t)):
            t = median_ns(f, reps)
            best[key] = min(best.get(key, t), t)
    us = {k: round(v / 1e3, 1) for k, v in best.items()}
    return {"bench": "ops_torch", "op": name, "fwd_ag_us": us["fwd_ag"], "fwd_torch_us": us["fwd_torch"],
            "fwd_ratio": round(best["fwd_ag"] / best["fwd_torch"], 3), "step_ag_us": us["step_ag"],
            "step_torch_us": us["step_torch"], "step_ratio": round(best["step_ag"] / best["step_torch"], 3)}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--only", default="")
    p.add_argument("--scale", type=float, default=1.0)
    p.add_argument("--repeats", type=int, default=5)
    a = p.parse_args()
    torch.set_num_threads(1)
    ctx = ag.Context(num_threads=1)
    rng = np.random.default_rng(3)
    n = max(64, int((1 << 20) * a.scale))
    m = max(8, int(1024 * a.scale ** 0.5))
    k = max(8, int(512 * a.scale ** (1 / 3)))
    index = np.arange(0, m, 2, dtype=np.int64)[::-1].copy()
    only = set(filter(None, a.only.split(",")))
    for case in cases(n, m, k, ag.tensor(index, ctx=ctx), torch.tensor(index)):
        if only and case[0] not in only:
            continue
        print(json.dumps(run_case(case, ctx, rng, a.repeats)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
