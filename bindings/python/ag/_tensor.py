"""dtypes, contexts, the Tensor class, creation and grad mode."""
import ctypes
import math
import numbers
import threading

from . import _capi
from ._lib import F, C, call, check, has, _text

try:
    import numpy as np
except ImportError:  # numpy is optional: creation from lists and tolist() work without it
    np = None

MAX_DIMS = C["AG_MAX_DIMS"]
INT64_MAX = 2 ** 63 - 1


# ---- dtypes ----
class DType:
    __slots__ = ("code", "name", "itemsize", "np_name", "is_floating_point", "_ctype")

    def __init__(self, code, name, np_name, ctype, floating):
        self.code, self.name, self.np_name, self._ctype = code, name, np_name, ctype
        self.itemsize = F["ag_dtype_size"](code)
        self.is_floating_point = floating

    def __repr__(self):
        return "ag." + self.name

    @property
    def c_name(self):
        """ag's own name of the dtype ("f32", ...)."""
        return _text(F["ag_dtype_name"](self.code))

    def __reduce__(self):
        return (getattr, (__import__("ag"), self.name))


float32 = DType(C["AG_F32"], "float32", "float32", ctypes.c_float, True)
float64 = DType(C["AG_F64"], "float64", "float64", ctypes.c_double, True)
int64 = DType(C["AG_I64"], "int64", "int64", ctypes.c_int64, False)
bool_ = DType(C["AG_BOOL"], "bool", "bool", ctypes.c_uint8, False)
DTYPES = {d.code: d for d in (float32, float64, int64, bool_)}
_BY_NAME = {"float32": float32, "float": float32, "f32": float32, "float64": float64, "double": float64,
            "f64": float64, "int64": int64, "long": int64, "i64": int64, "bool": bool_}


def as_dtype(d):
    """ag dtype from an ag dtype, a name, a numpy dtype/type or a torch dtype."""
    if d is None or isinstance(d, DType):
        return d
    if d is bool:
        return bool_
    if d is float:
        return float32
    if d is int:
        return int64
    name = str(d).replace("torch.", "")
    if np is not None and not isinstance(d, str):
        try:
            name = np.dtype(d).name
        except TypeError:
            pass
    if name in _BY_NAME:
        return _BY_NAME[name]
    raise TypeError("ag has no dtype %r (float32, float64, int64, bool)" % (d,))


# ---- contexts ----
_tls = threading.local()
_default_lock = threading.Lock()
_default = None


class Context:
    """An ag context: owns the memory and the worker threads of its tensors.

    `with ag.Context(num_threads=2) as ctx:` makes it the default for creation
    functions on this thread inside the block and releases it at the end
    (tensors keep their context alive)."""

    def __init__(self, num_threads=0, _handle=None):
        if _handle is None:
            opts = _capi.ag_context_options()
            call("ag_context_options_init", ctypes.byref(opts))
            opts.num_threads = num_threads
            h = ctypes.c_void_p()
            call("ag_context_create", ctypes.byref(h), ctypes.byref(opts))
            _handle = h.value
        self._h = _handle

    @property
    def handle(self):
        if not self._h:
            raise ValueError("context is closed")
        return self._h

    def close(self):
        h, self._h = self._h, None
        if h:
            F["ag_context_release"](h)

    def __del__(self, _release=F["ag_context_release"]):
        h, self._h = getattr(self, "_h", None), None
        if h:
            _release(h)

    def __enter__(self):
        _stack().append(self)
        return self

    def __exit__(self, *exc):
        _stack().remove(self)
        self.close()

    @property
    def num_threads(self):
        return F["ag_context_num_threads"](self.handle)

    def memory_stats(self):
        st = _capi.ag_memory_stats()
        call("ag_memory_stats_init", ctypes.byref(st))
        call("ag_context_memory_stats", self.handle, ctypes.byref(st))
        return {name: getattr(st, name) for name, _ in st._fields_ if name not in ("struct_size", "reserved")}

    def trim(self):
        call("ag_context_trim", self.handle)

    def reset_peak_memory(self):
        call("ag_context_reset_peak_memory", self.handle)

    def manual_seed(self, seed):
        call("ag_context_manual_seed", self.handle, int(seed) & (2 ** 64 - 1))

    def initial_seed(self):
        s = ctypes.c_uint64()
        call("ag_context_seed", self.handle, ctypes.byref(s))
        return s.value

    def get_rng_state(self):
        s, o = ctypes.c_uint64(), ctypes.c_uint64()
        call("ag_context_rng_state", self.handle, ctypes.byref(s), ctypes.byref(o))
        return (s.value, o.value)

    def set_rng_state(self, state):
        call("ag_context_set_rng_state", self.handle, state[0], state[1])

    @property
    def anomaly_mode(self):
        return bool(F["ag_context_anomaly_mode"](self.handle))

    @anomaly_mode.setter
    def anomaly_mode(self, on):
        call("ag_context_set_anomaly_mode", self.handle, int(bool(on)))

    def __repr__(self):
        return "ag.Context(num_threads=%d)" % self.num_threads if self._h else "ag.Context(closed)"


