"""Device-wide segmented reductions (CUB's DeviceSegmentedReduce::Reduce):
``segmented_reduce(d_in, d_out, offsets, op, initial)``.

One block per segment (as CUB's): the block loads its segment tile by tile
(``coop.block.load``, blocked: "vectorize" for whole tiles, "warp_transpose" for the last,
partial one), reduces each tile with
``coop.block.reduce`` and folds the tiles in order after ``initial``; thread 0 writes the
result. Values are converted to ``d_out``'s dtype as they are loaded and combined in it;
``op`` needs to be associative only.
"""

import functools

import numpy as np
from numba import cuda

import coop
from coop.device._tiles import BLOCK_THREADS, items_per_thread
from coop.device._host import (check_length, device_array, device_operator, documented, launch, launch_stream,
                               segment_offsets, takes_temp_storage)

__all__ = ["segmented_reduce"]

THREADS = BLOCK_THREADS
TILE_BYTES_PER_THREAD = 16  # (4-byte values: tiles of 1024, one 16-byte load a thread)


@functools.lru_cache(maxsize=None)
def _segment_kernel(op, in_dtype, dtype):
    in_type, value_type = np.dtype(in_dtype), np.dtype(dtype)
    n_items = items_per_thread(TILE_BYTES_PER_THREAD, in_type)
    tile_size = THREADS * n_items
    temp_bytes = max(coop.block.load.temp_storage_bytes(in_type, THREADS, n_items, algorithm="warp_transpose"),
                     coop.block.reduce.temp_storage_bytes(value_type, THREADS))

    @cuda.jit
    def segment_kernel(d_in, d_out, offsets, initial):
        temp = cuda.shared.array(temp_bytes, np.uint8, alignment=16)
        loaded = cuda.local.array(n_items, in_type)
        items = cuda.local.array(n_items, value_type)
        segment = cuda.blockIdx.x
        begin, end = offsets[segment], offsets[segment + 1]
        running = initial
        for base in range(begin, end, tile_size):
            valid = min(end - base, tile_size)
            if valid == tile_size:  # (vector loads where the tile is aligned to them)
                coop.block.load(d_in[base:], loaded, threads=THREADS, items_per_thread=n_items,
                                algorithm="vectorize")
            else:
                coop.block.load(d_in[base:], loaded, threads=THREADS, items_per_thread=n_items,
                                algorithm="warp_transpose", valid_items=valid, temp_storage=temp)
            for i in range(n_items):
                items[i] = loaded[i]  # (converted; a copy the compiler removes)
            if valid == tile_size:
                total = coop.block.reduce(items, op, threads=THREADS, temp_storage=temp)
            else:
                total = coop.block.reduce(items, op, valid_items=valid, threads=THREADS, temp_storage=temp)
            running = op(running, total)
        if cuda.threadIdx.x == 0:
            d_out[segment] = running

    return segment_kernel


@documented
@takes_temp_storage
def segmented_reduce(d_in, d_out, offsets, op, initial, stream=None, temp_storage=None):
    """Reduce each segment of ``d_in`` with ``op`` after ``initial`` (CUB
    DeviceSegmentedReduce::Reduce): ``d_out[s] = initial op d_in[offsets[s]] op ... op
    d_in[offsets[s + 1] - 1]``.

    Parameters
    ----------
    d_in : device array
        The values:
        {device_array}
    d_out : device array
        One result per segment (``len(offsets) - 1``); its dtype is the type the values
        are converted to and combined in.
    offsets : device array
        ``len(offsets) - 1`` segments: segment ``s`` is ``d_in[offsets[s]:offsets[s +
        1]]`` (int32 or int64, non-decreasing, within ``d_in``); an empty segment gives
        ``initial``.
    op : operator
        {device_combining_operator}
    initial : scalar
        The first operand of every segment's reduction.
    stream : stream, optional
        {device_stream}
    temp_storage : device array, optional
        {device_temp_storage}

    Returns
    -------
    None
        ``d_out`` holds the results once the GPU has run the call.

    Example
    -------
    Row sums of a ragged array::

        import numpy as np
        import coop
        from numba import cuda

        rng = np.random.default_rng(10)
        lengths = rng.integers(0, 300, 50)
        offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
        x = rng.integers(-9, 10, offsets[-1]).astype(np.int32)
        d_sums = cuda.device_array(50, np.int64)
        coop.device.segmented_reduce(cuda.to_device(x), d_sums, cuda.to_device(offsets), coop.ops.add, 0)
        expected = [x[a:b].sum() for a, b in zip(offsets[:-1], offsets[1:])]
        assert (d_sums.copy_to_host() == expected).all()
    """
    function = "segmented_reduce"
    d_in = device_array(function, "d_in", d_in)
    d_out = device_array(function, "d_out", d_out)
    offsets = segment_offsets(function, offsets)
    segments = offsets.size - 1
    check_length(function, "d_out", d_out, segments)
    op = device_operator(function, "op", op)
    stream = launch_stream(stream)
    if segments:
        kernel = _segment_kernel(op, d_in.dtype, d_out.dtype)
        launch(kernel, segments, THREADS, stream, d_in, d_out, offsets, d_out.dtype.type(initial))
