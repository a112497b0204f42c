"""Block-wide merge sort (CUB's BlockMergeSort): a block's tile of keys, and values with
them, sorted by any comparator, stably.

A block of ``T`` threads (``threads``, 1-, 2- or 3-D) holds ``T*N`` keys, ``N``
(``items_per_thread``) per thread, blocked (item ``i`` of thread ``r`` is tile item
``r*N + i``); after the call the tile is sorted in the same arrangement. Keys are any
value type ``compare`` takes (numbers, bools, complex numbers with a comparator of your
own, ...), or tuples of them (a tuple of items arrays), values any value type (or a tuple
of items arrays). How it works: ``coop._core.merge``. Unlike CUB's,
which needs a power-of-two block, every block size sorts (the last round merges runs
clipped to the tile).

Shared memory: ``T*N + 1`` keys, then (with values) ``T*N + 1`` values in the same
buffer (CUB's TempStorage union). ``temp_storage=`` (sized with
``merge_sort.temp_storage_bytes(key_dtype, threads, items_per_thread,
value_dtype=None)``) shares one array with other primitives.
"""

from coop._core.backend import cuda
from coop._core.exchange import check_static_shared, required_items_per_thread, required_threads
from coop._core.merge import group_sorter, host_value_type, sort_arguments, tile_layout
from coop._core.scratch import block_rank_of, storage
from coop._core.specialize import Signature, device_function, primitive

__all__ = ["merge_sort"]


def _temp_storage_bytes(sig, key_type, threads, items_per_thread, value_dtype=None):
    """Bytes a ``temp_storage=`` array needs for a merge sort of ``key_dtype`` keys (and
    ``value_dtype`` values), ``items_per_thread`` per thread, in blocks of ``threads``."""
    block = required_threads(sig, threads)
    n = required_items_per_thread(sig, items_per_thread)
    return tile_layout(key_type, host_value_type(sig, value_dtype), block * n).nbytes


@primitive("coop.block.merge_sort", _temp_storage_bytes, group="block", uniform=("valid_items",))
def merge_sort(keys, compare, values=None, threads=None, items_per_thread=None, valid_items=None,
               oob_default=None, temp_storage=None):
    """Sort a block's tile of keys, and values with them, by ``compare`` (CUB
    BlockMergeSort::StableSort, and Sort with ``valid_items``): stable, in place.

    Parameters
    ----------
    keys : items array, or tuple of items arrays
        The thread's ``items_per_thread`` keys, blocked.
        {merge_keys}
    compare : operator
        ``compare(a, b)``: whether key ``a`` goes before key ``b`` (a strict weak order,
        as ``operator.lt``; ``operator.gt`` sorts descending). A lambda written in the
        kernel, a ``@cuda.jit(device=True)`` function, or an operator of ``operator``.
    values : items array, or tuple of items arrays, optional
        {moved_values}
    threads : int or tuple, compile-time constant
        {threads} Required; any size (CUB's needs a power of two).
    items_per_thread : int, compile-time constant
        The length of ``keys`` (and ``values``) (required).
    valid_items : int, optional
        A partial tile: only the first ``valid_items`` tile positions hold keys (run
        time, the same in every thread). They are sorted into positions ``0 ..
        valid_items - 1``; what the other positions hold afterwards is unspecified.
        The tile size or more means the whole tile. Needs ``oob_default``.
        {blocked_positions}
    oob_default : key, optional
        {merge_oob_default}
    temp_storage : shared array, optional
        {temp_storage}
        {temp_storage_size} Tuples of dtypes for tuple keys and tuples of value
        arrays.

    Returns
    -------
    None
        Every thread gets its part of the sorted tile in ``keys`` (and ``values``).

    Barriers
    --------
    {block_barriers}

    Here: two ``cuda.syncthreads()`` per round of merging (four with values), for
    ``ceil(log2(threads))`` rounds.

    Notes
    -----
    {collective}

    Example
    -------
    Sort each block's tile of int32 keys by their distance from 50, carrying their
    original positions (an argsort by a comparator)::

        import numpy as np
        import coop
        from numba import cuda

        THREADS, ITEMS = 64, 4
        TILE = THREADS * ITEMS

        @cuda.jit
        def sort_tiles(x, out, order):
            keys = cuda.local.array(ITEMS, np.int32)
            positions = cuda.local.array(ITEMS, np.int32)
            base = cuda.blockIdx.x * TILE + cuda.threadIdx.x * ITEMS
            for i in range(ITEMS):
                keys[i] = x[base + i]
                positions[i] = cuda.threadIdx.x * ITEMS + i
            coop.block.merge_sort(keys, lambda a, b: abs(a - 50) < abs(b - 50), positions,
                                  threads=THREADS, items_per_thread=ITEMS)
            for i in range(ITEMS):
                out[base + i] = keys[i]
                order[base + i] = positions[i]

        x = np.random.default_rng(1).integers(0, 100, 2 * TILE).astype(np.int32)
        out, order = np.zeros_like(x), np.zeros(x.size, np.int32)
        sort_tiles[2, THREADS](x, out, order)
        tiles = x.reshape(2, TILE)
        expected = np.argsort(np.abs(tiles - 50), axis=1, kind="stable")
        assert (order.reshape(2, TILE) == expected).all()
        assert (out.reshape(2, TILE) == np.take_along_axis(tiles, expected, axis=1)).all()
    """
    sig = Signature("coop.block.merge_sort")
    arguments = sort_arguments(sig, keys, compare, values, valid_items, oob_default)
    key_type, value_type, partial = arguments.key_type, arguments.value_type, arguments.partial
    with_values = value_type is not None
    block = required_threads(sig, threads)
    n = required_items_per_thread(sig, items_per_thread)
    tile = block * n
    layout = tile_layout(key_type, value_type, tile)
    check_static_shared(sig, temp_storage, layout, "items_per_thread",
                        f"makes a tile of {block} x {n} keys{' and values' if with_values else ''}")
    # (a caller's buffer needs no barrier of its own: each round starts with one)
    scratch, _ = storage(sig, temp_storage, layout, owner=(sig.primitive,))
    sort = group_sorter(key_type, value_type, n, block, _block_sync, partial, arguments.order)
    block_rank = block_rank_of(sig.block_shape(threads))
    check_lengths = arguments.check_lengths

    def impl(keys, compare, values, valid_items, oob_default, temp_storage):
        check_lengths(keys, values, n)
        if partial:
            valid = valid_items
        else:
            valid = tile
        sort(keys, values, compare, scratch(temp_storage), 0, 0, block_rank(), valid, oob_default, 0)

    return impl


@device_function
def _block_sync(mask):
    cuda.syncthreads()
