"""The linear algebra ops at their undefined points: singular matrices for
inv and solve, matrices that are not positive-definite for cholesky, shapes
that do not fit. ag returns a status whose message names the batch element
and the pivot (where PyTorch raises), and leaves nothing allocated; det and
slogdet are defined there and are compared with PyTorch, values and
gradients (the cofactor matrix at an exactly singular matrix)."""
import gc
import math

import pytest

import ag
from conftest import HAVE_TORCH, needs_torch

if HAVE_TORCH:
    import numpy as np
    import torch

SINGULAR_BATCH = [[[2.0, 0.0], [0.0, 3.0]],   # element 0 is invertible
                  [[1.0, 2.0], [2.0, 4.0]]]   # element 1: rank 1, the second pivot is 0


def test_inv_singular_names_element_and_pivot(fresh_ctx):
    gc.collect()
    start = fresh_ctx.memory_stats()["bytes_in_use"]
    a = ag.tensor(SINGULAR_BATCH, dtype=ag.float64, requires_grad=True)
    with pytest.raises(ag.InvalidArgumentError) as e:
        ag.inv(a)
    msg = str(e.value)
    assert "ag_op_inv" in msg and "batch element 1" in msg and "pivot 1" in msg, msg
    with pytest.raises(ag.InvalidArgumentError) as e:
        ag.solve(a, ag.tensor([[1.0], [1.0]], dtype=ag.float64))
    assert "batch element 1" in str(e.value) and "pivot 1" in str(e.value)
    with pytest.raises(ag.InvalidArgumentError):
        ag.matrix_power(a, -2)
    del a, e
    gc.collect()
    assert fresh_ctx.memory_stats()["bytes_in_use"] == start


def test_cholesky_not_positive_definite(fresh_ctx):
    gc.collect()
    start = fresh_ctx.memory_stats()["bytes_in_use"]
    a = ag.tensor([[[4.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
                   [[1.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]]], dtype=ag.float32)
    with pytest.raises(ag.InvalidArgumentError) as e:
        ag.cholesky(a, 0)
    msg = str(e.value)
    assert "batch element 1" in msg and "order 2" in msg, msg
    del a, e
    gc.collect()
    assert fresh_ctx.memory_stats()["bytes_in_use"] == start


def test_shapes_and_arguments():
    x = ag.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=ag.float64)
    for f in (ag.inv, ag.det, lambda t: ag.cholesky(t, 0)):
        with pytest.raises(ag.ShapeError):
            f(x)
    with pytest.raises(ag.InvalidArgumentError):
        ag.diagonal(x, 0, 1, -1)  # the same dim twice
    with pytest.raises(ag.InvalidArgumentError) as e:
        ag.einsum("ij,j->i", [x])
    assert "2 operands" in str(e.value)
    with pytest.raises(ag.InvalidArgumentError) as e:
        ag.einsum("i1->i", [x])
    assert "'1'" in str(e.value)
    with pytest.raises(ag.ShapeError):
        ag.cross(x, x, 0)  # dim 0 has size 2


@needs_torch
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_det_slogdet_at_singular_matrices(dtype):
    a_ag = ag.tensor(SINGULAR_BATCH, dtype=getattr(ag, dtype), requires_grad=True)
    a_t = torch.tensor(SINGULAR_BATCH, dtype=getattr(torch, dtype), requires_grad=True)
    d_ag, d_t = ag.det(a_ag), torch.linalg.det(a_t)
    np.testing.assert_allclose(d_ag.tolist(), d_t.tolist(), atol=1e-6)
    # PyTorch's gradient when it records the graph (without, 1.13 returns 0 at
    # exactly singular matrices): the cofactor matrix.
    (g_t,) = torch.autograd.grad(d_t.sum(), a_t, create_graph=True)
    (g_ag,) = ag.grad([d_ag.sum()], [a_ag])
    np.testing.assert_allclose(g_ag.tolist(), g_t.tolist(), atol=1e-5)
    s_ag, l_ag = ag.slogdet(a_ag)
    s_t, l_t = torch.linalg.slogdet(a_t)
    assert s_ag.tolist() == s_t.tolist()
    assert l_ag.tolist()[0] == pytest.approx(math.log(6.0)) and l_ag.tolist()[1] == -math.inf
    assert l_t.tolist()[1] == -math.inf
