"""Device-wide stream compaction (CUB's DeviceSelect and DevicePartition):
``select(d_in, d_out, predicate)``, ``select_flagged(d_in, flags, d_out)``,
``unique(d_in, d_out, equality=None)`` and ``partition(d_in, d_out, predicate)``, each
returning the number selected.

One kernel, one tile per block, in claiming order: a block loads its tile (and its
flags) blocked with vector loads (``coop.block.load``, "vectorize"), flags its items, counts each thread's selected items, and an
exclusive sum of the counts over the block, seeded by the decoupled look-back
(``coop.device.lookback.tile_prefix``: the selected items of every tile before it),
gives each thread the output position of its first selected item; each thread then
puts its selected items in order in shared memory (the scratch the scan used, CUB's
union), from where the block writes them to ``d_out`` coalesced (consecutive threads,
consecutive items). A partition writes the rejected items too,
from the end of ``d_out`` backwards (CUB's DevicePartition::If: the selected in input
order at the front, the rejected in reverse input order at the back). ``unique`` flags
the items that differ from the one before them with ``coop.block.flag_heads`` (given the
item before the tile), as CUB's DeviceSelect::Unique does with BlockDiscontinuity. The
last tile's block writes the count: to the caller's ``d_num_selected_out``, or to a
temporary the call then reads (waiting for the GPU) and returns. ``run_length_encode``
is unique's launch writing each run's start too, then a launch of their differences.
"""

import functools

import numpy as np
from numba import cuda

import coop
from coop._core.backend import SIMULATOR
from coop._core.arithmetic import unequal
from coop._core.constants import without_dead_branches
from coop._core.errors import ArgumentTypeError, ArgumentValueError
from coop.device._host import (check_length, copied_to_host, device_array, device_operator, documented, fill_zero,
                               is_same_memory, launch, launch_over, launch_stream, takes_temp_storage, temporary)
from coop.device._tiles import BLOCK_THREADS, items_per_thread, tile_head_flagger, tile_loader, tile_run_edge_flagger
from coop.device.lookback import TileStates, claim_tile, tile_prefix

__all__ = ["select", "select_flagged", "unique", "run_length_encode", "partition", "three_way_partition",
           "unique_by_key", "non_trivial_runs"]
BUILDING_BLOCKS = ["adjacent_differs"]  # (for coop.device.scan_by_key)

THREADS = BLOCK_THREADS
# Items per thread for 4-byte items, fewer for wider ones and no more for narrower ones
# (CUB's nominal 4-byte items), by flags and by predicate. Measured on an H100 (int32
# items, one-byte flags, 2^24 and 2^28 items, 128 to 512 threads of 16 to 32 items):
# 256 threads of 24 items (flags; by predicate 32, then 24 with the look-back's sleeps,
# below), both loaded "vectorize"; by flags,
# launch bounds of 4 blocks an SM (61 registers, no spills: 5-9% faster than 68 registers'
# 3 blocks; with a predicate, 4 blocks spill and gain 1-7%: none). By neighbours (unique,
# run_length_encode), on an H200 (int32 runs of 16, 2^24 and 2^28 items, 128 to 512
# threads of 8 to 32 items): 256 threads of 16 items, 14-17% faster than of 32. A three-way
# partition, on an H100 (int32 in three parts, 2^24 and 2^28 items): 256 threads of 16
# items, 15-16% faster than of 12 (CUB's; 320 threads of 12 as 256), 29-31% than of 8,
# and with the look-back's sleeps 3-6% than of 24, 19% than of 32. By predicate, with the
# sleeps (H100, int32, x % 2 == 0): 256 threads of 24 items 7-10% faster than of 32; of 16
# and 20, -6% to +5%.
NOMINAL_ITEMS = ({"flags": 4, "predicate": 4, "neighbours": 4, "three_way": 4} if SIMULATOR else
                 {"flags": 24, "predicate": 24, "neighbours": 16, "three_way": 16})
BLOCKS_PER_SM = {"flags": 4, "predicate": None, "neighbours": None, "three_way": None}
# the look-back's sleep before its first look (coop.device.lookback), H100, 2^24 and 2^28
# items: by flags 2,500 ns 2-5% faster than 1,245; by neighbours and three-way 1,245
# 4-14% faster than 2,500; by predicate 1,245 (CUB's) 2-4% faster than 2,500
FIRST_LOOK_NANOSECONDS = {"flags": 2500, "predicate": 1245, "neighbours": 1245, "three_way": 1245}
ITEMS_ALGORITHM = "vectorize"
FLAGS_ALGORITHM = "vectorize"  # (one-byte flags: 16 to a 16-byte load, and no exchange of bytes)


