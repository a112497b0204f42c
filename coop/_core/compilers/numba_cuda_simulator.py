"""coop's simulator put into numba-cuda's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``).

``install`` (``import coop`` calls it when the simulator is on) gives the simulator's
per-kernel CUDA module (``FakeCUDAModule``) the warp intrinsics of
``coop._core.simulator.WarpIntrinsicMethods``; lets ``cuda.local.array`` and
``cuda.shared.array`` take ``alignment=`` and make arrays whose integer stores wrap, as do
device arrays' stores in a kernel; lets ``cuda.jit`` take (and ignore) the options
that only tune compiled code (``_jit``) and gives the simulated device the attributes
kernels are sized by (``DEVICE_ATTRIBUTES``); runs each block with coop's runner (``_run_block``: one
``coop._core.simulator.BlockState`` that every thread of the block shares, a wait on a
condition instead of the stock runner's polling, and threads kept from block to block,
each releasing the collectives waiting for it when it leaves the kernel) and its barrier
(``_syncthreads``).

The rest of this module is what coop reads of the simulator: the running kernel's CUDA
module, its shared arrays, whether a frame is a kernel's. These use numba-cuda's private
names (``_kernel_context``, ``_allocations``, ``BlockManager``'s ``_block_dim``, ``_f`` and
``_debug``, ``FakeCUDAArray._ary``), which is why they are here.
"""

import os
import sys
import threading

import numba.cuda
import numpy as np
from numba.cuda import types
from numba.cuda.np import numpy_support
from numba.cuda.simulator import api as simulator_api
from numba.cuda.simulator import kernel as simulator_kernel
from numba.cuda.simulator.cudadrv.devices import FakeCUDADevice
from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray
from numba.cuda.simulator.kernel import BlockManager, BlockThread
from numba.cuda.simulator.kernelapi import Dim3, FakeCUDALocal, FakeCUDAModule, FakeCUDAShared

from coop._core import simulator

__all__ = ["install", "running_kernel_module", "shared_buffer", "is_kernel_frame"]


def running_kernel_module():
    """The simulator's ``FakeCUDAModule`` of the kernel running now, or ``None``."""
    return simulator_kernel._kernel_context


def shared_buffer(key, slots):
    """The running kernel's shared object array of ``slots`` slots kept under ``key`` (per
    launch; the blocks of a launch run one at a time): where coop keeps the scratch
    buffers of its primitives."""
    return _allocation(simulator_kernel._kernel_context.shared._allocations, key,
                       lambda: np.empty(slots, dtype=object))


def _allocation(allocations, key, make):
    """``allocations[key]``, made by ``make()`` if missing. The block's threads reach it
    together: a thread switch between a look-up and a plain store would leave each its own
    array (the stock simulator's race: a radix sort wrong now and then); setdefault is one
    step under the GIL."""
    allocation = allocations.get(key)
    return allocation if allocation is not None else allocations.setdefault(key, make())


def is_kernel_frame(frame):
    """Whether ``frame`` runs a kernel itself (called by a block's thread), not a device
    function or an operator."""
    return frame.f_back is not None and frame.f_back.f_code is _run_kernel.__code__


def _numpy_dtype(dtype):
    return numpy_support.as_dtype(dtype) if isinstance(dtype, types.Type) else dtype


def _local_array(self, shape, dtype, alignment=None):
    """``cuda.local.array``, as ``simulator.kernel_array``."""
    return simulator.kernel_array(shape, _numpy_dtype(dtype), alignment)


