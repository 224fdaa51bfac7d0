"""Op wrappers made at import from the generated description (_capi.META).

Every ag_op_<name> becomes ag.<name>, and a Tensor method when its first
input is a tensor; in-place ag_op_<name>_ become methods. Arguments are
converted by parameter kind: tensors (Python scalars take the dtype and
context of the first tensor argument), tensor lists, int arrays (an int or a
sequence; extra positional ints are packed into the array), fixed [2] arrays
(an int is repeated), dtypes, contexts, enums given as strings. Nothing here
lists the ops: adding one to ag reaches Python through the generator.
"""
import collections
import ctypes
import inspect
import math
import numbers

from . import _capi
from ._lib import F, C, call
from ._tensor import Tensor, DType, as_tensor, as_dtype, current_context, float32, wrap_out, Context

# PyTorch's defaults, by C parameter name; (op, param) entries win over the name.
DEFAULTS = {
    "keepdim": False, "dims": None, "reduction": "mean", "ignore_index": C["AG_IGNORE_INDEX_DEFAULT"],
    "label_smoothing": 0.0, "correction": 1.0, "negative_slope": 0.01, "alpha": 1.0, "beta": 1.0,
    "threshold": 20.0, "min_val": -1.0, "max_val": 1.0, "min": None, "max": None, "start_dim": 0,
    "end_dim": -1, "step": 1, "groups": 1, "ceil_mode": False, "count_include_pad": True,
    "divisor_override": 0, "eps": 1e-5, "momentum": 0.1, "mode": "constant", "value": 0.0, "delta": 1.0,
    "num_classes": -1, "m": -1, "low": 0.0, "high": 1.0, "mean": 0.0, "std": 1.0, "training": True,
    "dim": 0, "dtype": None, "ctx": None, "start": 0,
}
OP_DEFAULTS = {
    ("conv1d", "stride"): 1, ("conv1d", "padding"): 0, ("conv1d", "dilation"): 1,
    ("norm_dims", "p"): 2.0, ("dropout", "p"): 0.5, ("batch_norm", "training"): False,
    ("rms_norm", "eps"): None, ("slice", "end"): None, ("slice", "start"): None,
    ("softmax", "dim"): -1, ("log_softmax", "dim"): -1, ("randint", "low"): 0,
    # ag-api.json marks fold's window arguments required although the header
    # says they default as in unfold (NULL): give unfold's defaults here.
    ("fold", "dilation"): 1, ("fold", "padding"): 0, ("fold", "stride"): 1,
    # ops added in 0.2 (NULL pairs as in fold; stride 0 = kernel_size; scale 0 = 1/sqrt(E))
    ("conv_transpose2d", "stride"): 1, ("conv_transpose2d", "padding"): 0, ("conv_transpose2d", "dilation"): 1,
    ("conv_transpose2d", "output_padding"): 0, ("conv_transpose1d", "stride"): 1, ("conv_transpose1d", "padding"): 0,
    ("conv_transpose1d", "output_padding"): 0, ("conv_transpose1d", "dilation"): 1,
    ("interpolate", "size"): None, ("interpolate", "scale_factor"): 0.0, ("interpolate", "mode"): "nearest",
    ("interpolate", "align_corners"): False, ("max_pool1d", "stride"): 0, ("max_pool1d", "padding"): 0,
    ("max_pool1d", "dilation"): 1, ("avg_pool1d", "stride"): 0, ("avg_pool1d", "padding"): 0,
    ("instance_norm", "use_input_stats"): True, ("local_response_norm", "alpha"): 1e-4,
    ("local_response_norm", "beta"): 0.75, ("local_response_norm", "k"): 1.0,
    ("scaled_dot_product_attention", "dropout_p"): 0.0, ("scaled_dot_product_attention", "is_causal"): False,
    ("scaled_dot_product_attention", "scale"): 0.0, ("kl_div", "log_target"): False,
    ("poisson_nll_loss", "log_input"): True, ("poisson_nll_loss", "full"): False, ("poisson_nll_loss", "eps"): 1e-8,
    ("gaussian_nll_loss", "full"): False, ("gaussian_nll_loss", "eps"): 1e-6, ("margin_ranking_loss", "margin"): 0.0,
    ("cosine_embedding_loss", "margin"): 0.0, ("triplet_margin_loss", "margin"): 1.0, ("triplet_margin_loss", "p"): 2.0,
    ("triplet_margin_loss", "eps"): 1e-6, ("triplet_margin_loss", "swap"): False, ("rot90", "k"): 1,
    ("rot90", "dims"): (0, 1), ("diff", "n"): 1, ("diff", "dim"): -1, ("scatter_reduce", "include_self"): True,
    ("index_put", "accumulate"): False, ("roll", "dims"): None, ("linear_act", "activation"): "none",
    ("embedding_bag", "mode"): "mean", ("embedding_bag", "include_last_offset"): False,
    ("embedding_bag", "padding_idx"): -1, ("ctc_loss", "blank"): 0, ("ctc_loss", "zero_infinity"): False,
}
_REQUIRED = object()
# Ops writing an array of outputs whose count follows from the inputs.
OUT_COUNTS = {
    "unbind": lambda v: v["x"].shape[v["dim"]],
    "tensor_split": lambda v: max(int(v["sections"]), 1),
    "tensor_split_indices": lambda v: len(list(v["indices"])) + 1,
}
# Enum parameters given as strings ("mean", "reflect") -> constants prefix.
ENUMS = {"reduction": "AG_REDUCTION_", "mode": "AG_PAD_", "reduce": "AG_SCATTER_REDUCE_",
         "activation": "AG_ACTIVATION_"}
