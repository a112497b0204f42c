"""coop.block.load / store / transform and coop.warp.load / store against NumPy: every
algorithm and dtype, block shapes (1-, 2- and 3-D, not only multiples of 32), logical
warp widths, items per thread, partial tiles (``valid_items``, ``oob_default``),
misaligned arrays for "vectorize". Each kernel also copies the items exactly as the
thread holds them, so the arrangement itself is checked, not only a load-store round trip.

Partial tiles: the source array ends right after the last block's valid items, so a read
past them fails (IndexError under the simulator, memcheck on a GPU); destinations are
filled with a sentinel that must survive wherever nothing may be written."""

import functools

import numpy as np
import pytest
from numba import cuda

import coop
from helpers import ALL_DTYPES, FULL_MATRIX, ON_GPU, WIDTHS, assert_equal_exact, integer_valued
from test_block import global_rank, jit_any_block, size

BLOCKS = 3 if ON_GPU else 2
ALGORITHMS = ["direct", "striped", "warp_striped", "vectorize", "transpose", "warp_transpose",
              "warp_transpose_timesliced"]
TRANSPOSES = ALGORITHMS[4:]
if FULL_MATRIX:
    SHAPES = [32, 33, 64, 128, 500, 1024, (16, 4), (8, 8, 4)]
    ITEMS = [1, 2, 3, 4, 7, 8, 16]
    DTYPES = ALL_DTYPES
    WARP_WIDTHS = WIDTHS
else:  # the simulator runs a Python thread per CUDA thread
    SHAPES = [33, 64, (16, 4)]
    ITEMS = [1, 3, 4]
    DTYPES = [np.bool_, np.int8, np.int32, np.float16, np.float64, np.complex128]
    WARP_WIDTHS = [8, 32]


def positions(algorithm, threads, n):
    """Tile position of item i of rank r, as CUB arranges them: [r, i]."""
    r = np.arange(threads)[:, None]
    i = np.arange(n)[None, :]
    if algorithm == "striped":
        return i * threads + r
    if algorithm == "warp_striped":
        lane = r % 32
        warp_first = r - lane
        return warp_first * n + np.minimum(threads - warp_first, 32) * i + lane
    return r * n + i  # blocked: direct, vectorize and the transposes


def sentinel(dtype):
    """What destinations hold where nothing may be written (True for bool)."""
    return np.asarray(99).astype(dtype)[()]


def fill_value(dtype):
    """oob_default in the tests (False for bool, unlike the sentinel)."""
    return np.asarray(7 if np.dtype(dtype) != np.bool_ else 0).astype(dtype)[()]


def data(dtype, count, rng):
    """Values that differ from the sentinel and from the default (integer-valued)."""
    values = integer_valued(dtype, count, rng, -40, 40)
    if np.dtype(dtype) == np.bool_:
        return values
    return np.where(values == sentinel(dtype), values + 1, values).astype(dtype)


def partial_counts(tile, rng):
    """valid_items per block: anything (negative, zero, past the tile) for all but the
    last block, a true partial tile (1 .. tile-1, or 0 for a one-item tile) for the last."""
    counts = [int(rng.integers(-2, tile + 4)) for _ in range(BLOCKS - 1)]
    counts.append(int(rng.integers(1, tile)) if tile > 1 else 0)
    return np.array(counts, np.int32)


# -- block -------------------------------------------------------------------------------


@cuda.jit(device=True)
def block_threads():
    return cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z


def kernel_threads(algorithm, threads):
    """threads= for the kernels: a constant where the algorithm needs it, else None (one
    kernel for every block shape: fewer compilations on a GPU)."""
    return threads if algorithm in ("striped", "warp_striped") or algorithm in TRANSPOSES else None


def fits(algorithm, dtype, threads, n):
    """Whether two calls' own exchange buffers (a kernel below makes two specialisations)
    fit the 48 KiB of static shared memory a kernel may have."""
    needed = coop.block.load.temp_storage_bytes(dtype, threads, n, algorithm=algorithm)
    return 2 * needed <= 48 * 1024


