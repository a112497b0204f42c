"""Exchanges of items between threads through shared memory: the machinery behind
``coop.block.exchange`` (CUB's BlockExchange) and ``coop.warp.exchange`` (WarpExchange),
for block load/store transposes and the like to build on.

A group of ``threads`` threads (a block, or a logical warp) holds a tile of
``threads * n`` items, ``n`` per thread. An exchange writes each thread's item ``i`` to
the tile offset its source arrangement gives it, waits at a barrier, and reads the
thread's output item ``i`` from the offset its target arrangement gives it. The
arrangements are offset functions ``offset(index, i, n, threads, ranks)`` of the
thread's place ``index`` in the group: ``blocked_offset``, ``striped_offset``,
``warp_striped_offset`` (see ``coop.block.exchange`` for the partial-warp rule) and
``ranked_offset`` (``ranks[i]``). Offsets map to buffer slots through CUB's
bank-conflict padding (``slot_of``). ``FORMS`` names the exchanges by CUB's names.
"""

import numpy as np
from numba.cuda import types

from coop._core.backend import SIMULATOR, cuda
from coop._core.misuse import size_check
from coop._core.scratch import store
from coop._core.shuffle import FULL_MASK
from coop._core.specialize import device_function, is_none

if not SIMULATOR:
    from coop._core.compilers import numba_cuda_intrinsics as compiled

LOG_SMEM_BANKS = 5  # 32 banks of 4 bytes (CUB's log2_smem_banks)
STATIC_SHARED_LIMIT = 48 * 1024  # bytes of static shared memory a kernel may have


# -- bank-conflict padding (CUB's INSERT_PADDING) ----------------------------------------


def is_padded(items_per_thread):
    """CUB pads when each thread's items are a power of two above 4: blocked offsets
    ``r*N + i`` would put the lanes of a warp on the same few banks."""
    return items_per_thread > 4 and items_per_thread & (items_per_thread - 1) == 0


def padded_slots(tile_items, items_per_thread):
    """Slots holding ``tile_items`` offsets, the padding included."""
    if is_padded(items_per_thread):
        return tile_items + (tile_items >> LOG_SMEM_BANKS)
    return tile_items


if SIMULATOR:

    def bank_padded(offset):
        """The slot of tile offset ``offset``: one padding slot after every 32."""
        return offset + (offset >> LOG_SMEM_BANKS)

    def unpadded(offset):
        return offset

else:
    # Compiled, the slot is computed in 32 bits, as CUB's: Numba's integer arithmetic is
    # 64-bit, and a 64-bit shift and add per item, then a conversion to the 32-bit
    # shared address (coop._core.backend), cost instructions and registers (a 1024 x 16
    # time-sliced exchange: 9383 PTX instructions in 64 bits, 3815 in 32). Truncating
    # first also lets NVVM narrow the offset arithmetic feeding it.
    bank_padded = compiled.slot32(LOG_SMEM_BANKS, padded=True)
    unpadded = compiled.slot32(LOG_SMEM_BANKS, padded=False)


def slot_of(items_per_thread):
    """The offset -> slot mapping for ``items_per_thread``."""
    return bank_padded if is_padded(items_per_thread) else unpadded


# -- offsets: where item ``i`` of the thread at ``index`` is in the tile -------------------
# ``index`` is the thread's place in the group exchanging (the block rank, or the lane of
# a logical warp), ``n`` its items, ``threads`` the group's size; constants after inlining.


@device_function
def blocked_offset(index, i, n, threads, ranks):
    return index * n + i


@device_function
def striped_offset(index, i, n, threads, ranks):
    return i * threads + index


@device_function
def warp_lanes(index, threads):
    """Lanes of the caller's warp: 32, fewer in the last warp of a partial block."""
    if threads % 32 == 0:
        return 32
    return min(32, threads - (index & ~31))


@device_function
def warp_striped_offset(index, i, n, threads, ranks):
    # the warp's items start where its lane 0's blocked items do
    return (index & ~31) * n + i * warp_lanes(index, threads) + (index & 31)


@device_function
def ranked_offset(index, i, n, threads, ranks):
    return ranks[i]


# -- which items are written ---------------------------------------------------------------


@device_function
def keep_all(i, ranks, is_valid, tile_items):
    return True


@device_function
def keep_in_tile(i, ranks, is_valid, tile_items):
    return ranks[i] >= 0 and ranks[i] < tile_items


@device_function
def keep_flagged(i, ranks, is_valid, tile_items):
    return bool(is_valid[i])


# -- barriers between writing and reading ----------------------------------------------------


@device_function
def block_barrier(mask):
    cuda.syncthreads()


