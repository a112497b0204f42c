"""Block-wide radix sorting (CUB's BlockRadixSort), built on the ranking of
``coop.block.radix_ranking`` (CUB's BlockRadixRank).

A block of ``T`` threads (``threads``) holds a tile of ``T*N`` keys, ``N``
(``items_per_thread``) per thread in blocked arrangement (item ``i`` of thread ``r`` is
tile item ``r*N + i``). Keys are any of bool, int8-int64, uint8-uint64, float16, float32
and float64, ordered as ``coop._core.radix`` describes (floats: -0.0 sorts equal to
+0.0, NaNs by their bits: positive NaNs after +inf, negative NaNs before -inf).

- ``radix_sort`` sorts the tile, stably, with one ranking and one scatter
  (``coop.block.exchange``'s scatter_to_blocked) per ``radix_bits`` digit of the key,
  least significant first, keys (and values with them) exchanged through shared memory.
  Tuple keys (CUB's decomposer) are packed into words of at most 64 bits
  (``coop._core.radix.key_words``), sorted word by word, least significant first, each
  word's passes carrying the other words and the values.


``threads`` and ``items_per_thread`` are compile-time constants, ``T*N`` at most 65535
(the ranking's counters are 16-bit, as CUB's). Barriers: each call synchronises the
block as it needs; consecutive calls need no barrier between them. Shared memory: the
ranking's and the exchanges of keys and of values in one buffer (the largest of the
three, as CUB's TempStorage union), a static buffer of its own (at most 48 KiB a kernel)
or the caller's ``temp_storage=`` (sized with ``radix_sort.temp_storage_bytes``).
"""

import numpy as np
from numba.cuda import types

from coop._core import radix
from coop._core.backend import cuda
from coop._core.exchange import check_static_shared, required_items_per_thread, required_threads
from coop._core.items import array_lengths_check, array_tuple, generated, items_or_tuple, local_arrays
from coop._core.scratch import Union, storage
from coop._core.specialize import PRIMITIVE_DEFAULT, Signature, device_function, is_none, primitive
from coop._core.values import check_dtype, value_type_of
from coop.block.exchange import exchange_layout, exchanger
from coop.block.radix_ranking import check_radix_bits, check_tile, given_bit, rank_layout, ranker

__all__ = ["radix_sort"]

# what other families compose (the building-block tier: tests/test_layering.py)
BUILDING_BLOCKS = ["sort_layout", "tile_scatterer", "tile_sorter"]


def sort_layout(key_types, value_types, threads, items_per_thread, radix_bits):
    """The sort's scratch, as CUB's TempStorage union: the ranking's, then the exchanges
    of the keys' ordered bits (one per word of ``key_types``' members, see
    ``coop._core.radix.key_words``) and of the values (one per type of ``value_types``)."""
    carried = [word.bits_type for word in radix.key_words(key_types)] + list(value_types)
    exchanges = [exchange_layout(t, threads, items_per_thread, name=str(t)) for t in dict.fromkeys(carried)]
    return Union("radix_sort", rank_layout(threads, radix_bits), *exchanges)


def _sort_temp_storage_bytes(sig, key_type, threads, items_per_thread, value_dtype=None,
                             radix_bits=PRIMITIVE_DEFAULT):
    """Bytes a ``temp_storage=`` array needs for a sort of ``key_dtype`` keys (a tuple of
    dtypes for tuple keys) and ``value_dtype`` values (a tuple of dtypes for a tuple of
    value arrays), ``items_per_thread`` per thread, in blocks of ``threads``,
    ``radix_bits`` bits a pass."""
    key_types = list(key_type.types) if isinstance(key_type, types.BaseTuple) else [key_type]
    for member in key_types:
        radix.check_key_type(sig, member, "dtype")
    block = required_threads(sig, threads)
    n = required_items_per_thread(sig, items_per_thread)
    bits = sig.constant_int(radix_bits, "radix_bits")
    check_radix_bits(sig, bits, "radix_bits", block)
    value_types = []
    if value_dtype is not None:
        for dtype in value_dtype if isinstance(value_dtype, tuple) else (value_dtype,):
            value_types.append(value_type_of(dtype))
            check_dtype(value_types[-1], sig, "value_dtype")
    return sort_layout(key_types, value_types, block, n, bits).nbytes


