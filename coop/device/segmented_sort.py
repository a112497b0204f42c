"""Device-wide segmented sorts (CUB's DeviceSegmentedSort::SortKeys, SortPairs and their
Descending forms): ``segmented_sort(d_keys, offsets, d_values=None, descending=False,
d_keys_out=None, d_values_out=None)``, each segment sorted stably on its own.

Two kernels, as CUB's small/medium and large segment kernels (without its partitioning
pass, whose counts CUB reads back on the host):

- the first gives each segment a warp: a segment of at most a warp's tile (256 4-byte
  keys) is sorted by it (``coop.warp.load``, past its end padded with keys that sort last;
  ``coop.warp.merge_sort`` by ``radix.comparator``, the radix order as a comparison, in
  a tile of 32 keys or the full warp tile; ``coop.warp.store``); a longer one is listed
  (an atomic count) for the second kernel;
- the second's blocks, as many as fit the GPU once, take the listed segments one after
  another (an atomic claim), so that segments of any length keep every block busy. A
  segment of at most a block's tile (4,096 4-byte keys) is sorted in registers and
  shared memory, in the smallest of three tiles (a quarter, a half, all) that holds it:
  ``coop.block.load`` padded, ``coop.block.radix_sort`` ("blocked_to_striped") and
  ``coop.block.store`` striped, values with the keys;
- a longer one by least-significant-digit passes of 8 bits through global memory, as
  the device radix sort's (``coop.device.radix_sort``) but within the block: one read of
  the segment counts every pass's digits (shared atomics; a pass only permutes the keys);
  each pass turns its counts into each digit's first position (``coop.block.exclusive_sum``
  in the sort's order), then ranks the segment tile by tile in order
  (``coop.block.radix_rank``, "match_early_counts" over warp-striped loads: stable),
  rearranges each tile into rank order (``coop.block.exchange.scatter_to_striped``) and
  writes each key at its digit's next position. The passes alternate between the output
  and a temporary, starting so that the last writes the output (in place, the first
  writes the temporary, and an odd number of passes ends with the block copying its
  segment back). The last block to finish sets the counters back to zero for the next
  call.
"""

import functools

import numpy as np
from numba import cuda
from numba.cuda.np.numpy_support import from_dtype

import coop
from coop._core import radix
from coop._core.backend import SIMULATOR
from coop._core.constants import without_dead_branches
from coop.block.radix_ranking import tracked_digits
from coop.device._host import (device_array, documented, launch, launch_stream, resident_blocks, segment_offsets,
                               takes_temp_storage, temporary, zeroed_temporary)
from coop.device.radix_sort import check_key_dtype, sort_outputs
from coop.device._tiles import BLOCK_THREADS, items_per_thread

__all__ = ["segmented_sort"]

THREADS = BLOCK_THREADS
WARPS = THREADS // 32
# Items per thread, from bytes a thread (of a key, and a value), at most 16: of the largest
# tile sorted by a block in shared memory (4-byte keys: 4,096 keys), of the tiles of the
# passes through global memory (2,048), and of the largest tile a warp sorts (256).
TILE_BYTES_PER_THREAD = 8 if SIMULATOR else 64
PASS_BYTES_PER_THREAD = 4 if SIMULATOR else 64
WARP_BYTES_PER_THREAD = 2 if SIMULATOR else 32
MAX_ITEMS_PER_THREAD = 16
MAX_WARP_ITEMS_PER_THREAD = 8  # (a warp merge sort of 16 float16 keys a lane leaves them in local memory)
TILE_CLASSES = 3  # (a block's tiles: the largest, a half and a quarter of it, where above a warp's)
RADIX_BITS = 8
DIGITS = 1 << RADIX_BITS
RANKING = "match_early_counts"  # (stable for warp-striped keys, as the loads leave them)
LARGE, CLAIMED, FINISHED = range(3)  # the counters: segments for blocks, taken by blocks, blocks done


