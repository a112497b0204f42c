"""Device-wide stream compaction (CUB's DeviceSelect and DevicePartition):
``select(d_in, d_out, predicate)``, ``select_flagged(d_in, flags, d_out)`` and
``partition(d_in, d_out, predicate)``, each returning the number selected.

One kernel, one tile per block, in claiming order: a block loads its tile
(``coop.block.load``), flags its items, counts each thread's selected items, and an
exclusive sum of the counts over the block, seeded by the decoupled look-back
(``coop.device._lookback.tile_prefix``: the selected items of every tile before it),
gives each thread the output position of its first selected item; each thread then
puts its selected items in order in shared memory, from where the block writes them to
``d_out`` coalesced (consecutive threads, consecutive items). A partition writes the rejected items too,
from the end of ``d_out`` backwards (CUB's DevicePartition::If: the selected in input
order at the front, the rejected in reverse input order at the back). The last tile's
block writes the count.
"""

import functools

import numpy as np
from numba import cuda

import coop
from coop._core.backend import SIMULATOR
from coop._core.constants import without_dead_branches
from coop.device._host import (check_length, device_array, device_operator, documented, fill_zero, launch,
                               launch_stream, takes_temp_storage, temporary)
from coop.device._tiles import BLOCK_THREADS, items_per_thread, tile_loader
from coop.device._lookback import TileStates, claim_tile, tile_prefix

__all__ = ["select", "select_flagged", "partition"]

THREADS = BLOCK_THREADS
TILE_BYTES_PER_THREAD = 16 if SIMULATOR else 64  # (measured on an H100: 32 and 48 slower, 128 to 512 threads alike)


