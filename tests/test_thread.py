"""coop.thread against NumPy references: every dtype, several items-per-thread."""

import numpy as np
import pytest
from numba import cuda

import coop
from helpers import (
    ALL_DTYPES,
    NUMERIC_DTYPES,
    FULL_MATRIX,
    REFERENCE_OPS,
    assert_equal_exact,
    exclusive_reference,
    inclusive_reference,
    integer_valued,
    ops_for,
    reduce_reference,
)

THREADS = 32


def cases(dtypes):
    sizes = [1, 2, 3, 4, 7, 8, 16] if FULL_MATRIX else [3]
    extra = [] if FULL_MATRIX else [(np.int32, 1), (np.int32, 7), (np.float64, 16)]
    pairs = [(d, n) for d in dtypes for n in sizes] + extra
    return [pytest.param(d, n, id=f"{np.dtype(d).name}-n{n}") for d, n in pairs]


def thread_kernel(op, n, dtype):
    N, DT = n, dtype

    @cuda.jit
    def kernel(x, prefix, reduced, reduced_prefix, inclusive, exclusive, totals):
        t = cuda.grid(1)
        init = prefix[0]  # a run-time value: numba-cuda 0.30 cannot emit float16 constants
        items = cuda.local.array(N, DT)
        out = cuda.local.array(N, DT)
        for i in range(N):
            items[i] = x[t * N + i]
        reduced[t] = coop.thread.reduce(items, op)
        reduced_prefix[t] = coop.thread.reduce(items, op, init)
        totals[0, t] = coop.thread.inclusive_scan(items, out, op)
        for i in range(N):
            inclusive[t * N + i] = out[i]
        totals[1, t] = coop.thread.exclusive_scan(items, items, op, init)  # in place
        for i in range(N):
            exclusive[t * N + i] = items[i]

    return kernel


@pytest.mark.parametrize("dtype,n", cases(ALL_DTYPES))
def test_thread_reduce_and_scan(dtype, n):
    rng = np.random.default_rng(n)
    prefix = np.asarray(1).astype(dtype)[()]
    for name in ops_for(dtype) if FULL_MATRIX else ops_for(dtype)[:1]:
        op, ref = getattr(coop.ops, name), REFERENCE_OPS[name]
        x = integer_valued(dtype, THREADS * n, rng)
        reduced = np.zeros(THREADS, dtype)
        reduced_prefix = np.zeros(THREADS, dtype)
        inclusive = np.zeros(THREADS * n, dtype)
        exclusive = np.zeros(THREADS * n, dtype)
        totals = np.zeros((2, THREADS), dtype)
        thread_kernel(op, n, dtype)[1, THREADS](
            x, np.array([prefix]), reduced, reduced_prefix, inclusive, exclusive, totals
        )
        rows = x.reshape(THREADS, n)
        assert_equal_exact(reduced, [reduce_reference(r, ref) for r in rows], f"reduce {name}")
        assert_equal_exact(
            reduced_prefix, [reduce_reference([prefix, *r], ref) for r in rows], f"reduce prefix {name}"
        )
        assert_equal_exact(
            inclusive, np.concatenate([inclusive_reference(r, ref) for r in rows]), f"inclusive {name}"
        )
        assert_equal_exact(
            exclusive, np.concatenate([exclusive_reference(r, ref, prefix) for r in rows]), f"exclusive {name}"
        )
        assert_equal_exact(totals[0], [reduce_reference(r, ref) for r in rows], "inclusive total")
        assert_equal_exact(totals[1], [reduce_reference([prefix, *r], ref) for r in rows], "exclusive total")


def sum_kernel(n, dtype):
    N, DT = n, dtype

    @cuda.jit
    def kernel(x, inclusive, exclusive, totals):
        t = cuda.grid(1)
        items = cuda.local.array(N, DT)
        out = cuda.local.array(N, DT)
        for i in range(N):
            items[i] = x[t * N + i]
        totals[0, t] = coop.thread.inclusive_sum(items, out)
        totals[1, t] = coop.thread.exclusive_sum(items, items)
        for i in range(N):
            inclusive[t * N + i] = out[i]
            exclusive[t * N + i] = items[i]

    return kernel


@pytest.mark.parametrize("dtype,n", cases(NUMERIC_DTYPES))
def test_thread_sums(dtype, n):
    rng = np.random.default_rng(n)
    x = integer_valued(dtype, THREADS * n, rng)
    inclusive = np.zeros(THREADS * n, dtype)
    exclusive = np.zeros(THREADS * n, dtype)
    totals = np.zeros((2, THREADS), dtype)
    sum_kernel(n, dtype)[1, THREADS](x, inclusive, exclusive, totals)
    add = REFERENCE_OPS["add"]
    rows = x.reshape(THREADS, n)
    zero = np.zeros((), dtype)[()]
    assert_equal_exact(inclusive, np.concatenate([inclusive_reference(r, add) for r in rows]), "inclusive_sum")
    assert_equal_exact(exclusive, np.concatenate([exclusive_reference(r, add, zero) for r in rows]), "exclusive_sum")
    assert_equal_exact(totals[0], [reduce_reference(r, add) for r in rows], "inclusive_sum total")
    assert_equal_exact(totals[1], [reduce_reference(r, add) for r in rows], "exclusive_sum total")


def test_thread_transform():
    """transform applies a function item by item, converting to the output's dtype."""

    @cuda.jit
    def kernel(x, squares, halves):
        t = cuda.grid(1)
        items = cuda.local.array(4, np.int32)
        as_float = cuda.local.array(4, np.float64)
        for i in range(4):
            items[i] = x[t * 4 + i]
        coop.thread.transform(items, as_float, lambda v: v / 2)
        coop.thread.transform(items, items, lambda v: v * v)
        for i in range(4):
            squares[t * 4 + i] = items[i]
            halves[t * 4 + i] = as_float[i]

    x = np.arange(-64, 64, dtype=np.int32)
    squares = np.zeros(128, np.int32)
    halves = np.zeros(128, np.float64)
    kernel[1, THREADS](x, squares, halves)
    assert_equal_exact(squares, x * x, "transform in place")
    assert_equal_exact(halves, x / 2, "transform to float64")
