"""Block-wide radix ranking and sorting (CUB's BlockRadixRank and BlockRadixSort).

A block of ``T`` threads (``threads``) holds a tile of ``T*N`` keys, ``N``
(``items_per_thread``) per thread in blocked arrangement (item ``i`` of thread ``r`` is
tile item ``r*N + i``). Keys are any of bool, int8-int64, uint8-uint64, float16, float32
and float64, ordered as ``coop._core.radix`` describes (floats: -0.0 sorts equal to
+0.0, NaNs by their bits: positive NaNs after +inf, negative NaNs before -inf).

- ``radix_rank`` gives each key its rank: its position in the tile stably sorted by one
  digit (``num_bits`` bits from ``begin_bit``) of its ordered bits. CUB's
  RADIX_RANK_MEMOIZE (``algorithm="memoize"``) and RADIX_RANK_BASIC (``"basic"``):
  each thread counts its keys' digits in 16-bit counters of its own in shared memory,
  a block-wide exclusive sum (``coop.block.exclusive_sum``, "warp_scans") turns the
  counters into digit offsets, and each key's rank is its digit's offset plus the keys
  of that digit before it.
- ``radix_sort`` sorts the tile, stably, with one ranking and one scatter
  (``coop.block.exchange``'s scatter_to_blocked) per ``radix_bits`` digit of the key,
  least significant first, keys (and values with them) exchanged through shared memory.

``threads`` and ``items_per_thread`` are compile-time constants, ``T*N`` at most 65535
(the counters are 16-bit, as CUB's). Barriers: each call synchronises the block as it
needs; consecutive calls need no barrier between them. Shared memory (static, at most
48 KiB a kernel; ``temp_storage=`` is not taken yet): the ranking's counters
(``(2**(num_bits - 1) + 1) * T`` 32-bit words) and the block scan's scratch; the sort
keeps its counters and its exchanges of keys and of values in one buffer (the largest of
the three, as CUB's TempStorage union), plus the scan's scratch.
"""

import numpy as np
from numba.cuda import types

from coop._core import radix
from coop._core.backend import cuda
from coop._core.exchange import STATIC_SHARED_LIMIT, rank_items, required_items_per_thread, required_threads
from coop._core.misuse import size_check
from coop._core.scratch import Region, Union, allocator, block_rank, loader, storage, store
from coop._core.specialize import Signature, device_function, is_none, primitive
from coop.block.exchange import exchange_layout, exchanger
from coop.block.scan import exclusive_sum

__all__ = ["radix_rank", "radix_sort"]

U32 = np.uint32
MAX_TILE_ITEMS = 65535  # the digit counters are 16-bit
COUNTER_BITS = 16  # two counters to a 32-bit word, as CUB's PackedCounter
MAX_RADIX_BITS = 8


# -- the ranking, on ordered bits: a building block of the sort ----------------------------


def counters_layout(radix_bits, threads):
    """The ranking's digit counters: ``2**(radix_bits - 1)`` counter lanes of 32-bit words
    (two 16-bit counters) per thread, plus a padding lane (CUB's PADDED_COUNTER_LANES)."""
    return Region("counters", types.uint32, ((1 << max(radix_bits - 1, 0)) + 1) * threads)


def sort_layout(key_type, value_type, threads, items_per_thread, radix_bits):
    """The sort's scratch, as CUB's TempStorage union: the counters, then the exchange of
    the keys' ordered bits, then (``value_type`` not None) the values' exchange."""
    phases = [counters_layout(radix_bits, threads),
              exchange_layout(radix.bits_type(key_type), threads, items_per_thread, name="keys")]
    if value_type is not None:
        phases.append(exchange_layout(value_type, threads, items_per_thread, name="values"))
    return Union("radix_sort", *phases)


