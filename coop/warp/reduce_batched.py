"""Batched warp reductions (CUB's WarpReduceBatched): many independent reductions at
once, one per batch, each lane giving one item of every batch and getting the results
of some.

Each lane of a logical warp of ``width`` lanes holds an items array of ``batches``
items, item ``b`` its value for batch ``b``. Batch ``b``'s result is ``op`` over the
lanes' items ``b``; the results are spread over the lanes, ``per_lane =
ceil(batches / width)`` in each: ``"striped"``, lane ``l`` gets batches ``l``,
``l + width``, ``l + 2*width``...; ``"blocked"``, lane ``l`` gets batches ``l*per_lane``
to ``l*per_lane + per_lane - 1``. Slots with no batch (past the last) are unspecified.

CUB's algorithm (its WSPRO): a tree of ``width - 1`` shuffles per output slot, not one
reduction of ``log2(width)`` shuffles per batch. At each level a lane keeps half of its
partials and trades the other half with the lane ``stride`` away, so that after
``log2(width)`` levels each lane holds one batch's result: for ``width`` batches,
``width - 1`` shuffles instead of ``width * log2(width)``. Where a subtree holds only
batches past the last, its shuffles are left out. Values are combined in lane order, so
``op`` need not be commutative (CUB's needs to be; for operators that are, the lanes'
operands are not put in order, one select fewer a step). Integer sums, minima, maxima and
bitwise operations of full warps over at most 8 batches use ``redux.sync`` once per batch
instead, as CUB.
"""

from coop._core.backend import cuda
from coop._core.items import generated
from coop._core.shuffle import XOR, logical_warp, shuffler, warp_redux
from coop._core.specialize import Signature, device_function, is_none, primitive
from coop._core.values import converter, is_numeric_scalar, select
from coop.ops import add, commutes, redux_kind

__all__ = ["reduce_batched", "sum_batched"]

ARRANGEMENTS = ("striped", "blocked")


def _batch(slot, position, per_lane, width, blocked):
    """The batch whose result output slot ``slot`` of logical lane ``position`` holds."""
    return slot + position * per_lane if blocked else slot * width + position


