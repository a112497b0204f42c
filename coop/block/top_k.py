"""Block-wide top-k: the ``k`` largest (or smallest) keys of a block's tile, and their
values, in the tile's first ``k`` blocked positions (CUB's block top-k, AIR top-k's
radix select).

Keys are radix keys, ordered as ``coop.block.radix_sort`` orders them (floats: -0.0
equal to +0.0; NaNs by their bits). Unsorted (the default), a radix select over the
keys' ordered bits, most significant digit first, 8 bits a pass: each pass counts the
candidates' digits in 256 shared counters (one atomic add per candidate), finds the
digit in which the ``k``-th best key lies with one block sum over the counters (each
thread adds up its share of them, best digits first), and settles every candidate
above or below it; the candidates left (keys equal to the ``k``-th best in the digits
seen so far) stop the passes once all of them are needed; where more are left after
the last digit (keys equal to the ``k``-th best), a block sum of their counts picks the
earliest. Then a stable partition by class (selected, not selected, past
``valid_items``) moves keys and values into place: each key's tile position from one
block sum of the thread's counts of the classes (the ranks of a 2-bit digit, without
counting each key in shared memory as a radix ranking does), then one scatter of the
keys and of each values array. Sorted, a stable
radix sort of the whole tile, best first (the keys past ``valid_items`` last, sorted
the same way among themselves).

Composition: the passes' and the partition's block sums are ``coop.block.scan``'s
``exclusive_sum_in_scratch``, the partition's scatters ``coop.block.exchange``'s
(``coop.block.radix``'s ``tile_scatterer``), the sorted form ``coop.block.radix``'s
``tile_sorter``, in one scratch buffer (a ``Union`` of the select's counters and the
exchanges'), a static buffer of the primitive's own or the caller's ``temp_storage=``.
"""

import numpy as np
from numba.cuda import types

from coop._core import radix
from coop._core.backend import cuda
from coop._core.exchange import check_static_shared, required_items_per_thread, required_threads
from coop._core.items import array_lengths_check, array_tuple
from coop._core.misuse import size_check
from coop._core.scratch import Region, Struct, Union, atomic_add, block_rank_of, loader, storage, store
from coop._core.selection import (OTHER, SELECTED, TIED, U32, candidates_of, settle_candidates, start_classes,
                                  top_k_arguments, value_types_of)
from coop._core.specialize import PRIMITIVE_DEFAULT, Signature, device_function, primitive
from coop.block.exchange import exchange_layout
from coop.block.radix import sort_layout, tile_scatterer, tile_sorter
from coop.block.radix_ranking import check_tile
from coop.block.scan import exclusive_sum_in_scratch

__all__ = ["top_k"]

DIGIT_BITS = 8
BINS = 1 << DIGIT_BITS
SORTED_RADIX_BITS = 4  # (radix_sort's default)


def top_k_layout(key_types, value_types, threads, items_per_thread, is_sorted):
    """The scratch: unsorted, the select's (the block sum's, also the partition's; the
    digit counters, the threshold's broadcast) under the partition's exchanges; sorted,
    the sort of (validity, key)."""
    if is_sorted:
        return sort_layout([types.uint8, *key_types], value_types, threads, items_per_thread, SORTED_RADIX_BITS)
    scan, _ = exclusive_sum_in_scratch(types.uint32, threads)
    select = Struct("select", scan, Region("bins", types.uint32, BINS), Region("threshold", types.uint32, 3))
    exchanges = [exchange_layout(t, threads, items_per_thread, name=str(t))
                 for t in dict.fromkeys([*key_types, *value_types])]
    return Union("top_k", select, *exchanges)


def _temp_storage_bytes(sig, key_type, threads, items_per_thread, value_dtype=None, sorted=PRIMITIVE_DEFAULT):
    """Bytes a ``temp_storage=`` array needs for a top-k of ``key_dtype`` keys and
    ``value_dtype`` values (a tuple of dtypes for a tuple of value arrays),
    ``items_per_thread`` per thread, in blocks of ``threads``, ``sorted`` or not."""
    radix.check_key_type(sig, key_type, "dtype")
    block = required_threads(sig, threads)
    n = required_items_per_thread(sig, items_per_thread)
    value_types = value_types_of(sig, value_dtype)
    return top_k_layout([types.unliteral(key_type)], value_types, block, n, sig.constant_bool(sorted, "sorted")).nbytes


