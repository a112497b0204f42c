"""Warp-wide reductions (CUB's WarpReduce, shuffle-based).

Every lane of a logical warp of ``width`` lanes (1, 2, 4, 8, 16 or 32; the hardware
warp is split into ``32 // width`` independent logical warps) calls the primitive
with its value, or with an items array holding its items in blocked arrangement.
No shared memory, no barriers: lanes exchange values with ``shfl.sync``.

- ``reduce`` / ``sum``: the aggregate is returned to logical lane 0; other lanes get
  an unspecified partial (as in CUB).
- ``all_reduce`` / ``all_sum``: every lane gets the aggregate.
- ``head_segmented_reduce`` / ``tail_segmented_reduce``: segments marked by flags;
  the first lane of each segment gets its segment's reduction.

``valid_items`` (reduce, sum, all_reduce, all_sum) makes a partial warp: with one value
per lane, only lanes ``0 .. valid_items-1`` contribute; with items arrays, only the
first ``valid_items`` items of the warp's tile (lane ``l`` holds items
``l*N .. l*N+N-1``). Operators need to be associative, not commutative: values are
combined in lane order. Each function's docstring lists its parameters and has a
complete example.
"""

import numpy as np
from numba.cuda import types

from coop._core.backend import cuda
from coop._core.shuffle import DOWN, IDX, XOR, lanes_below, logical_warp, shuffler, warp_redux
from coop._core.specialize import Signature, device_function, primitive
from coop._core.values import converter, select
from coop.ops import add, commutes, redux_kind
from coop.thread import counter, reduce_items

__all__ = [
    "reduce",
    "sum",
    "all_reduce",
    "all_sum",
    "head_segmented_reduce",
    "tail_segmented_reduce",
]

# what other families compose (the building-block tier: tests/test_layering.py)
BUILDING_BLOCKS = ["reduce_to_first_lane", "reduce_to_first_lane_partial", "reduce_valid_items"]


# -- building blocks (also used by the block layer) --------------------------------------


@device_function
def reduce_to_first_lane(x, op, convert, down, mask, width):
    """Tree reduction with shfl.down: logical lane 0 ends up with the aggregate. Other
    lanes combine clamped (own) values: their results are partials, unspecified."""
    offset = 1
    while offset < width:
        x = convert(op(x, down(mask, x, offset)))
        offset *= 2
    return x


@device_function
def reduce_to_first_lane_partial(x, op, convert, down, mask, lane, width, valid_lanes):
    """As reduce_to_first_lane, combining only values of lanes below ``valid_lanes``."""
    offset = 1
    while offset < width:
        y = down(mask, x, offset)
        if lane + offset < valid_lanes:
            x = convert(op(x, y))
        offset *= 2
    return x


@device_function
def reduce_to_all_lanes(x, op, convert, xor, mask, lane, width, combine):
    """Butterfly reduction with shfl.xor: every lane computes the same ordered tree, so
    all lanes hold the same (bitwise identical) aggregate. ``combine`` is
    ``combined_in_lane_order`` or, for an operator that commutes, ``combined``."""
    offset = 1
    while offset < width:
        y = xor(mask, x, offset)
        x = convert(combine(x, y, (lane & offset) != 0, op))
        offset *= 2
    return x


@device_function
def combined(own, partner, upper, op):
    return op(own, partner)


@device_function
def combined_in_lane_order(own, partner, upper, op):
    """``op(lower lanes' value, upper lanes' value)``, the operands selected, not
    branched on: a branch on the lane's bit makes NVVM copy the next shuffle into each
    way, and numba-cuda-mlir keep the value in local memory (an operator that branches
    itself, coop.ops.min or max, called in both ways)."""
    return op(select(upper, partner, own), select(upper, own, partner))