def _stack():
    s = getattr(_tls, "ctx_stack", None)
    if s is None:
        s = _tls.ctx_stack = []
    return s


def default_context():
    """The process's default context, created on first use."""
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = Context()
    return _default


def current_context(ctx=None):
    if ctx is not None:
        return ctx
    s = _stack()
    return s[-1] if s else default_context()


def memory_stats(ctx=None):
    """Memory statistics of `ctx` (a Context or a Tensor; default: the default context) as a dict."""
    if isinstance(ctx, Tensor):
        ctx = ctx.context
    return current_context(ctx).memory_stats()


def manual_seed(seed, ctx=None):
    current_context(ctx).manual_seed(seed)


# ---- grad mode (per OS thread in C) ----
def is_grad_enabled():
    return bool(F["ag_grad_mode_enabled"]())


def _set_grad(on):
    prev = ctypes.c_int32()
    call("ag_grad_mode_set", int(bool(on)), ctypes.byref(prev))
    return bool(prev.value)


class _GradMode:
    """Context manager and decorator that sets the calling thread's grad mode."""
    mode = True

    def __enter__(self):
        self._prev = getattr(self, "_prev", [])
        self._prev.append(_set_grad(self.mode))
        return self

    def __exit__(self, *exc):
        _set_grad(self._prev.pop())

    def __call__(self, fn):
        import functools
        mode = self.mode

        @functools.wraps(fn)
        def wrapper(*a, **k):
            prev = _set_grad(mode)
            try:
                return fn(*a, **k)
            finally:
                _set_grad(prev)
        return wrapper


class no_grad(_GradMode):
    mode = False


class enable_grad(_GradMode):
    mode = True


class set_grad_enabled(_GradMode):
    """Sets the mode at once (as torch does); as a context manager, restores it on exit."""

    def __init__(self, mode):
        self.mode = bool(mode)
        self._first = _set_grad(self.mode)

    def __enter__(self):
        self._prev = getattr(self, "_prev", [])
        self._prev.append(self._first)
        return self


# ---- tensors ----
class Size(tuple):
    def numel(self):
        return math.prod(self)

    def __repr__(self):
        return "ag.Size(%s)" % list(self)


class GradFn(str):
    """Name of the node that produced a tensor (a str, with torch's .name())."""

    def name(self):
        return str(self)


def _wrap(h):
    t = Tensor.__new__(Tensor)
    t._h = h
    t._keep = None
    return t


def new_handle():
    return ctypes.c_void_p()


def wrap_out(hp):
    """Tensor owning the new reference in a c_void_p out-parameter (None for NULL)."""
    return _wrap(hp.value) if hp.value else None


def wrap_borrowed(h):
    return _wrap(F["ag_tensor_retain"](h)) if h else None


