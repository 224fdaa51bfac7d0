#!/usr/bin/python3
"""Writes the opinfo fixtures: PyTorch's own OpInfo sample inputs for the ops ag
has, with PyTorch's outputs, first-order gradients and second-order products,
for test_opinfo.cc to replay through ag's C ABI (no PyTorch at test time).

Run with a Python that has PyTorch (Debian's python3-torch 1.13):
    OPENBLAS_CORETYPE=SkylakeX /usr/bin/python3 tests/opinfo/gen_opinfo.py
(the committed fixtures were written so; OpenBLAS's other kernel sets change
the last bits of products and decompositions, and the values of lstsq's
'gelsy' samples differ in their last bits from run to run).
It rewrites tests/opinfo/fixtures/<family>.bin.gz (one per ag op family of
bindings/ag-api.json) and tests/opinfo/COVERAGE.md (what was matched,
replayed and skipped, and why).

For every sample: the inputs, the op's outputs, the gradients of
sum(output * c) for seeded random c with respect to every float input that
requires grad, and where the op has a second derivative, the gradient of
sum(gradient * w) for seeded random w. The sample's args and kwargs become ag's
C parameters through ADAPTERS in opinfo_adapters.py (OpInfo name -> function;
its argument constructors and first adapters in opinfo_adapters_base.py); a
sample an adapter cannot express in ag's signature is skipped and counted with
the reason.

Fixture format (little-endian; read by test_opinfo.cc):
  "AGOPINFO" u32 version=1, u32 cases; per case:
    str function ("ag_op_..."), str label, f64 rtol, f64 atol, u8 gradgrad,
    u32 tensors, tensor...      (inputs; tensor = u8 dtype (0 f64, 1 i64, 2 bool),
                                 u8 requires_grad, u8 ndim, i64 shape[ndim], data)
    u32 args, arg...            (ag's in-parameters in order, length parameters left out:
                                 u8 kind: 0 tensor u32 index | 1 NULL | 2 list u32 n, u32 index[n]
                                 | 3 i64 array u32 n, i64[n] | 4 i64 | 5 f64 | 6 dtype i32)
    u32 outputs, per output: u8 has_cotangent, tensor expected, [tensor cotangent]
    per input with requires_grad: tensor gradient; if gradgrad: tensor w, tensor second
  str = u32 length + bytes. Gradients an input does not receive are zeros.
"""
import gzip
import json
import math
import os
import random
import struct
import sys
import types
from collections import Counter, defaultdict

# torch.testing._internal imports expecttest (a test-only dependency Debian does not ship).
_stub = types.ModuleType("expecttest")
_stub.TestCase = object
_stub.ACCEPT = False
sys.modules.setdefault("expecttest", _stub)

import numpy  # noqa: E402
import torch  # noqa: E402
from torch.testing._internal.common_methods_invocations import op_db  # noqa: E402
from opinfo_adapters import ADAPTERS  # noqa: E402
from opinfo_adapters_base import NULL_ARRAY, Skip  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MAX_SAMPLES = 48          # per OpInfo (max_pool2d has 1440): evenly spread
RTOL, ATOL = 1e-7, 1e-9   # default tolerance; LOOSE overrides
LOOSE = {"erf": (1e-6, 1e-8), "nn.functional.gelu": (1e-6, 1e-8), "nn.functional.mish": (1e-6, 1e-8),
         "tan": (1e-6, 1e-8), "nn.functional.selu": (1e-6, 1e-8), "nn.functional.silu": (1e-6, 1e-8),
         "pow": (1e-6, 1e-8), "prod": (1e-6, 1e-8), "cumprod": (1e-6, 1e-8),
         # negative orders: second derivatives are sums of terms of both signs (cancellation)
         "linalg.vector_norm": (1e-6, 1e-8)}


# Samples where ag differs from PyTorch by design or by a known gap: skipped
# and counted under the reason (see COVERAGE.md). (OpInfo name, test) -> reason.
DIFFERENCES = [
    (("gather", "index_select", "scatter", "index_copy", "index_fill", "scatter_reduce.sum", "scatter_reduce.prod",
      "scatter_reduce.mean", "scatter_reduce.amax", "scatter_reduce.amin"), lambda s: s.input.dim() == 0,
     "known gap: ag's indexing ops reject dim 0 of a 0-dim input (PyTorch reads it as 1-dim)"),
    (("nn.functional.hardtanh",), lambda s: s.kwargs.get("min_val", -1.0) > s.kwargs.get("max_val", 1.0),
     "by design: ag_op_hardtanh rejects min_val > max_val (AG_ERR_INVALID_ARGUMENT)"),
    (("nn.functional.avg_pool2d",), lambda s: len(s.args) > 5 and s.args[5] is not None and s.args[5] < 0,
     "by design: ag_op_avg_pool2d rejects a negative divisor_override"),
]

