"""Test data, NumPy references and the test matrix, shared by the test modules."""

import functools
import operator
import os

import numpy as np
import pytest

import coop  # noqa: F401 (first: on the simulator, its cuda.jit takes launch_bounds)
from numba import cuda

ON_GPU = os.environ.get("COOP_TEST_MODE") == "gpu"
# The full matrix by default on a GPU; COOP_TEST_MATRIX=small picks the simulator's
# (for compute-sanitizer runs, which are slow).
FULL_MATRIX = os.environ.get("COOP_TEST_MATRIX", "full" if ON_GPU else "small") == "full"


STATIC_SHARED_BYTES = 48 * 1024

# kernels of up to 1024 threads need launch bounds of 1024 on a GPU (64 registers a
# thread), as CUDA C++ kernels need __launch_bounds__ (the simulator ignores them)
jit_any_block = cuda.jit(launch_bounds=1024)


def size_of(shape):
    """Threads of a block shape (an int or a tuple)."""
    return int(np.prod(shape))


def launch_shape(shape):
    return shape if isinstance(shape, tuple) else (shape,)


def shape_id(shape):
    return "x".join(map(str, shape)) if isinstance(shape, tuple) else str(shape)


def launch_with_dynamic_shared(kernel, blocks, threads, nbytes, *args):
    """Launch ``kernel`` with ``nbytes`` of dynamic shared memory (its
    ``cuda.shared.array(0, ...)``), allowed more than 48 KiB first where it asks for more
    (``coop.allow_dynamic_shared_memory``, as CUDA C++'s cudaFuncSetAttribute)."""
    if nbytes > STATIC_SHARED_BYTES:
        import coop

        coop.allow_dynamic_shared_memory(kernel, nbytes, *args)
    kernel[blocks, threads, 0, nbytes](*args)


def expect_link_error(symbol):
    """Arrays too small fail to link naming ``symbol`` where NVVM folds llvm.is.constant
    (coop._core.misuse); elsewhere (CUDA 12's NVVM) they go unchecked: skip."""
    from coop._core import misuse

    if ON_GPU and symbol.startswith("coop_error__") and not misuse.size_checks_available():
        pytest.skip("this NVVM cannot fold llvm.is.constant: arrays too small go unchecked")


#: Kernels that debug mode (``coop.config.debug``) traps in, source for either compiler's
#: ``cuda`` (tests/test_simulator_debugger.py, tests/test_numba_cuda_mlir.py), and each
#: one's launch and the message it prints.
DEBUG_KERNELS = """
@cuda.jit
def launch_mismatch(x, out):
    i = cuda.grid(1)
    out[i] = coop.block.all_sum(x[i], threads=128)

@cuda.jit
def shape_mismatch(x, out):
    i = cuda.grid(1)
    out[i] = coop.block.all_sum(x[i], threads=(128,))

@cuda.jit
def short_output(x, out, n):
    items = cuda.local.array(4, np.int32)
    for k in range(4):
        items[k] = x[k]
    i = cuda.grid(1)
    coop.thread.inclusive_sum(items, out[4 * i : 4 * i + n])
"""
DEBUG_LAUNCHES = {
    "launch_mismatch": ("launch_mismatch[1, 256](np.ones(1024, np.int32), np.zeros(256, np.int32))",
                        "coop.block.all_sum: threads=128 but the block has 256 threads; threads must be the block's "
                        "thread count"),
    "shape_mismatch": ("shape_mismatch[1, (64, 2)](np.ones(1024, np.int32), np.zeros(128, np.int32))",
                       "coop.block.all_sum: threads=(128,) but the block's shape is (64, 2, 1); a tuple threads= "
                       "must be the block's shape (blockDim x, y, z; sizes left out are 1)"),
    "short_output": ("short_output[1, 32](np.ones(1024, np.int32), np.zeros(1024, np.int32), 3)",
                     "coop.thread.inclusive_sum: output holds 3 items, it needs at least 4"),
}


INTEGER_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
FLOAT_DTYPES = [np.float16, np.float32, np.float64]
COMPLEX_DTYPES = [np.complex64, np.complex128]
ALL_DTYPES = [np.bool_] + INTEGER_DTYPES + FLOAT_DTYPES + COMPLEX_DTYPES
NUMERIC_DTYPES = INTEGER_DTYPES + FLOAT_DTYPES + COMPLEX_DTYPES

