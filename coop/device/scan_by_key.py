"""Device-wide scans by key (CUB's DeviceScan::InclusiveScanByKey, ExclusiveScanByKey and
their sums): a prefix scan of ``d_values`` that starts again wherever the key differs
from the one before it, in one pass over the data.

The scan of ``coop.device.scan``, of ``(head flag, value)`` pairs combined by the
segmented operator ``(a, b) -> (a.flag | b.flag, b.value if b.flag else op(a.value,
b.value))`` (associative whenever ``op`` is; CUB's ScanBySegmentOp): a block claims the
next tile in order and loads its keys and its values (``coop.block.load``,
"warp_transpose"), flags the items whose key differs from the one before them
(``coop.block.flag_heads``, given the key before the tile: CUB's BlockDiscontinuity),
scans the pairs (``coop.block.exclusive_scan`` of one pair per thread, seeded by the
decoupled look-back, ``coop.device.lookback.tile_prefix``), rescans its items from its
thread's prefix and stores the values (``coop.block.store``). The first key always
starts a segment, so a pair of flag 0 is a left identity for every aggregate the scan
meets: it seeds the first tile, and no operator needs an identity. An exclusive scan
writes ``initial`` at each segment's head and ``initial op`` the segment's values before
each other item.
"""

import functools

import numpy as np
from numba import cuda

import coop
from coop._core.backend import SIMULATOR
from coop._core.errors import ArgumentValueError
from coop._core.values import converter, value_type_of
from coop.device._host import (check_length, device_array, device_operator, documented, is_same_memory, launch,
                               launch_stream, takes_temp_storage)
from coop.device._tiles import BLOCK_THREADS, items_per_thread, tile_head_flagger, tile_loader, tile_storer
from coop.device._zip import host_value
from coop.device.lookback import TileStates, claim_tile, tile_prefix
from coop.device.select import adjacent_differs

__all__ = ["inclusive_scan_by_key", "exclusive_scan_by_key", "inclusive_sum_by_key", "exclusive_sum_by_key"]

THREADS = BLOCK_THREADS
TILE_BYTES_PER_THREAD = 16 if SIMULATOR else 96  # (coop.device.scan's: 24 4-byte items, flags included)
FLAG = np.dtype(np.int32)  # (a pair's head flag)


