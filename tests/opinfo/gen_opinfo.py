#!/usr/bin/python3
"""Writes the opinfo fixtures: PyTorch's own OpInfo sample inputs for the ops ag
has, with PyTorch's outputs, first-order gradients and second-order products,
for test_opinfo.cc to replay through ag's C ABI (no PyTorch at test time).

Run with a Python that has PyTorch (Debian's python3-torch 1.13):
    /usr/bin/python3 tests/opinfo/gen_opinfo.py
It rewrites tests/opinfo/fixtures/<family>.bin.gz (one per ag op family of
bindings/ag-api.json) and tests/opinfo/COVERAGE.md (what was matched,
replayed and skipped, and why).

For every sample: the inputs, the op's outputs, the gradients of
sum(output * c) for seeded random c with respect to every float input that
requires grad, and where the op has a second derivative, the gradient of
sum(gradient * w) for seeded random w. The sample's args and kwargs become ag's
C parameters through ADAPTERS below (OpInfo name -> function); a sample an
adapter cannot express in ag's signature is skipped and counted with the reason.

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


class Skip(Exception):
    """A sample ag's signature cannot express; the message is the reason."""


# Argument constructors (the order of ag's C in-parameters, length parameters left out).
def T(t):
    if isinstance(t, (int, float)) and not isinstance(t, bool):
        return ("T", torch.tensor(float(t), dtype=torch.float64))  # a Python number operand: a constant
    if not isinstance(t, torch.Tensor):
        raise Skip("operand of type %s" % type(t).__name__)
    if t.dtype not in (torch.float64, torch.int64, torch.bool):
        raise Skip("dtype %s" % t.dtype)
    return ("T", t)


def NULL():
    return ("NULL",)


def A(v, n=None):
    """An int64 array; n: a fixed-size array (an int repeats, as PyTorch's _pair)."""
    if v is None:
        v = []
    if isinstance(v, int):
        v = [v] * (n or 1)
    v = [int(x) for x in v]
    if n and len(v) == 1:
        v = v * n
    if n and len(v) != n:
        raise Skip("%d values where ag takes %d" % (len(v), n))
    return ("A", v)


def I(v):
    if isinstance(v, torch.Tensor) or v is None:
        raise Skip("an integer given as %s" % ("a tensor" if v is not None else "None"))
    return ("I", int(v))


def F(v):
    if isinstance(v, torch.Tensor) or v is None:
        raise Skip("a number given as %s" % ("a tensor" if v is not None else "None"))
    return ("F", float(v))


def TL(ts):
    return ("TL", [T(t)[1] for t in ts])


def bind(s, names, defaults=None, drop=()):
    """sample args/kwargs as a dict by the PyTorch parameter names; unknown kwargs skip the sample."""
    args = list(s.args)
    if len(args) > len(names):
        raise Skip("%d positional args" % len(args))
    out = dict(defaults or {})
    out.update(zip(names, args))
    for k, v in s.kwargs.items():
        if k in drop:
            continue
        if k not in names:
            raise Skip("kwarg %s" % k)
        out[k] = v
    return out


def dims(d):
    if d is None:
        return A([])
    return A([d] if isinstance(d, int) else list(d))


def no_args(s):
    bind(s, [])
    return []


def reduction_arg(r):
    return I({"none": 0, "mean": 1, "sum": 2}[r])


# OpInfo name -> adapter(sample) -> (ag function, [args]). Raises Skip.
def unary(fn):
    return lambda s: (fn, [T(s.input)] + no_args(s))


def binary(fn):
    def f(s):
        b = bind(s, ["other"])
        if "other" not in b:
            raise Skip("no other operand")
        return fn, [T(s.input), T(b["other"])]
    return f


def scalar_kw(fn, names, defaults):
    def f(s):
        b = bind(s, names, defaults)
        return fn, [T(s.input)] + [F(b[n]) for n in names]
    return f


def reduce_dims(fn):
    def f(s):
        b = bind(s, ["dim", "keepdim"], {"dim": None, "keepdim": False})
        if "dim" not in s.kwargs and not s.args:  # sum(x), mean(x): the REDUCE_ALL op
            return fn.replace("_dims", ""), [T(s.input)]
        return fn, [T(s.input), dims(b["dim"]), I(b["keepdim"])]
    return f


def prod(s):
    b = bind(s, ["dim", "keepdim"], {"dim": None, "keepdim": False})
    return "ag_op_prod_dims", [T(s.input), dims(b["dim"]), I(b["keepdim"])]


def logsumexp(s):
    b = bind(s, ["dim", "keepdim"], {"keepdim": False})
    return "ag_op_logsumexp_dims", [T(s.input), dims(b["dim"]), I(b["keepdim"])]


def var_std(fn):
    def f(s):
        if s.args and isinstance(s.args[0], bool):  # var(x, unbiased)
            return fn, [T(s.input), A([]), I(0), F(1.0 if s.args[0] else 0.0)]
        b = bind(s, ["dim", "unbiased", "keepdim", "correction"], {"dim": None, "keepdim": False})
        corr = b.get("correction")
        if corr is None:
            corr = 0.0 if b.get("unbiased") is False else 1.0
        return fn, [T(s.input), dims(b["dim"]), I(b["keepdim"]), F(corr)]
    return f


def vector_norm(s):
    b = bind(s, ["ord", "dim", "keepdim"], {"ord": 2, "dim": None, "keepdim": False})
    return "ag_op_norm_dims", [T(s.input), dims(b["dim"]), I(b["keepdim"]), F(b["ord"])]


def along_dim(fn):
    def f(s):
        b = bind(s, ["dim"])
        return fn, [T(s.input), I(b["dim"])]
    return f


def select_dim(fn):
    def f(s):
        b = bind(s, ["dim", "keepdim"], {"keepdim": False})
        if "dim" not in b:
            raise Skip("no dim")
        return fn, [T(s.input), I(b["dim"]), I(b["keepdim"])]
    return f


def gelu(s):
    b = bind(s, ["approximate"], {"approximate": "none"})
    return ("ag_op_gelu" if b["approximate"] == "none" else "ag_op_gelu_tanh"), [T(s.input)]


