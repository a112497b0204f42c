"""Numba's CUDA simulator made a debugger: warp intrinsics, and collectives checked.

Numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``) runs every CUDA thread of a block as
one Python thread, but it has no warp intrinsics: ``cuda.shfl_sync``, ``cuda.ballot_sync``
and the rest raise ``AttributeError`` there. This module has them, so kernels that use
warp-level code, and coop's own primitives, can be run and debugged without a GPU; and a
barrier and a block state (``BlockState``) so that one lock sees every thread of a block:
at a barrier, at a warp intrinsic, at a coop primitive, running, or exited. It is the
compiler-independent part: ``import coop`` puts it into the simulator when the simulator
is on (``coop._core.compilers.numba_cuda_simulator.install``).

Collectives: every call of a coop block (warp) primitive is a rendezvous of the threads
of the block (of the caller's logical warp), made by ``coop._core.specialize`` through
:func:`primitive_call` before the primitive runs. It raises :class:`CollectiveError`,
naming the primitive, its call site and the threads concerned, where a GPU would hang
or compute garbage:

* a thread of the group exits without making the call, or waits at another collective
  (a ``syncthreads``, a warp intrinsic, another primitive) while the others wait here;
* threads of the group make different calls at the same point (another primitive, or
  the same one from another line);
* arguments that must agree (``valid_items``, an ``initial`` value, a shuffle's
  ``distance``...) differ between them;
* ``threads=`` is not the block's thread count (:func:`check_launch`).

Model
-----
A warp is 32 consecutive linear thread ids of the block (linear id
``x + y * blockDim.x + z * blockDim.x * blockDim.y``); the lane is the linear id modulo
32. A block whose size is not a multiple of 32 ends with a partial warp: its missing
lanes do not exist and are never waited for.

Every intrinsic that takes a mask is a rendezvous of the lanes named in the mask, as
CUDA requires ("all non-exited threads named in mask must execute the same intrinsic
with the same mask"). Each calling lane deposits its operand and waits until every lane
of ``mask`` that exists and has not exited has arrived; then each lane gets its result.
Calls are matched up by (warp, mask, n), where n counts the calls this lane has made
with that mask so far. So divergent code in which the two half-warps each shuffle with
their own mask works, as do the two branches of an ``if`` each calling
``shfl_sync(0xFFFFFFFF, ...)`` (which sm_70 and later also allow), and consecutive calls
never mix.

Where the simulator differs from a GPU
--------------------------------------
* Reading from a lane that is not taking part (outside the mask, absent from a partial
  warp, or exited) gives the caller's own value. CUDA leaves this undefined.
* ``activemask()`` returns the lanes of the caller's warp that exist and have not exited.
  CUDA returns the lanes converged with the caller right now, which the simulator cannot
  know: threads here are never converged.
* Values of any Python type can be shuffled and are passed through unchanged (no
  bit-casting, no 32/64-bit restriction).
* Lanes of one rendezvous that call intrinsics of different families (say one lane
  ``shfl_sync`` and another ``ballot_sync``, with the same mask) raise
  :class:`WarpSyncError`: CUDA leaves it undefined.
* Arithmetic on the values of a kernel is NumPy's: two int8 scalars add to an int8 (and
  wrap), where compiled Numba widens them to int64 first (coop's operators widen as
  Numba does). Stores convert as compiled code does: an integer out of the array's
  range keeps its low bits (where NumPy would raise ``OverflowError``), and NumPy's
  overflow and invalid-value warnings are off in the simulated threads.
* A ``cuda.shared.array`` is one array per source line and launch, shared by the
  launch's blocks (which run one after another) and keeping what the previous block
  left, where a GPU gives each block its own, of undefined contents.
* ``ballot_sync`` and ``match_any_sync`` give a non-negative ``int`` holding the 32-bit
  pattern; compiled Numba types them ``int32``, so lane 31's bit reads as negative
  there. Store them in ``uint32`` arrays to see the same numbers on both.

Hangs are reported, not suffered: if every live lane of a warp waits at a warp
intrinsic that cannot complete, each raises :class:`WarpSyncError` at once, naming the
collectives, masks and missing lanes; if every live thread of the block waits (at
barriers, intrinsics or primitives), the waits fail at once with a report of where each
thread is. A wait that sees no thread of its block arrive at or leave a collective for
:data:`DEADLOCK_TIMEOUT_S` seconds (a thread looping, or sleeping) raises likewise.
When a thread of the block raises, the threads waiting for it stop with the
simulator's abort and the launch reports that thread's error.
"""

import os
import sys
import threading
import time

