"""Block-wide exchanges (CUB's BlockExchange): rearranging a tile of items among the
threads of a block, through shared memory.

A block of ``T`` threads (``threads``, 1-, 2- or 3-D, 1 to 1024 threads; rank
``r = x + y*dx + z*dx*dy``) holds a tile of ``T*N`` items, ``N`` (``items_per_thread``)
in each thread's items array (``cuda.local.array(N, dtype)``). The arrangements are
CUB's:

- blocked: item ``i`` of thread ``r`` is tile item ``r*N + i``.
- striped: item ``i`` of thread ``r`` is tile item ``i*T + r``.
- warp-striped: warp ``w`` (ranks ``32w ..``) holds the ``32*N`` tile items from
  ``32*w*N``, striped across its lanes: item ``i`` of lane ``l`` is tile item
  ``32*w*N + 32*i + l``. In a last partial warp of ``L < 32`` lanes (a block that is
  not a multiple of 32) the stride is ``L``: item ``i`` of lane ``l`` is
  ``32*w*N + L*i + l``, so the tile stays the contiguous items ``0 .. T*N-1``. (That is
  CUB's arrangement wherever CUB defines it: blocks of a multiple of 32 threads, and
  blocks of fewer than 32, where CUB strides by the block size too.)
- ranked (scatter): item ``i`` of thread ``r`` goes to tile position ``ranks[i]``.

Every function takes the items and an ``output`` items array (which may be the input),
both of ``items_per_thread`` items of one dtype (bool, integers, float16/32/64,
complex64/128), and writes the thread's items in the new arrangement to ``output``.
Every thread of the block must call it (it synchronises the block).

``threads`` and ``items_per_thread`` are required compile-time constants (a literal or a
module-level constant): the shared-memory footprint is ``threads * items_per_thread``
slots, and Numba's array types carry no length. ``threads`` must equal the block's
thread count.

Shared memory: ``threads * items_per_thread`` values, plus CUB's bank-conflict padding
(one slot after every 32 when ``items_per_thread`` is a power of two above 4). With
``warp_time_slicing=True`` (CUB's WARP_TIME_SLICING) only ``min(threads, 32) *
items_per_thread`` values (plus padding): the warps take turns, at the cost of a
block barrier per warp (two for the forms that move items between warps) instead of
one or two per call. A call's own buffer is static shared
memory, at most 48 KiB a kernel: larger tiles need ``warp_time_slicing=True`` or a
``temp_storage=`` array. ``temp_storage=`` (size it with ``<function>.temp_storage_bytes(
dtype, threads, items_per_thread, warp_time_slicing=False)``, the same for every
function of this module) shares one array with other primitives, as CUB's TempStorage
unions do.

Barriers: each call synchronises as it needs and leaves no barrier to the caller;
consecutive block-wide calls need no ``cuda.syncthreads()`` between them. (A warp-level
primitive that reuses the same ``temp_storage`` synchronises only its warp: see
``coop.warp.exchange``.) See each function for the barriers it executes.

Building blocks for other primitives (block load/store "transpose" and
"warp_transpose", radix sort's scatter): ``exchanger(sig, form, dtype, threads,
items_per_thread, temp_storage, time_slicing)`` specialises one of the exchanges (by
CUB's name, see ``coop._core.exchange.FORMS``) inside another primitive's generator
(its errors name that primitive; its ``temp_storage`` is that primitive's), and
``exchange_layout`` is its scratch (which the primitive's ``temp_storage_bytes``
reports). Below them, ``coop._core.exchange`` moves items through a given buffer with
given offset functions.
"""

from coop._core.backend import cuda
from coop._core.constants import specialised
from coop._core.exchange import (
    FORMS,
    check_static_shared,
    WARP_LOCAL_OFFSETS,
    block_barrier,
    exact_lengths,
    exchange_through,
    exchange_time_sliced_through,
    flag_items,
    padded_slots,
    rank_items,
    required_items_per_thread,
    required_threads,
    slot_of,
    warp_barrier,
    warp_by_warp,
    warp_mask,
)
from coop._core.scratch import Region, block_rank_of, loader, storage
from coop._core.specialize import PRIMITIVE_DEFAULT, Signature, device_function, primitive
from coop._core.namespace import public_namespace

