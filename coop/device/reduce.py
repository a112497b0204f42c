"""Device-wide reductions (CUB's DeviceReduce): ``reduce(d_in, d_out, op, initial)`` and
``sum(d_in, d_out)``, built from coop.warp.load, coop.warp.reduce and coop.block.reduce.

Two kernels. The first gives each warp of a grid that fills the GPU once a contiguous
run of warp tiles (``32 * N`` items, "even share"); a warp loads each tile blocked
(vector loads), reduces it with ``coop.warp.reduce`` and folds it into its running value
in tile order; the block folds its warps' values in warp order into one partial. The
second kernel, one block, reduces the partials in block order after ``initial``. Every
combination is in input order, so ``op`` needs to be associative only (CUB's needs to be
commutative too). Values are converted to ``d_out``'s dtype as they are loaded and
combined in it (CUB: the type of ``initial``).
"""

import functools

import numpy as np

from numba import cuda

import coop
from coop._core.backend import SIMULATOR
from coop.device._host import (check_length, device_array, device_operator, launch_stream, resident_blocks,
                               temporary)

__all__ = ["reduce", "sum"]

# Warps per block and items per lane (per 4 bytes of value: 16 for int32, 8 for int64).
WARPS = 2 if SIMULATOR else 8
LANE_BYTES = 16 if SIMULATOR else 64
FINAL_THREADS = 32 if SIMULATOR else 256
FINAL_ITEMS = 2 if SIMULATOR else 8