@functools.lru_cache(maxsize=None)
def _select_kernel(predicate, in_dtype, flag_dtype, count_dtype, partition, threads=None, n_items=None,
                   items_algorithm=ITEMS_ALGORITHM, flags_algorithm=FLAGS_ALGORITHM, blocks_per_sm=False,
                   differs=None, with_positions=False, second=None, run_edges=False, with_items=True):
    """The kernel for items of ``in_dtype`` chosen by ``predicate``, or where
    ``differs(item before, item)`` (unique; ``run_edges``: the first and the last item of
    each run of two or more, non_trivial_runs), or else by a flags array of
    ``flag_dtype``, counted in ``count_dtype``; ``with_positions``: the selected items'
    positions in ``d_in`` written to ``positions`` too (``with_items=False``: only
    they, compacted in shared memory and written coalesced, ``d_out`` unused).
    ``second``: a three-way partition (``d_out`` a tuple of three arrays): the items
    ``predicate`` rejects and ``second`` chooses are a second part, the rest unselected;
    both parts counted in one uint64 (``count_dtype``), the first in its low 32 bits."""
    in_type, count_type = np.dtype(in_dtype), np.dtype(count_dtype)
    threads = threads or THREADS  # (read here: benchmarks/device.py --set sweeps it)
    three_way = second is not None
    # (tile positions as unsigned: Numba adds a negative-index fix-up to each signed index)
    index = np.uint32 if count_type.itemsize == 4 else np.uint64
    by_neighbours = differs is not None
    flagged = predicate is None and not by_neighbours
    flag_type = np.dtype(flag_dtype if flagged else np.uint8)
    chosen_by = ("flags" if flagged else "neighbours" if by_neighbours else "three_way" if three_way else
                 "predicate")
    n_items = n_items or min(NOMINAL_ITEMS[chosen_by], items_per_thread(4 * NOMINAL_ITEMS[chosen_by], in_type))
    if blocks_per_sm is False:
        blocks_per_sm = BLOCKS_PER_SM[chosen_by]
    tile_size = threads * n_items
    temp_bytes = max(
        coop.block.load.temp_storage_bytes(in_type, threads, n_items, algorithm=items_algorithm),
        coop.block.load.temp_storage_bytes(flag_type, threads, n_items, algorithm=flags_algorithm),
        coop.block.exclusive_sum.temp_storage_bytes(count_type, threads),
        tile_size * in_type.itemsize,  # (the compacted tile, once the others are done: CUB's union)
        tile_size * count_type.itemsize if not with_items else 0,  # (or the compacted positions)
        coop.block.flag_heads.temp_storage_bytes(in_type, threads) if by_neighbours else 0,
        coop.block.flag_heads_and_tails.temp_storage_bytes(in_type, threads) if run_edges else 0,
    )
    temp_bytes = -(-temp_bytes // 16) * 16  # (whole items of any type: the compacted tile is a view)
    load_items = tile_loader(threads, n_items, items_algorithm)
    flag_heads = tile_head_flagger(threads, n_items, differs) if by_neighbours and not run_edges else None
    flag_run_edges = tile_run_edge_flagger(threads, n_items, differs) if run_edges else None
    load_flags = tile_loader(threads, n_items, flags_algorithm)
    prefix = tile_prefix(coop.ops.add, count_type, FIRST_LOOK_NANOSECONDS[chosen_by])
    zero = count_type.type(0)
    # (three-way: an item of the first part counts one, of the second 2^32; a part a byte)
    one, second_part, low_half, half = ((count_type.type(1), count_type.type(1 << 32),
                                         count_type.type(0xFFFFFFFF), count_type.type(32))
                                        if three_way else (None,) * 4)

    def select_kernel(d_in, flags, d_out, positions, count, n, status, aggregates, inclusives, epoch):
        temp = cuda.shared.array(temp_bytes, np.uint8, alignment=16)
        if with_items:
            compacted = temp.view(in_type)
        else:
            compacted = temp.view(count_type)
        tile_slot = cuda.shared.array(1, np.int32)
        tile_span = cuda.shared.array(2, count_type)
        items = cuda.local.array(n_items, in_type)
        chosen = cuda.local.array(n_items, flag_type)
        tile = claim_tile(status, (n + tile_size - 1) // tile_size, tile_slot)
        base = tile * tile_size
        valid = min(n - base, tile_size)
        load_items(d_in[base:], items, valid, temp)
        if flagged:
            load_flags(flags[base:], chosen, valid, temp)
        if run_edges:
            flag_run_edges(d_in, base, valid, n, items, chosen, temp)
        elif by_neighbours:  # (the first item of the input is always kept)
            flag_heads(d_in, base, valid, items, chosen, temp)
        first = cuda.threadIdx.x * n_items  # (blocked: the thread's items' tile positions)
        selected = zero
        for i in range(n_items):
            if three_way:
                if not (valid == tile_size or first + i < valid):
                    chosen[i] = 0
                elif predicate(items[i]):
                    chosen[i] = 1
                    selected += one
                elif second(items[i]):
                    chosen[i] = 2
                    selected += second_part
                else:
                    chosen[i] = 3
                continue
            if flagged or by_neighbours:
                keep = chosen[i] != 0
            else:
                keep = predicate(items[i])
            keep = keep and (valid == tile_size or first + i < valid)
            chosen[i] = keep
            selected = count_type.type(selected + keep)  # (Numba would widen an int32 sum to int64)
        state = (status, aggregates, inclusives, tile, epoch, zero)
        before = coop.block.exclusive_sum(selected, prefix_op=prefix, prefix_state=state, threads=threads,
                                          temp_storage=temp)
        if three_way:
            write_three_parts(items, chosen, d_out, count, n, base, valid, before, selected, compacted, tile_span)
        else:
            write_selected(items, chosen, d_out, positions, count, n, base, valid, before, selected, compacted,
                           tile_span)

    @cuda.jit(device=True)
    def span_of_tile(before, selected, tile_span):
        """The counts before the tile and after it (every thread's, through the shared
        ``tile_span``), from each thread's ``before`` and its own ``selected``."""
        if cuda.threadIdx.x == 0:
            tile_span[0] = before
        if cuda.threadIdx.x == threads - 1:
            tile_span[1] = before + selected
        cuda.syncthreads()
        return tile_span[0], tile_span[1]

    @cuda.jit(device=True)
    def write_selected(items, chosen, d_out, positions, count, n, base, valid, before, selected, compacted,
                       tile_span):
        """The tile's selected items compacted in shared memory, then written with
        consecutive threads on consecutive items (CUB's two-phase scatter); a partition's
        rejected items written from the end of ``d_out`` backwards. Without items: their
        positions, the same way."""
        first = cuda.threadIdx.x * n_items
        rank = cuda.threadIdx.x
        start, end = span_of_tile(before, selected, tile_span)
        position = index(before - start)
        for i in range(n_items):
            if chosen[i]:
                if with_items:
                    compacted[position] = items[i]
                    if with_positions:
                        positions[start + position] = base + first + i
                else:
                    compacted[position] = count_type.type(base + first + i)
                position += index(1)
            elif partition and (valid == tile_size or first + i < valid):
                # rejected: the (base + first + i - start - position)-th rejected item so far
                d_out[n - 1 - (base + first + i - start - count_type.type(position))] = items[i]
        cuda.syncthreads()
        in_tile = index(end - start)
        if with_items:
            out = d_out[start:]
        else:
            out = positions[start:]
        for i in range(n_items):
            slot = index(rank + i * threads)
            if slot < in_tile:
                out[slot] = compacted[slot]
        if base + valid == n and rank == threads - 1:
            count[0] = end

    @cuda.jit(device=True)
    def write_three_parts(items, classes, outs, count, n, base, valid, before, selected, compacted, tile_span):
        """A three-way partition's tile written out: its items put in shared memory by
        part (first, second, unselected), then written coalesced to the three outputs
        (CUB's three-way DevicePartition::If)."""
        rank = cuda.threadIdx.x
        start, end = span_of_tile(before, selected, tile_span)
        first_start, second_start = start & low_half, start >> half
        first_total, second_total = (end & low_half) - first_start, (end >> half) - second_start
        # (the thread's places in the tile: of its first items of each part)
        first_place = (before & low_half) - first_start
        second_place = first_total + (before >> half) - second_start
        unselected_place = (first_total + second_total + count_type.type(rank * n_items)
                            - first_place - (second_place - first_total))
        for i in range(n_items):
            part = classes[i]
            if part == 1:
                compacted[first_place] = items[i]
                first_place += one
            elif part == 2:
                compacted[second_place] = items[i]
                second_place += one
            elif part == 3:
                compacted[unselected_place] = items[i]
                unselected_place += one
        cuda.syncthreads()
        both = first_total + second_total
        unselected_start = count_type.type(base) - first_start - second_start
        for i in range(n_items):
            slot = count_type.type(rank + i * threads)
            if slot < first_total:
                outs[0][first_start + slot] = compacted[slot]
            elif slot < both:
                outs[1][second_start + slot - first_total] = compacted[slot]
            elif slot < count_type.type(valid):
                outs[2][unselected_start + slot - both] = compacted[slot]
        if base + valid == n and rank == threads - 1:
            end_first, end_second = end & low_half, end >> half
            count[0] = end_first
            count[1] = end_second

    jit = cuda.jit(launch_bounds=(threads, blocks_per_sm)) if blocks_per_sm else cuda.jit
    return jit(without_dead_branches(select_kernel)), tile_size


@functools.lru_cache(maxsize=None)
def adjacent_differs(equality):
    """``differs(a, b)``: not ``equality(a, b)``; by default coop's ``unequal`` (which
    compares float16 values through float32: Numba's float16 comparison is an
    out-of-line call)."""
    if equality is None:
        return unequal

    @cuda.jit(device=True)
    def differs(a, b):
        return not equality(a, b)

    return differs


def _count_output(function, name, array, n):
    """The caller's ``array`` for a count of up to ``n``, checked."""
    count = device_array(function, name, array)
    check_length(function, name, count, 1)
    if count.dtype.kind not in "iu" or count.dtype.itemsize < (4 if n < 2**31 else 8):
        raise ArgumentTypeError(f"coop.device.{function}: {name} must be of an integer dtype of at "
                                f"least 32 bits (64 from 2^31 items on), got {count.dtype}")
    return count


def _select(function, d_in, flags, d_out, predicate, partition, d_num_selected_out, stream, adjacent=False,
            equality=None, names=("d_out", "d_num_selected_out"), positions_of=None, after=None, in_name="d_in",
            run_edges=False):
    """The number selected (None with ``d_num_selected_out``). ``adjacent``: items kept
    where they differ (by ``equality``) from the one before (unique); ``run_edges`` too:
    the first and the last item of each run of two or more. ``names``: the caller's
    names of ``d_out`` and ``d_num_selected_out``; ``positions_of(n, stream)``: a device
    array for the selected items' positions in ``d_in``, written with them;
    ``after(n, count, positions, stream)``: launches that follow the select's (given
    items), before the count is read. ``in_name``: the caller's name of ``d_in``. ``d_out``
    None: only the positions are wanted."""
    out_name, count_name = names
    d_in = device_array(function, in_name, d_in)
    with_items = d_out is not None
    d_out = device_array(function, out_name, d_out) if with_items else d_in  # (unused without items)
    n = d_in.size
    differs = None
    if adjacent:
        if with_items and is_same_memory(function, out_name, d_out, in_name, d_in):
            raise ArgumentValueError(f"coop.device.{function}: {out_name} is {in_name} itself: the items are compared "
                                     "with the ones before them, which must stay as they are (give another array)")
        if equality is not None:
            equality = device_operator(function, "equality", equality)
        differs = adjacent_differs(equality)
    if flags is not None:
        flags = device_array(function, "flags", flags)
        check_length(function, "flags", flags, n)
        if flags.dtype.kind not in "biu":
            raise ArgumentTypeError(f"coop.device.{function}: flags must be of a bool or integer dtype, "
                                    f"got {flags.dtype}")
    if partition:
        check_length(function, out_name, d_out, n)
    if d_out.dtype != d_in.dtype:
        raise ArgumentTypeError(f"coop.device.{function}: {out_name}'s dtype {d_out.dtype} differs from {in_name}'s "
                                f"{d_in.dtype} (the selected items are copied as they are)")
    if d_num_selected_out is not None:
        count = _count_output(function, count_name, d_num_selected_out, n)
    if predicate is not None:
        predicate = device_operator(function, "predicate", predicate, arity=1)
    stream = launch_stream(stream, waits_without=count_name if d_num_selected_out is None else None)
    if d_num_selected_out is None:
        count = temporary("count", 1, np.int64, stream)
    positions = positions_of(n, stream) if positions_of is not None and n else None
    if n:
        count_type = np.int32 if n < 2**31 else np.int64
        kernel, tile_size = _select_kernel(predicate, d_in.dtype, flags.dtype if flags is not None else None,
                                           count_type, partition, differs=differs,
                                           with_positions=positions is not None, run_edges=run_edges,
                                           with_items=with_items)
        tiles = -(-n // tile_size)
        states = TileStates(tiles, count_type, stream)
        flag_array = flags if flags is not None else d_in  # (unused without flags)
        position_array = positions if positions is not None else count  # (unused without positions)
        launch(kernel, tiles, THREADS, stream, d_in, flag_array, d_out, position_array, count, n, *states.arrays,
               states.epoch)
        if after is not None:
            after(n, count, positions, stream)
    else:
        fill_zero(count, 1, stream)
    if d_num_selected_out is None:
        return int(copied_to_host(count, stream)[0])


@documented
@takes_temp_storage
def select(d_in, d_out, predicate, d_num_selected_out=None, stream=None, temp_storage=None):
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
    d_num_selected_out : device array, optional
        Where the kernel writes the number selected, in its first item (CUB's
        ``d_num_selected_out``; an integer dtype of at least 32 bits, 64 from 2^31
        items on). Given, the call returns ``None`` at once, without waiting for the GPU
        (the way to chain calls on a stream); without it, the call waits and returns the
        number.
    stream : stream, optional
        {device_stream}
    temp_storage : device array, optional
        {device_temp_storage}

    Returns
    -------
    int or None
        The number of items selected (the call waits for the GPU to read it), or
        ``None`` with ``d_num_selected_out``.

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
    return _select("select", d_in, None, d_out, predicate, False, d_num_selected_out, stream)


@documented
@takes_temp_storage
def select_flagged(d_in, flags, d_out, d_num_selected_out=None, stream=None, temp_storage=None):
    """Copy the items of ``d_in`` whose flag is nonzero to the front of ``d_out``, in
    order (CUB DeviceSelect::Flagged).

    Parameters
    ----------
    d_in : device array
        The items (as in ``coop.device.select``).
    flags : device array
        One flag per item, of a bool or integer dtype.
    d_out, d_num_selected_out, stream, temp_storage : as in ``coop.device.select``

    Returns
    -------
    int or None
        The number of items selected (the call waits for the GPU to read it), or
        ``None`` with ``d_num_selected_out``.

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
    return _select("select_flagged", d_in, flags, d_out, None, False, d_num_selected_out, stream)


@documented
@takes_temp_storage
def unique(d_in, d_out, equality=None, d_num_selected_out=None, stream=None, temp_storage=None):
    """Copy the first item of each run of equal consecutive items of ``d_in`` to the
    front of ``d_out``, in order (CUB DeviceSelect::Unique): an item is kept where it
    differs from the one before it, and the first always.

    Parameters
    ----------
    d_in : device array
        The items (as in ``coop.device.select``); sorted, ``unique`` gives the distinct
        items (NumPy's ``np.unique``).
    d_out : device array
        Of ``d_in``'s dtype, long enough for the kept items (``d_in``'s length is always
        enough), sharing no memory with ``d_in``.
    equality : function, optional
        ``equality(a, b) -> bool``: whether two consecutive items are equal (one run).
        Default None: ``a == b`` (so NaNs, never equal, are each kept).
        {device_operator}
    d_num_selected_out, stream, temp_storage : as in ``coop.device.select``

    Returns
    -------
    int or None
        The number of items kept (the call waits for the GPU to read it), or ``None``
        with ``d_num_selected_out``.

    Example
    -------
    The distinct values of a sorted array, and of its values by their tens::

        import numpy as np
        import coop
        from numba import cuda

        x = np.sort(np.random.default_rng(10).integers(0, 500, 6000)).astype(np.int32)
        d_x, d_out = cuda.to_device(x), cuda.device_array_like(x)
        count = coop.device.unique(d_x, d_out)
        assert (d_out.copy_to_host()[:count] == np.unique(x)).all()
        count = coop.device.unique(d_x, d_out, equality=lambda a, b: a // 10 == b // 10)
        assert count == np.unique(x // 10).size
    """
    return _select("unique", d_in, None, d_out, None, False, d_num_selected_out, stream, adjacent=True,
                   equality=equality)


@documented
@takes_temp_storage
def unique_by_key(d_keys_in, d_values_in, d_keys_out, d_values_out, equality=None, d_num_selected_out=None,
                  stream=None, temp_storage=None):
    """Copy the first key of each run of equal consecutive keys of ``d_keys_in``, and
    its value, to the fronts of ``d_keys_out`` and ``d_values_out``, in order (CUB
    DeviceSelect::UniqueByKey).

    Parameters
    ----------
    d_keys_in : device array
        The keys (as ``coop.device.unique``'s items).
    d_values_in : device array
        A value per key, of any dtype (as ``d_keys_in``'s).
    d_keys_out, d_values_out : device arrays
        Of the keys' and the values' dtypes, long enough for the kept keys (the input's
        length is always enough), sharing no memory with the inputs.
    equality, d_num_selected_out, stream, temp_storage : as in ``coop.device.unique``

    Returns
    -------
    int or None
        The number of keys kept (the call waits for the GPU to read it), or ``None``
        with ``d_num_selected_out``.

    Notes
    -----
    ``coop.device.unique``'s launch, which also writes the kept keys' positions (to a
    temporary), then a launch copying the values at those positions.

    Example
    -------
    The first event of each second, from events sorted by time::

        import numpy as np
        import coop
        from numba import cuda

        rng = np.random.default_rng(13)
        seconds = np.sort(rng.integers(0, 400, 6000)).astype(np.int64)
        events = rng.integers(0, 10**6, 6000).astype(np.int32)
        d_seconds, d_events = cuda.device_array_like(seconds), cuda.device_array_like(events)
        count = coop.device.unique_by_key(cuda.to_device(seconds), cuda.to_device(events), d_seconds, d_events)
        _, first = np.unique(seconds, return_index=True)
        assert (d_seconds.copy_to_host()[:count] == seconds[first]).all()
        assert (d_events.copy_to_host()[:count] == events[first]).all()
    """
    function = "unique_by_key"
    d_keys_in = device_array(function, "d_keys_in", d_keys_in)
    d_values_in = device_array(function, "d_values_in", d_values_in)
    d_values_out = device_array(function, "d_values_out", d_values_out)
    check_length(function, "d_values_in", d_values_in, d_keys_in.size)
    if d_values_out.dtype != d_values_in.dtype:
        raise ArgumentTypeError(f"coop.device.{function}: d_values_out's dtype {d_values_out.dtype} differs from "
                                f"d_values_in's {d_values_in.dtype} (the values are copied as they are)")
    if is_same_memory(function, "d_values_out", d_values_out, "d_values_in", d_values_in):
        raise ArgumentValueError(f"coop.device.{function}: d_values_out is d_values_in itself (give another array)")

    def positions_of(n, stream):
        return temporary(f"{function}.positions", n, np.int64, stream)

    def copy_values(n, count, positions, stream):
        launch_over(_gather_kernel, n, stream, d_values_in, positions, count, d_values_out)

    return _select(function, d_keys_in, None, d_keys_out, None, False, d_num_selected_out, stream, adjacent=True,
                   equality=equality, names=("d_keys_out", "d_num_selected_out"), positions_of=positions_of,
                   after=copy_values, in_name="d_keys_in")


@cuda.jit
def _gather_kernel(values, positions, count, out):
    """``out[j] = values[positions[j]]`` for the first ``count[0]`` positions."""
    for j in range(cuda.grid(1), count[0], cuda.gridDim.x * cuda.blockDim.x):
        out[j] = values[positions[j]]


@functools.lru_cache(maxsize=None)
def _run_lengths_kernel(length_dtype):
    length_type = np.dtype(length_dtype).type

    @cuda.jit
    def run_lengths_kernel(heads, runs_count, n, lengths):
        """Run ``j``'s length: where the next run starts (or ``n``) less where it starts."""
        runs = runs_count[0]
        for j in range(cuda.grid(1), runs, cuda.gridDim.x * cuda.blockDim.x):
            end = heads[j + 1] if j + 1 < runs else n
            lengths[j] = length_type(end - heads[j])

    return run_lengths_kernel


@documented
@takes_temp_storage
def run_length_encode(d_in, d_unique_out, d_counts_out, d_num_runs_out=None, stream=None, temp_storage=None):
    """The runs of equal consecutive items of ``d_in``: each run's item to
    ``d_unique_out`` and its length to ``d_counts_out``, in order (CUB
    DeviceRunLengthEncode::Encode).

    Parameters
    ----------
    d_in : device array
        The items (as in ``coop.device.select``), compared with ``==`` (NaNs, never
        equal, are each a run of one).
    d_unique_out : device array
        Of ``d_in``'s dtype, long enough for the runs (``d_in``'s length is always
        enough), sharing no memory with ``d_in``: run ``j``'s item to ``d_unique_out[j]``.
    d_counts_out : device array
        Of an integer dtype, long enough for the runs: run ``j``'s length to
        ``d_counts_out[j]``.
    d_num_runs_out : device array, optional
        Where the kernels write the number of runs, in its first item (CUB's
        ``d_num_runs_out``; an integer dtype of at least 32 bits, 64 from 2^31 items
        on). Given, the call returns ``None`` at once, without waiting for the GPU;
        without it, the call waits and returns the number.
    stream : stream, optional
        {device_stream}
    temp_storage : device array, optional
        {device_temp_storage}

    Returns
    -------
    int or None
        The number of runs (the call waits for the GPU to read it), or ``None`` with
        ``d_num_runs_out``.

    Notes
    -----
    ``coop.device.unique``'s launch, which also writes where each run starts (to a
    temporary), then a launch taking the differences of those starts.

    Example
    -------
    The values of a sorted array and how often each occurs (NumPy's ``np.unique(x,
    return_counts=True)``)::

        import numpy as np
        import coop
        from numba import cuda

        x = np.sort(np.random.default_rng(11).integers(0, 300, 5000)).astype(np.int32)
        d_values, d_counts = cuda.device_array_like(x), cuda.device_array(x.size, np.int32)
        runs = coop.device.run_length_encode(cuda.to_device(x), d_values, d_counts)
        values, counts = np.unique(x, return_counts=True)
        assert runs == values.size
        assert (d_values.copy_to_host()[:runs] == values).all() and (d_counts.copy_to_host()[:runs] == counts).all()
    """
    function = "run_length_encode"
    d_counts_out = device_array(function, "d_counts_out", d_counts_out)
    if d_counts_out.dtype.kind not in "iu":
        raise ArgumentTypeError(f"coop.device.{function}: d_counts_out must be of an integer dtype (run lengths), "
                                f"got {d_counts_out.dtype}")
    return _encode_runs(function, d_in, d_unique_out, d_counts_out, d_num_runs_out, stream)


def _encode_runs(function, d_in, d_unique_out, d_lengths, d_num_runs_out, stream):
    """run_length_encode's launches: each run's item to ``d_unique_out``, its start to a
    temporary, its length to ``d_lengths``; the number of runs as ``_select`` gives it."""
    lengths_kernel = _run_lengths_kernel(d_lengths.dtype)

    def heads_of(n, stream):
        return temporary(f"{function}.heads", n, np.int64, stream)

    def lengths(n, count, heads, stream):
        launch_over(lengths_kernel, n, stream, heads, count, n, d_lengths)

    return _select(function, d_in, None, d_unique_out, None, False, d_num_runs_out, stream, adjacent=True,
                   names=("d_unique_out", "d_num_runs_out"), positions_of=heads_of, after=lengths)


@documented
@takes_temp_storage
def non_trivial_runs(d_in, d_offsets_out, d_lengths_out, d_num_runs_out=None, stream=None, temp_storage=None):
    """Where each run of two or more equal consecutive items of ``d_in`` starts, and its
    length, in order (CUB DeviceRunLengthEncode::NonTrivialRuns).

    Parameters
    ----------
    d_in : device array
        The items (as in ``coop.device.run_length_encode``).
    d_offsets_out : device array
        Of an integer dtype, long enough for the runs (half ``d_in``'s length always
        is): run ``j``'s first position to ``d_offsets_out[j]``.
    d_lengths_out : device array
        Of an integer dtype, as long: run ``j``'s length to ``d_lengths_out[j]``.
    d_num_runs_out, stream, temp_storage : as in ``coop.device.run_length_encode``

    Returns
    -------
    int or None
        The number of runs of two or more items (the call waits for the GPU to read it),
        or ``None`` with ``d_num_runs_out``.

    Notes
    -----
    Two launches: a select by neighbours (``coop.device.unique``'s kernel) of the first
    and the last item of each run of two or more, writing their positions (to a
    temporary), then a launch turning each pair of positions into the run's offset and
    length. CUB's is one pass; this one reads the pairs once more.

    Example
    -------
    The repeated readings of a sensor: where each stretch of equal readings starts, and
    how long it lasts::

        import numpy as np
        import coop
        from numba import cuda

        readings = np.repeat(np.random.default_rng(18).integers(0, 5, 900), np.tile([1, 3, 1, 2], 225))
        d_offsets, d_lengths = (cuda.device_array(readings.size, np.int32) for _ in range(2))
        runs = coop.device.non_trivial_runs(cuda.to_device(readings), d_offsets, d_lengths)
        starts = np.flatnonzero(np.r_[True, readings[1:] != readings[:-1]])
        lengths = np.diff(np.r_[starts, readings.size])
        assert runs == (lengths > 1).sum()
        assert (d_offsets.copy_to_host()[:runs] == starts[lengths > 1]).all()
        assert (d_lengths.copy_to_host()[:runs] == lengths[lengths > 1]).all()
    """
    function = "non_trivial_runs"
    d_in = device_array(function, "d_in", d_in)
    outputs = {name: device_array(function, name, out)
               for name, out in (("d_offsets_out", d_offsets_out), ("d_lengths_out", d_lengths_out))}
    for name, out in outputs.items():
        if out.dtype.kind not in "iu":
            raise ArgumentTypeError(f"coop.device.{function}: {name} must be of an integer dtype (positions and "
                                    f"lengths), got {out.dtype}")
    d_offsets_out, d_lengths_out = outputs.values()
    n = d_in.size
    if d_num_runs_out is not None:
        d_num_runs_out = _count_output(function, "d_num_runs_out", d_num_runs_out, n)
    stream = launch_stream(stream, waits_without="d_num_runs_out" if d_num_runs_out is None else None)
    runs = temporary(f"{function}.runs", 1, np.int64, stream) if d_num_runs_out is None else d_num_runs_out
    if n:
        edges_kernel = _run_edges_kernel(d_offsets_out.dtype, d_lengths_out.dtype, runs.dtype)

        def edges_of(n, stream):  # (32-bit where they fit: half the bytes written and read again)
            return temporary(f"{function}.edges", n, np.int32 if n < 2**31 else np.int64, stream)

        def offsets_and_lengths(n, edge_count, edges, stream):
            launch_over(edges_kernel, n // 2, stream, edges, edge_count, d_offsets_out, d_lengths_out, runs)

        _select(function, d_in, None, None, None, False,
                temporary(f"{function}.edge_count", 1, np.int64, stream), stream, adjacent=True,
                positions_of=edges_of, after=offsets_and_lengths, run_edges=True)
    else:
        fill_zero(runs, 1, stream)
    if d_num_runs_out is None:
        return int(copied_to_host(runs, stream)[0])


@functools.lru_cache(maxsize=None)
def _run_edges_kernel(offset_dtype, length_dtype, count_dtype):
    offset_type, length_type, count_type = (np.dtype(dtype).type for dtype in (offset_dtype, length_dtype,
                                                                                count_dtype))

    @cuda.jit
    def run_edges_kernel(edges, edge_count, offsets, lengths, runs):
        """Run ``j`` (of two or more items) from its first and last positions,
        ``edges[2 j]`` and ``edges[2 j + 1]``; their number to ``runs[0]``."""
        count = edge_count[0] // 2
        for j in range(cuda.grid(1), count, cuda.gridDim.x * cuda.blockDim.x):
            first = edges[2 * j]
            offsets[j] = offset_type(first)
            lengths[j] = length_type(edges[2 * j + 1] - first + 1)
        if cuda.grid(1) == 0:
            runs[0] = count_type(count)

    return run_edges_kernel


@documented
@takes_temp_storage
def partition(d_in, d_out, predicate, d_num_selected_out=None, stream=None, temp_storage=None):
    """Split ``d_in`` by ``predicate`` into ``d_out``: the selected items in order at the
    front, the rejected ones in reverse order at the back (CUB DevicePartition::If).

    Parameters
    ----------
    d_in, predicate, d_num_selected_out, stream, temp_storage : as in ``coop.device.select``
    d_out : device array
        Of ``d_in``'s dtype and at least its length.

    Returns
    -------
    int or None
        The number of items selected, ``k``: ``d_out[:k]`` are the selected items in
        input order, ``d_out[k:n][::-1]`` the rejected ones in input order (the call
        waits for the GPU to read it; ``None`` with ``d_num_selected_out``).

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
    return _select("partition", d_in, None, d_out, predicate, True, d_num_selected_out, stream)


@documented
@takes_temp_storage
def three_way_partition(d_in, d_first_part_out, d_second_part_out, d_unselected_out, select_first_part_op,
                        select_second_part_op, d_num_selected_out=None, stream=None, temp_storage=None):
    """Split ``d_in`` three ways, each part in input order (CUB
    DevicePartition::If, three-way): the items ``select_first_part_op`` chooses to
    ``d_first_part_out``, of the rest those ``select_second_part_op`` chooses to
    ``d_second_part_out``, and the others to ``d_unselected_out``.

    Parameters
    ----------
    d_in : device array
        The items (as in ``coop.device.select``), fewer than 2^31 of them.
    d_first_part_out, d_second_part_out, d_unselected_out : device arrays
        Of ``d_in``'s dtype, each long enough for its part (``d_in``'s length always is),
        sharing no memory with ``d_in`` or each other.
    select_first_part_op, select_second_part_op : function
        ``op(item) -> bool`` (as ``coop.device.select``'s ``predicate``); the second is
        asked only of the items the first rejects.
    d_num_selected_out : device array, optional
        Two items, of an integer dtype of at least 32 bits: the kernel writes the sizes
        of the first and the second part there (the unselected are the rest). Given, the
        call returns ``None`` at once, without waiting for the GPU; without it, the call
        waits and returns the two sizes.
    stream : stream, optional
        {device_stream}
    temp_storage : device array, optional
        {device_temp_storage}

    Returns
    -------
    tuple of two ints, or None
        The sizes of the first and the second part (the call waits for the GPU to read
        them), or ``None`` with ``d_num_selected_out``.

    Notes
    -----
    One launch of ``coop.device.select``'s kernel, counting both parts at once (in the
    low and high 32 bits of one 64-bit sum, hence fewer than 2^31 items) and writing
    each tile's three parts from shared memory, coalesced.

    Example
    -------
    Small, medium and large values, each in input order::

        import numpy as np
        import coop
        from numba import cuda

        x = np.random.default_rng(12).integers(0, 100, 5000).astype(np.int32)
        d_small, d_medium, d_large = (cuda.device_array_like(x) for _ in range(3))
        small, medium = coop.device.three_way_partition(cuda.to_device(x), d_small, d_medium, d_large,
                                                        lambda v: v < 10, lambda v: v < 50)
        assert (d_small.copy_to_host()[:small] == x[x < 10]).all()
        assert (d_medium.copy_to_host()[:medium] == x[(x >= 10) & (x < 50)]).all()
        assert (d_large.copy_to_host()[:x.size - small - medium] == x[x >= 50]).all()
    """
    function = "three_way_partition"
    names = ("d_first_part_out", "d_second_part_out", "d_unselected_out")
    d_in = device_array(function, "d_in", d_in)
    outs = tuple(device_array(function, name, out)
                 for name, out in zip(names, (d_first_part_out, d_second_part_out, d_unselected_out)))
    n = d_in.size
    if n >= 2**31:
        raise ArgumentValueError(f"coop.device.{function}: d_in has {n:,} items; it takes fewer than 2^31 (both "
                                 "parts are counted in one 64-bit sum)")
    for i, (name, out) in enumerate(zip(names, outs)):
        if out.dtype != d_in.dtype:
            raise ArgumentTypeError(f"coop.device.{function}: {name}'s dtype {out.dtype} differs from d_in's "
                                    f"{d_in.dtype} (the items are copied as they are)")
        for other_name, other in ((("d_in", d_in),) + tuple(zip(names, outs))[:i]):
            if is_same_memory(function, name, out, other_name, other):
                raise ArgumentValueError(f"coop.device.{function}: {name} is {other_name} (give each part, and "
                                         "the input, an array of its own)")
    first = device_operator(function, "select_first_part_op", select_first_part_op, arity=1)
    second = device_operator(function, "select_second_part_op", select_second_part_op, arity=1)
    if d_num_selected_out is not None:
        counts = device_array(function, "d_num_selected_out", d_num_selected_out)
        check_length(function, "d_num_selected_out", counts, 2)
        if counts.dtype.kind not in "iu" or counts.dtype.itemsize < 4:
            raise ArgumentTypeError(f"coop.device.{function}: d_num_selected_out must be of an integer dtype of at "
                                    f"least 32 bits, got {counts.dtype}")
    stream = launch_stream(stream, waits_without="d_num_selected_out" if d_num_selected_out is None else None)
    if d_num_selected_out is None:
        counts = temporary(f"{function}.counts", 2, np.int64, stream)
    if n:
        kernel, tile_size = _select_kernel(first, d_in.dtype, None, np.uint64, False, second=second)
        tiles = -(-n // tile_size)
        states = TileStates(tiles, np.uint64, stream)
        launch(kernel, tiles, THREADS, stream, d_in, d_in, outs, counts, counts, n, *states.arrays, states.epoch)
    else:
        fill_zero(counts, 2, stream)
    if d_num_selected_out is None:
        host = copied_to_host(counts, stream)
        return int(host[0]), int(host[min(1, host.size - 1)])  # (sizing's stand-in has one item: unused)
