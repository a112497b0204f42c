"""coop.warp.reduce_batched and sum_batched against NumPy references: every dtype and
logical warp width, fewer, as many and more batches than lanes (so subtrees without a
batch, and several results per lane), both arrangements, the returned form, the
``redux.sync`` sums, and an operator that is not commutative. Integer-valued data, so
every check is exact."""

import numpy as np
import pytest
from numba import cuda

import coop
from helpers import (
    ALL_DTYPES,
    FULL_MATRIX,
    NUMERIC_DTYPES,
    REFERENCE_OPS,
    WIDTHS,
    assert_equal_exact,
    integer_valued,
    matrix,
    ops_for,
    reduce_reference,
)

THREADS = 64  # two warps


def FIRST(a, b):  # (the reference of ``lambda a, b: a``)
    return a


COOP_OPS = {"add": coop.ops.add, "max": coop.ops.max, "min": coop.ops.min, "bit_xor": coop.ops.bit_xor,
            "logical_or": coop.ops.logical_or, "logical_and": coop.ops.logical_and}


@cuda.jit(device=True)
def thread_items(x, items, batches):
    t = cuda.grid(1)
    for b in range(batches):
        items[b] = x[t * batches + b]
    return t


def batched_kernel(dtype, batches, width, arrangement, op, returned):
    """A kernel reducing ``batches`` items a thread (``x[t*batches + b]``) with ``op``
    (None: ``sum_batched``); thread ``t`` writes its results to ``out[t*per_lane + k]``."""
    B, W, DT, per_lane = batches, width, dtype, -(-batches // width)

    if returned:

        @cuda.jit
        def kernel(x, out):
            items = cuda.local.array(B, DT)
            t = thread_items(x, items, B)
            if op is None:
                out[t] = coop.warp.sum_batched(items, batches=B, width=W, arrangement=arrangement)
            else:
                out[t] = coop.warp.reduce_batched(items, op, batches=B, width=W, arrangement=arrangement)

    else:

        @cuda.jit
        def kernel(x, out):
            items = cuda.local.array(B, DT)
            t = thread_items(x, items, B)
            if op is None:
                coop.warp.sum_batched(items, items, batches=B, width=W, arrangement=arrangement)  # (in place)
            else:
                coop.warp.reduce_batched(items, op, items, batches=B, width=W, arrangement=arrangement)
            for k in range(per_lane):
                out[t * per_lane + k] = items[k]

    return kernel


def check(dtype, batches, width, arrangement, op_name, returned=False, op=None):
    rng = np.random.default_rng(batches * 97 + width)
    x = integer_valued(dtype, THREADS * batches, rng)
    per_lane = 1 if returned else -(-batches // width)
    coop_op = None if op_name == "sum" else (op or COOP_OPS[op_name])
    out = np.zeros(THREADS * per_lane, dtype)
    batched_kernel(dtype, batches, width, arrangement, coop_op, returned)[1, THREADS](x, out)
    reference = FIRST if op_name == "first" else REFERENCE_OPS["add" if op_name == "sum" else op_name]
    lanes = x.reshape(THREADS // width, width, batches)  # (logical warp, lane, batch)
    got = out.reshape(THREADS // width, width, per_lane)
    for lane in range(width):
        for k in range(per_lane):
            b = lane * per_lane + k if arrangement == "blocked" and not returned else lane + k * width
            if b < batches:
                expected = [reduce_reference(lanes[g, :, b], reference) for g in range(THREADS // width)]
                assert_equal_exact(got[:, lane, k], expected, f"lane {lane} slot {k} (batch {b})")


def batch_counts(width):
    """Fewer batches than lanes (subtrees without a batch), as many, and more (several
    results a lane, the last slot partly empty); on the simulator one of them."""
    counts = sorted({min(3, width), width, 2 * width + 1})
    return counts if FULL_MATRIX else [2 * width + 1]


@pytest.mark.parametrize("arrangement", ["striped", "blocked"])
@pytest.mark.parametrize("dtype,width", matrix(ALL_DTYPES, WIDTHS))
def test_reduce_batched(dtype, width, arrangement):
    for batches in batch_counts(width):
        for op_name in ops_for(dtype)[1:] or ops_for(dtype):  # (add: test_sum_batched)
            check(dtype, batches, width, arrangement, op_name)


@pytest.mark.parametrize("arrangement", ["striped", "blocked"])
@pytest.mark.parametrize("dtype,width", matrix(NUMERIC_DTYPES, WIDTHS))
def test_sum_batched(dtype, width, arrangement):
    for batches in batch_counts(width):
        check(dtype, batches, width, arrangement, "sum")


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint32, np.int64, np.float32])
@pytest.mark.parametrize("batches", [1, 5, 8, 9])
def test_sum_batched_returned_in_full_warps(dtype, batches):
    """At most 8 batches of integers of 32 bits or fewer: one redux.sync per batch."""
    check(dtype, batches, 32, "striped", "sum", returned=True)


@pytest.mark.parametrize("width,batches", [(8, 8), (16, 5), (32, 1)])
def test_reduce_batched_returned(width, batches):
    check(np.int32, batches, width, "striped", "max", returned=True)


def test_values_are_combined_in_lane_order():
    """``first(a, b) = a`` keeps the lowest lane's item: associative, not commutative (a
    device function: a kernel cannot call a plain Python function from its globals)."""
    check(np.int32, 19, 8, "striped", "first", op=cuda.jit(device=True)(lambda a, b: a))


@pytest.mark.parametrize("seed", range(12 if FULL_MATRIX else 4))
def test_random_configurations(seed):
    """Random batch counts (1 to 70), widths, dtypes, arrangements, operators and forms."""
    rng = np.random.default_rng(1000 + seed)
    for _ in range(3):
        dtype = ALL_DTYPES[rng.integers(len(ALL_DTYPES))]
        width = int(rng.choice(WIDTHS))
        batches = int(rng.integers(1, 71))
        arrangement = str(rng.choice(["striped", "blocked"]))
        ops = ops_for(dtype)
        op_name = str(rng.choice(ops + (["sum"] if np.dtype(dtype) != np.bool_ else [])))
        if op_name == "add":
            op_name = "sum"
        returned = batches <= width and bool(rng.integers(2))
        check(dtype, batches, width, arrangement, op_name, returned=returned)
