"""The host side shared by coop.device's algorithms: the checks made before any launch,
streams, operators given on the host, launch sizes, kernel caches and the launcher.

- ``device_array(function, name, x)``: ``x`` as a Numba device array, any object with
  the CUDA Array Interface (Numba, CuPy, PyTorch) taken without a copy; a host (NumPy)
  array, a non-1-D or non-contiguous one is an ``ArgumentTypeError`` /
  ``ArgumentValueError`` (coop's errors, and Python's ``TypeError`` / ``ValueError``)
  naming the function and the parameter.
- ``segment_offsets(function, offsets)``: the segmented algorithms' ``offsets``,
  checked (int32 or int64, at least one).
- ``is_same_memory(function, name, array, other_name, other)``: whether two device
  arrays are the same memory (an output given as its input); partly overlapping ones
  are an ``ArgumentValueError``.
- ``launch_stream(stream, waits_without=None)``: ``stream=`` as a Numba stream: None (the
  default stream), a Numba stream, a CuPy stream (``.ptr``), a PyTorch stream
  (``.cuda_stream``) or a raw ``cudaStream_t`` handle (an int; one Numba stream kept per
  handle). A stream capturing a CUDA graph takes only calls with ``temp_storage=`` that do
  not wait for the GPU (``waits_without``: the parameter without which the call does;
  ``copied_to_host(array, stream)`` is that wait); the others raise, naming what to pass.
- ``device_operator(op)``: an operator usable inside coop's kernels: coop.ops operators,
  ``operator.add`` and friends and ``@cuda.jit(device=True)`` functions as they are; a
  lambda or plain function given on the host compiled as a device function (once per
  code and the values it reads: a lambda written in the call compiles once).
- ``documented``: a public function's docstring with coop's shared paragraphs filled in
  (``coop._core.docs``), as the kernel-side primitives' are.
- ``resident_blocks(threads)``: how many blocks of ``threads`` fill the GPU once;
  ``kernel_resident_blocks(kernel, threads, *args)``: the same at a kernel's own
  occupancy (its registers and shared memory). Both, the kept temporaries and the
  launcher's kernel handles are per device (``current_context()``): a process may call
  coop.device on several GPUs, from a thread each.
- ``launch(kernel, griddim, blockdim, stream, *args)``: ``kernel[griddim, blockdim,
  stream](*args)``, without most of Numba's per-launch host work (below);
  ``launch_over(kernel, count, stream, *args)``: a grid-stride kernel over ``count``
  items, in as many blocks as fill the GPU once (no more than the items need).
- ``fill_zero(array, count, stream)``: ``array[:count] = 0``, and ``copy_items(src, dst,
  count, stream)``: ``dst[:count] = src[:count]``, queued on ``stream`` (kernels: no host
  array to copy, no slice).
- ``temporary(role, size, dtype, stream)``: a device array of ``size`` items for the
  algorithms' temporary storage, kept between calls (one per role, dtype and stream, grown
  when a call needs more): a call then allocates nothing, and calls on one stream reuse
  it in turn, as the stream orders them. ``zeroed_temporary``: one zeroed when new, for
  counters the kernels leave at zero.
- ``takes_temp_storage``: a public function's ``temp_storage=`` (CUB's two-phase
  pattern): the call's temporaries carved from the caller's device array instead (state
  kept only for the call: what needs zeros is zeroed by the call), after checking that it
  holds ``temp_storage_bytes(function, ...)``: the bytes the same call takes, found by
  running its host side with no launch (``launch``, ``fill_zero`` do nothing then). The
  sizing and the carving are done once for a buffer and the arguments' key: later calls
  take the kept layout, and those that return nothing replay the launches and memsets
  the first one recorded (``_Plan``; not while a stream of theirs captures a graph).
  A CUDA graph may capture them: each call initialises the state it needs. Without
  ``temp_storage=`` the same: a call whose arguments' key is seen a second time is sized
  and laid out on its stream's own buffer (one per stream and device, grown to fit; calls
  needing more than ``OWN_BUFFER_LIMIT`` bytes are not), and replayed from the third on;
  a call seen once (new arrays each time, say) or that cannot be replayed runs on the
  kept temporaries, and sizes nothing.
- ``copied_to_host(array, stream)``: a call's result read back (a call that returns it
  is not replayed).

The launcher (``launch``) is numba-cuda's launch with most of its per-launch host work
done once per kernel and argument types: ``coop._core.compilers.numba_cuda_launch``.
"""

import contextlib
import functools
import inspect
import operator
import threading