# OpInfos whose second-order products are not compared (first order is), with the reason.
FIRST_ORDER_ONLY = {
    "linalg.det.singular": "second order at nearly singular matrices: PyTorch switches to an SVD formula below "
                           "|det| < 100 eps, ag keeps det A^-T (ill-conditioned there; exactly singular: 0)",
}


def largest_positive(u):
    """+-1 per column of u making its component of largest magnitude positive: ag's sign convention."""
    d = u.detach()
    if d.shape[-2] == 0:
        return torch.ones(d.shape[:-2] + (1, d.shape[-1]), dtype=d.dtype)
    sg = torch.sign(torch.gather(d, -2, d.abs().argmax(dim=-2, keepdim=True)))
    return torch.where(sg == 0, torch.ones_like(sg), sg)


# Eigen- and singular vectors are defined up to sign (LAPACK's choice is
# arbitrary): PyTorch's outputs are flipped to ag's convention (a constant
# factor, so PyTorch's gradients of the flipped outputs are ag's to
# compare). torch.svd's V becomes ag's Vh.
def _svd_signs(out, v_given):
    u, sv, v = out
    sg = largest_positive(u)
    v = v * sg if v_given else v * sg.transpose(-2, -1)
    return [u * sg, sv, v.transpose(-2, -1) if v_given else v]


NORMALIZE = {
    "linalg.eigh": lambda out: [out[0], out[1] * largest_positive(out[1])],
    "linalg.svd": lambda out: _svd_signs(out, False),
    "svd": lambda out: _svd_signs(out, True),
    "linalg.lstsq": lambda out: out[:1],  # the solution (ag computes no residuals, rank or singular values)
}


def full_name(op):
    return op.name + ("." + op.variant_test_name if op.variant_test_name else "")


def check_signature(fn, args, meta):
    """The adapter's args against ag's C parameters: count and kind (caught here, not at replay)."""
    params = [p for p in meta["params"] if p["direction"] == "in"]
    lengths = {p.get("length") for p in params if isinstance(p.get("length"), str)}
    params = [p for p in params if p["name"] not in lengths]
    if len(params) != len(args):
        raise RuntimeError("%s takes %d parameters, the adapter gave %d" % (fn, len(params), len(args)))
    for p, a in zip(params, args):
        t = p["type"]
        if t["kind"] == "handle" and t["base"] == "ag_tensor":
            want = ("TL",) if t["pointers"] == 2 else ("T", "NULL")
        elif t["kind"] == "scalar" and t["pointers"] == 1:
            want = ("A",)
        elif t["base"] in ("double", "float"):
            want = ("F",)
        else:
            want = ("I",)
        if a[0] not in want:
            raise RuntimeError("%s parameter %s: the adapter gave %s" % (fn, p["name"], a[0]))
        if a is NULL_ARRAY and not p.get("nullable"):
            raise RuntimeError("%s parameter %s is not nullable" % (fn, p["name"]))


class Writer:
    def __init__(self):
        self.parts = []

    def u8(self, v): self.parts.append(struct.pack("<B", v))
    def u32(self, v): self.parts.append(struct.pack("<I", v))
    def i32(self, v): self.parts.append(struct.pack("<i", v))
    def i64(self, v): self.parts.append(struct.pack("<q", v))
    def f64(self, v): self.parts.append(struct.pack("<d", v))

    def str(self, s):
        b = s.encode()
        self.u32(len(b))
        self.parts.append(b)

    def tensor(self, t, requires_grad=False):
        if t._is_zerotensor():  # PyTorch's lazy zeros have no storage to read
            t = torch.zeros(t.shape, dtype=t.dtype)
        t = t.detach().contiguous()
        code = {torch.float64: 0, torch.int64: 1, torch.bool: 2}[t.dtype]
        self.u8(code)
        self.u8(1 if requires_grad else 0)
        self.u8(t.dim())
        for d in t.shape:
            self.i64(d)
        self.parts.append(t.numpy().astype({0: "<f8", 1: "<i8", 2: "u1"}[code]).tobytes())

    def bytes(self):
        return b"".join(self.parts)


