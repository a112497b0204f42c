"""Warp-wide merge sort (CUB's WarpMergeSort): each logical warp of ``width`` lanes (1,
2, 4, 8, 16 or 32) sorts its own tile of keys, and values with them, by any comparator,
stably.

A logical warp of ``W`` lanes with ``N`` (``items_per_thread``) keys per lane holds a
tile of ``W*N`` keys, blocked (item ``i`` of logical lane ``l`` is tile item
``l*N + i``); after the call the tile is sorted in the same arrangement. The algorithm
is the block merge sort's (``coop._core.merge``), its rounds synchronising only the
logical warp (``cuda.syncwarp`` over its lanes).

Shared memory: per logical warp, ``W*N + 1`` keys, then (with values) ``W*N + 1``
values in the same slice (CUB's TempStorage union), rounded up to 16 bytes, for the
``threads // width`` logical warps of the block. ``threads`` (the block's thread count)
sizes it; left out, the buffer is sized for 1024 threads. ``temp_storage=`` (sized with
``coop.warp.merge_sort.temp_storage_bytes(key_dtype, threads, items_per_thread,
width=32, value_dtype=None)``) takes a caller's array instead, divided into equal parts,
one per logical warp, as every warp primitive divides it: a warp may load, sort and
store through one array without a block barrier.
"""

from numba.cuda import types

from coop._core.backend import cuda
from coop._core.exchange import DYNAMIC_TEMP_STORAGE, check_static_shared, required_items_per_thread
from coop._core.merge import call_compare, group_sorter, host_value_type, sort_arguments, tile_layout
from coop._core.scratch import (MAX_BLOCK_THREADS, Region, block_rank_of, part_bytes, part_offsets, slot_bytes,
                                storage)
from coop._core.shuffle import logical_warp
from coop._core.specialize import PRIMITIVE_DEFAULT, Signature, device_function, is_none, primitive
from coop.warp.exchange import check_logical_warps

__all__ = ["merge_sort"]

# what other families compose (the building-block tier: tests/test_layering.py)
BUILDING_BLOCKS = ["warp_merge_sort_layout", "warp_sorter"]