import numpy as np
from numba import cuda

from coop._core.backend import SIMULATOR
from coop._core.compilers import numba_cuda_mlir
from coop._core.docs import expand
from coop._core.errors import ArgumentTypeError, ArgumentValueError
from coop.device._tiles import BLOCK_THREADS

if SIMULATOR:
    from numba.cuda.simulator.api import stream as SimulatedStream
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray as DeviceArray
    from numba.cuda.simulator.kernel import FakeCUDAKernel as DeviceFunction
else:
    from numba.cuda.cudadrv.devicearray import DeviceNDArray as DeviceArray
    from numba.cuda.cudadrv.driver import Stream
    from numba.cuda.dispatcher import CUDADispatcher as DeviceFunction

    from coop._core.compilers import numba_cuda_launch

__all__ = ["documented", "device_array", "check_length", "launch_stream", "copied_to_host", "device_operator",
           "current_context", "resident_blocks", "kernel_resident_blocks", "launch", "launch_over", "fill_zero",
           "copy_items", "temporary", "temporary_with_state", "zeroed_temporary", "is_same_memory", "segment_offsets",
           "takes_temp_storage", "temp_storage_bytes"]


def documented(function):
    function.__doc__ = expand(function.__doc__)
    return function


def _error(function, name, message, kind=ArgumentTypeError):
    return kind(f"coop.device.{function}: {name} {message}")


def device_array(function, name, x):
    """``x`` as a 1-D, contiguous Numba device array (no copy)."""
    if x.__class__ is DeviceArray:  # (the common case first; converting costs as much as a launch)
        array = x
    elif isinstance(x, np.ndarray):
        raise _error(function, name, "is a NumPy array in host memory: coop.device takes device arrays "
                                     "(numba.cuda.to_device(x), a CuPy array or a PyTorch CUDA tensor)")
    elif SIMULATOR:
        if not isinstance(x, DeviceArray):
            raise _error(function, name, f"must be a device array, got {type(x).__name__} (on the simulator: "
                                         "numba.cuda.to_device(x) or numba.cuda.device_array(...))")
        array = x
    elif isinstance(x, DeviceArray):
        array = x
    else:
        if not cuda.is_cuda_array(x):
            raise _error(function, name, f"must be a device array (an object with __cuda_array_interface__), "
                                         f"got {type(x).__name__}")
        array = cuda.as_cuda_array(x, sync=False)
    if array.ndim != 1:
        raise _error(function, name, f"must be 1-D, got {array.ndim} dimensions (pass x.ravel() of a "
                                     "contiguous array)", ArgumentValueError)
    if array.size > 1 and array.strides[0] != array.dtype.itemsize:
        raise _error(function, name, f"must be contiguous, got a stride of {array.strides[0]} bytes for "
                                     f"{array.dtype.itemsize}-byte items (copy it first)", ArgumentValueError)
    return array


def check_length(function, name, array, at_least):
    if array.size < at_least:
        raise _error(function, name, f"is too short: {array.size} items, {at_least} needed", ArgumentValueError)


def segment_offsets(function, offsets):
    """``offsets`` (the segmented algorithms' ``len(offsets) - 1`` segments) as a device
    array of int32 or int64, at least one offset, or the error naming ``function``."""
    offsets = device_array(function, "offsets", offsets)
    if offsets.dtype not in (np.dtype(np.int32), np.dtype(np.int64)):
        raise ArgumentTypeError(f"coop.device.{function}: offsets must be int32 or int64, got {offsets.dtype}")
    if offsets.size < 1:
        raise ArgumentValueError(f"coop.device.{function}: offsets must hold at least one offset (no segments: one)")
    return offsets


def _address(array):
    """The first byte of a contiguous device array's memory."""
    return array.ctypes.data if SIMULATOR else (array.device_ctypes_pointer.value or 0)


def is_same_memory(function, name, array, other_name, other):
    """Whether the contiguous device arrays ``array`` and ``other`` start at one address
    (the same memory: an operation in place); a ``ValueError`` if they overlap otherwise."""
    if array.nbytes == 0 or other.nbytes == 0:  # (no memory: a GPU may give empty arrays one address)
        return False
    start, other_start = _address(array), _address(other)
    if start == other_start:
        return True
    if start < other_start + other.nbytes and other_start < start + array.nbytes:
        raise _error(function, name, f"overlaps {other_name} (it may be {other_name} itself, or apart from it)",
                     ArgumentValueError)
    return False


