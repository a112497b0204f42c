"""Block-wide prefix scans (CUB's BlockScan).

Every thread of the block calls the scan with its value, or with an items array holding
its items in blocked arrangement (thread of rank ``r`` holds items ``r*N .. r*N+N-1`` of
the tile). Block shapes may be 1-, 2- or 3-D with 1 to 1024 threads.

- One value per thread: the thread's scan result is returned;
  ``return_aggregate=True`` returns ``(result, block_aggregate)``.
- Items arrays: the scan is written to ``output`` (which may be the input) and the
  block aggregate is returned.

The block aggregate (every thread gets it) is the reduction of all inputs of the block,
not including ``initial`` or the callback's prefix. Exclusive scans give thread 0 (its
first item) ``initial``; without ``initial`` or ``prefix_op`` that one result is
unspecified (as in CUB), except for sums, where it is 0.

``prefix_op`` is CUB's BlockPrefixCallbackOp, for running scans over many tiles: a device
function ``prefix_op(prefix_state, block_aggregate) -> prefix`` called by each thread of
the first warp once the block aggregate is known; thread 0's result is the prefix of the
whole tile (combined before every thread's result), and ``prefix_state`` (any array, e.g.
``cuda.local.array(1, dtype)``) is where it keeps its running total (a complete example
is in ``coop.block.inclusive_sum``'s docstring).

``threads`` (optional compile-time constant) is the block size; it sizes the scratch
exactly and lets loops unroll. ``algorithm``: ``"raking"`` (default), ``"raking_memoize"``
or ``"warp_scans"``, CUB's BlockScanAlgorithm. All combine values in rank order:
operators need to be associative only. Each call synchronises the block itself and
leaves no barrier to the caller. ``temp_storage`` shares one scratch array between
primitives (a complete example is in the ``coop.block.reduce`` module's docstring).
Each function's docstring details its parameters and has a complete example.
"""

import numpy as np

from coop._core.algorithm import Algorithm, choose
from coop._core.backend import cuda
from coop._core.constants import specialised, without_dead_branches
from coop._core.misuse import size_check
from coop._core.scratch import (
    MAX_BLOCK_THREADS,
    Region,
    Struct,
    block_rank_of,
    loader,
    local_allocator,
    raking_slot,
    storage,
    store,
    thread_count,
)
from coop._core.shuffle import FULL_MASK, IDX, UP, shuffler
from coop._core.specialize import PRIMITIVE_DEFAULT, Signature, device_function, function_type, is_none, primitive
from coop._core.values import chosen, converter, joined, same
from coop.ops import add
from coop.thread import (
    exclusive_scan_items,
    exclusive_scan_items_unseeded,
    inclusive_scan_items,
    inclusive_scan_items_with_prefix,
    reduce_items,
)
from coop.warp.scan import exclusive_from_inclusive, inclusive_scan_lanes

__all__ = ["inclusive_scan", "exclusive_scan", "inclusive_sum", "exclusive_sum"]

# what other families compose (the building-block tier: tests/test_layering.py)
BUILDING_BLOCKS = ["exclusive_sum_in_scratch"]


# -- algorithms: each thread's partial -> (exclusive prefix, block aggregate) -------------
# The exclusive prefix of rank 0 is unspecified. ``threads`` is the block size,
# ``block_rank`` the reader of the thread's rank (``coop._core.scratch.block_rank_of``).


