"""Decoupled look-back (Merrill and Garland, "Single-pass Parallel Prefix Scan with
Decoupled Look-back", 2016; CUB's ScanTileState and TilePrefixCallbackOp): how a tile
learns the combination of every tile before it within one kernel, waiting only on
predecessors that have not yet published anything.

These are the building blocks of coop.device's single-pass kernels (the scans, select,
the radix sort's passes; ``arrive`` for reduce and histogram_even), public for kernels of
your own: ``notebooks/05_device_algorithms.ipynb`` writes a complete single-pass scan
with ``TileStates``, ``claim_tile`` and ``tile_prefix``.

Each tile has a status and two values in global memory (values of up to 32 bits live in
the status word itself; a tuple value has an array per member: ``value_dtype`` is then a
tuple of dtypes). A tile's status is empty until it publishes ``AGGREGATE`` (its
own items' combination) and later ``INCLUSIVE`` (the combination of every tile up to
it). Tiles are claimed in order (``claim_tile``: an atomic counter), so every
predecessor of a tile is running or done: the look-back never waits on a block that has
not started, and it is correct when blocks run one at a time (the simulator's way).

- ``TileStates(tiles, value_dtype, stream)``: the global memory, kept between calls, and
  the call's ``epoch``; ``status[0]`` is the tile counter, ``status[t + 1]`` tile
  ``t``'s status, ``epoch << 2 | flag``. A status of an earlier call's epoch reads as
  empty, so nothing is reset between calls; the block that claims the last tile sets
  the counter back to 0.
- ``tile_access(value_dtype)``: ``publish`` and ``read`` (spinning while empty) of one
  tile's status and value.
- ``arrive(counter, index, is_last)``: a block's arrival at a grid-wide counter, telling the
  last block to arrive (which then sees every block's results: a reduction's final pass).
  ``block_arrives(counter, index, is_last)``: the same made by the whole block, each of
  whose threads has written results (global counters added to): True in the last block.
- ``lookback_prefix(op, value_dtype, first_look_ns=None)``: the block scan's prefix callback
  ``prefix(state, aggregate) -> exclusive prefix``, ``state = (status, aggregates,
  inclusives, tile, epoch)``, which the first warp of the block calls (coop.block's
  ``prefix_op``): lane 0 publishes the tile's aggregate; each lane reads one of the 32
  predecessors before the window's end (lane 31 the nearest); the window's values from
  the last INCLUSIVE one on are combined in tile order (a suffix scan over the lanes, so
  ``op`` need not commute) and the window moves back by 32 tiles until an INCLUSIVE one
  is found; lane 0 then publishes the tile's inclusive value. As CUB's, the warp sleeps
  before its first look (in grids of 500 blocks or more) and between polls of a status
  still empty (``FIRST_LOOK_NANOSECONDS``, ``SPIN_NANOSECONDS``).
- ``tile_prefix(op, value_dtype, first_look_ns=None)``: the same for a scan seeded with ``initial``
  (``state`` ends with it): the first tile's prefix is ``initial``.

Memory ordering (``coop._core.memory_order``), ``tile_access``: a value of up to 32 bits
shares one 64-bit word with its status, written and read whole with relaxed GPU-scope
accesses (served by L2): a reader that sees the status sees the value. Wider values, and
tuple values (whatever their size: each member in an array of its own), are written
with plain stores (every member) and then the status with a release store; a reader
acquires the status and only then reads the value (every member), with plain loads.
Release/acquire at GPU scope on the status word orders the value's writes before its
reads, and the acquire keeps the reading SM's L1 from serving a stale line.
"""

import functools

import numpy as np
from numba import cuda

from coop._core.items import accessors
from coop._core.memory_order import load_acquire, load_relaxed_pair, packs, store_relaxed_pair, store_release
from coop._core.namespace import public_namespace
from coop._core.shuffle import DOWN, FULL_MASK, IDX, shuffler
from coop._core.values import converter, value_type_of
from coop.device._host import fill_zero, temporary, temporary_with_state

__all__ = ["AGGREGATE", "INCLUSIVE", "TileStates", "arrive", "block_arrives", "claim_tile", "lookback_prefix", "tile_access",
           "tile_prefix"]

AGGREGATE, INCLUSIVE = 1, 2  # (flags; 0 is never published)

# CUB's delays (its scans' "fixed delay constructor", 648 and 1245 ns for 4-byte sums on
# sm_90), in grids of 500 blocks or more: a sleep between two polls of a status still
# empty, and one before a tile's first look back, giving its predecessors time to
# publish rather than polling L2 while they load. Measured on an H100 (int32, 2^24 and
# 2^28 items): the first look's sleep made the scans 5-10% faster, select_flagged 5-12%,
# unique 13-21% (the polls' sleep alone: 1%). 0: none. Kernels pass their own first look
# (``lookback_prefix``): the best sleep grows with a tile's time.
SPIN_NANOSECONDS = 648
FIRST_LOOK_NANOSECONDS = 1245


