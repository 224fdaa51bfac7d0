"""Zero-copy numpy views and DLPack capsules (the capsule protocol through ctypes.pythonapi)."""
import ctypes
import sys

from . import _capi
from ._lib import F, C, call, has
from ._tensor import Tensor, DTYPES, current_context, wrap_out, float32, float64, int64, bool_, np
from ._callbacks import register, REGISTRY, _lock

_TYPESTR = {float32: "f4", float64: "f8", int64: "i8", bool_: "b1"}
deleter_calls = 0  # buffers ag handed back (tests check each runs once)


class _View:
    """Keeps a tensor alive for as long as a numpy array uses its memory."""

    def __init__(self, t, ptr, readonly):
        self.t = t
        d = t.dtype
        self.__array_interface__ = {
            "version": 3, "shape": tuple(t.shape), "typestr": ("|" if d is bool_ else "<") + _TYPESTR[d],
            "data": (ptr or 0, readonly), "strides": tuple(s * d.itemsize for s in t.stride()),
        }


def to_numpy(t):
    """A numpy view of t's memory (zero-copy; a copy when libag lacks ag_tensor_data)."""
    if np is None:
        raise ImportError("numpy is not installed")
    if has("ag_tensor_data"):
        ptr = F["ag_tensor_data"](t._h)
        if ptr is None and t.numel() > 0:
            from ._lib import error_for
            raise error_for(C["AG_ERR_INVALID_ARGUMENT"])
        return np.asarray(_View(t, ptr, t.is_read_only()))
    a = np.empty(tuple(t.shape), dtype=t.dtype.np_name)
    call("ag_tensor_copy_data", t._h, ctypes.c_void_p(a.ctypes.data), a.nbytes)
    return a


@_capi.ag_deleter_fn
def _buffer_deleter(data, key):
    global deleter_calls
    deleter_calls += 1
    with _lock:
        REGISTRY.pop(key, None)


_NP = {"float32": float32, "float64": float64, "int64": int64, "bool": bool_}


def from_numpy(a, ctx=None):
    """A tensor sharing a's memory (no copy); a stays alive until ag lets go of it.
    Read-only arrays give read-only tensors (in-place ops raise ag.UnsupportedError)."""
    if np is None or not isinstance(a, np.ndarray):
        raise TypeError("from_numpy expects a numpy.ndarray, got %s" % type(a).__name__)
    d = _NP.get(a.dtype.name)
    if d is None or not a.dtype.isnative:
        raise TypeError("ag cannot share numpy dtype %s (float32, float64, int64, bool)" % a.dtype)
    if any(s % d.itemsize for s in a.strides):
        raise ValueError("strides %s are not multiples of the element size" % (a.strides,))
    shape = (ctypes.c_int64 * max(a.ndim, 1))(*a.shape)
    strides = (ctypes.c_int64 * max(a.ndim, 1))(*[s // d.itemsize for s in a.strides])
    flags = 0 if a.flags.writeable else C["AG_BUFFER_READ_ONLY"]
    key = register(a)
    hp = ctypes.c_void_p()
    # the deleter runs on every path, failure included, and drops the reference to a
    call("ag_tensor_from_buffer_flags", ctypes.byref(hp), current_context(ctx).handle, d.code, shape, strides,
         a.ndim, ctypes.c_void_p(a.ctypes.data), flags, _buffer_deleter, key)
    return wrap_out(hp)


# ---- DLPack capsules ----
_api = ctypes.pythonapi
_New = _api.PyCapsule_New
_New.restype, _New.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
_IsValid = _api.PyCapsule_IsValid
_IsValid.restype, _IsValid.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]
_GetPointer = _api.PyCapsule_GetPointer
_GetPointer.restype, _GetPointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
_SetName = _api.PyCapsule_SetName
# The name must outlive the capsule: pass the address of a module-level buffer.
_SetName.restype, _SetName.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_void_p]
# The destructor gets a dying object: separate prototypes taking a raw pointer.
_RawIsValid = _api["PyCapsule_IsValid"]
_RawIsValid.restype, _RawIsValid.argtypes = ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p]
_RawGetPointer = _api["PyCapsule_GetPointer"]
_RawGetPointer.restype, _RawGetPointer.argtypes = ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_char_p]

