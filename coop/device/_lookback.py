"""Decoupled look-back (Merrill and Garland, "Single-pass Parallel Prefix Scan with
Decoupled Look-back", 2016; CUB's ScanTileState and TilePrefixCallbackOp): how a tile
learns the combination of every tile before it within one kernel, waiting only on
predecessors that have not yet published anything.

Each tile ``t`` has a status word and two values in global memory:
``status[t]`` is ``EMPTY`` (0) until the tile publishes ``AGGREGATE`` (its own tiles'
combination, in ``aggregates[t]``) and later ``INCLUSIVE`` (the combination of tiles
``0..t``, in ``inclusives[t]``). Tiles are claimed in order (``claim_tile``: an atomic
counter), so every predecessor of a tile is running or done: the look-back never waits
on a block that has not started, and it is correct when blocks run one at a time (the
simulator's way).

``TileStates(tiles, value_dtype, stream)`` allocates the status words (and the tile
counter after them), zeroed, and the values; its ``arrays`` go to the kernel.
``tile_prefix(op, value_dtype)`` gives the prefix callback of a scan seeded with an
``initial`` value (``state = (status, aggregates, inclusives, tile, initial)``): the first
tile's prefix is ``initial``, the others' the look-back's.
``lookback_prefix(op, value_dtype)`` gives the block scan's prefix callback
``prefix(state, aggregate) -> exclusive prefix``, ``state = (status, aggregates,
inclusives, tile)``, which the first warp of the block calls (coop.block's
``prefix_op``): lane 0 publishes the tile's aggregate; each lane reads one of the 32
predecessors before the window's end (lane 31 the nearest), spinning while it is EMPTY;
the window's values from the last INCLUSIVE one on are combined in tile order (a suffix
scan over the lanes, so ``op`` need not commute) and the window moves back by 32 tiles
until an INCLUSIVE one is found; lane 0 then publishes the tile's inclusive value.

Memory ordering (``coop._core.memory_order``): values are written with plain stores and
then the status with a release store; a reader acquires the status and only then reads
the value, with a plain load. Release/acquire at GPU scope on the status word orders the
value's write before its read, and the acquire keeps the reading SM's L1 from serving a
stale line.
"""

import functools

import numpy as np
from numba import cuda

from coop._core.backend import SIMULATOR

from coop._core.memory_order import load_acquire, store_release
from coop.device._host import temporary
from coop._core.shuffle import DOWN, FULL_MASK, IDX, shuffler

__all__ = ["EMPTY", "AGGREGATE", "INCLUSIVE", "TileStates", "claim_tile", "lookback_prefix", "tile_prefix",
           "publish_inclusive"]

EMPTY, AGGREGATE, INCLUSIVE = 0, 1, 2


@cuda.jit(device=True)
def claim_tile(counter, slot):
    """The next tile in claiming order, to every thread of the block (``slot``: a shared
    array of one int32; the call synchronises the block)."""
    if cuda.threadIdx.x == 0 and cuda.threadIdx.y == 0 and cuda.threadIdx.z == 0:
        slot[0] = cuda.atomic.add(counter, 0, 1)
    cuda.syncthreads()
    return slot[0]


@cuda.jit(device=True)
def publish_inclusive(status, inclusives, tile, value):
    """Publish ``value`` as tile ``tile``'s inclusive value (one thread calls it)."""
    inclusives[tile] = value
    store_release(status, tile, INCLUSIVE)


@functools.lru_cache(maxsize=None)
def lookback_prefix(op, value_dtype):
    """The prefix callback of a single-pass scan with ``op`` over ``value_dtype`` values
    (see the module docstring)."""
    value_type = np.dtype(value_dtype).type
    down, idx = shuffler(DOWN, 32), shuffler(IDX, 32)

    @cuda.jit(device=True)
    def prefix(state, aggregate):
        status, aggregates, inclusives, tile = state
        lane = cuda.laneid
        if lane == 0:
            aggregates[tile] = aggregate
            store_release(status, tile, AGGREGATE)
        exclusive = aggregate
        have = False
        end = tile
        while True:
            predecessor = end - 32 + lane
            flag = np.uint32(INCLUSIVE)
            value = aggregate  # (lanes before tile 0 hold no value: below the INCLUSIVE lane)
            if predecessor >= 0:
                flag = load_acquire(status, predecessor)
                while flag == EMPTY:
                    flag = load_acquire(status, predecessor)
                if flag == INCLUSIVE:
                    value = inclusives[predecessor]
                else:
                    value = aggregates[predecessor]
            inclusive_lanes = cuda.ballot_sync(FULL_MASK, flag == INCLUSIVE)
            # the window's combination from the last INCLUSIVE lane on: a suffix scan
            # (lane l: value[l] op ... op value[31]), read at that lane
            for distance in (1, 2, 4, 8, 16):
                other = down(FULL_MASK, value, distance)
                if lane + distance < 32:
                    value = value_type(op(value, other))
            first = 31 - cuda.clz(np.uint32(inclusive_lanes)) if inclusive_lanes != 0 else 0
            window = idx(FULL_MASK, value, first)
            exclusive = value_type(op(window, exclusive)) if have else window
            have = True
            if inclusive_lanes != 0:
                break
            end -= 32
        if lane == 0:
            publish_inclusive(status, inclusives, tile, value_type(op(exclusive, aggregate)))
        return exclusive

    return prefix


@functools.lru_cache(maxsize=None)
def tile_prefix(op, value_dtype):
    """The prefix callback of a single-pass scan seeded with ``initial`` (see the module
    docstring)."""
    value_type = np.dtype(value_dtype).type
    looked_back = lookback_prefix(op, value_dtype)

    @cuda.jit(device=True)
    def prefix(state, aggregate):
        status, aggregates, inclusives, tile, initial = state
        if tile == 0:
            if cuda.laneid == 0:
                publish_inclusive(status, inclusives, tile, value_type(op(initial, aggregate)))
            return initial
        return looked_back((status, aggregates, inclusives, tile), aggregate)

    return prefix


@cuda.jit
def _reset(status):
    for i in range(cuda.grid(1), status.size, cuda.gridsize(1)):
        status[i] = EMPTY


class TileStates:
    """The look-back's global memory for ``tiles`` tiles of ``value_dtype`` values:
    ``arrays = (status, aggregates, inclusives)``, the status words zeroed on ``stream``
    (the last word is ``claim_tile``'s counter: pass ``status[status.size - 1:]``); kept
    between calls (``coop.device._host.temporary``)."""

    def __init__(self, tiles, value_dtype, stream):
        self.status = temporary("lookback.status", tiles + 1, np.uint32, stream)
        self.aggregates = temporary("lookback.aggregates", tiles, value_dtype, stream)
        self.inclusives = temporary("lookback.inclusives", tiles, value_dtype, stream)
        threads = 32 if SIMULATOR else 256
        _reset[min(-(-(tiles + 1) // threads), 1024), threads, stream](self.status)

    @property
    def arrays(self):
        return self.status, self.aggregates, self.inclusives