def _reducer(dtype, batches, width, blocked, redux, commutative):
    """``reduce(items, results, op)``: the lane's ``per_lane`` results into ``results``,
    the tree written out as straight-line code (CUB's is a template recursion): one
    ``combine`` per pair of subtrees holding a batch (``commutative``: ``op``'s operands
    in either order, one select fewer); or, ``redux`` (coop.ops.redux_kind), one
    ``redux.sync`` a batch."""
    per_lane = -(-batches // width)
    if redux is not None:
        warp_reduced = warp_redux(redux)

        def reduce(items, results, op):
            lane, mask = logical_warp(width)
            for b in range(batches):
                total = warp_reduced(mask, items[b])
                if lane == (b // per_lane if blocked else b % width):
                    results[b % per_lane if blocked else b // width] = total

        return device_function(reduce)

    convert = converter(dtype)
    xor = shuffler(XOR, width)

    # The lower lane keeps the lower subtree's partial, the higher lane the other's; each
    # gets its partner's partial of what it keeps. The lane choices are selects, not
    # branches (see select); the condition is computed here, since a bool argument is
    # unpacked with a branch, which NVVM threads as a Python conditional.
    if commutative:

        @device_function
        def combine(low, high, lane, stride, mask, op):
            low_lane = (lane & stride) == 0
            got = xor(mask, select(low_lane, high, low), stride)
            return convert(op(got, select(low_lane, low, high)))  # (CUB's order: the operands' is immaterial)

    else:

        @device_function
        def combine(low, high, lane, stride, mask, op):
            # combined in lane order: op(the lower lanes' partial, the higher lanes')
            low_lane = (lane & stride) == 0
            got = xor(mask, select(low_lane, high, low), stride)
            return convert(op(select(low_lane, low, got), select(low_lane, got, high)))

    lines = ["def reduce(items, results, op):", "    lane, mask = logical_warp(width)"]
    strides = []
    stride = 1
    while stride < width:
        strides.append(stride)
        stride *= 2
    for slot in range(per_lane):
        names = []
        for position in range(width):
            b = _batch(slot, position, per_lane, width, blocked)
            names.append(f"leaf_{slot}_{position}")
            lines.append(f"    {names[-1]} = items[{min(b, batches - 1)}]")
        for stride in strides:
            paired = []
            for pair in range(len(names) // 2):
                name = f"partial_{slot}_{stride}_{pair}"
                if _batch(slot, 2 * pair * stride, per_lane, width, blocked) < batches:
                    lines.append(f"    {name} = combine({names[2 * pair]}, {names[2 * pair + 1]}, lane, "
                                 f"{stride}, mask, op)")
                else:  # (no batch in this subtree: its result is in no lane's slot)
                    lines.append(f"    {name} = {names[2 * pair]}")
                paired.append(name)
            names = paired
        lines.append(f"    results[{slot}] = {names[0]}")
    return generated("\n".join(lines) + "\n", "reduce", logical_warp=logical_warp, combine=combine, width=width)


def _specialise(name, items, op, output, batches, width, arrangement):
    """The generator behind reduce_batched and sum_batched (``op`` None: a sum)."""
    sig = Signature(name)
    dtype = sig.items(items, "items")
    count = sig.constant_int(batches, "batches")
    if count < 1:
        raise sig.error("batches", f"must be at least 1 (the items array's length), got {count}")
    lanes = sig.width(width)
    blocked = sig.choice(arrangement, "arrangement", ARRANGEMENTS) == "blocked"
    per_lane = -(-count // lanes)
    summed = op is None
    if summed:
        if not is_numeric_scalar(dtype):
            raise sig.error("items", f"must hold numbers to sum, got {dtype}")
    else:
        sig.operator(op, dtype)
    returned = is_none(output)
    if returned and per_lane > 1:
        raise sig.error("output", f"is required for more batches than lanes ({count} batches, width {lanes}): an "
                                  f"items array of ceil(batches / width) = {per_lane} items gets the lane's results")
    if not returned:
        sig.output_items(output, "output", dtype)
    commutative = summed or commutes(op, dtype)
    # (redux.sync: full warps of at most 8 batches, as CUB's redux_performs_better)
    reduce = _reducer(dtype, count, lanes, blocked, redux_kind(op, dtype) if lanes == 32 and count <= 8 else None,
                      commutative)

    if returned and summed:

        def impl(items):
            results = cuda.local.array(1, dtype)
            reduce(items, results, add)
            return results[0]

    elif returned:

        def impl(items, op):
            results = cuda.local.array(1, dtype)
            reduce(items, results, op)
            return results[0]

    elif summed:

        def impl(items, output):
            results = cuda.local.array(per_lane, dtype)  # (output may be items)
            reduce(items, results, add)
            for k in range(per_lane):
                output[k] = results[k]

    else:

        def impl(items, op, output):
            results = cuda.local.array(per_lane, dtype)
            reduce(items, results, op)
            for k in range(per_lane):
                output[k] = results[k]

    return impl


@primitive("coop.warp.reduce_batched", group="warp")
def reduce_batched(items, op, output=None, batches=None, width=32, arrangement="striped"):
    """Reduce each of ``batches`` batches over a logical warp with ``op``, the results
    spread over its lanes (CUB WarpReduceBatched::Reduce, ReduceToStriped and
    ReduceToBlocked).

    Parameters
    ----------
    items : items array
        The lane's item of every batch: ``cuda.local.array(batches, dtype)``, item ``b``
        for batch ``b``. Items may be bool, int8 ... uint64, float16, float32, float64,
        complex64 or complex128.
    op : operator
        {op}
    output : items array, optional
        {batched_output}
    batches : int, compile-time constant
        {batches}
    width : int, compile-time constant, default 32
        {width}
    arrangement : str, compile-time constant, default "striped"
        {batched_arrangement}

    Returns
    -------
    value or None
        Without ``output``: in logical lane ``l``, the result of batch ``l`` (unspecified
        in lanes ``batches`` and above). With ``output``: None.

    Barriers
    --------
    {warp_barriers}

    Notes
    -----
    {collective}

    ``width - 1`` shuffles per result a lane gets (CUB's WSPRO tree: each level trades
    half of a lane's partials with another lane), where a reduction per batch would take
    ``log2(width)`` shuffles per batch. Values are combined in lane order. Sums, minima,
    maxima and bitwise operations (``coop.ops``'s, ``operator``'s, the builtin ``min`` and
    ``max``) of integers of 32 bits or fewer in full warps, over at most 8 batches: one
    ``redux.sync`` per batch, as CUB.

    Example
    -------
    The maximum of each of 4 columns of a 32-row table, one reduction per column::

        import numpy as np
        import coop
        from numba import cuda

        @cuda.jit
        def column_maxima(table, maxima):
            row = cuda.laneid
            items = cuda.local.array(4, np.float32)
            for b in range(4):
                items[b] = table[row, b]
            best = coop.warp.reduce_batched(items, coop.ops.max, batches=4)
            if row < 4:
                maxima[row] = best

        table = np.random.default_rng(41).standard_normal((32, 4)).astype(np.float32)
        maxima = np.zeros(4, np.float32)
        column_maxima[1, 32](table, maxima)
        assert (maxima == table.max(axis=0)).all()
    """
    return _specialise("coop.warp.reduce_batched", items, op, output, batches, width, arrangement)


@primitive("coop.warp.sum_batched", group="warp")
def sum_batched(items, output=None, batches=None, width=32, arrangement="striped"):
    """Sum each of ``batches`` batches over a logical warp, the results spread over its
    lanes (CUB WarpReduceBatched::Sum, SumToStriped and SumToBlocked).

    Parameters
    ----------
    items : items array
        The lane's item of every batch: ``cuda.local.array(batches, dtype)``, item ``b``
        for batch ``b``; numbers (integers, floats, complex).
    output : items array, optional
        {batched_output}
    batches : int, compile-time constant
        {batches}
    width : int, compile-time constant, default 32
        {width}
    arrangement : str, compile-time constant, default "striped"
        {batched_arrangement}

    Returns
    -------
    value or None
        Without ``output``: in logical lane ``l``, the sum of batch ``l`` (unspecified in
        lanes ``batches`` and above), of the items' type (integer sums wrap). With
        ``output``: None.

    Barriers
    --------
    {warp_barriers}

    Notes
    -----
    {collective}

    Integer items of 32 bits or fewer in full warps, over at most 8 batches: one
    ``redux.sync`` per batch, as CUB; otherwise the tree of ``reduce_batched``.

    Example
    -------
    RMSNorm's statistics of 64 rows of 96 values, a logical warp of 8 lanes per 8 rows:
    each lane sums the squares of its 12 values of each row, then one call sums the 8
    rows' partials over the lanes, and lane ``l`` gets row ``l``'s sum of squares::

        import numpy as np
        import coop
        from numba import cuda

        @cuda.jit
        def row_sums_of_squares(x, out):
            lane = cuda.laneid % 8
            group = cuda.grid(1) // 8
            partial = cuda.local.array(8, np.float32)
            for r in range(8):
                total = np.float32(0)
                for j in range(12):
                    v = x[group * 8 + r, lane * 12 + j]
                    total += v * v
                partial[r] = total
            out[group * 8 + lane] = coop.warp.sum_batched(partial, batches=8, width=8)

        x = np.random.default_rng(42).standard_normal((64, 96)).astype(np.float32)
        out = np.zeros(64, np.float32)
        row_sums_of_squares[1, 64](x, out)
        assert np.allclose(out, (x.astype(np.float64) ** 2).sum(axis=1), rtol=1e-5)
    """
    return _specialise("coop.warp.sum_batched", items, None, output, batches, width, arrangement)