__all__ = [
    "striped_to_blocked",
    "blocked_to_striped",
    "warp_striped_to_blocked",
    "blocked_to_warp_striped",
    "scatter_to_blocked",
    "scatter_to_striped",
    "scatter_to_striped_guarded",
    "scatter_to_striped_flagged",
]

# what other families compose (the building-block tier: tests/test_layering.py)
BUILDING_BLOCKS = ["exchange_layout", "exchanger"]


# -- the exchanges, specialised: building blocks for other block primitives ----------------


def exchange_layout(dtype, threads, items_per_thread, time_slicing=False, name="tile"):
    """The scratch of an exchange of ``dtype`` items (python ints in): a region
    ``name`` of the tile's ``threads * items_per_thread`` values, or one warp's with
    ``time_slicing``, plus CUB's bank padding."""
    slice_threads = min(threads, 32) if time_slicing else threads
    return Region(name, dtype, padded_slots(slice_threads * items_per_thread, items_per_thread))


def exchanger(sig, form, dtype, threads, items_per_thread, temp_storage, time_slicing=False, shape=None):
    """The exchange ``form`` (a key of ``FORMS``) specialised for a primitive: a device
    function ``exchange(items, output, ranks, is_valid, temp_storage)`` (``ranks`` and
    ``is_valid`` are ``None`` where the form takes none) for ``items_per_thread`` items
    of ``dtype`` per thread in blocks of ``threads`` (python ints, checked by the
    caller; of the constant ``shape`` where known, ``Signature.block_shape``), using
    ``temp_storage`` (its type; None for a buffer of its own, laid out by
    ``exchange_layout``). The exchange synchronises as the module docstring says: it
    needs no barrier before or after it."""
    write_offset, keep, read_offset, within_warps = FORMS[form]
    layout = exchange_layout(dtype, threads, items_per_thread, time_slicing)
    check_static_shared(sig, temp_storage, layout, "items_per_thread",
                        f"makes a tile of {threads} x {items_per_thread} {dtype} items",
                        "pass warp_time_slicing=True (a buffer for one warp's items) or a temp_storage= array")
    scratch, users_buffer = storage(sig, temp_storage, layout, owner=(sig.primitive, form, time_slicing))
    block_rank = block_rank_of(shape)
    load = loader(dtype)
    slot = slot_of(items_per_thread)
    n = items_per_thread
    # between writing and reading: the threads reading what a thread wrote are its warp's
    # (warp-striped forms) or anyone's
    barrier = warp_barrier if within_warps else block_barrier

    if time_slicing and within_warps:
        local_write, local_read = WARP_LOCAL_OFFSETS[form]
        turns = warp_by_warp(threads, n, local_write, local_read, slot, load)

        def exchange(items, output, ranks, is_valid, temp_storage):
            turns(items, output, scratch(temp_storage), block_rank())

        return device_function(exchange)

    if time_slicing:
        slice_threads = min(threads, 32)
        through = specialised(exchange_time_sliced_through, load=load, n=n, threads=threads,
                              write_offset=write_offset, keep=keep, read_offset=read_offset, slot=slot,
                              barrier=barrier, slice_threads=slice_threads)

        def exchange(items, output, ranks, is_valid, temp_storage):
            buffer = scratch(temp_storage)
            index = block_rank()
            received = cuda.local.array(n, dtype)
            through(items, output, ranks, is_valid, buffer, index, warp_mask(index, threads), received)

        return device_function(exchange)

    # Before writing, the previous call's reads of the slots a thread writes must be
    # done. A buffer of its own is only used by calls of this specialisation, whose
    # readers are the writer's warp in the warp-striped forms; a caller's buffer may have
    # been read by any thread, for any primitive.
    lead_barrier = warp_barrier if within_warps and not users_buffer else block_barrier
    # (its constants bound: fewer parameters, and loops of constant length, to compile)
    through = specialised(exchange_through, load=load, region=0, n=n, threads=threads, write_offset=write_offset,
                          keep=keep, read_offset=read_offset, slot=slot, barrier=barrier)

    def exchange(items, output, ranks, is_valid, temp_storage):
        buffer = scratch(temp_storage)
        index = block_rank()
        mask = warp_mask(index, threads)
        lead_barrier(mask)
        through(items, output, ranks, is_valid, buffer, index, mask)

    return device_function(exchange)