def _check_radix_bits(sig, radix_bits, param, threads):
    if radix_bits < 1 or radix_bits > MAX_RADIX_BITS:
        raise sig.error(param, f"must be from 1 to {MAX_RADIX_BITS}, got {radix_bits}")
    needed = counters_layout(radix_bits, threads).nbytes
    if needed > STATIC_SHARED_LIMIT:
        raise sig.error(
            param,
            f"{radix_bits} needs {needed} bytes of digit counters in blocks of {threads} threads: more "
            f"than the {STATIC_SHARED_LIMIT} bytes of static shared memory a kernel may have; use fewer bits",
        )


def _check_tile(sig, threads, items_per_thread):
    if threads * items_per_thread > MAX_TILE_ITEMS:
        raise sig.error(
            "items_per_thread",
            f"makes a tile of {threads} x {items_per_thread} keys: the digit counters are 16-bit, so a "
            f"tile may hold at most {MAX_TILE_ITEMS} keys",
        )


def ranker(sig, key_type, threads, items_per_thread, radix_bits, descending, memoize, with_digit_prefix,
           temp_storage):
    """``(rank, tracked)``: a device function ``rank(ordered, ranks, begin_bit, pass_bits,
    digit_prefix, temp_storage)`` ranking the thread's ``items_per_thread`` ordered bits
    of ``key_type`` keys by the digit of ``pass_bits`` (at most ``radix_bits``) bits from
    ``begin_bit`` into ``ranks``, and, where ``with_digit_prefix``, writing the tile's
    count of keys of smaller digits for the ``tracked`` digits the thread tracks to
    ``digit_prefix``. Its counters live in ``temp_storage`` (a type; none: a buffer of
    their own)."""
    digit_of = radix.digit(key_type)
    log_lanes = max(radix_bits - 1, 0)
    lanes = 1 << log_lanes
    padded_lanes = lanes + 1
    digits = 1 << radix_bits
    tracked = max(1, -(-digits // threads))
    counters, _ = storage(sig, temp_storage, counters_layout(radix_bits, threads),
                          owner=(sig.primitive, "counters", radix_bits))
    load = loader(types.uint32)
    n = items_per_thread

    def rank(ordered, ranks, begin_bit, pass_bits, digit_prefix, temp_storage):
        buffer = counters(temp_storage)
        # 32-bit arithmetic, as CUB's: Numba computes integers in 64 bits (two
        # instructions per add or shift); each result cut back to 32 bits lets NVVM narrow
        # the operation itself
        tid = U32(block_rank())
        # This thread's counters: 16-bit counter `sub` of word `lane * threads + tid`.
        # No barrier first: the previous call's last reads were of these same words (a
        # caller sharing the buffer with other phases synchronises before the call).
        for lane in range(padded_lanes):
            store(buffer, U32(lane * threads + tid), U32(0))
        # per key, one register: its counter (word * 2 + sub) above 16 bits, and the
        # count of the thread's keys of its digit before it (its prefix) below; word * 2
        # + sub fits 16 bits while the counters fit the 48 KiB checked (12288 words):
        # counters in a larger temp_storage would need two registers
        counted = cuda.local.array(n, np.uint32)
        for i in range(n):
            digit = digit_of(ordered[i], begin_bit, pass_bits)
            if descending:
                digit = U32(digits - 1 - digit)
            sub = U32(digit >> log_lanes)
            word = U32((digit & (lanes - 1)) * threads + tid)
            shift = U32(sub * COUNTER_BITS)
            packed = load(buffer, word)
            store(buffer, word, U32(packed + (U32(1) << shift)))
            counted[i] = U32(((word * 2 + sub) << COUNTER_BITS) | ((packed >> shift) & 0xFFFF))
        cuda.syncthreads()
        # Scan the counters in memory order (lane by lane, thread by thread; low halves,
        # then high halves): each thread rakes a segment of consecutive words.
        first = U32(tid * padded_lanes)
        cache = cuda.local.array(padded_lanes, np.uint32)
        partial = np.uint32(0)
        for i in range(padded_lanes):
            cache[i] = load(buffer, U32(first + i))
            partial = np.uint32(partial + cache[i])
        exclusive, total = exclusive_sum(partial, threads=threads, algorithm="warp_scans", return_aggregate=True)
        # the high halves come after every low half: add the low halves' total to them
        running = np.uint32(exclusive + (total << COUNTER_BITS))
        for i in range(padded_lanes):
            count = cache[i] if memoize else load(buffer, U32(first + i))
            store(buffer, U32(first + i), running)
            running = np.uint32(running + count)
        cuda.syncthreads()
        for i in range(n):
            word = U32(counted[i] >> (COUNTER_BITS + 1))
            shift = U32(((counted[i] >> COUNTER_BITS) & 1) * COUNTER_BITS)
            ranks[i] = U32((counted[i] & 0xFFFF) + ((load(buffer, word) >> shift) & 0xFFFF))
        if with_digit_prefix:
            for track in range(tracked):
                bin_index = tid * tracked + track
                if bin_index < digits:
                    if descending:
                        bin_index = digits - 1 - bin_index
                    word = (bin_index & (lanes - 1)) * threads  # thread 0's counter in the lane
                    shift = (bin_index >> log_lanes) * COUNTER_BITS
                    digit_prefix[track] = (load(buffer, word) >> shift) & 0xFFFF
            # the next call's threads reset thread 0's counters, read here by everyone
            cuda.syncthreads()

    return device_function(rank), tracked


def _key_type(sig, keys, param="keys"):
    key_type = sig.items(keys, param)
    if not radix.is_key_type(key_type):
        raise sig.error(param, f"must hold radix keys ({radix.KEY_TYPE_NAMES}), got {key_type}")
    return types.unliteral(key_type)


def _no_temp_storage(sig, temp_storage):
    if not is_none(temp_storage):
        raise sig.error(
            "temp_storage",
            "is not taken yet by the radix primitives: leave it out (each call uses static shared "
            "memory of its own)",
        )


def _to_ordered_items(key_type, n):
    """``(fill(keys, ordered), dtype)``: a device function writing the ordered bits of
    ``n`` keys to ``ordered``, a ``cuda.local.array(n, dtype)`` the caller makes (a
    device function may not return an array it creates)."""
    to_ordered = radix.to_ordered(key_type)

    def fill(keys, ordered):
        for i in range(n):
            ordered[i] = to_ordered(keys[i])

    return device_function(fill), np.dtype("uint%d" % radix.key_bits(key_type))


@primitive("coop.block.radix_rank", group="block", uniform=("begin_bit",))
def radix_rank(keys, ranks, begin_bit, num_bits, threads=None, items_per_thread=None, descending=False,
               algorithm="memoize", exclusive_digit_prefix=None, temp_storage=None):
    """Rank a block's keys by one radix digit (CUB BlockRadixRank::RankKeys): each key's
    position in the tile stably sorted by the digit of ``num_bits`` bits from
    ``begin_bit`` of its ordered bits (ascending, or descending).

    Parameters
    ----------
    keys : items array
        The thread's ``items_per_thread`` keys, blocked: bool, int8-int64, uint8-uint64,
        float16, float32 or float64 (ordered as the module docstring says).
    ranks : items array of integers
        Receives each key's rank: a tile position, 0 to ``threads * items_per_thread - 1``.
    begin_bit : int
        The digit's least significant bit in the key's ordered bits (run time allowed;
        the same in every thread).
    num_bits : int, compile-time constant
        The digit's width, 1 to 8 (sizes the counters: ``2**num_bits`` digits).
    threads : int or tuple, compile-time constant
        {threads} Required.
    items_per_thread : int, compile-time constant
        The length of ``keys`` and ``ranks`` (required); ``threads * items_per_thread``
        at most 65535.
    descending : bool, compile-time constant, default False
        Rank larger digits first.
    algorithm : str, compile-time constant, default "memoize"
        ``"memoize"`` (CUB's RADIX_RANK_MEMOIZE: the raking scan keeps its segment of
        counters in registers) or ``"basic"`` (RADIX_RANK_BASIC: it reads them again).
    exclusive_digit_prefix : items array of integers, optional
        Receives, for the digits this thread tracks (thread ``r`` tracks digits
        ``r*B .. r*B+B-1`` with ``B = max(1, ceil(2**num_bits / threads))``; array length
        ``B``), the count of the tile's keys ranked before that digit's keys.
    temp_storage : None
        Not taken yet (each call uses static shared memory of its own).

    Returns
    -------
    None
        Every thread gets its keys' ranks in ``ranks``.

    Barriers
    --------
    {block_barriers}

    Here: two ``cuda.syncthreads()`` and those of the block scan of the counters;
    one more with ``exclusive_digit_prefix``.

    Notes
    -----
    {collective}

    Example
    -------
    Rank 4-bit keys, then scatter them to their ranks: a one-digit counting sort::

        import numpy as np
        import coop
        from numba import cuda

        THREADS, ITEMS = 64, 2

        @cuda.jit
        def rank_kernel(keys_in, ranks_out, sorted_out):
            keys = cuda.local.array(ITEMS, np.uint8)
            ranks = cuda.local.array(ITEMS, np.int32)
            t = cuda.threadIdx.x
            for i in range(ITEMS):
                keys[i] = keys_in[t * ITEMS + i]
            coop.block.radix_rank(keys, ranks, 0, 4, threads=THREADS, items_per_thread=ITEMS)
            for i in range(ITEMS):
                ranks_out[t * ITEMS + i] = ranks[i]
                sorted_out[ranks[i]] = keys[i]

        keys = np.random.default_rng(2).integers(0, 16, THREADS * ITEMS).astype(np.uint8)
        ranks, out = np.zeros(keys.size, np.int32), np.zeros_like(keys)
        rank_kernel[1, THREADS](keys, ranks, out)
        assert (ranks == np.argsort(np.argsort(keys, kind="stable"), kind="stable")).all()
        assert (out == np.sort(keys)).all()
    """
    sig = Signature("coop.block.radix_rank")
    key_type = _key_type(sig, keys)
    rank_items(sig, ranks)
    block = required_threads(sig, threads)
    n = required_items_per_thread(sig, items_per_thread)
    _check_tile(sig, block, n)
    bits = sig.constant_int(num_bits, "num_bits")
    _check_radix_bits(sig, bits, "num_bits", block)
    sig.run_time_int(begin_bit, "begin_bit")
    is_descending = sig.constant_bool(descending, "descending")
    memoize = sig.choice(algorithm, "algorithm", ("memoize", "basic")) == "memoize"
    with_prefix = not is_none(exclusive_digit_prefix)
    if with_prefix:
        rank_items(sig, exclusive_digit_prefix, "exclusive_digit_prefix")
    _no_temp_storage(sig, temp_storage)
    rank, tracked = ranker(sig, key_type, block, n, bits, is_descending, memoize, with_prefix, types.none)
    fill_ordered, bits_dtype = _to_ordered_items(key_type, n)
    check_keys = size_check(sig.primitive, "keys", exact=True)
    check_ranks = size_check(sig.primitive, "ranks", exact=True)
    check_prefix = size_check(sig.primitive, "exclusive_digit_prefix", exact=True)

    def impl(keys, ranks, begin_bit, num_bits, threads=None, items_per_thread=None, descending=False,
             algorithm="memoize", exclusive_digit_prefix=None, temp_storage=None):
        check_keys(keys, n)
        check_ranks(ranks, n)
        if with_prefix:
            check_prefix(exclusive_digit_prefix, tracked)
        ordered = cuda.local.array(n, bits_dtype)
        fill_ordered(keys, ordered)
        rank(ordered, ranks, begin_bit, bits, exclusive_digit_prefix, None)

    return impl


@primitive("coop.block.radix_sort", group="block", uniform=("begin_bit", "end_bit"))
def radix_sort(keys, values=None, threads=None, items_per_thread=None, begin_bit=0, end_bit=None,
               descending=False, blocked_to_striped=False, radix_bits=4, temp_storage=None):
    """Sort a block's tile of keys, and values with them (CUB BlockRadixSort::Sort,
    SortDescending, SortBlockedToStriped): stable, in place, by the bits ``begin_bit``
    to ``end_bit - 1`` of the keys' ordered bits.

    Parameters
    ----------
    keys : items array
        The thread's ``items_per_thread`` keys, blocked: bool, int8-int64, uint8-uint64,
        float16, float32 or float64 (ordered as the module docstring says); sorted in
        place.
    values : items array, optional
        The thread's values (any coop value type), moved with their keys.
    threads : int or tuple, compile-time constant
        {threads} Required.
    items_per_thread : int, compile-time constant
        The length of ``keys`` (and ``values``) (required); ``threads *
        items_per_thread`` at most 65535.
    begin_bit : int, default 0
        The least significant bit sorted on (run time allowed; the same in every thread).
    end_bit : int, optional
        One past the most significant bit sorted on; by default the key's width.
    descending : bool, compile-time constant, default False
        Sort largest first (equal keys keep their order).
    blocked_to_striped : bool, compile-time constant, default False
        Leave the sorted tile striped (item ``i`` of thread ``r`` is tile item
        ``i*threads + r``) instead of blocked: the last scatter goes straight there
        (CUB's SortBlockedToStriped), ready for a coalesced striped store.
    radix_bits : int, compile-time constant, default 4
        Bits sorted per pass, 1 to 8 (CUB's RADIX_BITS).
    temp_storage : None
        Not taken yet (each call uses static shared memory of its own).

    Returns
    -------
    None
        Every thread gets its part of the sorted tile in ``keys`` (and ``values``).

    Barriers
    --------
    {block_barriers}

    Here, per pass of ``radix_bits`` bits: one ``cuda.syncthreads()``, the ranking's
    (see ``radix_rank``) and the scatters' of keys and of values (see
    ``coop.block.exchange.scatter_to_blocked``).

    Notes
    -----
    {collective}

    Example
    -------
    Sort each block's tile of float32 keys, carrying their original positions (an
    argsort)::

        import numpy as np
        import coop
        from numba import cuda

        THREADS, ITEMS = 64, 4
        TILE = THREADS * ITEMS

        @cuda.jit
        def sort_tiles(x, out, order):
            keys = cuda.local.array(ITEMS, np.float32)
            positions = cuda.local.array(ITEMS, np.int32)
            base = cuda.blockIdx.x * TILE + cuda.threadIdx.x * ITEMS
            for i in range(ITEMS):
                keys[i] = x[base + i]
                positions[i] = cuda.threadIdx.x * ITEMS + i
            coop.block.radix_sort(keys, positions, threads=THREADS, items_per_thread=ITEMS)
            for i in range(ITEMS):
                out[base + i] = keys[i]
                order[base + i] = positions[i]

        x = np.random.default_rng(1).standard_normal(2 * TILE).astype(np.float32)
        out, order = np.zeros_like(x), np.zeros(x.size, np.int32)
        sort_tiles[2, THREADS](x, out, order)
        tiles = x.reshape(2, TILE)
        assert (out.reshape(2, TILE) == np.sort(tiles, axis=1)).all()
        assert (order.reshape(2, TILE) == np.argsort(tiles, axis=1, kind="stable")).all()
    """
    sig = Signature("coop.block.radix_sort")
    key_type = _key_type(sig, keys)
    with_values = not is_none(values)
    value_type = sig.items(values, "values") if with_values else None
    block = required_threads(sig, threads)
    n = required_items_per_thread(sig, items_per_thread)
    _check_tile(sig, block, n)
    bits = sig.constant_int(radix_bits, "radix_bits")
    _check_radix_bits(sig, bits, "radix_bits", block)
    width = radix.key_bits(key_type)
    begin = _bit_argument(sig, begin_bit, "begin_bit", width)
    end = _bit_argument(sig, end_bit, "end_bit", width)
    if begin is not None and end is not None and begin > end:
        raise sig.error("end_bit", f"must not be below begin_bit ({begin}), got {end}")
    is_descending = sig.constant_bool(descending, "descending")
    striped = sig.constant_bool(blocked_to_striped, "blocked_to_striped")
    _no_temp_storage(sig, temp_storage)

    # One buffer for the phases, as CUB's TempStorage union: the counters, then the keys'
    # exchange, then the values'.
    bits_type = radix.bits_type(key_type)
    layout = sort_layout(key_type, value_type, block, n, bits)
    union_bytes = layout.nbytes
    if union_bytes > STATIC_SHARED_LIMIT:
        raise sig.error(
            "items_per_thread",
            f"makes a tile of {block} x {n} keys{' and values' if with_values else ''}, {union_bytes} bytes "
            f"of shared memory: more than the {STATIC_SHARED_LIMIT} bytes of static shared memory a kernel "
            "may have",
        )
    allocate = allocator(layout, owner=(sig.primitive, "union"))
    shared = types.Array(types.uint64, 1, "C")
    rank, _ = ranker(sig, key_type, block, n, bits, is_descending, True, False, shared)
    last_form = "scatter_to_striped" if striped else "scatter_to_blocked"
    scatter_keys = exchanger(sig, "scatter_to_blocked", bits_type, block, n, shared)
    scatter_keys_last = exchanger(sig, last_form, bits_type, block, n, shared)
    if with_values:
        scatter_values = exchanger(sig, "scatter_to_blocked", value_type, block, n, shared)
        scatter_values_last = exchanger(sig, last_form, value_type, block, n, shared)
    else:
        scatter_values = scatter_values_last = _no_scatter
    fill_ordered, bits_dtype = _to_ordered_items(key_type, n)
    from_ordered = radix.from_ordered(key_type)
    end_of = _key_width(width) if is_none(end_bit) else _given_bit
    check_keys = size_check(sig.primitive, "keys", exact=True)
    check_values = size_check(sig.primitive, "values", exact=True)

    def impl(keys, values=None, threads=None, items_per_thread=None, begin_bit=0, end_bit=None,
             descending=False, blocked_to_striped=False, radix_bits=4, temp_storage=None):
        check_keys(keys, n)
        if with_values:
            check_values(values, n)
        ordered = cuda.local.array(n, bits_dtype)
        fill_ordered(keys, ordered)
        ranks = cuda.local.array(n, np.int32)
        buffer = allocate(None)
        bit = begin_bit
        end = end_of(end_bit)
        while True:
            # the last scatter's reads (this call's, or the previous call's) are done
            # before the counters overwrite the buffer
            cuda.syncthreads()
            rank(ordered, ranks, bit, min(bits, end - bit), None, buffer)
            bit += bits
            if bit >= end:
                break
            # (each scatter waits for every thread to be done with the buffer first)
            scatter_keys(ordered, ordered, ranks, None, buffer)
            scatter_values(values, values, ranks, None, buffer)
        scatter_keys_last(ordered, ordered, ranks, None, buffer)
        scatter_values_last(values, values, ranks, None, buffer)
        for i in range(n):
            keys[i] = from_ordered(ordered[i])

    return impl


def _bit_argument(sig, bit, param, width):
    """A begin_bit/end_bit argument's value where it is a constant (checked to lie in 0 to
    the key's ``width``), else None (run time, or end_bit left out)."""
    if is_none(bit):
        return None
    ty = sig.run_time_int(bit, param)
    if isinstance(ty, types.IntegerLiteral):
        value = ty.literal_value
    elif isinstance(ty, int):
        value = ty
    else:
        return None
    if not 0 <= value <= width:
        raise sig.error(param, f"must be from 0 to {width} (the key's width in bits), got {value}")
    return value


def _key_width(width):
    def key_width(end_bit):
        return width

    return device_function(key_width)


@device_function
def _given_bit(end_bit):
    return end_bit


@device_function
def _no_scatter(items, output, ranks, is_valid, temp_storage):
    pass
