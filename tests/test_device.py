"""coop.device: reductions and scans against NumPy, on the simulator (small sizes) and the
GPU (the issue's sizes), plus bad input raised before any launch, CuPy / PyTorch arrays
and non-default streams (GPU)."""

import importlib

import numpy as np
import pytest

import coop
from numba import cuda

from helpers import FULL_MATRIX, ON_GPU, assert_equal_exact, dtype_id

INTEGERS = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)
FLOATS = (np.float16, np.float32, np.float64)
# bool, int8 and float16 in every algorithm's GPU matrix (a float16 constant in coop.device's
# code once failed in NVVM there, which the simulator never runs: tests/codegen_cases.py
# compiles every algorithm's kernels for them)
SMALL_DTYPES = (np.bool_, np.int8, np.float16)
DTYPES = (np.bool_,) + INTEGERS + FLOATS if FULL_MATRIX else (np.int8, np.int32, np.uint64, np.float32)
SIZES = (0, 1, 31, 4097, 10**6 + 3) if FULL_MATRIX else (0, 1, 31, 300)
LARGE = 1 << 28


def values(dtype, n, seed):
    """Small integers (exact in every dtype's arithmetic, wrapping where it overflows); for
    bool and float16 zeros and about 1000 ones (float16 sums then exact in any order)."""
    rng = np.random.default_rng(seed)
    if np.dtype(dtype) in (np.bool_, np.float16):
        return (rng.random(n) < min(0.5, 1000 / max(n, 1))).astype(dtype)
    low = 0 if np.dtype(dtype).kind == "u" else -3
    return rng.integers(low, 4, n).astype(dtype)


def wrapped_cumsum(x, dtype):
    """The running sums as ``dtype`` arithmetic gives them (integers wrap)."""
    return np.cumsum(x.astype(np.int64) if np.dtype(dtype).kind in "iu" else x, dtype=np.float64
                     if np.dtype(dtype).kind == "f" else np.int64).astype(dtype)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_sum_and_scans(dtype, n):
    x = values(dtype, n, seed=n)
    d_x = cuda.to_device(x)
    d_total = cuda.device_array(1, dtype)
    coop.device.sum(d_x, d_total)
    expected = wrapped_cumsum(x, dtype)
    assert_equal_exact(d_total.copy_to_host(), np.array([expected[-1] if n else 0], dtype), "sum")
    d_out = cuda.device_array(n, dtype)
    coop.device.inclusive_sum(d_x, d_out)
    assert_equal_exact(d_out.copy_to_host(), expected, "inclusive_sum")
    coop.device.exclusive_sum(d_x, d_out)
    assert_equal_exact(d_out.copy_to_host(), np.concatenate(([0], expected[:-1])).astype(dtype)[:n], "exclusive_sum")


@pytest.mark.parametrize("n", SIZES)
def test_widening(n):
    """int8 values summed and scanned as int64 (d_out's dtype): no wrap."""
    x = np.full(n, 100, np.int8)
    d_x = cuda.to_device(x)
    d_out = cuda.device_array(max(n, 1), np.int64)
    coop.device.sum(d_x, d_out)
    assert d_out[:1].copy_to_host()[0] == 100 * n  # (the rest is not written yet)
    coop.device.inclusive_sum(d_x, d_out[:n])
    assert_equal_exact(d_out.copy_to_host()[:n], 100 * np.arange(1, n + 1, dtype=np.int64), "widened scan")


@cuda.jit(device=True)
def compose(f, g):
    """Affine maps x -> a*x + b packed as a << 16 | b, coefficients modulo 2**16: ``f``
    then ``g`` (not commutative)."""
    fa, fb, ga, gb = f >> 16, f & 0xFFFF, g >> 16, g & 0xFFFF
    return ((ga * fa) & 0xFFFF) << 16 | ((ga * fb + gb) & 0xFFFF)


def compose_host(f, g):
    fa, fb, ga, gb = f >> 16, f & 0xFFFF, g >> 16, g & 0xFFFF
    return ((ga * fa) & 0xFFFF) << 16 | ((ga * fb + gb) & 0xFFFF)


IDENTITY = 1 << 16


@pytest.mark.parametrize("n", SIZES)
def test_non_commutative(n):
    """Scans and the reduction combine in input order: composition of affine maps."""
    rng = np.random.default_rng(n)
    maps = (rng.integers(0, 1 << 16, n) << 16 | rng.integers(0, 1 << 16, n)).astype(np.int64)
    expected, f = [], IDENTITY
    for g in maps.tolist():
        expected.append(f)
        f = compose_host(f, g)
    d_maps = cuda.to_device(maps)
    d_out = cuda.device_array(n, np.int64)
    coop.device.exclusive_scan(d_maps, d_out, compose, IDENTITY)
    assert_equal_exact(d_out.copy_to_host(), np.array(expected, np.int64), "exclusive_scan")
    coop.device.inclusive_scan(d_maps, d_out, compose)
    assert_equal_exact(d_out.copy_to_host(), np.array(expected[1:] + [f], np.int64)[:n], "inclusive_scan")
    coop.device.inclusive_scan(d_maps, d_out, compose, initial=IDENTITY)
    assert_equal_exact(d_out.copy_to_host(), np.array(expected[1:] + [f], np.int64)[:n], "inclusive_scan, initial")
    d_total = cuda.device_array(1, np.int64)
    coop.device.reduce(d_maps, d_total, compose, IDENTITY)
    assert d_total.copy_to_host()[0] == f


