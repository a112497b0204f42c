"""Run-length coding of a block's tile: decoding runs into items (CUB's
BlockRunLengthDecode) and encoding items into runs (coop's; CUB has no block-level
encode).

- ``run_length_decode(run_values, run_lengths, decoded, ...)``: the block holds ``T*R``
  runs (``R`` per thread, blocked: run ``j`` of thread ``r`` is run ``r*R + j``), each a
  value and a length; the call writes a window of ``T*D`` decoded items (``D`` =
  ``len(decoded)`` per thread, blocked) starting at decoded position
  ``from_decoded_offset``, and returns the total decoded size. A decode longer than
  one window is a loop of calls with ``from_decoded_offset`` advancing by ``T*D``.
- ``run_length_encode(items, unique, counts, ...)``: the runs of equal consecutive items
  of the blocked tile, in order, compacted into ``unique`` and ``counts`` (blocked);
  returns the number of runs. ``run_length_decode(unique, counts, ...)`` gives the tile
  back.

Values may be of any type, or tuples (a tuple of items arrays of one length).
"""

from numba.cuda import types

import numpy as np

from coop._core.backend import cuda, device_function
from coop._core.constants import without_dead_branches
from coop._core.exchange import check_static_shared, required_items_per_thread, required_threads
from coop._core.items import TileItems
from coop._core.misuse import size_check
from coop._core.scratch import Region, Struct, block_rank_of, loader, storage, store, storer
from coop._core.specialize import Signature, is_none, primitive
from coop._core.values import value_type_of
from coop.block.scan import exclusive_sum_in_scratch
from coop.block.shuffle import edge_layout

__all__ = ["run_length_decode", "run_length_encode"]


# -- decode -----------------------------------------------------------------------------------


def _offset_type(length_type):
    """Decoded positions are int32 (int64 for 64-bit run lengths)."""
    return types.int64 if length_type.bitwidth == 64 else types.int32


def _decode_layout(value_type, offset_type, threads, runs_per_thread):
    """The scan of the run lengths, then the runs' values and decoded offsets, the total
    after the last run's (CUB's BlockRunLengthDecode TempStorage, but a struct, not a
    union: the runs are written right after the scan, without a barrier between)."""
    runs = threads * runs_per_thread
    scan, _ = exclusive_sum_in_scratch(offset_type, threads)
    return Struct(
        "run_length_decode",
        scan,
        Struct("runs", Region("values", value_type, runs), Region("offsets", offset_type, runs + 1)),
    )


def _decode_temp_storage_bytes(sig, value_type, threads, runs_per_thread, length_dtype=np.int32):
    """Bytes a ``temp_storage=`` array needs to decode runs of ``dtype`` values (a tuple
    of dtypes for tuples) with ``length_dtype`` lengths, ``runs_per_thread`` per thread,
    in blocks of ``threads``."""
    return _decode_layout(value_type, _offset_type(value_type_of(length_dtype)), required_threads(sig, threads),
                          _runs_per_thread(sig, runs_per_thread)).nbytes


def _runs_per_thread(sig, runs_per_thread):
    if is_none(runs_per_thread):
        raise sig.error("runs_per_thread", "is required: the length of run_values and run_lengths as a "
                                           "compile-time constant (it sizes the shared memory)")
    count = sig.constant_int(runs_per_thread, "runs_per_thread")
    if count < 1:
        raise sig.error("runs_per_thread", f"must be at least 1, got {count}")
    return count


