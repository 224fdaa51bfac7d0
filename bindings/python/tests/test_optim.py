"""ag.optim (ag's C optimizers) against torch.optim on the same gradients, in float64."""
import math

import numpy as np
import pytest

import ag

torch = pytest.importorskip("torch", reason="PyTorch is the oracle of these tests")

CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.8, dampening=0.1, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1, amsgrad=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, weight_decay=0.0, betas=(0.0, 0.99))),
    ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, initial_accumulator_value=0.5)),
]


@pytest.mark.parametrize("name,options", CASES, ids=lambda c: str(c))
def test_optimizer_matches_torch(name, options):
    rng = np.random.default_rng(7)
    init = [rng.standard_normal((3, 4)), rng.standard_normal(5)]
    grads = [[rng.standard_normal(a.shape) for a in init] for _ in range(12)]
    ps = [ag.tensor(a, dtype=ag.float64, requires_grad=True) for a in init]
    ts = [torch.tensor(a, requires_grad=True) for a in init]
    opt = getattr(ag.optim, name)(ps, **options)
    topt = getattr(torch.optim, name)(ts, **options)
    for step, gs in enumerate(grads):
        for p, t, g in zip(ps, ts, gs):
            if step % 4 == 3 and p is ps[1]:
                p.grad, t.grad = None, None  # a parameter without a gradient is skipped
            else:
                p.grad = ag.tensor(g, dtype=ag.float64)
                t.grad = torch.tensor(g)
        opt.step()
        topt.step()
    for p, t in zip(ps, ts):
        np.testing.assert_allclose(p.detach().numpy(), t.detach().numpy(), rtol=1e-12, atol=1e-12)


def test_param_groups_and_lr_changes_match_torch():
    a, b = np.linspace(-1, 1, 6), np.linspace(2, 3, 4)
    ps = [ag.tensor(x, dtype=ag.float64, requires_grad=True) for x in (a, b)]
    ts = [torch.tensor(x, requires_grad=True) for x in (a, b)]
    opt = ag.optim.SGD([{"params": [ps[0]]}, {"params": [ps[1]], "lr": 0.5}], lr=0.1, momentum=0.9)
    topt = torch.optim.SGD([{"params": [ts[0]]}, {"params": [ts[1]], "lr": 0.5}], lr=0.1, momentum=0.9)
    for step in range(6):
        for o in (opt, topt):
            for g in o.param_groups:
                g["lr"] *= 0.7 if step else 1.0
        ((ps[0] * ps[0]).sum() + (ps[1] ** 3).sum()).backward()
        ((ts[0] * ts[0]).sum() + (ts[1] ** 3).sum()).backward()
        opt.step(), topt.step()
        opt.zero_grad(), topt.zero_grad()
        assert ps[0].grad is None
    for p, t in zip(ps, ts):
        np.testing.assert_allclose(p.detach().numpy(), t.detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize("norm_type", [2.0, 1.0, math.inf])
def test_clip_grad_norm_matches_torch(norm_type):
    rng = np.random.default_rng(3)
    gs = [rng.standard_normal(7) * 3, rng.standard_normal((2, 3))]
    ps = [ag.tensor(np.zeros_like(g), dtype=ag.float64, requires_grad=True) for g in gs]
    ts = [torch.zeros(g.shape, dtype=torch.float64, requires_grad=True) for g in gs]
    for p, t, g in zip(ps, ts, gs):
        p.grad, t.grad = ag.tensor(g, dtype=ag.float64), torch.tensor(g)
    total = ag.optim.clip_grad_norm_(ps, 1.5, norm_type)
    ttotal = torch.nn.utils.clip_grad_norm_(ts, 1.5, norm_type)
    assert total == pytest.approx(float(ttotal), rel=1e-12)
    for p, t in zip(ps, ts):
        np.testing.assert_allclose(p.grad.numpy(), t.grad.numpy(), rtol=1e-12)
    ag.optim.clip_grad_value_(ps, 0.1)
    torch.nn.utils.clip_grad_value_(ts, 0.1)
    for p, t in zip(ps, ts):
        np.testing.assert_allclose(p.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-15)


def test_bad_options_raise():
    p = ag.tensor([1.0], requires_grad=True)
    with pytest.raises(TypeError):
        ag.optim.Adam([p], momentum=0.9)  # not an Adam option
    with pytest.raises(ag.Error, match="ag_optimizer_add_param_group"):
        ag.optim.SGD([p, p], lr=0.1)  # one parameter twice
    with pytest.raises(ag.DTypeError):
        ag.optim.SGD([ag.tensor([1, 2])], lr=0.1)  # integer parameters


def test_state_round_trip_continues_like_an_uninterrupted_run():
    """Adam's state and step count copied into a fresh optimizer give the same next steps."""
    rng = np.random.default_rng(11)
    init = rng.standard_normal(6)
    grads = [rng.standard_normal(6) for _ in range(8)]
    a = ag.tensor(init, dtype=ag.float64, requires_grad=True)
    b = ag.tensor(init, dtype=ag.float64, requires_grad=True)
    oa, ob = ag.optim.Adam([a], lr=0.05), ag.optim.Adam([b], lr=0.05)
    assert oa.num_params == 1 and oa.num_groups == 1 and oa.get_lr() == pytest.approx(0.05)
    assert oa.state(0, "exp_avg") is None
    for g in grads[:4]:
        a.grad = ag.tensor(g, dtype=ag.float64)
        oa.step()
    with ag.no_grad():
        b.copy_(a)
    for name in ("exp_avg", "exp_avg_sq"):
        ob.set_state(0, name, oa.state(0, name))
    ob.set_step_count(0, oa.step_count(0))
    assert ob.step_count(0) == 4
    for g in grads[4:]:
        for p, o in ((a, oa), (b, ob)):
            p.grad = ag.tensor(g, dtype=ag.float64)
            o.step()
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
