"""Python callbacks called from C: tensor hooks and custom Functions.

One ctypes trampoline per callback kind lives for the whole process; each
registration stores its Python objects in REGISTRY under an integer key passed
as user_data, and the C `destroy` callback removes it, so a Python callback
lives exactly as long as C may call it. An exception raised in Python is
stashed for the calling thread, reported to C with ag_set_callback_error and
AG_ERR_CALLBACK, and re-raised when the C call (backward, apply) returns.
"""
import ctypes
import itertools
import threading

from . import _capi
from ._lib import F, C, call, stash_exception
from ._tensor import Tensor, wrap_borrowed, wrap_out, as_tensor, DTYPES

REGISTRY = {}
_lock = threading.Lock()
_keys = itertools.count(1)
CALLBACK_FAILED = C["AG_ERR_CALLBACK"]


def register(obj):
    with _lock:
        key = next(_keys)
        REGISTRY[key] = obj
    return key


def callback_registry_size():
    """Python callbacks C still holds (hooks, functions, buffers lent to ag)."""
    return len(REGISTRY)


@_capi.ag_destroy_fn
def _destroy(user_data):
    with _lock:
        REGISTRY.pop(user_data, None)


def _fail(exc):
    stash_exception(exc)
    try:
        F["ag_set_callback_error"](("%s: %s" % (type(exc).__name__, exc)).encode("utf-8", "replace"))
    except Exception:  # pragma: no cover - never let anything escape into C
        pass
    return CALLBACK_FAILED


class RemovableHandle:
    def __init__(self, hook_handle):
        self._h = hook_handle

    def remove(self):
        h, self._h = self._h, None
        if h:
            F["ag_hook_remove"](h)

    def __del__(self, _release=F["ag_hook_release"]):
        h, self._h = getattr(self, "_h", None), None
        if h:
            _release(h)  # keeps the hook registered, as torch's handle does

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


@_capi.ag_tensor_hook_fn
def _tensor_hook(user_data, grad, replacement):
    try:
        fn = REGISTRY[user_data]
        res = fn(wrap_borrowed(grad))
        if res is not None:
            t = as_tensor(res)
            replacement[0] = F["ag_tensor_retain"](t._h)  # ag takes this reference over
        return 0
    except BaseException as e:
        return _fail(e)


@_capi.ag_leaf_hook_fn
def _leaf_hook(user_data, leaf):
    try:
        REGISTRY[user_data](wrap_borrowed(leaf))
        return 0
    except BaseException as e:
        return _fail(e)


def _register(cfn, tensor, fn, trampoline):
    if not callable(fn):
        raise TypeError("hook must be callable")
    key = register(fn)
    hp = ctypes.c_void_p()
    call(cfn, ctypes.byref(hp), tensor._h, trampoline, key, _destroy)  # destroy runs on failure too
    return RemovableHandle(hp.value)


def register_hook(tensor, fn):
    """fn(grad) -> None or a replacement gradient; runs before the gradient is used."""
    return _register("ag_tensor_register_hook", tensor, fn, _tensor_hook)


def register_post_accumulate_grad_hook(tensor, fn):
    """fn(leaf) after backward accumulated into leaf.grad."""
    return _register("ag_tensor_register_post_accumulate_grad_hook", tensor, fn, _leaf_hook)


# ---- custom functions ----
class FunctionCtx:
    """The `ctx` of Function.forward/backward. Attributes set in forward are kept for backward."""

    def __init__(self, needs):
        self._c = None
        self._needs = needs
        self._saved_count = 0

    def save_for_backward(self, *tensors):
        arr = (ctypes.c_void_p * max(len(tensors), 1))(*[None if t is None else t._h for t in tensors])
        call("ag_function_ctx_save_for_backward", self._c, arr, len(tensors))
        self._saved_count = len(tensors)

    @property
    def saved_tensors(self):
        out = []
        for i in range(F["ag_function_ctx_num_saved"](self._c)):
            hp = ctypes.c_void_p()
            call("ag_function_ctx_saved_tensor", ctypes.byref(hp), self._c, i)
            out.append(wrap_out(hp))
        return tuple(out)

    @property
    def needs_input_grad(self):
        return tuple(bool(F["ag_function_ctx_needs_input_grad"](self._c, i)) if i is not None else False
                     for i in self._needs)

    def mark_non_differentiable(self, *outputs):
        for t in outputs:
            call("ag_function_ctx_mark_non_differentiable", self._c, t._h)

    def mark_dirty(self, *inputs):
        for t in inputs:
            call("ag_function_ctx_mark_dirty", self._c, t._h)

    def set_materialize_grads(self, value):
        pass  # ag always passes zeros for gradients that did not flow