def _decoder(values, decoded, offset_type, block, r, layout, with_offsets, shape):
    """``decode(run_values, run_lengths, decoded, offsets, from_decoded_offset,
    runs_stored, buffer) -> total`` (``shape``: the block's, ``Signature.block_shape``)."""
    _, exclusive_sum = exclusive_sum_in_scratch(offset_type, block, shape)
    block_rank = block_rank_of(shape)
    runs = block * r
    steps = runs.bit_length()
    values_slot, offsets_slot = layout.slot("runs.values"), layout.slot("runs.offsets")
    load_value, load_offset = loader(values.value_type), loader(offset_type)
    store_offset = storer(offset_type)
    read, write = values.read, decoded.write
    length_of = decoded.length
    as_offset = np.dtype(str(offset_type)).type

    def decode(run_values, run_lengths, decoded, offsets, from_decoded_offset, runs_stored, buffer):
        rank = block_rank()
        if not runs_stored:
            thread_total = as_offset(0)
            for j in range(r):
                thread_total += as_offset(run_lengths[j])
            cuda.syncthreads()  # (a previous call's reads of the runs are done)
            running, total = exclusive_sum(thread_total, buffer)
            for j in range(r):
                store(buffer, values_slot + rank * r + j, read(run_values, j))
                store_offset(buffer, offsets_slot + rank * r + j, running)
                running += as_offset(run_lengths[j])
            if rank == block - 1:
                store_offset(buffer, offsets_slot + runs, total)
            cuda.syncthreads()
        total = load_offset(buffer, offsets_slot + runs)
        d = length_of(decoded)
        # (positions and run indices narrowed back after each operation: Numba computes
        # int32 arithmetic in 64 bits, which doubles the search's instructions)
        start = as_offset(as_offset(from_decoded_offset) + as_offset(rank * d))
        # the last run starting at or before ``start`` (CUB's StaticUpperBound, minus one):
        # zero-length runs before it are skipped
        low, high = np.int32(0), np.int32(runs)
        for _ in range(steps):
            middle = np.int32(min(np.int32(low + high) >> 1, runs - 1))
            if start < load_offset(buffer, offsets_slot + middle):
                high = middle
            else:
                low = np.int32(middle + 1)
        run = np.int32(max(low - 1, 0))
        run_begin = load_offset(buffer, offsets_slot + run)
        next_begin = load_offset(buffer, offsets_slot + run + 1)
        value = load_value(buffer, values_slot + run)
        for i in range(d):
            position = as_offset(start + i)
            if position < total:
                while next_begin <= position:  # (runs of length 0 end where they begin)
                    run = np.int32(run + 1)
                    run_begin = next_begin
                    value = load_value(buffer, values_slot + run)
                    next_begin = load_offset(buffer, offsets_slot + run + 1)
                write(decoded, i, value)
                if with_offsets:
                    offsets[i] = position - run_begin
        return total

    return device_function(without_dead_branches(decode))


@primitive("coop.block.run_length_decode", _decode_temp_storage_bytes, group="block",
           uniform=("from_decoded_offset", "runs_stored"))
