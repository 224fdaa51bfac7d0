"""Zero-copy numpy and DLPack exchange with numpy and PyTorch: shared memory is
proven by writing on one side and reading on the other; lifetimes in either order."""
import gc
import weakref

import pytest

import ag
from conftest import needs_buffer, needs_dlpack, needs_numpy, needs_torch, HAVE_NUMPY

if HAVE_NUMPY:
    import numpy as np

pytestmark = [needs_numpy, needs_buffer]


def test_from_numpy_shares_memory_both_ways():
    a = np.arange(6, dtype=np.float64).reshape(2, 3)
    t = ag.from_numpy(a)
    a[0, 1] = 42.0
    assert t.tolist()[0][1] == 42.0
    with ag.no_grad():
        t.add_(1.0)
    assert a[0, 1] == 43.0 and a[1, 2] == 6.0


@pytest.mark.parametrize("view", ["T", "step", "col"])
def test_from_numpy_strided_views(view):
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    a = {"T": base.T, "step": base[::2], "col": base[:, 1::3]}[view]
    t = ag.from_numpy(a)
    assert t.shape == a.shape and t.tolist() == a.tolist()
    base[...] += 100
    assert t.tolist() == a.tolist()  # still the same memory


def test_read_only_array_refuses_in_place():
    a = np.ones(3)
    a.flags.writeable = False
    t = ag.from_numpy(a)
    assert (t * 2).tolist() == [2, 2, 2]
    with pytest.raises(ag.UnsupportedError):
        with ag.no_grad():
            t.add_(1.0)
    assert a.tolist() == [1, 1, 1]


def test_lifetimes_and_deleter_once():
    from ag import _interop
    gc.collect()
    before_calls, before_reg = _interop.deleter_calls, ag.callback_registry_size()
    a = np.arange(4, dtype=np.int64)
    ref = weakref.ref(a)
    t = ag.from_numpy(a)
    del a
    gc.collect()
    assert ref() is not None and t.tolist() == [0, 1, 2, 3]  # ag keeps the array alive
    v = t[1:]
    del t
    gc.collect()
    assert ref() is not None and v.tolist() == [1, 2, 3]  # a view keeps it too
    del v
    gc.collect()
    assert ref() is None and _interop.deleter_calls == before_calls + 1
    assert ag.callback_registry_size() == before_reg


def test_numpy_view_of_tensor_keeps_tensor_alive():
    t = ag.tensor([1.0, 2.0, 3.0], dtype=ag.float64)
    a = t.numpy()
    with ag.no_grad():
        t.mul_(2.0)
    assert a.tolist() == [2, 4, 6]
    a[0] = -1
    assert t.tolist()[0] == -1
    del t
    gc.collect()
    assert a.tolist() == [-1, 4, 6]
    assert np.asarray(ag.tensor([[1, 2]])).tolist() == [[1, 2]]
    tt = ag.arange(6).reshape(2, 3).transpose(0, 1)
    assert np.asarray(tt).tolist() == [[0, 3], [1, 4], [2, 5]]


@needs_dlpack
def test_dlpack_with_numpy():
    t = ag.tensor([1.0, 2.0, 3.0], dtype=ag.float64)
    a = np.from_dlpack(t)
    # numpy < 2 marks DLPack imports read-only: write through ag, read in numpy.
    t.add_(ag.tensor([0.0, 18.0, 0.0], dtype=ag.float64))
    assert a.tolist() == [1.0, 20.0, 3.0]
    del t
    gc.collect()
    assert a.tolist() == [1.0, 20.0, 3.0]
    b = np.arange(3, dtype=np.float64)
    u = ag.from_dlpack(b)
    b[0] = 7.0
    assert u.tolist() == [7.0, 1.0, 2.0]
    del b
    gc.collect()
    assert u.tolist() == [7.0, 1.0, 2.0]
    cap = ag.tensor([5.0]).__dlpack__()
    del cap  # an unused capsule deletes its export
    assert ag.tensor([1]).__dlpack_device__() == (1, 0)


@needs_dlpack
@needs_torch
def test_dlpack_with_torch():
    import torch
    t = ag.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=ag.float64)
    x = torch.from_dlpack(t)
    x[0, 0] = 10.0
    assert t.tolist()[0][0] == 10.0
    y = torch.arange(6, dtype=torch.float32).reshape(2, 3).t()
    u = ag.from_dlpack(y)
    assert u.shape == (3, 2) and u.tolist() == y.tolist()
    y[0, 0] = -5.0
    assert u.tolist()[0][0] == -5.0
    del y, x
    gc.collect()
    assert u.tolist()[0][0] == -5.0
    w = ag.from_dlpack(torch.utils.dlpack.to_dlpack(torch.ones(2, dtype=torch.int64)))
    assert w.dtype is ag.int64 and w.tolist() == [1, 1]