@functools.lru_cache(maxsize=None)
def block_kernels(dtype, n, threads, algorithm):
    N, DT, T, ALG = n, dtype, threads, algorithm

    @jit_any_block
    def load(x, shift, held):
        g = global_rank()
        base = cuda.blockIdx.x * block_threads() * N + shift
        items = cuda.local.array(N, DT)
        coop.block.load(x[base:], items, threads=T, items_per_thread=N, algorithm=ALG)
        for i in range(N):
            held[g * N + i] = items[i]

    @jit_any_block
    def store(y, shift, out, out_partial, valid):
        g = global_rank()
        base = cuda.blockIdx.x * block_threads() * N + shift
        items = cuda.local.array(N, DT)
        for i in range(N):
            items[i] = y[g * N + i]
        coop.block.store(out[base:], items, threads=T, items_per_thread=N, algorithm=ALG)
        for i in range(N):  # (a transposing store rearranges the items in place)
            items[i] = y[g * N + i]
        coop.block.store(out_partial[base:], items, threads=T, items_per_thread=N, algorithm=ALG,
                         valid_items=valid[cuda.blockIdx.x])

    return load, store


def check_block(dtype, n, shape, algorithm, rng, shift=0):
    threads = size(shape)
    tile = threads * n
    where = f"{algorithm} {np.dtype(dtype).name} items {n} shape {shape} shift {shift}"
    load, store = block_kernels(dtype, n, kernel_threads(algorithm, threads), algorithm)
    place = positions(algorithm, threads, n)
    valid = partial_counts(tile, rng)
    default = np.array([fill_value(dtype), sentinel(dtype)], dtype)
    held = np.zeros(BLOCKS * tile, dtype)
    x = data(dtype, shift + BLOCKS * tile, rng)
    load[BLOCKS, shape](x, shift, held)
    expected = np.stack([x[shift + b * tile :][place] for b in range(BLOCKS)])
    assert_equal_exact(held.reshape(BLOCKS, threads, n), expected, f"load, {where}")
    # guarded loads: the source ends right after the last block's valid items
    last_end = shift + (BLOCKS - 1) * tile + max(valid[-1], 0)
    held_default, held_kept = np.zeros(BLOCKS * tile, dtype), np.zeros(BLOCKS * tile, dtype)
    guarded_load_kernel(dtype, n, kernel_threads(algorithm, threads), algorithm)[BLOCKS, shape](
        x[:last_end].copy(), shift, held_default, held_kept, valid, default
    )
    for b in range(BLOCKS):
        in_tile = place < valid[b]
        with_default = np.where(in_tile, expected[b], default[0])
        kept = np.where(in_tile, expected[b], default[1])
        assert_equal_exact(held_default.reshape(BLOCKS, threads, n)[b], with_default, f"load oob_default, {where}, block {b}")
        assert_equal_exact(held_kept.reshape(BLOCKS, threads, n)[b], kept, f"load valid_items, {where}, block {b}")
    # stores: the partial destination ends right after the last block's valid items
    y = data(dtype, BLOCKS * tile, rng)
    out = np.full(shift + BLOCKS * tile + 5, sentinel(dtype), dtype)
    out_partial = np.full(last_end, sentinel(dtype), dtype)
    store[BLOCKS, shape](y, shift, out, out_partial, valid)
    expected_out = np.full_like(out, sentinel(dtype))
    expected_partial = np.full_like(out_partial, sentinel(dtype))
    for b in range(BLOCKS):
        mine = y.reshape(BLOCKS, threads, n)[b]
        expected_out[shift + b * tile + place] = mine
        in_tile = place < valid[b]
        expected_partial[shift + b * tile + place[in_tile]] = mine[in_tile]
    assert_equal_exact(out, expected_out, f"store, {where}")
    assert_equal_exact(out_partial, expected_partial, f"store valid_items, {where}")


