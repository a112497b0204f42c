"""Device-wide segmented reductions (CUB's DeviceSegmentedReduce::Reduce):
``segmented_reduce(d_in, d_out, offsets, op, initial)``.

Two kernels, chosen without reading the offsets:

- **A block a segment** (CUB's), where the segments are few (fewer than one a thread of
  the second kernel's blocks filling the GPU) and average more than
  ``WARP_SEGMENT_AVERAGE`` items (``len(d_in)`` over the segments): the block loads its
  segment tile by tile (``coop.block.load``, blocked: "vectorize" for whole tiles,
  "warp_transpose" for the last, partial one), reduces each tile with
  ``coop.block.reduce`` and folds the tiles in order after ``initial``; thread 0 writes
  the result.
- **Segments by size**, otherwise (many segments, or short ones: ragged rows, power-law
  sizes): a block takes ``THREADS`` consecutive segments at a time, one a thread. A
  segment of at most ``LANE_ITEMS`` items is reduced by its own thread, its loads all in
  flight at once; one of at most ``WARP_ITEMS`` by its warp, a warp tile at a time
  (``coop.warp.load``, "vectorize" for whole tiles, "transpose" for the last, and
  ``coop.warp.reduce``); a longer one by the whole block, as the first kernel does. So a
  segment of one item costs one thread, not a block.

Values are converted to ``d_out``'s dtype as they are loaded and combined in it, in the
segment's order: ``op`` needs to be associative only.
"""

import functools

import numpy as np
from numba import cuda
from numba.cuda.np.numpy_support import from_dtype

import coop
from coop._core.values import converter
from coop.device._tiles import BLOCK_THREADS, items_per_thread
from coop.device._host import (check_length, device_array, device_operator, documented, kernel_resident_blocks,
                               launch, launch_stream, segment_offsets, takes_temp_storage)

__all__ = ["segmented_reduce"]

THREADS = BLOCK_THREADS
TILE_BYTES_PER_THREAD = 16  # (4-byte values: tiles of 1024, one 16-byte load a thread)
WARP_SEGMENT_AVERAGE = 256  # (segments averaging more items: a block each)
LANE_ITEMS = 8  # (a segment of at most these: reduced by one thread; 8 was 1.2x 4 on power-law sizes)
WARP_ITEMS = 4096  # (at most these: by one warp; more: by the block)
WARP = 32


