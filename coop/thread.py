"""Sequential primitives over one thread's items array (CUB's thread/ layer).

These run inside any kernel, on whatever a thread holds in registers, and are the
building blocks of the warp and block primitives: ``reduce``, ``inclusive_scan``,
``exclusive_scan``, ``inclusive_sum``, ``exclusive_sum`` and ``transform``. Only the
calling thread takes part: no shared memory, no barriers. Loops over a
``cuda.local.array(N, dtype)`` with constant ``N`` unroll fully: items stay in
registers. Each function's docstring has a complete example.

Fragment (inside a kernel)::

    items = cuda.local.array(4, np.int32)
    for i in range(4):
        items[i] = d_in[cuda.grid(1) * 4 + i]
    total = coop.thread.exclusive_sum(items, items)   # items now scanned
"""

import numpy as np

from coop.ops import add

from coop._core.misuse import output_check
from coop._core.namespace import public_namespace
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

# what other families compose (the building-block tier: tests/test_layering.py)
BUILDING_BLOCKS = ["counter", "reduce_items", "inclusive_scan_items", "inclusive_scan_items_with_prefix",
                   "exclusive_scan_items", "exclusive_scan_items_unseeded"]


# -- building blocks shared with the warp and block layers ------------------------------


@device_function
def reduce_items(items, op, convert):
    """The items folded left to right by ``op``, each result converted by ``convert``."""
    total = items[0]
    for i in range(1, len(items)):
        total = convert(op(total, items[i]))
    return total


@device_function
def inclusive_scan_items(items, output, op, convert):
    """Inclusive scan of ``items`` into ``output`` (which may be ``items``); returns the total."""
    running = items[0]
    output[0] = running
    for i in range(1, len(items)):
        running = convert(op(running, items[i]))
        output[i] = running
    return running


@device_function
def inclusive_scan_items_with_prefix(items, output, op, convert, prefix):
    """Inclusive scan of ``items`` into ``output`` seeded with ``prefix``; returns the total."""
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
    """Reduce one thread's ``items`` with the binary ``op``, in order (CUB ThreadReduce).

    Computes ``op(...op(op(prefix, items[0]), items[1])..., items[N-1])``, or without
    ``prefix`` ``op(...op(items[0], items[1])..., items[N-1])``. Items are combined
    left to right, so ``op`` need be neither associative nor commutative.

    Parameters
    ----------
    items : items array
        {thread_items}
    op : operator
        {op}
    prefix : value, optional
        Run-time value combined before the first item, converted to the items' dtype.
        Default None: no prefix.

    Returns
    -------
    value
        The reduction, of the items' dtype, to the calling thread.

    Barriers
    --------
    None: only the calling thread's registers.

    Notes
    -----
    {kernel_side}

    Example
    -------
    The largest of each thread's four items::

        import numpy as np
        import coop
        from numba import cuda

        @cuda.jit
        def row_max(x, out):
            i = cuda.grid(1)
            items = cuda.local.array(4, np.int32)
            for k in range(4):
                items[k] = x[i, k]
            out[i] = coop.thread.reduce(items, coop.ops.max)

        x = np.random.default_rng(1).integers(-100, 100, (32, 4)).astype(np.int32)
        out = np.zeros(32, np.int32)
        row_max[1, 32](x, out)
        assert (out == x.max(axis=1)).all()

    Fragment (inside a kernel): a sum that starts from 100::

        total = coop.thread.reduce(items, operator.add, prefix=100)
    """
    sig = Signature("coop.thread.reduce")
    dtype = sig.items(items, "items")
    sig.operator(op, dtype)
    convert = converter(dtype)
    if is_none(prefix):

        def impl(items, op):
            return reduce_items(items, op, convert)

    else:
        sig.single_value(prefix, "prefix", dtype)

        def impl(items, op, prefix):
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
    """Inclusive prefix scan of one thread's ``items`` into ``output`` (CUB
    ThreadScanInclusive).

    ``output[i] = op(...op(items[0], items[1])..., items[i])``; with ``prefix``,
    ``output[i] = op(...op(prefix, items[0])..., items[i])``. Items are combined left
    to right, so ``op`` need be neither associative nor commutative.

    Parameters
    ----------
    items : items array
        {thread_items}
    output : items array
        {thread_output}
    op : operator
        {op}
    prefix : value, optional
        Run-time value combined before the first item, converted to the items' dtype.
        Default None: ``output[0]`` is ``items[0]``.

    Returns
    -------
    value
        The total, ``output[N-1]``, to the calling thread.

    Barriers
    --------
    None: only the calling thread's registers.

    Notes
    -----
    {kernel_side}

    Example
    -------
    Running maximum of each thread's four items, in place::

        import numpy as np
        import coop
        from numba import cuda

        @cuda.jit
        def running_max(x, out, totals):
            i = cuda.grid(1)
            items = cuda.local.array(4, np.int32)
            for k in range(4):
                items[k] = x[i, k]
            totals[i] = coop.thread.inclusive_scan(items, items, lambda a, b: max(a, b))
            for k in range(4):
                out[i, k] = items[k]

        x = np.random.default_rng(2).integers(-100, 100, (32, 4)).astype(np.int32)
        out, totals = np.zeros_like(x), np.zeros(32, np.int32)
        running_max[1, 32](x, out, totals)
        assert (out == np.maximum.accumulate(x, axis=1)).all()
        assert (totals == x.max(axis=1)).all()
    """
    sig = Signature("coop.thread.inclusive_scan")
    dtype = sig.items(items, "items")
    sig.output_items(output, "output", dtype)
    sig.operator(op, dtype)
    convert = converter(dtype)
    check_output = output_check(sig.primitive, True)
    if not is_none(prefix):
        sig.single_value(prefix, "prefix", dtype)
    if is_none(prefix):

        def impl(items, output, op):
            check_output(items, output)
            return inclusive_scan_items(items, output, op, convert)

    else:

        def impl(items, output, op, prefix):
            check_output(items, output)
            return inclusive_scan_items_with_prefix(items, output, op, convert, convert(prefix))

    return impl


