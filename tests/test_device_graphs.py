"""coop.device in CUDA graphs and on several GPUs (GPU only).

- Every function called with ``temp_storage=`` on a capturing stream is captured in a CUDA
  graph (cuda.bindings' stream capture on a Numba stream; PyTorch's ``torch.cuda.graph`` and
  CuPy's ``Stream.begin_capture`` where they import), and each replay, on new input
  contents, gives what a plain call gives.
- Calls a graph cannot hold are refused with errors naming what to pass: without
  ``temp_storage=``, returning a count (waiting for the GPU), on the default stream while
  another stream captures.
- Two GPUs (where the machine has them): calls on both at once from a thread each, with and
  without ``temp_storage=``, exact; coop.device's temporaries, SM counts and kernel handles
  are each device's own.
"""

import threading

import numpy as np
import pytest

import coop
from numba import cuda

from helpers import ON_GPU, assert_equal_exact
from test_device_temp_storage import CALLS, N, _device_arrays

pytestmark = pytest.mark.skipif(not ON_GPU, reason="CUDA graphs and devices: GPU only")

# the functions that return a count unless given where to write it (a graph cannot wait for it)
COUNT_OUTPUTS = {"select": ("d_num_selected_out", 1), "select_flagged": ("d_num_selected_out", 1),
                 "partition": ("d_num_selected_out", 1), "unique": ("d_num_selected_out", 1),
                 "unique_by_key": ("d_num_selected_out", 1), "three_way_partition": ("d_num_selected_out", 2),
                 "run_length_encode": ("d_num_runs_out", 1), "non_trivial_runs": ("d_num_runs_out", 1)}


def _driver():
    from cuda.bindings import driver

    return driver


def _checked(result):
    """A cuda.bindings call's values, its error raised."""
    error, *values = result
    assert int(error) == 0, f"CUDA error {error}"
    return values[0] if len(values) == 1 else values


def _capture(stream, calls):
    """``calls()`` captured on the Numba stream ``stream``, as an instantiated graph."""
    driver = _driver()
    _checked(driver.cuStreamBeginCapture(stream.handle, driver.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_GLOBAL))
    try:
        calls()
    finally:
        graph = _checked(driver.cuStreamEndCapture(stream.handle))
    return _checked(driver.cuGraphInstantiate(graph, 0))


def _replay(graph, stream):
    _checked(_driver().cuGraphLaunch(graph, stream.handle))
    stream.synchronize()


def _call_with_counts(name, function, args):
    """``call(stream, storage)``: ``function(*args)`` on ``stream`` and ``storage``, with
    a device array for the count where it returns one (allocated here: a capture cannot
    allocate); and ``returned()``: what the plain call returns, read back."""
    if name not in COUNT_OUTPUTS:
        return (lambda stream, storage: function(*args, stream=stream, temp_storage=storage)), (lambda: None)
    keyword, size = COUNT_OUTPUTS[name]
    counts = cuda.device_array(size, np.int64)

    def returned():
        host = counts.copy_to_host()
        return int(host[0]) if size == 1 else tuple(int(c) for c in host)

    return (lambda stream, storage: function(*args, stream=stream, temp_storage=storage, **{keyword: counts})), returned


@pytest.mark.parametrize("name,make", CALLS, ids=[f"{name}-{make.__name__.strip('_')}" for name, make in CALLS])
def test_a_captured_call_replays(name, make):
    function = getattr(coop.device, name)
    args, outputs = make(N)
    expected_return = function(*args)
    expected = [out.copy_to_host() for out in outputs]
    args, outputs = make(N)
    inputs = [(array, array.copy_to_host()) for array in _device_arrays(args)]
    storage = cuda.device_array(coop.device.temp_storage_bytes(function, *args) + 8, np.uint8)
    stream = cuda.stream()
    call, returned = _call_with_counts(name, function, args)
    call(stream, storage)  # (a warm-up: compiles, sizes and lays out the storage)
    stream.synchronize()
    graph = _capture(stream, lambda: call(stream, storage))
    for replay in range(2):  # (outputs and storage garbage, then the inputs restored: some sort in place)
        for out in outputs:
            out.copy_to_device(np.full(out.shape, -1).astype(out.dtype))
        storage.copy_to_device(np.full(storage.size, 0xFF, np.uint8))
        for array, contents in inputs:
            array.copy_to_device(contents)
        _replay(graph, stream)
        got_return = returned()
        assert got_return == expected_return, f"{name}, replay {replay}"
        written = slice(got_return if isinstance(got_return, int) else None)
        if name == "three_way_partition":  # (each part as far as its count)
            written = None
            for out, want, size in zip(outputs, expected, (*got_return, N - sum(got_return))):
                assert_equal_exact(out.copy_to_host()[:size], want[:size], f"{name}, replay {replay}")
        for out, want in zip(outputs, expected) if written is not None else ():
            assert_equal_exact(out.copy_to_host()[written], want[written], f"{name}, replay {replay}")


