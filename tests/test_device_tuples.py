"""coop.device's reduce and scans over tuple values (tuples of arrays, as CUB's zip
iterators give them) against NumPy: segmented sums (a non-commutative operator on
(flag, value) pairs), (count, sum) pairs, affine maps composed in order, argmax / argmin
over (value, index) pairs; on the simulator (small sizes, tile boundaries) and the GPU
(the issue's sizes, a large input, repeated runs), plus bad input raised before any
launch. Their kernels compiled for sm_90 are checked by tests/codegen_cases.py
(device-tuple-*)."""

import numpy as np
import pytest

import coop
from numba import cuda

from helpers import FULL_MATRIX, ON_GPU, assert_equal_exact

# Tiles on the simulator: scans of (int32, float32) 64 items, of (int64, int64) 32;
# reduce's warp tiles 64 and 32 items (2 warps a block). On the GPU: 3072 and 1536.
SIZES = (0, 1, 31, 4097, 10**6 + 3) if ON_GPU else (0, 1, 31, 64, 65, 4097)
SMALL_SIZES = (0, 1, 31, 4097) if ON_GPU else (0, 1, 31, 65, 300)  # (references in Python loops)
LARGE = 1 << 28
PAIRS = [(np.int32, np.float32), (np.int64, np.int64)]
if FULL_MATRIX:
    PAIRS += [(np.uint8, np.float64), (np.int16, np.uint32)]


def pair_id(pair):
    return "-".join(np.dtype(d).name for d in pair)


def pairs_and_sizes():
    """Each pair at each size; on the simulator 8-byte pairs (32-item tiles there) go to
    1025 items (32 tiles and one item) instead of 4097."""
    cases = []
    for pair in PAIRS:
        wide = max(np.dtype(d).itemsize for d in pair) == 8
        for n in SIZES:
            n = 1025 if n == 4097 and wide and not ON_GPU else n
            cases.append(pytest.param(pair, n, id=f"{pair_id(pair)}-{n}"))
    return cases


@cuda.jit(device=True)
def segmented_sum(a, b):
    """(head flag, value) pairs: b's value starts a new sum where b starts a segment.
    Associative, not commutative."""
    return a[0] | b[0], b[1] if b[0] else a[1] + b[1]


@cuda.jit(device=True)
def pair_sum(a, b):
    return a[0] + b[0], a[1] + b[1]


@cuda.jit(device=True)
def compose(f, g):
    """Affine maps x -> a*x + b as (a, b), coefficients modulo 2**16: f, then g."""
    return (g[0] * f[0]) & 0xFFFF, (g[0] * f[1] + g[1]) & 0xFFFF


def compose_host(f, g):
    return (g[0] * f[0]) & 0xFFFF, (g[0] * f[1] + g[1]) & 0xFFFF


def segments(n, seed, flag_dtype=np.int32, value_dtype=np.float32, heads=0.02):
    """Head flags and small integer values (every segmented sum exact in any dtype)."""
    rng = np.random.default_rng(seed)
    flags = (rng.random(n) < heads).astype(flag_dtype)
    values = rng.integers(0, 4, n).astype(value_dtype)
    return flags, values


def segmented_reference(flags, values, initial=None):
    """Inclusive segmented sums (in float64 / int64: exact here), and the running OR of
    the flags; ``initial`` = (flag, value) is combined before the first pair."""
    n = flags.size
    wide = np.float64 if values.dtype.kind == "f" else np.int64
    total = np.cumsum(values, dtype=wide)
    start = np.maximum.accumulate(np.where(flags != 0, np.arange(n), 0)) if n else np.zeros(0, np.int64)
    sums = total - total[start] + values[start].astype(wide) if n else total
    seen = np.maximum.accumulate(flags != 0) if n else np.zeros(0, bool)
    if initial is not None:
        sums = sums + np.where(seen, 0, initial[1])
        seen = seen | bool(initial[0])
    return seen.astype(flags.dtype), sums


def to_device(*arrays):
    return tuple(cuda.to_device(a) for a in arrays)


def empty(n, *dtypes):
    return tuple(cuda.device_array(n, d) for d in dtypes)


def host(arrays):
    return tuple(a.copy_to_host() for a in arrays)


# -- scans ----------------------------------------------------------------------------------


