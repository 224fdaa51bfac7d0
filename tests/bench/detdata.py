#!/usr/bin/env python3
"""Deterministic benchmark inputs and the published checksums (WORKLOADS.md).

Every input of the workloads is det_uniform(count, seed, lo, hi): float32
values computed from a counter-based integer hash, so that C (bench_harness.c),
C++ (bench_libtorch.cpp) and Python (this file, bench_torch.py) produce the
same bits without shipping data files. The four implementations must agree;
`python3 detdata.py` prints the reference values WORKLOADS.md quotes and
exits 1 if they drift.

The hash is a 32-bit "lowbias32" mixer (xor-shift, multiply, twice); all
arithmetic is modulo 2**32:

    mix(h): h ^= h >> 16; h *= 0x7FEB352D; h ^= h >> 15; h *= 0x846CA68B; h ^= h >> 16
    key    = mix(seed ^ 0xA511E9B3)
    bits_k = mix(mix(k) ^ key)                  k = 0, 1, ..., count - 1
    u_k    = (bits_k >> 8) / 2**24              24 bits: exact in float32 and float64
    v_k    = float32(lo + (hi - lo) * u_k)      in float64, rounded to nearest once

Tensors with more than one dimension are filled in row-major order.
"""

import sys

MASK = 0xFFFFFFFF
SEED_SALT = 0xA511E9B3
MUL1 = 0x7FEB352D
MUL2 = 0x846CA68B

# Published values for each workload, as bench_ag and compare.py use them:
# name -> (value, relative tolerance). WORKLOADS.md explains the tolerances.
CHECKSUMS = {
    "a_scalar_chain": {"y": (0.06538919, 5e-5), "xgrad_sum": (2.0865358e-09, 1e-3)},
    "b_small_chain16": {"y": (1.0462271, 5e-5), "xgrad_sum": (4.4012309e-08, 1e-3)},
    "c_large_elementwise n=1048576": {"loss": (-84.47757, 1e-5), "xgrad_sum": (694849.95, 1e-5),
                                      "ygrad_sum": (60.555168, 1e-5)},
    "c_large_elementwise n=4194304": {"loss": (216.24507, 1e-5), "xgrad_sum": (2778652.25, 1e-5),
                                      "ygrad_sum": (178.53972, 1e-5)},
    "c_large_elementwise n=16777216": {"loss": (1770.4531, 1e-5), "xgrad_sum": (11114800.3, 1e-5),
                                       "ygrad_sum": (3119.19198, 1e-5)},
    "d_mlp_step": {"loss_steps_0_1_2": ([2.3030179, 2.3021231, 2.3012376], 1e-5)},
    "e_fanin": {"loss": (134.50343, 1e-5), "xgrad_sum": (-102.07774, 1e-5),
                "w999grad_sum": (-7.3172946, 1e-5)},
}

# det_uniform(4, 1, 0.25, 0.75): every twin checks itself against these.
REFERENCE_4_1 = [0.36608201, 0.53891075, 0.43905634, 0.49409539]


def mix(h):
    h &= MASK
    h ^= h >> 16
    h = (h * MUL1) & MASK
    h ^= h >> 15
    h = (h * MUL2) & MASK
    h ^= h >> 16
    return h


def _det_uniform_numpy(np, count, seed, lo, hi):
    def vmix(h):
        # uint32 arithmetic wraps, which is the modulo 2**32 of the definition
        with np.errstate(over="ignore"):
            h = h ^ (h >> np.uint32(16))
            h = h * np.uint32(MUL1)
            h = h ^ (h >> np.uint32(15))
            h = h * np.uint32(MUL2)
            return h ^ (h >> np.uint32(16))

    key = np.uint32(mix(seed ^ SEED_SALT))
    out = np.empty(count, dtype=np.float32)
    step = 1 << 20  # keeps the scratch arrays small for the 16M inputs
    for start in range(0, count, step):
        k = np.arange(start, min(count, start + step), dtype=np.uint32)
        u = (vmix(vmix(k) ^ key) >> np.uint32(8)).astype(np.float64) / float(1 << 24)
        out[start:start + len(k)] = lo + (hi - lo) * u
    return out


def det_uniform(count, seed, lo, hi):
    """count float32 values in [lo, hi): a numpy array when numpy is there,
    else a list of Python floats holding float32 values."""
    try:
        import numpy as np
    except ImportError:
        np = None
    if np is not None:
        return _det_uniform_numpy(np, count, seed, lo, hi)
    import struct
    key = mix(seed ^ SEED_SALT)
    vals = []
    for k in range(count):
        u = (mix(mix(k) ^ key) >> 8) / float(1 << 24)
        # round through a 4-byte float, as the C twins' cast does
        vals.append(struct.unpack("f", struct.pack("f", lo + (hi - lo) * u))[0])
    return vals


def rel_err(got, expect):
    return abs(got - expect) / abs(expect) if expect else abs(got)


def verdict(workload, case, check):
    """(ok, details) for a result line's "check" dict against CHECKSUMS."""
    key = workload if workload in CHECKSUMS else f"{workload} {case}"
    published = CHECKSUMS.get(key)
    if published is None:
        return True, {}
    details = {}
    ok = True
    for name, (expect, rtol) in published.items():
        got = check.get(name)
        gots = got if isinstance(got, list) else [got]
        exps = expect if isinstance(expect, list) else [expect]
        if got is None or len(gots) != len(exps):
            ok = False
            details[name] = None
            continue
        errs = [rel_err(g, e) for g, e in zip(gots, exps)]
        details[name] = errs if isinstance(expect, list) else errs[0]
        ok = ok and all(e <= rtol for e in errs)
    return ok, details


def main():
    v = [float(t) for t in det_uniform(4, 1, 0.25, 0.75)]
    print("det_uniform(4, 1, 0.25, 0.75) =", [f"{t:.8f}" for t in v])
    bad = [i for i, (a, b) in enumerate(zip(v, REFERENCE_4_1)) if abs(a - b) > 5e-9]
    if len(sys.argv) > 1 and sys.argv[1] == "--sum":
        print("sum det_uniform(2^20, 11, -1, 1) =",
              sum(float(t) for t in det_uniform(1 << 20, 11, -1.0, 1.0)))
    if bad:
        print("det_uniform disagrees with the reference values at", bad, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