# -- the public functions' generators -------------------------------------------------------


def _specialise(name, form, items, output, ranks, is_valid, threads, items_per_thread, warp_time_slicing,
                temp_storage):
    """``exchange(items, output, ranks, is_valid, temp_storage)`` for a public exchange's
    argument types (``ranks`` and ``is_valid`` None where the function takes none), the
    arrays' lengths checked."""
    sig = Signature(name)
    dtype = sig.items(items, "items")
    sig.output_items(output, "output", dtype)
    if ranks is not None:
        rank_items(sig, ranks)
    if is_valid is not None:
        flag_items(sig, is_valid)
    block = required_threads(sig, threads)
    n = required_items_per_thread(sig, items_per_thread)
    time_slicing = sig.constant_bool(warp_time_slicing, "warp_time_slicing")
    exchange = exchanger(sig, form, dtype, block, n, temp_storage, time_slicing, sig.block_shape(threads))
    check = exact_lengths(sig, n, ranks is not None, is_valid is not None)

    def checked_exchange(items, output, ranks, is_valid, temp_storage):
        check(items, output, ranks, is_valid)
        exchange(items, output, ranks, is_valid, temp_storage)

    return device_function(checked_exchange)


def _structured(name, form, items, output, threads, items_per_thread, warp_time_slicing, temp_storage):
    exchange = _specialise(
        name, form, items, output, None, None, threads, items_per_thread, warp_time_slicing, temp_storage
    )

    def impl(items, output, temp_storage):
        exchange(items, output, None, None, temp_storage)

    return impl


def _scatter(name, form, items, output, ranks, threads, items_per_thread, warp_time_slicing, temp_storage):
    exchange = _specialise(
        name, form, items, output, ranks, None, threads, items_per_thread, warp_time_slicing, temp_storage
    )

    def impl(items, output, ranks, temp_storage):
        exchange(items, output, ranks, None, temp_storage)

    return impl


def _scatter_flagged(name, form, items, output, ranks, is_valid, threads, items_per_thread, warp_time_slicing,
                     temp_storage):
    exchange = _specialise(
        name, form, items, output, ranks, is_valid, threads, items_per_thread, warp_time_slicing, temp_storage
    )

    def impl(items, output, ranks, is_valid, temp_storage):
        exchange(items, output, ranks, is_valid, temp_storage)

    return impl


def temp_storage_bytes(sig, value_type, threads, items_per_thread, warp_time_slicing=PRIMITIVE_DEFAULT):
    """Bytes a ``temp_storage=`` array needs for an exchange of ``dtype`` items,
    ``items_per_thread`` per thread, in blocks of ``threads``: size
    ``cuda.shared.array(BYTES, np.uint8, alignment=8)`` with it (or with the largest of
    several primitives', to share one array)."""
    threads = required_threads(sig, threads)
    n = required_items_per_thread(sig, items_per_thread)
    time_slicing = sig.constant_bool(warp_time_slicing, "warp_time_slicing")
    return exchange_layout(value_type, threads, n, time_slicing).nbytes


# -- the primitives --------------------------------------------------------------------------


