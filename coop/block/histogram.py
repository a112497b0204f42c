"""Block-wide histograms (CUB's BlockHistogram): counts of a block's tile of bin indices
added to an array of ``bins`` counters.

A block of ``T`` threads holds ``T*N`` items, ``N`` per thread; each item is the index
of its bin, an integer. Items outside ``[0, bins)`` are not counted (CUB leaves them
undefined), nor, with ``valid_items``, the items past the first ``valid_items`` of the
tile (blocked: item ``i`` of thread ``r`` is tile item ``r*N + i``). The counters are a
1-D array of int32, uint32, int64, uint64, float32 or float64, in shared or global
memory, at least ``bins`` long.

Algorithms (``algorithm=``):

- ``"atomic"`` (CUB's BLOCK_HISTO_ATOMIC): one atomic add per item. No scratch. Fast
  when items spread over many bins; contention slows it when most fall in a few.
- ``"sort"`` (CUB's BLOCK_HISTO_SORT): the tile's bin indices are radix sorted
  (``coop.block.radix.tile_sorter``, by only the bits the bins need), the runs of equal
  indices found by comparing each with its predecessor (as BlockDiscontinuity does),
  and each bin's run length added to its counter by one thread (atomically, so that
  blocks may share a global histogram). Insensitive to skew; needs ``threads=`` and
  ``items_per_thread=`` (the sort's scratch: ``histogram.temp_storage_bytes``).

``accumulate=False`` (CUB's Histogram: InitHistogram, then Composite) sets the counters
to this tile's counts; ``accumulate=True`` (CUB's Composite) adds them to what the
counters hold, e.g. across the tiles a block loops over.
"""

import numpy as np
from numba.cuda import types

from coop._core.algorithm import Algorithm, choose
from coop._core.backend import cuda, device_function
from coop._core.constants import without_dead_branches
from coop._core.exchange import DYNAMIC_TEMP_STORAGE, check_static_shared, required_items_per_thread, required_threads
from coop._core.misuse import size_check
from coop._core.scratch import (Region, Struct, Union, atomic_add_element, block_rank_of, loader, storage, store, storer,
                                striped_steps, thread_count)
from coop._core.specialize import PRIMITIVE_DEFAULT, Signature, is_none, primitive
from coop.block.radix import sort_layout, tile_sorter
from coop.block.radix_ranking import check_tile

__all__ = ["histogram"]

COUNTER_TYPES = (types.int32, types.uint32, types.int64, types.uint64, types.float32, types.float64)


def _sort_key_type(item_type, bins, partial):
    """``(key type, bits, sentinel)`` of the sort algorithm: bin indices sort as unsigned
    keys of ``bits`` bits; with a ``sentinel`` (``bins`` itself), items not counted (out of
    range, or past ``valid_items``) become it, sorted after every bin and skipped."""
    sentinel = partial or not _always_in_range(item_type, bins)
    bits = max(1, int(bins if sentinel else bins - 1).bit_length())
    key_type = types.uint8 if bits <= 8 else types.uint16 if bits <= 16 else types.uint32
    return key_type, bits, sentinel


def _always_in_range(item_type, bins):
    return not item_type.signed and (1 << item_type.bitwidth) <= bins


def _sort_layout(item_type, threads, items_per_thread, bins, partial=True):
    """The sort algorithm's scratch, as CUB's BlockHistogramSort TempStorage: the sort's,
    in union with the runs' bounds and the threads' last keys."""
    key_type, _, _ = _sort_key_type(item_type, bins, partial)
    runs = Struct(
        "runs",
        Region("run_begin", types.uint32, bins),
        Region("run_end", types.uint32, bins),
        Region("last_keys", key_type, threads),
    )
    return Union("histogram.sort", sort_layout([key_type], [], threads, items_per_thread, 4), runs)