def launch_stream(stream, waits_without=None):
    """``stream=`` as a Numba stream (0: the default stream), checked against a CUDA
    graph being captured: then the call must have ``temp_storage=`` (a kept temporary's
    state would be baked into the graph, and its replays would share it), and must not
    wait for the GPU (``waits_without``: the parameter not given, without which the call
    returns a result read back from the GPU)."""
    if stream is None or (isinstance(stream, int) and stream == 0):
        launched = 0
    elif SIMULATOR:
        if isinstance(stream, (int, SimulatedStream)) or _stream_handle(stream) is not None:
            return 0  # (the simulator runs each launch to its end, in order)
        launched = None
    elif isinstance(stream, Stream):
        launched = stream
    else:
        handle = stream if isinstance(stream, int) else _stream_handle(stream)
        launched = _external_stream(handle) if handle is not None else None
    if launched is None:
        raise ArgumentTypeError(f"coop.device: stream must be None, a Numba, CuPy or PyTorch stream, or a "
                                f"cudaStream_t handle (int), got {type(stream).__name__}")
    if not SIMULATOR and not (_CALL.storage is not None and _CALL.storage.sizing):
        capture = numba_cuda_launch.capture_status(launched)
        if capture is not None:
            _refuse_capture(capture, waits_without)
    return launched


def _refuse_capture(capture, waits_without):
    function = f"coop.device.{_CALL.function}"
    if capture == "implicit":
        raise ArgumentValueError(f"{function}: stream is the legacy default stream while a CUDA graph is being "
                                 f"captured on another stream of this device: pass the capturing stream as stream= "
                                 f"(a Numba, CuPy or PyTorch stream, or its cudaStream_t handle)")
    if _CALL.storage is None or _CALL.storage.internal:
        raise ArgumentValueError(f"{function}: stream is capturing a CUDA graph: pass temp_storage= (a device array of "
                                 f"coop.device.temp_storage_bytes({function}, ...) bytes), which the call initialises "
                                 f"on the stream, so that every replay of the graph starts afresh (without it the "
                                 f"call keeps state between calls, which the replays would share)")
    if waits_without is not None:
        raise ArgumentValueError(f"{function}: stream is capturing a CUDA graph, and without {waits_without}= the call "
                                 f"waits for the GPU to return its result: pass {waits_without}= (a device array the "
                                 f"result is written to)")


def copied_to_host(array, stream):
    """``array`` on the host, once the GPU has written it (a call's result returned
    rather than written to device memory); zeros while sizing ``temp_storage``, where
    nothing ran."""
    if _CALL.storage is not None and _CALL.storage.sizing:
        return np.zeros(array.size, array.dtype)
    _record(None, stream)  # (a result read back: the call cannot be replayed)
    return array.copy_to_host(stream=stream)


_STREAM_ATTRIBUTES = {}  # (a stream class: the attribute holding its handle)


def _stream_handle(stream):
    attribute = _STREAM_ATTRIBUTES.get(stream.__class__)
    if attribute is not None:
        handle = getattr(stream, attribute, None)
        if isinstance(handle, int):
            return handle
    for attribute in ("cuda_stream", "ptr", "handle"):  # PyTorch, CuPy, cuda.core
        handle = getattr(stream, attribute, None)
        if isinstance(handle, int):
            _STREAM_ATTRIBUTES[stream.__class__] = attribute
            return handle
    return None


_EXTERNAL_STREAMS = {}


def _external_stream(handle):
    """A Numba stream for a ``cudaStream_t`` handle, one per handle (it holds only the
    handle, so a stream destroyed and another created with its handle share it)."""
    stream = _EXTERNAL_STREAMS.get(handle)
    if stream is None:
        if len(_EXTERNAL_STREAMS) >= 256:
            _EXTERNAL_STREAMS.clear()
        stream = _EXTERNAL_STREAMS[handle] = cuda.external_stream(handle)
    return stream


_BUILTIN_OPERATORS = {getattr(operator, name) for name in (
    "add", "sub", "mul", "truediv", "floordiv", "mod", "and_", "or_", "xor", "lshift", "rshift", "pow")}
_BUILTIN_OPERATORS |= {getattr(operator, name) for name in ("lt", "le", "gt", "ge", "eq", "ne")} | {min, max}


_COMPILED = {}  # (an operator's code and what it reads: its device function, the newest 256 kept)