@primitive("coop.block.exchange.striped_to_blocked", temp_storage_bytes, group="block")
def striped_to_blocked(items, output, threads=None, items_per_thread=None, warp_time_slicing=False,
                       temp_storage=None):
    """Transpose the block's items from striped to blocked arrangement
    (CUB BlockExchange::StripedToBlocked): where thread ``r``'s ``items`` held tile
    items ``r, T+r, 2T+r, ...``, its ``output`` gets items ``r*N .. r*N+N-1``
    (``T`` threads, ``N`` items per thread).

    Parameters
    ----------
    items : items array
        {exchange_items}
    output : items array
        {exchange_output}
    threads : int or tuple of int, compile-time constant
        {threads}
        {exchange_threads}
    items_per_thread : int, compile-time constant
        {exchange_items_per_thread}
    warp_time_slicing : bool, compile-time constant, default False
        {warp_time_slicing}
    temp_storage : shared array, optional
        {temp_storage}
        {temp_storage_size} The same for the eight block exchanges.

    Returns
    -------
    None
        ``output`` holds the thread's items in the new arrangement.

    Barriers
    --------
    {block_barriers}

    {block_exchange_barriers}

    Notes
    -----
    {collective}

    Example
    -------
    A striped (coalesced) load, then each thread writes its blocked items::

        import numpy as np
        import coop
        from numba import cuda

        THREADS, ITEMS = 64, 4

        @cuda.jit
        def copy_tiles(d_in, d_out):
            r, base = cuda.threadIdx.x, cuda.blockIdx.x * THREADS * ITEMS
            items = cuda.local.array(ITEMS, np.int32)
            for i in range(ITEMS):                  # a coalesced, striped load
                items[i] = d_in[base + i * THREADS + r]
            coop.block.exchange.striped_to_blocked(items, items, threads=THREADS, items_per_thread=ITEMS)
            for i in range(ITEMS):                  # thread r holds items r*4 .. r*4+3
                d_out[base + r * ITEMS + i] = items[i]

        x = np.arange(2 * THREADS * ITEMS, dtype=np.int32)
        out = np.zeros_like(x)
        copy_tiles[2, THREADS](x, out)
        assert (out == x).all()
    """
    return _structured(
        "coop.block.exchange.striped_to_blocked", "striped_to_blocked",
        items, output, threads, items_per_thread, warp_time_slicing, temp_storage,
    )


@primitive("coop.block.exchange.blocked_to_striped", temp_storage_bytes, group="block")
def blocked_to_striped(items, output, threads=None, items_per_thread=None, warp_time_slicing=False,
                       temp_storage=None):
    """Transpose the block's items from blocked to striped arrangement
    (CUB BlockExchange::BlockedToStriped): where thread ``r``'s ``items`` held tile
    items ``r*N .. r*N+N-1``, its ``output`` gets items ``r, T+r, 2T+r, ...``
    (``T`` threads, ``N`` items per thread).

    Parameters
    ----------
    items : items array
        {exchange_items}
    output : items array
        {exchange_output}
    threads : int or tuple of int, compile-time constant
        {threads}
        {exchange_threads}
    items_per_thread : int, compile-time constant
        {exchange_items_per_thread}
    warp_time_slicing : bool, compile-time constant, default False
        {warp_time_slicing}
    temp_storage : shared array, optional
        {temp_storage}
        {temp_storage_size} The same for the eight block exchanges.

    Returns
    -------
    None
        ``output`` holds the thread's items in the new arrangement.

    Barriers
    --------
    {block_barriers}

    {block_exchange_barriers}

    Notes
    -----
    {collective}

    Example
    -------
    A scan of each block's blocked tile, stored coalesced::

        import numpy as np
        import coop
        from numba import cuda

        THREADS, ITEMS = 64, 4

        @cuda.jit
        def scan_tiles(d_in, d_out):
            r, base = cuda.threadIdx.x, cuda.blockIdx.x * THREADS * ITEMS
            items = cuda.local.array(ITEMS, np.int32)
            for i in range(ITEMS):
                items[i] = d_in[base + r * ITEMS + i]
            coop.block.inclusive_sum(items, items)
            coop.block.exchange.blocked_to_striped(items, items, threads=THREADS, items_per_thread=ITEMS)
            for i in range(ITEMS):                  # a coalesced store
                d_out[base + i * THREADS + r] = items[i]

        x = np.random.default_rng(28).integers(-100, 100, 2 * THREADS * ITEMS).astype(np.int32)
        out = np.zeros_like(x)
        scan_tiles[2, THREADS](x, out)
        assert (out == np.cumsum(x.reshape(2, -1), axis=1).ravel()).all()
    """
    return _structured(
        "coop.block.exchange.blocked_to_striped", "blocked_to_striped",
        items, output, threads, items_per_thread, warp_time_slicing, temp_storage,
    )