@functools.lru_cache(maxsize=None)
def _scan_by_key_kernel(op, differs, key_dtype, in_dtype, dtype, exclusive, threads=THREADS):
    """(kernel, tile size) scanning values of ``in_dtype`` as ``dtype`` with ``op``,
    starting again where ``differs(key before, key)`` for keys of ``key_dtype``."""
    key_type, in_type, value_dtype = np.dtype(key_dtype), np.dtype(in_dtype), np.dtype(dtype)
    pair_dtypes = (FLAG, value_dtype)
    convert_value = converter(value_type_of(value_dtype))
    convert_pair = converter(value_type_of(pair_dtypes))
    n_items = items_per_thread(TILE_BYTES_PER_THREAD, key_type, in_type, value_dtype, FLAG)  # (flags too)
    tile_size = threads * n_items
    temp_bytes = max(
        coop.block.load.temp_storage_bytes(key_type, threads, n_items, algorithm="warp_transpose"),
        coop.block.load.temp_storage_bytes(in_type, threads, n_items, algorithm="warp_transpose"),
        coop.block.store.temp_storage_bytes(value_dtype, threads, n_items, algorithm="warp_transpose"),
        coop.block.flag_heads.temp_storage_bytes(key_type, threads),
        coop.block.exclusive_scan.temp_storage_bytes(pair_dtypes, threads),
    )
    load_keys = load_values = tile_loader(threads, n_items)
    store = tile_storer(threads, n_items)
    flag_heads = tile_head_flagger(threads, n_items, differs)

    @cuda.jit(device=True)
    def segmented(a, b):
        """CUB's ScanBySegmentOp: ``b``'s value alone if it starts a segment."""
        return convert_pair((a[0] | b[0], b[1] if b[0] else convert_value(op(a[1], b[1]))))

    prefix = tile_prefix(segmented, pair_dtypes)

    @cuda.jit
    def scan_by_key_kernel(d_keys, d_values, d_out, n, status, aggregates, inclusives, epoch, initial):
        temp = cuda.shared.array(temp_bytes, np.uint8, alignment=16)
        tile_slot = cuda.shared.array(1, np.int32)
        keys = cuda.local.array(n_items, key_type)
        loaded = cuda.local.array(n_items, in_type)
        flags = cuda.local.array(n_items, FLAG)
        values = cuda.local.array(n_items, value_dtype)
        tile = claim_tile(status, (n + tile_size - 1) // tile_size, tile_slot)
        base = tile * tile_size
        valid = min(n - base, tile_size)
        load_keys(d_keys[base:], keys, valid, temp)
        load_values(d_values[base:], loaded, valid, temp)
        flag_heads(d_keys, base, valid, keys, flags, temp)  # (the first key starts a segment)
        partial = (flags[0], convert_value(loaded[0]))
        values[0] = partial[1]
        for i in range(1, n_items):
            values[i] = convert_value(loaded[i])
            partial = segmented(partial, (flags[i], values[i]))
        seed = (FLAG.type(0), initial)  # (a left identity of the first tile's aggregate, see above)
        state = (status, aggregates, inclusives, tile, epoch, seed)
        running = coop.block.exclusive_scan(partial, segmented, prefix_op=prefix, prefix_state=state,
                                            threads=threads, temp_storage=temp)
        for i in range(n_items):
            item = (flags[i], values[i])
            if exclusive:
                values[i] = initial if flags[i] else convert_value(op(initial, running[1]))
            running = segmented(running, item)
            if not exclusive:
                values[i] = running[1]
        store(d_out[base:], values, valid, temp)

    return scan_by_key_kernel, tile_size


def _scan_by_key(function, d_keys, d_values, d_out, op, initial, equality, exclusive, stream):
    d_keys = device_array(function, "d_keys", d_keys)
    d_values = device_array(function, "d_values", d_values)
    d_out = device_array(function, "d_out", d_out)
    n = d_keys.size
    check_length(function, "d_values", d_values, n)
    check_length(function, "d_out", d_out, n)
    if is_same_memory(function, "d_out", d_out, "d_keys", d_keys):
        raise ArgumentValueError(f"coop.device.{function}: d_out is d_keys itself: each tile reads the key before "
                                 "it, which another tile may have written (give another array; d_out may be "
                                 "d_values)")
    op = device_operator(function, "op", op)
    differs = adjacent_differs(None if equality is None else device_operator(function, "equality", equality))
    seed = host_value(function, "initial", initial, d_out.dtype)
    stream = launch_stream(stream)
    if n == 0:
        return
    kernel, tile_size = _scan_by_key_kernel(op, differs, d_keys.dtype, d_values.dtype, d_out.dtype, exclusive)
    tiles = -(-n // tile_size)
    states = TileStates(tiles, (FLAG, d_out.dtype), stream)
    launch(kernel, tiles, THREADS, stream, d_keys, d_values, d_out, n, *states.arrays, states.epoch, seed)


@documented
@takes_temp_storage
def inclusive_scan_by_key(d_keys, d_values, d_out, op, equality=None, stream=None, temp_storage=None):
    """Inclusive prefix scan of ``d_values`` with ``op``, starting again at each run of
    equal consecutive keys (CUB DeviceScan::InclusiveScanByKey): ``d_out[i] = d_values[h]
    op ... op d_values[i]``, ``h`` the first position of ``i``'s run of keys.

    Parameters
    ----------
    d_keys : device array
        The keys, one per value, may be empty:
        {device_array}
    d_values : device array
        The values, as long as ``d_keys``.
    d_out : device array
        As long as ``d_keys``; may be ``d_values`` itself, not ``d_keys``. Its dtype is
        the type the values are converted to and combined in.
    op : operator
        {device_combining_operator}
    equality : function, optional
        ``equality(a, b) -> bool``: whether two consecutive keys are equal (one run).
        Default None: ``a == b`` (float16 keys compared as float32; NaNs never equal).
        {device_operator}
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
    The running maximum of each day's readings, the readings sorted by day::

        import numpy as np
        import coop
        from numba import cuda

        rng = np.random.default_rng(14)
        days = np.sort(rng.integers(0, 60, 5000)).astype(np.int32)
        readings = rng.standard_normal(5000).astype(np.float32)
        d_out = cuda.device_array_like(readings)
        coop.device.inclusive_scan_by_key(cuda.to_device(days), cuda.to_device(readings), d_out, max)
        got = d_out.copy_to_host()
        for day in (0, 31, 59):
            assert (got[days == day] == np.maximum.accumulate(readings[days == day])).all()
    """
    # (the first tile's seed: any value of d_out's dtype, 0 converted to it; see above)
    _scan_by_key("inclusive_scan_by_key", d_keys, d_values, d_out, op, 0, equality, False, stream)


@documented
@takes_temp_storage
def exclusive_scan_by_key(d_keys, d_values, d_out, op, initial, equality=None, stream=None, temp_storage=None):
    """Exclusive prefix scan of ``d_values`` with ``op``, starting again at each run of
    equal consecutive keys (CUB DeviceScan::ExclusiveScanByKey): ``d_out[i] = initial op
    d_values[h] op ... op d_values[i-1]``, ``h`` the first position of ``i``'s run of
    keys (``initial`` at ``h`` itself).

    Parameters
    ----------
    d_keys, d_values, d_out, op, equality, stream, temp_storage : as in
        ``coop.device.inclusive_scan_by_key``
    initial : scalar
        Each run's first output, combined before the run's values (required: CUB's
        ``init_value``).

    Returns
    -------
    None
        {device_returns}

    Example
    -------
    Where each item goes in its group's part of an output, the items sorted by group
    (a ragged array's positions within rows)::

        import numpy as np
        import coop
        from numba import cuda

        groups = np.sort(np.random.default_rng(15).integers(0, 50, 4000)).astype(np.int64)
        ones = np.ones(groups.size, np.int32)
        d_within = cuda.device_array(groups.size, np.int32)
        coop.device.exclusive_scan_by_key(cuda.to_device(groups), cuda.to_device(ones), d_within, coop.ops.add, 0)
        first = np.searchsorted(groups, groups)  # (each group's first position)
        assert (d_within.copy_to_host() == np.arange(groups.size) - first).all()
    """
    if initial is None:
        raise ArgumentValueError("coop.device.exclusive_scan_by_key: initial is required (each run's first "
                                 "output, CUB's init_value)")
    _scan_by_key("exclusive_scan_by_key", d_keys, d_values, d_out, op, initial, equality, True, stream)


@documented
@takes_temp_storage
def inclusive_sum_by_key(d_keys, d_values, d_out, equality=None, stream=None, temp_storage=None):
    """Inclusive prefix sum of ``d_values`` by runs of equal consecutive keys (CUB
    DeviceScan::InclusiveSumByKey), in ``d_out``'s dtype.

    Parameters
    ----------
    d_keys, d_values, d_out, equality, stream, temp_storage : as in
        ``coop.device.inclusive_scan_by_key``

    Returns
    -------
    None
        {device_returns}

    Example
    -------
    Each customer's running total, the orders sorted by customer::

        import numpy as np
        import coop
        from numba import cuda

        rng = np.random.default_rng(16)
        customers = np.sort(rng.integers(0, 200, 6000)).astype(np.int32)
        amounts = rng.integers(1, 100, 6000).astype(np.int32)
        d_totals = cuda.device_array(amounts.size, np.int64)
        coop.device.inclusive_sum_by_key(cuda.to_device(customers), cuda.to_device(amounts), d_totals)
        running = np.cumsum(amounts, dtype=np.int64)
        first = np.searchsorted(customers, customers)
        assert (d_totals.copy_to_host() == running - running[first] + amounts[first]).all()
    """
    _scan_by_key("inclusive_sum_by_key", d_keys, d_values, d_out, coop.ops.add, 0, equality, False, stream)


@documented
@takes_temp_storage
def exclusive_sum_by_key(d_keys, d_values, d_out, equality=None, stream=None, temp_storage=None):
    """Exclusive prefix sum of ``d_values`` by runs of equal consecutive keys (CUB
    DeviceScan::ExclusiveSumByKey): 0 at each run's first item, in ``d_out``'s dtype.

    Parameters
    ----------
    d_keys, d_values, d_out, equality, stream, temp_storage : as in
        ``coop.device.inclusive_scan_by_key``

    Returns
    -------
    None
        {device_returns}

    Example
    -------
    Where each row's items start, for rows given as a key per item::

        import numpy as np
        import coop
        from numba import cuda

        rows = np.repeat(np.arange(100, dtype=np.int32), 37)
        widths = np.random.default_rng(17).integers(1, 9, rows.size).astype(np.int32)
        d_starts = cuda.device_array_like(widths)
        coop.device.exclusive_sum_by_key(cuda.to_device(rows), cuda.to_device(widths), d_starts)
        expected = (np.cumsum(widths.reshape(100, 37), axis=1) - widths.reshape(100, 37)).ravel()
        assert (d_starts.copy_to_host() == expected).all()
    """
    _scan_by_key("exclusive_sum_by_key", d_keys, d_values, d_out, coop.ops.add, 0, equality, True, stream)
