"""Named binary operators for coop's reductions and scans (CUB's operator functors).

Each can be passed to any primitive and called in user kernels too; each operator's
docstring has a complete example.

Fragment (inside a kernel)::

    total = coop.warp.reduce(x, coop.ops.max)
    best = coop.warp.reduce((x, i), coop.ops.argmax)   # (value, index) pairs

``min``/``max`` follow CUB (``b if b < a else a``, ``b if a < b else a``): the first
operand wins ties. ``argmin``/``argmax`` take ``(value, index)`` tuples and, like
CUB's ArgMin/ArgMax, return the pair with the smaller/larger value, and of equal
values the one with the smaller index.

float16 arithmetic and comparisons go through float32 with identical results: Numba's
own float16 operators are out-of-line calls that spill to local memory, so prefer these
(or ``sum``) over ``operator.add`` for float16 data.
"""

import builtins
import operator

from numba.cuda import types

from coop._core.specialize import is_function, primitive
from coop._core.arithmetic import arithmetic, less

__all__ = [
    "add",
    "mul",
    "min",
    "max",
    "bit_and",
    "bit_or",
    "bit_xor",
    "logical_and",
    "logical_or",
    "argmin",
    "argmax",
]

add = arithmetic("coop.ops.add", lambda a, b: a + b)
mul = arithmetic("coop.ops.mul", lambda a, b: a * b)


def _plain(qualname, doc):
    """An operator whose body is the same for every type (the body is the generator's
    implementation)."""

    def decorate(fn):
        def generator(a, b):
            return fn

        generator.__name__ = fn.__name__
        generator.__doc__ = doc
        return primitive(qualname)(generator)

    return decorate


@_plain("coop.ops.min", "``b if b < a else a`` (CUB Min).")
def min(a, b):  # noqa: A001  (CUB's name)
    return b if less(b, a) else a


@_plain("coop.ops.max", "``b if a < b else a`` (CUB Max).")
def max(a, b):  # noqa: A001
    return b if less(a, b) else a


@_plain("coop.ops.bit_and", "``a & b``.")
def bit_and(a, b):
    return a & b


@_plain("coop.ops.bit_or", "``a | b``.")
def bit_or(a, b):
    return a | b


@_plain("coop.ops.bit_xor", "``a ^ b``.")
def bit_xor(a, b):
    return a ^ b


@_plain("coop.ops.logical_and", "``bool(a) and bool(b)``.")
def logical_and(a, b):
    return bool(a) and bool(b)


@_plain("coop.ops.logical_or", "``bool(a) or bool(b)``.")
def logical_or(a, b):
    return bool(a) or bool(b)


@_plain("coop.ops.argmin", "Of two ``(value, index)`` pairs, the smaller value; of equal values, the smaller index (CUB ArgMin).")
def argmin(a, b):
    if less(b[0], a[0]) or (not less(a[0], b[0]) and b[1] < a[1]):
        return b
    return a


@_plain("coop.ops.argmax", "Of two ``(value, index)`` pairs, the larger value; of equal values, the smaller index (CUB ArgMax).")
def argmax(a, b):
    if less(a[0], b[0]) or (not less(b[0], a[0]) and b[1] < a[1]):
        return b
    return a


# -- what coop's collectives ask of an operator ---------------------------------------------

# what other families compose (the building-block tier: tests/test_layering.py)
BUILDING_BLOCKS = ["commutes", "redux_kind"]


#: Operators whose two operands can be swapped without changing a bit of the result
_COMMUTATIVE = (operator.add, operator.mul, operator.and_, operator.or_, operator.xor, add, mul, bit_and, bit_or,
                bit_xor, logical_and, logical_or)
#: ... and those that commute on integers only (of two equal floats, -0.0 and 0.0 or two
#: NaNs, the first operand wins)
_INTEGER_COMMUTATIVE = (min, max, builtins.min, builtins.max)


def commutes(op, value_type):
    """Whether the operator argument ``op`` (a type) gives the same bits with its
    operands swapped, for values of ``value_type`` (a Numba type): a collective may then
    combine them in either order, without selecting which goes first."""
    return is_function(op, *_COMMUTATIVE) or (
        is_function(op, *_INTEGER_COMMUTATIVE) and isinstance(types.unliteral(value_type), (types.Integer, types.Boolean)))


#: The operators one ``redux.sync`` computes over a warp's integers, by its operation
_REDUX_KINDS = (
    ("add", (operator.add, add)),
    ("min", (min, builtins.min)),
    ("max", (max, builtins.max)),
    ("and", (operator.and_, bit_and)),
    ("or", (operator.or_, bit_or)),
    ("xor", (operator.xor, bit_xor)),
)