@functools.lru_cache(maxsize=None)
def guarded_load_kernel(dtype, n, threads, algorithm):
    N, DT, T, ALG = n, dtype, threads, algorithm

    @jit_any_block
    def kernel(x, shift, held_default, held_kept, valid, default):
        g = global_rank()
        base = cuda.blockIdx.x * block_threads() * N + shift
        v = valid[cuda.blockIdx.x]
        items = cuda.local.array(N, DT)
        coop.block.load(x[base:], items, threads=T, items_per_thread=N, algorithm=ALG, valid_items=v,
                        oob_default=default[0])
        for i in range(N):
            held_default[g * N + i] = items[i]
            items[i] = default[1]
        coop.block.load(x[base:], items, threads=T, items_per_thread=N, algorithm=ALG, valid_items=v)
        for i in range(N):
            held_kept[g * N + i] = items[i]

    return kernel


def block_cases():
    cases = []
    for algorithm in ALGORITHMS:
        for dtype in DTYPES:
            for n in ITEMS:
                cases.append(pytest.param(algorithm, dtype, n, id=f"{algorithm}-{np.dtype(dtype).name}-items{n}"))
    return cases


@pytest.mark.parametrize("algorithm,dtype,n", block_cases())
def test_block_load_store(algorithm, dtype, n):
    rng = np.random.default_rng(n)
    if not FULL_MATRIX:
        shapes = SHAPES if dtype in (np.int8, np.int32) else SHAPES[:1]
    elif (algorithm in ("striped", "warp_striped") or algorithm in TRANSPOSES) and dtype not in (np.int32, np.float64):
        shapes = [(8, 8, 4)]  # these compile a kernel per block size: one for most dtypes
    else:
        shapes = SHAPES
    shapes = [shape for shape in shapes if fits(algorithm, dtype, size(shape), n)]
    for shape in shapes:
        check_block(dtype, n, shape, algorithm, rng)


@pytest.mark.parametrize(
    "dtype,n",
    [
        pytest.param(d, n, id=f"{np.dtype(d).name}-items{n}")
        for d in (DTYPES if FULL_MATRIX else [np.int8, np.int16, np.float32, np.complex128])
        for n in (ITEMS if FULL_MATRIX else [2, 4])
    ],
)
@pytest.mark.parametrize("shift", [1, 2, 3] if FULL_MATRIX else [1])
def test_vectorize_misaligned(dtype, n, shift):
    """Tiles that start off the vector alignment (the array from element ``shift``): the
    run-time check falls back to one access per item."""
    check_block(dtype, n, 64 if not FULL_MATRIX else 128, "vectorize", np.random.default_rng(shift), shift)


def test_items_per_thread_moves_a_prefix():
    """items_per_thread=2 with a 5-item array: only items 0 and 1 are moved."""

    @jit_any_block
    def kernel(x, out, held):
        g = global_rank()
        items = cuda.local.array(5, np.int32)
        for i in range(5):
            items[i] = -1
        base = cuda.blockIdx.x * 64 * 2
        coop.block.load(x[base:], items, threads=64, items_per_thread=2, algorithm="striped")
        for i in range(5):
            held[g * 5 + i] = items[i]
        coop.block.store(out[base:], items, items_per_thread=2, algorithm="vectorize")

    x = np.arange(BLOCKS * 128, dtype=np.int32)
    out = np.full(BLOCKS * 128 + 3, 99, np.int32)
    held = np.zeros(BLOCKS * 64 * 5, np.int32)
    kernel[BLOCKS, 64](x, out, held)
    held = held.reshape(BLOCKS, 64, 5)
    place = positions("striped", 64, 2)
    for b in range(BLOCKS):
        assert_equal_exact(held[b, :, :2], x[b * 128 :][place], f"items_per_thread prefix, block {b}")
        assert_equal_exact(held[b, :, 2:], np.full((64, 3), -1), f"items_per_thread rest, block {b}")
    expected = np.full_like(out, 99)
    for b in range(BLOCKS):
        expected[b * 128 + positions("direct", 64, 2)] = held[b, :, :2]
    assert_equal_exact(out, expected, "items_per_thread store")


