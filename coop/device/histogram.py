"""Device-wide histograms (CUB's DeviceHistogram::HistogramEven):
``histogram_even(d_samples, d_histogram, bins, lower, upper)``.

One kernel over a grid that fills the GPU once: each block loads tile after tile
(``coop.block.load``, "striped"), maps each sample to its bin, counts the tile
into the block's shared counters (``coop.block.histogram``, "atomic", accumulating), and
at the end adds its counters to global ones with one atomic add per bin. With more bins
than fit shared memory, the blocks count into the global counters directly. The global
counters are a temporary kept zeroed between calls: the last block to finish
(``coop.device.lookback.block_arrives``) copies them to ``d_histogram`` and zeroes them, so a
call is one launch (``d_histogram`` needs no zeroing first).
"""

import functools

import numpy as np
from numba import cuda

import coop
from coop._core.backend import SIMULATOR
from coop.device._tiles import BLOCK_THREADS, items_per_thread, tile_loader
from coop._core.constants import without_dead_branches
from coop._core.errors import ArgumentTypeError, ArgumentValueError
from coop._core.scratch import striped_steps
from coop.device._host import (device_array, documented, fill_zero, launch, launch_stream, resident_blocks,
                               takes_temp_storage, zeroed_temporary)
from coop.device.lookback import block_arrives

__all__ = ["histogram_even"]

THREADS = BLOCK_THREADS
TILE_BYTES_PER_THREAD = 16 if SIMULATOR else 64  # (measured on an H100, 2^28 samples: 32 is 5% slower)
SHARED_BINS = 4096  # (16 KiB of 4-byte counters: two blocks of 256 threads per SM still fit)
COUNTER_TYPES = (np.int32, np.uint32, np.int64, np.uint64)


@functools.lru_cache(maxsize=None)
def _histogram_kernel(sample_dtype, counter_dtype, bins):
    sample_type, counter_type = np.dtype(sample_dtype), np.dtype(counter_dtype)
    n_items = items_per_thread(TILE_BYTES_PER_THREAD, sample_type)
    tile_size = THREADS * n_items
    shared = bins <= SHARED_BINS
    # bin positions in float32 where it holds every sample exactly, else float64
    narrow = sample_type.itemsize <= (4 if sample_type.kind == "f" else 2)
    position_type = np.float32 if narrow else np.float64
    steps, exact = striped_steps(bins, THREADS)
    load = tile_loader(THREADS, n_items, "striped")  # (coalesced, no exchange)

    def histogram_kernel(d_samples, n, d_histogram, totals, lower, scale):
        counters = cuda.shared.array(bins if shared else 1, counter_type)
        last = cuda.shared.array(1, np.int32)
        samples = cuda.local.array(n_items, sample_type)
        indices = cuda.local.array(n_items, np.int32)
        rank = cuda.threadIdx.x
        if shared:
            for k in range(steps):
                if exact or rank + k * THREADS < bins:
                    counters[rank + k * THREADS] = 0
            cuda.syncthreads()  # (every counter zeroed before any thread counts: "atomic" has no barrier)
        for base in range(cuda.blockIdx.x * tile_size, n, cuda.gridDim.x * tile_size):
            valid = min(n - base, tile_size)
            load(d_samples[base:], samples, valid, None)  # (striped: the order of the samples is free)
            for i in range(n_items):
                indices[i] = -1  # (not counted: outside [lower, upper), or past the tile's end)
                if valid == tile_size or rank + i * THREADS < valid:
                    position = (position_type(samples[i]) - lower) * scale
                    if position >= 0 and position < bins:
                        indices[i] = min(np.int32(position), bins - 1)
            if shared:
                coop.block.histogram(indices, counters, bins, threads=THREADS, items_per_thread=n_items,
                                     accumulate=True)
            else:
                coop.block.histogram(indices, totals, bins, threads=THREADS, items_per_thread=n_items,
                                     accumulate=True)
        if shared:
            cuda.syncthreads()
            for k in range(steps):
                b = rank + k * THREADS
                if (exact or b < bins) and counters[b] != 0:
                    cuda.atomic.add(totals, b, counters[b])
        # The last block to arrive hands the totals over, and zeroes them for the next call.
        if block_arrives(totals, bins, last):
            for b in range(rank, bins, THREADS):
                d_histogram[b] = totals[b]
                totals[b] = 0

    return cuda.jit(without_dead_branches(histogram_kernel)), tile_size, position_type


