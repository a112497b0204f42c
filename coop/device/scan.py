"""Device-wide prefix scans (CUB's DeviceScan): ``inclusive_scan``, ``exclusive_scan``,
``inclusive_sum``, ``exclusive_sum``, in one pass over the data.

One kernel, one tile per block: a block claims the next tile in order
(``coop.device.lookback.claim_tile``) and loads it (``coop.block.load``,
"warp_transpose"); each thread combines its items in order, the block scans those
combinations (``coop.block.exclusive_scan`` of one value per thread, CUB's
BlockScan::ExclusiveScan with a prefix callback) whose prefix callback is the decoupled
look-back (``coop.device.lookback.lookback_prefix``: the combination of every tile before
it, published tile by tile in global memory), each thread rescans its items from its
exclusive prefix (what the block scan does with an items array), and the block stores
the tile (``coop.block.store``); the last tile is partial (``valid_items``). The first
tile has no predecessor: its prefix is ``initial`` (if any), and it publishes its
inclusive value at once. Values are converted to ``d_out``'s dtype as they are loaded and
combined in it. ``op`` needs to be associative only.

Tuple values (``d_in`` and ``d_out`` tuples of arrays, ``coop.device._zip``) go through
the same kernel: each member is loaded and stored as an array of its own, and the
look-back keeps a tuple's members in arrays of their own; a plain value is the case of
one array.
"""

import functools

import numpy as np
from numba import cuda

import coop
from coop._core.backend import SIMULATOR
from coop._core.errors import ArgumentValueError
from coop._core.items import accessors
from coop._core.values import converter, value_type_of
from coop.device._host import (check_length, device_array, device_operator, documented, launch, launch_stream,
                               takes_temp_storage)
from coop.device._tiles import BLOCK_THREADS, items_per_thread, tile_loader, tile_storer
from coop.device.lookback import INCLUSIVE, TileStates, claim_tile, tile_access, tile_prefix
from coop.device._zip import for_each_member, host_value, is_zipped, local_arrays, members, value_dtype, zipped_arrays

__all__ = ["inclusive_scan", "exclusive_scan", "inclusive_sum", "exclusive_sum"]

# Measured on an H100 (int32, 2^24 and 2^28 items): 256 threads of 24 items with the
# warp-scans block scan beat 128 or 512 threads, 8 to 16 items, and the raking scan.
THREADS = BLOCK_THREADS
ALGORITHM = "warp_scans"
TILE_BYTES_PER_THREAD = 16 if SIMULATOR else 96  # (4-byte values: 24 items per thread)
# the look-back's sleep before its first look (H100, int32, 2^24 and 2^28: 2,500 ns 1-5%
# faster than CUB's 1,245; 4,000 as 2,500; 8,000 gives back nearly all the gain)
FIRST_LOOK_NANOSECONDS = 2500