import numba as numba_package
import numpy as np

from coop._core.errors import CollectiveError, WarpSyncError, launch_message

__all__ = [
    "DEADLOCK_TIMEOUT_S",
    "SHFL_BFLY",
    "SHFL_DOWN",
    "SHFL_IDX",
    "SHFL_UP",
    "WarpSyncError",
    "activemask",
    "all_sync",
    "any_sync",
    "ballot_sync",
    "eq_sync",
    "lanemask_lt",
    "match_all_sync",
    "match_any_sync",
    "shfl",
    "syncwarp",
    # what a compiler's simulator is given (coop._core.compilers)
    "BlockState",
    "INTRINSIC_NAMES",
    "POLL_INTERVAL_S",
    "WarpIntrinsicMethods",
    "check_alignment",
    "in_kernel",
    "kernel_array",
    "store",
]

WARP_SIZE = 32
FULL_MASK = 0xFFFFFFFF

#: Seconds a collective may wait with no warp-collective progress anywhere in its block
#: (no lane arriving at or leaving one, no thread exiting) before it raises. Read at each
#: check, so tests and users may change it.
DEADLOCK_TIMEOUT_S = 30.0

# How often a waiting lane wakes to look at the simulator's abort flag, which the
# simulator sets without notifying anyone.
POLL_INTERVAL_S = 0.05

# After a thread of the block dies with an exception the simulator normally sets `abort`
# on all others within milliseconds. Its polling loop can miss a thread that dies between
# two polls, so waiters give up on their own after this long.
_FAILED_THREAD_GRACE_S = 1.0

#: ``shfl`` modes, numbered as in PTX ``shfl.sync`` and Numba's ``shfl_sync_intrinsic``.
SHFL_IDX, SHFL_UP, SHFL_DOWN, SHFL_BFLY = 0, 1, 2, 3
_SHFL_MODE_NAMES = {
    SHFL_IDX: "shfl.sync.idx",
    SHFL_UP: "shfl.sync.up",
    SHFL_DOWN: "shfl.sync.down",
    SHFL_BFLY: "shfl.sync.bfly",
}


# --------------------------------------------------------------------------------------
# Where threads are, for reports


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
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


# --------------------------------------------------------------------------------------
# Per-block state