def _temp_storage_bytes(sig, item_type, threads, items_per_thread, bins, algorithm=PRIMITIVE_DEFAULT):
    """Bytes a ``temp_storage=`` array needs for a histogram of ``dtype`` items in blocks
    of ``threads``, ``items_per_thread`` each, into ``bins`` counters (0 for
    ``"atomic"``, which has no scratch)."""
    name, chosen = choose(sig, algorithm, ALGORITHMS)
    if chosen.scratch is None:
        return 0
    return chosen.temp_storage_bytes(item_type, required_threads(sig, threads),
                                     required_items_per_thread(sig, items_per_thread), _bins(sig, bins))


def _bins(sig, bins):
    count = sig.constant_int(bins, "bins")
    if count < 1:
        raise sig.error("bins", f"must be at least 1, got {count}")
    return count


def _in_range(item_type, bins):
    """``in_range(item)``: whether a bin index lies in ``[0, bins)`` (one unsigned compare)."""
    if _always_in_range(item_type, bins):
        return _always
    unsigned = np.uint32 if item_type.bitwidth <= 32 else np.uint64
    limit = unsigned(bins)

    def in_range(item):
        return unsigned(item) < limit

    return device_function(in_range)


@device_function
def _always(item):
    return True


def _initialiser(block, bins, zero, shape):
    """``initialise(histogram)``: the counters set to 0, striped over the block (of the
    constant ``shape``, ``Signature.block_shape``, or None), between barriers (earlier
    readers of the counters are done; every counter is 0 after)."""
    count_threads = thread_count(block)
    block_rank = block_rank_of(shape)
    striped = block is not None
    steps, exact = striped_steps(bins, block or 1)

    def initialise(histogram):
        cuda.syncthreads()
        rank = block_rank()
        if striped:
            for k in range(steps):
                b = rank + k * block
                if exact or b < bins:
                    histogram[b] = zero
        else:
            for b in range(rank, bins, count_threads()):
                histogram[b] = zero
        cuda.syncthreads()

    return device_function(initialise)


def _atomic_counter(item_type, block, bins, counter, partial, accumulate, shape):
    """CUB's BlockHistogramAtomic: one atomic add per counted item."""
    in_range = _in_range(item_type, bins)
    one, zero = counter(1), counter(0)
    initialise = _initialiser(block, bins, zero, shape)
    block_rank = block_rank_of(shape)

    def count(items, histogram, valid_items, n, buffer):
        if not accumulate:
            initialise(histogram)
        base = block_rank() * n
        for i in range(n):
            item = items[i]
            if (not partial or base + i < valid_items) and in_range(item):
                atomic_add_element(histogram, item, one)

    return device_function(without_dead_branches(count))


def _sort_counter(sig, item_type, block, n, bins, counter, partial, accumulate, layout, shape):
    """CUB's BlockHistogramSort: sort the tile's bin indices; each run of equal indices
    records its begin and end (a run starts where a key differs from its predecessor);
    each counter gets its bin's run length."""
    key_type, bits, sentinel = _sort_key_type(item_type, bins, partial)
    in_range = _in_range(item_type, bins)
    sort = tile_sorter(sig, [key_type], [], block, n, 4, False, False, sort_layout([key_type], [], block, n, 4),
                       shape)
    block_rank = block_rank_of(shape)
    key_np = np.dtype(str(key_type))
    tile = block * n
    begin_slot, end_slot, last_slot = (layout.slot(f"runs.{name}") for name in ("run_begin", "run_end", "last_keys"))
    load_bound, load_key = loader(types.uint32), loader(key_type)
    store_bound = storer(types.uint32)
    steps, exact = striped_steps(bins, block)

    def count(items, histogram, valid_items, unused, buffer):
        keys = cuda.local.array(n, key_np)
        rank = block_rank()
        base = rank * n
        for i in range(n):
            item = items[i]
            if sentinel and not ((not partial or base + i < valid_items) and in_range(item)):
                keys[i] = bins
            else:
                keys[i] = item
        sort((keys,), (), 0, bits, buffer)
        cuda.syncthreads()  # the sort's last reads of the buffer are done
        for k in range(steps):
            b = rank + k * block
            if exact or b < bins:
                store_bound(buffer, begin_slot + b, tile)
                store_bound(buffer, end_slot + b, tile)
        store(buffer, last_slot + rank, keys[n - 1])
        cuda.syncthreads()
        # (keys as int64: slot arithmetic in their narrow type would wrap on the simulator)
        if rank == 0:
            previous = np.int64(keys[0])
            if not sentinel or previous < bins:
                store_bound(buffer, begin_slot + previous, 0)
        else:
            previous = np.int64(load_key(buffer, last_slot + rank - 1))
        for i in range(n):
            key = np.int64(keys[i])
            if (i > 0 or rank > 0) and key != previous:
                if not sentinel or key < bins:
                    store_bound(buffer, begin_slot + key, base + i)
                if not sentinel or previous < bins:
                    store_bound(buffer, end_slot + previous, base + i)
            previous = key
        cuda.syncthreads()
        for k in range(steps):
            b = rank + k * block
            if exact or b < bins:
                runs = load_bound(buffer, end_slot + b) - load_bound(buffer, begin_slot + b)
                if accumulate:
                    atomic_add_element(histogram, b, counter(runs))
                else:
                    histogram[b] = counter(runs)

    return device_function(without_dead_branches(count))


