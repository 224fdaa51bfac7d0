"""torch.autograd.functional and gradcheck over ag's functional.h helpers."""
import ctypes

from . import _capi
from ._lib import F, call
from ._tensor import Tensor, as_tensor, wrap_borrowed, wrap_out, no_grad
from ._callbacks import register, REGISTRY, _lock, _fail


class GradcheckError(RuntimeError):
    pass


@_capi.ag_fn
def _fn(user_data, inputs, num_inputs, outputs, num_outputs):
    try:
        func = REGISTRY[user_data]
        res = func(*[wrap_borrowed(inputs[i]) for i in range(num_inputs)])
        outs = res if isinstance(res, (tuple, list)) else (res,)
        if len(outs) != num_outputs:
            raise ValueError("function returned %d outputs, expected %d" % (len(outs), num_outputs))
        for i, t in enumerate(outs):
            outputs[i] = F["ag_tensor_retain"](as_tensor(t)._h)
        return 0
    except BaseException as e:
        return _fail(e)


def _as_tuple(x):
    if isinstance(x, (tuple, list)):
        return True, list(x)
    return False, [x]


def _arr(ts):
    return (ctypes.c_void_p * max(len(ts), 1))(*[None if t is None else t._h for t in ts])


def _probe(func, ins):
    """Number of outputs of func (and whether it returns a tuple), from one run without a graph."""
    with no_grad():
        res = func(*ins)
    return isinstance(res, (tuple, list)), (len(res) if isinstance(res, (tuple, list)) else 1)


def _opts(create_graph, strict):
    o = _capi.ag_functional_options()
    call("ag_functional_options_init", ctypes.byref(o))
    o.create_graph, o.strict = int(bool(create_graph)), int(bool(strict))
    return o


def _run(cname, func, *args):
    key = register(func)
    try:
        call(cname, *args)
    finally:  # ag_fn takes no destroy: the call is its whole lifetime
        with _lock:
            REGISTRY.pop(key, None)


def _key_call(cname, func, build):
    """build(key) -> the C arguments; runs cname with func registered for the call."""
    key = register(func)
    try:
        call(cname, *build(key))
    finally:
        with _lock:
            REGISTRY.pop(key, None)


def _wrap_all(arr, n):
    return [wrap_out(ctypes.c_void_p(arr[i])) for i in range(n)]


def _shape(is_tuple, xs):
    return tuple(xs) if is_tuple else xs[0]


def _vec(v, like, n):
    if v is None:
        return None, []
    vt, vs = _as_tuple(v)
    vs = [None if x is None else as_tensor(x, like=l) for x, l in zip(vs, like)]
    if len(vs) != n:
        raise ValueError("v has %d entries, expected %d" % (len(vs), n))
    return _arr(vs), vs


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J) as torch.autograd.functional.vjp."""
    it, ins = _as_tuple(inputs)
    ot, n_out = _probe(func, ins)
    res, outs = (ctypes.c_void_p * len(ins))(), (ctypes.c_void_p * n_out)()
    with no_grad():
        probe = func(*ins)
    _, probe = _as_tuple(probe)
    varr, keep = _vec(v, probe, n_out)
    del probe
    _key_call("ag_vjp", func, lambda k: (res, outs, _fn, k, _arr(ins), len(ins), varr, n_out,
                                        ctypes.byref(_opts(create_graph, strict))))
    return _shape(ot, _wrap_all(outs, n_out)), _shape(it, _wrap_all(res, len(ins)))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v) as torch.autograd.functional.jvp."""
    it, ins = _as_tuple(inputs)
    ot, n_out = _probe(func, ins)
    varr, keep = _vec(v, ins, len(ins))
    res, outs = (ctypes.c_void_p * n_out)(), (ctypes.c_void_p * n_out)()
    _key_call("ag_jvp", func, lambda k: (res, outs, _fn, k, _arr(ins), len(ins), varr, n_out,
                                        ctypes.byref(_opts(create_graph, strict))))
    return _shape(ot, _wrap_all(outs, n_out)), _shape(ot, _wrap_all(res, n_out))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse"):
    """Jacobian blocks as torch.autograd.functional.jacobian (nesting: outputs, then inputs)."""
    it, ins = _as_tuple(inputs)
    ot, n_out = _probe(func, ins)
    res = (ctypes.c_void_p * (n_out * len(ins)))()
    _key_call("ag_jacobian", func, lambda k: (res, _fn, k, _arr(ins), len(ins), n_out,
                                             ctypes.byref(_opts(create_graph, strict))))
    blocks = _wrap_all(res, n_out * len(ins))
    rows = [_shape(it, blocks[o * len(ins):(o + 1) * len(ins)]) for o in range(n_out)]
    return _shape(ot, rows)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse"):
    """Hessian of a scalar function as torch.autograd.functional.hessian."""
    it, ins = _as_tuple(inputs)
    n = len(ins)
    res = (ctypes.c_void_p * (n * n))()
    _key_call("ag_hessian", func, lambda k: (res, _fn, k, _arr(ins), n, ctypes.byref(_opts(create_graph, strict))))
    blocks = _wrap_all(res, n * n)
    return _shape(it, [_shape(it, blocks[i * n:(i + 1) * n]) for i in range(n)])


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v) as torch.autograd.functional.hvp."""
    it, ins = _as_tuple(inputs)
    varr, keep = _vec(v, ins, len(ins))
    res, out = (ctypes.c_void_p * len(ins))(), ctypes.c_void_p()
    _key_call("ag_hvp", func, lambda k: (res, ctypes.byref(out), _fn, k, _arr(ins), len(ins), varr,
                                        ctypes.byref(_opts(create_graph, strict))))
    return wrap_out(out), _shape(it, _wrap_all(res, len(ins)))


vhp = hvp  # equal for twice continuously differentiable functions


def _check(cname, func, inputs, extra, eps, atol, rtol, raise_exception):
    it, ins = _as_tuple(inputs)
    ins = [as_tensor(x) for x in ins]
    _, n_out = _probe(func, ins)
    opts = _capi.ag_gradcheck_options()
    call("ag_gradcheck_options_init", ctypes.byref(opts))
    opts.eps, opts.atol, opts.rtol = eps, atol, rtol
    r = _capi.ag_gradcheck_result()
    call("ag_gradcheck_result_init", ctypes.byref(r))
    _key_call(cname, func, lambda k: (ctypes.byref(r), _fn, k, _arr(ins), len(ins)) + extra(n_out)
              + (ctypes.byref(opts),))
    if not r.passed and raise_exception:
        raise GradcheckError("%s failed: d output %d[%d] / d input %d[%d]: analytical %r, numerical %r "
                             "(%d elements compared)" % (cname, r.output_index, r.output_element, r.input_index,
                                                         r.input_element, r.analytical, r.numerical, r.num_compared))
    return bool(r.passed)


def gradcheck(func, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, **_ignored):
    """Compare backward's Jacobian with central differences (f64 inputs that require grad)."""
    return _check("ag_gradcheck", func, inputs, lambda n: (n,), eps, atol, rtol, raise_exception)


def gradgradcheck(func, inputs, grad_outputs=None, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
                  **_ignored):
    """Check second derivatives as torch.autograd.gradgradcheck."""
    gos = None if grad_outputs is None else _as_tuple(grad_outputs)[1]
    return _check("ag_gradgradcheck", func, inputs,
                  lambda n: (None if gos is None else _arr(gos), n), eps, atol, rtol, raise_exception)
