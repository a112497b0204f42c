"""coop.device's launcher (``coop.device._host.launch``, numba-cuda's launch or
``coop._core.compilers.numba_cuda_launch``'s): its packed launches give what
Numba's own launches give, with every argument kind coop.device passes, and its packed
parameters are byte for byte what numba-cuda's ``_Kernel._prepare_args`` passes, in the
number and sizes of the kernel's parameters (Numba's argument packer).

Without a GPU, ``test_packing_offline`` checks the packing and the launcher's decisions in
a subprocess on Numba's GPU backend (no simulator), with stand-in arrays (real
``DeviceNDArray``s over made-up pointers), a stand-in dispatcher and ``cuLaunchKernel``
replaced by a recorder that reads the parameters back through the pointers it is given.
On a GPU, the other tests launch real kernels both ways and compare.
"""

import ctypes
import functools
import pathlib
import struct
import subprocess
import sys
import threading
import types

import numpy as np
import pytest
from numba import cuda

import coop
from coop.device import _host

from codegen_toolchain import compile_env
from helpers import ON_GPU


def launcher():
    """The packed launcher's module (imported on Numba's GPU backend only)."""
    from coop._core.compilers import numba_cuda_launch

    return numba_cuda_launch

HERE = pathlib.Path(__file__).resolve().parent
gpu_only = pytest.mark.skipif(not ON_GPU, reason="launches kernels on a GPU")


# -- the reference: numba-cuda's own flattening, and the kernel's parameter list --------


def numba_parameter_bytes(args):
    """Each kernel parameter's bytes as numba-cuda 0.30 passes them: the values of
    ``_Kernel._prepare_args`` laid out as cuda.core's ``ParamHolder`` lays them (a Python
    int, bools included: an intptr_t; a float: a double; a NumPy or ctypes scalar: its own
    bytes)."""
    from numba.cuda.dispatcher import _Kernel
    from numba.cuda.typing.typeof import Purpose, typeof

    stand_in = types.SimpleNamespace(extensions=[])
    stand_in._prepare_args = functools.partial(_Kernel._prepare_args, stand_in)  # (tuples recurse)
    values = []
    for arg in args:
        _Kernel._prepare_args(stand_in, typeof(arg, Purpose.argument), arg, 0, [], values)
    encoded = []
    for value in values:
        if isinstance(value, int):
            encoded.append(struct.pack("<q", value))
        elif isinstance(value, float):
            encoded.append(struct.pack("<d", value))
        elif isinstance(value, np.generic):
            encoded.append(value.tobytes())
        elif isinstance(value, ctypes._SimpleCData):
            encoded.append(bytes(value))
        else:
            raise TypeError(f"unexpected kernel argument {value!r}")
    return encoded


def parameter_sizes(args):
    """The bytes of each parameter of a kernel compiled for ``args``' types (Numba's
    argument packer: the kernel's own parameter list)."""
    from numba.cuda.descriptor import cuda_target
    from numba.cuda.typing.typeof import Purpose, typeof

    context = cuda_target.target_context
    argtypes = [typeof(arg, Purpose.argument) for arg in args]
    return [context.get_abi_sizeof(t) for t in context.get_arg_packer(argtypes).argument_types]


def packed_parameter_bytes(packed, sizes):
    """The parameters a packed launch last passed, read through its ``kernelParams``."""
    assert packed.struct.size == 8 * len(sizes), "one 8-byte slot per kernel parameter"
    if not sizes:
        return []
    pointers = (ctypes.c_void_p * len(sizes)).from_address(packed.pointers)
    return [ctypes.string_at(pointers[i], size) for i, size in enumerate(sizes)]


def assert_same_parameters(packed, args):
    sizes = parameter_sizes(args)
    expected = numba_parameter_bytes(args)
    got = packed_parameter_bytes(packed, sizes)
    assert len(expected) == len(sizes), f"numba-cuda passes {len(expected)} parameters, the kernel has {len(sizes)}"
    for i, (size, want, have) in enumerate(zip(sizes, expected, got)):
        assert len(want) >= size and want[:size] == have, f"parameter {i}: {have.hex()} != numba's {want[:size].hex()}"


# -- without a GPU: the packing and the decisions, on stand-ins --------------------------