@primitive("coop.thread.exclusive_scan")
def exclusive_scan(items, output, op, initial):
    """Exclusive prefix scan of one thread's ``items`` into ``output``, seeded with
    ``initial`` (CUB ThreadScanExclusive).

    ``output[0] = initial`` and ``output[i] = op(output[i-1], items[i-1])``. Items are
    combined left to right, so ``op`` need be neither associative nor commutative.

    Parameters
    ----------
    items : items array
        {thread_items}
    output : items array
        {thread_output}
    op : operator
        {op}
    initial : value
        Required run-time value: the seed, converted to the items' dtype.

    Returns
    -------
    value
        The total ``op(output[N-1], items[N-1])`` (``initial`` included), to the
        calling thread.

    Barriers
    --------
    None: only the calling thread's registers.

    Notes
    -----
    {kernel_side}

    Example
    -------
    Exclusive running products of each thread's four items, seeded with 1::

        import operator
        import numpy as np
        import coop
        from numba import cuda

        @cuda.jit
        def products(x, out, totals):
            i = cuda.grid(1)
            items = cuda.local.array(4, np.int64)
            for k in range(4):
                items[k] = x[i, k]
            totals[i] = coop.thread.exclusive_scan(items, items, operator.mul, 1)
            for k in range(4):
                out[i, k] = items[k]

        x = np.random.default_rng(3).integers(-5, 6, (32, 4))
        out, totals = np.zeros_like(x), np.zeros(32, np.int64)
        products[1, 32](x, out, totals)
        assert (out[:, 0] == 1).all()
        assert (out[:, 1:] == np.cumprod(x, axis=1)[:, :-1]).all()
        assert (totals == x.prod(axis=1)).all()
    """
    sig = Signature("coop.thread.exclusive_scan")
    dtype = sig.items(items, "items")
    sig.output_items(output, "output", dtype)
    sig.single_value(initial, "initial", dtype)
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
    """Inclusive prefix sum of one thread's ``items`` into ``output``
    (CUB ThreadScanInclusive with addition): ``output[i] = items[0] + ... + items[i]``.

    Parameters
    ----------
    items : items array
        {thread_items}
        Numbers only (integers, floats, complex; for bool use ``coop.thread.inclusive_scan``
        with an operator). Integer sums wrap in the items' dtype.
    output : items array
        {thread_output}

    Returns
    -------
    value
        The sum of the items, to the calling thread.

    Barriers
    --------
    None: only the calling thread's registers.

    Notes
    -----
    {kernel_side}

    Example
    -------
    Each thread's running sum, in place::

        import numpy as np
        import coop
        from numba import cuda

        @cuda.jit
        def running_sums(x, out, totals):
            i = cuda.grid(1)
            items = cuda.local.array(4, np.int32)
            for k in range(4):
                items[k] = x[i, k]
            totals[i] = coop.thread.inclusive_sum(items, items)
            for k in range(4):
                out[i, k] = items[k]

        x = np.random.default_rng(4).integers(-100, 100, (32, 4)).astype(np.int32)
        out, totals = np.zeros_like(x), np.zeros(32, np.int32)
        running_sums[1, 32](x, out, totals)
        assert (out == np.cumsum(x, axis=1)).all() and (totals == x.sum(axis=1)).all()
    """
    return _specialise_sum("coop.thread.inclusive_sum", inclusive_scan, items, output, False)