@device_function
def warp_barrier(mask):
    cuda.syncwarp(mask)


@device_function
def warp_mask(index, threads):
    """The lanes of the caller's warp in a block of ``threads``."""
    lanes = warp_lanes(index, threads)
    if lanes == 32:
        return FULL_MASK
    return (1 << lanes) - 1


# -- the exchanges -------------------------------------------------------------------------


@device_function
def exchange_through(items, output, ranks, is_valid, buffer, load, region, index, n, threads,
                     write_offset, keep, read_offset, slot, barrier, mask):
    """Write each kept item ``i`` to slot ``region + slot(write_offset(...))`` of
    ``buffer``, ``barrier(mask)``, read output item ``i`` from ``read_offset``. Every
    item is written before any is read, so ``output`` may be ``items``. The caller makes
    sure nobody still reads the slots written (a barrier before, if needed)."""
    tile_items = n * threads
    for i in range(n):
        if keep(i, ranks, is_valid, tile_items):
            store(buffer, region + slot(write_offset(index, i, n, threads, ranks)), items[i])
    barrier(mask)
    for i in range(n):
        output[i] = load(buffer, region + slot(read_offset(index, i, n, threads, ranks)))


@device_function
def exchange_time_sliced_through(items, output, ranks, is_valid, buffer, load, index, n, threads,
                                 write_offset, keep, read_offset, slot, barrier, mask,
                                 slice_threads, received):
    """As ``exchange_through``, with a buffer of ``slice_threads * n`` offsets: the tile
    passes through it in slices (CUB's warp time slicing). Each slice: a block barrier
    (the previous slice's, or call's, reads are done), every thread writes its items
    that fall in the slice, ``barrier(mask)``, every thread reads those of its outputs
    that fall in it into ``received`` (a local array of ``n``), copied to ``output`` at
    the end (which may be ``items``, still being written)."""
    tile_items = n * threads
    slice_items = slice_threads * n
    for first in range(0, tile_items, slice_items):
        cuda.syncthreads()
        for i in range(n):
            offset = write_offset(index, i, n, threads, ranks) - first
            if offset >= 0 and offset < slice_items and keep(i, ranks, is_valid, tile_items):
                store(buffer, slot(offset), items[i])
        barrier(mask)
        for i in range(n):
            offset = read_offset(index, i, n, threads, ranks) - first
            if offset >= 0 and offset < slice_items:
                received[i] = load(buffer, slot(offset))
    for i in range(n):
        output[i] = received[i]


