"""The simulator as a debugger: misused collectives raise, naming the primitive, the
call site and the threads that did not arrive, instead of hanging or giving a wrong
answer; compile-time constants follow Numba's rules; debug mode traps on the GPU."""

import os
import re
import subprocess
import sys

import numpy as np
import pytest

import coop
from helpers import DEBUG_KERNELS, DEBUG_LAUNCHES, ON_GPU
from numba import cuda

simulator_only = pytest.mark.skipif(ON_GPU, reason="checks of the simulator")
gpu_only = pytest.mark.skipif(not ON_GPU, reason="debug mode of compiled kernels")

HERE = os.path.dirname(os.path.abspath(__file__))


def _launch_error(kernel, blocks, threads, *args):
    with pytest.raises(Exception) as error:
        kernel[blocks, threads](*args)
    return str(error.value)


@simulator_only
def test_block_primitive_skipped_by_exiting_threads():
    @cuda.jit
    def kernel(x, out):
        i = cuda.grid(1)
        if i < 64:
            out[0] = coop.block.sum(x[i])

    message = _launch_error(kernel, 1, 128, np.ones(128, np.int32), np.zeros(1, np.int32))
    assert "coop.block.sum at test_simulator_debugger.py:" in message
    assert "in kernel was called by threads 0-63 of block (0, 0, 0), but not by all the threads it needs: threads 64-127 exited without calling it" in message
    assert "It must be called by every thread of the block" in message


@simulator_only
def test_block_primitive_while_others_wait_at_a_barrier():
    @cuda.jit
    def kernel(x, out):
        i = cuda.grid(1)
        if i < 64:
            out[0] = coop.block.exclusive_sum(x[i])
        else:
            cuda.syncthreads()

    message = _launch_error(kernel, 1, 96, np.ones(96, np.int32), np.zeros(1, np.int32))
    assert "coop.block.exclusive_sum at test_simulator_debugger.py:" in message
    assert "but not by all the threads it needs: threads 64-95 waiting in cuda.syncthreads() at test_simulator_debugger.py:" in message


@simulator_only
def test_warp_primitive_with_lanes_missing_in_a_2d_block():
    @cuda.jit
    def kernel(x, out):
        lane = cuda.laneid
        i = cuda.threadIdx.x + 16 * cuda.threadIdx.y
        if lane < 20:
            out[i] = coop.warp.all_sum(x[i])

    message = _launch_error(kernel, 1, (16, 4), np.ones(64, np.int32), np.zeros(64, np.int32))
    assert "coop.warp.all_sum at test_simulator_debugger.py:" in message
    assert re.search(
        r"was called by threads (0-19 \(threadIdx \(0, 0, 0\)-\(3, 1, 0\)\)|32-51 \(threadIdx \(0, 2, 0\)-\(3, 3, 0\)\)) "
        r"of block \(0, 0, 0\), but not by all the threads it needs: threads (20-31|52-63) \(threadIdx .*\) exited without calling it",
        message,
    ), message
    assert "every lane of its logical warp" in message


@simulator_only
def test_logical_warps_are_checked_on_their_own():
    """Sub-warps of 8 lanes: only the logical warp of the missing lanes is wrong."""

    @cuda.jit
    def kernel(x, out):
        i = cuda.grid(1)
        if i != 13:
            out[i] = coop.warp.inclusive_sum(x[i], width=8)

    message = _launch_error(kernel, 1, 32, np.ones(32, np.int32), np.zeros(32, np.int32))
    assert "was called by threads 8-12, 14-15 of block (0, 0, 0), but not by all the threads it needs: thread 13 exited" in message


@simulator_only
def test_valid_items_differing_between_threads():
    @cuda.jit
    def kernel(x, out):
        i = cuda.grid(1)
        out[i] = coop.block.all_reduce(x[i], coop.ops.max, valid_items=50 if i < 40 else 60)

    message = _launch_error(kernel, 1, 64, np.ones(64, np.int32), np.zeros(64, np.int32))
    assert "valid_items differs between the threads of block (0, 0, 0): valid_items=50 in threads 0-39; valid_items=60 in threads 40-63" in message


@simulator_only
def test_threads_differing_from_the_launch():
    @cuda.jit
    def kernel(x, out):
        i = cuda.grid(1)
        out[i] = coop.block.inclusive_sum(x[i], threads=128)

    message = _launch_error(kernel, 1, 96, np.ones(96, np.int32), np.zeros(96, np.int32))
    assert "coop.block.inclusive_sum: threads=128 but the block has 96 threads; threads must be the block's thread count" in message