def clamp(s):
    b = bind(s, ["min", "max"], {"min": None, "max": None})
    if isinstance(b["min"], torch.Tensor) or isinstance(b["max"], torch.Tensor):
        raise Skip("tensor bounds (ag's clamp takes numbers)")
    nan = float("nan")
    return "ag_op_clamp", [T(s.input), F(nan if b["min"] is None else b["min"]),
                           F(nan if b["max"] is None else b["max"])]


def losses(fn, extra=()):
    def f(s):
        names = ["target", "reduction"] + [e for e, _ in extra]
        b = bind(s, names, dict([("reduction", "mean")] + list(extra)), drop=("size_average", "reduce"))
        return fn, [T(s.input), T(b["target"]), reduction_arg(b["reduction"])] + [F(b[e]) for e, _ in extra]
    return f


def cross_entropy(s):
    b = bind(s, ["target", "weight", "reduction", "ignore_index", "label_smoothing"],
             {"weight": None, "reduction": "mean", "ignore_index": -100, "label_smoothing": 0.0})
    if b["weight"] is not None:
        raise Skip("class weights")
    return "ag_op_cross_entropy", [T(s.input), T(b["target"]), reduction_arg(b["reduction"]),
                                   I(b["ignore_index"]), F(b["label_smoothing"])]


def nll_loss(s):
    b = bind(s, ["target", "weight", "reduction", "ignore_index"],
             {"weight": None, "reduction": "mean", "ignore_index": -100})
    if b["weight"] is not None:
        raise Skip("class weights")
    return "ag_op_nll_loss", [T(s.input), T(b["target"]), reduction_arg(b["reduction"]), I(b["ignore_index"])]


def bce(s):
    b = bind(s, ["target", "weight", "reduction"], {"weight": None, "reduction": "mean"})
    if b["weight"] is not None:
        raise Skip("weights")
    return "ag_op_binary_cross_entropy", [T(s.input), T(b["target"]), reduction_arg(b["reduction"])]


def bce_logits(s):
    b = bind(s, ["target", "weight", "reduction", "pos_weight"],
             {"weight": None, "reduction": "mean", "pos_weight": None})
    if b["weight"] is not None:
        raise Skip("weights")
    pw = NULL() if b["pos_weight"] is None else T(b["pos_weight"])
    return "ag_op_binary_cross_entropy_with_logits", [T(s.input), T(b["target"]), pw, reduction_arg(b["reduction"])]


def shaped(fn, name="shape"):
    def f(s):
        b = bind(s, [name])
        shape = b[name]
        return fn, [T(s.input), A(list(shape) if not isinstance(shape, int) else [shape])]
    return f


def where(s):
    b = bind(s, ["condition", "other"])
    return "ag_op_where", [T(b["condition"]), T(s.input), T(b["other"])]


def masked_fill(s):
    b = bind(s, ["mask", "value"])
    return "ag_op_masked_fill", [T(s.input), T(b["mask"]), F(b["value"])]


def lerp(s):
    b = bind(s, ["end", "weight"])
    return "ag_op_lerp", [T(s.input), T(b["end"]), T(b["weight"])]


def linear(s):
    b = bind(s, ["weight", "bias"], {"bias": None})
    return "ag_op_linear", [T(s.input), T(b["weight"]), NULL() if b["bias"] is None else T(b["bias"])]


def two_tensors(fn, name):
    def f(s):
        b = bind(s, [name])
        return fn, [T(s.input), T(b[name])]
    return f


def index_select(s):
    b = bind(s, ["dim", "index"])
    return "ag_op_index_select", [T(s.input), I(b["dim"]), T(b["index"])]


def gather(s):
    b = bind(s, ["dim", "index"], drop=("sparse_grad",))
    return "ag_op_gather", [T(s.input), I(b["dim"]), T(b["index"])]


def flatten(s):
    b = bind(s, ["start_dim", "end_dim"], {"start_dim": 0, "end_dim": -1})
    return "ag_op_flatten", [T(s.input), I(b["start_dim"]), I(b["end_dim"])]


def transpose(s):
    b = bind(s, ["dim0", "dim1"])
    return "ag_op_transpose", [T(s.input), I(b["dim0"]), I(b["dim1"])]


def unsqueeze(s):
    b = bind(s, ["dim"])
    return "ag_op_unsqueeze", [T(s.input), I(b["dim"])]


def squeeze(s):
    b = bind(s, ["dim"], {"dim": None})
    return "ag_op_squeeze", [T(s.input), dims(b["dim"])]


def flip(s):
    b = bind(s, ["dims"])
    return "ag_op_flip", [T(s.input), dims(b["dims"])]


def narrow(s):
    b = bind(s, ["dim", "start", "length"])
    return "ag_op_narrow", [T(s.input), I(b["dim"]), I(b["start"]), I(b["length"])]


def cat_like(fn):
    def f(s):
        b = bind(s, ["dim"], {"dim": 0})
        return fn, [TL(s.input), I(b["dim"])]
    return f


def max_pool2d(s):
    b = bind(s, ["kernel_size", "stride", "padding", "dilation", "ceil_mode", "return_indices"],
             {"stride": None, "padding": 0, "dilation": 1, "ceil_mode": False, "return_indices": False})
    fn = "ag_op_max_pool2d_with_indices" if b["return_indices"] else "ag_op_max_pool2d"
    stride = NULL_ARRAY if b["stride"] in (None, [], ()) else A(b["stride"], 2)
    return fn, [T(s.input), A(b["kernel_size"], 2), stride, A(b["padding"], 2), A(b["dilation"], 2),
                I(b["ceil_mode"])]


def avg_pool2d(s):
    b = bind(s, ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"],
             {"stride": None, "padding": 0, "ceil_mode": False, "count_include_pad": True, "divisor_override": None})
    stride = NULL_ARRAY if b["stride"] in (None, [], ()) else A(b["stride"], 2)
    return "ag_op_avg_pool2d", [T(s.input), A(b["kernel_size"], 2), stride, A(b["padding"], 2), I(b["ceil_mode"]),
                                I(b["count_include_pad"]), I(b["divisor_override"] or 0)]


