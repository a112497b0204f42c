"""Discontinuities in a block's tile (CUB's BlockDiscontinuity): flags of the items that
start a run (heads) or end one (tails), by a comparison of each item with its neighbour.

A block of ``T`` threads holds ``T*N`` items, ``N`` per thread, blocked (item ``i`` of
thread ``r`` is tile item ``r*N + i``); the items are an items array, or a tuple of
items arrays of one length (a tile of tuples, item ``i`` being the tuple of the
members' items ``i``). ``flag_op(a, b)`` says whether ``b``, the item after ``a``, is
discontinuous with it (``operator.ne`` flags every change); ``flag_op(a, b, b_index)``
also gets ``b``'s position in the tile. A head flag at item ``i`` is ``flag_op(item
i-1, item i)``, a tail flag ``flag_op(item i, item i+1)``; the tile's first item is a
head and its last a tail, unless ``tile_predecessor`` / ``tile_successor`` (the items
before and after the tile, say from the neighbouring tiles of an input) are given to
compare them with. With ``valid_items`` (coop's; CUB has no partial tile here), the
tile ends at item ``valid_items - 1`` and the flags past it are 0.

Flags are written as 1 or 0 (True or False) to items arrays of any number type or
bool. Each thread's first and last items go through shared memory (one value per
thread each, ``coop.block.shuffle.edge_exchanger``): ``temp_storage_bytes(dtype,
threads)``, with ``dtype`` a tuple of dtypes for a tile of tuples.
"""

import functools

from numba.cuda import types

from coop._core.backend import device_function
from coop._core.constants import without_dead_branches
from coop._core.items import TileItems
from coop._core.misuse import size_check
from coop._core.scratch import block_rank_of, storage, thread_count
from coop._core.specialize import Signature, is_none, primitive
from coop._core.values import converter, is_numeric_scalar
from coop.block.shuffle import edge_exchanger, edge_layout

__all__ = ["flag_heads", "flag_tails", "flag_heads_and_tails"]

# what other families compose (the building-block tier: tests/test_layering.py)
BUILDING_BLOCKS = ["neighbour"]


def _temp_storage_bytes(heads, tails):
    def temp_storage_bytes(sig, value_type, threads):
        """Bytes a ``temp_storage=`` array needs for flags of ``dtype`` items (a tuple of
        dtypes for a tile of tuples) in blocks of ``threads``."""
        block = sig.block_threads(threads)
        if block is None:
            raise sig.error("threads", "is required to size temp_storage")
        return edge_layout(value_type, block, heads, tails).nbytes

    return temp_storage_bytes


def flag_array(sig, flags, param):
    """Check an items array of flags: numbers or bools, writable."""
    sig.writable(flags, param)
    flag_type = sig.items(flags, param)
    if not (isinstance(flag_type, types.Boolean) or is_numeric_scalar(flag_type)) or isinstance(
        flag_type, types.Complex
    ):
        raise sig.error(param, f"must be an items array of integers, floats or bools, got {flag_type}")


def neighbour(sig, item, param, value_type):
    """Check an optional tile predecessor or successor: one value convertible to the items'
    type. Returns whether it was given."""
    if is_none(item):
        return False
    sig.single_value(item, param, value_type)
    return True


