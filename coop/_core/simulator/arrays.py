"""Arrays of a simulated kernel: ``cuda.local.array`` and ``cuda.shared.array``
(``kernel_array``), whose integer stores wrap as compiled stores do (``store``).
"""

import threading

import numpy as np


# --------------------------------------------------------------------------------------
# Arrays of a simulated kernel


def kernel_array(shape, dtype, alignment=None):
    """A simulated kernel's local or shared array of ``shape`` and ``dtype`` (a NumPy
    dtype), whose stores convert integers as compiled stores do (``store``).
    ``alignment=`` is taken as compiled code takes it (NumPy's allocations are aligned
    for every dtype coop uses) and checked the same way."""
    check_alignment(alignment)
    return np.empty(shape, dtype).view(_KernelArray)


def check_alignment(alignment):
    """Refuse an ``alignment=`` that compiled code refuses."""
    if alignment is not None and (not isinstance(alignment, int) or alignment <= 0 or alignment & (alignment - 1)):
        raise ValueError(f"alignment must be a positive power of two, got {alignment!r}")


def store(array, index, value):
    """``array[index] = value`` (a NumPy array) as a kernel's store: an integer out of
    the dtype's range keeps its low bits (C's conversion), where NumPy raises
    ``OverflowError``."""
    try:
        np.ndarray.__setitem__(array, index, value)
    except OverflowError:
        wrapped = _wrapped_integer(value, array.dtype)
        if wrapped is None:
            raise
        np.ndarray.__setitem__(array, index, wrapped)


def in_kernel():
    """Whether the calling thread runs a simulated kernel."""
    return getattr(threading.current_thread(), "_coop_state", None) is not None


def _wrapped_integer(value, dtype):
    """``value`` converted to the integer ``dtype`` as a compiled store converts it, or
    None where it is not an integer."""
    if dtype.kind not in "iu" or isinstance(value, np.ndarray):
        return None
    try:
        low_bits = int(value) & ((1 << (8 * dtype.itemsize)) - 1)
    except (TypeError, ValueError, OverflowError):  # (not an integer: a float's infinity, say)
        return None
    return np.array(low_bits, np.dtype(f"u{dtype.itemsize}")).view(dtype)[()]


class _KernelArray(np.ndarray):
    """A simulated kernel's local or shared array (``kernel_array``)."""

    __setitem__ = store