def test_host_lambda_and_initial():
    x = values(np.int32, 1000, seed=1)
    d_out = cuda.device_array(1, np.int32)
    coop.device.reduce(cuda.to_device(x), d_out, lambda a, b: max(a, b), 50)
    assert d_out.copy_to_host()[0] == 50
    coop.device.reduce(cuda.to_device(x), d_out, coop.ops.min, 50)
    assert d_out.copy_to_host()[0] == x.min()
    d_scan = cuda.device_array(1000, np.int32)
    coop.device.exclusive_scan(cuda.to_device(x), d_scan, coop.ops.add, 7)
    assert_equal_exact(d_scan.copy_to_host(), (7 + np.cumsum(x) - x).astype(np.int32), "seeded exclusive scan")


@pytest.mark.skipif(not ON_GPU, reason="identical results over repeated runs: a GPU property")
def test_repeatable():
    rng = np.random.default_rng(2)
    x = (rng.integers(0, 1 << 16, 10**7 + 1) << 16 | rng.integers(0, 1 << 16, 10**7 + 1)).astype(np.int64)
    d_x, d_out = cuda.to_device(x), cuda.device_array(x.size, np.int64)
    results = []
    for _ in range(3):
        coop.device.inclusive_scan(d_x, d_out, compose)  # (associative, not commutative: exact in any grouping)
        results.append(d_out.copy_to_host())
    assert all((r == results[0]).all() for r in results)
    d_total = cuda.device_array(1, np.int64)
    totals = []
    for _ in range(3):
        coop.device.reduce(d_x, d_total, compose, IDENTITY)
        totals.append(d_total.copy_to_host()[0])
    assert totals[0] == totals[1] == totals[2] == results[0][-1]


@pytest.mark.skipif(not ON_GPU, reason="2^28 items: GPU only")
def test_large():
    x = cuda.to_device(np.ones(LARGE, np.int32))
    d_out = cuda.device_array(LARGE, np.int32)
    coop.device.inclusive_sum(x, d_out)
    tail = d_out[LARGE - 5:].copy_to_host()
    assert (tail == np.arange(LARGE - 4, LARGE + 1)).all()
    d_total = cuda.device_array(1, np.int64)
    coop.device.sum(x, d_total)
    assert d_total.copy_to_host()[0] == LARGE


@pytest.mark.skipif(not ON_GPU, reason="CuPy and PyTorch arrays, streams: GPU only")
def test_cupy_torch_and_streams():
    cupy = pytest.importorskip("cupy")
    torch = pytest.importorskip("torch")
    x = values(np.int32, 100_003, seed=3)
    expected = np.cumsum(x, dtype=np.int64).astype(np.int32)
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        c_x = cupy.asarray(x)
        c_out = cupy.empty_like(c_x)
    coop.device.inclusive_sum(c_x, c_out, stream=stream)
    stream.synchronize()
    assert (cupy.asnumpy(c_out) == expected).all()
    t_stream = torch.cuda.Stream()
    t_x = torch.as_tensor(x, device="cuda")
    t_out = torch.empty_like(t_x)
    t_stream.wait_stream(torch.cuda.current_stream())
    coop.device.inclusive_sum(t_x, t_out, stream=t_stream)
    t_stream.synchronize()
    assert (t_out.cpu().numpy() == expected).all()
    n_stream = cuda.stream()
    d_total = cuda.device_array(1, np.int64, stream=n_stream)
    coop.device.sum(cuda.to_device(x, stream=n_stream), d_total, stream=n_stream)
    n_stream.synchronize()
    assert d_total.copy_to_host()[0] == x.sum()