class BlockState:
    """Bookkeeping for one run of one block, guarded by a single lock: its barrier, the
    warp intrinsics' rendezvous, the coop primitives' calls, and what every waiting
    thread waits at (so that a block in which every thread waits is reported at once)."""

    def __init__(self, block_dim, block_idx):
        self.block_dim = tuple(block_dim)
        self.block_idx = tuple(block_idx)
        self.nthreads = nthreads = int(np.prod(self.block_dim))
        nwarps = -(-nthreads // WARP_SIZE)
        self.lock = threading.Lock()
        self.finished_cond = threading.Condition(self.lock)
        self.finished = 0
        self.failed_thread = None
        self.existing = [
            (1 << min(WARP_SIZE, nthreads - w * WARP_SIZE)) - 1 for w in range(nwarps)
        ]
        self.exited = [0] * nwarps
        self.exited_count = 0
        # Lanes waiting at a warp intrinsic that has not completed yet.
        self.blocked = [0] * nwarps
        # Per warp: (mask, call_number) -> open _Rendezvous.
        self.open = [{} for _ in range(nwarps)]
        # Per linear thread id: mask -> number of collectives made with that mask.
        self.call_counts = {}
        self.barrier = _Barrier(self.lock)
        # (group, call number) -> open _PrimitiveCall; (thread id, group) -> calls made.
        self.primitive_calls = {}
        self.primitive_counts = {}
        # Thread id -> _Wait, for every thread waiting at any collective.
        self.waiting = {}
        self.last_progress = time.monotonic()
        self.failure = None
        self.failure_time = None

    def live(self, warp):
        return self.existing[warp] & ~self.exited[warp]

    def thread_idx(self, warp, lane):
        return self.thread_index(warp * WARP_SIZE + lane)

    def thread_index(self, tid):
        bx, by = self.block_dim[0], self.block_dim[1]
        return (tid % bx, (tid // bx) % by, tid // (bx * by))

    def describe_lanes(self, warp, lanes):
        return ", ".join(
            "%d %s" % (lane, self.thread_idx(warp, lane)) for lane in _lanes_of(lanes)
        )

    def describe_threads(self, ids):
        """Threads by linear rank, in runs, e.g. ``threads 64-127``; for 2-D and 3-D
        blocks with their threadIdx, e.g. ``threads 16-31 (threadIdx (0, 1, 0)-(15, 1, 0))``."""
        parts = []
        for first, last in _ranges(ids):
            ranks = str(first) if first == last else "%d-%d" % (first, last)
            if len(self.block_dim) > 1 and self.block_dim[1:] != (1,) * (len(self.block_dim) - 1):
                where = str(self.thread_index(first))
                if last != first:
                    where += "-" + str(self.thread_index(last))
                ranks += " (threadIdx %s)" % where
            parts.append(ranks)
        noun = "thread" if len(ids) == 1 else "threads"
        return "%s %s" % (noun, ", ".join(parts))

    def exited_in(self, group):
        """How many threads of a group (``("block",)`` or ``("warp", first, width)``) exited."""
        if group[0] == "block":
            return self.exited_count
        _, first, width = group
        warp, lane = divmod(first, WARP_SIZE)
        return bin(self.exited[warp] >> lane & ((1 << width) - 1)).count("1")

    def exited_ids(self, ids):
        return [t for t in ids if self.exited[t // WARP_SIZE] >> (t % WARP_SIZE) & 1]

    def live_count(self):
        return self.nthreads - self.exited_count

    def progress(self):
        self.last_progress = time.monotonic()

    # -- waiting -----------------------------------------------------------------------

    def wait(self, record, thread, describe):
        """Block until ``record`` (a barrier, rendezvous or primitive call) completes,
        raising rather than hanging. ``describe()`` names what is waited for in a
        time-out message. Caller holds the lock."""
        error_type = WarpSyncError if isinstance(record, _Rendezvous) else CollectiveError
        while not record.closed:
            if record.error is not None:
                raise type(record.error)(str(record.error))
            if thread.abort:
                raise RuntimeError("abort flag set while waiting in %s" % describe())
            now = time.monotonic()
            if self.failure is not None and now - self.failure_time > _FAILED_THREAD_GRACE_S:
                raise error_type(
                    "%s abandoned: another thread of the block failed: %s" % (describe(), self.failure)
                )
            if now - self.last_progress > DEADLOCK_TIMEOUT_S:
                raise error_type(
                    "%s in block %s waited %g s with no thread of the block arriving at or "
                    "leaving a collective. %s (coop._core.simulator.DEADLOCK_TIMEOUT_S sets "
                    "the limit.)" % (describe(), self.block_idx, DEADLOCK_TIMEOUT_S, self.whereabouts())
                )
            record.cond.wait(POLL_INTERVAL_S)

    def whereabouts(self):
        """Where the block's threads are: grouped by what they wait at."""
        by_place = {}
        for tid, waiting in self.waiting.items():
            by_place.setdefault(waiting.describe(), []).append(tid)
        running = set(range(self.nthreads)) - set(self.waiting) - set(self.exited_ids(range(self.nthreads)))
        parts = ["%s: waiting in %s" % (self.describe_threads(ids), place) for place, ids in by_place.items()]
        if running:
            parts.append("%s: running" % self.describe_threads(running))
        exited = self.exited_ids(range(self.nthreads))
        if exited:
            parts.append("%s: exited" % self.describe_threads(exited))
        return "; ".join(parts) + "."

    def check_deadlock(self):
        """Fail every open collective if every live thread of the block waits: nothing
        can then complete (collectives complete as soon as their last thread arrives or
        exits). Caller holds the lock."""
        if self.failure is not None or len(self.waiting) < self.live_count() or not self.waiting:
            return
        stuck = [call for call in self.primitive_calls.values() if not call.closed]
        if stuck:
            message = self.missing_report(stuck[0])
        else:
            message = (
                "deadlock in block %s: every thread waits at a collective that the threads "
                "it needs never reach: %s CUDA requires every thread of the block to reach "
                "the same syncthreads, and every non-exited lane named in a warp "
                "intrinsic's mask to make the same call with the same mask."
                % (self.block_idx, self.whereabouts())
            )
        self.fail_all(CollectiveError(message))

    def fail_all(self, error):
        records = [self.barrier] + list(self.primitive_calls.values())
        records += [rdv for rendezvous in self.open for rdv in rendezvous.values()]
        for record in records:
            if not record.closed and record.error is None:
                record.error = error if not isinstance(record, _Rendezvous) else WarpSyncError(str(error))
                record.cond.notify_all()

    # -- syncthreads ---------------------------------------------------------------------

    def syncthreads(self, thread, frame):
        with self.lock:
            barrier = self.barrier
            barrier.arrived.add(thread.thread_id)
            self.waiting[thread.thread_id] = _Wait("cuda.syncthreads()", frame)
            self.progress()
            if not self.try_release_barrier():
                self.check_deadlock()
                self.wait(barrier, thread, lambda: "cuda.syncthreads()")

    def try_release_barrier(self):
        barrier = self.barrier
        if len(barrier.arrived) < self.live_count() or not barrier.arrived:
            return False
        for tid in barrier.arrived:
            del self.waiting[tid]
        barrier.closed = True
        barrier.cond.notify_all()
        self.barrier = _Barrier(self.lock)
        return True

    # -- warp intrinsics -----------------------------------------------------------------

    def try_close(self, warp, rdv):
        """Complete `rdv` if every lane it waits for is there. Caller holds the lock."""
        if rdv.mask & self.live(warp) & ~rdv.arrived:
            return False
        rdv.results = _RESULTS[rdv.family](rdv)
        rdv.closed = True
        del self.open[warp][(rdv.mask, rdv.call_number)]
        self.blocked[warp] &= ~rdv.arrived
        for lane in _lanes_of(rdv.arrived):
            self.waiting.pop(warp * WARP_SIZE + lane, None)
        self.progress()
        rdv.cond.notify_all()
        return True

    def detect_deadlock(self, warp):
        """Fail every open collective of `warp` if none of them can ever complete.

        That is the case when every live lane of the warp waits at one: warp intrinsics
        complete only when lanes of their warp arrive or exit. Caller holds the lock.
        """
        live = self.live(warp)
        if self.failure is not None or not self.open[warp] or live & ~self.blocked[warp]:
            return
        parts = []
        for rdv in self.open[warp].values():
            missing = rdv.mask & live & ~rdv.arrived
            parts.append(
                "%s(mask=%#010x, call #%d with that mask): lanes [%s] wait, lanes [%s] "
                "never arrive"
                % (
                    rdv.name,
                    rdv.mask,
                    rdv.call_number + 1,
                    self.describe_lanes(warp, rdv.arrived),
                    self.describe_lanes(warp, missing),
                )
            )
        message = (
            "deadlock in warp %d of block %s: every live lane waits at a warp collective "
            "that the lanes it needs never reach (lanes are given as 'lane (threadIdx)'). "
            "%s. CUDA requires every non-exited lane named in a mask to make the same "
            "call with the same mask." % (warp, self.block_idx, "; ".join(parts))
        )
        for rdv in self.open[warp].values():
            rdv.error = WarpSyncError(message)
            rdv.cond.notify_all()

    # -- coop primitives -----------------------------------------------------------------

    def missing_report(self, call):
        """What is wrong with a primitive call that some of its threads never reach."""
        (primitive, site, _), = list(call.arrivals.values())[:1]
        missing = [t for t in call.members if t not in call.arrivals]
        exited = set(self.exited_ids(missing))
        places = {}
        for tid in missing:
            if tid in exited:
                place = "exited without calling it"
            elif tid in self.waiting:
                place = "waiting in %s instead" % self.waiting[tid].describe()
            else:
                place = "not there yet"
            places.setdefault(place, []).append(tid)
        scope = "every thread of the block" if call.group[0] == "block" else "every lane of its logical warp"
        return (
            "%s at %s was called by %s of block %s, but not by all the threads it needs: %s. "
            "It must be called by %s (CUB's collectives are), not inside a branch that "
            "some of them skip."
            % (
                primitive,
                site,
                self.describe_threads(call.arrivals),
                self.block_idx,
                "; ".join("%s %s" % (self.describe_threads(ids), place) for place, ids in places.items()),
                scope,
            )
        )

    def try_complete_call(self, call):
        """Complete ``call`` (checking what its threads brought) once every member that
        has not exited has arrived; then fail it if a member exited without arriving.
        Caller holds the lock."""
        # A thread waiting at an open call cannot exit: exited members never arrived.
        # Until the others have all arrived, the call waits; if they never do, the block
        # ends up with every live thread waiting, and check_deadlock reports it.
        exited = self.exited_in(call.group)
        if len(call.arrivals) + exited < len(call.members):
            return False
        if exited:
            call.error = CollectiveError(self.missing_report(call))
        else:
            call.error = self.disagreement(call)
        call.closed = call.error is None
        if call.closed:  # a failed call stays, so that threads arriving late fail at once
            del self.primitive_calls[call.key]
        for tid in call.arrivals:
            self.waiting.pop(tid, None)
        call.cond.notify_all()
        self.progress()
        return True

    def disagreement(self, call):
        """A CollectiveError if the threads of a completed call made different calls or
        passed different values where they must agree, else None."""
        places = {}
        for tid, (primitive, site, _) in call.arrivals.items():
            places.setdefault((primitive, site), []).append(tid)
        if len(places) > 1:
            return CollectiveError(
                "threads of block %s met at different collective calls: %s. Every thread "
                "(lane) of the group must make the same call, in the same order."
                % (
                    self.block_idx,
                    "; ".join(
                        "%s called %s at %s" % (self.describe_threads(ids), primitive, site)
                        for (primitive, site), ids in places.items()
                    ),
                )
            )
        (primitive, site), = places
        values = [values for (_, _, values) in call.arrivals.values()]
        for parameter in values[0]:
            groups = {}
            for tid, (_, _, given) in call.arrivals.items():
                groups.setdefault(_comparable(given[parameter]), []).append(tid)
            if len(groups) > 1:
                scope = "the block" if call.group[0] == "block" else "the logical warp"
                return CollectiveError(
                    "%s at %s: %s differs between the threads of %s %s: %s. It must be "
                    "the same in every thread of %s."
                    % (
                        primitive,
                        site,
                        parameter,
                        "block" if call.group[0] == "block" else "a logical warp of block",
                        self.block_idx,
                        "; ".join(
                            "%s=%r in %s" % (parameter, value, self.describe_threads(ids))
                            for value, ids in groups.items()
                        ),
                        scope,
                    )
                )
        return None

    # -- threads leaving the kernel -----------------------------------------------------

    def thread_exited(self, thread):
        """Record that `thread` left the kernel, and release whoever waited for it."""
        warp, lane = divmod(thread.thread_id, WARP_SIZE)
        with self.lock:
            self.progress()
            self.finished += 1
            self.finished_cond.notify_all()
            if thread.exception is not None:
                # Completing collectives without this thread would let the others run
                # on with wrong data; keep them waiting for the launch to abort instead.
                if self.failure is None:
                    self.failure = str(thread.exception[0])
                    self.failure_time = self.last_progress
                    self.failed_thread = thread
                self.fail_all_quietly()
                return
            self.exited[warp] |= 1 << lane
            self.exited_count += 1
            for rdv in list(self.open[warp].values()):
                self.try_close(warp, rdv)
            self.detect_deadlock(warp)
            for call in list(self.primitive_calls.values()):
                if not call.closed and call.error is None and thread.thread_id in call.members:
                    self.try_complete_call(call)
            self.try_release_barrier()
            self.check_deadlock()

    def fail_all_quietly(self):
        """Wake every waiter, so that it notices the failure (or the abort) soon."""
        for record in [self.barrier] + list(self.primitive_calls.values()):
            record.cond.notify_all()
        for rendezvous in self.open:
            for rdv in rendezvous.values():
                rdv.cond.notify_all()


def _comparable(value):
    """A hashable stand-in for a value, equal for equal numbers of any type (NaNs too)."""
    if isinstance(value, tuple):
        return tuple(_comparable(v) for v in value)
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value != value:
        return "nan"
    try:
        hash(value)
    except TypeError:
        return id(value)
    return value


def _block_state(thread):
    """The bookkeeping of ``thread``'s block, given to its threads by the block runner
    that ``install`` puts in the simulator (``coop._core.compilers``)."""
    return thread._coop_state


def _lanes_of(bits):
    return [lane for lane in range(WARP_SIZE) if bits >> lane & 1]


def _current_block_thread(name):
    thread = threading.current_thread()
    if getattr(thread, "_coop_state", None) is None:
        raise RuntimeError(
            "%s can only be called from a kernel running on the CUDA simulator" % name
        )
    return thread


def _collective(family, name, mask, payload):
    """Take part in a rendezvous of the lanes in `mask`; return this lane's result."""
    thread = _current_block_thread(name)
    if thread.abort:
        raise RuntimeError("abort flag set on %s call" % name)
    mask = int(mask) & FULL_MASK
    warp, lane = divmod(thread.thread_id, WARP_SIZE)
    bit = 1 << lane
    if not mask & bit:
        raise ValueError(
            "%s: the calling lane %d (threadIdx %s) is not in mask %#010x; CUDA requires "
            "every lane that calls a warp intrinsic to be named in its mask"
            % (name, lane, tuple(thread.threadIdx), mask)
        )
    state = _block_state(thread)
    with state.lock:
        counts = state.call_counts.setdefault(thread.thread_id, {})
        call_number = counts.get(mask, 0)
        counts[mask] = call_number + 1
        key = (mask, call_number)
        rdv = state.open[warp].get(key)
        if rdv is None:
            rdv = _Rendezvous(family, name, mask, call_number, state.lock)
            state.open[warp][key] = rdv
        elif rdv.family != family:
            raise WarpSyncError(
                "lane %d (threadIdx %s) called %s(mask=%#010x) where lanes [%s] of its "
                "warp called %s with that mask; CUDA requires all lanes in a mask to "
                "make the same call"
                % (
                    lane,
                    tuple(thread.threadIdx),
                    name,
                    mask,
                    state.describe_lanes(warp, rdv.arrived),
                    rdv.name,
                )
            )
        rdv.payloads[lane] = payload
        rdv.arrived |= bit
        state.progress()
        if not state.try_close(warp, rdv):
            state.blocked[warp] |= bit
            state.waiting[thread.thread_id] = _Wait("%s(mask=%#010x)" % (name, mask), sys._getframe(1))
            state.detect_deadlock(warp)
            state.check_deadlock()
            state.wait(rdv, thread, lambda: "%s(mask=%#010x) in warp %d" % (name, mask, warp))
        return rdv.results[lane]


def check_launch(primitive, site, threads):
    """Raise :class:`CollectiveError` if ``threads`` (a primitive's ``threads=``
    argument: an int, a shape tuple, or None) is not the running block's thread count."""
    if threads is None:
        return
    x, y, z = _current_block_thread(primitive)._coop_state.block_dim
    count = x * y * z
    given = int(np.prod(threads)) if isinstance(threads, tuple) else int(threads)
    if given != count:
        raise CollectiveError(
            "%s (at %s; blockDim (%d, %d, %d))" % (launch_message(primitive, threads, count), site, x, y, z)
        )


def primitive_call(primitive, site, width, uniform, frame):
    """Take part in one call of a coop primitive by its group of threads: the block
    (``width`` None) or the caller's logical warp of ``width`` lanes. Returns once every
    thread of the group has made the same call (same primitive, same call site ``site``)
    with equal ``uniform`` values (a dict: parameter -> value); raises
    :class:`CollectiveError` naming the threads that differ or never come (exited, or
    waiting at another collective: reported as soon as every thread of the block waits).
    ``frame`` is the caller's, for reports."""
    thread = _current_block_thread(primitive)
    if thread.abort:
        raise RuntimeError("abort flag set on %s call" % primitive)
    state = _block_state(thread)
    tid = thread.thread_id
    if width is None:
        group, members = ("block",), range(state.nthreads)
    else:
        first = tid - (tid % WARP_SIZE & (width - 1))
        group, members = ("warp", first, width), range(first, min(first + width, state.nthreads))
    with state.lock:
        count_key = (tid, group)
        number = state.primitive_counts.get(count_key, 0)
        state.primitive_counts[count_key] = number + 1
        key = group + (number,)
        call = state.primitive_calls.get(key)
        if call is None:
            call = state.primitive_calls[key] = _PrimitiveCall(key, group, members, state.lock)
        if call.error is not None:
            raise type(call.error)(str(call.error))
        call.arrivals[tid] = (primitive, site, uniform)
        state.waiting[tid] = _Wait(primitive, frame)
        state.progress()
        if not state.try_complete_call(call):
            state.check_deadlock()
        state.wait(call, thread, lambda: "%s at %s" % (primitive, site))


# --------------------------------------------------------------------------------------
# Results of a completed rendezvous, per family: lane -> result


def _shfl_source_lane(lane, mode, b, c):
    """The lane that PTX ``shfl.sync`` reads for `lane`, or `lane` itself when out of range."""
    bval = int(b) & 31
    c = int(c)
    clamp = c & 31
    segmask = (c >> 8) & 31
    max_lane = (lane & segmask) | (clamp & ~segmask)
    min_lane = lane & segmask
    if mode == SHFL_UP:
        j = lane - bval
        in_range = j >= max_lane
    elif mode == SHFL_DOWN:
        j = lane + bval
        in_range = j <= max_lane
    elif mode == SHFL_BFLY:
        j = lane ^ bval
        in_range = j <= max_lane
    else:
        j = min_lane | (bval & ~segmask)
        in_range = j <= max_lane
    return j if in_range else lane


def _shfl_results(rdv):
    payloads = rdv.payloads
    results = {}
    for lane, (value, mode, b, c) in payloads.items():
        source = _shfl_source_lane(lane, mode, b, c)
        results[lane] = payloads[source][0] if source in payloads else value
    return results


def _vote_results(rdv):
    ballot = 0
    for lane, (_, predicate) in rdv.payloads.items():
        if predicate:
            ballot |= 1 << lane
    participants = rdv.arrived
    uniform = ballot == 0 or ballot == participants
    by_op = {
        "ballot": ballot,
        "all": ballot == participants,
        "any": ballot != 0,
        "eq": uniform,
    }
    return {lane: by_op[op] for lane, (op, _) in rdv.payloads.items()}


def _match_keys(values):
    """Keys under which values match, like the bit patterns compared on a GPU.

    Compiled Numba unifies the operand's type across lanes, so if any lane holds a float
    all real numbers compare as float64 bit patterns (0.0 and -0.0 differ, NaNs with
    the same bits match); otherwise integers and bools compare by value.
    """
    if any(isinstance(v, (float, np.floating)) for v in values):
        return [
            np.float64(v).tobytes() if isinstance(v, (int, float, np.integer, np.floating)) else v
            for v in values
        ]
    return [int(v) if isinstance(v, (int, np.integer, np.bool_)) else v for v in values]


def _match_results(rdv):
    lanes = list(rdv.payloads)
    keys = dict(zip(lanes, _match_keys([rdv.payloads[lane][1] for lane in lanes])))
    same = {}
    for lane in lanes:
        bits = 0
        for other in lanes:
            if keys[other] == keys[lane]:
                bits |= 1 << other
        same[lane] = bits
    all_same = all(bits == rdv.arrived for bits in same.values())
    results = {}
    for lane, (op, _) in rdv.payloads.items():
        if op == "any":
            results[lane] = same[lane]
        else:
            results[lane] = (rdv.arrived, True) if all_same else (0, False)
    return results


def _syncwarp_results(rdv):
    return dict.fromkeys(rdv.payloads)


_RESULTS = {
    "shfl": _shfl_results,
    "vote": _vote_results,
    "match": _match_results,
    "syncwarp": _syncwarp_results,
}


# --------------------------------------------------------------------------------------
# The intrinsics


def shfl(mask, mode, value, b, c):
    """PTX ``shfl.sync.{idx,up,down,bfly}``: read `value` from another lane of the warp.

    `mode` is :data:`SHFL_IDX` (0), :data:`SHFL_UP` (1), :data:`SHFL_DOWN` (2) or
    :data:`SHFL_BFLY` (3); `b` is the source lane or lane offset; `c` packs the clamp
    value (bits 0-4) and the segment mask (bits 8-12). Each lane computes, exactly as
    the PTX ISA specifies::

        bval = b & 31      # only the low 5 bits of b count
        segmask = (c >> 8) & 31
        maxLane = (lane & segmask) | (c & 31 & ~segmask)
        minLane = lane & segmask
        up:   j = lane - bval;                  ok = j >= maxLane
        down: j = lane + bval;                  ok = j <= maxLane
        bfly: j = lane ^ bval;                  ok = j <= maxLane
        idx:  j = minLane | (bval & ~segmask);  ok = j <= maxLane

    and returns the value of lane ``j``, or its own value if not ``ok``. CUDA's
    ``__shfl_*_sync(mask, var, b, width)`` is this with
    ``c = ((32 - width) << 8) | 0x1f`` for idx, down and xor and ``c = (32 - width) << 8``
    for up. (An H200 agrees, out-of-range `b` included: a delta of 33 moves by 1, and
    -1 by 31.)

    Simulator: `value` may be any Python object and is returned unchanged. If lane ``j``
    is not taking part (not in `mask`, absent from a partial warp, or exited) the
    caller's own value is returned; CUDA leaves that undefined.
    """
    if mode not in _SHFL_MODE_NAMES:
        raise ValueError(
            "shfl mode must be 0 (idx), 1 (up), 2 (down) or 3 (bfly), got %r" % (mode,)
        )
    return _collective("shfl", _SHFL_MODE_NAMES[mode], mask, (value, mode, b, c))


def _shfl(name, mask, mode, value, b, c):
    return _collective("shfl", name, mask, (value, mode, b, c))


def ballot_sync(mask, predicate):
    """Bits of the lanes in `mask` whose `predicate` is true, as a non-negative ``int``.

    CUDA sets bit N iff lane N takes part and its predicate is non-zero; lanes that are
    absent or exited contribute 0. Compiled Numba returns it as ``int32``.
    """
    return _collective("vote", "ballot_sync", mask, ("ballot", bool(predicate)))


def all_sync(mask, predicate):
    """``True`` iff `predicate` is true on every non-exited lane in `mask`."""
    return _collective("vote", "all_sync", mask, ("all", bool(predicate)))


def any_sync(mask, predicate):
    """``True`` iff `predicate` is true on some non-exited lane in `mask`."""
    return _collective("vote", "any_sync", mask, ("any", bool(predicate)))


def eq_sync(mask, predicate):
    """``True`` iff `predicate` has the same truth value on every non-exited lane in `mask`."""
    return _collective("vote", "eq_sync", mask, ("eq", bool(predicate)))


def match_any_sync(mask, value):
    """Bits of the lanes in `mask` whose `value` equals the caller's, as a non-negative ``int``.

    CUDA compares bit patterns (so ``0.0`` and ``-0.0`` differ); the simulator compares
    integers by value and, when any lane holds a float, all reals as float64 bit
    patterns. Compiled Numba returns the mask as ``int32``.
    """
    return _collective("match", "match_any_sync", mask, ("any", value))


def match_all_sync(mask, value):
    """``(lanes, True)`` if `value` is equal on the live lanes of `mask`, else ``(0, False)``.

    ``lanes`` holds the bits of the lanes that took part: those of `mask` that exist
    and have not exited. That is what a GPU returns (an H200 gives ``0xff`` to an
    8-lane partial warp calling with mask ``0xffffffff``; Numba's own tests expect the
    same), though CUDA's documentation says "mask".
    """
    return _collective("match", "match_all_sync", mask, ("all", value))


def syncwarp(mask=FULL_MASK):
    """Wait until every non-exited lane in `mask` has reached a ``syncwarp`` with that mask.

    As on a GPU, memory writes made before it by those lanes are visible after it.
    """
    _collective("syncwarp", "syncwarp", mask, None)


def activemask():
    """The lanes of the caller's warp that exist and have not exited.

    CUDA returns the lanes currently converged with the caller, which the simulator
    cannot know; in converged code the two agree. Threads here run independently, so
    lanes that finish and exit early drop out of the result at once: to read the whole
    warp, make sure no lane can exit first (a ``syncwarp()`` after the call does it).
    """
    thread = _current_block_thread("activemask")
    state = _block_state(thread)
    warp = thread.thread_id // WARP_SIZE
    with state.lock:
        return state.live(warp)


def lanemask_lt():
    """Bits of the lanes below the caller's: ``(1 << laneid) - 1``."""
    thread = _current_block_thread("lanemask_lt")
    return (1 << (thread.thread_id % WARP_SIZE)) - 1


# --------------------------------------------------------------------------------------
# The methods a simulator's CUDA module gets


class WarpIntrinsicMethods:
    """Methods added to the simulator's ``FakeCUDAModule``, with numba.cuda's signatures."""

    def shfl_sync(self, mask, value, src_lane):
        """``value`` from lane ``src_lane % 32`` (see :func:`shfl`)."""
        return _shfl("shfl_sync", mask, SHFL_IDX, value, src_lane, 0x1F)

    def shfl_up_sync(self, mask, value, delta):
        """``value`` from lane ``laneid - delta``, or the caller's own below lane ``delta``."""
        return _shfl("shfl_up_sync", mask, SHFL_UP, value, delta, 0)

    def shfl_down_sync(self, mask, value, delta):
        """``value`` from lane ``laneid + delta``, or the caller's own past lane 31."""
        return _shfl("shfl_down_sync", mask, SHFL_DOWN, value, delta, 0x1F)

    def shfl_xor_sync(self, mask, value, lane_mask):
        """``value`` from lane ``laneid ^ lane_mask``."""
        return _shfl("shfl_xor_sync", mask, SHFL_BFLY, value, lane_mask, 0x1F)

    def ballot_sync(self, mask, predicate):
        return ballot_sync(mask, predicate)

    def all_sync(self, mask, predicate):
        return all_sync(mask, predicate)

    def any_sync(self, mask, predicate):
        return any_sync(mask, predicate)

    def eq_sync(self, mask, predicate):
        return eq_sync(mask, predicate)

    def match_any_sync(self, mask, value):
        return match_any_sync(mask, value)

    def match_all_sync(self, mask, value):
        return match_all_sync(mask, value)

    def activemask(self):
        return activemask()

    def lanemask_lt(self):
        return lanemask_lt()

    def syncwarp(self, mask=FULL_MASK):
        syncwarp(mask)


INTRINSIC_NAMES = (
    "shfl_sync",
    "shfl_up_sync",
    "shfl_down_sync",
    "shfl_xor_sync",
    "ballot_sync",
    "all_sync",
    "any_sync",
    "eq_sync",
    "match_any_sync",
    "match_all_sync",
    "activemask",
    "lanemask_lt",
    "syncwarp",
)

for _name in INTRINSIC_NAMES[4:]:
    _method = getattr(WarpIntrinsicMethods, _name)
    if _method.__doc__ is None:
        _method.__doc__ = globals()[_name].__doc__
del _name, _method

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
