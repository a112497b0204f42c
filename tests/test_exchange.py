"""coop.block.exchange and coop.warp.exchange against NumPy references: every function,
dtype, block shape (1-, 2- and 3-D, not only multiples of 32), items per thread (with
and without CUB's bank padding), warp time slicing, logical warp widths, consecutive
calls without barriers, and a temp_storage shared with block scans. Exchanges move
values without arithmetic, so every check is exact."""

import re

import numpy as np
import pytest
from numba import cuda

import coop
from helpers import ALL_DTYPES, FULL_MATRIX, ON_GPU, WIDTHS, assert_equal_exact, expect_link_error
from test_block import global_rank, jit_any_block

BLOCKS = 2
# Every exchange specialises on the block size, so each (dtype, items, shape) compiles a
# kernel of its own: int32 gets every shape for every items count, the other dtypes every
# items count, each with one shape from a rotation.
if FULL_MATRIX:
    SHAPES = [1, 32, 33, 96, 128, 500, 1024, (16, 4), (8, 2, 2), (8, 8, 4)]
    ROTATING_SHAPES = [33, 500, (8, 8, 4), 1024, 96, (16, 4), 1]
    CORE_ITEMS = ITEMS = [1, 2, 3, 4, 7, 8, 16]  # 8 and 16: CUB's bank padding
    OTHER_DTYPES = [d for d in ALL_DTYPES if d is not np.int32]
    SLICED_SHAPES = [33, 1024, (8, 8, 4)]
else:  # the simulator runs a Python thread per CUDA thread
    SHAPES = [33, 96, (16, 4), (8, 2, 2)]
    ROTATING_SHAPES = [33, (16, 4)]
    CORE_ITEMS = [1, 4, 8]
    ITEMS = [3]
    OTHER_DTYPES = [np.bool_, np.int8, np.float16, np.float64, np.complex64]
    SLICED_SHAPES = [33, 96]
STATIC_SHARED = 46 * 1024  # below the 48 KiB a kernel may have, for alignment


def size(shape):
    return int(np.prod(shape))


def cases():
    """(dtype, items, shapes) for the block exchange tests."""
    out = [pytest.param(np.int32, items, SHAPES, id=f"int32-items{items}") for items in CORE_ITEMS]
    for j, dtype in enumerate(OTHER_DTYPES):
        for k, items in enumerate(ITEMS):
            shape = ROTATING_SHAPES[(j + k) % len(ROTATING_SHAPES)]
            out.append(pytest.param(dtype, items, [shape], id=f"{np.dtype(dtype).name}-items{items}"))
    return out


def tile_data(dtype, n, rng):
    """Distinct-ish values of ``dtype`` (a shuffled range), so misplaced items show."""
    values = rng.permutation(n)
    kind = np.dtype(dtype).kind
    if kind == "b":
        return values % 2 == 1
    if kind == "c":
        return (values + 1j * (n - values)).astype(dtype)
    return values.astype(dtype)


# -- NumPy references ------------------------------------------------------------------------


def positions(arrangement, threads, items):
    """Tile position of item ``i`` of thread ``r``, as a (threads, items) array."""
    r = np.arange(threads)[:, None]
    i = np.arange(items)[None, :]
    if arrangement == "blocked":
        return r * items + i
    if arrangement == "striped":
        return i * threads + r
    if arrangement == "warp_striped":  # a last partial warp strides by its lane count
        first = r // 32 * 32
        lanes = np.minimum(32, threads - first)
        return first * items + i * lanes + r % 32
    raise ValueError(arrangement)


FORMS = {
    "blocked_to_striped": ("blocked", "striped"),
    "striped_to_blocked": ("striped", "blocked"),
    "blocked_to_warp_striped": ("blocked", "warp_striped"),
    "warp_striped_to_blocked": ("warp_striped", "blocked"),
    "scatter_to_blocked": (None, "blocked"),
    "scatter_to_striped": (None, "striped"),
}


