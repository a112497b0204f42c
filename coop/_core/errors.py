"""What coop's errors are and say, shared by the compile-time checks (``specialize``),
the simulator's and debug mode's run-time checks (``simulator``, ``debug``) and the
link-time checks (``misuse``). Depends on nothing else in coop.
"""

from numba.cuda.core.errors import TypingError


class CoopError(TypingError):
    """A misuse of a coop primitive, found when the kernel is compiled."""


def launch_message(qualname, given, count):
    """What a primitive given ``threads=given`` says in a block of ``count`` threads, on
    the simulator and in debug mode (``coop._core.debug``)."""
    return f"{qualname}: threads={given} but the block has {count} threads; threads must be the block's thread count"