@device_function
def reduce_valid_items(items, op, convert, first_index, valid_items):
    """Reduce the items whose tile index ``first_index + i`` is below ``valid_items``
    (the caller guarantees item 0 is valid)."""
    total = items[0]
    for i in range(1, len(items)):
        if first_index + i < valid_items:
            total = convert(op(total, items[i]))
    return total


@device_function
def warp_reduce(x, op, convert, down, xor, width, to_all_lanes, combine):
    lane, mask = logical_warp(width)
    if to_all_lanes:
        return reduce_to_all_lanes(x, op, convert, xor, mask, lane, width, combine)
    return reduce_to_first_lane(x, op, convert, down, mask, width)


@device_function
def warp_reduce_partial(x, op, convert, down, idx, width, valid_lanes, to_all_lanes):
    lane, mask = logical_warp(width)
    total = reduce_to_first_lane_partial(x, op, convert, down, mask, lane, width, valid_lanes)
    if to_all_lanes:
        total = idx(mask, total, 0)
    return total


@device_function
def warp_reduce_items_partial(items, op, convert, down, idx, width, valid_items, to_all_lanes):
    lane, _ = logical_warp(width)
    n = len(items)
    total = reduce_valid_items(items, op, convert, lane * n, valid_items)
    valid_lanes = (valid_items + n - 1) // n
    return warp_reduce_partial(total, op, convert, down, idx, width, valid_lanes, to_all_lanes)


def _specialise_reduce(name, value, op, width, valid_items, to_all_lanes):
    """The generator behind reduce and all_reduce."""
    sig = Signature(name)
    dtype, is_items = sig.value_or_items(value, "value")
    sig.operator(op, dtype)
    lanes = sig.width(width)
    partial = sig.run_time_int(valid_items, "valid_items") is not None
    convert = converter(dtype)
    down, xor, idx = shuffler(DOWN, lanes), shuffler(XOR, lanes), shuffler(IDX, lanes)
    combine = combined if commutes(op, dtype) else combined_in_lane_order
    redux = redux_kind(op, dtype)

    if partial and is_items:

        def impl(value, op, valid_items):
            return warp_reduce_items_partial(
                value, op, convert, down, idx, lanes, valid_items, to_all_lanes
            )

    elif partial:

        def impl(value, op, valid_items):
            return warp_reduce_partial(
                value, op, convert, down, idx, lanes, valid_items, to_all_lanes
            )

    elif redux is not None:
        # integer sums, minima, maxima and bitwise operations: one redux.sync gives every
        # lane the result (CUB's warp_redux)
        warp_reduced = warp_redux(redux)
        if is_items:

            def impl(value, op):
                _, mask = logical_warp(lanes)
                return warp_reduced(mask, reduce_items(value, op, convert))

        else:

            def impl(value):
                _, mask = logical_warp(lanes)
                return warp_reduced(mask, value)

    elif is_items:

        def impl(value, op):
            total = reduce_items(value, op, convert)
            return warp_reduce(total, op, convert, down, xor, lanes, to_all_lanes, combine)

    else:

        def impl(value, op):
            return warp_reduce(value, op, convert, down, xor, lanes, to_all_lanes, combine)

    return impl


def _specialise_sum(name, reduction, value, width, valid_items):
    """The generator behind sum and all_sum: ``reduction`` with ``coop.ops.add``. Bools
    are counted: each lane's count (int32) is summed."""
    sig = Signature(name)
    _, is_items, counted = sig.sum_input(value)
    lanes = sig.width(width)
    partial = sig.run_time_int(valid_items, "valid_items") is not None
    if counted:
        count = counter(is_items, partial)

        def impl(value, valid_items):
            lane, _ = logical_warp(lanes)
            return reduction(count(value, lane, valid_items), add, lanes)

    elif not partial:

        def impl(value):
            return reduction(value, add, lanes)

    else:

        def impl(value, valid_items):
            return reduction(value, add, lanes, valid_items)

    return impl