# Capsule names must outlive the capsules: module-level buffers.
_NAMES = {n: ctypes.create_string_buffer(n) for n in
          (b"dltensor", b"used_dltensor", b"dltensor_versioned", b"used_dltensor_versioned")}
_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _capsule_destructor(capsule):
    # Unconsumed capsule: its managed tensor is still ours to delete.
    for name in (b"dltensor_versioned", b"dltensor"):
        if _RawIsValid(capsule, name):
            ptr = _RawGetPointer(capsule, name)
            cls = _capi.ag_dlpack_managed_tensor_versioned if name == b"dltensor_versioned" \
                else _capi.ag_dlpack_managed_tensor
            deleter = ctypes.cast(ptr, ctypes.POINTER(cls)).contents.deleter
            if deleter:
                _DELETER(deleter)(ptr)
            return


def to_dlpack_capsule(t, max_version=None, copy=None):
    if copy:
        t = t.clone()
    versioned = max_version is not None and tuple(max_version)[0] >= C["AG_DLPACK_MAJOR_VERSION"]
    if versioned:
        p = ctypes.POINTER(_capi.ag_dlpack_managed_tensor_versioned)()
        call("ag_tensor_to_dlpack", ctypes.byref(p), t._h)
        name = b"dltensor_versioned"
    else:
        p = ctypes.POINTER(_capi.ag_dlpack_managed_tensor)()
        call("ag_tensor_to_dlpack_legacy", ctypes.byref(p), t._h)
        name = b"dltensor"
    ptr = ctypes.cast(p, ctypes.c_void_p).value
    try:
        return _New(ptr, ctypes.addressof(_NAMES[name]),
                    ctypes.cast(_capsule_destructor, ctypes.c_void_p).value)
    except BaseException:
        _DELETER(p.contents.deleter)(ptr)
        raise


to_dlpack = to_dlpack_capsule


def from_dlpack(x, ctx=None):
    """A tensor sharing the memory of x (anything with __dlpack__, or a DLPack capsule)."""
    if isinstance(x, Tensor):
        return x
    if hasattr(x, "__dlpack__"):
        try:
            cap = x.__dlpack__(max_version=(C["AG_DLPACK_MAJOR_VERSION"], C["AG_DLPACK_MINOR_VERSION"]))
        except TypeError:  # producers older than DLPack 1.0 (numpy < 2, torch < 2.4)
            cap = x.__dlpack__()
    else:
        cap = x
    hp = ctypes.c_void_p()
    c = current_context(ctx).handle
    if type(cap).__name__ == "PyCapsule" and _IsValid(cap, b"dltensor_versioned"):
        ptr = _GetPointer(cap, b"dltensor_versioned")
        _SetName(cap, ctypes.addressof(_NAMES[b"used_dltensor_versioned"]))  # ag owns it on every path
        call("ag_tensor_from_dlpack", ctypes.byref(hp), c,
             ctypes.cast(ptr, ctypes.POINTER(_capi.ag_dlpack_managed_tensor_versioned)))
    elif type(cap).__name__ == "PyCapsule" and _IsValid(cap, b"dltensor"):
        ptr = _GetPointer(cap, b"dltensor")
        _SetName(cap, ctypes.addressof(_NAMES[b"used_dltensor"]))
        call("ag_tensor_from_dlpack_legacy", ctypes.byref(hp), c,
             ctypes.cast(ptr, ctypes.POINTER(_capi.ag_dlpack_managed_tensor)))
    else:
        raise TypeError("from_dlpack expects an object with __dlpack__ or an unused DLPack capsule")
    return wrap_out(hp)