@simulator_only
def test_a_shape_differing_from_the_launch():
    """A tuple threads= is the block's shape (the rank is computed from it): a launch of
    the same thread count in another shape is refused too, not ranked wrongly."""
    @cuda.jit
    def kernel(x, out):
        i = cuda.threadIdx.x + cuda.threadIdx.y * 32
        out[i] = coop.block.exclusive_sum(x[i], threads=(64,))

    message = _launch_error(kernel, 1, (32, 2), np.ones(64, np.int32), np.zeros(64, np.int32))
    assert ("coop.block.exclusive_sum: threads=(64,) but the block's shape is (32, 2, 1); a tuple threads= must "
            "be the block's shape (blockDim x, y, z; sizes left out are 1)") in message


@simulator_only
def test_different_primitives_at_the_same_point():
    @cuda.jit
    def kernel(x, out):
        i = cuda.grid(1)
        if i < 32:
            out[i] = coop.block.all_sum(x[i])
        else:
            out[i] = coop.block.all_reduce(x[i], coop.ops.max)

    message = _launch_error(kernel, 1, 64, np.ones(64, np.int32), np.zeros(64, np.int32))
    assert "met at different collective calls" in message
    assert "threads 0-31 called coop.block.all_sum at" in message
    assert "threads 32-63 called coop.block.all_reduce at" in message


def test_block_shape_as_threads():
    """threads= may be the block's shape, a constant tuple."""
    SHAPE = (16, 8)

    @cuda.jit
    def kernel(x, out):
        i = cuda.threadIdx.x + 16 * cuda.threadIdx.y
        total = coop.block.sum(x[i], threads=SHAPE)
        offset = coop.block.exclusive_sum(x[i], threads=(16, 8))
        out[i] = offset
        if i == 0:
            out[128] = total

    x = np.arange(128, dtype=np.int32)
    out = np.zeros(129, np.int32)
    kernel[1, (16, 8)](x, out)
    assert (out[:128] == np.cumsum(x) - x).all() and out[128] == x.sum()


def test_compiled_code_options_run_on_the_simulator():
    """A kernel written for 1024-thread blocks (launch_bounds, as the README asks) and with
    the other options that only tune compiled code runs on the simulator as it is."""

    @cuda.jit(launch_bounds=128, max_registers=64, lineinfo=True)
    def kernel(x, out):
        out[cuda.threadIdx.x] = coop.block.exclusive_sum(x[cuda.threadIdx.x], threads=128)

    x = np.arange(128, dtype=np.int32) % 5
    out = np.zeros(128, np.int32)
    kernel[1, 128](x, out)
    assert (out == np.cumsum(x) - x).all()


def test_a_grid_sized_by_the_device_runs_on_the_simulator():
    """A grid-stride kernel launched on a few blocks a multiprocessor, as on a GPU."""

    @cuda.jit
    def double(x):
        for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
            x[i] *= 2

    device = cuda.get_current_device()
    assert device.WARP_SIZE == 32 and device.MAX_THREADS_PER_BLOCK == 1024
    x = np.arange(1000, dtype=np.int32)
    double[2 * device.MULTIPROCESSOR_COUNT, 64](x)
    assert (x == 2 * np.arange(1000)).all()


def test_constants_through_device_functions_and_locals():
    """What Numba sees as constants, the simulator does too: a literal passed to a
    device function, a local assigned one value, a global, a closure variable."""
    ITEMS = 2

    @cuda.jit(device=True)
    def tile_sum(x, base, n):
        items = cuda.local.array(2, np.int32)
        coop.block.load(x[base:], items, items_per_thread=n, algorithm="striped", threads=64)
        return coop.block.all_sum(items)

    @cuda.jit
    def kernel(x, out):
        threads = 64
        total = tile_sum(x, 0, 2)
        total += coop.block.all_sum(x[cuda.threadIdx.x], threads=threads)
        items = cuda.local.array(2, np.int32)
        coop.block.load(x, items, items_per_thread=ITEMS, threads=threads, algorithm="transpose")
        out[cuda.threadIdx.x] = total + coop.block.all_sum(items)

    x = np.arange(128, dtype=np.int32)
    out = np.zeros(64, np.int32)
    kernel[1, 64](x, out)
    assert (out == x.sum() + x[:64].sum() + x.sum()).all()


def test_host_call_says_where_to_call():
    with pytest.raises(coop.CoopError, match=r"coop.block.sum was called from host code: call coop.block.sum inside a @cuda.jit kernel"):
        coop.block.sum(np.int32(1))