def redux_kind(op, value_type):
    """The ``redux.sync`` operation (``"add"``, ``"min"``, ``"max"``, ``"and"``, ``"or"``,
    ``"xor"``) that computes the operator argument ``op`` (a type; None: a sum) over a
    warp's values of ``value_type``, or None: integers of 32 bits or fewer (sm_80's redux,
    as CUB's ``warp_redux``; each value extended to 32 bits in its signedness gives the
    same result bits)."""
    ty = types.unliteral(value_type)
    if not (isinstance(ty, types.Integer) and ty.bitwidth <= 32):
        return None
    if op is None:
        return "add"
    return next((kind for kind, functions in _REDUX_KINDS if is_function(op, *functions)), None)


# -- docstrings (help(coop.ops.add) shows them) ------------------------------------------
# Set here, not in the definitions above, which build the operators with helpers.

from coop._core.docs import expand as _expand  # noqa: E402
from coop._core.namespace import public_namespace  # noqa: E402

add.__doc__ = _expand(
    """``a + b`` (CUB Sum, ``cuda::std::plus``): two float16 operands are added in float32
    and rounded back to float16, which gives the bits of the float16 sum without
    Numba's out-of-line float16 arithmetic.

    Parameters
    ----------
    a, b : values
        {operator_arguments}

    Returns
    -------
    value
        {operator_result}
        float16 for two float16 operands.

    Notes
    -----
    {kernel_side}

    Example
    -------
    Called directly, and passed to a warp reduction, on float16 values::

        import numpy as np
        import coop
        from numba import cuda

        @cuda.jit
        def add_and_sum(a, b, out, totals):
            i = cuda.grid(1)
            out[i] = coop.ops.add(a[i], b[i])
            total = coop.warp.reduce(a[i], coop.ops.add)
            if cuda.laneid == 0:
                totals[i // 32] = total

        rng = np.random.default_rng(31)
        a = rng.integers(-8, 9, 64).astype(np.float16)
        b = rng.integers(-8, 9, 64).astype(np.float16)
        out, totals = np.zeros_like(a), np.zeros(2, np.float16)
        add_and_sum[1, 64](a, b, out, totals)
        assert (out == a + b).all() and (totals == a.reshape(2, 32).sum(axis=1)).all()
    """
)

mul.__doc__ = _expand(
    """``a * b`` (CUB uses ``cuda::std::multiplies``): two float16 operands are multiplied
    in float32 and rounded back to float16, which gives the bits of the float16 product.

    Parameters
    ----------
    a, b : values
        {operator_arguments}

    Returns
    -------
    value
        {operator_result}
        float16 for two float16 operands.

    Notes
    -----
    {kernel_side}

    Example
    -------
    Called directly, and as the operator of a reduction over logical warps of 4 lanes::

        import numpy as np
        import coop
        from numba import cuda

        @cuda.jit
        def products(a, b, out, groups):
            i = cuda.grid(1)
            out[i] = coop.ops.mul(a[i], b[i])
            groups[i] = coop.warp.all_reduce(a[i], coop.ops.mul, width=4)

        rng = np.random.default_rng(32)
        a = rng.integers(-3, 4, 32).astype(np.int32)
        b = rng.integers(-3, 4, 32).astype(np.int32)
        out, groups = np.zeros_like(a), np.zeros_like(a)
        products[1, 32](a, b, out, groups)
        assert (out == a * b).all()
        assert (groups == np.repeat(a.reshape(8, 4).prod(axis=1), 4)).all()
    """
)

min.__doc__ = _expand(
    """``b if b < a else a`` (CUB Min, ``cuda::minimum`` of CUDA 13.0's CCCL 3.0): of
    equal operands, ``a``; a NaN ``a`` is kept, a NaN ``b`` passed over. (CCCL 3.5's
    ``cuda::minimum`` of floating-point values is ``fmin``, which passes over every
    NaN.)

    float16 operands are compared through float32, exactly.

    Parameters
    ----------
    a, b : values
        Two values that ``<`` compares (integers, floats, bools).

    Returns
    -------
    value
        ``a`` or ``b``, as given.

    Notes
    -----
    {kernel_side}

    Example
    -------
    Called directly, and passed to a warp reduction::

        import numpy as np
        import coop
        from numba import cuda

        @cuda.jit
        def minima(a, b, out, warp_min):
            i = cuda.grid(1)
            out[i] = coop.ops.min(a[i], b[i])
            m = coop.warp.reduce(a[i], coop.ops.min)
            if cuda.laneid == 0:
                warp_min[i // 32] = m

        rng = np.random.default_rng(33)
        a = rng.integers(-100, 100, 64).astype(np.int32)
        b = rng.integers(-100, 100, 64).astype(np.int32)
        out, warp_min = np.zeros_like(a), np.zeros(2, np.int32)
        minima[1, 64](a, b, out, warp_min)
        assert (out == np.minimum(a, b)).all() and (warp_min == a.reshape(2, 32).min(axis=1)).all()
    """
)