def adaptive_avg_pool2d(s):
    b = bind(s, ["output_size"])
    o = b["output_size"]
    if o is None or (not isinstance(o, int) and None in o):
        raise Skip("output size None")
    return "ag_op_adaptive_avg_pool2d", [T(s.input), A(o, 2)]


def one(v):
    """An int64 parameter given as an int or a 1-tuple (conv1d's stride, padding, dilation)."""
    if not isinstance(v, int):
        if len(v) != 1:
            raise Skip("%d values where ag takes 1" % len(v))
        v = v[0]
    return I(v)


def conv(fn, n):
    def f(s):
        b = bind(s, ["weight", "bias", "stride", "padding", "dilation", "groups"],
                 {"bias": None, "stride": 1, "padding": 0, "dilation": 1, "groups": 1})
        if isinstance(b["padding"], str):
            raise Skip("padding %r" % b["padding"])
        arr = (lambda v: A(v, 2)) if n == 2 else one
        return fn, [T(s.input), T(b["weight"]), NULL() if b["bias"] is None else T(b["bias"]), arr(b["stride"]),
                    arr(b["padding"]), arr(b["dilation"]), I(b["groups"])]
    return f


# ---- linear algebra: structure, products, decompositions ----
def diagonal_like(fn, defaults):
    def f(s):
        b = bind(s, ["offset", "dim1", "dim2"], defaults)
        return fn, [T(s.input), I(b["offset"]), I(b["dim1"]), I(b["dim2"])]
    return f


def int_attr(fn, name, default=None):
    def f(s):
        b = bind(s, [name], {} if default is None else {name: default})
        return fn, [T(s.input), I(b[name])]
    return f


# ---- shape and indexing added in 0.2 ----
def ints(v):
    return list(v) if isinstance(v, (list, tuple)) else [v]


def roll(s):
    b = bind(s, ["shifts", "dims"], {"dims": None})
    return "ag_op_roll", [T(s.input), A(ints(b["shifts"])), A([] if b["dims"] is None else ints(b["dims"]))]


def rot90(s):
    b = bind(s, ["k", "dims"], {"k": 1, "dims": (0, 1)})
    return "ag_op_rot90", [T(s.input), I(b["k"]), A(list(b["dims"]))]


def tile(s):
    b = bind(s, ["dims"])
    return "ag_op_tile", [T(s.input), A(ints(b["dims"]))]


def repeat_interleave(s):
    b = bind(s, ["repeats", "dim", "output_size"], {"dim": None, "output_size": None})
    if b["dim"] is None:
        raise Skip("dim None (ag needs a dim: flatten first)")
    if isinstance(b["repeats"], torch.Tensor):
        return "ag_op_repeat_interleave_tensor", [T(s.input), T(b["repeats"]), I(b["dim"])]
    return "ag_op_repeat_interleave", [T(s.input), I(b["repeats"]), I(b["dim"])]


def movedim(s):
    b = bind(s, ["source", "destination"])
    if not isinstance(b["source"], int):
        if len(b["source"]) != 1:
            raise Skip("several dims (ag's movedim moves one; use permute)")
        b = {"source": b["source"][0], "destination": b["destination"][0]}
    return "ag_op_movedim", [T(s.input), I(b["source"]), I(b["destination"])]


def diff(s):
    b = bind(s, ["n", "dim", "prepend", "append"], {"n": 1, "dim": -1, "prepend": None, "append": None})
    opt = lambda t: NULL() if t is None else T(t)  # noqa: E731
    return "ag_op_diff", [T(s.input), I(b["n"]), I(b["dim"]), opt(b["prepend"]), opt(b["append"])]


def scatter(s):
    b = bind(s, ["dim", "index", "src", "value", "reduce"], {"reduce": None})
    if b["reduce"] is not None:
        raise Skip("reduce argument (see scatter_reduce)")
    if "value" in b or not isinstance(b.get("src"), torch.Tensor):
        v = b.get("value", b.get("src"))
        return "ag_op_scatter_value", [T(s.input), I(b["dim"]), T(b["index"]), F(v)]
    return "ag_op_scatter", [T(s.input), I(b["dim"]), T(b["index"]), T(b["src"])]


def scatter_reduce(s):
    b = bind(s, ["dim", "index", "src", "reduce", "include_self"], {"include_self": True})
    r = {"sum": 0, "prod": 1, "mean": 2, "amax": 3, "amin": 4}[b["reduce"]]
    return "ag_op_scatter_reduce", [T(s.input), I(b["dim"]), T(b["index"]), T(b["src"]), I(r), I(b["include_self"])]


def index_put(s):
    b = bind(s, ["indices", "values", "accumulate"], {"accumulate": False})
    if any(t.dtype == torch.bool for t in b["indices"]):
        raise Skip("bool mask indices (ag takes i64 positions)")
    return "ag_op_index_put", [T(s.input), TL(b["indices"]), T(b["values"]), I(b["accumulate"])]


def index_copy(s):
    b = bind(s, ["dim", "index", "source"])
    return "ag_op_index_copy", [T(s.input), I(b["dim"]), T(b["index"]), T(b["source"])]


def index_fill(s):
    b = bind(s, ["dim", "index", "value"])
    return "ag_op_index_fill", [T(s.input), I(b["dim"]), T(b["index"]), F(b["value"])]


def masked_scatter(s):
    b = bind(s, ["mask", "source"])
    return "ag_op_masked_scatter", [T(s.input), T(b["mask"]), T(b["source"])]


def masked_select(s):
    b = bind(s, ["mask"])
    return "ag_op_masked_select", [T(s.input), T(b["mask"])]


def take_along_dim(s):
    b = bind(s, ["indices", "dim"], {"dim": None})
    if b["dim"] is None:
        raise Skip("dim None (ag needs a dim: flatten first)")
    return "ag_op_take_along_dim", [T(s.input), T(b["indices"]), I(b["dim"])]


ADAPTERS_SHAPE_INDEX = {
    "roll": roll,
    "rot90": rot90,
    "tile": tile,
    "repeat_interleave": repeat_interleave,
    "movedim": movedim,
    "broadcast_to": shaped("ag_op_broadcast_to", "size"),
    "diff": diff,
    "scatter": scatter,
    **{"scatter_reduce." + r: scatter_reduce for r in ["sum", "prod", "mean", "amax", "amin"]},
    "index_put": index_put,
    "index_copy": index_copy,
    "index_fill": index_fill,
    "masked_scatter": masked_scatter,
    "masked_select": masked_select,
    "take_along_dim": take_along_dim,
}


