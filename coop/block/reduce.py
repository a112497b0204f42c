"""Block-wide reductions (CUB's BlockReduce).

Every thread of the block calls the primitive with its value, or with an items array
holding its items in blocked arrangement (thread ``r`` of linear rank ``r`` holds items
``r*N .. r*N+N-1`` of the block's tile). Block shapes may be 1-, 2- or 3-D with 1 to 1024
threads, not only multiples of 32.

- ``reduce`` / ``sum``: the aggregate is returned to thread 0 (rank 0); other threads
  get unspecified partials (as in CUB).
- ``all_reduce`` / ``all_sum``: every thread gets the aggregate.

All take ``valid_items=`` (a partial tile), ``threads=`` (a compile-time block size that
sizes the scratch exactly), ``algorithm=`` (``"warp_reductions"``, ``"raking"``,
``"raking_commutative_only"``, CUB's BlockReduceAlgorithm) and ``temp_storage=``; each
call synchronises the block itself. Each function's docstring details them and has a
complete example.

``temp_storage`` shares one shared-memory allocation between primitives (CUB's
TempStorage unions), sized on the host with each primitive's ``temp_storage_bytes``.
Example (an exclusive sum and a maximum through one array)::

    import numpy as np
    import coop
    from numba import cuda

    THREADS = 64
    BYTES = max(coop.block.exclusive_sum.temp_storage_bytes(np.int32, THREADS),
                coop.block.reduce.temp_storage_bytes(np.int32, THREADS))

    @cuda.jit
    def offsets_and_max(x, offsets, top):
        temp = cuda.shared.array(BYTES, np.uint8, alignment=8)
        i = cuda.grid(1)
        offsets[i] = coop.block.exclusive_sum(x[i], threads=THREADS, temp_storage=temp)
        m = coop.block.reduce(x[i], coop.ops.max, threads=THREADS, temp_storage=temp)
        if cuda.threadIdx.x == 0:
            top[cuda.blockIdx.x] = m

    x = np.random.default_rng(19).integers(0, 100, 2 * THREADS).astype(np.int32)
    offsets, top = np.zeros_like(x), np.zeros(2, np.int32)
    offsets_and_max[2, THREADS](x, offsets, top)
    tiles = x.reshape(2, THREADS)
    assert (offsets.reshape(2, THREADS) == np.cumsum(tiles, axis=1) - tiles).all()
    assert (top == tiles.max(axis=1)).all()
"""

import functools

from numba.cuda import types

from coop._core.algorithm import Algorithm, choose
from coop._core.backend import cuda
from coop._core.constants import specialised, without_dead_branches
from coop._core.scratch import (
    MAX_BLOCK_THREADS,
    Region,
    Struct,
    block_rank_of,
    loader,
    raking_slot,
    storage,
    store,
    thread_count,
)
from coop._core.shuffle import DOWN, FULL_MASK, shuffler, warp_redux
from coop._core.specialize import PRIMITIVE_DEFAULT, Signature, device_function, function_type, primitive
from coop._core.values import chosen, converter, joined
from coop.ops import add, redux_kind
from coop.thread import counter, reduce_items
from coop.warp.reduce import reduce_to_first_lane, reduce_to_first_lane_partial, reduce_valid_items

__all__ = ["reduce", "sum", "all_reduce", "all_sum"]


# -- algorithms: each thread's partial and the number of contributing threads -> total --
# ``threads`` is the block size: a constant when the caller gave ``threads=``, so that
# the loops below unroll after inlining.


# How each warp reduces its threads' partials (lane 0 gets the warp's total); chosen
# when the primitive is specialised.


@device_function
def warp_partial(x, op, convert, down, lane, lanes_valid):
    """Shuffle-reduce a warp whose first ``lanes_valid`` lanes contribute. One path for
    full and partial warps (numba-cuda-mlir returned the result of two inlined loops
    through local memory): a full warp counts 64 lanes valid, which no lane + offset
    reaches, so that NVVM drops the tests where the count is a constant."""
    valid = chosen(lanes_valid >= 32, 64, lanes_valid)
    return reduce_to_first_lane_partial(x, op, convert, down, FULL_MASK, lane, 32, valid)


@device_function
def warp_full(x, op, convert, down, lane, lanes_valid):
    """Every warp is known to be full (constant block size, a multiple of 32, full tile)."""
    return reduce_to_first_lane(x, op, convert, down, FULL_MASK, 32)


