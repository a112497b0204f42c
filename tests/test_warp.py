"""coop.warp against NumPy references: every dtype, logical warp width, value and
items-array inputs, partial warps. Integer-valued data, so every check is exact."""

import operator

import numpy as np
import pytest
from numba import cuda

import coop
from helpers import (
    ALL_DTYPES,
    NUMERIC_DTYPES,
    FULL_MATRIX,
    ON_GPU,
    REFERENCE_OPS,
    WIDTHS,
    assert_equal_exact,
    exclusive_reference,
    inclusive_reference,
    integer_valued,
    matrix,
    ops_for,
    reduce_reference,
    reference_argmax,
    reference_argmin,
    unit_values,
)

THREADS = 64  # two warps per block
BLOCKS = 2 if ON_GPU else 1
ITEMS = 3  # items per thread in the items-array forms


@cuda.jit(device=True)
def thread_index():
    """Global index of the thread: linear rank in its block (any block shape), plus the
    threads of the blocks before it (1-D grid)."""
    r = (
        cuda.threadIdx.x
        + cuda.threadIdx.y * cuda.blockDim.x
        + cuda.threadIdx.z * cuda.blockDim.x * cuda.blockDim.y
    )
    return cuda.blockIdx.x * (cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z) + r


def segments(values, width, per_lane):
    """Split a flat array into the tiles of consecutive logical warps."""
    size = width * per_lane
    return [values[s : s + size] for s in range(0, len(values), size)]


# -- reduce / all_reduce (one value per lane, and items arrays) --------------------------


