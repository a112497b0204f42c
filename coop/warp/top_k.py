"""Warp-wide top-k: the ``k`` largest (or smallest) keys of a logical warp's tile, and
their values, in the tile's first ``k`` blocked positions.

A logical warp of ``W`` lanes (1, 2, 4, 8, 16 or 32) with ``N`` (``items_per_thread``)
keys per lane holds a tile of ``W*N`` keys, blocked (item ``i`` of logical lane ``l`` is
tile position ``l*N + i``). Keys are radix keys, ordered as ``coop.block.radix_sort``
orders them (floats: -0.0 equal to +0.0; NaNs by their bits).

The select runs in registers: a radix select one bit at a time over the keys' ordered
bits, most significant first, each step counting the candidates with the bit the
better way over the logical warp with one warp sum (``redux.sync`` compiled); it stops
once every candidate left is needed, and where more are left after the last bit (keys
equal to the ``k``-th best) an exclusive warp sum of their counts picks the earliest in
the tile. The placement is a warp exchange per array (``scatter_to_striped``, ranks
made from blocked positions: selected keys in tile order, then the others, then the
positions past ``valid_items``), through shared memory: keys and values end in the
same arrangement. Sorted, the tile is sorted instead, best first: a stable warp merge
sort (``coop.warp.merge``'s ``warp_sorter``) of the keys' ordered bits carrying their
tile positions, whose result, sent back to where each key came from, ranks the keys and
values for the same exchanges.
"""

import operator

import numpy as np
from numba.cuda import types

from coop._core import radix
from coop._core.backend import cuda
from coop._core.exchange import DYNAMIC_TEMP_STORAGE
from coop._core.items import array_lengths_check, array_tuple
from coop._core.misuse import size_check
from coop._core.selection import (OTHER, SELECTED, TIED, U32, candidates_of, settle_candidates, start_classes,
                                  top_k_arguments, value_types_of)
from coop._core.shuffle import UP, clamp, logical_warp, up_sum_step, warp_sum
from coop._core.specialize import PRIMITIVE_DEFAULT, Signature, device_function, primitive
from coop._core.values import joined, select
from coop.warp.exchange import warp_exchange_layout, warp_exchanger, warp_tile_constants
from coop.warp.merge import warp_merge_sort_layout, warp_sorter

__all__ = ["top_k"]


def _temp_storage_bytes(sig, key_type, threads, items_per_thread, width=PRIMITIVE_DEFAULT, value_dtype=None,
                        sorted=PRIMITIVE_DEFAULT):
    """Bytes a ``temp_storage=`` array needs for warp top-ks of ``key_dtype`` keys (and
    ``value_dtype`` values: a tuple of dtypes for a tuple of value arrays),
    ``items_per_thread`` per lane, in logical warps of ``width`` lanes filling a block
    of ``threads``, ``sorted`` or not."""
    radix.check_key_type(sig, key_type, "dtype")
    block, n, lanes = warp_tile_constants(sig, threads, items_per_thread, width)
    moved = [types.unliteral(key_type), *value_types_of(sig, value_dtype)]
    if sig.constant_bool(sorted, "sorted"):
        moved.append(types.int32)  # (the positions' exchange; the sort's scratch below)
    needed = [warp_exchange_layout(t, block, lanes, n).nbytes for t in moved]
    if sig.constant_bool(sorted, "sorted"):
        needed.append(warp_merge_sort_layout(radix.bits_type(key_type), types.int32, block, lanes, n)[0].nbytes)
    return max(needed)