def run_length_decode(run_values, run_lengths, decoded, offsets=None, from_decoded_offset=0, threads=None,
                      runs_per_thread=None, temp_storage=None, runs_stored=False):
    """Decode a window of a block's runs into items (CUB
    BlockRunLengthDecode::RunLengthDecode, constructed from run lengths).

    Parameters
    ----------
    run_values : items array or tuple of items arrays
        The thread's ``R`` runs' values, blocked (any value type; a tuple of items
        arrays of one length for tuples).
    run_lengths : items array
        The thread's ``R`` runs' lengths (integers, 0 or more; a run of length 0
        decodes to nothing).
    decoded : items array or tuple of items arrays
        Receives the thread's ``D`` decoded items (``D = len(decoded)``, blocked): tile
        positions ``from_decoded_offset + rank*D + i``. Items at positions at or past
        the total decoded size are left unchanged.
    offsets : items array, optional
        Receives each decoded item's offset within its run (CUB's item_offsets):
        integers, at least ``D`` long.
    from_decoded_offset : int, run time, default 0
        The window's first decoded position (the same in every thread).
    threads : int or tuple, compile-time constant
        {threads} Required.
    runs_per_thread : int, compile-time constant
        ``R``, the length of ``run_values`` and ``run_lengths`` (required).
    temp_storage : shared array, optional
        {temp_storage}
        {temp_storage_size}
    runs_stored : bool, run time, default False
        True: an earlier call, with the same ``temp_storage`` (or none in both) and the
        same runs, stored them, and no other call has used that storage since; this call
        decodes from them without scanning and storing the runs again (what CUB's
        decoder object keeps between its RunLengthDecode calls). The same in every
        thread. A loop of windows passes ``runs_stored=window > 0`` (see the example).
        With True after anything else, the decoded items are undefined.

    Returns
    -------
    int
        The total decoded size (the sum of the block's run lengths), to every thread:
        int32, or int64 for 64-bit run lengths.

    Barriers
    --------
    {block_barriers}

    Here: with ``runs_stored=False``, two ``cuda.syncthreads()`` and the scan's (CUB's
    decoder constructor); with ``runs_stored=True``, none (CUB's RunLengthDecode).

    Notes
    -----
    {collective}

    Example
    -------
    Decode each block's runs window by window, ``THREADS * DECODED`` items per call,
    the runs stored by the first call only::

        import numpy as np
        import coop
        from numba import cuda

        THREADS, RUNS, DECODED = 32, 2, 3

        @cuda.jit
        def expand(values, lengths, out, sizes):
            v = cuda.local.array(RUNS, np.float32)
            n = cuda.local.array(RUNS, np.int32)
            items = cuda.local.array(DECODED, np.float32)
            for j in range(RUNS):
                v[j] = values[cuda.threadIdx.x * RUNS + j]
                n[j] = lengths[cuda.threadIdx.x * RUNS + j]
            window = 0
            while True:
                total = coop.block.run_length_decode(v, n, items, from_decoded_offset=window,
                                                     threads=THREADS, runs_per_thread=RUNS,
                                                     runs_stored=window > 0)
                for i in range(DECODED):
                    position = window + cuda.threadIdx.x * DECODED + i
                    if position < total:
                        out[position] = items[i]
                window += THREADS * DECODED
                if window >= total:
                    break
            sizes[0] = total

        rng = np.random.default_rng(2)
        values = rng.standard_normal(THREADS * RUNS).astype(np.float32)
        lengths = rng.integers(0, 5, THREADS * RUNS).astype(np.int32)
        out, sizes = np.zeros(lengths.sum(), np.float32), np.zeros(1, np.int32)
        expand[1, THREADS](values, lengths, out, sizes)
        assert sizes[0] == lengths.sum() and (out == np.repeat(values, lengths)).all()
    """
    sig = Signature("coop.block.run_length_decode")
    values = TileItems(sig, run_values, "run_values")
    length_type = sig.items(run_lengths, "run_lengths")
    if not isinstance(length_type, types.Integer):
        raise sig.error("run_lengths", f"must be an items array of integers, got {length_type}")
    out = TileItems(sig, decoded, "decoded")
    values.check_output(sig, decoded, "decoded")
    with_offsets = not is_none(offsets)
    if with_offsets:
        sig.writable(offsets, "offsets")
        if not isinstance(sig.items(offsets, "offsets"), types.Integer):
            raise sig.error("offsets", f"must be an items array of integers, got {offsets.dtype}")
    sig.run_time_int(from_decoded_offset, "from_decoded_offset")
    sig.run_time_bool(runs_stored, "runs_stored")
    block = required_threads(sig, threads)
    r = _runs_per_thread(sig, runs_per_thread)
    offset_type = _offset_type(length_type)
    layout = _decode_layout(values.value_type, offset_type, block, r)
    check_static_shared(sig, temp_storage, layout, "runs_per_thread", f"makes {block} x {r} runs")
    scratch, _ = storage(sig, temp_storage, layout, owner=(sig.primitive,))
    decode = _decoder(values, out, offset_type, block, r, layout, with_offsets, sig.block_shape(threads))
    check_values = values.size_checker(sig.primitive, "run_values", exact=True)
    check_decoded = out.checker(sig.primitive, "decoded")
    check_lengths = size_check(sig.primitive, "run_lengths", exact=True)
    check_offsets = size_check(sig.primitive, "offsets") if with_offsets else _no_check

    def impl(run_values, run_lengths, decoded, offsets, from_decoded_offset, temp_storage, runs_stored):
        check_values(run_values, r)
        check_lengths(run_lengths, r)
        check_offsets(offsets, check_decoded(decoded))
        return decode(run_values, run_lengths, decoded, offsets, from_decoded_offset, runs_stored,
                      scratch(temp_storage))

    return impl


