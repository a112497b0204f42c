"""Merge sorting of a tile held by a group of threads: the machinery behind
``coop.block.merge_sort`` (CUB's BlockMergeSort) and ``coop.warp.merge_sort``
(WarpMergeSort), which differ only in who the group is (the block, or a logical warp),
how its members synchronise and where its slice of shared memory starts.

A group of ``threads`` threads holds ``threads * n`` keys, ``n`` per thread, blocked.
Each thread first sorts its own keys (CUB's StableOddEvenSort: ``n`` rounds of
compare-and-swap of neighbours, unrolled, in registers); then rounds of merging double
the sorted runs: in each, the threads write their keys to shared memory (blocked),
and each finds where its ``n`` outputs start in the merge of its pair of runs by a
binary search along its diagonal (merge path: Odeh, Green, Mwassi, Shmueli and Birk,
2012) and merges ``n`` keys serially from there, recording where each came from so
that values can follow by a gather.

CUB loops while the merged runs span at most ``threads`` threads, so it needs a power
of two; here the rounds go on up to the next power of two, and runs are clipped to the
tile (as CUB clips them to ``valid_items``), so any group size sorts. Stable: on equal
keys the merge takes the earlier run's key first, and the odd-even rounds swap only
strictly out-of-order neighbours.

Keys and values may be tuples of items arrays: a thread's item ``i`` is then the tuple
of the members' items ``i``, read and written through ``coop._core.items``' accessors,
and a shared-memory slot holds the whole tuple. The keys' ``key_order`` compares them.

The merge path and the serial merge are also pieces of their own (``path_finder``,
``serial_merger``): ``coop.device.merge_sort`` merges a tile of two runs with them, and
finds its tiles' starts in global memory with the same search.
"""

import functools
import operator
from typing import NamedTuple

import numpy as np
from numba.cuda import types

from coop._core.backend import cuda
from coop._core.constants import specialised
from coop._core.items import TileItems, accessors_of, generated
from coop._core.scratch import Region, Union, loader, store
from coop._core.specialize import device_function, is_function, is_none
from coop._core.values import check_dtype, chosen, value_type_of

I32 = np.int32


def host_value_type(sig, value_dtype):
    """The value type of a host-side ``temp_storage_bytes``'s ``value_dtype`` (None: keys
    only)."""
    if value_dtype is None:
        return None
    value_type = value_type_of(value_dtype)
    check_dtype(value_type, sig, "value_dtype")
    return value_type


class SortArguments(NamedTuple):
    """A merge sort's arguments, checked (``sort_arguments``)."""

    key_type: types.Type  #: the keys' item type (a tuple of items arrays: the tuple of their item types)
    value_type: types.Type  #: the values', likewise, or None (keys only)
    partial: bool  #: whether ``valid_items`` is given
    check_lengths: object  #: ``check_lengths(keys, values, n)``: (at link time) every array holds ``n`` items
    order: object  #: ``order(compare, a, b)``: whether key ``a`` goes before key ``b`` (``key_order``)


def sort_arguments(sig, keys, compare, values, valid_items, oob_default):
    """The ``SortArguments`` of a merge sort, checked: keys and values items arrays or
    tuples of items arrays, ``compare`` a comparator of two keys, ``oob_default`` a key,
    required with ``valid_items``."""
    key_items = TileItems(sig, keys, "keys")
    key_type = key_items.value_type
    sig.operator(compare, key_type, "compare", arity=2, result_type=types.boolean)
    value_items = None if is_none(values) else TileItems(sig, values, "values")
    partial = not is_none(valid_items)
    if partial:
        sig.run_time_int(valid_items, "valid_items")
        if is_none(oob_default):
            raise sig.error("oob_default", "is required with valid_items: a key that sorts after every valid key")
        sig.single_value(oob_default, "oob_default", key_type)
    check_lengths = specialised(
        _check_lengths, check_keys=key_items.size_checker(sig.primitive, "keys", exact=True),
        check_values=None if value_items is None else value_items.size_checker(sig.primitive, "values", exact=True),
        with_values=value_items is not None)
    return SortArguments(key_type, None if value_items is None else value_items.value_type, partial, check_lengths,
                         key_order(key_type, compare))


