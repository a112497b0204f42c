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
- ``launch_stream(stream)``: ``stream=`` as a Numba stream: None (the default stream), a
  Numba stream, a CuPy stream (``.ptr``), a PyTorch stream (``.cuda_stream``) or a raw
  ``cudaStream_t`` handle (an int; one Numba stream kept per handle).
- ``device_operator(op)``: an operator usable inside coop's kernels: coop.ops operators,
  ``operator.add`` and friends and ``@cuda.jit(device=True)`` functions as they are; a
  lambda or plain function given on the host compiled as a device function (once per
  code and the values it reads: a lambda written in the call compiles once).
- ``documented``: a public function's docstring with coop's shared paragraphs filled in
  (``coop._core.docs``), as the kernel-side primitives' are.
- ``resident_blocks(threads)``: how many blocks of ``threads`` fill the GPU once;
  ``kernel_resident_blocks(kernel, threads, *args)``: the same at a kernel's own
  occupancy (its registers and shared memory).
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
  running its host side with no launch (``launch``, ``fill_zero`` do nothing then).

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

__all__ = ["documented", "device_array", "check_length", "launch_stream", "device_operator", "resident_blocks",
           "kernel_resident_blocks", "launch", "launch_over", "fill_zero", "copy_items", "temporary", "temporary_with_state",
           "zeroed_temporary", "is_same_memory", "segment_offsets", "takes_temp_storage", "temp_storage_bytes"]


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


def launch_stream(stream):
    """``stream=`` as a Numba stream (0: the default stream)."""
    if stream is None or (isinstance(stream, int) and stream == 0):
        return 0
    if SIMULATOR:
        if isinstance(stream, (int, SimulatedStream)) or _stream_handle(stream) is not None:
            return 0  # (the simulator runs each launch to its end, in order)
    else:
        if isinstance(stream, Stream):
            return stream
        handle = stream if isinstance(stream, int) else _stream_handle(stream)
        if handle is not None:
            return _external_stream(handle)
    raise ArgumentTypeError(f"coop.device: stream must be None, a Numba, CuPy or PyTorch stream, or a cudaStream_t "
                            f"handle (int), got {type(stream).__name__}")


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
_BUILTIN_OPERATORS |= {min, max}


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


def device_operator(function, name, op):
    """``op`` in a form coop's kernels can call."""
    if op in _BUILTIN_OPERATORS:
        return op
    if getattr(op, "__qualname__", "").startswith("coop.ops.") or isinstance(op, DeviceFunction):
        return op
    if inspect.isfunction(op):
        return _compiled(op)
    source = numba_cuda_mlir.device_function_source(op)
    if source is not None:
        return _compiled(source)
    raise _error(function, name, f"must be an operator (a coop.ops operator, operator.add and the like, a "
                                 f"lambda or function, or a @cuda.jit(device=True) function of numba-cuda or "
                                 f"numba-cuda-mlir), got {op!r}")


@functools.lru_cache(maxsize=None)
def _multiprocessors():
    if SIMULATOR:
        return 1
    return cuda.get_current_device().MULTIPROCESSOR_COUNT


