"""``threads=`` as the block's shape (a tuple): every family computes the thread's rank
from the constant shape (as CUB's BLOCK_DIM_X/Y/Z) and must give the results of the
run-time rank in 1-, 2- and 3-D blocks. The kernels write their results at the rank
computed here from ``threadIdx`` and ``blockDim``, not coop's, so a wrong rank shows.
(``tests/test_codegen.py`` checks that the PTX then reads no block shape;
``tests/test_simulator_debugger.py`` that a launch of another shape is refused.)"""

import operator

import numpy as np
import pytest

import coop
from numba import cuda

from helpers import assert_equal_exact, shape_id

SHAPES = [(64,), (16, 4), (4, 2, 8)]
THREADS = 64
N = 2
TILE = THREADS * N
BLOCKS = 2


@cuda.jit(device=True)
def rank_in_block():
    return cuda.threadIdx.x + cuda.threadIdx.y * cuda.blockDim.x + cuda.threadIdx.z * cuda.blockDim.x * cuda.blockDim.y


def tiles(values):
    return values.reshape(BLOCKS, TILE)


def tile_kernel(shape, load_store, scan, reduce):
    T, ALG, SCAN, RED = shape, load_store, scan, reduce

    @cuda.jit
    def kernel(x, loaded, scanned, stored, totals):
        r = rank_in_block()
        base = cuda.blockIdx.x * TILE
        items = cuda.local.array(N, np.int32)
        coop.block.load(x[base:], items, threads=T, items_per_thread=N, algorithm=ALG)
        for i in range(N):
            loaded[base + r * N + i] = items[i]
        largest = coop.block.reduce(items, max, threads=T, algorithm=RED)
        aggregate = coop.block.exclusive_sum(items, items, threads=T, algorithm=SCAN)
        for i in range(N):
            scanned[base + r * N + i] = items[i]
        coop.block.store(stored[base:], items, threads=T, items_per_thread=N, algorithm=ALG)
        totals[0, cuda.blockIdx.x * THREADS + r] = aggregate
        if r == 0:
            totals[1, cuda.blockIdx.x * THREADS] = largest

    return kernel


TILE_CASES = [("direct", "raking", "warp_reductions"), ("transpose", "raking_memoize", "raking"),
              ("warp_transpose", "warp_scans", "raking_commutative_only")]


@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
@pytest.mark.parametrize("load_store, scan, reduce", TILE_CASES, ids=["-".join(c) for c in TILE_CASES])
def test_tiles_scans_and_reductions(shape, load_store, scan, reduce):
    x = np.random.default_rng(1).integers(-50, 50, BLOCKS * TILE).astype(np.int32)
    loaded, scanned, stored = (np.zeros_like(x) for _ in range(3))
    totals = np.zeros((2, BLOCKS * THREADS), np.int32)
    tile_kernel(shape, load_store, scan, reduce)[BLOCKS, shape](x, loaded, scanned, stored, totals)
    exclusive = np.cumsum(tiles(x), axis=1) - tiles(x)
    assert_equal_exact(loaded, x, f"load {load_store}")
    assert_equal_exact(scanned, exclusive.ravel(), f"exclusive_sum {scan}")
    assert_equal_exact(stored, exclusive.ravel(), f"store {load_store}")
    assert_equal_exact(totals[0], np.repeat(tiles(x).sum(axis=1), THREADS), "scan aggregates")
    assert_equal_exact(totals[1, ::THREADS], tiles(x).max(axis=1), f"reduce {reduce}")


def movement_kernel(shape):
    T = shape

    @cuda.jit
    def kernel(x, striped, shifted, neighbours):
        r = rank_in_block()
        base = cuda.blockIdx.x * TILE
        items = cuda.local.array(N, np.int32)
        moved = cuda.local.array(N, np.int32)
        for i in range(N):
            items[i] = x[base + r * N + i]
        coop.block.exchange.blocked_to_striped(items, moved, threads=T, items_per_thread=N)
        for i in range(N):
            striped[base + r + i * THREADS] = moved[i]
        coop.block.shuffle.up(items, moved, threads=T)
        for i in range(N):
            shifted[base + r * N + i] = moved[i]
        neighbours[cuda.blockIdx.x * THREADS + r] = coop.block.shuffle.offset(items[0], 1, threads=T)

    return kernel