@primitive("coop.thread.exclusive_sum")
def exclusive_sum(items, output):
    """Exclusive prefix sum of one thread's ``items`` into ``output`` (CUB
    ThreadScanExclusive with addition from 0): ``output[0] = 0``,
    ``output[i] = items[0] + ... + items[i-1]``.

    Parameters
    ----------
    items : items array
        {thread_items}
        Numbers only (integers, floats, complex; for bool use ``coop.thread.exclusive_scan``
        with an operator). Integer sums wrap in the items' dtype.
    output : items array
        {thread_output}

    Returns
    -------
    value
        The sum of all the items, to the calling thread.

    Barriers
    --------
    None: only the calling thread's registers.

    Notes
    -----
    {kernel_side}

    Example
    -------
    Offsets of each thread's four counts, in place, and their total::

        import numpy as np
        import coop
        from numba import cuda

        @cuda.jit
        def offsets(counts, out, totals):
            i = cuda.grid(1)
            items = cuda.local.array(4, np.int32)
            for k in range(4):
                items[k] = counts[i, k]
            totals[i] = coop.thread.exclusive_sum(items, items)
            for k in range(4):
                out[i, k] = items[k]

        counts = np.random.default_rng(5).integers(0, 10, (32, 4)).astype(np.int32)
        out, totals = np.zeros_like(counts), np.zeros(32, np.int32)
        offsets[1, 32](counts, out, totals)
        assert (out == np.cumsum(counts, axis=1) - counts).all()
        assert (totals == counts.sum(axis=1)).all()
    """
    return _specialise_sum("coop.thread.exclusive_sum", exclusive_scan, items, output, True)


@primitive("coop.thread.transform")
def transform(items, output, fn):
    """Apply ``fn`` to each of one thread's items: ``output[i] = fn(items[i])`` (no CUB
    counterpart; ``std::transform`` over the items).

    Parameters
    ----------
    items : items array
        {thread_items}
    output : items array
        An items array at least as long as ``items``, of any dtype: each result is
        converted to it. It may be ``items`` itself (in place).
    fn : function
        Compile-time choice of a one-argument function (a lambda written in the
        kernel, a ``@cuda.jit(device=True)`` function, ...), taking an item and
        returning something convertible to ``output``'s dtype.

    Returns
    -------
    None
        ``output`` holds the results.

    Barriers
    --------
    None: only the calling thread's registers.

    Notes
    -----
    {kernel_side}

    Example
    -------
    Squares of int32 items, into float64 items::

        import numpy as np
        import coop
        from numba import cuda

        @cuda.jit
        def squares(x, out):
            i = cuda.grid(1)
            items = cuda.local.array(4, np.int32)
            result = cuda.local.array(4, np.float64)
            for k in range(4):
                items[k] = x[i, k]
            coop.thread.transform(items, result, lambda v: v * v)
            for k in range(4):
                out[i, k] = result[k]

        x = np.random.default_rng(6).integers(-100, 100, (32, 4)).astype(np.int32)
        out = np.zeros((32, 4), np.float64)
        squares[1, 32](x, out)
        assert (out == x.astype(np.float64) ** 2).all()
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


public_namespace(__name__)
