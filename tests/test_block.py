"""coop.block against NumPy references: every dtype, algorithm, block shape (1-, 2- and
3-D, not only multiples of 32), items per thread, partial tiles. Integer-valued data, so
every check is exact."""

import operator

import numpy as np
import pytest
from numba import cuda

import coop
from helpers import (
    ALL_DTYPES,
    FULL_MATRIX,
    NUMERIC_DTYPES,
    ON_GPU,
    REFERENCE_OPS,
    assert_equal_exact,
    expect_link_error,
    exclusive_reference,
    inclusive_reference,
    integer_valued,
    jit_any_block,
    ops_for,
    reduce_reference,
    reference_argmax,
)

BLOCKS = 3 if ON_GPU else 2
if FULL_MATRIX:
    SHAPES = [32, 33, 64, 96, 128, 256, 500, 512, 1024, (16, 8), (8, 8, 4)]
    ITEMS = [0, 1, 2, 3, 4, 7, 8, 16]  # 0: one value per thread; else an items array
    DTYPES = ALL_DTYPES
else:  # the simulator runs a Python thread per CUDA thread
    SHAPES = [33, 64, (8, 4, 2)]
    ITEMS = [0, 3]
    DTYPES = [np.bool_, np.int8, np.int32, np.uint64, np.float16, np.float64, np.complex64]
REDUCE_ALGORITHMS = ["warp_reductions", "raking", "raking_commutative_only"]
SCAN_ALGORITHMS = ["raking", "raking_memoize", "warp_scans"]


def size(shape):
    return int(np.prod(shape))


@cuda.jit(device=True)
def global_rank():
    """Linear rank in the block plus the threads of earlier blocks (1-D grid)."""
    r = (
        cuda.threadIdx.x
        + cuda.threadIdx.y * cuda.blockDim.x
        + cuda.threadIdx.z * cuda.blockDim.x * cuda.blockDim.y
    )
    return cuda.blockIdx.x * (cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z) + r


def load_items(n, dtype):
    """A device function filling a thread's items array from its blocked slice."""
    N = n

    @cuda.jit(device=True)
    def load(x, g, items):
        for i in range(N):
            items[i] = x[g * N + i]

    return load


def tiles_of(x, threads, per_thread):
    tile = threads * per_thread
    return [x[s : s + tile] for s in range(0, len(x), tile)]


# -- reductions --------------------------------------------------------------------------


def reduce_kernel(op, dtype, items, algorithm):
    N, DT, ALG = items, dtype, algorithm
    load = load_items(max(items, 1), dtype)
    if items == 0:

        @jit_any_block
        def kernel(x, valid, out):
            g = global_rank()
            v = valid[cuda.blockIdx.x]
            out[0, g] = coop.block.reduce(x[g], op, algorithm=ALG)
            out[1, g] = coop.block.all_reduce(x[g], op, algorithm=ALG)
            out[2, g] = coop.block.reduce(x[g], op, v, algorithm=ALG)
            out[3, g] = coop.block.all_reduce(x[g], op, valid_items=v, algorithm=ALG)

    else:

        @jit_any_block
        def kernel(x, valid, out):
            g = global_rank()
            v = valid[cuda.blockIdx.x]
            items = cuda.local.array(N, DT)
            load(x, g, items)
            out[0, g] = coop.block.reduce(items, op, algorithm=ALG)
            out[1, g] = coop.block.all_reduce(items, op, algorithm=ALG)
            out[2, g] = coop.block.reduce(items, op, v, algorithm=ALG)
            out[3, g] = coop.block.all_reduce(items, op, valid_items=v, algorithm=ALG)

    return kernel


def check_reductions(kernel, dtype, items, shape, reference_op, rng, data=None):
    threads = size(shape)
    per_thread = max(items, 1)
    n = threads * BLOCKS
    x = data if data is not None else integer_valued(dtype, n * per_thread, rng)
    valid = rng.integers(1, threads * per_thread + 1, BLOCKS).astype(np.int32)
    out = np.zeros((4, n), x.dtype)
    kernel[BLOCKS, shape](x, valid, out)
    tiles = tiles_of(x, threads, per_thread)
    full = [reduce_reference(t, reference_op) for t in tiles]
    partial = [reduce_reference(t[: valid[b]], reference_op) for b, t in enumerate(tiles)]
    where = f"shape {shape}"
    assert_equal_exact(out[0, ::threads], full, f"reduce, {where}")
    assert_equal_exact(out[1], np.repeat(full, threads), f"all_reduce, {where}")
    assert_equal_exact(out[2, ::threads], partial, f"reduce valid_items, {where}")
    assert_equal_exact(out[3], np.repeat(partial, threads), f"all_reduce valid_items, {where}")


