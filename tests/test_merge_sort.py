"""coop.block.merge_sort and coop.warp.merge_sort against NumPy's stable sorts: key types,
comparators (operator.lt, operator.gt, a lambda, a device function), block shapes
(powers of two and not) and items per thread, logical warp widths, partial tiles, values
(the original positions, which proves stability), a shared temp_storage. Misuse is in
the table of tests/codegen_cases.py, run on both paths by tests/test_misuse.py."""

import operator

import numpy as np
import pytest
from numba import cuda

import coop
from helpers import (
    FULL_MATRIX,
    INTEGER_DTYPES,
    ON_GPU,
    STATIC_SHARED_BYTES,
    assert_equal_exact,
    jit_any_block,
    launch_shape,
    launch_with_dynamic_shared,
    shape_id,
    size_of,
)

KEY_DTYPES = INTEGER_DTYPES + [np.float16, np.float32, np.float64]

if FULL_MATRIX:
    SHAPES = [32, 64, 96, 128, 256, 512, 1024, (16, 8), (8, 4, 4), 1, 33, 100]
    ITEMS = [1, 2, 3, 4, 7, 8, 16]
    WIDTHS = [1, 2, 4, 8, 16, 32]
    WARP_ITEMS = [1, 2, 3, 4, 7, 8, 16]
else:
    SHAPES = [32, 96, (16, 4)]
    ITEMS = [1, 3]
    WIDTHS = [1, 8, 32]
    WARP_ITEMS = [1, 4]


@cuda.jit(device=True)
def by_last_digit(a, b):
    return a % 10 < b % 10


COMPARATORS = {
    "lt": (operator.lt, lambda keys: keys),
    "gt": (operator.gt, lambda keys: -keys.astype(np.float64)),
    "device_function": (by_last_digit, lambda keys: keys.astype(np.int64) % 10),
}


def block_kernel(shape, n, key_dtype, compare, partial, dynamic=False):
    """The sort with its own buffer, or (``dynamic``) with a dynamic shared temp_storage."""
    T, N, KT = shape, n, key_dtype
    THREADS = size_of(shape)
    TILE = THREADS * n

    @jit_any_block
    def kernel(x, out, positions, valid, oob):
        rank = cuda.threadIdx.x + cuda.threadIdx.y * cuda.blockDim.x + cuda.threadIdx.z * cuda.blockDim.x * cuda.blockDim.y
        base = cuda.blockIdx.x * TILE
        keys = cuda.local.array(N, KT)
        values = cuda.local.array(N, np.int32)
        for i in range(N):
            keys[i] = x[base + rank * N + i]
            values[i] = rank * N + i
        if partial:
            coop.block.merge_sort(keys, compare, values, threads=T, items_per_thread=N, valid_items=valid,
                                  oob_default=oob[0])
        elif dynamic:
            coop.block.merge_sort(keys, compare, values, threads=T, items_per_thread=N,
                                  temp_storage=cuda.shared.array(0, np.uint8))
        else:
            coop.block.merge_sort(keys, compare, values, threads=T, items_per_thread=N)
        for i in range(N):
            out[base + rank * N + i] = keys[i]
            positions[base + rank * N + i] = values[i]

    return kernel


def random_keys(key_dtype, size, rng):
    """Keys with many duplicates (stability shows)."""
    if np.dtype(key_dtype).kind == "f":
        return rng.integers(-20, 20, size).astype(key_dtype) / 4
    info = np.iinfo(key_dtype)
    return rng.integers(max(info.min, -20), min(info.max, 20), size, endpoint=True).astype(key_dtype)