def _compiled(function):
    """``function`` as a device function, one for every function of the same code that
    reads the same values: a lambda written in a loop, or inline in the call, is a new
    object each time, and compiling each (and a kernel for each) would cost seconds a
    call."""
    key = _code_key(function)
    device_function = _COMPILED.pop(key, None) or cuda.jit(device=True)(function)
    _COMPILED[key] = device_function
    while len(_COMPILED) > 256:
        del _COMPILED[next(iter(_COMPILED))]
    return device_function


def _code_key(function):
    """``function``'s code, defaults, closure values and the values of the globals it
    names (which Numba reads once, when it compiles), or ``function`` itself where one
    of them cannot be a key."""
    try:
        code = function.__code__
        key = (code, function.__defaults__, tuple(cell.cell_contents for cell in function.__closure__ or ()),
               tuple((name, function.__globals__[name]) for name in code.co_names if name in function.__globals__))
        hash(key)
        return key
    except (AttributeError, TypeError, ValueError):  # (an empty cell, an array in a closure)
        return function


def device_operator(function, name, op, arity=2):
    """``op`` in a form coop's kernels can call, taking ``arity`` values."""
    if op in _BUILTIN_OPERATORS:
        return op
    if getattr(op, "__qualname__", "").startswith("coop.ops."):
        return op
    if isinstance(op, DeviceFunction):
        _check_arity(function, name, getattr(op, "py_func", None), arity)
        return op
    if inspect.isfunction(op):
        _check_arity(function, name, op, arity)
        return _compiled(op)
    source = numba_cuda_mlir.device_function_source(op)
    if source is not None:
        return _compiled(source)
    raise _error(function, name, f"must be an operator (a coop.ops operator, operator.add and the like, a "
                                 f"lambda or function, or a @cuda.jit(device=True) function of numba-cuda or "
                                 f"numba-cuda-mlir), got {op!r}")


def _check_arity(function, name, op, arity):
    """An ``ArgumentTypeError`` where the Python function ``op`` cannot be called with
    ``arity`` values (read from its code: the host path stays short)."""
    code = getattr(op, "__code__", None)
    if code is None or code.co_flags & inspect.CO_VARARGS:
        return
    required = code.co_argcount - len(op.__defaults__ or ())
    if not required <= arity <= code.co_argcount:
        values = "1 value" if arity == 1 else f"{arity} values"
        raise _error(function, name, f"must take {values}, but it takes {code.co_argcount}")


def current_context():
    """The current CUDA context's handle (0 on the simulator): what coop.device keeps per
    device (temporaries, SM counts, occupancies) is kept per context. Asked once a call
    (``_entered``)."""
    context = _CALL.context
    return _thread_context() if context is None else context


if SIMULATOR:
    def _thread_context():
        return 0
else:
    _thread_context = numba_cuda_launch.current_context


_MULTIPROCESSORS = {}  # (a context: its device's multiprocessors)


def _multiprocessors():
    context = current_context()
    count = _MULTIPROCESSORS.get(context)
    if count is None:
        count = _MULTIPROCESSORS[context] = cuda.get_current_device().MULTIPROCESSOR_COUNT
    return count