# ---- nn added in 0.2 ----
def conv_transpose(fn, n):
    def f(s):
        b = bind(s, ["weight", "bias", "stride", "padding", "output_padding", "groups", "dilation"],
                 {"bias": None, "stride": 1, "padding": 0, "output_padding": 0, "groups": 1, "dilation": 1})
        arr = (lambda v: A(v, 2)) if n == 2 else one
        bias = NULL() if b["bias"] is None else T(b["bias"])
        return fn, [T(s.input), T(b["weight"]), bias, arr(b["stride"]), arr(b["padding"]), arr(b["output_padding"]),
                    I(b["groups"]), arr(b["dilation"])]
    return f


def interpolate(s):
    b = bind(s, ["size", "scale_factor", "mode", "align_corners", "recompute_scale_factor", "antialias"],
             {"size": None, "scale_factor": None, "mode": "nearest", "align_corners": None,
              "recompute_scale_factor": None, "antialias": False})
    if b["recompute_scale_factor"] or b["antialias"]:
        raise Skip("recompute_scale_factor or antialias")
    sf = b["scale_factor"]
    if isinstance(sf, (list, tuple)):
        if len(set(sf)) != 1:
            raise Skip("a scale factor per dim")
        sf = sf[0]
    mode = {"nearest": 0, "linear": 1, "bilinear": 2}[b["mode"]]
    size = A([]) if b["size"] is None else A(ints(b["size"]))
    return "ag_op_interpolate", [T(s.input), size, F(sf or 0.0), I(mode), I(bool(b["align_corners"]))]


def pixel(fn, name):
    def f(s):
        b = bind(s, [name])
        return fn, [T(s.input), I(b[name])]
    return f


def add_product(fn, names):
    def f(s):
        b = bind(s, names + ["beta", "alpha"], {"beta": 1, "alpha": 1})
        return fn, [T(s.input), T(b[names[0]]), T(b[names[1]]), F(b["beta"]), F(b["alpha"])]
    return f


def cross(s):
    b = bind(s, ["other", "dim"], {"dim": -1})
    return "ag_op_cross", [T(s.input), T(b["other"]), I(b["dim"])]


def tensordot(s):
    b = bind(s, ["other", "dims"], {"dims": 2})
    d = b["dims"]
    if isinstance(d, int):
        da, db = list(range(s.input.dim() - d, s.input.dim())), list(range(d))
    else:
        da, db = d
    return "ag_op_tensordot", [T(s.input), T(b["other"]), A(da), A(db)]


def cholesky(s):
    b = bind(s, ["upper"], {"upper": False}, drop=("out",))
    return "ag_op_cholesky", [T(s.input), I(b["upper"])]


def cholesky_solve(s):
    b = bind(s, ["input2", "upper"], {"upper": False})
    return "ag_op_cholesky_solve", [T(s.input), T(b["input2"]), I(b["upper"])]


def solve_triangular(s):
    b = bind(s, ["B", "upper", "left", "unitriangular"], {"left": True, "unitriangular": False})
    return "ag_op_solve_triangular", [T(s.input), T(b["B"]), I(b["upper"]), I(b["left"]), I(b["unitriangular"])]


def linalg_solve(s):
    b = bind(s, ["B", "left"], {"left": True})
    if not b["left"]:
        raise Skip("left=False (ag solves A X = B)")
    return "ag_op_solve", [T(s.input), T(b["B"])]


LINALG_ADAPTERS = {
    "trace": unary("ag_op_trace"),
    "diagonal": diagonal_like("ag_op_diagonal", {"offset": 0, "dim1": 0, "dim2": 1}),
    "diag_embed": diagonal_like("ag_op_diag_embed", {"offset": 0, "dim1": -2, "dim2": -1}),
    "diag": int_attr("ag_op_diag", "diagonal", 0),
    "tril": int_attr("ag_op_tril", "diagonal", 0),
    "triu": int_attr("ag_op_triu", "diagonal", 0),
    "mm": two_tensors("ag_op_mm", "mat2"),
    "mv": two_tensors("ag_op_mv", "vec"),
    "addmm": add_product("ag_op_addmm", ["mat1", "mat2"]),
    "addmm.decomposed": add_product("ag_op_addmm", ["mat1", "mat2"]),
    "addmv": add_product("ag_op_addmv", ["mat", "vec"]),
    "baddbmm": add_product("ag_op_baddbmm", ["batch1", "batch2"]),
    "addbmm": add_product("ag_op_addbmm", ["batch1", "batch2"]),
    "linalg.cross": cross,
    "kron": two_tensors("ag_op_kron", "other"),
    "tensordot": tensordot,
    "linalg.matrix_power": int_attr("ag_op_matrix_power", "n"),
    "linalg.inv": unary("ag_op_inv"),
    "linalg.det": unary("ag_op_det"),
    "linalg.det.singular": unary("ag_op_det"),
    "linalg.slogdet": unary("ag_op_slogdet"),
    "linalg.solve": linalg_solve,
    "linalg.cholesky": cholesky,
    "cholesky_solve": cholesky_solve,
    "linalg.solve_triangular": solve_triangular,
}
# ---- adapters of the ops added in 0.2: elementwise math and activations ----
def polygamma(s):
    if s.args:
        n, rest = s.args[0], s.args[1:]
    else:
        n, rest = s.kwargs.get("n"), ()
    if rest or set(s.kwargs) - {"n"}:
        raise Skip("extra arguments")
    return "ag_op_polygamma", [I(n), T(s.input)]


def logit(s):
    b = bind(s, ["eps"], {"eps": None})
    return "ag_op_logit", [T(s.input), F(-1.0 if b["eps"] is None else b["eps"])]


def nan_to_num(s):
    b = bind(s, ["nan", "posinf", "neginf"], {"nan": 0.0, "posinf": None, "neginf": None})
    nan = float("nan")
    return "ag_op_nan_to_num", [T(s.input), F(b["nan"]), F(nan if b["posinf"] is None else b["posinf"]),
                                F(nan if b["neginf"] is None else b["neginf"])]