@pytest.mark.parametrize("pair,n", pairs_and_sizes())
def test_segmented_scans(pair, n):
    """The three scans of (flag, value) pairs with the segmented-sum operator."""
    flags, values = segments(n, seed=n, flag_dtype=pair[0], value_dtype=pair[1])
    d_in = to_device(flags, values)
    d_out = empty(n, *pair)
    seen, sums = segmented_reference(flags, values)

    coop.device.inclusive_scan(d_in, d_out, segmented_sum)
    out_flags, out_sums = host(d_out)
    assert_equal_exact(out_sums, sums, "inclusive_scan: sums")
    assert_equal_exact(out_flags, seen, "inclusive_scan: flags")

    coop.device.inclusive_scan(d_in, d_out, segmented_sum, initial=(0, 5))
    seen_5, sums_5 = segmented_reference(flags, values, (0, 5))
    out_flags, out_sums = host(d_out)
    assert_equal_exact(out_sums, sums_5, "inclusive_scan with initial: sums")
    assert_equal_exact(out_flags, seen_5, "inclusive_scan with initial: flags")

    coop.device.exclusive_scan(d_in, d_out, segmented_sum, (0, 5))
    out_flags, out_sums = host(d_out)
    assert_equal_exact(out_sums, np.concatenate(([5], sums_5[:-1])) if n else sums_5, "exclusive_scan: sums")
    assert_equal_exact(out_flags, np.concatenate(([0], seen_5[:-1])) if n else seen_5, "exclusive_scan: flags")


@pytest.mark.parametrize("n", SMALL_SIZES)
def test_non_commutative_maps(n):
    """Affine maps (a, b) composed in order: scans and the reduction."""
    rng = np.random.default_rng(n + 1)
    a, b = rng.integers(0, 1 << 16, n), rng.integers(0, 1 << 16, n)
    expected, f = [], (1, 0)
    for g in zip(a.tolist(), b.tolist()):
        expected.append(f)
        f = compose_host(f, g)
    expected = np.array(expected + [f], np.int64).reshape(n + 1, 2)
    d_in = to_device(a, b)
    d_out = empty(n, np.int64, np.int64)
    coop.device.exclusive_scan(d_in, d_out, compose, (1, 0))
    out_a, out_b = host(d_out)
    assert_equal_exact(out_a, expected[:n, 0], "exclusive_scan: a")
    assert_equal_exact(out_b, expected[:n, 1], "exclusive_scan: b")
    coop.device.inclusive_scan(d_in, d_out, compose)
    out_a, out_b = host(d_out)
    assert_equal_exact(out_a, expected[1:, 0], "inclusive_scan: a")
    assert_equal_exact(out_b, expected[1:, 1], "inclusive_scan: b")
    d_total = empty(1, np.int64, np.int64)
    coop.device.reduce(d_in, d_total, compose, (1, 0))
    total_a, total_b = host(d_total)
    assert (total_a[0], total_b[0]) == tuple(expected[n])


@pytest.mark.parametrize("n", SMALL_SIZES)
def test_count_and_sum_widened_in_place(n):
    """(count, sum) pairs, int8 / int16 in and int64 out: converted to d_out's dtypes
    before they are combined (no wrap); then a scan in place (d_out is d_in)."""
    rng = np.random.default_rng(n + 2)
    counts = rng.integers(0, 2, n).astype(np.int8)
    values = rng.integers(20000, 32000, n).astype(np.int16)
    d_out = empty(n, np.int64, np.int64)
    coop.device.inclusive_scan(to_device(counts, values), d_out, pair_sum)
    out_counts, out_values = host(d_out)
    assert_equal_exact(out_counts, np.cumsum(counts, dtype=np.int64), "counts")
    assert_equal_exact(out_values, np.cumsum(values, dtype=np.int64), "sums")
    d_total = empty(1, np.int64, np.int64)
    coop.device.reduce(to_device(counts, values), d_total, pair_sum, (0, 0))
    assert (host(d_total)[0][0], host(d_total)[1][0]) == (counts.sum(dtype=np.int64), values.sum(dtype=np.int64))
    d_both = to_device(counts.astype(np.int32), values.astype(np.int32))
    coop.device.exclusive_scan(d_both, d_both, pair_sum, (7, 0))
    in_place_counts, in_place_values = host(d_both)
    assert_equal_exact(in_place_counts, 7 + np.cumsum(counts, dtype=np.int64) - counts, "in place: counts")
    assert_equal_exact(in_place_values, np.cumsum(values, dtype=np.int64) - values, "in place: sums")