def reduce_cases():
    cases = []
    for algorithm in REDUCE_ALGORITHMS:
        for dtype in DTYPES:
            for items in ITEMS if FULL_MATRIX or dtype in (np.int32, np.float64) else ITEMS[:1]:
                cases.append(pytest.param(algorithm, dtype, items, id=f"{algorithm}-{np.dtype(dtype).name}-items{items}"))
    return cases


@pytest.mark.parametrize("algorithm,dtype,items", reduce_cases())
def test_reduce(algorithm, dtype, items):
    rng = np.random.default_rng(items)
    for name in ops_for(dtype) if FULL_MATRIX else ops_for(dtype)[:1]:
        kernel = reduce_kernel(getattr(coop.ops, name), dtype, items, algorithm)
        for shape in SHAPES:
            check_reductions(kernel, dtype, items, shape, REFERENCE_OPS[name], rng)


def sum_kernel(dtype, items):
    N, DT = items, dtype
    load = load_items(max(items, 1), dtype)
    if items == 0:

        @jit_any_block
        def kernel(x, valid, out):
            g = global_rank()
            v = valid[cuda.blockIdx.x]
            out[0, g] = coop.block.sum(x[g])
            out[1, g] = coop.block.all_sum(x[g])
            out[2, g] = coop.block.sum(x[g], v)
            out[3, g] = coop.block.all_sum(x[g], valid_items=v)

    else:

        @jit_any_block
        def kernel(x, valid, out):
            g = global_rank()
            v = valid[cuda.blockIdx.x]
            items = cuda.local.array(N, DT)
            load(x, g, items)
            out[0, g] = coop.block.sum(items)
            out[1, g] = coop.block.all_sum(items)
            out[2, g] = coop.block.sum(items, v)
            out[3, g] = coop.block.all_sum(items, valid_items=v)

    return kernel


@pytest.mark.parametrize(
    "dtype,items",
    [
        pytest.param(d, i, id=f"{np.dtype(d).name}-items{i}")
        for d in (NUMERIC_DTYPES if FULL_MATRIX else [np.int16, np.float32, np.complex128])
        for i in ITEMS
    ],
)
def test_sum(dtype, items):
    rng = np.random.default_rng(items + 1)
    kernel = sum_kernel(dtype, items)
    for shape in SHAPES:
        check_reductions(kernel, dtype, items, shape, REFERENCE_OPS["add"], rng)


@pytest.mark.parametrize("algorithm", REDUCE_ALGORITHMS[:2])
def test_argmax_tuples(algorithm):
    ALG = algorithm

    @jit_any_block
    def kernel(x, values, indices):
        g = global_rank()
        v, i = coop.block.all_reduce((x[g], np.int32(g)), coop.ops.argmax, algorithm=ALG)
        values[g] = v
        indices[g] = i

    rng = np.random.default_rng(0)
    for shape in SHAPES:
        threads = size(shape)
        n = threads * BLOCKS
        x = integer_valued(np.float32, n, rng, 0, 5)  # ties: the smaller index wins
        values, indices = np.zeros(n, np.float32), np.zeros(n, np.int32)
        kernel[BLOCKS, shape](x, values, indices)
        pairs = [(x[i], i) for i in range(n)]
        expected = [reduce_reference(pairs[s : s + threads], reference_argmax) for s in range(0, n, threads)]
        assert_equal_exact(values, np.repeat([v for v, _ in expected], threads), f"argmax value {shape}")
        assert_equal_exact(indices, np.repeat([i for _, i in expected], threads), f"argmax index {shape}")


# -- tuple values through every algorithm ------------------------------------------------
# Each algorithm x each kind of tuple operator: argmax pairs (coop.ops), a key-value pair
# with the segmented-sum operator (a lambda), and affine maps x -> a*x + b composed in
# order (a non-commutative 2-tuple operator, as a lambda and as a device function). With
# threads= given, so that "raking_memoize" keeps its segments in registers.


@cuda.jit(device=True)
def compose_affine(f, g):
    """g after f, for maps x -> a*x + b: (a_f * a_g, b_f * a_g + b_g)."""
    return f[0] * g[0], f[1] * g[0] + g[1]