@primitive("coop.warp.top_k", _temp_storage_bytes, group="warp", uniform=("k", "valid_items"))
def top_k(keys, k, values=None, threads=None, items_per_thread=None, width=32, largest=True, sorted=False,
          valid_items=None, temp_storage=None):
    """Move the ``k`` largest (or smallest) keys of a logical warp's tile, and their
    values, into the tile's first ``k`` blocked positions (CUB's block top-k for a
    logical warp: CUB has no warp top-k, its WarpBitonicTopK is a draft): after the
    call, tile positions ``0 .. k-1`` (logical lane ``l``'s item ``i`` is position
    ``l*items_per_thread + i``) hold the selected keys, the rest the others.

    Parameters
    ----------
    keys : items array
        The lane's ``items_per_thread`` keys, blocked across the logical warp: bool,
        int8-int64, uint8-uint64, float16, float32 or float64, ordered as
        ``coop.block.radix_sort`` orders them; rearranged in place.
    k : int
        How many keys to select (run time; the same in every lane of the logical warp).
        At most the tile's (valid) items are selected: ``k`` past them selects them
        all, ``k`` of 0 or less none.
    values : items array, or tuple of items arrays, optional
        {moved_values}
    threads : int or tuple, compile-time constant
        The block's size, a multiple of ``width`` (it sizes the shared memory of the
        placement: one slice per logical warp), or its shape as a tuple (as the block
        primitives' ``threads=``: then the launch's shape). Required.
    items_per_thread : int, compile-time constant
        The length of ``keys`` (and of each values array). Required.
    width : int, compile-time constant, default 32
        {width}
    largest : bool, compile-time constant, default True
        Select the largest keys (False: the smallest).
    sorted : bool, compile-time constant, default False
        False: the selected keys in tile order (of keys equal to the ``k``-th best, the
        earliest in the tile are selected), then the other keys in tile order, then the
        positions past ``valid_items`` where they were: a select in registers (a warp
        sum per bit of the key at most) and one warp exchange per array moved. True:
        the whole tile sorted, best first, equal keys in tile order, the positions past
        ``valid_items`` last (a stable warp merge sort of the keys' ordered bits and
        their positions, then the positions sent back and one warp exchange per array:
        for where the order is needed).
    valid_items : int, optional
        A partial tile: only the first ``valid_items`` positions of the logical warp's
        tile hold keys (run time; the same in every lane of the logical warp). The
        others are never selected and end in the tile's last positions. Default: the
        whole tile.
        {blocked_positions}
    temp_storage : shared array, optional
        {warp_temp_storage}
        {temp_storage_size}

    Returns
    -------
    None
        Every lane gets its part of its logical warp's rearranged tile in ``keys`` (and
        ``values``).

    Barriers
    --------
    ``cuda.syncwarp`` over the logical warp's lanes, two per array moved (a warp
    exchange's): unsorted, where ``0 < k < valid`` keys are selected; sorted, the merge
    sort's too and the positions' exchange; never the block.

    Notes
    -----
    {collective}

    Unsorted, the select keeps the keys in registers and counts with warp sums; only
    the placement goes through shared memory.

    Example
    -------
    Each logical warp of 16 lanes picks the 5 smallest of its 64 int32 keys, with their
    positions::

        import numpy as np
        import coop
        from numba import cuda

        THREADS, WIDTH, ITEMS, K = 64, 16, 4, 5
        TILE = WIDTH * ITEMS

        @cuda.jit
        def smallest_of_warp_tiles(x, best, where):
            keys = cuda.local.array(ITEMS, np.int32)
            positions = cuda.local.array(ITEMS, np.int32)
            lane = cuda.threadIdx.x % WIDTH
            base = cuda.threadIdx.x * ITEMS  # logical warps' tiles follow one another
            for i in range(ITEMS):
                keys[i] = x[base + i]
                positions[i] = lane * ITEMS + i
            coop.warp.top_k(keys, K, positions, threads=THREADS, items_per_thread=ITEMS, width=WIDTH,
                            largest=False)
            warp = cuda.threadIdx.x // WIDTH
            for i in range(ITEMS):
                if lane * ITEMS + i < K:
                    best[warp, lane * ITEMS + i] = keys[i]
                    where[warp, lane * ITEMS + i] = positions[i]

        x = np.random.default_rng(5).integers(-1000, 1000, THREADS * ITEMS).astype(np.int32)
        best, where = np.zeros((4, K), np.int32), np.zeros((4, K), np.int32)
        smallest_of_warp_tiles[1, THREADS](x, best, where)
        tiles = x.reshape(4, TILE)
        smallest = np.sort(np.argsort(tiles, axis=1, kind="stable")[:, :K], axis=1)
        assert (where == smallest).all()  # (selected in tile order)
        assert (best == np.take_along_axis(tiles, where, axis=1)).all()
    """
    sig = Signature("coop.warp.top_k")
    key_type, value_types, values_tuple = top_k_arguments(sig, keys, k, values)
    block, n, lanes = warp_tile_constants(sig, threads, items_per_thread, width)
    shape = sig.block_shape(threads)
    is_largest = sig.constant_bool(largest, "largest")
    partial = sig.run_time_int(valid_items, "valid_items") is not None
    scatters = _each_scatter([warp_exchanger(sig, "scatter_to_striped", t, lanes, block, n, temp_storage, shape)
                              for t in [key_type, *value_types]])
    if sig.constant_bool(sorted, "sorted"):
        arrange = _sorted_arranger(sig, key_type, block, lanes, n, is_largest, temp_storage, scatters, shape)
    else:
        arrange = _unsorted_arranger(key_type, lanes, n, is_largest, scatters)
    tile = lanes * n
    check_keys = size_check(sig.primitive, "keys", exact=True)
    check_values = array_lengths_check(sig.primitive, "values", n, len(value_types))
    as_value_arrays = array_tuple(values_tuple, bool(value_types))

    def impl(keys, k, values, valid_items, temp_storage):
        check_keys(keys, n)
        value_arrays = as_value_arrays(values)
        check_values(value_arrays)
        if partial:
            valid = valid_items
        else:
            valid = tile
        arrange(keys, value_arrays, k, valid, temp_storage)

    return impl