@primitive("coop.warp.reduce", group="warp", uniform=("valid_items",))
def reduce(value, op, width=32, valid_items=None):
    """Reduce the values (or items arrays) of a logical warp with ``op``; the aggregate
    goes to logical lane 0 (CUB WarpReduce::Reduce).

    Parameters
    ----------
    value : value or items array
        {warp_value}
        {value_types}
    op : operator
        {op}
    width : int, compile-time constant, default 32
        {width}
    valid_items : int, run time, optional
        {warp_valid_items}

    Returns
    -------
    value
        In logical lane 0: ``op`` over the logical warp's values (or items) in lane
        order, of the value's type. Other lanes get unspecified partials, as in CUB.

    Barriers
    --------
    {warp_barriers}

    Notes
    -----
    {collective}

    Example
    -------
    The index of each warp's largest value (of equal values, the first), reducing
    ``(value, index)`` tuples::

        import numpy as np
        import coop
        from numba import cuda

        @cuda.jit
        def warp_argmax(x, best):
            i = cuda.grid(1)
            value, index = coop.warp.reduce((x[i], i), coop.ops.argmax)
            if cuda.laneid == 0:
                best[i // 32] = index

        x = np.random.default_rng(7).integers(0, 10, 64).astype(np.int32)
        best = np.zeros(2, np.int64)
        warp_argmax[1, 64](x, best)
        assert (best == x.reshape(2, 32).argmax(axis=1) + [0, 32]).all()
    """
    return _specialise_reduce("coop.warp.reduce", value, op, width, valid_items, False)


@primitive("coop.warp.all_reduce", group="warp", uniform=("valid_items",))
def all_reduce(value, op, width=32, valid_items=None):
    """Reduce the values (or items arrays) of a logical warp with ``op``; every lane
    gets the aggregate (CUB WarpReduce::Reduce, then a broadcast).

    Parameters
    ----------
    value : value or items array
        {warp_value}
        {value_types}
    op : operator
        {op}
    width : int, compile-time constant, default 32
        {width}
    valid_items : int, run time, optional
        {warp_valid_items}

    Returns
    -------
    value
        In every lane of the logical warp: ``op`` over its values (or items) in lane
        order, of the value's type; bitwise identical in all lanes, floats included.

    Barriers
    --------
    {warp_barriers}

    Notes
    -----
    {collective}

    Example
    -------
    The maximum of each logical warp of 8 lanes, in all its lanes::

        import numpy as np
        import coop
        from numba import cuda

        @cuda.jit
        def group_max(x, out):
            i = cuda.grid(1)
            out[i] = coop.warp.all_reduce(x[i], lambda a, b: max(a, b), width=8)

        x = np.random.default_rng(8).integers(-100, 100, 64).astype(np.int32)
        out = np.zeros_like(x)
        group_max[1, 64](x, out)
        assert (out == np.repeat(x.reshape(8, 8).max(axis=1), 8)).all()
    """
    return _specialise_reduce("coop.warp.all_reduce", value, op, width, valid_items, True)


@primitive("coop.warp.sum", group="warp", uniform=("valid_items",))
def sum(value, width=32, valid_items=None):  # noqa: A001  (CUB's name)
    """Sum of the values (or items arrays) of a logical warp, returned to logical lane 0
    (CUB WarpReduce::Sum).

    Parameters
    ----------
    value : number, bool or items array
        {warp_value}
        {sum_types}
    width : int, compile-time constant, default 32
        {width}
    valid_items : int, run time, optional
        {warp_valid_items}

    Returns
    -------
    value
        In logical lane 0: the sum, of the value's type (integer sums wrap), int32 for
        bools. Other lanes get unspecified partials, as in CUB.

    Barriers
    --------
    {warp_barriers}

    Notes
    -----
    {collective}

    Example
    -------
    Sums of the warps of a partial last tile: lanes past ``n`` call with any value,
    which ``valid_items`` leaves out::

        import numpy as np
        import coop
        from numba import cuda

        @cuda.jit
        def warp_sums(x, sums, n):
            i = cuda.grid(1)
            warp = i // 32
            total = coop.warp.sum(x[min(i, n - 1)], valid_items=n - warp * 32)
            if cuda.laneid == 0:
                sums[warp] = total

        x = np.random.default_rng(9).integers(-100, 100, 50).astype(np.int32)
        sums = np.zeros(2, np.int32)
        warp_sums[1, 64](x, sums, len(x))
        assert sums[0] == x[:32].sum() and sums[1] == x[32:].sum()
    """
    return _specialise_sum("coop.warp.sum", reduce, value, width, valid_items)


