"""Device-wide top-k (CUB's DeviceTopK::MaxKeys, MinKeys, MaxPairs, MinPairs):
``top_k(d_keys, d_keys_out, k, d_values=None, d_values_out=None, largest=True)``, the
``k`` largest (or smallest) keys, and their values, in no particular order.

A radix select, CUB's (AIR top-k), over the keys' ordered bits (``coop._core.radix``,
-0.0 as +0.0) a digit at a time from the most significant: 11-bit digits (8 for
one-byte keys), the last one narrower where the key's bits run out. ``passes + 1``
launches that the host never waits on; each grid fills the GPU once and strides over
its items in tiles. After each digit's counts, the last block to finish
(``coop.device.lookback.block_arrives``) picks the digit holding the ``k``-th best key
(``coop.block.exclusive_sum`` over the digits, best first), adds it to the chosen
prefix, keeps how many keys share the prefix (the candidates) and how many of them are
still wanted, and zeroes the counters for the next launch:

- the first launch counts the first digit of every key;
- each middle launch classes the keys against the prefix so far: better (selected),
  equal (a candidate, whose next digit is counted) or worse. While the candidates are
  more than fit the buffer (1/128 of the keys, as CUB's), nothing is written and the
  next launch reads all the keys again; from the launch where they fit, the selected go
  to the output and the candidates (keys, and their positions where there are values)
  to the buffer, which the next launch reads instead;
- the last selects the better ones, and of those equal to the ``k``-th best key (ties)
  as many as are still wanted.

A launch whose candidates are all wanted writes them with the selected and ends the
select there (CUB's early stop). Writes take their positions a tile at a time: a warp's
exclusive sum of its lanes' counts (``coop.warp.exclusive_sum``), one atomic add a warp
for each kind of key written, its result broadcast (``coop.warp.broadcast``); a lane's
keys of a kind go to consecutive positions. Selected keys fill the output from its start
in no fixed order; ties fill the last positions, the earliest to arrive first.
"""

import functools

import numpy as np
from numba import cuda
from numba.cuda.np.numpy_support import from_dtype

import coop
from coop._core import radix
from coop._core.constants import without_dead_branches
from coop._core.errors import ArgumentTypeError, ArgumentValueError
from coop.block.radix_ranking import tracked_digits
from coop.device._host import (check_length, copy_items, device_array, documented, kernel_resident_blocks, launch,
                               launch_stream, takes_temp_storage, temporary, zeroed_temporary)
from coop.device._tiles import BLOCK_THREADS, items_per_thread, tile_loader
from coop.device.lookback import block_arrives
from coop.device.radix_sort import check_key_dtype, output_array

__all__ = ["top_k"]

THREADS = BLOCK_THREADS  # (CUB's 512 with 32 registers a thread spill here; 512 unbounded: as fast)
THREAD_BYTES = 32  # (a thread's keys of a tile: two vector loads; 10% faster than CUB's one on an H200)
MAX_ITEMS = 16  # (one-byte keys: no more unrolled work a tile than 16 keys)
# the kept state (int64): the keys of the chosen prefix still wanted, the keys sharing it
# (the candidates; 0 once all are written), the keys in the buffer to read (-1: read the
# input), the keys selected so far, the candidates written to the buffer by this launch,
# the ties taken
WANTED, CANDIDATES, BUFFERED, SELECTED, FILTERED, TIES = range(6)
SELECT, CANDIDATE, DROP = range(3)  # a key's class against the prefix


CANDIDATE_BUFFER_DIVISOR = 128  # (CUB's: a buffer of 1/128 of the keys)


