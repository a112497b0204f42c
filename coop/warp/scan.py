"""Warp-wide prefix scans and broadcast (CUB's WarpScan, shuffle-based).

Every lane of a logical warp of ``width`` lanes calls the scan with its value, or with
an items array holding its items in blocked arrangement (lane ``l`` holds items
``l*N .. l*N+N-1`` of the warp's tile).

- One value per lane: the lane's scan result is returned; ``return_aggregate=True``
  returns ``(result, warp_aggregate)`` instead.
- Items arrays: the scan is written to ``output`` (which may be the input) and the
  warp aggregate is returned.

Every lane receives the warp aggregate: the reduction of all inputs of its logical warp
(not including ``initial``). Exclusive scans give logical lane 0 (its first item) the
``initial`` value; without ``initial``, that one result is unspecified (as in CUB),
except for sums, where it is 0. Operators need to be associative, not commutative.
Each function's docstring lists its parameters and has a complete example.
"""

import operator

from numba.cuda import types

from coop.ops import add

from coop._core.arithmetic import difference
from coop._core.misuse import output_check
from coop._core.shuffle import IDX, UP, has_up_sum_step, logical_warp, shuffler, up_sum_step, up_with_source
from coop._core.specialize import Signature, device_function, is_function, is_none, primitive
from coop._core.values import converter, same, select
from coop.thread import (
    exclusive_scan_items,
    exclusive_scan_items_unseeded,
    inclusive_scan_items,
    inclusive_scan_items_with_prefix,
    reduce_items,
)

__all__ = [
    "inclusive_scan",
    "exclusive_scan",
    "inclusive_sum",
    "exclusive_sum",
    "broadcast",
]

# what other families compose (the building-block tier: tests/test_layering.py)
BUILDING_BLOCKS = ["inclusive_scan_lanes", "exclusive_from_inclusive"]


# -- building blocks (also used by the block layer) --------------------------------------


@primitive("coop.warp.scan.inclusive_scan_lanes")
def inclusive_scan_lanes(x, op, convert, mask, width):
    """Kogge-Stone scan with shfl.up: lane ``l`` gets op over lanes 0..l. Each step
    combines on the shuffle's own predicate (is the source lane in the logical warp?), as
    CUB's; sums of integers and 32/64-bit floats use CUB's fused step (shuffle, then an
    add predicated on it)."""
    if is_function(op, operator.add, add) and has_up_sum_step(x):

        def impl(x, mask, width):
            c = (32 - width) << 8  # clamp(UP, width)
            offset = 1
            while offset < width:
                x = up_sum_step(mask, x, offset, c)
                offset *= 2
            return x

    else:

        def impl(x, op, convert, mask, width):
            c = (32 - width) << 8
            offset = 1
            while offset < width:
                y, from_source = up_with_source(mask, x, offset, c)
                # (selected, as CUB's step: a branch made numba-cuda-mlir keep x in local
                # memory where op branches itself, coop.ops.min or max)
                x = select(from_source, convert(op(y, x)), x)
                offset *= 2
            return x

    return impl


@primitive("coop.warp.scan.exclusive_from_inclusive")
def exclusive_from_inclusive(inclusive, x, op, convert, up, mask):
    """A lane's exclusive scan result from its inclusive result and its input: their
    difference for integer sums (exact in wrapping arithmetic; CUB does the same), else
    the inclusive result of the lane below, shuffled up. Lane 0's is unspecified."""
    if isinstance(types.unliteral(x), types.Integer) and is_function(op, operator.add, add):

        def impl(inclusive, x, convert):
            return convert(difference(inclusive, x))

    else:

        def impl(inclusive, up, mask):
            return up(mask, inclusive, 1)

    return impl


@device_function
def scan_lanes(x, op, convert, up, idx, width):
    """(inclusive scan, exclusive scan, warp aggregate) of one value per lane; the
    exclusive result of logical lane 0 is unspecified (callers replace it)."""
    _, mask = logical_warp(width)
    inclusive = inclusive_scan_lanes(x, op, convert, mask, width)
    exclusive = exclusive_from_inclusive(inclusive, x, op, convert, up, mask)
    aggregate = idx(mask, inclusive, width - 1)
    return inclusive, exclusive, aggregate