def test_calls_a_graph_cannot_hold_are_refused():
    driver = _driver()
    d_x = cuda.to_device(np.arange(1000, dtype=np.int32))
    d_out = cuda.device_array(1000, np.int32)
    stream = cuda.stream()
    storage = cuda.device_array(coop.device.temp_storage_bytes(coop.device.select, d_x, d_out, lambda v: v < 5),
                                np.uint8)
    coop.device.select(d_x, d_out, lambda v: v < 5, stream=stream, temp_storage=storage)  # (compiled first)
    for _ in range(2):  # (a call that would be replayed refuses as well)
        coop.device.inclusive_sum(d_x, d_out, stream=stream)
    coop.device.exclusive_sum(d_x, d_out, stream=stream)  # (and one seen once, whose next call would be laid out)
    stream.synchronize()
    refusals = [
        (lambda: coop.device.inclusive_sum(d_x, d_out, stream=stream),
         r"coop.device.inclusive_sum: stream is capturing a CUDA graph: pass temp_storage="),
        (lambda: coop.device.exclusive_sum(d_x, d_out, stream=stream),
         r"coop.device.exclusive_sum: stream is capturing a CUDA graph: pass temp_storage="),
        (lambda: coop.device.select(d_x, d_out, lambda v: v < 5, stream=stream, temp_storage=storage),
         r"coop.device.select: stream is capturing a CUDA graph, and without d_num_selected_out= the call waits"),
        (lambda: coop.device.inclusive_sum(d_x, d_out, temp_storage=storage),
         r"coop.device.inclusive_sum: stream is the legacy default stream while a CUDA graph is being captured"),
    ]
    for call, message in refusals:
        _checked(driver.cuStreamBeginCapture(stream.handle, driver.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_GLOBAL))
        try:
            with pytest.raises(ValueError, match=message):
                call()
        finally:
            _checked(driver.cuStreamEndCapture(stream.handle))
    # and the stream and coop.device work after
    coop.device.inclusive_sum(d_x, d_out, stream=stream)
    stream.synchronize()
    assert_equal_exact(d_out.copy_to_host(), np.cumsum(np.arange(1000)).astype(np.int32), "after the refusals")


def test_a_pytorch_graph():
    torch = pytest.importorskip("torch")
    x = torch.arange(10**5, dtype=torch.int64, device="cuda") % 7
    out = torch.empty_like(x)
    nbytes = coop.device.temp_storage_bytes(coop.device.inclusive_sum, x, out)
    storage = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):  # (warm-up off the default stream, as PyTorch's graphs want)
        coop.device.inclusive_sum(x, out, stream=side, temp_storage=storage)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        coop.device.inclusive_sum(x, out, stream=torch.cuda.current_stream(), temp_storage=storage)
    for seed in range(2):
        x.copy_(torch.randint(-100, 100, x.shape, generator=torch.Generator().manual_seed(seed)).cuda())
        out.fill_(-1)
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(out, torch.cumsum(x, 0)), f"replay {seed}"


def test_a_cupy_graph():
    cupy = pytest.importorskip("cupy")
    x = cupy.arange(10**5, dtype=cupy.int32) % 9
    out = cupy.empty(1, cupy.int64)
    storage = cupy.empty(coop.device.temp_storage_bytes(coop.device.sum, x, out), cupy.uint8)
    stream = cupy.cuda.Stream(non_blocking=True)
    coop.device.sum(x, out, stream=stream, temp_storage=storage)  # (a warm-up)
    stream.synchronize()
    stream.begin_capture()
    try:
        coop.device.sum(x, out, stream=stream, temp_storage=storage)
    finally:
        graph = stream.end_capture()
    for seed in range(2):
        x[...] = cupy.asarray(np.random.default_rng(seed).integers(0, 100, x.size).astype(np.int32))
        out.fill(-1)
        graph.launch(stream)
        stream.synchronize()
        assert int(out[0]) == int(x.sum()), f"replay {seed}"


def _work_on(device, results, errors, rounds=20):
    """Calls on GPU ``device`` (made current in this thread), with and without temp_storage=,
    each checked exactly."""
    try:
        cuda.select_device(device)
        rng = np.random.default_rng(device)
        for r in range(rounds):
            n = int(rng.integers(1, 3 * 10**6))
            x = rng.integers(0, 1000, n).astype(np.int32)
            d_x, d_out = cuda.to_device(x), cuda.device_array(n, np.int64)
            d_sum = cuda.device_array(1, np.int64)
            d_keys = cuda.to_device(x)
            storage = cuda.device_array(coop.device.temp_storage_bytes(coop.device.inclusive_sum, d_x, d_out),
                                        np.uint8)
            coop.device.inclusive_sum(d_x, d_out, temp_storage=storage if r % 2 else None)
            coop.device.sum(d_x, d_sum)
            coop.device.radix_sort(d_keys)
            selected = coop.device.select(d_x, d_keys, lambda v: v < 300) if r % 3 == 0 else None
            assert (d_out.copy_to_host() == np.cumsum(x)).all(), f"device {device}: inclusive_sum, round {r}"
            assert d_sum.copy_to_host()[0] == x.sum(), f"device {device}: sum, round {r}"
            if selected is not None:
                assert (d_keys.copy_to_host()[:selected] == x[x < 300]).all(), f"device {device}: select, round {r}"
            else:
                assert (d_keys.copy_to_host() == np.sort(x)).all(), f"device {device}: radix_sort, round {r}"
        results[device] = rounds
    except BaseException as error:  # noqa: BLE001  (reported by the test)
        errors.append((device, error))


def test_two_gpus_at_once():
    if len(cuda.gpus) < 2:
        pytest.skip("one GPU")
    results, errors = {}, []
    threads = [threading.Thread(target=_work_on, args=(device, results, errors)) for device in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    assert results == {0: 20, 1: 20}
    # one thread going back and forth between the two
    for round_ in range(4):
        for device in (0, 1):
            with cuda.gpus[device]:
                x = np.arange(10**5 + round_, dtype=np.int32) % 11
                d_out = cuda.device_array(x.size, np.int32)
                coop.device.exclusive_sum(cuda.to_device(x), d_out)
                assert (d_out.copy_to_host() == np.cumsum(x) - x).all(), f"device {device}, round {round_}"
