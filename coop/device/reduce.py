"""Device-wide reductions (CUB's DeviceReduce): ``reduce(d_in, d_out, op, initial)`` and
``sum(d_in, d_out)``, built from coop.warp.load, coop.warp.reduce and coop.block.reduce.

One kernel. It gives each warp of a grid that fills the GPU once a contiguous run of warp
tiles (``32 * N`` items, "even share"); a warp loads each tile blocked (vector loads),
reduces each lane's items as a tree and the lanes with ``coop.warp.reduce``, and folds
the tile into its running value in tile order; the block folds its warps' values in warp
order into one partial. The last block to finish (a counter in global memory, after a
fence: CUDA's threadfence reduction) reduces the partials in block order after
``initial``: each thread combines its run of them, then ``coop.block.reduce``. A partial
warp tile is reduced the same way: each lane's valid items in order, then
``coop.warp.reduce`` of one value per lane. Every combination is in input order, so
``op`` needs to be associative only (CUB's needs to be commutative too). Values are
converted to ``d_out``'s dtype as they are loaded and combined in it (CUB: the type of
``initial``).

Tuple values (``d_in`` and ``d_out`` tuples of arrays, ``coop.device._zip``) go through
the same kernel: each member's tile is loaded as an array of its own, the partials are an
array per member, and a block's warps leave their values in shared memory as tuples
(``coop._core.scratch``); a plain value is the case of one array.
"""

import functools

import numpy as np

from numba import cuda

import coop
from coop._core.backend import SIMULATOR
from coop._core.items import accessors
from coop._core.scratch import Region, allocator, loader, store
from coop._core.values import converter, value_type_of
from coop.device._host import (check_length, device_array, device_operator, documented, launch,
                               launch_stream, resident_blocks, takes_temp_storage, temporary, zeroed_temporary)
from coop.device.lookback import arrive
from coop.device._tiles import items_per_thread
from coop.device._zip import for_each_member, host_value, is_zipped, local_arrays, members, value_dtype, zipped_arrays

__all__ = ["reduce", "sum"]

# Warps per block and items per lane (per 4 bytes of value: 16 for int32, 8 for int64).
WARPS = 2 if SIMULATOR else 8
LANE_BYTES = 16 if SIMULATOR else 64
FINAL_ITEMS = 2 if SIMULATOR else 8