@primitive("coop.block.exchange.warp_striped_to_blocked", temp_storage_bytes, group="block")
def warp_striped_to_blocked(items, output, threads=None, items_per_thread=None, warp_time_slicing=False,
                            temp_storage=None):
    """Transpose the block's items from warp-striped to blocked arrangement
    (CUB BlockExchange::WarpStripedToBlocked): where lane ``l`` of warp ``w`` held tile
    items ``32*w*N + l, 32*w*N + 32 + l, ...`` (stride ``L`` in a last warp of
    ``L < 32`` lanes, see the module docstring), thread ``r``'s ``output`` gets items
    ``r*N .. r*N+N-1`` (``N`` items per thread).

    Parameters
    ----------
    items : items array
        {exchange_items}
    output : items array
        {exchange_output}
    threads : int or tuple of int, compile-time constant
        {threads}
        {exchange_threads}
    items_per_thread : int, compile-time constant
        {exchange_items_per_thread}
    warp_time_slicing : bool, compile-time constant, default False
        {warp_time_slicing}
    temp_storage : shared array, optional
        {temp_storage}
        {temp_storage_size} The same for the eight block exchanges.

    Returns
    -------
    None
        ``output`` holds the thread's items in the new arrangement.

    Barriers
    --------
    {block_barriers}

    {block_warp_exchange_barriers}

    Notes
    -----
    {collective}

    Example
    -------
    A warp-striped (coalesced) load, then each thread writes its blocked items::

        import numpy as np
        import coop
        from numba import cuda

        THREADS, ITEMS = 64, 4

        @cuda.jit
        def copy_tiles(d_in, d_out):
            r, base = cuda.threadIdx.x, cuda.blockIdx.x * THREADS * ITEMS
            warp_base = base + (r // 32) * 32 * ITEMS
            items = cuda.local.array(ITEMS, np.float32)
            for i in range(ITEMS):                  # a coalesced, warp-striped load
                items[i] = d_in[warp_base + i * 32 + r % 32]
            coop.block.exchange.warp_striped_to_blocked(items, items, threads=THREADS, items_per_thread=ITEMS)
            for i in range(ITEMS):
                d_out[base + r * ITEMS + i] = items[i]

        x = np.arange(2 * THREADS * ITEMS, dtype=np.float32)
        out = np.zeros_like(x)
        copy_tiles[2, THREADS](x, out)
        assert (out == x).all()
    """
    return _structured(
        "coop.block.exchange.warp_striped_to_blocked", "warp_striped_to_blocked",
        items, output, threads, items_per_thread, warp_time_slicing, temp_storage,
    )


@primitive("coop.block.exchange.blocked_to_warp_striped", temp_storage_bytes, group="block")
def blocked_to_warp_striped(items, output, threads=None, items_per_thread=None, warp_time_slicing=False,
                            temp_storage=None):
    """Transpose the block's items from blocked to warp-striped arrangement
    (CUB BlockExchange::BlockedToWarpStriped): where thread ``r``'s ``items`` held tile
    items ``r*N .. r*N+N-1``, lane ``l`` of warp ``w`` gets in ``output`` items
    ``32*w*N + l, 32*w*N + 32 + l, ...`` (stride ``L`` in a last warp of ``L < 32``
    lanes, see the module docstring; ``N`` items per thread).

    Parameters
    ----------
    items : items array
        {exchange_items}
    output : items array
        {exchange_output}
    threads : int or tuple of int, compile-time constant
        {threads}
        {exchange_threads}
    items_per_thread : int, compile-time constant
        {exchange_items_per_thread}
    warp_time_slicing : bool, compile-time constant, default False
        {warp_time_slicing}
    temp_storage : shared array, optional
        {temp_storage}
        {temp_storage_size} The same for the eight block exchanges.

    Returns
    -------
    None
        ``output`` holds the thread's items in the new arrangement.

    Barriers
    --------
    {block_barriers}

    {block_warp_exchange_barriers}

    Notes
    -----
    {collective}

    Example
    -------
    Blocked items stored warp-striped (coalesced)::

        import numpy as np
        import coop
        from numba import cuda

        THREADS, ITEMS = 64, 4

        @cuda.jit
        def copy_tiles(d_in, d_out):
            r, base = cuda.threadIdx.x, cuda.blockIdx.x * THREADS * ITEMS
            items = cuda.local.array(ITEMS, np.float32)
            for i in range(ITEMS):
                items[i] = d_in[base + r * ITEMS + i]
            coop.block.exchange.blocked_to_warp_striped(items, items, threads=THREADS, items_per_thread=ITEMS)
            warp_base = base + (r // 32) * 32 * ITEMS
            for i in range(ITEMS):                  # a coalesced, warp-striped store
                d_out[warp_base + i * 32 + r % 32] = items[i]

        x = np.arange(2 * THREADS * ITEMS, dtype=np.float32)
        out = np.zeros_like(x)
        copy_tiles[2, THREADS](x, out)
        assert (out == x).all()
    """
    return _structured(
        "coop.block.exchange.blocked_to_warp_striped", "blocked_to_warp_striped",
        items, output, threads, items_per_thread, warp_time_slicing, temp_storage,
    )