def test_bad_input():
    x = np.arange(10, dtype=np.int32)
    d_x = cuda.to_device(x)
    with pytest.raises(TypeError, match=r"coop.device.inclusive_sum: d_in is a NumPy array in host memory"):
        coop.device.inclusive_sum(x, cuda.device_array(10, np.int32))
    with pytest.raises(ValueError, match=r"coop.device.inclusive_sum: d_out is too short: 9 items, 10 needed"):
        coop.device.inclusive_sum(d_x, cuda.device_array(9, np.int32))
    with pytest.raises(ValueError, match=r"coop.device.sum: d_out is too short: 0 items, 1 needed"):
        coop.device.sum(d_x, cuda.device_array(0, np.int32))
    with pytest.raises(ValueError, match=r"coop.device.exclusive_scan: initial is required"):
        coop.device.exclusive_scan(d_x, cuda.device_array(10, np.int32), coop.ops.add, None)
    with pytest.raises(ValueError, match=r"coop.device.reduce: d_in must be 1-D, got 2 dimensions"):
        coop.device.reduce(cuda.to_device(x.reshape(2, 5)), cuda.device_array(1, np.int32), coop.ops.add, 0)
    with pytest.raises(ValueError, match=r"coop.device.sum: d_in must be contiguous"):
        coop.device.sum(d_x[::2], cuda.device_array(1, np.int32))
    with pytest.raises(TypeError, match=r"coop.device.reduce: op must be an operator"):
        coop.device.reduce(d_x, cuda.device_array(1, np.int32), 3, 0)
    with pytest.raises(TypeError, match=r"coop.device: stream must be None"):
        coop.device.sum(d_x, cuda.device_array(1, np.int32), stream="fast")
    # operators of the wrong arity, before any compilation
    with pytest.raises(TypeError, match=r"coop.device.reduce: op must take 2 values, but it takes 1"):
        coop.device.reduce(d_x, cuda.device_array(1, np.int32), lambda a: a, 0)
    with pytest.raises(TypeError, match=r"coop.device.select: predicate must take 1 value, but it takes 2"):
        coop.device.select(d_x, cuda.device_array(10, np.int32), lambda a, b: a < b)
    with pytest.raises(TypeError, match=r"coop.device.lower_bound: comp must take 2 values, but it takes 3"):
        coop.device.lower_bound(d_x, d_x, cuda.device_array(10, np.int32), cuda.jit(device=True)(lambda a, b, c: a))


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", SMALL_DTYPES + (np.int64, np.float32) if FULL_MATRIX else (np.int32,), ids=dtype_id)
def test_select_and_partition(dtype, n):
    x = values(dtype, n, seed=n + 7)
    keep = (np.arange(n) * 7919) % 5 < 2
    d_x = cuda.to_device(x)
    d_out = cuda.device_array(n, dtype)
    count = coop.device.select_flagged(d_x, cuda.to_device(keep), d_out)
    assert count == keep.sum()
    # (only the selected items are copied back: the rest of d_out is never written)
    assert_equal_exact(d_out[:count].copy_to_host(), x[keep], "select_flagged")
    count = coop.device.select(d_x, d_out, lambda v: v > 0)
    assert count == (x > 0).sum()
    assert_equal_exact(d_out[:count].copy_to_host(), x[x > 0], "select")
    count = coop.device.partition(d_x, d_out, lambda v: v > 0)
    out = d_out.copy_to_host()
    assert count == (x > 0).sum()
    assert_equal_exact(out[:count], x[x > 0], "partition, selected")
    assert_equal_exact(out[count:][::-1], x[x <= 0], "partition, rejected (reversed)")
    # the count written to the device instead (nothing waited for), into a longer array
    d_count = cuda.to_device(np.full(3, -1, np.int64))
    assert coop.device.select_flagged(d_x, cuda.to_device(keep), d_out, d_num_selected_out=d_count) is None
    assert_equal_exact(d_count.copy_to_host(), np.array([keep.sum(), -1, -1]), "select_flagged's device count")
    assert_equal_exact(d_out.copy_to_host()[:keep.sum()], x[keep], "select_flagged, device count")
    d_count = cuda.to_device(np.full(1, 7, np.uint32))
    assert coop.device.partition(d_x, d_out, lambda v: v <= 0, d_count) is None
    out = d_out.copy_to_host()
    count = int(d_count.copy_to_host()[0])
    assert count == (x <= 0).sum()
    assert_equal_exact(out[:count], x[x <= 0], "partition, device count, selected")
    assert_equal_exact(out[count:][::-1], x[x > 0], "partition, device count, rejected (reversed)")


@pytest.mark.parametrize("dtype", (np.int8, np.uint16, np.float16, np.float64, np.bool_, np.complex64, np.complex128),
                         ids=dtype_id)
def test_select_item_types(dtype):
    """Items of every width and kind through the vector loads and the compacted tile (a view
    of the kernel's scratch as the items' type)."""
    rng = np.random.default_rng(21)
    n = 300
    x = (rng.integers(0, 3, n) + (1j if np.dtype(dtype).kind == "c" else 0)).astype(dtype)
    keep = rng.random(n) < 0.4
    d_x, d_out = cuda.to_device(x), cuda.device_array(n, dtype)
    count = coop.device.select_flagged(d_x, cuda.to_device(keep), d_out)
    assert count == keep.sum()
    assert_equal_exact(d_out[:count].copy_to_host(), x[keep], "select_flagged")
    count = coop.device.partition(d_x, d_out, lambda v: v != 0)
    out, chosen = d_out.copy_to_host(), x != 0
    assert count == chosen.sum()
    assert_equal_exact(out[:count], x[chosen], "partition, selected")
    assert_equal_exact(out[count:][::-1], x[~chosen], "partition, rejected (reversed)")


def runs_of(dtype, n, seed):
    """Items in runs of 1 to 5 equal items (runs across tile boundaries too)."""
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 4, n).astype(dtype)  # (neighbouring runs may be equal: merged)
    return np.repeat(values, rng.integers(1, 6, n))[:n]