@device_function
def scan_warp_scans(x, op, convert, up, idx, buffer, load, threads, cache, lead_barrier, block_rank):
    """CUB's BLOCK_SCAN_WARP_SCANS. ``lead_barrier``: wait first for the previous
    call's reads of the scratch (False: the caller synchronised the block since)."""
    rank = block_rank()
    # (32-bit: in 64 bits each of the warp-prefix selects below costs two compares, and
    # their predicates outlive a radix sort's pass)
    warp = np.int32(rank >> 5)
    lane = np.int32(rank & 31)
    inclusive = inclusive_scan_lanes(x, op, convert, FULL_MASK, 32)
    if lead_barrier:
        cuda.syncthreads()
    if lane == (31 if threads % 32 == 0 else min(31, threads - 1 - warp * 32)):
        store(buffer, warp, inclusive)
    cuda.syncthreads()
    aggregate = load(buffer, 0)
    warp_prefix = aggregate
    for w in range(1, (threads + 31) >> 5):
        if np.int32(w) == warp:
            warp_prefix = aggregate
        aggregate = convert(op(aggregate, load(buffer, w)))
    exclusive = exclusive_from_inclusive(inclusive, x, op, convert, up, FULL_MASK)
    # (chosen, not assigned in branches: numba-cuda-mlir kept the prefix in local memory
    # where op branches itself, coop.ops.min or max)
    seeded = chosen(warp > 0, convert(op(warp_prefix, exclusive)), exclusive)
    exclusive = chosen(lane == 0, warp_prefix, seeded)
    return exclusive, aggregate


@device_function
def scan_raking(x, op, convert, up, idx, buffer, load, threads, cache, memoized, block_rank):
    """CUB's BLOCK_SCAN_RAKING (``memoized`` False, ``cache`` None) and
    BLOCK_SCAN_RAKING_MEMOIZE (``memoized`` True, ``cache`` a thread-private buffer of one
    segment, ``coop._core.scratch.local_allocator``): partials to shared memory; the first warp reduces
    consecutive segments (upsweep), scans the segment totals with shuffles, and rescans
    its segments seeded with their prefixes, writing each thread's exclusive prefix back
    (downsweep)."""
    rank = block_rank()
    lane = rank & 31
    if threads <= 32:
        inclusive = inclusive_scan_lanes(x, op, convert, FULL_MASK, 32)
        return exclusive_from_inclusive(inclusive, x, op, convert, up, FULL_MASK), idx(FULL_MASK, inclusive, threads - 1)
    segment = (threads + 31) >> 5
    aggregate_slot = threads + 32  # past the padded grid
    # No barrier first: a previous call's last reads were each thread's own slot (its
    # own writes now) and the aggregate slot (written only after the next barrier).
    store(buffer, raking_slot(rank, segment), x)
    cuda.syncthreads()
    if rank < 32:
        first = lane * segment
        # (a segment's slots are consecutive: at base + i, offsets from one address, which
        # the compiler sees apart where the downsweep stores between its loads)
        base = raking_slot(first, segment)
        partial = x
        if first < threads:
            partial = load(buffer, base)
            if memoized:
                store(cache, 0, partial)
            for i in range(1, segment):
                if first + i < threads:
                    item = load(buffer, base + i)
                    if memoized:
                        store(cache, i, item)
                    partial = convert(op(partial, item))
                partial = joined(partial)
        rakers = (threads + segment - 1) // segment
        inclusive = inclusive_scan_lanes(partial, op, convert, FULL_MASK, 32)
        running = exclusive_from_inclusive(inclusive, partial, op, convert, up, FULL_MASK)
        if first < threads:
            for i in range(segment):
                if first + i < threads:
                    slot = base + i
                    item = load(cache, i) if memoized else load(buffer, slot)
                    if lane > 0 or i > 0:
                        store(buffer, slot, running)
                    # (rank 0 starts from its item alone; chosen, not assigned in both arms:
                    # numba-cuda-mlir kept running in local memory for coop.ops.min or max
                    # where the block is not whole warps)
                    running = chosen(lane > 0 or i > 0, convert(op(running, item)), item)
                running = joined(running)
        # (after the downsweep: a store before it, to a slot the compiler cannot tell
        # from the segment's, would make it read the segment again)
        if lane == rakers - 1:
            store(buffer, aggregate_slot, inclusive)
    cuda.syncthreads()
    return load(buffer, raking_slot(rank, segment)), load(buffer, aggregate_slot)


# Scratch layouts, each ending with a slot for the prefix callback's broadcast.


def raking_scratch(dtype, threads):
    # (scan_raking finds the aggregate at threads + 32, just past the padded grid)
    return Struct(
        "block_scan.raking",
        Region("grid", dtype, threads + 32),
        Region("aggregate", dtype, 1),
        Region("prefix", dtype, 1),
    )