def exchange_reference(held, form, ranks=None, keep=None):
    """Each group's (threads, items) values after the exchange ``form``, and which of
    them are defined (False where a guarded or flagged scatter filled no position)."""
    groups, threads, items = held.shape
    source, target = FORMS[form]
    out = np.zeros_like(held)
    defined = np.zeros(held.shape, bool)
    for b in range(groups):
        sources = positions(source, threads, items) if ranks is None else ranks[b]
        kept = np.ones((threads, items), bool) if keep is None else keep[b]
        tile = np.zeros(threads * items, held.dtype)
        filled = np.zeros(threads * items, bool)
        tile[sources[kept]] = held[b][kept]
        filled[sources[kept]] = True
        targets = positions(target, threads, items)
        out[b], defined[b] = tile[targets], filled[targets]
    return out, defined


def check(actual, expected, defined, what):
    assert_equal_exact(np.asarray(actual)[defined], np.asarray(expected)[defined], what)


def time_slicing_needed(dtype, threads, items, buffers):
    """Whether ``buffers`` exchange buffers of this tile exceed static shared memory (the
    test then uses warp time slicing, as a user would)."""
    one = coop.block.exchange.blocked_to_striped.temp_storage_bytes(dtype, threads, items)
    return buffers * one > STATIC_SHARED


# -- block exchanges: structured -------------------------------------------------------------


def structured_kernel(dtype, threads, items, time_slicing):
    T, N, DT, TS = threads, items, dtype, time_slicing
    exchange = coop.block.exchange

    @jit_any_block
    def kernel(x, out):
        g = global_rank()
        values = cuda.local.array(N, DT)
        moved = cuda.local.array(N, DT)
        for i in range(N):
            values[i] = x[g * N + i]
        exchange.blocked_to_striped(values, moved, threads=T, items_per_thread=N, warp_time_slicing=TS)
        for i in range(N):
            out[0, g * N + i] = moved[i]
        exchange.striped_to_blocked(moved, moved, threads=T, items_per_thread=N, warp_time_slicing=TS)
        for i in range(N):
            out[1, g * N + i] = moved[i]
        exchange.blocked_to_warp_striped(values, moved, threads=T, items_per_thread=N, warp_time_slicing=TS)
        for i in range(N):
            out[2, g * N + i] = moved[i]
        exchange.warp_striped_to_blocked(moved, moved, threads=T, items_per_thread=N, warp_time_slicing=TS)
        for i in range(N):
            out[3, g * N + i] = moved[i]
        # the same specialisation twice in a row, in place: no barrier between the calls
        exchange.blocked_to_striped(values, values, threads=T, items_per_thread=N, warp_time_slicing=TS)
        exchange.blocked_to_striped(values, values, threads=T, items_per_thread=N, warp_time_slicing=TS)
        for i in range(N):
            out[4, g * N + i] = values[i]
        exchange.blocked_to_warp_striped(values, values, threads=T, items_per_thread=N, warp_time_slicing=TS)
        exchange.blocked_to_warp_striped(values, values, threads=T, items_per_thread=N, warp_time_slicing=TS)
        for i in range(N):
            out[5, g * N + i] = values[i]
        exchange.striped_to_blocked(values, values, threads=T, items_per_thread=N, warp_time_slicing=TS)
        exchange.striped_to_blocked(values, values, threads=T, items_per_thread=N, warp_time_slicing=TS)
        for i in range(N):
            out[6, g * N + i] = values[i]
        exchange.warp_striped_to_blocked(values, values, threads=T, items_per_thread=N, warp_time_slicing=TS)
        exchange.warp_striped_to_blocked(values, values, threads=T, items_per_thread=N, warp_time_slicing=TS)
        for i in range(N):
            out[7, g * N + i] = values[i]

    return kernel


