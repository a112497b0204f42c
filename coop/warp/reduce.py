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
combined in lane order.
"""

import operator

import numpy as np
from numba.cuda import types

from coop._core.backend import cuda
from coop._core.shuffle import DOWN, IDX, XOR, has_warp_sum, logical_warp, shuffler, warp_sum
from coop._core.specialize import Signature, device_function, is_function, primitive
from coop._core.values import converter
from coop.ops import add
from coop.thread import counter, reduce_items

__all__ = [
    "reduce",
    "sum",
    "all_reduce",
    "all_sum",
    "head_segmented_reduce",
    "tail_segmented_reduce",
]


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
def reduce_to_all_lanes(x, op, convert, xor, mask, lane, width):
    """Butterfly reduction with shfl.xor: every lane computes the same ordered tree, so
    all lanes hold the same (bitwise identical) aggregate."""
    offset = 1
    while offset < width:
        y = xor(mask, x, offset)
        if lane & offset:
            x = convert(op(y, x))
        else:
            x = convert(op(x, y))
        offset *= 2
    return x


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
def warp_reduce(x, op, convert, down, xor, width, to_all_lanes):
    lane, mask = logical_warp(width)
    if to_all_lanes:
        return reduce_to_all_lanes(x, op, convert, xor, mask, lane, width)
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

    if partial and is_items:

        def impl(value, op, width=32, valid_items=None):
            return warp_reduce_items_partial(
                value, op, convert, down, idx, lanes, valid_items, to_all_lanes
            )

    elif partial:

        def impl(value, op, width=32, valid_items=None):
            return warp_reduce_partial(
                value, op, convert, down, idx, lanes, valid_items, to_all_lanes
            )

    elif has_warp_sum(dtype) and is_function(op, operator.add, add) and is_items:
        # integer sums: one redux.sync gives every lane the total

        def impl(value, op, width=32, valid_items=None):
            _, mask = logical_warp(lanes)
            return warp_sum(mask, reduce_items(value, op, convert))

    elif has_warp_sum(dtype) and is_function(op, operator.add, add):

        def impl(value, op, width=32, valid_items=None):
            _, mask = logical_warp(lanes)
            return warp_sum(mask, value)

    elif is_items:

        def impl(value, op, width=32, valid_items=None):
            total = reduce_items(value, op, convert)
            return warp_reduce(total, op, convert, down, xor, lanes, to_all_lanes)

    else:

        def impl(value, op, width=32, valid_items=None):
            return warp_reduce(value, op, convert, down, xor, lanes, to_all_lanes)

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

        def impl(value, width=32, valid_items=None):
            lane, _ = logical_warp(lanes)
            return reduction(count(value, lane, valid_items), add, lanes)

    elif not partial:

        def impl(value, width=32, valid_items=None):
            return reduction(value, add, lanes)

    else:

        def impl(value, width=32, valid_items=None):
            return reduction(value, add, lanes, valid_items)

    return impl


@primitive("coop.warp.reduce", group="warp", uniform=("valid_items",))
def reduce(value, op, width=32, valid_items=None):
    """Reduce the values (or items arrays) of a logical warp with ``op``; the aggregate
    is returned to logical lane 0, other lanes get unspecified partials
    (CUB WarpReduce::Reduce).

    ``op`` is a binary operator (``operator.*``, a lambda, a ``@cuda.jit(device=True)``
    function or a ``coop.ops`` operator); associative, not necessarily commutative.

    Example::

        @cuda.jit
        def k(x, out):
            i = cuda.grid(1)
            m = coop.warp.reduce(x[i], coop.ops.max)
            if cuda.laneid == 0:
                out[i // 32] = m
    """
    return _specialise_reduce("coop.warp.reduce", value, op, width, valid_items, False)


@primitive("coop.warp.all_reduce", group="warp", uniform=("valid_items",))
def all_reduce(value, op, width=32, valid_items=None):
    """As ``reduce``, with the aggregate returned to every lane of the logical warp.

    All lanes receive bitwise identical results, floats included.

    Example::

        m = coop.warp.all_reduce(x[i], lambda a, b: max(a, b), width=8)
    """
    return _specialise_reduce("coop.warp.all_reduce", value, op, width, valid_items, True)


@primitive("coop.warp.sum", group="warp", uniform=("valid_items",))
def sum(value, width=32, valid_items=None):  # noqa: A001  (CUB's name)
    """Sum of the values (or items arrays) of a logical warp, returned to logical lane 0
    (CUB WarpReduce::Sum).

    Example::

        s = coop.warp.sum(x[i])
        if cuda.laneid == 0:
            out[i // 32] = s
    """
    return _specialise_sum("coop.warp.sum", reduce, value, width, valid_items)


@primitive("coop.warp.all_sum", group="warp", uniform=("valid_items",))
def all_sum(value, width=32, valid_items=None):
    """Sum of the values (or items arrays) of a logical warp, returned to every lane.

    Example::

        s = coop.warp.all_sum(items)          # items: cuda.local.array(4, np.float32)
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
    flags = flags & (0xFFFFFFFF ^ np.int64(np.uint32(cuda.lanemask_lt())))
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

    def impl(value, flag, op, width=32):
        return segmented_reduce(value, flag, op, convert, down, lanes, head_segmented)

    return impl


@primitive("coop.warp.head_segmented_reduce", group="warp")
def head_segmented_reduce(value, flag, op, width=32):
    """Segmented reduction where ``flag`` marks the first lane of each segment (logical
    lane 0 always starts one). The reduction of each segment is returned to its first
    lane (CUB WarpReduce::HeadSegmentedReduce).

    Example::

        seg_total = coop.warp.head_segmented_reduce(x[i], starts[i], operator.add)
    """
    return _specialise_segmented("coop.warp.head_segmented_reduce", value, flag, op, width, True)


@primitive("coop.warp.tail_segmented_reduce", group="warp")
def tail_segmented_reduce(value, flag, op, width=32):
    """Segmented reduction where ``flag`` marks the last lane of each segment. The
    reduction of each segment is returned to its first lane (logical lane 0 for the
    first segment) (CUB WarpReduce::TailSegmentedReduce).

    Example::

        seg_total = coop.warp.tail_segmented_reduce(x[i], ends[i], operator.add)
    """
    return _specialise_segmented("coop.warp.tail_segmented_reduce", value, flag, op, width, False)
