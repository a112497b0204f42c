"""Block-wide radix ranking (CUB's BlockRadixRank), what the radix sort
(``coop.block.radix``) and the device sort are built on.

A block of ``T`` threads (``threads``) holds a tile of ``T*N`` keys, ``N``
(``items_per_thread``) per thread in blocked arrangement (item ``i`` of thread ``r`` is
tile item ``r*N + i``). Keys are any of bool, int8-int64, uint8-uint64, float16, float32
and float64, ordered as ``coop._core.radix`` describes (floats: -0.0 sorts equal to
+0.0, NaNs by their bits: positive NaNs after +inf, negative NaNs before -inf).

- ``radix_rank`` gives each key its rank: its position in the tile stably sorted by one
  digit (``num_bits`` bits from ``begin_bit``) of its ordered bits. CUB's
  RADIX_RANK_MEMOIZE (``algorithm="memoize"``) and RADIX_RANK_BASIC (``"basic"``):
  each thread counts its keys' digits in 16-bit counters of its own in shared memory,
  a block-wide exclusive sum (``coop.block.scan``'s "warp_scans") turns the
  counters into digit offsets, and each key's rank is its digit's offset plus the keys
  of that digit before it. RADIX_RANK_MATCH (``"match"``): each warp counts its keys
  item by item in 32-bit counters per digit and warp, its lanes of one digit found by
  one ballot per digit bit (CUB's MatchAny); equal digits rank in warp-striped order.
  RADIX_RANK_MATCH_EARLY_COUNTS_ANY (``"match_early_counts"``): the same ranks, each
  warp counting all its keys first with shared atomics (see ``early_counts_ranker``).
  ``digit_counts=`` gives each digit's count in the tile (Onesweep's counts callback).

``threads`` and ``items_per_thread`` are compile-time constants, ``T*N`` at most 65535
(the counters are 16-bit, as CUB's; the "match" rankings' are 32-bit). Barriers: each
call synchronises the block as it needs; consecutive calls need no barrier between
them. Shared memory: the ranking's counters (``(2**(num_bits - 1) + 1) * T`` 32-bit
words) after the block scan's scratch, in a static buffer of its own (at most 48 KiB a
kernel) or the caller's ``temp_storage=`` (sized with ``radix_rank.temp_storage_bytes``).
"""

import functools

import numpy as np
from numba.cuda import types

from coop._core import radix
from coop._core.algorithm import Algorithm, choose
from coop._core.backend import cuda
from coop._core.items import array_lengths_check, array_tuple, items_or_tuple
from coop._core.exchange import (STATIC_SHARED_LIMIT, rank_items, required_items_per_thread, required_threads,
                                 unrolled_turns, warp_mask)
from coop._core.misuse import size_check
from coop._core.scratch import (Region, Struct, atomic_add, block_rank_of, load_pair, loader, storage, store, store_pair,
                                striped_steps)
from coop._core.shuffle import FULL_MASK, IDX, lanes_below, same_bit_lanes, shuffler
from coop._core.specialize import PRIMITIVE_DEFAULT, Signature, device_function, is_none, primitive
from coop.block.scan import exclusive_sum_in_scratch

__all__ = ["radix_rank"]

# what other families compose (the building-block tier: tests/test_layering.py)
BUILDING_BLOCKS = ["check_radix_bits", "check_tile", "given_bit", "rank_layout", "ranker", "tracked_digits"]

U32 = np.uint32
MAX_TILE_ITEMS = 65535  # the digit counters are 16-bit
COUNTER_BITS = 16  # two counters to a 32-bit word, as CUB's PackedCounter
MAX_RADIX_BITS = 8
# The "match" rankings' ballots, warp syncs and shuffles name all 32 lanes, in a partial
# last warp too, whose missing lanes count as exited (CUB's BlockRadixRankMatch does the
# same). A mask of the lanes present depends on the lane, which ptxas cannot assume
# warp-uniform: each ballot then holds a predicate register of its own, and with 7 digit
# bits ptxas ran out of them ("C7600: Register allocation failed with register count
# of '7'") for blocks of 33, 63 or 100 threads.
WARP_SYNC_MASK = FULL_MASK


# -- the ranking, on ordered bits: a building block of the sort ----------------------------


def counters_layout(radix_bits, threads):
    """The ranking's 16-bit digit counters: ``2**(radix_bits - 1)`` counter lanes of
    32-bit words (two counters) per thread, plus a padding lane (CUB's
    PADDED_COUNTER_LANES)."""
    return Region("counters", types.uint16, 2 * ((1 << max(radix_bits - 1, 0)) + 1) * threads)