def reduce_kernels(op, width, dtype, items, partial):
    W, N, DT = width, items, dtype

    if items == 0 and not partial:

        @cuda.jit
        def kernel(x, valid, first, every):
            g = thread_index()
            first[g] = coop.warp.reduce(x[g], op, W)
            every[g] = coop.warp.all_reduce(x[g], op, width=W)

    elif items == 0:

        @cuda.jit
        def kernel(x, valid, first, every):
            g = thread_index()
            v = valid[g // W]
            first[g] = coop.warp.reduce(x[g], op, W, v)
            every[g] = coop.warp.all_reduce(x[g], op, width=W, valid_items=v)

    elif not partial:

        @cuda.jit
        def kernel(x, valid, first, every):
            g = thread_index()
            items = cuda.local.array(N, DT)
            for i in range(N):
                items[i] = x[g * N + i]
            first[g] = coop.warp.reduce(items, op, W)
            every[g] = coop.warp.all_reduce(items, op, width=W)

    else:

        @cuda.jit
        def kernel(x, valid, first, every):
            g = thread_index()
            items = cuda.local.array(N, DT)
            for i in range(N):
                items[i] = x[g * N + i]
            v = valid[g // W]
            first[g] = coop.warp.reduce(items, op, W, v)
            every[g] = coop.warp.all_reduce(items, op, width=W, valid_items=v)

    return kernel


def sum_kernel(width, dtype, items, partial):
    W, N, DT = width, items, dtype
    if items == 0:

        @cuda.jit
        def kernel(x, valid, first, every):
            g = thread_index()
            if partial:
                v = valid[g // W]
                first[g] = coop.warp.sum(x[g], W, v)
                every[g] = coop.warp.all_sum(x[g], W, valid_items=v)
            else:
                first[g] = coop.warp.sum(x[g], W)
                every[g] = coop.warp.all_sum(x[g], width=W)

    else:

        @cuda.jit
        def kernel(x, valid, first, every):
            g = thread_index()
            items = cuda.local.array(N, DT)
            for i in range(N):
                items[i] = x[g * N + i]
            if partial:
                v = valid[g // W]
                first[g] = coop.warp.sum(items, W, v)
                every[g] = coop.warp.all_sum(items, W, valid_items=v)
            else:
                first[g] = coop.warp.sum(items, W)
                every[g] = coop.warp.all_sum(items, width=W)

    return kernel


def check_reduction(kernel, dtype, width, items, partial, reference_op, rng, data=None):
    n_threads = THREADS * BLOCKS
    per_lane = max(items, 1)
    x = data if data is not None else integer_valued(dtype, n_threads * per_lane, rng)
    n_warps = n_threads // width
    valid = (
        rng.integers(1, width * per_lane + 1, n_warps).astype(np.int32)
        if partial
        else np.full(n_warps, width * per_lane, np.int32)
    )
    first = np.zeros(n_threads, x.dtype)
    every = np.zeros(n_threads, x.dtype)
    kernel[BLOCKS, THREADS](x, valid, first, every)
    expected = [
        reduce_reference(tile[: valid[w]], reference_op)
        for w, tile in enumerate(segments(x, width, per_lane))
    ]
    assert_equal_exact(first[::width], expected, "reduce (logical lane 0)")
    assert_equal_exact(every, np.repeat(expected, width), "all_reduce (every lane)")


@pytest.mark.parametrize("partial", [False, True], ids=["full", "partial"])
@pytest.mark.parametrize("items", [0, ITEMS], ids=["value", "items"])
@pytest.mark.parametrize("dtype,width", matrix(ALL_DTYPES, WIDTHS))
def test_reduce(dtype, width, items, partial):
    rng = np.random.default_rng(width * 7 + items)
    for name in ops_for(dtype) if FULL_MATRIX else ops_for(dtype)[:1]:
        kernel = reduce_kernels(getattr(coop.ops, name), width, dtype, items, partial)
        check_reduction(kernel, dtype, width, items, partial, REFERENCE_OPS[name], rng)


@pytest.mark.parametrize("partial", [False, True], ids=["full", "partial"])
@pytest.mark.parametrize("items", [0, ITEMS], ids=["value", "items"])
@pytest.mark.parametrize("dtype,width", matrix(NUMERIC_DTYPES, WIDTHS))
def test_sum(dtype, width, items, partial):
    rng = np.random.default_rng(width * 3 + items)
    kernel = sum_kernel(width, dtype, items, partial)
    check_reduction(kernel, dtype, width, items, partial, REFERENCE_OPS["add"], rng)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128, np.int32, np.float32])
def test_reduce_mul(dtype):
    rng = np.random.default_rng(5)
    x = unit_values(dtype, THREADS * BLOCKS, rng)
    kernel = reduce_kernels(coop.ops.mul, 32, dtype, 0, False)
    check_reduction(kernel, dtype, 32, 0, False, REFERENCE_OPS["mul"], rng, data=x)


@cuda.jit(device=True)
def device_max(a, b):
    return a if a > b else b


def test_operator_kinds():
    """operator.*, a lambda written in the kernel, a @cuda.jit device function and a
    coop.ops operator all work, and agree."""

    @cuda.jit
    def kernel(x, out):
        g = thread_index()
        out[0, g] = coop.warp.reduce(x[g], operator.add)
        out[1, g] = coop.warp.reduce(x[g], lambda a, b: a + b)
        out[2, g] = coop.warp.all_reduce(x[g], device_max)
        out[3, g] = coop.warp.all_reduce(x[g], coop.ops.max)
        out[4, g] = coop.warp.inclusive_scan(x[g], lambda a, b: a + b)

    rng = np.random.default_rng(1)
    x = integer_valued(np.int32, THREADS, rng, -100, 100)
    out = np.zeros((5, THREADS), np.int32)
    kernel[1, THREADS](x, out)
    sums = [w.sum() for w in segments(x, 32, 1)]
    maxes = [w.max() for w in segments(x, 32, 1)]
    assert_equal_exact(out[0, ::32], sums, "operator.add")
    assert_equal_exact(out[1, ::32], sums, "lambda")
    assert_equal_exact(out[2], np.repeat(maxes, 32), "device function")
    assert_equal_exact(out[3], np.repeat(maxes, 32), "coop.ops.max")
    assert_equal_exact(out[4], np.concatenate([np.cumsum(w) for w in segments(x, 32, 1)]), "scan lambda")


# -- (value, index) tuples ---------------------------------------------------------------


def argreduce_kernel(op, width, dtype):
    W = width

    @cuda.jit
    def kernel(x, first_value, first_index, every_value, every_index):
        g = thread_index()
        v, i = coop.warp.reduce((x[g], np.int32(g)), op, W)
        first_value[g] = v
        first_index[g] = i
        v, i = coop.warp.all_reduce((x[g], np.int32(g)), op, W)
        every_value[g] = v
        every_index[g] = i

    return kernel


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize(
    "dtype,width",
    matrix([np.int32, np.float16, np.float32, np.float64, np.uint8], WIDTHS, sim_dtypes=(np.float32,)),
)
def test_argreduce(dtype, width, name):
    rng = np.random.default_rng(width)
    n = THREADS * BLOCKS
    x = integer_valued(dtype, n, rng, 0, 3)  # many ties: the smaller index must win
    outs = [np.zeros(n, dtype), np.zeros(n, np.int32), np.zeros(n, dtype), np.zeros(n, np.int32)]
    argreduce_kernel(getattr(coop.ops, name), width, dtype)[BLOCKS, THREADS](x, *outs)
    reference = reference_argmax if name == "argmax" else reference_argmin
    pairs = [(x[i], i) for i in range(n)]
    expected = [reduce_reference(pairs[s : s + width], reference) for s in range(0, n, width)]
    values = [v for v, _ in expected]
    indices = [i for _, i in expected]
    assert_equal_exact(outs[0][::width], values, f"{name} value")
    assert_equal_exact(outs[1][::width], indices, f"{name} index")
    assert_equal_exact(outs[2], np.repeat(values, width), f"all {name} value")
    assert_equal_exact(outs[3], np.repeat(indices, width), f"all {name} index")


# -- scans -------------------------------------------------------------------------------


def scan_value_kernel(op, width):
    W = width

    @cuda.jit
    def kernel(x, initial, inclusive, exclusive, aggregate, inclusive2, aggregate2):
        g = thread_index()
        init = initial[0]  # a run-time value: numba-cuda 0.30 cannot emit float16 constants
        inclusive[g] = coop.warp.inclusive_scan(x[g], op, width=W)
        e, a = coop.warp.exclusive_scan(x[g], op, init, width=W, return_aggregate=True)
        exclusive[g] = e
        aggregate[g] = a
        s, a2 = coop.warp.inclusive_scan(x[g], op, width=W, return_aggregate=True)
        inclusive2[g] = s
        aggregate2[g] = a2

    return kernel


def scan_items_kernel(op, width, dtype):
    W, N, DT = width, ITEMS, dtype

    @cuda.jit
    def kernel(x, initial, inclusive, exclusive, aggregate, aggregate2):
        g = thread_index()
        init = initial[0]
        items = cuda.local.array(N, DT)
        scanned = cuda.local.array(N, DT)
        for i in range(N):
            items[i] = x[g * N + i]
        aggregate[g] = coop.warp.inclusive_scan(items, op, scanned, W)
        for i in range(N):
            inclusive[g * N + i] = scanned[i]
        aggregate2[g] = coop.warp.exclusive_scan(items, op, init, items, W)  # in place
        for i in range(N):
            exclusive[g * N + i] = items[i]

    return kernel


def initial_for(dtype):
    return np.asarray(1).astype(dtype)[()]


def check_scans(dtype, width, op_name, items, rng):
    op = getattr(coop.ops, op_name)
    reference_op = REFERENCE_OPS[op_name]
    initial = initial_for(dtype)
    n = THREADS * BLOCKS
    per_lane = max(items, 1)
    x = integer_valued(dtype, n * per_lane, rng)
    tiles = segments(x, width, per_lane)
    inc_expected = np.concatenate([inclusive_reference(t, reference_op) for t in tiles])
    exc_expected = np.concatenate([exclusive_reference(t, reference_op, initial) for t in tiles])
    agg_expected = np.repeat([reduce_reference(t, reference_op) for t in tiles], width)
    if items == 0:
        outs = [np.zeros(n, x.dtype) for _ in range(5)]
        scan_value_kernel(op, width)[BLOCKS, THREADS](x, np.array([initial]), *outs)
        assert_equal_exact(outs[0], inc_expected, "inclusive_scan")
        assert_equal_exact(outs[1], exc_expected, "exclusive_scan")
        assert_equal_exact(outs[2], agg_expected, "exclusive_scan aggregate")
        assert_equal_exact(outs[3], inc_expected, "inclusive_scan with aggregate")
        assert_equal_exact(outs[4], agg_expected, "inclusive_scan aggregate")
    else:
        inclusive = np.zeros(n * items, x.dtype)
        exclusive = np.zeros(n * items, x.dtype)
        aggregate = np.zeros(n, x.dtype)
        aggregate2 = np.zeros(n, x.dtype)
        scan_items_kernel(op, width, dtype)[BLOCKS, THREADS](
            x, np.array([initial]), inclusive, exclusive, aggregate, aggregate2
        )
        assert_equal_exact(inclusive, inc_expected, "inclusive_scan items")
        assert_equal_exact(exclusive, exc_expected, "exclusive_scan items")
        assert_equal_exact(aggregate, agg_expected, "inclusive_scan items aggregate")
        assert_equal_exact(aggregate2, agg_expected, "exclusive_scan items aggregate")


@pytest.mark.parametrize("items", [0, ITEMS], ids=["value", "items"])
@pytest.mark.parametrize("dtype,width", matrix(ALL_DTYPES, WIDTHS))
def test_scan(dtype, width, items):
    rng = np.random.default_rng(width + items)
    for name in ops_for(dtype) if FULL_MATRIX else ops_for(dtype)[:1]:
        check_scans(dtype, width, name, items, rng)


@cuda.jit(device=True)
def first_of(a, b):
    """Associative, not commutative: a seed combined on the wrong side shows."""
    return a


def seeded_inclusive_kernel(op, width, dtype):
    W, N, DT = width, ITEMS, dtype

    @cuda.jit
    def kernel(x, items_x, initial, scanned, scanned2, aggregate, items_scanned, items_aggregate):
        g = thread_index()
        scanned[g] = coop.warp.inclusive_scan(x[g], op, width=W, initial=initial[0])
        s, a = coop.warp.inclusive_scan(x[g], op, width=W, return_aggregate=True, initial=initial[0])
        scanned2[g] = s
        aggregate[g] = a
        items = cuda.local.array(N, DT)
        for i in range(N):
            items[i] = items_x[g * N + i]
        items_aggregate[g] = coop.warp.inclusive_scan(items, op, items, W, initial=initial[0])
        for i in range(N):
            items_scanned[g * N + i] = items[i]

    return kernel


@pytest.mark.parametrize("width", [1, 8, 32])
def test_inclusive_scan_from_an_initial_value(width):
    """initial= (CUB's InclusiveScan with initial_value): combined before every result,
    on the left, and left out of the aggregate; one value a lane and items arrays."""
    rng = np.random.default_rng(width)
    n = THREADS * BLOCKS
    cases = [(np.int32, coop.ops.add, REFERENCE_OPS["add"], 1000), (np.uint8, coop.ops.add, REFERENCE_OPS["add"], 250),
             (np.float64, coop.ops.max, REFERENCE_OPS["max"], 2.0), (np.int16, first_of, lambda a, b: a, -7)]
    for dtype, op, reference_op, initial in cases:
        x, items_x = integer_valued(dtype, n, rng), integer_valued(dtype, n * ITEMS, rng)
        seed = np.asarray(initial).astype(dtype)[()]
        outs = [np.zeros(n, x.dtype) for _ in range(3)] + [np.zeros(n * ITEMS, x.dtype), np.zeros(n, x.dtype)]
        seeded_inclusive_kernel(op, width, dtype)[BLOCKS, THREADS](x, items_x, np.array([seed]), *outs)
        where = f"{np.dtype(dtype).name}, width {width}"
        for values, per_lane, scanned, aggregate in ((x, 1, outs[1], outs[2]), (items_x, ITEMS, outs[3], outs[4])):
            tiles = segments(values, width, per_lane)
            expected = np.concatenate([inclusive_reference([seed, *t], reference_op)[1:] for t in tiles])
            assert_equal_exact(scanned, expected, f"inclusive_scan of {per_lane} a lane from {initial}, {where}")
            totals = np.repeat([reduce_reference(t, reference_op) for t in tiles], width)
            assert_equal_exact(aggregate, totals, f"its aggregate, {per_lane} a lane, {where}")
        assert_equal_exact(outs[0], outs[1], f"inclusive_scan from {initial} without the aggregate, {where}")


def sum_scan_kernels(width, dtype):
    W, N, DT = width, ITEMS, dtype

    @cuda.jit
    def values(x, inclusive, exclusive, aggregate):
        g = thread_index()
        inclusive[g] = coop.warp.inclusive_sum(x[g], width=W)
        e, a = coop.warp.exclusive_sum(x[g], width=W, return_aggregate=True)
        exclusive[g] = e
        aggregate[g] = a

    @cuda.jit
    def items(x, inclusive, exclusive, aggregate):
        g = thread_index()
        a = cuda.local.array(N, DT)
        b = cuda.local.array(N, DT)
        for i in range(N):
            a[i] = x[g * N + i]
        coop.warp.inclusive_sum(a, b, W)
        aggregate[g] = coop.warp.exclusive_sum(a, a, W)
        for i in range(N):
            inclusive[g * N + i] = b[i]
            exclusive[g * N + i] = a[i]

    return values, items


@pytest.mark.parametrize("dtype,width", matrix(NUMERIC_DTYPES, WIDTHS))
def test_sum_scans(dtype, width):
    rng = np.random.default_rng(width)
    n = THREADS * BLOCKS
    add = REFERENCE_OPS["add"]
    zero = np.zeros((), dtype)[()]
    values_kernel, items_kernel = sum_scan_kernels(width, dtype)
    for per_lane, kernel in ((1, values_kernel), (ITEMS, items_kernel)):
        x = integer_valued(dtype, n * per_lane, rng)
        tiles = segments(x, width, per_lane)
        outs = [np.zeros(n * per_lane, dtype), np.zeros(n * per_lane, dtype), np.zeros(n, dtype)]
        kernel[BLOCKS, THREADS](x, *outs)
        what = "items" if per_lane > 1 else "value"
        assert_equal_exact(outs[0], np.concatenate([inclusive_reference(t, add) for t in tiles]), f"inclusive_sum {what}")
        assert_equal_exact(outs[1], np.concatenate([exclusive_reference(t, add, zero) for t in tiles]), f"exclusive_sum {what}")
        assert_equal_exact(outs[2], np.repeat([reduce_reference(t, add) for t in tiles], width), f"sum aggregate {what}")


def test_exclusive_scan_without_initial():
    """Without an initial value, every result but logical lane 0's first is defined."""

    @cuda.jit
    def kernel(x, out_values, out_items):
        g = thread_index()
        out_values[g] = coop.warp.exclusive_scan(x[g], coop.ops.max, width=8)
        items = cuda.local.array(2, np.int32)
        items[0] = x[g]
        items[1] = x[g] + 1
        coop.warp.exclusive_scan(items, coop.ops.max, output=items, width=8)
        out_items[2 * g] = items[0]
        out_items[2 * g + 1] = items[1]

    rng = np.random.default_rng(3)
    x = integer_valued(np.int32, THREADS, rng, -50, 50)
    out_values = np.zeros(THREADS, np.int32)
    out_items = np.zeros(2 * THREADS, np.int32)
    kernel[1, THREADS](x, out_values, out_items)
    mx = REFERENCE_OPS["max"]
    for s in range(0, THREADS, 8):
        expected = exclusive_reference(x[s : s + 8], mx, np.int32(-(2**31)))
        assert_equal_exact(out_values[s + 1 : s + 8], expected[1:], "exclusive max values")
        flat = np.ravel(np.stack([x[s : s + 8], x[s : s + 8] + 1], axis=1))
        expected = exclusive_reference(flat, mx, np.int32(-(2**31)))
        assert_equal_exact(out_items[2 * s + 1 : 2 * s + 16], expected[1:], "exclusive max items")


# -- broadcast and segmented reductions --------------------------------------------------


def broadcast_kernel(width):
    W = width

    @cuda.jit
    def kernel(x, src, out, out_value, out_index):
        g = thread_index()
        out[g] = coop.warp.broadcast(x[g], src[g // W], W)
        v, i = coop.warp.broadcast((x[g], g), src[g // W], W)
        out_value[g] = v
        out_index[g] = i

    return kernel


@pytest.mark.parametrize("dtype,width", matrix(ALL_DTYPES, WIDTHS))
def test_broadcast(dtype, width):
    rng = np.random.default_rng(width)
    n = THREADS * BLOCKS
    x = integer_valued(dtype, n, rng)
    src = rng.integers(0, width, n // width).astype(np.int32)
    out, out_value, out_index = np.zeros(n, dtype), np.zeros(n, dtype), np.zeros(n, np.int64)
    broadcast_kernel(width)[BLOCKS, THREADS](x, src, out, out_value, out_index)
    sources = np.repeat(np.arange(0, n, width) + src, width)
    assert_equal_exact(out, x[sources], "broadcast")
    assert_equal_exact(out_value, x[sources], "broadcast of a tuple: value")
    assert_equal_exact(out_index, sources, "broadcast of a tuple: index")


def segmented_kernel(op, width):
    W = width

    @cuda.jit
    def kernel(x, heads, tails, head_out, tail_out):
        g = thread_index()
        head_out[g] = coop.warp.head_segmented_reduce(x[g], heads[g], op, W)
        tail_out[g] = coop.warp.tail_segmented_reduce(x[g], tails[g], op, width=W)

    return kernel


@pytest.mark.parametrize(
    "dtype,width", matrix([np.int32, np.int64, np.float32, np.float16, np.uint8, np.complex64], WIDTHS)
)
def test_segmented_reduce(dtype, width):
    rng = np.random.default_rng(width)
    n = THREADS * BLOCKS
    x = integer_valued(dtype, n, rng)
    heads = rng.random(n) < 0.3
    tails = (rng.random(n) < 0.3).astype(np.int32)  # integer flags work too
    head_out = np.zeros(n, dtype)
    tail_out = np.zeros(n, dtype)
    segmented_kernel(coop.ops.add, width)[BLOCKS, THREADS](x, heads, tails, head_out, tail_out)
    add = REFERENCE_OPS["add"]
    for s in range(0, n, width):
        lanes = range(s, s + width)
        # head flags: a segment starts at logical lane 0 and at every flagged lane
        starts = [i for i in lanes if i == s or heads[i]]
        for a, b in zip(starts, starts[1:] + [s + width]):
            assert_equal_exact(head_out[a], reduce_reference(x[a:b], add), f"head segment {a}:{b}")
        # tail flags: a segment ends at every flagged lane and at the last lane
        ends = [i for i in lanes if tails[i] or i == s + width - 1]
        for a, b in zip([s] + [e + 1 for e in ends[:-1]], ends):
            assert_equal_exact(tail_out[a], reduce_reference(x[a : b + 1], add), f"tail segment {a}:{b}")


# -- block shapes ------------------------------------------------------------------------


@pytest.mark.parametrize("block", [(16, 4), (8, 2, 2), 40, 8], ids=str)
def test_block_shapes(block):
    """Warps are consecutive linear ranks in any block shape; a block of 40 threads has
    a partial second warp, which reduces with valid_items = its lane count."""
    n = int(np.prod(block))

    @cuda.jit
    def kernel(x, out, scan):
        r = thread_index()
        lanes_here = min(32, n - (r // 32) * 32)
        out[r] = coop.warp.all_sum(x[r], valid_items=lanes_here)
        scan[r] = coop.warp.inclusive_sum(x[r])

    rng = np.random.default_rng(n)
    x = integer_valued(np.int64, n, rng, -1000, 1000)
    out = np.zeros(n, np.int64)
    scan = np.zeros(n, np.int64)
    kernel[1, block](x, out, scan)
    tiles = [x[s : s + 32] for s in range(0, n, 32)]
    assert_equal_exact(out, np.concatenate([np.full(len(t), t.sum()) for t in tiles]), "all_sum")
    assert_equal_exact(scan, np.concatenate([np.cumsum(t) for t in tiles]), "inclusive_sum")


def test_consecutive_calls():
    """Back-to-back warp collectives need no barrier between them."""

    @cuda.jit
    def kernel(x, out):
        g = thread_index()
        v = x[g]
        for _ in range(4):
            v = coop.warp.inclusive_sum(v) - coop.warp.broadcast(v, 31) + coop.warp.all_sum(v)
        out[g] = v

    x = np.arange(THREADS, dtype=np.int64) % 5
    out = np.zeros(THREADS, np.int64)
    kernel[1, THREADS](x, out)
    expected = x.copy()
    for _ in range(4):
        tiles = segments(expected, 32, 1)
        expected = np.concatenate([np.cumsum(t) - t[31] + t.sum() for t in tiles])
    assert_equal_exact(out, expected, "chained collectives")


# -- order: operators need not be commutative --------------------------------------------


@cuda.jit(device=True)
def compose_affine(f, g):
    """(a, b) means x -> a*x + b; compose_affine(f, g) applies f first, then g:
    associative, not commutative."""
    return (f[0] * g[0], f[1] * g[0] + g[1])


def reference_compose(f, g):
    with np.errstate(over="ignore"):
        return (np.int64(f[0] * g[0]), np.int64(f[1] * g[0] + g[1]))


def affine_kernel(width):
    W, N = width, ITEMS

    @cuda.jit
    def kernel(a, b, out):
        g = thread_index()
        f = (a[g * N], b[g * N])
        r = coop.warp.reduce(f, compose_affine, W)
        out[0, g] = r[0] * 1000 + r[1]
        r = coop.warp.all_reduce(f, compose_affine, W)
        out[1, g] = r[0] * 1000 + r[1]
        r = coop.warp.inclusive_scan(f, compose_affine, width=W)
        out[2, g] = r[0] * 1000 + r[1]
        r = coop.warp.exclusive_scan(f, compose_affine, (np.int64(1), np.int64(0)), width=W)
        out[3, g] = r[0] * 1000 + r[1]
        r = coop.warp.reduce(f, compose_affine, W, 5)
        out[4, g] = r[0] * 1000 + r[1]

    return kernel


@pytest.mark.parametrize("width", WIDTHS if FULL_MATRIX else [4, 32])
def test_non_commutative(width):
    rng = np.random.default_rng(width)
    n = THREADS * BLOCKS
    a = rng.integers(-2, 3, n * ITEMS).astype(np.int64)
    b = rng.integers(-3, 4, n * ITEMS).astype(np.int64)
    out = np.zeros((5, n), np.int64)
    affine_kernel(width)[BLOCKS, THREADS](a, b, out)
    fs = [(a[g * ITEMS], b[g * ITEMS]) for g in range(n)]
    code = lambda f: f[0] * 1000 + f[1]  # noqa: E731
    identity = (np.int64(1), np.int64(0))
    for s in range(0, n, width):
        tile = fs[s : s + width]
        assert out[0, s] == code(reduce_reference(tile, reference_compose))
        assert_equal_exact(out[1, s : s + width], [code(reduce_reference(tile, reference_compose))] * width, "all_reduce")
        assert_equal_exact(out[2, s : s + width], [code(f) for f in inclusive_reference(tile, reference_compose)], "inclusive_scan")
        assert_equal_exact(out[3, s : s + width], [code(f) for f in exclusive_reference(tile, reference_compose, identity)], "exclusive_scan")
        assert out[4, s] == code(reduce_reference(tile[:5], reference_compose))


REDUX_OPS = {"max": (coop.ops.max, np.maximum), "min": (min, np.minimum), "bit_and": (operator.and_, np.bitwise_and),
             "bit_or": (coop.ops.bit_or, np.bitwise_or), "bit_xor": (operator.xor, np.bitwise_xor)}


@pytest.mark.parametrize("op_name", list(REDUX_OPS))
@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32])
def test_redux_operators_over_the_full_range(dtype, op_name):
    """Minima, maxima and bitwise operations of integers of 32 bits or fewer, which full
    warps compute with one ``redux.sync`` (signed or unsigned words: values from the
    whole range, negative and past 2^31), in warp.reduce, warp.all_reduce of logical warps,
    items, reduce_batched of 8 batches and block.all_reduce, against NumPy."""
    op, reference = REDUX_OPS[op_name]
    info = np.iinfo(dtype)
    x = np.random.default_rng(len(op_name) * 7 + info.bits).integers(info.min, info.max, 8 * THREADS, endpoint=True,
                                                                     dtype=dtype)

    @cuda.jit
    def kernel(x, out):
        i = cuda.grid(1)
        items = cuda.local.array(8, x.dtype)
        for j in range(8):
            items[j] = x[8 * i + j]
        out[0, i] = coop.warp.reduce(x[i], op)
        out[1, i] = coop.warp.all_reduce(x[i], op, 8)
        out[2, i] = coop.warp.all_reduce(items, op)
        results = cuda.local.array(1, x.dtype)
        coop.warp.reduce_batched(items, op, results, batches=8)
        out[3, i] = results[0]
        out[4, i] = coop.block.all_reduce(x[i], op, threads=THREADS)

    out = np.zeros((5, THREADS), dtype)
    kernel[1, THREADS](x, out)
    first, tile = x[:THREADS], x.reshape(THREADS, 8)
    whole = reference.reduce(first.reshape(-1, 32), axis=1)
    assert_equal_exact(out[0, ::32], whole, "warp.reduce")
    assert_equal_exact(out[1], np.repeat(reference.reduce(first.reshape(-1, 8), axis=1), 8), "warp.all_reduce, width 8")
    assert_equal_exact(out[2], np.repeat(reference.reduce(tile.reshape(-1, 32 * 8), axis=1), 32), "items")
    batches = reference.reduce(tile.reshape(-1, 32, 8), axis=1)  # (warp, batch)
    assert_equal_exact(out[3].reshape(-1, 32)[:, :8], batches, "reduce_batched")
    assert_equal_exact(out[4], np.full(THREADS, reference.reduce(first)), "block.all_reduce")