@functools.lru_cache(maxsize=None)
def _flagger(value_type, read, length, apply, block, heads, tails, with_predecessor, with_successor, partial,
             shape):
    """``flag(items, head_flags, tail_flags, flag_op, tile_predecessor, tile_successor,
    valid_items, buffer)``: the head and/or tail flags of the thread's items (``shape``:
    the block's constant shape, ``Signature.block_shape``, or None)."""
    layout, exchange = edge_exchanger(value_type, block, heads, tails)
    count_threads = thread_count(block)
    block_rank = block_rank_of(shape)
    as_item = converter(value_type)

    def flag(items, head_flags, tail_flags, flag_op, tile_predecessor, tile_successor, valid_items, buffer):
        n = length(items)
        rank = block_rank()
        first = read(items, 0)
        last = read(items, n - 1)
        before, after = exchange(buffer, rank, first, last)
        base = rank * n
        if partial:  # (valid_items past the tile: the whole tile, its last item the tile's last)
            end = min(valid_items, count_threads() * n)
        else:
            end = count_threads() * n
        if heads:
            for i in range(n):
                position = base + i
                if partial and position >= end:
                    head_flags[i] = False
                elif i > 0:
                    head_flags[i] = apply(flag_op, read(items, i - 1), read(items, i), position)
                elif rank > 0:
                    head_flags[i] = apply(flag_op, before, first, position)
                elif with_predecessor:
                    head_flags[i] = apply(flag_op, as_item(tile_predecessor), first, position)
                else:
                    head_flags[i] = True
        if tails:
            for i in range(n):
                position = base + i
                if partial and position >= end:
                    tail_flags[i] = False
                elif position == end - 1:
                    if with_successor:
                        tail_flags[i] = apply(flag_op, read(items, i), as_item(tile_successor), position + 1)
                    else:
                        tail_flags[i] = True
                elif i < n - 1:
                    tail_flags[i] = apply(flag_op, read(items, i), read(items, i + 1), position + 1)
                else:
                    tail_flags[i] = apply(flag_op, last, after, position + 1)

    return layout, device_function(without_dead_branches(flag))


def _specialise(sig, items, head_flags, tail_flags, flag_op, tile_predecessor, tile_successor, threads,
                valid_items, temp_storage):
    """What the three primitives share: ``impl_body(items, head_flags, tail_flags,
    flag_op, tile_predecessor, tile_successor, valid_items, temp_storage)``."""
    heads, tails = head_flags is not None, tail_flags is not None
    tile = TileItems(sig, items, "items")
    for flags, param in ((head_flags, "head_flags" if tails else "flags"), (tail_flags, "tail_flags" if heads else "flags")):
        if flags is not None:
            flag_array(sig, flags, param)
    apply = sig.operator_with_index(flag_op, tile.value_type, "flag_op", types.boolean, "b_index")
    with_predecessor = heads and neighbour(sig, tile_predecessor, "tile_predecessor", tile.value_type)
    with_successor = tails and neighbour(sig, tile_successor, "tile_successor", tile.value_type)
    partial = sig.run_time_int(valid_items, "valid_items") is not None
    block = sig.block_threads(threads)
    layout, flag = _flagger(tile.value_type, tile.read, tile.length, apply, block, heads, tails, with_predecessor,
                            with_successor, partial, sig.block_shape(threads))
    scratch, _ = storage(sig, temp_storage, layout, owner=(sig.primitive,))
    check_items = tile.checker(sig.primitive, "items")
    check_heads = size_check(sig.primitive, "head_flags" if tails else "flags")
    check_tails = size_check(sig.primitive, "tail_flags" if heads else "flags")

    def body(items, head_flags, tail_flags, flag_op, tile_predecessor, tile_successor, valid_items, temp_storage):
        n = check_items(items)
        if heads:
            check_heads(head_flags, n)
        if tails:
            check_tails(tail_flags, n)
        flag(items, head_flags, tail_flags, flag_op, tile_predecessor, tile_successor, valid_items,
             scratch(temp_storage))

    return device_function(without_dead_branches(body))


_PRIMITIVE_OPTIONS = dict(group="block", uniform=("valid_items",))