@primitive("coop.block.radix_sort", _sort_temp_storage_bytes, group="block", uniform=("begin_bit", "end_bit"))
def radix_sort(keys, values=None, threads=None, items_per_thread=None, begin_bit=0, end_bit=None,
               descending=False, blocked_to_striped=False, radix_bits=4, temp_storage=None):
    """Sort a block's tile of keys, and values with them (CUB BlockRadixSort::Sort,
    SortDescending, SortBlockedToStriped): stable, in place, by the bits ``begin_bit``
    to ``end_bit - 1`` of the keys' ordered bits.

    Parameters
    ----------
    keys : items array, or tuple of items arrays
        The thread's ``items_per_thread`` keys, blocked: bool, int8-int64, uint8-uint64,
        float16, float32 or float64 (ordered as the module docstring says); sorted in
        place. A tuple ``(a, b, ...)`` of items arrays is one key per position,
        compared lexicographically, ``a`` most significant (CUB's decomposer): its bits
        are the members' ordered bits concatenated, ``a``'s highest, and ``begin_bit``
        / ``end_bit`` count in them.
    values : items array, or tuple of items arrays, optional
        {moved_values}
    threads : int or tuple, compile-time constant
        {threads} Required.
    items_per_thread : int, compile-time constant
        {radix_tile_length}
    begin_bit : int, default 0
        The least significant bit sorted on (run time allowed; the same in every thread).
    end_bit : int, optional
        One past the most significant bit sorted on; by default the key's width (a
        tuple key's: the sum of its members').
    descending : bool, compile-time constant, default False
        Sort largest first (equal keys keep their order).
    blocked_to_striped : bool, compile-time constant, default False
        Leave the sorted tile striped (item ``i`` of thread ``r`` is tile item
        ``i*threads + r``) instead of blocked: the last scatter goes straight there
        (CUB's SortBlockedToStriped), ready for a coalesced striped store.
    radix_bits : int, compile-time constant, default 4
        Bits sorted per pass, 1 to 8 (CUB's RADIX_BITS). A pass ranks with 16-bit
        digit counters in shared memory (``coop.block.radix_rank``'s "memoize"),
        ``(2**(radix_bits - 1) + 1) * threads`` 32-bit words that must fit in 48 KiB, with
        ``temp_storage`` too: 8 bits in blocks of up to 95 threads, 7 up to 188, 6 up to
        371, 5 up to 721, 4 or fewer in any block. Wider is refused at compile time,
        naming the most bits that fit.
    temp_storage : shared array, optional
        {temp_storage}
        {temp_storage_size} Tuples of dtypes for tuple keys and tuples of value
        arrays. A tile whose buffer exceeds the 48 KiB of static shared memory needs
        one: a dynamic shared array (``cuda.shared.array(0, np.uint8)``, its size given
        at launch).

    Returns
    -------
    None
        Every thread gets its part of the sorted tile in ``keys`` (and ``values``).

    Barriers
    --------
    {block_barriers}

    Here, per pass of ``radix_bits`` bits: one ``cuda.syncthreads()``, the ranking's
    (see ``radix_rank``) and the scatters' of keys and of values (see
    ``coop.block.exchange.scatter_to_blocked``).

    Notes
    -----
    {collective}

    Example
    -------
    Sort each block's tile of float32 keys, carrying their original positions (an
    argsort)::

        import numpy as np
        import coop
        from numba import cuda

        THREADS, ITEMS = 64, 4
        TILE = THREADS * ITEMS

        @cuda.jit
        def sort_tiles(x, out, order):
            keys = cuda.local.array(ITEMS, np.float32)
            positions = cuda.local.array(ITEMS, np.int32)
            base = cuda.blockIdx.x * TILE + cuda.threadIdx.x * ITEMS
            for i in range(ITEMS):
                keys[i] = x[base + i]
                positions[i] = cuda.threadIdx.x * ITEMS + i
            coop.block.radix_sort(keys, positions, threads=THREADS, items_per_thread=ITEMS)
            for i in range(ITEMS):
                out[base + i] = keys[i]
                order[base + i] = positions[i]

        x = np.random.default_rng(1).standard_normal(2 * TILE).astype(np.float32)
        out, order = np.zeros_like(x), np.zeros(x.size, np.int32)
        sort_tiles[2, THREADS](x, out, order)
        tiles = x.reshape(2, TILE)
        assert (out.reshape(2, TILE) == np.sort(tiles, axis=1)).all()
        assert (order.reshape(2, TILE) == np.argsort(tiles, axis=1, kind="stable")).all()
    """
    sig = Signature("coop.block.radix_sort")
    key_types, keys_tuple = items_or_tuple(sig, keys, "keys")
    for member in key_types:
        radix.check_key_type(sig, member, "keys")
    value_types, values_tuple = items_or_tuple(sig, values, "values") if not is_none(values) else ([], False)
    block = required_threads(sig, threads)
    n = required_items_per_thread(sig, items_per_thread)
    check_tile(sig, block, n)
    bits = sig.constant_int(radix_bits, "radix_bits")
    check_radix_bits(sig, bits, "radix_bits", block)
    words = radix.key_words(key_types)
    width = sum(word.width for word in words)
    begin = _bit_argument(sig, begin_bit, "begin_bit", width)
    end = _bit_argument(sig, end_bit, "end_bit", width)
    if begin is not None and end is not None and begin > end:
        raise sig.error("end_bit", f"must not be below begin_bit ({begin}), got {end}")
    is_descending = sig.constant_bool(descending, "descending")
    striped = sig.constant_bool(blocked_to_striped, "blocked_to_striped")

    # One buffer for the phases, as CUB's TempStorage union: the ranking, then the
    # exchanges of the keys' words and of the values.
    layout = sort_layout(key_types, value_types, block, n, bits)
    check_static_shared(sig, temp_storage, layout, "items_per_thread",
                        f"makes a tile of {block} x {n} keys{' and values' if value_types else ''}")
    # (a caller's buffer needs no barrier of its own: each pass starts with one)
    scratch, _ = storage(sig, temp_storage, layout, owner=(sig.primitive, "union"))

    sort_words = tile_sorter(sig, key_types, value_types, block, n, bits, is_descending, striped, layout,
                             sig.block_shape(threads))
    as_key_arrays = array_tuple(keys_tuple)
    as_value_arrays = array_tuple(values_tuple, bool(value_types))
    end_of = _key_width(width) if is_none(end_bit) else given_bit
    check_keys = array_lengths_check(sig.primitive, "keys", n, len(key_types))
    check_values = array_lengths_check(sig.primitive, "values", n, len(value_types))

    def impl(keys, values, begin_bit, end_bit, temp_storage):
        key_arrays = as_key_arrays(keys)
        value_arrays = as_value_arrays(values)
        check_keys(key_arrays)
        check_values(value_arrays)
        sort_words(key_arrays, value_arrays, begin_bit, end_of(end_bit), scratch(temp_storage))

    return impl