def _offline_checks():  # noqa: C901  (one scenario after another)
    """Run in a subprocess with NUMBA_ENABLE_CUDASIM=0 (see test_packing_offline)."""
    from cuda.bindings import driver as binding
    from numba.cuda.cudadrv import driver
    from numba.cuda.cudadrv.devicearray import DeviceNDArray
    from numba.cuda.typing.typeof import Purpose, typeof

    assert not coop._core.backend.SIMULATOR
    addresses = iter(range(0x7F0000000000, 0x7F1000000000, 0x100000))

    def array(shape, dtype, strides=None):
        dtype = np.dtype(dtype)
        shape = (shape,) if isinstance(shape, int) else shape
        if strides is None:
            strides = tuple(int(np.prod(shape[k + 1:])) * dtype.itemsize for k in range(len(shape)))
        nbytes = max(1, sum((n - 1) * s for n, s in zip(shape, strides)) + dtype.itemsize)
        memory = driver.MemoryPointer(context=None, pointer=binding.CUdeviceptr(next(addresses)), size=nbytes)
        return DeviceNDArray(shape, strides, dtype, gpu_data=memory)

    class Recorder:
        """``cuda.bindings.driver`` with cuCtxGetCurrent, cuStreamIsCapturing and cuLaunchKernel made up."""

        CUfunction = binding.CUfunction

        def __init__(self):
            self.context, self.error, self.launches = 0xC0DE, 0, []

        def cuCtxGetCurrent(self):
            return binding.CUresult.CUDA_SUCCESS, binding.CUcontext(self.context)

        def cuStreamIsCapturing(self, stream):  # (launch_stream's question: never capturing here)
            return binding.CUresult.CUDA_SUCCESS, binding.CUstreamCaptureStatus.CU_STREAM_CAPTURE_STATUS_NONE

        def cuLaunchKernel(self, f, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
            assert isinstance(f, binding.CUfunction) and shared == 0 and extra == 0 and isinstance(params, int)
            self.launches.append(dict(function=int(f), grid=(gx, gy, gz), block=(bx, by, bz), stream=int(stream),
                                      params=params))
            return (binding.CUresult(self.error),)

    class Overload:
        debug = cooperative = launch_config_sensitive = False
        extensions = []

        def __init__(self, handle):
            self.library = types.SimpleNamespace(
                get_cufunc=lambda: types.SimpleNamespace(handle=binding.CUkernel(handle)))

    class Kernel:
        """A dispatcher's surface as the launcher uses it; its launch records."""

        _launch_config_sensitive = False

        def __init__(self):
            self.overloads, self.launches = {}, []

        def typeof_pyval(self, value):
            return typeof(value, Purpose.argument)

        def __getitem__(self, config):
            def run(*args):
                argtypes = tuple(self.typeof_pyval(arg) for arg in args)
                self.overloads.setdefault(argtypes, Overload(0xF00 + len(self.overloads)))
                self.launches.append((config, args))
            return run

    recorder = Recorder()
    launcher()._driver = recorder

    def packed_for(kernel, args):
        key, values = [], []
        assert launcher()._flatten(args, key, values)
        return launcher()._LAUNCHES[kernel][tuple(key)]

    # every argument kind coop.device passes, and then some
    u64, u32, i32, f32, f64 = (array(1000, t) for t in (np.uint64, np.uint32, np.int32, np.float32, np.float64))
    kinds = [
        (u64, 1000, u32, i32, f32, f64),
        (np.uint64(2**64 - 1), np.uint32(4_000_000_000), np.int32(-5), np.float32(1.5), np.float64(-2.25),
         np.int64(-2**62), np.int8(-7), np.uint8(200), np.int16(-300), np.uint16(60000), np.float16(0.333)),
        (True, False, np.bool_(True), np.bool_(False), 7, -(2**63), 2**63 - 1, 0.1, float("inf")),
        ((u32, f32), (np.int32(3), np.float64(2.5)), ((np.uint32(1),), True), (i32, (f64, np.int64(9)))),
        (array((8, 6), np.float32), array((4, 5), np.int64, strides=(96, 8)), array(10, np.int16, strides=(4,)),
         array((4, 5), np.float64, strides=(8, 32))),  # (C, strided 'A' 2-D, strided 1-D, F layouts)
        (array(1, np.int32), array(1, np.int32, strides=(0,)), ()),  # (one item: C; a zero stride: 'A')
        # what coop.device's kernels take (reduce, scan, select, histogram, segmented_reduce, fill_zero)
        (i32, 1000, i32, array(1, np.uint32), np.int32(0), i32),
        (f32, f64, 1000, array(33, np.uint64), f64, f64, np.uint32(7), np.float64(0)),
        (i32, array(1000, np.bool_), i32, array(1, np.int64), 1000, array(5, np.uint64), array(4, np.int32),
         array(4, np.int32), np.uint32(3)),
        (f32, 1000, u32, np.float32(0), np.float32(25.6)),
        ((i32, f32), 1000, (i32, f32), array(1, np.uint32), (np.int32(0), np.float32(0)), (i32, f32)),
    ]
    for number, args in enumerate(kinds):
        kernel = Kernel()
        _host.launch(kernel, 4, 64, 0, *args)  # (Numba's, which types and compiles)
        assert len(kernel.launches) == 1 and not recorder.launches
        _host.launch(kernel, (4, 2), (32, 2, 1), 0, *args)
        assert len(kernel.launches) == 1, f"case {number}: not packed"
        packed = packed_for(kernel, args)
        assert packed.launches == 1
        launch = recorder.launches.pop()
        assert launch["grid"] == (4, 2, 1) and launch["block"] == (32, 2, 1) and launch["stream"] == 0
        assert launch["function"] == 0xF00 and launch["params"] == packed.pointers
        assert_same_parameters(packed, args)

    # the key follows the types: a new dtype, layout or scalar class is Numba's launch first
    kernel = Kernel()
    every_other = array(500, np.int32, strides=(8,))  # (i32[::2]: 'A' layout)
    for args in [(i32, 5), (i32, 5), (u32, 5), (u32, np.int64(5)), (u32, np.int64(6)), (every_other, 5),
                 (every_other, 6)]:
        _host.launch(kernel, 1, 32, 0, *args)
    # (Numba's: the first of each key; (u32, 5) and (u32, np.int64(5)) type alike but key apart)
    assert len(kernel.launches) == 4 and len(kernel.overloads) == 3 and len(recorder.launches) == 3
    recorder.launches.clear()

    # Numba's launch, each time: an argument of another kind, sizes or streams it does not
    # take, an int past int64, no current context, a failed launch, an unpackable type
    kernel = Kernel()
    host = np.zeros(4, np.int32)
    for _ in range(3):
        _host.launch(kernel, 1, 32, 0, i32, host)
    assert len(kernel.launches) == 3 and not recorder.launches
    kernel = Kernel()
    _host.launch(kernel, 1, 32, 0, i32, 5)
    for griddim, blockdim in [(0, 32), (1, -1), (np.int64(2), 32), ((1, 2, 3, 4), 1), ([1], 32), (1.0, 32)]:
        _host.launch(kernel, griddim, blockdim, 0, i32, 5)
    _host.launch(kernel, 1, 32, object(), i32, 5)
    _host.launch(kernel, 1, 32, 0, i32, 2**63)
    recorder.context = 0
    _host.launch(kernel, 1, 32, 0, i32, 5)
    recorder.context, recorder.error = 0xC0DE, int(binding.CUresult.CUDA_ERROR_INVALID_VALUE)
    _host.launch(kernel, 1, 32, 0, i32, 5)
    assert len(kernel.launches) == 11 and len(recorder.launches) == 1  # (the failed one)
    recorder.error = 0
    recorder.launches.clear()
    for odd in (np.complex64(1), np.datetime64(1, "s"), types.SimpleNamespace(), [1, 2]):
        kernel = Kernel()
        for _ in range(2):
            try:
                _host.launch(kernel, 1, 32, 0, i32, odd)
            except Exception:  # noqa: BLE001  (typeof may refuse it: no matter)
                pass
    assert not recorder.launches
    kernel = Kernel()
    _host.launch(kernel, 1, 32, 0, i32, 2**63)  # (typed uint64 by Numba: not packed, ever)
    _host.launch(kernel, 1, 32, 0, i32, 5)
    assert len(kernel.launches) == 2 and not recorder.launches
    for attribute in ("debug", "cooperative", "launch_config_sensitive", "extensions"):
        kernel = Kernel()
        _host.launch(kernel, 1, 32, 0, i32, 5)
        setattr(next(iter(kernel.overloads.values())), attribute, [1] if attribute == "extensions" else True)
        kernel2 = Kernel()
        kernel2.overloads = kernel.overloads
        _host.launch(kernel2, 1, 32, 0, i32, 5)
        _host.launch(kernel2, 1, 32, 0, i32, 5)
        assert len(kernel2.launches) == 2 and not recorder.launches, attribute
    kernel = Kernel()
    kernel._launch_config_sensitive = True  # (the dispatcher: Numba picks one per launch configuration)
    for _ in range(2):
        _host.launch(kernel, 1, 32, 0, i32, 5)
    assert len(kernel.launches) == 2 and not recorder.launches

    # streams: 0, None, a Numba stream (its handle), an external one (launch_stream's, kept per handle)
    kernel = Kernel()
    _host.launch(kernel, 1, 32, 0, i32, 5)
    numba_stream = driver.Stream(binding.CUstream(0x5151))
    for stream, handle in [(0, 0), (None, 0), (numba_stream, 0x5151)]:
        _host.launch(kernel, 1, 32, stream, i32, 5)
        assert recorder.launches.pop()["stream"] == handle
    external_stream = cuda.external_stream  # (it needs a context: made up as Numba makes it)
    cuda.external_stream = lambda ptr: driver.Stream(binding.CUstream(ptr), external=True)
    try:
        torch_like = types.SimpleNamespace(cuda_stream=0x7777)
        cupy_like = types.SimpleNamespace(ptr=0x8888)
        streams = [_host.launch_stream(s) for s in (torch_like, cupy_like, 0x9999, torch_like)]
        assert streams[0] is streams[3] and [int(s.handle) for s in streams] == [0x7777, 0x8888, 0x9999, 0x7777]
        _host.launch(kernel, 1, 32, streams[1], i32, 5)
        assert recorder.launches.pop()["stream"] == 0x8888
    finally:
        cuda.external_stream = external_stream
    assert _host.launch_stream(None) == 0 and _host.launch_stream(0) == 0
    assert _host.launch_stream(numba_stream) is numba_stream

    # another current context: the kernel's handle is taken again (Numba's get_cufunc)
    overload = next(iter(kernel.overloads.values()))
    overload.library = types.SimpleNamespace(get_cufunc=lambda: types.SimpleNamespace(handle=binding.CUkernel(0xBEE)))
    _host.launch(kernel, 1, 32, 0, i32, 5)
    assert recorder.launches.pop()["function"] == 0xF00  # (same context: the handle it had)
    recorder.context = 0xD00D
    _host.launch(kernel, 1, 32, 0, i32, 5)
    assert recorder.launches.pop()["function"] == 0xBEE
    recorder.context = 0xC0DE  # (back on the first: its handle kept, not taken again)
    _host.launch(kernel, 1, 32, 0, i32, 5)
    assert recorder.launches.pop()["function"] == 0xF00
    recorder.context = 0xD00D
    _host.launch(kernel, 1, 32, 0, i32, 5)
    assert recorder.launches.pop()["function"] == 0xBEE

    # concurrent launches of one packed launch: each passes its own values
    def launch_many(value):
        for _ in range(200):
            _host.launch(kernel, 1, 32, 0, i32, value)

    seen = []
    original = recorder.cuLaunchKernel

    def checking(*args):  # (the value parameter, after the array's seven)
        seen.append(ctypes.c_int64.from_address((ctypes.c_void_p * 8).from_address(args[9])[7]).value)
        return original(*args)

    recorder.cuLaunchKernel = checking
    threads = [threading.Thread(target=launch_many, args=(value,)) for value in (11, 22, 33)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(set(seen)) == [11, 22, 33] and len(seen) == 600

    # a launch fixed for replay (prepared): the same launch, its parameters in a buffer of its
    # own (the shared one repacked after it does not change it); and a fixed memset
    seen.clear()
    recorder.context = 0xC0DE
    _host.launch(kernel, (3, 2), 64, numba_stream, i32, 44)
    again = launcher().prepared(kernel, (3, 2), 64, numba_stream, (i32, 44))
    _host.launch(kernel, 1, 32, 0, i32, 55)
    recorder.launches.clear()
    for _ in range(2):
        again()
        fixed = recorder.launches.pop()
        assert fixed["grid"] == (3, 2, 1) and fixed["block"] == (64, 1, 1) and fixed["stream"] == 0x5151
        assert fixed["function"] == 0xF00 and fixed["params"] != packed_for(kernel, (i32, 5)).pointers
    assert seen[-2:] == [44, 44]
    assert launcher().prepared(kernel, 1, 32, object(), (i32, 5)) is None  # (a stream it does not take)
    memsets = []
    recorder.cuMemsetD8Async = lambda *args: memsets.append(args) or (binding.CUresult.CUDA_SUCCESS,)
    launcher().prepared_zero(u32, 10, 0)()
    assert memsets == [(launcher().array_key(u32)[1][4], 0, 40, launcher()._DEFAULT_STREAM)]
    print("offline launcher checks passed")


def _offline_env():
    return compile_env()  # Numba's GPU backend (no GPU needed: nothing is launched)


def test_packing_offline():
    run = subprocess.run([sys.executable, "-c", "import test_device_launch as t; t._offline_checks()"],
                         cwd=HERE.parent, env=_offline_env(), capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-6000:]
    assert "offline launcher checks passed" in run.stdout


# -- on a GPU: real kernels, launched both ways -------------------------------------------


def packed_launches():
    """Packed launches so far, over every kernel."""
    return sum(p.launches for launches in launcher()._LAUNCHES.values() for p in launches.values()
               if isinstance(p, launcher()._PackedLaunch))


def packed_for(kernel, args):
    key, values = [], []
    assert launcher()._flatten(args, key, values)
    packed = launcher()._LAUNCHES[kernel].get(tuple(key))
    assert isinstance(packed, launcher()._PackedLaunch), f"no packed launch for {kernel}: {packed!r}"
    return packed


def normal_launch(kernel, griddim, blockdim, stream, *args):
    kernel[griddim, blockdim, stream](*args)


@cuda.jit
def _echo_arrays(out, a, b, c, d, e, n):
    """Every item of five arrays, in float64, into ``out`` (five rows of ``n``)."""
    i = cuda.grid(1)
    if i < n:
        out[0 * n + i] = a[i]
        out[1 * n + i] = b[i]
        out[2 * n + i] = c[i]
        out[3 * n + i] = d[i]
        out[4 * n + i] = e[i]


@cuda.jit
def _echo_scalars(bits, values, u64, u32, i32, f32, f64, i64, i8, u8, flag, np_flag, py_int, py_float, py_bool):
    if cuda.grid(1) == 0:
        bits[0], bits[1], bits[2], bits[3] = u64, u32, i32, i64
        bits[4], bits[5], bits[6] = i8, u8, py_int
        bits[7], bits[8], bits[9] = 1 if flag else 0, 1 if np_flag else 0, 1 if py_bool else 0
        values[0], values[1], values[2] = f32, f64, py_float


@cuda.jit
def _echo_tuples(bits, values, arrays, scalars, nested):
    if cuda.grid(1) == 0:
        a, b = arrays
        values[0], values[1] = a[3], b[4]
        x, y = scalars
        bits[0], values[2] = x, y
        (inner,), flag = nested
        bits[1], bits[2] = inner, 1 if flag else 0


@cuda.jit
def _echo_strided(out, matrix, column):
    """A strided 2-D array ('A' layout) and a strided 1-D one, summed by row."""
    i = cuda.grid(1)
    if i < matrix.shape[0]:
        total = 0.0
        for j in range(matrix.shape[1]):
            total += matrix[i, j]
        out[i] = total + column[i] + matrix.strides[0] + column.strides[0]


@cuda.jit
def _echo_half(values, h):
    if cuda.grid(1) == 0:
        values[0] = np.float64(np.float32(h))


def _both_ways(kernel, make_outputs, griddim, blockdim, stream, *inputs):
    """The outputs of Numba's launch and of two ``launch`` calls (Numba's, then packed);
    checks that the second was packed and passed Numba's bytes."""
    results = []
    for how in (normal_launch, _host.launch, _host.launch):
        outputs = make_outputs()
        before = packed_launches()
        how(kernel, griddim, blockdim, stream, *outputs, *inputs)
        cuda.synchronize()
        results.append([o.copy_to_host() for o in outputs])
        packed = packed_launches() - before
    assert packed == 1, "the second launch() was not packed"
    assert_same_parameters(packed_for(kernel, (*outputs, *inputs)), (*outputs, *inputs))
    for name, normal, fast in zip(range(len(results[0])), results[0], results[2]):
        np.testing.assert_array_equal(fast, normal, err_msg=f"output {name}")
        np.testing.assert_array_equal(results[1][name], normal, err_msg=f"output {name} (Numba's via launch)")
    return results[0]


@gpu_only
def test_array_kinds():
    n = 1000
    rng = np.random.default_rng(0)
    inputs = [cuda.to_device(rng.integers(0, 1000, n).astype(t)) for t in (np.uint64, np.uint32, np.int32)]
    inputs += [cuda.to_device(rng.random(n).astype(t)) for t in (np.float32, np.float64)]
    out = _both_ways(_echo_arrays, lambda: [cuda.device_array(5 * n, np.float64)], 4, 256, 0, *inputs, n)[0]
    np.testing.assert_array_equal(out, np.concatenate([x.copy_to_host().astype(np.float64) for x in inputs]))


@gpu_only
def test_scalar_kinds():
    # (u64, u32, i32, f32, f64, i64, i8, u8, flag, np_flag, py_int, py_float, py_bool)
    args = (np.uint64(2**64 - 1), np.uint32(4_000_000_000), np.int32(-5), np.float32(1.5), np.float64(-2.25),
            np.int64(-2**62), np.int8(-7), np.uint8(200), True, np.bool_(True), 2**40, 0.1, False)
    bits, values = _both_ways(_echo_scalars, lambda: [cuda.device_array(10, np.uint64),
                                                      cuda.device_array(3, np.float64)], 1, 32, 0, *args)
    assert bits[0] == 2**64 - 1 and bits[1] == 4_000_000_000 and bits[5] == 200 and bits[6] == 2**40
    assert list(bits[7:]) == [1, 1, 0] and list(values) == [1.5, -2.25, 0.1]


@gpu_only
def test_tuple_kinds():
    a, b = cuda.to_device(np.arange(8, dtype=np.int32)), cuda.to_device(np.arange(8, dtype=np.float32) / 2)
    bits, values = _both_ways(_echo_tuples, lambda: [cuda.device_array(3, np.uint64), cuda.device_array(3, np.float64)],
                              1, 32, 0, (a, b), (np.uint32(7), np.float64(2.5)), ((np.uint32(9),), True))
    assert list(bits) == [7, 9, 1] and list(values) == [3.0, 2.0, 2.5]


@gpu_only
def test_strided_and_half():
    matrix = cuda.to_device(np.arange(48, dtype=np.float64).reshape(8, 6))[::2, 1:]
    column = cuda.to_device(np.arange(8, dtype=np.float32))[::2]
    out = _both_ways(_echo_strided, lambda: [cuda.device_array(4, np.float64)], 1, 32, 0, matrix, column)[0]
    host = np.arange(48, dtype=np.float64).reshape(8, 6)[::2, 1:]
    np.testing.assert_array_equal(out, host.sum(axis=1) + np.arange(8)[::2] + 96 + 8)
    values = _both_ways(_echo_half, lambda: [cuda.device_array(1, np.float64)], 1, 32, 0, np.float16(0.333))[0]
    assert values[0] == np.float64(np.float16(0.333))


@gpu_only
@pytest.mark.parametrize("library", ["cupy", "torch"])
def test_cupy_and_torch(library):
    module = pytest.importorskip(library)
    n = 4097
    x = np.random.default_rng(1).random(n)
    if library == "cupy":
        stream = module.cuda.Stream(non_blocking=True)
        source = module.asarray(x)

        def output():
            out = module.zeros(5 * n, np.float64)
            module.cuda.Device().synchronize()
            return out, out.get
    else:
        stream = module.cuda.Stream()
        source = module.as_tensor(x, device="cuda")

        def output():
            out = module.zeros(5 * n, dtype=module.float64, device="cuda")
            module.cuda.synchronize()
            return out, lambda: out.cpu().numpy()
    numba_stream = _host.launch_stream(stream)
    results = []
    for how in (normal_launch, _host.launch, _host.launch):
        out, to_host = output()
        before = packed_launches()
        # (converted each call, as coop.device's functions convert them)
        arrays = [_host.device_array("test", "x", source) for _ in range(5)]
        how(_echo_arrays, 17, 256, numba_stream, _host.device_array("test", "out", out), *arrays, n)
        stream.synchronize()
        results.append(np.asarray(to_host()))
    assert packed_launches() - before == 1
    for result in results:
        np.testing.assert_array_equal(result, np.tile(x, 5))
    assert _host.launch_stream(stream) is numba_stream


@gpu_only
def test_streams():
    x = cuda.to_device(np.arange(100, dtype=np.float64))
    owned = cuda.stream()
    streams = [0, None, owned, cuda.external_stream(int(owned.handle)), cuda.default_stream(),
               cuda.per_thread_default_stream(), cuda.legacy_default_stream()]
    for stream in streams:
        out = cuda.device_array(500, np.float64)
        before = packed_launches()
        for _ in range(2):
            _host.launch(_echo_arrays, 1, 128, stream, out, x, x, x, x, x, 100)
        cuda.synchronize()
        assert packed_launches() - before >= 1, stream
        np.testing.assert_array_equal(out.copy_to_host(), np.tile(np.arange(100.0), 5))


@gpu_only
def test_fallbacks_and_errors():
    # a host array: Numba's launch (copy in, copy back), every time
    host = np.zeros(500, np.float64)
    x = cuda.to_device(np.arange(100, dtype=np.float64))
    before = packed_launches()
    for _ in range(2):
        _host.launch(_echo_arrays, 1, 128, 0, host, x, x, x, x, x, 100)
    assert packed_launches() == before
    np.testing.assert_array_equal(host, np.tile(np.arange(100.0), 5))
    # bad sizes: Numba's launch, and its error
    out = cuda.device_array(500, np.float64)
    _host.launch(_echo_arrays, 1, 128, 0, out, x, x, x, x, x, 100)
    for griddim, blockdim in [(0, 32), (1, 4096), (2**40, 32), ((2**31, 1), 32), (1, (32, 0))]:
        with pytest.raises(Exception) as numba_error:
            _echo_arrays[griddim, blockdim, 0](out, x, x, x, x, x, 100)
        with pytest.raises(Exception) as launch_error:
            _host.launch(_echo_arrays, griddim, blockdim, 0, out, x, x, x, x, x, 100)
        assert type(launch_error.value) is type(numba_error.value), (griddim, blockdim)


@gpu_only
def test_new_thread():
    """A thread with no current context: Numba's launch makes it current, then packed."""
    x = cuda.to_device(np.arange(100, dtype=np.float64))
    out = cuda.device_array(500, np.float64)
    _host.launch(_echo_arrays, 1, 128, 0, out, x, x, x, x, x, 100)
    counts, errors = [], []

    def work():
        try:
            before = packed_launches()
            for _ in range(3):
                _host.launch(_echo_arrays, 1, 128, 0, out, x, x, x, x, x, 100)
            cuda.synchronize()
            counts.append(packed_launches() - before)
        except Exception as error:  # noqa: BLE001
            errors.append(error)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert not errors and counts[0] >= 2
    np.testing.assert_array_equal(out.copy_to_host(), np.tile(np.arange(100.0), 5))


@gpu_only
def test_device_functions_packed():
    """coop.device's calls launch packed after their first call; repeated with the same
    arrays, from their third they queue those launches again without the launcher."""
    x = np.arange(1 << 16, dtype=np.int32) % 7
    d_x = cuda.to_device(x)
    d_total = cuda.device_array(1, np.int64)
    d_scan = cuda.device_array(x.size, np.int32)
    packed = []
    for call in range(4):
        d_total.copy_to_device(np.array([-1], np.int64))
        d_scan.copy_to_device(np.full(x.size, -1, np.int32))
        before = packed_launches()
        coop.device.sum(d_x, d_total)
        coop.device.inclusive_sum(d_x, d_scan)
        packed.append(packed_launches() - before)
        assert d_total.copy_to_host()[0] == x.sum(), f"call {call}"
        np.testing.assert_array_equal(d_scan.copy_to_host(), np.cumsum(x).astype(np.int32), err_msg=f"call {call}")
    assert packed[1] >= 2 and packed[2] == packed[3] == 0, packed
    d_counts = cuda.device_array(7, np.int32)
    threes = lambda v: v == 3  # noqa: E731  (one function: compiled once)
    for call in range(2):
        coop.device.exclusive_scan(d_x, d_scan, coop.ops.add, 0)
        coop.device.histogram_even(d_x, d_counts, 7, 0, 7)
        coop.device.segmented_reduce(d_x, d_total, cuda.to_device(np.array([0, x.size], np.int64)), coop.ops.add, 0)
        count = coop.device.select(d_x, d_scan, threes)
    assert count == (x == 3).sum() and d_total.copy_to_host()[0] == x.sum()
    np.testing.assert_array_equal(d_counts.copy_to_host(), np.bincount(x, minlength=7))