@primitive("coop.block.top_k", _temp_storage_bytes, group="block", uniform=("k", "valid_items"))
def top_k(keys, k, values=None, threads=None, items_per_thread=None, largest=True, sorted=False,
          valid_items=None, temp_storage=None):
    """Move the ``k`` largest (or smallest) keys of a block's tile, and their values,
    into the tile's first ``k`` blocked positions (CUB's block top-k): after the call,
    tile positions ``0 .. k-1`` (thread ``r``'s item ``i`` is position
    ``r*items_per_thread + i``) hold the selected keys, the rest the others.

    Parameters
    ----------
    keys : items array
        The thread's ``items_per_thread`` keys, blocked: bool, int8-int64, uint8-uint64,
        float16, float32 or float64, ordered as ``coop.block.radix_sort`` orders them;
        rearranged in place.
    k : int
        How many keys to select (run time; the same in every thread). At most the
        tile's (valid) items are selected: ``k`` past them selects them all, ``k`` of
        0 or less none.
    values : items array, or tuple of items arrays, optional
        {moved_values}
    threads : int or tuple, compile-time constant
        {threads} Required.
    items_per_thread : int, compile-time constant
        {radix_tile_length}
    largest : bool, compile-time constant, default True
        Select the largest keys (False: the smallest).
    sorted : bool, compile-time constant, default False
        False: the selected keys in tile order (of keys equal to the ``k``-th best,
        the earliest in the tile are selected), then the other keys in tile order,
        then the positions past ``valid_items``. A radix select: a few passes of 8
        bits over the keys and one pass that moves them. True: the whole tile sorted,
        best first, equal keys in tile order, then the positions past ``valid_items``,
        sorted the same way among themselves (a stable radix sort of the tile by
        validity, then key: for where the order is needed).
    valid_items : int, optional
        A partial tile: only the first ``valid_items`` tile positions hold keys (run
        time; the same in every thread). The others are never selected and end in the
        tile's last positions. Default: the whole tile.
        {blocked_positions}
    temp_storage : shared array, optional
        {temp_storage}
        {temp_storage_size}

    Returns
    -------
    None
        Every thread gets its part of the rearranged tile in ``keys`` (and ``values``).

    Barriers
    --------
    {block_barriers}

    Here, unsorted: four ``cuda.syncthreads()`` per pass of the select (at most one
    pass per byte of the key), a block sum's where keys tie with the ``k``-th best,
    and the partition's (one barrier, a block sum's, and a scatter of the keys and of
    each values array: ``coop.block.exchange``'s barriers); sorted: the sort's.

    Notes
    -----
    {collective}

    The select counts digits with shared-memory atomics.

    Example
    -------
    The 8 largest of each block's 512 float32 scores, with their positions in the
    tile::

        import numpy as np
        import coop
        from numba import cuda

        THREADS, ITEMS, K = 128, 4, 8
        TILE = THREADS * ITEMS

        @cuda.jit
        def best_of_tiles(scores, best, where):
            keys = cuda.local.array(ITEMS, np.float32)
            positions = cuda.local.array(ITEMS, np.int32)
            base = cuda.blockIdx.x * TILE
            for i in range(ITEMS):
                positions[i] = cuda.threadIdx.x * ITEMS + i
                keys[i] = scores[base + positions[i]]
            coop.block.top_k(keys, K, positions, threads=THREADS, items_per_thread=ITEMS)
            for i in range(ITEMS):
                if cuda.threadIdx.x * ITEMS + i < K:
                    best[cuda.blockIdx.x, cuda.threadIdx.x * ITEMS + i] = keys[i]
                    where[cuda.blockIdx.x, cuda.threadIdx.x * ITEMS + i] = positions[i]

        scores = np.random.default_rng(7).standard_normal(3 * TILE).astype(np.float32)
        best, where = np.zeros((3, K), np.float32), np.zeros((3, K), np.int32)
        best_of_tiles[3, THREADS](scores, best, where)
        tiles = scores.reshape(3, TILE)
        best_first = np.argsort(-tiles, axis=1, kind="stable")[:, :K]
        assert (where == np.sort(best_first, axis=1)).all()  # (selected in tile order)
        assert (best == np.take_along_axis(tiles, where, axis=1)).all()
    """
    sig = Signature("coop.block.top_k")
    key_type, value_types, values_tuple = top_k_arguments(sig, keys, k, values)
    block = required_threads(sig, threads)
    shape = sig.block_shape(threads)
    block_rank = block_rank_of(shape)
    n = required_items_per_thread(sig, items_per_thread)
    check_tile(sig, block, n)
    is_largest = sig.constant_bool(largest, "largest")
    is_sorted = sig.constant_bool(sorted, "sorted")
    partial = sig.run_time_int(valid_items, "valid_items") is not None

    layout = top_k_layout([key_type], value_types, block, n, is_sorted)
    check_static_shared(sig, temp_storage, layout, "items_per_thread",
                        f"makes a tile of {block} x {n} keys{' and values' if value_types else ''}")
    scratch, _ = storage(sig, temp_storage, layout, owner=(sig.primitive, "sorted" if is_sorted else "select"))
    tile = block * n
    check_keys = size_check(sig.primitive, "keys", exact=True)
    check_values = array_lengths_check(sig.primitive, "values", n, len(value_types))
    as_value_arrays = array_tuple(values_tuple, bool(value_types))

    if is_sorted:
        sort = tile_sorter(sig, [types.uint8, key_type], value_types, block, n, SORTED_RADIX_BITS, is_largest,
                           False, layout, shape)
        width = radix.key_bits(key_type)
        # the validity flag is the key's most significant member; only its low bit is sorted on
        valid_flag, past_flag = (U32(1), U32(0)) if is_largest else (U32(0), U32(1))

        def arrange(keys, value_arrays, k, valid, buffer):
            flags = cuda.local.array(n, np.uint8)
            base = block_rank() * n
            for i in range(n):
                flags[i] = valid_flag if base + i < valid else past_flag
            sort((flags, keys), value_arrays, 0, width + 1 if valid < tile else width, buffer)
    else:
        select = _selector(key_type, block, n, is_largest, layout, shape)
        place = _partitioner(sig, [key_type, *value_types], block, n, shape)

        def arrange(keys, value_arrays, k, valid, buffer):
            classes = cuda.local.array(n, np.uint8)
            select(keys, classes, k, valid, buffer)
            place(classes, (keys,) + value_arrays, buffer)

    arrange = device_function(arrange)

    def impl(keys, k, values, valid_items, temp_storage):
        check_keys(keys, n)
        value_arrays = as_value_arrays(values)
        check_values(value_arrays)
        if partial:
            valid = valid_items
        else:
            valid = tile
        arrange(keys, value_arrays, k, valid, scratch(temp_storage))

    return impl


