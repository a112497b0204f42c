"""Block-wide shuffles through shared memory (CUB's BlockShuffle): every thread gets a
value or items of another thread of the block, by linear rank (x fastest; 1-, 2- or
3-D blocks of 1 to 1024 threads, any size).

- ``offset(value, distance=1)``: thread ``r`` gets the value of thread ``r + distance``
  (``distance`` may be negative); threads for which that rank is outside the block get
  their own ``value`` back (CUB leaves their output unchanged).
- ``rotate(value, distance=1)``: thread ``r`` gets the value of thread
  ``(r + distance) mod T``, for ``-T < distance < T`` (``T`` threads; CUB takes
  ``0 <= distance < T``).
- ``up(items, output)``: the block's blocked items shift up by one item: ``output[i] =
  items[i-1]``, and ``output[0]`` is the last item of thread ``r - 1``; thread 0's
  ``output[0]`` is left unchanged. Returns the block's last item (the last item of
  thread ``T - 1``, CUB's ``block_suffix``) to every thread.
- ``down(items, output)``: shift down by one item: ``output[i] = items[i+1]``, and
  ``output[N-1]`` is the first item of thread ``r + 1``; thread ``T - 1``'s
  ``output[N-1]`` is left unchanged. Returns the block's first item (thread 0's
  ``items[0]``, CUB's ``block_prefix``) to every thread.

``output`` may be ``items``. Values and items may be of any supported type (tuples
too). ``threads`` (optional compile-time constant) sizes the shared scratch to one
value per thread; without it coop reads the block shape at run time and sizes scratch
for 1024 threads. ``temp_storage=`` shares a caller's scratch: size it with
``coop.block.shuffle.offset.temp_storage_bytes(dtype, threads)`` (the same for all four)
and pass the same ``threads=``.

Barriers: each call synchronises the block before writing its scratch (earlier reads of
it are done) and after (every value is written): consecutive calls need no
``cuda.syncthreads()``.
"""

from coop._core.backend import cuda
from coop._core.constants import without_dead_branches
from coop._core.misuse import output_check
from coop._core.scratch import MAX_BLOCK_THREADS, Region, Struct, block_rank_of, loader, storage, store, thread_count
from coop._core.specialize import Signature, device_function, primitive
from coop._core.values import check_dtype
from coop._core.namespace import public_namespace

__all__ = ["offset", "rotate", "up", "down"]

# what other families compose (the building-block tier: tests/test_layering.py)
BUILDING_BLOCKS = ["edge_layout", "edge_exchanger"]


def shuffle_layout(value_type, threads):
    """The scratch of a shuffle: one value per thread."""
    return Region("values", value_type, threads)


def temp_storage_bytes(sig, value_type, threads):
    """Bytes a ``temp_storage=`` array needs for shuffles of ``dtype`` values in blocks of
    ``threads``: one value per thread."""
    threads = sig.block_threads(threads)
    if threads is None:
        raise sig.error("threads", "is required to size temp_storage")
    return shuffle_layout(value_type, threads).nbytes


def _scratch(sig, value_type, threads, temp_storage, kind):
    """(buffer function, load function, thread-count function, rank function) for a
    shuffle."""
    block = sig.block_threads(threads)
    layout = shuffle_layout(value_type, block or MAX_BLOCK_THREADS)
    buffer, _ = storage(sig, temp_storage, layout, owner=(sig.primitive, kind))
    return buffer, loader(value_type), thread_count(block), block_rank_of(sig.block_shape(threads))


@device_function
def publish(buffer, rank, value):
    """Write this thread's value to its slot, once every thread is done with the scratch
    (a previous call may still be reading it), and wait until every slot is written."""
    cuda.syncthreads()
    store(buffer, rank, value)
    cuda.syncthreads()