# The simulator runs one Python thread per CUDA thread: it gets every dtype at one width
# and every width for a few dtypes; the GPU gets the full product.
WIDTHS = [1, 2, 4, 8, 16, 32]


def matrix(dtypes, widths, sim_dtypes=(np.int32, np.float64), sim_width=32):
    """(dtype, width) parameters: the full product on the GPU, a cross on the simulator."""
    if FULL_MATRIX:
        pairs = [(d, w) for d in dtypes for w in widths]
    else:
        pairs = [(d, sim_width) for d in dtypes]
        pairs += [(d, w) for d in sim_dtypes if d in dtypes for w in widths if w != sim_width]
    return [pytest.param(d, w, id=f"{np.dtype(d).name}-w{w}") for d, w in pairs]


def integer_valued(dtype, n, rng, low=-4, high=4):
    """Integer-valued data of ``dtype`` (so float sums are exact), wrapping for small ints."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, n).astype(np.bool_)
    if dtype.kind == "u":
        low = 0
    values = rng.integers(low, high + 1, n)
    if dtype.kind == "c":
        return (values + 1j * rng.integers(low, high + 1, n)).astype(dtype)
    return values.astype(dtype)


def unit_values(dtype, n, rng):
    """Values whose products stay exact: +-1 (and +-1j for complex)."""
    dtype = np.dtype(dtype)
    signs = rng.choice([-1, 1], n)
    if dtype.kind == "c":
        return (signs * rng.choice([1, 1j], n)).astype(dtype)
    if dtype.kind == "u":
        return np.ones(n, dtype)
    return signs.astype(dtype)


# -- reference operators: the same semantics as coop.ops, evaluated in the dtype ---------


def _in_dtype(fn):
    @functools.wraps(fn)
    def wrapped(a, b):
        with np.errstate(over="ignore", invalid="ignore"):
            result = fn(a, b)
        return np.asarray(result).astype(np.asarray(a).dtype)[()]

    return wrapped


REFERENCE_OPS = {
    "add": _in_dtype(operator.add),
    "mul": _in_dtype(operator.mul),
    "max": _in_dtype(lambda a, b: b if a < b else a),
    "min": _in_dtype(lambda a, b: b if b < a else a),
    "bit_xor": _in_dtype(operator.xor),
    "bit_and": _in_dtype(operator.and_),
    "bit_or": _in_dtype(operator.or_),
    "logical_or": _in_dtype(lambda a, b: bool(a) or bool(b)),
    "logical_and": _in_dtype(lambda a, b: bool(a) and bool(b)),
}


def reference_argmax(a, b):
    if a[0] < b[0] or (a[0] == b[0] and b[1] < a[1]):
        return b
    return a


def reference_argmin(a, b):
    if b[0] < a[0] or (a[0] == b[0] and b[1] < a[1]):
        return b
    return a


def ops_for(dtype):
    """The coop.ops operators that make sense for ``dtype`` (by name)."""
    kind = np.dtype(dtype).kind
    if kind == "b":
        return ["logical_or", "logical_and", "bit_xor"]
    if kind in "iu":
        return ["add", "max", "bit_xor"]
    if kind == "f":
        return ["add", "min"]
    return ["add"]  # complex


def reduce_reference(values, op):
    return functools.reduce(op, list(values))


def inclusive_reference(values, op):
    out, running = [], None
    for v in values:
        running = v if running is None else op(running, v)
        out.append(running)
    return out


def exclusive_reference(values, op, initial):
    out, running = [], initial
    for v in values:
        out.append(running)
        running = op(running, v)
    return out


def dtype_id(dtype):
    """A test id for a dtype parameter: its name."""
    return np.dtype(dtype).name


def assert_equal_exact(actual, expected, what):
    actual = np.asarray(actual)
    expected = np.asarray(expected, dtype=actual.dtype)
    if not np.array_equal(actual, expected):
        bad = np.flatnonzero(actual.ravel() != expected.ravel())[:8]
        raise AssertionError(
            f"{what}: {len(np.flatnonzero(actual.ravel() != expected.ravel()))} mismatches, "
            f"first at {bad.tolist()}: got {actual.ravel()[bad].tolist()}, "
            f"expected {expected.ravel()[bad].tolist()}"
        )