def _partitioner(sig, carried_types, threads, n, shape):
    """``place(classes, carried, buffer)``: the tile's items (each items array of the
    tuple ``carried``, of ``carried_types``) moved to the tile's positions in the order
    of their classes (``SELECTED``, ``OTHER``, ``PAST_VALID``), stable: a thread's counts
    of the first two classes, 16 bits each in one word (``check_tile`` bounds a tile to
    65,535 keys), summed over the block give each item's position, then each array is
    scattered there. It starts with a barrier; the scatters end the buffer's use."""
    assert threads * n < 1 << 16  # (check_tile refused larger tiles)
    _, exclusive_sum = exclusive_sum_in_scratch(types.uint32, threads, shape)
    block_rank = block_rank_of(shape)
    scatter = tile_scatterer(sig, "scatter_to_blocked", carried_types, threads, n, shape)
    low = U32(0xFFFF)
    other_one = U32(1 << 16)

    def place(classes, carried, buffer):
        counts = U32(0)
        for i in range(n):
            if classes[i] == SELECTED:
                counts = U32(counts + U32(1))
            elif classes[i] == OTHER:
                counts = U32(counts + other_one)
        # the buffer's last readers (the select's, or a caller's) are done
        cuda.syncthreads()
        before, total = exclusive_sum(counts, buffer)
        selected, other = before & low, before >> U32(16)
        past = U32(block_rank() * n) - selected - other  # (the thread's items start at tile position rank * n)
        others_start = total & low
        past_start = others_start + (total >> U32(16))
        ranks = cuda.local.array(n, np.int32)
        for i in range(n):
            if classes[i] == SELECTED:
                ranks[i] = selected
                selected = U32(selected + U32(1))
            elif classes[i] == OTHER:
                ranks[i] = others_start + other
                other = U32(other + U32(1))
            else:
                ranks[i] = past_start + past
                past = U32(past + U32(1))
        scatter(carried, ranks, buffer)

    return device_function(place)