@primitive("coop.block.exchange.scatter_to_blocked", temp_storage_bytes, group="block")
def scatter_to_blocked(items, output, ranks, threads=None, items_per_thread=None, warp_time_slicing=False,
                       temp_storage=None):
    """Scatter ranked items to blocked arrangement (CUB BlockExchange::ScatterToBlocked):
    item ``i`` of every thread goes to tile position ``ranks[i]``, and thread ``r``'s
    ``output`` gets tile items ``r*N .. r*N+N-1`` (``N`` items per thread).

    Parameters
    ----------
    items : items array
        {exchange_items}
    output : items array
        {exchange_output}
    ranks : items array of integers
        {ranks}
        The block's ranks must be a permutation of ``0 .. T*N-1`` (``T`` threads): a
        rank outside the tile writes outside the shared buffer (see
        ``scatter_to_striped_guarded``).
    threads : int or tuple of int, compile-time constant
        {threads}
        {exchange_threads}
    items_per_thread : int, compile-time constant
        {exchange_items_per_thread}
    warp_time_slicing : bool, compile-time constant, default False
        {warp_time_slicing}
    temp_storage : shared array, optional
        {temp_storage}
        {temp_storage_size} The same for the eight block exchanges.

    Returns
    -------
    None
        ``output`` holds the thread's items in the new arrangement.

    Barriers
    --------
    {block_barriers}

    {block_exchange_barriers}

    Notes
    -----
    {collective}

    Example
    -------
    Each block's tile reversed::

        import numpy as np
        import coop
        from numba import cuda

        THREADS, ITEMS = 64, 4

        @cuda.jit
        def reverse_tiles(d_in, d_out):
            r, base = cuda.threadIdx.x, cuda.blockIdx.x * THREADS * ITEMS
            items = cuda.local.array(ITEMS, np.int64)
            ranks = cuda.local.array(ITEMS, np.int32)
            for i in range(ITEMS):
                items[i] = d_in[base + r * ITEMS + i]
                ranks[i] = THREADS * ITEMS - 1 - (r * ITEMS + i)
            coop.block.exchange.scatter_to_blocked(items, items, ranks, threads=THREADS, items_per_thread=ITEMS)
            for i in range(ITEMS):
                d_out[base + r * ITEMS + i] = items[i]

        x = np.arange(2 * THREADS * ITEMS, dtype=np.int64)
        out = np.zeros_like(x)
        reverse_tiles[2, THREADS](x, out)
        assert (out.reshape(2, -1) == x.reshape(2, -1)[:, ::-1]).all()
    """
    return _scatter(
        "coop.block.exchange.scatter_to_blocked", "scatter_to_blocked",
        items, output, ranks, threads, items_per_thread, warp_time_slicing, temp_storage,
    )