def resident_blocks(threads, per_multiprocessor_threads=2048):
    """Blocks of ``threads`` that fill every multiprocessor once (at full occupancy)."""
    return _multiprocessors() * max(1, per_multiprocessor_threads // threads)


_KERNEL_RESIDENT_BLOCKS = {}


def kernel_resident_blocks(kernel, threads, *args):
    """Blocks of ``threads`` of ``kernel`` that fill every multiprocessor once at the
    kernel's own occupancy (its registers and shared memory, as CUB sizes its grids
    with cudaOccupancyMaxActiveBlocksPerMultiprocessor): those of its overload for
    ``args``, compiled if needed, found once a kernel. ``resident_blocks(threads)`` on
    the simulator and while sizing ``temp_storage``."""
    if SIMULATOR or (_CALL.storage is not None and _CALL.storage.sizing):
        return resident_blocks(threads)
    blocks = _KERNEL_RESIDENT_BLOCKS.get(kernel)
    if blocks is None:
        argtypes = tuple(kernel.typeof_pyval(arg) for arg in args)
        overload = kernel.overloads.get(argtypes) or kernel.compile(argtypes)
        blocks = _KERNEL_RESIDENT_BLOCKS[kernel] = max(1, overload.max_cooperative_grid_blocks(threads))
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
    key = (role, dtype, int(stream))  # (a Numba stream's int is its handle: external streams of one handle share)
    if _CALL.kept is not None:
        _CALL.kept.append(key)
    entry = _TEMPORARIES.get(key)
    if entry is None or entry[0].size < size:
        entry = _TEMPORARIES[key] = (cuda.device_array(max(size, 1), dtype, stream=stream), {})
    return entry


# -- temp_storage= (CUB's two-phase pattern) --

ALIGNMENT = 256  # (bytes: each temporary starts at a multiple, as cudaMalloc's)


class _CallState(threading.local):
    storage = None  # (the running call's _UsersStorage, if it has one)
    kept = None  # (the keys of the kept temporaries the running call has taken)


_CALL = _CallState()


@contextlib.contextmanager
def _kept_state_dropped_on_error():
    """Forget the kept temporaries a call took if it ends with an exception (a bad
    argument found late, an error in a simulated kernel, KeyboardInterrupt): a kernel
    stopped part-way leaves counters that every completed kernel sets back to zero (a
    tile claim, a last block's arrival) in the middle, and the next call would read them.
    Forgotten, they are made again (zeroed where they must be) by the next call."""
    outer, _CALL.kept = _CALL.kept, []
    try:
        yield
    except BaseException:
        for key in _CALL.kept:
            _TEMPORARIES.pop(key, None)
        raise
    finally:
        _CALL.kept = outer


class _UsersStorage:
    """A call's temporaries, carved one after another from ``buffer`` (a uint8 device
    array), or only counted (``buffer`` None: sizing, nothing launched). A role asked for
    again in the call gets the same array and state (a sort's passes share their
    look-back's epochs)."""

    def __init__(self, buffer):
        self.buffer = buffer
        self.sizing = buffer is None
        self.used = 0
        self.regions = {}

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
        else:
            array = self.buffer[offset:offset + count * dtype.itemsize].view(dtype)
        entry = self.regions[role] = (array, {})
        return entry


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
    with _using(_UsersStorage(None)) as storage:
        implementation(*args, **kwargs)
    return storage.used


def takes_temp_storage(function):
    """``function`` (a public coop.device function whose last parameter is
    ``temp_storage=None``, unused by its body) with ``temp_storage`` served (see the
    module docstring)."""
    name = function.__name__
    last = len(inspect.signature(function).parameters) - 1

    @functools.wraps(function)
    def call(*args, **kwargs):
        temp_storage = kwargs.pop("temp_storage", None) if len(args) <= last else args[last]
        if temp_storage is None:
            with _kept_state_dropped_on_error():
                return function(*args[:last], **kwargs)
        args = args[:last]
        buffer = device_array(name, "temp_storage", temp_storage)
        needed = temp_storage_bytes(call, *args, **kwargs)
        if buffer.nbytes < needed:
            raise _error(name, "temp_storage", f"is too small: {buffer.nbytes} bytes, {needed} needed "
                                               f"(coop.device.temp_storage_bytes(coop.device.{name}, ...))",
                         ArgumentValueError)
        with _using(_UsersStorage(buffer.view(np.uint8))):
            return function(*args, **kwargs)

    call._without_temp_storage = function
    return call


# -- the launcher --


def launch(kernel, griddim, blockdim, stream, *args):
    """``kernel[griddim, blockdim, stream](*args)`` (numba-cuda's launch, or coop's
    quicker one of the same kernel: ``numba_cuda_launch``); nothing while sizing
    ``temp_storage``."""
    if _CALL.storage is not None and _CALL.storage.sizing:
        return
    if SIMULATOR:
        kernel[griddim, blockdim, stream](*args)
    else:
        numba_cuda_launch.launch(kernel, griddim, blockdim, stream, args)