def structured_references(held):
    steps = [
        ("blocked_to_striped", 0, None),
        ("striped_to_blocked", 1, 0),
        ("blocked_to_warp_striped", 2, None),
        ("warp_striped_to_blocked", 3, 2),
    ]
    expected = {}
    for form, slot, source in steps:
        expected[slot] = exchange_reference(held if source is None else expected[source], form)[0]
    chained = held
    for slot, form in enumerate(
        ["blocked_to_striped", "blocked_to_warp_striped", "striped_to_blocked", "warp_striped_to_blocked"], start=4
    ):
        chained = exchange_reference(exchange_reference(chained, form)[0], form)[0]
        expected[slot] = chained
    return [expected[k] for k in range(8)]


def run_structured(dtype, items, shape, time_slicing, rng):
    threads = size(shape)
    x = tile_data(dtype, BLOCKS * threads * items, rng)
    out = np.zeros((8, x.size), x.dtype)
    structured_kernel(dtype, threads, items, time_slicing)[BLOCKS, shape](x, out)
    held = x.reshape(BLOCKS, threads, items)
    names = ["blocked_to_striped", "striped_to_blocked", "blocked_to_warp_striped", "warp_striped_to_blocked",
             "blocked_to_striped twice", "blocked_to_warp_striped twice", "striped_to_blocked twice",
             "warp_striped_to_blocked twice"]
    everywhere = np.ones(held.shape, bool)
    for k, expected in enumerate(structured_references(held)):
        where = f"{names[k]}, shape {shape}, {items} items, time slicing {time_slicing}"
        check(out[k].reshape(held.shape), expected, everywhere, where)


@pytest.mark.parametrize("dtype,items,shapes", cases())
def test_structured(dtype, items, shapes):
    """Blocked <-> striped and blocked <-> warp-striped, into another array and in place,
    each after another and twice in a row."""
    rng = np.random.default_rng(items)
    for shape in shapes:
        time_slicing = time_slicing_needed(dtype, size(shape), items, 4)
        run_structured(dtype, items, shape, time_slicing, rng)


TIME_SLICED = (
    [pytest.param(d, i, id=f"{np.dtype(d).name}-items{i}") for d in (np.int32, np.complex128) for i in (1, 3, 8, 16)]
    if FULL_MATRIX
    else [pytest.param(np.int32, 3, id="int32-items3"), pytest.param(np.complex64, 8, id="complex64-items8")]
)


@pytest.mark.parametrize("dtype,items", TIME_SLICED)
def test_structured_time_sliced(dtype, items):
    """CUB's warp time slicing: the same results through one warp's worth of scratch."""
    rng = np.random.default_rng(items + 20)
    for shape in SLICED_SHAPES:
        run_structured(dtype, items, shape, True, rng)


# -- block exchanges: scatter ----------------------------------------------------------------


def scatter_kernel(dtype, threads, items, time_slicing):
    T, N, DT, TS = threads, items, dtype, time_slicing
    exchange = coop.block.exchange

    @jit_any_block
    def kernel(x, ranks_in, guarded_in, valid_in, out):
        g = global_rank()
        values = cuda.local.array(N, DT)
        moved = cuda.local.array(N, DT)
        ranks = cuda.local.array(N, np.int32)
        guarded = cuda.local.array(N, np.int32)
        valid = cuda.local.array(N, np.bool_)
        for i in range(N):
            values[i] = x[g * N + i]
            ranks[i] = ranks_in[g * N + i]
            guarded[i] = guarded_in[g * N + i]
            valid[i] = valid_in[g * N + i]
        exchange.scatter_to_blocked(values, moved, ranks, threads=T, items_per_thread=N, warp_time_slicing=TS)
        for i in range(N):
            out[0, g * N + i] = moved[i]
        exchange.scatter_to_striped(values, moved, ranks, threads=T, items_per_thread=N, warp_time_slicing=TS)
        for i in range(N):
            out[1, g * N + i] = moved[i]
        exchange.scatter_to_striped_guarded(values, moved, guarded, threads=T, items_per_thread=N,
                                            warp_time_slicing=TS)
        for i in range(N):
            out[2, g * N + i] = moved[i]
        exchange.scatter_to_striped_flagged(values, moved, ranks, valid, threads=T, items_per_thread=N,
                                            warp_time_slicing=TS)
        for i in range(N):
            out[3, g * N + i] = moved[i]
        # the same specialisation twice in a row, in place
        exchange.scatter_to_blocked(values, values, ranks, threads=T, items_per_thread=N, warp_time_slicing=TS)
        exchange.scatter_to_blocked(values, values, ranks, threads=T, items_per_thread=N, warp_time_slicing=TS)
        for i in range(N):
            out[4, g * N + i] = values[i]

    return kernel


