"""The elementwise ops and activations added in 0.2 at their special points
(kinks, poles, zeros, the bounds of clamped ranges, infinities and NaN)
against PyTorch 1.13 in float64: values, gradients and second-order
products (see test_singular_points.agrees)."""
import math

import pytest

import ag
from conftest import HAVE_TORCH
from test_singular_points import agrees

if HAVE_TORCH:
    import numpy as np
    import torch
    import torch.nn.functional as Fn

pytestmark = pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch (the oracle) is not installed for this Python")
NAN, INF = math.nan, math.inf


def test_sinc_at_zero_and_integers():
    agrees(ag.sinc, torch.sinc, [[1.0, -2.0, 0.5, 0.04, INF]])
    # near 0 PyTorch's gradient formula cancels (second derivative NaN at 0): ag's series, exact values
    from test_singular_points import derivatives, close
    x = np.array([0.0, -0.0, 1e-9, -1e-5])
    y, (g,), (h,) = derivatives("ag", ag.sinc, [x])
    u = np.pi * x
    close(y, np.sinc(x), "value")
    close(g, np.pi * (-u / 3 + u ** 3 / 30), "gradient")
    close(h, np.pi ** 2 * (-1 / 3 + u ** 2 / 10), "second derivative")


@pytest.mark.parametrize("x", [[-3.0, 3.0, -4.0, 4.0, 0.0, 2.5, NAN], [-3.0 - 1e-12, 3.0 + 1e-12, -2.999]])
def test_hard_activations_at_their_bounds(x):
    agrees(ag.hardswish, Fn.hardswish, [x])
    # torch 1.13's hardsigmoid gradient is 1/6 rounded to float32 (ag: to float64), no second derivative
    agrees(ag.hardsigmoid, Fn.hardsigmoid, [x], second=False, rtol=1e-7)


def test_relu6_at_its_bounds():
    agrees(ag.relu6, Fn.relu6, [[0.0, 6.0, -1.0, 7.0, 3.0]])


@pytest.mark.parametrize("lambd", [0.5, 0.0])
def test_shrinks_at_lambd(lambd):
    x = [[lambd, -lambd, 0.0, 1.0, -1.0, NAN]]
    agrees(lambda a: ag.softshrink(a, lambd), lambda a: Fn.softshrink(a, lambd), x)
    agrees(lambda a: ag.hardshrink(a, lambd), lambda a: Fn.hardshrink(a, lambd), x)


def test_threshold_at_threshold():
    agrees(lambda a: ag.threshold(a, 0.5, -2.0), lambda a: Fn.threshold(a, 0.5, -2.0), [[0.5, 0.4, 0.6, NAN]])


def test_celu_and_prelu_at_zero():
    # alpha 1/2: torch 1.13 rounds 1 / alpha to float32 (its gradient at -0.5 for alpha 0.7 is off by 2e-8)
    agrees(lambda a: ag.celu(a, 0.5), lambda a: torch.celu(a, 0.5), [[0.0, -800.0, 800.0, -0.5]])
    agrees(ag.prelu, Fn.prelu, [[[0.0, -1.0, 2.0], [0.0, 0.0, -3.0]], [0.25, -0.5, 1.5]])


def test_copysign_at_zero():
    # the second derivative at a = 0: ag 0 (a constant gradient), torch NaN
    agrees(ag.copysign, torch.copysign, [[0.0, -0.0, 2.0, -2.0, 1.0], [-1.0, 1.0, -0.0, 0.0, NAN]], second=False)
    agrees(ag.copysign, torch.copysign, [[2.0, -2.0, 1.0], [-0.0, 0.0, NAN]])


def test_xlogy_at_zero_and_nan():
    agrees(ag.xlogy, torch.xlogy, [[0.0, 0.0, 2.0, 0.0, -1.5], [0.0, 3.0, 0.0, NAN, 2.0]])


@pytest.mark.parametrize("eps", [None, 0.2])
def test_logit_at_its_bounds(eps):
    x = [[0.0, 1.0, 0.2, 0.8, 0.5, 1.5, -0.5]]
    agrees(lambda a: ag.logit(a, -1.0 if eps is None else eps), lambda a: torch.logit(a, eps), x)


def test_digamma_lgamma_at_poles():
    x = [[0.0, -0.0, -2.5, 1.0, 1e-8, 30.0, INF]]
    # torch's trigamma (digamma's gradient) is accurate to about 1e-9 relative
    agrees(ag.digamma, torch.digamma, x, second=False, rtol=1e-9)
    agrees(ag.lgamma, torch.lgamma, x, second=False, rtol=1e-9)
    agrees(ag.digamma, torch.digamma, [[0.5, 1.4616321449683622, 7.25, -0.5, -3.7]], rtol=1e-9)
    agrees(ag.lgamma, torch.lgamma, [[0.5, 2.0, 1.0, -0.5, -3.7, 1e3]], rtol=1e-9)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_polygamma_at_poles_and_below_zero(n):
    x = [[-2.5, 0.25, 11.0, -0.5, -1e3 - 0.5]]  # at +inf: ag 0 (the limit), torch NaN
    agrees(lambda a: ag.polygamma(n, a), lambda a: torch.polygamma(n, a), x, second=False, rtol=1e-9)


def test_erfinv_at_one_and_erfc_tails():
    agrees(ag.erfinv, torch.erfinv, [[1.0, -1.0, 0.0, 1.5, -0.999999, 1e-300]], second=False, rtol=1e-10)
    # the far tail, where torch's erfinv is off by 4e-4: erfc(erfinv(y)) = 1 - y
    y = np.array([1 - 1e-15, 1 - 2 ** -40, -(1 - 1e-12)])
    x = np.asarray(ag.erfinv(ag.tensor(y)).tolist())
    np.testing.assert_allclose([math.erfc(abs(v)) for v in x], 1 - abs(y), rtol=1e-6)
    agrees(ag.erfinv, torch.erfinv, [[0.3, -0.7, 0.99, 1e-10]])
    agrees(ag.erfc, torch.erfc, [[-INF, INF, 0.0, 0.49, 0.51, -0.99, -1.01, 5.0, 26.0, 27.5, -6.0]])


def test_exp2_and_inverse_hyperbolics_at_edges():
    agrees(ag.exp2, torch.exp2, [[0.0, 3.0, -1074.0, 1023.5, 1024.0, -1080.0, -INF, INF, NAN, 0.5]])
    agrees(ag.asinh, torch.asinh, [[0.0, -0.0, INF, -INF, 1e300, -1e-300]], second=False)
    agrees(ag.acosh, torch.acosh, [[1.0, INF, 0.5, 1e300]], second=False)
    agrees(ag.atanh, torch.atanh, [[1.0, -1.0, 0.0, 1.5]], second=False)


def test_frac_nan_to_num_logsigmoid_at_infinities():
    agrees(ag.frac, torch.frac, [[INF, -INF, -2.0, 2.5, -2.5, NAN]])
    agrees(lambda a: ag.nan_to_num(a, 0.0, NAN, NAN), torch.nan_to_num, [[NAN, INF, -INF, 1.0]])
    agrees(ag.logsigmoid, Fn.logsigmoid, [[-800.0, 800.0, 0.0, -INF, INF]])
    agrees(ag.softsign, Fn.softsign, [[0.0, -3.0, 1e300]])
    agrees(ag.tanhshrink, Fn.tanhshrink, [[0.0, 1e-8, -30.0]])
