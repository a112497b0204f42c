"""coop.device's ``temp_storage=`` (CUB's two-phase pattern): every function sized with
``coop.device.temp_storage_bytes`` and run on a caller's buffer gives what it gives with
coop's own storage, also when the buffer held garbage between calls; a buffer too small
is refused before any launch."""

import operator

import numpy as np
import pytest

import coop
from coop.device import _host
from numba import cuda

from helpers import FULL_MATRIX, assert_equal_exact

N = 10**5 + 3 if FULL_MATRIX else 700


def _ints(n, seed, low=0, high=8, dtype=np.int32):
    return np.random.default_rng(seed).integers(low, high, n).astype(dtype)


def _is_even(x):
    return x % 2 == 0


# (name, function, make arguments: n -> (args, outputs to compare))
def _reduce_args(n):
    d_out = cuda.device_array(1, np.int64)
    return (cuda.to_device(_ints(n, 1)), d_out, lambda a, b: a + b, np.int64(5)), [d_out]


def _empty_reduce_args(n):  # (no values: initial, written by a launch as any other)
    d_out = cuda.device_array(1, np.int64)
    return (cuda.to_device(_ints(0, 1)), d_out, coop.ops.add, np.int64(5)), [d_out]


def _sum_args(n):
    d_out = cuda.device_array(1, np.int32)
    return (cuda.to_device(_ints(n, 2)), d_out), [d_out]


def _scan_args(n):
    d_out = cuda.device_array(n, np.int32)
    return (cuda.to_device(_ints(n, 3)), d_out), [d_out]


def _op_scan_args(n):
    d_out = cuda.device_array(n, np.int32)
    return (cuda.to_device(_ints(n, 4)), d_out, coop.ops.max, np.int32(-1)), [d_out]


def _tuple_scan_args(n):
    d_flags, d_sums = cuda.device_array(n, np.int32), cuda.device_array(n, np.int32)
    flags = (np.random.default_rng(5).random(n) < 0.05).astype(np.int32)
    op = lambda a, b: (a[0] | b[0], b[1] if b[0] else a[1] + b[1])  # noqa: E731  (a segmented sum)
    return ((cuda.to_device(flags), cuda.to_device(_ints(n, 5))), (d_flags, d_sums), op), [d_flags, d_sums]


def _select_args(n):
    d_out = cuda.device_array(n, np.int32)
    return (cuda.to_device(_ints(n, 6)), d_out, _is_even), [d_out]


def _flagged_args(n):
    d_out = cuda.device_array(n, np.int32)
    return (cuda.to_device(_ints(n, 7)), cuda.to_device(_ints(n, 8, 0, 2, np.int8)), d_out), [d_out]


def _histogram_args(n):
    d_counts = cuda.device_array(10, np.int32)
    samples = np.random.default_rng(9).random(n).astype(np.float32)
    return (cuda.to_device(samples), d_counts, 10, 0.0, 1.0), [d_counts]


def _segmented_args(n):
    # (70 segments: more than a block of the kernel of short segments takes on the
    # simulator, so that a call is several blocks)
    d_out = cuda.device_array(70, np.int32)
    offsets = np.linspace(0, n, 71).astype(np.int32)
    return (cuda.to_device(_ints(n, 10)), d_out, cuda.to_device(offsets), coop.ops.add, 0), [d_out]


def _sort_args(n):
    d_keys = cuda.to_device(_ints(n, 11, -2**31, 2**31 - 1))
    d_values = cuda.to_device(np.arange(n, dtype=np.int32))
    return (d_keys, d_values), [d_keys, d_values]


def _sort_bits_args(n):  # an odd number of passes: the last copies back through the temporaries
    d_keys = cuda.to_device(_ints(n, 12, 0, 2**20, np.uint32))
    return (d_keys, None, True, 2, 19), [d_keys]


def _sort_out_of_place_args(n):  # three passes, from the input into the outputs
    d_keys = cuda.to_device(_ints(n, 13, 0, 2**20, np.uint32))
    d_values = cuda.to_device(np.arange(n, dtype=np.int32))
    d_keys_out, d_values_out = cuda.device_array(n, np.uint32), cuda.device_array(n, np.int32)
    return (d_keys, d_values, False, 2, 19, d_keys_out, d_values_out), [d_keys_out, d_values_out, d_keys]