@primitive("coop.block.exchange.scatter_to_striped", temp_storage_bytes, group="block")
def scatter_to_striped(items, output, ranks, threads=None, items_per_thread=None, warp_time_slicing=False,
                       temp_storage=None):
    """Scatter ranked items to striped arrangement (CUB BlockExchange::ScatterToStriped):
    item ``i`` of every thread goes to tile position ``ranks[i]``, and thread ``r``'s
    ``output`` gets tile items ``r, T+r, 2T+r, ...`` (``T`` threads).

    Parameters
    ----------
    items : items array
        {exchange_items}
    output : items array
        {exchange_output}
    ranks : items array of integers
        {ranks}
        The block's ranks must be a permutation of ``0 .. T*N-1`` (``N`` items per
        thread): a rank outside the tile writes outside the shared buffer (see
        ``scatter_to_striped_guarded``).
    threads : int or tuple of int, compile-time constant
        {threads}
        {exchange_threads}
    items_per_thread : int, compile-time constant
        {exchange_items_per_thread}
    warp_time_slicing : bool, compile-time constant, default False
        {warp_time_slicing}
    temp_storage : shared array, optional
        {temp_storage}
        {temp_storage_size} The same for the eight block exchanges.

    Returns
    -------
    None
        ``output`` holds the thread's items in the new arrangement.

    Barriers
    --------
    {block_barriers}

    {block_exchange_barriers}

    Notes
    -----
    {collective}

    Example
    -------
    Each block's tile reversed, and stored coalesced::

        import numpy as np
        import coop
        from numba import cuda

        THREADS, ITEMS = 64, 4

        @cuda.jit
        def reverse_tiles(d_in, d_out):
            r, base = cuda.threadIdx.x, cuda.blockIdx.x * THREADS * ITEMS
            items = cuda.local.array(ITEMS, np.int64)
            ranks = cuda.local.array(ITEMS, np.int32)
            for i in range(ITEMS):
                items[i] = d_in[base + r * ITEMS + i]
                ranks[i] = THREADS * ITEMS - 1 - (r * ITEMS + i)
            coop.block.exchange.scatter_to_striped(items, items, ranks, threads=THREADS, items_per_thread=ITEMS)
            for i in range(ITEMS):                  # a coalesced store
                d_out[base + i * THREADS + r] = items[i]

        x = np.arange(2 * THREADS * ITEMS, dtype=np.int64)
        out = np.zeros_like(x)
        reverse_tiles[2, THREADS](x, out)
        assert (out.reshape(2, -1) == x.reshape(2, -1)[:, ::-1]).all()
    """
    return _scatter(
        "coop.block.exchange.scatter_to_striped", "scatter_to_striped",
        items, output, ranks, threads, items_per_thread, warp_time_slicing, temp_storage,
    )


@primitive("coop.block.exchange.scatter_to_striped_guarded", temp_storage_bytes, group="block")
def scatter_to_striped_guarded(items, output, ranks, threads=None, items_per_thread=None,
                               warp_time_slicing=False, temp_storage=None):
    """Scatter ranked items to striped arrangement, dropping the items whose rank is
    outside the tile (CUB BlockExchange::ScatterToStripedGuarded): as
    ``scatter_to_striped``, but an item with a negative rank (as in CUB) or a rank of
    ``threads * items_per_thread`` or more (which CUB would write out of bounds) is not
    written.

    Parameters
    ----------
    items : items array
        {exchange_items}
    output : items array
        {exchange_output}
    ranks : items array of integers
        {ranks}
        Ranks inside the tile must be distinct; those outside it drop their item.
    threads : int or tuple of int, compile-time constant
        {threads}
        {exchange_threads}
    items_per_thread : int, compile-time constant
        {exchange_items_per_thread}
    warp_time_slicing : bool, compile-time constant, default False
        {warp_time_slicing}
    temp_storage : shared array, optional
        {temp_storage}
        {temp_storage_size} The same for the eight block exchanges.

    Returns
    -------
    None
        ``output`` holds the thread's items in the new arrangement; those at tile
        positions that received no item are unspecified.

    Barriers
    --------
    {block_barriers}

    {block_exchange_barriers}

    Notes
    -----
    {collective}

    Example
    -------
    Stream compaction: each block's positive items, in order, to the front of its tile
    of ``out`` (the others get rank -1)::

        import numpy as np
        import coop
        from numba import cuda

        THREADS, ITEMS = 64, 4

        @cuda.jit
        def compact(d_in, d_out, counts):
            r, base = cuda.threadIdx.x, cuda.blockIdx.x * THREADS * ITEMS
            items = cuda.local.array(ITEMS, np.int32)
            ranks = cuda.local.array(ITEMS, np.int32)
            for i in range(ITEMS):
                items[i] = d_in[base + r * ITEMS + i]
                ranks[i] = 1 if items[i] > 0 else 0
            kept = coop.block.exclusive_sum(ranks, ranks)
            for i in range(ITEMS):
                if items[i] <= 0:
                    ranks[i] = -1
            coop.block.exchange.scatter_to_striped_guarded(
                items, items, ranks, threads=THREADS, items_per_thread=ITEMS
            )
            for i in range(ITEMS):
                if i * THREADS + r < kept:
                    d_out[base + i * THREADS + r] = items[i]
            if r == 0:
                counts[cuda.blockIdx.x] = kept

        x = np.random.default_rng(29).integers(-100, 100, 2 * THREADS * ITEMS).astype(np.int32)
        out, counts = np.zeros_like(x), np.zeros(2, np.int32)
        compact[2, THREADS](x, out, counts)
        for b, tile in enumerate(x.reshape(2, -1)):
            kept = tile[tile > 0]
            start = b * THREADS * ITEMS
            assert counts[b] == len(kept) and (out[start : start + len(kept)] == kept).all()
    """
    return _scatter(
        "coop.block.exchange.scatter_to_striped_guarded", "scatter_to_striped_guarded",
        items, output, ranks, threads, items_per_thread, warp_time_slicing, temp_storage,
    )