def warp_scans_scratch(dtype, threads):
    return Struct(
        "block_scan.warp_scans",
        Region("warp_aggregates", dtype, (threads + 31) // 32),
        Region("prefix", dtype, 1),
    )


# memoized: the raking threads keep their segment in registers between the upsweep and the
# downsweep (CUB's BLOCK_SCAN_RAKING_MEMOIZE)
ALGORITHMS = {
    "raking": Algorithm(scan_raking, raking_scratch, constants={"memoized": False}),
    "raking_memoize": Algorithm(scan_raking, raking_scratch, constants={"memoized": True}),
    "warp_scans": Algorithm(scan_warp_scans, warp_scans_scratch, constants={"lead_barrier": True}),
}


def exclusive_sum_in_scratch(dtype, threads, shape=None):
    """A building block for primitives that keep a block scan's scratch in a layout of
    their own: ``(layout, exclusive_sum)``, where ``exclusive_sum(x, buffer) ->
    (exclusive, aggregate)`` sums one ``dtype`` value per thread over a block of
    ``threads`` (of the constant shape ``shape``, ``Signature.block_shape``, where
    known; rank 0's exclusive sum is 0), CUB's BLOCK_SCAN_WARP_SCANS, through
    ``layout`` placed at the start of ``buffer``. It needs the block synchronised
    before it (the caller's last access to ``layout``'s memory is over) and leaves no
    barrier to the caller after it."""
    layout = warp_scans_scratch(dtype, threads)
    convert = converter(dtype)
    block_rank = block_rank_of(shape)
    scan_block = specialised(scan_warp_scans, op=add, convert=convert, up=shuffler(UP, 32), idx=shuffler(IDX, 32),
                             load=loader(dtype), threads=threads, cache=None, lead_barrier=False,
                             block_rank=block_rank)

    def exclusive_sum(x, buffer):
        # (converted first: a wider value would be stored wider than its slots)
        exclusive, aggregate = scan_block(convert(x), buffer)
        if block_rank() == 0:
            exclusive = convert(0)
        return exclusive, aggregate

    return layout, device_function(exclusive_sum)


def temp_storage_bytes(sig, value_type, threads, algorithm=PRIMITIVE_DEFAULT):
    """Bytes a ``temp_storage=`` array needs for this scan of ``dtype`` values in blocks
    of ``threads``: size ``cuda.shared.array(BYTES, np.uint8, alignment=8)`` with it (or
    with the largest of several primitives', to share one array)."""
    threads = sig.block_threads(threads)
    _, chosen = choose(sig, algorithm, ALGORITHMS)
    return chosen.temp_storage_bytes(value_type, threads)


@device_function
def callback_prefix(aggregate, convert, prefix_op, prefix_state, buffer, load, slot, block_rank):
    """The block prefix given by the caller's callback: the first warp calls it, thread
    0's result is broadcast."""
    rank = block_rank()
    if rank < 32:
        block_prefix = convert(prefix_op(prefix_state, aggregate))
        if rank == 0:
            store(buffer, slot, block_prefix)
    cuda.syncthreads()
    return load(buffer, slot)


def _specialise_scan(sig, value, op, initial, output, prefix_op, prefix_state, threads, algorithm,
                     return_aggregate, temp_storage, exclusive):
    dtype, is_items, with_aggregate = sig.scan_input(value, output, return_aggregate)
    sig.operator(op, dtype)
    block = sig.block_threads(threads)
    block_rank = block_rank_of(sig.block_shape(threads))
    block_prefix = specialised(callback_prefix, block_rank=block_rank)
    algorithm, chosen = choose(sig, algorithm, ALGORITHMS)
    has_initial = not is_none(initial)
    if has_initial:
        sig.single_value(initial, "initial", dtype)
    has_callback = _check_callback(sig, prefix_op, prefix_state, dtype)
    if has_initial and has_callback:
        raise sig.error("prefix_op", "cannot be combined with initial: the callback gives the prefix")

    convert = converter(dtype)
    up, idx = shuffler(UP, 32), shuffler(IDX, 32)
    load = loader(dtype)
    max_threads = block or MAX_BLOCK_THREADS
    layout = chosen.layout(dtype, max_threads)
    prefix_slot = layout.slot("prefix")
    scratch, users_buffer = storage(sig, temp_storage, layout, owner=(sig.primitive, algorithm))
    check_output = size_check(sig.primitive, "output")
    count_threads = thread_count(block)
    seeded = has_initial or has_callback
    segment = (max_threads + 31) // 32
    memoize = chosen.constants.get("memoized", False) and block is not None and block > 32
    allocate_cache = local_allocator(dtype, segment) if memoize else None
    returns_pair = with_aggregate and not is_items
    # the algorithm with these constants bound (and the block size, if given)
    known = block is not None
    constants = dict(convert=convert, up=up, idx=idx, load=load, block_rank=block_rank,
                     **({} if memoize else {"cache": None}), **chosen.constants)
    if "memoized" in constants:
        # (the cache needs a known block of more than a warp; a constant, not `cache is not
        # None`, which numba-cuda-mlir cannot lower for an array)
        constants["memoized"] = memoize
    scan_block = specialised(chosen.function, **constants, **({"threads": block} if known else {}))

    # One function per specialisation: the variant (items or one value, inclusive or
    # exclusive, the seed, memoize) is chosen by the constants above, and Numba prunes
    # the branches not taken before typing: each variant compiles only its own code.
    def scan(value, output, op, initial, prefix_op, prefix_state, temp_storage):
        if is_items:
            check_output(output, len(value))
        buffer = scratch(temp_storage)
        if users_buffer:
            cuda.syncthreads()  # other primitives may still be reading the caller's buffer
        if is_items:
            partial = reduce_items(value, op, convert)
        else:
            partial = value
        if memoize:  # (only with a known block size)
            exclusive_prefix, aggregate = scan_block(partial, op, buffer, allocate_cache())
        elif known:
            exclusive_prefix, aggregate = scan_block(partial, op, buffer)
        else:
            exclusive_prefix, aggregate = scan_block(partial, op, buffer, count_threads())
        # this thread's prefix: the seed (initial, or the callback's block prefix) folded
        # into its exclusive prefix; rank 0's is the seed, or nothing if unseeded
        if has_callback:
            seed = block_prefix(aggregate, convert, prefix_op, prefix_state, buffer, load, prefix_slot)
        elif has_initial:
            seed = convert(initial)  # (rank 0's result: in the value's type, as the others')
        else:
            seed = initial
        rank = block_rank()
        if seeded:
            if rank == 0:
                prefix = seed
            else:
                prefix = convert(op(seed, exclusive_prefix))
            has_prefix = True  # a constant: the branches on it are pruned too
        else:
            prefix = exclusive_prefix
            has_prefix = rank != 0
        # the results
        if is_items:
            if exclusive:
                if has_prefix:
                    exclusive_scan_items(value, output, op, convert, prefix)
                else:  # rank 0 of an unseeded scan
                    exclusive_scan_items_unseeded(value, output, op, convert)
            elif has_prefix:
                inclusive_scan_items_with_prefix(value, output, op, convert, prefix)
            else:
                inclusive_scan_items(value, output, op, convert)
            return aggregate
        if exclusive:
            result = prefix
        elif has_prefix:
            result = convert(op(prefix, value))
        else:
            result = value
        if returns_pair:
            return result, aggregate
        return result

    return device_function(without_dead_branches(scan))


@primitive("coop.block.inclusive_scan", temp_storage_bytes, group="block", uniform=("initial",))
def inclusive_scan(value, op, output=None, prefix_op=None, prefix_state=None, threads=None,
                   algorithm="raking", return_aggregate=False, temp_storage=None, initial=None):
    """Inclusive prefix scan over the block with ``op`` (CUB BlockScan::InclusiveScan):
    thread ``r`` (item ``k`` of the tile) gets ``op`` over inputs 0..r (items 0..k),
    after ``initial`` or the callback's prefix if either is given.

    Parameters
    ----------
    value : value or items array
        {block_value}
        {value_types}
    op : operator
        {op}
    output : items array, optional
        {scan_output}
    prefix_op : function, optional
        {prefix_op}
    prefix_state : array, optional
        {prefix_state}
    threads : int or tuple of int, compile-time constant, optional
        {threads}
        {threads_optional}
    algorithm : str, compile-time constant, default "raking"
        {block_scan_algorithm}
    return_aggregate : bool, compile-time constant, default False
        {return_aggregate}
    temp_storage : shared array, optional
        {temp_storage}
        {temp_storage_size} The same for the four block scans.
    initial : value, run time, optional
        A seed (CUB's ``initial_value``, keyword only here: the parameters before it
        keep their positions), converted to the value's type and combined before every
        result: thread 0's (its first item's) is ``op(initial, value)``. The same in
        every thread; not with ``prefix_op``; not in the aggregate. Default None: no
        seed.

    Returns
    -------
    value, tuple or aggregate
        {block_scan_returns}

    Barriers
    --------
    {block_barriers}

    {block_scan_barriers}

    Notes
    -----
    {collective}

    Example
    -------
    Running maximum over each block, and the block's maximum::

        import numpy as np
        import coop
        from numba import cuda

        @cuda.jit
        def running_max(x, out, block_max):
            i = cuda.grid(1)
            scan, total = coop.block.inclusive_scan(x[i], coop.ops.max, return_aggregate=True)
            out[i] = scan
            if cuda.threadIdx.x == 0:
                block_max[cuda.blockIdx.x] = total

        x = np.random.default_rng(24).integers(-100, 100, 128).astype(np.int32)
        out, block_max = np.zeros_like(x), np.zeros(2, np.int32)
        running_max[2, 64](x, out, block_max)
        tiles = x.reshape(2, 64)
        assert (out == np.maximum.accumulate(tiles, axis=1).ravel()).all()
        assert (block_max == tiles.max(axis=1)).all()
    """
    scan = _specialise_scan(
        Signature("coop.block.inclusive_scan"), value, op, initial, output, prefix_op, prefix_state, threads,
        algorithm, return_aggregate, temp_storage, False,
    )

    def impl(value, op, output, prefix_op, prefix_state, temp_storage, initial):
        return scan(value, output, op, initial, prefix_op, prefix_state, temp_storage)

    return impl


@primitive("coop.block.exclusive_scan", temp_storage_bytes, group="block", uniform=("initial",))
def exclusive_scan(value, op, initial=None, output=None, prefix_op=None, prefix_state=None,
                   threads=None, algorithm="raking", return_aggregate=False, temp_storage=None):
    """Exclusive prefix scan over the block with ``op`` (CUB BlockScan::ExclusiveScan):
    thread ``r`` (item ``k``) gets ``op`` over ``initial`` (or the callback's prefix) and
    the inputs before it; thread 0 (item 0) gets ``initial``.

    Parameters
    ----------
    value : value or items array
        {block_value}
        {value_types}
    op : operator
        {op}
    initial : value, run time, optional
        The seed, converted to the value's type: thread 0 (its first item) gets it, and
        it is combined before every other result. Not with ``prefix_op``. Default
        None: thread 0's result (its first item's) is unspecified, as in CUB, unless
        ``prefix_op`` gives it.
    output : items array, optional
        {scan_output}
    prefix_op : function, optional
        {prefix_op}
    prefix_state : array, optional
        {prefix_state}
    threads : int or tuple of int, compile-time constant, optional
        {threads}
        {threads_optional}
    algorithm : str, compile-time constant, default "raking"
        {block_scan_algorithm}
    return_aggregate : bool, compile-time constant, default False
        {return_aggregate}
    temp_storage : shared array, optional
        {temp_storage}
        {temp_storage_size} The same for the four block scans.

    Returns
    -------
    value, tuple or aggregate
        {block_scan_returns}

    Barriers
    --------
    {block_barriers}

    {block_scan_barriers}

    Notes
    -----
    {collective}

    Example
    -------
    Each block's tile of 256 items (4 per thread, blocked) scanned in place from 100,
    with the ``"warp_scans"`` algorithm, and the tile's total::

        import operator
        import numpy as np
        import coop
        from numba import cuda

        THREADS, ITEMS = 64, 4

        @cuda.jit
        def scan_tiles(x, out, totals):
            base = cuda.blockIdx.x * THREADS * ITEMS
            items = cuda.local.array(ITEMS, np.int32)
            coop.block.load(x[base:], items)
            total = coop.block.exclusive_scan(items, operator.add, 100, items,
                                              threads=THREADS, algorithm="warp_scans")
            coop.block.store(out[base:], items)
            if cuda.threadIdx.x == 0:
                totals[cuda.blockIdx.x] = total

        x = np.random.default_rng(25).integers(-100, 100, 2 * THREADS * ITEMS).astype(np.int32)
        out, totals = np.zeros_like(x), np.zeros(2, np.int32)
        scan_tiles[2, THREADS](x, out, totals)
        tiles = x.reshape(2, THREADS * ITEMS)
        assert (out.reshape(tiles.shape) == 100 + np.cumsum(tiles, axis=1) - tiles).all()
        assert (totals == tiles.sum(axis=1)).all()
    """
    scan = _specialise_scan(
        Signature("coop.block.exclusive_scan"), value, op, initial, output, prefix_op, prefix_state, threads,
        algorithm, return_aggregate, temp_storage, True,
    )

    def impl(value, op, initial, output, prefix_op, prefix_state, temp_storage):
        return scan(value, output, op, initial, prefix_op, prefix_state, temp_storage)

    return impl


def _check_callback(sig, prefix_op, prefix_state, dtype):
    """Whether a prefix callback is given, after checking it and its state."""
    if is_none(prefix_op):
        if not is_none(prefix_state):
            raise sig.error("prefix_state", "is only used with prefix_op")
        return False
    if is_none(prefix_state):
        raise sig.error("prefix_state", "is required with prefix_op (the callback's running state)")
    sig.operator(prefix_op, dtype, param="prefix_op", arg_types=(prefix_state, dtype))
    return True


def _summand(sig, value):
    """(value type scanned, conversion of the value to it): bools are counted as int32."""
    dtype, _, counted = sig.sum_input(value, count_items=False)
    return (dtype, converter(dtype)) if counted else (value, same)


@primitive("coop.block.inclusive_sum", temp_storage_bytes, group="block")
def inclusive_sum(value, output=None, prefix_op=None, prefix_state=None, threads=None,
                  algorithm="raking", return_aggregate=False, temp_storage=None):
    """Inclusive prefix sum over the block (CUB BlockScan::InclusiveSum): thread ``r``
    (item ``k`` of the tile) gets the sum of inputs 0..r (items 0..k), plus the
    callback's prefix if ``prefix_op`` is given.

    Parameters
    ----------
    value : number or items array
        {block_value}
        {scan_sum_types}
    output : items array, optional
        {scan_output}
    prefix_op : function, optional
        {prefix_op}
    prefix_state : array, optional
        {prefix_state}
    threads : int or tuple of int, compile-time constant, optional
        {threads}
        {threads_optional}
    algorithm : str, compile-time constant, default "raking"
        {block_scan_algorithm}
    return_aggregate : bool, compile-time constant, default False
        {return_aggregate}
    temp_storage : shared array, optional
        {temp_storage}
        {temp_storage_size} The same for the four block scans.

    Returns
    -------
    value, tuple or aggregate
        {block_scan_returns}

    Barriers
    --------
    {block_barriers}

    {block_scan_barriers}

    Notes
    -----
    {collective}

    Example
    -------
    A running sum over a whole array, one block looping over its tiles: the prefix
    callback carries each tile's total into the next::

        import numpy as np
        import coop
        from numba import cuda

        THREADS, ITEMS, TILES = 64, 2, 4

        @cuda.jit(device=True)
        def running_total(state, block_aggregate):
            prefix = state[0]
            state[0] += block_aggregate
            return prefix

        @cuda.jit
        def cumsum(x, out):
            state = cuda.local.array(1, np.int64)
            state[0] = 0
            items = cuda.local.array(ITEMS, np.int64)
            for tile in range(TILES):
                base = tile * THREADS * ITEMS
                coop.block.load(x[base:], items)
                coop.block.inclusive_sum(items, items, prefix_op=running_total,
                                         prefix_state=state, threads=THREADS)
                coop.block.store(out[base:], items)

        x = np.random.default_rng(26).integers(-100, 100, TILES * THREADS * ITEMS)
        out = np.zeros_like(x)
        cumsum[1, THREADS](x, out)
        assert (out == np.cumsum(x)).all()
    """
    sig = Signature("coop.block.inclusive_sum")
    summed, widen = _summand(sig, value)
    scan = _specialise_scan(
        sig, summed, function_type(add), None, output, prefix_op, prefix_state, threads, algorithm,
        return_aggregate, temp_storage, False,
    )

    def impl(value, output, prefix_op, prefix_state, temp_storage):
        return scan(widen(value), output, add, None, prefix_op, prefix_state, temp_storage)

    return impl


@device_function
def no_initial(zero):
    return None


@primitive("coop.block.exclusive_sum", temp_storage_bytes, group="block")
def exclusive_sum(value, output=None, prefix_op=None, prefix_state=None, threads=None,
                  algorithm="raking", return_aggregate=False, temp_storage=None):
    """Exclusive prefix sum over the block (CUB BlockScan::ExclusiveSum): thread ``r``
    (item ``k`` of the tile) gets the sum of inputs 0..r-1 (items 0..k-1); thread 0
    (item 0) gets 0, or the callback's prefix if ``prefix_op`` is given.

    Parameters
    ----------
    value : number or items array
        {block_value}
        {scan_sum_types}
    output : items array, optional
        {scan_output}
    prefix_op : function, optional
        {prefix_op}
    prefix_state : array, optional
        {prefix_state}
    threads : int or tuple of int, compile-time constant, optional
        {threads}
        {threads_optional}
    algorithm : str, compile-time constant, default "raking"
        {block_scan_algorithm}
    return_aggregate : bool, compile-time constant, default False
        {return_aggregate}
    temp_storage : shared array, optional
        {temp_storage}
        {temp_storage_size} The same for the four block scans.

    Returns
    -------
    value, tuple or aggregate
        {block_scan_returns}

    Barriers
    --------
    {block_barriers}

    {block_scan_barriers}

    Notes
    -----
    {collective}

    Example
    -------
    Stream compaction: each block's positive values, in order, to the front of its part
    of ``out``, and how many there are::

        import numpy as np
        import coop
        from numba import cuda

        @cuda.jit
        def compact(x, out, counts):
            i = cuda.grid(1)
            keep = np.int32(x[i] > 0)
            offset, count = coop.block.exclusive_sum(keep, return_aggregate=True)
            if keep:
                out[cuda.blockIdx.x * 64 + offset] = x[i]
            if cuda.threadIdx.x == 0:
                counts[cuda.blockIdx.x] = count

        x = np.random.default_rng(27).integers(-100, 100, 128).astype(np.int32)
        out, counts = np.zeros_like(x), np.zeros(2, np.int32)
        compact[2, 64](x, out, counts)
        for b, tile in enumerate(x.reshape(2, 64)):
            kept = tile[tile > 0]
            assert counts[b] == len(kept) and (out[64 * b : 64 * b + len(kept)] == kept).all()
    """
    sig = Signature("coop.block.exclusive_sum")
    summed, widen = _summand(sig, value)
    dtype, _ = sig.value_or_items(summed, "value")
    # 0 seeds the scan, unless the callback gives the prefix
    initial, initial_type = (no_initial, None) if not is_none(prefix_op) else (converter(dtype), dtype)
    scan = _specialise_scan(
        sig, summed, function_type(add), initial_type, output, prefix_op, prefix_state, threads, algorithm,
        return_aggregate, temp_storage, True,
    )

    def impl(value, output, prefix_op, prefix_state, temp_storage):
        return scan(widen(value), output, add, initial(0), prefix_op, prefix_state, temp_storage)

    return impl
