"""The tiles of coop.device's block-per-tile kernels.

- ``BLOCK_THREADS``: their block size (small on the simulator, which runs a Python
  thread per CUDA thread).
- ``items_per_thread(tile_bytes, *dtypes)``: items per thread when each thread's share of
  a tile is ``tile_bytes`` of the widest of ``dtypes`` (at least one; a tuple of dtypes, of
  tuple values, counts the bytes of its members).
- ``tile_loader`` / ``tile_storer(threads, items_per_thread, algorithm="warp_transpose")``
  give ``load(src, items, valid, temp_storage)`` / ``store(dst, items, valid,
  temp_storage)``, coop.block.load / store with ``algorithm`` ("warp_transpose" is CUB's
  choice for its scan agents), unguarded for a full tile (``valid`` = the tile's size)
  and with ``valid_items`` for the last one.
- ``tile_head_flagger(threads, items_per_thread, differs)`` gives ``flag(d_in, base,
  valid, items, flags, temp_storage)``: coop.block.flag_heads of a tile, given the item
  before it (unique, run_length_encode, the scans by key).
- ``tile_run_edge_flagger(threads, items_per_thread, differs)`` gives ``flag(d_in, base,
  valid, n, items, flags, temp_storage)``: the first and the last item of each run of two
  or more (a head that is not a tail, or a tail that is not a head), from
  coop.block.flag_heads_and_tails given the items before and after the tile
  (non_trivial_runs).
"""

import functools

import numpy as np
from numba import cuda

import coop
from coop._core.backend import SIMULATOR

__all__ = ["BLOCK_THREADS", "items_per_thread", "tile_loader", "tile_storer", "tile_head_flagger",
           "tile_run_edge_flagger"]

BLOCK_THREADS = 32 if SIMULATOR else 256


def items_per_thread(tile_bytes, *dtypes):
    return max(1, tile_bytes // max(_value_bytes(dtype) for dtype in dtypes))


def _value_bytes(dtype):
    """Bytes of one value of ``dtype``: a tuple's, member by member (no padding)."""
    if isinstance(dtype, tuple):
        return sum(np.dtype(member).itemsize for member in dtype)
    return np.dtype(dtype).itemsize


def _whole_or_partial(access, threads, items_per_thread, algorithm):
    """``move(array, items, valid, temp_storage)``: ``access`` (coop.block.load or store)
    of a tile with ``algorithm``, unguarded when ``valid`` is the whole tile."""
    tile_size = threads * items_per_thread

    @cuda.jit(device=True)
    def move(array, items, valid, temp_storage):
        if valid == tile_size:
            access(array, items, threads=threads, items_per_thread=items_per_thread, algorithm=algorithm,
                   temp_storage=temp_storage)
        else:
            access(array, items, threads=threads, items_per_thread=items_per_thread, algorithm=algorithm,
                   valid_items=valid, temp_storage=temp_storage)

    return move


@functools.lru_cache(maxsize=None)
def tile_loader(threads, items_per_thread, algorithm="warp_transpose"):
    return _whole_or_partial(coop.block.load, threads, items_per_thread, algorithm)


@functools.lru_cache(maxsize=None)
def tile_storer(threads, items_per_thread, algorithm="warp_transpose"):
    return _whole_or_partial(coop.block.store, threads, items_per_thread, algorithm)


@functools.lru_cache(maxsize=None)
def tile_head_flagger(threads, items_per_thread, differs):
    """``flag(d_in, base, valid, items, flags, temp_storage)``: ``coop.block.flag_heads``
    of the tile of ``d_in`` at ``base`` (its ``items``, blocked), given the item before
    the tile unless it is the first (whose first item is a head), unguarded when
    ``valid`` is the whole tile (CUB's BlockDiscontinuity in DeviceSelect::Unique and
    the scans by key)."""
    tile_size = threads * items_per_thread

    @cuda.jit(device=True)
    def flag(d_in, base, valid, items, flags, temp_storage):
        if base == 0 and valid == tile_size:
            coop.block.flag_heads(items, flags, differs, threads=threads, temp_storage=temp_storage)
        elif base == 0:
            coop.block.flag_heads(items, flags, differs, threads=threads, valid_items=valid,
                                  temp_storage=temp_storage)
        elif valid == tile_size:
            coop.block.flag_heads(items, flags, differs, tile_predecessor=d_in[base - 1], threads=threads,
                                  temp_storage=temp_storage)
        else:
            coop.block.flag_heads(items, flags, differs, tile_predecessor=d_in[base - 1], threads=threads,
                                  valid_items=valid, temp_storage=temp_storage)

    return flag


@functools.lru_cache(maxsize=None)
def tile_run_edge_flagger(threads, items_per_thread, differs):
    """``flag(d_in, base, valid, n, items, flags, temp_storage)``: ``flags[i]`` 1 where
    item ``i`` of the tile of ``d_in``'s first ``n`` at ``base`` (its ``items``, blocked)
    starts or ends a run of two or more and 0 elsewhere (a run of one is both: 0), from
    ``coop.block.flag_heads_and_tails`` given the items before and after the tile where
    there are such (CUB's DeviceRunLengthEncode::NonTrivialRuns flags them so)."""
    tile_size = threads * items_per_thread

    @cuda.jit(device=True)
    def flag(d_in, base, valid, n, items, flags, temp_storage):
        tails = cuda.local.array(items_per_thread, np.uint8)
        if valid < tile_size:  # (the last tile: no successor)
            if base == 0:
                coop.block.flag_heads_and_tails(items, flags, tails, differs, threads=threads, valid_items=valid,
                                                temp_storage=temp_storage)
            else:
                coop.block.flag_heads_and_tails(items, flags, tails, differs, tile_predecessor=d_in[base - 1],
                                                threads=threads, valid_items=valid, temp_storage=temp_storage)
        elif base + tile_size == n:
            if base == 0:
                coop.block.flag_heads_and_tails(items, flags, tails, differs, threads=threads,
                                                temp_storage=temp_storage)
            else:
                coop.block.flag_heads_and_tails(items, flags, tails, differs, tile_predecessor=d_in[base - 1],
                                                threads=threads, temp_storage=temp_storage)
        elif base == 0:
            coop.block.flag_heads_and_tails(items, flags, tails, differs, tile_successor=d_in[base + tile_size],
                                            threads=threads, temp_storage=temp_storage)
        else:
            coop.block.flag_heads_and_tails(items, flags, tails, differs, tile_predecessor=d_in[base - 1],
                                            tile_successor=d_in[base + tile_size], threads=threads,
                                            temp_storage=temp_storage)
        for i in range(items_per_thread):
            flags[i] = flags[i] != tails[i]

    return flag