def test_bool_and_strided_arrays():
    """bool items, and a strided (non-contiguous) source and destination: "vectorize"
    must see the stride and fall back."""

    @jit_any_block
    def kernel(x, flags, out, out_flags):
        base = cuda.blockIdx.x * 32 * 4
        items = cuda.local.array(4, np.float32)
        marks = cuda.local.array(4, np.bool_)
        coop.block.load(x[base:], items, algorithm="vectorize")
        coop.block.store(out[base:], items, algorithm="vectorize")
        coop.block.load(flags[base:], marks, threads=32, algorithm="striped")
        coop.block.store(out_flags[base:], marks, threads=32, algorithm="striped")

    rng = np.random.default_rng(3)
    x = data(np.float32, 2 * BLOCKS * 128, rng)
    flags = rng.integers(0, 2, BLOCKS * 128).astype(np.bool_)
    out = np.zeros(2 * BLOCKS * 128, np.float32)
    out_flags = np.zeros(BLOCKS * 128, np.bool_)
    d_x, d_out = cuda.to_device(x), cuda.to_device(out)
    kernel[BLOCKS, 32](d_x[::2], flags, d_out[::2], out_flags)
    out = d_out.copy_to_host()
    assert_equal_exact(out[::2], x[::2], "strided vectorize")
    assert_equal_exact(out[1::2], np.zeros(BLOCKS * 128), "strided vectorize, gaps untouched")
    assert_equal_exact(out_flags, flags, "bool striped")


def test_temp_storage_bytes():
    """direct, striped and vectorize need no temp_storage (CUB's NullType TempStorage);
    the transposes need their block exchange's."""
    for algorithm in ALGORITHMS[:3]:
        assert coop.block.load.temp_storage_bytes(np.float64, 128, 4, algorithm=algorithm) == 0
        assert coop.block.store.temp_storage_bytes(np.int8, 33, algorithm=algorithm) == 0
    exchange = coop.block.exchange.striped_to_blocked.temp_storage_bytes
    for dtype, threads, n in [(np.float64, 128, 4), (np.int8, 33, 8), (np.complex128, 96, 16)]:
        for algorithm, sliced in [("transpose", False), ("warp_transpose", False), ("warp_transpose_timesliced", True)]:
            expected = exchange(dtype, threads, n, warp_time_slicing=sliced)
            assert coop.block.load.temp_storage_bytes(dtype, threads, n, algorithm=algorithm) == expected
            assert coop.block.store.temp_storage_bytes(dtype, threads, n, algorithm=algorithm) == expected
    assert 0 < exchange(np.int32, 512, 8, warp_time_slicing=True) < exchange(np.int32, 512, 8)