class Tensor:
    """An ag tensor handle. Its reference is released when the object dies."""

    __slots__ = ("_h", "_keep", "__weakref__")
    __array_priority__ = 1000
    __array_ufunc__ = None  # numpy operators defer to ours
    __hash__ = object.__hash__

    def __init__(self, data, dtype=None, requires_grad=False, ctx=None):
        t = tensor(data, dtype=dtype, requires_grad=requires_grad, ctx=ctx)
        self._h, self._keep, t._h = t._h, t._keep, None

    def __del__(self, _release=F["ag_tensor_release"]):
        h = getattr(self, "_h", None)
        if h:
            self._h = None
            _release(h)

    @property
    def handle(self):
        return self._h

    # ---- metadata ----
    @property
    def dtype(self):
        return DTYPES[F["ag_tensor_dtype"](self._h)]

    @property
    def ndim(self):
        return F["ag_tensor_ndim"](self._h)

    def dim(self):
        return self.ndim

    @property
    def shape(self):
        dims = (ctypes.c_int64 * MAX_DIMS)()
        call("ag_tensor_shape", self._h, dims, MAX_DIMS)
        return Size(dims[: self.ndim])

    def size(self, dim=None):
        s = self.shape
        return s if dim is None else s[dim]

    def numel(self):
        return F["ag_tensor_numel"](self._h)

    def stride(self, dim=None):
        st = (ctypes.c_int64 * MAX_DIMS)()
        call("ag_tensor_strides", self._h, st, MAX_DIMS)
        s = tuple(st[: self.ndim])
        return s if dim is None else s[dim]

    def is_contiguous(self):
        return F["ag_tensor_is_contiguous"](self._h) == 1

    def is_read_only(self):
        return F["ag_tensor_is_read_only"](self._h) == 1

    def contiguous(self):
        hp = new_handle()
        call("ag_tensor_contiguous", ctypes.byref(hp), self._h)
        return wrap_out(hp)

    @property
    def is_floating_point_(self):
        return self.dtype.is_floating_point

    def is_floating_point(self):
        return self.dtype.is_floating_point

    @property
    def context(self):
        hp = ctypes.c_void_p()
        call("ag_tensor_context", ctypes.byref(hp), self._h)
        return Context(_handle=hp.value)

    @property
    def device(self):
        return "cpu"

    @property
    def _version(self):
        return F["ag_tensor_version"](self._h)

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(len(self)))

    # ---- data ----
    def item(self):
        v = ctypes.c_double()
        call("ag_tensor_item", self._h, ctypes.byref(v))
        d = self.dtype
        if d is int64:  # a double cannot hold every i64: read the element itself
            buf = ctypes.c_int64()
            call("ag_tensor_copy_data", self._h, ctypes.byref(buf), 8)
            return buf.value
        return bool(v.value) if d is bool_ else v.value

    def _flat(self):
        """Elements in row-major order as a ctypes array."""
        d = self.dtype
        n = self.numel()
        buf = (d._ctype * n)()
        call("ag_tensor_copy_data", self._h, buf, n * d.itemsize)
        return buf

    def tolist(self):
        flat = list(self._flat())
        if self.dtype is bool_:
            flat = [bool(v) for v in flat]
        shape = self.shape

        def build(off, dims):
            if not dims:
                return flat[off], off + 1
            out = []
            for _ in range(dims[0]):
                v, off = build(off, dims[1:])
                out.append(v)
            return out, off
        if self.numel() == 0 and shape:
            return _nested_empty(shape)
        return build(0, shape)[0]

    def numpy(self):
        from ._interop import to_numpy
        return to_numpy(self)

    def __array__(self, dtype=None):
        a = self.numpy()
        return a if dtype is None else a.astype(dtype, copy=False)

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        from ._interop import to_dlpack_capsule
        return to_dlpack_capsule(self, max_version, copy)

    def __dlpack_device__(self):
        return (C["AG_DLPACK_DEVICE_CPU"], 0)

    def __repr__(self):
        if not self._h:
            return "ag.tensor(<released>)"
        extra = ""
        if self.dtype is not float32:
            extra += ", dtype=%r" % self.dtype
        gf = self.grad_fn
        if gf is not None:
            extra += ", grad_fn=<%s>" % gf
        elif self.requires_grad:
            extra += ", requires_grad=True"
        body = repr(self.tolist()) if self.numel() <= 1000 else "[... %s elements]" % self.numel()
        if self.numel() == 0:
            extra += ", size=%s" % (tuple(self.shape),)
        return "tensor(%s%s)" % (body, extra)

    def __bool__(self):
        if self.numel() != 1:
            raise ValueError("the truth value of a tensor with %d elements is ambiguous" % self.numel())
        return bool(self.item())

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        if self.dtype not in (int64, bool_):
            raise TypeError("only integer tensors can be used as an index")
        return int(self.item())

    def __reduce__(self):
        return (tensor, (self.tolist(), self.dtype, self.requires_grad))

    # ---- autograd ----
    @property
    def requires_grad(self):
        return bool(F["ag_tensor_get_requires_grad"](self._h))

    @requires_grad.setter
    def requires_grad(self, on):
        call("ag_tensor_requires_grad", self._h, int(bool(on)))

    def requires_grad_(self, requires_grad=True):
        self.requires_grad = requires_grad
        return self

    @property
    def is_leaf(self):
        return bool(F["ag_tensor_is_leaf"](self._h))

    @property
    def grad_fn(self):
        if self.is_leaf:  # as torch: a leaf has no grad_fn, even when it requires grad
            return None
        name = F["ag_tensor_grad_fn_name"](self._h)
        return GradFn(_text(name)) if name else None

    @property
    def grad(self):
        hp = new_handle()
        call("ag_tensor_grad", ctypes.byref(hp), self._h)
        return wrap_out(hp)

    @grad.setter
    def grad(self, g):
        call("ag_tensor_set_grad", self._h, None if g is None else as_tensor(g, like=self)._h)

    @property
    def retains_grad(self):
        return bool(F["ag_tensor_retains_grad"](self._h))

    def retain_grad(self):
        call("ag_tensor_retain_grad", self._h)

    def detach(self):
        hp = new_handle()
        call("ag_tensor_detach", ctypes.byref(hp), self._h)
        t = wrap_out(hp)
        t._keep = self._keep
        return t

    def detach_(self):
        raise NotImplementedError("ag has no in-place detach; use t = t.detach()")

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        from ._autograd import backward
        backward(self, gradient, retain_graph, create_graph, inputs)

    def register_hook(self, fn):
        from ._callbacks import register_hook
        return register_hook(self, fn)

    def register_post_accumulate_grad_hook(self, fn):
        from ._callbacks import register_post_accumulate_grad_hook
        return register_post_accumulate_grad_hook(self, fn)

    @property
    def tag(self):
        return _text(F["ag_tensor_tag"](self._h)) or None

    @tag.setter
    def tag(self, name):
        call("ag_tensor_set_tag", self._h, None if name is None else str(name).encode())

    # ---- conversions ----
    def to(self, dtype=None, *args, **kwargs):
        dtype = kwargs.pop("dtype", dtype)
        if isinstance(dtype, Tensor):
            dtype = dtype.dtype
        if dtype is None or dtype in ("cpu",):
            return self
        dtype = as_dtype(dtype)
        return self if dtype is self.dtype else self.cast(dtype)

    def float(self):
        return self.to(float32)

    def double(self):
        return self.to(float64)

    def long(self):
        return self.to(int64)

    def bool(self):
        return self.to(bool_)

    def cpu(self):
        return self

    def type_as(self, other):
        return self.to(other.dtype)


