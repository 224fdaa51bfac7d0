"""ag: Python binding of the ag autograd engine (ctypes over libag's C ABI).

    import ag
    x = ag.tensor(3.0, requires_grad=True)
    y = x * x
    y.backward()
    x.grad  # tensor(6.)
"""
from . import _capi
from ._lib import (LIBRARY_PATH as __library__, MISSING as missing_symbols, has as has_symbol, Error,
                   InvalidArgumentError, ShapeError, DTypeError, OutOfMemoryError, ContextError, GraphError,
                   VersionError, CallbackError, BufferTooSmallError, UnsupportedError, InternalError, F as _F)
from ._tensor import (DType, float32, float64, int64, bool_ as bool, Tensor, Size, Context, tensor, as_tensor,
                      zeros, ones, full, empty, zeros_like, ones_like, full_like, scalar_tensor, is_tensor,
                      default_context, memory_stats, manual_seed, no_grad, enable_grad, set_grad_enabled,
                      is_grad_enabled)
from ._autograd import backward, grad
from . import _ops, _methods

float = float32
double = float64
long = int64


def version():
    """Version string of the loaded library."""
    return _F["ag_version_string"]().decode()


__version__ = version()
api_version = _capi.API_VERSION

_OPS = _ops.build()
globals().update({k: v for k, v in _OPS.items() if not k.endswith("_")})
ops = _OPS
_methods.install(_OPS)
add, sub = Tensor.add, Tensor.sub  # with PyTorch's alpha
subtract = sub

from ._callbacks import Function, FunctionCtx, RemovableHandle, callback_registry_size  # noqa: E402
from ._interop import from_numpy, from_dlpack, to_dlpack  # noqa: E402
from . import functional  # noqa: E402
from .functional import gradcheck, gradgradcheck  # noqa: E402
from . import optim  # noqa: E402
from . import profiler  # noqa: E402
from .replay import Graph, graph  # noqa: E402

cat = concatenate = _OPS["concat"]
clip = _OPS["clamp"]


def arange(start, end=None, step=1, dtype=None, requires_grad=False, ctx=None):
    """torch.arange: arange(end) or arange(start, end, step); int arguments give int64."""
    if end is None:
        start, end = 0, start
    if dtype is None:
        ints = all(isinstance(v, (int,)) for v in (start, end, step))
        dtype = int64 if ints else float32
    t = _OPS["arange"](start, end, step, dtype=dtype, ctx=ctx)
    return t.requires_grad_() if requires_grad else t


def randn_like(t):
    return _OPS["randn"](tuple(t.shape), dtype=t.dtype, ctx=t.context)


def rand_like(t):
    return _OPS["rand"](tuple(t.shape), dtype=t.dtype, ctx=t.context)


def numel(t):
    return t.numel()


def op_names():
    """Names of the ops the loaded library provides (ag_op_name)."""
    return [_F["ag_op_name"](i).decode() for i in range(_F["ag_op_count"]())]