def test_consecutive_tiles_without_barriers():
    """One block walks over many tiles, loading and storing with every algorithm in turn,
    the transposes through their own buffers and through one temp_storage shared by a
    load and a store: no user barrier anywhere."""
    T, N, TILES = (128, 4, 6) if ON_GPU else (64, 2, 3)
    BYTES = coop.block.load.temp_storage_bytes(np.int64, T, N, algorithm="warp_transpose")

    @jit_any_block
    def kernel(x, out):
        items = cuda.local.array(N, np.int64)
        temp = cuda.shared.array(BYTES, np.uint8, alignment=8)
        for tile in range(TILES):
            base = tile * T * N
            coop.block.load(x[base:], items, threads=T, algorithm="striped")
            coop.block.store(out[0, base:], items, threads=T, algorithm="striped")
            coop.block.load(x[base:], items, algorithm="vectorize")
            coop.block.store(out[1, base:], items, algorithm="direct")
            coop.block.load(x[base:], items, threads=T, items_per_thread=N, algorithm="transpose")
            coop.block.store(out[2, base:], items, threads=T, items_per_thread=N, algorithm="warp_transpose")
            coop.block.load(x[base:], items, threads=T, items_per_thread=N, algorithm="warp_transpose",
                            temp_storage=temp)
            coop.block.store(out[3, base:], items, threads=T, items_per_thread=N, algorithm="warp_transpose",
                             temp_storage=temp)

    x = np.arange(TILES * T * N, dtype=np.int64) * 3
    out = np.zeros((4, TILES * T * N), np.int64)
    kernel[1, T](x, out)
    assert_equal_exact(out[0], x, "striped tiles")
    assert_equal_exact(out[1], x, "vectorize then direct tiles")
    assert_equal_exact(out[2], x, "transpose then warp_transpose tiles")
    assert_equal_exact(out[3], x, "warp_transpose tiles through one temp_storage")


def test_transposes_need_items_per_thread():
    @cuda.jit
    def kernel(x):
        items = cuda.local.array(4, np.int32)
        coop.block.load(x, items, threads=32, algorithm="transpose")

    with pytest.raises(Exception, match="coop.block.load: items_per_thread is required by algorithm 'transpose'"):
        kernel[1, 32](np.zeros(128, np.int32))


# -- transform ---------------------------------------------------------------------------


@cuda.jit(device=True)
def affine(v):
    return v * 3 - 1


def transform_kernel(in_dtype, out_dtype, n, threads, algorithm):
    N, T, ALG = n, threads, algorithm

    @jit_any_block
    def kernel(x, out, out_partial, valid):
        base = cuda.blockIdx.x * T * N
        coop.block.transform(x[base:], out[base:], affine, threads=T, items_per_thread=N, algorithm=ALG)
        coop.block.transform(
            x[base:], out_partial[base:], lambda v: v + 1, threads=T, items_per_thread=N, algorithm=ALG,
            valid_items=valid[cuda.blockIdx.x],
        )

    return kernel


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize(
    "in_dtype,out_dtype",
    [(np.int32, np.int32), (np.int16, np.float32), (np.float64, np.int8)]
    + ([(np.float16, np.float16), (np.uint8, np.complex64), (np.int64, np.float64)] if FULL_MATRIX else []),
    ids=lambda d: np.dtype(d).name,
)
def test_transform(algorithm, in_dtype, out_dtype):
    rng = np.random.default_rng(11)
    for shape, n in [(33, 3), ((16, 4), 4)] + ([(500, 7), (1024, 2), (128, 16)] if FULL_MATRIX else []):
        threads = size(shape)
        tile = threads * n
        valid = partial_counts(tile, rng)
        last_end = (BLOCKS - 1) * tile + max(valid[-1], 0)
        x = data(in_dtype, BLOCKS * tile, rng)
        out = np.full(BLOCKS * tile + 3, sentinel(out_dtype), out_dtype)
        out_partial = np.full(last_end, sentinel(out_dtype), out_dtype)
        transform_kernel(in_dtype, out_dtype, n, threads, algorithm)[BLOCKS, shape](x, out, out_partial, valid)
        # Numba computes ``v * 3 - 1`` on small integers in int64 (a uint8 0 maps to -1,
        # not 255), on floats in the float's type
        wide = x.astype(np.int64) if np.issubdtype(in_dtype, np.integer) else x
        mapped = (wide * 3 - 1).astype(out_dtype)
        plus_one = (wide + 1).astype(out_dtype)
        where = f"{algorithm} {shape} items {n}"
        assert_equal_exact(out[: BLOCKS * tile], mapped, f"transform, {where}")
        assert_equal_exact(out[BLOCKS * tile :], np.full(3, sentinel(out_dtype)), f"transform past the tiles, {where}")
        expected = np.full_like(out_partial, sentinel(out_dtype))
        for b in range(BLOCKS):
            end = b * tile + min(max(valid[b], 0), tile)
            expected[b * tile : end] = plus_one[b * tile : end]
        assert_equal_exact(out_partial, expected, f"transform valid_items, {where}")