def _segmented_sum(p, q):
    return (q[0], q[1] if p[0] != q[0] else p[1] + q[1])


def _compose_reference(f, g):
    return (f[0] * g[0], f[1] * g[0] + g[1])


TUPLE_OPERATORS = {
    "argmax": (coop.ops.argmax, reference_argmax),
    "segmented-sum-lambda": (None, _segmented_sum),
    "affine-lambda": (None, _compose_reference),
    "affine-device-function": (compose_affine, _compose_reference),
}
TUPLE_SHAPES = [64, (8, 4, 2), 96] if FULL_MATRIX else [64]


def _tuple_inputs(kind, n, rng):
    if kind == "argmax":
        return integer_valued(np.float32, n, rng, 0, 5), np.arange(n, dtype=np.int32)
    if kind.startswith("segmented"):
        return np.sort(rng.integers(0, n // 8, n)).astype(np.int32), integer_valued(np.float64, n, rng)
    return rng.choice([-1.0, 1.0], n), integer_valued(np.float64, n, rng)


def tuple_kernel(kind, algorithm, threads, scan):
    ALG, T = algorithm, threads
    collective = coop.block.inclusive_scan if scan else coop.block.all_reduce

    if kind == "affine-lambda":

        @jit_any_block
        def kernel(first, second, out_first, out_second):
            g = global_rank()
            r = collective((first[g], second[g]), lambda f, h: (f[0] * h[0], f[1] * h[0] + h[1]), threads=T, algorithm=ALG)
            out_first[g] = r[0]
            out_second[g] = r[1]

    elif kind == "segmented-sum-lambda":

        @jit_any_block
        def kernel(first, second, out_first, out_second):
            g = global_rank()
            r = collective((first[g], second[g]), lambda p, q: (q[0], q[1] if p[0] != q[0] else p[1] + q[1]), threads=T, algorithm=ALG)
            out_first[g] = r[0]
            out_second[g] = r[1]

    else:
        op = TUPLE_OPERATORS[kind][0]

        @jit_any_block
        def kernel(first, second, out_first, out_second):
            g = global_rank()
            r = collective((first[g], second[g]), op, threads=T, algorithm=ALG)
            out_first[g] = r[0]
            out_second[g] = r[1]

    return kernel


def tuple_cases():
    cases = []
    for algorithm in REDUCE_ALGORITHMS + SCAN_ALGORITHMS:
        for kind in TUPLE_OPERATORS:
            if algorithm == "raking_commutative_only" and kind != "argmax":
                continue  # the others are not commutative
            cases.append(pytest.param(algorithm, kind, id=f"{algorithm}-{kind}"))
    return cases


@pytest.mark.parametrize("algorithm,kind", tuple_cases())
def test_tuple_values_every_algorithm(algorithm, kind):
    scan = algorithm in SCAN_ALGORITHMS
    _, reference = TUPLE_OPERATORS[kind]
    rng = np.random.default_rng(11)
    for shape in TUPLE_SHAPES:
        threads = size(shape)
        n = threads * BLOCKS
        first, second = _tuple_inputs(kind, n, rng)
        out_first, out_second = np.zeros_like(first), np.zeros_like(second)
        tuple_kernel(kind, algorithm, shape, scan)[BLOCKS, shape](first, second, out_first, out_second)
        expected = []
        for s in range(0, n, threads):
            pairs = [(first[i], second[i]) for i in range(s, s + threads)]
            if scan:
                expected += inclusive_reference(pairs, reference)
            else:
                expected += [reduce_reference(pairs, reference)] * threads
        where = f"{algorithm} {kind} {shape}"
        assert_equal_exact(out_first, [e[0] for e in expected], f"first members, {where}")
        assert_equal_exact(out_second, [e[1] for e in expected], f"second members, {where}")


# -- scans -------------------------------------------------------------------------------


def scan_kernel(op, dtype, items, algorithm):
    N, DT, ALG = items, dtype, algorithm
    load = load_items(max(items, 1), dtype)
    if items == 0:

        @jit_any_block
        def kernel(x, initial, inclusive, exclusive, aggregates):
            g = global_rank()
            s, a = coop.block.inclusive_scan(x[g], op, algorithm=ALG, return_aggregate=True)
            inclusive[g] = s
            aggregates[0, g] = a
            e, a = coop.block.exclusive_scan(x[g], op, initial[0], algorithm=ALG, return_aggregate=True)
            exclusive[g] = e
            aggregates[1, g] = a

    else:

        @jit_any_block
        def kernel(x, initial, inclusive, exclusive, aggregates):
            g = global_rank()
            items = cuda.local.array(N, DT)
            scanned = cuda.local.array(N, DT)
            load(x, g, items)
            aggregates[0, g] = coop.block.inclusive_scan(items, op, scanned, algorithm=ALG)
            aggregates[1, g] = coop.block.exclusive_scan(items, op, initial[0], items, algorithm=ALG)
            for i in range(N):
                inclusive[g * N + i] = scanned[i]
                exclusive[g * N + i] = items[i]

    return kernel


def check_scans(kernel, dtype, items, shape, reference_op, initial, rng):
    threads = size(shape)
    per_thread = max(items, 1)
    n = threads * BLOCKS
    x = integer_valued(dtype, n * per_thread, rng)
    inclusive = np.zeros(n * per_thread, dtype)
    exclusive = np.zeros(n * per_thread, dtype)
    aggregates = np.zeros((2, n), dtype)
    kernel[BLOCKS, shape](x, np.array([initial]), inclusive, exclusive, aggregates)
    tiles = tiles_of(x, threads, per_thread)
    where = f"shape {shape}"
    assert_equal_exact(inclusive, np.concatenate([inclusive_reference(t, reference_op) for t in tiles]), f"inclusive, {where}")
    assert_equal_exact(
        exclusive, np.concatenate([exclusive_reference(t, reference_op, initial) for t in tiles]), f"exclusive, {where}"
    )
    totals = np.repeat([reduce_reference(t, reference_op) for t in tiles], threads)
    assert_equal_exact(aggregates[0], totals, f"inclusive aggregate, {where}")
    assert_equal_exact(aggregates[1], totals, f"exclusive aggregate, {where}")


def scan_cases():
    cases = []
    for algorithm in SCAN_ALGORITHMS:
        for dtype in DTYPES:
            for items in ITEMS if FULL_MATRIX or dtype in (np.int32, np.float64) else ITEMS[:1]:
                cases.append(pytest.param(algorithm, dtype, items, id=f"{algorithm}-{np.dtype(dtype).name}-items{items}"))
    return cases


@pytest.mark.parametrize("algorithm,dtype,items", scan_cases())
def test_scan(algorithm, dtype, items):
    rng = np.random.default_rng(items + 2)
    initial = np.asarray(1).astype(dtype)[()]
    for name in ops_for(dtype) if FULL_MATRIX else ops_for(dtype)[:1]:
        kernel = scan_kernel(getattr(coop.ops, name), dtype, items, algorithm)
        for shape in SHAPES:
            check_scans(kernel, dtype, items, shape, REFERENCE_OPS[name], initial, rng)


@cuda.jit(device=True)
def first_of(a, b):
    """Associative, not commutative: a seed combined on the wrong side shows."""
    return a


def seeded_inclusive_kernel(op, dtype, items, algorithm):
    N, DT, ALG = items, dtype, algorithm
    load = load_items(max(items, 1), dtype)
    if items == 0:

        @jit_any_block
        def kernel(x, initial, scanned, aggregates):
            g = global_rank()
            s, a = coop.block.inclusive_scan(x[g], op, algorithm=ALG, return_aggregate=True, initial=initial[0])
            scanned[g] = s
            aggregates[g] = a

    else:

        @jit_any_block
        def kernel(x, initial, scanned, aggregates):
            g = global_rank()
            items = cuda.local.array(N, DT)
            load(x, g, items)
            aggregates[g] = coop.block.inclusive_scan(items, op, items, algorithm=ALG, initial=initial[0])
            for i in range(N):
                scanned[g * N + i] = items[i]

    return kernel


@pytest.mark.parametrize("items", [0, 3], ids=["value", "items"])
@pytest.mark.parametrize("algorithm", SCAN_ALGORITHMS)
def test_inclusive_scan_from_an_initial_value(algorithm, items):
    """initial= (CUB's InclusiveScan with initial_value): combined before every result,
    on the left, and left out of the aggregate."""
    rng = np.random.default_rng(7 + items)
    cases = [(np.int32, coop.ops.add, REFERENCE_OPS["add"], 1000), (np.uint8, coop.ops.add, REFERENCE_OPS["add"], 250),
             (np.float64, coop.ops.max, REFERENCE_OPS["max"], 2.0), (np.int16, first_of, lambda a, b: a, -7)]
    for dtype, op, reference_op, initial in cases:
        kernel = seeded_inclusive_kernel(op, dtype, items, algorithm)
        for shape in SHAPES:
            threads, per_thread = size(shape), max(items, 1)
            x = integer_valued(dtype, threads * BLOCKS * per_thread, rng)
            scanned, aggregates = np.zeros_like(x), np.zeros(threads * BLOCKS, x.dtype)
            seed = np.asarray(initial).astype(dtype)[()]
            kernel[BLOCKS, shape](x, np.array([seed]), scanned, aggregates)
            tiles = tiles_of(x, threads, per_thread)
            where = f"{np.dtype(dtype).name}, shape {shape}"
            expected = np.concatenate([inclusive_reference([seed, *t], reference_op)[1:] for t in tiles])
            assert_equal_exact(scanned, expected, f"inclusive_scan from {initial}, {where}")
            totals = np.repeat([reduce_reference(t, reference_op) for t in tiles], threads)
            assert_equal_exact(aggregates, totals, f"its aggregate, {where}")


def sum_scan_kernel(dtype, items, threads):
    N, DT, T = items, dtype, threads
    load = load_items(max(items, 1), dtype)
    if items == 0:

        @jit_any_block
        def kernel(x, initial, inclusive, exclusive, aggregates):
            g = global_rank()
            s, a = coop.block.inclusive_sum(x[g], threads=T, return_aggregate=True)
            inclusive[g] = s
            aggregates[0, g] = a
            e, a = coop.block.exclusive_sum(x[g], threads=T, return_aggregate=True)
            exclusive[g] = e
            aggregates[1, g] = a

    else:

        @jit_any_block
        def kernel(x, initial, inclusive, exclusive, aggregates):
            g = global_rank()
            items = cuda.local.array(N, DT)
            scanned = cuda.local.array(N, DT)
            load(x, g, items)
            aggregates[0, g] = coop.block.inclusive_sum(items, scanned, threads=T)
            aggregates[1, g] = coop.block.exclusive_sum(items, items, threads=T)
            for i in range(N):
                inclusive[g * N + i] = scanned[i]
                exclusive[g * N + i] = items[i]

    return kernel


@pytest.mark.parametrize(
    "dtype,items",
    [
        pytest.param(d, i, id=f"{np.dtype(d).name}-items{i}")
        for d in (NUMERIC_DTYPES if FULL_MATRIX else [np.uint8, np.float16, np.complex128])
        for i in ([0, 1, 4, 7] if FULL_MATRIX else ITEMS)
    ],
)
def test_sum_scans_with_constant_threads(dtype, items):
    """The sums, with threads= given as a compile-time constant (scratch sized exactly,
    loops unrolled): one kernel per block shape."""
    rng = np.random.default_rng(items + 3)
    zero = np.zeros((), dtype)[()]
    for shape in SHAPES if not FULL_MATRIX else [33, 128, 500, (8, 8, 4)]:
        kernel = sum_scan_kernel(dtype, items, size(shape))
        check_scans(kernel, dtype, items, shape, REFERENCE_OPS["add"], zero, rng)


@pytest.mark.parametrize("algorithm", REDUCE_ALGORITHMS + SCAN_ALGORITHMS)
def test_constant_threads_every_algorithm(algorithm):
    """Each algorithm with threads= constant, for block sizes below, at and above a warp."""
    is_scan = algorithm in SCAN_ALGORITHMS
    rng = np.random.default_rng(4)
    for shape in [32, 96, (16, 8)] if FULL_MATRIX else [33, (8, 4, 2)]:
        T, ALG = size(shape), algorithm
        if is_scan:

            @jit_any_block
            def kernel(x, out):
                g = global_rank()
                items = cuda.local.array(3, np.int64)
                for i in range(3):
                    items[i] = x[g * 3 + i]
                out[g] = coop.block.exclusive_scan(items, operator.add, np.int64(0), items, threads=T, algorithm=ALG)
                for i in range(3):
                    x[g * 3 + i] = items[i]

        else:

            @jit_any_block
            def kernel(x, out):
                g = global_rank()
                items = cuda.local.array(3, np.int64)
                for i in range(3):
                    items[i] = x[g * 3 + i]
                out[g] = coop.block.all_reduce(items, operator.add, threads=T, algorithm=ALG)

        n = T * BLOCKS
        x = integer_valued(np.int64, n * 3, rng, -100, 100)
        original = x.copy()
        out = np.zeros(n, np.int64)
        kernel[BLOCKS, shape](x, out)
        tiles = tiles_of(original, T, 3)
        assert_equal_exact(out, np.repeat([t.sum() for t in tiles], T), f"{algorithm} aggregate {shape}")
        if is_scan:
            expected = np.concatenate([np.cumsum(t) - t for t in tiles])
            assert_equal_exact(x, expected, f"{algorithm} exclusive scan {shape}")


@pytest.mark.parametrize("algorithm", SCAN_ALGORITHMS)
def test_exclusive_scan_without_initial(algorithm):
    """Without initial or callback, every result but thread 0's first is defined, also
    for an operator that is not idempotent."""
    ALG = algorithm

    @jit_any_block
    def kernel(x, values, items_out):
        g = global_rank()
        values[g] = coop.block.exclusive_scan(x[g], operator.add, algorithm=ALG)
        items = cuda.local.array(3, np.int64)
        for i in range(3):
            items[i] = x[g] + i
        coop.block.exclusive_scan(items, operator.add, output=items, algorithm=ALG)
        for i in range(3):
            items_out[3 * g + i] = items[i]

    for shape in [33, (16, 4)]:
        threads = size(shape)
        x = integer_valued(np.int64, threads, np.random.default_rng(8), -50, 50)
        values, items_out = np.zeros(threads, np.int64), np.zeros(3 * threads, np.int64)
        kernel[1, shape](x, values, items_out)
        assert_equal_exact(values[1:], (np.cumsum(x) - x)[1:], f"{algorithm} values {shape}")
        flat = np.ravel(np.stack([x, x + 1, x + 2], axis=1))
        assert_equal_exact(items_out[1:], (np.cumsum(flat) - flat)[1:], f"{algorithm} items {shape}")


# -- running scans, consecutive calls, order, determinism --------------------------------


@cuda.jit(device=True)
def running_total(state, block_aggregate):
    """CUB's BlockPrefixCallbackOp: return the running total so far, then add the tile."""
    prefix = state[0]
    state[0] += block_aggregate
    return prefix


@pytest.mark.parametrize("algorithm", SCAN_ALGORITHMS)
def test_running_scan_over_many_tiles(algorithm):
    """One block scans a whole array tile by tile with a prefix callback."""
    THREADS, N, ALG = (128, 4, algorithm) if ON_GPU else (64, 2, algorithm)
    TILES = 9

    @jit_any_block
    def kernel(x, out):
        rank = cuda.threadIdx.x
        state = cuda.local.array(1, np.int64)
        state[0] = 0
        items = cuda.local.array(N, np.int64)
        for tile in range(TILES):
            base = tile * THREADS * N + rank * N
            for i in range(N):
                items[i] = x[base + i]
            coop.block.exclusive_sum(items, items, prefix_op=running_total, prefix_state=state, algorithm=ALG)
            for i in range(N):
                out[base + i] = items[i]

    rng = np.random.default_rng(5)
    x = integer_valued(np.int64, TILES * THREADS * N, rng, -1000, 1000)
    out = np.zeros_like(x)
    kernel[1, THREADS](x, out)
    assert_equal_exact(out, np.cumsum(x) - x, "running exclusive sum")


def test_values_computed_per_thread():
    """Values that differ per thread as plain integers (under the simulator, a Python
    int is typed by its value, so threads reach different specialisations)."""

    @jit_any_block
    def kernel(flags, out):
        t = cuda.threadIdx.x
        v = 1 if flags[t] else 0
        out[0, t] = coop.block.all_sum(v, threads=64)
        out[1, t] = coop.block.exclusive_sum(v)

    flags = np.zeros(64, np.int32)
    flags[[3, 40, 41]] = 1
    out = np.zeros((2, 64), np.int64)
    kernel[1, 64](flags, out)
    assert_equal_exact(out[0], np.full(64, 3), "all_sum of per-thread ints")
    assert_equal_exact(out[1], np.cumsum(flags) - flags, "exclusive_sum of per-thread ints")


def test_consecutive_calls_need_no_barrier():
    """Back-to-back block collectives of the same and of different specialisations."""

    @jit_any_block
    def kernel(x, out):
        g = global_rank()
        v = x[g]
        for _ in range(3):
            total = coop.block.all_sum(v)
            top = coop.block.all_reduce(v, coop.ops.max, algorithm="raking")
            v = coop.block.inclusive_sum(v) + total - top
        out[g] = v

    threads = 96
    x = (np.arange(threads, dtype=np.int64) * 7) % 11
    out = np.zeros_like(x)
    kernel[1, threads](x, out)
    expected = x.copy()
    for _ in range(3):
        expected = np.cumsum(expected) + expected.sum() - expected.max()
    assert_equal_exact(out, expected, "chained block collectives")


@cuda.jit(device=True)
def compose_affine(f, g):
    """x -> a*x + b, f then g: associative, not commutative."""
    return (f[0] * g[0], f[1] * g[0] + g[1])


@pytest.mark.parametrize("algorithm", ["warp_reductions", "raking"] + SCAN_ALGORITHMS)
def test_non_commutative(algorithm):
    ALG = algorithm
    is_scan = algorithm in SCAN_ALGORITHMS

    if is_scan:

        @jit_any_block
        def kernel(a, b, out):
            g = global_rank()
            r = coop.block.inclusive_scan((a[g], b[g]), compose_affine, algorithm=ALG)
            out[g] = r[0] * 1000 + r[1]

    else:

        @jit_any_block
        def kernel(a, b, out):
            g = global_rank()
            r = coop.block.all_reduce((a[g], b[g]), compose_affine, algorithm=ALG)
            out[g] = r[0] * 1000 + r[1]

    rng = np.random.default_rng(6)
    for shape in [33, (16, 4)] if not FULL_MATRIX else [33, 96, 500, (8, 8, 4)]:
        threads = size(shape)
        n = threads * BLOCKS
        a = rng.integers(-1, 2, n).astype(np.int64)
        b = rng.integers(-3, 4, n).astype(np.int64)
        out = np.zeros(n, np.int64)
        kernel[BLOCKS, shape](a, b, out)
        for s in range(0, n, threads):
            fs = [(a[i], b[i]) for i in range(s, s + threads)]
            compose = lambda f, g: (f[0] * g[0], f[1] * g[0] + g[1])  # noqa: E731
            if is_scan:
                expected = [f[0] * 1000 + f[1] for f in inclusive_reference(fs, compose)]
            else:
                total = reduce_reference(fs, compose)
                expected = [total[0] * 1000 + total[1]] * threads
            assert_equal_exact(out[s : s + threads], expected, f"{algorithm} {shape}")


@pytest.mark.skipif(not ON_GPU, reason="run-to-run determinism of GPU floating point")
def test_float_sums_are_bitwise_identical_across_runs():
    @jit_any_block
    def kernel(x, sums, scans):
        g = global_rank()
        items = cuda.local.array(4, np.float32)
        for i in range(4):
            items[i] = x[g * 4 + i]
        sums[g] = coop.block.all_sum(items)
        coop.block.inclusive_sum(items, items)
        for i in range(4):
            scans[g * 4 + i] = items[i]

    x = np.random.default_rng(7).standard_normal(256 * 64 * 4).astype(np.float32)
    runs = []
    for _ in range(2):
        sums, scans = np.zeros(256 * 64, np.float32), np.zeros(256 * 64 * 4, np.float32)
        kernel[64, 256](x, sums, scans)
        runs.append((sums.view(np.uint32), scans.view(np.uint32)))
    assert np.array_equal(runs[0][0], runs[1][0]) and np.array_equal(runs[0][1], runs[1][1])


# -- temp_storage: one caller's shared array for several primitives ------------------------


@pytest.mark.parametrize("reduce_algorithm,scan_algorithm", list(zip(REDUCE_ALGORITHMS, SCAN_ALGORITHMS)))
def test_temp_storage_shared_between_primitives(reduce_algorithm, scan_algorithm):
    """One shared array, sized on the host as the largest need, serves a scan, a sum, an
    all_reduce of tuples and another scan back to back, without barriers in between."""
    THREADS, N, RA, SA = 96, 3, reduce_algorithm, scan_algorithm
    BYTES = max(
        coop.block.exclusive_sum.temp_storage_bytes(np.int32, THREADS, algorithm=SA),
        coop.block.sum.temp_storage_bytes(np.int32, THREADS, algorithm=RA),
        coop.block.all_reduce.temp_storage_bytes((np.int32, np.int64), THREADS, algorithm=RA),
        coop.block.inclusive_scan.temp_storage_bytes(np.int32, THREADS, algorithm=SA),
    )
    load = load_items(N, np.int32)

    @jit_any_block
    def kernel(x, scans, totals):
        temp = cuda.shared.array(BYTES, np.uint8, alignment=8)
        g = global_rank()
        items = cuda.local.array(N, np.int32)
        load(x, g, items)
        total = coop.block.exclusive_sum(items, items, threads=THREADS, algorithm=SA, temp_storage=temp)
        summed = coop.block.sum(items, threads=THREADS, algorithm=RA, temp_storage=temp)
        best = coop.block.all_reduce((items[N - 1], g), coop.ops.argmax, threads=THREADS,
                                     algorithm=RA, temp_storage=temp)
        coop.block.inclusive_scan(items, operator.add, items, threads=THREADS, algorithm=SA, temp_storage=temp)
        for i in range(N):
            scans[g * N + i] = items[i]
        totals[g, 0] = total
        totals[g, 1] = best[0]
        totals[g, 2] = best[1]
        if cuda.threadIdx.x == 0:
            totals[g, 3] = summed

    rng = np.random.default_rng(11)
    x = rng.integers(0, 5, THREADS * N * BLOCKS).astype(np.int32)
    scans = np.zeros_like(x)
    totals = np.zeros((THREADS * BLOCKS, 4), np.int64)
    kernel[BLOCKS, THREADS](x, scans, totals)
    for b, tile in enumerate(tiles_of(x, THREADS, N)):
        exclusive = np.cumsum(tile) - tile
        rows = totals[b * THREADS : (b + 1) * THREADS]
        assert_equal_exact(rows[:, 0], np.full(THREADS, tile.sum()), "exclusive_sum aggregate")
        assert rows[0, 3] == exclusive.sum(), "sum of the exclusive scan"
        last = exclusive[N - 1 :: N]  # each thread's last item after the scan
        winner = int(np.argmax(last))  # argmax keeps the first of equal values
        assert_equal_exact(rows[:, 1], np.full(THREADS, last[winner]), "argmax value")
        assert_equal_exact(rows[:, 2], np.full(THREADS, b * THREADS + winner), "argmax index")
        assert_equal_exact(scans[b * THREADS * N : (b + 1) * THREADS * N], np.cumsum(exclusive), "scan of the scan")


def test_temp_storage_bytes_cover_every_type():
    """Sizes in whole 8-byte words, growing with the value type and the block size."""
    sizes = [coop.block.reduce.temp_storage_bytes(t, 256, algorithm="raking")
             for t in (np.int8, np.float32, np.complex128, (np.float32, np.int64))]
    assert all(s % 8 == 0 for s in sizes) and sizes == sorted(sizes)
    assert coop.block.exclusive_scan.temp_storage_bytes(np.int32, 1024) > coop.block.exclusive_scan.temp_storage_bytes(np.int32, 32)
    with pytest.raises(Exception, match="threads must be from 1 to 1024"):
        coop.block.sum.temp_storage_bytes(np.int32, 2048)


# -- arrays too small for the call: rejected before the kernel runs ------------------------


def _too_small_kernels():
    @cuda.jit
    def short_output(x, out):
        items = cuda.local.array(4, np.int32)
        shorter = cuda.local.array(3, np.int32)
        for i in range(4):
            items[i] = x[i]
        coop.block.inclusive_sum(items, shorter, threads=32)
        out[0] = shorter[0]

    BYTES = coop.block.all_sum.temp_storage_bytes(np.int32, 64) - 8

    @cuda.jit
    def small_temp_storage(x, out):
        temp = cuda.shared.array(BYTES, np.uint8, alignment=8)
        out[0] = coop.block.all_sum(x[cuda.threadIdx.x], threads=64, temp_storage=temp)

    return [
        (short_output, 32, "coop_error__coop_block_inclusive_sum__output_too_short",
         "coop.block.inclusive_sum: output holds 3 items, it needs at least 4"),
        (small_temp_storage, 64, "coop_error__coop_block_all_sum__temp_storage_too_small",
         "coop.block.all_sum: temp_storage holds"),
    ]


@pytest.mark.parametrize("case", range(2))
def test_arrays_too_small_are_rejected(case):
    """On the GPU the kernel fails to link, naming primitive and parameter; under the
    simulator the call raises with the full message."""
    kernel, threads, symbol, message = _too_small_kernels()[case]
    expect_link_error(symbol)
    x, out = np.ones(64, np.int32), np.zeros(1, np.int32)
    with pytest.raises(Exception) as error:
        kernel[1, threads](x, out)
    assert (symbol if ON_GPU else message) in str(error.value)