def glu(s):
    b = bind(s, ["dim"], {"dim": -1})
    return "ag_op_glu", [T(s.input), I(b["dim"])]


def prelu(s):
    b = bind(s, ["weight"])
    return "ag_op_prelu", [T(s.input), T(b["weight"])]


def addc(fn):
    def f(s):
        b = bind(s, ["tensor1", "tensor2", "value"], {"value": 1.0})
        return fn, [T(s.input), T(b["tensor1"]), T(b["tensor2"]), F(b["value"])]
    return f

def max_pool1d(s):
    b = bind(s, ["kernel_size", "stride", "padding", "dilation", "ceil_mode", "return_indices"],
             {"stride": None, "padding": 0, "dilation": 1, "ceil_mode": False, "return_indices": False})
    if b["return_indices"]:
        raise Skip("return_indices")
    stride = 0 if b["stride"] in (None, [], ()) else b["stride"]
    return "ag_op_max_pool1d", [T(s.input), one(b["kernel_size"]), one(stride), one(b["padding"]),
                                one(b["dilation"]), I(b["ceil_mode"])]


def avg_pool1d(s):
    b = bind(s, ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"],
             {"stride": None, "padding": 0, "ceil_mode": False, "count_include_pad": True})
    stride = 0 if b["stride"] in (None, [], ()) else b["stride"]
    return "ag_op_avg_pool1d", [T(s.input), one(b["kernel_size"]), one(stride), one(b["padding"]),
                                I(b["ceil_mode"]), I(b["count_include_pad"])]


def adaptive_max_pool2d(s):
    b = bind(s, ["output_size", "return_indices"], {"return_indices": False})
    o = b["output_size"]
    if b["return_indices"]:
        raise Skip("return_indices")
    if o is None or (not isinstance(o, int) and None in o):
        raise Skip("output size None")
    return "ag_op_adaptive_max_pool2d", [T(s.input), A(o, 2)]


def instance_norm(s):
    b = bind(s, ["running_mean", "running_var", "weight", "bias", "use_input_stats", "momentum", "eps"],
             {"running_mean": None, "running_var": None, "weight": None, "bias": None, "use_input_stats": True,
              "momentum": 0.1, "eps": 1e-5})
    opt = lambda t: NULL() if t is None else T(t)  # noqa: E731
    return "ag_op_instance_norm", [T(s.input), opt(b["running_mean"]), opt(b["running_var"]), opt(b["weight"]),
                                   opt(b["bias"]), I(b["use_input_stats"]), F(b["momentum"]), F(b["eps"])]


def local_response_norm(s):
    b = bind(s, ["size", "alpha", "beta", "k"], {"alpha": 1e-4, "beta": 0.75, "k": 1.0})
    return "ag_op_local_response_norm", [T(s.input), I(b["size"]), F(b["alpha"]), F(b["beta"]), F(b["k"])]


def kl_div(s):
    b = bind(s, ["target", "reduction", "log_target"], {"reduction": "mean", "log_target": False},
             drop=("size_average", "reduce"))
    if b["reduction"] == "batchmean":
        raise Skip("reduction batchmean (ag: sum / batch size)")
    return "ag_op_kl_div", [T(s.input), T(b["target"]), reduction_arg(b["reduction"]), I(b["log_target"])]


def poisson_nll_loss(s):
    b = bind(s, ["target", "log_input", "full", "eps", "reduction"],
             {"log_input": True, "full": False, "eps": 1e-8, "reduction": "mean"}, drop=("size_average", "reduce"))
    return "ag_op_poisson_nll_loss", [T(s.input), T(b["target"]), I(b["log_input"]), I(b["full"]), F(b["eps"]),
                                      reduction_arg(b["reduction"])]


def gaussian_nll_loss(s):
    b = bind(s, ["target", "var", "full", "eps", "reduction"], {"full": False, "eps": 1e-6, "reduction": "mean"})
    return "ag_op_gaussian_nll_loss", [T(s.input), T(b["target"]), T(b["var"]), I(b["full"]), F(b["eps"]),
                                       reduction_arg(b["reduction"])]


def pair_loss(fn):
    def f(s):
        b = bind(s, ["input2", "target", "margin", "reduction"], {"margin": 0.0, "reduction": "mean"},
                 drop=("size_average", "reduce"))
        return fn, [T(s.input), T(b["input2"]), T(b["target"]), F(b["margin"]), reduction_arg(b["reduction"])]
    return f


def triplet_margin_loss(s):
    b = bind(s, ["positive", "negative", "margin", "p", "eps", "swap", "reduction"],
             {"margin": 1.0, "p": 2.0, "eps": 1e-6, "swap": False, "reduction": "mean"},
             drop=("size_average", "reduce"))
    return "ag_op_triplet_margin_loss", [T(s.input), T(b["positive"]), T(b["negative"]), F(b["margin"]), F(b["p"]),
                                         F(b["eps"]), I(b["swap"]), reduction_arg(b["reduction"])]


ADAPTERS_NN_MORE = {
    "nn.functional.conv_transpose1d": conv_transpose("ag_op_conv_transpose1d", 1),
    "nn.functional.conv_transpose2d": conv_transpose("ag_op_conv_transpose2d", 2),
    **{"nn.functional.interpolate." + m: interpolate for m in ["nearest", "linear", "bilinear"]},
    "nn.functional.pixel_shuffle": pixel("ag_op_pixel_shuffle", "upscale_factor"),
    "nn.functional.pixel_unshuffle": pixel("ag_op_pixel_unshuffle", "downscale_factor"),
    "nn.functional.max_pool1d": max_pool1d,
    "nn.functional.avg_pool1d": avg_pool1d,
    "nn.functional.adaptive_max_pool2d": adaptive_max_pool2d,
    "nn.functional.instance_norm": instance_norm,
    "nn.functional.local_response_norm": local_response_norm,
    "nn.functional.kl_div": kl_div,
    "nn.functional.poisson_nll_loss": poisson_nll_loss,
    "nn.functional.gaussian_nll_loss": gaussian_nll_loss,
    "nn.functional.margin_ranking_loss": pair_loss("ag_op_margin_ranking_loss"),
    "nn.functional.cosine_embedding_loss": pair_loss("ag_op_cosine_embedding_loss"),
    "nn.functional.triplet_margin_loss": triplet_margin_loss,
}