@functools.lru_cache(maxsize=None)
def _kernel(op, in_dtypes, dtypes, warps=WARPS, lane_bytes=LANE_BYTES):
    """(kernel, warp tile, threads) reducing values of ``in_dtypes`` with ``op`` as
    ``dtypes`` (dtypes, or tuples of dtypes for tuple values: ``d_in``, ``partials`` and
    ``d_out`` are then tuples of arrays, see the module docstring)."""
    count = members(dtypes)
    value_type = value_type_of(dtypes)
    convert = converter(value_type)
    n_items = items_per_thread(lane_bytes, in_dtypes)
    warp_tile = 32 * n_items
    threads = 32 * warps
    final_tile = threads * FINAL_ITEMS
    levels = (n_items - 1).bit_length()  # (of the tree over a lane's items)
    read, write, _ = accessors(count)
    loaded_arrays, item_arrays = local_arrays(n_items, in_dtypes), local_arrays(n_items, dtypes)
    load_tile = for_each_member(count, "srcs, arrays, base",
                                "coop.warp.load(srcs{m}[base:], arrays{m}, items_per_thread=N, "
                                "algorithm='vectorize')", coop=coop, N=n_items)
    load_part = for_each_member(count, "srcs, arrays, base, valid",
                                "coop.warp.load(srcs{m}[base:], arrays{m}, items_per_thread=N, "
                                "valid_items=valid)", coop=coop, N=n_items)
    warp_values = Region("warp_values", value_type, warps)
    allocate_warp_values = allocator(warp_values, ("coop.device.reduce", "warp_values"))
    first_slot, load_value = warp_values.slot(), loader(value_type)

    @cuda.jit
    def reduce_kernel(d_in, n, partials, done, initial, d_out):
        loaded = loaded_arrays()
        items = item_arrays()
        values = allocate_warp_values(0)
        warp_has = cuda.shared.array(warps, np.int32)
        is_last = cuda.shared.array(1, np.int32)
        warp = cuda.threadIdx.x // 32
        tiles = (n + warp_tile - 1) // warp_tile
        all_warps = cuda.gridDim.x * warps
        mine = cuda.blockIdx.x * warps + warp
        first, last = mine * tiles // all_warps, (mine + 1) * tiles // all_warps
        running = initial  # (its type; the value is unused until ``has`` is set)
        has = False
        for tile in range(first, last):
            base = tile * warp_tile
            if base + warp_tile <= n:
                load_tile(d_in, loaded, base)
                for i in range(n_items):
                    write(items, i, convert(read(loaded, i)))  # (a copy the compiler removes)
                # a tree over the lane's items, in order (a chain would wait on each op)
                for level in range(levels):
                    step = 1 << level
                    for i in range(n_items // (2 * step) + 1):
                        if 2 * step * i + step < n_items:
                            write(items, 2 * step * i,
                                  convert(op(read(items, 2 * step * i), read(items, 2 * step * i + step))))
                total = coop.warp.reduce(read(items, 0), op)
            else:
                valid = n - base
                load_part(d_in, loaded, base, valid)
                # the lane's valid items in order (lanes past the last valid item: none)
                value = convert(read(loaded, 0))
                for i in range(1, n_items):
                    if cuda.laneid * n_items + i < valid:
                        value = convert(op(value, convert(read(loaded, i))))
                total = coop.warp.reduce(value, op, valid_items=(valid + n_items - 1) // n_items)
            running = convert(op(running, total)) if has else total
            has = True
        if cuda.laneid == 0:
            store(values, first_slot + warp, running)
            warp_has[warp] = has
        cuda.syncthreads()
        if cuda.threadIdx.x == 0:
            block_value = load_value(values, first_slot)
            block_has = False
            for w in range(warps):
                if warp_has[w]:
                    value = load_value(values, first_slot + w)
                    block_value = convert(op(block_value, value)) if block_has else value
                    block_has = True
            write(partials, cuda.blockIdx.x, block_value)
            arrive(done, 0, is_last)  # (the partial, then the arrival: the last block sees every partial)
        cuda.syncthreads()
        if is_last[0]:
            cuda.threadfence()
            count = cuda.gridDim.x if n > 0 else 0  # (no values: initial)
            total_so_far = initial
            for base in range(0, count, final_tile):
                valid = min(count - base, final_tile)
                # the thread's partials (blocked, in order), then the block's
                mine_first = base + cuda.threadIdx.x * FINAL_ITEMS
                value = read(partials, min(mine_first, count - 1))
                for i in range(1, FINAL_ITEMS):
                    if mine_first + i < base + valid:
                        value = convert(op(value, read(partials, mine_first + i)))
                total = coop.block.reduce(value, op, valid_items=(valid + FINAL_ITEMS - 1) // FINAL_ITEMS,
                                          threads=threads)
                total_so_far = convert(op(total_so_far, total))
            if cuda.threadIdx.x == 0:
                write(d_out, 0, total_so_far)

    return reduce_kernel, warp_tile, threads


@documented
@takes_temp_storage
def reduce(d_in, d_out, op, initial, stream=None, temp_storage=None):  # noqa: A001  (CUB's name)
    """Reduce ``d_in`` with ``op`` after ``initial`` into ``d_out[0]`` (CUB
    DeviceReduce::Reduce).

    Parameters
    ----------
    d_in : device array or tuple of device arrays
        The values, may be empty:
        {device_array}
        Or tuple values: a tuple of such arrays of one length, item ``i`` being
        ``(d_in[0][i], d_in[1][i], ...)`` (as CUB's zip iterator gives them), e.g.
        ``(values, indices)`` for ``coop.ops.argmax``.
    d_out : device array or tuple of device arrays
        Receives ``initial op d_in[0] op d_in[1] ...`` in ``d_out[0]``; its dtype is the
        type the values are converted to and combined in. For tuple values, a tuple of
        as many arrays (each of at least one item): ``d_out[k][0]`` receives member
        ``k`` of the result, combined in ``d_out[k]``'s dtype.
    op : operator
        {device_combining_operator}
        For tuple values it takes and returns tuples.
    initial : scalar or tuple
        The first operand (``op``'s identity gives a plain reduction); for tuple values,
        a tuple.
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


@documented
@takes_temp_storage
def sum(d_in, d_out, stream=None, temp_storage=None):  # noqa: A001  (CUB's name)
    """Sum ``d_in`` into ``d_out[0]`` (CUB DeviceReduce::Sum), in ``d_out``'s dtype.

    Parameters
    ----------
    d_in, d_out, stream, temp_storage : as in ``coop.device.reduce``

    Returns
    -------
    None
        {device_returns}

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
    zipped = is_zipped(d_in, d_out)
    if zipped:  # tuple values
        instead = "reduce" if function == "sum" else None  # (sums take no tuples)
        d_in, d_out, n = zipped_arrays(function, d_in, d_out, out_length=1, instead=instead)
    else:
        d_in = device_array(function, "d_in", d_in)
        d_out = device_array(function, "d_out", d_out)
        n = d_in.size
        check_length(function, "d_out", d_out, 1)
    op = device_operator(function, "op", op)
    stream = launch_stream(stream)
    value_type = value_dtype(d_out)
    initial = host_value(function, "initial", initial, value_type)
    kernel, warp_tile, threads = _kernel(op, value_dtype(d_in), value_type)
    # (no values: one block writes initial, a launch as any other, so that graphs and
    # replays hold it)
    blocks = max(1, min(resident_blocks(threads), -(-n // (warp_tile * (threads // 32)))))
    if zipped:  # (an array per member: two may have one dtype)
        partials = tuple(temporary(f"partials.{k}", blocks, member, stream) for k, member in enumerate(value_type))
    else:
        partials = temporary("partials", blocks, value_type, stream)
    done = zeroed_temporary("reduce.done", 1, np.uint32, stream)  # (each call's last block sets it back to 0)
    launch(kernel, blocks, threads, stream, d_in, n, partials, done, initial, d_out)