def test_bool_sums_count():
    """Sums of bools count them (int32), as NumPy's sum does; scans of one bool per
    thread give offsets (stream compaction)."""

    @cuda.jit
    def kernel(flags, counts, offsets):
        i = cuda.grid(1)
        items = cuda.local.array(3, np.bool_)
        for k in range(3):
            items[k] = flags[3 * i + k]
        block_count = coop.block.sum(flags[i])
        tile_count = coop.block.all_sum(items, valid_items=100)
        warp_count = coop.warp.all_sum(flags[i])
        offset, total = coop.block.exclusive_sum(flags[i], return_aggregate=True)
        offsets[i] = offset
        counts[1, i] = tile_count
        counts[2, i] = warp_count
        counts[3, i] = total
        if i == 0:
            counts[0, 0] = block_count

    flags = np.random.default_rng(7).integers(0, 2, 3 * 64).astype(np.bool_)
    counts = np.zeros((4, 64), np.int32)
    offsets = np.zeros(64, np.int32)
    kernel[1, 64](flags, counts, offsets)
    head = flags[:64]
    assert counts[0, 0] == head.sum()
    assert (counts[1] == flags[:100].sum()).all()
    assert (counts[2] == np.repeat(head.reshape(2, 32).sum(axis=1), 32)).all()
    assert (counts[3] == head.sum()).all()
    assert (offsets == np.cumsum(head) - head).all()


# -- debug mode on the GPU --------------------------------------------------------------

def _run_debug_program(launch, debug):
    path = os.pathsep.join(filter(None, [os.path.dirname(HERE), os.environ.get("PYTHONPATH")]))
    env = dict(os.environ, COOP_DEBUG="1" if debug else "0", PYTHONPATH=path)
    program = ("import numpy as np\nimport coop\nfrom numba import cuda\n" + DEBUG_KERNELS + launch
               + "\ncuda.synchronize()\nprint('NO TRAP')\n")
    return subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=300)


@gpu_only
@pytest.mark.parametrize("launch, message", list(DEBUG_LAUNCHES.values()), ids=list(DEBUG_LAUNCHES))
def test_debug_mode_traps_with_the_message(launch, message):
    trapped = _run_debug_program(launch, True)
    assert trapped.returncode != 0 and "NO TRAP" not in trapped.stdout, trapped.stdout + trapped.stderr
    assert message in trapped.stdout + trapped.stderr, trapped.stdout + trapped.stderr[-3000:]
    unchecked = _run_debug_program(launch, False)
    assert "NO TRAP" in unchecked.stdout, unchecked.stdout + unchecked.stderr[-3000:]


@simulator_only
def test_operator_signatures_are_read_one_thread_at_a_time(monkeypatch):
    """A builtin operator's signature is parsed with ``ast``, which CPython 3.11 does not
    make safe for threads: the simulator's threads, checking an operator at once, raised
    "AST constructor recursion depth mismatch" now and then. The checks read signatures
    under coop's source lock (called here directly: a kernel's checks are cached per
    operator, so an earlier test may have made them already)."""
    import inspect
    import operator

    from coop._core import specialize
    from coop._core.constants import SOURCE_LOCK

    held = []
    signature = inspect.signature

    def watched(function, *args, **kwargs):
        held.append(SOURCE_LOCK._is_owned())
        return signature(function, *args, **kwargs)

    monkeypatch.setattr(specialize.inspect, "signature", watched)
    assert specialize._takes(operator.sub, 2) and not specialize._takes(operator.sub, 3)
    assert specialize.parameter_count(operator.mul) == 2
    assert held == [True, True, True], f"signature reads, whether each held the lock: {held}"


@simulator_only
def test_threads_reaching_a_shared_array_together_share_it(monkeypatch):
    """The simulator keeps one array per ``cuda.shared.array`` line and launch, made by
    the first thread to reach the line. Threads of a block reach it together: one switched
    out between the look-up and the store kept an array of its own (a radix sort's wrong
    result, seen once under load). Here every thread is held between the two until all
    have looked up, the schedule that split them."""
    import threading

    from coop._core import simulator

    threads = 32
    all_looked_up = threading.Barrier(threads, timeout=30)
    make_array = simulator.kernel_array

    def made_once_all_looked_up(shape, dtype, alignment=None):
        all_looked_up.wait()
        return make_array(shape, dtype, alignment)

    monkeypatch.setattr(simulator, "kernel_array", made_once_all_looked_up)

    @cuda.jit
    def kernel(out):
        shared = cuda.shared.array(threads, np.int32)
        t = cuda.threadIdx.x
        shared[t] = t
        cuda.syncthreads()
        for i in range(threads):
            out[t, i] = shared[i]

    out = np.full((threads, threads), -1, np.int32)
    kernel[1, threads](out)
    seen_apart = [t for t in range(threads) if (out[t] != np.arange(threads)).any()]
    assert not seen_apart, f"threads {seen_apart} saw a shared array of their own: {out[seen_apart[0]]}"