# -- encode -----------------------------------------------------------------------------------


def _encode_layout(value_type, threads, items_per_thread):
    """The encode's scratch: the scan of the heads, the threads' last items and the
    compacted runs (their items, and where they start), side by side: each phase writes
    its part while the previous one's may still be read."""
    tile = threads * items_per_thread
    scan, _ = exclusive_sum_in_scratch(types.int32, threads)
    return Struct(
        "run_length_encode",
        Struct("heads", scan, edge_layout(value_type, threads, True, False)),
        Struct("runs", Region("unique", value_type, tile), Region("starts", types.int32, tile + 1)),
    )


def _encode_temp_storage_bytes(sig, value_type, threads, items_per_thread):
    """Bytes a ``temp_storage=`` array needs to encode tiles of ``dtype`` items (a tuple
    of dtypes for tuples), ``items_per_thread`` per thread, in blocks of ``threads``."""
    return _encode_layout(value_type, required_threads(sig, threads),
                          required_items_per_thread(sig, items_per_thread)).nbytes


def _encoder(tile_items, unique_items, block, n, layout, partial, shape):
    """``encode(items, unique, counts, valid_items, buffer) -> runs`` (``shape``: the
    block's, ``Signature.block_shape``)."""
    _, exclusive_sum = exclusive_sum_in_scratch(types.int32, block, shape)
    block_rank = block_rank_of(shape)
    read, write = tile_items.read, unique_items.write
    last_slot = layout.slot("heads.edges.last_items")
    unique_slot, starts_slot = layout.slot("runs.unique"), layout.slot("runs.starts")
    value_type = tile_items.value_type
    load_item, load_start = loader(value_type), loader(types.int32)
    store_start = storer(types.int32)
    tile = block * n

    def encode(items, unique, counts, valid_items, buffer):
        rank = block_rank()
        base = rank * n
        if partial:
            end = min(max(valid_items, 0), tile)
        else:
            end = tile
        cuda.syncthreads()  # (a previous call's reads are done)
        store(buffer, last_slot + rank, read(items, n - 1))
        cuda.syncthreads()
        before = read(items, 0)
        if rank > 0:
            before = load_item(buffer, last_slot + rank - 1)
        is_head = cuda.local.array(n, np.bool_)
        heads = np.int32(0)
        for i in range(n):
            head = False
            if base + i < end:
                if i > 0:
                    head = read(items, i) != read(items, i - 1)
                elif rank > 0:
                    head = read(items, 0) != before
                else:
                    head = True
            is_head[i] = head
            heads += np.int32(head)
        run, runs = exclusive_sum(heads, buffer)
        for i in range(n):
            if is_head[i]:
                store(buffer, unique_slot + run, read(items, i))
                store_start(buffer, starts_slot + run, base + i)
                run += 1
        if rank == 0:
            store_start(buffer, starts_slot + runs, end)
        cuda.syncthreads()
        for i in range(n):
            k = base + i
            if k < runs:
                write(unique, i, load_item(buffer, unique_slot + k))
                counts[i] = load_start(buffer, starts_slot + k + 1) - load_start(buffer, starts_slot + k)
            else:
                counts[i] = 0
        return runs

    return device_function(without_dead_branches(encode))


