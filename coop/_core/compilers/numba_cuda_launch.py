"""coop.device's launcher: numba-cuda's kernel launch with its per-launch host work done
once per kernel and argument types.

A coop.device call is a few kernel launches, and at small and medium sizes
its time is the host's: measured on an H100, Numba's launch path made a call cost 53 µs
(``sum``, one launch) to 100 µs (the scans) against CuPy's 33-48 µs, and at 2^24 int32
items ``sum`` reached only 0.27 of CUB's DeviceReduce (29 µs of GPU time). Most of it is
numba-cuda's per-launch work: typing every argument and looking up the overload,
``_Kernel._prepare_args`` (a ctypes object or Python int for each of an array's seven
flattened fields), cuda.core's ``LaunchConfig`` and ``ParamHolder`` (a heap allocation
per parameter) and the context look-up. ``launch`` does that work once per kernel and
argument key (a device array's Numba type, a scalar's class, a tuple's members' keys).
The first launch with a new key is Numba's own, which compiles if needed; the overload it
used, ``kernel.overloads[argtypes]`` with ``argtypes`` from ``kernel.typeof_pyval`` (as
``CUDADispatcher._compile_for_args`` types them), then gets a ``_PackedLaunch``: a
``struct.Struct`` of the kernel's flattened parameters, one 8-byte slot each, in
``_Kernel._prepare_args``'s order and encoding (an array's meminfo 0, parent 0, size,
itemsize, data pointer, shape, strides in bytes; an integer, float or boolean by its
Numba type; a tuple member by member), a buffer and the array of pointers to its slots.
Each later launch with that key packs the values into the buffer (one ``pack_into``,
under a lock: the buffer is shared) and calls ``cuLaunchKernel`` (``cuda.bindings.driver``)
with the kernel's handle (``overload.library.get_cufunc().handle``, a ``CUkernel``,
launched in the current context as cuda.core's ``launch`` launches it) and the stream's
(``Stream.handle``; 0 for 0 or None, as numba-cuda's ``_to_core_stream``). An array's
key and parameters are cached on it (``array.__dict__["_coop_launch"]``, as Numba caches
its ``_numba_type_`` and ``_strided_memory_view_shim``, whose ``ptr`` is the pointer
Numba's launch passes). It relies on these internals of numba-cuda 0.30.4 (numba 0.68,
cuda-bindings 13): ``CUDADispatcher.overloads``, ``typeof_pyval`` and
``_launch_config_sensitive``; ``_Kernel``'s ``library``, ``debug``, ``cooperative``,
``extensions`` and ``launch_config_sensitive``; ``CudaPythonFunction.handle``;
``DeviceNDArray._numba_type_`` (interned Numba types) and ``_strided_memory_view_shim``;
and ``_Kernel._prepare_args``'s layout (tests/test_device_launch.py compares the packed
bytes with it, and the parameters' number and sizes with Numba's argument packer for the
kernel). Numba's own launch runs instead, so that correctness never rests on the packed
one: on the simulator; for an argument of another kind (anything but a
``DeviceNDArray``, a Python or NumPy integer, float or bool, or a tuple of those); for a
kernel compiled for debugging (exceptions checked), cooperative, with launch-time
extensions or specialised by launch configuration; for grid or block sizes other than
positive ints or tuples of them, a stream other than 0, None or a Numba stream, a value
its slot cannot hold (an int past int64); when no context is current on the thread (a
new thread: Numba's launch makes it current); and when ``cuLaunchKernel`` fails (nothing
was queued: Numba's launch then raises its own error). The kernel's handle is taken for
each context it is launched in (``get_cufunc``, as Numba's launch does) and kept per
context: a process may launch on several GPUs, from a thread each.

Also here, for coop.device's host side: ``current_context()`` (the current context's
handle), ``capture_status(stream)`` (whether a stream is capturing a CUDA graph),
``zero(array, count, stream)`` (a memset), ``unowned_view(buffer, offset, count, dtype)``
(a view of a byte buffer that keeps no memory alive) and ``array_key(array)``.
"""

import ctypes
import struct
import threading

import numpy as np
from cuda.bindings import driver as _driver
from numba.cuda import types as _types
from numba.cuda.cudadrv.devicearray import DeviceNDArray as DeviceArray
from numba.cuda.cudadrv.driver import MemoryPointer, Stream

from coop._core.errors import ArgumentValueError