max.__doc__ = _expand(
    """``b if a < b else a`` (CUB Max, ``cuda::maximum`` of CUDA 13.0's CCCL 3.0): of
    equal operands, ``a``; a NaN ``a`` is kept, a NaN ``b`` passed over. (CCCL 3.5's
    ``cuda::maximum`` of floating-point values is ``fmax``, which passes over every
    NaN.)

    float16 operands are compared through float32, exactly.

    Parameters
    ----------
    a, b : values
        Two values that ``<`` compares (integers, floats, bools).

    Returns
    -------
    value
        ``a`` or ``b``, as given.

    Notes
    -----
    {kernel_side}

    Example
    -------
    Called directly, and passed to a block scan (a running maximum)::

        import numpy as np
        import coop
        from numba import cuda

        @cuda.jit
        def maxima(a, b, out, running):
            i = cuda.grid(1)
            out[i] = coop.ops.max(a[i], b[i])
            running[i] = coop.block.inclusive_scan(a[i], coop.ops.max)

        rng = np.random.default_rng(34)
        a = rng.integers(-100, 100, 64).astype(np.int32)
        b = rng.integers(-100, 100, 64).astype(np.int32)
        out, running = np.zeros_like(a), np.zeros_like(a)
        maxima[1, 64](a, b, out, running)
        assert (out == np.maximum(a, b)).all() and (running == np.maximum.accumulate(a)).all()
    """
)

bit_and.__doc__ = _expand(
    """``a & b`` (CUB uses ``cuda::std::bit_and``).

    Parameters
    ----------
    a, b : values
        {operator_arguments}

    Returns
    -------
    value
        {operator_result}

    Notes
    -----
    {kernel_side}

    Example
    -------
    The bits set in every value of each warp, in every lane::

        import numpy as np
        import coop
        from numba import cuda

        @cuda.jit
        def common_bits(x, out):
            i = cuda.grid(1)
            out[i] = coop.warp.all_reduce(x[i], coop.ops.bit_and)

        x = np.random.default_rng(35).integers(0, 2**32, 64, dtype=np.uint32) | np.uint32(0x10001)
        out = np.zeros_like(x)
        common_bits[1, 64](x, out)
        assert (out == np.repeat(np.bitwise_and.reduce(x.reshape(2, 32), axis=1), 32)).all()
    """
)

bit_or.__doc__ = _expand(
    """``a | b`` (CUB uses ``cuda::std::bit_or``).

    Parameters
    ----------
    a, b : values
        {operator_arguments}

    Returns
    -------
    value
        {operator_result}

    Notes
    -----
    {kernel_side}

    Example
    -------
    The bits set in any value of each warp, in every lane::

        import numpy as np
        import coop
        from numba import cuda

        @cuda.jit
        def any_bits(x, out):
            i = cuda.grid(1)
            out[i] = coop.warp.all_reduce(x[i], coop.ops.bit_or)

        x = np.uint32(1) << np.random.default_rng(36).integers(0, 32, 64).astype(np.uint32)
        out = np.zeros_like(x)
        any_bits[1, 64](x, out)
        assert (out == np.repeat(np.bitwise_or.reduce(x.reshape(2, 32), axis=1), 32)).all()
    """
)

bit_xor.__doc__ = _expand(
    """``a ^ b`` (CUB uses ``cuda::std::bit_xor``).

    Parameters
    ----------
    a, b : values
        {operator_arguments}

    Returns
    -------
    value
        {operator_result}

    Notes
    -----
    {kernel_side}

    Example
    -------
    A running parity (exclusive-or scan) over each warp::

        import numpy as np
        import coop
        from numba import cuda

        @cuda.jit
        def running_xor(x, out):
            i = cuda.grid(1)
            out[i] = coop.warp.inclusive_scan(x[i], coop.ops.bit_xor)

        x = np.random.default_rng(37).integers(0, 2**32, 64, dtype=np.uint32)
        out = np.zeros_like(x)
        running_xor[1, 64](x, out)
        assert (out == np.bitwise_xor.accumulate(x.reshape(2, 32), axis=1).ravel()).all()
    """
)

