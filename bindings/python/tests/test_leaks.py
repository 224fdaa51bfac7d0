"""Leak checks: a workload over hooks, custom Functions, the functional API,
an optimizer and numpy buffers, run many times in a private context, leaves
the context's bytes_in_use at 0, no Python callback registered with C, no
ctypes callback trampoline beyond those the binding keeps for the process,
and no growth of Python's own memory from one round to the next."""
import ctypes
import gc
import tracemalloc

import pytest

import ag
from conftest import needs_numpy


class Square(ag.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * x * g


def trampolines():
    """Live ctypes function pointers (the C-callable callback trampolines)."""
    gc.collect()
    return sum(1 for o in gc.get_objects() if isinstance(o, ctypes._CFuncPtr))


def workload(ctx, with_numpy):
    # 16 x 16: larger than the few bytes ag keeps inside a tensor's header
    w = ag.tensor([[(i - j) / 16.0 for j in range(16)] for i in range(16)], dtype=ag.float64,
                  requires_grad=True, ctx=ctx)
    x = ag.tensor([[(i * j % 7) / 7.0 for j in range(16)] for i in range(16)], dtype=ag.float64, ctx=ctx)
    seen = []
    h1 = w.register_hook(lambda g: g * 2)
    h2 = w.register_post_accumulate_grad_hook(lambda t: seen.append(1))
    y = Square.apply(x.matmul(w)).tanh()
    y.sum().backward(create_graph=True)
    g2 = (w.grad * w.grad).sum()
    g2.backward()
    h1.remove()
    del h2  # released, the hook stays with w until w goes
    vjp_out, vjp = ag.functional.vjp(lambda a: (a * a).sum(), w.detach())
    opt = ag.optim.Adam([w], lr=0.01)
    opt.step()
    opt.zero_grad()
    if with_numpy:
        import numpy as np
        a = np.arange(600.0).reshape(20, 30)
        t = ag.from_numpy(a, ctx=ctx)
        back = (t * 2).numpy()
        assert back[1, 2] == 64.0
    assert len(seen) == 2
    return float(vjp_out.item()) + float(vjp.sum().item())


def run_rounds(n, with_numpy):
    with ag.Context(num_threads=1) as ctx:
        for _ in range(n):
            workload(ctx, with_numpy)
        gc.collect()
        stats = ctx.memory_stats()
    return stats


@pytest.mark.parametrize("with_numpy", [False, pytest.param(True, marks=needs_numpy)])
def test_workload_leaves_nothing(with_numpy):
    gc.collect()
    registry, pointers = ag.callback_registry_size(), trampolines()
    stats = run_rounds(5, with_numpy)
    assert stats["bytes_in_use"] == 0, stats
    assert stats["allocations"] > 0
    gc.collect()
    assert ag.callback_registry_size() == registry, "a Python callback outlived its C registration"
    assert trampolines() == pointers, "ctypes callback trampolines were created per call and kept"


def test_python_memory_does_not_grow():
    run_rounds(3, False)  # warm caches (op tables, ctypes prototypes)
    gc.collect()
    tracemalloc.start()
    try:
        run_rounds(5, False)
        gc.collect()
        first, _ = tracemalloc.get_traced_memory()
        run_rounds(20, False)
        gc.collect()
        second, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # 15 more rounds of the workload: anything kept per round would show.
    assert second - first < 16 * 1024, (first, second)
