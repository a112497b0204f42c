"""The misuse table (``codegen_cases.MISUSES``) on the path the tests run on: each kernel
is launched on the simulator (or the GPU) and must fail with the message that
``test_codegen.py`` checks for the compiled code. One table, one message, both paths."""

import re

import numpy as np
import pytest

import codegen_cases
from helpers import ON_GPU, expect_link_error
from numba import cuda
from numba.cuda import types


def _plain(text):
    return " ".join(re.sub(r"\x1b\[[0-9;]*m", "", text).split())


def _arguments(signature):
    """Zero-filled arrays of the kernel's argument types."""
    arrays = []
    for array_type in signature:
        assert isinstance(array_type, types.Array), array_type
        shape = (1024,) if array_type.ndim == 1 else (16, 1024)
        dtype = np.dtype(str(array_type.dtype)) if not isinstance(array_type.dtype, types.NPDatetime) else "datetime64[s]"
        arrays.append(np.zeros(shape, dtype))
    return arrays


@pytest.mark.parametrize("name", list(codegen_cases.MISUSES))
def test_misuse_raises_the_compiled_message(name):
    fn, signature, expected = codegen_cases.MISUSES[name]
    if expected.startswith("coop_error__"):
        expect_link_error(expected)
        if ON_GPU:
            pytest.skip("link errors are checked by test_codegen.py (compile_ptx)")
    with pytest.raises(Exception) as error:
        if signature is None:
            fn()
        else:
            cuda.jit(fn)[1, codegen_cases.LAUNCH_THREADS[name]](*_arguments(signature))
    assert expected in _plain(str(error.value)), _plain(str(error.value))[:2000]
