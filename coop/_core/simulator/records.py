"""What the threads of a simulated block wait at, and where they are, for reports.

A wait (``_Wait``: a barrier, a warp intrinsic or a coop primitive, and the frame it was
entered from), the records that ``state.BlockState`` keeps of each collective
(``_Barrier``, ``_Rendezvous``, ``_PrimitiveCall``), and the frame helpers that name a
thread's place in the user's code (``user_frame``, ``describe_frame``).
"""

import os
import threading

import numba as numba_package


# --------------------------------------------------------------------------------------
# Where threads are, for reports


# coop/ (this file is coop/_core/simulator/records.py)
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_NUMBA_DIR = os.path.dirname(os.path.abspath(numba_package.__file__))
_THREADING_FILE = os.path.abspath(threading.__file__)


def _is_library_file(filename):
    return (
        filename.startswith(_PACKAGE_DIR)
        or filename.startswith(_NUMBA_DIR)
        or filename == _THREADING_FILE
    )


def user_frame(frame):
    """The innermost frame at or outside ``frame`` that is the user's code (not coop's,
    Numba's or the threading module's), or None."""
    while frame is not None and _is_library_file(os.path.abspath(frame.f_code.co_filename)):
        frame = frame.f_back
    return frame


def describe_frame(frame):
    """``file.py:12 in kernel`` for a frame, or ``?``."""
    if frame is None:
        return "?"
    code = frame.f_code
    return "%s:%d in %s" % (os.path.basename(code.co_filename), frame.f_lineno, code.co_name)


def _ranges(ids):
    """Consecutive runs of sorted integers: [(first, last), ...]."""
    runs = []
    for i in sorted(ids):
        if runs and i == runs[-1][1] + 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return runs


class _Wait:
    """What a waiting thread waits at: a barrier, a warp intrinsic or a coop primitive."""

    __slots__ = ("what", "frame")

    def __init__(self, what, frame):
        self.what = what
        self.frame = frame

    def describe(self):
        return "%s at %s" % (self.what, describe_frame(user_frame(self.frame)))


class _Barrier:
    """One ``syncthreads`` of the block: released when every thread that has not exited
    has arrived."""

    __slots__ = ("arrived", "cond", "closed", "error")

    def __init__(self, lock):
        self.arrived = set()
        self.cond = threading.Condition(lock)
        self.closed = False
        self.error = None


class _Rendezvous:
    """One collective of one warp: the lanes that arrived, and what they brought."""

    __slots__ = (
        "family",
        "name",
        "mask",
        "call_number",
        "cond",
        "arrived",
        "payloads",
        "results",
        "closed",
        "error",
    )

    def __init__(self, family, name, mask, call_number, lock):
        self.family = family
        self.name = name
        self.mask = mask
        self.call_number = call_number
        self.cond = threading.Condition(lock)
        self.arrived = 0
        self.payloads = {}
        self.results = None
        self.closed = False
        self.error = None


class _PrimitiveCall:
    """One call of a coop primitive by a group of threads (the block, or a logical warp):
    who arrived, from where, with which arguments that must agree."""

    __slots__ = ("key", "group", "members", "arrivals", "cond", "closed", "error")

    def __init__(self, key, group, members, lock):
        self.key = key
        self.group = group
        self.members = members
        self.arrivals = {}  # thread id -> (primitive, site, {parameter: value})
        self.cond = threading.Condition(lock)
        self.closed = False
        self.error = None
