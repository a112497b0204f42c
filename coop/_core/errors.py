"""What coop's errors are and say, shared by the compile-time checks (``specialize``),
the simulator's and debug mode's run-time checks (``simulator``, ``debug``) and the
link-time checks (``misuse``). Depends on nothing else in coop.
"""

from numba.cuda.core.errors import TypingError


class CoopError(TypingError):
    """Every error coop raises is one (``except coop.CoopError`` catches them all): a
    misuse of a primitive found when the kernel compiles is a CoopError itself (a Numba
    ``TypingError``, which Numba reports with the kernel's line); the simulator's misused
    collectives are ``CollectiveError``\\s, coop.device's bad arguments
    ``ArgumentTypeError``\\s and ``ArgumentValueError``\\s."""


class CollectiveError(CoopError, RuntimeError):
    """A collective (a coop primitive, ``syncthreads`` or a warp intrinsic) that the
    simulator found misused: called by only some of the threads that must call it, with
    arguments that differ between them, or waiting for threads that can never come."""


class WarpSyncError(CollectiveError):
    """A warp collective in the simulator cannot complete, or was misused."""


class ArgumentTypeError(CoopError, TypeError):
    """An argument of a coop.device function of the wrong kind (a host array, a dtype
    the function does not take...), found before any launch."""


class ArgumentValueError(CoopError, ValueError):
    """An argument of a coop.device function with a wrong value (too short, overlapping
    another, out of range...), found before any launch."""


def launch_message(qualname, given, count):
    """What a primitive given ``threads=given`` (an int) says in a block of ``count``
    threads, on the simulator and in debug mode (``coop.config.debug``)."""
    return f"{qualname}: threads={given} but the block has {count} threads; threads must be the block's thread count"


def padded_shape(shape):
    """A ``threads=`` tuple (1 to 3 sizes) as the block shape ``(x, y, z)`` it means."""
    return tuple(shape) + (1,) * (3 - len(shape))


def launch_shape_message(qualname, given, shape):
    """What a primitive given ``threads=given`` (a shape tuple) says in a block of shape
    ``shape`` (``(x, y, z)``, or the text of a printf format giving it), on the
    simulator and in debug mode."""
    return (f"{qualname}: threads={given} but the block's shape is {shape}; a tuple threads= must be "
            f"the block's shape (blockDim x, y, z; sizes left out are 1)")