def _items_per_thread(key_dtype, value_dtype, bytes_per_thread=TILE_BYTES_PER_THREAD, at_most=MAX_ITEMS_PER_THREAD):
    dtypes = (key_dtype,) if value_dtype is None else (key_dtype, value_dtype)
    if SIMULATOR:
        return bytes_per_thread
    return min(at_most, items_per_thread(bytes_per_thread, *dtypes))


def tile_classes(key_dtype, value_dtype):
    """``(warp, block)``: the items per thread of the tiles in which a warp sorts a short
    segment and a block a longer one, each smallest first: a segment is sorted in the
    smallest that holds it; one longer than the largest block tile, by passes."""
    warp_items = _items_per_thread(key_dtype, value_dtype, WARP_BYTES_PER_THREAD, MAX_WARP_ITEMS_PER_THREAD)
    largest = _items_per_thread(key_dtype, value_dtype)
    block = sorted({largest >> shift for shift in range(TILE_CLASSES)
                    if THREADS * (largest >> shift) > 32 * warp_items} | {largest})
    return sorted({1, warp_items}), block


@functools.lru_cache(maxsize=None)
def _segment_kernels(key_dtype, value_dtype, descending):
    """``(warp_kernel, block_kernel, passes)``: the kernels sorting the segments of
    ``keys_in`` (and ``values_in``) into ``keys_out`` (``values_out``). The first gives
    each segment a warp, which sorts it if it fits a warp's tile and otherwise lists it
    for the second; its blocks take the listed segments one after another, sorting each
    in shared memory if it fits a block's tile, and by ``passes`` passes through
    ``keys_temp`` (``values_temp``) otherwise."""
    key_type = from_dtype(np.dtype(key_dtype))
    with_values = value_dtype is not None
    value_type = from_dtype(np.dtype(key_dtype if value_dtype is None else value_dtype))
    to_ordered, from_ordered, digit_of = radix.to_ordered(key_type), radix.from_ordered(key_type), radix.digit(key_type)
    threads = THREADS
    n_items = _items_per_thread(key_dtype, value_dtype, PASS_BYTES_PER_THREAD)  # (a pass's tiles)
    warp_classes, classes = tile_classes(key_dtype, value_dtype)
    tile_size, pass_tile_size, warp_tile_size = threads * classes[-1], threads * n_items, 32 * warp_classes[-1]
    passes = -(-radix.key_bits(key_type) // RADIX_BITS)
    tracked = tracked_digits(threads, RADIX_BITS)
    padding_bits = radix.last_ordered_bits(key_type, descending)
    temp_bytes = max(
        *(coop.block.radix_sort.temp_storage_bytes(key_type, threads, items,
                                                   value_dtype=value_type if with_values else None)
          for items in classes),
        coop.block.radix_rank.temp_storage_bytes(key_type, threads, RADIX_BITS, algorithm=RANKING),
        coop.block.exclusive_sum.temp_storage_bytes(from_dtype(np.dtype(np.int64)), threads),
        coop.block.exchange.scatter_to_striped.temp_storage_bytes(key_type, threads, n_items),
        coop.block.exchange.scatter_to_striped.temp_storage_bytes(value_type, threads, n_items) if with_values else 0,
    )
    warp_temp_bytes = max(coop.warp.merge_sort.temp_storage_bytes(key_type, threads, items,
                                                                  value_dtype=value_type if with_values else None)
                          for items in warp_classes)
    before = radix.comparator(key_type, descending)

    def warp_sorter(items):
        """Sorts a segment of at most ``32 * items`` keys in a warp."""

        @cuda.jit(device=True)
        def sort_in_warp(keys_in, keys_out, values_in, values_out, begin, size, temp):
            keys = cuda.local.array(items, key_type)
            values = cuda.local.array(items, value_type)
            padding = from_ordered(padding_bits)
            coop.warp.load(keys_in[begin:], keys, items_per_thread=items, valid_items=size, oob_default=padding)
            if with_values:
                coop.warp.load(values_in[begin:], values, items_per_thread=items, valid_items=size)
                coop.warp.merge_sort(keys, before, values, threads=threads, items_per_thread=items, valid_items=size,
                                     oob_default=padding, temp_storage=temp)
                coop.warp.store(values_out[begin:], values, items_per_thread=items, valid_items=size)
            else:
                coop.warp.merge_sort(keys, before, threads=threads, items_per_thread=items, valid_items=size,
                                     oob_default=padding, temp_storage=temp)
            coop.warp.store(keys_out[begin:], keys, items_per_thread=items, valid_items=size)

        return sort_in_warp

    small_warp_sort, warp_sort = warp_sorter(warp_classes[0]), warp_sorter(warp_classes[-1])
    small_warp_tile_size = 32 * warp_classes[0]

    def warp_kernel(keys_in, keys_out, values_in, values_out, offsets, segments, large, counters):
        temp = cuda.shared.array(warp_temp_bytes, np.uint8, alignment=16)
        segment = cuda.blockIdx.x * WARPS + cuda.threadIdx.x // 32
        if segment >= segments:
            return
        begin = np.int64(offsets[segment])
        size = np.int64(offsets[segment + 1]) - begin
        if size > warp_tile_size:
            if cuda.threadIdx.x % 32 == 0:
                large[cuda.atomic.add(counters, LARGE, 1)] = segment
        elif size > small_warp_tile_size:
            warp_sort(keys_in, keys_out, values_in, values_out, begin, size, temp)
        elif size > 0:
            small_warp_sort(keys_in, keys_out, values_in, values_out, begin, size, temp)

    def tile_sorter(items):
        """Sorts a segment of at most ``threads * items`` keys in the block."""

        @cuda.jit(device=True)
        def sort_in_tile(keys_in, keys_out, values_in, values_out, begin, size, temp):
            keys = cuda.local.array(items, key_type)
            values = cuda.local.array(items, value_type)
            coop.block.load(keys_in[begin:], keys, threads=threads, items_per_thread=items, valid_items=size,
                            oob_default=from_ordered(padding_bits))
            if with_values:
                coop.block.load(values_in[begin:], values, threads=threads, items_per_thread=items, valid_items=size)
                coop.block.radix_sort(keys, values, threads=threads, items_per_thread=items, descending=descending,
                                      blocked_to_striped=True, temp_storage=temp)
                coop.block.store(values_out[begin:], values, threads=threads, items_per_thread=items,
                                 algorithm="striped", valid_items=size)
            else:
                coop.block.radix_sort(keys, threads=threads, items_per_thread=items, descending=descending,
                                      blocked_to_striped=True, temp_storage=temp)
            coop.block.store(keys_out[begin:], keys, threads=threads, items_per_thread=items, algorithm="striped",
                             valid_items=size)

        return sort_in_tile

    def smallest_tile_sorter(index):
        """Sorts a segment of at most a tile in the smallest of ``classes[index:]`` that
        holds it (the block's threads all take the same branch)."""
        sort = tile_sorter(classes[index])
        if index == len(classes) - 1:
            return sort
        larger, limit = smallest_tile_sorter(index + 1), threads * classes[index]

        @cuda.jit(device=True)
        def sort_in_smallest_tile(keys_in, keys_out, values_in, values_out, begin, size, temp):
            if size <= limit:
                sort(keys_in, keys_out, values_in, values_out, begin, size, temp)
            else:
                larger(keys_in, keys_out, values_in, values_out, begin, size, temp)

        return sort_in_smallest_tile

    sort_in_tile = smallest_tile_sorter(0)

    @cuda.jit(device=True)
    def sort_pass(keys_in, keys_out, values_in, values_out, begin, end, begin_bit, temp, next_position,
                  offset_of_digit):
        """One pass over the segment ``begin:end``: its keys (values) of ``keys_in``
        (``values_in``) to ``keys_out`` (``values_out``) in the order of their digit from
        ``begin_bit``, stably; ``next_position`` holds each digit's first position."""
        rank = cuda.threadIdx.x
        keys = cuda.local.array(n_items, key_type)
        ranks = cuda.local.array(n_items, np.int32)
        digit_prefix = cuda.local.array(tracked, np.int32)
        counts = cuda.local.array(tracked, np.uint32)
        digit = cuda.local.array(n_items, np.uint32)
        for base in range(begin, end, pass_tile_size):
            valid = min(end - base, pass_tile_size)
            coop.block.load(keys_in[base:], keys, threads=threads, items_per_thread=n_items, algorithm="warp_striped",
                            valid_items=valid, oob_default=from_ordered(padding_bits))
            # (waits for the first positions, and for the previous tile's reads of them)
            coop.block.radix_rank(keys, ranks, begin_bit, RADIX_BITS, threads=threads, items_per_thread=n_items,
                                  descending=descending, algorithm=RANKING, exclusive_digit_prefix=digit_prefix,
                                  digit_counts=counts, temp_storage=temp)
            for j in range(tracked):
                d = rank * tracked + j
                if d < DIGITS:
                    offset_of_digit[d] = next_position[d] - digit_prefix[j]
            coop.block.exchange.scatter_to_striped(keys, keys, ranks, threads=threads, items_per_thread=n_items,
                                                   temp_storage=temp)
            cuda.syncthreads()  # (offset_of_digit written)
            for i in range(n_items):
                position = rank + i * threads
                digit[i] = digit_of(to_ordered(keys[i]), begin_bit, RADIX_BITS)
                if position < valid:  # (the padding ranks last: past valid)
                    keys_out[offset_of_digit[digit[i]] + position] = keys[i]
            if with_values:
                values = cuda.local.array(n_items, value_type)
                coop.block.load(values_in[base:], values, threads=threads, items_per_thread=n_items,
                                algorithm="warp_striped", valid_items=valid)
                cuda.syncthreads()  # (the keys' exchange has been read)
                coop.block.exchange.scatter_to_striped(values, values, ranks, threads=threads,
                                                       items_per_thread=n_items, temp_storage=temp)
                for i in range(n_items):
                    position = rank + i * threads
                    if position < valid:
                        values_out[offset_of_digit[digit[i]] + position] = values[i]
            for j in range(tracked):
                d = rank * tracked + j
                if d < DIGITS:
                    next_position[d] += np.int64(counts[j])
            cuda.syncthreads()  # (the next tile's offsets wait for every thread's reads)

    @cuda.jit(device=True)
    def sort_by_passes(keys_in, keys_out, keys_temp, values_in, values_out, values_temp, begin, end, first, temp,
                       digit_counts, next_position, offset_of_digit):
        # Every pass's digit counts, from one read of the segment (a pass permutes its keys) ...
        rank = cuda.threadIdx.x
        for d in range(rank, passes * DIGITS, threads):
            digit_counts[d] = 0
        cuda.syncthreads()
        keys = cuda.local.array(n_items, key_type)
        for base in range(begin, end, pass_tile_size):
            valid = min(end - base, pass_tile_size)
            coop.block.load(keys_in[base:], keys, threads=threads, items_per_thread=n_items, algorithm="striped",
                            valid_items=valid)
            for i in range(n_items):
                if rank + i * threads < valid:
                    bits = to_ordered(keys[i])
                    for p in range(passes):
                        cuda.atomic.add(digit_counts, p * DIGITS + digit_of(bits, p * RADIX_BITS, RADIX_BITS), 1)
        counts = cuda.local.array(tracked, np.int64)
        # Pass p writes the output where (p + first) is odd, the temporary where it is
        # even, and reads what the pass before wrote (the input, for the first).
        for p in range(passes):
            cuda.syncthreads()  # (the counts, and the previous pass's writes, seen by all)
            # ... become the pass's first position of each digit, in the sort's order
            for j in range(tracked):
                ranked = rank * tracked + j
                d = (DIGITS - 1 - ranked) if descending else ranked
                counts[j] = digit_counts[p * DIGITS + d] if ranked < DIGITS else 0
            coop.block.exclusive_sum(counts, counts, threads=threads, temp_storage=temp)
            for j in range(tracked):
                ranked = rank * tracked + j
                if ranked < DIGITS:
                    next_position[(DIGITS - 1 - ranked) if descending else ranked] = begin + counts[j]
            to_output = (p + first) % 2 == 1
            if p == 0:
                if to_output:
                    sort_pass(keys_in, keys_out, values_in, values_out, begin, end, 0, temp, next_position,
                              offset_of_digit)
                else:
                    sort_pass(keys_in, keys_temp, values_in, values_temp, begin, end, 0, temp, next_position,
                              offset_of_digit)
            elif to_output:
                sort_pass(keys_temp, keys_out, values_temp, values_out, begin, end, p * RADIX_BITS, temp,
                          next_position, offset_of_digit)
            else:
                sort_pass(keys_out, keys_temp, values_out, values_temp, begin, end, p * RADIX_BITS, temp,
                          next_position, offset_of_digit)
        if (passes - 1 + first) % 2 == 0:  # (in place, an odd number of passes: copied back)
            cuda.syncthreads()
            for k in range(begin + cuda.threadIdx.x, end, threads):
                keys_out[k] = keys_temp[k]
                if with_values:
                    values_out[k] = values_temp[k]

    def block_kernel(keys_in, keys_out, keys_temp, values_in, values_out, values_temp, offsets, first, large,
                     counters):
        temp = cuda.shared.array(temp_bytes, np.uint8, alignment=16)
        digit_counts = cuda.shared.array(passes * DIGITS, np.uint32)  # (every pass's: a segment may pass 2^31 keys)
        next_position = cuda.shared.array(DIGITS, np.int64)
        offset_of_digit = cuda.shared.array(DIGITS, np.int64)  # output position - tile position
        claimed = cuda.shared.array(1, np.int32)
        while True:
            if cuda.threadIdx.x == 0:
                index = cuda.atomic.add(counters, CLAIMED, 1)
                claimed[0] = large[index] if index < counters[LARGE] else -1
            cuda.syncthreads()
            segment = claimed[0]
            cuda.syncthreads()  # (read by every thread before the next claim)
            if segment < 0:
                break
            begin, end = np.int64(offsets[segment]), np.int64(offsets[segment + 1])
            if end - begin <= tile_size:
                sort_in_tile(keys_in, keys_out, values_in, values_out, begin, end - begin, temp)
            else:
                sort_by_passes(keys_in, keys_out, keys_temp, values_in, values_out, values_temp, begin, end, first,
                               temp, digit_counts, next_position, offset_of_digit)
        # the last block done leaves the counters at zero for the next call
        if cuda.threadIdx.x == 0 and cuda.atomic.add(counters, FINISHED, 1) == cuda.gridDim.x - 1:
            counters[LARGE] = 0
            counters[CLAIMED] = 0
            counters[FINISHED] = 0

    return (cuda.jit(without_dead_branches(warp_kernel)), cuda.jit(without_dead_branches(block_kernel)), passes)


@documented
@takes_temp_storage
def segmented_sort(d_keys, offsets, d_values=None, descending=False, d_keys_out=None, d_values_out=None, stream=None,
                   temp_storage=None):
    """Sort each segment of ``d_keys`` on its own, in place, and ``d_values`` with the
    keys, or into ``d_keys_out`` and ``d_values_out`` (CUB DeviceSegmentedSort::SortKeys,
    SortPairs, SortKeysDescending, SortPairsDescending; stable, as its StableSortKeys and
    StableSortPairs).

    Parameters
    ----------
    d_keys : device array
        The keys: bool, int8-int64, uint8-uint64, float16, float32 or float64, ordered as
        ``coop.device.radix_sort`` orders them (-0.0 and +0.0 as equal, NaNs by their
        bits).
        {device_array}
    offsets : device array
        ``len(offsets) - 1`` segments: segment ``s`` is ``d_keys[offsets[s]:offsets[s +
        1]]`` (int32 or int64, non-decreasing, within ``d_keys``). Keys outside every
        segment are left as they are (out of place: not written).
    d_values : device array, optional
        Values of any dtype, at least as long as ``d_keys``: permuted with the keys.
    descending : bool, default False
        Largest keys first (equal keys still keep their order).
    d_keys_out, d_values_out : device arrays, optional
        Where the sorted segments go (CUB's out-of-place form), of the dtypes of ``d_keys``
        and ``d_values`` and at least as long; ``d_values_out`` goes with ``d_keys_out``
        when there are values. Each must be its input itself (in place) or share no
        memory with it.
    stream : stream, optional
        {device_stream}
    temp_storage : device array, optional
        {device_temp_storage}

    Returns
    -------
    None
        {device_returns}

    Notes
    -----
    A warp sorts each segment of at most 256 keys (128 with 8-byte keys or values; 64 on
    the simulator). A block sorts each longer one, in shared memory up to 4,096 keys
    (2,048 with 8-byte keys or values; 256 on the simulator), and past that by a pass
    through global memory per 8 bits of the keys. Many segments keep the GPU busy; one
    very long segment is sorted by a single block (``coop.device.radix_sort`` sorts a
    single array with the whole GPU). Two launches, nothing waited for.

    Example
    -------
    Sorting each row of a ragged array of scores, largest first, with the items' indices::

        import numpy as np
        import coop
        from numba import cuda

        rng = np.random.default_rng(11)
        lengths = rng.integers(0, 300, 20)
        offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
        scores = rng.normal(size=offsets[-1]).astype(np.float32)
        d_scores, d_items = cuda.to_device(scores), cuda.to_device(np.arange(scores.size, dtype=np.int32))
        coop.device.segmented_sort(d_scores, cuda.to_device(offsets), d_items, descending=True)
        got_scores, got_items = d_scores.copy_to_host(), d_items.copy_to_host()
        for a, b in zip(offsets[:-1], offsets[1:]):
            order = a + np.argsort(-scores[a:b], kind="stable")
            assert (got_scores[a:b] == scores[order]).all()
            assert (got_items[a:b] == order).all()
    """
    function = "segmented_sort"
    d_keys = device_array(function, "d_keys", d_keys)
    n = d_keys.size
    check_key_dtype(function, d_keys)
    offsets = segment_offsets(function, offsets)
    d_values, keys_out, values_out, in_place = sort_outputs(function, d_keys, d_values, d_keys_out, d_values_out,
                                                            descending)
    stream = launch_stream(stream)
    segments = offsets.size - 1
    if segments == 0 or n == 0:
        return
    value_dtype = None if d_values is None else d_values.dtype
    warp_kernel, block_kernel, passes = _segment_kernels(d_keys.dtype, value_dtype, bool(descending))
    keys_temp = temporary("segmented_sort.keys", n, d_keys.dtype, stream)
    large = temporary("segmented_sort.large", segments, np.int32, stream)
    counters = zeroed_temporary("segmented_sort.counters", 3, np.int32, stream)
    values_temp = temporary("segmented_sort.values", n, value_dtype, stream) if d_values is not None else keys_temp
    values_in = d_values if d_values is not None else d_keys
    values_out = values_out if d_values is not None else keys_out
    first = 0 if in_place else passes % 2
    launch(warp_kernel, -(-segments // WARPS), THREADS, stream, d_keys, keys_out, values_in, values_out, offsets,
           segments, large, counters)
    launch(block_kernel, min(segments, resident_blocks(THREADS)), THREADS, stream, d_keys, keys_out, keys_temp,
           values_in, values_out, values_temp, offsets, first, large, counters)