@primitive("coop.block.exchange.scatter_to_striped_flagged", temp_storage_bytes, group="block")
def scatter_to_striped_flagged(items, output, ranks, is_valid, threads=None, items_per_thread=None,
                               warp_time_slicing=False, temp_storage=None):
    """Scatter the flagged items to striped arrangement (CUB
    BlockExchange::ScatterToStripedFlagged): as ``scatter_to_striped``, but only the
    items whose ``is_valid`` flag is set are written.

    Parameters
    ----------
    items : items array
        {exchange_items}
    output : items array
        {exchange_output}
    ranks : items array of integers
        {ranks}
        The ranks of valid items must be distinct positions of the tile; the others
        are not used.
    is_valid : items array of bools
        Bools (or integers, nonzero meaning set), exactly ``items_per_thread`` long:
        item ``i`` is written only if ``is_valid[i]``.
    threads : int or tuple of int, compile-time constant
        {threads}
        {exchange_threads}
    items_per_thread : int, compile-time constant
        {exchange_items_per_thread}
    warp_time_slicing : bool, compile-time constant, default False
        {warp_time_slicing}
    temp_storage : shared array, optional
        {temp_storage}
        {temp_storage_size} The same for the eight block exchanges.

    Returns
    -------
    None
        ``output`` holds the thread's items in the new arrangement; those at tile
        positions that received no item are unspecified.

    Barriers
    --------
    {block_barriers}

    {block_exchange_barriers}

    Notes
    -----
    {collective}

    Example
    -------
    Stream compaction: each block's positive items, in order, to the front of its tile
    of ``out``::

        import numpy as np
        import coop
        from numba import cuda

        THREADS, ITEMS = 64, 4

        @cuda.jit
        def compact(d_in, d_out, counts):
            r, base = cuda.threadIdx.x, cuda.blockIdx.x * THREADS * ITEMS
            items = cuda.local.array(ITEMS, np.int32)
            ranks = cuda.local.array(ITEMS, np.int32)
            valid = cuda.local.array(ITEMS, np.bool_)
            for i in range(ITEMS):
                items[i] = d_in[base + r * ITEMS + i]
                valid[i] = items[i] > 0
                ranks[i] = 1 if valid[i] else 0
            kept = coop.block.exclusive_sum(ranks, ranks)
            coop.block.exchange.scatter_to_striped_flagged(
                items, items, ranks, valid, threads=THREADS, items_per_thread=ITEMS
            )
            for i in range(ITEMS):
                if i * THREADS + r < kept:
                    d_out[base + i * THREADS + r] = items[i]
            if r == 0:
                counts[cuda.blockIdx.x] = kept

        x = np.random.default_rng(30).integers(-100, 100, 2 * THREADS * ITEMS).astype(np.int32)
        out, counts = np.zeros_like(x), np.zeros(2, np.int32)
        compact[2, THREADS](x, out, counts)
        for b, tile in enumerate(x.reshape(2, -1)):
            kept = tile[tile > 0]
            start = b * THREADS * ITEMS
            assert counts[b] == len(kept) and (out[start : start + len(kept)] == kept).all()
    """
    return _scatter_flagged(
        "coop.block.exchange.scatter_to_striped_flagged", "scatter_to_striped_flagged",
        items, output, ranks, is_valid, threads, items_per_thread, warp_time_slicing, temp_storage,
    )

public_namespace(__name__)