def describe(s):
    """A sample in a line: shapes of tensors, values of the rest."""
    def d(v):
        if isinstance(v, torch.Tensor):
            return "%s%s" % ({torch.float64: "f64", torch.int64: "i64", torch.bool: "bool"}.get(v.dtype, str(v.dtype)),
                             list(v.shape))
        if isinstance(v, (list, tuple)):
            return "(" + ", ".join(d(x) for x in v) + ")"
        return repr(v)
    parts = [d(s.input)] + [d(a) for a in s.args] + ["%s=%s" % (k, d(v)) for k, v in s.kwargs.items()]
    return ", ".join(parts)


def flat_outputs(r):
    if isinstance(r, torch.Tensor):
        return [r]
    return [x for x in r]


def reference(op, s, tensors, seed):
    """PyTorch's outputs, cotangents, gradients, second-order w and products."""
    out = flat_outputs(op(s.input, *s.args, **s.kwargs))
    if full_name(op) in NORMALIZE:
        out = NORMALIZE[full_name(op)](out)
    gen = torch.Generator().manual_seed(seed)
    rnd = lambda shape: torch.rand(shape, generator=gen, dtype=torch.float64) * 2 - 1  # noqa: E731
    diff = [t for t in tensors if t.requires_grad]
    cots = [rnd(o.shape) if o.requires_grad and o.dtype == torch.float64 else None for o in out]
    pairs = [(o, c) for o, c in zip(out, cots) if c is not None]
    grads, ws, second = [None] * len(diff), None, None
    if diff and pairs:
        grads = torch.autograd.grad([o for o, _ in pairs], diff, [c for _, c in pairs], create_graph=True,
                                    allow_unused=True)
        ws = [rnd(t.shape) for t in diff]
        terms = [(g * w).sum() for g, w in zip(grads, ws) if g is not None and g.requires_grad]
        if op.supports_gradgrad and full_name(op) not in FIRST_ORDER_ONLY:
            try:
                second = torch.autograd.grad([sum(terms[1:], terms[0])], diff, allow_unused=True) if terms \
                    else [None] * len(diff)
            except RuntimeError:
                second = None
    zeros = lambda g, t: torch.zeros_like(t) if g is None else g  # noqa: E731
    grads = [zeros(g, t) for g, t in zip(grads, diff)]
    second = [zeros(g, t) for g, t in zip(second, diff)] if second is not None else None
    return out, cots, grads, ws, second