@cuda.jit(device=True)
def _delay(ns):
    """CUB's ``delay``: a sleep of ``ns`` nanoseconds in a grid of 500 blocks or more (in
    a smaller one the predecessors are near done); none for 0."""
    if ns != 0 and cuda.gridDim.x >= 500:
        cuda.nanosleep(ns)


@cuda.jit(device=True)
def claim_tile(status, tiles, slot):
    """The next of ``tiles`` tiles in claiming order, to every thread of the block
    (``status[0]`` is the counter; ``slot``: a shared array of one int32; the call
    synchronises the block). The block that claims the last tile sets the counter back
    to 0 for the next kernel: every other claim has been made by then."""
    if cuda.threadIdx.x == 0 and cuda.threadIdx.y == 0 and cuda.threadIdx.z == 0:
        claimed = cuda.atomic.add(status, 0, 1)
        if claimed == tiles - 1:
            status[0] = 0
        slot[0] = claimed
    cuda.syncthreads()
    return slot[0]


def _packs(value_dtype):
    """Whether values of ``value_dtype`` share the status word (tuples never do)."""
    return not isinstance(value_dtype, tuple) and packs(value_dtype)


def _converter(value_dtype):
    """The conversion of an operator's result to ``value_dtype`` (the NumPy scalar type,
    or coop's conversion of a tuple)."""
    if isinstance(value_dtype, tuple):
        return converter(value_type_of(value_dtype))
    return np.dtype(value_dtype).type


@cuda.jit(device=True)
def arrive(counter, index, is_last):
    """A block's arrival, made by one of its threads once the block's results are written
    (every writing thread having fenced them, ``cuda.threadfence()``, and the block
    synchronised): ``counter[index]`` counts the blocks of the grid that have arrived,
    and ``is_last[0]`` (a shared int32) tells whether this block came last, when every
    other block's results are visible to it (CUDA's threadfence reduction). The last
    sets the counter back to 0 for the next kernel: every other arrival has been made."""
    cuda.threadfence()
    is_last[0] = cuda.atomic.add(counter, index, 1) == cuda.gridDim.x - 1
    if is_last[0]:
        counter[index] = 0


@cuda.jit(device=True)
def block_arrives(counter, index, is_last):
    """``arrive`` for a (1-D) block every thread of which has written results: each fences
    its own, the block synchronises, thread 0 arrives, and every thread learns whether the
    block came last (``is_last``: a shared int32), then fenced to see the others'."""
    cuda.threadfence()
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        arrive(counter, index, is_last)
    cuda.syncthreads()
    if is_last[0]:
        cuda.threadfence()
        return True
    return False


@functools.lru_cache(maxsize=None)
def tile_access(value_dtype):
    """``(publish, read)`` for tiles of ``value_dtype`` values:
    ``publish(status, aggregates, inclusives, tile, epoch, flag, value)`` (one thread)
    and ``read(status, aggregates, inclusives, tile, epoch, like) -> (flag, value)``,
    spinning while the tile has published nothing in this epoch. Tile ``t``'s status is
    ``status[t + 1]``: ``epoch << 2 | flag``. Values of up to 32 bits share a 64-bit word
    with it (``status`` is uint64: ``coop._core.memory_order.store_relaxed_pair``),
    others are stored beside a uint32 status (release/acquire): ``aggregates`` and
    ``inclusives`` are arrays, or tuples of arrays (one per member) for tuple values."""
    spin = np.uint32(SPIN_NANOSECONDS)
    if _packs(value_dtype):

        @cuda.jit(device=True)
        def publish(status, aggregates, inclusives, tile, epoch, flag, value):
            store_relaxed_pair(status, tile + 1, epoch << 2 | flag, value)

        @cuda.jit(device=True)
        def read(status, aggregates, inclusives, tile, epoch, like):
            word, value = load_relaxed_pair(status, tile + 1, like)
            while word >> 2 != epoch:
                _delay(spin)
                word, value = load_relaxed_pair(status, tile + 1, like)
            return word & 3, value

    else:
        # (one array, or a tuple of arrays written and read member by member)
        read_value, write_value, _ = accessors(len(value_dtype) if isinstance(value_dtype, tuple) else 0)

        @cuda.jit(device=True)
        def publish(status, aggregates, inclusives, tile, epoch, flag, value):
            if flag == INCLUSIVE:
                write_value(inclusives, tile, value)
            else:
                write_value(aggregates, tile, value)
            store_release(status, tile + 1, epoch << 2 | flag)

        @cuda.jit(device=True)
        def read(status, aggregates, inclusives, tile, epoch, like):
            word = load_acquire(status, tile + 1)
            while word >> 2 != epoch:
                _delay(spin)
                word = load_acquire(status, tile + 1)
            if word & 3 == INCLUSIVE:
                return np.uint32(INCLUSIVE), read_value(inclusives, tile)
            return np.uint32(AGGREGATE), read_value(aggregates, tile)

    return publish, read


