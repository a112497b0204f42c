"""The registry of codegen cases (``CASES``, ``@case``) and misuse rows (``MISUSES``,
``@misuse``), and what the family modules share."""

import numpy as np
from numba import cuda
from numba.cuda import types

import coop

SCALARS = {
    "bool": (np.bool_, types.boolean),
    "int8": (np.int8, types.int8),
    "int16": (np.int16, types.int16),
    "int32": (np.int32, types.int32),
    "int64": (np.int64, types.int64),
    "uint8": (np.uint8, types.uint8),
    "uint16": (np.uint16, types.uint16),
    "uint32": (np.uint32, types.uint32),
    "uint64": (np.uint64, types.uint64),
    "float16": (np.float16, types.float16),
    "float32": (np.float32, types.float32),
    "float64": (np.float64, types.float64),
    "complex64": (np.complex64, types.complex64),
    "complex128": (np.complex128, types.complex128),
}
NUMERIC = [name for name in SCALARS if name != "bool"]
ORDERED = [name for name in SCALARS if not name.startswith("complex")]

CASES = {}
MISUSES = {}
LAUNCH_THREADS = {}


def case(name, sig):
    def register(fn):
        CASES[name] = (fn, sig)
        return fn

    return register


def misuse(name, sig, message, threads=128):
    """A kernel that must fail with ``message``: compiled here (``test_codegen.py``) and
    launched with ``threads`` threads on the simulator or the GPU (``test_misuse.py``)."""

    def register(fn):
        MISUSES[name] = (fn, sig, message)
        LAUNCH_THREADS[name] = threads
        return fn

    return register


def _op_for(name):
    if name == "bool":
        return coop.ops.logical_or
    if name.startswith("complex"):
        return coop.ops.mul
    return coop.ops.max


@cuda.jit(device=True)
def running_total(state, block_aggregate):
    prefix = state[0]
    state[0] += block_aggregate
    return prefix