@primitive("coop.block.flag_heads", _temp_storage_bytes(True, False), **_PRIMITIVE_OPTIONS)
def flag_heads(items, flags, flag_op, tile_predecessor=None, threads=None, valid_items=None, temp_storage=None):
    """Flag the items of a block's tile that start a run (CUB
    BlockDiscontinuity::FlagHeads): ``flags[i] = flag_op(item before, item i)``.

    Parameters
    ----------
    items : items array or tuple of items arrays
        {edge_items}
    flags : items array
        Receives the thread's ``N`` head flags, 1 or 0 (True or False): numbers or
        bools, at least ``N`` long.
    flag_op : operator
        ``flag_op(a, b)`` or ``flag_op(a, b, b_index)``: whether ``b``, the item after
        ``a`` (at tile position ``b_index``), starts a new run. A lambda, a
        ``@cuda.jit(device=True)`` function, or ``operator.ne``.
    tile_predecessor : value, optional
        The item before the tile: the tile's first item is flagged
        ``flag_op(tile_predecessor, item 0, 0)``. Default: it is always a head (1).
    threads : int or tuple, compile-time constant, optional
        {threads}
        {shuffle_threads}
    valid_items : int, optional
        A partial tile (the same in every thread): only the first ``valid_items`` tile
        items are compared; flags past them are 0. The tile size or more means the
        whole tile.
        {blocked_positions}
    temp_storage : shared array, optional
        {temp_storage}
        {temp_storage_size}

    Returns
    -------
    None
        Every thread gets the flags of its items.

    Barriers
    --------
    {block_barriers}

    {edge_barriers}

    Notes
    -----
    {collective}

    Example
    -------
    Where each run of equal items starts, and the run lengths from the flags::

        import numpy as np
        import coop
        import operator
        from numba import cuda

        THREADS, ITEMS = 32, 4

        @cuda.jit
        def heads(x, out):
            items = cuda.local.array(ITEMS, np.int32)
            flags = cuda.local.array(ITEMS, np.uint8)
            for i in range(ITEMS):
                items[i] = x[cuda.threadIdx.x * ITEMS + i]
            coop.block.flag_heads(items, flags, operator.ne, threads=THREADS)
            for i in range(ITEMS):
                out[cuda.threadIdx.x * ITEMS + i] = flags[i]

        x = np.repeat(np.arange(60, dtype=np.int32), np.arange(60) % 5 + 1)[: THREADS * ITEMS]
        out = np.zeros(x.size, np.uint8)
        heads[1, THREADS](x, out)
        expected = np.concatenate(([1], x[1:] != x[:-1]))
        assert (out == expected).all()
    """
    sig = Signature("coop.block.flag_heads")
    body = _specialise(sig, items, flags, None, flag_op, tile_predecessor, None, threads, valid_items,
                       temp_storage)

    def impl(items, flags, flag_op, tile_predecessor, valid_items, temp_storage):
        body(items, flags, flags, flag_op, tile_predecessor, tile_predecessor, valid_items, temp_storage)

    return impl


@primitive("coop.block.flag_tails", _temp_storage_bytes(False, True), **_PRIMITIVE_OPTIONS)
def flag_tails(items, flags, flag_op, tile_successor=None, threads=None, valid_items=None, temp_storage=None):
    """Flag the items of a block's tile that end a run (CUB
    BlockDiscontinuity::FlagTails): ``flags[i] = flag_op(item i, item after)``.

    Parameters
    ----------
    items : items array or tuple of items arrays
        {edge_items}
    flags : items array
        Receives the thread's ``N`` tail flags, 1 or 0 (True or False): numbers or
        bools, at least ``N`` long.
    flag_op : operator
        ``flag_op(a, b)`` or ``flag_op(a, b, b_index)``: whether ``a`` ends a run, ``b``
        being the item after it (at tile position ``b_index``).
    tile_successor : value, optional
        The item after the tile: the tile's last item is flagged
        ``flag_op(last item, tile_successor, T*N)``. Default: it is always a tail (1).
    threads : int or tuple, compile-time constant, optional
        {threads}
        {shuffle_threads}
    valid_items : int, optional
        A partial tile (the same in every thread): the tile ends at item ``valid_items
        - 1`` (a tail, or compared with ``tile_successor``); flags past it are 0. The
        tile size or more means the whole tile.
        {blocked_positions}
    temp_storage : shared array, optional
        {temp_storage}
        {temp_storage_size}

    Returns
    -------
    None
        Every thread gets the flags of its items.

    Barriers
    --------
    {block_barriers}

    {edge_barriers}

    Notes
    -----
    {collective}

    Example
    -------
    The last item of each run of a partial tile of (key, value) pairs, by key only::

        import numpy as np
        import coop
        from numba import cuda

        THREADS, ITEMS, VALID = 64, 2, 100

        @cuda.jit
        def tails(keys, values, out):
            k = cuda.local.array(ITEMS, np.int16)
            v = cuda.local.array(ITEMS, np.float32)
            flags = cuda.local.array(ITEMS, np.bool_)
            for i in range(ITEMS):
                k[i] = keys[cuda.threadIdx.x * ITEMS + i]
                v[i] = values[cuda.threadIdx.x * ITEMS + i]
            coop.block.flag_tails((k, v), flags, lambda a, b: a[0] != b[0], threads=THREADS,
                                  valid_items=VALID)
            for i in range(ITEMS):
                out[cuda.threadIdx.x * ITEMS + i] = flags[i]

        keys = (np.arange(128) // 3).astype(np.int16)
        values = np.arange(128, dtype=np.float32)
        out = np.zeros(128, np.bool_)
        tails[1, THREADS](keys, values, out)
        expected = np.zeros(128, np.bool_)
        expected[:VALID] = np.concatenate((keys[: VALID - 1] != keys[1:VALID], [True]))
        assert (out == expected).all()
    """
    sig = Signature("coop.block.flag_tails")
    body = _specialise(sig, items, None, flags, flag_op, None, tile_successor, threads, valid_items, temp_storage)

    def impl(items, flags, flag_op, tile_successor, valid_items, temp_storage):
        body(items, flags, flags, flag_op, tile_successor, tile_successor, valid_items, temp_storage)

    return impl