@functools.lru_cache(maxsize=None)
def lookback_prefix(op, value_dtype, first_look_ns=None):
    """The prefix callback of a single-pass scan with ``op`` over ``value_dtype`` values
    (see the module docstring); ``first_look_ns``: the sleep before the first look back
    in a grid of 500 blocks or more (default ``FIRST_LOOK_NANOSECONDS``; 0: none)."""
    convert = _converter(value_dtype)
    down, idx = shuffler(DOWN, 32), shuffler(IDX, 32)
    publish, read = tile_access(value_dtype)
    first_look = np.uint32(FIRST_LOOK_NANOSECONDS if first_look_ns is None else first_look_ns)

    @cuda.jit(device=True)
    def prefix(state, aggregate):
        status, aggregates, inclusives, tile, epoch = state
        lane = cuda.laneid
        if lane == 0:
            publish(status, aggregates, inclusives, tile, epoch, AGGREGATE, aggregate)
        _delay(first_look)
        exclusive = aggregate
        have = False
        end = tile
        while True:
            predecessor = end - 32 + lane
            flag = np.uint32(INCLUSIVE)
            value = aggregate  # (lanes before tile 0 hold no value: below the INCLUSIVE lane)
            if predecessor >= 0:
                flag, value = read(status, aggregates, inclusives, predecessor, epoch, aggregate)
            inclusive_lanes = cuda.ballot_sync(FULL_MASK, flag == INCLUSIVE)
            # the window's combination from the last INCLUSIVE lane on: a suffix scan
            # (lane l: value[l] op ... op value[31]), read at that lane
            for distance in (1, 2, 4, 8, 16):
                other = down(FULL_MASK, value, distance)
                if lane + distance < 32:
                    value = convert(op(value, other))
            first = 31 - cuda.clz(np.uint32(inclusive_lanes)) if inclusive_lanes != 0 else 0
            window = idx(FULL_MASK, value, first)
            exclusive = convert(op(window, exclusive)) if have else window
            have = True
            if inclusive_lanes != 0:
                break
            end -= 32
        if lane == 0:
            publish(status, aggregates, inclusives, tile, epoch, INCLUSIVE, convert(op(exclusive, aggregate)))
        return exclusive

    return prefix


@functools.lru_cache(maxsize=None)
def tile_prefix(op, value_dtype, first_look_ns=None):
    """The prefix callback of a single-pass scan seeded with ``initial`` (``state =
    (status, aggregates, inclusives, tile, epoch, initial)``; see the module docstring);
    ``first_look_ns`` as ``lookback_prefix``'s."""
    convert = _converter(value_dtype)
    looked_back = lookback_prefix(op, value_dtype, first_look_ns)
    publish, _ = tile_access(value_dtype)

    @cuda.jit(device=True)
    def prefix(state, aggregate):
        status, aggregates, inclusives, tile, epoch, initial = state
        if tile == 0:
            if cuda.laneid == 0:
                publish(status, aggregates, inclusives, tile, epoch, INCLUSIVE, convert(op(initial, aggregate)))
            return initial
        return looked_back((status, aggregates, inclusives, tile, epoch), aggregate)

    return prefix


EPOCHS = 1 << 30  # (epoch << 2 | flag fits 32 bits)


class TileStates:
    """The look-back's global memory for ``tiles`` tiles of ``value_dtype`` values (a
    tuple of dtypes: tuple values, ``aggregates`` and ``inclusives`` then tuples of
    arrays, one per member), kept between calls (``coop.device._host.temporary``):
    ``arrays = (status, aggregates, inclusives)`` (values of up to 32 bits have no arrays
    of their own: ``aggregates`` and ``inclusives`` are then ``status``, unused) and this
    call's ``epoch``. ``status[0]`` is ``claim_tile``'s counter, ``status[t + 1]`` tile
    ``t``'s status. Nothing is reset between calls: each call has
    an epoch of its own, and a status of an earlier epoch reads as empty; the counter is
    set back to 0 by the kernel itself. The words are zeroed only when new (or when the
    epochs run out)."""

    def __init__(self, tiles, value_dtype, stream):
        status_type = np.uint64 if _packs(value_dtype) else np.uint32
        self.status, state = temporary_with_state("lookback.status", tiles + 1, status_type, stream)
        if isinstance(value_dtype, tuple):  # (an array per member: two may have one dtype)
            self.aggregates = tuple(temporary(f"lookback.aggregates.{k}", tiles, member, stream)
                                    for k, member in enumerate(value_dtype))
            self.inclusives = tuple(temporary(f"lookback.inclusives.{k}", tiles, member, stream)
                                    for k, member in enumerate(value_dtype))
        elif _packs(value_dtype):  # (the values live in the status words: no arrays, which a sort's
            self.aggregates = self.inclusives = self.status  # 256 digits a tile would make large)
        else:
            self.aggregates = temporary("lookback.aggregates", tiles, value_dtype, stream)
            self.inclusives = temporary("lookback.inclusives", tiles, value_dtype, stream)
        epoch = state.get("epoch", 0) + 1
        if epoch == 1 or epoch == EPOCHS:
            fill_zero(self.status, self.status.size, stream)
            epoch = 1
        state["epoch"] = self.epoch = np.uint32(epoch)

    @property
    def arrays(self):
        return self.status, self.aggregates, self.inclusives


public_namespace(__name__)
