"""Device-wide segmented sorts (CUB's DeviceSegmentedSort::SortKeys, SortPairs and their
Descending forms): ``segmented_sort(d_keys, offsets, d_values=None, descending=False,
d_keys_out=None, d_values_out=None)``, each segment sorted stably on its own.

One block per segment, as CUB's segmented radix sort:

- a segment of at most one tile is sorted in the block's registers and shared memory:
  loaded (``coop.block.load``, past its end padded with keys that sort last), sorted by
  every bit (``coop.block.radix_sort``, "blocked_to_striped") and stored striped
  (``coop.block.store``), values with the keys;
- a longer one by least-significant-digit passes of 8 bits through global memory, as
  the device radix sort's (``coop.device.radix_sort``) but within the block: each pass
  counts the segment's digits (shared atomics), turns the counts into each digit's first
  position (in the sort's order), then ranks the segment tile by tile in order
  (``coop.block.radix_rank``, "match_early_counts" over warp-striped loads: stable),
  rearranges each tile into rank order (``coop.block.exchange.scatter_to_striped``) and
  writes each key at its digit's next position. The passes alternate between the output
  and a temporary, starting so that the last writes the output (in place, the first
  writes the temporary, and an odd number of passes ends with the block copying its
  segment back).
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
from coop.device._host import (device_array, documented, launch, launch_stream, segment_offsets, takes_temp_storage,
                               temporary)
from coop.device.radix_sort import check_key_dtype, sort_outputs
from coop.device._tiles import BLOCK_THREADS, items_per_thread

__all__ = ["segmented_sort"]

THREADS = BLOCK_THREADS
TILE_BYTES_PER_THREAD = 3 if SIMULATOR else 32  # (4-byte keys: tiles of 2048 keys)
MAX_ITEMS_PER_THREAD = 16
RADIX_BITS = 8
DIGITS = 1 << RADIX_BITS
RANKING = "match_early_counts"  # (stable for warp-striped keys, as the loads leave them)


def _items_per_thread(key_dtype, value_dtype):
    dtypes = (key_dtype,) if value_dtype is None else (key_dtype, value_dtype)
    if SIMULATOR:
        return TILE_BYTES_PER_THREAD
    return min(MAX_ITEMS_PER_THREAD, items_per_thread(TILE_BYTES_PER_THREAD, *dtypes))


@functools.lru_cache(maxsize=None)
def _segment_kernel(key_dtype, value_dtype, descending):
    """The kernel sorting segment ``blockIdx.x`` of ``keys_in`` (and ``values_in``) into
    ``keys_out`` (``values_out``), through ``keys_temp`` (``values_temp``) where it is
    longer than a tile."""
    key_type = from_dtype(np.dtype(key_dtype))
    with_values = value_dtype is not None
    value_type = from_dtype(np.dtype(key_dtype if value_dtype is None else value_dtype))
    to_ordered, from_ordered, digit_of = radix.to_ordered(key_type), radix.from_ordered(key_type), radix.digit(key_type)
    threads, n_items = THREADS, _items_per_thread(key_dtype, value_dtype)
    tile_size = threads * n_items
    passes = -(-radix.key_bits(key_type) // RADIX_BITS)
    tracked = tracked_digits(threads, RADIX_BITS)
    # padding: the largest ordered bits (ascending) or the smallest, which sort last
    bits_dtype = np.dtype("uint%d" % radix.key_bits(key_type))
    padding_bits = bits_dtype.type(0 if descending else np.iinfo(bits_dtype).max)
    temp_bytes = max(
        coop.block.radix_sort.temp_storage_bytes(key_type, threads, n_items,
                                                 value_dtype=value_type if with_values else None),
        coop.block.radix_rank.temp_storage_bytes(key_type, threads, RADIX_BITS, algorithm=RANKING),
        coop.block.exchange.scatter_to_striped.temp_storage_bytes(key_type, threads, n_items),
        coop.block.exchange.scatter_to_striped.temp_storage_bytes(value_type, threads, n_items) if with_values else 0,
    )

    @cuda.jit(device=True)
    def sort_in_tile(keys_in, keys_out, values_in, values_out, begin, size, temp):
        keys = cuda.local.array(n_items, key_type)
        values = cuda.local.array(n_items, value_type)
        coop.block.load(keys_in[begin:], keys, threads=threads, items_per_thread=n_items, valid_items=size,
                        oob_default=from_ordered(padding_bits))
        if with_values:
            coop.block.load(values_in[begin:], values, threads=threads, items_per_thread=n_items, valid_items=size)
            coop.block.radix_sort(keys, values, threads=threads, items_per_thread=n_items, descending=descending,
                                  blocked_to_striped=True, temp_storage=temp)
            coop.block.store(values_out[begin:], values, threads=threads, items_per_thread=n_items,
                             algorithm="striped", valid_items=size)
        else:
            coop.block.radix_sort(keys, threads=threads, items_per_thread=n_items, descending=descending,
                                  blocked_to_striped=True, temp_storage=temp)
        coop.block.store(keys_out[begin:], keys, threads=threads, items_per_thread=n_items, algorithm="striped",
                         valid_items=size)

    @cuda.jit(device=True)
    def sort_pass(keys_in, keys_out, values_in, values_out, begin, end, begin_bit, temp, next_position,
                  offset_of_digit):
        """One pass over the segment ``begin:end``: its keys (values) of ``keys_in``
        (``values_in``) to ``keys_out`` (``values_out``) in the order of their digit from
        ``begin_bit``, stably."""
        rank = cuda.threadIdx.x
        keys = cuda.local.array(n_items, key_type)
        ranks = cuda.local.array(n_items, np.int32)
        digit_prefix = cuda.local.array(tracked, np.int32)
        counts = cuda.local.array(tracked, np.uint32)
        digit = cuda.local.array(n_items, np.uint32)
        # the segment's count of each digit (next_position, zeroed by the caller) ...
        for base in range(begin, end, tile_size):
            valid = min(end - base, tile_size)
            coop.block.load(keys_in[base:], keys, threads=threads, items_per_thread=n_items, algorithm="striped",
                            valid_items=valid)
            for i in range(n_items):
                if rank + i * threads < valid:
                    cuda.atomic.add(next_position, digit_of(to_ordered(keys[i]), begin_bit, RADIX_BITS), 1)
        cuda.syncthreads()
        # ... become each digit's first position in the sort's order (a few hundred
        # additions, once a pass)
        if rank == 0:
            position = begin
            for ranked in range(DIGITS):
                d = (DIGITS - 1 - ranked) if descending else ranked
                count = next_position[d]
                next_position[d] = position
                position += count
        for base in range(begin, end, tile_size):
            valid = min(end - base, tile_size)
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

    def segment_kernel(keys_in, keys_out, keys_temp, values_in, values_out, values_temp, offsets, first):
        temp = cuda.shared.array(temp_bytes, np.uint8, alignment=16)
        next_position = cuda.shared.array(DIGITS, np.int64)
        offset_of_digit = cuda.shared.array(DIGITS, np.int64)  # output position - tile position
        segment = cuda.blockIdx.x
        begin, end = np.int64(offsets[segment]), np.int64(offsets[segment + 1])
        if end - begin <= tile_size:
            if end > begin:
                sort_in_tile(keys_in, keys_out, values_in, values_out, begin, end - begin, temp)
            return
        # Pass p writes the output where (p + first) is odd, the temporary where it is
        # even, and reads what the pass before wrote (the input, for the first).
        for p in range(passes):
            for j in range(tracked):
                d = cuda.threadIdx.x * tracked + j
                if d < DIGITS:
                    next_position[d] = 0
            cuda.syncthreads()  # (the zeros, and the previous pass's writes, seen by all)
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

    return cuda.jit(without_dead_branches(segment_kernel)), passes


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
    One block sorts each segment: a segment of at most a tile (2,048 4-byte keys, fewer
    with wider keys or values; 96 on the simulator) in shared memory, a longer one by a
    pass through global memory per 8 bits of the keys. Many small and medium segments
    keep the GPU busy; one very long segment is sorted by a single block
    (``coop.device.radix_sort`` sorts a single array with the whole GPU).

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
    kernel, passes = _segment_kernel(d_keys.dtype, value_dtype, bool(descending))
    keys_temp = temporary("segmented_sort.keys", n, d_keys.dtype, stream)
    values_temp = temporary("segmented_sort.values", n, value_dtype, stream) if d_values is not None else keys_temp
    values_in = d_values if d_values is not None else d_keys
    values_out = values_out if d_values is not None else keys_out
    first = 0 if in_place else passes % 2
    launch(kernel, segments, THREADS, stream, d_keys, keys_out, keys_temp, values_in, values_out, values_temp, offsets,
           first)