@primitive("coop.block.run_length_encode", _encode_temp_storage_bytes, group="block", uniform=("valid_items",))
def run_length_encode(items, unique, counts, threads=None, items_per_thread=None, valid_items=None,
                      temp_storage=None):
    """The runs of equal consecutive items of a block's tile, compacted in order: each
    run's item and its length (coop's; CUB users build it from BlockDiscontinuity, a
    scan and a scatter, as this does).

    Parameters
    ----------
    items : items array or tuple of items arrays
        The thread's ``N`` items, blocked (any value type compared with ``==``; a tuple
        of items arrays of one length for tuples, compared member by member). NaNs
        differ from every item, so each is a run of its own.
    unique : items array or tuple of items arrays
        Receives the runs' items, blocked: run ``k`` (in tile order) is item ``k % N``
        of thread ``k // N``. Entries past the last run are left unchanged. The same
        form and types as ``items``; it may be ``items``.
    counts : items array
        Receives the runs' lengths, blocked as ``unique``, and 0 past the last run
        (integers, at least ``N`` long).
    threads : int or tuple, compile-time constant
        {threads} Required.
    items_per_thread : int, compile-time constant
        ``N``, the length of ``items`` (required: it sizes the shared memory).
    valid_items : int, optional
        A partial tile (the same in every thread): only the first ``valid_items`` items
        are encoded.
        {blocked_positions}
    temp_storage : shared array, optional
        {temp_storage}
        {temp_storage_size}

    Returns
    -------
    int32
        The number of runs in the tile, to every thread.

    Barriers
    --------
    {block_barriers}

    Here: three ``cuda.syncthreads()`` and the scan's.

    Notes
    -----
    {collective}

    Example
    -------
    Encode a tile, then decode the runs back into it::

        import numpy as np
        import coop
        from numba import cuda

        THREADS, ITEMS = 32, 4

        @cuda.jit
        def round_trip(x, out, unique_out, count_out, run_count):
            items = cuda.local.array(ITEMS, np.int16)
            unique = cuda.local.array(ITEMS, np.int16)
            counts = cuda.local.array(ITEMS, np.int32)
            for i in range(ITEMS):
                items[i] = x[cuda.threadIdx.x * ITEMS + i]
            runs = coop.block.run_length_encode(items, unique, counts, threads=THREADS,
                                                items_per_thread=ITEMS)
            coop.block.run_length_decode(unique, counts, items, threads=THREADS, runs_per_thread=ITEMS)
            for i in range(ITEMS):
                out[cuda.threadIdx.x * ITEMS + i] = items[i]
                unique_out[cuda.threadIdx.x * ITEMS + i] = unique[i]
                count_out[cuda.threadIdx.x * ITEMS + i] = counts[i]
            run_count[0] = runs

        x = np.repeat(np.arange(80, dtype=np.int16) % 7, np.arange(80) % 4 + 1)[: THREADS * ITEMS]
        out, unique, counts = np.zeros_like(x), np.zeros_like(x), np.zeros(x.size, np.int32)
        run_count = np.zeros(1, np.int32)
        round_trip[1, THREADS](x, out, unique, counts, run_count)
        starts = np.flatnonzero(np.concatenate(([True], x[1:] != x[:-1])))
        runs = run_count[0]
        assert runs == starts.size and (out == x).all()
        assert (unique[:runs] == x[starts]).all() and (counts[runs:] == 0).all()
        assert (counts[:runs] == np.diff(np.append(starts, x.size))).all()
    """
    sig = Signature("coop.block.run_length_encode")
    tile_items = TileItems(sig, items, "items")
    unique_items = TileItems(sig, unique, "unique")
    tile_items.check_output(sig, unique, "unique")
    sig.writable(counts, "counts")
    if not isinstance(sig.items(counts, "counts"), types.Integer):
        raise sig.error("counts", f"must be an items array of integers, got {counts.dtype}")
    block = required_threads(sig, threads)
    n = required_items_per_thread(sig, items_per_thread)
    partial = sig.run_time_int(valid_items, "valid_items") is not None
    layout = _encode_layout(tile_items.value_type, block, n)
    check_static_shared(sig, temp_storage, layout, "items_per_thread", f"makes a tile of {block} x {n} items")
    scratch, _ = storage(sig, temp_storage, layout, owner=(sig.primitive,))
    encode = _encoder(tile_items, unique_items, block, n, layout, partial, sig.block_shape(threads))
    check_items = tile_items.size_checker(sig.primitive, "items", exact=True)
    check_unique = unique_items.size_checker(sig.primitive, "unique")
    check_counts = size_check(sig.primitive, "counts")

    def impl(items, unique, counts, valid_items, temp_storage):
        check_items(items, n)
        check_unique(unique, n)
        check_counts(counts, n)
        return encode(items, unique, counts, valid_items, scratch(temp_storage))

    return impl


@device_function
def _no_check(array, minimum):
    pass
