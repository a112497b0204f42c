"""Differences of adjacent items in a block's tile (CUB's BlockAdjacentDifference).

A block of ``T`` threads holds ``T*N`` items, ``N`` per thread, blocked (item ``i`` of
thread ``r`` is tile item ``r*N + i``); the items are an items array, or a tuple of
items arrays of one length (a tile of tuples). ``subtract_left`` gives each item
``op(item, item before)``, ``subtract_right`` ``op(item, item after)``; an item without
that neighbour (the tile's first, resp. last, unless ``tile_predecessor`` /
``tile_successor`` is given, and the items of a partial tile past ``valid_items``) is
copied as it is. ``op`` defaults to subtraction (``operator.sub``; float16 computed
through float32). The output may be the items themselves, or items of another type that
the results convert to (differences of uint8 items into int16, say).

Each thread's first or last item goes through shared memory (one value per thread,
``coop.block.shuffle.edge_exchanger``): ``temp_storage_bytes(dtype, threads)``.
"""

import functools

from coop._core.arithmetic import difference
from coop._core.backend import device_function
from coop._core.constants import without_dead_branches
from coop._core.items import TileItems
from coop._core.scratch import block_rank_of, storage, thread_count
from coop._core.specialize import Signature, apply_binary, is_none, primitive
from coop._core.values import convertible, converter, is_numeric_scalar
from coop.block.discontinuity import neighbour
from coop.block.shuffle import edge_exchanger, edge_layout

__all__ = ["subtract_left", "subtract_right"]


def _temp_storage_bytes(left):
    def temp_storage_bytes(sig, value_type, threads):
        """Bytes a ``temp_storage=`` array needs for differences of ``dtype`` items in
        blocks of ``threads``."""
        block = sig.block_threads(threads)
        if block is None:
            raise sig.error("threads", "is required to size temp_storage")
        return edge_layout(value_type, block, left, not left).nbytes

    return temp_storage_bytes


@functools.lru_cache(maxsize=None)
def _differencer(value_type, output_type, tile, out, apply, block, left, with_neighbour, partial, shape):
    """``differences(items, output, op, neighbour, valid_items, buffer)`` (``shape``: the
    block's constant shape, ``Signature.block_shape``, or None)."""
    layout, exchange = edge_exchanger(value_type, block, left, not left)
    count_threads = thread_count(block)
    block_rank = block_rank_of(shape)
    read, write, length = tile.read, out.write, tile.length
    as_item, as_output = converter(value_type), converter(output_type)

    def differences(items, output, op, tile_neighbour, valid_items, buffer):
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
        if left:
            for i in range(n - 1, -1, -1):  # from the top: output may be items
                position = base + i
                item = read(items, i)
                if partial and position >= end:
                    write(output, i, as_output(item))
                elif i > 0:
                    write(output, i, as_output(apply(op, item, read(items, i - 1), position)))
                elif rank > 0:
                    write(output, i, as_output(apply(op, item, before, position)))
                elif with_neighbour:
                    write(output, i, as_output(apply(op, item, as_item(tile_neighbour), position)))
                else:
                    write(output, i, as_output(item))
        else:
            for i in range(n):  # from the bottom: output may be items
                position = base + i
                item = read(items, i)
                if partial and position >= end:
                    write(output, i, as_output(item))
                elif position == end - 1:
                    if with_neighbour:
                        write(output, i, as_output(apply(op, item, as_item(tile_neighbour), position)))
                    else:
                        write(output, i, as_output(item))
                elif i < n - 1:
                    write(output, i, as_output(apply(op, item, read(items, i + 1), position)))
                else:
                    write(output, i, as_output(apply(op, item, after, position)))

    return layout, device_function(without_dead_branches(differences))