def _selector(key_type, threads, n, largest, layout, shape):
    """``select(keys, classes, k, valid, buffer)``: each of the thread's keys classed
    (``classes``) as ``SELECTED`` (one of the ``k`` best of the tile's first ``valid``
    positions, ties broken by position), ``OTHER`` or ``PAST_VALID``: the radix select
    of the module docstring, in ``layout``'s ``"select"`` scratch. It starts with a
    barrier (unless it selects all or none), and the block must be synchronised after it
    before the buffer is written. ``shape``: the block's constant shape
    (``Signature.block_shape``), or None."""
    bits_type = radix.bits_type(key_type)
    width = radix.key_bits(key_type)
    passes = width // DIGIT_BITS
    to_ordered, digit_of = radix.to_ordered(key_type), radix.digit(key_type)
    _, exclusive_sum = exclusive_sum_in_scratch(types.uint32, threads, shape)
    block_rank = block_rank_of(shape)
    bins, threshold_slot = layout.slot("select.bins"), layout.slot("select.threshold")
    load = loader(types.uint32)
    per_thread = -(-BINS // threads)  # counters a thread adds up, best digits first
    tile = threads * n

    @device_function
    def digit_at(position):
        # the digit of the ``position``-th best counter
        return U32(BINS - 1 - position) if largest else U32(position)

    @device_function
    def better(digit, threshold):
        return digit > threshold if largest else digit < threshold

    def select(keys, classes, k, valid, buffer):
        rank = block_rank()
        base = rank * n
        count = min(valid, tile)
        wanted = max(min(k, count), 0)
        start_classes(classes, n, base, count, wanted)
        if wanted == 0 or wanted == count:
            return
        ordered = cuda.local.array(n, bits_type)
        for i in range(n):
            ordered[i] = to_ordered(keys[i])
        needed = U32(wanted)
        tied = U32(0)
        for p in range(passes):
            shift = width - DIGIT_BITS * (p + 1)
            # the buffer's last readers (a caller's phase, or the last pass's) are done
            cuda.syncthreads()
            for j in range(per_thread):
                b = rank + j * threads
                if b < BINS:
                    store(buffer, bins + b, U32(0))
            cuda.syncthreads()
            for i in range(n):
                if classes[i] == TIED:
                    atomic_add(buffer, bins + digit_of(ordered[i], shift, DIGIT_BITS), U32(1))
            cuda.syncthreads()
            share = U32(0)
            for j in range(per_thread):
                position = rank * per_thread + j
                if position < BINS:
                    share += load(buffer, bins + digit_at(position))
            before, _ = exclusive_sum(share, buffer)
            if before < needed and needed <= before + share:
                # the counter where the needed-th candidate lies: this thread's share
                running = before
                for j in range(per_thread):
                    position = rank * per_thread + j
                    if position < BINS:
                        counted = load(buffer, bins + digit_at(position))
                        if running < needed and needed <= running + counted:
                            store(buffer, threshold_slot, digit_at(position))
                            store(buffer, threshold_slot + 1, U32(needed - running))
                            store(buffer, threshold_slot + 2, counted)
                        running = U32(running + counted)
            cuda.syncthreads()
            threshold = load(buffer, threshold_slot)
            needed = load(buffer, threshold_slot + 1)
            tied = load(buffer, threshold_slot + 2)
            for i in range(n):
                if classes[i] == TIED:
                    d = digit_of(ordered[i], shift, DIGIT_BITS)
                    if better(d, threshold):
                        classes[i] = SELECTED
                    elif d != threshold:
                        classes[i] = OTHER
            if tied == needed:  # every candidate left is selected
                break
        # the candidates left: the first `needed` of them in tile order are selected (all
        # of them where the passes stopped early); their counts summed over the block
        # (the scan's scratch was last used before the last pass's barrier)
        candidates = U32(0)
        if tied != needed:
            candidates, _ = exclusive_sum(candidates_of(classes, n), buffer)
        settle_candidates(classes, n, candidates, tied == needed, needed)

    return device_function(select)