def warp_by_warp(threads, n, write_offset, read_offset, slot, load):
    """A within-warp exchange (``WARP_LOCAL_OFFSETS``) through a buffer for one warp's
    items (CUB's warp time slicing), for blocks of ``threads`` threads and ``n`` items
    per thread: a device function ``exchange(items, output, buffer, index)``. The warps
    take turns, each turn after a block barrier (the previous turn's, or call's, reads
    are done), and only the warp whose turn it is moves its items. ``write_offset`` and
    ``read_offset`` are relative to the warp's first tile item, in a group of the warp's
    lanes.

    The turns are a loop unrolled in full, as CUB's (``unrolled_turns``): straight-line
    code. The first turn keeps its barrier (CUB's BlockedToWarpStriped leaves it to the
    caller): the buffer's last readers may still be reading it, the last warp of the
    previous call, or any thread of another primitive given the same ``temp_storage``."""

    def turn(turn_warp, items, output, buffer, index, warp, lanes, mask):
        cuda.syncthreads()
        if warp == turn_warp:
            exchange_through(
                items, output, None, None, buffer, load, 0, index & 31, n, lanes,
                write_offset, keep_all, read_offset, slot, warp_barrier, mask,
            )

    turns = unrolled_turns(-(-threads // 32), turn)

    def exchange(items, output, buffer, index):
        # the warp in 32 bits, as CUB's warp_id: compared in 64 bits, each turn's test
        # takes two instructions and ptxas keeps more registers (36 against 32 at 512x8)
        warp = np.uint32(index >> 5)
        turns(items, output, buffer, index, warp, warp_lanes(index, threads), warp_mask(index, threads))

    return device_function(exchange)


def unrolled_turns(count, turn):
    """``turns(items, output, buffer, index, warp, lanes, mask)``, a device function
    calling ``turn(k, items, output, buffer, index, warp, lanes, mask)`` for ``k`` (a
    uint32) in ``range(count)``: compiled, a loop that NVVM unrolls in full, as CUB's
    ``#pragma unroll`` loops are (``llvm.loop.unroll.full`` on its back edge). NVVM
    unrolls a plain loop of 16 turns only twice; the turns written out as ``count``
    calls cost NVVM a copy of the unsimplified turn each (0.4-0.6 s more for a 512x8
    load and store, against 0.1 s for this loop). ``turn``, a plain Python function, is
    compiled once."""
    if SIMULATOR:

        def simulated(items, output, buffer, index, warp, lanes, mask):
            for k in range(count):
                turn(np.uint32(k), items, output, buffer, index, warp, lanes, mask)

        return simulated

    return compiled.unrolled_loop(count, turn)


# form -> (write offset, keep, read offset, exchanges only within warps)
FORMS = {
    "striped_to_blocked": (striped_offset, keep_all, blocked_offset, False),
    "blocked_to_striped": (blocked_offset, keep_all, striped_offset, False),
    "warp_striped_to_blocked": (warp_striped_offset, keep_all, blocked_offset, True),
    "blocked_to_warp_striped": (blocked_offset, keep_all, warp_striped_offset, True),
    "scatter_to_blocked": (ranked_offset, keep_all, blocked_offset, False),
    "scatter_to_striped": (ranked_offset, keep_all, striped_offset, False),
    "scatter_to_striped_guarded": (ranked_offset, keep_in_tile, striped_offset, False),
    "scatter_to_striped_flagged": (ranked_offset, keep_flagged, striped_offset, False),
}

# The within-warp forms as seen by one warp: (write offset, read offset) relative to the
# warp's first tile item, its lanes the group (warp-striped is striped over the warp's lanes).
WARP_LOCAL_OFFSETS = {
    "warp_striped_to_blocked": (striped_offset, blocked_offset),
    "blocked_to_warp_striped": (blocked_offset, striped_offset),
}


# -- argument checks -----------------------------------------------------------------------


def required_threads(sig, threads):
    count = sig.block_threads(threads)
    if count is None:
        raise sig.error(
            "threads",
            "is required: the block's thread count as a compile-time constant, e.g. threads=128 "
            "(it sizes the shared memory)",
        )
    return count


def required_items_per_thread(sig, items_per_thread):
    if is_none(items_per_thread):
        raise sig.error(
            "items_per_thread",
            "is required: the length of each thread's items array as a compile-time constant, "
            "e.g. items_per_thread=4 (it sizes the shared memory)",
        )
    count = sig.constant_int(items_per_thread, "items_per_thread")
    if count < 1:
        raise sig.error("items_per_thread", f"must be at least 1, got {count}")
    return count


#: What a scratch past the static shared memory takes instead.
DYNAMIC_TEMP_STORAGE = ("pass a temp_storage= array: a dynamic shared array (cuda.shared.array(0, np.uint8)) of "
                        "temp_storage_bytes, given at launch after coop.allow_dynamic_shared_memory")


def check_static_shared(sig, temp_storage, layout, param, what, instead=DYNAMIC_TEMP_STORAGE):
    """Without a caller's ``temp_storage``, a primitive's scratch (``layout``) must fit
    a kernel's static shared memory; else an error naming ``param``: "``param`` ``what``,
    N bytes of shared memory: more than ...; ``instead``"."""
    if is_none(temp_storage) and layout.nbytes > STATIC_SHARED_LIMIT:
        raise sig.error(
            param,
            f"{what}, {layout.nbytes} bytes of shared memory: more than the {STATIC_SHARED_LIMIT} bytes of static "
            f"shared memory a kernel may have; {instead}",
        )


def rank_items(sig, ranks, param="ranks"):
    rank_type = sig.items(ranks, param)
    if not isinstance(rank_type, types.Integer):
        raise sig.error(param, f"must hold integer ranks (tile positions), got {rank_type}")


def flag_items(sig, is_valid, param="is_valid"):
    flag_type = sig.items(is_valid, param)
    if not isinstance(flag_type, (types.Boolean, types.Integer)):
        raise sig.error(param, f"must hold bool flags, got {flag_type}")


@device_function
def _no_array(array, n):
    pass


def exact_lengths(sig, n, with_ranks, with_flags):
    """``check(items, output, ranks, is_valid)``: each array must hold exactly ``n`` items
    (a compile-time error where its length is a constant, see ``coop._core.misuse``);
    ``ranks`` and ``is_valid`` are checked only where the exchange takes them
    (``with_ranks``, ``with_flags``), else ignored (None)."""

    def exact(param, present=True):
        return size_check(sig.primitive, param, exact=True) if present else _no_array

    check_items, check_output = exact("items"), exact("output")
    check_ranks, check_flags = exact("ranks", with_ranks), exact("is_valid", with_flags)

    def check(items, output, ranks, is_valid):
        check_items(items, n)
        check_output(output, n)
        check_ranks(ranks, n)
        check_flags(is_valid, n)

    return device_function(check)
