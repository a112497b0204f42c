"""Warp-wide exchanges (CUB's WarpExchange, shared-memory algorithm): rearranging the
items of a logical warp of ``width`` lanes (1, 2, 4, 8, 16 or 32) among its lanes.

A logical warp of ``W`` lanes with ``N`` (``items_per_thread``) items per lane holds a
tile of ``W*N`` items:

- blocked: item ``i`` of logical lane ``l`` is tile item ``l*N + i``.
- striped: item ``i`` of logical lane ``l`` is tile item ``i*W + l``.
- ranked (scatter): item ``i`` of lane ``l`` goes to tile position ``ranks[i]``.

Every lane of the logical warp calls the function with its items and an ``output``
items array (which may be the input), both of ``items_per_thread`` items of one dtype
(bool, integers, float16/32/64, complex64/128); ``output`` gets the lane's items in
the new arrangement. Logical warps are independent: each has its own slice of one
shared buffer, sized for all the logical warps of the block, so the block's thread
count ``threads`` is a required compile-time constant (as are ``items_per_thread``
and ``width``), and must be a multiple of ``width`` (every logical warp complete).

Shared memory: ``threads // width`` slices of ``width * items_per_thread + 1`` values
(CUB's WarpExchange TempStorage, one per logical warp: the extra slot staggers the
slices across banks), with CUB's bank-conflict padding when ``items_per_thread`` is a
power of two above 4 (CUB pads only the scatter; coop pads every form, which keeps the
blocked writes of such tiles conflict-free too), each slice rounded up to 16 bytes.
``temp_storage=`` takes a caller's shared array instead (size it with
``<function>.temp_storage_bytes(dtype, threads, items_per_thread, width=32)``), divided
into equal parts, one per logical warp, so that every warp primitive given the array
keeps a warp's scratch in the same part (``coop._core.scratch.part_offsets``).

Barriers: ``cuda.syncwarp`` over the logical warp's lanes before writing (earlier
calls' reads are done) and between writing and reading; consecutive warp exchanges
need no barrier between them, nor between a warp exchange and another warp primitive
given the same ``temp_storage`` (with the same logical warps). A warp exchange never
synchronises the block: when its ``temp_storage`` array was just used by a block-wide
primitive (or by logical warps of another width), separate the two with
``cuda.syncthreads()``, as CUB requires for reused TempStorage.
"""

from coop._core.backend import cuda
from coop._core.constants import specialised
from coop._core.exchange import (
    FORMS,
    check_static_shared,
    exact_lengths,
    exchange_through,
    padded_slots,
    rank_items,
    required_items_per_thread,
    required_threads,
    slot_of,
    warp_barrier,
)
from coop._core.scratch import Region, block_rank_of, loader, part_bytes, part_offsets, slot_bytes, storage
from coop._core.shuffle import logical_warp
from coop._core.specialize import PRIMITIVE_DEFAULT, Signature, device_function, primitive
from coop._core.namespace import public_namespace

__all__ = ["blocked_to_striped", "striped_to_blocked", "scatter_to_striped"]

# what other families compose (the building-block tier: tests/test_layering.py)
BUILDING_BLOCKS = ["check_logical_warps", "warp_exchange_layout", "warp_exchanger", "warp_tile_constants"]


def warp_slots(width, items_per_thread):
    """Slots of one logical warp's slice (CUB's ITEMS_PER_TILE plus its padding)."""
    return padded_slots(width * items_per_thread + 1, items_per_thread)