@device_function
def _check_lengths(keys, values, n, check_keys, check_values, with_values):
    check_keys(keys, n)
    if with_values:
        check_values(values, n)


#: The comparisons of ``operator`` that a tuple key's ``key_order`` writes out, and what
#: each gives for equal keys
_TUPLE_COMPARISONS = {operator.lt: ("<", False), operator.le: ("<=", True), operator.gt: (">", False),
                      operator.ge: (">=", True)}


def key_order(key_type, compare):
    """``order(compare, a, b)``, whether key ``a`` goes before key ``b``: ``compare(a,
    b)``; for tuple keys and ``compare`` a comparison of ``operator`` (``lt``, ``le``,
    ``gt``, ``ge``), that comparison written out member by member, as Python and Numba
    compare tuples (the first members that differ decide), since numba-cuda-mlir 0.6
    cannot lower a comparison of tuples."""
    if isinstance(key_type, types.BaseTuple):
        for function, (symbol, if_equal) in _TUPLE_COMPARISONS.items():
            if is_function(compare, function):
                return _tuple_comparison(len(key_type), symbol, if_equal)
    return call_compare


@functools.lru_cache(maxsize=None)
def _tuple_comparison(members, symbol, if_equal):
    steps = "".join(f"    if a[{k}] != b[{k}]:\n        return a[{k}] {symbol} b[{k}]\n" for k in range(members))
    return generated(f"def order(compare, a, b):\n{steps}    return {if_equal}\n", "order")


@device_function
def call_compare(compare, a, b):
    return compare(a, b)


def group_sorter(key_type, value_type, n, threads, sync, partial, order=call_compare):
    """A device function ``sort(keys, values, compare, buffer, base, value_base, rank,
    valid_items, oob_default, mask)`` sorting the tile of a group of ``threads`` (the
    caller's rank in it ``rank``), ``n`` keys (and values) per thread, through its
    ``tile_layout`` in ``buffer`` (keys from slot ``base``, values from ``value_base``),
    ``sync(mask)`` synchronising the group. Keys and values as ``sort_arguments`` gives
    their types: items arrays, or tuples of items arrays; ``order`` their ``key_order``."""
    with_values = value_type is not None
    read_key, write_key, _ = accessors_of(key_type)
    read_value, write_value, _ = accessors_of(value_type) if with_values else (None, None, None)
    swap = specialised(compare_and_swap, with_values=with_values, read_key=read_key, write_key=write_key,
                       read_value=read_value, write_value=write_value, order=order)
    sort_own_keys = specialised(odd_even_sort, n=n, swap=swap)
    merge = specialised(merge_sort_through, find_path=path_finder(key_type, order=order),
                        merge_serially=serial_merger(key_type, n, order=order), read_key=read_key,
                        load_value=loader(value_type) if with_values else None, read_value=read_value,
                        write_value=write_value, n=n, rounds=merge_rounds(threads), sync=sync,
                        with_values=with_values)
    fill = specialised(fill_past_valid, n=n, read_key=read_key, write_key=write_key, order=order) if partial \
        else _no_fill

    tile = n * threads

    def sort(keys, values, compare, buffer, base, value_base, rank, valid_items, oob_default, mask):
        if partial:  # (past the tile: the whole tile; the merge clips its runs at valid_items)
            valid_items = min(max(valid_items, 0), tile)
        fill(keys, rank, valid_items, oob_default, compare)
        if not partial or n * rank < valid_items:  # (CUB: a thread with no valid key skips it)
            sort_own_keys(keys, values, compare)
        indices = cuda.local.array(n, np.int32)
        merge(keys, values, compare, buffer, base, value_base, rank, valid_items, mask, indices)

    return device_function(sort)