@functools.lru_cache(maxsize=None)
def warp_redux_reducers(kind):
    """``(full, partial)`` warp reducers by one ``redux.sync`` of ``kind``
    (coop.ops.redux_kind) where the warp is full: integer sums, minima, maxima and
    bitwise operations."""
    warp_reduced = warp_redux(kind)

    @device_function
    def warp_partial_redux(x, op, convert, down, lane, lanes_valid):
        if lanes_valid >= 32:
            return warp_reduced(FULL_MASK, x)
        return reduce_to_first_lane_partial(x, op, convert, down, FULL_MASK, lane, 32, lanes_valid)

    @device_function
    def warp_full_redux(x, op, convert, down, lane, lanes_valid):
        return warp_reduced(FULL_MASK, x)

    return warp_full_redux, warp_partial_redux


def warp_reducer(op, dtype, full_warps):
    kind = redux_kind(op, dtype)
    if kind is not None:
        full, partial = warp_redux_reducers(kind)
        return full if full_warps else partial
    return warp_full if full_warps else warp_partial


# -- algorithms: each thread's partial and the number of contributing threads -> total --
# ``threads`` is the block size: a constant when the caller gave ``threads=``, so that
# the loops below unroll after inlining. ``lead_sync``: whether the call must first wait
# for the previous call's reads of the scratch (not needed after all_reduce, which ends
# with a barrier). ``block_rank``: the reader of the thread's rank (``block_rank_of``).


@device_function
def reduce_warp_reductions(x, op, convert, down, buffer, load, threads, contributing, warp_reduce, lead_sync,
                           block_rank):
    """CUB's BLOCK_REDUCE_WARP_REDUCTIONS: reductions within warps, then thread 0 folds
    the warp aggregates in order."""
    rank = block_rank()
    warp = rank >> 5
    lane = rank & 31
    total = warp_reduce(x, op, convert, down, lane, contributing - warp * 32)
    if lead_sync:
        cuda.syncthreads()
    if lane == 0:
        store(buffer, warp, total)
    cuda.syncthreads()
    if rank == 0:
        for w in range(1, (threads + 31) >> 5):
            if w * 32 < contributing:
                total = convert(op(total, load(buffer, w)))
            total = joined(total)
    return total