@primitive("coop.warp.all_sum", group="warp", uniform=("valid_items",))
def all_sum(value, width=32, valid_items=None):
    """Sum of the values (or items arrays) of a logical warp, returned to every lane
    (CUB WarpReduce::Sum, then a broadcast).

    Parameters
    ----------
    value : number, bool or items array
        {warp_value}
        {sum_types}
    width : int, compile-time constant, default 32
        {width}
    valid_items : int, run time, optional
        {warp_valid_items}

    Returns
    -------
    value
        In every lane of the logical warp: the sum, of the value's type (integer sums
        wrap), int32 for bools; bitwise identical in all lanes.

    Barriers
    --------
    {warp_barriers}

    Notes
    -----
    {collective}

    Example
    -------
    Each warp's sum of its 128 items (4 per lane), in every lane::

        import numpy as np
        import coop
        from numba import cuda

        @cuda.jit
        def tile_totals(x, out):
            i = cuda.grid(1)
            items = cuda.local.array(4, np.int32)
            for k in range(4):
                items[k] = x[4 * i + k]
            out[i] = coop.warp.all_sum(items)

        x = np.random.default_rng(10).integers(-100, 100, 256).astype(np.int32)
        out = np.zeros(64, np.int32)
        tile_totals[1, 64](x, out)
        assert (out == np.repeat(x.reshape(2, 128).sum(axis=1), 32)).all()
    """
    return _specialise_sum("coop.warp.all_sum", all_reduce, value, width, valid_items)


# -- segmented reductions ----------------------------------------------------------------


@device_function
def segmented_reduce(x, flag, op, convert, down, width, head_segmented):
    """CUB's shuffle-based segmented reduction: each lane reduces from itself to the last
    lane of its segment, so the first lane of each segment gets the segment's total."""
    lane, mask = logical_warp(width)
    # 32-bit lane masks held in int64, so that shifts never see a sign bit
    flags = np.int64(np.uint32(cuda.ballot_sync(mask, flag)))
    if head_segmented:
        flags = flags >> 1  # a head at lane i ends the segment at lane i - 1
    flags = flags & (0xFFFFFFFF ^ np.int64(np.uint32(lanes_below())))
    if width < 32:
        flags = (flags & mask) >> (cuda.laneid - lane)
    flags = flags | (1 << (width - 1))
    last_lane = cuda.ffs(flags) - 1
    offset = 1
    while offset < width:
        y = down(mask, x, offset)
        if lane + offset <= last_lane:
            x = convert(op(x, y))
        offset *= 2
    return x


def _specialise_segmented(name, value, flag, op, width, head_segmented):
    sig = Signature(name)
    dtype, is_items = sig.value_or_items(value, "value")
    if is_items:
        raise sig.error("value", "must be one value per lane (items arrays are not segmented)")
    flag_type = types.unliteral(flag)
    if not isinstance(flag_type, (types.Boolean, types.Integer)):
        raise sig.error("flag", f"must be a bool or an integer, got {flag}")
    sig.operator(op, dtype)
    lanes = sig.width(width)
    convert = converter(dtype)
    down = shuffler(DOWN, lanes)

    def impl(value, flag, op):
        return segmented_reduce(value, flag, op, convert, down, lanes, head_segmented)

    return impl


