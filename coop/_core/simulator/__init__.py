"""Numba's CUDA simulator made a debugger: warp intrinsics, and collectives checked.

Numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``) runs every CUDA thread of a block as
one Python thread, but it has no warp intrinsics: ``cuda.shfl_sync``, ``cuda.ballot_sync``
and the rest raise ``AttributeError`` there. This package has them, so kernels that use
warp-level code, and coop's own primitives, can be run and debugged without a GPU; and a
barrier and a block state (``BlockState``) so that one lock sees every thread of a block:
at a barrier, at a warp intrinsic, at a coop primitive, running, or exited. It is the
compiler-independent part: ``import coop`` puts it into the simulator when the simulator
is on (``coop._core.compilers.numba_cuda_simulator.install``).

Modules (this package re-exports what the rest of coop uses):

* ``state``: the block state (``BlockState``: its barrier, rendezvous, primitive calls,
  deadlock and time-out reports), the primitives' collective calls and their checks
  (``primitive_call``, ``check_launch``), and the knobs ``DEADLOCK_TIMEOUT_S`` and
  ``POLL_INTERVAL_S`` (set on ``coop._core.simulator``, they are set there).
* ``records``: what threads wait at (barrier, rendezvous and primitive-call records) and
  the frame helpers that say where a thread is, for reports.
* ``results``: the ``shfl`` modes, and each family's results of a completed rendezvous.
* ``intrinsics``: the warp intrinsics (``shfl``, ``ballot_sync``, ... ``syncwarp``), and
  ``WarpIntrinsicMethods`` with ``INTRINSIC_NAMES``, what the simulator's CUDA module gets.
* ``arrays``: kernel arrays (``kernel_array``) whose stores convert as compiled ones do
  (``store``), ``check_alignment``, ``in_kernel``.

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

import sys
import types

import coop._core.simulator.state as _state
from coop._core.errors import CollectiveError, WarpSyncError
from coop._core.simulator.arrays import check_alignment, in_kernel, kernel_array, store
from coop._core.simulator.intrinsics import (
    INTRINSIC_NAMES,
    WarpIntrinsicMethods,
    activemask,
    all_sync,
    any_sync,
    ballot_sync,
    eq_sync,
    lanemask_lt,
    match_all_sync,
    match_any_sync,
    shfl,
    syncwarp,
)
from coop._core.simulator.results import SHFL_BFLY, SHFL_DOWN, SHFL_IDX, SHFL_UP
from coop._core.simulator.state import FULL_MASK, WARP_SIZE, BlockState, check_launch, primitive_call

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


def _knob(name):
    """A property of the package that reads and sets ``state``'s knob ``name``."""
    return property(lambda module: getattr(_state, name), lambda module, value: setattr(_state, name, value))


class _Package(types.ModuleType):
    """This package's module. Its knobs are ``state``'s, which reads them at each wait:
    ``coop._core.simulator.DEADLOCK_TIMEOUT_S = 5`` (or a test's
    ``monkeypatch.setattr(simulator, "DEADLOCK_TIMEOUT_S", 0.5)``) sets ``state``'s."""

    DEADLOCK_TIMEOUT_S = _knob("DEADLOCK_TIMEOUT_S")
    POLL_INTERVAL_S = _knob("POLL_INTERVAL_S")


sys.modules[__name__].__class__ = _Package