def test_integer_stores_wrap_as_compiled_stores_do():
    """A store converts an integer to the array's type as compiled code does (C's
    conversion: the low bits), in local, shared and global arrays: on the simulator too,
    where NumPy raises OverflowError for a value out of range."""

    @cuda.jit
    def kernel(x, narrow, wide):
        items = cuda.local.array(2, np.int8)
        items[0] = x[0]
        items[1] = x[0] + x[1]
        shared = cuda.shared.array(2, np.int16)
        shared[0] = x[1] * 1000
        shared[1] = -x[1] * 1000
        cuda.syncthreads()
        narrow[0] = items[0]
        narrow[1] = items[1]
        narrow[2] = x[1] * 1000  # into a global int8 array
        wide[0] = shared[0]
        wide[1] = shared[1]

    x = np.array([200, 200], np.int64)
    narrow, wide = np.zeros(3, np.int8), np.zeros(2, np.int16)
    kernel[1, 1](x, narrow, wide)
    assert narrow.tolist() == np.array([200, 400, 200000]).astype(np.int8).tolist()
    assert wide.tolist() == np.array([200000, -200000]).astype(np.int16).tolist()


RUN_TIME_THREADS = "coop.block.sum: threads must be a compile-time constant integer (a literal or a module-level constant), got a run-time value of type int64"


def test_run_time_threads_through_a_lambda_is_refused():
    """A lambda's free variable is its kernel's: a kernel argument is a run-time value
    there too, a local assigned a constant is a constant."""

    @cuda.jit
    def run_time(x, out, n):
        total = lambda v: coop.block.sum(v, threads=n)  # noqa: E731
        out[0] = total(x[cuda.threadIdx.x])

    @cuda.jit
    def constant(x, out, n):
        threads = 32
        total = lambda v: coop.block.sum(v, threads=threads)  # noqa: E731
        out[0] = total(x[cuda.threadIdx.x])

    x, out = np.arange(32, dtype=np.int32), np.zeros(1, np.int32)
    assert RUN_TIME_THREADS in " ".join(_launch_error(run_time, 1, 32, x, out, 32).split())
    constant[1, 32](x, out, 32)
    assert out[0] == x.sum()


def test_run_time_threads_in_a_kernel_without_source_is_refused():
    """A kernel made by ``exec`` (no source to read): its own parameter passed as it is
    is a run-time value, found in the bytecode."""
    namespace = {"coop": coop, "cuda": cuda}
    exec(  # noqa: S102
        "def made(x, out, n):\n"
        "    out[0] = coop.block.sum(x[cuda.threadIdx.x], threads=n)\n"
        "def made_with_a_literal(x, out, n):\n"
        "    out[0] = coop.block.sum(x[cuda.threadIdx.x], threads=32)\n",
        namespace,
    )
    x, out = np.arange(32, dtype=np.int32), np.zeros(1, np.int32)
    assert RUN_TIME_THREADS in " ".join(_launch_error(cuda.jit(namespace["made"]), 1, 32, x, out, 32).split())
    cuda.jit(namespace["made_with_a_literal"])[1, 32](x, out, 32)
    assert out[0] == x.sum()


@simulator_only
def test_every_coop_error_is_a_coop_error():
    """``except coop.CoopError`` catches a misused collective and a bad coop.device
    argument as well as a compile-time misuse; each stays the Python error it was."""

    @cuda.jit
    def kernel(x, out):
        if cuda.threadIdx.x < 16:
            out[0] = coop.warp.sum(x[cuda.threadIdx.x])

    with pytest.raises(coop.CoopError) as error:
        kernel[1, 32](np.ones(32, np.int32), np.zeros(1, np.int32))
    assert isinstance(error.value, (coop.CollectiveError, RuntimeError))
    assert coop.WarpSyncError.__mro__.index(coop.CollectiveError) > 0
    with pytest.raises(coop.CoopError) as error:
        coop.device.sum(np.ones(4), cuda.device_array(1))
    assert isinstance(error.value, TypeError) and isinstance(error.value, coop.ArgumentTypeError)
