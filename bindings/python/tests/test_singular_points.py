"""Values and gradients at singular points (zeros of prod/cumprod, overflowing
exponentials, constant slices, ignored targets, NaN or inf arriving at masked
backwards) against PyTorch 1.13 in float64, and the documented conventions
where ag deliberately differs from it (each stated with the exact value).

"second" is the vector-Hessian product with a fixed vector w: the gradient of
sum(grad * w) with respect to the inputs.
"""
import math

import pytest

import ag
from conftest import HAVE_TORCH

if HAVE_TORCH:
    import numpy as np
    import torch
    import torch.nn.functional as Fn

pytestmark = pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch (the oracle) is not installed for this Python")
NAN, INF = math.nan, math.inf
RTOL, ATOL = 1e-12, 1e-14


def derivatives(lib, f, xs, cot=None, w=None, second=True):
    """(value, first-order gradients, second-order products) of f at xs (lists), in ag or torch."""
    if lib == "ag":
        ins = [ag.tensor(np.asarray(x, dtype=np.float64), requires_grad=True) for x in xs]
        grad, mk = ag.grad, (lambda v, like: ag.tensor(np.asarray(v, dtype=np.float64)))
    else:
        ins = [torch.tensor(np.asarray(x, dtype=np.float64), requires_grad=True) for x in xs]
        grad, mk = torch.autograd.grad, (lambda v, like: torch.tensor(np.asarray(v, dtype=np.float64)))
    y = f(*ins)
    c = mk(np.ones(tuple(y.shape)) if cot is None else cot, y)
    g = grad([y], ins, [c], create_graph=second, allow_unused=True)
    g = [gi if gi is not None else None for gi in g]
    out = [np.asarray(y.tolist()), [np.asarray(gi.tolist()) if gi is not None else None for gi in g]]
    if second:
        terms = [(gi * mk(np.ones(tuple(gi.shape)) if w is None else w[k], gi)).sum()
                 for k, gi in enumerate(g) if gi is not None and gi.requires_grad]
        if terms:
            gg = grad([sum(terms[1:], terms[0])], ins, allow_unused=True)
            out.append([np.asarray(t.tolist()) if t is not None else np.zeros(np.shape(x)) for t, x in zip(gg, xs)])
        else:
            out.append([np.zeros(np.shape(x)) for x in xs])
    return out


def close(a, b, what, rtol=RTOL):
    np.testing.assert_allclose(a, b, rtol=rtol, atol=ATOL, equal_nan=True, err_msg=what)


def agrees(ag_f, torch_f, xs, cot=None, w=None, second=True, rtol=RTOL):
    ra = derivatives("ag", ag_f, xs, cot, w, second)
    rt = derivatives("torch", torch_f, xs, cot, w, second)
    close(ra[0], rt[0], "value", rtol)
    for k, (a, t) in enumerate(zip(ra[1], rt[1])):
        close(a if a is not None else 0 * t, t if t is not None else 0 * a, "gradient of input %d" % k, rtol)
    if second:
        for k, (a, t) in enumerate(zip(ra[2], rt[2])):
            close(a, t, "second-order product for input %d" % k, rtol)
    return ra


def test_bce_with_logits_at_zero_logits():
    t = np.array([0.3, 1.0, 0.3])
    for red in ("sum", "mean", "none"):
        r = agrees(lambda x: ag.binary_cross_entropy_with_logits(x, ag.tensor(t), None, red),
                   lambda x: Fn.binary_cross_entropy_with_logits(x, torch.tensor(t), reduction=red),
                   [[0.0, 0.0, 1e-300]], cot=None if red != "none" else [1.0, 2.0, -1.0])
    # the exact slope at 0: sigmoid(0) - t
    close(derivatives("ag", lambda x: ag.binary_cross_entropy_with_logits(x, ag.tensor(t), None, "sum"),
                      [[0.0, 0.0, 1e-300]])[1][0], 0.5 - t, "sigmoid(0) - t")
    assert r is not None


@pytest.mark.parametrize("x", [[0.0, 0.0, 3.0], [0.0, 2.0, 0.0, 3.0], [0.0, 0.0, 0.0, 2.0], [1.5, 0.0, -2.0],
                               [[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]]])