@device_function
def seeded_exclusive(exclusive, op, convert, initial, width):
    """Exclusive results with ``initial`` folded in (lane 0 gets ``initial``)."""
    lane, _ = logical_warp(width)
    if lane == 0:
        return initial
    return convert(op(initial, exclusive))


@device_function
def inclusive_scan_warp_items(items, output, op, convert, up, idx, width):
    """Inclusive scan of a warp's blocked items; returns the warp aggregate."""
    lane, _ = logical_warp(width)
    _, prefix, aggregate = scan_lanes(reduce_items(items, op, convert), op, convert, up, idx, width)
    if lane == 0:
        inclusive_scan_items(items, output, op, convert)
    else:
        inclusive_scan_items_with_prefix(items, output, op, convert, prefix)
    return aggregate


@device_function
def seeded_items_prefix(items, op, convert, up, idx, width, initial):
    """(the lane's prefix: ``initial`` and the items of the lanes before it, the warp
    aggregate without ``initial``) of a warp's blocked items."""
    _, exclusive, aggregate = scan_lanes(reduce_items(items, op, convert), op, convert, up, idx, width)
    return seeded_exclusive(exclusive, op, convert, initial, width), aggregate


@device_function
def inclusive_scan_warp_items_seeded(items, output, op, convert, up, idx, width, initial):
    """Inclusive scan of a warp's blocked items after ``initial``; returns the warp
    aggregate (without ``initial``)."""
    prefix, aggregate = seeded_items_prefix(items, op, convert, up, idx, width, initial)
    inclusive_scan_items_with_prefix(items, output, op, convert, prefix)
    return aggregate


@device_function
def exclusive_scan_warp_items(items, output, op, convert, up, idx, width, initial):
    """Exclusive scan of a warp's blocked items seeded with ``initial``; returns the
    warp aggregate."""
    prefix, aggregate = seeded_items_prefix(items, op, convert, up, idx, width, initial)
    exclusive_scan_items(items, output, op, convert, prefix)
    return aggregate


@device_function
def exclusive_scan_warp_items_unseeded(items, output, op, convert, up, idx, width):
    """Exclusive scan without an initial value: the first item of lane 0 is
    unspecified (it is given that lane's first item)."""
    lane, _ = logical_warp(width)
    _, exclusive, aggregate = scan_lanes(
        reduce_items(items, op, convert), op, convert, up, idx, width
    )
    if lane == 0:
        exclusive_scan_items_unseeded(items, output, op, convert)
    else:
        exclusive_scan_items(items, output, op, convert, exclusive)
    return aggregate


# -- generators --------------------------------------------------------------------------


def _scan_arguments(sig, value, output, op, width, return_aggregate):
    """Common checks: (dtype, is_items, lanes, with_aggregate)."""
    dtype, is_items, with_aggregate = sig.scan_input(value, output, return_aggregate)
    sig.operator(op, dtype)
    return dtype, is_items, sig.width(width), with_aggregate