def _unsorted_arranger(key_type, width, n, largest, scatters):
    """``arrange(keys, value_arrays, k, valid, temp_storage)``: the select in registers,
    then the keys and values moved by ``scatters`` where the tile changes."""
    classify = _classifier(key_type, width, n, largest)
    ranks_of = _ranker(width, n)

    def arrange(keys, value_arrays, k, valid, temp_storage):
        classes = cuda.local.array(n, np.uint8)
        if classify(keys, classes, k, valid):
            ranks = cuda.local.array(n, np.int32)
            ranks_of(classes, ranks)
            scatters((keys,) + value_arrays, ranks, temp_storage)

    return device_function(arrange)


def _sorted_arranger(sig, key_type, threads, width, n, largest, temp_storage, scatters, shape):
    """``arrange(keys, value_arrays, k, valid, temp_storage)``: the tile sorted, best
    first: a stable warp merge sort of the keys' ordered bits (those past ``valid``
    made the worst, so they end last), carrying each key's tile position; the positions
    sent back where the keys came from say where each key goes, and ``scatters`` moves
    the keys and values there."""
    bits_type = radix.bits_type(key_type)
    word = np.dtype(str(bits_type)).type
    # (the largest word computed in the kernel: numba-cuda-mlir 0.6 cannot make a 64-bit
    # constant of 2**63 or more)
    worst = _zero(word) if largest else _all_ones(word)
    comparable = _comparable(key_type)
    scratch, sort = warp_sorter(sig, bits_type, types.int32, threads, width, n, False, temp_storage,
                                DYNAMIC_TEMP_STORAGE, shape)
    send_back = warp_exchanger(sig, "scatter_to_striped", types.int32, width, threads, n, temp_storage, shape)
    compare = operator.gt if largest else operator.lt
    tile = width * n

    def arrange(keys, value_arrays, k, valid, temp_storage):
        lane, _ = logical_warp(width)
        count = min(valid, tile)
        words = cuda.local.array(n, bits_type)
        came_from = cuda.local.array(n, np.int32)
        for i in range(n):
            words[i] = select(lane * n + i < count, comparable(keys[i]), worst())
            came_from[i] = lane * n + i
        sort(words, came_from, compare, tile, 0, scratch(temp_storage), temp_storage)
        goes_to = cuda.local.array(n, np.int32)
        for i in range(n):
            goes_to[i] = lane * n + i
            came_from[i] = _striped_rank(came_from[i], width, n)
        send_back(goes_to, goes_to, came_from, temp_storage)
        for i in range(n):
            goes_to[i] = _striped_rank(goes_to[i], width, n)
        scatters((keys,) + value_arrays, goes_to, temp_storage)

    return device_function(arrange)


def _zero(word):
    def zero():
        return word(0)

    return device_function(zero)


def _all_ones(word):
    def all_ones():
        return word(~word(0))

    return device_function(all_ones)