# reductions, scans, sorting and distances added in 0.2
def all_dims(fn):
    def f(s):
        b = bind(s, ["dim", "keepdim"], {"dim": None, "keepdim": False})
        return fn, [T(s.input), dims(b["dim"]), I(b["keepdim"])]
    return f


def median_like(fn):
    def f(s):
        if not s.args and "dim" not in s.kwargs:
            return fn, [T(s.input)] + no_args(s)
        return select_dim(fn + "_dim")(s)
    return f


def dist(s):
    b = bind(s, ["other", "p"], {"p": 2.0})
    return "ag_op_dist", [T(s.input), T(b["other"]), F(b["p"])]


def cdist(s):
    b = bind(s, ["x2", "p", "compute_mode"], {"p": 2.0, "compute_mode": "use_mm_for_euclid_dist_if_necessary"})
    rows = max(s.input.shape[-2], b["x2"].shape[-2])
    mm = {"use_mm_for_euclid_dist": True, "donot_use_mm_for_euclid_dist": False}.get(b["compute_mode"], rows > 25)
    if b["p"] == 2 and mm != (rows > 25):
        raise Skip("compute_mode %s (ag follows the default: the matrix product above 25 rows)" % b["compute_mode"])
    return "ag_op_cdist", [T(s.input), T(b["x2"]), F(b["p"])]


def cosine_similarity(s):
    b = bind(s, ["x2", "dim", "eps"], {"dim": 1, "eps": 1e-8})
    return "ag_op_cosine_similarity", [T(s.input), T(b["x2"]), I(b["dim"]), F(b["eps"])]


def normalize(s):
    b = bind(s, ["p", "dim", "eps"], {"p": 2.0, "dim": 1, "eps": 1e-12})
    return "ag_op_normalize", [T(s.input), F(b["p"]), I(b["dim"]), F(b["eps"])]


def sort(s):
    b = bind(s, ["dim", "descending", "stable"], {"dim": -1, "descending": False, "stable": False})
    return "ag_op_sort", [T(s.input), I(b["dim"]), I(bool(b["descending"])), I(bool(b["stable"]))]


def topk(s):
    b = bind(s, ["k", "dim", "largest", "sorted"], {"dim": -1, "largest": True, "sorted": True})
    return "ag_op_topk", [T(s.input), I(b["k"]), I(b["dim"]), I(b["largest"]), I(b["sorted"])]


def kthvalue(s):
    b = bind(s, ["k", "dim", "keepdim"], {"dim": -1, "keepdim": False})
    return "ag_op_kthvalue", [T(s.input), I(b["k"]), I(b["dim"]), I(b["keepdim"])]


QUANTILE_MODES = {"linear": 0, "lower": 1, "higher": 2, "midpoint": 3, "nearest": 4}


def quantile(fn):
    def f(s):
        b = bind(s, ["q", "dim", "keepdim", "interpolation"], {"dim": None, "keepdim": False,
                                                              "interpolation": "linear"})
        q = b["q"].detach() if isinstance(b["q"], torch.Tensor) else b["q"]
        return fn, [T(s.input), T(q), dims(b["dim"]), I(b["keepdim"]), I(QUANTILE_MODES[b["interpolation"]])]
    return f


def pairwise_distance(s):
    b = bind(s, ["x2", "p", "eps", "keepdim"], {"p": 2.0, "eps": 1e-6, "keepdim": False})
    return "ag_op_pairwise_distance", [T(s.input), T(b["x2"]), F(b["p"]), F(b["eps"]), I(b["keepdim"])]


def pdist(s):
    b = bind(s, ["p"], {"p": 2.0})
    return "ag_op_pdist", [T(s.input), F(b["p"])]


ADAPTERS_REDUCE_MORE = {
    **{n: all_dims("ag_op_" + n) for n in ["amax", "amin", "nansum", "nanmean"]},
    "var_mean": var_std("ag_op_var_mean"),
    "std_mean": var_std("ag_op_std_mean"),
    "logcumsumexp": along_dim("ag_op_logcumsumexp"),
    "cummax": along_dim("ag_op_cummax"),
    "cummin": along_dim("ag_op_cummin"),
    "dist": dist,
    "cdist": cdist,
    "nn.functional.cosine_similarity": cosine_similarity,
    "nn.functional.normalize": normalize,
    "sort": sort,
    "msort": unary("ag_op_msort"),
    "topk": topk,
    "kthvalue": kthvalue,
    "median": median_like("ag_op_median"),
    "nanmedian": median_like("ag_op_nanmedian"),
    "quantile": quantile("ag_op_quantile"),
    "nanquantile": quantile("ag_op_nanquantile"),
    "nn.functional.pairwise_distance": pairwise_distance,
    "nn.functional.pdist": pdist,
}

# ---- adapters of linear algebra round 2: eigh, svd, qr, matrix norms, pinv, cond ----
NORM_CODES = {"fro": 1000000.0, "nuc": 1000001.0}  # AG_NORM_FRO, AG_NORM_NUC


def ord_arg(v, none=float("nan")):
    if v is None:
        return F(none)
    return F(NORM_CODES[v]) if isinstance(v, str) else F(v)


def eigh_like(fn):
    def f(s):
        b = bind(s, ["UPLO"], {"UPLO": "L"})
        return fn, [T(s.input), I(b["UPLO"] == "U")]
    return f


def square_or_thin(s, full):
    if full and s.input.shape[-1] != s.input.shape[-2]:
        raise Skip("full_matrices of a non-square matrix (ag computes the thin SVD)")


def linalg_svd(s):
    b = bind(s, ["full_matrices", "driver"], {"full_matrices": True, "driver": None})
    square_or_thin(s, b["full_matrices"])
    return "ag_op_svd", [T(s.input), I(b["full_matrices"])]


def svd(s):
    b = bind(s, ["some", "compute_uv"], {"some": True, "compute_uv": True})
    if not b["compute_uv"]:
        raise Skip("compute_uv=False (zero-filled U and V)")
    square_or_thin(s, not b["some"])
    return "ag_op_svd", [T(s.input), I(not b["some"])]


