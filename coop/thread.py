"""Sequential primitives over one thread's items array (CUB's thread/ layer).

These run inside any kernel, on whatever a thread holds in registers, and are the
building blocks of the warp and block primitives. Loops over a
``cuda.local.array(N, dtype)`` with constant ``N`` unroll fully: items stay in
registers.

Example::

    @cuda.jit
    def k(d_in, d_out):
        items = cuda.local.array(4, np.int32)
        for i in range(4):
            items[i] = d_in[cuda.grid(1) * 4 + i]
        total = coop.thread.exclusive_sum(items, items)   # items now scanned
        d_out[cuda.grid(1)] = total
"""

import numpy as np

from coop.ops import add

from coop._core.misuse import output_check
from coop._core.specialize import Signature, device_function, is_none, primitive
from coop._core.values import converter

__all__ = [
    "reduce",
    "inclusive_scan",
    "exclusive_scan",
    "inclusive_sum",
    "exclusive_sum",
    "transform",
]


# -- building blocks shared with the warp and block layers ------------------------------


@device_function
def reduce_items(items, op, convert):
    total = items[0]
    for i in range(1, len(items)):
        total = convert(op(total, items[i]))
    return total


@device_function
def inclusive_scan_items(items, output, op, convert):
    running = items[0]
    output[0] = running
    for i in range(1, len(items)):
        running = convert(op(running, items[i]))
        output[i] = running
    return running


@device_function
def inclusive_scan_items_with_prefix(items, output, op, convert, prefix):
    running = prefix
    for i in range(len(items)):
        running = convert(op(running, items[i]))
        output[i] = running
    return running


@device_function
def exclusive_scan_items(items, output, op, convert, initial):
    """Exclusive scan seeded with ``initial``; returns the inclusive total."""
    running = initial
    for i in range(len(items)):
        item = items[i]  # read before writing: output may be items
        output[i] = running
        running = convert(op(running, item))
    return running


@device_function
def exclusive_scan_items_unseeded(items, output, op, convert):
    """Exclusive scan with no seed, for the first thread of a warp or block scanned
    without an initial value: ``output[0]`` is unspecified (it gets ``items[0]``) and
    ``output[i]`` is ``op`` over ``items[0..i-1]``. Returns the inclusive total."""
    running = items[0]
    output[0] = running
    for i in range(1, len(items)):
        item = items[i]  # read before writing: output may be items
        output[i] = running
        running = convert(op(running, item))
    return running


@device_function
def count_value(value, rank, valid_items):
    """A bool as an int32 count: sums of bools count them."""
    return np.int32(value)


@device_function
def count_valid_value(value, rank, valid_items):
    if rank < valid_items:
        return np.int32(value)
    return np.int32(0)


@device_function
def count_items(items, rank, valid_items):
    """How many of the thread's bool items are true (int32)."""
    total = np.int32(0)
    for i in range(len(items)):
        total = np.int32(total + np.int32(items[i]))
    return total


@device_function
def count_valid_items(items, rank, valid_items):
    """As count_items, of the items whose tile index (rank * len(items) + i) is below
    ``valid_items``."""
    n = len(items)
    total = np.int32(0)
    for i in range(n):
        if rank * n + i < valid_items:
            total = np.int32(total + np.int32(items[i]))
    return total


def counter(is_items, partial):
    """The thread's contribution to a sum of bools, ``count(value, rank, valid_items)``:
    its true values as an int32, counting only tile positions below ``valid_items`` if
    ``partial``."""
    if is_items:
        return count_valid_items if partial else count_items
    return count_valid_value if partial else count_value


# -- public primitives -------------------------------------------------------------------


@primitive("coop.thread.reduce")
def reduce(items, op, prefix=None):
    """Reduce one thread's ``items`` with the binary ``op`` (CUB ThreadReduce).

    Returns ``op(...op(op(prefix, items[0]), items[1])..., items[N-1])``, or without
    ``prefix`` the reduction of the items alone. ``op`` need not be commutative: items
    are combined in order.

    Example::

        m = coop.thread.reduce(items, coop.ops.max)
    """
    sig = Signature("coop.thread.reduce")
    dtype = sig.items(items, "items")
    sig.operator(op, dtype)
    convert = converter(dtype)
    if is_none(prefix):

        def impl(items, op, prefix=None):
            return reduce_items(items, op, convert)

    else:
        sig.value_or_items(prefix, "prefix")

        def impl(items, op, prefix=None):
            return reduce_items_with_prefix(items, op, convert, convert(prefix))

    return impl


