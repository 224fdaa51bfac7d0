"""Hooks, custom Functions, the functional API and gradcheck; exceptions raised in
Python callbacks come back out of backward() as themselves; no callback leaks."""
import gc
import traceback

import pytest

import ag
from conftest import needs_torch


def f64(v, rg=False):
    return ag.tensor(v, dtype=ag.float64, requires_grad=rg)


@pytest.fixture(autouse=True)
def no_leaked_callbacks():
    gc.collect()
    before = ag.callback_registry_size()
    yield
    gc.collect()
    assert ag.callback_registry_size() == before, "a Python callback outlived its C registration"


def test_tensor_hook_sees_and_replaces_gradient():
    x = f64([1.0, 2.0], True)
    seen = []
    h = x.register_hook(lambda g: seen.append(g.tolist()) or g * 10)
    (x * 3).sum().backward()
    assert seen == [[3.0, 3.0]] and x.grad.tolist() == [30.0, 30.0]
    h.remove()
    x.grad = None
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0] and len(seen) == 1


def test_hook_on_non_leaf_and_post_accumulate():
    x = f64([1.0, 2.0], True)
    y = x * x
    y.register_hook(lambda g: g * 0.5)
    got = []
    x.register_post_accumulate_grad_hook(lambda t: got.append(t.grad.tolist()))
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 2.0] and got == [[1.0, 2.0]]  # 0.5 * 2x
    del x, y


class Boom(Exception):
    pass


def test_exception_in_hook_propagates_with_traceback():
    x = f64([1.0], True)

    def bad_hook(g):
        raise Boom("from the hook")
    h = x.register_hook(bad_hook)
    with pytest.raises(Boom) as e:
        (x * 2).sum().backward()
    assert "bad_hook" in "".join(traceback.format_tb(e.value.__traceback__))
    assert any("AG_ERR_CALLBACK" in n for n in getattr(e.value, "__notes__", []))
    h.remove()
    (x * 2).sum().backward()  # nothing was accumulated by the failed pass; all still usable
    assert x.grad.tolist() == [2.0]


def test_hook_returning_bad_shape_is_callback_error():
    x = f64([1.0, 2.0], True)
    x.register_hook(lambda g: f64([1.0, 2.0, 3.0]))
    with pytest.raises(ag.CallbackError):
        (x * 2).sum().backward()


class Exp(ag.Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y


class MulConst(ag.Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.k = k
        return x * k, (x * 0).sum().detach()

    @staticmethod
    def backward(ctx, g, g_unused):
        assert ctx.needs_input_grad == (True, False)
        return g * ctx.k, None


def test_function_save_for_backward_and_double_backward():
    x = f64([0.5, -1.0], True)
    y = Exp.apply(x)
    assert y.grad_fn == "ExpBackward"
    (g,) = ag.grad(y.sum(), x, create_graph=True)
    import math
    assert all(abs(a - math.exp(v)) < 1e-15 for a, v in zip(g.tolist(), [0.5, -1.0]))
    (gg,) = ag.grad(g.sum(), x)  # backward written with ag ops is differentiable
    assert all(abs(a - math.exp(v)) < 1e-15 for a, v in zip(gg.tolist(), [0.5, -1.0]))


def test_function_non_tensor_args_and_multiple_outputs():
    x = f64([1.0, 2.0], True)
    y, z = MulConst.apply(x, 3.0)
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0] and z.item() == 0.0


def test_function_mark_non_differentiable():
    class ArgSort2(ag.Function):
        @staticmethod
        def forward(ctx, x):
            v, i = x.max(0)
            ctx.mark_non_differentiable(i)
            return v * 1.0, i

        @staticmethod
        def backward(ctx, gv, gi):
            return ag.ones(2, dtype=ag.float64) * gv

    x = f64([1.0, 5.0], True)
    v, i = ArgSort2.apply(x)
    assert not i.requires_grad and v.requires_grad and i.item() == 1


def test_exception_in_function_forward_and_backward():
    class BadFwd(ag.Function):
        @staticmethod
        def forward(ctx, x):
            raise Boom("forward failed")

    class BadBwd(ag.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            raise KeyError("backward failed")

    x = f64([1.0], True)
    with pytest.raises(Boom):
        BadFwd.apply(x)
    y = BadBwd.apply(x)
    with pytest.raises(KeyError):
        y.sum().backward()
    del y


def test_callback_registry_returns_to_zero():
    gc.collect()
    base = ag.callback_registry_size()
    x = f64([1.0], True)
    y = Exp.apply(x)
    h = x.register_hook(lambda g: None)
    assert ag.callback_registry_size() == base + 2
    del y, h, x
    gc.collect()
    assert ag.callback_registry_size() == base


# ---- functional API vs torch.autograd.functional ----
def fn_two(x, y):
    return (x * y).sin(), (x ** 3).sum() + y.exp().sum()


@needs_torch
def test_functional_vs_torch():
    import numpy as np
    import torch
    import torch.autograd.functional as TF
    xs = [np.array([0.3, -0.7, 1.1]), np.array([0.5, 0.2, -0.4])]
    vs = [np.array([1.0, -2.0, 0.5]), np.array([0.1, 0.2, 0.3])]
    a, t = [f64(v) for v in xs], [torch.tensor(v) for v in xs]
    av, tv = [f64(v) for v in vs], [torch.tensor(v) for v in vs]

    def close(x, y):
        if isinstance(y, (tuple, list)):
            assert len(x) == len(y)
            for p, q in zip(x, y):
                close(p, q)
        else:
            np.testing.assert_allclose(np.array(x.tolist()), y.detach().numpy(), rtol=1e-10, atol=1e-12)

    close(ag.functional.jacobian(fn_two, tuple(a)), TF.jacobian(fn_two, tuple(t)))
    scalar = lambda x, y: (x * y).sin().sum() + (x ** 3).sum()
    close(ag.functional.hessian(scalar, tuple(a)), TF.hessian(scalar, tuple(t)))
    close(ag.functional.jacobian(lambda x: x.exp(), a[0]), TF.jacobian(lambda x: x.exp(), t[0]))
    f1 = lambda x, y: (x * y).sin()
    close(ag.functional.vjp(f1, tuple(a), av[0]), TF.vjp(f1, tuple(t), tv[0]))
    close(ag.functional.jvp(f1, tuple(a), tuple(av)), TF.jvp(f1, tuple(t), tuple(tv)))
    close(ag.functional.hvp(scalar, tuple(a), tuple(av)), TF.hvp(scalar, tuple(t), tuple(tv)))


def test_functional_exception_propagates():
    def bad(x):
        raise Boom("in fn")
    with pytest.raises(Boom):
        ag.functional.jacobian(bad, f64([1.0]))


def test_gradcheck():
    x = f64([0.3, 0.9, -0.4], True)
    assert ag.gradcheck(lambda x: (x.tanh() * x).sum(), (x,))
    assert ag.gradgradcheck(lambda x: x.sin() * x, (x,))

    class Wrong(ag.Function):
        @staticmethod
        def forward(ctx, x):
            return x * x

        @staticmethod
        def backward(ctx, g):
            return g * 3.0  # wrong: should be 2x g
    assert not ag.gradcheck(lambda x: Wrong.apply(x), (x,), raise_exception=False)
    with pytest.raises(ag.functional.GradcheckError):
        ag.gradcheck(lambda x: Wrong.apply(x), (x,))
