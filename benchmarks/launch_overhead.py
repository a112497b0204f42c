"""Host time per launch: Numba's launch against coop.device's launcher (coop.device._host.launch),
and coop.device calls through each.

    python benchmarks/launch_overhead.py [--calls 2000] [--repeats 7] [--log2n 16] [--profile] [--jsonl PATH]

Rows (µs per call, the median of ``--repeats`` loops of ``--calls`` back-to-back calls):

- ``numba launch``: ``kernel[blocks, threads, 0](d_in, n, partials, done, initial, d_out)``, a kernel
  taking what coop.device.sum's takes (four int32/int64/uint32 device arrays, an int, an int64
  scalar) and doing nothing but return;
- ``coop launch``: the same through ``coop.device._host.launch`` (packed after its first call);
- ``raw cuLaunchKernel``: the same kernel through ``cuda.bindings.driver.cuLaunchKernel`` with
  its parameters packed once (the floor: the binding and the driver alone);
- ``coop.device.sum``, ``coop.device.inclusive_sum`` at n = 2^LOG2N int32 items (into int32), with
  coop.device's launcher (replayed from the third call on, the arrays being the same), the same
  never replayed (``not replayed``: as calls on new arrays each time), with ``temp_storage=``
  (replayed after the first call) and, for comparison, with Numba's launch swapped back in
  (``... (numba launch)``);
- ``cupy.sum``, ``cupy.cumsum`` (into a preallocated ``out``) if CuPy imports, and
  coop.device.inclusive_sum on CuPy arrays, with a CuPy ``temp_storage=`` and without.

Columns: ``host`` is the loop's wall time over its calls (each call returns once its work is
queued; if the GPU is slower than the host the queue fills and this becomes the GPU's time),
``gpu`` the time between CUDA events recorded on the default stream before and after the loop,
over its calls (with the host faster than the GPU: the GPU's time per call). A call is
host-bound where ``host`` is close to ``gpu``. ``--profile`` prints cProfile's top functions of
coop.device.sum's calls. Runs on the simulator too (tiny sizes; the raw row is skipped), as a
smoke test of the script.
"""

import argparse
import contextlib
import cProfile
import json
import pstats
import statistics
import sys
import time

import numpy as np

import coop
from coop._core.backend import SIMULATOR
from coop.device import _host
from numba import cuda


@cuda.jit
def _empty(d_in, n, partials, done, initial, d_out):
    if n < 0:  # (never: the launch alone is timed)
        d_out[0] = d_in[0] + partials[0] + done[0] + initial


def numba_launch(kernel, griddim, blockdim, stream, *args):
    kernel[griddim, blockdim, stream](*args)


def timed(call, calls, repeats):
    """(host µs, gpu µs) per call: medians over ``repeats`` loops of ``calls`` calls."""
    for _ in range(3):
        call()
    cuda.synchronize()
    start, end = cuda.event(), cuda.event()
    hosts, gpus = [], []
    for _ in range(repeats):
        start.record()
        t0 = time.perf_counter()
        for _ in range(calls):
            call()
        t1 = time.perf_counter()
        end.record()
        end.synchronize()
        hosts.append((t1 - t0) / calls * 1e6)
        gpus.append(0.0 if SIMULATOR else cuda.event_elapsed_time(start, end) * 1e3 / calls)
    return statistics.median(hosts), statistics.median(gpus)


def raw_launcher(kernel, args, blocks, threads):
    """A call launching ``kernel`` through cuLaunchKernel with parameters packed once."""
    from cuda.bindings import driver

    _host.launch(kernel, blocks, threads, 0, *args)
    _host.launch(kernel, blocks, threads, 0, *args)  # (packed: its buffer holds these parameters)
    from coop._core.compilers import numba_cuda_launch

    key, values = [], []
    assert numba_cuda_launch._flatten(args, key, values)
    packed = numba_cuda_launch._LAUNCHES[kernel][tuple(key)]
    context = numba_cuda_launch.current_context()
    function = packed.functions.get(context) or packed.bind(context)
    params, stream = packed.pointers, driver.CUstream(0)

    def call():
        error, = driver.cuLaunchKernel(function, blocks, 1, 1, threads, 1, 1, 0, stream, params, 0)
        assert not error

    return call


class _Forgetful(dict):
    def __setitem__(self, key, value):
        pass


@contextlib.contextmanager
def not_replayed():
    """coop.device's calls without temp_storage= never replayed inside the block: each is
    seen for the first time, as a call on new arrays is, and runs its host side."""
    saved, _host._OWN_PLANS = _host._OWN_PLANS, _Forgetful()
    try:
        yield
    finally:
        _host._OWN_PLANS = saved