def edge_layout(value_type, threads, predecessors, successors):
    """The scratch of an edge exchange (``edge_exchanger``): each thread's last item
    (``predecessors``) and first item (``successors``), in blocks of ``threads`` (None:
    sized for 1024)."""
    count = threads or MAX_BLOCK_THREADS
    regions = []
    if predecessors:
        regions.append(Region("last_items", value_type, count))
    if successors:
        regions.append(Region("first_items", value_type, count))
    return Struct("edges", *regions)


def edge_exchanger(value_type, threads, predecessors, successors):
    """``(layout, exchange)``: what CUB's BlockDiscontinuity and BlockAdjacentDifference
    share. ``exchange(buffer, rank, first, last) -> (before, after)``: ``before`` is the
    last item of thread ``rank - 1`` (``predecessors``), ``after`` the first item of
    thread ``rank + 1`` (``successors``); the first thread's ``before`` is its own
    ``last`` and the last thread's ``after`` its own ``first`` (no neighbour: the caller
    decides). It waits for the block before writing (a previous call may still read
    the buffer) and after."""
    layout = edge_layout(value_type, threads, predecessors, successors)
    last_slot = layout.slot("last_items") if predecessors else 0
    first_slot = layout.slot("first_items") if successors else 0
    load = loader(value_type)
    count_threads = thread_count(threads)

    def exchange(buffer, rank, first, last):
        cuda.syncthreads()
        if predecessors:
            store(buffer, last_slot + rank, last)
        if successors:
            store(buffer, first_slot + rank, first)
        cuda.syncthreads()
        before = last
        after = first
        if predecessors and rank > 0:
            before = load(buffer, last_slot + rank - 1)
        if successors and rank < count_threads() - 1:
            after = load(buffer, first_slot + rank + 1)
        return before, after

    return layout, device_function(without_dead_branches(exchange))


def _value_type(sig, value):
    from numba.cuda import types

    value_type = types.unliteral(value)
    if isinstance(value, types.Array):
        raise sig.error("value", "must be one value per thread (for items arrays use up or down)")
    check_dtype(value_type, sig, "value")
    return value_type


def _distance(sig, distance):
    if sig.run_time_int(distance, "distance") is None:
        raise sig.error("distance", "must be an integer, got None")


@primitive("coop.block.shuffle.offset", temp_storage_bytes, group="block", uniform=("distance",))
def offset(value, distance=1, threads=None, temp_storage=None):
    """The ``value`` of the thread ``distance`` ranks away (CUB BlockShuffle::Offset).

    Parameters
    ----------
    value : value
        The thread's value, a scalar or a tuple of scalars (not an items array).
    distance : int, run time, default 1
        The source is the thread of rank ``rank + distance``; it may be negative.
    threads : int or tuple of int, compile-time constant, optional
        {threads}
        {shuffle_threads}
    temp_storage : shared array, optional
        {temp_storage}
        {temp_storage_size} One value per thread (``threads`` is required there), the same
        for the four shuffles.

    Returns
    -------
    value
        The ``value`` of the thread of rank ``rank + distance``; a thread for which that
        rank is outside the block gets its own ``value`` back (CUB leaves its output
        unchanged).

    Barriers
    --------
    {block_barriers}

    {block_shuffle_barriers}

    Notes
    -----
    {collective}

    Example
    -------
    Differences with the right-hand neighbour (the last thread gets 0)::

        import numpy as np
        import coop
        from numba import cuda

        @cuda.jit
        def differences(x, out):
            i = cuda.grid(1)
            right = coop.block.shuffle.offset(x[i], 1, threads=128)
            out[i] = right - x[i]

        x = np.arange(128, dtype=np.int32) ** 2
        out = np.zeros_like(x)
        differences[1, 128](x, out)
        assert (out[:-1] == np.diff(x)).all() and out[-1] == 0
    """
    sig = Signature("coop.block.shuffle.offset")
    value_type = _value_type(sig, value)
    _distance(sig, distance)
    scratch, load, count_threads, block_rank = _scratch(sig, value_type, threads, temp_storage, "values")

    def impl(value, distance, temp_storage):
        buffer = scratch(temp_storage)
        rank = block_rank()
        publish(buffer, rank, value)
        source = rank + distance
        if source >= 0 and source < count_threads():
            return load(buffer, source)
        return value

    return impl