def warp_merge_sort_layout(key_type, value_type, threads, width, items_per_thread):
    """``(layout, slice_bytes)``: one part per logical warp (``coop._core.scratch
    .part_offsets``), each holding its warp's ``tile_layout`` (CUB's TempStorage per
    warp: the warps' phases are not in step, so each unions only its own keys and
    values), of a multiple of the keys' and values' slot sizes."""
    one = tile_layout(key_type, value_type, width * items_per_thread)
    slots = [slot_bytes(t) for t in (key_type, value_type) if t is not None]
    slice_bytes = part_bytes(one.nbytes, *slots)
    return Region("slices", types.uint8, threads // width * slice_bytes), slice_bytes


def _constants(sig, threads, items_per_thread, width):
    lanes = sig.width(width)
    block = MAX_BLOCK_THREADS if is_none(threads) else sig.block_threads(threads)
    check_logical_warps(sig, block, lanes)
    return block, required_items_per_thread(sig, items_per_thread), lanes


def _temp_storage_bytes(sig, key_type, threads, items_per_thread, width=PRIMITIVE_DEFAULT, value_dtype=None):
    """Bytes a ``temp_storage=`` array needs for warp merge sorts of ``key_dtype`` keys
    (and ``value_dtype`` values), ``items_per_thread`` per lane, in logical warps of
    ``width`` lanes filling a block of ``threads``."""
    block, n, lanes = _constants(sig, threads, items_per_thread, width)
    return warp_merge_sort_layout(key_type, host_value_type(sig, value_dtype), block, lanes, n)[0].nbytes


@device_function
def _warp_sync(mask):
    cuda.syncwarp(mask)


@primitive("coop.warp.merge_sort", _temp_storage_bytes, group="warp", uniform=("valid_items",))
def merge_sort(keys, compare, values=None, threads=None, items_per_thread=None, width=32, valid_items=None,
               oob_default=None, temp_storage=None):
    """Sort a logical warp's tile of keys, and values with them, by ``compare`` (CUB
    WarpMergeSort::StableSort, and Sort with ``valid_items``): stable, in place.

    Parameters
    ----------
    keys : items array, or tuple of items arrays
        The lane's ``items_per_thread`` keys, blocked across the logical warp.
        {merge_keys}
    compare : operator
        ``compare(a, b)``: whether key ``a`` goes before key ``b`` (a strict weak order,
        as ``operator.lt``; ``operator.gt`` sorts descending). A lambda written in the
        kernel, a ``@cuda.jit(device=True)`` function, or an operator of ``operator``.
    values : items array, or tuple of items arrays, optional
        {moved_values}
    threads : int or tuple, compile-time constant, optional
        The block's size, a multiple of ``width`` (it sizes the shared memory: one
        slice per logical warp), or its shape as a tuple (as the block primitives'
        ``threads=``: then the launch's shape). Default: sized for 1024 threads.
    items_per_thread : int, compile-time constant
        The length of ``keys`` (and ``values``) (required).
    width : int, compile-time constant, default 32
        {width}
    valid_items : int, optional
        A partial tile: only the first ``valid_items`` positions of the logical warp's
        tile hold keys (run time, the same in every lane of the logical warp). They are
        sorted into positions ``0 .. valid_items - 1``; the other positions are
        unspecified afterwards. The tile size or more means the whole tile. Needs
        ``oob_default``.
        {blocked_positions}
    oob_default : key, optional
        {merge_oob_default}
    temp_storage : shared array, optional
        {warp_temp_storage}
        {temp_storage_size} Tuples of dtypes for tuple keys and tuples of value
        arrays. Refused (a compile-time error) for tuple keys or values whose slot in
        shared memory is not 1, 2, 4, 8 or 16 bytes (three 8-byte members make 24):
        the logical warps' parts of a caller's array start every 16 bytes. Such a
        sort takes its own buffer.

    Returns
    -------
    None
        Every lane gets its part of its logical warp's sorted tile in ``keys`` (and
        ``values``).

    Barriers
    --------
    ``cuda.syncwarp`` over the logical warp's lanes, two per round of merging (four
    with values), ``log2(width)`` rounds; never the block.

    Notes
    -----
    {collective}

    Example
    -------
    Each logical warp of 16 lanes sorts its 64 float32 keys, descending::

        import operator
        import numpy as np
        import coop
        from numba import cuda

        THREADS, WIDTH, ITEMS = 64, 16, 4
        TILE = WIDTH * ITEMS

        @cuda.jit
        def sort_warp_tiles(x, out):
            keys = cuda.local.array(ITEMS, np.float32)
            base = cuda.threadIdx.x * ITEMS  # logical warps' tiles follow one another
            for i in range(ITEMS):
                keys[i] = x[base + i]
            coop.warp.merge_sort(keys, operator.gt, threads=THREADS, items_per_thread=ITEMS, width=WIDTH)
            for i in range(ITEMS):
                out[base + i] = keys[i]

        x = np.random.default_rng(3).standard_normal(THREADS * ITEMS).astype(np.float32)
        out = np.zeros_like(x)
        sort_warp_tiles[1, THREADS](x, out)
        assert (out.reshape(-1, TILE) == -np.sort(-x.reshape(-1, TILE), axis=1)).all()
    """
    sig = Signature("coop.warp.merge_sort")
    arguments = sort_arguments(sig, keys, compare, values, valid_items, oob_default)
    key_type, value_type, partial = arguments.key_type, arguments.value_type, arguments.partial
    with_values = value_type is not None
    block, n, lanes = _constants(sig, threads, items_per_thread, width)
    tile = lanes * n
    scratch, sort = warp_sorter(sig, key_type, value_type, block, lanes, n, partial, temp_storage,
                                "pass threads= (the block's size)" if is_none(threads) else DYNAMIC_TEMP_STORAGE,
                                sig.block_shape(threads), arguments.order)
    check_lengths = arguments.check_lengths

    def impl(keys, compare, values, valid_items, oob_default, temp_storage):
        check_lengths(keys, values, n)
        if partial:
            valid = valid_items
        else:
            valid = tile
        sort(keys, values, compare, valid, oob_default, scratch(temp_storage), temp_storage)

    return impl


def warp_sorter(sig, key_type, value_type, threads, width, items_per_thread, partial, temp_storage, hint,
                shape=None, order=call_compare):
    """``(scratch, sort)``: device functions ``scratch(temp_storage)``, the buffer, and
    ``sort(keys, values, compare, valid, oob_default, buffer, temp_storage)`` sorting
    each logical warp's tile of ``key_type`` keys (and ``value_type`` values, or None)
    through it as ``merge_sort`` does, in blocks of ``threads`` (python ints, checked by
    the caller; of the constant ``shape`` where known, ``Signature.block_shape``;
    ``hint``: how to fit a tile too big for static shared memory; ``order``: the keys'
    ``coop._core.merge.key_order``). (The
    buffer is the caller's to allocate: ``merge_sort`` allocates it in its
    implementation, where numba-cuda-mlir kernels compile it.)"""
    with_values = value_type is not None
    layout, slice_bytes = warp_merge_sort_layout(key_type, value_type, threads, width, items_per_thread)
    warps = threads // width
    keys_of = part_offsets(sig, temp_storage, warps, slice_bytes, key_type)
    values_of = part_offsets(sig, temp_storage, warps, slice_bytes, value_type) if with_values else keys_of
    check_static_shared(sig, temp_storage, layout, "items_per_thread",
                        f"makes {warps} logical warps of {width} x {items_per_thread} keys"
                        f"{' and values' if with_values else ''}", hint)
    # (a caller's buffer: the warp's first syncwarp precedes its writes; see the module
    # docstring for a block-wide primitive's use of the same array before)
    scratch, _ = storage(sig, temp_storage, layout, owner=(sig.primitive, width))
    sort_group = group_sorter(key_type, value_type, items_per_thread, width, _warp_sync, partial, order)
    block_rank = block_rank_of(shape)

    def sort(keys, values, compare, valid, oob_default, buffer, temp_storage):
        lane, mask = logical_warp(width)
        warp = block_rank() // width
        sort_group(keys, values, compare, buffer, keys_of(temp_storage, warp), values_of(temp_storage, warp), lane,
                   valid, oob_default, mask)

    return scratch, device_function(sort)