def check_tiles(x, out, positions, tile, valid, sort_key, what):
    for b in range(x.size // tile):
        keys = x[b * tile:b * tile + valid]
        order = np.argsort(sort_key(keys), kind="stable").astype(np.int32)
        here = f"{what}, tile {b}"
        assert_equal_exact(positions[b * tile:b * tile + valid], order, f"{here}: positions")
        assert_equal_exact(out[b * tile:b * tile + valid], keys[order], f"{here}: keys")


def check_block_sort(key_dtype, shape, n, comparator="lt", valid=None, blocks=2, seed=0):
    compare, sort_key = COMPARATORS[comparator]
    rng = np.random.default_rng(seed)
    tile = size_of(shape) * n
    x = random_keys(key_dtype, blocks * tile, rng)
    out, positions = np.zeros_like(x), np.zeros(x.size, np.int32)
    partial = valid is not None
    oob = np.array([np.finfo(key_dtype).max if np.dtype(key_dtype).kind == "f" else np.iinfo(key_dtype).max],
                   key_dtype)
    nbytes = coop.block.merge_sort.temp_storage_bytes(key_dtype, shape, n, value_dtype=np.int32)
    dynamic = nbytes > STATIC_SHARED_BYTES and not partial
    kernel = block_kernel(shape, n, key_dtype, compare, partial, dynamic)
    args = (x, out, positions, tile if valid is None else valid, oob)
    if dynamic:  # more than a kernel's static shared memory: the caller's temp_storage
        launch_with_dynamic_shared(kernel, blocks, launch_shape(shape), nbytes, *args)
    else:
        kernel[blocks, launch_shape(shape)](*args)
    check_tiles(x, out, positions, tile, tile if valid is None else max(min(valid, tile), 0), sort_key,
                f"{np.dtype(key_dtype).name} {shape_id(shape)}x{n}")


@pytest.mark.parametrize("key_dtype", [pytest.param(d, id=np.dtype(d).name) for d in KEY_DTYPES])
def test_block_merge_sort_every_key_type(key_dtype):
    check_block_sort(key_dtype, 64, 3)


@pytest.mark.parametrize("comparator", list(COMPARATORS))
def test_block_merge_sort_comparators(comparator):
    check_block_sort(np.int32, 64, 4, comparator=comparator, seed=2)


def test_block_merge_sort_lambda():
    THREADS, N = 32, 2

    @cuda.jit
    def kernel(x, out):
        keys = cuda.local.array(N, np.int32)
        t = cuda.threadIdx.x
        for i in range(N):
            keys[i] = x[t * N + i]
        coop.block.merge_sort(keys, lambda a, b: abs(a) < abs(b), threads=THREADS, items_per_thread=N)
        for i in range(N):
            out[t * N + i] = keys[i]

    x = np.random.default_rng(5).integers(-30, 30, THREADS * N).astype(np.int32)
    out = np.zeros_like(x)
    kernel[1, THREADS](x, out)
    assert_equal_exact(out, x[np.argsort(np.abs(x), kind="stable")], "keys")


@pytest.mark.parametrize("n", ITEMS)
@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_block_merge_sort_shapes(shape, n):
    key_dtype = np.float32 if FULL_MATRIX else np.int32
    check_block_sort(key_dtype, shape, n, seed=n)


@pytest.mark.parametrize("shape,n", [(64, 3), (96, 4), (17, 3)] + ([(256, 8), (1024, 7)] if FULL_MATRIX else []))
def test_block_merge_sort_partial_tiles(shape, n):
    """valid_items from none to more than the tile (the whole tile: a block of 17 or 96
    threads read keys past its tile before)."""
    tile = size_of(shape) * n
    for valid in sorted({0, 1, tile // 2 + 1, tile - 1, tile, tile + 3}):
        check_block_sort(np.int16, shape, n, valid=valid, seed=valid)


def test_block_merge_sort_temp_storage_shared_with_a_load():
    """One temp_storage for a transposing load, the sort and a transposing store."""
    THREADS, N = 64, 4
    TILE = THREADS * N
    nbytes = max(
        coop.block.merge_sort.temp_storage_bytes(np.int32, THREADS, N, value_dtype=np.int32),
        coop.block.load.temp_storage_bytes(np.int32, THREADS, N, algorithm="transpose"),
    )

    @cuda.jit
    def kernel(x, out):
        temp = cuda.shared.array(nbytes, np.uint8, alignment=8)
        keys = cuda.local.array(N, np.int32)
        values = cuda.local.array(N, np.int32)
        base = cuda.blockIdx.x * TILE
        coop.block.load(x[base:], keys, threads=THREADS, items_per_thread=N, algorithm="transpose",
                        temp_storage=temp)
        for i in range(N):
            values[i] = -keys[i]
        coop.block.merge_sort(keys, operator.lt, values, threads=THREADS, items_per_thread=N, temp_storage=temp)
        for i in range(N):
            keys[i] += values[i]  # 0 where each value still follows its key
        coop.block.store(out[base:], keys, threads=THREADS, items_per_thread=N, algorithm="transpose",
                         temp_storage=temp)

    x = np.random.default_rng(7).integers(-50, 50, 2 * TILE).astype(np.int32)
    out = np.ones_like(x)
    kernel[2, THREADS](x, out)
    assert_equal_exact(out, np.zeros_like(x), "keys + values")


def test_block_merge_sort_twice_in_a_row():
    """Back-to-back calls on one buffer: the second call's writes wait for the first's reads."""
    THREADS, N = 64, 4

    @cuda.jit
    def kernel(x, out):
        keys = cuda.local.array(N, np.int32)
        t = cuda.threadIdx.x
        for i in range(N):
            keys[i] = x[t * N + i]
        coop.block.merge_sort(keys, operator.lt, threads=THREADS, items_per_thread=N)
        coop.block.merge_sort(keys, operator.gt, threads=THREADS, items_per_thread=N)
        for i in range(N):
            out[t * N + i] = keys[i]

    x = np.random.default_rng(8).integers(0, 1000, THREADS * N).astype(np.int32)
    out = np.zeros_like(x)
    kernel[1, THREADS](x, out)
    assert_equal_exact(out, np.sort(x)[::-1], "keys")


# -- tuple keys and values -------------------------------------------------------------------

@cuda.jit(device=True)
def second_descending(a, b):
    """Tuple keys by their second member, largest first, then by their first."""
    return a[1] > b[1] or (a[1] == b[1] and a[0] < b[0])


# Tuple keys (int16, float32) compared as tuples: lexicographically (operator.lt), or by a
# device function reading their members; the reference is NumPy's stable lexsort of the
# members.
TUPLE_COMPARATORS = {
    "lt": (operator.lt, lambda high, low: np.lexsort((low, high))),
    "device_function": (second_descending, lambda high, low: np.lexsort((high, -low.astype(np.float64)))),
}
TUPLE_OOB = {"lt": (np.int16(32767), np.float32(np.inf)), "device_function": (np.int16(32767), np.float32(-np.inf))}


def tuple_sort_kernel(group, shape, n, compare, partial, oob_default):
    """Sorts (a whole tile, or ``valid`` of it) of tuple keys ``(high, low)`` carrying a
    tuple of values ``(positions, halves)``: by the block, or by logical warps of 16."""
    T, N, OOB = shape, n, oob_default
    THREADS = size_of(shape)
    TILE = THREADS * n if group == "block" else 16 * n

    @jit_any_block
    def kernel(high_in, low_in, high_out, low_out, positions_out, halves_out, valid):
        rank = cuda.threadIdx.x + cuda.threadIdx.y * cuda.blockDim.x + cuda.threadIdx.z * cuda.blockDim.x * cuda.blockDim.y
        at = cuda.blockIdx.x * THREADS * N + rank * N
        high = cuda.local.array(N, np.int16)
        low = cuda.local.array(N, np.float32)
        positions = cuda.local.array(N, np.int32)
        halves = cuda.local.array(N, np.float64)
        for i in range(N):
            high[i] = high_in[at + i]
            low[i] = low_in[at + i]
            positions[i] = (rank * N + i) % TILE
            halves[i] = 0.5 * positions[i]
        if group == "block" and partial:
            coop.block.merge_sort((high, low), compare, (positions, halves), threads=T, items_per_thread=N,
                                  valid_items=valid, oob_default=OOB)
        elif group == "block":
            coop.block.merge_sort((high, low), compare, (positions, halves), threads=T, items_per_thread=N)
        elif partial:
            coop.warp.merge_sort((high, low), compare, (positions, halves), threads=T, items_per_thread=N, width=16,
                                 valid_items=valid, oob_default=OOB)
        else:
            coop.warp.merge_sort((high, low), compare, (positions, halves), threads=T, items_per_thread=N, width=16)
        for i in range(N):
            high_out[at + i] = high[i]
            low_out[at + i] = low[i]
            positions_out[at + i] = positions[i]
            halves_out[at + i] = halves[i]

    return kernel


def check_tuple_sort(group, shape, n, comparator, valid=None, blocks=2, seed=0):
    compare, order_of = TUPLE_COMPARATORS[comparator]
    rng = np.random.default_rng(seed)
    size = blocks * size_of(shape) * n
    high = rng.integers(-3, 3, size).astype(np.int16)  # (few distinct keys: stability shows)
    low = (rng.integers(-4, 4, size) / 2).astype(np.float32)
    outs = np.zeros_like(high), np.zeros_like(low), np.zeros(size, np.int32), np.zeros(size, np.float64)
    tile = size_of(shape) * n if group == "block" else 16 * n
    kernel = tuple_sort_kernel(group, shape, n, compare, valid is not None, TUPLE_OOB[comparator])
    kernel[blocks, launch_shape(shape)](high, low, *outs, tile if valid is None else valid)
    count = tile if valid is None else min(valid, tile)
    for t in range(size // tile):
        here = f"{group} {shape_id(shape)}x{n}, {comparator}, tile {t}"
        keys = slice(t * tile, t * tile + count)
        order = order_of(high[keys], low[keys]).astype(np.int32)
        assert_equal_exact(outs[2][keys], order, f"{here}: positions")
        assert_equal_exact(outs[3][keys], order * 0.5, f"{here}: the second value")
        assert_equal_exact(outs[0][keys], high[keys][order], f"{here}: the keys' first member")
        assert_equal_exact(outs[1][keys], low[keys][order], f"{here}: the keys' second member")


@pytest.mark.parametrize("comparator", sorted(TUPLE_COMPARATORS))
@pytest.mark.parametrize("shape,n", [(64, 3), ((16, 4), 2)], ids=["64x3", "16x4x2"])
def test_block_merge_sort_tuple_keys_and_values(shape, n, comparator):
    check_tuple_sort("block", shape, n, comparator)


@pytest.mark.parametrize("valid", [1, 100, 191, 200])
def test_block_merge_sort_tuple_keys_partial_tiles(valid):
    check_tuple_sort("block", 64, 3, "lt" if valid % 2 else "device_function", valid=valid, seed=valid)


@pytest.mark.parametrize("valid", [None, 0, 21, 50])
def test_warp_merge_sort_tuple_keys_and_values(valid):
    check_tuple_sort("warp", 64, 3, "device_function" if valid else "lt", valid=valid, seed=3)


def random_tuple_sort_kernel(group, shape, n, width, key_dtypes, value_dtypes, descending, partial, oob_default):
    """A sort of 1 to 3 key members of ``key_dtypes`` carrying 0 to 2 value arrays, by the
    block or by logical warps of ``width``; the arrays left out are not passed."""
    T, N, W, M, V, OOB = shape, n, width, len(key_dtypes), len(value_dtypes), oob_default
    D0, D1, D2 = (list(key_dtypes) + [np.int8] * 2)[:3]
    E0, E1 = (list(value_dtypes) + [np.int8] * 2)[:2]
    compare = operator.gt if descending else operator.lt
    by_block, with_values = group == "block", V > 0
    THREADS = size_of(shape)

    @jit_any_block
    def kernel(k0, k1, k2, v0, v1, valid):
        rank = cuda.threadIdx.x + cuda.threadIdx.y * cuda.blockDim.x + cuda.threadIdx.z * cuda.blockDim.x * cuda.blockDim.y
        at = cuda.blockIdx.x * THREADS * N + rank * N
        a, b, c = cuda.local.array(N, D0), cuda.local.array(N, D1), cuda.local.array(N, D2)
        p, q = cuda.local.array(N, E0), cuda.local.array(N, E1)
        for i in range(N):
            a[i], b[i], c[i], p[i], q[i] = k0[at + i], k1[at + i], k2[at + i], v0[at + i], v1[at + i]
        keys, values = (a, b, c)[:M], (p, q)[:V]
        if by_block and with_values and partial:
            coop.block.merge_sort(keys, compare, values, threads=T, items_per_thread=N, valid_items=valid,
                                  oob_default=OOB)
        elif by_block and with_values:
            coop.block.merge_sort(keys, compare, values, threads=T, items_per_thread=N)
        elif by_block and partial:
            coop.block.merge_sort(keys, compare, threads=T, items_per_thread=N, valid_items=valid, oob_default=OOB)
        elif by_block:
            coop.block.merge_sort(keys, compare, threads=T, items_per_thread=N)
        elif with_values and partial:
            coop.warp.merge_sort(keys, compare, values, threads=T, items_per_thread=N, width=W, valid_items=valid,
                                 oob_default=OOB)
        elif with_values:
            coop.warp.merge_sort(keys, compare, values, threads=T, items_per_thread=N, width=W)
        elif partial:
            coop.warp.merge_sort(keys, compare, threads=T, items_per_thread=N, width=W, valid_items=valid,
                                 oob_default=OOB)
        else:
            coop.warp.merge_sort(keys, compare, threads=T, items_per_thread=N, width=W)
        for i in range(N):
            k0[at + i], k1[at + i], k2[at + i], v0[at + i], v1[at + i] = a[i], b[i], c[i], p[i], q[i]

    return kernel


def random_members(dtype, rng, size):
    """Few distinct items (ties between tuples show stability); floats with -0.0, which
    ``<`` takes as +0.0."""
    if np.dtype(dtype) == np.bool_:
        return rng.integers(0, 2, size).astype(bool)
    if np.dtype(dtype).kind == "f":
        return np.array([-1.5, -0.0, 0.0, 2.0, np.inf], dtype)[rng.integers(0, 5, size)]
    return rng.integers(0, 4, size).astype(dtype)


@pytest.mark.parametrize("seed", range(16 if FULL_MATRIX else 4))
def test_random_tuple_sorts(seed):
    """Block and warp sorts of random tuple keys (1 to 3 members of any type) carrying 0 to
    2 value arrays, either direction, whole or partial tiles, against NumPy's stable
    lexsort of the members: the values are the keys' positions, so each key is checked to
    have moved with its values."""
    rng = np.random.default_rng(2000 + seed)
    dtypes = INTEGER_DTYPES + [np.bool_, np.float16, np.float32, np.float64]
    key_dtypes = [dtypes[i] for i in rng.integers(0, len(dtypes), rng.integers(1, 4))]
    value_dtypes = [np.int32, np.float64][:int(rng.integers(0, 3))]
    group = ["block", "warp"][rng.integers(0, 2)]
    shape = [32, 64, 96, 33, (16, 4), (4, 2, 4)][rng.integers(0, 6)]
    widths = [w for w in (1, 2, 4, 8, 16, 32) if size_of(shape) % w == 0]
    width = widths[rng.integers(len(widths))]
    n = int(rng.integers(1, 6))
    descending, partial = bool(rng.integers(0, 2)), bool(rng.integers(0, 2))
    tile = size_of(shape) * n if group == "block" else width * n
    valid = int(rng.integers(1, tile + 1)) if partial else tile
    worst = [(np.iinfo(d).min if descending else np.iinfo(d).max) if np.dtype(d).kind in "iu" else
             (not descending) if np.dtype(d) == np.bool_ else (-np.inf if descending else np.inf) for d in key_dtypes]
    oob_default = tuple(np.dtype(d).type(w) for d, w in zip(key_dtypes, worst))
    size = 2 * size_of(shape) * n
    keys = [random_members(d, rng, size) for d in key_dtypes]
    positions = np.arange(size) % tile
    values = [positions.astype(d) for d in value_dtypes]
    arrays = [a.copy() for a in keys] + [np.zeros(size, np.int8)] * (3 - len(keys))
    arrays += [v.copy() for v in values] + [np.zeros(size, np.int8)] * (2 - len(values))
    kernel = random_tuple_sort_kernel(group, shape, n, width, key_dtypes, value_dtypes, descending, partial,
                                      oob_default)
    kernel[2, launch_shape(shape)](*arrays, valid)
    what = (f"{group} {shape_id(shape)}x{n} (width {width}), keys {[np.dtype(d).name for d in key_dtypes]}, values "
            f"{[np.dtype(d).name for d in value_dtypes]}, {'descending' if descending else 'ascending'}, "
            f"{valid} of {tile} valid")
    for t in range(size // tile):
        tile_keys = [member[t * tile:t * tile + valid] for member in keys]
        ranks = [np.unique(member + 0, return_inverse=True)[1].reshape(-1) for member in tile_keys]  # (-0.0 as 0.0)
        order = np.lexsort([-r if descending else r for r in reversed(ranks)])
        for j, member in enumerate(tile_keys):
            assert_equal_exact(arrays[j][t * tile:t * tile + valid], member[order], f"{what}, tile {t}: key member {j}")
        for j, dtype in enumerate(value_dtypes):
            assert_equal_exact(arrays[3 + j][t * tile:t * tile + valid], order.astype(dtype),
                               f"{what}, tile {t}: values {j}")


def test_merge_sort_temp_storage_bytes_of_tuples():
    """A tuple of dtypes sizes tuple keys (and values): one slot per tile position, the
    size of the tuple (as a scratch slot: its members packed, aligned to the largest)."""
    one = coop.block.merge_sort.temp_storage_bytes((np.int16, np.float32), 64, 3)
    assert one >= 8 * (64 * 3 + 1)
    both = coop.block.merge_sort.temp_storage_bytes((np.int16, np.float32), 64, 3, value_dtype=(np.int32, np.float64))
    assert both >= 16 * (64 * 3 + 1) and both > one
    warp = coop.warp.merge_sort.temp_storage_bytes((np.int16, np.float32), 64, 3, value_dtype=(np.int32, np.float64))
    assert warp >= 2 * 16 * (32 * 3 + 1)


# -- warp merge sort ------------------------------------------------------------------------


def warp_kernel(threads, width, n, key_dtype, compare, partial):
    T, W, N, KT = threads, width, n, key_dtype

    @cuda.jit
    def kernel(x, out, positions, valid, oob):
        t = cuda.threadIdx.x
        lane = t % W
        keys = cuda.local.array(N, KT)
        values = cuda.local.array(N, np.int32)
        for i in range(N):
            keys[i] = x[t * N + i]
            values[i] = lane * N + i
        if partial:
            coop.warp.merge_sort(keys, compare, values, threads=T, items_per_thread=N, width=W, valid_items=valid,
                                 oob_default=oob[0])
        else:
            coop.warp.merge_sort(keys, compare, values, threads=T, items_per_thread=N, width=W)
        for i in range(N):
            out[t * N + i] = keys[i]
            positions[t * N + i] = values[i]

    return kernel


def check_warp_sort(key_dtype, width, n, comparator="lt", valid=None, threads=64, seed=0):
    compare, sort_key = COMPARATORS[comparator]
    rng = np.random.default_rng(seed)
    x = random_keys(key_dtype, threads * n, rng)
    out, positions = np.zeros_like(x), np.zeros(x.size, np.int32)
    oob = np.array([np.iinfo(key_dtype).max if np.dtype(key_dtype).kind in "iu" else np.finfo(key_dtype).max],
                   key_dtype)
    tile = width * n
    kernel = warp_kernel(threads, width, n, key_dtype, compare, valid is not None)
    kernel[1, threads](x, out, positions, tile if valid is None else valid, oob)
    check_tiles(x, out, positions, tile, tile if valid is None else valid, sort_key,
                f"{np.dtype(key_dtype).name} width {width} x {n}")


@pytest.mark.parametrize("n", WARP_ITEMS)
@pytest.mark.parametrize("width", WIDTHS)
def test_warp_merge_sort(width, n):
    check_warp_sort(np.int32, width, n, seed=width + n)


@pytest.mark.parametrize("key_dtype", [pytest.param(d, id=np.dtype(d).name) for d in (np.int8, np.uint64, np.float64)])
@pytest.mark.parametrize("comparator", ["gt", "device_function"])
def test_warp_merge_sort_key_types_and_comparators(key_dtype, comparator):
    if comparator == "device_function" and np.dtype(key_dtype).kind == "f":
        pytest.skip("the digit comparator is for integers")
    check_warp_sort(key_dtype, 16, 3, comparator=comparator, seed=4)


@pytest.mark.parametrize("n", [4, 8])
@pytest.mark.parametrize("with_values", [False, True], ids=["keys", "pairs"])
def test_warp_load_sort_store_share_one_temp_storage(n, with_values):
    """CUB's per-warp TempStorage union: each warp of a 4-warp block loads, sorts and stores
    its tile through one temp_storage array, with no block barrier. The three primitives
    need slices of different sizes (an exchange's 32*n + 1 items, a sort's keys and values)
    and must still put each warp's in the same part of the array, or a warp sorting
    overwrites its neighbour's load (on a GPU: wrong keys in about one tile in ten)."""
    THREADS, N = 128, n
    TILE = 32 * N
    sizes = [coop.warp.load.temp_storage_bytes(np.int32, THREADS, N, algorithm="transpose"),
             coop.warp.merge_sort.temp_storage_bytes(np.int32, THREADS, N,
                                                     value_dtype=np.float64 if with_values else None)]
    BYTES = max(sizes)

    @cuda.jit
    def kernel(x, out, moved):
        temp = cuda.shared.array(BYTES, np.uint8, alignment=16)
        keys = cuda.local.array(N, np.int32)
        values = cuda.local.array(N, np.float64)
        base = cuda.blockIdx.x * THREADS * N + cuda.threadIdx.x // 32 * TILE
        coop.warp.load(x[base:], keys, threads=THREADS, items_per_thread=N, algorithm="transpose", temp_storage=temp)
        for i in range(N):
            values[i] = keys[i] * 0.5
        if with_values:
            coop.warp.merge_sort(keys, operator.lt, values, threads=THREADS, items_per_thread=N, temp_storage=temp)
        else:
            coop.warp.merge_sort(keys, operator.lt, threads=THREADS, items_per_thread=N, temp_storage=temp)
        coop.warp.store(out[base:], keys, threads=THREADS, items_per_thread=N, algorithm="transpose",
                        temp_storage=temp)
        lane = cuda.threadIdx.x % 32
        for i in range(N):
            moved[base + lane * N + i] = values[i]

    blocks = 512 if ON_GPU else 2
    x = np.random.default_rng(n).integers(-(1 << 31), 1 << 31, blocks * THREADS * N, dtype=np.int64).astype(np.int32)
    out, moved = np.zeros_like(x), np.zeros(x.size, np.float64)
    kernel[blocks, THREADS](x, out, moved)
    expected = np.sort(x.reshape(-1, TILE), axis=1).ravel()
    assert_equal_exact(out, expected, "keys")
    if with_values:
        assert_equal_exact(moved, expected * 0.5, "values")


@pytest.mark.parametrize("width,n", [(8, 3), (32, 4)])
def test_warp_merge_sort_partial_tiles(width, n):
    tile = width * n
    for valid in sorted({0, 1, tile // 2, tile - 1, tile}):
        check_warp_sort(np.int32, width, n, valid=valid, seed=valid)
