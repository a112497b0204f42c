"""Device-wide top-k (CUB's DeviceTopK::MaxKeys, MinKeys, MaxPairs, MinPairs):
``top_k(d_keys, d_keys_out, k, d_values=None, d_values_out=None, largest=True)``, the
``k`` largest (or smallest) keys, and their values, in no particular order.

A radix select, as CUB's (AIR top-k), over the keys' ordered bits (``coop._core.radix``)
8 bits at a time from the most significant, in ``passes + 1`` launches that the host
never waits on. Each launch's grid fills the GPU once and strides over its items in
tiles; each block counts the digits it sees in shared memory (shared atomics) and adds
them to global counters; the last block to finish (``coop.device.lookback.block_arrives``)
turns the counts into the digit that holds the ``k``-th best key
(``coop.block.exclusive_sum`` over the digits in best-first order), keeps it and how many
keys of that digit are still wanted, and zeroes the counters for the next launch:

- the first launch counts the first digit of every key;
- each middle launch reads the keys that share every chosen digit so far (all keys, the
  first time): a key whose last-chosen digit is better is selected (written to the
  output), one whose digit equals it is a candidate, copied (with its value) to a buffer
  that the next launch reads, and its next digit counted;
- the last launch selects the candidates better in the last digit, and of those equal in
  every digit (ties with the ``k``-th best) as many as are still wanted.

Writes to the output and the buffers go through a warp's exclusive sum of its lanes'
flags (``coop.warp.exclusive_sum``) and one atomic add a warp (``coop.warp.broadcast``
of its result). Selected keys fill the output from its start in no fixed order; ties fill
the last positions, the earliest to arrive first.
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
from coop.device._host import (check_length, copy_items, device_array, documented, launch, launch_stream,
                               resident_blocks, takes_temp_storage, temporary, zeroed_temporary)
from coop.device._tiles import BLOCK_THREADS
from coop.device.lookback import block_arrives
from coop.device.radix_sort import check_key_dtype, output_array

__all__ = ["top_k"]

THREADS = BLOCK_THREADS
ITEMS_PER_THREAD = 4  # (a tile's keys a thread, striped: independent loads)
RADIX_BITS = 8
DIGITS = 1 << RADIX_BITS
# the kept state (int64): the digit chosen last, the keys of it still wanted, the keys
# selected so far, the candidates written by this launch and by the one before, the ties taken
CHOSEN, WANTED, SELECTED, WRITTEN, CANDIDATES, TIES = range(6)


@functools.lru_cache(maxsize=None)
def _kernels(key_dtype, value_dtype, largest):
    """``(count_kernel, filter_kernel, select_kernel, passes)``."""
    key_type = from_dtype(np.dtype(key_dtype))
    with_values = value_dtype is not None
    to_ordered, digit_of = radix.to_ordered(key_type), radix.digit(key_type)
    key_bits = radix.key_bits(key_type)
    passes = -(-key_bits // RADIX_BITS)
    tracked = tracked_digits(THREADS, RADIX_BITS)
    tile_size = THREADS * ITEMS_PER_THREAD
    scan_bytes = coop.block.exclusive_sum.temp_storage_bytes(from_dtype(np.dtype(np.int64)), THREADS)

    @cuda.jit(device=True)
    def best_first_digit(key, p):
        """Digit ``p`` (from the most significant: keys are whole bytes) of ``key``,
        numbered best first."""
        d = digit_of(to_ordered(key), key_bits - (p + 1) * RADIX_BITS, RADIX_BITS)
        return (DIGITS - 1) - d if largest else d

    @cuda.jit(device=True)
    def warp_append(flag, state, index):
        """Positions for the lanes whose ``flag`` is set, taken from ``state[index]``:
        consecutive within the warp, one atomic add a warp (every lane calls it)."""
        offset, total = coop.warp.exclusive_sum(np.int32(1 if flag else 0), return_aggregate=True)
        base = np.int64(0)
        if total > 0:
            if cuda.laneid == 0:
                base = cuda.atomic.add(state, index, np.int64(total))
            base = coop.warp.broadcast(base, 0)
        return base + offset

    @cuda.jit(device=True)
    def move(keys, values, index, keys_out, values_out, position):
        keys_out[position] = keys[index]
        if with_values:
            values_out[position] = values[index]

    @cuda.jit(device=True)
    def digit_and_selection(keys, values, index, count, p, chosen, keys_out, values_out, state):
        """(Every lane.) Key ``index``'s digit ``p`` (past ``count``: none), the key moved to
        the output if that digit is better than ``chosen``."""
        valid = index < count
        d = best_first_digit(keys[index], p) if valid else DIGITS
        position = warp_append(d < chosen, state, SELECTED)
        if d < chosen:
            move(keys, values, index, keys_out, values_out, position)
        return d

    @cuda.jit(device=True)
    def count_into(counts, counters):
        """The block's shared ``counts`` added to the global ``counters``."""
        cuda.syncthreads()
        for d in range(cuda.threadIdx.x, DIGITS, THREADS):
            if counts[d] != 0:
                cuda.atomic.add(counters, d, counts[d])

    @cuda.jit(device=True)
    def choose(counters, state, wanted, temp):
        """(The last block.) The digit holding the ``wanted``-th best key among those
        counted, and how many of that digit are wanted: to ``state``; the counters zeroed."""
        rank = cuda.threadIdx.x
        before = cuda.local.array(tracked, np.int64)
        for j in range(tracked):
            d = rank * tracked + j
            before[j] = counters[d] if d < DIGITS else 0
        coop.block.exclusive_sum(before, before, threads=THREADS, temp_storage=temp)
        for j in range(tracked):
            d = rank * tracked + j
            if d < DIGITS:
                count = np.int64(counters[d])
                if before[j] < wanted <= before[j] + count:
                    state[CHOSEN] = d
                    state[WANTED] = wanted - before[j]
                counters[d] = 0

    @cuda.jit(device=True)
    def zeroed_counts(counts):
        for d in range(cuda.threadIdx.x, DIGITS, THREADS):
            counts[d] = 0
        cuda.syncthreads()

    def count_kernel(keys, n, k, counters, state):
        counts = cuda.shared.array(DIGITS, np.uint32)
        temp = cuda.shared.array(scan_bytes, np.uint8, alignment=16)
        last = cuda.shared.array(1, np.int32)
        zeroed_counts(counts)
        for base in range(cuda.blockIdx.x * tile_size, n, cuda.gridDim.x * tile_size):
            for i in range(ITEMS_PER_THREAD):
                index = base + i * THREADS + cuda.threadIdx.x
                if index < n:
                    cuda.atomic.add(counts, best_first_digit(keys[index], 0), 1)
        count_into(counts, counters)
        if block_arrives(counters, DIGITS, last):
            choose(counters, state, k, temp)
            if cuda.threadIdx.x == 0:
                state[SELECTED] = 0
                state[WRITTEN] = 0
                state[TIES] = 0

    def filter_kernel(keys, values, n, p, keys_out, values_out, next_keys, next_values, counters, state):
        """Pass ``p`` (1 .. passes - 1): the keys sharing every chosen digit but the last
        (``n`` of them, or ``state[CANDIDATES]`` where ``n`` is negative)."""
        counts = cuda.shared.array(DIGITS, np.uint32)
        temp = cuda.shared.array(scan_bytes, np.uint8, alignment=16)
        last = cuda.shared.array(1, np.int32)
        zeroed_counts(counts)
        count = n if n >= 0 else state[CANDIDATES]
        chosen = state[CHOSEN]
        for base in range(cuda.blockIdx.x * tile_size, count, cuda.gridDim.x * tile_size):
            for i in range(ITEMS_PER_THREAD):
                index = base + i * THREADS + cuda.threadIdx.x
                d = digit_and_selection(keys, values, index, count, p - 1, chosen, keys_out, values_out, state)
                position = warp_append(d == chosen, state, WRITTEN)
                if d == chosen:
                    move(keys, values, index, next_keys, next_values, position)
                    cuda.atomic.add(counts, best_first_digit(keys[index], p), 1)
        count_into(counts, counters)
        if block_arrives(counters, DIGITS, last):
            choose(counters, state, state[WANTED], temp)
            if cuda.threadIdx.x == 0:
                state[CANDIDATES] = state[WRITTEN]
                state[WRITTEN] = 0

    def select_kernel(keys, values, n, k, keys_out, values_out, state):
        """The keys sharing every chosen digit but the last (as ``filter_kernel``'s):
        those better in the last digit, and the wanted number of those equal in it."""
        count = n if n >= 0 else state[CANDIDATES]
        chosen, wanted = state[CHOSEN], state[WANTED]
        for base in range(cuda.blockIdx.x * tile_size, count, cuda.gridDim.x * tile_size):
            for i in range(ITEMS_PER_THREAD):
                index = base + i * THREADS + cuda.threadIdx.x
                d = digit_and_selection(keys, values, index, count, passes - 1, chosen, keys_out, values_out, state)
                tie = warp_append(d == chosen, state, TIES)
                if d == chosen and tie < wanted:
                    move(keys, values, index, keys_out, values_out, k - wanted + tie)

    return (cuda.jit(without_dead_branches(count_kernel)), cuda.jit(without_dead_branches(filter_kernel)),
            cuda.jit(without_dead_branches(select_kernel)), passes)


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
    A radix select of 8-bit digits, most significant first: one read of the keys counts
    the first digit, a second selects the keys better in it and copies those equal to
    the ``k``-th best's to a buffer, and each further digit reads only that buffer (for
    random keys about 1/256 of the keys, then of that). ``passes + 1`` launches (4-byte
    keys: 5), none waited for. The temporary storage holds two buffers of keys (and
    values) as long as ``d_keys``, for keys that share many leading digits.

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
    count_kernel, filter_kernel, select_kernel, passes = _kernels(d_keys.dtype, value_dtype, bool(largest))
    counters = zeroed_temporary("top_k.counters", DIGITS + 1, np.uint32, stream)  # (and the blocks arrived)
    state = temporary("top_k.state", TIES + 1, np.int64, stream)
    buffers = [temporary(f"top_k.keys{b}", n, d_keys.dtype, stream) for b in (0, 1)]
    value_buffers = ([temporary(f"top_k.values{b}", n, value_dtype, stream) for b in (0, 1)]
                     if d_values is not None else buffers)
    values, values_out = (d_values, d_values_out) if d_values is not None else (d_keys, d_keys_out)
    grid = max(1, min(resident_blocks(THREADS), -(-n // (THREADS * ITEMS_PER_THREAD))))
    launch(count_kernel, grid, THREADS, stream, d_keys, n, k, counters, state)
    source, source_values, count = d_keys, values, n  # (count -1: the candidates' count, kept on the device)
    for p in range(1, passes):
        target, target_values = buffers[p % 2], value_buffers[p % 2]
        launch(filter_kernel, grid, THREADS, stream, source, source_values, count, p, d_keys_out, values_out, target,
               target_values, counters, state)
        source, source_values, count = target, target_values, -1
    launch(select_kernel, grid, THREADS, stream, source, source_values, count, k, d_keys_out, values_out, state)