@device_function
def reduce_raking(x, op, convert, down, buffer, load, threads, contributing, warp_reduce, lead_sync, block_rank):
    """CUB's BLOCK_REDUCE_RAKING: every value to shared memory, the first warp rakes
    consecutive segments in rank order, then shuffle-reduces the raked partials."""
    rank = block_rank()
    lane = rank & 31
    # one return: where the block size is known only at run time, numba-cuda-mlir joins
    # two returned call results in local memory (a block of one warp has segments of 1)
    segment = (threads + 31) >> 5
    total = x
    if threads > 32:
        if lead_sync:
            cuda.syncthreads()
        store(buffer, raking_slot(rank, segment), x)
        cuda.syncthreads()
        if rank < 32:
            first = lane * segment
            base = raking_slot(first, segment)  # (a segment's slots are consecutive)
            if first < contributing:
                total = load(buffer, base)
                for i in range(1, segment):
                    if first + i < contributing:
                        total = convert(op(total, load(buffer, base + i)))
                    total = joined(total)
    if threads <= 32 or rank < 32:
        total = warp_partial(total, op, convert, down, lane, (contributing + segment - 1) // segment)
    return total


@device_function
def reduce_raking_commutative(x, op, convert, down, buffer, load, threads, contributing, warp_reduce, lead_sync,
                              block_rank):
    """CUB's BLOCK_REDUCE_RAKING_COMMUTATIVE_ONLY: threads past the first warp store,
    the first warp folds their values into its own (out of rank order), then
    shuffle-reduces."""
    rank = block_rank()
    lane = rank & 31
    # (one return, as in reduce_raking)
    total = x
    if threads > 32:
        segment = (threads - 32 + 31) >> 5
        if lead_sync:
            cuda.syncthreads()
        if rank >= 32:
            store(buffer, rank - 32, x)
        cuda.syncthreads()
        if rank < 32:
            first = 32 + lane * segment
            for i in range(segment):
                if first + i < contributing:
                    total = convert(op(total, load(buffer, first + i - 32)))
                total = joined(total)
    if threads <= 32 or rank < 32:
        total = warp_partial(total, op, convert, down, lane, min(contributing, 32))
    return total


# Scratch layouts, each ending with a slot to broadcast all_reduce's result.


def warp_reductions_scratch(dtype, threads):
    return Struct(
        "block_reduce.warp_reductions",
        Region("warp_totals", dtype, (threads + 31) // 32),
        Region("result", dtype, 1),
    )


def raking_scratch(dtype, threads):
    # a padded raking grid (the commutative algorithm uses threads - 32 slots of it)
    return Struct("block_reduce.raking", Region("grid", dtype, threads + 32), Region("result", dtype, 1))


# one_warp_by_shuffles: a block of one warp is reduced with shuffles alone, with no
# barrier before the result slot is written
ALGORITHMS = {
    "warp_reductions": Algorithm(reduce_warp_reductions, warp_reductions_scratch, one_warp_by_shuffles=False),
    "raking": Algorithm(reduce_raking, raking_scratch, one_warp_by_shuffles=True),
    "raking_commutative_only": Algorithm(reduce_raking_commutative, raking_scratch, one_warp_by_shuffles=True),
}


def temp_storage_bytes(sig, value_type, threads, algorithm=PRIMITIVE_DEFAULT):
    """Bytes a ``temp_storage=`` array needs for this reduction of ``dtype`` values in
    blocks of ``threads``: size ``cuda.shared.array(BYTES, np.uint8, alignment=8)``
    with it (or with the largest of several primitives', to share one array)."""
    threads = sig.block_threads(threads)
    _, chosen = choose(sig, algorithm, ALGORITHMS)
    return chosen.temp_storage_bytes(value_type, threads)


# -- specialisation ----------------------------------------------------------------------


def _specialise_reduce(sig, value, op, valid_items, threads, algorithm, temp_storage, to_all):
    """``reduction(value, op, valid_items, temp_storage)`` for the given argument types."""
    dtype, is_items = sig.value_or_items(value, "value")
    sig.operator(op, dtype)
    partial = sig.run_time_int(valid_items, "valid_items") is not None
    block = sig.block_threads(threads)
    block_rank = block_rank_of(sig.block_shape(threads))
    algorithm, chosen = choose(sig, algorithm, ALGORITHMS)
    convert = converter(dtype)
    down = shuffler(DOWN, 32)
    load = loader(dtype)
    layout = chosen.layout(dtype, block or MAX_BLOCK_THREADS)
    result_slot = layout.slot("result")
    scratch, users_buffer = storage(sig, temp_storage, layout, owner=(sig.primitive, algorithm))
    count_threads = thread_count(block)
    warp_reduce = warp_reducer(op, dtype, block is not None and block % 32 == 0 and not partial)
    # before writing, wait for the previous call's reads: all_reduce ends with a barrier
    # after which only its result slot is read, which no call writes first
    lead_sync = users_buffer or not to_all
    # a block of one warp reduced with shuffles alone passes no barrier before the result
    # slot is written: in the caller's buffer, wait for the primitive that used it before
    one_warp_sync = to_all and users_buffer and chosen.one_warp_by_shuffles
    # the algorithm with these constants bound (not the block size: bound, it makes NVVM
    # lay the raking reductions out differently)
    known = block is not None
    constants = dict(convert=convert, down=down, load=load, warp_reduce=warp_reduce, lead_sync=lead_sync,
                     block_rank=block_rank)
    reduce_block = specialised(chosen.function, **constants)

    # The variant is chosen by constants (Numba prunes the branches not taken before
    # typing), rather than by more device functions: each costs a compile.
    def reduction(value, op, valid_items, temp_storage):
        buffer = scratch(temp_storage)
        if known:
            n = block
        else:
            n = count_threads()
        # each thread's partial, and the number of threads contributing
        if is_items and partial:
            items = len(value)
            x = reduce_valid_items(value, op, convert, block_rank() * items, valid_items)
            contributing = min(n, (valid_items + items - 1) // items)
        elif is_items:
            x = reduce_items(value, op, convert)
            contributing = n
        elif partial:
            x = value
            contributing = min(n, valid_items)
        else:
            x = value
            contributing = n
        total = reduce_block(x, op, buffer, n, contributing)
        if to_all:
            if one_warp_sync and n <= 32:
                cuda.syncthreads()
            if block_rank() == 0:
                store(buffer, result_slot, total)
            cuda.syncthreads()
            total = load(buffer, result_slot)
        return total

    return device_function(without_dead_branches(reduction))


def _specialise_sum(sig, value, valid_items, threads, algorithm, temp_storage, to_all):
    """sum / all_sum: the reduction with ``coop.ops.add``, specialised under the sum's
    own name (so that its errors name it). Bools are counted: each thread's count
    (int32) is summed."""
    _, is_items, counted = sig.sum_input(value)
    if counted:
        count = counter(is_items, sig.run_time_int(valid_items, "valid_items") is not None)
        reduction = _specialise_reduce(
            sig, types.int32, function_type(add), None, threads, algorithm, temp_storage, to_all
        )
        block_rank = block_rank_of(sig.block_shape(threads))

        def impl(value, valid_items, temp_storage):
            return reduction(count(value, block_rank(), valid_items), add, None, temp_storage)

        return impl

    reduction = _specialise_reduce(
        sig, value, function_type(add), valid_items, threads, algorithm, temp_storage, to_all
    )

    def impl(value, valid_items, temp_storage):
        return reduction(value, add, valid_items, temp_storage)

    return impl


@primitive("coop.block.reduce", temp_storage_bytes, group="block", uniform=("valid_items",))
def reduce(value, op, valid_items=None, threads=None, algorithm="warp_reductions", temp_storage=None):
    """Reduce the values (or items arrays) of all threads of the block with ``op``; the
    aggregate goes to thread 0 (CUB BlockReduce::Reduce).

    Parameters
    ----------
    value : value or items array
        {block_value}
        {value_types}
    op : operator
        {op}
    valid_items : int, run time, optional
        {block_valid_items}
    threads : int or tuple of int, compile-time constant, optional
        {threads}
        {threads_optional}
    algorithm : str, compile-time constant, default "warp_reductions"
        {block_reduce_algorithm}
    temp_storage : shared array, optional
        {temp_storage}
        {temp_storage_size} The same for the four block reductions.

    Returns
    -------
    value
        In thread 0 (rank 0): ``op`` over the block's values (or items), of the
        value's type. Other threads get unspecified partials, as in CUB.

    Barriers
    --------
    {block_barriers}

    {block_reduce_barriers}

    Notes
    -----
    {collective}

    Example
    -------
    The index of each block's largest value (of equal values, the first), reducing
    ``(value, index)`` tuples::

        import numpy as np
        import coop
        from numba import cuda

        @cuda.jit
        def block_argmax(x, best):
            i = cuda.grid(1)
            value, index = coop.block.reduce((x[i], i), coop.ops.argmax)
            if cuda.threadIdx.x == 0:
                best[cuda.blockIdx.x] = index

        x = np.random.default_rng(20).integers(0, 20, 128).astype(np.int32)
        best = np.zeros(2, np.int64)
        block_argmax[2, 64](x, best)
        assert (best == x.reshape(2, 64).argmax(axis=1) + [0, 64]).all()
    """
    return _specialise_reduce(
        Signature("coop.block.reduce"), value, op, valid_items, threads, algorithm, temp_storage, False
    )


@primitive("coop.block.all_reduce", temp_storage_bytes, group="block", uniform=("valid_items",))
def all_reduce(value, op, valid_items=None, threads=None, algorithm="warp_reductions", temp_storage=None):
    """Reduce the values (or items arrays) of all threads of the block with ``op``; every
    thread gets the aggregate (CUB BlockReduce::Reduce, then a broadcast).

    Parameters
    ----------
    value : value or items array
        {block_value}
        {value_types}
    op : operator
        {op}
    valid_items : int, run time, optional
        {block_valid_items}
    threads : int or tuple of int, compile-time constant, optional
        {threads}
        {threads_optional}
    algorithm : str, compile-time constant, default "warp_reductions"
        {block_reduce_algorithm}
    temp_storage : shared array, optional
        {temp_storage}
        {temp_storage_size} The same for the four block reductions.

    Returns
    -------
    value
        In every thread of the block: ``op`` over the block's values (or items), of the
        value's type; the same in all threads.

    Barriers
    --------
    {block_barriers}

    {block_all_reduce_barriers}

    Notes
    -----
    {collective}

    Example
    -------
    Each value minus its block's minimum, with the raking algorithm::

        import numpy as np
        import coop
        from numba import cuda

        @cuda.jit
        def minus_min(x, out):
            i = cuda.grid(1)
            m = coop.block.all_reduce(x[i], lambda a, b: min(a, b), threads=64, algorithm="raking")
            out[i] = x[i] - m

        x = np.random.default_rng(21).integers(-100, 100, 128).astype(np.int32)
        out = np.zeros_like(x)
        minus_min[2, 64](x, out)
        tiles = x.reshape(2, 64)
        assert (out.reshape(2, 64) == tiles - tiles.min(axis=1, keepdims=True)).all()
    """
    return _specialise_reduce(
        Signature("coop.block.all_reduce"), value, op, valid_items, threads, algorithm, temp_storage, True
    )


@primitive("coop.block.sum", temp_storage_bytes, group="block", uniform=("valid_items",))
def sum(value, valid_items=None, threads=None, algorithm="warp_reductions", temp_storage=None):  # noqa: A001
    """Sum of the values (or items arrays) of the block, returned to thread 0
    (CUB BlockReduce::Sum).

    Parameters
    ----------
    value : number, bool or items array
        {block_value}
        {sum_types}
    valid_items : int, run time, optional
        {block_valid_items}
    threads : int or tuple of int, compile-time constant, optional
        {threads}
        {threads_optional}
    algorithm : str, compile-time constant, default "warp_reductions"
        {block_reduce_algorithm}
    temp_storage : shared array, optional
        {temp_storage}
        {temp_storage_size} The same for the four block reductions.

    Returns
    -------
    value
        In thread 0 (rank 0): the sum, of the value's type (integer sums wrap), int32
        for bools. Other threads get unspecified partials, as in CUB.

    Barriers
    --------
    {block_barriers}

    {block_reduce_barriers}

    Notes
    -----
    {collective}

    Example
    -------
    The sum of each 16 x 4 image, one 2-D block per image::

        import numpy as np
        import coop
        from numba import cuda

        @cuda.jit
        def image_sums(images, sums):
            x, y, b = cuda.threadIdx.x, cuda.threadIdx.y, cuda.blockIdx.x
            total = coop.block.sum(images[b, y, x])
            if x == 0 and y == 0:
                sums[b] = total

        images = np.random.default_rng(22).integers(0, 256, (2, 4, 16)).astype(np.int32)
        sums = np.zeros(2, np.int32)
        image_sums[2, (16, 4)](images, sums)
        assert (sums == images.sum(axis=(1, 2))).all()
    """
    return _specialise_sum(Signature("coop.block.sum"), value, valid_items, threads, algorithm, temp_storage, False)


@primitive("coop.block.all_sum", temp_storage_bytes, group="block", uniform=("valid_items",))
def all_sum(value, valid_items=None, threads=None, algorithm="warp_reductions", temp_storage=None):
    """Sum of the values (or items arrays) of the block, returned to every thread
    (CUB BlockReduce::Sum, then a broadcast).

    Parameters
    ----------
    value : number, bool or items array
        {block_value}
        {sum_types}
    valid_items : int, run time, optional
        {block_valid_items}
    threads : int or tuple of int, compile-time constant, optional
        {threads}
        {threads_optional}
    algorithm : str, compile-time constant, default "warp_reductions"
        {block_reduce_algorithm}
    temp_storage : shared array, optional
        {temp_storage}
        {temp_storage_size} The same for the four block reductions.

    Returns
    -------
    value
        In every thread of the block: the sum, of the value's type (integer sums wrap),
        int32 for bools; the same in all threads.

    Barriers
    --------
    {block_barriers}

    {block_all_reduce_barriers}

    Notes
    -----
    {collective}

    Example
    -------
    Block totals of a partial last tile: threads past ``n`` call with any value, which
    ``valid_items`` leaves out::

        import numpy as np
        import coop
        from numba import cuda

        @cuda.jit
        def block_totals(x, out, n):
            i = cuda.grid(1)
            total = coop.block.all_sum(x[min(i, n - 1)], valid_items=n - cuda.blockIdx.x * 64)
            if i < n:
                out[i] = total

        x = np.random.default_rng(23).integers(-100, 100, 100).astype(np.int32)
        out = np.zeros_like(x)
        block_totals[2, 64](x, out, len(x))
        assert (out[:64] == x[:64].sum()).all() and (out[64:] == x[64:].sum()).all()
    """
    return _specialise_sum(Signature("coop.block.all_sum"), value, valid_items, threads, algorithm, temp_storage, True)