__all__ = ["launch", "prepared", "current_context", "capture_status", "unowned_view", "array_key", "zero",
           "prepared_zero"]

_LAUNCHES = {}  # kernel -> {argument key: _PackedLaunch, None (Numba's launch) or _NEW}
_NEW = object()

# scalar argument classes (Numba types each by its class alone, a Python int as int64
# where it fits: a larger one fails to pack, and Numba's launch takes it)
_SCALARS = frozenset([int, float, bool, np.bool_] + [np.dtype(code).type for code in "bBhHiIlLqQefd"])


if hasattr(DeviceArray, "_strided_memory_view_shim"):
    def _pointer(array):
        """The data pointer numba-cuda 0.30's launch passes (cached on the array)."""
        return array._strided_memory_view_shim.ptr or 0
else:
    def _pointer(array):
        return array.device_ctypes_pointer.value or 0


_FIELDS = "_coop_launch"


def _array_fields(array):
    """A device array's key and kernel parameters, cached on it (as Numba caches its
    type and pointer on it: a device array's memory, shape and strides never change)."""
    fields = array.__dict__[_FIELDS] = (
        id(array._numba_type_),  # (interned; a _PackedLaunch holds its types)
        (0, 0, array.size, array.dtype.itemsize, _pointer(array), *array.shape, *array.strides))
    return fields


def array_key(array):
    """A device array's Numba type and kernel parameters (its pointer, size, shape and
    strides): equal for arrays over the same memory as the same items (cached on it)."""
    return array.__dict__.get(_FIELDS) or _array_fields(array)


def _flatten(items, key, values):
    """Append the key of each of ``items``' kinds to ``key`` and its kernel parameters
    (as numba-cuda's ``_Kernel._prepare_args`` flattens them) to ``values``; False for
    an item of another kind."""
    for item in items:
        cls = item.__class__
        if cls is DeviceArray:
            fields = item.__dict__.get(_FIELDS) or _array_fields(item)
            key.append(fields[0])
            values += fields[1]
        elif cls in _SCALARS:
            key.append(cls)
            values.append(item)
        elif cls is tuple:
            members = []
            if not _flatten(item, members, values):
                return False
            key.append(tuple(members))
        else:
            return False
    return True


def _codes(items, argtypes, codes):
    """Append the ``struct`` code of each parameter of ``items`` (typed ``argtypes``
    by Numba) to ``codes``; False where ``_flatten``'s key does not decide the type, or
    for a type it does not pack."""
    for item, argtype in zip(items, argtypes):
        cls = item.__class__
        if cls is DeviceArray:
            if argtype is not item._numba_type_:
                return False
            codes += "q" * (5 + 2 * argtype.ndim)
        elif cls is tuple:
            if not isinstance(argtype, _types.BaseTuple) or len(argtype) != len(item):
                return False
            if not _codes(item, tuple(argtype), codes):
                return False
        elif isinstance(argtype, _types.Boolean):
            codes.append("?")
        elif isinstance(argtype, _types.Integer) and (cls is not int or argtype == _types.int64):
            code = {8: "b", 16: "h", 32: "i", 64: "q"}[argtype.bitwidth]
            codes.append(code if argtype.signed else code.upper())
        elif isinstance(argtype, _types.Float) and argtype.bitwidth in (16, 32, 64):
            codes.append({16: "e", 32: "f", 64: "d"}[argtype.bitwidth])
        else:
            return False
    return True


_SLOT = 8  # (bytes per parameter: every parameter packed here fits 8)


def _parameter_buffer(layout):
    """A buffer for the parameters ``layout`` (a ``struct.Struct`` of 8-byte slots) packs,
    the array of pointers to its slots, and that array's address (``cuLaunchKernel``'s
    ``kernelParams``; 0 for no parameters)."""
    buffer = ctypes.create_string_buffer(max(layout.size, 1))
    count = layout.size // _SLOT
    slots = (ctypes.c_void_p * max(count, 1))(*(ctypes.addressof(buffer) + _SLOT * i for i in range(count)))
    return buffer, slots, ctypes.addressof(slots) if count else 0