def _specialise(sig, items, output, op, tile_neighbour, threads, valid_items, temp_storage, left):
    """``body(items, output, op, tile_neighbour, valid_items, temp_storage)``."""
    tile = TileItems(sig, items, "items")
    out = TileItems(sig, output, "output")
    for member in (output.types if out.is_tuple else (output,)):
        sig.writable(member, "output")
    if out.is_tuple != tile.is_tuple or out.members != tile.members or not convertible(tile.value_type, out.value_type):
        raise sig.error("output", f"must hold items that {tile.value_type} items convert to, got {output}")
    neighbour_param = "tile_predecessor" if left else "tile_successor"
    with_neighbour = neighbour(sig, tile_neighbour, neighbour_param, tile.value_type)
    if is_none(op):
        if not is_numeric_scalar(tile.value_type):
            raise sig.error("op", f"is required for {tile.value_type} items: the default subtracts numbers")
        op, apply = difference, apply_binary
    else:
        apply = sig.operator_with_index(op, tile.value_type, "op", out.value_type, "index")
    partial = sig.run_time_int(valid_items, "valid_items") is not None
    block = sig.block_threads(threads)
    layout, differences = _differencer(tile.value_type, out.value_type, tile, out, apply, block, left,
                                       with_neighbour, partial, sig.block_shape(threads))
    scratch, _ = storage(sig, temp_storage, layout, owner=(sig.primitive,))
    check_items = tile.checker(sig.primitive, "items")
    check_output = out.size_checker(sig.primitive, "output")
    default_op = op is difference

    def body(items, output, op, tile_neighbour, valid_items, temp_storage):
        n = check_items(items)
        check_output(output, n)
        if default_op:
            differences(items, output, difference, tile_neighbour, valid_items, scratch(temp_storage))
        else:
            differences(items, output, op, tile_neighbour, valid_items, scratch(temp_storage))

    return device_function(without_dead_branches(body))


_PRIMITIVE_OPTIONS = dict(group="block", uniform=("valid_items",))


@primitive("coop.block.subtract_left", _temp_storage_bytes(True), **_PRIMITIVE_OPTIONS)
def subtract_left(items, output, op=None, tile_predecessor=None, threads=None, valid_items=None, temp_storage=None):
    """Each item of a block's tile minus the item before it (CUB
    BlockAdjacentDifference::SubtractLeft, SubtractLeftPartialTile):
    ``output[i] = op(item i, item i-1)``.

    Parameters
    ----------
    items : items array or tuple of items arrays
        {edge_items}
    output : items array or tuple of items arrays
        Receives the thread's ``N`` results: the same form as ``items``, of a type the
        items and ``op``'s results convert to; it may be ``items`` (in place).
    op : operator, optional
        ``op(item, before)`` or ``op(item, before, index)`` (``index``: ``item``'s tile
        position). Default: ``item - before`` (``operator.sub``).
    tile_predecessor : value, optional
        The item before the tile: the tile's first item becomes ``op(item 0,
        tile_predecessor)``. Default: it is copied.
    threads : int or tuple, compile-time constant, optional
        {threads}
        {shuffle_threads}
    valid_items : int, optional
        A partial tile (the same in every thread, CUB's SubtractLeftPartialTile): items
        at tile positions ``valid_items`` and after are copied. The tile size or more
        means the whole tile.
        {blocked_positions}
    temp_storage : shared array, optional
        {temp_storage}
        {temp_storage_size}

    Returns
    -------
    None
        Every thread gets its results in ``output``.

    Barriers
    --------
    {block_barriers}

    {edge_barriers}

    Notes
    -----
    {collective}

    Example
    -------
    Differences of a tile of prefix sums give the summands back (``np.diff``), the tile's
    first item taken relative to the previous tile's last::

        import numpy as np
        import coop
        from numba import cuda

        THREADS, ITEMS = 64, 4

        @cuda.jit
        def differences(x, out):
            items = cuda.local.array(ITEMS, np.int64)
            base = cuda.blockIdx.x * THREADS * ITEMS + cuda.threadIdx.x * ITEMS
            for i in range(ITEMS):
                items[i] = x[base + i]
            before = x[cuda.blockIdx.x * THREADS * ITEMS - 1] if cuda.blockIdx.x > 0 else 0
            coop.block.subtract_left(items, items, tile_predecessor=before, threads=THREADS)
            for i in range(ITEMS):
                out[base + i] = items[i]

        summands = np.random.default_rng(0).integers(-9, 9, 2 * THREADS * ITEMS)
        out = np.zeros_like(summands)
        differences[2, THREADS](np.cumsum(summands), out)
        assert (out == summands).all()
    """
    sig = Signature("coop.block.subtract_left")
    body = _specialise(sig, items, output, op, tile_predecessor, threads, valid_items, temp_storage, True)

    def impl(items, output, op, tile_predecessor, valid_items, temp_storage):
        body(items, output, op, tile_predecessor, valid_items, temp_storage)

    return impl