@device_function
def _no_fill(keys, rank, valid_items, oob_default, compare):
    pass


def tile_layout(key_type, value_type, tile_items):
    """The scratch of one group's merge of ``tile_items`` keys (and values): one region
    each, on top of one another (CUB's TempStorage union), one slot past the tile (the
    serial merge reads one past a run)."""
    phases = [Region("keys", key_type, tile_items + 1)]
    if value_type is not None:
        phases.append(Region("values", value_type, tile_items + 1))
    return Union("merge_sort", *phases)


def merge_rounds(threads):
    """Rounds of merging for a group of ``threads``: log2 of the next power of two."""
    return max(threads - 1, 0).bit_length()


@device_function
def fill_past_valid(keys, rank, n, valid_items, oob_default, compare, read_key, write_key, order):
    """A partial tile (CUB's Sort with valid_items): the thread's keys at tile positions
    ``>= valid_items`` take the largest of its valid keys and ``oob_default`` (which
    sorts after every valid key), so they stay after the valid ones."""
    largest = oob_default
    for i in range(1, n):
        if n * rank + i < valid_items:
            key = read_key(keys, i)
            if order(compare, largest, key):
                largest = key
        else:
            write_key(keys, i, largest)


@device_function
def odd_even_sort(keys, values, compare, n, swap):
    """Sort the thread's ``n`` keys (and values with them) stably in registers: ``n``
    rounds, alternately of the even and the odd neighbours. (Each round's loop has a
    constant trip count: written as one loop whose start alternates, NVVM left 17 rounds
    rolled, in local memory.) ``swap``: ``compare_and_swap`` specialised."""
    for _ in range(n // 2):
        for j in range(0, n - 1, 2):
            swap(keys, values, compare, j)
        for j in range(1, n - 1, 2):
            swap(keys, values, compare, j)
    if n % 2:
        for j in range(0, n - 1, 2):
            swap(keys, values, compare, j)


@device_function
def compare_and_swap(keys, values, compare, j, with_values, read_key, write_key, read_value, write_value, order):
    left = read_key(keys, j)
    right = read_key(keys, j + 1)
    if order(compare, right, left):
        write_key(keys, j, right)
        write_key(keys, j + 1, left)
        if with_values:
            value = read_value(values, j)
            write_value(values, j, read_value(values, j + 1))
            write_value(values, j + 1, value)


@device_function
def merge_sort_through(keys, values, compare, buffer, find_path, merge_serially, read_key, load_value, read_value,
                       write_value, base, value_base, rank, n, rounds, valid_items, sync, mask, with_values, indices):
    """The merging rounds, the thread at ``rank`` of its group holding ``n`` sorted keys:
    keys go through ``buffer`` from key slot ``base``, then values from value slot
    ``value_base`` (the group's ``tile_layout``: ``threads * n + 1`` slots each, as the
    serial merge may read one slot past a run), ``sync(mask)`` between the phases.
    ``indices``: a thread-private array of ``n`` int32 (where each output came from)."""
    # Positions in 32 bits, as CUB's ints: Numba computes integers in 64 bits, which
    # costs two instructions per add, compare or min; each result cut back to int32
    # lets NVVM narrow the operation itself.
    rank = I32(rank)
    valid_items = I32(valid_items)
    half = I32(1)  # threads in each of the two runs merged
    for r in range(rounds):
        group_mask = I32(2 * half - 1)
        sync(mask)  # the previous round's (or call's) reads are done
        for i in range(n):
            store(buffer, base + I32(n * rank + i), read_key(keys, i))
        sync(mask)
        start = I32(n * (rank & ~group_mask))
        size = I32(n * half)
        diag = min(valid_items, I32(n * (rank & group_mask)))
        begin1 = min(valid_items, start)
        end1 = min(valid_items, I32(begin1 + size))
        begin2 = end1
        end2 = min(valid_items, I32(begin2 + size))
        low = find_path(buffer, base, begin1, end1, begin2, end2, diag, compare)
        merge_serially(buffer, base, I32(begin1 + low), end1, I32(begin2 + diag - low), end2, keys, indices, compare)
        if with_values:
            sync(mask)
            for i in range(n):
                store(buffer, value_base + I32(n * rank + i), read_value(values, i))
            sync(mask)
            for i in range(n):
                write_value(values, i, load_value(buffer, value_base + indices[i]))
        half = I32(2 * half)


def path_finder(key_type, load_key=None, position=I32, order=call_compare):
    """``find_path(buffer, base, begin1, end1, begin2, end2, diag, compare)``, the merge
    path (Odeh et al., 2012) of two sorted runs of ``key_type`` keys: how many of the
    first ``diag`` keys of their stable merge come from the first run, ``[begin1,
    end1)`` of ``buffer`` from slot ``base``, rather than the second, ``[begin2, end2)``.
    ``load_key(buffer, index)`` reads a key (default: a scratch slot's ``loader``; a
    device array's item for a search in global memory); positions are computed as
    ``position`` (int32 in a tile; int64 where runs may pass 2**30 items); keys compared
    by their ``key_order``, ``order``."""
    return specialised(merge_path, load_key=loader(key_type) if load_key is None else load_key, position=position,
                       order=order)


def serial_merger(key_type, n, load_key=None, order=call_compare):
    """``merge_serially(buffer, base, at1, end1, at2, end2, keys, indices, compare)``:
    the ``n`` keys of the stable merge of two sorted runs of scratch ``buffer`` (from
    slot ``base``) that start where the first run is at ``at1`` and the second at
    ``at2``, into ``keys``, and the slot each came from into ``indices`` (for values to
    follow). It reads one slot past a run (CUB's SerialMerge): the buffer has one slot
    more than the runs. ``load_key`` and ``order`` as ``path_finder``'s; ``keys`` written
    as ``coop._core.items.accessors_of`` writes them."""
    return specialised(serial_merge, load_key=loader(key_type) if load_key is None else load_key, n=n,
                       write_key=accessors_of(key_type)[1], order=order)


@device_function
def merge_path(buffer, base, begin1, end1, begin2, end2, diag, compare, load_key, position, order):
    # (each result cut back to ``position``: see merge_sort_through)
    count2 = position(end2 - begin2)
    low = position(0) if diag < count2 else position(diag - count2)
    high = min(position(diag), position(end1 - begin1))
    while low < high:
        middle = position(position(low + high) >> 1)  # (no overflow: a tile is far below 2**30 items; int64 past it)
        later = load_key(buffer, base + position(begin2 + diag - 1 - middle))
        if order(compare, later, load_key(buffer, base + position(begin1 + middle))):
            high = middle
        else:
            low = position(middle + 1)
    return low


@device_function
def serial_merge(buffer, base, at1, end1, at2, end2, keys, indices, compare, load_key, n, write_key, order):
    key1 = load_key(buffer, base + at1)
    key2 = load_key(buffer, base + at2)
    for i in range(n):
        take2 = at2 < end2 and (at1 >= end1 or order(compare, key2, key1))
        # each value chosen by a function returning it, not assigned in both arms of
        # a branch: numba-cuda-mlir 0.6 kept such variables in local memory (8x
        # slower than CUB); numba-cuda's code gained too (fewer branches and shared
        # loads: BENCHMARKS.md, "Block and warp merge sort")
        at = chosen(take2, at2, at1)
        write_key(keys, i, chosen(take2, key2, key1))
        indices[i] = at
        following = load_key(buffer, base + I32(at + 1))
        key2 = chosen(take2, following, key2)
        key1 = chosen(take2, key1, following)
        at2 = chosen(take2, I32(at2 + 1), at2)
        at1 = chosen(take2, at1, I32(at1 + 1))