class _PackedLaunch:
    """The launch of one overload of a kernel with its parameters packed into one
    buffer: ``struct`` writes their values into ``buffer``, ``pointers`` is the
    address of the array of pointers to their slots (``cuLaunchKernel``'s
    ``kernelParams``)."""

    @classmethod
    def make(cls, kernel, args):
        """The packed launch of the overload Numba's launch of ``kernel`` with ``args``
        used, or None (Numba's launch for these types, each time)."""
        argtypes = tuple(kernel.typeof_pyval(arg) for arg in args)
        overload = kernel.overloads.get(argtypes)
        if (overload is None or getattr(overload, "debug", True) or getattr(overload, "cooperative", True)
                or getattr(overload, "extensions", True) or getattr(overload, "launch_config_sensitive", True)
                or getattr(kernel, "_launch_config_sensitive", True)):
            return None
        codes = []
        if not _codes(args, argtypes, codes):
            return None
        return cls(overload, argtypes, codes)

    def __init__(self, overload, argtypes, codes):
        self.overload = overload
        self.argtypes = argtypes  # (alive: the keys hold their ids)
        self.struct = struct.Struct("<" + "".join(code + "x" * (_SLOT - struct.calcsize("<" + code))
                                                  for code in codes))
        self.buffer, self._pointers, self.pointers = _parameter_buffer(self.struct)
        self.lock = threading.Lock()
        self.functions = {}  # (a context's handle: the kernel's handle there)
        self.launches = 0

    def __call__(self, griddim, blockdim, stream, values, context=None):
        """Launch with the parameters ``values`` (``_flatten``'s) in the current context
        (``context``, its handle, if known); False if it did not (Numba's launch then runs
        instead)."""
        if griddim.__class__ is int and 0 < griddim < _DIM_LIMIT:
            grid = (griddim, 1, 1)
        else:
            grid = _dim3(griddim)
        if blockdim.__class__ is int and 0 < blockdim < _DIM_LIMIT:
            block = (blockdim, 1, 1)
        else:
            block = _dim3(blockdim)
        stream = _handle(stream)
        if stream is None or grid is None or block is None:
            return False
        if not context:
            error, context = _driver.cuCtxGetCurrent()
            context = int(context)
            if error or not context:
                return False  # (Numba's launch makes its context current)
        function = self.functions.get(context) or self.bind(context)
        with self.lock:  # (the buffer is shared; cuLaunchKernel copies it before returning)
            try:
                self.struct.pack_into(self.buffer, 0, *values)
                error, = _driver.cuLaunchKernel(function, *grid, *block, 0, stream, self.pointers, 0)
            except (struct.error, OverflowError, TypeError, ArgumentValueError):
                return False  # (a value its slot cannot hold; an argument the binding refused)
            if error:
                return False  # (nothing was queued)
            self.launches += 1
        return True

    def bind(self, context):
        """The kernel's handle for the current context (``context``), as Numba's launch
        takes it (``get_cufunc`` loads the module into it if needed), kept for it."""
        function = self.functions[context] = _driver.CUfunction(int(self.overload.library.get_cufunc().handle))
        return function


_DEFAULT_STREAM = _driver.CUstream(0)


def _handle(stream):
    """A Numba stream's handle, the default stream's for 0 or None, else None."""
    if stream.__class__ is Stream:
        return stream.handle
    if stream is None or (stream.__class__ is int and stream == 0):
        return _DEFAULT_STREAM
    return None
_DIM_LIMIT = 1 << 31  # (past CUDA's largest grid; an unsigned int for cuLaunchKernel)


def _dim3(dim):
    """A grid or block size as three positive ints, or None."""
    if (dim.__class__ is tuple and 1 <= len(dim) <= 3
            and all(d.__class__ is int and 0 < d < _DIM_LIMIT for d in dim)):
        return dim + (1,) * (3 - len(dim))
    return None


def launch(kernel, griddim, blockdim, stream, args, context=None):
    """``kernel[griddim, blockdim, stream](*args)``, through a packed launch once Numba
    has launched ``kernel`` with arguments of these types (see the module docstring);
    ``context``: the current context's handle where the caller knows it."""
    launches = _LAUNCHES.get(kernel)
    if launches is None:
        launches = _LAUNCHES[kernel] = {}
    key, values = [], []
    if _flatten(args, key, values):
        key = tuple(key)
        packed = launches.get(key, _NEW)
        if packed.__class__ is _PackedLaunch and packed(griddim, blockdim, stream, values, context):
            return
    else:
        packed = None  # (an argument of another kind: Numba's launch, each time)
    kernel[griddim, blockdim, stream](*args)
    if packed is _NEW:
        launches[key] = _PackedLaunch.make(kernel, args)