@primitive("coop.warp.inclusive_scan", group="warp", uniform=("initial",))
def inclusive_scan(value, op, output=None, width=32, return_aggregate=False, initial=None):
    """Inclusive prefix scan over a logical warp with ``op`` (CUB
    WarpScan::InclusiveScan): lane ``l`` gets ``op`` over ``initial`` (if given) and the
    inputs of lanes 0..l (with items arrays: item ``k`` of the warp's tile gets ``op``
    over ``initial`` and items 0..k).

    Parameters
    ----------
    value : value or items array
        {warp_value}
        {value_types}
    op : operator
        {op}
    output : items array, optional
        {scan_output}
    width : int, compile-time constant, default 32
        {width}
    return_aggregate : bool, compile-time constant, default False
        {return_aggregate}
    initial : value, run time, optional
        A seed (CUB's ``initial_value``, keyword only here: the parameters before it
        keep their positions), converted to the value's type and combined before every
        result: logical lane 0's (its first item's) is ``op(initial, value)``. The same
        in every lane of the logical warp; not in the aggregate. Default None: no seed.

    Returns
    -------
    value, tuple or aggregate
        {warp_scan_returns}

    Barriers
    --------
    {warp_barriers}

    Notes
    -----
    {collective}

    Example
    -------
    Running maximum over each warp, and the warp's maximum::

        import numpy as np
        import coop
        from numba import cuda

        @cuda.jit
        def running_max(x, out, warp_max):
            i = cuda.grid(1)
            scan, total = coop.warp.inclusive_scan(x[i], coop.ops.max, return_aggregate=True)
            out[i] = scan
            if cuda.laneid == 0:
                warp_max[i // 32] = total

        x = np.random.default_rng(13).integers(-100, 100, 64).astype(np.int32)
        out, warp_max = np.zeros_like(x), np.zeros(2, np.int32)
        running_max[1, 64](x, out, warp_max)
        assert (out == np.maximum.accumulate(x.reshape(2, 32), axis=1).ravel()).all()
        assert (warp_max == x.reshape(2, 32).max(axis=1)).all()

    Fragment (inside a kernel): an items array scanned in place, from 1000::

        total = coop.warp.inclusive_scan(items, operator.add, items, initial=1000)
    """
    sig = Signature("coop.warp.inclusive_scan")
    dtype, is_items, lanes, with_aggregate = _scan_arguments(
        sig, value, output, op, width, return_aggregate
    )
    seeded = not is_none(initial)
    if seeded:
        sig.single_value(initial, "initial", dtype)
    convert = converter(dtype)
    up, idx = shuffler(UP, lanes), shuffler(IDX, lanes)
    check_output = output_check(sig.primitive, is_items)
    if is_items and seeded:

        def impl(value, op, output, initial):
            check_output(value, output)
            return inclusive_scan_warp_items_seeded(value, output, op, convert, up, idx, lanes, convert(initial))

    elif is_items:

        def impl(value, op, output):
            check_output(value, output)
            return inclusive_scan_warp_items(value, output, op, convert, up, idx, lanes)

    elif seeded and with_aggregate:

        def impl(value, op, initial):
            inclusive, _, aggregate = scan_lanes(value, op, convert, up, idx, lanes)
            return convert(op(convert(initial), inclusive)), aggregate

    elif seeded:

        def impl(value, op, initial):
            _, mask = logical_warp(lanes)
            return convert(op(convert(initial), inclusive_scan_lanes(value, op, convert, mask, lanes)))

    elif with_aggregate:

        def impl(value, op):
            inclusive, _, aggregate = scan_lanes(value, op, convert, up, idx, lanes)
            return inclusive, aggregate

    else:

        def impl(value, op):
            _, mask = logical_warp(lanes)
            return inclusive_scan_lanes(value, op, convert, mask, lanes)

    return impl