def main():
    api = json.load(open(os.path.join(ROOT, "bindings", "ag-api.json")))
    meta = {f["name"]: f for f in api["functions"]}
    family = {o["function"]: o["family"] for o in api["ops"]}
    fixtures = defaultdict(list)  # family -> case bytes
    replayed, skipped, matched, per_op = Counter(), defaultdict(Counter), defaultdict(set), Counter()
    by_name = {full_name(op): op for op in op_db}
    for name in sorted(ADAPTERS):
        op = by_name.get(name)
        if op is None:
            raise SystemExit("no OpInfo named %s in this PyTorch" % name)
        # sample values are random (torch, and numpy or random in a few): the same fixtures on every run
        torch.manual_seed(0)
        random.seed(0)
        numpy.random.seed(0)
        samples = list(op.sample_inputs("cpu", torch.float64, requires_grad=True))
        step = max(1, math.ceil(len(samples) / MAX_SAMPLES))
        step += step > 1 and step % 2 == 0  # odd: samples often alternate (return_indices True/False)
        if step > 1:
            skipped[name]["beyond %d samples (every %d-th kept)" % (MAX_SAMPLES, step)] += len(samples) - len(
                samples[::step])
        for k, s in enumerate(samples[::step]):
            try:
                for names, test, reason in DIFFERENCES:
                    if name in names and test(s):
                        raise Skip(reason)
                fn, args = ADAPTERS[name](s)
            except Skip as e:
                skipped[name][str(e)] += 1
                continue
            if fn not in meta:
                raise SystemExit("%s: ag has no %s" % (name, fn))
            check_signature(fn, args, meta[fn])
            tensors, index = [], {}
            for a in args:
                for t in ([a[1]] if a[0] == "T" else a[1] if a[0] == "TL" else []):
                    if id(t) not in index:
                        index[id(t)] = len(tensors)
                        tensors.append(t)
            try:
                out, cots, grads, ws, second = reference(op, s, tensors, seed=1000 + k)
            except (RuntimeError, ValueError) as e:
                skipped[name]["PyTorch fails: %s" % str(e).split("\n")[0][:60]] += 1
                continue
            if any(o.dtype not in (torch.float64, torch.int64, torch.bool) for o in out):
                skipped[name]["output dtype"] += 1
                continue
            if name in FIRST_ORDER_ONLY:
                skipped[name]["second order not compared: " + FIRST_ORDER_ONLY[name]] += 1
            rtol, atol = LOOSE.get(name, (RTOL, ATOL))
            w = Writer()
            w.str(fn)
            w.str("%s sample %d: %s" % (name, k * step, describe(s)))
            w.f64(rtol)
            w.f64(atol)
            w.u8(1 if second is not None else 0)
            w.u32(len(tensors))
            for t in tensors:
                w.tensor(t, t.requires_grad and t.dtype == torch.float64)
            w.u32(len(args))
            for a in args:
                if a[0] == "T":
                    w.u8(0), w.u32(index[id(a[1])])
                elif a[0] == "NULL" or a is NULL_ARRAY:
                    w.u8(1)
                elif a[0] == "TL":
                    w.u8(2), w.u32(len(a[1]))
                    for t in a[1]:
                        w.u32(index[id(t)])
                elif a[0] == "A":
                    w.u8(3), w.u32(len(a[1]))
                    for v in a[1]:
                        w.i64(v)
                elif a[0] == "I":
                    w.u8(4), w.i64(a[1])
                elif a[0] == "F":
                    w.u8(5), w.f64(a[1])
            w.u32(len(out))
            for o, c in zip(out, cots):
                w.u8(c is not None)
                w.tensor(o)
                if c is not None:
                    w.tensor(c)
            diff = [t for t in tensors if t.requires_grad]
            for i in range(len(diff)):
                w.tensor(grads[i])
                if second is not None:
                    w.tensor(ws[i])
                    w.tensor(second[i])
            fixtures[family[fn]].append(w.bytes())
            replayed[name] += 1
            matched[fn[len("ag_op_"):]].add(name)
            per_op[fn[len("ag_op_"):]] += 1
    os.makedirs(os.path.join(HERE, "fixtures"), exist_ok=True)
    total = 0
    for fam, cases in sorted(fixtures.items()):
        path = os.path.join(HERE, "fixtures", fam.lower() + ".bin.gz")
        data = b"AGOPINFO" + struct.pack("<II", 1, len(cases)) + b"".join(cases)
        with open(path, "wb") as f:
            f.write(gzip.compress(data, 9, mtime=0))
        total += os.path.getsize(path)
    write_coverage(api, matched, per_op, skipped, total)
    print("%d samples replayed, %d skipped, %d ag ops covered; fixtures %.2f MB" % (
        sum(replayed.values()), sum(sum(c.values()) for c in skipped.values()), len(matched), total / 1e6))


def write_coverage(api, matched, replayed, skipped, total):
    """replayed: samples per ag op."""
    ops = [o["name"] for o in api["ops"]]
    lines = ["# OpInfo coverage (written by gen_opinfo.py; do not edit)", "",
             "PyTorch %s OpInfo samples (CPU, float64) replayed through ag: %d, skipped: %d; fixtures %.2f MB." % (
                 torch.__version__.split("+")[0], sum(replayed.values()),
                 sum(sum(c.values()) for c in skipped.values()), total / 1e6), "",
             "| ag op | OpInfo names | samples replayed |", "|---|---|---|"]
    for name in ops:
        if name in matched:
            srcs = sorted(matched[name])
            lines.append("| %s | %s | %d |" % (name, ", ".join(srcs), replayed[name]))
    lines += ["", "ag ops without OpInfo samples here: " + ", ".join(n for n in ops if n not in matched) + ".", "",
              "## Skipped samples", "", "| OpInfo | reason | count |", "|---|---|---|"]
    for name in sorted(skipped):
        for reason, n in sorted(skipped[name].items()):
            lines.append("| %s | %s | %d |" % (name, reason.replace("|", "/"), n))
    with open(os.path.join(HERE, "COVERAGE.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