@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_exchange_and_shuffles(shape):
    x = np.random.default_rng(2).integers(-50, 50, BLOCKS * TILE).astype(np.int32)
    striped, shifted = np.zeros_like(x), np.zeros_like(x)
    neighbours = np.zeros(BLOCKS * THREADS, np.int32)
    movement_kernel(shape)[BLOCKS, shape](x, striped, shifted, neighbours)
    assert_equal_exact(striped, x, "blocked_to_striped")
    # up: each item's predecessor in the tile; the first thread's first item is unspecified
    assert_equal_exact(tiles(shifted)[:, 1:], tiles(x)[:, :-1], "shuffle.up")
    firsts = x[::N].reshape(BLOCKS, THREADS)
    # offset: thread r + 1's value; the last thread's is unspecified
    assert_equal_exact(neighbours.reshape(BLOCKS, THREADS)[:, :-1], firsts[:, 1:], "shuffle.offset")


def sort_kernel(shape):
    T = shape

    @cuda.jit
    def kernel(x, radix_sorted, merge_sorted, ranked, best):
        r = rank_in_block()
        base = cuda.blockIdx.x * TILE
        keys = cuda.local.array(N, np.int32)
        ranks = cuda.local.array(N, np.int32)
        for i in range(N):
            keys[i] = x[base + r * N + i]
        coop.block.radix_rank(keys, ranks, 0, 8, threads=T, items_per_thread=N, algorithm="match")
        for i in range(N):
            ranked[base + r * N + i] = ranks[i]
        coop.block.radix_sort(keys, threads=T, items_per_thread=N)
        for i in range(N):
            radix_sorted[base + r * N + i] = keys[i]
            keys[i] = x[base + r * N + i]
        coop.block.merge_sort(keys, operator.gt, threads=T, items_per_thread=N)
        for i in range(N):
            merge_sorted[base + r * N + i] = keys[i]
            keys[i] = x[base + r * N + i]
        coop.block.top_k(keys, 8, threads=T, items_per_thread=N, sorted=True)
        for i in range(N):
            best[base + r * N + i] = keys[i]

    return kernel


@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_sorts_rankings_and_top_k(shape):
    x = np.random.default_rng(3).integers(0, 200, BLOCKS * TILE).astype(np.int32)
    outs = [np.zeros_like(x) for _ in range(4)]
    sort_kernel(shape)[BLOCKS, shape](x, *outs)
    radix_sorted, merge_sorted, ranked, best = (tiles(out) for out in outs)
    # "match" ranks equal digits in warp-striped order: the ranks are a permutation that
    # orders the tile by its low 8 bits
    digits = tiles(x) & 0xFF
    for b in range(BLOCKS):
        assert_equal_exact(np.sort(ranked[b]), np.arange(TILE), f"radix_rank block {b}: a permutation")
        placed = np.empty(TILE, np.int32)
        placed[ranked[b]] = digits[b]
        assert_equal_exact(placed, np.sort(digits[b]), f"radix_rank block {b}: in digit order")
    assert_equal_exact(radix_sorted, np.sort(tiles(x), axis=1), "radix_sort")
    assert_equal_exact(merge_sorted, -np.sort(-tiles(x), axis=1), "merge_sort")
    assert_equal_exact(best[:, :8], -np.sort(-tiles(x), axis=1)[:, :8], "top_k")