def _shared_array(self, shape, dtype, alignment=None):
    """``cuda.shared.array`` accepting ``alignment=`` (``cuda.shared.array(BYTES,
    np.uint8, alignment=8)`` is how a ``temp_storage=`` buffer is made). As the stock
    simulator: one array per calling source line, the dynamic buffer for size 0 (one
    array a dtype, over that one buffer)."""
    simulator.check_alignment(alignment)
    if shape == 0:
        # one array a dtype for the block's threads, all on the launch's one buffer (coop
        # keeps a temp_storage's slots by the array); as a dtype, which the stock one needs
        dtype = np.dtype(_numpy_dtype(dtype))
        return _allocation(self._allocations, ("dynamic", dtype), lambda: _stock_shared_array(self, shape, dtype))
    frame = sys._getframe(1)
    caller = frame.f_code.co_filename, frame.f_lineno
    return _allocation(self._allocations, caller, lambda: simulator.kernel_array(shape, _numpy_dtype(dtype)))


def _device_array_setitem(self, index, value):
    """``FakeCUDAArray.__setitem__``: a kernel's store (``simulator.store``) in a kernel."""
    try:
        return self._ary.__setitem__(index, value)
    except OverflowError:
        if not simulator.in_kernel():
            raise
    return simulator.store(self._ary, index, value)


_stock_shared_array = FakeCUDAShared.array
_install_lock = threading.Lock()


def install():
    """Put coop's simulator into numba-cuda's (see the module's docstring). Idempotent."""
    with _install_lock:
        if BlockManager.run is _run_block:
            return
        for name in simulator.INTRINSIC_NAMES:
            setattr(FakeCUDAModule, name, simulator.WarpIntrinsicMethods.__dict__[name])
        FakeCUDALocal.array = _local_array
        FakeCUDAShared.array = _shared_array
        FakeCUDAArray.__setitem__ = _device_array_setitem
        numba.cuda.jit = _jit
        for name, value in DEVICE_ATTRIBUTES.items():
            setattr(FakeCUDADevice, name, value)
        BlockThread.syncthreads = _syncthreads
        BlockManager.run = _run_block


#: Attributes of ``cuda.get_current_device()`` that kernels' launches are sized by (the
#: stock simulated device has none): one multiprocessor, as the simulator runs one block
#: at a time, and CUDA's limits
DEVICE_ATTRIBUTES = {
    "MULTIPROCESSOR_COUNT": 1,
    "WARP_SIZE": 32,
    "MAX_THREADS_PER_BLOCK": 1024,
    "MAX_BLOCK_DIM_X": 1024,
    "MAX_BLOCK_DIM_Y": 1024,
    "MAX_BLOCK_DIM_Z": 64,
    "MAX_SHARED_MEMORY_PER_BLOCK": 48 * 1024,
}

#: numba-cuda's ``cuda.jit`` options that only tune the compiled code
COMPILED_CODE_OPTIONS = ("launch_bounds", "max_registers", "lineinfo", "forceinline", "lto")


def _jit(func_or_sig=None, **options):
    """The simulator's ``cuda.jit``, taking the options of ``COMPILED_CODE_OPTIONS`` and
    ignoring them, so that a kernel written for the GPU runs on the simulator as it is
    (the stock one raises ``TypeError`` at ``launch_bounds=1024``, which kernels of
    1024-thread blocks need)."""
    for name in COMPILED_CODE_OPTIONS:
        options.pop(name, None)
    return simulator_api.jit(func_or_sig, **options)


def _syncthreads(self):
    """``cuda.syncthreads()``: wait until every thread of the block that has not exited
    is here. Replaces the stock barrier, which the block's manager released by polling,
    so that a barrier that can never complete is reported with the rest of the block's
    collectives (``BlockState.check_deadlock``)."""
    if self.abort:
        raise RuntimeError("abort flag set on syncthreads call")
    self._coop_state.syncthreads(self, sys._getframe(1))