@documented
@takes_temp_storage
def histogram_even(d_samples, d_histogram, bins, lower, upper, stream=None, temp_storage=None):
    """Count samples into ``bins`` bins of equal width over ``[lower, upper)`` (CUB
    DeviceHistogram::HistogramEven with ``bins + 1`` levels).

    Parameters
    ----------
    d_samples : device array
        The samples (integers or floats), may be empty:
        {device_array}
    d_histogram : device array
        ``bins`` counters (int32, uint32, int64 or uint64), overwritten with the counts.
    bins : int
        The number of bins (at least 1; up to 4096 are counted in shared memory, more
        straight into ``d_histogram``).
    lower, upper : scalar
        The bins' range: sample ``x`` with ``lower <= x < upper`` goes to bin
        ``int((x - lower) * (bins / (upper - lower)))`` (at most ``bins - 1``), computed
        in float32 for float32 and float16 samples and 8- and 16-bit integers, in float64
        otherwise; other samples (NaN too) are not counted.
    stream : stream, optional
        {device_stream}
    temp_storage : device array, optional
        {device_temp_storage}

    Returns
    -------
    None
        ``d_histogram`` holds the counts once the GPU has run the call.

    Example
    -------
    ::

        import numpy as np
        import coop
        from numba import cuda

        x = np.random.default_rng(9).random(10**4).astype(np.float32)
        d_counts = cuda.device_array(10, np.int32)
        coop.device.histogram_even(cuda.to_device(x), d_counts, 10, 0.0, 1.0)
        assert (d_counts.copy_to_host() == np.histogram(x, bins=10, range=(0, 1))[0]).all()
    """
    function = "histogram_even"
    d_samples = device_array(function, "d_samples", d_samples)
    d_histogram = device_array(function, "d_histogram", d_histogram)
    if not isinstance(bins, (int, np.integer)) or bins < 1:
        raise ArgumentValueError(f"coop.device.{function}: bins must be an integer of at least 1, got {bins!r}")
    bins = int(bins)
    if d_histogram.size < bins:
        raise ArgumentValueError(f"coop.device.{function}: d_histogram is too short: {d_histogram.size} counters, "
                                 f"{bins} needed")
    if d_histogram.dtype not in [np.dtype(t) for t in COUNTER_TYPES]:
        raise ArgumentTypeError(f"coop.device.{function}: d_histogram has dtype {d_histogram.dtype}; counters may be "
                                "int32, uint32, int64 or uint64")
    if d_samples.dtype.kind not in "iuf":
        raise ArgumentTypeError(f"coop.device.{function}: d_samples must hold integers or floats, "
                                f"got {d_samples.dtype}")
    if not upper > lower:
        raise ArgumentValueError(f"coop.device.{function}: upper ({upper}) must be greater than lower ({lower})")
    stream = launch_stream(stream)
    kernel, tile_size, position_type = _histogram_kernel(d_samples.dtype, d_histogram.dtype, bins)
    n = d_samples.size
    if n == 0:
        fill_zero(d_histogram, bins, stream)
        return
    # the global counters, and the count of blocks arrived in the last
    totals = zeroed_temporary("histogram_even.totals", bins + 1, d_histogram.dtype, stream)
    blocks = min(resident_blocks(THREADS), -(-n // tile_size))
    launch(kernel, blocks, THREADS, stream, d_samples, n, d_histogram, totals, position_type(lower),
           position_type(bins / (upper - lower)))
