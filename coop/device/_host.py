"""The host side shared by coop.device's algorithms: the checks made before any launch,
streams, operators given on the host, launch sizes and kernel caches.

- ``device_array(function, name, x)``: ``x`` as a Numba device array, any object with
  the CUDA Array Interface (Numba, CuPy, PyTorch) taken without a copy; a host (NumPy)
  array, a non-1-D or non-contiguous one is a ``TypeError`` / ``ValueError`` naming the
  function and the parameter.
- ``launch_stream(stream)``: ``stream=`` as a Numba stream: None (the default stream), a
  Numba stream, a CuPy stream (``.ptr``), a PyTorch stream (``.cuda_stream``) or a raw
  ``cudaStream_t`` handle (an int).
- ``device_operator(op)``: an operator usable inside coop's kernels: coop.ops operators,
  ``operator.add`` and friends and ``@cuda.jit(device=True)`` functions as they are; a
  lambda or plain function given on the host compiled as a device function (once per
  function object).
- ``documented``: a public function's docstring with coop's shared paragraphs filled in
  (``coop._core.docs``), as the kernel-side primitives' are.
- ``resident_blocks(threads)``: how many blocks of ``threads`` fill the GPU once.
- ``fill_zero(array, count, stream)``: ``array[:count] = 0``, queued on ``stream`` (a
  kernel: no host array to copy, no slice).
- ``temporary(role, size, dtype, stream)``: a device array of ``size`` items for the
  algorithms' temporary storage, kept between calls (one per role, dtype and stream, grown
  when a call needs more): a call then allocates nothing, and calls on one stream reuse
  it in turn, as the stream orders them.
"""

import functools
import inspect
import operator

import numpy as np
from numba import cuda

from coop._core.backend import SIMULATOR
from coop._core.docs import expand
from coop.device._tiles import BLOCK_THREADS

if SIMULATOR:
    from numba.cuda.simulator.api import stream as SimulatedStream
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray
    from numba.cuda.simulator.kernel import FakeCUDAKernel as DeviceFunction
else:
    from numba.cuda.cudadrv.devicearray import DeviceNDArray
    from numba.cuda.cudadrv.driver import Stream
    from numba.cuda.dispatcher import CUDADispatcher as DeviceFunction

__all__ = ["documented", "device_array", "check_length", "launch_stream", "device_operator", "resident_blocks",
           "fill_zero", "temporary", "temporary_with_state"]


def documented(function):
    function.__doc__ = expand(function.__doc__)
    return function


def _error(function, name, message, kind=TypeError):
    return kind(f"coop.device.{function}: {name} {message}")


def device_array(function, name, x):
    """``x`` as a 1-D, contiguous Numba device array (no copy)."""
    if isinstance(x, np.ndarray):
        raise _error(function, name, "is a NumPy array in host memory: coop.device takes device arrays "
                                     "(numba.cuda.to_device(x), a CuPy array or a PyTorch CUDA tensor)")
    if SIMULATOR:
        if not isinstance(x, FakeCUDAArray):
            raise _error(function, name, f"must be a device array, got {type(x).__name__} (on the simulator: "
                                         "numba.cuda.to_device(x) or numba.cuda.device_array(...))")
        array = x
    elif isinstance(x, DeviceNDArray):  # (as it is: converting costs as much as a launch)
        array = x
    else:
        if not cuda.is_cuda_array(x):
            raise _error(function, name, f"must be a device array (an object with __cuda_array_interface__), "
                                         f"got {type(x).__name__}")
        array = cuda.as_cuda_array(x, sync=False)
    if array.ndim != 1:
        raise _error(function, name, f"must be 1-D, got {array.ndim} dimensions (pass x.ravel() of a "
                                     "contiguous array)", ValueError)
    if array.size > 1 and array.strides[0] != array.dtype.itemsize:
        raise _error(function, name, f"must be contiguous, got a stride of {array.strides[0]} bytes for "
                                     f"{array.dtype.itemsize}-byte items (copy it first)", ValueError)
    return array


def check_length(function, name, array, at_least):
    if array.size < at_least:
        raise _error(function, name, f"is too short: {array.size} items, {at_least} needed", ValueError)


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
            return cuda.external_stream(handle)
    raise TypeError(f"coop.device: stream must be None, a Numba, CuPy or PyTorch stream, or a cudaStream_t "
                    f"handle (int), got {type(stream).__name__}")


def _stream_handle(stream):
    for attribute in ("cuda_stream", "ptr", "handle"):  # PyTorch, CuPy, cuda.core
        handle = getattr(stream, attribute, None)
        if isinstance(handle, int):
            return handle
    return None


_BUILTIN_OPERATORS = {getattr(operator, name) for name in (
    "add", "sub", "mul", "truediv", "floordiv", "mod", "and_", "or_", "xor", "lshift", "rshift", "pow")}
_BUILTIN_OPERATORS |= {min, max}


@functools.lru_cache(maxsize=256)
def _compiled(function):
    return cuda.jit(device=True)(function)


def device_operator(function, name, op):
    """``op`` in a form coop's kernels can call."""
    if op in _BUILTIN_OPERATORS:
        return op
    if getattr(op, "__qualname__", "").startswith("coop.ops.") or isinstance(op, DeviceFunction):
        return op
    if inspect.isfunction(op):
        return _compiled(op)
    raise _error(function, name, f"must be an operator (a coop.ops operator, operator.add and the like, a "
                                 f"lambda or function, or a @cuda.jit(device=True) function), got {op!r}")


@functools.lru_cache(maxsize=None)
def _multiprocessors():
    if SIMULATOR:
        return 1
    return cuda.get_current_device().MULTIPROCESSOR_COUNT


def resident_blocks(threads, per_multiprocessor_threads=2048):
    """Blocks of ``threads`` that fill every multiprocessor once (at full occupancy)."""
    return _multiprocessors() * max(1, per_multiprocessor_threads // threads)


@cuda.jit
def _zero(array, count):
    for i in range(cuda.grid(1), count, cuda.gridsize(1)):
        array[i] = 0


def fill_zero(array, count, stream):
    _zero[min(max(-(-count // BLOCK_THREADS), 1), 1024), BLOCK_THREADS, stream](array, count)


_TEMPORARIES = {}


def temporary(role, size, dtype, stream):
    """A device array of at least ``size`` items of ``dtype`` (kernels use its first
    ``size``: no slice is made, which costs as much as a launch), reused by later calls
    on ``stream``."""
    return temporary_with_state(role, size, dtype, stream)[0]


def temporary_with_state(role, size, dtype, stream):
    """``temporary``'s array and a dict kept with it, empty when the array is new."""
    key = (role, dtype, _stream_key(stream))
    entry = _TEMPORARIES.get(key)
    if entry is None or entry[0].size < size:
        entry = _TEMPORARIES[key] = (cuda.device_array(max(size, 1), dtype, stream=stream), {})
    return entry


def _stream_key(stream):
    """The stream's handle (external streams wrapping one handle share their arrays)."""
    return int(stream)  # (Numba streams convert to their cudaStream_t)