def unique_of(x):
    keep = np.ones(x.size, bool)
    keep[1:] = x[1:] != x[:-1]
    return x[keep]


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", (np.int8, np.uint16, np.int32, np.float16, np.float64, np.bool_, np.complex64),
                         ids=dtype_id)
def test_unique(dtype, n):
    x = runs_of(dtype, n, n + 3)
    d_x, d_out = cuda.to_device(x), cuda.to_device(np.zeros(n + 1, dtype))
    count = coop.device.unique(d_x, d_out)
    expected = unique_of(x)
    assert count == expected.size, f"unique({np.dtype(dtype)}, n={n}): {count} kept, {expected.size} expected"
    assert_equal_exact(d_out[:count].copy_to_host(), expected, "unique")
    d_count = cuda.to_device(np.full(1, -1, np.int64))
    assert coop.device.unique(d_x, d_out, d_num_selected_out=d_count) is None
    assert int(d_count.copy_to_host()[0]) == expected.size


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", (np.int8, np.float32, np.bool_), ids=dtype_id)
def test_run_length_encode(dtype, n):
    x = runs_of(dtype, n, n + 4)
    heads = np.flatnonzero(np.r_[True, x[1:] != x[:-1]]) if n else np.zeros(0, np.int64)
    lengths = np.diff(np.r_[heads, n])
    d_x = cuda.to_device(x)
    d_values, d_counts = cuda.to_device(np.zeros(n + 1, dtype)), cuda.to_device(np.full(n + 1, -1, np.int32))
    runs = coop.device.run_length_encode(d_x, d_values, d_counts)
    assert runs == heads.size, f"run_length_encode({np.dtype(dtype)}, n={n}): {runs} runs, {heads.size} expected"
    assert_equal_exact(d_values[:runs].copy_to_host(), x[heads], "run_length_encode's items")
    counts = d_counts.copy_to_host()
    assert_equal_exact(counts[:runs], lengths, "run_length_encode's lengths")
    assert (counts[runs:] == -1).all(), "lengths written past the runs"
    d_runs = cuda.to_device(np.full(2, -1, np.int64))
    d_counts64 = cuda.device_array(n + 1, np.int64)
    assert coop.device.run_length_encode(d_x, d_values, d_counts64, d_num_runs_out=d_runs) is None
    assert_equal_exact(d_runs.copy_to_host(), np.array([heads.size, -1]), "the device count of runs")
    assert_equal_exact(d_counts64[:runs].copy_to_host(), lengths, "run_length_encode's int64 lengths")


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", (np.int8, np.float32, np.bool_, np.uint64), ids=dtype_id)
def test_non_trivial_runs(dtype, n):
    x = runs_of(dtype, n, n + 7)
    heads = np.flatnonzero(np.r_[True, x[1:] != x[:-1]]) if n else np.zeros(0, np.int64)
    lengths = np.diff(np.r_[heads, n])
    long = lengths > 1
    d_offsets, d_lengths = cuda.to_device(np.full(n + 1, -1, np.int64)), cuda.to_device(np.full(n + 1, -1, np.int16))
    runs = coop.device.non_trivial_runs(cuda.to_device(x), d_offsets, d_lengths)
    assert runs == long.sum(), f"non_trivial_runs({np.dtype(dtype)}, n={n}): {runs} runs, {long.sum()} expected"
    offsets, got_lengths = d_offsets.copy_to_host(), d_lengths.copy_to_host()
    assert_equal_exact(offsets[:runs], heads[long], "non_trivial_runs' offsets")
    assert_equal_exact(got_lengths[:runs], lengths[long].astype(np.int16), "non_trivial_runs' lengths")
    assert (offsets[runs:] == -1).all() and (got_lengths[runs:] == -1).all(), "written past the runs"
    d_runs = cuda.to_device(np.full(1, -1, np.int32))
    assert coop.device.non_trivial_runs(cuda.to_device(x), d_offsets, d_lengths, d_num_runs_out=d_runs) is None
    assert int(d_runs.copy_to_host()[0]) == long.sum()


def test_run_length_encode_bad_input():
    d_x = cuda.to_device(np.arange(10, dtype=np.int32))
    with pytest.raises(TypeError, match=r"coop.device.run_length_encode: d_counts_out must be of an integer dtype"):
        coop.device.run_length_encode(d_x, cuda.device_array(10, np.int32), cuda.device_array(10, np.float32))
    with pytest.raises(ValueError, match=r"coop.device.run_length_encode: d_unique_out is d_in itself"):
        coop.device.run_length_encode(d_x, d_x, cuda.device_array(10, np.int32))
    with pytest.raises(TypeError, match=r"coop.device.run_length_encode: d_unique_out's dtype int64 differs"):
        coop.device.run_length_encode(d_x, cuda.device_array(10, np.int64), cuda.device_array(10, np.int32))
    with pytest.raises(TypeError, match=r"coop.device.non_trivial_runs: d_offsets_out must be of an integer dtype"):
        coop.device.non_trivial_runs(d_x, cuda.device_array(10, np.float64), cuda.device_array(10, np.int32))
    with pytest.raises(TypeError, match=r"coop.device.run_length_encode: d_num_runs_out must be of an integer dtype"):
        coop.device.run_length_encode(d_x, cuda.device_array(10, np.int32), cuda.device_array(10, np.int32),
                                      d_num_runs_out=cuda.device_array(1, np.int16))


