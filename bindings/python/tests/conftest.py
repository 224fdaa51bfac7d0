import gc
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import ag  # noqa: E402

try:
    import numpy  # noqa: F401
    HAVE_NUMPY = True
except ImportError:
    HAVE_NUMPY = False

try:
    import torch  # noqa: F401
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False

needs_numpy = pytest.mark.skipif(not HAVE_NUMPY, reason="numpy is not installed")
needs_torch = pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch (the oracle) is not installed for this Python")
needs_buffer = pytest.mark.skipif(not ag.has_symbol("ag_tensor_from_buffer"),
                                  reason="libag lacks ag_tensor_from_buffer")
needs_dlpack = pytest.mark.skipif(not ag.has_symbol("ag_tensor_from_buffer") or
                                  not ag.has_symbol("ag_tensor_to_dlpack"),
                                  reason="libag lacks ag_tensor_from_buffer")


@pytest.fixture
def fresh_ctx():
    """A private context whose memory statistics only this test touches."""
    with ag.Context(num_threads=1) as ctx:
        yield ctx
    gc.collect()