# -- warp --------------------------------------------------------------------------------

WARP_THREADS_PER_BLOCK = 64


@functools.lru_cache(maxsize=None)
def warp_kernels(dtype, n, width, algorithm):
    N, DT, W, ALG = n, dtype, width, algorithm

    @jit_any_block
    def load(x, held):
        g = global_rank()
        base = (g // W) * W * N
        items = cuda.local.array(N, DT)
        coop.warp.load(x[base:], items, W, algorithm=ALG, items_per_thread=N, threads=WARP_THREADS_PER_BLOCK)
        for i in range(N):
            held[g * N + i] = items[i]

    @jit_any_block
    def store(y, out, out_partial, valid):
        g = global_rank()
        base = (g // W) * W * N
        items = cuda.local.array(N, DT)
        for i in range(N):
            items[i] = y[g * N + i]
        coop.warp.store(out[base:], items, W, algorithm=ALG, items_per_thread=N, threads=WARP_THREADS_PER_BLOCK)
        for i in range(N):  # (a transposing store rearranges the items in place)
            items[i] = y[g * N + i]
        coop.warp.store(out_partial[base:], items, width=W, algorithm=ALG, valid_items=valid[g // W],
                        items_per_thread=N, threads=WARP_THREADS_PER_BLOCK)

    return load, store


WARP_ALGORITHMS = ["direct", "striped", "vectorize", "transpose"]


def warp_cases():
    cases = []
    for algorithm in WARP_ALGORITHMS:
        for dtype in DTYPES:
            main_dtype = dtype in ((np.int8, np.int32, np.float64) if FULL_MATRIX else (np.int32,))
            for width in WARP_WIDTHS if main_dtype else [32, 4] if FULL_MATRIX else [32]:
                cases.append(pytest.param(algorithm, dtype, width, id=f"{algorithm}-{np.dtype(dtype).name}-w{width}"))
    return cases


@pytest.mark.parametrize("algorithm,dtype,width", warp_cases())
def test_warp_load_store(algorithm, dtype, width):
    rng = np.random.default_rng(width)
    n = 4 if FULL_MATRIX or width == 32 else 3
    threads = WARP_THREADS_PER_BLOCK * BLOCKS
    warps = threads // width
    tile = width * n
    load, store = warp_kernels(dtype, n, width, algorithm)
    place = positions(algorithm, width, n)
    valid = rng.integers(-1, tile + 2, warps).astype(np.int32)
    valid[-1] = int(rng.integers(1, tile))
    default = np.array([fill_value(dtype)], dtype)
    x = data(dtype, warps * tile, rng)
    short = x[: (warps - 1) * tile + valid[-1]].copy()
    held = np.zeros(threads * n, dtype)
    held_default = np.zeros(threads * n, dtype)
    load[BLOCKS, WARP_THREADS_PER_BLOCK](x, held)
    expected = np.stack([x[w * tile :][place] for w in range(warps)])
    assert_equal_exact(held.reshape(warps, width, n), expected, f"warp load {algorithm} w{width}")
    load_guarded = warp_guarded_load_kernel(dtype, n, width, algorithm)
    load_guarded[BLOCKS, WARP_THREADS_PER_BLOCK](short, held_default, valid, default)
    expected_default = np.where(place[None] < valid[:, None, None], expected, default[0])
    assert_equal_exact(held_default.reshape(warps, width, n), expected_default, f"warp load oob_default {algorithm} w{width}")
    y = data(dtype, threads * n, rng)
    out = np.full(warps * tile + 2, sentinel(dtype), dtype)
    out_partial = np.full(len(short), sentinel(dtype), dtype)
    store[BLOCKS, WARP_THREADS_PER_BLOCK](y, out, out_partial, valid)
    expected_out = np.full_like(out, sentinel(dtype))
    expected_partial = np.full_like(out_partial, sentinel(dtype))
    for w in range(warps):
        mine = y.reshape(warps, width, n)[w]
        expected_out[w * tile + place] = mine
        in_tile = place < valid[w]
        expected_partial[w * tile + place[in_tile]] = mine[in_tile]
    assert_equal_exact(out, expected_out, f"warp store {algorithm} w{width}")
    assert_equal_exact(out_partial, expected_partial, f"warp store valid_items {algorithm} w{width}")


@functools.lru_cache(maxsize=None)
def warp_guarded_load_kernel(dtype, n, width, algorithm):
    N, DT, W, ALG = n, dtype, width, algorithm

    @jit_any_block
    def kernel(x, held_default, valid, default):
        g = global_rank()
        base = (g // W) * W * N
        items = cuda.local.array(N, DT)
        coop.warp.load(x[base:], items, width=W, algorithm=ALG, valid_items=valid[g // W], oob_default=default[0],
                       items_per_thread=N, threads=WARP_THREADS_PER_BLOCK)
        for i in range(N):
            held_default[g * N + i] = items[i]

    return kernel


# -- offset=: the tile's start given apart from the array ------------------------------------


@functools.lru_cache(maxsize=None)
def offset_kernel(dtype, n, threads, algorithm, by_warp):
    """Loads (whole and partial, with a default) and stores (whole and partial) of each
    block's tile, or each logical warp's of 16 lanes, twice: through ``offset=`` and
    through the slice ``array[base:]``; ``shift`` moves every tile (misaligned vectors)."""
    N, DT, T, ALG, W = n, dtype, threads, algorithm, 16

    @jit_any_block
    def kernel(x, shift, valid, by_offset, by_slice, out_by_offset, out_by_slice):
        g = global_rank()
        if by_warp:
            base = (g // W) * W * N + shift
        else:
            base = cuda.blockIdx.x * block_threads() * N + shift
        a = cuda.local.array(N, DT)
        b = cuda.local.array(N, DT)
        c = cuda.local.array(N, DT)
        d = cuda.local.array(N, DT)
        if by_warp:
            coop.warp.load(x, a, W, items_per_thread=N, algorithm=ALG, threads=T, offset=base)
            coop.warp.load(x[base:], b, W, items_per_thread=N, algorithm=ALG, threads=T)
            coop.warp.load(x, c, W, items_per_thread=N, algorithm=ALG, threads=T, valid_items=valid, oob_default=x[0],
                           offset=base)
            coop.warp.load(x[base:], d, W, items_per_thread=N, algorithm=ALG, threads=T, valid_items=valid,
                           oob_default=x[0])
        else:
            coop.block.load(x, a, threads=T, items_per_thread=N, algorithm=ALG, offset=base)
            coop.block.load(x[base:], b, threads=T, items_per_thread=N, algorithm=ALG)
            coop.block.load(x, c, threads=T, items_per_thread=N, algorithm=ALG, valid_items=valid, oob_default=x[0],
                            offset=base)
            coop.block.load(x[base:], d, threads=T, items_per_thread=N, algorithm=ALG, valid_items=valid,
                            oob_default=x[0])
        for i in range(N):
            by_offset[2 * g * N + i] = a[i]
            by_slice[2 * g * N + i] = b[i]
            by_offset[(2 * g + 1) * N + i] = c[i]
            by_slice[(2 * g + 1) * N + i] = d[i]
        if by_warp:
            coop.warp.store(out_by_offset, a, W, items_per_thread=N, algorithm=ALG, threads=T, valid_items=valid,
                            offset=base)
            coop.warp.store(out_by_slice[base:], b, W, items_per_thread=N, algorithm=ALG, threads=T,
                            valid_items=valid)
        else:
            coop.block.store(out_by_offset, a, threads=T, items_per_thread=N, algorithm=ALG, valid_items=valid,
                             offset=base)
            coop.block.store(out_by_slice[base:], b, threads=T, items_per_thread=N, algorithm=ALG,
                             valid_items=valid)

    return kernel


def offset_cases():
    shapes = [64, (16, 4)]
    cases = [pytest.param(a, shapes[k % 2], False, id=f"block-{a}") for k, a in enumerate(ALGORITHMS)]
    cases += [pytest.param(a, 64, True, id=f"warp-{a}") for a in WARP_ALGORITHMS]
    return cases


@pytest.mark.parametrize("algorithm,shape,by_warp", offset_cases())
@pytest.mark.parametrize("dtype", [np.int8, np.float64] if FULL_MATRIX else [np.float64])
def test_offset_moves_the_tile_a_slice_moves(algorithm, shape, by_warp, dtype):
    """``offset=base`` with the whole array loads and stores exactly what the slice
    ``array[base:]`` does, whole tiles and partial ones, at every shift (vector
    alignment), by the block and by logical warps."""
    rng = np.random.default_rng(7)
    n, threads = 4, size(shape)
    kernel = offset_kernel(dtype, n, threads, algorithm, by_warp)
    tile = 16 * n if by_warp else threads * n
    for shift in (0, 1, 3):
        for valid in (tile, tile // 2 + 1, 0):
            x = data(dtype, shift + BLOCKS * threads * n + 8, rng)
            held = [np.zeros(2 * BLOCKS * threads * n, dtype) for _ in range(2)]
            outs = [np.full(x.size, sentinel(dtype), dtype) for _ in range(2)]
            kernel[BLOCKS, shape](x, shift, valid, *held, *outs)
            where = f"{'warp' if by_warp else 'block'} {algorithm}, shift {shift}, valid_items {valid}"
            assert_equal_exact(held[0], held[1], f"loads, {where}")
            assert_equal_exact(outs[0], outs[1], f"stores, {where}")


def test_transform_with_offset():
    """``coop.block.transform``'s ``offset=`` is the tile's start in ``src`` and ``dst``."""
    T, N = 64, 4

    @cuda.jit
    def scale(x, out, n):
        base = cuda.blockIdx.x * T * N
        coop.block.transform(x, out, lambda v: 3 * v, threads=T, items_per_thread=N, valid_items=n - base,
                             offset=base, algorithm="warp_transpose")

    x = np.arange(BLOCKS * T * N - 5, dtype=np.float32)
    out = np.full_like(x, -1)
    scale[BLOCKS, T](x, out, x.size)
    assert_equal_exact(out, 3 * x, "transform with offset=")


@pytest.mark.skipif(ON_GPU, reason="an offset past the array is undefined on a GPU, as a pointer past it in CUB")
def test_offset_past_the_array_raises_on_the_simulator():
    @cuda.jit
    def past(x):
        items = cuda.local.array(2, np.int32)
        coop.block.load(x, items, threads=32, offset=x.size + 1)

    with pytest.raises(Exception, match=r"coop.block.load: offset must be from 0 to the array's length \(64\), got 65"):
        past[1, 32](np.zeros(64, np.int32))


@pytest.mark.skipif(ON_GPU, reason="the simulator's check: on a GPU, a group's tiles at different offsets are undefined")
def test_offset_differing_within_a_block_raises_on_the_simulator():
    @cuda.jit
    def two_tiles(x):
        items = cuda.local.array(2, np.int32)
        coop.block.load(x, items, threads=64, offset=cuda.threadIdx.x // 32)

    with pytest.raises(coop.CollectiveError, match="offset differs between the threads of block"):
        two_tiles[1, 64](np.zeros(256, np.int32))