def test_prod_second_derivative_with_zeros(x):
    dims = [-1]
    w = [np.linspace(0.5, 1.5, np.size(x)).reshape(np.shape(x))]
    agrees(lambda a: ag.prod_dims(a, dims, False), lambda a: torch.prod(a, -1), [x], w=w,
           cot=np.full(np.shape(x)[:-1], 1.25))


def test_prod_over_several_dims_with_zeros():
    x = [[0.0, 2.0], [0.0, 3.0]]
    # torch's prod over all dims has a constant zero gradient with two zeros; its prod over a dim is exact
    agrees(lambda a: ag.prod_dims(a, [0, 1], False), lambda a: a.reshape(-1).prod(0), [x], w=[[[1.0, 2.0], [3.0, 4.0]]])


@pytest.mark.parametrize("x", [[2.0, 0.0, 3.0, 4.0], [0.0, 2.0, 0.0, 3.0], [2.0, 0.0, 0.0, 3.0, 4.0],
                               [0.0, 0.0, 0.0, 1.5], [[1.0, 0.0, 2.0, 0.0], [0.0, 3.0, 1.0, 2.0]]])
def test_cumprod_second_derivative_with_zeros(x):
    n = np.size(x)
    cot = np.linspace(-1.0, 2.0, n).reshape(np.shape(x))
    w = [np.linspace(0.25, 1.75, n).reshape(np.shape(x))[::-1].copy()]
    agrees(lambda a: ag.cumprod(a, -1), lambda a: torch.cumprod(a, -1), [x], cot=cot, w=w)


def test_cumprod_hessian_of_sum():
    r = derivatives("ag", lambda a: ag.cumprod(a, 0).sum(), [[2.0, 0.0, 3.0, 4.0]])
    # exact: H . 1 of sum(cumprod(x)) at (2, 0, 3, 4)
    close(r[2][0], [16.0, 32.0, 10.0, 6.0], "H . 1")


@pytest.mark.parametrize("name", ["elu", "selu"])
def test_elu_selu_second_derivative(name):
    x = [[800.0, 710.0, -1.0, 0.5, 0.0, -800.0]]
    f = (lambda a: ag.elu(a, 1.0)) if name == "elu" else ag.selu
    agrees(f, getattr(Fn, name), x)


def test_std_of_constant_slice():
    x = [[3.0, 3.0, 3.0], [1.0, 2.0, 4.0]]
    agrees(lambda a: ag.std_dims(a, [1], False, 1.0), lambda a: torch.std(a, 1), [x])
    agrees(lambda a: ag.std_dims(a, [1], True, 0.0), lambda a: torch.std(a, 1, unbiased=False, keepdim=True), [x])


@pytest.mark.parametrize("correction", [4.0, 5.0])
def test_var_with_correction_above_count(correction):
    x = [[3.0, 3.0, 3.0], [1.0, 2.0, 4.0]]
    agrees(lambda a: ag.var_dims(a, [1], False, correction),
           lambda a: torch.var(a, 1, correction=int(correction)), [x], second=False)


def test_norm_below_one_at_a_zero_element_and_norm_of_zeros():
    agrees(lambda a: ag.norm_dims(a, [0], False, 0.5), lambda a: torch.linalg.vector_norm(a, 0.5, 0),
           [[0.0, 1.0, 4.0]], second=False)
    for p in (3.0, 1.5, 0.5):
        agrees(lambda a: ag.norm_dims(a, [0], False, p), lambda a: torch.linalg.vector_norm(a, p, 0),
               [[0.0, 0.0, 0.0]], second=False)


def test_cross_entropy_all_targets_ignored():
    t = np.array([-100, -100], dtype=np.int64)
    x = [[[0.5, -1.0, 2.0], [1.0, 0.0, 3.0]]]
    agrees(lambda a: ag.cross_entropy(a, ag.tensor(t), "mean"), lambda a: Fn.cross_entropy(a, torch.tensor(t)), x)
    agrees(lambda a: ag.nll_loss(a, ag.tensor(t), "mean"), lambda a: Fn.nll_loss(a, torch.tensor(t)), x)