@primitive("coop.block.subtract_right", _temp_storage_bytes(False), **_PRIMITIVE_OPTIONS)
def subtract_right(items, output, op=None, tile_successor=None, threads=None, valid_items=None, temp_storage=None):
    """Each item of a block's tile minus the item after it (CUB
    BlockAdjacentDifference::SubtractRight, SubtractRightPartialTile):
    ``output[i] = op(item i, item i+1)``.

    Parameters
    ----------
    items : items array or tuple of items arrays
        {edge_items}
    output : items array or tuple of items arrays
        Receives the thread's ``N`` results: the same form as ``items``, of a type the
        items and ``op``'s results convert to; it may be ``items`` (in place).
    op : operator, optional
        ``op(item, after)`` or ``op(item, after, index)`` (``index``: ``item``'s tile
        position). Default: ``item - after`` (``operator.sub``).
    tile_successor : value, optional
        The item after the tile: the tile's last item becomes ``op(last item,
        tile_successor)``. Default: it is copied.
    threads : int or tuple, compile-time constant, optional
        {threads}
        {shuffle_threads}
    valid_items : int, optional
        A partial tile (the same in every thread, CUB's SubtractRightPartialTile): the
        tile ends at position ``valid_items - 1`` (copied, or differenced with
        ``tile_successor``); items after it are copied. The tile size or more means
        the whole tile.
        {blocked_positions}
    temp_storage : shared array, optional
        {temp_storage}
        {temp_storage_size}

    Returns
    -------
    None
        Every thread gets its results in ``output``.

    Barriers
    --------
    {block_barriers}

    {edge_barriers}

    Notes
    -----
    {collective}

    Example
    -------
    Gaps to the next item of a sorted partial tile of uint8 keys, as int16::

        import numpy as np
        import coop
        from numba import cuda

        THREADS, ITEMS, VALID = 32, 4, 100

        @cuda.jit
        def gaps(x, out):
            items = cuda.local.array(ITEMS, np.uint8)
            result = cuda.local.array(ITEMS, np.int16)
            for i in range(ITEMS):
                items[i] = x[cuda.threadIdx.x * ITEMS + i]
            coop.block.subtract_right(items, result, lambda a, b: b - a, threads=THREADS, valid_items=VALID)
            for i in range(ITEMS):
                out[cuda.threadIdx.x * ITEMS + i] = result[i]

        x = np.sort(np.random.default_rng(1).integers(0, 256, 128)).astype(np.uint8)
        out = np.zeros(128, np.int16)
        gaps[1, THREADS](x, out)
        assert (out[: VALID - 1] == np.diff(x[:VALID].astype(np.int16))).all()
        assert (out[VALID - 1 :] == x[VALID - 1 :]).all()
    """
    sig = Signature("coop.block.subtract_right")
    body = _specialise(sig, items, output, op, tile_successor, threads, valid_items, temp_storage, False)

    def impl(items, output, op, tile_successor, valid_items, temp_storage):
        body(items, output, op, tile_successor, valid_items, temp_storage)

    return impl