def svdvals(s):
    bind(s, ["driver"])
    return "ag_op_svdvals", [T(s.input)]


def linalg_qr(s):
    b = bind(s, ["mode"], {"mode": "reduced"})
    return "ag_op_qr", [T(s.input), I({"reduced": 0, "complete": 1, "r": 2}[b["mode"]])]


def qr(s):
    b = bind(s, ["some"], {"some": True})
    return "ag_op_qr", [T(s.input), I(0 if b["some"] else 1)]


def matrix_norm(s):
    b = bind(s, ["ord", "dim", "keepdim"], {"ord": "fro", "dim": (-2, -1), "keepdim": False})
    return "ag_op_matrix_norm", [T(s.input), dims(b["dim"]), I(b["keepdim"]), ord_arg(b["ord"])]


def linalg_norm(s):
    b = bind(s, ["ord", "dim", "keepdim"], {"ord": None, "dim": None, "keepdim": False})
    return "ag_op_linalg_norm", [T(s.input), dims(b["dim"]), I(b["keepdim"]), ord_arg(b["ord"])]


def torch_norm(s):
    """torch.norm: 'nuc' a matrix norm; 'fro' and numbers vector norms over dim (all elements for None)."""
    b = bind(s, ["p", "dim", "keepdim"], {"p": "fro", "dim": None, "keepdim": False})
    if b["p"] == "nuc":
        return "ag_op_matrix_norm", [T(s.input), dims(b["dim"]), I(b["keepdim"]), ord_arg("nuc")]
    return "ag_op_norm_dims", [T(s.input), dims(b["dim"]), I(b["keepdim"]), F(2.0 if b["p"] == "fro" else b["p"])]


def pinv(s):
    b = bind(s, ["rcond", "hermitian", "atol", "rtol"], {"rcond": None, "hermitian": False, "atol": None, "rtol": None})
    rtol = b["rtol"] if b["rcond"] is None else b["rcond"]
    return "ag_op_pinv", [T(s.input), ord_arg(b["atol"]), ord_arg(rtol), I(b["hermitian"])]


def pinverse(s):
    b = bind(s, ["rcond"], {"rcond": 1e-15})
    return "ag_op_pinv", [T(s.input), F(0.0), F(b["rcond"]), I(0)]


def cond(s):
    b = bind(s, ["p"], {"p": None})
    return "ag_op_cond", [T(s.input), ord_arg(b["p"])]


ADAPTERS_LINALG2 = {
    "linalg.eigh": eigh_like("ag_op_eigh"),
    "linalg.eigvalsh": eigh_like("ag_op_eigvalsh"),
    "linalg.svd": linalg_svd,
    "svd": svd,
    "linalg.svdvals": svdvals,
    "linalg.qr": linalg_qr,
    "qr": qr,
    "linalg.matrix_norm": matrix_norm,
    "linalg.norm": linalg_norm,
    "norm": torch_norm,
    "norm.fro": torch_norm,
    "norm.nuc": torch_norm,
    "norm.inf": torch_norm,
    "linalg.pinv": pinv,
    "linalg.pinv.singular": pinv,
    "linalg.pinv.hermitian": pinv,
    "pinverse": pinverse,
    "linalg.cond": cond,
}


# last of the op-coverage list: lstsq, matrix_exp
def lstsq(s):
    b = bind(s, ["other", "rcond", "driver"], {"rcond": None, "driver": None})
    if b["rcond"] is not None:
        raise Skip("rcond (ag assumes full rank)")
    return "ag_op_lstsq", [T(s.input), T(b["other"])]


ADAPTERS_LAST = {
    "linalg.lstsq": lstsq,  # every driver: the same solution for full-rank A
    "linalg.lstsq.grad_oriented": lstsq,
    "matrix_exp": unary("ag_op_matrix_exp"),  # also torch.linalg.matrix_exp
}


# last of the op-coverage list: embedding_bag, ctc_loss
def embedding_bag(s):
    # the OpInfo calls embedding_bag(idx, weight, ...) with weight as the sample's input
    b = bind(s, ["input", "offsets", "max_norm", "norm_type", "scale_grad_by_freq", "mode", "sparse",
                 "per_sample_weights", "include_last_offset", "padding_idx"],
             {"offsets": None, "max_norm": None, "scale_grad_by_freq": False, "mode": "mean", "sparse": False,
              "per_sample_weights": None, "include_last_offset": False, "padding_idx": None})
    if b["max_norm"] is not None:
        raise Skip("max_norm (PyTorch renormalizes weight in place)")
    if b["scale_grad_by_freq"] or b["sparse"]:
        raise Skip("scale_grad_by_freq / sparse gradients")
    pad = b["padding_idx"]
    pad = -1 if pad is None else pad + s.input.shape[0] if pad < 0 else pad  # ag: -1 is none
    opt = lambda t: NULL() if t is None else T(t)  # noqa: E731
    mode = {"sum": 0, "mean": 1, "max": 2}[b["mode"]]
    return "ag_op_embedding_bag", [T(s.input), T(b["input"]), opt(b["offsets"]), I(mode), opt(b["per_sample_weights"]),
                                   I(b["include_last_offset"]), I(pad)]


def ctc_loss(s):
    b = bind(s, ["targets", "input_lengths", "target_lengths", "blank", "reduction", "zero_infinity"],
             {"blank": 0, "reduction": "mean", "zero_infinity": False})
    lengths = [v if isinstance(v, torch.Tensor) else torch.tensor(list(v), dtype=torch.int64)
               for v in (b["input_lengths"], b["target_lengths"])]
    return "ag_op_ctc_loss", [T(s.input), T(b["targets"]), T(lengths[0]), T(lengths[1]), I(b["blank"]),
                              reduction_arg(b["reduction"]), I(b["zero_infinity"])]