@primitive("coop.block.shuffle.rotate", temp_storage_bytes, group="block", uniform=("distance",))
def rotate(value, distance=1, threads=None, temp_storage=None):
    """The ``value`` of the thread ``distance`` ranks away, wrapping around the block
    (CUB BlockShuffle::Rotate).

    Parameters
    ----------
    value : value
        The thread's value, a scalar or a tuple of scalars (not an items array).
    distance : int, run time, default 1
        The source is the thread of rank ``(rank + distance) mod T`` (``T`` threads), for
        ``-T < distance < T``: negative distances rotate the other way (CUB takes
        ``0 <= distance < T``).
    threads : int or tuple of int, compile-time constant, optional
        {threads}
        {shuffle_threads}
    temp_storage : shared array, optional
        {temp_storage}
        {temp_storage_size} One value per thread (``threads`` is required there), the same
        for the four shuffles.

    Returns
    -------
    value
        The ``value`` of the thread of rank ``(rank + distance) mod T``: every thread
        gets one.

    Barriers
    --------
    {block_barriers}

    {block_shuffle_barriers}

    Notes
    -----
    {collective}

    Example
    -------
    Each thread gets its left neighbour's value, thread 0 the last thread's::

        import numpy as np
        import coop
        from numba import cuda

        @cuda.jit
        def left_neighbours(x, out):
            i = cuda.threadIdx.x
            out[i] = coop.block.shuffle.rotate(x[i], -1)

        x = np.arange(96, dtype=np.float64)
        out = np.zeros_like(x)
        left_neighbours[1, 96](x, out)
        assert (out == np.roll(x, 1)).all()
    """
    sig = Signature("coop.block.shuffle.rotate")
    value_type = _value_type(sig, value)
    _distance(sig, distance)
    scratch, load, count_threads, block_rank = _scratch(sig, value_type, threads, temp_storage, "values")

    def impl(value, distance, temp_storage):
        buffer = scratch(temp_storage)
        rank = block_rank()
        publish(buffer, rank, value)
        n = count_threads()
        source = rank + distance
        if source >= n:
            source -= n
        elif source < 0:
            source += n
        return load(buffer, source)

    return impl


def _items(sig, items, output):
    item_type = sig.items(items, "items")
    sig.output_items(output, "output", item_type)
    return item_type, output_check(sig.primitive, True)


@primitive("coop.block.shuffle.up", temp_storage_bytes, group="block")
def up(items, output, threads=None, temp_storage=None):
    """Shift the block's blocked items up by one item (CUB BlockShuffle::Up): thread
    ``r`` gets ``output[i] = items[i-1]`` for ``i >= 1`` and ``output[0]`` = the last
    item of thread ``r - 1``.

    Parameters
    ----------
    items : items array
        The thread's items, an items array (``cuda.local.array(N, dtype)``, N >= 1) of
        any supported type, in blocked arrangement (rank ``r`` holds tile items
        ``r*N .. r*N+N-1``).
    output : items array
        Receives the shifted items: the same dtype, at least as long as ``items``; it
        may be ``items`` itself (in place).
    threads : int or tuple of int, compile-time constant, optional
        {threads}
        {shuffle_threads}
    temp_storage : shared array, optional
        {temp_storage}
        {temp_storage_size} One value per thread (``threads`` is required there), the same
        for the four shuffles.

    Returns
    -------
    value
        The block's last item (thread ``T - 1``'s last item, CUB's ``block_suffix``),
        to every thread. ``output`` holds the shifted items; thread 0's ``output[0]``
        is left unchanged.

    Barriers
    --------
    {block_barriers}

    {block_shuffle_barriers}

    Notes
    -----
    {collective}

    Example
    -------
    Each item's predecessor in the tile (the tile's first item has none)::

        import numpy as np
        import coop
        from numba import cuda

        @cuda.jit
        def predecessors(x, out, last):
            r = cuda.threadIdx.x
            items = cuda.local.array(4, np.int32)
            before = cuda.local.array(4, np.int32)
            for i in range(4):
                items[i] = x[4 * r + i]
            before[0] = -1
            block_last = coop.block.shuffle.up(items, before, threads=64)
            for i in range(4):
                out[4 * r + i] = before[i]
            if r == 0:
                last[0] = block_last

        x = np.arange(256, dtype=np.int32)
        out, last = np.zeros_like(x), np.zeros(1, np.int32)
        predecessors[1, 64](x, out, last)
        assert (out == x - 1).all() and last[0] == 255
    """
    sig = Signature("coop.block.shuffle.up")
    item_type, check_output = _items(sig, items, output)
    scratch, load, count_threads, block_rank = _scratch(sig, item_type, threads, temp_storage, "items")

    def impl(items, output, temp_storage):
        check_output(items, output)
        buffer = scratch(temp_storage)
        rank = block_rank()
        n = len(items)
        publish(buffer, rank, items[n - 1])
        for i in range(n - 1, 0, -1):  # from the top: output may be items
            output[i] = items[i - 1]
        if rank > 0:
            output[0] = load(buffer, rank - 1)
        return load(buffer, count_threads() - 1)

    return impl