@primitive("coop.block.histogram", _temp_storage_bytes, group="block", uniform=("valid_items",))
def histogram(items, histogram, bins, threads=None, items_per_thread=None, algorithm="atomic", accumulate=False,
              valid_items=None, temp_storage=None):
    """Count a block's tile of bin indices into ``bins`` counters (CUB
    BlockHistogram::Histogram, or Composite with ``accumulate=True``).

    Parameters
    ----------
    items : items array
        The thread's ``N`` bin indices, blocked: any integer type. Items outside ``[0,
        bins)`` are not counted.
    histogram : array
        The counters: a 1-D shared or global array of int32, uint32, int64, uint64,
        float32 or float64, at least ``bins`` long. Shared by the block (or by blocks:
        both algorithms add atomically when accumulating).
    bins : int, compile-time constant
        The number of bins (at least 1).
    threads : int or tuple, compile-time constant
        {threads}
        Required by ``"sort"``; optional for ``"atomic"``.
    items_per_thread : int, compile-time constant
        ``N``, the length of ``items``: required by ``"sort"``; ``"atomic"`` reads
        ``len(items)``.
    algorithm : str, compile-time constant, default "atomic"
        ``"atomic"`` or ``"sort"`` (see the module docstring).
    accumulate : bool, compile-time constant, default False
        False: the counters are set to this tile's counts (CUB's InitHistogram then
        Composite). True: the counts are added to the counters (CUB's Composite).
    valid_items : int, optional
        A partial tile (the same in every thread): only the first ``valid_items`` items
        of the tile are counted (CUB has no partial tile here).
        {blocked_positions}
    temp_storage : shared array, optional
        {temp_storage}
        {temp_storage_size} 0 for ``"atomic"``, which has no scratch.

    Returns
    -------
    None
        The counters hold the histogram once every thread has made the call: read them
        after a ``cuda.syncthreads()`` (the call ends without one, as CUB's, so that
        consecutive accumulating calls need none).

    Barriers
    --------
    The call synchronises the block as its own shared memory needs, and before it
    sets the counters (``accumulate=False``), so that earlier reads of them are done;
    it leaves the barrier after the counting to the caller (see Returns). ``"atomic"``:
    two ``cuda.syncthreads()`` with ``accumulate=False``, none otherwise. ``"sort"``:
    the sort's (one per 4 bits of the bin index), then three.

    Notes
    -----
    {collective}

    Example
    -------
    A histogram of 16 bins per block, in shared memory, merged into a global one::

        import numpy as np
        import coop
        from numba import cuda

        THREADS, ITEMS, BINS = 64, 4, 16

        @cuda.jit
        def count(samples, out):
            counts = cuda.shared.array(BINS, np.int32)
            items = cuda.local.array(ITEMS, np.uint8)
            base = (cuda.blockIdx.x * THREADS + cuda.threadIdx.x) * ITEMS
            for i in range(ITEMS):
                items[i] = samples[base + i]
            coop.block.histogram(items, counts, BINS, threads=THREADS, items_per_thread=ITEMS,
                                 algorithm="sort")
            cuda.syncthreads()
            if cuda.threadIdx.x < BINS:
                cuda.atomic.add(out, cuda.threadIdx.x, counts[cuda.threadIdx.x])

        samples = np.random.default_rng(0).integers(0, 20, 3 * THREADS * ITEMS).astype(np.uint8)
        out = np.zeros(BINS, np.int32)
        count[3, THREADS](samples, out)
        assert (out == np.bincount(samples, minlength=20)[:BINS]).all()
    """
    sig = Signature("coop.block.histogram")
    item_type = sig.items(items, "items")
    if not isinstance(item_type, types.Integer):
        raise sig.error("items", f"must hold integer bin indices, got {item_type}")
    if not isinstance(histogram, types.Array) or histogram.ndim != 1 or histogram.dtype not in COUNTER_TYPES:
        valid = ", ".join(map(str, COUNTER_TYPES))
        got = f"a {histogram.ndim}-D array of {histogram.dtype}" if isinstance(histogram, types.Array) else histogram
        raise sig.error("histogram", f"must be a 1-D array of counters ({valid}), got {got}")
    sig.writable(histogram, "histogram")
    count_bins = _bins(sig, bins)
    name, chosen = choose(sig, algorithm, ALGORITHMS)
    block = sig.block_threads(threads)
    chosen.check_requirements(sig, name, threads=block,
                              items_per_thread=None if is_none(items_per_thread) else items_per_thread)
    is_accumulating = sig.constant_bool(accumulate, "accumulate")
    partial = sig.run_time_int(valid_items, "valid_items") is not None
    counter = np.dtype(str(histogram.dtype)).type
    check_bins = size_check(sig.primitive, "histogram")

    count, scratch, check_items = chosen.function(sig, item_type, block, items_per_thread, count_bins, counter,
                                                  partial, is_accumulating, temp_storage, sig.block_shape(threads))

    def impl(items, histogram, valid_items, temp_storage):
        n = check_items(items)
        check_bins(histogram, count_bins)
        count(items, histogram, valid_items, n, scratch(temp_storage))

    return impl