# -- reductions -----------------------------------------------------------------------------


@pytest.mark.parametrize("n", SIZES)
def test_argmax_and_argmin(n):
    """(value, index) pairs with coop.ops.argmax / argmin: of equal values, the first."""
    rng = np.random.default_rng(n + 3)
    values = rng.integers(-50, 50, n).astype(np.float32)
    indices = np.arange(n, dtype=np.int32)
    d_in = to_device(values, indices)
    d_out = empty(1, np.float32, np.int32)
    coop.device.reduce(d_in, d_out, coop.ops.argmax, (-np.inf, -1))
    best, where = host(d_out)
    expected = (values.max(), values.argmax()) if n else (-np.inf, -1)
    assert (best[0], where[0]) == expected
    coop.device.reduce(d_in, d_out, coop.ops.argmin, (np.inf, -1))
    best, where = host(d_out)
    expected = (values.min(), values.argmin()) if n else (np.inf, -1)
    assert (best[0], where[0]) == expected


@pytest.mark.parametrize("pair,n", pairs_and_sizes())
def test_segmented_reduce(pair, n):
    """The reduction with the segmented-sum operator: the last segment's sum."""
    flags, values = segments(n, seed=n + 4, flag_dtype=pair[0], value_dtype=pair[1])
    d_out = empty(1, *pair)
    coop.device.reduce(to_device(flags, values), d_out, segmented_sum, (0, 3))
    seen, sums = segmented_reference(flags, values, (0, 3))
    out_flag, out_sum = host(d_out)
    assert out_sum[0] == (sums[-1] if n else 3)
    assert out_flag[0] == (seen[-1] if n else 0)


# -- the GPU: repeated runs, a large input ---------------------------------------------------


@pytest.mark.skipif(not ON_GPU, reason="identical results over repeated runs: a GPU property")
def test_repeatable():
    n = 10**7 + 1
    flags, values = segments(n, seed=6)
    d_in, d_out = to_device(flags, values), empty(n, np.int32, np.float32)
    results = []
    for _ in range(3):
        coop.device.inclusive_scan(d_in, d_out, segmented_sum)
        results.append(host(d_out))
    for flags_run, sums_run in results[1:]:
        assert (flags_run == results[0][0]).all() and (sums_run == results[0][1]).all()
    assert_equal_exact(results[0][1], segmented_reference(flags, values)[1], "segmented sums")
    d_total = empty(1, np.float32, np.int32)
    indices = cuda.to_device(np.arange(n, dtype=np.int32))
    totals = []
    for _ in range(3):
        coop.device.reduce((d_in[1], indices), d_total, coop.ops.argmax, (-np.inf, -1))
        totals.append(tuple(a[0] for a in host(d_total)))
    assert totals[0] == totals[1] == totals[2] == (values.max(), values.argmax())