@functools.lru_cache(maxsize=None)
def _kernels(op, in_dtype, dtype):
    """``(segment_kernel, segments_kernel)``: a block a segment, and segments by size."""
    in_type, value_type = np.dtype(in_dtype), np.dtype(dtype)
    n_items = items_per_thread(TILE_BYTES_PER_THREAD, in_type)
    tile_size = THREADS * n_items
    warp_tile = WARP * n_items
    temp_bytes = max(coop.block.load.temp_storage_bytes(in_type, THREADS, n_items, algorithm="warp_transpose"),
                     coop.block.reduce.temp_storage_bytes(value_type, THREADS),
                     coop.warp.load.temp_storage_bytes(in_type, THREADS, n_items, algorithm="transpose"))
    lane_items, warp_items = LANE_ITEMS, WARP_ITEMS
    convert = converter(from_dtype(value_type))  # (combined in d_out's dtype, as coop.device.reduce)
    warps = THREADS // WARP

    @cuda.jit(device=True)
    def block_segment(d_in, begin, end, initial, temp):
        """``initial`` and the segment ``d_in[begin:end]`` reduced by the whole block
        (thread 0 gets it)."""
        loaded = cuda.local.array(n_items, in_type)
        items = cuda.local.array(n_items, value_type)
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
            running = convert(op(running, total))
        return running

    @cuda.jit(device=True)
    def warp_segment(d_in, begin, end, initial, temp):
        """The same by one warp (lane 0 gets it)."""
        loaded = cuda.local.array(n_items, in_type)
        items = cuda.local.array(n_items, value_type)
        running = initial
        for base in range(begin, end, warp_tile):
            valid = min(end - base, warp_tile)
            if valid == warp_tile:
                coop.warp.load(d_in[base:], loaded, items_per_thread=n_items, algorithm="vectorize")
            else:
                coop.warp.load(d_in[base:], loaded, items_per_thread=n_items, algorithm="transpose",
                               valid_items=valid, threads=THREADS, temp_storage=temp)
            for i in range(n_items):
                items[i] = loaded[i]
            if valid == warp_tile:
                total = coop.warp.reduce(items, op)
            else:
                total = coop.warp.reduce(items, op, valid_items=valid)
            running = convert(op(running, total))
        return running

    @cuda.jit
    def segment_kernel(d_in, d_out, offsets, initial):
        temp = cuda.shared.array(temp_bytes, np.uint8, alignment=16)
        segment = cuda.blockIdx.x
        running = block_segment(d_in, offsets[segment], offsets[segment + 1], initial, temp)
        if cuda.threadIdx.x == 0:
            d_out[segment] = running

    def segments_kernel(d_in, d_out, offsets, initial, segments):
        temp = cuda.shared.array(temp_bytes, np.uint8, alignment=16)
        long_lanes = cuda.shared.array(warps, np.uint32)  # (each warp's lanes holding a segment for the block)
        warp, lane = cuda.threadIdx.x // WARP, cuda.laneid
        for first in range(cuda.blockIdx.x * THREADS, segments, cuda.gridDim.x * THREADS):
            segment = first + cuda.threadIdx.x
            begin = end = offsets[0]
            if segment < segments:
                begin, end = offsets[segment], offsets[segment + 1]
            size = end - begin
            if segment < segments and size <= lane_items:
                running = initial
                for i in range(lane_items):
                    if i < size:
                        running = convert(op(running, convert(d_in[begin + i])))
                d_out[segment] = running
            is_warps = np.uint32(cuda.ballot_sync(0xFFFFFFFF, size > lane_items and size <= warp_items))
            while is_warps != 0:
                source = cuda.ffs(is_warps) - 1
                is_warps &= is_warps - np.uint32(1)
                running = warp_segment(d_in, coop.warp.broadcast(begin, source),
                                       coop.warp.broadcast(end, source), initial, temp)
                if lane == 0:
                    d_out[first + warp * WARP + source] = running
            is_long = np.uint32(cuda.ballot_sync(0xFFFFFFFF, size > warp_items))
            if lane == 0:
                long_lanes[warp] = is_long
            cuda.syncthreads()  # (the warps' loads are done with temp; long_lanes written)
            for w in range(warps):
                lanes = long_lanes[w]
                while lanes != 0:
                    source = cuda.ffs(lanes) - 1
                    lanes &= lanes - np.uint32(1)
                    segment = first + w * WARP + source
                    running = block_segment(d_in, offsets[segment], offsets[segment + 1], initial, temp)
                    if cuda.threadIdx.x == 0:
                        d_out[segment] = running
            cuda.syncthreads()  # (long_lanes and temp read: the next segments may write them)

    return segment_kernel, cuda.jit(segments_kernel)


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

    Notes
    -----
    Segments of any sizes, mixed freely: when they are many or short (ragged rows,
    power-law sizes), a segment of up to 8 items is reduced by one thread, one of up to
    4,096 by a warp and a longer one by a block; when they are few and long, a block
    each (CUB's way). One launch either way.

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
        segment_kernel, segments_kernel = _kernels(op, d_in.dtype, d_out.dtype)
        initial = d_out.dtype.type(initial)
        args = (d_in, d_out, offsets, initial, segments)
        filling = kernel_resident_blocks(segments_kernel, THREADS, *args)  # (blocks of it that fill the GPU once)
        if d_in.size <= segments * WARP_SEGMENT_AVERAGE or segments >= filling * THREADS:
            launch(segments_kernel, min(-(-segments // THREADS), filling), THREADS, stream, *args)
        else:
            launch(segment_kernel, segments, THREADS, stream, d_in, d_out, offsets, initial)