def candidate_buffer_length(n):
    """The most candidates written to a buffer (``1 / CANDIDATE_BUFFER_DIVISOR`` of the
    keys): while there are more, each launch reads all the keys instead."""
    return max(1, n // CANDIDATE_BUFFER_DIVISOR)


def radix_bits(key_bits):
    """A digit's bits (CUB's: 8 for one-byte keys, else 11)."""
    return 8 if key_bits <= 8 else 11


@functools.lru_cache(maxsize=None)
def _kernels(key_dtype, value_dtype, largest):
    """``(count_kernel, filter_kernel, select_kernel, passes, digits, tile_size)``."""
    key_type = from_dtype(np.dtype(key_dtype))
    with_values = value_dtype is not None
    comparable = radix.comparable(key_type)
    key_bits = radix.key_bits(key_type)
    bits = radix_bits(key_bits)
    passes = -(-key_bits // bits)
    digits = 1 << bits
    tracked = tracked_digits(THREADS, bits)
    items = min(MAX_ITEMS, items_per_thread(THREAD_BYTES, key_dtype))
    tile_size = THREADS * items
    load = tile_loader(THREADS, items, "vectorize")  # (blocked: the order is free)
    scan_bytes = coop.block.exclusive_sum.temp_storage_bytes(from_dtype(np.dtype(np.int64)), THREADS)

    # digits and prefixes of keys of 4 bytes or fewer in 32-bit arithmetic (Numba widens
    # narrow unsigned ints to 64 bits): twice the keys counted in a cycle
    narrow = key_bits <= 32
    extract = radix.comparable_digit(key_type)
    prefix_type = np.uint32 if narrow else np.uint64
    no_bits = np.dtype(f"uint{key_bits}").type(0)  # (a key left out: the ordered bits' type)

    @cuda.jit(device=True)
    def shift_and_width(p):
        """Digit ``p``'s lowest bit and its width (the last may be narrower)."""
        shift = max(0, key_bits - (p + 1) * bits)
        return shift, key_bits - p * bits - shift

    @cuda.jit(device=True)
    def best_first_digit(ordered, p):
        """Digit ``p`` of ``ordered`` bits, numbered best first."""
        shift, width = shift_and_width(p)
        d = extract(ordered, shift, width)
        return np.int32(d ^ np.uint32((1 << width) - 1)) if largest else np.int32(d)

    def class_of(ordered, p, prefix):
        """The key's class against ``prefix`` (``prefix_type``), the chosen digits 0 ..
        ``p``."""
        shift, width = shift_and_width(p)
        if narrow:
            top = prefix_type(ordered) if shift == 0 else prefix_type(extract(ordered, shift, key_bits - shift))
        else:
            top = np.uint64(ordered) >> np.uint64(shift)
        if top == prefix:
            return CANDIDATE
        if (top > prefix) if largest else (top < prefix):
            return SELECT
        return DROP

    class_of = cuda.jit(device=True)(without_dead_branches(class_of))

    @cuda.jit(device=True)
    def warp_claims(first, second, state, first_index, second_index):
        """Positions for a lane's ``first`` keys of one kind, taken from
        ``state[first_index]``, and its ``second`` of another, from
        ``state[second_index]``: each lane's run after the lower lanes', one atomic add a
        warp for each kind (every lane calls it, with counts below 2**16)."""
        counts = np.uint32(first) | (np.uint32(second) << np.uint32(16))
        before, total = coop.warp.exclusive_sum(counts, return_aggregate=True)
        claimed = np.int64(0)
        if cuda.laneid == 0 and (total & np.uint32(0xFFFF)) != 0:
            claimed = cuda.atomic.add(state, first_index, np.int64(total & np.uint32(0xFFFF)))
        if cuda.laneid == 1 and (total >> np.uint32(16)) != 0:
            claimed = cuda.atomic.add(state, second_index, np.int64(total >> np.uint32(16)))
        return (coop.warp.broadcast(claimed, 0) + (before & np.uint32(0xFFFF)),
                coop.warp.broadcast(claimed, 1) + (before >> np.uint32(16)))

    @cuda.jit(device=True)
    def count_digits(tile_digits, counts):
        """The tile's digits (``digits``: not counted) added to the shared ``counts``:
        ``coop.block.histogram``'s "atomic", a shared atomic a key, as CUB's (aggregating a
        warp's lanes of one digit first, by a match, was slower on an H200)."""
        coop.block.histogram(tile_digits, counts, digits, threads=THREADS, items_per_thread=items, accumulate=True)

    @cuda.jit(device=True)
    def zeroed_counts(counts):
        for d in range(cuda.threadIdx.x, digits, THREADS):
            counts[d] = 0
        cuda.syncthreads()

    @cuda.jit(device=True)
    def count_into(counts, counters):
        """The block's shared ``counts`` added to the global ``counters``."""
        cuda.syncthreads()
        for d in range(cuda.threadIdx.x, digits, THREADS):
            if counts[d] != 0:
                cuda.atomic.add(counters, d, counts[d])

    @cuda.jit(device=True)
    def choose(counters, state, prefix, wanted, p, temp):
        """(The last block, every thread.) The digit ``p`` holding the ``wanted``-th best
        key among those counted: added to ``prefix``, how many keys have it and how many
        of them are wanted to ``state``; the counters zeroed."""
        rank = cuda.threadIdx.x
        before = cuda.local.array(tracked, np.int64)
        for j in range(tracked):
            d = rank * tracked + j
            before[j] = counters[d] if d < digits else 0
        coop.block.exclusive_sum(before, before, threads=THREADS, temp_storage=temp)
        shift, width = shift_and_width(p)
        chosen_prefix = np.uint64(0) if p == 0 else prefix[0]
        for j in range(tracked):
            d = rank * tracked + j
            if d < digits:
                count = np.int64(counters[d])
                if before[j] < wanted <= before[j] + count:
                    state[WANTED] = wanted - before[j]
                    state[CANDIDATES] = count
                    raw = ((1 << width) - 1) - d if largest else d
                    prefix[0] = (chosen_prefix << np.uint64(width)) | np.uint64(raw)
                counters[d] = 0

    @cuda.jit(device=True)
    def load_tile(keys, in_keys, buffered, base, count, tile):
        """The tile of the launch's input (``in_keys`` if ``buffered``, else ``keys``)
        at ``base``: thread ``t``'s keys are those from ``base + t * items``."""
        valid = min(count - base, tile_size)
        if buffered:
            load(in_keys[base:], tile, valid, None)
        else:
            load(keys[base:], tile, valid, None)

    @cuda.jit(device=True)
    def first_tile(keys, in_keys, buffered, count, ahead):
        """The block's first tile read into ``ahead`` (``tile_ahead`` takes it)."""
        if cuda.blockIdx.x * tile_size < count:
            load_tile(keys, in_keys, buffered, cuda.blockIdx.x * tile_size, count, ahead)

    @cuda.jit(device=True)
    def tile_ahead(keys, in_keys, buffered, base, count, tile, ahead):
        """Tile ``base`` (read ahead into ``ahead``) moved to ``tile``, and the block's
        next tile read into ``ahead``: its loads are in flight while ``tile`` is worked
        on (one tile's loads a thread do not cover the memory's latency)."""
        for i in range(items):
            tile[i] = ahead[i]
        following = base + cuda.gridDim.x * tile_size
        if following < count:
            load_tile(keys, in_keys, buffered, following, count, ahead)

    @cuda.jit(device=True)
    def count_first_digits(tile, tile_digits, counts, whole, valid):
        """The first digits of a tile's keys counted: all of them (``whole``: no check
        a key, called with a constant), or the first ``valid``."""
        for i in range(items):
            counted = whole or cuda.threadIdx.x * items + i < valid
            tile_digits[i] = best_first_digit(comparable(tile[i]), 0) if counted else digits
        count_digits(tile_digits, counts)

    @cuda.jit(device=True)
    def origin(buffered, positions, index):
        """Where key ``index`` of the launch's input came from in ``d_keys``."""
        return positions[index] if buffered else np.int64(index)

    @cuda.jit(device=True)
    def filter_tile(tile, tile_digits, counts, base, whole, count, p, chosen, writes, all_wanted, buffered, values,
                    in_positions, out_keys, out_positions, keys_out, values_out, state):
        """A tile of ``filter_kernel``'s pass ``p``: its keys classed, the selected (and
        the candidates) written where the launch ``writes``, the candidates' digits
        counted. ``whole`` (a constant): every key of the tile is below ``count``."""
        selected = np.uint32(0)  # (bit i: the thread's key i; items <= 16)
        candidates = np.uint32(0)
        for i in range(items):
            ordered = no_bits
            key_class = DROP
            if whole or base + cuda.threadIdx.x * items + i < count:
                ordered = comparable(tile[i])
                key_class = class_of(ordered, p - 1, chosen)
            if key_class == SELECT or (all_wanted and key_class == CANDIDATE):
                selected |= np.uint32(1 << i)
            elif key_class == CANDIDATE:
                candidates |= np.uint32(1 << i)
            tile_digits[i] = best_first_digit(ordered, p) if key_class == CANDIDATE else digits
        if writes and cuda.any_sync(0xFFFFFFFF, (selected | candidates) != 0):  # (most warps write nothing: no claim)
            at, buffered_at = warp_claims(cuda.popc(selected), cuda.popc(candidates), state, SELECTED, FILTERED)
            for i in range(items):
                index = base + cuda.threadIdx.x * items + i
                if selected & np.uint32(1 << i):
                    keys_out[at] = tile[i]
                    if with_values:
                        values_out[at] = values[origin(buffered, in_positions, index)]
                    at += 1
                if candidates & np.uint32(1 << i):
                    out_keys[buffered_at] = tile[i]
                    if with_values:
                        out_positions[buffered_at] = origin(buffered, in_positions, index)
                    buffered_at += 1
        if not all_wanted:
            count_digits(tile_digits, counts)

    @cuda.jit(device=True)
    def select_tile(tile, base, whole, count, k, chosen, wanted, buffered, values, in_positions, keys_out,
                    values_out, state):
        """A tile of ``select_kernel``: the better keys written from the output's start,
        the wanted ties from its end. ``whole`` as ``filter_tile``'s."""
        selected = np.uint32(0)
        ties = np.uint32(0)
        for i in range(items):
            key_class = DROP
            if whole or base + cuda.threadIdx.x * items + i < count:
                key_class = class_of(comparable(tile[i]), passes - 1, chosen)
            if key_class == SELECT:
                selected |= np.uint32(1 << i)
            elif key_class == CANDIDATE:
                ties |= np.uint32(1 << i)
        at, tie = warp_claims(cuda.popc(selected), cuda.popc(ties), state, SELECTED, TIES)
        for i in range(items):
            index = base + cuda.threadIdx.x * items + i
            position = np.int64(-1)
            if selected & np.uint32(1 << i):
                position = at
                at += 1
            elif ties & np.uint32(1 << i):
                if tie < wanted:
                    position = k - 1 - tie
                tie += 1
            if position >= 0:
                keys_out[position] = tile[i]
                if with_values:
                    values_out[position] = values[origin(buffered, in_positions, index)]

    def count_kernel(keys, n, k, counters, state, prefix):
        counts = cuda.shared.array(digits, np.uint32)
        temp = cuda.shared.array(scan_bytes, np.uint8, alignment=16)
        last = cuda.shared.array(1, np.int32)
        tile, ahead = cuda.local.array(items, key_type), cuda.local.array(items, key_type)
        tile_digits = cuda.local.array(items, np.int32)
        first_tile(keys, keys, False, n, ahead)
        zeroed_counts(counts)
        for base in range(cuda.blockIdx.x * tile_size, n, cuda.gridDim.x * tile_size):
            tile_ahead(keys, keys, False, base, n, tile, ahead)
            if base + tile_size <= n:
                count_first_digits(tile, tile_digits, counts, True, 0)
            else:
                count_first_digits(tile, tile_digits, counts, False, n - base)
        count_into(counts, counters)
        if block_arrives(counters, digits, last):
            choose(counters, state, prefix, k, 0, temp)
            if cuda.threadIdx.x == 0:
                state[BUFFERED] = -1
                state[SELECTED] = 0
                state[FILTERED] = 0
                state[TIES] = 0

    def filter_kernel(keys, values, n, p, buffer_length, in_keys, in_positions, out_keys, out_positions, keys_out,
                      values_out, counters, state, prefix):
        """Pass ``p`` (1 .. passes - 1): the keys classed by digits 0 .. p - 1, digit
        ``p`` of the candidates counted."""
        counts = cuda.shared.array(digits, np.uint32)
        temp = cuda.shared.array(scan_bytes, np.uint8, alignment=16)
        last = cuda.shared.array(1, np.int32)
        candidates, wanted = state[CANDIDATES], state[WANTED]
        if candidates == 0:  # (all written by an earlier launch)
            return
        tile, ahead = cuda.local.array(items, key_type), cuda.local.array(items, key_type)
        tile_digits = cuda.local.array(items, np.int32)
        all_wanted = candidates == wanted  # (then they are written with the selected, and the select ends)
        writes = all_wanted or candidates <= buffer_length
        buffered = state[BUFFERED] >= 0
        count = state[BUFFERED] if buffered else n
        chosen = prefix_type(prefix[0])
        first_tile(keys, in_keys, buffered, count, ahead)
        if not all_wanted:
            zeroed_counts(counts)
        for base in range(cuda.blockIdx.x * tile_size, count, cuda.gridDim.x * tile_size):
            tile_ahead(keys, in_keys, buffered, base, count, tile, ahead)
            if base + tile_size <= count:
                filter_tile(tile, tile_digits, counts, base, True, count, p, chosen, writes, all_wanted, buffered,
                            values, in_positions, out_keys, out_positions, keys_out, values_out, state)
            else:
                filter_tile(tile, tile_digits, counts, base, False, count, p, chosen, writes, all_wanted, buffered,
                            values, in_positions, out_keys, out_positions, keys_out, values_out, state)
        if not all_wanted:
            count_into(counts, counters)
        if block_arrives(counters, digits, last):
            if all_wanted:
                if cuda.threadIdx.x == 0:
                    state[CANDIDATES] = 0
            else:
                choose(counters, state, prefix, wanted, p, temp)
                if cuda.threadIdx.x == 0:
                    state[BUFFERED] = candidates if writes else -1
                    state[FILTERED] = 0

    def select_kernel(keys, values, n, k, in_keys, in_positions, keys_out, values_out, state, prefix):
        """The keys classed by every digit: the better ones selected, and the wanted
        number of those equal (ties with the ``k``-th best) at the output's end."""
        candidates, wanted = state[CANDIDATES], state[WANTED]
        if candidates == 0:
            return
        tile, ahead = cuda.local.array(items, key_type), cuda.local.array(items, key_type)
        buffered = state[BUFFERED] >= 0
        count = state[BUFFERED] if buffered else n
        chosen = prefix_type(prefix[0])
        first_tile(keys, in_keys, buffered, count, ahead)
        for base in range(cuda.blockIdx.x * tile_size, count, cuda.gridDim.x * tile_size):
            tile_ahead(keys, in_keys, buffered, base, count, tile, ahead)
            if base + tile_size <= count:
                select_tile(tile, base, True, count, k, chosen, wanted, buffered, values, in_positions, keys_out,
                            values_out, state)
            else:
                select_tile(tile, base, False, count, k, chosen, wanted, buffered, values, in_positions, keys_out,
                            values_out, state)

    # (keys alone: 5 blocks of 256 a multiprocessor, 48 registers, as the ballots' filter had;
    # ptxas gives the claims' 56 unbounded, 4 blocks. Pairs spill at 48: unbounded)
    filter_jit = cuda.jit(launch_bounds=(THREADS, 5)) if not with_values else cuda.jit
    return (cuda.jit(without_dead_branches(count_kernel)), filter_jit(without_dead_branches(filter_kernel)),
            cuda.jit(without_dead_branches(select_kernel)), passes, digits, tile_size)


@documented
@takes_temp_storage
def top_k(d_keys, d_keys_out, k, d_values=None, d_values_out=None, largest=True, stream=None, temp_storage=None):
    """The ``k`` largest (or smallest) keys of ``d_keys``, and their values, into the
    first ``k`` items of ``d_keys_out`` and ``d_values_out``, in no particular order (CUB
    DeviceTopK::MaxKeys, MinKeys, MaxPairs, MinPairs).

    Parameters
    ----------
    d_keys : device array
        The keys: bool, int8-int64, uint8-uint64, float16, float32 or float64, ordered as
        ``coop.device.radix_sort`` orders them (-0.0 and +0.0 as equal, NaNs by their
        bits: positive NaNs above +inf, negative ones below -inf). Not written.
        {device_array}
    d_keys_out : device array
        Where the selected keys go: its first ``k`` items (the rest are not written), of
        ``d_keys``' dtype. It must share no memory with ``d_keys``.
    k : int
        How many keys to select; ``k`` of ``len(d_keys)`` or more selects them all (the
        output's first ``len(d_keys)`` items), 0 none. Of keys equal to the ``k``-th best,
        any of them may be the ones selected (as CUB's: which is not fixed).
    d_values : device array, optional
        Values of any dtype, at least as long as ``d_keys``: each selected key's goes to
        the same position of ``d_values_out`` (needed with it).
    d_values_out : device array, optional
        Where the selected keys' values go, of ``d_values``' dtype, sharing no memory
        with it.
    largest : bool, default True
        Select the largest keys (CUB's Max*), or the smallest (Min*).
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
    CUB's radix select: digits of 11 bits (one-byte keys: 8), most significant first,
    ``passes + 1`` launches (2- and 4-byte keys: 3 passes, 8-byte keys: 6), none waited
    for. One read of the keys counts the first digit; each further pass reads them all
    again until the keys sharing the chosen digits fit a buffer of 1/128 of the keys,
    then only that buffer (random 4-byte keys: three reads of the keys in all). The
    temporary storage holds two such buffers (with the candidates' int64 positions when
    there are values).

    Example
    -------
    The 10 largest of 5,000 scores and their indices::

        import numpy as np
        import coop
        from numba import cuda

        rng = np.random.default_rng(12)
        scores = rng.standard_normal(5000).astype(np.float32)
        d_best, d_where = cuda.device_array(10, np.float32), cuda.device_array(10, np.int64)
        coop.device.top_k(cuda.to_device(scores), d_best, 10,
                          cuda.to_device(np.arange(scores.size)), d_where)
        best, where = d_best.copy_to_host(), d_where.copy_to_host()
        assert (np.sort(best) == np.sort(scores)[-10:]).all()
        assert (scores[where] == best).all()
    """
    function = "top_k"
    d_keys = device_array(function, "d_keys", d_keys)
    n = d_keys.size
    check_key_dtype(function, d_keys)
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
        raise ArgumentTypeError(f"coop.device.{function}: k must be an int, got {k!r}")
    if k < 0:
        raise ArgumentValueError(f"coop.device.{function}: k must be 0 or more, got {k}")
    k = min(int(k), n)
    d_keys_out = output_array(function, "d_keys_out", d_keys_out, "d_keys", d_keys, k, apart=True)
    if (d_values is None) != (d_values_out is None):
        raise ArgumentValueError(f"coop.device.{function}: d_values and d_values_out go together (one is given "
                                 "without the other)")
    if d_values is not None:
        d_values = device_array(function, "d_values", d_values)
        check_length(function, "d_values", d_values, n)
        d_values_out = output_array(function, "d_values_out", d_values_out, "d_values", d_values, k, apart=True)
    if not isinstance(largest, (bool, np.bool_)):
        raise ArgumentTypeError(f"coop.device.{function}: largest must be a bool, got {largest!r}")
    stream = launch_stream(stream)
    if k == 0:
        return
    if k == n:  # (every key)
        copy_items(d_keys, d_keys_out, n, stream)
        if d_values is not None:
            copy_items(d_values, d_values_out, n, stream)
        return
    value_dtype = None if d_values is None else d_values.dtype
    count_kernel, filter_kernel, select_kernel, passes, digits, tile_size = _kernels(d_keys.dtype, value_dtype,
                                                                                     bool(largest))
    counters = zeroed_temporary("top_k.counters", digits + 1, np.uint32, stream)  # (and the blocks arrived)
    state = temporary("top_k.state", TIES + 1, np.int64, stream)
    prefix = temporary("top_k.prefix", 1, np.uint64, stream)
    buffer_length = candidate_buffer_length(n)
    buffers = [temporary(f"top_k.keys{b}", buffer_length, d_keys.dtype, stream) for b in (0, 1)]
    # (the candidates' positions in d_keys, for their values; keys alone need none)
    positions = [temporary(f"top_k.positions{b}", buffer_length if d_values is not None else 1, np.int64, stream)
                 for b in (0, 1)]
    values, values_out = (d_values, d_values_out) if d_values is not None else (d_keys, d_keys_out)
    tiles = -(-n // tile_size)
    count_args = (d_keys, n, k, counters, state, prefix)
    launch(count_kernel, min(tiles, kernel_resident_blocks(count_kernel, THREADS, *count_args)), THREADS, stream,
           *count_args)
    for p in range(1, passes):  # (launch p reads buffer p % 2, written by launch p - 1, and writes the other)
        filter_args = (d_keys, values, n, p, buffer_length, buffers[p % 2], positions[p % 2], buffers[1 - p % 2],
                       positions[1 - p % 2], d_keys_out, values_out, counters, state, prefix)
        launch(filter_kernel, min(tiles, kernel_resident_blocks(filter_kernel, THREADS, *filter_args)), THREADS,
               stream, *filter_args)
    select_args = (d_keys, values, n, k, buffers[passes % 2], positions[passes % 2], d_keys_out, values_out, state,
                   prefix)
    launch(select_kernel, min(tiles, kernel_resident_blocks(select_kernel, THREADS, *select_args)), THREADS, stream,
           *select_args)
