"""Device-wide radix sort (CUB's DeviceRadixSort, Onesweep: Adinets and Merrill, "Onesweep:
A Faster Least Significant Digit Radix Sort for GPUs", 2022): ``radix_sort(d_keys,
d_values=None, descending=False, begin_bit=0, end_bit=None, d_keys_out=None,
d_values_out=None)``, in place or into the outputs.

Keys are sorted by their ordered bits (``coop._core.radix``: signed integers with the
sign bit flipped, floats so that -0.0 and +0.0 sort as equal and NaNs by their bits), 8
bits a pass, least significant digit first, each pass stable. A sort of ``P`` passes is
``P + 1`` kernels:

1. The upsweep (``_histogram_kernel``): every block counts its tiles' digits of every
   pass into shared counters (``coop.block.histogram``, "atomic") and adds them to
   global ones; the last block to finish (``coop.device.lookback.block_arrives``, as
   ``coop.device.reduce``'s) turns each pass's counts into the digits' first output
   positions (``coop.block.exclusive_sum``) and zeroes the counts for the next call.
2. One scatter kernel a pass (``_onesweep_kernel``), one tile per block in claiming
   order (``coop.device.lookback.claim_tile``): the block loads its keys warp-striped
   (``coop.block.load``, "warp_striped"), ranks them by the pass's digit
   (``coop.block.radix_rank``, "match_early_counts": stable for warp-striped keys), and
   learns, per digit, how many keys of that digit the tiles before it hold, by a
   decoupled look-back per digit (each thread looks back for its digits; a tile publishes
   its own counts from the ranking's counts callback, before its keys are ranked, then
   its inclusive counts, with ``coop.device.lookback.tile_access``). The keys are then
   rearranged into rank order (``coop.block.exchange.scatter_to_striped``) and each is
   written at its digit's first position plus the keys of its digit before it, read
   coalesced from shared memory as CUB's ScatterKeysGlobalDirect; values follow the same
   ranks.

The passes alternate between the caller's arrays and temporary ones. In place, the first
pass writes a temporary (it cannot write the input it reads), and an odd number of
passes ends with a copy back; out of place, the passes start where they end in the
output (in it for an odd number, in the temporary for an even one), and nothing is
copied. A bit range whose width is not a multiple of 8 ends with a
pass over the range's last 8 bits, overlapping the pass before (sorting stably again by
bits already in order changes nothing): the passes are always 8-bit digits but for
ranges narrower than 8 bits. The last tile is padded with keys of the largest digit in
the sort's order, which rank after the real keys and are not written.
"""

import functools

import numpy as np
from numba import cuda
from numba.cuda.np.numpy_support import from_dtype

import coop
from coop._core import radix
from coop._core.backend import SIMULATOR
from coop._core.constants import without_dead_branches
from coop._core.errors import ArgumentTypeError, ArgumentValueError
from coop.block.radix_ranking import tracked_digits
from coop.device._host import (check_length, copy_items, device_array, documented, is_same_memory, launch,
                               launch_stream, resident_blocks, takes_temp_storage, temporary, zeroed_temporary)
from coop.device.lookback import AGGREGATE, INCLUSIVE, TileStates, block_arrives, claim_tile, tile_access
from coop.device._tiles import BLOCK_THREADS, tile_loader

__all__ = ["radix_sort"]
BUILDING_BLOCKS = ["check_key_dtype", "sort_outputs", "output_array"]  # (for coop.device.segmented_sort, top_k)

