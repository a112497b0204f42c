"""The state of a simulated block, and the coop primitives' collective calls.

``BlockState``: one lock over every thread of a block: its barrier (``syncthreads``), the
warp intrinsics' rendezvous, the coop primitives' calls, and what every waiting thread
waits at, so that a block in which every thread waits is reported at once.
``primitive_call`` and ``check_launch``: the checks ``coop._core.specialize`` makes at each
call of a primitive. The knobs ``DEADLOCK_TIMEOUT_S`` and ``POLL_INTERVAL_S`` live here,
read at each wait; setting them on ``coop._core.simulator`` sets them here.
"""

import threading
import time

import numpy as np

from coop._core.errors import CollectiveError, WarpSyncError, launch_message, launch_shape_message, padded_shape
from coop._core.simulator.records import _Barrier, _PrimitiveCall, _ranges, _Rendezvous, _Wait
from coop._core.simulator.results import _RESULTS

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
        self.failed_exception = None  # (the first failed thread's (error, traceback))
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
        for tid, waiting in sorted(self.waiting.items()):  # (in thread order: threads run in any)
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
        primitive, site, _ = call.arrivals[min(call.arrivals)]
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
        for tid, (primitive, site, _) in sorted(call.arrivals.items()):
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
            for tid, (_, _, given) in sorted(call.arrivals.items()):
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
                    self.failed_exception = thread.exception
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


def check_launch(primitive, site, threads):
    """Raise :class:`CollectiveError` if ``threads`` (a primitive's ``threads=``
    argument: an int, a shape tuple, or None) is not the running block's thread count
    (an int) or shape (a tuple)."""
    if threads is None:
        return
    x, y, z = _current_block_thread(primitive)._coop_state.block_dim
    if isinstance(threads, tuple):
        if padded_shape(tuple(int(size) for size in threads)) != (x, y, z):
            raise CollectiveError("%s (at %s)" % (launch_shape_message(primitive, threads, (x, y, z)), site))
        return
    count = x * y * z
    given = int(threads)
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