@functools.lru_cache(maxsize=None)
def _kernels(op, in_dtype, dtype):
    """(partials kernel, final kernel, warp tile, threads) for ``op`` on ``in_dtype``
    values combined as ``dtype``."""
    in_type, value_type = np.dtype(in_dtype), np.dtype(dtype)
    n_items = max(1, LANE_BYTES // in_type.itemsize)
    warp_tile = 32 * n_items
    threads = 32 * WARPS

    @cuda.jit
    def partials_kernel(d_in, n, partials):
        loaded = cuda.local.array(n_items, in_type)
        items = cuda.local.array(n_items, value_type)
        warp_values = cuda.shared.array(WARPS, value_type)
        warp_has = cuda.shared.array(WARPS, np.int32)
        warp = cuda.threadIdx.x // 32
        tiles = (n + warp_tile - 1) // warp_tile
        warps = cuda.gridDim.x * WARPS
        mine = cuda.blockIdx.x * WARPS + warp
        first, last = mine * tiles // warps, (mine + 1) * tiles // warps
        running = items[0]  # (its type; the value is unused until ``has`` is set)
        has = False
        for tile in range(first, last):
            base = tile * warp_tile
            if base + warp_tile <= n:
                coop.warp.load(d_in[base:], loaded, items_per_thread=n_items, algorithm="vectorize")
                for i in range(n_items):
                    items[i] = loaded[i]  # (converted; a copy the compiler removes)
                total = coop.warp.reduce(items, op)
            else:
                coop.warp.load(d_in[base:], loaded, items_per_thread=n_items, valid_items=n - base)
                for i in range(n_items):
                    items[i] = loaded[i]
                total = coop.warp.reduce(items, op, valid_items=n - base)
            running = op(running, total) if has else total
            has = True
        if cuda.laneid == 0:
            warp_values[warp] = running
            warp_has[warp] = has
        cuda.syncthreads()
        if cuda.threadIdx.x == 0:
            block_value = warp_values[0]
            block_has = False
            for w in range(WARPS):
                if warp_has[w]:
                    block_value = op(block_value, warp_values[w]) if block_has else warp_values[w]
                    block_has = True
            partials[cuda.blockIdx.x] = block_value

    @cuda.jit
    def final_kernel(partials, count, initial, d_out):
        items = cuda.local.array(FINAL_ITEMS, value_type)
        running = initial
        for base in range(0, count, FINAL_THREADS * FINAL_ITEMS):
            valid = min(count - base, FINAL_THREADS * FINAL_ITEMS)
            coop.block.load(partials[base:], items, threads=FINAL_THREADS, items_per_thread=FINAL_ITEMS,
                            valid_items=valid)
            total = coop.block.reduce(items, op, valid_items=valid, threads=FINAL_THREADS)
            running = op(running, total)
        if cuda.threadIdx.x == 0:
            d_out[0] = running

    return partials_kernel, final_kernel, warp_tile, threads


def reduce(d_in, d_out, op, initial, stream=None):  # noqa: A001  (CUB's name)
    """Reduce ``d_in`` with ``op`` after ``initial`` into ``d_out[0]`` (CUB
    DeviceReduce::Reduce).

    Parameters
    ----------
    d_in : device array
        The values: a 1-D contiguous device array (Numba, CuPy, PyTorch: any CUDA Array
        Interface object). May be empty.
    d_out : device array
        Receives ``initial op d_in[0] op d_in[1] ...`` in ``d_out[0]``; its dtype is the
        type the values are converted to and combined in.
    op : operator
        Associative (not necessarily commutative): a coop.ops operator,
        ``operator.add`` and the like, a lambda or function (compiled for the device), or
        a ``@cuda.jit(device=True)`` function.
    initial : scalar
        The first operand (``op``'s identity gives a plain reduction).
    stream : stream, optional
        A Numba, CuPy or PyTorch stream, or a ``cudaStream_t`` handle; default: the
        default stream. The call returns without waiting for the GPU.

    Returns
    -------
    None
        ``d_out`` holds the result once the GPU has run the call (it is queued on
        ``stream``; copying ``d_out`` to the host waits for it).

    Example
    -------
    The largest of a million values::

        import numpy as np
        import coop
        from numba import cuda

        x = np.random.default_rng(1).integers(-10**6, 10**6, 10**4).astype(np.int32)
        d_out = cuda.device_array(1, np.int32)
        coop.device.reduce(cuda.to_device(x), d_out, lambda a, b: max(a, b), np.iinfo(np.int32).min)
        assert d_out.copy_to_host()[0] == x.max()
    """
    return _reduce("reduce", d_in, d_out, op, initial, stream)


def sum(d_in, d_out, stream=None):  # noqa: A001  (CUB's name)
    """Sum ``d_in`` into ``d_out[0]`` (CUB DeviceReduce::Sum), in ``d_out``'s dtype.

    Parameters
    ----------
    d_in, d_out, stream : as in ``coop.device.reduce``

    Returns
    -------
    None
        ``d_out`` holds the result once the GPU has run the call (it is queued on
        ``stream``; copying ``d_out`` to the host waits for it).

    Example
    -------
    ::

        import numpy as np
        import coop
        from numba import cuda

        x = np.arange(10**4, dtype=np.int32)
        d_out = cuda.device_array(1, np.int64)
        coop.device.sum(cuda.to_device(x), d_out)
        assert d_out.copy_to_host()[0] == x.sum()
    """
    return _reduce("sum", d_in, d_out, coop.ops.add, 0, stream)


def _reduce(function, d_in, d_out, op, initial, stream):
    d_in = device_array(function, "d_in", d_in)
    d_out = device_array(function, "d_out", d_out)
    check_length(function, "d_out", d_out, 1)
    op = device_operator(function, "op", op)
    stream = launch_stream(stream)
    value_type = d_out.dtype
    partials_kernel, final_kernel, warp_tile, threads = _kernels(op, d_in.dtype, value_type)
    n = d_in.size
    blocks = min(resident_blocks(threads), -(-n // (warp_tile * WARPS))) if n else 0
    partials = temporary("partials", blocks, value_type, stream)
    if blocks:
        partials_kernel[blocks, threads, stream](d_in, n, partials)
    final_kernel[1, FINAL_THREADS, stream](partials, blocks, value_type.type(initial), d_out)