def _atomic_histogram(sig, item_type, block, items_per_thread, bins, counter, partial, accumulating, temp_storage,
                      shape):
    """``(count, scratch, check_items)`` of the atomic algorithm: shared or global atomics
    on the caller's counters, no scratch."""
    if sig.temp_storage(temp_storage) is not None:
        raise sig.error("temp_storage", "is not used by algorithm 'atomic' (it has no scratch)")
    return _atomic_counter(item_type, block, bins, counter, partial, accumulating, shape), _no_scratch, _length


def _sort_histogram(sig, item_type, block, items_per_thread, bins, counter, partial, accumulating, temp_storage,
                    shape):
    """``(count, scratch, check_items)`` of the sort algorithm: the tile sorted by bin,
    each run counted by its first thread."""
    n = required_items_per_thread(sig, items_per_thread)
    check_tile(sig, block, n)
    layout = _sort_layout(item_type, block, n, bins, partial)
    check_static_shared(sig, temp_storage, layout, "bins", f"with a tile of {block} x {n} items needs to sort",
                        DYNAMIC_TEMP_STORAGE + ", or use algorithm 'atomic'")
    scratch, _ = storage(sig, temp_storage, layout, owner=(sig.primitive, "sort"))
    count = _sort_counter(sig, item_type, block, n, bins, counter, partial, accumulating, layout, shape)
    return count, scratch, _exact_length(sig.primitive, n)


ALGORITHMS = {
    "atomic": Algorithm(_atomic_histogram),
    "sort": Algorithm(
        _sort_histogram,
        scratch=_sort_layout,
        requires={
            "threads": "the sort's shared memory is sized by the block",
            "items_per_thread": "the sort's shared memory is sized by the tile",
        },
    ),
}


@device_function
def _no_scratch(temp_storage):
    return None


@device_function
def _length(items):
    return len(items)


def _exact_length(primitive_name, n):
    check = size_check(primitive_name, "items", exact=True)

    def length(items):
        check(items, n)
        return n

    return device_function(length)