@contextlib.contextmanager
def numba_launches():
    """coop.device's modules launching through Numba's launch (and so never replayed),
    inside the block."""
    saved = [(module, module.launch) for name, module in list(sys.modules.items())
             if name.startswith("coop.device.") and hasattr(module, "launch")]
    for module, _ in saved:
        module.launch = numba_launch
    try:
        with not_replayed():
            yield
    finally:
        for module, launch in saved:
            module.launch = launch


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=2 if SIMULATOR else 2000)
    parser.add_argument("--repeats", type=int, default=1 if SIMULATOR else 7)
    parser.add_argument("--log2n", type=int, default=8 if SIMULATOR else 16)
    parser.add_argument("--profile", action="store_true", help="cProfile coop.device.sum's calls")
    parser.add_argument("--jsonl", help="append the rows as JSON lines to this file")
    options = parser.parse_args(argv)
    calls, repeats, n = options.calls, options.repeats, 1 << options.log2n

    x = np.arange(n, dtype=np.int32) % 7
    d_x = cuda.to_device(x)
    d_total = cuda.device_array(1, np.int32)
    d_scan = cuda.device_array(n, np.int32)
    args = (d_x, n, cuda.device_array(64, np.int64), cuda.device_array(1, np.uint32), np.int64(0),
            cuda.device_array(1, np.int64))
    rows = []

    def row(name, call):
        host, gpu = timed(call, calls, repeats)
        rows.append(dict(name=name, host_us=round(host, 2), gpu_us=round(gpu, 2), calls=calls, repeats=repeats,
                         n=n, simulator=SIMULATOR))
        print(f"{name:40s} host {host:8.2f} µs   gpu {gpu:8.2f} µs", flush=True)

    blocks, threads = (1, 32) if SIMULATOR else (32, 256)
    row("numba launch", lambda: numba_launch(_empty, blocks, threads, 0, *args))
    row("coop launch", lambda: _host.launch(_empty, blocks, threads, 0, *args))
    if not SIMULATOR:
        row("raw cuLaunchKernel", raw_launcher(_empty, args, blocks, threads))
    # (without temp_storage=: replayed from the third call on, as the same arrays are passed)
    row(f"coop.device.sum 2^{options.log2n}", lambda: coop.device.sum(d_x, d_total))
    row(f"coop.device.inclusive_sum 2^{options.log2n}", lambda: coop.device.inclusive_sum(d_x, d_scan))
    with not_replayed():
        row(f"coop.device.sum 2^{options.log2n}, not replayed", lambda: coop.device.sum(d_x, d_total))
        row(f"coop.device.inclusive_sum 2^{options.log2n}, not replayed",
            lambda: coop.device.inclusive_sum(d_x, d_scan))
    # (temp_storage=: after the first call, each call replays its recorded launches)
    storage = cuda.device_array(max(coop.device.temp_storage_bytes(coop.device.sum, d_x, d_total),
                                    coop.device.temp_storage_bytes(coop.device.inclusive_sum, d_x, d_scan)), np.uint8)
    row(f"coop.device.sum 2^{options.log2n}, temp_storage=",
        lambda: coop.device.sum(d_x, d_total, temp_storage=storage))
    row(f"coop.device.inclusive_sum 2^{options.log2n}, temp_storage=",
        lambda: coop.device.inclusive_sum(d_x, d_scan, temp_storage=storage))
    with numba_launches():
        row(f"coop.device.sum 2^{options.log2n} (numba launch)", lambda: coop.device.sum(d_x, d_total))
        row(f"coop.device.inclusive_sum 2^{options.log2n} (numba launch)",
            lambda: coop.device.inclusive_sum(d_x, d_scan))
    assert d_total.copy_to_host()[0] == x.sum() % 2**32 and d_scan.copy_to_host()[-1] == x.sum()
    try:
        import cupy
    except ImportError:
        cupy = None
    if cupy is not None and not SIMULATOR:
        c_x = cupy.asarray(d_x)
        c_total, c_scan = cupy.empty((), np.int32), cupy.empty(n, np.int32)
        row(f"cupy.sum 2^{options.log2n}", lambda: cupy.sum(c_x, out=c_total))
        row(f"cupy.cumsum 2^{options.log2n}", lambda: cupy.cumsum(c_x, out=c_scan))
        c_storage = cupy.empty(storage.size, np.uint8)  # (coop on CuPy arrays, a CuPy buffer)
        row(f"coop.device.inclusive_sum 2^{options.log2n}, CuPy arrays, temp_storage=",
            lambda: coop.device.inclusive_sum(c_x, c_scan, temp_storage=c_storage))
        row(f"coop.device.inclusive_sum 2^{options.log2n}, CuPy arrays",
            lambda: coop.device.inclusive_sum(c_x, c_scan))
        assert int(c_scan[-1]) == x.sum()

    if options.profile:
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(calls):
            coop.device.sum(d_x, d_total)
        profile.disable()
        cuda.synchronize()
        pstats.Stats(profile).sort_stats("tottime").print_stats(20)
    if options.jsonl:
        device = "simulator" if SIMULATOR else cuda.get_current_device().name
        with open(options.jsonl, "a") as out:
            for r in rows:
                out.write(json.dumps(dict(r, device=str(device))) + "\n")
    return rows


if __name__ == "__main__":
    main()