@primitive("coop.warp.exclusive_scan", group="warp", uniform=("initial",))
def exclusive_scan(value, op, initial=None, output=None, width=32, return_aggregate=False):
    """Exclusive prefix scan over a logical warp with ``op`` (CUB
    WarpScan::ExclusiveScan): lane ``l`` gets ``op`` over ``initial`` and the inputs
    of lanes 0..l-1 (with items arrays: item ``k`` of the warp's tile gets ``op`` over
    ``initial`` and items 0..k-1); logical lane 0 (its first item) gets ``initial``.

    Parameters
    ----------
    value : value or items array
        {warp_value}
        {value_types}
    op : operator
        {op}
    initial : value, run time, optional
        The seed, converted to the value's type: logical lane 0 (its first item) gets
        it, and it is combined before every other result. Default None: logical lane
        0's result (its first item's) is unspecified, as in CUB.
    output : items array, optional
        {scan_output}
    width : int, compile-time constant, default 32
        {width}
    return_aggregate : bool, compile-time constant, default False
        {return_aggregate}

    Returns
    -------
    value, tuple or aggregate
        {warp_scan_returns}

    Barriers
    --------
    {warp_barriers}

    Notes
    -----
    {collective}

    Example
    -------
    Each warp's 128 items (4 per lane) scanned in place from 1000, and the warp's
    total::

        import operator
        import numpy as np
        import coop
        from numba import cuda

        @cuda.jit
        def offsets(x, out, totals):
            i = cuda.grid(1)
            items = cuda.local.array(4, np.int32)
            for k in range(4):
                items[k] = x[4 * i + k]
            total = coop.warp.exclusive_scan(items, operator.add, 1000, items)
            for k in range(4):
                out[4 * i + k] = items[k]
            if cuda.laneid == 0:
                totals[i // 32] = total

        x = np.random.default_rng(14).integers(-100, 100, 256).astype(np.int32)
        out, totals = np.zeros_like(x), np.zeros(2, np.int32)
        offsets[1, 64](x, out, totals)
        tiles = x.reshape(2, 128)
        assert (out.reshape(2, 128) == 1000 + np.cumsum(tiles, axis=1) - tiles).all()
        assert (totals == tiles.sum(axis=1)).all()
    """
    sig = Signature("coop.warp.exclusive_scan")
    dtype, is_items, lanes, with_aggregate = _scan_arguments(
        sig, value, output, op, width, return_aggregate
    )
    seeded = not is_none(initial)
    if seeded:
        sig.single_value(initial, "initial", dtype)
    convert = converter(dtype)
    up, idx = shuffler(UP, lanes), shuffler(IDX, lanes)
    check_output = output_check(sig.primitive, is_items)
    if is_items and seeded:

        def impl(value, op, initial, output):
            check_output(value, output)
            return exclusive_scan_warp_items(
                value, output, op, convert, up, idx, lanes, convert(initial)
            )

    elif is_items:

        def impl(value, op, output):
            check_output(value, output)
            return exclusive_scan_warp_items_unseeded(value, output, op, convert, up, idx, lanes)

    elif seeded and with_aggregate:

        def impl(value, op, initial):
            _, exclusive, aggregate = scan_lanes(value, op, convert, up, idx, lanes)
            return seeded_exclusive(exclusive, op, convert, convert(initial), lanes), aggregate

    elif seeded:

        def impl(value, op, initial):
            _, exclusive, _ = scan_lanes(value, op, convert, up, idx, lanes)
            return seeded_exclusive(exclusive, op, convert, convert(initial), lanes)

    elif with_aggregate:

        def impl(value, op):
            _, exclusive, aggregate = scan_lanes(value, op, convert, up, idx, lanes)
            return exclusive, aggregate

    else:

        def impl(value, op):
            _, exclusive, _ = scan_lanes(value, op, convert, up, idx, lanes)
            return exclusive

    return impl


def _specialise_sum(name, scan, value, output, width, return_aggregate, exclusive):
    sig = Signature(name)
    dtype, is_items, with_aggregate = sig.scan_input(value, output, return_aggregate)
    dtype, _, counted = sig.sum_input(value, count_items=False)
    lanes = sig.width(width)
    zero = converter(dtype)
    widen = zero if counted else same  # bools are counted as int32
    # The sum forwards to the general scan, with the constants it was specialised for.
    if exclusive and is_items:

        def impl(value, output):
            return scan(value, add, zero(0), output, lanes)

    elif exclusive:

        def impl(value):
            return scan(widen(value), add, zero(0), None, lanes, with_aggregate)

    elif is_items:

        def impl(value, output):
            return scan(value, add, output, lanes)

    else:

        def impl(value):
            return scan(widen(value), add, None, lanes, with_aggregate)

    return impl


@primitive("coop.warp.inclusive_sum", group="warp")
def inclusive_sum(value, output=None, width=32, return_aggregate=False):
    """Inclusive prefix sum over a logical warp (CUB WarpScan::InclusiveSum): lane
    ``l`` gets the sum of the inputs of lanes 0..l (with items arrays: item ``k`` of the
    warp's tile the sum of items 0..k).

    Parameters
    ----------
    value : number or items array
        {warp_value}
        {scan_sum_types}
    output : items array, optional
        {scan_output}
    width : int, compile-time constant, default 32
        {width}
    return_aggregate : bool, compile-time constant, default False
        {return_aggregate}

    Returns
    -------
    value, tuple or aggregate
        {warp_scan_returns}

    Barriers
    --------
    {warp_barriers}

    Notes
    -----
    {collective}

    Example
    -------
    Running sums within logical warps of 16 lanes::

        import numpy as np
        import coop
        from numba import cuda

        @cuda.jit
        def running_sums(x, out):
            i = cuda.grid(1)
            out[i] = coop.warp.inclusive_sum(x[i], width=16)

        x = np.random.default_rng(15).integers(-100, 100, 64).astype(np.int32)
        out = np.zeros_like(x)
        running_sums[1, 64](x, out)
        assert (out == np.cumsum(x.reshape(4, 16), axis=1).ravel()).all()
    """
    return _specialise_sum(
        "coop.warp.inclusive_sum", inclusive_scan, value, output, width, return_aggregate, False
    )