# Masked backwards select: a NaN or inf arriving where the mask is 0 gives 0.
SQRT_OF = {
    "relu": (ag.relu, torch.relu),
    "clamp_min": (lambda a: ag.clamp(a, 0.0, None), lambda a: torch.clamp(a, min=0.0)),
    "clamp_max": (lambda a: -ag.clamp(-a, None, 0.0), lambda a: -torch.clamp(-a, max=0.0)) if HAVE_TORCH else None,
    "maximum": (lambda a: ag.maximum(a, ag.zeros(2, dtype=ag.float64)),
                lambda a: torch.maximum(a, torch.zeros(2, dtype=torch.float64))) if HAVE_TORCH else None,
    "minimum": (lambda a: -ag.minimum(-a, ag.zeros(2, dtype=ag.float64)),
                lambda a: -torch.minimum(-a, torch.zeros(2, dtype=torch.float64))) if HAVE_TORCH else None,
    "hardtanh": (lambda a: ag.hardtanh(a, 0.0, 10.0), lambda a: Fn.hardtanh(a, 0.0, 10.0)),
    "where": (lambda a: ag.where(a > 0, a, ag.zeros(2, dtype=ag.float64)),
              lambda a: torch.where(a > 0, a, torch.zeros(2, dtype=torch.float64))) if HAVE_TORCH else None,
    "masked_fill": (lambda a: ag.masked_fill(a, a < 0, 0.0), lambda a: a.masked_fill(a < 0, 0.0)),
}


@pytest.mark.parametrize("name", sorted(SQRT_OF))
def test_sqrt_of_masked_op_at_negative_input(name):
    f_ag, f_t = SQRT_OF[name]
    r = agrees(lambda a: ag.sqrt(f_ag(a)), lambda a: torch.sqrt(f_t(a)), [[-1.0, 4.0]], second=False)
    close(r[1][0], [0.0, 0.25], "sqrt(f(x)) at (-1, 4)")


@pytest.mark.parametrize("name", sorted(SQRT_OF))
@pytest.mark.parametrize("bad", [NAN, INF])
def test_masked_backward_with_nan_or_inf_incoming(name, bad):
    f_ag, f_t = SQRT_OF[name]
    r = agrees(f_ag, f_t, [[-1.0, 2.0]], cot=[bad, 1.0], second=False)
    close(r[1][0], [0.0, 1.0], "gradient")


def test_max_min_dim_and_max_pool_select():
    x = [[1.0, 3.0, 2.0], [4.0, 0.0, 5.0]]
    agrees(lambda a: ag.max_dim(a, 1, False)[0], lambda a: torch.max(a, 1)[0], [x], cot=[NAN, INF], second=False)
    agrees(lambda a: ag.min_dim(a, 0, False)[0], lambda a: torch.min(a, 0)[0], [x], cot=[NAN, 1.0, INF], second=False)
    xp = np.arange(16.0).reshape(1, 1, 4, 4)[:, :, :, ::-1].copy()
    agrees(lambda a: ag.max_pool2d(a, 2, 2, 0, 1, False), lambda a: Fn.max_pool2d(a, 2, 2), [xp],
           cot=[[[[NAN, 1.0], [INF, 2.0]]]], second=False)


def test_dropout_multiplies_as_pytorch():
    """PyTorch's dropout backward multiplies by its mask (NaN stays NaN where dropped); so does ag's."""
    x = ag.ones(64, dtype=ag.float64, requires_grad=True)
    y = ag.dropout(x, 0.5, True)
    g = ag.grad([y], [x], [ag.full((64,), NAN, dtype=ag.float64)])[0]
    assert all(math.isnan(v) for v in g.tolist())
    xt = torch.ones(64, dtype=torch.float64, requires_grad=True)
    gt = torch.autograd.grad([Fn.dropout(xt, 0.5)], [xt], [torch.full((64,), NAN, dtype=torch.float64)])[0]
    assert torch.isnan(gt).all()


# Conventions at singular points (documented in the ops' headers).