ADAPTERS_LAST2 = {
    "nn.functional.embedding_bag": embedding_bag,
    "nn.functional.ctc_loss": ctc_loss,  # PyTorch's gradient (exp(log_probs) - occupation), as ag's
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


NULL_ARRAY = ("A", None)  # a nullable int64 array passed as NULL

ADAPTERS = {
    # family UNARY
    **{n: unary("ag_op_" + n) for n in ["neg", "exp", "log", "tanh", "abs", "sign", "expm1", "log1p", "log2", "sqrt",
                                         "rsqrt", "square", "reciprocal", "sin", "cos", "tan", "asin", "acos", "atan",
                                         "sinh", "cosh", "erf", "sigmoid", "floor", "ceil", "round", "trunc", "clone"]},
    **{"nn.functional." + n: unary("ag_op_" + n) for n in ["relu", "selu", "silu", "mish"]},
    "nn.functional.gelu": gelu,
    "nn.functional.leaky_relu": scalar_kw("ag_op_leaky_relu", ["negative_slope"], {"negative_slope": 0.01}),
    "nn.functional.elu": scalar_kw("ag_op_elu", ["alpha"], {"alpha": 1.0}),
    "nn.functional.softplus": scalar_kw("ag_op_softplus", ["beta", "threshold"], {"beta": 1.0, "threshold": 20.0}),
    "nn.functional.hardtanh": scalar_kw("ag_op_hardtanh", ["min_val", "max_val"], {"min_val": -1.0, "max_val": 1.0}),
    "clamp": clamp,
    # family BINARY, COMPARE
    **{n: binary("ag_op_" + n) for n in ["add", "sub", "mul", "pow", "maximum", "minimum", "atan2", "fmod",
                                         "remainder", "eq", "ne", "lt", "le", "gt", "ge"]},
    "div.no_rounding_mode": binary("ag_op_div"),
    "max.binary": binary("ag_op_maximum"),
    "min.binary": binary("ag_op_minimum"),
    # reductions
    "sum": reduce_dims("ag_op_sum_dims"),
    "mean": reduce_dims("ag_op_mean_dims"),
    "prod": prod,
    "logsumexp": logsumexp,
    "var": var_std("ag_op_var_dims"),
    "std": var_std("ag_op_std_dims"),
    "linalg.vector_norm": vector_norm,
    "max.reduction_with_dim": select_dim("ag_op_max_dim"),
    "min.reduction_with_dim": select_dim("ag_op_min_dim"),
    "argmax": select_dim("ag_op_argmax"),
    "argmin": select_dim("ag_op_argmin"),
    "cumsum": along_dim("ag_op_cumsum"),
    "cumprod": along_dim("ag_op_cumprod"),
    "softmax": along_dim("ag_op_softmax"),
    "log_softmax": along_dim("ag_op_log_softmax"),
    # losses
    "nn.functional.cross_entropy": cross_entropy,
    "nn.functional.nll_loss": nll_loss,
    "nn.functional.mse_loss": losses("ag_op_mse_loss"),
    "nn.functional.l1_loss": losses("ag_op_l1_loss"),
    "nn.functional.smooth_l1_loss": losses("ag_op_smooth_l1_loss", [("beta", 1.0)]),
    "nn.functional.huber_loss": losses("ag_op_huber_loss", [("delta", 1.0)]),
    "nn.functional.binary_cross_entropy": bce,
    "nn.functional.binary_cross_entropy_with_logits": bce_logits,
    # shape and indexing
    "expand": shaped("ag_op_expand", "size"),
    "reshape": shaped("ag_op_reshape"),
    "flatten": flatten,
    "transpose": transpose,
    "unsqueeze": unsqueeze,
    "squeeze": squeeze,
    "permute": shaped("ag_op_permute", "dims"),
    "flip": flip,
    "narrow": narrow,
    "cat": cat_like("ag_op_concat"),
    "stack": cat_like("ag_op_stack"),
    "index_select": index_select,
    "gather": gather,
    "masked_fill": masked_fill,
    "where": where,
    "lerp": lerp,
    # linear algebra, convolution, pooling
    "matmul": two_tensors("ag_op_matmul", "other"),
    "bmm": two_tensors("ag_op_bmm", "mat2"),
    "outer": two_tensors("ag_op_outer", "vec2"),
    "dot": two_tensors("ag_op_dot", "other"),
    "nn.functional.linear": linear,
    "nn.functional.conv2d": conv("ag_op_conv2d", 2),
    "nn.functional.conv1d": conv("ag_op_conv1d", 1),
    "nn.functional.max_pool2d": max_pool2d,
    "nn.functional.avg_pool2d": avg_pool2d,
    "nn.functional.adaptive_avg_pool2d": adaptive_avg_pool2d,
    **LINALG_ADAPTERS,
    # added in 0.2: elementwise math and activations
    **{n: unary("ag_op_" + n) for n in ["exp2", "erfc", "erfinv", "lgamma", "digamma", "sinc", "asinh", "acosh",
                                         "atanh", "frac", "log10"]},
    **{n: binary("ag_op_" + n) for n in ["hypot", "logaddexp"]},
    **{"polygamma.polygamma_n_%d" % n: polygamma for n in range(5)},
    "special.polygamma.special_polygamma_n_0": polygamma,
    "logit": logit,
    "nan_to_num": nan_to_num,
    "copysign": binary("ag_op_copysign"),
    "xlogy": binary("ag_op_xlogy"),
    **{"nn.functional." + n: unary("ag_op_" + n) for n in ["relu6", "hardswish", "hardsigmoid", "softsign",
                                                           "logsigmoid", "tanhshrink"]},
    "nn.functional.glu": glu,
    "nn.functional.celu": scalar_kw("ag_op_celu", ["alpha"], {"alpha": 1.0}),
    "nn.functional.prelu": prelu,
    "nn.functional.threshold": scalar_kw("ag_op_threshold", ["threshold", "value"], {}),
    "nn.functional.softshrink": scalar_kw("ag_op_softshrink", ["lambd"], {"lambd": 0.5}),
    "nn.functional.hardshrink": scalar_kw("ag_op_hardshrink", ["lambd"], {"lambd": 0.5}),
    "addcmul": addc("ag_op_addcmul"),
    "addcdiv": addc("ag_op_addcdiv"),
    **ADAPTERS_SHAPE_INDEX,
    **ADAPTERS_NN_MORE,
    **ADAPTERS_REDUCE_MORE,
    **ADAPTERS_LINALG2,
    **ADAPTERS_LAST,
    **ADAPTERS_LAST2,
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