@primitive("coop.block.shuffle.down", temp_storage_bytes, group="block")
def down(items, output, threads=None, temp_storage=None):
    """Shift the block's blocked items down by one item (CUB BlockShuffle::Down): thread
    ``r`` gets ``output[i] = items[i+1]`` for ``i < N-1`` and ``output[N-1]`` = the first
    item of thread ``r + 1``.

    Parameters
    ----------
    items : items array
        The thread's items, an items array (``cuda.local.array(N, dtype)``, N >= 1) of
        any supported type, in blocked arrangement (rank ``r`` holds tile items
        ``r*N .. r*N+N-1``).
    output : items array
        Receives the shifted items: the same dtype, at least as long as ``items``; it
        may be ``items`` itself (in place).
    threads : int or tuple of int, compile-time constant, optional
        {threads}
        {shuffle_threads}
    temp_storage : shared array, optional
        {temp_storage}
        {temp_storage_size} One value per thread (``threads`` is required there), the same
        for the four shuffles.

    Returns
    -------
    value
        The block's first item (thread 0's ``items[0]``, CUB's ``block_prefix``), to
        every thread. ``output`` holds the shifted items; the last thread's
        ``output[N-1]`` is left unchanged.

    Barriers
    --------
    {block_barriers}

    {block_shuffle_barriers}

    Notes
    -----
    {collective}

    Example
    -------
    Each item's successor in the tile, shifted in place::

        import numpy as np
        import coop
        from numba import cuda

        @cuda.jit
        def successors(x, out, first):
            r = cuda.threadIdx.x
            items = cuda.local.array(2, np.float32)
            for i in range(2):
                items[i] = x[2 * r + i]
            block_first = coop.block.shuffle.down(items, items)
            for i in range(2):
                out[2 * r + i] = items[i]
            first[r] = block_first

        x = np.arange(64, dtype=np.float32)
        out, first = np.zeros_like(x), np.zeros(32, np.float32)
        successors[1, 32](x, out, first)
        assert (out[:-1] == x[1:]).all() and out[-1] == x[-1] and (first == 0).all()
    """
    sig = Signature("coop.block.shuffle.down")
    item_type, check_output = _items(sig, items, output)
    scratch, load, count_threads, block_rank = _scratch(sig, item_type, threads, temp_storage, "items")

    def impl(items, output, temp_storage):
        check_output(items, output)
        buffer = scratch(temp_storage)
        rank = block_rank()
        n = len(items)
        publish(buffer, rank, items[0])
        for i in range(n - 1):  # from the bottom: output may be items
            output[i] = items[i + 1]
        if rank < count_threads() - 1:
            output[n - 1] = load(buffer, rank + 1)
        return load(buffer, 0)

    return impl

public_namespace(__name__)