def current_context():
    """The handle (an int) of the thread's current CUDA context, Numba's (of the device
    it selects, device 0 by default) made current first if none is."""
    error, context = _driver.cuCtxGetCurrent()
    if error or not int(context):
        from numba import cuda

        cuda.current_context()
        error, context = _driver.cuCtxGetCurrent()
    return int(context)


_CAPTURE_ACTIVE = _driver.CUstreamCaptureStatus.CU_STREAM_CAPTURE_STATUS_ACTIVE
_CAPTURE_INVALIDATED = _driver.CUstreamCaptureStatus.CU_STREAM_CAPTURE_STATUS_INVALIDATED
_CAPTURE_IMPLICIT = _driver.CUresult.CUDA_ERROR_STREAM_CAPTURE_IMPLICIT


def capture_status(stream):
    """Whether work queued on ``stream`` (a Numba stream, or 0: the legacy default stream)
    would be captured into a CUDA graph: None (not), "capturing" (``stream`` is
    capturing, or its capture was invalidated), or "implicit" (``stream`` is the legacy
    default stream while a blocking stream of the context is capturing: it cannot be used
    until that capture ends)."""
    error, status = _driver.cuStreamIsCapturing(stream.handle if stream.__class__ is Stream else _DEFAULT_STREAM)
    if error == _CAPTURE_IMPLICIT:
        return "implicit"
    if not error and status in (_CAPTURE_ACTIVE, _CAPTURE_INVALIDATED):
        return "capturing"
    return None


def unowned_view(buffer, offset, count, dtype):
    """``buffer[offset:offset + count * itemsize].view(dtype)`` of a contiguous uint8
    device array, made directly (a slice and a view cost as much as two launches) and
    owning nothing: it keeps no memory alive, so the caller keeps ``buffer``'s."""
    dtype = np.dtype(dtype)
    pointer = _driver.CUdeviceptr(_pointer(buffer) + offset)
    memory = MemoryPointer(buffer.gpu_data.context, pointer, count * dtype.itemsize)
    return DeviceArray((count,), (dtype.itemsize,), dtype, gpu_data=memory)


def zero(array, count, stream):
    """Queue ``array[:count] = 0`` on ``stream`` as a memset (``cuMemsetD8Async``: less host
    time than a kernel's launch); False where it did not (not a Numba device array or
    stream, or the driver refused: nothing was queued)."""
    handle = _handle(stream)
    if array.__class__ is not DeviceArray or handle is None:
        return False
    error, = _driver.cuMemsetD8Async(array_key(array)[1][4], 0, count * array.dtype.itemsize, handle)
    return not error


def prepared(kernel, griddim, blockdim, stream, args):
    """The launch ``launch`` just made, fixed: a function that queues it again (the same
    kernel, sizes, stream and arguments, packed once into a buffer of its own) in the
    current context, raising if the driver refuses; None where the launch was Numba's."""
    launches, key, values = _LAUNCHES.get(kernel), [], []
    if launches is None or not _flatten(args, key, values):
        return None
    packed = launches.get(tuple(key))
    grid = (griddim, 1, 1) if griddim.__class__ is int else _dim3(griddim)
    block = (blockdim, 1, 1) if blockdim.__class__ is int else _dim3(blockdim)
    handle = _handle(stream)
    if packed.__class__ is not _PackedLaunch or grid is None or block is None or handle is None:
        return None
    context = current_context()
    function = packed.functions.get(context) or packed.bind(context)
    buffer, slots, pointers = _parameter_buffer(packed.struct)
    try:
        packed.struct.pack_into(buffer, 0, *values)
    except (struct.error, OverflowError, TypeError):
        return None

    def again():
        error, = _driver.cuLaunchKernel(function, *grid, *block, 0, handle, pointers, 0)
        if error:
            raise RuntimeError(f"coop.device: a kernel launch failed again ({error!r})")

    again.kept = (buffer, slots)  # (alive as long as the function)
    return again


def prepared_zero(array, count, stream):
    """``zero(array, count, stream)`` fixed: a function queuing the memset again."""
    pointer, nbytes, handle = array_key(array)[1][4], count * array.dtype.itemsize, _handle(stream)

    def again():
        error, = _driver.cuMemsetD8Async(pointer, 0, nbytes, handle)
        if error:
            raise RuntimeError(f"coop.device: a memset failed again ({error!r})")

    return again
