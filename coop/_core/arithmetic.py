"""Binary arithmetic as primitives, float16 computed through float32: ``coop.ops``'s
arithmetic operators are made here, and the ``difference``, ``less`` and ``unequal`` that primitives
use internally. (Above ``specialize``, which these primitives are made with; the value
types themselves are in ``values``, below it.)
"""

import numpy as np
from numba.cuda import types

from coop._core.backend import SIMULATOR, device_function
from coop._core.specialize import primitive
from coop._core.values import widened


def _is_float16(ty):
    return types.unliteral(ty) == types.float16


def _through_float32(qualname, apply, round_to_float16):
    """A binary primitive computing ``apply(a, b)``, except that two float16 operands go
    through float32 (and the result back to float16 if ``round_to_float16``). Numba
    lowers float16 arithmetic and comparisons to out-of-line calls that spill to local
    memory; in float32 they are inline, and rounding a float32 sum or product of two
    float16 values gives the bits of the native float16 operation (float32's 24-bit
    significand is at least twice float16's 11 bits plus two, so the double rounding is
    innocuous). Comparisons are exact."""
    if SIMULATOR:
        wrapping = apply

        def apply(a, b):
            with np.errstate(over="ignore"):  # integers wrap silently, as on the GPU
                return wrapping(*widened(a, b))

    apply = device_function(apply)

    def generator(a, b):
        if not (_is_float16(a) and _is_float16(b)):
            # the operation itself (not a wrapper calling it: one function less to compile)
            return apply

        if round_to_float16:

            def impl(a, b):
                return np.float16(apply(np.float32(a), np.float32(b)))

        else:

            def impl(a, b):
                return apply(np.float32(a), np.float32(b))

        return impl

    generator.__name__ = qualname.rsplit(".", 1)[-1]
    return primitive(qualname)(generator)


def arithmetic(qualname, apply):
    """A binary arithmetic primitive, float16 computed through float32."""
    return _through_float32(qualname, apply, True)


difference = arithmetic("coop._core.arithmetic.difference", lambda a, b: a - b)
difference.__doc__ = "``a - b``, wrapping for integers as on the GPU."

less = _through_float32("coop._core.arithmetic.less", lambda a, b: a < b, False)
less.__doc__ = "``a < b``, comparing float16 values exactly through float32."

unequal = _through_float32("coop._core.arithmetic.unequal", lambda a, b: a != b, False)
unequal.__doc__ = "``a != b``, comparing float16 values exactly through float32."