def _nested_empty(shape):
    if len(shape) == 1:
        return []
    return [_nested_empty(shape[1:]) for _ in range(shape[0])]


# ---- creation ----
def _shape_arg(shape):
    if len(shape) == 1 and not isinstance(shape[0], numbers.Integral):
        shape = tuple(shape[0])
    return tuple(int(s) for s in shape)


def _i64_array(seq):
    seq = list(seq)
    return (ctypes.c_int64 * max(len(seq), 1))(*seq), len(seq)


def _flatten_py(data):
    """Shape and flat list of nested Python sequences (no numpy)."""
    if isinstance(data, (list, tuple)):
        if not data:
            return (0,), []
        parts = [_flatten_py(x) for x in data]
        shape0 = parts[0][0]
        if any(p[0] != shape0 for p in parts):
            raise ValueError("ragged nested sequence")
        return (len(data),) + shape0, [v for p in parts for v in p[1]]
    if isinstance(data, Tensor):
        return tuple(data.shape), _flatten_py(data.tolist())[1] if data.ndim else [data.item()]
    if isinstance(data, numbers.Number) or (np is not None and isinstance(data, np.generic)):
        return (), [data]
    raise TypeError("cannot make a tensor of %r" % type(data).__name__)


def _infer_dtype(flat):
    if all(isinstance(v, bool) or (np is not None and isinstance(v, np.bool_)) for v in flat) and flat:
        return bool_
    if all(isinstance(v, numbers.Integral) for v in flat) and flat:
        return int64
    return float32