@functools.lru_cache(maxsize=None)
def _scan_kernel(op, in_dtypes, dtypes, exclusive, has_initial, threads=None, algorithm=ALGORITHM):
    """(kernel, tile size) scanning values of ``in_dtypes`` with ``op`` as ``dtypes``
    (dtypes, or tuples of dtypes for tuple values: ``d_in`` and ``d_out`` are then tuples
    of arrays, see the module docstring)."""
    threads = threads or THREADS  # (read here: benchmarks/device.py --set sweeps it)
    count = members(dtypes)
    value_type = value_type_of(dtypes)
    convert = converter(value_type)
    n_items = items_per_thread(TILE_BYTES_PER_THREAD, in_dtypes, dtypes)
    tile_size = threads * n_items
    temp_bytes = max(
        *(coop.block.load.temp_storage_bytes(t, threads, n_items, algorithm="warp_transpose")
          for t in (in_dtypes if count else (in_dtypes,))),
        *(coop.block.store.temp_storage_bytes(t, threads, n_items, algorithm="warp_transpose")
          for t in (dtypes if count else (dtypes,))),
        coop.block.exclusive_scan.temp_storage_bytes(dtypes, threads, algorithm=algorithm),
    )
    load = for_each_member(count, "srcs, arrays, base, valid, temp", "load(srcs{m}[base:], arrays{m}, valid, temp)",
                           load=tile_loader(threads, n_items))
    store = for_each_member(count, "dsts, arrays, base, valid, temp", "store(dsts{m}[base:], arrays{m}, valid, temp)",
                            store=tile_storer(threads, n_items))
    read, write, _ = accessors(count)
    loaded_arrays, item_arrays = local_arrays(n_items, in_dtypes), local_arrays(n_items, dtypes)
    prefix = tile_prefix(op, dtypes, FIRST_LOOK_NANOSECONDS)
    publish, _ = tile_access(dtypes)

    @cuda.jit
    def scan_kernel(d_in, d_out, n, status, aggregates, inclusives, epoch, initial):
        temp = cuda.shared.array(temp_bytes, np.uint8, alignment=16)
        tile_slot = cuda.shared.array(1, np.int32)
        loaded = loaded_arrays()
        items = item_arrays()
        tile = claim_tile(status, (n + tile_size - 1) // tile_size, tile_slot)
        base = tile * tile_size
        valid = min(n - base, tile_size)
        load(d_in, loaded, base, valid, temp)
        # the thread's items, converted, and their combination in order
        partial = convert(read(loaded, 0))
        write(items, 0, partial)
        for i in range(1, n_items):
            value = convert(read(loaded, i))
            write(items, i, value)
            partial = convert(op(partial, value))
        # the combination of the items before the thread's (the tile's prefix first)
        # (without an initial value the host passes a zero, which the prefix never reads: only
        # tile 0 would, and it scans without one. A zero made here would be a float16
        # constant for float16 values, which numba-cuda 0.30 emits as invalid IR.)
        if tile == 0 and not has_initial:  # (an inclusive scan's first tile: nothing before it)
            running, aggregate = coop.block.exclusive_scan(partial, op, threads=threads, algorithm=algorithm,
                                                           return_aggregate=True, temp_storage=temp)
            if cuda.threadIdx.x == 0:
                publish(status, aggregates, inclusives, tile, epoch, INCLUSIVE, aggregate)
        else:
            state = (status, aggregates, inclusives, tile, epoch, initial)
            running = coop.block.exclusive_scan(partial, op, prefix_op=prefix, prefix_state=state, threads=threads,
                                                algorithm=algorithm, temp_storage=temp)
        seeded = tile != 0 or has_initial or cuda.threadIdx.x != 0  # (else thread 0's ``running`` is unset)
        for i in range(n_items):
            value = read(items, i)
            if exclusive:
                write(items, i, running)
                running = convert(op(running, value))
            else:
                running = convert(op(running, value)) if seeded or i > 0 else value
                write(items, i, running)
        store(d_out, items, base, valid, temp)

    return scan_kernel, tile_size


_SCANS_INSTEAD_OF_SUMS = {"inclusive_sum": "inclusive_scan", "exclusive_sum": "exclusive_scan"}


def _scan(function, d_in, d_out, op, initial, exclusive, stream):
    zipped = is_zipped(d_in, d_out)
    if zipped:  # tuple values
        d_in, d_out, n = zipped_arrays(function, d_in, d_out, instead=_SCANS_INSTEAD_OF_SUMS.get(function))
    else:
        d_in = device_array(function, "d_in", d_in)
        d_out = device_array(function, "d_out", d_out)
        n = d_in.size
        check_length(function, "d_out", d_out, n)
    op = device_operator(function, "op", op)
    stream = launch_stream(stream)
    if exclusive and initial is None:
        raise ArgumentValueError(f"coop.device.{function}: initial is required (the value d_out[0] receives, CUB's "
                                 "init_value)")
    value_type = value_dtype(d_out)
    has_initial = initial is not None
    zero = (0,) * len(d_out) if zipped else 0
    seed = host_value(function, "initial", initial if has_initial else zero, value_type)
    if n == 0:
        return
    scan_kernel, tile_size = _scan_kernel(op, value_dtype(d_in), value_type, exclusive, has_initial)
    tiles = -(-n // tile_size)
    states = TileStates(tiles, value_type, stream)
    launch(scan_kernel, tiles, THREADS, stream, d_in, d_out, n, *states.arrays, states.epoch, seed)


@documented
@takes_temp_storage
def inclusive_scan(d_in, d_out, op, initial=None, stream=None, temp_storage=None):
    """Inclusive prefix scan of ``d_in`` with ``op`` into ``d_out`` (CUB
    DeviceScan::InclusiveScan, or InclusiveScanInit with ``initial``): ``d_out[i] =
    initial op d_in[0] op ... op d_in[i]``.

    Parameters
    ----------
    d_in : device array or tuple of device arrays
        The values, may be empty:
        {device_array}
        Or tuple values: a tuple of such arrays of one length, item ``i`` being
        ``(d_in[0][i], d_in[1][i], ...)`` (as CUB's zip iterator gives them).
    d_out : device array or tuple of device arrays
        At least as long as ``d_in``; may be ``d_in`` itself. Its dtype is the type the
        values are converted to and combined in. For tuple values, a tuple of as many
        arrays (each at least as long), whose dtypes are the members' types.
    op : operator
        {device_combining_operator}
        For tuple values it takes and returns tuples.
    initial : scalar or tuple, optional
        Combined before the first value (for tuple values, a tuple).
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
    A segmented running sum, as a scan of ``(head flag, value)`` pairs: a flag of 1
    starts a new segment. The operator is associative but not commutative::

        import numpy as np
        import coop
        from numba import cuda

        @cuda.jit(device=True)
        def segmented_sum(a, b):  # b's segment restarts the sum if b starts one
            return a[0] | b[0], b[1] if b[0] else a[1] + b[1]

        rng = np.random.default_rng(3)
        flags = (rng.random(2000) < 0.02).astype(np.int32)
        x = rng.integers(0, 100, 2000).astype(np.int32)
        d_flags, d_sums = cuda.device_array_like(flags), cuda.device_array_like(x)
        coop.device.inclusive_scan((cuda.to_device(flags), cuda.to_device(x)), (d_flags, d_sums),
                                   segmented_sum)
        total = np.cumsum(x)
        start = np.maximum.accumulate(np.where(flags == 1, np.arange(x.size), 0))  # each segment's first
        assert (d_sums.copy_to_host() == total - total[start] + x[start]).all()
    """
    _scan("inclusive_scan", d_in, d_out, op, initial, False, stream)


@documented
@takes_temp_storage
def exclusive_scan(d_in, d_out, op, initial, stream=None, temp_storage=None):
    """Exclusive prefix scan of ``d_in`` with ``op`` into ``d_out`` (CUB
    DeviceScan::ExclusiveScan): ``d_out[0] = initial``, ``d_out[i] = initial op d_in[0]
    op ... op d_in[i-1]``.

    Parameters
    ----------
    d_in, d_out, op, stream, temp_storage : as in ``coop.device.inclusive_scan``
        Tuples of arrays for tuple values.
    initial : scalar or tuple
        ``d_out[0]``, combined before the first value (required; for tuple values, a
        tuple: ``d_out[k][0]`` receives ``initial[k]``).

    Returns
    -------
    None
        {device_returns}

    Example
    -------
    Composing affine maps ``x -> a*x + b`` in order (not commutative), each map packed
    as ``a * 2**16 + b`` with small ``a`` and ``b`` so that it fits one int64::

        import numpy as np
        import coop
        from numba import cuda

        @cuda.jit(device=True)
        def then(f, g):  # x -> g(f(x)), modulo 2**16 in each coefficient
            fa, fb, ga, gb = f >> 16, f & 0xFFFF, g >> 16, g & 0xFFFF
            return ((ga * fa) & 0xFFFF) << 16 | ((ga * fb + gb) & 0xFFFF)

        rng = np.random.default_rng(4)
        a, b = rng.integers(0, 1 << 16, 3000), rng.integers(0, 1 << 16, 3000)
        maps = (a << 16 | b).astype(np.int64)
        d_out = cuda.device_array_like(maps)
        coop.device.exclusive_scan(cuda.to_device(maps), d_out, then, 1 << 16)  # identity: x -> x
        expected, f = [], 1 << 16
        for g in maps:
            expected.append(f)
            fa, fb, ga, gb = f >> 16, f & 0xFFFF, int(g) >> 16, int(g) & 0xFFFF
            f = ((ga * fa) & 0xFFFF) << 16 | ((ga * fb + gb) & 0xFFFF)
        assert (d_out.copy_to_host() == np.array(expected)).all()
    """
    _scan("exclusive_scan", d_in, d_out, op, initial, True, stream)


@documented
@takes_temp_storage
def inclusive_sum(d_in, d_out, stream=None, temp_storage=None):
    """Inclusive prefix sum of ``d_in`` into ``d_out`` (CUB DeviceScan::InclusiveSum), in
    ``d_out``'s dtype.

    Parameters
    ----------
    d_in, d_out, stream, temp_storage : as in ``coop.device.inclusive_scan``

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

        x = np.ones(10**4, np.int32)
        d_out = cuda.device_array(x.size, np.int64)
        coop.device.inclusive_sum(cuda.to_device(x), d_out)
        assert (d_out.copy_to_host() == np.arange(1, x.size + 1)).all()
    """
    # (seeded with 0: every tile then takes the look-back's prefix, one block scan in
    # the kernel instead of two, which costs registers)
    _scan("inclusive_sum", d_in, d_out, coop.ops.add, 0, False, stream)


@documented
@takes_temp_storage
def exclusive_sum(d_in, d_out, stream=None, temp_storage=None):
    """Exclusive prefix sum of ``d_in`` into ``d_out`` (CUB DeviceScan::ExclusiveSum):
    ``d_out[0] = 0``, in ``d_out``'s dtype.

    Parameters
    ----------
    d_in, d_out, stream, temp_storage : as in ``coop.device.inclusive_scan``

    Returns
    -------
    None
        {device_returns}

    Example
    -------
    Where each row of a ragged array starts, from the rows' lengths::

        import numpy as np
        import coop
        from numba import cuda

        lengths = np.random.default_rng(5).integers(0, 9, 4000).astype(np.int32)
        d_starts = cuda.device_array_like(lengths)
        coop.device.exclusive_sum(cuda.to_device(lengths), d_starts)
        assert (d_starts.copy_to_host() == np.cumsum(lengths) - lengths).all()
    """
    _scan("exclusive_sum", d_in, d_out, coop.ops.add, 0, True, stream)