@device_function
def _striped_rank(position, width, n):
    """The rank ``scatter_to_striped`` puts at blocked tile ``position`` (it places rank
    ``r`` at logical lane ``r % width``, item ``r // width``)."""
    return np.int32((position % n) * width + position // n)


def _classifier(key_type, width, n, largest):
    """``classify(keys, classes, k, valid) -> moved``: each of the lane's keys classed
    (``classes``) as ``SELECTED`` (one of the ``k`` best of the logical warp's first
    ``valid`` positions, ties broken by position), ``OTHER`` or ``PAST_VALID`` (the
    radix select of the module docstring); ``moved``: whether the tile must be
    rearranged (not where all or none of the valid keys are selected: every key is in
    place)."""
    bits_type = radix.bits_type(key_type)
    word = np.dtype(str(bits_type)).type
    bits = radix.key_bits(key_type)
    tile = width * n
    wanted_bit = word(1 if largest else 0)
    up = clamp(UP, width)
    comparable = _comparable(key_type)

    def classify(keys, classes, k, valid):
        lane, mask = logical_warp(width)
        base = lane * n
        count = min(valid, tile)
        wanted = max(min(k, count), 0)
        start_classes(classes, n, base, count, wanted)
        if wanted == 0 or wanted == count:
            return False  # (in place: all or none of the valid keys selected)
        ordered = cuda.local.array(n, bits_type)
        for i in range(n):
            ordered[i] = comparable(keys[i])
        needed = U32(wanted)
        tied = U32(count)
        for b in range(bits - 1, -1, -1):
            shift = word(b)
            mine = U32(0)
            for i in range(n):
                if classes[i] == TIED and (ordered[i] >> shift) & word(1) == wanted_bit:
                    mine = U32(mine + U32(1))
            better = U32(warp_sum(mask, mine))
            if better >= needed:
                # the needed ones are among those with the better bit: the others are out
                for i in range(n):
                    if classes[i] == TIED and (ordered[i] >> shift) & word(1) != wanted_bit:
                        classes[i] = OTHER
                tied = better
            else:
                for i in range(n):
                    if classes[i] == TIED and (ordered[i] >> shift) & word(1) == wanted_bit:
                        classes[i] = SELECTED
                needed = U32(needed - better)
                tied = U32(tied - better)
            needed = joined(needed)
            tied = joined(tied)
            if tied == needed:  # every candidate left is selected
                break
        # the candidates left (equal keys where tied > needed): the first `needed` in tile
        # order are selected
        candidates = U32(0)
        if tied != needed:
            mine = candidates_of(classes, n)
            candidates = U32(_inclusive_sum(mask, mine, up, width) - mine)
        settle_candidates(classes, n, candidates, tied == needed, needed)
        return True

    return device_function(classify)


def _comparable(key_type):
    """``comparable(key)``: the key's ordered bits, -0.0 read as +0.0 (read as 16-bit
    digits: a digit is narrower than 32 bits)."""
    word = np.dtype(str(radix.bits_type(key_type))).type
    bits = radix.key_bits(key_type)
    to_ordered, digit_of = radix.to_ordered(key_type), radix.digit(key_type)
    if bits <= 16:

        def comparable(key):
            return word(digit_of(to_ordered(key), 0, bits))
    elif bits == 32:

        def comparable(key):
            ordered = to_ordered(key)
            return word(word(word(digit_of(ordered, 16, 16)) << word(16)) | word(digit_of(ordered, 0, 16)))
    else:

        def comparable(key):
            ordered = to_ordered(key)
            high = word(word(word(digit_of(ordered, 48, 16)) << word(16)) | word(digit_of(ordered, 32, 16)))
            low = word(word(word(digit_of(ordered, 16, 16)) << word(16)) | word(digit_of(ordered, 0, 16)))
            return word(word(high << word(32)) | low)

    return device_function(comparable)


@device_function
def _inclusive_sum(mask, value, up, width):
    """The logical warp's inclusive sum of ``value`` (CUB's fused scan steps)."""
    offset = 1
    while offset < width:
        value = up_sum_step(mask, value, offset, up)
        offset *= 2
    return value


def _ranker(width, n):
    """``rank(classes, ranks)``: each key's destination in the logical warp's tile
    (selected first, then the others, then those past valid, each class in tile order)
    as the striped rank that puts it at that blocked position (``scatter_to_striped``
    places rank ``r`` at logical lane ``r % width``, item ``r // width``)."""
    up = clamp(UP, width)

    def rank(classes, ranks):
        lane, mask = logical_warp(width)
        # the lane's counts of selected and other keys, packed in one word (tiles of
        # fewer than 2**16 keys), summed over the lanes before it
        mine = U32(0)
        for i in range(n):
            if classes[i] == SELECTED:
                mine = U32(mine + U32(1))
            elif classes[i] == OTHER:
                mine = U32(mine + U32(1 << 16))
        inclusive = _inclusive_sum(mask, mine, up, width)
        totals = U32(warp_sum(mask, mine))
        before = U32(inclusive - mine)
        selected = U32(before & U32(0xFFFF))
        other = U32((totals & U32(0xFFFF)) + (before >> U32(16)))
        for i in range(n):
            # (counted and chosen without branches: numba-cuda-mlir keeps variables
            # assigned in branches, or chosen by a conditional expression, in local memory)
            is_selected, is_other = classes[i] == SELECTED, classes[i] == OTHER
            # past valid: the tile's last positions, where they are
            position = select(is_selected, selected, select(is_other, other, U32(lane * n + i)))
            selected = U32(selected + U32(is_selected))
            other = U32(other + U32(is_other))
            ranks[i] = _striped_rank(position, U32(width), U32(n))

    return device_function(rank)


def _each_scatter(exchanges):
    """``scatter(arrays, ranks, temp_storage)``: each array moved to ``ranks`` by its
    warp exchange, in turn."""
    if not exchanges:
        return _no_scatter
    head, tail = exchanges[0], _each_scatter(exchanges[1:])

    def scatter(arrays, ranks, temp_storage):
        head(arrays[0], arrays[0], ranks, temp_storage)
        tail(arrays[1:], ranks, temp_storage)

    return device_function(scatter)


@device_function
def _no_scatter(arrays, ranks, temp_storage):
    pass