def tile_sorter(sig, key_types, value_types, threads, items_per_thread, radix_bits, descending, striped, layout,
                shape=None):
    """The sort as a building block: a device function ``sort(key_arrays,
    value_arrays, begin_bit, end_bit, buffer)`` sorting a block's tile of keys of
    ``key_types`` (a tuple of items arrays, one per member, most significant first),
    and values of ``value_types`` with them, by bits ``begin_bit`` to ``end_bit`` of
    their ordered bits, in ``buffer`` laid out by ``layout`` (which holds
    ``sort_layout``'s at offset 0), in blocks of the constant ``shape``
    (``Signature.block_shape``) where known. Every pass starts with a barrier."""
    block, n, bits, is_descending = threads, items_per_thread, radix_bits, descending
    words = radix.key_words(key_types)
    # What moves with each pass's ranks: the words of the keys' ordered bits (the word
    # being ranked among them), then the values.
    # (the phases get the buffer itself; being a caller's, each waits before writing it)
    carried = [word.bits_type for word in words] + value_types
    scatter_all = tile_scatterer(sig, "scatter_to_blocked", carried, block, n, shape)
    scatter_all_last = tile_scatterer(sig, "scatter_to_striped" if striped else "scatter_to_blocked", carried, block,
                                      n, shape)
    passes = _sequence([
        _word_passes(index, word, ranker(word.digit, block, n, bits, is_descending, True, False, layout,
                                         shape=shape)[0], bits,
                     scatter_all, scatter_all_last if last else scatter_all, last)
        for index, (word, last) in enumerate(zip(words, [False] * (len(words) - 1) + [True]))
    ], "word_arrays, carried, ranks, begin_bit, end_bit, buffer")
    fill_words = _each([_word_filler(word, n) for word in words])
    fill_keys = _each([_key_filler(word, n) for word in words])

    allocate_words = local_arrays(n, [np.dtype(str(word.bits_type)) for word in words])

    def sort(key_arrays, value_arrays, begin_bit, end_bit, buffer):
        word_arrays = allocate_words()
        fill_words(word_arrays, key_arrays, None)
        ranks = cuda.local.array(n, np.int32)
        passes(word_arrays, word_arrays + value_arrays, ranks, begin_bit, end_bit, buffer)
        fill_keys(word_arrays, key_arrays, None)

    return device_function(sort)


def tile_scatterer(sig, form, carried_types, threads, items_per_thread, shape=None):
    """A device function ``scatter(carried, ranks, buffer)`` moving each items array of
    the tuple ``carried`` (of ``carried_types``) in place to the tile positions
    ``ranks`` give, by the exchange ``form`` (``"scatter_to_blocked"`` or
    ``"scatter_to_striped"``) through ``buffer`` (a uint64 array holding each type's
    exchange layout at offset 0), one array after another; each exchange starts with a
    barrier."""
    shared = types.Array(types.uint64, 1, "C")
    return _each([_scatter_in_place(exchanger(sig, form, t, threads, items_per_thread, shared, shape=shape))
                  for t in carried_types])