def warp_exchange_layout(dtype, threads, width, items_per_thread):
    """The scratch of warp exchanges in blocks of ``threads``: one part per logical warp
    (``coop._core.scratch.part_offsets``), each holding ``warp_slots`` values."""
    return Region("slices", dtype, threads // width * _part_slots(dtype, width, items_per_thread))


def _part_slots(dtype, width, items_per_thread):
    return part_bytes(warp_slots(width, items_per_thread) * slot_bytes(dtype)) // slot_bytes(dtype)


def check_logical_warps(sig, threads, width):
    """Refuse (``sig``'s error on ``threads``) a block that is not whole logical warps of
    ``width`` lanes."""
    if threads % width:
        raise sig.error(
            "threads",
            f"must be a multiple of width ({width}): every logical warp of the block must be "
            f"complete, got {threads}",
        )


def warp_exchanger(sig, form, dtype, width, threads, items_per_thread, temp_storage, shape=None):
    """The exchange ``form`` (``blocked_to_striped``, ``striped_to_blocked`` or
    ``scatter_to_striped``, see ``coop._core.exchange.FORMS``) within logical warps of
    ``width`` lanes: a device function ``exchange(items, output, ranks, temp_storage)``
    for ``items_per_thread`` items of ``dtype`` per lane in blocks of ``threads``
    (python ints, checked by the caller; of the constant ``shape`` where known,
    ``Signature.block_shape``). It synchronises as the module docstring says."""
    write_offset, keep, read_offset, _ = FORMS[form]
    layout = warp_exchange_layout(dtype, threads, width, items_per_thread)
    check_static_shared(sig, temp_storage, layout, "items_per_thread",
                        f"makes {threads} x {items_per_thread} {dtype} items")
    scratch, _ = storage(sig, temp_storage, layout, owner=(sig.primitive, width))
    region_of = part_offsets(sig, temp_storage, threads // width,
                             _part_slots(dtype, width, items_per_thread) * slot_bytes(dtype), dtype)
    block_rank = block_rank_of(shape)
    load = loader(dtype)
    slot = slot_of(items_per_thread)
    n = items_per_thread
    # (its constants bound: fewer parameters, and loops of constant length, to compile)
    through = specialised(exchange_through, is_valid=None, load=load, n=n, threads=width, write_offset=write_offset,
                          keep=keep, read_offset=read_offset, slot=slot, barrier=warp_barrier)

    def exchange(items, output, ranks, temp_storage):
        buffer = scratch(temp_storage)
        lane, mask = logical_warp(width)
        region = region_of(temp_storage, block_rank() // width)
        cuda.syncwarp(mask)  # the logical warp's earlier reads of its slice are done
        through(items, output, ranks, buffer, region, lane, mask)

    return device_function(exchange)


def warp_tile_constants(sig, threads, items_per_thread, width):
    """``(threads, items_per_thread, width)`` checked: a block of whole logical warps."""
    block = required_threads(sig, threads)
    lanes = sig.width(width)
    check_logical_warps(sig, block, lanes)
    return block, required_items_per_thread(sig, items_per_thread), lanes


def temp_storage_bytes(sig, value_type, threads, items_per_thread, width=PRIMITIVE_DEFAULT):
    """Bytes a ``temp_storage=`` array needs for warp exchanges of ``dtype`` items,
    ``items_per_thread`` per lane, in logical warps of ``width`` lanes filling a block of
    ``threads``: size ``cuda.shared.array(BYTES, np.uint8, alignment=8)`` with it."""
    block, n, lanes = warp_tile_constants(sig, threads, items_per_thread, width)
    return warp_exchange_layout(value_type, block, lanes, n).nbytes


def _specialise(name, form, items, output, ranks, threads, items_per_thread, width, temp_storage):
    sig = Signature(name)
    dtype = sig.items(items, "items")
    sig.output_items(output, "output", dtype)
    if ranks is not None:
        rank_items(sig, ranks)
    block, n, lanes = warp_tile_constants(sig, threads, items_per_thread, width)
    exchange = warp_exchanger(sig, form, dtype, lanes, block, n, temp_storage, sig.block_shape(threads))
    check = exact_lengths(sig, n, ranks is not None, False)

    def checked_exchange(items, output, ranks, temp_storage):
        check(items, output, ranks, None)
        exchange(items, output, ranks, temp_storage)

    return device_function(checked_exchange)


def _structured(name, form, items, output, threads, items_per_thread, width, temp_storage):
    exchange = _specialise(name, form, items, output, None, threads, items_per_thread, width, temp_storage)

    def impl(items, output, temp_storage):
        exchange(items, output, None, temp_storage)

    return impl


@primitive("coop.warp.exchange.blocked_to_striped", temp_storage_bytes, group="warp")
def blocked_to_striped(items, output, threads=None, items_per_thread=None, width=32, temp_storage=None):
    """Transpose a logical warp's items from blocked to striped arrangement
    (CUB WarpExchange::BlockedToStriped): where logical lane ``l``'s ``items`` held the
    warp's tile items ``l*N .. l*N+N-1``, its ``output`` gets items
    ``l, W+l, 2W+l, ...`` (``W`` = ``width``, ``N`` = ``items_per_thread``).

    Parameters
    ----------
    items : items array
        {exchange_items}
    output : items array
        {exchange_output}
    threads : int or tuple of int, compile-time constant
        {warp_exchange_threads}
    items_per_thread : int, compile-time constant
        {exchange_items_per_thread}
    width : int, compile-time constant, default 32
        {width}
    temp_storage : shared array, optional
        {warp_temp_storage}
        {temp_storage_size} The same for the three warp exchanges.

    Returns
    -------
    None
        ``output`` holds the lane's items in the new arrangement.

    Barriers
    --------
    {warp_exchange_barriers}

    Notes
    -----
    {collective}

    Example
    -------
    Blocked items of logical warps of 16 lanes, stored coalesced after the transpose::

        import numpy as np
        import coop
        from numba import cuda

        THREADS, ITEMS, WIDTH = 64, 4, 16

        @cuda.jit
        def copy_tiles(d_in, d_out):
            g = cuda.grid(1)
            lane, base = g % WIDTH, (g // WIDTH) * WIDTH * ITEMS   # this logical warp's tile
            items = cuda.local.array(ITEMS, np.int32)
            for i in range(ITEMS):
                items[i] = d_in[base + lane * ITEMS + i]
            coop.warp.exchange.blocked_to_striped(
                items, items, threads=THREADS, items_per_thread=ITEMS, width=WIDTH
            )
            for i in range(ITEMS):                  # a coalesced store
                d_out[base + i * WIDTH + lane] = items[i]

        x = np.arange(THREADS * ITEMS, dtype=np.int32)
        out = np.zeros_like(x)
        copy_tiles[1, THREADS](x, out)
        assert (out == x).all()
    """
    return _structured(
        "coop.warp.exchange.blocked_to_striped", "blocked_to_striped",
        items, output, threads, items_per_thread, width, temp_storage,
    )


@primitive("coop.warp.exchange.striped_to_blocked", temp_storage_bytes, group="warp")
def striped_to_blocked(items, output, threads=None, items_per_thread=None, width=32, temp_storage=None):
    """Transpose a logical warp's items from striped to blocked arrangement
    (CUB WarpExchange::StripedToBlocked): where logical lane ``l``'s ``items`` held the
    warp's tile items ``l, W+l, 2W+l, ...``, its ``output`` gets items
    ``l*N .. l*N+N-1`` (``W`` = ``width``, ``N`` = ``items_per_thread``).

    Parameters
    ----------
    items : items array
        {exchange_items}
    output : items array
        {exchange_output}
    threads : int or tuple of int, compile-time constant
        {warp_exchange_threads}
    items_per_thread : int, compile-time constant
        {exchange_items_per_thread}
    width : int, compile-time constant, default 32
        {width}
    temp_storage : shared array, optional
        {warp_temp_storage}
        {temp_storage_size} The same for the three warp exchanges.

    Returns
    -------
    None
        ``output`` holds the lane's items in the new arrangement.

    Barriers
    --------
    {warp_exchange_barriers}

    Notes
    -----
    {collective}

    Example
    -------
    Each warp's 128 items loaded coalesced, transposed to blocked and scanned::

        import numpy as np
        import coop
        from numba import cuda

        THREADS, ITEMS = 64, 4

        @cuda.jit
        def k(d_in, d_out):
            g = cuda.grid(1)
            lane, base = g % 32, (g // 32) * 32 * ITEMS
            items = cuda.local.array(ITEMS, np.float64)
            for i in range(ITEMS):                  # a coalesced load
                items[i] = d_in[base + i * 32 + lane]
            coop.warp.exchange.striped_to_blocked(items, items, threads=THREADS, items_per_thread=ITEMS)
            coop.warp.inclusive_sum(items, items)   # a scan of the warp's tile
            for i in range(ITEMS):
                d_out[base + lane * ITEMS + i] = items[i]

        x = np.random.default_rng(18).integers(-100, 100, THREADS * ITEMS).astype(np.float64)
        out = np.zeros_like(x)
        k[1, THREADS](x, out)
        assert (out == np.cumsum(x.reshape(2, 128), axis=1).ravel()).all()
    """
    return _structured(
        "coop.warp.exchange.striped_to_blocked", "striped_to_blocked",
        items, output, threads, items_per_thread, width, temp_storage,
    )


@primitive("coop.warp.exchange.scatter_to_striped", temp_storage_bytes, group="warp")
def scatter_to_striped(items, output, ranks, threads=None, items_per_thread=None, width=32, temp_storage=None):
    """Scatter a logical warp's ranked items to striped arrangement
    (CUB WarpExchange::ScatterToStriped): item ``i`` of every lane goes to position
    ``ranks[i]`` of the warp's tile, and logical lane ``l``'s ``output`` gets tile
    items ``l, W+l, 2W+l, ...`` (``W`` = ``width``, ``N`` = ``items_per_thread``).

    Parameters
    ----------
    items : items array
        {exchange_items}
    output : items array
        {exchange_output}
    ranks : items array of integers
        {ranks}
        The ranks of the logical warp must be a permutation of ``0 .. W*N-1``: a rank
        outside its tile writes outside its slice of shared memory.
    threads : int or tuple of int, compile-time constant
        {warp_exchange_threads}
    items_per_thread : int, compile-time constant
        {exchange_items_per_thread}
    width : int, compile-time constant, default 32
        {width}
    temp_storage : shared array, optional
        {warp_temp_storage}
        {temp_storage_size} The same for the three warp exchanges.

    Returns
    -------
    None
        ``output`` holds the lane's items in the new arrangement.

    Barriers
    --------
    {warp_exchange_barriers}

    Notes
    -----
    {collective}

    Example
    -------
    Each warp's tile of 64 items reversed::

        import numpy as np
        import coop
        from numba import cuda

        THREADS, ITEMS = 64, 2

        @cuda.jit
        def k(d_in, d_out):
            g = cuda.grid(1)
            lane, base = g % 32, (g // 32) * 32 * ITEMS
            items = cuda.local.array(ITEMS, np.int32)
            ranks = cuda.local.array(ITEMS, np.int32)
            for i in range(ITEMS):                  # reverse each warp's tile
                items[i] = d_in[base + lane * ITEMS + i]
                ranks[i] = 32 * ITEMS - 1 - (lane * ITEMS + i)
            coop.warp.exchange.scatter_to_striped(items, items, ranks, threads=THREADS, items_per_thread=ITEMS)
            for i in range(ITEMS):
                d_out[base + i * 32 + lane] = items[i]

        x = np.arange(THREADS * ITEMS, dtype=np.int32)
        out = np.zeros_like(x)
        k[1, THREADS](x, out)
        assert (out.reshape(2, 64) == x.reshape(2, 64)[:, ::-1]).all()
    """
    exchange = _specialise(
        "coop.warp.exchange.scatter_to_striped", "scatter_to_striped",
        items, output, ranks, threads, items_per_thread, width, temp_storage,
    )

    def impl(items, output, ranks, temp_storage):
        exchange(items, output, ranks, temp_storage)

    return impl

public_namespace(__name__)
