"""OpInfo sample -> ag call, the base of opinfo_adapters.py (which gen_opinfo.py uses):
Skip, the argument constructors (ag's C in-parameters) and the adapters of the
first op families: elementwise, reductions, losses, shape and indexing, linear
algebra, convolution and pooling.
"""
import torch


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


NULL_ARRAY = ("A", None)  # a nullable int64 array passed as NULL


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