@pytest.mark.skipif(not ON_GPU, reason="2^28 items: GPU only")
def test_large():
    period = 1000
    flags = (np.arange(LARGE) % period == 0).astype(np.int32)
    d_in = (cuda.to_device(flags), cuda.to_device(np.ones(LARGE, np.float32)))
    d_out = empty(LARGE, np.int32, np.float32)
    coop.device.inclusive_scan(d_in, d_out, segmented_sum)
    sums = d_out[1].copy_to_host()
    assert_equal_exact(sums, np.arange(LARGE) % period + 1, "segmented sums")
    values = np.zeros(LARGE, np.float32)
    values[[12345, LARGE - 7]] = 2.0  # (two equal maxima: the first wins)
    d_best = empty(1, np.float32, np.int32)
    coop.device.reduce((cuda.to_device(values), cuda.to_device(np.arange(LARGE, dtype=np.int32))), d_best,
                       coop.ops.argmax, (-np.inf, -1))
    assert tuple(a[0] for a in host(d_best)) == (2.0, 12345)
    d_total = empty(1, np.int64, np.float64)
    coop.device.reduce(d_in, d_total, pair_sum, (0, 0))
    assert tuple(a[0] for a in host(d_total)) == (-(-LARGE // period), LARGE)


# -- bad input, before any launch -----------------------------------------------------------


def test_bad_input():
    x = np.arange(10, dtype=np.int32)
    y = np.arange(10, dtype=np.float32)
    d_x, d_y = cuda.to_device(x), cuda.to_device(y)
    out = empty(10, np.int32, np.float32)
    scan = coop.device.inclusive_scan
    with pytest.raises(TypeError, match=r"coop.device.inclusive_scan: d_out must be a tuple of 2 device arrays, "
                                        r"as d_in is \(tuple values\), got one array"):
        scan((d_x, d_y), out[0], segmented_sum)
    with pytest.raises(TypeError, match=r"coop.device.inclusive_scan: d_out must be one device array, as d_in "
                                        r"is, got a tuple of 2 arrays"):
        scan(d_x, out, segmented_sum)
    with pytest.raises(ValueError, match=r"coop.device.exclusive_scan: d_out has 3 arrays, d_in 2"):
        coop.device.exclusive_scan((d_x, d_y), out + (cuda.device_array(10, np.int32),), segmented_sum, (0, 0))
    with pytest.raises(ValueError, match=r"coop.device.inclusive_scan: d_in\[1\] has 9 items, d_in\[0\] 10"):
        scan((d_x, d_y[:9]), out, segmented_sum)
    with pytest.raises(ValueError, match=r"coop.device.inclusive_scan: d_out\[1\] is too short: 9 items, 10 "
                                         r"needed"):
        scan((d_x, d_y), (out[0], out[1][:9]), segmented_sum)
    with pytest.raises(ValueError, match=r"coop.device.reduce: d_out\[0\] is too short: 0 items, 1 needed"):
        coop.device.reduce((d_x, d_y), (out[0][:0], out[1]), segmented_sum, (0, 0))
    with pytest.raises(ValueError, match=r"coop.device.reduce: initial must be a tuple of 2 values \(one per "
                                         r"array of d_out\), got 3"):
        coop.device.reduce((d_x, d_y), out, segmented_sum, (0, 0, 0))
    with pytest.raises(TypeError, match=r"coop.device.inclusive_scan: initial must be a tuple of 2 values"):
        scan((d_x, d_y), out, segmented_sum, initial=0)
    with pytest.raises(TypeError, match=r"coop.device.reduce: initial must be one value \(d_out is one array\), "
                                        r"got a tuple"):
        coop.device.reduce(d_x, out[0], coop.ops.add, (0, 0))
    with pytest.raises(ValueError, match=r"coop.device.exclusive_scan: initial is required"):
        coop.device.exclusive_scan((d_x, d_y), out, segmented_sum, None)
    with pytest.raises(TypeError, match=r"coop.device.inclusive_scan: d_in\[1\] is a NumPy array in host memory"):
        scan((d_x, y), out, segmented_sum)
    with pytest.raises(ValueError, match=r"coop.device.reduce: d_in\[0\] must be contiguous"):
        coop.device.reduce((cuda.to_device(np.arange(20, dtype=np.int32))[::2], d_y), out, segmented_sum, (0, 0))
    with pytest.raises(ValueError, match=r"coop.device.reduce: d_in must not be an empty tuple"):
        coop.device.reduce((), out, segmented_sum, (0, 0))
    with pytest.raises(TypeError, match=r"coop.device.inclusive_scan: d_in must be a device array or a tuple of "
                                        r"device arrays .*got a list \(pass a tuple\)"):
        scan([d_x, d_y], out, segmented_sum)
    with pytest.raises(TypeError, match=r"coop.device.inclusive_sum: d_in and d_out must be device arrays of "
                                        r"numbers, got a tuple \(for tuple values: coop.device.inclusive_scan"):
        coop.device.inclusive_sum((d_x, d_y), out)
    with pytest.raises(TypeError, match=r"coop.device.sum: .*coop.device.reduce with an operator on tuples"):
        coop.device.sum((d_x, d_y), out)
    # nothing was launched: the outputs are as they were
    sentinel = to_device(np.full(10, 7, np.int32), np.full(10, 7, np.float32))
    with pytest.raises(ValueError):
        scan((d_x, d_y), sentinel, segmented_sum, initial=(1, 2, 3))
    assert (host(sentinel)[0] == 7).all() and (host(sentinel)[1] == 7).all()