@functools.lru_cache(maxsize=None)
def _select_kernel(predicate, in_dtype, flag_dtype, count_dtype, partition):
    """The kernel for items of ``in_dtype`` chosen by ``predicate`` (None: by a flags
    array of ``flag_dtype``), counted in ``count_dtype``."""
    in_type, count_type = np.dtype(in_dtype), np.dtype(count_dtype)
    flagged = predicate is None
    flag_type = np.dtype(flag_dtype if flagged else np.uint8)
    n_items = items_per_thread(TILE_BYTES_PER_THREAD, in_type)
    tile_size = THREADS * n_items
    temp_bytes = max(
        coop.block.load.temp_storage_bytes(in_type, THREADS, n_items, algorithm="warp_transpose"),
        coop.block.load.temp_storage_bytes(flag_type, THREADS, n_items, algorithm="warp_transpose"),
        coop.block.exclusive_sum.temp_storage_bytes(count_type, THREADS),
    )
    load = tile_loader(THREADS, n_items)  # (items and flags alike)
    prefix = tile_prefix(coop.ops.add, count_type)
    zero = count_type.type(0)

    def select_kernel(d_in, flags, d_out, count, n, status, aggregates, inclusives, epoch):
        temp = cuda.shared.array(temp_bytes, np.uint8, alignment=16)
        compacted = cuda.shared.array(tile_size, in_type)
        tile_slot = cuda.shared.array(1, np.int32)
        tile_span = cuda.shared.array(2, count_type)
        items = cuda.local.array(n_items, in_type)
        chosen = cuda.local.array(n_items, flag_type)
        tile = claim_tile(status, (n + tile_size - 1) // tile_size, tile_slot)
        base = tile * tile_size
        valid = min(n - base, tile_size)
        load(d_in[base:], items, valid, temp)
        if flagged:
            load(flags[base:], chosen, valid, temp)
        first = cuda.threadIdx.x * n_items  # (blocked: the thread's items' tile positions)
        selected = zero
        for i in range(n_items):
            if flagged:
                keep = chosen[i] != 0
            else:
                keep = predicate(items[i])
            keep = keep and (valid == tile_size or first + i < valid)
            chosen[i] = keep
            selected = count_type.type(selected + keep)  # (Numba would widen an int32 sum to int64)
        state = (status, aggregates, inclusives, tile, epoch, zero)
        before = coop.block.exclusive_sum(selected, prefix_op=prefix, prefix_state=state, threads=THREADS,
                                          temp_storage=temp)
        # The tile's selected items are compacted in shared memory, then written with
        # consecutive threads on consecutive items (CUB's two-phase scatter).
        rank = cuda.threadIdx.x
        if rank == 0:
            tile_span[0] = before
        if rank == THREADS - 1:
            tile_span[1] = before + selected
        cuda.syncthreads()
        start, end = tile_span[0], tile_span[1]
        position = before
        for i in range(n_items):
            if chosen[i]:
                compacted[position - start] = items[i]
                position += 1
            elif partition and (valid == tile_size or first + i < valid):
                # rejected: the (base + first + i - position)-th rejected item so far
                d_out[n - 1 - (base + first + i - position)] = items[i]
        cuda.syncthreads()
        for i in range(n_items):
            slot = rank + i * THREADS
            if slot < end - start:
                d_out[start + slot] = compacted[slot]
        if base + valid == n and rank == THREADS - 1:
            count[0] = end

    return cuda.jit(without_dead_branches(select_kernel)), tile_size


def _select(function, d_in, flags, d_out, predicate, partition, stream):
    d_in = device_array(function, "d_in", d_in)
    d_out = device_array(function, "d_out", d_out)
    n = d_in.size
    if flags is not None:
        flags = device_array(function, "flags", flags)
        check_length(function, "flags", flags, n)
        if flags.dtype.kind not in "biu":
            raise TypeError(f"coop.device.{function}: flags must be of a bool or integer dtype, got {flags.dtype}")
    if partition:
        check_length(function, "d_out", d_out, n)
    if d_out.dtype != d_in.dtype:
        raise TypeError(f"coop.device.{function}: d_out's dtype {d_out.dtype} differs from d_in's {d_in.dtype} "
                        "(the selected items are copied as they are)")
    if predicate is not None:
        predicate = device_operator(function, "predicate", predicate)
    stream = launch_stream(stream)
    count = temporary("count", 1, np.int64, stream)
    if n:
        count_type = np.int32 if n < 2**31 else np.int64
        kernel, tile_size = _select_kernel(predicate, d_in.dtype, flags.dtype if flags is not None else None,
                                           count_type, partition)
        tiles = -(-n // tile_size)
        states = TileStates(tiles, count_type, stream)
        flag_array = flags if flags is not None else d_in  # (unused without flags)
        launch(kernel, tiles, THREADS, stream, d_in, flag_array, d_out, count, n, *states.arrays, states.epoch)
    else:
        fill_zero(count, 1, stream)
    return int(count.copy_to_host(stream=stream)[0])


@documented
@takes_temp_storage
def select(d_in, d_out, predicate, stream=None, temp_storage=None):
    """Copy the items of ``d_in`` for which ``predicate`` is true to the front of
    ``d_out``, in order (CUB DeviceSelect::If).

    Parameters
    ----------
    d_in : device array
        The items, may be empty:
        {device_array}
    d_out : device array
        Of ``d_in``'s dtype, long enough for the selected items (``d_in``'s length is
        always enough; a shorter one is the caller's bet).
    predicate : function
        ``predicate(item) -> bool``: a lambda or function (compiled for the device), or
        a ``@cuda.jit(device=True)`` function.
    stream : stream, optional
        {device_stream}
    temp_storage : device array, optional
        {device_temp_storage}

    Returns
    -------
    int
        The number of items selected (the call waits for the GPU to read it).

    Example
    -------
    The even numbers, in order::

        import numpy as np
        import coop
        from numba import cuda

        x = np.random.default_rng(6).integers(0, 100, 5000).astype(np.int32)
        d_out = cuda.device_array_like(x)
        count = coop.device.select(cuda.to_device(x), d_out, lambda v: v % 2 == 0)
        assert count == (x % 2 == 0).sum()
        assert (d_out.copy_to_host()[:count] == x[x % 2 == 0]).all()
    """
    return _select("select", d_in, None, d_out, predicate, False, stream)


@documented
@takes_temp_storage
def select_flagged(d_in, flags, d_out, stream=None, temp_storage=None):
    """Copy the items of ``d_in`` whose flag is nonzero to the front of ``d_out``, in
    order (CUB DeviceSelect::Flagged).

    Parameters
    ----------
    d_in : device array
        The items (as in ``coop.device.select``).
    flags : device array
        One flag per item, of a bool or integer dtype.
    d_out, stream, temp_storage : as in ``coop.device.select``

    Returns
    -------
    int
        The number of items selected (the call waits for the GPU to read it).

    Example
    -------
    ::

        import numpy as np
        import coop
        from numba import cuda

        rng = np.random.default_rng(7)
        x, keep = rng.standard_normal(5000).astype(np.float32), rng.random(5000) < 0.3
        d_out = cuda.device_array_like(x)
        count = coop.device.select_flagged(cuda.to_device(x), cuda.to_device(keep), d_out)
        assert (d_out.copy_to_host()[:count] == x[keep]).all()
    """
    return _select("select_flagged", d_in, flags, d_out, None, False, stream)


@documented
@takes_temp_storage
def partition(d_in, d_out, predicate, stream=None, temp_storage=None):
    """Split ``d_in`` by ``predicate`` into ``d_out``: the selected items in order at the
    front, the rejected ones in reverse order at the back (CUB DevicePartition::If).

    Parameters
    ----------
    d_in, predicate, stream, temp_storage : as in ``coop.device.select``
    d_out : device array
        Of ``d_in``'s dtype and at least its length.

    Returns
    -------
    int
        The number of items selected, ``k``: ``d_out[:k]`` are the selected items in
        input order, ``d_out[k:n][::-1]`` the rejected ones in input order (the call
        waits for the GPU to read it).

    Example
    -------
    ::

        import numpy as np
        import coop
        from numba import cuda

        x = np.random.default_rng(8).integers(-50, 50, 5000).astype(np.int64)
        d_out = cuda.device_array_like(x)
        k = coop.device.partition(cuda.to_device(x), d_out, lambda v: v < 0)
        out = d_out.copy_to_host()
        assert (out[:k] == x[x < 0]).all() and (out[k:][::-1] == x[x >= 0]).all()
    """
    return _select("partition", d_in, None, d_out, predicate, True, stream)
