#!/usr/bin/env python3
"""Writes seed programs for the API-program fuzzer (format: api_program.c):
a few leaves of small shapes that require grad, then random generic calls
(by id, from the build's api_calls.inc) and hand-driven steps with small,
mostly valid arguments, so that the fuzzer starts from programs that get past
argument checks. libFuzzer's -merge=1 keeps those that add coverage.

usage: make_seeds.py BUILD/tests/fuzz/api_calls.inc OUTDIR [COUNT] [SEED]
"""
import os
import random
import re
import sys


def u8(v):
    return v & 0xFF


def create(rng, slot):
    """step_create: a f32/f64 tensor of 1-3 small dims from program data."""
    nd = rng.choice([0, 1, 2, 2, 3])
    dims = [rng.choice([1, 2, 3, 4]) for _ in range(nd)]
    out = [0x80, nd]  # op (% 16 == 0), shape list header: nd entries given
    out += [d + 3 for d in dims]  # fz_int: b % 9 - 3
    out += [nd, rng.choice([2, 3]), 4, 0]  # count, dtype f32/f64 (fz_small + 1), how (data, then requires_grad), ctx 0
    n = 1
    for d in dims:
        n *= d
    out += [rng.randrange(0, 160) for _ in range(n)]  # values (int8)(2b)/16
    out += [slot, slot]  # keep slot, requires_grad slot
    return out


def generic(rng, ids):
    out = [rng.randrange(0, 0x80)]
    i = rng.choice(ids)
    out += [i >> 8, i & 0xFF]
    # arguments: tensor slots, small ints, counts and keep slots, all from one pool
    out += [rng.choice([rng.randrange(0, 16), rng.randrange(0, 16), 3, 4, 2, 1, 0]) for _ in range(10)]
    return out


def special(rng):
    kind = rng.randrange(1, 16)
    return [0x80 + kind] + [rng.randrange(0, 16) if rng.random() < 0.7 else rng.randrange(256) for _ in range(12)]


def main():
    inc, outdir = sys.argv[1], sys.argv[2]
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 64
    rng = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 1)
    ids = [int(m, 16) for m in re.findall(r"\{0x([0-9a-f]{4}), \"ag_", open(inc).read())]
    os.makedirs(outdir, exist_ok=True)
    for k in range(count):
        prog = [rng.randrange(256) & 0x03]  # 1 or 2 threads, second context or not; no failing allocator
        for slot in range(rng.randrange(2, 6)):
            prog += create(rng, slot)
        for _ in range(rng.randrange(8, 40)):
            prog += generic(rng, ids) if rng.random() < 0.6 else special(rng)
        with open(os.path.join(outdir, "seed-%03d.bin" % k), "wb") as f:
            f.write(bytes(u8(b) for b in prog))


if __name__ == "__main__":
    main()