class _Apply:
    """State of one Function.apply: its class, arguments and ctx (the registry entry)."""

    def __init__(self, cls, args):
        self.cls, self.args = cls, args
        self.tensor_pos = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        needs, k = [], 0
        for a in args:
            needs.append(k if isinstance(a, Tensor) else None)
            k += isinstance(a, Tensor)
        self.ctx = FunctionCtx(needs)
        self.n_out = None


@_capi.ag_function_forward_fn
def _forward(user_data, cctx, inputs, num_inputs, outputs, num_outputs):
    try:
        st = REGISTRY[user_data]
        st.ctx._c = cctx
        args = list(st.args)
        for k, pos in enumerate(st.tensor_pos):  # the C inputs, wrapped as new Python tensors
            args[pos] = wrap_borrowed(inputs[k])
        res = st.cls.forward(st.ctx, *args)
        outs = res if isinstance(res, tuple) else (res,)
        st.n_out = len(outs)
        if len(outs) != num_outputs:
            raise _OutputCount(len(outs))
        for i, t in enumerate(outs):
            outputs[i] = F["ag_tensor_retain"](as_tensor(t)._h)
        st.single = not isinstance(res, tuple)
        return 0
    except BaseException as e:
        return _fail(e)
    finally:
        if user_data in REGISTRY:
            REGISTRY[user_data].ctx._c = None


class _OutputCount(Exception):
    pass


@_capi.ag_function_backward_fn
def _backward(user_data, cctx, grad_outputs, num_outputs, grad_inputs, num_inputs):
    try:
        st = REGISTRY[user_data]
        st.ctx._c = cctx
        grads = [wrap_borrowed(grad_outputs[i]) for i in range(num_outputs)]
        res = st.cls.backward(st.ctx, *grads)
        res = res if isinstance(res, tuple) else (res,)
        if len(res) == len(st.args):  # torch style: one entry per forward argument
            res = [res[pos] for pos in st.tensor_pos]
        if len(res) != num_inputs:
            raise ValueError("%s.backward returned %d gradients, expected %d"
                             % (st.cls.__name__, len(res), len(st.args)))
        for i, g in enumerate(res):
            if g is not None:
                grad_inputs[i] = F["ag_tensor_retain"](as_tensor(g)._h)
        return 0
    except BaseException as e:
        return _fail(e)
    finally:
        if user_data in REGISTRY:
            REGISTRY[user_data].ctx._c = None


class Function:
    """torch.autograd.Function: subclass with forward(ctx, ...) and backward(ctx, *grads)
    staticmethods and call Subclass.apply(...). Set `once_differentiable = True`
    when backward is not differentiable itself."""

    once_differentiable = False

    @staticmethod
    def forward(ctx, *args):
        raise NotImplementedError

    @staticmethod
    def backward(ctx, *grads):
        raise NotImplementedError

    @classmethod
    def apply(cls, *args):
        from ._lib import take_exception, check
        n_out = getattr(cls, "_ag_num_outputs", 1)
        for _attempt in range(2):
            st = _Apply(cls, args)
            key = register(st)
            fdef = _capi.ag_function_def()
            call("ag_function_def_init", ctypes.byref(fdef))
            name = (cls.__name__ + "Backward").encode()
            fdef.name = name
            fdef.flags = C["AG_FUNCTION_ONCE_DIFFERENTIABLE"] if cls.once_differentiable else 0
            fdef.forward = _forward
            fdef.backward = _backward
            fdef.user_data = key
            fdef.destroy = _destroy
            ins = [args[p] for p in st.tensor_pos]
            arr = (ctypes.c_void_p * max(len(ins), 1))(*[t._h for t in ins])
            outs = (ctypes.c_void_p * n_out)()
            status = F["ag_function_apply"](outs, n_out, arr, len(ins), ctypes.byref(fdef))
            exc = take_exception()
            if isinstance(exc, _OutputCount):  # forward returned another number of outputs: learn it, retry
                n_out = cls._ag_num_outputs = exc.args[0]
                continue
            if exc is not None:
                from ._lib import _BY_STATUS  # noqa: F401
                raise exc
            check(status)
            res = tuple(wrap_out(ctypes.c_void_p(h)) for h in outs)
            return res[0] if getattr(st, "single", n_out == 1) and n_out == 1 else res
        raise RuntimeError("%s.forward changed its number of outputs" % cls.__name__)