@primitive("coop.block.flag_heads_and_tails", _temp_storage_bytes(True, True), **_PRIMITIVE_OPTIONS)
def flag_heads_and_tails(items, head_flags, tail_flags, flag_op, tile_predecessor=None, tile_successor=None,
                         threads=None, valid_items=None, temp_storage=None):
    """Flag the heads and the tails of the runs of a block's tile in one exchange (CUB
    BlockDiscontinuity::FlagHeadsAndTails).

    Parameters
    ----------
    items : items array or tuple of items arrays
        {edge_items}
    head_flags, tail_flags : items arrays
        Receive the thread's head and tail flags (as ``flag_heads`` and ``flag_tails``
        give them): numbers or bools, at least ``N`` long.
    flag_op : operator
        ``flag_op(a, b)`` or ``flag_op(a, b, b_index)``: whether ``a`` and ``b``, the
        item after it (at tile position ``b_index``), are in different runs.
    tile_predecessor, tile_successor : values, optional
        The items before and after the tile (see ``flag_heads`` and ``flag_tails``).
    threads : int or tuple, compile-time constant, optional
        {threads}
        {shuffle_threads}
    valid_items : int, optional
        A partial tile (the same in every thread): the tile ends at item ``valid_items
        - 1``; flags past it are 0. The tile size or more means the whole tile.
        {blocked_positions}
    temp_storage : shared array, optional
        {temp_storage}
        {temp_storage_size}

    Returns
    -------
    None
        Every thread gets the flags of its items.

    Barriers
    --------
    {block_barriers}

    {edge_barriers}

    Notes
    -----
    {collective}

    Example
    -------
    Runs of a sorted tile continuing from the previous tile's last item (7) into the
    next tile's first (12)::

        import numpy as np
        import coop
        import operator
        from numba import cuda

        THREADS, ITEMS = 32, 3

        @cuda.jit
        def runs(x, heads, tails):
            items = cuda.local.array(ITEMS, np.int64)
            h = cuda.local.array(ITEMS, np.int32)
            t = cuda.local.array(ITEMS, np.int32)
            for i in range(ITEMS):
                items[i] = x[cuda.threadIdx.x * ITEMS + i]
            coop.block.flag_heads_and_tails(items, h, t, operator.ne, tile_predecessor=7,
                                            tile_successor=12, threads=THREADS)
            for i in range(ITEMS):
                heads[cuda.threadIdx.x * ITEMS + i] = h[i]
                tails[cuda.threadIdx.x * ITEMS + i] = t[i]

        x = np.sort(np.random.default_rng(0).integers(7, 12, 96))
        heads, tails = np.zeros(96, np.int32), np.zeros(96, np.int32)
        runs[1, THREADS](x, heads, tails)
        assert (heads == (x != np.concatenate(([7], x[:-1])))).all()
        assert (tails == (x != np.concatenate((x[1:], [12])))).all()
    """
    sig = Signature("coop.block.flag_heads_and_tails")
    body = _specialise(sig, items, head_flags, tail_flags, flag_op, tile_predecessor, tile_successor, threads,
                       valid_items, temp_storage)

    def impl(items, head_flags, tail_flags, flag_op, tile_predecessor, tile_successor, valid_items, temp_storage):
        body(items, head_flags, tail_flags, flag_op, tile_predecessor, tile_successor, valid_items, temp_storage)

    return impl
