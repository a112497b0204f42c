"""Device-wide merge sort (CUB's DeviceMergeSort): ``merge_sort(d_keys, d_values=None,
compare=None, d_keys_out=None, d_values_out=None)``, stable, by any comparator, in place
or into the outputs.

A sort of ``n`` keys in tiles of ``T`` is ``1 + 2 * ceil(log2(n / T))`` kernels, as
CUB's:

1. The tile sort (``_tile_sort_kernel``): each block loads a tile (``coop.block.load``,
   "warp_transpose"), sorts it (``coop.block.merge_sort``) and stores it. The last tile
   is partial: its positions past the end are filled with its largest key
   (``coop.block.reduce`` by ``compare``), which sorts after the others there.
2. Rounds of merging, each doubling the sorted runs until one run holds every key. In
   each, the partition kernel (``_partition_kernel``) finds, for every tile of the
   output, where it starts in the first of the two runs merged into it: the merge path
   (``coop._core.merge``'s, as the block merge sort's, here searched in global memory),
   one thread a tile boundary. The merge kernel (``_merge_kernel``) then gives each tile
   to a block, which copies the two stretches of the runs its outputs come from into
   shared memory, and each thread merges its ``N`` outputs from there (the merge path
   of its diagonal, then a serial merge, the block merge sort's own pieces), recording
   where each came from; values follow by that gather. Keys and values go to the
   output through shared memory, striped (coalesced).

The rounds alternate between the output and a temporary, starting where they must for
the last to write the output, so nothing is copied back. Stable: the tile sort is, and a
merge takes the first run's key when two are equal.
"""

import functools

import numpy as np
from numba import cuda
from numba.cuda.np.numpy_support import from_dtype

import coop
from coop._core.arithmetic import less
from coop._core.backend import SIMULATOR
from coop._core.constants import without_dead_branches
from coop._core.errors import ArgumentValueError
from coop._core.merge import path_finder, serial_merger
from coop._core.values import chosen
from coop.device._host import (copy_items, device_array, device_operator, documented, launch, launch_over,
                               launch_stream, takes_temp_storage, temporary)
from coop.device._tiles import tile_loader, tile_storer
from coop.device.radix_sort import sort_outputs

__all__ = ["merge_sort"]

# CUB's tuning for every architecture since sm_60: 256 threads of 17 four-byte keys (as
# many bytes of wider keys, more of narrower ones up to 17).
SORT_THREADS = 32 if SIMULATOR else 256
NOMINAL_ITEMS = 3 if SIMULATOR else 17
MAX_ITEMS = 2**31 - 1  # (tile positions are 32-bit)
# The keys-only merge in at most 48 registers (five blocks an SM; CUB's takes 45): ptxas
# gave it 64, and keeps any key type's in 48 without spilling. With values, five blocks
# would spill: no bound.
KEYS_MERGE_BLOCKS_PER_SM = 5


