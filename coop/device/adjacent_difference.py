"""Device-wide adjacent differences (CUB's DeviceAdjacentDifference):
``subtract_left(d_in, d_out=None, op=None)`` (SubtractLeftCopy, or SubtractLeft in
place) and ``subtract_right(d_in, d_out=None, op=None)`` (SubtractRightCopy,
SubtractRight).

A block a tile: ``coop.block.load`` ("vectorize"), ``coop.block.subtract_left`` given
the item before the tile (``tile_predecessor``) or ``coop.block.subtract_right`` given
the item after it (``tile_successor``), ``coop.block.store``. In place, a block could
read its neighbour item after the neighbouring tile's block has overwritten it, so a
first launch copies each tile's neighbour to a temporary (as CUB's in-place path does).
"""

import functools

import numpy as np
from numba import cuda

import coop
from coop._core.constants import without_dead_branches
from coop.device._host import (check_length, device_array, device_operator, documented, is_same_memory, launch,
                               launch_stream, takes_temp_storage, temporary)
from coop.device._tiles import BLOCK_THREADS, items_per_thread, tile_loader, tile_storer

__all__ = ["subtract_left", "subtract_right"]

THREADS = BLOCK_THREADS
THREAD_BYTES = 16  # (a thread's items of a tile: one vector load of the input)


@functools.lru_cache(maxsize=None)
def _kernels(op, in_dtype, out_dtype, left):
    """``(neighbours_kernel, difference_kernel, tile_size)``."""
    in_type, out_type = np.dtype(in_dtype), np.dtype(out_dtype)
    n_items = items_per_thread(THREAD_BYTES, in_type, out_type)
    tile_size = THREADS * n_items
    load, store = tile_loader(THREADS, n_items, "vectorize"), tile_storer(THREADS, n_items, "vectorize")

    def neighbours_kernel(d_in, n, neighbours, tiles):
        """Each tile's neighbour item (the one before it, or after it) into ``neighbours``."""
        tile = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        if tile < tiles:
            if left:
                if tile > 0:
                    neighbours[tile] = d_in[tile * tile_size - 1]
            elif (tile + 1) * tile_size < n:
                neighbours[tile] = d_in[(tile + 1) * tile_size]

    def difference_kernel(d_in, d_out, n, neighbours, in_place):
        items = cuda.local.array(n_items, in_type)
        output = cuda.local.array(n_items, out_type)
        tile = cuda.blockIdx.x
        base = tile * tile_size
        valid = min(n - base, tile_size)
        load(d_in[base:], items, valid, None)
        if left:
            if tile == 0:  # (the first item is copied)
                if valid == tile_size:
                    coop.block.subtract_left(items, output, op, threads=THREADS)
                else:
                    coop.block.subtract_left(items, output, op, threads=THREADS, valid_items=valid)
            else:
                before = neighbours[tile] if in_place else d_in[base - 1]
                if valid == tile_size:
                    coop.block.subtract_left(items, output, op, tile_predecessor=before, threads=THREADS)
                else:
                    coop.block.subtract_left(items, output, op, tile_predecessor=before, threads=THREADS,
                                             valid_items=valid)
        elif base + tile_size < n:
            after = neighbours[tile] if in_place else d_in[base + tile_size]
            coop.block.subtract_right(items, output, op, tile_successor=after, threads=THREADS)
        elif valid == tile_size:  # (the last tile: its last item is copied)
            coop.block.subtract_right(items, output, op, threads=THREADS)
        else:
            coop.block.subtract_right(items, output, op, threads=THREADS, valid_items=valid)
        store(d_out[base:], output, valid, None)

    return (cuda.jit(without_dead_branches(neighbours_kernel)), cuda.jit(without_dead_branches(difference_kernel)),
            tile_size)


def _difference(function, d_in, d_out, op, left, stream):
    d_in = device_array(function, "d_in", d_in)
    n = d_in.size
    if d_out is None:
        d_out, in_place = d_in, True
    else:
        d_out = device_array(function, "d_out", d_out)
        check_length(function, "d_out", d_out, n)
        in_place = is_same_memory(function, "d_out", d_out, "d_in", d_in)
    if op is not None:  # (None: the block primitives' own difference, which widens integers as Numba does)
        op = device_operator(function, "op", op)
    stream = launch_stream(stream)
    if n == 0:
        return
    neighbours_kernel, difference_kernel, tile_size = _kernels(op, d_in.dtype, d_out.dtype, left)
    tiles = -(-n // tile_size)
    neighbours = temporary(f"{function}.neighbours", tiles if in_place else 1, d_in.dtype, stream)
    if in_place:
        launch(neighbours_kernel, -(-tiles // THREADS), THREADS, stream, d_in, n, neighbours, tiles)
    launch(difference_kernel, tiles, THREADS, stream, d_in, d_out, n, neighbours, in_place)


@documented
@takes_temp_storage
def subtract_left(d_in, d_out=None, op=None, stream=None, temp_storage=None):
    """Each item minus the one before it (CUB DeviceAdjacentDifference::SubtractLeftCopy,
    or SubtractLeft in place): ``d_out[0] = d_in[0]``, ``d_out[i] = op(d_in[i], d_in[i -
    1])``.

    Parameters
    ----------
    d_in : device array
        The items, may be empty.
        {device_array}
    d_out : device array, optional
        At least as long as ``d_in``: the differences, converted to its dtype. Default
        None: written over ``d_in`` (in place; so may ``d_out`` be ``d_in`` itself).
    op : operator, optional
        ``op(item, before)``, the difference of an item and the one before it. Default
        None: ``item - before``.
        {device_operator}
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
    The gaps between sorted event times, and back again with an inclusive sum::

        import numpy as np
        import coop
        from numba import cuda

        times = np.sort(np.random.default_rng(6).integers(0, 10**6, 5000)).astype(np.int64)
        d_gaps = cuda.device_array_like(times)
        coop.device.subtract_left(cuda.to_device(times), d_gaps)
        gaps = d_gaps.copy_to_host()
        assert gaps[0] == times[0] and (gaps[1:] == np.diff(times)).all()
        d_again = cuda.device_array_like(times)
        coop.device.inclusive_sum(d_gaps, d_again)
        assert (d_again.copy_to_host() == times).all()
    """
    _difference("subtract_left", d_in, d_out, op, True, stream)


@documented
@takes_temp_storage
def subtract_right(d_in, d_out=None, op=None, stream=None, temp_storage=None):
    """Each item minus the one after it (CUB DeviceAdjacentDifference::SubtractRightCopy,
    or SubtractRight in place): ``d_out[i] = op(d_in[i], d_in[i + 1])``, the last item
    copied.

    Parameters
    ----------
    d_in, d_out, stream, temp_storage : as in ``coop.device.subtract_left``
    op : operator, optional
        ``op(item, after)``, the difference of an item and the one after it. Default
        None: ``item - after``.
        {device_operator}

    Returns
    -------
    None
        {device_returns}

    Example
    -------
    Where a sorted array's runs end: an item differing from the next one (in place, with
    an operator on the host)::

        import numpy as np
        import coop
        from numba import cuda

        x = np.sort(np.random.default_rng(7).integers(0, 300, 4000)).astype(np.int32)
        d_x = cuda.to_device(x)
        coop.device.subtract_right(d_x, op=lambda item, after: 1 if item != after else 0)
        ends = d_x.copy_to_host()
        assert (ends[:-1] == (x[:-1] != x[1:])).all() and ends[-1] == x[-1]
    """
    _difference("subtract_right", d_in, d_out, op, False, stream)