def run_scatter(dtype, items, shape, time_slicing, rng):
    threads = size(shape)
    tile = threads * items
    x = tile_data(dtype, BLOCKS * tile, rng)
    ranks = np.concatenate([rng.permutation(tile) for _ in range(BLOCKS)]).astype(np.int32)
    # guarded: about a fifth dropped with rank -1 (CUB's convention), a tenth past the tile
    guarded = ranks.copy()
    dropped = rng.random(ranks.size)
    guarded[dropped < 0.2] = -1
    guarded[dropped > 0.9] = tile + rng.integers(0, 100, int((dropped > 0.9).sum()))
    valid = rng.random(ranks.size) < 0.7
    out = np.zeros((5, x.size), x.dtype)
    scatter_kernel(dtype, threads, items, time_slicing)[BLOCKS, shape](x, ranks, guarded, valid, out)

    shaped = (BLOCKS, threads, items)
    held, ranks, guarded, valid = x.reshape(shaped), ranks.reshape(shaped), guarded.reshape(shaped), valid.reshape(shaped)
    in_tile = (guarded >= 0) & (guarded < tile)
    where = f"shape {shape}, {items} items, time slicing {time_slicing}"
    references = [
        ("scatter_to_blocked", exchange_reference(held, "scatter_to_blocked", ranks)),
        ("scatter_to_striped", exchange_reference(held, "scatter_to_striped", ranks)),
        ("scatter_to_striped_guarded", exchange_reference(held, "scatter_to_striped", np.where(in_tile, guarded, 0),
                                                          in_tile)),
        ("scatter_to_striped_flagged", exchange_reference(held, "scatter_to_striped", ranks, valid)),
    ]
    once = references[0][1][0]
    references.append(("scatter_to_blocked twice", exchange_reference(once, "scatter_to_blocked", ranks)))
    for k, (name, (expected, defined)) in enumerate(references):
        check(out[k].reshape(shaped), expected, defined, f"{name}, {where}")


@pytest.mark.parametrize("dtype,items,shapes", cases())
def test_scatter(dtype, items, shapes):
    """Scatters of random permutations to blocked and striped; guarded (out-of-tile
    ranks dropped) and flagged (invalid items dropped): positions that received an item
    are checked."""
    rng = np.random.default_rng(items + 10)
    for shape in shapes:
        time_slicing = time_slicing_needed(dtype, size(shape), items, 4)
        run_scatter(dtype, items, shape, time_slicing, rng)


@pytest.mark.parametrize("dtype,items", TIME_SLICED)
def test_scatter_time_sliced(dtype, items):
    rng = np.random.default_rng(items + 30)
    for shape in SLICED_SHAPES:
        run_scatter(dtype, items, shape, True, rng)


# -- warp exchanges --------------------------------------------------------------------------


def warp_kernel(dtype, threads, items, width):
    T, N, DT, W = threads, items, dtype, width
    exchange = coop.warp.exchange

    @jit_any_block
    def kernel(x, ranks_in, out):
        g = global_rank()
        values = cuda.local.array(N, DT)
        moved = cuda.local.array(N, DT)
        ranks = cuda.local.array(N, np.int32)
        for i in range(N):
            values[i] = x[g * N + i]
            ranks[i] = ranks_in[g * N + i]
        exchange.blocked_to_striped(values, moved, threads=T, items_per_thread=N, width=W)
        for i in range(N):
            out[0, g * N + i] = moved[i]
        exchange.striped_to_blocked(moved, moved, threads=T, items_per_thread=N, width=W)
        for i in range(N):
            out[1, g * N + i] = moved[i]
        exchange.scatter_to_striped(values, moved, ranks, threads=T, items_per_thread=N, width=W)
        for i in range(N):
            out[2, g * N + i] = moved[i]
        exchange.blocked_to_striped(values, values, threads=T, items_per_thread=N, width=W)
        exchange.blocked_to_striped(values, values, threads=T, items_per_thread=N, width=W)
        for i in range(N):
            out[3, g * N + i] = values[i]

    return kernel