@device_function
def reduce_items_with_prefix(items, op, convert, prefix):
    total = prefix
    for i in range(len(items)):
        total = convert(op(total, items[i]))
    return total


@primitive("coop.thread.inclusive_scan")
def inclusive_scan(items, output, op, prefix=None):
    """Inclusive prefix scan of one thread's ``items`` into ``output`` (may be ``items``).

    ``output[i] = op(...op(items[0], items[1])..., items[i])``; with ``prefix``, the
    prefix is combined first. Returns the total (the last output). CUB ThreadScanInclusive.

    Example::

        total = coop.thread.inclusive_scan(items, items, operator.add)
    """
    sig = Signature("coop.thread.inclusive_scan")
    dtype = sig.items(items, "items")
    sig.output_items(output, "output", dtype)
    sig.operator(op, dtype)
    convert = converter(dtype)
    check_output = output_check(sig.primitive, True)
    if is_none(prefix):

        def impl(items, output, op, prefix=None):
            check_output(items, output)
            return inclusive_scan_items(items, output, op, convert)

    else:

        def impl(items, output, op, prefix=None):
            check_output(items, output)
            return inclusive_scan_items_with_prefix(items, output, op, convert, convert(prefix))

    return impl


@primitive("coop.thread.exclusive_scan")
def exclusive_scan(items, output, op, initial):
    """Exclusive prefix scan of one thread's ``items`` into ``output`` (may be ``items``).

    ``output[0] = initial`` and ``output[i] = op(output[i-1], items[i-1])``. Returns the
    total ``op(output[N-1], items[N-1])``. CUB ThreadScanExclusive.

    Example::

        total = coop.thread.exclusive_scan(items, items, operator.mul, 1)
    """
    sig = Signature("coop.thread.exclusive_scan")
    dtype = sig.items(items, "items")
    sig.output_items(output, "output", dtype)
    sig.operator(op, dtype)
    convert = converter(dtype)
    check_output = output_check(sig.primitive, True)

    def impl(items, output, op, initial):
        check_output(items, output)
        return exclusive_scan_items(items, output, op, convert, convert(initial))

    return impl


def _specialise_sum(name, scan, items, output, exclusive):
    """The generator behind the sums: ``scan`` with ``coop.ops.add`` (and 0 to start
    the exclusive one)."""
    sig = Signature(name)
    dtype = sig.items(items, "items")
    sig.sum_input(items, "items", count_items=False)
    sig.output_items(output, "output", dtype)
    zero = converter(dtype)
    check_output = output_check(name, True)  # named by the sum, before the scan's own
    if exclusive:

        def impl(items, output):
            check_output(items, output)
            return scan(items, output, add, zero(0))

    else:

        def impl(items, output):
            check_output(items, output)
            return scan(items, output, add)

    return impl


@primitive("coop.thread.inclusive_sum")
def inclusive_sum(items, output):
    """Inclusive prefix sum of ``items`` into ``output``; returns the total.

    Example::

        total = coop.thread.inclusive_sum(items, items)
    """
    return _specialise_sum("coop.thread.inclusive_sum", inclusive_scan, items, output, False)


@primitive("coop.thread.exclusive_sum")
def exclusive_sum(items, output):
    """Exclusive prefix sum of ``items`` into ``output`` (``output[0] = 0``); returns
    the total.

    Example::

        total = coop.thread.exclusive_sum(items, items)
    """
    return _specialise_sum("coop.thread.exclusive_sum", exclusive_scan, items, output, True)


@primitive("coop.thread.transform")
def transform(items, output, fn):
    """``output[i] = fn(items[i])`` for every item (``output`` may be ``items``); the
    result is converted to ``output``'s dtype.

    Example::

        coop.thread.transform(items, items, lambda x: x * x)
    """
    sig = Signature("coop.thread.transform")
    in_dtype = sig.items(items, "items")
    sig.writable(output, "output")
    out_dtype = sig.items(output, "output")
    sig.operator(fn, in_dtype, param="fn", arity=1, result_type=out_dtype)
    convert = converter(out_dtype)
    check_output = output_check(sig.primitive, True)

    def impl(items, output, fn):
        check_output(items, output)
        for i in range(len(items)):
            output[i] = convert(fn(items[i]))

    return impl
