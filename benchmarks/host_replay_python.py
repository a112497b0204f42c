"""The Python side of a replayed coop.device call, without a GPU.

    python benchmarks/host_replay_python.py [--calls 20000] [--profile]

A coop.device call whose arguments were seen before replays the launches an earlier run
recorded (``coop.device._host``'s ``_Plan``), on the caller's ``temp_storage=`` or, without
it, on the stream's own buffer. This measures what such a call costs in Python alone:
the driver's functions it calls (``cuCtxGetCurrent``, ``cuStreamIsCapturing``,
``cuLaunchKernel``) are replaced by functions returning success, the device arrays are
Numba device arrays over made-up addresses (nothing is allocated, nothing launched), and
each algorithm's plan is made by hand (the recorded steps its real call makes: a launch or
a memset each). So it runs on a machine with no GPU
(numba-cuda's compiled path, not the simulator), and tracks the part of issue 26's host
time that is coop's own; the driver's part (about 0.2 µs, 0.35 µs and a few µs for the
three on an H200's host) comes on top. ``benchmarks/launch_overhead.py`` and
``benchmarks/device.py`` measure whole calls on a GPU.

Prints µs per call (the best of 5 loops of ``--calls`` calls); ``--profile`` prints
cProfile's top functions of the first algorithm's calls.
"""

import argparse
import ctypes
import itertools
import os
import time
import types

os.environ["NUMBA_ENABLE_CUDASIM"] = "0"

import numpy as np  # noqa: E402

import coop  # noqa: E402
from coop._core.compilers import numba_cuda_launch  # noqa: E402
from coop.device import _host  # noqa: E402
from cuda.bindings import driver  # noqa: E402
from numba.cuda.cudadrv.devicearray import DeviceNDArray  # noqa: E402

SUCCESS = driver.CUresult.CUDA_SUCCESS
NOT_CAPTURING = driver.CUstreamCaptureStatus.CU_STREAM_CAPTURE_STATUS_NONE
CONTEXT = driver.CUcontext(0x1000)


class _StubbedDriver(types.SimpleNamespace):
    """cuda.bindings.driver with the functions a replay calls answering success."""

    def __getattr__(self, name):
        return getattr(driver, name)


def stub_driver():
    numba_cuda_launch._driver = _StubbedDriver(
        cuCtxGetCurrent=lambda: (SUCCESS, CONTEXT),
        cuStreamIsCapturing=lambda stream: (SUCCESS, NOT_CAPTURING),
        cuLaunchKernel=lambda *args: (SUCCESS,),
        cuMemsetD8Async=lambda *args: (SUCCESS,))


class _Memory:
    """What a DeviceNDArray asks of its memory, at a made-up address."""

    def __init__(self, address, size):
        self.device_ctypes_pointer = ctypes.c_void_p(address)
        self.handle = driver.CUdeviceptr(address)
        self.size = size
        self.owner = self

    @property
    def device_pointer_value(self):
        return self.device_ctypes_pointer.value


_addresses = itertools.count(0x7F0000000000, 1 << 32)  # (4 GiB apart: no two arrays overlap)


def device_array(n, dtype):
    dtype = np.dtype(dtype)
    return DeviceNDArray((n,), (dtype.itemsize,), dtype, gpu_data=_Memory(next(_addresses), n * dtype.itemsize))


def recorded_launch():
    """A step as ``numba_cuda_launch.prepared`` makes it (through the stubbed driver)."""
    function, grid, block, stream, parameters = driver.CUfunction(0x55), (512, 1, 1), (256, 1, 1), 0, 0x7F00FF000000

    def again():
        error, = numba_cuda_launch._driver.cuLaunchKernel(function, *grid, *block, 0, stream, parameters, 0)
        if error:
            raise RuntimeError(error)

    return again


def replayed_call(name, steps, n, own):
    """``(function, arguments, storage)``: coop.device.NAME on int32 arrays of ``n`` items
    (select_flagged: uint8 flags and an int64 count) with a plan of ``steps`` recorded
    launches on ``storage``, or (``own``) on the default stream's own buffer, ``storage``
    None."""
    function = getattr(coop.device, name)
    if name == "select_flagged":
        args = (device_array(n, np.int32), device_array(n, np.uint8), device_array(n, np.int32),
                device_array(1, np.int64))
    else:
        args = (device_array(n, np.int32), device_array(1 if name == "sum" else n, np.int32))
    buffer = device_array(1 << 16, np.uint8)
    plan = _host._Plan(buffer.nbytes, {}, [recorded_launch() for _ in range(steps)], (0,))
    if own:
        plan.owner, plan.buffer = ("default stream", _host._thread_context()), buffer
        _host._OWN_BUFFERS[plan.owner] = buffer
        _host._OWN_PLANS[_host._plan_key(function, args, {}, None, _host._thread_context())] = plan
        return function, args, None
    _host._PLANS[_host._plan_key(function, args, {}, buffer, _host._thread_context())] = plan
    return function, args, buffer


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--log2n", type=int, default=16)
    parser.add_argument("--profile", action="store_true")
    options = parser.parse_args()
    stub_driver()
    # (the steps each call's plan records, as counted on the simulator at 2^12 items: a
    # launch or a memset each, which cost the same here)
    cases = [("sum", 2), ("exclusive_sum", 2), ("inclusive_sum", 2), ("select_flagged", 2)]
    for (name, steps), own in itertools.product(cases, (False, True)):
        function, args, storage = replayed_call(name, steps, 1 << options.log2n, own)
        best = float("inf")
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(options.calls):
                function(*args, temp_storage=storage)
            best = min(best, (time.perf_counter() - start) / options.calls)
        how = "without temp_storage=" if own else "with temp_storage="
        print(f"{name:16s} {how:22s} {steps} steps  {best * 1e6:6.2f} µs a replayed call (Python only)")
        if options.profile and name == cases[0][0] and not own:
            import cProfile
            import pstats

            profile = cProfile.Profile()
            profile.enable()
            for _ in range(options.calls):
                function(*args, temp_storage=storage)
            profile.disable()
            pstats.Stats(profile).sort_stats("tottime").print_stats(12)


if __name__ == "__main__":
    main()