def warp_cases():
    """int32 at every width and items count (a few on the simulator), the other dtypes
    at two widths each."""
    core_items = (1, 3, 4, 8, 16) if FULL_MATRIX else (3,)
    out = [pytest.param(np.int32, w, i, id=f"int32-w{w}-items{i}") for w in WIDTHS for i in core_items]
    if FULL_MATRIX:
        others = [(d, WIDTHS[(j + k) % len(WIDTHS)], 3 if k else 8) for j, d in enumerate(OTHER_DTYPES) for k in (0, 3)]
    else:
        others = [(np.int8, 8, 4), (np.float16, 32, 1), (np.float64, 16, 8), (np.complex64, 32, 3), (np.bool_, 4, 3)]
    out += [pytest.param(d, w, i, id=f"{np.dtype(d).name}-w{w}-items{i}") for d, w, i in others]
    return out


@pytest.mark.parametrize("dtype,width,items", warp_cases())
def test_warp_exchange(dtype, width, items):
    """Each logical warp exchanges its own tile: blocked <-> striped and a scatter of a
    random permutation, in blocks of several warps (2-D blocks too)."""
    rng = np.random.default_rng(width * 100 + items)
    for shape in [64, (32, 3)] if FULL_MATRIX else [64]:
        threads = size(shape)
        groups = BLOCKS * threads // width
        x = tile_data(dtype, BLOCKS * threads * items, rng)
        ranks = np.concatenate([rng.permutation(width * items) for _ in range(groups)]).astype(np.int32)
        out = np.zeros((4, x.size), x.dtype)
        warp_kernel(dtype, threads, items, width)[BLOCKS, shape](x, ranks, out)
        shaped = (groups, width, items)
        held = x.reshape(shaped)
        striped = exchange_reference(held, "blocked_to_striped")[0]
        expected = [
            striped,
            held,
            exchange_reference(held, "scatter_to_striped", ranks.reshape(shaped))[0],
            exchange_reference(striped, "blocked_to_striped")[0],
        ]
        names = ["blocked_to_striped", "striped_to_blocked", "scatter_to_striped", "blocked_to_striped twice"]
        everywhere = np.ones(shaped, bool)
        for k in range(4):
            check(out[k].reshape(shaped), expected[k], everywhere, f"warp {names[k]}, width {width}, shape {shape}")


# -- temp_storage shared with block scans ----------------------------------------------------