RADIX_BITS = 8
DIGITS = 1 << RADIX_BITS
# 384 threads of 20 keys, as CUB's SM90 Onesweep tuning for 4-byte keys; with values, 16
# (CUB's 23 measured 15% slower here). Measured on an H100, uint32 keys at 2^24 and 2^28:
# 256 threads of 20 or 24, 384 of 16 or 24 and 512 of 12 or 16 were slower for keys.
# Each thread looks back for DIGITS / THREADS digits (at least one; 8 on the simulator).
SORT_THREADS = 32 if SIMULATOR else 384
KEYS_PER_THREAD = 3 if SIMULATOR else 20
PAIRS_PER_THREAD = 3 if SIMULATOR else 16
SORT_BLOCKS_PER_SM = 2
EXCHANGE_BYTES = 40 * 1024  # (the key or value exchange; with the ranking's counters, under 48 KiB)
RANKING = "match_early_counts"  # (stable for warp-striped keys, as the loads leave them)
HISTOGRAM_THREADS = BLOCK_THREADS
HISTOGRAM_ITEMS = 2 if SIMULATOR else 16
MAX_ITEMS = 2**31 - 1  # (digit counts and positions are 32-bit)


def _passes(begin_bit, end_bit):
    """``(digit_bits, passes)`` for the bit range: pass ``p`` sorts by the digit of
    ``digit_bits`` bits from ``pass_begin(p, begin_bit, end_bit, digit_bits)``."""
    bits = end_bit - begin_bit
    return min(RADIX_BITS, bits), -(-bits // RADIX_BITS)


def _pass_begin(p, begin_bit, end_bit, digit_bits):
    return min(begin_bit + RADIX_BITS * p, end_bit - digit_bits)


pass_begin = cuda.jit(device=True)(_pass_begin)


def _items_per_thread(key_dtype, value_dtype):
    n = KEYS_PER_THREAD if value_dtype is None else PAIRS_PER_THREAD
    widest = max(np.dtype(key_dtype).itemsize, np.dtype(key_dtype if value_dtype is None else value_dtype).itemsize)
    return max(1, min(n, EXCHANGE_BYTES // (SORT_THREADS * widest)))


@functools.lru_cache(maxsize=None)
def _histogram_kernel(key_dtype, passes, digit_bits, descending):
    """Counts of every pass's digits (``passes`` passes of ``digit_bits`` bits) in
    ``counts``, and from them each digit's first output position, ``positions[p * DIGITS
    + r]`` for the digit ranked ``r`` (``d``, or ``2**digit_bits - 1 - d`` descending).
    ``counts[passes * DIGITS]`` counts the blocks that have finished."""
    key_type = from_dtype(np.dtype(key_dtype))
    to_ordered, digit_of = radix.to_ordered(key_type), radix.digit(key_type)
    threads, n_items = HISTOGRAM_THREADS, HISTOGRAM_ITEMS
    tile_size = threads * n_items
    bins_per_thread = DIGITS // threads  # (a thread's digits in the last block's scan)
    digits = 1 << digit_bits
    load = tile_loader(threads, n_items, "striped")

    def histogram_kernel(keys, n, begin_bit, end_bit, counts, positions):
        counters = cuda.shared.array(passes * DIGITS, np.int32)
        last = cuda.shared.array(1, np.int32)
        loaded = cuda.local.array(n_items, key_type)
        digit = cuda.local.array(n_items, np.int32)
        rank = cuda.threadIdx.x
        for i in range(passes * bins_per_thread):
            counters[i * threads + rank] = 0
        cuda.syncthreads()
        for base in range(cuda.blockIdx.x * tile_size, n, cuda.gridDim.x * tile_size):
            valid = min(n - base, tile_size)
            load(keys[base:], loaded, valid, None)
            for p in range(passes):
                begin = pass_begin(p, begin_bit, end_bit, digit_bits)
                for i in range(n_items):
                    value = digit_of(to_ordered(loaded[i]), begin, digit_bits)
                    digit[i] = (digits - 1 - value) if descending else value
                    if valid != tile_size and rank + i * threads >= valid:
                        digit[i] = DIGITS  # (past the end: not counted)
                coop.block.histogram(digit, counters[p * DIGITS:], DIGITS, threads=threads, items_per_thread=n_items,
                                     algorithm="atomic", accumulate=True)
        cuda.syncthreads()
        for i in range(passes * bins_per_thread):
            count = counters[i * threads + rank]
            if count:
                cuda.atomic.add(counts, i * threads + rank, count)
        # The last block to arrive turns the counts into first positions.
        if block_arrives(counts, passes * DIGITS, last):
            held = cuda.local.array(bins_per_thread, np.int32)
            for p in range(passes):
                # thread r holds the digits ranked r*B .. r*B+B-1 (in the sort's order)
                for i in range(bins_per_thread):
                    ranked = rank * bins_per_thread + i
                    held[i] = counts[p * DIGITS + ranked]
                coop.block.exclusive_sum(held, output=held, threads=threads)
                for i in range(bins_per_thread):
                    ranked = rank * bins_per_thread + i
                    positions[p * DIGITS + ranked] = held[i]
                    counts[p * DIGITS + ranked] = 0

    return cuda.jit(without_dead_branches(histogram_kernel)), tile_size


@functools.lru_cache(maxsize=None)
def _onesweep_kernel(key_dtype, value_dtype, digit_bits, descending):
    """One pass: keys (and values) of ``keys_in`` scattered to ``keys_out`` in the order
    of their ``digit_bits``-bit digit from bit ``begin_bit``, stably."""
    key_type = from_dtype(np.dtype(key_dtype))
    with_values = value_dtype is not None
    value_type = from_dtype(np.dtype(key_dtype if value_dtype is None else value_dtype))
    to_ordered, from_ordered, digit_of = radix.to_ordered(key_type), radix.from_ordered(key_type), radix.digit(key_type)
    threads, n_items = SORT_THREADS, _items_per_thread(key_dtype, value_dtype)
    tile_size = threads * n_items
    digits = 1 << digit_bits
    tracked = tracked_digits(threads, digit_bits)  # (the digits a thread looks back for: radix_rank's)
    load_values = tile_loader(threads, n_items, "warp_striped")
    padding_bits = radix.last_ordered_bits(key_type, descending)  # (the last tile's)
    temp_bytes = max(
        coop.block.radix_rank.temp_storage_bytes(key_type, threads, digit_bits, algorithm=RANKING),
        coop.block.exchange.scatter_to_striped.temp_storage_bytes(key_type, threads, n_items),
        coop.block.exchange.scatter_to_striped.temp_storage_bytes(value_type, threads, n_items) if with_values else 0,
    )
    publish, read = tile_access(np.uint32)

    @cuda.jit(device=True)
    def publish_counts(state, counts):
        # the ranking's counts callback: the tile's count of each digit, published before
        # its keys are ranked (the first tile's counts are already inclusive)
        status, tile, epoch = state
        for j in range(tracked):
            d = cuda.threadIdx.x * tracked + j
            if d < digits:
                publish(status, status, status, tile * DIGITS + d, epoch, INCLUSIVE if tile == 0 else AGGREGATE,
                        counts[j])

    def onesweep_kernel(keys_in, keys_out, values_in, values_out, n, positions, first_position, begin_bit, status,
                        epoch):
        temp = cuda.shared.array(temp_bytes, np.uint8, alignment=16)
        tile_slot = cuda.shared.array(1, np.int32)
        offset_of_digit = cuda.shared.array(DIGITS, np.int32)  # output position - tile position
        keys = cuda.local.array(n_items, key_type)
        ranks = cuda.local.array(n_items, np.int32)
        digit_prefix = cuda.local.array(tracked, np.int32)
        counts = cuda.local.array(tracked, np.uint32)
        digit = cuda.local.array(n_items, np.uint32)
        tile = claim_tile(status, (n + tile_size - 1) // tile_size, tile_slot)
        base = tile * tile_size
        valid = min(n - base, tile_size)
        rank = cuda.threadIdx.x
        if valid == tile_size:
            coop.block.load(keys_in[base:], keys, threads=threads, items_per_thread=n_items, algorithm="warp_striped")
        else:
            coop.block.load(keys_in[base:], keys, threads=threads, items_per_thread=n_items, algorithm="warp_striped",
                            valid_items=valid, oob_default=from_ordered(padding_bits))
        coop.block.radix_rank(keys, ranks, begin_bit, digit_bits, threads=threads, items_per_thread=n_items,
                              descending=descending, algorithm=RANKING, exclusive_digit_prefix=digit_prefix,
                              digit_counts=counts, counts_op=publish_counts, counts_state=(status, tile, epoch),
                              temp_storage=temp)
        # the look-back, digit by digit: the counts of the tiles before, back to one
        # that has published its inclusive count
        for j in range(tracked):
            d = rank * tracked + j
            if d < digits:
                before = np.int32(0)
                predecessor = tile - 1
                while predecessor >= 0:
                    flag, value = read(status, status, status, predecessor * DIGITS + d, epoch, np.uint32(0))
                    before += np.int32(value)
                    if flag == INCLUSIVE:
                        break
                    predecessor -= 1
                if tile != 0:
                    publish(status, status, status, tile * DIGITS + d, epoch, INCLUSIVE,
                            np.uint32(before + counts[j]))
                ranked = (digits - 1 - d) if descending else d
                offset_of_digit[d] = positions[first_position + ranked] + before - digit_prefix[j]
        coop.block.exchange.scatter_to_striped(keys, keys, ranks, threads=threads, items_per_thread=n_items,
                                               temp_storage=temp)
        cuda.syncthreads()  # (offset_of_digit written)
        for i in range(n_items):
            position = np.uint32(rank + i * threads)
            digit[i] = digit_of(to_ordered(keys[i]), begin_bit, digit_bits)
            if valid == tile_size or position < valid:
                keys_out[np.uint32(offset_of_digit[digit[i]] + position)] = keys[i]
        if with_values:
            values = cuda.local.array(n_items, value_type)
            load_values(values_in[base:], values, valid, None)
            cuda.syncthreads()  # (the keys' exchange has been read)
            coop.block.exchange.scatter_to_striped(values, values, ranks, threads=threads, items_per_thread=n_items,
                                                   temp_storage=temp)
            for i in range(n_items):
                position = np.uint32(rank + i * threads)
                if valid == tile_size or position < valid:
                    values_out[np.uint32(offset_of_digit[digit[i]] + position)] = values[i]

    # at most 80 registers (384 threads): two blocks an SM, as CUB's kernel
    jit = cuda.jit(launch_bounds=(threads, SORT_BLOCKS_PER_SM))
    return jit(without_dead_branches(onesweep_kernel)), tile_size


@functools.lru_cache(maxsize=None)
def _key_bits(dtype):
    """The width of ``dtype`` keys in bits, or None for a dtype that is not a radix key's
    (once per dtype: off the per-call path)."""
    key_type = from_dtype(dtype)
    return radix.key_bits(key_type) if radix.is_key_type(key_type) else None


def sort_outputs(function, d_keys, d_values, d_keys_out, d_values_out, descending):
    """The sorts' checks of their values, outputs and ``descending`` (``function``'s, by
    name), and ``(d_values, keys_out, values_out, in_place)``: the values as a device
    array, and where the sorted keys and values go (the inputs themselves in place;
    ``values_out`` None without values)."""
    n = d_keys.size
    if d_values is not None:
        d_values = device_array(function, "d_values", d_values)
        check_length(function, "d_values", d_values, n)
    if d_values_out is not None and d_keys_out is None:
        raise ArgumentValueError(f"coop.device.{function}: d_values_out is given without d_keys_out (the keys and "
                                 "values are sorted out of place together)")
    if d_keys_out is not None:
        d_keys_out = output_array(function, "d_keys_out", d_keys_out, "d_keys", d_keys, n)
        if d_values is not None:
            if d_values_out is None:
                raise ArgumentValueError(f"coop.device.{function}: d_values_out is needed with d_keys_out and "
                                         "d_values (the values are sorted out of place with the keys)")
            d_values_out = output_array(function, "d_values_out", d_values_out, "d_values", d_values, n)
        elif d_values_out is not None:
            raise ArgumentValueError(f"coop.device.{function}: d_values_out is given without d_values")
    if not isinstance(descending, (bool, np.bool_)):
        raise ArgumentTypeError(f"coop.device.{function}: descending must be a bool, got {descending!r}")
    in_place = d_keys_out is None or is_same_memory(function, "d_keys_out", d_keys_out, "d_keys", d_keys)
    if (d_keys_out is not None and d_values is not None and
            is_same_memory(function, "d_values_out", d_values_out, "d_values", d_values) != in_place):
        raise ArgumentValueError(f"coop.device.{function}: d_keys_out and d_values_out must both be their inputs "
                                 "(in place) or both apart from them")
    keys_out, values_out = (d_keys, d_values) if in_place else (d_keys_out, d_values_out)
    return d_values, keys_out, values_out, in_place


def output_array(function, name, out, input_name, d_input, n, apart=False):
    """``out`` (``function``'s output ``name``, of ``d_input``'s dtype, at least ``n``
    long) as a device array; ``apart``: refused if it starts where ``d_input`` does."""
    out = device_array(function, name, out)
    check_length(function, name, out, n)
    if out.dtype != d_input.dtype:
        raise ArgumentTypeError(f"coop.device.{function}: {name}'s dtype {out.dtype} differs from {input_name}'s "
                                f"{d_input.dtype}")
    if apart and is_same_memory(function, name, out, input_name, d_input):
        raise ArgumentValueError(f"coop.device.{function}: {name} is {input_name} itself; it must share no memory "
                                 f"with it")
    return out


def check_key_dtype(function, d_keys):
    """The width of ``d_keys``' keys in bits, or an ``ArgumentTypeError`` naming
    ``function`` where they are not radix keys."""
    key_bits = _key_bits(d_keys.dtype)
    if key_bits is None:
        raise ArgumentTypeError(f"coop.device.{function}: d_keys must hold radix keys ({radix.KEY_TYPE_NAMES}), "
                                f"got {d_keys.dtype}")
    return key_bits


def _check_bits(name, value, low, high, key_bits):
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or not low <= value <= high:
        raise ArgumentValueError(f"coop.device.radix_sort: {name} must be an integer from {low} to {high} (the keys "
                                 f"have {key_bits} bits), got {value!r}")
    return int(value)


@documented
@takes_temp_storage
def radix_sort(d_keys, d_values=None, descending=False, begin_bit=0, end_bit=None, d_keys_out=None,
               d_values_out=None, stream=None, temp_storage=None):
    """Sort ``d_keys`` in place, and ``d_values`` with them, or into ``d_keys_out`` and
    ``d_values_out`` (CUB DeviceRadixSort::SortKeys, SortPairs, SortKeysDescending,
    SortPairsDescending): stable, by the bits ``begin_bit`` to ``end_bit - 1`` of the
    keys' ordered bits.

    Parameters
    ----------
    d_keys : device array
        The keys, may be empty: bool, int8-int64, uint8-uint64, float16, float32 or
        float64. Floats sort -0.0 and +0.0 as equal (keeping their order) and NaNs by
        their bits: positive NaNs after +inf, negative NaNs before -inf.
        {device_array}
    d_values : device array, optional
        Values of any dtype, at least as long as ``d_keys``: its first ``len(d_keys)``
        items are permuted with the keys.
    descending : bool, default False
        Largest keys first (equal keys still keep their order).
    begin_bit, end_bit : int, default 0 and the keys' width
        The bits that order the keys, ``begin_bit <= end_bit``: keys equal in them keep
        their order (a range narrower than the keys is faster: a pass per 8 bits).
    d_keys_out, d_values_out : device arrays, optional
        Where the sorted keys and values go (CUB's out-of-place form), of the dtypes of
        ``d_keys`` and ``d_values`` and at least as long; ``d_keys`` and ``d_values``
        are then left as they are. ``d_values_out`` goes with ``d_keys_out`` when there
        are values. Each must be its input itself (in place) or share no memory with it.
        An in-place sort of an odd number of passes (a 24-bit range, 8-bit keys) ends
        with a copy of the keys and values back; out of place, none ever does.
    stream : stream, optional
        {device_stream}
    temp_storage : device array, optional
        {device_temp_storage}

    Returns
    -------
    None
        {device_returns}

    Example
    -------
    Sorting float32 keys descending, with their positions as values (an argsort)::

        import numpy as np
        import coop
        from numba import cuda

        keys = np.random.default_rng(6).normal(size=5000).astype(np.float32)
        d_keys, d_values = cuda.to_device(keys), cuda.to_device(np.arange(keys.size, dtype=np.int32))
        coop.device.radix_sort(d_keys, d_values, descending=True)
        order = np.argsort(-keys, kind="stable")
        assert (d_keys.copy_to_host() == keys[order]).all()
        assert (d_values.copy_to_host() == order).all()
    """
    d_keys = device_array("radix_sort", "d_keys", d_keys)
    n = d_keys.size
    key_bits = check_key_dtype("radix_sort", d_keys)
    d_values, keys_out, values_out, in_place = sort_outputs("radix_sort", d_keys, d_values, d_keys_out,
                                                            d_values_out, descending)
    end_bit = key_bits if end_bit is None else _check_bits("end_bit", end_bit, 0, key_bits, key_bits)
    begin_bit = _check_bits("begin_bit", begin_bit, 0, end_bit, key_bits)
    if n > MAX_ITEMS:
        raise ArgumentValueError(f"coop.device.radix_sort: d_keys has {n} items, at most {MAX_ITEMS} are supported")
    stream = launch_stream(stream)
    if n <= 1 or begin_bit == end_bit:  # (in order already)
        if not in_place and n:
            copy_items(d_keys, keys_out, n, stream)
            if d_values is not None:
                copy_items(d_values, values_out, n, stream)
        return
    descending = bool(descending)
    digit_bits, passes = _passes(begin_bit, end_bit)
    value_dtype = None if d_values is None else d_values.dtype

    histogram, histogram_tile = _histogram_kernel(d_keys.dtype, passes, digit_bits, descending)
    counts = zeroed_temporary("radix_sort.counts", passes * DIGITS + 1, np.int32, stream)
    positions = temporary("radix_sort.positions", passes * DIGITS, np.int32, stream)
    blocks = min(-(-n // histogram_tile), resident_blocks(HISTOGRAM_THREADS))
    launch(histogram, blocks, HISTOGRAM_THREADS, stream, d_keys, n, begin_bit, end_bit, counts, positions)

    onesweep, tile_size = _onesweep_kernel(d_keys.dtype, value_dtype, digit_bits, descending)
    tiles = -(-n // tile_size)
    # Pass p writes targets[(p + first) % 2] and reads what the pass before wrote (the
    # input, for the first). In place, the first pass cannot write the input it reads: the
    # passes start in the temporary, and an odd number of them ends there (copied back).
    # Out of place, the first pass writes the output for an odd number of passes and the
    # temporary for an even one, so that the last writes the output.
    needs_temporary = in_place or passes > 1
    key_targets = (temporary("radix_sort.keys", n, d_keys.dtype, stream) if needs_temporary else None, keys_out)
    value_targets = ((temporary("radix_sort.values", n, value_dtype, stream) if needs_temporary else None, values_out)
                     if d_values is not None else key_targets)
    first = 0 if in_place else passes % 2
    keys_in, values_in = d_keys, d_values if d_values is not None else d_keys
    for p in range(passes):
        target = (p + first) % 2
        begin = _pass_begin(p, begin_bit, end_bit, digit_bits)
        states = TileStates(tiles * DIGITS, np.uint32, stream)  # (an epoch a pass)
        launch(onesweep, tiles, SORT_THREADS, stream, keys_in, key_targets[target], values_in, value_targets[target],
               n, positions, p * DIGITS, begin, states.status, states.epoch)
        keys_in, values_in = key_targets[target], value_targets[target]
    if keys_in is not keys_out:  # (in place, an odd number of passes)
        copy_items(keys_in, keys_out, n, stream)
        if d_values is not None:
            copy_items(values_in, values_out, n, stream)