def _word_passes(index, word, rank, radix_bits, scatter_all, scatter_all_last, last):
    """A device function ``passes(word_arrays, carried, ranks, begin_bit, end_bit,
    buffer)`` sorting by the bits of ``word`` (``word_arrays[index]``) from ``begin_bit``
    to ``end_bit`` (of the key's concatenated bits): one ranking and one scatter of
    every ``carried`` array per ``radix_bits`` bits. The ``last`` word (the most
    significant) sorts even an empty range (a ranking by no bits: each key keeps its
    place), so that its last scatter (``scatter_all_last``) leaves the tile in the
    arrangement asked for; the others skip it."""
    offset, width = word.offset, word.width
    skips_empty = not last

    def passes(word_arrays, carried, ranks, begin_bit, end_bit, buffer):
        ordered = word_arrays[index]
        low = min(max(begin_bit - offset, 0), width)
        high = min(max(end_bit - offset, low), width)
        if skips_empty and low >= high:
            return
        bit = low
        while True:
            # the last scatter's reads (this call's, or the previous call's) are done
            # before the counters overwrite the buffer
            cuda.syncthreads()
            rank(ordered, ranks, bit, min(radix_bits, high - bit), None, None, buffer)
            bit += radix_bits
            if bit >= high:
                break
            # (each scatter waits for every thread to be done with the buffer first)
            scatter_all(carried, ranks, buffer)
        scatter_all_last(carried, ranks, buffer)

    return device_function(passes)


def _word_filler(word, n):
    """``fill(ordered, key_arrays, unused)``: ``word``'s ordered bits of the thread's
    ``n`` keys (its members' ordered bits, packed) into the items array ``ordered``."""
    pack = radix.word_packer(word)

    def fill(ordered, key_arrays, unused):
        for i in range(n):
            ordered[i] = pack(key_arrays, i)

    return device_function(fill)


def _key_filler(word, n):
    """``fill(ordered, key_arrays, unused)``: the keys' members in ``word`` back from the
    word's ordered bits in the items array ``ordered``."""
    steps = []
    for member, member_type, at in word.members:
        unpack, from_ordered = radix.unpack(word.bits_type, member_type, at), radix.from_ordered(member_type)
        steps.append(_member_filler(member, unpack, from_ordered, n))
    return _sequence(steps, "ordered, key_arrays, unused")


def _member_filler(member, unpack, from_ordered, n):
    def fill(ordered, key_arrays, unused):
        keys = key_arrays[member]
        for i in range(n):
            keys[i] = from_ordered(unpack(ordered[i]))

    return device_function(fill)


# -- composing device functions over tuples (the members of tuple keys, the arrays carried)


def _each(fns):
    """A device function ``apply(elements, a, b)`` calling ``fns[k](elements[k], a, b)``
    for each element of the tuple ``elements``."""
    if not fns:
        return _nothing
    head, tail = fns[0], _each(fns[1:])

    def apply(elements, a, b):
        head(elements[0], a, b)
        tail(elements[1:], a, b)

    return device_function(apply)


def _sequence(fns, parameters):
    """A device function of ``parameters`` (their names, as in a ``def``) calling each of
    ``fns`` in turn with them. (Named, not ``*args``: numba-cuda-mlir cannot inline a
    call with ``*args``.)"""
    if len(fns) == 1:
        return fns[0]
    calls = "".join(f"    step_{k}({parameters})\n" for k in range(len(fns)))
    return generated(f"def run({parameters}):\n{calls}", "run", **{f"step_{k}": fn for k, fn in enumerate(fns)})


def _scatter_in_place(exchange):
    def scatter(items, ranks, buffer):
        exchange(items, items, ranks, None, buffer)

    return device_function(scatter)


@device_function
def _nothing(elements, a, b):
    pass


def _bit_argument(sig, bit, param, width):
    """A begin_bit/end_bit argument's value where it is a constant (checked to lie in 0 to
    the key's ``width``), else None (run time, or end_bit left out)."""
    if is_none(bit):
        return None
    ty = sig.run_time_int(bit, param)
    if isinstance(ty, types.IntegerLiteral):
        value = ty.literal_value
    elif isinstance(ty, int):
        value = ty
    else:
        return None
    if not 0 <= value <= width:
        raise sig.error(param, f"must be from 0 to {width} (the key's width in bits), got {value}")
    return value


def _key_width(width):
    def key_width(end_bit):
        return width

    return device_function(key_width)
