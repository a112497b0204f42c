"""coop.block.histogram, flag_heads / flag_tails / flag_heads_and_tails, subtract_left /
subtract_right, run_length_decode and run_length_encode against NumPy references
(``np.bincount``, heads and tails written out, differences, ``np.repeat``): every item
type, tuples, block shapes and items per thread, partial tiles, tile neighbours, and one
temp_storage shared by all of them. Misuse is in tests/codegen_cases.py."""

import operator

import numpy as np
import pytest
from numba import cuda

import coop
from helpers import (
    FULL_MATRIX,
    INTEGER_DTYPES,
    STATIC_SHARED_BYTES,
    assert_equal_exact,
    dtype_id,
    jit_any_block,
    launch_shape,
    launch_with_dynamic_shared,
    shape_id,
    size_of,
)

ITEM_DTYPES = INTEGER_DTYPES + [np.float32, np.float64]
if FULL_MATRIX:
    SHAPES = [32, 33, 96, 128, 256, 512, 1024, (16, 8), (8, 4, 4)]
    ITEMS = [1, 2, 3, 4, 7, 8, 16]
    DTYPES = ITEM_DTYPES
else:
    SHAPES = [32, 33, (8, 4)]
    ITEMS = [1, 3]
    DTYPES = [np.int32, np.uint8, np.float64]
BLOCKS = 3


@cuda.jit(device=True)
def block_rank():
    return cuda.threadIdx.x + cuda.threadIdx.y * cuda.blockDim.x + cuda.threadIdx.z * cuda.blockDim.x * cuda.blockDim.y


def runs_of(dtype, size, rng, low=-3, high=4):
    """Items in runs of 1 to 4 equal values, integer-valued, within ``dtype``."""
    info = np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else None
    low = max(low, int(info.min)) if info is not None else low
    values = rng.integers(low, high, size)
    return np.repeat(values, rng.integers(1, 5, size))[:size].astype(dtype)


