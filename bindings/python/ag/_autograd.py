"""backward and grad (torch.autograd.backward / torch.autograd.grad)."""
import ctypes

from . import _capi
from ._lib import call
from ._tensor import Tensor, as_tensor, wrap_out


def _tensors(x):
    if x is None:
        return []
    if isinstance(x, Tensor):
        return [x]
    return list(x)


def _handles(ts):
    return (ctypes.c_void_p * max(len(ts), 1))(*[None if t is None else t._h for t in ts])


def backward(tensor, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate the gradient of `tensor` into the leaves (or `inputs`)."""
    opts = _capi.ag_backward_options()
    call("ag_backward_options_init", ctypes.byref(opts))
    opts.create_graph = int(bool(create_graph))
    opts.retain_graph = int(bool(create_graph if retain_graph is None else retain_graph))
    ins = _tensors(inputs)
    arr = _handles(ins)
    if ins:
        opts.num_inputs = len(ins)
        opts.inputs = ctypes.cast(arr, ctypes.POINTER(ctypes.c_void_p))
    g = None if gradient is None else as_tensor(gradient, like=tensor)
    call("ag_backward", tensor._h, None if g is None else g._h, ctypes.byref(opts))


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, allow_unused=False,
         is_grads_batched=False):
    """Gradients of sum(outputs[i] * grad_outputs[i]) w.r.t. inputs, returned as a tuple."""
    if is_grads_batched:
        raise NotImplementedError("ag.grad: is_grads_batched is not supported")
    outs, ins = _tensors(outputs), _tensors(inputs)
    gos = _tensors(grad_outputs)
    if gos and len(gos) != len(outs):
        raise ValueError("grad_outputs has %d entries for %d outputs" % (len(gos), len(outs)))
    gos = [None if g is None else as_tensor(g, like=o) for g, o in zip(gos, outs)]
    opts = _capi.ag_grad_options()
    call("ag_grad_options_init", ctypes.byref(opts))
    opts.create_graph = int(bool(create_graph))
    opts.retain_graph = int(bool(create_graph if retain_graph is None else retain_graph))
    opts.allow_unused = int(bool(allow_unused))
    res = (ctypes.c_void_p * len(ins))()
    call("ag_grad", res, _handles(outs), _handles(gos) if gos else None, len(outs), _handles(ins), len(ins),
         ctypes.byref(opts))
    return tuple(wrap_out(ctypes.c_void_p(h)) for h in res)