def _run_block(self, grid_point, *args):
    """``BlockManager.run``: run the block's threads and wait until they have all left
    the kernel, or one has failed (then the others are told to abort and its exception
    is raised, as the stock runner does). Waits on a condition rather than polling the
    threads as the stock runner does, which kept one core busy for the whole launch; and
    runs the block on kept threads (``_POOL``) rather than starting new ones."""
    state = simulator.BlockState(self._block_dim, grid_point)
    threads = _POOL.take(state.nthreads)
    for thread, block_point in zip(threads, np.ndindex(*self._block_dim)):
        thread.run_next(self, grid_point, block_point, args, state)
    with state.lock:
        while state.finished < len(threads) and state.failure is None:
            state.finished_cond.wait(simulator.POLL_INTERVAL_S)
    if state.failure is not None:
        for thread in threads:
            if thread._coop_state is state:
                thread.abort = True
        with state.lock:
            state.fail_all_quietly()
        error, trace = state.failed_exception
        raise error.with_traceback(trace)


def _run_kernel(kernel, args):
    kernel(*args)


class _KeptThread(BlockThread):
    """A simulated CUDA thread that runs one block's thread after another: starting a
    Python thread takes longer than most simulated threads' work (a block of 256 took
    about 50 ms to start, against 5 ms to hand to kept threads). Each run starts from
    the attributes the thread had when it was started (so that nothing a kernel's thread
    left on it, such as coop's nesting depth, reaches the next), then gets a
    ``BlockThread``'s (``threadIdx``, ``blockIdx``, ``thread_id``, ``abort``...) and the
    block's ``BlockState``; leaving the kernel releases the collectives waiting for it."""

    def __init__(self):
        threading.Thread.__init__(self, name="coop simulated thread", daemon=True)
        self._go = threading.Lock()
        self._go.acquire()
        self._next = None
        self._coop_state = None

    def run_next(self, manager, grid_point, block_point, args, state):
        """Run thread ``block_point`` of ``manager``'s block ``grid_point`` next."""
        self._next = (manager, grid_point, block_point, args, state)
        self._go.release()

    def run(self):
        fresh = dict(self.__dict__)
        while True:
            self._go.acquire()
            manager, grid_point, block_point, args, state = self._next
            for name in self.__dict__.keys() - fresh.keys():
                del self.__dict__[name]
            # (as BlockThread.__init__ sets those the kernel's CUDA module and coop read; the
            # stock barrier's syncthreads_event and syncthreads_blocked serve none: coop's replaces it)
            self._manager = manager
            self.blockIdx, self.threadIdx = Dim3(*grid_point), Dim3(*block_point)
            self.exception, self.abort = None, False
            x, y, _ = manager._block_dim
            self.thread_id = block_point[0] + x * (block_point[1] + y * block_point[2])
            self._coop_state = state
            self._target, self._args, self._kwargs = _run_kernel, (manager._f, args), {}
            try:
                # (per thread: integers wrap, and NaNs propagate (a partial tile's
                # padding, say), silently as on a GPU)
                with np.errstate(over="ignore", invalid="ignore"):
                    if manager._debug:
                        np.seterr(divide="raise")
                    BlockThread.run(self)  # (the stock run: an error's message names the thread)
            except BaseException as error:  # (SystemExit, say: the launch raises it, and the thread is kept)
                self.exception = error, error.__traceback__
            finally:
                _POOL.give_back(self)  # (first: a block waiting for this one may take it)
                state.thread_exited(self)


class _KeptThreads:
    """The idle ``_KeptThread``s, and new ones started when too few are idle."""

    def __init__(self):
        self.lock = threading.Lock()
        self.idle = []

    def take(self, count):
        with self.lock:
            kept = max(0, len(self.idle) - count)
            taken, self.idle = self.idle[kept:], self.idle[:kept]
        for _ in range(count - len(taken)):
            thread = _KeptThread()
            thread.start()
            taken.append(thread)
        return taken

    def give_back(self, thread):
        with self.lock:
            self.idle.append(thread)

    def forget(self):
        """After a fork, in the child: the kept threads were the parent's (the child has
        only the one that forked), so none is idle here."""
        self.lock = threading.Lock()
        self.idle = []


_POOL = _KeptThreads()
os.register_at_fork(after_in_child=_POOL.forget)
