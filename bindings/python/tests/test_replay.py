"""ag.graph / ag.Graph (ag/replay.h): a recorded MLP step replayed with new
inputs gives bitwise the loss and gradients of the same step run eagerly;
the .grad is overwritten, not accumulated; random ops refuse recording."""
import numpy as np
import pytest

import ag


def _step(x, w1, w2, target):
    loss = ag.cross_entropy((x @ w1).relu() @ w2, target)
    loss.backward()
    return loss


def _values(seed, shape):
    return np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32)


def test_replay_matches_eager():
    with ag.Context(num_threads=1) as ctx:
        target = ag.tensor(np.array([0, 1, 2, 1], dtype=np.int64), ctx=ctx)
        x = ag.tensor(_values(1, (4, 5)), ctx=ctx)
        w1 = ag.tensor(_values(2, (5, 6)), requires_grad=True, ctx=ctx)
        w2 = ag.tensor(_values(3, (6, 3)), requires_grad=True, ctx=ctx)
        g = ag.Graph()
        with ag.graph(g, ctx):
            loss = _step(x, w1, w2, target)
        assert g.num_steps > 0
        for seed in (10, 11, 12):
            new_x = ag.tensor(_values(seed, (4, 5)), ctx=ctx)
            g.replay({x: new_x})
            g.replay({x: new_x})  # twice: overwritten, not accumulated
            ex = ag.tensor(_values(seed, (4, 5)), ctx=ctx)
            e1 = ag.tensor(_values(2, (5, 6)), requires_grad=True, ctx=ctx)
            e2 = ag.tensor(_values(3, (6, 3)), requires_grad=True, ctx=ctx)
            eager = _step(ex, e1, e2, target)
            assert np.array_equal(loss.numpy(), eager.numpy())
            assert np.array_equal(w1.grad.numpy(), e1.grad.numpy())
            assert np.array_equal(w2.grad.numpy(), e2.grad.numpy())


def test_refusals():
    with ag.Context(num_threads=1) as ctx:
        x = ag.tensor(_values(1, (3,)), requires_grad=True, ctx=ctx)
        g = ag.Graph()
        with pytest.raises(ag.UnsupportedError, match="ag_op_randn"):
            with ag.graph(g, ctx):
                ag.randn(3, ctx=ctx)
        g = ag.Graph()
        with ag.graph(g, ctx):
            y = (x * x).sum()
            y.backward()
        with pytest.raises(ag.ShapeError):
            g.replay({x: ag.tensor(_values(2, (4,)), ctx=ctx)})