def resident_blocks(threads, per_multiprocessor_threads=2048):
    """Blocks of ``threads`` that fill every multiprocessor once (at full occupancy)."""
    return _multiprocessors() * max(1, per_multiprocessor_threads // threads)


_KERNEL_RESIDENT_BLOCKS = {}


def kernel_resident_blocks(kernel, threads, *args):
    """Blocks of ``threads`` of ``kernel`` that fill every multiprocessor once at the
    kernel's own occupancy (its registers and shared memory, as CUB sizes its grids
    with cudaOccupancyMaxActiveBlocksPerMultiprocessor): those of its overload for
    ``args``, compiled if needed, found once a kernel and device. ``resident_blocks(threads)`` on
    the simulator and while sizing ``temp_storage``."""
    if SIMULATOR or (_CALL.storage is not None and _CALL.storage.sizing):
        return resident_blocks(threads)
    key = (kernel, current_context())
    blocks = _KERNEL_RESIDENT_BLOCKS.get(key)
    if blocks is None:
        argtypes = tuple(kernel.typeof_pyval(arg) for arg in args)
        overload = kernel.overloads.get(argtypes) or kernel.compile(argtypes)
        blocks = _KERNEL_RESIDENT_BLOCKS[key] = max(1, overload.max_cooperative_grid_blocks(threads))
    return blocks


@cuda.jit
def _zero(array, count):
    for i in range(cuda.grid(1), count, cuda.gridsize(1)):
        array[i] = 0


@cuda.jit
def _copy(src, dst, count):
    for i in range(cuda.grid(1), count, cuda.gridsize(1)):
        dst[i] = src[i]


def launch_over(kernel, count, stream, *args):
    """``kernel``, a grid-stride loop over ``count`` items, launched in blocks of
    ``BLOCK_THREADS``: as many as fill every multiprocessor once, no more than the items
    need (one at least)."""
    launch(kernel, min(resident_blocks(BLOCK_THREADS), max(1, -(-count // BLOCK_THREADS))), BLOCK_THREADS, stream,
           *args)


def fill_zero(array, count, stream):
    if _CALL.storage is not None and _CALL.storage.sizing:
        return
    if not SIMULATOR and numba_cuda_launch.zero(array, count, stream):
        if _CALL.storage is not None and _CALL.storage.steps is not None:
            _record(numba_cuda_launch.prepared_zero(array, count, stream), stream)
    else:
        launch_over(_zero, count, stream, array, count)


def copy_items(src, dst, count, stream):
    launch_over(_copy, count, stream, src, dst, count)


_TEMPORARIES = {}


def temporary(role, size, dtype, stream):
    """A device array of at least ``size`` items of ``dtype`` (kernels use its first
    ``size``: no slice is made, which costs as much as a launch), reused by later calls
    on ``stream``."""
    return temporary_with_state(role, size, dtype, stream)[0]


def zeroed_temporary(role, size, dtype, stream):
    """``temporary``'s array, zeroed when new: counters that every kernel using them
    leaves at zero again (a last block's hand-over), so that no call zeroes them first."""
    array, state = temporary_with_state(role, size, dtype, stream)
    if not state:
        fill_zero(array, size, stream)
        state["zeroed"] = True
    return array


def temporary_with_state(role, size, dtype, stream):
    """``temporary``'s array and a dict kept with it, empty when the array is new."""
    if _CALL.storage is not None:
        return _CALL.storage.take(role, size, dtype)
    # (a Numba stream's int is its handle: external streams of one handle share; the
    # default stream is each device's own)
    key = (role, dtype, int(stream), current_context())
    if _CALL.kept is not None:
        _CALL.kept.append(key)
    entry = _TEMPORARIES.get(key)
    if entry is None or entry[0].size < size:
        entry = _TEMPORARIES[key] = (cuda.device_array(max(size, 1), dtype, stream=stream), {})
    return entry


# -- temp_storage= (CUB's two-phase pattern) --

ALIGNMENT = 256  # (bytes: each temporary starts at a multiple, as cudaMalloc's)


class _CallState(threading.local):
    function = None  # (the running public call's name, for messages)
    context = None  # (the running call's CUDA context: current_context())
    storage = None  # (the running call's _UsersStorage, if it has one)
    kept = None  # (the keys of the kept temporaries the running call has taken)


_CALL = _CallState()


def _entered(name):
    """The running call's name and context set (``name``, the thread's current context);
    returns the outer call's, which the call restores when it ends."""
    outer = _CALL.function, _CALL.context
    _CALL.function, _CALL.context = name, _thread_context()
    return outer


def _drop_kept_state(keys):
    """Forget the kept temporaries a call took when it ends with an exception (a bad
    argument found late, an error in a simulated kernel, KeyboardInterrupt): a kernel
    stopped part-way leaves counters that every completed kernel sets back to zero (a
    tile claim, a last block's arrival) in the middle, and the next call would read them.
    Forgotten, they are made again (zeroed where they must be) by the next call."""
    for key in keys:
        _TEMPORARIES.pop(key, None)


class _UsersStorage:
    """A call's temporaries, carved one after another from ``buffer`` (a uint8 device
    array), or only counted (``buffer`` None: sizing, nothing launched). A role asked for
    again in the call gets the same array and state (a sort's passes share their
    look-back's epochs). ``plan``: an earlier call's arrays for the same arguments and
    buffer (``layout()``), taken again with fresh state, nothing carved."""

    def __init__(self, buffer, plan=None, internal=False):
        self.buffer, self.internal = buffer, internal  # (internal: a stream's own buffer, not the caller's)
        self.sizing = buffer is None
        self.steps, self.streams = [], {}  # (what the call queues, to replay: _record; None: not replayable)
        if plan is None:
            self.used, self.regions = 0, {}
        else:
            self.used, arrays = plan.used, plan.arrays
            self.regions = {role: (array, {}) for role, array in arrays.items()}

    def take(self, role, size, dtype):
        dtype = np.dtype(dtype)
        entry = self.regions.get(role)
        if entry is not None and entry[0].dtype == dtype and entry[0].size >= size:
            return entry
        count = max(size, 1)
        offset = self.used
        self.used += -(-count * dtype.itemsize // ALIGNMENT) * ALIGNMENT
        if self.sizing:
            array = _placeholder(dtype)
        elif self.used > self.buffer.nbytes:  # (never, if the sizing run asked what this call asks)
            raise _error(_CALL.function, "temp_storage", f"is too small: {self.buffer.nbytes} bytes, at least "
                                                         f"{self.used} needed", ArgumentValueError)
        elif SIMULATOR:
            array = self.buffer[offset:offset + count * dtype.itemsize].view(dtype)
        else:
            array = numba_cuda_launch.unowned_view(self.buffer, offset, count, dtype)
        entry = self.regions[role] = (array, {})
        return entry

    def plan(self, result):
        """The call's layout, and its steps where it can be replayed (it returned
        nothing: a result would be read back)."""
        return _Plan(self.used, {role: array for role, (array, _) in self.regions.items()},
                     self.steps if result is None and not self.sizing else None, tuple(self.streams.values()))


class _Plan:
    """A call's temporaries on a caller's buffer (``used`` bytes, ``arrays`` by role) and,
    where it can be replayed, its ``steps`` and the ``streams`` they queue on."""

    def __init__(self, used, arrays, steps, streams):
        self.used, self.arrays, self.steps, self.streams = used, arrays, steps, streams

    def replayed(self):
        """Whether the steps were queued again: not while a stream of theirs is capturing a
        CUDA graph (the call runs then, with its checks)."""
        if not self.steps:
            return False
        if not SIMULATOR:
            for stream in self.streams:
                if numba_cuda_launch.capture_status(stream):
                    return False
        for step in self.steps:
            step()
        return True


@functools.lru_cache(maxsize=None)
def _placeholder(dtype):
    return cuda.device_array(1, dtype)


@contextlib.contextmanager
def _using(storage):
    outer, _CALL.storage = _CALL.storage, storage
    try:
        yield storage
    finally:
        _CALL.storage = outer


@documented
def temp_storage_bytes(function, *args, **kwargs):
    """The bytes of ``temp_storage=`` a coop.device call needs (CUB's first call of the
    two-phase pattern, with ``d_temp_storage == nullptr``).

    Parameters
    ----------
    function : coop.device function
        The function to be called.
    args, kwargs : positional and keyword arguments
        The call's arguments (its checks run: bad input raises here as in the call).

    Returns
    -------
    int
        The bytes (0 for a call that takes none). The call's host side runs with nothing
        launched; the result depends on the sizes and dtypes, not on the values.

    Example
    -------
    A scan on memory the caller manages (a CuPy or PyTorch allocation would do as well)::

        import numpy as np
        import coop
        from numba import cuda

        d_x = cuda.to_device(np.arange(10**4, dtype=np.int64))
        d_out = cuda.device_array_like(d_x)
        nbytes = coop.device.temp_storage_bytes(coop.device.inclusive_sum, d_x, d_out)
        storage = cuda.device_array(nbytes, np.uint8)
        coop.device.inclusive_sum(d_x, d_out, temp_storage=storage)
        assert (d_out.copy_to_host() == np.cumsum(np.arange(10**4))).all()
    """
    implementation = getattr(function, "_without_temp_storage", None)
    if implementation is None:
        raise ArgumentTypeError(f"coop.device.temp_storage_bytes: function must be a coop.device function, got "
                                f"{function!r}")
    outer = _entered(function.__name__)
    try:
        with _using(_UsersStorage(None)) as storage:
            implementation(*args, **kwargs)
    finally:
        _CALL.function, _CALL.context = outer
    return storage.used


_PLANS = {}  # ((function, arguments' key, buffer, context): a _Plan), the newest 256
_SCALARS = frozenset([int, float, bool, str, complex, type(None), np.bool_]
                     + [np.dtype(code).type for code in "bBhHiIlLqQefdgFD"])


_OWN_PLANS = {}  # ((function, arguments' key, None, context): _SEEN, _NOT_REPLAYED or a _Plan), the newest 256
_OWN_BUFFERS = {}  # ((a stream's key, context): the uint8 device array calls without temp_storage= replay on)
OWN_BUFFER_LIMIT = 1 << 26  # (bytes: calls that need more run on the kept temporaries; they are not host-bound)
OWN_BUFFER_LEAST = 1 << 16
_SEEN, _NOT_REPLAYED = object(), object()


def _keep(plans, key, plan):
    """``plans[key] = plan``, the oldest dropped past 256 (threads, a device each, may keep
    at once: one may drop what another is dropping)."""
    plans[key] = plan
    while len(plans) > 256:
        try:
            del plans[next(iter(plans))]
        except (KeyError, RuntimeError, StopIteration):
            pass


class _Unkeyable(Exception):
    pass


def _argument_key(value):
    """What of an argument can decide a call's temporaries: a device array's type,
    memory and shape, a scalar's class and value, an operator's code (``_code_key``),
    a stream's handle; ``_Unkeyable`` for anything else."""
    cls = value.__class__
    if cls is DeviceArray:
        return _array_key(value)
    if cls in _SCALARS:
        return cls, value
    if cls is tuple or cls is list:
        return cls, tuple(map(_argument_key, value))
    if inspect.isfunction(value):  # (coop.ops' operators are fixed: no need of their code's key, which is slow)
        return (cls, value) if value.__qualname__.startswith("coop.ops.") else _code_key(value)
    interface = getattr(value, "__cuda_array_interface__", None)
    if interface is not None:
        return (cls, interface["data"][0], interface["typestr"], interface["shape"], interface.get("strides"),
                interface.get("descr") and str(interface["descr"]))
    if not SIMULATOR and isinstance(value, Stream):
        return "stream", int(value)
    handle = _stream_handle(value) if not isinstance(value, type) else None
    if handle is not None:
        return "stream", handle
    try:
        hash(value)
    except TypeError:
        raise _Unkeyable from None
    return cls, value  # (an operator object: coop.ops', operator.add, a compiled device function)


if SIMULATOR:
    def _array_key(array):
        """A device array's type, memory and shape."""
        return array.dtype.str, array.shape, array.strides, _address(array)
else:
    _array_key = numba_cuda_launch.array_key  # (cached on the array)


def _plan_key(function, args, kwargs, temp_storage, context):
    """The key of the plans of ``function`` called with ``args``, ``kwargs`` on
    ``temp_storage`` (as the caller passed it: a Numba, CuPy or PyTorch array) in
    ``context``, or None (an argument that cannot be a key: the call is sized each
    time)."""
    try:
        return (function, tuple(map(_argument_key, args)),
                tuple((name, _argument_key(value)) for name, value in kwargs.items()) if kwargs else (),
                _argument_key(temp_storage), context)
    except _Unkeyable:
        return None


def takes_temp_storage(function):
    """``function`` (a public coop.device function whose last parameter is
    ``temp_storage=None``, unused by its body) with ``temp_storage`` served (see the
    module docstring). A call on a caller's buffer is sized (``temp_storage_bytes``) and
    carved the first time only: its layout is kept for later calls with arguments of the
    same key (``_argument_key``: what can change the temporaries it takes, and the launches
    it makes) on the same buffer (its regions are views that keep no memory alive), with
    what it queued where it can be replayed (``_Plan``). A call without a buffer is
    replayed the same way from its stream's own buffer once its key has been seen twice
    (``_OWN_PLANS``; a plan keeps the buffer it was made on alive, and is made again when
    the stream's buffer has grown since)."""
    name = function.__name__
    last = len(inspect.signature(function).parameters) - 1

    def on_kept_temporaries(args, kwargs):
        outer = _entered(name)
        kept, _CALL.kept = _CALL.kept, []
        try:
            return function(*args, **kwargs)
        except BaseException:
            _drop_kept_state(_CALL.kept)
            raise
        finally:
            _CALL.kept = kept
            _CALL.function, _CALL.context = outer

    def on_carved(storage, args, kwargs):
        """The call run with its temporaries carved from ``storage`` (a _UsersStorage):
        its result, and the storage (its plan)."""
        outer_storage, _CALL.storage = _CALL.storage, storage
        try:
            return function(*args, **kwargs), storage
        finally:
            _CALL.storage = outer_storage

    def on_streams_buffer(key, args, kwargs):
        """The call laid out on its stream's own buffer (grown to fit), run, and its plan
        kept under ``key`` where it can be replayed; ``_NOT_REPLAYED`` kept for a call
        that cannot be (or takes more than ``OWN_BUFFER_LIMIT``), which then runs on the
        kept temporaries."""
        needed = temp_storage_bytes(call, *args, **kwargs)
        if needed > OWN_BUFFER_LIMIT:
            _keep(_OWN_PLANS, key, _NOT_REPLAYED)
            return on_kept_temporaries(args, kwargs)
        stream = args[last - 1] if len(args) >= last else kwargs.get("stream")
        owner = _argument_key(stream), key[-1]
        outer = _entered(name)
        try:
            launch_stream(stream)  # (a stream capturing a graph refuses the call before anything is allocated)
            buffer = _OWN_BUFFERS.get(owner)
            if buffer is None or buffer.nbytes < needed:  # (twofold at least: plans made on the old one keep it)
                twice = min(2 * buffer.nbytes, OWN_BUFFER_LIMIT) if buffer is not None else 0
                _OWN_BUFFERS[owner] = buffer = cuda.device_array(max(needed, OWN_BUFFER_LEAST, twice), np.uint8)
            result, storage = on_carved(_UsersStorage(buffer, internal=True), args, kwargs)
        finally:
            _CALL.function, _CALL.context = outer
        plan = storage.plan(result)
        if plan.steps:
            plan.owner, plan.buffer = owner, buffer
        _keep(_OWN_PLANS, key, plan if plan.steps else _NOT_REPLAYED)
        return result

    @functools.wraps(function)
    def call(*args, **kwargs):
        temp_storage = kwargs.pop("temp_storage", None) if len(args) <= last else args[last]
        args = args[:last]
        if temp_storage is None:
            # (a call repeated with the same key is replayed from its stream's own buffer:
            # made the second time the key is seen, so that calls on new arrays each time
            # size nothing; the replay before anything else, as temp_storage='s)
            key = _plan_key(call, args, kwargs, None, _thread_context()) if _CALL.function is None else None
            if key is None:
                return on_kept_temporaries(args, kwargs)
            plan = _OWN_PLANS.pop(key, None)
            if plan.__class__ is _Plan and _OWN_BUFFERS.get(plan.owner) is plan.buffer:
                _OWN_PLANS[key] = plan
                if plan.replayed():
                    return None
                return on_kept_temporaries(args, kwargs)  # (a stream capturing a graph: the call refuses)
            if plan is None or plan is _NOT_REPLAYED:
                _keep(_OWN_PLANS, key, _SEEN if plan is None else plan)
                return on_kept_temporaries(args, kwargs)
            return on_streams_buffer(key, args, kwargs)  # (seen once before, or its plan's buffer grown since)
        # (a replay first, before anything else of the call's state, which it does not
        # need; a buffer whose key was seen is one checked before, unconverted)
        key = _plan_key(call, args, kwargs, temp_storage, _thread_context())
        plan = _PLANS.pop(key, None) if key is not None else None
        if plan is not None and plan.replayed():
            _PLANS[key] = plan
            return None
        buffer = device_array(name, "temp_storage", temp_storage)
        if buffer.dtype != np.uint8:
            buffer = buffer.view(np.uint8)
        outer = _entered(name)
        try:
            if plan is None:
                needed = temp_storage_bytes(call, *args, **kwargs)
                if buffer.nbytes < needed:
                    raise _error(name, "temp_storage", f"is too small: {buffer.nbytes} bytes, {needed} needed "
                                                       f"(coop.device.temp_storage_bytes(coop.device.{name}, ...))",
                                 ArgumentValueError)
            result, storage = on_carved(_UsersStorage(buffer, plan), args, kwargs)
            if key is not None:
                _keep(_PLANS, key, storage.plan(result))
            return result
        finally:
            _CALL.function, _CALL.context = outer

    call._without_temp_storage = function
    return call


# -- the launcher --


def launch(kernel, griddim, blockdim, stream, *args):
    """``kernel[griddim, blockdim, stream](*args)`` (numba-cuda's launch, or coop's
    quicker one of the same kernel: ``numba_cuda_launch``); nothing while sizing
    ``temp_storage``."""
    storage = _CALL.storage
    if storage is not None and storage.sizing:
        return
    if SIMULATOR:
        kernel[griddim, blockdim, stream](*args)
    else:
        numba_cuda_launch.launch(kernel, griddim, blockdim, stream, args, _CALL.context)
    if storage is not None and storage.steps is not None:  # (a call on a caller's buffer, replayable so far)
        _record((lambda: kernel[griddim, blockdim, stream](*args)) if SIMULATOR
                else numba_cuda_launch.prepared(kernel, griddim, blockdim, stream, args), stream)


def _record(step, stream):
    """Add ``step`` (a function queuing again on ``stream`` what the running call just
    queued) to its storage's steps, to replay; ``None``: the call cannot be replayed."""
    storage = _CALL.storage
    if storage is not None and storage.steps is not None:
        if step is None:
            storage.steps = None
        else:
            storage.steps.append(step)
            storage.streams[id(stream)] = stream
