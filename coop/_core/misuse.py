"""Misuse that only the compiled code can see: arrays too small for a primitive.

Numba's array types carry no length, so an output or ``temp_storage`` array that is too
short cannot be rejected while typing. It can be rejected while *compiling*: the arrays
users pass (``cuda.local.array(N, ...)``, ``cuda.shared.array(N, ...)``) have constant
lengths once NVVM has inlined the primitive, so ``size_check`` emits a call to an
undefined function guarded by ``llvm.is.constant(too_small) && too_small``. When the
length is a known constant and too small, that call survives and the kernel fails to
link (before it ever runs) with an undefined reference naming the primitive, the
parameter and the problem, e.g. ``coop_error__coop_block_exclusive_sum__output_too_short``
(``..._wrong_length`` for arrays that must hold exactly a primitive's items per thread).
When the length is known only at run time, nothing is emitted (no cost), unless debug
mode is on (``coop.config.debug``): then a run-time check prints the message the
simulator gives and traps.

Older NVVM (seen with the CUDA 12 toolchain) does not know ``llvm.is.constant`` and would
leave a call to it in the PTX, which ptxas rejects; ``size_checks_available()`` asks the
NVVM in use once per process, and where it cannot fold the test no check is emitted.

Under the simulator, arrays have lengths: the check runs on every call and raises
``CoopError`` with the full message, which names the symbol too.
"""

import functools

from coop._core.backend import SIMULATOR, device_function
from coop._core.errors import CoopError


def _symbol(qualname, param, problem):
    return f"coop_error__{qualname.replace('.', '_')}__{param}_{problem}"


def _problem(param, unit, exact):
    return "wrong_length" if exact else "too_short" if unit == "items" else "too_small"


def size_message(qualname, param, unit, exact, size, minimum):
    """What a check says of an array holding ``size`` items (or bytes) where it needs
    ``minimum``: the same on the simulator and in debug mode, naming the symbol that
    makes the kernel fail to link when the size is known at compile time."""
    needs = f"it must hold exactly {minimum}" if exact else f"it needs at least {minimum}"
    symbol = _symbol(qualname, param, _problem(param, unit, exact))
    return f"{qualname}: {param} holds {size} {unit}, {needs} (compiled: {symbol})"


if SIMULATOR:

    def size_checks_available():
        return True

else:
    from coop._core.compilers import numba_cuda_intrinsics as compiled

    size_checks_available = compiled.size_checks_available


@functools.lru_cache(maxsize=None)
def size_check(qualname, param, unit="items", exact=False):
    """``check(array, minimum)``: ``array`` must hold ``minimum`` items (or bytes);
    with ``exact``, exactly ``minimum``."""
    if not SIMULATOR:
        symbol = _symbol(qualname, param, _problem(param, unit, exact))
        return compiled.size_check(symbol, size_message(qualname, param, unit, exact, "%lld", "%lld"), unit, exact)

    def check(array, minimum):
        size = len(array) * (array.itemsize if unit == "bytes" else 1)
        if (size != minimum) if exact else (size < minimum):
            raise CoopError(size_message(qualname, param, unit, exact, size, minimum))

    return check


@device_function
def _no_output_check(value, output):
    pass


def output_check(qualname, is_items):
    """``check(value, output)``: with items arrays, ``output`` must hold as many items
    as the input ``value``; nothing to check for one value per thread."""
    if not is_items:
        return _no_output_check
    check = size_check(qualname, "output")

    def check_items(items, output):
        check(output, len(items))

    return device_function(check_items)