@primitive("coop.warp.exclusive_sum", group="warp")
def exclusive_sum(value, output=None, width=32, return_aggregate=False):
    """Exclusive prefix sum over a logical warp (CUB WarpScan::ExclusiveSum): lane
    ``l`` gets the sum of the inputs of lanes 0..l-1, logical lane 0 (its first item)
    gets 0.

    Parameters
    ----------
    value : number or items array
        {warp_value}
        {scan_sum_types}
    output : items array, optional
        {scan_output}
    width : int, compile-time constant, default 32
        {width}
    return_aggregate : bool, compile-time constant, default False
        {return_aggregate}

    Returns
    -------
    value, tuple or aggregate
        {warp_scan_returns}

    Barriers
    --------
    {warp_barriers}

    Notes
    -----
    {collective}

    Example
    -------
    Stream compaction within each warp: the positive values, in order, to the front of
    the warp's part of ``out``, and how many there are::

        import numpy as np
        import coop
        from numba import cuda

        @cuda.jit
        def compact(x, out, counts):
            i = cuda.grid(1)
            warp = i // 32
            keep = np.int32(x[i] > 0)
            offset, count = coop.warp.exclusive_sum(keep, return_aggregate=True)
            if keep:
                out[warp * 32 + offset] = x[i]
            if cuda.laneid == 0:
                counts[warp] = count

        x = np.random.default_rng(16).integers(-100, 100, 64).astype(np.int32)
        out, counts = np.zeros_like(x), np.zeros(2, np.int32)
        compact[1, 64](x, out, counts)
        for w, part in enumerate(x.reshape(2, 32)):
            kept = part[part > 0]
            assert counts[w] == len(kept) and (out[32 * w : 32 * w + len(kept)] == kept).all()
    """
    return _specialise_sum(
        "coop.warp.exclusive_sum", exclusive_scan, value, output, width, return_aggregate, True
    )


@primitive("coop.warp.broadcast", group="warp", uniform=("src_lane",))
def broadcast(value, src_lane, width=32):
    """Every lane of the logical warp gets the value of logical lane ``src_lane``
    (CUB WarpScan::Broadcast).

    Parameters
    ----------
    value : value
        The lane's value, a scalar or a tuple of scalars (not an items array).
    src_lane : int, run time
        Required: the logical lane whose value every lane gets, ``0 <= src_lane <
        width``, the same in every lane of the logical warp.
    width : int, compile-time constant, default 32
        {width}

    Returns
    -------
    value
        In every lane of the logical warp: logical lane ``src_lane``'s ``value``.

    Barriers
    --------
    {warp_barriers}

    Notes
    -----
    {collective}

    Example
    -------
    The value of logical lane 3 of each logical warp of 8 lanes, in all its lanes::

        import numpy as np
        import coop
        from numba import cuda

        @cuda.jit
        def from_lane_3(x, out):
            i = cuda.grid(1)
            out[i] = coop.warp.broadcast(x[i], 3, width=8)

        x = np.random.default_rng(17).integers(-100, 100, 64).astype(np.int32)
        out = np.zeros_like(x)
        from_lane_3[1, 64](x, out)
        assert (out == np.repeat(x.reshape(8, 8)[:, 3], 8)).all()
    """
    sig = Signature("coop.warp.broadcast")
    dtype, is_items = sig.value_or_items(value, "value")
    if is_items:
        raise sig.error("value", "must be one value per lane, not an items array")
    if sig.run_time_int(src_lane, "src_lane") is None:
        raise sig.error("src_lane", "is required")
    lanes = sig.width(width)
    idx = shuffler(IDX, lanes)

    def impl(value, src_lane):
        _, mask = logical_warp(lanes)
        return idx(mask, value, src_lane)

    return impl