def test_convention_elu_second_derivative_at_zero_is_zero_as_pytorch():
    agrees(lambda a: ag.elu(a, 0.7), lambda a: Fn.elu(a, 0.7), [[0.0, -0.0]])


def test_convention_softplus_at_threshold_as_pytorch():
    agrees(lambda a: ag.softplus(a, 2.0, 20.0), lambda a: Fn.softplus(a, 2.0, 20.0), [[10.0, 9.0, 11.0]])


def test_convention_maximum_with_nan_as_pytorch():
    for order in (0, 1):
        def f(lib):
            mx = ag.maximum if lib == "ag" else torch.maximum
            mn = ag.minimum if lib == "ag" else torch.minimum
            return lambda a, b: mx(a, b) + mn(a, b) if order == 0 else mx(b, a) * 2.0
        agrees(f("ag"), f("torch"), [[NAN, 1.0, 2.0], [2.0, NAN, 2.0]], second=False)


def test_convention_norm2_of_zeros_second_derivative_is_zero():
    """PyTorch gives NaN (0 * inf); ag gives 0, as PyTorch does for std at a constant slice."""
    r = derivatives("ag", lambda a: ag.norm_dims(a, [0], False, 2.0), [[0.0, 0.0, 0.0]])
    close(r[1][0], [0.0, 0.0, 0.0], "gradient")
    close(r[2][0], [0.0, 0.0, 0.0], "second")
    rs = derivatives("torch", lambda a: torch.std(a, 0), [[3.0, 3.0, 3.0]])
    close(derivatives("ag", lambda a: ag.std_dims(a, [0], False, 1.0), [[3.0, 3.0, 3.0]])[2][0], rs[2][0], "std")


def test_convention_bce_at_probability_zero_and_one():
    """ag differentiates the loss it computes (the log clamped at -100 has slope 0):
    (1 - t) / (1 - p) at p = 0 and -t / p at p = 1; PyTorch divides by max(p (1 - p), 1e-12)."""
    t = np.array([0.3, 0.6])
    r = derivatives("ag", lambda p: ag.binary_cross_entropy(p, ag.tensor(t), "sum"), [[0.0, 1.0]], second=False)
    close(r[1][0], [(1 - t[0]) / 1.0, -t[1] / 1.0], "gradient")
    rt = derivatives("torch", lambda p: Fn.binary_cross_entropy(p, torch.tensor(t), reduction="sum"), [[0.0, 1.0]],
                     second=False)
    close(r[0], rt[0], "value")


def test_convention_pow_zero_base_second_derivative_in_exponent():
    """0^b = 0 for every b > 0, so every derivative in b is 0 there (PyTorch: NaN from 0 * log 0)."""
    a = ag.tensor([0.0, 0.0, 2.0], dtype=ag.float64, requires_grad=True)
    b = ag.tensor([0.5, 2.0, 1.5], dtype=ag.float64, requires_grad=True)
    gb = ag.grad([ag.pow(a, b).sum()], [b], create_graph=True)[0]
    ggb = ag.grad([gb.sum()], [b])[0].tolist()
    assert ggb[:2] == [0.0, 0.0]
    close(ggb[2], 2.0 ** 1.5 * math.log(2.0) ** 2, "d2/db2 2^b")


def test_hessian_of_relu_network_is_zero():
    rng = np.random.default_rng(5)
    w1, w2, x0 = rng.normal(size=(4, 3)), rng.normal(size=(1, 4)), rng.normal(size=3)
    wa1, wa2 = ag.tensor(w1), ag.tensor(w2)
    h = ag.functional.hessian(lambda x: ag.matmul(wa2, ag.relu(ag.matmul(wa1, x))).sum(), ag.tensor(x0))
    wt1, wt2 = torch.tensor(w1), torch.tensor(w2)
    ht = torch.autograd.functional.hessian(lambda x: (wt2 @ torch.relu(wt1 @ x)).sum(), torch.tensor(x0))
    close(np.asarray(h.tolist()), ht.numpy(), "hessian")
    assert np.asarray(h.tolist()).shape == (3, 3) and not np.asarray(h.tolist()).any()
