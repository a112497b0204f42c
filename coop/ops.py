"""Named binary operators for coop's reductions and scans (CUB's operator functors).

Each can be passed to any primitive and called in user kernels too::

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

from coop._core.specialize import primitive
from coop._core.values import arithmetic, less

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