def tensor(data, dtype=None, requires_grad=False, ctx=None):
    """A new tensor holding a copy of `data` (nested sequences, scalars, numpy arrays, tensors).

    Like torch.tensor: Python floats give float32, ints int64, bools bool;
    numpy arrays keep their dtype (float64 stays float64)."""
    dtype = as_dtype(dtype)
    if isinstance(data, Tensor):
        t = data.detach().to(dtype).clone() if dtype else data.detach().clone()
        return t.requires_grad_(requires_grad) if requires_grad else t
    if np is not None and (isinstance(data, np.ndarray) or
                           (isinstance(data, (list, tuple)) and any(isinstance(x, np.ndarray) for x in data))):
        arr = np.asarray(data)
        if dtype is None:
            dtype = _np_dtype(arr.dtype)
        shape = arr.shape  # (ascontiguousarray makes 0-d arrays 1-d)
        arr = np.ascontiguousarray(arr, dtype=dtype.np_name)
        ptr, keep = arr.ctypes.data, arr
    else:
        shape, flat = _flatten_py(data)
        if dtype is None:
            dtype = _infer_dtype(flat)
        buf = (dtype._ctype * max(len(flat), 1))()
        conv = float if dtype.is_floating_point else int
        for i, v in enumerate(flat):
            buf[i] = conv(v)
        ptr, keep = ctypes.addressof(buf), buf
    dims, nd = _i64_array(shape)
    hp = new_handle()
    call("ag_tensor_create", ctypes.byref(hp), current_context(ctx).handle, dtype.code, dims, nd,
         ctypes.c_void_p(ptr))
    del keep
    t = wrap_out(hp)
    if requires_grad:
        t.requires_grad = True
    return t


def _np_dtype(npd):
    k = npd.kind
    if k == "b":
        return bool_
    if k in "iu":
        return int64
    if npd == np.float64:
        return float64
    if k == "f":
        return float32
    raise TypeError("ag cannot hold numpy dtype %s" % npd)


def as_tensor(value, like=None, dtype=None, ctx=None):
    """`value` as a Tensor; Python scalars take the dtype and context of `like`."""
    if isinstance(value, Tensor):
        return value
    if like is not None:
        ctx = ctx or like.context
        if dtype is None:
            dtype = like.dtype
            if isinstance(value, float) and not dtype.is_floating_point:
                dtype = float32
    if isinstance(value, numbers.Number) and not (np is not None and isinstance(value, np.ndarray)):
        dtype = as_dtype(dtype) or _infer_dtype([value])
        hp = new_handle()
        call("ag_tensor_scalar", ctypes.byref(hp), current_context(ctx).handle, dtype.code, float(value))
        return wrap_out(hp)
    return tensor(value, dtype=dtype, ctx=ctx)


def _filled(fname, shape, dtype, requires_grad, ctx, *extra):
    dtype = as_dtype(dtype) or float32
    dims, nd = _i64_array(_shape_arg(shape))
    hp = new_handle()
    call(fname, ctypes.byref(hp), current_context(ctx).handle, dtype.code, dims, nd, *extra)
    t = wrap_out(hp)
    return t.requires_grad_() if requires_grad else t


def zeros(*shape, dtype=None, requires_grad=False, ctx=None):
    return _filled("ag_tensor_zeros", shape, dtype, requires_grad, ctx)


def ones(*shape, dtype=None, requires_grad=False, ctx=None):
    return _filled("ag_tensor_ones", shape, dtype, requires_grad, ctx)


def full(shape, fill_value, dtype=None, requires_grad=False, ctx=None):
    if dtype is None and isinstance(fill_value, bool):
        dtype = bool_
    elif dtype is None and isinstance(fill_value, numbers.Integral):
        dtype = int64
    return _filled("ag_tensor_full", (shape,) if isinstance(shape, numbers.Integral) else tuple(shape),
                   dtype, requires_grad, ctx, float(fill_value))


def empty(*shape, dtype=None, requires_grad=False, ctx=None):
    return zeros(*shape, dtype=dtype, requires_grad=requires_grad, ctx=ctx)


def scalar_tensor(value, dtype=None, requires_grad=False, ctx=None):
    t = as_tensor(value, dtype=dtype or float32, ctx=ctx)
    return t.requires_grad_() if requires_grad else t


def _like(fn, t, dtype, requires_grad, **kw):
    return fn(tuple(t.shape), dtype=dtype or t.dtype, requires_grad=requires_grad, ctx=t.context, **kw)


def zeros_like(t, dtype=None, requires_grad=False):
    return _like(zeros, t, dtype, requires_grad)


def ones_like(t, dtype=None, requires_grad=False):
    return _like(ones, t, dtype, requires_grad)


def full_like(t, fill_value, dtype=None, requires_grad=False):
    return full(tuple(t.shape), fill_value, dtype=dtype or t.dtype, requires_grad=requires_grad, ctx=t.context)


def is_tensor(x):
    return isinstance(x, Tensor)