logical_and.__doc__ = _expand(
    """``bool(a) and bool(b)`` (CUB uses ``cuda::std::logical_and``).

    Parameters
    ----------
    a, b : values
        Any two values with a truth value (bools, numbers).

    Returns
    -------
    bool
        Whether both are true.

    Notes
    -----
    {kernel_side}

    Example
    -------
    Whether every flag of each logical warp of 8 lanes is set, in all its lanes::

        import numpy as np
        import coop
        from numba import cuda

        @cuda.jit
        def all_set(flags, out):
            i = cuda.grid(1)
            out[i] = coop.warp.all_reduce(flags[i], coop.ops.logical_and, width=8)

        flags = np.ones(64, np.bool_)
        flags[[3, 17, 18]] = False
        out = np.zeros_like(flags)
        all_set[1, 64](flags, out)
        assert (out == np.repeat(flags.reshape(8, 8).all(axis=1), 8)).all()
    """
)

logical_or.__doc__ = _expand(
    """``bool(a) or bool(b)`` (CUB uses ``cuda::std::logical_or``).

    Parameters
    ----------
    a, b : values
        Any two values with a truth value (bools, numbers).

    Returns
    -------
    bool
        Whether either is true.

    Notes
    -----
    {kernel_side}

    Example
    -------
    Whether any flag of each logical warp of 8 lanes is set, in all its lanes::

        import numpy as np
        import coop
        from numba import cuda

        @cuda.jit
        def any_set(flags, out):
            i = cuda.grid(1)
            out[i] = coop.warp.all_reduce(flags[i], coop.ops.logical_or, width=8)

        flags = np.zeros(64, np.bool_)
        flags[[3, 17, 18]] = True
        out = np.zeros_like(flags)
        any_set[1, 64](flags, out)
        assert (out == np.repeat(flags.reshape(8, 8).any(axis=1), 8)).all()
    """
)

argmin.__doc__ = _expand(
    """Of two ``(value, index)`` pairs, the one with the smaller value; of equal values,
    the one with the smaller index (CUB ArgMin).

    Values are compared with ``<`` (float16 through float32, exactly); so a reduction
    with it finds the first position of the minimum (of values without NaN), as
    ``numpy.argmin`` does.

    Parameters
    ----------
    a, b : tuples
        ``(value, index)`` pairs: a comparable value and an integer index.

    Returns
    -------
    tuple
        ``a`` or ``b``, as given.

    Notes
    -----
    {kernel_side}

    Example
    -------
    The position of each warp's minimum::

        import numpy as np
        import coop
        from numba import cuda

        @cuda.jit
        def warp_argmin(x, where):
            i = cuda.grid(1)
            value, index = coop.warp.reduce((x[i], i), coop.ops.argmin)
            if cuda.laneid == 0:
                where[i // 32] = index

        x = np.random.default_rng(38).integers(0, 10, 64).astype(np.int32)
        where = np.zeros(2, np.int64)
        warp_argmin[1, 64](x, where)
        assert (where == x.reshape(2, 32).argmin(axis=1) + [0, 32]).all()
    """
)

argmax.__doc__ = _expand(
    """Of two ``(value, index)`` pairs, the one with the larger value; of equal values,
    the one with the smaller index (CUB ArgMax).

    Values are compared with ``<`` (float16 through float32, exactly); so a reduction
    with it finds the first position of the maximum (of values without NaN), as
    ``numpy.argmax`` does.

    Parameters
    ----------
    a, b : tuples
        ``(value, index)`` pairs: a comparable value and an integer index.

    Returns
    -------
    tuple
        ``a`` or ``b``, as given.

    Notes
    -----
    {kernel_side}

    Example
    -------
    The position and value of each block's maximum, in every thread::

        import numpy as np
        import coop
        from numba import cuda

        @cuda.jit
        def block_argmax(x, where, top):
            i = cuda.grid(1)
            value, index = coop.block.all_reduce((x[i], i), coop.ops.argmax)
            where[i], top[i] = index, value

        x = np.random.default_rng(39).integers(0, 10, 128).astype(np.float64)
        where, top = np.zeros(128, np.int64), np.zeros(128)
        block_argmax[2, 64](x, where, top)
        tiles = x.reshape(2, 64)
        assert (where == np.repeat(tiles.argmax(axis=1) + [0, 64], 64)).all()
        assert (top == np.repeat(tiles.max(axis=1), 64)).all()
    """
)

public_namespace(__name__)