@primitive("coop.warp.head_segmented_reduce", group="warp")
def head_segmented_reduce(value, flag, op, width=32):
    """Reduce each segment of a logical warp's values with ``op``, segments marked by
    head flags; the first lane of each segment gets its reduction (CUB
    WarpReduce::HeadSegmentedReduce).

    Parameters
    ----------
    value : value
        The lane's value, a scalar or a tuple of scalars (not an items array).
    flag : bool or int, run time
        True (nonzero) in the first lane of each segment. Logical lane 0 always starts
        a segment, whatever its flag; a segment ends before the next flagged lane or
        at the end of the logical warp.
    op : operator
        {op}
    width : int, compile-time constant, default 32
        {width}

    Returns
    -------
    value
        In the first lane of each segment: ``op`` over the segment's values in lane
        order, of the value's type. Other lanes get unspecified partials, as in CUB.

    Barriers
    --------
    {warp_barriers}

    Notes
    -----
    {collective}

    Example
    -------
    Sums of the segments starting at lanes 0, 5, 6 and 20::

        import operator
        import numpy as np
        import coop
        from numba import cuda

        @cuda.jit
        def segment_sums(x, heads, out):
            i = cuda.grid(1)
            total = coop.warp.head_segmented_reduce(x[i], heads[i], operator.add)
            if heads[i] or cuda.laneid == 0:
                out[i] = total

        x = np.random.default_rng(11).integers(-100, 100, 32).astype(np.int32)
        heads = np.zeros(32, np.bool_)
        heads[[0, 5, 6, 20]] = True
        out = np.zeros_like(x)
        segment_sums[1, 32](x, heads, out)
        starts = np.flatnonzero(heads)
        assert (out[starts] == np.add.reduceat(x, starts)).all()
    """
    return _specialise_segmented("coop.warp.head_segmented_reduce", value, flag, op, width, True)


@primitive("coop.warp.tail_segmented_reduce", group="warp")
def tail_segmented_reduce(value, flag, op, width=32):
    """Reduce each segment of a logical warp's values with ``op``, segments marked by
    tail flags; the first lane of each segment gets its reduction (CUB
    WarpReduce::TailSegmentedReduce).

    Parameters
    ----------
    value : value
        The lane's value, a scalar or a tuple of scalars (not an items array).
    flag : bool or int, run time
        True (nonzero) in the last lane of each segment. The last logical lane always
        ends a segment, whatever its flag; the first segment starts at logical lane 0,
        each other one after a flagged lane.
    op : operator
        {op}
    width : int, compile-time constant, default 32
        {width}

    Returns
    -------
    value
        In the first lane of each segment (logical lane 0 and each lane after a flagged
        one): ``op`` over the segment's values in lane order, of the value's type.
        Other lanes get unspecified partials, as in CUB.

    Barriers
    --------
    {warp_barriers}

    Notes
    -----
    {collective}

    Example
    -------
    Sums of the segments ending at lanes 4, 5, 19 and 31::

        import operator
        import numpy as np
        import coop
        from numba import cuda

        @cuda.jit
        def segment_sums(x, tails, out):
            i = cuda.grid(1)
            total = coop.warp.tail_segmented_reduce(x[i], tails[i], operator.add)
            if cuda.laneid == 0 or tails[i - 1]:
                out[i] = total

        x = np.random.default_rng(12).integers(-100, 100, 32).astype(np.int32)
        tails = np.zeros(32, np.bool_)
        tails[[4, 5, 19, 31]] = True
        out = np.zeros_like(x)
        segment_sums[1, 32](x, tails, out)
        starts = np.array([0, 5, 6, 20])
        assert (out[starts] == np.add.reduceat(x, starts)).all()
    """
    return _specialise_segmented("coop.warp.tail_segmented_reduce", value, flag, op, width, False)