def analytics_kernel(shape):
    T = shape
    BINS = 16

    @cuda.jit
    def kernel(x, counts, heads, differences, runs, unique):
        r = rank_in_block()
        base = cuda.blockIdx.x * TILE
        items = cuda.local.array(N, np.int32)
        out = cuda.local.array(N, np.int32)
        flags = cuda.local.array(N, np.uint8)
        lengths = cuda.local.array(N, np.int32)
        bins = cuda.shared.array(BINS, np.int32)
        for i in range(N):
            items[i] = x[base + r * N + i]
        coop.block.histogram(items, bins, BINS, threads=T, items_per_thread=N, algorithm="sort")
        cuda.syncthreads()
        if r < BINS:
            counts[cuda.blockIdx.x * BINS + r] = bins[r]
        coop.block.flag_heads(items, flags, operator.ne, threads=T)
        coop.block.subtract_left(items, out, threads=T)
        for i in range(N):
            heads[base + r * N + i] = flags[i]
            differences[base + r * N + i] = out[i]
        count = coop.block.run_length_encode(items, out, lengths, threads=T, items_per_thread=N)
        if r == 0:
            runs[cuda.blockIdx.x] = count
        for i in range(N):
            if r * N + i < count:
                unique[base + r * N + i] = out[i] * 1000 + lengths[i]

    return kernel


@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_histogram_discontinuity_differences_and_runs(shape):
    x = np.sort(np.random.default_rng(4).integers(0, 16, BLOCKS * TILE).reshape(BLOCKS, TILE), axis=1)
    x = x.astype(np.int32).ravel()
    counts = np.zeros(BLOCKS * 16, np.int32)
    heads, differences, unique = np.zeros_like(x), np.zeros_like(x), np.zeros_like(x)
    runs = np.zeros(BLOCKS, np.int32)
    analytics_kernel(shape)[BLOCKS, shape](x, counts, heads, differences, runs, unique)
    for b, tile in enumerate(tiles(x)):
        assert_equal_exact(counts[b * 16:(b + 1) * 16], np.bincount(tile, minlength=16), f"histogram block {b}")
        assert_equal_exact(tiles(heads)[b], np.concatenate([[1], tile[1:] != tile[:-1]]), f"flag_heads block {b}")
        assert_equal_exact(tiles(differences)[b][1:], np.diff(tile), f"subtract_left block {b}")
        values, starts, lengths = np.unique(tile, return_index=True, return_counts=True)
        assert runs[b] == len(values), f"run_length_encode block {b}: {runs[b]} runs, not {len(values)}"
        assert_equal_exact(tiles(unique)[b][:len(values)], values[np.argsort(starts)] * 1000 + lengths,
                           f"run_length_encode block {b}")


def warp_kernel(shape):
    T = shape

    @cuda.jit
    def kernel(x, loaded, striped, sorted_out):
        r = rank_in_block()
        base = cuda.blockIdx.x * TILE
        items = cuda.local.array(N, np.int32)
        moved = cuda.local.array(N, np.int32)
        warp_base = base + (r // 32) * 32 * N
        lane = r % 32
        coop.warp.load(x[warp_base:], items, items_per_thread=N, algorithm="transpose", threads=T)
        for i in range(N):
            loaded[warp_base + lane * N + i] = items[i]
        coop.warp.exchange.blocked_to_striped(items, moved, threads=T, items_per_thread=N)
        for i in range(N):
            striped[warp_base + lane + i * 32] = moved[i]
        coop.warp.merge_sort(items, operator.lt, threads=T, items_per_thread=N)
        for i in range(N):
            sorted_out[warp_base + lane * N + i] = items[i]

    return kernel


@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_warp_primitives_in_shaped_blocks(shape):
    x = np.random.default_rng(5).integers(-50, 50, BLOCKS * TILE).astype(np.int32)
    loaded, striped, sorted_out = np.zeros_like(x), np.zeros_like(x), np.zeros_like(x)
    warp_kernel(shape)[BLOCKS, shape](x, loaded, striped, sorted_out)
    assert_equal_exact(loaded, x, "warp.load transpose")
    assert_equal_exact(striped, x, "warp.exchange.blocked_to_striped")
    assert_equal_exact(sorted_out, np.sort(x.reshape(-1, 32 * N), axis=1).ravel(), "warp.merge_sort")
