"""Loading libag, binding the generated function table, errors and status checks."""
import ctypes
import ctypes.util
import os
import subprocess
import threading

from . import _capi

SONAME = _capi.ABI["soname"]


def _candidates():
    env = os.environ.get("AG_LIBRARY")
    if env:
        yield env
        return  # an explicit choice must not silently fall back to another copy
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), SONAME)
    if os.path.exists(here):
        yield here
    try:
        libdir = subprocess.run(["pkg-config", "--variable=libdir", "ag"], capture_output=True,
                                text=True, timeout=10).stdout.strip()
        if libdir and os.path.exists(os.path.join(libdir, SONAME)):
            yield os.path.join(libdir, SONAME)
    except (OSError, subprocess.SubprocessError):
        pass
    found = ctypes.util.find_library("ag")
    if found:
        yield found


def _load():
    errors = []
    for path in _candidates():
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            errors.append("%s: %s" % (path, e))
    raise ImportError("cannot load libag (set AG_LIBRARY to the path of %s): %s"
                      % (SONAME, "; ".join(errors) or "not found"))


lib, LIBRARY_PATH = _load()

# ---- bind every described function; missing symbols become stubs ----
MISSING = set()


class _Missing:
    def __init__(self, name):
        self.name = name

    def __call__(self, *args):
        raise UnsupportedError(_capi.CONSTANTS["AG_ERR_UNSUPPORTED"], "AG_ERR_UNSUPPORTED",
                               "libag lacks %s (library %s)" % (self.name, LIBRARY_PATH))


F = {}
for _name, (_restype, _argtypes) in _capi.FUNCTIONS.items():
    try:
        _f = lib[_name]
    except AttributeError:
        MISSING.add(_name)
        F[_name] = _Missing(_name)
        continue
    _f.restype = _restype
    _f.argtypes = _argtypes
    F[_name] = _f


def has(name):
    """True if the loaded library exports `name`."""
    return name not in MISSING


# ---- errors ----
class Error(Exception):
    """A failed ag call: .status (int), .status_name and ag's message."""

    def __init__(self, status, status_name, message):
        super().__init__("%s: %s" % (status_name, message))
        self.status = status
        self.status_name = status_name
        self.message = message


class InvalidArgumentError(Error, ValueError): pass
class ShapeError(Error, ValueError): pass
class DTypeError(Error, TypeError): pass
class OutOfMemoryError(Error, MemoryError): pass
class ContextError(Error, ValueError): pass
class GraphError(Error, RuntimeError): pass
class VersionError(Error, RuntimeError): pass
class CallbackError(Error, RuntimeError): pass
class BufferTooSmallError(Error, ValueError): pass
class UnsupportedError(Error, NotImplementedError): pass
class InternalError(Error, RuntimeError): pass


ERRORS = {
    "AG_ERR_INVALID_ARGUMENT": InvalidArgumentError, "AG_ERR_SHAPE": ShapeError,
    "AG_ERR_DTYPE": DTypeError, "AG_ERR_OUT_OF_MEMORY": OutOfMemoryError,
    "AG_ERR_CONTEXT": ContextError, "AG_ERR_GRAPH": GraphError, "AG_ERR_VERSION": VersionError,
    "AG_ERR_CALLBACK": CallbackError, "AG_ERR_BUFFER_TOO_SMALL": BufferTooSmallError,
    "AG_ERR_UNSUPPORTED": UnsupportedError, "AG_ERR_INTERNAL": InternalError,
}
_BY_STATUS = {_capi.CONSTANTS[k]: v for k, v in ERRORS.items()}


def _text(p):
    return p.decode("utf-8", "replace") if p else ""


def status_name(status):
    return _text(F["ag_status_name"](status))


# Exceptions raised inside Python callbacks, kept per OS thread until the C
# call that ran the callback returns (callbacks run on the calling thread).
_tls = threading.local()


def stash_exception(exc):
    pending = getattr(_tls, "pending", None)
    if pending is None:
        pending = _tls.pending = []
    pending.append(exc)


def take_exception():
    pending = getattr(_tls, "pending", None)
    if pending:
        exc = pending[0]
        del pending[:]
        return exc
    return None


def error_for(status):
    """The exception for a failing status; reads the message on this thread at once."""
    msg = _text(F["ag_last_error_message"]())
    return _BY_STATUS.get(status, Error)(status, status_name(status), msg)


def check(status):
    """Raise for a failing status (or for an exception a callback stashed)."""
    exc = take_exception()
    if status != 0:
        err = error_for(status)
        if exc is not None:
            exc.add_note("(raised in a callback; ag reported %s)" % err)
            raise exc
        raise err
    if exc is not None:
        raise exc


def call(name, *args):
    check(F[name](*args))


# ---- version and layout checks ----
def _check_version():
    c = _capi.CONSTANTS
    # ag_version_number() is documented for comparison with the headers the
    # binding was generated from, whose version are the AG_VERSION_* constants.
    want = (c["AG_VERSION_MAJOR"], c["AG_VERSION_MINOR"])
    n = F["ag_version_number"]()
    have = (n // 10000, n // 100 % 100)
    if have != want:
        raise ImportError("libag %s at %s has version %d.%d, the binding was generated for %d.%d"
                          % (_text(F["ag_version_string"]()), LIBRARY_PATH, have[0], have[1], *want))


def _check_layouts():
    if not has("ag_struct_size"):
        return
    for sname, info in _capi.STRUCTS.items():
        cls = getattr(_capi, sname)
        size = F["ag_struct_size"](sname.encode())
        if size != info["size"] or ctypes.sizeof(cls) != size:
            raise ImportError("struct %s: library size %d, binding %d" % (sname, size, ctypes.sizeof(cls)))
        for field, off in info["fields"].items():
            lib_off = F["ag_struct_field_offset"](sname.encode(), field.encode())
            if lib_off != off or getattr(cls, field).offset != off:
                raise ImportError("struct %s field %s: library offset %d, binding %d"
                                  % (sname, field, lib_off, getattr(cls, field).offset))
    out = ctypes.c_int64()
    for cname, value in _capi.CONSTANTS.items():
        if cname.startswith("AG_VERSION_"):
            continue  # checked above, major.minor only
        if F["ag_constant_value"](cname.encode(), ctypes.byref(out)) == 0:
            if out.value != value and out.value & (2 ** 64 - 1) != value:
                raise ImportError("constant %s: library %d, binding %d" % (cname, out.value, value))


_check_version()
_check_layouts()
C = _capi.CONSTANTS