def _items_per_thread(key_dtype):
    return max(1, min(NOMINAL_ITEMS, NOMINAL_ITEMS * 4 // np.dtype(key_dtype).itemsize))


@functools.lru_cache(maxsize=None)
def _tile_sort_kernel(compare, key_dtype, value_dtype):
    """(kernel, tile size): each block sorts a tile of ``keys_in`` (and ``values_in``)
    into ``keys_out`` (and ``values_out``), which may be the inputs themselves."""
    key_type = from_dtype(np.dtype(key_dtype))
    with_values = value_dtype is not None
    value_type = from_dtype(np.dtype(key_dtype if value_dtype is None else value_dtype))
    threads, n_items = SORT_THREADS, _items_per_thread(key_dtype)
    tile_size = threads * n_items
    dtypes = (key_type, value_type) if with_values else (key_type,)
    temp_bytes = max(
        *(coop.block.load.temp_storage_bytes(t, threads, n_items, algorithm="warp_transpose") for t in dtypes),
        *(coop.block.store.temp_storage_bytes(t, threads, n_items, algorithm="warp_transpose") for t in dtypes),
        coop.block.merge_sort.temp_storage_bytes(key_type, threads, n_items,
                                                 value_dtype=value_type if with_values else None),
        coop.block.reduce.temp_storage_bytes(key_type, threads),
    )
    load, store = tile_loader(threads, n_items), tile_storer(threads, n_items)
    sort = _tile_sorter(compare, key_type, threads, n_items, with_values)

    def tile_sort_kernel(keys_in, keys_out, values_in, values_out, n):
        temp = cuda.shared.array(temp_bytes, np.uint8, alignment=16)
        keys = cuda.local.array(n_items, key_type)
        values = cuda.local.array(n_items, value_type)
        base = cuda.blockIdx.x * tile_size
        valid = min(n - base, tile_size)
        load(keys_in[base:], keys, valid, temp)
        if with_values:
            load(values_in[base:], values, valid, temp)
        sort(keys, values, valid, temp)
        store(keys_out[base:], keys, valid, temp)
        if with_values:
            store(values_out[base:], values, valid, temp)

    return cuda.jit(without_dead_branches(tile_sort_kernel)), tile_size


def _tile_sorter(compare, key_type, threads, n_items, with_values):
    """``sort(keys, values, valid, temp)``: coop.block.merge_sort of a tile of which
    ``valid`` keys are real (CUB's AgentBlockSort), the others filled with the largest
    of them by ``compare`` (coop.block.reduce), which sorts after each; values with
    them if ``with_values``."""
    tile_size = threads * n_items

    @cuda.jit(device=True)
    def later(a, b):
        return b if compare(a, b) else a

    def sort(keys, values, valid, temp):
        largest = cuda.shared.array(1, key_type)
        if valid != tile_size:
            top = coop.block.reduce(keys, later, valid_items=valid, threads=threads, temp_storage=temp)
            if cuda.threadIdx.x == 0:
                largest[0] = top
            cuda.syncthreads()
        if with_values:
            if valid == tile_size:
                coop.block.merge_sort(keys, compare, values, threads=threads, items_per_thread=n_items,
                                      temp_storage=temp)
            else:
                coop.block.merge_sort(keys, compare, values, threads=threads, items_per_thread=n_items,
                                      valid_items=valid, oob_default=largest[0], temp_storage=temp)
        elif valid == tile_size:
            coop.block.merge_sort(keys, compare, threads=threads, items_per_thread=n_items, temp_storage=temp)
        else:
            coop.block.merge_sort(keys, compare, threads=threads, items_per_thread=n_items, valid_items=valid,
                                  oob_default=largest[0], temp_storage=temp)

    return cuda.jit(device=True)(without_dead_branches(sort))


@cuda.jit(device=True)
def _item(array, index):
    # (an unsigned index: a signed one costs a test for negative indices, which Numba
    # counts from the end, at every access: twice CUB's instructions in the merge)
    return array[np.uint32(index)]


@functools.lru_cache(maxsize=None)
def _partition_kernel(compare, key_dtype):
    """``partition_kernel(keys, n, tile_size, run, tiles, starts)``: for each tile
    boundary ``p`` (0 to ``tiles``), ``starts[p]``: where the merge of the pair of
    sorted runs of ``run`` keys holding output position ``p * tile_size`` takes it from
    in the first run (a boundary between pairs gives the next pair's start: the merge
    kernel knows where the last tile of a pair ends)."""
    find_path = path_finder(from_dtype(np.dtype(key_dtype)), load_key=_item, position=np.int64)

    def partition_kernel(keys, n, tile_size, run, tiles, starts):
        for p in range(cuda.grid(1), tiles + 1, cuda.gridDim.x * cuda.blockDim.x):
            at = min(np.int64(p) * tile_size, n)
            begin1 = at // (2 * run) * (2 * run)  # (the pair's start)
            end1 = min(begin1 + run, n)
            end2 = min(end1 + run, n)
            starts[p] = begin1 + find_path(keys, 0, begin1, end1, end1, end2, at - begin1, compare)

    return cuda.jit(without_dead_branches(partition_kernel))


@functools.lru_cache(maxsize=None)
def _stretch_copier(threads, n_items):
    """``copy(source, items, shared, first, last, gap, full)``: the tile's two stretches
    of runs into ``shared``, striped (through the thread's ``items``). Item ``at`` is
    ``source[at]`` below ``first`` (the first run's stretch, ``source`` starting at it),
    else ``source[at + gap]`` (the second's), up to ``last`` (all of them if ``full``).
    Every item is loaded, from an address chosen without a branch, before any is stored
    (CUB's gmem_to_reg): with a load in each arm of a branch, each waited for the one
    before (1.35x the merge kernel's time). Indices unsigned: see ``_item``."""
    U32 = np.uint32

    @cuda.jit(device=True)
    def copy(source, items, shared, first, last, gap, full):
        rank = U32(cuda.threadIdx.x)
        for i in range(n_items):
            at = U32(rank + i * threads)
            if full or at < last:
                items[i] = source[chosen(at < first, at, U32(at + gap))]
        for i in range(n_items):
            at = U32(rank + i * threads)
            if full or at < last:
                shared[at] = items[i]

    return copy


@functools.lru_cache(maxsize=None)
def _tile_writer(threads, n_items):
    """``write(items, shared, out, last, full)``: the threads' ``items`` (blocked) into
    ``out``'s first ``last`` items (all of them if ``full``), striped through ``shared``
    (coalesced), which the caller is done reading."""
    U32 = np.uint32

    @cuda.jit(device=True)
    def write(items, shared, out, last, full):
        rank = U32(cuda.threadIdx.x)
        for i in range(n_items):
            shared[U32(rank * n_items + i)] = items[i]
        cuda.syncthreads()
        for i in range(n_items):
            at = U32(rank + i * threads)
            if full or at < last:
                out[at] = shared[at]

    return write


@functools.lru_cache(maxsize=None)
def _merge_kernel(compare, key_dtype, value_dtype):
    """``merge_kernel(keys_in, keys_out, values_in, values_out, n, run, starts)``: block
    ``t`` writes tile ``t`` of the merge of each pair of sorted runs of ``run`` keys,
    from where ``starts`` (the partition kernel's) says its first-run keys begin and
    end."""
    key_type = from_dtype(np.dtype(key_dtype))
    with_values = value_dtype is not None
    value_type = from_dtype(np.dtype(key_dtype if value_dtype is None else value_dtype))
    threads, n_items = SORT_THREADS, _items_per_thread(key_dtype)
    tile_size = threads * n_items
    find_path = path_finder(key_type, load_key=_item)
    merge_serially = serial_merger(key_type, n_items, load_key=_item)
    copy_stretches, write_tile = _stretch_copier(threads, n_items), _tile_writer(threads, n_items)
    I32, U32 = np.int32, np.uint32

    def merge_kernel(keys_in, keys_out, values_in, values_out, n, run, starts):
        # one slot past the tile: the serial merge reads one past a run
        shared_keys = cuda.shared.array(tile_size + 1, key_type)
        shared_values = cuda.shared.array(tile_size if with_values else 1, value_type)
        keys = cuda.local.array(n_items, key_type)
        values = cuda.local.array(n_items, value_type)
        indices = cuda.local.array(n_items, np.int32)
        rank = I32(cuda.threadIdx.x)
        tile = np.int64(cuda.blockIdx.x)
        base = tile * tile_size
        valid = I32(min(n - base, tile_size))
        pair = base // (2 * run) * (2 * run)
        begin1 = starts[tile]
        if base + tile_size < min(pair + 2 * run, n):
            end1 = starts[tile + 1]
        else:  # (the pair's last tile: to the end of both runs)
            end1 = min(pair + run, n)
        # the tile's keys from the second run: those its outputs take beyond the first's
        begin2 = pair + run + (base - pair) - (begin1 - pair)
        count1 = I32(end1 - begin1)
        first, last = U32(count1), U32(valid)
        gap = U32(begin2 - begin1 - count1)
        full = valid == tile_size
        copy_stretches(keys_in[begin1:], keys, shared_keys, first, last, gap, full)
        cuda.syncthreads()
        diag = min(valid, I32(rank * n_items))
        low = find_path(shared_keys, 0, I32(0), count1, count1, valid, diag, compare)
        merge_serially(shared_keys, 0, low, count1, I32(count1 + diag - low), valid, keys, indices, compare)
        cuda.syncthreads()  # (the merge has read the keys)
        write_tile(keys, shared_keys, keys_out[base:], last, full)
        if with_values:
            copy_stretches(values_in[begin1:], values, shared_values, first, last, gap, full)
            cuda.syncthreads()
            for i in range(n_items):
                values[i] = shared_values[U32(indices[i])]
            cuda.syncthreads()
            write_tile(values, shared_values, values_out[base:], last, full)

    jit = cuda.jit if with_values else cuda.jit(launch_bounds=(threads, KEYS_MERGE_BLOCKS_PER_SM))
    return jit(without_dead_branches(merge_kernel))


@documented
@takes_temp_storage
def merge_sort(d_keys, d_values=None, compare=None, d_keys_out=None, d_values_out=None, stream=None,
               temp_storage=None):
    """Sort ``d_keys`` by ``compare``, and ``d_values`` with them, in place or into
    ``d_keys_out`` and ``d_values_out`` (CUB DeviceMergeSort::SortKeys, SortPairs,
    SortKeysCopy, SortPairsCopy, and their Stable forms): stable (equal keys keep their
    order), any key type ``compare`` orders.

    Parameters
    ----------
    d_keys : device array
        The keys, may be empty: numbers, bools or any dtype ``compare`` takes.
        {device_array}
    d_values : device array, optional
        Values of any dtype, at least as long as ``d_keys``: its first ``len(d_keys)``
        items are permuted with the keys.
    compare : operator, optional
        ``compare(a, b)``: whether key ``a`` goes before key ``b``, a strict weak order
        (``a > b`` sorts descending). Default None: ``a < b`` (floats: NaNs are not
        ordered by it; sort them with ``coop.device.radix_sort``, or a comparator of
        your own).
        {device_operator}
    d_keys_out, d_values_out : device arrays, optional
        Where the sorted keys and values go (CUB's SortKeysCopy / SortPairsCopy), of the
        dtypes of ``d_keys`` and ``d_values`` and at least as long; ``d_keys`` and
        ``d_values`` are then left as they are. ``d_values_out`` goes with
        ``d_keys_out`` when there are values. Each must be its input itself (in place)
        or share no memory with it.
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
    Sort points by their distance from the origin, ties in their original order, with
    their indices (a stable argsort by a comparator)::

        import numpy as np
        import coop
        from numba import cuda

        rng = np.random.default_rng(10)
        distance = rng.integers(0, 50, 3000).astype(np.int32)
        d_keys = cuda.to_device(distance)
        d_order = cuda.to_device(np.arange(distance.size, dtype=np.int32))
        coop.device.merge_sort(d_keys, d_order, compare=lambda a, b: a < b)
        order = np.argsort(distance, kind="stable")
        assert (d_order.copy_to_host() == order).all()
        assert (d_keys.copy_to_host() == distance[order]).all()
    """
    d_keys = device_array("merge_sort", "d_keys", d_keys)
    n = d_keys.size
    d_values, keys_out, values_out, in_place = sort_outputs("merge_sort", d_keys, d_values, d_keys_out, d_values_out,
                                                            False)
    compare = less if compare is None else device_operator("merge_sort", "compare", compare)
    if n > MAX_ITEMS:
        raise ArgumentValueError(f"coop.device.merge_sort: d_keys has {n} items, at most {MAX_ITEMS} are supported")
    stream = launch_stream(stream)
    if n <= 1:  # (in order already)
        if not in_place and n:
            copy_items(d_keys, keys_out, n, stream)
            if d_values is not None:
                copy_items(d_values, values_out, n, stream)
        return
    value_dtype = None if d_values is None else d_values.dtype
    tile_sort, tile_size = _tile_sort_kernel(compare, d_keys.dtype, value_dtype)
    tiles = -(-n // tile_size)
    rounds = max(tiles - 1, 0).bit_length()
    # Round r reads targets[(r + first) % 2] and writes the other; the tile sort writes
    # the first, chosen so that the last round writes the output.
    key_targets = (keys_out, temporary("merge_sort.keys", n, d_keys.dtype, stream) if rounds else None)
    value_targets = ((values_out, temporary("merge_sort.values", n, value_dtype, stream) if rounds else None)
                     if d_values is not None else key_targets)
    first = rounds % 2
    values_in = d_values if d_values is not None else d_keys
    launch(tile_sort, tiles, SORT_THREADS, stream, d_keys, key_targets[first], values_in, value_targets[first], n)
    if not rounds:
        return
    partition = _partition_kernel(compare, d_keys.dtype)
    merge = _merge_kernel(compare, d_keys.dtype, value_dtype)
    starts = temporary("merge_sort.starts", tiles + 1, np.int64, stream)
    run = tile_size
    for r in range(rounds):
        source, target = (r + first) % 2, (r + first + 1) % 2
        launch_over(partition, tiles + 1, stream, key_targets[source], n, tile_size, run, tiles, starts)
        launch(merge, tiles, SORT_THREADS, stream, key_targets[source], key_targets[target], value_targets[source],
               value_targets[target], n, run, starts)
        run *= 2
