"""coop.allow_dynamic_shared_memory: its example (a 96 KiB exchange through a dynamic
shared array) and its errors. On a GPU the radix and merge sort tests launch their
biggest tiles through it too (helpers.launch_with_dynamic_shared)."""

import re

import numpy as np
import pytest
from numba import cuda

import coop
from test_docs import _literal_blocks, _run


def test_example_runs():
    (code,) = [code for _, code in _literal_blocks(coop.allow_dynamic_shared_memory.__doc__.split("Example")[1])
               if "import coop" in code]
    _run(code, "coop.allow_dynamic_shared_memory")


@cuda.jit
def kernel(x):
    x[0] = 1


@cuda.jit(device=True)
def device_function(x):
    return x


@pytest.mark.parametrize("nbytes", [-1, 1.5, True, "64K"])
def test_nbytes_must_be_a_byte_count(nbytes):
    with pytest.raises(ValueError, match=re.escape("coop.allow_dynamic_shared_memory: nbytes must be a number of "
                                                   "bytes, an int of at least 0, got")):
        coop.allow_dynamic_shared_memory(kernel, nbytes, np.zeros(1, np.int32))


@pytest.mark.parametrize("value", [device_function, print, None])
def test_kernel_must_be_a_kernel(value):
    with pytest.raises(TypeError, match="coop.allow_dynamic_shared_memory: kernel must be a @cuda.jit kernel"):
        coop.allow_dynamic_shared_memory(value, 1024, np.zeros(1, np.int32))


@pytest.mark.skipif(coop.SIMULATOR, reason="the simulator has no shared-memory limit")
def test_more_than_the_device_allows_is_refused():
    with pytest.raises(ValueError, match="nbytes must be at most"):
        coop.allow_dynamic_shared_memory(kernel, 1 << 30, np.zeros(1, np.int32))
