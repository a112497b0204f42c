"""The warp intrinsics of the simulator: ``shfl``, the votes, the matches, ``syncwarp``,
``activemask``, ``lanemask_lt``; each a rendezvous of the lanes of its mask
(``_collective``) in the caller's ``state.BlockState``. ``WarpIntrinsicMethods`` are the
same as methods of the simulator's CUDA module, with numba.cuda's names and signatures
(``INTRINSIC_NAMES``).
"""

import sys
import time

from coop._core.errors import WarpSyncError
from coop._core.simulator.records import _Rendezvous, _Wait
from coop._core.simulator.results import _SHFL_MODE_NAMES, SHFL_BFLY, SHFL_DOWN, SHFL_IDX, SHFL_UP
from coop._core.simulator.state import FULL_MASK, WARP_SIZE, _block_state, _current_block_thread


# --------------------------------------------------------------------------------------
# A warp's rendezvous


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


def nanosleep(ns):
    """Sleep for about ``ns`` nanoseconds (a hint on a GPU): here a yield to the other
    simulated threads."""
    time.sleep(0)


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

    # the rest are the functions above, which take no module argument
    ballot_sync = staticmethod(ballot_sync)
    all_sync = staticmethod(all_sync)
    any_sync = staticmethod(any_sync)
    eq_sync = staticmethod(eq_sync)
    match_any_sync = staticmethod(match_any_sync)
    match_all_sync = staticmethod(match_all_sync)
    activemask = staticmethod(activemask)
    lanemask_lt = staticmethod(lanemask_lt)
    syncwarp = staticmethod(syncwarp)
    nanosleep = staticmethod(nanosleep)


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
    "nanosleep",
)