def test_temp_storage_shared_with_scans():
    """One caller's array serves a block scan, exchanges (block-wide and within warps)
    and another scan back to back, without barriers in between."""
    THREADS, N = 96, 4
    BYTES = max(
        coop.block.exclusive_sum.temp_storage_bytes(np.int32, THREADS),
        coop.block.exchange.blocked_to_striped.temp_storage_bytes(np.int32, THREADS, N),
        coop.block.exchange.blocked_to_warp_striped.temp_storage_bytes(np.int32, THREADS, N),
        coop.block.exchange.scatter_to_striped_flagged.temp_storage_bytes(np.int32, THREADS, N),
        coop.warp.exchange.striped_to_blocked.temp_storage_bytes(np.int32, THREADS, N, width=16),
    )
    WARP_BYTES = coop.warp.exchange.striped_to_blocked.temp_storage_bytes(np.int32, THREADS, N)
    exchange = coop.block.exchange

    @jit_any_block
    def kernel(x, out, totals):
        temp = cuda.shared.array(BYTES, np.uint8, alignment=8)
        warp_temp = cuda.shared.array(WARP_BYTES, np.uint8, alignment=8)
        g = global_rank()
        values = cuda.local.array(N, np.int32)
        ranks = cuda.local.array(N, np.int32)
        valid = cuda.local.array(N, np.bool_)
        for i in range(N):
            values[i] = x[g * N + i]
        totals[g, 0] = coop.block.exclusive_sum(values, values, threads=THREADS, temp_storage=temp)
        exchange.blocked_to_striped(values, values, threads=THREADS, items_per_thread=N, temp_storage=temp)
        for i in range(N):
            out[0, g * N + i] = values[i]
        # a warp-striped exchange right after a block-wide one, in the same array
        exchange.blocked_to_warp_striped(values, values, threads=THREADS, items_per_thread=N, temp_storage=temp)
        for i in range(N):
            out[1, g * N + i] = values[i]
        totals[g, 1] = coop.block.inclusive_sum(values, values, threads=THREADS, temp_storage=temp)
        for i in range(N):
            out[2, g * N + i] = values[i]
            valid[i] = values[i] % 2 == 0
            ranks[i] = 1 if valid[i] else 0
        # compact the even items, in order, to the front of the tile
        kept = coop.block.exclusive_sum(ranks, ranks, threads=THREADS, temp_storage=temp)
        exchange.scatter_to_striped_flagged(values, values, ranks, valid, threads=THREADS, items_per_thread=N,
                                            temp_storage=temp)
        totals[g, 2] = kept
        for i in range(N):
            out[3, g * N + i] = values[i]
        # warp exchanges in their own array, twice, then a warp-synchronous one in temp
        # after a block scan: a warp exchange never synchronises the block, so here the
        # caller does, as CUB requires
        coop.warp.exchange.striped_to_blocked(values, values, threads=THREADS, items_per_thread=N,
                                              temp_storage=warp_temp)
        coop.warp.exchange.blocked_to_striped(values, values, threads=THREADS, items_per_thread=N,
                                              temp_storage=warp_temp)
        coop.block.exclusive_sum(values, ranks, threads=THREADS, temp_storage=temp)
        cuda.syncthreads()
        coop.warp.exchange.striped_to_blocked(values, values, threads=THREADS, items_per_thread=N,
                                              width=16, temp_storage=temp)
        for i in range(N):
            out[4, g * N + i] = values[i]

    rng = np.random.default_rng(5)
    x = rng.integers(0, 7, BLOCKS * THREADS * N).astype(np.int32)
    out = np.zeros((5, x.size), np.int32)
    totals = np.zeros((BLOCKS * THREADS, 3), np.int64)
    kernel[BLOCKS, THREADS](x, out, totals)
    shaped = (BLOCKS, THREADS, N)
    everywhere = np.ones(shaped, bool)
    tiles = x.reshape(BLOCKS, -1)
    exclusive = (np.cumsum(tiles, axis=1) - tiles).reshape(shaped)
    striped = exchange_reference(exclusive, "blocked_to_striped")[0]
    check(out[0].reshape(shaped), striped, everywhere, "blocked_to_striped after a scan")
    warp_striped = exchange_reference(striped, "blocked_to_warp_striped")[0]
    check(out[1].reshape(shaped), warp_striped, everywhere, "blocked_to_warp_striped after blocked_to_striped")
    scanned = np.cumsum(warp_striped.reshape(BLOCKS, -1), axis=1).reshape(shaped)
    check(out[2].reshape(shaped), scanned, everywhere, "inclusive_sum after the exchanges")
    even = scanned % 2 == 0
    counts = even.reshape(BLOCKS, -1).sum(axis=1)
    ranks = (np.cumsum(even.reshape(BLOCKS, -1), axis=1) - even.reshape(BLOCKS, -1)).reshape(shaped)
    compacted, defined = exchange_reference(scanned, "scatter_to_striped", ranks, even)
    check(out[3].reshape(shaped), compacted, defined, "scatter_to_striped_flagged after scans")
    assert_equal_exact(totals[:, 2], np.repeat(counts, THREADS), "kept count")
    assert_equal_exact(totals[:, 0], np.repeat(tiles.sum(axis=1), THREADS), "first aggregate")
    # the warp exchanges move the values out[3] held (unspecified ones included): a round
    # trip in 32-lane warps, then striped_to_blocked in 16-lane ones
    groups = (BLOCKS * THREADS // 16, 16, N)
    expected = exchange_reference(out[3].reshape(groups), "striped_to_blocked")[0]
    check(out[4].reshape(groups), expected, np.ones(groups, bool), "warp exchanges, temp_storage shared")


def test_temp_storage_bytes():
    """The host-side sizes: the tile (plus CUB's padding), or one warp's worth with time
    slicing, in whole 8-byte words; one size for every block exchange; warp exchanges'
    parts in whole 16 bytes."""
    exchange = coop.block.exchange
    assert exchange.blocked_to_striped.temp_storage_bytes(np.int32, 128, 4) == 128 * 4 * 4
    assert exchange.scatter_to_striped.temp_storage_bytes(np.int32, 128, 8) == (1024 + 32) * 4
    assert exchange.striped_to_blocked.temp_storage_bytes(np.float64, 500, 3, warp_time_slicing=True) == 32 * 3 * 8
    assert exchange.blocked_to_warp_striped.temp_storage_bytes(np.int8, 33, 1) == 40
    # a warp exchange: one part per logical warp, its 16 * 4 + 1 items rounded up to 16 bytes
    assert coop.warp.exchange.blocked_to_striped.temp_storage_bytes(np.int32, 64, 4, width=16) == 4 * 272
    with pytest.raises(Exception, match="items_per_thread must be at least 1"):
        exchange.blocked_to_striped.temp_storage_bytes(np.int32, 128, 0)
    with pytest.raises(Exception, match="threads must be a multiple of width"):
        coop.warp.exchange.blocked_to_striped.temp_storage_bytes(np.int32, 48, 4, width=32)


# -- misuse: found before the kernel runs ----------------------------------------------------


def _misuse_kernels():
    @cuda.jit
    def short_items(x, out):
        items = cuda.local.array(3, np.int32)
        for i in range(3):
            items[i] = x[i]
        coop.block.exchange.blocked_to_striped(items, items, threads=32, items_per_thread=4)
        out[0] = items[0]

    @cuda.jit
    def long_ranks(x, out):
        items = cuda.local.array(2, np.int32)
        ranks = cuda.local.array(3, np.int32)
        for i in range(2):
            items[i] = x[i]
            ranks[i] = i
        coop.warp.exchange.scatter_to_striped(items, items, ranks, threads=32, items_per_thread=2)
        out[0] = items[0]

    @cuda.jit
    def no_threads(x, out):
        items = cuda.local.array(2, np.int32)
        items[0] = x[0]
        coop.block.exchange.striped_to_blocked(items, items, items_per_thread=2)
        out[0] = items[0]

    return [
        (short_items, "coop_error__coop_block_exchange_blocked_to_striped__items_wrong_length",
         "coop.block.exchange.blocked_to_striped: items holds 3 items, it must hold exactly 4"),
        (long_ranks, "coop_error__coop_warp_exchange_scatter_to_striped__ranks_wrong_length",
         "coop.warp.exchange.scatter_to_striped: ranks holds 3 items, it must hold exactly 2"),
        (no_threads, "coop.block.exchange.striped_to_blocked: threads is required",
         "coop.block.exchange.striped_to_blocked: threads is required"),
    ]


@pytest.mark.parametrize("case", range(3))
def test_misuse_is_rejected(case):
    """Arrays of the wrong length fail to link on the GPU, naming primitive and
    parameter (the simulator raises with the full message); a missing ``threads`` fails
    to compile."""
    kernel, compiled_message, simulated_message = _misuse_kernels()[case]
    expect_link_error(compiled_message)
    x, out = np.ones(64, np.int32), np.zeros(1, np.int32)
    with pytest.raises(Exception) as error:
        kernel[1, 32](x, out)
    plain = " ".join(re.sub(r"\x1b\[[0-9;]*m", "", str(error.value)).split())
    assert (compiled_message if ON_GPU else simulated_message) in plain