def _after_block_scan(threads, counters):
    """A ranking's scratch, as CUB's BlockRadixRank TempStorage: the block scan's (at the
    start, where ``exclusive_sum_in_scratch`` keeps it), then ``counters``."""
    scan, _ = exclusive_sum_in_scratch(types.uint32, threads)
    layout = Struct("rank", Region("scan", types.uint32, scan.bytes // 4), counters)
    assert layout.offset("counters") % 4 == 0  # read as 32-bit words too
    return layout


def rank_layout(threads, radix_bits):
    """The scratch of the "memoize" and "basic" rankings (and of the sort's)."""
    return _after_block_scan(threads, counters_layout(radix_bits, threads))


def _odd(count):
    """``count``, or ``count + 1`` where even: an odd stride between rows of 32-bit words
    puts the same column of consecutive rows in different banks."""
    return count | 1


def match_shape(threads, radix_bits):
    """``(padded_warps, padded_segment)`` of the "match" ranking's counters: a row of
    ``padded_warps`` per digit (CUB's warp_digit_counters[RADIX_DIGITS][PADDED_WARPS]),
    scanned by each thread raking a row of ``padded_segment`` (CUB's
    raking_grid[BLOCK_THREADS][PADDED_RAKING_SEGMENT]), both odd."""
    padded_warps = _odd(-(-threads // 32))
    padded_segment = _odd(-(-(padded_warps << radix_bits) // threads))
    return padded_warps, padded_segment


def match_rank_layout(threads, radix_bits):
    """The "match" ranking's scratch: the block scan's, then 32-bit counters, one per
    digit and warp, in the memory of the raking grid that scans them (CUB's union of
    the two): the larger of the two."""
    padded_warps, padded_segment = match_shape(threads, radix_bits)
    words = max(padded_warps << radix_bits, threads * padded_segment)
    return _after_block_scan(threads, Region("counters", types.uint32, words))


def check_radix_bits(sig, radix_bits, param, threads, layout_of=None):
    """``radix_bits`` from 1 to 8, and the ranking's scratch (``layout_of(bits)``, by
    default the "memoize" ranking's) within static shared memory, a caller's
    ``temp_storage`` or not: the limit also keeps a counter's index in 16 bits (see
    ranker). The error names the most bits that fit. Returns the layout."""
    if radix_bits < 1 or radix_bits > MAX_RADIX_BITS:
        raise sig.error(param, f"must be from 1 to {MAX_RADIX_BITS}, got {radix_bits}")
    layout_of = layout_of or (lambda bits: rank_layout(threads, bits))
    layout = layout_of(radix_bits)
    needed = layout.nbytes
    if needed > STATIC_SHARED_LIMIT:
        fitting = [bits for bits in range(1, radix_bits) if layout_of(bits).nbytes <= STATIC_SHARED_LIMIT]
        valid = f"at most {fitting[-1]} bits in blocks of {threads} threads" if fitting else "smaller blocks"
        raise sig.error(
            param,
            f"{radix_bits} needs {needed} bytes of digit counters in blocks of {threads} threads: more "
            f"than the {STATIC_SHARED_LIMIT} bytes of shared memory a ranking may count in (a caller's "
            f"temp_storage too: its counters are indexed in 16 bits); use {valid}",
        )
    return layout


def check_tile(sig, threads, items_per_thread):
    """Refuse (``sig``'s error on ``items_per_thread``) a tile the 16-bit digit counters
    of a radix ranking cannot count."""
    if threads * items_per_thread > MAX_TILE_ITEMS:
        raise sig.error(
            "items_per_thread",
            f"makes a tile of {threads} x {items_per_thread} keys: the digit counters are 16-bit, so a "
            f"tile may hold at most {MAX_TILE_ITEMS} keys",
        )


def _counters_slot(layout):
    """The first slot of the ranking's counters in ``layout``: the ranking's own, or one
    holding it as ``"rank"``."""
    return layout.slot("counters" if layout.name == "rank" else "rank.counters")


def segment_scanner(threads, segment, packed, memoize, shape=None):
    """``scan(buffer, first)``: the rankings' raking scan (CUB's, over its counters in
    memory order): each thread's ``segment`` consecutive 32-bit words of counters from
    slot ``first`` are replaced by the sum of every word before them, its own segment's
    and the lower threads' (a block-wide exclusive sum, ``exclusive_sum_in_scratch``).
    ``packed``: each word is two 16-bit counters (``load_pair``), whose high halves come
    after every low half in digit order; else one 32-bit counter. ``memoize``: the
    segment stays in registers between its reading and its rewriting (CUB's
    MEMOIZE_OUTER_SCAN), else it is read again. Needs the block synchronised before it
    (the counters are complete) and after it (before the scanned counters are read).
    ``shape``: the block's constant shape (``Signature.block_shape``), or None."""
    _, exclusive_sum = exclusive_sum_in_scratch(types.uint32, threads, shape)
    if packed:
        load_word, store_word, stride = load_pair, store_pair, 2
    else:
        load_word, store_word, stride = loader(types.uint32), store, 1

    def scan(buffer, first):
        cache = cuda.local.array(segment, np.uint32)
        partial = np.uint32(0)
        for i in range(segment):
            cache[i] = load_word(buffer, U32(first + stride * i))
            partial = np.uint32(partial + cache[i])
        running, total = exclusive_sum(partial, buffer)
        if packed:
            # the high halves come after every low half: add the low halves' total to them
            running = np.uint32(running + (total << COUNTER_BITS))
        for i in range(segment):
            count = cache[i] if memoize else load_word(buffer, U32(first + stride * i))
            store_word(buffer, U32(first + stride * i), running)
            running = np.uint32(running + count)

    return device_function(scan)


def ranked_digit(digit_of, radix_bits, descending):
    """A device function ``(ordered, begin_bit, pass_bits) -> digit``: the digit the
    rankings count for a key's ordered bits, reversed (``2**radix_bits - 1 - digit``)
    where ``descending``, so that larger digits rank first."""
    digits = 1 << radix_bits

    def digit(ordered, begin_bit, pass_bits):
        value = digit_of(ordered, begin_bit, pass_bits)
        if descending:
            value = U32(digits - 1 - value)
        return value

    return device_function(digit)


def tracked_digits(threads, radix_bits):
    """The digits each thread tracks (CUB's BINS_TRACKED_PER_THREAD): thread ``r``
    tracks digits ``r*B .. r*B+B-1``."""
    return max(1, -(-(1 << radix_bits) // threads))


def digit_reader(threads, items_per_thread, radix_bits, descending, counter_slot, load_counter, with_digit_prefix,
                 with_digit_counts):
    """``read(digit_prefix, digit_counts, buffer, tid)``: writes, for each digit thread
    ``tid`` tracks, the tile's count of keys ranked before that digit's (its first
    counter after the scan, ``counter_slot(ranked digit, 0)``: that of thread or warp 0)
    where ``with_digit_prefix``, and its count of keys of that digit (the next ranked
    digit's first counter, or the tile's size, minus its own) where
    ``with_digit_counts``."""
    digits = 1 << radix_bits
    tracked = tracked_digits(threads, radix_bits)
    tile_items = U32(threads * items_per_thread)

    def read(digit_prefix, digit_counts, buffer, tid):
        for track in range(tracked):
            bin_index = U32(tid * tracked + track)
            if bin_index < digits:
                ranked = U32(digits - 1 - bin_index) if descending else bin_index
                first = U32(load_counter(buffer, counter_slot(ranked, 0)))
                if with_digit_prefix:
                    digit_prefix[track] = first
                if with_digit_counts:
                    after = tile_items
                    if ranked + 1 < digits:
                        after = U32(load_counter(buffer, counter_slot(U32(ranked + 1), 0)))
                    digit_counts[track] = U32(after - first)

    return device_function(read)


def ranker(digit_of, threads, items_per_thread, radix_bits, descending, memoize, with_digit_prefix, layout,
           with_digit_counts=False, shape=None):
    """``(rank, tracked)``: a device function ``rank(ordered, ranks, begin_bit, pass_bits,
    digit_prefix, digit_counts, buffer)`` ranking the thread's ``items_per_thread``
    ordered bits by the digit of ``pass_bits`` (at most ``radix_bits``) bits from
    ``begin_bit`` (as ``digit_of(bits, begin_bit, num_bits)`` reads it, see
    ``coop._core.radix``) into ``ranks``, and, for the ``tracked`` digits the thread
    tracks, writing the tile's count of keys ranked before each to ``digit_prefix``
    (where ``with_digit_prefix``) and of keys of each to ``digit_counts`` (where
    ``with_digit_counts``): CUB's RADIX_RANK_MEMOIZE (``memoize``) or RADIX_RANK_BASIC. Its
    scratch is ``rank_layout``'s, at the start of ``buffer`` (``layout``: the buffer's
    whole layout, which holds it as ``"rank"`` or is it; ``shape``: the block's constant
    shape, ``Signature.block_shape``, or None). It needs the block synchronised before
    it if the buffer's memory was used since the previous ranking's end."""
    counted_digit = ranked_digit(digit_of, radix_bits, descending)
    log_lanes = max(radix_bits - 1, 0)
    lanes = 1 << log_lanes
    padded_lanes = lanes + 1
    # the counters' first 16-bit slot
    base = _counters_slot(layout)
    scan_segment = segment_scanner(threads, padded_lanes, packed=True, memoize=memoize, shape=shape)
    block_rank = block_rank_of(shape)
    load_counter = loader(types.uint16)
    n = items_per_thread

    @device_function
    def counter_slot(digit, tid):
        # The counters are 16-bit (CUB's DigitCounter), two to a 32-bit word: digit `d`'s
        # counter of thread `tid` is half `d >> log_lanes` of word `(d & (lanes - 1)) *
        # threads + tid`.
        return U32(base + 2 * ((digit & (lanes - 1)) * threads + tid) + (digit >> log_lanes))

    read_digits = digit_reader(threads, n, radix_bits, descending, counter_slot, load_counter, with_digit_prefix,
                               with_digit_counts)

    def count_key(i, ordered, ranks, buffer, tid, begin_bit, pass_bits, unused):
        slot = counter_slot(counted_digit(ordered[i], begin_bit, pass_bits), tid)
        count = U32(load_counter(buffer, slot))
        store(buffer, slot, np.uint16(count + 1))
        ranks[i] = count

    def add_key_prefix(i, ordered, ranks, buffer, tid, begin_bit, pass_bits, unused):
        slot = counter_slot(counted_digit(ordered[i], begin_bit, pass_bits), tid)
        ranks[i] = U32(ranks[i] + load_counter(buffer, slot))

    # (the per-key loops, unrolled in full as NVVM unrolls numba-cuda's plain loops: in
    # numba-cuda-mlir's code NVVM unrolled them 4 times at 8 keys a thread, indexing the
    # keys and ranks in local memory)
    count_keys, add_key_prefixes = unrolled_turns(n, count_key), unrolled_turns(n, add_key_prefix)

    def rank(ordered, ranks, begin_bit, pass_bits, digit_prefix, digit_counts, buffer):
        # 32-bit arithmetic, as CUB's: Numba computes integers in 64 bits (two
        # instructions per add or shift); each result cut back to 32 bits lets NVVM narrow
        # the operation itself
        tid = U32(block_rank())
        # No barrier first: the previous call's last reads were of this thread's own words
        # (a caller sharing the buffer with other phases synchronises before the call).
        for lane in range(padded_lanes):
            store_pair(buffer, U32(base + 2 * (lane * threads + tid)), U32(0))
        # per key, the count of the thread's keys of its digit before it (CUB's
        # thread_prefixes), in ranks; its counter's slot is found again after the scan,
        # where NVVM reuses the first (an array of the slots, as CUB's digit_counters,
        # was left in local memory by numba-cuda-mlir's code)
        count_keys(ordered, ranks, buffer, tid, begin_bit, pass_bits, 0)
        cuda.syncthreads()
        # Scan the counters in memory order (lane by lane, thread by thread; low halves,
        # then high halves), two at a time: each thread rakes a segment of consecutive
        # words.
        scan_segment(buffer, U32(base + 2 * tid * padded_lanes))
        cuda.syncthreads()
        add_key_prefixes(ordered, ranks, buffer, tid, begin_bit, pass_bits, 0)
        if with_digit_prefix or with_digit_counts:
            read_digits(digit_prefix, digit_counts, buffer, tid)
            # the next call's threads reset thread 0's counters, read here by everyone
            cuda.syncthreads()

    return device_function(rank), tracked_digits(threads, radix_bits)


def digit_matcher(radix_bits):
    """``peers(lanes, digit) -> mask``: the lanes of ``lanes`` (the caller's warp, all
    calling) whose ``digit`` equals the caller's, from one ballot per digit bit, as CUB's
    MatchAny: for a few bits, faster than ``match.any.sync``, whose issue stalls
    dominated the device sort's ranking in ncu. The ballots name the whole warp
    (``WARP_SYNC_MASK``); ``lanes`` masks their result."""

    def peers(lanes, digit):
        same = U32(lanes)
        for bit in range(radix_bits):
            same = U32(same & same_bit_lanes(WARP_SYNC_MASK, digit, bit))
        return same

    return device_function(peers)


def match_ranker(digit_of, threads, items_per_thread, radix_bits, descending, with_digit_prefix, layout,
                 with_digit_counts=False, shape=None):
    """``(rank, tracked)`` as ``ranker``'s, by CUB's RADIX_RANK_MATCH: each warp counts
    its keys of each digit in a 32-bit counter of its own, one key of every lane at a time
    (``digit_matcher`` finds the lanes holding the same digit; the lowest of them
    updates the counter), so that equal digits rank in warp-striped order (a warp's
    item ``i`` of every lane, in lane order, before its item ``i + 1``; warp by warp).
    Its scratch is ``match_rank_layout``'s, at the start of ``buffer`` (``layout``: that
    layout). It needs the block synchronised before it: the previous call's last reads
    are of any warp's counters."""
    counted_digit = ranked_digit(digit_of, radix_bits, descending)
    padded_warps, padded_segment = match_shape(threads, radix_bits)
    digit_peers = digit_matcher(radix_bits)
    # the counters' first 32-bit slot
    base = _counters_slot(layout)
    scan_segment = segment_scanner(threads, padded_segment, packed=False, memoize=True, shape=shape)  # as CUB's
    block_rank = block_rank_of(shape)
    load_counter = loader(types.uint32)
    n = items_per_thread

    @device_function
    def counter_slot(digit, warp):
        # CUB's warp_digit_counters[digit][warp]
        return U32(base + digit * padded_warps + warp)

    read_digits = digit_reader(threads, n, radix_bits, descending, counter_slot, load_counter, with_digit_prefix,
                               with_digit_counts)

    def rank(ordered, ranks, begin_bit, pass_bits, digit_prefix, digit_counts, buffer):
        tid = U32(block_rank())  # (32-bit arithmetic, as in ranker)
        warp = U32(tid >> 5)
        # the lanes present in the thread's warp: all of them but in a partial last warp
        # (what the matches are masked with; the warp's syncs name all 32 lanes)
        warp_lanes = warp_mask(block_rank(), threads)
        lower_lanes = lanes_below()
        # each thread zeroes its segment of the raking grid, which covers the counters
        segment_first = U32(base + tid * padded_segment)
        for i in range(padded_segment):
            store(buffer, U32(segment_first + i), U32(0))
        cuda.syncthreads()
        # per key, the count of its warp's keys of its digit before it (CUB's ranks before
        # the scan), in ranks; its counter's slot is found again after the scan (as in
        # ranker)
        for i in range(n):
            digit = counted_digit(ordered[i], begin_bit, pass_bits)
            peers = digit_peers(warp_lanes, digit)  # the lanes of this digit
            slot = counter_slot(digit, warp)
            earlier = load_counter(buffer, slot)  # the warp's keys of this digit in its earlier items
            cuda.syncwarp(WARP_SYNC_MASK)  # every peer has read the counter before the lowest updates it
            lower_peers = U32(cuda.popc(U32(peers & lower_lanes)))
            if lower_peers == 0:
                store(buffer, slot, U32(earlier + cuda.popc(peers)))
            cuda.syncwarp(WARP_SYNC_MASK)  # the update is seen by the warp's next item
            ranks[i] = U32(earlier + lower_peers)
        cuda.syncthreads()
        # Scan the counters in memory order (digit by digit, warp by warp): each thread
        # rakes its segment of the grid.
        scan_segment(buffer, segment_first)
        cuda.syncthreads()
        for i in range(n):
            slot = counter_slot(counted_digit(ordered[i], begin_bit, pass_bits), warp)
            ranks[i] = U32(ranks[i] + load_counter(buffer, slot))
        if with_digit_prefix or with_digit_counts:
            read_digits(digit_prefix, digit_counts, buffer, tid)

    return device_function(rank), tracked_digits(threads, radix_bits)


def early_counts_layout(threads, radix_bits):
    """The "match_early_counts" ranking's scratch, as CUB's BlockRadixRankMatchEarlyCounts
    TempStorage: the block scan's, then 32-bit counters per warp and digit
    (``warp_offsets[warp][digit]``)."""
    scan, _ = exclusive_sum_in_scratch(types.uint32, threads)
    return Struct("rank", Region("scan", types.uint32, scan.bytes // 4),
                  Region("counters", types.uint32, -(-threads // 32) << radix_bits))


def early_counts_ranker(digit_of, threads, items_per_thread, radix_bits, descending, with_digit_prefix, layout,
                        with_digit_counts=False, with_counts_op=False, shape=None):
    """``(rank, tracked)`` as ``ranker``'s, by CUB's RADIX_RANK_MATCH_EARLY_COUNTS_ANY
    (Onesweep's): each warp first counts its keys' digits into counters of its own with
    shared atomics (independent adds, no chain from one key to the next); each thread
    then sums, for the digits it tracks, the warps' counts (leaving each warp's first
    rank among the digit's keys) and, ``with_counts_op``, hands the digits' counts to
    ``counts_op(counts_state, counts)`` (CUB's counts callback: Onesweep publishes them
    before ranking);
    a block-wide exclusive sum of the counts gives each digit's first rank, added to the
    warps'; finally each key of a warp's item ``i`` finds its lanes of the same digit
    (``digit_matcher``), whose highest lane takes their ranks from the warp's counter
    with one atomic add. Equal digits rank in warp-striped order, as "match"'s. ``rank``
    takes ``counts_op`` and ``counts_state`` last. Its scratch is ``early_counts_layout``'s (``layout``:
    the buffer's layout, holding it as ``"rank"`` or being it). It needs the block
    synchronised before it."""
    counted_digit = ranked_digit(digit_of, radix_bits, descending)
    digits = 1 << radix_bits
    warps = -(-threads // 32)
    tracked = tracked_digits(threads, radix_bits)
    base = _counters_slot(layout)
    _, exclusive_sum = exclusive_sum_in_scratch(types.uint32, threads, shape)
    block_rank = block_rank_of(shape)
    load_counter = loader(types.uint32)
    zero_steps, zero_exact = striped_steps(warps * digits, threads)
    broadcast = shuffler(IDX, 32)
    digit_peers = digit_matcher(radix_bits)
    n = items_per_thread

    @device_function
    def counter_slot(digit, warp):
        # CUB's warp_offsets[warp][digit]
        return U32(base + warp * digits + digit)

    def rank(ordered, ranks, begin_bit, pass_bits, digit_prefix, digit_counts, buffer, counts_op, counts_state):
        tid = U32(block_rank())  # (32-bit arithmetic, as in ranker)
        warp = U32(tid >> 5)
        lane = U32(tid & 31)
        warp_lanes = warp_mask(block_rank(), threads)
        for k in range(zero_steps):
            slot = U32(tid + k * threads)
            if zero_exact or slot < warps * digits:
                store(buffer, U32(base + slot), U32(0))
        cuda.syncthreads()
        for i in range(n):
            atomic_add(buffer, counter_slot(counted_digit(ordered[i], begin_bit, pass_bits), warp), U32(1))
        cuda.syncthreads()
        # The digits the thread tracks (r*B .. r*B+B-1; counted as ``counted_digit``
        # numbers them, reversed where descending): each warp's first rank among the
        # tile's keys of the digit, and the digit's count.
        counts = cuda.local.array(tracked, np.uint32)
        total = U32(0)
        for track in range(tracked):
            digit = U32(tid * tracked + track)
            counts[track] = U32(0)
            if digit < digits:
                counted = U32(digits - 1 - digit) if descending else digit
                running = U32(0)
                for w in range(warps):
                    count = load_counter(buffer, counter_slot(counted, w))
                    store(buffer, counter_slot(counted, w), running)
                    running = U32(running + count)
                counts[track] = running
                total = U32(total + running)
        if with_counts_op:
            counts_op(counts_state, counts)
        # Each digit's first rank: the keys of the digits ranked before it (the threads
        # before, or after where descending, and the thread's own digits before it).
        before, tile_total = exclusive_sum(total, buffer)
        first = U32(tile_total - before - total) if descending else before
        firsts = cuda.local.array(tracked, np.uint32)
        for step in range(tracked):
            track = tracked - 1 - step if descending else step
            firsts[track] = first
            first = U32(first + counts[track])
        for track in range(tracked):
            digit = U32(tid * tracked + track)
            if digit < digits:
                counted = U32(digits - 1 - digit) if descending else digit
                for w in range(warps):
                    slot = counter_slot(counted, w)
                    store(buffer, slot, U32(load_counter(buffer, slot) + firsts[track]))
                if with_digit_prefix:
                    digit_prefix[track] = firsts[track]
                if with_digit_counts:
                    digit_counts[track] = counts[track]
        cuda.syncthreads()
        lower_lanes = lanes_below()
        for i in range(n):
            digit = counted_digit(ordered[i], begin_bit, pass_bits)
            peers = digit_peers(warp_lanes, digit)  # the lanes of this digit
            leader = U32(31 - cuda.clz(np.int32(peers)))
            taken = U32(0)
            if lane == leader:
                taken = atomic_add(buffer, counter_slot(digit, warp), U32(cuda.popc(peers)))
            ranks[i] = U32(broadcast(WARP_SYNC_MASK, taken, leader) + cuda.popc(U32(peers & lower_lanes)))

    return device_function(rank), tracked


def _key_type_free(layout_of):
    """An ``Algorithm`` scratch function, ``(key_type, threads, radix_bits) -> layout``,
    for a ranking's ``layout_of(threads, radix_bits)``: the counters do not depend on the
    key type."""
    return lambda key_type, threads, radix_bits: layout_of(threads, radix_bits)


# radix_rank's algorithms: each function makes a ranker from (digit_of, threads,
# items_per_thread, radix_bits, descending, with_digit_prefix, layout), by keyword
RANK_ALGORITHMS = {
    "memoize": Algorithm(functools.partial(ranker, memoize=True), _key_type_free(rank_layout)),
    "basic": Algorithm(functools.partial(ranker, memoize=False), _key_type_free(rank_layout)),
    "match": Algorithm(match_ranker, _key_type_free(match_rank_layout)),
    "match_early_counts": Algorithm(early_counts_ranker, _key_type_free(early_counts_layout)),
}


def _key_ordering(key_types, is_tuple, n, num_bits):
    """``(fill(key_arrays, ordered, begin_bit), dtype, digit_of, digit_begin)``: what the
    ranking ranks, for keys of ``key_types`` (``is_tuple``: a tuple key's members):
    ``fill`` writes it to ``ordered``, a ``cuda.local.array(n, dtype)`` the caller makes
    (a device function may not return an array it creates); ``digit_of`` reads its
    digits, from bit ``digit_begin(begin_bit)``. One key: its ordered bits, ranked from
    ``begin_bit``. A tuple key: the digit itself, from its members' concatenated ordered
    bits (``radix.key_words``' words; a digit may span two of them), ranked from bit 0."""
    if not is_tuple:
        to_ordered = radix.to_ordered(key_types[0])

        def fill(key_arrays, ordered, begin_bit):
            keys = key_arrays[0]
            for i in range(n):
                ordered[i] = to_ordered(keys[i])

        dtype = np.dtype("uint%d" % radix.key_bits(key_types[0]))
        return device_function(fill), dtype, radix.digit(key_types[0]), given_bit
    add_digits = _digit_parts(radix.key_words(key_types), n, num_bits)

    def fill_digits(key_arrays, digits, begin_bit):
        for i in range(n):
            digits[i] = U32(0)
        add_digits(key_arrays, digits, begin_bit)

    return device_function(fill_digits), np.dtype(np.uint32), radix.digit(types.uint32), _bit_zero


def _digit_parts(words, n, num_bits):
    """``add(key_arrays, digits, begin_bit)``: or into ``digits`` the parts that ``words``
    (a tuple key's, from its least significant) hold of each key's digit of ``num_bits``
    bits from ``begin_bit``."""
    word, rest = words[0], words[1:]
    pack, word_digit = radix.word_packer(word), word.digit
    first, end = word.offset, word.offset + word.width
    add_rest = _digit_parts(rest, n, num_bits) if rest else _no_digit_parts

    def add(key_arrays, digits, begin_bit):
        low = max(begin_bit, first)
        high = min(begin_bit + num_bits, end)
        if low < high:  # (the same in every thread: begin_bit is)
            for i in range(n):
                part = word_digit(pack(key_arrays, i), low - first, high - low)
                digits[i] = U32(digits[i] | U32(part << (low - begin_bit)))
        add_rest(key_arrays, digits, begin_bit)

    return device_function(add)


@device_function
def _no_digit_parts(key_arrays, digits, begin_bit):
    pass


@device_function
def given_bit(bit):
    """A bit argument as given (``radix_sort``'s ``end_bit``, a plain key's ranking's
    ``begin_bit``)."""
    return bit


@device_function
def _bit_zero(begin_bit):
    return 0


def _rank_temp_storage_bytes(sig, key_type, threads, num_bits, algorithm=PRIMITIVE_DEFAULT):
    """Bytes a ``temp_storage=`` array needs for a ranking of ``key_dtype`` keys (a tuple
    of dtypes for tuple keys) by ``num_bits``-bit digits in blocks of ``threads`` with
    ``algorithm``."""
    for member in key_type.types if isinstance(key_type, types.BaseTuple) else (key_type,):
        radix.check_key_type(sig, member, "dtype")
    block = required_threads(sig, threads)
    bits = sig.constant_int(num_bits, "num_bits")
    name, chosen = choose(sig, algorithm, RANK_ALGORITHMS)
    check_radix_bits(sig, bits, "num_bits", block, lambda bits: chosen.layout(key_type, block, bits))
    return chosen.temp_storage_bytes(key_type, block, bits)


@primitive("coop.block.radix_rank", _rank_temp_storage_bytes, group="block", uniform=("begin_bit",))
def radix_rank(keys, ranks, begin_bit, num_bits, threads=None, items_per_thread=None, descending=False,
               algorithm="memoize", exclusive_digit_prefix=None, digit_counts=None, counts_op=None, counts_state=None,
               temp_storage=None):
    """Rank a block's keys by one radix digit (CUB BlockRadixRank::RankKeys): each key's
    position in the tile stably sorted by the digit of ``num_bits`` bits from
    ``begin_bit`` of its ordered bits (ascending, or descending).

    Parameters
    ----------
    keys : items array, or tuple of items arrays
        The thread's ``items_per_thread`` keys, blocked: bool, int8-int64, uint8-uint64,
        float16, float32 or float64 (ordered as the module docstring says). A tuple
        ``(a, b, ...)`` of items arrays is one key per position, ``a`` most significant
        (as ``coop.block.radix_sort``'s tuple keys, CUB's decomposer): its bits are the
        members' ordered bits concatenated, ``a``'s highest, and ``begin_bit`` counts in
        them (a digit may take bits of two members).
    ranks : items array of integers
        Receives each key's rank: a tile position, 0 to ``threads * items_per_thread - 1``.
    begin_bit : int
        The digit's least significant bit in the key's ordered bits (run time allowed;
        the same in every thread).
    num_bits : int, compile-time constant
        The digit's width, 1 to 8 (sizes the counters: ``2**num_bits`` digits). The
        "memoize" and "basic" rankings' counters, ``(2**(num_bits - 1) + 1) * threads``
        32-bit words, must fit in 48 KiB of shared memory, with ``temp_storage`` too
        (their indices are 16-bit): 8 bits in blocks of up to 95 threads, 7 up to 188, 6
        up to 371, 5 up to 721, 4 or fewer in any block. Wider is refused at compile
        time, naming the most bits that fit; the "match" rankings take 8 in any block.
    threads : int or tuple, compile-time constant
        {threads} Required.
    items_per_thread : int, compile-time constant
        The length of ``keys`` and ``ranks`` (required); ``threads * items_per_thread``
        at most 65535 (but for the "match" rankings).
    descending : bool, compile-time constant, default False
        Rank larger digits first.
    algorithm : str, compile-time constant, default "memoize"
        ``"memoize"`` (CUB's RADIX_RANK_MEMOIZE: the raking scan keeps its segment of
        counters in registers), ``"basic"`` (RADIX_RANK_BASIC: it reads them again) or
        ``"match"`` (RADIX_RANK_MATCH: each warp counts its keys, matching its lanes'
        digits with ballots, into 32-bit counters per digit and warp, so the tile may
        exceed 65535 keys). "match" ranks keys of equal digits in *warp-striped* order
        (lane ``l`` of warp ``w``'s item ``i`` before lane ``l+1``'s, before item
        ``i+1``: position ``w*32*N + i*L + l``, ``L`` the warp's lanes), as CUB's: it is
        stable for keys held warp-striped (read from global memory without the
        transpose of a "warp_transpose" load: ``coop.block.load``'s "warp_striped", as
        CUB's onesweep does), not for blocked ones. ``"match_early_counts"``
        (RADIX_RANK_MATCH_EARLY_COUNTS_ANY, Onesweep's): the same ranks as "match",
        found faster: each warp counts all its keys first (shared atomics), the counts
        become each warp's first rank of each digit, and then each key's lanes of the
        same digit take their ranks with one atomic add.
    exclusive_digit_prefix : items array of integers, optional
        Receives, for the digits this thread tracks (thread ``r`` tracks digits
        ``r*B .. r*B+B-1`` with ``B = max(1, ceil(2**num_bits / threads))``; array length
        ``B``), the count of the tile's keys ranked before that digit's keys.
    digit_counts : items array of integers, optional
        Receives, for the same digits, the count of the tile's keys of that digit.
    counts_op : device function, optional
        CUB's counts callback: ``counts_op(counts_state, counts)``, called by every
        thread with the counts of the digits it tracks (a uint32 items array as
        ``digit_counts``), as soon as they are known: with "match_early_counts" before
        the keys are ranked (Onesweep publishes them to later tiles then), with the
        others after. It must not synchronise the block.
    counts_state : any, optional
        Passed to ``counts_op``.
    temp_storage : shared array, optional
        {temp_storage}
        {temp_storage_size}

    Returns
    -------
    None
        Every thread gets its keys' ranks in ``ranks``.

    Barriers
    --------
    {block_barriers}

    Here, "memoize" and "basic": three ``cuda.syncthreads()``; one more with
    ``exclusive_digit_prefix`` or ``digit_counts``, and one more with
    ``temp_storage``. "match": five, "match_early_counts": four plus the block scan's,
    whatever the options (the first waits for the previous call's reads of the
    counters, or for other primitives' of the caller's buffer).

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
    key_types, keys_tuple = items_or_tuple(sig, keys, "keys")
    for member in key_types:
        radix.check_key_type(sig, member, "keys")
    rank_items(sig, ranks)
    block = required_threads(sig, threads)
    n = required_items_per_thread(sig, items_per_thread)
    name, chosen = choose(sig, algorithm, RANK_ALGORITHMS)
    if not name.startswith("match"):  # (the match rankings' counters are 32-bit)
        check_tile(sig, block, n)
    bits = sig.constant_int(num_bits, "num_bits")
    layout = check_radix_bits(sig, bits, "num_bits", block, lambda bits: chosen.layout(key_types, block, bits))
    sig.run_time_int(begin_bit, "begin_bit")
    is_descending = sig.constant_bool(descending, "descending")
    with_prefix = not is_none(exclusive_digit_prefix)
    if with_prefix:
        rank_items(sig, exclusive_digit_prefix, "exclusive_digit_prefix")
    with_counts = not is_none(digit_counts)
    if with_counts:
        rank_items(sig, digit_counts, "digit_counts")
    with_counts_op = not is_none(counts_op)
    early = name == "match_early_counts"
    options = dict(with_counts_op=with_counts_op) if early else {}
    scratch, users_buffer = storage(sig, temp_storage, layout, owner=(sig.primitive, name, bits))
    fill_ordered, ordered_dtype, digit_of, digit_begin = _key_ordering(key_types, keys_tuple, n, bits)
    rank, tracked = chosen.function(digit_of=digit_of, threads=block, items_per_thread=n,
                                    radix_bits=bits, descending=is_descending, with_digit_prefix=with_prefix,
                                    with_digit_counts=with_counts or (with_counts_op and not early), **options,
                                    layout=layout, shape=sig.block_shape(threads))
    # Wait before the ranking writes: in the caller's buffer, for the primitives that
    # used it before; with match, for the previous call's last reads (of any warp's
    # counters; the others' are of the thread's own, or end with a barrier).
    lead_barrier = users_buffer or name in ("match", "match_early_counts")
    as_key_arrays = array_tuple(keys_tuple)
    check_keys = array_lengths_check(sig.primitive, "keys", n, len(key_types))
    check_ranks = size_check(sig.primitive, "ranks", exact=True)
    check_prefix = size_check(sig.primitive, "exclusive_digit_prefix", exact=True)
    check_counts = size_check(sig.primitive, "digit_counts", exact=True)

    def impl(keys, ranks, begin_bit, exclusive_digit_prefix, digit_counts, counts_op, counts_state, temp_storage):
        key_arrays = as_key_arrays(keys)
        check_keys(key_arrays)
        check_ranks(ranks, n)
        if with_prefix:
            check_prefix(exclusive_digit_prefix, tracked)
        if with_counts:
            check_counts(digit_counts, tracked)
        ordered = cuda.local.array(n, ordered_dtype)
        fill_ordered(key_arrays, ordered, begin_bit)
        digit_begin_bit = digit_begin(begin_bit)
        buffer = scratch(temp_storage)
        if lead_barrier:
            cuda.syncthreads()
        if early:
            rank(ordered, ranks, digit_begin_bit, bits, exclusive_digit_prefix, digit_counts, buffer, counts_op,
                 counts_state)
        elif with_counts_op:  # (the counts are known once the ranking is done)
            counts = digit_counts if with_counts else cuda.local.array(tracked, np.uint32)
            rank(ordered, ranks, digit_begin_bit, bits, exclusive_digit_prefix, counts, buffer)
            counts_op(counts_state, counts)
        else:
            rank(ordered, ranks, digit_begin_bit, bits, exclusive_digit_prefix, digit_counts, buffer)

    return impl


