"""OpInfo sample -> ag call for gen_opinfo.py: ADAPTERS maps an OpInfo name to
an adapter(sample) -> (ag function, [args]) that raises Skip for a sample ag's
signature cannot express. The argument constructors and the adapters of the
first op families are in opinfo_adapters_base.py; here the adapters of the ops
added since (0.2 on) and the table of all.
"""
import torch

from opinfo_adapters_base import (  # the argument constructors, then the adapters
    Skip, T, NULL, A, I, F, TL, bind, dims, no_args, reduction_arg, unary, binary, scalar_kw, reduce_dims, prod,
    logsumexp, var_std, vector_norm, along_dim, select_dim, gelu, clamp, losses, cross_entropy, nll_loss, bce,
    bce_logits, shaped, where, masked_fill, lerp, linear, two_tensors, index_select, gather, flatten, transpose,
    unsqueeze, squeeze, flip, narrow, cat_like, max_pool2d, avg_pool2d, adaptive_avg_pool2d, one, conv,
    diagonal_like, int_attr)


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