def valid_counts(tile):
    """Per block: a partial tile, a single item, and more than the tile (the whole tile:
    its last item is the tile's last)."""
    return np.array([max(1, tile - tile // 3 - 1), 1, tile + 3][:BLOCKS], np.int32)


def wrapping(fn):
    with np.errstate(over="ignore"):
        return fn()


# -- discontinuity and adjacent difference ------------------------------------------------------


def neighbours_kernel(shape, n, dtype, partial, with_neighbours, with_index):
    T, N, THREADS = shape, n, size_of(shape)
    TILE = THREADS * n

    if with_index:
        @cuda.jit(device=True)
        def differ(a, b, index):
            return a != b or index % 5 == 0
    else:
        differ = operator.ne

    @jit_any_block
    def kernel(x, valid, neighbours, out):
        rank = block_rank()
        b = cuda.blockIdx.x
        base = b * TILE + rank * N
        items = cuda.local.array(N, dtype)
        heads = cuda.local.array(N, np.int32)
        tails = cuda.local.array(N, np.uint8)
        heads2 = cuda.local.array(N, np.bool_)
        tails2 = cuda.local.array(N, np.int64)
        left = cuda.local.array(N, dtype)
        right = cuda.local.array(N, dtype)
        for i in range(N):
            items[i] = x[base + i]
        before, after = neighbours[2 * b], neighbours[2 * b + 1]
        if partial:
            v = valid[b]
            if with_neighbours:
                coop.block.flag_heads(items, heads, differ, tile_predecessor=before, threads=T, valid_items=v)
                coop.block.flag_tails(items, tails, differ, tile_successor=after, threads=T, valid_items=v)
                coop.block.flag_heads_and_tails(items, heads2, tails2, differ, tile_predecessor=before,
                                                tile_successor=after, threads=T, valid_items=v)
                coop.block.subtract_left(items, left, tile_predecessor=before, threads=T, valid_items=v)
                coop.block.subtract_right(items, right, tile_successor=after, threads=T, valid_items=v)
            else:
                coop.block.flag_heads(items, heads, differ, threads=T, valid_items=v)
                coop.block.flag_tails(items, tails, differ, threads=T, valid_items=v)
                coop.block.flag_heads_and_tails(items, heads2, tails2, differ, threads=T, valid_items=v)
                coop.block.subtract_left(items, left, threads=T, valid_items=v)
                coop.block.subtract_right(items, right, threads=T, valid_items=v)
        else:
            if with_neighbours:
                coop.block.flag_heads(items, heads, differ, tile_predecessor=before, threads=T)
                coop.block.flag_tails(items, tails, differ, tile_successor=after, threads=T)
                coop.block.flag_heads_and_tails(items, heads2, tails2, differ, tile_predecessor=before,
                                                tile_successor=after, threads=T)
                coop.block.subtract_left(items, left, tile_predecessor=before, threads=T)
                coop.block.subtract_right(items, right, tile_successor=after, threads=T)
            else:
                coop.block.flag_heads(items, heads, differ, threads=T)
                coop.block.flag_tails(items, tails, differ, threads=T)
                coop.block.flag_heads_and_tails(items, heads2, tails2, differ, threads=T)
                coop.block.subtract_left(items, left)  # threads= left out: sized for 1024
                coop.block.subtract_right(items, items, threads=T)  # in place
                for i in range(N):
                    right[i] = items[i]
        for i in range(N):
            out[0, base + i] = heads[i]
            out[1, base + i] = tails[i]
            out[2, base + i] = heads2[i]
            out[3, base + i] = tails2[i]
            out[4, base + i] = left[i]
            out[5, base + i] = right[i]

    return kernel


def reference_flags(tile, valid, before, after, with_index):
    """Heads and tails of ``tile[:valid]`` (NumPy), compared with ``before`` / ``after``
    where given."""
    size = tile.size
    heads, tails = np.zeros(size, bool), np.zeros(size, bool)
    positions = np.arange(size)

    def differ(a, b, index):
        return (a != b) | ((index % 5 == 0) if with_index else False)

    heads[1:valid] = differ(tile[: valid - 1], tile[1:valid], positions[1:valid])
    heads[0] = True if before is None else differ(before, tile[0], 0)
    tails[: valid - 1] = differ(tile[: valid - 1], tile[1:valid], positions[1:valid])
    tails[valid - 1] = True if after is None else differ(tile[valid - 1], after, valid)
    return heads, tails


def reference_differences(tile, valid, before, after):
    left, right = tile.copy(), tile.copy()
    wrapping(lambda: left.__setitem__(slice(1, valid), tile[1:valid] - tile[: valid - 1]))
    if before is not None:
        left[0] = wrapping(lambda: tile[0] - before)
    wrapping(lambda: right.__setitem__(slice(0, valid - 1), tile[: valid - 1] - tile[1:valid]))
    if after is not None:
        right[valid - 1] = wrapping(lambda: tile[valid - 1] - after)
    return left, right


def check_neighbours(shape, n, dtype, partial, with_neighbours, with_index=False, seed=0):
    rng = np.random.default_rng(seed)
    threads = size_of(shape)
    tile = threads * n
    x = runs_of(dtype, BLOCKS * tile, rng)
    neighbours = runs_of(dtype, 2 * BLOCKS, rng)
    valid = valid_counts(tile) if partial else np.full(BLOCKS, tile, np.int32)
    out = np.zeros((6, x.size), np.float64 if np.dtype(dtype).kind == "f" else np.int64)
    if np.dtype(dtype) == np.uint64:
        out = out.astype(np.uint64)
    neighbours_kernel(shape, n, dtype, partial, with_neighbours, with_index)[BLOCKS, launch_shape(shape)](
        x, valid, neighbours, out
    )
    for b in range(BLOCKS):
        mine = slice(b * tile, (b + 1) * tile)
        t, v = x[mine], min(int(valid[b]), tile)
        before, after = (neighbours[2 * b], neighbours[2 * b + 1]) if with_neighbours else (None, None)
        heads, tails = reference_flags(t, v, before, after, with_index)
        what = f"block {b} (valid {v})"
        assert_equal_exact(out[0, mine], heads.astype(out.dtype), f"flag_heads, {what}")
        assert_equal_exact(out[1, mine], tails.astype(out.dtype), f"flag_tails, {what}")
        assert_equal_exact(out[2, mine], heads.astype(out.dtype), f"flag_heads_and_tails heads, {what}")
        assert_equal_exact(out[3, mine], tails.astype(out.dtype), f"flag_heads_and_tails tails, {what}")
        left, right = reference_differences(t, v, before, after)
        assert_equal_exact(out[4, mine].astype(dtype), left, f"subtract_left, {what}")
        assert_equal_exact(out[5, mine].astype(dtype), right, f"subtract_right, {what}")


@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
@pytest.mark.parametrize("partial,with_neighbours", [(False, False), (True, True)], ids=["full", "partial-neighbours"])
def test_neighbours_every_type(dtype, partial, with_neighbours):
    check_neighbours(128 if FULL_MATRIX else 32, 4 if FULL_MATRIX else 3, dtype, partial, with_neighbours)


@pytest.mark.parametrize("n", ITEMS)
@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_neighbours_shapes(shape, n):
    check_neighbours(shape, n, np.int32, True, n % 2 == 1, seed=n)


@pytest.mark.parametrize("partial,with_neighbours", [(False, True), (True, False)], ids=["full-neighbours", "partial"])
def test_flag_op_with_index(partial, with_neighbours):
    check_neighbours(33, 3, np.int16, partial, with_neighbours, with_index=True)


def test_tuples():
    """A tile of (key, value) tuples: flags by key, differences of both members."""
    T, N = 32, 3
    TILE = T * N

    @jit_any_block
    def kernel(keys, values, valid, heads, tails, left_keys, left_values):
        r = cuda.threadIdx.x
        base = cuda.blockIdx.x * TILE + r * N
        k = cuda.local.array(N, np.int16)
        v = cuda.local.array(N, np.float32)
        h = cuda.local.array(N, np.int32)
        t = cuda.local.array(N, np.int32)
        lk = cuda.local.array(N, np.int32)
        lv = cuda.local.array(N, np.float32)
        for i in range(N):
            k[i] = keys[base + i]
            v[i] = values[base + i]
        coop.block.flag_heads_and_tails((k, v), h, t, lambda a, b: a[0] != b[0], threads=T,
                                        valid_items=valid[cuda.blockIdx.x])
        coop.block.subtract_left((k, v), (lk, lv), lambda a, b: (a[0] - b[0], a[1] - b[1]), threads=T)
        for i in range(N):
            heads[base + i] = h[i]
            tails[base + i] = t[i]
            left_keys[base + i] = lk[i]
            left_values[base + i] = lv[i]

    rng = np.random.default_rng(3)
    keys = runs_of(np.int16, BLOCKS * TILE, rng)
    values = rng.integers(-50, 50, keys.size).astype(np.float32)
    valid = valid_counts(TILE)
    heads, tails = np.zeros(keys.size, np.int32), np.zeros(keys.size, np.int32)
    left_keys, left_values = np.zeros(keys.size, np.int32), np.zeros(keys.size, np.float32)
    kernel[BLOCKS, T](keys, values, valid, heads, tails, left_keys, left_values)
    for b in range(BLOCKS):
        mine = slice(b * TILE, (b + 1) * TILE)
        expected_heads, expected_tails = reference_flags(keys[mine], min(int(valid[b]), TILE), None, None, False)
        assert_equal_exact(heads[mine], expected_heads.astype(np.int32), f"tuple heads, block {b}")
        assert_equal_exact(tails[mine], expected_tails.astype(np.int32), f"tuple tails, block {b}")
        k, v = keys[mine].astype(np.int32), values[mine]
        assert_equal_exact(left_keys[mine], np.concatenate(([k[0]], np.diff(k))), f"tuple left keys, block {b}")
        assert_equal_exact(left_values[mine], np.concatenate(([v[0]], np.diff(v))), f"tuple left values, block {b}")


def test_subtract_into_a_wider_type():
    """uint8 differences into int16: negative where the items decrease (the subtraction
    is done wide, as compiled Numba does, on both paths)."""
    T, N = 32, 2

    @jit_any_block
    def kernel(x, out):
        items = cuda.local.array(N, np.uint8)
        result = cuda.local.array(N, np.int16)
        for i in range(N):
            items[i] = x[cuda.threadIdx.x * N + i]
        coop.block.subtract_left(items, result, threads=T)
        for i in range(N):
            out[cuda.threadIdx.x * N + i] = result[i]

    x = np.arange(64, 0, -1).astype(np.uint8)
    out = np.zeros(64, np.int16)
    kernel[1, T](x, out)
    assert_equal_exact(out, np.concatenate(([64], np.diff(x.astype(np.int16)))), "uint8 -> int16 differences")


# -- histogram ---------------------------------------------------------------------------------


def histogram_kernel(shape, n, dtype, bins, algorithm, partial, counter):
    T, N, BINS, THREADS = shape, n, bins, size_of(shape)
    TILE = THREADS * n

    @jit_any_block
    def kernel(x, more, valid, out):
        rank = block_rank()
        b = cuda.blockIdx.x
        base = b * TILE + rank * N
        counts = cuda.shared.array(BINS, counter)
        items = cuda.local.array(N, dtype)
        for i in range(N):
            items[i] = x[base + i]
        if partial:
            coop.block.histogram(items, counts, BINS, threads=T, items_per_thread=N, algorithm=algorithm,
                                 valid_items=valid[b])
        else:
            coop.block.histogram(items, counts, BINS, threads=T, items_per_thread=N, algorithm=algorithm)
        for i in range(N):
            items[i] = more[base + i]
        coop.block.histogram(items, counts, BINS, threads=T, items_per_thread=N, algorithm=algorithm, accumulate=True)
        cuda.syncthreads()
        for k in range(rank, BINS, THREADS):
            out[b, k] = counts[k]

    return kernel


def bin_indices(dtype, size, bins, rng):
    """Bin indices, some out of range (negative, or ``bins`` and more), within ``dtype``."""
    info = np.iinfo(dtype)
    low, high = max(-3, int(info.min)), min(bins + 3, int(info.max) + 1)
    return rng.integers(low, high, size).astype(dtype)


def check_histogram(shape, n, dtype, bins, algorithm, partial, counter=np.int32, seed=0):
    rng = np.random.default_rng(seed)
    tile = size_of(shape) * n
    x, more = bin_indices(dtype, BLOCKS * tile, bins, rng), bin_indices(dtype, BLOCKS * tile, bins, rng)
    valid = valid_counts(tile) if partial else np.full(BLOCKS, tile, np.int32)
    out = np.zeros((BLOCKS, bins), counter)
    histogram_kernel(shape, n, dtype, bins, algorithm, partial, counter)[BLOCKS, launch_shape(shape)](
        x, more, valid, out
    )

    def counted(items):
        items = items.astype(np.int64)
        return np.bincount(items[(items >= 0) & (items < bins)], minlength=bins)

    for b in range(BLOCKS):
        mine = slice(b * tile, (b + 1) * tile)
        expected = counted(x[mine][: valid[b]]) + counted(more[mine])
        assert_equal_exact(out[b], expected.astype(counter), f"{algorithm} histogram, block {b} (valid {valid[b]})")


ALGORITHMS = ["atomic", "sort"]


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("dtype", INTEGER_DTYPES if FULL_MATRIX else [np.uint8, np.int16], ids=dtype_id)
def test_histogram_every_type(dtype, algorithm):
    check_histogram(64, 3, dtype, 256, algorithm, True)
    check_histogram(64, 3, dtype, 37, algorithm, False, seed=1)


@pytest.mark.parametrize("counter", [np.int32, np.uint32, np.int64, np.uint64, np.float32, np.float64], ids=dtype_id)
def test_histogram_counter_types(counter):
    for algorithm in ALGORITHMS:
        check_histogram(32, 2, np.uint8, 20, algorithm, True, counter=counter)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("n", ITEMS)
@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_histogram_shapes(shape, n, algorithm):
    check_histogram(shape, n, np.uint8, 256, algorithm, n % 2 == 1, seed=n)


def test_histogram_skewed_global():
    """Most items in one bin, counted straight into a global histogram by every block."""
    T, N, BINS = 64, 4, 16
    TILE = T * N

    @jit_any_block
    def kernel(x, out):
        items = cuda.local.array(N, np.int32)
        for i in range(N):
            items[i] = x[cuda.blockIdx.x * TILE + cuda.threadIdx.x * N + i]
        coop.block.histogram(items, out[0], BINS, threads=T, items_per_thread=N, algorithm="sort", accumulate=True)
        coop.block.histogram(items, out[1], BINS, accumulate=True)

    rng = np.random.default_rng(5)
    x = np.where(rng.random(BLOCKS * TILE) < 0.9, 3, rng.integers(0, BINS, BLOCKS * TILE)).astype(np.int32)
    out = np.zeros((2, BINS), np.uint32)
    kernel[BLOCKS, T](x, out)
    expected = np.bincount(x, minlength=BINS).astype(np.uint32)
    assert_equal_exact(out[0], expected, "sort, global")
    assert_equal_exact(out[1], expected, "atomic, global")


# -- run-length coding -------------------------------------------------------------------------

SENTINEL = 7


def run_length_kernel(shape, n, d, dtype, partial, dynamic):
    """Encode each block's tile, then decode the runs back, ``d`` items per thread a window
    (the runs stored by the first window's call only)."""
    T, N, D, THREADS = shape, n, d, size_of(shape)
    TILE = THREADS * n

    @jit_any_block
    def kernel(x, valid, unique_out, counts_out, runs_out, decoded_out, offsets_out, totals):
        rank = block_rank()
        b = cuda.blockIdx.x
        base = b * TILE + rank * N
        items = cuda.local.array(N, dtype)
        unique = cuda.local.array(N, dtype)
        counts = cuda.local.array(N, np.int32)
        decoded = cuda.local.array(D, dtype)
        offsets = cuda.local.array(D, np.int16)
        for i in range(N):
            items[i] = x[base + i]
            unique[i] = SENTINEL
        if dynamic:
            temp = cuda.shared.array(0, np.uint8)
            runs = coop.block.run_length_encode(items, unique, counts, threads=T, items_per_thread=N,
                                                valid_items=valid[b], temp_storage=temp)
        elif partial:
            runs = coop.block.run_length_encode(items, unique, counts, threads=T, items_per_thread=N,
                                                valid_items=valid[b])
        else:
            runs = coop.block.run_length_encode(items, unique, counts, threads=T, items_per_thread=N)
        for i in range(N):
            unique_out[base + i] = unique[i]
            counts_out[base + i] = counts[i]
        if rank == 0:
            runs_out[b] = runs
        window = 0
        while True:
            if dynamic:
                total = coop.block.run_length_decode(unique, counts, decoded, offsets, from_decoded_offset=window,
                                                     threads=T, runs_per_thread=N, temp_storage=temp,
                                                     runs_stored=window > 0)
            else:
                total = coop.block.run_length_decode(unique, counts, decoded, offsets, from_decoded_offset=window,
                                                     threads=T, runs_per_thread=N, runs_stored=window > 0)
            for i in range(D):
                position = window + rank * D + i
                if position < total:
                    decoded_out[b * TILE + position] = decoded[i]
                    offsets_out[b * TILE + position] = offsets[i]
            window += THREADS * D
            if window >= total:
                break
        if rank == 0:
            totals[b] = total

    return kernel


def run_starts(tile):
    return np.flatnonzero(np.concatenate(([True], tile[1:] != tile[:-1]))) if tile.size else np.zeros(0, int)


def check_run_length(shape, n, d, dtype, partial, seed=0):
    rng = np.random.default_rng(seed)
    threads = size_of(shape)
    tile = threads * n
    x = runs_of(dtype, BLOCKS * tile, rng)
    valid = valid_counts(tile) if partial else np.full(BLOCKS, tile, np.int32)
    unique, counts = np.zeros_like(x), np.zeros(x.size, np.int32)
    decoded, offsets = np.zeros_like(x), np.zeros(x.size, np.int16)
    runs, totals = np.zeros(BLOCKS, np.int32), np.zeros(BLOCKS, np.int32)
    value_bytes = np.dtype(dtype).itemsize
    nbytes = max(coop.block.run_length_encode.temp_storage_bytes(dtype, shape, n),
                 coop.block.run_length_decode.temp_storage_bytes(dtype, shape, n))
    dynamic = nbytes > STATIC_SHARED_BYTES
    assert nbytes >= tile * (value_bytes + 4)
    kernel = run_length_kernel(shape, n, d, dtype, partial, dynamic)
    args = (x, valid, unique, counts, runs, decoded, offsets, totals)
    if dynamic:
        launch_with_dynamic_shared(kernel, BLOCKS, launch_shape(shape), nbytes, *args)
    else:
        kernel[BLOCKS, launch_shape(shape)](*args)
    for b in range(BLOCKS):
        mine = slice(b * tile, (b + 1) * tile)
        v = min(int(valid[b]), tile)
        t = x[mine][:v]
        starts = run_starts(t)
        lengths = np.diff(np.append(starts, v))
        k = starts.size
        what = f"block {b} (valid {v})"
        assert runs[b] == k, f"{what}: {runs[b]} runs, expected {k}"
        assert_equal_exact(unique[mine][:k], t[starts], f"unique, {what}")
        assert_equal_exact(unique[mine][k:], np.full(tile - k, SENTINEL, dtype), f"unique past the runs, {what}")
        assert_equal_exact(counts[mine], np.concatenate((lengths, np.zeros(tile - k))).astype(np.int32),
                           f"counts, {what}")
        assert totals[b] == v, f"{what}: decoded {totals[b]} items, expected {v}"
        assert_equal_exact(decoded[mine][:v], t, f"decoded, {what}")
        assert_equal_exact(offsets[mine][:v], (np.arange(v) - np.repeat(starts, lengths)).astype(np.int16),
                           f"offsets, {what}")


@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_run_length_every_type(dtype):
    check_run_length(64 if FULL_MATRIX else 32, 3, 2, dtype, True)


@pytest.mark.parametrize("n", ITEMS)
@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_run_length_shapes(shape, n):
    check_run_length(shape, n, (n % 4) + 1, np.int32, n != 2, seed=n)


def test_run_length_decode_zero_length_runs():
    """Runs of length 0 anywhere (and more of them than decoded items), decoded into
    windows of another size than the runs; tuple values; every call stores the runs."""
    T, R, D = 32, 3, 5

    @jit_any_block
    def kernel(values, weights, lengths, out_values, out_weights, offsets_out, totals):
        r = cuda.threadIdx.x
        v = cuda.local.array(R, np.int64)
        w = cuda.local.array(R, np.float32)
        n = cuda.local.array(R, np.uint16)
        dv = cuda.local.array(D, np.int64)
        dw = cuda.local.array(D, np.float32)
        offsets = cuda.local.array(D, np.int32)
        for j in range(R):
            v[j] = values[r * R + j]
            w[j] = weights[r * R + j]
            n[j] = lengths[r * R + j]
        window = 0
        while True:
            total = coop.block.run_length_decode((v, w), n, (dv, dw), offsets, from_decoded_offset=window,
                                                 threads=T, runs_per_thread=R)
            for i in range(D):
                position = window + r * D + i
                if position < total:
                    out_values[position] = dv[i]
                    out_weights[position] = dw[i]
                    offsets_out[position] = offsets[i]
            window += T * D
            if window >= total:
                break
        totals[r] = total

    rng = np.random.default_rng(9)
    lengths = np.where(rng.random(T * R) < 0.4, 0, rng.integers(1, 9, T * R)).astype(np.uint16)
    lengths[:4] = 0  # the first runs empty too
    values = rng.integers(-(2**40), 2**40, T * R)
    weights = rng.integers(-99, 99, T * R).astype(np.float32)
    total = int(lengths.sum())
    out_values, out_weights = np.zeros(total, np.int64), np.zeros(total, np.float32)
    offsets, totals = np.zeros(total, np.int32), np.zeros(T, np.int32)
    kernel[1, T](values, weights, lengths, out_values, out_weights, offsets, totals)
    assert (totals == total).all(), totals
    assert_equal_exact(out_values, np.repeat(values, lengths), "decoded values")
    assert_equal_exact(out_weights, np.repeat(weights, lengths), "decoded weights")
    starts = np.cumsum(lengths.astype(np.int64)) - lengths
    assert_equal_exact(offsets, (np.arange(total) - np.repeat(starts, lengths)).astype(np.int32), "offsets")


def test_run_length_encode_tuples():
    """Runs of equal (key, value) pairs: both members must match."""
    T, N = 33, 3
    TILE = T * N

    @jit_any_block
    def kernel(keys, values, unique_keys, unique_values, counts_out, runs_out):
        r = cuda.threadIdx.x
        base = cuda.blockIdx.x * TILE + r * N
        k = cuda.local.array(N, np.uint8)
        v = cuda.local.array(N, np.float64)
        counts = cuda.local.array(N, np.int64)
        for i in range(N):
            k[i] = keys[base + i]
            v[i] = values[base + i]
        runs = coop.block.run_length_encode((k, v), (k, v), counts, threads=T, items_per_thread=N)
        for i in range(N):
            unique_keys[base + i] = k[i]
            unique_values[base + i] = v[i]
            counts_out[base + i] = counts[i]
        runs_out[cuda.blockIdx.x] = runs

    rng = np.random.default_rng(4)
    keys = runs_of(np.uint8, BLOCKS * TILE, rng, 0, 3)
    values = runs_of(np.float64, BLOCKS * TILE, rng, 0, 2)
    unique_keys, unique_values = keys.copy(), values.copy()
    counts, runs = np.zeros(keys.size, np.int64), np.zeros(BLOCKS, np.int32)
    kernel[BLOCKS, T](keys, values, unique_keys, unique_values, counts, runs)
    for b in range(BLOCKS):
        mine = slice(b * TILE, (b + 1) * TILE)
        k, v = keys[mine], values[mine]
        starts = np.flatnonzero(np.concatenate(([True], (k[1:] != k[:-1]) | (v[1:] != v[:-1]))))
        lengths = np.diff(np.append(starts, TILE))
        assert runs[b] == starts.size
        assert_equal_exact(unique_keys[mine][: starts.size], k[starts], f"unique keys, block {b}")
        assert_equal_exact(unique_values[mine][: starts.size], v[starts], f"unique values, block {b}")
        assert_equal_exact(counts[mine][: starts.size], lengths, f"counts, block {b}")
        assert (counts[mine][starts.size:] == 0).all()


# -- one temp_storage for all ------------------------------------------------------------------


def test_one_temp_storage_for_all():
    """Every primitive of the family, one after another, through one temp_storage (sized
    with the largest of their temp_storage_bytes), with no barrier between them."""
    T, N, BINS = 64, 4, 32
    TILE = T * N
    BYTES = max(
        coop.block.flag_heads.temp_storage_bytes(np.int32, T),
        coop.block.flag_heads_and_tails.temp_storage_bytes(np.int32, T),
        coop.block.subtract_right.temp_storage_bytes(np.int32, T),
        coop.block.histogram.temp_storage_bytes(np.int32, T, N, BINS, algorithm="sort"),
        coop.block.run_length_encode.temp_storage_bytes(np.int32, T, N),
        coop.block.run_length_decode.temp_storage_bytes(np.int32, T, N),
    )
    assert coop.block.histogram.temp_storage_bytes(np.int32, T, N, BINS) == 0  # "atomic": none

    @jit_any_block
    def kernel(x, heads_out, right_out, hist_out, decoded_out):
        temp = cuda.shared.array(BYTES, np.uint8, alignment=8)
        counts_hist = cuda.shared.array(BINS, np.int32)
        r = cuda.threadIdx.x
        base = cuda.blockIdx.x * TILE + r * N
        items = cuda.local.array(N, np.int32)
        flags = cuda.local.array(N, np.int32)
        right = cuda.local.array(N, np.int32)
        unique = cuda.local.array(N, np.int32)
        counts = cuda.local.array(N, np.int32)
        for i in range(N):
            items[i] = x[base + i]
        coop.block.flag_heads(items, flags, operator.ne, threads=T, temp_storage=temp)
        coop.block.subtract_right(items, right, threads=T, temp_storage=temp)
        coop.block.histogram(items, counts_hist, BINS, threads=T, items_per_thread=N, algorithm="sort",
                             temp_storage=temp)
        coop.block.run_length_encode(items, unique, counts, threads=T, items_per_thread=N, temp_storage=temp)
        for i in range(N):
            items[i] = 0
        coop.block.run_length_decode(unique, counts, items, threads=T, runs_per_thread=N, temp_storage=temp)
        for i in range(N):
            heads_out[base + i] = flags[i]
            right_out[base + i] = right[i]
            decoded_out[base + i] = items[i]
        cuda.syncthreads()
        for k in range(r, BINS, T):
            hist_out[cuda.blockIdx.x, k] = counts_hist[k]

    rng = np.random.default_rng(8)
    x = runs_of(np.int32, BLOCKS * TILE, rng, 0, BINS)
    heads, right, decoded = np.zeros_like(x), np.zeros_like(x), np.zeros_like(x)
    hist = np.zeros((BLOCKS, BINS), np.int32)
    kernel[BLOCKS, T](x, heads, right, hist, decoded)
    for b in range(BLOCKS):
        mine = slice(b * TILE, (b + 1) * TILE)
        t = x[mine]
        expected_heads, _ = reference_flags(t, TILE, None, None, False)
        assert_equal_exact(heads[mine], expected_heads.astype(np.int32), f"heads, block {b}")
        assert_equal_exact(right[mine], reference_differences(t, TILE, None, None)[1], f"subtract_right, block {b}")
        assert_equal_exact(hist[b], np.bincount(t, minlength=BINS).astype(np.int32), f"histogram, block {b}")
        assert_equal_exact(decoded[mine], t, f"encode then decode, block {b}")