@cuda.jit(device=True)
def _by_last_digit(a, b):
    return a % 10 < b % 10


def _merge_sort_args(n):  # several rounds of merging, ping-ponging through the temporaries
    d_keys = cuda.to_device(_ints(n, 16, 0, 1000))
    d_values = cuda.to_device(np.arange(n, dtype=np.int32))
    return (d_keys, d_values, _by_last_digit), [d_keys, d_values]


def _merge_sort_out_of_place_args(n):
    d_keys = cuda.to_device(_ints(n, 17, -50, 50, np.int64))
    d_keys_out = cuda.device_array(n, np.int64)
    return (d_keys, None, None, d_keys_out), [d_keys_out, d_keys]


def _segmented_sort_args(n):  # segments of one tile and of several, through the temporaries
    d_keys = cuda.to_device(_ints(n, 15, -2**31, 2**31 - 1))
    d_values = cuda.to_device(np.arange(n, dtype=np.int32))
    offsets = np.array([0, 3, n // 3, n], np.int64)
    return (d_keys, cuda.to_device(offsets), d_values, True), [d_keys, d_values]


def _difference_args(n):  # in place: the tiles' neighbours through the temporaries
    d_x = cuda.to_device(_ints(n, 16, -100, 100))
    return (d_x,), [d_x]


def _bound_args(n):
    d_out = cuda.device_array(n, np.int64)
    return (cuda.to_device(np.sort(_ints(n, 17, 0, 50))), cuda.to_device(_ints(n, 18, -5, 55)), d_out), [d_out]


def _unique_args(n):
    d_out = cuda.device_array(n, np.int32)
    return (cuda.to_device(np.sort(_ints(n, 19, 0, 60))), d_out), [d_out]


def _run_length_args(n):
    d_values, d_counts = cuda.device_array(n, np.int32), cuda.device_array(n, np.int32)
    return (cuda.to_device(np.sort(_ints(n, 20, 0, 60))), d_values, d_counts), [d_values, d_counts]


def _non_trivial_runs_args(n):  # (outputs zeroed: written as far as the count)
    d_offsets, d_lengths = cuda.to_device(np.zeros(n, np.int64)), cuda.to_device(np.zeros(n, np.int32))
    return (cuda.to_device(np.sort(_ints(n, 25, 0, 60))), d_offsets, d_lengths), [d_offsets, d_lengths]


def _three_way_args(n):  # (outputs zeroed: each is written as far as its part's count)
    outs = [cuda.to_device(np.zeros(n, np.int32)) for _ in range(3)]
    return (cuda.to_device(_ints(n, 21, 0, 100)), *outs, lambda v: v < 20, lambda v: v < 70), outs


def _unique_by_key_args(n):  # (outputs zeroed, as the three-way partition's)
    d_keys, d_values = cuda.to_device(np.zeros(n, np.int32)), cuda.to_device(np.zeros(n, np.float64))
    keys, values = np.sort(_ints(n, 22, 0, 60)), np.arange(n, dtype=np.float64)
    return (cuda.to_device(keys), cuda.to_device(values), d_keys, d_values), [d_keys, d_values]


def _scan_by_key_args(n):
    d_out = cuda.device_array(n, np.int64)
    keys = np.repeat(np.arange(n), _ints(n, 23, 1, 9))[:n]  # (runs of 1 to 8 keys)
    return (cuda.to_device(keys), cuda.to_device(_ints(n, 24, -9, 9)), d_out, operator.add), [d_out]


def _sum_by_key_args(n):
    args, outputs = _scan_by_key_args(n)
    return args[:3], outputs


# the calls whose outputs are written as far as the count they return
COUNTED = ("select", "select_flagged", "unique", "run_length_encode")

CALLS = [
    ("reduce", _reduce_args), ("reduce", _empty_reduce_args), ("sum", _sum_args), ("inclusive_sum", _scan_args), ("exclusive_sum", _scan_args),
    ("inclusive_scan", _op_scan_args), ("exclusive_scan", _op_scan_args), ("inclusive_scan", _tuple_scan_args),
    ("select", _select_args), ("partition", _select_args), ("select_flagged", _flagged_args),
    ("histogram_even", _histogram_args), ("segmented_reduce", _segmented_args), ("radix_sort", _sort_args),
    ("radix_sort", _sort_bits_args), ("radix_sort", _sort_out_of_place_args), ("merge_sort", _merge_sort_args),
    ("merge_sort", _merge_sort_out_of_place_args),
    ("segmented_sort", _segmented_sort_args), ("subtract_left", _difference_args),
    ("subtract_right", _difference_args), ("lower_bound", _bound_args), ("upper_bound", _bound_args),
    ("unique", _unique_args), ("run_length_encode", _run_length_args), ("three_way_partition", _three_way_args),
    ("unique_by_key", _unique_by_key_args), ("inclusive_scan_by_key", _scan_by_key_args),
    ("exclusive_sum_by_key", _sum_by_key_args), ("non_trivial_runs", _non_trivial_runs_args),
]


def _device_arrays(args):
    for arg in args:
        if isinstance(arg, tuple):
            yield from _device_arrays(arg)
        elif hasattr(arg, "copy_to_device"):
            yield arg


@pytest.mark.parametrize("name,make", CALLS, ids=[f"{name}-{make.__name__.strip('_')}" for name, make in CALLS])
def test_callers_storage_gives_the_same_results(name, make, monkeypatch):
    function = getattr(coop.device, name)
    args, outputs = make(N)
    expected_return = function(*args)
    expected = [out.copy_to_host() for out in outputs]
    args, outputs = make(N)
    needed = coop.device.temp_storage_bytes(function, *args)
    assert needed >= 0
    storage = cuda.to_device(np.full(needed + 8, 0xFF, np.uint8))  # (garbage: the call initialises it)
    sized = []
    sizing = _host.temp_storage_bytes
    monkeypatch.setattr(_host, "temp_storage_bytes", lambda *a, **k: sized.append(1) or sizing(*a, **k))
    inputs = [(array, array.copy_to_host()) for array in _device_arrays(args)]
    # twice on one buffer and the same arrays (their contents restored: some sort in
    # place), garbage between: nothing carries over; the first call is sized, the second
    # takes its layout
    for call in range(2):
        for array, contents in inputs:
            array.copy_to_device(contents)
        got_return = function(*args, temp_storage=storage)
        assert got_return == expected_return
        written = slice(got_return) if name in COUNTED else slice(None)  # (past the count: unset)
        for out, want in zip(outputs, expected):
            assert_equal_exact(out.copy_to_host()[written], want[written], f"{name} with temp_storage, call {call}")
        storage.copy_to_device(np.full(needed + 8, 0xFF, np.uint8))
    assert len(sized) == 1, f"{name}: sized {len(sized)} times in two calls of the same arguments on one buffer"


def test_a_kept_layout_is_for_its_buffer_and_arguments():
    d_x, d_out = cuda.to_device(_ints(N, 30)), cuda.device_array(N, np.int32)
    expected = np.cumsum(_ints(N, 30))
    needed = coop.device.temp_storage_bytes(coop.device.inclusive_sum, d_x, d_out)
    storage = cuda.device_array(2 * needed, np.uint8)
    for buffer in (storage, storage[:needed], storage, storage[needed:]):  # (one address, two lengths; another)
        coop.device.inclusive_sum(d_x[:N // 3], d_out, temp_storage=buffer)  # (fewer items first: smaller regions)
        assert_equal_exact(d_out.copy_to_host()[:N // 3], expected[:N // 3], "inclusive_sum of a third")
        coop.device.inclusive_sum(d_x, d_out, temp_storage=buffer)
        assert_equal_exact(d_out.copy_to_host(), expected, "inclusive_sum")
    with pytest.raises(ValueError, match=r"coop.device.inclusive_sum: temp_storage is too small"):
        coop.device.inclusive_sum(d_x, d_out, temp_storage=storage[:needed - 1])
    # the same arrays, another operator: its own layout (a tuple-free max scan of another dtype)
    d_wide = cuda.device_array(N, np.int64)
    needed_wide = coop.device.temp_storage_bytes(coop.device.inclusive_scan, d_x, d_wide, coop.ops.max)
    coop.device.inclusive_scan(d_x, d_wide, coop.ops.max, temp_storage=cuda.device_array(needed_wide, np.uint8))
    assert_equal_exact(d_wide.copy_to_host(), np.maximum.accumulate(_ints(N, 30)).astype(np.int64), "max scan")


def test_a_repeated_call_is_replayed(monkeypatch):
    """A call on a caller's buffer whose arguments' key was seen queues the same launches
    again without running its host side; one that returns a count (read back) runs."""
    import importlib

    ran = []
    for module in map(importlib.import_module, ("coop.device.reduce", "coop.device.select")):
        counted = (lambda checked: lambda *a, **k: ran.append(1) or checked(*a, **k))(module.launch_stream)
        monkeypatch.setattr(module, "launch_stream", counted)
    x = _ints(N, 31)
    d_x, d_sum, d_out = cuda.to_device(x), cuda.device_array(1, np.int64), cuda.device_array(N, np.int32)
    storage = cuda.device_array(coop.device.temp_storage_bytes(coop.device.sum, d_x, d_sum) + 512, np.uint8)
    ran.clear()
    for call in range(3):
        d_sum.copy_to_device(np.array([-1], np.int64))
        storage.copy_to_device(np.full(storage.size, 0xFF, np.uint8))
        coop.device.sum(d_x, d_sum, temp_storage=storage)
        assert d_sum.copy_to_host()[0] == x.sum(), f"call {call}"
    assert len(ran) == 2, "sum: sized and run once, then replayed"
    d_x.copy_to_device(x[::-1].copy())  # (new contents, the same memory: replayed, read anew)
    coop.device.sum(d_x, d_sum, temp_storage=storage)
    assert d_sum.copy_to_host()[0] == x.sum() and len(ran) == 2
    ran.clear()
    words = cuda.device_array(storage.size // 4, np.int32)  # (a buffer of another dtype: viewed as bytes)
    for call in range(3):
        d_sum.copy_to_device(np.array([-1], np.int64))
        coop.device.sum(d_x, d_sum, temp_storage=words)
        assert d_sum.copy_to_host()[0] == x.sum(), f"int32 buffer, call {call}"
    assert len(ran) == 2, "sum on an int32 buffer: sized and run once, then replayed"
    with pytest.raises(ValueError, match=r"coop.device.sum: temp_storage must be 1-D"):
        coop.device.sum(d_x, d_sum, temp_storage=cuda.device_array((2, storage.size), np.uint8))
    ran.clear()
    for _ in range(2):
        assert coop.device.select(d_x, d_out, _is_even, temp_storage=storage) == (x % 2 == 0).sum()
    assert len(ran) == 3, "select returning its count: sized once, run each time"


def test_a_repeated_call_without_temp_storage_is_replayed(monkeypatch):
    """Without temp_storage=: the second call with the same arguments is laid out on its
    stream's own buffer, later ones replay it; calls on new arrays each time, and those
    returning a count, run each time, sizing nothing more than the one call after a
    repeat; a larger call grows the buffer and earlier plans are laid out again."""
    import importlib

    ran = []
    for module in map(importlib.import_module, ("coop.device.reduce", "coop.device.scan", "coop.device.select")):
        counted = (lambda checked: lambda *a, **k: ran.append(1) or checked(*a, **k))(module.launch_stream)
        monkeypatch.setattr(module, "launch_stream", counted)
    monkeypatch.setattr(_host, "_OWN_PLANS", {})
    monkeypatch.setattr(_host, "_OWN_BUFFERS", {})
    monkeypatch.setattr(_host, "OWN_BUFFER_LEAST", 256)  # (so that the larger call below outgrows the buffer)
    x = _ints(N, 37)
    d_x, d_sum, d_out = cuda.to_device(x), cuda.device_array(1, np.int64), cuda.device_array(N, np.int32)
    ran.clear()
    for call in range(4):
        d_sum.copy_to_device(np.array([-1], np.int64))
        coop.device.sum(d_x, d_sum)
        assert d_sum.copy_to_host()[0] == x.sum(), f"call {call}"
    assert len(ran) == 3, "sum: run, then sized and run on the stream's buffer, then replayed"
    d_x.copy_to_device(x[::-1].copy())  # (new contents, the same memory: replayed, read anew)
    coop.device.sum(d_x, d_sum)
    assert d_sum.copy_to_host()[0] == x.sum() and len(ran) == 3
    ran.clear()
    outputs = [cuda.device_array(N, np.int32) for _ in range(3)]  # (kept alive: no address seen twice)
    for call, fresh in enumerate(outputs):  # (a new output each time: never sized)
        coop.device.inclusive_sum(d_x, fresh)
        assert_equal_exact(fresh.copy_to_host(), np.cumsum(x[::-1]).astype(np.int32), f"new output, call {call}")
    assert len(ran) == 3
    ran.clear()
    for _ in range(3):
        assert coop.device.select(d_x, d_out, _is_even) == (x % 2 == 0).sum()
    assert len(ran) == 4, "select returning its count: sized once, run each time"
    small = cuda.to_device(x[:40])
    for call in range(2):
        d_out.copy_to_device(np.full(N, -1, np.int32))
        coop.device.exclusive_sum(small, d_out)
    buffers = set(map(id, _host._OWN_BUFFERS.values()))
    big = cuda.to_device(np.tile(x, 12))
    d_big_out = cuda.device_array(big.size, np.int32)
    for call in range(2):  # (a call taking more than the buffer holds: a larger one, the older plans laid out again)
        d_big_out.copy_to_device(np.full(big.size, -1, np.int32))
        coop.device.exclusive_sum(big, d_big_out)
        want = np.concatenate([[0], np.cumsum(np.tile(x, 12))[:-1]]).astype(np.int32)
        assert_equal_exact(d_big_out.copy_to_host(), want, f"larger, call {call}")
    assert not set(map(id, _host._OWN_BUFFERS.values())) <= buffers, "the larger call grew the buffer"
    for call in range(3):
        d_out.copy_to_device(np.full(N, -1, np.int32))
        coop.device.exclusive_sum(small, d_out)
        want = np.concatenate([[0], np.cumsum(x[:39])]).astype(np.int32)
        assert_equal_exact(d_out.copy_to_host()[:40], want, f"after the larger call, call {call}")


def test_an_empty_reduction_writes_initial_in_every_call():
    """No values: reduce writes initial by a launch, so a replayed call writes it too."""
    args, (d_out,) = _empty_reduce_args(0)
    storage = cuda.device_array(coop.device.temp_storage_bytes(coop.device.reduce, *args), np.uint8)
    for call in range(3):
        d_out.copy_to_device(np.array([-1], np.int64))
        coop.device.reduce(*args, temp_storage=storage)
        assert d_out.copy_to_host()[0] == 5, f"call {call}"


def test_sizes():
    x = cuda.to_device(_ints(N, 13))
    out = cuda.device_array(N, np.int32)
    small, large = (coop.device.temp_storage_bytes(coop.device.inclusive_sum, x[:n], out) for n in (100, N))
    assert 0 < small <= large
    assert coop.device.temp_storage_bytes(coop.device.inclusive_sum, x[:0], out) == 0
    # (histogram_even's bins + 1 global counters, one aligned region; none without samples)
    assert coop.device.temp_storage_bytes(coop.device.histogram_even, x, out, 4, 0, 8) == 256
    assert coop.device.temp_storage_bytes(coop.device.histogram_even, x[:0], out, 4, 0, 8) == 0


def test_too_small_or_wrong_is_refused_before_any_launch():
    keys = _ints(N, 14)
    d_keys = cuda.to_device(keys)
    needed = coop.device.temp_storage_bytes(coop.device.radix_sort, d_keys)
    with pytest.raises(ValueError, match=rf"coop.device.radix_sort: temp_storage is too small: {needed - 1} bytes, "
                                         rf"{needed} needed"):
        coop.device.radix_sort(d_keys, temp_storage=cuda.device_array(needed - 1, np.uint8))
    with pytest.raises(TypeError, match=r"coop.device.radix_sort: temp_storage is a NumPy array in host memory"):
        coop.device.radix_sort(d_keys, temp_storage=np.zeros(needed, np.uint8))
    assert_equal_exact(d_keys.copy_to_host(), keys, "keys after refused calls")
    with pytest.raises(TypeError, match=r"coop.device.temp_storage_bytes: function must be a coop.device function"):
        coop.device.temp_storage_bytes(np.sort, d_keys)
    # the sizing checks the call's arguments as the call does
    with pytest.raises(ValueError, match=r"coop.device.radix_sort: end_bit must be an integer from 0 to 32"):
        coop.device.temp_storage_bytes(coop.device.radix_sort, d_keys, end_bit=40)