OP_ENUMS = {("interpolate", "mode"): "AG_INTERP_", ("embedding_bag", "mode"): "AG_EMBEDDING_BAG_"}
# None for these doubles means "no bound" (NaN, as the header documents).
NAN_FOR_NONE = {"min", "max"}


def _is_tensor_param(p):
    return p["kind"] == "handle" and p["base"] == "ag_tensor"


class OpSpec:
    """How a C op's parameters map to Python arguments and results."""

    def __init__(self, cname, pyname):
        meta = _capi.META[cname]
        self.cname, self.name, self.doc = cname, pyname, meta["doc"]
        params = meta["params"]
        lengths = {p["length"] for p in params if isinstance(p.get("length"), str)}
        self.params = params
        self.counts = lengths
        self.outs = [p for p in params if p["direction"] == "out"]
        ins = [p for p in params if p["direction"] == "in" and p["name"] not in lengths]
        # creation ops: (shape, ..., dtype=, ctx=); cast keeps dtype positional
        has_ctx = any(p["base"] == "ag_context" for p in ins)
        self.kw_only = {p["name"] for p in ins if p["base"] == "ag_context" or (has_ctx and p["base"] == "ag_dtype")}
        kw_last = [p for p in ins if p["name"] in self.kw_only]
        self.inputs = [p for p in ins if p not in kw_last] + kw_last
        self.inplace = not self.outs and meta["status"]
        self.array_params = [p for p in self.inputs if p["kind"] == "scalar" and p["pointers"] == 1
                             and p["base"] == "int64_t" and isinstance(p.get("length"), str)]
        self.first_is_tensor = bool(self.inputs) and _is_tensor_param(self.inputs[0]) \
            and self.inputs[0]["pointers"] == 1
        self.defaults = {}
        for p in self.inputs:
            key = (pyname.rstrip("_"), p["name"])
            if key in OP_DEFAULTS:
                self.defaults[p["name"]] = OP_DEFAULTS[key]
            elif p.get("nullable"):
                self.defaults[p["name"]] = None
            elif p["name"] in DEFAULTS and not _is_tensor_param(p) and \
                    not (self.first_is_tensor and p is self.inputs[0]):
                self.defaults[p["name"]] = DEFAULTS[p["name"]]
        names = [p["name"] for p in self.outs if p["kind"] == "handle" and p["pointers"] == 2
                 and "length" not in p]
        self.result_type = collections.namedtuple(pyname + "_result", names) if len(names) > 1 else None

    def signature(self):
        ps = []
        for p in self.inputs:
            d = self.defaults.get(p["name"], inspect.Parameter.empty)
            kind = inspect.Parameter.KEYWORD_ONLY if p["name"] in self.kw_only \
                else inspect.Parameter.POSITIONAL_OR_KEYWORD
            ps.append((p["name"], kind, d))
        # Python wants defaults last among positional parameters: show the rest as keyword-only.
        out, seen_default, kw_only = [], False, False
        for name, kind, d in ps:
            if d is not inspect.Parameter.empty:
                seen_default = True
            elif seen_default:
                kw_only = True
            if kw_only or kind == inspect.Parameter.KEYWORD_ONLY:
                kind, kw_only = inspect.Parameter.KEYWORD_ONLY, True
            out.append(inspect.Parameter(name, kind, default=d))
        return inspect.Signature(out)

    def bind(self, args, kwargs):
        args = list(args)
        n = len(self.inputs)
        n_pos = len([p for p in self.inputs if p["name"] not in self.kw_only])
        # ag.rand(2, 3), t.reshape(2, 3), t.permute(1, 0): pack extra ints into the int array.
        if len(args) > n_pos and self.array_params:
            i = self.inputs.index(self.array_params[0])
            take = len(args) - n_pos + 1
            if all(isinstance(a, numbers.Integral) for a in args[i:i + take]):
                args[i:i + take] = [tuple(args[i:i + take])]
        n = n_pos
        if len(args) > n:
            raise TypeError("%s() takes %d arguments but %d were given" % (self.name, n, len(args)))
        values = {}
        for p, a in zip(self.inputs, args):
            values[p["name"]] = a
        for k, v in kwargs.items():
            if k not in {p["name"] for p in self.inputs}:
                raise TypeError("%s() got an unexpected keyword argument %r" % (self.name, k))
            if k in values:
                raise TypeError("%s() got multiple values for argument %r" % (self.name, k))
            values[k] = v
        for p in self.inputs:
            if p["name"] not in values:
                if p["name"] not in self.defaults:
                    raise TypeError("%s() missing required argument %r" % (self.name, p["name"]))
                values[p["name"]] = self.defaults[p["name"]]
        return values

    def __call__(self, *args, **kwargs):
        values = self.bind(args, kwargs)
        like = next((v for p in self.inputs for v in [values[p["name"]]]
                     if _is_tensor_param(p) and isinstance(v, Tensor)), None)
        if like is None:  # tensor lists (concat, stack)
            like = next((x for p in self.inputs if _is_tensor_param(p) and p["pointers"] == 2
                         for x in (values[p["name"]] or []) if isinstance(x, Tensor)), None)
        keep = []
        cargs = {}
        counts = {}
        for p in self.inputs:
            cargs[p["name"]] = self._convert(p, values[p["name"]], like, keep, counts)
        for name, n in counts.items():
            cargs[name] = n
        out_handles = []
        result_arrays = []
        for p in self.outs:
            if p["kind"] == "handle" and p["pointers"] == 2 and "length" not in p:
                hp = ctypes.c_void_p()
                out_handles.append(hp)
                cargs[p["name"]] = ctypes.byref(hp)
        array_out = next((p for p in self.outs if p["kind"] == "handle" and "length" in p), None)
        if array_out is not None:
            cap_name = array_out["length"]
            count_out = next((p for p in self.outs if p["kind"] == "scalar" and p["pointers"] == 1), None)
            if count_out is not None:  # ask the count first (chunk)
                n = ctypes.c_int32()
                cargs[array_out["name"]], cargs[cap_name], cargs[count_out["name"]] = None, 0, ctypes.byref(n)
                self._call(cargs)
                cap = n.value
                cargs[count_out["name"]] = ctypes.byref(n)
            elif self.name in OUT_COUNTS:  # a count the inputs imply (unbind, tensor_split)
                cap = OUT_COUNTS[self.name](values)
            else:  # as many as the input arrays say (split: one per size)
                cap = max(sum(counts.values()), 1)
            arr = (ctypes.c_void_p * max(cap, 1))()
            cargs[array_out["name"]], cargs[cap_name] = arr, cap
            self._call(cargs)
            n_res = n.value if count_out is not None else cap
            return tuple(wrap_out(ctypes.c_void_p(arr[i])) for i in range(n_res))
        self._call(cargs)
        del keep
        if self.inplace:
            return values[self.inputs[0]["name"]]
        res = [wrap_out(h) for h in out_handles]
        if self.result_type is not None:
            return self.result_type(*res)
        return res[0]

    def _call(self, cargs):
        call(self.cname, *[cargs[p["name"]] for p in self.params])

    def _convert(self, p, v, like, keep, counts):
        name, kind, base, ptrs = p["name"], p["kind"], p["base"], p["pointers"]
        if kind == "handle" and base == "ag_tensor":
            if ptrs == 1:
                if v is None:
                    if not p.get("nullable"):
                        raise TypeError("%s(): %s must be a tensor, not None" % (self.name, name))
                    return None
                t = as_tensor(v, like=like)
                keep.append(t)
                return t._h
            ts = [as_tensor(x, like=like) for x in v]
            keep.append(ts)
            counts[p["length"]] = len(ts)
            return (ctypes.c_void_p * max(len(ts), 1))(*[t._h for t in ts])
        if kind == "handle" and base == "ag_context":
            if isinstance(v, Tensor):
                v = v.context
            ctx = current_context(v)
            keep.append(ctx)
            return ctx.handle
        if p.get("string"):  # const char * (einsum's equation)
            if not isinstance(v, str):
                raise TypeError("%s(): %s must be a str, not %s" % (self.name, name, type(v).__name__))
            return v.encode()
        if base == "ag_dtype":
            d = as_dtype(v) or (like.dtype if like is not None else float32)
            return d.code
        if kind == "scalar" and ptrs == 1 and base == "int64_t":
            length = p.get("length")
            if isinstance(length, int):  # fixed array, e.g. conv stride [2]
                if v is None:
                    return None
                seq = [int(v)] * length if isinstance(v, numbers.Integral) else [int(x) for x in v]
                if len(seq) != length:
                    raise ValueError("%s(): %s needs %d values, got %d" % (self.name, name, length, len(seq)))
                return (ctypes.c_int64 * length)(*seq)
            if v is None:
                seq = []
            elif isinstance(v, numbers.Integral):
                seq = [int(v)]
            else:
                seq = [int(x) for x in v]
            if length:
                counts[length] = len(seq)
            return (ctypes.c_int64 * max(len(seq), 1))(*seq)
        if kind in ("scalar", "alias") and ptrs == 0:
            if isinstance(v, str) and (name in ENUMS or (self.name, name) in OP_ENUMS):
                key = OP_ENUMS.get((self.name, name)) or ENUMS[name]
                key += v.upper()
                if key not in C:
                    raise ValueError("%s(): unknown %s %r" % (self.name, name, v))
                return C[key]
            if base in ("double", "float"):
                if v is None:
                    if name in NAN_FOR_NONE:
                        return math.nan
                    if name == "eps" and like is not None:  # rms_norm: the dtype's machine epsilon
                        return 1.1920928955078125e-07 if like.dtype is float32 else 2.220446049250313e-16
                    raise TypeError("%s(): %s must be a number" % (self.name, name))
                return float(v)
            if v is None and name == "end":
                return 2 ** 63 - 1
            if v is None and name == "start":
                return 0
            if isinstance(v, Tensor):
                v = v.item()
            return int(v)
        raise TypeError("%s(): cannot convert parameter %s of kind %s" % (self.name, name, kind))


def make_function(spec):
    def op(*args, **kwargs):
        return spec(*args, **kwargs)
    op.__name__ = op.__qualname__ = spec.name
    op.__doc__ = spec.doc
    op.__signature__ = spec.signature()
    op.spec = spec
    return op


def build():
    """{python name: function} for every op and in-place op of the description."""
    fns = {}
    for name, family, cname in _capi.OPS:
        fns[name] = make_function(OpSpec(cname, name))
    for cname, meta in _capi.META.items():
        if cname.startswith("ag_op_") and cname.endswith("_") and meta["status"]:
            name = cname[len("ag_op_"):]
            fns[name] = make_function(OpSpec(cname, name))
    return fns