def test_unique_by_an_equality_and_nans():
    n = 3 * 4097 + 11 if FULL_MATRIX else 700
    x = np.sort(np.random.default_rng(30).integers(0, 400, n)).astype(np.int64)
    d_x, d_out = cuda.to_device(x), cuda.device_array(n, np.int64)
    count = coop.device.unique(d_x, d_out, equality=lambda a, b: a // 10 == b // 10)  # (runs by their tens)
    assert_equal_exact(d_out[:count].copy_to_host(), x[np.r_[True, x[1:] // 10 != x[:-1] // 10]], "by tens")
    f = np.array([1.0, 1.0, np.nan, np.nan, -0.0, 0.0, 2.0], np.float32)  # (NaNs never equal; -0.0 == 0.0)
    d_f = cuda.device_array_like(f)
    count = coop.device.unique(cuda.to_device(f), d_f)
    assert_equal_exact(d_f[:count].copy_to_host().view(np.uint32),
                       np.array([1.0, np.nan, np.nan, -0.0, 2.0], np.float32).view(np.uint32), "NaNs and zeros")
    with pytest.raises(ValueError, match=r"coop.device.unique: d_out is d_in itself"):
        coop.device.unique(d_x, d_x)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", (np.int8, np.uint16, np.float16, np.float64, np.int64), ids=dtype_id)
def test_three_way_partition(dtype, n):
    x = np.random.default_rng(n + 5).integers(0, 100, n).astype(dtype)
    first, second = x < 10, (x >= 10) & (x < 60)
    parts = [x[first], x[second], x[~first & ~second]]
    d_x = cuda.to_device(x)
    outs = [cuda.to_device(np.full(n + 1, 101, dtype)) for _ in range(3)]
    counts = coop.device.three_way_partition(d_x, *outs, lambda v: v < 10, lambda v: v < 60)
    assert counts == (parts[0].size, parts[1].size), f"three_way_partition({np.dtype(dtype)}, n={n}): {counts}"
    for name, out, part in zip(("first part", "second part", "unselected"), outs, parts):
        got = out.copy_to_host()
        assert_equal_exact(got[:part.size], part, name)
        assert (got[part.size:] == 101).all(), f"{name}: written past its items"
    d_counts = cuda.to_device(np.full(3, -1, np.int32))
    everything = [cuda.device_array(n + 1, dtype) for _ in range(3)]
    assert coop.device.three_way_partition(d_x, *everything, lambda v: v >= 0, lambda v: v < 60,
                                           d_num_selected_out=d_counts) is None  # (all in the first part)
    assert_equal_exact(d_counts.copy_to_host(), np.array([n, 0, -1], np.int32), "the device counts")
    assert_equal_exact(everything[0][:n].copy_to_host(), x, "everything in the first part")


def test_three_way_partition_bad_input():
    d_x = cuda.to_device(np.arange(10, dtype=np.int32))
    outs = [cuda.device_array(10, np.int32) for _ in range(3)]
    yes, no = (lambda v: v > 3), (lambda v: v < 7)
    with pytest.raises(TypeError, match=r"coop.device.three_way_partition: d_second_part_out's dtype int64 differs "
                                        r"from d_in's int32"):
        coop.device.three_way_partition(d_x, outs[0], cuda.device_array(10, np.int64), outs[2], yes, no)
    with pytest.raises(ValueError, match=r"coop.device.three_way_partition: d_unselected_out is d_first_part_out"):
        coop.device.three_way_partition(d_x, outs[0], outs[1], outs[0], yes, no)
    with pytest.raises(ValueError, match=r"coop.device.three_way_partition: d_first_part_out is d_in"):
        coop.device.three_way_partition(d_x, d_x, outs[1], outs[2], yes, no)
    with pytest.raises(ValueError, match=r"coop.device.three_way_partition: d_num_selected_out is too short: 1 "
                                         r"items, 2 needed"):
        coop.device.three_way_partition(d_x, *outs, yes, no, d_num_selected_out=cuda.device_array(1, np.int64))
    with pytest.raises(TypeError, match=r"coop.device.three_way_partition: select_second_part_op must be an "
                                        r"operator"):
        coop.device.three_way_partition(d_x, *outs, yes, 3)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("keys, values", [(np.int8, np.float64), (np.float32, np.int16), (np.uint64, np.complex64),
                                          (np.bool_, np.int32)], ids=lambda d: np.dtype(d).name)
def test_unique_by_key(keys, values, n):
    x = runs_of(keys, n, n + 6)
    v = np.random.default_rng(n).permutation(n).astype(values)
    heads = np.flatnonzero(np.r_[True, x[1:] != x[:-1]]) if n else np.zeros(0, np.int64)
    d_keys, d_values = cuda.to_device(np.zeros(n + 1, keys)), cuda.to_device(np.zeros(n + 1, values))
    count = coop.device.unique_by_key(cuda.to_device(x), cuda.to_device(v), d_keys, d_values)
    assert count == heads.size, f"unique_by_key({np.dtype(keys)}, n={n}): {count} kept, {heads.size} expected"
    assert_equal_exact(d_keys[:count].copy_to_host(), x[heads], "unique_by_key's keys")
    got = d_values.copy_to_host()
    assert_equal_exact(got[:count], v[heads], "unique_by_key's values")
    assert (got[count:] == 0).all(), "values written past the kept keys"
    if keys == np.int8:  # (an equality: runs of keys by their halves)
        d_count = cuda.to_device(np.full(1, -1, np.int64))
        halves = np.flatnonzero(np.r_[True, x[1:] // 2 != x[:-1] // 2]) if n else np.zeros(0, np.int64)
        assert coop.device.unique_by_key(cuda.to_device(x), cuda.to_device(v), d_keys, d_values,
                                         equality=lambda a, b: a // 2 == b // 2, d_num_selected_out=d_count) is None
        assert int(d_count.copy_to_host()[0]) == halves.size
        assert_equal_exact(d_values[:halves.size].copy_to_host(), v[halves], "values of runs by an equality")


def test_unique_by_key_bad_input():
    d_x, d_v = cuda.to_device(np.arange(10, dtype=np.int32)), cuda.to_device(np.arange(10, dtype=np.float32))
    out, out_v = cuda.device_array(10, np.int32), cuda.device_array(10, np.float32)
    with pytest.raises(ValueError, match=r"coop.device.unique_by_key: d_values_in is too short: 9 items, 10 needed"):
        coop.device.unique_by_key(d_x, d_v[:9], out, out_v)
    with pytest.raises(TypeError, match=r"coop.device.unique_by_key: d_values_out's dtype float64 differs from "
                                        r"d_values_in's float32"):
        coop.device.unique_by_key(d_x, d_v, out, cuda.device_array(10, np.float64))
    with pytest.raises(ValueError, match=r"coop.device.unique_by_key: d_values_out is d_values_in itself"):
        coop.device.unique_by_key(d_x, d_v, out, d_v)
    with pytest.raises(ValueError, match=r"coop.device.unique_by_key: d_keys_out is d_keys_in itself"):
        coop.device.unique_by_key(d_x, d_v, d_x, out_v)


def test_an_inline_lambda_compiles_once():
    """A lambda written in the call is a new function each time: the operator (and so
    the kernel) is one for the same code reading the same values, else each call would
    compile anew (seconds on a GPU)."""
    select_module = importlib.import_module("coop.device.select")
    x = np.arange(300, dtype=np.int32)
    d_x, d_out = cuda.to_device(x), cuda.device_array(300, np.int32)
    kernels = []
    for bound in (7, 7, 7, 9):
        assert coop.device.select(d_x, d_out, lambda v: v % bound == 0) == x[x % bound == 0].size
        kernels.append(select_module._select_kernel.cache_info().currsize)
    assert kernels[0] == kernels[1] == kernels[2] and kernels[3] == kernels[2] + 1, kernels


def test_select_bad_input():
    d_x = cuda.to_device(np.arange(10, dtype=np.int32))
    with pytest.raises(TypeError, match=r"coop.device.select: d_out's dtype int64 differs from d_in's int32"):
        coop.device.select(d_x, cuda.device_array(10, np.int64), lambda v: v > 0)
    with pytest.raises(ValueError, match=r"coop.device.select_flagged: flags is too short: 9 items, 10 needed"):
        coop.device.select_flagged(d_x, cuda.device_array(9, np.bool_), cuda.device_array(10, np.int32))
    with pytest.raises(TypeError, match=r"coop.device.select_flagged: flags must be of a bool or integer dtype"):
        coop.device.select_flagged(d_x, cuda.device_array(10, np.float32), cuda.device_array(10, np.int32))
    with pytest.raises(ValueError, match=r"coop.device.partition: d_out is too short: 5 items, 10 needed"):
        coop.device.partition(d_x, cuda.device_array(5, np.int32), lambda v: v > 0)
    with pytest.raises(TypeError, match=r"coop.device.select: d_num_selected_out must be of an integer dtype of "
                                        r"at least 32 bits \(64 from 2\^31 items on\), got int16"):
        coop.device.select(d_x, cuda.device_array(10, np.int32), lambda v: v > 0, cuda.device_array(1, np.int16))
    with pytest.raises(ValueError, match=r"coop.device.select_flagged: d_num_selected_out is too short: 0 items"):
        coop.device.select_flagged(d_x, cuda.device_array(10, np.bool_), cuda.device_array(10, np.int32),
                                   d_num_selected_out=cuda.device_array(0, np.int64))


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", (np.float16, np.float32, np.float64, np.int8, np.uint8, np.int32, np.int64)
                         if FULL_MATRIX else (np.float32, np.int16), ids=dtype_id)
def test_histogram_even(dtype, n):
    rng = np.random.default_rng(n + 11)
    kind = np.dtype(dtype).kind
    x = (rng.random(n) * 1.2 - 0.1 if kind == "f" else rng.integers(0, 120, n)).astype(dtype)
    if kind == "f" and n > 2:
        x[:2] = np.nan, 1.0  # (not counted: NaN, and upper itself)
    bins = 7
    lower, upper = (0.0, 1.0) if kind == "f" else (10, 110)
    d_counts = cuda.to_device(np.full(bins + 1, 99, np.uint32))
    coop.device.histogram_even(cuda.to_device(x), d_counts, bins, lower, upper)
    position_type = np.float32 if np.dtype(dtype).itemsize <= (4 if kind == "f" else 2) else np.float64
    positions = (x.astype(position_type) - position_type(lower)) * position_type(bins / (upper - lower))
    inside = (positions >= 0) & (positions < bins)
    expected = np.bincount(np.minimum(positions[inside].astype(np.int64), bins - 1), minlength=bins)
    counts = d_counts.copy_to_host()
    assert_equal_exact(counts[:bins], expected.astype(np.uint32), "histogram")
    assert counts[bins] == 99, "a counter past bins was written"
    # again, into garbage: the call's counters start from zero, not from the last call's
    d_counts = cuda.to_device(np.full(bins + 1, 5, np.uint32))
    coop.device.histogram_even(cuda.to_device(x[::-1].copy()), d_counts, bins, lower, upper)
    assert_equal_exact(d_counts.copy_to_host()[:bins], expected.astype(np.uint32), "histogram, called again")


def test_histogram_many_bins():
    """More bins than shared memory holds: counted in global memory."""
    x = np.random.default_rng(12).integers(0, 5000, 3000).astype(np.int32)
    d_counts = cuda.device_array(5000, np.int64)
    for call in range(2):  # (the second call's counters start from zero too)
        coop.device.histogram_even(cuda.to_device(x), d_counts, 5000, 0, 5000)
        assert_equal_exact(d_counts.copy_to_host(), np.bincount(x, minlength=5000), f"histogram, 5000 bins, {call}")


@pytest.mark.parametrize("n", SIZES)
def test_segmented_reduce(n):
    rng = np.random.default_rng(n + 13)
    x = values(np.int32, n, seed=n)
    cuts = np.sort(rng.integers(0, n + 1, 9)) if n else np.zeros(9, np.int64)
    offsets = np.concatenate(([0], cuts, [n])).astype(np.int64)  # (empty segments too)
    check_segmented_reduce(x, offsets, rng)


def check_segmented_reduce(x, offsets, rng):
    """segmented_reduce of int32 ``x`` into int64 results, checked: the sums after 5, and
    the composition of random affine maps (not commutative: the segments' order)."""
    d_out = cuda.device_array(offsets.size - 1, np.int64)
    coop.device.segmented_reduce(cuda.to_device(x), d_out, cuda.to_device(offsets), coop.ops.add, 5)
    expected = [5 + x[a:b].sum(dtype=np.int64) for a, b in zip(offsets[:-1], offsets[1:])]
    assert_equal_exact(d_out.copy_to_host(), np.array(expected, np.int64), "segmented sums")
    maps = (rng.integers(0, 1 << 16, x.size) << 16 | rng.integers(0, 1 << 16, x.size)).astype(np.int64)
    coop.device.segmented_reduce(cuda.to_device(maps), d_out, cuda.to_device(offsets), compose, IDENTITY)
    expected = []
    for a, b in zip(offsets[:-1], offsets[1:]):
        f = IDENTITY
        for g in maps[a:b].tolist():
            f = compose_host(f, g)
        expected.append(f)
    assert_equal_exact(d_out.copy_to_host(), np.array(expected, np.int64), "segmented compositions")


def segment_sizes_of_every_path(rng):
    """Segment sizes that take each of segmented_reduce's paths for many short segments:
    empty, a thread's (1-8 items), a warp's (9-4096, whole and partial warp tiles) and
    the block's (more than 4096), in a random order; about 60 items a segment."""
    sizes = np.concatenate((np.zeros(20, np.int64), rng.integers(1, 9, 120), rng.integers(9, 200, 50),
                            [31, 32, 33, 127, 128, 129, 4095, 4096, 4097, 5000]))
    return rng.permutation(sizes)


@pytest.mark.parametrize("kind", ["many short", "few long"])
def test_segmented_reduce_kernels(kind):
    """Each kernel: many short segments (a thread, a warp or the block each), and a few
    long ones (a block each)."""
    rng = np.random.default_rng(44)
    segmented_reduce = importlib.import_module("coop.device.segmented_reduce")
    sizes = segment_sizes_of_every_path(rng) if kind == "many short" else np.array([1500, 0, 2049, 7, 3000])
    offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    short = offsets[-1] <= sizes.size * segmented_reduce.WARP_SEGMENT_AVERAGE
    assert short == (kind == "many short")  # (the kernel meant: "few long" are too few to fill the GPU)
    x = values(np.int32, int(offsets[-1]) + 7, seed=45)  # (items past the last segment: not reduced)
    check_segmented_reduce(x, offsets, rng)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", SMALL_DTYPES if FULL_MATRIX else (np.float16,), ids=dtype_id)
def test_small_dtypes_with_an_operator(dtype, n):
    """The scans (inclusive_scan without initial too), reduce and segmented_reduce of bool,
    int8 and float16 with max (logical_or for bool): exact in any grouping."""
    rng = np.random.default_rng(n + 17)
    is_bool = np.dtype(dtype) == np.bool_
    x = (rng.random(n) < 0.01) if is_bool else rng.integers(-3, 4, n).astype(dtype)
    op, reference = (coop.ops.logical_or, np.logical_or) if is_bool else (coop.ops.max, np.maximum)
    initial = np.dtype(dtype).type(0 if is_bool else -2)
    d_x, d_out = cuda.to_device(x), cuda.device_array(n, dtype)
    coop.device.inclusive_scan(d_x, d_out, op)
    assert_equal_exact(d_out.copy_to_host(), reference.accumulate(x), "inclusive_scan")
    seeded = reference.accumulate(np.concatenate(([initial], x)).astype(dtype))
    coop.device.inclusive_scan(d_x, d_out, op, initial=initial)
    assert_equal_exact(d_out.copy_to_host(), seeded[1:], "inclusive_scan with initial")
    coop.device.exclusive_scan(d_x, d_out, op, initial)
    assert_equal_exact(d_out.copy_to_host(), seeded[:-1], "exclusive_scan")
    d_total = cuda.device_array(1, dtype)
    coop.device.reduce(d_x, d_total, op, initial)
    assert_equal_exact(d_total.copy_to_host(), seeded[-1:], "reduce")
    offsets = np.concatenate(([0], np.sort(rng.integers(0, n + 1, 9)), [n])).astype(np.int64)
    d_segments = cuda.device_array(offsets.size - 1, dtype)
    coop.device.segmented_reduce(d_x, d_segments, cuda.to_device(offsets), op, initial)
    expected = [reference.reduce(x[a:b], initial=initial) for a, b in zip(offsets[:-1], offsets[1:])]
    assert_equal_exact(d_segments.copy_to_host(), np.array(expected, dtype), "segmented_reduce")


def test_histogram_and_segments_bad_input():
    d_x = cuda.to_device(np.arange(10, dtype=np.float32))
    with pytest.raises(ValueError, match=r"coop.device.histogram_even: d_histogram is too short: 4 counters, 5"):
        coop.device.histogram_even(d_x, cuda.device_array(4, np.int32), 5, 0.0, 1.0)
    with pytest.raises(TypeError, match=r"coop.device.histogram_even: d_histogram has dtype float32"):
        coop.device.histogram_even(d_x, cuda.device_array(5, np.float32), 5, 0.0, 1.0)
    with pytest.raises(ValueError, match=r"coop.device.histogram_even: upper \(0.0\) must be greater"):
        coop.device.histogram_even(d_x, cuda.device_array(5, np.int32), 5, 0.0, 0.0)
    with pytest.raises(TypeError, match=r"coop.device.segmented_reduce: offsets must be int32 or int64"):
        coop.device.segmented_reduce(d_x, cuda.device_array(1, np.float32), d_x, coop.ops.add, 0)
    with pytest.raises(ValueError, match=r"coop.device.segmented_reduce: d_out is too short: 1 items, 2 needed"):
        coop.device.segmented_reduce(d_x, cuda.device_array(1, np.float32), cuda.to_device(np.array([0, 2, 4])),
                                     coop.ops.add, 0)


@pytest.mark.parametrize("dtype", (np.int8, np.int16, np.uint8), ids=dtype_id)
def test_small_integers_wrap(dtype):
    """Sums of small integers combine in d_out's dtype and wrap, as C's do (the simulator
    too, where NumPy raises OverflowError on a store out of range); values convert to
    d_out's dtype as they are loaded (uint8 200 -> int8 -56)."""
    n = 3000 if FULL_MATRIX else 700
    x = np.full(n, 100, dtype)
    d_x, d_total = cuda.to_device(x), cuda.device_array(1, dtype)
    coop.device.sum(d_x, d_total)
    assert_equal_exact(d_total.copy_to_host(), np.array([x.sum(dtype=dtype)]), "sum")
    coop.device.reduce(d_x, d_total, lambda a, b: a + b, dtype(7))
    assert_equal_exact(d_total.copy_to_host(), np.array([x.sum(dtype=dtype) + dtype(7)], dtype), "reduce")
    d_out = cuda.device_array(n, dtype)
    coop.device.inclusive_sum(d_x, d_out)
    assert_equal_exact(d_out.copy_to_host(), np.cumsum(x, dtype=dtype), "inclusive_sum")
    d_narrow = cuda.device_array(n, np.int8)
    coop.device.inclusive_sum(cuda.to_device(np.full(n, 200, np.uint8)), d_narrow)
    assert_equal_exact(d_narrow.copy_to_host(), np.cumsum(np.full(n, -56, np.int8), dtype=np.int8), "uint8 -> int8")
